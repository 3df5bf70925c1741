"""`Function` (what ``df.function`` returns), `ConcreteFunction` (one trace) and `FuncGraph`.

See the package docstring for the retracing rules and how a call in graph mode is built.  The
state of a `Function`:

- ``_concrete_functions``: signature key -> `ConcreteFunction`, one per trace, in trace order;
- ``_trace_count``: how many traces were made (what ``experimental_get_tracing_count`` says);
- ``_variables``: the variables the first trace made (a later trace that makes one fails).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings
from collections.abc import Callable, MutableMapping
from typing import Any, Optional

import numpy as np

from primitives.auto_control_deps import (
    effects_to_wait_for,
    ops_made_by_variables,
    variables_of,
    wait_for,
)

from ...client.config import _state as _config
from ...framework import dtypes as _dtypes
from ...framework import nest
from ...framework.graph import (
    Graph,
    Operation,
    SourceLocation,
    Tensor,
    _user_location,
    get_default_graph,
    is_valid_op_name,
)
from ...framework.indexed_slices import IndexedSlices
from ...framework.ragged_tensor import RaggedTensor
from ...framework.sparse_tensor import SparseTensor
from ...framework.tensor_spec import TensorSpec
from ...framework.type_spec import TypeSpec
from ...ops.tensor_array_ops import TensorArray
from ...ops.variables import VariableRef, value_of_unread_variable
from ..runner import active_tapes
from ..tensor import EagerTensor
from .introspection import (
    BoundFunction,
    ConcreteFunctionIntrospection,
    FunctionIntrospection,
)
from .signatures import (
    Signature,
    _is_variable,
    choose,
    describe_arguments,
    flat_placeholder_names,
    output_tensors,
    placeholder_arguments,
    tensor_feeder,
    trace_type_of,
    with_output_values,
)
from .tape_calls import eager_result, taped_call  # noqa: F401 - eager_result is offered here too

# What a function may return besides tensors and None, kept as they are (`_outputs_as_tensors`).
_RETURNED_AS_THEY_ARE = (IndexedSlices, SparseTensor, RaggedTensor, TensorArray)

# (id(Function), signature) of the traces each thread is making now (`_not_already_tracing`).
_traces_in_progress = threading.local()

# A function traced this many times warns that it retraces too often, as TensorFlow's does.
RETRACE_WARNING_THRESHOLD = 5


# The Python argument types a call's fast key takes by value (`_fast_key`): immutable, hashed
# and compared as `signatures.Literal` compares them.
_PLAIN_PYTHON_TYPES = frozenset({int, float, bool, str, type(None)})

# A `Function` forgets its fast keys when it has met this many (varying Python values or shapes
# under relaxed shapes would otherwise grow the table without end).
_FAST_KEYS_KEPT = 1024


def _fast_key(args: tuple) -> Optional[tuple]:
    """A cheap key for a call whose arguments are all eager tensors, numpy arrays or plain
    Python values, given flat and positional; None for any other call.

    It is at least as fine as the call's `Signature` (two calls with one fast key have equal
    signatures: a tensor's dtype and shape, a Python value's type and value), so a table from
    fast keys to the concrete function the signature chose is exact while that choice stands.
    Tensors and Python values give entries of different lengths, so they never compare equal."""
    key = []
    for value in args:
        kind = value.__class__
        if kind is EagerTensor:
            array = value._value
            if array.__class__ is not np.ndarray:
                return None
            key.append((kind, value._dtype, array.shape))
        elif kind is np.ndarray:
            key.append((kind, value.dtype, value.shape))
        elif kind in _PLAIN_PYTHON_TYPES:
            key.append((kind, value))
        else:
            return None
    return tuple(key)


def _feed_value(value) -> np.ndarray:
    """The array a tensor argument feeds its placeholder with."""
    return value._value if value.__class__ is EagerTensor else np.asarray(value)


# -- the graph a trace builds ----------------------------------------------------------------------
class FuncGraph(Graph):
    """The graph one trace builds: placeholders for the tensor arguments (``inputs``, then one
    per captured outer tensor), ``outputs`` (the flat tensors the function returned) and
    ``structured_outputs`` (what it returned, nested as it was).

    A tensor of another graph used here (a closure over a tensor of the caller's graph, a
    variable's handle) is *captured*: a placeholder stands for it, and ``captures`` maps the
    outer tensor to it.  Everything else is an ordinary `Graph`.
    """

    def __init__(self, name: str, outer_graph: Optional[Graph] = None):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.inputs: list[Tensor] = []
        self.outputs: list[Tensor] = []
        self.structured_outputs: Any = None
        self.captures: dict[Tensor, Tensor] = {}
        # Ops of enclosing graphs that the body asked to run after (see `_as_control_input`).
        self.control_captures: set[Operation] = set()
        # id(eager tensor) -> (the eager tensor, its placeholder); the values are fed per call.
        self.eager_captures: dict[int, tuple[Tensor, Tensor]] = {}
        # id(eager variable handle) -> (that handle, the graph's VarHandleOp output standing
        # for it); and the key of each such VarHandleOp -> the eager variable's VariableRef.
        self.captured_variables: dict[int, tuple[Tensor, Tensor]] = {}
        self.variable_refs: dict[str, VariableRef] = {}
        self.lifts_variables = False  # traced in eager mode: see `variable_creation_scope`
        self.lifted_variables: list = []
        self.control_outputs: list[Operation] = []  # ops a call runs besides the outputs

    captures_outer_tensors = True
    building_function = True

    def _as_control_input(self, c):
        """An op of an enclosing graph given to ``control_dependencies`` inside the trace is not
        an edge of this graph: as in TensorFlow, it is recorded in ``control_captures`` (what a
        call of the function in that graph waits for) and left out here."""
        element = c._as_graph_element() if hasattr(c, "_as_graph_element") else c
        op = element.op if isinstance(element, Tensor) else element
        graph = self.outer_graph
        while isinstance(op, Operation) and graph is not None:
            if op.graph is graph:
                self.control_captures.add(op)
                return None
            graph = getattr(graph, "outer_graph", None)
        return super()._as_control_input(c)

    def _tensor_from_other_graph(self, tensor: Tensor, op_type: str, location) -> Tensor:
        placeholder = self.captures.get(tensor)
        if placeholder is None:
            placeholder = self._capture_placeholder(tensor, tensor.op.name.replace("/", "_"))
            self.captures[tensor] = placeholder
        return placeholder

    def _capture_eager_tensor(self, tensor: Tensor, op_type: str) -> Tensor:
        """An eager value the function reads (a closure over it) becomes an input of the
        graph, fed with the value at each call, rather than a constant baked in.  An eager
        variable's handle becomes a handle of this graph (`_capture_eager_variable`)."""
        if tensor.dtype is _dtypes.resource and isinstance(tensor._value, VariableRef):
            return self._capture_eager_variable(tensor)
        known = self.eager_captures.get(id(tensor))
        if known is None:
            known = (tensor, self._capture_placeholder(tensor, "captured"))
            self.eager_captures[id(tensor)] = known
        return known[1]

    def _capture_eager_variable(self, handle: Tensor) -> Tensor:
        """A ``VarHandleOp`` of this graph that stands for the eager variable of ``handle``:
        its key (``shared_name``) is unique in the graph, and a run of the graph reads and
        writes that key in the eager context (`_EagerVariableStore`), so each call sees the
        variable's value of the moment and its assignments stay, as TensorFlow's captured
        resource inputs."""
        known = self.captured_variables.get(id(handle))
        if known is not None:
            return known[1]
        from primitives.contexts import building_in

        from ...framework.op_registry import apply_op
        from ...ops.variables import _eager_variables

        ref = handle._value
        key = f"captured_variable_{len(self.captured_variables)}"
        attrs = {"dtype": ref.dtype, "shape": ref.shape, "shared_name": key}
        # The op is named after the variable (made unique by the graph), as a picture reads.
        variable = _eager_variables.get(id(handle))
        name = variable.name.split(":")[0] if variable is not None else key
        if not is_valid_op_name(name):
            name = key
        with self.as_default(), self.control_dependencies(None), building_in(self, None):
            with self.name_scope(None):  # at the top, whichever scope first used it
                inner = apply_op("VarHandleOp", (), attrs, name=name).outputs[0]
        self.captured_variables[id(handle)] = (handle, inner)
        self.variable_refs[key] = ref
        return inner

    @contextlib.contextmanager
    def variable_creation_scope(self, variable):
        """Where `Variable` builds ``variable`` when it is made during this trace: a trace
        started in eager mode makes it eagerly, once, so that it outlives the trace and keeps
        its value across calls (TensorFlow lifts it out of the function the same way); the
        trace then reads it as any captured variable, and ``lifted_variables`` keeps it.
        Other traces build it in this graph."""
        if not self.lifts_variables:
            yield
            return
        from .. import eager_mode

        with eager_mode():
            yield
        self.lifted_variables.append(variable)

    def _capture_placeholder(self, tensor: Tensor, name: str) -> Tensor:
        from primitives.contexts import building_in

        from ...ops.constant_op import placeholder

        with self.as_default(), self.control_dependencies(None), building_in(self, None):
            return placeholder(tensor.dtype, tensor.shape, name=name)


# -- automatic control dependencies ----------------------------------------------------------------
def _automatic_control_dependencies(
    graph: Graph, new_ops: list, context, structured_outputs, excluded: set
):
    """Applies `primitives.auto_control_deps` to the function's own level (``new_ops`` at the
    level of ``context``): its side effects run in program order and its returned tensors wait
    for them; returns the outputs to give back.

    A function that returns no tensor still runs its effects: in a traced `FuncGraph` they are
    the graph's ``control_outputs``, which every call runs; built at a call site inside an
    enclosing function, that function's own ordering runs them.  Called in a TF1 graph, a
    function that returns None gives the op that runs its effects instead (TensorFlow returns
    None there, which leaves them unreachable)."""
    must_run = effects_to_wait_for(new_ops, context, excluded)
    if not must_run:
        return structured_outputs
    from ...ops.misc_ops import group

    flat = nest.flatten(structured_outputs, expand_composites=True)
    if not any(isinstance(t, Tensor) for t in flat):
        # Nothing returned waits for the effects: a call runs them as control outputs.
        if isinstance(graph, FuncGraph):
            with graph.control_dependencies(must_run):
                graph.control_outputs.append(group(*must_run))
        elif structured_outputs is None and not graph.building_function:
            with graph.control_dependencies(must_run):
                return group(*must_run)
    return wait_for(graph, structured_outputs, must_run)


# -- concrete functions ----------------------------------------------------------------------------
class ConcreteFunction(ConcreteFunctionIntrospection):
    """One trace of a `Function`: its `FuncGraph` and how to call it.

    ``inputs``/``outputs`` are the graph's placeholders and returned tensors;
    ``structured_input_signature`` is ``(args, kwargs)`` with a `TensorSpec` for each tensor
    argument; ``structured_outputs`` is what the function returned.  Calling it in graph mode
    builds the function at the call site (see the package docstring); calling it with values
    outside a graph build runs the traced graph through one cached plan."""

    def __init__(self, function: Function, graph: FuncGraph, signature: Signature, arguments):
        self._function = function
        self.graph = graph
        self._signature = signature
        args, kwargs = arguments
        self._input_types, self.structured_input_signature = describe_arguments(
            signature, (tuple(args), dict(kwargs)), function._parameters, function.input_signature
        )
        # The tensors of a call's flat arguments, fed to ``graph.inputs`` in this order.
        self._tensor_arguments = tensor_feeder(signature.leaves)
        self._runner: Optional[Callable] = None
        self._taped_runner: Optional[Callable] = None
        self._function_session = None

    @property
    def inputs(self) -> list[Tensor]:
        """The placeholders: the tensor arguments', then the captured tensors'."""
        graph = self.graph
        eager = [placeholder for _, placeholder in graph.eager_captures.values()]
        return graph.inputs + list(graph.captures.values()) + eager

    @property
    def outputs(self) -> list[Tensor]:
        return self.graph.outputs

    @property
    def structured_outputs(self):
        return self.graph.structured_outputs

    @property
    def name(self) -> str:
        return self.graph.name

    def __call__(self, *args, **kwargs):
        arguments = self._function._canonical_arguments(args, kwargs, _CallerLocation())
        signature = Signature.of(arguments)
        if not signature.is_subtype_of(self._signature):
            raise TypeError(
                f"ConcreteFunction {self.name} was traced for {self.structured_input_signature}; "
                f"it cannot be called with {arguments} ({_user_location()})"
            )
        if _executing_eagerly():
            return self._call_eagerly(arguments)
        return self._function._build_at_call_site(arguments)

    @property
    def captured_variables(self) -> list:
        """The eager variables the trace reads or writes, in the order it first used them."""
        from ...ops.variables import _eager_variables

        found = (_eager_variables.get(id(h)) for h, _ in self.graph.captured_variables.values())
        return [variable for variable in found if variable is not None]

    def _session(self):
        """The Session that runs the trace (its variables are the captured eager ones)."""
        if self._function_session is None:
            self._function_session = _function_session(self.graph)
        return self._function_session

    def _run(self, flat_values: list):
        """Runs the traced graph on values for ``inputs``, through one plan made on first use."""
        if self._runner is None:
            fetches = self.outputs + self.graph.control_outputs
            self._runner = self._session().make_callable(fetches, feed_list=self.inputs)
        return self._runner(*flat_values)[: len(self.outputs)]

    def _run_with(self, flat_values: list, saved: list) -> list:
        """As `_run`, also fetching ``saved`` (a taped call's saved tensors, fixed per
        concrete function): the outputs' values, then the saved ones."""
        if self._taped_runner is None:
            self._taped_runner = self._session().make_callable(
                self.outputs + saved + self.graph.control_outputs, feed_list=self.inputs
            )
        return list(self._taped_runner(*flat_values))[: len(self.outputs) + len(saved)]

    def _call_eagerly(self, arguments):
        """Runs the trace on the call's ``(args, kwargs)`` now (see `_call_flat`)."""
        return self._call_flat(nest.flatten(arguments))

    def _call_flat(self, flat_arguments):
        """Runs the trace on the call's tensor arguments (among ``flat_arguments``, the call's
        arguments flattened) and the captured eager values now; returns the structured outputs
        with `EagerTensor` values."""
        if self.graph.captures:
            raise ValueError(
                f"df.function '{self.name}' reads tensors of a graph "
                f"({', '.join(t.name for t in self.graph.captures)}); called eagerly it can "
                "read only eager values"
            )
        tensor_arguments = self._tensor_arguments(flat_arguments)
        values = [_feed_value(value) for value in tensor_arguments]
        for tensor, _ in self.graph.eager_captures.values():
            values.append(_feed_value(tensor))
        tapes = active_tapes()
        if tapes:
            results = taped_call(self, tensor_arguments, values, tapes)
            return with_output_values(self.structured_outputs, results)
        results = self._run(values)
        structured = self.graph.structured_outputs
        if isinstance(structured, Tensor):
            return eager_result(results[0], structured.dtype)
        eager = [eager_result(value, t.dtype) for value, t in zip(results, self.outputs)]
        return with_output_values(self.structured_outputs, eager)


class _EagerVariableStore(MutableMapping):
    """The variable values a `_FunctionSession` sees: each key of a captured variable's
    ``VarHandleOp`` (`FuncGraph._capture_eager_variable`) is that eager variable's value in the
    eager context.  The Session writes here only when a run succeeds, so a failed call leaves
    every variable as it was."""

    def __init__(self, refs: dict[str, VariableRef]):
        from .. import eager_context

        self._refs = refs
        self._context = eager_context()

    def __getitem__(self, key: str):
        ref = self._refs.get(key)
        if ref is None:
            raise KeyError(key)
        return self._context.read_variable(ref)

    def __setitem__(self, key: str, value) -> None:
        self._context.write_variable(self._refs[key], value)

    def __delitem__(self, key: str) -> None:
        raise TypeError("a traced function cannot delete an eager variable")

    def __iter__(self):
        return iter(self._refs)

    def __len__(self) -> int:
        return len(self._refs)


def _function_session(graph: FuncGraph):
    """A Session for running ``graph`` eagerly, whose variables are the eager ones it
    captured (see `_EagerVariableStore`)."""
    from ...client.session import Session

    session = Session(graph=graph)
    session._variable_values = _EagerVariableStore(graph.variable_refs)
    return session


# -- the polymorphic function ----------------------------------------------------------------------
class Function(FunctionIntrospection):
    """A Python function traced into graphs, one `ConcreteFunction` per signature (see the
    package docstring).  Made by ``df.function``."""

    _graph_class = FuncGraph  # what a trace builds (`breaks` traces into one of its own)

    def __init__(
        self,
        python_function: Callable,
        input_signature=None,
        autograph: bool = True,
        experimental_relax_shapes: bool = False,
        name: Optional[str] = None,
        automatic_control_dependencies: bool = True,
    ):
        self._python_function = python_function
        self._automatic_control_dependencies = automatic_control_dependencies
        self._name = name or getattr(python_function, "__name__", "function")
        self.autograph = autograph
        self.experimental_relax_shapes = experimental_relax_shapes
        self._parameters = _parameters_of(python_function)
        # Calls that give exactly this many positional arguments bind as they are.
        self._positional_count = _plain_positional_count(self._parameters)
        self._location = _definition_location(python_function)
        self.input_signature = None
        if input_signature is not None:
            self.input_signature = tuple(_check_input_signature(input_signature, self._name))
        self._concrete_functions: dict[Signature, ConcreteFunction] = {}
        self._built_signatures: dict[int, list[Signature]] = {}  # id(graph) -> signatures
        self._trace_count = 0
        self._trace_signatures: list[Signature] = []
        # `_fast_key` of an eager call -> the concrete function its signature chose; emptied at
        # each trace, which may change the choice (a relaxed trace serves later shapes).
        self._concrete_by_fast_key: dict[tuple, ConcreteFunction] = {}
        self._variables: list = []
        self._jit_compile = None
        self._attributes: dict = {}
        self._autograph_options = None  # the AutoGraph features chosen (None: the default)
        functools.update_wrapper(self, python_function)

    @property
    def experimental_attributes(self) -> dict:
        """The attributes given to ``df.function`` (``experimental_attributes``, and
        ``_implements`` for ``experimental_implements``)."""
        return dict(self._attributes)

    @property
    def jit_compile(self):
        return self._jit_compile

    @property
    def python_function(self) -> Callable:
        return self._python_function

    def _python_function_to_trace(self) -> Callable:
        """The Python function a trace runs: with ``autograph``, its conversion (so Python
        control flow on tensors stages cond and while_loop, and ``print`` stays Python's, run
        while tracing), else the one given.  A function
        whose source cannot be read is traced as it is, with a warning, as TensorFlow does."""
        if not self.autograph:
            return self._python_function
        from ..autograph import ConversionError
        from ..autograph.conversion import to_graph_for_function

        try:
            return to_graph_for_function(self._python_function, self._autograph_options)
        except ConversionError as e:
            message = f"AutoGraph could not convert {self._name}; tracing it as it is: {e}"
            warnings.warn(message, stacklevel=2)
            return self._python_function

    def experimental_get_tracing_count(self) -> int:
        """How many times the function was traced (a new signature, or a relaxed one)."""
        return self._trace_count

    def __get__(self, instance, owner):
        """A method decorated with ``df.function`` binds like a method: ``self`` is a Python
        argument of the trace."""
        if instance is None:
            return self
        self._is_method = True
        return BoundFunction(self, instance)

    # -- calls -----------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _config.STATE.functions_run_eagerly and _executing_eagerly():
            return self._python_function(*args, **kwargs)  # `df.config.run_functions_eagerly`
        fast_key = None
        if not kwargs and len(args) == self._positional_count and _executing_eagerly():
            fast_key = _fast_key(args)
            concrete = self._concrete_by_fast_key.get(fast_key)
            if concrete is not None:
                return concrete._call_flat(args)
        location = _CallerLocation()
        arguments = self._canonical_arguments(args, kwargs, location)
        signature = self._signature_for(arguments, location)
        if _executing_eagerly():
            concrete = self._concrete_functions.get(signature)
            if concrete is None:
                concrete = self._trace(signature, arguments, location)
            if fast_key is not None:
                if len(self._concrete_by_fast_key) >= _FAST_KEYS_KEPT:
                    self._concrete_by_fast_key.clear()
                self._concrete_by_fast_key[fast_key] = concrete
            return concrete._call_eagerly(arguments)
        self._note_trace(signature, location, graph_mode=True)
        return self._build_at_call_site(arguments)

    def get_concrete_function(self, *args, **kwargs) -> ConcreteFunction:
        """The trace for these arguments (values, tensors, or `TensorSpec` for a tensor
        argument), made now if there is none yet.  With an ``input_signature`` and no
        arguments, the one trace of that signature."""
        location = _user_location()
        if not args and not kwargs and self.input_signature is not None:
            args = self.input_signature
        arguments = self._canonical_arguments(args, kwargs, location)
        signature = self._signature_for(arguments, location)
        concrete = self._concrete_functions.get(signature)
        if concrete is None:
            concrete = self._trace(signature, arguments, location)
        return concrete

    # -- signatures ------------------------------------------------------------------------------
    def _canonical_arguments(self, args, kwargs, location: SourceLocation):
        """``(args, kwargs)`` bound to the parameters (defaults filled in), or a TypeError
        naming the function and the caller's line."""
        if self._parameters is None or (not kwargs and len(args) == self._positional_count):
            return tuple(args), dict(kwargs)
        try:
            bound = self._parameters.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"df.function '{self._name}' called at {location}: {e}") from None
        bound.apply_defaults()
        return tuple(bound.args), dict(bound.kwargs)

    def _signature_for(self, arguments, location: SourceLocation) -> Signature:
        if self.input_signature is not None:
            return self._check_against_input_signature(arguments, location)
        signature = Signature.of(arguments)
        if signature in self._concrete_functions:
            return signature
        return choose(signature, self._trace_signatures, self.experimental_relax_shapes)

    def _check_against_input_signature(self, arguments, location: SourceLocation) -> Signature:
        args, kwargs = arguments
        flat = nest.flatten((args, kwargs))
        specs = nest.flatten(self.input_signature)
        if kwargs or len(args) != len(self.input_signature) or len(flat) != len(specs):
            raise TypeError(
                f"df.function '{self._name}' (input_signature {list(self.input_signature)}) "
                f"called at {location} with {len(args)} positional and {len(kwargs)} keyword "
                f"arguments; it takes exactly the {len(self.input_signature)} of its signature"
            )
        for i, (value, spec) in enumerate(zip(flat, specs)):
            given = trace_type_of(value)
            if not isinstance(spec, TensorSpec):
                if not given.is_subtype_of(spec):
                    raise TypeError(
                        f"df.function '{self._name}' called at {location}: argument {i} is "
                        f"{given!r}, which does not match its input_signature {spec!r}"
                    )
                continue
            if not isinstance(given, TensorSpec):
                given = TensorSpec.from_value(value)
            if given.dtype != spec.dtype or not spec.shape.is_compatible_with(given.shape):
                raise TypeError(
                    f"df.function '{self._name}' called at {location}: argument {i} is "
                    f"{given.dtype.name} of shape {given.shape}, which does not match its "
                    f"input_signature {spec}"
                )
        return Signature.of((tuple(self.input_signature), {}))

    def _note_trace(self, signature: Signature, location, graph_mode: bool) -> None:
        """Counts a signature met for the first time as a trace (and warns when there are
        many)."""
        if graph_mode:
            graph = get_default_graph()
            built = self._built_signatures.setdefault(id(graph), [])
            if signature in built:
                return
            built.append(signature)
            if signature in self._trace_signatures:
                return
        self._trace_count += 1
        self._concrete_by_fast_key.clear()
        previous = self._trace_signatures[-1] if self._trace_signatures else None
        self._trace_signatures.append(signature)
        if self._trace_count >= RETRACE_WARNING_THRESHOLD and previous is not None:
            names = _flat_argument_names(self._parameters, len(signature.leaves))
            warnings.warn(
                f"df.function '{self._name}' (defined at {self._location}) was traced "
                f"{self._trace_count} times; this trace (called at {location}) because "
                f"{signature.difference(previous, names)}.  Tracing is expensive: pass tensors "
                "rather than Python values that change, give an input_signature, or set "
                "reduce_retracing=True for shapes that change.",
                stacklevel=4,
            )

    # -- tracing ---------------------------------------------------------------------------------
    def _trace(self, signature: Signature, arguments, location) -> ConcreteFunction:
        """Traces the function into a new `FuncGraph` for ``signature``."""
        with self._not_already_tracing(signature, location):
            return self._trace_once(signature, arguments, location)

    @contextlib.contextmanager
    def _not_already_tracing(self, signature: Signature, location):
        """Refuses a trace (or graph-mode build) of a signature this thread is already tracing:
        the function called itself on the arguments it is being traced for, so the trace would
        never end (TensorFlow's ``StagingError``)."""
        active = getattr(_traces_in_progress, "keys", None)
        if active is None:
            active = _traces_in_progress.keys = set()
        key = (id(self), signature)
        if key in active:
            from ..autograph.errors import StagingError

            raise StagingError(
                f"df.function '{self._name}' (defined at {self._location}) calls itself at "
                f"{location} with the signature it is being traced for "
                f"({', '.join(map(repr, signature.leaves))}), so its "
                "trace would never end.  A df.function may recurse on Python values (each value "
                "is a trace of its own), not on tensors: write the recursion as a loop."
            )
        active.add(key)
        try:
            yield
        finally:
            active.discard(key)

    def _trace_once(self, signature: Signature, arguments, location) -> ConcreteFunction:
        self._note_trace(signature, location, graph_mode=False)
        outer = get_default_graph()
        graph = self._graph_class(self._name, outer)
        graph.lifts_variables = outer._eager
        args, kwargs = arguments
        flat_arguments = nest.flatten((args, kwargs))
        names = flat_placeholder_names(arguments, self._parameters, self.input_signature)
        with graph.as_default():
            traced_arguments, graph.inputs = placeholder_arguments(signature, flat_arguments, names)
            args, kwargs = nest.pack_sequence_as((args, kwargs), traced_arguments)
            variables_before = {id(v) for v in variables_of(graph)}
            graph.automatic_control_dependencies = self._automatic_control_dependencies
            try:
                outputs = self._python_function_to_trace()(*args, **kwargs)
            finally:
                graph.automatic_control_dependencies = False
            # A variable seen after an update (what ``v.assign(x)`` gives) returns its value.
            outputs = nest.map_structure(value_of_unread_variable, outputs)
            outputs = self._outputs_as_tensors(outputs, in_tf1_graph=False)
            new_variables = [v for v in variables_of(graph) if id(v) not in variables_before]
            self._check_variables_made(new_variables + graph.lifted_variables, location)
            outputs = self._order_effects(graph, graph.get_operations(), outputs, new_variables)
        graph.structured_outputs = outputs
        graph.outputs = output_tensors(outputs)
        concrete = ConcreteFunction(self, graph, signature, arguments)
        self._concrete_functions[signature] = concrete
        return concrete

    def _build_at_call_site(self, arguments):
        """Adds the function's ops to the default graph, the call's tensors as its inputs."""
        location = _CallerLocation()
        with self._not_already_tracing(Signature.of(arguments), location):
            return self._build_once_at_call_site(arguments)

    def _build_once_at_call_site(self, arguments):
        graph = get_default_graph()
        args, kwargs = arguments
        if self.input_signature is not None:
            args = self._as_signature_tensors(args)
        start = len(graph.get_operations())
        variables_before = {id(v) for v in variables_of(graph)}
        enclosing = graph.building_function, graph.automatic_control_dependencies
        graph.building_function = True
        graph.automatic_control_dependencies = self._automatic_control_dependencies
        try:
            outputs = self._python_function_to_trace()(*args, **kwargs)
        finally:
            graph.building_function, graph.automatic_control_dependencies = enclosing
        outputs = self._outputs_as_tensors(outputs, in_tf1_graph=not graph.building_function)
        new_variables = [v for v in variables_of(graph) if id(v) not in variables_before]
        self._check_variables_made(new_variables, _CallerLocation())
        return self._order_effects(graph, graph.get_operations()[start:], outputs, new_variables)

    def _outputs_as_tensors(self, outputs, in_tf1_graph: bool):
        """What the function returned, with each Python number, string, numpy array and
        variable made a tensor, as TensorFlow 2 does; tensors, composite tensors, TensorArrays
        and None stay.  Anything else is TensorFlow's TypeError, except that an `Operation`
        returned to a TF1 graph stays an op (TensorFlow refuses it there too; TF1 programs
        return train ops)."""
        from ...framework.tensor_conversion import convert_to_tensor

        def as_tensor(value):
            if value is None or isinstance(value, (Tensor, *_RETURNED_AS_THEY_ARE)):
                return value
            if isinstance(value, Operation) and in_tf1_graph:
                return value
            if _is_variable(value) or isinstance(
                value, (bool, int, float, complex, str, bytes, np.ndarray, np.generic)
            ):
                return convert_to_tensor(value)
            raise TypeError(
                "To be compatible with df.function, Python functions must return zero or more "
                f"Tensors or composite tensors or None values; df.function '{self._name}' "
                f"(defined at {self._location}) returned a value of type "
                f"{type(value).__name__}, which is not a Tensor: {value!r}"
            )

        return nest.map_structure(as_tensor, outputs)

    def _order_effects(self, graph: Graph, new_ops: list, outputs, new_variables: list):
        """The outputs to return, after automatic control dependencies (when this function
        has them: ``Defun`` and ``wrap_function`` do not, as in TensorFlow)."""
        if not self._automatic_control_dependencies:
            return outputs
        return _automatic_control_dependencies(
            graph,
            new_ops,
            graph._control_flow_context,
            outputs,
            ops_made_by_variables(new_variables),
        )

    def _as_signature_tensors(self, args) -> tuple:
        from ...framework.tensor_conversion import convert_to_tensor

        flat = [
            convert_to_tensor(value, dtype=spec.dtype)
            for value, spec in zip(nest.flatten(args), nest.flatten(self.input_signature))
        ]
        return tuple(nest.pack_sequence_as(args, flat))

    def _check_variables_made(self, new_variables: list, location) -> None:
        """Variables may be made by the first trace only, as in TensorFlow."""
        if not new_variables:
            return
        if self._trace_count > 1 or self._variables:
            raise ValueError(
                f"df.function '{self._name}' (defined at {self._location}) made variables "
                f"({', '.join(v.name for v in new_variables)}) on a trace after its first "
                f"(called at {location}); a df.function may make variables on its first trace "
                "only.  Make them outside the function, or once (``if v is None: v = ...``)."
            )
        self._variables = list(new_variables)

    def __repr__(self) -> str:
        return f"<df.function {self._name} (defined at {self._location})>"


class _CallerLocation:
    """The caller's file:line, found only when a message shows it (the stack walk costs more
    than the rest of an eager call)."""

    def __init__(self):
        self._location = None

    def __str__(self) -> str:
        if self._location is None:
            self._location = _user_location()
        return str(self._location)


def _executing_eagerly() -> bool:
    return get_default_graph()._eager


def _plain_positional_count(parameters) -> int:
    """How many parameters there are, when all are plain positional ones; else -1."""
    if parameters is None:
        return -1
    kinds = {p.kind for p in parameters.parameters.values()}
    if kinds - {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD}:
        return -1
    return len(parameters.parameters)


def _parameters_of(python_function) -> Optional[inspect.Signature]:
    try:
        return inspect.signature(python_function)
    except (TypeError, ValueError):
        return None


def _definition_location(python_function) -> str:
    code = getattr(inspect.unwrap(python_function), "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{code.co_filename}:{code.co_firstlineno}"


def _flat_argument_names(parameters, count: int) -> list[str]:
    names = [f"argument {i}" for i in range(count)]
    if parameters is not None and len(parameters.parameters) == count:
        names = [f"argument '{name}'" for name in parameters.parameters]
    return names


def _check_input_signature(input_signature, name: str) -> list:
    specs = list(input_signature)
    for spec in nest.flatten(specs):
        if not isinstance(spec, TypeSpec):
            raise TypeError(
                f"input_signature of df.function '{name}' holds {spec!r}; it must hold "
                "df.TensorSpec objects (or the specs of composite tensors: df.SparseTensorSpec, "
                "df.RaggedTensorSpec)"
            )
    return specs


# ``function(experimental_graph_breaks=True)`` makes a `breaks.BreakingFunction`; that module,
# which builds on this one, registers the class.
_breaking_function_type: Optional[type] = None


def register_breaking_function_type(cls: type) -> None:
    global _breaking_function_type
    _breaking_function_type = cls


def function(
    func: Optional[Callable] = None,
    input_signature=None,
    autograph: bool = True,
    jit_compile=None,
    reduce_retracing: bool = False,
    experimental_implements=None,
    experimental_autograph_options=None,
    experimental_attributes=None,
    experimental_relax_shapes=None,
    experimental_compile=None,
    experimental_follow_type_hints=None,
    experimental_graph_breaks: bool = False,
):
    """``df.function``: traces ``func`` into graphs, as ``tf.function`` (see the package
    docstring).

    Usable as ``@df.function``, ``@df.function(input_signature=[...])`` and
    ``df.function(func)``.  ``reduce_retracing`` (``experimental_relax_shapes``, its earlier
    name) traces once for shapes that differ in a dimension's size.  ``jit_compile``
    (``experimental_compile``) asks for the function compiled whole; here every traced function
    runs as a compiled plan of its graph anyway, with the same results.
    ``experimental_implements`` (the name of the function it implements) and
    ``experimental_attributes`` (a dict) are kept on the function as TensorFlow keeps them on
    its function definition.  ``experimental_follow_type_hints`` is deprecated and without effect
    in TensorFlow 2.21 (a call with other Python values traces again); so it is here.
    ``experimental_autograph_options`` (a ``df.autograph.experimental.Feature`` or a tuple of
    them) chooses AutoGraph's optional conversions, as TensorFlow's does (None: this
    AutoGraph's default; see `Feature` for what each changes and which change nothing).
    ``experimental_graph_breaks=True`` (dataflow's own) splits an eager call where a statement
    needs a tensor's value, and guards the Python values baked in
    (`dataflow.eager.tracing.breaks`)."""
    if experimental_compile is not None:
        if jit_compile is not None and bool(jit_compile) != bool(experimental_compile):
            raise ValueError(
                "df.function: jit_compile and experimental_compile (its earlier name) disagree"
            )
        jit_compile = experimental_compile
    relax = bool(experimental_relax_shapes or reduce_retracing)
    if experimental_autograph_options is not None:
        from ..autograph.conversion import options_of  # a TypeError names a wrong feature

        options_of(experimental_autograph_options, "df.function(experimental_autograph_options=)")
    if experimental_implements is not None and not isinstance(experimental_implements, str):
        raise TypeError(
            "df.function(experimental_implements=...) must be the name of the function "
            f"implemented (a string), got {experimental_implements!r}"
        )
    if experimental_attributes is not None and not isinstance(experimental_attributes, dict):
        raise TypeError(
            f"df.function(experimental_attributes=...) must be a dict, got "
            f"{experimental_attributes!r}"
        )
    attributes = dict(experimental_attributes or {})
    if experimental_implements is not None:
        attributes["_implements"] = experimental_implements

    def decorate(python_function: Callable) -> Function:
        if experimental_graph_breaks:
            made = _breaking_function_type(
                python_function,
                input_signature=input_signature,
                autograph=autograph,
                experimental_relax_shapes=relax,
            )
        else:
            made = Function(python_function, input_signature, autograph, relax)
        made._jit_compile = jit_compile
        made._attributes = attributes
        made._autograph_options = experimental_autograph_options
        return made

    if func is None:
        return decorate
    return decorate(func)


__all__ = ["ConcreteFunction", "FuncGraph", "Function", "function"]

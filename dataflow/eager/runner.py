"""Running one op eagerly: `EagerOpRunner` (the op runner of eager mode's graph) and
`EagerContext` (the run context its stateful kernels see, for the life of the process).

An op runs as a Session would run it, with the same OpDef: ``infer`` on an `EagerOperation`
(the op's inputs, attrs and name, with no graph), then the kernel that ``kernel(attrs)`` builds,
on the input values.  A kernel is built once per (op type, attrs) when the attrs are hashable
and the op is not stateful (a stateful kernel, such as a variable handle's, may hold state of
its own, so it is built per run), and the result of inference is kept too, per (op type,
attrs, input dtypes and shapes), where it cannot depend on more (`EagerOpRunner`).  A ``Const``
needs neither: its output is its value.  Errors are TensorFlow 2's eager ones, naming the op
and the user's line: tensors that inference refuses (shapes that do not fit, dtypes that do not
match) raise ``InvalidArgumentError``, where a graph being built raises ``ValueError`` or
``TypeError``; a failing kernel raises the `errors.OpError` a run would
(``InvalidArgumentError`` for bad values).  Python values that cannot become tensors are the
conversion's ``TypeError``/``ValueError``, before the op.  The user's line is looked for only
when an error is raised, or when a tape records the op (its gradient's errors name it later).

`run_planned` is the short way of a repeated op (see the package docstring): no inference, no
`EagerOperation`, only the kernel of the kept plan and the output's `EagerTensor`.
"""

from __future__ import annotations

import threading
import weakref
from typing import Optional

import numpy as np

from executor.program import NodeKind

from ..client.random_streams import RandomStreams
from ..framework import dtypes as _dtypes
from ..framework import errors
from ..framework import graph as _graph
from ..framework.graph import Operation, _user_location
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.variables import VariableRef, _uninitialized
from . import tensor as _tensor
from .tensor import EagerTensor

_KERNEL_CACHE_LIMIT = 4096
_ndarray, _asarray = np.ndarray, np.asarray  # read on every op run the short way
_OBJECT_DTYPES = (_dtypes.resource, _dtypes.string)


class EagerContext:
    """What stateful kernels see of eager execution, for the life of the process: variable
    values (held per handle, and dropped with it), random streams, and resources such as
    queues.  Each op run is one "run" of the random streams (`dataflow.client.random_streams`), so a
    seeded random op draws a new block of its stream each time it runs, and two ops with the
    same seeds draw the same values, as TensorFlow's eager kernels do."""

    deadline = None

    def __init__(self):
        self._lock = threading.Lock()
        self._variable_values: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._random_streams = RandomStreams()
        self._resources: dict = {}

    def reset_random_streams(self) -> None:
        """Starts every random stream again (a new graph-level seed was set)."""
        self._random_streams = RandomStreams()

    def random_generator(self, name: str, seed: int, seed2: int) -> np.random.Generator:
        return self._random_streams.generator_for_run({}, name, seed, seed2)

    def resource(self, key: str, make):
        with self._lock:
            found = self._resources.get(key)
            if found is None:
                found = self._resources[key] = make()
            return found

    def check_not_stopped(self, what: str) -> None:
        """Eager ops are never cancelled; a kernel that waits is waiting for another thread."""

    def read_variable(self, ref: VariableRef):
        try:
            return self._variable_values[ref]
        except KeyError:
            raise _uninitialized(ref) from None

    def write_variable(self, ref: VariableRef, value) -> None:
        self._variable_values[ref] = value

    def update_variable(self, ref: VariableRef, base, value) -> None:
        self._variable_values[ref] = value


_context: Optional[EagerContext] = None


def eager_context() -> EagerContext:
    """The process's `EagerContext`."""
    global _context
    if _context is None:
        _context = EagerContext()
    return _context


class EagerOperation(Operation):
    """An op that ran eagerly, as its OpDef's ``infer`` and gradient functions see it: type,
    name, attrs, inputs and outputs (`EagerTensor`s).  It is in no graph, and only a tape keeps
    it (an `EagerTensor` does not point back to it)."""

    _graph = None
    _control_inputs = ()
    _control_flow_context = None
    _control_blocks = frozenset()
    _device = ""
    _location = None

    def __init__(self, op_def, name: str, inputs: list, attrs: dict):
        self._op_def = op_def
        self._name = name
        self._inputs = inputs
        self._control_inputs = []
        self.attrs = attrs
        self._outputs = []

    @property
    def location(self):
        return self._location or _graph.SourceLocation("<eager>", 0, "<eager>")

    @location.setter
    def location(self, value) -> None:
        self._location = value

    def run(self, feed_dict=None, session=None) -> None:
        """An eager op has already run."""

    def __repr__(self) -> str:
        return f"<df.EagerOperation '{self._name}' type={self.type}>"


class _Recording(threading.local):
    """The tapes that record the ops run on this thread (`dataflow.eager.tape` pushes and pops
    them): a list that every thread has from its first look, so reading it never fails (a
    failed attribute lookup would cost more than running a small op)."""

    def __init__(self):
        self.tapes: list = []


_recording = _Recording()


def active_tapes() -> list:
    return _recording.tapes


def _refuse(op_def, name: Optional[str]) -> None:
    if op_def.feed_only:
        what = f"df.{op_def.type.lower()}() is not compatible with eager execution"
        hint = "pass the value itself (or use df.function with an input_signature)"
    else:
        what = f"The {op_def.type} op '{name or op_def.type}' has no meaning in eager mode"
        hint = "cond, while_loop and case run as plain Python there"
    raise RuntimeError(f"{what} ({_user_location()}): {hint}.")


class EagerOpRunner:
    """Runs each op at once (see the module docstring); `apply` is `op_registry`'s hook.

    What ``infer`` and ``kernel(attrs)`` give depends on the op's type, attrs and its inputs'
    dtypes and shapes only, for most ops: so the runner keeps, per such key (`run_planned`), a
    plan (the output dtypes and the built kernel) and runs a repeated op with no inference.
    An op whose inference looked at an input's value (through ``tensor.op``, as `Reshape` reads
    its shape argument), a stateful or random op, or one whose attrs cannot be hashed is
    inferred every time.  `run_planned` is the short way for callers that know their op's key
    (`dataflow.eager.operators`): a kept plan, its kernel and the result, nothing else.
    """

    def __init__(self, context: EagerContext):
        self.context = context
        self._kernels: dict = {}
        self._plans: dict = {}

    def apply(self, op_def, inputs, attrs: dict, name: Optional[str], control_inputs=()):
        """Runs ``op_def`` on ``inputs`` (tensors or values to convert) and returns the
        `EagerOperation` with its outputs.  ``control_inputs`` need nothing: every op before
        this one has already run."""
        value_attr = op_def.extra.get("output_is_attr")
        if value_attr is not None:  # a Const: the value it holds is its one output
            name = name.rstrip("/") if name else op_def.type
            return _Constant(EagerTensor(attrs[value_attr], attrs["dtype"], name))
        tensors = [x if x.__class__ is EagerTensor else _as_eager(x, op_def) for x in inputs]
        name = name.rstrip("/") if name else op_def.type
        op = EagerOperation(op_def, name, tensors, attrs)
        key = [op_def.type, tuple(attrs.items()) if attrs else ()]
        args = []
        for tensor in tensors:
            value = tensor._value
            key += (tensor._dtype._enum, value.shape)
            args.append(value)
        key = tuple(key)
        try:
            plan = self._plans.get(key)
        except TypeError:  # an attr that is not hashable (an array, a list)
            key = plan = None
        if plan is None:
            plan = self._plan(op, key)
        out_types, kernel, wants_context = plan
        try:
            result = kernel(self.context, *args) if wants_context else kernel(*args)
        except Exception as e:  # turned into what a Session run raises
            raise _kernel_error(op, e, args) from None
        outputs = op._outputs
        if len(out_types) == 1:
            dtype, np_dtype = out_types[0]
            if result.__class__ is not np.ndarray and np_dtype is not None:
                result = np.asarray(result, np_dtype)
            outputs.append(EagerTensor(result, dtype, name))
        else:
            for index, ((dtype, np_dtype), value) in enumerate(zip(out_types, result)):
                if value.__class__ is not np.ndarray and np_dtype is not None:
                    value = np.asarray(value, np_dtype)
                outputs.append(EagerTensor(value, dtype, name, index))
        tapes = _recording.tapes
        if tapes:
            op._location = _user_location()
            for tape in tapes:
                tape._record(op)
        hooks = getattr(_graph._op_creation_hooks, "hooks", None)
        if hooks:  # what watches each op made (`df.debugging.enable_check_numerics`)
            for hook in hooks:
                hook(op)
        return op

    def _plan(self, op: EagerOperation, key) -> tuple:
        """Infers ``op`` and builds its kernel: ``(output (dtype, numpy dtype or None for
        object values) pairs, kernel, whether the kernel takes the context)``, kept for ``key``
        when the plan holds for every op of that key (see the class docstring)."""
        op_def = op._op_def
        if op_def.kind is not NodeKind.OP or op_def.feed_only or op_def.kernel is None:
            _refuse(op_def, op._name)  # so no plan is ever kept for such an op
        values_read = _tensor.value_reads
        try:
            specs = op_def.infer(op)
        except (ValueError, TypeError) as e:
            # The op was given tensors it cannot take (shapes, dtypes): TensorFlow 2's eager
            # kernels report that as InvalidArgumentError, where building a graph gives
            # Python's ValueError/TypeError at once.
            message = f"{op_def.type} op '{op._name}' at {_user_location()}: {e}"
            raise errors.InvalidArgumentError(None, op, message) from None
        out_types = []
        for dtype, _ in specs:
            dtype = _dtypes.as_dtype(dtype)
            np_dtype = None if dtype in _OBJECT_DTYPES else _dtypes.numpy_dtype(dtype)
            out_types.append((dtype, np_dtype))
        kernel = self._kernel(op_def, op.attrs, op._name)
        plan = (tuple(out_types), kernel, op_def.wants_context)
        if (
            key is not None
            and not op_def.stateful
            and not op_def.extra.get("random_stream")
            and _tensor.value_reads == values_read
        ):
            if len(self._plans) >= _KERNEL_CACHE_LIMIT:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def _kernel(self, op_def, attrs: dict, name: str):
        if op_def.extra.get("random_stream"):
            attrs = dict(attrs, stream=name)
        if op_def.stateful:
            return op_def.kernel(attrs)
        try:
            key = (op_def.type, *attrs.items())
            kernel = self._kernels.get(key)
        except TypeError:  # an attr that is not hashable (an array, a list)
            return op_def.kernel(attrs)
        if kernel is None:
            if len(self._kernels) >= _KERNEL_CACHE_LIMIT:
                self._kernels.clear()
            kernel = self._kernels[key] = op_def.kernel(attrs)
        return kernel


def run_planned(key: tuple, args, name: str) -> Optional[EagerTensor]:
    """The one output of the op of plan key ``key`` run on the values ``args``, named
    ``name``, when ops made now run eagerly with no tape recording and a plan of one output is
    kept for ``key``; else None, and the caller takes the general way (which makes the plan,
    records the op on the tapes, builds a graph op, or raises the error of a failing kernel
    with the op and the user's line; a failed kernel is simply run again there).

    A plan key is ``(op type, tuple(attrs.items()) or (), then each input's dtype enum and
    shape)``, as `EagerOpRunner.apply` keeps it (the enum hashes faster than the `DType`)."""
    graph_stack = _graph._thread_state.graph_stack  # `get_default_graph`, with one call less
    graph = graph_stack[-1] if graph_stack else _graph.get_default_graph()
    runner = graph._op_runner
    if runner.__class__ is not EagerOpRunner or _recording.tapes:
        return None
    if getattr(_graph._op_creation_hooks, "hooks", None):  # the general way calls them
        return None
    plan = runner._plans.get(key)
    if plan is None:
        return None
    out_types, kernel, wants_context = plan
    if wants_context or len(out_types) != 1:
        return None
    try:
        result = kernel(*args)
    except Exception:
        return None
    dtype, np_dtype = out_types[0]
    if result.__class__ is not _ndarray and np_dtype is not None:
        result = _asarray(result, np_dtype)
    return EagerTensor(result, dtype, name)


def run_planned_op(
    type_name: str, inputs, attrs: Optional[dict], name: Optional[str]
) -> Optional[EagerTensor]:
    """`run_planned` for an op given as `op_registry.apply_op_output` gets it (its inputs
    must all be eager tensors, or None is returned); registered there by `EagerGraph`.  Ops
    of one and two inputs, the most, make their keys with no loop."""
    attrs_key = tuple(attrs.items()) if attrs else ()
    name = name.rstrip("/") if name else type_name
    count = len(inputs)
    try:
        if count == 1:
            (x,) = inputs
            if x.__class__ is not EagerTensor:
                return None
            x_value = x._value
            return run_planned(
                (type_name, attrs_key, x._dtype._enum, x_value.shape), (x_value,), name
            )
        if count == 2:
            x, y = inputs
            if x.__class__ is not EagerTensor or y.__class__ is not EagerTensor:
                return None
            x_value, y_value = x._value, y._value
            key = (type_name, attrs_key, x._dtype._enum, x_value.shape, y._dtype._enum)
            return run_planned((*key, y_value.shape), (x_value, y_value), name)
        key = [type_name, attrs_key]
        args = []
        for tensor in inputs:
            if tensor.__class__ is not EagerTensor:
                return None
            value = tensor._value
            key += (tensor._dtype._enum, value.shape)
            args.append(value)
        return run_planned(tuple(key), args, name)
    except TypeError:  # an attr that is not hashable (an array, a list)
        return None


def runs_eagerly_unrecorded() -> bool:
    """Whether `run_planned` may run ops now: they run eagerly and no tape records them."""
    return _graph.get_default_graph()._op_runner.__class__ is EagerOpRunner and not (
        _recording.tapes
    )


class _Constant:
    """What running a ``Const`` op eagerly gives: its value, as the one output."""

    __slots__ = ("outputs",)

    def __init__(self, tensor: EagerTensor):
        self.outputs = [tensor]


def _as_eager(value, op_def) -> EagerTensor:
    tensor = convert_to_tensor(value)
    if not tensor._is_eager:
        raise TypeError(
            f"{op_def.type} op at {_user_location()}: the graph tensor '{tensor.name}' has no "
            "value in eager mode; an op run eagerly takes eager tensors and Python or numpy "
            "values."
        )
    return tensor


def _kernel_error(op: EagerOperation, cause: Exception, args: list) -> errors.OpError:
    from ..client.session import _INVALID_ARGUMENT_CAUSES, _describe_value

    op._location = _user_location()
    where = errors.describe_op(op)
    if isinstance(cause, errors.OpError):
        return type(cause)(None, op, f"{where}: {cause.message}")
    inputs = ", ".join(_describe_value(v) for v in args) or "none"
    message = f"{where} failed: {type(cause).__name__}: {cause}\n  inputs: {inputs}"
    if isinstance(cause, _INVALID_ARGUMENT_CAUSES):
        return errors.InvalidArgumentError(None, op, message)
    return errors.UnknownError(None, op, message)

"""`Recording` (the graph ops record into, and its Session), `LazyTensor`, `lazy_mode`."""

from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Optional

import numpy as np

from executor.program import NodeKind

from ...framework import dtypes as _dtypes
from ...framework import graph as _graph
from ...framework import op_registry
from ...framework.op_registry import get_op_def
from ...framework.tensor_conversion import convert_to_tensor
from ...framework.tensor_shape import TensorShape
from ...passes.graph_item import attrs_fingerprint
from ..runner import active_tapes

_NOT_COMPUTED = object()
# A Switch has one dead output; an Enter or NextIteration's value lives in a loop's frame.
_SOMETIMES_DEAD = (NodeKind.SWITCH, NodeKind.ENTER, NodeKind.NEXT_ITERATION)
_local = threading.local()
_CONST = get_op_def("Const")
_PLACEHOLDER = get_op_def("Placeholder")
_VAR_HANDLE = get_op_def("VarHandleOp")
# How many recorded programs a recording keeps the first run of (`_structure`).
_STRUCTURES_KEPT = 256
# Arrays of at most this many elements that ops turn into constants stay constants, which the
# passes fold; larger ones are data, fed to the run (see `Recording._data`).
LITERAL_SIZE = 16


class _Failed:
    """The value of a tensor whose materialisation raised ``error``."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException):
        self.error = error


class LazyTensor(_graph.Tensor):
    """An op's output recorded under `lazy_mode`: symbolic until its value is asked for.

    It stands for output ``value_index`` of the recorded `Operation` (``op``, ``graph``,
    ``name``, ``shape`` and ``dtype`` are that tensor's), but it is a different object from the
    graph's own output tensor, so that the graph does not keep it alive: the recording knows
    which tensors Python can still ask for by which lazy tensors are still alive.  It is equal
    to the graph's tensor and hashes like it, so graph code that keys dicts by tensor (the
    control-flow helpers, ``gradients``) finds either under the other.
    """

    __slots__ = ("_recording", "_computed")
    # Like an eager tensor, it can give its value, so the ops outside its recording take it
    # as one: eager mode runs them on it, a recording feeds it, a traced function captures it.
    _is_eager = True

    def __init__(self, recording: Recording, symbolic: _graph.Tensor):
        super().__init__(symbolic.op, symbolic.value_index, symbolic.dtype, symbolic.shape)
        self._recording = recording
        self._computed = _NOT_COMPUTED

    @property
    def graph(self) -> _graph.Graph:
        """The default graph, as for an eager tensor: an op on this tensor goes to the mode in
        force where it is made (in the tensor's own recording, the recording's graph)."""
        return _graph.get_default_graph()

    @property
    def _value(self):
        return self.numpy()

    @property
    def symbolic(self) -> _graph.Tensor:
        """The graph's own tensor that this lazy tensor stands for."""
        return self._op._outputs[self._value_index]

    def __eq__(self, other) -> bool:
        return other is self or other is self.symbolic

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.symbolic)

    @property
    def is_computed(self) -> bool:
        return self._computed is not _NOT_COMPUTED and type(self._computed) is not _Failed

    def numpy(self) -> np.ndarray:
        """The value, computing it (and everything still pending that Python holds) first."""
        value = self._computed
        if value is _NOT_COMPUTED:
            self._recording.materialise(self)
            value = self._computed
        if type(value) is _Failed:
            raise value.error
        return value

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)

    def _scalar(self, convert, what: str):
        value = self.numpy()
        if np.ndim(value) != 0:
            raise TypeError(
                f"Only a tensor with one element can be used as a Python {what}; "
                f"'{self.name}' has shape {np.shape(value)}"
            )
        return convert(value)

    def __bool__(self) -> bool:
        return self._scalar(bool, "bool")

    def __float__(self) -> float:
        return self._scalar(float, "float")

    def __int__(self) -> int:
        return self._scalar(int, "int")

    def __index__(self) -> int:
        if not self._dtype.is_integer:
            raise TypeError(
                f"Only an integer tensor can be an index; '{self.name}' is {self._dtype.name}"
            )
        return self._scalar(int, "int")

    def __len__(self) -> int:
        dims = self._shape.as_list() if self._shape.rank is not None else None
        if dims is None or not dims or dims[0] is None:
            shape = np.shape(self.numpy())
            if not shape:
                raise TypeError(f"len() of a scalar tensor '{self.name}'")
            return shape[0]
        return dims[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return (
            f"<df.LazyTensor: shape={np.shape(self.numpy())}, dtype={self._dtype.name}, "
            f"numpy={self.numpy()!r}>"
        )

    def __str__(self) -> str:
        return str(self.numpy())

    def __format__(self, spec: str) -> str:
        value = self.numpy()
        return format(value.item() if np.ndim(value) == 0 else value, spec)


class Recording:
    """The graph that ops record into under one `lazy_mode` block, and the Session it runs in.

    State, all of it about what was recorded since the last materialisation except ``graph``
    (everything recorded): ``_pending`` (weak references to the lazy tensors made), ``_effects``
    (the stateful ops recorded at top level, in program order; the last one is the control
    input of the next), ``_current_ops`` (every op recorded: a control input on an older op is
    dropped, as that op has run or nothing needs it), ``_feeds`` (the placeholders that stand
    for data, with their values).  Across materialisations: ``_first_of`` (per `_structure`
    of a program run, the fetches, effects and placeholders of its first recording).
    """

    def __init__(self):
        op_registry.enable_op_runners()
        self.graph = LazyGraph(self)
        self._session = None
        self._pending: list[weakref.ref] = []
        self._effects: list[_graph.Operation] = []
        self._current_ops: dict[_graph.Operation, int] = {}  # in recording order
        self._feeds: dict[_graph.Tensor, np.ndarray] = {}
        self._data_of: dict[int, tuple] = {}  # id(value) -> (value, its placeholder)
        self.materialisations = 0
        self.plan_reuses = 0
        self._first_of: dict[tuple, tuple] = {}
        # Eager variables the recording uses: VariableRef -> the recording's handle of it.
        self._borrowed: dict = {}
        self.last_run_metadata = None

    # -- recording -------------------------------------------------------------------------------
    def record(self, op_def, inputs, attrs, name, control_inputs) -> LazyOperation:
        """Adds the op to the recording's graph and returns it with lazy outputs."""
        graph = self.graph
        if op_def is _CONST and np.size(attrs["value"]) > LITERAL_SIZE:
            symbolic = self._data(attrs["value"], name or "Const")
            output = LazyTensor(self, symbolic)
            self._pending.append(weakref.ref(output))
            return LazyOperation(symbolic.op, [output])
        tapes = active_tapes()
        if tapes and graph._control_flow_context is not None:
            _refuse_taped_control_flow(op_def, inputs, tapes)
        tensors = [self._as_input(x) for x in inputs]
        controls = [c for c in (self._as_control(c) for c in control_inputs) if c is not None]
        # The previous effect goes in at creation: a control input added later would change
        # the graph's plan version and make the Session plan every run anew.
        chained = op_def.stateful and graph._control_flow_context is None and self._effects
        if chained:
            controls.append(self._effects[-1])
        with _plain_graph_building():
            op = graph.create_op(op_def, tensors, attrs or {}, name=name, control_inputs=controls)
        self._current_ops[op] = len(self._current_ops)
        if op_def.stateful and op._control_flow_context is None:
            if not _names_state(op):
                self._effects.append(op)
            elif chained:  # made a moment ago: nothing has seen the edge yet
                op._control_inputs.remove(self._effects[-1])
        outputs = [LazyTensor(self, t) for t in op._outputs]
        self._pending.extend(weakref.ref(t) for t in outputs)
        if tapes and graph._control_flow_context is None:
            taped = TapedOperation(op, outputs, self._taped_inputs(inputs, tensors))
            for tape in tapes:
                tape._record(taped)
        return LazyOperation(op, outputs)

    def _taped_inputs(self, inputs, tensors: list) -> list:
        """An op's inputs as a tape sees them: the lazy or eager tensors given (which the tape
        knows by identity), and for any other value (a number, an array), a lazy tensor of
        what stands for it here, so that gradient functions read tensors of the right dtype."""
        taped = []
        for value, tensor in zip(inputs, tensors):
            if not (isinstance(value, _graph.Tensor) and value._is_eager):
                value = LazyTensor(self, tensor)
                self._pending.append(weakref.ref(value))
            taped.append(value)
        return taped

    def _as_input(self, value) -> _graph.Tensor:
        if isinstance(value, LazyTensor):
            if value._recording is self and not value.is_computed:
                return value.symbolic
            if value._dtype is _dtypes.resource:
                if value._recording is not self:
                    raise ValueError(
                        f"The variable handle '{value.name}' was recorded by another "
                        "lazy_mode block; use a variable in the block that made it"
                    )
                return value.symbolic  # its op only names the variable: running it again is safe
            return self._data(value.numpy(), "LazyValue")
        if isinstance(value, _graph.Tensor):
            if value._is_eager:
                return self._eager_value(value)
            if value.graph is not self.graph:
                raise ValueError(
                    f"The graph tensor '{value.name}' cannot be used under lazy_mode: it only "
                    "has a value in a Session of its own graph"
                )
            return value
        with _plain_graph_building(), self.graph.as_default():
            return convert_to_tensor(value)

    def _as_control(self, control) -> Optional[_graph.Operation]:
        """The op to wait for, or None for one recorded before the last materialisation:
        that one has run (an effect), or nothing still needs it."""
        if isinstance(control, LazyOperation):
            control = control.symbolic
        elif isinstance(control, _graph.Tensor):
            control = control.op
        if isinstance(control, _graph.Operation) and control.graph is self.graph:
            return control if control in self._current_ops else None
        return control  # create_op's own error for anything else

    def _eager_value(self, tensor: _graph.Tensor) -> _graph.Tensor:
        """What stands for an eager tensor here: its value as data, or for the handle of a
        variable made eagerly, a handle of the recording's own that the runs keep in step
        with the variable (see `materialise`)."""
        if tensor.dtype is not _dtypes.resource:
            return self._data(tensor.numpy(), "EagerValue")
        ref = tensor._value
        handle = self._borrowed.get(ref)
        if handle is None:
            key = f"{ref.key}/eager_{len(self._borrowed)}"
            attrs = {"dtype": ref.dtype, "shape": ref.shape, "shared_name": key}
            graph = self.graph
            context = graph._control_flow_context
            graph._control_flow_context = None
            try:
                with _plain_graph_building(), graph.control_dependencies(None):
                    handle = graph.create_op(_VAR_HANDLE, [], attrs, name="EagerVariable")
            finally:
                graph._control_flow_context = context
            handle = self._borrowed[ref] = handle.outputs[0]
            self._current_ops[handle.op] = len(self._current_ops)
        return handle

    def _data(self, value, name: str) -> _graph.Tensor:
        """A placeholder of the recording's graph that the next materialisation feeds with
        ``value``: how data from outside the recording (arrays, values computed before) comes
        in.  Not a constant: the passes would fold every op on it, fingerprint it and copy it,
        each a full pass over the data, before the run does the same work again.  It is made
        at the top level (a cond or loop being built takes it in as it takes any outside
        tensor), once per value and materialisation."""
        key = id(value)
        found = self._data_of.get(key)
        if found is not None and found[0] is value:
            return found[1]
        array = np.asarray(value)
        attrs = {"dtype": _dtypes.as_dtype(array.dtype), "shape": TensorShape(array.shape)}
        graph = self.graph
        context = graph._control_flow_context
        graph._control_flow_context = None
        try:
            with _plain_graph_building(), graph.control_dependencies(None):
                tensor = graph.create_op(_PLACEHOLDER, [], attrs, name=name).outputs[0]
        finally:
            graph._control_flow_context = context
        self._current_ops[tensor.op] = len(self._current_ops)
        self._feeds[tensor] = array
        self._data_of[key] = (value, tensor)
        return tensor

    # -- materialising ---------------------------------------------------------------------------
    def materialise(self, needed: LazyTensor) -> None:
        """Runs what was recorded since the last materialisation, once: the lazy tensors still
        alive (``needed`` among them) get their values, and every pending effect happens."""
        alive = [t for t in (ref() for ref in self._pending) if t is not None]
        effects = self._effects
        feeds = self._feeds
        self._pending = []
        self._effects = []
        recorded = self._current_ops
        self._current_ops = {}
        self._feeds = {}
        self._data_of = {}
        fetched = [t for t in alive if t._computed is _NOT_COMPUTED and self._has_value(t)]
        if needed not in fetched:
            needed._computed = _Failed(ValueError(_why_no_value(needed)))
        structure = _structure(recorded, fetched, effects)
        first = self._first_of.get(structure)
        if first is None:
            if len(self._first_of) >= _STRUCTURES_KEPT:
                self._forget_first_recordings()
            first = ([t.symbolic for t in fetched], effects, list(feeds), recorded)
            self._first_of[structure] = first
        else:
            self.plan_reuses += 1
            self._forget(recorded)
        fetches, effects, placeholders, _ = first
        feeds = dict(zip(placeholders, feeds.values()))
        try:
            from ...client.session import RunMetadata, Session

            with _plain_graph_building(), self.graph.as_default():
                if self._session is None:
                    self._session = Session(graph=self.graph)
                metadata = RunMetadata()
                self._lend_eager_variables()
                values, _ = self._session.run((fetches, effects), feeds, run_metadata=metadata)
                self._return_eager_variables()
                self.last_run_metadata = metadata
        except Exception as error:
            failed = _Failed(error)
            for t in fetched:
                t._computed = failed
            raise
        finally:
            self.materialisations += 1
        for t, value in zip(fetched, values):
            t._computed = value

    def _forget(self, recorded: dict) -> None:
        """Takes ops that will never run again out of the graph, so that it does not grow
        with every step of a loop, nor the walks over it (``gradients`` goes through every
        reader of a variable).  Variable handles stay: later recordings still name them."""
        self.graph._forget_ops(op for op in recorded if not _names_state(op))

    def _forget_first_recordings(self) -> None:
        for *_, recorded in self._first_of.values():
            self._forget(recorded)
        self._first_of.clear()

    def _lend_eager_variables(self) -> None:
        """Gives the Session the values the eager variables used here have now.  A run takes
        them over and `_return_eager_variables` hands back what it wrote, so that between
        runs the eager context holds every value, and a failed run changes none."""
        if not self._borrowed:
            return
        from ..runner import eager_context

        context, values = eager_context(), self._session._variable_values
        for ref, handle in self._borrowed.items():
            try:
                values[handle.op.attrs["shared_name"]] = context.read_variable(ref)
            except Exception:  # not initialised: a read in the run says so
                values.pop(handle.op.attrs["shared_name"], None)

    def _return_eager_variables(self) -> None:
        if not self._borrowed:
            return
        from ..runner import eager_context

        context, values = eager_context(), self._session._variable_values
        for ref, handle in self._borrowed.items():
            value = values.get(handle.op.attrs["shared_name"])
            if value is not None:
                context.write_variable(ref, value)

    def _has_value(self, tensor: LazyTensor) -> bool:
        """Whether a run can fetch ``tensor``: not a variable handle, and not a value that lives
        only inside a loop or on one branch of a cond (a loop's Exit lives after the loop)."""
        op = tensor._op
        kind = op.op_def.kind
        if tensor._dtype is _dtypes.resource or kind in _SOMETIMES_DEAD:
            return False
        inside = op._control_flow_context is not None and kind is not NodeKind.EXIT
        return not inside and self.graph.is_fetchable(op)

    @property
    def session(self):
        """The Session the recording runs in (it holds the variables made in lazy mode)."""
        return self._session


def _refuse_taped_control_flow(op_def, inputs, tapes: list) -> None:
    """Refuses a value a tape follows flowing into a cond or while_loop recorded lazily: the
    recording builds them as graph control flow, whose ops a tape does not record one by one,
    so the gradient would silently leave them out."""
    for value in inputs:
        if any(id(value) in tape._tracked for tape in tapes):
            raise NotImplementedError(
                f"A GradientTape under lazy_mode cannot differentiate through cond or "
                f"while_loop: '{value.name}' flows into a {op_def.type} op of one (at "
                f"{_graph._user_location()}).  Take the gradient with df.gradients inside "
                "lazy_mode, or record the tape in eager mode, where Python runs the branch "
                "or loop."
            )


def _names_state(op: _graph.Operation) -> bool:
    """Whether ``op`` only names state (a variable's handle): stateful, so never merged or
    folded, but no effect to order, and safe to run again from a later materialisation."""
    return bool(op._outputs) and all(t.dtype is _dtypes.resource for t in op._outputs)


def _structure(recorded: dict, fetched: list, effects: list) -> tuple:
    """What a run of the ops ``recorded`` since the last materialisation computes, as a
    hashable key: each op's type, attrs, inputs and control inputs (by position among
    ``recorded``, or the identity of an older tensor, a variable handle), and the user's line;
    then the fetched tensors and the effects.  Two runs with one key differ only in the values
    fed to their placeholders, so the second can run the first's ops, whose Session plan
    (passes, lowering) is already made, as a tracing JIT reuses a compiled graph."""

    def where(tensor):
        position = recorded.get(tensor.op)
        return ("earlier", id(tensor)) if position is None else (position, tensor.value_index)

    ops = tuple(
        (
            op.op_def.type,
            attrs_fingerprint(op.attrs),
            tuple(where(t) for t in op._inputs),
            tuple(recorded.get(c, ("earlier", id(c))) for c in op._control_inputs),
            op.location.filename,
            op.location.lineno,
        )
        for op in recorded
    )
    return (
        ops,
        tuple(where(t.symbolic) for t in fetched),
        tuple(recorded[op] for op in effects),
    )


def _why_no_value(tensor: LazyTensor) -> str:
    if tensor._dtype is _dtypes.resource:
        return (
            f"The variable handle '{tensor.name}' has no value of its own; read the variable "
            "(v.read_value(), or use v itself)"
        )
    return (
        f"The tensor '{tensor.name}' lives inside a cond or while_loop (at "
        f"{tensor.op.location}) and has no value outside it; use the result of the cond or "
        "the loop"
    )


class LazyOperation(_graph.Operation):
    """A recorded `Operation` whose ``outputs`` are lazy tensors.

    It is a view of the graph's own op: every attribute is read from and written to that op,
    and it is equal to it and hashes like it, so code that keeps ops in sets or dicts (the
    control-flow helpers, ``gradients``) finds the one under the other.
    """

    __slots__ = ("symbolic", "_lazy_outputs")

    def __init__(self, symbolic: _graph.Operation, outputs: list):
        object.__setattr__(self, "symbolic", symbolic)
        object.__setattr__(self, "_lazy_outputs", outputs)

    @property
    def outputs(self) -> list:
        return list(self._lazy_outputs)

    def __getattr__(self, name):
        return getattr(self.symbolic, name)

    def __setattr__(self, name, value) -> None:
        setattr(self.symbolic, name, value)

    def __eq__(self, other) -> bool:
        return other is self or other is self.symbolic

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self.symbolic)

    def __repr__(self) -> str:
        return f"<df.LazyOperation '{self.symbolic.name}' type={self.symbolic.type}>"

    __str__ = __repr__


class TapedOperation(LazyOperation):
    """A recorded op as an active `GradientTape` records it: its ``inputs`` are the lazy (or
    eager) tensors it was given, as its ``outputs`` are lazy, so the tape follows values by
    identity as it does eagerly, and the gradient functions it calls record their ops lazily
    on those tensors.  A tensor the tape holds stays alive, so a materialisation computes it,
    and a gradient recorded after that reads its value."""

    __slots__ = ("_lazy_inputs",)

    def __init__(self, symbolic: _graph.Operation, outputs: list, inputs: list):
        super().__init__(symbolic, outputs)
        object.__setattr__(self, "_lazy_inputs", inputs)

    @property
    def _inputs(self) -> list:
        return self._lazy_inputs

    @property
    def _outputs(self) -> list:
        return self._lazy_outputs


@contextlib.contextmanager
def _plain_graph_building():
    """Ops made inside build plain graph ops: those a control-flow context or a graph pass
    adds while the recording creates or runs an op must not be recorded again."""
    depth = getattr(_local, "plain", 0)
    _local.plain = depth + 1
    try:
        yield
    finally:
        _local.plain = depth


class LazyGraph(_graph.Graph):
    """A recording's graph: while it is the default graph, its op runner records the ops
    that `op_registry.apply_op` hands it (see `Recording.record`)."""

    def __init__(self, recording: Recording):
        super().__init__()
        self._op_runner = _Recorder(recording)

    def _capture_eager_tensor(self, tensor: _graph.Tensor, op_type: str) -> _graph.Tensor:
        return self._op_runner.recording._eager_value(tensor)


class _Recorder:
    """`LazyGraph`'s op runner: records an op, or builds it plainly inside
    `_plain_graph_building` (the ops that the graph itself adds while it creates one)."""

    __slots__ = ("recording",)

    def __init__(self, recording: Recording):
        self.recording = recording

    def apply(self, op_def, inputs, attrs, name, control_inputs):
        recording = self.recording
        if getattr(_local, "plain", 0):
            tapes = active_tapes()
            if tapes:
                _refuse_taped_control_flow(op_def, inputs, tapes)
            tensors = [recording._as_input(x) for x in inputs]
            op = recording.graph.create_op(
                op_def, tensors, attrs, name=name, control_inputs=control_inputs
            )
            recording._current_ops[op] = len(recording._current_ops)
            return op
        return recording.record(op_def, inputs, attrs, name, control_inputs)


@contextlib.contextmanager
def lazy_mode():
    """``with df.lazy_mode():`` ops record into a graph and run, with the graph passes, only
    when a value is needed (see `dataflow.eager.lazy`).  Yields the `Recording`.  Inside eager mode
    too: the recording's graph is the default graph inside the block."""
    recording = Recording()
    with recording.graph.as_default():
        yield recording

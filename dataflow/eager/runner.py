"""Running one op eagerly: `EagerOpRunner` (the op runner of eager mode's graph) and
`EagerContext` (the run context its stateful kernels see, for the life of the process).

An op runs as a Session would run it, with the same OpDef: ``infer`` on an `EagerOperation`
(the op's inputs, attrs and name, with no graph), then the kernel that ``kernel(attrs)`` builds,
on the input values.  A kernel is built once per (op type, attrs) when the attrs are hashable
and the op is not stateful (a stateful kernel, such as a variable handle's, may hold state of
its own, so it is built per run).  Errors are those of a Session run: inference raises
``TypeError``/``ValueError`` naming the op and the user's line; a failing kernel raises the
`errors.OpError` a run would (``InvalidArgumentError`` for bad values).
"""

from __future__ import annotations

import threading
import weakref
from typing import Optional

import numpy as np

from executor.program import NodeKind

from .. import dtypes as _dtypes
from .. import errors
from .. import graph as _graph
from ..graph import Operation, _user_location
from ..random_streams import RandomStreams
from ..variables import VariableRef, _uninitialized
from .tensor import EagerTensor

_KERNEL_CACHE_LIMIT = 4096
_OBJECT_DTYPES = (_dtypes.resource, _dtypes.string)


class EagerContext:
    """What stateful kernels see of eager execution, for the life of the process: variable
    values (held per handle, and dropped with it), random streams, and resources such as
    queues.  Each op run is one "run" of the random streams (`dataflow.random_streams`), so a
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

    def __init__(self, graph, op_def, name: str, inputs: list, attrs: dict):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = inputs
        self._control_inputs = []
        self.attrs = attrs
        self._outputs = []
        self._control_flow_context = None
        self._control_blocks = frozenset()
        self._device = ""
        self._location = None

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


# Tapes that record the ops run on this thread (`dataflow.eager.tape` pushes and pops them).
_recording = threading.local()


def active_tapes() -> list:
    tapes = getattr(_recording, "tapes", None)
    if tapes is None:
        tapes = _recording.tapes = []
    return tapes


def _refuse(op_def, name: Optional[str]) -> None:
    if op_def.feed_only:
        what = f"df.{op_def.type.lower()}() is not compatible with eager execution"
        hint = "pass the value itself (or use df.function with an input_signature)"
    else:
        what = f"The {op_def.type} op '{name or op_def.type}' has no meaning in eager mode"
        hint = "cond, while_loop and case run as plain Python there"
    raise RuntimeError(f"{what} ({_user_location()}): {hint}.")


class EagerOpRunner:
    """Runs each op at once (see the module docstring); `apply` is `op_registry`'s hook."""

    def __init__(self, context: EagerContext):
        self.context = context
        self._kernels: dict = {}

    def apply(self, op_def, inputs, attrs: dict, name: Optional[str], control_inputs=()):
        """Runs ``op_def`` on ``inputs`` (tensors or values to convert) and returns the
        `EagerOperation` with its outputs.  ``control_inputs`` need nothing: every op before
        this one has already run."""
        if op_def.kind is not NodeKind.OP or op_def.feed_only or op_def.kernel is None:
            _refuse(op_def, name)
        tensors = [x if x.__class__ is EagerTensor else _as_eager(x, op_def) for x in inputs]
        name = name.rstrip("/") if name else op_def.type
        op = EagerOperation(None, op_def, name, tensors, attrs)
        try:
            specs = op_def.infer(op)
        except (ValueError, TypeError) as e:
            raise type(e)(f"{op_def.type} op '{name}' at {_user_location()}: {e}") from None
        args = [t._value for t in tensors]
        kernel = self._kernel(op_def, attrs, name)
        try:
            if op_def.wants_context:
                result = kernel(self.context, *args)
            else:
                result = kernel(*args)
        except Exception as e:  # turned into what a Session run raises
            raise _kernel_error(op, e, args) from None
        if len(specs) == 1:
            results = (result,)
        else:
            results = result
        outputs = op._outputs
        for index, ((dtype, _), value) in enumerate(zip(specs, results)):
            dtype = _dtypes.as_dtype(dtype)
            if value.__class__ is not np.ndarray and dtype not in _OBJECT_DTYPES:
                value = np.asarray(value, _dtypes.numpy_dtype(dtype))
            outputs.append(EagerTensor(value, dtype, name, index))
        tapes = getattr(_recording, "tapes", None)
        if tapes:
            op._location = _user_location()
            for tape in tapes:
                tape._record(op)
        return op

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


def _as_eager(value, op_def) -> EagerTensor:
    tensor = _graph.convert_to_tensor(value)
    if not tensor._is_eager:
        raise TypeError(
            f"{op_def.type} op at {_user_location()}: the graph tensor '{tensor.name}' has no "
            "value in eager mode; an op run eagerly takes eager tensors and Python or numpy "
            "values."
        )
    return tensor


def _kernel_error(op: EagerOperation, cause: Exception, args: list) -> errors.OpError:
    from ..session import _INVALID_ARGUMENT_CAUSES, _describe_value

    op._location = _user_location()
    where = errors.describe_op(op)
    if isinstance(cause, errors.OpError):
        return type(cause)(None, op, f"{where}: {cause.message}")
    inputs = ", ".join(_describe_value(v) for v in args) or "none"
    message = f"{where} failed: {type(cause).__name__}: {cause}\n  inputs: {inputs}"
    if isinstance(cause, _INVALID_ARGUMENT_CAUSES):
        return errors.InvalidArgumentError(None, op, message)
    return errors.UnknownError(None, op, message)

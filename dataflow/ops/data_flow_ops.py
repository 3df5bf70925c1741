"""Indexed stacks: where a loop's gradient keeps the forward values its backward loop reads.

Three ops, built by `dataflow.gradients` (through ``primitives.loop_gradients``) and by no one
else::

    handle = IndexedStack(dtype=float32)           # a new, empty stack each time it runs
    IndexedStackPush(handle, index, value)         # in the forward loop, index = iteration k
    value = IndexedStackPop(handle, index)         # in the backward loop, index = k again

Why indexed.  A TensorFlow stack is a LIFO: the backward loop pops in the reverse of the push
order.  Here several iterations of a loop may run at once (``parallel_iterations``), and on the
inter-op thread pool the push of iteration k+1 can happen before the push of iteration k, so the
order of kernel calls says nothing.  Each push therefore names its slot, the forward iteration
number (from a counter the gradient adds to the forward loop), and each pop names the slot it
takes, which makes the result independent of the order in which kernels ran.  A pop removes the
value, so a value is held from its push until the backward iteration that uses it.

Where the state lives.  The handle is not a name for state kept somewhere else: the value
``IndexedStack`` outputs *is* the storage, a fresh `IndexedStackStorage` made by that kernel call
in that run.  Nothing is kept in the Graph or the Session: two concurrent runs of one graph
execute their own ``IndexedStack`` kernels and never share a stack, a stack made in iteration k
of an outer loop is a different one from iteration k+1's (that is how the stacks of a nested
loop are kept per forward frame instance), and a run that fails simply drops its stacks with its
other values.  The storage is freed when the last op that holds the handle has run.

All three are stateful (passes must never merge, fold or drop them) and cheap (inline).  They
can be saved by ``df.io`` like any op; the handle's value cannot be fed or fetched meaningfully.
"""

from __future__ import annotations

import numbers

from .. import dtypes as _dtypes
from ..op_registry import define_op
from ..tensor_shape import TensorShape

__all__ = ["IndexedStackStorage"]


class IndexedStackStorage:
    """The values one ``IndexedStack`` kernel call collects in one run, by forward index."""

    __slots__ = ("values", "dtype")

    def __init__(self, dtype: _dtypes.DType):
        self.values: dict[int, object] = {}
        self.dtype = dtype

    def push(self, index: int, value) -> None:
        if index in self.values:
            raise ValueError(f"a value was already pushed at index {index} of this stack")
        self.values[index] = value

    def pop(self, index: int):
        try:
            return self.values.pop(index)
        except KeyError:
            held = sorted(self.values)
            raise ValueError(
                f"no value was pushed at index {index} of this stack (it holds "
                f"{len(held)} value(s){', at ' + str(held[:8]) if held else ''})"
            ) from None

    def __repr__(self) -> str:
        return f"<IndexedStackStorage of {self.dtype.name} holding {len(self.values)} values>"


def _as_index(index) -> int:
    if not isinstance(index, numbers.Integral):
        index = index.item()
    return int(index)


def _check_handle(op, position: int = 0):
    handle = op.inputs[position]
    if handle.dtype is not _dtypes.resource:
        raise TypeError(
            f"input {position} must be a stack handle (resource), got {handle.dtype.name}"
        )


def _check_index(op, position: int = 1):
    index = op.inputs[position]
    if not index.dtype.is_integer or index.shape.ndims not in (None, 0):
        raise TypeError(
            f"input {position} must be an integer scalar index, got {index.dtype.name} "
            f"of shape {index.shape}"
        )


def _infer_stack(op):
    if op.inputs:
        raise ValueError(f"takes no inputs, got {len(op.inputs)}")
    if not isinstance(op.attrs.get("dtype"), _dtypes.DType):
        raise TypeError(f"attr dtype must be a DType, got {op.attrs.get('dtype')!r}")
    return [(_dtypes.resource, TensorShape([]))]


def _stack_kernel(attrs):
    dtype = attrs["dtype"]
    return lambda: IndexedStackStorage(dtype)


def _infer_push(op):
    if len(op.inputs) != 3:
        raise ValueError(f"expects (handle, index, value), got {len(op.inputs)} inputs")
    _check_handle(op)
    _check_index(op)
    return []


def _push_kernel(attrs):
    def push(storage, index, value):
        storage.push(_as_index(index), value)
        return ()

    return push


def _infer_pop(op):
    if len(op.inputs) != 2:
        raise ValueError(f"expects (handle, index), got {len(op.inputs)} inputs")
    _check_handle(op)
    _check_index(op)
    dtype = op.attrs.get("dtype")
    shape = op.attrs.get("shape")
    if not isinstance(dtype, _dtypes.DType) or not isinstance(shape, TensorShape):
        raise TypeError("attrs dtype (a DType) and shape (a TensorShape) are required")
    return [(dtype, shape)]


def _pop_kernel(attrs):
    def pop(storage, index):
        return storage.pop(_as_index(index))

    return pop


define_op("IndexedStack", _infer_stack, _stack_kernel, stateful=True, inline=True)
define_op("IndexedStackPush", _infer_push, _push_kernel, stateful=True, inline=True)
define_op("IndexedStackPop", _infer_pop, _pop_kernel, stateful=True, inline=True)


# -- gradients -------------------------------------------------------------------------------------
from ..gradients import NotDifferentiable, RegisterGradient, SecondOrderLoopGradientError  # noqa: E402

NotDifferentiable("IndexedStack")
NotDifferentiable("IndexedStackPush")


@RegisterGradient("IndexedStackPop")
def _pop_grad(op, grad):
    raise SecondOrderLoopGradientError(
        f"Second-order gradient for while loops not supported: the gradient reaches "
        f"'{op.name}', a value the backward loop of a while_loop reads back from the forward "
        "loop, and that read has no gradient."
    )

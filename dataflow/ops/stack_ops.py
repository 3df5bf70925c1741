"""TF1's stacks: a last-in, first-out store of tensors that ops share through a handle.

Four ops, as TensorFlow names them (``gen_data_flow_ops.stack_v2`` and its relatives)::

    handle = StackV2(max_size, elem_type=int32, stack_name="foo")   # a new, empty stack
    value  = StackPushV2(handle, value)     # pushes value and outputs it
    value  = StackPopV2(handle, elem_type=int32)                    # takes the last value
    StackCloseV2(handle)                    # empties the stack; later pushes and pops fail

Where the stack lives.  TensorFlow keeps a stack in the run's *step container*: each run of
``StackV2`` makes a new stack that lasts until the run ends, so a value pushed in one
``Session.run`` is not there in the next.  Here the value ``StackV2`` outputs as the handle *is*
that stack, a fresh `Stack` made by the kernel call in that run (as TensorArrays are):
nothing is kept in the Graph or the Session, concurrent runs never share a stack, a stack made
in a loop body is a new one in each iteration, and a failed run drops its stacks with its other
values.

Order.  Pushes and pops act in the order their kernels run, as in TensorFlow, so a program
orders them with data or control edges (a ``while_loop`` with ``parallel_iterations=1``, or
``with_dependencies``; the stacks of loop gradients are ordered by the edges
``primitives.loop_gradients`` adds).  A lock keeps each push and pop whole when kernels run on
several threads.

Errors keep TensorFlow's wording: "Stack[foo_3] is empty when calling Pop().", "... overflowed
its max_size (2)", "... has already been closed.", and a push of another dtype "Must have type
int32 but got float32"; the stack's name is ``stack_name`` (the op's name when empty) with a
process-wide counter, as TensorFlow names each stack it makes.
"""

from __future__ import annotations

import itertools
import threading
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import get_default_graph
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = ["Stack", "stack_close_v2", "stack_pop_v2", "stack_push_v2", "stack_v2"]

# Numbers the stacks the kernels make, so each has its own name in errors (TensorFlow's
# ``Stack::stack_counter``).
_stack_numbers = itertools.count()


class Stack:
    """The values one ``StackV2`` kernel call holds in one run, last pushed last.

    ``base_type`` is ``elem_type.base_dtype``; ``numpy_dtype`` the numpy dtype that stands for
    it exactly (a value of that numpy dtype is of the stack's type, and no other is), or None
    when there is none (handles, variants, strings): the kernels check a pushed value's type
    with one comparison where they can (`_push_kernel`), as a compiled loop calls them once
    per iteration."""

    __slots__ = (
        "name",
        "elem_type",
        "base_type",
        "numpy_dtype",
        "max_size",
        "values",
        "closed",
        "lock",
    )

    def __init__(self, name: str, elem_type: _dtypes.DType, max_size: Optional[int]):
        self.name = name
        self.elem_type = elem_type
        self.base_type = elem_type.base_dtype
        self.numpy_dtype = _exact_numpy_dtype(self.base_type)
        self.max_size = max_size
        self.values: list = []
        self.closed = False
        self.lock = threading.Lock()

    def _check_open(self) -> None:
        if self.closed:
            raise InvalidArgumentError(None, None, f"Stack[{self.name}] has already been closed.")

    def push(self, value) -> None:
        with self.lock:
            self._check_open()
            if self.max_size is not None and len(self.values) >= self.max_size:
                raise InvalidArgumentError(
                    None, None, f"Stack[{self.name}] overflowed its max_size ({self.max_size})"
                )
            self.values.append(value)

    def pop(self):
        with self.lock:
            self._check_open()
            if not self.values:
                raise InvalidArgumentError(
                    None, None, f"Stack[{self.name}] is empty when calling Pop()."
                )
            return self.values.pop()

    def close(self) -> None:
        with self.lock:
            self.values.clear()
            self.closed = True

    def __repr__(self) -> str:
        return f"<Stack[{self.name}] of {self.elem_type.name} holding {len(self.values)} values>"


def _exact_numpy_dtype(dtype: _dtypes.DType) -> Optional[np.dtype]:
    """The numpy dtype whose values are exactly those of ``dtype`` (it maps back to
    ``dtype``), or None (handles and variants, which numpy cannot type, and any type that
    does not map back)."""
    if dtype in _HANDLE_TYPES:
        return None
    try:
        numpy_dtype = np.dtype(dtype.as_numpy_dtype)
        if _dtypes.as_dtype(numpy_dtype).base_dtype is dtype and numpy_dtype.kind != "O":
            return numpy_dtype
    except (TypeError, ValueError):
        pass
    return None


def _check_handle(op) -> None:
    if not op.inputs or op.inputs[0].dtype is not _dtypes.resource:
        got = op.inputs[0].dtype.name if op.inputs else "nothing"
        raise TypeError(f"input 0 must be a stack handle (resource), got {got}")


def _infer_stack(op):
    if len(op.inputs) != 1:
        raise ValueError(f"expects (max_size,), got {len(op.inputs)} inputs")
    max_size = op.inputs[0]
    if max_size.dtype is not _dtypes.int32 or max_size.shape.ndims not in (None, 0):
        raise TypeError(
            f"max_size must be an int32 scalar, got {max_size.dtype.name} of shape {max_size.shape}"
        )
    return [(_dtypes.resource, TensorShape([]))]


def _stack_kernel(attrs):
    elem_type, stack_name = attrs["elem_type"], attrs["stack_name"]

    def make_stack(max_size):
        size = int(max_size)
        return Stack(f"{stack_name}_{next(_stack_numbers)}", elem_type, size if size >= 0 else None)

    return make_stack


# Values numpy cannot type: a handle's (a stack, a TensorArray) and a variant's (an opaque
# object, such as the record a py_function keeps for its gradient).
_HANDLE_TYPES = (_dtypes.resource, _dtypes.variant)


def _infer_push(op):
    if len(op.inputs) != 2:
        raise ValueError(f"expects (handle, elem), got {len(op.inputs)} inputs")
    _check_handle(op)
    elem = op.inputs[1]
    return [(elem.dtype, elem.shape)]


def _push_kernel(attrs):
    def push(stack, value):
        # A numpy array or scalar of the stack's own numpy dtype passes with one comparison.
        if getattr(value, "dtype", None) != stack.numpy_dtype or stack.numpy_dtype is None:
            if stack.base_type not in _HANDLE_TYPES:  # a handle's dtype matched at build time
                pushed = _dtypes.as_dtype(np.asarray(value).dtype)
                if pushed.base_dtype is not stack.base_type:
                    raise InvalidArgumentError(
                        None, None, f"Must have type {stack.elem_type.name} but got {pushed.name}"
                    )
        stack.push(value)
        return value

    return push


def _infer_pop(op):
    if len(op.inputs) != 1:
        raise ValueError(f"expects (handle,), got {len(op.inputs)} inputs")
    _check_handle(op)
    return [(op.attrs["elem_type"], TensorShape(None))]


def _pop_kernel(attrs):
    elem_type = attrs["elem_type"]
    base_type = elem_type.base_dtype

    def pop(stack):
        if stack.base_type is not base_type:
            raise InvalidArgumentError(
                None,
                None,
                f"Stack[{stack.name}] holds {stack.elem_type.name} values, not the "
                f"{elem_type.name} this pop declares",
            )
        return stack.pop()

    return pop


def _infer_close(op):
    if len(op.inputs) != 1:
        raise ValueError(f"expects (handle,), got {len(op.inputs)} inputs")
    _check_handle(op)
    return []


def _close_kernel(attrs):
    def close(stack):
        stack.close()
        return ()

    return close


# A push or pop of a stack is ordered by the program's edges (pushes and pops of one stack
# are chained by data or control edges, as the module docstring asks), so running them in any
# order those edges allow, one after another, gives the interpreter's result: a compiled loop
# or cond may run them (``state_ordered_by_edges``, `dataflow.client.compiler`).  A close
# takes the handle alone, so nothing orders it after the pushes and pops: it is not so marked.
_ORDERED = {"state_ordered_by_edges": True}
define_op("StackV2", _infer_stack, _stack_kernel, stateful=True, inline=True, extra=_ORDERED)
define_op("StackPushV2", _infer_push, _push_kernel, stateful=True, inline=True, extra=_ORDERED)
define_op("StackPopV2", _infer_pop, _pop_kernel, stateful=True, inline=True, extra=_ORDERED)
define_op("StackCloseV2", _infer_close, _close_kernel, stateful=True, inline=True)


def stack_v2(max_size, elem_type, stack_name: str = "", name: Optional[str] = None):
    """A handle to a new, empty stack of ``elem_type`` values, made afresh in each run; a
    ``max_size`` below 0 means no bound (TensorFlow's ``gen_data_flow_ops.stack_v2``)."""
    op_name = name or "StackV2"
    if not stack_name:
        stack_name = get_default_graph().unique_name(op_name, mark_as_used=False)
    max_size = convert_to_tensor(max_size, dtype=_dtypes.int32, name="max_size")
    attrs = {"elem_type": _dtypes.as_dtype(elem_type), "stack_name": stack_name}
    return apply_op("StackV2", [max_size], attrs, op_name).outputs[0]


def stack_push_v2(handle, elem, swap_memory: bool = False, name: Optional[str] = None):
    """Pushes ``elem`` onto the stack ``handle`` and outputs it.  ``swap_memory`` (moving
    values off a GPU) is accepted and has nothing to do on the host."""
    attrs = {"swap_memory": bool(swap_memory)}
    return apply_op("StackPushV2", [handle, elem], attrs, name or "StackPushV2").outputs[0]


def stack_pop_v2(handle, elem_type, name: Optional[str] = None):
    """Takes the last value pushed onto the stack ``handle`` (of dtype ``elem_type``)."""
    attrs = {"elem_type": _dtypes.as_dtype(elem_type)}
    return apply_op("StackPopV2", [handle], attrs, name or "StackPopV2").outputs[0]


def stack_close_v2(handle, name: Optional[str] = None):
    """Empties the stack ``handle``; a later push or pop on it fails.  Returns the op."""
    return apply_op("StackCloseV2", [handle], {}, name or "StackCloseV2")


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

# As TensorFlow's data_flow_grad: no gradient passes through a stack.
for _type in ("StackV2", "StackPushV2", "StackPopV2", "StackCloseV2"):
    NotDifferentiable(_type)

"""TF1's raw resource-variable ops on a variable's handle (``resource_variable_ops``).

``Variable.assign`` and ``Variable.read_value`` are the everyday way to write and read a
variable; these functions take the handle itself (``v.handle``, or that handle carried through a
cond or a loop), as TensorFlow's generated op wrappers do.  They build dataflow's own
``Assign`` and ``ReadVariableOp`` ops: the variable's dtype and shape are checked when the op
runs, against the variable the handle names.
"""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import Operation, Tensor
from ..framework.op_registry import apply_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = ["assign_variable_op", "read_variable_op"]


def _check_handle(handle, what: str) -> Tensor:
    if not isinstance(handle, Tensor) or handle.dtype is not _dtypes.resource:
        raise TypeError(f"{what} takes a variable's handle (a resource tensor), got {handle!r}")
    return handle


def assign_variable_op(resource, value, name: Optional[str] = None) -> Operation:
    """Writes ``value`` into the variable whose handle is ``resource`` and returns the op, as
    TensorFlow's ``AssignVariableOp`` (which has no output).  ``value`` converts with its own
    dtype; the run fails when the variable holds another shape."""
    handle = _check_handle(resource, "assign_variable_op")
    graph = handle.graph
    with graph.as_default():
        value = convert_to_tensor(value, name="value")
        attrs = {"dtype": value.dtype, "shape": TensorShape(None)}
        return apply_op("Assign", [handle, value], attrs, name or "AssignVariableOp")


def read_variable_op(resource, dtype, name: Optional[str] = None) -> Tensor:
    """A read of the variable whose handle is ``resource`` (TensorFlow's ``ReadVariableOp``)."""
    handle = _check_handle(resource, "read_variable_op")
    attrs = {"dtype": _dtypes.as_dtype(dtype), "shape": TensorShape(None)}
    return apply_op("ReadVariableOp", [handle], attrs, name or "ReadVariableOp").outputs[0]

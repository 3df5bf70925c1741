"""What the graph itself tells of an int tensor's value before it runs: constants, and the
dims, ranks and sizes of tensors whose static shapes are known, through the ops that shape
arithmetic uses (``shape(x)[0]``, ``rank(x) - 1``, ``range(1, rank(x))``, ``concat`` of such
vectors).  The op modules use it for static shapes and for arguments that must be known when
the graph is built; it reads graphs and builds nothing."""

from __future__ import annotations

import builtins
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.tensor_conversion import numpy_value_or_none
from ..framework.tensor_shape import TensorShape

_pyrange = builtins.range


def _constant_scalar(t: Tensor) -> Optional[int]:
    """The value of the int scalar ``t`` if known at build time."""
    value = numpy_value_or_none(t)
    if value is not None and value.ndim == 0:
        return int(value)
    op = t.op
    # v[i] of a vector whose element i is known, as in shape(x)[0] with a known first dimension.
    if (
        op.type == "StridedSlice"
        and op.attrs["shrink_axis_mask"] == 1
        and not op.attrs["ellipsis_mask"] | op.attrs["new_axis_mask"]
    ):
        begin = numpy_value_or_none(op.inputs[1])
        source = constant_vector(op.inputs[0])
        if begin is not None and begin.shape == (1,) and source is not None:
            if -len(source) <= int(begin[0]) < len(source):
                return source[int(begin[0])]
    # Sums, differences and products of known int scalars, as rank(x) - 1.
    if op.type in _SCALAR_ARITHMETIC and t.dtype.is_integer and t.shape.ndims == 0:
        operands = [_constant_scalar(x) for x in op.inputs]
        if None not in operands:
            return _SCALAR_ARITHMETIC[op.type](*operands)
    return None


_SCALAR_ARITHMETIC = {
    "Add": lambda a, b: a + b,
    "Sub": lambda a, b: a - b,
    "Mul": lambda a, b: a * b,
    "Neg": lambda a: -a,
}


def constant_vector(t: Tensor) -> Optional[list]:
    """The elements of the int vector ``t`` known at build time (``None`` for those computed at
    run time), or ``None`` when even its length is unknown."""
    value = numpy_value_or_none(t)
    if value is not None:
        return [int(v) for v in value.reshape(-1)] if value.ndim == 1 else None
    if t.shape.ndims not in (None, 1):
        return None
    op = t.op
    if op.type == "Pack" and op.attrs["axis"] == 0:
        return [_constant_scalar(x) for x in op.inputs]
    if op.type == "Shape" and op.inputs[0].shape.ndims is not None:
        return op.inputs[0].shape.as_list()
    if op.type == "ConcatV2" and op.attrs["axis"] == 0:
        parts = [constant_vector(x) for x in op.inputs]
        if all(p is not None for p in parts):
            return [d for p in parts for d in p]
    if op.type == "StridedSlice":
        # A plain slice of a known vector, as shape(x)[1:]: its elements are the slice's.
        part = _sliced_vector(op)
        if part is not None:
            return part
    if op.type == "Range" and t.dtype.is_integer:
        # range(1, rank(x)) for an x of known rank, a common list of reduction axes.
        bounds = [_constant_through_cast(x) for x in op.inputs]
        if all(b is not None for b in bounds) and bounds[2] != 0:
            return list(_pyrange(*(int(b) for b in bounds)))
    if t.shape.ndims == 1 and t.shape[0] is not None:
        return [None] * t.shape[0]
    return None


def _sliced_vector(op) -> Optional[list]:
    attrs = op.attrs
    if attrs["ellipsis_mask"] | attrs["new_axis_mask"] | attrs["shrink_axis_mask"]:
        return None
    source = constant_vector(op.inputs[0])
    bounds = [numpy_value_or_none(x) for x in op.inputs[1:4]]
    if source is None or any(b is None or b.shape != (1,) for b in bounds):
        return None
    begin, end, stride = (int(b[0]) for b in bounds)
    if stride == 0:
        return None
    begin = None if attrs["begin_mask"] & 1 else begin
    end = None if attrs["end_mask"] & 1 else end
    return source[begin:end:stride]


def _shape_from_vector(t: Tensor, what: str) -> TensorShape:
    """The static shape named by the int vector ``t`` (dims of a fill or zeros)."""
    if t.shape.ndims is not None and t.shape.ndims != 1:
        raise ValueError(f"{what} must be a vector, got shape {t.shape}")
    dims = constant_vector(t)
    if dims is None:
        return TensorShape(None)
    for d in dims:
        if d is not None and d < 0:
            raise ValueError(f"{what} must not be negative, got {dims}")
    return TensorShape(dims)


def _constant_through_cast(t: Tensor) -> Optional[np.ndarray]:
    """The value of a constant, or of a constant that `range` cast to a common dtype; an int
    scalar also counts when it is a known dimension, as ``shape(x)[0]`` is."""
    value = _known_value(t)
    if value is None and t.op.type == "Cast":
        inner = _known_value(t.op.inputs[0])
        if inner is not None:
            value = inner.astype(_dtypes.numpy_dtype(t.dtype))
    return value


def _known_value(t: Tensor) -> Optional[np.ndarray]:
    value = numpy_value_or_none(t)
    return value if value is not None else known_int_value(t)


def known_int_value(t: Tensor) -> Optional[np.ndarray]:
    """The value, of ``t``'s dtype, of an int scalar or vector that is not a constant but is
    known when the graph is built, as ``rank(x) - 1`` or ``range(1, rank(x))`` for an ``x`` of
    known rank; None otherwise."""
    if not t.dtype.is_integer:
        return None
    known = None
    if t.shape.ndims == 0:
        known = _constant_scalar(t)
    elif t.shape.ndims == 1:
        vector = constant_vector(t)
        known = vector if vector is not None and None not in vector else None
    return None if known is None else np.array(known, _dtypes.numpy_dtype(t.dtype))

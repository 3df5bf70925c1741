"""Choosing and converting elements: ``Select``/``SelectV2`` and ``where`` (TF1's and TF2's
broadcasting), ``Where`` (the coordinates of true elements), ``Cast`` and
``clip_by_value``."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op_output, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .op_util import (
    BOOL_TYPES,
    COMPLEX_TYPES,
    NUMERIC_OR_BOOL_TYPES,
    NUMERIC_TYPES,
    _ufunc_kernel,
    broadcast_shape,
    check_dtype,
    check_same_dtype,
    convert_all,
    convert_in_order,
    graph_of,
)


# -- selection and casting -------------------------------------------------------------------------
def _infer_select(op):
    cond, x, y = op.inputs
    check_dtype(cond.dtype, BOOL_TYPES, "condition of 'SelectV2'")
    check_same_dtype((x, y), ("x", "y"), op.type)
    return [(x.dtype, broadcast_shape(cond.shape, broadcast_shape(x.shape, y.shape)))]


def _select_native(op, constants):
    return ("({1} if {0} else {2})", "array")


define_op(
    "SelectV2",
    _infer_select,
    _ufunc_kernel(np.where),
    extra={"layout": "elementwise", "native": _select_native},
)


def _infer_select_v1(op):
    cond, x, y = op.inputs
    check_dtype(cond.dtype, BOOL_TYPES, "condition of 'Select'")
    check_same_dtype((x, y), ("t", "e"), op.type)
    data = x.shape.merge_with(y.shape)
    if cond.shape.ndims is None or data.ndims is None or cond.shape.ndims == 0:
        return [(x.dtype, data)]
    if cond.shape.ndims == 1 and data.ndims > 1:
        if not cond.shape.is_compatible_with(data[:1]):
            raise ValueError(
                f"A condition vector of shape {cond.shape} needs one element per row of the "
                f"data, of shape {data}"
            )
        return [(x.dtype, data)]
    return [(x.dtype, data.merge_with(cond.shape))]


def _select_v1(cond, x, y):
    if x.shape != y.shape:
        raise InvalidArgumentError(
            None, None, f"'then' and 'else' must have the same size, got {x.shape} and {y.shape}"
        )
    if cond.ndim == 1 and x.ndim > 1:
        if cond.shape[0] != x.shape[0]:
            raise InvalidArgumentError(
                None,
                None,
                f"Number of batches of 'then' must match size of 'cond', but saw: "
                f"{x.shape[0]} vs. {cond.shape[0]}",
            )
        cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
    elif cond.ndim and cond.shape != x.shape:
        raise InvalidArgumentError(
            None, None, f"'then' and 'cond' must have the same size, got {x.shape} and {cond.shape}"
        )
    return np.where(cond, x, y)


define_op(
    "Select",
    _infer_select_v1,
    _ufunc_kernel(_select_v1),
    extra={"layout": "elementwise", "native": _select_native},
)


def _infer_where(op):
    (cond,) = op.inputs
    check_dtype(cond.dtype, NUMERIC_OR_BOOL_TYPES, "condition of 'Where'")
    if cond.shape.ndims == 0:
        raise ValueError("where(condition) needs a condition of rank at least 1, got a scalar")
    return [(_dtypes.int64, TensorShape([None, cond.shape.ndims]))]


def _where_kernel(attrs):
    def where(cond):
        if np.ndim(cond) == 0:
            # A scalar has no coordinates to list (numpy would give one empty row).
            raise InvalidArgumentError(
                None, None, "where(condition) needs a condition of rank at least 1, got a scalar"
            )
        return np.argwhere(cond).astype(np.int64, copy=False)

    return where


define_op("Where", _infer_where, _where_kernel)


def where(condition, x=None, y=None, name: Optional[str] = None) -> Tensor:
    """``where(cond, x, y)`` picks from ``x`` where ``cond`` is true, else from ``y``;
    ``where(cond)`` gives the int64 coordinates of the true (non-zero) elements, one row each.

    The three-argument form is TF1's ``Select``, which does not broadcast: ``x`` and ``y`` have
    one shape; ``condition`` is a scalar, has that shape too, or is a vector that picks whole
    rows (``where([True, False], a, b)`` on 2x3 ``a``, ``b`` is ``[a[0], b[1]]``).  `where_v2`
    broadcasts all three.
    """
    if x is None and y is None:
        return apply_op_output("Where", (condition,), None, name or "Where")
    if x is None or y is None:
        raise ValueError("x and y must both be given, or both be None")
    graph = graph_of((condition, x, y))
    with graph.as_default(), graph.name_scope(name or "Select") as scope:
        condition = convert_to_tensor(condition, name="condition")
        x, y = convert_in_order((x, y), ("t", "e"))
        return apply_op_output("Select", (condition, x, y), None, scope)


def where_v2(condition, x=None, y=None, name: Optional[str] = None) -> Tensor:
    """``where`` with numpy broadcasting of all three operands (TensorFlow 2's ``where``): a
    condition vector lines up with the last dimension of the data."""
    if x is None and y is None:
        return apply_op_output("Where", (condition,), None, name or "Where")
    if x is None or y is None:
        raise ValueError("x and y must both be given, or both be None")
    graph = graph_of((condition, x, y))
    with graph.as_default(), graph.name_scope(name or "SelectV2") as scope:
        condition = convert_to_tensor(condition, name="condition")
        x, y = convert_in_order((x, y), ("x", "y"))
        return apply_op_output("SelectV2", (condition, x, y), None, scope)


def _infer_cast(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_OR_BOOL_TYPES | COMPLEX_TYPES, "Input of 'Cast'")
    return [(op.attrs["DstT"], x.shape)]


def _cast_kernel(attrs):
    np_dtype = _dtypes.numpy_dtype(attrs["DstT"])
    if np_dtype.kind != "c":

        def cast_dropping_imaginary(x):
            if x.dtype.kind == "c":  # as in TensorFlow, the imaginary part is dropped
                x = x.real
            return x.astype(np_dtype)

        return cast_dropping_imaginary
    return lambda x: x.astype(np_dtype)


def _cast_native(op, constants):
    """``astype`` in numba: numpy's conversion, except float to integer (numpy's result for NaN
    and out-of-range values is the machine's, which LLVM need not share)."""
    source = _dtypes.numpy_dtype(op.inputs[0].dtype)
    target = _dtypes.numpy_dtype(op.attrs["DstT"])
    if target == np.bool_:
        return (
            "{0}" if source == np.bool_ else f"np.not_equal({{0}}, np.{source.name}(0))"
        ), "like 0"
    if (source.kind == "f" and target.kind in "iu") or "c" in (source.kind, target.kind):
        return None
    return f"np.{target.name}({{0}})", "like 0"


define_op("Cast", _infer_cast, _cast_kernel, extra={"native": _cast_native})


def cast(x, dtype, name: Optional[str] = None) -> Tensor:
    """``x`` converted to ``dtype`` (floats to integers truncate toward zero).  A tensor that
    already has ``dtype`` is returned as it is, as in TensorFlow."""
    dtype = _dtypes.as_dtype(dtype)
    if isinstance(x, Tensor):
        if x.dtype is dtype:
            return x
        return apply_op_output("Cast", (x,), {"DstT": dtype}, name or "Cast")
    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "Cast") as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype is dtype:
            return x
        return apply_op_output("Cast", (x,), {"DstT": dtype}, scope)


def _infer_clip(op):
    t, low, high = op.inputs
    check_same_dtype((t, low, high), ("t", "clip_value_min", "clip_value_max"), op.type)
    check_dtype(t.dtype, NUMERIC_TYPES, "Input 't' of 'ClipByValue'")
    shape = broadcast_shape(t.shape, broadcast_shape(low.shape, high.shape))
    if not shape.is_compatible_with(t.shape):
        raise ValueError(
            f"clip values of shapes {low.shape} and {high.shape} would change the shape "
            f"{t.shape} of the clipped tensor"
        )
    return [(t.dtype, t.shape.merge_with(shape))]


def _clip(t, low, high):
    return np.maximum(np.minimum(t, high), low)


define_op("ClipByValue", _infer_clip, _ufunc_kernel(_clip))


def clip_by_value(t, clip_value_min, clip_value_max, name: Optional[str] = None) -> Tensor:
    """``t`` limited to ``[clip_value_min, clip_value_max]`` (bounds broadcast against ``t``).
    When ``min > max`` the result is ``min``, as in TensorFlow."""
    graph = graph_of((t, clip_value_min, clip_value_max))
    with graph.as_default(), graph.name_scope(name or "clip_by_value") as scope:
        tensors = convert_all(
            (t, clip_value_min, clip_value_max), ("t", "clip_value_min", "clip_value_max")
        )
        return apply_op_output("ClipByValue", tensors, None, scope)


__all__ = ["cast", "clip_by_value", "where", "where_v2"]

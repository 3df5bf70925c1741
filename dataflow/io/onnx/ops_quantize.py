"""ONNX's linear quantization ops: ``QuantizeLinear``, ``DequantizeLinear``, ``QLinearMatMul``,
``MatMulInteger``, ``QLinearConv`` and ``ConvInteger`` (``DynamicQuantizeLinear`` is built from
ONNX's function of them).

Role: the converters of the quantization family (see `converters` for the contract).  A
quantized value ``q`` stands for ``(q - zero_point) * scale``; quantizing rounds half to even and
saturates to the integer type's range.  Scales and zero points may be per tensor, per axis
(a vector along ``axis``) or per block of ``block_size`` elements along ``axis``.

Invariants: integer products are computed exactly, in float64 (integers up to 2**53), then
rescaled; the element types dataflow lacks (int4, float8, ...) are refused by name.
"""

from __future__ import annotations

import numpy as np

from ...framework import dtypes
from ...ops import array_ops, extra_math_ops, gather_ops, math_ops, selection_ops
from ...ops.constant_op import constant
from .converters import (
    WIDE_UNSIGNED,
    NodeContext,
    as_int64,
    converts,
    from_int64,
    normalize_axis,
    rank_of,
)
from .ops_nn import convolve
from .reader import dtype_of

_F64 = dtypes.float64


def _along_axis(ctx: NodeContext, parameter, x, axis: int, block_size: int):
    """A scale or zero point shaped to broadcast against ``x``: a scalar as it is, a vector
    along ``axis``, a blocked one repeated ``block_size`` times along ``axis``."""
    parameter_rank = parameter.shape.ndims
    if parameter_rank == 0 or (parameter_rank == 1 and parameter.shape.as_list()[0] == 1):
        return array_ops.reshape(parameter, [])  # per tensor: the axis plays no part
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, axis, rank)
    if block_size:
        length = array_ops.shape(x, out_type=dtypes.int64)[axis]
        blocks = math_ops.floordiv(
            array_ops.range(length, dtype=dtypes.int64), constant(block_size, dtype=dtypes.int64)
        )
        return gather_ops.gather(parameter, blocks, axis=axis)
    if parameter_rank == 1:
        return array_ops.reshape(parameter, [-1] + [1] * (rank - 1 - axis))
    return parameter


def _saturated(ctx: NodeContext, real, dtype):
    """``real`` (float64, already rounded) clamped to ``dtype``'s range and cast to it."""
    if not dtype.is_integer:
        raise ctx.error(f"quantizing to {dtype.name} is not supported")
    info = np.iinfo(dtype.as_numpy_dtype)
    clamped = math_ops.minimum(
        math_ops.maximum(real, constant(float(info.min), dtype=_F64)),
        constant(float(info.max), dtype=_F64),
    )
    integers = selection_ops.cast(clamped, dtypes.int64)
    if dtype in WIDE_UNSIGNED:
        return from_int64(integers, dtype)
    return selection_ops.cast(integers, dtype)


def _wide(tensor):
    """An integer or float tensor as float64 (unsigned types through int64)."""
    return selection_ops.cast(as_int64(tensor), _F64)


def _quantize(ctx: NodeContext, real, scale, zero_point, dtype):
    """``saturate(round_half_even(real / scale) + zero_point)`` as ``dtype``."""
    quotient = math_ops.truediv(real, scale)
    if real.dtype != _F64:  # divide in the input's precision, as the definition does
        quotient = selection_ops.cast(quotient, _F64)
    rounded = extra_math_ops.rint(quotient)
    if zero_point is not None:
        rounded = math_ops.add(rounded, _wide(zero_point))
    return _saturated(ctx, rounded, dtype)


@converts("QuantizeLinear")
def _quantize_linear(ctx: NodeContext):
    x, scale, zero_point = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    axis, block_size = ctx.attr("axis", 1), ctx.attr("block_size", 0)
    if ctx.attr("output_dtype", 0):
        dtype = dtype_of(ctx.attr("output_dtype"), ctx.where)
    elif zero_point is not None:
        dtype = zero_point.dtype
    else:
        dtype = dtypes.uint8
    scale = _along_axis(ctx, scale, x, axis, block_size)
    if zero_point is not None:
        zero_point = _along_axis(ctx, zero_point, x, axis, block_size)
    if scale.dtype != x.dtype:
        scale = selection_ops.cast(scale, x.dtype)
    return _quantize(ctx, x, scale, zero_point, dtype)


@converts("DequantizeLinear")
def _dequantize_linear(ctx: NodeContext):
    x, scale, zero_point = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    axis, block_size = ctx.attr("axis", 1), ctx.attr("block_size", 0)
    scale = _along_axis(ctx, scale, x, axis, block_size)
    real = _wide(x)
    if zero_point is not None:
        real = math_ops.subtract(real, _wide(_along_axis(ctx, zero_point, x, axis, block_size)))
    dtype = dtype_of(ctx.attr("output_dtype"), ctx.where) if ctx.attr("output_dtype", 0) else None
    dtype = dtype or scale.dtype
    return selection_ops.cast(math_ops.multiply(real, selection_ops.cast(scale, _F64)), dtype)


def _centered(tensor, zero_point):
    """``tensor - zero_point`` in float64 (exact for integers)."""
    value = _wide(tensor)
    if zero_point is None:
        return value
    return math_ops.subtract(value, _wide(zero_point))


def _row_zero_point(zero_point):
    """A's zero point, per row when it is a vector (broadcast along A's last axis)."""
    if zero_point is None or zero_point.shape.ndims in (0, None):
        return zero_point
    if zero_point.shape.as_list() == [1]:
        return array_ops.reshape(zero_point, [])
    return array_ops.expand_dims(zero_point, -1)


@converts("MatMulInteger")
def _matmul_integer(ctx: NodeContext):
    a, b = ctx.required_input(0), ctx.required_input(1)
    product = math_ops.matmul(
        _centered(a, _row_zero_point(ctx.input(2))), _centered(b, ctx.input(3))
    )
    return selection_ops.cast(product, dtypes.int32)


@converts("QLinearMatMul")
def _qlinear_matmul(ctx: NodeContext):
    a, a_scale, a_zero = ctx.required_input(0), ctx.required_input(1), ctx.required_input(2)
    b, b_scale, b_zero = ctx.required_input(3), ctx.required_input(4), ctx.required_input(5)
    y_scale, y_zero = ctx.required_input(6), ctx.required_input(7)
    product = math_ops.matmul(_centered(a, _row_zero_point(a_zero)), _centered(b, b_zero))
    # The scales in their own precision (float32 or float16), as the reference multiplies them.
    factor = math_ops.truediv(math_ops.multiply(a_scale, b_scale), y_scale)
    real = math_ops.multiply(product, selection_ops.cast(factor, _F64))
    rounded = math_ops.add(extra_math_ops.rint(real), _wide(y_zero))
    return _saturated(ctx, rounded, y_zero.dtype)


def _integer_convolution(ctx: NodeContext, x, x_zero, w, w_zero):
    """The exact integer convolution of ``x - x_zero`` by ``w - w_zero``, in float64; a
    filter's zero point may be one per output channel."""
    rank = rank_of(ctx, x)
    if w_zero is not None and w_zero.shape.ndims == 1 and w_zero.shape.as_list() != [1]:
        w_zero = array_ops.reshape(w_zero, [-1] + [1] * (rank - 1))
    elif w_zero is not None:
        w_zero = array_ops.reshape(w_zero, [])
    x_zero = None if x_zero is None else array_ops.reshape(x_zero, [])
    centered_w = _centered(w, w_zero)
    filters = array_ops.transpose(centered_w, list(range(2, rank)) + [1, 0])
    return convolve(ctx, _centered(x, x_zero), w, filters)


@converts("ConvInteger")
def _conv_integer(ctx: NodeContext):
    x, w = ctx.required_input(0), ctx.required_input(1)
    product = _integer_convolution(ctx, x, ctx.input(2), w, ctx.input(3))
    return selection_ops.cast(product, dtypes.int32)


@converts("QLinearConv")
def _qlinear_conv(ctx: NodeContext):
    x, x_scale, x_zero = ctx.required_input(0), ctx.required_input(1), ctx.required_input(2)
    w, w_scale, w_zero = ctx.required_input(3), ctx.required_input(4), ctx.required_input(5)
    y_scale, y_zero, bias = ctx.required_input(6), ctx.required_input(7), ctx.input(8)
    rank = rank_of(ctx, x)
    total = _integer_convolution(ctx, x, x_zero, w, w_zero)
    if bias is not None:  # int32, in units of x_scale * w_scale
        total = math_ops.add(total, array_ops.reshape(_wide(bias), [-1] + [1] * (rank - 2)))
    factor = math_ops.truediv(math_ops.multiply(x_scale, w_scale), y_scale)
    factor = selection_ops.cast(factor, _F64)
    if factor.shape.ndims == 1:  # per output channel
        factor = array_ops.reshape(factor, [-1] + [1] * (rank - 2))
    rounded = math_ops.add(extra_math_ops.rint(math_ops.multiply(total, factor)), _wide(y_zero))
    return _saturated(ctx, rounded, y_zero.dtype)

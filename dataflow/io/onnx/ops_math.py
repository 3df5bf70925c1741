"""ONNX's elementwise, reduction and matrix ops, built from dataflow's math ops.

Role: the converters of the arithmetic family (see `converters` for the contract).  ONNX and
dataflow broadcast the same way (numpy's rules), so binary ops map one to one; the differences
handled here are integer division (ONNX truncates), ``Mod``'s ``fmod``, ``Pow`` with exponents
of another type, reductions whose axes arrive as an input, and ``select_last_index``.
"""

from __future__ import annotations

from primitives.control_flow_ops import cond

from ...framework import dtypes
from ...ops import (
    array_ops,
    bitwise_ops,
    extra_math_ops,
    gather_ops,
    math_ops,
    matrix_ops,
    nn_ops,
    reduction_ops,
    selection_ops,
)
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

# ONNX op type -> the dataflow function of one argument it is.
_UNARY = {
    "Abs": math_ops.abs,
    "Neg": math_ops.negative,
    "Sqrt": math_ops.sqrt,
    "Exp": math_ops.exp,
    "Log": math_ops.log,
    "Sin": math_ops.sin,
    "Cos": math_ops.cos,
    "Tan": math_ops.tan,
    "Asin": extra_math_ops.asin,
    "Acos": extra_math_ops.acos,
    "Atan": extra_math_ops.atan,
    "Sinh": extra_math_ops.sinh,
    "Cosh": extra_math_ops.cosh,
    "Tanh": math_ops.tanh,
    "Asinh": extra_math_ops.asinh,
    "Acosh": extra_math_ops.acosh,
    "Atanh": extra_math_ops.atanh,
    "Ceil": math_ops.ceil,
    "Floor": math_ops.floor,
    "Round": extra_math_ops.round,
    "Erf": extra_math_ops.erf,
    "Sigmoid": math_ops.sigmoid,
    "Reciprocal": extra_math_ops.reciprocal,
    "Sign": math_ops.sign,
    "Not": math_ops.logical_not,
    "IsNaN": extra_math_ops.is_nan,
    "Relu": nn_ops.relu,
    "Softplus": nn_ops.softplus,
}


@converts(*_UNARY)
def _unary(ctx: NodeContext):
    return _UNARY[ctx.op_type](ctx.required_input(0))


@converts("BitwiseNot")
def _bitwise_not(ctx: NodeContext):
    x = ctx.required_input(0)
    return from_int64(bitwise_ops.invert(as_int64(x)), x.dtype)


# -- unsigned integers: computed as int64 (`converters.as_int64`); compared with uint64's sign
# bit flipped, which makes the signed order the unsigned one.
_INT64_SIGN_BIT = -(2**63)


def _ordered(x):
    """``x`` as a type whose signed order is ``x``'s order (uint64: the sign bit flipped)."""
    if x.dtype == dtypes.uint64:
        flip = constant(_INT64_SIGN_BIT, dtype=dtypes.int64)
        return bitwise_ops.bitwise_xor(as_int64(x), flip)
    return as_int64(x)


# ONNX op type -> the dataflow function of two broadcast arguments it is, and whether the
# result has the arguments' type (arithmetic) or is a comparison.
_BINARY = {
    "Add": (math_ops.add, "same bits"),
    "Sub": (math_ops.subtract, "same bits"),
    "Mul": (math_ops.multiply, "same bits"),
    "BitwiseAnd": (bitwise_ops.bitwise_and, "same bits"),
    "BitwiseOr": (bitwise_ops.bitwise_or, "same bits"),
    "BitwiseXor": (bitwise_ops.bitwise_xor, "same bits"),
    "Equal": (math_ops.equal, "order"),
    "Less": (math_ops.less, "order"),
    "Greater": (math_ops.greater, "order"),
    "LessOrEqual": (math_ops.less_equal, "order"),
    "GreaterOrEqual": (math_ops.greater_equal, "order"),
    "And": (math_ops.logical_and, "bool"),
    "Or": (math_ops.logical_or, "bool"),
    "Xor": (math_ops.logical_xor, "bool"),
}


@converts(*_BINARY)
def _binary(ctx: NodeContext):
    a, b = ctx.required_input(0), ctx.required_input(1)
    function, kind = _BINARY[ctx.op_type]
    if kind == "order":
        return function(_ordered(a), _ordered(b))
    if kind == "same bits":
        return from_int64(function(as_int64(a), as_int64(b)), a.dtype)
    return function(a, b)


@converts("Div")
def _div(ctx: NodeContext):
    a, b = ctx.required_input(0), ctx.required_input(1)
    if a.dtype == dtypes.uint64:
        raise ctx.error("uint64 division is not supported")
    if a.dtype.is_integer:
        # C's division, as ONNX defines it for integers
        return from_int64(extra_math_ops.truncatediv(as_int64(a), as_int64(b)), a.dtype)
    return math_ops.truediv(a, b)


@converts("Mod")
def _mod(ctx: NodeContext):
    a, b = ctx.required_input(0), ctx.required_input(1)
    if a.dtype == dtypes.uint64:
        raise ctx.error("uint64 remainders are not supported")
    if ctx.attr("fmod", 0):
        result = extra_math_ops.truncatemod(as_int64(a), as_int64(b))  # the dividend's sign
    else:
        result = extra_math_ops.floormod(as_int64(a), as_int64(b))  # the divisor's sign
    return from_int64(result, a.dtype)


@converts("Pow")
def _pow(ctx: NodeContext):
    base, exponent = ctx.required_input(0), ctx.required_input(1)
    if exponent.dtype != base.dtype:
        if base.dtype.is_integer and exponent.dtype.is_floating:
            result = math_ops.pow(selection_ops.cast(base, exponent.dtype), exponent)
            return selection_ops.cast(result, base.dtype)
        exponent = selection_ops.cast(exponent, base.dtype)
    return math_ops.pow(base, exponent)


@converts("BitShift")
def _bit_shift(ctx: NodeContext):
    x, amount = ctx.required_input(0), ctx.required_input(1)
    direction = ctx.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f"direction must be LEFT or RIGHT, got {direction!r}")
    if x.dtype == dtypes.uint64 and direction == "RIGHT":
        raise ctx.error("uint64 right shifts are not supported")
    width = x.dtype.size * 8
    # A shift by a negative amount or by the width or more fills the whole value: 0 (left),
    # or the sign bit (right), as ONNX defines it.
    signed_x, signed_amount = as_int64(x), as_int64(amount)
    zero = constant(0, dtype=signed_amount.dtype)
    top = constant(width - 1, dtype=signed_amount.dtype)
    out_of_range = math_ops.logical_or(
        math_ops.less(signed_amount, zero), math_ops.greater(signed_amount, top)
    )
    if direction == "LEFT":
        shifted = bitwise_ops.left_shift(signed_x, math_ops.minimum(signed_amount, top))
        shifted = selection_ops.where_v2(out_of_range, array_ops.zeros_like(shifted), shifted)
    else:
        # Shifting by width - 1 fills the value with its sign bit.
        tops = array_ops.fill(array_ops.shape(signed_amount), top)
        shifted = bitwise_ops.right_shift(
            signed_x, selection_ops.where_v2(out_of_range, tops, signed_amount)
        )
    return from_int64(shifted, x.dtype)


@converts("IsInf")
def _is_inf(ctx: NodeContext):
    x = ctx.required_input(0)
    positive, negative = ctx.attr("detect_positive", 1), ctx.attr("detect_negative", 1)
    infinite = extra_math_ops.is_inf(x)
    if positive and negative:
        return infinite
    zero = constant(0, dtype=x.dtype)
    if positive:
        return math_ops.logical_and(infinite, math_ops.greater(x, zero))
    if negative:
        return math_ops.logical_and(infinite, math_ops.less(x, zero))
    return math_ops.logical_and(infinite, math_ops.logical_not(infinite))


# ONNX's variadic ops: the dataflow function folding two of their broadcast arguments.
_VARIADIC = {"Max": math_ops.maximum, "Min": math_ops.minimum, "Sum": math_ops.add}


@converts("Max", "Min", "Sum", "Mean")
def _variadic(ctx: NodeContext):
    values = [t for t in ctx.inputs if t is not None]
    if not values:
        raise ctx.error("it needs at least one input")
    combine = _VARIADIC.get(ctx.op_type, math_ops.add)
    result = values[0]
    for value in values[1:]:
        if result.dtype in WIDE_UNSIGNED and ctx.op_type != "Sum":
            pick = math_ops.greater if ctx.op_type == "Max" else math_ops.less
            result = selection_ops.where_v2(pick(_ordered(result), _ordered(value)), result, value)
        elif result.dtype in WIDE_UNSIGNED:
            result = from_int64(combine(as_int64(result), as_int64(value)), result.dtype)
        else:
            result = combine(result, value)
    if ctx.op_type == "Mean":
        result = math_ops.truediv(result, constant(len(values), dtype=result.dtype))
    elif len(values) == 1:
        result = array_ops.identity(result)
    return result


@converts("Where")
def _where(ctx: NodeContext):
    return selection_ops.where_v2(
        ctx.required_input(0), ctx.required_input(1), ctx.required_input(2)
    )


@converts("Clip")
def _clip(ctx: NodeContext):
    x = ctx.required_input(0)
    low, high = ctx.input(1), ctx.input(2)
    if ctx.opset < 11:  # the bounds were attributes
        low = constant(ctx.attrs["min"], dtype=x.dtype) if "min" in ctx.attrs else None
        high = constant(ctx.attrs["max"], dtype=x.dtype) if "max" in ctx.attrs else None
    if low is not None:
        x = math_ops.maximum(x, low)
    if high is not None:
        x = math_ops.minimum(x, high)
    return array_ops.identity(x) if low is None and high is None else x


# -- reductions ------------------------------------------------------------------------------------


def _reduction(reduce, before=None, after=None, input_axes_since: int = 18):
    """The converter of a reduction: axes an attribute before opset ``input_axes_since`` and an
    input from it on (a constant, or a value computed at run time); no axes reduce all of them,
    unless ``noop_with_empty_axes``."""

    def convert(ctx: NodeContext):
        x = ctx.required_input(0)
        keepdims = bool(ctx.attr("keepdims", 1))
        value = before(x) if before is not None else x
        reducer = reduce
        if value.dtype == dtypes.bool:  # the maximum of bools is any, the minimum all
            reducer = _BOOL_REDUCTIONS.get(reduce)
            if reducer is None:
                raise ctx.error("this reduction does not take bools")
        if ctx.opset >= input_axes_since and ctx.input(1) is not None:
            axes_tensor = ctx.input(1)
            known = ctx.static(1)
            if known is None and axes_tensor.shape.num_elements() != 0:
                result = _reduce_over_run_time_axes(ctx, reducer, value, axes_tensor, keepdims)
                return after(result) if after is not None else result
            axes = [] if known is None else [int(a) for a in known.reshape(-1)]
        else:
            axes = list(ctx.attrs.get("axes", []))
        if not axes:
            if ctx.attr("noop_with_empty_axes", 0):
                return array_ops.identity(x)
            axes = None
        result = reducer(value, axis=axes, keepdims=keepdims)
        return after(result) if after is not None else result

    return convert


_BOOL_REDUCTIONS = {
    reduction_ops.reduce_max: reduction_ops.reduce_any,
    reduction_ops.reduce_min: reduction_ops.reduce_all,
}


def _reduce_over_run_time_axes(ctx: NodeContext, reduce, x, axes, keepdims: bool):
    """``reduce`` over axes known only at run time, for an input of known rank: a `cond` per
    axis reduces it (keeping it as one element) when it is among ``axes``; without
    ``keepdims`` the reduced axes are then reshaped away."""
    rank = rank_of(ctx, x)
    axes = selection_ops.cast(array_ops.reshape(axes, [-1]), dtypes.int64)
    rank_value = constant(rank, dtype=dtypes.int64)
    axes = extra_math_ops.floormod(axes, rank_value)  # negative axes count from the end
    positions = array_ops.range(rank_value, dtype=dtypes.int64)
    chosen = reduction_ops.reduce_any(
        math_ops.equal(array_ops.expand_dims(positions, 1), array_ops.expand_dims(axes, 0)),
        axis=1,
    )
    full_shape = array_ops.shape(x, out_type=dtypes.int64)
    for axis in range(rank):
        x = cond(
            chosen[axis],
            lambda x=x, axis=axis: reduce(x, axis=[axis], keepdims=True),
            lambda x=x: array_ops.identity(x),
        )
    if keepdims:
        return x
    kept = array_ops.reshape(selection_ops.where(math_ops.logical_not(chosen)), [-1])
    return array_ops.reshape(x, gather_ops.gather(full_shape, kept))


def _logsumexp(x, axis, keepdims):
    return extra_math_ops.reduce_logsumexp(x, axis=axis, keepdims=keepdims)


def _sum_of_squares(x):
    return math_ops.multiply(x, x)


# ONNX reduction -> (dataflow reduction, what is applied before, what after).
_REDUCTIONS = {
    "ReduceSum": (reduction_ops.reduce_sum, None, None, 13),
    "ReduceMean": (reduction_ops.reduce_mean, None, None, 18),
    "ReduceMax": (reduction_ops.reduce_max, None, None, 18),
    "ReduceMin": (reduction_ops.reduce_min, None, None, 18),
    "ReduceProd": (reduction_ops.reduce_prod, None, None, 18),
    "ReduceL1": (reduction_ops.reduce_sum, math_ops.abs, None, 18),
    "ReduceL2": (reduction_ops.reduce_sum, _sum_of_squares, math_ops.sqrt, 18),
    "ReduceSumSquare": (reduction_ops.reduce_sum, _sum_of_squares, None, 18),
    "ReduceLogSum": (reduction_ops.reduce_sum, None, math_ops.log, 18),
    "ReduceLogSumExp": (_logsumexp, None, None, 18),
}
for _op_type, (_reduce, _before, _after, _since) in _REDUCTIONS.items():
    converts(_op_type)(_reduction(_reduce, _before, _after, _since))


@converts("ArgMax", "ArgMin")
def _arg_extreme(ctx: NodeContext):
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, ctx.attr("axis", 0), rank)
    find = reduction_ops.argmax if ctx.op_type == "ArgMax" else reduction_ops.argmin
    if ctx.attr("select_last_index", 0):
        from ...ops.reverse_ops import reverse_v2

        length = array_ops.shape(x, out_type=dtypes.int64)[axis]
        found = find(reverse_v2(x, [axis]), axis=axis, output_type=dtypes.int64)
        index = math_ops.subtract(math_ops.subtract(length, 1), found)
    else:
        index = find(x, axis=axis, output_type=dtypes.int64)
    if ctx.attr("keepdims", 1):
        index = array_ops.expand_dims(index, axis)
    return index


@converts("CumSum", "CumProd")
def _cumulative(ctx: NodeContext):
    x = ctx.required_input(0)
    accumulate = reduction_ops.cumsum if ctx.op_type == "CumSum" else extra_math_ops.cumprod
    options = {
        "exclusive": bool(ctx.attr("exclusive", 0)),
        "reverse": bool(ctx.attr("reverse", 0)),
    }
    known = ctx.static(1)
    if known is not None:
        return accumulate(x, axis=int(known.reshape(-1)[0]), **options)
    # An axis known only at run time: the result along each axis, the one asked for chosen.
    rank = rank_of(ctx, x)
    axis = array_ops.reshape(selection_ops.cast(ctx.required_input(1), dtypes.int64), [])
    axis = extra_math_ops.floormod(axis, constant(rank, dtype=dtypes.int64))
    result = accumulate(x, axis=0, **options)
    for candidate in range(1, rank):
        chosen = math_ops.equal(axis, constant(candidate, dtype=dtypes.int64))
        result = selection_ops.where_v2(chosen, accumulate(x, axis=candidate, **options), result)
    return result


# -- matrices --------------------------------------------------------------------------------------


@converts("MatMul")
def _matmul(ctx: NodeContext):
    a, b = ctx.required_input(0), ctx.required_input(1)
    if a.shape.ndims is None or b.shape.ndims is None:
        return math_ops.matmul(a, b)  # taken to be matrices (or batches of them)
    a_vector, b_vector = a.shape.ndims == 1, b.shape.ndims == 1
    if a_vector:
        a = array_ops.expand_dims(a, 0)
    if b_vector:
        b = array_ops.expand_dims(b, 1)
    product = math_ops.matmul(a, b)
    if a_vector:
        product = array_ops.squeeze(product, axis=[-2])
    if b_vector:
        product = array_ops.squeeze(product, axis=[-1])
    return product


@converts("Gemm")
def _gemm(ctx: NodeContext):
    a, b, c = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    product = math_ops.matmul(
        a, b, transpose_a=bool(ctx.attr("transA", 0)), transpose_b=bool(ctx.attr("transB", 0))
    )
    alpha, beta = ctx.attr("alpha", 1.0), ctx.attr("beta", 1.0)
    if alpha != 1.0:
        product = math_ops.multiply(product, constant(alpha, dtype=product.dtype))
    if c is None:
        return product
    if beta != 1.0:
        c = math_ops.multiply(c, constant(beta, dtype=c.dtype))
    return math_ops.add(product, c)


@converts("Einsum")
def _einsum(ctx: NodeContext):
    equation = ctx.attr("equation").replace(" ", "")
    return matrix_ops.einsum(equation, *[t for t in ctx.inputs if t is not None])


@converts("Det")
def _det(ctx: NodeContext):
    return matrix_ops.matrix_determinant(ctx.required_input(0))

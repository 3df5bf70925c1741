"""Gradients of the ops of `math_ops`, and the helpers other gradient functions share
(`sum_to_shape_of`: a broadcast operand's gradient summed back to its shape).

Each gradient builds ops of the op library, so gradients of gradients can be taken.  This
module imports the op modules it builds with; none of them imports it."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.errors import InvalidArgumentError

# -- gradients -------------------------------------------------------------------------------------
# Each gradient builds ops of this library, so gradients of gradients can be taken.  Gradients of
# broadcasting ops are summed back to the shape of the input (`sum_to_shape_of`).
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, apply_op_output, define_op
from ..framework.tensor_conversion import convert_to_tensor
from .math_ops import (
    COMPLEX_TYPES,
    INDEX_TYPES,
    INEXACT_TYPES,
    add,
    cast,
    check_dtype,
    cos,
    cumsum,
    equal,
    floordiv,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    matmul,
    mod,
    multiply,
    negative,
    not_equal,
    pow,  # noqa: A004 - the op, as math_ops names it
    realdiv,
    reduce_any,
    reduce_sum,
    sign,
    sin,
    square,
    subtract,
    where,
    where_v2,
)


def _sum_to_shape_kernel(attrs):
    def sum_to_shape(x, shape):
        shape = tuple(int(d) for d in shape)
        lead = x.ndim - len(shape)
        if lead < 0:
            raise InvalidArgumentError(None, None, f"Cannot sum shape {x.shape} to {shape}")
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1
        )
        out = np.add.reduce(x, axis=axes, dtype=x.dtype, keepdims=True) if axes else x
        return out.reshape(shape)

    return sum_to_shape


def _infer_sum_to_shape(op):
    from .array_ops import _shape_from_vector

    x, shape = op.inputs
    check_dtype(shape.dtype, INDEX_TYPES, "SumToShape's shape")
    return [(x.dtype, _shape_from_vector(shape, "SumToShape's shape"))]


# ``SumToShape(x, shape)``: ``x`` summed over the dimensions along which ``shape`` was broadcast
# to ``x``'s shape (TensorFlow does this with BroadcastGradientArgs and a Sum over run-time axes).
define_op("SumToShape", _infer_sum_to_shape, _sum_to_shape_kernel)


@RegisterGradient("SumToShape")
def _sum_to_shape_grad(op, grad):
    from .array_ops import ones_like

    return multiply(ones_like(op.inputs[0]), grad), None


def sum_to_shape_of(grad: Tensor, x: Tensor) -> Tensor:
    """``grad`` (of the broadcast shape of an op's inputs) summed back to the shape of ``x``:
    over leading dimensions and dimensions where ``x`` has size 1.  Static when both shapes are
    fully known, else a ``SumToShape`` of ``shape(x)`` at run time."""
    from .array_ops import reshape, shape

    gs, xs = grad.shape, x.shape
    if gs.is_fully_defined() and xs.is_fully_defined():
        g_dims, x_dims = gs.as_list(), xs.as_list()
        if g_dims == x_dims:
            return grad
        lead = len(g_dims) - len(x_dims)
        axes = list(range(lead)) + [
            lead + i for i, d in enumerate(x_dims) if d == 1 and g_dims[lead + i] != 1
        ]
        summed = reduce_sum(grad, axes) if axes else grad
        return reshape(summed, x_dims)
    return apply_op("SumToShape", (grad, shape(x)), None, "SumToShape").outputs[0]


def _binary_grads(op, gx, gy):
    x, y = op.inputs
    return (
        None if gx is None else sum_to_shape_of(gx, x),
        None if gy is None else sum_to_shape_of(gy, y),
    )


def _zeros(t: Tensor) -> Tensor:
    from ..framework.gradient_registry import zeros_like_output

    return zeros_like_output(t)


@RegisterGradient("Add")
def _add_grad(op, grad):
    return _binary_grads(op, grad, grad)


@RegisterGradient("Sub")
def _sub_grad(op, grad):
    return _binary_grads(op, grad, negative(grad))


def _conj(t: Tensor) -> Tensor:
    """``t`` conjugated when complex: TensorFlow's gradients of complex products use the
    conjugates of the other operands."""
    if t.dtype in COMPLEX_TYPES:
        from .complex_ops import conj_if_complex

        return conj_if_complex(t)
    return t


@RegisterGradient("Mul")
def _mul_grad(op, grad):
    x, y = (_conj(t) for t in op.inputs)
    return _binary_grads(op, multiply(grad, y), multiply(x, grad))


@RegisterGradient("RealDiv")
def _real_div_grad(op, grad):
    x, y = (_conj(t) for t in op.inputs)
    return _binary_grads(op, realdiv(grad, y), negative(realdiv(multiply(grad, x), square(y))))


@RegisterGradient("FloorMod")
def _floor_mod_grad(op, grad):
    x, y = op.inputs
    return _binary_grads(op, grad, negative(multiply(grad, floordiv(x, y))))


@RegisterGradient("Pow")
def _pow_grad(op, grad):
    x, y = (_conj(t) for t in op.inputs)
    z = _conj(op.outputs[0])
    gx = multiply(grad, multiply(y, pow(x, subtract(y, 1))))
    # log(x) where it is defined (x > 0; x != 0 for complex x), else 0
    defined = not_equal(x, _zeros(x)) if x.dtype in COMPLEX_TYPES else greater(x, 0)
    safe_log = where(defined, log(where(defined, x, _zeros(x) + 1)), _zeros(x))
    gy = multiply(grad, multiply(z, safe_log))
    return _binary_grads(op, gx, gy)


def _select_grad_for(first_wins):
    def grad_fn(op, grad):
        x, y = op.inputs
        mask = first_wins(x, y)
        zeros = _zeros(grad)
        return _binary_grads(op, where(mask, grad, zeros), where(mask, zeros, grad))

    return grad_fn


RegisterGradient("Maximum")(_select_grad_for(greater_equal))
RegisterGradient("Minimum")(_select_grad_for(less_equal))


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    x, y = op.inputs
    d = multiply(multiply(grad, 2), subtract(x, y))
    return _binary_grads(op, d, negative(d))


for _type in (
    "Equal NotEqual Less LessEqual Greater GreaterEqual LogicalAnd LogicalOr LogicalXor "
    "LogicalNot FloorDiv ArgMax ArgMin Any All Where Floor Ceil"
).split():
    NotDifferentiable(_type)
NotDifferentiable("BatchMatMulV3")  # only (u)int8 matrices into int32 here: integers


@RegisterGradient("Neg")
def _neg_grad(op, grad):
    return negative(grad)


@RegisterGradient("Abs")
def _abs_grad(op, grad):
    return multiply(grad, sign(op.inputs[0]))


@RegisterGradient("Sign")
def _sign_grad(op, grad):
    return _zeros(op.inputs[0])


@RegisterGradient("Square")
def _square_grad(op, grad):
    return multiply(grad, multiply(_conj(op.inputs[0]), 2))


@RegisterGradient("Sqrt")
def _sqrt_grad(op, grad):
    return realdiv(multiply(grad, 0.5), _conj(op.outputs[0]))


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op, grad):
    y = _conj(op.outputs[0])
    return multiply(multiply(grad, -0.5), multiply(y, square(y)))


@RegisterGradient("Exp")
def _exp_grad(op, grad):
    return multiply(grad, _conj(op.outputs[0]))


@RegisterGradient("Log")
def _log_grad(op, grad):
    return realdiv(grad, _conj(op.inputs[0]))


@RegisterGradient("Log1p")
def _log1p_grad(op, grad):
    return realdiv(grad, _conj(add(op.inputs[0], 1)))


@RegisterGradient("Sin")
def _sin_grad(op, grad):
    return multiply(grad, _conj(cos(op.inputs[0])))


@RegisterGradient("Cos")
def _cos_grad(op, grad):
    return negative(multiply(grad, _conj(sin(op.inputs[0]))))


@RegisterGradient("Tan")
def _tan_grad(op, grad):
    y = op.outputs[0]
    return multiply(grad, _conj(add(square(y), 1)))


@RegisterGradient("Tanh")
def _tanh_grad(op, grad):
    y = op.outputs[0]
    return multiply(grad, _conj(1 - square(y)))


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op, grad):
    y = op.outputs[0]
    return multiply(grad, multiply(y, 1 - y))


@RegisterGradient("SelectV2")
def _select_grad(op, grad):
    cond, x, y = op.inputs
    zeros = _zeros(grad)
    return (
        None,
        sum_to_shape_of(where_v2(cond, grad, zeros), x),
        sum_to_shape_of(where_v2(cond, zeros, grad), y),
    )


@RegisterGradient("Select")
def _select_v1_grad(op, grad):
    cond, x, y = op.inputs
    zeros = _zeros(grad)
    return (
        None,
        sum_to_shape_of(where(cond, grad, zeros), x),
        sum_to_shape_of(where(cond, zeros, grad), y),
    )


@RegisterGradient("Cast")
def _cast_grad(op, grad):
    source = op.inputs[0].dtype
    if source in INEXACT_TYPES and op.attrs["DstT"] in INEXACT_TYPES:
        return cast(grad, source)
    return None


@RegisterGradient("ClipByValue")
def _clip_grad(op, grad):
    t, low, high = op.inputs
    below, above = less(t, low), greater(t, high)
    zeros = _zeros(grad)
    return (
        where(logical_or(below, above), zeros, grad),
        sum_to_shape_of(where(below, grad, zeros), low),
        sum_to_shape_of(where(logical_and(above, logical_not(below)), grad, zeros), high),
    )


@RegisterGradient("MatMul")
def _matmul_grad(op, grad):
    a, b = (_conj(t) for t in op.inputs)
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)
    if not ta and tb:
        return matmul(grad, b), matmul(grad, a, transpose_a=True)
    if ta and not tb:
        return matmul(b, grad, transpose_b=True), matmul(a, grad)
    return (
        matmul(b, grad, transpose_a=True, transpose_b=True),
        matmul(grad, a, transpose_a=True, transpose_b=True),
    )


@RegisterGradient("BatchMatMulV2")
def _batch_matmul_grad(op, grad):
    ga, gb = _matmul_grad(op, grad)
    return _binary_grads(op, ga, gb)


@RegisterGradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


def _reduced_axes(op) -> Optional[list]:
    """The reduced axes of a reduction op, normalized and sorted (all axes for ``None``); None
    when they depend on the rank of the input, which is unknown (negative axes, or all)."""
    rank = op.inputs[0].shape.ndims
    axis = op.attrs["axis"]
    if rank is None:
        return None if axis is None or any(a < 0 for a in axis) else sorted(axis)
    if axis is None:
        return list(range(rank))
    return sorted(a % rank for a in axis)


def _kept_shape(op) -> Tensor:
    """The shape of a reduction's result with the reduced axes kept as size 1, computed at run
    time: the input's shape, with 1 at the axes normalized against the input's run-time rank
    (``axis mod rank``)."""
    from .array_ops import expand_dims, ones_like, shape, size
    from .array_ops import range as _range

    x_shape = shape(op.inputs[0])
    rank = size(x_shape)
    if op.attrs["axis"] is None:
        return ones_like(x_shape)
    axes = mod(convert_to_tensor(np.array(op.attrs["axis"], np.int32)), rank)
    reduced = reduce_any(equal(expand_dims(_range(rank), 1), axes), axis=1)
    return where_v2(reduced, ones_like(x_shape), x_shape)


def _keepdims_grad(op, grad: Tensor) -> Tensor:
    """The gradient of a reduction with the reduced axes kept as size 1 (broadcastable)."""
    from .array_ops import expand_dims, reshape

    if op.attrs["keepdims"]:
        return grad
    if op.attrs["axis"] is None and grad.shape.ndims == 0:
        return grad
    axes = _reduced_axes(op)
    if axes is None:
        return reshape(grad, _kept_shape(op))
    for a in axes:
        grad = expand_dims(grad, a)
    return grad


def _broadcast_to_input(op, grad: Tensor) -> Tensor:
    from .array_ops import ones_like

    return multiply(_keepdims_grad(op, grad), ones_like(op.inputs[0]))


@RegisterGradient("Sum")
def _sum_grad(op, grad):
    return _broadcast_to_input(op, grad)


@RegisterGradient("Mean")
def _mean_grad(op, grad):
    from .array_ops import size

    x, y = op.inputs[0], op.outputs[0]
    count = realdiv(cast(size(x), grad.dtype), cast(size(y), grad.dtype))
    return realdiv(_broadcast_to_input(op, grad), count)


def _extremum_grad(op, grad):
    x = op.inputs[0]
    y = _keepdims_grad(op, op.outputs[0])
    chosen = cast(equal(y, x), grad.dtype)
    attrs = {"axis": op.attrs["axis"], "keepdims": True}
    count = apply_op_output("Sum", (chosen,), attrs, "count")
    return multiply(realdiv(chosen, count), _keepdims_grad(op, grad))


RegisterGradient("Max")(_extremum_grad)
RegisterGradient("Min")(_extremum_grad)


@RegisterGradient("Prod")
def _prod_grad(op, grad):
    # The product of the other elements of each group, without dividing by a zero: where an
    # element is 0, it is the product of the non-zero elements if that is the group's only
    # zero, else 0; elsewhere it is the product divided by the element.
    from .array_ops import ones_like

    x = op.inputs[0]
    attrs = {"axis": op.attrs["axis"], "keepdims": True}
    is_zero = equal(x, _zeros(x))
    non_zero = where(is_zero, ones_like(x), x)
    product_non_zero = apply_op_output("Prod", (non_zero,), attrs, "product_non_zero")
    zero_count = apply_op("Sum", (cast(is_zero, x.dtype),), attrs, "zero_count").outputs[0]
    product = _keepdims_grad(op, op.outputs[0])
    others = where_v2(
        is_zero,
        multiply(cast(equal(zero_count, 1), x.dtype), product_non_zero),
        realdiv(product, non_zero),
    )
    return multiply(_conj(others), _keepdims_grad(op, grad))


@RegisterGradient("Cumsum")
def _cumsum_grad(op, grad):
    return cumsum(
        grad, op.attrs["axis"], exclusive=op.attrs["exclusive"], reverse=not op.attrs["reverse"]
    )

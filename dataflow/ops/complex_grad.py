"""Gradients of the ops of `complex_ops`."""

from __future__ import annotations

from ..framework.gradient_registry import RegisterGradient
from .complex_ops import complex, conj, imag, real  # noqa: A004 - the op
from .math_grad import sum_to_shape_of
from .math_ops import multiply, negative


# -- gradients -------------------------------------------------------------------------------------
@RegisterGradient("Complex")
def _complex_grad(op, grad):
    re, im = op.inputs
    return sum_to_shape_of(real(grad), re), sum_to_shape_of(imag(grad), im)


@RegisterGradient("Real")
def _real_grad(op, grad):
    from .array_ops import zeros_like

    return complex(grad, zeros_like(grad))


@RegisterGradient("Imag")
def _imag_grad(op, grad):
    from .array_ops import zeros_like

    return complex(zeros_like(grad), grad)


@RegisterGradient("Conj")
def _conj_grad(op, grad):
    return conj(grad)


@RegisterGradient("Angle")
def _angle_grad(op, grad):
    # d angle / dz, in TensorFlow's convention: -grad / (Im(z) + i Re(z)), computed as
    # TensorFlow does (-grad times the reciprocal), so that the bits and signs agree.
    from .array_ops import zeros_like
    from .extra_math_ops import reciprocal

    x = op.inputs[0]
    z = reciprocal(complex(imag(x), real(x)))
    return multiply(negative(complex(grad, zeros_like(grad))), z)


@RegisterGradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    # grad * z / |z|, and 0 where z is 0 (TensorFlow's div_no_nan).
    from .array_ops import zeros_like
    from .math_ops import equal, realdiv, where_v2

    x, y = op.inputs[0], op.outputs[0]
    scaled = multiply(complex(grad, zeros_like(grad)), x)
    is_zero = equal(y, zeros_like(y))
    safe = complex(where_v2(is_zero, zeros_like(y) + 1, y), zeros_like(y))
    return where_v2(is_zero, zeros_like(x), realdiv(scaled, safe))

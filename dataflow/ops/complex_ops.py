"""Complex numbers: building them (``complex``), taking them apart (``real``, ``imag``,
``angle``, ``abs``), conjugating them (``conj``) and casting to them (``to_complex64``).

As in TensorFlow, ``real``, ``imag``, ``angle`` and ``conj`` also take real tensors: ``real``
and ``conj`` return the tensor itself, ``imag`` zeros and ``angle`` 0 or pi by the sign.

The gradients follow TensorFlow's convention for complex values: the gradient of a real loss
with respect to ``z`` is ``dL/dRe(z) + i dL/dIm(z)`` (the conjugate of the Wirtinger
derivative, times 2), so that the gradient of a linear map ``A`` is ``A^H`` applied to the
incoming gradient.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op_output, define_op
from ..framework.tensor_conversion import convert_to_tensor
from . import complex_arithmetic as _complex
from .math_ops import (
    COMPLEX_TYPES,
    broadcast_shape,
    cast,
    check_dtype,
    check_same_dtype,
    graph_of,
    multiply,
    register_complex_sign,
)

__all__ = [
    "angle",
    "complex",
    "conj",
    "imag",
    "real",
    "to_complex64",
    "to_complex128",
]

_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}


# -- ops -------------------------------------------------------------------------------------------
def _infer_complex(op):
    re, im = op.inputs
    check_same_dtype((re, im), ("real", "imag"), op.type)
    check_dtype(re.dtype, frozenset(_COMPLEX_OF), "Input 'real' of 'Complex'")
    return [(_COMPLEX_OF[re.dtype], broadcast_shape(re.shape, im.shape))]


def _make_complex(re, im):
    # complex64 from float32 parts, complex128 from float64 ones
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), np.result_type(re, 1j))
    out.real = re
    out.imag = im
    return out


define_op("Complex", _infer_complex, lambda attrs: _make_complex)


def _infer_part(op):
    (x,) = op.inputs
    check_dtype(x.dtype, COMPLEX_TYPES, f"Input 'input' of '{op.type}'")
    return [(x.dtype.real_dtype, x.shape)]


define_op("Real", _infer_part, lambda attrs: lambda x: np.ascontiguousarray(x.real))
define_op("Imag", _infer_part, lambda attrs: lambda x: np.ascontiguousarray(x.imag))
# The angle and the modulus of TensorFlow's kernels (the C library's atan2f/atan2 and
# hypotf/hypot), bit for bit: `complex_arithmetic`.
define_op("Angle", _infer_part, lambda attrs: _complex.argument)
define_op("ComplexAbs", _infer_part, lambda attrs: _complex.modulus)


def _infer_conj(op):
    (x,) = op.inputs
    check_dtype(x.dtype, COMPLEX_TYPES, "Input 'input' of 'Conj'")
    return [(x.dtype, x.shape)]


define_op("Conj", _infer_conj, lambda attrs: np.conjugate, extra={"ufunc": np.conjugate})


# -- functions -------------------------------------------------------------------------------------
def complex(real, imag, name: Optional[str] = None) -> Tensor:  # noqa: A001 - tf.complex
    """The complex tensor ``real + i * imag`` (broadcast together): complex64 from two float32
    tensors, complex128 from two float64 ones; other or differing dtypes are a ``TypeError``."""
    graph = graph_of((real, imag))
    with graph.as_default(), graph.name_scope(name or "Complex") as scope:
        real = convert_to_tensor(real, name="real")
        imag = convert_to_tensor(imag, name="imag")
        out = _COMPLEX_OF.get(real.dtype)
        if out is None or imag.dtype is not real.dtype:
            raise TypeError(
                f"The `real` and `imag` components have incorrect types: {real.dtype.name} "
                f"{imag.dtype.name}. They must be consistent, and one of [tf.float32, "
                "tf.float64]"
            )
        return apply_op_output("Complex", (real, imag), None, scope)


def _real_input(x, name: str) -> Tensor:
    return x if isinstance(x, Tensor) else convert_to_tensor(x, name=name)


def real(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - tf.math.real
    """The real part of each element (float32 for complex64, float64 for complex128); a real
    tensor is returned as it is."""
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or "Real") as scope:
        x = _real_input(input, "input")
        if x.dtype.is_complex:
            return apply_op_output("Real", (x,), None, scope)
        return x


def imag(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - tf.math.imag
    """The imaginary part of each element; zeros for a real tensor."""
    from .array_ops import zeros_like

    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or "Imag") as scope:
        x = _real_input(input, "input")
        if x.dtype.is_complex:
            return apply_op_output("Imag", (x,), None, scope)
        return zeros_like(x)


def angle(input, name: Optional[str] = None) -> Tensor:  # noqa: A002 - tf.math.angle
    """The argument of each element, in ``(-pi, pi]``; for a real tensor pi where it is
    negative and 0 elsewhere."""
    from .array_ops import ones_like, zeros_like
    from .math_ops import less, where_v2

    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or "Angle") as scope:
        x = _real_input(input, "input")
        if x.dtype.is_complex:
            return apply_op_output("Angle", (x,), None, scope)
        return where_v2(less(x, 0), multiply(ones_like(x), np.pi), zeros_like(x))


def conj(x, name: Optional[str] = None) -> Tensor:
    """The complex conjugate of each element; a real tensor is returned as it is, a tensor that
    is not numeric is a ``TypeError``."""
    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "Conj") as scope:
        t = _real_input(x, "x")
        if t.dtype.is_complex:
            return apply_op_output("Conj", (t,), None, scope)
        if t.dtype.is_numeric:
            return t
        raise TypeError(f"Expected numeric or variant tensor, got dtype {t.dtype!r}")


def conj_if_complex(t: Tensor) -> Tensor:
    """``conj(t)`` for a complex tensor, ``t`` itself otherwise (for gradient functions)."""
    return apply_op_output("Conj", (t,), None, "Conj") if t.dtype.is_complex else t


def complex_abs(x: Tensor, name: Optional[str] = None) -> Tensor:
    """``|x|`` of a complex tensor, as a real tensor (TensorFlow's ``ComplexAbs``)."""
    return apply_op_output("ComplexAbs", (x,), None, name or "ComplexAbs")


def complex_sign(x: Tensor, name: Optional[str] = None) -> Tensor:
    """``x / |x|`` of a complex tensor, 0 where ``x`` is 0 (TensorFlow's ``sign`` of complex
    numbers, a ``div_no_nan``)."""
    from .array_ops import ones_like, zeros_like
    from .math_ops import equal, realdiv, where_v2

    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "Sign"):
        magnitude = complex_abs(x)
        is_zero = equal(magnitude, zeros_like(magnitude))
        safe = where_v2(is_zero, ones_like(magnitude), magnitude)
        scaled = realdiv(x, complex(safe, zeros_like(safe)))
        return where_v2(is_zero, zeros_like(x), scaled)


def to_complex64(x, name: str = "ToComplex64") -> Tensor:
    """``x`` cast to complex64 (TF1's ``to_complex64``)."""
    return cast(x, _dtypes.complex64, name=name)


def to_complex128(x, name: str = "ToComplex128") -> Tensor:
    """``x`` cast to complex128 (TF1's ``to_complex128``)."""
    return cast(x, _dtypes.complex128, name=name)


register_complex_sign(complex_sign)

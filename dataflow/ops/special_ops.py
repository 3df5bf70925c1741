"""``df.math.special``: TensorFlow's special functions (``tf.math.special``): Bessel functions,
Dawson's integral, the exponential integral, Fresnel integrals, Spence's function; and the
incomplete gamma and beta functions and the inverse error functions of ``tf.math``.

The values come from ``scipy.special`` (the optional extra ``special``: Cephes' algorithms, the
ones TensorFlow's kernels port), computed in float64 and rounded to the input's dtype;
``bessel_i0`` needs only numpy.  Gradients are TensorFlow's: closed forms in these ops, and for
``igamma``'s ``a`` a derivative of the regularized gamma function taken numerically
(``IgammaGradA``, a 4-point central difference, accurate to about 1e-10 relative).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.gradient_registry import RegisterGradient
from ..framework.graph import Tensor, _user_location, graph_to_build_in, name_scope
from ..framework.op_registry import apply_op_output, define_op
from ..framework.tensor_conversion import convert_to_tensor
from . import array_ops as _a
from . import math_grad as _mg
from . import math_ops as _m
from .extra_math_ops import lgamma, reciprocal, xlog1py, xlogy
from .math_ops import (
    FLOAT_TYPES,
    _infer_unary,
    broadcast_shape,
    check_dtype,
    check_same_dtype,
    unary_op,
)

__all__ = [
    "bessel_i0",
    "bessel_i0e",
    "bessel_i1",
    "bessel_i1e",
    "bessel_j0",
    "bessel_j1",
    "bessel_k0",
    "bessel_k0e",
    "bessel_k1",
    "bessel_k1e",
    "bessel_y0",
    "bessel_y1",
    "dawsn",
    "expint",
    "fresnel_cos",
    "fresnel_sin",
    "spence",
]

_GAMMA_TYPES = frozenset({_dtypes.float32, _dtypes.float64})


def _scipy_special(function: Optional[str] = None):
    """``scipy.special``, or an ImportError naming the extra that installs it."""
    try:
        import scipy.special
    except ImportError:
        where = f"{function} at {_user_location()}" if function else "this special function"
        raise ImportError(
            f"{where} needs scipy: install dataflow's 'special' extra "
            "(pip install 'dataflow[special]')"
        ) from None
    return scipy.special


def _float64_kernel(fn_of_special):
    """A kernel applying ``fn_of_special(scipy.special)`` to its inputs in float64, giving the
    first input's dtype."""

    def kernel(attrs):
        fn = fn_of_special(_scipy_special())

        def run(*inputs):
            with np.errstate(all="ignore"):
                out = fn(*(np.asarray(x, np.float64) for x in inputs))
            return np.asarray(out).astype(inputs[0].dtype)

        return run

    return kernel


def _negative_gives(fn, value: float):
    """``fn`` with ``value`` for x < 0, as TensorFlow's kernels (scipy's differ there)."""
    return lambda x: np.where(x < 0, value, fn(x))


_UNARY = {
    # op type: (function name, scipy.special's function of the module)
    "BesselI0": ("bessel_i0", None),
    "BesselI0e": ("bessel_i0e", lambda s: s.i0e),
    "BesselI1": ("bessel_i1", lambda s: s.i1),
    "BesselI1e": ("bessel_i1e", lambda s: s.i1e),
    "BesselJ0": ("bessel_j0", lambda s: s.j0),
    "BesselJ1": ("bessel_j1", lambda s: s.j1),
    "BesselK0": ("bessel_k0", lambda s: _negative_gives(s.k0, np.inf)),
    "BesselK0e": ("bessel_k0e", lambda s: _negative_gives(s.k0e, np.inf)),
    "BesselK1": ("bessel_k1", lambda s: _negative_gives(s.k1, np.inf)),
    "BesselK1e": ("bessel_k1e", lambda s: _negative_gives(s.k1e, np.inf)),
    "BesselY0": ("bessel_y0", lambda s: _negative_gives(s.y0, -np.inf)),
    "BesselY1": ("bessel_y1", lambda s: _negative_gives(s.y1, -np.inf)),
    "Dawsn": ("dawsn", lambda s: s.dawsn),
    "Expint": ("expint", lambda s: _negative_gives(s.expi, np.nan)),
    "FresnelCos": ("fresnel_cos", lambda s: lambda x: s.fresnel(x)[1]),
    "FresnelSin": ("fresnel_sin", lambda s: lambda x: s.fresnel(x)[0]),
    "Spence": ("spence", lambda s: s.spence),
    "Erfinv": ("erfinv", lambda s: s.erfinv),
    "Ndtri": ("ndtri", lambda s: s.ndtri),
}


def _i0_kernel(attrs):
    def run(x):
        return np.i0(np.asarray(x, np.float64)).astype(x.dtype)

    return run


for _type, (_function, _fn) in _UNARY.items():
    define_op(
        _type,
        _infer_unary(FLOAT_TYPES),
        _i0_kernel if _fn is None else _float64_kernel(_fn),
    )


def _unary(op_type: str, x, name: Optional[str]) -> Tensor:
    function = _UNARY[op_type][0]
    if _UNARY[op_type][1] is not None:
        _scipy_special(function)
    return unary_op(op_type, x, name or op_type)


def bessel_i0(x, name: Optional[str] = None) -> Tensor:
    """The modified Bessel function of the first kind of order 0, ``I0(x)``."""
    return _unary("BesselI0", x, name)


def bessel_i0e(x, name: Optional[str] = None) -> Tensor:
    """``exp(-|x|) I0(x)``, which stays finite for large ``|x|``."""
    return _unary("BesselI0e", x, name)


def bessel_i1(x, name: Optional[str] = None) -> Tensor:
    """The modified Bessel function of the first kind of order 1, ``I1(x)``."""
    return _unary("BesselI1", x, name)


def bessel_i1e(x, name: Optional[str] = None) -> Tensor:
    """``exp(-|x|) I1(x)``."""
    return _unary("BesselI1e", x, name)


def bessel_j0(x, name: Optional[str] = None) -> Tensor:
    """The Bessel function of the first kind of order 0, ``J0(x)``."""
    return _unary("BesselJ0", x, name)


def bessel_j1(x, name: Optional[str] = None) -> Tensor:
    """The Bessel function of the first kind of order 1, ``J1(x)``."""
    return _unary("BesselJ1", x, name)


def bessel_k0(x, name: Optional[str] = None) -> Tensor:
    """The modified Bessel function of the second kind of order 0, ``K0(x)`` (inf at x <= 0)."""
    return _unary("BesselK0", x, name)


def bessel_k0e(x, name: Optional[str] = None) -> Tensor:
    """``exp(x) K0(x)``."""
    return _unary("BesselK0e", x, name)


def bessel_k1(x, name: Optional[str] = None) -> Tensor:
    """The modified Bessel function of the second kind of order 1, ``K1(x)`` (inf at x <= 0)."""
    return _unary("BesselK1", x, name)


def bessel_k1e(x, name: Optional[str] = None) -> Tensor:
    """``exp(x) K1(x)``."""
    return _unary("BesselK1e", x, name)


def bessel_y0(x, name: Optional[str] = None) -> Tensor:
    """The Bessel function of the second kind of order 0, ``Y0(x)`` (-inf at x <= 0)."""
    return _unary("BesselY0", x, name)


def bessel_y1(x, name: Optional[str] = None) -> Tensor:
    """The Bessel function of the second kind of order 1, ``Y1(x)`` (-inf at x <= 0)."""
    return _unary("BesselY1", x, name)


def dawsn(x, name: Optional[str] = None) -> Tensor:
    """Dawson's integral ``exp(-x^2) * integral_0^x exp(t^2) dt``."""
    return _unary("Dawsn", x, name)


def expint(x, name: Optional[str] = None) -> Tensor:
    """The exponential integral ``Ei(x)`` (NaN for x < 0, -inf at 0)."""
    return _unary("Expint", x, name)


def fresnel_cos(x, name: Optional[str] = None) -> Tensor:
    """The Fresnel cosine integral ``integral_0^x cos(pi t^2 / 2) dt``."""
    return _unary("FresnelCos", x, name)


def fresnel_sin(x, name: Optional[str] = None) -> Tensor:
    """The Fresnel sine integral ``integral_0^x sin(pi t^2 / 2) dt``."""
    return _unary("FresnelSin", x, name)


def spence(x, name: Optional[str] = None) -> Tensor:
    """Spence's function ``integral_1^x log(t) / (1 - t) dt`` (NaN for x < 0)."""
    return _unary("Spence", x, name)


def erfinv(x, name: Optional[str] = None) -> Tensor:
    """The inverse of ``erf``: +-inf at +-1, NaN outside [-1, 1]."""
    return _unary("Erfinv", x, name)


def ndtri(x, name: Optional[str] = None) -> Tensor:
    """The inverse of the standard normal distribution function: -inf at 0, inf at 1, NaN
    outside [0, 1]."""
    return _unary("Ndtri", x, name)


def erfcinv(x, name: Optional[str] = None) -> Tensor:
    """The inverse of ``erfc`` (x in [0, 2]), as TensorFlow: ``-ndtri(x / 2) / sqrt(2)``."""
    x = convert_to_tensor(x, name="x")
    with graph_to_build_in(x.graph).as_default(), name_scope(name or "erfcinv"):
        return _m.multiply(_m.negative(ndtri(_m.multiply(x, 0.5))), math.sqrt(0.5))


# -- the incomplete gamma and beta functions -------------------------------------------------------
def _infer_same_float(*names):
    def infer(op):
        check_same_dtype(op.inputs, names, op.type)
        check_dtype(op.inputs[0].dtype, _GAMMA_TYPES, f"Input '{names[0]}' of '{op.type}'")
        shape = op.inputs[0].shape
        for other in op.inputs[1:]:
            shape = broadcast_shape(shape, other.shape)
        return [(op.inputs[0].dtype, shape)]

    return infer


def _igamma(special):
    def igamma(a, x):
        # TensorFlow: 0 at x == 0, NaN for x < 0 or a <= 0 (scipy gives 1 at a == 0).
        out = special.gammainc(a, x)
        return np.where((a <= 0) | (x < 0), np.nan, np.where(x == 0, 0.0, out))

    return igamma


def _igammac(special):
    def igammac(a, x):
        out = special.gammaincc(a, x)
        return np.where((a <= 0) | (x < 0), np.nan, np.where(x == 0, 1.0, out))

    return igammac


def _igamma_grad_a(special):
    """d/da of the regularized lower incomplete gamma function: a 4-point central difference
    with a step of a / 1000 (error O(h^4) plus rounding of about 1e-13 relative)."""

    def igamma_grad_a(a, x):
        a, x = np.broadcast_arrays(a, x)
        h = a * 1e-3
        f = special.gammainc
        out = (f(a - 2 * h, x) - 8 * f(a - h, x) + 8 * f(a + h, x) - f(a + 2 * h, x)) / (12 * h)
        out = np.where((x == 0) | np.isposinf(x), 0.0, out)
        return np.where((a <= 0) | (x < 0) | np.isnan(a) | np.isnan(x), np.nan, out)

    return igamma_grad_a


def _betainc(special):
    def betainc(a, b, x):
        # TensorFlow: NaN unless a > 0, b > 0 and 0 <= x <= 1.
        out = special.betainc(a, b, x)
        return np.where((a <= 0) | (b <= 0) | (x < 0) | (x > 1), np.nan, out)

    return betainc


define_op("Igamma", _infer_same_float("a", "x"), _float64_kernel(_igamma))
define_op("Igammac", _infer_same_float("a", "x"), _float64_kernel(_igammac))
define_op("IgammaGradA", _infer_same_float("a", "x"), _float64_kernel(_igamma_grad_a))
define_op("Betainc", _infer_same_float("a", "b", "x"), _float64_kernel(_betainc))


def _apply(op_type: str, function: str, inputs: dict, name: Optional[str]) -> Tensor:
    _scipy_special(function)
    # Python numbers take the dtype of the first tensor operand, as TensorFlow converts them.
    dtype = next((v.dtype for v in inputs.values() if isinstance(v, Tensor)), None)
    tensors = [
        value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=dtype, name=key)
        for key, value in inputs.items()
    ]
    return apply_op_output(op_type, tensors, None, name or op_type)


def igamma(a, x, name: Optional[str] = None) -> Tensor:
    """The regularized lower incomplete gamma function ``P(a, x)``; NaN for ``a <= 0`` or
    ``x < 0``."""
    return _apply("Igamma", "igamma", {"a": a, "x": x}, name)


def igammac(a, x, name: Optional[str] = None) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    return _apply("Igammac", "igammac", {"a": a, "x": x}, name)


def betainc(a, b, x, name: Optional[str] = None) -> Tensor:
    """The regularized incomplete beta function ``I_x(a, b)``; NaN unless ``a > 0``, ``b > 0``
    and ``0 <= x <= 1``."""
    return _apply("Betainc", "betainc", {"a": a, "b": b, "x": x}, name)


# -- gradients (TensorFlow's formulas) -------------------------------------------------------------
def _grad_of(derivative):
    def gradient(op, grad):
        return _m.multiply(grad, derivative(op.inputs[0], op.outputs[0]))

    return gradient


def _like(value, x: Tensor) -> Tensor:
    return convert_to_tensor(np.asarray(value, x.dtype.as_numpy_dtype))


def _where_zero(x, value, otherwise):
    at_zero = _m.equal(x, _a.zeros_like(x))
    return _m.where_v2(at_zero, _m.cast(value, x.dtype), otherwise)


for _type, _derivative in (
    ("BesselI0", lambda x, y: bessel_i1(x)),
    ("BesselI0e", lambda x, y: _m.subtract(bessel_i1e(x), _m.multiply(_m.sign(x), y))),
    ("BesselI1", lambda x, y: _where_zero(x, 1.0, _m.subtract(bessel_i0(x), _m.realdiv(y, x)))),
    (
        "BesselI1e",
        lambda x, y: _where_zero(
            x,
            0.5,
            _m.subtract(bessel_i0e(x), _m.multiply(y, _m.add(_m.sign(x), reciprocal(x)))),
        ),
    ),
    ("BesselK0", lambda x, y: _m.negative(bessel_k1(x))),
    ("BesselK0e", lambda x, y: _m.subtract(y, bessel_k1e(x))),
    ("BesselK1", lambda x, y: _m.subtract(_m.negative(bessel_k0(x)), _m.realdiv(y, x))),
    (
        "BesselK1e",
        lambda x, y: _m.subtract(
            _m.multiply(y, _m.subtract(_like(1.0, x), reciprocal(x))), bessel_k0e(x)
        ),
    ),
    ("BesselJ0", lambda x, y: _m.negative(bessel_j1(x))),
    ("BesselJ1", lambda x, y: _where_zero(x, 0.5, _m.subtract(bessel_j0(x), _m.realdiv(y, x)))),
    ("BesselY0", lambda x, y: _m.negative(bessel_y1(x))),
    ("BesselY1", lambda x, y: _m.subtract(bessel_y0(x), _m.realdiv(y, x))),
    ("Dawsn", lambda x, y: _m.subtract(_like(1.0, x), _m.multiply(_m.multiply(x, 2.0), y))),
    ("Expint", lambda x, y: _m.realdiv(_m.exp(x), x)),
    ("FresnelCos", lambda x, y: _m.cos(_m.multiply(_m.square(x), np.pi / 2))),
    ("FresnelSin", lambda x, y: _m.sin(_m.multiply(_m.square(x), np.pi / 2))),
    (
        "Spence",
        lambda x, y: _m.where_v2(
            _m.equal(x, _m.cast(1.0, x.dtype)),
            _m.cast(-1.0, x.dtype),
            _m.realdiv(_m.log(x), _m.subtract(_like(1.0, x), x)),
        ),
    ),
    ("Erfinv", lambda x, y: _m.multiply(_m.exp(_m.square(y)), np.sqrt(np.pi) / 2)),
    ("Ndtri", lambda x, y: _m.multiply(_m.exp(_m.square(y) / 2.0), np.sqrt(2 * np.pi))),
):
    RegisterGradient(_type)(_grad_of(_derivative))


def _igamma_partials(op, grad):
    a, x = op.inputs
    partial_a = apply_op_output("IgammaGradA", (a, x), None, "IgammaGradA")
    partial_x = _m.exp(
        _m.subtract(_m.add(_m.negative(x), _m.multiply(_m.subtract(a, 1.0), _m.log(x))), lgamma(a))
    )
    return (
        _mg.sum_to_shape_of(_m.multiply(partial_a, grad), a),
        _mg.sum_to_shape_of(_m.multiply(partial_x, grad), x),
    )


@RegisterGradient("Igamma")
def _igamma_grad(op, grad):
    return _igamma_partials(op, grad)


@RegisterGradient("Igammac")
def _igammac_grad(op, grad):
    grad_a, grad_x = _igamma_partials(op, grad)
    return _m.negative(grad_a), _m.negative(grad_x)


@RegisterGradient("IgammaGradA")
def _igamma_grad_a_grad(op, grad):
    raise LookupError(
        f"Op '{op.name}' (op type: IgammaGradA), created at {op.location}: igamma has no second "
        "derivative with respect to a (TensorFlow has none either)"
    )


@RegisterGradient("Betainc")
def _betainc_grad(op, grad):
    # As TensorFlow: a gradient for x only.
    a, b, x = op.inputs
    log_beta = _m.subtract(_m.add(lgamma(a), lgamma(b)), lgamma(_m.add(a, b)))
    partial_x = _m.exp(
        _m.subtract(
            _m.add(xlog1py(_m.subtract(b, 1.0), _m.negative(x)), xlogy(_m.subtract(a, 1.0), x)),
            log_beta,
        )
    )
    return None, None, _mg.sum_to_shape_of(_m.multiply(partial_x, grad), x)

"""The rest of TF1's elementwise math, ``tf.math``'s special functions, running products and the
small math names classic programs use (``to_float``, ``div``, ``reduce_logsumexp``, ...).

The elementwise ops follow the conventions of `math_ops` (same dtype checks, broadcasting and
quiet floating-point errors).  Where TensorFlow has a kernel of its own (``Erf``, ``Atan2``,
``Cumprod``, ...) so does dataflow; where TensorFlow composes in Python (``to_float`` is a
cast, ``reduce_logsumexp`` a max-shifted sum of exponentials, ``log_sigmoid`` a softplus) the
function here composes the same ops, and gets its gradient from theirs.

The special functions (``erf``, ``lgamma``, ``digamma``, ``polygamma``, ``zeta``) use Python's
``math`` module where it has them and series of their own where it does not (the digamma and
Hurwitz-zeta series below), so the core stays numpy-only.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from . import complex_arithmetic as _complex
from . import math_grad as _mg
from . import math_ops as _m
from .math_ops import (
    FLOAT_TYPES,
    INT_TYPES,
    NUMERIC_TYPES,
    _elementwise_extra,
    _infer_binary,
    _infer_unary,
    _quiet,
    _ufunc_kernel,
    binary_op,
    check_dtype,
    kernel_by_dtype,
    marking_dtype,
    normalize_axis,
    static_axis,
    unary_op,
)

__all__ = [
    "bincount",
    "confusion_matrix",
    "histogram_fixed_width",
    "histogram_fixed_width_bins",
    "unravel_index",
    "is_non_decreasing",
    "is_strictly_increasing",
    "multiply_no_nan",
    "polyval",
    "reciprocal_no_nan",
    "reduce_euclidean_norm",
    "reduce_std",
    "reduce_variance",
    "xdivy",
    "xlog1py",
    "xlogy",
    "accumulate_n",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cosh",
    "count_nonzero",
    "cumprod",
    "digamma",
    "div",
    "div_no_nan",
    "erf",
    "erfc",
    "expm1",
    "floormod",
    "is_finite",
    "is_inf",
    "is_nan",
    "lgamma",
    "log_sigmoid",
    "polygamma",
    "reciprocal",
    "reduce_logsumexp",
    "rint",
    "round",
    "scalar_mul",
    "sinh",
    "to_double",
    "to_float",
    "to_int32",
    "to_int64",
    "truncatediv",
    "truncatemod",
    "zeta",
    "lbeta",
    "nextafter",
    "cumulative_logsumexp",
    "confusion_matrix",
]


# -- special functions (numpy has none of these) ---------------------------------------------------
def _elementwise_python(fn):
    """A kernel applying the Python float function ``fn`` to every element, in the input dtype."""

    vectorized = np.frompyfunc(fn, 1, 1)

    def kernel(x):
        return np.asarray(vectorized(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)

    return kernel


def _lgamma_scalar(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole (0, -1, -2, ...): TensorFlow gives inf
        return math.inf


def _digamma64(x: np.ndarray) -> np.ndarray:
    """psi(x) in float64: reflection for x < 0.5, then the recurrence psi(x) = psi(x + 1) - 1/x
    up to x >= 6, then the asymptotic series.  Poles (0, -1, ...) give NaN, as Eigen's."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        reflect = x < 0.5
        y = np.where(reflect, 1.0 - x, x)
        shift = np.zeros_like(y)
        for _ in range(6):
            small = y < 6.0
            shift = shift - np.where(small, 1.0 / y, 0.0)
            y = np.where(small, y + 1.0, y)
        inv2 = 1.0 / (y * y)
        series = inv2 * (
            1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132))))
        )
        psi = np.log(y) - 0.5 / y - series + shift
        psi = np.where(reflect, psi - np.pi / np.tan(np.pi * x), psi)
        return np.where((x <= 0) & (x == np.floor(x)), np.nan, psi)


# Bernoulli numbers B2, B4, ... B24: the Euler-Maclaurin tail of the Hurwitz zeta function.
_BERNOULLI = [
    1 / 6,
    -1 / 30,
    1 / 42,
    -1 / 30,
    5 / 66,
    -691 / 2730,
    7 / 6,
    -3617 / 510,
    43867 / 798,
    -174611 / 330,
    854513 / 138,
    -236364091 / 2730,
]


def _zeta64(s: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The Hurwitz zeta function sum_k (q + k)^-s in float64 for s > 1, as Eigen's: inf at
    s == 1 and at q = 0, -1, ...; NaN for s < 1, and for q < 0 unless s is an integer.  The
    first 9 terms are summed, the rest come from Euler-Maclaurin (accurate for q > -9)."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    with np.errstate(all="ignore"):
        terms = 9
        total = sum((q + k) ** -s for k in range(terms))
        a = q + terms
        total = total + a ** (1 - s) / (s - 1) + 0.5 * a**-s
        rising = s.copy()  # s (s+1) ... (s+2j-2)
        power = a ** (-s - 1)
        factorial = 2.0
        for j, b in enumerate(_BERNOULLI, start=1):
            total = total + b / factorial * rising * power
            rising = rising * (s + 2 * j - 1) * (s + 2 * j)
            power = power / (a * a)
            factorial *= (2 * j + 1) * (2 * j + 2)
        total = np.where(s == 1, np.inf, total)
        total = np.where((s < 1) | ((q <= 0) & (s != np.floor(s))), np.nan, total)
        return np.where((q <= 0) & (q == np.floor(q)), np.inf, total)


def _digamma(x):
    return _digamma64(x).astype(x.dtype)


def _zeta(s, q):
    return _zeta64(s, q).astype(np.result_type(s, q))


def _polygamma(n, x):
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for integer n >= 1, psi(x) for n == 0; NaN for
    other orders, as TensorFlow."""
    n, x = np.broadcast_arrays(np.asarray(n, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        factorial = np.vectorize(lambda k: math.gamma(k + 1) if k >= 0 else np.nan)(n)
        sign = np.where(np.mod(n, 2) == 0, -1.0, 1.0)
        higher = sign * factorial * _zeta64(n + 1, x)
        out = np.where(n == 0, _digamma64(x), higher)
        out = np.where((n < 0) | (n != np.floor(n)), np.nan, out)
    return out


def _typed_polygamma(n, x):
    return _polygamma(n, x).astype(x.dtype)


def _truncatediv(x, y):
    _m._check_integer_divisor(y)
    with np.errstate(all="ignore"):
        if x.dtype.kind == "f":
            return np.trunc(np.true_divide(x, y))
        q = np.abs(x) // np.abs(y)
        return (np.sign(x) * np.sign(y) * q).astype(x.dtype)


def _truncatemod(x, y):
    _m._check_integer_divisor(y)
    with np.errstate(all="ignore"):
        return np.fmod(x, y)


def _div_no_nan(x, y):
    with np.errstate(all="ignore"):
        return np.where(y == 0, np.zeros_like(x), np.true_divide(x, y)).astype(x.dtype)


def _infer_predicate(op):
    (x,) = op.inputs
    check_dtype(x.dtype, FLOAT_TYPES, f"Input 'x' of '{op.type}'")
    return [(_dtypes.bool, x.shape)]


_UNARY = [
    # (op type, allowed dtypes, kernel)
    ("Round", NUMERIC_TYPES, np.round),  # half to even, as TensorFlow
    ("Rint", FLOAT_TYPES, np.rint),
    ("Sinh", _m.INEXACT_TYPES, _quiet(np.sinh)),
    ("Cosh", _m.INEXACT_TYPES, _quiet(np.cosh)),
    ("Asin", FLOAT_TYPES, _quiet(np.arcsin)),
    ("Acos", FLOAT_TYPES, _quiet(np.arccos)),
    ("Atan", FLOAT_TYPES, np.arctan),
    ("Asinh", FLOAT_TYPES, np.arcsinh),
    ("Acosh", FLOAT_TYPES, _quiet(np.arccosh)),
    ("Atanh", FLOAT_TYPES, _quiet(np.arctanh)),
    ("Expm1", _m.INEXACT_TYPES, _quiet(np.expm1)),
    ("Erf", FLOAT_TYPES, _elementwise_python(math.erf)),
    ("Erfc", FLOAT_TYPES, _elementwise_python(math.erfc)),
    ("Lgamma", FLOAT_TYPES, _elementwise_python(_lgamma_scalar)),
    ("Digamma", FLOAT_TYPES, _digamma),
]
for _type, _allowed, _fn in _UNARY:
    define_op(
        _type, _infer_unary(_allowed), _ufunc_kernel(_fn), extra=_elementwise_extra(_type, _fn)
    )
# Complex reciprocals round as TensorFlow's kernel divides (`complex_arithmetic`).
_RECIPROCAL_KERNELS = {
    _dtypes.complex64: _complex.reciprocal,
    _dtypes.complex128: _complex.reciprocal,
}
define_op(
    "Reciprocal",
    marking_dtype(
        _infer_unary((NUMERIC_TYPES - {_dtypes.uint8}) | _m.COMPLEX_TYPES), _RECIPROCAL_KERNELS
    ),
    kernel_by_dtype(_quiet(np.reciprocal), _RECIPROCAL_KERNELS),
    extra={
        **_elementwise_extra("Reciprocal", _quiet(np.reciprocal)),
        "dtype_kernels": frozenset(_RECIPROCAL_KERNELS),
    },
)
for _type, _fn in (("IsNan", np.isnan), ("IsInf", np.isinf), ("IsFinite", np.isfinite)):
    define_op(_type, _infer_predicate, _ufunc_kernel(_fn), extra=_elementwise_extra(_type, _fn))

_BINARY = [
    ("Atan2", FLOAT_TYPES, np.arctan2),
    ("TruncateDiv", NUMERIC_TYPES, _truncatediv),
    ("TruncateMod", NUMERIC_TYPES, _truncatemod),
    ("DivNoNan", FLOAT_TYPES, _div_no_nan),
    ("Zeta", FLOAT_TYPES, _zeta),
    ("Polygamma", FLOAT_TYPES, _typed_polygamma),
    ("NextAfter", frozenset({_dtypes.float32, _dtypes.float64}), np.nextafter),
]
for _type, _allowed, _fn in _BINARY:
    define_op(
        _type, _infer_binary(_allowed), _ufunc_kernel(_fn), extra=_elementwise_extra(_type, _fn)
    )


def round(x, name: Optional[str] = None) -> Tensor:  # noqa: A001 - mirrors tf.round
    """``x`` rounded to the nearest integer, halves to even (``round(2.5) == 2``); integers
    pass through unchanged."""
    x = convert_to_tensor(x, name="x")
    if x.dtype in INT_TYPES:
        return x
    return unary_op("Round", x, name)


def rint(x, name: Optional[str] = None) -> Tensor:
    """``x`` rounded to the nearest integer value, halves to even, in ``x``'s float dtype."""
    return unary_op("Rint", x, name)


def reciprocal(x, name: Optional[str] = None) -> Tensor:
    """``1 / x`` elementwise (integer division for integers, as TensorFlow's ``Reciprocal``)."""
    return unary_op("Reciprocal", x, name)


def sinh(x, name: Optional[str] = None) -> Tensor:
    """The hyperbolic sine of ``x``."""
    return unary_op("Sinh", x, name)


def cosh(x, name: Optional[str] = None) -> Tensor:
    """The hyperbolic cosine of ``x``."""
    return unary_op("Cosh", x, name)


def asin(x, name: Optional[str] = None) -> Tensor:
    """The arcsine of ``x`` (NaN outside [-1, 1])."""
    return unary_op("Asin", x, name)


def acos(x, name: Optional[str] = None) -> Tensor:
    """The arccosine of ``x`` (NaN outside [-1, 1])."""
    return unary_op("Acos", x, name)


def atan(x, name: Optional[str] = None) -> Tensor:
    """The arctangent of ``x``."""
    return unary_op("Atan", x, name)


def asinh(x, name: Optional[str] = None) -> Tensor:
    """The inverse hyperbolic sine of ``x``."""
    return unary_op("Asinh", x, name)


def acosh(x, name: Optional[str] = None) -> Tensor:
    """The inverse hyperbolic cosine of ``x`` (NaN below 1)."""
    return unary_op("Acosh", x, name)


def atanh(x, name: Optional[str] = None) -> Tensor:
    """The inverse hyperbolic tangent of ``x`` (+-inf at +-1, NaN beyond)."""
    return unary_op("Atanh", x, name)


def expm1(x, name: Optional[str] = None) -> Tensor:
    """``exp(x) - 1``, accurate for small ``x``."""
    return unary_op("Expm1", x, name)


def erf(x, name: Optional[str] = None) -> Tensor:
    """The Gauss error function of ``x``."""
    return unary_op("Erf", x, name)


def erfc(x, name: Optional[str] = None) -> Tensor:
    """``1 - erf(x)``, accurate where ``erf(x)`` is near 1."""
    return unary_op("Erfc", x, name)


def lgamma(x, name: Optional[str] = None) -> Tensor:
    """``log |Gamma(x)|``; ``inf`` at the poles 0, -1, -2, ..."""
    return unary_op("Lgamma", x, name)


def digamma(x, name: Optional[str] = None) -> Tensor:
    """psi(x), the derivative of ``lgamma``; NaN at the poles 0, -1, -2, ..."""
    return unary_op("Digamma", x, name)


def polygamma(a, x, name: Optional[str] = None) -> Tensor:
    """The ``a``-th derivative of ``digamma`` at ``x`` (``a`` a float holding a non-negative
    integer; NaN for other orders)."""
    return binary_op("Polygamma", a, x, name or "Polygamma")


def nextafter(x1, x2, name: Optional[str] = None) -> Tensor:
    """The float next to ``x1`` in the direction of ``x2``, elementwise (float32, float64)."""
    return binary_op("NextAfter", x1, x2, name or "NextAfter")


def lbeta(x, name: Optional[str] = None) -> Tensor:
    """``log(|Beta(x)|)`` over the last axis: ``sum(lgamma(x)) - lgamma(sum(x))``, as
    TensorFlow composes it."""
    graph = _m.graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "lbeta"):
        x = convert_to_tensor(x, name="x")
        log_prod_gamma_x = _m.reduce_sum(lgamma(x), axis=[-1])
        log_gamma_sum_x = lgamma(_m.reduce_sum(x, axis=[-1]))
        return _m.subtract(log_prod_gamma_x, log_gamma_sum_x)


def zeta(x, q, name: Optional[str] = None) -> Tensor:
    """The Hurwitz zeta function ``sum_k (q + k) ** -x`` (``x > 1``, ``q > 0``; NaN elsewhere)."""
    return binary_op("Zeta", x, q, name or "Zeta")


def is_nan(x, name: Optional[str] = None) -> Tensor:
    """Where ``x`` is NaN (a float input), as bools."""
    return unary_op("IsNan", x, name)


def is_inf(x, name: Optional[str] = None) -> Tensor:
    """Where ``x`` is +-inf (a float input), as bools."""
    return unary_op("IsInf", x, name)


def is_finite(x, name: Optional[str] = None) -> Tensor:
    """Where ``x`` is neither NaN nor +-inf (a float input), as bools."""
    return unary_op("IsFinite", x, name)


def atan2(y, x, name: Optional[str] = None) -> Tensor:
    """The angle of the point ``(x, y)``, in (-pi, pi]; note ``y`` comes first."""
    return binary_op("Atan2", y, x, name or "Atan2")


def truncatediv(x, y, name: Optional[str] = None) -> Tensor:
    """``x / y`` rounded toward zero (C's integer division; ``-7 / 2 == -3``)."""
    return binary_op("TruncateDiv", x, y, name or "TruncateDiv")


def truncatemod(x, y, name: Optional[str] = None) -> Tensor:
    """The remainder of `truncatediv`: it has the sign of ``x`` (C's ``%``, ``fmod``)."""
    return binary_op("TruncateMod", x, y, name or "TruncateMod")


def floormod(x, y, name: Optional[str] = None) -> Tensor:
    """The remainder of `floordiv`: it has the sign of ``y`` (Python's ``%``); ``df.mod``."""
    return _m.mod(x, y, name=name)


def div_no_nan(x, y, name: Optional[str] = None) -> Tensor:
    """``x / y``, but 0 wherever ``y`` is 0 (even for ``x`` 0 or NaN)."""
    return binary_op("DivNoNan", x, y, name or "DivNoNan")


def div(x, y, name: Optional[str] = None) -> Tensor:
    """TF1's Python-2 division: `truediv` for floats, `floordiv` for integers."""
    x = convert_to_tensor(x, name="x") if not isinstance(x, Tensor) else x
    if x.dtype in FLOAT_TYPES:
        return _m.realdiv(x, y, name=name or "div")
    return _m.floordiv(x, y, name=name or "div")


def scalar_mul(scalar, x, name: Optional[str] = None) -> Tensor:
    """``scalar * x`` for a scalar (a 0-d tensor or a number); anything else is a
    ``ValueError``, as in TensorFlow."""
    scalar = convert_to_tensor(scalar, dtype=_base_dtype(x), name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError(
            f"scalar_mul at {_user_location()}: The input scalar must be a 0-D value. "
            f"Received shape {scalar.shape}."
        )
    return _m.multiply(scalar, x, name=name)


def _base_dtype(x):
    return x.dtype if isinstance(x, Tensor) else None


def accumulate_n(inputs, shape=None, tensor_dtype=None, name: Optional[str] = None) -> Tensor:
    """The elementwise sum of the tensors in ``inputs`` (as `add_n`); ``shape`` and
    ``tensor_dtype``, when given, must match them (TensorFlow checks the same)."""
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError(
            f"accumulate_n at {_user_location()}: inputs must be a non-empty list of tensors"
        )
    tensors = [convert_to_tensor(t) for t in inputs]
    for t in tensors:
        if tensor_dtype is not None and t.dtype is not _dtypes.as_dtype(tensor_dtype):
            raise TypeError(
                f"accumulate_n at {_user_location()}: tensor_dtype is "
                f"{_dtypes.as_dtype(tensor_dtype).name}, but an input is {t.dtype.name}"
            )
        if shape is not None and not t.shape.is_compatible_with(shape):
            raise ValueError(
                f"accumulate_n at {_user_location()}: shape {shape} does not match an input's "
                f"shape {t.shape}"
            )
    return _m.add_n(tensors, name=name)


def to_float(x, name: str = "ToFloat") -> Tensor:
    """``cast(x, float32)`` (TF1's shorthand)."""
    return _m.cast(x, _dtypes.float32, name=name)


def to_double(x, name: str = "ToDouble") -> Tensor:
    """``cast(x, float64)`` (TF1's shorthand)."""
    return _m.cast(x, _dtypes.float64, name=name)


def to_int32(x, name: str = "ToInt32") -> Tensor:
    """``cast(x, int32)`` (TF1's shorthand; floats truncate toward zero)."""
    return _m.cast(x, _dtypes.int32, name=name)


def to_int64(x, name: str = "ToInt64") -> Tensor:
    """``cast(x, int64)`` (TF1's shorthand; floats truncate toward zero)."""
    return _m.cast(x, _dtypes.int64, name=name)


def log_sigmoid(x, name: Optional[str] = None) -> Tensor:
    """``log(sigmoid(x))`` computed as ``-softplus(-x)``, finite for large ``|x|``."""
    from .nn_ops import softplus

    x = convert_to_tensor(x, name="x")
    return _m.negative(softplus(_m.negative(x)), name=name or "LogSigmoid")


def reduce_logsumexp(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """``log(reduce_sum(exp(x)))`` over ``axis``, shifted by the (stopped) maximum so that it
    neither overflows nor underflows; an infinite maximum is shifted by 0, as TensorFlow."""
    from .array_ops import stop_gradient

    attrs = _m._reduction_args(axis, keepdims, reduction_indices, keep_dims)
    x = convert_to_tensor(input_tensor, name="input_tensor")
    axis, keepdims = attrs["axis"], attrs["keepdims"]
    raw_max = _m.reduce_max(x, axis=axis, keepdims=True)
    finite_max = stop_gradient(_m.where_v2(is_finite(raw_max), raw_max, _mg._zeros(raw_max)))
    summed = _m.reduce_sum(_m.exp(_m.subtract(x, finite_max)), axis=axis, keepdims=keepdims)
    shift = finite_max if keepdims else _squeeze_axes(finite_max, axis, x)
    return _m.add(_m.log(summed), shift, name=name or "ReduceLogSumExp")


def _squeeze_axes(t: Tensor, axis, like: Tensor) -> Tensor:
    from .array_ops import reshape, shape

    if axis is None:
        return reshape(t, [])
    rank = like.shape.ndims
    if rank is not None:
        from .array_ops import squeeze

        return squeeze(t, [normalize_axis(a, rank) for a in axis])
    return reshape(t, shape(_m.reduce_sum(t, axis=axis)))


def count_nonzero(
    input_tensor=None,
    axis=None,
    keepdims=None,
    dtype=_dtypes.int64,
    name: Optional[str] = None,
    reduction_indices=None,
    keep_dims=None,
    input=None,  # noqa: A002 - TensorFlow's alias
) -> Tensor:
    """How many elements over ``axis`` are not zero (not False, not ""), as ``dtype``."""
    if input is not None:
        if input_tensor is not None:
            raise ValueError("Cannot specify both 'input' and 'input_tensor'")
        input_tensor = input
    x = convert_to_tensor(input_tensor, name="input_tensor")
    zero = np.zeros((), x.dtype.as_numpy_dtype) if x.dtype is not _dtypes.string else b""
    nonzero = _m.not_equal(x, convert_to_tensor(zero, dtype=x.dtype))
    counts = _m.cast(nonzero, _dtypes.int64)
    total = _m.reduce_sum(
        counts,
        axis=axis,
        keepdims=keepdims,
        reduction_indices=reduction_indices,
        keep_dims=keep_dims,
    )
    return _m.cast(total, dtype, name=name or "count_nonzero")


# -- running products ------------------------------------------------------------------------------
define_op("Cumprod", _m._infer_running, _m.running_kernel(np.cumprod, 1))


def _infer_cumulative_logsumexp(op):
    check_dtype(op.inputs[0].dtype, FLOAT_TYPES, "Input 'x' of 'CumulativeLogsumexp'")
    return _m._infer_running(op)


define_op(
    "CumulativeLogsumexp",
    _infer_cumulative_logsumexp,
    _m.running_kernel(np.logaddexp.accumulate, -np.inf),
)


def cumulative_logsumexp(
    x, axis=0, exclusive: bool = False, reverse: bool = False, name: Optional[str] = None
) -> Tensor:
    """Running ``log(sum(exp(x)))`` along ``axis``, without overflow: ``exclusive`` leaves out
    the current element (``-inf`` first), ``reverse`` runs from the end."""
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"cumulative_logsumexp takes a single axis, got {axis!r}")
    attrs = {"axis": axis, "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return apply_op("CumulativeLogsumexp", (x,), attrs, name or "CumulativeLogsumexp").outputs[0]


def cumprod(
    x, axis=0, exclusive: bool = False, reverse: bool = False, name: Optional[str] = None
) -> Tensor:
    """Running products along ``axis``: ``exclusive`` leaves out the current element (the
    first product is 1), ``reverse`` multiplies from the end."""
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"cumprod at {_user_location()}: takes a single axis, got {axis!r}")
    attrs = {"axis": axis, "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return apply_op("Cumprod", (x,), attrs, name or "Cumprod").outputs[0]


def confusion_matrix(
    labels, predictions, num_classes=None, dtype=_dtypes.int32, name=None, weights=None
) -> Tensor:
    """The ``num_classes x num_classes`` matrix counting (or summing ``weights`` of) each
    ``(label, prediction)`` pair; ``num_classes`` defaults to the largest class seen plus 1.
    Negative classes, and classes not below ``num_classes``, fail at run time, as in TensorFlow."""
    from ..framework.graph import control_dependencies
    from .array_ops import ones_like, stack
    from .check_ops import assert_less, assert_non_negative
    from .nd_index_ops import scatter_nd

    graph = _m.graph_of((labels, predictions, weights))
    with graph.as_default(), graph.name_scope(name or "confusion_matrix"):
        labels = _m.cast(labels, _dtypes.int64)
        predictions = _m.cast(predictions, _dtypes.int64)
        checks = [
            assert_non_negative(labels, message="`labels` contains negative values"),
            assert_non_negative(predictions, message="`predictions` contains negative values"),
        ]
        if num_classes is None:
            highest = _m.maximum(_m.reduce_max(predictions), _m.reduce_max(labels))
            num_classes = _m.add(highest, convert_to_tensor(1, dtype=_dtypes.int64))
        else:
            num_classes = _m.cast(num_classes, _dtypes.int64)
            checks.append(assert_less(labels, num_classes, message="`labels` out of bound"))
            checks.append(
                assert_less(predictions, num_classes, message="`predictions` out of bound")
            )
        if weights is None:
            values = ones_like(predictions, dtype=dtype)
        else:
            values = _m.cast(convert_to_tensor(weights, name="weights"), dtype)
        with control_dependencies(checks):
            indices = stack([labels, predictions], axis=1)
        return scatter_nd(indices, values, stack([num_classes, num_classes]))


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402

for _type in "Round Rint IsNan IsInf IsFinite TruncateDiv TruncateMod NextAfter".split():
    NotDifferentiable(_type)


def _one_like(x: Tensor) -> Tensor:
    return convert_to_tensor(np.ones((), x.dtype.as_numpy_dtype))


def _grad_times(fn):
    """A unary gradient ``grad * fn(x, y)`` with ``x`` the input and ``y`` the output."""

    def gradient(op, grad):
        # TensorFlow's gradients of complex functions take the conjugate derivative.
        return _m.multiply(grad, _mg._conj(fn(op.inputs[0], op.outputs[0])))

    return gradient


for _type, _derivative in (
    ("Reciprocal", lambda x, y: _m.negative(_m.square(y))),
    ("Sinh", lambda x, y: cosh(x)),
    ("Cosh", lambda x, y: sinh(x)),
    ("Asin", lambda x, y: _m.rsqrt(1 - _m.square(x))),
    ("Acos", lambda x, y: _m.negative(_m.rsqrt(1 - _m.square(x)))),
    ("Atan", lambda x, y: reciprocal(1 + _m.square(x))),
    ("Asinh", lambda x, y: reciprocal(cosh(y))),
    ("Acosh", lambda x, y: reciprocal(sinh(y))),
    ("Atanh", lambda x, y: reciprocal(1 - _m.square(x))),
    ("Expm1", lambda x, y: _m.exp(x)),
    ("Erf", lambda x, y: _m.multiply(2 / np.sqrt(np.pi), _m.exp(_m.negative(_m.square(x))))),
    ("Erfc", lambda x, y: _m.multiply(-2 / np.sqrt(np.pi), _m.exp(_m.negative(_m.square(x))))),
    ("Lgamma", lambda x, y: digamma(x)),
    ("Digamma", lambda x, y: polygamma(_one_like(x), x)),
):
    RegisterGradient(_type)(_grad_times(_derivative))


@RegisterGradient("Atan2")
def _atan2_grad(op, grad):
    y, x = op.inputs
    scale = reciprocal(_m.add(_m.square(x), _m.square(y)))
    return (
        _mg.sum_to_shape_of(_m.multiply(grad, _m.multiply(x, scale)), y),
        _mg.sum_to_shape_of(_m.negative(_m.multiply(grad, _m.multiply(y, scale))), x),
    )


@RegisterGradient("DivNoNan")
def _div_no_nan_grad(op, grad):
    x, y = op.inputs
    return (
        _mg.sum_to_shape_of(div_no_nan(grad, y), x),
        _mg.sum_to_shape_of(_m.multiply(grad, div_no_nan(div_no_nan(_m.negative(x), y), y)), y),
    )


@RegisterGradient("Polygamma")
def _polygamma_grad(op, grad):
    a, x = op.inputs
    return None, _mg.sum_to_shape_of(_m.multiply(grad, polygamma(_m.add(a, 1), x)), x)


@RegisterGradient("Zeta")
def _zeta_grad(op, grad):
    s, q = op.inputs
    # d/dq zeta(s, q) = -s zeta(s + 1, q); TensorFlow gives no gradient for s either.
    return None, _mg.sum_to_shape_of(
        _m.multiply(grad, _m.negative(_m.multiply(s, zeta(_m.add(s, 1), q)))), q
    )


@RegisterGradient("Cumprod")
def _cumprod_grad(op, grad):
    # TensorFlow's formula: exact away from zeros in x (a zero gives NaN or inf, as there).
    x = op.inputs[0]
    exclusive, reverse, axis = op.attrs["exclusive"], op.attrs["reverse"], op.attrs["axis"]
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = _m.cumsum(_m.multiply(prod, grad), axis, exclusive=exclusive, reverse=not reverse)
    return _m.realdiv(out, x)


# -- tf.math's composites: statistics, zero-safe products, monotonicity, polynomials -----------
def reduce_variance(input_tensor, axis=None, keepdims: bool = False, name=None) -> Tensor:
    """The mean squared deviation from the mean over ``axis`` (all axes when None)."""
    x = convert_to_tensor(input_tensor, name="input_tensor")
    check_dtype(x.dtype, FLOAT_TYPES, f"reduce_variance's input {x.name}")
    mean = _m.reduce_mean(x, axis=axis, keepdims=True)
    squared = _m.squared_difference(x, mean)
    return _m.reduce_mean(squared, axis=axis, keepdims=keepdims, name=name or "reduce_variance")


def reduce_std(input_tensor, axis=None, keepdims: bool = False, name=None) -> Tensor:
    """The square root of `reduce_variance`."""
    variance = reduce_variance(input_tensor, axis=axis, keepdims=keepdims)
    return _m.sqrt(variance, name=name or "reduce_std")


def reduce_euclidean_norm(input_tensor, axis=None, keepdims: bool = False, name=None) -> Tensor:
    """``sqrt(sum(x**2))`` over ``axis`` (all axes when None)."""
    x = convert_to_tensor(input_tensor, name="input_tensor")
    summed = _m.reduce_sum(_m.square(x), axis=axis, keepdims=keepdims)
    return _m.sqrt(summed, name=name or "reduce_euclidean_norm")


def _where_zero(condition_of: Tensor, value: Tensor, name: Optional[str]) -> Tensor:
    """``value`` with 0 where ``condition_of`` is 0 (broadcast as ``where_v2`` does)."""
    zero = _m.equal(condition_of, _mg._zeros(condition_of))
    return _m.where_v2(zero, _mg._zeros(value), value, name=name)


def _zero_safe(x: Tensor, y: Tensor, fill) -> Tensor:
    """``y`` with ``fill`` where ``x`` is 0: what the unused branch reads, so that neither it
    nor its gradient is inf or NaN there."""
    zero = _m.equal(x, _mg._zeros(x))
    return _m.where_v2(zero, _m.cast(fill, y.dtype), y)


def _binary_inputs(function: str, x, y) -> tuple[Tensor, Tensor]:
    x = convert_to_tensor(x, name="x")
    y = convert_to_tensor(y, dtype=x.dtype, name="y")
    check_dtype(x.dtype, FLOAT_TYPES, f"{function}'s input {x.name}")
    return x, y


def xlogy(x, y, name=None) -> Tensor:
    """``x * log(y)``, and 0 where ``x`` is 0 (whatever ``y``)."""
    x, y = _binary_inputs("xlogy", x, y)
    return _where_zero(x, _m.multiply(x, _m.log(_zero_safe(x, y, 1))), name or "xlogy")


def xlog1py(x, y, name=None) -> Tensor:
    """``x * log1p(y)``, and 0 where ``x`` is 0 (whatever ``y``)."""
    x, y = _binary_inputs("xlog1py", x, y)
    return _where_zero(x, _m.multiply(x, _m.log1p(_zero_safe(x, y, 0))), name or "xlog1py")


def xdivy(x, y, name=None) -> Tensor:
    """``x / y``, and 0 where ``x`` is 0 (whatever ``y``)."""
    x, y = _binary_inputs("xdivy", x, y)
    return _where_zero(x, _m.realdiv(x, _zero_safe(x, y, 1)), name or "xdivy")


def multiply_no_nan(x, y, name=None) -> Tensor:
    """``x * y``, and 0 where ``y`` is 0 (even where ``x`` is inf or NaN)."""
    x, y = _binary_inputs("multiply_no_nan", x, y)
    return _where_zero(y, _m.multiply(_zero_safe(y, x, 0), y), name or "multiply_no_nan")


def reciprocal_no_nan(x, name=None) -> Tensor:
    """``1 / x``, and 0 where ``x`` is 0."""
    x = convert_to_tensor(x, name="x")
    check_dtype(x.dtype, FLOAT_TYPES, f"reciprocal_no_nan's input {x.name}")
    one = _m.cast(1, x.dtype)
    return _where_zero(x, _m.realdiv(one, _zero_safe(x, x, 1)), name or "reciprocal_no_nan")


def _monotone(function: str, x, compare, name) -> Tensor:
    from .array_ops import reshape

    x = convert_to_tensor(x, name="x")
    check_dtype(x.dtype, NUMERIC_TYPES, f"{function}'s input {x.name}")
    flat = reshape(x, [-1])
    return _m.reduce_all(compare(flat[:-1], flat[1:]), name=name or function)


def is_non_decreasing(x, name=None) -> Tensor:
    """True when each element of ``x`` (in row-major order) is >= the one before it."""
    return _monotone("is_non_decreasing", x, _m.less_equal, name)


def is_strictly_increasing(x, name=None) -> Tensor:
    """True when each element of ``x`` (in row-major order) is > the one before it."""
    return _monotone("is_strictly_increasing", x, _m.less, name)


def polyval(coeffs, x, name=None) -> Tensor:
    """``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule (0 for no
    coefficients)."""
    from .array_ops import zeros_like

    if not isinstance(coeffs, (list, tuple)):
        raise ValueError(f"coeffs must be a list of tensors, got {coeffs!r} ({_user_location()})")
    x = convert_to_tensor(x, name="x")
    if not coeffs:
        return zeros_like(x, name=name or "polyval")
    result = convert_to_tensor(coeffs[0], dtype=x.dtype)
    for coefficient in coeffs[1:]:
        result = _m.add(_m.multiply(result, x), convert_to_tensor(coefficient, dtype=x.dtype))
    return _m.add(result, _mg._zeros(result), name=name or "polyval")


@RegisterGradient("CumulativeLogsumexp")
def _cumulative_logsumexp_grad(op, grad):
    """TensorFlow's gradient, in log space: the positive and negative parts of ``grad`` run
    backwards through a cumulative_logsumexp of their own, so nothing overflows."""
    x, out = op.inputs[0], op.outputs[0]
    attrs = op.attrs
    lowest = float(np.finfo(_dtypes.numpy_dtype(grad.dtype)).min)

    def part(mask, magnitude):
        log_grad = _m.where_v2(mask, _m.log(magnitude), convert_to_tensor(lowest, dtype=grad.dtype))
        running = cumulative_logsumexp(
            _m.subtract(log_grad, out),
            attrs["axis"],
            exclusive=attrs["exclusive"],
            reverse=not attrs["reverse"],
        )
        return _m.exp(_m.add(running, x))

    positive = part(_m.greater(grad, 0), grad)
    negative = part(_m.less(grad, 0), _m.negative(grad))
    return _m.subtract(positive, negative)


# -- counting: confusion matrices, bin counts, histograms, unravelled indices ------------------
def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=_dtypes.int32) -> Tensor:
    """How often each value ``0, 1, ...`` occurs in the non-negative ints ``arr`` (or the sum
    of the ``weights`` where it does): ``max(arr) + 1`` counts, at least ``minlength`` and
    at most ``maxlength`` (larger values are left out)."""
    from ..framework.graph import name_scope
    from .array_ops import ones_like, reshape, size
    from .segment_ops import unsorted_segment_sum

    with name_scope("bincount"):
        arr = _m.cast(reshape(convert_to_tensor(arr, name="arr"), [-1]), _dtypes.int32)
        nonempty = _m.greater(size(arr), 0)
        largest = _m.where_v2(nonempty, _m.reduce_max(arr), -1)
        length = _m.add(largest, 1)
        if minlength is not None:
            length = _m.maximum(length, _m.cast(minlength, _dtypes.int32))
        if maxlength is not None:
            length = _m.minimum(length, _m.cast(maxlength, _dtypes.int32))
        if weights is None:
            values = ones_like(arr, dtype=_dtypes.as_dtype(dtype))
        else:
            values = reshape(convert_to_tensor(weights, name="weights"), [-1])
        # a value past maxlength goes to segment -1, which the sum leaves out
        segments = _m.where_v2(_m.less(arr, length), arr, -1)
        return unsorted_segment_sum(values, segments, length, name="bincount")


def histogram_fixed_width_bins(
    values, value_range, nbins=100, dtype=_dtypes.int32, name=None
) -> Tensor:
    """The bin of each of ``values`` among ``nbins`` equal bins spanning ``value_range``
    ``[lo, hi]``; values below ``lo`` go to bin 0, at or above ``hi`` to the last."""
    from ..framework.graph import name_scope

    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]):
        values = convert_to_tensor(values, name="values")
        value_range = convert_to_tensor(value_range, dtype=values.dtype, name="value_range")
        lo, hi = value_range[0], value_range[1]
        scaled = _m.realdiv(_m.subtract(values, lo), _m.subtract(hi, lo))
        bins = _m.floor(_m.multiply(scaled, _m.cast(nbins, values.dtype)))
        bins = _m.clip_by_value(_m.cast(bins, _dtypes.int32), 0, _m.cast(nbins, _dtypes.int32) - 1)
        return _m.cast(bins, _dtypes.as_dtype(dtype))


def histogram_fixed_width(values, value_range, nbins=100, dtype=_dtypes.int32, name=None):
    """How many of ``values`` fall in each of ``nbins`` equal bins spanning ``value_range``
    (`histogram_fixed_width_bins` says which)."""
    from ..framework.graph import name_scope
    from .array_ops import ones_like, reshape
    from .segment_ops import unsorted_segment_sum

    with name_scope(name, "histogram_fixed_width", [values, value_range, nbins]):
        bins = reshape(histogram_fixed_width_bins(values, value_range, nbins), [-1])
        ones = ones_like(bins, dtype=_dtypes.as_dtype(dtype))
        return unsorted_segment_sum(ones, bins, nbins)


def unravel_index(indices, dims, name=None) -> Tensor:
    """The coordinates in an array of shape ``dims`` of the flat ``indices`` (a scalar or a
    vector): one row per dimension, as ``np.unravel_index`` stacked."""
    from ..framework.graph import name_scope
    from .array_ops import expand_dims, reshape

    with name_scope(name, "UnravelIndex", [indices, dims]):
        indices = convert_to_tensor(indices, name="indices")
        dims = convert_to_tensor(dims, dtype=indices.dtype, name="dims")
        if indices.shape.ndims not in (0, 1):
            raise ValueError(f"unravel_index takes a scalar or a vector, got {indices.shape}")
        strides = cumprod(dims, exclusive=True, reverse=True)
        flat = expand_dims(indices, 0)
        column = [-1] + [1] * indices.shape.ndims
        quotient = _m.floordiv(flat, reshape(strides, column))
        return _m.mod(quotient, reshape(dims, column))

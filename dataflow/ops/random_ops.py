"""Random ops: normal, uniform and truncated normal tensors, shuffles, categorical draws, gamma
and Poisson samples.  The user-facing names mirror ``tf.compat.v1`` (``df.random_normal``,
``df.random.normal``, ...).

Each op is stateful (passes never fold, merge or hoist it) and draws from its own stream of the
Session (`dataflow.client.random_streams`), keyed by its ``seed`` and ``seed2`` attributes
(`dataflow.framework.random_seed`): a fresh value every run and every loop iteration, the same
sequence in every Session when a seed is set.  The values are not TensorFlow's bit for bit; the
distributions, shapes, dtypes, op names and seed rules are.

The graphs are TensorFlow's: ``random_normal(shape, mean, stddev)`` is
``RandomStandardNormal(shape) * stddev + mean`` (so the gradient reaches ``mean`` and
``stddev``), ``random_uniform`` scales ``RandomUniform`` unless the range is the default
``[0, 1)``, and ``random_gamma`` divides ``RandomGamma`` by ``beta``.  Only ``RandomGamma`` has a
gradient of its own, with respect to ``alpha``, as in TensorFlow: each sample moves with
``alpha`` as its quantile stays fixed (``RandomGammaGrad``, from the gamma CDF computed here in
float64 by its series and continued fraction); the other random ops are not differentiable.
"""

from __future__ import annotations

import math
from builtins import range as builtins_range
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op, define_op
from ..framework.random_seed import op_seed_attrs
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from .array_ops import _as_index_vector, _shape_from_vector
from .math_ops import (
    FLOAT_TYPES,
    INDEX_TYPES,
    NUMERIC_TYPES,
    add,
    broadcast_shape,
    check_dtype,
    graph_of,
    maximum,
    multiply,
    realdiv,
    subtract,
)

__all__ = [
    "multinomial",
    "random_gamma",
    "random_normal",
    "random_poisson",
    "random_shuffle",
    "random_uniform",
    "truncated_normal",
]

_UNIFORM_TYPES = FLOAT_TYPES | INDEX_TYPES
_POISSON_TYPES = FLOAT_TYPES | INDEX_TYPES


def _build_error(kind: type, function: str, message: str) -> Exception:
    return kind(f"{function} at {_user_location()}: {message}")


def _generator(context, attrs) -> np.random.Generator:
    return context.random_generator(attrs["stream"], attrs["seed"], attrs["seed2"])


def _run_shape(shape: np.ndarray, op_type: str) -> tuple:
    """The output dims a shape input gives at run time; negative dims are an error."""
    if shape.ndim != 1 or (shape.size and shape.min() < 0):
        raise InvalidArgumentError(
            None, None, f"{op_type}'s shape must be a vector of sizes, got {shape.tolist()}"
        )
    return tuple(int(d) for d in shape)


def _infer_shape_input(shape: Tensor, op_type: str) -> TensorShape:
    check_dtype(shape.dtype, INDEX_TYPES, f"Input 'shape' of '{op_type}'")
    return _shape_from_vector(shape, "shape")


def _draw_as(values: np.ndarray, dtype: _dtypes.DType) -> np.ndarray:
    return values.astype(_dtypes.numpy_dtype(dtype), copy=False)


def _float_draw_dtype(dtype: _dtypes.DType):
    """numpy draws float32 and float64; float16 is drawn in float32 and rounded."""
    return np.float64 if dtype is _dtypes.float64 else np.float32


# -- the kernels' ops --------------------------------------------------------------------------
def _infer_float_source(op):
    (shape,) = op.inputs
    check_dtype(op.attrs["dtype"], FLOAT_TYPES, f"Attribute 'dtype' of '{op.type}'")
    return [(op.attrs["dtype"], _infer_shape_input(shape, op.type))]


def _standard_normal_kernel(attrs):
    dtype = attrs["dtype"]

    def random_standard_normal(context, shape):
        dims = _run_shape(shape, "RandomStandardNormal")
        values = _generator(context, attrs).standard_normal(dims, _float_draw_dtype(dtype))
        return _draw_as(values, dtype)

    return random_standard_normal


def _uniform_kernel(attrs):
    dtype = attrs["dtype"]

    def random_uniform(context, shape):
        dims = _run_shape(shape, "RandomUniform")
        values = _generator(context, attrs).random(dims, _float_draw_dtype(dtype))
        values = _draw_as(values, dtype)
        if dtype is _dtypes.float16:
            # Rounding to float16 may reach 1.0; the range is [0, 1) as in TensorFlow.
            np.minimum(values, np.nextafter(np.float16(1), np.float16(0)), out=values)
        return values

    return random_uniform


def _truncated_normal_kernel(attrs):
    dtype = attrs["dtype"]

    def truncated_normal(context, shape):
        dims = _run_shape(shape, "TruncatedNormal")
        generator = _generator(context, attrs)
        draw_dtype = _float_draw_dtype(dtype)
        values = generator.standard_normal(dims, draw_dtype)
        outside = np.abs(values) > 2
        while outside.any():  # each redraw keeps about 95% of what it draws
            values[outside] = generator.standard_normal(int(outside.sum()), draw_dtype)
            outside = np.abs(values) > 2
        return _draw_as(values, dtype)

    return truncated_normal


define_op(
    "RandomStandardNormal",
    _infer_float_source,
    _standard_normal_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)
define_op(
    "RandomUniform",
    _infer_float_source,
    _uniform_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)
define_op(
    "TruncatedNormal",
    _infer_float_source,
    _truncated_normal_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)


def _infer_uniform_int(op):
    shape, minval, maxval = op.inputs
    return infer_int_bounds(op.type, shape, minval, maxval)


def infer_int_bounds(op_type: str, shape, minval, maxval):
    """The output of an integer draw of ``shape`` in ``[minval, maxval)``: scalar bounds of
    one int dtype, ``minval < maxval`` when both are known."""
    check_dtype(minval.dtype, INDEX_TYPES, f"Input 'minval' of '{op_type}'")
    if maxval.dtype is not minval.dtype:
        raise TypeError(
            f"minval and maxval must have the same dtype, got {minval.dtype.name} and "
            f"{maxval.dtype.name}"
        )
    for what, t in (("minval", minval), ("maxval", maxval)):
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"{what} must be a scalar, got shape {t.shape}")
    low, high = numpy_value_or_none(minval), numpy_value_or_none(maxval)
    if low is not None and high is not None and not low < high:
        raise ValueError(f"Need minval < maxval: {low} >= {high}")
    return [(minval.dtype, _infer_shape_input(shape, op_type))]


def _uniform_int_kernel(attrs):
    def random_uniform_int(context, shape, minval, maxval):
        dims = _run_shape(shape, "RandomUniformInt")
        if np.ndim(minval) or np.ndim(maxval):
            raise InvalidArgumentError(None, None, "minval and maxval must be scalars")
        if not minval < maxval:
            raise InvalidArgumentError(None, None, f"Need minval < maxval: {minval} >= {maxval}")
        return _generator(context, attrs).integers(minval, maxval, dims, dtype=minval.dtype)

    return random_uniform_int


define_op(
    "RandomUniformInt",
    _infer_uniform_int,
    _uniform_int_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)


def _infer_shuffle(op):
    (value,) = op.inputs
    return [(value.dtype, value.shape)]


def _shuffle_kernel(attrs):
    def random_shuffle(context, value):
        generator = _generator(context, attrs)
        if value.ndim == 0 or len(value) < 2:
            return value.copy()
        return value[generator.permutation(len(value))]

    return random_shuffle


define_op(
    "RandomShuffle",
    _infer_shuffle,
    _shuffle_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)


def _infer_multinomial(op):
    logits, num_samples = op.inputs
    check_dtype(logits.dtype, NUMERIC_TYPES, f"Input 'logits' of '{op.type}'")
    check_dtype(
        num_samples.dtype, frozenset({_dtypes.int32}), f"Input 'num_samples' of '{op.type}'"
    )
    check_dtype(op.attrs["output_dtype"], INDEX_TYPES, f"Attribute 'output_dtype' of '{op.type}'")
    if logits.shape.ndims not in (None, 2):
        raise ValueError(f"logits must be 2-D [batch_size, num_classes], got shape {logits.shape}")
    if num_samples.shape.ndims not in (None, 0):
        raise ValueError(f"num_samples must be a scalar, got shape {num_samples.shape}")
    samples = numpy_value_or_none(num_samples)
    if samples is not None and samples < 0:
        raise ValueError(f"num_samples should be nonnegative, got {int(samples)}")
    batch = logits.shape[0] if logits.shape.ndims == 2 else None
    count = None if samples is None else int(samples)
    return [(op.attrs["output_dtype"], TensorShape([batch, count]))]


def _multinomial_kernel(attrs):
    out_dtype = _dtypes.numpy_dtype(attrs["output_dtype"])

    def multinomial(context, logits, num_samples):
        if logits.ndim != 2:
            raise InvalidArgumentError(None, None, f"logits must be 2-D, got shape {logits.shape}")
        if num_samples < 0:
            raise InvalidArgumentError(
                None, None, f"num_samples should be nonnegative, got {num_samples}"
            )
        batch, classes = logits.shape
        if classes == 0 and batch and num_samples:
            raise InvalidArgumentError(None, None, "num_classes should be positive, got 0")
        uniform = _generator(context, attrs).random((batch, int(num_samples)))
        if not batch or not num_samples:
            return np.zeros((batch, int(num_samples)), out_dtype)
        # Inverse transform: the first class whose cumulative probability exceeds the draw.
        logits = logits.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        cumulative = np.cumsum(np.nan_to_num(weights, nan=0.0), axis=1)
        targets = uniform * cumulative[:, -1:]
        samples = np.empty((batch, int(num_samples)), np.int64)
        for row in range(batch):
            samples[row] = np.searchsorted(cumulative[row], targets[row], side="right")
        return np.minimum(samples, classes - 1).astype(out_dtype)

    return multinomial


define_op(
    "Multinomial",
    _infer_multinomial,
    _multinomial_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)


def _infer_with_parameter_shape(parameter_name: str, allowed: frozenset, out_dtype_attr=None):
    def infer(op):
        shape, parameter = op.inputs
        check_dtype(parameter.dtype, allowed, f"Input '{parameter_name}' of '{op.type}'")
        sample_shape = _infer_shape_input(shape, op.type)
        out_dtype = parameter.dtype if out_dtype_attr is None else op.attrs[out_dtype_attr]
        if out_dtype_attr is not None:
            check_dtype(out_dtype, _POISSON_TYPES, f"Attribute '{out_dtype_attr}' of '{op.type}'")
        return [(out_dtype, sample_shape.concatenate(parameter.shape))]

    return infer


def _gamma_kernel(attrs):
    def random_gamma(context, shape, alpha):
        dims = _run_shape(shape, "RandomGamma") + alpha.shape
        generator = _generator(context, attrs)
        draw_dtype = _float_draw_dtype(_dtypes.as_dtype(alpha.dtype))
        valid = alpha > 0
        values = generator.standard_gamma(np.where(valid, alpha, 1), dims, draw_dtype)
        # TensorFlow gives nan for a shape parameter that is not positive.
        values = np.where(valid, values, np.nan)
        return values.astype(alpha.dtype, copy=False)

    return random_gamma


def _poisson_kernel(attrs):
    out_dtype = _dtypes.numpy_dtype(attrs["dtype"])

    def random_poisson(context, shape, rate):
        dims = _run_shape(shape, "RandomPoissonV2") + rate.shape
        generator = _generator(context, attrs)
        negative = rate < 0
        if negative.any() and out_dtype.kind != "f":
            raise InvalidArgumentError(None, None, "rate must not be negative for integer samples")
        values = generator.poisson(np.where(negative, 0, rate), dims)
        if negative.any():
            values = np.where(negative, np.nan, values)  # as TensorFlow
        return values.astype(out_dtype, copy=False)

    return random_poisson


define_op(
    "RandomGamma",
    _infer_with_parameter_shape("alpha", FLOAT_TYPES),
    _gamma_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)
define_op(
    "RandomPoissonV2",
    _infer_with_parameter_shape("rate", _POISSON_TYPES, "dtype"),
    _poisson_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)


# -- the user-facing functions -------------------------------------------------------------------
def _shape_input(shape, function: str, dtype=None) -> Tensor:
    """The 1-D int tensor a ``shape`` argument (list, tensor or mix) gives."""
    return _as_index_vector(shape, "shape", dtype, owner=function)


def _float_dtype(dtype, function: str) -> _dtypes.DType:
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in FLOAT_TYPES:
        raise _build_error(
            TypeError, function, f"dtype must be a floating point type, got {dtype.name}"
        )
    return dtype


def _scaled_source(op_type, function, shape, mean, stddev, dtype, seed, name) -> Tensor:
    """``op_type(shape) * stddev + mean``, TensorFlow's graph for normal draws."""
    dtype = _float_dtype(dtype, function)
    graph = graph_of([shape, mean, stddev])
    with graph.as_default(), graph.name_scope(name or function) as scope:
        shape = _shape_input(shape, function)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        attrs = {"dtype": dtype, **op_seed_attrs(seed, graph)}
        draws = apply_op(op_type, (shape,), attrs, op_type).outputs[0]
        return add(multiply(draws, stddev, name="mul"), mean, name=scope)


def random_normal(
    shape,
    mean=0.0,
    stddev=1.0,
    dtype=_dtypes.float32,
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> Tensor:
    """A tensor of ``shape`` drawn from a normal distribution (``tf.compat.v1.random_normal``).

    ``shape`` is a list of ints, a 1-D int tensor, or a list mixing ints and scalar tensors.
    ``seed`` is the op seed, combined with the graph seed (`dataflow.framework.random_seed`)."""
    return _scaled_source(
        "RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed, name
    )


def truncated_normal(
    shape,
    mean=0.0,
    stddev=1.0,
    dtype=_dtypes.float32,
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> Tensor:
    """A tensor drawn from a normal distribution whose draws farther than two standard
    deviations from the mean are drawn again (``tf.compat.v1.truncated_normal``)."""
    return _scaled_source(
        "TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name
    )


def random_uniform(
    shape,
    minval=0,
    maxval=None,
    dtype=_dtypes.float32,
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> Tensor:
    """A tensor drawn uniformly from ``[minval, maxval)`` (``tf.compat.v1.random_uniform``).

    For floats ``maxval`` defaults to 1; an integer ``dtype`` (int32, int64) needs ``maxval``,
    and the draws are then unbiased integers."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_TYPES:
        raise _build_error(
            ValueError,
            "random_uniform",
            f"dtype must be one of float16, float32, float64, int32, int64, got {dtype.name}",
        )
    if maxval is None:
        if dtype.is_integer:
            raise _build_error(
                ValueError, "random_uniform", f"Must specify maxval for integer dtype {dtype.name}"
            )
        maxval = 1
    graph = graph_of([shape, minval, maxval])
    with graph.as_default(), graph.name_scope(name or "random_uniform") as scope:
        shape = _shape_input(shape, "random_uniform")
        # As TensorFlow: the default range [0, 1) of floats adds no op for its bounds.
        minval_is_zero = type(minval) is int and minval == 0
        maxval_is_one = type(maxval) is int and maxval == 1
        if not (minval_is_zero and maxval_is_one) or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seeds = op_seed_attrs(seed, graph)
        if dtype.is_integer:
            return apply_op("RandomUniformInt", (shape, minval, maxval), seeds, scope).outputs[0]
        draws = apply_op("RandomUniform", (shape,), {"dtype": dtype, **seeds}).outputs[0]
        if minval_is_zero:
            return draws if maxval_is_one else multiply(draws, maxval, name="Mul")
        range_ = subtract(maxval, minval, name="sub")
        return add(multiply(draws, range_, name="mul"), minval, name=scope)


def random_shuffle(value, seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """``value`` with its first dimension shuffled (``tf.compat.v1.random_shuffle``)."""
    graph = graph_of([value])
    with graph.as_default():
        value = convert_to_tensor(value, name="value")
        attrs = op_seed_attrs(seed, graph)
        return apply_op("RandomShuffle", (value,), attrs, name or "RandomShuffle").outputs[0]


def _categorical(logits, num_samples, dtype, seed, function) -> Tensor:
    logits = convert_to_tensor(logits, name="logits")
    num_samples = convert_to_tensor(num_samples, dtype=_dtypes.int32, name="num_samples")
    dtype = _dtypes.int64 if dtype is None else _dtypes.as_dtype(dtype)
    attrs = {"output_dtype": dtype, **op_seed_attrs(seed, logits.graph)}
    return apply_op("Multinomial", (logits, num_samples), attrs, "Multinomial").outputs[0]


def multinomial(
    logits,
    num_samples,
    seed: Optional[int] = None,
    name: Optional[str] = None,
    output_dtype=None,
) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` (``[batch_size, num_classes]``,
    unnormalized log-probabilities), as ``[batch_size, num_samples]`` of ``output_dtype``
    (int64 by default).  ``tf.compat.v1.multinomial``."""
    graph = graph_of([logits])
    with graph.as_default(), graph.name_scope(name or "multinomial"):
        return _categorical(logits, num_samples, output_dtype, seed, "multinomial")


def categorical(
    logits, num_samples, dtype=None, seed: Optional[int] = None, name: Optional[str] = None
) -> Tensor:
    """`multinomial` with TensorFlow 2's argument names (``tf.random.categorical``)."""
    graph = graph_of([logits])
    with graph.as_default(), graph.name_scope(name or "categorical"):
        return _categorical(logits, num_samples, dtype, seed, "categorical")


def random_gamma(
    shape,
    alpha,
    beta=None,
    dtype=_dtypes.float32,
    seed: Optional[int] = None,
    name: Optional[str] = None,
) -> Tensor:
    """Samples of Gamma(``alpha``, rate ``beta``), of shape ``shape + broadcast(alpha, beta)``
    (``tf.compat.v1.random_gamma``).  Tiny positive values replace zeros, as in TensorFlow."""
    dtype = _float_dtype(dtype, "random_gamma")
    graph = graph_of([shape, alpha, beta])
    with graph.as_default(), graph.name_scope(name or "random_gamma"):
        shape = _shape_input(shape, "random_gamma", _dtypes.int32)
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
        if not (beta.shape.is_fully_defined() and alpha.shape.is_fully_defined()) or (
            np.broadcast_shapes(tuple(alpha.shape.as_list()), tuple(beta.shape.as_list()))
            != tuple(alpha.shape.as_list())
        ):
            alpha = add(alpha, multiply(beta, 0), name="alpha_broadcast")
        attrs = op_seed_attrs(seed, graph)
        draws = apply_op("RandomGamma", (shape, alpha), attrs, "RandomGamma").outputs[0]
        tiny = np.finfo(_dtypes.numpy_dtype(dtype)).tiny
        return maximum(tiny, realdiv(draws, beta, name="truediv"), name="Maximum")


def random_poisson(
    lam, shape, dtype=_dtypes.float32, seed: Optional[int] = None, name: Optional[str] = None
) -> Tensor:
    """Samples of Poisson(``lam``), of shape ``shape + lam.shape`` and ``dtype``
    (``tf.compat.v1.random_poisson`` and ``tf.compat.v1.random.poisson``: ``lam`` first)."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in _POISSON_TYPES:
        raise _build_error(
            TypeError,
            "random_poisson",
            f"dtype must be one of float16, float32, float64, int32, int64, got {dtype.name}",
        )
    graph = graph_of([lam, shape])
    with graph.as_default(), graph.name_scope(name or "random_poisson"):
        shape = _shape_input(shape, "random_poisson")
        with graph.name_scope("RandomPoissonV2") as op_name:
            lam = convert_to_tensor(lam, name="rate")
        attrs = {"dtype": dtype, **op_seed_attrs(seed, graph)}
        return apply_op("RandomPoissonV2", (shape, lam), attrs, op_name).outputs[0]


# -- the gradient of gamma samples -----------------------------------------------------------------
_EPSILON = float(np.finfo(np.float64).eps)


def _regularized_lower_gamma(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x), the CDF of Gamma(a, 1) at x > 0, in float64: the power series below ``a + 1``,
    the continued fraction of ``1 - P`` above (Numerical Recipes' ``gammp``)."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(x))
    a, x = (np.array(v, np.float64).reshape(-1) for v in np.broadcast_arrays(a, x))
    result = np.empty_like(a)
    with np.errstate(all="ignore"):
        log_prefactor = a * np.log(x) - x - np.vectorize(math.lgamma, otypes=[np.float64])(a)
        near = x < a + 1
        # Series: P = prefactor / a * sum_n x^n / ((a+1)...(a+n)); terms shrink once n > x - a.
        sa, sx = a[near], x[near]
        term = 1.0 / sa
        total = term.copy()
        for n in builtins_range(1, 2000):
            term = term * sx / (sa + n)
            total += term
            if not (term > total * _EPSILON).any():
                break
        result[near] = total * np.exp(log_prefactor[near])
        # Continued fraction for Q = 1 - P (modified Lentz); converges fast above a + 1.
        fa, fx = a[~near], x[~near]
        tiny = 1e-300
        b = fx + 1.0 - fa
        c = np.full_like(b, 1.0 / tiny)
        d = 1.0 / b
        h = d.copy()
        for i in builtins_range(1, 2000):
            an = -i * (i - fa)
            b = b + 2.0
            d = an * d + b
            d = 1.0 / np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            delta = d * c
            h = h * delta
            if not (np.abs(delta - 1.0) > 8 * _EPSILON).any():  # rounding leaves a few ulp
                break
        result[~near] = 1.0 - np.exp(log_prefactor[~near]) * h
    return result.reshape(shape)


def _gamma_sample_grad(alpha: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """d sample / d alpha of Gamma(alpha, 1) samples, holding their quantile fixed (implicit
    reparameterization): ``-(dP/dalpha) / density``, with dP/dalpha by central differences."""
    a = np.asarray(alpha, np.float64)
    x = np.asarray(sample, np.float64)
    step = 1e-5 * np.maximum(a, 1.0)
    d_cdf = (_regularized_lower_gamma(a + step, x) - _regularized_lower_gamma(a - step, x)) / (
        2 * step
    )
    log_gamma = np.vectorize(math.lgamma, otypes=[np.float64])(a)
    with np.errstate(all="ignore"):
        density = np.exp((a - 1) * np.log(x) - x - log_gamma)
        grad = np.where(density > 0, -d_cdf / density, 0.0)
    return grad.astype(np.result_type(alpha, sample), copy=False)


def _infer_gamma_grad(op):
    alpha, sample = op.inputs
    check_dtype(alpha.dtype, FLOAT_TYPES, f"Input 'alpha' of '{op.type}'")
    return [(alpha.dtype, broadcast_shape(alpha.shape, sample.shape))]


define_op("RandomGammaGrad", _infer_gamma_grad, lambda attrs: _gamma_sample_grad)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402
from .array_ops import range as _range  # noqa: E402
from .array_ops import size  # noqa: E402
from .math_ops import reduce_sum  # noqa: E402


@RegisterGradient("RandomGamma")
def _random_gamma_grad(op, grad):
    """The gradient with respect to ``alpha`` (TensorFlow's): each sample moves with alpha as
    its quantile stays fixed, summed over the sample dimensions (the leading ``len(shape)``)."""
    shape, alpha = op.inputs
    partial = apply_op("RandomGammaGrad", (alpha, op.outputs[0])).outputs[0]
    return None, reduce_sum(multiply(grad, partial), _range(size(shape)))


# TensorFlow defines no gradient of RandomGammaGrad either.
NotDifferentiable("RandomGammaGrad")

for _op_type in (
    "RandomStandardNormal",
    "RandomUniform",
    "RandomUniformInt",
    "TruncatedNormal",
    "RandomShuffle",
    "Multinomial",
    "RandomPoissonV2",
):
    NotDifferentiable(_op_type)

"""Stateless random ops: draws that are a pure function of a ``seed`` of two integers.

The same ``shape`` and ``seed`` give the same values in every run, every Session and every
process, so these ops hold no state and passes may fold them like any other pure op.  Uniform,
normal, truncated normal, integer and categorical draws are TensorFlow's bit for bit: they run
TensorFlow's Philox4x32-10 stream (`dataflow.ops.philox`) with its key scrambling, block layout
and conversions (``tf.random.stateless_uniform([2], seed=[1, 2])`` gives the same two floats in
both).  Gamma, Poisson, binomial and parameterized truncated normal draws come from numpy's
samplers keyed by the same Philox key and counter: deterministic in the seed and distributed as
TensorFlow's, but not its values.

Graphs follow TensorFlow's: ``stateless_normal`` is ``StatelessRandomNormal(shape, seed) *
stddev + mean``, ``stateless_uniform`` scales ``StatelessRandomUniform`` by the range.  None
of these ops has a gradient with respect to its seed or shape.
"""

from __future__ import annotations

import enum
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from . import philox
from .index_shuffle_ops import (  # noqa: F401 - defined there, reached here too
    _INT_TYPES,
    _SEED_TYPES,
    index_shuffle,
    random_index_shuffle,
    sobol_sample,
)
from .math_ops import FLOAT_TYPES, INDEX_TYPES, add, check_dtype, graph_of, multiply, subtract
from .random_ops import _infer_shape_input, _run_shape, _shape_input, infer_int_bounds

__all__ = [
    "create_rng_state",
    "fold_in",
    "index_shuffle",
    "random_index_shuffle",
    "sobol_sample",
    "split",
    "stateless_binomial",
    "stateless_categorical",
    "stateless_gamma",
    "stateless_multinomial",
    "stateless_normal",
    "stateless_parameterized_truncated_normal",
    "stateless_poisson",
    "stateless_shuffle",
    "stateless_truncated_normal",
    "stateless_uniform",
]

# Truncated normals reserve 256 words per output group, so that a group's draws do not depend
# on how many words the groups before it rejected (random_op.h, kReservedSamplesPerOutput).
_RESERVED_WORDS_PER_OUTPUT = 256


def _check_seed(seed: Tensor, op_type: str) -> None:
    check_dtype(seed.dtype, _SEED_TYPES, f"Input 'seed' of '{op_type}'")
    if not seed.shape.is_compatible_with([2]):
        raise ValueError(f"{op_type}: seed must have shape [2], got {seed.shape}")


def _run_seed(seed: np.ndarray, op_type: str):
    if seed.shape != (2,):
        raise InvalidArgumentError(
            None, None, f"{op_type}: seed must have shape [2], not {list(seed.shape)}"
        )
    return philox.key_and_counter(seed)


def _size(dims: tuple) -> int:
    return int(np.prod(dims, dtype=np.int64))


# -- fixed-size draws: one 128-bit block per group of outputs ----------------------------------
def _uniform_values(key, counter, count: int, dtype: _dtypes.DType) -> np.ndarray:
    if dtype is _dtypes.float64:
        words = philox.words(key, counter, 2 * count)
        return philox.uniform_float64(words[0::2], words[1::2])
    words = philox.words(key, counter, count)
    if dtype is _dtypes.float16:
        return philox.uniform_float16(words)
    return philox.uniform_float32(words).astype(_dtypes.numpy_dtype(dtype), copy=False)


def _normal_values(key, counter, count: int, dtype: _dtypes.DType) -> np.ndarray:
    if dtype is _dtypes.float64:
        words = philox.words(key, counter, 4 * -(-count // 2)).reshape(-1, 4)
        pairs = philox.box_muller_float64(*words.T)
    else:
        words = philox.words(key, counter, 2 * -(-count // 2)).reshape(-1, 2)
        pairs = philox.box_muller_float32(*words.T)
    values = np.stack(pairs, axis=-1).reshape(-1)[:count]
    return values.astype(_dtypes.numpy_dtype(dtype), copy=False)


def _truncated_normal_values(key, counter, count: int, dtype: _dtypes.DType) -> np.ndarray:
    """TensorFlow's groups: 4 outputs (2 in float64) per group, each group's candidates from its
    own reserved stretch of the stream, kept in order while within two deviations."""
    wide = dtype is _dtypes.float64
    group, words_per_pair = (2, 4) if wide else (4, 2)
    groups = -(-count // group)
    stride_blocks = group * _RESERVED_WORDS_PER_OUTPUT // 4
    out = np.empty((groups, group), np.float64 if wide else np.float32)
    sampler = philox.box_muller_float64 if wide else philox.box_muller_float32
    pending = np.arange(groups, dtype=np.uint64)
    pairs = group  # candidates drawn per group in the first pass: enough for most groups
    while pending.size:
        # every pending group's stretch at once: [groups, blocks] offsets, then their words
        per_group = pairs * words_per_pair // 4
        offsets = pending[:, None] * np.uint64(stride_blocks) + np.arange(
            per_group, dtype=np.uint64
        )
        words = philox.blocks_at(key, counter, offsets).reshape(len(pending), pairs, words_per_pair)
        candidates = np.stack(sampler(*np.moveaxis(words, -1, 0)), axis=-1).reshape(
            len(pending), -1
        )
        inside = np.abs(candidates) < 2
        full = inside.sum(axis=1) >= group
        # the first ``group`` candidates inside, in order, of each group that has enough
        first_inside = np.argsort(~inside[full], axis=1, kind="stable")[:, :group]
        out[pending[full].astype(np.int64)] = np.take_along_axis(candidates[full], first_inside, 1)
        pending = pending[~full]
        pairs *= 4
    return out.reshape(-1)[:count].astype(_dtypes.numpy_dtype(dtype), copy=False)


_FLOAT_DRAWS = {
    "StatelessRandomUniform": _uniform_values,
    "StatelessRandomNormal": _normal_values,
    "StatelessTruncatedNormal": _truncated_normal_values,
}


def _infer_float_draw(op):
    shape, seed = op.inputs
    _check_seed(seed, op.type)
    check_dtype(op.attrs["dtype"], FLOAT_TYPES, f"Attribute 'dtype' of '{op.type}'")
    return [(op.attrs["dtype"], _infer_shape_input(shape, op.type))]


def _float_draw_kernel(op_type: str):
    draw = _FLOAT_DRAWS[op_type]

    def make(attrs):
        dtype = attrs["dtype"]

        def stateless_draw(shape, seed):
            dims = _run_shape(shape, op_type)
            key, counter = _run_seed(seed, op_type)
            return draw(key, counter, _size(dims), dtype).reshape(dims)

        return stateless_draw

    return make


for _op_type in _FLOAT_DRAWS:
    define_op(_op_type, _infer_float_draw, _float_draw_kernel(_op_type))


def _integer_words(key, counter, count: int, wide: bool) -> np.ndarray:
    """One unsigned word per output: 32 bits, or 64 from two (low word first)."""
    if wide:
        words = philox.words(key, counter, 2 * count)
        return philox.unsigned64(words[0::2], words[1::2])
    return philox.words(key, counter, count).astype(np.uint64)


def _bounded_ints(key, counter, dims: tuple, minval, maxval) -> np.ndarray:
    """``minval`` plus each word modulo the range, as TensorFlow (a bias of at most range/2^32
    of the span, which TensorFlow accepts too)."""
    wide = minval.dtype == np.int64
    span = np.uint64((int(maxval) - int(minval)) % (1 << (64 if wide else 32)))
    words = _integer_words(key, counter, _size(dims), wide)
    offsets = (words % span).astype(np.int64)
    return (offsets + int(minval)).astype(minval.dtype).reshape(dims)


def _full_ints(key, counter, dims: tuple, out: np.dtype) -> np.ndarray:
    words = _integer_words(key, counter, _size(dims), out.itemsize == 8)
    unsigned = words.astype(np.uint64 if out.itemsize == 8 else np.uint32)
    return unsigned.view(out).reshape(dims)


def _infer_uniform_int(op):
    shape, seed, minval, maxval = op.inputs
    _check_seed(seed, op.type)
    return infer_int_bounds(op.type, shape, minval, maxval)


def _uniform_int_kernel(attrs):
    def stateless_random_uniform_int(shape, seed, minval, maxval):
        dims = _run_shape(shape, "StatelessRandomUniformInt")
        key, counter = _run_seed(seed, "StatelessRandomUniformInt")
        if np.ndim(minval) or np.ndim(maxval):
            raise InvalidArgumentError(None, None, "minval and maxval must be scalars")
        if not minval < maxval:
            raise InvalidArgumentError(None, None, f"Need minval < maxval: {minval} >= {maxval}")
        return _bounded_ints(key, counter, dims, minval, maxval)

    return stateless_random_uniform_int


define_op("StatelessRandomUniformInt", _infer_uniform_int, _uniform_int_kernel)


def _infer_full_int(op):
    shape, seed = op.inputs
    _check_seed(seed, op.type)
    check_dtype(op.attrs["dtype"], _INT_TYPES, f"Attribute 'dtype' of '{op.type}'")
    return [(op.attrs["dtype"], _infer_shape_input(shape, op.type))]


def _full_int_kernel(attrs):
    out = _dtypes.numpy_dtype(attrs["dtype"])

    def stateless_random_uniform_full_int(shape, seed):
        dims = _run_shape(shape, "StatelessRandomUniformFullInt")
        key, counter = _run_seed(seed, "StatelessRandomUniformFullInt")
        return _full_ints(key, counter, dims, out)

    return stateless_random_uniform_full_int


define_op("StatelessRandomUniformFullInt", _infer_full_int, _full_int_kernel)


# -- the same draws from a Generator's state variable, which each draw moves on -----------------
# A state is three int64 words: the 128-bit counter (low word first) and the 64-bit key.  A draw
# of n values moves the counter on by 256 n blocks, as TensorFlow's stateful ops do, so that
# draws never overlap.
_BLOCKS_PER_OUTPUT = 256
_STATEFUL_FLOAT_DRAWS = {
    "StatefulUniform": _uniform_values,
    "StatefulStandardNormalV2": _normal_values,
    "StatefulTruncatedNormal": _truncated_normal_values,
}


def _state_key_counter(state: np.ndarray):
    words = [int(w) for w in np.asarray(state, np.int64).view(np.uint64)]
    if len(words) != 3:
        raise InvalidArgumentError(
            None, None, f"a Philox generator's state has 3 words, got {len(words)}"
        )
    mask = 0xFFFFFFFF
    counter = (words[0] & mask, words[0] >> 32, words[1] & mask, words[1] >> 32)
    return (words[2] & mask, words[2] >> 32), counter


def skipped_state(state: np.ndarray, blocks: int) -> np.ndarray:
    """``state`` with its 128-bit counter moved on by ``blocks``."""
    words = [int(w) for w in np.asarray(state, np.int64).view(np.uint64)]
    counter = (words[0] | words[1] << 64) + blocks
    counter &= (1 << 128) - 1
    moved = [counter & 0xFFFFFFFFFFFFFFFF, counter >> 64, words[2]]
    return np.array(moved, np.uint64).view(np.int64)


def _advance(context, ref, count: int):
    """The key and counter of the generator ``ref`` holds, whose state moves past ``count``
    outputs."""
    from .variables import _check_assignable

    state = context.read_variable(ref)
    key, counter = _state_key_counter(state)
    moved = _check_assignable(ref, skipped_state(state, count * _BLOCKS_PER_OUTPUT), True, True)
    context.update_variable(ref, state, moved)
    return key, counter


def _check_algorithm(algorithm, op_type: str) -> None:
    if int(algorithm) != 1:
        raise InvalidArgumentError(
            None, None, f"{op_type}: only the Philox algorithm (1) is supported, got {algorithm}"
        )


def _infer_stateful_float(op):
    _, algorithm, shape = op.inputs
    check_dtype(op.attrs["dtype"], FLOAT_TYPES, f"Attribute 'dtype' of '{op.type}'")
    return [(op.attrs["dtype"], _infer_shape_input(shape, op.type))]


def _stateful_float_kernel(op_type: str):
    draw = _STATEFUL_FLOAT_DRAWS[op_type]

    def make(attrs):
        dtype = attrs["dtype"]

        def stateful_draw(context, ref, algorithm, shape):
            _check_algorithm(algorithm, op_type)
            dims = _run_shape(shape, op_type)
            key, counter = _advance(context, ref, _size(dims))
            return draw(key, counter, _size(dims), dtype).reshape(dims)

        return stateful_draw

    return make


for _op_type in _STATEFUL_FLOAT_DRAWS:
    define_op(
        _op_type,
        _infer_stateful_float,
        _stateful_float_kernel(_op_type),
        stateful=True,
        wants_context=True,
    )


def _infer_stateful_int(op):
    _, algorithm, shape, minval, maxval = op.inputs
    return infer_int_bounds(op.type, shape, minval, maxval)


def _stateful_int_kernel(attrs):
    def stateful_uniform_int(context, ref, algorithm, shape, minval, maxval):
        _check_algorithm(algorithm, "StatefulUniformInt")
        dims = _run_shape(shape, "StatefulUniformInt")
        if not minval < maxval:
            raise InvalidArgumentError(None, None, f"Need minval < maxval: {minval} >= {maxval}")
        key, counter = _advance(context, ref, _size(dims))
        return _bounded_ints(key, counter, dims, minval, maxval)

    return stateful_uniform_int


def _infer_stateful_full_int(op):
    _, algorithm, shape = op.inputs
    check_dtype(op.attrs["dtype"], _INT_TYPES, f"Attribute 'dtype' of '{op.type}'")
    return [(op.attrs["dtype"], _infer_shape_input(shape, op.type))]


def _stateful_full_int_kernel(attrs):
    out = _dtypes.numpy_dtype(attrs["dtype"])

    def stateful_uniform_full_int(context, ref, algorithm, shape):
        _check_algorithm(algorithm, "StatefulUniformFullInt")
        dims = _run_shape(shape, "StatefulUniformFullInt")
        key, counter = _advance(context, ref, _size(dims))
        return _full_ints(key, counter, dims, out)

    return stateful_uniform_full_int


define_op(
    "StatefulUniformInt",
    _infer_stateful_int,
    _stateful_int_kernel,
    stateful=True,
    wants_context=True,
)
define_op(
    "StatefulUniformFullInt",
    _infer_stateful_full_int,
    _stateful_full_int_kernel,
    stateful=True,
    wants_context=True,
)


def _infer_skip(op):
    return [(_dtypes.int64, TensorShape([3]))]


def _skip_kernel(attrs):
    def rng_read_and_skip(context, ref, algorithm, delta):
        _check_algorithm(algorithm, "RngReadAndSkip")
        from .variables import _check_assignable

        state = context.read_variable(ref)
        moved = skipped_state(state, int(delta) * _BLOCKS_PER_OUTPUT)
        context.update_variable(ref, state, _check_assignable(ref, moved, True, True))
        return np.asarray(state, np.int64)

    return rng_read_and_skip


define_op("RngReadAndSkip", _infer_skip, _skip_kernel, stateful=True, wants_context=True)


# -- categorical draws ---------------------------------------------------------------------------
def _infer_multinomial(op):
    logits, num_samples, seed = op.inputs
    _check_seed(seed, op.type)
    check_dtype(logits.dtype, FLOAT_TYPES, f"Input 'logits' of '{op.type}'")
    check_dtype(op.attrs["output_dtype"], INDEX_TYPES, f"Attribute 'output_dtype' of '{op.type}'")
    if logits.shape.ndims not in (None, 2):
        raise ValueError(f"{op.type}: logits must be 2-D, got shape {logits.shape}")
    samples = numpy_value_or_none(num_samples)
    if samples is not None and samples < 0:
        raise ValueError(f"{op.type}: num_samples should be nonnegative, got {int(samples)}")
    batch = logits.shape[0] if logits.shape.ndims == 2 else None
    return [
        (op.attrs["output_dtype"], TensorShape([batch, None if samples is None else int(samples)]))
    ]


def _multinomial_kernel(attrs):
    out = _dtypes.numpy_dtype(attrs["output_dtype"])

    def stateless_multinomial(logits, num_samples, seed):
        key, counter = _run_seed(seed, "StatelessMultinomial")
        batch, classes = logits.shape
        samples = int(num_samples)
        if samples < 0:
            raise InvalidArgumentError(None, None, f"num_samples should be >= 0, got {samples}")
        if classes == 0 and batch and samples:
            raise InvalidArgumentError(None, None, "num_classes should be positive, got 0")
        if not batch or not samples:
            return np.zeros((batch, samples), out)
        # As TensorFlow's kernel on one thread: rows in turn, two words per draw, each draw a
        # double in [0, 1) scaled by the row's unnormalised total; infinite logits count 0.
        words = philox.words(key, counter, 2 * batch * samples).reshape(batch, samples, 2)
        draws = philox.uniform_float64(words[..., 0], words[..., 1])
        finite = np.isfinite(logits)
        highest = np.where(finite, logits, -np.inf).max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", over="ignore"):
            weights = np.where(finite, np.exp(logits.astype(np.float64) - highest), 0.0)
        cumulative = np.cumsum(weights, axis=1)
        result = np.empty((batch, samples), np.int64)
        for row in range(batch):
            targets = draws[row] * cumulative[row, -1]
            result[row] = np.searchsorted(cumulative[row], targets, side="right")
        return result.astype(out)

    return stateless_multinomial


define_op("StatelessMultinomial", _infer_multinomial, _multinomial_kernel)


# -- draws by numpy's samplers, keyed by the seed -------------------------------------------------
def _numpy_generator(seed: np.ndarray, op_type: str) -> np.random.Generator:
    key, counter = _run_seed(seed, op_type)
    return np.random.Generator(
        np.random.Philox(key=key[0] | key[1] << 32, counter=counter[2] | counter[3] << 32)
    )


def _infer_parameterised(parameter_count: int, out_attr: Optional[str], allowed):
    def infer(op):
        shape, seed, *parameters = op.inputs
        _check_seed(seed, op.type)
        for parameter in parameters:
            check_dtype(parameter.dtype, allowed, f"Input '{parameter.op.name}' of '{op.type}'")
        dims = _infer_shape_input(shape, op.type)
        dtype = op.attrs[out_attr] if out_attr else parameters[0].dtype
        return [(dtype, dims)]

    return infer


def _broadcast_parameters(dims: tuple, parameters, op_type: str):
    try:
        return [np.broadcast_to(p, dims) for p in parameters]
    except ValueError:
        shapes = ", ".join(str(list(np.shape(p))) for p in parameters)
        raise InvalidArgumentError(
            None, None, f"{op_type}: parameters of shapes {shapes} do not broadcast to {list(dims)}"
        ) from None


def _gamma_kernel(attrs):
    def stateless_random_gamma(shape, seed, alpha):
        dims = _run_shape(shape, "StatelessRandomGammaV2")
        (alpha,) = _broadcast_parameters(dims, [alpha], "StatelessRandomGammaV2")
        generator = _numpy_generator(seed, "StatelessRandomGammaV2")
        valid = alpha > 0
        values = generator.standard_gamma(np.where(valid, alpha, 1.0), dims)
        return np.where(valid, values, np.nan).astype(alpha.dtype)

    return stateless_random_gamma


def _poisson_kernel(attrs):
    out = _dtypes.numpy_dtype(attrs["dtype"])

    def stateless_random_poisson(shape, seed, lam):
        dims = _run_shape(shape, "StatelessRandomPoisson")
        (lam,) = _broadcast_parameters(dims, [lam], "StatelessRandomPoisson")
        generator = _numpy_generator(seed, "StatelessRandomPoisson")
        negative = lam < 0
        values = generator.poisson(np.where(negative, 0.0, lam), dims).astype(np.float64)
        if negative.any():
            if out.kind != "f":
                raise InvalidArgumentError(None, None, "lam must not be negative for integers")
            values = np.where(negative, np.nan, values)
        return values.astype(out)

    return stateless_random_poisson


def _binomial_kernel(attrs):
    out = _dtypes.numpy_dtype(attrs["dtype"])

    def stateless_random_binomial(shape, seed, counts, probs):
        dims = _run_shape(shape, "StatelessRandomBinomial")
        counts, probs = _broadcast_parameters(dims, [counts, probs], "StatelessRandomBinomial")
        if (probs < 0).any() or (probs > 1).any() or (counts < 0).any():
            raise InvalidArgumentError(
                None, None, "StatelessRandomBinomial: probs must be in [0, 1] and counts >= 0"
            )
        generator = _numpy_generator(seed, "StatelessRandomBinomial")
        return generator.binomial(counts.astype(np.int64), probs, dims).astype(out)

    return stateless_random_binomial


def _parameterized_truncated_normal_kernel(attrs):
    def stateless_parameterized_truncated_normal(shape, seed, means, stddevs, minvals, maxvals):
        op_type = "StatelessParameterizedTruncatedNormal"
        dims = _run_shape(shape, op_type)
        means, stddevs, minvals, maxvals = _broadcast_parameters(
            dims, [means, stddevs, minvals, maxvals], op_type
        )
        if (stddevs <= 0).any() or (minvals >= maxvals).any():
            raise InvalidArgumentError(
                None, None, f"{op_type}: stddevs must be positive and minvals below maxvals"
            )
        generator = _numpy_generator(seed, op_type)
        # Inverse transform between the standardised bounds' normal CDFs: exact in float64
        # for bounds within about 8 deviations of the mean on either side.
        low = (minvals - means) / stddevs
        high = (maxvals - means) / stddevs
        cdf_low, cdf_high = _normal_cdf(low), _normal_cdf(high)
        uniform = generator.random(dims)
        standard = _normal_quantile(cdf_low + uniform * (cdf_high - cdf_low))
        values = np.clip(means + stddevs * standard, minvals, maxvals)
        return values.astype(means.dtype)

    return stateless_parameterized_truncated_normal


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    from math import erf, sqrt

    return 0.5 * (1.0 + np.vectorize(erf, otypes=[np.float64])(np.asarray(x) / sqrt(2.0)))


def _normal_quantile(p: np.ndarray) -> np.ndarray:
    """The standard normal's quantile, by Newton's method on its CDF from a good start."""
    from math import sqrt

    p = np.clip(np.asarray(p, np.float64), 1e-300, 1 - 1e-16)
    x = np.where(p < 0.5, -1.0, 1.0) * np.sqrt(-2.0 * np.log(np.minimum(p, 1 - p)))
    for _ in range(60):
        step = (_normal_cdf(x) - p) / (np.exp(-0.5 * x * x) / sqrt(2.0 * np.pi))
        x = x - np.clip(step, -1.0, 1.0)
        if np.all(np.abs(step) < 1e-14 * np.maximum(1.0, np.abs(x))):
            break
    return x


define_op("StatelessRandomGammaV2", _infer_parameterised(1, None, FLOAT_TYPES), _gamma_kernel)
define_op(
    "StatelessRandomPoisson",
    _infer_parameterised(1, "dtype", FLOAT_TYPES | INDEX_TYPES),
    _poisson_kernel,
)
define_op(
    "StatelessRandomBinomial",
    _infer_parameterised(2, "dtype", FLOAT_TYPES | INDEX_TYPES),
    _binomial_kernel,
)
define_op(
    "StatelessParameterizedTruncatedNormal",
    _infer_parameterised(4, None, FLOAT_TYPES),
    _parameterized_truncated_normal_kernel,
)


# -- shuffles -------------------------------------------------------------------------------------
def _infer_shuffle(op):
    value, seed = op.inputs
    _check_seed(seed, op.type)
    return [(value.dtype, value.shape)]


def _shuffle_kernel(attrs):
    def stateless_shuffle(value, seed):
        key, counter = _run_seed(seed, "StatelessShuffle")
        if value.ndim == 0:
            raise InvalidArgumentError(None, None, "StatelessShuffle: value must be at least 1-D")
        size = len(value)
        order = np.arange(size)
        if size < 2:
            return value.copy()
        # Fisher-Yates from the front, one word per swap, as TensorFlow's shuffle kernel.
        words = philox.words(key, counter, size - 1).astype(np.int64)
        for i in range(size - 1):
            j = i + int(words[i] % (size - i))
            order[i], order[j] = order[j], order[i]
        return value[order]

    return stateless_shuffle


define_op("StatelessShuffle", _infer_shuffle, _shuffle_kernel)


# -- the user-facing functions -------------------------------------------------------------------
class Algorithm(enum.Enum):
    """The counter-based generators TensorFlow names; Philox is the one dataflow runs (and what
    ``AUTO_SELECT`` chooses on a CPU)."""

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


_ALGORITHMS = {"philox": 1, "threefry": 2, "auto_select": 3}


def _check_alg(alg, function: str) -> None:
    """Philox is the one algorithm here, and what TensorFlow's "auto_select" picks on a CPU."""
    if alg is None or alg == "auto_select" or alg == 3 or alg == Algorithm.AUTO_SELECT:
        return
    if alg in ("philox", 1, Algorithm.PHILOX):
        return
    raise ValueError(
        f"{function} at {_user_location()}: alg must be 'philox' or 'auto_select' (the "
        f"algorithm TensorFlow picks on a CPU), got {alg!r}"
    )


def _seed_tensor(seed, function: str) -> Tensor:
    seed = convert_to_tensor(seed, name="seed")
    if seed.dtype not in _SEED_TYPES:
        raise TypeError(
            f"{function} at {_user_location()}: seed must be int32 or int64, got {seed.dtype.name}"
        )
    return seed


def stateless_uniform(
    shape, seed, minval=0, maxval=None, dtype=_dtypes.float32, name=None, alg="auto_select"
) -> Tensor:
    """Uniform draws in ``[minval, maxval)`` that depend only on ``shape`` and ``seed`` (two
    ints). Floats default to ``[0, 1)``; integers need both bounds, or neither for draws over
    the whole range of ``dtype``."""
    dtype = _dtypes.as_dtype(dtype)
    _check_alg(alg, "stateless_uniform")
    function = "stateless_random_uniform"
    if dtype.is_integer and (minval is None) != (maxval is None):
        raise ValueError(
            f"{function} at {_user_location()}: minval and maxval must both be None or not "
            f"for integer dtype {dtype.name}"
        )
    if dtype.is_integer and maxval is None and dtype not in _INT_TYPES:
        raise ValueError(f"{function}: full-range draws take int32, int64, uint32 or uint64")
    if not dtype.is_integer and dtype not in FLOAT_TYPES:
        raise ValueError(f"{function}: dtype must be a float or an integer, got {dtype.name}")
    graph = graph_of([shape, seed, minval, maxval])
    with graph.as_default(), graph.name_scope(name or function) as scope:
        shape = _shape_input(shape, function)
        seed = _seed_tensor(seed, function)
        if dtype.is_integer and maxval is None:
            draw = apply_op("StatelessRandomUniformFullInt", (shape, seed), {"dtype": dtype})
            return draw.outputs[0]
        if dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
            op = apply_op("StatelessRandomUniformInt", (shape, seed, minval, maxval), {}, scope)
            return op.outputs[0]
        maxval = 1 if maxval is None else maxval
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        draws = apply_op("StatelessRandomUniform", (shape, seed), {"dtype": dtype}).outputs[0]
        spread = multiply(draws, subtract(maxval, minval, name="sub"), name="mul")
        return add(spread, minval, name=scope)


def _scaled_draws(op_type, function, shape, seed, mean, stddev, dtype, name) -> Tensor:
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in FLOAT_TYPES:
        raise ValueError(f"{function}: dtype must be a floating point type, got {dtype.name}")
    graph = graph_of([shape, seed, mean, stddev])
    with graph.as_default(), graph.name_scope(name or function) as scope:
        shape = _shape_input(shape, function)
        seed = _seed_tensor(seed, function)
        mean = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        draws = apply_op(op_type, (shape, seed), {"dtype": dtype}).outputs[0]
        return add(multiply(draws, stddev, name="mul"), mean, name=scope)


def stateless_normal(
    shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None, alg="auto_select"
) -> Tensor:
    """Normal draws that depend only on ``shape`` and ``seed`` (two ints)."""
    _check_alg(alg, "stateless_normal")
    return _scaled_draws(
        "StatelessRandomNormal", "stateless_random_normal", shape, seed, mean, stddev, dtype, name
    )


def stateless_truncated_normal(
    shape, seed, mean=0.0, stddev=1.0, dtype=_dtypes.float32, name=None, alg="auto_select"
) -> Tensor:
    """Normal draws within two deviations of ``mean`` (others redrawn), depending only on
    ``shape`` and ``seed``."""
    _check_alg(alg, "stateless_truncated_normal")
    return _scaled_draws(
        "StatelessTruncatedNormal",
        "stateless_truncated_normal",
        shape,
        seed,
        mean,
        stddev,
        dtype,
        name,
    )


def _multinomial(logits, num_samples, seed, output_dtype, name, function) -> Tensor:
    graph = graph_of([logits, num_samples, seed])
    with graph.as_default(), graph.name_scope(name or function) as scope:
        logits = convert_to_tensor(logits, name="logits")
        num_samples = convert_to_tensor(num_samples, dtype=_dtypes.int32, name="num_samples")
        seed = _seed_tensor(seed, function)
        attrs = {"output_dtype": _dtypes.as_dtype(output_dtype)}
        return apply_op("StatelessMultinomial", (logits, num_samples, seed), attrs, scope).outputs[
            0
        ]


def stateless_categorical(logits, num_samples, seed, dtype=_dtypes.int64, name=None) -> Tensor:
    """``num_samples`` class indices per row of ``logits`` (unnormalised log-probabilities),
    depending only on the inputs and ``seed``."""
    return _multinomial(logits, num_samples, seed, dtype, name, "stateless_categorical")


def stateless_multinomial(
    logits, num_samples, seed, output_dtype=_dtypes.int64, name=None
) -> Tensor:
    """`stateless_categorical` under its TF1 name, with ``output_dtype``."""
    return _multinomial(logits, num_samples, seed, output_dtype, name, "stateless_multinomial")


def _parameterised(op_type, function, shape, seed, parameters, attrs, name) -> Tensor:
    graph = graph_of([shape, seed, *parameters.values()])
    with graph.as_default(), graph.name_scope(name or function) as scope:
        shape = _shape_input(shape, function)
        seed = _seed_tensor(seed, function)
        inputs = [shape, seed]
        for param_name, (value, dtype) in parameters.items():
            inputs.append(convert_to_tensor(value, dtype=dtype, name=param_name))
        return apply_op(op_type, tuple(inputs), attrs, scope).outputs[0]


def stateless_gamma(shape, seed, alpha, beta=None, dtype=_dtypes.float32, name=None) -> Tensor:
    """Gamma draws of shape ``alpha`` and rate ``beta`` (1 when None); ``shape`` ends in the
    broadcast shape of ``alpha`` and ``beta``.  Depends only on the inputs and ``seed``; the
    gradient reaches ``alpha`` (each draw moves with alpha as its quantile stays put) and
    ``beta``."""
    from .array_ops import ones_like
    from .math_ops import maximum, realdiv

    dtype = _dtypes.as_dtype(dtype)
    graph = graph_of([shape, seed, alpha, beta])
    with graph.as_default(), graph.name_scope(name or "stateless_random_gamma") as scope:
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = convert_to_tensor(1 if beta is None else beta, dtype=dtype, name="beta")
        alpha = multiply(alpha, ones_like(beta))  # alpha broadcast with beta, as TensorFlow
        shape = _shape_input(shape, "stateless_random_gamma")
        seed = _seed_tensor(seed, "stateless_random_gamma")
        draws = apply_op("StatelessRandomGammaV2", (shape, seed, alpha), {}).outputs[0]
        tiny = convert_to_tensor(np.finfo(_dtypes.numpy_dtype(dtype)).tiny, dtype=dtype)
        return maximum(tiny, realdiv(draws, beta), name=scope)


def stateless_poisson(shape, seed, lam, dtype=_dtypes.int32, name=None) -> Tensor:
    """Poisson draws of rate ``lam`` (broadcast to ``shape``), depending only on the inputs and
    ``seed``."""
    dtype = _dtypes.as_dtype(dtype)
    lam_dtype = dtype if dtype in FLOAT_TYPES else _dtypes.float32
    return _parameterised(
        "StatelessRandomPoisson",
        "stateless_random_poisson",
        shape,
        seed,
        {"lam": (lam, None if isinstance(lam, Tensor) else lam_dtype)},
        {"dtype": dtype},
        name,
    )


def stateless_binomial(shape, seed, counts, probs, output_dtype=_dtypes.int32, name=None) -> Tensor:
    """Binomial draws of ``counts`` trials with success probability ``probs`` (both broadcast
    to ``shape``), depending only on the inputs and ``seed``."""
    probs = convert_to_tensor(probs, name="probs")
    return _parameterised(
        "StatelessRandomBinomial",
        "stateless_random_binomial",
        shape,
        seed,
        {"counts": (counts, probs.dtype), "probs": (probs, probs.dtype)},
        {"dtype": _dtypes.as_dtype(output_dtype)},
        name,
    )


def stateless_parameterized_truncated_normal(
    shape, seed, means=0.0, stddevs=1.0, minvals=-2.0, maxvals=2.0, name=None
) -> Tensor:
    """Normal draws of ``means`` and ``stddevs`` truncated to ``[minvals, maxvals]`` (all
    broadcast to ``shape``), depending only on the inputs and ``seed``."""
    means = convert_to_tensor(means, name="means")
    dtype = means.dtype if means.dtype in FLOAT_TYPES else _dtypes.float32
    parameters = {
        "means": (means, dtype),
        "stddevs": (stddevs, dtype),
        "minvals": (minvals, dtype),
        "maxvals": (maxvals, dtype),
    }
    return _parameterised(
        "StatelessParameterizedTruncatedNormal",
        "stateless_parameterized_truncated_normal",
        shape,
        seed,
        parameters,
        {},
        name,
    )


def stateless_shuffle(value, seed, alg="auto_select", name=None) -> Tensor:
    """``value`` with its first dimension shuffled, depending only on ``seed``."""
    _check_alg(alg, "stateless_shuffle")
    graph = graph_of([value, seed])
    with graph.as_default(), graph.name_scope(name or "stateless_shuffle") as scope:
        value = convert_to_tensor(value, name="value")
        seed = _seed_tensor(seed, "stateless_shuffle")
        return apply_op("StatelessShuffle", (value, seed), {}, scope).outputs[0]


def split(seed, num=2, alg="auto_select") -> Tensor:
    """``num`` new seeds, ``[num, 2]``, drawn from ``seed``: independent streams for parts of a
    program that must not share one."""
    seed = convert_to_tensor(seed, name="seed")
    return stateless_uniform([num, 2], seed, minval=None, maxval=None, dtype=seed.dtype, alg=alg)


def fold_in(seed, data, alg="auto_select") -> Tensor:
    """A new seed from ``seed`` and an integer ``data`` (a replica's index, a step): a draw of
    ``seed`` stacked with ``data``."""
    from .array_ops import stack

    data = convert_to_tensor(data, name="data")
    drawn = stateless_uniform([], seed, minval=None, maxval=None, dtype=data.dtype, alg=alg)
    return stack([drawn, data])


def create_rng_state(seed, alg) -> Tensor:
    """The state a `Generator` of algorithm ``alg`` starts from for the integer ``seed``: the
    seed's first three 64-bit words, least significant first (Philox's 128-bit counter, then
    its 64-bit key)."""
    from .constant_op import constant

    return constant(rng_state_words(seed, alg), dtype=_dtypes.int64)


def rng_state_words(seed, alg) -> np.ndarray:
    """`create_rng_state`'s value, as an int64 array."""
    _check_alg(alg, "create_rng_state")
    words, value = [], int(seed)
    for _ in range(3):  # a negative seed extends its sign, as TensorFlow's
        words.append(value & 0xFFFFFFFFFFFFFFFF)
        value >>= 64
    return np.array(words, np.uint64).view(np.int64)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402


@RegisterGradient("StatelessRandomGammaV2")
def _stateless_gamma_grad(op, grad):
    """TensorFlow's: with respect to ``alpha`` only, summed over the leading dimensions of
    ``shape`` that ``alpha`` does not have."""
    from .array_ops import range as _range
    from .array_ops import rank, size
    from .math_ops import reduce_sum

    shape, _, alpha = op.inputs
    partial = apply_op("RandomGammaGrad", (alpha, op.outputs[0])).outputs[0]
    sample_dims = subtract(size(shape), rank(alpha))
    return None, None, reduce_sum(multiply(grad, partial), _range(sample_dims))


for _op_type in (
    *_FLOAT_DRAWS,
    *_STATEFUL_FLOAT_DRAWS,
    "StatelessRandomUniformInt",
    "StatelessRandomUniformFullInt",
    "StatelessMultinomial",
    "StatelessRandomPoisson",
    "StatelessRandomBinomial",
    "StatelessParameterizedTruncatedNormal",
    "StatelessShuffle",
    "StatefulUniformInt",
    "StatefulUniformFullInt",
    "RngReadAndSkip",
    "SobolSample",
    "RandomIndexShuffle",
):
    NotDifferentiable(_op_type)

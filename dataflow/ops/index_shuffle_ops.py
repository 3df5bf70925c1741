"""Pseudo-random sequences computed one element at a time: ``random_index_shuffle`` (a
permutation of ``[0, max_index]`` from a seed, TensorFlow's bijection of rounds of a block
cipher) and Sobol sequences (``sobol_sample``); and the dtypes of seeds and integer draws."""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from .math_ops import FLOAT_TYPES, INDEX_TYPES, check_dtype, graph_of

_SEED_TYPES = frozenset({_dtypes.int32, _dtypes.int64})


_UNSIGNED_TYPES = frozenset({_dtypes.uint32, _dtypes.uint64})


_INT_TYPES = INDEX_TYPES | _UNSIGNED_TYPES


# -- a permutation of [0, max_index] computed one index at a time --------------------------------
# TensorFlow's RandomIndexShuffle: the index is encrypted with a small Simon block cipher (a
# Feistel network of even ``rounds``) on the smallest even number of bits, at least 16, that
# holds ``max_index``; a result past ``max_index`` is encrypted again ("cycle walking") until it
# lands inside.  A cipher is a bijection, so each index has its own place.
_SIMON_C = 0xFFFFFFFC


_SIMON_Z = 0x7369F885192C0EF5


_MIN_BLOCK_BITS = 16


# Pads a two-word seed of index_shuffle to the cipher's three key words (TensorFlow's value).
_INDEX_SHUFFLE_KEY_PAD = 498247692


def _rotate_left(x, r: int, bits: int, mask):
    return ((x << np.uint64(r)) | (x >> np.uint64(bits - r))) & mask


def _simon_round_keys(key_words, rounds: int, bits: int) -> list:
    mask = np.uint64((1 << bits) - 1)
    keys = [np.asarray(k, np.uint64) & mask for k in key_words]
    c, z = np.uint64(_SIMON_C) & mask, _SIMON_Z & ((1 << bits) - 1)
    for i in range(3, rounds):
        previous = keys[i - 1]
        rotated = _rotate_left(previous, bits - 3, bits, mask) ^ _rotate_left(
            previous, bits - 4, bits, mask
        )
        keys.append(c ^ np.uint64(z & 1) ^ keys[i - 3] ^ rotated)
        z >>= 1
    return keys


def _simon_encrypt(value, round_keys, bits: int):
    mask = np.uint64((1 << bits) - 1)

    def mix(x):
        rot = _rotate_left
        return (rot(x, 1, bits, mask) & rot(x, 8 % bits, bits, mask)) ^ rot(x, 2, bits, mask)

    left, right = (value >> np.uint64(bits)) & mask, value & mask
    for i in range(0, len(round_keys), 2):
        left = left ^ mix(right) ^ round_keys[i]
        right = right ^ mix(left) ^ round_keys[i + 1]
    return (left << np.uint64(bits)) | right


def _shuffled_indices(index, key_words, max_index, rounds: int) -> np.ndarray:
    index, max_index = np.broadcast_arrays(index.astype(np.uint64), max_index.astype(np.uint64))
    key_words = [np.broadcast_to(k, index.shape) for k in key_words]
    out = np.zeros(index.shape, np.uint64)
    for block_max in np.unique(max_index):
        if block_max == 0:
            continue
        block_bits = int(np.ceil(np.log2(float(block_max))))
        bits = max(block_bits + block_bits % 2, _MIN_BLOCK_BITS) // 2
        chosen = max_index == block_max
        round_keys = _simon_round_keys([k[chosen] for k in key_words], rounds, bits)
        value = _simon_encrypt(index[chosen], round_keys, bits)
        outside = value > block_max
        while outside.any():
            keys_outside = [k[outside] for k in round_keys]
            value[outside] = _simon_encrypt(value[outside], keys_outside, bits)
            outside = value > block_max
        out[chosen] = value
    return out


def _infer_index_shuffle(op):
    index, seed, max_index = op.inputs
    check_dtype(index.dtype, _INT_TYPES, f"Input 'index' of '{op.type}'")
    if max_index.dtype is not index.dtype:
        raise TypeError(f"{op.type}: index and max_index must have the same dtype")
    if seed.shape.ndims is not None and seed.shape.ndims >= 1 and seed.shape[-1] not in (None, 3):
        raise ValueError(f"{op.type}: seed must end in a dimension of 3, got {seed.shape}")
    if index.shape.ndims == 0 and max_index.shape.ndims == 0 and seed.shape.ndims == 2:
        return [(index.dtype, TensorShape([seed.shape[0]]))]
    return [(index.dtype, index.shape if index.shape.ndims else max_index.shape)]


def _index_shuffle_kernel(attrs):
    rounds = int(attrs.get("rounds", 4))
    if rounds < 4 or rounds % 2:
        raise ValueError(f"RandomIndexShuffle: rounds must be even and at least 4, got {rounds}")

    def random_index_shuffle(index, seed, max_index):
        if seed.shape[-1:] != (3,) or seed.ndim > 2:
            raise InvalidArgumentError(
                None, None, f"RandomIndexShuffle: seed must be [3] or [n, 3], got {seed.shape}"
            )
        if (np.asarray(index) < 0).any() or (np.asarray(max_index) < 0).any():
            raise InvalidArgumentError(None, None, "index and max_index must be non-negative")
        if (np.asarray(index) > np.asarray(max_index)).any():
            raise InvalidArgumentError(None, None, "index must not exceed max_index")
        words = np.asarray(seed).astype(np.int64).astype(np.uint64) & np.uint64(0xFFFFFFFF)
        key_words = [words[..., i] for i in range(3)]
        shuffled = _shuffled_indices(np.asarray(index), key_words, np.asarray(max_index), rounds)
        return shuffled.astype(index.dtype)

    return random_index_shuffle


define_op("RandomIndexShuffle", _infer_index_shuffle, _index_shuffle_kernel)


def random_index_shuffle(index, seed, max_index, rounds=4, name=None) -> Tensor:
    """TensorFlow's raw op: the place of ``index`` in the permutation of ``[0, max_index]``
    that the three key words of ``seed`` choose."""
    graph = graph_of([index, seed, max_index])
    with graph.as_default():
        index = convert_to_tensor(index, name="index")
        seed = convert_to_tensor(seed, name="seed")
        max_index = convert_to_tensor(max_index, dtype=index.dtype, name="max_index")
        attrs = {"rounds": int(rounds)}
        inputs = (index, seed, max_index)
        return apply_op("RandomIndexShuffle", inputs, attrs, name or "RandomIndexShuffle").outputs[
            0
        ]


def index_shuffle(index, seed, max_index) -> Tensor:
    """The position of ``index`` in a random permutation of ``[0, max_index]`` chosen by
    ``seed`` (two ints); no permutation is ever built, so ``max_index`` may be huge."""
    from .gather_ops import pad

    seed = convert_to_tensor(seed, name="seed")
    rank = seed.shape.ndims or 1
    seed = pad(seed, [[1, 0]] + [[0, 0]] * (rank - 1), constant_values=_INDEX_SHUFFLE_KEY_PAD)
    return random_index_shuffle(index, seed, max_index, rounds=4)


# -- Sobol sequences ------------------------------------------------------------------------------
_MAX_SOBOL_DIMENSIONS = 21201  # the direction numbers of Joe and Kuo, as TensorFlow's


def _infer_sobol(op):
    dim, num_results, skip = op.inputs
    for what, t in (("dim", dim), ("num_results", num_results), ("skip", skip)):
        check_dtype(t.dtype, frozenset({_dtypes.int32}), f"Input '{what}' of '{op.type}'")
        if t.shape.ndims not in (None, 0):
            raise ValueError(f"{op.type}: {what} must be a scalar, got shape {t.shape}")
    check_dtype(op.attrs["dtype"], FLOAT_TYPES, f"Attribute 'dtype' of '{op.type}'")
    rows, cols = numpy_value_or_none(num_results), numpy_value_or_none(dim)
    return [
        (
            op.attrs["dtype"],
            TensorShape([None if rows is None else int(rows), None if cols is None else int(cols)]),
        )
    ]


def _sobol_kernel(attrs):
    out = _dtypes.numpy_dtype(attrs["dtype"])

    def sobol_sample(dim, num_results, skip):
        dim, num_results, skip = int(dim), int(num_results), int(skip)
        if not 1 <= dim <= _MAX_SOBOL_DIMENSIONS:
            raise InvalidArgumentError(
                None, None, f"dim must be in [1, {_MAX_SOBOL_DIMENSIONS}], got {dim}"
            )
        if num_results < 0 or skip < 0:
            raise InvalidArgumentError(None, None, "num_results and skip must be >= 0")
        return _sobol_points(dim, num_results, skip).astype(out)

    return sobol_sample


def _sobol_points(dim: int, count: int, skip: int) -> np.ndarray:
    """Points ``skip + 1 ...`` of the unscrambled Sobol sequence (TensorFlow leaves out the
    first point, the origin), from scipy's generator with the same direction numbers."""
    import warnings

    try:
        from scipy.stats import qmc
    except ImportError:
        raise InvalidArgumentError(
            None,
            None,
            "sobol_sample needs scipy's Sobol generator: pip install 'dataflow[special]'",
        ) from None
    sequence = qmc.Sobol(dim, scramble=False)
    sequence.fast_forward(skip + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # balance holds for powers of two; TensorFlow's too
        return sequence.random(count)


define_op("SobolSample", _infer_sobol, _sobol_kernel)


def sobol_sample(dim, num_results, skip=0, dtype=_dtypes.float32, name=None) -> Tensor:
    """``[num_results, dim]`` points of the Sobol low-discrepancy sequence in the unit cube,
    from point ``skip + 1`` on (the origin, point 0, is never returned)."""
    graph = graph_of([dim, num_results, skip])
    with graph.as_default(), graph.name_scope(name or "sobol_sample") as scope:
        inputs = tuple(
            convert_to_tensor(v, dtype=_dtypes.int32, name=n)
            for v, n in ((dim, "dim"), (num_results, "num_results"), (skip, "skip"))
        )
        dtype = _dtypes.as_dtype(dtype)
        return apply_op("SobolSample", inputs, {"dtype": dtype}, scope).outputs[0]


__all__ = ["index_shuffle", "random_index_shuffle", "sobol_sample"]

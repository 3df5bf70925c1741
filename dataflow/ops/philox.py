"""Philox4x32-10, the counter-based generator behind TensorFlow's stateless random ops, in
numpy, and TensorFlow's ways of turning its 32-bit words into numbers.

A counter-based generator has no state to carry: block ``i`` of the stream is a pure function
of a 64-bit key and the 128-bit counter ``start + i`` (ten rounds of multiply-and-mix), so any
block is computed directly and a whole tensor's worth at once.  With the same key, counter and
layout as TensorFlow's kernels, a stateless draw here is TensorFlow's bit for bit (the
transcendental functions of Box-Muller aside, which may differ in the last place).

Words are held in uint64 arrays whose values fit 32 bits, so products do not overflow.
"""

from __future__ import annotations

import numpy as np

_MASK = np.uint64(0xFFFFFFFF)
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
# The key TensorFlow scrambles a user's two seeds with (stateless_random_ops.cc, GenerateKey).
_SEED_SCRAMBLE_KEY = (0x3EC8F720, 0x02461E29)
ROUNDS = 10


def _counters(counter, offsets: np.ndarray) -> list[np.ndarray]:
    """The four words of the 128-bit counters ``counter + offset`` for each of ``offsets``."""
    offsets = np.asarray(offsets, np.uint64)
    words, carry = [], np.zeros(offsets.shape, np.uint64)
    added = (offsets & _MASK, offsets >> np.uint64(32), 0, 0)
    for word, add in zip(counter, added):
        total = np.uint64(word) + np.asarray(add, np.uint64) + carry
        words.append(total & _MASK)
        carry = total >> np.uint64(32)
    return words


def blocks(key, counter, blocks: int, first_block: int = 0) -> np.ndarray:
    """``[blocks, 4]`` uint32: Philox4x32-10 of ``key`` (2 words) at counters
    ``counter + first_block ...`` (4 words, least significant first)."""
    return blocks_at(key, counter, np.arange(blocks, dtype=np.uint64) + np.uint64(first_block))


def blocks_at(key, counter, offsets: np.ndarray) -> np.ndarray:
    """``[..., 4]`` uint32: the Philox blocks at ``counter + offset`` for each of ``offsets``
    (any shape), all at once."""
    c0, c1, c2, c3 = _counters(counter, offsets)
    k0, k1 = int(key[0]), int(key[1])
    for round_ in range(ROUNDS):
        p0, p1 = _M0 * c0, _M1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK
        c0, c1, c2, c3 = hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0
        if round_ < ROUNDS - 1:
            k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return np.stack([c0, c1, c2, c3], axis=-1).astype(np.uint32)


def key_and_counter(seed) -> tuple[tuple[int, int], tuple[int, int, int, int]]:
    """TensorFlow's key and counter for a stateless op's ``seed`` (two ints): the seeds,
    scrambled by one Philox block, so that neither half of the seed needs to be strong."""
    seed0, seed1 = (int(s) & 0xFFFFFFFFFFFFFFFF for s in np.asarray(seed).reshape(-1)[:2])
    counter = (seed0 & 0xFFFFFFFF, seed0 >> 32, seed1 & 0xFFFFFFFF, seed1 >> 32)
    mix = [int(w) for w in blocks(_SEED_SCRAMBLE_KEY, counter, 1)[0]]
    return (mix[0], mix[1]), (0, 0, mix[2], mix[3])


def words(key, counter, count: int, first_block: int = 0) -> np.ndarray:
    """The first ``count`` 32-bit words of the stream, as uint32."""
    return blocks(key, counter, -(-count // 4), first_block).reshape(-1)[:count]


# -- TensorFlow's conversions of words to numbers (random_distributions.h) -------------------------
def uniform_float32(words32: np.ndarray) -> np.ndarray:
    """[0, 1) from the low 23 bits of each word, as a float in [1, 2) minus 1."""
    bits = (words32.astype(np.uint32) & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)
    return bits.view(np.float32) - np.float32(1)


def uniform_float64(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    """[0, 1) from 52 bits of two words (20 of ``high``, all of ``low``)."""
    mantissa = ((high.astype(np.uint64) & np.uint64(0xFFFFF)) << np.uint64(32)) | low.astype(
        np.uint64
    )
    return (mantissa | np.uint64(1023 << 52)).view(np.float64) - 1.0


def uniform_float16(words32: np.ndarray) -> np.ndarray:
    """[0, 1) from the low 10 bits of each word."""
    bits = (words32.astype(np.uint16) & np.uint16(0x3FF)) | np.uint16(15 << 10)
    return bits.view(np.float16) - np.float16(1)


def box_muller_float32(x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two standard normals from two words each, computed in float32 as TensorFlow does."""
    u1 = np.maximum(uniform_float32(x0), np.float32(1.0e-7))
    angle = np.float32(2.0 * np.pi) * uniform_float32(x1)
    radius = np.sqrt(np.float32(-2.0) * np.log(u1))
    return np.sin(angle) * radius, np.cos(angle) * radius


def box_muller_float64(x0, x1, x2, x3) -> tuple[np.ndarray, np.ndarray]:
    """Two standard normals from four words, in float64."""
    u1 = np.maximum(uniform_float64(x0, x1), 1.0e-7)
    angle = 2.0 * np.pi * uniform_float64(x2, x3)
    radius = np.sqrt(-2.0 * np.log(u1))
    return np.sin(angle) * radius, np.cos(angle) * radius


def unsigned64(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """One 64-bit word from two 32-bit ones."""
    return low.astype(np.uint64) | (high.astype(np.uint64) << np.uint64(32))

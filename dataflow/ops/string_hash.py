"""The three string hashes of TensorFlow's ``StringToHashBucket*`` ops, bit for bit, so that a
graph buckets its strings as TensorFlow does (a model's embedding rows are found by them).

- `fingerprint64`: FarmHash's ``Fingerprint64`` (``farmhashna::Hash64``), the hash of
  ``to_hash_bucket_fast`` and of ``tf.fingerprint``.
- `siphash`: SipHash-2-4 with a 128-bit key, the hash of ``to_hash_bucket_strong``.
- `legacy_hash64`: TensorFlow's own ``Hash64`` (a MurmurHash2 variant with the seed
  ``0xDECAFCAFFE``), the hash of the deprecated ``to_hash_bucket``.

All arithmetic is on unsigned 64-bit integers (Python ints masked to 64 bits), reading the
bytes little-endian, as TensorFlow does on the machines it runs on.
"""

from __future__ import annotations

import struct

_MASK = (1 << 64) - 1
_K0 = 0xC3A5C85C97CB3127
_K1 = 0xB492B66FBE98F273
_K2 = 0x9AE16A3B2F90404F


def _fetch64(s: bytes, at: int) -> int:
    return struct.unpack_from("<Q", s, at)[0]


def _fetch32(s: bytes, at: int) -> int:
    return struct.unpack_from("<I", s, at)[0]


def _rotate(value: int, shift: int) -> int:
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _hash_len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _hash_len0to16(s: bytes) -> int:
    length = len(s)
    if length >= 8:
        mul = _K2 + length * 2
        a = (_fetch64(s, 0) + _K2) & _MASK
        b = _fetch64(s, length - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash_len16(c, d, mul)
    if length >= 4:
        mul = _K2 + length * 2
        a = _fetch32(s, 0)
        return _hash_len16(length + (a << 3), _fetch32(s, length - 4), mul)
    if length > 0:
        y = (s[0] + (s[length >> 1] << 8)) & 0xFFFFFFFF
        z = (length + (s[length - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _hash_len17to32(s: bytes) -> int:
    length = len(s)
    mul = _K2 + length * 2
    a = (_fetch64(s, 0) * _K1) & _MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, length - 8) * mul) & _MASK
    d = (_fetch64(s, length - 16) * _K2) & _MASK
    return _hash_len16(
        (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK,
        (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK,
        mul,
    )


def _hash_len33to64(s: bytes) -> int:
    length = len(s)
    mul = _K2 + length * 2
    a = (_fetch64(s, 0) * _K2) & _MASK
    b = _fetch64(s, 8)
    c = (_fetch64(s, length - 8) * mul) & _MASK
    d = (_fetch64(s, length - 16) * _K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash_len16(y, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(s, 16) * mul) & _MASK
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, length - 32)) * mul) & _MASK
    h = ((z + _fetch64(s, length - 24)) * mul) & _MASK
    return _hash_len16(
        (_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK,
        (e + _rotate((f + a) & _MASK, 18) + g) & _MASK,
        mul,
    )


def _weak_hash32(s: bytes, at: int, a: int, b: int) -> tuple[int, int]:
    w, x, y, z = struct.unpack_from("<4Q", s, at)
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(s: bytes) -> int:
    """FarmHash's ``Fingerprint64`` of ``s``, an unsigned 64-bit integer."""
    length = len(s)
    if length <= 16:
        return _hash_len0to16(s)
    if length <= 32:
        return _hash_len17to32(s)
    if length <= 64:
        return _hash_len33to64(s)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v = (0, 0)
    w = (0, 0)
    x = (x * _K2 + _fetch64(s, 0)) & _MASK
    end = ((length - 1) // 64) * 64
    last64 = end + ((length - 1) & 63) - 63
    at = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(s, at + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v[1] + _fetch64(s, at + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, at + 40)) & _MASK
        z = (_rotate((z + w[0]) & _MASK, 33) * _K1) & _MASK
        v = _weak_hash32(s, at, (v[1] * _K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak_hash32(s, at + 32, (z + w[1]) & _MASK, (y + _fetch64(s, at + 16)) & _MASK)
        z, x = x, z
        at += 64
        if at == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    at = last64
    w0 = (w[0] + ((length - 1) & 63)) & _MASK
    v0 = (v[0] + w0) & _MASK
    w0 = (w0 + v0) & _MASK
    v, w = (v0, v[1]), (w0, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(s, at + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v[1] + _fetch64(s, at + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _fetch64(s, at + 40)) & _MASK
    z = (_rotate((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak_hash32(s, at, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak_hash32(s, at + 32, (z + w[1]) & _MASK, (y + _fetch64(s, at + 16)) & _MASK)
    z, x = x, z
    return _hash_len16(
        (_hash_len16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _MASK,
        (_hash_len16(v[1], w[1], mul) + x) & _MASK,
        mul,
    )


def _sip_round(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    v0 = (v0 + v1) & _MASK
    v1 = _rotl(v1, 13) ^ v0
    v0 = _rotl(v0, 32)
    v2 = (v2 + v3) & _MASK
    v3 = _rotl(v3, 16) ^ v2
    v0 = (v0 + v3) & _MASK
    v3 = _rotl(v3, 21) ^ v0
    v2 = (v2 + v1) & _MASK
    v1 = _rotl(v1, 17) ^ v2
    v2 = _rotl(v2, 32)
    return v0, v1, v2, v3


def _rotl(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & _MASK


def siphash(key: tuple[int, int], s: bytes) -> int:
    """SipHash-2-4 of ``s`` with the 128-bit key ``(k0, k1)`` (TensorFlow's
    ``StrongKeyedHash``), an unsigned 64-bit integer."""
    k0, k1 = key[0] & _MASK, key[1] & _MASK
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    length = len(s)
    whole = length - length % 8
    for at in range(0, whole, 8):
        m = _fetch64(s, at)
        v3 ^= m
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 ^= m
    m = ((length & 0xFF) << 56) | int.from_bytes(s[whole:], "little")
    v3 ^= m
    v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
    v0 ^= m
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def legacy_hash64(s: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TensorFlow's ``Hash64`` (``tensorflow/core/lib/hash/hash.cc``), an unsigned 64-bit
    integer."""
    m = 0xC6A4A7935BD1E995
    length = len(s)
    h = (seed ^ (length * m)) & _MASK
    whole = length - length % 8
    for at in range(0, whole, 8):
        k = (_fetch64(s, at) * m) & _MASK
        k ^= k >> 47
        k = (k * m) & _MASK
        h = ((h ^ k) * m) & _MASK
    if length > whole:
        h = ((h ^ int.from_bytes(s[whole:], "little")) * m) & _MASK
    h ^= h >> 47
    h = (h * m) & _MASK
    h ^= h >> 47
    return h

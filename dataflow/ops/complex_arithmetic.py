"""Kernels of complex arithmetic that give the bits TensorFlow's CPU kernels give.

numpy's complex loops round differently from TensorFlow's (they fuse multiplies and adds, and
divide and take moduli with algorithms of their own), so the complex ops compute here with the
formulas TensorFlow's kernels run, in the precision of the parts (float32 for complex64):

- ``x * y``: ``(a*c - b*d) + i(a*d + b*c)``, each product and sum rounded (Eigen's packets and
  C++'s ``std::complex`` alike, no fused multiply-add).
- ``x / y``: Eigen divides whole SIMD packets (4 complex64, 2 complex128: the AVX packets of
  TensorFlow's x86 builds) by scaling ``y`` by ``max(|c|, |d|)`` (`_packet_divide`); the last
  ``size % packet`` elements of the flat result, which do not fill a packet, are divided by
  ``std::complex``'s operator, which is Smith's algorithm (libgcc's ``__divsc3``,
  `_smith_divide`).
- ``|x|`` (``ComplexAbs``): ``std::abs``, the C library's ``hypotf``/``hypot``: for complex64
  the square root of the sum of squares in float64, rounded to float32 (glibc's ``hypotf``);
  for complex128 numpy's ``hypot``, which calls the C library's.
- ``angle(x)``: ``std::arg``, the C library's ``atan2f``/``atan2``: for complex64 fdlibm's
  ``atan2f`` (glibc's, up to 2.40), written out below in float32 operations; for complex128
  Python's ``math.atan2``, the C library's.

TensorFlow's threads flush subnormal floats to zero, which numpy does not: results whose inputs
are subnormal may differ (TensorFlow treats those inputs as 0).
"""

from __future__ import annotations

import math

import numpy as np

# Complex numbers per SIMD packet in Eigen's AVX code, by dtype.
_PACKET = {np.dtype(np.complex64): 4, np.dtype(np.complex128): 2}


def _assemble(real: np.ndarray, imag: np.ndarray, dtype: np.dtype) -> np.ndarray:
    out = np.empty(real.shape, dtype)
    out.real = real
    out.imag = imag
    return out


def multiply(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x * y`` of complex arrays (broadcasting), each product and sum rounded."""
    a, b, c, d = x.real, x.imag, y.real, y.imag
    with np.errstate(all="ignore"):
        real = a * c - b * d
        imag = a * d + b * c
    return _assemble(real, imag, np.result_type(x, y))


def square(x: np.ndarray) -> np.ndarray:
    """``x * x`` of a complex array, as `multiply`."""
    return multiply(x, x)


def _packet_divide(a, b, c, d) -> tuple:
    """Eigen's ``pdiv_complex``: ``y`` scaled by ``max(|c|, |d|)``, ``x * conj(y')`` divided
    by ``|y'|**2``, then by the scale."""
    scale = np.maximum(np.abs(c), np.abs(d))
    c, d = c / scale, d / scale
    denominator = c * c + d * d
    real = a * c - b * -d
    imag = a * -d + b * c
    return real / denominator / scale, imag / denominator / scale


def _smith_divide(a, b, c, d) -> tuple:
    """libgcc's ``__divsc3``: Smith's algorithm, by the larger of ``|c|`` and ``|d|``, then the
    infinities and zeros C99 asks for where that gave nan + i nan."""
    by_d = np.abs(c) < np.abs(d)
    ratio = np.where(by_d, c / d, d / c)
    denominator = np.where(by_d, c * ratio + d, d * ratio + c)
    real = np.where(by_d, (a * ratio + b) / denominator, (b * ratio + a) / denominator)
    imag = np.where(by_d, (b * ratio - a) / denominator, (b - a * ratio) / denominator)
    lost = np.isnan(real) & np.isnan(imag)
    if not lost.any():
        return real, imag
    one, zero, inf = (np.ones_like(a), np.zeros_like(a), np.full_like(a, np.inf))
    # a finite or infinite number over zero: infinities
    by_zero = lost & (c == 0) & (d == 0) & ~(np.isnan(a) & np.isnan(b))
    real = np.where(by_zero, np.copysign(inf, c) * a, real)
    imag = np.where(by_zero, np.copysign(inf, c) * b, imag)
    # an infinite number over a finite one: infinities
    infinite = lost & ~by_zero & (np.isinf(a) | np.isinf(b)) & np.isfinite(c) & np.isfinite(d)
    a1 = np.copysign(np.where(np.isinf(a), one, zero), a)
    b1 = np.copysign(np.where(np.isinf(b), one, zero), b)
    real = np.where(infinite, inf * (a1 * c + b1 * d), real)
    imag = np.where(infinite, inf * (b1 * c - a1 * d), imag)
    # a finite number over an infinite one: zeros
    vanishing = (
        lost & ~by_zero & ~infinite & (np.isinf(c) | np.isinf(d)) & np.isfinite(a) & np.isfinite(b)
    )
    c1 = np.copysign(np.where(np.isinf(c), one, zero), c)
    d1 = np.copysign(np.where(np.isinf(d), one, zero), d)
    real = np.where(vanishing, zero * (a * c1 + b * d1), real)
    imag = np.where(vanishing, zero * (b * c1 - a * d1), imag)
    return real, imag


def divide(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x / y`` of complex arrays (broadcasting): whole packets of the flat result as Eigen's
    packets divide, the rest as ``std::complex`` does (see the module docstring)."""
    dtype = np.result_type(x, y)
    x, y = np.broadcast_arrays(x, y)
    shape = x.shape
    a, b = x.real.reshape(-1), x.imag.reshape(-1)
    c, d = y.real.reshape(-1), y.imag.reshape(-1)
    whole = a.size - a.size % _PACKET[dtype]
    with np.errstate(all="ignore"):
        real, imag = _packet_divide(a, b, c, d)
        if whole < a.size:
            tail = slice(whole, None)
            real[tail], imag[tail] = _smith_divide(a[tail], b[tail], c[tail], d[tail])
    return _assemble(real, imag, dtype).reshape(shape)


def reciprocal(x: np.ndarray) -> np.ndarray:
    """``1 / x`` of a complex array, as `divide`."""
    return divide(np.ones_like(x), x)


def modulus(x: np.ndarray) -> np.ndarray:
    """``|x|`` of a complex array: the C library's ``hypotf``/``hypot`` of its parts."""
    if x.dtype == np.complex128:
        return np.hypot(x.real, x.imag)
    real = x.real.astype(np.float64)
    imag = x.imag.astype(np.float64)
    with np.errstate(all="ignore"):
        result = np.sqrt(real * real + imag * imag).astype(np.float32)
    # hypotf is inf when a part is, even where the other is nan
    return np.where(np.isinf(x.real) | np.isinf(x.imag), np.float32(np.inf), result)


# fdlibm's atanf (glibc's sysdeps/ieee754/flt-32/s_atanf.c up to 2.40), in float32 operations.
_F = np.float32
_ATAN_HI = np.array([4.6364760399e-01, 7.8539812565e-01, 9.8279368877e-01, 1.5707962513e00], _F)
_ATAN_LO = np.array([5.0121582440e-09, 3.7748947079e-08, 3.4473217170e-08, 7.5497894159e-08], _F)
_ATAN_POLY = np.array(
    [
        3.3333334327e-01,
        -2.0000000298e-01,
        1.4285714924e-01,
        -1.1111110449e-01,
        9.0908870101e-02,
        -7.6918758452e-02,
        6.6610731184e-02,
        -5.8335702866e-02,
        4.9768779427e-02,
        -3.6531571299e-02,
        1.6285819933e-02,
    ],
    _F,
)
_PI = _F(3.1415927410e00)
_PI_LO = _F(-8.7422776573e-08)
_PI_2 = _F(1.5707963705e00)
_PI_4 = _F(7.8539818525e-01)


def _atanf(x: np.ndarray) -> np.ndarray:
    """fdlibm's ``atanf``: the argument reduced to ``|x| < 7/16`` around atan(0.5), atan(1),
    atan(1.5) or atan(inf) by the range of ``|x|``, then an odd polynomial."""
    bits = x.view(np.int32)
    magnitude_bits = bits & 0x7FFFFFFF
    ax = np.abs(x)
    one = _F(1)
    ranges = [
        (magnitude_bits >= 0x3EE00000) & (magnitude_bits < 0x3F300000),  # 7/16 <= |x| < 11/16
        (magnitude_bits >= 0x3F300000) & (magnitude_bits < 0x3F980000),  # 11/16 <= |x| < 19/16
        (magnitude_bits >= 0x3F980000) & (magnitude_bits < 0x401C0000),  # 19/16 <= |x| < 39/16
        magnitude_bits >= 0x401C0000,  # 39/16 <= |x|
    ]
    reduced = [
        (_F(2) * ax - one) / (_F(2) + ax),
        (ax - one) / (ax + one),
        (ax - _F(1.5)) / (one + _F(1.5) * ax),
        -one / ax,
    ]
    t = np.select(ranges, reduced, x)
    which = np.select(ranges, [0, 1, 2, 3], 0)
    z = t * t
    w = z * z
    p = _ATAN_POLY
    s1 = z * (p[0] + w * (p[2] + w * (p[4] + w * (p[6] + w * (p[8] + w * p[10])))))
    s2 = w * (p[1] + w * (p[3] + w * (p[5] + w * (p[7] + w * p[9]))))
    near_zero = t - t * (s1 + s2)
    shifted = _ATAN_HI[which] - ((t * (s1 + s2) - _ATAN_LO[which]) - t)
    shifted = np.where(bits < 0, -shifted, shifted)
    result = np.where(magnitude_bits < 0x3EE00000, near_zero, shifted)
    huge = np.where(bits > 0, _ATAN_HI[3] + _ATAN_LO[3], -_ATAN_HI[3] - _ATAN_LO[3])
    result = np.where(magnitude_bits >= 0x50800000, huge, result)  # |x| >= 2**34
    result = np.where(magnitude_bits < 0x31000000, x, result)  # |x| < 2**-29
    return np.where(magnitude_bits > 0x7F800000, x + x, result)  # nan


def _atan2f(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """fdlibm's ``atan2f`` (glibc's e_atan2f.c up to 2.40) of float32 arrays of one shape."""
    x_bits, y_bits = x.view(np.int32), y.view(np.int32)
    x_mag, y_mag = x_bits & 0x7FFFFFFF, y_bits & 0x7FFFFFFF
    quadrant = ((y_bits >> 31) & 1) | ((x_bits >> 30) & 2)  # 2 * sign(x) + sign(y)
    exponent_gap = (y_mag - x_mag) >> 23
    z = _atanf(np.abs(y / x))
    z = np.where(exponent_gap > 60, _PI_2 + _F(0.5) * _PI_LO, z)  # |y/x| > 2**60
    z = np.where((x_bits < 0) & (exponent_gap < -60), _F(0), z)  # |y|/x < -2**60
    result = np.select(
        [quadrant == 0, quadrant == 1, quadrant == 2],
        [z, -z, _PI - (z - _PI_LO)],
        (z - _PI_LO) - _PI,
    )
    result = np.where(x_bits == 0x3F800000, _atanf(y), result)  # x == 1
    x_inf, y_inf = x_mag == 0x7F800000, y_mag == 0x7F800000
    both_inf = np.select(
        [quadrant == 0, quadrant == 1, quadrant == 2],
        [_PI_4, -_PI_4, _F(3) * _PI_4],
        _F(-3) * _PI_4,
    )
    x_inf_only = np.select(
        [quadrant == 0, quadrant == 1, quadrant == 2], [_F(0), _F(-0.0), _PI], -_PI
    )
    vertical = np.where(y_bits < 0, -_PI_2, _PI_2)
    result = np.where(y_inf & ~x_inf, vertical, result)
    result = np.where(x_inf & (y_mag != 0), np.where(y_inf, both_inf, x_inf_only), result)
    result = np.where((x_mag == 0) & (y_mag != 0), vertical, result)
    on_real_axis = np.select([quadrant <= 1, quadrant == 2], [y, _PI], -_PI)
    result = np.where(y_mag == 0, on_real_axis, result)
    return np.where((x_mag > 0x7F800000) | (y_mag > 0x7F800000), x + y, result)


_atan2 = np.frompyfunc(math.atan2, 2, 1)


def argument(x: np.ndarray) -> np.ndarray:
    """The angle of each element of a complex array, in ``[-pi, pi]``: the C library's
    ``atan2f(imag, real)`` for complex64 (fdlibm's, above), ``atan2`` for complex128."""
    if x.dtype == np.complex128:
        return np.asarray(_atan2(x.imag, x.real), dtype=np.float64).reshape(x.shape)
    real = np.ascontiguousarray(x.real)
    imag = np.ascontiguousarray(x.imag)
    with np.errstate(all="ignore"):
        return _atan2f(imag, real).astype(np.float32).reshape(x.shape)

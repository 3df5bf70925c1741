"""Colour spaces and colour adjustments of ``tf.image``: RGB, HSV, YIQ, YUV and grayscale,
hue, saturation, contrast and gamma."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.gradient_registry import RegisterGradient
from ..framework.graph import Tensor, control_dependencies, graph_to_build_in, name_scope
from ..framework.op_registry import apply_op_output, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from . import array_ops as _a
from . import math_ops as _m
from .extra_math_ops import reciprocal
from .image_arguments import (
    _fail,
    _random_factor,
)
from .image_codec_ops import (  # noqa: E402, F401
    adjust_jpeg_quality,
    decode_and_crop_jpeg,
    decode_bmp,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    decode_webp,
    encode_jpeg,
    encode_png,
    extract_jpeg_shape,
    is_jpeg,
    random_jpeg_quality,
)
from .image_ops import (
    convert_image_dtype,
)
from .math_ops import check_dtype
from .matrix_ops import tensordot
from .misc_ops import Assert
from .random_ops import random_uniform


# -- colour spaces, hue, saturation, gamma ---------------------------------------------------------
def _rgb_image(function: str, images, name: str = "images") -> Tensor:
    images = convert_to_tensor(images, name=name)
    if images.dtype not in _m.FLOAT_TYPES:
        _fail(
            function,
            f"{name} must be float16, float32 or float64, got {images.dtype.name}",
            TypeError,
        )
    last = images.shape.as_list()[-1] if images.shape.ndims else None
    if images.shape.ndims == 0 or last not in (3, None):
        _fail(function, f"the last dimension of {name} must be 3, got shape {images.shape}")
    return images


def _channels(images: Tensor) -> list:
    return _a.unstack(images, 3, axis=-1)


def rgb_to_hsv(images, name: Optional[str] = None) -> Tensor:
    """RGB ``images`` (floats in [0, 1], channels last) as hue, saturation and value, each in
    [0, 1], by the formulas of TensorFlow's ``RGBToHSV`` kernel, in the images' dtype (a grey
    pixel has hue and saturation 0).  Composed of ops, so it has the gradient of that
    composition."""
    images = _rgb_image("rgb_to_hsv", images)
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "RGBToHSV"):
        red, green, blue = _channels(images)

        def constant(number):
            return convert_to_tensor(np.asarray(number, images.dtype.as_numpy_dtype))

        value = _m.maximum(red, _m.maximum(green, blue))
        spread = _m.subtract(value, _m.minimum(red, _m.minimum(green, blue)))
        zero = _a.zeros_like(value)
        one = _a.ones_like(value)
        # the divisors are made safe where their quotient is not used, for finite gradients
        has_value = _m.greater(value, zero)
        saturation = _m.where_v2(
            has_value, _m.realdiv(spread, _m.where_v2(has_value, value, one)), zero
        )
        has_spread = _m.greater(spread, zero)
        # the kernel's norm: 1/spread times 1/6 (not 1/(6 spread)), and 2/6 and 4/6 in the dtype
        sixth = _m.realdiv(constant(1), constant(6))
        norm = _m.multiply(reciprocal(_m.where_v2(has_spread, spread, one)), sixth)
        hue = _m.where_v2(
            _m.equal(red, value),
            _m.multiply(norm, _m.subtract(green, blue)),
            _m.where_v2(
                _m.equal(green, value),
                _m.add(_m.multiply(norm, _m.subtract(blue, red)), constant(2) / constant(6)),
                _m.add(_m.multiply(norm, _m.subtract(red, green)), constant(4) / constant(6)),
            ),
        )
        hue = _m.where_v2(has_spread, hue, zero)
        hue = _m.where_v2(_m.less(hue, zero), _m.add(hue, one), hue)
        return _a.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images, name: Optional[str] = None) -> Tensor:
    """HSV ``images`` (channels last, each in [0, 1]) as RGB, by the formulas of TensorFlow's
    ``HSVToRGB`` kernel, in the images' dtype."""
    images = _rgb_image("hsv_to_rgb", images)
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "HSVToRGB"):
        hue, saturation, value = _channels(images)

        def constant(number):
            return convert_to_tensor(np.asarray(number, images.dtype.as_numpy_dtype))

        sixths = _m.multiply(hue, constant(6))

        def ramp(offset, rising):
            distance = _m.abs(_m.subtract(sixths, constant(offset)))
            if rising:
                level = _m.subtract(distance, constant(1))
            else:
                level = _m.subtract(constant(2), distance)
            return _m.clip_by_value(level, constant(0), constant(1))

        grey = _m.subtract(constant(1), saturation)
        rgb = [
            _m.multiply(_m.add(grey, _m.multiply(saturation, ramp(3, True))), value),
            _m.multiply(_m.add(grey, _m.multiply(saturation, ramp(2, False))), value),
            _m.multiply(_m.add(grey, _m.multiply(saturation, ramp(4, False))), value),
        ]
        return _a.stack(rgb, axis=-1)


def _colour_matrix(function: str, images, kernel) -> Tensor:
    images = _rgb_image(function, images)
    with graph_to_build_in(images.graph).as_default(), name_scope(function):
        matrix = convert_to_tensor(np.asarray(kernel, images.dtype.as_numpy_dtype), name="kernel")
        ndims = images.shape.ndims
        return tensordot(images, matrix, axes=[[ndims - 1], [0]])


_RGB_TO_YIQ = [
    [0.299, 0.59590059, 0.2115],
    [0.587, -0.27455667, -0.52273617],
    [0.114, -0.32134392, 0.31119955],
]


_YIQ_TO_RGB = [
    [1, 1, 1],
    [0.95598634, -0.27201283, -1.10674021],
    [0.6208248, -0.64720424, 1.70423049],
]


_RGB_TO_YUV = [
    [0.299, -0.14714119, 0.61497538],
    [0.587, -0.28886916, -0.51496512],
    [0.114, 0.43601035, -0.10001026],
]


_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def rgb_to_yiq(images) -> Tensor:
    """RGB ``images`` (floats, channels last) in the YIQ colour space (NTSC's)."""
    return _colour_matrix("rgb_to_yiq", images, _RGB_TO_YIQ)


def yiq_to_rgb(images) -> Tensor:
    """YIQ ``images`` back in RGB."""
    return _colour_matrix("yiq_to_rgb", images, _YIQ_TO_RGB)


def rgb_to_yuv(images) -> Tensor:
    """RGB ``images`` (floats, channels last) in the YUV colour space (BT.601)."""
    return _colour_matrix("rgb_to_yuv", images, _RGB_TO_YUV)


def yuv_to_rgb(images) -> Tensor:
    """YUV ``images`` back in RGB."""
    return _colour_matrix("yuv_to_rgb", images, _YUV_TO_RGB)


# -- the kernels of AdjustSaturation and AdjustHue -------------------------------------------------
# TensorFlow's CPU kernels (adjust_saturation_op.cc, adjust_hue_op.cc) walk the pixels with C++
# float arithmetic; these are the same formulas on whole arrays, operation for operation, so that
# every bit agrees.  Where the C++ compares (std::max, if/else chains), so do these, NaN included.
_F = np.float32


def _cpp_max(a, b):
    """``std::max(a, b)``: ``b`` if ``a < b``, else ``a`` (so a NaN ``b`` loses)."""
    return np.where(a < b, b, a)


def _cpp_min(a, b):
    """``std::min(a, b)``: ``b`` if ``b < a``, else ``a``."""
    return np.where(b < a, b, a)


def _hsv_of(red, green, blue):
    """AdjustSaturation's ``rgb_to_hsv``: hue in [0, 1); the hue's 2/6 and 4/6 are C++ doubles,
    so those sums are rounded once from float64."""
    value = _cpp_max(red, _cpp_max(green, blue))
    spread = value - _cpp_min(red, _cpp_min(green, blue))
    saturation = np.where(value > 0, spread / np.where(value > 0, value, _F(1)), _F(0))
    norm = _F(1) / (_F(6) * spread)
    hue = np.where(
        red == value,
        norm * (green - blue),
        np.where(
            green == value,
            ((norm * (blue - red)).astype(np.float64) + 2.0 / 6.0).astype(_F),
            ((norm * (red - green)).astype(np.float64) + 4.0 / 6.0).astype(_F),
        ),
    )
    hue = np.where(spread <= 0, _F(0), hue)
    hue = np.where(hue < 0, hue + _F(1), hue)
    return hue, saturation.astype(_F), value


def _wrap(values, low_open: bool, period: float):
    """The C++ loops ``while (x <= 0) x += period; while (x >= period) x -= period;`` (or
    ``x < 0`` for ``low_open=False``), step by step as they round; values that a step does not
    move (inf, nan, huge) are left as they are."""
    period = _F(period)
    below = (lambda x: x <= 0) if low_open else (lambda x: x < 0)
    values = values.copy()
    for test, step in ((below, period), (lambda x: x >= period, -period)):
        moving = test(values) & (values + step != values)
        while moving.any():
            values = np.where(moving, values + step, values)
            moving = test(values) & (values + step != values)
    return values


def _category(values):
    """``static_cast<int>(x)`` of float32 values: truncation; NaN and out-of-range values (whose
    conversion x86 makes INT_MIN) fall into no category."""
    finite = np.isfinite(values) & (np.abs(values) < 2**31)
    return np.where(finite, np.trunc(np.where(finite, values, 0)), -(2**31)).astype(np.int64)


def _rgb_of(hue, saturation, value):
    """AdjustSaturation's ``hsv_to_rgb`` (by sixths of the hue circle; a hue whose sixth is
    outside 0..5, such as 1.0, gives every channel the minimum)."""
    chroma = saturation * value
    low = value - chroma
    sixths = hue * _F(6)
    sector = _category(sixths)
    phase = _wrap(sixths, True, 2.0)
    mid = chroma * (_F(1) - np.abs(phase - _F(1)))
    zero = np.zeros_like(chroma)
    table = [  # (red, green, blue) before the minimum is added, sectors 0..5
        (chroma, mid, zero),
        (mid, chroma, zero),
        (zero, chroma, mid),
        (zero, mid, chroma),
        (mid, zero, chroma),
        (chroma, zero, mid),
    ]
    sectors = [sector == k for k in range(6)]
    return [np.select(sectors, [entry[c] for entry in table], zero) + low for c in range(3)]


def _scale_saturation(red, green, blue, factor):
    """AdjustSaturation: the saturation times ``factor``, clipped to [0, 1] by std::min/max."""
    hue, saturation, value = _hsv_of(red, green, blue)
    saturation = _cpp_min(_F(1), _cpp_max(_F(0), saturation * factor))
    return _rgb_of(hue, saturation, value)


def _shift_hue(red, green, blue, delta):
    """AdjustHue: the hue as a position in [0, 6) between the pixel's minimum and maximum
    (``rgb_to_hv_range``), moved by ``delta * 6`` and wrapped, then back to RGB
    (``hv_range_to_rgb``); the minimum and maximum channel values stay as they are."""
    r_lt_g, b_lt_r, b_gt_g, b_lt_g, b_gt_r = (
        red < green,
        blue < red,
        blue > green,
        blue < green,
        blue > red,
    )
    conditions = [
        r_lt_g & b_lt_r,  # b < r < g
        r_lt_g & ~b_lt_r & b_gt_g,  # r < g < b
        r_lt_g & ~b_lt_r & ~b_gt_g,  # r < b < g
        ~r_lt_g & b_lt_g,  # b < g < r
        ~r_lt_g & ~b_lt_g & b_gt_r,  # g < r < b
    ]  # else g < b < r
    top = np.select(conditions, [green, blue, green, red, blue], red)
    middle = np.select(conditions, [red, green, blue, green, red], blue)
    bottom = np.select(conditions, [blue, red, red, blue, green], green)
    sector = np.select(conditions, [1, 3, 2, 0, 4], 5)
    with np.errstate(all="ignore"):
        ratio = (middle - bottom) / (top - bottom)
    rising = (sector & 1) == 0
    hue = sector.astype(_F) + np.where(rising, ratio, _F(1) - ratio)
    hue = np.where(top == bottom, _F(0), hue)
    hue = _wrap(hue + delta * _F(6), False, 6.0)
    sector = _category(hue)
    ratio = hue - sector.astype(_F)
    ratio = np.where((sector & 1) == 0, ratio, _F(1) - ratio)
    middle = bottom + ratio * (top - bottom)
    table = [  # (red, green, blue) of sectors 0..4; any other is sector 5's
        (top, middle, bottom),
        (middle, top, bottom),
        (bottom, top, middle),
        (bottom, middle, top),
        (middle, bottom, top),
    ]
    sectors = [sector == k for k in range(5)]
    fallback = (top, bottom, middle)
    return [np.select(sectors, [entry[c] for entry in table], fallback[c]) for c in range(3)]


def _adjust_kernel(adjust):
    def kernel(attrs):
        def run(images, amount):
            pixels = images.astype(_F)
            with np.errstate(all="ignore"):
                channels = adjust(pixels[..., 0], pixels[..., 1], pixels[..., 2], _F(amount))
            return np.stack(channels, axis=-1).astype(images.dtype)

        return run

    return kernel


def _contrast_kernel(attrs):
    """AdjustContrastv2's CPU kernel: each channel's mean over an image's pixels, summed by
    folding the pixels in halves (the second half added to the first, until one row is left),
    times ``1 / pixels``; then every value ``mean + factor * (x - mean)``."""

    def adjust_contrast(images, factor):
        if images.size == 0:
            return images.copy()
        dtype = images.dtype
        height, width, channels = images.shape[-3:]
        pixels = height * width
        planes = images.reshape(-1, pixels, channels)
        right = pixels // 2
        left = pixels - right
        sums = planes[:, left : left + right] + planes[:, :right]
        if left > right:  # an odd count: the middle pixel is copied
            sums = np.concatenate([sums, planes[:, right : right + 1]], axis=1)
        remaining = left
        while remaining > 1:
            right = remaining // 2
            left = remaining - right
            sums[:, :right] += sums[:, left : left + right]
            remaining = left
        mean = sums[:, :1] * (dtype.type(1) / dtype.type(pixels))
        factor = dtype.type(factor)
        with np.errstate(all="ignore"):
            adjusted = mean + factor * (planes - mean)
        return adjusted.reshape(images.shape)

    return adjust_contrast


def _infer_contrast(op):
    images, factor = op.inputs
    check_dtype(images.dtype, _ADJUST_TYPES, "Input 'images' of 'AdjustContrastv2'")
    check_dtype(factor.dtype, {_dtypes.float32}, "Input 'contrast_factor' of 'AdjustContrastv2'")
    images.shape.with_rank_at_least(3)
    if factor.shape.ndims not in (None, 0):
        raise ValueError(f"contrast_factor must be a scalar, got shape {factor.shape}")
    return [(images.dtype, images.shape)]


def _infer_adjust(op):
    images, amount = op.inputs
    check_dtype(images.dtype, _ADJUST_TYPES, f"Input 'images' of '{op.type}'")
    check_dtype(amount.dtype, {_dtypes.float32}, f"Input 'delta' of '{op.type}'")
    if amount.shape.ndims not in (None, 0):
        raise ValueError(f"the adjustment must be a scalar, got shape {amount.shape}")
    return [(images.dtype, images.shape)]


def _no_gradient_of(op_type: str):
    def gradient(op, grad):
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op_type})")

    return gradient


_ADJUST_TYPES = frozenset({_dtypes.float16, _dtypes.float32})


for _type, _adjust in (("AdjustHue", _shift_hue), ("AdjustSaturation", _scale_saturation)):
    define_op(_type, _infer_adjust, _adjust_kernel(_adjust))
    RegisterGradient(_type)(_no_gradient_of(_type))
define_op("AdjustContrastv2", _infer_contrast, _contrast_kernel)
RegisterGradient("AdjustContrastv2")(_no_gradient_of("AdjustContrastv2"))


def _adjust_in_float(function: str, op_type: str, image, amount, name) -> Tensor:
    """``op_type`` on ``image`` in float32 (float16 as it is), converted back to its dtype."""
    image = convert_to_tensor(image, name="image")
    if image.dtype not in _m.NUMERIC_TYPES:
        _fail(function, f"image must be numbers, got {image.dtype.name}", TypeError)
    last = image.shape.as_list()[-1] if image.shape.ndims else None
    if image.shape.ndims == 0 or last not in (3, None):
        _fail(function, f"the last dimension of image must be 3, got shape {image.shape}")
    with graph_to_build_in(image.graph).as_default(), name_scope(name or function):
        floats = image
        if image.dtype not in _ADJUST_TYPES:
            floats = convert_image_dtype(image, _dtypes.float32)
        amount = _m.cast(amount, _dtypes.float32)
        adjusted = apply_op_output(op_type, (floats, amount), None, op_type)
        return convert_image_dtype(adjusted, image.dtype)


def adjust_contrast(images, contrast_factor) -> Tensor:
    """Each channel of each image moved away from (factor > 1) or towards its mean over the
    image's pixels, ``mean + contrast_factor * (x - mean)``, by TensorFlow's
    ``AdjustContrastv2`` kernel (float16 and float32 as they are, other dtypes in float32),
    converted back to the images' dtype with saturation.  It has no gradient, as in
    TensorFlow."""
    images = convert_to_tensor(images, name="images")
    if images.dtype not in _m.NUMERIC_TYPES:
        _fail("adjust_contrast", f"images must be numbers, got {images.dtype.name}", TypeError)
    if images.shape.ndims is not None and images.shape.ndims < 3:
        _fail("adjust_contrast", f"images must be at least 3-D, got shape {images.shape}")
    with graph_to_build_in(images.graph).as_default(), name_scope("adjust_contrast") as scope:
        floats = images
        if images.dtype not in _ADJUST_TYPES:
            floats = convert_image_dtype(images, _dtypes.float32)
        factor = _m.cast(contrast_factor, _dtypes.float32)
        adjusted = apply_op_output("AdjustContrastv2", (floats, factor), None, scope)
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def adjust_hue(image, delta, name: Optional[str] = None) -> Tensor:
    """RGB ``image`` with its hue turned by ``delta`` (a fraction of the colour circle, in
    [-1, 1]), as TensorFlow's ``AdjustHue``: computed in float32, in the image's dtype."""
    known = numpy_value_or_none(delta) if isinstance(delta, Tensor) else delta
    if known is not None and not -1 <= float(known) <= 1:
        _fail("adjust_hue", f"delta must be in the interval [-1, 1], got {float(known)}")
    return _adjust_in_float("adjust_hue", "AdjustHue", image, delta, name)


def adjust_saturation(image, saturation_factor, name: Optional[str] = None) -> Tensor:
    """RGB ``image`` with its saturation multiplied by ``saturation_factor`` (and clipped to
    [0, 1]), as TensorFlow's ``AdjustSaturation``."""
    return _adjust_in_float("adjust_saturation", "AdjustSaturation", image, saturation_factor, name)


def random_hue(image, max_delta, seed: Optional[int] = None) -> Tensor:
    """`adjust_hue` by a delta drawn uniformly from ``[-max_delta, max_delta)``
    (``max_delta`` in [0, 0.5])."""
    if max_delta > 0.5:
        _fail("random_hue", "max_delta must be <= 0.5.")
    if max_delta < 0:
        _fail("random_hue", "max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_hue(image, delta)


def random_saturation(image, lower, upper, seed: Optional[int] = None) -> Tensor:
    """`adjust_saturation` by a factor drawn uniformly from ``[lower, upper)``."""
    return adjust_saturation(image, _random_factor("random_saturation", lower, upper, seed))


def adjust_gamma(image, gamma=1, gain=1) -> Tensor:
    """``gain * image ** gamma`` (gamma correction), computed on the [0, 1] scale of the
    image's dtype (float16 and float32 as they are, others in float32) and converted back with
    saturation.  ``gamma`` must be non-negative."""
    image = convert_to_tensor(image, name="image")
    if image.dtype not in _m.NUMERIC_TYPES:
        _fail("adjust_gamma", f"image must be numbers, got {image.dtype.name}", TypeError)
    with graph_to_build_in(image.graph).as_default(), name_scope("adjust_gamma"):
        floats = image
        if image.dtype not in _ADJUST_TYPES:
            floats = convert_image_dtype(image, _dtypes.float32)
        if isinstance(gamma, Tensor):
            gamma = _m.cast(gamma, floats.dtype)
            check = Assert(
                _m.greater_equal(gamma, _m.cast(0, floats.dtype)),
                ["Gamma should be a non-negative real number."],
            )
            with control_dependencies([check]):
                gamma = _a.identity(gamma)
        elif gamma < 0:
            _fail("adjust_gamma", "Gamma should be a non-negative real number.")
        else:
            gamma = convert_to_tensor(np.asarray(gamma, floats.dtype.as_numpy_dtype))
        gain = _m.cast(gain, floats.dtype)
        adjusted = _m.multiply(gain, _m.pow(floats, gamma))
        return convert_image_dtype(adjusted, image.dtype, saturate=True)


__all__ = [
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "hsv_to_rgb",
    "random_hue",
    "random_saturation",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "yiq_to_rgb",
    "yuv_to_rgb",
]

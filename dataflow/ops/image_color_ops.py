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
    [0, 1], by TensorFlow's formulas (a grey pixel has hue and saturation 0)."""
    images = _rgb_image("rgb_to_hsv", images)
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "RGBToHSV"):
        red, green, blue = _channels(images)
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
        norm = reciprocal(_m.multiply(_m.where_v2(has_spread, spread, one), 6.0))
        hue = _m.where_v2(
            _m.equal(red, value),
            _m.multiply(norm, _m.subtract(green, blue)),
            _m.where_v2(
                _m.equal(green, value),
                _m.add(_m.multiply(norm, _m.subtract(blue, red)), 2.0 / 6.0),
                _m.add(_m.multiply(norm, _m.subtract(red, green)), 4.0 / 6.0),
            ),
        )
        hue = _m.where_v2(has_spread, hue, zero)
        hue = _m.where_v2(_m.less(hue, zero), _m.add(hue, 1.0), hue)
        return _a.stack([hue, saturation, value], axis=-1)


def hsv_to_rgb(images, name: Optional[str] = None) -> Tensor:
    """HSV ``images`` (channels last, each in [0, 1]) as RGB, by TensorFlow's formulas."""
    images = _rgb_image("hsv_to_rgb", images)
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "HSVToRGB"):
        hue, saturation, value = _channels(images)
        sixths = _m.multiply(hue, 6.0)

        def ramp(offset, rising):
            distance = _m.abs(_m.subtract(sixths, offset))
            level = _m.subtract(distance, 1.0) if rising else _m.subtract(2.0, distance)
            return _m.clip_by_value(level, 0.0, 1.0)

        grey = _m.subtract(1.0, saturation)
        rgb = [
            _m.multiply(_m.add(grey, _m.multiply(saturation, ramp(3.0, True))), value),
            _m.multiply(_m.add(grey, _m.multiply(saturation, ramp(2.0, False))), value),
            _m.multiply(_m.add(grey, _m.multiply(saturation, ramp(4.0, False))), value),
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


def _hsv_of(rgb: np.ndarray):
    """TensorFlow's float32 HSV of the adjust kernels (rgb: [..., 3])."""
    red, green, blue = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    value = np.maximum(red, np.maximum(green, blue))
    spread = value - np.minimum(red, np.minimum(green, blue))
    saturation = np.where(value > 0, spread / np.where(value > 0, value, 1), np.float32(0))
    norm = np.float32(1) / (np.float32(6) * spread)
    hue = np.where(
        red == value,
        norm * (green - blue),
        np.where(
            green == value,
            norm * (blue - red) + np.float32(2.0 / 6.0),
            norm * (red - green) + np.float32(4.0 / 6.0),
        ),
    )
    hue = np.where(spread <= 0, np.float32(0), hue)
    hue = np.where(hue < 0, hue + np.float32(1), hue)
    return hue.astype(np.float32), saturation.astype(np.float32), value


def _rgb_of(hue, saturation, value) -> np.ndarray:
    """TensorFlow's float32 RGB of the adjust kernels: by sixths of the hue circle."""
    chroma = saturation * value
    low = value - chroma
    sixths = hue * np.float32(6)
    sector = np.trunc(sixths).astype(np.int64)
    phase = np.mod(sixths, np.float32(2))
    mid = chroma * (np.float32(1) - np.abs(phase - np.float32(1)))
    zero = np.zeros_like(chroma)
    # (red, green, blue) of sectors 0..5; any other sector is black, as in TensorFlow
    table = [
        (chroma, mid, zero),
        (mid, chroma, zero),
        (zero, chroma, mid),
        (zero, mid, chroma),
        (mid, zero, chroma),
        (chroma, zero, mid),
    ]
    channels = []
    for c in range(3):
        choices = [entry[c] for entry in table]
        channel = np.select([sector == k for k in range(6)], choices, default=-low)
        channels.append(channel + low)
    return np.stack(channels, axis=-1).astype(np.float32)


def _adjust_kernel(adjust):
    def kernel(attrs):
        def run(images, amount):
            with np.errstate(all="ignore"):
                hue, saturation, value = _hsv_of(images.astype(np.float32))
                hue, saturation = adjust(hue, saturation, np.float32(amount))
                return _rgb_of(hue, saturation, value).astype(images.dtype)

        return run

    return kernel


def _shift_hue(hue, saturation, delta):
    hue = np.fmod(hue + delta, np.float32(1))
    return np.where(hue < 0, hue + np.float32(1), hue), saturation


def _scale_saturation(hue, saturation, factor):
    return hue, np.clip(saturation * factor, np.float32(0), np.float32(1))


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

"""How the functions of ``tf.image`` take their arguments: one image or a batch of them,
random factors within bounds, and errors that name the function and the user's line."""

from __future__ import annotations

from ..framework.graph import Tensor, _user_location
from ..framework.tensor_conversion import convert_to_tensor
from . import array_ops as _a
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
from .random_ops import random_uniform


def _fail(function: str, message: str, error=ValueError):
    raise error(f"{function} at {_user_location()}: {message}")


def _as_batch(function: str, images) -> tuple[Tensor, bool]:
    """``images`` as a 4-D batch, and whether it was a single 3-D image."""
    images = convert_to_tensor(images, name="images")
    rank = images.shape.ndims
    if rank == 3:
        return _a.expand_dims(images, 0), True
    if rank == 4:
        return images, False
    _fail(function, f"'images' must have either 3 or 4 dimensions, got shape {images.shape}")


def _unbatch(images: Tensor, single: bool) -> Tensor:
    return _a.squeeze(images, [0]) if single else images


def _random_factor(function: str, lower, upper, seed) -> Tensor:
    """A factor drawn uniformly from ``[lower, upper)``, ``0 <= lower < upper``."""
    if upper <= lower:
        _fail(function, "upper must be > lower.")
    if lower < 0:
        _fail(function, "lower must be non-negative.")
    return random_uniform([], lower, upper, seed=seed)

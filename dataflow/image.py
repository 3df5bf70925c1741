"""``df.image``: TF1's everyday image ops (``tf.compat.v1.image``): resizing, flips, crops,
dtype conversion, grayscale, brightness and per-image standardization.

Images are ``[height, width, channels]`` or batches ``[batch, height, width, channels]``.
Everything here composes existing ops, so gradients, conds, loops and saving come with them:
resizing gathers the source rows and columns each output pixel reads (TensorFlow's sampling
rules, with or without ``align_corners``/``half_pixel_centers``) and blends them, so its
gradient is the gather's scatter, as TensorFlow's ``ResizeBilinearGrad`` computes it.
"""

from __future__ import annotations

import enum
from typing import Optional

import numpy as np

from . import dtypes as _dtypes
from .graph import (
    Tensor,
    _user_location,
    control_dependencies,
    convert_to_tensor,
    get_default_graph,
    graph_to_build_in,
    name_scope,
    numpy_value_or_none,
)
from .ops import array_ops as _a
from .ops import math_ops as _m
from .ops.misc_ops import Assert
from .ops.random_ops import random_uniform
from .ops.reverse_ops import reverse

__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "central_crop",
    "crop_to_bounding_box",
    "grayscale_to_rgb",
    "pad_to_bounding_box",
    "random_brightness",
    "random_contrast",
    "resize_with_crop_or_pad",
    "rot90",
    "transpose",
    "transpose_image",
    "convert_image_dtype",
    "flip_left_right",
    "flip_up_down",
    "per_image_standardization",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "resize_bilinear",
    "resize_image_with_crop_or_pad",
    "resize_images",
    "resize_nearest_neighbor",
    "rgb_to_grayscale",
]


class ResizeMethod(enum.IntEnum):
    """TF1's resize methods (``tf.compat.v1.image.ResizeMethod``)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


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


# -- resizing --------------------------------------------------------------------------------------
def _static_size(function: str, size) -> tuple:
    value = numpy_value_or_none(size) if isinstance(size, Tensor) else np.asarray(size)
    if value is None or value.shape != (2,) or value.dtype.kind not in "iu":
        _fail(function, f"size must be a 1-D int32 pair [new_height, new_width], got {size!r}")
    if (value <= 0).any():
        _fail(function, f"size must be positive, got {value.tolist()}")
    return int(value[0]), int(value[1])


def _source_positions(in_size: Tensor, out_size: int, align_corners: bool, half_pixel: bool):
    """The (float32) source coordinate each of ``out_size`` outputs samples, and the scale."""
    in_f = _m.cast(in_size, _dtypes.float32)
    if align_corners and out_size > 1:
        scale = _m.realdiv(_m.subtract(in_f, 1.0), float(out_size - 1))
    else:
        scale = _m.realdiv(in_f, float(out_size))
    outputs = _a.range(out_size, dtype=_dtypes.float32)
    if half_pixel:
        return _m.subtract(_m.multiply(_m.add(outputs, 0.5), scale), 0.5), scale
    return _m.multiply(outputs, scale), scale


def _nearest_indices(in_size, out_size, align_corners, half_pixel) -> Tensor:
    in_f = _m.cast(in_size, _dtypes.float32)
    if align_corners and out_size > 1:
        scale = _m.realdiv(_m.subtract(in_f, 1.0), float(out_size - 1))
    else:
        scale = _m.realdiv(in_f, float(out_size))
    outputs = _a.range(out_size, dtype=_dtypes.float32)
    if half_pixel:
        position = _m.floor(_m.multiply(_m.add(outputs, 0.5), scale))
    elif align_corners:
        # TensorFlow rounds halves away from zero here (std::round); positions are >= 0.
        position = _m.floor(_m.add(_m.multiply(outputs, scale), 0.5))
    else:
        position = _m.floor(_m.multiply(outputs, scale))
    return _m.minimum(_m.cast(position, _dtypes.int32), _m.subtract(in_size, 1))


def _bilinear_along(images: Tensor, axis: int, out_size: int, align_corners, half_pixel):
    in_size = _a.shape(images)[axis]
    position, _ = _source_positions(in_size, out_size, align_corners, half_pixel)
    floor = _m.floor(position)
    last = _m.subtract(in_size, 1)
    lower = _m.minimum(_m.maximum(_m.cast(floor, _dtypes.int32), 0), last)
    upper = _m.minimum(_m.cast(_m.ceil(position) if half_pixel else floor + 1, _dtypes.int32), last)
    weight_shape = [1, 1, 1, 1]
    weight_shape[axis] = out_size
    weight = _a.reshape(_m.subtract(position, floor), weight_shape)
    low = _a.gather(images, lower, axis=axis)
    high = _a.gather(images, upper, axis=axis)
    return _m.add(low, _m.multiply(_m.subtract(high, low), weight))


def resize_bilinear(
    images,
    size,
    align_corners: bool = False,
    name: Optional[str] = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """Bilinear resizing of ``images`` to ``size = [new_height, new_width]``; the result is
    float32 whatever the input dtype, as TensorFlow's."""
    if align_corners and half_pixel_centers:
        _fail("resize_bilinear", "half_pixel_centers and align_corners may not both be true")
    height, width = _static_size("resize_bilinear", size)
    graph = images.graph if isinstance(images, Tensor) else get_default_graph()
    with graph.as_default(), graph.name_scope(name or "ResizeBilinear"):
        batch, single = _as_batch("resize_bilinear", images)
        batch = _m.cast(batch, _dtypes.float32)
        rows = _bilinear_along(batch, 1, height, align_corners, half_pixel_centers)
        both = _bilinear_along(rows, 2, width, align_corners, half_pixel_centers)
        return _unbatch(both, single)


def resize_nearest_neighbor(
    images,
    size,
    align_corners: bool = False,
    name: Optional[str] = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """Nearest-neighbour resizing of ``images`` to ``size``; the dtype is kept."""
    if align_corners and half_pixel_centers:
        _fail(
            "resize_nearest_neighbor", "half_pixel_centers and align_corners may not both be true"
        )
    height, width = _static_size("resize_nearest_neighbor", size)
    graph = images.graph if isinstance(images, Tensor) else get_default_graph()
    with graph.as_default(), graph.name_scope(name or "ResizeNearestNeighbor"):
        batch, single = _as_batch("resize_nearest_neighbor", images)
        shape = _a.shape(batch)
        rows = _nearest_indices(shape[1], height, align_corners, half_pixel_centers)
        columns = _nearest_indices(shape[2], width, align_corners, half_pixel_centers)
        picked = _a.gather(_a.gather(batch, rows, axis=1), columns, axis=2)
        return _unbatch(picked, single)


def resize_images(
    images,
    size,
    method=ResizeMethod.BILINEAR,
    align_corners: bool = False,
    preserve_aspect_ratio: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """``images`` resized to ``size`` by ``method`` (BILINEAR or NEAREST_NEIGHBOR here; BICUBIC
    and AREA are refused).  A resize to the same size returns the images unchanged, as in
    TensorFlow; bilinear results are float32."""
    if preserve_aspect_ratio:
        _fail("resize_images", "preserve_aspect_ratio is not supported", NotImplementedError)
    method = ResizeMethod(method)
    height, width = _static_size("resize_images", size)
    images = convert_to_tensor(images, name="images")
    dims = images.shape.as_list() if images.shape.ndims in (3, 4) else None
    if dims is not None and dims[-3:-1] == [height, width]:
        return images
    if method == ResizeMethod.BILINEAR:
        return resize_bilinear(images, size, align_corners, name=name)
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        return resize_nearest_neighbor(images, size, align_corners, name=name)
    _fail("resize_images", f"method {method.name} is not supported", NotImplementedError)


# -- flips -----------------------------------------------------------------------------------------
def _flip(function: str, image, image_axis: int) -> Tensor:
    image = convert_to_tensor(image, name="image")
    rank = image.shape.ndims
    if rank not in (3, 4):
        _fail(function, f"'image' must have either 3 or 4 dimensions, got shape {image.shape}")
    return reverse(image, [image_axis + rank - 3])


def flip_left_right(image) -> Tensor:
    """``image`` mirrored along its width."""
    return _flip("flip_left_right", image, 1)


def flip_up_down(image) -> Tensor:
    """``image`` mirrored along its height."""
    return _flip("flip_up_down", image, 0)


def _random_flip(function: str, image, image_axis: int, seed) -> Tensor:
    image = convert_to_tensor(image, name="image")
    rank = image.shape.ndims
    flipped = _flip(function, image, image_axis)
    if rank == 3:
        draw = random_uniform([], 0, 1.0, seed=seed)
        return _m.where_v2(_m.less(draw, 0.5), flipped, image)
    draws = random_uniform(_a.reshape(_a.shape(image)[0], [1]), 0, 1.0, seed=seed)
    chosen = _a.reshape(_m.less(draws, 0.5), [-1, 1, 1, 1])
    return _m.where_v2(chosen, flipped, image)


def random_flip_left_right(image, seed: Optional[int] = None) -> Tensor:
    """``image`` mirrored along its width with probability 1/2 (each image of a batch on its
    own draw)."""
    return _random_flip("random_flip_left_right", image, 1, seed)


def random_flip_up_down(image, seed: Optional[int] = None) -> Tensor:
    """``image`` mirrored along its height with probability 1/2 (each image of a batch on its
    own draw)."""
    return _random_flip("random_flip_up_down", image, 0, seed)


# -- dtype, colour, brightness ---------------------------------------------------------------------
def convert_image_dtype(image, dtype, saturate: bool = False, name: Optional[str] = None) -> Tensor:
    """``image`` in ``dtype``, rescaled between the ranges the dtypes stand for: floats in
    [0, 1], integers in [0, max].  Floats to integers scale by ``max + 0.5`` and truncate, as
    TensorFlow; ``saturate`` clips first."""
    image = convert_to_tensor(image, name="image")
    dtype = _dtypes.as_dtype(dtype)
    source = image.dtype
    if dtype not in _m.NUMERIC_TYPES or source not in _m.NUMERIC_TYPES:
        _fail("convert_image_dtype", f"cannot convert {source.name} to {dtype.name}", TypeError)
    if source is dtype:
        return _a.identity(image, name=name)
    graph = graph_to_build_in(image.graph)
    with graph.as_default(), graph.name_scope(name or "convert_image"):
        source_int = source in _m.INT_TYPES
        target_int = dtype in _m.INT_TYPES
        if source_int and target_int:
            source_max = np.iinfo(source.as_numpy_dtype).max
            target_max = np.iinfo(dtype.as_numpy_dtype).max
            if source_max > target_max:
                scale = (source_max + 1) // (target_max + 1)
                return _m.cast(_m.floordiv(image, scale), dtype)
            scale = (target_max + 1) // (source_max + 1)
            return _m.multiply(_m.cast(image, dtype), scale)
        if not source_int and not target_int:
            return _m.cast(image, dtype)
        if source_int:
            scale = 1.0 / np.iinfo(source.as_numpy_dtype).max
            return _m.multiply(_m.cast(image, dtype), scale)
        scale = np.iinfo(dtype.as_numpy_dtype).max + 0.5
        if saturate:
            image = _m.clip_by_value(image, 0.0, 1.0)
        return _m.cast(_m.multiply(image, scale), dtype)


_GRAY_WEIGHTS = [0.2989, 0.5870, 0.1140]


def rgb_to_grayscale(images, name: Optional[str] = None) -> Tensor:
    """The luma of RGB ``images`` (ITU-R 601 weights), with a last dimension of 1, in the input
    dtype."""
    images = convert_to_tensor(images, name="images")
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "rgb_to_grayscale"):
        floats = convert_image_dtype(images, _dtypes.float32)
        gray = _m.reduce_sum(_m.multiply(floats, _GRAY_WEIGHTS), -1, keepdims=True)
        return convert_image_dtype(gray, images.dtype)


def adjust_brightness(image, delta) -> Tensor:
    """``image + delta``, computed in float32 (``delta`` on the [0, 1] scale) and converted
    back to the image's dtype."""
    image = convert_to_tensor(image, name="image")
    with graph_to_build_in(image.graph).as_default(), name_scope("adjust_brightness"):
        floats = convert_image_dtype(image, _dtypes.float32)
        brighter = _m.add(floats, _m.cast(delta, _dtypes.float32), name="adjusted")
        return convert_image_dtype(brighter, image.dtype, saturate=True)


def per_image_standardization(image) -> Tensor:
    """Each image scaled to mean 0 and variance 1 over its pixels and channels (float32); the
    divisor is at least ``1 / sqrt(pixels)`` so a uniform image does not divide by 0."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims not in (3, 4):
        _fail(
            "per_image_standardization",
            f"'image' must have either 3 or 4 dimensions, got shape {image.shape}",
        )
    with graph_to_build_in(image.graph).as_default(), name_scope("per_image_standardization"):
        floats = _m.cast(image, _dtypes.float32)
        axes = [-1, -2, -3]
        pixels = _m.reduce_prod(_m.cast(_a.shape(floats)[-3:], _dtypes.float32))
        mean = _m.reduce_mean(floats, axes, keepdims=True)
        variance = _m.reduce_mean(_m.squared_difference(floats, mean), axes, keepdims=True)
        divisor = _m.maximum(_m.sqrt(variance), _m.rsqrt(pixels))
        return _m.realdiv(_m.subtract(floats, mean), divisor)


# -- crops -----------------------------------------------------------------------------------------
def _static_hw(function: str, image: Tensor) -> tuple:
    rank = image.shape.ndims
    if rank not in (3, 4):
        _fail(function, f"'image' must have either 3 or 4 dimensions, got shape {image.shape}")
    height, width = image.shape.as_list()[-3:-1]
    if height is None or width is None:
        _fail(function, f"needs an image of known height and width, got shape {image.shape}")
    return height, width


def _crop(image: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    if image.shape.ndims == 3:
        return _a.slice(image, [top, left, 0], [height, width, -1])
    return _a.slice(image, [0, top, left, 0], [-1, height, width, -1])


def central_crop(image, central_fraction) -> Tensor:
    """The central ``central_fraction`` (in (0, 1]) of ``image``'s height and width."""
    if not 0.0 < central_fraction <= 1.0:
        _fail("central_crop", "central_fraction must be within (0, 1]")
    image = convert_to_tensor(image, name="image")
    height, width = _static_hw("central_crop", image)
    if central_fraction == 1.0:
        return image
    top = int((height - height * central_fraction) / 2)
    left = int((width - width * central_fraction) / 2)
    return _crop(image, top, left, height - 2 * top, width - 2 * left)


def resize_image_with_crop_or_pad(image, target_height: int, target_width: int) -> Tensor:
    """``image`` cropped or zero-padded, centred, to ``target_height`` x ``target_width``."""
    image = convert_to_tensor(image, name="image")
    height, width = _static_hw("resize_image_with_crop_or_pad", image)
    if target_height <= 0 or target_width <= 0:
        _fail("resize_image_with_crop_or_pad", "target_height and target_width must be > 0")
    top = max((height - target_height) // 2, 0)
    left = max((width - target_width) // 2, 0)
    cropped = _crop(image, top, left, min(height, target_height), min(width, target_width))
    pad_top = max((target_height - height) // 2, 0)
    pad_left = max((target_width - width) // 2, 0)
    pad_bottom = target_height - min(height, target_height) - pad_top
    pad_right = target_width - min(width, target_width) - pad_left
    if not (pad_top or pad_left or pad_bottom or pad_right):
        return cropped
    paddings = [[pad_top, pad_bottom], [pad_left, pad_right], [0, 0]]
    if image.shape.ndims == 4:
        paddings = [[0, 0]] + paddings
    return _a.pad(cropped, paddings)


def random_crop(value, size, seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """A block of ``value`` of shape ``size`` at a uniformly drawn offset.  ``size`` larger
    than ``value`` in any dimension is an error (at build time when both are known)."""
    value = convert_to_tensor(value, name="value")
    with graph_to_build_in(value.graph).as_default(), name_scope(name or "random_crop"):
        size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
        static = numpy_value_or_none(size)
        dims = value.shape.as_list() if value.shape.ndims is not None else None
        if static is not None and dims is not None:
            if len(static) != len(dims):
                _fail("random_crop", f"size {static.tolist()} must have one entry per dimension")
            too_big = [d for d, s in zip(dims, static) if d is not None and s > d]
            if too_big:
                _fail("random_crop", f"Need value.shape >= size, got {dims} and {static.tolist()}")
        shape = _a.shape(value)
        check = Assert(
            _m.reduce_all(_m.greater_equal(shape, size)),
            ["Need value.shape >= size, got ", shape, size],
            summarize=1000,
        )
        with control_dependencies([check]):
            limit = _m.add(_m.subtract(shape, size), 1)
        offset = _m.mod(
            random_uniform(
                _a.shape(shape), maxval=np.iinfo(np.int32).max, dtype=_dtypes.int32, seed=seed
            ),
            limit,
        )
        return _a.slice(value, offset, size)


# -- TF1's data augmentation and box crops ---------------------------------------------------------
def random_brightness(image, max_delta, seed: Optional[int] = None) -> Tensor:
    """`adjust_brightness` by a delta drawn uniformly from ``[-max_delta, max_delta)``."""
    if max_delta < 0:
        _fail("random_brightness", "max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def adjust_contrast(images, contrast_factor) -> Tensor:
    """Each channel of each image moved away from (factor > 1) or towards its mean over the
    image's pixels: ``(x - mean) * contrast_factor + mean``, computed in float32 and converted
    back to the images' dtype."""
    images = convert_to_tensor(images, name="images")
    if images.shape.ndims is not None and images.shape.ndims < 3:
        _fail("adjust_contrast", f"images must be at least 3-D, got shape {images.shape}")
    with graph_to_build_in(images.graph).as_default(), name_scope("adjust_contrast"):
        floats = convert_image_dtype(images, _dtypes.float32)
        mean = _m.reduce_mean(floats, [-3, -2], keepdims=True)
        factor = _m.cast(contrast_factor, _dtypes.float32)
        adjusted = _m.add(_m.multiply(_m.subtract(floats, mean), factor), mean)
        return convert_image_dtype(adjusted, images.dtype, saturate=True)


def random_contrast(image, lower, upper, seed: Optional[int] = None) -> Tensor:
    """`adjust_contrast` by a factor drawn uniformly from ``[lower, upper)``."""
    if upper <= lower:
        _fail("random_contrast", "upper must be > lower.")
    if lower < 0:
        _fail("random_contrast", "lower must be non-negative.")
    factor = random_uniform([], lower, upper, seed=seed)
    return adjust_contrast(image, factor)


def _static_ints(function: str, **values) -> list[int]:
    found = []
    for name, value in values.items():
        known = numpy_value_or_none(value) if isinstance(value, Tensor) else value
        if known is None or np.ndim(known) != 0:
            _fail(function, f"{name} must be an int known when the graph is built, got {value!r}")
        found.append(int(known))
    return found


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The ``target_height`` x ``target_width`` block of ``image`` whose top-left corner is at
    (``offset_height``, ``offset_width``)."""
    image = convert_to_tensor(image, name="image")
    height, width = _static_hw("crop_to_bounding_box", image)
    top, left, rows, cols = _static_ints(
        "crop_to_bounding_box",
        offset_height=offset_height,
        offset_width=offset_width,
        target_height=target_height,
        target_width=target_width,
    )
    if top < 0 or left < 0:
        _fail("crop_to_bounding_box", "offset_height and offset_width must be >= 0.")
    if rows <= 0 or cols <= 0:
        _fail("crop_to_bounding_box", "target_height and target_width must be > 0.")
    if top + rows > height or left + cols > width:
        _fail("crop_to_bounding_box", "the box must lie within the image")
    return _crop(image, top, left, rows, cols)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``image`` placed at (``offset_height``, ``offset_width``) of a zero image of
    ``target_height`` x ``target_width``."""
    image = convert_to_tensor(image, name="image")
    height, width = _static_hw("pad_to_bounding_box", image)
    top, left, rows, cols = _static_ints(
        "pad_to_bounding_box",
        offset_height=offset_height,
        offset_width=offset_width,
        target_height=target_height,
        target_width=target_width,
    )
    if top < 0 or left < 0:
        _fail("pad_to_bounding_box", "offset_height and offset_width must be >= 0")
    if rows < top + height:
        _fail("pad_to_bounding_box", "target_height must be >= offset_height + height")
    if cols < left + width:
        _fail("pad_to_bounding_box", "target_width must be >= offset_width + width")
    paddings = [[top, rows - top - height], [left, cols - left - width], [0, 0]]
    if image.shape.ndims == 4:
        paddings = [[0, 0]] + paddings
    return _a.pad(image, paddings)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def grayscale_to_rgb(images, name: Optional[str] = None) -> Tensor:
    """Gray ``images`` (a last dimension of 1) with that channel repeated three times."""
    images = convert_to_tensor(images, name="images")
    if images.shape.ndims is not None and images.shape.as_list()[-1] not in (1, None):
        _fail("grayscale_to_rgb", f"the last dimension must be 1, got shape {images.shape}")
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "grayscale_to_rgb"):
        multiples = [1] * (images.shape.ndims - 1) + [3]
        return _a.tile(images, multiples)


def transpose_image(image, name: Optional[str] = None) -> Tensor:
    """``image`` with its height and width swapped."""
    image = convert_to_tensor(image, name="image")
    _static_rank = image.shape.ndims
    if _static_rank not in (3, 4):
        _fail("transpose_image", f"'image' must have either 3 or 4 dimensions, got {image.shape}")
    perm = [1, 0, 2] if _static_rank == 3 else [0, 2, 1, 3]
    return _a.transpose(image, perm, name=name or "transpose_image")


transpose = transpose_image


def rot90(image, k=1, name: Optional[str] = None) -> Tensor:
    """``image`` rotated counter-clockwise by ``k`` quarter turns (``np.rot90``), ``k`` known
    when the graph is built."""
    image = convert_to_tensor(image, name="image")
    (turns,) = _static_ints("rot90", k=k)
    if image.shape.ndims not in (3, 4):
        _fail("rot90", f"'image' must have either 3 or 4 dimensions, got shape {image.shape}")
    height_axis = image.shape.ndims - 3
    with graph_to_build_in(image.graph).as_default(), name_scope(name or "rot90"):
        turns %= 4
        if turns == 0:
            return _a.identity(image)
        if turns == 2:
            return reverse(image, [height_axis, height_axis + 1])
        if turns == 1:  # the last column becomes the first row
            return transpose_image(reverse(image, [height_axis + 1]))
        return reverse(transpose_image(image), [height_axis + 1])


# -- image files: decoding and encoding (dataflow/ops/image_codec_ops.py) --------------------------
from .ops.image_codec_ops import (  # noqa: E402, F401
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

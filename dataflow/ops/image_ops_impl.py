"""``df.image``: TF1's image ops (``tf.compat.v1.image``): resizing, flips, crops, dtype
conversion, colour spaces and adjustments, image metrics (PSNR, SSIM), patches, and the box
ops (crop_and_resize, non-max suppression, drawing boxes, glimpses, distorted crops).

Images are ``[height, width, channels]`` or batches ``[batch, height, width, channels]``.
Most functions here compose existing ops, so gradients, conds, loops and saving come with
them: resizing gathers the source rows and columns each output pixel reads (TensorFlow's
sampling rules, with or without ``align_corners``/``half_pixel_centers``; bicubic and area
weights from the op ``ImageResizeTaps``) and blends them, so its gradient is the gather's
scatter, as TensorFlow's ``ResizeBilinearGrad`` computes it; crop_and_resize likewise, with
respect to the image and the boxes.  Ops with kernels of their own: ``AdjustHue``,
``AdjustSaturation`` (here), and the box ops of `dataflow.ops.image_ops`.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient
from ..framework.graph import (
    Tensor,
    _user_location,
    control_dependencies,
    convert_to_tensor,
    get_default_graph,
    graph_to_build_in,
    name_scope,
    numpy_value_or_none,
)
from ..framework.op_registry import apply_op, apply_op_output, define_op
from . import array_ops as _a
from . import math_ops as _m
from .conv_ops import avg_pool, depthwise_conv2d
from .extra_math_ops import reciprocal
from .image_ops import (
    combined_non_max_suppression,
    convert_image_dtype,
    draw_bounding_boxes,
    extract_glimpse,
    non_max_suppression,
    non_max_suppression_padded,
    non_max_suppression_with_overlaps,
    non_max_suppression_with_scores,
    sample_distorted_bounding_box,
)
from .math_ops import check_dtype
from .matrix_ops import tensordot
from .misc_ops import Assert
from .nn_ops import relu
from .random_ops import random_uniform
from .reverse_ops import reverse

__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "central_crop",
    "combined_non_max_suppression",
    "convert_image_dtype",
    "crop_and_resize",
    "crop_to_bounding_box",
    "draw_bounding_boxes",
    "extract_glimpse",
    "extract_image_patches",
    "extract_patches",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "hsv_to_rgb",
    "image_gradients",
    "non_max_suppression",
    "non_max_suppression_overlaps",
    "non_max_suppression_padded",
    "non_max_suppression_with_scores",
    "pad_to_bounding_box",
    "per_image_standardization",
    "psnr",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "random_hue",
    "random_saturation",
    "resize",
    "resize_area",
    "resize_bicubic",
    "resize_bilinear",
    "resize_image_with_crop_or_pad",
    "resize_image_with_pad",
    "resize_images",
    "resize_nearest_neighbor",
    "resize_with_crop_or_pad",
    "rgb_to_grayscale",
    "rgb_to_hsv",
    "rgb_to_yiq",
    "rgb_to_yuv",
    "rot90",
    "sample_distorted_bounding_box",
    "sobel_edges",
    "ssim",
    "ssim_multiscale",
    "total_variation",
    "transpose",
    "transpose_image",
    "yiq_to_rgb",
    "yuv_to_rgb",
]


class ResizeMethod:
    """TF1's resize methods (``tf.compat.v1.image.ResizeMethod``); `resize_images` also takes
    TensorFlow 2's names of them (``"bilinear"``, ``"nearest"``, ``"bicubic"``, ``"area"``)."""

    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


_METHOD_NAMES = {"bilinear": 0, "nearest": 1, "bicubic": 2, "area": 3}


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


# Bicubic and area resizing read a different number of source pixels per output pixel; the op
# below gives, for one axis, each output's source indices and weights (TensorFlow's sampling
# rules), and the resize gathers and blends them, so the gradient is the gather's scatter.
_CUBIC_TABLE_SIZE = 1024


def _cubic_table(a: float) -> np.ndarray:
    """TensorFlow's tabulated cubic kernel: for ``i / 1024`` in [0, 1], the weights of the
    nearer and the farther tap on one side, in float32."""
    x = (np.arange(_CUBIC_TABLE_SIZE + 1) / _CUBIC_TABLE_SIZE).astype(np.float32)
    x = x.astype(np.float64)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    x = x + 1.0
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([near, far], axis=1).astype(np.float32)


_CUBIC_TABLES = {-0.75: _cubic_table(-0.75), -0.5: _cubic_table(-0.5)}


def _resize_scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    if align_corners and out_size > 1:
        return np.float32(in_size - 1) / np.float32(out_size - 1)
    return np.float32(in_size) / np.float32(out_size)


def _bicubic_taps(in_size: int, out_size: int, align_corners: bool, half_pixel: bool):
    scale = _resize_scale(in_size, out_size, align_corners)
    outputs = np.arange(out_size, dtype=np.float32)
    if half_pixel:
        position = (outputs + np.float32(0.5)) * scale - np.float32(0.5)
    else:
        position = outputs * scale
    base = np.floor(position)
    offset = np.rint((position - base) * np.float32(_CUBIC_TABLE_SIZE)).astype(np.int64)
    table = _CUBIC_TABLES[-0.5 if half_pixel else -0.75]
    weights = np.stack(
        [
            table[offset, 1],
            table[offset, 0],
            table[_CUBIC_TABLE_SIZE - offset, 0],
            table[_CUBIC_TABLE_SIZE - offset, 1],
        ],
        axis=1,
    )
    wanted = base.astype(np.int64)[:, None] + np.arange(-1, 3)
    indices = np.clip(wanted, 0, in_size - 1)
    if half_pixel:
        # Keys' kernel: taps outside the image weigh nothing, and the rest are renormalized.
        weights = np.where(indices == wanted, weights, np.float32(0))
        total = weights.sum(axis=1, keepdims=True, dtype=np.float32)
        usable = np.abs(total) >= 1000 * np.finfo(np.float32).tiny
        weights = np.where(usable, weights / np.where(usable, total, 1), weights)
    return indices, weights.astype(np.float32)


def _area_taps(in_size: int, out_size: int, align_corners: bool):
    scale = _resize_scale(in_size, out_size, align_corners)
    outputs = np.arange(out_size, dtype=np.float32)
    begin = outputs * scale
    end = (outputs + np.float32(1)) * scale
    first = np.floor(begin).astype(np.int64)
    count = int((np.ceil(end).astype(np.int64) - first).max()) if out_size else 0
    cells = first[:, None] + np.arange(count)
    inside = cells < np.ceil(end).astype(np.int64)[:, None]
    lower = cells.astype(np.float32)
    begin, end = begin[:, None], end[:, None]
    weights = np.where(
        lower < begin,
        np.where(lower + 1 > end, scale, lower + 1 - begin),
        np.where(lower + 1 > end, end - lower, np.float32(1)),
    ).astype(np.float32)
    weights = np.where(inside, weights / scale, np.float32(0)).astype(np.float32)
    return np.clip(cells, 0, max(in_size - 1, 0)), weights


def _infer_resize_taps(op):
    size = op.attrs["out_size"]
    return [(_dtypes.int32, [size, None]), (_dtypes.float32, [size, None])]


def _resize_taps_kernel(attrs):
    method, out_size = attrs["method"], attrs["out_size"]
    align_corners, half_pixel = attrs["align_corners"], attrs["half_pixel_centers"]

    def resize_taps(in_size):
        in_size = int(in_size)
        if method == "bicubic":
            indices, weights = _bicubic_taps(in_size, out_size, align_corners, half_pixel)
        else:
            indices, weights = _area_taps(in_size, out_size, align_corners)
        return indices.astype(np.int32), weights

    return resize_taps


define_op("ImageResizeTaps", _infer_resize_taps, _resize_taps_kernel)
NotDifferentiable("ImageResizeTaps")  # its input is a size


def _resize_along(images: Tensor, axis: int, out_size: int, method: str, align_corners, half):
    """``images`` resampled along ``axis`` (1 or 2) to ``out_size`` by ``method``'s taps."""
    in_size = _a.shape(images)[axis]
    attrs = {
        "out_size": out_size,
        "method": method,
        "align_corners": bool(align_corners),
        "half_pixel_centers": bool(half),
    }
    indices, weights = apply_op("ImageResizeTaps", (in_size,), attrs, "taps").outputs
    picked = _a.gather(images, indices, axis=axis)  # the taps as a new axis after ``axis``
    shape = [1, 1, 1, 1, 1]
    shape[axis] = out_size
    shape[axis + 1] = -1
    return _m.reduce_sum(_m.multiply(picked, _a.reshape(weights, shape)), axis + 1)


def _resize_taps(function, images, size, align_corners, half_pixel, name, method):
    if align_corners and half_pixel:
        _fail(function, "half_pixel_centers and align_corners may not both be true")
    height, width = _static_size(function, size)
    graph = images.graph if isinstance(images, Tensor) else get_default_graph()
    with graph.as_default(), graph.name_scope(name or function) as scope:
        batch, single = _as_batch(function, images)
        if batch.dtype not in _m.NUMERIC_TYPES:
            _fail(function, f"images must be numbers, got {batch.dtype.name}", TypeError)
        batch = _m.cast(batch, _dtypes.float32)
        rows = _resize_along(batch, 1, height, method, align_corners, half_pixel)
        both = _resize_along(rows, 2, width, method, align_corners, half_pixel)
        return _a.identity(_unbatch(both, single), name=scope[:-1])


def resize_bicubic(
    images,
    size,
    align_corners: bool = False,
    name: Optional[str] = None,
    half_pixel_centers: bool = False,
) -> Tensor:
    """Bicubic resizing of ``images`` to ``size = [new_height, new_width]`` (float32), as
    TensorFlow's ``ResizeBicubic``: its tabulated cubic kernel with a = -0.75 and edge pixels
    repeated, or with ``half_pixel_centers`` Keys' kernel (a = -0.5) whose taps outside the
    image weigh nothing."""
    return _resize_taps(
        "resize_bicubic", images, size, align_corners, half_pixel_centers, name, "bicubic"
    )


def resize_area(images, size, align_corners: bool = False, name: Optional[str] = None) -> Tensor:
    """Area resizing of ``images`` to ``size`` (float32), as TensorFlow's ``ResizeArea``: each
    output pixel is the mean of the source pixels its box covers, weighted by the covered
    fraction of each."""
    return _resize_taps("resize_area", images, size, align_corners, False, name, "area")


def _method_number(function: str, method) -> int:
    if isinstance(method, str) and method in _METHOD_NAMES:
        return _METHOD_NAMES[method]
    if not isinstance(method, (bool, str)) and method in (0, 1, 2, 3):
        return int(method)
    _fail(function, f"Resize method is not implemented: {method}")


def resize_images(
    images,
    size,
    method=ResizeMethod.BILINEAR,
    align_corners: bool = False,
    preserve_aspect_ratio: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """``images`` resized to ``size`` by ``method`` (a `ResizeMethod`, or ``"bilinear"``,
    ``"nearest"``, ``"bicubic"``, ``"area"``).  A resize to the same size returns the images
    unchanged, as in TensorFlow; nearest-neighbour results keep the dtype, the others are
    float32.  ``preserve_aspect_ratio`` scales both sides by one factor so that the image fits
    in ``size``."""
    method = _method_number("resize_images", method)
    images = convert_to_tensor(images, name="images")
    if images.shape.ndims not in (3, 4):
        _fail("resize_images", f"'images' must have either 3 or 4 dimensions, got {images.shape}")
    height, width = _static_size("resize_images", size)
    dims = images.shape.as_list()[-3:-1]
    if preserve_aspect_ratio:
        if None in dims:
            _fail(
                "resize_images",
                f"preserve_aspect_ratio needs images of known height and width, got {images.shape}",
            )
        factor = min(
            np.float32(height) / np.float32(dims[0]), np.float32(width) / np.float32(dims[1])
        )
        height = int(np.round(factor * np.float32(dims[0])))
        width = int(np.round(factor * np.float32(dims[1])))
        size = [height, width]
    if dims == [height, width]:
        return images
    if method == ResizeMethod.BILINEAR:
        return resize_bilinear(images, size, align_corners, name=name)
    if method == ResizeMethod.NEAREST_NEIGHBOR:
        return resize_nearest_neighbor(images, size, align_corners, name=name)
    if method == ResizeMethod.BICUBIC:
        return resize_bicubic(images, size, align_corners, name=name)
    return resize_area(images, size, align_corners, name=name)


resize = resize_images


def resize_image_with_pad(
    image, target_height, target_width, method=ResizeMethod.BILINEAR, align_corners: bool = False
) -> Tensor:
    """``image`` resized to fit ``target_height`` x ``target_width`` with its aspect ratio kept,
    then zero-padded (centred) to exactly that size."""
    image = convert_to_tensor(image, name="image")
    height, width = _static_hw("resize_image_with_pad", image)
    target_height, target_width = _static_ints(
        "resize_image_with_pad", target_height=target_height, target_width=target_width
    )
    if target_height <= 0 or target_width <= 0:
        _fail("resize_image_with_pad", "target_height and target_width must be > 0.")
    f32 = np.float32
    ratio = max(f32(width) / f32(target_width), f32(height) / f32(target_height))
    resized_height, resized_width = f32(height) / ratio, f32(width) / ratio
    top = max(0, int(np.floor((f32(target_height) - resized_height) / f32(2))))
    left = max(0, int(np.floor((f32(target_width) - resized_width) / f32(2))))
    with graph_to_build_in(image.graph).as_default(), name_scope("resize_image_with_pad"):
        resized = resize_images(
            image, [int(resized_height), int(resized_width)], method, align_corners
        )
        return pad_to_bounding_box(resized, top, left, target_height, target_width)


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


# -- image differences and quality metrics -----------------------------------------------------
def total_variation(images, name: Optional[str] = None) -> Tensor:
    """The sum of the absolute differences of neighbouring pixels (down and across), over each
    image of a batch (a vector), or over the one image (a scalar)."""
    images = convert_to_tensor(images, name="images")
    rank = images.shape.ndims
    if rank not in (3, 4):
        _fail("total_variation", f"'images' must be either 3 or 4-dimensional, got {images.shape}")
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "total_variation"):
        first = rank - 3
        begin, end = [0] * rank, [-1] * rank
        down = _m.subtract(
            _a.slice(images, _shifted(begin, first, 1), end),
            _a.slice(images, begin, _shape_less_one(images, first)),
        )
        across = _m.subtract(
            _a.slice(images, _shifted(begin, first + 1, 1), end),
            _a.slice(images, begin, _shape_less_one(images, first + 1)),
        )
        axis = None if rank == 3 else [1, 2, 3]
        return _m.add(_m.reduce_sum(_m.abs(down), axis), _m.reduce_sum(_m.abs(across), axis))


def _shifted(values: list, axis: int, by: int) -> list:
    values = list(values)
    values[axis] += by
    return values


def _shape_less_one(images: Tensor, axis: int) -> Tensor:
    """``images``' shape with one less along ``axis``, as a slice size."""
    rank = images.shape.ndims
    return _m.subtract(_a.shape(images), np.eye(rank, dtype=np.int32)[axis])


def image_gradients(image) -> Tensor:
    """``(dy, dx)``: each pixel's difference to the next one down and across, with zeros in the
    last row of ``dy`` and the last column of ``dx`` (``image`` of shape ``[batch, h, w, d]``)."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        _fail(
            "image_gradients",
            f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}.",
        )
    with graph_to_build_in(image.graph).as_default(), name_scope("image_gradients"):
        begin, end = [0, 0, 0, 0], [-1, -1, -1, -1]
        dy = _m.subtract(
            _a.slice(image, [0, 1, 0, 0], end), _a.slice(image, begin, _shape_less_one(image, 1))
        )
        dx = _m.subtract(
            _a.slice(image, [0, 0, 1, 0], end), _a.slice(image, begin, _shape_less_one(image, 2))
        )
        dy = _a.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
        dx = _a.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
        return dy, dx


_SOBEL = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])


def sobel_edges(image) -> Tensor:
    """The Sobel filter's vertical and horizontal responses of each channel of ``image``
    (``[batch, h, w, d]``, floats, at least 2x2; the border reflected), as
    ``[batch, h, w, d, 2]``."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        _fail("sobel_edges", f"image must be [batch_size, h, w, d], got shape {image.shape}")
    if image.dtype not in (_dtypes.float32, _dtypes.float64):
        _fail("sobel_edges", f"image must be float32 or float64, got {image.dtype.name}", TypeError)
    depth = image.shape.as_list()[3]
    if depth is None:
        _fail("sobel_edges", f"needs images of a known number of channels, got {image.shape}")
    with graph_to_build_in(image.graph).as_default(), name_scope("sobel_edges"):
        kernels = np.expand_dims(np.transpose(_SOBEL, (1, 2, 0)), -2)
        kernels = np.tile(kernels, [1, 1, depth, 1]).astype(image.dtype.as_numpy_dtype)
        padded = _a.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
        output = depthwise_conv2d(padded, kernels, [1, 1, 1, 1], "VALID")
        shape = _a.concat([_a.shape(image), [2]], 0)
        output = _a.reshape(output, shape)
        output.set_shape(image.shape.concatenate([2]))
        return output


def _compatible_images(function: str, img1: Tensor, img2: Tensor) -> None:
    for image in (img1, img2):
        if image.shape.ndims is not None and image.shape.ndims < 3:
            _fail(function, f"images must have at least 3 dimensions, got shape {image.shape}")
    if img1.shape.ndims is None or img2.shape.ndims is None:
        return
    tail1, tail2 = img1.shape.as_list()[-3:], img2.shape.as_list()[-3:]
    heads = zip(reversed(img1.shape.as_list()[:-3]), reversed(img2.shape.as_list()[:-3]))
    if any(a is not None and b is not None and a != b for a, b in zip(tail1, tail2)) or any(
        a is not None and b is not None and a != b and 1 not in (a, b) for a, b in heads
    ):
        _fail(function, f"Two images are not compatible: {img1.shape} and {img2.shape}")


def _as_unit_float(images: Tensor, max_val):
    max_val = convert_image_dtype(_m.cast(max_val, images.dtype), _dtypes.float32)
    return convert_image_dtype(images, _dtypes.float32), max_val


def psnr(a, b, max_val, name: Optional[str] = None) -> Tensor:
    """The peak signal-to-noise ratio of ``a`` against ``b`` in dB, over the last three
    dimensions: ``20 log10(max_val) - 10 log10(mean squared error)`` (on the [0, 1] scale of
    integer images, as TensorFlow); float32."""
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, name="b")
    _compatible_images("psnr", a, b)
    with graph_to_build_in(a.graph).as_default(), name_scope(name or "PSNR"):
        a, max_val = _as_unit_float(a, max_val)
        b = convert_image_dtype(b, _dtypes.float32)
        mse = _m.reduce_mean(_m.squared_difference(a, b), [-3, -2, -1])
        peak = _m.realdiv(_m.multiply(_m.log(max_val), 20.0), np.log(np.float32(10.0)))
        return _m.subtract(peak, _m.multiply(_m.log(mse), np.float32(10 / np.log(10))), name="psnr")


def _gaussian_window(size: int, sigma: float, channels: int) -> np.ndarray:
    """TensorFlow's ``_fspecial_gauss``: a normalized ``size`` x ``size`` Gaussian (float32),
    one per channel for a depthwise convolution."""
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2)
    g = np.square(coords) * (np.float32(-0.5) / np.square(np.float32(sigma)))
    g = (g[None, :] + g[:, None]).reshape(-1).astype(np.float64)
    g = np.exp(g - g.max())
    g = (g / g.sum()).astype(np.float32).reshape(size, size, 1, 1)
    return np.tile(g, [1, 1, channels, 1])


def _ssim_per_channel(function, img1, img2, max_val, filter_size, filter_sigma, k1, k2, index_map):
    """SSIM and contrast-structure per channel, as TensorFlow's ``_ssim_per_channel``."""
    dims = img1.shape.as_list()[-3:]
    if dims[2] is None:
        _fail(function, f"needs images of a known number of channels, got {img1.shape}")
    if any(d is not None and d < filter_size for d in dims[:2]):
        _fail(function, f"the images ({img1.shape}) must be at least {filter_size}x{filter_size}")
    window = _gaussian_window(int(filter_size), filter_sigma, dims[2])

    def reducer(x):
        shape = _a.shape(x)
        flat = _a.reshape(x, _a.concat([[-1], shape[-3:]], 0))
        y = depthwise_conv2d(flat, window, [1, 1, 1, 1], "VALID")
        return _a.reshape(y, _a.concat([shape[:-3], _a.shape(y)[1:]], 0))

    c1 = _m.square(_m.multiply(max_val, float(k1)))
    c2 = _m.square(_m.multiply(max_val, float(k2)))
    mean0, mean1 = reducer(img1), reducer(img2)
    num0 = _m.multiply(_m.multiply(mean0, mean1), 2.0)
    den0 = _m.add(_m.square(mean0), _m.square(mean1))
    luminance = _m.realdiv(_m.add(num0, c1), _m.add(den0, c1))
    num1 = _m.multiply(reducer(_m.multiply(img1, img2)), 2.0)
    den1 = reducer(_m.add(_m.square(img1), _m.square(img2)))
    cs = _m.realdiv(_m.add(_m.subtract(num1, num0), c2), _m.add(_m.subtract(den1, den0), c2))
    if index_map:
        return _m.multiply(luminance, cs), cs
    return _m.reduce_mean(_m.multiply(luminance, cs), [-3, -2]), _m.reduce_mean(cs, [-3, -2])


def ssim(
    img1,
    img2,
    max_val,
    filter_size=11,
    filter_sigma=1.5,
    k1=0.01,
    k2=0.03,
    return_index_map: bool = False,
) -> Tensor:
    """The structural similarity of ``img1`` and ``img2`` (batches ``[..., h, w, c]`` at least
    ``filter_size`` square), averaged over the channels: one value per image, or with
    ``return_index_map`` one per position of the Gaussian window.  Integer images are compared
    on the [0, 1] scale, as TensorFlow."""
    img1 = convert_to_tensor(img1, name="img1")
    img2 = convert_to_tensor(img2, name="img2")
    _compatible_images("ssim", img1, img2)
    with graph_to_build_in(img1.graph).as_default(), name_scope("SSIM"):
        img1, max_val = _as_unit_float(img1, max_val)
        img2 = convert_image_dtype(img2, _dtypes.float32)
        per_channel, _ = _ssim_per_channel(
            "ssim", img1, img2, max_val, filter_size, filter_sigma, k1, k2, return_index_map
        )
        return _m.reduce_mean(per_channel, [-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(
    img1,
    img2,
    max_val,
    power_factors=_MSSSIM_WEIGHTS,
    filter_size=11,
    filter_sigma=1.5,
    k1=0.01,
    k2=0.03,
) -> Tensor:
    """Multi-scale SSIM: the contrast-structure terms of ``len(power_factors)`` scales (each
    half the size of the one before, by 2x2 averaging after a symmetric pad to even sizes) and
    the last scale's SSIM, raised to ``power_factors`` and multiplied; the mean over channels.
    The images' height and width must be known when the graph is built."""
    img1 = convert_to_tensor(img1, name="img1")
    img2 = convert_to_tensor(img2, name="img2")
    _compatible_images("ssim_multiscale", img1, img2)
    dims = img1.shape.as_list()[-3:] if img1.shape.ndims else [None] * 3
    if None in dims[:2] or img1.shape.as_list()[-3:-1] != img2.shape.as_list()[-3:-1]:
        _fail(
            "ssim_multiscale",
            f"needs images of known, equal height and width, got {img1.shape} and {img2.shape}",
        )
    with graph_to_build_in(img1.graph).as_default(), name_scope("MS-SSIM"):
        img1, max_val = _as_unit_float(img1, max_val)
        img2 = convert_image_dtype(img2, _dtypes.float32)
        images = [img1, img2]
        heads = [_a.shape(x)[:-3] for x in images]
        height, width = dims[:2]
        mcs = []
        for k in range(len(power_factors)):
            with name_scope(f"Scale{k}"):
                if k > 0:
                    flat = [_a.reshape(x, [-1, height, width, dims[2]]) for x in images]
                    if height % 2 or width % 2:
                        pads = [[0, 0], [0, height % 2], [0, width % 2], [0, 0]]
                        flat = [_a.pad(x, pads, mode="SYMMETRIC") for x in flat]
                    pooled = [avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") for x in flat]
                    height, width = (height + 1) // 2, (width + 1) // 2
                    images = [
                        _a.reshape(x, _a.concat([head, [height, width, dims[2]]], 0))
                        for x, head in zip(pooled, heads)
                    ]
                per_channel, cs = _ssim_per_channel(
                    "ssim_multiscale", *images, max_val, filter_size, filter_sigma, k1, k2, False
                )
                mcs.append(relu(cs))
        mcs.pop()
        stacked = _a.stack(mcs + [relu(per_channel)], axis=-1)
        factors = np.asarray(power_factors, np.float32)
        return _m.reduce_mean(_m.reduce_prod(_m.pow(stacked, factors), [-1]), [-1])


# -- crop_and_resize -------------------------------------------------------------------------------
def _crop_positions(low, high, in_size: Tensor, count: int):
    """TensorFlow's sampling positions along one axis for boxes ``[low, high]`` (``[n, 1]``,
    normalized): ``[n, count]`` source coordinates, and where they lie inside the image."""
    last = _m.cast(_m.subtract(in_size, 1), _dtypes.float32)
    if count > 1:
        step = _m.realdiv(_m.multiply(_m.subtract(high, low), last), float(count - 1))
        steps = _a.reshape(_a.range(count, dtype=_dtypes.float32), [1, count])
        position = _m.add(_m.multiply(low, last), _m.multiply(steps, step))
    else:
        position = _m.multiply(_m.multiply(_m.add(low, high), 0.5), last)
    inside = _m.logical_and(_m.greater_equal(position, 0.0), _m.less_equal(position, last))
    return position, inside


def crop_and_resize(
    image,
    boxes,
    box_ind=None,
    crop_size=None,
    method="bilinear",
    extrapolation_value=0,
    name: Optional[str] = None,
    box_indices=None,
) -> Tensor:
    """Crops of ``image`` (``[batch, h, w, c]``) at ``boxes`` (``[n, 4]``, normalized
    ``[y1, x1, y2, x2]``; y1 > y2 flips the crop) of the images ``box_indices`` (``box_ind`` is
    its old name), each resampled to ``crop_size = [crop_height, crop_width]`` by
    ``"bilinear"`` or ``"nearest"`` sampling; samples outside the image are
    ``extrapolation_value``.  float32 ``[n, crop_height, crop_width, c]``, differentiable with
    respect to the image and (bilinear) the boxes, as TensorFlow."""
    function = "crop_and_resize"
    if box_ind is not None and box_indices is not None:
        _fail(function, "Cannot specify both 'box_indices' and 'box_ind'")
    box_indices = box_ind if box_indices is None else box_indices
    if box_indices is None or crop_size is None:
        _fail(function, "box_indices and crop_size are required")
    if method not in ("bilinear", "nearest"):
        _fail(function, f"method must be 'bilinear' or 'nearest', got {method!r}")
    crop_height, crop_width = _static_size(function, crop_size)
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        _fail(function, f"image must be 4-D [batch, height, width, depth], got {image.shape}")
    if image.dtype not in _m.NUMERIC_TYPES:
        _fail(function, f"image must be numbers, got {image.dtype.name}", TypeError)
    with graph_to_build_in(image.graph).as_default(), name_scope(name or "CropAndResize"):
        boxes = convert_to_tensor(boxes, dtype=_dtypes.float32, name="boxes")
        box_indices = convert_to_tensor(box_indices, dtype=_dtypes.int32, name="box_indices")
        if boxes.shape.ndims not in (None, 2) or boxes.shape.as_list()[-1] not in (4, None):
            _fail(function, f"boxes must be [num_boxes, 4], got shape {boxes.shape}")
        if box_indices.shape.ndims not in (None, 1):
            _fail(function, f"box_indices must be 1-D, got shape {box_indices.shape}")
        shape = _a.shape(image)
        batch, height, width = shape[0], shape[1], shape[2]
        check = Assert(
            _m.reduce_all(
                _m.logical_and(_m.greater_equal(box_indices, 0), _m.less(box_indices, batch))
            ),
            ["box_indices has values outside [0, batch_size)"],
        )
        with control_dependencies([check]):
            box_indices = _a.identity(box_indices)
        y1, x1, y2, x2 = _a.unstack(_a.reshape(boxes, [-1, 4, 1]), 4, axis=1)
        rows, rows_inside = _crop_positions(y1, y2, height, crop_height)
        cols, cols_inside = _crop_positions(x1, x2, width, crop_width)
        flat = _a.reshape(_m.cast(image, _dtypes.float32), _a.stack([-1, shape[3]]))
        base = _a.reshape(_m.multiply(box_indices, _m.multiply(height, width)), [-1, 1, 1])

        def sample(row_index, col_index):
            row_index = _m.minimum(_m.maximum(row_index, 0), _m.subtract(height, 1))
            col_index = _m.minimum(_m.maximum(col_index, 0), _m.subtract(width, 1))
            at = _m.add(
                _m.add(base, _m.multiply(_a.expand_dims(row_index, 2), width)),
                _a.expand_dims(col_index, 1),
            )
            return _a.gather(flat, at)  # [n, crop_height, crop_width, depth]

        as_int = lambda v: _m.cast(v, _dtypes.int32)  # noqa: E731
        if method == "nearest":
            # std::round: halves away from zero (positions inside the image are >= 0)
            crops = sample(as_int(_m.floor(_m.add(rows, 0.5))), as_int(_m.floor(_m.add(cols, 0.5))))
        else:
            top, left = _m.floor(rows), _m.floor(cols)
            bottom, right = as_int(_m.ceil(rows)), as_int(_m.ceil(cols))
            row_weight = _a.reshape(_m.subtract(rows, top), [-1, crop_height, 1, 1])
            col_weight = _a.reshape(_m.subtract(cols, left), [-1, 1, crop_width, 1])
            top, left = as_int(top), as_int(left)
            upper = sample(top, left)
            upper = _m.add(upper, _m.multiply(_m.subtract(sample(top, right), upper), col_weight))
            lower = sample(bottom, left)
            lower = _m.add(
                lower, _m.multiply(_m.subtract(sample(bottom, right), lower), col_weight)
            )
            crops = _m.add(upper, _m.multiply(_m.subtract(lower, upper), row_weight))
        inside = _m.logical_and(
            _a.reshape(rows_inside, [-1, crop_height, 1, 1]),
            _a.reshape(cols_inside, [-1, 1, crop_width, 1]),
        )
        fill = _m.cast(extrapolation_value, _dtypes.float32)
        return _m.where_v2(inside, crops, fill)


# -- patches ---------------------------------------------------------------------------------------
def _window_list(function: str, name: str, value) -> tuple:
    values = [int(v) for v in value] if value is not None else []
    if len(values) != 4 or values[0] != 1 or values[3] != 1 or min(values) <= 0:
        _fail(function, f"{name} must be [1, rows, cols, 1] of positive ints, got {value!r}")
    return values[1], values[2]


def extract_patches(images, sizes, strides, rates, padding, name: Optional[str] = None) -> Tensor:
    """The ``sizes = [1, rows, cols, 1]`` patches of ``images`` (``[batch, h, w, depth]``)
    taken every ``strides`` pixels, their pixels ``rates`` apart (dilation), each flattened into
    the depth dimension (row, column, channel order): ``[batch, out_rows, out_cols, rows * cols
    * depth]``.  ``padding`` "VALID" keeps patches inside the image, "SAME" pads with zeros as a
    convolution would.  The images' height and width must be known when the graph is built."""
    function = "extract_patches"
    rows, cols = _window_list(function, "sizes", sizes)
    stride_rows, stride_cols = _window_list(function, "strides", strides)
    rate_rows, rate_cols = _window_list(function, "rates", rates)
    if padding not in ("VALID", "SAME"):
        _fail(function, f"padding must be 'VALID' or 'SAME', got {padding!r}")
    images = convert_to_tensor(images, name="images")
    if images.shape.ndims != 4:
        _fail(function, f"images must be 4-D [batch, rows, cols, depth], got {images.shape}")
    height, width, depth = images.shape.as_list()[1:]
    if height is None or width is None:
        _fail(function, f"needs images of known height and width, got {images.shape}")
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "ExtractImagePatches"):
        span_rows = rows + (rows - 1) * (rate_rows - 1)
        span_cols = cols + (cols - 1) * (rate_cols - 1)
        if padding == "VALID":
            out_rows = (height - span_rows) // stride_rows + 1
            out_cols = (width - span_cols) // stride_cols + 1
            pad_rows = pad_cols = 0
        else:
            out_rows = -(-height // stride_rows)
            out_cols = -(-width // stride_cols)
            pad_rows = max((out_rows - 1) * stride_rows + span_rows - height, 0)
            pad_cols = max((out_cols - 1) * stride_cols + span_cols - width, 0)
            images = _a.pad(
                images,
                [
                    [0, 0],
                    [pad_rows // 2, pad_rows - pad_rows // 2],
                    [pad_cols // 2, pad_cols - pad_cols // 2],
                    [0, 0],
                ],
            )
        if out_rows <= 0 or out_cols <= 0:
            _fail(
                function,
                f"the patches ({span_rows}x{span_cols} with the rates) do not fit in the "
                f"{height}x{width} images",
            )
        pieces = []
        for i in range(rows):
            for j in range(cols):
                top, left = i * rate_rows, j * rate_cols
                bottom = top + (out_rows - 1) * stride_rows + 1
                right = left + (out_cols - 1) * stride_cols + 1
                pieces.append(
                    _a.strided_slice(
                        images,
                        [0, top, left, 0],
                        [0, bottom, right, 0],
                        [1, stride_rows, stride_cols, 1],
                        begin_mask=9,
                        end_mask=9,
                    )
                )
        stacked = _a.stack(pieces, axis=3)  # [batch, out_rows, out_cols, rows * cols, depth]
        patch_depth = -1 if depth is None else rows * cols * depth
        shape = _a.concat([_a.shape(images)[:1], [out_rows, out_cols, patch_depth]], 0)
        return _a.reshape(stacked, shape)


def extract_image_patches(
    images,
    ksizes=None,
    strides=None,
    rates=None,
    padding=None,
    name: Optional[str] = None,
    sizes=None,
) -> Tensor:
    """`extract_patches` under TF1's name, with ``ksizes`` the old name of ``sizes``."""
    if ksizes is not None and sizes is not None:
        _fail("extract_image_patches", "Cannot specify both 'sizes' and 'ksizes'")
    return extract_patches(
        images, ksizes if sizes is None else sizes, strides, rates, padding, name
    )


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


def _random_factor(function: str, lower, upper, seed) -> Tensor:
    """A factor drawn uniformly from ``[lower, upper)``, ``0 <= lower < upper``."""
    if upper <= lower:
        _fail(function, "upper must be > lower.")
    if lower < 0:
        _fail(function, "lower must be non-negative.")
    return random_uniform([], lower, upper, seed=seed)


def random_contrast(image, lower, upper, seed: Optional[int] = None) -> Tensor:
    """`adjust_contrast` by a factor drawn uniformly from ``[lower, upper)``."""
    return adjust_contrast(image, _random_factor("random_contrast", lower, upper, seed))


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


non_max_suppression_overlaps = non_max_suppression_with_overlaps
# -- image files: decoding and encoding (dataflow/ops/image_codec_ops.py) --------------------------
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

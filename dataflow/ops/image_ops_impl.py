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
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import (
    Tensor,
    control_dependencies,
    get_default_graph,
    graph_to_build_in,
    name_scope,
)
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from . import array_ops as _a
from . import gather_ops as _g
from . import math_ops as _m
from . import slice_ops as _slices
from .image_arguments import (  # noqa: F401 - defined there, reached here too
    _as_batch,
    _fail,
    _random_factor,
    _unbatch,
)
from .image_color_ops import (  # noqa: F401 - defined there, reached here too
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    hsv_to_rgb,
    random_hue,
    random_saturation,
    rgb_to_hsv,
    rgb_to_yiq,
    rgb_to_yuv,
    yiq_to_rgb,
    yuv_to_rgb,
)
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
from .image_quality_ops import (  # noqa: F401 - defined there, reached here too
    image_gradients,
    psnr,
    sobel_edges,
    ssim,
    ssim_multiscale,
    total_variation,
)
from .misc_ops import Assert
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
    low = _g.gather(images, lower, axis=axis)
    high = _g.gather(images, upper, axis=axis)
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
        picked = _g.gather(_g.gather(batch, rows, axis=1), columns, axis=2)
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
    picked = _g.gather(images, indices, axis=axis)  # the taps as a new axis after ``axis``
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
    """``image + delta`` (``delta`` on the [0, 1] scale), as TensorFlow computes it: float16
    and float32 images in their own dtype, others in float32, converted back to the image's
    dtype with saturation."""
    image = convert_to_tensor(image, name="image")
    with graph_to_build_in(image.graph).as_default(), name_scope("adjust_brightness"):
        floats = image
        if image.dtype not in (_dtypes.float16, _dtypes.float32):
            floats = convert_image_dtype(image, _dtypes.float32)
        brighter = _m.add(floats, _m.cast(delta, floats.dtype), name="adjusted")
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
            return _g.gather(flat, at)  # [n, crop_height, crop_width, depth]

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
            images = _g.pad(
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
                    _slices.strided_slice(
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
        return _slices.slice(image, [top, left, 0], [height, width, -1])
    return _slices.slice(image, [0, top, left, 0], [-1, height, width, -1])


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
    return _g.pad(cropped, paddings)


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
        return _slices.slice(value, offset, size)


# -- TF1's data augmentation and box crops ---------------------------------------------------------
def random_brightness(image, max_delta, seed: Optional[int] = None) -> Tensor:
    """`adjust_brightness` by a delta drawn uniformly from ``[-max_delta, max_delta)``."""
    if max_delta < 0:
        _fail("random_brightness", "max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


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
    return _g.pad(image, paddings)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def grayscale_to_rgb(images, name: Optional[str] = None) -> Tensor:
    """Gray ``images`` (a last dimension of 1) with that channel repeated three times."""
    images = convert_to_tensor(images, name="images")
    if images.shape.ndims is not None and images.shape.as_list()[-1] not in (1, None):
        _fail("grayscale_to_rgb", f"the last dimension must be 1, got shape {images.shape}")
    with graph_to_build_in(images.graph).as_default(), name_scope(name or "grayscale_to_rgb"):
        multiples = [1] * (images.shape.ndims - 1) + [3]
        return _g.tile(images, multiples)


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

# isort: split
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

# isort: split
# Names ``df.image`` has offered since this module also held the colour and quality functions
# and their imports; kept so that code reaching them here still works.
from ..framework.gradient_registry import RegisterGradient  # noqa: E402, F401
from ..framework.op_registry import apply_op_output  # noqa: E402, F401
from .conv_ops import avg_pool, depthwise_conv2d  # noqa: E402, F401
from .extra_math_ops import reciprocal  # noqa: E402, F401
from .matrix_ops import tensordot  # noqa: E402, F401
from .nn_ops import relu  # noqa: E402, F401
from .op_util import check_dtype  # noqa: E402, F401

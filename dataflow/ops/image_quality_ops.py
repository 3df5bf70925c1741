"""Comparing images: total variation, PSNR, SSIM and multi-scale SSIM, image gradients and Sobel
edges (``tf.image``'s differences and quality metrics)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, graph_to_build_in, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from . import array_ops as _a
from . import gather_ops as _g
from . import math_ops as _m
from . import slice_ops as _slices
from .conv_ops import avg_pool, depthwise_conv2d
from .image_arguments import (
    _fail,
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
from .nn_ops import relu


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
            _slices.slice(images, _shifted(begin, first, 1), end),
            _slices.slice(images, begin, _shape_less_one(images, first)),
        )
        across = _m.subtract(
            _slices.slice(images, _shifted(begin, first + 1, 1), end),
            _slices.slice(images, begin, _shape_less_one(images, first + 1)),
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
            _slices.slice(image, [0, 1, 0, 0], end),
            _slices.slice(image, begin, _shape_less_one(image, 1)),
        )
        dx = _m.subtract(
            _slices.slice(image, [0, 0, 1, 0], end),
            _slices.slice(image, begin, _shape_less_one(image, 2)),
        )
        dy = _g.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
        dx = _g.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
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
        padded = _g.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
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
                        flat = [_g.pad(x, pads, mode="SYMMETRIC") for x in flat]
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


__all__ = ["image_gradients", "psnr", "sobel_edges", "ssim", "ssim_multiscale", "total_variation"]

"""The depthwise convolution and its two gradients, window offset by window offset, in blocks.

A depthwise convolution convolves each input channel with its own ``M`` filters (the channel
multiplier): there is no sum over channels, so no matrix product to hand to BLAS.  What is
left is, for each of the ``KH*KW`` offsets of the window, a product of the input shifted by that
offset with that offset's ``[C, M]`` filter slice, added into the output.  Over the whole
activation that is ``2*KH*KW`` passes over arrays far larger than the cache; here the output
is made a block at a time (`conv_gemm._blocks`, about `BLOCK_BYTES` of output), every offset's
product added into the block while it is in the cache, and the blocks run on the intra-op
threads (`intra_op.run_blocks`).

- forward, `depthwise_conv2d`: ``out[block] += window(i, j)[block] * f[i, j]`` for each offset;
- filter gradient, `depthwise_filter_gradient`: per block and offset, the column sums of
  ``window(i, j)[block] * dY[block]``; the blocks' sums added in block order, so the result
  does not depend on the threads;
- input gradient, `depthwise_input_gradient`: ``dX[window(i, j)] += sum over M of dY * f[i,
  j]``, in blocks of whole images (the windows of two row bands of one image overlap, and two
  threads must not add into the same element).
"""

from __future__ import annotations

import numpy as np

from ..framework import intra_op
from .conv2d_geometry import _Geometry, _pad_spatial
from .conv_gemm import _blocks

BLOCK_BYTES = 256 * 1024


def _window_rows(g: _Geometry, i: int, rows: slice) -> slice:
    """The rows of the padded input that filter row ``i`` meets for the output rows ``rows``."""
    sh, dh = g.strides[0], g.dilations[0]
    return slice(i * dh + rows.start * sh, i * dh + (rows.stop - 1) * sh + 1, sh)


def _window_cols(g: _Geometry, j: int) -> slice:
    sw, dw = g.strides[1], g.dilations[1]
    return slice(j * dw, j * dw + (g.ow - 1) * sw + 1, sw)


def _regions(n: int, g: _Geometry, row_bytes: int, whole_images: bool = False) -> list:
    if whole_images:
        return [(images, slice(0, g.oh)) for images, _ in _blocks(n, 1, g.oh * row_bytes)]
    return list(_blocks(n, g.oh, row_bytes, BLOCK_BYTES))


def depthwise_conv2d(x: np.ndarray, f: np.ndarray, g: _Geometry, threads=None) -> np.ndarray:
    """``out[n, oh, ow, c*M + m] = sum over (i, j) of window(i, j)[n, oh, ow, c] * f[i, j, c,
    m]`` for NHWC ``x`` and ``f`` of shape ``[KH, KW, C, M]``."""
    n, _, _, c = x.shape
    kh, kw, _, m = f.shape
    dtype = np.result_type(x, f)
    out = np.empty((n, g.oh, g.ow, c, m), dtype)
    padded = _pad_spatial(x, g.pads, 0)[..., None]  # [n, h, w, c, 1]
    regions = _regions(n, g, g.ow * c * m * out.itemsize)

    def run(number: int) -> None:
        images, rows = regions[number]
        block = out[images, rows]
        block.fill(0)
        product = intra_op.scratch(block.size, dtype).reshape(block.shape)
        for i in range(kh):
            window_rows = _window_rows(g, i, rows)
            for j in range(kw):
                window = padded[images, window_rows, _window_cols(g, j)]
                np.multiply(window, f[i, j], out=product)
                block += product

    intra_op.run_blocks(len(regions), run, threads)
    return out.reshape(n, g.oh, g.ow, c * m)


def depthwise_filter_gradient(
    x: np.ndarray, dy: np.ndarray, g: _Geometry, f_shape, threads=None
) -> np.ndarray:
    """The gradient of `depthwise_conv2d` with respect to its filter of shape ``f_shape``."""
    n, _, _, c = x.shape
    kh, kw, _, m = f_shape
    dtype = np.result_type(x, dy)
    dy = np.ascontiguousarray(dy).reshape(n, g.oh, g.ow, c, m)
    padded = _pad_spatial(x, g.pads, 0)[..., None]
    regions = _regions(n, g, g.ow * c * m * dy.itemsize)
    parts: list = [None] * len(regions)

    def run(number: int) -> None:
        images, rows = regions[number]
        grad = dy[images, rows]
        product = intra_op.scratch(grad.size, dtype).reshape(grad.shape)
        ones = np.ones(grad.size // (c * m), dtype)
        part = np.empty((kh, kw, c * m), dtype)
        for i in range(kh):
            window_rows = _window_rows(g, i, rows)
            for j in range(kw):
                np.multiply(padded[images, window_rows, _window_cols(g, j)], grad, out=product)
                np.matmul(ones, product.reshape(-1, c * m), out=part[i, j])
        parts[number] = part

    intra_op.run_blocks(len(regions), run, threads)
    return intra_op.sum_in_block_order(parts).reshape(f_shape)


def depthwise_input_gradient(
    x_shape, f: np.ndarray, dy: np.ndarray, g: _Geometry, threads=None
) -> np.ndarray:
    """The gradient of `depthwise_conv2d` with respect to its input of shape ``x_shape``."""
    n, h, w, c = x_shape
    kh, kw, _, m = f.shape
    dtype = np.result_type(f, dy)
    dy = np.ascontiguousarray(dy).reshape(n, g.oh, g.ow, c, m)
    (top, bottom), (left, right) = g.pads
    padded = np.zeros((n, h + top + bottom, w + left + right, c), dtype)
    regions = _regions(n, g, g.ow * c * m * dy.itemsize, whole_images=True)

    def run(number: int) -> None:
        images, rows = regions[number]
        grad = dy[images]
        share = intra_op.scratch(grad.size // m, dtype).reshape(grad.shape[:-1])
        for i in range(kh):
            window_rows = _window_rows(g, i, rows)
            for j in range(kw):
                # the multipliers added one by one, in order, whatever the layout of dy
                np.multiply(grad[..., 0], f[i, j, :, 0], out=share)
                for q in range(1, m):
                    share += grad[..., q] * f[i, j, :, q]
                padded[images, window_rows, _window_cols(g, j)] += share

    intra_op.run_blocks(len(regions), run, threads)
    return padded[:, top : top + h, left : left + w]

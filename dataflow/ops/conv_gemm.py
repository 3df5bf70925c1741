"""The 2-d convolution and its two gradients as matrix products that stay in the cache.

A convolution over an NHWC input is one matrix product: its *patch matrix* (a row per output
position, ``KH*KW*C`` columns holding the window under that position) times the filter
reshaped to ``(KH*KW*C, O)``.  Made whole, the patch matrix is ``KH*KW`` times the size of the
input (40 MB for the second layer of a LeNet at batch 64), and writing it out and reading it
back costs as much time as the product's arithmetic.  Here it is made a *block* of rows at a
time, about `BLOCK_BYTES` each, into one buffer that every block reuses, and each block's
product goes straight into its rows of the result (``out=``): the block is still in the cache
when the product reads it, and the product runs at BLAS speed.

The three products of a convolution layer's training step:

- forward, `conv2d`: ``out[block] = patches[block] @ F``;
- filter gradient, `conv2d_filter_gradient`: ``dF = sum over blocks of patches[block].T @
  dY[block]``, the same patches;
- input gradient, `conv2d_input_gradient`: with stride 1, the *full* convolution of ``dY``
  with the filter turned half way round and its two channel axes swapped, padded so that its
  output has the input's size: a forward convolution, through the same blocks.  With other
  strides, ``dY @ F.T`` gives each window's share of the gradient and col2im adds the shares
  back into place, a block of whole images at a time (the windows of two bands of rows of one
  image overlap, and two threads must not add into one element).

A block is a run of whole images when one image's patches fit in `BLOCK_BYTES`, else a band of
output rows of one image.  Results equal the one-product form's up to the order in which BLAS
and the blocks add (the filter gradient sums its blocks in order).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..framework import intra_op
from .conv2d_geometry import _Geometry, _im2col_view

# About 2 MiB of patches per block: the size at which a LeNet or ResNet layer ran fastest on a
# core with 1 MiB of L2 and a shared L3 (half the time of the whole patch matrix at batch 64).
BLOCK_BYTES = 2 << 20


def _blocks(
    images: int, rows: int, row_bytes: int, block_bytes: int = 0
) -> Iterator[tuple[slice, slice]]:
    """``(image_slice, output_row_slice)`` pairs that cover ``images x rows`` output rows in
    order, each about ``block_bytes`` (default `BLOCK_BYTES`) of patches, ``row_bytes`` per
    output row."""
    block_bytes = block_bytes or BLOCK_BYTES
    image_bytes = max(1, rows * row_bytes)
    if image_bytes <= block_bytes:
        step = max(1, block_bytes // image_bytes)
        for start in range(0, images, step):
            yield slice(start, min(images, start + step)), slice(0, rows)
        return
    band = max(1, block_bytes // max(1, row_bytes))
    for image in range(images):
        for start in range(0, rows, band):
            yield slice(image, image + 1), slice(start, min(rows, start + band))


class _PatchBlocks:
    """The patch matrix of NHWC ``x`` under geometry ``g``, in numbered blocks: `patches`
    copies block ``number`` into the calling thread's scratch buffer (`intra_op.scratch`) as a
    contiguous ``(rows, KH*KW*C)`` matrix, and `region` is the ``(image_slice, row_slice)`` of
    the output it covers."""

    def __init__(self, x: np.ndarray, g: _Geometry) -> None:
        self.windows = _im2col_view(x, g)  # (N, OH, OW, KH, KW, C), no copy
        n, oh, ow, kh, kw, c = self.windows.shape
        self.depth = kh * kw * c
        self.regions = list(_blocks(n, oh, ow * self.depth * x.dtype.itemsize))

    def __len__(self) -> int:
        return len(self.regions)

    def patches(self, number: int) -> np.ndarray:
        block = self.windows[self.regions[number]]
        matrix = intra_op.scratch(block.size, block.dtype).reshape(block.shape)
        np.copyto(matrix, block)
        return matrix.reshape(-1, self.depth)


def conv2d(x: np.ndarray, f: np.ndarray, g: _Geometry, threads=None) -> np.ndarray:
    """The convolution of NHWC ``x`` with HWIO ``f`` under ``g``, NHWC."""
    o = f.shape[3]
    out = np.empty((x.shape[0], g.oh, g.ow, o), dtype=np.result_type(x, f))
    blocks = _PatchBlocks(x, g)
    weights = f.reshape(blocks.depth, o)

    def run(number: int) -> None:
        rows = out[blocks.regions[number]].reshape(-1, o)
        np.matmul(blocks.patches(number), weights, out=rows)

    intra_op.run_blocks(len(blocks), run, threads)
    return out


def conv2d_filter_gradient(
    x: np.ndarray, dy: np.ndarray, g: _Geometry, f_shape, threads=None
) -> np.ndarray:
    """The gradient of the convolution of ``x`` under ``g`` with respect to its filter of shape
    ``f_shape``, given the output gradient ``dy``: each block's product, summed in block order
    (whichever thread made it)."""
    o = f_shape[3]
    blocks = _PatchBlocks(x, g)
    parts: list = [None] * len(blocks)

    def run(number: int) -> None:
        parts[number] = blocks.patches(number).T @ dy[blocks.regions[number]].reshape(-1, o)

    intra_op.run_blocks(len(blocks), run, threads)
    return intra_op.sum_in_block_order(parts).reshape(f_shape)


def conv2d_input_gradient(
    x_shape, f: np.ndarray, dy: np.ndarray, g: _Geometry, threads=None
) -> np.ndarray:
    """The gradient of the convolution under ``g`` with respect to its input of shape
    ``x_shape`` (NHWC), given the filter ``f`` and the output gradient ``dy``."""
    full = _full_geometry(x_shape, g)
    if full is None:
        return _input_gradient_by_col2im(x_shape, f, dy, g, threads)
    turned = np.ascontiguousarray(f[::-1, ::-1].transpose(0, 1, 3, 2))
    return conv2d(dy, turned, full, threads)


def _full_geometry(x_shape, g: _Geometry):
    """The geometry under which the forward convolution of the output gradient with the turned
    filter is the input gradient: stride 1, the same dilations, the padding that gives the
    input's size.  None where that padding would be negative or the stride is not 1."""
    if g.strides != (1, 1):
        return None
    (top, bottom), (left, right) = g.pads
    pads = ((g.eh - 1 - top, g.eh - 1 - bottom), (g.ew - 1 - left, g.ew - 1 - right))
    if min(pads[0] + pads[1]) < 0:
        return None
    full = object.__new__(_Geometry)
    full.kh, full.kw, full.eh, full.ew = g.kh, g.kw, g.eh, g.ew
    full.strides, full.dilations = (1, 1), g.dilations
    full.oh, full.ow = x_shape[1], x_shape[2]
    full.pads = pads
    return full


def _input_gradient_by_col2im(x_shape, f, dy, g: _Geometry, threads=None) -> np.ndarray:
    """The input gradient as ``dY @ F.T`` (each output position's share for every element of
    its window) added back into place, a block of whole images at a time, so that no two
    threads add into one element."""
    n, h, w, c = x_shape
    kh, kw, _, o = f.shape
    (top, bottom), (left, right) = g.pads
    padded = np.zeros((n, h + top + bottom, w + left + right, c), np.result_type(f, dy))
    weights_t = f.reshape(kh * kw * c, o).T
    regions = [images for images, _ in _blocks(n, 1, g.oh * g.ow * kh * kw * c * padded.itemsize)]

    def run(number: int) -> None:
        images = regions[number]
        grad = dy[images].reshape(-1, o)
        shares = intra_op.scratch(grad.shape[0] * kh * kw * c, padded.dtype)
        shares = shares.reshape(grad.shape[0], kh * kw * c)
        np.matmul(grad, weights_t, out=shares)
        shares = shares.reshape(-1, g.oh, g.ow, kh, kw, c)
        for i in range(kh):
            for j in range(kw):
                rows, cols = g.offset_slices(i, j)
                padded[images, rows, cols] += shares[:, :, :, i, j]

    intra_op.run_blocks(len(regions), run, threads)
    return padded[:, top : top + h, left : left + w]

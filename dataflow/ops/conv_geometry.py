"""What the n-d convolution and pooling ops share: the geometry of a window over n spatial
dimensions (sizes, strides, dilations, padding), the patch gathers their kernels are made of, their
shape inference and the checks of their attributes."""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..framework import dtypes as _dtypes
from ..framework import intra_op
from ..framework.errors import InvalidArgumentError
from ..framework.op_registry import (
    apply_op,
    define_op,
    get_op_def,
)
from ..framework.tensor_shape import TensorShape
from . import conv_gemm
from .array_ops import _shape_from_vector
from .conv_ops import (
    _check_data_format,
    _lowest,
    _output_size,
)
from .math_ops import FLOAT_TYPES, NUMERIC_TYPES, check_dtype, check_same_dtype


# -- geometry ----------------------------------------------------------------------------------
def _explicit_pairs(attrs, n: int) -> list:
    """The ``(before, after)`` padding of each spatial dimension from the flat
    ``explicit_paddings`` attribute (``[before_0, after_0, before_1, ...]``)."""
    flat = attrs.get("explicit_paddings") or (0,) * (2 * n)
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(n)]


class _Geometry:
    """Where the windows of an N-d convolution or pooling lie over a channels-last input of
    spatial ``sizes``: ``ksize``, ``strides``, ``dilations``, the effective (dilated) window
    ``eff``, the output sizes ``out`` and the padding ``pads`` (a ``(before, after)`` pair per
    spatial dimension)."""

    def __init__(self, sizes, ksize, attrs):
        self.ksize = tuple(int(k) for k in ksize)
        self.strides = tuple(attrs["strides"])
        self.dilations = tuple(attrs.get("dilations") or (1,) * len(self.ksize))
        explicit = _explicit_pairs(attrs, len(self.ksize))
        self.eff = tuple((k - 1) * d + 1 for k, d in zip(self.ksize, self.dilations))
        self.out, self.pads = [], []
        for size, e, s, pair in zip(sizes, self.eff, self.strides, explicit):
            out, before, after = _output_size(size, e, s, attrs["padding"], pair)
            self.out.append(out)
            self.pads.append((before, after))
        self.out = tuple(self.out)
        if min(self.out, default=0) < 0:
            raise InvalidArgumentError(
                None, None, f"the window {self.eff} is larger than the padded input {sizes}"
            )

    def offset_slices(self, offset):
        """The slices of the padded input that window offset ``offset`` covers in every
        window."""
        return tuple(
            slice(i * d, i * d + (o - 1) * s + 1, s)
            for i, d, o, s in zip(offset, self.dilations, self.out, self.strides)
        )

    def offsets(self):
        return itertools.product(*(range(k) for k in self.ksize))


def _pad(x, pads, fill):
    if not any(b or a for b, a in pads):
        return x
    return np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=fill)


def _windows(x, g: _Geometry, fill=0):
    """The windows of the channels-last ``x``: ``(N, *out, *ksize, C)``, a strided view."""
    s = len(g.ksize)
    if min(g.out, default=1) == 0:
        return np.zeros((x.shape[0], *g.out, *g.ksize, x.shape[-1]), dtype=x.dtype)
    padded = _pad(x, g.pads, fill)
    view = sliding_window_view(padded, g.eff, axis=tuple(range(1, s + 1)))
    index = (
        (slice(None),)
        + tuple(slice(0, (o - 1) * st + 1, st) for o, st in zip(g.out, g.strides))
        + (slice(None),)
        + tuple(slice(None, None, d) for d in g.dilations)
    )
    view = view[index]
    return view.transpose((0, *range(1, s + 1), *range(s + 2, 2 * s + 2), s + 1))


def _col2im(columns, x_shape, g: _Geometry):
    """The channels-last array of ``x_shape`` whose elements are the sums of the entries of
    ``columns`` (``[n, *out, *ksize, c]``) over the windows that cover them."""
    s = len(g.ksize)
    full = (x_shape[0], *(n + b + a for n, (b, a) in zip(x_shape[1:-1], g.pads)), x_shape[-1])
    padded = np.zeros(full, dtype=columns.dtype)
    rest = (slice(None),) * s
    for offset in g.offsets():
        padded[(slice(None), *g.offset_slices(offset))] += columns[(slice(None), *rest, *offset)]
    return _crop(padded, x_shape, g)


def _crop(padded, x_shape, g: _Geometry):
    return padded[
        (slice(None), *(slice(b, b + n) for n, (b, _) in zip(x_shape[1:-1], g.pads)), slice(None))
    ]


def _channels_last(x, first: bool):
    if not first:
        return x
    return np.moveaxis(x, 1, -1)


def _channels_back(y, first: bool):
    if not first:
        return y
    return np.ascontiguousarray(np.moveaxis(y, -1, 1))


def _sizes_last(sizes, first: bool) -> tuple:
    sizes = tuple(int(v) for v in np.asarray(sizes).reshape(-1))
    if first:
        sizes = (sizes[0], *sizes[2:], sizes[1])
    return sizes


# -- kernels -----------------------------------------------------------------------------------
def _check_conv_channels(c, f_shape, groups):
    *_, fc, o = f_shape
    if fc * groups != c or o % groups:
        raise InvalidArgumentError(
            None,
            None,
            f"input has {c} channels but the filter {list(f_shape)} expects {fc}"
            + (f" in each of {groups} groups" if groups > 1 else ""),
        )


def _conv_kernel_last(x, f, attrs):
    groups = attrs.get("groups", 1)
    n, *sizes, c = x.shape
    *ksize, fc, o = f.shape
    _check_conv_channels(c, f.shape, groups)
    g = _Geometry(sizes, ksize, attrs)
    m = n * int(np.prod(g.out))
    if m == 0 or f.size == 0:
        return np.zeros((n, *g.out, o), dtype=x.dtype)
    k = int(np.prod(ksize))
    columns = _windows(x, g).reshape(m, k * c)
    if groups == 1:
        out = columns @ f.reshape(k * c, o)
    else:
        columns = columns.reshape(m, k, groups, fc)
        weights = f.reshape(k, fc, groups, o // groups)
        out = np.einsum("mkgc,kcgo->mgo", columns, weights, optimize=True).reshape(m, o)
    return out.reshape(n, *g.out, o).astype(x.dtype, copy=False)


class _FlatWindows:
    """The windows of channels-first images laid out so that every window offset reads one
    long run of memory per channel.

    The padded image is split into its stride *phases* (phase ``p`` of a dim holds the padded
    positions ``p, p + stride, p + 2 * stride, ...``; stride 1 has the one phase), each phase
    laid flat per channel with ``pitch[k]`` elements per step along spatial dim ``k``.  Output
    position ``o`` under window offset ``w`` reads padded position ``o * stride + w *
    dilation``, that is phase ``(w * dilation) % stride`` at ``o + (w * dilation) // stride``:
    so offset ``w`` reads, from its phase, the run that starts at ``base(w)`` and covers the
    ``virtual`` positions ``o`` of the output counted with the phase's pitch, that is all
    output rows along the first dim and, along the inner dims, the phase's whole width: the
    columns past the output's end are computed and cut off at the end (`crop`).  Only the
    phases some offset reads are made.

    ``offsets``: per window offset (in `_Geometry.offsets` order), ``(phase index, base)``
    into the array `lay_out` makes, ``[N, phases, C, length]``, the padding's zeros
    included."""

    def __init__(self, x_shape, g: _Geometry):
        sizes = list(x_shape[2:])
        self.g, self.sizes = g, sizes
        padded = [size + b + a for size, (b, a) in zip(sizes, g.pads)]
        self.phase_sizes = [-(-p // s) for p, s in zip(padded, g.strides)]
        self.pitch = [int(np.prod(self.phase_sizes[k + 1 :])) for k in range(len(sizes))]
        self.row = self.pitch[0]  # virtual positions per output index of the first dim
        self.virtual = g.out[0] * self.row
        self.phases: list = []  # phase tuples, in the order they are laid out
        self.offsets = []  # (phase index, base) per window offset
        for offset in g.offsets():
            where = [w * d for w, d in zip(offset, g.dilations)]
            phase = tuple(p % s for p, s in zip(where, g.strides))
            if phase not in self.phases:
                self.phases.append(phase)
            base = sum((p // s) * step for p, s, step in zip(where, g.strides, self.pitch))
            self.offsets.append((self.phases.index(phase), base))
        phase_elements = int(np.prod(self.phase_sizes))
        self.length = max(phase_elements, max(b for _, b in self.offsets) + self.virtual)

    def lay_out(self, x: np.ndarray) -> np.ndarray:
        """``x`` (``[N, C, *sizes]``) as the phases' flat runs, ``[N, phases, C, length]``."""
        n, c = x.shape[:2]
        flat = np.zeros((n, len(self.phases), c, self.length), x.dtype)
        count = int(np.prod(self.phase_sizes))
        for index, phase in enumerate(self.phases):
            target = flat[:, index, :, :count].reshape(n, c, *self.phase_sizes)
            source, place = [slice(None), slice(None)], [slice(None), slice(None)]
            for p, s, (before, _), size in zip(phase, self.g.strides, self.g.pads, self.sizes):
                first = max(0, -(-(before - p) // s))  # the first phase index inside x
                start = p + s * first - before
                taken = max(0, -(-(size - start) // s))
                source.append(slice(start, start + s * (taken - 1) + 1 if taken else start, s))
                place.append(slice(first, first + taken))
            target[tuple(place)] = x[tuple(source)]
        return flat

    def crop(self, virtual: np.ndarray, rows: int) -> np.ndarray:
        """The real output positions of ``virtual`` (``[channels, rows * row]``)."""
        shaped = virtual.reshape(virtual.shape[0], rows, *self.phase_sizes[1:])
        return shaped[(slice(None), slice(None), *(slice(0, o) for o in self.g.out[1:]))]


# The most product columns per output position a convolution's window runs may cost
# (`_conv_kernel_first`); past that its windows are cut to the output's positions.
VIRTUAL_COLUMNS_AT_MOST = 1.15
# ... unless a column costs little: at most this many input times output channels per group.
CHEAP_COLUMNS_AT_MOST = 16


def _conv_kernel_first(x, f, attrs):
    """The convolution of channels-first ``x`` (``[N, C, *sizes]``) with ``f`` (``[*k, C /
    groups, O]``), channels-first, with no move of the channel axis in or out.

    Each image's output ``[O, positions]`` is, per group, the filter's matrix (``[K * fc, O /
    groups]``, read transposed: no copy) times the image's *window matrix* (``[K * fc,
    positions]``).  A 1x1 window of stride 1 without padding needs no window matrix: the image
    is that matrix.  Otherwise the windows are read from `_FlatWindows` as long runs into a
    matrix per block of output rows (about `conv_gemm.BLOCK_BYTES`, in the thread's scratch
    buffer), and the product's positions past the output's inner ends are cut off; on small
    images, where those would be many (`VIRTUAL_COLUMNS_AT_MOST`), the runs are cut before
    the product instead.  Several groups make one stacked product (a depthwise convolution's
    groups are as many as its channels, each product one row).  Blocks (image, rows) run on
    the intra-op threads; each writes its own part of the output."""
    groups = attrs.get("groups", 1)
    n, c, *sizes = x.shape
    *ksize, fc, o = f.shape
    _check_conv_channels(c, f.shape, groups)
    g = _Geometry(sizes, ksize, attrs)
    dtype = x.dtype  # the op's inference makes the filter's the same
    out = np.empty((n, o, *g.out), dtype)
    if out.size == 0 or f.size == 0:
        return np.zeros(out.shape, dtype)
    threads = attrs.get("intra_op_threads")
    k = int(np.prod(ksize))
    og = o // groups
    weights = f.reshape(k * fc, o)
    grouped = None  # per group, [O / groups, K * fc]: a copy, grouped filters are small
    if groups > 1:
        grouped = np.ascontiguousarray(f.reshape(k * fc, groups, og).transpose(1, 2, 0))
    if k == 1 and all(s == 1 for s in g.strides) and not any(a or b for a, b in g.pads):
        images = x.reshape(n, groups, fc, -1)
        flat_out = out.reshape(n, groups, og, -1)

        def run_direct(image: int) -> None:
            if groups == 1:
                np.matmul(weights.T, images[image, 0], out=flat_out[image, 0])
            else:
                np.matmul(grouped, images[image], out=flat_out[image])

        intra_op.run_blocks(n, run_direct, threads)
        return out
    windows = _FlatWindows(x.shape, g)
    flat = windows.lay_out(x)
    real = int(np.prod(g.out[1:]))  # output positions per index of the first dim
    # Long runs cost product columns past the inner ends: worth it while they are few (wide
    # images) or cheap (small groups: a depthwise column is K multiply-adds); otherwise (7x7
    # with a 3x3 window: 9 columns per 7, each a long dot product) the runs are cut.
    virtual = windows.row <= VIRTUAL_COLUMNS_AT_MOST * real or fc * og <= CHEAP_COLUMNS_AT_MOST
    row = windows.row if virtual else real
    row_bytes = k * c * row * out.itemsize
    bands = [rows for _, rows in conv_gemm._blocks(1, g.out[0], row_bytes)]
    blocks = [(image, rows) for image in range(n) for rows in bands]
    flat_out = out.reshape(n, o, -1)

    def run(number: int) -> None:
        image, rows = blocks[number]
        count = rows.stop - rows.start
        start, width = rows.start * windows.row, count * windows.row
        buffer = intra_op.scratch((groups * k * fc + o) * count * row, dtype)
        product = buffer[: o * count * row].reshape(groups, og, count * row)
        matrix = buffer[o * count * row :].reshape(groups, k, fc, count * row)
        for index, (phase, base) in enumerate(windows.offsets):
            run_of = flat[image, phase, :, base + start : base + start + width]
            if not virtual:
                run_of = windows.crop(run_of, count)
            matrix[:, index] = run_of.reshape(groups, fc, count * row)
        if virtual:
            target = product
        else:
            span = slice(rows.start * real, rows.stop * real)
            target = flat_out[image, :, span].reshape(groups, og, -1)
        if groups == 1:
            np.matmul(weights.T, matrix[0].reshape(k * fc, -1), out=target[0])
        else:  # one stacked product: many small groups cost one call, not one each
            np.matmul(grouped, matrix.reshape(groups, k * fc, -1), out=target)
        if virtual:
            out[image, :, rows] = windows.crop(product.reshape(o, width), count)

    intra_op.run_blocks(len(blocks), run, threads)
    return out


def _check_backprop(dy_shape, n, g, o, x_shape, f_shape):
    if tuple(dy_shape) != (n, *g.out, o):
        raise InvalidArgumentError(
            None,
            None,
            f"the output gradient of shape {list(dy_shape)} does not match the convolution of "
            f"an input of shape {list(x_shape)} with a filter of shape {list(f_shape)}, which "
            f"has shape {[n, *g.out, o]}",
        )


def _conv_backprop_input_last(x_shape, f, dy, attrs):
    n, *sizes, c = x_shape
    *ksize, fc, o = f.shape
    g = _Geometry(sizes, ksize, attrs)
    _check_backprop(dy.shape, n, g, o, x_shape, f.shape)
    if dy.size == 0 or f.size == 0:
        return np.zeros(x_shape, dtype=dy.dtype)
    k = int(np.prod(ksize))
    columns = dy.reshape(-1, o) @ f.reshape(k * c, o).T
    return _col2im(columns.reshape(n, *g.out, *ksize, c), x_shape, g)


def _conv_backprop_filter_last(x, f_shape, dy, attrs):
    n, *sizes, c = x.shape
    *ksize, fc, o = f_shape
    g = _Geometry(sizes, ksize, attrs)
    _check_backprop(dy.shape, n, g, o, x.shape, f_shape)
    if dy.size == 0:
        return np.zeros(f_shape, dtype=dy.dtype)
    k = int(np.prod(ksize))
    columns = _windows(x, g).reshape(-1, k * c)
    return (columns.T @ dy.reshape(-1, o)).reshape(f_shape)


def _max_pool_last(x, attrs):
    g = _Geometry(x.shape[1:-1], attrs["ksize"], attrs)
    lowest = _lowest(x.dtype)
    out = np.full((x.shape[0], *g.out, x.shape[-1]), lowest, dtype=x.dtype)
    if out.size == 0:
        return out
    padded = _pad(x, g.pads, lowest)
    for offset in g.offsets():
        np.fmax(out, padded[(slice(None), *g.offset_slices(offset))], out=out)
    return out


def _valid_counts(size, window, stride, out, before):
    starts = np.arange(out) * stride - before
    return np.minimum(starts + window, size) - np.maximum(starts, 0)


def _window_counts(x_shape, g: _Geometry, dtype):
    counts = np.ones((), dtype=np.int64)
    for size, k, s, o, (b, _) in zip(x_shape[1:-1], g.ksize, g.strides, g.out, g.pads):
        counts = np.multiply.outer(counts, _valid_counts(size, k, s, o, b))
    return counts.astype(dtype)[..., None]


def _avg_pool_last(x, attrs):
    g = _Geometry(x.shape[1:-1], attrs["ksize"], attrs)
    out = np.zeros((x.shape[0], *g.out, x.shape[-1]), dtype=x.dtype)
    if out.size == 0:
        return out
    padded = _pad(x, g.pads, 0)
    for offset in g.offsets():
        out += padded[(slice(None), *g.offset_slices(offset))]
    return out / _window_counts(x.shape, g, x.dtype)


def _first_maxima(x, y, g: _Geometry, every_tie=None):
    """For each window offset, the slices it covers and the mask of the windows whose maximum
    is there: where the window's gradient goes.  In 1 and 2 dimensions that is the first
    maximum in row-major window order (TensorFlow's MaxPoolGrad); in 3 every element equal to
    the maximum gets the whole gradient (its MaxPool3DGrad), unless ``every_tie`` is False
    (its MaxPool3DGradGrad reads the first)."""
    padded = _pad(x, g.pads, -np.inf if x.dtype.kind == "f" else _lowest(x.dtype))
    if every_tie is None:
        every_tie = len(g.ksize) == 3
    taken = np.zeros(y.shape, dtype=bool)
    for offset in g.offsets():
        where = g.offset_slices(offset)
        first = padded[(slice(None), *where)] == y
        if not every_tie:
            first &= ~taken
            taken |= first
        yield where, first


def _max_pool_grad_last(x, y, dy, attrs):
    g = _Geometry(x.shape[1:-1], attrs["ksize"], attrs)
    full = (x.shape[0], *(n + b + a for n, (b, a) in zip(x.shape[1:-1], g.pads)), x.shape[-1])
    grad = np.zeros(full, dtype=dy.dtype)
    for where, first in _first_maxima(x, y, g):
        grad[(slice(None), *where)] += np.where(first, dy, 0)
    return _crop(grad, x.shape, g)


def _max_pool_grad_grad_last(x, y, grad, attrs):
    g = _Geometry(x.shape[1:-1], attrs["ksize"], attrs)
    padded = _pad(grad, g.pads, 0)
    out = np.zeros(y.shape, dtype=grad.dtype)
    for where, first in _first_maxima(x, y, g, every_tie=False):
        out += np.where(first, padded[(slice(None), *where)], 0)
    return out


def _avg_pool_grad_last(x_shape, dy, attrs):
    g = _Geometry(x_shape[1:-1], attrs["ksize"], attrs)
    share = dy / _window_counts(x_shape, g, dy.dtype)
    full = (x_shape[0], *(n + b + a for n, (b, a) in zip(x_shape[1:-1], g.pads)), x_shape[-1])
    grad = np.zeros(full, dtype=dy.dtype)
    for offset in g.offsets():
        grad[(slice(None), *g.offset_slices(offset))] += share
    return _crop(grad, x_shape, g)


def _first(attrs) -> bool:
    return attrs.get("data_format", "NDHWC") in ("NCDHW", "NCHW", "NCW", "CHANNELS_FIRST")


def _kernel(fn, images=(0,), sizes=None, filter_sizes=None, image_output=True):
    """A kernel calling ``fn(*inputs, attrs)`` in channels-last layout: the inputs at
    ``images`` (and the output) are moved from and to channels-first when the op's layout is;
    ``sizes`` is the index of an input holding an image's sizes, ``filter_sizes`` that of one
    holding a filter's."""

    def make(attrs):
        first = _first(attrs)

        def kernel(*inputs):
            inputs = list(inputs)
            for i in images:
                inputs[i] = _channels_last(inputs[i], first)
            if sizes is not None:
                inputs[sizes] = _sizes_last(inputs[sizes], first)
            if filter_sizes is not None:
                inputs[filter_sizes] = tuple(int(v) for v in np.asarray(inputs[filter_sizes]))
            out = fn(*inputs, attrs)
            return _channels_back(out, first) if image_output else out

        return kernel

    return make


# -- shape inference ---------------------------------------------------------------------------
def _dims_last(shape: TensorShape, rank: int, first: bool) -> list:
    dims = shape.as_list() if shape.ndims is not None else [None] * rank
    return [dims[0], *dims[2:], dims[1]] if first else dims


def _dims_back(dims: list, first: bool) -> TensorShape:
    return TensorShape([dims[0], dims[-1], *dims[1:-1]] if first else dims)


def _static_out(sizes, ksize, attrs, what):
    out = []
    explicit = _explicit_pairs(attrs, len(sizes))
    dilations = attrs.get("dilations") or (1,) * len(sizes)
    for size, k, s, d, pair in zip(sizes, ksize, attrs["strides"], dilations, explicit):
        if size is None or k is None:
            out.append(None)
            continue
        e = (k - 1) * d + 1
        o = _output_size(size, e, s, attrs["padding"], pair)[0]
        if o < 0:
            raise ValueError(f"{what} window of size {e} is larger than the input size {size}")
        out.append(o)
    return out


def _check_rank(t, rank, arg, op):
    if t.shape.ndims not in (None, rank):
        raise ValueError(f"{arg} of {op.type} must be {rank}-D, got shape {t.shape}")


def _infer_conv(op):
    x, f = op.inputs
    check_same_dtype((x, f), ("input", "filter"), op.type)
    check_dtype(x.dtype, FLOAT_TYPES | {_dtypes.int32}, "input")
    s = len(op.attrs["strides"])
    batch_dims = op.attrs.get("batch_dims", 1)
    _check_rank(x, s + 1 + batch_dims, "input", op)
    _check_rank(f, s + 2, "filter", op)
    first = _first(op.attrs)
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * (s + 1 + batch_dims)
    batch, rest = dims[:batch_dims], dims[batch_dims:]
    if first:
        c, sizes = rest[0], rest[1:]
    else:
        c, sizes = rest[-1], rest[:-1]
    fdims = f.shape.as_list() if f.shape.ndims is not None else [None] * (s + 2)
    groups = op.attrs.get("groups", 1)
    if c is not None and fdims[-2] is not None and c != fdims[-2] * groups:
        raise ValueError(
            f"input has {c} channels but the filter {f.shape} expects {fdims[-2]}"
            + (f" in each of {groups} groups" if groups > 1 else "")
        )
    out = _static_out(sizes, fdims[:-2], op.attrs, op.type)
    o = fdims[-1]
    shape = [*batch, o, *out] if first else [*batch, *out, o]
    return [(x.dtype, TensorShape(shape))]


def _infer_like_sizes(sizes_index: int, like_index: int):
    def infer(op):
        sizes, like = op.inputs[sizes_index], op.inputs[like_index]
        return [(like.dtype, _shape_from_vector(sizes, f"{op.type}'s sizes"))]

    return infer


def _infer_pool(op):
    (x,) = op.inputs
    allowed = FLOAT_TYPES if op.type.startswith("Avg") else NUMERIC_TYPES
    check_dtype(x.dtype, allowed, "input")
    s = len(op.attrs["ksize"])
    _check_rank(x, s + 2, "input", op)
    first = _first(op.attrs)
    n, *sizes, c = _dims_last(x.shape, s + 2, first)
    out = _static_out(sizes, op.attrs["ksize"], op.attrs, op.type)
    return [(x.dtype, _dims_back([n, *out, c], first))]


define_op("Conv3D", _infer_conv, _kernel(_conv_kernel_last))


# Its kernel (batch dimensions) is defined below; it shares out its work on the intra-op threads.
define_op("Conv", _infer_conv, None, extra={"intra_op_threads": True})


define_op(
    "Conv3DBackpropInputV2",
    _infer_like_sizes(0, 2),
    _kernel(_conv_backprop_input_last, images=(2,), sizes=0),
)


define_op(
    "Conv3DBackpropFilterV2",
    _infer_like_sizes(1, 2),
    _kernel(_conv_backprop_filter_last, images=(0, 2), filter_sizes=1, image_output=False),
)


define_op("MaxPool3D", _infer_pool, _kernel(_max_pool_last))


define_op("AvgPool3D", _infer_pool, _kernel(_avg_pool_last))


define_op(
    "MaxPool3DGrad",
    lambda op: [(op.inputs[2].dtype, op.inputs[0].shape)],
    _kernel(_max_pool_grad_last, images=(0, 1, 2)),
)


define_op(
    "MaxPool3DGradGrad",
    lambda op: [(op.inputs[2].dtype, op.inputs[1].shape)],
    _kernel(_max_pool_grad_grad_last, images=(0, 1, 2)),
)


define_op(
    "AvgPool3DGrad", _infer_like_sizes(0, 1), _kernel(_avg_pool_grad_last, images=(1,), sizes=0)
)


# Pooling with holes between a window's taps (`pool` with a ``dilation_rate``, VALID padding),
# any rank, either layout.
define_op("DilatedMaxPool", _infer_pool, _kernel(_max_pool_last))


define_op("DilatedAvgPool", _infer_pool, _kernel(_avg_pool_last))


define_op(
    "DilatedMaxPoolGrad",
    lambda op: [(op.inputs[2].dtype, op.inputs[0].shape)],
    _kernel(_max_pool_grad_last, images=(0, 1, 2)),
)


define_op(
    "DilatedMaxPoolGradGrad",
    lambda op: [(op.inputs[2].dtype, op.inputs[1].shape)],
    _kernel(_max_pool_grad_grad_last, images=(0, 1, 2)),
)


define_op(
    "DilatedAvgPoolGrad",
    _infer_like_sizes(0, 1),
    _kernel(_avg_pool_grad_last, images=(1,), sizes=0),
)


def _generic_conv_kernel(attrs):
    """TensorFlow's ``Conv``: any number of leading batch dimensions, folded into one."""
    batch_dims = attrs.get("batch_dims", 1)
    first = attrs.get("data_format") == "CHANNELS_FIRST"
    attrs = dict(attrs, data_format="CHANNELS_LAST")

    def kernel(x, f):
        batch = x.shape[:batch_dims]
        x = x.reshape((-1, *x.shape[batch_dims:]))
        # channels-first data is convolved as it lies (ONNX models arrive so)
        y = _conv_kernel_first(x, f, attrs) if first else _conv_kernel_last(x, f, attrs)
        return y.reshape((*batch, *y.shape[1:]))

    return kernel


get_op_def("Conv").kernel = _generic_conv_kernel


# -- attributes --------------------------------------------------------------------------------
def _spatial_list(values, what, n, first, default=None, ends_must_be_one=True) -> tuple:
    """``n`` spatial values from an int, ``n`` ints, or TensorFlow's ``n + 2``-list in the
    layout's order (whose batch and channel entries must be 1)."""
    if values is None or (not isinstance(values, (int, np.integer)) and len(values) == 0):
        if default is None:
            raise ValueError(f"{what} must be given")
        values = default
    if isinstance(values, (int, np.integer)):
        values = [int(values)]
    values = [int(v) for v in values]
    if len(values) == 1:
        values = values * n
    elif len(values) == n + 2:
        ends = (values[0], values[1]) if first else (values[0], values[-1])
        if ends_must_be_one and ends != (1, 1):
            raise ValueError(f"{what} {values} must be 1 in the batch and channel dimensions")
        values = values[2:] if first else values[1:-1]
    elif len(values) != n:
        raise ValueError(f"{what} must be an int, {n} ints or {n + 2} ints, got {values}")
    if min(values) < 1:
        raise ValueError(f"{what} must be positive, got {values}")
    return tuple(values)


def _padding(padding) -> str:
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be 'SAME' or 'VALID', got {padding!r}")
    return padding


def _attrs3d(strides, padding, dilations, data_format) -> dict:
    data_format = _check_data_format(data_format, ("NDHWC", "NCDHW"))
    first = data_format == "NCDHW"
    return {
        "strides": _spatial_list(strides, "strides", 3, first),
        "dilations": _spatial_list(dilations, "dilations", 3, first, default=1),
        "padding": _padding(padding),
        "data_format": data_format,
    }


def _apply(op_type, inputs, attrs, name):
    return apply_op(op_type, inputs, attrs, name or op_type).outputs[0]


_CONV_ATTRS = ("strides", "padding", "dilations", "data_format")


_POOL_ATTRS = ("ksize", "strides", "padding", "dilations", "data_format")


def _copy(op, names) -> dict:
    return {k: op.attrs[k] for k in names if k in op.attrs}


def _op(op_type, inputs, attrs):
    return apply_op(op_type, inputs, attrs, op_type).outputs[0]


def _no_gradient(op, *grads):
    """TensorFlow registers no gradient for these op types: asking for one is its error."""
    raise LookupError(
        f"No gradient defined for operation '{op.name}' (op type: {op.type}). In general every "
        "operation must have an associated `@tf.RegisterGradient` for correct autodiff."
    )

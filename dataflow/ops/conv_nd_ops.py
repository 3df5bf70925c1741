"""Convolution and pooling over any number of spatial dimensions: ``conv3d`` and its backward
ops and transpose, ``max_pool3d``/``avg_pool3d`` with their gradients, TensorFlow's generic
``conv`` op (grouped, several batch dimensions), and the functions that pick an op by rank
(``convolution``, ``conv_transpose``, ``pool``), plus the 1-d and atrous transposes and the
other names of the 2-d backward ops.  The user-facing names live in ``df.nn``.

The kernels compute channels-last (``[batch, *spatial, channels]``); an op in a channels-first
layout (``NCDHW``) transposes in and out.  A convolution is one strided window view of the
padded input (``sliding_window_view``) copied into an im2col matrix and one matrix product with
the filter reshaped to ``(window * in_channels, out_channels)``; the input gradient is the
product transposed, added back window offset by window offset (col2im); the filter gradient is
the im2col matrix times the output gradient.  Geometry follows `conv_ops` (TensorFlow's SAME
padding puts the odd element after).
"""

from __future__ import annotations

import itertools
import zlib
from typing import Optional

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_shape import TensorShape
from . import array_ops as _a
from .array_ops import _shape_from_vector
from .conv_ops import (
    _backprop_filter,
    _backprop_input,
    _check_data_format,
    _conv_attrs,
    _lowest,
    _one_of,
    _output_size,
    argument_errors,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
)
from .math_ops import FLOAT_TYPES, NUMERIC_TYPES, check_dtype, check_same_dtype, convert_all
from .math_ops import graph_of as _graph_of

__all__ = [
    "atrous_conv2d_transpose",
    "avg_pool3d",
    "conv1d_transpose",
    "conv3d",
    "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2",
    "conv3d_transpose",
    "conv_transpose",
    "convolution",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_native_backprop_input",
    "dilation2d",
    "erosion2d",
    "fractional_avg_pool",
    "fractional_max_pool",
    "max_pool3d",
    "max_pool_with_argmax",
    "pool",
    "with_space_to_batch",
]


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
def _conv_kernel_last(x, f, attrs):
    groups = attrs.get("groups", 1)
    n, *sizes, c = x.shape
    *ksize, fc, o = f.shape
    if fc * groups != c or o % groups:
        raise InvalidArgumentError(
            None,
            None,
            f"input has {c} channels but the filter {list(f.shape)} expects {fc}"
            + (f" in each of {groups} groups" if groups > 1 else ""),
        )
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
define_op("Conv", _infer_conv, None)  # its kernel (batch dimensions) is defined below
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
        x = np.moveaxis(x, 1, -1) if first else x
        y = _conv_kernel_last(x, f, attrs)
        y = np.ascontiguousarray(np.moveaxis(y, -1, 1)) if first else y
        return y.reshape((*batch, *y.shape[1:]))

    return kernel


from ..framework.op_registry import get_op_def  # noqa: E402

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


# -- 3-d convolution ---------------------------------------------------------------------------
_DILATIONS_5 = [1, 1, 1, 1, 1]


def conv3d(
    input,  # noqa: A002
    filter=None,  # noqa: A002
    strides=None,
    padding=None,
    data_format: str = "NDHWC",
    dilations=_DILATIONS_5,
    name: Optional[str] = None,
    filters=None,
) -> Tensor:
    """The 3-d convolution of ``input`` (NDHWC or NCDHW) with the ``[depth, height, width,
    in_channels, out_channels]`` ``filter``; ``strides`` and ``dilations`` are 5-lists in
    ``data_format`` order (or 3 spatial values)."""
    with argument_errors("Conv3D", name):
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        attrs = _attrs3d(strides, padding, dilations, data_format)
    graph = _graph_of((input, filter))
    with graph.as_default(), graph.name_scope(name or "Conv3D") as scope:
        x, f = convert_all((input, filter), ("input", "filter"))
        return apply_op("Conv3D", (x, f), attrs, scope).outputs[0]


def conv3d_backprop_filter_v2(
    input,  # noqa: A002
    filter_sizes,
    out_backprop,
    strides,
    padding,
    data_format: str = "NDHWC",
    dilations=_DILATIONS_5,
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `conv3d` with respect to its filter of shape ``filter_sizes``."""
    with argument_errors("Conv3DBackpropFilterV2", name):
        attrs = _attrs3d(strides, padding, dilations, data_format)
    graph = _graph_of((input, out_backprop, filter_sizes))
    with graph.as_default(), graph.name_scope(name or "Conv3DBackpropFilterV2") as scope:
        sizes = convert_to_tensor(filter_sizes, dtype=_dtypes.int32, name="filter_sizes")
        x, dy = convert_all((input, out_backprop), ("input", "out_backprop"))
        return apply_op("Conv3DBackpropFilterV2", (x, sizes, dy), attrs, scope).outputs[0]


conv3d_backprop_filter = conv3d_backprop_filter_v2


def conv3d_transpose(
    value,
    filter=None,  # noqa: A002
    output_shape=None,
    strides=None,
    padding: str = "SAME",
    data_format: str = "NDHWC",
    name: Optional[str] = None,
    input=None,  # noqa: A002
    filters=None,
    dilations=None,
) -> Tensor:
    """The transpose of `conv3d` (its gradient with respect to the input): ``value`` of shape
    ``[batch, depth, height, width, in_channels]`` becomes ``output_shape``; the filter is
    ``[depth, height, width, output_channels, in_channels]``."""
    with argument_errors("Conv3DBackpropInputV2", name or "conv3d_transpose"):
        value = _one_of(value, input, "value", "input")
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        if output_shape is None:
            raise ValueError("conv3d_transpose needs an output_shape")
        attrs = _attrs3d(strides, padding, dilations, data_format)
    return _backprop_input(
        "Conv3DBackpropInputV2", output_shape, filter, value, attrs, name or "conv3d_transpose"
    )


# -- other names of the 2-d backward ops ---------------------------------------------------------
def depthwise_conv2d_native_backprop_input(
    input_sizes,
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `depthwise_conv2d_native` with respect to its input of shape
    ``input_sizes``."""
    op_type = "DepthwiseConv2dNativeBackpropInput"
    with argument_errors(op_type, name):
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    return _backprop_input(op_type, input_sizes, filter, out_backprop, attrs, name)


def depthwise_conv2d_native_backprop_filter(
    input,  # noqa: A002
    filter_sizes,
    out_backprop,
    strides,
    padding,
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `depthwise_conv2d_native` with respect to its filter of shape
    ``filter_sizes``."""
    op_type = "DepthwiseConv2dNativeBackpropFilter"
    with argument_errors(op_type, name):
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    return _backprop_filter(op_type, input, filter_sizes, out_backprop, attrs, name)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def _explicit(padding, explicit_paddings):
    """``padding`` for the 2-d functions, with TensorFlow's flat ``explicit_paddings`` (8 ints)
    turned into the 4 pairs those take."""
    if padding == "EXPLICIT":
        flat = [int(v) for v in explicit_paddings or ()]
        if len(flat) != 8:
            raise ValueError(f"explicit_paddings must be 8 ints, got {explicit_paddings!r}")
        return [flat[i : i + 2] for i in range(0, 8, 2)]
    if explicit_paddings:
        raise ValueError(
            f"explicit_paddings must be empty unless padding is 'EXPLICIT', got padding {padding!r}"
        )
    return padding


def conv2d_backprop_input_v2(
    input,  # noqa: A002
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu: bool = True,
    explicit_paddings=[],  # noqa: B006 - TensorFlow's default, never mutated
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `conv2d` with respect to its input, whose shape is that of the tensor
    ``input`` (whose values are not read)."""
    with argument_errors("Conv2DBackpropInput", name):
        padding = _explicit(padding, explicit_paddings)
    graph = _graph_of((input, filter, out_backprop))
    with graph.as_default():
        sizes = _a.shape(convert_to_tensor(input, name="input"))
        return conv2d_backprop_input(
            sizes, filter, out_backprop, strides, padding, use_cudnn_on_gpu, data_format,
            dilations, name=name,
        )  # fmt: skip


def conv2d_backprop_filter_v2(
    input,  # noqa: A002
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu: bool = True,
    explicit_paddings=[],  # noqa: B006 - TensorFlow's default, never mutated
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `conv2d` with respect to its filter, whose shape is that of the tensor
    ``filter`` (whose values are not read)."""
    with argument_errors("Conv2DBackpropFilter", name):
        padding = _explicit(padding, explicit_paddings)
    graph = _graph_of((input, filter, out_backprop))
    with graph.as_default():
        sizes = _a.shape(convert_to_tensor(filter, name="filter"))
        return conv2d_backprop_filter(
            input, sizes, out_backprop, strides, padding, use_cudnn_on_gpu, data_format,
            dilations, name=name,
        )  # fmt: skip


# -- pooling in 3-d ----------------------------------------------------------------------------
def _pool3d(op_type, input, ksize, strides, padding, data_format, name):  # noqa: A002
    with argument_errors(op_type, name):
        data_format = _check_data_format(data_format, ("NDHWC", "NCDHW"))
        first = data_format == "NCDHW"
        attrs = {
            "ksize": _spatial_list(ksize, "ksize", 3, first),
            "strides": _spatial_list(strides, "strides", 3, first),
            "padding": _padding(padding),
            "data_format": data_format,
        }
    return apply_op(op_type, (input,), attrs, name or op_type).outputs[0]


def max_pool3d(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format: str = "NDHWC",
    name: Optional[str] = None,
) -> Tensor:
    """The maximum over each ``ksize`` window of the 5-d ``input`` (NDHWC or NCDHW)."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format: str = "NDHWC",
    name: Optional[str] = None,
) -> Tensor:
    """The mean over each ``ksize`` window of the 5-d ``input``; with SAME padding a window at
    the border averages only the elements inside the input, as in TensorFlow."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)


# -- by rank -----------------------------------------------------------------------------------
_FIRST_FORMATS = ("NCW", "NCHW", "NCDHW")


def _rank_of(x: Tensor, what: str) -> int:
    rank = x.shape.ndims
    if rank not in (3, 4, 5):
        raise ValueError(f"{what} needs an input of known rank 3, 4 or 5, got shape {x.shape}")
    return rank - 2


def convolution(
    input,  # noqa: A002
    filter=None,  # noqa: A002
    padding=None,
    strides=None,
    dilation_rate=None,
    name: Optional[str] = None,
    data_format=None,
    filters=None,
    dilations=None,
) -> Tensor:
    """The convolution of ``input`` with ``filter`` over 1, 2 or 3 spatial dimensions (by the
    rank of ``input``): `conv1d`, `conv2d` or `conv3d` with ``strides`` and ``dilation_rate``
    of one value per spatial dimension (strides above 1 with a dilation above 1 is an error, as
    in TensorFlow).  The op is named ``convolution``."""
    from .conv_ops import conv1d, conv2d

    name = name or "convolution"
    with argument_errors("Conv", name):
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        if dilations is not None:
            dilation_rate = _one_of(dilation_rate, dilations, "dilation_rate", "dilations")
        x = convert_to_tensor(input, name="input")
        n = _rank_of(x, "convolution")
        strides = _spatial_list(strides, "strides", n, False, default=1, ends_must_be_one=False)
        rate = _spatial_list(dilation_rate, "dilation_rate", n, False, default=1,
                             ends_must_be_one=False)  # fmt: skip
        if max(rate) > 1 and max(strides) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        if data_format is not None and data_format.startswith("NC"):
            if data_format not in _FIRST_FORMATS[n - 1 : n]:
                raise ValueError(f"data_format {data_format!r} does not fit a rank {n + 2} input")
        elif data_format is not None and data_format not in ("NWC", "NHWC", "NDHWC"):
            raise ValueError(f"unknown data_format {data_format!r}")
        _padding(padding)
    if n == 1:
        return conv1d(x, filter, strides[0], padding, data_format=data_format or "NWC",
                      dilations=rate[0], name=name)  # fmt: skip
    if n == 2:
        return conv2d(x, filter, list(strides), padding, data_format=data_format or "NHWC",
                      dilations=list(rate), name=name)  # fmt: skip
    return conv3d(x, filter, list(strides), padding, data_format=data_format or "NDHWC",
                  dilations=list(rate), name=name)  # fmt: skip


def conv1d_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding: str = "SAME",
    data_format: str = "NWC",
    dilations=None,
    name: Optional[str] = None,
) -> Tensor:
    """The transpose of `conv1d`: ``input`` of shape ``[batch, width, in_channels]`` becomes
    ``output_shape``; ``filters`` is ``[width, output_channels, in_channels]``.  A
    `conv2d_transpose` over a height of 1."""
    with argument_errors("Conv2DBackpropInput", name or "conv1d_transpose"):
        data_format = _check_data_format(data_format, ("NWC", "NCW"))
        first = data_format == "NCW"
        stride = _spatial_list(strides, "strides", 1, first)[0]
        dilation = _spatial_list(dilations, "dilations", 1, first, default=1)[0]
    graph = _graph_of((input, filters, output_shape))
    with graph.as_default(), graph.name_scope(name or "conv1d_transpose") as scope:
        spatial = 2 if first else 1
        x = _a.expand_dims(convert_to_tensor(input, name="input"), spatial)
        f = _a.expand_dims(convert_to_tensor(filters, name="filters"), 0)
        shape = convert_to_tensor(output_shape, dtype=_dtypes.int32, name="output_shape")
        shape = _a.concat([shape[:spatial], [1], shape[spatial:]], 0)
        y = conv2d_transpose(
            x, f, shape, [1, 1, stride, 1] if not first else [1, 1, 1, stride], padding,
            "NCHW" if first else "NHWC", name=scope,
            dilations=[1, 1, dilation, 1] if not first else [1, 1, 1, dilation],
        )  # fmt: skip
        return _a.squeeze(y, [spatial], name="Squeeze")


def atrous_conv2d_transpose(
    value, filters, output_shape, rate, padding, name: Optional[str] = None
) -> Tensor:
    """The transpose of `atrous_conv2d`: the gradient of a convolution dilated by ``rate``
    (stride 1) with respect to its NHWC input, of shape ``output_shape``."""
    with argument_errors("Conv2DBackpropInput", name or "atrous_conv2d_transpose"):
        if int(rate) < 1:
            raise ValueError(f"rate {rate} cannot be less than one")
        _padding(padding)
    return conv2d_transpose(
        value, filters, output_shape, [1, 1, 1, 1], padding, "NHWC",
        name=name or "atrous_conv2d_transpose", dilations=[1, int(rate), int(rate), 1],
    )  # fmt: skip


def conv_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding: str = "SAME",
    data_format=None,
    dilations=None,
    name: Optional[str] = None,
) -> Tensor:
    """`conv1d_transpose`, `conv2d_transpose` or `conv3d_transpose`, by the length of
    ``output_shape`` (or the rank of ``input``)."""
    with argument_errors("conv_transpose", name):
        x = convert_to_tensor(input, name="input")
        shape = (
            output_shape.shape.as_list()[0]
            if isinstance(output_shape, Tensor)
            else (len(output_shape) if output_shape is not None else None)
        )
        n = shape - 2 if shape is not None else _rank_of(x, "conv_transpose")
        if n not in (1, 2, 3):
            raise ValueError(f"output_shape must have 3, 4 or 5 elements, got {output_shape}")
    if n == 1:
        return conv1d_transpose(
            x, filters, output_shape, strides, padding, data_format or "NWC", dilations,
            name or "conv1d_transpose",
        )  # fmt: skip
    first = data_format is not None and data_format.startswith("NC")
    strides = list(_spatial_list(strides, "strides", n, first, ends_must_be_one=False))
    strides = [1, 1, *strides] if first else [1, *strides, 1]
    if dilations is not None:
        dilations = list(_spatial_list(dilations, "dilations", n, first, ends_must_be_one=False))
        dilations = [1, 1, *dilations] if first else [1, *dilations, 1]
    if n == 2:
        return conv2d_transpose(x, filters, output_shape, strides, padding, data_format or "NHWC",
                                name or "conv2d_transpose", dilations=dilations)  # fmt: skip
    return conv3d_transpose(x, filters, output_shape, strides, padding, data_format or "NDHWC",
                            name or "conv3d_transpose", dilations=dilations)  # fmt: skip


_POOLING_TYPES = ("MAX", "AVG")


def pool(
    input,  # noqa: A002
    window_shape,
    pooling_type,
    padding,
    dilation_rate=None,
    strides=None,
    name: Optional[str] = None,
    data_format=None,
    dilations=None,
) -> Tensor:
    """Max (``pooling_type="MAX"``) or average (``"AVG"``) pooling over the 1, 2 or 3 spatial
    dimensions of ``input`` (by its rank), with one ``window_shape``, ``strides`` and
    ``dilation_rate`` value per spatial dimension.  A dilation above 1 needs strides of 1 and
    VALID padding, as in TensorFlow."""
    from .conv_ops import avg_pool, max_pool
    from .extra_nn_ops import avg_pool1d, max_pool1d

    with argument_errors("pool", name):
        if dilations is not None:
            dilation_rate = _one_of(dilation_rate, dilations, "dilation_rate", "dilations")
        if pooling_type not in _POOLING_TYPES:
            raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
        x = convert_to_tensor(input, name="input")
        n = _rank_of(x, "pool")
        first = data_format is not None and data_format.startswith("NC")
        window = _spatial_list(window_shape, "window_shape", n, False, ends_must_be_one=False)
        strides = _spatial_list(strides, "strides", n, False, default=1, ends_must_be_one=False)
        rate = _spatial_list(dilation_rate, "dilation_rate", n, False, default=1,
                             ends_must_be_one=False)  # fmt: skip
        if max(rate) > 1 and max(strides) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        if max(rate) > 1 and padding == "SAME":
            raise ValueError(
                "pooling with 'SAME' padding is not implemented for `dilation_rate` > 1"
            )
        _padding(padding)
    if max(rate) == 1:
        default_format = ("NWC", "NHWC", "NDHWC")[n - 1]
        fmt = data_format or default_format
        if n == 1:
            one_d = max_pool1d if pooling_type == "MAX" else avg_pool1d
            return one_d(x, window[0], strides[0], padding, fmt, name=name)
        full = lambda v: [1, 1, *v] if first else [1, *v, 1]  # noqa: E731
        if n == 2:
            two_d = max_pool if pooling_type == "MAX" else avg_pool
            return two_d(x, full(window), full(strides), padding, fmt, name=name)
        three_d = max_pool3d if pooling_type == "MAX" else avg_pool3d
        return three_d(x, full(window), full(strides), padding, fmt, name=name)
    graph = _graph_of((x,))
    with graph.as_default(), graph.name_scope(name or pooling_type.lower() + "_pool") as scope:
        attrs = {
            "ksize": window,
            "strides": (1,) * n,
            "dilations": rate,
            "padding": "VALID",
            "data_format": "CHANNELS_FIRST" if first else "CHANNELS_LAST",
        }
        op_type = "DilatedMaxPool" if pooling_type == "MAX" else "DilatedAvgPool"
        return apply_op(op_type, (x,), attrs, scope).outputs[0]


def conv(
    input,  # noqa: A002
    filter,  # noqa: A002
    strides,
    padding,
    explicit_paddings=[],  # noqa: B006 - TensorFlow's default, never mutated
    data_format: str = "CHANNELS_LAST",
    dilations=[],  # noqa: B006 - TensorFlow's default, never mutated
    batch_dims: int = 1,
    groups: int = 1,
    name: Optional[str] = None,
) -> Tensor:
    """TensorFlow's generic ``Conv`` op: the N-d convolution (N = 1, 2 or 3, from the
    ``(N + 2)``-d ``filter``) of ``input`` of shape ``batch_shape + spatial + [channels]``
    (``CHANNELS_LAST``) or ``batch_shape + [channels] + spatial`` (``CHANNELS_FIRST``) with
    ``batch_dims`` batch dimensions.  ``strides`` and ``dilations`` have ``N + 2`` entries;
    ``groups`` splits the channels into groups convolved separately (the filter's input depth
    is ``channels / groups``); ``padding="EXPLICIT"`` takes ``explicit_paddings``, a
    ``(before, after)`` pair per dimension of ``N + 2``."""
    with argument_errors("Conv", name):
        if data_format not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
            raise ValueError(
                f"data_format must be 'CHANNELS_LAST' or 'CHANNELS_FIRST', got {data_format!r}"
            )
        first = data_format == "CHANNELS_FIRST"
        if int(batch_dims) < 1 or int(groups) < 1:
            raise ValueError(f"batch_dims and groups must be positive, got {batch_dims}, {groups}")
        f = convert_to_tensor(filter, name="filter")
        if f.shape.ndims not in (3, 4, 5):
            raise ValueError(f"filter must be 3-, 4- or 5-D, got shape {f.shape}")
        n = f.shape.ndims - 2
        if len(strides) != n + 2:
            raise ValueError(f"strides must have {n + 2} entries, got {strides}")
        attrs = {
            "strides": _spatial_list(strides, "strides", n, first),
            "dilations": _spatial_list(dilations, "dilations", n, first, default=1),
            "data_format": data_format,
            "batch_dims": int(batch_dims),
            "groups": int(groups),
        }
        if padding == "EXPLICIT":
            flat = [int(v) for v in explicit_paddings]
            if len(flat) != 2 * (n + 2) or min(flat, default=0) < 0:
                raise ValueError(
                    f"explicit_paddings must be {2 * (n + 2)} non-negative ints, got "
                    f"{explicit_paddings}"
                )
            spatial = flat[4:] if first else flat[2:-2]
            attrs.update(padding="EXPLICIT", explicit_paddings=tuple(spatial))
        else:
            attrs["padding"] = _padding(padding)
            if len(explicit_paddings):
                raise ValueError("explicit_paddings must be empty unless padding is 'EXPLICIT'")
    graph = _graph_of((input, f))
    with graph.as_default(), graph.name_scope(name or "Conv") as scope:
        x, f = convert_all((input, f), ("input", "filter"))
        return apply_op("Conv", (x, f), attrs, scope).outputs[0]


# -- gradients ---------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402

_CONV_ATTRS = ("strides", "padding", "dilations", "data_format")
_POOL_ATTRS = ("ksize", "strides", "padding", "dilations", "data_format")


def _copy(op, names) -> dict:
    return {k: op.attrs[k] for k in names if k in op.attrs}


def _op(op_type, inputs, attrs):
    return apply_op(op_type, inputs, attrs, op_type).outputs[0]


@RegisterGradient("Conv3D")
def _conv3d_grad(op, grad):
    x, f = op.inputs
    attrs = _copy(op, _CONV_ATTRS)
    return (
        _op("Conv3DBackpropInputV2", (_a.shape(x), f, grad), attrs),
        _op("Conv3DBackpropFilterV2", (x, _a.shape(f), grad), attrs),
    )


@RegisterGradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op, grad):
    _, f, dy = op.inputs
    attrs = _copy(op, _CONV_ATTRS)
    return (
        None,
        _op("Conv3DBackpropFilterV2", (grad, _a.shape(f), dy), attrs),
        _op("Conv3D", (grad, f), attrs),
    )


@RegisterGradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _copy(op, _CONV_ATTRS)
    return (
        _op("Conv3DBackpropInputV2", (_a.shape(x), grad, dy), attrs),
        None,
        _op("Conv3D", (x, grad), attrs),
    )


def _max_pool_grads(forward, grad_type, grad_grad_type):
    @RegisterGradient(forward)
    def _forward_grad(op, grad):
        return _op(grad_type, (op.inputs[0], op.outputs[0], grad), _copy(op, _POOL_ATTRS))

    @RegisterGradient(grad_type)
    def _grad_grad(op, grad):
        x, y, _ = op.inputs
        return None, None, _op(grad_grad_type, (x, y, grad), _copy(op, _POOL_ATTRS))


def _avg_pool_grads(forward, grad_type):
    @RegisterGradient(forward)
    def _forward_grad(op, grad):
        return _op(grad_type, (_a.shape(op.inputs[0]), grad), _copy(op, _POOL_ATTRS))

    @RegisterGradient(grad_type)
    def _grad_grad(op, grad):
        return None, _op(forward, (grad,), _copy(op, _POOL_ATTRS))


_max_pool_grads("MaxPool3D", "MaxPool3DGrad", "MaxPool3DGradGrad")
_avg_pool_grads("AvgPool3D", "AvgPool3DGrad")
_avg_pool_grads("DilatedAvgPool", "DilatedAvgPoolGrad")


@RegisterGradient("MaxPool3DGradGrad")
def _max_pool3d_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return None, None, _op("MaxPool3DGrad", (x, y, grad), _copy(op, _POOL_ATTRS))


_max_pool_grads("DilatedMaxPool", "DilatedMaxPoolGrad", "DilatedMaxPoolGradGrad")


@RegisterGradient("DilatedMaxPoolGradGrad")
def _dilated_max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return None, None, _op("DilatedMaxPoolGrad", (x, y, grad), _copy(op, _POOL_ATTRS))


def _no_gradient(op, *grads):
    """TensorFlow registers no gradient for these op types: asking for one is its error."""
    raise LookupError(
        f"No gradient defined for operation '{op.name}' (op type: {op.type}). In general every "
        "operation must have an associated `@tf.RegisterGradient` for correct autodiff."
    )


# -- volume patches ----------------------------------------------------------------------------
def _extract_volume_patches_last(x, attrs):
    g = _Geometry(x.shape[1:-1], attrs["ksize"], attrs)
    n, c = x.shape[0], x.shape[-1]
    k = int(np.prod(g.ksize))
    if min(n, *g.out, c) == 0:
        return np.zeros((n, *g.out, k * c), dtype=x.dtype)
    return np.ascontiguousarray(_windows(x, g)).reshape(n, *g.out, k * c)


def _infer_volume_patches(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_TYPES, "input")
    _check_rank(x, 5, "input", op)
    n, *sizes, c = _dims_last(x.shape, 5, False)
    out = _static_out(sizes, op.attrs["ksize"], op.attrs, op.type)
    depth = None if c is None else c * int(np.prod(op.attrs["ksize"]))
    return [(x.dtype, TensorShape([n, *out, depth]))]


define_op("ExtractVolumePatches", _infer_volume_patches, _kernel(_extract_volume_patches_last))


def extract_volume_patches(input, ksizes, strides, padding, name: Optional[str] = None):  # noqa: A002
    """The ``ksizes = [1, planes, rows, cols, 1]`` patches of the 5-d ``input`` (``[batch,
    depth, height, width, channels]``) taken every ``strides``, each flattened into the last
    dimension in (plane, row, column, channel) order: ``[batch, out_planes, out_rows,
    out_cols, planes * rows * cols * channels]``.  ``padding`` "SAME" pads with zeros as a
    convolution would."""
    with argument_errors("ExtractVolumePatches", name):
        attrs = {
            "ksize": _spatial_list(ksizes, "ksizes", 3, False),
            "strides": _spatial_list(strides, "strides", 3, False),
            "padding": _padding(padding),
        }
        for what, values in (("ksizes", ksizes), ("strides", strides)):
            if isinstance(values, (int, np.integer)) or len(values) != 5:
                raise ValueError(f"{what} must be 5 ints [1, planes, rows, cols, 1], got {values}")
    graph = _graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        return apply_op(
            "ExtractVolumePatches", (x,), attrs, name or "ExtractVolumePatches"
        ).outputs[0]


@RegisterGradient("ExtractVolumePatches")
def _extract_volume_patches_grad(op, grad):
    """The patches are a convolution with a one-hot filter (one output channel per patch
    position and channel); their gradient is that convolution's input gradient."""
    x = op.inputs[0]
    c = x.shape.as_list()[-1] if x.shape.ndims == 5 else None
    if c is None:
        raise ValueError("the gradient of extract_volume_patches needs a known channel count")
    ksize = op.attrs["ksize"]
    k = int(np.prod(ksize))
    one_hot = np.eye(k * c, dtype=x.dtype.as_numpy_dtype).reshape(*ksize, c, k * c)
    attrs = {"strides": op.attrs["strides"], "padding": op.attrs["padding"]}
    f = convert_to_tensor(one_hot)
    return _op("Conv3DBackpropInputV2", (_a.shape(x), f, grad), attrs)


# -- max pooling with the places of the maxima ------------------------------------------------
def _max_pool_with_argmax_kernel(attrs):
    include_batch = attrs["include_batch_in_index"]
    index_dtype = attrs["Targmax"].as_numpy_dtype

    def kernel(x):
        if x.ndim != 4:
            raise InvalidArgumentError(None, None, f"input must be 4-D, got {x.shape}")
        n, h, w, c = x.shape
        g = _Geometry((h, w), attrs["ksize"], attrs)
        (oh, ow), (kh, kw) = g.out, g.ksize
        if min(n, oh, ow, c) == 0:
            return np.zeros((n, oh, ow, c), x.dtype), np.zeros((n, oh, ow, c), index_dtype)
        fill = -np.inf if x.dtype.kind == "f" else _lowest(x.dtype)
        windows = _windows(x, g, fill=fill).reshape(n, oh, ow, kh * kw, c)
        best = np.argmax(windows, axis=3)  # the first maximum in row-major window order
        values = np.take_along_axis(windows, best[:, :, :, None], axis=3)[:, :, :, 0]
        rows = np.arange(oh)[None, :, None, None] * g.strides[0] - g.pads[0][0] + best // kw
        cols = np.arange(ow)[None, None, :, None] * g.strides[1] - g.pads[1][0] + best % kw
        index = (rows * w + cols) * c + np.arange(c)
        if include_batch:
            index = index + np.arange(n)[:, None, None, None] * (h * w * c)
        return values, index.astype(index_dtype)

    return kernel


def _infer_max_pool_with_argmax(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_TYPES, "input")
    _check_rank(x, 4, "input", op)
    n, h, w, c = _dims_last(x.shape, 4, False)
    oh, ow = _static_out((h, w), op.attrs["ksize"], op.attrs, op.type)
    shape = TensorShape([n, oh, ow, c])
    return [(x.dtype, shape), (op.attrs["Targmax"], shape)]


define_op("MaxPoolWithArgmax", _infer_max_pool_with_argmax, _max_pool_with_argmax_kernel)


def max_pool_with_argmax(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format: str = "NHWC",
    Targmax=None,  # noqa: N803 - TensorFlow's name
    name: Optional[str] = None,
    output_dtype=None,
    include_batch_in_index: bool = False,
):
    """`max_pool` of the NHWC ``input`` and, for each output, where its maximum is in the
    flattened input: ``(y * width + x) * channels + c``, plus ``b * height * width *
    channels`` with ``include_batch_in_index``.  ``output_dtype`` (TF1's ``Targmax``) is the
    indices' dtype, int64 by default; the first maximum of a window wins, as in TensorFlow's
    CPU kernel."""
    with argument_errors("MaxPoolWithArgmax", name):
        if data_format != "NHWC":
            raise ValueError(
                f"Data formats other than 'NHWC' are not yet supported, got {data_format!r}"
            )
        if Targmax is not None and output_dtype is not None and Targmax != output_dtype:
            raise ValueError("Cannot specify both 'Targmax' and 'output_dtype'")
        dtype = _dtypes.as_dtype(output_dtype or Targmax or _dtypes.int64)
        if dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"output_dtype must be int32 or int64, got {dtype.name}")
        attrs = {
            "ksize": _spatial_list(ksize, "ksize", 2, False),
            "strides": _spatial_list(strides, "strides", 2, False),
            "padding": _padding(padding),
            "Targmax": dtype,
            "include_batch_in_index": bool(include_batch_in_index),
        }
    graph = _graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        op = apply_op("MaxPoolWithArgmax", (x,), attrs, name or "MaxPoolWithArgmax")
        return op.outputs[0], op.outputs[1]


@RegisterGradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, grad, _):
    """Each output's gradient added at the input position its index names."""
    from . import math_ops as _m
    from .segment_ops import unsorted_segment_sum

    x, index = op.inputs[0], _m.cast(op.outputs[1], _dtypes.int64)
    size = _m.cast(_a.size(x), _dtypes.int64)
    if not op.attrs["include_batch_in_index"]:
        per_example = size // _m.cast(_a.shape(x)[0], _dtypes.int64)
        batch = _m.cast(_a.range(_a.shape(index)[0]), _dtypes.int64)
        index = index + _a.reshape(batch * per_example, [-1, 1, 1, 1])
    flat = unsorted_segment_sum(_a.reshape(grad, [-1]), _a.reshape(index, [-1]), size)
    return _a.reshape(flat, _a.shape(x))


# -- morphological dilation and erosion ----------------------------------------------------------
def _dilation_windows(x, f, attrs):
    """The windows of ``x`` plus the filter, ``(N, OH, OW, KH*KW, C)``, their geometry, and the
    first maximum of each."""
    n, h, w, c = x.shape
    kh, kw, fc = f.shape
    if fc != c:
        raise InvalidArgumentError(
            None, None, f"input has {c} channels but the filter {list(f.shape)} has {fc}"
        )
    g = _Geometry((h, w), (kh, kw), attrs)
    fill = -np.inf if x.dtype.kind == "f" else _lowest(x.dtype)
    sums = _windows(x, g, fill=fill) + f[None, None, None]
    sums = sums.reshape(n, *g.out, kh * kw, c)
    best = np.argmax(sums, axis=3) if sums.size else np.zeros((n, *g.out, c), np.int64)
    return sums, g, best


def _dilation2d_kernel(attrs):
    def kernel(x, f):
        sums, g, best = _dilation_windows(x, f, attrs)
        if sums.size == 0:
            return np.zeros((x.shape[0], *g.out, x.shape[3]), dtype=x.dtype)
        return np.take_along_axis(sums, best[:, :, :, None], axis=3)[:, :, :, 0]

    return kernel


def _dilation2d_backprop_input_kernel(attrs):
    def kernel(x, f, dy):
        sums, g, best = _dilation_windows(x, f, attrs)
        n, h, w, c = x.shape
        kw = f.shape[1]
        grad = np.zeros((n, h + sum(g.pads[0]), w + sum(g.pads[1]), c), dtype=dy.dtype)
        if sums.size == 0:
            return _crop(grad, x.shape, g)
        (sh, sw), (rh, rw) = g.strides, g.dilations
        rows = np.arange(g.out[0])[None, :, None, None] * sh + (best // kw) * rh
        cols = np.arange(g.out[1])[None, None, :, None] * sw + (best % kw) * rw
        batch = np.arange(n)[:, None, None, None]
        channel = np.arange(c)[None, None, None, :]
        np.add.at(grad, (batch, rows, cols, channel), dy)
        return _crop(grad, x.shape, g)

    return kernel


def _dilation2d_backprop_filter_kernel(attrs):
    def kernel(x, f, dy):
        sums, g, best = _dilation_windows(x, f, attrs)
        kh, kw, c = f.shape
        grad = np.zeros((kh * kw, c), dtype=dy.dtype)
        if sums.size:
            np.add.at(grad, (best, np.broadcast_to(np.arange(c), best.shape)), dy)
        return grad.reshape(f.shape)

    return kernel


def _infer_dilation2d(op):
    x, f = op.inputs[:2]
    check_same_dtype((x, f), ("input", "filter"), op.type)
    check_dtype(x.dtype, NUMERIC_TYPES, "input")
    _check_rank(x, 4, "input", op)
    _check_rank(f, 3, "filter", op)
    n, h, w, c = _dims_last(x.shape, 4, False)
    kh, kw, fc = f.shape.as_list() if f.shape.ndims == 3 else [None] * 3
    if c is not None and fc is not None and c != fc:
        raise ValueError(f"input has {c} channels but the filter {f.shape} has {fc}")
    oh, ow = _static_out((h, w), (kh, kw), op.attrs, op.type)
    return [(x.dtype, TensorShape([n, oh, ow, c if c is not None else fc]))]


define_op("Dilation2D", _infer_dilation2d, _dilation2d_kernel)
define_op(
    "Dilation2DBackpropInput",
    lambda op: [(op.inputs[2].dtype, op.inputs[0].shape)],
    _dilation2d_backprop_input_kernel,
)
define_op(
    "Dilation2DBackpropFilter",
    lambda op: [(op.inputs[2].dtype, op.inputs[1].shape)],
    _dilation2d_backprop_filter_kernel,
)


def _dilation_attrs(strides, rates, padding) -> dict:
    for what, values in (("strides", strides), ("rates", rates)):
        if values is None or isinstance(values, (int, np.integer)) or len(values) != 4:
            raise ValueError(f"{what} must be 4 ints [1, h, w, 1], got {values!r}")
    return {
        "strides": _spatial_list(strides, "strides", 2, False),
        "dilations": _spatial_list(rates, "rates", 2, False),
        "padding": _padding(padding),
    }


def dilation2d(
    input,  # noqa: A002
    filter=None,  # noqa: A002
    strides=None,
    rates=None,
    padding=None,
    name: Optional[str] = None,
    filters=None,
    dilations=None,
) -> Tensor:
    """The grayscale morphological dilation of the NHWC ``input`` by the ``[height, width,
    channels]`` ``filter``: each output is the largest ``input + filter`` over its window
    (``strides`` and ``rates`` are ``[1, h, w, 1]``; positions in the padding take no
    part)."""
    with argument_errors("Dilation2D", name):
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        if dilations is not None:
            rates = _one_of(rates, dilations, "rates", "dilations")
        attrs = _dilation_attrs(strides, rates, padding)
    graph = _graph_of((input, filter))
    with graph.as_default():
        x, f = convert_all((input, filter), ("input", "filter"))
        return apply_op("Dilation2D", (x, f), attrs, name or "Dilation2D").outputs[0]


def erosion2d(value, kernel, strides, rates, padding, name: Optional[str] = None) -> Tensor:
    """The grayscale morphological erosion of the NHWC ``value`` by ``kernel``: each output is
    the smallest ``value - kernel`` over its window (with the kernel reflected), computed as
    TensorFlow does, as ``-dilation2d(-value, reverse(kernel))``."""
    from . import math_ops as _m

    with argument_errors("Dilation2D", name or "erosion2d"):
        attrs = _dilation_attrs(strides, rates, padding)
    graph = _graph_of((value, kernel))
    with graph.as_default(), graph.name_scope(name or "erosion2d") as scope:
        value, kernel = convert_all((value, kernel), ("value", "kernel"))
        from .reverse_ops import reverse

        reflected = reverse(kernel, [0, 1])
        dilated = apply_op("Dilation2D", (_m.negative(value), reflected), attrs, scope)
        return _m.negative(dilated.outputs[0])


@RegisterGradient("Dilation2D")
def _dilation2d_grad(op, grad):
    x, f = op.inputs
    attrs = _copy(op, ("strides", "dilations", "padding"))
    return (
        _op("Dilation2DBackpropInput", (x, f, grad), attrs),
        _op("Dilation2DBackpropFilter", (x, f, grad), attrs),
    )


# -- fractional pooling ------------------------------------------------------------------------
def _pooling_sequence(size: int, out: int, generator, pseudo_random: bool) -> np.ndarray:
    """The ``out + 1`` boundaries of the pooling regions along a dimension of ``size``
    (TensorFlow's ``GeneratePoolingSequence``): random region sizes of ``size // out`` or one
    more, or with ``pseudo_random`` ``ceil(alpha * (i + u)) - ceil(alpha * u)`` for a random
    ``u``, where ``alpha = size / out``."""
    if pseudo_random:
        alpha = size / out
        k = size // out
        max_u = min((k + 2) / alpha - 1, (size + 1 - k) / alpha - (out - 1))
        u = generator.uniform(0.0, max_u)
        seq = [0] + [int(np.ceil(alpha * (i + u))) - int(np.ceil(alpha * u)) for i in range(1, out)]
        return np.array(seq + [size], dtype=np.int64)
    k, extra = divmod(size, out)
    diff = np.full(out, k, dtype=np.int64)
    diff[:extra] += 1
    generator.shuffle(diff)
    return np.concatenate([[0], np.cumsum(diff)]).astype(np.int64)


def _region(seq, i: int, size: int, overlapping: bool) -> slice:
    end = seq[i + 1] + 1 if overlapping else seq[i + 1]
    return slice(int(seq[i]), int(min(end, size)))


def _fractional_pool_kernel(attrs):
    ratio = attrs["pooling_ratio"]
    pseudo, overlapping = attrs["pseudo_random"], attrs["overlapping"]
    stream = (attrs["stream"], attrs["seed"], attrs["seed2"])
    is_max = attrs["pooling"] == "max"
    if not attrs["deterministic"] and (attrs["seed"] or attrs["seed2"]):
        raise InvalidArgumentError(
            None, None, "Both seed and seed2 should be 0 if deterministic is false."
        )

    def kernel(context, x):
        if x.ndim != 4:
            raise InvalidArgumentError(None, None, f"value must be 4-D, got {x.shape}")
        n, h, w, c = x.shape
        oh, ow = int(h / ratio[0]), int(w / ratio[1])
        if oh <= 0 or ow <= 0:
            raise InvalidArgumentError(
                None, None, f"pooling_ratio {list(ratio)} is too large for the input {x.shape}"
            )

        def draw():
            generator = context.random_generator(*stream)
            return (
                _pooling_sequence(h, oh, generator, pseudo),
                _pooling_sequence(w, ow, generator, pseudo),
            )

        if attrs["deterministic"]:
            # The same regions at every run: a generator of its own, keyed by the op's name
            # and seeds (TensorFlow fixes them when it makes the kernel).
            key = [zlib.crc32(attrs["stream"].encode()), attrs["seed"], attrs["seed2"]]
            generator = np.random.default_rng(key)
            rows = _pooling_sequence(h, oh, generator, pseudo)
            cols = _pooling_sequence(w, ow, generator, pseudo)
        else:
            rows, cols = draw()
        out = np.empty((n, oh, ow, c), dtype=x.dtype)
        for i in range(oh):
            r = _region(rows, i, h, overlapping)
            for j in range(ow):
                region = x[:, r, _region(cols, j, w, overlapping)]
                out[:, i, j] = region.max(axis=(1, 2)) if is_max else region.mean(axis=(1, 2))
        return out, rows, cols

    return kernel


def _infer_fractional_pool(op):
    (x,) = op.inputs
    allowed = NUMERIC_TYPES if op.attrs["pooling"] == "max" else FLOAT_TYPES
    check_dtype(x.dtype, allowed, "value")
    _check_rank(x, 4, "value", op)
    n, h, w, c = _dims_last(x.shape, 4, False)
    ratio = op.attrs["pooling_ratio"]
    oh = None if h is None else int(h / ratio[0])
    ow = None if w is None else int(w / ratio[1])
    return [
        (x.dtype, TensorShape([n, oh, ow, c])),
        (_dtypes.int64, TensorShape([None if oh is None else oh + 1])),
        (_dtypes.int64, TensorShape([None if ow is None else ow + 1])),
    ]


def _fractional_max_pool_grad_kernel(attrs):
    overlapping = attrs["overlapping"]

    def kernel(x, y, dy, rows, cols):
        n, h, w, c = x.shape
        grad = np.zeros(x.shape, dtype=dy.dtype)
        batch, channel = np.arange(n)[:, None], np.arange(c)[None, :]
        for i in range(len(rows) - 1):
            r = _region(rows, i, h, overlapping)
            for j in range(len(cols) - 1):
                q = _region(cols, j, w, overlapping)
                region = x[:, r, q].reshape(n, -1, c)
                first = np.argmax(region == y[:, i, j][:, None, :], axis=1)  # [n, c]
                width = q.stop - q.start
                grad[batch, r.start + first // width, q.start + first % width, channel] += dy[
                    :, i, j
                ]
        return grad

    return kernel


def _fractional_avg_pool_grad_kernel(attrs):
    overlapping = attrs["overlapping"]

    def kernel(x_shape, dy, rows, cols):
        x_shape = tuple(int(v) for v in np.asarray(x_shape))
        _, h, w, _ = x_shape
        grad = np.zeros(x_shape, dtype=dy.dtype)
        for i in range(len(rows) - 1):
            r = _region(rows, i, h, overlapping)
            for j in range(len(cols) - 1):
                q = _region(cols, j, w, overlapping)
                count = (r.stop - r.start) * (q.stop - q.start)
                grad[:, r, q] += (dy[:, i, j] / count)[:, None, None, :]
        return grad

    return kernel


for _kind in ("Max", "Avg"):
    define_op(
        f"Fractional{_kind}Pool",
        _infer_fractional_pool,
        _fractional_pool_kernel,
        stateful=True,
        wants_context=True,
        extra={"random_stream": True},
    )
define_op(
    "FractionalMaxPoolGrad",
    lambda op: [(op.inputs[2].dtype, op.inputs[0].shape)],
    _fractional_max_pool_grad_kernel,
)
define_op(
    "FractionalAvgPoolGrad",
    _infer_like_sizes(0, 1),
    _fractional_avg_pool_grad_kernel,
)


def _fractional_pool(kind, value, pooling_ratio, pseudo_random, overlapping, deterministic,
                     seed, seed2, name):  # fmt: skip
    op_type = f"Fractional{kind.capitalize()}Pool"
    with argument_errors(op_type, name):
        ratio = [float(r) for r in pooling_ratio]
        if len(ratio) != 4 or ratio[0] != 1.0 or ratio[3] != 1.0:
            raise ValueError(
                f"pooling_ratio must be [1.0, rows, cols, 1.0] (no pooling over the batch or "
                f"channels), got {pooling_ratio}"
            )
        if min(ratio) < 1.0:
            raise ValueError(f"pooling_ratio must be at least 1, got {pooling_ratio}")
        attrs = {
            "pooling": kind,
            "pooling_ratio": (ratio[1], ratio[2]),
            "pseudo_random": bool(pseudo_random),
            "overlapping": bool(overlapping),
            "deterministic": bool(deterministic),
            "seed": int(seed),
            "seed2": int(seed2),
        }
    graph = _graph_of((value,))
    with graph.as_default():
        x = convert_to_tensor(value, name="value")
        return tuple(apply_op(op_type, (x,), attrs, name or op_type).outputs)


def fractional_max_pool(
    value,
    pooling_ratio,
    pseudo_random: bool = False,
    overlapping: bool = False,
    deterministic: bool = False,
    seed: int = 0,
    seed2: int = 0,
    name: Optional[str] = None,
):
    """Max pooling of the NHWC ``value`` over regions of random, non-integer average size
    ``pooling_ratio = [1.0, rows, cols, 1.0]`` (Graham's fractional max pooling): the output
    has ``floor(size / ratio)`` rows and columns, and the region boundaries are drawn each run
    (random sizes of ``size // out`` or one more, or with ``pseudo_random`` TensorFlow's
    pseudo-random sequence), or fixed by the op's name and seeds with ``deterministic``;
    ``overlapping`` regions share their boundary.  Returns ``(output, row_pooling_sequence,
    col_pooling_sequence)``; the draws are not TensorFlow's, the rules are."""
    return _fractional_pool(
        "max", value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name
    )


def fractional_avg_pool(
    value,
    pooling_ratio,
    pseudo_random: bool = False,
    overlapping: bool = False,
    deterministic: bool = False,
    seed: int = 0,
    seed2: int = 0,
    name: Optional[str] = None,
):
    """`fractional_max_pool` with the mean of each region instead of its maximum."""
    return _fractional_pool(
        "avg", value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name
    )


@RegisterGradient("FractionalMaxPool")
def _fractional_max_pool_grad(op, grad, _rows, _cols):
    x, y = op.inputs[0], op.outputs[0]
    return _op(
        "FractionalMaxPoolGrad",
        (x, y, grad, op.outputs[1], op.outputs[2]),
        {"overlapping": op.attrs["overlapping"]},
    )


@RegisterGradient("FractionalAvgPool")
def _fractional_avg_pool_grad(op, grad, _rows, _cols):
    return _op(
        "FractionalAvgPoolGrad",
        (_a.shape(op.inputs[0]), grad, op.outputs[1], op.outputs[2]),
        {"overlapping": op.attrs["overlapping"]},
    )


for _type in (
    "Conv",
    "Dilation2DBackpropInput",
    "Dilation2DBackpropFilter",
    "FractionalMaxPoolGrad",
    "FractionalAvgPoolGrad",
):
    RegisterGradient(_type)(_no_gradient)


# -- an op run on a space-to-batch rearranged input ------------------------------------------------
def _adjust_to_dims(values, fill, spatial_dims: list):
    """``values`` (one row per spatial dimension, an array or a tensor of pairs) with rows of
    ``fill`` for the dimensions between ``1`` and the last of ``spatial_dims`` that are not
    among them."""
    if not isinstance(values, Tensor):
        values = np.asarray(values)
        given = dict(zip(spatial_dims, values))
        filler = np.full(values.shape[1:], fill, values.dtype)
        return np.stack([given.get(d, filler) for d in range(1, spatial_dims[-1] + 1)])
    index = {d: i for i, d in enumerate(spatial_dims)}
    filler = np.full([1, 2], fill, values.dtype.as_numpy_dtype)
    rows = [
        values[index[d] : index[d] + 1] if d in index else filler
        for d in range(1, spatial_dims[-1] + 1)
    ]
    return _a.concat(rows, 0)


def with_space_to_batch(
    input,  # noqa: A002
    dilation_rate,
    padding,
    op,
    filter_shape=None,
    spatial_dims=None,
    data_format=None,
):
    """``op(input, num_spatial_dims, padding)`` computed with holes of ``dilation_rate``
    between the taps of its window, as TensorFlow does: the input is rearranged with
    ``space_to_batch_nd`` (padded as ``padding`` says, SAME needing ``filter_shape``), ``op``
    runs on it with VALID padding, and ``batch_to_space_nd`` undoes the rearrangement.  With
    a rate of 1 everywhere it is ``op(input, num_spatial_dims, padding)`` itself.
    ``spatial_dims`` (increasing, from 1) are the dimensions ``dilation_rate`` applies to: by
    default those after the batch (and the channels, for a ``data_format`` starting
    ``"NC"``).  ``dilation_rate`` and ``filter_shape`` must be known when the graph is built.
    The rearranging ops come from ``ops/space_batch_ops.py``."""
    with argument_errors("with_space_to_batch", None):
        x = convert_to_tensor(input, name="input")
        rate = np.asarray(dilation_rate, dtype=np.int64).reshape(-1)
        n = len(rate)
        first = data_format is not None and data_format.startswith("NC")
        start = 2 if first else 1
        dims = list(range(start, n + start)) if spatial_dims is None else list(spatial_dims)
        if sorted({int(d) for d in dims}) != dims or any(d < 1 for d in dims):
            raise ValueError(
                "`spatial_dims` must be a monotonically increasing sequence of positive "
                f"integers. Received: spatial_dims={dims}"
            )
        if len(dims) != n:
            raise ValueError(f"spatial_dims {dims} do not match dilation_rate {list(rate)}")
        expected_rank = dims[-1] if first else dims[-1] + 1
        if x.shape.ndims is not None and x.shape.ndims < expected_rank:
            raise ValueError(
                f"`input.shape.rank` must be at least {expected_rank}. Received: "
                f"input.shape={x.shape} with rank {x.shape.ndims}"
            )
        if (rate < 1).any():
            raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rate}")
        if (rate == 1).all():
            return op(x, n, padding)
        if padding == "SAME":
            if filter_shape is None:
                raise ValueError(
                    "`filter_shape` must be specified for `padding='SAME'`. Received: "
                    f"filter_shape={filter_shape} and padding={padding}"
                )
            spatial = np.asarray(filter_shape, dtype=np.int64).reshape(-1)[:n]
            extra = (spatial - 1) * rate
            base_paddings = np.stack([extra // 2, extra - extra // 2], axis=1)
        elif padding == "VALID":
            base_paddings = np.zeros([n, 2], np.int64)
        else:
            raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: {padding}")
    from .space_batch_ops import (
        batch_to_space_nd,
        required_space_to_batch_paddings,
        space_to_batch_nd,
    )

    known = x.shape.as_list() if x.shape.ndims is not None else None
    if known is not None and None not in [known[d] for d in dims]:
        input_spatial_shape = np.array([known[d] for d in dims], dtype=np.int64)
    else:
        shape = _a.shape(x, out_type=_dtypes.int64)
        input_spatial_shape = _a.stack([shape[d] for d in dims])
    paddings, crops = required_space_to_batch_paddings(
        input_spatial_shape, rate, base_paddings=base_paddings
    )
    from ..framework.graph import numpy_value_or_none

    known_paddings, known_crops = numpy_value_or_none(paddings), numpy_value_or_none(crops)
    block = _adjust_to_dims(rate.reshape(-1, 1), 1, dims).reshape(-1)
    paddings = _adjust_to_dims(paddings if known_paddings is None else known_paddings, 0, dims)
    crops = _adjust_to_dims(crops if known_crops is None else known_crops, 0, dims)
    converted = space_to_batch_nd(x, block, paddings)
    result = op(converted, n, "VALID")
    return batch_to_space_nd(result, block, crops)

"""ONNX's neural-network ops: convolutions, pooling, normalizations, activations and softmax.

Role: the converters of the network family (see `converters` for the contract).  ONNX lays
images out channels-first (``[N, C, *spatial]``) with explicit begin and end pads; dataflow's
generic convolution and pooling take channels-first data, and explicit pads are applied with
`pad` before a VALID window (``-inf`` for max pooling, a count of the inside elements for
average pooling), so every ONNX padding (``pads``, ``auto_pad``, ``ceil_mode``) has one path.

Invariants: weights known when the model is imported are rearranged once with numpy (a
filter's ``[out, in, *k]`` to dataflow's ``[*k, in, out]``, a batch norm folded to one scale and
one offset), never per run; the spatial geometry (pads, ceil mode) is computed from static
shapes, and an op that needs a shape not known at import says so.
"""

from __future__ import annotations

import math

import numpy as np

from ...framework import dtypes
from ...ops import (
    array_ops,
    conv_nd_ops,
    extra_math_ops,
    extra_nn_ops,
    gather_ops,
    math_ops,
    nn_ops,
    norm_ops,
    reduction_ops,
    selection_ops,
)
from ...ops.constant_op import constant
from .converters import NodeContext, converts, normalize_axis, rank_of

# -- geometry --------------------------------------------------------------------------------------


def _spatial_pads(ctx: NodeContext, spatial: list, kernel: list, strides: list, dilations: list):
    """``(begin pads, end pads, extra end pads of ceil mode)`` per spatial dim, from ONNX's
    ``auto_pad``/``pads``/``ceil_mode``."""
    count = len(kernel)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if any(s is None for s in spatial):
            raise ctx.error(f"auto_pad {auto_pad} needs the spatial shape known at import")
        begin, end = [], []
        for size, extent, stride in zip(spatial, extents, strides):
            out = -(-size // stride)
            total = max((out - 1) * stride + extent - size, 0)
            small, large = total // 2, total - total // 2
            begin.append(small if auto_pad == "SAME_UPPER" else large)
            end.append(large if auto_pad == "SAME_UPPER" else small)
    elif auto_pad == "VALID":
        begin, end = [0] * count, [0] * count
    elif auto_pad == "NOTSET":
        pads = ctx.attr("pads", [0] * (2 * count))
        if len(pads) != 2 * count:
            raise ctx.error(f"pads has {len(pads)} values, {2 * count} expected")
        begin, end = list(pads[:count]), list(pads[count:])
    else:
        raise ctx.error(
            f"auto_pad {auto_pad!r} is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"
        )
    extra = [0] * count
    if ctx.attr("ceil_mode", 0):
        for i, (size, extent, stride) in enumerate(zip(spatial, extents, strides)):
            if size is None:
                raise ctx.error("ceil_mode needs the spatial shape known at import")
            padded = size + begin[i] + end[i]
            out = math.ceil((padded - extent) / stride) + 1
            if (out - 1) * stride >= size + begin[i]:
                out -= 1  # the last window must start inside the input or its begin pad
            extra[i] = max((out - 1) * stride + extent - padded, 0)
    return begin, end, extra


def _window_attrs(ctx: NodeContext, x, kernel: list):
    rank = rank_of(ctx, x)
    count = rank - 2
    if len(kernel) != count:
        raise ctx.error(f"kernel_shape {kernel} does not fit an input of rank {rank}")
    strides = ctx.attr("strides", [1] * count)
    dilations = ctx.attr("dilations", [1] * count)
    spatial = x.shape.as_list()[2:]
    begin, end, extra = _spatial_pads(ctx, spatial, kernel, strides, dilations)
    return strides, dilations, begin, end, extra


def _pad_spatial(x, begin, end, value=0):
    if not any(begin) and not any(end):
        return x
    paddings = [[0, 0], [0, 0]] + [[b, e] for b, e in zip(begin, end)]
    return gather_ops.pad(x, paddings, constant_values=value)


def _channels_first_format(spatial_count: int) -> str:
    return {1: "NCW", 2: "NCHW", 3: "NCDHW"}[spatial_count]


def _static_or_transpose(ctx: NodeContext, index: int, perm: list):
    """Input ``index`` transposed by ``perm``: with numpy at import when it is a constant."""
    value = ctx.static(index)
    if value is not None:
        return constant(np.ascontiguousarray(np.transpose(value, perm)))
    return array_ops.transpose(ctx.required_input(index), perm)


def _channel_vector(ctx: NodeContext, tensor, rank: int):
    """A ``[C]`` vector shaped ``[C, 1, ...]`` to broadcast over ``[N, C, *spatial]``: with
    numpy at import when its value is known then (a bias), else by a ``Reshape``."""
    shape = [-1] + [1] * (rank - 2)
    value = ctx.builder.static_value(tensor)
    if value is not None:
        return constant(np.ascontiguousarray(value.reshape(shape)))
    return array_ops.reshape(tensor, shape)


# -- convolution -----------------------------------------------------------------------------------


@converts("Conv")
def _conv(ctx: NodeContext):
    x, w = ctx.required_input(0), ctx.required_input(1)
    rank = rank_of(ctx, x)
    filters = _static_or_transpose(ctx, 1, list(range(2, rank)) + [1, 0])
    return convolve(ctx, x, w, filters, ctx.input(2))


def convolve(ctx: NodeContext, x, w, filters, bias=None):
    """ONNX's convolution of ``x`` by the filter ``w`` (``[out, in / group, *k]``), given in
    dataflow's layout as ``filters`` (``[*k, in / group, out]``), with the node's pads,
    strides, dilations and group; plus ``bias`` (``[out]``) when given."""
    rank = rank_of(ctx, x)
    if rank < 3 or rank > 5:
        raise ctx.error(f"convolutions of rank {rank} are not supported (3, 4 or 5)")
    kernel = ctx.attr("kernel_shape", None) or w.shape.as_list()[2:]
    if any(k is None for k in kernel):
        raise ctx.error("the kernel's shape must be known at import")
    strides, dilations, begin, end, _ = _window_attrs(ctx, x, kernel)
    explicit = [0, 0, 0, 0] + [p for pair in zip(begin, end) for p in pair]
    y = conv_nd_ops.conv(
        x,
        filters,
        strides=[1, 1] + list(strides),
        padding="EXPLICIT" if any(explicit) else "VALID",
        explicit_paddings=explicit if any(explicit) else [],
        data_format="CHANNELS_FIRST",
        dilations=[1, 1] + list(dilations),
        groups=ctx.attr("group", 1),
    )
    if bias is not None:
        y = math_ops.add(y, _channel_vector(ctx, bias, rank))
    return y


@converts("ConvTranspose")
def _conv_transpose(ctx: NodeContext):
    x, w = ctx.required_input(0), ctx.required_input(1)
    rank = rank_of(ctx, x)
    spatial = rank - 2
    if spatial not in (1, 2, 3):
        raise ctx.error(f"transposed convolutions of rank {rank} are not supported")
    kernel = ctx.attr("kernel_shape", None) or w.shape.as_list()[2:]
    in_sizes = x.shape.as_list()[2:]
    if any(k is None for k in kernel) or any(s is None for s in in_sizes):
        raise ctx.error("the input's spatial shape and the kernel's must be known at import")
    strides = ctx.attr("strides", [1] * spatial)
    dilations = ctx.attr("dilations", [1] * spatial)
    output_padding = ctx.attr("output_padding", [0] * spatial)
    groups = ctx.attr("group", 1)
    full = [
        s * (n - 1) + (k - 1) * d + 1 + op
        for s, n, k, d, op in zip(strides, in_sizes, kernel, dilations, output_padding)
    ]
    output_shape = ctx.attr("output_shape", None)
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if output_shape is not None or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        wanted = (
            output_shape[-spatial:] if output_shape else [n * s for n, s in zip(in_sizes, strides)]
        )
        totals = [f - o for f, o in zip(full, wanted)]
        # An output larger than the full result grows at the end (zeros, then the bias).
        grown = [max(-t, 0) for t in totals]
        output_padding = [p + g for p, g in zip(output_padding, grown)]
        full = [f + g for f, g in zip(full, grown)]
        totals = [max(t, 0) for t in totals]
        if auto_pad == "SAME_UPPER" or (auto_pad == "NOTSET" and output_shape is not None):
            begin = [t // 2 for t in totals]
        else:
            begin = [t - t // 2 for t in totals]
        end = [t - b for t, b in zip(totals, begin)]
    elif auto_pad == "VALID":
        begin, end = [0] * spatial, [0] * spatial
    else:
        pads = ctx.attr("pads", [0] * (2 * spatial))
        begin, end = list(pads[:spatial]), list(pads[spatial:])
    # dataflow's transposed convolution is channels-last, its filter [*k, out, in].
    to_last = [0] + list(range(2, rank)) + [1]
    to_first = [0, rank - 1] + list(range(1, rank - 1))
    filters = _static_or_transpose(ctx, 1, list(range(2, rank)) + [1, 0])
    x_last = array_ops.transpose(x, to_last)
    valid = [
        s * (n - 1) + (k - 1) * d + 1 for s, n, k, d in zip(strides, in_sizes, kernel, dilations)
    ]
    parts = []
    x_groups = array_ops.split(x_last, groups, axis=-1) if groups > 1 else [x_last]
    f_groups = array_ops.split(filters, groups, axis=-1) if groups > 1 else [filters]
    batch = array_ops.shape(x)[:1]
    for xg, fg in zip(x_groups, f_groups):
        out_channels = fg.shape.as_list()[-2]
        shape = array_ops.concat([batch, constant(valid + [out_channels], dtype=batch.dtype)], 0)
        parts.append(
            conv_nd_ops.conv_transpose(
                xg, fg, shape, strides=list(strides), padding="VALID", dilations=list(dilations)
            )
        )
    y = parts[0] if len(parts) == 1 else array_ops.concat(parts, axis=-1)
    y = array_ops.transpose(y, to_first)
    # ONNX's output: the full result, output_padding more at the end, minus the pads.
    grow = [f - v for f, v in zip(full, valid)]
    if any(grow):
        y = _pad_spatial(y, [0] * spatial, grow)
    begins = [0, 0] + begin
    sizes = [-1, -1] + [f - b - e for f, b, e in zip(full, begin, end)]
    if any(begin) or any(end):
        y = array_ops.slice(y, begins, sizes)
    bias = ctx.input(2)
    if bias is not None:
        y = math_ops.add(y, _channel_vector(ctx, bias, rank))
    return y


# -- pooling ---------------------------------------------------------------------------------------


def _pool(ctx: NodeContext, x, pooling_type: str, kernel, strides, dilations, padding="VALID"):
    """A max or average pooling of the channels-first ``x`` (VALID, or TensorFlow's SAME).
    dataflow's pooling takes dilations only with unit strides: dilated windows with strides
    pool at every place, then keep every stride-th."""
    dilated = any(d != 1 for d in dilations)
    strided = any(s != 1 for s in strides)
    y = conv_nd_ops.pool(
        x,
        window_shape=list(kernel),
        pooling_type=pooling_type,
        padding=padding,
        strides=[1] * len(kernel) if dilated else list(strides),
        dilations=list(dilations) if dilated else None,
        data_format=_channels_first_format(len(kernel)),
    )
    if dilated and strided:
        y = y[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)]
    return y


def _pads_are_same(x, kernel, strides, dilations, begin, ends) -> bool:
    """Whether ONNX's pads are those of TensorFlow's SAME padding (the odd one at the end), so
    that the pooling op pads by itself: without a pad op, and, for averages, counting only the
    input's elements as ONNX's count_include_pad=0 does."""
    spatial = x.shape.as_list()[2:]
    if any(d is None for d in spatial) or any(d != 1 for d in dilations):
        return False
    for size, k, s, b, e in zip(spatial, kernel, strides, begin, ends):
        total = max((-(-size // s) - 1) * s + k - size, 0)
        if (b, e) != (total // 2, total - total // 2):
            return False
    return True


def _window_means(mask: np.ndarray, kernel, strides, dilations) -> np.ndarray:
    """The mean of ``mask`` over each VALID pooling window, computed with numpy at import."""
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    windows = np.lib.stride_tricks.sliding_window_view(mask, extents)
    count = len(kernel)
    windows = windows[tuple(slice(None, None, s) for s in strides)]
    windows = windows[(Ellipsis,) + tuple(slice(None, None, d) for d in dilations)]
    return windows.mean(axis=tuple(range(count, 2 * count)))


@converts("MaxPool")
def _max_pool(ctx: NodeContext):
    x = ctx.required_input(0)
    if ctx.num_outputs > 1 and ctx.node.output[1]:
        raise ctx.error("the Indices output of MaxPool is not supported")
    if ctx.attr("storage_order", 0):
        raise ctx.error("storage_order 1 is not supported")
    kernel = ctx.attr("kernel_shape")
    strides, dilations, begin, end, extra = _window_attrs(ctx, x, kernel)
    if x.dtype.is_floating:
        lowest = -np.inf
    else:
        lowest = np.iinfo(x.dtype.as_numpy_dtype).min
    ends = [e + c for e, c in zip(end, extra)]
    if any(begin) and _pads_are_same(x, kernel, strides, dilations, begin, ends):
        return [_pool(ctx, x, "MAX", kernel, strides, dilations, padding="SAME")]
    padded = _pad_spatial(x, begin, ends, lowest)
    return [_pool(ctx, padded, "MAX", kernel, strides, dilations)]


@converts("AveragePool")
def _average_pool(ctx: NodeContext):
    x = ctx.required_input(0)
    kernel = ctx.attr("kernel_shape")
    strides, dilations, begin, end, extra = _window_attrs(ctx, x, kernel)
    ends = [e + c for e, c in zip(end, extra)]
    if not any(begin) and not any(ends):
        return _pool(ctx, x, "AVG", kernel, strides, dilations)
    include = ctx.attr("count_include_pad", 0)
    if not include and _pads_are_same(x, kernel, strides, dilations, begin, ends):
        return _pool(ctx, x, "AVG", kernel, strides, dilations, padding="SAME")
    spatial = x.shape.as_list()[2:]
    if any(s is None for s in spatial):
        raise ctx.error("average pooling with pads needs the spatial shape known at import")
    # The mean of the elements a window covers: the sum over the padded input divided by the
    # count of the counted places (the input, and the pads when count_include_pad).
    mask = np.ones(spatial, dtype=np.float64)
    mask = np.pad(
        mask,
        [(b, e) for b, e in zip(begin, end)],
        constant_values=1 if include else 0,
    )
    mask = np.pad(mask, [(0, c) for c in extra])
    sums = _pool(ctx, _pad_spatial(x, begin, ends), "AVG", kernel, strides, dilations)
    counts = _window_means(mask, kernel, strides, dilations).astype(x.dtype.as_numpy_dtype)
    return math_ops.truediv(sums, constant(counts[None, None]))


@converts("LpPool")
def _lp_pool(ctx: NodeContext):
    # (sum over each window of |x|^p)^(1/p): the sum is the mean of the zero-padded powers
    # times the window's size.
    x = ctx.required_input(0)
    kernel = ctx.attr("kernel_shape")
    strides, dilations, begin, end, extra = _window_attrs(ctx, x, kernel)
    p = float(ctx.attr("p", 2))
    powers = math_ops.pow(math_ops.abs(x), constant(p, dtype=x.dtype))
    padded = _pad_spatial(powers, begin, [e + c for e, c in zip(end, extra)])
    means = _pool(ctx, padded, "AVG", kernel, strides, dilations)
    sums = math_ops.multiply(means, constant(float(np.prod(kernel)), dtype=x.dtype))
    return math_ops.pow(sums, constant(1.0 / p, dtype=x.dtype))


@converts("GlobalLpPool")
def _global_lp_pool(ctx: NodeContext):
    x = ctx.required_input(0)
    p = float(ctx.attr("p", 2))
    powers = math_ops.pow(math_ops.abs(x), constant(p, dtype=x.dtype))
    sums = reduction_ops.reduce_sum(powers, axis=list(range(2, rank_of(ctx, x))), keepdims=True)
    return math_ops.pow(sums, constant(1.0 / p, dtype=x.dtype))


@converts("LpNormalization")
def _lp_normalization(ctx: NodeContext):
    x = ctx.required_input(0)
    axis = ctx.attr("axis", -1)
    p = ctx.attr("p", 2)
    if p == 1:
        norm = reduction_ops.reduce_sum(math_ops.abs(x), axis=[axis], keepdims=True)
    elif p == 2:
        norm = math_ops.sqrt(
            reduction_ops.reduce_sum(math_ops.multiply(x, x), axis=[axis], keepdims=True)
        )
    else:
        raise ctx.error(f"p must be 1 or 2, got {p}")
    # A zero norm gives zeros (the elements are all zero), not 0/0.
    zero = array_ops.zeros_like(norm)
    safe = selection_ops.where_v2(math_ops.equal(norm, zero), array_ops.ones_like(norm), norm)
    return math_ops.truediv(x, safe)


def _global_pool(reduce):
    def convert(ctx: NodeContext):
        x = ctx.required_input(0)
        rank = rank_of(ctx, x)
        return reduce(x, axis=list(range(2, rank)), keepdims=True)

    return convert


converts("GlobalAveragePool")(_global_pool(reduction_ops.reduce_mean))
converts("GlobalMaxPool")(_global_pool(reduction_ops.reduce_max))


# -- normalization ---------------------------------------------------------------------------------


@converts("BatchNormalization")
def _batch_normalization(ctx: NodeContext):
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    if ctx.attr("training_mode", 0):
        return _batch_normalization_training(ctx, x, rank)
    epsilon = ctx.attr("epsilon", 1e-5)
    values = [ctx.static(i) for i in range(1, 5)]
    if all(v is not None for v in values):
        scale, offset, mean, variance = (v.astype(np.float64) for v in values)
        multiplier = scale / np.sqrt(variance + epsilon)
        shift = offset - mean * multiplier
        np_dtype = x.dtype.as_numpy_dtype
        shape = [-1] + [1] * (rank - 2)
        multiplier = constant(multiplier.astype(np_dtype).reshape(shape))
        shift = constant(shift.astype(np_dtype).reshape(shape))
        return math_ops.add(math_ops.multiply(x, multiplier), shift)
    scale, offset, mean, variance = (
        _channel_vector(ctx, ctx.required_input(i), rank) for i in range(1, 5)
    )
    inverse = math_ops.rsqrt(math_ops.add(variance, constant(epsilon, dtype=variance.dtype)))
    return math_ops.add(
        math_ops.multiply(math_ops.subtract(x, mean), math_ops.multiply(inverse, scale)), offset
    )


def _batch_normalization_training(ctx: NodeContext, x, rank: int):
    """Training mode: normalized with the batch's own mean and (population) variance, and the
    running statistics moved towards them by ``1 - momentum``."""
    axes = [0] + list(range(2, rank))
    batch_mean, batch_variance = nn_ops.moments(x, axes)
    momentum = constant(ctx.attr("momentum", 0.9), dtype=x.dtype)
    rest = constant(1 - ctx.attr("momentum", 0.9), dtype=x.dtype)
    epsilon = constant(ctx.attr("epsilon", 1e-5), dtype=x.dtype)
    scale, offset, running_mean, running_variance = (ctx.required_input(i) for i in range(1, 5))
    inverse = math_ops.rsqrt(math_ops.add(batch_variance, epsilon))
    y = math_ops.add(
        math_ops.multiply(
            math_ops.subtract(x, _channel_vector(ctx, batch_mean, rank)),
            _channel_vector(ctx, math_ops.multiply(inverse, scale), rank),
        ),
        _channel_vector(ctx, offset, rank),
    )
    new_mean = math_ops.add(
        math_ops.multiply(running_mean, momentum), math_ops.multiply(batch_mean, rest)
    )
    new_variance = math_ops.add(
        math_ops.multiply(running_variance, momentum), math_ops.multiply(batch_variance, rest)
    )
    return [y, new_mean, new_variance]


@converts("InstanceNormalization")
def _instance_normalization(ctx: NodeContext):
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    axes = list(range(2, rank))
    mean, variance = nn_ops.moments(x, axes, keepdims=True)
    epsilon = constant(ctx.attr("epsilon", 1e-5), dtype=x.dtype)
    normalized = math_ops.multiply(
        math_ops.subtract(x, mean), math_ops.rsqrt(math_ops.add(variance, epsilon))
    )
    scale = _channel_vector(ctx, ctx.required_input(1), rank)
    offset = _channel_vector(ctx, ctx.required_input(2), rank)
    return math_ops.add(math_ops.multiply(normalized, scale), offset)


@converts("LayerNormalization")
def _layer_normalization(ctx: NodeContext):
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, ctx.attr("axis", -1), rank)
    axes = list(range(axis, rank))
    compute = x if x.dtype != dtypes.float16 else selection_ops.cast(x, dtypes.float32)
    mean, variance = nn_ops.moments(compute, axes, keepdims=True)
    epsilon = constant(ctx.attr("epsilon", 1e-5), dtype=compute.dtype)
    inverse = math_ops.rsqrt(math_ops.add(variance, epsilon))
    y = math_ops.multiply(math_ops.subtract(compute, mean), inverse)
    if compute.dtype != x.dtype:
        y = selection_ops.cast(y, x.dtype)
    y = math_ops.multiply(y, ctx.required_input(1))
    if ctx.input(2) is not None:
        y = math_ops.add(y, ctx.input(2))
    stash = compute.dtype
    return [y, selection_ops.cast(mean, stash), selection_ops.cast(inverse, stash)]


@converts("LRN")
def _lrn(ctx: NodeContext):
    x = ctx.required_input(0)
    size = ctx.attr("size")
    alpha, beta, bias = ctx.attr("alpha", 1e-4), ctx.attr("beta", 0.75), ctx.attr("bias", 1.0)
    rank = rank_of(ctx, x)
    if size % 2 == 1 and rank == 4:
        # dataflow's lrn sums depth_radius channels on each side, over the last axis.
        to_last = array_ops.transpose(x, [0, 2, 3, 1])
        y = norm_ops.lrn(
            to_last, depth_radius=(size - 1) // 2, bias=bias, alpha=alpha / size, beta=beta
        )
        return array_ops.transpose(y, [0, 3, 1, 2])
    # Any size and rank: the window sums as differences of an exclusive cumulative sum, in
    # float64 so that the differences keep float32's precision.
    wide = selection_ops.cast(x, dtypes.float64)
    squares = math_ops.multiply(wide, wide)
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    paddings = [[0, 0], [before, after + 1]] + [[0, 0]] * (rank - 2)
    running = reduction_ops.cumsum(gather_ops.pad(squares, paddings), axis=1, exclusive=True)
    channels = array_ops.shape(x)[1]
    sums = math_ops.subtract(
        array_ops.gather(running, math_ops.add(array_ops.range(channels), size), axis=1),
        array_ops.gather(running, array_ops.range(channels), axis=1),
    )
    scale = math_ops.pow(
        math_ops.add(
            constant(bias, dtype=dtypes.float64),
            math_ops.multiply(constant(alpha / size, dtype=dtypes.float64), sums),
        ),
        constant(beta, dtype=dtypes.float64),
    )
    return selection_ops.cast(math_ops.truediv(wide, scale), x.dtype)


# -- softmax and activations -----------------------------------------------------------------------


@converts("Softmax", "LogSoftmax")
def _softmax(ctx: NodeContext):
    x = ctx.required_input(0)
    function = nn_ops.softmax if ctx.op_type == "Softmax" else nn_ops.log_softmax
    if ctx.opset >= 13:
        return function(x, axis=ctx.attr("axis", -1))
    # Before opset 13: over all axes from ``axis`` on (default 1), the input seen as 2-d.
    flat, restore = _as_matrix(ctx, x, ctx.attr("axis", 1))
    return restore(function(flat, axis=-1))


def _as_matrix(ctx: NodeContext, x, axis: int):
    """``x`` reshaped to 2-d at ``axis``, and the function that gives a result its shape back."""
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, axis, rank) if rank else 0
    if axis == rank - 1:
        return x, lambda y: y
    shape = array_ops.shape(x)
    dims = x.shape.as_list()
    inner = dims[axis:]
    if None in inner:
        raise ctx.error("the axes from axis on must be known at import (opset before 13)")
    flat = array_ops.reshape(x, [-1, int(np.prod(inner, dtype=np.int64))])
    return flat, lambda y: array_ops.reshape(y, shape)


@converts("Hardmax")
def _hardmax(ctx: NodeContext):
    x = ctx.required_input(0)
    restore = None
    if ctx.opset < 13:
        x, restore = _as_matrix(ctx, x, ctx.attr("axis", 1))
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, ctx.attr("axis", -1), rank) if restore is None else rank - 1
    index = reduction_ops.argmax(x, axis=axis, output_type=dtypes.int64)  # the first maximum
    depth = array_ops.shape(x)[axis]
    y = array_ops.one_hot(index, depth, axis=axis, dtype=x.dtype)
    return y if restore is None else restore(y)


def _scalar(ctx: NodeContext, value: float, like):
    return constant(value, dtype=like.dtype)


@converts("LeakyRelu")
def _leaky_relu(ctx: NodeContext):
    return extra_nn_ops.leaky_relu(ctx.required_input(0), alpha=ctx.attr("alpha", 0.01))


@converts("PRelu")
def _prelu(ctx: NodeContext):
    x, slope = ctx.required_input(0), ctx.required_input(1)
    negative = math_ops.multiply(x, slope)
    return selection_ops.where_v2(math_ops.less(x, _scalar(ctx, 0, x)), negative, x)


@converts("Elu", "Celu")
def _elu(ctx: NodeContext):
    x = ctx.required_input(0)
    alpha = ctx.attr("alpha", 1.0)
    if ctx.op_type == "Elu" and alpha == 1.0:
        return nn_ops.elu(x)
    # alpha * (exp(x / alpha) - 1) below zero for Celu, alpha * (exp(x) - 1) for Elu.
    inside = math_ops.truediv(x, _scalar(ctx, alpha, x)) if ctx.op_type == "Celu" else x
    negative = math_ops.multiply(
        _scalar(ctx, alpha, x), math_ops.subtract(math_ops.exp(inside), _scalar(ctx, 1, x))
    )
    return selection_ops.where_v2(math_ops.less(x, _scalar(ctx, 0, x)), negative, x)


@converts("Selu")
def _selu(ctx: NodeContext):
    x = ctx.required_input(0)
    alpha = ctx.attr("alpha", 1.67326319217681884765625)
    gamma = ctx.attr("gamma", 1.05070102214813232421875)
    negative = math_ops.multiply(
        _scalar(ctx, alpha, x), math_ops.subtract(math_ops.exp(x), _scalar(ctx, 1, x))
    )
    inside = selection_ops.where_v2(math_ops.less_equal(x, _scalar(ctx, 0, x)), negative, x)
    return math_ops.multiply(_scalar(ctx, gamma, x), inside)


def _hard_sigmoid(ctx: NodeContext, x, alpha: float, beta: float):
    linear = math_ops.add(math_ops.multiply(x, _scalar(ctx, alpha, x)), _scalar(ctx, beta, x))
    return math_ops.minimum(math_ops.maximum(linear, _scalar(ctx, 0, x)), _scalar(ctx, 1, x))


@converts("HardSigmoid")
def _hard_sigmoid_op(ctx: NodeContext):
    return _hard_sigmoid(ctx, ctx.required_input(0), ctx.attr("alpha", 0.2), ctx.attr("beta", 0.5))


@converts("HardSwish")
def _hard_swish(ctx: NodeContext):
    x = ctx.required_input(0)
    return math_ops.multiply(x, _hard_sigmoid(ctx, x, 1.0 / 6.0, 0.5))


@converts("ThresholdedRelu")
def _thresholded_relu(ctx: NodeContext):
    x = ctx.required_input(0)
    above = math_ops.greater(x, _scalar(ctx, ctx.attr("alpha", 1.0), x))
    return selection_ops.where_v2(above, x, array_ops.zeros_like(x))


@converts("Softsign")
def _softsign(ctx: NodeContext):
    return extra_nn_ops.softsign(ctx.required_input(0))


@converts("Mish")
def _mish(ctx: NodeContext):
    x = ctx.required_input(0)
    return math_ops.multiply(x, math_ops.tanh(nn_ops.softplus(x)))


@converts("Swish")
def _swish(ctx: NodeContext):
    x = ctx.required_input(0)
    alpha = ctx.attr("alpha", 1.0)
    return math_ops.multiply(x, math_ops.sigmoid(math_ops.multiply(x, _scalar(ctx, alpha, x))))


@converts("Gelu")
def _gelu(ctx: NodeContext):
    x = ctx.required_input(0)
    half = _scalar(ctx, 0.5, x)
    one = _scalar(ctx, 1.0, x)
    if ctx.attr("approximate", "none") == "tanh":
        cubic = math_ops.multiply(_scalar(ctx, 0.044715, x), math_ops.pow(x, _scalar(ctx, 3, x)))
        inner = math_ops.multiply(_scalar(ctx, math.sqrt(2 / math.pi), x), math_ops.add(x, cubic))
        return math_ops.multiply(
            math_ops.multiply(half, x), math_ops.add(one, math_ops.tanh(inner))
        )
    scaled = math_ops.multiply(x, _scalar(ctx, 1 / math.sqrt(2), x))
    return math_ops.multiply(
        math_ops.multiply(half, x), math_ops.add(one, extra_math_ops.erf(scaled))
    )


@converts("Shrink")
def _shrink(ctx: NodeContext):
    x = ctx.required_input(0)
    bias, lambd = ctx.attr("bias", 0.0), ctx.attr("lambd", 0.5)
    zero = array_ops.zeros_like(x)
    low = selection_ops.where_v2(
        math_ops.less(x, _scalar(ctx, -lambd, x)), math_ops.add(x, _scalar(ctx, bias, x)), zero
    )
    return selection_ops.where_v2(
        math_ops.greater(x, _scalar(ctx, lambd, x)),
        math_ops.subtract(x, _scalar(ctx, bias, x)),
        low,
    )


@converts("Dropout")
def _dropout(ctx: NodeContext):
    x = ctx.required_input(0)
    training = ctx.static(2)
    if (
        training is not None
        and bool(training)
        and ctx.static(1) is not None
        and float(ctx.static(1)) > 0
    ):
        raise ctx.error("training_mode true is not supported (inference only)")
    if ctx.input(2) is not None and training is None:
        raise ctx.error("training_mode must be a constant")
    mask = array_ops.ones_like(x, dtype=dtypes.bool) if ctx.num_outputs > 1 else None
    return [array_ops.identity(x), mask]

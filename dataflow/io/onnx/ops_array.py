"""ONNX's shape and indexing ops, built from dataflow's array ops: shapes, reshapes,
transposes, concatenation and splits, slicing, gathers and scatters, padding, casts, constants.

Role: the converters of the array family (see `converters` for the contract).  ONNX takes many
of these ops' arguments as tensors (a Reshape's shape, a Slice's bounds, a Pad's pads); where
dataflow needs them when the graph is built they are read as constants, and where dataflow's
op takes a tensor (``reshape``, ``tile``, ``fill``) a computed value works too.

Invariants: the value of an op whose inputs are all known at import (shape arithmetic on
static shapes) is recorded with the builder, so that a Reshape or Slice further on reads it as
a constant; negative indices count from the end as ONNX defines them.
"""

from __future__ import annotations

import numpy as np

from ...framework import dtypes
from ...framework.array_bounds import array_bytes
from ...ops import (
    array_ops,
    assorted_ops,
    extra_array_ops,
    extra_math_ops,
    extra_nn_ops,
    extra_segment_ops,
    gather_ops,
    math_ops,
    nd_index_ops,
    ragged_string_ops,
    reduction_ops,
    reverse_ops,
    selection_ops,
    slice_ops,
    string_ops,
)
from ...ops.constant_op import constant
from .converters import (
    WIDE_UNSIGNED,
    NodeContext,
    as_int64,
    converts,
    from_int64,
    normalize_axis,
    rank_of,
)
from .reader import dtype_of

_INT64_MAX = 2**63 - 1


def _known(ctx: NodeContext, value) -> object:
    """A constant holding ``value``, recorded as known at import."""
    array = np.asarray(value)
    tensor = constant(array)
    ctx.builder.remember_static(tensor, array)
    return tensor


def _all_static(ctx: NodeContext):
    """The values of all given inputs if every one is known at import, else None."""
    values = []
    for index, tensor in enumerate(ctx.inputs):
        if tensor is None:
            values.append(None)
            continue
        value = ctx.static(index)
        if value is None:
            return None
        values.append(value)
    return values


@converts("Identity")
def _identity(ctx: NodeContext):
    value = ctx.static(0)
    if value is not None:
        return _known(ctx, value)
    return array_ops.identity(ctx.required_input(0))


@converts("Constant")
def _constant(ctx: NodeContext):
    attrs = ctx.attrs
    if "value" in attrs:
        value = attrs["value"]
    elif "value_float" in attrs:
        value = np.array(attrs["value_float"], dtype=np.float32)
    elif "value_floats" in attrs:
        value = np.array(attrs["value_floats"], dtype=np.float32)
    elif "value_int" in attrs:
        value = np.array(attrs["value_int"], dtype=np.int64)
    elif "value_ints" in attrs:
        value = np.array(attrs["value_ints"], dtype=np.int64)
    elif "value_string" in attrs:
        value = np.array(attrs["value_string"].encode(), dtype=object)
    elif "value_strings" in attrs:
        value = np.array([s.encode() for s in attrs["value_strings"]], dtype=object)
    else:
        raise ctx.error("it holds none of value, value_float(s), value_int(s), value_string(s)")
    return _known(ctx, value)


@converts("Shape")
def _shape(ctx: NodeContext):
    x = ctx.required_input(0)
    start, end = ctx.attr("start", 0), ctx.attr("end", None)
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if dims is not None and all(d is not None for d in dims[slice(start, end)]):
        return _known(ctx, np.array(dims[slice(start, end)], dtype=np.int64))
    full = array_ops.shape(x, out_type=dtypes.int64)
    if start == 0 and end is None:
        return full
    rank = rank_of(ctx, x)
    begin = min(max(start + rank if start < 0 else start, 0), rank)
    stop = rank if end is None else min(max(end + rank if end < 0 else end, 0), rank)
    return full[begin : max(stop, begin)]


@converts("Size")
def _size(ctx: NodeContext):
    x = ctx.required_input(0)
    if x.shape.is_fully_defined():
        return _known(ctx, np.array(int(np.prod(x.shape.as_list())), dtype=np.int64))
    return array_ops.size(x, out_type=dtypes.int64)


@converts("Cast")
def _cast(ctx: NodeContext):
    dtype = dtype_of(ctx.attr("to"), ctx.where)
    x = ctx.required_input(0)
    value = ctx.static(0)
    if value is not None and dtype.is_integer and x.dtype.is_integer:
        return _known(ctx, value.astype(dtype.as_numpy_dtype))
    return _cast_to(x, dtype)


def _cast_to(x, dtype):
    """``x`` cast to ``dtype``, through int64 for the unsigned types dataflow's cast refuses."""
    if x.dtype == dtype:
        return array_ops.identity(x)
    if x.dtype in WIDE_UNSIGNED:
        x = as_int64(x)
    if dtype in WIDE_UNSIGNED:
        return from_int64(selection_ops.cast(x, dtypes.int64), dtype)
    return selection_ops.cast(x, dtype)


@converts("BitCast")
def _bit_cast(ctx: NodeContext):
    x = ctx.required_input(0)
    dtype = dtype_of(ctx.attr("to"), ctx.where)
    if dtype.size != x.dtype.size:
        raise ctx.error(f"{x.dtype.name} and {dtype.name} differ in width")
    scalar = x.shape.ndims == 0
    if scalar:  # dataflow's bitcast kernel makes a scalar a vector: cast one, squeeze it
        x = array_ops.reshape(x, [1])
    if x.dtype == dtypes.bool:  # bools are one byte of 0 or 1
        x = selection_ops.cast(x, dtypes.uint8)
    if dtype == dtypes.bool:
        y = selection_ops.cast(assorted_ops.bitcast(x, dtypes.uint8), dtypes.bool)
    else:
        y = assorted_ops.bitcast(x, dtype)
    return array_ops.squeeze(y, axis=[0]) if scalar else y


@converts("CastLike")
def _cast_like(ctx: NodeContext):
    return _cast_to(ctx.required_input(0), ctx.required_input(1).dtype)


@converts("Reshape")
def _reshape(ctx: NodeContext):
    x = ctx.required_input(0)
    copies_zeros = not ctx.attr("allowzero", 0)
    shape = ctx.static(1)
    if shape is None:
        # A shape known at run time: a 0 in it takes the input's dim at that place.
        shape = selection_ops.cast(ctx.required_input(1), dtypes.int64)
        if copies_zeros:
            # The input's dims, padded with zeros (never chosen) to the shape's length.
            padded = array_ops.concat(
                [array_ops.shape(x, out_type=dtypes.int64), array_ops.zeros_like(shape)], 0
            )
            dims = array_ops.slice(
                padded,
                constant([0], dtype=dtypes.int64),
                array_ops.shape(shape, out_type=dtypes.int64),
            )
            zero = constant(0, dtype=dtypes.int64)
            shape = selection_ops.where_v2(math_ops.equal(shape, zero), dims, shape)
        return array_ops.reshape(x, shape)
    shape = [int(d) for d in shape.reshape(-1)]
    if copies_zeros and 0 in shape:
        known = x.shape.as_list() if x.shape.ndims is not None else None
        if known is not None and all(known[i] is not None for i, d in enumerate(shape) if d == 0):
            shape = [known[i] if d == 0 else d for i, d in enumerate(shape)]
        else:
            dims = array_ops.shape(x, out_type=dtypes.int64)
            parts = [
                dims[i : i + 1] if d == 0 else constant([d], dtype=dtypes.int64)
                for i, d in enumerate(shape)
            ]
            return array_ops.reshape(x, array_ops.concat(parts, 0))
    value = ctx.static(0)
    if value is not None and value.dtype.kind in "iu" and value.size <= 4096:
        return _known(ctx, value.reshape(shape))
    return array_ops.reshape(x, shape)


@converts("Flatten")
def _flatten(ctx: NodeContext):
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    axis = ctx.attr("axis", 1)
    axis = axis + rank if axis < 0 else axis
    dims = x.shape.as_list()
    outer = dims[:axis]
    if all(d is not None for d in outer):
        return array_ops.reshape(x, [int(np.prod(outer, dtype=np.int64)), -1])
    inner = dims[axis:]
    if all(d is not None for d in inner):
        return array_ops.reshape(x, [-1, int(np.prod(inner, dtype=np.int64))])
    raise ctx.error("Flatten needs one side of the axis known at import")


@converts("Transpose")
def _transpose(ctx: NodeContext):
    x = ctx.required_input(0)
    perm = ctx.attr("perm", None)
    if perm is None:
        perm = list(reversed(range(rank_of(ctx, x))))
    return array_ops.transpose(x, perm)


def _run_time_axes(ctx: NodeContext, rank: int):
    """The axes input (index 1) known only at run time, as non-negative int64 axes of
    ``rank``, and a bool vector of ``rank`` saying which axes it names."""
    axes = selection_ops.cast(array_ops.reshape(ctx.required_input(1), [-1]), dtypes.int64)
    rank_value = constant(rank, dtype=dtypes.int64)
    axes = extra_math_ops.floormod(axes, rank_value)
    positions = array_ops.range(rank_value, dtype=dtypes.int64)
    named = reduction_ops.reduce_any(
        math_ops.equal(array_ops.expand_dims(positions, 1), array_ops.expand_dims(axes, 0)),
        axis=1,
    )
    return axes, named


def _axes_count(ctx: NodeContext) -> int:
    count = ctx.required_input(1).shape.num_elements()
    if count is None:
        raise ctx.error("the number of axes must be known at import")
    return count


@converts("Squeeze")
def _squeeze(ctx: NodeContext):
    x = ctx.required_input(0)
    if ctx.input(1) is not None and "axes" not in ctx.attrs and ctx.static(1) is None:
        rank = rank_of(ctx, x)
        _, named = _run_time_axes(ctx, rank)
        kept = array_ops.reshape(selection_ops.where(math_ops.logical_not(named)), [-1])
        dims = gather_ops.gather(array_ops.shape(x, out_type=dtypes.int64), kept)
        out_rank = rank - _axes_count(ctx)
        return array_ops.reshape(x, array_ops.reshape(dims, [out_rank]))
    axes = ctx.axes(1)
    value = ctx.static(0)
    if value is not None and value.dtype.kind in "iu":
        return _known(ctx, np.squeeze(value, axis=None if not axes else tuple(axes)))
    if not axes:
        return array_ops.squeeze(x)
    return array_ops.squeeze(x, axis=axes)


@converts("Unsqueeze")
def _unsqueeze(ctx: NodeContext):
    x = ctx.required_input(0)
    if ctx.input(1) is not None and "axes" not in ctx.attrs and ctx.static(1) is None:
        out_rank = rank_of(ctx, x) + _axes_count(ctx)
        _, named = _run_time_axes(ctx, out_rank)
        # Place d of the output takes the input's dim number (places before d not named).
        source = math_ops.subtract(
            reduction_ops.cumsum(selection_ops.cast(math_ops.logical_not(named), dtypes.int64)),
            constant(1, dtype=dtypes.int64),
        )
        dims = array_ops.concat(
            [array_ops.shape(x, out_type=dtypes.int64), constant([1], dtype=dtypes.int64)], 0
        )
        source = math_ops.maximum(source, constant(0, dtype=dtypes.int64))
        shape = selection_ops.where_v2(
            named, array_ops.ones([out_rank], dtypes.int64), gather_ops.gather(dims, source)
        )
        return array_ops.reshape(x, shape)
    axes = ctx.axes(1)
    if axes is None:
        raise ctx.error("the axes are required")
    if x.shape.ndims is None and all(a >= 0 for a in axes):
        for axis in sorted(axes):  # places counted from the start need no rank
            x = array_ops.expand_dims(x, axis)
        return x
    out_rank = rank_of(ctx, x) + len(axes)
    axes = sorted(normalize_axis(ctx, a, out_rank) for a in axes)
    value = ctx.static(0)
    if value is not None and value.dtype.kind in "iu":
        for axis in axes:
            value = np.expand_dims(value, axis)
        return _known(ctx, value)
    for axis in axes:
        x = array_ops.expand_dims(x, axis)
    return x


@converts("Concat")
def _concat(ctx: NodeContext):
    values = [t for t in ctx.inputs if t is not None]
    axis = ctx.attr("axis")
    known = _all_static(ctx)
    if known is not None and all(v.dtype.kind in "iu" for v in known if v is not None):
        return _known(ctx, np.concatenate([v for v in known if v is not None], axis=axis))
    return array_ops.concat(values, axis=axis)


@converts("Split")
def _split(ctx: NodeContext):
    x = ctx.required_input(0)
    axis = ctx.attr("axis", 0)
    if ctx.input(1) is not None and ctx.static(1) is None:
        return _split_at_run_time(ctx, x, axis)
    sizes = ctx.static_ints(1, "split") if ctx.input(1) is not None else ctx.attrs.get("split")
    if sizes:
        return array_ops.split(x, sizes, axis=axis)
    parts = ctx.attr("num_outputs", ctx.num_outputs)
    length = x.shape.as_list()[axis] if x.shape.ndims is not None else None
    if length is not None and length % parts:
        chunk = -(-length // parts)  # the last part is smaller, as ONNX defines it
        sizes = [chunk] * (length // chunk) + ([length % chunk] if length % chunk else [])
        return array_ops.split(x, sizes, axis=axis)
    return array_ops.split(x, parts, axis=axis)


def _split_at_run_time(ctx: NodeContext, x, axis: int):
    """Split with sizes known only at run time: one slice per output between the running sums
    of the sizes."""
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, axis, rank)
    sizes = selection_ops.cast(array_ops.reshape(ctx.required_input(1), [-1]), dtypes.int64)
    ends = reduction_ops.cumsum(sizes)
    starts = math_ops.subtract(ends, sizes)
    parts = []
    mask = ((1 << rank) - 1) & ~(1 << axis)
    for index in range(ctx.num_outputs):
        begin = array_ops.one_hot(axis, rank, dtype=dtypes.int64)
        begin = math_ops.multiply(begin, starts[index])
        end = math_ops.multiply(array_ops.one_hot(axis, rank, dtype=dtypes.int64), ends[index])
        parts.append(
            slice_ops.strided_slice(
                x, begin, end, array_ops.ones([rank], dtypes.int64), begin_mask=mask, end_mask=mask
            )
        )
    return parts


@converts("Slice")
def _slice(ctx: NodeContext):
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    if ctx.opset < 10:
        starts, ends = list(ctx.attr("starts")), list(ctx.attr("ends"))
        axes = list(ctx.attr("axes", range(len(starts))))
        steps = [1] * len(starts)
    elif any(ctx.input(i) is not None and ctx.static(i) is None for i in (1, 2, 3, 4)):
        return _slice_at_run_time(ctx, x, rank)
    else:
        starts = ctx.static_ints(1, "starts")
        ends = ctx.static_ints(2, "ends")
        axes = ctx.static_ints(3, "axes", default=list(range(len(starts))))
        steps = ctx.static_ints(4, "steps", default=[1] * len(starts))
    begin, end, strides = [0] * rank, [0] * rank, [1] * rank
    begin_mask = end_mask = 0
    for index in range(rank):
        begin_mask |= 1 << index
        end_mask |= 1 << index
    dims = x.shape.as_list()
    for start, stop, axis, step in zip(starts, ends, axes, steps):
        axis = normalize_axis(ctx, axis, rank)
        if step == 0:
            raise ctx.error("a step of 0")
        begin_mask &= ~(1 << axis)
        end_mask &= ~(1 << axis)
        size = dims[axis]
        # Bounds past either end mean "to that end", as in Python's slices.
        if step > 0 and stop >= (size if size is not None else _INT64_MAX // 2):
            end_mask |= 1 << axis
            stop = 0
        if step < 0 and stop < -(size if size is not None else _INT64_MAX // 2):
            end_mask |= 1 << axis
            stop = 0
        begin[axis], end[axis], strides[axis] = start, stop, step
    for axis in range(rank):
        begin[axis] = max(min(begin[axis], _INT64_MAX // 4), -(_INT64_MAX // 4))
        end[axis] = max(min(end[axis], _INT64_MAX // 4), -(_INT64_MAX // 4))
    value = ctx.static(0)
    if value is not None and value.dtype.kind in "iu" and rank == 1:
        return _known(
            ctx,
            value[
                slice(
                    None if begin_mask & 1 else begin[0],
                    None if end_mask & 1 else end[0],
                    strides[0],
                )
            ],
        )
    return slice_ops.strided_slice(x, begin, end, strides, begin_mask=begin_mask, end_mask=end_mask)


def _slice_at_run_time(ctx: NodeContext, x, rank: int):
    """Slice with bounds, axes or steps known only at run time: each is scattered into a
    vector over all axes, whose other entries take everything (0 to the largest int, step 1).
    dataflow's strided slice clamps bounds past the ends as Python's slices do."""
    count = ctx.required_input(1).shape.num_elements()
    if count is None:
        raise ctx.error("the number of starts must be known at import")
    if ctx.input(3) is None:
        axes = constant(list(range(count)), dtype=dtypes.int64)
    else:
        axes = selection_ops.cast(array_ops.reshape(ctx.input(3), [-1]), dtypes.int64)
        axes = extra_math_ops.floormod(axes, constant(rank, dtype=dtypes.int64))
    coordinates = array_ops.expand_dims(axes, 1)

    def over_all_axes(index: int, default: int):
        given = ctx.input(index)
        if given is None:
            values = constant([default] * count, dtype=dtypes.int64)
        else:
            values = selection_ops.cast(array_ops.reshape(given, [-1]), dtypes.int64)
        full = constant([0 if index == 1 else default] * rank, dtype=dtypes.int64)
        return nd_index_ops.tensor_scatter_nd_update(full, coordinates, values)

    return slice_ops.strided_slice(
        x, over_all_axes(1, 0), over_all_axes(2, _INT64_MAX), over_all_axes(4, 1)
    )


def _wrap_negative(indices, length):
    """``indices`` with negative entries counted from the end of an axis of ``length``."""
    length = selection_ops.cast(length, indices.dtype)
    zero = constant(0, dtype=indices.dtype)
    return selection_ops.where_v2(
        math_ops.less(indices, zero), math_ops.add(indices, length), indices
    )


@converts("Gather")
def _gather(ctx: NodeContext):
    x, indices = ctx.required_input(0), ctx.required_input(1)
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, ctx.attr("axis", 0), rank)
    known = _all_static(ctx)
    if known is not None and known[0].dtype.kind in "iu" and known[0].size <= 4096:
        return _known(ctx, np.take(known[0], known[1], axis=axis))
    index_value = ctx.static(1)
    if index_value is not None and x.shape.as_list()[axis] is not None:
        length = x.shape.as_list()[axis]
        index_value = np.where(index_value < 0, index_value + length, index_value)
        indices = constant(index_value.astype(index_value.dtype))
    else:
        indices = _wrap_negative(indices, array_ops.shape(x, out_type=indices.dtype)[axis])
    return gather_ops.gather(x, indices, axis=axis)


def _element_coordinates(ctx: NodeContext, indices, axis: int, rank: int, dim_length):
    """The ``[..., rank]`` coordinates GatherElements/ScatterElements address: ``indices``
    along ``axis`` and each element's own position along the other axes."""
    indices = selection_ops.cast(_wrap_negative(indices, dim_length), dtypes.int64)
    shape = array_ops.shape(indices, out_type=dtypes.int64)
    columns = []
    for d in range(rank):
        if d == axis:
            columns.append(indices)
            continue
        positions = array_ops.range(shape[d], dtype=dtypes.int64)
        view = [1] * rank
        view[d] = -1
        columns.append(extra_array_ops.broadcast_to(array_ops.reshape(positions, view), shape))
    return array_ops.stack(columns, axis=-1)


@converts("GatherElements")
def _gather_elements(ctx: NodeContext):
    x, indices = ctx.required_input(0), ctx.required_input(1)
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, ctx.attr("axis", 0), rank)
    length = array_ops.shape(x, out_type=dtypes.int64)[axis]
    return nd_index_ops.gather_nd(x, _element_coordinates(ctx, indices, axis, rank, length))


@converts("ScatterElements", "Scatter")  # Scatter: ScatterElements' name before opset 11
def _scatter_elements(ctx: NodeContext):
    x, indices, updates = ctx.required_input(0), ctx.required_input(1), ctx.required_input(2)
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, ctx.attr("axis", 0), rank)
    length = array_ops.shape(x, out_type=dtypes.int64)[axis]
    coordinates = _element_coordinates(ctx, indices, axis, rank, length)
    return _scatter(ctx, x, coordinates, updates)


_SCATTER_REDUCTIONS = {
    "none": nd_index_ops.tensor_scatter_nd_update,
    "add": nd_index_ops.tensor_scatter_nd_add,
    "max": nd_index_ops.tensor_scatter_nd_max,
    "min": nd_index_ops.tensor_scatter_nd_min,
}


def _scatter(ctx: NodeContext, x, coordinates, updates):
    reduction = ctx.attr("reduction", "none")
    if reduction not in _SCATTER_REDUCTIONS:
        raise ctx.error(f"reduction {reduction!r} is not supported (none, add, max, min)")
    return _SCATTER_REDUCTIONS[reduction](x, coordinates, updates)


@converts("ScatterND")
def _scatter_nd(ctx: NodeContext):
    return _scatter(ctx, ctx.required_input(0), ctx.required_input(1), ctx.required_input(2))


@converts("GatherND")
def _gather_nd(ctx: NodeContext):
    return nd_index_ops.gather_nd(
        ctx.required_input(0), ctx.required_input(1), batch_dims=ctx.attr("batch_dims", 0)
    )


@converts("Expand")
def _expand(ctx: NodeContext):
    x = ctx.required_input(0)
    shape = ctx.static(1)
    dims = x.shape.as_list() if x.shape.ndims is not None else None
    if shape is not None and dims is not None and None not in dims:
        target = np.broadcast_shapes(tuple(dims), tuple(int(d) for d in shape))
        return extra_array_ops.broadcast_to(x, list(target))
    # The broadcast of both shapes, read off a sum of zeros of each.
    zeros_x = array_ops.zeros(array_ops.shape(x), dtype=dtypes.int8)
    zeros_shape = array_ops.zeros(ctx.required_input(1), dtype=dtypes.int8)
    target = array_ops.shape(math_ops.add(zeros_x, zeros_shape))
    return extra_array_ops.broadcast_to(x, target)


@converts("Tile")
def _tile(ctx: NodeContext):
    return gather_ops.tile(ctx.required_input(0), ctx.required_input(1))


@converts("Pad")
def _pad(ctx: NodeContext):
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    mode = ctx.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise ctx.error(f"mode {mode!r} is not one of constant, reflect, edge, wrap")
    if ctx.opset < 11:
        pads = constant(list(ctx.attr("pads")), dtype=dtypes.int64)
        fill = constant(ctx.attr("value", 0.0), dtype=x.dtype)
    else:
        pads = selection_ops.cast(ctx.required_input(1), dtypes.int64)
        fill = ctx.input(2)
        fill = constant(0, dtype=x.dtype) if fill is None else array_ops.reshape(fill, [])
    if ctx.input(3) is not None and ctx.static(3) is None:
        return _pad_run_time_axes(ctx, x, rank, pads, mode, fill)
    axes = ctx.static_ints(3, "axes", default=list(range(rank)))
    axes = [normalize_axis(ctx, a, rank) for a in axes]
    known = ctx.static(1) if ctx.opset >= 11 else np.asarray(ctx.attr("pads"))
    if known is not None and mode in ("constant", "reflect") and (known >= 0).all():
        # The pads known at import: dataflow's pad op.
        known = [int(p) for p in known.reshape(-1)]
        if len(known) != 2 * len(axes):
            raise ctx.error(f"pads has {len(known)} values, {2 * len(axes)} expected")
        paddings = [[0, 0] for _ in range(rank)]
        for i, axis in enumerate(axes):
            paddings[axis] = [known[i], known[i + len(axes)]]
        if mode == "reflect":
            return gather_ops.pad(x, paddings, mode="REFLECT")
        return gather_ops.pad(x, paddings, constant_values=fill)
    pads = array_ops.reshape(pads, [2, len(axes)])
    for i, axis in enumerate(axes):
        x = _pad_axis(x, axis, rank, pads[0, i], pads[1, i], mode, fill)
    return x


def _pad_run_time_axes(ctx: NodeContext, x, rank: int, pads, mode: str, fill):
    """Pad with axes known only at run time: the pads scattered onto every axis (0 where an
    axis is not named), then each axis padded."""
    axes = selection_ops.cast(array_ops.reshape(ctx.input(3), [-1]), dtypes.int64)
    axes = extra_math_ops.floormod(axes, constant(rank, dtype=dtypes.int64))
    coordinates = array_ops.expand_dims(axes, 1)
    pads = array_ops.reshape(pads, [2, -1])
    zeros = array_ops.zeros([rank], dtypes.int64)
    befores = nd_index_ops.tensor_scatter_nd_update(zeros, coordinates, pads[0])
    afters = nd_index_ops.tensor_scatter_nd_update(zeros, coordinates, pads[1])
    for axis in range(rank):
        x = _pad_axis(x, axis, rank, befores[axis], afters[axis], mode, fill)
    return x


def _pad_axis(x, axis: int, rank: int, before, after, mode: str, fill):
    """``x`` padded along ``axis`` by ``before`` and ``after`` places (run-time values;
    negative ones crop) as a gather: output place ``i`` reads input place ``i - before``,
    mapped into the input by the mode (clamped for edge, mirrored for reflect, wrapped for
    wrap; for constant, places outside take ``fill``)."""
    length = array_ops.shape(x, out_type=dtypes.int64)[axis]
    places = array_ops.range(
        math_ops.negative(before), math_ops.add(length, after), dtype=dtypes.int64
    )
    zero, one = constant(0, dtype=dtypes.int64), constant(1, dtype=dtypes.int64)
    last = math_ops.maximum(math_ops.subtract(length, one), zero)
    clamped = math_ops.minimum(math_ops.maximum(places, zero), last)
    if mode == "wrap":
        source = extra_math_ops.floormod(places, math_ops.maximum(length, one))
    elif mode == "reflect":
        period = math_ops.maximum(math_ops.multiply(last, constant(2, dtype=dtypes.int64)), one)
        folded = extra_math_ops.floormod(places, period)
        source = selection_ops.where_v2(
            math_ops.less(folded, length), folded, math_ops.subtract(period, folded)
        )
    else:
        source = clamped
    gathered = gather_ops.gather(x, source, axis=axis)
    if mode != "constant":
        return gathered
    inside = math_ops.logical_and(
        math_ops.greater_equal(places, zero), math_ops.less(places, length)
    )
    inside = array_ops.reshape(inside, [-1] + [1] * (rank - 1 - axis))
    return selection_ops.where_v2(inside, gathered, fill)


@converts("ConstantOfShape")
def _constant_of_shape(ctx: NodeContext):
    value = ctx.attr("value", np.zeros([1], dtype=np.float32))
    scalar = np.asarray(value).reshape(-1)[0]
    shape = ctx.static(0)
    if shape is not None:
        dims = tuple(int(d) for d in shape.reshape(-1))
        try:  # a size the file declares: bounded before anything is made
            array_bytes(dims, np.asarray(value).dtype)
        except ValueError as e:
            raise ctx.error(str(e)) from None
    filled = array_ops.fill(ctx.required_input(0), constant(scalar))
    if shape is not None:
        # Known at import as a broadcast view of the one value, which takes no memory.
        ctx.builder.remember_static(filled, np.broadcast_to(scalar, dims))
    return filled


@converts("Range")
def _range(ctx: NodeContext):
    # Scalars by definition; one-element vectors are read as scalars, as onnxruntime does.
    start, limit, delta = (array_ops.reshape(ctx.required_input(i), []) for i in range(3))
    known = _all_static(ctx)
    if known is not None:
        first, stop, step = (np.asarray(v).reshape(()) for v in known)
        values = np.arange(first, stop, step).astype(first.dtype)
        return _known(ctx, values) if values.dtype.kind in "iu" else constant(values)
    return array_ops.range(start, limit, delta, dtype=start.dtype)


@converts("OneHot")
def _one_hot(ctx: NodeContext):
    indices, depth, values = (ctx.required_input(i) for i in range(3))
    rank = rank_of(ctx, indices) + 1
    axis = normalize_axis(ctx, ctx.attr("axis", -1), rank)
    depth = array_ops.reshape(selection_ops.cast(depth, dtypes.int64), [])
    indices = _wrap_negative(selection_ops.cast(indices, dtypes.int64), depth)
    depth = selection_ops.cast(depth, dtypes.int32)
    off, on = values[0], values[1]
    return array_ops.one_hot(indices, depth, on_value=on, off_value=off, axis=axis)


@converts("NonZero")
def _non_zero(ctx: NodeContext):
    x = ctx.required_input(0)
    nonzero = math_ops.not_equal(x, array_ops.zeros_like(x)) if x.dtype != dtypes.bool else x
    return array_ops.transpose(selection_ops.where(nonzero))


@converts("TopK")
def _top_k(ctx: NodeContext):
    x = ctx.required_input(0)
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, ctx.attr("axis", -1), rank)
    if ctx.opset < 10:
        k = ctx.attr("k")
    elif ctx.static(1) is not None:
        k = int(ctx.static(1).reshape(-1)[0])
    else:
        k = selection_ops.cast(array_ops.reshape(ctx.required_input(1), []), dtypes.int32)
    largest = ctx.attr("largest", 1)
    moved = x if axis == rank - 1 else array_ops.transpose(x, _swap(rank, axis))
    keys = moved if largest else math_ops.negative(moved)
    values, indices = extra_nn_ops.top_k(keys, k=k, sorted=True, index_type=dtypes.int64)
    if not largest:
        values = math_ops.negative(values)
    if axis != rank - 1:
        values = array_ops.transpose(values, _swap(rank, axis))
        indices = array_ops.transpose(indices, _swap(rank, axis))
    return [values, indices]


def _swap(rank: int, axis: int) -> list:
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return perm


@converts("Trilu")
def _trilu(ctx: NodeContext):
    x = ctx.required_input(0)
    k_input = ctx.input(1)
    shape = array_ops.shape(x, out_type=dtypes.int64)
    rows = array_ops.reshape(array_ops.range(shape[-2], dtype=dtypes.int64), [-1, 1])
    cols = array_ops.reshape(array_ops.range(shape[-1], dtype=dtypes.int64), [1, -1])
    offset = math_ops.subtract(cols, rows)
    if k_input is None:
        k_value = constant(0, dtype=dtypes.int64)
    else:
        k_value = array_ops.reshape(selection_ops.cast(k_input, dtypes.int64), [])
    if ctx.attr("upper", 1):
        keep = math_ops.greater_equal(offset, k_value)
    else:
        keep = math_ops.less_equal(offset, k_value)
    return selection_ops.where_v2(keep, x, array_ops.zeros_like(x))


@converts("DepthToSpace")
def _depth_to_space(ctx: NodeContext):
    x = ctx.required_input(0)
    block = ctx.attr("blocksize")
    _, c, h, w = x.shape.as_list()
    if None in (c, h, w):
        raise ctx.error("the channel count and spatial shape must be known at import")
    depth = c // (block * block)
    if ctx.attr("mode", "DCR") == "DCR":
        y = array_ops.reshape(x, [-1, block, block, depth, h, w])
        y = array_ops.transpose(y, [0, 3, 4, 1, 5, 2])
    else:
        y = array_ops.reshape(x, [-1, depth, block, block, h, w])
        y = array_ops.transpose(y, [0, 1, 4, 2, 5, 3])
    return array_ops.reshape(y, [-1, depth, h * block, w * block])


@converts("SpaceToDepth")
def _space_to_depth(ctx: NodeContext):
    x = ctx.required_input(0)
    block = ctx.attr("blocksize")
    _, c, h, w = x.shape.as_list()
    if None in (c, h, w):
        raise ctx.error("the channel count and spatial shape must be known at import")
    y = array_ops.reshape(x, [-1, c, h // block, block, w // block, block])
    mode = ctx.attr("mode", "DCR")
    if mode == "DCR":  # output channels ordered (block row, block column, channel)
        y = array_ops.transpose(y, [0, 3, 5, 1, 2, 4])
    elif mode == "CRD":  # (channel, block row, block column)
        y = array_ops.transpose(y, [0, 1, 3, 5, 2, 4])
    else:
        raise ctx.error(f"mode {mode!r} is not DCR or CRD")
    return array_ops.reshape(y, [-1, c * block * block, h // block, w // block])


@converts("ReverseSequence")
def _reverse_sequence(ctx: NodeContext):
    return reverse_ops.reverse_sequence(
        ctx.required_input(0),
        ctx.required_input(1),
        seq_axis=ctx.attr("time_axis", 0),
        batch_axis=ctx.attr("batch_axis", 1),
    )


@converts("EyeLike")
def _eye_like(ctx: NodeContext):
    x = ctx.required_input(0)
    dtype = dtype_of(ctx.attr("dtype"), ctx.where) if "dtype" in ctx.attrs else x.dtype
    rows, cols = x.shape.as_list()
    k = ctx.attr("k", 0)
    return constant(np.eye(rows, cols, k=k, dtype=dtype.as_numpy_dtype))


@converts("Compress")
def _compress(ctx: NodeContext):
    x, condition = ctx.required_input(0), ctx.required_input(1)
    axis = ctx.attr("axis", None)
    if axis is None:
        x = array_ops.reshape(x, [-1])
        axis = 0
    rank = rank_of(ctx, x)
    axis = normalize_axis(ctx, axis, rank)
    length = array_ops.shape(x)[axis]
    condition = condition[:length] if condition.shape.ndims == 1 else condition
    kept = array_ops.reshape(selection_ops.where(condition), [-1])
    return gather_ops.gather(x, kept, axis=axis)


@converts("Unique")
def _unique(ctx: NodeContext):
    # Unique values of the flattened input with the first index of each, the index of each
    # element's value, and the counts: dataflow's unique_with_counts (first-occurrence order),
    # sorted by value when ``sorted`` (ONNX's default).
    x = ctx.required_input(0)
    if ctx.attr("axis", None) is not None:
        raise ctx.error("Unique along an axis (of slices) is not supported")
    flat = array_ops.reshape(x, [-1])
    values, inverse, counts = extra_array_ops.unique_with_counts(flat, out_idx=dtypes.int64)
    positions = array_ops.range(array_ops.size(flat, out_type=dtypes.int64), dtype=dtypes.int64)
    first = extra_segment_ops.unsorted_segment_min(
        positions, inverse, array_ops.size(values, out_type=dtypes.int64)
    )
    counts = selection_ops.cast(counts, dtypes.int64)
    if ctx.attr("sorted", 1):
        order = extra_array_ops.argsort(values, stable=True)
        rank_of_value = extra_array_ops.argsort(order, stable=True)  # the inverse permutation
        values, first, counts = (gather_ops.gather(t, order) for t in (values, first, counts))
        inverse = gather_ops.gather(selection_ops.cast(rank_of_value, dtypes.int64), inverse)
    return [values, first, inverse, counts]


@converts("StringConcat")
def _string_concat(ctx: NodeContext):
    return math_ops.add(ctx.required_input(0), ctx.required_input(1))  # broadcast, joined


@converts("RegexFullMatch")
def _regex_full_match(ctx: NodeContext):
    # RE2's syntax, as ONNX specifies; dataflow matches with RE2 (the "strings" extra).
    return string_ops.regex_full_match(ctx.required_input(0), ctx.attr("pattern"))


@converts("StringSplit")
def _string_split(ctx: NodeContext):
    # Python's str.split: on the delimiter (consecutive ones delimit empty strings), or, with
    # none or "", on runs of whitespace; at most maxsplit splits.  The substrings are padded
    # with "" to the longest row; the second output counts each element's substrings.
    x = ctx.required_input(0)
    delimiter = ctx.attr("delimiter", "") or None
    maxsplit = ctx.attr("maxsplit", -1)
    flat = array_ops.reshape(x, [-1])
    pieces = ragged_string_ops.split(
        flat, sep=delimiter, maxsplit=maxsplit, result_type="RaggedTensor"
    )
    dense = pieces.to_tensor(default_value="")
    shape = array_ops.shape(x, out_type=dtypes.int64)
    width = array_ops.shape(dense, out_type=dtypes.int64)[1:]
    substrings = array_ops.reshape(dense, array_ops.concat([shape, width], 0))
    counts = array_ops.reshape(selection_ops.cast(pieces.row_lengths(), dtypes.int64), shape)
    return [substrings, counts]


@converts("TensorScatter")
def _tensor_scatter(ctx: NodeContext):
    # The cache with, for each batch b, the update's positions written along `axis` from
    # write_indices[b] on (modulo the cache's length in "circular" mode): each cache position
    # p reads update position p - write_indices[b] when that is inside the update.
    past, update, starts = ctx.required_input(0), ctx.required_input(1), ctx.input(2)
    rank = rank_of(ctx, past)
    axis = normalize_axis(ctx, ctx.attr("axis", -2), rank)
    if axis == 0:
        raise ctx.error("axis 0 is the batch axis")
    mode = ctx.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise ctx.error(f"mode {mode!r} is not linear or circular")
    cache_length = array_ops.shape(past, out_type=dtypes.int64)[axis]
    update_length = array_ops.shape(update, out_type=dtypes.int64)[axis]
    if starts is None:
        starts = array_ops.zeros(array_ops.shape(past, out_type=dtypes.int64)[:1], dtypes.int64)
    starts = array_ops.reshape(selection_ops.cast(starts, dtypes.int64), [-1, 1])
    positions = array_ops.reshape(array_ops.range(cache_length, dtype=dtypes.int64), [1, -1])
    source = math_ops.subtract(positions, starts)  # [batch, cache length]
    if mode == "circular":
        source = extra_math_ops.floormod(source, cache_length)
    zero = constant(0, dtype=dtypes.int64)
    inside = math_ops.logical_and(
        math_ops.greater_equal(source, zero), math_ops.less(source, update_length)
    )
    clamped = math_ops.minimum(
        math_ops.maximum(source, zero), math_ops.maximum(update_length - 1, zero)
    )
    batches = past.shape.as_list()[0]
    if batches is None:
        raise ctx.error("the batch size must be known at import")
    written = array_ops.stack(  # one gather per batch entry, each with its own positions
        [gather_ops.gather(update[b], clamped[b], axis=axis - 1) for b in range(batches)]
    )
    view = [batches] + [1] * (axis - 1) + [-1] + [1] * (rank - 1 - axis)
    return selection_ops.where_v2(array_ops.reshape(inside, view), written, past)

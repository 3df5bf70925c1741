"""Ops on `dataflow.framework.ragged_tensor.RaggedTensor`: making, reshaping, slicing, joining,
reducing.

Every ragged op is built from the dense ops on a RaggedTensor's parts, plus one op of its own,
TensorFlow's ``RaggedRange`` (the rows ``range(starts[i], limits[i], deltas[i])`` as row splits
and values), which turns per-row bounds into the positions of the values they select.  So
gradients flow to ``flat_values`` through the ordinary gradients of gather, concat and segment
sums, and the splits are integers that take none.

What this module gives RaggedTensor (registered on it, see `dataflow.framework.ragged_tensor`):

- its factories (``from_row_splits``, ``from_row_lengths``, ``from_value_rowids``,
  ``from_tensor``), ``row_lengths``, ``nrows``, ``value_rowids``, ``to_tensor``;
- Python's arithmetic and comparison operators, elementwise on ``flat_values`` with a scalar
  or a RaggedTensor of the same row partition (``map_flat_values``);
- ``rt[...]``: an int or a slice (step 1) on the rows, slices (step 1, Tensor bounds too) on
  ragged dimensions, anything a Tensor takes on the dense dimensions inside, and ``...``;
- ``df.concat`` and ``df.reduce_sum`` with a RaggedTensor among their inputs (TensorFlow's
  dispatch): concat along the rows, within the rows, or deeper; sums over the rows, over a
  ragged dimension (each row's sum), over dense dimensions, or over everything.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.ragged_tensor import (
    RaggedTensor,
    RaggedTensorValue,
    register_operator,
    register_override,
)
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from . import array_ops, math_ops
from . import gather_ops as _g
from .extra_array_ops import broadcast_to
from .segment_ops import unsorted_segment_sum

__all__ = [
    "constant",
    "constant_value",
    "map_flat_values",
    "placeholder",
    "ragged_range",
    "row_splits_to_segment_ids",
    "segment_ids_to_row_splits",
]

_SPLITS_TYPES = (_dtypes.int32, _dtypes.int64)


# -- RaggedRange -----------------------------------------------------------------------------------
def _infer_ragged_range(op):
    starts, limits, deltas = op.inputs
    rows = None
    for name, t in zip(("starts", "limits", "deltas"), op.inputs):
        if t.dtype is not starts.dtype:
            raise TypeError(
                f"RaggedRange needs starts, limits and deltas of one dtype, got "
                f"{starts.dtype.name} starts and {t.dtype.name} {name}"
            )
        t.shape.with_rank_at_most(1)
        if t.shape.ndims == 1:
            rows = rows if t.shape[0] is None else t.shape[0]
    if all(t.shape.ndims == 0 for t in op.inputs):
        rows = 1
    splits_dtype = _dtypes.as_dtype(op.attrs["Tsplits"])
    splits_length = None if rows is None else rows + 1
    return [(splits_dtype, TensorShape([splits_length])), (starts.dtype, TensorShape([None]))]


def _ragged_range_kernel(attrs):
    splits_dtype = _dtypes.as_dtype(attrs["Tsplits"]).as_numpy_dtype

    def ragged_range(starts, limits, deltas):
        starts, limits, deltas = (np.atleast_1d(x) for x in (starts, limits, deltas))
        try:
            starts, limits, deltas = np.broadcast_arrays(starts, limits, deltas)
        except ValueError:
            raise ValueError(
                f"starts, limits and deltas must have the same length, got {starts.shape[0]}, "
                f"{limits.shape[0]} and {deltas.shape[0]}"
            ) from None
        if np.any(deltas == 0):
            raise ValueError("Requires delta != 0")
        spans = (limits - starts).astype(np.float64) / deltas
        sizes = np.maximum(np.ceil(spans), 0).astype(np.int64)
        splits = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=splits[1:])
        rows = np.repeat(np.arange(len(sizes)), sizes)
        offsets = np.arange(splits[-1]) - splits[rows]
        values = (starts[rows] + offsets * deltas[rows]).astype(starts.dtype)
        return splits.astype(splits_dtype), values

    return ragged_range


define_op("RaggedRange", _infer_ragged_range, _ragged_range_kernel)


def ragged_range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype="int64"):
    """``df.ragged.range``: row ``i`` is ``range(starts[i], limits[i], deltas[i])`` (scalars
    stand for every row; ``ragged_range(n)`` is one row ``range(n)``)."""
    if limits is None:
        starts, limits = 0, starts
    with name_scope(name or "RaggedRange"):
        starts = convert_to_tensor(starts, dtype=dtype, name="starts")
        limits = convert_to_tensor(limits, dtype=starts.dtype, name="limits")
        deltas = convert_to_tensor(deltas, dtype=starts.dtype, name="deltas")
        attrs = {"Tsplits": _dtypes.as_dtype(row_splits_dtype).name}
        op = apply_op("RaggedRange", [starts, limits, deltas], attrs, "RaggedRange")
    return RaggedTensor(op.outputs[1], op.outputs[0], internal=True)


# -- factories -------------------------------------------------------------------------------------
def _as_splits(value, name: str, like=None) -> Tensor:
    dtype = like.dtype if isinstance(like, Tensor) else None
    if isinstance(value, Tensor):
        t = value
    else:
        t = convert_to_tensor(value, dtype=dtype or _dtypes.int64, name=name)
    if t.dtype not in _SPLITS_TYPES:
        raise TypeError(f"{name} must be int32 or int64, got {t.dtype.name}")
    t.shape.with_rank(1)
    return t


def _values_length(values, dtype) -> Tensor:
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=dtype)
    known = values.shape[0] if values.shape.ndims else None
    if known is not None:
        return convert_to_tensor(known, dtype=dtype)
    return array_ops.shape(values, out_type=dtype)[0]


def _check_splits(values, row_splits: Tensor, validate: bool, name: str) -> list:
    """The checks TensorFlow makes of row splits: at build time where the splits' values are
    known, else (with ``validate``) Assert ops that the result depends on."""
    from .misc_ops import Assert

    known = numpy_value_or_none(row_splits)
    if known is not None:
        known = np.asarray(known)
        if known.size == 0 or known[0] != 0:
            raise ValueError(f"{name}: row_splits must start with 0, got {known.tolist()}")
        if np.any(np.diff(known) < 0):
            raise ValueError(f"{name}: row_splits must be sorted in ascending order")
        static_rows = values.shape[0] if values.shape.ndims else None
        if static_rows is not None and known[-1] != static_rows:
            raise ValueError(
                f"{name}: the last row split ({known[-1]}) must be the number of values "
                f"({static_rows})"
            )
        return []
    if not validate:
        return []
    nvals = _values_length(values, row_splits.dtype)
    well_formed = math_ops.logical_and(
        math_ops.logical_and(
            math_ops.equal(row_splits[0], 0),
            math_ops.reduce_all(math_ops.greater_equal(row_splits[1:], row_splits[:-1])),
        ),
        math_ops.equal(row_splits[-1], nvals),
    )
    message = f"{name}: row_splits must start at 0, never decrease and end at the number of values"
    return [Assert(well_formed, [message, row_splits, nvals], name="check_row_splits")]


def _from_row_splits(values, row_splits, name=None, validate: bool = True) -> RaggedTensor:
    with name_scope(name or "RaggedFromRowSplits"):
        if not isinstance(values, RaggedTensor):
            values = convert_to_tensor(values, name="values")
        row_splits = _as_splits(row_splits, "row_splits")
        checks = _check_splits(values, row_splits, validate, "RaggedTensor.from_row_splits")
        if checks:
            with row_splits.graph.control_dependencies(checks):
                row_splits = array_ops.identity(row_splits)
        return RaggedTensor(values, row_splits, internal=True)


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """The row splits of rows made of ``segment_ids`` (sorted): row ``i`` holds as many values
    as ``segment_ids`` has ``i``s."""
    with name_scope(name or "SegmentIdsToRaggedSplits"):
        segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
        out_type = _dtypes.as_dtype(out_type or segment_ids.dtype)
        if num_segments is None:
            num_segments = math_ops.add(math_ops.reduce_max(segment_ids), 1)
            num_segments = math_ops.maximum(num_segments, 0)
        num_segments = math_ops.cast(num_segments, segment_ids.dtype)
        ones = array_ops.ones_like(segment_ids, dtype=out_type)
        lengths = unsorted_segment_sum(ones, segment_ids, num_segments)
        return _splits_from_lengths(lengths)


def _splits_from_lengths(lengths: Tensor) -> Tensor:
    zero = array_ops.zeros([1], dtype=lengths.dtype)
    return array_ops.concat([zero, math_ops.cumsum(lengths)], axis=0)


def row_splits_to_segment_ids(splits, name=None, out_type=None) -> Tensor:
    """The row of each value under ``splits`` (``[0, 0, 1, 3]`` for splits ``[0, 2, 3, 3, 4]``)."""
    with name_scope(name or "RaggedSplitsToSegmentIds"):
        splits = _as_splits(splits, "splits")
        out_type = _dtypes.as_dtype(out_type or splits.dtype)
        nvals = splits[-1]
        # Each row start after the first marks its position; the running count is the row.
        starts = splits[1:-1]
        marks = unsorted_segment_sum(
            array_ops.ones_like(starts, dtype=out_type), starts, math_ops.add(nvals, 1)
        )
        return math_ops.cumsum(marks)[:-1]


def _from_row_lengths(values, row_lengths, name=None, validate: bool = True) -> RaggedTensor:
    with name_scope(name or "RaggedFromRowLengths"):
        row_lengths = _as_splits(row_lengths, "row_lengths")
        return _from_row_splits(values, _splits_from_lengths(row_lengths), validate=validate)


def _from_value_rowids(values, value_rowids, nrows=None, name=None, validate=True):
    with name_scope(name or "RaggedFromValueRowIds"):
        value_rowids = _as_splits(value_rowids, "value_rowids")
        splits = segment_ids_to_row_splits(value_rowids, nrows, out_type=value_rowids.dtype)
        return _from_row_splits(values, splits, validate=validate)


def _from_tensor(tensor, ragged_rank: int = 1, name=None, row_splits_dtype=_dtypes.int64):
    """Every row of ``tensor`` in full, its first ``ragged_rank + 1`` dimensions made ragged."""
    with name_scope(name or "RaggedFromTensor"):
        tensor = convert_to_tensor(tensor, name="tensor")
        rank = tensor.shape.ndims
        if rank is None or rank <= ragged_rank:
            raise ValueError(
                f"RaggedTensor.from_tensor needs a tensor of rank > ragged_rank={ragged_rank}, "
                f"got shape {tensor.shape}"
            )
        dims = array_ops.shape(tensor, out_type=row_splits_dtype)
        static = tensor.shape.as_list()
        values = array_ops.reshape(tensor, [-1] + static[ragged_rank + 1 :])
        result = values
        for axis in reversed(range(1, ragged_rank + 1)):
            nrows = math_ops.reduce_prod(dims[:axis])
            row_length = dims[axis]
            splits = array_ops.range(
                0, math_ops.add(math_ops.multiply(nrows, row_length), 1), row_length
            )
            if all(d is not None for d in static[: axis + 1]):
                splits.set_shape([int(np.prod(static[:axis])) + 1])
            result = RaggedTensor(result, splits, internal=True)
        return result


def _as_ragged(value, like: RaggedTensor) -> RaggedTensor:
    """``value`` as a RaggedTensor of ``like``'s ragged rank and splits dtype (a dense value's
    rows taken whole)."""
    if isinstance(value, RaggedTensor):
        return value
    return _from_tensor(value, like.ragged_rank, row_splits_dtype=like.row_splits_dtype)


def constant_value(
    pylist, dtype=None, ragged_rank=None, inner_shape=None, row_splits_dtype="int64"
):
    """The `RaggedTensorValue` of nested Python lists (rows of any length)."""
    splits_dtype = _dtypes.as_dtype(row_splits_dtype).as_numpy_dtype
    if isinstance(pylist, RaggedTensorValue):
        return pylist
    depth = _list_depth(pylist)
    inner_rank = 0 if inner_shape is None else len(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(0, depth - 1 - inner_rank)
    if ragged_rank == 0:
        return np.asarray(pylist, dtype=dtype)
    nested_splits = []
    rows = list(pylist)
    for _ in range(ragged_rank):
        splits = [0]
        items = []
        for row in rows:
            if not isinstance(row, (list, tuple, np.ndarray)):
                raise ValueError(
                    f"ragged constant: {row!r} is a scalar where a row is expected; every "
                    f"value must sit at depth {ragged_rank + 1 + inner_rank}"
                )
            row = list(row)
            for item in row:
                items.append(item)
            splits.append(splits[-1] + len(row))
        nested_splits.append(np.array(splits, dtype=splits_dtype))
        rows = items
    if not rows:
        flat = np.zeros([0] + list(inner_shape or []), dtype=dtype or np.float32)
    else:
        try:
            flat = np.asarray(rows, dtype=dtype)
        except ValueError:
            raise ValueError(
                "ragged constant: the values below the ragged dimensions must all have one "
                f"shape (ragged_rank={ragged_rank})"
            ) from None
    if flat.dtype == np.float64 and dtype is None:
        flat = flat.astype(np.float32)
    if flat.dtype == np.int64 and dtype is None:
        flat = flat.astype(np.int32)
    # The outermost splits start the list (nested_splits[0] is for the outermost rows).
    value = flat
    for splits in reversed(nested_splits[1:]):
        value = RaggedTensorValue(value, splits)
    value = RaggedTensorValue(value, nested_splits[0])
    return value


def _list_depth(value) -> int:
    """How deep the nesting of lists goes, following the first item that is a list."""
    if not isinstance(value, (list, tuple, np.ndarray)):
        return 0
    depths = [_list_depth(item) for item in value]
    return 1 + (max(depths) if depths else 0)


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype="int64") -> RaggedTensor:  # fmt: skip
    """``df.ragged.constant``: a RaggedTensor of constants from nested Python lists, e.g.
    ``constant([[1, 2], [3], [4, 5, 6]])`` (int32 values, int64 splits, as TensorFlow)."""
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype).as_numpy_dtype
    value = constant_value(pylist, dtype, ragged_rank, inner_shape, row_splits_dtype)
    with name_scope(name or "RaggedConstant"):
        if not isinstance(value, RaggedTensorValue):
            return convert_to_tensor(value)
        return _constant_of(value)


def _constant_of(value: RaggedTensorValue) -> RaggedTensor:
    values = value.values
    if isinstance(values, RaggedTensorValue):
        values = _constant_of(values)
    else:
        values = convert_to_tensor(values, name="values")
    return RaggedTensor(values, convert_to_tensor(value.row_splits, name="row_splits"), True)


def placeholder(dtype, ragged_rank: int, value_shape=None, name=None) -> RaggedTensor:
    """``df.ragged.placeholder``: a RaggedTensor to feed (a RaggedTensorValue) of ``dtype``
    values of shape ``value_shape`` each, in ``ragged_rank`` ragged dimensions."""
    from .constant_op import placeholder as dense_placeholder

    if ragged_rank < 1:
        raise ValueError(f"ragged.placeholder needs ragged_rank >= 1, got {ragged_rank}")
    inner = list(TensorShape(value_shape or []).as_list())
    with name_scope(name or "RaggedPlaceholder"):
        result = dense_placeholder(dtype, [None] + inner, name="flat_values")
        for i in reversed(range(ragged_rank)):
            splits = dense_placeholder(_dtypes.int64, [None], name=f"row_splits_{i}")
            result = RaggedTensor(result, splits, internal=True)
    return result


# -- the row partition -----------------------------------------------------------------------------
def _row_lengths(rt: RaggedTensor, axis: int = 1, name=None) -> Tensor:
    with name_scope(name or "RaggedRowLengths"):
        if axis == 1:
            return math_ops.subtract(rt.row_splits[1:], rt.row_splits[:-1])
        if axis < 1 or axis > rt.ragged_rank:
            raise ValueError(f"row_lengths: axis {axis} is not a ragged dimension of {rt.shape}")
        return rt.with_values(_row_lengths(rt.values, axis - 1))


def _nrows(rt: RaggedTensor, out_type=None, name=None) -> Tensor:
    with name_scope(name or "RaggedNRows"):
        splits_length = rt.row_splits.shape[0]
        if splits_length is not None:
            nrows = convert_to_tensor(splits_length - 1, dtype=rt.row_splits_dtype)
        else:
            nrows = math_ops.subtract(
                array_ops.shape(rt.row_splits, out_type=rt.row_splits_dtype)[0], 1
            )
        return nrows if out_type is None else math_ops.cast(nrows, out_type)


def _value_rowids(rt: RaggedTensor, name=None) -> Tensor:
    return row_splits_to_segment_ids(rt.row_splits, name=name or "RaggedValueRowIds")


def _longest_row(splits: Tensor) -> Tensor:
    """The length of the longest row under ``splits``; 0 when there is no row."""
    lengths = math_ops.subtract(splits[1:], splits[:-1])
    return math_ops.maximum(math_ops.reduce_max(lengths), 0)


def _columns(splits: Tensor) -> tuple:
    """The row of each value under ``splits`` and its position in that row."""
    rowids = row_splits_to_segment_ids(splits)
    column = math_ops.subtract(
        array_ops.range(0, splits[-1], dtype=splits.dtype), _g.gather(splits, rowids)
    )
    return rowids, column


def _to_sparse(rt: RaggedTensor, name=None):
    """`RaggedTensor.to_sparse`: each flat value's index is its outermost row, then its
    position in each ragged dimension (found from the innermost splits outwards) and in the
    dense dimensions inside (made ragged dimensions of full rows first)."""
    from ..framework.sparse_tensor import SparseTensor

    with name_scope(name or "RaggedToSparse"):
        inner_rank = rt.flat_values.shape.ndims
        if inner_rank is None:
            raise ValueError("RaggedTensor.to_sparse needs flat_values of known rank")
        if inner_rank > 1:
            dense_as_ragged = _from_tensor(
                rt.flat_values, ragged_rank=inner_rank - 1, row_splits_dtype=rt.row_splits_dtype
            )
            rt = rt.with_flat_values(dense_as_ragged)
        splits = [math_ops.cast(s, _dtypes.int64) for s in rt.nested_row_splits]
        position = array_ops.range(0, splits[-1][-1], dtype=_dtypes.int64)
        columns = []
        for level_splits in reversed(splits):
            rowids, column = _columns(level_splits)
            columns.append(_g.gather(column, position))
            position = _g.gather(rowids, position)
        columns.append(position)
        indices = array_ops.stack(columns[::-1], axis=1)
        outer = array_ops.shape(splits[0], out_type=_dtypes.int64)[:1] - 1
        widths = array_ops.stack([_longest_row(s) for s in splits])
        dense_shape = array_ops.concat([outer, widths], axis=0)
        return SparseTensor(indices, rt.flat_values, dense_shape)


# The dtypes whose rows `_to_tensor` scatters with a segment sum; others it gathers.
_SUMMABLE_TYPES = math_ops.ARITHMETIC_TYPES


def _scatter_by_gather(values: Tensor, position: Tensor, cells: Tensor, default_value):
    """``values`` put at ``position`` among ``cells`` rows (``default_value``, or the dtype's
    zero, elsewhere), for dtypes no segment sum takes (strings, bools): each cell gathers
    its value, or the one appended after the values for an empty cell."""
    if default_value is None:
        fill = array_ops.zeros_like(values[:1])
    else:
        default = convert_to_tensor(default_value, dtype=values.dtype, name="default_value")
        fill = broadcast_to(default, array_ops.shape(values[:1]))
    count = array_ops.shape(values, out_type=position.dtype)[:1]
    slots = unsorted_segment_sum(
        array_ops.range(1, count[0] + 1, dtype=position.dtype), position, cells
    )
    source = math_ops.where_v2(math_ops.greater(slots, 0), slots - 1, count[0])
    return _g.gather(array_ops.concat([values, fill], axis=0), source)


def _to_tensor(rt: RaggedTensor, default_value=None, name=None) -> Tensor:
    """Rows padded with ``default_value`` to the longest one, dimension by dimension."""
    with name_scope(name or "RaggedToTensor"):
        values = rt.values
        if isinstance(values, RaggedTensor):
            values = _to_tensor(values, default_value)
        splits = rt.row_splits
        nrows = _nrows(rt)
        width = _longest_row(splits)
        rowids, column = _columns(splits)
        position = math_ops.add(math_ops.multiply(rowids, width), column)
        cells = math_ops.multiply(nrows, width)
        if values.dtype not in _SUMMABLE_TYPES:
            dense = _scatter_by_gather(values, position, cells, default_value)
            outer = array_ops.stack([nrows, width])
            inner = array_ops.shape(dense, out_type=splits.dtype)[1:]
            result = array_ops.reshape(dense, array_ops.concat([outer, inner], axis=0))
            result.set_shape(TensorShape([rt.shape[0], None]).concatenate(values.shape[1:]))
            return result
        dense = unsorted_segment_sum(values, position, cells)
        if default_value is not None:
            default = convert_to_tensor(default_value, dtype=values.dtype)
            filled = unsorted_segment_sum(array_ops.ones_like(position), position, cells)
            inner_shape = array_ops.shape(dense, out_type=splits.dtype)[1:]
            mask = array_ops.reshape(
                math_ops.greater(filled, 0),
                array_ops.concat(
                    [
                        array_ops.shape(filled, out_type=splits.dtype),
                        array_ops.ones_like(inner_shape),
                    ],
                    0,
                ),
            )
            dense = math_ops.where_v2(mask, dense, default)
        outer = array_ops.stack([nrows, width])
        inner = array_ops.shape(dense, out_type=splits.dtype)[1:]
        result = array_ops.reshape(dense, array_ops.concat([outer, inner], axis=0))
        result.set_shape(TensorShape([rt.shape[0], None]).concatenate(values.shape[1:]))
        return result


def map_flat_values(op, *args, **kwargs):
    """``op`` applied to the ``flat_values`` of the RaggedTensors among its arguments (which
    must share one row partition); the result has that partition.  Non-ragged arguments are
    passed as they are."""
    partition = []

    def flat(value):
        if isinstance(value, RaggedTensor):
            partition.append(value)
            return value.flat_values
        if isinstance(value, (list, tuple)):
            return type(value)(flat(v) for v in value)
        if isinstance(value, dict):
            return {k: flat(v) for k, v in value.items()}
        return value

    args = [flat(a) for a in args]
    kwargs = {k: flat(v) for k, v in kwargs.items()}
    if not partition:
        return op(*args, **kwargs)
    first = partition[0]
    for other in partition[1:]:
        if other.ragged_rank != first.ragged_rank:
            raise ValueError(
                f"map_flat_values: RaggedTensors of ragged_rank {first.ragged_rank} and "
                f"{other.ragged_rank} do not share a row partition"
            )
    return first.with_flat_values(op(*args, **kwargs))


# -- elementwise operators -------------------------------------------------------------------------
def _elementwise(fn, reverse: bool = False):
    def operator(self, other):
        if not isinstance(other, RaggedTensor):
            other = convert_to_tensor(other, preferred_dtype=self.dtype)
            inner_rank = self.flat_values.shape.ndims - 1
            if other.shape.ndims is None or other.shape.ndims > inner_rank:
                raise ValueError(
                    "A RaggedTensor combines elementwise with a scalar, a RaggedTensor of the "
                    "same rows, or a tensor that broadcasts against each of its values (shape "
                    f"{self.flat_values.shape[1:]}); got shape {other.shape}"
                )
        pair = (other, self) if reverse else (self, other)
        return map_flat_values(fn, *pair)

    return operator


def _negate(self):
    return map_flat_values(math_ops.negative, self)


for _name, _fn in {
    "add": math_ops.add,
    "sub": math_ops.subtract,
    "mul": math_ops.multiply,
    "truediv": math_ops.truediv,
    "floordiv": math_ops.floordiv,
    "mod": math_ops.mod,
    "pow": math_ops.pow,
}.items():
    register_operator(f"__{_name}__", _elementwise(_fn))
    register_operator(f"__r{_name}__", _elementwise(_fn, reverse=True))
for _name, _fn in {
    "lt": math_ops.less,
    "le": math_ops.less_equal,
    "gt": math_ops.greater,
    "ge": math_ops.greater_equal,
    "and": math_ops.logical_and,
    "or": math_ops.logical_or,
}.items():
    register_operator(f"__{_name}__", _elementwise(_fn))
register_operator("__neg__", _negate)
register_operator("__abs__", lambda self: map_flat_values(math_ops.abs, self))
register_operator("__invert__", lambda self: map_flat_values(math_ops.logical_not, self))


# -- indexing --------------------------------------------------------------------------------------
def _rank(rt: RaggedTensor) -> int:
    inner = rt.flat_values.shape.ndims
    if inner is None:
        raise ValueError("Indexing a RaggedTensor needs flat_values of known rank")
    return rt.ragged_rank + inner


def _getitem(self: RaggedTensor, key):
    """``rt[key]``: see the module docstring for what a key may hold."""
    key = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise ValueError("A RaggedTensor index may hold at most one Ellipsis")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        fill = _rank(self) - (len(key) - 1)
        key = key[:at] + (slice(None),) * max(fill, 0) + key[at + 1 :]
    if len(key) > _rank(self):
        raise ValueError(f"Too many indices for RaggedTensor of shape {self.shape}: {key!r}")
    with name_scope("RaggedGetItem"):
        return _getitem_in(self, key)


def _is_full(k) -> bool:
    return isinstance(k, slice) and k.start is None and k.stop is None and k.step is None


def _getitem_in(value, key: tuple):
    if not key:
        return value
    if not isinstance(value, RaggedTensor):
        return value[key]
    first, rest = key[0], key[1:]
    if _is_full(first):
        return _getitem_inner(value, rest)
    if isinstance(first, slice):
        return _getitem_inner(_slice_rows(value, first), rest)
    if isinstance(first, (int, np.integer, Tensor)) and not isinstance(first, bool):
        row = _take_row(value, first)
        return _getitem_in(row, rest)
    raise TypeError(f"RaggedTensor indices must be ints, slices or '...', got {first!r}")


def _getitem_inner(rt: RaggedTensor, key: tuple):
    """``rt[:, *key]``: ``key`` applied within each row."""
    if not key:
        return rt
    first, rest = key[0], key[1:]
    if _is_full(first):
        if isinstance(rt.values, RaggedTensor):
            return rt.with_values(_getitem_inner(rt.values, rest))
        return rt.with_values(rt.values[(slice(None),) + rest] if rest else rt.values)
    if isinstance(first, slice):
        sliced = _slice_within_rows(rt, first)
        return _getitem_inner(sliced, (slice(None),) + rest) if rest else sliced
    raise ValueError(
        "Cannot index into an inner ragged dimension: a RaggedTensor's ragged dimension can "
        f"be sliced, not indexed with {first!r}"
    )


def _check_unit_step(index: slice) -> None:
    if index.step is not None and not (
        isinstance(index.step, (int, np.integer)) and index.step == 1
    ):
        raise ValueError(f"RaggedTensor slices take step 1 only, got {index.step!r}")


def _bound(value, length: Tensor, default) -> Tensor:
    """``value`` (an int, a Tensor, or None for ``default``) as an index into rows of
    ``length`` elements, Python's way: negative counts from the end, then clipped."""
    if value is None:
        return default
    bound = math_ops.cast(convert_to_tensor(value), length.dtype)
    bound = math_ops.where_v2(math_ops.less(bound, 0), math_ops.add(length, bound), bound)
    return math_ops.minimum(math_ops.maximum(bound, 0), length)


def _slice_rows(rt: RaggedTensor, index: slice) -> RaggedTensor:
    """``rt[start:stop]``: whole rows."""
    _check_unit_step(index)
    splits = rt.row_splits
    nrows = _nrows(rt)
    start = _bound(index.start, nrows, convert_to_tensor(0, dtype=splits.dtype))
    stop = math_ops.maximum(_bound(index.stop, nrows, nrows), start)
    new_splits = math_ops.subtract(splits[start : stop + 1], splits[start])
    values = _take_rows_of_values(rt.values, splits[start], splits[stop])
    return RaggedTensor(values, new_splits, internal=True)


def _take_rows_of_values(values, begin: Tensor, end: Tensor):
    if isinstance(values, RaggedTensor):
        return _slice_rows(values, slice(begin, end))
    return values[begin:end]


def _take_row(rt: RaggedTensor, index):
    splits = rt.row_splits
    nrows = _nrows(rt)
    row = math_ops.cast(convert_to_tensor(index), splits.dtype)
    row = math_ops.where_v2(math_ops.less(row, 0), math_ops.add(nrows, row), row)
    return _take_rows_of_values(rt.values, splits[row], splits[row + 1])


def _slice_within_rows(rt: RaggedTensor, index: slice) -> RaggedTensor:
    """``rt[:, start:stop]``: each row's ``start:stop`` (clipped, Python's negatives)."""
    _check_unit_step(index)
    splits = rt.row_splits
    starts, limits = splits[:-1], splits[1:]
    lengths = math_ops.subtract(limits, starts)
    begin = _bound(index.start, lengths, array_ops.zeros_like(lengths))
    end = math_ops.maximum(_bound(index.stop, lengths, lengths), begin)
    selected = ragged_range(math_ops.add(starts, begin), math_ops.add(starts, end))
    return RaggedTensor(_gather_rows(rt.values, selected.values), selected.row_splits, True)


def _gather_rows(values, indices: Tensor):
    """Rows ``indices`` of ``values`` (a Tensor, or a RaggedTensor whose rows come whole)."""
    if not isinstance(values, RaggedTensor):
        return _g.gather(values, indices)
    splits = values.row_splits
    indices = math_ops.cast(indices, splits.dtype)
    picked = ragged_range(_g.gather(splits[:-1], indices), _g.gather(splits[1:], indices))
    return RaggedTensor(_gather_rows(values.values, picked.values), picked.row_splits, True)


register_operator("__getitem__", _getitem)


# -- concat ----------------------------------------------------------------------------------------
def _concat(values, axis, name: str = "concat"):
    """``df.concat`` with a RaggedTensor among ``values`` (the others taken as full rows)."""
    values = list(values)
    like = next(v for v in values if isinstance(v, RaggedTensor))
    with name_scope(name or "RaggedConcat"):
        rts = [_as_ragged(v, like) for v in values]
        ranks = {_rank(rt) for rt in rts}
        if len(ranks) != 1:
            raise ValueError(f"concat of RaggedTensors of different ranks: {sorted(ranks)}")
        rank = ranks.pop()
        if not isinstance(axis, (int, np.integer)):
            axis = numpy_value_or_none(convert_to_tensor(axis))
            if axis is None:
                raise ValueError("concat of RaggedTensors needs an axis known when building")
            axis = int(axis)
        if not -rank <= axis < rank:
            raise ValueError(f"concat axis {axis} is out of range for rank {rank}")
        return _concat_at(rts, axis % rank)


def _concat_at(rts: list, axis: int):
    if len(rts) == 1:
        return rts[0]
    if not all(isinstance(rt, RaggedTensor) for rt in rts):
        return array_ops.concat(rts, axis)
    splits_dtype = rts[0].row_splits_dtype
    if any(rt.row_splits_dtype is not splits_dtype for rt in rts):
        raise ValueError("concat of RaggedTensors with int32 and int64 row_splits")
    if axis == 0:
        return _concat_rows(rts)
    if axis == 1:
        return _concat_within_rows(rts)
    # Deeper: each rt has the same rows, and the rows' items are joined along axis - 1.
    return rts[0].with_values(_concat_at([rt.values for rt in rts], axis - 1))


def _concat_rows(rts: list) -> RaggedTensor:
    """The rows of each RaggedTensor in turn."""
    values = _concat_at([rt.values for rt in rts], 0)
    pieces = [rts[0].row_splits]
    for rt in rts[1:]:
        offset = pieces[-1][-1]
        pieces.append(math_ops.add(rt.row_splits[1:], offset))
    return RaggedTensor(values, array_ops.concat(pieces, axis=0), internal=True)


def _concat_within_rows(rts: list) -> RaggedTensor:
    """Row ``i`` is row ``i`` of each RaggedTensor in turn (all have as many rows)."""
    lengths = [_row_lengths(rt) for rt in rts]
    total = lengths[0]
    for length in lengths[1:]:
        total = math_ops.add(total, length)
    splits = _splits_from_lengths(total)
    offset = splits[:-1]
    positions = []
    for length in lengths:
        positions.append(ragged_range(offset, math_ops.add(offset, length)).values)
        offset = math_ops.add(offset, length)
    positions = array_ops.concat(positions, axis=0)
    joined = _concat_at([rt.values for rt in rts], 0)
    count = splits[-1]
    # The value at joined[j] goes to positions[j]; order[k] is the j that lands at k.
    order = unsorted_segment_sum(array_ops.range(0, count, dtype=positions.dtype), positions, count)
    values = _gather_rows(joined, order)
    if isinstance(values, Tensor):
        values.set_shape(TensorShape([None]).concatenate(joined.shape[1:]))
    return RaggedTensor(values, splits, internal=True)


# -- reduce_sum ------------------------------------------------------------------------------------
def _reduce_sum(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                keep_dims=None):  # fmt: skip
    """``df.reduce_sum`` of a RaggedTensor: over everything, the rows (axis 0), a ragged
    dimension (each row's sum, an empty row's is 0), or dense inner dimensions; ``keepdims``
    keeps each reduced dimension with size 1."""
    rt = input_tensor
    axis = reduction_indices if axis is None else axis
    keepdims = bool(keepdims or keep_dims)
    with name_scope(name or "RaggedReduceSum"):
        rank = _rank(rt)
        if axis is None:
            total = math_ops.reduce_sum(rt.flat_values)
            return array_ops.reshape(total, [1] * rank) if keepdims else total
        axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
        axes = sorted({int(a) % rank for a in axes}, reverse=True)
        result = rt
        for a in axes:
            result = _reduce_sum_at(result, a)
            if keepdims:
                result = _expand_at(result, a)
        return result


def _expand_at(value, axis: int):
    """``value`` with a dimension of size 1 inserted at ``axis`` (what ``keepdims`` keeps of a
    reduced dimension); inside a RaggedTensor's values for an inner axis."""
    if not isinstance(value, RaggedTensor):
        return array_ops.expand_dims(value, axis)
    return value.with_values(_expand_at(value.values, axis - 1))


def _reduce_sum_at(value, axis: int):
    if not isinstance(value, RaggedTensor):
        return math_ops.reduce_sum(value, axis=axis)
    if axis == 0:
        # Sum of the rows: row i's j-th item goes to column j.
        splits = value.row_splits
        rowids = row_splits_to_segment_ids(splits)
        column = math_ops.subtract(
            array_ops.range(0, splits[-1], dtype=splits.dtype), _g.gather(splits, rowids)
        )
        width = math_ops.maximum(math_ops.reduce_max(_row_lengths(value)), 0)
        if isinstance(value.values, RaggedTensor):
            raise NotImplementedError("reduce_sum over axis 0 of a RaggedTensor of ragged_rank > 1")
        return unsorted_segment_sum(value.values, column, width)
    if axis == 1:
        rowids = row_splits_to_segment_ids(value.row_splits)
        if isinstance(value.values, RaggedTensor):
            raise NotImplementedError("reduce_sum over axis 1 of a RaggedTensor of ragged_rank > 1")
        return unsorted_segment_sum(value.values, rowids, _nrows(value))
    return value.with_values(_reduce_sum_at(value.values, axis - 1))


def _reduce_mean(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
                 keep_dims=None):  # fmt: skip
    """``df.reduce_mean`` of a RaggedTensor, as TensorFlow's: the `_reduce_sum` of the values
    divided (true division) by that of ones in their places, so an empty row's mean is nan
    and an integer tensor's means are float64."""
    rt = input_tensor
    with name_scope(name or "RaggedReduceMean"):
        total = _reduce_sum(rt, axis, keepdims, None, reduction_indices, keep_dims)
        ones = rt.with_flat_values(array_ops.ones_like(rt.flat_values))
        count = _reduce_sum(ones, axis, keepdims, None, reduction_indices, keep_dims)
        if isinstance(total, RaggedTensor):
            return total.with_flat_values(math_ops.truediv(total.flat_values, count.flat_values))
        return math_ops.truediv(total, count)


register_override("from_row_splits", _from_row_splits)
register_override("from_row_lengths", _from_row_lengths)
register_override("from_value_rowids", _from_value_rowids)
register_override("from_tensor", _from_tensor)
register_override("row_lengths", _row_lengths)
register_override("nrows", _nrows)
register_override("value_rowids", _value_rowids)
register_override("to_tensor", _to_tensor)
register_override("to_sparse", _to_sparse)
register_override("concat", _concat)
register_override("reduce_sum", _reduce_sum)
register_override("reduce_mean", _reduce_mean)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("RaggedRange")

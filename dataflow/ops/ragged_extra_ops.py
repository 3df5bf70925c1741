"""More of ``tf.ragged`` (and the feature crosses of ``tf.sparse``).

- ``ragged.stack``: the values stacked along a new axis 0 or 1 (a ragged result);
- ``ragged.boolean_mask``: the items where ``mask`` is true, rows keeping what is left;
- ``ragged.stack_dynamic_partitions``: row ``i`` holds the items of ``data`` whose partition
  is ``i``, in order;
- ``ragged_fill_empty_rows`` (``RaggedFillEmptyRows``): a default value in each empty row of a
  ragged tensor given by its value row ids, and its gradient ``ragged_fill_empty_rows_grad``;
- ``ragged.cross`` and ``sparse.cross`` (``RaggedCross``): per row, every combination of one
  feature of each input, joined with ``"_X_"`` (the first input varies slowest), as strings.
"""

from __future__ import annotations

import collections
import itertools

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, control_dependencies, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.ragged_tensor import RaggedTensor
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from . import array_ops, check_ops, extra_array_ops, extra_math_ops, math_ops, segment_ops
from . import gather_ops as _g

__all__ = [
    "boolean_mask",
    "cross",
    "cross_hashed",
    "ragged_fill_empty_rows",
    "ragged_fill_empty_rows_grad",
    "sparse_cross",
    "sparse_cross_hashed",
    "stack",
    "stack_dynamic_partitions",
]


def _ragged_ops():
    from . import ragged_ops

    return ragged_ops


# -- stack -----------------------------------------------------------------------------------------
def _as_ragged_rows(value, ragged_rank: int) -> RaggedTensor:
    if isinstance(value, RaggedTensor):
        return value
    return RaggedTensor.from_tensor(value, ragged_rank=ragged_rank)


def stack(values, axis=0, name=None) -> RaggedTensor:
    """The ``values`` (RaggedTensors or Tensors of one rank) stacked along a new ``axis``
    (0 or 1, or the negative of one of them): a RaggedTensor."""
    ragged_ops = _ragged_ops()
    values = list(values)
    if not values:
        raise ValueError("ragged.stack needs at least one value")
    with name_scope(name, "RaggedConcat"):
        values = [v if isinstance(v, RaggedTensor) else convert_to_tensor(v) for v in values]
        ranks = {
            ragged_ops._rank(v) if isinstance(v, RaggedTensor) else v.shape.ndims for v in values
        }
        if len(ranks) != 1 or None in ranks:
            raise ValueError(f"ragged.stack: the values must have one known rank, got {ranks}")
        rank = ranks.pop()
        if not -(rank + 1) <= axis <= rank:
            raise ValueError(f"ragged.stack: axis {axis} is out of range for rank {rank + 1}")
        axis %= rank + 1
        if axis > 1:
            raise ValueError("ragged.stack supports axis 0 and 1 (and their negatives)")
        if rank == 1 and axis == 1:
            raise ValueError("ragged.stack of vectors along axis 1 is a dense stack")
        ragged_rank = max(
            [v.ragged_rank for v in values if isinstance(v, RaggedTensor)], default=rank - 1
        )
        rts = [_as_ragged_rows(v, ragged_rank) if rank > 1 else v for v in values]
        if rank == 1:  # vectors: each becomes one row
            lengths = [array_ops.shape(v, out_type=_dtypes.int64)[:1] for v in rts]
            splits = math_ops.cumsum(array_ops.concat([[0]] + lengths, 0))
            return RaggedTensor(array_ops.concat(rts, 0), splits, internal=True)
        expanded = []
        for rt in rts:
            nrows = rt.nrows(out_type=rt.row_splits_dtype)
            if axis == 0:
                splits = array_ops.stack([array_ops.zeros_like(nrows), nrows])
            else:
                splits = array_ops.range(nrows + 1, dtype=rt.row_splits_dtype)
            expanded.append(RaggedTensor(rt, splits, internal=True))
        return ragged_ops._concat_at(expanded, axis)


# -- boolean_mask ----------------------------------------------------------------------------------
def boolean_mask(data, mask, name=None):
    """The items of ``data`` where ``mask`` (of ``data``'s outer shape: a Tensor or a
    RaggedTensor of the same rows) is true; each row keeps what is left of it (a RaggedTensor,
    unless ``mask`` is a vector and ``data`` a Tensor)."""
    with name_scope(name, "RaggedMask"):
        if not isinstance(mask, RaggedTensor):
            mask = convert_to_tensor(mask, _dtypes.bool, name="mask")
            if mask.shape.ndims is None:
                raise ValueError("ragged.boolean_mask needs a mask of known rank")
        if not isinstance(data, RaggedTensor):
            data = convert_to_tensor(data, name="data")
        return _masked(data, mask)


def _masked(data, mask):
    ragged_ops = _ragged_ops()
    if isinstance(mask, Tensor) and mask.shape.ndims == 1:
        if not isinstance(data, RaggedTensor):
            return extra_array_ops.boolean_mask(data, mask)
        rows = math_ops.cast(math_ops.where(mask)[:, 0], data.row_splits_dtype)
        return ragged_ops._gather_rows(data, rows)
    if isinstance(mask, Tensor):
        mask = RaggedTensor.from_tensor(mask, ragged_rank=mask.shape.ndims - 1)
    if not isinstance(data, RaggedTensor):
        data = RaggedTensor.from_tensor(data, ragged_rank=mask.ragged_rank)
    values = _masked(data.values, mask.values)
    if isinstance(mask.values, RaggedTensor):  # the rows below keep their place
        return RaggedTensor(values, data.row_splits, internal=True)
    kept = math_ops.cast(mask.values, data.row_splits_dtype)
    nrows = mask.nrows(out_type=data.row_splits_dtype)
    lengths = segment_ops.unsorted_segment_sum(kept, mask.value_rowids(), nrows)
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)


# -- stack_dynamic_partitions ----------------------------------------------------------------------
def stack_dynamic_partitions(data, partitions, num_partitions, name=None) -> RaggedTensor:
    """A RaggedTensor of ``num_partitions`` rows: row ``i`` holds, in order, the items of
    ``data`` (a Tensor or RaggedTensor) whose ``partitions`` entry is ``i``."""
    ragged_ops = _ragged_ops()
    with name_scope(name, "SegmentStack"):
        if not isinstance(data, RaggedTensor):
            data = convert_to_tensor(data, name="data")
        partitions = convert_to_tensor(partitions, name="partitions")
        if partitions.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"partitions must be int32 or int64, got {partitions.dtype.name}")
        partitions = math_ops.cast(partitions, _dtypes.int64)
        checks = [
            check_ops.assert_non_negative(partitions, message="partitions must be non-negative"),
            check_ops.assert_less(
                partitions,
                math_ops.cast(num_partitions, _dtypes.int64),
                message="partitions must be less than num_partitions",
            ),
        ]
        with control_dependencies(checks):
            order = extra_array_ops.argsort(partitions, stable=True)
        counts = extra_math_ops.bincount(
            partitions, minlength=num_partitions, maxlength=num_partitions, dtype=_dtypes.int64
        )
        splits = array_ops.concat([[0], math_ops.cumsum(counts)], 0)
        values = ragged_ops._gather_rows(data, order)
        return RaggedTensor(values, splits, internal=True)


# -- RaggedFillEmptyRows ---------------------------------------------------------------------------
def _infer_fill(op):
    rowids, values, nrows, default = op.inputs
    if values.dtype != default.dtype:
        raise TypeError(f"default_value is {default.dtype.name}, values are {values.dtype.name}")
    return [
        (_dtypes.int64, TensorShape([None])),
        (values.dtype, TensorShape([None])),
        (_dtypes.bool, TensorShape([None])),
        (_dtypes.int64, rowids.shape),
    ]


def _fill_kernel(attrs):
    def fill(value_rowids, values, nrows, default_value):
        rowids = np.asarray(value_rowids, dtype=np.int64)
        values = np.asarray(values)
        nrows = int(nrows)
        if rowids.shape[0] != values.shape[0]:
            raise InvalidArgumentError(
                None, None, "value_rowids and values must have the same length"
            )
        if rowids.size and (np.any(np.diff(rowids) < 0) or rowids[0] < 0 or rowids[-1] >= nrows):
            raise InvalidArgumentError(
                None, None, f"value_rowids must be sorted and in [0, {nrows}): {rowids}"
            )
        counts = np.bincount(rowids, minlength=nrows)[:nrows]
        empty = counts == 0
        per_row = np.where(empty, 1, counts)
        starts = np.concatenate([[0], np.cumsum(per_row)[:-1]]).astype(np.int64)
        total = int(per_row.sum())
        out_rowids = np.repeat(np.arange(nrows, dtype=np.int64), per_row)
        out_values = np.empty((total,) + values.shape[1:], dtype=values.dtype)
        out_values[starts[empty]] = default_value
        first = np.concatenate([[0], np.cumsum(counts)[:-1]]) if nrows else np.zeros(0, int)
        reverse = (starts[rowids] + np.arange(rowids.size) - first[rowids]).astype(np.int64)
        out_values[reverse] = values
        return out_rowids, out_values, empty, reverse

    return fill


define_op("RaggedFillEmptyRows", _infer_fill, _fill_kernel)


def _fill_grad_kernel(attrs):
    def fill_grad(reverse_index_map, grad_values):
        grad_values = np.asarray(grad_values)
        d_values = grad_values[np.asarray(reverse_index_map, dtype=np.int64)]
        d_default = grad_values.sum(axis=0) - d_values.sum(axis=0)
        return d_values, np.asarray(d_default, dtype=grad_values.dtype)

    return fill_grad


define_op(
    "RaggedFillEmptyRowsGrad",
    lambda op: [
        (op.inputs[1].dtype, op.inputs[0].shape.concatenate(op.inputs[1].shape[1:])),
        (op.inputs[1].dtype, TensorShape([])),
    ],
    _fill_grad_kernel,
)


def ragged_fill_empty_rows(value_rowids, values, nrows, default_value, name=None):
    """``(output_value_rowids, output_values, empty_row_indicator, reverse_index_map)``: the
    ragged tensor of ``nrows`` rows whose ``values`` are in rows ``value_rowids`` (sorted),
    with ``default_value`` added to each empty row; which rows were empty; and where each of
    ``values`` went."""
    values = convert_to_tensor(values, name="values")
    inputs = [
        convert_to_tensor(value_rowids, _dtypes.int64, name="value_rowids"),
        values,
        convert_to_tensor(nrows, _dtypes.int64, name="nrows"),
        convert_to_tensor(default_value, values.dtype, name="default_value"),
    ]
    outputs = apply_op("RaggedFillEmptyRows", inputs, {}, name or "RaggedFillEmptyRows").outputs
    return _FillEmptyRows(*outputs)


def ragged_fill_empty_rows_grad(reverse_index_map, grad_values, name=None):
    """``(d_values, d_default_value)``: the gradient of `ragged_fill_empty_rows` with respect
    to its values (gathered back by ``reverse_index_map``) and default value (the rest)."""
    inputs = [
        convert_to_tensor(reverse_index_map, _dtypes.int64, name="reverse_index_map"),
        convert_to_tensor(grad_values, name="grad_values"),
    ]
    outputs = apply_op(
        "RaggedFillEmptyRowsGrad", inputs, {}, name or "RaggedFillEmptyRowsGrad"
    ).outputs
    return _FillEmptyRowsGrad(*outputs)


_FillEmptyRows = collections.namedtuple(
    "RaggedFillEmptyRows",
    ["output_value_rowids", "output_values", "empty_row_indicator", "reverse_index_map"],
)
_FillEmptyRowsGrad = collections.namedtuple(
    "RaggedFillEmptyRowsGrad", ["d_values", "d_default_value"]
)


# -- crosses ---------------------------------------------------------------------------------------
def _infer_cross(op):
    for t in op.inputs:
        if t.dtype not in (_dtypes.string, _dtypes.int64, _dtypes.int32):
            raise TypeError(f"cross takes string or integer features, got {t.dtype.name}")
    out = _dtypes.int64 if op.attrs.get("hashed") else _dtypes.string
    return [(out, TensorShape([None])), (_dtypes.int64, TensorShape([None]))]


_MASK64 = (1 << 64) - 1
_CAT_MUL = 0xC6A4A7935BD1E995


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def _fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TensorFlow's ``FingerprintCat64``: two fingerprints combined into one."""
    result = fp1 ^ _CAT_MUL
    result ^= (_shift_mix((fp2 * _CAT_MUL) & _MASK64) * _CAT_MUL) & _MASK64
    result = (result * _CAT_MUL) & _MASK64
    result = (_shift_mix(result) * _CAT_MUL) & _MASK64
    return _shift_mix(result)


def _hashed(features, num_buckets: int, hash_key: int) -> int:
    """TensorFlow's hashed cross of one combination: starting from ``hash_key``, each feature's
    hash (FarmHash's Fingerprint64 of a string; an integer as it is) combined in turn; modulo
    ``num_buckets`` when it is positive."""
    from .string_hash import fingerprint64

    value = hash_key
    for feature in features:
        feature_hash = fingerprint64(feature) if isinstance(feature, bytes) else feature & _MASK64
        value = _fingerprint_cat64(value, feature_hash)
    return value % num_buckets if num_buckets > 0 else value


def _text(value) -> bytes:
    if isinstance(value, bytes):
        return value
    return str(int(value)).encode()


def _cross_kernel(attrs):
    separator = attrs["separator"].encode()
    hashed = attrs.get("hashed", False)
    num_buckets, hash_key = attrs.get("num_buckets", 0), attrs.get("hash_key", 0)

    def cross(*parts):
        count = len(parts) // 2
        splits_list = [np.asarray(parts[2 * k + 1], dtype=np.int64) for k in range(count)]
        values_list = [np.asarray(parts[2 * k]).reshape(-1) for k in range(count)]
        nrows = {len(s) - 1 for s in splits_list}
        if len(nrows) != 1:
            raise InvalidArgumentError(None, None, "cross: inputs have different numbers of rows")
        out, out_splits = [], [0]
        for row in range(nrows.pop()):
            features = [
                [
                    (v if isinstance(v, bytes) else int(v)) if hashed else _text(v)
                    for v in values[splits[row] : splits[row + 1]]
                ]
                for values, splits in zip(values_list, splits_list)
            ]
            combinations = itertools.product(*features)
            if hashed:
                out.extend(_hashed(c, num_buckets, hash_key) for c in combinations)
            else:
                out.extend(separator.join(c) for c in combinations)
            out_splits.append(len(out))
        if hashed:
            return np.array(out, dtype=np.uint64).astype(np.int64), np.asarray(out_splits, np.int64)
        return np.array(out, dtype=object).reshape(len(out)), np.asarray(out_splits, np.int64)

    return cross


define_op("RaggedCross", _infer_cross, _cross_kernel)


def _as_rows(value):
    """``(values, row_splits)`` of a cross input: a RaggedTensor (of one ragged dimension), a
    2-D Tensor, or a SparseTensor (its rows' values in order)."""
    from ..framework.sparse_tensor import SparseTensor

    if isinstance(value, RaggedTensor):
        if value.ragged_rank != 1:
            raise ValueError("cross takes RaggedTensors of ragged_rank 1")
        return value.values, math_ops.cast(value.row_splits, _dtypes.int64)
    if isinstance(value, SparseTensor):
        nrows = value.dense_shape[0]
        counts = extra_math_ops.bincount(
            math_ops.cast(value.indices[:, 0], _dtypes.int32),
            minlength=math_ops.cast(nrows, _dtypes.int32),
            maxlength=math_ops.cast(nrows, _dtypes.int32),
            dtype=_dtypes.int64,
        )
        return value.values, array_ops.concat([[0], math_ops.cumsum(counts)], 0)
    value = convert_to_tensor(value)
    if value.shape.ndims != 2:
        raise ValueError(f"cross takes 2-D Tensors, got shape {value.shape}")
    shape = array_ops.shape(value, out_type=_dtypes.int64)
    splits = array_ops.range(shape[0] + 1, dtype=_dtypes.int64) * shape[1]
    return array_ops.reshape(value, [-1]), splits


# TensorFlow's default key of hashed crosses
_DEFAULT_HASH_KEY = 0xDECAFCAFFE


def _cross(inputs, separator: str, name: str, num_buckets=None, hash_key=None):
    inputs = list(inputs)
    if not inputs:
        raise ValueError("cross needs at least one input")
    flat = []
    for value in inputs:
        flat.extend(_as_rows(value))
    attrs = {"separator": separator}
    if num_buckets is not None:
        if num_buckets < 0:
            raise ValueError(f"num_buckets must be >= 0, got {num_buckets}")
        key = _DEFAULT_HASH_KEY if hash_key is None else int(hash_key)
        attrs.update(hashed=True, num_buckets=int(num_buckets), hash_key=key & _MASK64)
    values, splits = apply_op("RaggedCross", flat, attrs, name).outputs
    return values, splits


def cross(inputs, name=None) -> RaggedTensor:
    """Per row, every combination of one feature of each input joined with ``"_X_"`` (a
    RaggedTensor of strings); integers are written in decimal."""
    with name_scope(name, "RaggedCross"):
        values, splits = _cross(inputs, "_X_", "RaggedCross")
        return RaggedTensor(values, splits, internal=True)


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None) -> RaggedTensor:
    """`cross` with each combination hashed as TensorFlow hashes it (FarmHash fingerprints
    combined from ``hash_key``; modulo ``num_buckets`` when it is positive): int64 values."""
    with name_scope(name, "RaggedCross"):
        values, splits = _cross(inputs, "", "RaggedCross", num_buckets, hash_key)
        return RaggedTensor(values, splits, internal=True)


def sparse_cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """`cross_hashed` as a SparseTensor."""
    with name_scope(name, "SparseCrossHashed"):
        values, splits = _cross(inputs, "", "SparseCrossHashed", num_buckets, hash_key)
        return _as_sparse(values, splits)


def sparse_cross(inputs, name=None, separator=None):
    """`cross` as a SparseTensor (``separator`` joins the features, ``"_X_"`` by default)."""
    with name_scope(name, "SparseCross"):
        values, splits = _cross(inputs, "_X_" if separator is None else separator, "SparseCross")
        return _as_sparse(values, splits)


def _as_sparse(values, splits):
    from ..framework.sparse_tensor import SparseTensor

    rt = RaggedTensor(values, splits, internal=True)
    rows = rt.value_rowids()
    columns = array_ops.range(array_ops.size(values, out_type=_dtypes.int64), dtype=_dtypes.int64)
    columns = columns - _g.gather(splits, rows)
    lengths = splits[1:] - splits[:-1]
    width = math_ops.reduce_max(array_ops.concat([lengths, [0]], 0))
    nrows = array_ops.shape(splits, out_type=_dtypes.int64)[0] - 1
    indices = array_ops.stack([rows, columns], axis=1)
    return SparseTensor(indices, values, array_ops.stack([nrows, width]))


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402


@RegisterGradient("RaggedFillEmptyRows")
def _fill_empty_rows_grad(op, unused_rowids, grad_values, *unused):
    d_values, d_default = ragged_fill_empty_rows_grad(op.outputs[3], grad_values)
    return None, d_values, None, d_default


for _type in ("RaggedCross", "RaggedFillEmptyRowsGrad"):
    NotDifferentiable(_type)

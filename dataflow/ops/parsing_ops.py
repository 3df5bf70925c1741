"""Parsing serialized ``tf.train.Example`` protos: ``tf.io.parse_example`` and
``parse_single_example`` with ``FixedLenFeature`` (a dense tensor of a fixed shape, or its
default where the example lacks the key) and ``VarLenFeature`` (a SparseTensor of the values,
one row per example).

The protos are read from their wire format here (Example > Features > map<string, Feature>,
each Feature a BytesList, FloatList or Int64List), so no protobuf package is needed.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import MAX_ARRAY_BYTES
from ..framework.errors import InvalidArgumentError
from ..framework.graph import name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.sparse_tensor import SparseTensor
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from . import gather_ops
from .example_format import (  # noqa: F401 - defined there, reached here too
    _TYPE_NAMES,
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    SparseFeature,
    VarLenFeature,
    _default_array,
    _feature_values,
    _fields,
    _parse_example_proto,
    _partition,
    _RowLengths,
    _RowLimits,
    _RowSplits,
    _RowStarts,
    _typed,
    _UniformRowLength,
    _varint,
)
from .sequence_parsing_ops import (  # noqa: F401 - defined there, reached here too
    parse_sequence_example,
    parse_single_sequence_example,
)

__all__ = [
    "decode_compressed",
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "SparseFeature",
    "VarLenFeature",
    "parse_example",
    "parse_single_example",
]


# -- the ParseExample op ---------------------------------------------------------------------------
def _infer_parse_example(op):
    serialized = op.inputs[0]
    batched = op.attrs["batched"]
    batch = [serialized.shape[0] if serialized.shape.ndims else None] if batched else []
    sparse_types = op.attrs["sparse_types"]
    outputs = [(_dtypes.int64, TensorShape([None, len(batch) + 1])) for _ in sparse_types]
    outputs += [(dtype, TensorShape([None])) for dtype in sparse_types]
    outputs += [(_dtypes.int64, TensorShape([len(batch) + 1])) for _ in sparse_types]
    dense = zip(op.attrs["dense_types"], op.attrs["dense_shapes"], op.attrs["dense_sequence"])
    for dtype, shape, sequence in dense:
        outputs.append((dtype, TensorShape(batch + ([None] if sequence else []) + list(shape))))
    return outputs


def _parse_example_kernel(attrs):
    sparse_keys, sparse_types = attrs["sparse_keys"], attrs["sparse_types"]
    dense_keys, dense_types = attrs["dense_keys"], attrs["dense_types"]
    dense_shapes, dense_defaults = attrs["dense_shapes"], attrs["dense_defaults"]
    batched, sequences = attrs["batched"], attrs["dense_sequence"]

    def sequence_of(key, dtype, shape, default, examples) -> np.ndarray:
        size = int(np.prod(shape, dtype=np.int64))
        rows = []
        for b, features in enumerate(examples):
            _, found = values_of(features, key, dtype, b)
            if size == 0 or len(found) % size:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Error while parsing feature with key {key}: number of elements should "
                    f"be divisible by {size}, found {len(found)} instead",
                )
            rows.append(_typed(found, dtype).reshape((-1, *shape)))
        longest = max((len(r) for r in rows), default=0)
        pad = default if default is not None else (b"" if dtype == _dtypes.string else 0)
        out = np.empty((len(rows), longest, *shape), dtype=_typed([], dtype).dtype)
        out[...] = pad
        for b, row in enumerate(rows):
            out[b, : len(row)] = row
        return out if batched else out[0]

    def values_of(features, key, dtype, index):
        kind, values = features.get(key, (None, []))
        if kind is not None and values and kind != dtype:
            raise InvalidArgumentError(
                None,
                None,
                f"Name: <unknown>, Key: {key}, Index: {index}.  Data types don't match. "
                f"Data type: {_TYPE_NAMES[kind]} but expected type: {_TYPE_NAMES[dtype]}",
            )
        return kind, values

    def parse_example(serialized):
        records = (
            [bytes(s) for s in np.ravel(serialized)] if batched else [bytes(serialized.item())]
        )
        try:
            examples = [_parse_example_proto(r) for r in records]
        except ValueError as e:
            raise InvalidArgumentError(None, None, f"Could not parse example input: {e}") from None
        indices_out, values_out, shapes_out = [], [], []
        for key, dtype in zip(sparse_keys, sparse_types):
            indices, values, longest = [], [], 0
            for b, features in enumerate(examples):
                _, found = values_of(features, key, dtype, b)
                longest = max(longest, len(found))
                indices.extend([b, i] if batched else [i] for i in range(len(found)))
                values.extend(found)
            rank = 2 if batched else 1
            indices_out.append(np.asarray(indices, dtype=np.int64).reshape(-1, rank))
            values_out.append(_typed(values, dtype))
            dims = [len(examples), longest] if batched else [longest]
            shapes_out.append(np.asarray(dims, dtype=np.int64))
        dense_out = []
        dense = zip(dense_keys, dense_types, dense_shapes, dense_defaults, sequences)
        for key, dtype, shape, default, sequence in dense:
            if sequence:
                dense_out.append(sequence_of(key, dtype, shape, default, examples))
                continue
            size = int(np.prod(shape, dtype=np.int64))
            rows = []
            for b, features in enumerate(examples):
                kind, found = values_of(features, key, dtype, b)
                if kind is None:
                    if default is None:
                        raise InvalidArgumentError(
                            None,
                            None,
                            f"Name: <unknown>, Feature: {key} (data type: {_TYPE_NAMES[dtype]}) "
                            "is required but could not be found.",
                        )
                    rows.append(default)
                    continue
                if len(found) != size:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"Name: <unknown>, Key: {key}, Index: {b}.  Number of "
                        f"{_TYPE_NAMES[dtype]} values != expected.  Values size: {len(found)} "
                        f"but output shape: {list(shape)}",
                    )
                rows.append(_typed(found, dtype).reshape(shape))
            if batched:
                out = np.empty((len(rows), *shape), dtype=_typed([], dtype).dtype)
                for b, row in enumerate(rows):
                    out[b] = row
            else:
                out = rows[0]
            dense_out.append(out)
        outputs = indices_out + values_out + shapes_out + dense_out
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return parse_example


define_op("ParseExample", _infer_parse_example, _parse_example_kernel)


def _parse(serialized, features: dict, name, batched: bool) -> dict:
    if not features:
        raise ValueError("Missing: features was empty.")
    sparse_keys, sparse_types, dense_keys, dense_types, dense_shapes, defaults = (
        [] for _ in range(6)
    )
    sequence = []
    for key in sorted(features):
        feature = features[key]
        dtype = _dtypes.as_dtype(feature.dtype)
        if dtype not in _TYPE_NAMES:
            raise ValueError(
                f"Feature {key!r}: dtype must be float32, int64 or string, got {dtype.name}"
            )
        if isinstance(feature, VarLenFeature):
            sparse_keys.append(key)
            sparse_types.append(dtype)
        elif isinstance(feature, FixedLenFeature):
            shape = TensorShape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError(f"Feature {key!r}: a FixedLenFeature needs a fully defined shape")
            shape = [int(d) for d in shape.as_list()]
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(tuple(shape))
            defaults.append(_default_array(feature, key, dtype, shape))
            sequence.append(False)
        elif isinstance(feature, FixedLenSequenceFeature):
            if not feature.allow_missing:
                raise ValueError(
                    "Unsupported: FixedLenSequenceFeature requires allow_missing to be True."
                )
            shape = TensorShape(feature.shape)
            if not shape.is_fully_defined():
                raise ValueError(
                    f"Feature {key!r}: a FixedLenSequenceFeature needs a fully defined shape"
                )
            dense_keys.append(key)
            dense_types.append(dtype)
            dense_shapes.append(tuple(int(d) for d in shape.as_list()))
            default = feature.default_value
            if default is not None:
                default = _default_array(feature, key, dtype, [])
            defaults.append(default)
            sequence.append(True)
        else:
            raise ValueError(f"Feature {key!r}: unsupported feature {type(feature).__name__}")
    with name_scope(name or ("ParseExample" if batched else "ParseSingleExample")):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        want = 1 if batched else 0
        if serialized.shape.ndims not in (None, want):
            raise ValueError(
                f"serialized must be a {'vector' if batched else 'scalar'} of strings, "
                f"got shape {serialized.shape}"
            )
        attrs = {
            "sparse_keys": tuple(sparse_keys),
            "sparse_types": tuple(sparse_types),
            "dense_keys": tuple(dense_keys),
            "dense_types": tuple(dense_types),
            "dense_shapes": tuple(dense_shapes),
            "dense_defaults": tuple(defaults),
            "dense_sequence": tuple(sequence),
            "batched": batched,
        }
        outputs = apply_op("ParseExample", (serialized,), attrs, "ParseExample").outputs
    n = len(sparse_keys)
    result = {
        key: SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
        for i, key in enumerate(sparse_keys)
    }
    result.update((key, outputs[3 * n + i]) for i, key in enumerate(dense_keys))
    return result


def _composite_parts(features: dict) -> dict:
    """``features`` with each SparseFeature and RaggedFeature replaced by the VarLenFeatures
    of the keys it is built from."""
    plain = {k: f for k, f in features.items() if not isinstance(f, (SparseFeature, RaggedFeature))}
    wanted: dict = {}
    for key, feature in features.items():
        if isinstance(feature, SparseFeature):
            index_keys = feature.index_key
            index_keys = [index_keys] if isinstance(index_keys, str) else list(index_keys)
            wanted.update((k, _dtypes.int64) for k in index_keys)
            wanted[feature.value_key] = _dtypes.as_dtype(feature.dtype)
        elif isinstance(feature, RaggedFeature):
            wanted[feature.value_key or key] = _dtypes.as_dtype(feature.dtype)
            for partition in feature.partitions:
                if not isinstance(partition, _UniformRowLength):
                    wanted[partition.key] = _dtypes.int64
    for key, dtype in wanted.items():
        existing = plain.get(key)
        if existing is None:
            plain[key] = VarLenFeature(dtype)
        elif not isinstance(existing, VarLenFeature) or _dtypes.as_dtype(existing.dtype) != dtype:
            raise ValueError(
                f"Feature {key!r} is requested as {existing}, and as {dtype.name} values"
            )
    return plain


def _sparse_feature(feature: SparseFeature, parsed: dict):
    from .sparse_extra_ops import sparse_merge

    keys = feature.index_key
    if isinstance(keys, str):
        ids, size = parsed[keys], feature.size
    else:
        ids, size = [parsed[k] for k in keys], list(feature.size)
    return sparse_merge(ids, parsed[feature.value_key], size, already_sorted=feature.already_sorted)


def _splits_from(partition, values, row_splits_dtype, vector):
    """Row splits for ``values`` (a Tensor or RaggedTensor) from one example's partition
    ``vector`` (1-D)."""
    from . import array_ops, math_ops

    count = _nrows(values, row_splits_dtype)
    vector = math_ops.cast(vector, row_splits_dtype)
    zero = convert_to_tensor([0], row_splits_dtype)
    if isinstance(partition, _RowSplits):
        return vector
    if isinstance(partition, _RowLengths):
        return array_ops.concat([zero, math_ops.cumsum(vector)], 0)
    if isinstance(partition, _RowStarts):
        return array_ops.concat([vector, array_ops.reshape(count, [1])], 0)
    if isinstance(partition, _RowLimits):
        return array_ops.concat([zero, vector], 0)
    from .ragged_ops import segment_ids_to_row_splits

    return math_ops.cast(segment_ids_to_row_splits(vector), row_splits_dtype)


def _nrows(values, dtype):
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops

    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=dtype)
    return array_ops.reshape(array_ops.shape(values, out_type=dtype)[:1], [])


def _uniform(values, length, dtype, validate):
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops, math_ops

    if not isinstance(values, RaggedTensor):
        rest = array_ops.shape(values)[1:]
        return array_ops.reshape(values, array_ops.concat([[-1, int(length)], rest], 0))
    rows = math_ops.floordiv(_nrows(values, dtype), int(length))
    splits = array_ops.range(rows + 1, dtype=dtype) * int(length)
    return RaggedTensor.from_row_splits(values, splits, validate=validate)


def _ragged_feature(key: str, feature: RaggedFeature, parsed: dict, batched: bool):
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops, math_ops

    dtype = _dtypes.as_dtype(feature.row_splits_dtype)
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise ValueError(f"RaggedFeature {key!r}: row_splits_dtype must be int32 or int64")
    validate = bool(feature.validate)
    values = parsed[feature.value_key or key]
    if not batched:
        result = values.values
        for partition in reversed(tuple(feature.partitions)):
            if isinstance(partition, _UniformRowLength):
                result = _uniform(result, partition.length, dtype, validate)
                continue
            splits = _splits_from(partition, result, dtype, parsed[partition.key].values)
            result = RaggedTensor.from_row_splits(result, splits, validate=validate)
        return result

    def by_example(sparse):
        rows = math_ops.cast(sparse.indices[:, 0], dtype)
        count = math_ops.cast(sparse.dense_shape[0], dtype)
        return RaggedTensor.from_value_rowids(sparse.values, rows, nrows=count, validate=False)

    result = by_example(values)
    for partition in reversed(tuple(feature.partitions)):
        if isinstance(partition, _UniformRowLength):
            length = int(partition.length)
            inner = _uniform(result.values, length, dtype, validate)
            result = RaggedTensor.from_row_splits(
                inner, math_ops.floordiv(result.row_splits, length), validate=validate
            )
            continue
        part = by_example(parsed[partition.key])
        vector = part.values
        # each example's partition is relative to its own values: shift it by where they start
        starts = gather_ops.gather(result.row_splits, part.value_rowids())
        if isinstance(partition, _RowSplits):
            # drop each example's leading 0: what is left are the limits of its rows
            lengths = part.row_lengths()
            keep = gather_ops.gather(part.row_splits, part.value_rowids())
            positions = array_ops.range(array_ops.size(vector, out_type=dtype), dtype=dtype)
            first = math_ops.equal(positions, keep)
            from .extra_array_ops import boolean_mask

            limits = boolean_mask(
                math_ops.cast(vector, dtype) + starts, math_ops.logical_not(first)
            )
            counts = math_ops.maximum(lengths - 1, 0)
            splits = array_ops.concat([convert_to_tensor([0], dtype), limits], 0)
        elif isinstance(partition, _RowLengths):
            counts = part.row_lengths()
            splits = array_ops.concat(
                [convert_to_tensor([0], dtype), math_ops.cumsum(math_ops.cast(vector, dtype))], 0
            )
        elif isinstance(partition, _RowLimits):
            counts = part.row_lengths()
            limits = math_ops.cast(vector, dtype) + starts
            splits = array_ops.concat([convert_to_tensor([0], dtype), limits], 0)
        elif isinstance(partition, _RowStarts):
            counts = part.row_lengths()
            total = array_ops.reshape(_nrows(result.values, dtype), [1])
            splits = array_ops.concat([math_ops.cast(vector, dtype) + starts, total], 0)
        else:  # ValueRowIds
            ids = math_ops.cast(vector, dtype)
            from .extra_segment_ops import unsorted_segment_max

            per_example = unsorted_segment_max(
                ids + 1, part.value_rowids(), part.nrows(out_type=dtype)
            )
            counts = math_ops.maximum(per_example, 0)
            offsets = math_ops.cumsum(counts, exclusive=True)
            rowids = ids + gather_ops.gather(offsets, part.value_rowids())
            inner = RaggedTensor.from_value_rowids(
                result.values, rowids, nrows=math_ops.reduce_sum(counts), validate=validate
            )
            result = RaggedTensor.from_row_lengths(inner, counts, validate=validate)
            continue
        inner = RaggedTensor.from_row_splits(result.values, splits, validate=validate)
        result = RaggedTensor.from_row_lengths(inner, counts, validate=validate)
    return result


def _parse_composite(serialized, features: dict, name, batched: bool) -> dict:
    if not features:
        raise ValueError("Missing: features was empty.")
    parsed = _parse(serialized, _composite_parts(features), name, batched)
    result = {}
    for key, feature in features.items():
        if isinstance(feature, SparseFeature):
            result[key] = _sparse_feature(feature, parsed)
        elif isinstance(feature, RaggedFeature):
            result[key] = _ragged_feature(key, feature, parsed, batched)
        else:
            result[key] = parsed[key]
    return result


def parse_example(serialized, features, name=None, example_names=None) -> dict:
    """The ``features`` (a dict of key to `FixedLenFeature`, `VarLenFeature`, `SparseFeature`
    or `RaggedFeature`) of each serialized ``tf.train.Example`` of the string vector
    ``serialized``: a dense tensor ``[batch] + shape`` per FixedLenFeature, a SparseTensor
    ``[batch, longest]`` per VarLenFeature, ``[batch] + size`` per SparseFeature, and a
    RaggedTensor with a row per example per RaggedFeature.  ``example_names`` only names
    examples in TensorFlow's messages."""
    return _parse_composite(serialized, features, name, batched=True)


def parse_single_example(serialized, features, name=None, example_names=None) -> dict:
    """`parse_example` of one serialized example (a string scalar): dense tensors of the
    features' shapes, SparseTensors without the batch dimension, and for a RaggedFeature its
    values (a vector) cut by its partitions."""
    return _parse_composite(serialized, features, name, batched=False)


# -- DecodeCompressed ------------------------------------------------------------------------------
_COMPRESSIONS = {"": None, "ZLIB": zlib.MAX_WBITS, "GZIP": zlib.MAX_WBITS | 16}


def _infer_decode_compressed(op):
    data = op.inputs[0]
    if data.dtype != _dtypes.string:
        raise TypeError(
            f"Input 'bytes' of 'DecodeCompressed' must be string, got {data.dtype.name}"
        )
    if op.attrs["compression_type"] not in _COMPRESSIONS:
        raise ValueError(
            f"compression_type must be '', 'ZLIB' or 'GZIP', got {op.attrs['compression_type']!r}"
        )
    return [(_dtypes.string, data.shape)]


def _inflate(value: bytes, wbits: int, total: int) -> bytes:
    """``value`` inflated, refusing to give more than the bytes an array may hold."""
    inflater = zlib.decompressobj(wbits)
    room = MAX_ARRAY_BYTES - total
    try:
        out = inflater.decompress(value, room + 1)
    except zlib.error as e:
        raise InvalidArgumentError(None, None, f"DecodeCompressed: corrupt data: {e}") from None
    if len(out) > room:
        raise InvalidArgumentError(
            None, None, f"DecodeCompressed: the data inflates to more than {MAX_ARRAY_BYTES}B"
        )
    if not inflater.eof:
        raise InvalidArgumentError(None, None, "DecodeCompressed: the compressed data is truncated")
    return out


def _decode_compressed_kernel(attrs):
    wbits = _COMPRESSIONS[attrs["compression_type"]]

    def decode_compressed(data):
        flat = data.reshape(-1)
        result = np.empty(flat.shape, dtype=object)
        total = 0
        for i, value in enumerate(flat):
            result[i] = bytes(value) if wbits is None else _inflate(bytes(value), wbits, total)
            total += len(result[i])
        return result.reshape(data.shape)

    return decode_compressed


define_op("DecodeCompressed", _infer_decode_compressed, _decode_compressed_kernel)


def decode_compressed(bytes, compression_type: str = "", name=None):  # noqa: A002 - TF's name
    """Each string of ``bytes`` inflated from ``compression_type`` "ZLIB" or "GZIP" (or left
    as it is for ""), a string tensor of the same shape."""
    data = convert_to_tensor(bytes, dtype=_dtypes.string, name="bytes")
    attrs = {"compression_type": str(compression_type)}
    return apply_op("DecodeCompressed", (data,), attrs, name or "DecodeCompressed").outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("ParseExample")
NotDifferentiable("DecodeCompressed")


# -- DecodeJSONExample -----------------------------------------------------------------------------
def _proto_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _proto_field(number: int, body: bytes) -> bytes:
    return _proto_varint(number << 3 | 2) + _proto_varint(len(body)) + body


def _json_fields(message, where: str, names: dict) -> dict:
    """The fields of the JSON object ``message`` by their proto names (a field may be given
    by its proto name or its JSON name, as protobuf's parser accepts)."""
    if not isinstance(message, dict):
        raise ValueError(f"{where}: expected an object, got {type(message).__name__}")
    fields = {}
    for name, value in message.items():
        if name not in names:
            raise ValueError(f"{where}: Cannot find field: {name}")
        if names[name] in fields:
            raise ValueError(f"{where}: field {name} given twice")
        fields[names[name]] = value
    return fields


def _json_list(value, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _json_int64(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise ValueError(f"{where}: invalid int64 value {value!r}")
    try:
        number = int(value) if not isinstance(value, float) else int(value)
        if isinstance(value, float) and value != number:
            raise ValueError
    except ValueError:
        raise ValueError(f"{where}: invalid int64 value {value!r}") from None
    if not -(2**63) <= number < 2**63:
        raise ValueError(f"{where}: int64 value out of range: {value!r}")
    return number


def _json_float(value, where: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{where}: invalid float value {value!r}")
    if isinstance(value, str):
        special = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
        if value in special:
            return special[value]
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{where}: invalid float value {value!r}") from None
    if not isinstance(value, (int, float)):
        raise ValueError(f"{where}: invalid float value {value!r}")
    return float(value)


def _json_bytes(value, where: str) -> bytes:
    import base64
    import binascii

    if not isinstance(value, str):
        raise ValueError(f"{where}: bytes must be base64 text, got {value!r}")
    text = value.replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{where}: invalid base64 data {value!r}") from None


def _json_feature(feature, where: str) -> bytes:
    names = {
        "bytesList": "bytes_list",
        "bytes_list": "bytes_list",
        "floatList": "float_list",
        "float_list": "float_list",
        "int64List": "int64_list",
        "int64_list": "int64_list",
    }
    fields = _json_fields(feature, where, names)
    if len(fields) > 1:
        raise ValueError(f"{where}: a Feature holds one of bytes_list, float_list, int64_list")
    body = b""
    for kind, holder in fields.items():
        values = _json_list(_json_fields(holder, where, {"value": "value"}).get("value"), where)
        if kind == "bytes_list":
            inner = b"".join(_proto_field(1, _json_bytes(v, where)) for v in values)
            body = _proto_field(1, inner)
        elif kind == "float_list":
            # one field per value, not packed: the bytes TensorFlow's JSON converter writes
            body = _proto_field(
                2, b"".join(b"\x0d" + struct.pack("<f", _json_float(v, where)) for v in values)
            )
        else:
            body = _proto_field(
                3, b"".join(b"\x08" + _proto_varint(_json_int64(v, where)) for v in values)
            )
    return body


def json_to_example(text: bytes) -> bytes:
    """The binary ``tf.train.Example`` of its JSON form (protobuf's JSON mapping, with field
    names in either spelling); the map's entries are written in order of their keys."""
    import json

    try:
        message = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"invalid JSON: {e}") from None
    example = _json_fields(message, "Example", {"features": "features"})
    if "features" not in example or example["features"] is None:
        return b""
    features = _json_fields(example["features"], "Features", {"feature": "feature"})
    entries = features.get("feature") or {}
    if not isinstance(entries, dict):
        raise ValueError("Features.feature: expected an object")
    body = b""
    for key in sorted(entries):
        feature = _json_feature(entries[key], f"feature {key!r}")
        body += _proto_field(1, _proto_field(1, key.encode("utf-8")) + _proto_field(2, feature))
    return _proto_field(1, body)


def _infer_decode_json_example(op):
    (x,) = op.inputs
    if x.dtype != _dtypes.string:
        raise TypeError(
            f"Input 'json_examples' of 'DecodeJSONExample' must be string, got {x.dtype.name}"
        )
    return [(_dtypes.string, x.shape)]


def _decode_json_example_kernel(attrs):
    def decode_json_example(x):
        flat = x.reshape(-1)
        out = np.empty(flat.shape, dtype=object)
        for i, text in enumerate(flat):
            try:
                out[i] = json_to_example(bytes(text))
            except ValueError as e:
                raise InvalidArgumentError(None, None, f"Error while parsing JSON: {e}") from None
        return out.reshape(x.shape)

    return decode_json_example


define_op("DecodeJSONExample", _infer_decode_json_example, _decode_json_example_kernel)
NotDifferentiable("DecodeJSONExample")


def decode_json_example(json_examples, name=None):
    """Each ``tf.train.Example`` in its JSON form (as protobuf writes it: ``{"features":
    {"feature": {"age": {"int64List": {"value": ["7"]}}}}}``, bytes in base64) as the binary
    proto `parse_example` reads; malformed JSON is an error when the graph runs."""
    x = convert_to_tensor(json_examples, dtype=_dtypes.string, name="json_examples")
    return apply_op("DecodeJSONExample", (x,), {}, name or "DecodeJSONExample").outputs[0]

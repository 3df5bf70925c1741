"""``tf.train.Example`` as the parsing ops read it: the feature specs (``FixedLenFeature``,
``VarLenFeature``, ``SparseFeature``, ``RaggedFeature``, ...) and the protocol-buffer wire
format of an Example, decoded as data (no protobuf library, no code from the record)."""

from __future__ import annotations

import struct
from typing import NamedTuple, Optional

import numpy as np

from ..framework import dtypes as _dtypes

_KINDS = {1: _dtypes.string, 2: _dtypes.float32, 3: _dtypes.int64}


_TYPE_NAMES = {_dtypes.string: "string", _dtypes.float32: "float", _dtypes.int64: "int64"}


class FixedLenFeature(NamedTuple):
    """A feature of ``shape`` holding ``dtype`` values (float32, int64 or string); an example
    without it takes ``default_value``, or fails when that is None."""

    shape: object
    dtype: object
    default_value: object = None


class FixedLenSequenceFeature(NamedTuple):
    """A feature holding any number of items of ``shape``, parsed into a dense tensor
    ``[length] + shape`` (``[batch, longest] + shape`` for a batch, shorter examples padded
    with the scalar ``default_value``, or 0 / ``b""`` when None).  ``allow_missing`` must be
    True, as in TensorFlow: an example without the feature has no items."""

    shape: object
    dtype: object
    allow_missing: bool = False
    default_value: object = None


class VarLenFeature(NamedTuple):
    """A feature with any number of ``dtype`` values, parsed into a SparseTensor."""

    dtype: object


class SparseFeature(NamedTuple):
    """A SparseTensor built from several features of each example: ``value_key`` holds the
    values, ``index_key`` (one key, or a list of keys, one per dimension) their indices in a
    tensor of ``size`` (an int, or a list).  The indices are sorted unless
    ``already_sorted``."""

    index_key: object
    value_key: str
    dtype: object
    size: object
    already_sorted: bool = False


class _RowSplits(NamedTuple):
    key: str


class _RowLengths(NamedTuple):
    key: str


class _RowStarts(NamedTuple):
    key: str


class _RowLimits(NamedTuple):
    key: str


class _ValueRowIds(NamedTuple):
    key: str


class _UniformRowLength(NamedTuple):
    length: int


class RaggedFeature(NamedTuple):
    """A feature parsed into a RaggedTensor: the values of ``value_key`` (the feature's own key
    when None), cut by ``partitions`` (outermost first), each read from another feature of
    the example: ``RaggedFeature.RowSplits(key)``, ``RowLengths``, ``RowStarts``,
    ``RowLimits``, ``ValueRowIds``, or ``UniformRowLength(length)``.  ``validate`` checks
    that the partitions fit the values when the graph runs."""

    dtype: object
    value_key: Optional[str] = None
    partitions: tuple = ()
    row_splits_dtype: object = _dtypes.int32
    validate: bool = False

    RowSplits = _RowSplits
    RowLengths = _RowLengths
    RowStarts = _RowStarts
    RowLimits = _RowLimits
    ValueRowIds = _ValueRowIds
    UniformRowLength = _UniformRowLength


for _partition in (
    _RowSplits,
    _RowLengths,
    _RowStarts,
    _RowLimits,
    _ValueRowIds,
    _UniformRowLength,
):
    _partition.__name__ = _partition.__qualname__ = "RaggedFeature." + _partition.__name__[1:]


# -- the wire format ------------------------------------------------------------------------------
def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(data: bytes):
    """(field number, wire type, value) of each field of the message ``data``; a
    length-delimited value is its bytes."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        if pos > len(data):
            raise ValueError("truncated field")
        yield number, wire, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _feature_values(data: bytes) -> tuple[Optional[object], list]:
    """The dtype and values of a serialized Feature (None and [] when it holds no list)."""
    kind, values = None, []
    for number, _wire, body in _fields(data):
        if number not in _KINDS:
            continue
        kind, values = _KINDS[number], []
        for inner, wire, value in _fields(body):
            if inner != 1:
                continue
            if number == 1:
                values.append(bytes(value))
            elif number == 2:
                if wire == 2:
                    values.extend(struct.unpack(f"<{len(value) // 4}f", value))
                else:
                    values.append(struct.unpack("<f", value)[0])
            elif wire == 2:
                pos = 0
                while pos < len(value):
                    v, pos = _varint(value, pos)
                    values.append(_signed(v))
            else:
                values.append(_signed(value))
    return kind, values


def _parse_example_proto(data: bytes) -> dict:
    features = {}
    for number, wire, body in _fields(data):
        if number != 1 or wire != 2:
            continue
        for entry_number, entry_wire, entry in _fields(body):
            if entry_number != 1 or entry_wire != 2:
                continue
            key, feature = b"", b""
            for n, _w, v in _fields(entry):
                if n == 1:
                    key = bytes(v)
                elif n == 2:
                    feature = bytes(v)
            features[key.decode("utf-8", "replace")] = _feature_values(feature)
    return features


def _typed(values: list, dtype) -> np.ndarray:
    if dtype == _dtypes.string:
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return array
    return np.asarray(values, dtype=_dtypes.numpy_dtype(dtype))


def _default_array(feature: FixedLenFeature, key: str, dtype, shape: list):
    if feature.default_value is None:
        return None
    default = np.asarray(feature.default_value, dtype=object if dtype == _dtypes.string else None)
    if dtype == _dtypes.string:
        default = np.vectorize(lambda v: v.encode() if isinstance(v, str) else v, otypes=[object])(
            default
        )
    else:
        default = default.astype(_dtypes.numpy_dtype(dtype))
    if default.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(
            f"The default value of feature {key!r} has {default.size} values; its shape "
            f"{shape} needs {int(np.prod(shape, dtype=np.int64))}"
        )
    return default.reshape(shape)


__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "RaggedFeature",
    "SparseFeature",
    "VarLenFeature",
]

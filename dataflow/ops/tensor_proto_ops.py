"""``tf.io.serialize_tensor`` and ``parse_tensor``: a tensor as the bytes of TensorFlow's
``TensorProto`` (its dtype, its shape, and its values as raw little-endian bytes or, for
strings, one field each), readable by TensorFlow and the other way round."""

from __future__ import annotations

import struct
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .parsing_ops import _fields, _varint
from .string_ops import _check_string_input, _strings

__all__ = [
    "deserialize_many_sparse",
    "parse_tensor",
    "serialize_many_sparse",
    "serialize_sparse",
    "serialize_tensor",
]

# TensorFlow's DataType enum values
_ENUM = {
    _dtypes.float32: 1,
    _dtypes.float64: 2,
    _dtypes.int32: 3,
    _dtypes.uint8: 4,
    _dtypes.int16: 5,
    _dtypes.int8: 6,
    _dtypes.string: 7,
    _dtypes.complex64: 8,
    _dtypes.int64: 9,
    _dtypes.bool: 10,
    _dtypes.uint16: 17,
    _dtypes.complex128: 18,
    _dtypes.float16: 19,
    _dtypes.uint32: 22,
    _dtypes.uint64: 23,
}
_BY_ENUM = {number: dtype for dtype, number in _ENUM.items()}
_TYPE_NAMES = {_dtypes.float32: "float", _dtypes.float64: "double"}


def _key(number: int, wire: int) -> bytes:
    return _encode_varint(number << 3 | wire)


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _length_delimited(number: int, data: bytes) -> bytes:
    return _key(number, 2) + _encode_varint(len(data)) + data


def _serialize(array: np.ndarray, dtype) -> bytes:
    dims = b"".join(  # a size of 0 is proto3's default, which is not written
        _length_delimited(2, _key(1, 0) + _encode_varint(d) if d else b"") for d in array.shape
    )
    out = [_key(1, 0) + _encode_varint(_ENUM[dtype]), _length_delimited(2, dims)]
    if dtype == _dtypes.string:
        out.extend(_length_delimited(8, bytes(v)) for v in array.reshape(-1))
    elif array.size:
        little = array.astype(array.dtype.newbyteorder("<"), copy=False)
        out.append(_length_delimited(4, np.ascontiguousarray(little).tobytes()))
    return b"".join(out)


def _name(dtype) -> str:
    return _TYPE_NAMES.get(dtype, dtype.name)


def _parse(data: bytes, out_type) -> np.ndarray:
    dtype_enum, dims, content, strings, packed = None, [], None, [], []
    for number, wire, value in _fields(data):
        if number == 1 and wire == 0:
            dtype_enum = value
        elif number == 2 and wire == 2:
            for n, w, dim in _fields(value):
                if n == 2 and w == 2:
                    size = 0
                    for dn, dw, dv in _fields(dim):
                        if dn == 1 and dw == 0:
                            size = dv
                    dims.append(size)
        elif number == 4 and wire == 2:
            content = bytes(value)
        elif number == 8 and wire == 2:
            strings.append(bytes(value))
        elif number in (5, 6, 7, 10, 11, 13):
            packed.append((number, wire, value))
    dtype = _BY_ENUM.get(dtype_enum)
    if dtype is None:
        raise ValueError(f"unsupported DataType {dtype_enum}")
    if dtype != out_type:
        raise InvalidArgumentError(
            None,
            None,
            f"Type mismatch between parsed tensor ({_name(dtype)}) and dtype ({_name(out_type)})",
        )
    size = int(np.prod(dims, dtype=np.int64))
    if dtype == _dtypes.string:
        return _strings(tuple(dims), strings if strings else [b""] * size)
    np_type = _dtypes.numpy_dtype(dtype)
    if content is not None:
        flat = np.frombuffer(content, dtype=np.dtype(np_type).newbyteorder("<")).astype(np_type)
    else:
        flat = _repeated_values(packed, np_type)
        if len(flat) == 1 and size > 1:  # TensorFlow stores a splat as one value
            flat = np.repeat(flat, size)
        if len(flat) == 0:
            flat = np.zeros(size, np_type)
    if flat.size != size:
        raise ValueError(f"{flat.size} values for shape {dims}")
    return flat.reshape(dims)


def _repeated_values(fields, np_type) -> np.ndarray:
    values = []
    for number, wire, value in fields:
        if number in (5, 6):  # float_val, double_val
            code, width = ("f", 4) if number == 5 else ("d", 8)
            values.extend(struct.unpack(f"<{len(value) // width}{code}", value))
        elif number == 13:  # half_val: float16 bits as ints
            ints = _packed_ints(value) if wire == 2 else [value]
            values.extend(np.asarray(ints, np.uint16).view(np.float16).tolist())
        else:
            ints = _packed_ints(value) if wire == 2 else [value]
            values.extend(v - (1 << 64) if v >= 1 << 63 else v for v in ints)
    return np.asarray(values).astype(np_type) if values else np.zeros(0, np_type)


def _packed_ints(data: bytes) -> list:
    out, pos = [], 0
    while pos < len(data):
        value, pos = _varint(data, pos)
        out.append(value)
    return out


# -- SerializeTensor / ParseTensor -----------------------------------------------------------------
def _infer_serialize(op):
    if op.inputs[0].dtype not in _ENUM:
        raise TypeError(f"serialize_tensor cannot serialize {op.inputs[0].dtype.name}")
    return [(_dtypes.string, TensorShape([]))]


def _serialize_kernel(attrs):
    dtype = attrs["T"]
    return lambda x: _strings((), [_serialize(np.asarray(x), dtype)])


define_op("SerializeTensor", _infer_serialize, _serialize_kernel)


def serialize_tensor(tensor, name: Optional[str] = None):
    """``tensor`` as a string scalar: the bytes of TensorFlow's ``TensorProto`` of it."""
    tensor = convert_to_tensor(tensor, name="tensor")
    attrs = {"T": tensor.dtype}
    return apply_op("SerializeTensor", (tensor,), attrs, name or "SerializeTensor").outputs[0]


def _infer_parse(op):
    serialized = _check_string_input(op, 0, "serialized")
    if serialized.shape.ndims not in (None, 0):
        raise ValueError(f"serialized must be a scalar, got shape {serialized.shape}")
    if op.attrs["out_type"] not in _ENUM:
        raise TypeError(f"parse_tensor cannot parse {op.attrs['out_type'].name}")
    return [(op.attrs["out_type"], TensorShape(None))]


def _parse_kernel(attrs):
    out_type = attrs["out_type"]

    def parse_tensor(serialized):
        data = bytes(serialized.item() if isinstance(serialized, np.ndarray) else serialized)
        try:
            return _parse(data, out_type)
        except ValueError:
            import base64

            raise InvalidArgumentError(
                None,
                None,
                "Could not parse `serialized` as TensorProto, base64: "
                f"{base64.urlsafe_b64encode(data).decode()}",
            ) from None

    return parse_tensor


define_op("ParseTensor", _infer_parse, _parse_kernel)


def parse_tensor(serialized, out_type, name: Optional[str] = None):
    """The tensor whose ``TensorProto`` bytes the string scalar ``serialized`` holds; its
    dtype must be ``out_type``."""
    serialized = convert_to_tensor(serialized, _dtypes.string, name="serialized")
    attrs = {"out_type": _dtypes.as_dtype(out_type)}
    return apply_op("ParseTensor", (serialized,), attrs, name or "ParseTensor").outputs[0]


# -- SparseTensors as three TensorProtos -----------------------------------------------------------
def _check_out_type(out_type) -> None:
    if _dtypes.as_dtype(out_type) != _dtypes.string:
        raise TypeError(f"out_type must be string, got {_dtypes.as_dtype(out_type).name}")


def serialize_sparse(sp_input, name: Optional[str] = None, out_type=_dtypes.string):
    """``sp_input`` as a string vector of three: the `serialize_tensor` bytes of its
    indices, values and dense shape."""
    from ..framework.graph import name_scope
    from .array_ops import stack

    _check_out_type(out_type)
    with name_scope(name or "SerializeSparse"):
        parts = (sp_input.indices, sp_input.values, sp_input.dense_shape)
        return stack([serialize_tensor(p) for p in parts])


def _infer_serialize_many(op):
    if op.inputs[1].dtype not in _ENUM:
        raise TypeError(f"serialize_many_sparse cannot serialize {op.inputs[1].dtype.name}")
    return [(_dtypes.string, TensorShape([None, 3]))]


def _serialize_many_kernel(attrs):
    dtype = attrs["T"]

    def serialize_many(indices, values, shape):
        if len(shape) < 2:
            raise InvalidArgumentError(
                None, None, f"SparseTensor must have rank at least 2, got {len(shape)}"
            )
        rows = []
        for b in range(int(shape[0])):
            mine = indices[:, 0] == b
            parts = (
                (indices[mine][:, 1:], _dtypes.int64),
                (values[mine], dtype),
                (np.asarray(shape[1:], np.int64), _dtypes.int64),
            )
            rows.extend(_serialize(np.asarray(a), t) for a, t in parts)
        return _strings((int(shape[0]), 3), rows)

    return serialize_many


define_op("SerializeManySparse", _infer_serialize_many, _serialize_many_kernel)


def serialize_many_sparse(sp_input, name: Optional[str] = None, out_type=_dtypes.string):
    """Each entry along the first dimension of ``sp_input`` (rank >= 2) as a row of three
    `serialize_tensor` strings (indices, values, dense shape of that entry)."""
    _check_out_type(out_type)
    inputs = (sp_input.indices, sp_input.values, sp_input.dense_shape)
    attrs = {"T": sp_input.values.dtype}
    op = apply_op("SerializeManySparse", inputs, attrs, name or "SerializeManySparse")
    return op.outputs[0]


def _infer_deserialize_many(op):
    _check_string_input(op, 0, "serialized_sparse")
    rank = op.attrs["rank"]
    return [
        (_dtypes.int64, TensorShape([None, rank])),
        (op.attrs["dtype"], TensorShape([None])),
        (_dtypes.int64, TensorShape([rank])),
    ]


def _deserialize_many_kernel(attrs):
    dtype = attrs["dtype"]

    def deserialize_many(serialized):
        if serialized.ndim != 2 or serialized.shape[1] != 3:
            raise InvalidArgumentError(
                None, None, f"Serialized sparse should be [N, 3], got {list(serialized.shape)}"
            )
        indices, values, shapes = [], [], []
        try:
            for b, (ind, val, shape) in enumerate(serialized):
                ind = _parse(bytes(ind), _dtypes.int64)
                indices.append(np.concatenate([np.full((len(ind), 1), b, np.int64), ind], 1))
                values.append(_parse(bytes(val), dtype))
                shapes.append(_parse(bytes(shape), _dtypes.int64))
        except ValueError as e:
            raise InvalidArgumentError(
                None, None, f"Could not parse serialized sparse: {e}"
            ) from None
        if len({len(s) for s in shapes}) > 1:
            raise InvalidArgumentError(None, None, "Inconsistent rank across SparseTensors")
        if not shapes:
            raise InvalidArgumentError(None, None, "Serialized sparse has no rows to deserialize")
        rank = len(shapes[0])
        out_shape = np.concatenate([[len(shapes)], np.max(np.stack(shapes), axis=0)])
        all_indices = np.concatenate(indices).reshape(-1, rank + 1)
        all_values = np.concatenate(values)
        order = np.lexsort(tuple(all_indices.T[::-1])) if len(all_indices) else []
        return all_indices[order], all_values[order], out_shape.astype(np.int64)

    return deserialize_many


define_op("DeserializeManySparse", _infer_deserialize_many, _deserialize_many_kernel)


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name: Optional[str] = None):
    """The SparseTensor that `serialize_many_sparse` gave as the ``[N, 3]`` string matrix
    ``serialized_sparse``, its entries stacked along a new first dimension (the largest of
    their dense shapes); ``rank`` is its rank when known."""
    from ..framework.sparse_tensor import SparseTensor

    serialized = convert_to_tensor(serialized_sparse, _dtypes.string, name="serialized_sparse")
    attrs = {"dtype": _dtypes.as_dtype(dtype), "rank": None if rank is None else int(rank)}
    op = apply_op("DeserializeManySparse", (serialized,), attrs, name or "DeserializeManySparse")
    return SparseTensor(*op.outputs)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("SerializeTensor")
NotDifferentiable("ParseTensor")
NotDifferentiable("SerializeManySparse")
NotDifferentiable("DeserializeManySparse")

"""``tf.io.decode_proto`` and ``tf.io.encode_proto``: fields of protocol buffer messages of any
type to and from tensors, as TensorFlow's DecodeProtoV2 and EncodeProto ops do.

The message type is looked up by its full name in ``descriptor_source``: ``"local://"`` (the
descriptors of the protobuf modules this process has imported), a file holding a serialized
``FileDescriptorSet``, or ``"bytes://"`` followed by one.  The descriptors come from the
optional ``protobuf`` package (``pip install 'dataflow[protos]'``); the wire format is read and
written here, as TensorFlow's kernels read and write it: a field's values in the order they
come (a singular field keeps its last value), packed or not; fields written in the order of
their numbers, repeated numbers packed where the field says so.
"""

from __future__ import annotations

import struct
from typing import NamedTuple, Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import array_bytes
from ..framework.errors import DataLossError, InvalidArgumentError
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = ["decode_proto", "encode_proto"]

_MISSING = "decode_proto and encode_proto need the protobuf package: pip install 'dataflow[protos]'"

# protobuf's FieldDescriptor.TYPE_* numbers
_DOUBLE, _FLOAT, _INT64, _UINT64, _INT32, _FIXED64, _FIXED32, _BOOL = 1, 2, 3, 4, 5, 6, 7, 8
_STRING, _GROUP, _MESSAGE, _BYTES, _UINT32, _ENUM = 9, 10, 11, 12, 13, 14
_SFIXED32, _SFIXED64, _SINT32, _SINT64 = 15, 16, 17, 18

# TensorFlow's IsCompatibleType: the dtypes each field type may be read as or written from
_COMPATIBLE = {
    _DOUBLE: ("float64",),
    _FLOAT: ("float32", "float64"),
    _INT64: ("int64",),
    _UINT64: ("uint64",),
    _INT32: ("int32", "int64"),
    _FIXED64: ("uint64",),
    _FIXED32: ("uint32", "uint64"),
    _BOOL: ("bool",),
    _STRING: ("string",),
    _GROUP: ("string",),
    _MESSAGE: ("string",),
    _BYTES: ("string",),
    _UINT32: ("uint32", "uint64"),
    _ENUM: ("int32",),
    _SFIXED32: ("int32", "int64"),
    _SFIXED64: ("int64",),
    _SINT32: ("int32", "int64"),
    _SINT64: ("int64",),
}
_VARINT_TYPES = frozenset({_INT64, _UINT64, _INT32, _BOOL, _UINT32, _ENUM, _SINT32, _SINT64})
_FIXED = {_DOUBLE: "<d", _FLOAT: "<f", _FIXED64: "<Q", _FIXED32: "<I", _SFIXED32: "<i"}
_FIXED[_SFIXED64] = "<q"
_LENGTH_TYPES = frozenset({_STRING, _MESSAGE, _BYTES})


def _pool(source: str):
    """The descriptor pool of ``descriptor_source``."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool
    except ImportError:
        raise ValueError(_MISSING) from None
    if source == "local://":
        # the well-known types, which TensorFlow's own pool holds too
        from google.protobuf import (  # noqa: F401
            any_pb2,
            duration_pb2,
            empty_pb2,
            field_mask_pb2,
            struct_pb2,
            timestamp_pb2,
            wrappers_pb2,
        )

        return descriptor_pool.Default()
    if source.startswith("bytes://"):
        data = source[len("bytes://") :].encode("latin-1")
    else:
        try:
            with open(source, "rb") as f:
                data = f.read()
        except OSError as e:
            raise ValueError(f"descriptor_source {source!r} cannot be read: {e}") from None
    files = descriptor_pb2.FileDescriptorSet()
    try:
        files.ParseFromString(data)
    except Exception:
        raise ValueError(f"descriptor_source {source!r} is not a FileDescriptorSet") from None
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return pool


def _message(source: str, message_type: str):
    try:
        return _pool(source).FindMessageTypeByName(message_type)
    except KeyError:
        raise ValueError(f"No descriptor found for message type {message_type}") from None


def _fields(descriptor, field_names, dtypes) -> list:
    """The field descriptors of ``field_names``, each checked against its dtype."""
    fields = []
    for name, dtype in zip(field_names, dtypes):
        field = descriptor.fields_by_name.get(name)
        if field is None:
            raise ValueError(f"Unknown field: {name} in message type {descriptor.full_name}")
        if dtype.name not in _COMPATIBLE[field.type]:
            raise ValueError(
                f"Unexpected output type for {field.full_name}: {dtype.name} (the field may be "
                f"read as {', '.join(_COMPATIBLE[field.type])})"
            )
        fields.append(field)
    return fields


def _repeated(field) -> bool:
    repeated = getattr(field, "is_repeated", None)
    return field.label == 3 if repeated is None else bool(repeated)  # 3: LABEL_REPEATED


# -- the wire format -------------------------------------------------------------------------------
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


def _scalar(field_type: int, value: int):
    """A varint's value as ``field_type`` reads it."""
    if field_type == _SINT32 or field_type == _SINT64:
        return (value >> 1) ^ -(value & 1)
    if field_type == _BOOL:
        return value != 0
    if field_type in (_INT32, _ENUM):
        value &= 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value
    if field_type == _UINT32:
        return value & 0xFFFFFFFF
    if field_type == _INT64:
        return value - (1 << 64) if value >= 1 << 63 else value
    return value


def _read_fields(data: bytes, wanted: dict) -> dict:
    """``{field number: [values]}`` for the field numbers of ``wanted`` (number -> type)."""
    found: dict = {number: [] for number in wanted}
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        field_type = wanted.get(number)
        if wire == 0:
            value, pos = _varint(data, pos)
            if field_type in _VARINT_TYPES:
                found[number].append(_scalar(field_type, value))
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if pos + size > len(data):
                raise ValueError("truncated fixed-width field")
            chunk, pos = data[pos : pos + size], pos + size
            form = _FIXED.get(field_type)
            if form is not None and struct.calcsize(form) == size:
                found[number].append(struct.unpack(form, chunk)[0])
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated length-delimited field")
            chunk, pos = data[pos : pos + length], pos + length
            if field_type in _LENGTH_TYPES:
                found[number].append(bytes(chunk))
            elif field_type in _VARINT_TYPES:  # packed
                at = 0
                while at < len(chunk):
                    value, at = _varint(chunk, at)
                    found[number].append(_scalar(field_type, value))
            elif field_type in _FIXED:
                form = _FIXED[field_type]
                width = struct.calcsize(form)
                if len(chunk) % width:
                    raise ValueError("packed field of a bad length")
                found[number] += [v for (v,) in struct.iter_unpack(form, chunk)]
        elif wire == 3:
            raise ValueError("groups are not supported")
        else:
            raise ValueError(f"bad wire type {wire}")
    return found


def _encode_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _encode_value(field_type: int, value) -> bytes:
    if field_type in (_SINT32, _SINT64):
        value = int(value)
        bits = 32 if field_type == _SINT32 else 64
        return _encode_varint((value << 1) ^ (value >> (bits - 1)))
    if field_type in _VARINT_TYPES:
        return _encode_varint(int(value))
    if field_type in _FIXED:
        return struct.pack(_FIXED[field_type], value)
    return _encode_varint(len(value)) + bytes(value)


def _wire_type(field_type: int) -> int:
    if field_type in _VARINT_TYPES:
        return 0
    if field_type in _FIXED:
        return 1 if struct.calcsize(_FIXED[field_type]) == 8 else 5
    return 2


# -- DecodeProtoV2 ---------------------------------------------------------------------------------
def _check_names(op_type: str, attrs: dict, count_types: bool) -> None:
    names = attrs["field_names"]
    if count_types and len(names) != len(attrs["output_types"]):
        raise ValueError(f"{op_type}: field_names and output_types must be the same length")
    if len(set(names)) != len(names):
        raise ValueError(f"{op_type}: field_names must be distinct")


def _infer_decode_proto(op):
    (data,) = op.inputs
    if data.dtype != _dtypes.string:
        raise TypeError(f"Input 'bytes' of 'DecodeProtoV2' must be string, got {data.dtype.name}")
    attrs = op.attrs
    _check_names(op.type, attrs, True)
    if attrs["message_format"] not in ("binary", "text"):
        raise ValueError("message_format must be 'binary' or 'text'")
    descriptor = _message(attrs["descriptor_source"], attrs["message_type"])
    _fields(descriptor, attrs["field_names"], attrs["output_types"])
    batch = data.shape.as_list() if data.shape.ndims is not None else None
    if batch is None:
        shapes = [TensorShape(None)] * (len(attrs["field_names"]) + 1)
    else:
        shapes = [TensorShape(batch + [len(attrs["field_names"])])]
        shapes += [TensorShape(batch + [None]) for _ in attrs["field_names"]]
    outputs = [(_dtypes.int32, shapes[0])]
    outputs += [(dtype, shape) for dtype, shape in zip(attrs["output_types"], shapes[1:])]
    return outputs


def _default(field, dtype) -> object:
    if _repeated(field):
        return b"" if dtype == _dtypes.string else 0
    if field.type == _ENUM:
        return field.default_value if isinstance(field.default_value, int) else 0
    value = field.default_value
    if value is None:  # a message
        return b""
    if isinstance(value, str):
        return value.encode("utf-8")
    return value


def _decode_proto_kernel(attrs):
    descriptor = _message(attrs["descriptor_source"], attrs["message_type"])
    dtypes = attrs["output_types"]
    fields = _fields(descriptor, attrs["field_names"], dtypes)
    wanted = {field.number: field.type for field in fields}
    text = attrs["message_format"] == "text"
    sanitize = attrs["sanitize"]

    def normalized(data: bytes) -> bytes:
        if not (text or sanitize):
            return data
        from google.protobuf import message_factory, text_format

        message = message_factory.GetMessageClass(descriptor)()
        try:
            if text:
                text_format.Parse(data.decode("utf-8"), message)
            else:
                message.ParseFromString(data)
        except Exception as e:
            raise InvalidArgumentError(
                None, None, f"DecodeProto: cannot parse a {descriptor.full_name}: {e}"
            ) from None
        return message.SerializeToString(deterministic=True)

    def decode_proto(data):
        flat = data.reshape(-1)
        rows = []
        for index, value in enumerate(flat):
            try:
                found = _read_fields(normalized(bytes(value)), wanted)
            except ValueError as e:
                raise DataLossError(
                    None,
                    None,
                    f"DecodeProto: failed to consume the entire buffer for message {index} ({e})",
                ) from None
            rows.append([found[f.number] if _repeated(f) else found[f.number][-1:] for f in fields])
        sizes = np.array([[len(v) for v in row] for row in rows], np.int32)
        sizes = sizes.reshape(data.shape + (len(fields),))
        outputs = [sizes]
        for column, (field, dtype) in enumerate(zip(fields, dtypes)):
            longest = max((len(row[column]) for row in rows), default=0)
            np_dtype = object if dtype == _dtypes.string else _dtypes.numpy_dtype(dtype)
            try:
                array_bytes((len(rows), longest), np.dtype(np_dtype))
            except ValueError as e:
                raise InvalidArgumentError(None, None, f"DecodeProto: {e}") from None
            out = np.empty((len(rows), longest), dtype=np_dtype)
            out[...] = _default(field, dtype)
            for i, row in enumerate(rows):
                if row[column]:
                    out[i, : len(row[column])] = row[column]
            outputs.append(out.reshape(data.shape + (longest,)))
        return tuple(outputs)

    return decode_proto


define_op("DecodeProtoV2", _infer_decode_proto, _decode_proto_kernel)


class DecodeProtoResult(NamedTuple):
    """``(sizes, values)`` of `decode_proto`, as TensorFlow's op returns them."""

    sizes: object
    values: list


def decode_proto(
    bytes,  # noqa: A002 - mirrors tf.io.decode_proto
    message_type,
    field_names,
    output_types,
    descriptor_source: str = "local://",
    message_format: str = "binary",
    sanitize: bool = False,
    name: Optional[str] = None,
):
    """The fields ``field_names`` of each serialized ``message_type`` message in ``bytes``:
    ``(sizes, values)``, ``sizes`` int32 ``batch + [len(field_names)]`` (how many values each
    field has) and ``values`` a list, one tensor ``batch + [most values]`` of each
    ``output_types`` per field, padded with the field's default.  ``message_format`` "text"
    reads text protos; ``sanitize`` reads each message through the protobuf library first."""
    data = convert_to_tensor(bytes, _dtypes.string, name="bytes")
    attrs = {
        "message_type": str(message_type),
        "field_names": tuple(str(n) for n in field_names),
        "output_types": tuple(_dtypes.as_dtype(t) for t in output_types),
        "descriptor_source": str(descriptor_source),
        "message_format": str(message_format),
        "sanitize": bool(sanitize),
    }
    outputs = apply_op("DecodeProtoV2", (data,), attrs, name or "DecodeProtoV2").outputs
    return DecodeProtoResult(outputs[0], list(outputs[1:]))


# -- EncodeProto -----------------------------------------------------------------------------------
def _infer_encode_proto(op):
    sizes, *values = op.inputs
    if sizes.dtype != _dtypes.int32:
        raise TypeError(f"Input 'sizes' of 'EncodeProto' must be int32, got {sizes.dtype.name}")
    _check_names(op.type, op.attrs, False)
    if len(values) != len(op.attrs["field_names"]):
        raise ValueError("EncodeProto: there must be one values tensor per field name")
    descriptor = _message(op.attrs["descriptor_source"], op.attrs["message_type"])
    _fields(descriptor, op.attrs["field_names"], [v.dtype for v in values])
    if sizes.shape.ndims is None:
        return [(_dtypes.string, TensorShape(None))]
    return [(_dtypes.string, sizes.shape[:-1])]


def _encode_proto_kernel(attrs):
    descriptor = _message(attrs["descriptor_source"], attrs["message_type"])

    def encode_proto(sizes, *values):
        dtypes = [
            _dtypes.as_dtype(v.dtype) if v.dtype != object else _dtypes.string for v in values
        ]
        fields = _fields(descriptor, attrs["field_names"], dtypes)
        if sizes.ndim < 1 or sizes.shape[-1] != len(fields):
            raise InvalidArgumentError(
                None, None, f"EncodeProto: sizes must end in {len(fields)}, got {list(sizes.shape)}"
            )
        batch = sizes.shape[:-1]
        for field, value in zip(fields, values):
            if value.shape[:-1] != batch:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"EncodeProto: the values of {field.name} have shape {list(value.shape)}, "
                    f"which does not start with the batch shape {list(batch)}",
                )
        order = sorted(range(len(fields)), key=lambda i: fields[i].number)
        flat_sizes = sizes.reshape(-1, len(fields))
        flat_values = [v.reshape(int(np.prod(batch, dtype=np.int64)), -1) for v in values]
        out = np.empty(flat_sizes.shape[0], dtype=object)
        for row in range(flat_sizes.shape[0]):
            parts = []
            for i in order:
                field, count = fields[i], int(flat_sizes[row, i])
                if count < 0 or count > flat_values[i].shape[1]:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"EncodeProto: size {count} of field {field.name} is not within the "
                        f"{flat_values[i].shape[1]} values given",
                    )
                items = flat_values[i][row, :count]
                if field.type == _BOOL:
                    items = [bool(v) for v in items]
                if _repeated(field) and field.is_packed and field.type not in _LENGTH_TYPES:
                    if count:
                        body = b"".join(_encode_value(field.type, v) for v in items)
                        key = _encode_varint(field.number << 3 | 2)
                        parts.append(key + _encode_varint(len(body)) + body)
                    continue
                key = _encode_varint(field.number << 3 | _wire_type(field.type))
                parts += [key + _encode_value(field.type, v) for v in items]
            out[row] = b"".join(parts)
        return out.reshape(batch)

    return encode_proto


define_op("EncodeProto", _infer_encode_proto, _encode_proto_kernel)


def encode_proto(
    sizes,
    values,
    field_names,
    message_type,
    descriptor_source: str = "local://",
    name: Optional[str] = None,
):
    """Serialized ``message_type`` messages, one per entry of the batch shape: field
    ``field_names[i]`` gets the first ``sizes[..., i]`` values of ``values[i]`` (a tensor
    ``batch + [n]`` of a dtype the field may be written from)."""
    sizes = convert_to_tensor(sizes, _dtypes.int32, name="sizes")
    tensors = [convert_to_tensor(v) for v in values]
    attrs = {
        "field_names": tuple(str(n) for n in field_names),
        "message_type": str(message_type),
        "descriptor_source": str(descriptor_source),
    }
    op_type = "EncodeProto"
    return apply_op(op_type, (sizes, *tensors), attrs, name or op_type).outputs[0]


from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("DecodeProtoV2")
NotDifferentiable("EncodeProto")

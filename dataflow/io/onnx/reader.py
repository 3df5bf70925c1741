"""Reading an ONNX file as untrusted data: the model's bytes parsed as a protocol buffer, every
size a tensor declares checked before an array is allocated, and its element types mapped to
dataflow's dtypes.

Role: the one place where bytes from an ONNX file become Python values (`load_model`,
`tensor_value`, `attribute_values`).  The importer builds the graph from what this module
returns and never reads a proto's payload itself.

Invariants:
- Nothing from the file is run: the model is parsed with ``ModelProto.ParseFromString`` (data
  only), never with ``onnx.load``, which would follow external-data paths the file names.
- A tensor stored outside the file (``data_location == EXTERNAL``) is refused, naming it.
- A tensor's declared dims are checked (non-negative, rank at most `MAX_RANK`, at most
  `MAX_ARRAY_BYTES` bytes) and its payload's length must equal what the dims declare, before
  numpy makes the array.
- Every error is an `OnnxImportError` naming the file and the part at fault.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

from ...framework import dtypes
from ...framework.array_bounds import MAX_ARRAY_BYTES, MAX_RANK, array_bytes

# The largest ONNX file read whole (protocol buffers cannot hold more than 2 GiB anyway).
MAX_MODEL_BYTES = 2**31 - 1
# How deeply subgraphs (If/Loop/Scan bodies) and functions may nest.
MAX_NESTING = 64


class OnnxImportError(ValueError):
    """An ONNX model that cannot be imported: malformed, hostile, or using ops dataflow does not
    map.  The message names the model file and the node or tensor at fault."""


def _onnx():
    try:
        import onnx
    except ImportError:  # pragma: no cover - the "onnx" extra is missing
        raise ImportError(
            "reading ONNX models needs the 'onnx' package: pip install 'dataflow[onnx]'"
        ) from None
    return onnx


# ONNX TensorProto.DataType -> dataflow dtype (the types dataflow has).
_ONNX_TO_DTYPE = {
    1: dtypes.float32,
    2: dtypes.uint8,
    3: dtypes.int8,
    4: dtypes.uint16,
    5: dtypes.int16,
    6: dtypes.int32,
    7: dtypes.int64,
    8: dtypes.string,
    9: dtypes.bool,
    10: dtypes.float16,
    11: dtypes.float64,
    12: dtypes.uint32,
    13: dtypes.uint64,
    14: dtypes.complex64,
    15: dtypes.complex128,
}


def onnx_type_name(elem_type: int) -> str:
    """ONNX's name of an element type (``FLOAT``, ``BFLOAT16``, ...), or its number."""
    onnx = _onnx()
    try:
        return onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return str(elem_type)


def dtype_of(elem_type: int, where: str):
    """The dataflow dtype of ONNX element type ``elem_type``; an error naming ``where`` for a
    type dataflow has no dtype for (bfloat16, the float8 and 4-bit types)."""
    dtype = _ONNX_TO_DTYPE.get(elem_type)
    if dtype is None:
        raise OnnxImportError(
            f"{where}: element type {onnx_type_name(elem_type)} has no dataflow dtype"
        )
    return dtype


def onnx_elem_type(dtype) -> int:
    """The ONNX element type of a dataflow dtype (the inverse of `dtype_of`)."""
    base = dtypes.as_dtype(dtype).base_dtype
    for code, candidate in _ONNX_TO_DTYPE.items():
        if candidate == base:
            return code
    raise OnnxImportError(f"dtype {base.name} has no ONNX element type")


def load_model(path_or_proto) -> tuple[Any, str]:
    """``(ModelProto, label)`` for a path, bytes or a ``ModelProto``; ``label`` names the model
    in errors (the path, or ``<ModelProto>``)."""
    onnx = _onnx()
    if isinstance(path_or_proto, onnx.ModelProto):
        return path_or_proto, f"<ModelProto {path_or_proto.graph.name!r}>"
    if isinstance(path_or_proto, (bytes, bytearray, memoryview)):
        data, label = bytes(path_or_proto), "<ONNX bytes>"
    elif isinstance(path_or_proto, (str, os.PathLike)):
        label = os.fspath(path_or_proto)
        try:
            size = os.path.getsize(label)
        except OSError as e:
            raise OnnxImportError(f"{label}: cannot read the ONNX file ({e.strerror})") from None
        if size > MAX_MODEL_BYTES:
            raise OnnxImportError(
                f"{label}: the file has {size} bytes, more than an ONNX model may hold "
                f"({MAX_MODEL_BYTES})"
            )
        with open(label, "rb") as f:
            data = f.read(MAX_MODEL_BYTES + 1)
    else:
        raise TypeError(
            f"import_model: expected a path, bytes or an onnx.ModelProto, got "
            f"{type(path_or_proto).__name__}"
        )
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError, or a RuntimeWarning turned error
        raise OnnxImportError(f"{label}: not an ONNX model ({type(e).__name__}: {e})") from None
    if not model.HasField("graph"):
        raise OnnxImportError(f"{label}: not an ONNX model (it holds no graph)")
    return model, label


# The payload field a tensor of each element type stores its values in, when not raw_data.
_TYPED_FIELD = {
    1: "float_data",
    2: "int32_data",
    3: "int32_data",
    4: "int32_data",
    5: "int32_data",
    6: "int32_data",
    7: "int64_data",
    8: "string_data",
    9: "int32_data",
    10: "int32_data",
    11: "double_data",
    12: "uint64_data",
    13: "uint64_data",
    14: "float_data",
    15: "double_data",
}


def tensor_value(tensor, where: str) -> np.ndarray:
    """The numpy value of a ``TensorProto``, its sizes checked first (see the module's
    invariants); ``where`` names it in errors (``model.onnx: initializer 'w'``)."""
    onnx = _onnx()
    label = f"{where} {tensor.name!r}" if tensor.name else where
    if tensor.data_location == onnx.TensorProto.EXTERNAL or len(tensor.external_data):
        raise OnnxImportError(
            f"{label}: the tensor's data is stored in another file, which is not read (save the "
            "model with its data inside: onnx.save_model(model, path, save_as_external_data=False))"
        )
    if tensor.HasField("segment"):
        raise OnnxImportError(f"{label}: segmented tensors are not supported")
    dims = list(tensor.dims)
    if len(dims) > MAX_RANK:
        raise OnnxImportError(f"{label}: rank {len(dims)} is more than {MAX_RANK}")
    if any(d < 0 for d in dims):
        raise OnnxImportError(f"{label}: negative dimension in its shape {dims}")
    dtype = dtype_of(tensor.data_type, label)
    count = 1
    for d in dims:
        count *= d
    if dtype == dtypes.string:
        if len(tensor.string_data) != count:
            raise OnnxImportError(
                f"{label}: shape {dims} declares {count} strings, the tensor holds "
                f"{len(tensor.string_data)}"
            )
        return np.array([s for s in tensor.string_data], dtype=object).reshape(dims)
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    try:
        expected_bytes = array_bytes(dims, np_dtype, limit=MAX_ARRAY_BYTES)
    except ValueError as e:
        raise OnnxImportError(f"{label}: {e}") from None
    if tensor.HasField("raw_data"):
        if len(tensor.raw_data) != expected_bytes:
            raise OnnxImportError(
                f"{label}: shape {dims} of {onnx_type_name(tensor.data_type)} needs "
                f"{expected_bytes} bytes of raw_data, the tensor holds {len(tensor.raw_data)}"
            )
    else:
        field = _TYPED_FIELD[tensor.data_type]
        held = len(getattr(tensor, field))
        needed = count * 2 if tensor.data_type in (14, 15) else count
        if held != needed:
            raise OnnxImportError(
                f"{label}: shape {dims} declares {needed} values, its {field} holds {held}"
            )
    try:
        return np.asarray(onnx.numpy_helper.to_array(tensor), dtype=np_dtype).reshape(dims)
    except Exception as e:
        raise OnnxImportError(f"{label}: unreadable tensor ({e})") from None


def attribute_values(node, where: str) -> dict:
    """The attributes of a ``NodeProto`` as Python values: numbers, bytes decoded as UTF-8
    strings, lists, numpy arrays (sizes checked) and ``GraphProto``s left as protos."""
    onnx = _onnx()
    kinds = onnx.AttributeProto
    values = {}
    for attr in node.attribute:
        label = f"{where}: attribute {attr.name!r}"
        if attr.ref_attr_name:
            raise OnnxImportError(f"{label} refers to a function attribute outside a function")
        kind = attr.type
        if kind == kinds.FLOAT:
            value: Any = float(attr.f)
        elif kind == kinds.INT:
            value = int(attr.i)
        elif kind == kinds.STRING:
            value = attr.s.decode("utf-8", errors="replace")
        elif kind == kinds.TENSOR:
            value = tensor_value(attr.t, label)
        elif kind == kinds.GRAPH:
            value = attr.g
        elif kind == kinds.FLOATS:
            value = [float(v) for v in attr.floats]
        elif kind == kinds.INTS:
            value = [int(v) for v in attr.ints]
        elif kind == kinds.STRINGS:
            value = [s.decode("utf-8", errors="replace") for s in attr.strings]
        elif kind == kinds.TENSORS:
            value = [tensor_value(t, label) for t in attr.tensors]
        elif kind == kinds.GRAPHS:
            value = list(attr.graphs)
        elif kind == kinds.SPARSE_TENSOR:
            raise OnnxImportError(f"{label}: sparse tensors are not supported")
        else:
            raise OnnxImportError(f"{label}: attribute type {kind} is not supported")
        values[attr.name] = value
    return values


def static_dims(value_info) -> Optional[list]:
    """The dims a ``ValueInfoProto`` declares (None for an unknown dim), or None for an unknown
    rank; bounded by `MAX_RANK`."""
    tensor_type = value_info.type.tensor_type
    if not tensor_type.HasField("shape"):
        return None
    dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim]
    if len(dims) > MAX_RANK:
        raise OnnxImportError(
            f"input {value_info.name!r}: rank {len(dims)} is more than {MAX_RANK}"
        )
    if any(d is not None and d < 0 for d in dims):
        raise OnnxImportError(f"input {value_info.name!r}: negative dimension in {dims}")
    return dims

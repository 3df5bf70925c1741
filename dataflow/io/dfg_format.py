"""The pieces of the ``.dfg`` format (described in `dfg`): its name and version, its errors, the
bound on an op's outputs, the typed attribute values and the arrays stored beside them, and
what each attribute of each op must be."""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import io as _io
import math
import struct
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, Optional, Union

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import MAX_RANK, MAX_SHAPE_ELEMENTS, array_bytes
from ..framework.graph import Graph, control_character
from ..framework.graph_keys import GraphKeys
from ..framework.tensor_shape import TensorShape

FORMAT_NAME = "dataflow.graph"


FORMAT_VERSION = 1


# The most outputs an op of a file may have (Split's num_split, Unpack's num, the length of
# SplitV's size_splits and of PyFunc's Tout), so that a file cannot make shape inference
# build billions of tensors.
MAX_OUTPUTS = 2**16


_SCOPE_ENTRY_BYTES = 100  # a set entry, a dict entry and two string headers


_GRAPH_MEMBER = "graph.json"


_ARRAY_PREFIX = "arrays/"


class GraphFormatError(ValueError):
    """A graph file is malformed, of another version, or asks for something unsafe."""


class GraphNotSerializableError(ValueError):
    """The graph holds something the format cannot express (a Python callable, a file object)."""


# -- typed attribute values ------------------------------------------------------------------------
def _slot_type():
    from ..ops.misc_ops import _Slot as slot

    return slot


class _ArrayWriter:
    """Collects the arrays of a graph under the keys ``a0``, ``a1``, ..."""

    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def add(self, array: np.ndarray) -> str:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = array
        return key


def _encode_shape(shape: TensorShape) -> Optional[list]:
    dims = shape.as_tuple()
    return None if dims is None else [None if d is None else int(d) for d in dims]


def _encode_value(value: Any, arrays: _ArrayWriter, where: str) -> dict:
    """The typed JSON form of an attribute value (see the module docstring)."""
    if value is None:
        return {"none": None}
    if isinstance(value, (bool, np.bool_)):
        return {"bool": bool(value)}
    if isinstance(value, _dtypes.DType):
        return {"dtype": value.name}
    if isinstance(value, TensorShape):
        return {"shape": _encode_shape(value)}
    if isinstance(value, np.ndarray) and value.dtype == object:
        return {"strings": _encode_strings(value, where)}
    if isinstance(value, (np.ndarray, np.generic)) and not isinstance(value, np.bool_):
        array = np.asarray(value)
        if array.dtype.kind not in "biufc":
            raise GraphNotSerializableError(
                f"{where}: an array of dtype {array.dtype} cannot be saved (only numbers and bools)"
            )
        key = arrays.add(array)
        return {
            "array": {
                "key": key,
                "dtype": array.dtype.name,
                "shape": list(array.shape),
                "scalar": isinstance(value, np.generic),
            }
        }
    if isinstance(value, int):
        return {"int": int(value)}
    if isinstance(value, float):
        if math.isfinite(value):
            return {"float": value}
        return {"float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, str):
        return {"str": value}
    if isinstance(value, list):
        return {"list": [_encode_value(v, arrays, where) for v in value]}
    if isinstance(value, tuple):
        return {"tuple": [_encode_value(v, arrays, where) for v in value]}
    if isinstance(value, dict):
        return {
            "dict": [
                [_encode_value(k, arrays, where), _encode_value(v, arrays, where)]
                for k, v in value.items()
            ]
        }
    if isinstance(value, _slot_type()):
        return {"slot": int(value.index)}
    if isinstance(value, Graph):
        raise GraphNotSerializableError(
            f"{where} is a function (a branch of a cond built with control flow v2); this "
            "format stores no functions yet. Build the cond with control flow v1 "
            "(df.disable_control_flow_v2()) to save the graph."
        )
    if callable(value):
        raise GraphNotSerializableError(
            f"{where} is a Python callable ({value!r}); a graph with py_func, "
            "numpy_function or py_function cannot be saved, because loading a graph never runs "
            "code from the file. Replace the Python function with graph ops."
        )
    raise GraphNotSerializableError(
        f"{where}: a value of type {type(value).__name__} ({value!r}) cannot be saved"
    )


def _encode_strings(array: np.ndarray, where: str) -> dict:
    """A string array (an object array of bytes) as its shape and its strings in base64."""
    flat = array.reshape(-1)
    if not all(isinstance(item, bytes) for item in flat):
        raise GraphNotSerializableError(
            f"{where}: an object array can be saved only when it holds bytes (a string tensor)"
        )
    return {
        "shape": list(array.shape),
        "base64": [base64.b64encode(item).decode("ascii") for item in flat],
    }


def _decode_strings(value, where: str) -> np.ndarray:
    if not isinstance(value, dict) or set(value) != {"shape", "base64"}:
        _fail(where, "'strings' holds {shape, base64}")
    dims = _decode_shape_dims(value["shape"], where + " (strings shape)")
    items = value["base64"]
    if dims is None or None in dims or not isinstance(items, list):
        _fail(where, "'strings' has a known shape and a list of base64 strings")
    if math.prod(dims) != len(items):
        _fail(where, f"'strings' of shape {dims} lists {len(items)} strings")
    array = np.empty(len(items), dtype=object)
    for i, item in enumerate(items):
        try:
            array[i] = base64.b64decode(_check_str(item, where), validate=True)
        except (binascii.Error, ValueError):
            _fail(where, f"string {i} is not valid base64")
    array = array.reshape(dims)
    array.flags.writeable = False
    return array


def _fail(where: str, message: str):
    raise GraphFormatError(f"{where}: {message}")


def _check_int(value, where: str, low: Optional[int] = None) -> int:
    if type(value) is not int:
        _fail(where, f"expected an integer, got {value!r:.80}")
    if low is not None and value < low:
        _fail(where, f"expected an integer >= {low}, got {value}")
    return value


def _check_str(value, where: str) -> str:
    if not isinstance(value, str):
        _fail(where, f"expected a string, got {value!r:.80}")
    return value


def _check_text(value, where: str):
    """``value`` (a string, or strings in lists and dicts), refused when it holds a control
    character (see the module docstring)."""
    character = control_character(value)
    if character is not None:
        _fail(
            where,
            f"holds the control character {character!r} (U+{ord(character):04X}); the names, "
            "locations, devices and attributes of a graph file are printable text",
        )
    return value


def _check_printable_str(value, where: str) -> str:
    return _check_text(_check_str(value, where), where)


def _decode_shape_dims(dims, where: str) -> Optional[list]:
    if dims is None:
        return None
    if not isinstance(dims, list):
        _fail(where, f"a shape is a list of dimensions or null, got {dims!r:.80}")
    if len(dims) > MAX_RANK:
        _fail(where, f"a shape of rank {len(dims)} is too large (at most {MAX_RANK})")
    known = 1
    for d in dims:
        if d is not None:
            _check_int(d, where + " (a dimension)", 0)
            known *= d
            if known > MAX_SHAPE_ELEMENTS:
                _fail(where, f"the declared shape {dims} is too large")
    return dims


# The dtypes an array of a file may have, by the names `save_graph` writes: numbers and bools,
# nothing that needs pickle.
_ARRAY_DTYPES: dict[str, np.dtype] = {}


for _code in "?bhilqBHILQefdgFD":  # the first of the codes that share a name (int64) is kept
    _ARRAY_DTYPES.setdefault(np.dtype(_code).name, np.dtype(_code))


class _ArrayReader:
    """Reads the arrays of a graph file on demand, checking each header before the data.

    Each array is decoded once, however many attributes refer to its key, and read-only (as
    ``df.constant`` makes its values); the arrays decoded hold at most ``max_array_bytes`` in
    all, each counted once.  An array is read straight into its own buffer, a chunk at a time,
    so loading it allocates its size and a small constant more (`_READ_CHUNK`).
    """

    def __init__(self, archive: zipfile.ZipFile, max_array_bytes: int):
        self.archive = archive
        self.max_array_bytes = max_array_bytes
        self.used: set[str] = set()
        self.decoded: dict[str, np.ndarray] = {}
        self.total_bytes = 0

    def read(self, spec, where: str) -> Union[np.ndarray, np.generic]:
        if not isinstance(spec, dict) or set(spec) != {"key", "dtype", "shape", "scalar"}:
            _fail(where, "an array is {key, dtype, shape, scalar}")
        key = _check_str(spec["key"], where + " (array key)")
        if not key.isalnum():
            _fail(where, f"bad array key {key!r:.80}")
        dims = _decode_shape_dims(spec["shape"], where + " (array shape)")
        if dims is None or None in dims:
            _fail(where, "an array has a known shape")
        dtype = _ARRAY_DTYPES.get(_check_str(spec["dtype"], where + " (array dtype)"))
        if dtype is None:
            _fail(
                where,
                f"array dtype {spec['dtype']!r:.80} is not allowed (only numbers and bools: "
                f"{', '.join(_ARRAY_DTYPES)})",
            )
        scalar = spec["scalar"]
        if not isinstance(scalar, bool):
            _fail(where, "the array field 'scalar' is a bool")
        if scalar and dims:
            _fail(where, "a numpy scalar has shape []")
        array = self.decoded.get(key)
        if array is None:
            array = self._decode(key, dims, dtype, where)
        elif list(array.shape) != dims or array.dtype != dtype:
            _fail(
                where,
                f"array '{key}' is declared as {dtype}{dims} here but as "
                f"{array.dtype}{list(array.shape)} elsewhere",
            )
        return array[()] if scalar else array

    def _decode(self, key: str, dims: list, dtype: np.dtype, where: str) -> np.ndarray:
        try:
            size = array_bytes(dims, dtype, self.total_bytes, self.max_array_bytes)
        except ValueError as e:
            _fail(where, f"{e} (pass a larger max_array_bytes to load it)")
        member = _ARRAY_PREFIX + key + ".npy"
        try:
            info = self.archive.getinfo(member)
        except KeyError:
            _fail(where, f"the file has no array {member!r}")
        with _open_member(self.archive, info, where) as stream:
            shape, fortran, file_dtype = _read_npy_header(stream, member, where)
            if list(shape) != dims or file_dtype != dtype:
                _fail(
                    where,
                    f"array {member!r} holds {file_dtype}{list(shape)}, but the graph declares "
                    f"{dtype}{dims}",
                )
            array = _read_npy_data(stream, info, dims, dtype, fortran, where)
        array.flags.writeable = False
        self.used.add(key)
        self.decoded[key] = array
        self.total_bytes += size
        return array


def _read_npy_data(stream, info: zipfile.ZipInfo, dims, dtype: np.dtype, fortran, where: str):
    """The array whose NPY header `_read_npy_header` has just read from the stream of member
    ``info``, read straight into its own buffer a chunk at a time; its size must have been
    bounded before (`array_bytes`).  A member shorter or longer than its header declares is
    refused, before the buffer is allocated when the zip's directory says so."""
    member = info.filename
    size = math.prod(dims) * dtype.itemsize
    if size > info.file_size - stream.tell():
        _fail(where, f"array {member!r} is truncated")
    flat = np.empty(math.prod(dims), dtype)
    if _read_into(stream, flat.view(np.uint8)) != flat.nbytes:
        _fail(where, f"array {member!r} is truncated")
    # Reading on to the end makes zipfile check the member's CRC.
    if stream.read(1):
        _fail(where, f"array {member!r} holds more bytes than its header declares")
    if dtype.kind == "b" and flat.view(np.uint8).max(initial=0) > 1:
        _fail(where, f"the bool array {member!r} holds a byte other than 0 and 1")
    return flat.reshape(dims, order="F" if fortran else "C")


_READ_CHUNK = 2**18


_NPY_MAGIC = b"\x93NUMPY"


# numpy's own bound on the header it parses (``max_header_size`` of its header readers).
_MAX_NPY_HEADER = 10_000


def _read_npy_header(stream, member: str, where: str) -> tuple[tuple, bool, np.dtype]:
    """The shape, order and dtype that the NPY stream of ``member`` declares, leaving ``stream``
    at the first byte of data.

    The preamble (magic string, version, header length, header) is read here, at most
    `_MAX_NPY_HEADER` bytes, and parsed by numpy (`_parse_npy_preamble`) once per distinct
    preamble: the arrays of a file mostly share a few shapes and dtypes, and parsing a header
    (a Python literal) costs more than reading a small array.
    """
    start = stream.read(len(_NPY_MAGIC) + 4)
    if len(start) < len(_NPY_MAGIC) + 4 or not start.startswith(_NPY_MAGIC):
        _fail(where, f"array {member!r} is not a valid NPY file (no NPY magic string)")
    major = start[len(_NPY_MAGIC)]
    if major == 1:
        preamble = start
    elif major == 2:
        preamble = start + stream.read(2)
    else:
        _fail(where, f"array {member!r} is in NPY version {major}, not 1 or 2")
    length = int.from_bytes(preamble[len(_NPY_MAGIC) + 2 :], "little")
    if length > _MAX_NPY_HEADER:
        _fail(
            where, f"array {member!r} has an NPY header of {length}B (at most {_MAX_NPY_HEADER}B)"
        )
    header = stream.read(length)
    if len(header) != length:
        _fail(where, f"array {member!r} is truncated in its NPY header")
    try:
        return _parse_npy_preamble(preamble + header)
    except ValueError as e:
        _fail(where, f"array {member!r} is not a valid NPY file ({e})")


@functools.lru_cache(maxsize=64)
def _parse_npy_preamble(preamble: bytes) -> tuple[tuple, bool, np.dtype]:
    """numpy's reading of a whole NPY preamble: (shape, fortran order, dtype)."""
    stream = _io.BytesIO(preamble)
    if np.lib.format.read_magic(stream) == (1, 0):
        header = np.lib.format.read_array_header_1_0(stream, max_header_size=_MAX_NPY_HEADER)
    else:
        header = np.lib.format.read_array_header_2_0(stream, max_header_size=_MAX_NPY_HEADER)
    return header


def _read_into(stream, buffer: np.ndarray) -> int:
    """Fills the bytes ``buffer`` from ``stream`` a chunk at a time (a zip member's ``readinto``
    would read the whole length into a temporary first); returns how many bytes it read."""
    filled = 0
    while filled < len(buffer):
        chunk = stream.read(min(_READ_CHUNK, len(buffer) - filled))
        if not chunk:
            break
        buffer[filled : filled + len(chunk)] = np.frombuffer(chunk, np.uint8)
        filled += len(chunk)
    return filled


def _decode_value(encoded, arrays: _ArrayReader, where: str) -> Any:
    """The attribute value of a typed JSON value; raises `GraphFormatError` on anything else."""
    if not isinstance(encoded, dict) or len(encoded) != 1:
        _fail(where, f"a typed value is an object with one key, got {encoded!r:.80}")
    ((kind, value),) = encoded.items()
    if kind == "none":
        if value is not None:
            _fail(where, "'none' holds null")
        return None
    if kind == "bool":
        if not isinstance(value, bool):
            _fail(where, f"expected true or false, got {value!r:.80}")
        return value
    if kind == "int":
        return _check_int(value, where)
    if kind == "float":
        if isinstance(value, str) and value in ("nan", "inf", "-inf"):
            return float(value)
        if type(value) not in (int, float):
            _fail(where, f"expected a number, got {value!r:.80}")
        return float(value)
    if kind == "str":
        return _check_str(value, where)
    if kind == "dtype":
        name = _check_str(value, where)
        try:
            return _dtypes.as_dtype(name)
        except (TypeError, ValueError, KeyError):
            _fail(where, f"unknown dtype {name!r:.80}")
    if kind == "shape":
        return TensorShape(_decode_shape_dims(value, where))
    if kind == "array":
        if arrays is None:
            _fail(where, "an array is not allowed here")
        return arrays.read(value, where)
    if kind in ("list", "tuple"):
        if not isinstance(value, list):
            _fail(where, f"'{kind}' holds a JSON list")
        items = [_decode_value(v, arrays, where) for v in value]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        if not isinstance(value, list) or not all(
            isinstance(p, list) and len(p) == 2 for p in value
        ):
            _fail(where, "'dict' holds a list of [key, value] pairs")
        result = {}
        for k, v in value:
            key = _decode_value(k, arrays, where)
            if not isinstance(key, (str, int, float, bool, type(None))):
                _fail(where, f"a dict key must be a scalar, got {key!r:.80}")
            result[key] = _decode_value(v, arrays, where)
        return result
    if kind == "strings":
        return _decode_strings(value, where)
    if kind == "slot":
        slot = _slot_type()(_check_int(value, where, 0))
        return slot
    _fail(where, f"unknown value type {kind!r:.80}")


# -- what each attribute must be -------------------------------------------------------------------
def _is_int(v) -> bool:
    return type(v) is int


def _is_ints(v) -> bool:
    return isinstance(v, (list, tuple)) and all(_is_int(x) for x in v)


def _optional(check: Callable) -> Callable:
    return lambda v: v is None or check(v)


def _is_template_item(v) -> bool:
    if v is None or isinstance(v, (bool, int, float, str, _slot_type())):
        return True
    if isinstance(v, (np.ndarray, np.generic)):
        return True
    if isinstance(v, (list, tuple)):
        return all(_is_template_item(x) for x in v)
    if isinstance(v, dict):
        return all(_is_template_item(x) for x in v.values())
    return False


def _is_short_list(v) -> bool:
    return isinstance(v, (list, tuple)) and len(v) <= MAX_OUTPUTS


def _is_fused_steps(v) -> bool:
    return isinstance(v, list) and all(
        isinstance(step, list)
        and len(step) == 4
        and isinstance(step[0], str)
        and isinstance(step[1], list)
        and 1 <= len(step[1]) <= 2
        and all(_is_int(k) and k >= -1 for k in step[1])
        and isinstance(step[2], str)
        and isinstance(step[3], str)
        for step in v
    )


def _is_stream(v) -> bool:
    return isinstance(v, str) and (v in ("stdout", "stderr") or v.startswith("file://"))


_QUEUE_KINDS = ("FIFOQueue", "RandomShuffleQueue", "PaddingFIFOQueue", "PriorityQueue")


_READER_KINDS = (
    "TextLineReader",
    "FixedLengthRecordReader",
    "WholeFileReader",
    "TFRecordReader",
    "IdentityReader",
)


# Kinds of collection items that modules above this one save in graph files, by the key the
# file names them with: ``(type, from_record(graph, record))``; an item has ``to_record()``.
# `dataflow.training.queue_runner` registers its QueueRunner.
_COLLECTION_ITEM_KINDS: dict[str, tuple[type, Callable]] = {}


def _register_collection_item(kind: str, item_type: type, from_record: Callable) -> None:
    """Saves collection items of ``item_type`` as ``{kind: item.to_record()}`` and loads them
    with ``from_record(graph, record)``."""
    _COLLECTION_ITEM_KINDS[kind] = (item_type, from_record)


def _collection_item_kind(item) -> Optional[str]:
    """The registered kind ``item`` is saved as, or None."""
    for kind, (item_type, _) in _COLLECTION_ITEM_KINDS.items():
        if isinstance(item, item_type):
            return kind
    return None


# The kinds of dataset stages a saved pipeline may name: `dataflow.data`, which sits above this
# module, registers its table of them, which grows as its modules add stages.
_pipeline_stage_tables: list = []


def _register_pipeline_stage_kinds(kinds) -> None:
    """Lets saved pipelines name the dataset stages in ``kinds`` (a live container, read at
    each load: `dataflow.data`'s table of stage factories)."""
    _pipeline_stage_tables.append(kinds)


def _is_stage_kind(name) -> bool:
    return any(name in table for table in _pipeline_stage_tables)


def _is_pipeline(v) -> bool:
    """A dataset's stages as `dataflow.data` records them (functions are never loaded)."""
    return isinstance(v, list) and all(
        isinstance(record, list)
        and len(record) == 5
        and isinstance(record[0], str)
        and _is_stage_kind(record[0])
        and _is_int(record[1])
        and record[1] >= 0
        and _is_ints(record[2])
        and all(0 <= p < i for p in record[2])
        and isinstance(record[3], dict)
        and all(x is None or isinstance(x, (bool, int)) for x in record[3].values())
        and record[4] is None
        for i, record in enumerate(v)
    )


_ATTR_CHECKS: dict[str, tuple[str, Callable[[Any], bool]]] = {}


for _names, _what, _check in (
    (
        "dtype DstT out_type output_type out_idx output_dtype",
        "a dtype",
        lambda v: isinstance(v, _dtypes.DType),
    ),
    (
        "Tout",
        f"a tuple of at most {MAX_OUTPUTS} dtypes",
        lambda v: _is_short_list(v) and all(isinstance(x, _dtypes.DType) for x in v),
    ),
    ("shape element_shape element_shape_except0", "a shape", lambda v: isinstance(v, TensorShape)),
    ("T", "a dtype", lambda v: isinstance(v, _dtypes.DType)),
    (
        "dynamic_size clear_after_read identical_element_shapes",
        "a bool",
        lambda v: isinstance(v, bool),
    ),
    ("tensor_array_name source", "a string", lambda v: isinstance(v, str)),
    ("value", "an array", lambda v: isinstance(v, np.ndarray)),
    (
        "keepdims transpose_a transpose_b exclusive reverse is_constant validate_shape "
        "single_output scientific shortest replace_global",
        "a bool",
        lambda v: isinstance(v, bool),
    ),
    (
        "summarize first_n parallel_iterations begin_mask end_mask ellipsis_mask new_axis_mask "
        "shrink_axis_mask precision width max_images max_outputs seq_dim batch_dim",
        "an integer",
        _is_int,
    ),
    ("seed seed2", "an integer or none", _optional(_is_int)),
    (
        "num_true num_sampled range_max num_reserved_ids",
        "a non-negative integer",
        lambda v: _is_int(v) and v >= 0,
    ),
    ("unique full_matrices sorted adjoint", "a bool", lambda v: isinstance(v, bool)),
    ("distortion", "a number", lambda v: type(v) in (int, float)),
    (
        "unigrams",
        "a list of numbers",
        lambda v: isinstance(v, (list, tuple)) and all(type(x) in (int, float) for x in v),
    ),
    (
        "axis",
        "an integer, a list of integers or none",
        _optional(lambda v: _is_int(v) or _is_ints(v)),
    ),
    ("num", f"an integer from 0 to {MAX_OUTPUTS}", lambda v: _is_int(v) and 0 <= v <= MAX_OUTPUTS),
    (
        "num_split",
        f"an integer from 1 to {MAX_OUTPUTS}",
        lambda v: _is_int(v) and 1 <= v <= MAX_OUTPUTS,
    ),
    (
        "size_splits",
        f"a list of at most {MAX_OUTPUTS} integers",
        lambda v: _is_short_list(v) and _is_ints(v),
    ),
    ("ksize strides dilations explicit_paddings", "a list of integers", _is_ints),
    (
        "epsilon exponential_avg_factor bias alpha beta",
        "a number",
        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    ),
    ("is_training", "a bool", lambda v: isinstance(v, bool)),
    ("depth_radius", "an integer", _is_int),
    ("perm noise_shape", "a list of integers or none", _optional(_is_ints)),
    (
        "paddings",
        "a list of lists of integers",
        lambda v: isinstance(v, (list, tuple)) and all(_is_ints(x) for x in v),
    ),
    (
        "padding data_format mode message sep end frame_name shared_name fill separator unit "
        "encoding pattern rewrite equation",
        "a string",
        lambda v: isinstance(v, str),
    ),
    (
        "_class",
        "a list of colocation groups 'loc:@<op name>'",
        lambda v: (
            isinstance(v, list) and all(isinstance(x, str) and x.startswith("loc:@") for x in v)
        ),
    ),
    ("output_stream", "'stdout', 'stderr' or 'file://<path>'", _is_stream),
    (
        "template",
        "a list of print items (PrintV2) or a string (StringFormat)",
        lambda v: isinstance(v, str) or (isinstance(v, (list, tuple)) and _is_template_item(v)),
    ),
    ("func", "nothing (Python functions are never loaded)", lambda v: False),
    ("steps", "a list of fused steps [type, operands, name, 'file:line']", _is_fused_steps),
    # queues and their input pipelines (dataflow.ops.queue_ops, dataflow.training.input)
    (
        "component_types",
        f"a tuple of at most {MAX_OUTPUTS} dtypes",
        lambda v: _is_short_list(v) and all(isinstance(x, _dtypes.DType) for x in v),
    ),
    (
        "shapes",
        "a list of shapes or none",
        _optional(lambda v: isinstance(v, list) and all(isinstance(x, TensorShape) for x in v)),
    ),
    ("kind", "a queue kind", lambda v: v in _QUEUE_KINDS),
    # lookup tables (dataflow.ops.lookup_ops)
    (
        "table_kind",
        "'HashTable', 'MutableHashTable' or 'DenseHashTable'",
        lambda v: v in ("HashTable", "MutableHashTable", "DenseHashTable"),
    ),
    ("key_index value_index vocab_size offset", "an integer", _is_int),
    ("delimiter container", "a string", lambda v: isinstance(v, str)),
    ("capacity min_after_dequeue seed2 limit", "an integer", _is_int),
    ("count", "an integer or none", _optional(_is_int)),
    ("many allow_fewer cancel_pending_enqueues", "a bool", lambda v: isinstance(v, bool)),
    # readers (dataflow.ops.reader_ops)
    ("reader", "a reader kind", lambda v: v in _READER_KINDS),
    (
        "skip_header_lines record_bytes header_bytes footer_bytes hop_bytes",
        "a non-negative integer",
        lambda v: _is_int(v) and v >= 0,
    ),
    ("field", "'produced' or 'completed'", lambda v: v in ("produced", "completed")),
    # datasets and their iterators (dataflow.data)
    (
        "output_types",
        f"a tuple of at most {MAX_OUTPUTS} dtypes",
        lambda v: _is_short_list(v) and all(isinstance(x, _dtypes.DType) for x in v),
    ),
    (
        "output_shapes",
        "a list of shapes",
        lambda v: isinstance(v, list) and all(isinstance(x, TensorShape) for x in v),
    ),
    ("pipeline", "a list of dataset stages [kind, inputs, parents, params, None]", _is_pipeline),
    # a Defun's call (dataflow.eager.tracing.defun_call): its function is never in a file
    ("f", "a traced function, which graph files do not store", lambda v: False),
    # the two ends of a partitioned edge (dataflow.distribute.sendrecv)
    ("tensor_name send_device recv_device", "a string", lambda v: isinstance(v, str)),
    ("send_device_incarnation", "an integer", _is_int),
    ("client_terminated", "a bool", lambda v: isinstance(v, bool)),
    ("tensor_type", "a dtype", lambda v: isinstance(v, _dtypes.DType)),
):
    for _name in _names.split():
        _ATTR_CHECKS[_name] = (_what, _check)


# Op type -> (the attribute that sets its number of outputs, that number for a value).
_OUTPUT_COUNTS = {
    "Split": ("num_split", int),
    "SplitV": ("size_splits", len),
    "Unpack": ("num", int),
    "PyFunc": ("Tout", len),
    "PyFuncStateless": ("Tout", len),
    "QueueDequeueV2": ("component_types", len),
    "IteratorGetNext": ("output_types", len),
    "OneShotIteratorGetNext": ("output_types", len),
}


def _check_output_count(op_type: str, attrs: dict, record: dict, where: str) -> None:
    """Before shape inference builds the op's outputs: a recorded ``outputs`` list is not too
    long, and agrees with the attribute that sets the number of outputs."""
    outputs = record.get("outputs")
    if outputs is None:
        return
    if not isinstance(outputs, list) or len(outputs) > MAX_OUTPUTS:
        _fail(where, f"'outputs' is a list of at most {MAX_OUTPUTS} outputs")
    rule = _OUTPUT_COUNTS.get(op_type)
    if rule is not None and rule[0] in attrs:
        count = rule[1](attrs[rule[0]])
        if count != len(outputs):
            _fail(
                where,
                f"attribute '{rule[0]}' makes {count} outputs, but 'outputs' lists {len(outputs)}",
            )


# (op type, attribute) -> the value it is saved as and loaded as: decisions of the graph passes
# for one run plan, which a saved program must not carry (see the module docstring).
_PLAN_ATTRS = {("FusedElementwise", "inplace_input"): -1}


def _check_attr(op_where: str, name: str, value) -> None:
    rule = _ATTR_CHECKS.get(name)
    if rule is not None and not rule[1](value):
        _fail(op_where, f"attribute '{name}' must be {rule[0]}, got {value!r:.80}")


# What zipfile, the decompressors and the OS raise on a damaged archive: a bad header or CRC,
# a corrupt deflate stream, a truncated member, a flipped bit that asks for a compression
# method or a feature zipfile lacks, or for a password, a length that makes a seek fail.
_ZIP_READ_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    OverflowError,
)


@contextlib.contextmanager
def _open_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: Optional[str] = None):
    """The open stream of a member; reading a damaged one raises `GraphFormatError` naming it
    (after ``where``, the op or field that needs it).

    The body of the ``with`` only reads: any of `_ZIP_READ_ERRORS` it lets out is damage."""
    try:
        with archive.open(info) as stream:
            yield stream
    except GraphFormatError:
        raise
    except _ZIP_READ_ERRORS as e:
        message = f"{info.filename!r} is damaged: {e}"
        raise GraphFormatError(f"{where}: {message}" if where else message) from None


__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "GraphFormatError", "GraphNotSerializableError"]


def _standard_collection_items(key: str) -> Optional[tuple[type, str]]:
    """The type of item a standard collection holds, and its description, for the code that
    reads it (the Saver and the initializers read variables, gradients and rendering read the
    records of conds and loops); None for any other collection."""
    from primitives.contexts import CondContext, WhileContext

    from ..ops.variables import Variable

    return {
        GraphKeys.GLOBAL_VARIABLES: (Variable, "variables"),
        GraphKeys.TRAINABLE_VARIABLES: (Variable, "variables"),
        GraphKeys.LOCAL_VARIABLES: (Variable, "variables"),
        GraphKeys.COND_CONTEXT: (CondContext, "the records of conds"),
        GraphKeys.WHILE_CONTEXT: (WhileContext, "the records of loops"),
    }.get(key)


def _misplaced_in_standard_collection(key: str, item) -> bool:
    expected = _standard_collection_items(key)
    return expected is not None and not isinstance(item, expected[0])

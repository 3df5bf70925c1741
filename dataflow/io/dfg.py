"""Saving a graph to a file and loading it back: a versioned, language-neutral format.

``save_graph(graph, path)`` writes one file, a zip archive (any name; ``.dfg`` by convention)
holding:

- ``graph.json``: the structure, UTF-8 JSON, described below;
- ``arrays/<key>.npy``: one NPY file (numpy's documented array format) per array attribute, such
  as the value of a ``Const`` op.  Only numeric and bool arrays are allowed, so no entry needs
  pickle (string arrays are written in ``graph.json``, in base64).

``graph.json`` (format version 1)::

    {"format": "dataflow.graph", "version": 1,
     "ops": [                                   # a topological order (Merge back edges excepted)
       {"name": "add", "type": "Add",
        "inputs": [["x", 0], ["y", 0]],          # [producer op name, output index]
        "control_inputs": ["init"],
        "attrs": {"axis": {"int": 1}, ...},     # typed values, see below
        "outputs": [{"dtype": "float32", "shape": [2, null]}],   # shape null: unknown rank
        "location": {"file": "model.py", "line": 12, "function": "build"},
        "context": 0,                           # index into "contexts", or null
        "device": "/device:GPU:0"}              # only when the op has one (df.device)
     ],
     "contexts": [                              # the record of each cond branch and each loop
       {"kind": "cond", "name": "cond", "pred": "Greater:0", "pivot": "cond/switch_t:0",
        "branch": 1, "outer": null},
       {"kind": "while", "name": "while", "frame_name": "while", "pivot": "...:0",
        "pivot_for_pred": "...:0", "loop_enters": [op names], "merges": [...], "switches": [...],
        "exits": [...], "next_iterations": [...], "loop_cond": "while/LoopCond",
        "parallel_iterations": 10, "back_prop": true, "swap_memory": false,
        "maximum_iterations": null, "outer": 0}
     ],
     "collections": {"variables": [{"variable": 0}], "trainable_variables": [{"variable": 0}],
                     "cond_context": [{"context": 0}], "train_op": [{"operation": "..."}],
                     "losses": [{"tensor": "loss:0"}], "notes": [{"value": {"str": "x"}}]},
     "variables": [{"handle": "w", "initializer": "w/Assign", "snapshot": "w/read:0",
                    "initial_value": "w/initial_value:0", "trainable": true}]}

A typed attribute value is an object with exactly one key naming its type:
``{"none": null}``, ``{"bool": true}``, ``{"int": 3}``, ``{"float": 0.5}`` (``"nan"``,
``"inf"``, ``"-inf"`` as strings), ``{"str": "SAME"}``, ``{"dtype": "float32"}``,
``{"shape": [2, null]}`` or ``{"shape": null}``, ``{"array": {"key": "a0", "dtype": "float32",
"shape": [2, 3], "scalar": false}}`` (``scalar``: a numpy scalar rather than an array),
``{"strings": {"shape": [2], "base64": ["aGk=", ""]}}`` (the value of a string tensor: its
shape and each string's bytes in base64), ``{"list": [values]}``, ``{"tuple": [values]}``,
``{"dict": [[key, value], ...]}`` and
``{"slot": 0}`` (where a print template puts tensor input 0).

Loading never runs code from the file: JSON and NPY with ``allow_pickle=False`` only, every op
type must be registered, and every attribute is checked against the type it must have before the
op is built.  The file's text is printable: a control character (a newline, a NUL, a
bidirectional override) in a name, a location, a device or an attribute is refused, but in the
attributes that are a kernel's data (`graph.DATA_TEXT_ATTRS`: a print's ``end``, a regular
expression).  Generated code holds such text only as string literals anyway
(`dataflow.client.compiler.codegen`); the check keeps it out of listings and messages too.

A malformed, hostile or damaged file raises `GraphFormatError` (a ``ValueError``) whose message
starts with the file's path and names the op, field or archive member at fault, whatever the
damage (a flipped bit in compressed data, a bad CRC, a cut-off file).

Sizes are bounded before anything is built from them: the JSON (`MAX_JSON_BYTES`, and the
number of its values and their depth, `MAX_JSON_VALUES` and `MAX_JSON_DEPTH`, counted before
it is parsed), ranks and declared shapes (`MAX_RANK`, `MAX_SHAPE_ELEMENTS`), the arrays
together (``max_array_bytes``; an array shared by several ops is decoded and counted once) and
the outputs of an op (`MAX_OUTPUTS`, checked against the attributes that set them).  A graph
holding Python callables (``py_func``, ``numpy_function``) or a print op writing to a Python
file object cannot be saved (`GraphNotSerializableError`).

One attribute is not the program but a decision the graph passes made for one run plan: the
``inplace_input`` of a ``FusedElementwise`` (which input its kernel may overwrite).  It is saved
as -1 and reset to -1 on load, whatever the file says, so a kernel of a loaded graph never
writes into an array the caller fed; a Session's passes decide again for each run.

A print op writing to a file (``df.print(..., output_stream="file:///path")``) is saved, but a
file that holds one is refused on load unless ``load_graph(..., allow_file_output=True)``: a
graph from elsewhere could otherwise append to any file its user may write (a shell profile, an
SSH key list).  Printing to stdout and stderr is always allowed.

Variable values are not part of the graph (they live in a Session); save them with
``df.train.Saver`` or fold them in with ``df.graph_util.convert_variables_to_constants``.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import io as _io
import json
import math
import os
import re
import secrets
import struct
import time
import warnings
import zipfile
import zlib
from collections.abc import Callable
from typing import Any, Optional, Union

import numpy as np

from executor.program import NodeKind

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import MAX_ARRAY_BYTES, MAX_RANK, MAX_SHAPE_ELEMENTS, array_bytes
from ..framework.graph import (
    _VALID_OP_NAME,
    DATA_TEXT_ATTRS,
    Graph,
    GraphKeys,
    Operation,
    SourceLocation,
    Tensor,
    control_character,
    gc_paused,
    topological_order,
)
from ..framework.op_registry import get_op_def
from ..framework.tensor_shape import TensorShape

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "GraphFormatError",
    "GraphNotSerializableError",
    "load_graph",
    "save_graph",
]

FORMAT_NAME = "dataflow.graph"
FORMAT_VERSION = 1

MAX_JSON_BYTES = 256 * 2**20
# The most values (arrays, objects, keys, strings, numbers, literals) graph.json may hold, and
# how deeply they may nest; a graph needs about 40 values per op, 10 levels deep.  At this
# bound, parsing builds at most about 1.5 GB of Python objects, whatever the file holds.
MAX_JSON_VALUES = 2**24
MAX_JSON_DEPTH = 64
# The most outputs an op of a file may have (Split's num_split, Unpack's num, the length of
# SplitV's size_splits and of PyFunc's Tout), so that a file cannot make shape inference
# build billions of tensors.
MAX_OUTPUTS = 2**16
# The most bytes the distinct scopes of the op names may take (see `_register_scopes`), as
# many as graph.json may hold; a graph of a million ops, each in a scope of its own, takes
# about 130 MB.
MAX_SCOPE_BYTES = 2**28
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
            f"{where} is a Python callable ({value!r}); a graph with py_func or "
            "numpy_function cannot be saved, because loading a graph never runs code from the "
            "file. Replace the Python function with graph ops."
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


# -- saving ----------------------------------------------------------------------------------------
def _context_index(graph: Graph) -> list:
    """Every context of the graph, outer ones first."""
    contexts: list = []
    seen: set[int] = set()

    def visit(context) -> None:
        if context is None or id(context) in seen:
            return
        visit(context.outer_context)
        seen.add(id(context))
        contexts.append(context)

    for key in (GraphKeys.COND_CONTEXT, GraphKeys.WHILE_CONTEXT):
        for context in graph.get_collection(key):
            visit(context)
    for op in graph.get_operations():
        visit(op._control_flow_context)
    return contexts


def _tensor_name(t: Optional[Tensor]) -> Optional[str]:
    return None if t is None else t.name


def _encode_context(context, context_ids: dict) -> dict:
    from primitives.contexts import CondContext, WhileContext

    outer = None if context.outer_context is None else context_ids[id(context.outer_context)]
    if isinstance(context, CondContext):
        return {
            "kind": "cond",
            "name": context.name,
            "pred": context.pred.name,
            "pivot": _tensor_name(context.pivot),  # None: pruned with nothing hanging on it
            "branch": int(context.branch),
            "outer": outer,
        }
    if isinstance(context, WhileContext):

        def names(ops):
            return [op.name for op in ops]

        return {
            "kind": "while",
            "name": context.name,
            "frame_name": context.frame_name,
            "pivot": _tensor_name(context.pivot),
            "pivot_for_pred": _tensor_name(context.pivot_for_pred),
            "loop_enters": names(context.loop_enters),
            "merges": names(context.merges),
            "switches": names(context.switches),
            "exits": names(context.exits),
            "next_iterations": names(context.next_iterations),
            "loop_cond": None if context.loop_cond is None else context.loop_cond.name,
            "parallel_iterations": int(context.parallel_iterations),
            "back_prop": bool(context.back_prop),
            "swap_memory": bool(context.swap_memory),
            "maximum_iterations": _tensor_name(context.maximum_iterations),
            "outer": outer,
        }
    raise GraphNotSerializableError(f"Unknown control-flow context {context!r}")


def graph_to_document(
    graph: Graph, only: Optional[set] = None, collection_keys: Optional[list] = None
) -> tuple[dict, dict[str, np.ndarray]]:
    """The JSON document and the arrays that `save_graph` writes for ``graph``.

    ``collection_keys``: the collections to write (all when None).

    ``only``: the names of the ops to write (the others are not looked at, so they may hold
    what the format cannot express); records and collections still name every op, and the
    caller drops what refers to ops left out (`dataflow.io.graph_util` does).
    """
    from ..ops.variables import Variable, _UnreadVariable

    arrays = _ArrayWriter()
    contexts = _context_index(graph)
    context_ids = {id(c): i for i, c in enumerate(contexts)}
    ops = []
    # Creation order, made topological over data inputs (a loader needs each op's inputs
    # first; control inputs are resolved after every op exists).
    for op in topological_order(graph, control_inputs=False):
        if only is not None and op.name not in only:
            continue
        if op.attrs.get("output_stream") is not None and not _is_stream(op.attrs["output_stream"]):
            raise GraphNotSerializableError(
                f"{op.type} op '{op.name}' prints to a Python file object, which cannot be "
                "saved; print to sys.stdout, sys.stderr or 'file://<path>'."
            )
        attrs = {
            name: _encode_value(
                _PLAN_ATTRS.get((op.type, name), value),
                arrays,
                f"attribute '{name}' of {op.type} op '{op.name}'",
            )
            for name, value in op.attrs.items()
        }
        context = op._control_flow_context
        loc = op.location
        record = {
            "name": op.name,
            "type": op.type,
            "inputs": [[t.op.name, t.value_index] for t in op.inputs],
            "control_inputs": [c.name for c in op.control_inputs],
            "attrs": attrs,
            "outputs": [
                {"dtype": t.dtype.name, "shape": _encode_shape(t.shape)} for t in op.outputs
            ],
            "location": {
                "file": str(loc.filename),
                "line": int(loc.lineno),
                "function": str(loc.function),
            },
            "context": None if context is None else context_ids[id(context)],
        }
        if op.device:
            record["device"] = op.device
        ops.append(record)
    variables: list[dict] = []
    variable_ids: dict[int, int] = {}
    collections: dict[str, list] = {}
    if collection_keys is None:
        collection_keys = graph.get_all_collection_keys()
    for key in collection_keys:
        items = []
        for item in graph.get_collection(key):
            if isinstance(item, _UnreadVariable):
                item = item._snapshot  # the value it stands for: not a variable of its own
            if _misplaced_in_standard_collection(key, item):
                warnings.warn(
                    f"Collection '{key}' holds {item!r:.80}, but a graph file's '{key}' holds "
                    f"only {_standard_collection_items(key)[1]}; it is left out.",
                    stacklevel=3,
                )
                continue
            if isinstance(item, Variable):
                if id(item) not in variable_ids:
                    variable_ids[id(item)] = len(variables)
                    variables.append(
                        {
                            "handle": item.op.name,
                            "initializer": item.initializer.name,
                            "snapshot": item.value().name,
                            "initial_value": item.initial_value.name,
                            "trainable": bool(item.trainable),
                        }
                    )
                items.append({"variable": variable_ids[id(item)]})
            elif id(item) in context_ids:
                items.append({"context": context_ids[id(item)]})
            elif (kind := _collection_item_kind(item)) is not None:
                items.append({kind: item.to_record()})
            elif isinstance(item, Tensor):
                items.append({"tensor": item.name})
            elif isinstance(item, Operation):
                items.append({"operation": item.name})
            else:
                try:
                    items.append({"value": _encode_value(item, arrays, f"collection '{key}'")})
                except GraphNotSerializableError:
                    warnings.warn(
                        f"Collection '{key}' holds {item!r:.80}, which cannot be saved; "
                        "it is left out.",
                        stacklevel=3,
                    )
        collections[key] = items
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "ops": ops,
        "contexts": [_encode_context(c, context_ids) for c in contexts],
        "collections": collections,
        "variables": variables,
    }
    return document, arrays.arrays


# How long a temporary file whose writer is not a live process here must have gone unwritten
# before a later save deletes it (see `_remove_stale_temporaries`).
STALE_TEMPORARY_SECONDS = 600

# ``.tmp-<pid of the writer>-<16 hex digits>.part``; files of earlier versions lack the pid.
_TEMPORARY_NAME = re.compile(r"\.tmp-(?:(\d+)-)?[0-9a-f]{16}\.part")


def _create_temporary(directory: str) -> tuple[int, str]:
    """A new file in ``directory`` with the permissions of any new file (``0o666`` less the
    umask; ``tempfile.mkstemp`` would make it ``0o600``, and the rename would keep that),
    named after this process (`_TEMPORARY_NAME`)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(directory, f".tmp-{os.getpid()}-{secrets.token_hex(8)}.part")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def _process_is_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine; True where that cannot be asked
    (``os.kill(pid, 0)`` probes a process only on POSIX; elsewhere it would signal it)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, but belongs to another user
        return True
    return True


def _remove_stale_temporaries(directory: str) -> None:
    """Deletes the temporary files that writes into ``directory`` left when their process died
    before it could rename or delete them (a kill, a power cut).

    A file is stale when the process named in it is not alive on this machine and the file has
    not been written to for `STALE_TEMPORARY_SECONDS`.  Both are needed: a writer on another
    machine sharing the directory (a network file system), or in another process namespace,
    has a pid that is not alive here, but it writes from creating its file until it renames
    it, so its file stays young.  A dead writer's pid that a new process reuses keeps the file
    until that process ends: a file is kept rather than deleted when in doubt.  Files of
    earlier versions, without a pid, go by age alone; files named otherwise are not ours.
    """
    now = time.time()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        match = _TEMPORARY_NAME.fullmatch(entry.name)
        if match is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if now - entry.stat(follow_symlinks=False).st_mtime < STALE_TEMPORARY_SECONDS:
                continue
            if match[1] is not None and _process_is_alive(int(match[1])):
                continue
            os.unlink(entry.path)
        except OSError:  # gone already, or not ours to delete: another save will try again
            continue


def _atomic_write(path: str, write: Callable[[Any], None]) -> None:
    """Writes through ``write(file)`` into a temporary file next to ``path``, then renames it;
    first deletes the temporary files that crashed writes left there."""
    directory = os.path.dirname(os.path.abspath(path))
    _remove_stale_temporaries(directory)
    fd, tmp = _create_temporary(directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:
        dir_fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def _document_text(document: dict) -> bytes:
    """``graph.json``: the document as UTF-8 JSON, one op to a line.

    Each op is encoded by itself on one line rather than with ``indent``, which would make
    `json` use its pure-Python encoder, several times slower than its C one on a large graph.
    """
    encode = json.JSONEncoder(allow_nan=False).encode
    fields = []
    for name, value in document.items():
        if name == "ops" and value:
            ops = ",\n  ".join(encode(op) for op in value)
            fields.append(f"{encode(name)}: [\n  {ops}\n ]")
        else:
            fields.append(f"{encode(name)}: {encode(value)}")
    return ("{" + ",\n ".join(fields) + "}\n").encode("utf-8")


def _npy_bytes(array: np.ndarray, headers: dict[tuple, bytes]) -> bytes:
    """``array`` in the NPY format, as `np.lib.format.write_array` writes it.

    ``headers`` keeps the header written for each dtype, shape and order, since the arrays of a
    graph mostly share a few and writing a header costs more than writing a small array.
    """
    fortran = not array.flags.c_contiguous and array.flags.f_contiguous
    data = array.tobytes(order="F" if fortran else "C")
    signature = (array.dtype.str, array.shape, fortran)
    header = headers.get(signature)
    if header is None:
        buffer = _io.BytesIO()
        np.lib.format.write_array(buffer, array, allow_pickle=False)
        header = headers[signature] = buffer.getvalue()[: -len(data) or None]
    return header + data


def save_graph(graph: Graph, path: Union[str, os.PathLike]) -> None:
    """Writes ``graph`` to the file ``path`` (format: the module docstring), atomically.

    Raises `GraphNotSerializableError` for a graph holding a Python callable (``py_func``).
    """
    with gc_paused():
        _atomic_write(os.fspath(path), _archive_writer(graph))


def graph_to_bytes(graph: Graph) -> bytes:
    """The bytes `save_graph` would write for ``graph``: to send a graph to another process."""
    buffer = _io.BytesIO()
    with gc_paused():
        _archive_writer(graph)(buffer)
    return buffer.getvalue()


def _archive_writer(graph: Graph) -> Callable[[Any], None]:
    """A function writing ``graph``'s archive to an open binary file; encoding happens now, so
    that an unserializable graph fails before any file is opened."""
    document, arrays = graph_to_document(graph)
    return _document_writer(document, arrays)


def document_bytes(document: dict, arrays: dict) -> bytes:
    """The archive of a `graph_to_document` result, which the caller may have edited (a meta
    graph's export leaves collections and devices out)."""
    buffer = _io.BytesIO()
    _document_writer(document, arrays)(buffer)
    return buffer.getvalue()


def _document_writer(document: dict, arrays: dict) -> Callable[[Any], None]:
    text = _document_text(document)

    def write(f) -> None:
        headers: dict[tuple, bytes] = {}
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(_GRAPH_MEMBER, text)
            for key, array in arrays.items():
                archive.writestr(_ARRAY_PREFIX + key + ".npy", _npy_bytes(array, headers))

    return write


# -- loading ---------------------------------------------------------------------------------------
def load_graph(
    path: Union[str, os.PathLike],
    *,
    max_array_bytes: int = MAX_ARRAY_BYTES,
    allow_file_output: bool = False,
) -> Graph:
    """Reads a graph written by `save_graph` into a new `Graph`.

    Op names, attributes, source locations, collections (with `Variable` objects rebuilt) and
    the records of conds and loops come back as they were.  Raises `GraphFormatError` for a
    malformed, unsupported or hostile file; nothing in the file is ever executed.

    ``max_array_bytes``: the most bytes the file's arrays may hold in all (each array counted
    once, however many ops share it); larger files are refused before their data is read.

    ``allow_file_output``: a print op writing to a file (``output_stream="file://<path>"``)
    would let the file choose what a run writes, and where; such a graph is refused unless this
    is True (see the module docstring).
    """
    path = os.fspath(path)
    try:
        with gc_paused():
            return _load_graph(path, max_array_bytes, allow_file_output)
    except GraphFormatError as e:
        raise GraphFormatError(f"{path}: {e}") from None


def graph_from_bytes(
    data: bytes, *, max_array_bytes: int = MAX_ARRAY_BYTES, allow_file_output: bool = False
) -> Graph:
    """Reads a graph from bytes made by `graph_to_bytes`, with `load_graph`'s checks."""
    try:
        with gc_paused():
            return _load_graph(_io.BytesIO(data), max_array_bytes, allow_file_output)
    except GraphFormatError as e:
        raise GraphFormatError(f"graph bytes: {e}") from None


def _load_graph(path, max_array_bytes: int, allow_file_output: bool) -> Graph:
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise
    except _ZIP_READ_ERRORS as e:
        raise GraphFormatError(f"not a dataflow graph file (a zip archive): {e}") from None
    with archive:
        document = _parse_json(_read_member(archive, _GRAPH_MEMBER, MAX_JSON_BYTES))
        return document_to_graph(
            document, _ArrayReader(archive, max_array_bytes), allow_file_output=allow_file_output
        )


def import_graph_bytes(
    data: bytes,
    graph: Graph,
    *,
    import_scope: Optional[str] = None,
    clear_devices: bool = False,
    keep_collection: Optional[Callable[[str], bool]] = None,
    max_array_bytes: int = MAX_ARRAY_BYTES,
) -> None:
    """Adds the graph that `graph_to_bytes` wrote to the existing ``graph`` (what
    ``tf.train.import_meta_graph`` does with a meta graph's graph), with `load_graph`'s checks:
    nothing in the bytes is ever executed, sizes are bounded, a print op writing to a file is
    refused.

    ``import_scope``: a prefix for every name of the file (op names, the tensors and ops that
    loops, conds, variables and collections name, loop frames and variables' shared names),
    so that one graph can be imported twice.  ``clear_devices``: the ops' devices are dropped.
    ``keep_collection``: a predicate on collection names; collections it refuses are not added.

    The file is checked in full (built into a graph of its own) before anything is added, and
    a name ``graph`` already holds is refused, so a refused file leaves ``graph`` unchanged.
    Raises `GraphFormatError`.
    """
    try:
        with gc_paused():
            document = _document_of_bytes(data)
            if not isinstance(document, dict):
                _fail(_GRAPH_MEMBER, "the document is an object")
            if import_scope:
                scope = import_scope.rstrip("/")
                if not _VALID_OP_NAME.match(scope):
                    raise ValueError(f"import_scope {import_scope!r:.80} is not a valid name scope")
                _rename_document(document, lambda name: f"{scope}/{name}")
            if clear_devices:
                for record in document.get("ops", ()):
                    if isinstance(record, dict):
                        record.pop("device", None)
            if keep_collection is not None and isinstance(document.get("collections"), dict):
                document["collections"] = {
                    k: v for k, v in document["collections"].items() if keep_collection(k)
                }
            # Built twice: first into a graph of its own, where any damage fails with nothing
            # added to ``graph``, then into ``graph``.
            with zipfile.ZipFile(_io.BytesIO(data)) as archive:
                document_to_graph(document, _ArrayReader(archive, max_array_bytes))
                graph._check_not_finalized("a graph was imported")
                document_to_graph(document, _ArrayReader(archive, max_array_bytes), into=graph)
    except GraphFormatError as e:
        raise GraphFormatError(f"graph bytes: {e}") from None


def _document_of_bytes(data: bytes):
    try:
        archive = zipfile.ZipFile(_io.BytesIO(data))
    except _ZIP_READ_ERRORS as e:
        raise GraphFormatError(f"not a dataflow graph file (a zip archive): {e}") from None
    with archive:
        return _parse_json(_read_member(archive, _GRAPH_MEMBER, MAX_JSON_BYTES))


def _rename_document(document: dict, rename: Callable[[str], str]) -> None:
    """Renames, in place, every name a parsed ``graph.json`` gives an op or refers to an op or
    tensor by.  A field of the wrong type is left as it is, for `document_to_graph` to refuse."""

    def name(value):
        return rename(value) if isinstance(value, str) else value

    def names(values):
        return [name(v) for v in values] if isinstance(values, list) else values

    def rename_str_attr(attrs: dict, key: str, only_if=None) -> None:
        value = attrs.get(key)
        if isinstance(value, dict) and isinstance(value.get("str"), str):
            if only_if is None or value["str"] == only_if:
                attrs[key] = {"str": rename(value["str"])}

    for record in document.get("ops", ()) if isinstance(document.get("ops"), list) else ():
        if not isinstance(record, dict):
            continue
        old = record.get("name")
        record["name"] = name(old)
        if isinstance(record.get("inputs"), list):
            record["inputs"] = [
                [name(ref[0]), ref[1]] if isinstance(ref, list) and len(ref) == 2 else ref
                for ref in record["inputs"]
            ]
        record["control_inputs"] = names(record.get("control_inputs"))
        attrs = record.get("attrs")
        if isinstance(attrs, dict):
            if record.get("type") == "VarHandleOp":  # the Session keeps values by this name
                rename_str_attr(attrs, "shared_name", only_if=old)
            rename_str_attr(attrs, "frame_name")
    contexts = document.get("contexts")
    for record in contexts if isinstance(contexts, list) else ():
        if not isinstance(record, dict):
            continue
        for field in ("name", "pred", "pivot", "pivot_for_pred", "loop_cond"):
            if field in record:
                record[field] = name(record[field])
        for field in ("frame_name", "maximum_iterations"):
            if field in record:
                record[field] = name(record[field])
        for field in ("loop_enters", "merges", "switches", "exits", "next_iterations"):
            if field in record:
                record[field] = names(record[field])
    variables = document.get("variables")
    for record in variables if isinstance(variables, list) else ():
        if isinstance(record, dict):
            for field in ("handle", "initializer", "snapshot", "initial_value"):
                if field in record:
                    record[field] = name(record[field])
    collections = document.get("collections")
    for items in collections.values() if isinstance(collections, dict) else ():
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, dict) or len(item) != 1:
                continue
            ((kind, value),) = item.items()
            if kind in ("tensor", "operation"):
                item[kind] = name(value)
            elif kind == "queue_runner" and isinstance(value, dict):
                for field in ("queue", "close_op", "cancel_op"):
                    if field in value:
                        value[field] = name(value[field])
                if "enqueue_ops" in value:
                    value["enqueue_ops"] = names(value["enqueue_ops"])


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


def _read_member(archive: zipfile.ZipFile, name: str, limit: int) -> bytearray:
    """The bytes of the member ``name``, refused past ``limit`` bytes.

    A member whose header declares more than ``limit`` is refused before any is read; the rest
    are read a chunk at a time into a buffer of the declared size.  zipfile never returns more
    than a member declares, and checks its CRC once it has returned that much, so a member that
    decompresses to more than it declares (a zip bomb) costs at most its declared size, and is
    reported as damaged."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise GraphFormatError(f"the archive has no {name}") from None
    if info.file_size > limit:
        raise GraphFormatError(f"{name} is too large ({info.file_size}B, at most {limit}B)")
    data = bytearray(info.file_size)
    with _open_member(archive, info) as stream:
        read = _read_into(stream, np.frombuffer(data, np.uint8))
    if read != len(data):
        raise GraphFormatError(f"{name} is truncated ({read}B of the {len(data)}B it declares)")
    return data


def _reject_constant(name: str):
    raise GraphFormatError(f"{_GRAPH_MEMBER} holds the non-standard JSON constant {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        _fail(_GRAPH_MEMBER, f"the number {text:.40} is out of the range of a float64")
    return value


def _parse_json(raw: bytearray) -> Any:
    """``graph.json`` parsed, once `_check_json_bounds` has bounded what parsing it builds."""
    _check_json_bounds(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise GraphFormatError(f"{_GRAPH_MEMBER} is not valid JSON: {e}") from None
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except GraphFormatError:
        raise
    except json.JSONDecodeError as e:
        raise GraphFormatError(f"{_GRAPH_MEMBER} is not valid JSON: {e}") from None
    except ValueError as e:  # an integer of more digits than Python converts
        raise GraphFormatError(f"{_GRAPH_MEMBER} holds a number too long to read: {e}") from None


_BACKSLASH_ESCAPE = re.compile(rb"\\[\s\S]?")
# The bytes that decide where strings are, which values there are and how deep they nest.
_JSON_MARKS = b'"[]{},:'
_NOT_JSON_MARKS = bytes(sorted(set(range(256)) - set(_JSON_MARKS)))
_SCAN_CHUNK = 2**16


def _check_json_bounds(raw: bytearray) -> None:
    """Refuses JSON text holding more than `MAX_JSON_VALUES` values or nested deeper than
    `MAX_JSON_DEPTH`, in time and memory linear in its size, before `json.loads` builds anything
    (it builds the whole document before returning, so a few megabytes of ``[{},{},...]``
    would become gigabytes of dicts before any check on the result could run).

    Each value the parser builds (an element, a key, a member's value) is the whole text or
    comes right after a ``[``, ``{``, ``,`` or ``:`` that is not inside a string, so one more
    than their count bounds the values; the depth is the running count of openers less closers.
    The scan drops backslash escapes (so that every quote left opens or closes a string), keeps
    only quotes, brackets, commas and colons, and counts, a chunk at a time with numpy, those
    that follow an even number of quotes.  UTF-8 never uses the bytes of a quote or a backslash
    inside a multi-byte character, so the scan of the bytes agrees with the parser's reading of
    the text.  Invalid JSON makes the parser stop at its first error, having read the same
    strings up to there, so the bounds hold for what it built before it stopped.

    The marks are picked out a chunk at a time too: text that is all marks (``[{},{},...]``)
    costs a chunk more, not a copy of itself; only dropping escapes copies the text, once, and
    only when it has some.
    """
    unescaped = _BACKSLASH_ESCAPE.sub(b"", raw) if b"\\" in raw else raw
    quotes_before = values = depth = 0
    for start in range(0, len(unescaped), _SCAN_CHUNK):
        marks = unescaped[start : start + _SCAN_CHUNK].translate(None, _NOT_JSON_MARKS)
        if not marks:
            continue
        chunk = np.frombuffer(marks, np.uint8)
        is_quote = chunk == ord('"')
        quotes = np.cumsum(is_quote, dtype=np.int64)
        outside = ((quotes + quotes_before) % 2 == 0) & ~is_quote
        quotes_before += int(quotes[-1])
        opens = outside & ((chunk == ord("[")) | (chunk == ord("{")))
        closes = outside & ((chunk == ord("]")) | (chunk == ord("}")))
        values += int(np.count_nonzero(opens)) + int(
            np.count_nonzero(outside & ((chunk == ord(",")) | (chunk == ord(":"))))
        )
        if 1 + values > MAX_JSON_VALUES:
            raise GraphFormatError(f"{_GRAPH_MEMBER} holds more than {MAX_JSON_VALUES} JSON values")
        running = depth + np.cumsum(opens.view(np.int8) - closes.view(np.int8), dtype=np.int64)
        if int(running.max()) > MAX_JSON_DEPTH:
            raise GraphFormatError(
                f"{_GRAPH_MEMBER} is nested too deeply (more than {MAX_JSON_DEPTH} levels)"
            )
        depth = int(running[-1])


def _expect_keys(obj, required: set, optional: set, where: str) -> None:
    if not isinstance(obj, dict):
        _fail(where, f"expected a JSON object, got {type(obj).__name__}")
    missing = required - set(obj)
    if missing:
        _fail(where, f"missing field(s) {sorted(missing)}")
    unknown = set(obj) - required - optional
    if unknown:
        _fail(where, f"unknown field(s) {sorted(unknown)[:5]}")


_OP_FIELDS = {"name", "type", "inputs", "control_inputs", "attrs", "outputs", "location", "context"}


def document_to_graph(
    document,
    arrays: Optional[_ArrayReader] = None,
    check_outputs: bool = True,
    allow_file_output: bool = False,
    into: Optional[Graph] = None,
) -> Graph:
    """Builds a new `Graph` from a parsed ``graph.json`` (and its arrays); a print op writing to
    a file is refused unless ``allow_file_output`` (see `load_graph`).  ``into``: an existing
    graph to add the ops to instead (`import_graph_bytes`); an op name it already holds is
    refused before anything is added."""
    _expect_keys(
        document,
        {"format", "version", "ops"},
        {"contexts", "collections", "variables"},
        _GRAPH_MEMBER,
    )
    if document["format"] != FORMAT_NAME:
        _fail(_GRAPH_MEMBER, f"format is {document['format']!r:.80}, expected {FORMAT_NAME!r}")
    if type(document["version"]) is not int or document["version"] != FORMAT_VERSION:
        _fail(
            _GRAPH_MEMBER,
            f"format version {document['version']!r:.40} is not supported (this reader reads "
            f"version {FORMAT_VERSION})",
        )
    records = document["ops"]
    if not isinstance(records, list):
        _fail(_GRAPH_MEMBER, "'ops' is a list")
    contexts_doc = document.get("contexts", [])
    if not isinstance(contexts_doc, list):
        _fail(_GRAPH_MEMBER, "'contexts' is a list")

    graph = Graph() if into is None else into
    positions: dict[str, int] = {}
    for i, record in enumerate(records):
        _expect_keys(record, _OP_FIELDS - {"outputs"}, {"outputs", "device"}, f"op #{i}")
        name = _check_str(record["name"], f"op #{i} name")
        if not _VALID_OP_NAME.match(name) or name.endswith("/"):
            _fail(f"op #{i}", f"{name!r:.80} is not a valid op name")
        if name in positions:
            _fail(f"op '{name}'", "duplicate op name")
        if into is not None and name in into._ops_by_name:
            _fail(
                f"op '{name}'",
                "the graph imported into already has an op of this name (import under a "
                "scope of its own: import_scope)",
            )
        positions[name] = i

    deferred: list[tuple[Operation, int, str, int]] = []
    context_of: dict[Operation, int] = {}
    for i, record in enumerate(records):
        name = record["name"]
        where = f"{record['type']!r:.40} op '{name}'" if isinstance(record["type"], str) else name
        op_type = _check_str(record["type"], f"op '{name}' type")
        try:
            op_def = get_op_def(op_type)
        except KeyError:
            _fail(f"op '{name}'", f"unknown op type {op_type!r:.80}")
        is_merge = op_def.kind == NodeKind.MERGE
        if not isinstance(record["attrs"], dict):
            _fail(where, "'attrs' is an object")
        attrs = {}
        for key, encoded in record["attrs"].items():
            value = _decode_value(encoded, arrays, f"attribute '{key}' of {where}")
            _check_attr(where, key, value)
            if key not in DATA_TEXT_ATTRS:
                _check_text(value, f"attribute '{key}' of {where}")
            if key == "output_stream" and not allow_file_output:
                _check_not_a_file(where, value)
            attrs[key] = _PLAN_ATTRS.get((op_type, key), value)
        if op_type == "Const":
            _check_const(where, attrs)
        _check_output_count(op_type, attrs, record, where)
        if not isinstance(record["inputs"], list):
            _fail(where, "'inputs' is a list")
        inputs: list[Tensor] = []
        pending: list[tuple[int, str, int]] = []
        for j, ref in enumerate(record["inputs"]):
            if not (isinstance(ref, list) and len(ref) == 2):
                _fail(where, f"input {j} is [op name, output index], got {ref!r:.80}")
            producer = _check_str(ref[0], f"{where} input {j}")
            index = _check_int(ref[1], f"{where} input {j}", 0)
            if producer not in positions:
                _fail(where, f"input {j} comes from op '{producer:.80}', which is not in the file")
            if positions[producer] >= i:
                producer_type = records[positions[producer]]["type"]
                if not is_merge or _kind_of(producer_type) != NodeKind.NEXT_ITERATION:
                    _fail(
                        where,
                        f"input {j} comes from op '{producer}', which is defined later (only a "
                        "Merge may take a NextIteration defined after it, a loop's back edge)",
                    )
                pending.append((j, producer, index))
                inputs.append(None)
                continue
            inputs.append(_output_of(graph, producer, index, f"{where} input {j}"))
        if pending:
            available = [t for t in inputs if t is not None]
            if not available:
                _fail(where, "a Merge needs at least one input defined before it")
            inputs = [t if t is not None else available[0] for t in inputs]
        location = _decode_location(record["location"], where)
        op = _create(graph, op_def, name, inputs, attrs, location, where)
        if "device" in record:
            device = _check_printable_str(record["device"], f"{where} device")
            try:
                op._set_device(device)
            except ValueError as e:
                _fail(where, f"bad device: {e}")
        deferred.extend((op, j, producer, index) for j, producer, index in pending)
        if record["context"] is not None:
            context_of[op] = _check_int(record["context"], f"{where} context", 0)
            if context_of[op] >= len(contexts_doc):
                _fail(where, f"context {context_of[op]} is not in 'contexts'")
        if check_outputs or "outputs" in record:
            _apply_outputs(op, record.get("outputs"), where)

    for op, j, producer, index in deferred:
        tensor = _output_of(graph, producer, index, f"Merge op '{op.name}' input {j}")
        if tensor.dtype is not op.outputs[0].dtype:
            _fail(f"Merge op '{op.name}'", f"input {j} ({tensor.name}) has another dtype")
        op._update_input(j, tensor)

    for record in records:
        op = graph.get_operation_by_name(record["name"])
        where = f"op '{op.name}'"
        if not isinstance(record["control_inputs"], list):
            _fail(where, "'control_inputs' is a list")
        names: dict[str, None] = {}  # in order, each once (a set would lose the order)
        for c in record["control_inputs"]:
            c = _check_str(c, f"{where} control input")
            if c not in positions:
                _fail(where, f"control input '{c:.80}' is not in the file")
            names[c] = None
        op._control_inputs = [graph.get_operation_by_name(c) for c in names]

    contexts = _build_contexts(graph, contexts_doc)
    for op, index in context_of.items():
        op._control_flow_context = contexts[index]
    _build_collections(graph, document, contexts)
    _register_scopes(graph, positions)
    return graph


def _register_scopes(graph: Graph, op_names) -> None:
    """Marks each scope the ops lie in (``a`` and ``a/b`` for ``a/b/c``) as a name in use, as
    building the ops under them would have, so that a new op or name scope of the loaded graph
    never takes the name of an existing scope.

    A name's scopes are walked from the longest and the walk stops at one met before (whose own
    scopes were marked with it), so each scope costs once however many ops share it.  A scope
    is a new string as long as the name it starts, so their total size is bounded
    (`MAX_SCOPE_BYTES`, counting each with the bytes of an entry of a dict): a few megabytes of
    op names nested in thousands of distinct scopes each would otherwise take gigabytes.
    """
    seen: set[str] = set()
    budget = MAX_SCOPE_BYTES
    for name in op_names:
        end = name.rfind("/")
        while end > 0:
            scope = name[:end]
            if scope in seen:
                break
            budget -= len(scope) + _SCOPE_ENTRY_BYTES
            if budget < 0:
                _fail(
                    _GRAPH_MEMBER,
                    f"the op names lie in scopes of more than {MAX_SCOPE_BYTES}B in all (op "
                    f"'{name:.80}...' is nested {name.count('/')} deep)",
                )
            seen.add(scope)
            graph._names_in_use.setdefault(scope.lower(), 1)
            end = name.rfind("/", 0, end)


def _check_not_a_file(where: str, stream: str) -> None:
    if stream.startswith("file://"):
        _fail(
            where,
            f"it prints to the file '{stream[len('file://') :]:.200}' (output_stream "
            f"{stream!r:.200}), and a graph loaded from a file may write files only when it is "
            "loaded with load_graph(..., allow_file_output=True) (python -m dataflow run "
            "--allow-file-output)",
        )


def _kind_of(op_type) -> Optional[NodeKind]:
    """The executor kind of the registered op type ``op_type``; None for anything else."""
    if not isinstance(op_type, str):
        return None
    try:
        return get_op_def(op_type).kind
    except KeyError:
        return None


def _check_const(where: str, attrs: dict) -> None:
    value, dtype = attrs.get("value"), attrs.get("dtype")
    if not isinstance(value, np.ndarray) or not isinstance(dtype, _dtypes.DType):
        _fail(where, "a Const has a 'value' array and a 'dtype'")
    if value.dtype != _dtypes.numpy_dtype(dtype) or dtype is _dtypes.resource:
        _fail(where, f"value of dtype {value.dtype} does not match dtype {dtype.name}")


def _output_of(graph: Graph, producer: str, index: int, where: str) -> Tensor:
    op = graph.get_operation_by_name(producer)
    if index >= len(op.outputs):
        _fail(where, f"op '{producer}' has {len(op.outputs)} outputs, not output {index}")
    return op.outputs[index]


def _create(
    graph: Graph,
    op_def,
    name: str,
    inputs: list,
    attrs: dict,
    location: SourceLocation,
    where: str,
) -> Operation:
    try:
        return graph.create_op(op_def, inputs, attrs, name=name + "/", location=location)
    except GraphFormatError:
        raise
    except Exception as e:  # inference of a malformed op can fail in any way
        raise GraphFormatError(f"{where}: invalid op: {type(e).__name__}: {e}") from None


def _decode_location(location, where: str) -> SourceLocation:
    _expect_keys(location, {"file", "line", "function"}, set(), f"{where} location")
    return SourceLocation(
        _check_printable_str(location["file"], f"{where} location file"),
        _check_int(location["line"], f"{where} location line"),
        _check_printable_str(location["function"], f"{where} location function"),
    )


_OUTPUT_FIELDS = {"dtype", "shape"}


def _apply_outputs(op: Operation, outputs, where: str) -> None:
    """Checks the recorded output dtypes and restores the recorded (possibly refined) shapes.

    Runs once per op of a file: the description of a failure is formatted only on failure."""
    if not isinstance(outputs, list) or len(outputs) != len(op.outputs):
        _fail(where, f"'outputs' lists {len(op.outputs)} outputs for this op")
    for k, (tensor, spec) in enumerate(zip(op.outputs, outputs)):
        if type(spec) is not dict or spec.keys() != _OUTPUT_FIELDS:
            _expect_keys(spec, _OUTPUT_FIELDS, set(), f"{where} output {k}")
        dtype = spec["dtype"]
        if not (type(dtype) is str and dtype == tensor.dtype.name):
            dtype = _decode_value({"dtype": dtype}, None, f"{where} output {k} dtype")
            if dtype is not tensor.dtype:
                _fail(where, f"output {k} is recorded as {dtype.name}, but is {tensor.dtype.name}")
        shape = TensorShape(_decode_shape_dims(spec["shape"], f"{where} output {k} shape"))
        if not shape.is_compatible_with(tensor.shape):
            _fail(where, f"output {k} is recorded with shape {shape}, but has {tensor.shape}")
        tensor._shape = shape


def _build_contexts(graph: Graph, contexts_doc: list) -> list:
    from primitives.contexts import CondContext, ControlFlowContext, WhileContext

    def tensor(name, where, optional=False):
        if name is None and optional:
            return None
        name = _check_str(name, where)
        try:
            return graph.get_tensor_by_name(name)
        except (KeyError, ValueError):
            _fail(where, f"tensor '{name:.80}' is not in the graph")

    def op(name, where, optional=False):
        if name is None and optional:
            return None
        name = _check_str(name, where)
        try:
            return graph.get_operation_by_name(name)
        except (KeyError, ValueError):
            _fail(where, f"op '{name:.80}' is not in the graph")

    contexts = []
    for i, record in enumerate(contexts_doc):
        where = f"context #{i}"
        if not isinstance(record, dict) or record.get("kind") not in ("cond", "while"):
            _fail(where, "a context is an object with kind 'cond' or 'while'")
        if record["kind"] == "cond":
            _expect_keys(record, {"kind", "name", "pred", "pivot", "branch", "outer"}, set(), where)
            context = CondContext.__new__(CondContext)
            context.pred = tensor(record["pred"], f"{where} pred")
            context.pivot = tensor(record["pivot"], f"{where} pivot", optional=True)
            context.branch = _check_int(record["branch"], f"{where} branch", 0)
            if context.branch > 1:
                _fail(where, "branch is 0 or 1")
        else:
            fields = {
                "kind",
                "name",
                "frame_name",
                "pivot",
                "pivot_for_pred",
                "loop_enters",
                "merges",
                "switches",
                "exits",
                "next_iterations",
                "loop_cond",
                "parallel_iterations",
                "back_prop",
                "swap_memory",
                "maximum_iterations",
                "outer",
            }
            _expect_keys(record, fields, set(), where)
            context = WhileContext.__new__(WhileContext)
            context.frame_name = _check_printable_str(record["frame_name"], f"{where} frame_name")
            context.pivot = tensor(record["pivot"], f"{where} pivot", optional=True)
            context.pivot_for_pred = tensor(
                record["pivot_for_pred"], f"{where} pivot_for_pred", optional=True
            )
            for field in ("loop_enters", "merges", "switches", "exits", "next_iterations"):
                names = record[field]
                if not isinstance(names, list):
                    _fail(where, f"'{field}' is a list of op names")
                setattr(context, field, [op(n, f"{where} {field}") for n in names])
            context.loop_cond = op(record["loop_cond"], f"{where} loop_cond", optional=True)
            context.parallel_iterations = _check_int(
                record["parallel_iterations"], f"{where} parallel_iterations", 1
            )
            for field in ("back_prop", "swap_memory"):
                if not isinstance(record[field], bool):
                    _fail(where, f"'{field}' is a bool")
                setattr(context, field, record[field])
            context.maximum_iterations = tensor(
                record["maximum_iterations"], f"{where} maximum_iterations", optional=True
            )
            context._exit_ops = set(context.exits)
        name = _check_printable_str(record["name"], f"{where} name")
        ControlFlowContext.__init__(context, graph, name, None)
        contexts.append(context)
    for i, record in enumerate(contexts_doc):
        outer = record["outer"]
        if outer is not None:
            _check_int(outer, f"context #{i} outer", 0)
            if outer >= i:
                _fail(f"context #{i}", "'outer' must name an earlier context")
            contexts[i].outer_context = contexts[outer]
    return contexts


def _build_collections(graph: Graph, document: dict, contexts: list) -> None:
    from ..ops.variables import Variable

    variables = []
    variable_docs = document.get("variables", [])
    if not isinstance(variable_docs, list):
        _fail(_GRAPH_MEMBER, "'variables' is a list")
    for i, record in enumerate(variable_docs):
        where = f"variable #{i}"
        _expect_keys(
            record,
            {"handle", "initializer", "snapshot", "initial_value", "trainable"},
            set(),
            where,
        )
        try:
            handle = graph.get_operation_by_name(_check_str(record["handle"], where))
            initializer = graph.get_operation_by_name(_check_str(record["initializer"], where))
            snapshot = graph.get_tensor_by_name(_check_str(record["snapshot"], where))
            initial = graph.get_tensor_by_name(_check_str(record["initial_value"], where))
        except (KeyError, ValueError) as e:
            _fail(where, f"refers to something not in the graph: {e}")
        if handle.type != "VarHandleOp":
            _fail(where, f"the handle '{handle.name}' is a {handle.type}, not a VarHandleOp")
        if not isinstance(record["trainable"], bool):
            _fail(where, "'trainable' is a bool")
        variable = Variable.__new__(Variable)
        variable._dtype = handle.attrs["dtype"]
        variable._shape = handle.attrs["shape"]
        variable._handle = handle.outputs[0]
        variable._initializer_op = initializer
        variable._snapshot = snapshot
        variable._initial_value = initial
        variable._trainable = record["trainable"]
        variable._graph = graph
        variables.append(variable)

    collections = document.get("collections", {})
    if not isinstance(collections, dict):
        _fail(_GRAPH_MEMBER, "'collections' is an object")
    for key, items in collections.items():
        where = f"collection {key!r:.80}"
        _check_text(key, where)
        if not isinstance(items, list):
            _fail(where, "a collection is a list")
        for item in items:
            if not isinstance(item, dict) or len(item) != 1:
                _fail(where, f"bad item {item!r:.80}")
            ((kind, value),) = item.items()
            if kind == "variable":
                if type(value) is not int or not 0 <= value < len(variables):
                    _fail(where, f"no variable #{value!r:.20}")
                element = variables[value]
            elif kind == "context":
                if type(value) is not int or not 0 <= value < len(contexts):
                    _fail(where, f"no context #{value!r:.20}")
                element = contexts[value]
            elif kind in ("tensor", "operation"):
                try:
                    element = graph.as_graph_element(
                        _check_str(value, where),
                        allow_tensor=kind == "tensor",
                        allow_operation=kind == "operation",
                    )
                except (KeyError, ValueError) as e:
                    _fail(where, str(e))
            elif kind == "value":
                element = _decode_value(value, None, where)
            elif kind in _COLLECTION_ITEM_KINDS:
                try:
                    element = _COLLECTION_ITEM_KINDS[kind][1](graph, value)
                except (KeyError, ValueError, TypeError) as e:
                    _fail(where, f"bad {kind.replace('_', ' ')}: {e}")
            else:
                _fail(where, f"unknown item kind {kind!r:.40}")
            _check_standard_collection(key, element, where)
            graph.add_to_collection(key, element)


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


def _check_standard_collection(key: str, element, where: str) -> None:
    if _misplaced_in_standard_collection(key, element):
        _fail(
            where,
            f"holds only {_standard_collection_items(key)[1]}, not {type(element).__name__} "
            f"{element!r:.80}",
        )

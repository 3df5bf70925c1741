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

import io as _io
import json
import math
import os
import re
import zipfile
from collections.abc import Callable
from typing import Any, Optional, Union

import numpy as np

from executor.program import NodeKind

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import MAX_ARRAY_BYTES
from ..framework.graph import (
    _VALID_OP_NAME,
    DATA_TEXT_ATTRS,
    Graph,
    Operation,
    SourceLocation,
    Tensor,
)
from ..framework.graph_walk import gc_paused
from ..framework.op_registry import get_op_def
from ..framework.tensor_shape import TensorShape
from .dfg_format import (  # noqa: F401 - defined there, reached here too
    _ARRAY_PREFIX,
    _COLLECTION_ITEM_KINDS,
    _GRAPH_MEMBER,
    _PLAN_ATTRS,
    _SCOPE_ENTRY_BYTES,
    _ZIP_READ_ERRORS,
    FORMAT_NAME,
    FORMAT_VERSION,
    MAX_OUTPUTS,
    GraphFormatError,
    GraphNotSerializableError,
    _ArrayReader,
    _ArrayWriter,
    _check_attr,
    _check_int,
    _check_output_count,
    _check_printable_str,
    _check_str,
    _check_text,
    _collection_item_kind,
    _decode_shape_dims,
    _decode_value,
    _encode_shape,
    _encode_value,
    _fail,
    _is_stream,
    _misplaced_in_standard_collection,
    _name,
    _open_member,
    _parse_npy_preamble,
    _read_into,
    _read_npy_data,
    _read_npy_header,
    _register_collection_item,
    _register_pipeline_stage_kinds,
    _standard_collection_items,
)
from .dfg_save import (  # noqa: F401 - defined there, reached here too
    STALE_TEMPORARY_SECONDS,
    _atomic_write,
    _remove_stale_temporaries,
    _tensor_name,
    document_bytes,
    graph_to_bytes,
    graph_to_document,
    save_graph,
)

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "GraphFormatError",
    "GraphNotSerializableError",
    "load_graph",
    "save_graph",
]


MAX_JSON_BYTES = 256 * 2**20
# The most values (arrays, objects, keys, strings, numbers, literals) graph.json may hold, and
# how deeply they may nest; a graph needs about 40 values per op, 10 levels deep.  At this
# bound, parsing builds at most about 1.5 GB of Python objects, whatever the file holds.
MAX_JSON_VALUES = 2**24
MAX_JSON_DEPTH = 64
# The most bytes the distinct scopes of the op names may take (see `_register_scopes`), as
# many as graph.json may hold; a graph of a million ops, each in a scope of its own, takes
# about 130 MB.
MAX_SCOPE_BYTES = 2**28


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


def _check_standard_collection(key: str, element, where: str) -> None:
    if _misplaced_in_standard_collection(key, element):
        _fail(
            where,
            f"holds only {_standard_collection_items(key)[1]}, not {type(element).__name__} "
            f"{element!r:.80}",
        )

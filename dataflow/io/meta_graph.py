"""Meta graphs: a graph together with what a program needs to pick it up again
(``tf.compat.v1.MetaGraphDef``, ``tf.train.export_meta_graph``, ``tf.train.import_meta_graph``).

The ``.meta`` file that ``Saver.save`` writes beside a checkpoint, and that
``import_meta_graph`` reads back, is **dataflow's format, not TensorFlow's**: TensorFlow's
``MetaGraphDef`` holds a protobuf ``GraphDef`` of TensorFlow's op set, while here the graph is
dataflow's own graph document (`dataflow.io`, the ``.dfg`` archive: every op, collection,
variable and control-flow record), so any graph dataflow builds can be saved and its
collections (``train_op``, losses, queue runners, ...) come back as they were.  Neither
library reads the other's ``.meta`` files (``df.train.write_graph`` and
``df.import_graph_def`` exchange graphs of the shared op set with TensorFlow).

This module is the format; ``export_meta_graph`` and ``import_meta_graph``, which write and
read it with a Saver's settings, are in `dataflow.io.saver`.

A serialized `MetaGraphDef` is a zip archive of two members:

- ``meta_graph.json``: ``{"format": "dataflow.meta_graph", "version": 1, "meta_info_def":
  {"meta_graph_version": str, "tags": [str], "stripped_default_attrs": false},
  "saver_def": null | {"max_to_keep": int, "keep_checkpoint_every_n_hours": float,
  "sharded": bool, "version": int, "pad_step_number": bool, "reshape": bool,
  "allow_empty": bool, "variables": {checkpoint name: variable op name}},
  "signature_def": {key: {"inputs": {k: TensorInfo}, "outputs": {k: TensorInfo},
  "method_name": str}}}``, a TensorInfo being ``{"name": "x:0", "dtype": "float32",
  "tensor_shape": [2, null] | null}``;
- ``graph.dfg``: the graph, `dataflow.io`'s archive.

Reading one is as safe as `dataflow.io.load_graph`: nothing in the file is ever executed
(JSON and NPY only), every size is bounded before anything is built from it, and a damaged or
hostile file raises `dataflow.io.GraphFormatError` naming what is wrong.
"""

from __future__ import annotations

import dataclasses
import io as _io
import json
import math
import zipfile
from dataclasses import dataclass, field
from typing import Any, Optional

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import MAX_ARRAY_BYTES, MAX_RANK
from ..framework.graph import Graph
from ..framework.protos import Message
from ..framework.tensor_shape import TensorShape
from .dfg import (
    _ZIP_READ_ERRORS,
    MAX_JSON_BYTES,
    GraphFormatError,
    _parse_json,
    _read_member,
)

__all__ = ["MetaGraphDef", "TensorInfo"]

FORMAT_NAME = "dataflow.meta_graph"
FORMAT_VERSION = 1
_META_MEMBER = "meta_graph.json"
_GRAPH_MEMBER = "graph.dfg"
# The settings are a few numbers and names; the graph is bounded as dataflow.io bounds a file.
MAX_META_JSON_BYTES = 64 * 2**20
MAX_GRAPH_BYTES = MAX_JSON_BYTES + MAX_ARRAY_BYTES


def _fail(message: str):
    raise GraphFormatError(f"{_META_MEMBER}: {message}")


def _expect(obj, keys: set, where: str) -> dict:
    if not isinstance(obj, dict) or not set(obj) <= keys:
        extra = sorted(set(obj) - keys) if isinstance(obj, dict) else None
        _fail(f"{where} is an object of the fields {sorted(keys)} (got {extra or type(obj)!r:.80})")
    return obj


def _typed(value, kinds, where: str):
    if type(value) not in kinds:
        _fail(f"{where} is a {' or '.join(k.__name__ for k in kinds)}, got {value!r:.80}")
    return value


@dataclass
class TensorInfo(Message):
    """Names a tensor of a meta graph's graph, with its dtype and static shape
    (``tf.compat.v1.TensorInfo``, as ``tf.compat.v1.saved_model.build_tensor_info`` makes
    one): what a signature of a `MetaGraphDef` (``signature_def``) lists as its inputs and
    outputs.

    ``name``: ``"op:index"``; ``dtype``: a `DType` or its name (kept as the `DType`);
    ``tensor_shape``: a `TensorShape`, a list of dimensions (None for an unknown one) or None
    for an unknown rank.  Only dense tensors are described (TensorFlow's ``coo_sparse`` and
    ``composite_tensor`` encodings have no counterpart here).  In memory and in dataflow's
    meta graph file; it is not TensorFlow's protobuf message.
    """

    name: str = ""
    dtype: Any = None
    tensor_shape: Any = None

    def __post_init__(self):
        if self.dtype is not None:
            self.dtype = _dtypes.as_dtype(self.dtype)
        self.tensor_shape = TensorShape(self.tensor_shape)

    @classmethod
    def from_tensor(cls, tensor) -> TensorInfo:
        """The description of ``tensor`` (a `Tensor` of a graph)."""
        return cls(name=tensor.name, dtype=tensor.dtype, tensor_shape=tensor.shape)

    def _record(self) -> dict:
        dims = None if self.tensor_shape.rank is None else self.tensor_shape.as_list()
        return {
            "name": self.name,
            "dtype": None if self.dtype is None else self.dtype.name,
            "tensor_shape": dims,
        }

    @classmethod
    def _from_record(cls, record, where: str) -> TensorInfo:
        record = _expect(record, {"name", "dtype", "tensor_shape"}, where)
        name = _typed(record.get("name", ""), (str,), f"{where} name")
        dtype = record.get("dtype")
        if dtype is not None:
            try:
                dtype = _dtypes.as_dtype(_typed(dtype, (str,), f"{where} dtype"))
            except (TypeError, ValueError, KeyError):
                _fail(f"{where} dtype {dtype!r:.40} is not a dtype")
        dims = record.get("tensor_shape")
        if dims is not None:
            if not isinstance(dims, list) or len(dims) > MAX_RANK:
                _fail(f"{where} tensor_shape is a list of at most {MAX_RANK} dimensions")
            for d in dims:
                if d is not None and (type(d) is not int or d < 0):
                    _fail(f"{where} tensor_shape has the bad dimension {d!r:.40}")
        return cls(name=name, dtype=dtype, tensor_shape=dims)


@dataclass
class SignatureDef(Message):
    """A named computation of a meta graph: its input and output tensors by key."""

    inputs: dict[str, TensorInfo] = field(default_factory=dict)
    outputs: dict[str, TensorInfo] = field(default_factory=dict)
    method_name: str = ""


@dataclass
class MetaInfoDef(Message):
    """What a meta graph says about itself (``MetaGraphDef.meta_info_def``):
    ``meta_graph_version`` (free text), ``tags`` (as SavedModel tags),
    ``stripped_default_attrs`` (always False here: dataflow's graph format writes every
    attribute of every op)."""

    meta_graph_version: str = ""
    tags: list[str] = field(default_factory=list)
    stripped_default_attrs: bool = False


@dataclass
class SaverSettings(Message):
    """``MetaGraphDef.saver_def``: the settings of the `Saver` the meta graph was exported
    with, and the variables it saves (checkpoint name -> the variable's op name), from which
    ``import_meta_graph`` builds the same Saver over the imported variables.  (TensorFlow's
    ``SaverDef`` names save and restore ops instead; a Saver here builds no ops.)"""

    max_to_keep: int = 5
    keep_checkpoint_every_n_hours: float = 10000.0
    sharded: bool = False
    version: int = 2
    pad_step_number: bool = False
    reshape: bool = False
    allow_empty: bool = False
    variables: dict[str, str] = field(default_factory=dict)


@dataclass
class MetaGraphDef(Message):
    """A graph and what goes with it (``tf.compat.v1.MetaGraphDef``), in **dataflow's format,
    not TensorFlow's** (see the module docstring).

    ``graph_def``: the graph, as the bytes of `dataflow.io`'s graph archive (``.dfg``; build
    it with `graph` or `dataflow.io.graph_from_bytes`); its collections are part of it
    (`collection_def` lists their names).  ``saver_def``: a `SaverSettings` or None.
    ``meta_info_def``: a `MetaInfoDef`.  ``signature_def``: named `SignatureDef` records.

    ``SerializeToString``/``ParseFromString``/``FromString`` as a protobuf message;
    parsing checks everything as `dataflow.io.load_graph` does and never runs code.
    """

    meta_info_def: MetaInfoDef = field(default_factory=MetaInfoDef)
    graph_def: bytes = b""
    saver_def: Optional[SaverSettings] = None
    signature_def: dict[str, SignatureDef] = field(default_factory=dict)

    @property
    def collection_def(self) -> dict[str, int]:
        """The names of the graph's collections, each with its number of items (the items
        themselves are the graph's: import it to read them)."""
        if not self.graph_def:
            return {}
        from .dfg import _document_of_bytes

        collections = _document_of_bytes(bytes(self.graph_def)).get("collections", {})
        if not isinstance(collections, dict):
            return {}
        return {k: len(v) for k, v in collections.items() if isinstance(v, list)}

    def graph(self) -> Graph:
        """The graph, built into a new `Graph` with `dataflow.io`'s checks."""
        from .dfg import graph_from_bytes

        return graph_from_bytes(bytes(self.graph_def))

    def SerializeToString(self) -> bytes:  # noqa: N802 (protobuf's name)
        """The bytes of the meta graph (a zip archive, see the module docstring)."""
        if not isinstance(self.graph_def, (bytes, bytearray)):
            raise TypeError(
                f"MetaGraphDef.graph_def is the bytes of a dataflow graph archive, got "
                f"{type(self.graph_def).__name__}"
            )
        saver = self.saver_def
        signatures = {
            key: sig if isinstance(sig, SignatureDef) else SignatureDef(**sig)
            for key, sig in self.signature_def.items()
        }
        meta = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "meta_info_def": dataclasses.asdict(self.meta_info_def),
            "saver_def": None if saver is None else dataclasses.asdict(saver),
            "signature_def": {
                key: {
                    "inputs": {k: v._record() for k, v in sig.inputs.items()},
                    "outputs": {k: v._record() for k, v in sig.outputs.items()},
                    "method_name": sig.method_name,
                }
                for key, sig in signatures.items()
            },
        }
        buffer = _io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(_META_MEMBER, json.dumps(meta, allow_nan=False).encode("utf-8"))
            # The graph archive is compressed already.
            archive.writestr(_GRAPH_MEMBER, bytes(self.graph_def), zipfile.ZIP_STORED)
        return buffer.getvalue()

    def ParseFromString(self, data: bytes) -> int:  # noqa: N802 (protobuf's name)
        """Replaces the fields with those of ``data`` (made by `SerializeToString`); returns
        its length, as protobuf does.  Raises `dataflow.io.GraphFormatError` for anything
        else; the graph itself is checked when it is built (`graph`, `import_meta_graph`)."""
        parsed = _parse(_io.BytesIO(bytes(data)))
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(parsed, f.name))
        return len(data)

    @classmethod
    def FromString(cls, data: bytes) -> MetaGraphDef:  # noqa: N802 (protobuf's name)
        """A new `MetaGraphDef` parsed from ``data``."""
        return _parse(_io.BytesIO(bytes(data)))


def _parse(source) -> MetaGraphDef:
    """The meta graph in ``source`` (a path or a binary file); only the two members are read,
    each bounded before it is."""
    try:
        archive = zipfile.ZipFile(source)
    except _ZIP_READ_ERRORS as e:
        raise GraphFormatError(f"not a dataflow meta graph (a zip archive): {e}") from None
    with archive:
        raw = _read_member(archive, _META_MEMBER, MAX_META_JSON_BYTES)
        graph_bytes = bytes(_read_member(archive, _GRAPH_MEMBER, MAX_GRAPH_BYTES))
    meta = _expect(
        _parse_json(raw),
        {"format", "version", "meta_info_def", "saver_def", "signature_def"},
        "the document",
    )
    if meta.get("format") != FORMAT_NAME:
        _fail(f"format is {meta.get('format')!r:.80}, expected {FORMAT_NAME!r}")
    if type(meta.get("version")) is not int or meta["version"] != FORMAT_VERSION:
        _fail(f"format version {meta.get('version')!r:.40} is not supported")
    info = _expect(
        meta.get("meta_info_def", {}),
        {"meta_graph_version", "tags", "stripped_default_attrs"},
        "meta_info_def",
    )
    tags = info.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        _fail("meta_info_def tags is a list of strings")
    meta_info = MetaInfoDef(
        meta_graph_version=_typed(
            info.get("meta_graph_version", ""), (str,), "meta_info_def meta_graph_version"
        ),
        tags=tags,
        stripped_default_attrs=_typed(
            info.get("stripped_default_attrs", False), (bool,), "meta_info_def"
        ),
    )
    saver = meta.get("saver_def")
    if saver is not None:
        names = {f.name for f in dataclasses.fields(SaverSettings)}
        saver = _expect(saver, names, "saver_def")
        kinds = {
            "max_to_keep": (int,),
            "keep_checkpoint_every_n_hours": (int, float),
            "variables": (dict,),
            "version": (int,),
        }
        for key, value in saver.items():
            _typed(value, kinds.get(key, (bool,)), f"saver_def {key}")
        if saver.get("max_to_keep", 0) < 0 or saver.get("version", 2) not in (1, 2):
            _fail("saver_def max_to_keep is at least 0 and version is 1 or 2")
        hours = saver.get("keep_checkpoint_every_n_hours", 10000.0)
        if not math.isfinite(hours) or hours <= 0:
            _fail("saver_def keep_checkpoint_every_n_hours is a positive number")
        for k, v in saver.get("variables", {}).items():
            _typed(v, (str,), f"saver_def variable {k!r:.80}")
        saver = SaverSettings(**saver)
    signatures = {}
    raw_signatures = meta.get("signature_def", {})
    if not isinstance(raw_signatures, dict):
        _fail("signature_def is an object")
    for key, record in raw_signatures.items():
        where = f"signature {key!r:.80}"
        record = _expect(record, {"inputs", "outputs", "method_name"}, where)
        parts = {}
        for part in ("inputs", "outputs"):
            infos = record.get(part, {})
            if not isinstance(infos, dict):
                _fail(f"{where} {part} is an object")
            parts[part] = {
                k: TensorInfo._from_record(v, f"{where} {part} {k!r:.80}") for k, v in infos.items()
            }
        method = _typed(record.get("method_name", ""), (str,), f"{where} method_name")
        signatures[key] = SignatureDef(method_name=method, **parts)
    return MetaGraphDef(
        meta_info_def=meta_info, graph_def=graph_bytes, saver_def=saver, signature_def=signatures
    )

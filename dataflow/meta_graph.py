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
import os
import zipfile
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from . import dtypes as _dtypes
from .array_bounds import MAX_ARRAY_BYTES, MAX_RANK
from .graph import Graph, GraphKeys, get_default_graph
from .io import (
    _ZIP_READ_ERRORS,
    MAX_JSON_BYTES,
    GraphFormatError,
    _atomic_write,
    _parse_json,
    _read_member,
    document_bytes,
    graph_to_document,
    import_graph_bytes,
)
from .protos import Message
from .tensor_shape import TensorShape

__all__ = ["MetaGraphDef", "TensorInfo", "export_meta_graph", "import_meta_graph"]

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
        from .io import _document_of_bytes

        collections = _document_of_bytes(bytes(self.graph_def)).get("collections", {})
        if not isinstance(collections, dict):
            return {}
        return {k: len(v) for k, v in collections.items() if isinstance(v, list)}

    def graph(self) -> Graph:
        """The graph, built into a new `Graph` with `dataflow.io`'s checks."""
        from .io import graph_from_bytes

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


# -- export and import -----------------------------------------------------------------------------
def _saver_settings(saver) -> Optional[SaverSettings]:
    from .variables import Variable

    if saver is None:
        return None
    var_list = saver._built_var_list()
    return SaverSettings(
        max_to_keep=saver._max_to_keep or 0,
        keep_checkpoint_every_n_hours=saver._keep_every_seconds / 3600,
        sharded=saver._sharded,
        version=saver._write_version,
        pad_step_number=saver._pad_step_number,
        reshape=saver._reshape,
        allow_empty=saver._allow_empty,
        # Only variables: an object saving its own state (an iterator's) has no name to find
        # it by in the imported graph.
        variables={k: v.op.name for k, v in var_list.items() if isinstance(v, Variable)},
    )


def _graph_bytes(graph: Graph, collection_list, export_scope, clear_devices: bool) -> bytes:
    from .io import _rename_document

    # The savers collection holds Saver objects, which the saver_def stands for.
    keys = [
        k
        for k in graph.get_all_collection_keys()
        if k != GraphKeys.SAVERS and (collection_list is None or k in collection_list)
    ]
    document, arrays = graph_to_document(graph, collection_keys=keys)
    if clear_devices:
        for record in document["ops"]:
            record.pop("device", None)
    if export_scope:
        _strip_scope(document, export_scope.rstrip("/") + "/", _rename_document)
    return document_bytes(document, arrays)


def _strip_scope(document: dict, prefix: str, rename_document) -> None:
    """Keeps only the ops under the scope ``prefix`` and takes the scope off every name, as
    ``export_scope`` does; an op of the scope reading one outside it is a ``ValueError``
    (TensorFlow's too), and records and collection items outside the scope are left out."""
    ops = [r for r in document["ops"] if r["name"].startswith(prefix)]
    kept = {r["name"] for r in ops}
    for record in ops:
        for ref in record["inputs"]:
            if ref[0] not in kept:
                raise ValueError(
                    f"export_scope {prefix[:-1]!r}: op '{record['name']}' reads "
                    f"'{ref[0]}:{ref[1]}', which is outside the scope"
                )
        record["control_inputs"] = [c for c in record["control_inputs"] if c in kept]
    document["ops"] = ops

    def op_of(name: str) -> str:
        return name.rsplit(":", 1)[0] if ":" in name else name

    inside = lambda name: isinstance(name, str) and op_of(name) in kept  # noqa: E731
    variables = document.get("variables", [])
    kept_variables = [i for i, v in enumerate(variables) if inside(v["handle"])]
    renumber = {old: new for new, old in enumerate(kept_variables)}
    document["variables"] = [variables[i] for i in kept_variables]
    contexts = document.get("contexts", [])
    if any(inside(c.get("pred") or c.get("pivot")) for c in contexts) or any(
        r.get("context") is not None for r in ops
    ):
        raise ValueError(
            f"export_scope {prefix[:-1]!r}: the scope holds conds or loops, which a scoped "
            "export does not carry; export the whole graph"
        )
    document["contexts"] = []
    collections = {}
    for key, items in document.get("collections", {}).items():
        out = []
        for item in items:
            ((kind, value),) = item.items()
            if kind == "variable":
                if value in renumber:
                    out.append({"variable": renumber[value]})
            elif kind in ("tensor", "operation"):
                if inside(value):
                    out.append(item)
            elif kind == "value":
                out.append(item)
            elif kind == "queue_runner" and inside(value.get("queue")):
                out.append(item)
        if out:
            collections[key] = out
    document["collections"] = collections
    rename_document(document, lambda name: name[len(prefix) :] if name.startswith(prefix) else name)


def export_meta_graph(
    filename=None,
    meta_info_def=None,
    graph_def=None,
    saver_def=None,
    collection_list=None,
    as_text=False,
    graph=None,
    export_scope=None,
    clear_devices=False,
    clear_extraneous_savers=False,
    strip_default_attrs=False,
    save_debug_info=False,
    **kwargs,
) -> MetaGraphDef:
    """Returns the `MetaGraphDef` of ``graph`` (the default graph when None) and writes it to
    ``filename`` when given (``tf.compat.v1.train.export_meta_graph``), in dataflow's format,
    not TensorFlow's (see the module docstring).

    ``meta_info_def``: a `MetaInfoDef` (or a dict of its fields); ``graph_def``: the bytes of a
    dataflow graph archive to write instead of ``graph``'s; ``saver_def``: a `SaverSettings`
    or a `Saver` (whose settings and variables are recorded); ``collection_list``: the names of
    the collections to keep (all when None); ``export_scope``: only the ops under this name
    scope, with the scope taken off their names; ``clear_devices``: the ops' devices are left
    out.  ``save_debug_info``: the graph format records every op's source location (file, line,
    function) always, which is the debug information TensorFlow writes on request.

    ``as_text`` (a text protobuf) and ``strip_default_attrs`` (dataflow's graph format writes
    every attribute) cannot be honoured and are refused; ``clear_extraneous_savers`` has
    nothing to act on (a Saver here adds no ops to the graph).
    """
    del clear_extraneous_savers, save_debug_info
    if kwargs:
        raise TypeError(f"export_meta_graph got unexpected keyword arguments {sorted(kwargs)}")
    if as_text:
        raise ValueError(
            "export_meta_graph: as_text=True asks for a text protobuf; a meta graph here is "
            "dataflow's graph archive, which has no text form"
        )
    if strip_default_attrs:
        raise ValueError(
            "export_meta_graph: strip_default_attrs=True cannot be honoured: dataflow's graph "
            "format writes every attribute of every op"
        )
    if graph_def is not None:
        if not isinstance(graph_def, (bytes, bytearray)):
            raise TypeError(
                "export_meta_graph: graph_def is the bytes of a dataflow graph archive "
                f"(df.io.graph_to_bytes), not a {type(graph_def).__name__}"
            )
        if export_scope or clear_devices or collection_list is not None:
            raise ValueError(
                "export_meta_graph: export_scope, clear_devices and collection_list apply to "
                "a graph, not to given graph_def bytes"
            )
        data = bytes(graph_def)
    else:
        graph = graph if graph is not None else get_default_graph()
        data = _graph_bytes(graph, collection_list, export_scope, clear_devices)
    if isinstance(meta_info_def, dict):
        meta_info_def = MetaInfoDef(**meta_info_def)
    if saver_def is not None and not isinstance(saver_def, SaverSettings):
        from .saver import Saver

        if not isinstance(saver_def, Saver):
            raise TypeError(
                "export_meta_graph: saver_def is a Saver or a MetaGraphDef's SaverSettings, "
                f"not a {type(saver_def).__name__}"
            )
        saver_def = _saver_settings(saver_def)
    if saver_def is not None and export_scope:
        prefix = export_scope.rstrip("/") + "/"
        saver_def = dataclasses.replace(
            saver_def,
            variables={
                k: v[len(prefix) :] for k, v in saver_def.variables.items() if v.startswith(prefix)
            },
        )
    meta = MetaGraphDef(
        meta_info_def=meta_info_def or MetaInfoDef(), graph_def=data, saver_def=saver_def
    )
    if filename is not None:
        text = meta.SerializeToString()
        _atomic_write(os.fspath(filename), lambda f: f.write(text))
    return meta


def import_meta_graph(
    meta_graph_or_file: Union[MetaGraphDef, str, os.PathLike],
    clear_devices: bool = False,
    import_scope: Optional[str] = None,
    **kwargs,
):
    """Adds the graph of a meta graph (a `MetaGraphDef` or the path of a ``.meta`` file that
    `export_meta_graph` or ``Saver.save`` wrote) to the default graph, and returns a `Saver`
    over its variables, or None when it has none (``tf.compat.v1.train.import_meta_graph``).

    Ops, variables, collections (``train_op``, losses, ...) and the records of conds and loops
    come back as they were; ``saver.restore(sess, path)`` then loads the checkpoint's values.
    ``import_scope``: a name scope put before every imported name (so that one graph can be
    imported twice); the returned Saver still reads the checkpoint's own names.
    ``clear_devices``: the ops' devices are dropped.  ``restore_collections_predicate``
    (keyword): a function of a collection name; collections it refuses are not imported.

    The file is dataflow's format, not TensorFlow's (module docstring).  It is untrusted input:
    nothing in it is ever executed, its sizes are bounded, and a damaged or hostile file raises
    `dataflow.io.GraphFormatError` leaving the graph unchanged.  A name the default graph
    already holds is refused (import under an ``import_scope``).
    """
    keep_collection = kwargs.pop("restore_collections_predicate", None)
    if kwargs:
        raise TypeError(f"import_meta_graph got unexpected keyword arguments {sorted(kwargs)}")
    path = None
    if isinstance(meta_graph_or_file, MetaGraphDef):
        meta = meta_graph_or_file
    else:
        path = os.fspath(meta_graph_or_file)
    graph = get_default_graph()
    try:
        if path is not None:
            if not os.path.exists(path):
                raise FileNotFoundError(f"import_meta_graph: no file {path}")
            meta = _parse(path)
        import_graph_bytes(
            bytes(meta.graph_def),
            graph,
            import_scope=import_scope,
            clear_devices=clear_devices,
            keep_collection=keep_collection,
        )
    except GraphFormatError as e:
        if path is None:
            raise
        raise GraphFormatError(f"{path}: {e}") from None
    return _saver_of(meta.saver_def, graph, import_scope)


def _saver_of(settings: Optional[SaverSettings], graph: Graph, import_scope: Optional[str]):
    from .saver import Saver
    from .variables import Variable

    prefix = import_scope.rstrip("/") + "/" if import_scope else ""
    variables = {
        v.op.name: v
        for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
        if isinstance(v, Variable)
    }
    if settings is None:  # TensorFlow: a Saver over the global variables, if any
        imported = {
            name[len(prefix) :]: v for name, v in variables.items() if name.startswith(prefix)
        }
        return Saver(imported) if imported else None
    var_list = {}
    for key, op_name in settings.variables.items():
        variable = variables.get(prefix + op_name)
        if variable is None:
            raise GraphFormatError(
                f"the meta graph's saver saves variable '{op_name}', which its graph does not hold"
            )
        var_list[key] = variable
    if not var_list and not settings.allow_empty:
        return None
    return Saver(
        var_list,
        reshape=settings.reshape,
        sharded=settings.sharded,
        max_to_keep=settings.max_to_keep,
        keep_checkpoint_every_n_hours=settings.keep_checkpoint_every_n_hours,
        allow_empty=settings.allow_empty,
        write_version=settings.version,
        pad_step_number=settings.pad_step_number,
    )

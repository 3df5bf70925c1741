"""Checkpoints: saving variables' values from a Session and restoring them (``df.train.Saver``).

A checkpoint ``save_path`` (a prefix, as in TensorFlow: ``ckpt/model-100``) is one file,
``<save_path>.npz``: a zip archive with one NPY array per variable, named by the variable's op
name (``dense/kernel.npy``), readable with ``np.load(path, allow_pickle=False)``.  Next to it the
index file ``checkpoint`` (JSON) lists the checkpoints a Saver keeps, newest last::

    {"model_checkpoint_path": "model-100",
     "all_model_checkpoint_paths": ["model-80", "model-90", "model-100"]}

Paths in the index are relative to its directory.  Every file is written to a temporary file in
the same directory, flushed to disk and renamed over its name (``os.replace``), so a crash during
a save leaves the previous checkpoint and index intact, never a half-written one; the
temporary file such a crash leaves is deleted by a later save into the directory, once it is
stale (`dataflow.io._remove_stale_temporaries` says when).  Checkpoints beyond
``max_to_keep`` are deleted only once the new index is written, so the index never names a
deleted checkpoint, and only in the directory of the save that drops them: a path that an
index names elsewhere (absolute, or through ``..``) is dropped from the list, never deleted.
Files get the permissions of any new file (``0o666`` less the umask).

A checkpoint is read as an untrusted file: each array's NPY header is checked against its variable
(dtype, shape, and `dataflow.framework.array_bounds.array_bytes`'s bound where the shape is not
fully known) before any array is allocated or inflated, and the arrays are read as `dataflow.io`
reads a graph file's.
"""

from __future__ import annotations

import dataclasses
import io as _io
import json
import math
import os
import time
import warnings
import zipfile
from typing import NamedTuple, Optional, Union

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.array_bounds import array_bytes
from ..framework.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..framework.graph import Graph, get_default_graph
from ..framework.graph_keys import GraphKeys
from .dfg import (
    GraphFormatError,
    GraphNotSerializableError,
    _atomic_write,
    _open_member,
    _read_npy_data,
    _read_npy_header,
    document_bytes,
    graph_to_document,
    import_graph_bytes,
)
from .meta_graph import MetaGraphDef, MetaInfoDef, SaverSettings, _parse

__all__ = [
    "CheckpointState",
    "Saver",
    "checkpoint_exists",
    "export_meta_graph",
    "get_checkpoint_state",
    "import_meta_graph",
    "latest_checkpoint",
]

_INDEX = "checkpoint"
_now = time.time  # the clock of keep_checkpoint_every_n_hours
_SUFFIX = ".npz"


def _checkpoint_file(save_path: str) -> str:
    return save_path if save_path.endswith(_SUFFIX) else save_path + _SUFFIX


def _in_directory(path: str, directory: str) -> bool:
    """Whether the file ``path`` lies in ``directory`` itself, both resolved (``..``, symbolic
    links to directories): the only files checkpoint housekeeping deletes."""
    parent = os.path.dirname(os.path.abspath(path))
    return os.path.realpath(parent) == os.path.realpath(directory)


def _read_index(directory: str, latest_filename: str = _INDEX) -> Optional[dict]:
    try:
        with open(os.path.join(directory, latest_filename), encoding="utf-8") as f:
            index = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(index, dict) or not isinstance(index.get("model_checkpoint_path"), str):
        return None
    return index


def latest_checkpoint(checkpoint_dir: str, latest_filename: Optional[str] = None) -> Optional[str]:
    """The path of the newest checkpoint recorded in ``checkpoint_dir``, or None if none exists."""
    directory = os.fspath(checkpoint_dir)
    index = _read_index(directory, latest_filename or _INDEX)
    if index is None:
        return None
    path = os.path.join(directory, index["model_checkpoint_path"])
    return path if os.path.exists(_checkpoint_file(path)) else None


class CheckpointState(NamedTuple):
    """What the index file of a checkpoint directory records (TensorFlow's proto of that name):
    the newest checkpoint's path and every kept checkpoint's, oldest first, with the directory
    joined in front."""

    model_checkpoint_path: str
    all_model_checkpoint_paths: list
    # When each was written (seconds since the epoch), where the writer recorded it (as
    # ``update_checkpoint_state`` and ``CheckpointManager`` do), and when the last checkpoint
    # kept for good was written.
    all_model_checkpoint_timestamps: list = []  # noqa: RUF012 (never mutated: a new list is made)
    last_preserved_timestamp: float = 0.0


def get_checkpoint_state(
    checkpoint_dir: str, latest_filename: Optional[str] = None
) -> Optional[CheckpointState]:
    """The `CheckpointState` of ``checkpoint_dir``, or None when it has no index file."""
    directory = os.fspath(checkpoint_dir)
    index = _read_index(directory, latest_filename or _INDEX)
    if index is None:
        return None
    paths = index.get("all_model_checkpoint_paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        paths = [index["model_checkpoint_path"]]
    timestamps = index.get("all_model_checkpoint_timestamps")
    if not isinstance(timestamps, list) or not all(isinstance(t, (int, float)) for t in timestamps):
        timestamps = []
    preserved = index.get("last_preserved_timestamp", 0.0)
    return CheckpointState(
        os.path.join(directory, index["model_checkpoint_path"]),
        [os.path.join(directory, p) for p in paths],
        [float(t) for t in timestamps],
        float(preserved) if isinstance(preserved, (int, float)) else 0.0,
    )


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    """Whether a checkpoint was saved under ``checkpoint_prefix``."""
    return os.path.exists(_checkpoint_file(os.fspath(checkpoint_prefix)))


def _is_saveable(item) -> bool:
    """Whether ``item`` of a var_list is an object that saves its own state (what
    ``df.data.experimental.make_saveable_from_iterator`` gives) rather than a variable."""
    return getattr(item, "_is_saveable", False)


class Saver:
    """Saves and restores variables (``tf.compat.v1.train.Saver``).

    ``var_list``: a list of variables, or a dict from checkpoint names to variables; by default
    the graph's global variables (when the Saver is built: at once, or at `build` with
    ``defer_build``).  ``max_to_keep``: how many recent checkpoints to keep (older ones are
    deleted); ``None`` or 0 keeps all of them; of those, one every
    ``keep_checkpoint_every_n_hours`` is kept for good.  ``reshape``: a restore may load a
    value of another shape with as many elements.  ``allow_empty``: with no variable, the
    Saver saves and restores nothing instead of refusing.  ``pad_step_number``: the step in
    the file name has 8 digits (``model-00000100``).

    Checkpoints here are one ``.npz`` file whatever the devices (``sharded`` changes nothing),
    their index names paths relative to its directory (as ``save_relative_paths=True``), and
    a Saver builds no ops, so ``name``, ``restore_sequentially``, ``filename`` and
    ``write_version`` (1 or 2) have nothing to act on.  ``saver_def`` and ``builder``
    (TensorFlow's objects for its own save ops) must be None.
    """

    def __init__(
        self,
        var_list=None,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: Optional[int] = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: Optional[str] = None,
        restore_sequentially: bool = False,
        saver_def=None,
        builder=None,
        defer_build: bool = False,
        allow_empty: bool = False,
        write_version: int = 2,
        pad_step_number: bool = False,
        save_relative_paths: bool = False,
        filename: Optional[str] = None,
        graph=None,
    ):
        for given, what in ((saver_def, "saver_def"), (builder, "builder")):
            if given is not None:
                raise ValueError(
                    f"Saver's {what} describes TensorFlow's save ops; a Saver here builds none "
                    f"(pass {what}=None)"
                )
        if write_version not in (1, 2):
            raise ValueError(f"write_version must be 1 or 2, got {write_version!r}")
        self._reshape = reshape
        self._sharded = bool(sharded)
        self._meta_graph_refused = False
        self._write_version = write_version
        self._max_to_keep = max_to_keep
        self._keep_every_seconds = keep_checkpoint_every_n_hours * 3600
        self._next_kept_for_good = _now() + self._keep_every_seconds
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._last_checkpoints: list[str] = []
        self._saved_at: dict[str, float] = {}
        self._var_list_arg, self._graph = var_list, graph
        self._var_list: Optional[dict] = None
        if not defer_build:
            self.build()

    def build(self) -> None:
        """Resolves the variables the Saver saves (the graph's global variables when no
        ``var_list`` was given): at construction, or here with ``defer_build``."""
        var_list = self._var_list_arg
        if var_list is None:
            graph = self._graph or get_default_graph()
            var_list = graph.get_collection(GraphKeys.GLOBAL_VARIABLES) + graph.get_collection(
                GraphKeys.SAVEABLE_OBJECTS
            )
        if isinstance(var_list, dict):
            named = dict(var_list)
        else:
            named = {}
            for variable in var_list:
                name = variable.name if _is_saveable(variable) else variable.op.name
                if name in named and named[name] is not variable:
                    raise ValueError(f"Two variables in var_list are named '{name}'")
                named[name] = variable
        if not named and not self._allow_empty:
            raise ValueError("No variables to save")
        self._var_list = named

    def _built_var_list(self) -> dict:
        if self._var_list is None:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        return self._var_list

    @property
    def last_checkpoints(self) -> list[str]:
        """The checkpoints this Saver has written and not deleted, oldest first."""
        return list(self._last_checkpoints)

    def recover_last_checkpoints(self, checkpoint_paths: list) -> None:
        """Takes over ``checkpoint_paths`` (oldest first, as `CheckpointState` lists them) as
        this Saver's own, so that a Saver in a restarted program keeps deleting the oldest
        beyond ``max_to_keep``.  Paths with no checkpoint file are left out."""
        self._last_checkpoints = [p for p in checkpoint_paths if checkpoint_exists(p)]

    def save(
        self,
        sess,
        save_path: Union[str, os.PathLike],
        global_step=None,
        latest_filename: Optional[str] = None,
        meta_graph_suffix: str = "meta",
        write_meta_graph: bool = True,
        write_state: bool = True,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> str:
        """Writes the variables' values in ``sess`` to ``save_path[-global_step].npz``.

        Returns the checkpoint path (without ``.npz``), which `restore` and `latest_checkpoint`
        accept; None, writing nothing, for a Saver of no variables (``allow_empty``).

        ``write_meta_graph``: the session's graph and this Saver's settings are written beside
        it as ``<checkpoint path>.<meta_graph_suffix>``, which ``df.train.import_meta_graph``
        reads back (dataflow's format, not TensorFlow's: `dataflow.io.meta_graph`); an older
        checkpoint that ``max_to_keep`` deletes loses its meta graph too.  ``write_state``: the
        ``checkpoint`` index file (``latest_filename``) is updated.  ``strip_default_attrs``
        and ``save_debug_info`` are `export_meta_graph`'s.
        """
        var_list = self._built_var_list()
        if strip_default_attrs and write_meta_graph:
            raise ValueError(
                "Saver.save: strip_default_attrs=True cannot be honoured: dataflow's graph "
                "format writes every attribute of every op"
            )
        if not var_list:
            return None
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = sess.run(global_step)
            step = int(global_step)
            save_path = (
                f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
            )
        directory = os.path.dirname(os.path.abspath(save_path))
        if not os.path.isdir(directory):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        values = {}
        if getattr(sess, "_master", None) is not None:  # a cluster's: the values are on tasks
            remote = {k: v for k, v in var_list.items() if not _is_saveable(v)}
            values = {k: np.asarray(v) for k, v in sess.run(remote).items()}
        for name, variable in var_list.items():
            if name in values:
                continue
            if _is_saveable(variable):  # an object saving its own state (an iterator's)
                values[name] = np.asarray(variable._save_value(sess))
                continue
            try:
                value = sess._variable_values[variable.op.name]
            except KeyError:
                raise FailedPreconditionError(
                    None, variable.op, f"Attempting to save uninitialized variable {name}"
                ) from None
            values[name] = np.asarray(value)

        def write(f) -> None:
            with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as archive:
                for name, value in values.items():
                    buffer = _io.BytesIO()
                    np.lib.format.write_array(buffer, value, allow_pickle=False)
                    archive.writestr(name + ".npy", buffer.getvalue())

        _atomic_write(_checkpoint_file(save_path), write)
        if write_meta_graph:
            graph = getattr(sess, "graph", None) or self._graph or get_default_graph()
            try:
                with graph.as_default():
                    self.export_meta_graph(
                        f"{save_path}.{meta_graph_suffix}", save_debug_info=save_debug_info
                    )
            except GraphNotSerializableError as e:
                if not self._meta_graph_refused:  # once per Saver, not at every step
                    self._meta_graph_refused = True
                    warnings.warn(
                        f"Saver.save: the checkpoint {save_path} is written, but not its meta "
                        f"graph (nor will later ones be): {e}",
                        stacklevel=2,
                    )
        kept = [p for p in self._last_checkpoints if p != save_path] + [save_path]
        self._saved_at[save_path] = _now()
        dropped = []
        if self._max_to_keep and len(kept) > self._max_to_keep:
            dropped, kept = kept[: -self._max_to_keep], kept[-self._max_to_keep :]
            dropped = [p for p in dropped if not self._kept_for_good(p)]
        # The index first: until it names the new checkpoint, it names the old ones, which
        # must then still exist.
        if write_state:
            self._write_index(directory, save_path, latest_filename or _INDEX, kept)
        self._last_checkpoints = kept
        for old in dropped:
            if not _in_directory(_checkpoint_file(old), directory):
                continue  # an index (recover_last_checkpoints) may name any path
            for file in (_checkpoint_file(old), f"{old}.{meta_graph_suffix}"):
                try:
                    os.remove(file)
                except FileNotFoundError:
                    pass
        return save_path

    def export_meta_graph(
        self,
        filename=None,
        collection_list=None,
        as_text=False,
        export_scope=None,
        clear_devices=False,
        clear_extraneous_savers=False,
        strip_default_attrs=False,
        save_debug_info=False,
    ):
        """The meta graph of the default graph (or ``graph``) with this Saver's settings and
        variables, written to ``filename`` when given: ``df.train.export_meta_graph`` with
        ``saver_def`` this Saver (dataflow's format, not TensorFlow's)."""
        return export_meta_graph(
            filename=filename,
            saver_def=self,
            collection_list=collection_list,
            as_text=as_text,
            graph=self._graph,
            export_scope=export_scope,
            clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs,
            save_debug_info=save_debug_info,
        )

    def _kept_for_good(self, path: str) -> bool:
        """Whether ``path``, leaving the recent checkpoints, stays on disk: the first saved
        after each ``keep_checkpoint_every_n_hours`` does, as in TensorFlow."""
        saved_at = self._saved_at.pop(path, None)
        if saved_at is None or saved_at <= self._next_kept_for_good:
            return False
        self._next_kept_for_good += self._keep_every_seconds
        return True

    def _write_index(self, directory: str, save_path: str, filename: str, kept: list) -> None:
        def relative(path: str) -> str:
            path = os.path.abspath(path)
            if os.path.dirname(path) == directory:
                return os.path.basename(path)
            return path

        index = {
            "model_checkpoint_path": relative(save_path),
            "all_model_checkpoint_paths": [relative(p) for p in kept],
        }
        text = json.dumps(index, indent=1).encode("utf-8")
        _atomic_write(os.path.join(directory, filename), lambda f: f.write(text))

    def _read(self, var_list: dict, path: str, save_path) -> dict:
        """The checkpoint's value of each variable, every one checked by its NPY header (present,
        same dtype, compatible shape; bounded as `dataflow.framework.array_bounds.array_bytes`
        bounds a graph file's arrays where the variable's shape is not fully known) before any array
        is allocated or inflated: a small file can declare gigabytes of zeros.  With ``reshape``, a
        value of as many elements as the variable's (fully known) shape takes that shape."""
        with zipfile.ZipFile(path) as archive:
            headers = {}
            unknown_bytes = 0
            for name, variable in var_list.items():
                member = name + ".npy"
                where = f"variable {name}"
                try:
                    info = archive.getinfo(member)
                except KeyError:
                    raise NotFoundError(
                        None, variable.op, f"Key {name} not found in checkpoint {save_path}"
                    ) from None
                with _open_member(archive, info, where) as stream:
                    shape, fortran, dtype = _read_npy_header(stream, member, where)
                expected = _dtypes.numpy_dtype(variable.dtype)
                if dtype.hasobject:  # its bytes would be pointers: only pickle writes such
                    raise InvalidArgumentError(
                        None,
                        variable.op,
                        f"Variable {name}: the checkpoint holds an array of Python objects, "
                        "which only pickle could read",
                    )
                if dtype != expected:
                    raise InvalidArgumentError(
                        None,
                        variable.op,
                        f"Variable {name} is {variable.dtype.name} but the checkpoint holds "
                        f"{dtype}",
                    )
                if (
                    self._reshape
                    and not variable.shape.is_compatible_with(shape)
                    and variable.shape.num_elements() == math.prod(shape)
                ):
                    reshaped_to = variable.shape.as_list()
                elif variable.shape.is_compatible_with(shape):
                    reshaped_to = None
                else:
                    raise InvalidArgumentError(
                        None,
                        variable.op,
                        f"Variable {name} has shape {variable.shape} but the checkpoint holds "
                        f"shape {list(shape)}",
                    )
                if not variable.shape.is_fully_defined():
                    try:
                        unknown_bytes += array_bytes(shape, dtype, unknown_bytes)
                    except ValueError as e:
                        raise InvalidArgumentError(
                            None, variable.op, f"Variable {name}: the checkpoint's {e}"
                        ) from None
                headers[name] = info, list(shape), fortran, dtype, where, reshaped_to
            values = {}
            for name, (info, shape, fortran, dtype, where, reshaped_to) in headers.items():
                with _open_member(archive, info, where) as stream:
                    _read_npy_header(stream, info.filename, where)
                    value = _read_npy_data(stream, info, shape, dtype, fortran, where)
                values[name] = value if reshaped_to is None else value.reshape(reshaped_to)
        return values

    def restore(self, sess, save_path: Union[str, os.PathLike]) -> None:
        """Loads the variables' values from a checkpoint into ``sess``.

        Every variable is checked (present, same dtype, compatible shape) before any is loaded,
        so a failed restore changes nothing.  Raises ``NotFoundError`` for a missing checkpoint
        or variable, ``InvalidArgumentError`` for a dtype or shape mismatch.
        """
        var_list = self._built_var_list()
        if not var_list:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        path = _checkpoint_file(os.fspath(save_path))
        if not os.path.exists(path):
            raise NotFoundError(None, None, f"Checkpoint {save_path} not found ({path})")
        try:
            values = self._read(var_list, path, save_path)
        except (GraphFormatError, zipfile.BadZipFile, OSError, EOFError) as e:
            raise ValueError(f"Checkpoint {path} is not readable: {e}") from None
        for name, variable in var_list.items():
            if _is_saveable(variable):
                variable._restore_value(sess, values[name])
            else:
                sess._load_variable(variable, values[name])


# -- meta graphs: a graph with its Saver's settings (`dataflow.io.meta_graph` is the format) -------
def _saver_settings(saver) -> Optional[SaverSettings]:
    from ..ops.variables import Variable

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
    from .dfg import _rename_document

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
    from ..ops.variables import Variable

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

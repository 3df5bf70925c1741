"""Writing a graph as a ``.dfg`` file (the format is described in `dfg`): the document of its
ops, contexts, collections and variables, and the archive that holds it and its arrays,
written whole or not at all."""

from __future__ import annotations

import io as _io
import json
import os
import re
import secrets
import time
import warnings
import zipfile
from collections.abc import Callable
from typing import Any, Optional, Union

import numpy as np

from ..framework.graph import (
    _VALID_OP_NAME,
    DATA_TEXT_ATTRS,
    Graph,
    Operation,
    Tensor,
    control_character,
)
from ..framework.graph_keys import GraphKeys
from ..framework.graph_walk import gc_paused, topological_order
from .dfg_format import (
    _ARRAY_PREFIX,
    _GRAPH_MEMBER,
    _PLAN_ATTRS,
    FORMAT_NAME,
    FORMAT_VERSION,
    GraphNotSerializableError,
    _ArrayWriter,
    _collection_item_kind,
    _encode_shape,
    _encode_value,
    _is_stream,
    _misplaced_in_standard_collection,
    _standard_collection_items,
)


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


def _in_graph(graph: Graph, item) -> bool:
    """Whether the op of ``item`` (an Operation or a Tensor) is still one of ``graph``'s."""
    op = item if isinstance(item, Operation) else item.op
    try:
        return graph.get_operation_by_name(op.name) is op
    except (KeyError, ValueError):
        return False


def _refuse_control_characters(where: str, fields: dict) -> None:
    """A graph file holds printable text (the loader refuses a control character in a name,
    location, device or attribute): a graph that holds one cannot be written as a file that
    loads, so it is refused here, naming the op or context and the field."""
    for field, value in fields.items():
        character = control_character(value)
        if character is not None:
            raise GraphNotSerializableError(
                f"{where}: its {field} holds the control character {character!r} "
                f"(U+{ord(character):04X}); a graph file holds printable text"
            )


def _encode_context(context, context_ids: dict) -> dict:
    from primitives.contexts import CondContext, WhileContext

    outer = None if context.outer_context is None else context_ids[id(context.outer_context)]
    _refuse_control_characters(
        f"the context {context.name!r}",
        {"name": context.name, "frame name": getattr(context, "frame_name", "")},
    )
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
        if not _VALID_OP_NAME.match(op.name) or op.name.endswith("/"):
            raise GraphNotSerializableError(
                f"{op.type} op {op.name!r}: not a valid op name, which a graph file must hold"
            )
        _refuse_control_characters(
            f"{op.type} op {op.name!r}",
            {
                "name": op.name,
                "device": op.device,
                "location": [record["location"]["file"], record["location"]["function"]],
                **{
                    f"attribute '{key}'": value
                    for key, value in op.attrs.items()
                    if key not in DATA_TEXT_ATTRS and isinstance(value, (str, list, tuple, dict))
                },
            },
        )
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
            elif isinstance(item, (Tensor, Operation)) and not _in_graph(graph, item):
                continue  # an op taken out of the graph since (a lazy graph compacts itself)
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


__all__ = ["save_graph"]

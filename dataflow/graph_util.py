"""Graph transformations for deployment: freezing variables into constants."""

from __future__ import annotations

from collections.abc import Sequence

from .graph import Graph
from .io import _encode_value, document_to_graph, graph_to_document

__all__ = ["convert_variables_to_constants", "extract_sub_graph"]

_VARIABLE_WRITES = ("Assign", "AssignAdd", "AssignSub")


def _op_name(name: str) -> str:
    name = name[1:] if name.startswith("^") else name
    return name.split(":")[0]


def _needed_ops(graph: Graph, output_names: Sequence[str]) -> set[str]:
    """The names of the ops ``output_names`` depend on, through data and control inputs.

    As in a Session run, a loop is kept whole: once one op of a loop is needed, all are.  The
    predicate and pivot of each cond branch a needed op lies in are kept too, so that the
    branch's record (what pictures draw a cond's clusters from) survives with its ops.
    """
    by_loop: dict[int, list] = {}
    for op in graph.get_operations():
        context = op._control_flow_context
        while context is not None:
            if hasattr(context, "frame_name"):
                by_loop.setdefault(id(context), []).append(op)
            context = context.outer_context
    needed: set[str] = set()
    stack = [graph.get_operation_by_name(_op_name(n)) for n in output_names]
    while stack:
        op = stack.pop()
        if op.name in needed:
            continue
        needed.add(op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
        context = op._control_flow_context
        while context is not None:
            stack.extend(by_loop.get(id(context), ()))
            if hasattr(context, "branch"):
                stack.extend(t.op for t in (context.pred, context.pivot) if t is not None)
            context = context.outer_context
    return needed


def extract_sub_graph(graph: Graph, output_names: Sequence[str]) -> Graph:
    """A new graph with only the ops that ``output_names`` (op or tensor names) need, and the
    records of the conds and loops those ops lie in.  Ops nothing needs are never looked at:
    a ``py_func`` elsewhere in the graph does not stop it."""
    return _rebuild(graph, output_names, {})


def convert_variables_to_constants(sess, graph: Graph, output_names: Sequence[str]) -> Graph:
    """A new graph computing ``output_names`` with every variable replaced by its value in ``sess``.

    Each variable handle becomes a ``Const`` of the variable's current value (same name) and each
    read of it an ``Identity``, so the value flows through the same Switches and Enters as the
    handle did.  Only the ops the outputs need are kept.  A needed op that writes a variable
    (``Assign`` ...) cannot be frozen and raises ``ValueError``.
    """
    values = {}
    for name in _needed_ops(graph, output_names):
        op = graph.get_operation_by_name(name)
        if op.type in _VARIABLE_WRITES:
            raise ValueError(
                f"Cannot freeze: output(s) {list(output_names)} depend on {op.type} op "
                f"'{op.name}' (created at {op.location}), which writes a variable."
            )
        if op.type == "VarHandleOp":
            key = op.attrs["shared_name"]
            if key not in sess._variable_values:
                raise ValueError(f"Cannot freeze: variable '{op.name}' is not initialized.")
            values[op.name] = sess._variable_values[key]
    return _rebuild(graph, output_names, values)


def _rebuild(graph: Graph, output_names: Sequence[str], variable_values: dict) -> Graph:
    import numpy as np

    from . import dtypes as _dtypes
    from .io import _ArrayWriter

    needed = _needed_ops(graph, output_names)
    # Only the needed ops are written: the others may hold what a file cannot (a py_func).
    document, arrays = graph_to_document(graph, only=needed)
    writer = _ArrayWriter()
    writer.arrays = dict(arrays)
    kept = []
    frozen = False
    for record in document["ops"]:
        if record["name"] not in needed:
            continue
        name = record["name"]
        if name in variable_values:
            dtype = graph.get_operation_by_name(name).attrs["dtype"]
            value = np.asarray(variable_values[name], dtype=_dtypes.numpy_dtype(dtype))
            record["type"] = "Const"
            record["attrs"] = {
                "dtype": _encode_value(dtype, writer, name),
                "value": _encode_value(value, writer, name),
            }
            record["outputs"] = [{"dtype": dtype.name, "shape": list(value.shape)}]
            frozen = True
        elif variable_values and record["type"] == "ReadVariableOp" and record["inputs"]:
            # Freezing: every needed handle became a Const, so its reads pass the value on.
            record["type"] = "Identity"
            record["attrs"] = {}
        record["control_inputs"] = [c for c in record["control_inputs"] if c in needed]
        kept.append(record)
    if frozen:
        # Outputs that carried a handle (Enter, Switch, Identity of it) now carry the value.
        for record in kept:
            if any(o["dtype"] == "resource" for o in record.get("outputs", [])):
                del record["outputs"]
    document["ops"] = kept
    _prune_records(document, needed, graph, variable_values)
    # The user's own graph, rebuilt in memory: its prints may keep writing to their files.
    return document_to_graph(
        document, _MemoryArrays(writer.arrays), check_outputs=False, allow_file_output=True
    )


def _prune_records(document: dict, needed: set[str], graph: Graph, frozen) -> None:
    """Drops the contexts and collection items that refer to ops no longer in the graph."""
    keep = []
    for record in document["contexts"]:
        names = [
            _op_name(record[field])
            for field in ("pred", "pivot", "pivot_for_pred", "loop_cond", "maximum_iterations")
            if isinstance(record.get(field), str)
        ]
        for field in ("loop_enters", "merges", "switches", "exits", "next_iterations"):
            names.extend(record.get(field, ()))
        keep.append(all(n in needed for n in names))
    new_index: dict[int, int] = {}
    contexts_out = []
    for i, record in enumerate(document["contexts"]):
        outer = record["outer"]
        while outer is not None and not keep[outer]:
            outer = document["contexts"][outer]["outer"]
        if keep[i]:
            new_index[i] = len(contexts_out)
            record["outer"] = None if outer is None else new_index[outer]
            contexts_out.append(record)
        else:
            new_index[i] = None if outer is None else new_index[outer]
    for record in document["ops"]:
        if record["context"] is not None:
            record["context"] = new_index[record["context"]]
    document["contexts"] = contexts_out
    variables_out, variable_index = [], {}
    for i, v in enumerate(document["variables"]):
        names = (v["handle"], v["initializer"], v["snapshot"], v["initial_value"])
        if v["handle"] not in frozen and all(_op_name(n) in needed for n in names):
            variable_index[i] = len(variables_out)
            variables_out.append(v)
    collections = {}
    for key, items in document["collections"].items():
        out = []
        for item in items:
            ((kind, value),) = item.items()
            if kind == "context":
                if keep[value]:
                    out.append({"context": new_index[value]})
            elif kind == "variable":
                if value in variable_index:
                    out.append({"variable": variable_index[value]})
            elif kind in ("tensor", "operation"):
                if _op_name(value) in needed:
                    out.append(item)
            else:
                out.append(item)
        collections[key] = out
    document["collections"] = collections
    document["variables"] = variables_out


class _MemoryArrays:
    """The array source of `document_to_graph` for arrays held in memory."""

    def __init__(self, arrays: dict):
        self.arrays = arrays

    def read(self, spec, where: str):
        array = self.arrays[spec["key"]]
        return array[()] if spec["scalar"] else array

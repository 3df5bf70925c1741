"""Graph transformations for deployment: freezing variables into constants."""

from __future__ import annotations

from collections.abc import Sequence

from ..framework.graph import Graph
from .dfg import _encode_value, document_to_graph, graph_to_document

__all__ = [
    "convert_variables_to_constants",
    "extract_sub_graph",
    "import_graph_def",
    "must_run_on_cpu",
    "remove_training_nodes",
    "tensor_shape_from_node_def_name",
]

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


def _is_graph_def(value) -> bool:
    descriptor = getattr(value, "DESCRIPTOR", None)
    return descriptor is not None and descriptor.name == "GraphDef"


def _node_names(names, what: str) -> list:
    if isinstance(names, (str, bytes)):
        raise TypeError(f"{what} must be an iterable of strings, but got type {type(names)}.")
    return list(names)


def extract_sub_graph(graph_def, dest_nodes):
    """The part of a graph that ``dest_nodes`` (node names) need, through data, control and
    colocation inputs (TF1's ``tf.graph_util.extract_sub_graph``).

    ``graph_def``: a ``GraphDef`` proto gives a ``GraphDef`` of the needed nodes, in their
    order, with the library and versions, as TensorFlow's (a name that is no node is an
    ``AssertionError``, as there); a `Graph` gives a new `Graph` of the needed ops and the
    records of the conds and loops they lie in (ops nothing needs are never looked at: a
    ``py_func`` elsewhere does not stop it)."""
    dest_nodes = _node_names(dest_nodes, "dest_nodes")
    if isinstance(graph_def, Graph):
        return _rebuild(graph_def, dest_nodes, {})
    if not _is_graph_def(graph_def):
        raise TypeError(
            f"graph_def must be a graph_pb2.GraphDef proto (or a df.Graph), but got type "
            f"{type(graph_def)}."
        )
    return _extract_graph_def(graph_def, dest_nodes)


def _extract_graph_def(graph_def, dest_nodes: list):
    import copy

    name_to_input_name, name_to_node, name_to_seq_num = _graph_def_summary(graph_def)
    for d in dest_nodes:
        assert d in name_to_node, f"{d} is not in graph"
    keep: set = set()
    to_visit = list(dest_nodes)
    while to_visit:
        node = to_visit.pop(0)
        if node in keep:
            continue
        keep.add(node)
        to_visit += name_to_input_name.get(node, [])
    out = type(graph_def)()
    for n in sorted(keep, key=lambda n: name_to_seq_num[n]):
        out.node.extend([copy.deepcopy(name_to_node[n])])
    _copy_library_and_versions(graph_def, out)
    return out


def _copy_library_and_versions(source, out) -> None:
    for field in ("library", "versions"):  # tensorboardX's GraphDef has no library
        if field in source.DESCRIPTOR.fields_by_name:
            getattr(out, field).CopyFrom(getattr(source, field))


def _colocated_name(name: bytes) -> str:
    text = name.decode("utf-8")
    return text[5:] if text.startswith("loc:@") else text


def _graph_def_summary(graph_def):
    name_to_input_name, name_to_node, name_to_seq_num = {}, {}, {}
    for seq, node in enumerate(graph_def.node):
        n = _op_name(node.name)
        name_to_node[n] = node
        name_to_input_name[n] = [_op_name(x) for x in node.input]
        if "_class" in node.attr:
            name_to_input_name[n].extend(_colocated_name(c) for c in node.attr["_class"].list.s)
        name_to_seq_num[n] = seq
    return name_to_input_name, name_to_node, name_to_seq_num


_VARIABLE_NODE_TYPES = ("Variable", "VariableV2", "VarHandleOp")


def _chosen(name: str, whitelist, blacklist) -> bool:
    return (whitelist is None or name in whitelist) and (blacklist is None or name not in blacklist)


def convert_variables_to_constants(
    sess,
    input_graph_def,
    output_node_names,
    variable_names_whitelist=None,
    variable_names_blacklist=None,
):
    """The graph computing ``output_node_names`` with its variables replaced by their values
    in ``sess`` (TF1's ``tf.graph_util.convert_variables_to_constants``): only the nodes the
    outputs need are kept; ``variable_names_whitelist`` (names of variable nodes), when given,
    limits the variables frozen to those, and none in ``variable_names_blacklist`` is.

    ``input_graph_def``: a ``GraphDef`` proto gives a ``GraphDef``: each variable node
    (``VariableV2``, ``VarHandleOp``) frozen becomes a ``Const`` of its value (same name) and
    each ``ReadVariableOp`` of it an ``Identity``.  A `Graph` (``sess.graph``) gives a new
    `Graph` where each frozen variable handle is a ``Const`` and its reads ``Identity`` ops,
    so the value flows through the same Switches and Enters as the handle did.  A needed op
    that writes a frozen variable (``Assign`` ...) raises ``ValueError``."""
    output_node_names = _node_names(output_node_names, "output_node_names")
    whitelist = None if variable_names_whitelist is None else set(variable_names_whitelist)
    blacklist = None if variable_names_blacklist is None else set(variable_names_blacklist)
    if isinstance(input_graph_def, Graph):
        return _freeze_graph(sess, input_graph_def, output_node_names, whitelist, blacklist)
    if not _is_graph_def(input_graph_def):
        raise TypeError(
            "input_graph_def must be a graph_pb2.GraphDef proto (or a df.Graph), but got type "
            f"{type(input_graph_def)}."
        )
    return _freeze_graph_def(sess, input_graph_def, output_node_names, whitelist, blacklist)


def _variable_key(node) -> str:
    """The name a Session holds a variable node's value under: its ``shared_name`` when it
    has one (a resource variable's), else the node's name."""
    if "shared_name" in node.attr and node.attr["shared_name"].s:
        return node.attr["shared_name"].s.decode("utf-8")
    return node.name


def _variable_value(sess, name: str):
    values = sess._variable_values
    if name not in values:
        raise ValueError(f"Cannot freeze: variable '{name}' is not initialized in the session.")
    return values[name]


def _freeze_graph_def(sess, graph_def, output_node_names, whitelist, blacklist):
    import numpy as np

    from ..framework import dtypes as _dtypes
    from .graph_def import make_tensor_proto

    extracted = _extract_graph_def(graph_def, output_node_names)
    frozen = {}
    for node in extracted.node:
        if node.op in _VARIABLE_NODE_TYPES and _chosen(node.name, whitelist, blacklist):
            dtype = _dtypes.as_dtype(node.attr["dtype"].type)
            frozen[node.name] = (
                dtype,
                np.asarray(_variable_value(sess, _variable_key(node)), _dtypes.numpy_dtype(dtype)),
            )
    out = type(graph_def)()
    for node in extracted.node:
        new = out.node.add()
        if node.name in frozen:
            dtype, value = frozen[node.name]
            new.name, new.op = node.name, "Const"
            new.attr["dtype"].type = dtype.as_datatype_enum
            new.attr["value"].tensor.CopyFrom(make_tensor_proto(value, dtype))
            if node.device:
                new.device = node.device
            continue
        new.CopyFrom(node)
        sources = [_op_name(i) for i in node.input if not i.startswith("^")]
        if node.op == "ReadVariableOp" and sources and sources[0] in frozen:
            new.op = "Identity"
            del new.attr["dtype"]
            new.attr["T"].type = frozen[sources[0]][0].as_datatype_enum
        elif node.op in _VARIABLE_WRITES + ("AssignVariableOp",) and any(
            s in frozen for s in sources
        ):
            raise ValueError(
                f"Cannot freeze: output(s) {output_node_names} depend on {node.op} node "
                f"'{node.name}', which writes a variable."
            )
    _copy_library_and_versions(extracted, out)
    return out


def _freeze_graph(sess, graph: Graph, output_names, whitelist, blacklist) -> Graph:
    values = {}
    needed = _needed_ops(graph, output_names)
    for name in needed:
        op = graph.get_operation_by_name(name)
        if op.type == "VarHandleOp" and _chosen(op.name, whitelist, blacklist):
            key = op.attrs["shared_name"]
            if key not in sess._variable_values:
                raise ValueError(f"Cannot freeze: variable '{op.name}' is not initialized.")
            values[op.name] = sess._variable_values[key]
    for name in needed:
        op = graph.get_operation_by_name(name)
        if op.type in _VARIABLE_WRITES and op.inputs and op.inputs[0].op.name in values:
            raise ValueError(
                f"Cannot freeze: output(s) {list(output_names)} depend on {op.type} op "
                f"'{op.name}' (created at {op.location}), which writes a variable."
            )
    return _rebuild(graph, output_names, values)


def _rebuild(graph: Graph, output_names: Sequence[str], variable_values: dict) -> Graph:
    import numpy as np

    from ..framework import dtypes as _dtypes
    from .dfg import _ArrayWriter

    needed = _needed_ops(graph, output_names)
    # Only the needed ops are written: the others may hold what a file cannot (a py_func).
    document, arrays = graph_to_document(graph, only=needed)
    writer = _ArrayWriter()
    writer.arrays = dict(arrays)
    kept = []
    frozen = False
    by_name = {record["name"]: record for record in document["ops"]}
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
        elif (
            record["type"] == "ReadVariableOp"
            and record["inputs"]
            and _handle_source(record, by_name) in variable_values
        ):
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


_HANDLE_CARRIERS = ("Enter", "Switch", "Identity", "Merge", "Exit", "NextIteration")


def _handle_source(record: dict, by_name: dict):
    """The op a resource input of ``record`` comes from, through the ops that pass a handle
    on (Enter, Switch, Identity, ...): the variable's handle op."""
    seen = set()
    while record["inputs"] and record["name"] not in seen:
        seen.add(record["name"])
        source = by_name.get(record["inputs"][0][0])
        if source is None:
            return None
        if source["type"] not in _HANDLE_CARRIERS:
            return source["name"]
        record = source
    return None


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


# -- TF1's other GraphDef helpers ------------------------------------------------------------------
_VARIABLE_OPS = frozenset(
    ("Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd", "ScatterSub", "ScatterUpdate")
    + ("TruncatedNormal", "Variable", "VariableV2")
)


def must_run_on_cpu(node, pin_variables_on_cpu=False) -> bool:
    """Whether ``node`` (an `Operation` or a ``NodeDef``) must run on a CPU in TensorFlow: an
    int32 or string ``Const``, an int32 ``DynamicStitch``/``ParallelDynamicStitch``, a
    ``Cast`` from int32, and with ``pin_variables_on_cpu`` a variable op (TF1's list)."""
    from ..framework import dtypes as _dtypes
    from ..framework.graph import Operation

    if isinstance(node, Operation):
        op_type = node.type

        def dtype_of(attr: str):
            if attr == "SrcT":
                return node.inputs[0].dtype.base_dtype
            return node.outputs[0].dtype.base_dtype

    else:
        op_type = node.op

        def dtype_of(attr: str):
            return _dtypes.as_dtype(node.attr[attr].type)

    if pin_variables_on_cpu and op_type in _VARIABLE_OPS:
        return True
    if op_type == "Const":
        return dtype_of("dtype") in (_dtypes.string, _dtypes.int32)
    if op_type in ("DynamicStitch", "ParallelDynamicStitch"):
        return dtype_of("T") == _dtypes.int32
    if op_type == "Cast":
        return dtype_of("SrcT") == _dtypes.int32
    return False


def tensor_shape_from_node_def_name(graph: Graph, input_name: str):
    """The static shape of the tensor a NodeDef input string names in ``graph`` (``"x"`` is
    ``"x:0"``)."""
    canonical = input_name if ":" in input_name else input_name + ":0"
    return graph.get_tensor_by_name(canonical).shape


def remove_training_nodes(input_graph, protected_nodes=None):
    """A ``GraphDef`` of ``input_graph``'s nodes without those only training needs, as TF1's:
    ``CheckNumerics`` nodes are dropped, and ``Identity``/``StopGradient`` nodes spliced out
    (their consumers read their input), except those with or of control inputs, colocated
    with, or named in ``protected_nodes``."""
    protected = set(protected_nodes or [])
    to_remove = {n.name for n in input_graph.node if n.op == "CheckNumerics"} - protected
    node_class = type(input_graph.node[0]) if len(input_graph.node) else None
    after_removal = []
    for node in input_graph.node:
        if node.name in to_remove:
            continue
        new = node_class()
        new.CopyFrom(node)
        del new.input[:]
        new.input.extend(i for i in node.input if i.lstrip("^") not in to_remove)
        after_removal.append(new)
    control_input_names, with_control_input, colocated = set(), set(), set()
    for node in after_removal:
        for name in node.input:
            if "^" in name:
                control_input_names.add(name.replace("^", ""))
                with_control_input.add(node.name)
        if "_class" in node.attr:
            colocated.update(_colocated_name(c) for c in node.attr["_class"].list.s)
    to_splice = {
        node.name: node.input[0]
        for node in after_removal
        if node.op in ("Identity", "StopGradient")
        and node.name not in protected
        and node.name not in colocated
        and node.name not in with_control_input
    }
    to_splice = {k: v for k, v in to_splice.items() if k not in control_input_names}
    out = type(input_graph)()
    for node in after_removal:
        if node.name in to_splice:
            continue
        new = out.node.add()
        new.CopyFrom(node)
        del new.input[:]
        for full in node.input:
            name = full.lstrip("^")
            while name in to_splice:
                full = to_splice[name]
                name = full.lstrip("^")
            new.input.append(full)
    return out


from .graph_def import import_graph_def  # noqa: E402, F401

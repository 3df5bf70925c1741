"""Writing a dataflow graph as an ONNX model (`export`).

What is exported is what a ``Session.run(fetches, feed_dict)`` with those feeds would run: the
ops the fetches need through their data inputs, cut at the fed tensors.  Each fed tensor is a
graph input (its static shape, with unknown dimensions as symbolic ones), each fetch a graph
output, each ``Const`` and each variable read an initializer (a variable's value is read from
the ``session`` given; a frozen graph has only constants).  Every other op goes through its
mapping in `export_ops` (one entry per op type); an op type without one is an error that lists
every such op of the export at once, each with the user's file and line.

Control flow.  A dataflow ``cond`` or ``while_loop`` is a set of Switch/Merge(/Enter/Exit/
NextIteration/LoopCond) ops.  `control_flow.analyse` recovers which cond branch or loop each op
belongs to from those ops alone (so a graph imported from a GraphDef exports as one built
here), and the exporter rebuilds ONNX's structured form:

- A cond's result Merges become the outputs of one ``If`` node; branch ``b``'s subgraph computes
  the Merges' inputs from branch ``b`` (``Merge([false_result, true_result])``), and a tensor a
  branch captured from outside (``Switch(x, pred)[b]``) is ``x`` itself, read from the
  enclosing graph as ONNX's subgraphs may.
- Control flow v2's ``If`` op (``enable_control_flow_v2``) becomes an ``If`` whose branches are
  its traced branch graphs, their input placeholders read as the op's inputs.
- A loop becomes one ``Loop`` node whose loop-carried values are the loop variables (those the
  fetches need), in the loop's order.  The loop's condition runs once before the loop on the
  initial values (ONNX's ``cond`` input) and, in the body, on the values the body computes
  (the body's ``cond`` output), so the trip count is the one dataflow runs, zero included.  A
  ``maximum_iterations`` becomes the Loop's trip count ``M`` as well (the counter it adds stays
  a loop variable).  Loop invariants (constant Enters) are read from the enclosing graph.

The exporter resolves tensors on demand (`_Exporter.resolve`): each (sub)graph being built is
a `_Scope` bound to one context; an op is emitted into the innermost scope of its own context,
and its inputs before it, so each graph's nodes are in topological order and a value from an
enclosing context is emitted in the enclosing graph, before the ``If``/``Loop`` node that reads
it.  Names are unique across the model.

TensorArrays (``map_fn``, ``scan``, ``dynamic_rnn``) become ONNX sequences carried through the
Loop; dataflow's NHWC convolutions and pools become ONNX's NCHW ops between two Transposes (see
`export_ops` for both).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Optional

import numpy as np

try:
    import onnx
    from onnx import helper, numpy_helper
except ImportError as error:  # pragma: no cover - the extra is installed in the test setup
    raise ImportError(
        "df.onnx.export needs the optional package 'onnx' (pip install 'dataflow[onnx]')."
    ) from error

from executor.program import NodeKind

from ...framework.graph import Graph, Operation, Tensor
from ...framework.source_location import _user_location
from . import control_flow, export_ops
from .export_ops import OpEmitter, Unsupported

__all__ = ["DEFAULT_OPSET", "OnnxExportError", "export"]

# Opset 17 is read by every onnxruntime since 1.12; 13 is the oldest with the forms used here
# (Split's and ReduceSum's inputs, Softmax on one axis).
DEFAULT_OPSET = 17
MIN_OPSET = 13
MAX_OPSET = 21

# Ops the exporter turns into initializers or graph inputs itself.
_SOURCES = frozenset(
    {"Const", "Placeholder", "ReadVariableOp", "VarHandleOp", "VariableV2", "Variable"}
)
# Ops whose outputs are a variable's value; the handle (or ref) they read comes first.
_VARIABLE_READS = frozenset({"ReadVariableOp"})
_VARIABLE_OPS = frozenset({"VarHandleOp", "VariableV2", "Variable"})
# Ops a captured variable handle passes through on its way to a read inside a cond or loop.
_HANDLE_FORWARDERS = frozenset({"Enter", "Switch", "Identity", "RefIdentity", "RefEnter"})


class OnnxExportError(ValueError):
    """The graph cannot be written as ONNX: ops without a mapping, unfed placeholders, variables
    without a session.  The message names every op at fault with the user's file and line."""


def export(
    fetches,
    feeds=(),
    path: Optional[str] = None,
    opset: int = DEFAULT_OPSET,
    session=None,
    model_name: str = "dataflow",
    check: bool = True,
):
    """Writes the graph computing ``fetches`` from ``feeds`` as an ONNX model and returns the
    ``onnx.ModelProto``.

    ``fetches``: a tensor, a list of them, or a dict from output names to tensors (otherwise a
    tensor's output is named after it: ``"op"`` for output 0, ``"op:k"`` for the others).
    ``feeds``: the tensors given at run time (placeholders, or any tensor, cutting off what
    computes it), as one tensor, a list, or a dict from input names to tensors.  ``path``: where
    to write the model (nothing is written when None).  ``opset``: the ONNX opset of the default
    domain (13 to 21).  ``session``: the `Session` whose variable values become initializers;
    without one the graph must hold no variable reads (a frozen graph).  ``check`` runs
    ``onnx.checker.check_model`` on the result.

    Raises `OnnxExportError` naming every op that has no ONNX mapping (type, name, file and
    line), every needed placeholder not in ``feeds``, and every variable read without a
    ``session``, all at once.
    """
    where = _user_location()
    if not isinstance(opset, int) or not MIN_OPSET <= opset <= MAX_OPSET:
        raise OnnxExportError(
            f"df.onnx.export (at {where}): opset must be an int from {MIN_OPSET} to "
            f"{MAX_OPSET}, got {opset!r}."
        )
    fetch_names, fetch_tensors = _named_tensors(fetches, "fetches", where)
    if not fetch_tensors:
        raise OnnxExportError(
            f"df.onnx.export (at {where}): fetches is empty; name at least one tensor."
        )
    feed_names, feed_tensors = _named_tensors(feeds, "feeds", where)
    graph = fetch_tensors[0].graph
    for tensor in fetch_tensors + feed_tensors:
        if tensor.graph is not graph:
            raise OnnxExportError(
                f"df.onnx.export (at {where}): {tensor.name!r} is in another graph than "
                f"{fetch_tensors[0].name!r}."
            )
    exporter = _Exporter(graph, opset, session, where)
    model = exporter.build(fetch_names, fetch_tensors, feed_names, feed_tensors, model_name)
    if check:
        onnx.checker.check_model(model)
    if path is not None:
        directory = os.path.dirname(os.fspath(path))
        if directory:
            os.makedirs(directory, exist_ok=True)
        onnx.save_model(model, os.fspath(path))
    return model


def _named_tensors(values, what: str, where) -> tuple[list[str], list[Tensor]]:
    """(names, tensors) of a tensor, a sequence of tensors or a dict {name: tensor}."""
    if values is None:
        return [], []
    if isinstance(values, Mapping):
        items = list(values.items())
    elif isinstance(values, (Tensor, Operation)):
        items = [(None, values)]
    elif isinstance(values, Sequence) and not isinstance(values, str):
        items = [(None, value) for value in values]
    else:
        raise OnnxExportError(
            f"df.onnx.export (at {where}): {what} must be a tensor, a list of tensors or a "
            f"dict of them, got {type(values).__name__}."
        )
    names, tensors = [], []
    for name, value in items:
        if isinstance(value, Operation) and value.outputs:
            value = value.outputs[0]
        if not isinstance(value, Tensor):
            raise OnnxExportError(
                f"df.onnx.export (at {where}): {what} holds {value!r}, which is not a graph tensor."
            )
        if name is None:
            name = value.op.name if value.value_index == 0 else value.name
        if not isinstance(name, str) or not name:
            raise OnnxExportError(
                f"df.onnx.export (at {where}): the {what} name {name!r} is not a string."
            )
        if name in names and tensors[names.index(name)] is not value:
            raise OnnxExportError(f"df.onnx.export (at {where}): two {what} are named {name!r}.")
        if name not in names:
            names.append(name)
            tensors.append(value)
    return names, tensors


class _Scope:
    """One ONNX graph being built, or a second evaluation of a loop's condition inside one.

    ``nodes`` is the node list the scope appends to (shared with the graph it evaluates in),
    ``context`` the dataflow context whose ops it emits (None: the top level), ``parent`` the
    scope of the enclosing context, and ``names`` the ONNX name of each tensor emitted or bound
    here (a loop's Merges and Switch outputs are bound to the body's inputs).
    """

    def __init__(self, nodes: list, context, parent: Optional[_Scope]):
        self.nodes = nodes
        self.context = context
        self.parent = parent
        self.names: dict[Tensor, Optional[str]] = {}

    def chain(self):
        scope = self
        while scope is not None:
            yield scope
            scope = scope.parent


class _Exporter:
    """Builds one model: the top graph's scope, the initializers, the unique names, and the
    problems found (reported together at the end)."""

    def __init__(self, graph: Graph, opset: int, session, where):
        self.graph = graph
        self.where = where  # the user's call of export, for the errors
        self.opset = opset
        self.session = session
        self.initializers: list = []
        self.used_names: set[str] = set()
        self.problems: dict[Operation, str] = {}
        self.root = _Scope([], None, None)
        self.emitted_control_flow: dict[tuple, dict[Operation, str]] = {}  # If and Loop nodes
        self.variable_initializers: dict[Operation, str] = {}
        self.converted: set[Operation] = set()  # ops whose converter ran without a problem
        # The ONNX values that are sequences (a TensorArray's flow), with their element type.
        self.sequence_types: dict[str, int] = {}
        self.flows: dict[Graph, control_flow.ControlFlow] = {}  # the graph's, and functions'

    def flow(self, op: Operation) -> control_flow.ControlFlow:
        """The conds and loops of ``op``'s graph (the exported graph, or a function's)."""
        graph = op.graph
        if graph not in self.flows:
            self.flows[graph] = control_flow.analyse(graph)
        return self.flows[graph]

    # -- names ------------------------------------------------------------------------------------
    def fresh_name(self, base: str) -> str:
        """A name no other value of the model has, ``base`` when it is free."""
        name, count = base, 0
        while name in self.used_names:
            count += 1
            name = f"{base}__{count}"
        self.used_names.add(name)
        return name

    def add_initializer(self, value: np.ndarray, base: str) -> str:
        name = self.fresh_name(base)
        self.initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    # -- the model -------------------------------------------------------------------------------
    def build(self, fetch_names, fetch_tensors, feed_names, feed_tensors, model_name):
        for name in fetch_names + feed_names:
            self.used_names.add(name)
        inputs = []
        for name, tensor in zip(feed_names, feed_tensors):
            if self.flow(tensor.op).tensor_context(tensor) is not None:
                self.problems[tensor.op] = (
                    f"feeds {tensor.name!r}, a tensor inside a cond or loop; ONNX feeds only "
                    "the top level"
                )
                continue
            self.root.names[tensor] = name
            inputs.append(_value_info(name, tensor, symbolic_prefix=name))
        self.needed = self._needed_ops(fetch_tensors, feed_tensors)
        outputs = []
        for name, tensor in zip(fetch_names, fetch_tensors):
            source = self.resolve(tensor, self.root)
            if source is not None:
                self.root.nodes.append(helper.make_node("Identity", [source], [name], name=name))
            outputs.append(self._value_info_like(name, source, tensor))
        if self.problems:
            raise OnnxExportError(self._problem_report())
        # Constants a converter read at export time (a slice's bounds, say) may have no reader.
        read = _names_read(self.root.nodes)
        initializers = [tensor for tensor in self.initializers if tensor.name in read]
        graph = helper.make_graph(
            self.root.nodes, model_name, inputs, outputs, initializer=initializers
        )
        opset_ids = [helper.make_opsetid("", self.opset)]
        model = helper.make_model(
            graph,
            opset_imports=opset_ids,
            producer_name="dataflow",
            ir_version=helper.find_min_ir_version_for(opset_ids),
        )
        _give_ranks_to_inputs_and_outputs(model, self.where)
        return model

    def _needed_ops(self, fetches, feeds) -> set:
        """The ops the fetches need through data inputs, not going past a fed tensor."""
        fed = set(feeds)
        needed: set = set()
        stack = [t.op for t in fetches if t not in fed]
        while stack:
            op = stack.pop()
            if op in needed:
                continue
            needed.add(op)
            for tensor in op.inputs:
                if tensor not in fed and tensor.op not in needed:
                    stack.append(tensor.op)
        return needed

    def _problem_report(self) -> str:
        lines = [
            f"df.onnx.export (at {self.where}): {len(self.problems)} op(s) cannot be written "
            "as ONNX:"
        ]
        for op, reason in self.problems.items():
            lines.append(f"  {op.type} '{op.name}' (created at {op.location}): {reason}")
        unmapped = sorted({op.type for op, r in self.problems.items() if r == _NO_MAPPING})
        if unmapped:
            lines.append("Op types without an ONNX mapping: " + ", ".join(unmapped) + ".")
        return "\n".join(lines)

    # -- resolving tensors ------------------------------------------------------------------------
    def resolve(self, tensor: Tensor, scope: _Scope) -> Optional[str]:
        """The ONNX name of ``tensor`` seen from ``scope``, emitting what computes it.  None when
        it cannot be exported (the reason is in `problems`)."""
        for candidate in scope.chain():
            if tensor in candidate.names:
                return candidate.names[tensor]
        op = tensor.op
        if op.type == "Const":
            return self._constant(tensor)
        if op.type in _VARIABLE_READS or op.type in _VARIABLE_OPS:
            return self._variable_value(tensor)
        if op.type == "Placeholder":
            return self._problem(op, "a placeholder the export does not feed (add it to feeds)")
        flow = self.flow(op)
        if op in flow.problems:
            return self._problem(op, flow.problems[op])
        kind = op._op_def.kind
        if kind == NodeKind.ENTER:
            return self._resolve_enter(tensor, scope)
        if kind == NodeKind.EXIT:
            return self._resolve_exit(tensor, scope)
        if kind == NodeKind.MERGE:
            return self._resolve_merge(tensor, scope)
        if kind == NodeKind.SWITCH:
            return self._resolve_switch(tensor, scope)
        if kind == NodeKind.NEXT_ITERATION or op.type == "LoopCond":
            return self._problem(op, "a loop op read outside its loop")
        target = self._scope_for(flow.op_context(op), scope)
        if target is None:
            return self._problem(op, "is read outside the cond or loop it belongs to")
        if op.type == "If" and "then_branch" in op.attrs:
            return self._resolve_functional_if(tensor, target)
        name = self._emit_op(op, target)[tensor.value_index]
        if name is None and op in self.converted:
            # The op converted, but this output has no ONNX counterpart (a batch norm's
            # saved statistics, say) and something needs it.
            self._problem(op, f"output {tensor.value_index} has no ONNX equivalent")
        return name

    def _problem(self, op: Operation, reason: str) -> None:
        self.problems.setdefault(op, reason)
        return None

    def _scope_for(self, context, scope: _Scope) -> Optional[_Scope]:
        for candidate in scope.chain():
            if candidate.context is context:
                return candidate
        return None

    def _constant(self, tensor: Tensor) -> str:
        name = self.root.names.get(tensor)
        if name is None:
            value = np.asarray(tensor.op.attrs["value"])
            if value.dtype.kind in "OUS":
                return self._problem(tensor.op, "a string constant; ONNX tensors here are numeric")
            name = self.add_initializer(value, tensor.op.name)
            self.root.names[tensor] = name
        return name

    def _variable_value(self, tensor: Tensor) -> Optional[str]:
        """The initializer holding the value of the variable ``tensor`` reads (or is)."""
        variable = tensor.op
        while variable.type not in _VARIABLE_OPS:
            if variable.type not in _HANDLE_FORWARDERS and variable.type not in _VARIABLE_READS:
                return self._problem(tensor.op, "reads a variable handle that comes from an op")
            variable = variable.inputs[0].op
        if variable in self.variable_initializers:
            return self.variable_initializers[variable]
        if self.session is None:
            return self._problem(
                tensor.op,
                f"reads variable '{variable.name}': pass session= to export its value, or "
                "freeze the graph (df.graph_util.convert_variables_to_constants)",
            )
        key = variable.attrs.get("shared_name") or variable.name
        values = self.session._variable_values
        if key not in values:
            return self._problem(
                tensor.op, f"reads variable '{variable.name}', not initialized in the session"
            )
        name = self.add_initializer(np.asarray(values[key]), variable.name)
        self.variable_initializers[variable] = name
        return name

    def _resolve_enter(self, tensor: Tensor, scope: _Scope) -> Optional[str]:
        """A loop invariant (a constant Enter) seen from inside the loop: the value itself."""
        op = tensor.op
        inside = self._scope_for(self.flow(op).op_context(op), scope)
        if inside is None or not op.attrs.get("is_constant", False):
            return self._problem(op, "a loop's Enter read outside the loop's body")
        return self.resolve(op.inputs[0], inside.parent)

    def _resolve_switch(self, tensor: Tensor, scope: _Scope) -> Optional[str]:
        """A cond's Switch seen from inside its branch: the switched tensor itself."""
        op = tensor.op
        if op in self.flow(op).loop_of_switch:
            return self._problem(op, "a loop's Switch read outside its loop body")
        branch = self.flow(op).tensor_context(tensor)
        for candidate in scope.chain():
            if candidate.context is branch:
                return self.resolve(op.inputs[0], candidate.parent)
        return self._problem(op, "a cond's Switch read outside the branch it opens")

    # -- cond -> If ------------------------------------------------------------------------------
    def _resolve_merge(self, tensor: Tensor, scope: _Scope) -> Optional[str]:
        op = tensor.op
        if op in self.flow(op).loop_of_merge:
            return self._problem(op, "a loop's Merge read outside its loop")
        if tensor.value_index != 0:
            return self._problem(op, "output 1 of a cond's Merge (the branch index)")
        cond = self.flow(op).cond_of_merge[op]
        target = self._scope_for(cond.outer, scope)
        if target is None:
            return self._problem(op, "a cond's result read outside the cond's context")
        key = ("If", id(cond), id(target))
        if key not in self.emitted_control_flow:
            self.emitted_control_flow[key] = self._emit_if(cond, target)
        return self.emitted_control_flow[key].get(op)

    def _emit_if(self, cond, target: _Scope) -> dict:
        """Appends one If computing the needed Merges of ``cond`` to ``target``; {merge op: its
        output's name}."""
        merges = [merge for merge in cond.merges if merge in self.needed]
        pred = self.resolve(cond.pred, target)
        branch_graphs = {}
        sequence_merges: dict = {}
        for branch in (1, 0):
            body = _Scope([], cond.branches[branch], target)
            side = "then" if branch else "else"
            outputs = []
            for merge in merges:
                index = cond.true_input[merge] if branch else 1 - cond.true_input[merge]
                value = self.resolve(merge.inputs[index], body)
                out = self.fresh_name(f"{merge.name}/{side}")
                if value is not None:
                    body.nodes.append(helper.make_node("Identity", [value], [out], name=out))
                outputs.append(self._value_info_like(out, value, merge.outputs[0]))
                if out in self.sequence_types:
                    sequence_merges[merge] = self.sequence_types[out]
            graph_name = self.fresh_name(f"{cond.name}/{side}_branch")
            branch_graphs[branch] = helper.make_graph(body.nodes, graph_name, [], outputs)
        names = {merge: self.fresh_name(merge.name) for merge in merges}
        for merge, element_type in sequence_merges.items():
            self.sequence_types[names[merge]] = element_type
        if pred is not None:
            target.nodes.append(
                helper.make_node(
                    "If",
                    [pred],
                    [names[m] for m in merges],
                    name=self.fresh_name(cond.name),
                    then_branch=branch_graphs[1],
                    else_branch=branch_graphs[0],
                )
            )
        return names

    def _resolve_functional_if(self, tensor: Tensor, target: _Scope) -> Optional[str]:
        """control flow v2's ``If`` op (its branches are traced function graphs): one ONNX If
        whose branches are those graphs, their input placeholders read as the op's inputs."""
        op = tensor.op
        if tensor not in target.names:
            pred = self.resolve(op.inputs[0], target)
            inputs = [self.resolve(t, target) for t in op.inputs[1:]]
            branch_graphs = []
            for side in ("then_branch", "else_branch"):
                function = op.attrs[side]
                self.needed |= self._needed_ops(function.outputs, function.inputs)
                body = _Scope([], None, target)  # the function graph's top level
                body.names.update(zip(function.inputs, inputs))
                outputs = []
                for result, like in zip(function.outputs, op.outputs):
                    value = self.resolve(result, body)
                    out = self.fresh_name(f"{op.name}/{side}/{result.op.name}")
                    if value is not None:
                        body.nodes.append(helper.make_node("Identity", [value], [out], name=out))
                    outputs.append(self._value_info_like(out, value, like))
                graph_name = self.fresh_name(f"{op.name}/{side}")
                branch_graphs.append(helper.make_graph(body.nodes, graph_name, [], outputs))
            names = [self.fresh_name(t.name if t.value_index else op.name) for t in op.outputs]
            if pred is not None and None not in inputs:
                target.nodes.append(
                    helper.make_node(
                        "If",
                        [pred],
                        names,
                        name=self.fresh_name(op.name),
                        then_branch=branch_graphs[0],
                        else_branch=branch_graphs[1],
                    )
                )
            target.names.update(zip(op.outputs, names))
        return target.names[tensor]

    # -- while_loop -> Loop ----------------------------------------------------------------------
    def _resolve_exit(self, tensor: Tensor, scope: _Scope) -> Optional[str]:
        op = tensor.op
        loop = self.flow(op).op_context(op)
        target = self._scope_for(loop.outer, scope)
        if target is None:
            return self._problem(op, "a loop's result read outside the loop's context")
        key = ("Loop", id(loop), id(target))
        if key not in self.emitted_control_flow:
            self.emitted_control_flow[key] = self._emit_loop(loop, target)
        return self.emitted_control_flow[key].get(op)

    def _emit_loop(self, loop, target: _Scope) -> dict:
        """Appends one Loop for ``loop`` to ``target``; {Exit op: the name of its result} for
        the loop variables the fetches need."""
        carried = [v for v in loop.variables if v.merge in self.needed]
        merges = [v.merge.outputs[0] for v in carried]
        initial = [self.resolve(v.enter.inputs[0], target) for v in carried]
        condition = loop.loop_cond.inputs[0]

        # ONNX's cond input: the loop's condition on the initial values, in the enclosing graph.
        first_test = _Scope(target.nodes, loop, target)
        first_test.names.update(zip(merges, initial))
        keep_going = self.resolve(condition, first_test)

        trip_count = ""
        if loop.maximum_iterations is not None:
            limit = self.resolve(loop.maximum_iterations, target)
            if limit is not None:
                trip_count = self.fresh_name(f"{loop.name}/trip_count")
                target.nodes.append(
                    helper.make_node(
                        "Cast", [limit], [trip_count], name=trip_count, to=onnx.TensorProto.INT64
                    )
                )

        body = _Scope([], loop, target)
        iteration = self.fresh_name(f"{loop.name}/iteration")
        condition_in = self.fresh_name(f"{loop.name}/condition_in")
        body_inputs = [
            helper.make_tensor_value_info(iteration, onnx.TensorProto.INT64, []),
            helper.make_tensor_value_info(condition_in, onnx.TensorProto.BOOL, []),
        ]
        for variable, merge, start in zip(carried, merges, initial):
            name = self.fresh_name(f"{variable.merge.name}/value")
            body.names[merge] = name
            body.names[variable.switch.outputs[1]] = name
            body_inputs.append(self._value_info_like(name, start, merge))
        following = [self.resolve(v.next_iteration.inputs[0], body) for v in carried]
        # The body's cond output: the condition on the values of the next iteration.
        next_test = _Scope(body.nodes, loop, target)
        next_test.names.update(zip(merges, following))
        keep_going_next = self.resolve(condition, next_test)

        body_outputs = []
        for source, base, like in [(keep_going_next, f"{loop.name}/condition_out", condition)] + [
            (value, f"{v.next_iteration.name}/value", merge)
            for v, value, merge in zip(carried, following, merges)
        ]:
            out = self.fresh_name(base)
            if source is not None:
                body.nodes.append(helper.make_node("Identity", [source], [out], name=out))
            body_outputs.append(self._value_info_like(out, source, like))
        body_graph = helper.make_graph(
            body.nodes, self.fresh_name(f"{loop.name}/body"), body_inputs, body_outputs
        )
        results = [self.fresh_name(v.exit.name if v.exit else v.merge.name) for v in carried]
        for result, start in zip(results, initial):
            if start in self.sequence_types:
                self.sequence_types[result] = self.sequence_types[start]
        if keep_going is not None and None not in initial:
            target.nodes.append(
                helper.make_node(
                    "Loop",
                    [trip_count, keep_going, *initial],
                    results,
                    name=self.fresh_name(loop.name),
                    body=body_graph,
                )
            )
        return {v.exit: result for v, result in zip(carried, results) if v.exit is not None}

    def _value_info_like(self, name: str, source: Optional[str], tensor: Tensor):
        """The ValueInfoProto of ``name``, a copy of ``source``: a sequence when ``source`` is
        one (a TensorArray's flow), else a tensor of ``tensor``'s dtype and static shape."""
        if source in self.sequence_types:
            element_type = self.sequence_types[source]
            self.sequence_types[name] = element_type
            return helper.make_tensor_sequence_value_info(name, element_type, None)
        return _value_info(name, tensor)

    # -- ordinary ops ----------------------------------------------------------------------------
    def _is_plain(self, op: Operation) -> bool:
        """Whether ``op`` goes through `export_ops` (not a constant, variable, placeholder or
        control-flow primitive)."""
        return (
            op.type not in _SOURCES
            and op._op_def.kind == NodeKind.OP
            and op.type != "LoopCond"
            and not (op.type == "If" and "then_branch" in op.attrs)  # control flow v2's
            and op not in self.flow(op).problems
        )

    def _emit_op(self, op: Operation, scope: _Scope) -> list[Optional[str]]:
        """Emits ``op`` into ``scope`` (its inputs first) and binds its outputs' names there.

        The plain ops it needs in the same scope are emitted first, in an explicit depth-first
        order, so that a long chain of ops (a deep network) does not recurse once per op."""
        already = [scope.names.get(t, _MISSING) for t in op.outputs]
        if _MISSING not in already:
            return already
        for ancestor in self._plain_ancestors(op, scope):
            self._emit_one(ancestor, scope)
        return self._emit_one(op, scope)

    def _plain_ancestors(self, op: Operation, scope: _Scope) -> list[Operation]:
        """The plain ops of ``scope``'s context that ``op`` needs and ``scope`` lacks, each
        after its inputs."""
        order: list[Operation] = []
        seen = {op}
        stack = [(op, False)]
        while stack:
            current, expanded = stack.pop()
            if expanded:
                if current is not op:
                    order.append(current)
                continue
            stack.append((current, True))
            for tensor in current.inputs:
                producer = tensor.op
                if producer in seen or any(tensor in s.names for s in scope.chain()):
                    continue
                inside = self.flow(producer).op_context(producer) is scope.context
                if inside and self._is_plain(producer):
                    seen.add(producer)
                    stack.append((producer, False))
        return order

    def _emit_one(self, op: Operation, scope: _Scope) -> list[Optional[str]]:
        already = [scope.names.get(t, _MISSING) for t in op.outputs]
        if _MISSING not in already:
            return already
        inputs = [self.resolve(t, scope) for t in op.inputs]
        outputs: list[Optional[str]] = [None] * len(op.outputs)
        convert = export_ops.CONVERTERS.get(op.type)
        if convert is None:
            self._problem(op, _NO_MAPPING)
        elif None not in inputs:
            emitter = OpEmitter(self, scope.nodes, op, inputs)
            try:
                results = convert(emitter)
            except Unsupported as reason:
                self._problem(op, str(reason))
            except (TypeError, ValueError, KeyError, IndexError) as error:
                # Attributes the mapping did not expect (a graph from elsewhere, say).
                self._problem(op, f"its ONNX mapping failed: {type(error).__name__}: {error}")
            else:
                self.converted.add(op)
                results = list(results) + [None] * (len(op.outputs) - len(results))
                for k, name in enumerate(results):
                    outputs[k] = name
        for tensor, name in zip(op.outputs, outputs):
            scope.names[tensor] = name
        return outputs


def _give_ranks_to_inputs_and_outputs(model, where) -> None:
    """ONNX wants a rank on every input and output of the top graph.  A fetch whose rank the
    graph does not know (a loop's result in a graph imported from a GraphDef, say) takes the
    shape ONNX's shape inference finds; failing that, and for a feed, it is an error."""

    def rankless(values):
        return [
            v
            for v in values
            if v.type.HasField("tensor_type") and not v.type.tensor_type.HasField("shape")
        ]

    missing_inputs = rankless(model.graph.input)
    if missing_inputs:
        names = ", ".join(repr(v.name) for v in missing_inputs)
        raise OnnxExportError(
            f"df.onnx.export (at {where}): feed(s) {names} have no known rank, and ONNX needs "
            "one: give the placeholders a shape (unknown dimensions may be None)."
        )
    missing_outputs = rankless(model.graph.output)
    if not missing_outputs:
        return
    inferred = onnx.shape_inference.infer_shapes(model)
    found = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    unknown = []
    for output in missing_outputs:
        source = found.get(output.name)
        if source is not None and source.type.tensor_type.HasField("shape"):
            output.type.tensor_type.shape.CopyFrom(source.type.tensor_type.shape)
        else:
            unknown.append(output.name)
    if unknown:
        raise OnnxExportError(
            f"df.onnx.export (at {where}): fetch(es) {', '.join(map(repr, unknown))} have no "
            "known rank, and "
            "ONNX needs one: set their shape (Tensor.set_shape, unknown dimensions as None)."
        )


def _names_read(nodes) -> set:
    """Every name the nodes read, in their subgraphs too."""
    read = set()
    for node in nodes:
        read.update(node.input)
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                read |= _names_read(attribute.g.node)
                read.update(output.name for output in attribute.g.output)
    return read


_MISSING = object()
_NO_MAPPING = "no ONNX mapping for this op type"


def _value_info(name: str, tensor: Tensor, symbolic_prefix: Optional[str] = None):
    """A ValueInfoProto for ``tensor``'s dtype and static shape (unknown dimensions are
    symbolic ``<prefix>_d<i>`` when a prefix is given, unnamed otherwise)."""
    try:
        element_type = export_ops.onnx_type(tensor.dtype)
    except Unsupported as reason:
        raise OnnxExportError(
            f"df.onnx.export: {tensor.name!r} (from {tensor.op.type} '{tensor.op.name}', created "
            f"at {tensor.op.location}) is a {tensor.dtype.name} tensor: {reason}."
        ) from None
    shape = tensor.shape
    if shape.ndims is None:
        return helper.make_tensor_value_info(name, element_type, None)
    dims = []
    for i, dim in enumerate(shape.as_list()):
        if dim is None:
            dims.append(f"{symbolic_prefix}_d{i}" if symbolic_prefix else None)
        else:
            dims.append(dim)
    return helper.make_tensor_value_info(name, element_type, dims)

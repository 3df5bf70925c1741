"""The conds and loops of a graph, recovered from its Switch/Merge/Enter/Exit/NextIteration ops.

ONNX's control flow is structured (an ``If`` with two branch graphs, a ``Loop`` with a body
graph); dataflow's is a set of primitive ops wired together.  `analyse` finds the structure by
looking at the ops alone, so it works alike for a graph built with ``df.cond`` and
``df.while_loop``, one loaded from a ``.dfg`` file and one imported from a TensorFlow
``GraphDef`` (which keeps no record of its conds and loops).

Every op gets a *context*: None (the top level), a `Loop` (the ops of one frame: a while loop's
Enter/Merge/Switch/NextIteration/Exit ops, its condition and its body) or a `Branch` (the ops
that run only when a cond takes one side).  Contexts nest; each has ``outer``.  The rules, in
topological order (a Merge's back edge from a NextIteration left out):

- an Enter is in the loop of its ``frame_name``; the loop's ``outer`` is the deepest context of
  its Enters' inputs;
- a Merge with a NextIteration input is a loop variable's Merge, in the loop of its Enter;
- a Switch whose predicate comes from a LoopCond is a loop variable's Switch, in that loop; its
  outputs are in the loop too (output 0 goes to the Exit);
- any other Switch is a cond's: it is in the deepest context of its inputs, ``C``, and its
  output ``b`` is in the branch ``(predicate, b)`` of ``C``; two conds on the same predicate
  in the same context share their branches (one ``If`` computes both, which is the same);
- any other Merge joins the two branches of one cond: it is in the innermost context holding
  both of its inputs' contexts, and its inputs come from the branch ``(p, 0)`` and ``(p, 1)``
  directly inside it;
- an Exit's output is in its loop's ``outer``;
- any other op is in the deepest context among its data and control inputs (an op without
  inputs is at the top level: a constant inside a loop or a branch has a control input from
  the pivot, as TensorFlow builds it).

Loop variables are listed in the order of their Merges in the graph.  A loop's
``maximum_iterations`` comes from the record ``df.while_loop`` keeps, when the graph has it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

from executor.program import NodeKind

from ...framework.graph import Graph, Operation, Tensor
from ...framework.graph_walk import topological_order

__all__ = ["Branch", "Cond", "ControlFlow", "Loop", "LoopVariable", "analyse"]


@dataclass(eq=False)
class LoopVariable:
    """One loop-carried value: Enter -> Merge([enter, next]) -> Switch(merge, LoopCond) ->
    (Identity -> body -> NextIteration | Exit)."""

    enter: Operation
    merge: Operation
    switch: Optional[Operation] = None
    next_iteration: Optional[Operation] = None
    exit: Optional[Operation] = None


@dataclass(eq=False)
class Loop:
    """One while loop (one frame)."""

    name: str
    outer: Optional[Context] = None
    variables: list[LoopVariable] = field(default_factory=list)
    loop_cond: Optional[Operation] = None
    maximum_iterations: Optional[Tensor] = None

    @property
    def depth(self) -> int:
        return 1 + _depth(self.outer)


@dataclass(eq=False)
class Branch:
    """One side of a cond: the ops that run when ``pred`` is ``branch`` (1 true, 0 false)."""

    cond: Cond
    branch: int

    @property
    def outer(self) -> Optional[Context]:
        return self.cond.outer

    @property
    def pred(self) -> Tensor:
        return self.cond.pred

    @property
    def depth(self) -> int:
        return 1 + _depth(self.outer)


@dataclass(eq=False)
class Cond:
    """A cond: its predicate, the context it is in, its two branches and result Merges (each
    with the index of its input from the true branch)."""

    pred: Tensor
    outer: Optional[Context]
    branches: dict[int, Branch] = field(default_factory=dict)
    merges: list[Operation] = field(default_factory=list)
    true_input: dict[Operation, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        first = self.merges[0].name if self.merges else self.pred.op.name
        return first.rpartition("/")[0] or first


Context = Union[Loop, Branch]


def _depth(context: Optional[Context]) -> int:
    return 0 if context is None else context.depth


def _deepest(contexts) -> Optional[Context]:
    deepest, depth = None, 0
    for context in contexts:
        if context is not None and context.depth > depth:
            deepest, depth = context, context.depth
    return deepest


def _chain(context: Optional[Context]):
    while context is not None:
        yield context
        context = context.outer


class ControlFlow:
    """The contexts of one graph's ops: `op_context`, `tensor_context`, the loops and conds,
    and `problems` (ops the rules cannot place, with the reason)."""

    def __init__(self):
        self.op_contexts: dict[Operation, Optional[Context]] = {}
        self.loops: dict[str, Loop] = {}
        self.conds: dict[tuple, Cond] = {}
        self.loop_of_merge: dict[Operation, Loop] = {}
        self.loop_of_switch: dict[Operation, Loop] = {}
        self.cond_of_merge: dict[Operation, Cond] = {}
        self.problems: dict[Operation, str] = {}

    def op_context(self, op: Operation) -> Optional[Context]:
        return self.op_contexts.get(op)

    def tensor_context(self, tensor: Tensor) -> Optional[Context]:
        """Where ``tensor``'s value lives: its op's context, except for a cond Switch (the
        branch of its output) and a loop's Exit (the loop's outer context)."""
        op = tensor.op
        kind = _kind(op)
        if kind == NodeKind.EXIT:
            loop = self.op_contexts.get(op)
            return loop.outer if isinstance(loop, Loop) else None
        if kind == NodeKind.SWITCH and op not in self.loop_of_switch and len(op.inputs) == 2:
            cond = self._cond(op.inputs[1], self.op_contexts.get(op))
            return cond.branches[tensor.value_index] if tensor.value_index in (0, 1) else None
        if kind == NodeKind.MERGE and op in self.cond_of_merge:
            return self.cond_of_merge[op].outer
        return self.op_contexts.get(op)

    def _cond(self, pred: Tensor, outer: Optional[Context]) -> Cond:
        key = (id(pred), id(outer))
        cond = self.conds.get(key)
        if cond is None:
            cond = self.conds[key] = Cond(pred, outer)
            cond.branches = {b: Branch(cond, b) for b in (0, 1)}
        return cond


def _kind(op: Operation):
    return op._op_def.kind


def analyse(graph: Graph) -> ControlFlow:
    """The contexts of every op of ``graph`` (see the module docstring)."""
    flow = ControlFlow()
    order = topological_order(graph)
    # Twice: a loop's outer context is the deepest of its Enters' inputs, which the first pass
    # may meet after ops of the loop; the second pass places every op with it known.
    for _ in range(2):
        flow.op_contexts.clear()
        flow.problems.clear()
        flow.cond_of_merge.clear()
        for cond in flow.conds.values():
            cond.merges.clear()
            cond.true_input.clear()
        for op in order:
            flow.op_contexts[op] = _place(flow, op)
    _collect_loop_parts(flow, order)
    return flow


def _inputs_context(flow: ControlFlow, op: Operation, skip_back_edges: bool = False):
    contexts = [
        flow.tensor_context(t)
        for t in op.inputs
        if not (skip_back_edges and _kind(t.op) == NodeKind.NEXT_ITERATION)
    ]
    contexts += [_control_context(flow, c) for c in op.control_inputs]
    return _deepest(contexts)


def _control_context(flow: ControlFlow, op: Operation) -> Optional[Context]:
    if op.outputs:
        return flow.tensor_context(op.outputs[0])
    return flow.op_contexts.get(op)


def _place(flow: ControlFlow, op: Operation) -> Optional[Context]:
    kind = _kind(op)
    if kind == NodeKind.ENTER:
        frame = op.attrs.get("frame_name") or op.name
        loop = flow.loops.get(frame)
        if loop is None:
            loop = flow.loops[frame] = Loop(frame)
        outside = _inputs_context(flow, op)
        if loop.outer is None or (outside is not None and outside.depth > loop.outer.depth):
            if outside is not loop and loop not in _chain(outside):
                loop.outer = outside
        record = op._control_flow_context  # df.while_loop's record, when the graph has one
        limit = getattr(record, "maximum_iterations", None)
        if limit is not None and getattr(record, "frame_name", None) == frame:
            loop.maximum_iterations = limit
        return loop
    if kind == NodeKind.MERGE:
        back_edges = [t for t in op.inputs if _kind(t.op) == NodeKind.NEXT_ITERATION]
        if back_edges:
            entries = [t.op for t in op.inputs if _kind(t.op) == NodeKind.ENTER]
            loop = flow.op_contexts.get(entries[0]) if entries else None
            if not isinstance(loop, Loop) or len(op.inputs) != 2:
                flow.problems[op] = "a loop Merge without its Enter"
                return _inputs_context(flow, op, skip_back_edges=True)
            flow.loop_of_merge[op] = loop
            return loop
        return _place_cond_merge(flow, op)
    if kind == NodeKind.SWITCH:
        if len(op.inputs) == 2 and op.inputs[1].op.type == "LoopCond":
            loop = flow.tensor_context(op.inputs[0])
            if isinstance(loop, Loop):
                flow.loop_of_switch[op] = loop
                loop.loop_cond = op.inputs[1].op
                return loop
        context = _inputs_context(flow, op)
        if len(op.inputs) == 2:
            flow._cond(op.inputs[1], context)
        return context
    if kind == NodeKind.EXIT:
        loop = flow.tensor_context(op.inputs[0]) if op.inputs else None
        if not isinstance(loop, Loop):
            flow.problems[op] = "an Exit outside any loop"
        return loop
    return _inputs_context(flow, op)


def _place_cond_merge(flow: ControlFlow, op: Operation) -> Optional[Context]:
    """A cond's result Merge: in the context holding both inputs' branches."""
    contexts = [flow.tensor_context(t) for t in op.inputs]
    if len(contexts) != 2:
        flow.problems[op] = f"a Merge of {len(contexts)} inputs (a cond's Merge has two)"
        return _deepest(contexts)
    # The branches are the innermost Branch contexts of the two inputs with the same cond.
    for first in _chain(contexts[0]):
        if not isinstance(first, Branch):
            continue
        for second in _chain(contexts[1]):
            if isinstance(second, Branch) and second.cond is first.cond:
                if first.branch != second.branch:
                    cond = first.cond
                    cond.merges.append(op)
                    cond.true_input[op] = 0 if first.branch == 1 else 1
                    flow.cond_of_merge[op] = cond
                    return cond.outer
    flow.problems[op] = "a Merge whose inputs do not come from the two branches of one cond"
    return _deepest(contexts)


def _collect_loop_parts(flow: ControlFlow, order: list[Operation]) -> None:
    """Each loop's variables (Enter, Merge, Switch, NextIteration, Exit), in Merge order."""
    variable_of_merge: dict[Operation, LoopVariable] = {}
    for op in order:
        loop = flow.loop_of_merge.get(op)
        if loop is None:
            continue
        enter = next(t.op for t in op.inputs if _kind(t.op) == NodeKind.ENTER)
        back = next(t.op for t in op.inputs if _kind(t.op) == NodeKind.NEXT_ITERATION)
        variable = LoopVariable(enter=enter, merge=op, next_iteration=back)
        loop.variables.append(variable)
        variable_of_merge[op] = variable
    for switch in flow.loop_of_switch:
        variable = variable_of_merge.get(switch.inputs[0].op)
        if variable is None:
            flow.problems[switch] = "a loop Switch not fed by a loop variable's Merge"
            continue
        variable.switch = switch
        for consumer in switch.outputs[0].consumers():
            if _kind(consumer) == NodeKind.EXIT:
                variable.exit = consumer
    for loop in flow.loops.values():
        for variable in loop.variables:
            if variable.switch is None:
                flow.problems[variable.merge] = "a loop variable's Merge without its Switch"

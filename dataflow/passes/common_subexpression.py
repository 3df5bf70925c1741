"""Common subexpression elimination: ops that compute the same value are merged into one.

Two ops are merged when they have the same OpDef, equal attributes (floats and arrays compared
by their bits), the same data inputs in the same order (after their own inputs were merged), the
same control inputs and the same control-flow context.  Same inputs and controls put them in
the same frame, and the same context in the same branch: an op of a cond branch is never merged
with one of the other branch or of the enclosing graph, nor an op of a loop body with one
outside it.  Only pure ops are merged (`graph_item.is_pure`: not stateful, so never a variable
read or write, ``Print``, ``Assert``, ``py_func``, a random op or a stack push; not reading the
run's state), plus constants of equal dtype and bytes; an op without data inputs that is not a
constant (a ``Placeholder``) is never merged, nor an op that is fetched as an operation.

The first op in topological order is kept, with its name and location; the others are
removed, and a fetched one leaves an ``Identity`` under its name.  Inputs are compared in order
only (``a + b`` and ``b + a`` stay apart: with two NaN operands numpy keeps the first one's
payload, so swapping could change bits).
"""

from __future__ import annotations

from ..framework.graph import Operation
from ..framework.graph_walk import topological_order
from .graph_item import GraphItem, attrs_fingerprint, constant_value, is_pure
from .registry import GraphPass, PassReport, register_pass


class CommonSubexpressionElimination(GraphPass):
    name = "common_subexpression"
    verb = "merged"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        seen: dict[tuple, Operation] = {}
        for op in topological_order(item.graph):
            key = _key(item, op)
            if key is None:
                continue
            kept = seen.get(key)
            if kept is None:
                seen[key] = op
                continue
            item.replace_op(op, kept._outputs, [kept])
            report.count("merged")


def _key(item: GraphItem, op: Operation):
    if not is_pure(op) or item.is_fetched(op):
        return None
    if not op._inputs:
        value = constant_value(op._outputs[0]) if len(op._outputs) == 1 else None
        if value is None:
            return None
    return (
        id(op._op_def),
        tuple((id(t.op), t.value_index) for t in op._inputs),
        tuple(sorted(id(c) for c in op._control_inputs)),
        id(op._control_flow_context),
        attrs_fingerprint(op.attrs),
        tuple(
            (t.dtype, tuple(t.shape.as_list()) if t.shape.ndims is not None else None)
            for t in op._outputs
        ),
    )


register_pass(CommonSubexpressionElimination())

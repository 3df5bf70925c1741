"""Loop-invariant code motion: compute once, before a loop, what is the same in every iteration.

A value from outside a ``while_loop`` enters the loop through a constant ``Enter``, which hands
the same value to every iteration.  An op of the loop whose inputs are all such loop invariants
(or constants of the loop) computes the same thing in every iteration: this pass moves it out.
The op is rebuilt in the enclosing frame on the Enters' sources, and its result enters the loop
through a new constant ``Enter``; ops that used it read that Enter instead.  Chains of such ops
move out together, in topological order.

What is kept exactly:

- The loop helpers gate such an op with the loop's pivot (``docs/control-flow-semantics.md``): a
  constant Enter delivers to every iteration, including the last one whose predicate is false,
  and without the gate the op would run once more than the body.  The op's consumers inside the
  loop take that gate as a control input, so they still run only in iterations that run the
  body (and nothing runs in a zero-trip loop).
- A constant of the loop used by a moved op is rebuilt outside: in the root frame as it is
  (the moved op is live when its entered inputs are), inside an enclosing loop with a control
  input from the producer of an entered input, so it lies in that loop's frame.
- Only ops that cannot fail move, since the moved op runs even when the loop makes zero trips:
  elementwise ufunc ops on floats with fully known static shapes (numpy does not raise there;
  an integer power of a negative exponent would, so integers stay), and on floats with fully
  known static shapes the ops of `ALWAYS_SUCCEED` (a product of matrices, a transpose, a sum or
  mean, whose shapes were checked when the graph was built).  The op must have at least
  one entered input (an op on constants only is constant folding's), only the pivot as control
  input, and belong to a loop built by ``while_loop`` (whose record names the pivot).
"""

from __future__ import annotations

from ..framework import dtypes as _dtypes
from ..framework.graph import Operation, Tensor
from ..framework.graph_walk import topological_order
from .graph_item import GraphItem, constant_value, is_pure
from .registry import GraphPass, PassReport, register_pass

# Non-ufunc ops that cannot fail on float inputs whose static shapes are fully known (so that
# shape inference has already checked them): these may move out of a loop as well.
ALWAYS_SUCCEED = frozenset({"MatMul", "BatchMatMulV2", "Transpose", "Sum", "Mean"})


def _loop_of(op: Operation):
    context = op._control_flow_context
    if context is None or not hasattr(context, "frame_name") or context.pivot is None:
        return None
    return context


def _invariant_source(t: Tensor, loop) -> Tensor | None:
    """The value outside ``loop`` that ``t`` (a constant Enter of the loop) carries."""
    op = t.op
    if (
        op._op_def.kind.name == "ENTER"
        and op.attrs.get("is_constant") is True
        and op.attrs.get("frame_name") == loop.frame_name
        and op._control_flow_context is loop
        and not op._control_inputs
    ):
        return op._inputs[0]
    return None


def _enclosing_loop(context):
    while context is not None and not hasattr(context, "frame_name"):
        context = context.outer_context
    return context


class LoopInvariantMotion(GraphPass):
    name = "loop_invariant_motion"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        for op in topological_order(item.graph):
            if item.graph._ops_by_name.get(op._name) is not op:
                continue
            loop = _loop_of(op)
            if loop is None or not self._movable(item, op, loop):
                continue
            self._hoist(item, op, loop)
            report.count("ops moved out of loops")

    @staticmethod
    def _movable(item: GraphItem, op: Operation, loop) -> bool:
        if not is_pure(op) or item.has_fetched_output(op):
            return False
        if "ufunc" not in op._op_def.extra and op._op_def.type not in ALWAYS_SUCCEED:
            return False
        if len(op._outputs) != 1 or _dtypes.numpy_dtype(op._outputs[0].dtype).kind != "f":
            return False
        gates = {loop.pivot.op}
        if any(c not in gates for c in op._control_inputs):
            return False
        entered = 0
        for t in op._inputs:
            if not t.shape.is_fully_defined():
                return False
            if _invariant_source(t, loop) is not None:
                entered += 1
            elif constant_value(t) is None or any(c not in gates for c in t.op._control_inputs):
                return False
        if entered < len(op._inputs) and _enclosing_loop(loop.outer_context) is not None:
            # A constant rebuilt outside is gated by an entered value's producer, which must
            # be a node that runs (not a fed tensor's op).
            if any(item.is_fed(_invariant_source(t, loop)) for t in op._inputs):
                return False
        return entered > 0 and op._outputs[0].shape.is_fully_defined()

    @staticmethod
    def _hoist(item: GraphItem, op: Operation, loop) -> None:
        anchor = next(
            s.op for s in (_invariant_source(t, loop) for t in op._inputs) if s is not None
        )
        outside = loop.outer_context
        # In the root frame a constant needs no gate (the op is live when its entered inputs
        # are); inside an enclosing loop it takes one from an entered input's producer.
        gates = [anchor] if _enclosing_loop(outside) is not None else []
        inputs = []
        for t in op._inputs:
            source = _invariant_source(t, loop)
            if source is None:
                constant = item.add_const(constant_value(t), f"{t.op.name}/hoisted", t.op, gates)
                constant.op._control_flow_context = outside
                source = constant
            inputs.append(source)
        out = op._outputs[0]
        hoisted = item.add_op(
            op.type,
            inputs,
            dict(op.attrs),
            f"{op.name}/hoisted",
            op,
            context=outside,
            outputs=[(out.dtype, out.shape)],
        )
        enter_like = next(t.op for t in op._inputs if _invariant_source(t, loop) is not None)
        enter = item.add_op(
            "Enter",
            hoisted._outputs,
            dict(enter_like.attrs),
            f"{op.name}/Enter",
            op,
            context=loop,
            outputs=[(out.dtype, out.shape)],
        )
        # The op ran only in iterations that run the body: so will its consumers.
        gate = [loop.pivot.op]
        for consumer in item.consumers(out):
            item.add_control_inputs(consumer, gate)
        item.replace_op(op, enter._outputs, gate)


register_pass(LoopInvariantMotion())

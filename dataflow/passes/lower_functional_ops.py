"""``lower_functional_ops``: replaces each op that calls functions (control flow v2's ``If``)
by its v1 form, before any other pass and before lowering to the executor.

An op takes part when its `OpDef` gives a lowering, ``extra["lowering"](graph, op)``, which
builds the replacement in ``graph`` (the Session's copy) and returns the tensors that stand for
the op's outputs (``dataflow.eager.tracing.cond_v2`` gives ``If`` one).  Ops the replacement holds
may themselves call functions (a cond nested in a branch); they are lowered in the next round, so
none is left when the pass ends.

This is not one of the rewrite options: a Session runs it on every plan whose ops include one,
whatever ``RewriterConfig`` says, unless ``ConfigProto.experimental.executor_type`` is
``"SINGLE_THREADED_EXECUTOR"`` (then the ops run as calls), as TensorFlow's
``LowerFunctionalOpsPass`` does.  The ops a lowering builds take the file:line of the op they
copy (or, for the Switches and Merges around them, of the lowered op), and name it as the
user's op they stand for, so run errors still point at the user's code.
"""

from __future__ import annotations

from .graph_item import GraphItem
from .registry import GraphPass, PassReport, register_pass

LOWER_FUNCTIONAL_OPS = "lower_functional_ops"


class LowerFunctionalOps(GraphPass):
    name = LOWER_FUNCTIONAL_OPS
    verb = "lowered"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        graph = item.graph
        while True:
            calls = [op for op in item.ops() if op._op_def.extra.get("lowering")]
            if not calls:
                return
            for op in calls:
                known = set(graph._ops)
                outputs = op._op_def.extra["lowering"](graph, op)
                user_op = getattr(op, "_original", op)
                for new in graph._ops:
                    if new not in known and not hasattr(new, "_original"):
                        new._original = user_op
                        new.location = op.location
                item.ops_made_outside()
                item.free_name(op)  # a fetched output's Identity takes the op's name
                item.replace_op(op, outputs)
                report.count("lowered")


register_pass(LowerFunctionalOps())

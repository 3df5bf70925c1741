"""Dead code elimination: drop every op that no fetch needs.

An op is kept when a fetch reaches it through data or control inputs, exactly the pruning a
Session does before a run; fed tensors' Placeholders are kept too, so their names resolve.
Stateful ops the fetches depend on are reached, so they are kept; a stateful op that nothing
fetched depends on never ran in the first place (a Session prunes it as well).

Other passes leave the producers of what they replaced behind; this pass clears them away.  The
default pipeline runs it after the rewriting passes and before elementwise fusion and in-place
reuse, which count the consumers of each value (`config.pipeline_for`).
"""

from __future__ import annotations

from ..framework.graph_walk import needed_ops
from .graph_item import GraphItem
from .registry import GraphPass, PassReport, register_pass


class Pruning(GraphPass):
    name = "pruning"
    verb = "pruned"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        keep = set(needed_ops(list(item.fetches) + list(item.feeds), set()))
        dead = [op for op in item.graph._ops if op not in keep]
        if dead:
            item.remove_ops(dead)
            report.count("removed", len(dead))


register_pass(Pruning())

"""The pass manager: named Graph -> Graph passes run in order, each with a report.

A pass is a `GraphPass` subclass with a ``name`` and a ``rewrite(item, report)`` method that
edits a `GraphItem` it owns.  Calling a pass (``pass_(item)``) copies the item first, so a pass
used on its own never changes its input; `PassManager.run` copies the item once and lets each
pass rewrite the result of the one before (the same thing, without a copy per pass).

Contract of every pass (checked on the whole test suite by ``tests/passes/passes_plugin.py``):

- what every fetch returns is unchanged, bit for bit, and so is every error a run raises
  (it may name the op that replaced the failing one; that op carries the same user file:line);
- a stateful op (``OpDef.stateful``: variable reads and writes, ``Print``, ``Assert``,
  ``py_func``, random ops) that the fetches depend on is never dropped, merged or folded;
- the names of fetched and fed tensors still resolve in the new graph;
- an op that waited for another (a control input) still waits for it or for what replaced it
  (`GraphItem.replace_op`): the pushes that save a loop's forward values for its gradient run
  before the backward loop's pops only through such edges;
- the executor's static rules still hold: every op's inputs lie in one frame, and an op without
  data inputs inside a loop or branch keeps a control input from its pivot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ..framework.graph import Graph, Operation, Tensor
from ..framework.graph_walk import gc_paused
from .config import DEFAULT_PIPELINE
from .graph_item import GraphItem
from .registry import (
    PassReport,
    _run_one,
    get_pass,
    run_order,
)


class PassManager:
    """Runs named passes in order: ``PassManager(["pruning", "constant_folding"]).run(item)``.

    The order is the one given, except that ``inplace`` always runs last (`run_order`)."""

    def __init__(self, passes: Sequence):
        self.passes = run_order([get_pass(p) if isinstance(p, str) else p for p in passes])

    def run(self, item: GraphItem, copy: bool = True) -> tuple[GraphItem, list[PassReport]]:
        """The item after every pass, and one report per pass.  ``copy=False`` lets the passes
        rewrite ``item`` itself (the Session does so with the copy it just made)."""
        if copy:
            item = item.copy()
        reports = []
        stood_for = None
        for pass_ in self.passes:
            report, stood_for = _run_one(pass_, item, stood_for)
            reports.append(report)
        return item, reports


def optimize(
    graph: Graph,
    fetches: Sequence,
    feeds: Sequence = (),
    passes: Optional[Sequence] = None,
) -> tuple[GraphItem, list[PassReport]]:
    """Optimizes what ``fetches`` need of ``graph`` with ``passes`` (the default pipeline when
    None).  Fetches and feeds are tensors, ops or their names; ``graph`` is not changed.

    Returns the `GraphItem` (its ``graph``, and ``fetches``/``feeds`` as tensors of that graph,
    with the same names) and the reports.
    """
    fetch_elements = [_element(graph, f) for f in fetches]
    feed_tensors = [_element(graph, f, allow_operation=False) for f in feeds]
    with gc_paused():
        item = GraphItem.from_graph(graph, fetch_elements, feed_tensors)
        return PassManager(DEFAULT_PIPELINE if passes is None else passes).run(item, copy=False)


def _element(graph: Graph, value, allow_operation: bool = True):
    element = graph.as_graph_element(value, allow_operation=allow_operation)
    if not allow_operation and not isinstance(element, Tensor):
        raise TypeError(f"feed {value!r} is not a tensor")
    if not isinstance(element, (Tensor, Operation)):
        raise TypeError(f"{value!r} is not a tensor or op of the graph")
    return element

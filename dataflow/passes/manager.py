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

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from ..graph import Graph, Operation, Tensor, gc_paused, needed_ops
from .graph_item import GraphItem


@dataclass
class PassReport:
    """What one pass did: counts by kind ("removed", "folded", "merged", ...), op counts before
    and after, the time it took, and ``taken_out``: the names of the user's ops whose work no op
    of the rewritten graph stands for any more (fused into a kernel, folded into a constant,
    merged with a duplicate, ...; see `GraphItem` for ``_original``)."""

    name: str
    counts: dict = field(default_factory=dict)
    ops_before: int = 0
    ops_after: int = 0
    seconds: float = 0.0
    taken_out: list = field(default_factory=list)
    verb: str = "rewritten"

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    def __str__(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items()) or "no change"
        return f"{self.name}: {self.ops_before} -> {self.ops_after} ops ({counts})"


class GraphPass:
    """A named graph rewrite.  Subclasses set ``name`` and implement `rewrite`."""

    name = "pass"
    # True for a pass whose decisions hold only if no other pass changes the graph after it
    # (``inplace``: which values are fresh and used once); `run_order` moves it to the end.
    runs_last = False
    # One word for what happened to a user's op this pass takes out of the graph, as run
    # statistics and pictures of a run show it ("fused", "folded", ...).
    verb = "rewritten"

    def rewrite(self, item: GraphItem, report: PassReport) -> None:
        raise NotImplementedError

    def __call__(self, item: GraphItem) -> tuple[GraphItem, PassReport]:
        """Returns a rewritten copy of ``item`` and the report; ``item`` is not changed."""
        item = item.copy()
        report, _ = _run_one(self, item)
        return item, report

    def __repr__(self) -> str:
        return f"<GraphPass {self.name}>"


def _run_one(
    pass_: GraphPass, item: GraphItem, before: Optional[set] = None
) -> tuple[PassReport, set]:
    """Runs one pass on ``item``: its report, and `_stood_for` of the result (the ``before``
    of the next pass, which saves a walk of the graph per pass).  A pass that left the graph
    unchanged (`GraphItem` counts every edit in ``graph._version``) costs no walk and no
    tidying of records."""
    report = PassReport(pass_.name, ops_before=len(item.graph._ops), verb=pass_.verb)
    if before is None:
        before = _stood_for(item)
    version = item.graph._version
    start = time.perf_counter()
    pass_.rewrite(item, report)
    changed = item.graph._version != version
    if changed:
        item.finish()
    report.seconds = time.perf_counter() - start
    report.ops_after = len(item.graph._ops)
    after = _stood_for(item) if changed else before
    report.taken_out = sorted(op.name for op in before - after)
    return report, after


def _stood_for(item: GraphItem) -> set:
    """The user's ops that some op the fetches need stands for.  Needed, not present: a pass
    leaves the producers of what it replaced for pruning to remove, and they count as taken
    out by the pass that made them useless."""
    needed = needed_ops(list(item.fetches) + list(item.feeds), set())
    return {getattr(op, "_original", op) for op in needed}


_PASSES: dict[str, GraphPass] = {}


def register_pass(pass_: GraphPass) -> GraphPass:
    """Makes ``pass_`` available by its name to pipelines and `PassManager`; a name is
    registered once."""
    if pass_.name in _PASSES:
        raise KeyError(f"a pass named {pass_.name!r} is registered twice")
    _PASSES[pass_.name] = pass_
    return pass_


def get_pass(name: str) -> GraphPass:
    """The registered pass named ``name`` (a ValueError listing the names when there is none)."""
    try:
        return _PASSES[name]
    except KeyError:
        raise ValueError(
            f"There is no graph pass named {name!r}; the passes are: {', '.join(sorted(_PASSES))}"
        ) from None


def registered_passes() -> list[str]:
    """The names of the registered passes, sorted."""
    return sorted(_PASSES)


def run_order(passes: Sequence) -> list:
    """``passes`` (names or `GraphPass` objects) in the order they run: the order given, except
    that the passes marked ``runs_last`` (``inplace``) move to the end, keeping their own order.

    ``inplace`` lets a kernel overwrite an input because, in the graph it sees, nothing else
    reads that value; a pass after it could break that (common subexpression elimination merges
    two values into one with two readers), and a kernel would then overwrite a value another op
    or a fetch still needs.  Names that are not registered keep their place.
    """

    def last(p) -> bool:
        pass_ = _PASSES.get(p) if isinstance(p, str) else p
        return bool(getattr(pass_, "runs_last", False))

    return [p for p in passes if not last(p)] + [p for p in passes if last(p)]


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
    from . import DEFAULT_PIPELINE

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

"""The passes by name: `GraphPass` (the base of every pass), `PassReport` (what one pass did),
`register_pass`/`get_pass`/`registered_passes`, and `run_order`.  Each pass module registers its
pass here when it is imported; the pass manager and the pipeline configuration look passes up
here."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from ..framework.graph_walk import needed_ops
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

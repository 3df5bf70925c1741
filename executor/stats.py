"""Per-run statistics: `RunStats`, filled in by ``Plan.run(..., stats=RunStats())``."""

from __future__ import annotations

from typing import NamedTuple


class NodeRecord(NamedTuple):
    """One firing of one node in one (frame instance, iteration).

    ``start``/``end`` are ``time.perf_counter()`` stamps around the kernel (for control-flow
    nodes, around the firing).  ``frame`` describes the frame instance: ``"root"``, or
    ``"<frame_name>[iter <k> of <parent instance>]"`` for the instance started in iteration k
    of its parent, e.g. ``"inner[iter 3 of outer[iter 0 of root]]"``.
    """

    node_index: int
    node_name: str
    start: float
    end: float
    thread: str
    frame: str
    iteration: int


class RunStats:
    """What one run did, collected only when passed to ``Plan.run``.

    ``node_records``: one `NodeRecord` per *live* firing (a kernel that ran, or a control-flow
    node that passed on a live value), in the order the firings finished.  A node that fires
    dead does no work and is not recorded, so an untaken branch leaves no record.
    ``frame_iterations``: for each loop frame name, the number of iterations each of its
    instances ran, in the order the instances completed.  Iterations are counted as the
    executor numbers them: a while loop whose body ran n times has n + 1 iterations (the last
    one evaluates the predicate to false).
    """

    def __init__(self) -> None:
        self.node_records: list[NodeRecord] = []
        self.frame_iterations: dict[str, list[int]] = {}

    def __repr__(self) -> str:
        return (
            f"RunStats({len(self.node_records)} node records, "
            f"frame_iterations={self.frame_iterations})"
        )

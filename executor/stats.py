"""Per-run statistics: `RunStats`, filled in by ``Plan.run(..., stats=RunStats())``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class NodeRecord(NamedTuple):
    """One firing of one node in one (frame instance, iteration).

    ``start``/``end`` are ``time.perf_counter()`` stamps around the kernel (for control-flow
    nodes, around the firing).  ``frame`` describes the frame instance: ``"root"``, or
    ``"<frame_name>[iter <k> of <parent instance>]"`` for the instance started in iteration k
    of its parent, e.g. ``"inner[iter 3 of outer[iter 0 of root]]"``.
    ``outputs``: for a kernel that ran, one `OutputRecord` per output that is an array (taken
    when the kernel returned, so that no value is kept alive by the statistics); empty for
    control-flow nodes, which pass their input on without allocating.
    """

    node_index: int
    node_name: str
    start: float
    end: float
    thread: str
    frame: str
    iteration: int
    outputs: tuple = ()


class OutputRecord(NamedTuple):
    """One array a kernel returned: its output ``slot``, ``dtype`` (the array's own dtype
    object), ``shape``, ``nbytes`` and ``address`` (where its buffer starts, the same for two
    outputs that share a buffer: an op that forwards its input, or a view of it)."""

    slot: int
    dtype: object
    shape: tuple
    nbytes: int
    address: int


def output_records(outputs) -> tuple:
    """The `OutputRecord` of each numpy array among ``outputs``.  Other values (numpy
    scalars, which own no buffer an op could pass on, and anything else) are left out.  Costs
    about a microsecond per array: only a run that collects statistics pays it."""
    records = []
    for slot, value in enumerate(outputs):
        if isinstance(value, np.ndarray):
            records.append(
                OutputRecord(slot, value.dtype, value.shape, value.nbytes, value.ctypes.data)
            )
    return tuple(records)


class RunStats:
    """What one run did, collected only when passed to ``Plan.run``.

    ``node_records``: one `NodeRecord` per *live* firing (a kernel that ran, or a control-flow
    node that passed on a live value), in the order the firings finished.  A node that fires
    dead does no work and is not recorded there, so an untaken branch leaves no record.
    ``dead_records``: with ``record_dead=True``, one `NodeRecord` per *dead* firing (a node that
    received a dead input and passed deadness on, an Exit or NextIteration whose input was
    dead), in the same form; otherwise it stays empty.  A node of an untaken cond branch shows
    up only here; a node inside a loop shows up in both (live in the iterations whose predicate
    held, dead in the last one).  An Exit of a completed instance that delivers its pending
    dead value to the parent (``docs/control-flow-semantics.md``) is a delivery, not a firing,
    and is not recorded.
    ``frame_iterations``: for each loop frame name, the number of iterations each of its
    instances ran, in the order the instances completed.  Iterations are counted as the
    executor numbers them: a while loop whose body ran n times has n + 1 iterations (the last
    one evaluates the predicate to false).
    """

    def __init__(self, record_dead: bool = False) -> None:
        self.record_dead = record_dead
        self.node_records: list[NodeRecord] = []
        self.dead_records: list[NodeRecord] = []
        self.frame_iterations: dict[str, list[int]] = {}

    def __repr__(self) -> str:
        dead = f", {len(self.dead_records)} dead records" if self.record_dead else ""
        return (
            f"RunStats({len(self.node_records)} node records{dead}, "
            f"frame_iterations={self.frame_iterations})"
        )

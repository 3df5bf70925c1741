"""What a run reads of a prepared program: node codes, dispatch tables, markers, and the
per-node and per-frame descriptions (`NodeInfo`, `FrameInfo`).

`plan.prepare` fills these in once per program; `runner` reads them on every run and never
writes them.  This module sits below both, so that neither imports the other's internals
(``plan`` -> ``runner`` -> ``tables``)."""

from __future__ import annotations

from typing import Any, Optional

from .program import Node, NodeKind

# Codes of the dispatch tables (see `FrameInfo.tables`).  FAST_* run in the hot loop; POOLABLE
# is added to a fast code when the node may go to the pool (it goes to `_Run._fire_op`, which
# times it and decides where it runs); SLOW goes to the firing method of its kind.
FAST_UNARY = 0
FAST_BINARY = 1
FAST_NARY = 2
POOLABLE = 10
SLOW = 20

# Which table a run uses: no pool; a pool (while nothing is in flight on it), where the cost
# model (`costs`) keeps the nodes measured cheap on the fast path; every node slow (statistics,
# or while pool work is in flight and the lock must be dropped around kernels); a pool, with
# every node that may go to it timed again (one run in `costs.MEASURE_EVERY`).
INLINE_TABLE = 0
POOL_TABLE = 1
SLOW_TABLE = 2
MEASURE_TABLE = 3


class _Marker:
    """A named sentinel that travels through slots in place of a value."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


# A dead value: marks a path not taken.  It is passed only to the kernel of a node that
# ``fires_on_dead``, and returned only by kernels of nodes with one of the rendezvous flags
# (`Node.fires_on_dead`, ``blocking``, ``wants_frame``, ``asynchronous``).
DEAD = _Marker("DEAD")
# What a fetch sink holds until a value reaches it.
NOT_PRODUCED = _Marker("NOT_PRODUCED")

# Pending count of a fetch sink: large enough never to reach zero.
SINK_PENDING = 1 << 62
# ``merge_position`` of a consumer entry that is not a Merge, and of a fetch sink.
NOT_MERGE = -1
FETCH_SINK = -2


class FrameInfo:
    """A static frame: the root frame or one loop body, with everything its instances share.

    Invariants: ``nodes[local].local == local`` and ``nodes[local].frame is self``;
    ``pending_template`` has one entry per local node plus one per fetch sink (root only);
    ``slot_template`` has one entry per input slot; ``parent`` is None only for the root frame.
    """

    __slots__ = (
        "name",
        "index",
        "parent",
        "nodes",
        "enter_count",
        "parallel_iterations",
        "exits",
        "pending_template",
        "slot_template",
        "sources",
        "tables",
    )

    def __init__(self, name: str, index: int, parent: Optional[FrameInfo]):
        self.name = name
        self.index = index
        self.parent = parent
        self.nodes: list[NodeInfo] = []
        self.enter_count = 0
        self.parallel_iterations = 0
        self.exits: tuple[NodeInfo, ...] = ()
        self.pending_template: list[int] = []
        self.slot_template: list[Any] = []
        # Local numbers of the nodes without inputs, highest first (pushed so the lowest pops
        # first).  Only the root frame has any.
        self.sources: tuple[int, ...] = ()
        # tables[INLINE_TABLE | POOL_TABLE | SLOW_TABLE | MEASURE_TABLE][local]
        #     -> (code, kernel, first, second, consumer, slot); see the module docstring.
        # The POOL_TABLE list is the one thing of a prepared program that changes: the cost
        # model (`costs.KernelCosts.record`) swaps a node's entry when its measured time
        # crosses the threshold.
        self.tables: tuple[list[tuple], ...] = ()

    def __repr__(self) -> str:
        return f"FrameInfo({self.name!r})"


class NodeInfo:
    """What the runner needs of one node, resolved to the frame-local numbers it runs on.

    ``consumers[output]`` is a tuple of ``(consumer_local, slot, merge_position)`` in the frame
    the output is delivered to (``out_frame``): ``merge_position`` is the input position for a
    Merge consumer (whose slot is unused), `NOT_MERGE` for an ordinary one, `FETCH_SINK` for a
    fetch.  ``control_consumers`` is a tuple of ``(consumer_local, is_merge)``.
    Both are ordered highest consumer index first, so that on the LIFO ready stack the consumer
    created first fires first.
    """

    __slots__ = (
        "index",
        "node",
        "name",
        "kind",
        "local",
        "frame",
        "out_frame",
        "kernel",
        "wants_context",
        "inline",
        "num_inputs",
        "num_outputs",
        "slot_base",
        "slot_end",
        "empty_slots",
        "consumers",
        "control_consumers",
        "arg_position",
        "back_positions",
        "forward_count",
        "back_count",
        "value_indices",
        "is_constant",
        "fires_on_dead",
        "blocking",
        "wants_frame",
        "asynchronous",
        "talks",
    )

    def __init__(self, index: int, node: Node, kind: NodeKind):
        self.index = index
        self.node = node
        self.name = node.name
        self.kind = kind
        self.local = -1
        self.frame: Optional[FrameInfo] = None
        self.out_frame: Optional[FrameInfo] = None
        self.kernel = node.kernel
        self.wants_context = bool(node.wants_context)
        self.inline = node.inline
        self.num_inputs = len(node.inputs)
        self.num_outputs = _num_outputs(node, kind)
        self.slot_base = 0
        self.slot_end = 0
        self.empty_slots: tuple = ()
        self.consumers: tuple[tuple[tuple[int, int, int], ...], ...] = ()
        self.control_consumers: tuple[tuple[int, bool], ...] = ()
        self.arg_position = -1
        self.back_positions: frozenset[int] = frozenset()
        self.forward_count = 0
        self.back_count = 0
        self.value_indices: tuple = ()
        self.is_constant = bool(node.is_constant)
        self.fires_on_dead = bool(node.fires_on_dead)
        self.blocking = bool(node.blocking)
        self.wants_frame = bool(node.wants_frame)
        self.asynchronous = bool(node.asynchronous)
        # Any of the four: the node takes the slow path, where they are looked at.
        self.talks = self.fires_on_dead or self.blocking or self.wants_frame or self.asynchronous

    def __repr__(self) -> str:
        return f"NodeInfo({self.index}, {self.name!r}, {self.kind.name})"


def _num_outputs(node: Node, kind: NodeKind) -> int:
    if kind == NodeKind.OP:
        return node.num_outputs
    if kind in (NodeKind.SWITCH, NodeKind.MERGE):
        return 2
    return 1

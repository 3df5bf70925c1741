"""In-process execution of a step placed on several devices: one executor run per partition.

A Session whose run places ops on more than one device (``ConfigProto(device_count={"CPU":
N})`` and ``with df.device("/cpu:1")``) asks `make_plan` for a `PartitionedPlan`: the ops the
fetches need are copied (`GraphItem`, after the Session's graph passes), placed, cut by
`partition.partition`, and each partition is lowered as any graph is (`session.lower_graph`),
with the Session's graph passes, which thus never move work from one device to another.
A run of one device never comes here and pays nothing for it.

`PartitionedPlan.executable.run` has the signature of `executor.Plan.run`, so the Session runs
it as it runs any plan.  It starts the partitions concurrently (the first on the calling
thread, the others on `_partition_threads`), each an ordinary executor run with the inter-op
pool, sharing one `RunContext` (so variable writes of every partition commit together, or not
at all when the step fails) and one `LocalRendezvous`.  The guarantees of a run hold across
partitions:

- an error in one partition aborts the rendezvous: every ``_Recv`` waiting in another wakes and
  fails, every partition ends, and the step raises the first error (naming its op and line);
- a ``_Recv`` waiting past the deadline stops, and the partition's run reports the deadline;
- node indices in errors, statistics and tensor watches are those of `PartitionedPlan.nodes`:
  the ARG nodes of the feeds first, in the order of the feeds, then the other nodes of each
  partition one partition after the other (`_Partition.node_index`), so the Session explains
  them, and watches them (``RunOptions.debug_options``), as for one plan;
- ``run_metadata.loop_iterations`` reports the user's loops: a loop split across devices runs
  one control loop per partition, all with the loop's frame name and iterations; only the
  partition that computes the loop's predicate reports them (`PartitionedPlan.loop_owners`);
- closing the Session aborts the rendezvous of its steps in progress (`_StepsInProgress`, one
  of the Session's resources) with ``CancelledError``: every ``_Recv`` waiting wakes, every
  partition ends at its next receive, and the step raises that error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Optional

import executor

from ..client import session as _session
from ..framework.graph import Operation
from ..framework.graph_walk import needed_ops
from ..passes import GraphItem
from .partition import _Partitioner
from .rendezvous import LocalRendezvous

# The threads that drive partitions other than the first, shared by all Sessions.
_partition_threads = executor.DaemonThreadPool(name="dataflow-partition")


class _Partition:
    """One device's part of a step: its lowered plan, and where its feeds and fetches go."""

    def __init__(self, device: str, plan, feed_positions: list, fetch_targets: list):
        self.device = device
        self.plan = plan
        self.feed_positions = feed_positions  # per partition feed: index into the step's feeds
        self.fetch_targets = fetch_targets  # per partition fetch: index into the step's values
        # Per node of its plan: the node's index in PartitionedPlan.nodes (set by the plan).
        self.node_index: list[int] = []


class PartitionedPlan:
    """What the Session keeps of a step over several devices (the fields of `session._Plan`
    it reads, plus ``partitions`` and ``partition_graphs``)."""

    # Never a compiled twin of another plan (`session._Plan.reference`).
    reference = None

    def __init__(
        self, partitions, fetch_positions, feed_tensors, taken_out, partition_graphs, loop_owners
    ):
        self.partitions: list[_Partition] = partitions
        self.fetch_positions = fetch_positions
        self.feed_tensors = feed_tensors
        self.taken_out = taken_out
        self.partition_graphs = partition_graphs  # device -> Graph
        # Frame name of each loop split across devices -> the device computing its predicate.
        self.loop_owners: dict[str, str] = loop_owners
        self.nodes = self._number_nodes(feed_tensors)
        self.value_count = sum(1 for p in fetch_positions if p is not None)
        self.executable = _PartitionedExecutable(self)

    def _number_nodes(self, feed_tensors) -> list:
        """The step's nodes as the Session sees one plan's: the ARG node of each feed at the
        feed's position (each partition's plan starts with the ARG nodes of its feeds), then
        the partitions' other nodes; sets each partition's ``node_index``."""
        nodes: list = [
            executor.Node(name=t.name, kind=executor.NodeKind.ARG, tag=t.op, inline=True)
            for t in feed_tensors
        ]
        for partition in self.partitions:
            own_feeds = len(partition.feed_positions)
            partition.node_index = list(partition.feed_positions)
            for local, node in enumerate(partition.plan.nodes):
                if local < own_feeds:
                    nodes[partition.feed_positions[local]] = node
                else:
                    partition.node_index.append(len(nodes))
                    nodes.append(node)
        return nodes


def make_plan(
    graph, flat_fetches: list, feed_tensors: tuple, pipeline: tuple, device_of: Callable
) -> Optional[PartitionedPlan]:
    """The partitioned plan of a step, or None when every op it needs lands on one device
    (``device_of(user_op)`` gives an op's full device name)."""
    item = GraphItem.from_graph(graph, flat_fetches, feed_tensors)
    ops = needed_ops(list(item.fetches), ())
    ops = list(dict.fromkeys([t.op for t in item.feeds] + ops))
    placement = {op.name: device_of(getattr(op, "_original", op)) for op in ops}
    if len(set(placement.values())) < 2:
        return None
    partitioner = _Partitioner(item.graph, ops, placement)
    graphs = partitioner.run()
    twins = partitioner.twins
    fetch_positions: list = []
    fetch_of_partition: dict[str, list] = {device: [] for device in graphs}
    for element in item.fetches:
        if isinstance(element, Operation):
            fetch_of_partition[partitioner.device[element]].append((twins[element], None))
            fetch_positions.append(None)
            continue
        position = sum(1 for p in fetch_positions if p is not None)
        fetch_of_partition[partitioner.device[element.op]].append(
            (twins[element.op]._outputs[element.value_index], position)
        )
        fetch_positions.append(position)
    partitions = []
    taken_out: dict = {}
    for device, partition_graph in graphs.items():
        feeds, feed_positions = [], []
        for position, t in enumerate(item.feeds):
            if t.op in twins and partitioner.device[t.op] == device:
                feeds.append(twins[t.op]._outputs[t.value_index])
                feed_positions.append(position)
        fetches = [f for f, _ in fetch_of_partition[device]]
        targets = [p for _, p in fetch_of_partition[device] if p is not None]
        sends = partitioner.sends.get(device, [])
        plan = _session.lower_graph(partition_graph, fetches + sends, tuple(feeds), pipeline)
        taken_out.update(plan.taken_out)
        partitions.append(_Partition(device, plan, feed_positions, targets))
    loop_owners = {}
    for frame, _ in partitioner.control_loops:
        name, _, predicate, _ = partitioner._loop_facts_of(frame)
        loop_owners[name] = partitioner.device[predicate.op]
    return PartitionedPlan(
        partitions, fetch_positions, feed_tensors, taken_out, graphs, loop_owners
    )


class _PartitionedExecutable:
    """Runs a `PartitionedPlan` as `executor.Plan.run` runs one program (see the module
    docstring)."""

    def __init__(self, plan: PartitionedPlan):
        self.plan = plan

    def run(
        self,
        args=(),
        *,
        context: Any = None,
        pool=None,
        deadline: Optional[float] = None,
        stats: Optional[executor.RunStats] = None,
        observer=None,
    ) -> list:
        rendezvous = LocalRendezvous()
        context.rendezvous = rendezvous
        in_progress = context.resource(_StepsInProgress.KEY, _StepsInProgress)
        in_progress.add(rendezvous)
        try:
            return self._run_partitions(args, rendezvous, context, pool, deadline, stats, observer)
        finally:
            in_progress.discard(rendezvous)

    def _run_partitions(self, args, rendezvous, context, pool, deadline, stats, observer):
        partitions = self.plan.partitions
        partition_stats = [
            None if stats is None else executor.RunStats(record_dead=stats.record_dead)
            for _ in partitions
        ]
        observers = [None] * len(partitions)
        if observer is not None:
            serialised = threading.Lock()
            observers = [_PartitionObserver(observer, p.node_index, serialised) for p in partitions]

        def run_partition(k: int) -> list:
            partition = partitions[k]
            try:
                return partition.plan.executable.run(
                    [args[i] for i in partition.feed_positions],
                    context=context,
                    pool=pool,
                    deadline=deadline,
                    stats=partition_stats[k],
                    observer=observers[k],
                )
            except BaseException as error:
                _renumber_nodes(error, partition)
                rendezvous.abort(error)
                raise

        others = [_partition_threads.submit(run_partition, k) for k in range(1, len(partitions))]
        results: list = [None] * len(partitions)
        try:
            results[0] = run_partition(0)
        except BaseException:
            pass
        for k, future in enumerate(others, start=1):
            try:
                results[k] = future.result()
            except BaseException:
                pass
        if stats is not None:
            _merge_stats(stats, partition_stats, partitions, self.plan.loop_owners)
        first_error = rendezvous.aborted_with
        if first_error is not None:
            raise first_error
        values: list = [None] * self.plan.value_count
        for partition, partition_values in zip(partitions, results):
            for target, value in zip(partition.fetch_targets, partition_values):
                values[target] = value
        return values


class _StepsInProgress:
    """The rendezvous of a Session's partitioned steps in progress.

    A Session resource (made by the first partitioned step): the Session calls ``cancel`` when
    it closes, which aborts each of them, and any added later, with ``CancelledError``.
    """

    KEY = "dataflow.distribute.steps_in_progress"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: set[LocalRendezvous] = set()
        self._cancelled = False

    def add(self, rendezvous: LocalRendezvous) -> None:
        with self._lock:
            if not self._cancelled:
                self._steps.add(rendezvous)
                return
        rendezvous.abort(_session._closed_during_run())

    def discard(self, rendezvous: LocalRendezvous) -> None:
        with self._lock:
            self._steps.discard(rendezvous)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            steps, self._steps = self._steps, set()
        for rendezvous in steps:
            rendezvous.abort(_session._closed_during_run())


class _PartitionObserver(executor.RunObserver):
    """The step's observer as one partition's run sees it: node indices of the partition's
    plan become those of `PartitionedPlan.nodes`, and the calls of concurrent partitions are
    serialised (the observer protocol promises that)."""

    def __init__(self, observer: executor.RunObserver, node_index: list, lock: threading.Lock):
        self._observer = observer
        self._node_index = node_index
        self._lock = lock
        wanted = observer.nodes
        if wanted is not None:
            wanted = set(wanted)
            self.nodes = [local for local, index in enumerate(node_index) if index in wanted]

    def node_fired(self, node_index: int, outputs, frame: str, iteration: int) -> None:
        with self._lock:
            self._observer.node_fired(self._node_index[node_index], outputs, frame, iteration)


def _renumber_nodes(error: BaseException, partition: _Partition) -> None:
    """Makes the node indices of an executor error those of `PartitionedPlan.nodes`, and the
    fetch positions of a `FetchNotLiveError` those of the step's values."""
    if getattr(error, "_indices_renumbered", False):
        return
    node_index = partition.node_index
    if isinstance(error, executor.KernelError | executor.RunCancelledError):
        error.node_index = node_index[error.node_index]
    elif isinstance(error, executor.DeadlineExceededError):
        if error.node_index is not None:
            error.node_index = node_index[error.node_index]
        error.running = tuple((node_index[i], f, n) for i, f, n in error.running)
    elif isinstance(error, executor.FetchNotLiveError):
        error.missing = [
            (partition.fetch_targets[p], node_index[i], state) for p, i, state in error.missing
        ]
    elif isinstance(error, executor.InvalidProgramError):
        error.nodes = tuple(node_index[i] for i in error.nodes)
    error._indices_renumbered = True


def _merge_stats(
    stats: executor.RunStats, partition_stats: list, partitions: list, loop_owners: dict
) -> None:
    """The step's statistics from its partitions': node indices renumbered, and a loop split
    across devices counted once, by the partition that computes its predicate."""
    for partition, own in zip(partitions, partition_stats):
        node_index = partition.node_index
        stats.node_records.extend(
            r._replace(node_index=node_index[r.node_index]) for r in own.node_records
        )
        stats.dead_records.extend(
            r._replace(node_index=node_index[r.node_index]) for r in own.dead_records
        )
        for frame, counts in own.frame_iterations.items():
            if loop_owners.get(frame, partition.device) == partition.device:
                stats.frame_iterations.setdefault(frame, []).extend(counts)


_session.register_partitioned_steps(make_plan)

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
- node indices in errors and statistics are those of `PartitionedPlan.nodes`, the partitions'
  nodes one after the other, so the Session explains them as for one plan;
- closing the Session aborts the rendezvous of its steps in progress (`_StepsInProgress`, one
  of the Session's resources) with ``CancelledError``: every ``_Recv`` waiting wakes, every
  partition ends at its next receive, and the step raises that error.

Tensor watches (``RunOptions.debug_options``) see no partitioned step (no observer is passed).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Optional

import executor

from .. import session as _session
from ..graph import Operation, needed_ops
from ..passes import GraphItem
from .partition import _Partitioner
from .rendezvous import LocalRendezvous

# The threads that drive partitions other than the first, shared by all Sessions.
_partition_threads = executor.DaemonThreadPool(name="dataflow-partition")


class _Partition:
    """One device's part of a step: its lowered plan, and where its feeds and fetches go."""

    def __init__(self, device: str, plan, feed_positions: list, fetch_targets: list, offset: int):
        self.device = device
        self.plan = plan
        self.feed_positions = feed_positions  # per partition feed: index into the step's feeds
        self.fetch_targets = fetch_targets  # per partition fetch: index into the step's values
        self.offset = offset  # index of its first node in PartitionedPlan.nodes


class PartitionedPlan:
    """What the Session keeps of a step over several devices (the fields of `session._Plan`
    it reads, plus ``partitions`` and ``partition_graphs``)."""

    def __init__(self, partitions, fetch_positions, feed_tensors, taken_out, partition_graphs):
        self.partitions: list[_Partition] = partitions
        self.fetch_positions = fetch_positions
        self.feed_tensors = feed_tensors
        self.taken_out = taken_out
        self.partition_graphs = partition_graphs  # device -> Graph
        self.nodes = [node for p in partitions for node in p.plan.nodes]
        self.value_count = sum(1 for p in fetch_positions if p is not None)
        self.executable = _PartitionedExecutable(self)


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
    offset = 0
    for device, partition_graph in graphs.items():
        feeds, feed_positions = [], []
        for position, t in enumerate(item.feeds):
            if t.op in twins and partitioner.device[t.op] == device:
                feeds.append(twins[t.op]._outputs[0])
                feed_positions.append(position)
        fetches = [f for f, _ in fetch_of_partition[device]]
        targets = [p for _, p in fetch_of_partition[device] if p is not None]
        sends = partitioner.sends.get(device, [])
        plan = _session.lower_graph(partition_graph, fetches + sends, tuple(feeds), pipeline)
        taken_out.update(plan.taken_out)
        partitions.append(_Partition(device, plan, feed_positions, targets, offset))
        offset += len(plan.nodes)
    return PartitionedPlan(partitions, fetch_positions, feed_tensors, taken_out, graphs)


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
            return self._run_partitions(args, rendezvous, context, pool, deadline, stats)
        finally:
            in_progress.discard(rendezvous)

    def _run_partitions(self, args, rendezvous, context, pool, deadline, stats) -> list:
        partitions = self.plan.partitions
        partition_stats = [
            None if stats is None else executor.RunStats(record_dead=stats.record_dead)
            for _ in partitions
        ]

        def run_partition(k: int) -> list:
            partition = partitions[k]
            try:
                return partition.plan.executable.run(
                    [args[i] for i in partition.feed_positions],
                    context=context,
                    pool=pool,
                    deadline=deadline,
                    stats=partition_stats[k],
                )
            except BaseException as error:
                _shift_node_indices(error, partition.offset)
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
            _merge_stats(stats, partition_stats, partitions)
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


def _shift_node_indices(error: BaseException, offset: int) -> None:
    """Makes the node indices of an executor error those of `PartitionedPlan.nodes`."""
    if not offset or getattr(error, "_indices_shifted", False):
        return
    if isinstance(error, executor.KernelError | executor.RunCancelledError):
        error.node_index += offset
    elif isinstance(error, executor.DeadlineExceededError):
        if error.node_index is not None:
            error.node_index += offset
        error.running = tuple((i + offset, f, n) for i, f, n in error.running)
    elif isinstance(error, executor.FetchNotLiveError):
        error.missing = [(p, i + offset, state) for p, i, state in error.missing]
    elif isinstance(error, executor.InvalidProgramError):
        error.nodes = tuple(i + offset for i in error.nodes)
    error._indices_shifted = True


def _merge_stats(stats: executor.RunStats, partition_stats: list, partitions: list) -> None:
    for partition, own in zip(partitions, partition_stats):
        offset = partition.offset
        stats.node_records.extend(
            r._replace(node_index=r.node_index + offset) for r in own.node_records
        )
        stats.dead_records.extend(
            r._replace(node_index=r.node_index + offset) for r in own.dead_records
        )
        for frame, counts in own.frame_iterations.items():
            stats.frame_iterations.setdefault(frame, []).extend(counts)


_session.register_partitioned_steps(make_plan)

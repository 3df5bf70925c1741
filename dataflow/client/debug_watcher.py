"""The Session's side of watching: `start_watching` turns ``RunOptions.debug_options`` into an
executor `RunObserver` for one run, and `TensorWatcher.finish` leaves a `DebugDump` in the
run's metadata.

A watch names a tensor of the graph; the run's program names nodes.  A watched tensor that is
fed is watched at its ``ARG`` node (the fed value); one the fetches do not need is not in the
program and is reported in ``watch_keys_not_run``.  A run that watches tensors runs no graph
pass unless its ``RunOptions.rewrite_options`` choose some (`Session`), so every other tensor is
there to watch; with passes chosen, a tensor a pass folded or fused away is reported as not run
too.  Tensors are matched to nodes by name.  The program is a cached plan of the Session:
watching adds nothing to it, so the run computes exactly the values it would without the watch.
"""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from executor import RunObserver
from executor.program import NodeKind

from .debug_dump import DebugDump, DebugTensorDatum, summarize
from .debug_options import DEBUG_OPS


class TensorWatcher(RunObserver):
    """Keeps a copy (or summary) of each watched value as the executor reports it.

    ``watched[(node_index, output)]`` lists ``(debug_op, node_name, output_slot)`` for each
    watch on that output.  Values are copied in `node_fired`, before any consumer runs.
    """

    def __init__(self, nodes, watched: dict, watch_keys_not_run: list):
        self._nodes = nodes
        self._watched = watched
        self.nodes = {node_index for node_index, _ in watched}
        self._data: list[DebugTensorDatum] = []
        self._watch_keys_not_run = watch_keys_not_run

    def node_fired(self, node_index: int, outputs, frame: str, iteration: int) -> None:
        watched = self._watched
        for output, value in outputs:
            watches = watched.get((node_index, output))
            if not watches:
                continue
            timestamp = time.time_ns() // 1000
            node = self._nodes[node_index]
            op = node.tag
            for debug_op, node_name, output_slot in watches:
                kept = summarize(value) if debug_op == "DebugNumericSummary" else _copy(value)
                self._data.append(
                    DebugTensorDatum(
                        node_name,
                        output_slot,
                        debug_op,
                        op.type,
                        str(op.location),
                        frame,
                        iteration,
                        timestamp,
                        len(self._data),
                        node.kind == NodeKind.ARG,
                        node_index,
                        kept,
                    )
                )

    def finish(self, run_metadata) -> None:
        """Leaves what was watched in ``run_metadata.debug_dump`` (also after a failed run)."""
        run_metadata.debug_dump = DebugDump(self._data, self._nodes, self._watch_keys_not_run)


def _copy(value: Any) -> Any:
    """A copy of ``value`` that the run cannot change; 0-d arrays become numpy scalars, as
    ``Session.run`` returns them."""
    if isinstance(value, np.ndarray):
        copied = np.array(value, copy=True)
        return copied[()] if copied.ndim == 0 else copied
    return value  # numpy scalars and handles are immutable


def requested_watches(run_options) -> list:
    """The `DebugTensorWatch` list of ``run_options`` (empty when it watches nothing)."""
    debug_options = getattr(run_options, "debug_options", None)
    return getattr(debug_options, "debug_tensor_watch_opts", None) or []


def start_watching(
    run_options, nodes, feed_tensors, graph, run_metadata, location
) -> Optional[TensorWatcher]:
    """The observer for a run with ``run_options``, or None when it watches nothing.

    ``nodes`` is the run's lowered program (ARG nodes first, one per fed tensor, in the order
    of ``feed_tensors``).  Raises ``ValueError`` for a watch that names no tensor of the graph
    (unless it tolerates that), an unknown debug op, or watches without a ``run_metadata`` to
    receive the values.
    """
    watches = requested_watches(run_options)
    if not watches:
        return None
    if run_metadata is None:
        raise ValueError(
            "RunOptions.debug_options watches tensors, but Session.run was given no "
            "run_metadata to receive their values: pass run_metadata=df.RunMetadata() and read "
            f"run_metadata.debug_dump (at {location})."
        )
    # By name, not by object: the program may have been lowered from a rewritten copy of the
    # graph (graph passes), whose surviving ops keep their names.
    node_of_tensor: dict[str, tuple[int, int]] = {}
    for index, tensor in enumerate(feed_tensors):
        node_of_tensor[tensor.name] = (index, 0)
    for index in range(len(feed_tensors), len(nodes)):
        op = nodes[index].tag
        for tensor in op.outputs:
            node_of_tensor.setdefault(tensor.name, (index, tensor.value_index))
    watched: dict[tuple[int, int], list] = {}
    not_run: list[str] = []
    for watch in watches:
        debug_ops = [watch.debug_ops] if isinstance(watch.debug_ops, str) else watch.debug_ops
        for debug_op in debug_ops:
            if debug_op not in DEBUG_OPS:
                raise ValueError(
                    f"Unknown debug op {debug_op!r} in the watch of '{watch.node_name}:"
                    f"{watch.output_slot}'; use one of {', '.join(DEBUG_OPS)} (at {location})."
                )
        keys = [f"{watch.node_name}:{watch.output_slot}:{op}" for op in debug_ops]
        tensor = _watched_tensor(graph, watch, location)
        if tensor is None:
            not_run.extend(keys)
            continue
        target = node_of_tensor.get(tensor.name)
        if target is None:
            not_run.extend(keys)
            continue
        entries = watched.setdefault(target, [])
        for debug_op in debug_ops:
            entry = (debug_op, watch.node_name, int(watch.output_slot))
            if entry not in entries:
                entries.append(entry)
    return TensorWatcher(nodes, watched, not_run)


def _watched_tensor(graph, watch, location):
    """The tensor a watch names; None (or a ValueError) when the graph has none."""
    problem = None
    try:
        op = graph.get_operation_by_name(watch.node_name)
    except (KeyError, ValueError, TypeError):
        problem = f"the graph has no op named {watch.node_name!r}"
    else:
        slot = watch.output_slot
        if isinstance(slot, (int, np.integer)) and 0 <= slot < len(op.outputs):
            return op.outputs[int(slot)]
        problem = f"op {watch.node_name!r} ({op.type}) has {len(op.outputs)} output(s)"
    if watch.tolerate_debug_op_creation_failures:
        return None
    raise ValueError(
        f"RunOptions.debug_options watches '{watch.node_name}:{watch.output_slot}', but "
        f"{problem} (at {location})."
    )

"""``tf.train.ProfilerHook``: every so many steps or seconds, traces a run and writes its
timeline (``timeline-<global step>.json`` in Chrome's Trace Event Format, which
``chrome://tracing`` and Perfetto open) and the run's metadata to the summary writer of
``output_dir``.

The timeline is `dataflow.client.timeline.chrome_trace`'s; with ``show_dataflow`` (the default)
it also has TensorFlow's flow arrows, one from the op that made each input of an op to that op
(the producer's run in the same frame and iteration, else its latest run before the consumer).
``show_memory`` (TensorFlow's allocator snapshots) has no counterpart: this runtime keeps no
allocator statistics, so it must stay False.
"""

from __future__ import annotations

import json
import os

from ..client.session import RunOptions
from ..framework import logging as _logging
from ..framework.graph import get_default_graph
from .hooks import SecondOrStepTimer, _global_step_or_fail, _optional_writer
from .session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["ProfilerHook"]


class ProfilerHook(SessionRunHook):
    """Writes a timeline of a run every ``save_steps`` steps or ``save_secs`` seconds (exactly
    one of the two) into ``output_dir`` (see the module docstring)."""

    def __init__(
        self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True, show_memory=False
    ):
        if show_memory:
            raise ValueError(
                "ProfilerHook(show_memory=True): dataflow's runs keep no allocator statistics "
                "to draw memory snapshots from; pass show_memory=False"
            )
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._file_writer = None
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._next_step = None
        self._global_step_tensor = _global_step_or_fail("ProfilerHook")
        self._graph = get_default_graph()
        if self._file_writer is None and self._output_dir:
            self._file_writer = _optional_writer(self._output_dir)

    def before_run(self, run_context):
        self._request_summary = self._next_step is not None and self._timer.should_trigger_for_step(
            self._next_step
        )
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context, run_values):
        stale_global_step = int(run_values.results["global_step"])
        if self._next_step is None:
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step), run_values.run_metadata)
            if self._file_writer is not None:
                self._file_writer.add_run_metadata(run_values.run_metadata, f"step_{global_step}")
        self._next_step = global_step + 1

    def _save(self, step: int, save_path: str, run_metadata) -> None:
        _logging.info("Saving timeline for %d into '%s'.", step, save_path)
        with open(save_path, "w") as f:
            json.dump(timeline_trace(run_metadata, self._graph, self._show_dataflow), f)


def timeline_trace(run_metadata, graph=None, show_dataflow: bool = True) -> dict:
    """The Trace Event Format object of ``run_metadata``, with flow arrows from each op's
    inputs' producers when ``show_dataflow`` (and a ``graph`` to read the inputs from)."""
    from ..client.timeline import OPS_PID, _thread_ids, chrome_trace

    trace = chrome_trace(run_metadata)
    if not show_dataflow or graph is None:
        return trace
    stats = list(run_metadata.step_stats)
    if not stats:
        return trace
    origin = min(s.start for s in stats)
    threads = _thread_ids(stats)

    def micros(t: float) -> float:
        return round((t - origin) * 1e6, 3)

    runs: dict = {}
    for stat in stats:
        runs.setdefault(stat.node_name, []).append(stat)
    events = trace["traceEvents"]
    flow_id = 0
    for stat in stats:
        try:
            op = graph.get_operation_by_name(stat.node_name)
        except (KeyError, ValueError):
            continue
        for tensor in op.inputs:
            candidates = runs.get(tensor.op.name)
            if not candidates:
                continue
            same = [
                s
                for s in candidates
                if s.frame == stat.frame and s.iteration == stat.iteration and s.end <= stat.start
            ]
            earlier = same or [s for s in candidates if s.end <= stat.start]
            if not earlier:
                continue
            producer = max(earlier, key=lambda s: s.end)
            flow_id += 1
            common = {"name": tensor.name, "cat": "DataFlow", "id": flow_id, "pid": OPS_PID}
            events.append(
                dict(common, ph="s", tid=threads[producer.thread], ts=micros(producer.end))
            )
            events.append(
                dict(common, ph="t", bp="e", tid=threads[stat.thread], ts=micros(stat.start))
            )
    return trace

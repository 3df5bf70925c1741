"""A run as a timeline: `chrome_trace` writes ``RunMetadata`` in the Trace Event Format.

The Trace Event Format (JSON) is what ``chrome://tracing`` and Perfetto (ui.perfetto.dev)
open.  The trace is a JSON object ``{"traceEvents": [...], "displayTimeUnit": "ms",
"otherData": {...}}`` with two processes:

- **ops by thread** (pid 1): one track per executor thread (the calling thread first, then the
  pool's threads), one complete event (``"ph": "X"``) per op execution, named after the op; its
  ``cat`` is the op type and its ``args`` say the type, the frame instance, the iteration and
  the user's line that built the op.
- **loop iterations** (pid 2): for each loop frame instance that ran, a slice for the instance
  and, inside it, one slice per iteration (``"loop iteration 3"``) from the first op of that
  iteration to the last, with the number of ops that ran in it.  Iterations of one instance
  overlap when ``parallel_iterations > 1``; since slices on one track must nest, overlapping
  iterations are spread over extra tracks of that instance (``"loop[iter 0 of root] #2"``).

Times are microseconds from the first op of the run (``ts``) and durations (``dur``); on every
track the slices nest properly (a slice that overlaps its neighbour by a rounding error is
trimmed), which both viewers need.  Mirrors TF1's ``timeline.Timeline(step_stats)
.generate_chrome_trace_format()``, without TF1's dataflow arrows and memory counters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

OPS_PID = 1
LOOPS_PID = 2


class Timeline:
    """TF1's ``tensorflow.python.client.timeline.Timeline``, for ``RunMetadata.step_stats``.

    ``step_stats`` may also be the whole ``RunMetadata``; ``graph`` is accepted for
    compatibility and not needed (each record carries its op's type and location).
    """

    def __init__(self, step_stats: Any, graph: Any = None):
        self._step_stats = step_stats

    def generate_chrome_trace_format(self) -> str:
        """The trace as a JSON string (see the module docstring)."""
        return json.dumps(chrome_trace(self._step_stats))


def chrome_trace(run_metadata_or_step_stats: Any) -> dict:
    """The Trace Event Format object of a run: write it with ``json.dump`` to a ``.json`` file
    and open that in Perfetto or ``chrome://tracing``.

    Accepts a ``RunMetadata`` (filled in by ``Session.run(..., run_metadata=...)``) or its
    ``step_stats`` list.
    """
    if hasattr(run_metadata_or_step_stats, "step_stats"):
        metadata = run_metadata_or_step_stats
        live = list(metadata.step_stats)
        dead = list(getattr(metadata, "dead_step_stats", ()) or ())
        loop_iterations = dict(getattr(metadata, "loop_iterations", {}) or {})
    else:
        metadata = None
        live = list(run_metadata_or_step_stats)
        dead = []
        loop_iterations = {}
    everything = live + dead
    origin = min((s.start for s in everything), default=0.0)

    def micros(t: float) -> float:
        return round((t - origin) * 1e6, 3)

    events: list[dict] = [
        _metadata("process_name", OPS_PID, 0, name="dataflow: ops by thread"),
        _metadata("process_sort_index", OPS_PID, 0, sort_index=0),
    ]
    threads = _thread_ids(live)
    for thread, tid in threads.items():
        events.append(_metadata("thread_name", OPS_PID, tid, name=thread))
        events.append(_metadata("thread_sort_index", OPS_PID, tid, sort_index=tid))
    op_events: dict[int, list[dict]] = {}
    for stat in live:
        tid = threads[stat.thread]
        op_events.setdefault(tid, []).append(
            {
                "name": stat.node_name,
                "cat": stat.op_type,
                "ph": "X",
                "pid": OPS_PID,
                "tid": tid,
                "ts": micros(stat.start),
                "dur": max(0.0, round((stat.end - stat.start) * 1e6, 3)),
                "args": {
                    "op": stat.op_type,
                    "frame": stat.frame,
                    "iteration": stat.iteration,
                    "location": getattr(stat, "location", ""),
                },
            }
        )
    for track in op_events.values():
        events.extend(_nested(track))

    loop_events = _loop_events(everything, live, micros)
    if loop_events:
        events.append(_metadata("process_name", LOOPS_PID, 0, name="dataflow: loop iterations"))
        events.append(_metadata("process_sort_index", LOOPS_PID, 0, sort_index=1))
        events.extend(loop_events)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "producer": "dataflow",
            "loop_iterations": {name: list(counts) for name, counts in loop_iterations.items()},
        },
    }


def _metadata(kind: str, pid: int, tid: int, **args: Any) -> dict:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": args}


def _thread_ids(stats: Sequence[Any]) -> dict[str, int]:
    """Track ids in order of each thread's first op: the thread that called ``run`` (which
    fires the run's first nodes) first, then the pool's threads."""
    names = dict.fromkeys(s.thread for s in sorted(stats, key=lambda s: s.start))
    return {name: position + 1 for position, name in enumerate(names)}


def _loop_events(everything, live, micros) -> list[dict]:
    """The instance and iteration slices of every loop frame instance (see the module doc)."""
    spans: dict[str, dict[int, list[float]]] = {}
    live_counts: dict[tuple[str, int], int] = {}
    # An instance that only passed dead values through (a loop on an untaken branch) did not
    # run: it gets no track.
    ran = {stat.frame for stat in live}
    for stat in everything:
        if stat.frame == "root" or stat.frame not in ran:
            continue
        span = spans.setdefault(stat.frame, {}).setdefault(stat.iteration, [stat.start, stat.end])
        span[0] = min(span[0], stat.start)
        span[1] = max(span[1], stat.end)
    for stat in live:
        key = (stat.frame, stat.iteration)
        live_counts[key] = live_counts.get(key, 0) + 1
    instances = sorted(spans, key=lambda frame: min(s[0] for s in spans[frame].values()))
    events: list[dict] = []
    next_tid = 1
    for frame in instances:
        iterations = spans[frame]
        frame_name = frame.split("[", 1)[0]
        lanes: list[list[dict]] = []
        lane_ends: list[float] = []
        for number in sorted(iterations, key=lambda k: (iterations[k][0], k)):
            start, end = (micros(t) for t in iterations[number])
            event = {
                "name": f"{frame_name} iteration {number}",
                "cat": "loop",
                "ph": "X",
                "pid": LOOPS_PID,
                "ts": start,
                "dur": max(0.0, round(end - start, 3)),
                "args": {
                    "frame": frame,
                    "iteration": number,
                    "ops": live_counts.get((frame, number), 0),
                },
            }
            lane = next((k for k, lane_end in enumerate(lane_ends) if lane_end <= start), None)
            if lane is None:
                lane = len(lanes)
                lanes.append([])
                lane_ends.append(0.0)
            lanes[lane].append(event)
            lane_ends[lane] = end
        first = min(micros(s[0]) for s in iterations.values())
        last = max(micros(s[1]) for s in iterations.values())
        for lane, lane_events in enumerate(lanes):
            tid = next_tid
            next_tid += 1
            title = frame if lane == 0 else f"{frame} #{lane + 1}"
            events.append(_metadata("thread_name", LOOPS_PID, tid, name=title))
            events.append(_metadata("thread_sort_index", LOOPS_PID, tid, sort_index=tid))
            track = list(lane_events)
            if lane == 0:
                track.append(
                    {
                        "name": frame,
                        "cat": "loop",
                        "ph": "X",
                        "pid": LOOPS_PID,
                        "ts": first,
                        "dur": max(0.0, round(last - first, 3)),
                        "args": {"frame": frame, "iterations": len(iterations)},
                    }
                )
            for event in track:
                event["tid"] = tid
            events.extend(_nested(track))
    return events


def _nested(track: list[dict]) -> list[dict]:
    """The complete events of one track, ordered, with any partial overlap (a rounding error
    between neighbours) trimmed so that every pair of slices nests or is disjoint."""
    ordered = sorted(track, key=lambda e: (e["ts"], -e["dur"]))
    open_ends: list[float] = []
    for event in ordered:
        start = event["ts"]
        end = round(start + event["dur"], 3)
        while open_ends and open_ends[-1] <= start:
            open_ends.pop()
        if open_ends and end > open_ends[-1]:
            # Starts inside the open slice but ends after it: trim it to end there.
            end = open_ends[-1]
            event["dur"] = max(0.0, round(end - start, 3))
        open_ends.append(end)
    return ordered

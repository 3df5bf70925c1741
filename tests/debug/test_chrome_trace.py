"""`df.debug.chrome_trace`: RunMetadata as Trace Event Format JSON (chrome://tracing, Perfetto).

The structural checks follow the format's rules that both viewers rely on: a JSON object with
``traceEvents``; complete events (``"ph": "X"``) with numeric ``ts``/``dur`` in microseconds
and integer ``pid``/``tid``; metadata events (``"ph": "M"``) naming every process and thread;
and, on each thread, slices that nest or are disjoint.
"""

import json
from collections import defaultdict

import numpy as np

import dataflow as df
from dataflow.client import timeline
from dataflow.client.session import NodeExecStats


def traced(fetches, feed_dict=None, config=None):
    metadata = df.RunMetadata()
    with df.Session(config=config) as sess:
        sess.run(fetches, feed_dict, run_metadata=metadata)
    return metadata, df.debug.chrome_trace(metadata)


def check_trace_format(trace: dict) -> None:
    """Raises AssertionError where ``trace`` breaks the Trace Event Format's rules."""
    assert set(trace) >= {"traceEvents", "displayTimeUnit"}
    assert trace["displayTimeUnit"] in ("ms", "ns")
    json.loads(json.dumps(trace, allow_nan=False))  # plain JSON: no NaN, no objects
    named_processes, named_threads = set(), set()
    tracks = defaultdict(list)
    for event in trace["traceEvents"]:
        assert isinstance(event["name"], str) and event["ph"] in ("X", "M")
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
        if event["ph"] == "M":
            assert event["name"] in (
                "process_name",
                "process_sort_index",
                "thread_name",
                "thread_sort_index",
            )
            if event["name"] == "process_name":
                named_processes.add(event["pid"])
            if event["name"] == "thread_name":
                named_threads.add((event["pid"], event["tid"]))
            assert isinstance(event["args"], dict) and event["args"]
            continue
        assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0
        assert isinstance(event["dur"], (int, float)) and event["dur"] >= 0
        assert isinstance(event.get("args", {}), dict)
        tracks[(event["pid"], event["tid"])].append(event)
    for (pid, tid), events in tracks.items():
        assert pid in named_processes and (pid, tid) in named_threads
        open_ends = []
        for event in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
            start, end = event["ts"], event["ts"] + event["dur"]
            while open_ends and open_ends[-1] <= start + 1e-6:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + 1e-6, f"misnested slice {event}"
            open_ends.append(end)


def op_events(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == timeline.OPS_PID]


def loop_events(trace):
    return [e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == timeline.LOOPS_PID]


def thread_names(trace, pid):
    return {
        e["tid"]: e["args"]["name"]
        for e in trace["traceEvents"]
        if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid
    }


def test_every_op_execution_is_a_slice_with_its_frame_iteration_and_line(graph):
    x = df.placeholder(df.float32, [], name="x")
    _, out = df.while_loop(
        lambda i, v: i < 3,
        lambda i, v: (i + 1, df.multiply(v, 2.0, name="double")),
        [df.constant(0), x],
        name="loop",
    )
    metadata, trace = traced(out, {x: 1.0})
    check_trace_format(trace)
    events = op_events(trace)
    assert len(events) == len(metadata.step_stats)
    doubles = sorted(
        (e["args"]["frame"], e["args"]["iteration"]) for e in events if e["name"] == "loop/double"
    )
    assert doubles == [("loop[iter 0 of root]", k) for k in range(3)]
    double = next(e for e in events if e["name"] == "loop/double")
    assert double["cat"] == "Mul" and double["args"]["op"] == "Mul"
    assert double["args"]["location"].startswith(__file__ + ":")
    assert min(e["ts"] for e in events) == 0.0
    assert thread_names(trace, timeline.OPS_PID) == {1: "MainThread"}


def test_a_loop_gets_one_slice_per_iteration_inside_its_instance_slice(graph):
    _, out = df.while_loop(
        lambda i, v: i < 4,
        lambda i, v: (i + 1, v + 1.0),
        [df.constant(0), df.constant(0.0)],
        name="loop",
    )
    metadata, trace = traced(out)
    check_trace_format(trace)
    loops = loop_events(trace)
    iterations = sorted(e["args"]["iteration"] for e in loops if "iteration" in e["args"])
    assert iterations == [0, 1, 2, 3, 4]  # four bodies and the final predicate
    instance = next(e for e in loops if e["name"] == "loop[iter 0 of root]")
    assert instance["args"]["iterations"] == 5
    for event in loops:
        assert instance["ts"] <= event["ts"]
        assert event["ts"] + event["dur"] <= instance["ts"] + instance["dur"] + 1e-6
    last = next(e for e in loops if e["args"].get("iteration") == 4)
    assert last["name"] == "loop iteration 4" and last["args"]["ops"] > 0
    assert trace["otherData"]["loop_iterations"] == {"loop": [5]}


def test_nested_loops_get_a_track_per_inner_instance(graph):
    def outer_body(i):
        inner = df.while_loop(lambda j: j < i, lambda j: j + 1, [df.constant(0)], name="inner")
        return i + 1 + 0 * inner

    out = df.while_loop(lambda i: i < 3, outer_body, [df.constant(0)], name="outer")
    _, trace = traced(out)
    check_trace_format(trace)
    names = set(thread_names(trace, timeline.LOOPS_PID).values())
    # The inner instance of the outer loop's last iteration passed only dead values: no track.
    assert names == {"outer[iter 0 of root]"} | {
        f"outer/inner[iter {k} of outer[iter 0 of root]]" for k in range(3)
    }


def test_a_loop_on_an_untaken_branch_gets_no_track(graph):
    pred = df.placeholder(df.bool, [], name="pred")
    looped = df.cond(
        pred,
        lambda: df.while_loop(lambda i: i < 3, lambda i: i + 1, [df.constant(0)], name="maybe"),
        lambda: df.constant(-1),
    )
    metadata, trace = traced(looped, {pred: False})
    check_trace_format(trace)
    assert metadata.dead_step_stats and loop_events(trace) == []


def test_ops_on_pool_threads_get_their_own_tracks(graph):
    x = df.placeholder(df.float64, [100_000], name="x")
    parts = [df.py_func(lambda a, k=k: a * k, [x], df.float64, name=f"part{k}") for k in range(4)]
    total = df.add_n(parts)
    _, trace = traced(
        total, {x: np.ones(100_000)}, config=df.ConfigProto(inter_op_parallelism_threads=2)
    )
    check_trace_format(trace)
    threads = thread_names(trace, timeline.OPS_PID)
    assert threads[1] == "MainThread"
    assert any(name.startswith("dataflow-inter-op") for name in threads.values())
    by_thread = {threads[e["tid"]] for e in op_events(trace) if e["name"].startswith("part")}
    assert len(by_thread) >= 2


def stat(name, start, end, frame="root", iteration=0, thread="MainThread"):
    return NodeExecStats(name, "Add", start, end, thread, frame, iteration, "model.py:1")


def test_overlapping_iterations_are_spread_over_tracks_so_slices_nest():
    # parallel_iterations > 1: iteration 1 starts before iteration 0 ends.
    frame = "loop[iter 0 of root]"
    metadata = df.RunMetadata(
        step_stats=[
            stat("a", 0.000, 0.002, frame, 0),
            stat("b", 0.001, 0.003, frame, 1, thread="pool-1"),
            stat("c", 0.0025, 0.004, frame, 0),
            stat("d", 0.005, 0.006, frame, 2),
        ],
        loop_iterations={"loop": [3]},
    )
    trace = df.debug.chrome_trace(metadata)
    check_trace_format(trace)
    tracks = thread_names(trace, timeline.LOOPS_PID)
    assert sorted(tracks.values()) == [frame, f"{frame} #2"]
    lane_of = {
        e["args"]["iteration"]: tracks[e["tid"]]
        for e in loop_events(trace)
        if "iteration" in e["args"]
    }
    assert lane_of == {0: frame, 1: f"{frame} #2", 2: frame}


def test_slices_that_overlap_by_a_rounding_error_are_trimmed_to_nest():
    metadata = df.RunMetadata(
        step_stats=[stat("first", 0.0, 0.0000105), stat("second", 0.00001, 0.00002)]
    )
    trace = df.debug.chrome_trace(metadata)
    check_trace_format(trace)
    first, second = sorted(op_events(trace), key=lambda e: e["ts"])
    assert first["ts"] + first["dur"] <= second["ts"] or second["ts"] + second["dur"] <= (
        first["ts"] + first["dur"]
    )


def test_tf1_timeline_gives_the_same_trace_as_json_text(graph):
    out = df.constant(2.0) * 3.0
    metadata, trace = traced(out)
    text = df.debug.Timeline(metadata.step_stats).generate_chrome_trace_format()
    parsed = json.loads(text)
    check_trace_format(parsed)
    assert [e["name"] for e in op_events(parsed)] == [e["name"] for e in op_events(trace)]
    assert json.loads(df.debug.Timeline(metadata).generate_chrome_trace_format()) == trace


def test_an_empty_run_metadata_gives_an_empty_but_valid_trace():
    trace = df.debug.chrome_trace(df.RunMetadata())
    check_trace_format(trace)
    assert op_events(trace) == [] and loop_events(trace) == []


def test_the_trace_writes_to_a_file_that_loads_back(graph, tmp_path):
    _, out = df.while_loop(
        lambda i, v: i < 2, lambda i, v: (i + 1, v * 2.0), [df.constant(0), df.constant(1.0)]
    )
    _, trace = traced(out)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(trace))
    check_trace_format(json.loads(path.read_text()))

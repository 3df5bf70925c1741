"""Watching intermediate values without rebuilding the graph (``RunOptions.debug_options``).

Decisions these tests pin down: every value of a watched tensor comes back, labelled with its
frame instance and iteration; values on an untaken branch (or in a loop's last, predicate-only
iteration) are absent; a value is copied the moment it is produced; watching never changes
what runs.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.framework import errors


def watching(*tensor_names, debug_ops="DebugIdentity"):
    options = df.RunOptions()
    for name in tensor_names:
        node, _, slot = name.rpartition(":")
        df.debug.add_debug_tensor_watch(options, node, int(slot), debug_ops=debug_ops)
    return options


def run_watched(fetches, feed_dict=None, *names, config=None, **kw):
    metadata = df.RunMetadata()
    with df.Session(config=config) as sess:
        result = sess.run(fetches, feed_dict, options=watching(*names, **kw), run_metadata=metadata)
    return result, metadata.debug_dump


def doubling_loop(parallel_iterations=10):
    x = df.placeholder(df.float32, [], name="x")
    i0 = df.constant(0, name="i0")
    _, out = df.while_loop(
        lambda i, v: i < 4,
        lambda i, v: (i + 1, df.multiply(v, 2.0, name="double")),
        [i0, x],
        name="loop",
        parallel_iterations=parallel_iterations,
    )
    return x, out


# -- what comes back -------------------------------------------------------------------------------


def test_a_watched_tensor_in_a_loop_gives_every_iteration_with_its_frame(graph):
    x, out = doubling_loop()
    result, dump = run_watched(out, {x: 1.5}, "loop/double:0")
    assert result == 24.0
    assert dump.records("loop/double:0") == [
        ("loop[iter 0 of root]", 0, 3.0),
        ("loop[iter 0 of root]", 1, 6.0),
        ("loop[iter 0 of root]", 2, 12.0),
        ("loop[iter 0 of root]", 3, 24.0),
    ]
    assert dump.get_tensors("loop/double", 0) == [3.0, 6.0, 12.0, 24.0]
    assert all(isinstance(v, np.float32) for v in dump.get_tensors("loop/double", 0))
    datum = dump.watch_key_to_data("loop/double:0:DebugIdentity")[1]
    assert (datum.frame_name, datum.iteration, datum.op_type) == ("loop", 1, "Mul")
    assert datum.location.startswith(__file__ + ":")
    assert datum.tensor_name == "loop/double:0"


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_parallel_iterations_do_not_change_the_records(graph, parallel_iterations):
    x, out = doubling_loop(parallel_iterations)
    _, dump = run_watched(out, {x: 1.0}, "loop/double:0", "loop/Merge_1:0")
    assert [r.value for r in dump.records("loop/double:0")] == [2.0, 4.0, 8.0, 16.0]
    assert [(r.iteration, r.value) for r in dump.records("loop/Merge_1:0")] == [
        (0, 1.0),
        (1, 2.0),
        (2, 4.0),
        (3, 8.0),
        (4, 16.0),
    ]


def test_nested_loop_records_name_the_outer_iteration_they_ran_in(graph):
    def outer_body(i, total):
        _, inner_total = df.while_loop(
            lambda j, t: j < i,
            lambda j, t: (j + 1, df.add(t, j, name="accumulate")),
            [df.constant(0), total],
            name="inner",
        )
        return i + 1, inner_total

    _, result = df.while_loop(
        lambda i, t: i < 3, outer_body, [df.constant(0), df.constant(0)], name="outer"
    )
    value, dump = run_watched(result, None, "outer/inner/accumulate:0")
    assert value == 0 + (0) + (0 + 1)
    records = dump.records("outer/inner/accumulate:0")
    assert [(r.frame, r.iteration) for r in records] == [
        ("outer/inner[iter 1 of outer[iter 0 of root]]", 0),
        ("outer/inner[iter 2 of outer[iter 0 of root]]", 0),
        ("outer/inner[iter 2 of outer[iter 0 of root]]", 1),
    ]


def test_values_on_an_untaken_branch_are_absent(graph):
    x = df.placeholder(df.float32, [], name="x")

    def body(i, v):
        return i + 1, df.cond(
            df.equal(i % 2, 0),
            lambda: df.add(v, 1.0, name="on_even"),
            lambda: df.multiply(v, 3.0, name="on_odd"),
            name="parity",
        )

    _, out = df.while_loop(lambda i, v: i < 5, body, [df.constant(0), x], name="loop")
    result, dump = run_watched(out, {x: 0.0}, "loop/parity/on_even:0", "loop/parity/on_odd:0")
    assert result == ((((0 + 1) * 3) + 1) * 3) + 1
    assert [r.iteration for r in dump.records("loop/parity/on_even:0")] == [0, 2, 4]
    assert [r.iteration for r in dump.records("loop/parity/on_odd:0")] == [1, 3]


def test_a_watched_value_is_a_copy_taken_when_it_was_produced(graph):
    x = df.placeholder(df.float64, [3], name="x")
    doubled = df.multiply(x, 2.0, name="doubled")

    def overwrite(a):  # a consumer that writes into its input's buffer
        a += 100.0
        return a

    result = df.py_func(overwrite, [doubled], df.float64, name="overwrite")
    value, dump = run_watched(result, {x: np.ones(3)}, "doubled:0")
    assert value.tolist() == [102.0] * 3
    assert dump.get_tensors("doubled", 0)[0].tolist() == [2.0] * 3


def test_watching_never_changes_what_runs(graph):
    calls = []

    def count(v):
        calls.append(float(v))
        return v

    x = df.placeholder(df.float32, [], name="x")
    needed = df.py_func(count, [x * 2.0], df.float32, name="needed")
    df.py_func(count, [x * 3.0], df.float32, name="not_needed")
    with df.Session() as sess:
        plain = sess.run(needed, {x: 1.0})
        runs_before = list(calls)
        metadata = df.RunMetadata()
        watched = sess.run(
            needed,
            {x: 1.0},
            options=watching("needed:0", "not_needed:0"),
            run_metadata=metadata,
        )
    assert plain == watched == 2.0
    assert calls == runs_before * 2  # the unneeded py_func never ran
    assert metadata.debug_dump.watch_keys_not_run == ["not_needed:0:DebugIdentity"]
    with pytest.raises(ValueError, match="the run did not compute it"):
        metadata.debug_dump.get_tensors("not_needed", 0)


def test_a_fed_tensor_is_watched_at_its_fed_value(graph):
    x = df.placeholder(df.float32, [], name="x")
    y = df.add(x, 1.0, name="y")
    z = y * 2.0
    _, dump = run_watched(z, {y: 10.0}, "y:0", "x:0")
    (datum,) = dump.watch_key_to_data("y:0:DebugIdentity")
    assert datum.fed and datum.get_tensor() == 10.0 and datum.op_type == "Add"
    assert dump.watch_keys_not_run == ["x:0:DebugIdentity"]  # cut off by the feed of y


def test_numeric_summary_keeps_counts_and_range_not_the_value(graph):
    x = df.placeholder(df.float32, [4], name="x")
    y = df.divide(x, 0.0, name="ratio")
    _, dump = run_watched(y, {x: [1.0, -2.0, 0.0, 3.0]}, "ratio:0", debug_ops="DebugNumericSummary")
    (summary,) = dump.get_tensors("ratio", 0, "DebugNumericSummary")
    assert isinstance(summary, df.debug.TensorSummary)
    assert (summary.nan_count, summary.neg_inf_count, summary.pos_inf_count) == (1, 1, 2)
    assert summary.min is None and summary.shape == (4,) and summary.has_inf_or_nan
    assert "nan×1" in str(summary) and "+inf×2" in str(summary)


def test_the_dump_of_a_failed_run_holds_the_values_before_the_failure(graph):
    def fail_at_three(k):
        if k == 3:
            raise ValueError("three")
        return k

    def body(i):
        checked = df.py_func(fail_at_three, [i], df.int32, name="check")
        checked.set_shape([])
        return df.add(checked, 1, name="next")

    result = df.while_loop(lambda i: i < 10, body, [df.constant(0)], name="loop")
    metadata = df.RunMetadata()
    with df.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError):
            sess.run(result, options=watching("loop/next:0"), run_metadata=metadata)
    assert [(r.iteration, r.value) for r in metadata.debug_dump.records("loop/next:0")] == [
        (0, 1),
        (1, 2),
        (2, 3),
    ]


def test_a_thread_pool_gives_the_same_records(graph):
    x = df.placeholder(df.float64, [50_000], name="x")
    left = df.py_func(lambda a: a + 1.0, [x], df.float64, name="left")
    right = df.py_func(lambda a: a * 2.0, [x], df.float64, name="right")
    total = df.add(left, right, name="total")
    names = ("left:0", "right:0", "total:0")
    feed = {x: np.arange(50_000.0)}
    _, serial = run_watched(
        total, feed, *names, config=df.ConfigProto(inter_op_parallelism_threads=1)
    )
    _, pooled = run_watched(
        total, feed, *names, config=df.ConfigProto(inter_op_parallelism_threads=2)
    )
    for name in names:
        (a,), (b,) = serial.get_tensors(name[:-2], 0), pooled.get_tensors(name[:-2], 0)
        np.testing.assert_array_equal(a, b)


# -- the TF1 ways of asking ------------------------------------------------------------------------


def test_watches_can_be_added_like_the_tf1_proto_field(graph):
    x, out = doubling_loop()
    options = df.RunOptions()
    watch = options.debug_options.debug_tensor_watch_opts.add(
        node_name="loop/double", output_slot=0, debug_ops=["DebugIdentity"]
    )
    assert isinstance(watch, df.DebugTensorWatch)
    assert watch.watch_keys() == ["loop/double:0:DebugIdentity"]
    metadata = df.RunMetadata()
    with df.Session() as sess:
        sess.run(out, {x: 1.0}, options=options, run_metadata=metadata)
    assert len(metadata.debug_dump.watch_key_to_data("loop/double:0:DebugIdentity")) == 4
    assert metadata.debug_dump.nodes() == ["loop/double"]


def test_watch_graph_filters_by_op_name_type_and_dtype(graph):
    x, out = doubling_loop()
    options = df.RunOptions()
    df.debug.watch_graph(
        options, graph, node_name_regex_allowlist=r"loop/", op_type_regex_allowlist="Mul|Less"
    )
    watched = {(w.node_name, w.output_slot) for w in options.debug_options.debug_tensor_watch_opts}
    assert watched == {("loop/double", 0), ("loop/Less", 0)}
    options = df.RunOptions()
    df.debug.watch_graph(options, graph, tensor_dtype_regex_allowlist="int32")
    dtypes = {
        graph.get_tensor_by_name(f"{w.node_name}:{w.output_slot}").dtype
        for w in options.debug_options.debug_tensor_watch_opts
    }
    assert dtypes == {df.int32}
    options = df.RunOptions()
    df.debug.watch_graph(options, graph)
    metadata = df.RunMetadata()
    with df.Session() as sess:
        sess.run(out, {x: 1.0}, options=options, run_metadata=metadata)
    assert metadata.debug_dump.size > 4 * 10  # every tensor of every iteration


def test_a_watch_of_an_unknown_tensor_fails_before_anything_runs(graph):
    calls = []
    x = df.py_func(lambda: calls.append(1) or np.float32(1.0), [], df.float32, name="side")
    with df.Session() as sess:
        for node, slot, problem in (("nope", 0, "no op named 'nope'"), ("side", 3, "has 1 output")):
            options = df.RunOptions()
            df.debug.add_debug_tensor_watch(options, node, slot)
            with pytest.raises(ValueError, match=problem) as info:
                sess.run(x, options=options, run_metadata=df.RunMetadata())
            assert __file__ in str(info.value)
        assert calls == []
        options = df.RunOptions()
        df.debug.add_debug_tensor_watch(options, "nope", tolerate_debug_op_creation_failures=True)
        metadata = df.RunMetadata()
        sess.run(x, options=options, run_metadata=metadata)
        assert metadata.debug_dump.watch_keys_not_run == ["nope:0:DebugIdentity"]


def test_watches_without_run_metadata_or_with_an_unknown_debug_op_are_refused(graph):
    x = df.constant(1.0, name="c")
    with df.Session() as sess:
        with pytest.raises(ValueError, match="no run_metadata"):
            sess.run(x, options=watching("c:0"))
        with pytest.raises(ValueError, match="Unknown debug op"):
            df.debug.add_debug_tensor_watch(df.RunOptions(), "c", 0, debug_ops="DebugPrint")
        options = df.RunOptions()
        options.debug_options.debug_tensor_watch_opts.add(node_name="c", debug_ops=["Nope"])
        with pytest.raises(ValueError, match="Unknown debug op 'Nope'"):
            sess.run(x, options=options, run_metadata=df.RunMetadata())


@pytest.mark.measures_its_runs  # it counts the runs of the executor
def test_a_run_that_watches_nothing_is_not_instrumented(graph, monkeypatch):
    import executor

    seen = []
    original = executor.Plan.run

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("observer"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(executor.Plan, "run", spy)
    x = df.constant(2.0) * 3.0
    with df.Session() as sess:
        sess.run(x, options=df.RunOptions())
        sess.run(x, options=watching(x.name), run_metadata=df.RunMetadata())
    assert seen[0] is None and seen[1] is not None


# -- inputs of a value -----------------------------------------------------------------------------


def test_input_data_finds_what_the_op_consumed_in_its_iteration(graph):
    scale = df.placeholder(df.float32, [], name="scale")
    _, out = df.while_loop(
        lambda i, v: i < 3,
        lambda i, v: (i + 1, df.multiply(v, scale, name="scaled")),
        [df.constant(0), df.constant(1.0)],
        name="loop",
    )
    options = df.RunOptions()
    df.debug.watch_graph(options, graph)
    metadata = df.RunMetadata()
    with df.Session() as sess:
        sess.run(out, {scale: 3.0}, options=options, run_metadata=metadata)
    dump = metadata.debug_dump
    third = dump.watch_key_to_data("loop/scaled:0:DebugIdentity")[2]
    inputs = dump.input_data(third)
    assert [name for name, _ in inputs] == ["loop/Identity_1:0", "loop/Enter_2:0"]
    (_, value_in), (_, invariant) = inputs
    assert (value_in.iteration, value_in.get_tensor()) == (2, 9.0)
    assert (invariant.frame, invariant.get_tensor()) == ("root", 3.0)  # entered once
    merge = dump.watch_key_to_data("loop/Merge_1:0:DebugIdentity")[2]
    (_, from_enter), (_, from_back_edge) = dump.input_data(merge)
    assert from_enter is None and from_back_edge.iteration == 1


@settings(max_examples=15, deadline=None)
@given(
    trips=st.integers(0, 6),
    a=st.floats(-2, 2, allow_nan=False, width=32),
    b=st.floats(-2, 2, allow_nan=False, width=32),
    parallel=st.sampled_from([1, 3]),
)
def test_records_of_a_loop_match_a_python_loop(trips, a, b, parallel):
    with df.Graph().as_default():
        n = df.placeholder(df.int32, [], name="n")
        _, out = df.while_loop(
            lambda i, v: i < n,
            lambda i, v: (i + 1, df.add(v * a, b, name="affine")),
            [df.constant(0), df.constant(1.0)],
            name="loop",
            parallel_iterations=parallel,
        )
        result, dump = run_watched(out, {n: trips}, "loop/affine:0")
    expected, v = [], np.float32(1.0)
    for _ in range(trips):
        v = np.float32(v * np.float32(a)) + np.float32(b)
        expected.append(v)
    records = dump.records("loop/affine:0")
    assert [r.iteration for r in records] == list(range(trips))
    assert [r.value for r in records] == expected
    assert result == (expected[-1] if expected else 1.0)

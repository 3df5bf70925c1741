"""save_graph / load_graph: what comes back is the same program, bit for bit."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from rerun import NONDETERMINISTIC_TYPES, SESSION_STATE_TYPES, reruns_the_suite, run_suites

import dataflow as df
from dataflow.framework.op_registry import registered_op_types
from primitives.contexts import CondContext, WhileContext

HERE = os.path.dirname(os.path.abspath(__file__))


def run_both(original, loaded, fetches, feed_dict=None, setup=None):
    """Runs ``fetches`` (names) on both graphs in fresh sessions and returns both results."""
    results = []
    for graph in (original, loaded):
        with df.Session(graph=graph) as sess:
            if setup:
                sess.run(setup)
            results.append(sess.run(fetches, feed_dict))
    return results


def nested_program():
    x = df.placeholder(df.float32, [None], name="x")
    n = df.placeholder(df.int32, [], name="n")

    def body(i, acc):
        def inner_loop():
            return df.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a * 1.5), [0, acc])[1]

        acc = df.cond(df.equal(i % 2, 0), inner_loop, lambda: acc - x)
        return i + 1, acc

    _, out = df.while_loop(lambda i, a: i < n, body, [df.constant(0), x], name="outer")
    return df.identity(out, name="out")


def test_a_nested_loop_and_cond_program_gives_identical_results(fresh_graph, round_trip):
    nested_program()
    loaded = round_trip(fresh_graph)
    feed = {"x:0": np.array([1.0, -2.0, 3.5], np.float32), "n:0": 7}
    a, b = run_both(fresh_graph, loaded, "out:0", feed)
    assert_bitwise_equal(a, b)


def test_names_types_inputs_attrs_and_locations_are_preserved(fresh_graph, round_trip):
    nested_program()
    loaded = round_trip(fresh_graph)
    before, after = fresh_graph.get_operations(), loaded.get_operations()
    assert [op.name for op in before] == [op.name for op in after]
    for a in before:
        b = loaded.get_operation_by_name(a.name)
        assert b.type == a.type
        assert [t.name for t in b.inputs] == [t.name for t in a.inputs]
        assert [c.name for c in b.control_inputs] == [c.name for c in a.control_inputs]
        assert [(t.dtype, t.shape) for t in b.outputs] == [(t.dtype, t.shape) for t in a.outputs]
        assert str(b.location) == str(a.location) and b.location.function == a.location.function
        assert set(b.attrs) == set(a.attrs)
    assert str(fresh_graph) == str(loaded)


def test_a_loops_merge_back_edge_is_rewired_to_its_next_iteration(fresh_graph, round_trip):
    df.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    loaded = round_trip(fresh_graph)
    merges = [op for op in loaded.get_operations() if op.type == "Merge"]
    assert merges and all(m.inputs[1].op.type == "NextIteration" for m in merges)
    assert all(m in m.inputs[1].consumers() for m in merges)


def test_cond_and_loop_records_come_back_with_the_same_fields(fresh_graph, round_trip):
    nested_program()
    loaded = round_trip(fresh_graph)
    for key in (df.GraphKeys.COND_CONTEXT, df.GraphKeys.WHILE_CONTEXT):
        old, new = fresh_graph.get_collection(key), loaded.get_collection(key)
        assert [repr(c) for c in old] == [repr(c) for c in new]
    for old, new in zip(
        fresh_graph.get_collection(df.GraphKeys.WHILE_CONTEXT),
        loaded.get_collection(df.GraphKeys.WHILE_CONTEXT),
    ):
        assert isinstance(new, WhileContext) and new.frame_name == old.frame_name
        for field in ("loop_enters", "merges", "switches", "exits", "next_iterations"):
            assert [op.name for op in getattr(new, field)] == [
                op.name for op in getattr(old, field)
            ]
        assert new.pivot.name == old.pivot.name and new.loop_cond.name == old.loop_cond.name
    for op in fresh_graph.get_operations():
        old_context = op._control_flow_context
        new_context = loaded.get_operation_by_name(op.name)._control_flow_context
        assert repr(old_context) == repr(new_context)
        if old_context is not None:
            assert type(new_context) is type(old_context)
            assert (new_context.outer_context is None) == (old_context.outer_context is None)
    conds = loaded.get_collection(df.GraphKeys.COND_CONTEXT)
    assert all(isinstance(c, CondContext) and c.pred.graph is loaded for c in conds)


def test_a_loaded_graph_renders_the_same_clusters(fresh_graph, round_trip):
    nested_program()
    loaded = round_trip(fresh_graph)
    assert df.render(loaded, format="dot").source == df.render(fresh_graph, format="dot").source


def test_variables_come_back_as_variables_with_their_initializers(fresh_graph, round_trip):
    w = df.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    step = df.Variable(0, trainable=False, name="step")
    x = df.placeholder(df.float32, [None, 2], name="x")
    y = df.matmul(x, w, name="y")
    df.identity(step.assign_add(1), name="bump")
    df.identity(w.assign_sub(df.ones_like(w)), name="shrink")
    df.global_variables_initializer()
    loaded = round_trip(fresh_graph)
    with loaded.as_default():
        names = [v.name for v in df.global_variables()]
        assert names == ["w:0", "step:0"]
        assert [v.name for v in df.trainable_variables()] == ["w:0"]
        variables = df.global_variables()
        with df.Session() as sess:
            sess.run(df.variables_initializer(variables))
            sess.run(["bump:0", "shrink:0"])
            assert sess.run(variables[1]) == 1
            got = sess.run("y:0", {"x:0": np.ones((1, 2), np.float32)})
    with df.Session(graph=fresh_graph) as sess:
        sess.run("init")
        sess.run(["bump:0", "shrink:0"])
        expected = sess.run(y, {x: np.ones((1, 2), np.float32)})
    assert_bitwise_equal(got, expected)


def test_collections_of_tensors_operations_and_plain_values_survive(fresh_graph, round_trip):
    a = df.constant(1.0, name="a")
    fresh_graph.add_to_collection("losses", a)
    fresh_graph.add_to_collection("train_op", a.op)
    fresh_graph.add_to_collection("notes", "hello")
    fresh_graph.add_to_collection("notes", (1, 2.5, None))
    loaded = round_trip(fresh_graph)
    assert loaded.get_collection("losses") == [loaded.get_tensor_by_name("a:0")]
    assert loaded.get_collection("train_op") == [loaded.get_operation_by_name("a")]
    assert loaded.get_collection("notes") == ["hello", (1, 2.5, None)]


def test_a_collected_update_result_is_saved_as_the_value_it_stands_for(fresh_graph, round_trip):
    v = df.Variable(1.0, name="v")
    incremented = v.assign_add(2.0, name="bump")  # TF1's unread variable, not a variable
    fresh_graph.add_to_collection("results", incremented)
    loaded = round_trip(fresh_graph)
    assert [x.name for x in loaded.get_collection(df.GraphKeys.GLOBAL_VARIABLES)] == ["v:0"]
    (result,) = loaded.get_collection("results")
    assert result is loaded.get_tensor_by_name("bump:0")
    with df.Session(graph=loaded) as sess:
        sess.run(df.variables_initializer(loaded.get_collection(df.GraphKeys.GLOBAL_VARIABLES)))
        assert sess.run(result) == 3.0


def test_what_a_file_cannot_hold_in_a_standard_collection_is_left_out_with_a_warning(
    fresh_graph, round_trip
):
    v = df.Variable(1.0, name="v")
    fresh_graph.add_to_collection(df.GraphKeys.GLOBAL_VARIABLES, v.initial_value)
    with pytest.warns(UserWarning, match="'variables' holds only variables; it is left out"):
        loaded = round_trip(fresh_graph)
    assert [v.name for v in loaded.get_collection(df.GraphKeys.GLOBAL_VARIABLES)] == ["v:0"]


def test_constants_of_every_dtype_and_special_floats_are_exact(fresh_graph, round_trip):
    values = [
        np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], np.float32),
        np.array([np.nan, 5e-324], np.float64),
        np.array([1.5, np.inf], np.float16),
        np.array([[True, False]]),
        np.array(-(2**63), np.int64),
        np.array([-128, 127], np.int8),
        np.array([255], np.uint8),
        np.array([-1], np.int16),
        np.array(7, np.int32),
        np.zeros((0, 3), np.float32),
    ]
    names = [df.constant(v, name=f"c{i}").name for i, v in enumerate(values)]
    loaded = round_trip(fresh_graph)
    a, b = run_both(fresh_graph, loaded, names)
    for x, y in zip(a, b):
        assert_bitwise_equal(x, y)


def test_refined_static_shapes_are_kept(fresh_graph, round_trip):
    x = df.placeholder(df.float32, None, name="x")
    y = df.identity(x, name="y")
    y.set_shape([2, None])
    loaded = round_trip(fresh_graph)
    assert loaded.get_tensor_by_name("y:0").shape.as_list() == [2, None]


def test_new_ops_in_a_loaded_graph_get_fresh_names_and_frames(fresh_graph, round_trip):
    df.while_loop(lambda i: i < 3, lambda i: i + 1, [0])
    df.Variable(1.0, name="v")
    loaded = round_trip(fresh_graph)
    with loaded.as_default():
        out = df.while_loop(lambda i: i < 4, lambda i: i + 2, [0])
        v2 = df.Variable(2.0, name="v")
        frames = [c.frame_name for c in loaded.get_collection(df.GraphKeys.WHILE_CONTEXT)]
        assert len(set(frames)) == 2
        assert v2.name == "v_1:0"
        with df.Session() as sess:
            assert sess.run(out) == 4


def test_less_common_ops_round_trip(fresh_graph, round_trip):
    x = df.placeholder(df.float32, None, name="x")
    d = df.placeholder_with_default(np.float32([1, 2]), [None], name="d")
    df.identity(df.ones_like(x) + d, name="o")
    df.nn.dropout(x, rate=0.5, seed=3, name="drop")
    df.print("value", {"x": x}, [x, 1], output_stream=sys.stdout, name="pr")
    loaded = round_trip(fresh_graph)
    feed = {"x:0": np.arange(6, dtype=np.float32).reshape(3, 2)}
    a, b = run_both(fresh_graph, loaded, ["o:0", "drop:0"], feed)
    for x_, y_ in zip(a, b):
        assert_bitwise_equal(x_, y_)
    old, new = fresh_graph.get_operation_by_name("pr"), loaded.get_operation_by_name("pr")
    assert repr(new.attrs) == repr(old.attrs)


def test_bitwise_nextafter_and_cumulative_logsumexp_ops_round_trip(fresh_graph, round_trip):
    i = df.constant(np.int32([12, -7, 3]), name="i")
    j = df.constant(np.int32([10, 3, 9]), name="j")
    df.stack(
        [
            df.bitwise.bitwise_and(i, j),
            df.bitwise.bitwise_or(i, j),
            df.bitwise.bitwise_xor(i, j),
            df.bitwise.invert(i),
            df.bitwise.left_shift(i, j),
            df.bitwise.right_shift(i, j),
        ],
        name="bits",
    )
    f = df.constant(np.float32([[0.0, 1000.0, -1.0]]), name="f")
    df.math.nextafter(f, df.zeros_like(f), name="next")
    df.math.cumulative_logsumexp(f, 1, exclusive=True, reverse=True, name="cls")
    loaded = round_trip(fresh_graph)
    for x_, y_ in zip(*run_both(fresh_graph, loaded, ["bits:0", "next:0", "cls:0"], {})):
        assert_bitwise_equal(x_, y_)


def test_gradient_ops_round_trip(fresh_graph, round_trip):
    x = df.placeholder(df.float32, [1, 4, 4, 1], name="x")
    u = df.placeholder(df.float32, None, name="u")
    w = df.constant(np.linspace(-1, 1, 4, dtype=np.float32).reshape(2, 2, 1, 1))
    y = df.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    loss = (
        df.reduce_sum(df.nn.max_pool(y, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))
        + df.reduce_sum(df.nn.avg_pool(y, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))
        + df.reduce_sum(df.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT"))
        + df.reduce_sum(x[:, 1:3] * 2.0)
        + df.reduce_sum(x * u)
    )
    grads = df.gradients(loss, [x, w, u])
    names = [g.name for g in grads]
    loaded = round_trip(fresh_graph)
    feed = {
        "x:0": np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1),
        "u:0": np.float32([[1.0], [2.0], [3.0], [4.0]]),
    }
    a, b = run_both(fresh_graph, loaded, names, feed)
    for x_, y_ in zip(a, b):
        assert_bitwise_equal(x_, y_)


def test_second_order_max_pool_gradient_ops_round_trip(fresh_graph, round_trip):
    x = df.placeholder(df.float64, [1, 3, 4, 1], name="x")
    (g,) = df.gradients(df.reduce_sum(df.square(df.nn.max_pool(x, 2, 1, "SAME")) * x), x)
    (h,) = df.gradients(df.reduce_sum(df.square(g)), x)
    (k,) = df.gradients(df.reduce_sum(df.square(h)), x)
    loaded = round_trip(fresh_graph)
    feed = {"x:0": (np.arange(12.0)[::-1] * 0.37).reshape(1, 3, 4, 1)}
    a, b = run_both(fresh_graph, loaded, [h.name, k.name], feed)
    for x_, y_ in zip(a, b):
        assert_bitwise_equal(x_, y_)
    assert {"MaxPoolGradGrad", "MaxPoolGrad"} <= {op.type for op in loaded.get_operations()}


def _loop_gradient_program():
    x = df.placeholder(df.float64, [2], name="x")
    w = df.placeholder(df.float64, [2], name="w")

    def body(i, a):
        def inner():
            return df.while_loop(lambda j, b: j < i, lambda j, b: (j + 1, df.tanh(b) * w), [0, a])[
                1
            ]

        return i + 1, df.cond(df.reduce_sum(a) > 0.0, inner, lambda: a * w)

    return df.identity(df.while_loop(lambda i, a: i < 4, body, [0, x], name="outer")[1], name="y")


LOOP_FEED = {"x:0": np.array([0.3, 0.4]), "w:0": np.array([0.9, -1.1])}


def test_loop_gradients_with_their_stacks_round_trip(fresh_graph, round_trip):
    y = _loop_gradient_program()
    xs = [fresh_graph.get_tensor_by_name(n) for n in ("x:0", "w:0")]
    names = [g.name for g in df.gradients(df.reduce_sum(y), xs)]
    loaded = round_trip(fresh_graph)
    a, b = run_both(fresh_graph, loaded, names, LOOP_FEED)
    for x_, y_ in zip(a, b):
        assert_bitwise_equal(x_, y_)


def test_gradients_through_a_loop_of_a_loaded_graph(fresh_graph, round_trip):
    _loop_gradient_program()
    loaded = round_trip(fresh_graph)
    results = []
    for graph in (fresh_graph, loaded):
        with graph.as_default():
            y = graph.get_tensor_by_name("y:0")
            xs = [graph.get_tensor_by_name(n) for n in ("x:0", "w:0")]
            grads = df.gradients(df.reduce_sum(y), xs)
        with df.Session(graph=graph) as sess:
            results.append(sess.run(grads, LOOP_FEED))
    for x_, y_ in zip(*results):
        assert_bitwise_equal(x_, y_)


# Op types exercised by the tests above rather than by the shadow runs of the op suites.
COVERED_HERE = {
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "CumulativeLogsumexp",
    "Invert",
    "LeftShift",
    "NextAfter",
    "RightShift",
    "FusedElementwise",  # made by graph passes only: tests/passes/test_optimize_cli.py
    "ToLayout",  # made by the layout pass only: tests/passes/test_layout.py
    "OnesLike",
    "PlaceholderWithDefault",
    "Dropout",
    "PrintV2",
    "AssignSub",
    "AvgPoolGrad",
    "Conv2DBackpropFilter",
    "Conv2DBackpropInput",
    "MaxPoolGrad",
    "MaxPoolGradGrad",
    "MirrorPadGrad",
    "StridedSliceGrad",
    "SumToShape",
}
# Queues and dataset iterators hold state in the Session, so the op suites' rerun on a loaded
# copy cannot repeat their runs: tests/data, tests/training and tests/ops/test_reader_ops.py
# round-trip each of these op types.
COVERED_HERE |= {"CountUpTo"} | SESSION_STATE_TYPES | NONDETERMINISTIC_TYPES
# A loop over a dataset in a converted function makes an AnonymousIterator:
# tests/eager/autograph/test_dataset_loops.py round-trips one.
COVERED_HERE |= {"AnonymousIterator"}
# The two ends of a partitioned edge live only in partition graphs, which
# tests/distribute/test_partitioned_runs.py saves and loads.
COVERED_HERE |= {"_Send", "_Recv"}
# If and PartitionedCall (a Defun's call): control flow v2's branches and a Defun's body are
# functions, which the format does not store yet (tests/tracing/test_defun_call_op.py pins the
# refusal of a call).  ReduceDataset always holds its function, which is Python
# (tests/data/test_eager_datasets.py pins the refusal), and so do py_function's ops.
NEVER_SAVED = {
    "PyFunc",
    "PyFuncStateless",
    "EagerPyFunc",
    "EagerPyFuncGrad",
    "If",
    "PartitionedCall",
    "ReduceDataset",
}


# Tests that run the same few ops hundreds of times to check a distribution: a round trip of
# each run adds nothing the other tests of those ops do not check (they cover the same op
# types), and these alone took half of the rerun's time.
STATISTICAL_REPEATS = (
    "tf1_surface/test_added_data_experimental.py::"
    "test_rejection_resample_does_even_out_the_classes_as_tensorflow",
    "tf1_surface/test_added_random.py::test_index_shuffle_is_a_permutation_for_any_size",
)


@reruns_the_suite
def test_every_op_of_the_library_round_trips_in_the_op_and_control_flow_suites(tmp_path):
    """Reruns the op, control-flow and session suites with every Session.run repeated on a
    saved-and-loaded copy of its graph (see roundtrip_plugin.py); results must match bit for
    bit, and together with the tests above every registered op type must have been covered."""
    reports = run_suites(
        os.path.join(HERE, "roundtrip_plugin.py"),
        # Two processes of about equal length, one per core.
        [["ops", "client/test_session.py"], ["primitives", "tf1_surface"]],
        "DATAFLOW_ROUNDTRIP_REPORT",
        tmp_path,
        timeout=300,
        deselect=STATISTICAL_REPEATS,
    )
    covered = {op_type for report in reports for op_type in report.split()}
    missing = set(registered_op_types()) - covered - COVERED_HERE - NEVER_SAVED
    assert not missing, f"op types never round-tripped: {sorted(missing)}"


@pytest.mark.parametrize("make", ["py_func", "numpy_function", "py_function"])
def test_a_graph_with_a_python_function_cannot_be_saved_and_says_so(tmp_path, make):
    x = df.constant([1.0, 2.0])
    getattr(df, make)(lambda v: v * 2, [x], df.float32)
    with pytest.raises(df.io.GraphNotSerializableError, match="py_func"):
        df.io.save_graph(df.get_default_graph(), tmp_path / "g.dfg")
    assert not (tmp_path / "g.dfg").exists()
    assert os.listdir(tmp_path) == []


def test_printing_to_a_python_file_object_cannot_be_saved(tmp_path):
    import io

    df.print("hi", output_stream=io.StringIO())
    with pytest.raises(df.io.GraphNotSerializableError, match="file object"):
        df.io.save_graph(df.get_default_graph(), tmp_path / "g.dfg")


def test_graph_bytes_round_trip_gives_the_same_program_without_a_file(fresh_graph):
    """`graph_to_bytes` / `graph_from_bytes` carry a graph to another process as the file does."""
    nested_program()
    loaded = df.io.graph_from_bytes(df.io.graph_to_bytes(fresh_graph))
    assert [op.name for op in loaded.get_operations()] == [
        op.name for op in fresh_graph.get_operations()
    ]
    feed = {"x:0": np.array([1.0, 2.0], np.float32), "n:0": 5}
    original, again = run_both(fresh_graph, loaded, "out:0", feed)
    assert_bitwise_equal(original, again)


def test_damaged_graph_bytes_are_refused_as_graph_format_errors():
    with pytest.raises(df.io.GraphFormatError, match="graph bytes: not a dataflow graph file"):
        df.io.graph_from_bytes(b"not a zip archive")

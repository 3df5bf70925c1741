"""Loop-invariant code motion: work that is the same in every iteration runs once."""

import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from passes_testing import run_both

import dataflow as df
from dataflow.passes import optimize

MOTION = ["loop_invariant_motion", "pruning"]


def loop_with_invariant_work():
    x = df.placeholder(df.float64, [4], name="x")
    n = df.placeholder(df.int32, [], name="n")
    _, total = df.while_loop(
        lambda i, t: i < n,
        lambda i, t: (i + 1, t + df.tanh(x * 3.0)),
        [0, df.zeros([4], df.float64)],
    )
    return x, n, total


def test_an_op_on_loop_invariants_moves_out_of_the_loop(fresh_graph):
    x, n, total = loop_with_invariant_work()
    item, reports = optimize(fresh_graph, [total], [x, n], MOTION)
    assert reports[0].counts["ops moved out of loops"] == 2  # the Mul, then the Tanh
    moved = [op for op in item.graph.get_operations() if op.type in ("Mul", "Tanh")]
    assert all(op._control_flow_context is None for op in moved)
    value = np.array([0.5, -1.0, 2.0, 0.0])
    for trips in (0, 1, 5):
        before, after = run_both(total, {x: value, n: trips}, MOTION)
        assert_bitwise_equal(before, after)


def test_moved_ops_run_once_per_run(fresh_graph):
    x, n, total = loop_with_invariant_work()
    metadata = df.RunMetadata()
    with df.Session() as sess:
        sess.run(total, {x: np.ones(4), n: 6}, run_metadata=metadata)
    tanh = [s for s in metadata.step_stats if s.node_name == "while/Tanh/hoisted"]
    assert len(tanh) == 1 and tanh[0].frame == "root"


def test_a_body_returning_an_invariant_value_still_stops(fresh_graph):
    x = df.placeholder(df.float64, [], name="x")
    n = df.placeholder(df.int32, [])
    _, last = df.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, x * 2.0), [0, x])
    for trips in (0, 1, 4):
        before, after = run_both(last, {x: 1.25, n: trips}, MOTION)
        assert_bitwise_equal(before, after)


def test_a_nested_loop_moves_work_to_the_outer_loop_only_as_far_as_it_can(fresh_graph):
    x = df.placeholder(df.float64, [], name="x")

    def outer_body(i, acc):
        _, inner = df.while_loop(lambda j, a: j < 3, lambda j, a: (j + 1, a + x * 2.0), [0, acc])
        return i + 1, inner + df.cast(i, df.float64) * 0.5

    _, total = df.while_loop(lambda i, a: i < 4, outer_body, [0, df.constant(0.0, df.float64)])
    before, after = run_both(total, {x: 1.5}, MOTION)
    assert_bitwise_equal(before, after)
    before, after = run_both(total, {x: 1.5})
    assert_bitwise_equal(before, after)


def test_integer_ops_that_may_fail_stay_in_a_zero_trip_loop(fresh_graph):
    k = df.placeholder(df.int32, [])
    _, out = df.while_loop(lambda i, v: i < 0, lambda i, v: (i + 1, df.pow(k, -1)), [0, 1])
    item, reports = optimize(fresh_graph, [out], [k], MOTION)
    assert not reports[0].counts
    before, after = run_both(out, {k: 2}, MOTION)
    assert before == after == 1


@pytest.mark.parametrize("parallel", [1, 10])
def test_results_do_not_depend_on_parallel_iterations(fresh_graph, parallel):
    x = df.placeholder(df.float64, [3])
    _, total = df.while_loop(
        lambda i, t: i < 7,
        lambda i, t: (i + 1, t * 0.5 + df.exp(x)),
        [0, df.zeros([3], df.float64)],
        parallel_iterations=parallel,
    )
    before, after = run_both(total, {x: np.array([0.1, 0.2, 0.3])})
    assert_bitwise_equal(before, after)


def test_products_transposes_and_reductions_of_invariants_move_out_too(fresh_graph):
    w = df.placeholder(df.float64, [3, 3], name="w")
    x = df.placeholder(df.float64, [3, 1], name="x")
    n = df.placeholder(df.int32, [], name="n")

    def body(i, acc):
        projected = df.matmul(df.transpose(w), x)  # the same in every iteration
        return i + 1, acc + projected * df.reduce_mean(w) + df.reduce_sum(x)

    _, total = df.while_loop(lambda i, a: i < n, body, [0, df.zeros([3, 1], df.float64)])
    item, reports = optimize(fresh_graph, [total], [w, x, n], MOTION)
    hoisted = {op.type for op in item.graph.get_operations() if op.name.endswith("/hoisted")}
    assert {"MatMul", "Transpose", "Mean", "Sum"} <= hoisted
    feed = {w: np.arange(9.0).reshape(3, 3), x: np.array([[1.0], [-2.0], [0.5]])}
    for trips in (0, 1, 4):
        before, after = run_both(total, {**feed, n: trips}, MOTION)
        assert_bitwise_equal(before, after)

"""Constant folding: constant subgraphs become constants; conds on constants collapse."""

import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from passes_testing import op_types, run_both, session

import dataflow as df
from dataflow.passes import constant_folding, optimize


def test_a_fully_constant_subgraph_becomes_one_constant_with_the_fetched_name(fresh_graph):
    a = df.constant([1.5, -2.0, 3.25], name="a")
    b = df.constant(4.0, name="b")
    y = df.tanh(a * b + df.exp(a), name="y")
    item, reports = optimize(fresh_graph, [y])
    assert op_types(item.graph) == ["Const"]
    assert item.graph.get_tensor_by_name("y:0") is item.fetches[0]
    assert item.fetches[0].op.location is y.op.location  # the user's line, for errors
    assert item.fetches[0].op._original is y.op
    assert reports[0].counts["folded"] == 4
    before, after = run_both(y)
    assert_bitwise_equal(before, after)


def test_folding_keeps_the_inputs_that_are_not_constant(fresh_graph):
    x = df.placeholder(df.float32, [2], name="x")
    y = x * (df.constant(2.0) * df.constant(3.0))
    item, _ = optimize(fresh_graph, [y], [x], ["constant_folding", "pruning"])
    assert sorted(op_types(item.graph)) == ["Const", "Mul", "Placeholder"]
    before, after = run_both(y, {x: [1.0, 2.0]}, ["constant_folding"])
    assert_bitwise_equal(before, after)


def test_a_folded_constant_in_a_branch_keeps_its_pivot_gate(fresh_graph):
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])
    y = df.cond(p, lambda: df.constant(2.0) * df.constant(3.0), lambda: x)
    item, _ = optimize(fresh_graph, [y], [p, x], ["constant_folding"])
    folded = [op for op in item.graph.get_operations() if op.name.endswith("mul")]
    assert folded and folded[0].type == "Const"
    assert [c.name for c in folded[0].control_inputs] == ["cond/switch_t"]
    for value in (True, False):
        before, after = run_both(y, {p: value, x: 7.0}, ["constant_folding"])
        assert_bitwise_equal(before, after)


def test_a_folded_constant_in_a_loop_stays_in_the_loop_frame(fresh_graph):
    n = df.placeholder(df.int32, [])
    _, total = df.while_loop(
        lambda i, t: i < n, lambda i, t: (i + 1, t + df.constant(0.5) * df.constant(4.0)), [0, 0.0]
    )
    for trips in (0, 3):
        before, after = run_both(total, {n: trips}, ["constant_folding"])
        assert_bitwise_equal(before, after)


def test_a_cond_on_a_constant_predicate_collapses_to_the_taken_branch(fresh_graph):
    x = df.placeholder(df.float32, [3], name="x")
    y = df.cond(df.constant(True), lambda: x * 2.0, lambda: x - 1.0, name="pick")
    item, reports = optimize(fresh_graph, [y], [x])
    types = op_types(item.graph)
    assert "Switch" not in types and "Merge" not in types and "Sub" not in types
    assert reports[0].counts["switches with a constant predicate removed"] >= 2
    before, after = run_both(y, {x: np.array([1.0, -2.0, 3.0], np.float32)})
    assert_bitwise_equal(before, after)


def test_a_predicate_folded_from_constants_collapses_nested_conds(fresh_graph):
    x = df.placeholder(df.float64, [], name="x")

    def outer():
        inner_pred = df.constant(2) > df.constant(3)
        return df.cond(inner_pred, lambda: x + 1.0, lambda: x * 3.0)

    y = df.cond(x > 0.0, outer, lambda: -x)
    for value in (2.0, -2.0):
        before, after = run_both(y, {x: value}, ["constant_folding"])
        assert_bitwise_equal(before, after)
    item, _ = optimize(df.get_default_graph(), [y], [x])
    assert "Add" not in op_types(item.graph)


def test_what_waited_for_a_collapsed_conds_merge_still_waits_for_the_taken_branch(fresh_graph):
    from dataflow.framework.graph_walk import needed_ops

    x = df.placeholder(df.float32, [], name="x")
    y = df.cond(df.constant(False), lambda: x * 2.0, lambda: df.Print(x, [x], "taken", name="p"))
    with df.control_dependencies([y.op]):
        after = df.identity(x, name="after")
    item, _ = optimize(fresh_graph, [after], [x], ["constant_folding"])
    assert "Merge" not in op_types(item.graph)
    assert "cond/p" in {op.name for op in needed_ops([item.fetches[0]], set())}


def test_the_untaken_constant_branch_never_prints(fresh_graph, capsys):
    x = df.placeholder(df.float32, [])

    def noisy():
        return df.Print(x, [x], "untaken branch ran")

    y = df.cond(df.constant(False), noisy, lambda: x + 1.0)
    with session() as sess:
        assert sess.run(y, {x: 1.0}) == 2.0
    assert "untaken branch ran" not in capsys.readouterr().err


def test_a_dead_fetch_behind_a_constant_switch_still_reports_the_untaken_branch(fresh_graph):
    x = df.placeholder(df.float32, [])
    _, if_true = df.switch(x, df.constant(False))  # a cond's branch ops may not be fetched
    dead = if_true * 2.0
    with session() as sess, pytest.raises(df.errors.InvalidArgumentError, match="untaken"):
        sess.run(dead, {x: 1.0})


def test_an_op_whose_kernel_fails_is_not_folded_and_fails_at_run_time_naming_its_line(
    fresh_graph,
):
    y = df.floordiv(df.constant(1), df.constant(0))  # the line the error must name
    line = y.op.location.lineno
    item, _ = optimize(fresh_graph, [y])
    assert "FloorDiv" in op_types(item.graph)
    with session() as sess, pytest.raises(df.errors.InvalidArgumentError) as info:
        sess.run(y)
    assert f"test_constant_folding.py:{line}" in str(info.value)
    assert info.value.op is y.op


def test_stateful_ops_are_never_folded(fresh_graph):
    check = df.Assert(df.constant(True), ["never fails"])
    with df.control_dependencies([check]):
        y = df.identity(df.constant(1.0))
    printed = df.Print(df.constant(3.0), [df.constant(3.0)], "printed: ")
    item, _ = optimize(fresh_graph, [y, printed])
    assert {"Assert", "Print"} <= set(op_types(item.graph))


def test_a_placeholder_with_default_is_no_constant_so_a_cond_on_it_keeps_its_switches(
    fresh_graph,
):
    pred = df.placeholder_with_default(True, [], name="pred")
    y = df.cond(pred, lambda: df.constant(1.0), lambda: df.constant(2.0))
    item, _ = optimize(fresh_graph, [y])
    assert {"PlaceholderWithDefault", "Switch", "Merge"} <= set(op_types(item.graph))
    before, after = run_both(y, {})
    assert_bitwise_equal(before, after)


def test_outputs_larger_than_the_limit_are_not_folded(fresh_graph, monkeypatch):
    monkeypatch.setattr(constant_folding, "MAX_FOLDED_BYTES", 64)
    big = df.constant(np.ones(100, np.float32)) * 2.0
    small = df.constant(np.ones(4, np.float32)) * 2.0
    item, _ = optimize(fresh_graph, [big, small])
    assert op_types(item.graph).count("Mul") == 1


def test_folding_never_changes_the_users_graph(fresh_graph):
    y = df.constant(2.0) * df.constant(3.0)
    text, version = str(fresh_graph), fresh_graph.version
    optimize(fresh_graph, [y])
    with session() as sess:
        sess.run(y)
    assert str(fresh_graph) == text and fresh_graph.version == version

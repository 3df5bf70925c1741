"""Common subexpression elimination: equal pure ops in one context become one."""

import numpy as np
from bitwise import assert_bitwise_equal
from passes_testing import op_types, run_both, session

import dataflow as df
from dataflow.passes import optimize

CSE = ["common_subexpression", "pruning"]


def test_a_thousand_duplicates_shrink_to_the_unique_ops(fresh_graph):
    x = df.placeholder(df.float32, [3], name="x")
    outputs = [df.tanh(x * 2.0 + 1.0) for _ in range(1000)]
    total = df.add_n(outputs)
    item, reports = optimize(fresh_graph, [total], [x], CSE)
    # x, the two constants, Mul, Add, Tanh and the AddN (reading one Tanh 1000 times).
    assert len(item.graph.get_operations()) == 7
    assert reports[0].counts["merged"] == 999 * 5
    before, after = run_both(total, {x: np.array([0.5, -1.0, 2.0], np.float32)}, CSE)
    assert_bitwise_equal(before, after)


def test_a_fetched_duplicate_keeps_its_name(fresh_graph):
    x = df.placeholder(df.float32, [])
    a = df.exp(x, name="a")
    b = df.exp(x, name="b")
    item, _ = optimize(fresh_graph, [a, b], [x], CSE)
    assert item.graph.get_tensor_by_name("b:0") is item.fetches[1]
    assert op_types(item.graph).count("Exp") == 1
    with session(CSE) as sess:
        assert sess.run([a, b], {x: 0.0}) == [1.0, 1.0]


def test_stateful_and_random_ops_are_never_merged(fresh_graph):
    v = df.Variable(1.0)
    reads = [v.value() + 0.0 for _ in range(2)]  # noqa: F841
    prints = [df.Print(df.constant(1.0), [df.constant(1.0)], "p") for _ in range(2)]
    drops = [df.nn.dropout(df.ones([50]), rate=0.5) for _ in range(2)]
    item, _ = optimize(fresh_graph, prints + drops, (), CSE)
    assert op_types(item.graph).count("Print") == 2
    assert op_types(item.graph).count("Dropout") == 2


def test_placeholders_are_never_merged(fresh_graph):
    a = df.placeholder(df.float32, [])
    b = df.placeholder(df.float32, [])
    y = a - b
    with session(CSE) as sess:
        assert sess.run(y, {a: 3.0, b: 1.0}) == 2.0


def test_ops_of_the_two_branches_of_a_cond_are_not_merged(fresh_graph):
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])
    y = df.cond(p, lambda: df.constant(2.0) * 3.0, lambda: df.constant(2.0) * 3.0 + x)
    item, _ = optimize(fresh_graph, [y], [p, x], CSE)
    assert op_types(item.graph).count("Mul") == 2
    for value in (True, False):
        before, after = run_both(y, {p: value, x: 1.0}, CSE)
        assert_bitwise_equal(before, after)


def test_an_op_in_a_loop_is_not_merged_with_its_twin_outside(fresh_graph):
    x = df.placeholder(df.float32, [])
    outside = x * 2.0
    _, inside = df.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v + x * 2.0), [0, 0.0])
    y = outside + inside
    item, _ = optimize(fresh_graph, [y], [x], CSE)
    assert op_types(item.graph).count("Mul") == 2
    before, after = run_both(y, {x: 1.5}, CSE)
    assert_bitwise_equal(before, after)


def test_constants_with_equal_values_but_different_signs_of_zero_stay_apart(fresh_graph):
    x = df.placeholder(df.float32, [])
    y = (x + df.constant(0.0)) - (x + df.constant(-0.0))
    item, _ = optimize(fresh_graph, [y], [x], CSE)
    assert op_types(item.graph).count("Add") == 2

"""Algebraic simplification: only rewrites that keep every bit of every value."""

import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from passes_testing import op_types, run_both

import dataflow as df
from dataflow.passes import optimize

ARITHMETIC = ["arithmetic", "pruning"]
SPECIAL = np.array([-0.0, 0.0, -1.5, np.inf, -np.inf, np.nan, 3.0, 1e-310], np.float64)


def rewritten(fetch, feeds):
    item, reports = optimize(df.get_default_graph(), [fetch], feeds, ARITHMETIC)
    return op_types(item.graph), reports[0].counts


@pytest.mark.parametrize(
    "build",
    [
        lambda x: x * 1.0,
        lambda x: 1.0 * x,
        lambda x: x / 1.0,
        lambda x: x - 0.0,
        lambda x: x + df.constant(-0.0, df.float64),
        lambda x: df.negative(df.negative(x)),
    ],
    ids=["x*1", "1*x", "x/1", "x-0", "x+(-0)", "--x"],
)
def test_exact_identities_become_their_input(fresh_graph, build):
    x = df.placeholder(df.float64, [8], name="x")
    y = build(x)
    types, counts = rewritten(y, [x])
    assert types == ["Placeholder", "Identity"]  # the fetched name resolves to x's value
    before, after = run_both(y, {x: SPECIAL}, ["arithmetic"])
    assert_bitwise_equal(before, after)


def test_float_x_plus_zero_is_kept_because_it_turns_negative_zero_into_zero(fresh_graph):
    x = df.placeholder(df.float64, [8])
    y = x + 0.0
    assert "Add" in rewritten(y, [x])[0]
    before, after = run_both(y, {x: SPECIAL}, ["arithmetic"])
    assert_bitwise_equal(before, after)


def test_integer_x_plus_zero_and_x_times_zero_are_simplified(fresh_graph):
    x = df.placeholder(df.int32, [4])
    y = (x + 0) * 0
    types, counts = rewritten(y, [x])
    assert "Add" not in types and "Mul" not in types and "ZerosLike" in types
    before, after = run_both(y, {x: np.array([1, -2, 3, 2**31 - 1], np.int32)}, ["arithmetic"])
    assert_bitwise_equal(before, after)


@pytest.mark.filterwarnings("ignore:invalid value")
def test_float_x_times_zero_is_kept(fresh_graph):
    x = df.placeholder(df.float64, [8])
    y = x * 0.0
    assert "Mul" in rewritten(y, [x])[0]
    before, after = run_both(y, {x: SPECIAL}, ["arithmetic"])
    assert_bitwise_equal(before, after)


def test_a_constant_that_widens_the_result_is_not_removed(fresh_graph):
    x = df.placeholder(df.float32, [])
    y = x * df.ones([3])
    assert "Mul" in rewritten(y, [x])[0]
    before, after = run_both(y, {x: 2.0}, ["arithmetic"])
    assert_bitwise_equal(before, after)
    assert np.shape(after) == (3,)


def test_a_constant_of_size_one_on_an_unknown_shape_is_removed(fresh_graph):
    x = df.placeholder(df.float32, [None, 3])
    y = x * df.ones([1, 3])
    assert "Mul" not in rewritten(y, [x])[0]
    before, after = run_both(y, {x: np.zeros((0, 3), np.float32)}, ["arithmetic"])
    assert_bitwise_equal(before, after)


def test_transposes_compose_and_cancel(fresh_graph):
    x = df.placeholder(df.float32, [2, 3, 4])
    back = df.transpose(df.transpose(x, [1, 2, 0]), [2, 0, 1])
    composed = df.transpose(df.transpose(x, [1, 0, 2]), [0, 2, 1])
    item, reports = optimize(fresh_graph, [back, composed], [x], ARITHMETIC)
    assert op_types(item.graph).count("Transpose") == 1
    value = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    before, after = run_both([back, composed], {x: value}, ["arithmetic"])
    for a, b in zip(before, after):
        assert_bitwise_equal(a, b)


def test_a_reshape_of_a_reshape_reshapes_once(fresh_graph):
    x = df.placeholder(df.float32, [2, 6])
    y = df.reshape(df.reshape(x, [3, 4]), [4, 3])
    same = df.reshape(x, [2, 6])
    types, _ = rewritten(y, [x])
    assert types.count("Reshape") == 1
    assert "Reshape" not in rewritten(same, [x])[0]
    value = np.arange(12, dtype=np.float32).reshape(2, 6)
    before, after = run_both([y, same], {x: value}, ["arithmetic"])
    for a, b in zip(before, after):
        assert_bitwise_equal(a, b)


def test_a_reshape_that_may_fail_is_kept(fresh_graph):
    x = df.placeholder(df.float32, [None])
    y = df.reshape(df.reshape(x, [-1, 4]), [-1])
    assert rewritten(y, [x])[0].count("Reshape") == 2
    for passes in ([], ["arithmetic"]):
        with pytest.raises(df.errors.InvalidArgumentError):
            run_both(y, {x: np.zeros(6, np.float32)}, passes)


def test_a_simplification_in_a_branch_keeps_the_branch_gate(fresh_graph):
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])
    y = df.cond(p, lambda: x * 1.0, lambda: x + 5.0)
    for value in (True, False):
        before, after = run_both(y, {p: value, x: 2.0}, ["arithmetic"])
        assert_bitwise_equal(before, after)

"""Elementwise fusion: a chain of elementwise ops runs as one kernel into one buffer."""

import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from passes_testing import op_types, peak_in_arrays, run_both, session

import dataflow as df
from dataflow.passes import optimize

FUSION = ["elementwise_fusion"]


def chain(x, length=12):
    for k in range(length // 3):
        x = df.tanh(x * (1.0 + k / 10) + 0.5)
    return x


def test_a_chain_becomes_one_fused_op_with_the_name_of_its_last_op(fresh_graph):
    x = df.placeholder(df.float64, [5], name="x")
    y = df.identity(chain(x), name="y")
    item, reports = optimize(fresh_graph, [y], [x], FUSION)
    assert op_types(item.graph).count("FusedElementwise") == 1
    assert reports[0].counts == {"ops fused": 12, "fused kernels": 1}
    fused = next(op for op in item.graph.get_operations() if op.type == "FusedElementwise")
    assert fused.name == y.op.inputs[0].op.name
    assert fused.location is y.op.inputs[0].op.location
    value = np.array([-np.inf, -1.0, 0.0, 2.5, np.nan])
    before, after = run_both(y, {x: value}, FUSION)
    assert_bitwise_equal(before, after)


def test_a_value_used_twice_ends_a_chain(fresh_graph):
    x = df.placeholder(df.float32, [3])
    shared = df.exp(x * 2.0)
    y = df.sin(shared) + df.cos(shared)
    item, _ = optimize(fresh_graph, [y], [x], FUSION)
    assert "Exp" not in op_types(item.graph)  # Mul and Exp fused, ending at the shared value
    before, after = run_both(y, {x: np.array([0.1, 0.2, 0.3], np.float32)}, FUSION)
    assert_bitwise_equal(before, after)


def test_a_fetched_intermediate_is_not_fused_away(fresh_graph):
    x = df.placeholder(df.float32, [3])
    middle = df.exp(x * 2.0)
    y = df.sin(middle + 1.0)
    before, after = run_both([middle, y], {x: np.ones(3, np.float32)}, FUSION)
    for a, b in zip(before, after):
        assert_bitwise_equal(a, b)


def test_broadcasting_steps_grow_the_buffer_and_give_the_same_result(fresh_graph):
    x = df.placeholder(df.float64, [])
    row = df.placeholder(df.float64, [4])
    grid = df.placeholder(df.float64, [3, 4])
    y = df.exp(df.exp(x) + row) * grid - 1.0
    item, _ = optimize(fresh_graph, [y], [x, row, grid], FUSION)
    assert op_types(item.graph).count("FusedElementwise") == 1
    feed = {x: 0.5, row: np.arange(4.0), grid: np.arange(12.0).reshape(3, 4)}
    before, after = run_both(y, feed, FUSION)
    assert_bitwise_equal(before, after)


def test_scalar_chains_give_numpy_scalars(fresh_graph):
    x = df.placeholder(df.float64, [])
    y = chain(x, 9)
    before, after = run_both(y, {x: 0.25}, FUSION)
    assert_bitwise_equal(before, after)
    assert type(after) is np.float64


def test_ops_of_different_branches_are_not_fused(fresh_graph):
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [2])
    y = df.cond(p, lambda: df.exp(x) * 2.0, lambda: df.sin(x) - 1.0)
    z = df.tanh(y)
    for value in (True, False):
        before, after = run_both(z, {p: value, x: np.ones(2, np.float32)}, FUSION)
        assert_bitwise_equal(before, after)


@pytest.mark.measures_its_runs
def test_the_fused_kernel_allocates_no_intermediate_arrays(fresh_graph):
    size = 1 << 20
    x = df.placeholder(df.float64, [size])
    y = chain(x, 30)
    data = np.random.default_rng(0).random(size)
    peaks = {
        name: peak_in_arrays(y, {x: data}, passes, data)
        for name, passes in (("off", []), ("fused", FUSION))
    }
    assert peaks["fused"] < 1.5 <= peaks["off"], peaks


def test_an_error_in_a_fused_step_names_the_users_op_that_failed(fresh_graph):
    k = df.placeholder(df.int32, [3])
    powered = df.pow(k, -1, name="powered")  # integers to negative powers fail here
    y = df.abs(powered) + 1
    line = powered.op.location.lineno
    item, _ = optimize(fresh_graph, [y], [k], FUSION)
    assert "Pow" not in op_types(item.graph)
    errors = {}
    for passes in ([], FUSION):
        with session(passes) as sess, pytest.raises(df.errors.InvalidArgumentError) as info:
            sess.run(y, {k: np.array([1, 2, 3], np.int32)})
        errors[bool(passes)] = info.value
    fused = errors[True]
    assert fused.op is powered.op
    assert str(fused).startswith(
        f"op 'powered' (Pow) created at {__file__}:{line} failed: ValueError: Integers to "
        "negative integer powers are not allowed.\n  inputs: int32(3,), int32()"
    )
    assert str(fused) == str(errors[False])  # the same error as without fusion


def test_an_error_in_a_fused_step_of_a_loaded_graph_names_the_step_and_the_kernel(
    fresh_graph, tmp_path
):
    k = df.placeholder(df.int32, [3], name="k")
    powered = df.pow(k, -1, name="powered")
    y = df.add(df.abs(powered), 1, name="y")
    line = powered.op.location.lineno
    item, _ = optimize(fresh_graph, [y], [k], FUSION)
    df.io.save_graph(item.graph, tmp_path / "fused.dfg")
    loaded = df.io.load_graph(tmp_path / "fused.dfg")
    with session([], graph=loaded) as sess, pytest.raises(df.errors.InvalidArgumentError) as info:
        sess.run("y:0", {"k:0": np.array([1, 2, 3], np.int32)})
    assert info.value.op is loaded.get_operation_by_name("y")
    assert str(info.value).startswith(
        f"op 'powered' (Pow) created at {__file__}:{line}, fused into op 'y' "
        "(FusedElementwise) created at "
    )
    assert "negative integer powers" in str(info.value)


def test_an_optimized_graph_with_fused_ops_saves_and_loads(fresh_graph, tmp_path):
    x = df.placeholder(df.float32, [4], name="x")
    y = df.identity(chain(x, 6), name="y")
    item, _ = optimize(fresh_graph, [y], [x])
    path = tmp_path / "fused.dfg"
    df.io.save_graph(item.graph, path)
    loaded = df.io.load_graph(path)
    assert "FusedElementwise" in op_types(loaded)
    value = np.array([0.0, -1.0, 2.0, 3.0], np.float32)
    with session([], graph=loaded) as sess:
        got = sess.run("y:0", {"x:0": value})
    with session([]) as sess:
        assert_bitwise_equal(sess.run(y, {x: value}), got)


def differentiated_after_saving(graph, tmp_path, y, xs, feed):
    """The gradients of ``y`` with respect to ``xs`` (names), taken on the graph saved after
    the default pipeline and loaded back, and their values for ``feed`` (names to values)."""
    item, _ = optimize(graph, [y], xs)
    assert "FusedElementwise" in op_types(item.graph)
    df.io.save_graph(item.graph, tmp_path / "optimized.dfg")
    loaded = df.io.load_graph(tmp_path / "optimized.dfg")
    with loaded.as_default():
        grads = df.gradients(
            loaded.get_tensor_by_name(y), [loaded.get_tensor_by_name(x) for x in xs]
        )
        assert all(g is not None for g in grads)
        with session([]) as sess:
            return sess.run(grads, feed)


def test_gradients_flow_through_a_fused_op_as_through_its_steps(fresh_graph, tmp_path):
    x = df.placeholder(df.float64, [4], name="x")
    w = df.placeholder(df.float64, [], name="w")
    # x is an operand of two steps, w is broadcast; RealDiv and Log are quiet steps.
    y = df.identity(df.log(df.tanh(x * w + x) / 3.0 + 2.0), name="y")
    feed = {"x:0": np.array([0.3, -1.2, 2.0, 0.1]), "w:0": 0.7}
    with session([]) as sess:
        expected = sess.run(df.gradients(y, [x, w]), feed)
    got = differentiated_after_saving(fresh_graph, tmp_path, "y:0", ["x:0", "w:0"], feed)
    for a, b in zip(expected, got):
        np.testing.assert_allclose(b, a, rtol=1e-14)


def test_gradients_through_fused_ops_in_the_branches_of_a_cond(fresh_graph, tmp_path):
    x = df.placeholder(df.float64, [3], name="x")
    p = df.placeholder(df.bool, [], name="p")
    branches = df.cond(p, lambda: df.tanh(x * 2.0 + 1.0) / 3.0, lambda: df.exp(x) - x)
    y = df.identity(branches, name="y")
    value = np.array([0.3, -1.2, 2.0])
    for taken in (True, False):
        with session([]) as sess:
            (expected,) = sess.run(df.gradients(y, [x]), {x: value, p: taken})
        feed = {"x:0": value, "p:0": taken}
        (got,) = differentiated_after_saving(fresh_graph, tmp_path, "y:0", ["x:0"], feed)
        np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_gradients_flow_through_a_fused_chain_of_complex_values(fresh_graph, tmp_path):
    x = df.placeholder(df.complex128, [3], name="x")
    y = df.identity(df.tanh(x * (1.5 - 0.5j) + 1.0) / 3.0, name="y")
    feed = {"x:0": np.array([0.3 + 0.1j, -1.2, 2.0 - 1.0j])}
    with session([]) as sess:
        expected = sess.run(df.gradients(y, [x]), feed)
    got = differentiated_after_saving(fresh_graph, tmp_path, "y:0", ["x:0"], feed)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-14)

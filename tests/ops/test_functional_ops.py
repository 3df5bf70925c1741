"""map_fn, scan, foldl and foldr: TF1's while_loop + TensorArray programs over the first
dimension (values and names checked against tf.compat.v1, control flow v1)."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from ops_testing import assert_same, run

import dataflow as df

ROWS = np.arange(6, dtype=np.float32).reshape(3, 2)


def test_map_fn_applies_fn_to_each_row_in_a_loop_named_as_tf1():
    mapped = df.map_fn(lambda row: row * 2.0, df.constant(ROWS))
    assert mapped.name == "map/TensorArrayStack/TensorArrayGatherV3:0"
    assert mapped.shape == df.TensorShape([3, 2])
    assert_same(run(mapped), ROWS * 2)


def test_map_fn_with_dtype_returns_another_structure():
    first, count = df.map_fn(
        lambda row: (row[0], df.cast(row[1], df.int32)),
        df.constant(ROWS),
        dtype=(df.float32, df.int32),
    )
    a, b = run([first, count])
    assert_same(a, np.array([0, 2, 4], np.float32))
    assert_same(b, np.array([1, 3, 5], np.int32))


def test_map_fn_over_a_nested_structure_of_unknown_length():
    Pair = collections.namedtuple("Pair", "x y")
    x = df.placeholder(df.float32, [None, 2])
    y = df.placeholder(df.float32, [None])
    out = df.map_fn(lambda p: Pair(p.x * p.y, p.y), Pair(x, y))
    assert isinstance(out, Pair) and out.x.shape.as_list() == [None, 2]
    got = run(list(out), {x: ROWS, y: [1.0, 2.0, 3.0]})
    assert_same(got[0], ROWS * np.array([[1.0], [2.0], [3.0]], np.float32))
    assert_same(run(out.x, {x: np.zeros((0, 2), np.float32), y: []}), np.zeros((0, 2), np.float32))


def test_map_fn_refuses_a_result_of_another_structure_or_dtype():
    x = df.constant(ROWS)
    with pytest.raises(ValueError, match="give dtype when it differs"):
        df.map_fn(lambda row: (row, row), x)
    with pytest.raises(TypeError, match="fn returned int32"):
        df.map_fn(lambda row: df.cast(row, df.int32), x)
    with pytest.raises(ValueError, match="not scalars"):
        df.map_fn(lambda v: v, df.constant(1.0))
    with pytest.raises(TypeError, match="fn must be callable"):
        df.map_fn(None, x)


def test_scan_keeps_the_running_results():
    x = df.constant(ROWS)
    running = df.scan(lambda a, e: a + e, x)
    backwards = df.scan(lambda a, e: a + e, x, initializer=df.zeros([2]), reverse=True)
    assert running.name == "scan/TensorArrayStack/TensorArrayGatherV3:0"
    a, b = run([running, backwards])
    # tf.compat.v1.scan on the same rows: [[0 1] [2 4] [6 9]] and [[6 9] [6 8] [4 5]].
    assert_same(a, np.array([[0, 1], [2, 4], [6, 9]], np.float32))
    assert_same(b, np.array([[6, 9], [6, 8], [4, 5]], np.float32))


def test_scan_with_a_nested_initializer():
    fib = df.scan(
        lambda a, _: (a[1], a[0] + a[1]), df.constant(np.zeros(6, np.int32)), initializer=(0, 1)
    )
    assert_same(run(fib[0]), np.array([1, 1, 2, 3, 5, 8], np.int32))


def test_folds_reduce_from_either_end():
    x = df.constant(ROWS)
    left = df.foldl(lambda a, e: a + e, x)
    right = df.foldr(lambda a, e: a * 0.5 + e, x, initializer=df.zeros([2]))
    text = df.foldl(lambda a, e: a * 10 + e, df.constant([1, 2, 3]))
    from_right = df.foldr(lambda a, e: a * 10 + e, df.constant([1, 2, 3]))
    assert left.name == "foldl/while/Exit_2:0"  # as in TF1: the counter, the index, then a
    got = run([left, right, text, from_right])
    # tf.compat.v1: [6 9], [2 3.75], 123, 321.
    assert_same(got[0], np.array([6, 9], np.float32))
    assert_same(got[1], np.array([2, 3.75], np.float32))
    assert got[2] == 123 and got[3] == 321


def test_functional_ops_inside_a_while_loop_and_a_cond():
    x = df.placeholder(df.float32, [3, 2])
    pred = df.placeholder(df.bool, [])

    def body(i, acc):
        return i + 1, acc + df.map_fn(lambda r: df.reduce_sum(r), x)

    _, total = df.while_loop(lambda i, a: i < 2, body, [0, df.zeros([3])])
    chosen = df.cond(pred, lambda: df.scan(lambda a, e: a + e, x), lambda: x)
    got = run([total, chosen], {x: ROWS, pred: True})
    assert_same(got[0], np.array([2, 10, 18], np.float32))
    assert_same(got[1], np.cumsum(ROWS, 0))
    assert_same(run(chosen, {x: ROWS, pred: False}), ROWS)


def test_a_map_fn_graph_saves_loads_and_renders(tmp_path):
    x = df.placeholder(df.float32, [None, 2], name="x")
    df.identity(df.map_fn(lambda r: r * r, x), name="out")
    path = str(tmp_path / "map.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    with df.Session(graph=df.io.load_graph(path)) as sess:
        assert_same(sess.run("out:0", {"x:0": ROWS}), ROWS * ROWS)
    assert "map/while" in df.render(df.get_default_graph(), format="dot").source

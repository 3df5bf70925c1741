"""Sparse updates of variables (scatter_* and scatter_nd_*), as tf.compat.v1 defines them.

Expected values and messages are those TensorFlow 2.21's ``tf.compat.v1`` (graph mode) gives
for the same program on ``v = arange(6).reshape(3, 2)``.
"""

import threading

import numpy as np
import pytest

import dataflow as df

START = np.arange(6, dtype=np.float32).reshape(3, 2)


class Slices:
    """What the Variable methods read of an IndexedSlices."""

    def __init__(self, values, indices):
        self.values = values
        self.indices = indices


def run_fresh(variable, fetch):
    with df.Session() as sess:
        sess.run(variable.initializer)
        return sess.run(fetch)


def test_row_updates_match_tensorflow_with_duplicate_indices():
    v = df.Variable(START, name="v")
    update = df.scatter_update(v, [0, 2, 0], [[10, 11], [12, 13], [14, 15]])
    add = df.scatter_add(v, [0, 0], [[1, 1], [1, 1]])
    mul = df.scatter_mul(v, [1], [[2, 2]])
    assert (update.name, update.op.type, add.name, mul.op.type) == (
        "ScatterUpdate:0",
        "ScatterUpdate",
        "ScatterAdd:0",
        "ScatterMul",
    )
    assert run_fresh(v, update).tolist() == [[14, 15], [2, 3], [12, 13]]  # the last wins
    assert run_fresh(v, add).tolist() == [[2, 3], [2, 3], [4, 5]]  # duplicates accumulate
    assert run_fresh(v, mul).tolist() == [[0, 1], [4, 6], [4, 5]]
    assert run_fresh(v, df.scatter_sub(v, [2], [[1, 1]])).tolist() == [[0, 1], [2, 3], [3, 4]]
    assert run_fresh(v, df.scatter_div(v, [1], [[2, 4]])).tolist() == [[0, 1], [1, 0.75], [4, 5]]
    assert run_fresh(v, df.scatter_min(v, [2], [[9, 0]])).tolist() == [[0, 1], [2, 3], [4, 0]]
    assert run_fresh(v, df.scatter_max(v, [0], [[9, 0]])).tolist() == [[9, 1], [2, 3], [4, 5]]


def test_scalar_and_nested_indices_and_scalar_updates():
    v = df.Variable(START, name="v")
    assert run_fresh(v, df.scatter_update(v, 1, [7.0, 7.0])).tolist() == [[0, 1], [7, 7], [4, 5]]
    nested = df.scatter_update(v, [[0], [1]], [[[1.0, 1.0]], [[2.0, 2.0]]])
    assert run_fresh(v, nested).tolist() == [[1, 1], [2, 2], [4, 5]]
    broadcast = df.scatter_update(v, [0, 1], 5.0)
    assert run_fresh(v, broadcast).tolist() == [[5, 5], [5, 5], [4, 5]]


def test_element_updates_match_tensorflow():
    v = df.Variable(START, name="v")
    update = df.scatter_nd_update(v, [[0, 1], [2, 0]], [100.0, 200.0])
    add = df.scatter_nd_add(v, [[0, 1], [0, 1]], [1.0, 1.0])
    rows = df.scatter_nd_sub(v, [[1]], [[2.0, 3.0]])
    assert (update.name, add.op.type) == ("ScatterNdUpdate:0", "ScatterNdAdd")
    assert run_fresh(v, update).tolist() == [[0, 100], [2, 3], [200, 5]]
    assert run_fresh(v, add).tolist() == [[0, 3], [2, 3], [4, 5]]
    assert run_fresh(v, rows).tolist() == [[0, 1], [0, 0], [4, 5]]


def test_variable_methods_take_indexed_slices_and_nd_indices():
    v = df.Variable(START, name="v")
    added = v.scatter_add(Slices(df.constant([[3.0, 3.0]]), df.constant([1])))
    updated = v.scatter_update(Slices([[9.0, 9.0]], [2]), name="put")
    element = v.scatter_nd_update([[0, 0]], [9.0])
    assert (added.name, updated.name, element.name) == (
        "ScatterAdd:0",
        "put:0",
        "ScatterNdUpdate:0",
    )
    with df.Session() as sess:
        sess.run(v.initializer)
        sess.run([added])
        sess.run(updated)
        sess.run(element)
        assert sess.run(v).tolist() == [[9, 1], [5, 6], [9, 9]]


def test_bad_shapes_and_index_dtypes_are_build_errors_naming_the_line():
    v = df.Variable(START, name="v")
    here = __file__
    with pytest.raises(ValueError, match=rf"ScatterUpdate op 'ScatterUpdate' at {here}:\d+: Must"):
        df.scatter_update(v, [0, 1], np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"updates.shape \(3, 2\), indices.shape \(2,\)"):
        df.scatter_add(v, [0, 1], np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match=r"indices.shape\[:-1\] \+ ref.shape"):
        df.scatter_nd_update(v, [[0, 1]], [1.0, 2.0])
    with pytest.raises(TypeError, match="DataType float32 not in list of allowed values"):
        df.scatter_update(v, [0.5], [[1.0, 1.0]])
    with pytest.raises(TypeError, match="scatter_add updates a Variable"):
        df.scatter_add(df.constant(START), [0], [[1.0, 1.0]])


OUTSIDE = np.ones((2, 2), np.float32)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda v: df.scatter_update(v, [0, 5], OUTSIDE), r"indices\[1\] = 5 is not in \[0, 3\)"),
        (lambda v: df.scatter_add(v, [-1], OUTSIDE[:1]), r"indices\[0\] = -1 is not in \[0, 3\)"),
        (
            lambda v: df.scatter_nd_update(v, [[0, 5]], [1.0]),
            r"indices\[0\] = \[0, 5\] does not index into shape \[3,2\]",
        ),
        (
            lambda v: df.scatter_nd_add(v, [[3]], [[1.0, 1.0]]),
            r"indices\[0\] = \[3\] does not index into shape \[3,2\]",
        ),
    ],
)
def test_an_index_outside_the_variable_fails_the_run_and_writes_nothing(make, message):
    v = df.Variable(START, name="v")
    bad = make(v)
    with df.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(df.errors.InvalidArgumentError, match=message) as error:
            sess.run([v.assign_add(np.ones((3, 2), np.float32)), bad])
        assert bad.op.name in str(error.value) and __file__ in str(error.value)
        assert sess.run(v).tolist() == START.tolist()


def test_scatter_add_in_a_loop_body_accumulates_each_iteration():
    table = df.Variable(np.zeros((4,), np.float32), name="counts")

    def body(i):
        with df.control_dependencies([df.scatter_add(table, [i % 4, 0], [1.0, 0.5])]):
            return i + 1

    done = df.while_loop(lambda i: i < 6, body, [0])
    with df.Session() as sess:
        sess.run(table.initializer)
        assert sess.run(done) == 6
        assert sess.run(table).tolist() == [5.0, 2.0, 1.0, 1.0]


def test_concurrent_scatter_adds_lose_nothing():
    # Both runs read the table before either commits (the barrier holds each run until the
    # other has updated); each commit must apply its run's change to the other's result.
    barrier = threading.Barrier(2, timeout=30)
    table = df.Variable(np.zeros((3,), np.float64), name="table")
    rows = df.placeholder(df.int32, [None])
    add = df.scatter_add(table, rows, df.ones_like(rows, dtype=df.float64))
    sub = df.scatter_nd_sub(table, [[1]], [0.5])
    with df.control_dependencies([add, sub]):
        both_updated = df.py_func(lambda: np.float64(barrier.wait()), [], df.float64)
    errors = []
    with df.Session() as sess:
        sess.run(table.initializer)

        def work(k):
            try:
                for _ in range(3):
                    sess.run(both_updated, {rows: [k, 2]})
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        assert sess.run(table).tolist() == [3.0, 0.0, 6.0]


def test_scatter_ops_have_no_gradient_as_in_tensorflow():
    v = df.Variable(START, name="v")
    updates = df.placeholder(df.float32, [1, 2])
    assert df.gradients(df.scatter_add(v, [0], updates), [updates]) == [None]


def test_scatter_ops_save_load_and_render(fresh_graph, tmp_path):
    v = df.Variable(START, name="v")
    df.scatter_nd_add(v, [[0, 1]], [10.0], name="poke")
    df.scatter_update(v, [2], [[7.0, 7.0]], name="put")
    path = tmp_path / "scatter.dfg"
    df.io.save_graph(fresh_graph, path)
    loaded = df.io.load_graph(path)
    with df.Session(graph=loaded) as sess:
        sess.run("v/Assign")
        sess.run("poke:0")
        assert sess.run("put:0").tolist() == [[0, 11], [2, 3], [7, 7]]
    dot = df.render(fresh_graph, format="dot").source
    assert "poke" in dot and "ScatterNdAdd" in dot

"""IndexedSlices and SparseTensors through Switch/Merge, cond and while_loop, as TensorFlow 1.x
carries them: part by part, made whole again on the way out.  The programs are TensorFlow's own
control-flow tests (testSwitchMergeIndexedSlices, testCondIndexedSlices, testCondSparseTensor,
testWhileShapeInference{IndexedSlices,SparseTensor}, testWhileGrad_{IndexedSlices,SparseTensor}),
written here in our words, with the values TensorFlow gives."""

import numpy as np
import pytest

import dataflow as df


def run(fetches, feed=None):
    with df.Session() as sess:
        return sess.run(fetches, feed)


def slices(dense_shape=None):
    values = df.constant([[2.0, 4.0], [3.0, 5.0]], name="values")
    indices = df.constant([0, 3], name="indices")
    return values, df.IndexedSlices(values, indices, dense_shape)


def sparse():
    values = df.constant([2.0, 4.0], name="values")
    indices = df.constant([[0], [3]], df.int64, name="indices")
    return values, df.SparseTensor(indices, values, df.constant([10], df.int64))


def double_slices(i, x):
    return [i + 1, df.IndexedSlices(x.values * 2.0, x.indices, x.dense_shape)]


def double_sparse(i, x):
    return [i + 1, df.SparseTensor(x.indices, x.values * 2.0, x.dense_shape)]


def ten_times(i, _):
    return i < 10


def test_switch_and_merge_move_indexed_slices_part_by_part():
    data = df.IndexedSlices(df.constant([1, 2, 3, 4, 5, 6]), df.constant([0, 2, 4, 6, 8, 10]))
    false_side, true_side = df.switch(data, df.constant(True))
    assert isinstance(true_side, df.IndexedSlices)
    merged, index = df.merge([false_side, true_side])
    got = run([merged.values, merged.indices, index])
    assert got[0].tolist() == [1, 2, 3, 4, 5, 6]
    assert got[1].tolist() == [0, 2, 4, 6, 8, 10]
    assert got[2] == 1


def test_a_cond_returns_the_taken_branchs_indexed_slices():
    _, x = slices()
    indices = x.indices
    result = df.cond(
        df.less(1, 2),
        lambda: df.IndexedSlices(x.values + 1, indices),
        lambda: df.IndexedSlices(x.values - 1, indices),
    )
    assert isinstance(result, df.IndexedSlices) and result.dense_shape is None
    assert run(result.values).tolist() == [[3.0, 5.0], [4.0, 6.0]]


def test_a_cond_returns_the_taken_branchs_sparse_tensor():
    _, x = sparse()
    result = df.cond(
        df.less(1, 2),
        lambda: df.SparseTensor(x.indices + 1, x.values + 1, x.dense_shape),
        lambda: df.SparseTensor(x.indices, x.values - 1, x.dense_shape),
    )
    assert result.values.shape.as_list() == [2]
    value = run(result)
    assert value.values.tolist() == [3.0, 5.0] and value.indices.tolist() == [[1], [4]]


def test_a_cond_refuses_a_composite_against_a_tensor():
    _, x = slices()
    with pytest.raises((TypeError, ValueError), match="true_fn"):
        df.cond(df.less(1, 2), lambda: x, lambda: x.values)


def test_indexed_slices_keep_their_shapes_through_a_loop_unless_an_invariant_relaxes_them():
    _, x = slices(df.constant([10, 2]))
    _, r = df.while_loop(ten_times, double_slices, [df.constant(0), x])
    assert isinstance(r, df.IndexedSlices)
    assert r.values.shape.as_list() == [2, 2] and r.dense_shape.shape.as_list() == [2]
    invariants = [df.TensorShape([]), df.TensorShape([None, 2])]
    _, r = df.while_loop(ten_times, double_slices, [df.constant(0), x], invariants)
    assert r.values.shape.as_list() == [None, 2] and r.dense_shape.shape.as_list() == [2]
    assert run(r.values).tolist() == [[2048.0, 4096.0], [3072.0, 5120.0]]


def test_a_sparse_tensor_may_change_its_number_of_values_and_with_an_invariant_its_rank():
    _, x = sparse()
    i = df.constant(0)
    _, r = df.while_loop(ten_times, double_sparse, [i, x])
    assert r.indices.shape.as_list() == [None, 1] and r.values.shape.as_list() == [None]

    def add_a_dimension(i, x):
        indices = df.concat([x.indices, df.cast(df.stack([[i], [i]]), df.int64)], axis=1)
        dense_shape = df.concat([x.dense_shape, df.constant([10], df.int64)], axis=0)
        return [i + 1, df.SparseTensor(indices, x.values * 2.0, dense_shape)]

    any_rank = [i.shape, df.TensorShape([None])]
    _, r = df.while_loop(ten_times, add_a_dimension, [i, x], any_rank)
    assert r.indices.shape.as_list() == [None, None] and r.dense_shape.shape.as_list() == [None]
    assert run(r.dense_shape).tolist() == [10] * 11
    with pytest.raises(ValueError, match="is not compatible with"):
        df.while_loop(ten_times, lambda i, x: [i + 1, x], [i, x], [i.shape, df.TensorShape([5])])
    with pytest.raises(ValueError):
        df.while_loop(ten_times, add_a_dimension, [i, x])  # the rank may not change by default


@pytest.mark.parametrize("make, body", [(slices, double_slices), (sparse, double_sparse)])
def test_gradients_flow_through_a_loop_of_composites(make, body):
    values, x = make()
    _, r = df.while_loop(ten_times, body, [df.constant(0), x])
    (grad,) = df.gradients(r.values, values)
    np.testing.assert_allclose(run(grad), np.full(values.shape.as_list(), 1024.0))


def test_a_single_composite_loop_variable_comes_back_alone():
    _, x = slices()
    r = df.while_loop(
        lambda s: df.reduce_sum(s.values) < 100.0,
        lambda s: df.IndexedSlices(s.values * 2.0, s.indices),
        [x],
    )
    assert isinstance(r, df.IndexedSlices)
    assert run(r.values).tolist() == [[16.0, 32.0], [24.0, 40.0]]


def test_identity_enter_exit_and_with_dependencies_keep_a_composite_whole():
    from primitives.control_flow_ops import with_dependencies

    st = df.SparseTensor([[0, 5]], ["x"], [10, 10])
    through = [df.identity(st), df.exit(df.enter(st, "frame"))]
    assert all(isinstance(t, df.SparseTensor) for t in through)
    table = df.Variable(np.array([[0.0, 1.0], [10.0, 11.0]], np.float32))
    rows = with_dependencies([table.initializer], df.IndexedSlices(table, df.constant([1])))
    picked = df.gather(rows.values, rows.indices)
    got = run([*through, picked])  # the gather runs after the initializer: no initializer run
    assert [v.indices.tolist() for v in got[:2]] == [[[0, 5]], [[0, 5]]]
    assert got[2].tolist() == [[10.0, 11.0]]


def test_a_cond_casts_indexed_slices_indices_to_int64_where_its_branches_disagree():
    values = df.constant([10])
    x = df.IndexedSlices(values, df.constant([0], df.int32))
    pred = df.placeholder(df.bool, [])
    result = df.cond(
        pred,
        lambda: df.IndexedSlices(x.values + 1, df.constant([1], df.int32)),
        lambda: df.IndexedSlices(x.values - 1, df.constant([2], df.int64)),
    )
    assert result.indices.dtype is df.int64
    with df.Session() as sess:
        taken = sess.run([result.values, result.indices], {pred: True})
        untaken = sess.run([result.values, result.indices], {pred: False})
    assert [a.tolist() for a in taken] == [[11], [1]]
    assert [a.tolist() for a in untaken] == [[9], [2]]
    assert taken[1].dtype == np.int64


def test_a_cond_still_refuses_tensors_of_different_dtypes():
    with pytest.raises(ValueError, match="must have the same type"):
        df.cond(
            df.constant(True),
            lambda: df.constant([0], df.int32),
            lambda: df.constant([0], df.int64),
        )

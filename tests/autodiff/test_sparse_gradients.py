"""Sparse gradients: ``gather`` and ``nn.embedding_lookup`` send back only the rows they read,
as ``IndexedSlices``, kept sparse where TensorFlow 1.x keeps them and made dense where a dense
tensor is needed.  The values pinned here are what TensorFlow 1.x (tensorflow-cpu 2.21, graph
mode) gives for the same programs."""

import warnings

import numpy as np
import pytest
from gradient_checking import check_gradients

import dataflow as df

TABLE = np.arange(12.0).reshape(4, 3)


def run(fetches, feed=None, init=()):
    with df.Session() as sess:
        for v in init:
            sess.run(v.initializer)
        return sess.run(fetches, feed)


def test_the_gradient_of_a_gather_is_the_rows_it_read():
    table = df.Variable(TABLE)
    loss = df.reduce_sum(
        df.gather(table, [0, 2, 0]) * df.constant([[1.0], [2.0], [3.0]], df.float64)
    )
    (grad,) = df.gradients(loss, table)
    assert isinstance(grad, df.IndexedSlices)
    value = run(grad, init=[table])
    assert isinstance(value, df.IndexedSlicesValue)
    np.testing.assert_array_equal(value.values, [[1.0] * 3, [2.0] * 3, [3.0] * 3])
    np.testing.assert_array_equal(value.indices, [0, 2, 0])
    np.testing.assert_array_equal(value.dense_shape, [4, 3])
    dense = run(df.convert_to_tensor(grad), init=[table])
    np.testing.assert_array_equal(dense, [[4.0] * 3, [0.0] * 3, [2.0] * 3, [0.0] * 3])


def test_sparse_contributions_concatenate_and_a_dense_one_makes_the_sum_dense():
    table = df.Variable(TABLE)
    both = df.reduce_sum(df.gather(table, [0, 2, 0])) + df.reduce_sum(df.gather(table, [1]))
    (sparse,) = df.gradients(both, table)
    assert isinstance(sparse, df.IndexedSlices)
    np.testing.assert_array_equal(run(sparse, init=[table]).indices, [0, 2, 0, 1])
    mixed = df.reduce_sum(df.gather(table, [0, 2, 0])) + df.reduce_sum(table)
    (dense,) = df.gradients(mixed, table)
    assert isinstance(dense, df.Tensor) and dense.op.type == "AddN"
    np.testing.assert_array_equal(
        run(dense, init=[table]), [[3.0] * 3, [1.0] * 3, [2.0] * 3, [1.0] * 3]
    )


def test_an_op_that_needs_a_dense_gradient_gets_one():
    check_gradients(
        lambda x: df.gather(df.tanh(x), [1, 1, 3]), [np.linspace(-1, 1, 8).reshape(4, 2)]
    )
    check_gradients(lambda x: df.gather(x * x, [[0, 2], [2, 2]]), [np.arange(6.0).reshape(3, 2)])


def test_gathers_in_a_cond_and_a_while_loop_get_the_right_gradients():
    table = df.placeholder(df.float64, [4, 3])
    pred = df.placeholder(df.bool, [])
    picked = df.cond(pred, lambda: df.gather(table, [3, 3]), lambda: df.gather(table, [0, 1]))
    _, total = df.while_loop(
        lambda i, acc: i < 3,
        lambda i, acc: (i + 1, acc + df.reduce_sum(df.gather(table, df.stack([i, i])))),
        [df.constant(0), df.constant(0.0, df.float64)],
    )
    g_cond = df.convert_to_tensor(df.gradients(df.reduce_sum(picked), table)[0])
    g_loop = df.convert_to_tensor(df.gradients(total, table)[0])
    values = run([g_cond, g_loop], {table: TABLE, pred: True})
    np.testing.assert_array_equal(values[0], [[0.0] * 3] * 3 + [[2.0] * 3])
    np.testing.assert_array_equal(values[1], [[2.0] * 3] * 3 + [[0.0] * 3])


@pytest.mark.parametrize("taken", [True, False])
def test_a_sparse_gradient_through_one_branch_of_a_cond_stays_sparse(taken):
    # TensorFlow's testCondGrad_ResourceVarSparseRead: the untaken branch's zeros join the
    # sparse gradient as IndexedSlices of every row, so the result is IndexedSlices either way.
    var = df.Variable(np.ones((4, 2), np.float32))
    table = df.constant(TABLE.astype(np.float32))
    pred = df.placeholder(df.bool, [])
    result = df.cond(
        pred,
        lambda: df.reduce_sum(var.sparse_read([1, 2])) + df.reduce_sum(df.gather(table, [0, 0])),
        lambda: df.constant(0.0),
    )
    grads = df.gradients(result, [var, table])
    assert all(isinstance(g, df.IndexedSlices) for g in grads)
    var_grad, table_grad = run(grads, {pred: taken}, init=[var])
    assert isinstance(var_grad, df.IndexedSlicesValue)
    if taken:
        assert var_grad.indices.tolist() == [1, 2]
        np.testing.assert_array_equal(var_grad.values, np.ones((2, 2)))
        assert table_grad.indices.tolist() == [0, 0]
    else:
        assert var_grad.indices.tolist() == [0, 1, 2, 3]
        np.testing.assert_array_equal(var_grad.values, np.zeros((4, 2)))
        np.testing.assert_array_equal(table_grad.values, np.zeros((4, 3)))
    assert var_grad.dense_shape.tolist() == [4, 2]


def test_embedding_lookup_of_one_table_is_a_gather_with_a_sparse_gradient():
    table = df.Variable(TABLE)
    rows = df.nn.embedding_lookup(table, [[1, 2], [3, 3]])
    assert rows.shape.as_list() == [2, 2, 3]
    (grad,) = df.gradients(df.reduce_sum(rows), table)
    value = run(grad, init=[table])
    np.testing.assert_array_equal(value.indices, [1, 2, 3, 3])
    np.testing.assert_array_equal(value.values, np.ones((4, 3)))


@pytest.mark.parametrize(
    "strategy, expected, shard_grads",
    [
        (
            "mod",
            [[[0, 1], [100, 101], [200, 201]], [[104, 105], [4, 5], [202, 203]]],
            [[[1, 1], [0, 0], [1, 1]], [[1, 1], [0, 0], [1, 1]], [[1, 1], [1, 1]]],
        ),
        (
            "div",
            [[[0, 1], [2, 3], [4, 5]], [[202, 203], [200, 201], [104, 105]]],
            [[[1, 1], [1, 1], [1, 1]], [[0, 0], [0, 0], [1, 1]], [[1, 1], [1, 1]]],
        ),
    ],
)
def test_embedding_lookup_over_shards_follows_the_partition_strategy(
    strategy, expected, shard_grads
):
    shards = [
        df.constant(np.arange(k * 100, k * 100 + n * 2, dtype=np.float32).reshape(n, 2))
        for k, n in enumerate([3, 3, 2])
    ]
    rows = df.nn.embedding_lookup(shards, [[0, 1, 2], [7, 6, 5]], partition_strategy=strategy)
    grads = [df.convert_to_tensor(g) for g in df.gradients(df.reduce_sum(rows), shards)]
    got = run([rows] + grads)
    assert got[0].tolist() == expected
    assert [g.tolist() for g in got[1:]] == shard_grads


def test_indexed_slices_are_fed_and_fetched_by_their_parts():
    values = df.placeholder(df.float32, [None, 2])
    indices = df.placeholder(df.int64, [None])
    slices = df.IndexedSlices(values, indices, df.constant([3, 2], df.int64))
    fed = {slices: df.IndexedSlicesValue(np.ones((1, 2), np.float32), np.array([2]), None)}
    with df.Session() as sess:
        got = sess.run({"sparse": slices, "dense": df.convert_to_tensor(slices)}, fed)
    np.testing.assert_array_equal(got["sparse"].indices, [2])
    np.testing.assert_array_equal(got["dense"], [[0, 0], [0, 0], [1, 1]])


def test_converting_needs_a_dense_shape_and_warns_when_the_shape_is_unknown():
    with pytest.raises(ValueError, match="no dense_shape"):
        df.convert_to_tensor(df.IndexedSlices(df.constant([[1.0]]), df.constant([0])))
    unknown = df.placeholder(df.int32, [2])
    with pytest.warns(UserWarning, match="unknown shape"):
        df.convert_to_tensor(df.IndexedSlices(df.constant([[1.0]]), df.constant([0]), unknown))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df.convert_to_tensor(df.IndexedSlices(df.constant([[1.0]]), df.constant([0]), [2, 1]))


def test_sparse_read_of_a_variable_is_a_gather_with_a_sparse_gradient():
    # TensorFlow's testWhileGrad_ResourceVarSparseRead: TF1 gives [0, 12, 0, 12, 0].
    var = df.Variable(np.ones(5, np.float32))
    rows = var.sparse_read([1, 3])
    assert rows.shape.as_list() == [2]
    (direct,) = df.gradients(df.reduce_sum(rows), var)
    assert isinstance(direct, df.IndexedSlices)
    _, total = df.while_loop(
        lambda i, _: i < 3,
        lambda i, x: (i + 1, x * df.reduce_sum(var.sparse_read([1, 3]))),
        [0, df.constant(1.0)],
    )
    (grad,) = df.gradients(total, var)
    assert run(df.convert_to_tensor(grad), init=[var]).tolist() == [0.0, 12.0, 0.0, 12.0, 0.0]

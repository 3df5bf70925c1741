"""SparseTensor and its ops, and gather_nd/scatter_nd: values against numpy and against what
TensorFlow 1.x gives (tensorflow-cpu 2.21, graph mode), TensorFlow's errors, feeds and fetches."""

import numpy as np
import pytest
from ops_testing import assert_same, evaluate

import dataflow as df

SP_INDICES = [[0, 0], [1, 2], [2, 1]]
SP_VALUES = np.array([1.0, 2.0, 3.0], np.float32)
DENSE = np.array([[1, 0, 0, 0], [0, 0, 2, 0], [0, 3, 0, 0]], np.float32)


def sparse():
    return df.SparseTensor(SP_INDICES, SP_VALUES, [3, 4])


def test_a_sparse_tensor_is_three_tensors_with_a_static_dense_shape():
    sp = sparse()
    assert (sp.indices.dtype, sp.values.dtype, sp.dense_shape.dtype) == (
        df.int64,
        df.float32,
        df.int64,
    )
    assert sp.shape.as_list() == [3, 4]
    with pytest.raises(ValueError, match="3 indices but values"):
        df.SparseTensor(SP_INDICES, [1.0, 2.0], [3, 4])


def test_to_dense_fills_the_default_elsewhere():
    assert_same(evaluate(df.sparse_tensor_to_dense(sparse())), DENSE)
    # TensorFlow 1.x: sparse_to_dense([0, 2], [4], 5., -1.) -> [5, -1, 5, -1]
    out = df.sparse_to_dense([0, 2], [4], 5.0, -1.0)
    assert out.shape.as_list() == [4]
    assert_same(evaluate(out), np.array([5.0, -1.0, 5.0, -1.0], np.float32))


@pytest.mark.parametrize(
    "indices, message",
    [
        ([[1], [0]], r"indices\[1\] = \[0\] is out of order. Many sparse ops require sorted"),
        ([[1], [1]], r"indices\[1\] = \[1\] is repeated"),
        ([[5]], r"indices\[0\] = \[5\] is out of bounds: need 0 <= index < \[3\]"),
    ],
)
def test_sparse_to_dense_checks_its_indices_as_tensorflow(indices, message):
    values = [1.0, 2.0][: len(indices)]
    with pytest.raises(df.errors.InvalidArgumentError, match=message):
        evaluate(df.sparse_to_dense(indices, [3], values))


def test_unordered_indices_pass_when_not_validated_and_after_reorder():
    sp = df.SparseTensor([[2, 1], [0, 0]], [3.0, 1.0], [3, 2])
    assert_same(
        evaluate(df.sparse_tensor_to_dense(sp, validate_indices=False)),
        np.array([[1, 0], [0, 0], [0, 3]], np.float32),
    )
    ordered = df.sparse_reorder(sp)
    assert_same(evaluate(ordered.indices), np.array([[0, 0], [2, 1]]))
    assert_same(
        evaluate(df.sparse.to_dense(ordered)), np.array([[1, 0], [0, 0], [0, 3]], np.float32)
    )


@pytest.mark.parametrize("adjoint_a, adjoint_b", [(False, False), (True, False), (False, True)])
def test_sparse_dense_matmul_equals_the_dense_product(adjoint_a, adjoint_b):
    b = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    a_dense = DENSE.T if adjoint_a else DENSE
    if adjoint_a:
        b = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    b_given = b.T.copy() if adjoint_b else b
    out = df.sparse_tensor_dense_matmul(sparse(), b_given, adjoint_a, adjoint_b)
    assert out.shape.as_list() == [a_dense.shape[0], 2]
    np.testing.assert_allclose(evaluate(out), a_dense @ b)


def test_sparse_dense_matmul_refuses_mismatched_inner_dimensions():
    with pytest.raises(df.errors.InvalidArgumentError, match="inner dimension does not match"):
        evaluate(df.sparse_tensor_dense_matmul(sparse(), np.ones((3, 2), np.float32)))


def test_sparse_placeholders_are_fed_and_fetched_as_values():
    sp = df.sparse_placeholder(df.float32, name="sp")
    assert [sp.indices.name, sp.values.name, sp.dense_shape.name] == [
        "sp/indices:0",
        "sp/values:0",
        "sp/shape:0",
    ]
    total = df.sparse_reduce_sum(sp, 1)
    value = df.SparseTensorValue([[0, 0], [1, 2]], [1.0, 2.0], [2, 3])
    with df.Session() as sess:
        assert_same(sess.run(total, {sp: value}), np.array([1.0, 2.0], np.float32))
        assert_same(sess.run(total, {sp: tuple(value)}), np.array([1.0, 2.0], np.float32))
        fetched = sess.run(sp, {sp: value})
    assert isinstance(fetched, df.SparseTensorValue)
    assert fetched.dense_shape.tolist() == [2, 3]


def test_sparse_add_with_a_dense_tensor_is_dense():
    out = df.sparse_add(sparse(), np.ones((3, 4), np.float32))
    assert_same(evaluate(out), DENSE + 1)


def run_sparse(sp):
    with df.Session() as sess:
        return sess.run(sp)


def two_sparse_operands():
    a = df.SparseTensor([[0, 1], [1, 0], [2, 2]], [1.0, 2.0, 3.0], [3, 3])
    b = df.SparseTensor([[0, 0], [1, 0], [2, 2]], [5.0, -2.0, 0.5], [3, 3])
    return a, b


def test_sparse_add_of_two_sparse_tensors_is_sparse_in_row_major_order():
    a, b = two_sparse_operands()
    out = df.sparse.add(a, b)
    assert isinstance(out, df.SparseTensor)
    assert out.indices.shape.as_list() == [None, 2] and out.dense_shape.shape.as_list() == [2]
    value = run_sparse(out)
    assert value.indices.tolist() == [[0, 0], [0, 1], [1, 0], [2, 2]]
    assert value.values.tolist() == [5.0, 1.0, 0.0, 3.5]


def test_sparse_add_drops_only_summed_values_below_the_threshold():
    a, b = two_sparse_operands()
    value = run_sparse(df.sparse_add(a, b, threshold=0.1))  # TensorFlow 2.21 gives the same
    assert value.indices.tolist() == [[0, 0], [0, 1], [2, 2]]
    assert value.values.tolist() == [5.0, 1.0, 3.5]
    small = df.SparseTensor([[0, 0]], [0.01], [3, 3])
    kept = run_sparse(df.sparse_add(small, df.SparseTensor([[1, 1]], [0.02], [3, 3]), 0.1))
    assert kept.values.tolist() == pytest.approx([0.01, 0.02])


def test_sparse_add_gradient_reaches_each_operands_values_where_they_survive():
    a, b = two_sparse_operands()
    out = df.sparse_add(a, b, threshold=0.1)
    weights = df.range(0.0, df.cast(df.shape(out.values)[0], df.float32))
    a_grad, b_grad = df.gradients(df.reduce_sum(out.values * weights), [a.values, b.values])
    assert evaluate(a_grad).tolist() == [1.0, 0.0, 2.0]  # TensorFlow 2.21 gives the same
    assert evaluate(b_grad).tolist() == [0.0, 0.0, 2.0]


def test_sparse_add_of_different_dense_shapes_fails_the_run():
    shape = df.placeholder(df.int64, [2])
    a = df.SparseTensor([[0, 0]], [1.0], shape)
    out = df.sparse_add(a, df.SparseTensor([[0, 0]], [1.0], [3, 3]))
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="shapes do not match"):
            sess.run(out.values, {shape: [2, 2]})
        assert sess.run(out.values, {shape: [3, 3]}).tolist() == [2.0]


def test_gather_nd_reads_slices_at_multi_indices():
    params = np.arange(24).reshape(2, 3, 4)
    out = df.gather_nd(params, [[1, 2], [0, 0]])
    assert out.shape.as_list() == [2, 4]
    assert_same(evaluate(out), params[[1, 0], [2, 0]])
    with pytest.raises(df.errors.InvalidArgumentError, match=r"\[0, 5\] does not index into"):
        evaluate(df.gather_nd([[1, 2], [3, 4]], [[0, 5]]))


def test_scatter_nd_adds_updates_into_zeros():
    # TensorFlow 1.x: scatter_nd([[1], [1], [3]], [1., 2., 3.], [5]) -> [0, 3, 0, 3, 0]
    out = df.scatter_nd([[1], [1], [3]], [1.0, 2.0, 3.0], [5])
    assert out.shape.as_list() == [5]
    assert_same(evaluate(out), np.array([0.0, 3.0, 0.0, 3.0, 0.0], np.float32))
    with pytest.raises(df.errors.InvalidArgumentError, match=r"\[7\] does not index into shape"):
        evaluate(df.scatter_nd([[7]], [1.0], [3]))

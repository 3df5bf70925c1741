"""SparseTensor, RaggedTensor and IndexedSlices in eager mode, as TensorFlow 2.21's.

Each holds eager tensors, prints its values as TF 2 does (with ``df.`` for ``tf.``), and goes
through the sparse and ragged ops and in and out of a df.function.  Every expected value is
TF 2.21's for the same program."""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture
def sparse(eager):
    return df.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4])


@pytest.fixture
def ragged(eager):
    return df.ragged.constant([[1, 2], [3]])


# -- eager tensors print their values --------------------------------------------------------------
def test_a_multi_line_eager_tensor_prints_its_value_on_lines_of_its_own(eager):
    matrix = df.constant([[1, 2], [3, 4]])
    assert str(matrix) == "df.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)"
    assert repr(matrix) == (
        "<df.Tensor: shape=(2, 2), dtype=int32, numpy=\narray([[1, 2],\n       [3, 4]], "
        "dtype=int32)>"
    )
    assert str(df.constant([1.0, 2.0])) == "df.Tensor([1. 2.], shape=(2,), dtype=float32)"


# -- SparseTensor ----------------------------------------------------------------------------------
def test_an_eager_sparse_tensor_holds_eager_parts(sparse):
    assert isinstance(sparse.indices, df.EagerTensor)
    assert sparse.indices.numpy().tolist() == [[0, 0], [1, 2]]
    assert sparse.values.numpy().tolist() == [1.0, 2.0]
    assert sparse.dense_shape.numpy().tolist() == [3, 4]
    assert sparse.shape.as_list() == [3, 4] and sparse.dtype == df.float32
    assert not hasattr(sparse, "numpy")  # TF 2.21's SparseTensor has none either


def test_an_eager_sparse_tensor_prints_its_parts_values(sparse):
    expected = (
        "SparseTensor(indices=df.Tensor(\n[[0 0]\n [1 2]], shape=(2, 2), dtype=int64), "
        "values=df.Tensor([1. 2.], shape=(2,), dtype=float32), "
        "dense_shape=df.Tensor([3 4], shape=(2,), dtype=int64))"
    )
    assert repr(sparse) == expected and str(sparse) == expected


def test_a_graph_sparse_tensor_prints_its_tensors_names():
    graph_sparse = df.SparseTensor([[0, 0]], [1.0], [3, 4])
    assert repr(graph_sparse).startswith("SparseTensor(indices=SparseTensor/indices:0,")


def test_sparse_ops_in_eager_mode(sparse):
    assert df.sparse.to_dense(sparse).numpy().tolist() == [
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 2.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ]
    assert float(df.sparse.reduce_sum(sparse)) == 3.0
    assert df.sparse.reduce_sum(sparse, axis=1).numpy().tolist() == [1.0, 2.0, 0.0]
    assert df.sparse.sparse_dense_matmul(sparse, df.ones([4, 2])).numpy().tolist() == [
        [1.0, 1.0],
        [2.0, 2.0],
        [0.0, 0.0],
    ]
    with_dense = df.sparse.add(sparse, df.ones([3, 4]))
    assert with_dense.numpy().tolist()[1] == [1.0, 1.0, 3.0, 1.0]


def test_sparse_ops_that_give_sparse_tensors_give_eager_ones(sparse):
    doubled = df.sparse.add(sparse, sparse)
    assert doubled.values.numpy().tolist() == [2.0, 4.0]
    assert doubled.indices.numpy().tolist() == [[0, 0], [1, 2]]
    assert "values=df.Tensor([2. 4.], shape=(2,), dtype=float32)" in repr(doubled)

    found = df.sparse.from_dense(df.constant([[0, 1], [2, 0]]))
    assert found.indices.numpy().tolist() == [[0, 1], [1, 0]]
    assert found.values.numpy().tolist() == [1, 2] and found.values.dtype == df.int32
    assert found.dense_shape.numpy().tolist() == [2, 2]

    transposed = df.sparse.transpose(sparse)
    assert transposed.indices.numpy().tolist() == [[0, 0], [2, 1]]
    assert transposed.dense_shape.numpy().tolist() == [4, 3]

    reordered = df.sparse.reorder(df.SparseTensor([[1, 0], [0, 0]], [1, 2], [2, 2]))
    assert reordered.indices.numpy().tolist() == [[0, 0], [1, 0]]
    assert reordered.values.numpy().tolist() == [2, 1]


# -- RaggedTensor ----------------------------------------------------------------------------------
def test_an_eager_ragged_tensor_prints_its_value(ragged):
    assert repr(ragged) == "<df.RaggedTensor [[1, 2], [3]]>" and str(ragged) == repr(ragged)
    assert repr(df.ragged.constant([[1.5, 2.0], [3.0]])) == "<df.RaggedTensor [[1.5, 2.0], [3.0]]>"
    assert repr(df.ragged.constant([[[1, 2], [3]], [[4]]])) == (
        "<df.RaggedTensor [[[1, 2], [3]], [[4]]]>"
    )
    assert repr(df.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)) == (
        "<df.RaggedTensor [[[1, 2],\n  [3, 4]], [[5, 6]]]>"
    )
    assert repr(df.ragged.constant([["a", "b"], ["c"]])) == (
        "<df.RaggedTensor [[b'a', b'b'], [b'c']]>"
    )
    assert repr(df.ragged.constant([[]])) == "<df.RaggedTensor [[]]>"
    no_rows = df.RaggedTensor.from_row_splits(df.zeros([0]), [0])
    assert repr(no_rows) == "<df.RaggedTensor []>"


def test_a_long_ragged_tensor_wraps_as_numpy_does(eager):
    rows = df.ragged.constant([list(range(i)) for i in range(12)])
    assert repr(rows) == (
        "<df.RaggedTensor [[], [0], [0, 1], [0, 1, 2], [0, 1, 2, 3], [0, 1, 2, 3, 4],\n"
        " [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 6, 7],\n"
        " [0, 1, 2, 3, 4, 5, 6, 7, 8], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],\n"
        " [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]>"
    )


def test_ragged_values_as_lists_and_arrays(ragged):
    assert ragged.to_list() == [[1, 2], [3]]
    rows = ragged.numpy()
    assert rows.dtype == object and [r.tolist() for r in rows] == [[1, 2], [3]]
    assert rows[0].dtype == np.int32
    uniform = df.ragged.constant([[1, 2], [3, 4]]).numpy()
    assert uniform.dtype == np.int32 and uniform.tolist() == [[1, 2], [3, 4]]
    nested = df.ragged.constant([[[1, 2], [3]], [[4]]])
    assert nested.to_list() == [[[1, 2], [3]], [[4]]]
    assert [[r.tolist() for r in row] for row in nested.numpy()] == [[[1, 2], [3]], [[4]]]
    assert df.RaggedTensor.from_row_splits(df.zeros([0, 3]), [0]).numpy().shape == (0, 0, 3)


def test_ragged_parts(ragged):
    assert ragged.row_splits.numpy().tolist() == [0, 2, 3]
    assert ragged.row_splits.dtype == df.int64
    assert ragged.flat_values.numpy().tolist() == [1, 2, 3]
    assert ragged.to_tensor().numpy().tolist() == [[1, 2], [3, 0]]
    assert ragged.shape.as_list() == [2, None]
    assert int(ragged.nrows()) == 2 and ragged.row_lengths().numpy().tolist() == [2, 1]


def test_numpy_of_a_graph_ragged_tensor_is_an_error():
    in_graph = df.ragged.constant([[1, 2], [3]])
    with pytest.raises(ValueError, match="only supported in eager mode"):
        in_graph.numpy()


def test_ragged_ops_in_eager_mode(ragged):
    assert repr(df.ragged.map_flat_values(df.multiply, ragged, 2)) == (
        "<df.RaggedTensor [[2, 4], [6]]>"
    )
    assert repr(ragged + 1) == "<df.RaggedTensor [[2, 3], [4]]>"
    assert df.reduce_sum(ragged, axis=1).numpy().tolist() == [3, 3]
    assert df.reduce_sum(ragged, axis=0).numpy().tolist() == [4, 2]
    assert int(df.reduce_sum(ragged)) == 6


def test_reduce_mean_of_a_ragged_tensor_divides_truly(ragged):
    means = df.reduce_mean(ragged, axis=1)
    assert means.dtype == df.float64 and means.numpy().tolist() == [1.5, 3.0]
    assert df.reduce_mean(ragged, axis=0).numpy().tolist() == [2.0, 2.0]
    assert float(df.reduce_mean(ragged)) == 2.0
    floats = df.ragged.constant([[1.0, 2.0], [3.0], []])
    row_means = df.reduce_mean(floats, axis=-1).numpy()
    assert row_means.dtype == np.float32
    assert row_means[:2].tolist() == [1.5, 3.0] and np.isnan(row_means[2])  # an empty row


def test_keepdims_keeps_a_reduced_ragged_dimension(eager):
    floats = df.ragged.constant([[1.0, 2.0], [3.0], []])
    assert df.reduce_sum(floats, axis=1, keepdims=True).numpy().tolist() == [[3.0], [3.0], [0.0]]
    assert df.reduce_sum(floats, axis=0, keepdims=True).numpy().tolist() == [[4.0, 2.0]]
    assert df.reduce_sum(floats, keepdims=True).numpy().tolist() == [[6.0]]
    assert df.reduce_mean(floats, keepdims=True).numpy().tolist() == [[2.0]]
    nested = df.ragged.constant([[[1.0, 2.0], [3.0]], [[4.0]]])
    assert repr(df.reduce_sum(nested, axis=2, keepdims=True)) == (
        "<df.RaggedTensor [[[3.0],\n  [3.0]], [[4.0]]]>"
    )
    assert repr(df.reduce_mean(nested, axis=2)) == "<df.RaggedTensor [[1.5, 3.0], [4.0]]>"
    assert df.reduce_sum(nested, axis=[1, 2]).numpy().tolist() == [6.0, 4.0]


def test_indexing_a_ragged_tensor(ragged):
    assert ragged[0].numpy().tolist() == [1, 2]
    assert ragged[-1].numpy().tolist() == [3]
    assert int(ragged[0, 1]) == 2
    assert repr(ragged[1:]) == "<df.RaggedTensor [[3]]>"
    assert repr(ragged[:, :1]) == "<df.RaggedTensor [[1],\n [3]]>"
    assert repr(df.ragged.constant([[[1, 2], [3]], [[4]]])[0]) == "<df.RaggedTensor [[1, 2], [3]]>"
    with pytest.raises(ValueError, match="Cannot index into an inner ragged dimension"):
        ragged[:, 0]


# -- IndexedSlices ---------------------------------------------------------------------------------
def test_the_gradient_of_a_gather_is_eager_indexed_slices(eager):
    table = df.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with df.GradientTape() as tape:
        total = df.reduce_sum(df.gather(table, [2, 0]))
    slices = tape.gradient(total, table)
    assert isinstance(slices, df.IndexedSlices)
    assert slices.values.numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert slices.indices.numpy().tolist() == [2, 0]
    assert slices.dense_shape.numpy().tolist() == [3, 2]
    assert slices.shape.as_list() == [3, 2] and slices.dtype == df.float32
    assert df.convert_to_tensor(slices).numpy().tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    # TF 2.21's str; its repr is Python's default, which says nothing: here repr is str.
    expected = (
        "IndexedSlices(indices=df.Tensor([2 0], shape=(2,), dtype=int32), "
        "values=df.Tensor(\n[[1. 1.]\n [1. 1.]], shape=(2, 2), dtype=float32), "
        "dense_shape=df.Tensor([3 2], shape=(2,), dtype=int32))"
    )
    assert str(slices) == expected and repr(slices) == expected


def test_indexed_slices_without_a_dense_shape_print_without_one(eager):
    slices = df.IndexedSlices(df.constant([[1.0, 2.0]]), df.constant([1]))
    assert str(slices) == (
        "IndexedSlices(indices=df.Tensor([1], shape=(1,), dtype=int32), "
        "values=df.Tensor([[1. 2.]], shape=(1, 2), dtype=float32))"
    )


# -- through df.function ---------------------------------------------------------------------------
def test_composites_go_into_and_come_out_of_a_function(sparse, ragged):
    @df.function
    def passes(st, rt):
        return df.sparse.reduce_sum(st) + df.cast(df.reduce_sum(rt), df.float32), st, rt * 2

    total, st, rt = passes(sparse, ragged)
    assert float(total) == 9.0
    assert isinstance(st, df.SparseTensor) and isinstance(st.values, df.EagerTensor)
    assert repr(st) == repr(sparse)
    assert repr(rt) == "<df.RaggedTensor [[2, 4], [6]]>"
    concrete = passes.get_concrete_function(sparse, ragged)
    assert len(concrete.outputs) == 6  # the total, three sparse parts, two ragged parts


def test_a_function_may_make_composites_from_tensors(eager):
    @df.function
    def rows(x):
        return df.RaggedTensor.from_row_lengths(x, [2, 1])

    @df.function
    def slices(x):
        return df.IndexedSlices(x, df.constant([0]), df.constant([3, 2]))

    assert repr(rows(df.constant([1, 2, 3]))) == "<df.RaggedTensor [[1, 2], [3]]>"
    made = slices(df.ones([1, 2]))
    assert made.indices.numpy().tolist() == [0] and made.dense_shape.numpy().tolist() == [3, 2]
    assert "RaggedTensorSpec(TensorShape([2, None]), df.int32, 1, df.int64)" in (
        rows.pretty_printed_concrete_signatures()
    )


def test_gradients_flow_through_a_function_of_a_sparse_tensor(eager):
    @df.function
    def weighted(st, w):
        return df.reduce_sum(df.sparse.sparse_dense_matmul(st, w))

    st = df.SparseTensor([[0, 0], [1, 2]], [1.0, 2.0], [3, 4])
    w = df.Variable(np.ones([4, 1], np.float32))
    with df.GradientTape() as tape:
        total = weighted(st, w)
    assert float(total) == 3.0
    assert tape.gradient(total, w).numpy().ravel().tolist() == [1.0, 0.0, 2.0, 0.0]

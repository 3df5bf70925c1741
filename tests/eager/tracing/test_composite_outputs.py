"""df.function returning composite tensors (RaggedTensor, SparseTensor) when called eagerly:
the call gives them back with eager parts, as ``tf.function`` does."""

import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager():
    with df.eager_mode():
        yield


def test_a_ragged_result_comes_back_with_eager_parts():
    @df.function
    def rows(values):
        return df.RaggedTensor.from_row_splits(values * 2.0, [0, 1, 3])

    result = rows(df.constant([1.0, 2.0, 3.0]))
    assert isinstance(result, df.RaggedTensor)
    assert result.to_list() == [[2.0], [4.0, 6.0]]
    assert result.flat_values.numpy().tolist() == [2.0, 4.0, 6.0]


def test_a_sparse_result_and_plain_values_in_a_structure():
    @df.function
    def parts(values):
        sparse = df.SparseTensor([[0, 1], [2, 0]], values, [3, 2])
        return {"sparse": sparse, "count": 2, "dense": df.sparse.to_dense(sparse)}

    result = parts(df.constant([5, 7]))
    assert result["count"] == 2
    assert result["sparse"].indices.numpy().tolist() == [[0, 1], [2, 0]]
    assert result["sparse"].values.numpy().tolist() == [5, 7]
    assert result["dense"].numpy().tolist() == [[0, 5], [0, 0], [7, 0]]
    assert "values=df.Tensor([5 7]" in repr(result["sparse"])


def test_a_ragged_result_under_a_tape_takes_gradients_to_its_values():
    x = df.constant([1.0, 2.0])
    with df.GradientTape() as tape:
        tape.watch(x)
        squares = df.function(lambda v: df.RaggedTensor.from_row_splits(v * v, [0, 1, 2]))(x)
    assert squares.to_list() == [[1.0], [4.0]]
    assert tape.gradient(squares.flat_values, x).numpy().tolist() == [2.0, 4.0]


def test_a_ragged_result_of_a_function_with_effects_waits_for_them():
    counter = df.Variable(0)

    @df.function
    def count_and_split(text):
        counter.assign_add(1)
        return df.strings.split(text)

    assert count_and_split(df.constant(["a b", "c"])).to_list() == [[b"a", b"b"], [b"c"]]
    assert count_and_split(df.constant(["d"])).to_list() == [[b"d"]]
    assert counter.numpy() == 2

"""`while_loop` shape invariants given as type specs (`df.TensorSpec`, `df.SparseTensorSpec`), as
TensorFlow takes them: a spec relaxes its variable's shape like a `TensorShape`, and must describe
the variable it stands beside, else TypeError."""

import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def keep_going(i, _):
    return i < 3


def grow(i, x):
    return i + 1, df.stack([x, x])


def pass_through(i, x):
    return i + 1, x


def sparse_vector():
    return df.SparseTensor([[0]], [1.0], [10])


def test_tensor_spec_relaxes_a_shape_as_tensor_shape_does():
    _, x = df.while_loop(
        keep_going,
        grow,
        [df.constant(0), df.constant([1])],
        [df.TensorSpec([], df.int32), df.TensorSpec(None, df.int32)],
    )
    assert x.shape.ndims is None
    with df.Session() as sess:
        assert sess.run(x).shape == (2, 2, 2, 1)


def test_tensor_spec_fits_python_numbers_as_constant_converts_them():
    i, _ = df.while_loop(
        keep_going, pass_through, [0, 1.0], [df.TensorSpec([], df.int32), df.TensorSpec([])]
    )
    with df.Session() as sess:
        assert sess.run(i) == 3


def test_sparse_tensor_spec_is_the_invariant_of_a_sparse_tensor():
    _, x = df.while_loop(
        keep_going,
        pass_through,
        [df.constant(0), sparse_vector()],
        [df.TensorSpec([], df.int32), df.SparseTensorSpec([None])],
    )
    assert isinstance(x, df.SparseTensor)
    assert x.dense_shape.shape.as_list() == [1]
    with df.Session() as sess:
        assert sess.run(x).dense_shape.tolist() == [10]


def test_sparse_tensor_spec_beside_a_dense_tensor_is_a_type_error():
    with pytest.raises(TypeError, match=r"SparseTensorSpec.*not compatible.*loop_vars\[1\]"):
        df.while_loop(
            keep_going,
            pass_through,
            [df.constant(0), df.constant([1])],
            [df.TensorSpec([], df.int32), df.SparseTensorSpec([None])],
        )


def test_tensor_spec_beside_a_sparse_tensor_is_a_type_error():
    with pytest.raises(TypeError, match=r"TensorSpec.*not compatible"):
        df.while_loop(
            keep_going,
            pass_through,
            [df.constant(0), sparse_vector()],
            [df.TensorSpec([], df.int32), df.TensorSpec(None)],
        )


def test_tensor_spec_of_another_dtype_is_a_type_error():
    with pytest.raises(TypeError, match=r"TensorSpec.*int32.*not compatible.*loop_vars\[0\]"):
        df.while_loop(
            keep_going,
            pass_through,
            [df.constant(0.0), sparse_vector()],
            [df.TensorSpec([], df.int32), df.SparseTensorSpec([None])],
        )


def test_tensor_spec_of_an_incompatible_shape_is_a_type_error():
    with pytest.raises(TypeError, match="not compatible"):
        df.while_loop(
            keep_going, pass_through, [df.constant(0), df.constant([1, 2])],
            [None, df.TensorSpec([3], df.int32)],
        )  # fmt: skip


def test_specs_inside_nested_loop_variables_are_checked_at_their_place():
    loop_vars = [df.constant(0), {"a": df.constant([1.0]), "b": df.constant(2)}]
    with pytest.raises(TypeError, match=r"loop_vars\[1\]\['b'\]"):
        df.while_loop(
            keep_going,
            pass_through,
            loop_vars,
            [None, {"a": df.TensorSpec([None]), "b": df.TensorSpec([], df.float32)}],
        )


def test_sparse_tensor_spec_compares_dtype_and_dense_shape():
    spec = df.SparseTensorSpec([None, 3], df.float32)
    assert spec.is_compatible_with(df.SparseTensorSpec([2, 3]))
    assert not spec.is_compatible_with(df.SparseTensorSpec([2, 4]))
    assert not spec.is_compatible_with(df.SparseTensorSpec([2, 3], df.int32))
    assert not spec.is_compatible_with(df.TensorSpec([2, 3]))
    assert spec == df.SparseTensorSpec([None, 3]) and hash(spec) == hash(
        df.SparseTensorSpec([None, 3])
    )


def test_sparse_tensor_spec_beside_a_ragged_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="SparseTensorSpec.*not compatible"):
        df.while_loop(
            keep_going,
            pass_through,
            [df.constant(0), df.ragged.constant([[1, 2], [3]])],
            [df.TensorSpec([], df.int32), df.SparseTensorSpec([None])],
        )

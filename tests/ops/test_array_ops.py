"""array_ops: layout, slicing, gathering, padding and creation ops against numpy, their static
shapes with partly known inputs, and their errors at build and run time."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from ops_testing import assert_same, evaluate, partially_known, placeholder_for, run

import dataflow as df

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


# -- identity and reshape --------------------------------------------------------------------------
def test_identity_and_stop_gradient_pass_values_through():
    x = df.placeholder(df.int32, [None])
    a, b = df.identity(x), df.stop_gradient(x)
    assert (a.op.type, b.op.type) == ("Identity", "StopGradient")
    value = np.array([1, 2], np.int32)
    assert_same(evaluate(a, {x: value}), value)
    assert_same(evaluate(b, {x: value}), value)


def test_identity_n_passes_values_and_gradients_through():
    a, b = df.placeholder(df.float32, [None]), df.constant(3.0)
    out = df.identity_n([a, b])
    assert [t.op.type for t in out] == ["IdentityN", "IdentityN"] and out[0].op is out[1].op
    assert out[0].shape.as_list() == [None] and out[1].shape.as_list() == []
    grads = df.gradients(out[0] * 2.0 + out[1], [a, b])
    value = np.array([1.0, 2.0], np.float32)
    (a_out, b_out), (da, db) = run([out, grads], {a: value})
    assert_same(a_out, value)
    assert b_out == 3.0 and db == 2.0  # b was broadcast over two elements
    assert_same(da, np.array([2.0, 2.0], np.float32))


def test_reshape_infers_the_minus_one_dimension():
    out = df.reshape(X, [4, -1])
    assert out.shape.as_list() == [4, 6]
    assert_same(evaluate(out), X.reshape(4, -1))


def test_reshape_of_partly_known_input_leaves_minus_one_unknown():
    x = placeholder_for(X, [False, True, True])
    out = df.reshape(x, [-1, 2])
    assert out.shape.as_list() == [None, 2]
    assert_same(evaluate(out, {x: X}), X.reshape(-1, 2))


def test_reshape_to_a_shape_computed_at_run_time():
    x = df.placeholder(df.float32, [None, 4])
    out = df.reshape(x, [df.shape(x)[0], 2, 2])
    assert out.shape.as_list() == [None, 2, 2]
    value = X.reshape(6, 4)
    assert_same(evaluate(out, {x: value}), value.reshape(6, 2, 2))


def test_reshape_to_a_shape_built_from_known_dimensions_is_fully_inferred():
    x = df.placeholder(df.float32, [None, 3, 4])
    out = df.reshape(x, [df.shape(x)[1], df.shape(x)[2], -1])
    assert out.shape.as_list() == [3, 4, None]
    y = df.placeholder(df.float32, [2, 3, 4])
    assert df.reshape(y, [df.shape(y)[0], -1]).shape.as_list() == [2, 12]


def test_reshape_to_a_fed_shape_has_only_the_rank_statically():
    shape = df.placeholder(df.int32, [2])
    out = df.reshape(X, shape)
    assert out.shape.as_list() == [None, None]
    assert_same(evaluate(out, {shape: [6, 4]}), X.reshape(6, 4))


def test_reshape_with_the_wrong_number_of_elements_raises_value_error():
    with pytest.raises(ValueError, match="24 elements"):
        df.reshape(X, [5, 5])


def test_reshape_with_two_minus_ones_raises_value_error():
    with pytest.raises(ValueError, match="more than one -1"):
        df.reshape(X, [-1, -1])


def test_reshape_that_does_not_fit_at_run_time_fails_the_run():
    x = df.placeholder(df.float32, [None])
    with pytest.raises(df.errors.InvalidArgumentError):
        run(df.reshape(x, [2, 2]), {x: np.zeros(5, np.float32)})


# -- transpose, expand_dims, squeeze ---------------------------------------------------------------
def test_transpose_without_perm_reverses_the_axes():
    x = placeholder_for(X, [True, False, True])
    out = df.transpose(x)
    assert out.shape.as_list() == [4, None, 2]
    assert_same(evaluate(out, {x: X}), X.T)


def test_transpose_with_perm():
    out = df.transpose(X, [1, 0, 2])
    assert_same(evaluate(out), X.transpose(1, 0, 2))


def test_transpose_with_a_bad_perm_raises_value_error():
    with pytest.raises(ValueError, match="permutation"):
        df.transpose(X, [0, 0, 1])


@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
def test_expand_dims_matches_numpy(axis):
    out = df.expand_dims(X, axis)
    assert_same(evaluate(out), np.expand_dims(X, axis))


def test_expand_dims_axis_out_of_range_raises_value_error():
    with pytest.raises(ValueError, match="out of range"):
        df.expand_dims(X, 4)


def test_squeeze_removes_listed_or_all_unit_dimensions():
    x = np.zeros((1, 3, 1, 2), np.float32)
    assert_same(evaluate(df.squeeze(x)), np.zeros((3, 2), np.float32))
    assert_same(evaluate(df.squeeze(x, [2])), np.zeros((1, 3, 2), np.float32))
    assert_same(evaluate(df.squeeze(x, squeeze_dims=[-4])), np.zeros((3, 1, 2), np.float32))


def test_squeeze_with_an_empty_axis_list_removes_every_unit_dimension():
    x = np.zeros((1, 3, 1), np.float32)
    assert_same(evaluate(df.squeeze(x, [])), np.zeros(3, np.float32))
    assert_same(evaluate(df.squeeze(x, ())), np.zeros(3, np.float32))


def test_squeeze_of_one_dimension_named_twice_removes_it_once():
    x = np.zeros((1, 3, 1), np.float32)
    assert_same(evaluate(df.squeeze(x, [0, -3])), np.zeros((3, 1), np.float32))
    p = df.placeholder(df.float32)
    assert_same(evaluate(df.squeeze(p, [2, -1]), {p: x}), np.zeros((1, 3), np.float32))


def test_squeeze_of_a_dimension_that_is_not_one_raises_value_error():
    with pytest.raises(ValueError, match="squeeze"):
        df.squeeze(X, [1])


def test_squeeze_of_a_dimension_that_is_not_one_at_run_time_fails_the_run():
    x = df.placeholder(df.float32, [None, 2])
    with pytest.raises(df.errors.InvalidArgumentError):
        run(df.squeeze(x, [0]), {x: np.zeros((3, 2), np.float32)})


# -- concat, stack, unstack, split -----------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_matches_numpy_with_unknown_dimensions(axis):
    a, b = X, X * 2
    pa, pb = placeholder_for(a, [False, True, True]), placeholder_for(b, [True, True, False])
    out = df.concat([pa, pb], axis)
    expected = np.concatenate([a, b], axis)
    assert out.shape.is_compatible_with(expected.shape)
    assert_same(evaluate(out, {pa: a, pb: b}), expected)


def test_concat_adds_known_sizes_along_the_axis():
    out = df.concat([df.zeros([2, 3]), df.placeholder(df.float32, [None, 5])], axis=1)
    assert out.shape.as_list() == [2, 8]


def test_concat_of_one_tensor_is_an_identity():
    assert df.concat([df.zeros([2])], 0).op.type == "Identity"


def test_concat_with_mismatched_dimensions_raises_value_error():
    with pytest.raises(ValueError, match="Dimension 1"):
        df.concat([df.zeros([2, 3]), df.zeros([2, 4])], 0)


def test_concat_of_different_ranks_raises_value_error():
    with pytest.raises(ValueError, match="rank"):
        df.concat([df.zeros([2, 3]), df.zeros([2])], 0)


def test_concat_of_different_dtypes_raises_type_error():
    with pytest.raises(TypeError):
        df.concat([df.zeros([2]), df.constant([1, 2])], 0)


@pytest.mark.parametrize("axis", [0, 1, 3, -1])
def test_stack_matches_numpy(axis):
    pa = placeholder_for(X, [False, True, True])
    out = df.stack([pa, X + 1], axis=axis)
    expected = np.stack([X, X + 1], axis)
    assert out.shape.is_compatible_with(expected.shape)
    assert_same(evaluate(out, {pa: X}), expected)


def test_stack_of_python_numbers_and_scalar_tensors():
    n = df.placeholder(df.int32, [])
    out = df.stack([1, n, 3])
    assert out.shape.as_list() == [3]
    assert_same(evaluate(out, {n: 2}), np.array([1, 2, 3], np.int32))


def test_stack_of_python_values_along_axis_0_is_one_constant_of_their_common_dtype():
    out = df.stack([1, 2.5])
    assert out.op.type == "Const"
    assert_same(evaluate(out), np.array([1.0, 2.5], np.float32))
    assert_same(evaluate(df.stack([[1, 2], [3, 4.5]])), np.array([[1, 2], [3, 4.5]], np.float32))
    assert_same(evaluate(df.stack([1, 2])), np.array([1, 2], np.int32))


def test_stack_of_mixed_python_values_along_another_axis_raises_type_error():
    with pytest.raises(TypeError):
        df.stack([[1, 2], [3.5, 4]], axis=1)


def test_stack_of_different_shapes_raises_value_error():
    with pytest.raises(ValueError, match="one shape"):
        df.stack([df.zeros([2]), df.zeros([3])])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_unstack_takes_num_from_the_static_shape(axis):
    parts = df.unstack(X, axis=axis)
    assert len(parts) == X.shape[axis]
    for part, expected in zip(evaluate(parts), np.moveaxis(X, axis, 0)):
        assert_same(part, expected)


def test_unstack_of_an_unknown_dimension_needs_num():
    x = df.placeholder(df.float32, [None, 2])
    with pytest.raises(ValueError, match="num"):
        df.unstack(x)
    parts = df.unstack(x, num=3)
    value = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert_same(evaluate(parts, {x: value})[2], value[2])


def test_unstack_of_a_single_slice_gives_a_list_of_one():
    (part,) = df.unstack(df.zeros([1, 2]))
    assert_same(evaluate(part), np.zeros(2, np.float32))


def test_unstack_with_the_wrong_num_at_run_time_fails_the_run():
    x = df.placeholder(df.float32, [None])
    with pytest.raises(df.errors.InvalidArgumentError, match="unstack"):
        run(df.unstack(x, num=2), {x: np.zeros(3, np.float32)})


def test_split_into_equal_parts():
    parts = df.split(X, 2, axis=2)
    assert [p.shape.as_list() for p in parts] == [[2, 3, 2], [2, 3, 2]]
    for part, expected in zip(evaluate(parts), np.split(X, 2, axis=2)):
        assert_same(part, expected)


def test_split_by_sizes_with_one_inferred():
    x = placeholder_for(X, [True, True, False])
    parts = df.split(x, [1, -1, 2], axis=-1)
    assert [p.shape.as_list() for p in parts] == [[2, 3, 1], [2, 3, None], [2, 3, 2]]
    for part, expected in zip(evaluate(parts, {x: X}), np.split(X, [1, 2], axis=-1)):
        assert_same(part, expected)


def test_split_into_one_part_gives_a_list_of_one():
    (part,) = df.split(X, 1)
    assert_same(evaluate(part), X)


def test_split_that_does_not_divide_raises_value_error():
    with pytest.raises(ValueError, match="cannot be split"):
        df.split(X, 3, axis=2)


def test_split_sizes_that_do_not_add_up_raise_value_error():
    with pytest.raises(ValueError, match="add up"):
        df.split(X, [1, 1], axis=2)


def test_split_that_does_not_divide_at_run_time_fails_the_run():
    x = df.placeholder(df.float32, [None])
    with pytest.raises(df.errors.InvalidArgumentError, match="split"):
        run(df.split(x, 2), {x: np.zeros(3, np.float32)})


# -- slice, strided_slice and indexing -------------------------------------------------------------
def test_slice_with_size_minus_one_goes_to_the_end():
    out = df.slice(X, [1, 1, 0], [-1, 2, 3])
    assert out.shape.as_list() == [1, 2, 3]
    assert_same(evaluate(out), X[1:, 1:3, 0:3])


def test_slice_with_begin_computed_at_run_time():
    begin = df.placeholder(df.int32, [3])
    out = df.slice(X, begin, [1, 1, 2])
    assert out.shape.as_list() == [1, 1, 2]
    assert_same(evaluate(out, {begin: [1, 2, 2]}), X[1:2, 2:3, 2:4])


def test_slice_out_of_bounds_raises_value_error():
    with pytest.raises(ValueError, match="out of bounds"):
        df.slice(X, [0, 0, 3], [1, 1, 2])


def test_slice_out_of_bounds_at_run_time_fails_the_run():
    begin = df.placeholder(df.int32, [3])
    with pytest.raises(df.errors.InvalidArgumentError, match="out of bounds"):
        run(df.slice(X, begin, [1, 1, 2]), {begin: [0, 0, 3]})


@st.composite
def index_keys(draw, ndim):
    """A numpy basic index for an array of ``ndim`` dimensions."""
    bound = st.one_of(st.none(), st.integers(-6, 6))
    items = []
    consumed = 0
    ellipsis = False
    for _ in range(draw(st.integers(0, ndim + 2))):
        kind = draw(st.sampled_from(["slice", "int", "newaxis", "ellipsis"]))
        if kind == "slice" and consumed < ndim:
            step = draw(st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0)))
            items.append(slice(draw(bound), draw(bound), step))
            consumed += 1
        elif kind == "int" and consumed < ndim:
            items.append(draw(st.integers(-1, 1)))
            consumed += 1
        elif kind == "newaxis":
            items.append(None)
        elif kind == "ellipsis" and not ellipsis:
            items.append(Ellipsis)
            ellipsis = True
    return tuple(items)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_getitem_matches_numpy_basic_indexing(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=4, min_side=2, max_side=5))
    x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    key = data.draw(index_keys(x.ndim))
    with df.Graph().as_default():
        px = data.draw(partially_known(x))
        out = px[key]
        assert out.op.type == "StridedSlice"
        assert_same(evaluate(out, {px: x}), x[key])


def test_getitem_with_a_scalar_tensor_index():
    i = df.placeholder(df.int32, [])
    out = df.constant(X)[i, :, i + 1]
    assert out.shape.as_list() == [3]
    assert_same(evaluate(out, {i: 1}), X[1, :, 2])


def test_getitem_with_int64_tensor_bounds_in_a_slice():
    i = df.placeholder(df.int64, [])
    out = df.constant(X)[:, i:]
    assert out.shape.as_list() == [2, None, 4]
    assert_same(evaluate(out, {i: 1}), X[:, 1:])


def test_getitem_with_newaxis_and_ellipsis():
    out = df.constant(X)[df.newaxis, ..., 1]
    assert out.shape.as_list() == [1, 2, 3]
    assert_same(evaluate(out), X[None, ..., 1])


def test_getitem_op_is_named_strided_slice():
    assert df.constant(X)[0].op.name == "strided_slice"


@pytest.mark.parametrize("key", [1.5, [[0, 1]], True, "a"])
def test_getitem_with_an_unsupported_index_raises_type_error(key):
    with pytest.raises(TypeError, match="valid indices"):
        df.constant(X)[key]


def test_getitem_with_a_vector_tensor_index_raises_type_error():
    with pytest.raises(TypeError, match="valid indices"):
        df.constant(X)[df.constant([0, 1])]


def test_getitem_out_of_range_raises_value_error():
    with pytest.raises(ValueError, match="out of bounds"):
        df.constant(X)[2]


def test_getitem_out_of_range_at_run_time_fails_the_run():
    i = df.placeholder(df.int32, [])
    with pytest.raises(df.errors.InvalidArgumentError, match="strided_slice"):
        run(df.constant(X)[i], {i: 5})


def test_getitem_with_too_many_indices_raises_value_error():
    with pytest.raises(ValueError, match="too long"):
        df.constant(X)[0, 0, 0, 0]


def test_strided_slice_with_masks_matches_python_slicing():
    # x[1:, :2, ::-2] written with TensorFlow's masks.
    out = df.strided_slice(X, [1, 0, 0], [0, 2, 0], [1, 1, -2], begin_mask=0b100, end_mask=0b101)
    assert_same(evaluate(out), X[1:, :2, ::-2])


def test_strided_slice_with_zero_stride_raises_value_error():
    with pytest.raises(ValueError, match="strides"):
        df.strided_slice(X, [0], [1], [0])


# -- gather, tile, pad -----------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_matches_numpy_take(axis):
    indices = np.array([[0, 1], [1, 1]], np.int64)
    px = placeholder_for(X, [False, True, True])
    out = df.gather(px, indices, axis=axis)
    expected = np.take(X, indices, axis=axis)
    assert out.shape.is_compatible_with(expected.shape)
    assert_same(evaluate(out, {px: X}), expected)


def test_gather_with_scalar_index_drops_the_axis():
    out = df.gather(X, 1, axis=1)
    assert out.shape.as_list() == [2, 4]
    assert_same(evaluate(out), X[:, 1])


@pytest.mark.parametrize("bad", [3, -1])
def test_gather_index_out_of_range_fails_the_run(bad):
    i = df.placeholder(df.int32, [None])
    with pytest.raises(df.errors.InvalidArgumentError, match=f"index {bad} is not in"):
        run(df.gather(X, i, axis=1), {i: [0, bad]})


def test_gather_gradient_has_the_static_shape_of_params():
    params = df.placeholder(df.float32, [3, None, 2])
    (grad,) = df.gradients(df.gather(params, [[1, 0], [1, 1]], axis=1), params)
    assert grad.shape.as_list() == [3, None, 2]
    x = df.constant(X)
    (grad,) = df.gradients(df.gather(x, [2, 0, 2], axis=1), x)
    assert grad.shape.as_list() == [2, 3, 4]
    expected = np.zeros((2, 3, 4), np.float32)
    expected[:, 0], expected[:, 2] = 1, 2
    assert_same(evaluate(grad), expected)


def test_gather_with_float_indices_raises_type_error():
    with pytest.raises(TypeError):
        df.gather(X, [0.5])


def test_tile_matches_numpy():
    x = placeholder_for(X, [True, False, True])
    out = df.tile(x, [2, 1, 3])
    assert out.shape.as_list() == [4, None, 12]
    assert_same(evaluate(out, {x: X}), np.tile(X, [2, 1, 3]))


def test_tile_with_multiples_fed_at_run_time():
    m = df.placeholder(df.int32, [3])
    out = df.tile(X, m)
    assert out.shape.as_list() == [None, None, None]
    assert_same(evaluate(out, {m: [1, 2, 1]}), np.tile(X, [1, 2, 1]))


def test_tile_with_the_wrong_number_of_multiples_raises_value_error():
    with pytest.raises(ValueError, match="multiples"):
        df.tile(X, [2, 2])


@pytest.mark.parametrize("mode", ["CONSTANT", "REFLECT", "SYMMETRIC", "reflect"])
def test_pad_matches_numpy(mode):
    paddings = [[1, 0], [2, 1], [0, 2]]
    px = placeholder_for(X, [False, True, True])
    out = df.pad(px, paddings, mode=mode)
    np_mode = {"CONSTANT": "constant", "REFLECT": "reflect", "SYMMETRIC": "symmetric"}
    expected = np.pad(X, paddings, mode=np_mode[mode.upper()])
    assert out.shape.is_compatible_with(expected.shape)
    assert out.shape[1:] == expected.shape[1:]
    assert_same(evaluate(out, {px: X}), expected)


def test_pad_with_constant_values_in_the_tensor_dtype():
    out = df.pad(df.constant([1, 2]), [[1, 1]], constant_values=9)
    assert_same(evaluate(out), np.array([9, 1, 2, 9], np.int32))


def test_pad_of_bools_pads_with_false():
    out = df.pad(df.constant([True]), [[1, 2]])
    assert_same(evaluate(out), np.array([False, True, False, False]))


def test_pad_of_ints_with_a_float_zero_pads_with_zero():
    assert_same(evaluate(df.pad(df.constant([3]), [[1, 0]], constant_values=0.0)), np.int32([0, 3]))


def test_reflect_padding_as_wide_as_the_dimension_raises_value_error():
    with pytest.raises(ValueError, match="at most"):
        df.pad(df.zeros([3]), [[3, 0]], mode="REFLECT")


def test_pad_with_the_wrong_number_of_pairs_raises_value_error():
    with pytest.raises(ValueError, match="per dimension"):
        df.pad(X, [[1, 1]])


def test_pad_with_an_unknown_mode_raises_value_error():
    with pytest.raises(ValueError, match="mode"):
        df.pad(X, [[0, 0]] * 3, mode="EDGE")


# -- creating tensors ------------------------------------------------------------------------------
def test_fill_with_dims_fed_at_run_time():
    dims = df.placeholder(df.int32, [2])
    out = df.fill(dims, 7)
    assert out.dtype is df.int32 and out.shape.as_list() == [None, None]
    assert_same(evaluate(out, {dims: [2, 3]}), np.full((2, 3), 7, np.int32))


def test_fill_with_a_non_scalar_value_raises_value_error():
    with pytest.raises(ValueError, match="scalar"):
        df.fill([2], [1.0, 2.0])


def test_zeros_and_ones_of_small_known_shapes_are_constants():
    z = df.zeros([2, 3], df.int64)
    o = df.ones((2,), dtype=df.bool)
    assert z.op.type == "Const" and z.op.name == "zeros"
    assert_same(evaluate(z), np.zeros((2, 3), np.int64))
    assert_same(evaluate(o), np.ones(2, np.bool_))


def test_zeros_of_a_large_or_computed_shape_is_a_fill():
    big = df.zeros([100, 100])
    assert big.op.type == "Fill" and big.shape.as_list() == [100, 100]
    n = df.placeholder(df.int32, [])
    out = df.ones([n, 2])
    assert out.op.type == "Fill" and out.shape.as_list() == [None, 2]
    assert_same(evaluate(out, {n: 3}), np.ones((3, 2), np.float32))


def test_zeros_of_a_slice_of_a_shape_keeps_the_known_dimensions():
    x = df.placeholder(df.float32, [None, 3, None, 4])
    out = df.zeros(df.shape(x)[1:])
    assert out.shape.as_list() == [3, None, 4]
    assert df.fill(df.shape(x)[::-2], 1.0).shape.as_list() == [4, 3]
    assert df.ones(df.shape(x)[:-1]).shape.as_list() == [None, 3, None]
    value = np.zeros((2, 3, 5, 4), np.float32)
    assert_same(evaluate(out, {x: value}), np.zeros((3, 5, 4), np.float32))


def test_zeros_like_and_ones_like_of_a_partly_known_shape():
    x = df.placeholder(df.float32, [None, 2])
    value = np.ones((3, 2), np.float32)
    z, o = df.zeros_like(x), df.ones_like(x, dtype=df.int32)
    assert z.shape.as_list() == [None, 2] and o.shape.as_list() == [None, 2]
    assert_same(evaluate(z, {x: value}), np.zeros((3, 2), np.float32))
    assert_same(evaluate(o, {x: value}), np.ones((3, 2), np.int32))


def test_zeros_like_of_a_known_shape_does_not_need_the_tensor_fed():
    x = df.placeholder(df.float32, [2])
    assert_same(evaluate(df.zeros_like(x)), np.zeros(2, np.float32))


# -- shape queries ---------------------------------------------------------------------------------
def test_shape_size_and_rank_of_a_known_shape_are_constants():
    x = df.placeholder(df.float32, [2, 3])
    for t in (df.shape(x), df.size(x), df.rank(x)):
        assert t.op.type == "Const"
    assert_same(evaluate(df.shape(x, out_type=df.int64)), np.array([2, 3], np.int64))
    assert_same(evaluate(df.size(x)), np.int32(6))


def test_shape_size_and_rank_of_an_unknown_shape_are_computed_at_run_time():
    x = df.placeholder(df.float32)
    s, n, r = df.shape(x), df.size(x, out_type=df.int64), df.rank(x)
    assert (s.op.type, n.op.type, r.op.type) == ("Shape", "Size", "Rank")
    assert s.shape.as_list() == [None]
    value = np.zeros((2, 5), np.float32)
    assert_same(evaluate(s, {x: value}), np.array([2, 5], np.int32))
    assert_same(evaluate(n, {x: value}), np.int64(10))
    assert_same(evaluate(r, {x: value}), np.int32(2))


# -- range and one_hot -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, dtype",
    [
        ((5,), np.int32),
        ((2, 9, 3), np.int32),
        ((9, 2, -2), np.int32),
        ((0, 1, 0.25), np.float32),
        ((1.5, 0, -0.5), np.float32),
        ((3, 3), np.int32),
    ],
)
def test_range_matches_numpy_arange(args, dtype):
    out = df.range(*args)
    assert out.dtype is df.as_dtype(dtype)
    assert_same(evaluate(out), np.arange(*args, dtype=dtype))


def test_range_takes_the_widest_dtype_of_its_arguments():
    assert df.range(df.constant(0, dtype=df.int64), 5).dtype is df.int64
    assert df.range(0, 5, dtype=df.float64).dtype is df.float64


@settings(max_examples=100, deadline=None)
@given(
    st.floats(-50, 50, width=32),
    st.floats(-50, 50, width=32),
    st.sampled_from([0.1, 0.3, 0.7, 1.1, 2.0]),
)
def test_range_static_length_equals_the_run_time_length(start, limit, delta):
    if limit < start:
        start, limit = limit, start
    with df.Graph().as_default():
        out = df.range(start, limit, delta)
        assert out.shape.is_fully_defined()
        evaluate(out)


def test_range_with_zero_delta_raises_value_error():
    with pytest.raises(ValueError, match="delta"):
        df.range(0, 5, 0)


def test_range_going_the_wrong_way_raises_value_error():
    with pytest.raises(ValueError, match="start <= limit"):
        df.range(5, 0, 1)


def test_range_with_fed_limit_and_a_bad_delta_fails_the_run():
    delta = df.placeholder(df.int32, [])
    out = df.range(0, 4, delta)
    assert out.shape.as_list() == [None]
    assert_same(evaluate(out, {delta: 2}), np.array([0, 2], np.int32))
    with pytest.raises(df.errors.InvalidArgumentError, match="delta"):
        run(out, {delta: 0})


@pytest.mark.parametrize("axis", [None, -1, 0, 1])
def test_one_hot_matches_a_numpy_reference(axis):
    indices = np.array([[0, 2, -1], [1, 3, 2]], np.int32)
    out = df.one_hot(indices, 3, axis=axis)
    expected = (indices[..., None] == np.arange(3)).astype(np.float32)
    if axis not in (None, -1):
        expected = np.moveaxis(expected, -1, axis)
    assert out.shape.as_list() == list(expected.shape)
    assert_same(evaluate(out), expected)


def test_one_hot_takes_the_dtype_of_on_and_off_values():
    out = df.one_hot([1, 0], 2, on_value=5, off_value=-1)
    assert_same(evaluate(out), np.array([[-1, 5], [5, -1]], np.int32))


def test_one_hot_with_depth_fed_at_run_time():
    depth = df.placeholder(df.int32, [])
    out = df.one_hot([1], depth, on_value=True, off_value=False)
    assert out.shape.as_list() == [1, None]
    assert_same(evaluate(out, {depth: 3}), np.array([[False, True, False]]))


def test_one_hot_of_dtype_bool_needs_bool_on_and_off_values():
    # As in TensorFlow, the default on/off values 1 and 0 do not convert to bool.
    with pytest.raises(TypeError):
        df.one_hot([1], 3, dtype=df.bool)


def test_one_hot_with_float_indices_raises_type_error():
    with pytest.raises(TypeError):
        df.one_hot([0.5], 2)


def test_one_hot_with_on_and_off_values_of_different_dtypes_raises_type_error():
    # Without dtype= each value keeps its own dtype: 1.0 is float32 and 0 is int32.
    with pytest.raises(TypeError, match="off_value"):
        df.one_hot([0, 1], 2, on_value=1.0, off_value=0)
    with pytest.raises(TypeError, match="off_value"):
        df.one_hot([0, 1], 2, on_value=df.constant(2.0), off_value=0)
    out = df.one_hot([0, 1], 2, on_value=2, off_value=0.5, dtype=df.float32)
    assert_same(evaluate(out), np.float32([[2, 0.5], [0.5, 2]]))


def test_one_hot_axis_below_minus_one_raises_value_error():
    with pytest.raises(ValueError, match="axis"):
        df.one_hot([[0, 1]], 3, axis=-2)


def test_one_hot_with_on_value_of_another_dtype_raises():
    with pytest.raises((TypeError, ValueError)):
        df.one_hot([0], 2, on_value=df.constant(1.0), dtype=df.int32)


def test_concat_of_one_tensor_is_an_identity_named_like_its_scope():
    out = df.concat([df.constant([1.0])], 0)
    assert out.op.type == "Identity" and out.name == "concat/concat:0"


def test_pad_is_named_after_the_kernel_tensorflow_picks():
    x = df.constant([[1.0]])
    assert df.pad(x, [[1, 1], [0, 0]]).name == "Pad:0"
    padded = df.pad(x, [[1, 0], [0, 1]], constant_values=7)
    assert padded.name == "PadV2:0"
    assert_same(evaluate(padded), np.float32([[7, 7], [1, 7]]))


def test_negative_paddings_are_a_value_error_even_for_an_unknown_shape():
    with pytest.raises(ValueError, match="non-negative"):
        df.pad(df.placeholder(df.float32), [[-1, 1], [0, 0]])


@pytest.mark.parametrize(
    "args, length", [((1, 5.0), 4), ((0, 1, 0.3), 4), ((np.int64(1), 4), 3), ((5, 1, -2), 2)]
)
def test_range_of_constants_of_mixed_dtypes_has_a_static_length(args, length):
    out = df.range(*args)
    assert out.shape.as_list() == [length]
    assert evaluate(out).shape == (length,)


def test_range_up_to_a_known_dimension_has_a_static_length():
    x = df.placeholder(df.float32, [2, None])
    out = df.range(df.shape(x)[0])
    assert out.shape.as_list() == [2]
    assert df.range(df.shape(x)[1]).shape.as_list() == [None]
    assert df.range(df.shape(x)[0] * 3 - 1).shape.as_list() == [5]
    assert df.range(0.0, df.cast(df.shape(x)[0], df.float32), 0.5).shape.as_list() == [4]
    assert_same(evaluate(out, {x: np.zeros((2, 5), np.float32)}), np.arange(2, dtype=np.int32))


def test_getitem_with_a_list_reads_it_as_a_tuple():
    x = df.constant(np.arange(6).reshape(2, 3))
    assert_same(evaluate(x[[1, 2]]), np.int64(5))
    assert_same(evaluate(x[[1]]), np.arange(3, 6))

"""math_ops: elementwise ops against numpy (with broadcasting and partly unknown static shapes),
dtypes that never drift, reductions, matmul, and errors at build and run time."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from ops_testing import assert_same, evaluate, partially_known, placeholder_for, run

import dataflow as df

FLOATS = [np.float16, np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8]
SIGNED_INTS = [np.int8, np.int16, np.int32, np.int64]


def small_arrays(dtype, shape, nonzero=False):
    if np.dtype(dtype).kind == "f":
        elements = st.floats(-100, 100, width=np.dtype(dtype).itemsize * 8)
    elif np.dtype(dtype).kind == "b":
        elements = st.booleans()
    else:
        low = 0 if np.dtype(dtype).kind == "u" else -20
        elements = st.integers(low, 20)
    if nonzero:
        elements = elements.filter(lambda v: v != 0)
    return hnp.arrays(dtype, shape, elements=elements)


def _floor_of_quotient(x, y):
    # Floats floor the true quotient (1.0 // 0.1 is 10); ints round toward -inf like Python.
    if np.result_type(x, y).kind == "f":
        return np.floor(np.true_divide(x, y))
    return np.floor_divide(x, y)


def _safe_pow(x, y):
    return np.power(x, np.abs(y) % 4 if y.dtype.kind in "iu" else y)


BINARY = [
    # (df function, numpy reference, dtypes, divisor must be non-zero)
    (df.add, np.add, FLOATS + INTS, False),
    (df.subtract, np.subtract, FLOATS + INTS, False),
    (df.multiply, np.multiply, FLOATS + INTS, False),
    (df.floordiv, _floor_of_quotient, FLOATS + INTS, True),
    (df.mod, np.mod, FLOATS + INTS, True),
    (df.realdiv, np.true_divide, FLOATS, True),
    (df.minimum, np.minimum, FLOATS + INTS, False),
    (df.maximum, np.maximum, FLOATS + INTS, False),
    (df.squared_difference, lambda x, y: np.square(x - y), FLOATS + [np.int32, np.int64], False),
    (df.equal, np.equal, FLOATS + INTS + [np.bool_], False),
    (df.not_equal, np.not_equal, FLOATS + INTS + [np.bool_], False),
    (df.less, np.less, FLOATS + INTS, False),
    (df.less_equal, np.less_equal, FLOATS + INTS, False),
    (df.greater, np.greater, FLOATS + INTS, False),
    (df.greater_equal, np.greater_equal, FLOATS + INTS, False),
    (df.logical_and, np.logical_and, [np.bool_], False),
    (df.logical_or, np.logical_or, [np.bool_], False),
    (df.logical_xor, np.logical_xor, [np.bool_], False),
]


@pytest.mark.parametrize(
    "fn, reference, dtypes, nonzero", BINARY, ids=[b[0].__name__ for b in BINARY]
)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_binary_op_matches_numpy_with_broadcasting(fn, reference, dtypes, nonzero, data):
    dtype = data.draw(st.sampled_from(dtypes))
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    x = data.draw(small_arrays(dtype, shapes.input_shapes[0]))
    y = data.draw(small_arrays(dtype, shapes.input_shapes[1], nonzero=nonzero))
    with df.Graph().as_default():
        px, py = data.draw(partially_known(x)), data.draw(partially_known(y))
        out = fn(px, py)
        assert out.shape.is_compatible_with(shapes.result_shape)
        with np.errstate(all="ignore"):
            expected = reference(x, y)
        assert_same(evaluate(out, {px: x, py: y}), expected, rtol=1e-3)


def test_pow_matches_numpy_for_small_integer_exponents():
    x = np.array([[-3, -1, 0, 2, 5]], np.int32)
    y = np.array([[0], [1], [3]], np.int32)
    assert_same(evaluate(df.pow(x, y)), np.power(x, y))
    xf = np.array([0.5, 2.0, 4.0], np.float32)
    assert_same(evaluate(df.pow(xf, np.float32(-0.5))), np.power(xf, np.float32(-0.5)))


UNARY = [
    (df.negative, np.negative, FLOATS + [np.int8, np.int32, np.int64]),
    (df.abs, np.abs, FLOATS + SIGNED_INTS),
    (df.sign, np.sign, FLOATS + SIGNED_INTS),
    (df.square, np.square, FLOATS + INTS),
    (df.sqrt, np.sqrt, FLOATS),
    (df.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS),
    (df.exp, np.exp, FLOATS),
    (df.log, np.log, FLOATS),
    (df.log1p, np.log1p, FLOATS),
    (df.sin, np.sin, FLOATS),
    (df.cos, np.cos, FLOATS),
    (df.tan, np.tan, FLOATS),
    (df.tanh, np.tanh, FLOATS),
    # The reference computes in float64: exp(-x) overflows float16 long before sigmoid underflows.
    (df.sigmoid, lambda x: (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype), FLOATS),
    (df.logical_not, np.logical_not, [np.bool_]),
]


@pytest.mark.parametrize("fn, reference, dtypes", UNARY, ids=[u[0].__name__ for u in UNARY])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_unary_op_matches_numpy_and_keeps_dtype(fn, reference, dtypes, data):
    dtype = data.draw(st.sampled_from(dtypes))
    x = data.draw(small_arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))
    with df.Graph().as_default():
        px = data.draw(partially_known(x))
        with np.errstate(all="ignore"):
            expected = reference(x).astype(dtype)
        assert_same(evaluate(fn(px), {px: x}), expected, rtol=2e-3, atol=1e-6)


# -- dtype rules -----------------------------------------------------------------------------------
def test_python_second_operand_takes_the_dtype_of_the_first():
    x = df.constant([1.0, 2.0], dtype=df.float32)
    assert df.add(x, 1).dtype is df.float32
    assert df.multiply(x, np.float64(2.0)).dtype is df.float32
    assert df.add(df.constant(3, dtype=df.int64), 2).dtype is df.int64
    assert_same(
        evaluate(df.maximum(df.constant([1, 5], df.int8), np.float64(2.7))), np.int8([2, 5])
    )


@pytest.mark.parametrize("fn", [df.add, df.subtract, df.equal, df.maximum, df.pow])
def test_python_first_operand_keeps_its_own_dtype_as_in_tensorflow(fn):
    # TensorFlow converts an op's inputs in order: the 1 becomes an int32 constant.
    x = df.constant([1.0, 2.0], dtype=df.float32)
    with pytest.raises(TypeError, match="Input 'y' of .* has type float32 .* type int32"):
        fn(1, x)
    assert fn(1.0, x).dtype in (df.float32, df.bool)


def test_reflected_operators_convert_the_python_operand_to_the_tensor_dtype():
    x = df.constant([1.0, 2.0], dtype=df.float32)
    y = 10 - x
    assert y.op.name == "sub" and y.op.inputs[0].op.name == "sub/x"
    assert_same(
        evaluate([y, 2**x, 3 // x, 5 % x, 1 / x]),
        [
            np.float32([9, 8]),
            np.float32([2, 4]),
            np.float32([3, 1]),
            np.float32([0, 1]),
            np.float32([1, 0.5]),
        ],
    )
    with pytest.raises(TypeError):
        2.5 - df.constant([1, 2])


@pytest.mark.parametrize("fn", [df.abs, df.negative, df.sign])
def test_sign_changes_of_unsigned_ints_are_type_errors(fn):
    with pytest.raises(TypeError):
        fn(df.constant([1], df.uint8))


@pytest.mark.parametrize("dtype", [df.uint8, df.int8, df.int16])
def test_squared_difference_of_narrow_ints_is_a_type_error(dtype):
    with pytest.raises(TypeError):
        df.squared_difference(df.constant([1], dtype), df.constant([2], dtype))


def test_python_float_with_fraction_on_an_int_tensor_raises_type_error():
    with pytest.raises(TypeError):
        df.add(df.constant([1, 2]), 2.5)


def test_tensors_of_different_dtypes_raise_type_error_naming_the_input():
    with pytest.raises(TypeError, match="Input 'y' of 'Add' Op has type int32"):
        df.add(df.constant(1.0), df.constant(1))


def test_constant_operand_is_created_in_the_scope_of_the_op():
    x = df.constant(1.0, name="x")
    out = df.add(x, 2.0)
    assert out.op.name == "Add"
    assert out.op.inputs[1].op.name == "Add/y"


def test_operand_is_converted_in_the_graph_of_the_tensor_not_the_default_one():
    g = df.Graph()
    with g.as_default():
        x = df.constant(1.0)
    out = df.add(x, 2.0)
    assert out.graph is g


@pytest.mark.parametrize(
    "fn", [df.sqrt, df.rsqrt, df.exp, df.log, df.log1p, df.sin, df.tanh, df.sigmoid]
)
def test_float_only_unary_op_of_an_int_tensor_raises_type_error(fn):
    with pytest.raises(TypeError, match="int32"):
        fn(df.constant([1, 2]))


def test_arithmetic_on_bool_tensors_raises_type_error():
    with pytest.raises(TypeError):
        df.add(df.constant(True), df.constant(False))


def test_logical_op_of_non_bool_raises_type_error():
    with pytest.raises(TypeError):
        df.logical_and(df.constant(1), df.constant(0))


def test_ordering_comparison_of_bools_raises_type_error():
    with pytest.raises(TypeError):
        df.less(df.constant(True), df.constant(False))


# -- shapes ----------------------------------------------------------------------------------------
def test_incompatible_static_shapes_raise_value_error_at_build_time():
    with pytest.raises(ValueError, match="Incompatible shapes"):
        df.add(df.zeros([2, 3]), df.zeros([4]))


def test_unknown_dimension_broadcast_against_known_one_takes_the_known_size():
    x = df.placeholder(df.float32, [None, 1, 3])
    y = df.placeholder(df.float32, [5, None])
    assert df.add(x, y).shape.as_list() == [None, 5, 3]


def test_unknown_rank_broadcasts_to_unknown_rank():
    x = df.placeholder(df.float32, None)
    assert df.add(x, df.zeros([3])).shape.ndims is None


def test_shapes_that_do_not_broadcast_at_run_time_fail_the_run():
    x = df.placeholder(df.float32, [None])
    out = df.add(x, df.zeros([3]))
    with pytest.raises(df.errors.InvalidArgumentError, match="Add"):
        run(out, {x: np.zeros(4, np.float32)})


# -- division --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "dtype, result",
    [
        (np.int8, np.float32),
        (np.uint8, np.float32),
        (np.int16, np.float32),
        (np.int32, np.float64),
        (np.int64, np.float64),
        (np.float16, np.float16),
        (np.float32, np.float32),
        (np.float64, np.float64),
    ],
)
def test_truediv_casts_integers_like_tensorflow(dtype, result):
    x = df.constant(np.array([7, 3, 1], dtype))
    out = df.truediv(x, np.array(2, dtype))
    assert out.dtype is df.as_dtype(result)
    assert out.op.type == "RealDiv" and out.op.name == "truediv"
    assert_same(evaluate(out), np.array([3.5, 1.5, 0.5], result))


def test_divide_is_true_division():
    out = df.divide(df.constant([3, 4]), 2)
    assert_same(evaluate(out), np.array([1.5, 2.0]))


def test_realdiv_of_integers_raises_type_error():
    with pytest.raises(TypeError):
        df.realdiv(df.constant(1), df.constant(2))


def test_float_division_by_zero_gives_inf_and_nan_without_warnings():
    x = df.constant([1.0, -1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = evaluate(df.truediv(x, 0.0))
        logs = evaluate(df.log(x))
    assert_same(value, np.array([np.inf, -np.inf, np.nan], np.float32))
    assert_same(logs, np.array([0.0, np.nan, -np.inf], np.float32))


def test_floordiv_and_mod_round_toward_negative_infinity_like_python():
    x = np.array([7, -7, 7, -7], np.int32)
    y = np.array([2, 2, -2, -2], np.int32)
    assert_same(evaluate(df.floordiv(x, y)), np.array([3, -4, -4, 3], np.int32))
    assert_same(evaluate(df.mod(x, y)), np.array([1, 1, -1, -1], np.int32))
    assert_same(evaluate(df.mod(np.float32(-7.5), np.float32(2))), np.float32(0.5))


def test_float_floordiv_is_the_floor_of_the_true_quotient():
    # Not Python's float //, which gives 9.0 for 1.0 // 0.1 and -1.0 for -5.0 // inf.
    x = np.array([1.0, -1.0, 5.0, -5.0, 7.5], np.float32)
    y = np.array([0.1, 0.1, np.inf, np.inf, -2.0], np.float32)
    out = evaluate(df.constant(x) // df.constant(y))
    assert_same(out, np.array([10.0, -10.0, 0.0, -0.0, -4.0], np.float32))
    assert np.signbit(out[3])
    one, tenth = df.constant(1.0, df.float64), df.constant(0.1, df.float64)
    assert_same(evaluate(df.floordiv(one, tenth)), np.float64(10.0))


@pytest.mark.parametrize("fn", [df.floordiv, df.mod])
def test_integer_division_by_zero_fails_the_run(fn):
    out = fn(df.constant([1, 2]), df.placeholder(df.int32, [2]))
    with pytest.raises(df.errors.InvalidArgumentError, match="Integer division by zero"):
        run(out, {out.op.inputs[1]: np.array([1, 0], np.int32)})


def test_integer_to_negative_integer_power_fails_the_run():
    y = df.placeholder(df.int32, [])
    with pytest.raises(df.errors.InvalidArgumentError):
        run(df.pow(df.constant(2), y), {y: -1})


# -- where and cast --------------------------------------------------------------------------------
def test_where_v2_picks_elementwise_with_broadcasting():
    cond = np.array([[True], [False]])
    x = df.placeholder(df.float32, [None, 3])
    out = df.where_v2(cond, x, 0.0)
    assert out.shape.as_list() == [2, 3]
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_same(evaluate(out, {x: value}), np.where(cond, value, np.float32(0)))


def test_where_with_a_condition_vector_picks_whole_rows():
    # TF1's Select: a vector condition lines up with the first dimension, not the last.
    a = np.arange(9, dtype=np.float32).reshape(3, 3)
    out = df.where([True, False, True], a, -a)
    assert out.op.type == "Select" and out.shape.as_list() == [3, 3]
    assert_same(evaluate(out), np.float32([[0, 1, 2], [-3, -4, -5], [6, 7, 8]]))
    columns = evaluate(df.where_v2([True, False, True], a, -a))
    assert_same(columns, np.float32([[0, -1, 2], [3, -4, 5], [6, -7, 8]]))


def test_where_with_a_scalar_condition_picks_a_whole_operand():
    a = np.ones((2, 2), np.float32)
    assert_same(evaluate(df.where(False, a, -a)), -a)


def test_where_does_not_broadcast_x_and_y():
    with pytest.raises(ValueError):
        df.where([True, False], [1.0, 2.0], 0.0)
    with pytest.raises(ValueError, match="one element per row"):
        df.where([True, False], np.ones((3, 2)), np.ones((3, 2)))


def test_where_checks_shapes_at_run_time_when_they_are_unknown():
    c = df.placeholder(df.bool)
    x = df.placeholder(df.float32)
    out = df.where(c, x, x)
    assert out.shape.ndims is None
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="Number of batches"):
            sess.run(out, {c: [True, False], x: np.ones((3, 2))})
        with pytest.raises(df.errors.InvalidArgumentError, match="'then' and 'cond'"):
            sess.run(out, {c: [[True, False]], x: np.ones((3, 2))})
        assert sess.run(out, {c: [True, False], x: np.ones((2, 2))}).shape == (2, 2)


def test_where_with_one_argument_gives_int64_coordinates_of_true_elements():
    cond = df.placeholder(df.bool, [None, 2])
    out = df.where(cond)
    assert out.dtype is df.int64 and out.shape.as_list() == [None, 2]
    value = np.array([[True, False], [True, True]])
    assert_same(evaluate(out, {cond: value}), np.argwhere(value).astype(np.int64))


def test_where_of_numbers_finds_the_non_zero_elements():
    assert_same(evaluate(df.where(df.constant([0, 3, 0, 1]))), np.array([[1], [3]], np.int64))


def test_where_of_a_scalar_condition_has_no_coordinates_and_raises():
    with pytest.raises(ValueError, match="rank at least 1"):
        df.where(df.constant(True))
    cond = df.placeholder(df.bool)
    with pytest.raises(df.errors.InvalidArgumentError, match="rank at least 1"):
        run(df.where(cond), {cond: True})


def test_where_needs_both_or_neither_of_x_and_y():
    with pytest.raises(ValueError, match="both"):
        df.where(df.constant(True), 1.0)


def test_where_with_a_non_bool_condition_and_values_raises_type_error():
    with pytest.raises(TypeError):
        df.where(df.constant([1, 0]), [1.0, 2.0], [3.0, 4.0])


def test_where_with_values_of_different_dtypes_raises_type_error():
    with pytest.raises(TypeError):
        df.where(df.constant([True]), df.constant([1.0]), df.constant([1]))


def test_cast_truncates_floats_toward_zero():
    out = df.cast(df.constant([1.7, -1.7, 0.2]), df.int32)
    assert_same(evaluate(out), np.array([1, -1, 0], np.int32))


def test_cast_to_bool_and_back():
    b = df.cast(df.constant([0.0, 2.5]), df.bool)
    assert_same(evaluate(b), np.array([False, True]))
    assert_same(evaluate(df.cast(b, df.float64)), np.array([0.0, 1.0]))


def test_cast_to_the_same_dtype_returns_the_tensor_itself():
    x = df.constant(1.0)
    assert df.cast(x, df.float32) is x


def test_cast_of_a_python_value_converts_it():
    assert_same(evaluate(df.cast(3, df.float64)), np.float64(3))


# -- clip, add_n, matmul ---------------------------------------------------------------------------
def test_clip_by_value_with_broadcast_bounds():
    x = df.placeholder(df.float32, [None, 3])
    out = df.clip_by_value(x, [0.0, -1.0, 1.0], 2.0)
    value = np.array([[-5, 0, 5], [1, 1, 1]], np.float32)
    expected = np.clip(value, np.array([0, -1, 1], np.float32), np.float32(2))
    assert_same(evaluate(out, {x: value}), expected)


def test_clip_by_value_with_min_above_max_gives_min_like_tensorflow():
    assert_same(evaluate(df.clip_by_value(df.constant([0.0, 5.0]), 3.0, 1.0)), np.float32([3, 3]))


def test_clip_bounds_that_would_grow_the_tensor_raise_value_error():
    with pytest.raises(ValueError, match="clip"):
        df.clip_by_value(df.zeros([3]), df.zeros([2, 3]), 1.0)


def test_add_n_sums_tensors_and_converts_python_values():
    x = df.placeholder(df.int32, [None])
    out = df.add_n([x, x, [1, 2]])
    assert out.op.type == "AddN" and out.shape.as_list() == [2]
    assert_same(evaluate(out, {x: np.array([3, 4], np.int32)}), np.array([7, 10], np.int32))


def test_add_n_of_one_tensor_is_that_tensor():
    x = df.constant(1.0)
    assert df.add_n([x]) is x


def test_add_n_of_different_shapes_raises_value_error():
    with pytest.raises(ValueError, match="one shape"):
        df.add_n([df.zeros([2]), df.zeros([3])])


def test_add_n_of_shapes_that_differ_at_run_time_fails_instead_of_broadcasting():
    x = df.placeholder(df.float32, [None])
    with pytest.raises(df.errors.InvalidArgumentError, match="one shape"):
        run(df.add_n([x, df.zeros([3])]), {x: np.zeros(1, np.float32)})


def test_add_n_of_nothing_raises_value_error():
    with pytest.raises(ValueError):
        df.add_n([])


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_with_transposes_matches_numpy(transpose_a, transpose_b):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4) if not transpose_a else (4, 3)).astype(np.float32)
    b = rng.standard_normal((4, 5) if not transpose_b else (5, 4)).astype(np.float32)
    pa, pb = placeholder_for(a, [False, True]), placeholder_for(b, [True, False])
    out = df.matmul(pa, pb, transpose_a=transpose_a, transpose_b=transpose_b)
    assert out.op.type == "MatMul"
    expected = (a.T if transpose_a else a) @ (b.T if transpose_b else b)
    assert_same(evaluate(out, {pa: a, pb: b}), expected, rtol=1e-5)


def test_batched_matmul_broadcasts_batch_dimensions():
    a = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 1, 3, 4)
    b = np.ones((5, 4, 2))
    out = df.matmul(a, b, adjoint_a=False)
    assert out.op.type == "BatchMatMulV2"
    assert out.shape.as_list() == [2, 5, 3, 2]
    assert_same(evaluate(out), np.matmul(a, b))


def test_matmul_of_int32_stays_int32():
    out = df.matmul(df.constant([[1, 2]]), df.constant([[3], [4]]))
    assert_same(evaluate(out), np.array([[11]], np.int32))


def test_matmul_inner_dimension_mismatch_raises_value_error():
    with pytest.raises(ValueError, match="Inner dimensions"):
        df.matmul(df.zeros([2, 3]), df.zeros([2, 3]))


def test_matmul_of_a_vector_raises_value_error():
    with pytest.raises(ValueError, match="rank"):
        df.matmul(df.zeros([3]), df.zeros([3, 2]))


def test_matmul_of_unknown_ranks_has_unknown_shape():
    out = df.matmul(df.placeholder(df.float32), df.placeholder(df.float32))
    assert out.shape.ndims is None
    value = np.ones((2, 2, 2), np.float32)
    assert_same(evaluate(out, {out.op.inputs[0]: value, out.op.inputs[1]: value}), value @ value)


# -- reductions ------------------------------------------------------------------------------------
REDUCTIONS = [
    (df.reduce_sum, lambda x, axis, keepdims: np.sum(x, axis, dtype=x.dtype, keepdims=keepdims)),
    (df.reduce_prod, lambda x, axis, keepdims: np.prod(x, axis, dtype=x.dtype, keepdims=keepdims)),
    (df.reduce_max, lambda x, axis, keepdims: np.max(x, axis, keepdims=keepdims)),
    (df.reduce_min, lambda x, axis, keepdims: np.min(x, axis, keepdims=keepdims)),
    (df.reduce_mean, lambda x, axis, keepdims: _mean_like_tensorflow(x, axis, keepdims)),
]


def _mean_like_tensorflow(x, axis, keepdims):
    if x.dtype.kind == "f":
        return np.mean(x, axis, keepdims=keepdims).astype(x.dtype)
    return np.trunc(np.mean(x, axis, keepdims=keepdims)).astype(x.dtype)


@st.composite
def arrays_and_axes(draw, dtypes):
    dtype = draw(st.sampled_from(dtypes))
    x = draw(small_arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4)))
    if draw(st.booleans()):
        axis = None
    else:
        axes = draw(st.lists(st.integers(0, max(x.ndim - 1, 0)), unique=True, max_size=x.ndim))
        axis = tuple(a - x.ndim if draw(st.booleans()) else a for a in axes)
        if x.ndim == 0:
            axis = ()
        if len(axis) == 1 and draw(st.booleans()):
            axis = axis[0]
    return x, axis


@pytest.mark.parametrize("fn, reference", REDUCTIONS, ids=[r[0].__name__ for r in REDUCTIONS])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_reduction_matches_numpy_in_the_input_dtype(fn, reference, data):
    x, axis = data.draw(arrays_and_axes([np.float32, np.float64, np.int32, np.int64, np.uint8]))
    keepdims = data.draw(st.booleans())
    with df.Graph().as_default():
        px = data.draw(partially_known(x))
        out = fn(px, axis=axis, keepdims=keepdims)
        assert out.dtype is px.dtype
        with np.errstate(all="ignore"):
            expected = reference(x, axis, keepdims)
        assert_same(evaluate(out, {px: x}), expected, rtol=1e-4)


@pytest.mark.parametrize("fn, reference", [(df.reduce_any, np.any), (df.reduce_all, np.all)])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_logical_reduction_matches_numpy(fn, reference, data):
    x, axis = data.draw(arrays_and_axes([np.bool_]))
    keepdims = data.draw(st.booleans())
    with df.Graph().as_default():
        px = data.draw(partially_known(x))
        out = fn(px, axis=axis, keepdims=keepdims)
        assert_same(evaluate(out, {px: x}), reference(x, axis, keepdims=keepdims))


def test_reduce_mean_of_int32_stays_int32_and_truncates_toward_zero():
    out = df.reduce_mean(df.constant([[-3, -4], [3, 4]]), axis=1)
    assert_same(evaluate(out), np.array([-3, 3], np.int32))


def test_reduce_sum_of_int32_stays_int32():
    assert_same(evaluate(df.reduce_sum(df.constant([1, 2, 3]))), np.int32(6))


def test_reduce_max_of_nothing_is_minus_infinity():
    assert_same(evaluate(df.reduce_max(df.zeros([0]))), np.float32(-np.inf))
    assert_same(
        evaluate(df.reduce_min(df.zeros([2, 0], df.int32), 1)), np.full(2, 2**31 - 1, np.int32)
    )


def test_reduction_accepts_tf1_keep_dims_and_reduction_indices():
    x = df.zeros([2, 3])
    assert df.reduce_sum(x, reduction_indices=[1], keep_dims=True).shape.as_list() == [2, 1]
    with pytest.raises(ValueError, match="both"):
        df.reduce_sum(x, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="both"):
        df.reduce_sum(x, keepdims=True, keep_dims=True)


def test_reduction_axis_may_be_a_constant_tensor():
    out = df.reduce_sum(df.ones([2, 3]), axis=df.constant([1]))
    assert out.shape.as_list() == [2]


def test_reduction_axes_computed_from_a_known_rank_are_known_when_the_graph_is_built():
    # range(1, rank(x)) and rank(x) - 1 are common ways to name axes in TensorFlow code.
    x = df.placeholder(df.float32, [None, 3, None])
    value = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    per_row = df.reduce_mean(x, axis=df.range(1, df.rank(x)))
    last = df.reduce_max(x, axis=df.rank(x) - 1, keepdims=True)
    assert per_row.shape.as_list() == [None] and last.shape.as_list() == [None, 3, 1]
    assert_same(evaluate(per_row, {x: value}), value.mean(axis=(1, 2)))
    assert_same(evaluate(last, {x: value}), value.max(axis=-1, keepdims=True))
    assert_same(evaluate(df.argmax(x, df.rank(x) - 2), {x: value}), value.argmax(1))


def test_reduction_axis_computed_at_run_time_raises_value_error():
    with pytest.raises(ValueError, match="known when the graph is built"):
        df.reduce_sum(df.ones([2, 3]), axis=df.placeholder(df.int32, []))
    x = df.placeholder(df.float32)
    with pytest.raises(ValueError, match="known when the graph is built"):
        df.reduce_sum(x, axis=df.range(1, df.rank(x)))


def test_reduction_axis_out_of_range_raises_value_error():
    with pytest.raises(ValueError, match="out of range"):
        df.reduce_sum(df.ones([2, 3]), axis=2)


def test_reduction_axis_named_twice_raises_value_error():
    with pytest.raises(ValueError, match="twice"):
        df.reduce_sum(df.ones([2, 3]), axis=[1, -1])


def test_reduction_of_unknown_rank_has_unknown_shape_unless_it_reduces_everything():
    x = df.placeholder(df.float32)
    assert df.reduce_sum(x, axis=1).shape.ndims is None
    assert df.reduce_sum(x).shape.as_list() == []


def test_reduction_axis_out_of_range_at_run_time_fails_the_run():
    x = df.placeholder(df.float32)
    with pytest.raises(df.errors.InvalidArgumentError):
        run(df.reduce_sum(x, axis=3), {x: np.zeros((2, 2), np.float32)})


def test_float_axis_raises_type_error():
    with pytest.raises(TypeError):
        df.reduce_sum(df.ones([2]), axis=0.5)


def test_reduce_any_of_numbers_raises_type_error():
    with pytest.raises(TypeError):
        df.reduce_any(df.ones([2]))


# -- argmax, argmin, cumsum ------------------------------------------------------------------------
def test_argmax_defaults_to_axis_0_and_int64():
    x = np.array([[1, 9, 3], [4, 2, 6]], np.float32)
    out = df.argmax(x)
    assert out.dtype is df.int64 and out.shape.as_list() == [3]
    assert_same(evaluate(out), np.array([1, 0, 1], np.int64))


def test_argmin_along_an_axis_with_int32_output():
    x = df.placeholder(df.int32, [None, 3])
    out = df.argmin(x, axis=-1, output_type=df.int32)
    value = np.array([[5, 1, 1], [0, 2, -3]], np.int32)
    assert_same(evaluate(out, {x: value}), np.array([1, 2], np.int32))


def test_argmax_accepts_tf1_dimension():
    assert df.argmax(df.zeros([2, 3]), dimension=1).shape.as_list() == [2]


def test_argmax_of_a_scalar_raises_value_error():
    with pytest.raises(ValueError):
        df.argmax(df.constant(1.0))


def test_argmax_axis_out_of_range_raises_value_error():
    with pytest.raises(ValueError, match="out of range"):
        df.argmax(df.zeros([2, 3]), axis=2)


def test_argmax_over_an_empty_axis_fails_the_run():
    x = df.placeholder(df.float32, [None])
    with pytest.raises(df.errors.InvalidArgumentError):
        run(df.argmax(x), {x: np.zeros(0, np.float32)})


def _cumsum_reference(x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis, dtype=x.dtype)
    if exclusive:
        out = out - x
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum_matches_numpy(exclusive, reverse, axis):
    x = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    px = placeholder_for(x, [False, True])
    out = df.cumsum(px, axis=axis, exclusive=exclusive, reverse=reverse)
    assert_same(evaluate(out, {px: x}), _cumsum_reference(x, axis, exclusive, reverse))


def test_cumsum_of_a_scalar_raises_value_error():
    with pytest.raises(ValueError):
        df.cumsum(df.constant(1.0))


def test_divide_without_a_name_is_the_operator():
    x = df.constant([2.0, 4.0])
    assert_same(evaluate(df.divide(1, x)), np.float32([0.5, 0.25]))
    with pytest.raises(TypeError):
        df.truediv(1, x)
    with pytest.raises(TypeError):
        df.divide(1, x, name="named")


def test_cast_of_a_python_value_converts_it_first_then_casts():
    out = df.cast([1.7, -1.7], df.int32)
    assert out.op.type == "Cast" and out.op.inputs[0].op.name == "Cast/x"
    assert_same(evaluate(out), np.int32([1, -1]))
    same = df.cast([1, 2], df.int32)
    assert same.op.type == "Const"


def test_add_n_of_a_single_tensor_instead_of_a_list_is_a_type_error():
    with pytest.raises(TypeError):
        df.add_n(df.constant([1.0, 2.0]))


def test_argmax_and_argmin_skip_nans_as_tensorflow_does():
    x = df.constant(
        [[np.nan, 1, 2], [1, np.nan, 0], [np.nan, np.nan, np.nan], [3, 1, np.nan]], df.float32
    )
    assert_same(evaluate(df.argmax(x, 1)), np.int64([2, 0, 0, 0]))
    assert_same(evaluate(df.argmin(x, 1)), np.int64([1, 2, 0, 1]))


def test_argmax_of_bools():
    assert_same(evaluate(df.argmax([False, True, True], output_type=df.int32)), np.int32(1))

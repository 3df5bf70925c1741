"""`constant` and `convert_to_tensor`: which values convert to which dtype, as tf.compat.v1."""

import numpy as np
import pytest

import dataflow as df
from tests.ops.ops_testing import assert_same, evaluate


@pytest.mark.parametrize(
    "value, dtype",
    [
        (2.0, df.int32),  # a Python float is no int, even a whole one
        ([1, 2.5], df.int64),
        ([np.float32(1.0)], df.int32),
        (1, df.bool),  # nor is a Python int a bool
        ([True, 0], df.bool),
        (1.0, df.bool),
        ("a", df.float32),
        (2**64, df.int64),
    ],
)
def test_python_value_of_another_kind_raises_type_error(value, dtype):
    with pytest.raises(TypeError):
        df.constant(value, dtype=dtype)
    with pytest.raises(TypeError):
        df.convert_to_tensor(value, dtype=dtype)


def test_python_ints_and_bools_convert_to_wider_kinds():
    assert_same(evaluate(df.constant([True, 3], dtype=df.float16)), np.array([1, 3], np.float16))
    assert_same(evaluate(df.constant(True, dtype=df.int32)), np.int32(1))


def test_python_ints_wrap_around_like_numpy():
    assert_same(evaluate(df.constant(300, dtype=df.uint8)), np.uint8(44))
    assert_same(evaluate(df.constant(-1, dtype=df.uint8)), np.uint8(255))
    assert_same(evaluate(df.constant(2**40, dtype=df.int32)), np.int32(0))


def test_numpy_values_are_cast_as_numpy_casts():
    assert_same(evaluate(df.constant(np.array([1.7, -1.7]), df.int32)), np.array([1, -1], np.int32))
    assert_same(evaluate(df.constant(np.float64(2.5), df.int32)), np.int32(2))
    assert_same(evaluate(df.constant(np.array([np.nan, 0.0]), df.bool)), np.array([True, False]))
    assert_same(evaluate(df.constant(np.array([300, -1]), df.uint8)), np.array([44, 255], np.uint8))


def test_preferred_dtype_is_used_only_when_the_value_converts_to_it():
    assert df.convert_to_tensor(2.0, preferred_dtype=df.int32).dtype is df.float32
    assert df.convert_to_tensor(1, preferred_dtype=df.bool).dtype is df.int32
    assert df.convert_to_tensor(2, preferred_dtype=df.int64).dtype is df.int64


def test_none_is_a_value_error():
    with pytest.raises(ValueError, match="None values not supported"):
        df.constant(None)
    with pytest.raises(ValueError, match="None values not supported"):
        df.convert_to_tensor(None, dtype=df.float32)


def test_shape_pads_a_short_value_with_its_last_element():
    assert_same(
        evaluate(df.constant([1, 2], shape=[2, 3])), np.array([[1, 2, 2], [2, 2, 2]], np.int32)
    )
    assert_same(evaluate(df.constant(np.arange(4), shape=[5])), np.array([0, 1, 2, 3, 3]))
    assert_same(evaluate(df.constant([], shape=[2])), np.zeros(2, np.float32))
    assert_same(
        evaluate(df.constant([[1, 2], [3, 4]], shape=[4])), np.array([1, 2, 3, 4], np.int32)
    )
    assert_same(evaluate(df.constant(7, shape=[0, 2])), np.zeros((0, 2), np.int32))


def test_shape_smaller_than_the_value_raises_value_error():
    with pytest.raises(ValueError, match="Too many elements"):
        df.constant([1, 2, 3], shape=[2])


def test_verify_shape_requires_the_exact_shape():
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        df.constant([1, 2], shape=[2, 1], verify_shape=True)
    assert df.constant([[1], [2]], shape=[2, 1], verify_shape=True).shape.as_list() == [2, 1]

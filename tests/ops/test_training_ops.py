"""The ops that the training surface adds: ``Floor`` and ``Ceil`` (for staircase and cycling
learning-rate schedules) and ``L2Loss`` (``df.nn.l2_loss``, for weight decay and global norms)."""

import numpy as np
import pytest
from ops_testing import assert_same, evaluate

import dataflow as df

VALUES = np.array([-2.5, -1.0, -0.5, 0.0, 0.5, 1.5, np.inf, np.nan])


@pytest.mark.parametrize("fn, reference", [(df.floor, np.floor), (df.ceil, np.ceil)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_floor_and_ceil_round_each_element_in_its_own_dtype(fn, reference, dtype):
    x = VALUES.astype(dtype)
    assert_same(evaluate(fn(df.constant(x))), reference(x))


@pytest.mark.parametrize("fn", [df.floor, df.ceil])
def test_floor_and_ceil_refuse_integers_and_pass_no_gradient(fn):
    with pytest.raises(TypeError, match=r"(Floor|Ceil).*test_training_ops\.py:\d+"):
        fn(df.constant([1, 2]))
    x = df.constant([1.5, 2.5])
    assert df.gradients(df.reduce_sum(fn(x)), [x]) == [None]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_l2_loss_is_half_the_sum_of_squares_as_a_scalar_of_the_input_dtype(dtype):
    x = np.array([[3.0, -4.0], [1.0, 0.5]], dtype)
    value = evaluate(df.nn.l2_loss(df.constant(x)))
    assert value.shape == () and value.dtype == dtype
    assert value == dtype(13.125)


def test_l2_loss_of_an_empty_tensor_is_zero_and_its_gradient_is_the_input():
    empty = df.placeholder(df.float32, [None], name="empty")
    x = df.constant([1.0, -2.0])
    (grad,) = df.gradients(3.0 * df.nn.l2_loss(x), [x])
    assert evaluate(df.nn.l2_loss(empty), {empty: np.zeros(0, np.float32)}) == 0.0
    assert_same(evaluate(grad), np.array([3.0, -6.0], np.float32))

"""The eager runner keeps one plan (output dtypes and kernel) per op type, attrs and input
dtypes and shapes, so a repeated op runs without inference; what inference checks is still
checked wherever the plan could differ, and errors still name the op and the user's line."""

import numpy as np
import pytest

import dataflow as df
from dataflow.framework.op_registry import _OP_DEFS, apply_op, define_op


@pytest.fixture(autouse=True)
def eager_only(eager):
    yield


@pytest.fixture
def counted_op():
    """An elementwise op ``CountedSquare`` whose inference counts its calls."""
    calls = []

    def infer(op):
        calls.append(op.inputs[0].shape)
        (x,) = op.inputs
        return [(x.dtype, x.shape)]

    define_op("CountedSquare", infer, lambda attrs: np.square)
    yield calls
    del _OP_DEFS["CountedSquare"]


def square(x):
    return apply_op("CountedSquare", [x], None, "CountedSquare").outputs[0]


def test_a_repeated_op_is_inferred_once_per_dtype_and_shape(counted_op):
    x, y = df.constant([1.0, 2.0]), df.constant([3.0, 4.0])
    np.testing.assert_array_equal(square(x).numpy(), [1.0, 4.0])
    np.testing.assert_array_equal(square(y).numpy(), [9.0, 16.0])
    assert len(counted_op) == 1
    square(df.constant([1.0, 2.0, 3.0]))
    square(df.constant([1, 2]))
    assert len(counted_op) == 3


def test_inference_that_reads_an_input_value_is_done_every_time():
    x = df.constant([1.0, 2.0, 3.0, 4.0])
    assert df.reshape(x, [2, 2]).shape.as_list() == [2, 2]
    with pytest.raises(
        df.errors.InvalidArgumentError, match=r"Reshape op .*test_eager_plans.py:\d+"
    ):
        df.reshape(x, [3, 1])  # the same key as [2, 2]: an int32 vector of two
    assert df.reshape(x, [1, 4]).shape.as_list() == [1, 4]


def test_an_op_that_ran_before_still_names_its_line_when_its_inputs_do_not_fit():
    df.add(df.constant([1.0, 2.0]), df.constant([1.0, 2.0]))
    # Eagerly these are InvalidArgumentError, as TF 2.21's kernels report them.
    with pytest.raises(df.errors.InvalidArgumentError, match=r"Add op .*test_eager_plans.py:\d+"):
        df.add(df.constant([1.0, 2.0]), df.constant([1.0, 2.0, 3.0]))
    with pytest.raises(df.errors.InvalidArgumentError, match=r"test_eager_plans.py:\d+"):
        df.add(df.constant([1.0, 2.0]), df.constant([1, 2]))


def test_a_refused_op_is_refused_every_time():
    for _ in range(2):
        with pytest.raises(RuntimeError, match="not compatible with eager execution"):
            df.placeholder(df.float32, [2])


def test_converted_python_numbers_keep_their_dtype_rules_however_often_converted():
    x = df.constant(np.float32(1.5))
    for _ in range(2):
        assert (x * 2.0).dtype is df.float32 and (x * 2).dtype is df.float32
        assert df.constant(1).dtype is df.int32 and df.constant(1.0).dtype is df.float32
        assert df.constant(True).dtype is df.bool and df.constant(2**40).dtype is df.int64
        assert df.constant(np.float64(2.0)).dtype is df.float64
    assert np.signbit(df.constant(-0.0).numpy()) and not np.signbit(df.constant(0.0).numpy())
    assert np.isnan(df.constant(float("nan")).numpy())
    for _ in range(2):
        with pytest.raises(TypeError, match=r"Const op .*test_eager_plans.py:\d+"):
            df.constant(1.5, dtype=df.int32)

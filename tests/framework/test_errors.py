"""errors: TensorFlow's OpError classes and codes."""

import pytest

import dataflow as df

CODES = {
    "CancelledError": 1,
    "UnknownError": 2,
    "InvalidArgumentError": 3,
    "DeadlineExceededError": 4,
    "NotFoundError": 5,
    "AlreadyExistsError": 6,
    "PermissionDeniedError": 7,
    "ResourceExhaustedError": 8,
    "FailedPreconditionError": 9,
    "AbortedError": 10,
    "OutOfRangeError": 11,
    "UnimplementedError": 12,
    "InternalError": 13,
    "UnavailableError": 14,
    "DataLossError": 15,
    "UnauthenticatedError": 16,
}


@pytest.mark.parametrize("name, code", sorted(CODES.items()))
def test_each_error_class_has_tensorflows_code_and_carries_op_and_message(name, code):
    cls = getattr(df.errors, name)
    error = cls(None, "the op", "went wrong")
    assert isinstance(error, df.errors.OpError)
    assert (error.error_code, error.op, error.message, str(error)) == (
        code,
        "the op",
        "went wrong",
        "went wrong",
    )


def test_op_error_takes_its_code_as_fourth_argument():
    assert df.errors.OpError(None, None, "m", 5).error_code == 5
    assert df.errors.INVALID_ARGUMENT == 3 and df.errors.FAILED_PRECONDITION == 9


@pytest.mark.parametrize(
    "build, op_words",
    [
        (lambda: df.placeholder(df.int32) + 1.5, "Add op 'add'"),
        (lambda: df.constant(2.5, dtype=df.int32), "Const op 'Const'"),
        (lambda: df.zeros([-2]), "Const op 'zeros'"),
        (lambda: df.multiply(df.placeholder(df.float32), "text"), "Mul op 'Mul'"),
    ],
    ids=["operator", "constant", "zeros", "function"],
)
def test_a_value_that_cannot_become_a_tensor_names_the_op_and_the_line(build, op_words):
    with pytest.raises(TypeError) as info:
        build()
    message = str(info.value)
    assert op_words in message
    assert "test_errors.py" in message


@pytest.mark.parametrize(
    "build, error, words",
    [
        (lambda: df.zeros([1.5, 2]), TypeError, "zeros at"),
        (lambda: df.reshape(df.ones([4]), [2.0, 2]), TypeError, "Reshape at"),
        (lambda: df.random_normal([2, 0.5]), TypeError, "random_normal at"),
        (lambda: df.nn.dropout(df.ones([3]), rate=1.5), ValueError, "dropout at"),
        (lambda: df.nn.dropout(df.ones([3]), keep_prob=0.0), ValueError, "dropout at"),
        (lambda: df.nn.dropout(df.ones([3])), ValueError, "dropout at"),
        (lambda: df.nn.dropout(df.ones([3]), rate=[0.1, 0.2]), ValueError, "Dropout op"),
    ],
    ids=["float shape", "float reshape", "random shape", "rate", "keep_prob", "neither", "rank"],
)
def test_a_bad_argument_caught_before_the_op_exists_names_the_function_and_the_line(
    build, error, words
):
    with pytest.raises(error) as info:
        build()
    message = str(info.value)
    assert words in message
    assert "test_errors.py" in message

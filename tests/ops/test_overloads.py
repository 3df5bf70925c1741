"""Python operators on tensors: which ops they build, reflected operands, numpy operands, and
the TF1 rules that ``==`` is identity and that ``& | ^ ~`` are logical."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from ops_testing import assert_same, evaluate

import dataflow as df

OPERATORS = [
    (lambda a, b: a + b, "Add", "add"),
    (lambda a, b: a - b, "Sub", "sub"),
    (lambda a, b: a * b, "Mul", "mul"),
    (lambda a, b: a / b, "RealDiv", "truediv"),
    (lambda a, b: a // b, "FloorDiv", "floordiv"),
    (lambda a, b: a % b, "FloorMod", "mod"),
    (lambda a, b: a**b, "Pow", "pow"),
    (lambda a, b: a < b, "Less", "Less"),
    (lambda a, b: a <= b, "LessEqual", "LessEqual"),
    (lambda a, b: a > b, "Greater", "Greater"),
    (lambda a, b: a >= b, "GreaterEqual", "GreaterEqual"),
]


@pytest.mark.parametrize("operator, op_type, op_name", OPERATORS)
def test_operator_builds_the_tensorflow_op(operator, op_type, op_name):
    x, y = df.constant(1.0), df.constant(2.0)
    out = operator(x, y)
    assert out.op.type == op_type and out.op.name == op_name


@pytest.mark.parametrize("operator", [o[0] for o in OPERATORS])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_operators_with_numpy_and_python_operands_on_either_side(operator, data):
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    elements = st.floats(0.5, 4, width=32)
    x = data.draw(hnp.arrays(np.float32, shapes.input_shapes[0], elements=elements))
    y = data.draw(hnp.arrays(np.float32, shapes.input_shapes[1], elements=elements))
    with df.Graph().as_default():
        t = df.constant(x)
        expected = operator(x, y)
        for out in (operator(t, y), operator(x, df.constant(y))):
            assert out.dtype is df.as_dtype(expected.dtype)
            assert_same(evaluate(out), expected, rtol=1e-5)


def test_python_number_on_the_left_keeps_the_operand_order():
    x = df.constant([1.0, 4.0])
    assert_same(evaluate(8 / x), np.float32([8, 2]))
    assert_same(evaluate(1 - x), np.float32([0, -3]))
    assert_same(evaluate(2**x), np.float32([2, 16]))
    assert_same(evaluate(9 // x), np.float32([9, 2]))
    assert_same(evaluate(9 % x), np.float32([0, 1]))


def test_numpy_array_on_the_left_gives_a_tensor():
    out = np.array([1.0, 2.0]) + df.constant([1.0, 1.0])
    assert isinstance(out, df.Tensor) and out.dtype is df.float32
    out = np.float64(3.0) * df.constant(2.0)
    assert isinstance(out, df.Tensor)
    assert_same(evaluate(out), np.float32(6))


def test_true_division_of_int32_tensors_gives_float64():
    out = df.constant([3, 4]) / 2
    assert out.dtype is df.float64
    assert_same(evaluate(out), np.array([1.5, 2.0]))


def test_matmul_operator():
    a = df.constant([[1.0, 2.0]])
    b = np.array([[3.0], [4.0]], np.float32)
    assert (a @ b).op.name == "matmul"
    assert_same(evaluate(a @ b), np.float32([[11]]))
    assert_same(evaluate(b @ a), b @ np.float32([[1, 2]]))


def test_unary_minus_and_abs():
    x = df.constant([-1, 2])
    assert (-x).op.type == "Neg" and abs(x).op.type == "Abs"
    assert_same(evaluate(-x), np.array([1, -2], np.int32))
    assert_same(evaluate(abs(x)), np.array([1, 2], np.int32))


def test_logical_operators_on_bool_tensors():
    a, b = df.constant([True, True, False]), df.constant([True, False, False])
    assert_same(evaluate(a & b), np.array([True, False, False]))
    assert_same(evaluate(a | b), np.array([True, True, False]))
    assert_same(evaluate(a ^ b), np.array([False, True, False]))
    assert_same(evaluate(~a), np.array([False, False, True]))
    assert_same(evaluate(True & b), np.array([True, False, False]))


@pytest.mark.parametrize(
    "operator", [lambda x: x & x, lambda x: x | 1, lambda x: 1 ^ x, lambda x: ~x]
)
def test_logical_operators_on_numbers_raise_type_error(operator):
    with pytest.raises(TypeError, match="bool"):
        operator(df.constant([1, 2]))


def test_equality_and_hash_stay_identity_based():
    x, y = df.constant(1.0), df.constant(1.0)
    assert x == x and x != y and not (x == y)
    assert len({x, y, x}) == 2


def test_mismatched_dtypes_in_an_operator_raise_type_error():
    with pytest.raises(TypeError):
        df.constant(1.0) + df.constant(1)


def test_numpy_operand_of_an_incompatible_shape_reports_the_shapes():
    with pytest.raises(ValueError, match="Incompatible shapes"):
        df.zeros([2]) + np.zeros(3)


def test_adding_an_unconvertible_object_raises():
    with pytest.raises((TypeError, ValueError)):
        df.constant(1.0) + "one"


def test_operator_defers_to_an_object_that_knows_how_to_add_tensors():
    class Other:
        def __radd__(self, other):
            return "handled"

    assert df.constant(1.0) + Other() == "handled"


def test_getitem_is_attached():
    assert_same(evaluate(df.constant([1, 2, 3])[1:]), np.array([2, 3], np.int32))

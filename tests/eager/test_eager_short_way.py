"""A repeated eager op goes straight to the kernel of the plan kept for it (operators on eager
tensors, and the functions of ops with one output): the values, dtypes, errors, tapes, traces
and lazy recordings are those of the general way."""

import operator

import numpy as np
import pytest

import dataflow as df
from dataflow.framework.op_registry import get_op_def
from dataflow.ops import constant_op


@pytest.fixture(autouse=True)
def eager_only(eager):
    yield


@pytest.fixture
def count_inferences(monkeypatch):
    """Counts the calls of an op type's shape inference: ``count_inferences("Add")`` -> list."""

    def count(op_type):
        op_def = get_op_def(op_type)
        calls = []
        infer = op_def.infer

        def counted(op):
            calls.append(op.type)
            return infer(op)

        monkeypatch.setattr(op_def, "infer", counted)
        return calls

    return count


BINARY = [
    (operator.add, np.add),
    (operator.sub, np.subtract),
    (operator.mul, np.multiply),
    (operator.truediv, np.true_divide),
    (operator.lt, np.less),
    (operator.le, np.less_equal),
    (operator.gt, np.greater),
    (operator.ge, np.greater_equal),
    (operator.eq, np.equal),
    (operator.ne, np.not_equal),
]


@pytest.mark.parametrize("shape", [(), (3, 3)])
@pytest.mark.parametrize("python_op, numpy_op", BINARY)
def test_repeated_operators_compute_what_the_first_one_did(python_op, numpy_op, shape):
    a = np.arange(1, 1 + np.prod(shape, dtype=int), dtype=np.float32).reshape(shape)
    b = np.full(shape, 2.0, np.float32)
    x, y = df.constant(a), df.constant(b)
    for operands, expected in (
        ((x, y), numpy_op(a, b)),
        ((x, 2.0), numpy_op(a, np.float32(2.0))),
        ((3.0, x), numpy_op(np.float32(3.0), a)),
        ((x, 2), numpy_op(a, np.float32(2))),
    ):
        first, again = python_op(*operands), python_op(*operands)
        for result in (first, again):
            assert isinstance(result, df.EagerTensor) and result.dtype is first.dtype
            np.testing.assert_array_equal(result.numpy(), expected)
        assert first.dtype is df.as_dtype(expected.dtype)


def test_matmul_and_negation_repeat_the_ops_of_their_functions():
    a = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    batch = np.stack([a, a + 1])
    x, b = df.constant(a), df.constant(batch)
    for _ in range(2):
        np.testing.assert_array_equal((x @ x).numpy(), a @ a)
        np.testing.assert_array_equal((b @ b).numpy(), batch @ batch)
        np.testing.assert_array_equal((-x).numpy(), -a)
        np.testing.assert_array_equal(df.matmul(x, x, transpose_b=True).numpy(), a @ a.T)


def test_a_repeated_op_is_not_inferred_again(count_inferences):
    # Shapes no other test uses: plans live as long as the process's eager runner.
    x, y = df.ones([3, 1, 11]), df.ones([3, 1, 11])
    adds, sums, relus = count_inferences("Add"), count_inferences("Sum"), count_inferences("Relu")
    for _ in range(3):
        x + y
        df.add(x, y)
        df.reduce_sum(x)
        df.nn.relu(x)
    assert (len(adds), len(sums), len(relus)) == (1, 1, 1)
    x + df.ones([3, 1, 12])[:, :, :11]  # the same key
    assert len(adds) == 1
    df.ones([3, 1, 13]) + df.ones([3, 1, 13])  # a new shape
    assert len(adds) == 2


def test_a_python_number_operand_is_converted_once_per_value_and_dtype(monkeypatch):
    conversions = []
    constant = constant_op.constant

    def counted(value, *args, **kwargs):
        conversions.append(value)
        return constant(value, *args, **kwargs)

    monkeypatch.setattr(constant_op, "constant", counted)
    monkeypatch.setitem(df.graph._registered_ops, "constant", counted)
    x = df.constant(np.float32(1.5))
    conversions.clear()
    for _ in range(3):
        assert (x * 2.5).dtype is df.float32 and (2.5 * x).dtype is df.float32
    assert conversions == [2.5]


def test_converted_numbers_keep_the_sign_of_zero_and_nan():
    x = df.constant([1.0, -1.0])
    for _ in range(2):
        assert not np.signbit((x * 0.0).numpy()[0]) and np.signbit((x * -0.0).numpy()[0])
        assert np.all(np.isnan((x * float("nan")).numpy()))


def test_numbers_that_do_not_convert_still_raise_at_the_users_line():
    x = df.constant([1, 2])
    for _ in range(2):
        x + 1
        with pytest.raises(TypeError, match=r"test_eager_short_way.py:\d+"):
            x + 2.5
    assert (x / 2).dtype is df.float64  # integers divide as floats: no RealDiv of integers


def test_shapes_that_do_not_fit_raise_after_the_op_ran_well():
    x = df.constant([1.0, 2.0])
    x + x
    for _ in range(2):
        with pytest.raises(
            df.errors.InvalidArgumentError, match=r"Add op .*test_eager_short_way.py:\d+"
        ):
            x + df.constant([1.0, 2.0, 3.0])


def test_a_kernel_that_fails_on_the_short_way_raises_the_ops_error_at_the_users_line():
    x = df.constant([4, 6])
    np.testing.assert_array_equal(df.math.floordiv(x, df.constant([2, 3])).numpy(), [2, 2])
    for _ in range(2):
        with pytest.raises(
            df.errors.InvalidArgumentError, match=r"FloorDiv.*test_eager_short_way.py:\d+"
        ):
            df.math.floordiv(x, df.constant([2, 0]))


def test_a_tape_sees_operators_and_ops_that_ran_before_it():
    x = df.constant([1.0, -0.5])
    y = df.reduce_sum(df.nn.relu(x * x + x) - x)  # every op's plan is kept
    with df.GradientTape() as tape:
        tape.watch(x)
        y = df.reduce_sum(df.nn.relu(x * x + x) - x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0, -1.0])
    with df.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            z = x * 3.0
        y = z * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [3.0, -1.5])


def test_a_function_traced_after_eager_runs_builds_graph_ops_from_operators():
    a, b = df.constant([1.0, 2.0]), df.constant([3.0, 4.0])
    a + b * 2.0

    @df.function
    def f():
        return a + b * 2.0

    np.testing.assert_array_equal(f().numpy(), [7.0, 10.0])
    op_types = {op.type for op in f.get_concrete_function().graph.get_operations()}
    assert {"Add", "Mul"} <= op_types


def test_lazy_mode_records_operators_whose_plans_are_kept():
    x = df.constant([1.0, 2.0])
    x + x
    with df.lazy_mode() as recording:
        lazy = df.constant([1.0, 2.0])
        y = lazy + lazy
        assert not isinstance(y, df.EagerTensor)
        np.testing.assert_array_equal(y.numpy(), [2.0, 4.0])
    assert recording.materialisations == 1


def test_building_a_graph_never_takes_the_short_way():
    x = df.constant([1.0, 2.0])
    x * 2.0
    with df.graph_mode():
        with pytest.raises(RuntimeError, match=r"capture an EagerTensor.*Mul op"):
            x * 2.0
        y = df.constant([1.0, 2.0]) * 2.0
        assert not isinstance(y, df.EagerTensor) and y.op.type == "Mul"

"""Eager variables in a df.function called eagerly: captured resources, read and written."""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager():
    with df.eager_mode():
        yield


def test_function_reads_the_captured_variables_current_value_at_each_call():
    scale = df.Variable(2.0)

    @df.function
    def scaled(x):
        return x * scale

    assert scaled(df.constant(3.0)).numpy() == 6.0
    scale.assign(5.0)
    assert scaled(df.constant(3.0)).numpy() == 15.0
    assert scaled.experimental_get_tracing_count() == 1


def test_assignments_in_the_function_are_written_back_to_the_variable():
    total = df.Variable([0.0, 0.0])

    @df.function
    def accumulate(x):
        total.assign_add(x)
        return total.read_value() * 10.0

    first = accumulate(df.constant([1.0, 2.0]))
    second = accumulate(df.constant([1.0, 2.0]))
    np.testing.assert_allclose(first.numpy(), [10.0, 20.0])
    np.testing.assert_allclose(second.numpy(), [20.0, 40.0])
    np.testing.assert_allclose(total.numpy(), [2.0, 4.0])


def test_captured_variable_is_a_resource_of_the_graph_not_a_baked_constant():
    weights = df.Variable([[1.0], [2.0]])

    @df.function
    def project(x):
        return df.matmul(x, weights)

    concrete = project.get_concrete_function(df.TensorSpec([1, 2], df.float32))
    types = [op.type for op in concrete.graph.get_operations()]
    assert "Const" not in types and "VarHandleOp" in types
    assert concrete.captured_variables == [weights]


def test_variable_made_on_the_first_trace_persists_across_calls():
    state = {}

    @df.function
    def count(step):
        if "counter" not in state:
            state["counter"] = df.Variable(100, dtype=df.int32)
        return state["counter"].assign_add(step)

    assert count(df.constant(1)).numpy() == 101
    assert count(df.constant(2)).numpy() == 103
    assert state["counter"].numpy() == 103
    assert count.experimental_get_tracing_count() == 1


def test_variable_made_on_a_later_trace_is_refused():
    @df.function
    def fresh(x):
        return df.Variable(1.0) * x

    fresh(df.constant(1.0))
    with pytest.raises(ValueError, match="first trace only"):
        fresh(df.constant([1.0, 2.0]))


def test_a_failed_call_changes_no_variable():
    weights = df.Variable([1.0, 2.0])

    @df.function
    def guarded(ok):
        weights.assign([5.0, 6.0])
        with df.control_dependencies([df.Assert(ok, ["refused"])]):
            return weights.read_value()

    with pytest.raises(df.errors.InvalidArgumentError, match="refused"):
        guarded(df.constant(False))
    np.testing.assert_allclose(weights.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(guarded(df.constant(True)).numpy(), [5.0, 6.0])
    np.testing.assert_allclose(weights.numpy(), [5.0, 6.0])


def test_two_eager_variables_of_the_same_name_stay_apart():
    first = df.Variable(1.0, name="v")
    second = df.Variable(2.0, name="v")

    @df.function
    def swap():
        old_first = first.read_value()
        first.assign(second.read_value())
        second.assign(old_first)
        return first.read_value() + 10.0 * second.read_value()

    assert swap().numpy() == 12.0
    assert (first.numpy(), second.numpy()) == (2.0, 1.0)


def test_assignments_run_when_the_function_returns_no_tensor():
    total = df.Variable(0.0)

    @df.function
    def add(x):
        total.assign_add(x)
        return "done"

    assert add(df.constant(2.0)) == "done"
    assert add(df.constant(3.0)) == "done"
    assert total.numpy() == 5.0


def test_variable_passed_as_an_argument_is_captured_not_fed():
    @df.function
    def bump(variable, step):
        variable.assign_add(step)
        return variable.read_value()

    counter = df.Variable(1.0)
    assert bump(counter, df.constant(2.0)).numpy() == 3.0
    assert counter.numpy() == 3.0


def test_a_scalar_result_is_an_eager_tensor_numpy_can_read():
    scale = df.Variable(2.0)

    @df.function
    def scaled(x):
        return x * scale

    with df.GradientTape() as tape:
        y = scaled(df.constant(3.0))
    assert np.asarray(y).shape == () and float(np.asarray(y)) == 6.0
    assert np.asarray(tape.gradient(y, scale)) == 3.0

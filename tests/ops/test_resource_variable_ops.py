"""TF1's raw resource-variable ops on a handle: assign_variable_op and read_variable_op."""

import pytest

import dataflow as df
from dataflow.ops.resource_variable_ops import assign_variable_op, read_variable_op


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_assign_variable_op_returns_the_op_and_writes_through_the_handle():
    v = df.Variable(1.0)
    assign = assign_variable_op(v.handle, 4.0)
    assert isinstance(assign, df.Operation) and assign.name == "AssignVariableOp"
    with df.Session() as sess:
        sess.run(v.initializer)
        sess.run(assign)
        assert sess.run(read_variable_op(v.handle, df.float32)) == 4.0


def test_assign_variable_op_in_the_taken_branch_only_writes_there():
    flag = df.Variable(True)

    def clear_flag_then_one():
        with df.control_dependencies([assign_variable_op(flag.handle, False)]):
            return df.constant(1.0)

    result = df.cond(flag, clear_flag_then_one, lambda: df.constant(2.0))
    with df.Session() as sess:
        sess.run(flag.initializer)
        assert sess.run(result) == 1.0
        assert not sess.run(flag)
        assert sess.run(result) == 2.0 and not sess.run(flag)


def test_assign_variable_op_of_another_shape_fails_naming_the_variable():
    v = df.Variable([1.0, 2.0], name="pair")
    assign = assign_variable_op(v.handle, [1.0, 2.0, 3.0])
    with df.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(df.errors.InvalidArgumentError, match="variable 'pair'"):
            sess.run(assign)
        assert sess.run(v).tolist() == [1.0, 2.0]


def test_the_raw_ops_refuse_a_tensor_that_is_not_a_handle():
    with pytest.raises(TypeError, match="assign_variable_op takes a variable's handle"):
        assign_variable_op(df.constant(1.0), 2.0)

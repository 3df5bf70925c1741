"""TF1's stacks (StackV2 and its push, pop and close): last in, first out, made afresh in each
run, with TensorFlow's errors, and used across two while_loops."""

from __future__ import annotations

import pytest
from ops_testing import run

import dataflow as df
from dataflow.ops.stack_ops import stack_close_v2, stack_pop_v2, stack_push_v2, stack_v2
from primitives.control_flow_ops import with_dependencies


def _error_of(fetch) -> str:
    with pytest.raises(df.errors.InvalidArgumentError) as info:
        run(fetch)
    return str(info.value)


def test_a_stack_is_a_resource_handle_named_as_in_tf1():
    handle = stack_v2(-1, df.int32, stack_name="foo")
    assert handle.op.type == "StackV2" and handle.dtype == df.resource
    assert handle.op.attrs["stack_name"] == "foo"
    pushed = stack_push_v2(handle, df.constant(3))
    assert (pushed.op.type, pushed.dtype) == ("StackPushV2", df.int32)
    assert stack_pop_v2(handle, df.int32).op.type == "StackPopV2"
    assert stack_close_v2(handle).type == "StackCloseV2"


def test_an_unnamed_stack_takes_its_op_name():
    stack_v2(-1, df.int32)
    handle = stack_v2(-1, df.int32)
    assert handle.op.attrs["stack_name"] == handle.op.name == "StackV2_1"


def test_pops_return_the_pushed_values_last_first():
    handle = stack_v2(-1, df.int32, stack_name="lifo")
    first = stack_push_v2(handle, df.constant(1))
    with df.control_dependencies([first]):
        second = stack_push_v2(handle, df.constant(2))
    with df.control_dependencies([second]):
        popped_first = stack_pop_v2(handle, df.int32)
    with df.control_dependencies([popped_first]):
        popped_second = stack_pop_v2(handle, df.int32)
    assert run([popped_first, popped_second]) == [2, 1]


def test_each_run_gets_a_new_empty_stack():
    sess = df.Session()
    handle = stack_v2(-1, df.float32, stack_name="per_run")
    push = stack_push_v2(handle, df.constant(1.5))
    assert sess.run(push) == 1.5
    with pytest.raises(df.errors.InvalidArgumentError, match=r"Stack\[per_run_\d+\] is empty"):
        sess.run(stack_pop_v2(handle, df.float32))


def test_pushing_past_max_size_fails_with_tf_wording():
    handle = stack_v2(1, df.int32, stack_name="small")
    first = stack_push_v2(handle, df.constant(1))
    with df.control_dependencies([first]):
        second = stack_push_v2(handle, df.constant(2))
    assert "overflowed its max_size (1)" in _error_of(second)


def test_closing_a_stack_after_its_pushes_ends_the_run_normally():
    handle = stack_v2(-1, df.int32, stack_name="to_close")
    pushed = stack_push_v2(handle, df.constant(1))
    with df.control_dependencies([pushed]):
        close = stack_close_v2(handle)
    with df.control_dependencies([close]):
        done = df.identity(pushed)
    assert run(done) == 1


def test_a_closed_stack_refuses_pushes_and_pops():
    handle = stack_v2(-1, df.int32, stack_name="closed")
    close = stack_close_v2(handle)
    with df.control_dependencies([close]):
        pop = stack_pop_v2(handle, df.int32)
    message = _error_of(pop)
    assert "has already been closed." in message and "StackPopV2" in message


def test_a_push_of_another_dtype_fails():
    handle = stack_v2(-1, df.int32, stack_name="typed")
    assert "Must have type int32 but got float32" in _error_of(
        stack_push_v2(handle, df.constant(1.0))
    )


def test_one_loop_pushes_and_a_later_loop_pops_in_reverse():
    handle = stack_v2(-1, df.int32, stack_name="loops")

    def push_body(i):
        return with_dependencies([stack_push_v2(handle, i * 10)], i + 1)

    count = df.while_loop(lambda i: i < 4, push_body, [df.constant(0)], parallel_iterations=1)

    def pop_body(i, popped):
        top = stack_pop_v2(handle, df.int32)
        return i - 1, df.concat([popped, df.reshape(top, [1])], 0)

    _, popped = df.while_loop(
        lambda i, _: i > 0,
        pop_body,
        [count, df.zeros([0], df.int32)],
        [count.shape, df.TensorShape([None])],
        parallel_iterations=1,
    )
    assert run(popped).tolist() == [30, 20, 10, 0]

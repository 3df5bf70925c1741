"""The primitive ops on their own, and a loop and a cond written by hand from them."""

import os
import subprocess
import sys

import numpy as np
import pytest

import dataflow as df
from dataflow.framework.op_registry import get_op_def
from executor.program import NodeKind


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_each_primitive_is_defined_once_with_its_node_kind():
    kinds = {
        "Switch": NodeKind.SWITCH,
        "Merge": NodeKind.MERGE,
        "Enter": NodeKind.ENTER,
        "Exit": NodeKind.EXIT,
        "NextIteration": NodeKind.NEXT_ITERATION,
        "LoopCond": NodeKind.OP,
    }
    for op_type, kind in kinds.items():
        assert get_op_def(op_type).kind == kind
    for op_type in ("Switch", "Merge", "Enter", "Exit", "NextIteration"):
        assert get_op_def(op_type).kernel is None, op_type
    assert get_op_def("LoopCond").kernel({})(np.bool_(True)) == np.bool_(True)


def test_switch_gives_two_outputs_like_its_data():
    x = df.placeholder(df.float32, shape=[2, None])
    p = df.placeholder(df.bool, shape=[])
    f, t = df.switch(x, p)
    assert f.op is t.op and f.op.type == "Switch"
    assert (f.value_index, t.value_index) == (0, 1)
    assert f.dtype is t.dtype is df.float32
    assert f.shape.as_list() == t.shape.as_list() == [2, None]


def test_switch_rejects_a_predicate_that_is_not_a_bool_scalar():
    x = df.constant(1.0)
    with pytest.raises(TypeError, match="bool"):
        df.switch(x, df.constant(1))
    with pytest.raises(ValueError, match="scalar"):
        df.switch(x, df.constant([True, False]))


def test_merge_outputs_the_most_specific_compatible_shape_and_an_int32_index():
    a = df.placeholder(df.float32, shape=[2, 3])
    b = df.placeholder(df.float32, shape=[2, 4])
    out, index = df.merge([a, b])
    assert out.op.type == "Merge" and out.shape.as_list() == [2, None]
    assert index.dtype is df.int32 and index.shape.ndims == 0
    c = df.placeholder(df.float32, shape=[2])
    assert df.merge([a, c])[0].shape.ndims is None


def test_merge_needs_inputs_of_one_dtype():
    with pytest.raises(TypeError, match="one dtype"):
        df.merge([df.constant(1.0), df.constant(1)])
    with pytest.raises(ValueError):
        df.merge([])


def test_enter_has_exactly_the_three_attrs_the_session_reads():
    x = df.constant(1.0)
    e = df.enter(x, "frame", is_constant=True, parallel_iterations=3)
    assert e.op.type == "Enter"
    assert e.op.attrs == {"frame_name": "frame", "is_constant": True, "parallel_iterations": 3}
    assert e.op.get_attr("frame_name") == "frame"
    with pytest.raises(ValueError, match="frame_name"):
        df.enter(x, "")
    with pytest.raises(ValueError, match="parallel_iterations"):
        df.enter(x, "f", parallel_iterations=0)


def test_a_non_constant_enter_has_an_unknown_shape_and_a_constant_one_its_inputs():
    x = df.placeholder(df.float32, shape=[None, 3])
    entered = df.enter(x, "f")
    assert entered.dtype is df.float32 and entered.shape.ndims is None  # as TensorFlow
    assert df.enter(x, "f", is_constant=True).shape.as_list() == [None, 3]
    entered.set_shape([2, 3])  # what a hand-written loop states it keeps
    assert df.merge([entered, entered])[0].shape.as_list() == [2, 3]


def test_exit_next_iteration_and_loop_cond_pass_their_input_through():
    x = df.placeholder(df.int32, shape=[3])
    assert df.exit(x).op.type == "Exit" and df.exit(x).shape.as_list() == [3]
    assert df.next_iteration(x).op.type == "NextIteration"
    lc = df.loop_cond(df.constant(True))
    assert lc.op.type == "LoopCond" and lc.dtype is df.bool
    with pytest.raises(TypeError):
        df.loop_cond(x)


def test_set_merge_input_closes_a_back_edge():
    x = df.constant(0)
    e = df.enter(x, "f")
    m, _ = df.merge([e, e])
    n = df.next_iteration(m + 1)
    df.set_merge_input(m, 1, n)
    assert list(m.op.inputs) == [e, n]
    assert m.op in n.consumers()
    with pytest.raises(TypeError, match="carries int32"):
        df.set_merge_input(m.op, 1, df.constant(1.0))
    with pytest.raises(IndexError):
        df.set_merge_input(m, 2, n)
    with pytest.raises(TypeError, match="Merge"):
        df.set_merge_input(n, 0, x)


def test_set_merge_input_relaxes_the_merge_shape():
    e = df.enter(df.zeros([2]), "f")
    e.set_shape([2])
    m, _ = df.merge([e, e])
    assert m.shape.as_list() == [2]
    df.set_merge_input(m, 1, df.next_iteration(df.placeholder(df.float32, shape=[None])))
    assert m.shape.as_list() == [None]


# -- run time ------------------------------------------------------------------------------------
def test_switch_forwards_data_to_the_selected_output():
    x = df.constant(7.0)
    p = df.placeholder(df.bool, shape=[])
    f, t = df.switch(x, p)
    with df.Session() as sess:
        assert sess.run(t, {p: True}) == 7.0
        assert sess.run(f, {p: False}) == 7.0
        with pytest.raises(df.errors.InvalidArgumentError, match="Switch"):
            sess.run(f, {p: True})


def test_merge_takes_the_live_input_and_reports_its_index():
    x = df.constant(1.0)
    p = df.placeholder(df.bool, shape=[])
    f, t = df.switch(x, p)
    out, index = df.merge([f * 10.0, t * 100.0])
    with df.Session() as sess:
        assert sess.run([out, index], {p: False}) == [10.0, 0]
        assert sess.run([out, index], {p: True}) == [100.0, 1]


def test_enter_and_exit_move_a_value_into_a_frame_and_out():
    x = df.constant(5)
    two = df.enter(df.constant(2), "frame", is_constant=True)
    inside = df.enter(x, "frame")
    out = df.exit(inside * two)
    with df.Session() as sess:
        assert sess.run(out) == 10


def test_a_loop_written_by_hand_from_the_primitives():
    n = df.placeholder(df.int32, shape=[])
    i0 = df.constant(0)
    acc0 = df.constant(1)
    i_enter = df.enter(i0, "count", parallel_iterations=4)
    acc_enter = df.enter(acc0, "count", parallel_iterations=4)
    n_enter = df.enter(n, "count", is_constant=True, parallel_iterations=4)
    # Constants used inside a frame are entered too: every input of a node lies in one frame.
    one = df.enter(df.constant(1), "count", is_constant=True, parallel_iterations=4)
    two = df.enter(df.constant(2), "count", is_constant=True, parallel_iterations=4)
    i, _ = df.merge([i_enter, i_enter])
    acc, _ = df.merge([acc_enter, acc_enter])
    keep_going = df.loop_cond(df.less(i, n_enter))
    i_done, i_body = df.switch(i, keep_going)
    acc_done, acc_body = df.switch(acc, keep_going)
    df.set_merge_input(i, 1, df.next_iteration(df.add(df.identity(i_body), one)))
    df.set_merge_input(acc, 1, df.next_iteration(df.multiply(df.identity(acc_body), two)))
    i_out, acc_out = df.exit(i_done), df.exit(acc_done)
    with df.Session() as sess:
        assert sess.run([i_out, acc_out], {n: 10}) == [10, 1024]
        assert sess.run([i_out, acc_out], {n: 0}) == [0, 1]


def test_a_cond_written_by_hand_from_the_primitives():
    x = df.placeholder(df.float32, shape=[])
    p = df.placeholder(df.bool, shape=[])
    x_false, x_true = df.switch(x, p)
    out, _ = df.merge([df.negative(x_false), df.multiply(x_true, 3.0)])
    with df.Session() as sess:
        assert sess.run(out, {x: 2.0, p: True}) == 6.0
        assert sess.run(out, {x: 2.0, p: False}) == -2.0


@pytest.mark.parametrize("first", ["primitives", "dataflow"])
def test_either_package_can_be_imported_first(first):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = (
        f"import {first}; import dataflow as df, primitives; "
        "assert df.cond is primitives.cond and df.while_loop is primitives.while_loop; "
        "assert primitives.nest is df.nest"
    )
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=root)


def test_the_hand_written_loop_in_the_module_docstring_runs_and_counts_to_ten():
    import primitives.raw_ops

    docstring = primitives.raw_ops.__doc__
    block = docstring.split("A loop::\n")[1].split("\n\n")[0]
    source = "\n".join(line[4:] for line in block.splitlines())
    namespace = {"df": df}
    with df.Graph().as_default():
        exec(compile(source, "raw_ops docstring", "exec"), namespace)
        with df.Session() as sess:
            assert sess.run(namespace["result"]) == 10

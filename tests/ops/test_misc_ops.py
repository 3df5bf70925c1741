"""misc_ops: no_op/group/tuple ordering, Assert, Print and print side effects, and Python
functions as ops."""

import sys

import numpy as np
import pytest
from ops_testing import assert_same, evaluate, run

import dataflow as df


def recorder(log, tag, dtype=df.int32):
    """A tensor whose computation appends ``tag`` to ``log``."""

    def record():
        log.append(tag)
        return np.int32(len(log))

    return df.py_func(record, [], dtype)


# -- no_op, group, tuple ---------------------------------------------------------------------------
def test_no_op_has_no_outputs_and_runs():
    op = df.no_op()
    assert op.type == "NoOp" and op.outputs == []
    assert run(op) is None


def test_group_runs_all_of_its_inputs():
    log = []
    op = df.group(recorder(log, "a"), [recorder(log, "b").op], name="both")
    assert op.name == "both" and op.type == "NoOp" and len(op.control_inputs) == 2
    run(op)
    assert sorted(log) == ["a", "b"]


def test_group_of_nothing_is_a_no_op():
    assert df.group().type == "NoOp"


def test_group_rejects_unknown_keywords_with_value_error_as_tensorflow_does():
    with pytest.raises(ValueError, match="Unknown keyword"):
        df.group(df.no_op(), nme="x")


@pytest.mark.parametrize("bad", [None, 1.0, [[None]]])
def test_group_rejects_inputs_that_are_not_tensors_or_ops(bad):
    # tf.group raises TypeError for None and Python values instead of dropping them.
    with pytest.raises(TypeError, match="Tensors or Operations"):
        df.group(df.constant(1.0), bad)


def test_group_accepts_variables():
    v = df.Variable(1.0)
    assert df.group(v).type == "NoOp"


def test_tuple_gates_each_value_on_all_of_them():
    log = []
    a, b = recorder(log, "a"), recorder(log, "b")
    ga, gb = df.tuple([a, b])
    assert ga.op.type == "Identity"
    run(ga)
    assert sorted(log) == ["a", "b"]


def test_tuple_passes_none_through_and_groups_operations():
    a = df.constant(1)
    op = df.no_op()
    out = df.tuple([a, None, op])
    assert out[1] is None and isinstance(out[2], df.Operation)
    assert_same(evaluate(out[0]), np.int32(1))


def test_tuple_waits_for_control_inputs():
    log = []
    (out,) = df.tuple([df.constant(1)], control_inputs=[recorder(log, "c")])
    run(out)
    assert log == ["c"]


def test_tuple_converts_python_values_to_tensors():
    one, two = df.tuple([1.5, np.int64(2)])
    assert one.dtype is df.float32 and two.dtype is df.int64
    assert_same(evaluate(one), np.float32(1.5))
    assert_same(evaluate(two), np.int64(2))


def test_tuple_of_nothing_raises_value_error():
    with pytest.raises(ValueError):
        df.tuple([None])


# -- Assert ----------------------------------------------------------------------------------------
def test_assert_that_holds_lets_the_run_continue():
    x = df.placeholder(df.float32, [None])
    check = df.Assert(df.reduce_all(x > 0), ["x must be positive", x])
    assert isinstance(check, df.Operation) and check.op_def.stateful
    with df.control_dependencies([check]):
        out = df.identity(x)
    assert_same(evaluate(out, {x: np.ones(2, np.float32)}), np.ones(2, np.float32))


def test_failed_assert_raises_invalid_argument_error_listing_the_data():
    x = df.placeholder(df.int32, [None])
    check = df.Assert(df.reduce_all(x > 0), ["x must be positive", x], summarize=2)
    with pytest.raises(df.errors.InvalidArgumentError) as info:
        run(check, {x: np.array([3, -1, 5], np.int32)})
    assert "assertion failed: [x must be positive] [3 -1...]" in str(info.value)
    assert info.value.op is check


def test_the_raw_assert_is_one_op_named_as_given_outside_any_scope_of_its_own():
    from dataflow.ops.misc_ops import raw_assert

    x = df.placeholder(df.int32, [None])
    check = raw_assert(df.reduce_all(x > 0), [x], name="unguarded")
    assert (check.type, check.name) == ("Assert", "unguarded")
    assert raw_assert(df.constant(True), [x]).name == "Assert"
    run(check, {x: np.array([1, 2], np.int32)})
    with pytest.raises(df.errors.InvalidArgumentError, match=r"assertion failed: \[3 -1 5\]"):
        run(check, {x: np.array([3, -1, 5], np.int32)})


@pytest.mark.parametrize(
    "value, summarize, text",
    [
        (np.arange(6).reshape(2, 3), 4, "[[0 1 2][3...]...]"),
        (np.float32([0.1, -1.0, 1e-10]), 3, "[0.1 -1 1e-10]"),
        (np.float64(2.5), None, "[2.5]"),
    ],
)
def test_assert_message_summarizes_values_like_tensorflow(value, summarize, text):
    check = df.Assert(df.constant(False), [value], summarize=summarize)
    with pytest.raises(df.errors.InvalidArgumentError) as info:
        run(check)
    assert f"assertion failed: {text}" in str(info.value)


def test_assert_condition_must_be_a_bool_scalar():
    with pytest.raises(TypeError, match="bool"):
        df.Assert(df.constant(1), ["x"])
    with pytest.raises(ValueError, match="scalar"):
        df.Assert(df.constant([True, False]), ["x"])


# -- Print and print -------------------------------------------------------------------------------
def test_tf1_print_returns_the_input_and_writes_message_and_data_to_stderr(capsys):
    x = df.constant([1, 2, 3, 4])
    out = df.Print(x, ["x:", x], message="values ", summarize=2)
    assert_same(evaluate(out), np.array([1, 2, 3, 4], np.int32))
    assert capsys.readouterr().err == "values [x:][1 2...]\n"


def test_tf1_print_first_n_limits_the_number_of_prints(capsys):
    x = df.constant(1.5)
    out = df.Print(x, [x], first_n=1)
    with df.Session() as sess:
        sess.run(out)
        sess.run(out)
    assert capsys.readouterr().err == "[1.5]\n"


def test_print_writes_to_stderr_by_default(capsys):
    x = df.constant([1, 2])
    op = df.print("x =", x, {"n": x[0]})
    assert isinstance(op, df.Operation) and op.op_def.stateful
    run(op)
    captured = capsys.readouterr()
    assert captured.err == "x = [1 2] {'n': 1}\n" and captured.out == ""


def test_print_to_stdout_with_sep_and_end(capsys):
    op = df.print(df.constant(1), "two", output_stream=sys.stdout, sep=", ", end="!\n")
    run(op)
    assert capsys.readouterr().out == "1, two!\n"


def test_print_summarizes_long_tensors(capsys):
    run(df.print(df.range(10), summarize=2))
    assert capsys.readouterr().err == "[0 1 ... 8 9]\n"


def test_print_under_control_dependencies_runs_before_the_dependent_op(capsys):
    x = df.constant(2.0)
    with df.control_dependencies([df.print("computing")]):
        y = x * 2
    assert_same(evaluate(y), np.float32(4))
    assert capsys.readouterr().err == "computing\n"


def test_print_rejects_an_unknown_stream_and_keywords():
    with pytest.raises(ValueError, match="output_stream"):
        df.print("x", output_stream=42)
    with pytest.raises(ValueError, match="Unknown keyword"):
        df.print("x", stream=sys.stdout)


# -- py_func and numpy_function --------------------------------------------------------------------
def test_py_func_with_a_single_dtype_returns_a_tensor_of_unknown_shape():
    x = df.placeholder(df.float32, [None])
    out = df.py_func(lambda v: v * 2, [x], df.float32)
    assert isinstance(out, df.Tensor) and out.shape.ndims is None
    assert out.op.type == "PyFunc" and out.op.op_def.stateful
    assert_same(evaluate(out, {x: np.ones(2, np.float32)}), np.full(2, 2, np.float32))


def test_py_func_results_are_arrays_or_scalars_of_the_tout_dtypes():
    outs = df.py_func(lambda: (np.float32(1.5), [1, 2]), [], [df.float32, df.int64])
    assert isinstance(outs, list) and len(outs) == 2
    a, b = evaluate(outs)
    assert_same(a, np.float32(1.5))
    assert_same(b, np.array([1, 2], np.int64))


def test_py_func_receives_scalars_as_numpy_scalars_and_the_rest_as_arrays():
    # What TensorFlow hands the function: np.float32 for a float scalar, bytes for a string.
    seen = []
    out = df.py_func(
        lambda x, s, v: seen.append((x, s, v)) or x,
        [df.constant(1.5), df.constant(b"ab"), df.constant([1, 2])],
        df.float32,
    )
    run(out)
    ((x, s, v),) = seen
    assert type(x) is np.float32 and x == 1.5
    assert s == b"ab"
    assert isinstance(v, np.ndarray) and v.tolist() == [1, 2]


def test_py_func_with_a_list_of_one_dtype_returns_a_list():
    (out,) = df.py_func(lambda: np.int32(3), [], [df.int32])
    assert_same(evaluate(out), np.int32(3))


def test_py_func_results_are_not_cast_as_in_tensorflow():
    # A Python float is float64; TensorFlow refuses it for a float32 output rather than cast.
    out = df.py_func(lambda: 1.5, [], df.float32)
    with pytest.raises(df.errors.InvalidArgumentError) as info:
        run(out)
    message = str(info.value)
    assert "float64" in message and "Tout expects float32" in message
    assert "test_misc_ops.py" in message


def test_py_func_with_no_outputs_returns_the_op():
    log = []
    op = df.py_func(lambda: log.append(1), [], [])
    assert isinstance(op, df.Operation)
    run(op)
    assert log == [1]


def test_stateless_py_func_has_its_own_op_type():
    out = df.py_func(np.sin, [df.constant(0.0)], df.float32, stateful=False)
    assert out.op.type == "PyFuncStateless" and not out.op.op_def.stateful


def test_numpy_function_is_a_stateful_py_func():
    out = df.numpy_function(lambda a, b: a + b, [df.constant(1), 2], df.int32, name="plus")
    assert out.op.type == "PyFunc" and out.op.name == "plus"
    assert_same(evaluate(out), np.int32(3))


def test_py_func_returning_the_wrong_number_of_values_fails_the_run():
    outs = df.py_func(lambda: (1, 2, 3), [], [df.int32, df.int32])
    with pytest.raises(df.errors.InvalidArgumentError, match="returned 3 values"):
        run(outs)


def test_py_func_returning_an_unconvertible_value_fails_the_run():
    out = df.py_func(lambda: "text", [], df.float32)
    with pytest.raises(df.errors.InvalidArgumentError, match="has dtype <U4"):
        run(out)


def test_py_func_returning_floats_for_an_int_dtype_fails_the_run():
    out = df.py_func(lambda: 1.5, [], df.int32)
    with pytest.raises(df.errors.InvalidArgumentError, match="but Tout expects int32"):
        run(out)


def test_exception_in_py_func_fails_the_run_naming_the_op():
    def broken():
        raise RuntimeError("boom")

    out = df.py_func(broken, [], df.float32, name="broken_op")
    with pytest.raises(df.errors.OpError, match="broken_op") as info:
        run(out)
    assert "boom" in str(info.value)

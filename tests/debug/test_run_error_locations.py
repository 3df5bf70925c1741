"""Every error of `Session.run` names the op, its type and the user's file:line that built it.

Each test builds the failing op on a line it remembers (``line = here()`` right after it) and
checks that the message holds ``<this file>:<that line>``; inside loops the message also names
the loop and the iteration.
"""

import concurrent.futures
import inspect
import threading
import time

import numpy as np
import pytest
from deadlines import Gate, budget_ms, stopped_in_time

import dataflow as df
from dataflow.framework import errors


def here() -> int:
    """The line before the caller's: ``line = here()`` right after the line that built the op
    under test gives that line."""
    return inspect.currentframe().f_back.f_lineno - 1


def at(line: int) -> str:
    return f"{__file__}:{line}"


def run_error(fetches, feed_dict=None, config=None, options=None) -> errors.OpError:
    with df.Session(config=config) as sess:
        with pytest.raises(errors.OpError) as info:
            sess.run(fetches, feed_dict, options=options)
    return info.value


# -- kernels ---------------------------------------------------------------------------------------


def test_kernel_error_names_op_type_inputs_and_line(graph):
    x = df.placeholder(df.float32, None, name="x")
    w = df.ones([4, 2])
    y = df.matmul(x, w, name="project")
    line = here()
    error = run_error(y, {x: np.ones((2, 3))})
    assert isinstance(error, errors.InvalidArgumentError)
    assert error.op is y.op
    assert "op 'project'" in str(error) and at(line) in str(error)
    assert "float32(2, 3), float32(4, 2)" in str(error)


def test_missing_feed_names_the_placeholder_and_its_line(graph):
    x = df.placeholder(df.float32, [2], name="needed")
    line = here()
    error = run_error(x * 2.0)
    assert isinstance(error, errors.InvalidArgumentError)
    assert "'needed'" in str(error) and at(line) in str(error)


def test_uninitialized_variable_names_the_read_and_its_line(graph):
    v = df.Variable(1.0, name="weights")
    y = v + 1.0
    line = here()
    error = run_error(y)
    assert isinstance(error, errors.FailedPreconditionError)
    assert "uninitialized value weights" in str(error) and at(line) in str(error)


def test_py_func_error_names_the_op_and_keeps_the_python_cause(graph):
    def explode(value):
        raise RuntimeError("the callback failed")

    y = df.py_func(explode, [df.constant(1.0)], df.float32, name="callback")
    line = here()
    error = run_error(y)
    assert isinstance(error, errors.UnknownError)
    assert "op 'callback' (PyFunc)" in str(error) and at(line) in str(error)
    assert "RuntimeError: the callback failed" in str(error)
    assert isinstance(error.__cause__, RuntimeError)


def test_failing_assert_names_the_assert_and_its_line(graph):
    x = df.placeholder(df.float32, [], name="x")
    check = df.Assert(x > 0.0, [x], name="positive")
    line = here()
    error = run_error(check, {x: -1.0})
    assert isinstance(error, errors.InvalidArgumentError)
    assert "op 'positive/Assert' (Assert)" in str(error) and at(line) in str(error)


# -- loops and conds -------------------------------------------------------------------------------


def test_error_inside_a_loop_names_the_op_its_line_the_loop_and_the_iteration(graph):
    def fail_at_seven(k):
        if k == 7:
            raise ValueError("seven is not allowed")
        return np.int32(k)

    def body(i):
        checked = df.py_func(fail_at_seven, [i], df.int32, name="check")
        line[0] = here()
        checked.set_shape([])
        return checked + 1

    line = [0]
    result = df.while_loop(lambda i: i < 10, body, [df.constant(0)], name="count")
    error = run_error(result)
    message = str(error)
    assert "op 'count/check' (PyFunc)" in message and at(line[0]) in message
    assert "loop 'count', iteration 7" in message
    assert "count[iter 0 of root]" in message


def test_error_in_a_nested_loop_names_the_inner_instance_and_the_outer_iteration(graph):
    def fail(i, j):
        if (i, j) == (2, 1):
            raise ValueError("bad pair")
        return np.int32(j)

    def outer_body(i):
        def inner_body(j):
            checked = df.py_func(fail, [i, j], df.int32, name="pair")
            line[0] = here()
            checked.set_shape([])
            return checked + 1

        j_final = df.while_loop(lambda j: j < 3, inner_body, [df.constant(0)], name="inner")
        return i + 0 * j_final + 1

    line = [0]
    result = df.while_loop(lambda i: i < 4, outer_body, [df.constant(0)], name="outer")
    message = str(run_error(result))
    assert at(line[0]) in message
    assert "loop 'outer/inner', iteration 1" in message
    assert "(frame instance outer/inner[iter 2 of outer[iter 0 of root]])" in message


def test_error_in_the_taken_branch_names_the_branch_op_and_the_untaken_one_never_fails(graph):
    x = df.placeholder(df.float32, None, name="x")
    line = [0]

    def taken():
        result = df.reshape(x, [5], name="bad_reshape")
        line[0] = here()
        return result

    y = df.cond(df.constant(True), taken, lambda: df.reshape(x, [7], name="never_runs"))
    error = run_error(y, {x: np.ones(3)})
    assert "op 'cond/bad_reshape' (Reshape)" in str(error) and at(line[0]) in str(error)
    assert "never_runs" not in str(error)


def test_non_scalar_cond_predicate_names_the_switch_and_the_cond_line(graph):
    pred = df.placeholder(df.bool, None, name="pred")
    y = df.cond(pred, lambda: df.constant(1.0), lambda: df.constant(2.0), name="choose")
    line = here()
    error = run_error(y, {pred: [True, False]})
    assert "Switch" in str(error) and at(line) in str(error)


def test_fetching_a_branch_tensor_names_the_op_the_cond_and_the_line(graph):
    holder = {}

    def true_fn():
        holder["t"] = df.constant(1.0) * 2.0
        holder["line"] = here()
        return holder["t"]

    df.cond(df.constant(False), true_fn, lambda: df.constant(0.0), name="branchy")
    with df.Session() as sess:
        with pytest.raises(errors.InaccessibleTensorError) as info:  # refused before running
            sess.run(holder["t"])
    assert "the true branch of cond 'branchy'" in str(info.value)
    assert at(holder["line"]) in str(info.value)


def test_each_fetch_without_a_value_carries_tf1s_retval_phrase_with_its_position(graph):
    output_false, output_true = df.switch(df.constant([1, 2]), df.constant(True))
    dead = df.identity(output_false, name="dead_branch")
    with df.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run([output_true, dead])
    message = str(info.value)
    assert "dead_branch (Retval[1] does not have value): it depends on the untaken" in message
    assert "Retval[0]" not in message


def test_fetching_a_tensor_inside_a_loop_says_so_and_names_the_line(graph):
    holder = {}

    def body(i):
        holder["t"] = i + 1
        holder["line"] = here()
        return holder["t"]

    df.while_loop(lambda i: i < 3, body, [df.constant(0)], name="looped")
    with df.Session() as sess:
        with pytest.raises(errors.InaccessibleTensorError) as info:  # refused before running
            sess.run(holder["t"])
    error = info.value
    assert "inside the while loop 'looped'" in str(error) and at(holder["line"]) in str(error)


# -- malformed graphs, deadlines, threads ----------------------------------------------------------


def test_invalid_program_names_the_offending_op_and_its_line(graph):
    misplaced = df.exit(df.constant(1.0), name="stray_exit")
    line = here()
    error = run_error(misplaced)
    assert isinstance(error, errors.InvalidArgumentError)
    assert "stray_exit" in str(error) and at(line) in str(error)
    assert error.op is misplaced.op


def test_deadline_in_an_endless_loop_names_the_loop_line_and_the_iteration(graph):
    start = df.constant(0)
    result = df.while_loop(lambda i: i >= 0, lambda i: i + 1, [start], name="forever")
    line = here()
    with df.Session() as sess:

        def stopped_early():  # builds the plan and starts a driver thread
            with pytest.raises(errors.DeadlineExceededError):
                sess.run(result, options=df.RunOptions(timeout_in_ms=1))

        far = df.RunOptions(timeout_in_ms=60_000)
        budget = budget_ms(lambda: sess.run(start, options=far), stopped_early, floor_ms=50)
        stop = stopped_in_time(
            lambda ms: sess.run(result, options=df.RunOptions(timeout_in_ms=ms)),
            budget,
            errors.DeadlineExceededError,
            lambda e: e.op is not None and e.op.name.startswith("forever/"),
        )
    error = stop.error
    message = str(error)
    assert f"timeout_in_ms={stop.budget_ms}" in message
    assert "forever[iter 0 of root]" in message
    assert f"The loop 'forever' was built at {at(line)}" in message
    assert error.op is not None
    assert error.op.graph is graph  # the user's op, not the graph passes' copy of it


def test_deadline_names_the_op_still_running_on_the_pool(graph):
    gate = Gate()
    big = df.constant(np.zeros(100_000))
    slow = df.py_func(lambda a: gate.wait() and a, [big], df.float64, name="slow")
    line = here()
    quick = df.py_func(lambda a: a, [big], df.float64, name="quick")
    sess = df.Session(config=df.ConfigProto(inter_op_parallelism_threads=2))
    try:
        far = df.RunOptions(timeout_in_ms=60_000)
        budget = budget_ms(lambda: sess.run([slow, quick], options=far), floor_ms=100)
        gate.arm()
        error = stopped_in_time(
            lambda ms: sess.run([slow, quick], options=df.RunOptions(timeout_in_ms=ms)),
            budget,
            errors.DeadlineExceededError,
            lambda e: gate.entered > 0,
        ).error
    finally:
        gate.release()
        sess.close()
    assert isinstance(error, errors.DeadlineExceededError)
    # The slow kernel fired first and went to the pool (the quick one was ready beside it).
    assert f"Still running: op 'slow' (PyFunc) created at {at(line)}" in str(error)
    assert error.op is not None
    assert error.op.graph is graph


def test_error_of_a_kernel_on_a_pool_thread_names_the_op_and_its_line(graph):
    threads = []

    def fail(a):
        threads.append(threading.current_thread().name)
        time.sleep(0.01)
        raise ValueError("pool kernel failed")

    def fine(a):
        threads.append(threading.current_thread().name)
        time.sleep(0.01)
        return a

    big = df.constant(np.zeros(100_000))
    bad = df.py_func(fail, [big], df.float64, name="bad")
    line = here()
    good = df.py_func(fine, [big], df.float64, name="good")
    config = df.ConfigProto(inter_op_parallelism_threads=2)
    error = run_error([good, bad], config=config)
    assert "op 'bad' (PyFunc)" in str(error) and at(line) in str(error)
    assert any(name.startswith("dataflow-inter-op") for name in threads)


def test_wrong_feeds_name_the_placeholder_line_and_the_run_line(graph):
    x = df.placeholder(df.float32, [3], name="x")
    line = here()
    with df.Session() as sess:
        for bad in ([[1, 2], [3]], ["a", "b", "c"], np.ones(4)):
            with pytest.raises((TypeError, ValueError)) as info:
                run_line = here() + 2
                sess.run(x, {x: bad})
            assert at(line) in str(info.value) and at(run_line) in str(info.value)


def test_an_op_loaded_from_a_saved_graph_keeps_the_line_that_built_it(graph, tmp_path):
    x = df.placeholder(df.float32, None, name="x")
    y = df.reshape(x, [4], name="needs_four")
    line = here()
    path = tmp_path / "model.dfg"
    df.io.save_graph(graph, str(path))
    loaded = df.io.load_graph(str(path))
    with df.Session(graph=loaded) as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run("needs_four:0", {"x:0": np.ones(3)})
    assert at(line) in str(info.value)
    del y


def test_a_failed_run_leaves_the_session_usable_and_variables_intact(graph):
    v = df.Variable(5.0, name="v")
    x = df.placeholder(df.float32, [], name="x")
    update = v.assign_add(x)
    with df.control_dependencies([update]):
        checked = df.Assert(x < 10.0, [x])
    with df.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(errors.InvalidArgumentError):
            sess.run([update, checked], {x: 100.0})
        assert sess.run(v) == 5.0
        sess.run([update, checked], {x: 1.0})
        assert sess.run(v) == 6.0


def test_a_kernel_the_thread_pool_cancelled_is_named(graph):
    class CancellingPool(concurrent.futures.Executor):
        def submit(self, fn, *args, **kwargs):
            future = concurrent.futures.Future()
            future.cancel()
            return future

    big = df.constant(np.zeros(100_000))
    heavy = df.py_func(lambda a: a, [big], df.float64, name="heavy")
    line = here()
    light = df.py_func(lambda a: a, [big], df.float64, name="light")
    sess = df.Session(config=df.ConfigProto(inter_op_parallelism_threads=2))
    sess._pool = CancellingPool()  # a pool shut down with cancel_futures while the run used it
    with pytest.raises(errors.CancelledError) as info:
        sess.run([heavy, light])
    assert "op 'heavy' (PyFunc)" in str(info.value) and at(line) in str(info.value)
    assert info.value.op is heavy.op


def test_an_op_whose_kernel_cannot_be_built_is_named_with_its_line(graph, monkeypatch):
    y = df.negative(df.constant(1.0), name="odd")
    line = here()

    def refuse(attrs):  # a kernel factory that rejects the op's attributes
        raise ValueError("unsupported mode 'fast'")

    monkeypatch.setattr(y.op.op_def, "kernel", refuse)
    error = run_error(y)
    assert isinstance(error, errors.InvalidArgumentError)
    assert "op 'odd' (Neg)" in str(error) and at(line) in str(error)
    assert "unsupported mode 'fast'" in str(error)
    assert error.op is y.op

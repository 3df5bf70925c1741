"""Session: feeds, fetches in structures, errors that name the op and line, concurrency,
timeouts, metadata.  Every failed run leaves the Session usable and the variables intact."""

import collections
import inspect
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from deadlines import Gate, budget_ms, stopped_in_time, wait_until
from forking import in_forked_child

import dataflow as df
from dataflow.client import compiler
from dataflow.client.compiler.loops import CompiledLoop


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


# -- fetches ---------------------------------------------------------------------------------------
def test_fetch_structures_come_back_in_the_same_shape():
    a = df.constant(1.0, name="a")
    b = df.constant(2, name="b")
    Pair = collections.namedtuple("Pair", "first second")
    with df.Session() as sess:
        out = sess.run({"x": [a, (b, a)], "p": Pair(a, b), "name": "b:0"})
    assert out["x"][0] == 1.0
    assert isinstance(out["x"][1], tuple) and out["x"][1][0] == 2
    assert isinstance(out["p"], Pair) and out["p"].second == 2
    assert out["name"] == 2


def test_fetching_an_operation_returns_none_and_runs_it():
    v = df.Variable(3.0)
    with df.Session() as sess:
        assert sess.run(v.initializer) is None
        assert sess.run("Variable/Assign") is None
        assert sess.run(v) == 3.0


def test_scalar_results_are_numpy_scalars_of_the_static_dtype():
    x = df.constant(1.5, dtype=df.float64) + 1.0
    with df.Session() as sess:
        value = sess.run(x)
    assert value.dtype == np.float64 and value == 2.5


def test_fetch_of_unknown_name_or_other_graph_raises_clearly():
    df.constant(1.0, name="a")
    with df.Graph().as_default():
        other = df.constant(1.0)
    with df.Session() as sess:
        with pytest.raises(ValueError, match="nope:0"):
            sess.run("nope:0")
        with pytest.raises(ValueError, match="a:1"):
            sess.run("a:1")
        with pytest.raises(ValueError, match="cannot be interpreted"):
            sess.run(other)
        with pytest.raises(TypeError):
            sess.run(None)
        assert sess.run("a:0") == 1.0  # still usable


# -- feeds -----------------------------------------------------------------------------------------
def test_feeds_by_tensor_or_name_are_converted_to_the_placeholder_dtype():
    x = df.placeholder(df.float32, shape=[2], name="x")
    y = x * 2.0
    with df.Session() as sess:
        out = sess.run(y, {x: [1, 2]})
        assert out.dtype == np.float32 and out.tolist() == [2.0, 4.0]
        assert sess.run(y, {"x:0": np.array([3.0, 4.0])}).tolist() == [6.0, 8.0]


def test_any_tensor_may_be_fed_and_cuts_off_its_inputs():
    x = df.placeholder(df.float32, name="x")
    y = df.multiply(x, 3.0)
    z = y + 1.0
    with df.Session() as sess:
        assert sess.run(z, {y: 10.0}) == 11.0  # x need not be fed


_PASSES_ON_AND_OFF = [
    pytest.param(None, id="passes_on"),
    pytest.param(
        df.ConfigProto(
            graph_options=df.GraphOptions(
                rewrite_options=df.RewriterConfig(disable_meta_optimizer=True)
            )
        ),
        id="passes_off",
    ),
]


@pytest.mark.parametrize("config", _PASSES_ON_AND_OFF)
def test_a_control_dependency_on_a_fed_placeholder_waits_for_its_feed(config):
    flag = df.placeholder(df.bool, name="flag")
    x = df.placeholder(df.float32, [], name="x")
    with df.control_dependencies([flag]):
        y = df.identity(df.constant(1.0))
        z = x * 2.0
    with df.Session(config=config) as sess:
        assert sess.run(y, {flag: True}) == 1.0
        assert sess.run([y, z], {flag: False, x: 3.0}) == [1.0, 6.0]
        with pytest.raises(df.errors.InvalidArgumentError, match="must feed a value"):
            sess.run(y)  # not fed: the placeholder runs for the control edge and fails


@pytest.mark.parametrize("config", _PASSES_ON_AND_OFF)
def test_a_fed_placeholder_is_replaced_whole_without_what_it_waited_for(config):
    unfed = df.placeholder(df.float32, name="unfed")
    with df.control_dependencies([unfed]):
        flag = df.placeholder(df.bool, name="flag")
    with df.control_dependencies([flag]):
        y = df.identity(df.constant(1.0))
    with df.Session(config=config) as sess:
        assert sess.run(y, {flag: True}) == 1.0  # as TensorFlow rewires a fed Placeholder


@pytest.mark.parametrize("config", _PASSES_ON_AND_OFF)
def test_an_op_whose_output_is_fed_still_runs_for_its_control_consumers(config):
    v = df.Variable(0.0)
    bump = df.assign_add(v, 1.0)
    x = df.placeholder(df.float32, name="x")
    doubled = x * 2.0
    with df.control_dependencies([bump]):
        after_bump = df.identity(df.constant(1.0))
    with df.control_dependencies([doubled]):
        after_doubled = df.identity(df.constant(1.0))
    with df.Session(config=config) as sess:
        sess.run(v.initializer)
        assert sess.run(after_bump, {bump: 10.0}) == 1.0
        assert sess.run(v) == 1.0  # feeding replaced the tensor; the assign still ran
        assert sess.run(after_doubled, {doubled: 5.0, x: 1.0}) == 1.0
        with pytest.raises(df.errors.InvalidArgumentError, match="must feed a value") as info:
            sess.run(after_doubled, {doubled: 5.0})  # the Mul runs, and needs x
        assert "'x'" in str(info.value)


def _loop_with_a_nested_loop():
    """``x`` doubled three times by a loop whose body runs an inner loop; returns the outer
    loop's result and, by name, tensors that lie inside the loops."""
    x = df.placeholder(df.float64, [], name="x")
    inside = {}

    def inner_body(j):
        return j + 1

    def body(i, v):
        inside["doubled"] = v * 2.0
        inside["inner_result"] = df.while_loop(lambda j: j < 2, inner_body, [i], name="inner")
        return i + 1, inside["doubled"]

    def cond(i, v):
        inside["counter"] = i
        return i < 3

    _, result = df.while_loop(cond, body, [df.constant(0), x], name="outer")
    return x, result, inside


@pytest.mark.parametrize("name", ["doubled", "counter", "inner_result"])
def test_a_tensor_inside_a_while_loop_may_not_be_fed(name):
    x, result, inside = _loop_with_a_nested_loop()
    fed = inside[name]
    with df.Session() as sess:
        with pytest.raises(ValueError) as info:
            sess.run(result, {x: 1.0, fed: 5})
        message = str(info.value)
        assert f"Tensor '{fed.name}' may not be fed" in message
        assert "inside the while loop frame 'outer'" in message
        assert f"created at {fed.op.location}" in message
        assert sess.run(result, {x: 1.0}) == 8.0  # the Session is usable


def test_a_loops_result_and_tensors_outside_loops_may_be_fed():
    x, result, _ = _loop_with_a_nested_loop()
    p = df.placeholder(df.bool, [])
    branch = {}

    def taken():
        branch["tensor"] = result + 1.0
        return branch["tensor"] * 10.0

    chosen = df.cond(p, taken, lambda: result)
    with df.Session() as sess:
        assert sess.run(result * 1.0, {result: 5.0}) == 5.0  # x need not be fed
        assert sess.run(chosen, {x: 1.0, p: True, branch["tensor"]: 2.0}) == 20.0
        assert sess.run(chosen, {x: 1.0, p: False, branch["tensor"]: 2.0}) == 8.0


def test_a_tensor_inside_a_loop_built_by_hand_may_not_be_fed():
    x = df.placeholder(df.float64, [], name="x")
    entered = df.identity(df.enter(x, frame_name="by_hand"), name="entered")
    with df.Session() as sess:
        with pytest.raises(ValueError, match="'entered:0' may not be fed.*frame 'by_hand'"):
            sess.run(df.exit(entered), {entered: 1.0})


@pytest.mark.parametrize("name", ["doubled", "counter", "inner_result"])
def test_fetching_a_tensor_inside_a_while_loop_is_refused_before_anything_runs(name):
    x, result, inside = _loop_with_a_nested_loop()
    calls = []
    logged = df.py_func(lambda v: calls.append(v) or v, [x], df.float64)
    inner = inside[name]
    with df.Session() as sess:
        with pytest.raises(df.errors.InaccessibleTensorError) as info:
            sess.run([logged, result, inner], {x: 1.0})
        message = str(info.value)
        assert f"Tensor '{inner.name}' (created at {inner.op.location})" in message
        assert f"inside the while loop 'outer' built at {result.op.location}" in message
        assert f"run at {__file__}:" in message
        assert isinstance(info.value, ValueError)  # as TensorFlow's InaccessibleTensorError
        assert calls == []  # refused before any op ran
        assert sess.run(result, {x: 1.0}) == 8.0  # the Session is usable


def test_an_op_inside_a_while_loop_cannot_be_fetched_either():
    _, result, inside = _loop_with_a_nested_loop()
    with df.Session() as sess:
        with pytest.raises(df.errors.InaccessibleTensorError, match="Operation 'outer/mul'"):
            sess.run(inside["doubled"].op)


def test_a_tensor_inside_a_loop_built_by_hand_cannot_be_fetched():
    x = df.placeholder(df.float64, [], name="x")
    entered = df.identity(df.enter(x, frame_name="by_hand"), name="entered")
    with df.Session() as sess:
        with pytest.raises(df.errors.InaccessibleTensorError, match="loop 'by_hand'"):
            sess.run(entered, {x: 1.0})
        assert sess.run(df.exit(entered), {x: 1.0}) == 1.0


def test_missing_feed_names_the_placeholder_and_its_line():
    x = df.placeholder(df.float32, shape=[], name="needed")
    y = x + 1.0
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="needed") as info:
            sess.run(y)
        assert "test_session.py" in str(info.value)
        assert info.value.op is x.op
        assert sess.run(y, {x: 1.0}) == 2.0


def test_feed_of_wrong_shape_is_rejected_with_both_shapes():
    x = df.placeholder(df.float32, shape=[None, 2], name="x")
    with df.Session() as sess:
        with pytest.raises(ValueError, match=r"shape \(3,\).*\(\?, 2\)"):
            sess.run(x, {x: [1.0, 2.0, 3.0]})


@pytest.mark.parametrize(
    "bad, error",
    [
        ("hello", ValueError),
        ([1, "a"], ValueError),
        ([[1], [1, 2]], ValueError),
        (2**40, TypeError),
    ],
)
def test_feed_that_cannot_convert_to_the_dtype_is_rejected(bad, error):
    x = df.placeholder(df.int32, name="x")
    with df.Session() as sess:
        with pytest.raises(error, match="x:0"):
            sess.run(x, {x: bad})
        assert sess.run(x, {x: 3}) == 3


def test_feeds_convert_as_numpy_converts_like_tensorflow():
    i = df.placeholder(df.int32, [2])
    b = df.placeholder(df.bool, [3])
    with df.Session() as sess:
        out = sess.run(i, {i: [1.5, -2.7]})
        assert out.dtype == np.int32 and out.tolist() == [1, -2]
        assert sess.run(b, {b: [2, 0, 0.5]}).tolist() == [True, False, True]


def test_placeholder_with_default_uses_default_unless_fed():
    x = df.placeholder_with_default(df.constant([1.0, 2.0]), shape=[None])
    with df.Session() as sess:
        assert sess.run(x).tolist() == [1.0, 2.0]
        assert sess.run(x, {x: [5.0]}).tolist() == [5.0]


# -- kernel errors ---------------------------------------------------------------------------------
def test_kernel_error_names_op_type_shapes_and_user_line():
    a = df.placeholder(df.float32, shape=[None, None])
    b = df.placeholder(df.float32, shape=[None, None])
    product = df.matmul(a, b, name="bad_product")
    line = product.op.location.lineno
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError) as info:
            sess.run(product, {a: np.ones((2, 3)), b: np.ones((4, 5))})
    message = str(info.value)
    assert "bad_product" in message and "MatMul" in message
    assert f"test_session.py:{line}" in message
    assert "float32(2, 3)" in message and "float32(4, 5)" in message
    assert info.value.op is product.op


def test_failed_run_leaves_variables_unchanged_and_session_usable():
    v = df.Variable(1.0)
    x = df.placeholder(df.float32, shape=[None])
    update = v.assign_add(5.0)
    with df.control_dependencies([update]):
        fails = df.matmul(df.reshape(x, [1, -1]), df.reshape(x, [1, -1]))
    with df.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(df.errors.InvalidArgumentError):
            sess.run(fails, {x: [1.0, 2.0]})
        assert sess.run(v) == 1.0
        assert sess.run(update) == 6.0
        assert sess.run(v) == 6.0


def test_py_func_exception_becomes_an_error_naming_the_op():
    def explode(x):
        raise ValueError("boom")

    y = df.py_func(explode, [df.constant(1.0)], df.float32, name="exploder")
    with df.Session() as sess:
        with pytest.raises(df.errors.OpError, match="exploder.*boom"):
            sess.run(y)


# -- timeouts --------------------------------------------------------------------------------------
# A deadline far enough never to pass: the run is still driven as a timed run.
_FAR = df.RunOptions(timeout_in_ms=60_000)


def _stopped_early(sess, fetch) -> None:
    """Runs ``fetch`` (which never ends) with a deadline of 1 ms: its plan is built and a
    driver thread started, so that a later deadline covers the run alone."""
    with pytest.raises(df.errors.DeadlineExceededError):
        sess.run(fetch, options=df.RunOptions(timeout_in_ms=1))


def _stopped(sess, fetch, budget: int, reached):
    """A run of ``fetch`` that only its deadline stops (see `stopped_in_time`)."""
    return stopped_in_time(
        lambda ms: sess.run(fetch, options=df.RunOptions(timeout_in_ms=ms)),
        budget,
        df.errors.DeadlineExceededError,
        reached,
    )


def _in_loop(name: str):
    """Whether a deadline error stopped the run after an op of the loop ``name``."""
    return lambda error: error.op is not None and error.op.name.startswith(name + "/")


def test_endless_while_loop_stops_at_the_deadline():
    i = df.constant(0)
    endless = df.while_loop(lambda i: i >= 0, lambda i: i + 0 + 1 - 1, [i], name="endless")
    with df.Session() as sess:
        budget = budget_ms(
            lambda: sess.run(i, options=_FAR),
            warm_up=lambda: _stopped_early(sess, endless),
            floor_ms=200,
        )
        error = _stopped(sess, endless, budget, _in_loop("endless")).error
        message = str(error)
        assert "'endless" in message and "test_session.py:" in message
        assert error.op is not None
        assert sess.run(i) == 0  # usable afterwards


def here() -> int:
    """The line before the caller's: ``line = here()`` right after the line that built the op
    under test gives that line."""
    return inspect.currentframe().f_back.f_lineno - 1


def test_a_blocking_py_func_is_stopped_at_the_deadline_and_named():
    gate = Gate()
    x = df.constant(1.0)
    blocked = df.py_func(lambda a: gate.wait() and a, [x], df.float32, name="blocker")
    line = here()
    with df.Session() as sess:
        budget = budget_ms(lambda: sess.run(blocked, options=_FAR))
        gate.arm()
        try:
            stop = _stopped(sess, blocked, budget, lambda e: gate.entered > 0)
            assert stop.seconds < stop.budget_ms / 1000 + 10  # not the 60 s it blocks for
        finally:
            gate.release()
    message = str(stop.error)
    assert f"Still running: op 'blocker' (PyFunc) created at {__file__}:{line}" in message
    assert "cannot be interrupted" in message
    assert stop.error.op is blocked.op


def test_a_run_stopped_in_a_blocking_op_leaves_variables_and_session_as_they_were():
    gate = Gate()
    v = df.Variable(1.0, name="v")
    assigned = v.assign(5.0)
    blocked = df.py_func(lambda a: gate.wait() and a, [assigned], df.float32, name="blocker")
    after = v.assign(blocked + 1.0)
    with df.Session() as sess:
        budget = budget_ms(lambda: sess.run(after, options=_FAR))
        sess.run(v.initializer)
        gate.arm()
        try:
            stop = _stopped(sess, after, budget, lambda e: gate.entered > 0)
            assert stop.seconds < stop.budget_ms / 1000 + 10  # not the 60 s it blocks for
            assert sess.run(v) == 1.0  # the assign that ran before the op blocked is dropped
            assert sess.run(v.assign_add(2.0), options=_FAR) == 3.0
        finally:
            gate.release()
        assert sess.run(v, options=_FAR) == 3.0


def test_a_blocking_op_in_a_loop_is_named_with_its_iteration():
    gate = Gate()

    def step(i):
        if i == 2:
            gate.wait()
        return i + 1

    def body(i):
        out = df.py_func(step, [i], df.int32, name="step")
        out.set_shape([])
        return out

    line = here() - 3
    result = df.while_loop(lambda i: i < 10, body, [df.constant(0)], name="spin")
    loop_line = here()
    with df.Session() as sess:
        budget = budget_ms(lambda: sess.run(result, options=_FAR))
        gate.arm()
        try:
            error = _stopped(sess, result, budget, lambda e: gate.entered > 0).error
        finally:
            gate.release()
    message = str(error)
    assert f"Still running: op 'spin/step' (PyFunc) created at {__file__}:{line}" in message
    assert "in loop 'spin', iteration 2" in message
    assert f"The loop 'spin' was built at {__file__}:{loop_line}" in message


def test_an_op_blocked_on_the_inter_op_pool_holds_up_neither_later_runs_nor_close():
    gate = Gate()
    big = df.constant(np.zeros(100_000))
    # Both ops take milliseconds, so the executor's cost model counts them as expensive and
    # sends one to the pool while the run's thread runs the other.
    ran_on: list = []

    def wait_for_the_gate(a):
        time.sleep(0.005)
        ran_on.append(threading.current_thread().name)
        return gate.wait() and a

    slow = df.py_func(wait_for_the_gate, [big], df.float64, name="slow")
    quick = df.py_func(lambda a: time.sleep(0.005) or a + 1.0, [big], df.float64, name="quick")
    sess = df.Session(config=df.ConfigProto(inter_op_parallelism_threads=2))
    try:
        budget = budget_ms(lambda: sess.run([slow, quick], options=_FAR))
        gate.arm()
        error = _stopped(sess, [slow, quick], budget, lambda e: gate.entered > 0).error
        # The slow op fired first and went to the pool (the quick one was ready beside it).
        assert "Still running: op 'slow' (PyFunc)" in str(error)
        assert ran_on[-1].startswith("dataflow-inter-op")
        assert sess.run([quick, quick + 1.0])[1][0] == 2.0
        started = time.monotonic()
        sess.close()
        assert time.monotonic() - started < 10  # not the 60 s the op blocks for
    finally:
        gate.release()
        sess.close()


def test_cheap_ops_run_on_the_calling_thread_and_expensive_independent_ones_overlap():
    # The executor times each op whose cost it cannot tell in advance (a py_func, an op on a
    # large array) and keeps the cheap ones on the thread that runs the step: a step of cheap
    # ops wakes no pool thread, whatever the size of its arrays.
    ran_on: dict[str, int] = {}

    def recorded(name, seconds=0.0):
        def run(value):
            if seconds:
                time.sleep(seconds)
            ran_on[name] = threading.get_ident()
            return value

        return run

    x = df.placeholder(df.float64, [100_000])
    chains = []
    for chain in ("a", "b"):
        value = x
        for step in range(5):
            name = f"{chain}{step}"
            value = df.py_func(recorded(name), [value], df.float64, stateful=False, name=name)
        chains.append(value)
    slow = [df.py_func(recorded(n, 0.005), [x], df.float64, name=n) for n in ("s0", "s1")]
    feed = {x: np.ones(100_000)}
    with df.Session(config=df.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        for _ in range(5):
            sess.run(chains, feed)
        ran_on.clear()
        for _ in range(20):
            sess.run(chains, feed)
        assert set(ran_on.values()) == {threading.get_ident()}
        for _ in range(3):
            sess.run(slow, feed)
            assert ran_on["s0"] != ran_on["s1"]


# -- variables -------------------------------------------------------------------------------------
def test_reading_an_uninitialized_variable_fails_with_failed_precondition():
    v = df.Variable(1.0, name="weights")
    with df.Session() as sess:
        with pytest.raises(df.errors.FailedPreconditionError, match="weights"):
            sess.run(v + 1.0)


def test_variable_values_persist_across_runs_and_belong_to_the_session():
    v = df.Variable(0, name="counter")
    increment = v.assign_add(1)
    init = df.global_variables_initializer()
    with df.Session() as first, df.Session() as second:
        first.run(init)
        second.run(init)
        for _ in range(3):
            first.run(increment)
        assert first.run(v) == 3
        assert second.run(v) == 0


def test_control_dependency_orders_a_read_after_an_assign():
    v = df.Variable(1.0)
    assign = v.assign(10.0)
    with df.control_dependencies([assign]):
        doubled = v * 2.0
    with df.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(doubled) == 20.0


def test_variable_collections_and_initializers():
    a = df.Variable(1.0, name="a")
    b = df.Variable(2.0, name="b", trainable=False)
    assert df.global_variables() == [a, b]
    assert df.trainable_variables() == [a]
    with df.Session() as sess:
        sess.run(df.variables_initializer([b]))
        assert sess.run(b) == 2.0
        with pytest.raises(df.errors.FailedPreconditionError):
            sess.run(a)


def test_variable_load_and_eval_in_default_session():
    v = df.Variable(np.zeros(2, dtype=np.float32))
    with df.Session():
        v.load([1.0, 2.0])
        assert v.eval().tolist() == [1.0, 2.0]
        assert (v + 1.0).eval().tolist() == [2.0, 3.0]


# -- concurrency -----------------------------------------------------------------------------------
def in_threads(count: int, work) -> list:
    """Runs ``work(k)`` on ``count`` threads at once; the exceptions they raised."""
    raised = []

    def worker(k):
        try:
            work(k)
        except Exception as e:
            raised.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a run did not finish within 60 s"
    return raised


def test_concurrent_runs_from_threads_give_correct_results():
    x = df.placeholder(df.float64, shape=[])
    i0 = df.constant(0)
    _, total = df.while_loop(lambda i, t: i < 50, lambda i, t: (i + 1, t + x), [i0, x * 0.0])
    results = {}
    with df.Session() as sess:

        def work(k):
            for _ in range(5):
                results[k] = sess.run(total, {x: float(k)})

        assert in_threads(8, work) == []
    assert results == {k: 50.0 * k for k in range(8)}


def _pool_threads() -> set:
    """The threads of the Sessions' inter-op pools and of the drivers of timed runs."""
    prefixes = ("dataflow-inter-op", "dataflow-run-driver")
    return {t for t in threading.enumerate() if t.name.startswith(prefixes)}


def test_pool_threads_end_once_concurrent_timed_runs_are_over_and_sessions_closed():
    before = _pool_threads()
    x = df.placeholder(df.float64, [128, 128])
    y = df.matmul(x, x) + df.matmul(x * 2.0, x)  # two large products: the inter-op pool
    gate = threading.Barrier(16, timeout=30)
    config = df.ConfigProto(inter_op_parallelism_threads=4)

    def work(k):
        with df.Session(graph=y.graph, config=config) as sess:
            gate.wait()  # sixteen timed runs at once: sixteen driver threads
            for _ in range(3):
                sess.run(y, {x: np.ones([128, 128])}, options=df.RunOptions(timeout_in_ms=60_000))

    assert in_threads(16, work) == []
    assert wait_until(lambda: not (_pool_threads() - before)), _pool_threads() - before


def test_an_open_sessions_idle_inter_op_threads_end_and_come_back_when_needed():
    x = df.placeholder(df.float64, [128, 128])
    y = df.matmul(x, x) + df.matmul(x * 2.0, x)
    with df.Session(config=df.ConfigProto(inter_op_parallelism_threads=4)) as sess:
        sess.run(y, {x: np.ones([128, 128])})
        pool = sess._pool
        assert pool is not None and pool.thread_count > 0
        assert wait_until(lambda: pool.thread_count == 0)
        assert sess.run(y, {x: np.ones([128, 128])})[0, 0] == 3 * 128.0


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("timeout_ms", [0, 60_000])
def test_concurrent_runs_updating_a_variable_lose_no_update(threads, timeout_ms):
    # Both runs read the variable before either commits (the barrier holds each run until the
    # other has updated); each commit must apply its run's change to the other's result.
    barrier = threading.Barrier(2, timeout=30)
    counter = df.Variable(0, name="counter")
    weights = df.Variable(np.zeros(3), name="weights")
    step = df.placeholder(df.float64, shape=[3])
    updates = [counter.assign_add(1), weights.assign_sub(step)]
    with df.control_dependencies(updates):
        both_updated = df.py_func(lambda: np.float64(barrier.wait()), [], df.float64)
    options = df.RunOptions(timeout_in_ms=timeout_ms)
    config = df.ConfigProto(inter_op_parallelism_threads=threads)
    with df.Session(config=config) as sess:
        sess.run(df.global_variables_initializer())

        def work(k):
            for _ in range(3):
                sess.run(both_updated, {step: np.full(3, k + 1.0)}, options=options)

        assert in_threads(2, work) == []
        assert sess.run(counter) == 6
        assert sess.run(weights).tolist() == [-9.0, -9.0, -9.0]


def test_an_assign_in_a_concurrent_run_replaces_the_value_as_a_whole():
    barrier = threading.Barrier(2, timeout=30)
    v = df.Variable(0.0, name="v")
    value = df.placeholder(df.float32, shape=[])
    add = df.placeholder(df.bool, shape=[])
    update = df.cond(add, lambda: v.assign_add(value), lambda: v.assign(value))
    with df.control_dependencies([update]):
        both_updated = df.py_func(lambda: np.float32(barrier.wait()), [], df.float32)
    with df.Session(config=df.ConfigProto(inter_op_parallelism_threads=1)) as sess:
        sess.run(v.initializer)
        adder = threading.Thread(target=sess.run, args=(both_updated, {value: 1.0, add: True}))
        adder.start()
        sess.run(both_updated, {value: 10.0, add: False})
        adder.join(timeout=60)
        # Either order of the two commits is a sequential order: assign then add gives 11,
        # add then assign gives 10; the add is never applied to a value it did not read twice.
        assert sess.run(v) in (10.0, 11.0)


@pytest.mark.parametrize("timeout_ms", [0, 60_000])
def test_a_run_going_on_when_the_session_is_closed_is_cancelled_and_writes_nothing(timeout_ms):
    started, release = threading.Event(), threading.Event()
    v = df.Variable(1.0, name="v")
    assigned = v.assign(5.0)
    waited = df.py_func(
        lambda a: (started.set(), release.wait(30))[1] and a, [assigned], df.float32
    )
    with df.control_dependencies([waited]):
        read_after = v.read_value() + 0.0
    outcome = []

    def run(fetch):
        try:
            outcome.append(sess.run(fetch, options=df.RunOptions(timeout_in_ms=timeout_ms)))
        except Exception as e:
            outcome.append(e)

    for fetch in (waited, read_after):
        started.clear()
        release.clear()
        outcome.clear()
        sess = df.Session(config=df.ConfigProto(inter_op_parallelism_threads=1))
        sess.run(v.initializer)
        values = sess._variable_values
        runner = threading.Thread(target=run, args=(fetch,))
        runner.start()
        assert started.wait(30)
        sess.close()
        release.set()
        runner.join(timeout=60)
        assert len(outcome) == 1 and isinstance(outcome[0], df.errors.CancelledError), outcome
        assert "closed while the run was in progress" in str(outcome[0])
        assert sess._variable_values == {} and values["v"] == 1.0  # nothing committed
        with pytest.raises(RuntimeError, match="closed Session"):
            sess.run(v)


@pytest.fixture
def tier():
    """Sets how loops run for one test ("interpreted", "compiled" to Python, "native") and
    restores the modes from before it."""
    previous = compiler.mode(), compiler.native_mode()

    def set_tier(name: str) -> None:
        if name == "native" and not compiler.native_available():
            pytest.skip("numba is not installed")
        compiler.set_mode("off" if name == "interpreted" else "force")
        compiler.set_native("force" if name == "native" else "off")

    yield set_tier
    compiler.set_mode(previous[0])
    compiler.set_native(previous[1])


@pytest.mark.parametrize("timeout_ms", [0, 600_000])
@pytest.mark.parametrize("loops_run", ["interpreted", "compiled", "native"])
def test_closing_the_session_stops_a_loop_running_in_another_thread(tier, loops_run, timeout_ms):
    """A loop of 10**15 iterations, run in a thread, ends with ``CancelledError`` when its
    Session is closed, however loops run and with a deadline or without; the Session stays
    closed, with no variable values and no run in progress."""
    tier(loops_run)
    started = threading.Event()
    begin = df.py_func(lambda: (started.set(), np.int64(0))[1], [], df.int64)
    begin.set_shape([])
    endless = df.while_loop(lambda i: i < 10**15, lambda i: [i + 1], [begin])
    outcome = []

    def run():
        try:
            outcome.append(sess.run(endless, options=df.RunOptions(timeout_in_ms=timeout_ms)))
        except Exception as e:
            outcome.append(e)

    sess = df.Session()
    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    assert started.wait(60)
    (plan,) = sess._plans.values()
    closer = threading.Thread(target=sess.close, daemon=True)
    closer.start()
    closer.join(timeout=60)
    assert not closer.is_alive(), "close() waits for the loop"
    runner.join(timeout=60)
    assert not runner.is_alive(), "the loop goes on after close()"
    assert len(outcome) == 1 and isinstance(outcome[0], df.errors.CancelledError), outcome
    assert "closed while the run was in progress" in str(outcome[0])
    assert sess._variable_values == {} and not sess._cancellation._stops  # no run goes on
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(endless)
    loops = [r for r in getattr(plan.compiled, "regions", ()) if isinstance(r, CompiledLoop)]
    assert len(loops) == (0 if loops_run == "interpreted" else 1)
    assert all(bool(getattr(r.function, "native", None)) == (loops_run == "native") for r in loops)


def test_an_op_blocked_forever_does_not_keep_the_interpreter_from_exiting():
    script = textwrap.dedent(
        f"""
        import sys
        import time
        import numpy as np
        import dataflow as df
        sys.path.insert(0, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r})
        from deadlines import Gate, budget_ms, stopped_in_time

        never = Gate()  # armed, and never released
        big = df.constant(np.zeros(100_000))
        slow = df.py_func(lambda a: never.wait(None) and a, [big], df.float64, name="slow")
        quick = df.py_func(lambda a: a + 1.0, [big], df.float64, name="quick")
        sess = df.Session(config=df.ConfigProto(inter_op_parallelism_threads=2))
        far = df.RunOptions(timeout_in_ms=60_000)
        budget = budget_ms(lambda: sess.run([slow, quick], options=far), floor_ms=100)
        never.arm()
        for blocked in range(3):  # three ops blocked forever, on three pools
            stop = stopped_in_time(
                lambda ms: sess.run([slow, quick], options=df.RunOptions(timeout_in_ms=ms)),
                budget,
                df.errors.DeadlineExceededError,
                lambda e: never.entered > blocked,
            )
            assert "Still running: op 'slow'" in str(stop.error), stop.error
        sess.close()
        print(time.monotonic())
        """
    )
    finished = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    exited = time.monotonic()
    assert finished.returncode == 0, finished.stderr
    closed = float(finished.stdout)  # the child's monotonic clock is the machine's
    assert exited - closed < 10  # it did not wait for the blocked ops


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_on_inter_op_threads_of_its_own():
    a = df.placeholder(df.float64, shape=[None])
    b = df.placeholder(df.float64, shape=[None])
    # Two independent ops on large inputs: one of them goes to the inter-op pool.
    total = df.reduce_sum(df.sin(a)) + df.reduce_sum(df.cos(b))
    feeds = {a: np.ones(100_000), b: np.ones(100_000)}
    expected = np.sum(np.sin(np.ones(100_000))) + np.sum(np.cos(np.ones(100_000)))
    with df.Session(config=df.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        assert sess.run(total, feeds) == expected  # starts the pool's threads
        # The child has none of the parent's pool threads.
        options = df.RunOptions(timeout_in_ms=10_000)
        reported = in_forked_child(lambda: float(sess.run(total, feeds, options=options)))
    assert reported == repr(float(expected))


# -- misc API -------------------------------------------------------------------------------------
def test_make_callable_runs_with_positional_feeds():
    x = df.placeholder(df.float32)
    y = df.placeholder(df.float32)
    with df.Session() as sess:
        add = sess.make_callable(x + y, [x, y])
        assert add(1.0, 2.0) == 3.0


def test_a_callable_takes_run_options_only_when_made_to_accept_them():
    x = df.placeholder(df.float32, [], name="x")
    doubled = df.multiply(x, 2.0, name="doubled")
    with df.Session() as sess:
        plain = sess.make_callable(doubled, [x])
        with pytest.raises(TypeError, match="accept_options=True"):
            plain(1.0, run_metadata=df.RunMetadata())
        traced = sess.make_callable(doubled, [x], accept_options=True)
        metadata = df.RunMetadata()
        assert (
            traced(1.0, options=df.RunOptions(timeout_in_ms=10_000), run_metadata=metadata) == 2.0
        )
        assert any(s.original_op_name == "doubled" for s in metadata.step_stats)


def test_eval_and_run_use_the_default_session():
    x = df.constant(2.0)
    with pytest.raises(ValueError, match="default session"):
        x.eval()
    sess = df.InteractiveSession()
    try:
        assert x.eval() == 2.0
        (x + 1.0).op.run()
    finally:
        sess.close()


def test_with_session_makes_its_graph_the_default_as_tf1_does():
    g = df.Graph()
    outer = df.get_default_graph()
    with df.Session(graph=g) as sess:
        assert df.get_default_graph() is g
        x = df.constant(3.0)
        assert x.graph is g
        assert sess.run(x * 2.0) == 6.0
    assert df.get_default_graph() is outer


def test_leaving_a_session_block_on_an_error_restores_the_default_graph():
    outer = df.get_default_graph()
    with pytest.raises(RuntimeError, match="inside the block"):
        with df.Session(graph=df.Graph()):
            raise RuntimeError("inside the block")
    assert df.get_default_graph() is outer


def test_closed_session_refuses_to_run():
    sess = df.Session()
    sess.close()
    with pytest.raises(RuntimeError, match="closed"):
        sess.run(df.constant(1.0))


def test_run_metadata_records_every_op_with_frame_and_iteration():
    i0 = df.constant(0)
    loop = df.while_loop(lambda i: i < 3, lambda i: i + 1, [i0], name="counting")
    metadata = df.RunMetadata()
    with df.Session() as sess:
        assert sess.run(loop, run_metadata=metadata) == 3
    names = {s.node_name for s in metadata.step_stats}
    assert "counting/LoopCond" in names or any("LoopCond" in n for n in names)
    assert all(s.end >= s.start for s in metadata.step_stats)
    iterations = [s.iteration for s in metadata.step_stats if "Merge" in s.node_name]
    assert max(iterations) == 3
    assert any(counts == [4] or counts == [3] for counts in metadata.loop_iterations.values())


def test_scalar_results_are_numpy_scalars_even_when_a_constant_passes_through():
    x = df.constant(1.0, dtype=df.float64)
    zero_trip = df.while_loop(lambda v: v < 0.0, lambda v: v + 1.0, [x])
    matrix = df.constant([[1.0, 2.0]])
    with df.Session() as sess:
        scalar, array = sess.run([zero_trip, matrix])
    assert type(scalar) is np.float64
    array[0, 0] = 5.0  # a fetched constant is the caller's to modify
    with df.Session() as sess:
        assert sess.run(matrix)[0, 0] == 1.0


@pytest.mark.parametrize("key", ["x", "x:1", "nope:0"])
def test_feed_key_that_is_no_tensor_of_the_graph_is_a_type_error(key):
    x = df.placeholder(df.float32, [], name="x")
    with df.Session() as sess:
        with pytest.raises(TypeError, match="feed_dict key"):
            sess.run(x, {key: 1.0})
        assert sess.run(x, {x: 1.0}) == 1.0


def test_a_nested_structure_of_tensors_is_a_feed_key_with_a_value_of_that_structure():
    state = collections.namedtuple("State", "c h")
    c = df.placeholder(df.float32, [2], name="c")
    h = df.placeholder(df.float32, [], name="h")
    n = df.placeholder(df.int32, [], name="n")
    out = df.reduce_sum(c) * h + df.cast(n, df.float32)
    with df.Session() as sess:
        # TF1: sess.run(out, {lstm_state_tuple: values}) feeds each part (TensorFlow takes
        # the list [1.0, 2.0] apart too and refuses; here it is the value of c)
        assert sess.run(out, {state(c, h): state([1.0, 2.0], 3.0), n: 1}) == 10.0
        assert sess.run(out, {((c,), "h:0"): (([1.0, 1.0],), 2.0), n: 0}) == 4.0
        assert sess.run(out, {(c, h, n): [[0.5, 0.5], 4.0, 2]}) == 6.0
        # TF: "Could not flatten dictionary. Key had 2 elements, but value had 4 elements."
        with pytest.raises(ValueError, match="Key had 2 elements, but value had 4 elements"):
            sess.run(out, {(c, h): ([1.0, 2.0], 3.0, 4.0), n: 0})
        with pytest.raises(ValueError, match="key is not unique.*'c:0'"):
            sess.run(out, {(c, h): ([1.0, 2.0], 3.0), c: [0.0, 0.0], n: 0})


def test_callable_given_the_wrong_number_of_feeds_fails_like_a_run():
    x = df.placeholder(df.float32, [], name="x")
    with df.Session() as sess:
        call = sess.make_callable(x + 1.0, [x])
        with pytest.raises(df.errors.InvalidArgumentError, match="Expected 1 feed values"):
            call()
        assert call(1.0) == 2.0


# -- arguments of the wrong type -------------------------------------------------------------------
def _refused(call, argument: str, given: str) -> TypeError:
    with pytest.raises(TypeError) as info:
        call()
    message = str(info.value)
    assert f"Argument `{argument}` must be" in message and f"of type {given}" in message
    assert f"{__file__}:" in message
    return info.value


def test_run_refuses_feeds_options_and_metadata_of_the_wrong_type():
    x = df.placeholder(df.float32, [], name="x")
    y = x * 2.0
    with df.Session() as sess:
        _refused(lambda: sess.run(y, [(x, 1.0)]), "feed_dict", "list")
        _refused(lambda: sess.run(y, {x: 1.0}, options={"timeout_in_ms": 5}), "options", "dict")
        _refused(lambda: sess.run(y, {x: 1.0}, options=df.RunMetadata()), "options", "RunMetadata")
        _refused(lambda: sess.run(y, {x: 1.0}, run_metadata={}), "run_metadata", "dict")
        assert sess.run(y, collections.OrderedDict([(x, 1.0)])) == 2.0  # any mapping will do


def test_a_callable_refuses_a_feed_list_options_and_metadata_of_the_wrong_type():
    x = df.placeholder(df.float32, [], name="x")
    y = x * 2.0
    with df.Session() as sess:
        _refused(lambda: sess.make_callable(y, x), "feed_list", "Tensor")
        call = sess.make_callable(y, (x,), accept_options=True)
        _refused(lambda: call(1.0, options={}), "options", "dict")
        _refused(lambda: call(1.0, run_metadata=[]), "run_metadata", "list")
        assert call(1.0, options=df.RunOptions(), run_metadata=df.RunMetadata()) == 2.0


def test_a_session_refuses_a_config_graph_or_target_of_the_wrong_type():
    _refused(lambda: df.Session(config={"inter_op_parallelism_threads": 2}), "config", "dict")
    _refused(lambda: df.Session(graph="default"), "graph", "str")
    _refused(lambda: df.InteractiveSession(target=None), "target", "NoneType")
    assert df.get_default_session() is None  # the refused InteractiveSession did not install


# -- every run-time bad input: clear error, session usable, variables untouched --------------------
def _missing_feed(bump):
    x = df.placeholder(df.float32, [], name="needed")
    return (lambda s: s.run(x + bump)), df.errors.InvalidArgumentError, "needed"


def _feed_of_wrong_shape(bump):
    x = df.placeholder(df.float32, [2], name="pair")
    return (lambda s: s.run(x + bump, {x: [1.0, 2.0, 3.0]})), ValueError, "pair"


def _feed_that_does_not_convert(bump):
    x = df.placeholder(df.float32, [2], name="pair")
    return (lambda s: s.run(x + bump, {x: ["a", "b"]})), ValueError, "pair"


def _fetch_of_an_unknown_name(bump):
    return (lambda s: s.run([bump, "nope:0"])), ValueError, "nope:0"


def _uninitialized_variable(bump):
    w = df.Variable(2.0, name="fresh")
    return (lambda s: s.run(w + bump)), df.errors.FailedPreconditionError, "fresh"


def _kernel_error(bump):
    a = df.placeholder(df.float32, [None, None])
    with df.control_dependencies([bump]):
        product = df.matmul(a, a, name="product")
    return (
        (lambda s: s.run(product, {a: np.ones((2, 3))})),
        df.errors.InvalidArgumentError,
        "product",
    )


def _dead_fetch(bump):
    p = df.placeholder(df.bool, [])
    _, if_true = df.switch(bump, p)
    dead = df.multiply(if_true, 2.0, name="only_if_p")
    return (lambda s: s.run(dead, {p: False})), df.errors.InvalidArgumentError, "only_if_p"


def _deadline(bump):
    with df.control_dependencies([bump]):
        start = df.constant(0)
    loop = df.while_loop(lambda i: i >= 0, lambda i: i + 1, [start], name="forever")
    probe = df.constant(0)

    def fail(sess):
        budget = budget_ms(
            lambda: sess.run(probe, options=_FAR),
            warm_up=lambda: _stopped_early(sess, loop),
            floor_ms=200,
        )
        raise _stopped(sess, loop, budget, _in_loop("forever")).error

    return fail, df.errors.DeadlineExceededError, "forever"


def _py_func_raising(bump):
    def explode(value):
        raise ValueError("explode")

    call = df.py_func(explode, [bump], df.float32, name="explode")
    return (lambda s: s.run(call)), df.errors.InvalidArgumentError, "explode"


def _failed_assert(bump):
    check = df.Assert(bump < 0.0, [bump], name="negative")
    return (lambda s: s.run(check)), df.errors.InvalidArgumentError, "negative"


@pytest.mark.parametrize(
    "make",
    [
        _missing_feed,
        _feed_of_wrong_shape,
        _feed_that_does_not_convert,
        _fetch_of_an_unknown_name,
        _uninitialized_variable,
        _kernel_error,
        _dead_fetch,
        _deadline,
        _py_func_raising,
        _failed_assert,
    ],
)
def test_bad_input_names_node_and_line_and_leaves_session_and_variables_intact(make):
    v = df.Variable(1.0, name="v")
    bump = v.assign_add(10.0)
    fail, error, node = make(bump)
    with df.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(error) as info:
            fail(sess)
        assert node in str(info.value) and "test_session.py:" in str(info.value)
        assert sess.run(v.read_value()) == 1.0  # the failed step wrote nothing
        assert sess.run(bump) == 11.0  # and the session still runs


def test_ops_made_between_runs_keep_the_plans_of_existing_fetches():
    # TF1 programs often build ops inside their training loop; runs of the fetches made before
    # keep their plans, while a change to an existing op still makes new ones.
    x = df.placeholder(df.float32, [])
    y = x * 2.0
    with df.Session() as sess:
        assert sess.run(y, {x: 1.0}) == 2.0
        planned = len(sess._plans)
        for k in range(3):
            assert sess.run(df.sigmoid(y) + float(k), {x: 0.0}) == 0.5 + k
            assert sess.run(y, {x: 3.0}) == 6.0
        assert len(sess._plans) == planned + 3
        y.op._add_control_input(df.no_op())
        assert sess.run(y, {x: 1.0}) == 2.0
        assert len(sess._plans) == planned + 4

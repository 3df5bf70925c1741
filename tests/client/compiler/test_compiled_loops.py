"""Compiled loops (`dataflow.client.compiler.loops`): a `while_loop` frame of pure ops runs as one
generated function, and a run gives what the interpreter gives, errors and deadlines included."""

import inspect
import threading
import time

import numpy as np
import pytest
from bitwise import same_bits

import dataflow as df
import dataflow.client.session as session_module
import executor
from dataflow.client.compiler import loops
from dataflow.client.compiler.loops import CompiledLoop
from dataflow.framework import errors
from dataflow.framework.op_registry import get_op_def
from executor.program import NodeKind

NO_PASSES = df.ConfigProto(
    graph_options=df.passes.GraphOptions(
        rewrite_options=df.passes.RewriterConfig(disable_meta_optimizer=True)
    )
)


def run_in(new_mode, set_mode, fetches, feed_dict=None, options=None):
    """The results of one run in a new Session with compilation ``new_mode``, and its plan."""
    set_mode(new_mode)
    with df.Session(config=NO_PASSES) as sess:
        results = sess.run(fetches, feed_dict, options=options)
        plan = next(iter(sess._plans.values()))
    return results, plan


def error_in(new_mode, set_mode, fetches, feed_dict=None) -> errors.OpError:
    set_mode(new_mode)
    with df.Session(config=NO_PASSES) as sess:
        with pytest.raises(errors.OpError) as caught:
            sess.run(fetches, feed_dict)
    return caught.value


def here() -> int:
    return inspect.currentframe().f_back.f_lineno


def compiled_loops(plan) -> list:
    return [r for r in plan.compiled.regions if isinstance(r, CompiledLoop)]


def counting_loop(limit, maximum_iterations=None):
    """The issue's workload: ``i + 1`` and ``a + cast(i)``, float32."""
    return df.while_loop(
        lambda i, a: i < limit,
        lambda i, a: (i + 1, a + df.cast(i, df.float32)),
        [df.constant(0), df.constant(0.0)],
        maximum_iterations=maximum_iterations,
    )


@pytest.mark.parametrize("limit", [0, 1, 7, 300])
def test_a_while_loop_runs_as_one_node_with_the_interpreters_bits_and_dtypes(mode, limit):
    n = df.placeholder(df.int32, [])
    fetches = counting_loop(n)
    compiled, plan = run_in("force", mode, fetches, {n: limit})
    interpreted, _ = run_in("off", mode, fetches, {n: limit})
    assert same_bits(compiled, interpreted)
    assert [type(v) for v in compiled] == [type(v) for v in interpreted]
    assert len(compiled_loops(plan)) == 1
    assert not [node for node in plan.compiled.nodes if node.kind != NodeKind.OP and node.inputs]


def test_maximum_iterations_bounds_a_compiled_loop(mode):
    fetches = counting_loop(df.constant(1000), maximum_iterations=5)
    compiled, plan = run_in("force", mode, fetches)
    interpreted, _ = run_in("off", mode, fetches)
    assert compiled[0] == 5 and same_bits(compiled, interpreted)
    assert compiled_loops(plan)


def test_integer_overflow_in_a_compiled_loop_wraps_as_the_interpreter(mode):
    x = df.while_loop(
        lambda x: x > 0, lambda x: [x * df.constant(3, df.int8)], [df.constant(1, df.int8)]
    )
    compiled, plan = run_in("force", mode, x)
    interpreted, _ = run_in("off", mode, x)
    assert compiled_loops(plan) and same_bits(compiled, interpreted)


def test_nested_loops_compile_as_one_node_with_the_interpreters_bits(mode):
    def outer_body(i, total):
        (j, inner) = df.while_loop(
            lambda j, s: j < 20,
            lambda j, s: (j + 1, s * 0.5 + df.cast(i * j, df.float32)),
            [df.constant(0), total],
        )
        return i + 1, inner

    fetches = df.while_loop(lambda i, t: i < 30, outer_body, [df.constant(0), df.constant(1.0)])
    compiled, plan = run_in("force", mode, fetches)
    interpreted, _ = run_in("off", mode, fetches)
    assert same_bits(compiled, interpreted)
    assert [node.kind for node in plan.compiled.nodes].count(NodeKind.ENTER) == 0
    assert len(compiled_loops(plan)) == 2


def gather_past_the_end():
    """A loop whose body fails in iteration 3: it gathers element i of a 3-element vector."""
    table = df.constant([1.0, 2.0, 3.0])
    return df.while_loop(
        lambda i, s: i < 10, lambda i, s: (i + 1, s + df.gather(table, i)), [0, 0.0]
    )


def test_an_error_in_a_compiled_loop_names_the_op_its_line_and_iteration(mode):
    fetches = gather_past_the_end()
    compiled = error_in("force", mode, fetches)
    interpreted = error_in("off", mode, fetches)
    assert type(compiled) is type(interpreted)
    assert compiled.op is interpreted.op and compiled.op.type == "GatherV2"
    assert compiled.message == interpreted.message
    assert "iteration 3 (frame instance while[iter 0 of root])" in compiled.message


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_an_error_in_an_inner_compiled_loop_names_both_iterations(mode, parallel_iterations):
    """The compiled loop runs iterations in order; the interpreter, which may run a later
    failing iteration first, reports the lowest failing one as well."""
    table = df.constant([1.0, 2.0, 3.0])

    def outer_body(i, total):
        (_, inner) = df.while_loop(
            lambda j, s: j < 2, lambda j, s: (j + 1, s + df.gather(table, i + j)), [0, total]
        )
        return i + 1, inner

    fetches = df.while_loop(
        lambda i, t: i < 5, outer_body, [0, 0.0], parallel_iterations=parallel_iterations
    )
    compiled = error_in("force", mode, fetches)
    interpreted = error_in("off", mode, fetches)
    assert compiled.op is interpreted.op
    assert compiled.message == interpreted.message
    assert "iteration 1 (frame instance while/while[iter 2 of while[iter 0 of root]])" in (
        compiled.message
    )


def divides_by_zero_once_fed_zero(n, parallel_iterations):
    """A loop whose body divides ``d // d`` where ``d`` is 0 in every iteration from the one
    in which ``n - i`` reaches 0; ``d`` comes out of an inner loop, so that the interpreter
    can start later iterations of the outer loop before an earlier one has its ``d``."""

    def body(i, acc):
        _, inner = df.while_loop(
            lambda j, s: j < 2, lambda j, s: (j + 1, s + 1), [df.constant(0), n - i]
        )
        d = df.maximum(inner - 2, 0)
        return i + 1, acc + df.math.floordiv(d, d, name="ratio")

    return df.while_loop(
        lambda i, acc: i < 10,
        body,
        [df.constant(0), df.constant(0)],
        parallel_iterations=parallel_iterations,
    )


@pytest.mark.parametrize("parallel_iterations", [1, 3, 10])
@pytest.mark.parametrize("first_failing", [0, 1, 4])
def test_an_error_names_the_lowest_failing_iteration_in_every_tier(
    mode, parallel_iterations, first_failing
):
    n = df.placeholder(df.int32, [])
    fetches = divides_by_zero_once_fed_zero(n, parallel_iterations)
    for tier in ("off", "force"):
        for _ in range(3):
            error = error_in(tier, mode, fetches, {n: first_failing})
            assert isinstance(error, errors.InvalidArgumentError), tier
            assert error.op.name.endswith("ratio"), tier
            assert f"iteration {first_failing} (frame instance while[iter 0 of root])" in (
                error.message
            ), (tier, error.message)


def test_a_loop_in_the_untaken_branch_of_a_cond_is_dead_as_a_whole(mode):
    pred = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])

    def loop():
        return df.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * x), [0, x])[1]

    result = df.cond(pred, loop, lambda: x - 1.0)
    for taken in (True, False):
        feed = {pred: taken, x: np.float32(1.5)}
        compiled, plan = run_in("force", mode, result, feed)
        interpreted, _ = run_in("off", mode, result, feed)
        assert same_bits(compiled, interpreted)
        assert compiled_loops(plan)


def test_a_compiled_loop_that_never_ends_stops_at_the_deadline(mode):
    endless = df.while_loop(lambda i: i >= 0, lambda i: [i + 1 - 1], [df.constant(0)])
    mode("force")
    with df.Session(config=NO_PASSES) as sess:
        with pytest.raises(errors.DeadlineExceededError) as caught:
            sess.run(endless, options=df.RunOptions(timeout_in_ms=300))
        plan = next(iter(sess._plans.values()))
        assert compiled_loops(plan)
        assert "while" in caught.value.message
        assert sess.run(df.constant(2.0)) == 2.0


class PastDeadline:
    deadline = time.monotonic() - 1.0


def test_the_generated_loop_checks_the_clock_itself(mode):
    """The loop raises the deadline error by itself: it does not go on in the background once
    the run has given up on it."""
    endless = df.while_loop(lambda i: i >= 0, lambda i: [i + 1 - 1], [df.constant(0)])
    mode("force")
    with df.Session(config=NO_PASSES) as sess:
        (loop,) = [r for r in sess._compiled_regions(endless, []) if isinstance(r, CompiledLoop)]
    with pytest.raises(executor.DeadlineExceededError):
        loop.function(PastDeadline(), np.int32(0))


def test_a_compiled_loop_with_a_slow_body_does_no_work_after_its_deadline(mode, monkeypatch):
    """A loop whose iterations are slow (a matrix product) looks at the clock by the time its
    iterations take, not only every `CHECK_CLOCK_EVERY` of them: once the caller has its
    deadline error, the loop starts no further product and stops by itself."""
    matmul = get_op_def("MatMul")
    make_kernel = matmul.kernel
    error_seen, loop_stopped = threading.Event(), threading.Event()
    products_after_error = []

    def counting_kernel(attrs):
        kernel = make_kernel(attrs)

        def run(*args):
            if error_seen.is_set():
                products_after_error.append(1)
            return kernel(*args)

        return run

    located = CompiledLoop.locate  # called with the error that leaves the loop

    def locate(self, error, iteration):
        loop_stopped.set()
        located(self, error, iteration)

    monkeypatch.setattr(matmul, "kernel", counting_kernel)
    monkeypatch.setattr(CompiledLoop, "locate", locate)
    a = df.constant(np.ones((1000, 1000)))
    endless = df.while_loop(
        lambda i, a: i >= 0, lambda i, a: (i + 1, df.matmul(a, a) * 0.001), [0, a]
    )
    mode("force")
    with df.Session(config=NO_PASSES) as sess:
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(endless, options=df.RunOptions(timeout_in_ms=300))
        error_seen.set()
        assert loop_stopped.wait(60)
        plan = next(iter(sess._plans.values()))
        assert compiled_loops(plan)
    assert len(products_after_error) <= 1, len(products_after_error)


class Cancelled:
    """A run's context whose cancellation was cancelled (its Session closed)."""

    deadline = None

    def __init__(self) -> None:
        self.cancellation = executor.Cancellation()
        self.cancellation.cancel("the Session was closed")


def test_the_generated_loop_stops_itself_when_its_run_is_cancelled(mode):
    endless = df.while_loop(lambda i: i >= 0, lambda i: [i + 1 - 1], [df.constant(0)])
    mode("force")
    with df.Session(config=NO_PASSES) as sess:
        (loop,) = [r for r in sess._compiled_regions(endless, []) if isinstance(r, CompiledLoop)]
    generated = getattr(loop.function, "python_function", loop.function)  # not numba's
    with pytest.raises(executor.RunCancelledError, match="Session was closed") as caught:
        generated(Cancelled(), np.int32(0))
    assert caught.value.compiled_frames == [(loop.frame_name, loops.FIRST_CHECK)]  # its first look


def test_a_deadline_noticed_while_a_compiled_loop_runs_names_the_loop_and_its_line(mode):
    """When the run's own watch notices the deadline first, with the loop's node still running
    on the pool, the error names the loop's frame instance and the line that built it, as the
    interpreter's error does."""
    line = here() + 1
    endless = df.while_loop(lambda i: i >= 0, lambda i: [i + 1 - 1], [0], name="forever")
    mode("force")
    with df.Session(config=NO_PASSES) as sess:
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(endless, options=df.RunOptions(timeout_in_ms=50))
        plan = next(iter(sess._plans.values())).compiled
    (index,) = [i for i, node in enumerate(plan.nodes) if hasattr(node.kernel, "compiled_loop")]
    noticed = executor.DeadlineExceededError("past the deadline", running=[(index, "root", 0)])
    message = str(session_module._deadline_error(noticed, plan, 50))
    assert "forever[iter 0 of root]" in message
    assert f"The loop 'forever' was built at {__file__}:{line}" in message


def test_a_loop_with_a_stateful_body_keeps_the_interpreter(mode):
    v = df.Variable(0.0)
    with df.Session(config=NO_PASSES) as sess:
        sess.run(v.initializer)
    i = df.while_loop(
        lambda i: i < 3, lambda i: [i + df.cast(v.assign_add(1.0) > 0, df.int32)], [0]
    )
    mode("force")
    with df.Session(config=NO_PASSES) as sess:
        sess.run(v.initializer)
        assert sess.run(i) == 3
        plan = next(iter(sess._plans.values()))
        assert not plan.compiled or not compiled_loops(plan)


def test_a_hand_wired_loop_keeps_the_interpreter(mode):
    entered = df.enter(df.constant(0), frame_name="count")
    limit = df.enter(df.constant(10), frame_name="count", is_constant=True)
    one = df.enter(df.constant(1), frame_name="count", is_constant=True)
    i, _ = df.merge([entered, entered])
    keep_going = df.loop_cond(i < limit)
    i_done, i_body = df.switch(i, keep_going)
    df.set_merge_input(i, 1, df.next_iteration(i_body + one))
    result = df.exit(i_done)
    compiled, plan = run_in("force", mode, result)
    assert compiled == 10
    assert not plan.compiled or not compiled_loops(plan)


def test_compiled_source_shows_the_python_while_loop(mode):
    mode("force")
    fetches = counting_loop(df.constant(4))
    with df.Session(config=NO_PASSES) as sess:
        source = df.debug.compiled_source(sess, fetches)
    assert "# loop while:" in source
    assert "while True:" in source and "break" in source
    assert "'while/Cast' (Cast) at " in source and "test_compiled_loops.py" in source

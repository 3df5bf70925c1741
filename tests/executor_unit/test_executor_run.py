"""`Plan.run`: errors, deadlines, fetches and targets, context, threads, the pool, statistics."""

import concurrent.futures
import os
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from deadlines import Gate, budget_ms, stopped_in_time
from executor_builder import Builder, identity
from forking import in_forked_child

import executor
from executor import (
    DaemonThreadPool,
    DeadlineExceededError,
    FetchNotLiveError,
    KernelError,
    runner,
)
from executor.runner import current_frames


def sum_below_program(parallel_iterations=10):
    """``i, total = 0, 0; while i < n: i, total = i + 1, total + i``; fetches (i, total)."""
    b = Builder()
    n = b.arg("n")

    def body(loop):
        i, total = loop.vars
        return [b.op(np.add, i, loop.outer(b.const(1))), b.op(np.add, total, i)]

    i, total = b.while_loop(
        lambda loop: b.op(np.less, loop.vars[0], loop.outer(n)),
        body,
        [b.const(0), b.const(0)],
        parallel_iterations=parallel_iterations,
    )
    return b.program([i, total])


# -- kernel errors --------------------------------------------------------------------------------


def test_kernel_error_wraps_the_cause_and_names_the_node():
    b = Builder()
    x = b.arg("x")
    cause = ZeroDivisionError("no")

    def fail(value):
        raise cause

    failing = b.op(fail, x, name="divide")
    with pytest.raises(KernelError) as info:
        executor.prepare(b.program([failing])).run((3.5,))
    error = info.value
    assert error.cause is cause and error.__cause__ is cause
    assert error.node_index == failing[0] and error.node.name == "divide"
    assert error.input_values == (3.5,)
    assert "'divide'" in str(error) and "ZeroDivisionError" in str(error)


def test_any_exception_from_a_kernel_is_wrapped():
    class UserFacing(Exception):
        pass

    b = Builder()

    def fail():
        raise UserFacing("for the user")

    with pytest.raises(KernelError) as info:
        executor.prepare(b.program([b.op(fail)])).run(())
    assert isinstance(info.value.cause, UserFacing)


@pytest.mark.parametrize("inline", [True, None])
def test_kernel_error_stops_scheduling_so_a_later_sibling_does_not_run(inline):
    calls = []
    b = Builder()
    x = b.arg("x")
    b.op(lambda v: 1 / 0, x, name="fails_first", inline=inline)
    sibling = b.op(lambda v: calls.append("sibling") or v, x, name="sibling", inline=inline)
    with pytest.raises(KernelError, match="fails_first"):
        executor.prepare(b.program([sibling])).run((1.0,))
    assert calls == []


def test_kernel_error_inside_a_loop_stops_the_loop():
    calls = []
    b = Builder()

    def step(v):
        calls.append(int(v))
        if v == 3:
            raise ValueError("three")
        return v + 1

    (result,) = b.while_loop(
        lambda loop: b.op(lambda v: v < 100, loop.vars[0]),
        lambda loop: [b.op(step, loop.vars[0], name="step")],
        [b.const(0)],
    )
    with pytest.raises(KernelError, match="step") as info:
        executor.prepare(b.program([result])).run(())
    assert isinstance(info.value.cause, ValueError)
    assert calls == [0, 1, 2, 3]


def failing_from_iteration(first_failing: int, parallel_iterations: int, kernel, **flags):
    """``total += kernel(i)`` for ``i`` in 0..19, the kernel's node named ``check``; the counter
    does not wait for the kernel, so later iterations start while earlier ones still run."""
    b = Builder()

    def body(loop):
        i, total = loop.vars
        checked = b.op(kernel, i, name="check", **flags)
        return [b.op(np.add, i, loop.outer(b.const(1))), b.op(np.add, total, checked)]

    _, total = b.while_loop(
        lambda loop: b.op(np.less, loop.vars[0], loop.outer(b.const(20))),
        body,
        [b.const(0), b.const(0)],
        parallel_iterations=parallel_iterations,
    )
    return executor.prepare(b.program([total]))


@pytest.mark.parametrize("parallel_iterations", [1, 4, 32])
@pytest.mark.parametrize("first_failing", [0, 1, 5])
def test_a_kernel_error_in_a_loop_names_the_lowest_failing_iteration(
    first_failing, parallel_iterations
):
    ran = []

    def check(i):
        ran.append(int(i))
        if i >= first_failing:
            raise ValueError(f"iteration {i}")
        return i

    plan = failing_from_iteration(first_failing, parallel_iterations, check)
    with pytest.raises(KernelError, match="check") as info:
        plan.run(())
    assert info.value.iteration == first_failing
    assert str(info.value.cause) == f"iteration {first_failing}"
    # Every iteration before it ran; none after the window of the iterations then alive.
    assert set(range(first_failing)) <= set(ran)
    assert max(ran) < first_failing + parallel_iterations


@pytest.mark.parametrize("parallel_iterations", [2, 10])
def test_an_earlier_iteration_failing_after_a_later_one_is_the_one_reported(parallel_iterations):
    later_failed = threading.Event()

    def check(i):
        if i == 3:
            later_failed.wait(10)  # fails once iteration 4 has
            raise ValueError("iteration 3")
        if i > 3:
            later_failed.set()
            raise ValueError(f"iteration {i}")
        return i

    plan = failing_from_iteration(3, parallel_iterations, check, blocking=True)
    for _ in range(5):
        later_failed.clear()
        with pytest.raises(KernelError, match="check") as info:
            plan.run(())
        assert info.value.iteration == 3 and str(info.value.cause) == "iteration 3"
        assert later_failed.is_set()


def test_kernel_error_with_a_pool_waits_for_kernels_in_flight(pool):
    finished = threading.Event()
    b = Builder()
    x = b.arg("x")

    def slow(v):
        time.sleep(0.05)
        finished.set()
        return v

    slow_result = b.op(slow, x, inline=False)
    failing = b.op(lambda v: 1 / 0, x, inline=True)
    with pytest.raises(KernelError):
        executor.prepare(b.program([slow_result, failing])).run((1.0,), pool=pool)
    assert finished.is_set()


# -- deadlines ------------------------------------------------------------------------------------


def _far() -> float:
    """A deadline that never passes: the run is still driven as a timed run."""
    return time.monotonic() + 60


def _stopped(plan, budget_ms: int, gate: Gate, **run_options):
    """A run of ``plan`` on 1 that only its deadline stops, once it has reached ``gate``
    (see `stopped_in_time`)."""
    return stopped_in_time(
        lambda ms: plan.run((1,), deadline=time.monotonic() + ms / 1000, **run_options),
        budget_ms,
        DeadlineExceededError,
        lambda e: gate.entered > 0,
    )


def endless_loop_program():
    b = Builder()
    (result,) = b.while_loop(
        lambda loop: b.op(lambda v: True, loop.vars[0]),
        lambda loop: [b.op(lambda v: v + 1, loop.vars[0])],
        [b.const(0)],
    )
    return b.program([result])


@pytest.mark.parametrize("use_pool", [False, True])
def test_deadline_stops_an_endless_loop(use_pool, pool):
    plan = executor.prepare(endless_loop_program())
    with pytest.raises(DeadlineExceededError):
        plan.run((), deadline=time.monotonic() + 0.2, pool=pool if use_pool else None)


def test_deadline_stops_a_long_chain_in_the_root_frame():
    calls = []
    b = Builder()
    value = b.arg("x")
    for _ in range(2000):
        value = b.op(lambda v: calls.append(1) or time.sleep(0.0005) or v, value)
    plan = executor.prepare(b.program([value]))  # the deadline covers the run alone
    with pytest.raises(DeadlineExceededError):
        plan.run((0,), deadline=time.monotonic() + 0.1)  # the chain sleeps for 1 s at least
    assert len(calls) < 2000


def test_deadline_in_the_past_stops_at_once():
    plan = executor.prepare(endless_loop_program())
    with pytest.raises(DeadlineExceededError):
        plan.run((), deadline=time.monotonic() - 1)


def test_deadline_with_a_pool_raises_without_waiting_for_a_long_kernel(pool):
    gate = Gate()
    b = Builder()
    x = b.arg("x")
    blocked = b.op(lambda v: gate.wait() and v, x, inline=False)
    b.op(lambda v: v, x, inline=True)
    plan = executor.prepare(b.program([blocked]))
    budget = budget_ms(lambda: plan.run((1,), pool=pool, deadline=_far()), floor_ms=100)
    gate.arm()
    try:
        stop = _stopped(plan, budget, gate, pool=pool)
        assert stop.seconds < stop.budget_ms / 1000 + 10  # not the 60 s the kernel blocks for
    finally:
        gate.release()
    # The late completion is dropped; the plan and the pool stay usable.
    assert plan.run((2,), pool=pool) == [2]


def _wait_until_driver_is_idle(thread: threading.Thread) -> None:
    """Waits (at most 10 s) until the driver thread ``thread`` has finished its run and waits
    for the next one, or has ended, idle: after that, the run it drove can fire nothing more."""
    serve = DaemonThreadPool._serve.__code__
    give_up = time.monotonic() + 10
    while (frame := current_frames().get(thread.ident)) and frame.f_code is not serve:
        assert time.monotonic() < give_up, "the driver thread never finished its run"
        time.sleep(0.01)


def test_deadline_stops_a_run_whose_inline_kernel_blocks_and_nothing_fires_after_it():
    gate = Gate()
    blocked_on = []
    fired_after = []
    b = Builder()
    x = b.arg("x")

    def block(v):
        blocked_on.append(threading.current_thread())
        gate.wait()
        return v

    blocked = b.op(block, x, name="blocked", inline=True)
    after = b.op(lambda v: fired_after.append(v) or v, blocked, name="after", inline=True)
    plan = executor.prepare(b.program([after]))
    budget = budget_ms(lambda: plan.run((1,), deadline=_far()))
    fired_after.clear()
    gate.arm()
    try:
        stop = _stopped(plan, budget, gate)
        assert stop.seconds < stop.budget_ms / 1000 + 10  # not the 60 s the kernel blocks for
    finally:
        gate.release()
    error = stop.error
    assert [plan.program.nodes[index].name for index, _, _ in error.running] == ["blocked"]
    assert error.running[0][1:] == ("root", 0)
    assert "still running: 'blocked'" in str(error)
    # Once released, the kernel's result is dropped: its consumer never runs.
    _wait_until_driver_is_idle(blocked_on[-1])
    assert fired_after == []
    assert plan.run((2,)) == [2]


def test_deadline_stops_a_run_whose_pool_kernel_blocks_and_nothing_fires_after_it():
    gate = Gate()
    fired_after = []
    b = Builder()
    x = b.arg("x")
    blocked = b.op(lambda v: gate.wait() and v, x, name="blocked", inline=False)
    b.op(identity, x, inline=True)  # ready beside it, so that the blocked kernel goes to the pool
    after = b.op(lambda v: fired_after.append(v) or v, blocked, name="after", inline=True)
    plan = executor.prepare(b.program([after]))
    pool = RecordingPool(2)
    try:
        budget = budget_ms(lambda: plan.run((1,), pool=pool, deadline=_far()))
        fired_after.clear()
        gate.arm()
        error = _stopped(plan, budget, gate, pool=pool).error
        assert [plan.program.nodes[i].name for i, _, _ in error.running] == ["blocked"]
    finally:
        gate.release()
        # The pool task has run to its end: the blocked kernel and whatever it led to.
        concurrent.futures.wait(pool.futures, timeout=10)
        pool.shutdown()
    assert fired_after == []


def test_a_deadline_further_away_than_any_wait_can_last_is_simply_far():
    b = Builder()
    plan = executor.prepare(b.program([b.op(lambda v: v + 1, b.arg("x"))]))
    assert plan.run((1,), deadline=time.monotonic() + 2 * threading.TIMEOUT_MAX) == [2]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_runs_with_a_deadline_on_threads_of_its_own():
    b = Builder()
    plan = executor.prepare(b.program([b.op(lambda v: v + 1, b.arg("x"))]))
    assert plan.run((1,), deadline=time.monotonic() + 10) == [2]  # leaves an idle driver
    # The child has none of the parent's driver threads.
    assert in_forked_child(lambda: plan.run((2,), deadline=time.monotonic() + 10)) == "[3]"


class RecordingPool(ThreadPoolExecutor):
    """A thread pool that keeps the future of every task submitted to it."""

    def __init__(self, threads: int):
        super().__init__(threads, thread_name_prefix="recording-pool")
        self.futures = []

    def submit(self, fn, /, *args, **kwargs):
        future = super().submit(fn, *args, **kwargs)
        self.futures.append(future)
        return future


@pytest.mark.parametrize("wants_context", [False, True], ids=["fast-path op", "slow-path op"])
def test_no_op_starts_once_the_deadline_has_passed(monkeypatch, wants_context):
    # The first kernel moves the run's clock past the deadline; the next op must not start,
    # whichever way the runner fires it.
    now = [0.0]
    monkeypatch.setattr(runner, "_monotonic", lambda: now[0])
    calls = []

    def step(*args):
        calls.append(len(calls))
        now[0] = 10.0
        return args[-1]

    b = Builder()
    value = b.arg("x")
    for _ in range(3):
        value = b.op(step, value, wants_context=wants_context, inline=True)
    plan = executor.prepare(b.program([value]))
    with pytest.raises(DeadlineExceededError) as info:
        plan.run((1,), deadline=5.0)
    assert calls == [0]
    assert plan.program.nodes[info.value.node_index].kernel is step  # the first step fired


# -- cancellation ---------------------------------------------------------------------------------
class CancellableContext:
    """A run's context that carries a `executor.Cancellation`."""

    def __init__(self) -> None:
        self.cancellation = executor.Cancellation()


def loop_cancelled_in_iteration(stop_at: int, context: CancellableContext, seen: list):
    """An endless loop whose predicate records each iteration and cancels ``context`` in
    iteration ``stop_at``."""

    def forever(i):
        seen.append(i)
        if i == stop_at:
            context.cancellation.cancel("the run's session was closed")
        return True

    b = Builder()
    (result,) = b.while_loop(
        lambda loop: b.op(forever, loop.vars[0]),
        lambda loop: [b.op(lambda v: v + 1, loop.vars[0])],
        [b.const(0)],
    )
    return executor.prepare(b.program([result]))


@pytest.mark.parametrize("timed", [False, True], ids=["no deadline", "deadline"])
@pytest.mark.parametrize("use_pool", [False, True], ids=["inline", "pool"])
def test_a_cancelled_run_stops_its_endless_loop_in_the_iteration_it_was_cancelled(
    use_pool, pool, timed
):
    context, seen = CancellableContext(), []
    plan = loop_cancelled_in_iteration(3, context, seen)
    with pytest.raises(executor.RunCancelledError, match="session was closed") as info:
        plan.run(
            (), context=context, pool=pool if use_pool else None, deadline=_far() if timed else None
        )
    assert info.value.node_index is None
    assert seen == [0, 1, 2, 3]


@pytest.mark.parametrize("timed", [False, True], ids=["no deadline", "deadline"])
def test_a_cancelled_run_stops_a_long_chain_in_the_root_frame(timed):
    """The root frame is one iteration: the run looks at its cancellation between batches of
    firings (after each firing in a timed run), as it looks at the clock."""
    context, calls = CancellableContext(), []

    def step(v):
        calls.append(v)
        if v == 3:
            context.cancellation.cancel("the run's session was closed")
        return v + 1

    b = Builder()
    value = b.arg("x")
    for _ in range(3 * runner._BATCH_SIZE):
        value = b.op(step, value)
    plan = executor.prepare(b.program([value]))
    with pytest.raises(executor.RunCancelledError):
        plan.run((0,), context=context, deadline=_far() if timed else None)
    assert calls[:4] == [0, 1, 2, 3]
    assert len(calls) <= (4 if timed else runner._BATCH_SIZE)


def test_a_run_whose_cancellation_was_cancelled_before_it_starts_fires_nothing():
    context, seen = CancellableContext(), []
    plan = loop_cancelled_in_iteration(0, context, seen)
    context.cancellation.cancel("closed before the run")
    with pytest.raises(executor.RunCancelledError, match="closed before the run"):
        plan.run((), context=context)
    assert seen == []
    assert not context.cancellation._stops  # the run let go of its cancellation


# -- fetches, targets, context --------------------------------------------------------------------


def test_fetch_that_is_dead_or_never_produced_is_reported_per_position():
    b = Builder()
    x = b.arg("x")
    false_side, true_side = b.switch(x, b.const(True))
    dead = b.op(identity, false_side, name="on_untaken_side")
    # A Merge fed only by its own NextIteration: nothing ever reaches it, so ``never`` waits.
    orphan, _ = b.merge(x)
    orphan_step = b.op(identity, orphan)
    b.nodes[orphan[0]].inputs = [b.next_iteration(orphan_step)]
    never = b.op(np.add, x, orphan_step, name="never")
    plan = executor.prepare(b.program([true_side, dead, never]))
    with pytest.raises(FetchNotLiveError) as info:
        plan.run((1.0,))
    assert info.value.missing == [(1, dead[0], "dead"), (2, never[0], "never produced")]
    assert "'on_untaken_side'" in str(info.value) and "'never'" in str(info.value)


def test_targets_run_without_being_fetched():
    effects = []
    b = Builder()
    x = b.arg("x")
    effect = b.op(lambda v: effects.append(v), x, num_outputs=0, name="effect")
    untaken, _ = b.switch(x, b.const(True))
    dead_effect = b.op(lambda v: effects.append("dead"), untaken, num_outputs=0)
    program = b.program([], targets=[effect, dead_effect])
    assert executor.prepare(program).run((5,)) == []
    assert effects == [5]


def test_context_is_passed_first_to_kernels_that_want_it():
    b = Builder()
    x = b.arg("x")
    scaled = b.op(lambda context, v: context["scale"] * v, x, wants_context=True)
    inside = b.enter(x, "frame")
    scaled_inside = b.exit(
        b.op(lambda context, v: context["scale"] + v, inside, wants_context=True)
    )
    plan = executor.prepare(b.program([scaled, scaled_inside]))
    assert plan.run((2,), context={"scale": 10}) == [20, 12]


# -- threads --------------------------------------------------------------------------------------


@pytest.mark.parametrize("use_pool", [False, True])
def test_one_plan_runs_from_eight_threads_at_once(use_pool, pool):
    plan = executor.prepare(sum_below_program(parallel_iterations=4))
    results = {}

    def work(n):
        for repeat in range(5):
            results[(n, repeat)] = plan.run((n,), pool=pool if use_pool else None)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(20, 28)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {(n, r): [n, n * (n - 1) // 2] for n in range(20, 28) for r in range(5)}


@pytest.mark.parametrize("pool_size", [1, 2])
def test_pool_runs_independent_kernels_concurrently(pool_size):
    # Each kernel waits for the other at a barrier: if they did not overlap, it would time out.
    barrier = threading.Barrier(2)
    b = Builder()
    x = b.arg("x")
    left = b.op(lambda v: barrier.wait(timeout=10) * 0 + v + 1, x, inline=False)
    right = b.op(lambda v: barrier.wait(timeout=10) * 0 + v + 2, x, inline=False)
    total = b.op(np.add, left, right)
    with ThreadPoolExecutor(pool_size) as own_pool:
        assert executor.prepare(b.program([total])).run((1,), pool=own_pool) == [5]


def test_large_inputs_go_to_the_pool_and_small_ones_stay_inline(pool):
    barrier = threading.Barrier(2)
    b = Builder()
    x = b.arg("x")
    left = b.op(lambda v: barrier.wait(timeout=10) * 0 + v.sum(), x)
    right = b.op(lambda v: barrier.wait(timeout=10) * 0 + v.max(), x)
    plan = executor.prepare(b.program([left, right]))
    assert plan.run((np.ones(100_000),), pool=pool) == [100_000.0, 1.0]
    b = Builder()
    x = b.arg("x")
    b.op(np.negative, x)
    small = executor.prepare(b.program([b.op(np.negative, x), b.op(np.sqrt, x)]))
    stats = executor.RunStats()
    small.run((np.ones(4),), pool=pool, stats=stats)
    assert {record.thread for record in stats.node_records} == {threading.current_thread().name}


# -- statistics -----------------------------------------------------------------------------------


def test_stats_record_each_live_firing_with_frame_instance_and_iteration():
    plan = executor.prepare(sum_below_program())
    stats = executor.RunStats()
    assert plan.run((3,), stats=stats) == [3, 3]
    records = stats.node_records
    names = plan.program.nodes
    assert all(r.start <= r.end for r in records)
    assert all(r.thread == threading.current_thread().name for r in records)
    assert all(r.node_name == names[r.node_index].name for r in records)
    frames = {r.frame for r in records}
    assert frames == {"root", "while[iter 0 of root]"}
    add_iterations = sorted(
        r.iteration for r in records if r.node_name.startswith("add") and r.frame != "root"
    )
    assert add_iterations == [0, 0, 1, 1, 2, 2]  # two adds per iteration that ran the body
    assert stats.frame_iterations == {"while": [4]}


def test_stats_do_not_record_dead_firings():
    b = Builder()
    x = b.arg("x")
    false_side, true_side = b.switch(x, b.const(True))
    b.op(identity, false_side, name="untaken")
    taken = b.op(identity, true_side, name="taken")
    stats = executor.RunStats()
    executor.prepare(b.program([taken])).run((1,), stats=stats)
    names = {r.node_name for r in stats.node_records}
    assert "taken" in names and "untaken" not in names


def test_stats_record_pool_threads(pool):
    b = Builder()
    x = b.arg("x")
    left = b.op(lambda v: v + 1, x, inline=False, name="left")
    right = b.op(lambda v: v + 2, x, inline=False, name="right")
    stats = executor.RunStats()
    executor.prepare(b.program([left, right])).run((1,), pool=pool, stats=stats)
    threads = {r.node_name: r.thread for r in stats.node_records}
    assert threads["left"].startswith("test-pool")


# -- release of values ----------------------------------------------------------------------------


@pytest.mark.parametrize("use_pool", [False, True])
def test_a_value_is_released_when_its_last_consumer_has_fired(use_pool, pool):
    # A chain of ops each making a new array: only the input and output of the running kernel
    # may be alive, so at most two produced arrays exist at any time.
    alive = []

    def step(value):
        alive[:] = [ref for ref in alive if ref() is not None]
        result = value + 1.0
        alive.append(weakref.ref(result))
        most[0] = max(most[0], len(alive))
        return result

    most = [0]
    b = Builder()
    value = b.arg("x")
    for _ in range(50):
        value = b.op(step, value)
    result = executor.prepare(b.program([value])).run(
        (np.zeros(1000),), pool=pool if use_pool else None
    )
    assert result[0][0] == 50.0
    assert most[0] <= 2


def test_stats_describe_nested_frame_instances():
    b = Builder()

    def outer_body(outer):
        i = outer.vars[0]
        zero = b.const(0, control=[outer.pivot])
        b.while_loop(
            lambda inner: b.op(lambda j, n: j < n, inner.vars[0], inner.outer(i)),
            lambda inner: [b.op(lambda j: j + 1, inner.vars[0], name="inner_step")],
            [zero],
            name="inner",
        )
        return [b.op(lambda v: v + 1, i)]

    (result,) = b.while_loop(
        lambda outer: b.op(lambda v: v < 3, outer.vars[0]), outer_body, [b.const(0)], name="outer"
    )
    stats = executor.RunStats()
    executor.prepare(b.program([result])).run((), stats=stats)
    frames = {(r.frame, r.iteration) for r in stats.node_records if r.node_name == "inner_step"}
    assert frames == {
        ("inner[iter 1 of outer[iter 0 of root]]", 0),
        ("inner[iter 2 of outer[iter 0 of root]]", 0),
        ("inner[iter 2 of outer[iter 0 of root]]", 1),
    }

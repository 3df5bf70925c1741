"""`Plan.run(observer=...)`, dead-firing statistics, and where errors and deadlines happened."""

import concurrent.futures
import time

import numpy as np
import pytest
from deadlines import Gate, budget_ms, stopped_in_time
from executor_builder import Builder, identity

import executor
from executor import frames, runner


class Recorder(executor.RunObserver):
    """Keeps ``(node name, output, value, frame, iteration)`` of every reported output."""

    def __init__(self, plan, nodes=None):
        self.plan = plan
        self.nodes = nodes
        self.seen = []

    def node_fired(self, node_index, outputs, frame, iteration):
        name = self.plan.program.nodes[node_index].name
        for output, value in outputs:
            self.seen.append((name, output, value, frame, iteration))

    def values_of(self, name, output=0):
        return [(f, i, v) for n, o, v, f, i in self.seen if n == name and o == output]


def doubling_loop(parallel_iterations=10):
    """``i, v = 0, x; while i < 3: i, v = i + 1, v * 2``; fetches v."""
    b = Builder()
    x = b.arg("x")

    def body(loop):
        i, v = loop.vars
        return [
            b.op(lambda k: k + 1, i, name="step"),
            b.op(lambda a: a * 2, v, name="double"),
        ]

    _, v = b.while_loop(
        lambda loop: b.op(lambda k: k < 3, loop.vars[0], name="below"),
        body,
        [b.const(0, name="zero"), x],
        name="loop",
        parallel_iterations=parallel_iterations,
    )
    return b.program([v])


# -- the observer ---------------------------------------------------------------------------------


@pytest.mark.parametrize("parallel_iterations", [1, 10])
def test_observer_sees_every_iteration_of_a_loop_labelled_by_frame_and_iteration(
    parallel_iterations,
):
    plan = executor.prepare(doubling_loop(parallel_iterations))
    recorder = Recorder(plan)
    assert plan.run((1,), observer=recorder) == [8]
    assert recorder.values_of("double") == [
        ("loop[iter 0 of root]", 0, 2),
        ("loop[iter 0 of root]", 1, 4),
        ("loop[iter 0 of root]", 2, 8),
    ]
    # The predicate ran once more, in the iteration whose predicate was false.
    assert [v for _, _, v in recorder.values_of("below")] == [True, True, True, False]


def test_observer_is_told_only_about_the_nodes_it_asks_for():
    plan = executor.prepare(doubling_loop())
    double = next(i for i, n in enumerate(plan.program.nodes) if n.name == "double")
    recorder = Recorder(plan, nodes={double})
    plan.run((1,), observer=recorder)
    assert {name for name, *_ in recorder.seen} == {"double"}


def test_observer_sees_what_control_flow_nodes_pass_on():
    plan = executor.prepare(doubling_loop())
    recorder = Recorder(plan)
    plan.run((5,), observer=recorder)
    # An Enter fires in the frame around the loop; the Exit inside the loop, in the last
    # iteration; a Switch reports only its live output; a Merge its value and value_index.
    assert recorder.values_of("loop/enter_1") == [("root", 0, 5)]
    assert recorder.values_of("loop/exit_0") == [("loop[iter 0 of root]", 3, 3)]
    assert recorder.values_of("loop/exit_1") == [("loop[iter 0 of root]", 3, 40)]
    switch_outputs = {(f, i, o) for n, o, _, f, i in recorder.seen if n == "loop/switch_1"}
    assert switch_outputs == {("loop[iter 0 of root]", k, 1) for k in range(3)} | {
        ("loop[iter 0 of root]", 3, 0)
    }
    merge = [(o, v, i) for n, o, v, _, i in recorder.seen if n == "loop/merge_1"]
    assert merge == [
        (0, 5, 0),
        (1, 0, 0),
        (0, 10, 1),
        (1, 1, 1),
        (0, 20, 2),
        (1, 1, 2),
        (0, 40, 3),
        (1, 1, 3),
    ]


def test_observer_sees_fed_arguments():
    plan = executor.prepare(doubling_loop())
    recorder = Recorder(plan)
    plan.run((7,), observer=recorder)
    assert recorder.values_of("x") == [("root", 0, 7)]


def test_observer_is_not_told_about_an_untaken_branch():
    b = Builder()
    x = b.arg("x")
    (result,) = b.cond(
        b.op(lambda v: v > 0, x, name="positive"),
        lambda branch: [b.op(lambda v: v * 10, branch.outer(x), name="times_ten")],
        lambda branch: [b.op(lambda v: -v, branch.outer(x), name="negate")],
    )
    plan = executor.prepare(b.program([result]))
    recorder = Recorder(plan)
    assert plan.run((3,), observer=recorder) == [30]
    names = {name for name, *_ in recorder.seen}
    assert "times_ten" in names and "negate" not in names


def test_observer_sees_a_value_before_any_consumer_can_change_it():
    b = Builder()
    x = b.arg("x")
    made = b.op(lambda v: np.full(3, float(v)), x, name="made")

    def overwrite(a):  # a kernel that reuses its input's buffer
        a += 100.0
        return a

    result = b.op(overwrite, made, name="overwrite")
    plan = executor.prepare(b.program([result]))

    class Copier(Recorder):
        def node_fired(self, node_index, outputs, frame, iteration):
            super().node_fired(node_index, [(o, np.copy(v)) for o, v in outputs], frame, iteration)

    recorder = Copier(plan)
    (value,) = plan.run((1,), observer=recorder)
    assert value.tolist() == [101.0] * 3
    assert recorder.values_of("made")[0][2].tolist() == [1.0] * 3


def test_observer_sees_kernels_that_ran_on_the_pool(pool):
    b = Builder()
    x = b.arg("x")
    left = b.op(lambda v: v + 1, x, inline=False, name="left")
    right = b.op(lambda v: v + 2, x, inline=False, name="right")
    plan = executor.prepare(b.program([b.op(np.add, left, right, name="sum")]))
    recorder = Recorder(plan)
    assert plan.run((1,), pool=pool, observer=recorder) == [5]
    assert sorted(name for name, *_ in recorder.seen) == ["left", "right", "sum", "x"]


def test_a_run_without_observer_or_stats_never_takes_the_instrumented_path(monkeypatch):
    def forbidden(*args):
        raise AssertionError("an ordinary run went through the instrumented path")

    monkeypatch.setattr(runner._Run, "_kernel_done", forbidden)
    monkeypatch.setattr(runner._Run, "_record", forbidden)
    plan = executor.prepare(doubling_loop())
    assert plan.run((1,)) == [8]
    run = runner._Run(plan, (1,), None, None, None, None)
    assert run.table_kind == runner.INLINE_TABLE and run.handlers is runner._HANDLERS


# -- dead firings in the statistics ---------------------------------------------------------------


def untaken_branch_program():
    b = Builder()
    x = b.arg("x")
    (result,) = b.cond(
        b.const(True, name="yes"),
        lambda branch: [b.op(identity, branch.outer(x), name="taken")],
        lambda branch: [b.op(identity, branch.outer(x), name="untaken")],
    )
    return b.program([result])


def test_stats_record_dead_firings_only_when_asked():
    plan = executor.prepare(untaken_branch_program())
    quiet = executor.RunStats()
    plan.run((1,), stats=quiet)
    assert quiet.dead_records == []
    stats = executor.RunStats(record_dead=True)
    plan.run((1,), stats=stats)
    live = {r.node_name for r in stats.node_records}
    dead = {r.node_name for r in stats.dead_records}
    assert "untaken" in dead and "untaken" not in live
    assert "taken" in live and "taken" not in dead
    assert "cond/pivot_f" in dead


def test_dead_records_of_a_loop_are_the_last_iteration_and_the_exits():
    plan = executor.prepare(doubling_loop())
    stats = executor.RunStats(record_dead=True)
    plan.run((1,), stats=stats)
    dead = {(r.node_name, r.iteration) for r in stats.dead_records}
    # The body is dead in iteration 3 (the predicate was false); the Exits are dead in the
    # iterations whose predicate held.
    assert ("double", 3) in dead and ("step", 3) in dead
    assert {i for n, i in dead if n.startswith("loop/exit")} == {0, 1, 2}
    assert not any(n == "double" and i < 3 for n, i in dead)


# -- where errors happened ------------------------------------------------------------------------


@pytest.mark.parametrize("use_pool", [False, True])
def test_kernel_error_says_the_frame_instance_and_iteration(use_pool, pool):
    b = Builder()
    x = b.arg("x")

    def fail_at_two(k):
        if k == 2:
            raise ValueError("two")
        return k + 1

    (result,) = b.while_loop(
        lambda loop: b.op(lambda k: k < 5, loop.vars[0]),
        lambda loop: [b.op(fail_at_two, loop.vars[0], name="step", inline=False)],
        [x],
    )
    plan = executor.prepare(b.program([result]))
    with pytest.raises(executor.KernelError) as info:
        plan.run((0,), pool=pool if use_pool else None)
    assert info.value.node.name == "step"
    assert (info.value.frame, info.value.iteration) == ("while[iter 0 of root]", 2)


def endless_loop(predicate=lambda v: True):
    b = Builder()
    (result,) = b.while_loop(
        lambda loop: b.op(predicate, loop.vars[0], name="forever"),
        lambda loop: [b.op(lambda v: v + 1, loop.vars[0], name="count")],
        [b.const(0)],
        name="spin",
    )
    return b.program([result])


def test_deadline_error_says_which_loop_iteration_the_run_was_in(monkeypatch):
    # The run's clock passes the deadline in iteration 3, however busy the machine is.
    now = [0.0]
    for module in (runner, frames):  # the runner and the firing of NextIteration read it
        monkeypatch.setattr(module, "_monotonic", lambda: now[0])

    def forever(i):
        if i == 3:
            now[0] = 1.0
        return True

    plan = executor.prepare(endless_loop(forever))
    with pytest.raises(executor.DeadlineExceededError) as info:
        plan.run((), deadline=0.5)
    error = info.value
    assert error.frame == "spin[iter 0 of root]"
    assert error.iteration > 0
    assert "spin[iter 0 of root]" in str(error)
    assert error.node_index is None or plan.frame_of(error.node_index) == "spin"


def test_deadline_error_names_a_kernel_still_running_on_the_pool(pool):
    gate = Gate()
    b = Builder()
    x = b.arg("x")
    blocked = b.op(lambda v: gate.wait() and v, x, inline=False, name="blocked")
    b.op(lambda v: v, x, inline=True)
    plan = executor.prepare(b.program([blocked]))
    far = time.monotonic() + 600
    budget = budget_ms(lambda: plan.run((1,), pool=pool, deadline=far), floor_ms=100)
    gate.arm()
    try:
        error = stopped_in_time(
            lambda ms: plan.run((1,), pool=pool, deadline=time.monotonic() + ms / 1000),
            budget,
            executor.DeadlineExceededError,
            lambda e: gate.entered > 0,
        ).error
    finally:
        gate.release()
    running = [plan.program.nodes[index].name for index, _, _ in error.running]
    assert running == ["blocked"]
    assert "'blocked'" in str(error)


class CancellingPool(concurrent.futures.Executor):
    """A pool that cancels every submission, as a pool shut down with cancel_futures does."""

    def submit(self, fn, *args, **kwargs):
        future = concurrent.futures.Future()
        future.cancel()
        return future


def test_a_kernel_cancelled_by_the_pool_is_named():
    b = Builder()
    x = b.arg("x")
    heavy = b.op(lambda v: v + 1, x, inline=False, name="heavy")
    other = b.op(lambda v: v + 2, x, inline=True, name="other")
    plan = executor.prepare(b.program([heavy, other]))
    with pytest.raises(executor.RunCancelledError) as info:
        plan.run((1,), pool=CancellingPool())
    assert plan.program.nodes[info.value.node_index].name == "heavy"
    assert info.value.frame == "root"

"""Conds and loops built by hand in the shapes the helpers produce: frames, iterations,
deadness, parallel iterations, and release of each iteration's values."""

import time
import tracemalloc
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from executor_builder import Builder, identity

import executor
from executor import FetchNotLiveError


def run(builder, fetches, args=(), **kwargs):
    return executor.prepare(builder.program(fetches)).run(args, **kwargs)


def counting(calls: list, name: str, function):
    def kernel(*args):
        calls.append(name)
        return function(*args)

    kernel.__name__ = name
    return kernel


class LiveCounter:
    """Counts the objects it tracks that are still alive, and the most alive at once."""

    def __init__(self):
        self.alive = 0
        self.most_alive = 0
        self._refs = {}

    def track(self, value):
        ref = weakref.ref(value, self._released)
        self._refs[id(ref)] = ref
        self.alive += 1
        self.most_alive = max(self.most_alive, self.alive)
        return value

    def _released(self, ref):
        del self._refs[id(ref)]
        self.alive -= 1


def sum_below(b: Builder, n, parallel_iterations=10, name="while"):
    """``i, total = 0, 0; while i < n: i, total = i + 1, total + i``; returns (i, total)."""

    def cond(loop):
        return b.op(lambda i, limit: i < limit, loop.vars[0], loop.outer(n))

    def body(loop):
        i, total = loop.vars
        one = loop.outer(b.const(1, name=f"{name}/one_outside"))
        return [b.op(np.add, i, one), b.op(np.add, total, i)]

    return b.while_loop(
        cond, body, [b.const(0), b.const(0)], name=name, parallel_iterations=parallel_iterations
    )


# -- cond -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("pred, expected", [(True, 30.0), (False, -3.0)])
def test_cond_returns_the_taken_branch(pred, expected):
    b = Builder()
    p, x = b.arg("pred"), b.arg("x")
    (result,) = b.cond(
        p,
        lambda branch: [b.op(lambda v: v * 10, branch.outer(x))],
        lambda branch: [b.op(np.negative, branch.outer(x))],
    )
    assert run(b, [result], (pred, 3.0)) == [expected]


def test_untaken_branch_runs_no_kernel():
    calls = []
    b = Builder()
    p, x = b.arg("pred"), b.arg("x")

    def true_fn(branch):
        y = b.op(counting(calls, "true_1", lambda v: v + 1), branch.outer(x))
        constant = b.op(counting(calls, "true_const", lambda: 5), control=[branch.pivot])
        return [b.op(counting(calls, "true_2", np.multiply), y, constant)]

    def false_fn(branch):
        return [b.op(counting(calls, "false_1", lambda v: v - 1), branch.outer(x))]

    (result,) = b.cond(p, true_fn, false_fn)
    plan = executor.prepare(b.program([result]))
    assert plan.run((False, 2)) == [1]
    assert calls == ["false_1"]
    calls.clear()
    assert plan.run((True, 2)) == [15]
    assert sorted(calls) == ["true_1", "true_2", "true_const"]


def test_fetching_a_tensor_of_the_untaken_branch_is_dead():
    b = Builder()
    p = b.arg("pred")
    inside = []

    def true_fn(branch):
        inside.append(b.op(identity, branch.outer(b.const(1.0)), name="in_true_branch"))
        return [inside[0]]

    (result,) = b.cond(p, true_fn, lambda branch: [branch.outer(b.const(2.0))])
    with pytest.raises(FetchNotLiveError) as info:
        run(b, [result, inside[0]], (False,))
    assert info.value.missing == [(1, inside[0][0], "dead")]
    assert "in_true_branch" in str(info.value)


# -- while loops ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 5, 100])
def test_while_loop_sums_the_numbers_below_n(n):
    b = Builder()
    i, total = sum_below(b, b.arg("n"))
    assert run(b, [i, total], (n,)) == [n, n * (n - 1) // 2]


def test_zero_trip_loop_returns_the_initial_values_and_runs_no_body_kernel():
    calls = []
    b = Builder()
    start = b.const(7)

    def cond(loop):
        return b.op(lambda v: v < 0, loop.vars[0])

    def body(loop):
        return [b.op(counting(calls, "body", lambda v: v + 1), loop.vars[0])]

    (result,) = b.while_loop(cond, body, [start])
    assert run(b, [result]) == [7]
    assert calls == []


def test_nested_loop_runs_one_inner_instance_per_outer_iteration():
    # for i in range(4): for j in range(i): count += 1
    b = Builder()

    def outer_cond(loop):
        return b.op(lambda i: i < 4, loop.vars[0])

    def outer_body(outer):
        i, count = outer.vars

        def inner_cond(inner):
            return b.op(lambda j, limit: j < limit, inner.vars[0], inner.outer(i))

        def inner_body(inner):
            j, c = inner.vars
            return [b.op(lambda v: v + 1, j), b.op(lambda v: v + 1, c)]

        zero = b.const(0, control=[outer.pivot])
        _, inner_count = b.while_loop(inner_cond, inner_body, [zero, count], name="inner")
        return [b.op(lambda v: v + 1, i), inner_count]

    _, count = b.while_loop(outer_cond, outer_body, [b.const(0), b.const(0)], name="outer")
    stats = executor.RunStats()
    assert run(b, [count], stats=stats) == [0 + 1 + 2 + 3]
    # Outer iteration k runs an inner instance of k + 1 iterations; the outer's last iteration
    # (predicate false) sends dead values into one more inner instance, which runs one dead
    # iteration and completes.
    assert stats.frame_iterations == {"inner": [1, 2, 3, 4, 1], "outer": [5]}


def test_invariant_entered_two_levels_deep_is_seen_by_every_iteration():
    # for i in range(3): for j in range(2): total += x
    b = Builder()
    x = b.arg("x")

    def outer_body(outer):
        i, total = outer.vars
        x_in_outer = outer.outer(x)

        def inner_body(inner):
            j, t = inner.vars
            return [b.op(lambda v: v + 1, j), b.op(np.add, t, inner.outer(x_in_outer))]

        zero = b.const(0, control=[outer.pivot])
        _, total = b.while_loop(
            lambda inner: b.op(lambda j: j < 2, inner.vars[0]),
            inner_body,
            [zero, total],
            name="inner",
        )
        return [b.op(lambda v: v + 1, i), total]

    _, total = b.while_loop(
        lambda outer: b.op(lambda i: i < 3, outer.vars[0]),
        outer_body,
        [b.const(0), b.const(0.0)],
        name="outer",
    )
    assert run(b, [total], (1.5,)) == [9.0]


def test_loop_in_untaken_branch_is_dead_downstream_and_does_not_stall():
    calls = []
    b = Builder()
    p = b.arg("pred")
    downstream = []

    def true_fn(branch):
        start = branch.outer(b.const(0))
        (result,) = b.while_loop(
            lambda loop: b.op(counting(calls, "cond", lambda v: v < 3), loop.vars[0]),
            lambda loop: [b.op(counting(calls, "body", lambda v: v + 1), loop.vars[0])],
            [start],
        )
        downstream.append(b.op(counting(calls, "after_loop", identity), result))
        return [downstream[0]]

    (result,) = b.cond(p, true_fn, lambda branch: [branch.outer(b.const(-1))])
    plan = executor.prepare(b.program([result]))
    assert plan.run((False,)) == [-1]
    assert calls == []
    with pytest.raises(FetchNotLiveError) as info:
        executor.prepare(b.program([downstream[0]])).run((False,))
    assert info.value.missing[0][2] == "dead"
    assert plan.run((True,)) == [3]


def test_cond_inside_a_loop_body():
    # for i in range(6): total += i if i % 2 else -i
    b = Builder()

    def body(loop):
        i, total = loop.vars
        even = b.op(lambda v: v % 2 == 0, i)
        (step,) = b.cond(
            even,
            lambda branch: [b.op(np.negative, branch.outer(i))],
            lambda branch: [branch.outer(i)],
        )
        return [b.op(lambda v: v + 1, i), b.op(np.add, total, step)]

    _, total = b.while_loop(
        lambda loop: b.op(lambda v: v < 6, loop.vars[0]), body, [b.const(0), b.const(0)]
    )
    assert run(b, [total]) == [(1 + 3 + 5) - (0 + 2 + 4)]


# -- parallel iterations --------------------------------------------------------------------------


def nested_program(parallel_iterations):
    """Outer loop of 5 iterations, each running an inner loop of i iterations; the inner body
    has independent chains that may interleave across iterations."""
    b = Builder()

    def outer_body(outer):
        i, acc = outer.vars

        def inner_body(inner):
            j, a = inner.vars
            left = b.op(lambda v: v * 3 % 101, j)
            right = b.op(lambda v, w: (v + w) % 103, a, inner.outer(i))
            return [b.op(lambda v: v + 1, j), b.op(lambda x, y: (x + y * 7) % 1009, left, right)]

        zero = b.const(0, control=[outer.pivot])
        _, acc = b.while_loop(
            lambda inner: b.op(lambda j, n: j < n, inner.vars[0], inner.outer(i)),
            inner_body,
            [zero, acc],
            name="inner",
            parallel_iterations=parallel_iterations,
        )
        return [b.op(lambda v: v + 1, i), acc]

    i, acc = b.while_loop(
        lambda outer: b.op(lambda v: v < 5, outer.vars[0]),
        outer_body,
        [b.const(0), b.const(1)],
        name="outer",
        parallel_iterations=parallel_iterations,
    )
    return b.program([i, acc])


def test_parallel_iterations_one_and_many_give_identical_results():
    results = {n: executor.prepare(nested_program(n)).run(()) for n in (1, 2, 32)}
    assert results[1] == results[2] == results[32]
    b = Builder()
    sums = {n: run(b, sum_below(b, b.const(50, name=f"n{n}"), n, name=f"loop{n}")) for n in (1, 32)}
    assert sums[1] == sums[32] == [50, 1225]


def test_parallel_iterations_bounds_the_iterations_alive_at_once():
    # Each iteration sends a slow kernel to the pool; the counter does not wait for it, so
    # iterations run ahead.  When the counter of iteration i runs, every iteration up to
    # i - parallel_iterations must have finished its slow work (it has completed).
    def run_ahead(parallel_iterations):
        events = []
        b = Builder()

        def body(loop):
            i = loop.vars[0]
            slow = b.op(lambda v: time.sleep(0.0002) or v, i, inline=False)
            b.op(lambda v: events.append(("done", int(v))), slow, num_outputs=0)
            return [b.op(lambda v: events.append(("start", int(v))) or v + 1, i)]

        (result,) = b.while_loop(
            lambda loop: b.op(lambda v: v < 60, loop.vars[0]),
            body,
            [b.const(0)],
            parallel_iterations=parallel_iterations,
        )
        with ThreadPoolExecutor(2) as pool:
            assert run(b, [result], pool=pool) == [60]
        return events

    for parallel_iterations in (1, 3):
        done = set()
        for event, i in run_ahead(parallel_iterations):
            if event == "done":
                done.add(i)
            else:
                assert all(j in done for j in range(i - parallel_iterations + 1)), (i, done)


def test_a_long_loop_holds_only_a_few_iterations_values():
    counter = LiveCounter()

    def grow(total, i):
        return counter.track(total + np.full(64, float(i)))  # a new buffer every iteration

    b = Builder()

    def body(loop):
        i, total = loop.vars
        return [b.op(lambda v: v + 1, i), b.op(grow, total, i)]

    i, total = b.while_loop(
        lambda loop: b.op(lambda v, n: v < n, loop.vars[0], loop.outer(b.arg("n"))),
        body,
        [b.const(0), b.const(np.zeros(64))],
        parallel_iterations=10,
    )
    n = 100_000
    count, final = run(b, [i, total], (n,))
    assert count == n
    assert final[0] == n * (n - 1) / 2
    assert counter.most_alive <= 10


@pytest.mark.parametrize("use_pool", [False, True])
def test_a_long_loop_keeps_no_state_of_completed_iterations(use_pool):
    # Peak traced memory of a run of 30,000 iterations is that of a run of 100: neither the
    # values nor the scheduler's per-iteration state of completed iterations are kept.
    b = Builder()

    def body(loop):
        i, total = loop.vars
        return [b.op(lambda v: v + 1, i), b.op(lambda v: v + 1.0, total)]

    _, total = b.while_loop(
        lambda loop: b.op(lambda v, n: v < n, loop.vars[0], loop.outer(b.arg("n"))),
        body,
        [b.const(0), b.const(np.zeros(1000))],
    )
    plan = executor.prepare(b.program([total]))
    with ThreadPoolExecutor(2) as pool:

        def peak(n):
            tracemalloc.start()
            try:
                (result,) = plan.run((n,), pool=pool if use_pool else None)
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
                assert result[0] == n

        peak(10)
        short, long = peak(100), peak(30_000)
    assert long < short + 100_000, (short, long)

"""The cost model (`executor.costs`): which kernels run on the thread that made them ready and
which go to the inter-op pool, decided from their measured times.

The kernels here are either far below the threshold (an identity: a microsecond) or far above it
(a sleep of several milliseconds, which never returns early), so the decisions do not depend on
how loaded the machine is.  A pool that counts what it is given shows when a run woke no pool
thread at all.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from executor_builder import Builder

import executor
from executor import costs
from executor.tables import INLINE_TABLE, MEASURE_TABLE, POOL_TABLE

SLEEP_SECONDS = 0.004  # eight times the threshold
assert SLEEP_SECONDS > 4 * costs.EXPENSIVE_KERNEL_SECONDS


class CountingPool:
    """A pool of two threads that counts the kernels submitted to it."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(2, thread_name_prefix="counting-pool")
        self.submitted = 0

    def submit(self, function, *args):
        self.submitted += 1
        return self._pool.submit(function, *args)

    def shutdown(self, wait: bool = True) -> None:
        self._pool.shutdown(wait)


@pytest.fixture
def counting_pool():
    pool = CountingPool()
    yield pool
    pool.shutdown()


def recording(threads: list, kernel):
    """``kernel``, appending the identity of the thread that runs it to ``threads``."""

    def record(*args):
        threads.append(threading.get_ident())
        return kernel(*args)

    return record


def sleeping(value):
    time.sleep(SLEEP_SECONDS)
    return value


def identity(value):
    return value


def node_named(plan: executor.Plan, name: str):
    return next(info for info in plan.node_infos if info.name == name)


# -- what runs where ------------------------------------------------------------------------------


def test_a_chain_of_cheap_kernels_on_large_arrays_runs_on_the_calling_thread(counting_pool):
    # Two chains of ten identities each on an 800 KB array: before they are measured, their
    # size makes them candidates for the pool; once measured (about a microsecond each), no
    # run sends any of them there, though the other chain's nodes are always ready beside.
    threads: list[int] = []
    b = Builder()
    x = b.arg("x")
    ends = []
    for chain in ("a", "b"):
        value = x
        for step in range(10):
            value = b.op(recording(threads, identity), value, name=f"{chain}{step}")
        ends.append(value)
    plan = executor.prepare(b.program(ends))
    big = np.ones(100_000)
    for _ in range(3):
        plan.run((big,), pool=counting_pool)
    threads.clear()
    counting_pool.submitted = 0
    for _ in range(2 * costs.MEASURE_EVERY):  # measuring runs among them
        result = plan.run((big,), pool=counting_pool)
        assert result[0] is big and result[1] is big
    assert counting_pool.submitted == 0
    assert set(threads) == {threading.get_ident()}
    assert all(
        0.0 <= plan.costs.estimate_of(info) < costs.EXPENSIVE_KERNEL_SECONDS
        for info in plan.node_infos
        if info.kind == executor.NodeKind.OP
    )


def test_two_expensive_independent_kernels_run_on_two_threads(counting_pool):
    threads: dict[str, int] = {}

    def kernel(name):
        def run(value):
            threads[name] = threading.get_ident()
            return sleeping(value)

        return run

    b = Builder()
    x = b.arg("x")
    left = b.op(kernel("left"), x, name="left")
    right = b.op(kernel("right"), x, name="right")
    plan = executor.prepare(b.program([b.op(np.add, left, right)]))
    # First run: unmeasured, and their inputs are small, so both run on this thread.
    assert plan.run((1.0,), pool=counting_pool) == [2.0]
    assert threads["left"] == threads["right"] == threading.get_ident()
    assert counting_pool.submitted == 0
    # Measured expensive: one goes to the pool while this thread runs the other.
    assert plan.run((1.0,), pool=counting_pool) == [2.0]
    assert threads["left"] != threads["right"]
    assert threading.get_ident() in threads.values()
    assert counting_pool.submitted == 1


def test_an_expensive_kernel_beside_only_cheap_ones_stays_on_the_calling_thread(counting_pool):
    # TensorFlow sends the expensive node to the pool when cheap ones are ready beside it; here
    # the hand-off costs more than the cheap ones take, so it runs on this thread after them.
    # (The input is large, so the first, unmeasured run may use the pool.)
    threads: list[int] = []
    b = Builder()
    x = b.arg("x")
    heavy = b.op(recording(threads, sleeping), x, name="heavy")
    cheap = [b.op(recording(threads, identity), x, name=f"cheap{k}") for k in range(5)]
    plan = executor.prepare(b.program([heavy, *cheap]))
    big = np.ones(100_000)
    plan.run((big,), pool=counting_pool)
    threads.clear()
    counting_pool.submitted = 0
    for _ in range(5):
        assert all(value is big for value in plan.run((big,), pool=counting_pool))
    assert plan.costs.estimate_of(node_named(plan, "heavy")) >= SLEEP_SECONDS
    assert counting_pool.submitted == 0
    assert set(threads) == {threading.get_ident()}


def test_an_expensive_kernel_waits_for_cheap_work_that_readies_another_to_pair_with(
    counting_pool,
):
    # heavy_a is ready beside a cheap node only; it waits under it, the cheap node readies
    # heavy_b, and the two expensive kernels run at once on two threads.
    threads: dict[str, int] = {}

    def kernel(name):
        def run(value):
            threads[name] = threading.get_ident()
            return sleeping(value)

        return run

    b = Builder()
    x = b.arg("x")
    heavy_a = b.op(kernel("heavy_a"), x, name="heavy_a")
    cheap = b.op(identity, x, name="cheap")
    heavy_b = b.op(kernel("heavy_b"), cheap, name="heavy_b")
    plan = executor.prepare(b.program([heavy_a, heavy_b]))
    assert plan.run((1,), pool=counting_pool) == [1, 1]  # measures them, on this thread
    assert counting_pool.submitted == 0
    for _ in range(3):
        assert plan.run((1,), pool=counting_pool) == [1, 1]
        assert threads["heavy_a"] != threads["heavy_b"]
    assert counting_pool.submitted == 3


def test_a_kernel_declared_not_inline_still_goes_to_the_pool_beside_cheap_work(counting_pool):
    threads: dict[str, int] = {}

    def declared(value):
        threads["declared"] = threading.get_ident()
        return value + 1

    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(
        b.program([b.op(declared, x, inline=False), b.op(identity, x, inline=True)])
    )
    for _ in range(3):
        assert plan.run((1,), pool=counting_pool) == [2, 1]
        assert threads["declared"] != threading.get_ident()
    assert plan.costs.estimate_of(plan.node_infos[1]) == costs.UNMEASURED  # never timed


def test_without_a_pool_nothing_is_timed():
    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(b.program([b.op(sleeping, x, name="heavy")]))
    plan.run((1,))
    assert plan.costs.estimate_of(node_named(plan, "heavy")) == costs.UNMEASURED


# -- measuring ------------------------------------------------------------------------------------


def test_a_kernel_measured_cheap_that_becomes_slow_is_seen_by_measuring_runs(
    counting_pool, monkeypatch
):
    monkeypatch.setattr(costs, "MEASURE_EVERY", 4)
    slow = threading.Event()

    def sometimes_slow(value):
        if slow.is_set():
            time.sleep(SLEEP_SECONDS)
        return value

    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(b.program([b.op(sometimes_slow, x, name="varying")]))
    info = node_named(plan, "varying")
    pool_table = info.frame.tables[POOL_TABLE]
    plan.run((1,), pool=counting_pool)
    assert 0.0 <= plan.costs.estimate_of(info) < costs.EXPENSIVE_KERNEL_SECONDS
    # Measured cheap: the hot loop runs it untimed, from the inline table's entry.
    assert pool_table[info.local] == info.frame.tables[INLINE_TABLE][info.local]
    slow.set()
    before = plan.costs.estimate_of(info)
    for _ in range(costs.MEASURE_EVERY - 2):
        plan.run((1,), pool=counting_pool)
    assert plan.costs.estimate_of(info) == before  # no measuring run yet
    # Each measuring run's time counts for at most SAMPLE_CAP times the average (or the
    # threshold): the average climbs over several of them.
    measuring_runs = 0
    while plan.costs.estimate_of(info) < costs.EXPENSIVE_KERNEL_SECONDS and measuring_runs < 20:
        for _ in range(costs.MEASURE_EVERY):
            plan.run((1,), pool=counting_pool)
        measuring_runs += 1
    assert 1 < measuring_runs < 20
    assert plan.costs.estimate_of(info) >= costs.EXPENSIVE_KERNEL_SECONDS
    assert pool_table[info.local] == info.frame.tables[MEASURE_TABLE][info.local]


def test_the_estimate_is_the_first_time_then_an_exponential_average():
    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(b.program([b.op(identity, x, name="op")]))
    info = node_named(plan, "op")
    model = plan.costs
    pool_table = info.frame.tables[POOL_TABLE]
    assert model.estimate_of(info) == costs.UNMEASURED
    assert model.is_expensive(info, (np.ones(costs.UNMEASURED_LIMIT_BYTES // 8 + 1),))
    assert not model.is_expensive(info, (np.ones(costs.UNMEASURED_LIMIT_BYTES // 8),))
    threshold = costs.EXPENSIVE_KERNEL_SECONDS
    model.record(info, 2 * threshold)
    assert model.estimate_of(info) == 2 * threshold
    assert model.is_expensive(info, ())
    assert pool_table[info.local] == info.frame.tables[MEASURE_TABLE][info.local]
    # One fast call moves the average a tenth of the way: still expensive.
    model.record(info, 0.0)
    assert model.estimate_of(info) == pytest.approx(2 * threshold * (1 - 1 / costs.COST_DECAY))
    assert model.is_expensive(info, ())
    for _ in range(10):
        model.record(info, 0.0)
    assert not model.is_expensive(info, (np.ones(10**6),))  # measured: the size is not looked at
    assert pool_table[info.local] == info.frame.tables[INLINE_TABLE][info.local]


def test_one_slow_call_does_not_make_a_cheap_kernel_expensive_but_a_lasting_change_does():
    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(b.program([b.op(identity, x, name="op")]))
    info = node_named(plan, "op")
    model = plan.costs
    model.record(info, 20e-6)
    model.record(info, 0.050)  # the process waited 50 ms for a core during the call
    assert not model.is_expensive(info, ())
    assert model.estimate_of(info) <= 20e-6 + costs.EXPENSIVE_KERNEL_SECONDS / costs.COST_DECAY
    for _ in range(5):
        model.record(info, 20e-6)
    records = 0
    while not model.is_expensive(info, ()):
        model.record(info, 0.005)  # the kernel now takes 5 ms every time
        records += 1
    assert records < 10


def test_a_node_declared_inline_is_never_expensive():
    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(
        b.program([b.op(identity, x, inline=True), b.op(identity, x, inline=False)])
    )
    big = (np.ones(10**6),)
    assert not plan.costs.is_expensive(plan.node_infos[1], big)
    assert plan.costs.is_expensive(plan.node_infos[2], ())


# -- contracts kept -------------------------------------------------------------------------------


def test_an_expensive_kernel_that_fails_on_the_pool_names_its_node(counting_pool):
    fail = threading.Event()

    def failing(value):
        time.sleep(SLEEP_SECONDS)
        if fail.is_set():
            raise ValueError("bad value")
        return value

    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(
        b.program([b.op(failing, x, name="fails"), b.op(sleeping, x, name="other")])
    )
    plan.run((1,), pool=counting_pool)
    fail.set()
    with pytest.raises(executor.KernelError) as caught:
        plan.run((1,), pool=counting_pool)
    assert counting_pool.submitted == 1
    assert plan.node_infos[caught.value.node_index].name == "fails"
    assert isinstance(caught.value.cause, ValueError)


def test_a_deadline_stops_a_run_whose_expensive_kernels_are_on_the_pool(counting_pool):
    gate = threading.Event()
    started = threading.Event()

    def blocks_once_measured(value):
        if started.is_set():
            gate.wait(10)
        time.sleep(SLEEP_SECONDS)
        return value

    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(
        b.program([b.op(blocks_once_measured, x, name=f"blocked{k}") for k in range(2)])
    )
    plan.run((1,), pool=counting_pool)
    started.set()
    try:
        with pytest.raises(executor.DeadlineExceededError) as caught:
            plan.run((1,), pool=counting_pool, deadline=time.monotonic() + 0.2)
        assert {plan.node_infos[index].name for index, _, _ in caught.value.running} == {
            "blocked0",
            "blocked1",
        }
    finally:
        gate.set()

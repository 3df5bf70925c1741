"""Deadlines for the tests that check what a run was doing when its deadline passed.

Such a test means its deadline to cover one thing: the part of the run it is about (a loop that
spins, an op that blocks).  What a first run does besides (building its plan, starting the
threads that drive timed runs and the inter-op pool's, the first call of each kernel) must be
done before, and the budget must leave the run time to reach that part on a loaded machine
too.  `budget_ms` does both: it runs ``warm_up`` (the run under test made to end: its blocking
op let through by a `Gate`, or stopped early) and ``probe`` (a run that goes as far as the run
under test must get before its deadline) once, then times ``probe`` and returns a large
multiple of its slowest time, never less than ``floor_ms``.  On a busy machine the probe is
slower, and the budget grows with it.

A machine busy enough can still hold a run's thread back for longer than any budget measured
before, so that the deadline passes before the run reached the part under test.
`stopped_in_time` makes such a run again with a larger budget, a few times, and gives the test
the error of the run that got there (or of the last one, for the test's checks to fail on).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple, Optional


def budget_ms(
    probe: Callable[[], object],
    warm_up: Optional[Callable[[], object]] = None,
    *,
    floor_ms: int = 300,
    factor: int = 50,
    repeats: int = 3,
) -> int:
    """A deadline budget in milliseconds for the run that ``probe`` stands for (see above)."""
    if warm_up is not None:
        warm_up()
    probe()
    slowest = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        probe()
        slowest = max(slowest, time.perf_counter() - started)
    return max(floor_ms, round(factor * slowest * 1000))


class Stopped(NamedTuple):
    """A run stopped by its deadline: its error, its budget and how long it took."""

    error: BaseException
    budget_ms: int
    seconds: float


def stopped_in_time(
    run: Callable[[int], object],
    budget: int,
    error: type[BaseException],
    reached: Callable[[BaseException], bool],
    *,
    attempts: int = 3,
    growth: int = 4,
) -> Stopped:
    """Makes ``run(budget)`` (a run that only its deadline of ``budget`` ms can stop) until
    ``reached(e)`` says that the ``error`` it raised stopped it in the part under test, each
    time with a budget ``growth`` times larger; the last attempt is returned whatever it
    reached.  A run that ends, or raises anything else, fails the test at once."""
    attempt = 1
    while True:
        started = time.monotonic()
        try:
            run(budget)
        except error as stopped:
            seconds = time.monotonic() - started
            if reached(stopped) or attempt >= attempts:
                return Stopped(stopped, budget, seconds)
        else:
            raise AssertionError(f"the run ended before its deadline of {budget} ms stopped it")
        attempt += 1
        budget *= growth


class Gate:
    """What a kernel under test waits on: `wait` returns at once until the gate is `arm`-ed
    (so that warm-up runs go through), then blocks until `release` (or ``seconds``).
    ``entered`` counts the waits on the armed gate: the runs that reached the kernel."""

    def __init__(self) -> None:
        self._armed = threading.Event()
        self._released = threading.Event()
        self._lock = threading.Lock()
        self.entered = 0

    def arm(self) -> None:
        self._armed.set()

    def release(self) -> None:
        self._released.set()

    def wait(self, seconds: Optional[float] = 60.0) -> bool:
        """True once passed (at once while unarmed, or when released); False if ``seconds``
        passed first."""
        if not self._armed.is_set():
            return True
        with self._lock:
            self.entered += 1
        return self._released.wait(seconds)


def wait_until(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    """Polls ``condition`` until it holds or ``seconds`` pass; whether it held.  For what ends
    on its own a little later (an idle thread's exit), with a bound so that a test never hangs."""
    give_up = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > give_up:
            return False
        time.sleep(0.01)
    return True

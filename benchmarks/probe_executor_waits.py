"""Where the time of a Session run goes when it waits: the run's lock, the wait for pool work,
the hand-off to a pool thread, and the way back.

Runs one case of `bench_executor.LOAD_CASES` many times beside two CPU hogs (or idle), with the
executor's run lock, its condition and its pool hand-offs wrapped in timers (here, by wrapping
the methods of ``executor.runner._Run``: nothing of this is in the executor's hot path), and
prints, for the median runs and for the slowest tenth, the mean milliseconds per run spent:

- ``lock``: the thread that drives the run waiting to take the run's lock;
- ``pool wait``: the driving thread waiting on the run's condition for pool work to finish;
- ``submit``: handing a kernel to the pool (the pool's lock, a thread start);
- ``to pool``: from the hand-off to a pool thread starting the kernel (queue, wake-up, GIL);
- ``back``: from the pool kernel's end to that thread holding the run's lock (GIL, lock);
- ``pool runs``: kernels sent to the pool per run.

What is left of a slow run's time beyond these (and its median) is the process waiting for a
core, or the GIL held by another thread inside a kernel.

Usage: ``python benchmarks/probe_executor_waits.py [--case "LeNet inference, batch 1"]
[--runs 2000] [--idle]``; with ``PYTHONPATH`` naming another checkout, the same figures for it.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import CpuHogs, describe_machine

# isort: split
import argparse
import statistics
import threading
import time
from collections import defaultdict

_perf_counter = time.perf_counter


class _Waits:
    """Seconds of each kind of wait, per run (``current`` is the run being timed)."""

    def __init__(self) -> None:
        self.current: dict = defaultdict(float)
        self.runs: list[tuple[float, dict]] = []


WAITS = _Waits()
# Per pool thread: when its kernel returned (``end``), until it holds the run's lock again.
_KERNEL_END = threading.local()


def _note_way_back() -> None:
    end = getattr(_KERNEL_END, "end", None)
    if end is not None:
        WAITS.current["back"] += _perf_counter() - end
        _KERNEL_END.end = None


class _TimedLock:
    """A lock that adds the time its acquisitions waited to ``WAITS`` (for the thread that
    drives runs: the main thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        main = threading.current_thread() is threading.main_thread()
        if self._lock.acquire(False):
            if not main:
                _note_way_back()
            return True
        if not blocking:
            return False
        began = _perf_counter()
        taken = self._lock.acquire(True, timeout)
        if main:
            if not getattr(_KERNEL_END, "waiting", False):
                WAITS.current["lock"] += _perf_counter() - began
        else:
            _note_way_back()
        return taken

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    __enter__ = acquire

    def __exit__(self, *exc_info) -> None:
        self._lock.release()

    # What threading.Condition uses of its lock.
    def _is_owned(self) -> bool:
        if self._lock.acquire(False):
            self._lock.release()
            return False
        return True


class _TimedCondition(threading.Condition):
    """A condition whose waits (with the lock taken back after them) count as ``pool wait``."""

    def wait(self, timeout=None):
        began = _perf_counter()
        _KERNEL_END.waiting = True
        try:
            return super().wait(timeout)
        finally:
            _KERNEL_END.waiting = False
            WAITS.current["pool wait"] += _perf_counter() - began


def instrument() -> None:
    """Wraps the run's lock, condition, pool hand-off and pool task of ``executor.runner``."""
    from executor import runner

    run_class = runner._Run
    original_init = run_class.__init__
    original_submit = run_class._submit
    original_on_pool = run_class._run_on_pool

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        self.lock = _TimedLock()
        self.condition = _TimedCondition(self.lock)

    def submit(self, holder, pool=None):
        holder.append(_perf_counter())  # when it was handed over
        began = _perf_counter()
        try:
            return original_submit(self, holder, pool)
        finally:
            WAITS.current["submit"] += _perf_counter() - began
            WAITS.current["pool runs"] += 1

    def on_pool(self, holder):
        WAITS.current["to pool"] += _perf_counter() - holder.pop()
        kernel = holder[1].kernel

        def timed_kernel(*args):
            try:
                return kernel(*args)
            finally:
                _KERNEL_END.end = _perf_counter()

        # The kernel is wrapped for this call only, through a shadow of the node's info.
        holder[1] = _Shadow(holder[1], timed_kernel)
        return original_on_pool(self, holder)

    run_class.__init__ = init
    run_class._submit = submit
    run_class._run_on_pool = on_pool


class _Shadow:
    """The attributes of a `NodeInfo`, with another kernel."""

    def __init__(self, info, kernel) -> None:
        self._info = info
        self.kernel = kernel

    def __getattr__(self, name):
        return getattr(self._info, name)


def main() -> None:
    # dataflow first, from PYTHONPATH when it names a checkout (bench_executor puts this
    # checkout first on sys.path for what it imports later).
    import dataflow

    # isort: split
    import bench_executor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="LeNet inference, batch 1")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--idle", action="store_true", help="without the CPU hogs")
    args = parser.parse_args()
    build, arguments, _ = bench_executor.LOAD_CASES[args.case]
    run = build(dataflow, *arguments)
    for _ in range(20):
        run()
    instrument()
    print(describe_machine(args.runs, case=args.case, load="idle" if args.idle else "2 CPU hogs"))
    hogs = None if args.idle else CpuHogs(2)
    if hogs is not None:
        hogs.__enter__()
    try:
        for _ in range(args.runs):
            WAITS.current = defaultdict(float)
            began = _perf_counter()
            run()
            WAITS.runs.append((_perf_counter() - began, WAITS.current))
    finally:
        if hogs is not None:
            hogs.__exit__(None, None, None)
    ordered = sorted(WAITS.runs, key=lambda entry: entry[0])
    count = len(ordered)
    groups = {
        "median runs (45-55%)": ordered[int(0.45 * count) : int(0.55 * count) + 1],
        "slowest 10%": ordered[int(0.9 * count) :],
    }
    kinds = ("lock", "pool wait", "submit", "to pool", "back")
    print(f"{'':22} {'run':>8} " + " ".join(f"{kind:>9}" for kind in kinds) + "  pool runs")
    for label, runs in groups.items():
        mean_run = statistics.fmean(seconds for seconds, _ in runs) * 1e3
        means = [statistics.fmean(waits[kind] for _, waits in runs) * 1e3 for kind in kinds]
        pool_runs = statistics.fmean(waits["pool runs"] for _, waits in runs)
        print(
            f"{label:22} {mean_run:8.3f} "
            + " ".join(f"{value:9.3f}" for value in means)
            + f"  {pool_runs:9.2f}"
        )


if __name__ == "__main__":
    main()

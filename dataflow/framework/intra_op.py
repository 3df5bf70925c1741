"""Intra-op parallelism: the threads one kernel shares its work with, and BLAS's threads.

A kernel with a lot of work (a convolution's blocks of patches, a long fused elementwise
chain) splits it into numbered *blocks* and runs them with `run_blocks`: the calling thread
and the helpers it is granted each take the next block not yet taken, until none is left.
numpy releases the GIL inside its copies, ufunc loops and BLAS calls, so the blocks run at
once on several cores.  A thread the machine slows down simply takes fewer blocks, and the
caller never waits for a helper that has not started: a helper that starts late finds no block
left and ends.  This is TensorFlow's intra-op thread pool, in the same place: between the
inter-op pool that runs independent ops at once, and the kernels.

One pool per process (`shared_pool`) counts the cores that such kernels occupy: a kernel is
granted helpers only while cores are free, so two large kernels running at once on two
inter-op threads of a 2-core machine each keep to their own thread, instead of four threads
fighting for two cores.

BLAS.  numpy's BLAS (OpenBLAS, MKL, ...) has threads of its own, one per core by default, and
they spin while they wait for work: a product on two BLAS threads inside each of two blocks
running at once puts four busy threads on two cores, and on a loaded machine a product whose
second BLAS thread is not scheduled waits for it (a 1 ms product then takes tens).  So while
blocks run, `run_blocks` holds BLAS to one thread per call (through ``threadpoolctl``, which
finds the BLAS numpy loaded), and gives it back its own setting when the last kernel running
blocks ends.  A Session holds it for the whole of each run, so every product its kernels make
(in blocks or not) runs on one BLAS thread, and holding again inside costs only a count;
products that numpy code outside a run makes keep BLAS's threads.  (`blas_threads` is a
context manager: ``with blas_threads: ...``.)

Invariants: blocks are numbered, and a kernel that combines blocks' results (a sum) does it in
block order, so a result never depends on which thread ran which block; the first error of a
block is raised in the caller after every block taken has finished, and no block is taken
after it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Optional

import numpy as np

from executor import DaemonThreadPool


def default_threads() -> int:
    """The intra-op budget when none is given: one thread per core, as in TensorFlow."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class IntraOpPool:
    """Helper threads shared by every kernel that runs blocks, and the count of cores those
    kernels occupy (each kernel's own thread and the helpers it was granted).

    Invariant (under ``_lock``): ``_cores_in_use`` is the number of threads now running
    blocks; `enter` grants helpers only up to the number of cores, and `leave` gives them back.
    """

    def __init__(self, cores: Optional[int] = None):
        self.cores = cores or default_threads()
        self._lock = threading.Lock()
        self._cores_in_use = 0
        self._pool = DaemonThreadPool(self.cores, "dataflow-intra-op")
        self.helpers_granted = 0  # over the pool's life: what tests and benchmarks read

    def enter(self, wanted_helpers: int) -> int:
        """Counts the calling thread and grants it up to ``wanted_helpers`` helpers."""
        with self._lock:
            self._cores_in_use += 1
            granted = max(0, min(wanted_helpers, self.cores - self._cores_in_use))
            self._cores_in_use += granted
            self.helpers_granted += granted
        return granted

    def leave(self, granted: int) -> None:
        with self._lock:
            self._cores_in_use -= 1 + granted

    def submit(self, function: Callable):
        return self._pool.submit(function)


_shared_pool: Optional[IntraOpPool] = None
_shared_pool_lock = threading.Lock()


def shared_pool() -> IntraOpPool:
    """The process's `IntraOpPool`, made on first use."""
    global _shared_pool
    if _shared_pool is None:
        with _shared_pool_lock:
            if _shared_pool is None:
                _shared_pool = IntraOpPool()
    return _shared_pool


# -- BLAS held to one thread while blocks run ------------------------------------------------------
class _BlasThreads:
    """Holds numpy's BLAS to one thread while any kernel runs blocks (a count under a lock),
    and restores the setting it found when the count returns to zero.  Without
    ``threadpoolctl`` (or with a BLAS it does not know) it does nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._libraries: Optional[list] = None  # threadpoolctl's controllers of BLAS, once found
        self._saved: list[int] = []

    def _blas_libraries(self) -> list:
        if self._libraries is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                self._libraries = []
            else:
                controllers = ThreadpoolController().lib_controllers
                self._libraries = [c for c in controllers if c.user_api == "blas"]
        return self._libraries

    def hold(self) -> None:
        with self._lock:
            self._holders += 1
            if self._holders == 1:
                libraries = self._blas_libraries()
                self._saved = [library.get_num_threads() for library in libraries]
                for library, threads in zip(libraries, self._saved):
                    if threads != 1:
                        library.set_num_threads(1)

    def release(self) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0:
                for library, threads in zip(self._blas_libraries(), self._saved):
                    if threads != 1:
                        library.set_num_threads(threads)

    def __enter__(self) -> _BlasThreads:
        self.hold()
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()


blas_threads = _BlasThreads()


# -- running blocks --------------------------------------------------------------------------------
class _BlockRun:
    """One `run_blocks` call: the next block to take, the blocks in flight, the first error."""

    def __init__(self, count: int, run_block: Callable[[int], None]) -> None:
        self.count = count
        self.run_block = run_block
        self.lock = threading.Lock()
        self.blocks_done = threading.Condition(self.lock)
        self.next_block = 0  # the blocks before it are taken
        self.in_flight = 0  # taken and not finished
        self.error: Optional[BaseException] = None

    def work(self) -> None:
        """Takes the next block not taken and runs it, until none is left or one failed."""
        while True:
            with self.lock:
                if self.error is not None or self.next_block >= self.count:
                    return
                number = self.next_block
                self.next_block += 1
                self.in_flight += 1
            try:
                self.run_block(number)
            except BaseException as error:
                with self.lock:
                    if self.error is None:
                        self.error = error
            finally:
                with self.lock:
                    self.in_flight -= 1
                    if not self.in_flight:
                        self.blocks_done.notify_all()

    def wait(self) -> None:
        with self.lock:
            while self.in_flight:
                self.blocks_done.wait()


def run_blocks(
    count: int,
    run_block: Callable[[int], None],
    threads: Optional[int] = None,
    pool: Optional[IntraOpPool] = None,
) -> None:
    """Calls ``run_block(number)`` for every ``number`` in ``range(count)``, on this thread and
    on up to ``threads - 1`` helpers (``threads`` None: one per core), with BLAS held to one
    thread.  Returns when every block has run; raises the first error a block raised (the
    blocks not yet taken then do not run).  ``run_block`` must be safe to call from several
    threads at once on different numbers."""
    if count <= 0:
        return
    pool = pool or shared_pool()
    wanted = min(threads or pool.cores, count) - 1
    run = _BlockRun(count, run_block)
    granted = pool.enter(wanted)
    blas_threads.hold()
    try:
        for _ in range(granted):
            pool.submit(run.work)
        run.work()
        run.wait()
    finally:
        blas_threads.release()
        pool.leave(granted)
    if run.error is not None:
        raise run.error


def sum_in_block_order(parts: list):
    """The sum of the blocks' results ``parts``, added in block order (into the first), so that
    it does not depend on which thread made which part."""
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total


_scratch = threading.local()


def scratch(size: int, dtype) -> np.ndarray:
    """A buffer of at least ``size`` elements of ``dtype`` for the calling thread, kept and
    reused between calls: a kernel that runs blocks over and over allocates (and faults in) no
    new memory once each thread has its buffer.  Valid until the same thread asks again."""
    dtype = np.dtype(dtype)
    raw = getattr(_scratch, "raw", None)
    nbytes = size * dtype.itemsize
    if raw is None or raw.size < nbytes:
        raw = _scratch.raw = np.empty(max(nbytes, 1), np.uint8)
    return raw[:nbytes].view(dtype)

"""Intra-op parallelism (`dataflow.framework.intra_op`): blocks shared out among the calling
thread and its helpers, errors, the core budget, and BLAS held to one thread while blocks run."""

import threading

import numpy as np
import pytest

from dataflow.framework import intra_op


@pytest.fixture
def pool():
    """A pool of its own with three cores, so that helpers are granted on any machine."""
    return intra_op.IntraOpPool(cores=3)


def test_every_block_runs_once_on_the_caller_and_its_helpers(pool):
    seen, threads = [], set()
    lock = threading.Lock()
    started = threading.Barrier(2, timeout=10)

    def run(number):
        if number < 2:
            started.wait()  # the first two blocks run at once: a helper took one
        with lock:
            seen.append(number)
            threads.add(threading.get_ident())

    intra_op.run_blocks(50, run, pool=pool)
    assert sorted(seen) == list(range(50))
    assert threading.get_ident() in threads and len(threads) >= 2
    assert pool.helpers_granted == 2


def test_one_thread_runs_every_block_on_the_caller(pool):
    threads = set()
    intra_op.run_blocks(10, lambda number: threads.add(threading.get_ident()), 1, pool)
    assert threads == {threading.get_ident()}
    assert pool.helpers_granted == 0


def test_the_first_error_is_raised_after_the_blocks_in_flight_and_no_block_starts_after(pool):
    done = []

    def run(number):
        if number == 3:
            raise ValueError("block 3 failed")
        done.append(number)

    with pytest.raises(ValueError, match="block 3 failed"):
        intra_op.run_blocks(1000, run, threads=1, pool=pool)
    assert done == [0, 1, 2]


def test_no_blocks_is_nothing_to_do(pool):
    intra_op.run_blocks(0, lambda number: pytest.fail("ran a block"), pool=pool)


def test_kernels_running_at_once_share_the_cores():
    shared = intra_op.IntraOpPool(cores=2)
    first = shared.enter(wanted_helpers=1)
    second = shared.enter(wanted_helpers=1)  # another kernel, on another inter-op thread
    assert (first, second) == (1, 0)
    shared.leave(second)
    shared.leave(first)
    assert shared.enter(wanted_helpers=5) == 1


def test_blas_runs_one_thread_while_blocks_run_and_gets_its_setting_back(pool):
    libraries = intra_op.blas_threads._blas_libraries()
    if not libraries:
        pytest.skip("no BLAS that threadpoolctl controls")
    library = libraries[0]
    before = library.get_num_threads()
    library.set_num_threads(2)
    try:
        inside = []
        intra_op.run_blocks(4, lambda number: inside.append(library.get_num_threads()), pool=pool)
        assert inside == [1, 1, 1, 1]
        assert library.get_num_threads() == 2
    finally:
        library.set_num_threads(before)


def test_a_session_run_holds_blas_to_one_thread_and_gives_its_setting_back():
    """Every product a run's kernels make runs on one BLAS thread (BLAS's own threads spin
    while they wait, and on a loaded machine wait for each other); after the run, numpy code
    outside gets BLAS's setting back."""
    import dataflow as df

    libraries = intra_op.blas_threads._blas_libraries()
    if not libraries:
        pytest.skip("no BLAS that threadpoolctl controls")
    library = libraries[0]
    before = library.get_num_threads()
    library.set_num_threads(2)
    try:
        seen = []

        def threads_now(x):
            seen.append(library.get_num_threads())
            return x

        value = df.py_func(threads_now, [df.constant(1.0)], df.float32)
        with df.Session() as sess:
            sess.run(value)
            assert seen == [1]
            assert library.get_num_threads() == 2
            sess.run(value)  # and again on the next run
        assert seen == [1, 1]
    finally:
        library.set_num_threads(before)


def test_holding_blas_nests_and_a_failed_run_gives_blas_back():
    import dataflow as df

    libraries = intra_op.blas_threads._blas_libraries()
    if not libraries:
        pytest.skip("no BLAS that threadpoolctl controls")
    library = libraries[0]
    before = library.get_num_threads()
    library.set_num_threads(2)
    try:
        with intra_op.blas_threads:
            with intra_op.blas_threads:
                assert library.get_num_threads() == 1
            assert library.get_num_threads() == 1
        assert library.get_num_threads() == 2

        def fail(x):
            raise ValueError("the kernel failed")

        with df.Session() as sess, pytest.raises(df.errors.InvalidArgumentError):
            sess.run(df.py_func(fail, [df.constant(1.0)], df.float32))
        assert library.get_num_threads() == 2
    finally:
        library.set_num_threads(before)


def test_scratch_is_kept_per_thread_and_grows_when_asked_for_more():
    first = intra_op.scratch(100, np.float32)
    again = intra_op.scratch(50, np.float32)
    assert first.dtype == np.float32 and first.size == 100 and again.size == 50
    assert np.shares_memory(first, again)
    bigger = intra_op.scratch(10_000, np.float64)
    assert bigger.size == 10_000 and bigger.dtype == np.float64
    other = []
    thread = threading.Thread(target=lambda: other.append(intra_op.scratch(100, np.float32)))
    thread.start()
    thread.join()
    assert not np.shares_memory(other[0], bigger)

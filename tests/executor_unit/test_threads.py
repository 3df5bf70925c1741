"""`DaemonThreadPool`: threads start on demand, end when idle or shut down, and no submitted
call is ever left without a thread to run it."""

import queue
import random
import threading
import time

from deadlines import wait_until

from executor import DaemonThreadPool


def test_idle_threads_end_after_the_idle_timeout_and_new_work_starts_new_ones():
    pool = DaemonThreadPool(name="test-idle", idle_timeout=0.05)
    gate = threading.Barrier(6)
    futures = [pool.submit(gate.wait, 10) for _ in range(6)]  # six calls waiting on each other
    assert all(f.result(timeout=10) is not None for f in futures)
    assert pool.thread_count == 6
    assert wait_until(lambda: pool.thread_count == 0)
    assert not [t for t in threading.enumerate() if t.name.startswith("test-idle")]
    assert pool.submit(lambda: 42).result(timeout=10) == 42  # still usable
    pool.shutdown()
    assert pool.thread_count == 0


def test_a_busy_thread_does_not_end_however_long_its_call_runs():
    pool = DaemonThreadPool(name="test-busy", idle_timeout=0.01)
    release = threading.Event()
    running = pool.submit(release.wait, 10)
    time.sleep(0.1)  # ten idle timeouts
    assert pool.thread_count == 1 and not running.done()
    release.set()
    assert running.result(timeout=10) is True
    pool.shutdown()


class _WorkQueue(queue.SimpleQueue):
    """A pool's work queue that runs ``on_timeout`` once, when a wait for work first times
    out, before the waiting thread sees the timeout."""

    on_timeout = None

    def get(self, block=True, timeout=None):
        try:
            return super().get(block, timeout)
        except queue.Empty:
            hook, self.on_timeout = self.on_timeout, None
            if hook is not None:
                hook()
            raise


def test_a_thread_whose_wait_times_out_as_a_call_is_promised_to_it_stays_to_run_it():
    pool = DaemonThreadPool(name="test-promise", idle_timeout=0.05)
    pool._work = work = _WorkQueue()
    assert pool.submit(lambda: 1).result(timeout=10) == 1  # one thread, now idle
    late = []

    def submit_from_another_thread():
        submitter = threading.Thread(target=lambda: late.append(pool.submit(lambda: 2)))
        submitter.start()
        submitter.join()

    work.on_timeout = submit_from_another_thread
    assert wait_until(lambda: late) and late[0].result(timeout=10) == 2
    pool.shutdown()


def test_no_call_is_stranded_when_threads_end_as_calls_arrive():
    # Calls arrive at intervals around the idle timeout, so that threads keep deciding to end
    # while calls are being submitted: every call must still run.
    pool = DaemonThreadPool(name="test-race", idle_timeout=0.002)
    shuffle = random.Random(7)
    futures = []
    for k in range(400):
        futures.append(pool.submit(lambda k=k: k))
        if k % 3 == 0:
            time.sleep(shuffle.uniform(0.0, 0.004))
    assert [f.result(timeout=10) for f in futures] == list(range(400))
    pool.shutdown()
    assert pool.thread_count == 0


def test_shutdown_runs_the_calls_already_submitted_then_ends_every_thread():
    pool = DaemonThreadPool(max_workers=2, name="test-shutdown")
    release = threading.Event()
    futures = [pool.submit(release.wait, 10) for _ in range(4)]
    release.set()
    pool.shutdown(wait=True)
    assert all(f.result(timeout=0) is True for f in futures)
    assert pool.thread_count == 0


def test_a_call_queued_while_every_thread_was_busy_leaves_no_promise_behind():
    # With every thread busy, a call waits in the queue for the first thread to finish. Once all
    # threads have ended idle, a new call must start a thread: no thread may be counted as
    # idle and promised it when none is left.
    pool = DaemonThreadPool(max_workers=2, name="test-full", idle_timeout=0.05)
    release = threading.Event()
    busy = [pool.submit(release.wait, 10) for _ in range(2)]
    queued = pool.submit(lambda: "queued")  # both threads busy, and no third may start
    release.set()
    assert [f.result(timeout=10) for f in busy] == [True, True]
    assert queued.result(timeout=10) == "queued"
    assert wait_until(lambda: pool.thread_count == 0)
    assert pool.submit(lambda: "after").result(timeout=10) == "after"
    pool.shutdown()

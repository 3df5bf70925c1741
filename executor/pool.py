"""Asynchronous kernels and the inter-op pool: the part of a run (`runner._Run`) that starts a
kernel which completes later (`Node.asynchronous`, ``done`` called from any thread), takes up
its outcome, and runs expensive kernels on the pool while the run's thread goes on firing.

A firing is started once and completed once, whatever thread completes it; a run that was
cancelled or failed drops the outcomes that arrive after, and a pool task that finds its run
gone does nothing.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Optional

from .errors import RunCancelledError
from .frames import IterationState
from .tables import DEAD, NodeInfo

_perf_counter = time.perf_counter


class _Completion:
    """The ``done`` callback of one firing of an asynchronous kernel (`Node.asynchronous`).

    ``done(result)`` or ``done(error=exc)``, exactly once, from any thread.  Called while the
    kernel call is still on the stack of the run's thread, it only records the outcome, which
    `_Run._start_async` takes up when the call returns; called later, it hands the outcome to
    the run (`_Run._async_completed`).  A second call is a bug of the kernel: RuntimeError.
    """

    __slots__ = (
        "run",
        "iteration",
        "info",
        "args",
        "fired_dead",
        "thread",
        "calling",
        "finished",
        "result",
        "error",
        "start",
    )

    def __init__(self, run, iteration: IterationState, info: NodeInfo, args, fired_dead):
        self.run = run
        self.iteration = iteration
        self.info = info
        self.args = args
        self.fired_dead = fired_dead
        self.thread = threading.get_ident()
        self.calling = True
        self.finished = False
        self.result = None
        self.error: Optional[BaseException] = None
        self.start = 0.0

    def __call__(self, result=None, error: Optional[BaseException] = None) -> None:
        if self.finished:
            raise RuntimeError(f"the kernel of {self.info.name!r} completed twice")
        if self.calling and self.thread == threading.get_ident():
            self.finished = True
            self.result, self.error = result, error
            return
        self.run._async_completed(self, result, error)


# Per thread: ``active`` while the thread fires another run's nodes in `_Run._async_completed`,
# or while it must fire none (`completions_only_hand_over`).
_completing = threading.local()


@contextlib.contextmanager
def completions_only_hand_over():
    """Within it, an asynchronous kernel's ``done`` called on this thread hands the outputs to
    their run and wakes the run's thread, which fires what they made ready; this thread fires
    nothing.  For a thread that must stay free to take the next message (a connection's
    reader): a kernel fired on it could block waiting for a message only it would read."""
    was_active = getattr(_completing, "active", False)
    _completing.active = True
    try:
        yield
    finally:
        _completing.active = was_active


def _outputs(info: NodeInfo, result) -> tuple:
    count = info.num_outputs
    if count == 1:
        return (result,)
    if count == 0:
        return ()
    values = tuple(result)
    if len(values) != count:
        raise ValueError(
            f"the kernel of {info.name!r} returned {len(values)} values; "
            f"the node has {count} outputs"
        )
    return values


def _any_dead(outputs) -> bool:
    """Whether a kernel returned `DEAD` for an output (compared by identity: an array's ``==``
    is elementwise)."""
    for value in outputs:
        if value is DEAD:
            return True
    return False


class AsynchronousFiring:
    """Asynchronous kernels and kernels on the inter-op pool, as a part of `runner._Run`
    (whose state these methods read and write)."""

    def _start_async(self, iteration: IterationState, info: NodeInfo, args, fired_dead) -> None:
        """Calls an asynchronous kernel (`Node.asynchronous`) with its completion callback.

        The kernel is called with the lock held (it must not wait), counted as in flight, so
        that a completion from another thread waits for the call to return and finds the run's
        bookkeeping in place.  A completion during the call (the value was there) is taken up
        here and the outputs go on inline; a later one is `_async_completed`.
        """
        done = _Completion(self, iteration, info, args, fired_dead)
        iteration.running += 1
        self.in_flight += 1
        self.pool_kernels[id(done)] = (iteration, info)
        if self.instrumented:
            done.start = _perf_counter()
        try:
            if info.wants_context:
                info.kernel(done, self.context, *args)
            else:
                info.kernel(done, *args)
        except Exception as exc:
            if not done.finished:
                done.finished = True
                done.result, done.error = None, exc
                done.calling = False
        done.calling = False
        if done.finished:
            self._async_finished(done)
            self.in_flight -= 1

    def _async_completed(self, done: _Completion, result, error) -> None:
        """An asynchronous kernel completed on another thread: hands its outputs to the run.

        When the run's lock is free (its driving thread waits for work) and this thread is not
        already firing another run's nodes for a completion, this thread fires what the outputs
        made ready itself, as a pool thread would: a value passed from one partition to another
        then costs no thread switch.  Otherwise it only passes the outputs on and wakes the
        driving thread; the one level of nesting keeps two runs that feed each other from
        recursing into each other without bound (and a thread from taking a lock it holds).

        The kernel stays counted in ``in_flight`` until this thread has done so, as a pool
        kernel does until `_run_on_pool` has drained: the inline kernels it fires run with the
        lock released, and the run must not end (nor its fetches be read) while one of them
        still runs, when the run's last other completion arrives meanwhile.
        """
        lock = self.lock
        fire_here = not getattr(_completing, "active", False) and lock.acquire(blocking=False)
        if not fire_here:
            lock.acquire()
        try:
            if done.finished:
                raise RuntimeError(f"the kernel of {done.info.name!r} completed twice")
            done.finished = True
            done.result, done.error = result, error
            try:
                self._async_finished(done)
                if fire_here and not self.stopped:
                    _completing.active = True
                    try:
                        self._drain()
                    except BaseException as exc:
                        self._fail(exc)
                    finally:
                        _completing.active = False
            finally:
                self.in_flight -= 1
            if self.stopped or self.ready_iterations or not self.in_flight:
                self.condition.notify_all()
        finally:
            lock.release()

    def _async_finished(self, done: _Completion) -> None:
        """Accounts for a completed asynchronous kernel and passes on its outputs (lock held);
        the caller takes it out of ``in_flight`` once it has done what it does with them."""
        iteration, info = done.iteration, done.info
        iteration.running -= 1
        del self.pool_kernels[id(done)]
        if self.stopped:
            return
        try:
            if done.error is not None:
                self._kernel_failed(iteration, info, done.error, done.args)
                return
            outputs = _outputs(info, done.result)
            done.result = done.args = None
            if self.instrumented:
                self._kernel_done(iteration, info, done.start, _perf_counter(), outputs)
            if done.fired_dead or _any_dead(outputs):
                self._send_dead(iteration, info)
            else:
                self._send(iteration, info, outputs)
            outputs = None
            if iteration.instance is not self.root_instance and not iteration.done:
                self._try_complete(iteration.instance)
        except Exception as exc:
            self._fail(exc)

    def _submit(self, holder: list, pool=None) -> bool:
        """Sends the kernel in ``holder`` to ``pool`` (the run's by default); False if the pool
        refuses it."""
        iteration = holder[0]
        iteration.running += 1
        self.in_flight += 1
        self.pool_kernels[id(holder)] = (iteration, holder[1])
        try:
            future = (pool or self.pool).submit(self._run_on_pool, holder)
        except RuntimeError:
            iteration.running -= 1
            self.in_flight -= 1
            del self.pool_kernels[id(holder)]
            return False
        # A future cancelled before the callback is added runs the callback at once, on this
        # thread, which holds the lock already (see _pool_task_done).
        self.submitting = (holder, threading.get_ident())
        future.add_done_callback(lambda f, holder=holder: self._pool_task_done(f, holder))
        self.submitting = None
        return True

    def _run_on_pool(self, holder: list) -> None:
        """A pool thread: run one kernel, then propagate its outputs and drain under the lock."""
        iteration, info, args = holder
        holder.clear()
        failure = None
        instrumented = self.instrumented
        # A kernel of ``inline=None`` is timed for the cost model (`costs`) wherever it runs
        # (a blocking kernel, on a waiter thread, is not: its time is mostly waiting).
        costed = info.inline is None and not info.talks
        timed = instrumented or costed
        start = _perf_counter() if timed else 0.0
        try:
            if info.wants_context:
                result = info.kernel(self.context, *args)
            else:
                result = info.kernel(*args)
            end = _perf_counter() if timed else 0.0
            outputs = _outputs(info, result)
        except BaseException as exc:
            failure = exc
        else:
            args = None
            if costed:
                self.costs.record(info, end - start)
        result = None
        with self.lock:
            try:
                iteration.running -= 1
                del self.pool_kernels[id(holder)]
                if self.stopped:
                    return
                if failure is not None:
                    self._kernel_failed(iteration, info, failure, args)
                    return
                args = None
                if instrumented:
                    self._kernel_done(iteration, info, start, end, outputs)
                if info.talks and _any_dead(outputs):
                    self._send_dead(iteration, info)
                else:
                    self._send(iteration, info, outputs)
                outputs = None
                if iteration.instance is not self.root_instance and not iteration.done:
                    self._try_complete(iteration.instance)
                self._drain()
            except BaseException as exc:
                self._fail(exc)
            finally:
                self.in_flight -= 1
                self.condition.notify_all()

    def _pool_task_done(self, future, holder: list) -> None:
        """Accounts for a pool task that was cancelled before it ran (the pool shut down)."""
        if not future.cancelled():
            return
        submitting = self.submitting
        if (
            submitting is not None
            and submitting[0] is holder
            and submitting[1] == threading.get_ident()
        ):
            self._cancelled(holder)  # called from _submit, under the lock
            return
        with self.lock:
            self._cancelled(holder)

    def _cancelled(self, holder: list) -> None:
        iteration, info = holder[0], holder[1]
        holder.clear()
        iteration.running -= 1
        self.in_flight -= 1
        self.pool_kernels.pop(id(holder), None)
        self._fail(
            RunCancelledError(
                f"the thread pool was shut down while the run was using it; the kernel of "
                f"node {info.name!r} was cancelled before it ran",
                info.index,
                iteration.instance.description,
                iteration.number,
            )
        )
        self.condition.notify_all()

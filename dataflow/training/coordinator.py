"""`Coordinator`: how the threads of a program agree to stop (``tf.train.Coordinator``).

Threads that feed queues or run training steps loop ``while not coord.should_stop()``; any of
them (or the main thread) calls ``request_stop()`` to end them all, passing the exception that
made it stop, if any.  ``join(threads)`` waits for them and then re-raises that exception in the
joining thread, so that a failure in a feeding thread is not lost.  ``OutOfRangeError`` (a queue
or a dataset running out) is a clean stop: it ends the threads without being re-raised.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Optional

from ..framework.errors import OutOfRangeError

__all__ = ["Coordinator", "LooperThread"]


class Coordinator:
    """A stop flag shared by threads, plus the first exception that asked for the stop."""

    def __init__(self, clean_stop_exception_types=None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise = None
        self._joined = False
        self._registered_threads: set = set()

    def _filter_exception(self, ex):
        """``ex`` as exc_info to re-raise later, or None for a clean stop."""
        if isinstance(ex, tuple):
            exception = ex[1]
        else:
            exception = ex
            ex = (type(ex), ex, ex.__traceback__) if ex is not None else None
        if exception is None or isinstance(exception, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex=None) -> None:
        """Asks every thread to stop.  ``ex`` (an exception or an ``exc_info`` tuple) is
        re-raised by `join`, unless it is a clean stop or another exception came first.  Raises
        ``RuntimeError`` when ``ex`` arrives after `join` returned."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined and ex is not None:
                raise RuntimeError(
                    "Coordinator.request_stop() was called with an exception after join(): "
                    f"{ex[1]!r}"
                ) from ex[1]
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    self._exc_info_to_raise = ex
                self._stop_event.set()

    def clear_stop(self) -> None:
        """Clears the stop flag and the recorded exception, so the coordinator can be reused."""
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self):
        """A block whose exception (or ``SystemExit``) requests a stop instead of escaping."""
        try:
            yield
        except BaseException:
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout: Optional[float] = None) -> bool:
        """Waits until a stop is requested or ``timeout`` seconds pass; True if stopped."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads=None, stop_grace_period_secs: float = 120, ignore_live_threads=False):
        """Waits for ``threads`` (and the registered ones) to end once a stop is requested.

        Threads still alive ``stop_grace_period_secs`` after the stop request make this raise
        ``RuntimeError`` naming them (unless ``ignore_live_threads``).  Then the exception passed
        to `request_stop`, if any, is re-raised here."""
        with self._lock:
            threads = set(threads or ()) | self._registered_threads
            self._registered_threads = set()
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.1):
            pass
        stop_wait = time.monotonic() + stop_grace_period_secs
        for thread in threads:
            thread.join(max(0.0, stop_wait - time.monotonic()))
        alive = sorted(t.name for t in threads if t.is_alive())
        with self._lock:
            self._joined = True
            exc_info = self._exc_info_to_raise
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])
        if alive and not ignore_live_threads:
            raise RuntimeError(f"Coordinator stopped with threads still running: {' '.join(alive)}")

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Re-raises the exception passed to `request_stop`, if any."""
        with self._lock:
            exc_info = self._exc_info_to_raise
        if exc_info is not None:
            raise exc_info[1].with_traceback(exc_info[2])


class LooperThread(threading.Thread):
    """A thread that calls ``target(*args)`` every ``timer_interval_secs`` (or back to back
    when None) until the coordinator stops; an exception stops the coordinator."""

    def __init__(self, coord, timer_interval_secs, target=None, args=None, kwargs=None):
        if not isinstance(coord, Coordinator):
            raise ValueError(f"'coord' argument must be a Coordinator: {coord!r}")
        super().__init__(daemon=True)
        self._coord = coord
        self._timer_interval_secs = timer_interval_secs
        self._target = target
        self._args = args or ()
        self._kwargs = kwargs or {}
        coord.register_thread(self)

    @staticmethod
    def loop(coord, timer_interval_secs, target, args=None, kwargs=None) -> LooperThread:
        """Starts and returns a LooperThread calling ``target``."""
        looper = LooperThread(coord, timer_interval_secs, target, args, kwargs)
        looper.start()
        return looper

    def run(self) -> None:
        with self._coord.stop_on_exception():
            self.start_loop()
            if self._timer_interval_secs is None:
                while not self._coord.should_stop():
                    self.run_loop()
            else:
                next_time = time.monotonic() + self._timer_interval_secs
                while not self._coord.wait_for_stop(max(0.0, next_time - time.monotonic())):
                    next_time += self._timer_interval_secs
                    self.run_loop()
            self.stop_loop()

    def start_loop(self) -> None:
        """Called once when the thread starts (override to prepare)."""

    def stop_loop(self) -> None:
        """Called once when the thread stops (override to clean up)."""

    def run_loop(self) -> None:
        if self._target is not None:
            self._target(*self._args, **self._kwargs)

"""Daemon thread pools: the inter-op pool a front end hands to `Plan.run`, and the threads that
drive runs with a deadline (`runner`).

A ``concurrent.futures.ThreadPoolExecutor`` joins its threads when the interpreter exits, so a
thread blocked for good in a kernel of a run stopped at its deadline would keep the process
from exiting.  `DaemonThreadPool` offers the part of its interface the executor uses (``submit``
returning a `Future`, ``shutdown``) on daemon threads instead.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Optional

# How long a pool thread waits for work before it ends (a pool keeps no idle thread longer).
IDLE_TIMEOUT_SECONDS = 1.0


class DaemonThreadPool:
    """Runs submitted calls on daemon threads.

    A thread starts when a call finds none idle, up to ``max_workers`` (no limit when None); a
    thread that has waited ``idle_timeout`` seconds for work ends, so a pool that is not used
    holds no thread.  ``shutdown`` lets the calls already submitted run, then the threads end.
    A forked child has none of its parent's threads: the pool starts its own there.

    Invariant (``_lock`` guards ``_waiting``, ``_queued``, ``_threads`` and the decisions
    below): ``_queued`` counts the calls in the queue that no thread has taken yet, and
    ``_waiting`` the threads waiting for one.  ``submit`` starts a thread when the calls queued
    outnumber the threads waiting (and the pool may have another).  A thread whose wait times
    out ends only if no call is queued; otherwise a call arrived as it gave up, and it waits
    again to take it.  So a queued call always has a thread that will take it: a waiting one,
    a new one, or, when the pool is full, one of its busy threads once its call returns.
    """

    def __init__(
        self,
        max_workers: Optional[int] = None,
        name: str = "dataflow-pool",
        idle_timeout: float = IDLE_TIMEOUT_SECONDS,
    ):
        self._max_workers = max_workers
        self._name = name
        self._idle_timeout = idle_timeout
        self._shut_down = False
        self._forget_threads()

    def _forget_threads(self) -> None:
        """Starts with no thread (and, in a forked child, with a lock no parent thread holds
        and without the parent's queued work, which belongs to the parent's runs)."""
        self._pid = os.getpid()
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._waiting = 0
        self._queued = 0
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._started = itertools.count()

    @property
    def thread_count(self) -> int:
        """The threads the pool has now, busy or idle."""
        return len(self._threads) if self._pid == os.getpid() else 0

    def submit(self, function: Callable, *args) -> Future:
        if self._pid != os.getpid():
            self._forget_threads()
        future: Future = Future()
        with self._lock:
            if self._shut_down:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._work.put((future, function, args))
            self._queued += 1
            if self._queued > self._waiting and (
                self._max_workers is None or len(self._threads) < self._max_workers
            ):
                thread = threading.Thread(
                    target=self._serve, name=f"{self._name}_{next(self._started)}", daemon=True
                )
                self._threads.add(thread)
                thread.start()
        return future

    def shutdown(self, wait: bool = True) -> None:
        if self._pid != os.getpid():
            self._forget_threads()
        with self._lock:
            if not self._shut_down:
                self._shut_down = True
                self._work.put(None)  # each thread passes it on to the next, and ends
            threads = list(self._threads)
        if wait:
            for thread in threads:
                thread.join()

    def _serve(self) -> None:
        work = self._work
        while True:
            with self._lock:
                self._waiting += 1
            try:
                item = work.get(timeout=self._idle_timeout)
            except queue.Empty:
                with self._lock:
                    self._waiting -= 1
                    if not self._queued:
                        self._threads.discard(threading.current_thread())
                        return
                continue  # a call arrived as the wait timed out: take it
            with self._lock:
                self._waiting -= 1
                if item is not None:
                    self._queued -= 1
            if item is None:
                work.put(None)
                with self._lock:
                    self._threads.discard(threading.current_thread())
                return
            future, function, args = item
            item = None
            if future.set_running_or_notify_cancel():
                try:
                    result = function(*args)
                except BaseException as exc:
                    future.set_exception(exc)
                    exc = None
                else:
                    future.set_result(result)
                    result = None
            future = function = args = None

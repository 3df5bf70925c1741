"""The rendezvous: where the ``_Send`` and ``_Recv`` of one step meet, keyed by strings.

A key names one value of one step: source device, destination device, tensor, frame instance
and iteration (`make_key`; the transport never looks inside).  The interface (`Rendezvous`)
is what a ``_Send``/``_Recv`` kernel uses, so that another transport (Ray actors) can stand in:

- ``send(key, value, is_dead)`` stores the value (or the dead mark) and wakes its receiver;
- ``recv(key, deadline=None) -> (value, is_dead)`` waits until the key was sent, the step's
  deadline passed (`errors.DeadlineExceededError`) or the rendezvous was aborted (the abort's
  error);
- ``abort(error)`` wakes every waiter, now and later, with ``error``;
- ``aborted_with``: the error of the abort, or None (a kernel that waits on something else, a
  queue or an accumulator, looks at it to stop with its step: `RunContext.check_not_stopped`).

A rendezvous may also offer ``recv_async(key, done)``, which never waits: it calls
``done((value, is_dead))`` or ``done(error=exc)`` once, at once when the key was sent already,
else from the thread that sends it (or aborts the step).  The ``_Recv`` kernel uses it when it is
there, so that a value already sent costs no thread and a value still to come costs no waiting
thread (TF's ``RecvAsync``); `receive_async` gives any rendezvous that form.

`LocalRendezvous` is the in-process table with waiters: one condition variable for ``recv``,
callbacks for ``recv_async``, values taken out when received (so a value is held only between
its Send and its Recv).  Each key is sent once and received once per step; a second send of a
key is a programming error.
`StepMailbox` is the same table for one task of a Ray cluster (`dataflow.distribute.ray_cluster`
keeps one per task and step, and carries sends between tasks as Ray calls); `parse_key` splits a
key when a transport must route it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple, Optional

import executor

from ..framework import errors


def make_key(
    send_device: str,
    incarnation: int,
    recv_device: str,
    tensor_name: str,
    frame: str,
    iteration: int,
) -> str:
    """TF's rendezvous key: ``src;incarnation;dst;tensor;frame:iteration`` (the incarnation in
    hex), naming one value of a step."""
    return f"{send_device};{incarnation:x};{recv_device};{tensor_name};{frame}:{iteration}"


class RendezvousKey(NamedTuple):
    """The parts of a rendezvous key (`parse_key`)."""

    source_device: str
    source_incarnation: int
    destination_device: str
    tensor_name: str
    frame: str
    iteration: int


def parse_key(key: str) -> RendezvousKey:
    """The parts of ``key``; ``ValueError`` naming it when it is not of `make_key`'s form."""
    parts = key.split(";")
    if len(parts) != 5 or ":" not in parts[4]:
        raise ValueError(
            f"Invalid rendezvous key {key!r}: expected "
            "'<src device>;<incarnation>;<dst device>;<tensor>;<frame>:<iteration>'"
        )
    frame, _, iteration = parts[4].rpartition(":")
    try:
        return RendezvousKey(parts[0], int(parts[1], 16), parts[2], parts[3], frame, int(iteration))
    except ValueError:
        raise ValueError(f"Invalid rendezvous key {key!r}: bad incarnation or iteration") from None


class RendezvousAborted(Exception):
    """Raised by ``recv`` after ``abort``: carries the error that stopped the step, so that a
    partition woken by another one's failure reports that failure, not its own wait."""

    def __init__(self, error: BaseException):
        super().__init__(f"the step was aborted: {error}")
        self.error = error


class Rendezvous:
    """The interface a ``_Send``/``_Recv`` kernel talks to (see the module docstring)."""

    def send(self, key: str, value: Any, is_dead: bool) -> None:
        raise NotImplementedError

    def recv(self, key: str, deadline: Optional[float] = None) -> tuple[Any, bool]:
        raise NotImplementedError

    def abort(self, error: BaseException) -> None:
        raise NotImplementedError

    @property
    def aborted_with(self) -> Optional[BaseException]:
        raise NotImplementedError


class LocalRendezvous(Rendezvous):
    """The in-process rendezvous of one step.

    Invariant (guarded by ``_condition``): ``_table`` holds exactly the values sent and not yet
    received, ``_callbacks`` the ``recv_async`` callbacks of keys not yet sent (a key is never
    in both); once ``_aborted`` is set it never changes, both are empty, and every receive
    fails with it.  Callbacks are called with no lock held, so that they may do anything.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())
        self._table: dict[str, tuple[Any, bool]] = {}
        self._callbacks: dict[str, Callable] = {}
        self._blocked: dict[str, int] = {}  # key -> how many blocking ``recv`` wait for it
        self._aborted: Optional[BaseException] = None

    def send(self, key: str, value: Any, is_dead: bool) -> None:
        entry = (None if is_dead else value, is_dead)
        with self._condition:
            if self._aborted is not None:
                return  # the step is over; nobody will receive it
            callback = self._callbacks.pop(key, None)
            if callback is None:
                if key in self._table:
                    raise RuntimeError(f"the rendezvous key {key!r} was sent twice in one step")
                self._table[key] = entry
                self._condition.notify_all()
                return
        callback(entry)

    def recv_async(self, key: str, done: Callable) -> None:
        """Calls ``done((value, is_dead))`` once ``key`` is sent, or ``done(error=...)`` when
        the step is aborted (a `RendezvousAborted`); never waits."""
        with self._condition:
            aborted = self._aborted
            if aborted is None:
                entry = self._table.pop(key, None)
                if entry is None:
                    if key in self._callbacks:
                        raise RuntimeError(f"the rendezvous key {key!r} was received twice")
                    self._callbacks[key] = done
                    return
        if aborted is not None:
            done(error=self._aborted_error(aborted))
        else:
            done(entry)

    def _aborted_error(self, aborted: BaseException) -> BaseException:
        """What a receive fails with once the step was aborted with ``aborted``."""
        return RendezvousAborted(aborted)

    def recv(self, key: str, deadline: Optional[float] = None) -> tuple[Any, bool]:
        with self._condition:
            self._blocked[key] = self._blocked.get(key, 0) + 1
            try:
                while True:
                    if self._aborted is not None:
                        raise RendezvousAborted(self._aborted)
                    found = self._table.pop(key, None)
                    if found is not None:
                        return found
                    if deadline is None:
                        self._condition.wait()
                        continue
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise errors.DeadlineExceededError(
                            None, None, f"Timed out waiting for the value of rendezvous key {key!r}"
                        )
                    self._condition.wait(remaining)
            finally:
                waiters = self._blocked.pop(key) - 1
                if waiters:
                    self._blocked[key] = waiters

    def abort(self, error: BaseException) -> None:
        with self._condition:
            if self._aborted is None:
                self._aborted = error
                self._table.clear()
            callbacks = list(self._callbacks.values())
            self._callbacks.clear()
            self._condition.notify_all()
        for callback in callbacks:
            callback(error=self._aborted_error(self._aborted))

    @property
    def waiting_keys(self) -> list[str]:
        """The keys a ``recv`` or ``recv_async`` waits for (for tests and error messages)."""
        with self._condition:
            return sorted(self._callbacks.keys() | self._blocked.keys())

    @property
    def aborted_with(self) -> Optional[BaseException]:
        """The error of the first ``abort``, or None."""
        return self._aborted

    @property
    def pending_keys(self) -> list[str]:
        """The keys sent and not yet received (for tests and error messages)."""
        with self._condition:
            return sorted(self._table)


class StepMailbox(LocalRendezvous):
    """The values sent to one task of a cluster during one step: a `LocalRendezvous` that knows
    its step and a deadline bounding every ``recv``, and raises the abort's own error (the task
    reports it as the step's failure)."""

    def __init__(self, step_id: str, deadline: Optional[float] = None):
        super().__init__()
        self.step_id = step_id
        self.deadline = deadline

    def recv(self, key: str, deadline: Optional[float] = None) -> tuple[Any, bool]:
        deadlines = [d for d in (deadline, self.deadline) if d is not None]
        try:
            return super().recv(key, min(deadlines, default=None))
        except RendezvousAborted as aborted:
            raise aborted.error from None

    def _aborted_error(self, aborted: BaseException) -> BaseException:
        return aborted

    @property
    def aborted(self) -> Optional[BaseException]:
        return self._aborted


# The threads `receive_async` waits on for a rendezvous that has no ``recv_async``: one per
# receive waiting, never capped, as the executor's waiters.
_receivers = executor.DaemonThreadPool(name="dataflow-recv")


def receive_async(rendezvous, key: str, deadline: Optional[float], done: Callable) -> None:
    """``rendezvous.recv_async(key, done)``, or, for a rendezvous with only the blocking
    ``recv``, that ``recv`` (bounded by ``deadline``) on a thread of `_receivers` that then
    calls ``done`` as ``recv_async`` would."""
    recv_async = getattr(rendezvous, "recv_async", None)
    if recv_async is not None:
        recv_async(key, done)
        return

    def wait() -> None:
        try:
            entry = rendezvous.recv(key, deadline)
        except Exception as error:  # noqa: BLE001 - handed to the receiver
            done(error=error)
        else:
            done(entry)

    _receivers.submit(wait)

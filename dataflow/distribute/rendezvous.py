"""Rendezvous: where a step's `_Send` leaves a tensor and its `_Recv` picks it up.

A rendezvous serves one step.  Its interface is three calls:

- ``send(key, value, is_dead)``: hands over the value of one tensor (``is_dead``: the value is
  dead, ``value`` is then ignored; a Recv of it fires dead).  Never blocks.
- ``recv(key) -> (value, is_dead)``: blocks until the value for ``key`` was sent, the step was
  aborted (raises the abort's error) or its deadline passed (``DeadlineExceededError``).
- ``abort(error)``: fails every waiting and later ``recv`` of the step with ``error``.

A key names the source device, the destination device, the tensor, and the frame and iteration
it belongs to, as TensorFlow's do: ``"<src device>;<src incarnation>;<dst device>;<tensor
name>;<frame>:<iteration>"`` (`make_key`, `parse_key`).  Each key is sent at most once per step.

`StepMailbox` is the in-process table of one step (a dict with waiters); the Ray rendezvous of a
cluster (`dataflow.distribute.ray_cluster`) keeps one per task and step for the values sent to
that task, and carries sends between tasks as Ray calls.
"""

from __future__ import annotations

import threading
import time
from typing import Any, NamedTuple, Optional

from .. import errors


class RendezvousKey(NamedTuple):
    """The parts of a rendezvous key (`parse_key`)."""

    source_device: str
    source_incarnation: int
    destination_device: str
    tensor_name: str
    frame: str
    iteration: int


def make_key(
    send_device: str,
    incarnation: int,
    recv_device: str,
    tensor_name: str,
    frame: str,
    iteration: int,
) -> str:
    """TF's rendezvous key: ``src;incarnation;dst;tensor;frame:iteration`` (the incarnation in
    hex), naming one value of a step (the root frame is ``""``, iteration 0)."""
    return f"{send_device};{incarnation:x};{recv_device};{tensor_name};{frame}:{iteration}"


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


class StepMailbox:
    """The values sent to one place (a process, a task) during one step, with their waiters.

    Invariants: a key holds at most one value; once ``aborted`` is set, no ``recv`` returns a
    value any more (a value sent before the abort included); ``deadline`` (a
    ``time.monotonic()`` value or None) bounds every ``recv``.
    """

    def __init__(self, step_id: str, deadline: Optional[float] = None):
        self.step_id = step_id
        self.deadline = deadline
        self._values: dict[str, tuple[Any, bool]] = {}
        self._aborted: Optional[BaseException] = None
        self._changed = threading.Condition()

    def send(self, key: str, value, is_dead: bool) -> None:
        with self._changed:
            if self._aborted is not None:
                return  # the step failed: whatever still arrives is dropped
            if key in self._values:
                raise errors.InternalError(
                    None, None, f"Rendezvous key {key!r} was sent twice in step {self.step_id}"
                )
            self._values[key] = (None if is_dead else value, bool(is_dead))
            self._changed.notify_all()

    def recv(self, key: str) -> tuple[Any, bool]:
        """The value sent for ``key`` and whether it is dead, once it is there; the value is
        taken out of the mailbox, so it is released after its one consumer has it."""
        with self._changed:
            while True:
                if self._aborted is not None:
                    raise self._aborted
                found = self._values.pop(key, None)
                if found is not None:
                    return found
                timeout = None
                if self.deadline is not None:
                    timeout = self.deadline - time.monotonic()
                    if timeout <= 0:
                        raise errors.DeadlineExceededError(
                            None,
                            None,
                            f"Timed out in step {self.step_id} waiting for the value of "
                            f"rendezvous key {key!r}",
                        )
                self._changed.wait(timeout)

    def abort(self, error: BaseException) -> None:
        """Fails the waiting and later ``recv`` calls with ``error``; the first abort wins."""
        with self._changed:
            if self._aborted is None:
                self._aborted = error
                self._values.clear()
            self._changed.notify_all()

    @property
    def aborted(self) -> Optional[BaseException]:
        return self._aborted

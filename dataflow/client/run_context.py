"""What one run carries to the kernels that ask for it: its deadline and cancellation, its random
draws, its step id and rendezvous, its resources and the variables it reads and writes."""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from ..framework import errors
from ..ops.variables import VariableRef, _uninitialized


class RunContext:
    """What kernels may see of the run they belong to: the variables, read and written, and the
    random streams (`random_generator`).  The partitions of one step share one context, so
    their variable writes commit together or not at all.

    Writes go to ``pending_writes`` and are committed by the Session only when the run succeeds.
    A variable that the run changed only by adding to (or subtracting from) the value it read
    from the Session has that value in ``update_bases``: if another run committed a new value
    meanwhile, the commit applies this run's change to it instead of overwriting it (see
    `_rebase_updates`), so concurrent ``assign_add``s lose nothing, as TensorFlow's atomic
    updates.
    """

    __slots__ = (
        "session",
        "pending_writes",
        "update_bases",
        "deadline",
        "random_draws",
        "rendezvous",
        "cancellation",
        "at_end",
        "finished",
    )

    def __init__(self, session, deadline: Optional[float] = None, rendezvous=None):
        self.session = session
        # Where the _Send/_Recv of a partitioned step meet (`dataflow.distribute`); else None.
        self.rendezvous = rendezvous
        self.pending_writes: dict[str, Any] = {}
        self.update_bases: Optional[dict[str, Any]] = None
        self.deadline = deadline  # time.monotonic() value, or None
        self.random_draws: dict[tuple, Any] = {}
        self.cancellation = session._cancellation  # the runs stop when the Session closes
        # What kernels leave to the end of the run (a critical section's lock is released
        # after the run's writes are committed, or when it fails): see `defer`.
        self.at_end: list = []
        self.finished = False

    def defer(self, action) -> None:
        """Runs ``action()`` when the run ends; at once if it has ended already (a kernel of a
        run that failed or timed out may still be finishing on its thread)."""
        self.at_end.append(action)
        if self.finished:
            self.finish()

    def finish(self) -> None:
        """Runs what kernels left to the end of the run, each once."""
        self.finished = True
        while True:
            try:
                action = self.at_end.pop()
            except IndexError:
                return
            action()

    def resource(self, key: str, make):
        """The Session's resource ``key`` (a queue, an iterator), made by ``make()`` the first
        time any run asks for it.  Resources live until the Session closes, are not
        transactional (a queue's enqueue is seen at once by other runs, as in TensorFlow), and
        are told of the close through their ``cancel()`` method."""
        session = self.session
        with session._lock:
            if session._closed:
                raise _closed_during_run()
            found = session._resources.get(key)
            if found is None:
                found = session._resources[key] = make()
            return found

    def check_not_stopped(self, what: str) -> None:
        """Raises when a kernel waiting for ``what`` must give up: the Session was closed
        (``CancelledError``), the step was aborted (the error its rendezvous was aborted with:
        a partition of the step elsewhere failed, or the master stopped the step), or the
        run's deadline passed (``DeadlineExceededError``)."""
        if self.session._closed:
            raise _closed_during_run()
        rendezvous = self.rendezvous
        if rendezvous is not None and rendezvous.aborted_with is not None:
            raise rendezvous.aborted_with  # another partition of the step failed or stopped
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise errors.DeadlineExceededError(None, None, f"Timed out waiting for {what}")

    def random_generator(self, name: str, seed: int, seed2: int) -> np.random.Generator:
        """The generator the random op ``name`` draws from in this run
        (`dataflow.client.random_streams`)."""
        return self.session._random_streams.generator_for_run(self.random_draws, name, seed, seed2)

    def read_variable(self, ref: VariableRef):
        try:
            return self.pending_writes[ref.key]
        except KeyError:
            pass
        session = self.session
        try:
            return session._variable_values[ref.key]
        except KeyError:
            if session._closed:
                raise _closed_during_run() from None
            raise _uninitialized(ref) from None

    def write_variable(self, ref: VariableRef, value) -> None:
        self.pending_writes[ref.key] = value
        if self.update_bases:
            self.update_bases.pop(ref.key, None)  # an assigned value replaces whatever was there

    def update_variable(self, ref: VariableRef, base, value) -> None:
        """Writes ``value``, computed from ``base`` (the variable's value as ``read_variable``
        gave it) by an update such as AssignAdd."""
        key = ref.key
        pending = self.pending_writes
        if key not in pending:
            bases = self.update_bases
            if bases is None:
                bases = self.update_bases = {}
            bases[key] = base
        pending[key] = value


_CLOSED_DURING_RUN = (
    "The Session was closed while the run was in progress; the run was stopped and changed no "
    "variable."
)


def _closed_during_run() -> errors.CancelledError:
    return errors.CancelledError(None, None, _CLOSED_DURING_RUN)

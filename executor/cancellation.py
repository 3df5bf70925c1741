"""Stopping runs from another thread: a `Cancellation` that a run's context carries."""

from __future__ import annotations

from collections.abc import Callable

from .errors import RunCancelledError


class Cancellation:
    """Cancels, from any thread, the runs whose context carries it (``context.cancellation``).

    `cancel` sets ``cancelled`` and tells each run in progress to stop: no node fires after
    that, and the run raises `RunCancelledError` with the reason given.  A run that starts
    after `cancel` stops at once.  A kernel cannot be interrupted: one that runs long (a
    compiled loop) reads ``cancelled`` itself and raises `error`.  A run registers when it
    starts and deregisters when it ends, so one Cancellation may serve many runs (a Session's
    runs and the functions their ops call).

    It takes no lock, so that a run pays little for it: a run registers before it reads
    ``cancelled``, and `cancel` sets ``cancelled`` before it reads the runs registered (each
    a single dict or attribute operation under the GIL), so every run is told at least once;
    telling a run twice does no harm.
    """

    __slots__ = ("cancelled", "reason", "_stops")

    def __init__(self) -> None:
        self.cancelled = False
        self.reason = ""
        self._stops: dict[int, Callable[[], None]] = {}

    def cancel(self, reason: str) -> None:
        """Stops every run registered now or later; ``reason`` is their errors' message."""
        if self.cancelled:
            return
        self.reason = reason
        self.cancelled = True
        for stop in list(self._stops.values()):
            stop()

    def register(self, stop: Callable[[], None]) -> int:
        """Has ``stop`` called on `cancel` (at once when cancelled already); returns the key
        that `deregister` takes."""
        key = id(stop)  # unique while ``stop`` is held here
        self._stops[key] = stop
        if self.cancelled:
            stop()
        return key

    def deregister(self, key: int) -> None:
        self._stops.pop(key, None)

    def error(self) -> RunCancelledError:
        """The error a kernel raises when it notices the cancellation itself."""
        return RunCancelledError(self.reason, None, None, None)

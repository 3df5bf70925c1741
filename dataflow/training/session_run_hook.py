"""How hooks take part in the runs of a `MonitoredSession` (`tf.train.SessionRunHook`): the
hook's protocol (`begin`, `after_create_session`, `before_run`, `after_run`, `end`) and
what passes between a hook and the session (`SessionRunArgs`, `SessionRunContext`,
`SessionRunValues`).  Hooks and monitored sessions both import it; it imports neither."""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

from ..client.session import RunMetadata, RunOptions, Session
from .coordinator import Coordinator


# -- hooks' protocol -------------------------------------------------------------------------------
class SessionRunArgs(NamedTuple):
    """What a hook's ``before_run`` adds to a run: ``fetches`` (any structure `Session.run`
    takes; the hook gets their values back in ``after_run``), ``feed_dict`` and ``options``."""

    fetches: Any
    feed_dict: Optional[dict] = None
    options: Optional[RunOptions] = None


class SessionRunValues(NamedTuple):
    """What a hook's ``after_run`` gets: the values of its own fetches (``results``, None if it
    asked for none), and the run's merged ``options`` and ``run_metadata``."""

    results: Any
    options: RunOptions
    run_metadata: RunMetadata


class SessionRunContext:
    """One run as the hooks see it: the caller's ``original_args`` (a `SessionRunArgs`), the
    raw ``session`` (hooks may run other fetches in it), and the stop flag a hook sets with
    `request_stop`."""

    def __init__(self, original_args: SessionRunArgs, session: Session):
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self) -> SessionRunArgs:
        return self._original_args

    @property
    def session(self) -> Session:
        return self._session

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        """Makes the monitored session's `should_stop` true once this run's hooks are done."""
        self._stop_requested = True


class SessionRunHook:
    """Code that runs around the steps of a `MonitoredSession`; subclasses override any of the
    five methods, called in this order:

    ``begin()`` once, before the graph is finalized (the last chance to add ops);
    ``after_create_session(session, coord)`` once the session is initialized or restored;
    ``before_run(run_context)`` -> a `SessionRunArgs` or None, and
    ``after_run(run_context, run_values)`` around every `MonitoredSession.run`;
    ``end(session)`` when the monitored session closes normally (not after an exception).
    """

    def begin(self) -> None:
        pass

    def after_create_session(self, session: Session, coord: Coordinator) -> None:
        pass

    def before_run(self, run_context: SessionRunContext) -> Optional[SessionRunArgs]:
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        pass

    def end(self, session: Session) -> None:
        pass

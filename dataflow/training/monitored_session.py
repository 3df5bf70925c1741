"""Monitored sessions: a Session wrapped with hooks, recovery from checkpoints and queue-runner
threads, the way TF1 training loops run (``tf.compat.v1.train.MonitoredSession``).

The pieces, as TensorFlow names them:

- `Scaffold` gathers the ops a session is prepared with (``init_op``, ``ready_op``,
  ``local_init_op``, ``summary_op``) and the ``saver``; `Scaffold.finalize` builds the missing
  ones from the graph's collections and then finalizes the graph, so that no hook or step adds
  ops once training runs.
- `SessionManager.prepare_session` makes a `Session` and either restores the newest checkpoint
  of ``checkpoint_dir`` or runs ``init_op``; then ``local_init_op``; then checks ``ready_op``
  (the names of the variables still uninitialized: empty means ready).
- `ChiefSessionCreator` does that with a scaffold (`WorkerSessionCreator` waits for a chief's
  initialization instead, which here means the same session's).
- `MonitoredSession` calls every hook's ``begin``, creates the session, starts the queue
  runners with a `Coordinator`, calls ``after_create_session``; each `run` asks every hook's
  ``before_run`` for more fetches, feeds and options, runs them with the caller's in one
  ``Session.run``, and hands each hook its own results in ``after_run``.  A hook that calls
  ``run_context.request_stop()`` makes `should_stop` true.  Closing (or leaving the ``with``
  block normally, or with ``OutOfRangeError``, which is how input runs out) calls each hook's
  ``end``, stops and joins the queue-runner threads and closes the session; any other exception
  closes without ``end`` and propagates.  A graph the monitored session finalized is
  unfinalized again when it closes.

A lost worker or parameter server (``AbortedError`` or ``UnavailableError`` from a run, as a
Session on a `dataflow.distribute.RayCluster` raises when a task dies or stops answering) is
recovered from as in TensorFlow: `MonitoredSession` closes the session (without the hooks'
``end``), creates a new one with its session creator (which restores the newest checkpoint,
or initializes), calls the hooks' ``after_create_session`` again and runs the step again;
creating the session is retried the same way (after a pause, growing to 10 s).  As in
TensorFlow this goes on for as long as the error comes back, and `SingularMonitoredSession`
does not recover: the error is raised.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any, Optional

import numpy as np

from ..client.session import RunMetadata, RunOptions, Session
from ..framework import errors
from ..framework import logging as _logging
from ..framework.graph import get_default_graph
from ..framework.graph_keys import GraphKeys
from ..io.saver import Saver, get_checkpoint_state
from ..ops.variables import (
    global_variables,
    global_variables_initializer,
    local_variables,
    local_variables_initializer,
)
from .coordinator import Coordinator
from .session_run_hook import (  # noqa: F401 - offered here too
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

__all__ = [
    "ChiefSessionCreator",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "Scaffold",
    "SessionCreator",
    "SessionManager",
    "SessionRunArgs",
    "SessionRunContext",
    "SessionRunHook",
    "SessionRunValues",
    "SingularMonitoredSession",
    "WorkerSessionCreator",
    "report_uninitialized_variables",
]

USE_DEFAULT = object()

# The errors of a lost worker or parameter server, which a recoverable session recovers from.
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)
# The pause before creating a session again after a preemption error, doubling from the first
# to the last: a lost task fails a call here at once, where TensorFlow's calls wait for their
# RPC timeouts, so retrying without one would spin while the task is gone.
_FIRST_RETRY_PAUSE_SECONDS = 0.1
_LAST_RETRY_PAUSE_SECONDS = 10.0


# -- readiness -------------------------------------------------------------------------------------
def report_uninitialized_variables(var_list=None, name: str = "report_uninitialized_variables"):
    """A 1-D string tensor: the names of the variables of ``var_list`` (default: the global and
    local variables) that hold no value yet in the running session.  Empty means ready."""
    from ..ops.array_ops import stack
    from ..ops.constant_op import constant
    from ..ops.extra_array_ops import boolean_mask
    from ..ops.math_ops import logical_not
    from ..ops.ref_variables import is_variable_initialized

    if var_list is None:
        var_list = global_variables() + local_variables()
    graph = get_default_graph()
    with graph.name_scope(name):
        if not var_list:
            return constant([], dtype="string")
        initialized = stack([is_variable_initialized(v) for v in var_list])
        names = constant([v.op.name for v in var_list])
        return boolean_mask(names, logical_not(initialized))


def _ready(op, sess: Session, what: str) -> tuple[bool, Optional[str]]:
    """(True, None) when ``op`` (a `report_uninitialized_variables`) reports nothing, else
    (False, a message naming the variables)."""
    if op is None:
        return True, None
    value = sess.run(op)
    if value is None or np.asarray(value).size == 0 or np.asarray(value).dtype == np.int32:
        return True, None
    names = ", ".join(n.decode("utf-8") if isinstance(n, bytes) else str(n) for n in value)
    return False, "Variables not initialized: " + names


# -- the scaffold ----------------------------------------------------------------------------------
class Scaffold:
    """The ops and saver a monitored session is prepared with (``tf.train.Scaffold``).

    Arguments left None are filled by `finalize`, each from its graph collection when that
    holds exactly one item (``init_op``, ``ready_op``, ``local_init_op``, ``summary_op``,
    ``savers``), else with TensorFlow's default, which is then added to the collection: a
    group of ``global_variables_initializer()``; `report_uninitialized_variables` of all
    variables (``ready_op``) and of the global ones (``ready_for_local_init_op``); a group of
    ``local_variables_initializer()``; ``df.summary.merge_all()``; a `Saver` of the global
    variables (None when there are none).  ``init_fn(scaffold, session)`` runs after
    ``init_op``, only when no checkpoint was restored.
    """

    def __init__(
        self,
        init_op=None,
        init_feed_dict=None,
        init_fn: Optional[Callable] = None,
        ready_op=None,
        ready_for_local_init_op=None,
        local_init_op=None,
        summary_op=None,
        saver=None,
        copy_from_scaffold: Optional[Scaffold] = None,
        local_init_feed_dict=None,
    ):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            pick = lambda mine, theirs: theirs if mine is None else mine  # noqa: E731
            init_op = pick(init_op, copy_from_scaffold.init_op)
            init_feed_dict = pick(init_feed_dict, copy_from_scaffold._init_feed_dict)
            init_fn = pick(init_fn, copy_from_scaffold._user_init_fn)
            ready_op = pick(ready_op, copy_from_scaffold.ready_op)
            ready_for_local_init_op = pick(
                ready_for_local_init_op, copy_from_scaffold.ready_for_local_init_op
            )
            local_init_op = pick(local_init_op, copy_from_scaffold.local_init_op)
            local_init_feed_dict = pick(
                local_init_feed_dict, copy_from_scaffold._local_init_feed_dict
            )
            summary_op = pick(summary_op, copy_from_scaffold.summary_op)
            saver = pick(saver, copy_from_scaffold.saver)
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> Scaffold:
        """Fills in every op left None (see the class docstring) and finalizes the graph."""
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op", GraphKeys.INIT_OP, lambda: _group(global_variables_initializer())
            )
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP, report_uninitialized_variables
            )
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op",
                GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(global_variables()),
            )
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op
            )
        if self._summary_op is None:
            from ..io.summary import merge_all

            self._summary_op = Scaffold.get_or_default(
                "summary_op", GraphKeys.SUMMARY_OP, merge_all
            )
        if self._saver is None:
            self._saver = _get_saver_or_default()
        get_default_graph().finalize()
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str, default_constructor: Callable):
        """The one item of the default graph's ``collection_key``, or ``default_constructor()``
        (added to the collection unless None); ``RuntimeError`` when the collection holds
        several."""
        graph = get_default_graph()
        found = graph.get_collection(collection_key)
        if len(found) > 1:
            raise RuntimeError(
                f"More than one item in collection {collection_key}. Please indicate which one "
                f"to use by passing it to the df.train.Scaffold constructor as {arg_name}."
            )
        if found:
            return found[0]
        made = default_constructor()
        if made is not None:
            graph.add_to_collection(collection_key, made)
        return made

    @staticmethod
    def default_local_init_op():
        """The group of ``local_variables_initializer()`` (TensorFlow adds its tables')."""
        return _group(local_variables_initializer())


def _group(*ops):
    from ..ops.misc_ops import group

    return group(*ops)


def _get_saver_or_default() -> Optional[Saver]:
    """The one `Saver` of the ``savers`` collection, or a new one of the global variables
    (added there); None when the graph has no variable to save."""
    graph = get_default_graph()
    savers = graph.get_collection(GraphKeys.SAVERS)
    if len(savers) > 1:
        raise RuntimeError(
            f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one "
            "to use by passing it to the df.train.Scaffold constructor as saver."
        )
    if savers:
        return savers[0]
    if not graph.get_collection(GraphKeys.GLOBAL_VARIABLES):
        return None
    saver = Saver()
    graph.add_to_collection(GraphKeys.SAVERS, saver)
    return saver


# -- preparing a session ---------------------------------------------------------------------------
class SessionManager:
    """Makes sessions that are restored from a checkpoint or initialized, and checked ready
    (``tf.train.SessionManager``).

    ``ready_op`` reports the variables still uninitialized (None: don't check);
    ``local_init_op`` runs in every new session once ``ready_for_local_init_op`` reports
    nothing.  ``recovery_wait_secs`` is how long to sleep between checks while waiting for a
    checkpoint or for readiness.
    """

    def __init__(
        self,
        local_init_op=None,
        ready_op=None,
        ready_for_local_init_op=None,
        graph=None,
        recovery_wait_secs: float = 30,
        local_init_run_options=None,
        local_init_feed_dict=None,
    ):
        self._local_init_op = local_init_op
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph if graph is not None else get_default_graph()
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._local_init_feed_dict = local_init_feed_dict
        if ready_op is None and ready_for_local_init_op is not None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a ready_op")

    def _restore_checkpoint(
        self,
        master: str,
        saver=None,
        checkpoint_dir=None,
        checkpoint_filename_with_path=None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config=None,
    ) -> tuple[Session, bool]:
        """A new session and whether a checkpoint was restored into it."""
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError(
                "Can not provide both checkpoint_dir and checkpoint_filename_with_path."
            )
        sess = Session(master, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        try:
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                return sess, True
            waited = 0.0
            state = get_checkpoint_state(checkpoint_dir)
            while not state or not state.model_checkpoint_path:
                if not wait_for_checkpoint or waited >= max_wait_secs:
                    return sess, False
                _logging.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                state = get_checkpoint_state(checkpoint_dir)
            saver.restore(sess, state.model_checkpoint_path)
            saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        except BaseException:
            sess.close()
            raise
        return sess, True

    def prepare_session(
        self,
        master: str,
        init_op=None,
        saver=None,
        checkpoint_dir=None,
        checkpoint_filename_with_path=None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config=None,
        init_feed_dict=None,
        init_fn: Optional[Callable] = None,
    ) -> Session:
        """A session restored from the newest checkpoint of ``checkpoint_dir`` (or from
        ``checkpoint_filename_with_path``) when there is one, else initialized with ``init_op``
        and ``init_fn(sess)``; then ``local_init_op``.  ``RuntimeError`` when ``ready_op`` still
        reports uninitialized variables, or when nothing could initialize the model."""
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint,
            max_wait_secs=max_wait_secs,
            config=config,
        )
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError(
                        "Model is not initialized and no init_op or init_fn or local_init_op "
                        "was given"
                    )
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            local_init_success, message = self._try_run_local_init_op(sess)
            if not local_init_success:
                raise RuntimeError(
                    "Init operations did not make model ready for local_init.  Init op: "
                    f"{_name_of(init_op)}, init fn: {init_fn}, error: {message}"
                )
            is_ready, message = _ready(self._ready_op, sess, "Model not ready")
            if not is_ready:
                raise RuntimeError(
                    "Init operations did not make model ready.  Init op: "
                    f"{_name_of(init_op)}, init fn: {init_fn}, local_init_op: "
                    f"{_name_of(self._local_init_op)}, error: {message}"
                )
        except BaseException:
            sess.close()
            raise
        return sess

    def recover_session(
        self,
        master: str,
        saver=None,
        checkpoint_dir=None,
        checkpoint_filename_with_path=None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        config=None,
    ) -> tuple[Session, bool]:
        """A session restored from a checkpoint when there is one, and whether it is
        initialized (restored, local init run and ready).  Runs no ``init_op``."""
        sess, restored = self._restore_checkpoint(
            master,
            saver,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint,
            max_wait_secs=max_wait_secs,
            config=config,
        )
        if not restored:
            return sess, False
        local_init_success, _ = self._try_run_local_init_op(sess)
        if not local_init_success:
            return sess, False
        is_ready, _ = _ready(self._ready_op, sess, "Model not ready")
        return sess, is_ready

    def wait_for_session(self, master: str = "", config=None, max_wait_secs: float = float("inf")):
        """A session in which the model is ready (a chief initialized it), waiting up to
        ``max_wait_secs``; None when the time runs out.  In-process, a new session holds no
        variable values, so a model with variables is ready only via a checkpoint restore: use
        `recover_session` or `prepare_session` for those."""
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            local_init_success, _ = self._try_run_local_init_op(sess)
            if local_init_success:
                is_ready, message = _ready(self._ready_op, sess, "Session not ready")
                if is_ready:
                    return sess
            sess.close()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            _logging.info("Waiting for model to be ready.  Ready_for_local_init_op: ...")
            time.sleep(min(self._recovery_wait_secs, remaining))

    def _try_run_local_init_op(self, sess: Session) -> tuple[bool, Optional[str]]:
        if self._local_init_op is None:
            return True, None
        is_ready, message = _ready(self._ready_for_local_init_op, sess, "Model not ready")
        if not is_ready:
            return False, message
        sess.run(
            self._local_init_op,
            feed_dict=self._local_init_feed_dict,
            options=self._local_init_run_options,
        )
        return True, None


def _name_of(op) -> Optional[str]:
    return None if op is None else getattr(op, "name", str(op))


class SessionCreator:
    """Makes the raw `Session` a `MonitoredSession` wraps: ``create_session()``."""

    def create_session(self) -> Session:
        raise NotImplementedError(f"create_session is not implemented for {self}.")


class ChiefSessionCreator(SessionCreator):
    """Creates a session as the chief does: finalizes the scaffold, then restores the newest
    checkpoint of ``checkpoint_dir`` (or ``checkpoint_filename_with_path``) or initializes."""

    def __init__(
        self,
        scaffold: Optional[Scaffold] = None,
        master: str = "",
        config=None,
        checkpoint_dir=None,
        checkpoint_filename_with_path=None,
    ):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def _get_session_manager(self) -> SessionManager:
        if self._session_manager is None:
            self._session_manager = SessionManager(
                local_init_op=self._scaffold.local_init_op,
                local_init_feed_dict=self._scaffold.local_init_feed_dict,
                ready_op=self._scaffold.ready_op,
                ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
                graph=get_default_graph(),
            )
        return self._session_manager

    def create_session(self) -> Session:
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master,
            saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config,
            init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn,
        )


class WorkerSessionCreator(SessionCreator):
    """Creates a session as a non-chief worker does: waits until the model is ready, running
    only ``local_init_op``.  In-process this means restoring a checkpoint the chief saved
    (``max_wait_secs`` bounds the wait; ``RuntimeError`` past it)."""

    def __init__(self, scaffold=None, master: str = "", config=None, max_wait_secs: float = 1800):
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self) -> Session:
        self._scaffold.finalize()
        manager = SessionManager(
            local_init_op=self._scaffold.local_init_op,
            local_init_feed_dict=self._scaffold.local_init_feed_dict,
            ready_op=self._scaffold.ready_op,
            ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
            graph=get_default_graph(),
        )
        sess = manager.wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs
        )
        if sess is None:
            raise RuntimeError(f"Session was not ready after waiting {self._max_wait_secs} secs.")
        return sess


# -- the monitored session -------------------------------------------------------------------------
class _StopRequested(Exception):
    """Raised by `StepContext.request_stop` to leave a ``step_fn`` at once."""


class StepContext:
    """What ``run_step_fn``'s ``step_fn`` gets: the raw ``session``, `run_with_hooks` (a
    monitored `run`) and `request_stop` (ends the step and the loop)."""

    def __init__(self, session: Session, run_with_hooks_fn: Callable):
        self._session = session
        self._run_with_hooks_fn = run_with_hooks_fn

    @property
    def session(self) -> Session:
        return self._session

    def run_with_hooks(self, *args, **kwargs):
        return self._run_with_hooks_fn(*args, **kwargs)

    def request_stop(self):
        """Leaves ``step_fn`` at once and makes `should_stop` true."""
        raise _StopRequested()


class MonitoredSession:
    """A `Session` that runs ``hooks`` around every step, starts the queue runners and closes
    cleanly (``tf.compat.v1.train.MonitoredSession``; see the module docstring).

    ``session_creator`` defaults to a `ChiefSessionCreator`.  Every hook's ``begin`` runs here,
    before the session is created.  A run or a session creation that fails with
    ``AbortedError`` or ``UnavailableError`` is recovered from (see the module docstring).
    """

    _recovers = True  # from a lost worker; SingularMonitoredSession does not

    def __init__(
        self,
        session_creator: Optional[SessionCreator] = None,
        hooks=None,
        stop_grace_period_secs: float = 120,
    ):
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            if not isinstance(hook, SessionRunHook):
                raise TypeError(f"hooks must be SessionRunHook instances, got {hook!r}")
        self._session_creator = session_creator or ChiefSessionCreator()
        self._stop_grace_period_secs = stop_grace_period_secs
        self._should_stop_flag = False
        self._coord: Optional[Coordinator] = None
        self._sess: Optional[Session] = None
        self._threads: list = []
        for hook in self._hooks:
            hook.begin()
        try:
            self._create_session()
        except BaseException:
            self._unfinalize()
            raise

    def _create_session(self) -> None:
        """Creates the session, starts the queue runners and calls the hooks'
        ``after_create_session``; all of it again after a preemption error, when this session
        recovers."""
        pause = _FIRST_RETRY_PAUSE_SECONDS
        while True:
            try:
                return self._create_session_once()
            except _PREEMPTION_ERRORS as e:
                if not self._recovers:
                    raise
                _logging.info(
                    "An error was raised while a session was being created. This may be due "
                    "to a preemption of a connected worker or parameter server. A new session "
                    "will be created in %.1f s. Error: %s",
                    pause,
                    e,
                )
                time.sleep(pause)
                pause = min(2 * pause, _LAST_RETRY_PAUSE_SECONDS)

    def _create_session_once(self) -> None:
        from .queue_runner import start_queue_runners

        sess = self._session_creator.create_session()
        self._sess = sess
        self._coord = Coordinator()
        try:
            self._threads = start_queue_runners(sess=sess, coord=self._coord)
            for hook in self._hooks:
                hook.after_create_session(sess, self._coord)
        except BaseException:
            self._close_session(unfinalize=False)
            raise

    # -- context manager ------------------------------------------------------------------------
    def __enter__(self) -> MonitoredSession:
        return self

    def __exit__(self, exception_type, exception_value, traceback) -> bool:
        if exception_type is not None and issubclass(
            exception_type, (errors.OutOfRangeError, StopIteration)
        ):
            exception_type = None
        self._close_internal(exception_type)
        return exception_type is None

    # -- running --------------------------------------------------------------------------------
    @property
    def graph(self):
        return self._graph

    def should_stop(self) -> bool:
        """True once a hook or ``step_fn`` requested a stop, a queue-runner thread stopped the
        coordinator, or the session is closed.  An exception a queue-runner thread passed to
        the coordinator is raised here."""
        if self._sess is None:
            return True
        self._coord.raise_requested_exception()
        return self._should_stop_flag or self._coord.should_stop()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """`Session.run` of ``fetches`` together with what every hook's ``before_run`` asked
        for; each hook's ``after_run`` gets its own results.  ``RuntimeError`` when called
        after `should_stop` became true.  A lost worker recreates the session and the run
        is made again (see the module docstring)."""
        return self._recovering(self._run_once, fetches, feed_dict, options, run_metadata)

    def _recovering(self, function: Callable, *args):
        """``function(*args)``; when it fails with a preemption error, the session is
        recreated and it is called again (unless this session does not recover)."""
        while True:
            try:
                return function(*args)
            except _PREEMPTION_ERRORS as e:
                if not self._recovers or self._sess is None:
                    raise
                _logging.info(
                    "An error was raised. This may be due to a preemption of a connected "
                    "worker or parameter server. The current session will be closed and a new "
                    "session will be created. Error: %s",
                    e,
                )
                self._recreate_session()

    def _recreate_session(self) -> None:
        """Closes the session without the hooks' ``end`` (whatever closing it raises: its
        tasks may be gone) and creates a new one; the graph stays finalized."""
        try:
            self._close_session(unfinalize=False)
        except Exception as e:  # noqa: BLE001 - the session is replaced either way
            _logging.info("Closing the lost session raised %s: %s", type(e).__name__, e)
        self._create_session()

    def _run_once(self, fetches, feed_dict, options, run_metadata):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        run_context = SessionRunContext(SessionRunArgs(fetches, feed_dict), self._sess)
        options = options if options is not None else RunOptions()
        hook_fetches, feed_dict = self._call_hooks_before_run(run_context, feed_dict, options)
        run_metadata = run_metadata if run_metadata is not None else RunMetadata()
        try:
            caller_results, hook_results = self._sess.run(
                [fetches, [f for f in hook_fetches if f is not None]],
                feed_dict=feed_dict,
                options=options,
                run_metadata=run_metadata,
            )
        except Exception:
            # A queue-runner thread's failure is the cause worth reporting first.
            self._coord.raise_requested_exception()
            raise
        results = iter(hook_results)
        for hook, asked in zip(self._hooks, hook_fetches):
            values = SessionRunValues(
                results=None if asked is None else next(results),
                options=options,
                run_metadata=run_metadata,
            )
            hook.after_run(run_context, values)
        self._should_stop_flag = self._should_stop_flag or run_context.stop_requested
        return caller_results

    def _call_hooks_before_run(self, run_context, user_feed_dict, options) -> tuple[list, Any]:
        """Every hook's fetches (None for a hook that asks for none) and the merged feeds;
        ``RuntimeError`` when two hooks, or a hook and the caller, feed the same tensor."""
        hook_fetches = []
        hook_feeds: dict = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                hook_fetches.append(None)
                continue
            hook_fetches.append(request.fetches)
            if request.feed_dict:
                _raise_if_feeds_intersect(
                    hook_feeds, request.feed_dict, "Same tensor is fed by two hooks."
                )
                hook_feeds.update(request.feed_dict)
            if request.options:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return hook_fetches, user_feed_dict
        if not user_feed_dict:
            return hook_fetches, hook_feeds
        _raise_if_feeds_intersect(
            user_feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user."
        )
        merged = dict(hook_feeds)
        merged.update(user_feed_dict)
        return hook_fetches, merged

    def run_step_fn(self, step_fn: Callable):
        """Calls ``step_fn(step_context)`` (a `StepContext`) and returns its result; a
        ``step_context.request_stop()`` inside it returns None and makes `should_stop` true."""
        parameters = list(inspect.signature(step_fn).parameters)
        if parameters[:1] == ["self"]:
            parameters = parameters[1:]
        if parameters != ["step_context"]:
            raise ValueError(
                "`step_fn` may either have one `step_context` argument, or `self` and "
                f"`step_context` arguments if it's an instance method. Got {parameters} instead."
            )
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        return self._recovering(self._call_step_fn, step_fn)

    def _call_step_fn(self, step_fn: Callable):
        try:
            return step_fn(StepContext(self._sess, self._run_once_with_hooks))
        except _StopRequested:
            self._should_stop_flag = True
            return None

    def _run_once_with_hooks(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """``run_with_hooks`` of a ``step_fn``: a monitored run whose preemption error leaves
        the ``step_fn``, which is called again as a whole on the new session."""
        return self._run_once(fetches, feed_dict, options, run_metadata)

    # -- closing --------------------------------------------------------------------------------
    def close(self) -> None:
        """Calls every hook's ``end``, stops the queue runners and closes the session."""
        self._close_internal()

    def _close_internal(self, exception_type=None) -> None:
        if self._sess is None:
            raise RuntimeError("Session is already closed.")
        try:
            if not exception_type:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            self._close_session()

    def _close_session(self, unfinalize: bool = True) -> None:
        try:
            if self._coord is not None:
                self._coord.request_stop()
                try:
                    self._coord.join(
                        self._threads,
                        stop_grace_period_secs=self._stop_grace_period_secs,
                        ignore_live_threads=True,
                    )
                except errors.OutOfRangeError:
                    pass
        finally:
            sess, self._sess = self._sess, None
            self._coord = None
            if sess is not None:
                sess.close()
            if unfinalize:
                self._unfinalize()

    def _unfinalize(self) -> None:
        if not self._graph_was_finalized:
            self._graph._unsafe_unfinalize()

    def _tf_sess(self) -> Optional[Session]:
        return self._sess


def _raise_if_feeds_intersect(feeds1: dict, feeds2: dict, message: str) -> None:
    intersection = set(feeds1) & set(feeds2)
    if intersection:
        names = sorted(getattr(t, "name", str(t)) for t in intersection)
        raise RuntimeError(f"{message} Conflict(s): {names}")


def _merge_run_options(options: RunOptions, incoming: RunOptions) -> None:
    """Folds a hook's options into the run's: the highest trace level, the shortest nonzero
    timeout, and every watched tensor."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    if incoming.timeout_in_ms:
        options.timeout_in_ms = (
            min(options.timeout_in_ms, incoming.timeout_in_ms)
            if options.timeout_in_ms
            else incoming.timeout_in_ms
        )
    options.debug_options.debug_tensor_watch_opts.extend(
        incoming.debug_options.debug_tensor_watch_opts
    )


MonitoredSession.StepContext = StepContext


class SingularMonitoredSession(MonitoredSession):
    """A `MonitoredSession` for one process: a `ChiefSessionCreator` made from ``scaffold``,
    ``master``, ``config`` and the checkpoint arguments, and `raw_session` to reach the
    `Session` beneath.  It does not recover from a lost worker (TensorFlow's does not)."""

    _recovers = False

    def __init__(
        self,
        hooks=None,
        scaffold: Optional[Scaffold] = None,
        master: str = "",
        config=None,
        checkpoint_dir=None,
        stop_grace_period_secs: float = 120,
        checkpoint_filename_with_path=None,
    ):
        creator = ChiefSessionCreator(
            scaffold=scaffold,
            master=master,
            config=config,
            checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
        )
        super().__init__(
            session_creator=creator, hooks=hooks, stop_grace_period_secs=stop_grace_period_secs
        )

    def raw_session(self) -> Session:
        """The `Session` beneath (its runs call no hook)."""
        return self._tf_sess()


def MonitoredTrainingSession(  # noqa: N802 - TensorFlow's name for this function
    master: str = "",
    is_chief: bool = True,
    checkpoint_dir=None,
    scaffold: Optional[Scaffold] = None,
    hooks=None,
    chief_only_hooks=None,
    save_checkpoint_secs=USE_DEFAULT,
    save_summaries_steps=USE_DEFAULT,
    save_summaries_secs=USE_DEFAULT,
    config=None,
    stop_grace_period_secs: float = 120,
    log_step_count_steps: Optional[int] = 100,
    max_wait_secs: float = 7200,
    save_checkpoint_steps=USE_DEFAULT,
    summary_dir=None,
    save_graph_def: bool = True,
) -> MonitoredSession:
    """A `MonitoredSession` set up for training, as ``tf.compat.v1.train.
    MonitoredTrainingSession`` sets it up.

    The chief restores the newest checkpoint of ``checkpoint_dir`` or initializes, and gets
    ``chief_only_hooks``, then a `StepCounterHook` (every ``log_step_count_steps``) and a
    `SummarySaverHook` (every ``save_summaries_steps``, default 100, or
    ``save_summaries_secs``) writing to ``summary_dir`` (default ``checkpoint_dir``), and a
    `CheckpointSaverHook` (every ``save_checkpoint_secs``, default 600, or
    ``save_checkpoint_steps``) into ``checkpoint_dir``; then ``hooks``.  A non-chief gets only
    ``hooks`` and waits up to ``max_wait_secs`` for a ready model.
    """
    from .hooks import CheckpointSaverHook, StepCounterHook, SummarySaverHook

    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None

    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(
            scaffold=scaffold, master=master, config=config, max_wait_secs=max_wait_secs
        )
        return MonitoredSession(
            session_creator=creator,
            hooks=hooks or [],
            stop_grace_period_secs=stop_grace_period_secs,
        )
    all_hooks = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(
        scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master, config=config
    )
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(
                StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps)
            )
        if (save_summaries_steps and save_summaries_steps > 0) or (
            save_summaries_secs and save_summaries_secs > 0
        ):
            all_hooks.append(
                SummarySaverHook(
                    scaffold=scaffold,
                    save_steps=save_summaries_steps,
                    save_secs=save_summaries_secs,
                    output_dir=summary_dir,
                )
            )
    if checkpoint_dir:
        if (save_checkpoint_secs and save_checkpoint_secs > 0) or (
            save_checkpoint_steps and save_checkpoint_steps > 0
        ):
            all_hooks.append(
                CheckpointSaverHook(
                    checkpoint_dir,
                    save_steps=save_checkpoint_steps,
                    save_secs=save_checkpoint_secs,
                    scaffold=scaffold,
                    save_graph_def=save_graph_def,
                )
            )
    all_hooks.extend(hooks or [])
    return MonitoredSession(
        session_creator=creator, hooks=all_hooks, stop_grace_period_secs=stop_grace_period_secs
    )

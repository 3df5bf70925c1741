"""`Supervisor`: the older TF1 training helper that `MonitoredTrainingSession` replaced
(``tf.compat.v1.train.Supervisor``), and `basic_train_loop`.

A Supervisor, made after the model is built, picks the model's ops (``init_op``, ``ready_op``,
``local_init_op``, ``summary_op``, the ``saver`` and the global step, each by default as
`dataflow.training.monitored_session.Scaffold` picks it) and finalizes the graph.
``managed_session()`` yields a session restored from ``logdir``'s newest checkpoint or
initialized, with the queue runners and the standard services running: a thread that saves a
checkpoint into ``logdir`` every ``save_model_secs``, and, when the tensorboard extra is
installed, threads that write the summaries every ``save_summaries_secs`` and the steps per
second.  Leaving the block stops and joins those threads (``OutOfRangeError`` in the block is a
clean stop; any other exception is re-raised) and closes the session.  Unlike the
`MonitoredSession`, nothing is saved at the end: save with ``sv.saver`` if you want to.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Optional

from ..framework import logging as _logging
from ..framework.errors import AbortedError
from ..framework.graph import get_default_graph
from ..framework.graph_keys import GraphKeys
from ..ops.variables import global_variables, global_variables_initializer
from .coordinator import Coordinator, LooperThread
from .monitored_session import (
    Scaffold,
    SessionManager,
    _get_saver_or_default,
    report_uninitialized_variables,
)
from .train import get_global_step

__all__ = ["Supervisor", "basic_train_loop"]


class Supervisor:
    """Prepares sessions and runs the services around a training loop (see the module
    docstring).  An argument left at ``Supervisor.USE_DEFAULT`` gets TensorFlow's default;
    None turns that piece off."""

    USE_DEFAULT = 0

    def __init__(
        self,
        graph=None,
        ready_op=USE_DEFAULT,
        ready_for_local_init_op=USE_DEFAULT,
        is_chief: bool = True,
        init_op=USE_DEFAULT,
        init_feed_dict=None,
        local_init_op=USE_DEFAULT,
        logdir=None,
        summary_op=USE_DEFAULT,
        saver=USE_DEFAULT,
        global_step=USE_DEFAULT,
        save_summaries_secs: float = 120,
        save_model_secs: float = 600,
        recovery_wait_secs: float = 30,
        stop_grace_secs: float = 120,
        checkpoint_basename: str = "model.ckpt",
        session_manager: Optional[SessionManager] = None,
        summary_writer=USE_DEFAULT,
        init_fn=None,
        local_init_run_options=None,
    ):
        self._graph = graph if graph is not None else get_default_graph()
        default = Supervisor.USE_DEFAULT
        with self._graph.as_default():
            if ready_op is default:
                ready_op = Scaffold.get_or_default(
                    "ready_op", GraphKeys.READY_OP, report_uninitialized_variables
                )
            if ready_for_local_init_op is default:
                ready_for_local_init_op = None
            if init_op is default:
                init_op = Scaffold.get_or_default(
                    "init_op", GraphKeys.INIT_OP, global_variables_initializer
                )
            if local_init_op is default:
                local_init_op = Scaffold.get_or_default(
                    "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op
                )
            if summary_op is default:
                from ..io.summary import merge_all

                summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP, merge_all)
            if saver is default:
                saver = _get_saver_or_default() if global_variables() else None
            if global_step is default:
                global_step = get_global_step()
        self._ready_op = ready_op
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._local_init_op = local_init_op
        self._summary_op = summary_op
        self._saver = saver
        self._global_step = global_step
        self._is_chief = is_chief
        self._logdir = None if logdir is None else os.fspath(logdir)
        self._save_path = os.path.join(self._logdir, checkpoint_basename) if self._logdir else None
        self._save_summaries_secs = save_summaries_secs
        self._save_model_secs = save_model_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._coord = Coordinator()
        self._started_threads: list = []
        if summary_writer is default:
            summary_writer = None
            if is_chief and self._logdir:
                summary_writer = _own_writer(self._logdir)
        self._summary_writer = summary_writer
        self._session_manager = session_manager or SessionManager(
            local_init_op=local_init_op,
            ready_op=ready_op,
            ready_for_local_init_op=ready_for_local_init_op,
            graph=self._graph,
            recovery_wait_secs=recovery_wait_secs,
            local_init_run_options=local_init_run_options,
        )
        self._graph.finalize()

    # -- what it picked ---------------------------------------------------------------------------
    @property
    def coord(self) -> Coordinator:
        return self._coord

    @property
    def session_manager(self) -> SessionManager:
        return self._session_manager

    @property
    def is_chief(self) -> bool:
        return self._is_chief

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def global_step(self):
        return self._global_step

    @property
    def summary_writer(self):
        return self._summary_writer

    @property
    def save_path(self) -> Optional[str]:
        return self._save_path

    @property
    def save_model_secs(self) -> float:
        return self._save_model_secs

    @property
    def save_summaries_secs(self) -> float:
        return self._save_summaries_secs

    # -- sessions ---------------------------------------------------------------------------------
    def prepare_or_wait_for_session(
        self,
        master: str = "",
        config=None,
        wait_for_checkpoint: bool = False,
        max_wait_secs: float = 7200,
        start_standard_services: bool = True,
    ):
        """The chief's session, restored from ``logdir`` or initialized (with the standard
        services started), or a worker's once the model is ready; the queue runners run.
        A supervisor that stopped before may prepare again (`basic_train_loop` retries)."""
        self._coord.clear_stop()
        if self._summary_writer is not None:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master,
                init_op=self._init_op,
                saver=self._saver,
                checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint,
                max_wait_secs=max_wait_secs,
                config=config,
                init_feed_dict=self._init_feed_dict,
                init_fn=self._init_fn,
            )
            if self._summary_writer is not None:
                self._summary_writer.add_graph(self._graph)
            if start_standard_services:
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(
                master, config=config, max_wait_secs=max_wait_secs
            )
            if sess is None:
                raise RuntimeError(f"Session was not ready after waiting {max_wait_secs} secs.")
        if start_standard_services:
            self.start_queue_runners(sess)
        return sess

    def start_standard_services(self, sess) -> list:
        """Starts the checkpoint, summary and step-counter threads that apply (see the module
        docstring) and returns them."""
        threads = []
        writer = self._summary_writer
        if writer is not None and self._save_summaries_secs:
            if self._summary_op is not None:
                threads.append(self.loop(self._save_summaries_secs, self._write_summaries, [sess]))
            if self._global_step is not None:
                counter = _StepCounter(sess, self._global_step, writer)
                threads.append(self.loop(self._save_summaries_secs, counter))
        if self._saver is not None and self._save_path and self._save_model_secs:
            threads.append(self.loop(self._save_model_secs, self._save_checkpoint, [sess]))
        return threads

    def start_queue_runners(self, sess, queue_runners=None) -> list:
        """Starts the threads of the graph's queue runners (or ``queue_runners``)."""
        runners = queue_runners or self._graph.get_collection(GraphKeys.QUEUE_RUNNERS)
        threads = []
        for runner in runners:
            threads.extend(runner.create_threads(sess, coord=self._coord, daemon=True, start=True))
        self._started_threads.extend(threads)
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None) -> LooperThread:
        """Starts a thread calling ``target(*args, **kwargs)`` every ``timer_interval_secs``
        until the supervisor stops."""
        looper = LooperThread.loop(self._coord, timer_interval_secs, target, args, kwargs)
        self._started_threads.append(looper)
        return looper

    def _save_checkpoint(self, sess) -> None:
        path = self._saver.save(sess, self._save_path, global_step=self._global_step)
        if self._summary_writer is not None:
            from .hooks import _session_log

            step = None if self._global_step is None else int(sess.run(self._global_step))
            self._summary_writer.add_session_log(_session_log("CHECKPOINT", path), step)

    def _write_summaries(self, sess) -> None:
        if self._global_step is not None:
            summary, step = sess.run([self._summary_op, self._global_step])
        else:
            summary, step = sess.run(self._summary_op), None
        self.summary_computed(sess, summary, global_step=step)

    def summary_computed(self, sess, summary, global_step=None) -> None:
        """Writes ``summary`` (a summary op's value) at ``global_step`` (default: the current
        global step)."""
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self._global_step is not None:
            global_step = int(sess.run(self._global_step))
        self._summary_writer.add_summary(summary, global_step)

    # -- stopping ---------------------------------------------------------------------------------
    def should_stop(self) -> bool:
        return self._coord.should_stop()

    def request_stop(self, ex=None) -> None:
        """Asks every thread (and the training loop) to stop; ``ex`` is re-raised by `stop`
        unless it is an ``OutOfRangeError``."""
        self._coord.request_stop(ex=ex)

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self) -> None:
        self._coord.wait_for_stop()

    def stop(self, threads=None, close_summary_writer: bool = True, ignore_live_threads=False):
        """Requests a stop, joins the started threads (and ``threads``), then closes the
        summary writer; re-raises the exception a thread or `request_stop` reported."""
        join_threads = list(threads or []) + self._started_threads
        self._coord.request_stop()
        try:
            self._coord.join(
                join_threads,
                stop_grace_period_secs=self._stop_grace_secs,
                ignore_live_threads=ignore_live_threads,
            )
        finally:
            if close_summary_writer and self._summary_writer is not None:
                from .hooks import _session_log

                self._summary_writer.add_session_log(_session_log("STOP"))
                self._summary_writer.close()
            self._started_threads = []

    @contextlib.contextmanager
    def managed_session(
        self,
        master: str = "",
        config=None,
        start_standard_services: bool = True,
        close_summary_writer: bool = True,
    ):
        """A prepared session for a ``with`` block; leaving it stops the services (re-raising
        what a thread or the block raised, except ``OutOfRangeError``) and closes the
        session."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(
                master=master, config=config, start_standard_services=start_standard_services
            )
            yield sess
        except Exception as e:
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    sess.close()


def _own_writer(logdir):
    """A `FileWriter` of ``logdir`` for this supervisor alone (it closes it when it stops, so
    not the cached one hooks share), or None when the tensorboard extra is not installed."""
    from ..framework.tensorboard_protos import MissingExtraError
    from ..io.summary import FileWriter

    try:
        return FileWriter(logdir)
    except MissingExtraError as e:
        _logging.info("Not writing events to %s: %s", logdir, e)
        return None


class _StepCounter:
    """Writes ``global_step/sec`` since its previous call (a Supervisor service)."""

    def __init__(self, sess, global_step, writer):
        self._sess = sess
        self._global_step = global_step
        self._writer = writer
        self._tag = global_step.op.name + "/sec"
        self._last = (time.time(), int(sess.run(global_step)))

    def __call__(self) -> None:
        from ..framework.tensorboard_protos import protos

        now, step = time.time(), int(self._sess.run(self._global_step))
        last_time, last_step = self._last
        self._last = (now, step)
        if now > last_time:
            rate = (step - last_step) / (now - last_time)
            summary = protos().Summary
            self._writer.add_summary(
                summary(value=[summary.Value(tag=self._tag, simple_value=rate)]), step
            )
            _logging.info("%s: %g", self._tag, rate)


def basic_train_loop(supervisor: Supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Calls ``train_step_fn(sess, *args, **kwargs)`` in ``supervisor.managed_session`` until
    the supervisor should stop, starting over with a new session after an ``AbortedError``."""
    args = args or []
    kwargs = kwargs or {}
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except AbortedError:
            should_retry = True

"""The common `SessionRunHook`s of TF1 training loops (TensorFlow's
``basic_session_run_hooks``), and the timer they trigger on.

Each hook fetches what it needs in the same run as the training step (``before_run`` returns
the global step, the loss, the tensors to log) and acts in ``after_run``.  The global step read
in a step is its value before that step's increment, so hooks that act "at step N" read it
again with a run of their own before acting, as TensorFlow's do.

Event files need the ``tensorboard`` extra only when something is written to them: a
`SummarySaverHook` with summaries to save needs it, while the steps/sec of `StepCounterHook`
and the checkpoint events of `CheckpointSaverHook` are written when the extra is installed and
left out (with a note in the log) when it is not.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Optional

import numpy as np

from ..framework import logging as _logging
from ..framework.graph import get_default_graph
from .session_run_hook import SessionRunArgs, SessionRunHook
from .train import get_global_step

__all__ = [
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "SecondOrStepTimer",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
]


class SecondOrStepTimer:
    """Says when to act: every ``every_secs`` seconds or every ``every_steps`` steps (exactly
    one of the two).  The first step asked about always triggers."""

    def __init__(self, every_secs: Optional[float] = None, every_steps: Optional[int] = None):
        self.reset()
        self._every_secs = every_secs
        self._every_steps = every_steps
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")

    def reset(self) -> None:
        self._last_triggered_step: Optional[int] = None
        self._last_triggered_time: Optional[float] = None

    def should_trigger_for_step(self, step: int) -> bool:
        """Whether enough time or steps have passed since the last trigger for ``step``."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None:
            if time.time() >= self._last_triggered_time + self._every_secs:
                return True
        if self._every_steps is not None:
            if step >= self._last_triggered_step + self._every_steps:
                return True
        return False

    def update_last_triggered_step(self, step: int) -> tuple:
        """Records a trigger at ``step``; returns (seconds, steps) since the previous one, or
        (None, None) for the first."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed_secs = elapsed_steps = None
        else:
            elapsed_secs = now - self._last_triggered_time
            elapsed_steps = step - self._last_triggered_step
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed_secs, elapsed_steps

    def last_triggered_step(self) -> Optional[int]:
        return self._last_triggered_step


def _global_step_or_fail(hook_name: str):
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook_name}.")
    return step


def _as_graph_element(obj):
    """``obj`` (a tensor, an op or a name) as an element of the default graph; a bare op name
    means its only output."""
    graph = get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(
                f"Passed {obj} should have graph attribute that is equal to current graph {graph}."
            )
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(
        f"Name {obj} is ambiguous, as this `Operation` has multiple outputs (at least 2)."
    )


def _optional_writer(output_dir):
    """The cached `FileWriter` of ``output_dir``, or None (with a note in the log) when the
    ``tensorboard`` extra is not installed."""
    from ..framework.tensorboard_protos import MissingExtraError
    from ..io.summary import FileWriterCache

    try:
        return FileWriterCache.get(output_dir)
    except MissingExtraError as e:
        _logging.info("Not writing events to %s: %s", output_dir, e)
        return None


def _session_log(status: str, checkpoint_path: str = ""):
    from ..framework.tensorboard_protos import protos

    session_log = protos().SessionLog
    return session_log(status=getattr(session_log, status), checkpoint_path=checkpoint_path)


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches ``last_step``, or ``num_steps`` steps past
    its value when the session was created (exactly one of the two)."""

    def __init__(
        self,
        num_steps: Optional[int] = None,
        last_step: Optional[int] = None,
        steps_per_run: int = 1,
    ):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        if steps_per_run is None or steps_per_run < 1:
            raise ValueError("steps_per_run should be greater than 0")
        self._num_steps = num_steps
        self._last_step = last_step
        self._steps_per_run = steps_per_run

    def begin(self) -> None:
        self._global_step_tensor = _global_step_or_fail("StopAtStepHook")

    def after_create_session(self, session, coord) -> None:
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values) -> None:
        step = int(run_values.results) + self._steps_per_run
        if step >= self._last_step:
            # The value fetched was read before this step's increment: read it again.
            step = int(run_context.session.run(self._global_step_tensor))
            if step >= self._last_step:
                run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of ``tensors`` (a list of tensors or names, or a dict from tags to them)
    at INFO through `df.logging`: every ``every_n_iter`` runs or ``every_n_secs`` seconds, and
    once more at the end when ``at_end``.  ``formatter(values_by_tag)`` makes the line
    (default: ``tag = value`` pairs and the seconds since the last line)."""

    def __init__(
        self,
        tensors,
        every_n_iter: Optional[int] = None,
        every_n_secs: Optional[float] = None,
        at_end: bool = False,
        formatter: Optional[Callable] = None,
    ):
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs must be "
                "provided."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors)
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in tensors}
        self._tensors = tensors
        self._formatter = formatter
        self._timer = (
            _NeverTriggerTimer()
            if only_log_at_end
            else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        )
        self._log_at_end = at_end

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {
            tag: _as_graph_element(tensor) for tag, tensor in self._tensors.items()
        }

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, tensor_values: dict) -> None:
        original = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter:
                _logging.info(self._formatter(tensor_values))
                return
            stats = ", ".join(f"{tag} = {tensor_values[tag]}" for tag in self._tag_order)
            if elapsed_secs is not None:
                _logging.info("%s (%.3f sec)", stats, elapsed_secs)
            else:
                _logging.info("%s", stats)
        finally:
            np.set_printoptions(**original)

    def after_run(self, run_context, run_values) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class _NeverTriggerTimer(SecondOrStepTimer):
    """A timer that never triggers (a `LoggingTensorHook` that logs only at the end)."""

    def __init__(self):
        self.reset()

    def should_trigger_for_step(self, step: int) -> bool:
        return False


class CheckpointSaverListener:
    """Code that runs around the saves of a `CheckpointSaverHook`: ``begin()``,
    ``before_save(session, global_step_value)``, ``after_save(session, global_step_value)``
    (returning True requests a stop) and ``end(session, global_step_value)``."""

    def begin(self) -> None:
        pass

    def before_save(self, session, global_step_value) -> None:
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value) -> None:
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint ``<checkpoint_dir>/<checkpoint_basename>-<global step>`` when the
    session is created, every ``save_secs`` seconds or ``save_steps`` steps, and at the end
    (unless the last step was just saved).  The saver is ``saver``, else ``scaffold.saver``,
    else the graph's one `Saver` in the ``savers`` collection."""

    def __init__(
        self,
        checkpoint_dir,
        save_secs: Optional[float] = None,
        save_steps: Optional[int] = None,
        saver=None,
        checkpoint_basename: str = "model.ckpt",
        scaffold=None,
        listeners=None,
        save_graph_def: bool = True,
    ):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._save_path = os.path.join(self._checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._save_graph_def = save_graph_def
        self._steps_per_run = 1

    def begin(self) -> None:
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        self._summary_writer = _optional_writer(self._checkpoint_dir)
        self._global_step_tensor = _global_step_or_fail("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord) -> None:
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def and self._summary_writer is not None:
            self._summary_writer.add_graph(session.graph)
        # The checkpoint saved here is the state at step "global_step".
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values) -> None:
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session) -> None:
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from ..framework.graph_keys import GraphKeys

        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(
                f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the "
                "collection or provide a saver or scaffold."
            )
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which "
                "one to use by passing it to the constructor."
            )
        return savers[0]

    def _save(self, session, step: int) -> bool:
        """Saves; True when a listener asks to stop."""
        _logging.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        _logging.info("Saving checkpoints for %d into %s.", step, self._save_path)
        path = self._get_saver().save(session, self._save_path, global_step=step)
        if self._summary_writer is not None:
            self._summary_writer.add_session_log(_session_log("CHECKPOINT", path), step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _logging.info("A CheckpointSaverListener requested that training be stopped.")
                should_stop = True
        return should_stop


class StepCounterHook(SessionRunHook):
    """Logs the global steps per second (``global_step/sec``) every ``every_n_steps`` steps or
    ``every_n_secs`` seconds, and writes it as a summary to ``summary_writer`` or to
    ``output_dir``'s event file when the tensorboard extra is installed."""

    def __init__(
        self,
        every_n_steps: Optional[int] = 100,
        every_n_secs: Optional[float] = None,
        output_dir=None,
        summary_writer=None,
    ):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self._steps_per_run = 1

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _optional_writer(self._output_dir)
        self._global_step_tensor = _global_step_or_fail("StepCounterHook")
        self._summary_tag = self._global_step_tensor.op.name + "/sec"

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def _log_and_record(self, elapsed_steps: int, elapsed_time: float, global_step: int) -> None:
        steps_per_sec = elapsed_steps / elapsed_time
        if self._summary_writer is not None:
            from ..framework.tensorboard_protos import protos

            summary_class = protos().Summary
            summary = summary_class(
                value=[summary_class.Value(tag=self._summary_tag, simple_value=steps_per_sec)]
            )
            self._summary_writer.add_summary(summary, global_step)
        _logging.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context, run_values) -> None:
        stale_global_step = int(run_values.results)
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step:
            _logging.log_first_n(
                _logging.WARN,
                "It seems that global step (df.train.get_global_step) has not been increased. "
                "Current value (could be stable): %s vs previous value: %s. You could increase "
                "the global step by passing df.train.get_global_step() to "
                "Optimizer.apply_gradients or Optimizer.minimize.",
                5,
                stale_global_step,
                self._last_global_step,
            )
        self._last_global_step = stale_global_step


class NanLossDuringTrainingError(RuntimeError):
    """Raised by `NanTensorHook` when the loss is NaN."""

    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Checks ``loss_tensor`` after every run: a NaN raises `NanLossDuringTrainingError` (or,
    with ``fail_on_nan_loss=False``, logs a warning and requests a stop)."""

    def __init__(self, loss_tensor, fail_on_nan_loss: bool = True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values) -> None:
        if np.isnan(run_values.results):
            failure_message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _logging.error(failure_message)
                raise NanLossDuringTrainingError
            _logging.warning(failure_message)
            run_context.request_stop()


class SummarySaverHook(SessionRunHook):
    """Writes the summaries of ``summary_op`` (or ``scaffold.summary_op``; exactly one of the
    two) to ``summary_writer`` or ``output_dir``'s event file every ``save_steps`` steps or
    ``save_secs`` seconds, at the global step.  It needs the tensorboard extra once there are
    summaries to write (a scaffold whose graph has none writes nothing)."""

    def __init__(
        self,
        save_steps: Optional[int] = None,
        save_secs: Optional[float] = None,
        output_dir=None,
        summary_writer=None,
        scaffold=None,
        summary_op=None,
    ):
        if (scaffold is None and summary_op is None) or (
            scaffold is not None and summary_op is not None
        ):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self) -> None:
        self._next_step = None
        self._global_step_tensor = _global_step_or_fail("SummarySaverHook")

    def after_create_session(self, session, coord) -> None:
        # The scaffold's summary op exists once the session is created; a writer (and the
        # extra) is needed only if there is something to write.
        if self._summary_writer is None and self._output_dir and self._get_summary_op():
            from ..io.summary import FileWriterCache

            self._summary_writer = FileWriterCache.get(self._output_dir)

    def _get_summary_op(self) -> Optional[list]:
        summary_op = self._summary_op
        if summary_op is None and self._scaffold is not None:
            summary_op = self._scaffold.summary_op
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]

    def before_run(self, run_context):
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step
        )
        requests = {"global_step": self._global_step_tensor}
        if self._request_summary and self._summary_writer is not None:
            summary_op = self._get_summary_op()
            if summary_op is not None:
                requests["summary"] = summary_op
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values) -> None:
        if self._summary_writer is None:
            return
        global_step = int(run_values.results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(_session_log("START"), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session) -> None:
        if self._summary_writer is not None:
            self._summary_writer.flush()


class GlobalStepWaiterHook(SessionRunHook):
    """Holds the first run back until the global step reaches ``wait_until_step`` (another
    thread or worker trains meanwhile), checking twice a second.  As in TensorFlow it waits as
    long as that takes."""

    def __init__(self, wait_until_step: int):
        self._wait_until_step = wait_until_step

    def begin(self) -> None:
        self._worker_is_started = False
        self._global_step_tensor = _global_step_or_fail("_GlobalStepWaiterHook")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _logging.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = int(run_context.session.run(self._global_step_tensor))
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                _logging.info(
                    "Waiting for global step %d before starting training. Current step is %d.",
                    self._wait_until_step,
                    current_step,
                )
                last_logged_step = current_step
            time.sleep(0.5)


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` (with ``final_ops_feed_dict``) when the session ends; their values
    are then in `final_ops_values`."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session) -> None:
        if self._final_ops is None:
            return
        from ..framework.errors import OutOfRangeError

        try:
            self._final_ops_values = session.run(
                self._final_ops, feed_dict=self._final_ops_feed_dict
            )
        except (OutOfRangeError, StopIteration):
            _logging.warning(
                "An OutOfRangeError or StopIteration exception is raised by the code in "
                "FinalOpsHook. This typically means the Ops running by the FinalOpsHook have a "
                "dependency back to some input source, which should not happen: the final ops "
                "should read variables only, not another batch from the input."
            )
            raise


class FeedFnHook(SessionRunHook):
    """Feeds every run with ``feed_fn()`` (a dict from tensors to values)."""

    def __init__(self, feed_fn: Callable):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())

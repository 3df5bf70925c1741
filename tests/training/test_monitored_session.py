"""MonitoredTrainingSession and MonitoredSession: the classic TF1 training loop, its hooks'
protocol, checkpoints across sessions, clean and failing ends."""

import logging
import os

import numpy as np
import pytest

import dataflow as df


def least_squares():
    """w -> 3 by gradient descent on (w - 3)^2, counting steps in the global step."""
    global_step = df.train.get_or_create_global_step()
    w = df.Variable(0.0, name="w")
    loss = df.square(w - 3.0, name="loss")
    train_op = df.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    return global_step, w, loss, train_op


class RecordingHook(df.train.SessionRunHook):
    """Records each call the monitored session makes, and what it was given."""

    def __init__(self, fetches=None):
        self.fetches = fetches
        self.calls = []
        self.results = []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        assert isinstance(coord, df.train.Coordinator)

    def before_run(self, run_context):
        self.calls.append("before_run")
        if self.fetches is None:
            return None
        return df.train.SessionRunArgs(self.fetches)

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.results.append(run_values.results)

    def end(self, session):
        self.calls.append("end")


def test_training_loop_stops_at_step_and_saves_a_checkpoint_there(tmp_path):
    global_step, w, _, train_op = least_squares()
    with df.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path), hooks=[df.train.StopAtStepHook(last_step=5)]
    ) as sess:
        runs = 0
        while not sess.should_stop():
            sess.run(train_op)
            runs += 1
    assert runs == 5
    assert df.train.latest_checkpoint(str(tmp_path)) == os.path.join(tmp_path, "model.ckpt-5")
    saved = np.load(os.path.join(tmp_path, "model.ckpt-5.npz"))
    assert saved["global_step.npy"] == 5
    np.testing.assert_allclose(saved["w.npy"], 3.0 * (1 - 0.8**5), rtol=1e-6)


def test_second_session_restores_the_checkpoint_and_continues_from_it(tmp_path):
    with df.Graph().as_default():
        _, _, _, train_op = least_squares()
        with df.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), hooks=[df.train.StopAtStepHook(num_steps=4)]
        ) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    with df.Graph().as_default():
        global_step, w, _, train_op = least_squares()
        hook = RecordingHook(fetches=[global_step, w])
        with df.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), hooks=[df.train.StopAtStepHook(num_steps=3), hook]
        ) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    first_step, first_w = hook.results[0]
    assert first_step == 4
    np.testing.assert_allclose(first_w, 3.0 * (1 - 0.8**4), rtol=1e-6)
    assert len(hook.results) == 3
    assert df.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-7")


def test_hooks_are_called_in_protocol_order_and_get_their_own_fetches():
    global_step, w, loss, train_op = least_squares()
    hook = RecordingHook(fetches={"step": global_step, "loss": loss})
    silent = RecordingHook()
    with df.train.MonitoredSession(hooks=[hook, silent]) as sess:
        caller_values = [sess.run([train_op, loss])[1] for _ in range(2)]
    assert hook.calls == ["begin", "after_create_session"] + ["before_run", "after_run"] * 2 + [
        "end"
    ]
    assert [r["step"] for r in hook.results] == [0, 1]
    assert [r["loss"] for r in hook.results] == caller_values
    assert silent.results == [None, None]


def test_graph_is_finalized_while_the_session_runs_and_unfinalized_after():
    _, _, _, train_op = least_squares()
    graph = df.get_default_graph()
    with df.train.MonitoredSession() as sess:
        assert graph.finalized
        with pytest.raises(RuntimeError, match="finalized"):
            df.constant(1.0)
        sess.run(train_op)
    assert not graph.finalized


def test_hooks_feeds_merge_with_the_callers_and_conflicts_are_refused():
    x = df.placeholder(df.float32, [], name="x")
    y = df.placeholder(df.float32, [], name="y")
    total = x + y
    feeder = df.train.FeedFnHook(lambda: {y: 10.0})
    with df.train.MonitoredSession(hooks=[feeder]) as sess:
        assert sess.run(total, feed_dict={x: 1.0}) == 11.0
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(total, feed_dict={x: 1.0, y: 2.0})


def test_two_hooks_feeding_one_tensor_are_refused():
    y = df.placeholder(df.float32, [], name="y")
    hooks = [df.train.FeedFnHook(lambda: {y: 1.0}), df.train.FeedFnHook(lambda: {y: 2.0})]
    with df.train.MonitoredSession(hooks=hooks) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
            sess.run(y)


def test_nan_loss_stops_training_with_tensorflows_error_and_closes_the_session():
    w = df.Variable(1.0, name="w")
    loss = df.log(w - 2.0)  # NaN
    monitored = df.train.MonitoredSession(hooks=[df.train.NanTensorHook(loss)])
    raw = monitored._tf_sess()
    with pytest.raises(df.train.NanLossDuringTrainingError, match="NaN loss during training."):
        with monitored as sess:
            sess.run(loss)
    assert monitored.should_stop()
    with pytest.raises(RuntimeError, match="closed Session"):
        raw.run(w)


def test_nan_loss_requests_a_stop_when_not_failing():
    loss = df.constant(np.nan)
    with df.train.MonitoredSession(
        hooks=[df.train.NanTensorHook(loss, fail_on_nan_loss=False)]
    ) as sess:
        sess.run(loss)
        assert sess.should_stop()
        with pytest.raises(RuntimeError, match="Run called even after should_stop requested."):
            sess.run(loss)


def test_dataset_running_out_ends_the_loop_cleanly_and_calls_end():
    total = df.Variable(0, dtype=df.int64, name="total")
    element = df.data.make_one_shot_iterator(df.data.Dataset.range(4)).get_next()
    accumulate = total.assign_add(element)
    final = df.train.FinalOpsHook(total)
    seen = 0
    with df.train.MonitoredSession(hooks=[final]) as sess:
        while not sess.should_stop():
            sess.run(accumulate)
            seen += 1
    assert seen == 4
    assert final.final_ops_values == 0 + 1 + 2 + 3


def test_an_exception_closes_the_session_without_end_and_leaves_checkpoints_intact(tmp_path):
    global_step, _, _, train_op = least_squares()
    saver_hook = df.train.CheckpointSaverHook(str(tmp_path), save_steps=2)
    recorder = RecordingHook()
    monitored = df.train.MonitoredSession(hooks=[saver_hook, recorder])
    raw = monitored._tf_sess()
    with pytest.raises(ValueError, match="user code failed"):
        with monitored as sess:
            while not sess.should_stop():
                # The step read in a run is its value before that run's increment.
                step = sess.run([train_op, global_step])[1]
                if step == 2:
                    raise ValueError("user code failed")
    assert "end" not in recorder.calls
    assert df.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-2")
    state = df.train.get_checkpoint_state(str(tmp_path))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-0",
        "model.ckpt-2",
    ]
    assert not df.get_default_graph().finalized
    with pytest.raises(RuntimeError, match="closed Session"):
        raw.run(global_step)
    # The checkpoint left behind restores.
    with df.train.SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as sess:
        assert sess.run(global_step) == 2


def test_run_step_fn_runs_with_hooks_and_can_stop_the_loop():
    global_step, _, _, train_op = least_squares()
    hook = RecordingHook(fetches=global_step)

    def step_fn(step_context):
        if step_context.session.run(global_step) >= 2:
            step_context.request_stop()
        return step_context.run_with_hooks(train_op)

    with df.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run_step_fn(step_fn)
    assert hook.results == [0, 1]
    with pytest.raises(ValueError, match="`step_fn` may either have one `step_context`"):
        with df.train.MonitoredSession() as sess:
            sess.run_step_fn(lambda context: None)


def test_summaries_are_written_at_the_global_step(tmp_path):
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator"
    )
    _, _, loss, train_op = least_squares()
    df.summary.scalar("training_loss", loss)
    with df.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path),
        save_summaries_steps=2,
        hooks=[df.train.StopAtStepHook(last_step=5)],
    ) as sess:
        losses = []
        while not sess.should_stop():
            losses.append(sess.run([train_op, loss])[1])
    df.summary.FileWriterCache.clear()
    accumulator = event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    events = accumulator.Scalars("training_loss")
    assert [e.step for e in events] == [1, 3, 5]
    np.testing.assert_allclose([e.value for e in events], losses[0::2], rtol=1e-6)


def test_queue_runners_are_started_and_stopped_with_the_session():
    queue = df.FIFOQueue(4, [df.float32], shapes=[[]])
    df.train.add_queue_runner(df.train.QueueRunner(queue, [queue.enqueue(df.constant(7.0))]))
    dequeued = queue.dequeue()
    with df.train.MonitoredSession() as sess:
        assert [sess.run(dequeued) for _ in range(3)] == [7.0, 7.0, 7.0]
        threads = list(sess._threads)
        assert threads
    assert not any(t.is_alive() for t in threads)


def test_scaffold_initializes_once_and_ready_op_names_what_is_missing():
    w = df.Variable(1.0, name="w")
    with df.train.MonitoredSession() as sess:
        assert sess.run(w) == 1.0
    scaffold = df.train.Scaffold(init_op=df.no_op())
    with pytest.raises(RuntimeError, match="Variables not initialized: w"):
        df.train.MonitoredSession(session_creator=df.train.ChiefSessionCreator(scaffold))
    assert not df.get_default_graph().finalized


def test_report_uninitialized_variables_lists_names_until_initialized():
    a = df.Variable(1.0, name="a")
    df.Variable(2.0, name="b")
    report = df.report_uninitialized_variables()
    with df.Session() as sess:
        assert list(sess.run(report)) == [b"a", b"b"]
        sess.run(a.initializer)
        assert list(sess.run(report)) == [b"b"]


def test_hooks_needing_a_global_step_say_so():
    df.Variable(1.0)
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        df.train.MonitoredSession(hooks=[df.train.StopAtStepHook(num_steps=1)])


@pytest.fixture
def info_log():
    """The lines df.logging prints at INFO while the test runs."""
    logger = df.logging.get_logger()
    records = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield records
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_logging_tensor_hook_logs_every_n_iterations_and_at_end(info_log):
    global_step, w, loss, train_op = least_squares()
    hook = df.train.LoggingTensorHook({"step": global_step}, every_n_iter=2, at_end=True)
    with df.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(5):
            sess.run(train_op)
    lines = [line for line in info_log if line.startswith("step = ")]
    assert [line.split(" (")[0] for line in lines] == [
        "step = 0",
        "step = 2",
        "step = 4",
        "step = 5",
    ]


def test_logging_tensor_hook_takes_names_and_a_formatter(info_log):
    _, _, loss, train_op = least_squares()
    hook = df.train.LoggingTensorHook(
        ["loss"], every_n_iter=1, formatter=lambda values: f"loss is {values['loss']:.2f}"
    )
    with df.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(train_op)
    assert "loss is 9.00" in info_log


def test_step_counter_hook_logs_steps_per_second(info_log):
    _, _, _, train_op = least_squares()
    with df.train.MonitoredSession(hooks=[df.train.StepCounterHook(every_n_steps=2)]) as sess:
        for _ in range(5):
            sess.run(train_op)
    rates = [line for line in info_log if line.startswith("global_step/sec: ")]
    assert len(rates) == 2
    assert all(float(line.split(": ")[1]) > 0 for line in rates)


def test_global_step_waiter_holds_the_first_run_until_the_step_is_reached():
    import threading

    global_step, _, _, train_op = least_squares()
    increment = global_step.assign_add(1)
    with df.train.MonitoredSession(hooks=[df.train.GlobalStepWaiterHook(3)]) as sess:
        raw = sess._tf_sess()

        def advance():
            for _ in range(3):
                raw.run(increment)

        timer = threading.Timer(0.2, advance)
        timer.start()
        sess.run(train_op)
        timer.join()
        assert raw.run(global_step) == 4


def test_checkpoint_saver_listeners_see_every_save_and_can_stop(tmp_path):
    global_step, _, _, train_op = least_squares()

    class Listener(df.train.CheckpointSaverListener):
        saved = []

        def after_save(self, session, global_step_value):
            self.saved.append(global_step_value)
            return global_step_value >= 4

    hook = df.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[Listener()])
    with df.train.MonitoredSession(hooks=[hook]) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    assert Listener.saved == [0, 2, 4]
    assert sess._tf_sess() is None
    with pytest.raises(RuntimeError, match="Session is already closed."):
        sess.close()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: df.train.StopAtStepHook(), "One of num_steps or last_step must be specified."),
        (
            lambda: df.train.StopAtStepHook(1, 2),
            "Only one of num_steps or last_step can be specified.",
        ),
        (
            lambda: df.train.LoggingTensorHook(["x"]),
            "either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.",
        ),
        (lambda: df.train.LoggingTensorHook(["x"], every_n_iter=0), "invalid every_n_iter=0."),
        (
            lambda: df.train.SecondOrStepTimer(),
            "Either every_secs or every_steps should be provided.",
        ),
        (
            lambda: df.train.SecondOrStepTimer(1, 1),
            "Can not provide both every_secs and every_steps.",
        ),
        (
            lambda: df.train.SummarySaverHook(save_steps=1),
            "Exactly one of scaffold or summary_op must be provided.",
        ),
        (
            lambda: df.train.StepCounterHook(every_n_steps=None),
            "exactly one of every_n_steps and every_n_secs should be provided.",
        ),
        (
            lambda: df.train.CheckpointSaverHook("d", save_steps=1, saver=1, scaffold=1),
            "You cannot provide both saver and scaffold.",
        ),
    ],
)
def test_hook_arguments_are_checked_with_tensorflows_messages(make, message):
    with pytest.raises(ValueError) as raised:
        make()
    assert str(raised.value) == message


def test_second_or_step_timer_triggers_first_then_every_n_steps():
    timer = df.train.SecondOrStepTimer(every_steps=3)
    assert timer.should_trigger_for_step(0)
    assert timer.update_last_triggered_step(0) == (None, None)
    assert [s for s in range(1, 8) if timer.should_trigger_for_step(s)] == [3, 4, 5, 6, 7]
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(3)
    assert elapsed_steps == 3 and elapsed_secs >= 0
    assert timer.last_triggered_step() == 3
    assert not timer.should_trigger_for_step(3)


def test_a_restored_saver_keeps_deleting_the_oldest_checkpoints(tmp_path):
    def train(steps):
        with df.Graph().as_default():
            _, _, _, train_op = least_squares()
            scaffold = df.train.Scaffold(saver=df.train.Saver(max_to_keep=2))
            hooks = [
                df.train.StopAtStepHook(num_steps=steps),
                df.train.CheckpointSaverHook(str(tmp_path), save_steps=1, scaffold=scaffold),
            ]
            with df.train.MonitoredSession(
                df.train.ChiefSessionCreator(scaffold, checkpoint_dir=str(tmp_path)), hooks
            ) as sess:
                while not sess.should_stop():
                    sess.run(train_op)

    train(2)
    train(2)
    kept = sorted(name for name in os.listdir(tmp_path) if name.endswith(".npz"))
    assert kept == ["model.ckpt-3.npz", "model.ckpt-4.npz"]


def test_training_without_the_tensorboard_extra_checkpoints_and_writes_no_events(
    tmp_path, monkeypatch
):
    from dataflow.framework.tensorboard_protos import MissingExtraError
    from dataflow.io import summary

    def missing():
        raise MissingExtraError("tensorboardX is not installed")

    monkeypatch.setattr(summary, "protos", missing)
    _, _, _, train_op = least_squares()
    with df.train.MonitoredTrainingSession(
        checkpoint_dir=str(tmp_path),
        save_summaries_steps=1,
        log_step_count_steps=1,
        hooks=[df.train.StopAtStepHook(last_step=3)],
    ) as sess:
        while not sess.should_stop():
            sess.run(train_op)
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint",
        "model.ckpt-0.meta",
        "model.ckpt-0.npz",
        "model.ckpt-3.meta",
        "model.ckpt-3.npz",
    ]


def train_losing_the_worker_once(error_class, lose_at_step):
    """`least_squares`, whose step raises ``error_class`` once (a worker or parameter
    server lost) when it starts at global step ``lose_at_step``; returns the ops and the
    steps at which the worker was lost."""
    global_step = df.train.get_or_create_global_step()
    w = df.Variable(0.0, name="w")
    lost_at = []

    def check_the_worker(step):
        if step == lose_at_step and not lost_at:
            lost_at.append(int(step))
            raise error_class(None, None, "the parameter server restarted")
        return step

    check = df.py_func(check_the_worker, [global_step], df.int64, name="check_the_worker")
    with df.control_dependencies([check]):
        loss = df.square(w - 3.0, name="loss")
        train_op = df.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    return w, train_op, lost_at


@pytest.mark.parametrize("error_class", [df.errors.UnavailableError, df.errors.AbortedError])
def test_a_lost_worker_recreates_the_session_from_the_last_checkpoint_and_training_goes_on(
    tmp_path, error_class
):
    w, train_op, lost_at = train_losing_the_worker_once(error_class, lose_at_step=5)
    recorder = RecordingHook()
    hooks = [
        df.train.StopAtStepHook(last_step=8),
        df.train.CheckpointSaverHook(str(tmp_path), save_steps=2),
        recorder,
    ]
    creator = df.train.ChiefSessionCreator(checkpoint_dir=str(tmp_path))
    calls = 0
    with df.train.MonitoredSession(session_creator=creator, hooks=hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
            calls += 1
    assert lost_at == [5]
    # Five steps, then the sixth call recreates the session from the checkpoint of step 4 and
    # runs again: steps 5 to 8 are four calls.
    assert calls == 9
    assert recorder.calls.count("begin") == 1
    assert recorder.calls.count("after_create_session") == 2
    assert recorder.calls.count("end") == 1
    assert df.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-8")
    saved = np.load(os.path.join(tmp_path, "model.ckpt-8.npz"))
    np.testing.assert_allclose(saved["w.npy"], 3.0 * (1 - 0.8**8), rtol=1e-6)


def test_creating_a_session_is_tried_again_while_the_worker_is_lost():
    global_step, _, _, train_op = least_squares()

    class LostForTwoAttempts(df.train.SessionCreator):
        attempts = 0

        def create_session(self):
            self.attempts += 1
            if self.attempts <= 2:
                raise df.errors.UnavailableError(None, None, "the worker is not reachable")
            return df.train.ChiefSessionCreator().create_session()

    creator = LostForTwoAttempts()
    recorder = RecordingHook()
    with df.train.MonitoredSession(session_creator=creator, hooks=[recorder]) as sess:
        sess.run(train_op)
        assert sess.run(global_step) == 1
    assert creator.attempts == 3
    assert recorder.calls.count("after_create_session") == 1


def test_a_singular_monitored_session_does_not_recover_a_lost_worker(tmp_path):
    _, train_op, lost_at = train_losing_the_worker_once(df.errors.UnavailableError, 2)
    with pytest.raises(df.errors.UnavailableError, match="parameter server restarted"):
        with df.train.SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as sess:
            while not sess.should_stop():
                sess.run(train_op)
    assert lost_at == [2]


def test_a_session_creator_without_create_session_names_itself():
    with pytest.raises(NotImplementedError, match="create_session is not implemented for <"):
        df.train.SessionCreator().create_session()

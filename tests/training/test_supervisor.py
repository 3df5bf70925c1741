"""Supervisor and basic_train_loop: TF1's older training helper, restoring from its logdir,
saving on a timer, and stopping cleanly or with the loop's exception."""

import os
import time

import numpy as np
import pytest

import dataflow as df


def least_squares():
    global_step = df.train.get_or_create_global_step()
    w = df.Variable(0.0, name="w")
    loss = df.square(w - 3.0, name="loss")
    train_op = df.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    return global_step, w, train_op


def test_basic_train_loop_runs_steps_until_a_stop_is_requested(tmp_path):
    global_step, w, train_op = least_squares()
    supervisor = df.train.Supervisor(logdir=str(tmp_path), save_model_secs=0)
    assert df.get_default_graph().finalized
    values = []

    def train_step(sess):
        sess.run(train_op)
        if sess.run(global_step) >= 4:
            values.append(sess.run(w))
            supervisor.request_stop()

    df.train.basic_train_loop(supervisor, train_step)
    np.testing.assert_allclose(values, [3.0 * (1 - 0.8**4)], rtol=1e-6)
    assert df.train.latest_checkpoint(str(tmp_path)) is None  # save_model_secs=0: no saver thread


def test_managed_session_restores_the_newest_checkpoint_of_its_logdir(tmp_path):
    with df.Graph().as_default():
        global_step, _, train_op = least_squares()
        supervisor = df.train.Supervisor(logdir=str(tmp_path), save_model_secs=0)
        with supervisor.managed_session() as sess:
            for _ in range(3):
                sess.run(train_op)
            supervisor.saver.save(sess, supervisor.save_path, global_step=global_step)
    with df.Graph().as_default():
        global_step, w, _ = least_squares()
        supervisor = df.train.Supervisor(logdir=str(tmp_path), save_model_secs=0)
        with supervisor.managed_session() as sess:
            assert sess.run(global_step) == 3
            np.testing.assert_allclose(sess.run(w), 3.0 * (1 - 0.8**3), rtol=1e-6)


def test_the_checkpoint_service_saves_on_its_timer(tmp_path):
    least_squares()
    supervisor = df.train.Supervisor(logdir=str(tmp_path), save_model_secs=0.05)
    with supervisor.managed_session():
        deadline = time.monotonic() + 10
        while df.train.latest_checkpoint(str(tmp_path)) is None and time.monotonic() < deadline:
            time.sleep(0.02)
    assert os.path.basename(df.train.latest_checkpoint(str(tmp_path))) == "model.ckpt-0"


def test_out_of_range_in_a_managed_session_is_a_clean_stop():
    element = df.data.make_one_shot_iterator(df.data.Dataset.range(2)).get_next()
    supervisor = df.train.Supervisor(logdir=None)
    seen = []
    with supervisor.managed_session() as sess:
        while not supervisor.should_stop():
            seen.append(sess.run(element))
    assert seen == [0, 1]


def test_an_exception_in_a_managed_session_is_reraised_and_closes_the_session():
    _, w, _ = least_squares()
    supervisor = df.train.Supervisor(logdir=None)
    with pytest.raises(ValueError, match="loop failed"):
        with supervisor.managed_session() as sess:
            raise ValueError("loop failed")
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(w)

"""``df.debugging.enable_check_numerics``: every float op made while it is on checks its
outputs for Inf and NaN when it runs, naming the op and the line that made it."""

import numpy as np
import pytest

import dataflow as df
from dataflow.client import compiler

tf = df.compat.v1


@pytest.fixture(autouse=True)
def _checks_off_afterwards():
    with tf.Graph().as_default():
        yield
    tf.debugging.disable_check_numerics()


def test_an_op_giving_inf_does_fail_the_run_naming_it_and_its_line():
    tf.debugging.enable_check_numerics()
    x = tf.placeholder(tf.float32, [2])
    doubled_log = tf.log(x) * 2.0
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(doubled_log, {x: [1.0, 2.0]}), [0.0, 1.3862944])
        with pytest.raises(df.errors.InvalidArgumentError) as caught:
            sess.run(doubled_log, {x: [0.0, 2.0]})
        message = str(caught.value)
        assert 'Detected Infinity or NaN in output 0 of graph op "Log"' in message
        assert "Tensor had -Inf values" in message
        assert "test_added_check_numerics.py" in message
        # the Session stays usable
        assert sess.run(doubled_log, {x: [1.0, 1.0]}).tolist() == [0.0, 0.0]


def test_nan_is_caught_through_passes_and_compiled_plans():
    tf.debugging.enable_check_numerics()
    x = tf.placeholder(tf.float32, [])
    chain = tf.sqrt(x - 1.0) + tf.constant(1.0) * 3.0  # foldable and fusable parts
    previous = compiler.set_mode("force")
    try:
        with tf.Session() as sess:
            assert sess.run(chain, {x: 5.0}) == 5.0
            with pytest.raises(df.errors.InvalidArgumentError, match='graph op "Sqrt"'):
                sess.run(chain, {x: 0.0})
    finally:
        compiler.set_mode(previous)


def test_ops_made_before_enabling_or_after_disabling_are_not_checked():
    x = tf.placeholder(tf.float32, [])
    before = tf.log(x)
    tf.debugging.enable_check_numerics()
    tf.debugging.disable_check_numerics()
    after = tf.log(x)
    with tf.Session() as sess:
        assert np.isneginf(sess.run(before, {x: 0.0}))
        assert np.isneginf(sess.run(after, {x: 0.0}))


def test_eager_ops_are_checked_as_they_run():
    tf.debugging.enable_check_numerics()
    with df.eager_mode():
        assert float(df.log(df.constant(1.0))) == 0.0
        with pytest.raises(df.errors.InvalidArgumentError, match="NaN") as caught:
            df.sqrt(df.constant([-1.0]))
        assert "test_added_check_numerics.py" in str(caught.value)


def test_integer_ops_and_finite_values_are_left_alone():
    tf.debugging.enable_check_numerics()
    count = tf.constant(3) * 2
    big = tf.constant(np.float32(3e38))
    with tf.Session() as sess:
        assert sess.run(count) == 6
        assert sess.run(big) == np.float32(3e38)
    with pytest.raises(ValueError, match="stack_height_limit"):
        tf.debugging.enable_check_numerics(stack_height_limit=0)

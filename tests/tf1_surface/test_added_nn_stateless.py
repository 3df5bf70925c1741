"""Behaviour of nn.experimental.stateless_dropout (values from TF 2.21).  Its mask comes from
the stateless random ops of ``dataflow/ops/stateless_random_ops.py``, which these tests need."""

import numpy as np
import pytest

import dataflow as df

pytest.importorskip("dataflow.ops.stateless_random_ops")

tf = df.compat.v1


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def _check(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _x(*shape):
    return (np.arange(np.prod(shape)) % 7 - 3).reshape(shape).astype(np.float32) / 4


def test_stateless_dropout_does_give_tensorflows_mask():
    with tf.Graph().as_default():
        x = tf.constant(_x(3, 5) + 1)
        y = [
            tf.nn.experimental.stateless_dropout(x, 0.4, [1, 2]),
            tf.nn.experimental.stateless_dropout(x, tf.constant(0.5), [7, 3], noise_shape=[3, 1]),
        ]
        got = _run(y)
        _check(
            got[0],
            np.array(
                [
                    [0.4166667, 0.0, 1.25, 0.0, 0.0],
                    [2.5, 0.0, 0.0, 0.8333333, 0.0],
                    [0.0, 0.0, 2.5, 0.0, 0.4166667],
                ],
                dtype=np.float32,
            ),
        )
        _check(
            got[1],
            np.array(
                [[0.5, 1.0, 1.5, 2.0, 2.5], [0.0, 0.0, 0.0, 0.0, 0.0], [2.0, 2.5, 3.0, 3.5, 0.5]],
                dtype=np.float32,
            ),
        )


def test_stateless_dropout_does_repeat_for_a_seed_and_differ_across_seeds():
    with tf.Graph().as_default():
        x = tf.ones([50])
        a = tf.nn.experimental.stateless_dropout(x, 0.5, [3, 4])
        b = tf.nn.experimental.stateless_dropout(x, 0.5, [3, 4])
        c = tf.nn.experimental.stateless_dropout(x, 0.5, [4, 3])
        with tf.Session() as sess:
            first, again = sess.run(a), sess.run(a)
            other, different = sess.run([b, c])
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, other)
    assert (first != different).any()
    assert set(np.unique(first)) <= {0.0, 2.0}

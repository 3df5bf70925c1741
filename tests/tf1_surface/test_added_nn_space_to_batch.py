"""Behaviour of nn.with_space_to_batch (values from TF 2.21).  It rearranges its input with the
ops of ``dataflow/ops/space_batch_ops.py`` (``space_to_batch_nd``), which these tests need."""

import numpy as np
import pytest

import dataflow as df

pytest.importorskip("dataflow.ops.space_batch_ops")

tf = df.compat.v1


def _run(t):
    with tf.Session() as sess:
        return sess.run(t)


def _check(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def _x(*shape):
    return (np.arange(np.prod(shape)) % 7 - 3).reshape(shape).astype(np.float32) / 4


def _f(*shape):
    return (np.arange(np.prod(shape)) % 5 - 2).reshape(shape).astype(np.float32) / 3


def test_with_space_to_batch_does_dilate_a_same_convolution():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 7, 6, 2))
        f = tf.constant(_f(3, 3, 2, 3))
        y = tf.nn.with_space_to_batch(
            x,
            [2, 2],
            "SAME",
            lambda inp, n, p: tf.nn.conv2d(inp, f, [1, 1, 1, 1], p),
            filter_shape=[3, 3],
        )
        _check(
            _run(y),
            np.array(
                [
                    [
                        [
                            [-0.75, -0.0, -0.0833333],
                            [-1.5000001, -0.8333334, 1.0833334],
                            [0.75, -0.5833333, 0.1666667],
                            [1.3333334, -0.8333334, -1.75],
                            [-0.8333334, 0.6666666, 0.0833333],
                            [1.0833334, 1.0833334, -0.1666666],
                        ],
                        [
                            [0.5833334, 0.25, -0.0833333],
                            [-0.75, -0.0, -0.0833333],
                            [-1.5833334, -0.3333333, 0.9166667],
                            [0.75, -0.5833333, 0.1666667],
                            [0.75, -1.5000001, -0.8333334],
                            [-0.8333334, 0.6666666, 0.0833333],
                        ],
                        [
                            [0.3333333, 0.7500001, 1.1666667],
                            [1.1666666, 0.75, 0.3333333],
                            [-0.8333334, -0.0, 0.4166666],
                            [-2.3333333, 0.1666666, 1.4166666],
                            [0.5833334, -0.3333333, -0.4166667],
                            [0.1666667, -2.4166667, -0.4166667],
                        ],
                        [
                            [-0.5000001, -0.4166667, -0.3333333],
                            [0.3333333, 0.7500001, 1.1666667],
                            [1.25, 0.4166667, 0.0],
                            [-0.8333334, -0.0, 0.4166666],
                            [-1.3333334, 1.1666666, 0.75],
                            [0.5833334, -0.3333333, -0.4166667],
                        ],
                        [
                            [1.5833334, -0.4166666, -2.4166667],
                            [-0.5000001, -0.4166667, -0.3333333],
                            [1.0, 1.4166666, 0.1666667],
                            [1.25, 0.4166667, 0.0],
                            [-0.9166667, 0.3333333, 0.7500001],
                            [-1.3333334, 1.1666666, 0.75],
                        ],
                        [
                            [-0.0833333, 0.0833333, 0.6666667],
                            [1.0833334, -0.8333333, -1.5],
                            [0.0833333, 0.1666667, -0.5833334],
                            [0.5, 0.9166666, -0.3333333],
                            [0.25, -0.0833333, 0.0],
                            [-0.0, -0.0833333, 0.25],
                        ],
                        [
                            [-1.8333334, -0.1666667, 1.0833334],
                            [-0.0833333, 0.0833333, 0.6666667],
                            [0.25, -1.7500001, -0.8333334],
                            [0.0833333, 0.1666667, -0.5833334],
                            [0.5, 1.0833334, -0.8333333],
                            [0.25, -0.0833333, 0.0],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_with_space_to_batch_does_dilate_a_valid_pool():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 7, 5, 2))
        y = tf.nn.with_space_to_batch(
            x, [2, 1], "VALID", lambda inp, n, p: tf.nn.max_pool(inp, [1, 2, 2, 1], [1, 1, 1, 1], p)
        )
        _check(
            _run(y),
            np.array(
                [
                    [
                        [[0.75, 0.0], [0.25, 0.5], [0.75, 0.75], [0.75, 0.75]],
                        [[0.5, 0.75], [0.75, 0.75], [0.75, 0.0], [0.25, 0.5]],
                        [[0.75, 0.75], [0.0, 0.25], [0.5, 0.75], [0.75, 0.75]],
                        [[0.25, 0.5], [0.75, 0.75], [0.75, 0.75], [0.0, 0.25]],
                        [[0.75, 0.75], [0.75, 0.0], [0.25, 0.5], [0.75, 0.75]],
                    ],
                    [
                        [[0.75, 0.0], [0.25, 0.5], [0.75, 0.75], [0.75, 0.75]],
                        [[0.5, 0.75], [0.75, 0.75], [0.75, 0.0], [0.25, 0.5]],
                        [[0.75, 0.75], [0.0, 0.25], [0.5, 0.75], [0.75, 0.75]],
                        [[0.25, 0.5], [0.75, 0.75], [0.75, 0.75], [0.0, 0.25]],
                        [[0.75, 0.75], [0.75, 0.0], [0.25, 0.5], [0.75, 0.75]],
                    ],
                ],
                dtype=np.float32,
            ),
        )


def test_with_space_to_batch_does_take_spatial_dims():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 5, 3, 6))
        y = tf.nn.with_space_to_batch(
            x,
            [2, 3],
            "VALID",
            lambda inp, n, p: tf.nn.avg_pool(inp, [1, 2, 1, 1], [1, 1, 1, 1], p),
            spatial_dims=[1, 3],
        )
        _check(
            _run(y),
            np.array(
                [
                    [
                        [
                            [-0.625, -0.375, -0.125, 0.125, 0.375, 0.625],
                            [0.0, -0.625, -0.375, -0.125, 0.125, 0.375],
                            [0.625, 0.0, -0.625, -0.375, -0.125, 0.125],
                        ],
                        [
                            [0.375, 0.625, 0.0, -0.625, -0.375, -0.125],
                            [0.125, 0.375, 0.625, 0.0, -0.625, -0.375],
                            [-0.125, 0.125, 0.375, 0.625, 0.0, -0.625],
                        ],
                        [
                            [-0.375, -0.125, 0.125, 0.375, 0.625, 0.0],
                            [-0.625, -0.375, -0.125, 0.125, 0.375, 0.625],
                            [0.0, -0.625, -0.375, -0.125, 0.125, 0.375],
                        ],
                    ],
                    [
                        [
                            [0.0, -0.625, -0.375, -0.125, 0.125, 0.375],
                            [0.625, 0.0, -0.625, -0.375, -0.125, 0.125],
                            [0.375, 0.625, 0.0, -0.625, -0.375, -0.125],
                        ],
                        [
                            [0.125, 0.375, 0.625, 0.0, -0.625, -0.375],
                            [-0.125, 0.125, 0.375, 0.625, 0.0, -0.625],
                            [-0.375, -0.125, 0.125, 0.375, 0.625, 0.0],
                        ],
                        [
                            [-0.625, -0.375, -0.125, 0.125, 0.375, 0.625],
                            [0.0, -0.625, -0.375, -0.125, 0.125, 0.375],
                            [0.625, 0.0, -0.625, -0.375, -0.125, 0.125],
                        ],
                    ],
                ],
                dtype=np.float32,
            ),
        )


def test_with_space_to_batch_does_handle_unknown_sizes():
    with tf.Graph().as_default():
        x = tf.placeholder_with_default(tf.constant(_x(1, 7, 6, 2)), [None, None, None, 2])
        f = tf.constant(_f(3, 2, 2, 1))
        y = tf.nn.with_space_to_batch(
            x,
            [3, 2],
            "SAME",
            lambda inp, n, p: tf.nn.conv2d(inp, f, [1, 1, 1, 1], p),
            filter_shape=[3, 2],
        )
        _check(
            _run(y),
            np.array(
                [
                    [
                        [[0.0], [-1.1666667], [0.4166667], [0.8333334], [0.0833333], [-0.25]],
                        [
                            [0.6666667],
                            [-0.4166667],
                            [-1.1666667],
                            [0.4166667],
                            [0.8333334],
                            [0.4166667],
                        ],
                        [[-0.4166667], [0.9166667], [-0.4166667], [-1.1666667], [0.4166667], [0.5]],
                        [
                            [-0.3333333],
                            [0.1666667],
                            [0.8333333],
                            [-0.8333334],
                            [-1.3333334],
                            [0.4166667],
                        ],
                        [[0.0], [0.4166667], [0.5], [0.0], [-0.5000001], [-0.4166667]],
                        [[-0.0], [-0.25], [0.4166667], [0.5], [0.0], [-0.5]],
                        [[0.0], [0.25], [-0.25], [0.4166667], [0.5], [0.0]],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_with_space_to_batch_does_call_op_directly_at_rate_one():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 4, 1))
        y = tf.nn.with_space_to_batch(
            x, [1, 1], "SAME", lambda inp, n, p: tf.nn.avg_pool(inp, [1, 3, 3, 1], [1, 2, 2, 1], p)
        )
        _check(
            _run(y), np.array([[[[-0.0833333], [0.0]], [[-0.0416667], [-0.25]]]], dtype=np.float32)
        )


def test_with_space_to_batch_does_reject_bad_arguments():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 4, 1))
        with pytest.raises(ValueError, match="filter_shape"):
            tf.nn.with_space_to_batch(x, [2, 2], "SAME", lambda i, n, p: i)
        with pytest.raises(ValueError, match="spatial_dims"):
            tf.nn.with_space_to_batch(x, [2, 2], "VALID", lambda i, n, p: i, spatial_dims=[2, 1])
        with pytest.raises(ValueError, match="positive"):
            tf.nn.with_space_to_batch(x, [0, 2], "VALID", lambda i, n, p: i)

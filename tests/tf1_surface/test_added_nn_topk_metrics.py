"""Behaviour of the tf.metrics top-k names added to close tf.compat.v1 surface gaps
(values from TF 2.21: the metric after streaming two or three batches, and the last update)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(t):
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        return sess.run(t)


def _run_metric(value, update, step, steps):
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        updates = [sess.run(update, {step: i}) for i in range(steps)]
        return [sess.run(value), updates[-1]]


def _check(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_precision_at_k_does_score_the_top_ids():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        pred = tf.gather(
            tf.constant(
                np.array(
                    [
                        [
                            [0.1, 0.5, 0.2, 0.9, 0.3],
                            [0.8, 0.1, 0.4, 0.3, 0.05],
                            [0.2, 0.25, 0.6, 0.1, 0.7],
                        ],
                        [
                            [0.3, 0.2, 0.9, 0.1, 0.6],
                            [0.05, 0.5, 0.3, 0.4, 0.2],
                            [0.9, 0.8, 0.7, 0.6, 0.5],
                        ],
                    ],
                    np.float32,
                )
            ),
            step,
        )
        lab = tf.gather(
            tf.constant(
                np.array([[[3, 1], [2, 7]], [[0, 4], [1, 2]], [[2, -1], [4, 0]]], np.int64)[
                    [0, 1, 2]
                ]
                .reshape(3, 2, 2)[:, 0, :][None]
                .repeat(2, 0)
            ),
            step,
        )
        w = tf.gather(tf.constant(np.array([[1.0, 2.0, 0.5], [1.0, 0.0, 1.0]], np.float32)), step)
        y, updates = tf.metrics.precision_at_k(lab, pred, 2)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.3333333, dtype=np.float64))
        _check(got[1], np.array(0.3333333, dtype=np.float64))


def test_precision_at_k_does_weigh_and_select_a_class():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        pred = tf.gather(
            tf.constant(
                np.array(
                    [
                        [
                            [0.1, 0.5, 0.2, 0.9, 0.3],
                            [0.8, 0.1, 0.4, 0.3, 0.05],
                            [0.2, 0.25, 0.6, 0.1, 0.7],
                        ],
                        [
                            [0.3, 0.2, 0.9, 0.1, 0.6],
                            [0.05, 0.5, 0.3, 0.4, 0.2],
                            [0.9, 0.8, 0.7, 0.6, 0.5],
                        ],
                    ],
                    np.float32,
                )
            ),
            step,
        )
        lab = tf.gather(
            tf.constant(
                np.array([[[3, 1], [2, 7]], [[0, 4], [1, 2]], [[2, -1], [4, 0]]], np.int64)[
                    [0, 1, 2]
                ]
                .reshape(3, 2, 2)[:, 0, :][None]
                .repeat(2, 0)
            ),
            step,
        )
        w = tf.gather(tf.constant(np.array([[1.0, 2.0, 0.5], [1.0, 0.0, 1.0]], np.float32)), step)
        y, updates = tf.metrics.precision_at_k(lab, pred, 2, class_id=3, weights=w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(1.0, dtype=np.float64))
        _check(got[1], np.array(1.0, dtype=np.float64))


def test_recall_at_k_does_score_the_top_ids():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        pred = tf.gather(
            tf.constant(
                np.array(
                    [
                        [
                            [0.1, 0.5, 0.2, 0.9, 0.3],
                            [0.8, 0.1, 0.4, 0.3, 0.05],
                            [0.2, 0.25, 0.6, 0.1, 0.7],
                        ],
                        [
                            [0.3, 0.2, 0.9, 0.1, 0.6],
                            [0.05, 0.5, 0.3, 0.4, 0.2],
                            [0.9, 0.8, 0.7, 0.6, 0.5],
                        ],
                    ],
                    np.float32,
                )
            ),
            step,
        )
        lab = tf.gather(
            tf.constant(
                np.array([[[3, 1], [2, 7]], [[0, 4], [1, 2]], [[2, -1], [4, 0]]], np.int64)[
                    [0, 1, 2]
                ]
                .reshape(3, 2, 2)[:, 0, :][None]
                .repeat(2, 0)
            ),
            step,
        )
        w = tf.gather(tf.constant(np.array([[1.0, 2.0, 0.5], [1.0, 0.0, 1.0]], np.float32)), step)
        y, updates = tf.metrics.recall_at_k(lab, pred, 3, weights=w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.5, dtype=np.float64))
        _check(got[1], np.array(0.5, dtype=np.float64))


def test_recall_at_k_does_select_a_class():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        pred = tf.gather(
            tf.constant(
                np.array(
                    [
                        [
                            [0.1, 0.5, 0.2, 0.9, 0.3],
                            [0.8, 0.1, 0.4, 0.3, 0.05],
                            [0.2, 0.25, 0.6, 0.1, 0.7],
                        ],
                        [
                            [0.3, 0.2, 0.9, 0.1, 0.6],
                            [0.05, 0.5, 0.3, 0.4, 0.2],
                            [0.9, 0.8, 0.7, 0.6, 0.5],
                        ],
                    ],
                    np.float32,
                )
            ),
            step,
        )
        lab = tf.gather(
            tf.constant(
                np.array([[[3, 1], [2, 7]], [[0, 4], [1, 2]], [[2, -1], [4, 0]]], np.int64)[
                    [0, 1, 2]
                ]
                .reshape(3, 2, 2)[:, 0, :][None]
                .repeat(2, 0)
            ),
            step,
        )
        w = tf.gather(tf.constant(np.array([[1.0, 2.0, 0.5], [1.0, 0.0, 1.0]], np.float32)), step)
        y, updates = tf.metrics.recall_at_k(lab, pred, 1, class_id=2)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.0, dtype=np.float64))
        _check(got[1], np.array(0.0, dtype=np.float64))


def test_precision_and_recall_at_top_k_do_take_ids():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        pred = tf.gather(
            tf.constant(np.array([[[3, 1], [0, 2], [4, 2]], [[2, 4], [1, 3], [0, 1]]], np.int32)),
            step,
        )
        lab = tf.gather(tf.constant(np.array([[3, 2, 4], [1, 1, 0]], np.int64)), step)
        w = None
        y, updates = tf.metrics.precision_at_top_k(lab, pred, 2)
        yr, ur = tf.metrics.recall_at_top_k(lab, pred)
        y, updates = tf.stack([y, yr]), tf.stack([updates, ur])
        del w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array([0.4166667, 0.8333333], dtype=np.float64))
        _check(got[1], np.array([0.4166667, 0.8333333], dtype=np.float64))


def test_precision_at_k_does_take_sparse_labels():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 1
        pred = tf.constant(
            np.array(
                [[0.1, 0.5, 0.2, 0.9, 0.3], [0.8, 0.1, 0.4, 0.3, 0.05], [0.2, 0.25, 0.6, 0.1, 0.7]],
                np.float32,
            )
        )
        lab = tf.SparseTensor(
            [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
            tf.constant([3, 0, 2, 4, 1, 9], tf.int64),
            [3, 3],
        )
        w = None
        y, updates = tf.metrics.sparse_precision_at_k(lab, pred, 2)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.5, dtype=np.float64))
        _check(got[1], np.array(0.5, dtype=np.float64))


def test_recall_at_k_does_take_sparse_labels_and_a_class():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 1
        pred = tf.constant(
            np.array(
                [[0.1, 0.5, 0.2, 0.9, 0.3], [0.8, 0.1, 0.4, 0.3, 0.05], [0.2, 0.25, 0.6, 0.1, 0.7]],
                np.float32,
            )
        )
        lab = tf.SparseTensor(
            [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
            tf.constant([3, 0, 2, 4, 1, 9], tf.int64),
            [3, 3],
        )
        w = None
        y, updates = tf.metrics.recall_at_k(lab, pred, 2, class_id=4)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(1.0, dtype=np.float64))
        _check(got[1], np.array(1.0, dtype=np.float64))


def test_average_precision_at_k_does_average_over_examples():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        pred = tf.gather(
            tf.constant(
                np.array(
                    [
                        [
                            [0.1, 0.5, 0.2, 0.9, 0.3],
                            [0.8, 0.1, 0.4, 0.3, 0.05],
                            [0.2, 0.25, 0.6, 0.1, 0.7],
                        ],
                        [
                            [0.3, 0.2, 0.9, 0.1, 0.6],
                            [0.05, 0.5, 0.3, 0.4, 0.2],
                            [0.9, 0.8, 0.7, 0.6, 0.5],
                        ],
                    ],
                    np.float32,
                )
            ),
            step,
        )
        lab = tf.gather(
            tf.constant(
                np.array([[[3, 1], [2, 7]], [[0, 4], [1, 2]], [[2, -1], [4, 0]]], np.int64)[
                    [0, 1, 2]
                ]
                .reshape(3, 2, 2)[:, 0, :][None]
                .repeat(2, 0)
            ),
            step,
        )
        w = tf.gather(tf.constant(np.array([[1.0, 2.0, 0.5], [1.0, 0.0, 1.0]], np.float32)), step)
        y, updates = tf.metrics.average_precision_at_k(lab, pred, 3)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.3888889, dtype=np.float64))
        _check(got[1], np.array(0.3888889, dtype=np.float64))


def test_average_precision_at_k_does_weigh_examples():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        pred = tf.gather(
            tf.constant(
                np.array(
                    [
                        [
                            [0.1, 0.5, 0.2, 0.9, 0.3],
                            [0.8, 0.1, 0.4, 0.3, 0.05],
                            [0.2, 0.25, 0.6, 0.1, 0.7],
                        ],
                        [
                            [0.3, 0.2, 0.9, 0.1, 0.6],
                            [0.05, 0.5, 0.3, 0.4, 0.2],
                            [0.9, 0.8, 0.7, 0.6, 0.5],
                        ],
                    ],
                    np.float32,
                )
            ),
            step,
        )
        lab = tf.gather(
            tf.constant(
                np.array([[[3, 1], [2, 7]], [[0, 4], [1, 2]], [[2, -1], [4, 0]]], np.int64)[
                    [0, 1, 2]
                ]
                .reshape(3, 2, 2)[:, 0, :][None]
                .repeat(2, 0)
            ),
            step,
        )
        w = tf.gather(tf.constant(np.array([[1.0, 2.0, 0.5], [1.0, 0.0, 1.0]], np.float32)), step)
        y, updates = tf.metrics.sparse_average_precision_at_k(lab, pred, 2, weights=w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.4090909, dtype=np.float64))
        _check(got[1], np.array(0.4090909, dtype=np.float64))


def test_average_precision_at_k_does_take_sparse_labels():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 1
        pred = tf.constant(
            np.array(
                [[0.1, 0.5, 0.2, 0.9, 0.3], [0.8, 0.1, 0.4, 0.3, 0.05], [0.2, 0.25, 0.6, 0.1, 0.7]],
                np.float32,
            )
        )
        lab = tf.SparseTensor(
            [[0, 0], [0, 1], [1, 0], [2, 0], [2, 1], [2, 2]],
            tf.constant([3, 0, 2, 4, 1, 9], tf.int64),
            [3, 3],
        )
        w = None
        y, updates = tf.metrics.average_precision_at_k(lab, pred, 4)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.5185185, dtype=np.float64))
        _check(got[1], np.array(0.5185185, dtype=np.float64))


def test_average_precision_at_k_does_reject_k_below_one():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="k"):
            tf.metrics.average_precision_at_k(tf.constant([[1]], tf.int64), [[0.5, 0.2]], 0)


def test_precision_at_k_does_name_its_variables_as_tf():
    with tf.Graph().as_default():
        labels = tf.constant([[1], [0]], tf.int64)
        tf.metrics.precision_at_k(labels, [[0.1, 0.9], [0.8, 0.2]], 1)
        tf.metrics.average_precision_at_k(labels, [[0.1, 0.9], [0.8, 0.2]], 1)
        names = sorted(v.op.name for v in tf.local_variables())
    assert names == [
        "average_precision_at_1/max",
        "average_precision_at_1/total",
        "precision_at_1/false_positive_at_1",
        "precision_at_1/true_positive_at_1",
    ]

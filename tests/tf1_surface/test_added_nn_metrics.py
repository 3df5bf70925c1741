"""Behaviour of the tf.metrics and tf.losses names added to close tf.compat.v1 surface gaps
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


def test_mean_absolute_error_does_stream_weighted_batches():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 3
        lab = tf.gather(
            tf.constant(
                np.array(
                    [[0.5, 1.0, -2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.0, 0.25, 0.5, 1.0]], np.float32
                )
            ),
            step,
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.5, -1.0, 2.0], [0.0, 2.5, 3.0, 1.0], [0.5, 0.25, 1.0, 0.0]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.0, 2.0, 1.0], [0.5, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.mean_absolute_error(lab, pred, w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.7142857, dtype=np.float32))
        _check(got[1], np.array(0.7142857, dtype=np.float32))


def test_root_mean_squared_error_does_stream_batches():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 3
        lab = tf.gather(
            tf.constant(
                np.array(
                    [[0.5, 1.0, -2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.0, 0.25, 0.5, 1.0]], np.float32
                )
            ),
            step,
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.5, -1.0, 2.0], [0.0, 2.5, 3.0, 1.0], [0.5, 0.25, 1.0, 0.0]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.0, 2.0, 1.0], [0.5, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.root_mean_squared_error(lab, pred)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(1.1989579, dtype=np.float32))
        _check(got[1], np.array(1.1989579, dtype=np.float32))


def test_mean_relative_error_does_skip_zero_normalizers():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 3
        lab = tf.gather(
            tf.constant(
                np.array(
                    [[0.5, 1.0, -2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.0, 0.25, 0.5, 1.0]], np.float32
                )
            ),
            step,
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.5, -1.0, 2.0], [0.0, 2.5, 3.0, 1.0], [0.5, 0.25, 1.0, 0.0]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.0, 2.0, 1.0], [0.5, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.mean_relative_error(lab, pred, lab, w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.2619048, dtype=np.float32))
        _check(got[1], np.array(0.2619048, dtype=np.float32))


def test_mean_cosine_distance_does_reduce_along_dim():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 3
        lab = tf.gather(
            tf.constant(
                np.array(
                    [[0.5, 1.0, -2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.0, 0.25, 0.5, 1.0]], np.float32
                )
            ),
            step,
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.5, -1.0, 2.0], [0.0, 2.5, 3.0, 1.0], [0.5, 0.25, 1.0, 0.0]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.0, 2.0, 1.0], [0.5, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.mean_cosine_distance(
            tf.reshape(lab, [2, 2]), tf.reshape(pred, [2, 2]), 1
        )
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(-2.59375, dtype=np.float32))
        _check(got[1], np.array(-2.59375, dtype=np.float32))


def test_mean_tensor_does_average_element_wise():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 3
        lab = tf.gather(
            tf.constant(
                np.array(
                    [[0.5, 1.0, -2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.0, 0.25, 0.5, 1.0]], np.float32
                )
            ),
            step,
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.5, -1.0, 2.0], [0.0, 2.5, 3.0, 1.0], [0.5, 0.25, 1.0, 0.0]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.0, 2.0, 1.0], [0.5, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.mean_tensor(pred, w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array([0.6, 1.375, 0.5, 1.0], dtype=np.float32))
        _check(got[1], np.array([0.6, 1.375, 0.5, 1.0], dtype=np.float32))


def test_percentage_below_does_count_values_under_the_threshold():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 3
        lab = tf.gather(
            tf.constant(
                np.array(
                    [[0.5, 1.0, -2.0, 0.0], [1.0, 2.0, 3.0, 4.0], [0.0, 0.25, 0.5, 1.0]], np.float32
                )
            ),
            step,
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.5, -1.0, 2.0], [0.0, 2.5, 3.0, 1.0], [0.5, 0.25, 1.0, 0.0]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 0.0, 2.0, 1.0], [0.5, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.percentage_below(pred, 0.75, w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.5238096, dtype=np.float32))
        _check(got[1], np.array(0.5238096, dtype=np.float32))


def test_true_positives_at_thresholds_does_count_per_threshold():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(
            tf.constant(np.array([[1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1]], np.int64)), step
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[0.9, 0.2, 0.6, 0.3, 0.55, 0.1], [0.4, 0.8, 0.35, 0.05, 0.7, 0.5]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 2.0, 1.0, 0.5, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.true_positives_at_thresholds(lab, pred, [0.1, 0.5, 0.85], w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array([4.5, 3.0, 1.0], dtype=np.float32))
        _check(got[1], np.array([4.5, 3.0, 1.0], dtype=np.float32))


def test_false_positives_at_thresholds_does_count_per_threshold():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(
            tf.constant(np.array([[1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1]], np.int64)), step
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[0.9, 0.2, 0.6, 0.3, 0.55, 0.1], [0.4, 0.8, 0.35, 0.05, 0.7, 0.5]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 2.0, 1.0, 0.5, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.false_positives_at_thresholds(lab, pred, [0.1, 0.5, 0.85])
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array([4.0, 2.0, 0.0], dtype=np.float32))
        _check(got[1], np.array([4.0, 2.0, 0.0], dtype=np.float32))


def test_true_negatives_at_thresholds_does_count_per_threshold():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(
            tf.constant(np.array([[1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1]], np.int64)), step
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[0.9, 0.2, 0.6, 0.3, 0.55, 0.1], [0.4, 0.8, 0.35, 0.05, 0.7, 0.5]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 2.0, 1.0, 0.5, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.true_negatives_at_thresholds(lab, pred, [0.1, 0.5, 0.85], w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array([2.0, 5.0, 8.0], dtype=np.float32))
        _check(got[1], np.array([2.0, 5.0, 8.0], dtype=np.float32))


def test_false_negatives_at_thresholds_does_count_per_threshold():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(
            tf.constant(np.array([[1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1]], np.int64)), step
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[0.9, 0.2, 0.6, 0.3, 0.55, 0.1], [0.4, 0.8, 0.35, 0.05, 0.7, 0.5]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 2.0, 1.0, 0.5, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.false_negatives_at_thresholds(lab, pred, [0.0, 0.5, 1.0], w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array([0.0, 1.5, 4.5], dtype=np.float32))
        _check(got[1], np.array([0.0, 1.5, 4.5], dtype=np.float32))


def test_precision_at_thresholds_does_divide_counts():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(
            tf.constant(np.array([[1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1]], np.int64)), step
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[0.9, 0.2, 0.6, 0.3, 0.55, 0.1], [0.4, 0.8, 0.35, 0.05, 0.7, 0.5]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 2.0, 1.0, 0.5, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.precision_at_thresholds(lab, pred, [0.1, 0.5, 0.85], w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array([0.4285714, 0.5, 0.9999999], dtype=np.float32))
        _check(got[1], np.array([0.4285714, 0.5, 0.9999999], dtype=np.float32))


def test_recall_at_thresholds_does_divide_counts():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(
            tf.constant(np.array([[1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1]], np.int64)), step
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[0.9, 0.2, 0.6, 0.3, 0.55, 0.1], [0.4, 0.8, 0.35, 0.05, 0.7, 0.5]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 2.0, 1.0, 0.5, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.recall_at_thresholds(lab, pred, [0.1, 0.5, 0.85])
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array([1.0, 0.5, 0.1666667], dtype=np.float32))
        _check(got[1], np.array([1.0, 0.5, 0.1666667], dtype=np.float32))


def test_sensitivity_at_specificity_does_pick_the_closest_threshold():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(
            tf.constant(np.array([[1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1]], np.int64)), step
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[0.9, 0.2, 0.6, 0.3, 0.55, 0.1], [0.4, 0.8, 0.35, 0.05, 0.7, 0.5]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 2.0, 1.0, 0.5, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.sensitivity_at_specificity(lab, pred, 0.6, w, num_thresholds=11)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.8888889, dtype=np.float32))
        _check(got[1], np.array(0.8888889, dtype=np.float32))


def test_specificity_at_sensitivity_does_pick_the_closest_threshold():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(
            tf.constant(np.array([[1, 0, 1, 1, 0, 0], [0, 1, 1, 0, 0, 1]], np.int64)), step
        )
        pred = tf.gather(
            tf.constant(
                np.array(
                    [[0.9, 0.2, 0.6, 0.3, 0.55, 0.1], [0.4, 0.8, 0.35, 0.05, 0.7, 0.5]], np.float32
                )
            ),
            step,
        )
        w = tf.gather(
            tf.constant(
                np.array(
                    [[1.0, 2.0, 1.0, 0.5, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]], np.float32
                )
            ),
            step,
        )
        y, updates = tf.metrics.specificity_at_sensitivity(lab, pred, 0.7, num_thresholds=20)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.6666667, dtype=np.float32))
        _check(got[1], np.array(0.6666667, dtype=np.float32))


def test_mean_iou_does_average_class_ious():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(tf.constant(np.array([[0, 1, 2, 2, 1], [3, 0, 0, 1, 2]], np.int64)), step)
        pred = tf.gather(tf.constant(np.array([[0, 2, 2, 1, 1], [3, 0, 1, 1, 0]], np.int64)), step)
        w = tf.gather(
            tf.constant(
                np.array([[1.0, 1.0, 0.5, 2.0, 1.0], [1.0, 0.0, 1.0, 1.0, 1.0]], np.float32)
            ),
            step,
        )
        y, updates = tf.metrics.mean_iou(lab, pred, 5, w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.4444444, dtype=np.float32))
        _check(
            got[1],
            np.array(
                [
                    [1.0, 1.0, 0.0, 0.0, 0.0],
                    [0.0, 2.0, 1.0, 0.0, 0.0],
                    [1.0, 2.0, 0.5, 0.0, 0.0],
                    [0.0, 0.0, 0.0, 1.0, 0.0],
                    [0.0, 0.0, 0.0, 0.0, 0.0],
                ],
                dtype=np.float64,
            ),
        )


def test_mean_per_class_accuracy_does_average_class_accuracies():
    with tf.Graph().as_default():
        step = tf.placeholder(tf.int32, [])
        steps = 2
        lab = tf.gather(tf.constant(np.array([[0, 1, 2, 2, 1], [3, 0, 0, 1, 2]], np.int64)), step)
        pred = tf.gather(tf.constant(np.array([[0, 2, 2, 1, 1], [3, 0, 1, 1, 0]], np.int64)), step)
        w = tf.gather(
            tf.constant(
                np.array([[1.0, 1.0, 0.5, 2.0, 1.0], [1.0, 0.0, 1.0, 1.0, 1.0]], np.float32)
            ),
            step,
        )
        y, updates = tf.metrics.mean_per_class_accuracy(lab, pred, 5, w)
        del lab, pred, w
        got = _run_metric(y, updates, step, steps)
        _check(got[0], np.array(0.4619048, dtype=np.float32))
        _check(got[1], np.array([0.5, 0.6666667, 0.1428571, 1.0, 0.0], dtype=np.float32))


def test_mean_pairwise_squared_error_does_compare_all_pairs():
    with tf.Graph().as_default():
        y = tf.losses.mean_pairwise_squared_error(
            tf.constant([[1.0, 2.0, 4.0], [0.0, 1.0, -1.0]]),
            tf.constant([[2.0, 2.0, 1.0], [1.0, 0.5, 0.0]]),
        )
        _check(_run(y), np.array(10.166667, dtype=np.float32))


def test_mean_pairwise_squared_error_does_weigh_examples_of_rank_3():
    with tf.Graph().as_default():
        y = tf.losses.mean_pairwise_squared_error(
            tf.constant(np.arange(12.0).reshape(2, 3, 2) % 5),
            tf.constant(np.arange(12.0).reshape(2, 3, 2) % 3),
            weights=tf.constant([[[2.0]], [[0.5]]]),
        )
        _check(_run(y), np.array(18.833334, dtype=np.float32))


def test_mean_pairwise_squared_error_does_give_zero_without_weight():
    with tf.Graph().as_default():
        y = tf.losses.mean_pairwise_squared_error(
            tf.constant([[1.0, 2.0]]), tf.constant([[0.0, 5.0]]), weights=0.0
        )
        _check(_run(y), np.array(0.0, dtype=np.float32))


def test_sensitivity_at_specificity_does_reject_out_of_range():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="specificity"):
            tf.metrics.sensitivity_at_specificity([1, 0], [0.5, 0.2], 1.5)
        with pytest.raises(ValueError, match="sensitivity"):
            tf.metrics.specificity_at_sensitivity([1, 0], [0.5, 0.2], -0.1)


def test_metrics_at_thresholds_do_name_their_variables_as_tf():
    with tf.Graph().as_default():
        tf.metrics.true_positives_at_thresholds([1, 0], [0.5, 0.2], [0.3])
        tf.metrics.precision_at_thresholds([1, 0], [0.5, 0.2], [0.3])
        names = sorted(v.op.name for v in tf.local_variables())
    assert names == [
        "precision_at_thresholds/false_positives",
        "precision_at_thresholds/true_positives",
        "true_positives/true_positives",
    ]


def test_mean_tensor_does_start_at_zero_and_collect():
    with tf.Graph().as_default():
        value, update = tf.metrics.mean_tensor(
            tf.constant([1.0, 3.0]), metrics_collections=["m"], updates_collections=["u"]
        )
        assert tf.get_collection("m") == [value] and tf.get_collection("u") == [update]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            np.testing.assert_allclose(sess.run(value), [0.0, 0.0])
            sess.run(update)
            np.testing.assert_allclose(sess.run(value), [1.0, 3.0])


def test_mean_iou_does_return_the_confusion_matrix_as_update():
    with tf.Graph().as_default():
        value, update = tf.metrics.mean_iou([0, 1, 1], [0, 1, 0], 2)
        got = _run(update)
    np.testing.assert_allclose(got, [[1.0, 0.0], [1.0, 1.0]])


def test_mean_pairwise_squared_error_does_add_to_the_losses_collection():
    with tf.Graph().as_default():
        loss = tf.losses.mean_pairwise_squared_error([[1.0, 2.0]], [[0.0, 5.0]])
        assert tf.losses.get_losses() == [loss]
        with pytest.raises(ValueError):
            tf.losses.mean_pairwise_squared_error(None, [[0.0]])

"""Behaviour of the ``tf.bitwise``, ``tf.math``, ``tf.nn`` and ``tf.random`` names added to
close gaps of ``known_missing.txt``.

Expected values are what TensorFlow 2.21's ``tf.compat.v1`` (graph mode) gives for the same
program.
"""

import numpy as np
import pytest

import dataflow as df
import dataflow.compat.v1 as tf


def _run(*tensors):
    with df.Session() as sess:
        return sess.run(list(tensors))


def test_bitwise_and_or_xor_broadcast_over_integers():
    x = tf.constant([[12, -7, 0]], dtype=tf.int32)
    y = tf.constant([[10], [3]], dtype=tf.int32)
    a, o, x_ = _run(
        tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y), tf.bitwise.bitwise_xor(x, y)
    )
    np.testing.assert_array_equal(a, [[8, 8, 0], [0, 1, 0]])
    np.testing.assert_array_equal(o, [[14, -5, 10], [15, -5, 3]])
    np.testing.assert_array_equal(x_, [[6, -13, 10], [15, -6, 3]])
    assert a.dtype == np.int32


def test_bitwise_invert_flips_every_bit_in_the_inputs_dtype():
    (u, s) = _run(
        tf.bitwise.invert(tf.constant([0, 1, 255], dtype=tf.uint8)),
        tf.bitwise.invert(tf.constant([0, 5, -1], dtype=tf.int64)),
    )
    np.testing.assert_array_equal(u, [255, 254, 0])
    assert u.dtype == np.uint8
    np.testing.assert_array_equal(s, [-1, -6, 0])


def test_bitwise_shifts_clamp_the_amount_and_keep_the_sign_on_right_shift():
    x = tf.constant([1, -16, 3, 64], dtype=tf.int8)
    left = tf.bitwise.left_shift(x, tf.constant([1, 2, 9, -1], dtype=tf.int8))
    right = tf.bitwise.right_shift(x, tf.constant([1, 2, 9, 3], dtype=tf.int8))
    lv, rv = _run(left, right)
    # 3 << 9 clamps to 3 << 7 (wraps to -128); a negative amount clamps to 0.
    np.testing.assert_array_equal(lv, [2, -64, -128, 64])
    np.testing.assert_array_equal(rv, [0, -4, 0, 8])


def test_bitwise_ops_refuse_floats_and_have_no_gradient():
    with pytest.raises(TypeError, match="BitwiseAnd"):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([2.0]))
    x = tf.constant([3], dtype=tf.int32)
    y = tf.bitwise.bitwise_xor(x, 1, name="flip")
    assert y.op.type == "BitwiseXor" and y.op.name == "flip"
    assert tf.gradients(tf.cast(y, tf.float32), x) == [None]


def test_unsorted_segment_sqrt_n_divides_sums_by_the_root_of_the_counts():
    data = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    out = tf.math.unsorted_segment_sqrt_n(data, tf.constant([0, 2, 0, 0]), 3)
    (v,) = _run(out)
    r3 = np.sqrt(3.0)
    np.testing.assert_allclose(v, [[13 / r3, 16 / r3], [0.0, 0.0], [3.0, 4.0]], rtol=1e-6)
    assert tf.unsorted_segment_sqrt_n is tf.math.unsorted_segment_sqrt_n
    (g,) = _run(tf.gradients(tf.reduce_sum(out), data)[0])
    np.testing.assert_allclose(g, [[1 / r3] * 2, [1.0] * 2, [1 / r3] * 2, [1 / r3] * 2], rtol=1e-6)


def test_lbeta_is_the_log_beta_function_over_the_last_axis():
    (v,) = _run(tf.math.lbeta(tf.constant([[1.0, 2.0], [0.5, 0.5], [3.0, 4.0]])))
    np.testing.assert_allclose(v, [-0.6931472, 1.1447299, -4.0943446], rtol=1e-5)
    assert tf.lbeta is tf.math.lbeta


def test_nextafter_steps_one_float_towards_the_second_argument():
    x = tf.constant([1.0, 1.0, 0.0], dtype=tf.float32)
    (v,) = _run(tf.math.nextafter(x, tf.constant([2.0, 0.0, 1.0], dtype=tf.float32)))
    assert v.dtype == np.float32
    np.testing.assert_array_equal(
        v, np.array([1.0000001192092896, 0.9999999403953552, 1e-45], np.float32)
    )


def test_pool1d_pools_along_the_width_in_both_layouts():
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(1, 6, 2))
    m, a, ncw = _run(
        tf.nn.max_pool1d(x, 2, 2, "VALID"),
        tf.nn.avg_pool1d(x, 3, 2, "SAME"),
        tf.nn.max_pool1d(tf.transpose(x, [0, 2, 1]), [1, 1, 2], [1, 1, 2], "VALID", "NCW"),
    )
    np.testing.assert_array_equal(m, [[[2, 3], [6, 7], [10, 11]]])
    np.testing.assert_array_equal(a, [[[2, 3], [6, 7], [9, 10]]])
    np.testing.assert_array_equal(ncw, [[[2, 6, 10], [3, 7, 11]]])


def test_compute_average_loss_divides_the_weighted_sum_by_the_global_batch():
    loss = tf.constant([1.0, 2.0, 3.0, 6.0])
    values = _run(
        tf.nn.compute_average_loss(loss),
        tf.nn.compute_average_loss(loss, sample_weight=[1.0, 0.0, 2.0, 0.5], global_batch_size=8),
        tf.nn.compute_average_loss(loss, global_batch_size=0),
        tf.nn.scale_regularization_loss([loss[0], loss[3]]),
        tf.nn.scale_regularization_loss(loss),
    )
    assert values == [3.0, 1.25, 0.0, 7.0, 12.0]
    with pytest.raises(ValueError, match="integer"):
        tf.nn.compute_average_loss(loss, global_batch_size=2.0)


def test_top_k_gives_indices_of_the_requested_index_type_and_keeps_its_gradient():
    x = tf.constant([[3.0, 1.0, 4.0, 1.5], [2.0, 7.0, 1.0, 8.0]])
    values, indices = tf.math.top_k(x, 2, True, tf.int64, "best")
    assert indices.dtype == tf.int64 and values.op.name == "best"
    (grad,) = tf.gradients(tf.reduce_sum(values), x)
    v, i, g = _run(values, indices, grad)
    np.testing.assert_array_equal(v, [[4.0, 3.0], [8.0, 7.0]])
    np.testing.assert_array_equal(i, [[2, 0], [3, 1]])
    assert i.dtype == np.int64
    np.testing.assert_array_equal(g, [[1, 0, 1, 0], [0, 1, 0, 1]])
    assert tf.nn.top_k(x).indices.dtype == tf.int32
    with pytest.raises(TypeError, match="index_type"):
        tf.nn.top_k(x, index_type=tf.float32)


def test_cumulative_logsumexp_runs_without_overflow_and_has_tensorflows_gradient():
    x = tf.constant([[0.0, 1.0, 2.0], [1000.0, -1000.0, 1000.0]])
    y = tf.math.cumulative_logsumexp(x, axis=1)
    z = tf.math.cumulative_logsumexp(x, 1, exclusive=True, reverse=True)
    weights = tf.constant([[1.0, -2.0, 0.5], [1.0, 1.0, 1.0]])
    (g,) = tf.gradients(tf.reduce_sum(y * weights), x)
    yv, zv, gv = _run(y, z, g)
    np.testing.assert_allclose(
        yv, [[0.0, 1.3132617, 2.4076061], [1000.0, 1000.0, 1000.6932]], rtol=1e-6
    )
    np.testing.assert_allclose(
        zv, [[2.3132617, 2.0, -np.inf], [1000.0, 1000.0, -np.inf]], rtol=1e-6
    )
    np.testing.assert_allclose(
        gv, [[0.50713253, -1.3397529, 0.3326204], [2.4999225, 0.0, 0.49998546]], rtol=1e-4
    )
    with pytest.raises(TypeError, match="CumulativeLogsumexp"):
        tf.math.cumulative_logsumexp(tf.constant([1, 2]))


def test_confusion_matrix_counts_or_weighs_label_prediction_pairs():
    counts, weighed = _run(
        tf.math.confusion_matrix([1, 2, 4, 2], [2, 2, 4, 1]),
        tf.confusion_matrix(
            [0, 1, 1], [1, 1, 0], num_classes=3, dtype=tf.float32, weights=[0.5, 2.0, 1.5]
        ),
    )
    expected = np.zeros((5, 5), np.int32)
    expected[1, 2] = expected[2, 2] = expected[2, 1] = expected[4, 4] = 1
    np.testing.assert_array_equal(counts, expected)
    assert counts.dtype == np.int32
    np.testing.assert_array_equal(weighed, [[0, 0.5, 0], [1.5, 2.0, 0], [0, 0, 0]])
    with pytest.raises(df.errors.InvalidArgumentError, match="out of bound"):
        _run(tf.math.confusion_matrix([0, 3], [0, 1], num_classes=3))

"""Behaviour of the other tf.nn names added to close tf.compat.v1 surface gaps (samplers,
nn.experimental, CTC, patches and morphology; values from TF 2.21)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


def test_all_candidate_sampler_does_give_every_class_once():
    with tf.Graph().as_default():
        got = _run(tf.nn.all_candidate_sampler(tf.constant([[1, 2], [0, 4]], tf.int64), 2, 5, True))
    np.testing.assert_array_equal(got.sampled_candidates, [0, 1, 2, 3, 4])
    np.testing.assert_allclose(got.true_expected_count, np.ones((2, 2)))
    np.testing.assert_allclose(got.sampled_expected_count, np.ones(5))


def test_learned_unigram_candidate_sampler_does_learn_from_true_classes():
    with tf.Graph().as_default():
        classes = tf.constant([[1, 2], [0, 4]], tf.int64)
        sampler = tf.nn.learned_unigram_candidate_sampler(classes, 2, 3, False, 6, seed=1)
        with tf.Session() as sess:
            runs = [sess.run(sampler) for _ in range(3)]
        with tf.Session() as sess:  # a new Session starts counting again
            again = sess.run(sampler)
    # TF 2.21: 0.5, 0.6 and 0.64285713 for the true classes; 0.3 for a class never seen.
    for run, want in zip(runs, [0.5, 0.6, 0.64285713]):
        np.testing.assert_allclose(run.true_expected_count, np.full((2, 2), want), rtol=1e-6)
        assert run.sampled_candidates.shape == (3,)
        assert ((run.sampled_candidates >= 0) & (run.sampled_candidates < 6)).all()
    unseen = runs[1].sampled_candidates == 5
    np.testing.assert_allclose(runs[1].sampled_expected_count[unseen], 0.3, rtol=1e-6)
    np.testing.assert_allclose(again.true_expected_count, np.full((2, 2), 0.5))


def test_learned_unigram_candidate_sampler_does_reject_classes_out_of_range():
    with tf.Graph().as_default():
        sampler = tf.nn.learned_unigram_candidate_sampler(
            tf.constant([[7]], tf.int64), 1, 2, True, 6
        )
        with pytest.raises(df.errors.InvalidArgumentError):
            _run(sampler)


def test_general_dropout_does_drop_where_the_sampler_is_below_rate():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    noise = np.array([[0.1, 0.6, 0.5], [0.9, 0.2, 0.4]])
    with tf.Graph().as_default():
        seen = []

        def sampler(shape, dtype):
            seen.append(list(shape))
            return tf.constant(noise, dtype)

        y = tf.nn.experimental.general_dropout(tf.constant(x), 0.5, sampler)
        np.testing.assert_allclose(_run(y), [[0.0, 4.0, 6.0], [8.0, 0.0, 0.0]])
        assert seen == [[2, 3]]
        z = tf.nn.experimental.general_dropout(
            tf.constant(x), tf.constant(0.25), lambda shape, dtype: tf.constant(noise[:1], dtype),
            noise_shape=[1, 3],
        )  # fmt: skip
        np.testing.assert_allclose(_run(z), [[0.0, 8 / 3, 4.0], [0.0, 20 / 3, 8.0]])


def test_general_dropout_does_return_x_at_rate_zero_and_reject_bad_rates():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        assert tf.nn.experimental.general_dropout(x, 0.0, None) is x
        with pytest.raises(ValueError, match="rate"):
            tf.nn.experimental.general_dropout(x, 1.0, None)
        with pytest.raises(ValueError, match="floating"):
            tf.nn.experimental.general_dropout(tf.constant([1, 2]), 0.5, None)

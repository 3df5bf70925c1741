"""Behaviour of the other tf.nn names added to close tf.compat.v1 surface gaps (samplers,
nn.experimental, CTC, patches and morphology; values from TF 2.21)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(t, init=None):
    with tf.Session() as sess:
        if init is not None:
            sess.run(init)
        return sess.run(t)


def _x(*shape):
    return (np.arange(np.prod(shape)) % 7 - 3).reshape(shape).astype(np.float32) / 4


def _f(*shape):
    return (np.arange(np.prod(shape)) % 5 - 2).reshape(shape).astype(np.float32) / 3


def _check_close(got, want):
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


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


def test_learned_unigram_candidate_sampler_does_round_trip_and_start_counting_again(tmp_path):
    with tf.Graph().as_default() as graph:
        classes = tf.constant([[1, 2], [0, 4]], tf.int64)
        tf.nn.learned_unigram_candidate_sampler(classes, 2, 3, False, 6, seed=1, name="s")
    df.io.save_graph(graph, tmp_path / "g.dfg")
    loaded = df.io.load_graph(tmp_path / "g.dfg")
    with tf.Session(graph=loaded) as sess:
        counts = [sess.run("s:1") for _ in range(2)]
    np.testing.assert_allclose(counts[0], np.full((2, 2), 0.5))
    np.testing.assert_allclose(counts[1], np.full((2, 2), 0.6), rtol=1e-6)


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


def test_ctc_loss_does_score_label_sequences():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        labels = tf.SparseTensor(
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], tf.constant([1, 1, 2, 0, 2], tf.int32), [2, 3]
        )
        y = tf.nn.ctc_loss(labels, logits, [5, 4])
        _check_close(_run(y), np.array([6.0008736, 2.2482779], dtype=np.float32))


def test_ctc_loss_gradient_does_match_tf():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        labels = tf.SparseTensor(
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], tf.constant([1, 1, 2, 0, 2], tf.int32), [2, 3]
        )
        loss = tf.nn.ctc_loss(labels, logits, [5, 4])
        y = tf.gradients(tf.reduce_sum(loss * [1.0, 2.0]), logits)[0]
        _check_close(
            _run(y),
            np.array(
                [
                    [
                        [0.0573897, -0.7042667, 0.4118934, 0.2349835],
                        [-0.4537789, 0.3586138, 0.126553, -0.0313879],
                    ],
                    [
                        [0.0230887, -0.0596954, 0.3036421, -0.2670355],
                        [-0.571551, 0.4691477, 0.0787881, 0.0236156],
                    ],
                    [
                        [0.0265363, -0.406937, 0.2011631, 0.1792377],
                        [-0.4195209, 0.7247221, -0.2734523, -0.0317491],
                    ],
                    [
                        [0.0987557, -0.4856421, -0.0240442, 0.4109306],
                        [0.4274942, 0.7959579, -1.2855868, 0.0621351],
                    ],
                    [[0.4227571, 0.1562621, -0.7310719, 0.1520525], [0.0, 0.0, 0.0, 0.0]],
                ],
                dtype=np.float32,
            ),
        )


def test_ctc_loss_does_collapse_and_not_merge():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        labels = tf.SparseTensor(
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], tf.constant([1, 1, 2, 0, 2], tf.int32), [2, 3]
        )
        y = [
            tf.nn.ctc_loss(labels, logits, [5, 3], preprocess_collapse_repeated=True),
            tf.nn.ctc_loss(labels, logits, [4, 4], ctc_merge_repeated=False),
        ]
        got = _run(y)
        _check_close(got[0], np.array([3.1411076, 2.6342347], dtype=np.float32))
        _check_close(got[1], np.array([5.1341124, 6.6290741], dtype=np.float32))


def test_ctc_loss_does_ignore_longer_outputs():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        labels = tf.SparseTensor(
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], tf.constant([1, 1, 2, 0, 2], tf.int32), [2, 3]
        )
        loss = tf.nn.ctc_loss(
            labels,
            tf.transpose(logits, [1, 0, 2]),
            [3, 4],
            ignore_longer_outputs_than_inputs=True,
            time_major=False,
        )
        y = [loss, tf.gradients(tf.reduce_sum(loss), logits)[0]]
        got = _run(y)
        _check_close(got[0], np.array([np.inf, 2.2482779], dtype=np.float32))
        _check_close(
            got[1],
            np.array(
                [
                    [
                        [0.0573897, 0.2081586, 0.4118934, 0.3225583],
                        [-0.2268894, 0.1793069, 0.0632765, -0.0156939],
                    ],
                    [
                        [0.0230887, 0.0843947, 0.3036421, 0.5888745],
                        [-0.2857755, 0.2345738, 0.0393941, 0.0118078],
                    ],
                    [
                        [0.0265363, 0.0546307, 0.2011631, 0.7176698],
                        [-0.2097604, 0.3623611, -0.1367262, -0.0158746],
                    ],
                    [[0.0, 0.0, 0.0, 0.0], [0.2137471, 0.3979789, -0.6427934, 0.0310676]],
                    [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                ],
                dtype=np.float32,
            ),
        )


def test_ctc_loss_v2_does_take_dense_labels_with_blank_zero():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        y = tf.nn.ctc_loss_v2(tf.constant([[1, 1, 2], [3, 2, 0]]), logits, [3, 2], [5, 4])
        _check_close(_run(y), np.array([10.1310434, 4.1771946], dtype=np.float32))


def test_ctc_loss_v2_does_take_sparse_labels_and_a_blank_index():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        labels = tf.SparseTensor(
            [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]], tf.constant([1, 1, 2, 0, 2], tf.int32), [2, 3]
        )
        y = tf.nn.ctc_loss_v2(
            labels,
            tf.transpose(logits, [1, 0, 2]),
            None,
            [5, 4],
            logits_time_major=False,
            blank_index=1,
        )
        _check_close(_run(y), np.array([10.9502983, 1.3953718], dtype=np.float32))


def test_ctc_loss_v2_gradient_does_match_tf():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        y = tf.gradients(
            tf.nn.ctc_loss_v2(tf.constant([[1, 1, 2], [3, 2, 0]]), logits, [3, 2], [5, 4]), logits
        )[0]
        _check_close(
            _run(y),
            np.array(
                [
                    [
                        [0.021561, -0.7560128, 0.4118934, 0.3225583],
                        [0.2129418, 0.1793069, 0.0632765, -0.4555255],
                    ],
                    [
                        [-0.8111281, -0.0813887, 0.3036421, 0.5888745],
                        [-0.0597882, 0.2345739, 0.0270193, -0.2018049],
                    ],
                    [
                        [-0.1748, -0.744033, 0.2011631, 0.7176698],
                        [-0.0036594, 0.3623611, -0.0946776, -0.2640241],
                    ],
                    [
                        [0.0114667, -0.1917213, -0.4643444, 0.644599],
                        [0.1015033, 0.3979789, -0.5965074, 0.0970253],
                    ],
                    [[-0.0617719, 0.1562621, -0.3814077, 0.2869174], [0.0, 0.0, 0.0, 0.0]],
                ],
                dtype=np.float32,
            ),
        )


def test_ctc_greedy_decoder_does_merge_and_drop_blanks():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        d, p = tf.nn.ctc_greedy_decoder(logits, [5, 3])
        y = [d[0].indices, d[0].values, d[0].dense_shape, p]
        got = _run(y)
        _check_close(got[0], np.array([[0, 0], [0, 1], [1, 0]], dtype=np.int64))
        _check_close(got[1], np.array([2, 0, 0], dtype=np.int64))
        _check_close(got[2], np.array([2, 2], dtype=np.int64))
        _check_close(got[3], np.array([[-4.5921097], [-4.3603888]], dtype=np.float32))


def test_ctc_greedy_decoder_does_keep_repeats_with_a_blank_index():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        d, p = tf.nn.ctc_greedy_decoder(
            tf.tile(logits, [2, 1, 1]), [10, 7], merge_repeated=False, blank_index=0
        )
        y = [d[0].indices, d[0].values, d[0].dense_shape, p]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [0, 6], [0, 7], [1, 0], [1, 1]],
                dtype=np.int64,
            ),
        )
        _check_close(got[1], np.array([2, 3, 3, 3, 2, 3, 3, 3, 1, 2], dtype=np.int64))
        _check_close(got[2], np.array([2, 8], dtype=np.int64))
        _check_close(got[3], np.array([[-9.1842194], [-10.714385]], dtype=np.float32))


def test_ctc_beam_search_decoder_does_find_top_paths():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.sin(np.arange(5 * 2 * 4) * 0.7).reshape(5, 2, 4).astype(np.float32) * 2
        )
        d, p = tf.nn.ctc_beam_search_decoder(logits, [5, 4], beam_width=3, top_paths=2)
        y = [d[0].indices, d[0].values, d[0].dense_shape, d[1].values, p]
        got = _run(y)
        _check_close(got[0], np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.int64))
        _check_close(got[1], np.array([2, 0, 0, 1], dtype=np.int64))
        _check_close(got[2], np.array([2, 2], dtype=np.int64))
        _check_close(got[3], np.array([2, 0, 1, 0], dtype=np.int64))
        _check_close(
            got[4], np.array([[-2.0416684, -2.2538507], [-1.5181972, -2.5571728]], dtype=np.float32)
        )


def test_ctc_beam_search_decoder_v2_does_not_merge():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.log(
                np.array(
                    [[[0.4, 0.1, 0.5]], [[0.1, 0.1, 0.8]], [[0.45, 0.05, 0.5]], [[0.6, 0.3, 0.1]]],
                    np.float32,
                )
            )
        )
        d, p = tf.nn.ctc_beam_search_decoder_v2(logits, [4], beam_width=4, top_paths=3)
        y = [d[0].values, d[1].values, d[2].values, p]
        got = _run(y)
        _check_close(got[0], np.array([0], dtype=np.int64))
        _check_close(got[1], np.array([0, 0], dtype=np.int64))
        _check_close(got[2], np.array([0, 1], dtype=np.int64))
        _check_close(got[3], np.array([[-1.2212886, -1.4970025, -2.0584631]], dtype=np.float32))


def test_ctc_beam_search_decoder_does_merge_repeats_in_output():
    with tf.Graph().as_default():
        logits = tf.constant(
            np.log(
                np.array(
                    [[[0.4, 0.1, 0.5]], [[0.1, 0.1, 0.8]], [[0.45, 0.05, 0.5]], [[0.6, 0.3, 0.1]]],
                    np.float32,
                )
            )
        )
        d, p = tf.nn.ctc_beam_search_decoder(logits, [4], beam_width=4, top_paths=3)
        y = [d[0].values, d[1].values, d[2].values, p]
        got = _run(y)
        _check_close(got[0], np.array([0], dtype=np.int64))
        _check_close(got[1], np.array([0], dtype=np.int64))
        _check_close(got[2], np.array([0, 1], dtype=np.int64))
        _check_close(got[3], np.array([[-1.2212886, -1.4970025, -2.0584631]], dtype=np.float32))


def test_ctc_unique_labels_does_number_values_per_row():
    with tf.Graph().as_default():
        y = list(tf.nn.ctc_unique_labels(tf.constant([[3, 1, 3, 0, 1], [2, 2, 2, 2, 2]])))
        got = _run(y)
        _check_close(got[0], np.array([[3, 1, 0, 0, 0], [2, 0, 0, 0, 0]], dtype=np.int64))
        _check_close(got[1], np.array([[0, 1, 0, 2, 1], [0, 0, 0, 0, 0]], dtype=np.int32))


def test_collapse_repeated_does_merge_runs():
    with tf.Graph().as_default():
        a, b = tf.nn.collapse_repeated(
            tf.constant([[1, 1, 2, 2, 2, 3], [4, 4, 4, 5, 5, 5]]), tf.constant([6, 4])
        )
        y = [a, b]
        got = _run(y)
        _check_close(got[0], np.array([[1, 2, 3], [4, 5, 0]], dtype=np.int32))
        _check_close(got[1], np.array([3, 2], dtype=np.int32))


def test_ctc_loss_does_reject_bad_labels_and_too_few_frames():
    with tf.Graph().as_default():
        logits = tf.constant(np.zeros((3, 1, 4), np.float32))
        blank_label = tf.SparseTensor([[0, 0]], tf.constant([3], tf.int32), [1, 1])
        with pytest.raises(df.errors.InvalidArgumentError, match="non-null label"):
            _run(tf.nn.ctc_loss(blank_label, logits, [3]))
        long_label = tf.SparseTensor([[0, 0], [0, 1]], tf.constant([1, 1], tf.int32), [1, 2])
        with pytest.raises(df.errors.InvalidArgumentError, match="Not enough time"):
            _run(tf.nn.ctc_loss(long_label, logits, [2]))
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.nn.ctc_loss([[1]], logits, [3])
        with pytest.raises(ValueError, match="blank_index"):
            tf.nn.ctc_loss_v2(long_label, logits, None, [3])


def test_ctc_loss_does_give_zero_for_an_empty_sequence_and_uniform_logits():
    with tf.Graph().as_default():
        logits = tf.constant(np.zeros((2, 1, 3), np.float32))
        labels = tf.SparseTensor([[0, 0]], tf.constant([0], tf.int32), [1, 1])
        got = _run(tf.nn.ctc_loss(labels, logits, [2]))
    # paths giving "0" in 2 frames of 3 equally likely classes: 0-, -0, 00 -> 3 / 9
    np.testing.assert_allclose(got, [-np.log(3 / 9)], rtol=1e-6)


def test_ctc_beam_search_decoder_does_reject_more_paths_than_beams():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="top_paths"):
            tf.nn.ctc_beam_search_decoder(np.zeros((2, 1, 3), np.float32), [2], 2, 3)


def test_extract_volume_patches_does_flatten_windows():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 4, 3, 2))
        y = tf.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 2, 2, 1], "SAME")
        _check_close(
            _run(y),
            np.array(
                [
                    [
                        [
                            [
                                [
                                    -0.75,
                                    -0.5,
                                    -0.25,
                                    0.0,
                                    0.75,
                                    -0.75,
                                    -0.5,
                                    -0.25,
                                    0.0,
                                    0.25,
                                    0.5,
                                    0.75,
                                    -0.25,
                                    0.0,
                                    0.25,
                                    0.5,
                                ],
                                [
                                    0.25,
                                    0.5,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.25,
                                    0.0,
                                    0.0,
                                    -0.75,
                                    -0.5,
                                    0.0,
                                    0.0,
                                    0.75,
                                    -0.75,
                                    0.0,
                                    0.0,
                                ],
                            ],
                            [
                                [
                                    0.5,
                                    0.75,
                                    -0.75,
                                    -0.5,
                                    0.25,
                                    0.5,
                                    0.75,
                                    -0.75,
                                    -0.5,
                                    -0.25,
                                    0.0,
                                    0.25,
                                    -0.75,
                                    -0.5,
                                    -0.25,
                                    0.0,
                                ],
                                [
                                    -0.25,
                                    0.0,
                                    0.0,
                                    0.0,
                                    -0.5,
                                    -0.25,
                                    0.0,
                                    0.0,
                                    0.5,
                                    0.75,
                                    0.0,
                                    0.0,
                                    0.25,
                                    0.5,
                                    0.0,
                                    0.0,
                                ],
                            ],
                        ],
                        [
                            [
                                [
                                    0.0,
                                    0.25,
                                    0.5,
                                    0.75,
                                    -0.25,
                                    0.0,
                                    0.25,
                                    0.5,
                                    0.75,
                                    -0.75,
                                    -0.5,
                                    -0.25,
                                    0.5,
                                    0.75,
                                    -0.75,
                                    -0.5,
                                ],
                                [
                                    -0.75,
                                    -0.5,
                                    0.0,
                                    0.0,
                                    0.75,
                                    -0.75,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.25,
                                    0.0,
                                    0.0,
                                    -0.25,
                                    0.0,
                                    0.0,
                                    0.0,
                                ],
                            ],
                            [
                                [
                                    -0.5,
                                    -0.25,
                                    0.0,
                                    0.25,
                                    -0.75,
                                    -0.5,
                                    -0.25,
                                    0.0,
                                    0.25,
                                    0.5,
                                    0.75,
                                    -0.75,
                                    0.0,
                                    0.25,
                                    0.5,
                                    0.75,
                                ],
                                [
                                    0.5,
                                    0.75,
                                    0.0,
                                    0.0,
                                    0.25,
                                    0.5,
                                    0.0,
                                    0.0,
                                    -0.5,
                                    -0.25,
                                    0.0,
                                    0.0,
                                    -0.75,
                                    -0.5,
                                    0.0,
                                    0.0,
                                ],
                            ],
                        ],
                        [
                            [
                                [
                                    0.75,
                                    -0.75,
                                    -0.5,
                                    -0.25,
                                    0.5,
                                    0.75,
                                    -0.75,
                                    -0.5,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                ],
                                [
                                    0.0,
                                    0.25,
                                    0.0,
                                    0.0,
                                    -0.25,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                ],
                            ],
                            [
                                [
                                    0.25,
                                    0.5,
                                    0.75,
                                    -0.75,
                                    0.0,
                                    0.25,
                                    0.5,
                                    0.75,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                ],
                                [
                                    -0.5,
                                    -0.25,
                                    0.0,
                                    0.0,
                                    -0.75,
                                    -0.5,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                    0.0,
                                ],
                            ],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_extract_volume_patches_gradient_does_match_tf():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 3, 4, 3, 2))
        p = tf.extract_volume_patches(x, [1, 2, 3, 2, 1], [1, 1, 1, 2, 1], "VALID")
        y = tf.gradients(tf.reduce_sum(p * p), x)[0]
        _check_close(
            _run(y),
            np.array(
                [
                    [
                        [
                            [[-1.5, -1.0], [-0.5, 0.0], [0.0, 0.0]],
                            [[3.0, -3.0], [-2.0, -1.0], [0.0, 0.0]],
                            [[2.0, 3.0], [-3.0, -2.0], [0.0, 0.0]],
                            [[0.5, 1.0], [1.5, -1.5], [0.0, 0.0]],
                        ],
                        [
                            [[0.0, 1.0], [2.0, 3.0], [0.0, 0.0]],
                            [[-2.0, 0.0], [2.0, 4.0], [0.0, 0.0]],
                            [[-4.0, -2.0], [0.0, 2.0], [0.0, 0.0]],
                            [[-3.0, -2.0], [-1.0, 0.0], [0.0, 0.0]],
                        ],
                        [
                            [[1.5, -1.5], [-1.0, -0.5], [0.0, 0.0]],
                            [[2.0, 3.0], [-3.0, -2.0], [0.0, 0.0]],
                            [[1.0, 2.0], [3.0, -3.0], [0.0, 0.0]],
                            [[0.0, 0.5], [1.0, 1.5], [0.0, 0.0]],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )


def test_edit_distance_does_compare_sequences():
    with tf.Graph().as_default():
        h = tf.SparseTensor(
            [[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0]],
            tf.constant(["a", "b", "c", "d"]),
            [2, 3, 2],
        )
        t = tf.SparseTensor(
            [[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 0, 2]],
            tf.constant(["a", "x", "c", "c", "e"]),
            [2, 2, 3],
        )
        y = [tf.edit_distance(h, t), tf.edit_distance(h, t, normalize=False)]
        got = _run(y)
        _check_close(
            got[0], np.array([[1.0, 1.0, 0.0], [0.6666667, np.inf, 0.0]], dtype=np.float32)
        )
        _check_close(got[1], np.array([[1.0, 1.0, 0.0], [2.0, 1.0, 0.0]], dtype=np.float32))


def test_edit_distance_does_take_ints_of_rank_two():
    with tf.Graph().as_default():
        h = tf.SparseTensor(
            [[0, 0], [0, 1], [0, 2], [1, 0]], tf.constant([1, 2, 3, 4], tf.int64), [2, 4]
        )
        t = tf.SparseTensor(
            [[0, 0], [0, 1], [1, 0], [1, 1]], tf.constant([1, 3, 5, 4], tf.int64), [2, 3]
        )
        y = tf.edit_distance(h, t)
        _check_close(_run(y), np.array([0.5, 0.5], dtype=np.float32))


def test_edit_distance_does_reject_dense_inputs():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.edit_distance([[1, 2]], tf.SparseTensor([[0, 0]], [1], [1, 1]))


def test_extract_volume_patches_does_reject_bad_sizes():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="ksizes"):
            tf.extract_volume_patches(_x(1, 2, 2, 2, 1), [2, 2, 2], [1, 1, 1, 1, 1], "VALID")


def test_max_pool_with_argmax_does_give_flat_indices():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 4, 5, 2))
        v, i = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        y = [v, i]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [
                        [[0.5, 0.75], [0.75, 0.5], [0.25, 0.5]],
                        [[0.75, 0.5], [0.75, 0.75], [0.0, 0.25]],
                    ],
                    [
                        [[0.5, 0.75], [0.5, 0.75], [0.75, 0.0]],
                        [[0.75, 0.5], [0.75, 0.5], [0.5, 0.75]],
                    ],
                ],
                dtype=np.float32,
            ),
        )
        _check_close(
            got[1],
            np.array(
                [
                    [[[12, 13], [6, 5], [18, 19]], [[20, 33], [34, 27], [38, 39]]],
                    [[[0, 1], [14, 15], [8, 19]], [[22, 21], [36, 35], [28, 29]]],
                ],
                dtype=np.int64,
            ),
        )


def test_max_pool_with_argmax_does_count_the_batch_when_asked():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 4, 5, 2))
        v, i = tf.nn.max_pool_with_argmax(
            x,
            [1, 3, 2, 1],
            [1, 1, 2, 1],
            "VALID",
            output_dtype=tf.int32,
            include_batch_in_index=True,
        )
        y = [v, i]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [[[0.75, 0.75], [0.75, 0.75]], [[0.75, 0.75], [0.75, 0.75]]],
                    [[[0.75, 0.75], [0.5, 0.75]], [[0.75, 0.5], [0.75, 0.75]]],
                ],
                dtype=np.float32,
            ),
        )
        _check_close(
            got[1],
            np.array(
                [
                    [[[20, 13], [6, 27]], [[20, 13], [34, 27]]],
                    [[[62, 41], [54, 55]], [[62, 61], [76, 55]]],
                ],
                dtype=np.int32,
            ),
        )


def test_max_pool_with_argmax_gradient_does_match_tf():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 4, 5, 2))
        v, i = tf.nn.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 1, 2, 1], "SAME")
        y = tf.gradients(tf.reduce_sum(v * v), x)[0]
        _check_close(
            _run(y),
            np.array(
                [
                    [
                        [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [6.0, 0.0], [0.0, 0.0]],
                        [[0.0, 0.0], [1.0, 9.0], [0.0, 0.0], [0.0, 0.0], [0.0, 1.0]],
                        [[4.5, 0.0], [0.0, 0.0], [0.0, 0.0], [2.0, 6.0], [0.0, 0.0]],
                        [[0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
                    ],
                    [
                        [[1.0, 3.0], [0.0, 0.0], [0.0, 0.0], [0.0, 1.0], [3.0, 0.0]],
                        [[0.0, 0.0], [0.0, 0.0], [1.0, 4.5], [0.0, 0.0], [0.0, 0.0]],
                        [[0.0, 2.0], [9.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 4.5]],
                        [[0.0, 0.0], [0.0, 0.0], [0.0, 1.0], [3.0, 0.0], [0.0, 0.0]],
                    ],
                ],
                dtype=np.float32,
            ),
        )


def test_dilation2d_does_take_the_largest_sum():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 5, 4, 2))
        f = tf.constant(_f(2, 3, 2))
        z = tf.constant(_x(1, 5, 5, 2))
        y = [
            tf.nn.dilation2d(x, f, [1, 1, 1, 1], [1, 1, 1, 1], "SAME"),
            tf.nn.dilation2d(z, f, [1, 2, 1, 1], [1, 1, 2, 1], "VALID"),
            tf.nn.dilation2d(x, f, [1, 2, 1, 1], [1, 1, 2, 1], "VALID"),
        ]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [
                        [
                            [0.4166667, 0.4166667],
                            [0.9166667, 0.9166667],
                            [1.4166667, 1.4166667],
                            [0.75, 0.75],
                        ],
                        [
                            [0.6666667, 0.6666667],
                            [1.1666667, 1.1666667],
                            [1.0833334, 1.0833334],
                            [0.4166667, 0.4166667],
                        ],
                        [
                            [0.9166667, 0.9166667],
                            [1.4166667, 1.4166667],
                            [0.75, 0.75],
                            [0.0833333, 0.6666667],
                        ],
                        [
                            [1.1666667, 1.1666667],
                            [1.0833334, 1.0833334],
                            [0.4166667, 0.4166667],
                            [0.3333333, 0.9166667],
                        ],
                        [
                            [1.4166667, 0.8333334],
                            [0.75, 0.1666667],
                            [0.6666667, 0.0833333],
                            [0.0, 0.5833334],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check_close(
            got[1], np.array([[[[0.25, 0.8333334]], [[1.0833334, 0.5833334]]]], dtype=np.float32)
        )
        _check_close(got[2], np.zeros((1, 2, 0, 2), dtype=np.float32))


def test_dilation2d_gradients_do_match_tf():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 5, 4, 2))
        f = tf.constant(_f(2, 3, 2))
        d = tf.nn.dilation2d(x, f, [1, 2, 1, 1], [1, 1, 1, 1], "SAME")
        y = tf.gradients(tf.reduce_sum(d * d), [x, f])
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [
                        [[0.0, 0.0], [0.8333334, 0.0], [1.8333334, 0.0], [4.3333335, 0.0]],
                        [[0.0, 0.8333334], [0.0, 1.8333334], [0.0, 4.3333335], [0.0, 0.0]],
                        [[0.0, 0.0], [1.8333334, 0.0], [4.3333335, 0.0], [0.0, 0.0]],
                        [[0.0, 1.8333334], [0.0, 4.3333335], [0.0, 0.0], [0.1666667, 1.3333334]],
                        [[0.0, 2.0], [4.3333335, 0.0], [0.0, 0.1666667], [1.3333334, 1.1666667]],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check_close(
            got[1],
            np.array(
                [
                    [[0.0, 0.3333333], [4.5, 3.0000002], [14.333333, 0.0]],
                    [[0.0, 3.0], [0.1666667, 11.5], [0.0, 0.0]],
                ],
                dtype=np.float32,
            ),
        )


def test_erosion2d_does_take_the_smallest_difference():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 5, 4, 2))
        f = tf.constant(_f(2, 3, 2))
        e = tf.nn.erosion2d(x, f, [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        y = [e, tf.gradients(tf.reduce_sum(e * e), f)[0]]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [
                        [
                            [-1.0833334, -1.1666667],
                            [-1.1666667, -0.6666667],
                            [-0.6666667, -0.75],
                            [-0.75, -1.4166667],
                        ],
                        [
                            [-0.8333334, -0.9166667],
                            [-0.9166667, -0.4166667],
                            [-0.4166667, -1.0833334],
                            [-1.0833334, -1.1666667],
                        ],
                        [
                            [-0.5833334, -0.6666667],
                            [-0.6666667, -0.75],
                            [-0.75, -1.4166667],
                            [-1.4166667, -0.9166667],
                        ],
                        [
                            [-0.3333333, -0.4166667],
                            [-0.4166667, -1.0833334],
                            [-1.0833334, -1.1666667],
                            [-1.1666667, -0.6666667],
                        ],
                        [
                            [-0.0833333, -0.75],
                            [-0.1666667, -1.4166667],
                            [-0.8333334, -0.9166667],
                            [-0.3333333, -0.4166667],
                        ],
                    ]
                ],
                dtype=np.float32,
            ),
        )
        _check_close(
            got[1],
            np.array(
                [
                    [[0.0, 0.0], [3.0, 4.3333335], [13.6666679, 0.0]],
                    [[0.3333333, 4.5], [12.500001, 27.5000038], [0.0, 0.0]],
                ],
                dtype=np.float32,
            ),
        )


def test_max_pool_with_argmax_does_reject_nchw_and_bad_index_types():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 4, 1))
        with pytest.raises(ValueError, match="NHWC"):
            tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", data_format="NCHW")
        with pytest.raises(TypeError, match="int32 or int64"):
            tf.nn.max_pool_with_argmax(x, 2, 2, "SAME", output_dtype=tf.float32)


def test_dilation2d_does_reject_channel_mismatch_and_short_rates():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 4, 2))
        with pytest.raises(ValueError, match="channels"):
            tf.nn.dilation2d(x, _f(2, 2, 3), [1, 1, 1, 1], [1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="rates"):
            tf.nn.erosion2d(x, _f(2, 2, 2), [1, 1, 1, 1], [1, 1], "SAME")


def test_safe_embedding_lookup_sparse_does_skip_bad_ids_and_fill_empty_rows():
    with tf.Graph().as_default():
        params = tf.constant(np.arange(15.0).reshape(5, 3) / 4 - 1)
        ids = tf.SparseTensor(
            [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 1]],
            tf.constant([3, -1, 1, 4, 0, 2], tf.int64),
            [2, 3, 2],
        )
        y = tf.nn.safe_embedding_lookup_sparse(params, ids)
        _check_close(
            _run(y),
            np.array(
                [
                    [[1.25, 1.5, 1.75], [-0.25, 0.0, 0.25], [0.0, 0.0, 0.0]],
                    [[0.5, 0.75, 1.0], [0.5, 0.75, 1.0], [0.0, 0.0, 0.0]],
                ],
                dtype=np.float64,
            ),
        )


def test_safe_embedding_lookup_sparse_does_weigh_and_use_the_default_id():
    with tf.Graph().as_default():
        params = tf.constant(np.arange(15.0).reshape(5, 3) / 4 - 1)
        ids = tf.SparseTensor(
            [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 1]],
            tf.constant([3, -1, 1, 4, 0, 2], tf.int64),
            [2, 3, 2],
        )
        w = tf.SparseTensor(
            [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 1]],
            tf.constant([1.0, 2.0, 0.0, 0.5, 2.0, -1.0], tf.float64),
            [2, 3, 2],
        )
        y = [
            tf.nn.safe_embedding_lookup_sparse(params, ids, w, default_id=2),
            tf.nn.safe_embedding_lookup_sparse(params, ids, w, combiner="sum"),
        ]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [[1.25, 1.5, 1.75], [0.5, 0.75, 1.0], [0.5, 0.75, 1.0]],
                    [[-0.4, -0.15, 0.1], [0.5, 0.75, 1.0], [0.5, 0.75, 1.0]],
                ],
                dtype=np.float64,
            ),
        )
        _check_close(
            got[1],
            np.array(
                [
                    [[1.25, 1.5, 1.75], [-0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
                    [[-1.0, -0.375, 0.25], [-0.5, -0.75, -1.0], [0.0, 0.0, 0.0]],
                ],
                dtype=np.float64,
            ),
        )


def test_safe_embedding_lookup_sparse_does_clip_norms_and_shards():
    with tf.Graph().as_default():
        params = tf.constant(np.arange(15.0).reshape(5, 3) / 4 - 1)
        ids = tf.SparseTensor(
            [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 1]],
            tf.constant([3, -1, 1, 4, 0, 2], tf.int64),
            [2, 3, 2],
        )
        y = [
            tf.nn.safe_embedding_lookup_sparse(
                [params[:3], params[3:]], ids, combiner="sqrtn", max_norm=1.0
            ),
            tf.nn.safe_embedding_lookup_sparse(params, ids, allow_fast_lookup=True),
        ]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [[0.4767313, 0.5720776, 0.6674238], [-0.25, 0.0, 0.25], [0.0, 0.0, 0.0]],
                    [
                        [-0.1638226, 0.0126593, 0.1891411],
                        [0.3713907, 0.557086, 0.7427814],
                        [0.0, 0.0, 0.0],
                    ],
                ],
                dtype=np.float64,
            ),
        )
        _check_close(
            got[1],
            np.array(
                [
                    [[1.25, 1.5, 1.75], [-0.25, 0.0, 0.25], [0.0, 0.0, 0.0]],
                    [[0.5, 0.75, 1.0], [0.5, 0.75, 1.0], [0.0, 0.0, 0.0]],
                ],
                dtype=np.float64,
            ),
        )


def test_embedding_lookup_does_clip_to_max_norm():
    with tf.Graph().as_default():
        params = tf.constant(np.arange(15.0).reshape(5, 3) / 4 - 1)
        y = tf.nn.embedding_lookup(params, tf.constant([[0, 4], [2, 2]]), max_norm=1.5)
        _check_close(
            _run(y),
            np.array(
                [
                    [[-1.0, -0.75, -0.5], [0.7666519, 0.8624834, 0.9583148]],
                    [[0.5, 0.75, 1.0], [0.5, 0.75, 1.0]],
                ],
                dtype=np.float64,
            ),
        )


def test_safe_embedding_lookup_sparse_does_reject_missing_weights():
    with tf.Graph().as_default():
        ids = tf.SparseTensor([[0, 0]], tf.constant([0], tf.int64), [1, 1])
        with pytest.raises(ValueError, match="embedding_weights"):
            tf.nn.safe_embedding_lookup_sparse(None, ids)
        with pytest.raises(ValueError, match="embedding_weights"):
            tf.nn.safe_embedding_lookup_sparse([], ids)


def test_raw_rnn_does_run_the_cell_until_every_entry_is_finished():
    with tf.Graph().as_default():

        class Cell:
            output_size = 2
            state_size = 2

            def __call__(self, inputs, state):
                w = tf.constant([[0.5, -0.25], [0.1, 0.3], [-0.4, 0.2]])
                new = tf.tanh(tf.matmul(inputs, w) + state * 0.5)
                return new * 2.0, new

            def zero_state(self, batch_size, dtype):
                return tf.zeros([batch_size, 2], dtype)

            def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
                return self.zero_state(batch_size, dtype)

        cell = Cell()
        inputs = tf.constant(_x(4, 2, 3))
        seq_len = tf.constant([4, 2])
        inputs_ta = tf.TensorArray(tf.float32, size=4).unstack(inputs)

        def loop_fn(time, cell_output, cell_state, loop_state):
            next_cell_state = cell.zero_state(2, tf.float32) if cell_output is None else cell_state
            elements_finished = time >= seq_len
            finished = tf.reduce_all(elements_finished)
            next_input = tf.cond(
                finished, lambda: tf.zeros([2, 3]), lambda: inputs_ta.read(tf.minimum(time, 3))
            )
            if cell_output is None:
                return (
                    elements_finished,
                    next_input,
                    next_cell_state,
                    (tf.zeros([2]), tf.zeros([1])),
                    tf.constant(0.0),
                )
            return (
                elements_finished,
                next_input,
                next_cell_state,
                (cell_output, cell_output[:, :1] * 3),
                loop_state + tf.reduce_sum(cell_output),
            )

        (out_a, out_b), final_state, loop_state = tf.nn.raw_rnn(cell, loop_fn)
        y = [out_a.stack(), out_b.stack(), final_state, loop_state]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [[-0.6280419, -0.0249987], [-0.3464703, 0.3464704]],
                    [[0.6602874, -0.9534689], [-0.6038159, 0.3930543]],
                    [[1.3168995, -0.5612626], [0.0, 0.0]],
                    [[0.4028644, 0.1937591], [0.0, 0.0]],
                ],
                dtype=np.float32,
            ),
        )
        _check_close(
            got[1],
            np.array(
                [
                    [[-1.8841257], [-1.0394109]],
                    [[1.9808621], [-1.8114477]],
                    [[3.9506986], [0.0]],
                    [[1.2085931], [0.0]],
                ],
                dtype=np.float32,
            ),
        )
        _check_close(
            got[2], np.array([[0.2014322, 0.0968795], [-0.301908, 0.1965271]], dtype=np.float32)
        )
        _check_close(got[3], np.array(-1.0291061, dtype=np.float32))


def test_raw_rnn_does_emit_the_cell_output_by_default():
    with tf.Graph().as_default():

        class Cell:
            output_size = 2
            state_size = 2

            def __call__(self, inputs, state):
                w = tf.constant([[0.5, -0.25], [0.1, 0.3], [-0.4, 0.2]])
                new = tf.tanh(tf.matmul(inputs, w) + state * 0.5)
                return new * 2.0, new

            def zero_state(self, batch_size, dtype):
                return tf.zeros([batch_size, 2], dtype)

            def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
                return self.zero_state(batch_size, dtype)

        cell = Cell()
        inputs = tf.constant(_x(4, 2, 3))
        seq_len = tf.constant([4, 2])
        inputs_ta = tf.TensorArray(tf.float32, size=4).unstack(inputs)

        def loop_fn(time, cell_output, cell_state, loop_state):
            next_cell_state = cell.zero_state(2, tf.float32) if cell_output is None else cell_state
            elements_finished = time >= seq_len
            finished = tf.reduce_all(elements_finished)
            next_input = tf.cond(
                finished, lambda: tf.zeros([2, 3]), lambda: inputs_ta.read(tf.minimum(time, 3))
            )
            if cell_output is None:
                return elements_finished, next_input, next_cell_state, None, None
            return elements_finished, next_input, next_cell_state, cell_output, None

        out, final_state, loop_state = tf.nn.raw_rnn(cell, loop_fn)
        assert loop_state is None
        y = [out.stack(), final_state]
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [[-0.6280419, -0.0249987], [-0.3464703, 0.3464704]],
                    [[0.6602874, -0.9534689], [-0.6038159, 0.3930543]],
                    [[1.3168995, -0.5612626], [0.0, 0.0]],
                    [[0.4028644, 0.1937591], [0.0, 0.0]],
                ],
                dtype=np.float32,
            ),
        )
        _check_close(
            got[1], np.array([[0.2014322, 0.0968795], [-0.301908, 0.1965271]], dtype=np.float32)
        )


def test_static_state_saving_rnn_does_read_and_save_the_state():
    with tf.Graph().as_default():

        class Cell:
            output_size = 2
            state_size = 2

            def __call__(self, inputs, state):
                w = tf.constant([[0.5, -0.25], [0.1, 0.3], [-0.4, 0.2]])
                new = tf.tanh(tf.matmul(inputs, w) + state * 0.5)
                return new * 2.0, new

            def zero_state(self, batch_size, dtype):
                return tf.zeros([batch_size, 2], dtype)

            def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
                return self.zero_state(batch_size, dtype)

        cell = Cell()
        inputs = tf.constant(_x(4, 2, 3))
        seq_len = tf.constant([4, 2])

        class Saver:
            def __init__(self):
                self.saved = tf.Variable(
                    tf.constant([[0.5, -0.5], [0.25, 0.0]]), name="saved_state"
                )

            def state(self, name):
                assert name == "h"
                return self.saved.read_value()

            def save_state(self, name, value):
                return self.saved.assign(value)

        saver = Saver()
        outputs, state = tf.nn.static_state_saving_rnn(
            cell, tf.unstack(inputs), saver, "h", sequence_length=seq_len
        )
        init = tf.global_variables_initializer()
        y = [outputs[-1], state]
        got = _run(y, init)
        _check_close(got[0], np.array([[0.4295893, 0.1537267], [0.0, 0.0]], dtype=np.float32))
        _check_close(
            got[1], np.array([[0.2147946, 0.0768634], [-0.2448991, 0.1965271]], dtype=np.float32)
        )


def test_static_state_saving_rnn_does_reject_names_unlike_the_state():
    class Cell:
        output_size = 2
        state_size = (2, 2)

    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="state_name"):
            tf.nn.static_state_saving_rnn(Cell(), [tf.zeros([1, 2])], None, "h")
        with pytest.raises(ValueError, match="#elems"):
            tf.nn.static_state_saving_rnn(Cell(), [tf.zeros([1, 2])], None, ("h",))


def test_fractional_max_pool_does_pool_regions_of_an_integer_ratio():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 6, 4, 2))
        y = list(tf.nn.fractional_max_pool(x, [1.0, 2.0, 2.0, 1.0]))
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [
                        [[0.0, 0.25], [0.75, 0.75]],
                        [[0.5, 0.75], [0.75, 0.0]],
                        [[0.75, 0.75], [0.25, 0.5]],
                    ],
                    [
                        [[0.75, 0.0], [0.75, 0.75]],
                        [[0.25, 0.5], [0.75, 0.75]],
                        [[0.75, 0.75], [0.0, 0.25]],
                    ],
                ],
                dtype=np.float32,
            ),
        )
        _check_close(got[1], np.array([0, 2, 4, 6], dtype=np.int64))
        _check_close(got[2], np.array([0, 2, 4], dtype=np.int64))


def test_fractional_avg_pool_does_overlap_regions():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 6, 4, 2))
        y = list(
            tf.nn.fractional_avg_pool(x, [1.0, 3.0, 2.0, 1.0], pseudo_random=True, overlapping=True)
        )
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [
                        [[-0.0208333, 0.0833333], [0.0, -0.1875]],
                        [[-0.0277778, 0.0277778], [-0.25, 0.0]],
                    ],
                    [
                        [[0.0208333, -0.0208333], [0.1875, 0.0]],
                        [[0.1111111, -0.0277778], [-0.2083333, -0.25]],
                    ],
                ],
                dtype=np.float32,
            ),
        )
        _check_close(got[1], np.array([0, 3, 6], dtype=np.int64))
        _check_close(got[2], np.array([0, 2, 4], dtype=np.int64))


def test_fractional_pool_gradients_do_match_tf():
    with tf.Graph().as_default():
        x = tf.constant(_x(2, 6, 4, 2))
        a = tf.nn.fractional_max_pool(x, [1.0, 2.0, 2.0, 1.0], overlapping=True)[0]
        b = tf.nn.fractional_avg_pool(x, [1.0, 2.0, 2.0, 1.0], pseudo_random=True)[0]
        y = tf.gradients([tf.reduce_sum(a * a), tf.reduce_sum(b * b)], x)
        got = _run(y)
        _check_close(
            got[0],
            np.array(
                [
                    [
                        [[-0.1875, -0.0625], [-0.1875, -0.0625], [0.09375, 0.0], [1.59375, 0.0]],
                        [[-0.1875, -0.0625], [-0.1875, -0.0625], [0.09375, 3.0], [0.09375, 0.0]],
                        [
                            [0.0625, 0.1875],
                            [0.0625, 0.1875],
                            [4.40625, -0.1875],
                            [-0.09375, -0.1875],
                        ],
                        [
                            [0.0625, 0.1875],
                            [0.0625, 1.6875],
                            [-0.09375, -0.1875],
                            [-0.09375, -0.1875],
                        ],
                        [[0.09375, 0.0], [1.59375, 0.0], [-0.0625, 0.0625], [-0.0625, 0.5625]],
                        [[0.09375, 1.5], [0.09375, 0.0], [-0.0625, 0.0625], [0.4375, 1.0625]],
                    ],
                    [
                        [
                            [1.40625, -0.1875],
                            [-0.09375, -0.1875],
                            [0.1875, 0.09375],
                            [0.1875, 1.59375],
                        ],
                        [
                            [-0.09375, -0.1875],
                            [-0.09375, -0.1875],
                            [0.1875, 0.09375],
                            [1.6875, 0.09375],
                        ],
                        [[-0.0625, 0.0625], [-0.0625, 0.0625], [0.0, 4.40625], [0.0, -0.09375]],
                        [[-0.0625, 0.0625], [-0.0625, 0.0625], [3.0, -0.09375], [0.0, -0.09375]],
                        [
                            [0.1875, 0.09375],
                            [0.1875, 1.59375],
                            [-0.1875, -0.0625],
                            [-0.1875, -0.0625],
                        ],
                        [
                            [0.1875, 0.09375],
                            [1.6875, 0.09375],
                            [-0.1875, -0.0625],
                            [-0.1875, 0.4375],
                        ],
                    ],
                ],
                dtype=np.float32,
            ),
        )


def test_fractional_max_pool_does_draw_regions_of_sizes_k_or_k_plus_one():
    x = np.random.default_rng(0).normal(size=(1, 10, 7, 1)).astype(np.float32)
    with tf.Graph().as_default():
        out, rows, cols = tf.nn.fractional_max_pool(x, [1.0, 1.44, 1.73, 1.0])
        assert out.shape.as_list() == [1, 6, 4, 1]
        with tf.Session() as sess:
            for _ in range(5):
                got, r, c = sess.run([out, rows, cols])
                assert r[0] == 0 and r[-1] == 10 and set(np.diff(r)) <= {1, 2}
                assert c[0] == 0 and c[-1] == 7 and set(np.diff(c)) <= {1, 2}
                want = [
                    [x[0, r[i] : r[i + 1], c[j] : c[j + 1], 0].max() for j in range(4)]
                    for i in range(6)
                ]
                np.testing.assert_allclose(got[0, :, :, 0], want)


def test_fractional_avg_pool_deterministic_does_keep_its_regions():
    x = np.arange(100.0, dtype=np.float32).reshape(1, 10, 10, 1)
    with tf.Graph().as_default():
        _, rows, cols = tf.nn.fractional_avg_pool(
            x, [1.0, 1.5, 1.5, 1.0], pseudo_random=True, deterministic=True, seed=3, seed2=4
        )
        with tf.Session() as sess:
            first = sess.run([rows, cols])
            for _ in range(3):
                again = sess.run([rows, cols])
                np.testing.assert_array_equal(again[0], first[0])
                np.testing.assert_array_equal(again[1], first[1])


def test_fractional_max_pool_does_reject_seeds_without_determinism_and_bad_ratios():
    with tf.Graph().as_default():
        x = tf.constant(_x(1, 4, 4, 1))
        out = tf.nn.fractional_max_pool(x, [1.0, 2.0, 2.0, 1.0], seed=1)[0]
        with pytest.raises(df.errors.InvalidArgumentError, match="seed"):
            _run(out)
        with pytest.raises(ValueError, match="pooling_ratio"):
            tf.nn.fractional_max_pool(x, [2.0, 2.0, 2.0, 1.0])

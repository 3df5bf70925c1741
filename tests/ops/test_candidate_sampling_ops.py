"""Candidate samplers: TensorFlow's three outputs, expected counts with and without ``unique``,
the distributions they draw from, and their errors.

Constants pinned from TensorFlow come from TF 2.21's ``tf.compat.v1.nn`` samplers in graph mode,
called with ``true_classes=[[1, 2], [0, 5]]``, ``num_true=2``, ``num_sampled=5``,
``range_max=10``.
"""

import numpy as np
import pytest
from ops_testing import evaluate, run

import dataflow as df

TRUE_CLASSES = np.array([[1, 2], [0, 5]], np.int64)


def test_outputs_are_named_typed_and_shaped_as_tensorflow():
    samples = df.nn.log_uniform_candidate_sampler(TRUE_CLASSES, 2, 5, False, 10)
    assert [t.name for t in samples] == [f"LogUniformCandidateSampler:{i}" for i in range(3)]
    assert [t.dtype for t in samples] == [df.int64, df.float32, df.float32]
    assert [t.shape.as_list() for t in samples] == [[5], [2, 2], [5]]
    assert samples.sampled_candidates is samples[0]
    second = df.random.uniform_candidate_sampler(TRUE_CLASSES, 2, 5, True, 10)
    assert second.true_expected_count.name == "UniformCandidateSampler:1"


def test_expected_counts_with_replacement_are_num_sampled_times_the_probability():
    samples = df.nn.log_uniform_candidate_sampler(TRUE_CLASSES, 2, 5, False, 10, seed=1)
    sampled, true_count, sampled_count = evaluate(list(samples))
    # TF's true_expected_count for this call.
    np.testing.assert_allclose(true_count, [[0.8454604, 0.5998637], [1.4453242, 0.32142913]])
    probabilities = np.log((sampled + 2.0) / (sampled + 1.0)) / np.log(11.0)
    np.testing.assert_allclose(sampled_count, 5 * probabilities, rtol=1e-6)


def test_unique_samples_are_distinct_and_counted_by_the_tries_it_took():
    samples = df.nn.uniform_candidate_sampler(TRUE_CLASSES, 2, 5, True, 10, seed=3)
    with df.Session() as sess:
        for _ in range(5):
            sampled, true_count, sampled_count = sess.run(list(samples))
            assert len(set(sampled.tolist())) == 5
            tries = np.log1p(-sampled_count[0]) / np.log1p(-0.1)
            assert tries >= 5 and abs(tries - round(tries)) < 1e-3
            np.testing.assert_allclose(true_count, np.full((2, 2), sampled_count[0]))


def test_log_uniform_draws_follow_zipfs_law():
    sampled = run(df.nn.log_uniform_candidate_sampler(TRUE_CLASSES, 2, 40000, False, 10, seed=2)[0])
    frequencies = np.bincount(sampled, minlength=10) / 40000
    classes = np.arange(10)
    np.testing.assert_allclose(
        frequencies, np.log((classes + 2) / (classes + 1)) / np.log(11), atol=0.01
    )


def test_fixed_unigram_draws_the_distorted_table_and_never_a_reserved_id():
    unigrams = [1.0, 4.0, 9.0, 16.0]
    samples = df.nn.fixed_unigram_candidate_sampler(
        [[0]], 1, 30000, False, 6, distortion=0.5, num_reserved_ids=2, unigrams=unigrams, seed=1
    )
    sampled, true_count, _ = run(list(samples))
    frequencies = np.bincount(sampled, minlength=6) / 30000
    np.testing.assert_allclose(frequencies, [0, 0, 0.1, 0.2, 0.3, 0.4], atol=0.01)
    np.testing.assert_allclose(true_count, [[0.0]])  # class 0 is reserved: never expected
    with pytest.raises(ValueError, match="2 unique classes when only 1"):
        df.nn.fixed_unigram_candidate_sampler([[0]], 1, 2, True, 3, unigrams=[0, 0, 5])


def test_a_sampler_in_a_loop_draws_anew_each_iteration():
    def body(i, drawn):
        sampled = df.nn.uniform_candidate_sampler([[0]], 1, 4, True, 1000, seed=1)[0]
        return i + 1, df.concat([drawn, sampled], 0)

    _, drawn = df.while_loop(
        lambda i, d: i < 3,
        body,
        [0, df.zeros([0], df.int64)],
        shape_invariants=[df.TensorShape([]), df.TensorShape([None])],
    )
    assert len({tuple(row) for row in run(drawn).reshape(3, 4).tolist()}) == 3


def test_samplers_have_no_gradient():
    true_classes = df.placeholder(df.int64, [2, 2])
    for sampler in (
        df.nn.uniform_candidate_sampler,
        df.nn.log_uniform_candidate_sampler,
    ):
        counts = sampler(true_classes, 2, 5, False, 10).true_expected_count
        assert df.gradients(df.reduce_sum(counts), true_classes) == [None]


def test_bad_arguments_name_the_op_and_the_users_line():
    here = f"{__file__}:"
    with pytest.raises(TypeError, match=f"UniformCandidateSampler.*{here}.*int64"):
        df.nn.uniform_candidate_sampler(df.constant([[1]]), 1, 5, True, 10)
    with pytest.raises(ValueError, match=f"{here}.*cannot sample 20 unique classes"):
        df.nn.uniform_candidate_sampler(TRUE_CLASSES, 2, 20, True, 10)
    with pytest.raises(ValueError, match="2 columns, but num_true is 3"):
        df.nn.uniform_candidate_sampler(TRUE_CLASSES, 3, 5, True, 10)
    with pytest.raises(NotImplementedError, match="vocab_file"):
        df.nn.fixed_unigram_candidate_sampler(TRUE_CLASSES, 2, 5, True, 10, vocab_file="v.txt")
    fed = df.placeholder(df.int64, [None, None])
    with pytest.raises(df.errors.InvalidArgumentError, match="must be in \\[0, 10\\)"):
        run(df.nn.uniform_candidate_sampler(fed, 2, 5, True, 10)[0], {fed: [[1, 12]]})

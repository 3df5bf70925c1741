"""``nn.nce_loss``, ``nn.sampled_softmax_loss`` and ``nn.compute_accidental_hits``.

Given the same sampled classes (``sampled_values``), the losses and the weights' gradient are
TensorFlow 1.x's (tensorflow-cpu 2.21, graph mode, the same program), to float32 rounding.
"""

import numpy as np
import pytest

import dataflow as df

rng = np.random.RandomState(0)
W = rng.normal(size=(20, 4)).astype(np.float32)
B = rng.normal(size=20).astype(np.float32)
X = rng.normal(size=(3, 4)).astype(np.float32)
LABELS = np.array([[2], [7], [2]], np.int64)
SAMPLED = ([2, 5, 11, 0], [[0.3], [0.1], [0.3]], [0.3, 0.2, 0.05, 0.5])

TF_NCE = [11.861590385437012, 13.622610092163086, 13.345390319824219]
TF_SAMPLED_SOFTMAX = [4.112880229949951, 5.158440113067627, 3.7320199012756348]
# Row sums of the gradient of sum(nce) + sum(sampled softmax) with respect to the weights.
TF_WEIGHT_GRAD_ROW_SUMS = {0: 12.4149, 2: -0.5219, 5: 3.0921, 7: 0.41, 11: 4.5331}


def sampled_values():
    ids, true_expected, sampled_expected = SAMPLED
    return (
        df.constant(ids, df.int64),
        df.constant(true_expected, df.float32),
        df.constant(sampled_expected, df.float32),
    )


def test_losses_and_the_sparse_weight_gradient_match_tensorflow():
    weights, biases = df.Variable(W), df.Variable(B)
    nce = df.nn.nce_loss(weights, biases, LABELS, X, 4, 20, sampled_values=sampled_values())
    softmax = df.nn.sampled_softmax_loss(
        weights, biases, LABELS, X, 4, 20, sampled_values=sampled_values()
    )
    (grad,) = df.gradients(df.reduce_sum(nce) + df.reduce_sum(softmax), [weights])
    assert isinstance(grad, df.IndexedSlices)  # only the true and sampled rows
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        got_nce, got_softmax, dense = sess.run([nce, softmax, df.convert_to_tensor(grad)])
    np.testing.assert_allclose(got_nce, TF_NCE, rtol=1e-5)
    np.testing.assert_allclose(got_softmax, TF_SAMPLED_SOFTMAX, rtol=1e-5)
    expected = np.zeros(20)
    for row, total in TF_WEIGHT_GRAD_ROW_SUMS.items():
        expected[row] = total
    np.testing.assert_allclose(dense.sum(axis=1), expected, atol=2e-4)


def test_accidental_hits_name_the_sampled_positions_of_true_classes():
    rows, positions, weights = df.nn.compute_accidental_hits(LABELS, [2, 5, 11, 0], 1)
    with df.Session() as sess:
        got = sess.run([rows, positions, weights])
    assert got[0].tolist() == [0, 2] and got[1].tolist() == [0, 0]
    assert got[2].tolist() == [-np.finfo(np.float32).max] * 2


def test_a_sampled_softmax_with_its_own_sampler_gives_one_loss_per_example():
    weights, biases = df.Variable(W), df.Variable(B)
    loss = df.nn.sampled_softmax_loss(weights, biases, LABELS, X, 5, 20, seed=3)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        value = sess.run(loss)
    assert value.shape == (3,) and np.all(np.isfinite(value)) and np.all(value > 0)


def test_a_bad_partition_strategy_is_refused():
    with pytest.raises(ValueError, match="partition strategy"):
        df.nn.nce_loss(W, B, LABELS, X, 4, 20, sampled_values=SAMPLED, partition_strategy="x")

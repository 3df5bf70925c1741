"""The rest of TF1's everyday ``tf.nn``: activations, top_k/in_top_k, moments from sufficient
statistics, block moves, the Poisson loss and sparse embedding lookups.

Expected values are TensorFlow 2.21's (``tf.compat.v1``, graph mode) for the same programs,
printed by running them in a ``tf.Session``; each test names the expressions.
"""

import numpy as np
import pytest
from ops_testing import assert_same, evaluate

import dataflow as df

SCORES = [[1.0, 3.0, 3.0, 2.0], [4.0, -1.0, 0.0, 5.0]]


def test_activations_match_tensorflow():
    # TF: tf.nn.leaky_relu([-1., 2.]), leaky_relu([-1, 2], alpha=0.1) (ints become float32),
    # selu, softsign, swish of [-1., 2.], crelu([[-1., 2.]])
    values = evaluate(
        [
            df.nn.leaky_relu([-1.0, 2.0]),
            df.nn.leaky_relu([-1, 2], alpha=0.1),
            df.nn.selu([-1.0, 2.0]),
            df.nn.softsign([-1.0, 2.0]),
            df.nn.swish([-1.0, 2.0]),
            df.nn.crelu([[-1.0, 2.0]]),
        ]
    )
    expected = [
        [-0.2, 2.0],
        [-0.1, 2.0],
        [-1.1113307, 2.101402],
        [-0.5, 0.6666667],
        [-0.26894143, 1.7615942],
        [[0.0, 2.0, 1.0, 0.0]],
    ]
    for value, want in zip(values, expected):
        assert_same(value, np.float32(want))
    assert df.nn.silu is df.nn.swish


def test_top_k_gives_the_largest_values_first_and_ties_by_lower_index():
    # TF: v, i = tf.nn.top_k(SCORES, 2) -> [[3, 3], [5, 4]], [[1, 2], [3, 0]] named TopKV2:0/1
    values, indices = df.nn.top_k(SCORES, 2)
    assert (values.name, indices.name, values.shape.as_list()) == ("TopKV2:0", "TopKV2:1", [2, 2])
    assert df.nn.top_k(SCORES, 2).indices.dtype is df.int32
    got_values, got_indices = evaluate([values, indices])
    assert_same(got_values, np.float32([[3, 3], [5, 4]]))
    assert_same(got_indices, np.int32([[1, 2], [3, 0]]))


def test_top_k_refuses_a_k_larger_than_the_last_dimension_and_a_scalar():
    # TF: tf.nn.top_k([1., 2.], 3) and tf.nn.top_k(1., 1) are ValueErrors at build time
    with pytest.raises(
        ValueError, match=r"TopKV2 op 'TopKV2' at .*test_extra_nn_ops.py:\d+: .*k=3"
    ):
        df.nn.top_k([1.0, 2.0], 3)
    with pytest.raises(ValueError, match="at least 1-D"):
        df.nn.top_k(1.0, 1)
    k = df.placeholder(df.int32, [])
    with pytest.raises(df.errors.InvalidArgumentError, match="at least k=3"):
        evaluate(df.nn.top_k([1.0, 2.0], k), {k: 3})


def test_in_top_k_counts_strictly_larger_scores_and_refuses_bad_targets():
    # TF: tf.nn.in_top_k(SCORES, [1, 2], 1) -> [True, False];
    # tf.nn.in_top_k([[1., nan, 0.], [1., 2., 3.]], [1, 5], 2) -> [False, False]
    plain, odd = evaluate(
        [
            df.nn.in_top_k(SCORES, [1, 2], 1),
            df.nn.in_top_k([[1.0, np.nan, 0.0], [1.0, 2.0, 3.0]], [1, 5], 2),
        ]
    )
    assert plain.tolist() == [True, False] and odd.tolist() == [False, False]


def test_dense_layers_and_zero_fraction():
    # TF: tf.nn.xw_plus_b([[1., 2.]], [[1., 0.], [0., -1.]], [.5, .5]) -> [[1.5, -1.5]] named
    # xw_plus_b:0; relu_layer -> [[1.5, 0]]; tf.nn.zero_fraction([0, 1, 0, 3]) -> 0.5
    w = [[1.0, 0.0], [0.0, -1.0]]
    affine = df.nn.xw_plus_b([[1.0, 2.0]], w, [0.5, 0.5])
    assert affine.name == "xw_plus_b:0"
    values = evaluate(
        [affine, df.nn.relu_layer([[1.0, 2.0]], w, [0.5, 0.5]), df.nn.zero_fraction([0, 1, 0, 3])]
    )
    assert_same(values[0], np.float32([[1.5, -1.5]]))
    assert_same(values[1], np.float32([[1.5, 0.0]]))
    assert_same(values[2], np.float32(0.5))


def test_moments_from_sufficient_statistics_and_weights():
    # TF: c, m, v, s = tf.nn.sufficient_statistics(SCORES, [1], shift=1.0) -> 4, [5, 4],
    # [9, 30], 1; tf.nn.normalize_moments(c, m, v, s) -> [2.25, 2], [0.6875, 6.5];
    # tf.nn.weighted_moments(SCORES, [1], [[1., 2., 1., 1.]]) -> [2.4, 1.4], [0.64, 6.64]
    x = df.constant(SCORES)
    count, mean_ss, var_ss, shift = df.nn.sufficient_statistics(x, [1], shift=1.0)
    mean, variance = df.nn.normalize_moments(count, mean_ss, var_ss, shift)
    w_mean, w_variance = df.nn.weighted_moments(x, [1], [[1.0, 2.0, 1.0, 1.0]])
    values = evaluate([count, mean_ss, var_ss, shift, mean, variance, w_mean, w_variance])
    expected = [4.0, [5, 4], [9, 30], 1.0, [2.25, 2], [0.6875, 6.5], [2.4, 1.4], [0.64, 6.64]]
    for value, want in zip(values, expected):
        assert_same(value, np.float32(want), rtol=1e-5)
    unknown = df.placeholder(df.float32, [None, 4])
    count = df.nn.sufficient_statistics(unknown, [0, 1])[0]
    assert evaluate(count, {unknown: np.zeros((3, 4), np.float32)}) == 12


def test_space_to_depth_and_back():
    # TF: tf.nn.space_to_depth(arange(32).reshape(1, 4, 4, 2), 2)[0, 0] ->
    # [[0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]]; depth_to_space inverts it
    image = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2)
    batch = df.placeholder(df.float32, [None, 4, 4, 2])
    packed = df.nn.space_to_depth(batch, 2)
    assert packed.shape.as_list() == [None, 2, 2, 8]
    got, back = evaluate([packed, df.nn.depth_to_space(packed, 2)], {batch: image})
    assert_same(got[0, 0], np.float32([[0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]]))
    assert_same(back, image)
    with pytest.raises(ValueError, match=r"space_to_depth at .*test_extra_nn_ops.py:\d+.* 3 "):
        df.nn.space_to_depth(df.zeros([1, 3, 4, 1]), 2)


def test_log_poisson_loss_with_stirlings_term():
    # TF: tf.nn.log_poisson_loss([0., 2., 5.], [.1, .5, 1.], compute_full_loss=True)
    loss = df.nn.log_poisson_loss([0.0, 2.0, 5.0], [0.1, 0.5, 1.0], compute_full_loss=True)
    assert_same(evaluate(loss), np.float32([1.105171, 1.3005277, 2.489129]), rtol=1e-6)


def test_embedding_lookup_sparse_combines_each_rows_ids():
    # TF: params = arange(8.).reshape(4, 2); ids rows {0: [1, 3], 2: [1]}, weights [2, 1, .5]:
    # combiner mean -> [[3.3333333, 4.3333335], [0, 0], [2, 3]]; sum without weights ->
    # [[8, 10], [0, 0], [2, 3]]; sqrtn -> [[4.472136, 5.8137765], [0, 0], [2, 3]]
    params = df.constant(np.arange(8, dtype=np.float32).reshape(4, 2))
    indices = [[0, 0], [0, 1], [2, 0]]
    ids = df.SparseTensor(indices, df.constant([1, 3, 1], df.int64), [3, 2])
    weights = df.SparseTensor(indices, [2.0, 1.0, 0.5], [3, 2])
    mean, total, sqrtn = evaluate(
        [
            df.nn.embedding_lookup_sparse(params, ids, weights),
            df.nn.embedding_lookup_sparse(params, ids, None, combiner="sum"),
            df.nn.embedding_lookup_sparse(params, ids, weights, combiner="sqrtn"),
        ]
    )
    assert_same(mean, np.float32([[3.3333333, 4.3333335], [0, 0], [2, 3]]))
    assert_same(total, np.float32([[8, 10], [0, 0], [2, 3]]))
    assert_same(sqrtn, np.float32([[4.472136, 5.8137765], [0, 0], [2, 3]]))
    with pytest.raises(ValueError, match="combiner must be one of"):
        df.nn.embedding_lookup_sparse(params, ids, None, combiner="max")


def test_pool2d_names_are_the_pooling_ops():
    image = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    pooled = df.nn.max_pool2d(image, 2, 2, "VALID")
    averaged = df.nn.avg_pool2d(image, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    assert (pooled.op.type, averaged.op.type) == ("MaxPool", "AvgPool")
    got_max, got_mean = evaluate([pooled, averaged])
    assert got_max.ravel().tolist() == [5, 7, 13, 15]
    assert got_mean.ravel().tolist() == [2.5, 4.5, 10.5, 12.5]


def test_top_k_and_leaky_relu_in_a_cond_and_a_loop():
    x = df.placeholder(df.float32, [2, 4])
    branch = df.cond(
        df.reduce_sum(x) > 0, lambda: df.nn.top_k(x, 2).values, lambda: df.nn.leaky_relu(x)[:, :2]
    )
    _, looped = df.while_loop(
        lambda i, v: i < 2, lambda i, v: (i + 1, df.nn.leaky_relu(v, 0.5)), [0, x]
    )
    got_branch, got_loop = evaluate([branch, looped], {x: np.float32(SCORES)})
    assert_same(got_branch, np.float32([[3, 3], [5, 4]]))
    scores = np.float32(SCORES)
    assert_same(got_loop, np.where(scores > 0, scores, scores * np.float32(0.25)))

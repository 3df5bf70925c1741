"""Stateless random ops and ``random.Generator``: TensorFlow's values for the same seeds.

Expected values were printed by TensorFlow 2.21 (``tf.compat.v1`` graph mode, CPU).
"""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(*fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(list(fetches))


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def test_stateless_uniform_does_give_tensorflows_floats_for_a_seed():
    (floats, doubles, halves) = _run(
        tf.random.stateless_uniform([6], seed=[1, 2]),
        tf.random.stateless_uniform([3], seed=[1, 2], dtype=tf.float64),
        tf.random.stateless_uniform([4], seed=[1, 2], dtype=tf.float16),
    )
    np.testing.assert_array_equal(
        floats, np.float32([0.8440604, 0.19204533, 0.9962232, 0.1603874, 0.27199018, 0.649346])
    )
    np.testing.assert_allclose(doubles, [0.75248375, 0.96978577, 0.17592234], rtol=1e-7)
    assert halves.dtype == np.float16
    np.testing.assert_array_equal(halves, np.float16([0.543, 0.2354, 0.06055, 0.8936]))


def test_stateless_uniform_does_scale_to_its_range_and_take_an_int64_seed():
    (values,) = _run(
        tf.random.stateless_uniform(
            [2, 3], seed=tf.constant([7, -3], tf.int64), minval=-5, maxval=5
        )
    )
    np.testing.assert_allclose(
        values,
        [[-0.6535778, -4.347241, 2.4761295], [-3.5123587, 0.89786434, -1.8061769]],
        rtol=1e-6,
    )


def test_stateless_uniform_does_draw_integers_bounded_or_over_the_whole_range():
    bounded, wide, full = _run(
        tf.random.stateless_uniform([6], seed=[1, 2], minval=0, maxval=10, dtype=tf.int32),
        tf.random.stateless_uniform([3], seed=[1, 2], minval=0, maxval=10**12, dtype=tf.int64),
        tf.random.stateless_uniform([3], seed=[1, 2], minval=None, maxval=None, dtype=tf.int64),
    )
    np.testing.assert_array_equal(bounded, [0, 9, 4, 9, 7, 5])
    np.testing.assert_array_equal(wide, [146280614444, 637757961278, 318164050067])
    np.testing.assert_array_equal(
        full, [7464880146280614444, 1591045637757961278, -1057468755545501549]
    )


def test_stateless_normal_and_truncated_normal_do_give_tensorflows_draws():
    normal, truncated, normal64, truncated64 = _run(
        tf.random.stateless_normal([6], seed=[1, 2]),
        tf.random.stateless_truncated_normal([6], seed=[1, 2]),
        tf.random.stateless_normal([3], seed=[1, 2], dtype=tf.float64),
        tf.random.stateless_truncated_normal([3], seed=[1, 2], dtype=tf.float64),
    )
    # float32 transcendental functions may differ from TensorFlow's in the last places
    np.testing.assert_allclose(
        normal, [0.5441101, 0.20738031, 0.07356432, 0.04643455, -1.3015898, -0.9538565], rtol=1e-5
    )
    # the second group of four comes from its own reserved stretch of the stream
    np.testing.assert_allclose(
        truncated,
        [0.5441101, 0.20738031, 0.07356432, 0.04643455, 0.16820592, -1.6850333],
        rtol=1e-5,
    )
    np.testing.assert_allclose(normal64, [-0.14231181, 0.74060725, -1.46904767], rtol=1e-7)
    np.testing.assert_allclose(truncated64, [-0.14231181, 0.74060725, -0.55238776], rtol=1e-7)
    assert np.abs(truncated).max() < 2


def test_stateless_normal_does_scale_by_stddev_and_shift_by_mean():
    base, scaled = _run(
        tf.random.stateless_normal([4], seed=[3, 9]),
        tf.random.stateless_normal([4], seed=[3, 9], mean=10.0, stddev=0.5),
    )
    np.testing.assert_allclose(scaled, base * 0.5 + 10.0, rtol=1e-6)


def test_stateless_draws_do_repeat_across_runs_and_sessions_and_differ_by_seed():
    draw = tf.random.stateless_uniform([100], seed=[4, 4])
    other = tf.random.stateless_uniform([100], seed=[4, 5])
    with tf.Session() as first:
        a, b = first.run(draw), first.run(draw)
    with tf.Session() as second:
        c, d = second.run(draw), second.run(other)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, d)


def test_a_longer_draw_does_begin_with_the_shorter_one():
    short, long = _run(
        tf.random.stateless_uniform([5], seed=[8, 1]),
        tf.random.stateless_uniform([2, 50], seed=[8, 1]),
    )
    np.testing.assert_array_equal(long.reshape(-1)[:5], short)


def test_stateless_categorical_does_give_tensorflows_classes():
    (classes,) = _run(
        tf.random.stateless_categorical([[0.0, 1.0, 2.0], [3.0, -np.inf, 0.0]], 4, seed=[3, 4])
    )
    assert classes.dtype == np.int64
    np.testing.assert_array_equal(classes, [[2, 2, 1, 2], [0, 0, 0, 0]])
    (single,) = _run(tf.random.stateless_multinomial([[0.0, 1.0, 2.0]], 5, seed=[1, 2]))
    np.testing.assert_array_equal(single, [[2, 2, 1, 2, 2]])


def test_split_and_fold_in_do_give_tensorflows_seeds():
    seeds, folded = _run(tf.random.split([1, 2], num=3), tf.random.fold_in([1, 2], 3))
    np.testing.assert_array_equal(
        seeds, [[1105988140, 1738052849], [-335576002, 370444179], [10670227, -246211131]]
    )
    np.testing.assert_array_equal(folded, [1105988140, 3])
    assert tf.random.experimental.stateless_split is tf.random.split
    assert tf.random.experimental.stateless_fold_in is tf.random.fold_in


def test_stateless_shuffle_does_permute_as_tensorflow():
    (shuffled,) = _run(tf.random.experimental.stateless_shuffle(tf.range(10), seed=[1, 2]))
    np.testing.assert_array_equal(shuffled, [0, 3, 8, 1, 5, 4, 9, 7, 6, 2])
    (rows,) = _run(tf.random.experimental.stateless_shuffle(np.eye(3), seed=[1, 2]))
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, np.eye(3).tolist()))


def test_samplers_keyed_by_a_seed_do_repeat_and_follow_their_distribution():
    gamma, poisson, binomial, truncated = _run(
        tf.random.stateless_gamma([20000], seed=[1, 2], alpha=3.0, beta=2.0),
        tf.random.stateless_poisson([20000], seed=[1, 2], lam=4.0),
        tf.random.stateless_binomial([20000], seed=[1, 2], counts=10.0, probs=0.3),
        tf.random.stateless_parameterized_truncated_normal(
            [20000], seed=[1, 2], means=1.0, stddevs=2.0, minvals=0.0, maxvals=1.5
        ),
    )
    again = _run(tf.random.stateless_gamma([20000], seed=[1, 2], alpha=3.0, beta=2.0))[0]
    np.testing.assert_array_equal(gamma, again)
    assert abs(gamma.mean() - 1.5) < 0.05  # alpha / beta
    assert poisson.dtype == np.int32 and abs(poisson.mean() - 4.0) < 0.1
    assert binomial.dtype == np.int32 and abs(binomial.mean() - 3.0) < 0.1
    assert truncated.min() >= 0.0 and truncated.max() <= 1.5
    # the density rises towards the mean at 1: more draws in the upper half of [0, 1.5]
    assert (truncated > 0.75).mean() > 0.5


def test_stateless_gamma_does_broadcast_alpha_into_the_trailing_dimensions():
    (draws,) = _run(tf.random.stateless_gamma([1000, 2], seed=[5, 6], alpha=[1.0, 50.0]))
    assert draws.shape == (1000, 2)
    assert draws[:, 0].mean() < 2 < 40 < draws[:, 1].mean()


def test_a_bad_seed_is_refused_naming_the_op():
    with pytest.raises(ValueError, match="seed must have shape"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(TypeError, match="seed must be int32 or int64"):
        tf.random.stateless_uniform([2], seed=[1.0, 2.0])
    with pytest.raises(ValueError, match="minval and maxval must both be None or not"):
        tf.random.stateless_uniform([2], seed=[1, 2], dtype=tf.int32)  # minval 0, maxval None
    fed = tf.placeholder(tf.int32, [None])
    with tf.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match=r"seed must have shape \[2\]"):
            sess.run(tf.random.stateless_uniform([2], seed=fed), {fed: [1, 2, 3]})


def test_only_philox_is_accepted_as_the_algorithm():
    tf.random.stateless_normal([2], seed=[1, 2], alg="philox")
    with pytest.raises(ValueError, match="alg must be 'philox' or 'auto_select'"):
        tf.random.stateless_normal([2], seed=[1, 2], alg="threefry")


def test_generator_from_seed_does_draw_tensorflows_stream_and_move_its_state():
    generator = tf.random.Generator.from_seed(5)
    uniform = generator.uniform([6])
    normal = generator.normal([3])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(generator.state), [5, 0, 0])
        np.testing.assert_allclose(
            sess.run(uniform),
            [0.567016, 0.2077086, 0.18223882, 0.99883735, 0.36950588, 0.37927854],
            rtol=1e-6,
        )
        np.testing.assert_array_equal(sess.run(generator.state), [1541, 0, 0])
        np.testing.assert_allclose(
            sess.run(normal), [-0.5356597, -0.4981093, -1.2551429], rtol=1e-5
        )
        np.testing.assert_array_equal(sess.run(generator.state), [2309, 0, 0])
        np.testing.assert_allclose(
            sess.run(generator.uniform([3], dtype=tf.float64)),
            [0.85760327, 0.43187166, 0.73336617],
            rtol=1e-7,
        )
        np.testing.assert_array_equal(
            sess.run(generator.uniform([3], minval=0, maxval=10, dtype=tf.int32)), [1, 0, 7]
        )
        np.testing.assert_array_equal(
            sess.run(generator.uniform_full_int([2], dtype=tf.int64)),
            [758379901417081158, 3407697721166169069],
        )
        np.testing.assert_allclose(
            sess.run(generator.truncated_normal([5])),
            [0.44202223, 0.27122915, 0.6409591, 0.11994781, 0.49568224],
            rtol=1e-5,
        )
        np.testing.assert_array_equal(
            sess.run(generator.make_seeds(2)),
            [[4178950864433224394, 4973500709357460796], [0, 0]],
        )
        np.testing.assert_array_equal(sess.run(generator.state), [6149, 0, 0])


def test_generator_skip_reset_and_split_do_move_the_stream():
    generator = tf.random.Generator.from_seed(5)
    draw = generator.uniform([2])
    before = generator.skip(10)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(draw)
        np.testing.assert_array_equal(sess.run(before), [5 + 2 * 256, 0, 0])
        np.testing.assert_array_equal(sess.run(generator.state), [5 + 12 * 256, 0, 0])
        sess.run(generator.reset_from_seed(5))
        np.testing.assert_array_equal(sess.run(draw), first)
        sess.run(generator.reset_from_key_counter(7, [1, 2]))
        np.testing.assert_array_equal(sess.run(generator.state), [1, 2, 7])
    children = generator.split(2)
    assert len(children) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([children[0].uniform([3]), children[1].uniform([3])])
        assert not np.array_equal(a, b)


def test_create_rng_state_does_split_a_seed_into_three_words():
    states = _run(
        tf.random.create_rng_state(5, "philox"),
        tf.random.create_rng_state(-1, "philox"),
        tf.random.create_rng_state(2**70 + 3, "philox"),
    )
    np.testing.assert_array_equal(states, [[5, 0, 0], [-1, -1, -1], [3, 64, 0]])
    assert tf.random.experimental.create_rng_state is tf.random.create_rng_state


def test_the_global_generator_is_one_per_graph_and_can_be_set():
    first = tf.random.get_global_generator()
    assert tf.random.get_global_generator() is first
    mine = tf.random.Generator.from_seed(1)
    tf.random.set_global_generator(mine)
    assert tf.random.experimental.get_global_generator() is mine
    with tf.Graph().as_default():
        assert tf.random.get_global_generator() is not mine


def test_stateless_gamma_does_pass_a_gradient_to_alpha_and_beta():
    alpha = tf.constant(3.0)
    beta = tf.constant(2.0)
    draws = tf.random.stateless_gamma([20000], seed=[2, 3], alpha=alpha, beta=beta)
    d_alpha, d_beta = tf.gradients(tf.reduce_mean(draws), [alpha, beta])
    got_alpha, got_beta = _run(d_alpha, d_beta)
    # the mean is alpha / beta: d/dalpha = 1 / beta, d/dbeta = -alpha / beta**2
    assert abs(got_alpha - 0.5) < 0.02
    assert abs(got_beta - (-0.75)) < 0.03


def test_sobol_sample_does_give_tensorflows_points_after_the_origin():
    first, skipped = _run(
        tf.math.sobol_sample(2, 5), tf.math.sobol_sample(3, 4, skip=2, dtype=tf.float64)
    )
    assert first.dtype == np.float32 and skipped.dtype == np.float64
    np.testing.assert_array_equal(
        first, [[0.5, 0.5], [0.75, 0.25], [0.25, 0.75], [0.375, 0.375], [0.875, 0.875]]
    )
    np.testing.assert_array_equal(
        skipped,
        [[0.25, 0.75, 0.75], [0.375, 0.375, 0.625], [0.875, 0.875, 0.125], [0.625, 0.125, 0.875]],
    )
    with tf.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="dim must be in"):
            sess.run(tf.math.sobol_sample(0, 3))


def test_a_session_does_fetch_top_k_as_its_named_pair():
    with tf.Session() as sess:
        result = sess.run(tf.nn.top_k([[1.0, 3.0, 2.0]], 2))
    np.testing.assert_array_equal(result.values, [[3.0, 2.0]])
    np.testing.assert_array_equal(result.indices, [[1, 2]])


def test_approx_max_k_and_min_k_are_exact_on_a_cpu_along_any_axis():
    x = [[1.0, 5.0, 3.0, 2.0], [0.0, -1.0, 7.0, 7.0]]
    largest, smallest, by_column = _run(
        tf.math.approx_max_k(x, 2),
        tf.math.approx_min_k(x, 2),
        tf.math.approx_max_k(x, 1, reduction_dimension=0),
    )
    np.testing.assert_array_equal(largest[0], [[5, 3], [7, 7]])  # TensorFlow's values
    np.testing.assert_array_equal(largest[1], [[1, 2], [2, 3]])
    np.testing.assert_array_equal(smallest[0], [[1, 2], [-1, 0]])
    np.testing.assert_array_equal(smallest[1], [[0, 3], [1, 0]])
    np.testing.assert_array_equal(by_column[0], [[1, 5, 7, 7]])
    np.testing.assert_array_equal(by_column[1], [[0, 0, 1, 1]])
    values, _ = tf.approx_top_k(tf.constant(x), 2, is_max_k=False)
    np.testing.assert_array_equal(_run(values)[0], [[1, 2], [-1, 0]])
    with pytest.raises(ValueError, match="recall_target must be in"):
        tf.math.approx_max_k(x, 1, recall_target=0.0)
    assert tf.nn.approx_max_k is tf.math.approx_max_k
    assert tf.nn.approx_min_k is tf.math.approx_min_k


def test_approx_max_k_does_pass_its_gradient_to_the_chosen_entries():
    x = tf.constant([[1.0, 5.0, 3.0, 2.0]])
    values, _ = tf.math.approx_max_k(x, 2)
    (grad,) = _run(tf.gradients(tf.reduce_sum(values * [[10.0, 1.0]]), x)[0])
    np.testing.assert_array_equal(grad, [[0, 10, 1, 0]])


def test_index_shuffle_does_place_indices_as_tensorflows_permutation():
    places, wide, raw, six_rounds, batched = _run(
        tf.random.experimental.index_shuffle(tf.range(10), seed=[5, 8], max_index=9),
        tf.random.experimental.index_shuffle(
            tf.constant([0, 1, 2, 3], tf.int64), seed=[7, 7], max_index=10**12
        ),
        tf.random_index_shuffle(tf.range(10), [5, 8, 0], 9),
        tf.random_index_shuffle(tf.range(5), [1, 2, 3], 4, rounds=6),
        tf.random_index_shuffle(tf.constant([3, 3]), [[1, 2, 3], [4, 5, 6]], tf.constant([100, 7])),
    )
    np.testing.assert_array_equal(places, [3, 8, 0, 1, 2, 7, 6, 9, 4, 5])
    np.testing.assert_array_equal(wide, [560727983410, 560658793635, 560593765904, 560524576641])
    np.testing.assert_array_equal(raw, [9, 1, 5, 6, 4, 8, 0, 7, 2, 3])
    np.testing.assert_array_equal(six_rounds, [1, 4, 3, 2, 0])
    np.testing.assert_array_equal(batched, [54, 7])


def test_index_shuffle_is_a_permutation_for_any_size():
    for max_index in (0, 1, 2, 255, 256, 1000):
        (places,) = _run(
            tf.random.experimental.index_shuffle(tf.range(max_index + 1), [3, 1], max_index)
        )
        assert sorted(places.tolist()) == list(range(max_index + 1))

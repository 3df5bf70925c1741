"""Random ops: TensorFlow 1.x's seed rules, a fresh draw every run and iteration, the same
sequence in every Session with the same seeds, and TensorFlow's shapes, dtypes, names and errors.

Constants pinned from TensorFlow come from TF 2.21's ``tf.compat.v1`` in graph mode
(``tf.disable_v2_behavior()``), printing the ops' ``seed``/``seed2`` attributes, names, dtypes
and static shapes of the programs written out in each test.
"""

import numpy as np
import pytest
from ops_testing import assert_same, evaluate, run

import dataflow as df


def seeds_of(tensor: df.Tensor) -> tuple:
    """The (seed, seed2) of the random op that ``tensor`` is computed from."""
    stack = [tensor.op]
    while stack:
        op = stack.pop()
        if "seed2" in op.attrs:
            return op.attrs["seed"], op.attrs["seed2"]
        stack.extend(t.op for t in op.inputs)
    raise AssertionError(f"{tensor.name} has no random op")


# -- seeds ---------------------------------------------------------------------------------------
def test_a_graph_seed_gives_each_random_op_the_next_derived_op_seed():
    # tf.set_random_seed(1); random_normal, random_normal, random_uniform(seed=5),
    # random_uniform(int32), truncated_normal -> (1,0) (1,1) (1,5) (1,2) (1,3)
    df.set_random_seed(1)
    tensors = [
        df.random_normal([2]),
        df.random_normal([2]),
        df.random_uniform([2], seed=5),
        df.random_uniform([2, 3], maxval=10, dtype=df.int32),
        df.truncated_normal([2]),
    ]
    assert [seeds_of(t) for t in tensors] == [(1, 0), (1, 1), (1, 5), (1, 2), (1, 3)]
    assert df.get_default_graph().seed == 1


def test_setting_the_graph_seed_again_keeps_counting_derived_op_seeds():
    # TF: the 13th random op after set_random_seed(1) twice has seed2 12.
    df.set_random_seed(1)
    df.random_normal([2])
    df.set_random_seed(1)
    assert seeds_of(df.random_normal([2])) == (1, 1)


def test_an_op_seed_without_a_graph_seed_uses_the_default_graph_seed():
    assert seeds_of(df.random_normal([1], seed=3)) == (87654321, 3)  # as TF
    assert df.random.get_seed(3) == (87654321, 3)


def test_no_seed_at_all_records_zeros_meaning_nondeterministic():
    assert seeds_of(df.random_normal([1])) == (0, 0)
    assert df.get_seed(None) == (None, None)


def test_explicit_zero_seeds_stay_deterministic_and_large_seeds_are_reduced():
    df.set_random_seed(0)
    assert seeds_of(df.random_normal([1], seed=0)) == (0, 2**31 - 1)  # as TF
    df.set_random_seed(2**31 + 5)
    assert seeds_of(df.random_normal([1], seed=-1)) == (6, 2**31 - 2)  # as TF


def test_a_seed_must_be_an_integer():
    with pytest.raises(TypeError, match="integer"):
        df.set_random_seed(1.5)
    with pytest.raises(TypeError, match="integer"):
        df.random_normal([1], seed="1")


# -- streams ------------------------------------------------------------------------------------
def test_each_run_draws_anew_and_a_new_session_repeats_the_sequence():
    df.set_random_seed(7)
    a, b = df.random_normal([4]), df.random_uniform([4])
    with df.Session() as sess:
        first = sess.run([a, b])
        second = sess.run([a, b])
    with df.Session() as sess:
        again = [sess.run([a, b]) for _ in range(2)]
    assert not np.array_equal(first[0], second[0]) and not np.array_equal(first[1], second[1])
    for got, expected in zip(again, [first, second]):
        for x, y in zip(got, expected):
            assert_same(x, y)


def test_two_ops_without_op_seeds_draw_different_values():
    for graph_seed in (None, 3):
        with df.Graph().as_default():
            df.set_random_seed(graph_seed)
            a, b = df.random_normal([8]), df.random_normal([8])
            first, second = run([a, b])
            assert not np.array_equal(first, second)


def test_two_ops_with_equal_seeds_draw_equal_values_as_in_tensorflow():
    a, b = df.random_normal([8], seed=4), df.random_normal([8], seed=4)
    first, second = run([a, b])
    assert_same(first, second)


def test_an_op_without_any_seed_draws_other_values_in_each_session():
    a = df.random_normal([8])
    assert not np.array_equal(run(a), run(a))


def test_new_fetches_in_the_same_session_continue_the_sequence():
    a = df.random_normal([3], seed=1)
    doubled = a * 2.0
    with df.Session() as sess:
        draws = [sess.run(a), sess.run(doubled) / 2.0, sess.run(a)]
    with df.Session() as sess:
        expected = [sess.run(a) for _ in range(3)]
    for got, want in zip(draws, expected):
        assert_same(got, want)


def test_a_failed_run_gives_its_draws_back():
    a = df.random_normal([3], seed=1)
    dims = df.placeholder(df.int32, [None])
    reshaped = df.reshape(a, dims)
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError):
            sess.run([a, reshaped], {dims: [2, 2]})
        after_failure = [sess.run(a), sess.run(a)]
    with df.Session() as sess:
        expected = [sess.run(a), sess.run(a)]
    for got, want in zip(after_failure, expected):
        assert_same(got, want)


def test_a_random_op_in_a_loop_body_draws_anew_each_iteration():
    def body(i, draws):
        return i + 1, df.concat([draws, df.random_uniform([1], seed=2)], 0)

    _, draws = df.while_loop(
        lambda i, d: i < 5,
        body,
        [0, df.zeros([0])],
        shape_invariants=[df.TensorShape([]), df.TensorShape([None])],
    )
    with df.Session() as sess:
        first, second = sess.run(draws), sess.run(draws)
    assert len(np.unique(first)) == 5
    assert not np.array_equal(first, second)
    with df.Session() as sess:
        assert_same(sess.run(draws), first)


def test_a_random_op_in_a_cond_branch_draws_only_when_taken():
    take = df.placeholder(df.bool, [])
    y = df.cond(take, lambda: df.random_normal([2], seed=1), lambda: df.zeros([2]))
    with df.Session() as sess:
        assert_same(sess.run(y, {take: False}), np.zeros(2, np.float32))
        taken = sess.run(y, {take: True})
    with df.Session() as sess:
        assert_same(sess.run(y, {take: True}), taken)  # the untaken run drew nothing


# -- TensorFlow's graphs: names, dtypes, static shapes -----------------------------------------
def test_names_dtypes_and_static_shapes_follow_tensorflow():
    # Each pair is (name, dtype, static shape) as tf.compat.v1 builds the same call in TF 2.21.
    fed_shape = df.placeholder(df.int32, [2])
    cases = [
        (df.random_uniform([2]), "random_uniform/RandomUniform:0", df.float32, [2]),
        (df.random_uniform([2], 1, 3), "random_uniform_1:0", df.float32, [2]),
        (df.random_uniform([2], 0, 1.0, df.float64), "random_uniform_2/Mul:0", df.float64, [2]),
        (df.random_uniform([2], maxval=10, dtype=df.int64), "random_uniform_3:0", df.int64, [2]),
        (df.random_normal([2, 3], dtype=df.float64), "random_normal:0", df.float64, [2, 3]),
        (df.random_normal(df.constant([2, 3])), "random_normal_1:0", df.float32, [2, 3]),
        (df.random_normal(fed_shape), "random_normal_2:0", df.float32, [None, None]),
        (df.truncated_normal([3], 1.0, 2.0), "truncated_normal:0", df.float32, [3]),
        (df.random_shuffle(df.ones([4, 2])), "RandomShuffle:0", df.float32, [4, 2]),
        (df.multinomial(df.zeros([2, 3]), 5), "multinomial/Multinomial:0", df.int64, [2, 5]),
        (
            df.multinomial(df.zeros([2, 3]), 5, output_dtype=df.int32),
            "multinomial_1/Multinomial:0",
            df.int32,
            [2, 5],
        ),
        (df.random.categorical(df.zeros([2, 3]), 5), "categorical/Multinomial:0", df.int64, [2, 5]),
        (df.random_gamma([5], df.ones([2, 3])), "random_gamma/Maximum:0", df.float32, [5, 2, 3]),
        (
            df.random_gamma([5], [1.0, 2.0], beta=[[1.0], [3.0]]),
            "random_gamma_1/Maximum:0",
            df.float32,
            [5, 2, 2],
        ),
        (
            df.random_poisson([1.0, 2.0], [5]),
            "random_poisson/RandomPoissonV2:0",
            df.float32,
            [5, 2],
        ),
        (
            df.random.poisson([1.0, 2.0], [5], dtype=df.int32),
            "random_poisson_1/RandomPoissonV2:0",
            df.int32,
            [5, 2],
        ),
    ]
    for tensor, name, dtype, shape in cases:
        assert (tensor.name, tensor.dtype, tensor.shape.as_list()) == (name, dtype, shape)
    assert df.random_normal(df.placeholder(df.int32)).shape.ndims is None


def test_values_have_their_static_dtype_and_shape_and_a_fed_shape_works():
    dims = df.placeholder(df.int32, [None])
    tensors = [
        df.random_normal(dims, dtype=df.float16),
        df.random_uniform(dims, dtype=df.float64),
        df.truncated_normal([dims[0], 2]),
        df.random_uniform(dims, -3, 3, dtype=df.int32),
        df.random_gamma(dims, [1.0, 2.0], dtype=df.float64),
        df.random_poisson([0.5], dims, dtype=df.int64),
    ]
    values = evaluate(tensors, {dims: [3, 2]})
    assert [v.shape for v in values] == [(3, 2), (3, 2), (3, 2), (3, 2), (3, 2, 2), (3, 2, 1)]


# -- distributions -------------------------------------------------------------------------------
def test_normal_and_truncated_normal_have_their_mean_spread_and_bounds():
    normal, truncated = run(
        [
            df.random_normal([20000], 3.0, 2.0, seed=1),
            df.truncated_normal([20000], -1.0, 0.5, seed=1),
        ]
    )
    assert abs(normal.mean() - 3.0) < 0.05 and abs(normal.std() - 2.0) < 0.05
    assert truncated.min() >= -2.0 and truncated.max() <= 0.0  # within two stddevs of -1
    # The stddev of a unit normal truncated at +-2 is 0.8796 (the 0.879 of variance scaling).
    assert abs(truncated.std() / 0.5 - 0.8796) < 0.02


def test_uniform_draws_cover_their_half_open_range():
    floats, ints, halves = run(
        [
            df.random_uniform([20000], -2.0, 4.0, seed=1),
            df.random_uniform([20000], 3, 7, dtype=df.int64, seed=1),
            df.random_uniform([20000], dtype=df.float16, seed=1),
        ]
    )
    assert -2.0 <= floats.min() and floats.max() < 4.0 and abs(floats.mean() - 1.0) < 0.05
    assert set(np.unique(ints)) == {3, 4, 5, 6}
    assert 0 <= halves.min() and halves.max() < 1


def test_shuffle_permutes_the_first_dimension():
    value = np.arange(20).reshape(10, 2)
    shuffled = evaluate(df.random_shuffle(value, seed=3))
    assert sorted(shuffled[:, 0].tolist()) == list(range(0, 20, 2))
    assert (shuffled[:, 1] == shuffled[:, 0] + 1).all()
    assert not np.array_equal(shuffled, value)
    assert_same(evaluate(df.random_shuffle(5.0)), np.float32(5.0))


def test_multinomial_draws_classes_with_the_softmax_of_the_logits():
    logits = np.log([[0.2, 0.3, 0.5], [1.0, 1.0, 1.0]])
    logits[1, 1:] = -np.inf  # never drawn
    samples = evaluate(df.multinomial(logits, 20000, seed=1))
    frequencies = [np.bincount(row, minlength=3) / 20000 for row in samples]
    np.testing.assert_allclose(frequencies[0], [0.2, 0.3, 0.5], atol=0.02)
    assert_same(frequencies[1], np.array([1.0, 0.0, 0.0]))


def test_gamma_and_poisson_have_their_means():
    gamma, poisson = run(
        [
            df.random_gamma([20000], [0.5, 4.0], beta=2.0, seed=1),
            df.random_poisson([3.0, 40.0], [20000], seed=1),
        ]
    )
    np.testing.assert_allclose(gamma.mean(axis=0), [0.25, 2.0], rtol=0.05)
    np.testing.assert_allclose(poisson.mean(axis=0), [3.0, 40.0], rtol=0.03)
    assert gamma.min() > 0 and (poisson == np.round(poisson)).all()


# -- errors --------------------------------------------------------------------------------------
def test_build_errors_name_the_function_and_the_users_line():
    here = f"{__file__}:"
    with pytest.raises(ValueError, match=f"random_uniform at {here}.*Must specify maxval"):
        df.random_uniform([2], dtype=df.int32)
    with pytest.raises(TypeError, match=f"random_normal at {here}.*floating point"):
        df.random_normal([2], dtype=df.int32)
    with pytest.raises(TypeError, match=f"random_normal at {here}.*integers"):
        df.random_normal([2.5])
    with pytest.raises(ValueError, match="RandomStandardNormal.*must be a vector"):
        df.random_normal([[2]])
    with pytest.raises(ValueError, match=f"{here}.*must not be negative"):
        df.random_normal([-2])
    with pytest.raises(ValueError, match=f"Multinomial.*{here}.*2-D"):
        df.multinomial(df.zeros([3]), 2)
    with pytest.raises(ValueError, match="int32, int64, got int8"):
        df.random_uniform([2], maxval=10, dtype=df.int8)
    with pytest.raises(ValueError, match="minval < maxval"):
        df.random_uniform([2], 5, 5, dtype=df.int32)


def test_run_errors_name_the_op():
    dims = df.placeholder(df.int32, [None])
    low = df.placeholder(df.int32, [])
    samples = df.placeholder(df.int32, [])
    with pytest.raises(df.errors.InvalidArgumentError, match="random_normal.*sizes"):
        run(df.random_normal(dims), {dims: [2, -1]})
    with pytest.raises(df.errors.InvalidArgumentError, match="minval < maxval: 4 >= 4"):
        run(df.random_uniform([2], low, 4, dtype=df.int32), {low: 4})
    with pytest.raises(df.errors.InvalidArgumentError, match="nonnegative"):
        run(df.multinomial([[0.0, 1.0]], samples), {samples: -1})


# -- gradients -----------------------------------------------------------------------------------
def test_the_gradient_reaches_mean_and_stddev_but_not_the_draws():
    mean = df.placeholder(df.float64, [])
    stddev = df.placeholder(df.float64, [])
    y = df.random_normal([1000], mean, stddev, dtype=df.float64, seed=1)
    d_mean, d_stddev = df.gradients(df.reduce_sum(y), [mean, stddev])
    with df.Session() as sess:
        value, got_mean, got_stddev = sess.run([y, d_mean, d_stddev], {mean: 2.0, stddev: 3.0})
    assert got_mean == 1000.0
    np.testing.assert_allclose(got_stddev, np.sum((value - 2.0) / 3.0))
    x = df.ones([3])
    assert df.gradients(df.reduce_sum(df.random_shuffle(x)), x) == [None]


def test_the_gradient_of_gamma_samples_moves_their_moments_with_alpha():
    # E[x] = alpha / beta and E[x^2] = alpha (alpha + 1) / beta^2, so the average gradient of
    # the samples and of their squares must be 1 / beta and (2 alpha + 1) / beta^2.
    alpha = df.placeholder(df.float64, [2])
    x = df.random_gamma([40000], alpha, beta=2.0, dtype=df.float64, seed=5)
    d_mean, d_square = (df.gradients(df.reduce_mean(y, 0), alpha)[0] for y in (x, x * x))
    with df.Session() as sess:
        got_mean, got_square = sess.run([d_mean, d_square], {alpha: [0.7, 3.0]})
    np.testing.assert_allclose(got_mean, [0.5, 0.5], rtol=0.03)
    np.testing.assert_allclose(got_square, [2.4 / 4, 7.0 / 4], rtol=0.05)


# -- saving and drawing --------------------------------------------------------------------------
def test_seeds_survive_saving_and_a_loaded_graph_draws_the_same_sequence(tmp_path):
    df.set_random_seed(11)
    ints = df.random_uniform([3], maxval=5, dtype=df.int32, seed=2)
    y = df.random_normal([3]) + df.cast(ints, df.float32)
    path = str(tmp_path / "random.dfg")
    df.io.save_graph(df.get_default_graph(), path)
    loaded = df.io.load_graph(path)
    with df.Session() as sess:
        expected = [sess.run(y) for _ in range(2)]
    with df.Session(graph=loaded) as sess:
        got = [sess.run(y.name) for _ in range(2)]
    for a, b in zip(got, expected):
        assert_same(a, b)
    for op in df.get_default_graph().get_operations():
        if "seed2" in op.attrs:
            loaded_op = loaded.get_operation_by_name(op.name)
            assert (loaded_op.attrs["seed"], loaded_op.attrs["seed2"]) == (
                op.attrs["seed"],
                op.attrs["seed2"],
            )


def test_random_ops_render(tmp_path):
    df.render(df.random_normal([2], seed=1), tmp_path / "random", format="dot")
    assert "RandomStandardNormal" in (tmp_path / "random.dot").read_text()


# -- dropout ---------------------------------------------------------------------------------------
def test_dropout_takes_its_seeds_as_every_random_op():
    assert seeds_of(df.nn.dropout(df.ones([4]), rate=0.5, seed=3)) == (87654321, 3)
    df.set_random_seed(1)
    first = df.nn.dropout(df.ones([4]), rate=0.5)
    second = df.nn.dropout(df.ones([4]), keep_prob=0.5)
    # TF: the dropouts after set_random_seed(1) take seed2 0 and 1 when nothing else is random.
    assert [seeds_of(first), seeds_of(second)] == [(1, 0), (1, 1)]
    with df.Session() as sess:
        masks = [sess.run([first, second]) for _ in range(2)]
    with df.Session() as sess:
        again = [sess.run([first, second]) for _ in range(2)]
    assert not np.array_equal(masks[0][0], masks[0][1])
    assert not np.array_equal(masks[0][0], masks[1][0])
    for got, expected in zip(again, masks):
        for x, y in zip(got, expected):
            assert_same(x, y)


def test_dropout_in_a_loop_draws_a_new_mask_each_iteration():
    def body(i, masks):
        mask = df.nn.dropout(df.ones([1, 32]), rate=0.5, seed=5)
        return i + 1, df.concat([masks, mask], 0)

    _, masks = df.while_loop(
        lambda i, m: i < 3,
        body,
        [0, df.zeros([0, 32])],
        shape_invariants=[df.TensorShape([]), df.TensorShape([None, 32])],
    )
    value = run(masks)
    assert len({row.tobytes() for row in value}) == 3


def test_dropout_masks_continue_when_new_fetches_rebuild_the_plan():
    dropped = df.nn.dropout(df.ones([64]), rate=0.5, seed=2)
    with df.Session() as sess:
        first = sess.run(dropped)
        second = sess.run(dropped + 0.0)  # another plan, the same op's next mask
    assert not np.array_equal(first, second)

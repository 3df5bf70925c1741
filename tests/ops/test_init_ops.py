"""Initializers: TensorFlow 1.x's classes, their fans, distributions, configs and errors.

The statistical checks draw many values with a fixed seed and allow several standard errors.
Names and configs pinned from TensorFlow come from TF 2.21's ``tf.compat.v1`` initializers in
graph mode, called on the shape ``[3, 4]``.
"""

import math

import numpy as np
import pytest

import dataflow as df
from dataflow.ops.init_ops import TRUNCATED_NORMAL_STDDEV, compute_fans


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def run(tensor):
    with df.Session() as sess:
        return sess.run(tensor)


@pytest.mark.parametrize(
    "shape, fans",
    [
        ([], (1, 1)),
        ([7], (7, 7)),
        ([784, 100], (784, 100)),  # a dense kernel [in, out]
        ([5, 5, 3, 32], (75, 800)),  # a conv2d kernel [h, w, in, out]: 5*5 receptive field
        ([2, 3, 4, 6, 8], (144, 192)),  # conv3d: 24 receptive field
    ],
)
def test_fans_of_dense_and_convolution_kernels(shape, fans):
    assert compute_fans(shape) == fans


def test_the_truncation_correction_is_the_stddev_of_a_unit_normal_cut_at_two():
    # sqrt(1 - 4 phi(2) / (2 Phi(2) - 1)) for the standard normal's phi and Phi.
    phi = math.exp(-2) / math.sqrt(2 * math.pi)
    mass = math.erf(2 / math.sqrt(2))
    assert TRUNCATED_NORMAL_STDDEV == pytest.approx(math.sqrt(1 - 4 * phi / mass), rel=1e-12)


def test_glorot_uniform_stays_within_its_limit_with_the_variance_of_fan_avg():
    values = run(df.glorot_uniform_initializer(seed=1)([400, 200]))
    limit = math.sqrt(6 / 600)
    assert np.abs(values).max() < limit and np.abs(values).max() > 0.99 * limit
    assert values.std() == pytest.approx(math.sqrt(1 / 300), rel=0.02)


@pytest.mark.parametrize(
    "mode, fan", [("fan_in", 3 * 3 * 16), ("fan_out", 3 * 3 * 64), ("fan_avg", 3 * 3 * 40)]
)
def test_variance_scaling_truncated_normal_has_the_variance_it_asks_for(mode, fan):
    init = df.variance_scaling_initializer(scale=2.0, mode=mode, seed=3)
    values = run(init([3, 3, 16, 64]))
    wanted = math.sqrt(2.0 / fan)
    assert values.std() == pytest.approx(wanted, rel=0.03)
    assert np.abs(values).max() <= 2 * wanted / TRUNCATED_NORMAL_STDDEV


def test_variance_scaling_untruncated_normal_and_uniform():
    normal = run(
        df.variance_scaling_initializer(0.5, "fan_out", "untruncated_normal", 4)([50, 400])
    )
    uniform = run(df.variance_scaling_initializer(0.5, "fan_in", "uniform", 4)([50, 400]))
    assert normal.std() == pytest.approx(math.sqrt(0.5 / 400), rel=0.03)
    assert np.abs(normal).max() > 3 * math.sqrt(0.5 / 400)  # not cut at two stddevs
    assert np.abs(uniform).max() < math.sqrt(3 * 0.5 / 50)
    assert uniform.std() == pytest.approx(math.sqrt(0.5 / 50), rel=0.03)


def test_glorot_normal_and_the_he_and_lecun_shortcuts_are_variance_scaling():
    assert df.glorot_normal_initializer().distribution == "truncated_normal"
    assert df.glorot_normal_initializer().mode == "fan_avg"
    assert df.initializers.he_normal().get_config()["scale"] == 2.0
    assert df.initializers.he_uniform().distribution == "uniform"
    assert df.initializers.lecun_normal().mode == "fan_in"
    assert df.initializers.lecun_uniform().scale == 1.0


def test_partition_info_gives_the_fans_of_the_whole_variable():
    class Partition:
        full_shape = [1000, 10]

    values = run(df.glorot_uniform_initializer(seed=1)([100, 10], partition_info=Partition()))
    assert values.shape == (100, 10)
    assert np.abs(values).max() < math.sqrt(6 / 1010)


def test_random_normal_uniform_and_truncated_normal_initializers():
    normal = run(df.random_normal_initializer(1.0, 0.5, seed=1)([20000]))
    uniform = run(df.random_uniform_initializer(-1.0, 3.0, seed=1)([20000]))
    truncated = run(df.truncated_normal_initializer(0.0, 2.0, seed=1)([20000]))
    assert normal.mean() == pytest.approx(1.0, abs=0.02) and normal.std() == pytest.approx(
        0.5, rel=0.03
    )
    assert -1.0 <= uniform.min() and uniform.max() < 3.0
    assert np.abs(truncated).max() <= 4.0


@pytest.mark.parametrize("rows, columns", [(6, 4), (4, 6), (5, 5)])
def test_orthogonal_gives_orthonormal_rows_or_columns_times_the_gain(rows, columns):
    q = run(df.orthogonal_initializer(gain=2.0, seed=1)([rows, columns])).astype(np.float64)
    small = min(rows, columns)
    product = q.T @ q if rows >= columns else q @ q.T
    np.testing.assert_allclose(product, 4.0 * np.eye(small), atol=1e-5)


def test_orthogonal_of_a_convolution_kernel_flattens_its_leading_dims():
    q = run(df.orthogonal_initializer(seed=2)([3, 3, 4, 8])).reshape(36, 8).astype(np.float64)
    np.testing.assert_allclose(q.T @ q, np.eye(8), atol=1e-5)


def test_zeros_ones_and_constant():
    assert (run(df.zeros_initializer()([2, 3])) == 0).all()
    assert run(df.ones_initializer(dtype=df.int32)([2])).dtype == np.int32
    np.testing.assert_array_equal(
        run(df.constant_initializer([1, 2, 3, 4])([2, 2])), [[1, 2], [3, 4]]
    )
    np.testing.assert_array_equal(run(df.constant_initializer(7)([2], dtype=df.int64)), [7, 7])


def test_names_and_configs_follow_tensorflow():
    # TF: the tensor each initializer returns for [3, 4] in a fresh graph, in this order.
    cases = [
        (df.zeros_initializer(), "zeros:0", {"dtype": "float32"}),
        (df.ones_initializer(), "ones:0", {"dtype": "float32"}),
        (df.constant_initializer(), "Const:0", {"value": 0, "dtype": "float32"}),
        (
            df.random_normal_initializer(),
            "random_normal:0",
            {"mean": 0.0, "stddev": 1.0, "seed": None, "dtype": "float32"},
        ),
        (
            df.random_uniform_initializer(),
            "random_uniform:0",
            {"minval": 0.0, "maxval": None, "seed": None, "dtype": "float32"},
        ),
        (
            df.truncated_normal_initializer(),
            "truncated_normal:0",
            {"mean": 0.0, "stddev": 1.0, "seed": None, "dtype": "float32"},
        ),
        (
            df.variance_scaling_initializer(),
            "truncated_normal_1:0",
            {
                "scale": 1.0,
                "mode": "fan_in",
                "distribution": "truncated_normal",
                "seed": None,
                "dtype": "float32",
            },
        ),
        (df.glorot_uniform_initializer(), "random_uniform_1:0", {"seed": None, "dtype": "float32"}),
        (
            df.glorot_normal_initializer(),
            "truncated_normal_2:0",
            {"seed": None, "dtype": "float32"},
        ),
        (df.orthogonal_initializer(), "mul_1:0", {"gain": 1.0, "seed": None, "dtype": "float32"}),
    ]
    for init, name, config in cases:
        assert (init([3, 4]).name, init.get_config()) == (name, config)
        assert type(init).from_config(init.get_config()).get_config() == config
    assert df.initializers.glorot_uniform is df.glorot_uniform_initializer


def test_a_variable_from_an_initializer_repeats_with_its_seed():
    df.set_random_seed(5)
    weights = df.Variable(df.glorot_uniform_initializer()([4, 3]), name="weights")
    init = df.global_variables_initializer()
    values = []
    for _ in range(2):
        with df.Session() as sess:
            sess.run(init)
            values.append(sess.run(weights))
    np.testing.assert_array_equal(values[0], values[1])
    assert weights.shape.as_list() == [4, 3]


def test_an_initializer_inside_a_cond_branch():
    take = df.placeholder(df.bool, [])
    y = df.cond(
        take, lambda: df.glorot_uniform_initializer(seed=1)([2, 2]), lambda: df.zeros([2, 2])
    )
    with df.Session() as sess:
        assert np.abs(sess.run(y, {take: True})).max() > 0
        assert (sess.run(y, {take: False}) == 0).all()


def test_bad_arguments_are_errors_naming_the_users_line():
    here = f"{__file__}:"
    with pytest.raises(ValueError, match=f"variance_scaling_initializer at {here}.*mode"):
        df.variance_scaling_initializer(mode="fan_sum")
    with pytest.raises(ValueError, match=f"{here}.*distribution"):
        df.variance_scaling_initializer(distribution="cauchy")
    with pytest.raises(ValueError, match=f"{here}.*scale must be a positive"):
        df.variance_scaling_initializer(scale=0.0)
    with pytest.raises(ValueError, match=f"{here}.*floating point"):
        df.random_normal_initializer(dtype=df.int32)
    with pytest.raises(ValueError, match=f"orthogonal_initializer at {here}.*two dimensions"):
        df.orthogonal_initializer()([3])
    with pytest.raises(TypeError, match=f"constant_initializer at {here}"):
        df.constant_initializer({"a": 1})
    with pytest.raises(ValueError, match=f"{here}.*fully known shape"):
        df.glorot_uniform_initializer()([None, 3])

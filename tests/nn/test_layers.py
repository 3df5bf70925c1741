"""df.layers (tf.compat.v1.layers): TF1's variable and op names, shapes and values (pinned from
tf.compat.v1 with control flow v1 and the same weights), gradients, reuse, the batch-norm
updates, dropout by ``training``, control flow, save/load and rendering."""

from __future__ import annotations

import re

import numpy as np
import pytest

import dataflow as df
from tests.autodiff.gradient_checking import check_gradients


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def data(*shape):
    """Fixed inputs and weights: sin(1), sin(2), ... rounded to 2 decimals, as float32."""
    return np.round(np.sin(np.arange(1, np.prod(shape) + 1)), 2).reshape(shape).astype(np.float32)


def _run(fetches, feed=None):
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        return sess.run(fetches, feed)


# -- names and shapes ------------------------------------------------------------------------------
def test_layers_name_variables_ops_and_collections_as_tf1():
    # The names, shapes and collections printed by the same program under tf.compat.v1.layers
    # (TF 2.21 with tf_keras, v2 behaviour and control flow v2 disabled).
    x = df.placeholder(df.float32, [None, 8, 8, 3], name="x")
    v = df.placeholder(df.float32, [None, 5], name="v")
    training = df.placeholder_with_default(False, [], name="tr")
    relu_reg = dict(
        activation=df.nn.relu,
        kernel_regularizer=df.reduce_sum,
        activity_regularizer=df.reduce_mean,
    )
    outputs = [
        df.layers.dense(v, 4),
        df.layers.dense(v, 4, **relu_reg),
        df.layers.dense(x, 4, use_bias=False),
        df.layers.conv2d(x, 6, 3),
        df.layers.conv2d(x, 6, [3, 3], strides=2, padding="SAME", activation=df.nn.relu),
        df.layers.max_pooling2d(x, 2, 2),
        df.layers.average_pooling2d(x, 3, 2, padding="same"),
        df.layers.dropout(v, 0.3, training=training),
        df.layers.dropout(v, 0.3),
        df.layers.flatten(x),
        df.layers.batch_normalization(x, training=training),
        df.layers.batch_normalization(v, training=training, momentum=0.9),
        df.layers.conv2d_transpose(x, 5, 3, strides=2, padding="same"),
        df.layers.conv1d(v[:, :, None], 2, 3),
        df.layers.max_pooling1d(v[:, :, None], 2, 2),
    ]
    assert [(t.name, str(t.shape)) for t in outputs] == [
        ("dense/BiasAdd:0", "(?, 4)"),
        ("dense_1/Relu:0", "(?, 4)"),
        ("dense_2/Tensordot:0", "(?, 8, 8, 4)"),
        ("conv2d/BiasAdd:0", "(?, 6, 6, 6)"),
        ("conv2d_1/Relu:0", "(?, 4, 4, 6)"),
        ("max_pooling2d/MaxPool:0", "(?, 4, 4, 3)"),
        ("average_pooling2d/AvgPool:0", "(?, 4, 4, 3)"),
        ("dropout/cond/Merge:0", "(?, 5)"),
        ("dropout_1/Identity:0", "(?, 5)"),
        ("flatten/Reshape:0", "(?, 192)"),
        ("batch_normalization/cond/Merge:0", "(?, 8, 8, 3)"),
        ("batch_normalization_1/batchnorm/add_1:0", "(?, 5)"),
        ("conv2d_transpose/BiasAdd:0", "(?, 16, 16, 5)"),
        ("conv1d/BiasAdd:0", "(?, 3, 2)"),
        ("max_pooling1d/Squeeze:0", "(?, 2, 1)"),
    ]
    assert outputs[3].op.inputs[0].name == "conv2d/Conv2D:0"
    assert outputs[12].op.inputs[0].name == "conv2d_transpose/conv2d_transpose:0"
    trainable = [(w.name, w.shape.as_list()) for w in df.trainable_variables()]
    assert trainable == [
        ("dense/kernel:0", [5, 4]),
        ("dense/bias:0", [4]),
        ("dense_1/kernel:0", [5, 4]),
        ("dense_1/bias:0", [4]),
        ("dense_2/kernel:0", [3, 4]),
        ("conv2d/kernel:0", [3, 3, 3, 6]),
        ("conv2d/bias:0", [6]),
        ("conv2d_1/kernel:0", [3, 3, 3, 6]),
        ("conv2d_1/bias:0", [6]),
        ("batch_normalization/gamma:0", [3]),
        ("batch_normalization/beta:0", [3]),
        ("batch_normalization_1/gamma:0", [5]),
        ("batch_normalization_1/beta:0", [5]),
        ("conv2d_transpose/kernel:0", [3, 3, 5, 3]),
        ("conv2d_transpose/bias:0", [5]),
        ("conv1d/kernel:0", [3, 1, 2]),
        ("conv1d/bias:0", [2]),
    ]
    non_trainable = [w.name for w in df.global_variables() if w not in df.trainable_variables()]
    assert non_trainable == [
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
        "batch_normalization_1/moving_mean:0",
        "batch_normalization_1/moving_variance:0",
    ]
    update_ops = df.get_collection(df.GraphKeys.UPDATE_OPS)
    assert all(isinstance(op, df.Operation) for op in update_ops)  # TF1 holds the ops there
    assert [op.name for op in update_ops] == [
        "batch_normalization/AssignMovingAvg",
        "batch_normalization/AssignMovingAvg_1",
        "batch_normalization_1/cond_2/Merge",
        "batch_normalization_1/cond_3/Merge",
    ]
    assert [t.name for t in df.get_collection(df.GraphKeys.REGULARIZATION_LOSSES)] == [
        "dense_1/kernel/Regularizer/Sum:0",
        "dense_1/ActivityRegularizer/truediv:0",
    ]
    assert df.get_collection(df.GraphKeys.MODEL_VARIABLES) == []


def test_name_and_reuse_share_variables_in_the_enclosing_scope():
    v = df.placeholder(df.float32, [None, 5])
    with df.variable_scope("net"):
        first = df.layers.dense(v, 3, name="fc")
        second = df.layers.dense(v, 3, name="fc", reuse=True)
    # TF1: the second call builds in the name scope net/fc_1 on the variables of net/fc.
    assert (first.name, second.name) == ("net/fc/BiasAdd:0", "net/fc_1/BiasAdd:0")
    assert [w.name for w in df.global_variables()] == ["net/fc/kernel:0", "net/fc/bias:0"]
    a, b = _run([first, second], {v: data(2, 5)})
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="does not exist"):
        df.layers.dense(v, 3, name="other", reuse=True)


def test_regularizers_add_one_loss_per_new_variable_including_the_scopes():
    v = df.placeholder(df.float32, [None, 5])
    for _ in range(2):
        df.layers.dense(v, 3, name="fc", reuse=df.AUTO_REUSE, kernel_regularizer=df.nn.l2_loss)
    with df.variable_scope("s", regularizer=df.reduce_sum):
        layer = df.layers.Dense(2)
        layer(v)
        layer(v)
    # The same program under tf.compat.v1.layers: these losses, none on the layer itself.
    assert [t.name for t in df.get_collection(df.GraphKeys.REGULARIZATION_LOSSES)] == [
        "fc/kernel/Regularizer/L2Loss:0",
        "s/dense/kernel/Regularizer/Sum:0",
        "s/dense/bias/Regularizer/Sum:0",
    ]
    assert layer.losses == []


def test_a_layer_object_called_twice_keeps_its_variables():
    layer = df.layers.Dense(2, name="shared")
    a = layer(df.constant(data(1, 3)))
    b = layer(df.constant(data(1, 3)))
    assert layer.name == "shared" and len(layer.variables) == 2 and layer.built
    assert [w.name for w in df.global_variables()] == ["shared/kernel:0", "shared/bias:0"]
    assert a.name == "shared/BiasAdd:0" and b.name == "shared/BiasAdd_1:0"
    unnamed = [df.layers.Dense(1), df.layers.Dense(1), df.layers.Flatten()]
    assert [layer.name for layer in unnamed] == ["dense", "dense_1", "flatten"]


def test_trainable_false_keeps_variables_out_of_trainable_variables():
    layer = df.layers.Dense(2, trainable=False)
    layer(df.constant(data(1, 3)))
    assert df.trainable_variables() == [] and len(layer.non_trainable_variables) == 2
    assert [w.name for w in df.global_variables()] == ["dense/kernel:0", "dense/bias:0"]


# -- values ----------------------------------------------------------------------------------------
def _assign_fixed_weights():
    """The weights the TF1 run was given, by variable name."""
    ops = []
    for w in df.global_variables():
        shape = w.shape.as_list()
        if w.name.endswith("kernel:0"):
            value = data(*shape) * 0.5
        elif w.name.endswith("bias:0") or "beta" in w.name:
            value = data(*shape) * 0.1
        elif "gamma" in w.name:
            value = 1 + data(*shape) * 0.2
        elif "moving_mean" in w.name:
            value = data(*shape) * 0.3
        else:
            value = 1 + data(*shape) ** 2
        ops.append(w.assign(value))
    return ops


# From tf.compat.v1 with tf_keras: the layers below on data(...) with _assign_fixed_weights.
TF1_VALUES = {
    "dense": [0.4333, 0.1078, 0.0, 0.1492],
    "conv2d": [
        0.3854,
        0.4128,
        0.05935,
        0.1746,
        0.12165,
        0.0,
        0.4022,
        0.27665,
        0.0,
        0.0,
        0.0,
        0.0,
        0.07975,
        0.2513,
        0.1866,
        0.0059,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.02595,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
    ],  # fmt: skip
    "conv2d_transpose_row0": [0.85085, -0.203, -0.7336, 0.3826, -0.4074, 0.1232, 0.584],
    "max_pooling2d": [
        0.84,
        0.99,
        0.66,
        0.99,
        0.66,
        0.99,
        1.0,
        0.99,
        1.0,
        0.99,
        0.96,
        0.91,
        1.0,
        0.55,
        1.0,
        0.9,
        0.96,
        0.75,
    ],  # fmt: skip
    "average_pooling2d": [
        0.1,
        0.15,
        -0.008333,
        -0.016667,
        0.065,
        0.1525,
        0.001667,
        0.101667,
        0.002222,
        -0.01,
        -0.031667,
        0.081667,
        -0.0975,
        0.045,
        0.011667,
        -0.001667,
        -0.1275,
        0.005,
    ],  # fmt: skip
    "conv1d": [1.22295, 0.1583, 0.1645, 1.25695],
    "flatten_channels_first": [
        0.84,
        0.66,
        0.91,
        0.99,
        0.14,
        0.41,
        -0.76,
        -0.54,
        -0.96,
        -1.0,
        -0.28,
        -0.54,
    ],  # fmt: skip
    "batch_norm_fused_row0": [1.795565, 1.220917, 0.338114, -1.70972, -1.110608, -0.359978],
    "batch_norm_2d": [
        1.37594,
        1.217372,
        0.574433,
        -1.240647,
        -1.059726,
        -0.559938,
        1.081574,
        1.314788,
        1.303672,
        -0.880867,
        -1.108434,
        -1.262167,
    ],  # fmt: skip
    "batch_norm_inference": [
        0.60972,
        0.647722,
        0.113722,
        -0.82081,
        -0.98661,
        -0.313658,
        0.448785,
        0.71764,
        0.388467,
        -0.624112,
        -1.021569,
        -0.578227,
    ],  # fmt: skip
    "fused moving_mean": [0.232675, 0.246075, 0.0323],
    "fused moving_variance": [1.56741, 1.74789, 0.961243],
    "2d moving_mean": [0.2318, 0.2442, 0.03105],
    "2d moving_variance": [1.58505, 1.738513, 0.931127],
}


def test_layer_values_and_moving_statistics_match_tf1():
    x4 = df.constant(data(1, 5, 5, 2))
    outputs = {
        "dense": df.layers.dense(data(2, 3), 2, activation=df.nn.relu),
        "conv2d": df.layers.conv2d(x4, 3, 3, strides=2, padding="same", activation=df.nn.relu),
        "conv2d_transpose_row0": df.layers.conv2d_transpose(data(1, 3, 3, 2), 1, 3, strides=2)[
            0, 0
        ],
        "max_pooling2d": df.layers.max_pooling2d(x4, 3, 2, padding="same"),
        "average_pooling2d": df.layers.average_pooling2d(x4, 3, 2, padding="same"),
        "conv1d": df.layers.conv1d(data(1, 6, 2), 2, 3, dilation_rate=2),
        "flatten_channels_first": df.layers.flatten(data(1, 2, 2, 3), data_format="channels_first"),
        "batch_norm_fused_row0": df.layers.batch_normalization(
            data(2, 2, 2, 3), training=True, momentum=0.9
        )[0, 0],
        "batch_norm_2d": df.layers.batch_normalization(
            data(4, 3), training=True, momentum=0.9, epsilon=0.01
        ),
        "batch_norm_inference": df.layers.batch_normalization(data(4, 3), training=False),
    }
    assert outputs["conv2d_transpose_row0"].shape.as_list() == [7, 1]
    update_ops = df.get_collection(df.GraphKeys.UPDATE_OPS)
    moving = {
        "fused moving_mean": "batch_normalization/moving_mean:0",
        "fused moving_variance": "batch_normalization/moving_variance:0",
        "2d moving_mean": "batch_normalization_1/moving_mean:0",
        "2d moving_variance": "batch_normalization_1/moving_variance:0",
    }
    variables = {w.name: w for w in df.global_variables()}
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        sess.run(_assign_fixed_weights())
        values = sess.run(outputs)
        sess.run(update_ops)
        values.update(sess.run({key: variables[name] for key, name in moving.items()}))
    for key, expected in TF1_VALUES.items():
        np.testing.assert_allclose(values[key].ravel(), expected, atol=2e-6, err_msg=key)


def test_channels_first_convolution_is_channels_last_transposed():
    images = data(2, 6, 6, 3)
    weights = dict(
        kernel_initializer=df.constant_initializer(data(3, 3, 3, 4)),
        bias_initializer=df.constant_initializer(data(4)),
    )
    last = df.layers.conv2d(images, 4, 3, strides=2, padding="same", **weights)
    first = df.layers.conv2d(
        images.transpose(0, 3, 1, 2), 4, 3, 2, "same", "channels_first", **weights
    )
    pooled = df.layers.max_pooling2d(first, 2, 1, data_format="channels_first")
    last_value, first_value, pooled_value = _run([last, first, pooled])
    np.testing.assert_allclose(first_value, last_value.transpose(0, 3, 1, 2), rtol=1e-5)
    expected_pool = _run(df.nn.max_pool(last_value, [1, 2, 2, 1], [1, 1, 1, 1], "VALID"))
    np.testing.assert_allclose(pooled_value, expected_pool.transpose(0, 3, 1, 2), rtol=1e-6)


# -- gradients -------------------------------------------------------------------------------------
def _weights_from(tensors: dict):
    """A custom getter that gives the layer the tensors ``tensors`` (by the variable's last
    name) instead of variables, so that the gradient check differentiates with respect to
    them; other variables are made as usual."""

    def getter(getter, name, *args, **kwargs):
        given = tensors.get(name.split("/")[-1])
        return getter(name, *args, **kwargs) if given is None else given

    return getter


def test_dense_gradients_reach_its_kernel_bias_and_input():
    def make(x, kernel, bias):
        with df.variable_scope("", custom_getter=_weights_from({"kernel": kernel, "bias": bias})):
            return df.layers.dense(x, 2, activation=df.tanh)

    check_gradients(make, [data(3, 2, 4), data(4, 2), data(2)])


def test_conv2d_gradients_reach_its_kernel_bias_and_input():
    def make(x, kernel, bias):
        with df.variable_scope("", custom_getter=_weights_from({"kernel": kernel, "bias": bias})):
            y = df.layers.conv2d(x, 2, 2, strides=2, padding="same")
            return df.layers.max_pooling2d(y, 2, 1)

    check_gradients(make, [data(1, 5, 5, 2), data(2, 2, 2, 2), data(2)])


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 2, 3)], ids=["2d", "4d"])
def test_batch_norm_gradients_reach_gamma_beta_and_input(shape):
    def make(x, gamma, beta):
        with df.variable_scope("", custom_getter=_weights_from({"gamma": gamma, "beta": beta})):
            return df.layers.batch_normalization(x, training=True, fused=False)

    check_gradients(make, [data(*shape), 1 + data(3), data(3)], rtol=1e-4, atol=1e-5)


def test_fused_batch_norm_has_the_gradients_of_the_unfused_one():
    x = df.constant(data(2, 3, 2, 3))
    weights = df.constant(data(2, 3, 2, 3))
    gradients = []
    for fused in (True, False):
        y = df.layers.batch_normalization(x, training=True, fused=fused)
        gamma, beta = df.trainable_variables()[-2:]
        gradients.append(df.gradients(df.reduce_sum(y * weights), [x, gamma, beta]))
    assert "FusedBatchNormV3" in {op.type for op in df.get_default_graph().get_operations()}
    fused, unfused = _run(gradients)
    for a, b in zip(fused, unfused):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_a_training_step_changes_every_trainable_variable():
    x = df.constant(data(4, 6, 6, 1))
    y = df.layers.conv2d(x, 2, 3, activation=df.nn.relu)
    y = df.layers.batch_normalization(y, training=True)
    y = df.layers.dense(df.layers.flatten(df.layers.max_pooling2d(y, 2, 2)), 3)
    loss = df.reduce_mean(df.square(y - 1.0))
    with df.control_dependencies(df.get_collection(df.GraphKeys.UPDATE_OPS)):
        step = df.train.GradientDescentOptimizer(0.1).minimize(loss)
    variables = df.global_variables()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        before = sess.run(variables)
        sess.run(step)
        after = sess.run(variables)
    for w, b, a in zip(variables, before, after):
        assert not np.array_equal(b, a), f"{w.name} did not change"


# -- batch normalization and dropout by `training` -------------------------------------------------
@pytest.mark.parametrize("fused", [True, False])
def test_batch_norm_updates_move_the_statistics_only_when_training(fused):
    training = df.placeholder(df.bool, [])
    x = data(2, 2, 2, 3)
    y = df.layers.batch_normalization(x, training=training, momentum=0.5, fused=fused)
    mean, variance = df.global_variables()[2:]
    updates = df.get_collection(df.GraphKeys.UPDATE_OPS)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        inference = sess.run([y, updates], {training: False})[0]
        assert np.array_equal(sess.run(mean), np.zeros(3))
        assert np.array_equal(sess.run(variance), np.ones(3))
        trained = sess.run([y, updates], {training: True})[0]
        batch_mean = x.reshape(-1, 3).mean(0)
        np.testing.assert_allclose(sess.run(mean), batch_mean / 2, rtol=1e-5)
        # The fused kernel feeds the unbiased batch variance to the moving one, as in TF1.
        batch_variance = x.reshape(-1, 3).var(0, ddof=1 if fused else 0)
        np.testing.assert_allclose(sess.run(variance), (1 + batch_variance) / 2, rtol=1e-5)
    np.testing.assert_allclose(inference, x / np.sqrt(1 + 1e-3), rtol=1e-5)
    normalized = (x - batch_mean) / np.sqrt(x.reshape(-1, 3).var(0) + 1e-3)
    np.testing.assert_allclose(trained, normalized, rtol=1e-4, atol=1e-5)


def test_batch_norm_without_center_and_scale_makes_only_the_moving_statistics():
    df.layers.batch_normalization(data(4, 2), center=False, scale=False, axis=1)
    assert [w.name for w in df.global_variables()] == [
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
    ]


def test_dropout_drops_and_scales_only_when_training():
    training = df.placeholder(df.bool, [])
    x = np.ones((100, 100), np.float32)
    fed = df.layers.dropout(x, rate=0.25, training=training, seed=1)
    off = df.layers.dropout(x, rate=0.25)
    on = df.layers.dropout(x, rate=0.25, training=True)
    with df.Session() as sess:
        kept = sess.run(fed, {training: True})
        not_training = sess.run(fed, {training: False})
        default, always = sess.run([off, on])
    for dropped in (kept, always):
        assert set(np.unique(dropped)) == {0.0, np.float32(1 / 0.75)}
        assert 0.2 < (dropped == 0).mean() < 0.3
    np.testing.assert_array_equal(not_training, x)
    np.testing.assert_array_equal(default, x)


# -- control flow, save/load, rendering ------------------------------------------------------------
def test_layers_build_and_run_inside_cond_and_while_loop():
    x = df.placeholder(df.float32, [2, 3])
    pred = df.placeholder(df.bool, [])
    init = df.constant_initializer(0.5)
    with df.variable_scope("", initializer=init):
        branched = df.cond(
            pred,
            lambda: df.layers.dense(x, 3, name="in_cond"),
            lambda: df.layers.batch_normalization(x, training=False),
        )
        _, looped = df.while_loop(
            lambda i, h: i < 3,
            lambda i, h: (i + 1, df.layers.dense(h, 3, activation=df.tanh, name="in_loop")),
            [df.constant(0), x],
        )
    expected = data(2, 3)
    for _ in range(3):
        expected = np.tanh(expected @ np.full((3, 3), 0.5))
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        taken = sess.run(branched, {x: data(2, 3), pred: True})
        untaken = sess.run(branched, {x: data(2, 3), pred: False})
        loop_value = sess.run(looped, {x: data(2, 3)})
        grads = sess.run(
            df.gradients(df.reduce_sum(looped), df.trainable_variables()[-2:]), {x: data(2, 3)}
        )
    np.testing.assert_allclose(taken, data(2, 3) @ np.full((3, 3), 0.5), rtol=1e-6)
    np.testing.assert_allclose(untaken, data(2, 3) / np.sqrt(1 + 1e-3), rtol=1e-6)
    np.testing.assert_allclose(loop_value, expected, rtol=1e-5)
    assert [w.name for w in df.trainable_variables()][-2:] == [
        "in_loop/kernel:0",
        "in_loop/bias:0",
    ]
    assert all(np.abs(g).sum() > 0 for g in grads)


def test_a_small_cnn_saves_loads_and_renders(tmp_path):
    df.set_random_seed(7)
    x = df.placeholder(df.float32, [None, 6, 6, 1], name="x")
    training = df.placeholder_with_default(False, [], name="training")
    y = df.layers.conv2d(x, 2, 3, padding="same", activation=df.nn.relu)
    y = df.layers.batch_normalization(y, training=training)
    y = df.layers.dropout(
        df.layers.flatten(df.layers.max_pooling2d(y, 2, 2)), 0.5, training=training
    )
    df.identity(df.layers.dense(y, 3), name="logits")
    df.global_variables_initializer()
    graph = df.get_default_graph()
    path = str(tmp_path / "cnn.dfg")
    df.io.save_graph(graph, path)
    results = []
    for g in (graph, df.io.load_graph(path)):
        with g.as_default(), df.Session() as sess:
            sess.run("init")
            results.append(sess.run("logits:0", {"x:0": data(2, 6, 6, 1)}))
    np.testing.assert_array_equal(*results)
    source = df.render(graph, format="dot").source
    assert "conv2d" in source and "batch_normalization" in source


# -- bad input -------------------------------------------------------------------------------------
def test_bad_arguments_and_inputs_name_the_layer_and_the_users_line():
    here = re.escape(__file__.rsplit("/", 1)[-1])
    v = df.placeholder(df.float32, [None, None])
    with pytest.raises(ValueError, match=rf"Dense layer 'dense' at .*{here}:\d+: the last dim"):
        df.layers.dense(v, 3)
    with pytest.raises(ValueError, match=rf"Conv2D layer 'conv2d' at .*{here}.*padding"):
        df.layers.conv2d(data(1, 4, 4, 1), 2, 3, padding="full")
    with pytest.raises(ValueError, match=r"Conv2D layer 'conv2d_1' .*rank 4"):
        df.layers.conv2d(data(4, 4, 1), 2, 3)
    with pytest.raises(ValueError, match=r"MaxPooling2D .*pool_size must be 2 positive"):
        df.layers.max_pooling2d(data(1, 4, 4, 1), [2, 0], 1)
    with pytest.raises(ValueError, match=r"Dropout .*rate must be in \[0, 1\)"):
        df.layers.dropout(data(2, 2), rate=1.5)
    with pytest.raises(ValueError, match=r"BatchNormalization .*fused=True needs 4-D"):
        df.layers.batch_normalization(data(2, 2), fused=True)
    with pytest.raises(ValueError, match=r"Flatten .*data_format must be"):
        df.layers.flatten(data(2, 2), data_format="NHWC")
    with pytest.raises(TypeError, match=r"training must be a bool"):
        df.layers.dropout(data(2, 2), training="yes")
    with pytest.raises(NotImplementedError, match=r"renorm is not supported"):
        df.layers.batch_normalization(data(2, 2), renorm=True)

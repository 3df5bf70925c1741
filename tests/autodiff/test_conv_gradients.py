"""Gradients of convolution, pooling and normalization against central differences, in NHWC
and NCHW, and through ``cond`` and ``while_loop``."""

import numpy as np
import pytest
from gradient_checking import check_gradients

import dataflow as df


def normal(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).normal(size=shape)


def distinct(*shape):
    """Values far enough apart that a finite difference never changes a max pool's argmax."""
    values = np.random.default_rng(3).permutation(int(np.prod(shape))) * 0.1
    return values.reshape(shape)


CASES = [
    (
        "Conv2D explicit padding strided",
        lambda x, f: df.nn.conv2d(x, f, [1, 2, 1, 1], [[0, 0], [2, 1], [0, 1], [0, 0]]),
        [normal(1, 5, 4, 2), normal(3, 2, 2, 3)],
    ),
    (
        "Conv2D NCHW dilated",
        lambda x, f: df.nn.conv2d(x, f, 1, "SAME", data_format="NCHW", dilations=[1, 1, 2, 1]),
        [normal(2, 2, 5, 4), normal(2, 2, 2, 2)],
    ),
    (
        "conv2d_transpose",
        lambda v, f: df.nn.conv2d_transpose(v, f, [1, 5, 5, 2], [1, 2, 2, 1], "SAME"),
        [normal(1, 3, 3, 3), normal(3, 3, 2, 3)],
    ),
    (
        "DepthwiseConv2dNative strided",
        lambda x, f: df.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME"),
        [normal(2, 5, 4, 2), normal(3, 2, 2, 2)],
    ),
    (
        "DepthwiseConv2dNative NCHW",
        lambda x, f: df.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "VALID", data_format="NCHW"),
        [normal(1, 2, 4, 4), normal(2, 2, 2, 3)],
    ),
    (
        "separable_conv2d",
        lambda x, d, p: df.nn.separable_conv2d(x, d, p, [1, 1, 1, 1], "SAME"),
        [normal(1, 4, 4, 2), normal(2, 2, 2, 2), normal(1, 1, 4, 3)],
    ),
    (
        "conv1d",
        lambda x, f: df.nn.conv1d(x, f, 1, "VALID"),
        [normal(2, 6, 2), normal(3, 2, 2)],
    ),
    (
        "MaxPool NCHW overlapping",
        lambda x: df.nn.max_pool(x, [1, 1, 3, 3], [1, 1, 2, 2], "SAME", "NCHW"),
        [distinct(1, 2, 5, 5)],
    ),
    ("AvgPool NCHW", lambda x: df.nn.avg_pool(x, 2, 2, "SAME", "NCHW"), [normal(1, 2, 3, 5)]),
    (
        "LRN",
        lambda x: df.nn.lrn(x, depth_radius=2, bias=1.5, alpha=0.4, beta=0.75),
        [normal(2, 2, 2, 6)],
    ),
    (
        "FusedBatchNorm training",
        lambda x, s, o: df.nn.fused_batch_norm(x, s, o, epsilon=0.01)[0],
        [normal(3, 2, 2, 3), normal(3), normal(3)],
    ),
    (
        "FusedBatchNorm training NCHW",
        lambda x, s, o: df.nn.fused_batch_norm(x, s, o, epsilon=0.01, data_format="NCHW")[0],
        [normal(3, 3, 2, 2), normal(3), normal(3)],
    ),
    (
        "FusedBatchNorm inference",
        lambda x, s, o: df.nn.fused_batch_norm(
            x, s, o, np.float64([0.1, -0.2]), np.float64([1.5, 0.5]), is_training=False
        )[0],
        [normal(2, 2, 3, 2), normal(2), normal(2)],
    ),
]


@pytest.mark.parametrize("make, inputs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(make, inputs):
    check_gradients(make, inputs)


def _conv_block(x, f):
    return df.nn.max_pool(df.nn.relu(df.nn.conv2d(x, f, 1, "SAME")), 2, 1, "SAME")


def test_convolutions_in_a_while_loop_have_the_unrolled_gradient():
    x_value, f_value = distinct(1, 4, 4, 2), normal(3, 3, 2, 2) * 0.3

    def looped(x, f):
        _, y = df.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, _conv_block(y, f)), [0, x])
        return y

    def unrolled(x, f):
        for _ in range(3):
            x = _conv_block(x, f)
        return x

    results = []
    for make in (looped, unrolled):
        with df.Graph().as_default():
            x, f = df.constant(x_value), df.constant(f_value)
            y = make(x, f)
            grads = df.gradients(df.reduce_sum(y * y), [x, f])
            with df.Session() as sess:
                results.append(sess.run([y] + grads))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    check_gradients(looped, [x_value, f_value])


@pytest.mark.parametrize("take_conv", [True, False])
def test_convolutions_in_a_cond_take_their_gradient_only_on_the_taken_branch(take_conv):
    x_value, f_value = normal(1, 4, 4, 2), normal(3, 3, 2, 2)
    with df.Graph().as_default():
        x, f = df.constant(x_value), df.constant(f_value)
        flag = df.placeholder(df.bool, [])
        y = df.cond(
            flag,
            lambda: df.nn.depthwise_conv2d(x, f, 1, "SAME"),
            lambda: df.nn.avg_pool(df.concat([x, x], 3), 1, 1, "VALID"),
        )
        grad_x, grad_f = df.gradients(df.reduce_sum(y), [x, f])
        with df.Session() as sess:
            gx, gf = sess.run([grad_x, grad_f], {flag: take_conv})
    assert gx.shape == x_value.shape
    if take_conv:
        assert np.any(gf != 0)
    else:
        np.testing.assert_array_equal(gf, 0)
        np.testing.assert_allclose(gx, 2.0)


def test_fused_batch_norm_statistics_outputs_pass_no_gradient_as_tensorflow():
    x = df.constant(normal(2, 2, 2, 3))
    _, mean, variance = df.nn.fused_batch_norm(
        x, df.ones([3], df.float64), df.zeros([3], df.float64)
    )
    assert df.gradients(df.reduce_sum(mean) + df.reduce_sum(variance), x) == [None]


@pytest.mark.parametrize(
    "normalize",
    [
        lambda x: df.nn.lrn(x),
        lambda x: df.nn.fused_batch_norm(x, df.ones([2], df.float64), df.zeros([2], df.float64))[0],
    ],
    ids=["LRN", "FusedBatchNormV3"],
)
def test_second_derivatives_of_the_normalizations_are_refused_naming_the_op(normalize):
    x = df.constant(normal(1, 2, 2, 2))
    (grad,) = df.gradients(df.reduce_sum(normalize(x) ** 2), x)
    with pytest.raises(LookupError, match="second derivative") as info:
        df.gradients(df.reduce_sum(grad), x)
    assert "test_conv_gradients.py" in str(info.value)

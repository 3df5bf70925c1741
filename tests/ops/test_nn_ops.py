"""nn_ops (``df.nn``): activations, softmax and cross entropies, conv2d and pooling against
naive numpy references, normalization, and dropout."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ops_testing import assert_same, evaluate, placeholder_for, run

import dataflow as df

RNG = np.random.default_rng(1234)


def random(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# -- activations -----------------------------------------------------------------------------------
ACTIVATIONS = [
    (df.nn.relu, lambda x: np.maximum(x, 0)),
    (df.nn.relu6, lambda x: np.clip(x, 0, 6)),
    (df.nn.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1)),
    (df.nn.softplus, lambda x: np.log1p(np.exp(x))),
    (df.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    (df.nn.tanh, np.tanh),
]


@pytest.mark.parametrize("fn, reference", ACTIVATIONS, ids=[a[0].__name__ for a in ACTIVATIONS])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_matches_numpy(fn, reference, dtype):
    x = (random(3, 4, dtype=dtype) * 4).astype(dtype)
    px = placeholder_for(x, [False, True])
    assert_same(evaluate(fn(px), {px: x}), reference(x).astype(dtype), rtol=1e-5, atol=1e-6)


def test_relu_of_integers_stays_integer():
    assert_same(evaluate(df.nn.relu(df.constant([-2, 3]))), np.array([0, 3], np.int32))


def test_activations_do_not_overflow_for_large_inputs():
    x = df.constant([-1000.0, 1000.0])
    assert_same(evaluate(df.nn.softplus(x)), np.float32([0, 1000]))
    assert_same(evaluate(df.nn.sigmoid(x)), np.float32([0, 1]))
    assert_same(evaluate(df.nn.elu(x)), np.float32([-1, 1000]))


def test_elu_of_integers_raises_type_error():
    with pytest.raises(TypeError):
        df.nn.elu(df.constant([1]))


# -- softmax and cross entropy ---------------------------------------------------------------------
def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_softmax_and_log_softmax_match_numpy(axis):
    x = random(3, 5)
    px = placeholder_for(x, [False, True])
    np_axis = -1 if axis is None else axis
    assert_same(evaluate(df.nn.softmax(px, axis=axis), {px: x}), _softmax(x, np_axis), rtol=1e-5)
    expected = np.log(_softmax(x.astype(np.float64), np_axis)).astype(np.float32)
    assert_same(evaluate(df.nn.log_softmax(px, axis), {px: x}), expected, rtol=1e-5)


def test_softmax_is_stable_for_large_logits():
    out = evaluate(df.nn.softmax(df.constant([1000.0, 1000.0, -1000.0])))
    assert_same(out, np.float32([0.5, 0.5, 0]))


def test_softmax_accepts_tf1_dim():
    assert_same(
        evaluate(df.nn.softmax(df.constant([[0.0], [0.0]]), dim=0)),
        np.full((2, 1), 0.5, np.float32),
    )


def test_softmax_axis_out_of_range_raises_value_error():
    with pytest.raises(ValueError, match="out of range"):
        df.nn.softmax(df.zeros([2, 3]), axis=2)


def test_sparse_softmax_cross_entropy_matches_the_definition():
    logits = random(4, 3)
    labels = np.array([0, 2, 1, 2], np.int64)
    pl = placeholder_for(logits, [False, True])
    loss = df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=pl)
    assert loss.shape.as_list() == [4]
    expected = -np.log(_softmax(logits.astype(np.float64)))[np.arange(4), labels]
    assert_same(evaluate(loss, {pl: logits}), expected.astype(np.float32), rtol=1e-5)


def test_sparse_softmax_cross_entropy_over_more_dimensions():
    logits = random(2, 3, 4)
    labels = np.array([[0, 1, 3], [3, 2, 1]], np.int32)
    loss = df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    log_probs = np.log(_softmax(logits.astype(np.float64)))
    expected = -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    assert_same(evaluate(loss), expected.astype(np.float32), rtol=1e-5)


def test_sparse_softmax_cross_entropy_label_out_of_range_fails_the_run():
    labels = df.placeholder(df.int32, [2])
    loss = df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=df.zeros([2, 3]))
    with pytest.raises(df.errors.InvalidArgumentError, match="label value of 3"):
        run(loss, {labels: [0, 3]})


def test_sparse_softmax_cross_entropy_with_mismatched_shapes_raises_value_error():
    with pytest.raises(ValueError, match="labels"):
        df.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1, 2], logits=df.zeros([2, 3]))


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_cross_entropy_matches_the_definition(axis):
    logits = random(3, 4).astype(np.float64)
    labels = _softmax(random(3, 4).astype(np.float64), axis)
    loss = df.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, axis=axis)
    expected = -(labels * np.log(_softmax(logits, axis))).sum(axis)
    assert_same(evaluate(loss), expected, rtol=1e-10)


def test_softmax_cross_entropy_with_mismatched_shapes_raises_value_error():
    with pytest.raises(ValueError, match="labels"):
        df.nn.softmax_cross_entropy_with_logits(labels=df.zeros([2, 4]), logits=df.zeros([2, 3]))


def test_bias_add_adds_along_the_channel_dimension():
    x = random(2, 3, 4)
    bias = np.arange(4, dtype=np.float32)
    assert_same(evaluate(df.nn.bias_add(x, bias)), x + bias)
    bias3 = np.arange(3, dtype=np.float32)
    out = df.nn.bias_add(x, bias3, data_format="NCHW")
    assert_same(evaluate(out), x + bias3[:, None])


def test_bias_add_with_the_wrong_size_raises_value_error():
    with pytest.raises(ValueError, match="channels"):
        df.nn.bias_add(df.zeros([2, 3]), df.zeros([2]))


# -- convolution and pooling -----------------------------------------------------------------------
def _same_pads(size, window, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return out, total // 2


def _conv_reference(x, f, strides, padding, dilations=(1, 1)):
    n, h, w, c = x.shape
    kh, kw, _, o = f.shape
    eff = [(kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1]
    if padding == "SAME":
        (oh, top), (ow, left) = _same_pads(h, eff[0], strides[0]), _same_pads(w, eff[1], strides[1])
    else:
        oh, ow = (h - eff[0]) // strides[0] + 1, (w - eff[1]) // strides[1] + 1
        top = left = 0
    out = np.zeros((n, oh, ow, o), np.float64)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r = i * strides[0] - top + a * dilations[0]
                    q = j * strides[1] - left + b * dilations[1]
                    if 0 <= r < h and 0 <= q < w:
                        out[:, i, j, :] += x[:, r, q, :] @ f[a, b]
    return out


@settings(max_examples=40, deadline=None)
@given(
    h=st.integers(1, 7),
    w=st.integers(1, 7),
    kh=st.integers(1, 3),
    kw=st.integers(1, 3),
    strides=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    dilations=st.sampled_from([(1, 1), (2, 1), (1, 2)]),
    padding=st.sampled_from(["SAME", "VALID"]),
)
def test_conv2d_matches_a_direct_loop(h, w, kh, kw, strides, dilations, padding):
    eff_h, eff_w = (kh - 1) * dilations[0] + 1, (kw - 1) * dilations[1] + 1
    if padding == "VALID" and (eff_h > h or eff_w > w):
        return
    x = random(2, h, w, 3, dtype=np.float64)
    f = random(kh, kw, 3, 2, dtype=np.float64)
    with df.Graph().as_default():
        px = placeholder_for(x, [False, True, True, True])
        out = df.nn.conv2d(px, f, [1, *strides, 1], padding, dilations=list(dilations))
        expected = _conv_reference(x, f, strides, padding, dilations)
        assert_same(evaluate(out, {px: x}), expected, rtol=1e-9, atol=1e-12)


def test_conv2d_of_float32_stays_float32():
    out = df.nn.conv2d(df.ones([1, 4, 4, 2]), df.ones([3, 3, 2, 5]), 1, "VALID")
    assert out.shape.as_list() == [1, 2, 2, 5]
    assert_same(evaluate(out), np.full((1, 2, 2, 5), 18, np.float32))


def test_conv2d_with_mismatched_channels_raises_value_error():
    with pytest.raises(ValueError, match="channels"):
        df.nn.conv2d(df.zeros([1, 4, 4, 2]), df.zeros([3, 3, 3, 1]), 1, "SAME")


def test_conv2d_valid_with_a_filter_larger_than_the_input_raises_value_error():
    with pytest.raises(ValueError, match="larger"):
        df.nn.conv2d(df.zeros([1, 2, 2, 1]), df.zeros([3, 3, 1, 1]), 1, "VALID")


def test_conv2d_with_a_filter_larger_than_the_fed_input_fails_the_run():
    x = df.placeholder(df.float32, [1, None, None, 1])
    out = df.nn.conv2d(x, df.zeros([3, 3, 1, 1]), 1, "VALID")
    with pytest.raises(df.errors.InvalidArgumentError, match="larger"):
        run(out, {x: np.zeros((1, 1, 1, 1), np.float32)})


@pytest.mark.parametrize(
    "make",
    [
        lambda x: df.nn.conv2d(x, df.zeros([3, 3, 1, 1]), 1, "VALID"),
        lambda x: df.nn.max_pool(x, 3, 1, "VALID"),
        lambda x: df.nn.avg_pool(x, 3, 1, "VALID"),
    ],
)
def test_a_window_one_larger_than_the_fed_input_gives_an_empty_output(make):
    # TensorFlow's kernels compute (2 - 3) // 1 + 1 = 0 output positions, not an error.
    x = df.placeholder(df.float32, [1, None, None, 1])
    assert run(make(x), {x: np.zeros((1, 2, 2, 1), np.float32)}).shape == (1, 0, 0, 1)


def test_max_pool_skips_nans_as_tensorflow_does():
    x = np.float32([np.nan, 1, np.nan, np.nan, -np.inf, 2, np.nan, -np.inf]).reshape(1, 2, 4, 1)
    out = run(df.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"))
    # A window of NaNs and -infs gives the lowest finite float, TensorFlow's starting value.
    assert_same(out.reshape(-1), np.float32([2, np.finfo(np.float32).min]))


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_padding_must_be_upper_case_same_or_valid(padding):
    with pytest.raises(ValueError, match="padding"):
        df.nn.conv2d(df.zeros([1, 4, 4, 1]), df.zeros([3, 3, 1, 1]), 1, padding)
    with pytest.raises(ValueError, match="padding"):
        df.nn.max_pool(df.zeros([1, 4, 4, 1]), 2, 2, padding)


def test_pooling_takes_no_explicit_padding_as_tf_compat_v1():
    with pytest.raises(ValueError, match="padding"):
        df.nn.max_pool(df.zeros([1, 4, 4, 1]), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]])


def test_conv2d_of_int32():
    x = np.arange(9, dtype=np.int32).reshape(1, 3, 3, 1)
    out = run(df.nn.conv2d(x, np.ones((2, 2, 1, 1), np.int32), 1, "VALID"))
    assert_same(out.reshape(-1), np.int32([8, 12, 20, 24]))


def test_softmax_of_a_fed_scalar_fails_the_run():
    x = df.placeholder(df.float32)
    with pytest.raises(df.errors.InvalidArgumentError, match="dimension"):
        run(df.nn.softmax(x), {x: 1.0})
    with pytest.raises(df.errors.InvalidArgumentError, match="dimension"):
        run(df.nn.log_softmax(x), {x: 1.0})


def test_bias_add_checks_fed_shapes_and_infers_the_channel_dimension():
    x = df.placeholder(df.float32, [None, None])
    out = df.nn.bias_add(x, [1.0, 2.0, 3.0])
    assert out.shape.as_list() == [None, 3]
    v = df.placeholder(df.float32)
    b = df.placeholder(df.float32)
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="at least 2D"):
            sess.run(df.nn.bias_add(v, b), {v: [1.0, 2.0], b: [1.0, 2.0]})
        with pytest.raises(df.errors.InvalidArgumentError, match="Biases must be 1D"):
            sess.run(df.nn.bias_add(v, b), {v: np.ones((2, 2)), b: np.ones((1, 2))})
        with pytest.raises(df.errors.InvalidArgumentError, match="as many biases"):
            sess.run(df.nn.bias_add(v, b), {v: np.ones((2, 2)), b: np.ones(3)})


def test_softmax_cross_entropy_casts_and_broadcasts_labels():
    logits = np.float64([[0.0, 0.0], [1.0, 0.0]])
    loss = df.nn.softmax_cross_entropy_with_logits(labels=np.float32([[1.0, 0.0]]), logits=logits)
    assert loss.dtype is df.float64 and loss.shape.as_list() == [2]
    assert_same(run(loss), np.float64([np.log(2), np.log(1 + np.exp(-1))]))


def test_dropout_with_rate_zero_returns_its_input():
    x = df.ones([2, 2])
    assert df.nn.dropout(x, rate=0.0) is x
    assert df.nn.dropout(x, keep_prob=1.0) is x


def test_dropout_of_ints_is_a_value_error():
    with pytest.raises(ValueError, match="floating"):
        df.nn.dropout(df.ones([2], df.int32), rate=0.5)


def test_batch_normalization_op_names_follow_tensorflow():
    x = df.placeholder(df.float32, [None, 2])
    out = df.nn.batch_normalization(
        x, df.zeros([2]), df.ones([2]), df.zeros([2]), df.ones([2]), 1e-3
    )
    assert out.name == "batchnorm/add_1:0"
    assert df.nn.batch_normalization(x, 0.0, 1.0, 0.0, 2.0, 0.5).name == "batchnorm_1/add:0"


def test_conv2d_rejects_unknown_data_formats_and_paddings():
    with pytest.raises(ValueError, match="NHWC"):
        df.nn.conv2d(df.zeros([1, 1, 4, 4]), df.zeros([1, 1, 1, 1]), 1, "SAME", data_format="CHWN")
    with pytest.raises(ValueError, match="padding"):
        df.nn.conv2d(df.zeros([1, 4, 4, 1]), df.zeros([1, 1, 1, 1]), 1, "FULL")


def test_conv2d_strides_over_the_batch_dimension_raise_value_error():
    with pytest.raises(ValueError, match="batch"):
        df.nn.conv2d(df.zeros([1, 4, 4, 1]), df.zeros([1, 1, 1, 1]), [2, 1, 1, 1], "SAME")


def _pool_reference(x, ksize, strides, padding, reduce):
    n, h, w, c = x.shape
    if padding == "SAME":
        (oh, top), (ow, left) = (
            _same_pads(h, ksize[0], strides[0]),
            _same_pads(w, ksize[1], strides[1]),
        )
    else:
        oh, ow = (h - ksize[0]) // strides[0] + 1, (w - ksize[1]) // strides[1] + 1
        top = left = 0
    out = np.zeros((n, oh, ow, c), x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, q0 = i * strides[0] - top, j * strides[1] - left
            window = x[:, max(r0, 0) : r0 + ksize[0], max(q0, 0) : q0 + ksize[1], :]
            out[:, i, j, :] = reduce(window, axis=(1, 2))
    return out


@settings(max_examples=40, deadline=None)
@given(
    h=st.integers(1, 7),
    w=st.integers(1, 7),
    ksize=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    strides=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    padding=st.sampled_from(["SAME", "VALID"]),
    pool=st.sampled_from(["max", "avg"]),
)
def test_pooling_matches_a_direct_loop(h, w, ksize, strides, padding, pool):
    if padding == "VALID" and (ksize[0] > h or ksize[1] > w):
        return
    x = random(2, h, w, 3, dtype=np.float64)
    fn, reduce = (df.nn.max_pool, np.max) if pool == "max" else (df.nn.avg_pool, np.mean)
    with df.Graph().as_default():
        px = placeholder_for(x, [True, False, False, True])
        out = fn(px, [1, *ksize, 1], [1, *strides, 1], padding)
        expected = _pool_reference(x, ksize, strides, padding, reduce)
        assert_same(evaluate(out, {px: x}), expected, rtol=1e-12)


def test_avg_pool_same_divides_by_the_number_of_valid_elements():
    out = df.nn.avg_pool(df.ones([1, 3, 3, 1]), 2, 2, "SAME")
    assert_same(evaluate(out), np.ones((1, 2, 2, 1), np.float32))


def test_max_pool_of_integers_ignores_same_padding():
    x = -np.arange(9, dtype=np.int32).reshape(1, 3, 3, 1)
    out = df.nn.max_pool(x, 2, 2, "SAME")
    assert_same(evaluate(out), np.array([0, -2, -6, -8], np.int32).reshape(1, 2, 2, 1))


def test_pooling_over_channels_raises_value_error():
    with pytest.raises(ValueError, match="channel"):
        df.nn.max_pool(df.zeros([1, 4, 4, 2]), [1, 2, 2, 2], 1, "SAME")


def test_pooling_of_a_3d_tensor_raises_value_error():
    with pytest.raises(ValueError, match="4-D"):
        df.nn.avg_pool(df.zeros([4, 4, 2]), 2, 1, "SAME")


# -- normalization ---------------------------------------------------------------------------------
def test_batch_normalization_matches_the_formula():
    x = random(4, 3)
    mean, var = random(3), np.abs(random(3))
    offset, scale = random(3), random(3)
    out = df.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
    expected = scale * (x - mean) / np.sqrt(var + np.float32(1e-3)) + offset
    assert_same(evaluate(out), expected, rtol=1e-5, atol=1e-6)


def test_batch_normalization_without_offset_and_scale():
    x = random(4, 3)
    out = df.nn.batch_normalization(x, 1.0, 4.0, None, None, 0.0)
    assert_same(evaluate(out), (x - 1) / np.float32(2), rtol=1e-6)


@pytest.mark.parametrize("keep_dims", [False, True])
def test_moments_match_numpy_mean_and_variance(keep_dims):
    x = random(4, 3, 2)
    px = placeholder_for(x, [False, True, True])
    mean, variance = df.nn.moments(px, [0, 2], keep_dims=keep_dims)
    assert_same(evaluate(mean, {px: x}), x.mean((0, 2), keepdims=keep_dims), rtol=1e-5)
    assert_same(evaluate(variance, {px: x}), x.var((0, 2), keepdims=keep_dims), rtol=1e-4)


def test_moments_of_float16_are_computed_in_float32_and_returned_as_float16():
    x = (random(8) * 100).astype(np.float16)
    mean, variance = df.nn.moments(x, [0])
    assert mean.dtype is df.float16 and variance.dtype is df.float16
    assert_same(evaluate(variance), x.astype(np.float32).var().astype(np.float16), rtol=1e-3)


# -- dropout ---------------------------------------------------------------------------------------
def test_dropout_zeroes_about_rate_of_the_elements_and_scales_the_rest():
    x = df.ones([100, 100])
    value = evaluate(df.nn.dropout(x, rate=0.25))
    kept = value != 0
    assert 0.70 < kept.mean() < 0.80
    assert_same(value[kept], np.full(kept.sum(), 1 / 0.75, np.float32))


def test_dropout_with_keep_prob_fed_at_run_time():
    keep_prob = df.placeholder(df.float32, [])
    out = df.nn.dropout(df.ones([1000]), keep_prob)
    value = evaluate(out, {keep_prob: 0.5})
    assert set(np.unique(value)) <= {0.0, 2.0} and 0.4 < (value != 0).mean() < 0.6
    assert_same(evaluate(out, {keep_prob: 1.0}), np.ones(1000, np.float32))


def test_dropout_draws_a_new_mask_each_run_but_a_seed_repeats_the_sequence():
    out = df.nn.dropout(df.ones([64]), rate=0.5, seed=7)
    with df.Session() as sess:
        first, second = sess.run(out), sess.run(out)
    with df.Session() as sess:
        again = sess.run(out)
    assert not np.array_equal(first, second)
    assert_same(again, first)


def test_dropout_with_noise_shape_shares_the_mask_along_unit_dimensions():
    value = evaluate(df.nn.dropout(df.ones([5, 50]), rate=0.5, noise_shape=[1, 50]))
    assert (value == value[:1]).all()


def test_dropout_op_is_stateful():
    assert df.nn.dropout(df.ones([2]), rate=0.5).op.op_def.stateful


def test_dropout_rate_outside_zero_to_one_raises_value_error():
    with pytest.raises(ValueError, match="rate"):
        df.nn.dropout(df.ones([2]), rate=1.0)
    with pytest.raises(ValueError, match="keep_prob"):
        df.nn.dropout(df.ones([2]), keep_prob=0.0)
    with pytest.raises(ValueError, match="exactly one"):
        df.nn.dropout(df.ones([2]))


def test_dropout_rate_outside_zero_to_one_at_run_time_fails_the_run():
    rate = df.placeholder(df.float32, [])
    with pytest.raises(df.errors.InvalidArgumentError, match="rate"):
        run(df.nn.dropout(df.ones([2]), rate=rate), {rate: 1.5})

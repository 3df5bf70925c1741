"""Convolution, pooling and normalization (``df.nn``) against TensorFlow 1.x: values and
gradients on a grid of shapes, strides, dilations and paddings; NCHW against NHWC; TF's op
names; and errors that name the op and the line that built it."""

import os

import numpy as np
import pytest
from conv_cases import CASES, FLOAT32_KINDS, pattern
from ops_testing import assert_same, evaluate, run

import dataflow as df
from dataflow.framework.errors import InvalidArgumentError

HERE = os.path.basename(__file__)

# Printed by tests/ops/make_conv_references.py under TensorFlow 2.21 (tf.compat.v1 graph mode,
# control flow v1): output shape, then sum(y), sum(y * pattern(y.shape, 0.7)) and, per input,
# sum(d loss/d input * pattern(input.shape, 0.3)) for loss = sum(y * pattern(y.shape, 0.7)).
# None: TensorFlow has no CPU kernel for that gradient (dilated and strided) or no gradient
# (fused batch norm's mean and variance in inference).
TF_FIGURES = {
    "conv_3x3_same": (
        [2, 7, 8, 4],
        [-1.5040283594057675, 13.530904026615202, 13.66691926971917, 2.5893506768004766],
    ),
    "conv_3x3_valid": (
        [2, 5, 6, 4],
        [-0.288922913502963, -0.24526712331506673, 12.07532926450125, -16.502052470051073],
    ),
    "conv_3x3_same_stride2": (
        [2, 4, 4, 4],
        [-2.068395019194175, -3.638688377246747, -2.4680649935249623, -7.87203511573964],
    ),
    "conv_3x2_valid_stride21": (
        [2, 3, 7, 4],
        [-15.344340478443282, 29.308213620891635, 35.91145668638393, 12.587731979525698],
    ),
    "conv_2x2_same_stride3": (
        [1, 3, 3, 3],
        [-1.554200734594553, 2.4400225053927973, 1.3916378447328275, -1.7261165047831013],
    ),
    "conv_5x5_same_on_4x4": (
        [1, 4, 4, 2],
        [-0.9146873659045891, -4.759668324590298, -3.8479245308805785, -4.349847672902459],
    ),
    "conv_1x1": (
        [2, 5, 5, 4],
        [2.0722788184807293, -0.7684748865682445, -0.6826129114333233, -0.5317013192189608],
    ),
    "conv_1x1_stride2": (
        [2, 3, 3, 4],
        [-0.2857006170309231, 6.73872709067297, 6.980172528596586, 7.676300819558549],
    ),
    "conv_dilated_same": (
        [2, 7, 8, 2],
        [-0.33340557913971214, -6.6203827707751834, -0.7568156216403743, 17.407233223232083],
    ),
    "conv_dilated_valid": (
        [2, 5, 5, 2],
        [2.7194457389440787, -6.987862038848826, 8.48611348997413, 29.08064052011413],
    ),
    "conv_dilated_strided": ([1, 5, 5, 2], [5.178377592921113, 0.155343530321841, None, None]),
    "conv_explicit": (
        [2, 8, 8, 4],
        [-6.063776035249445, -0.7138371901535274, 1.9085943451161755, -1.2243116103161922],
    ),
    "conv_explicit_strided": (
        [2, 4, 3, 4],
        [0.44184797141500276, 8.024386641053525, 8.690972348592163, 7.234920370327552],
    ),
    "transpose_stride2_same": (
        [2, 8, 8, 2],
        [2.0882842192271314, 7.548282456412278, 8.466639412086, 28.48804559442653],
    ),
    "transpose_stride2_valid": (
        [2, 7, 9, 2],
        [2.2560624346915548, 5.43951765308654, 4.885554408044175, 11.069122969894538],
    ),
    "depthwise_same": (
        [2, 6, 7, 6],
        [-3.1651291419500023, 0.9107927722387821, 0.9343613882618469, 0.4069343428563979],
    ),
    "depthwise_valid_stride2": (
        [2, 3, 3, 6],
        [3.1471375699038084, -6.026788668511535, -5.912304936136648, -4.472793970252174],
    ),
    "depthwise_rate2": (
        [1, 8, 8, 2],
        [10.090393110699457, 25.89152557652778, 26.219129454696137, 24.516812832928025],
    ),
    "separable": (
        [2, 4, 4, 4],
        [
            0.9803245348257175,
            -8.893876175587385,
            -10.006993638175537,
            1.3148283506010703,
            -42.78533802027266,
        ],
    ),
    "atrous_rate2": (
        [1, 8, 9, 3],
        [-95.85537252003189, -8.336141618786545, -13.291806750832086, -25.61827910099891],
    ),
    "conv1d_same": (
        [2, 5, 4],
        [0.23959470528641313, 2.681759453255769, 2.864628918590408, 5.4036863239951725],
    ),
    "max_pool_2x2_stride2_valid": ([2, 3, 4, 3], [131.0, 5.925457218615552, 2.5141582785238326]),
    "max_pool_2x2_stride2_same_odd": ([2, 4, 3, 3], [58.0, 6.982855145388276, 2.4327538575632577]),
    "max_pool_3x3_stride2_same": ([2, 4, 4, 2], [74.0, 4.612025854637584, 1.15798692798276]),
    "max_pool_3x3_stride1_same": ([1, 5, 6, 2], [116.0, 10.271969930204213, 4.781654029349152]),
    "max_pool_3x2_stride12_valid": ([1, 4, 3, 2], [44.0, 10.14311189820037, 4.576619841815172]),
    "avg_pool_2x2_stride2_valid": (
        [2, 3, 4, 3],
        [0.03625507260210925, 0.06741262625597033, 0.2917467716686656],
    ),
    "avg_pool_2x2_stride2_same_odd": (
        [2, 4, 3, 3],
        [1.1466623731273335, 1.446122874747971, 1.3243614505566248],
    ),
    "avg_pool_3x3_stride2_same": (
        [2, 4, 4, 2],
        [1.7734569745827282, 1.1469885618930409, 0.7552663957818612],
    ),
    "avg_pool_3x3_stride1_same": (
        [1, 5, 6, 2],
        [5.056675604007504, 3.6580555916654394, 4.452294443480871],
    ),
    "avg_pool_3x2_stride12_valid": (
        [1, 4, 3, 2],
        [0.13445821061366947, 0.07720059487111547, 0.1323860878701506],
    ),
    "lrn_default": ([2, 3, 4, 7], [0.2472210694104433, 33.46816458602861, 12.115250843508429]),
    "lrn_radius2": ([2, 3, 3, 6], [1.939726484939456, 21.257333893822604, 15.273516138505597]),
    "fused_batch_norm_training": (
        [4, 3, 5, 3],
        [
            106.9490607380867,
            100.98849886586576,
            15.514593194049546,
            61.68541519289173,
            1.8031839466785746,
        ],
    ),
    "fused_batch_norm_inference": (
        [4, 3, 5, 3],
        [
            155.18261593580246,
            61.50671723972714,
            65.49781236438261,
            36.77885796769225,
            1.8031839466785746,
            None,
            None,
        ],
    ),
}


def build(kind, inputs, kwargs):
    """The op of ``kind`` in ``df.nn`` (the same calls as the reference script's)."""
    nn = df.nn
    if kind == "fused_batch_norm":
        return nn.fused_batch_norm(*inputs, **kwargs)[0]
    if kind == "lrn":
        return nn.local_response_normalization(*inputs, **kwargs)
    return getattr(nn, kind)(*inputs, **kwargs)


def case_inputs(kind, shapes):
    values = [pattern(shape, 0.1 + i) for i, shape in enumerate(shapes)]
    if kind == "max_pool":  # ties: values on a coarse grid
        values = [np.round(v * 2) for v in values]
    if kind == "fused_batch_norm" and len(values) == 5:
        values[4] = np.abs(values[4]) + 0.5  # a variance
    if kind in FLOAT32_KINDS:
        values = [v.astype(np.float32) for v in values]
    return values


@pytest.mark.parametrize("name, kind, shapes, kwargs", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_tensorflow(name, kind, shapes, kwargs):
    values = case_inputs(kind, shapes)
    inputs = [df.constant(v) for v in values]
    y = build(kind, inputs, kwargs)
    weights = pattern(y.shape.as_list(), 0.7).astype(values[0].dtype)
    grads = df.gradients(df.reduce_sum(y * weights), inputs)
    present = [g for g in grads if g is not None]
    y_value, grad_values = evaluate(y), run(present)
    shape, expected = TF_FIGURES[name]
    assert list(y_value.shape) == shape
    y64 = y_value.astype(np.float64)
    figures = [np.sum(y64), np.sum(y64 * weights)]
    grad_values = iter(grad_values)
    for grad, input_shape, want in zip(grads, shapes, expected[2:]):
        if want is None:
            continue  # TensorFlow has no figure to compare with
        assert grad is not None, f"{name}: no gradient where TensorFlow has one"
        figures.append(np.sum(next(grad_values).astype(np.float64) * pattern(input_shape, 0.3)))
    expected = [e for e in expected if e is not None]
    rtol = 2e-5 if kind in FLOAT32_KINDS else 1e-9
    np.testing.assert_allclose(figures, expected, rtol=rtol, atol=rtol)


# -- NCHW ------------------------------------------------------------------------------------------
def _nchw(x):
    return np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))


NCHW_CASES = [
    ("conv2d", lambda x, f, fmt: df.nn.conv2d(x, f, [2, 1], "SAME", data_format=fmt)),
    (
        "conv2d strides and dilations in NCHW order",
        lambda x, f, fmt: df.nn.conv2d(
            x,
            f,
            [1, 1, 2, 1] if fmt == "NCHW" else [1, 2, 1, 1],
            "VALID",
            data_format=fmt,
            dilations=[1, 1, 1, 2] if fmt == "NCHW" else [1, 1, 2, 1],
        ),
    ),
    (
        "conv2d explicit padding",
        lambda x, f, fmt: df.nn.conv2d(
            x,
            f,
            1,
            [[0, 0], [0, 0], [1, 0], [2, 1]] if fmt == "NCHW" else [[0, 0], [1, 0], [2, 1], [0, 0]],
            data_format=fmt,
        ),
    ),
    ("depthwise", lambda x, f, fmt: df.nn.depthwise_conv2d(x, f, 1, "SAME", data_format=fmt)),
    ("max_pool", lambda x, f, fmt: df.nn.max_pool(x * df.reduce_mean(f), 3, 2, "SAME", fmt)),
    ("avg_pool", lambda x, f, fmt: df.nn.avg_pool(x * df.reduce_mean(f), 2, 1, "VALID", fmt)),
    (
        "fused_batch_norm",
        lambda x, f, fmt: df.nn.fused_batch_norm(
            x * df.reduce_mean(f),
            df.ones([3], df.float64),
            df.zeros([3], df.float64),
            data_format=fmt,
        )[0],
    ),
]


@pytest.mark.parametrize("make", [c[1] for c in NCHW_CASES], ids=[c[0] for c in NCHW_CASES])
def test_nchw_gives_the_nhwc_values_and_gradients_transposed_bit_for_bit(make):
    x_value = pattern([2, 5, 6, 3], 0.2)
    f_value = pattern([3, 2, 3, 2], 0.4)
    results = {}
    for fmt, x_fed in (("NHWC", x_value), ("NCHW", _nchw(x_value))):
        x, f = df.constant(x_fed), df.constant(f_value)
        y = make(x, f, fmt)
        grads = df.gradients(df.reduce_sum(y * y), [x, f])
        results[fmt] = run([y, grads[0], grads[1]])
    nhwc, nchw = results["NHWC"], results["NCHW"]
    np.testing.assert_array_equal(nchw[0], _nchw(nhwc[0]))
    np.testing.assert_array_equal(nchw[1], _nchw(nhwc[1]))
    # The pooling and normalization cases reach f through a sum over the image, whose order of
    # additions follows the layout: equal to rounding there.
    np.testing.assert_allclose(nchw[2], nhwc[2], rtol=1e-13)


def test_conv2d_transpose_in_nchw_transposes_the_nhwc_result():
    value, f = pattern([2, 4, 4, 3], 0.1), pattern([3, 3, 2, 3], 0.5)
    nhwc = df.nn.conv2d_transpose(value, f, [2, 8, 8, 2], [1, 2, 2, 1], "SAME")
    nchw = df.nn.conv2d_transpose(_nchw(value), f, [2, 2, 8, 8], [1, 1, 2, 2], "SAME", "NCHW")
    a, b = run([nhwc, nchw])
    np.testing.assert_array_equal(b, _nchw(a))


def test_conv1d_ncw_matches_nwc():
    value, f = pattern([2, 9, 3], 0.1), pattern([3, 3, 4], 0.5)
    nwc = df.nn.conv1d(value, f, 2, "SAME")
    ncw = df.nn.conv1d(value.transpose(0, 2, 1), f, 2, "SAME", data_format="NCW")
    a, b = run([nwc, ncw])
    np.testing.assert_array_equal(b, a.transpose(0, 2, 1))


# -- max pooling's gradient with ties --------------------------------------------------------------
def test_max_pool_gradient_goes_to_the_first_maximum_of_each_window_as_tensorflow():
    x = df.constant(np.float32([[3, 3, 1], [3, 2, 3], [0, 3, 3]]).reshape(1, 3, 3, 1))
    # Overlapping 2x2 windows, stride 1: every window has ties; TensorFlow's CPU kernel sends
    # each window's gradient to its first maximum in row-major order (these values are TF
    # 2.21's, tf.compat.v1 graph mode, for the same program).
    (grad,) = df.gradients(df.reduce_sum(df.nn.max_pool(x, 2, 1, "VALID")), x)
    expected = np.float32([[1, 1, 0], [1, 0, 1], [0, 0, 0]]).reshape(1, 3, 3, 1)
    assert_same(run(grad), expected)


def test_max_pool_gradient_of_non_overlapping_windows_with_ties_and_same_padding():
    x = df.constant(np.full((1, 3, 3, 1), 5.0))
    (grad,) = df.gradients(df.reduce_sum(df.nn.max_pool(x, 2, 2, "SAME")), x)
    expected = np.float64([[1, 0, 1], [0, 0, 0], [1, 0, 1]]).reshape(1, 3, 3, 1)  # TF's too
    assert_same(run(grad), expected)


# -- what TensorFlow names the ops -----------------------------------------------------------------
def test_ops_are_named_as_in_tensorflow():
    x = df.zeros([1, 8, 8, 3])
    assert df.nn.conv2d(x, df.zeros([3, 3, 3, 4]), 1, "SAME").name == "Conv2D:0"
    transpose = df.nn.conv2d_transpose(
        df.zeros([1, 4, 4, 4]), df.zeros([3, 3, 3, 4]), [1, 8, 8, 3], 2
    )
    assert (transpose.name, transpose.op.type) == ("conv2d_transpose:0", "Conv2DBackpropInput")
    depthwise = df.nn.depthwise_conv2d(x, df.zeros([3, 3, 3, 2]), [1, 1, 1, 1], "SAME")
    assert (depthwise.name, depthwise.op.type) == ("depthwise:0", "DepthwiseConv2dNative")
    separable = df.nn.separable_conv2d(
        x, df.zeros([3, 3, 3, 2]), df.zeros([1, 1, 6, 5]), [1, 1, 1, 1], "VALID"
    )
    assert separable.name == "separable_conv2d:0"
    assert separable.op.inputs[0].name == "separable_conv2d/depthwise:0"
    assert df.nn.conv1d(df.zeros([2, 10, 3]), df.zeros([3, 3, 4]), 1, "SAME").name == (
        "conv1d/Squeeze:0"
    )
    assert df.nn.max_pool(x, 2, 2, "SAME").name == "MaxPool:0"
    assert df.nn.lrn(x).name == "LRN:0"
    outputs = df.nn.fused_batch_norm(x, df.ones([3]), df.zeros([3]))
    assert [t.name for t in outputs] == [f"FusedBatchNormV3:{i}" for i in range(3)]


def test_static_shapes_follow_the_data_format():
    x = df.placeholder(df.float32, [None, 3, 9, 8])
    y = df.nn.conv2d(x, df.zeros([3, 3, 3, 5]), [1, 1, 2, 2], "SAME", data_format="NCHW")
    assert y.shape.as_list() == [None, 5, 5, 4]
    pooled = df.nn.max_pool(y, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    assert pooled.shape.as_list() == [None, 5, 2, 2]
    depthwise = df.nn.depthwise_conv2d(x, df.zeros([2, 2, 3, 2]), 1, "VALID", data_format="NCHW")
    assert depthwise.shape.as_list() == [None, 6, 8, 7]


# -- fused batch norm's statistics -----------------------------------------------------------------
def test_fused_batch_norm_returns_the_unbiased_batch_variance_and_blends_running_values():
    x = np.sin(np.arange(180) * 0.37).reshape(4, 3, 5, 3).astype(np.float32)
    _, mean, variance = df.nn.fused_batch_norm(x, df.ones([3]), df.zeros([3]), epsilon=0.0)
    _, mean2, variance2 = df.nn.fused_batch_norm(
        x,
        df.ones([3]),
        df.zeros([3]),
        mean=df.ones([3]),
        variance=df.ones([3]) * 2,
        exponential_avg_factor=0.5,
    )
    got = evaluate([mean, variance, mean2, variance2])
    # tf.nn.fused_batch_norm on the same x, TF 2.21 tf.compat.v1 graph mode.
    expected = [
        [0.02921474, 0.02984231, 0.02643087],
        [0.50269467, 0.50220275, 0.5047506],
        [0.51460737, 0.5149211, 0.5132154],
        [1.2513473, 1.2511014, 1.2523754],
    ]
    for g, e in zip(got, expected):
        assert_same(g, np.float32(e), rtol=1e-5)


def test_fused_batch_norm_in_inference_passes_mean_and_variance_through():
    x = pattern([2, 2, 2, 2], 0.0).astype(np.float32)
    mean, variance = np.float32([0.5, -1]), np.float32([2, 3])
    y, m, v = df.nn.fused_batch_norm(
        x, np.float32([1, 2]), np.float32([0, 1]), mean, variance, 0.01, is_training=False
    )
    y_value, m_value, v_value = run([y, m, v])
    expected = (x - mean) / np.sqrt(variance + 0.01) * np.float32([1, 2]) + np.float32([0, 1])
    assert_same(y_value, expected.astype(np.float32), rtol=1e-6)
    assert_same(m_value, mean)
    assert_same(v_value, variance)


# -- errors ----------------------------------------------------------------------------------------
def _raises_here(error, match, fn):
    """``fn()`` raises ``error`` whose message matches and names this file."""
    with pytest.raises(error, match=match) as info:
        fn()
    assert HERE in str(info.value), str(info.value)


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: df.nn.conv2d(df.zeros([1, 4, 4, 2]), df.zeros([3, 3, 3, 1]), 1, "SAME"),
            "channels",
        ),
        (
            lambda: df.nn.conv2d(df.zeros([1, 4, 4, 2]), df.zeros([3, 3, 2, 1]), 1, "same"),
            "padding",
        ),
        (
            lambda: df.nn.conv2d(
                df.zeros([1, 4, 4, 2]), df.zeros([3, 3, 2, 1]), 1, [[1, 0], [1, 1], [1, 1], [0, 0]]
            ),
            "batch and channel",
        ),
        (
            lambda: df.nn.conv2d(
                df.zeros([1, 2, 4, 4]),
                df.zeros([1, 1, 2, 1]),
                [1, 2, 1, 1],
                "SAME",
                data_format="NCHW",
            ),
            "batch and channel",
        ),
        (
            lambda: df.nn.conv2d(
                df.zeros([1, 4, 4, 2]), df.zeros([3, 3, 2, 1]), 1, "SAME", data_format="NCWH"
            ),
            "data_format",
        ),
        (
            lambda: df.nn.conv2d_transpose(
                df.zeros([1, 4, 4, 3]), df.zeros([3, 3, 2, 4]), [1, 8, 8, 2], 2
            ),
            "input channels",
        ),
        (
            lambda: df.nn.conv2d_transpose(
                df.zeros([1, 4, 4, 4]), df.zeros([3, 3, 2, 4]), [1, 8, 8, 5], 2
            ),
            "output channels",
        ),
        (
            lambda: df.nn.conv2d_transpose(
                df.zeros([1, 4, 4, 4]), df.zeros([3, 3, 2, 4]), [1, 9, 3, 2], 2
            ),
            "does not match",
        ),
        (
            lambda: df.nn.depthwise_conv2d(
                df.zeros([1, 8, 8, 3]), df.zeros([3, 3, 3, 1]), [1, 2, 2, 1], "SAME", rate=2
            ),
            "dilation",
        ),
        (lambda: df.nn.max_pool(df.zeros([1, 4, 4, 1]), 5, 1, "VALID"), "larger"),
        (lambda: df.nn.lrn(df.zeros([4, 4, 1])), "4-D"),
        (
            lambda: df.nn.fused_batch_norm(
                df.zeros([1, 2, 2, 3]), df.ones([3]), df.zeros([3]), is_training=False
            ),
            "mean",
        ),
        (
            lambda: df.nn.fused_batch_norm(df.zeros([1, 2, 2, 3]), df.ones([2]), df.zeros([2])),
            "channels",
        ),
    ],
)
def test_bad_arguments_raise_errors_naming_the_op_and_the_line(call, match):
    _raises_here((ValueError, TypeError), match, call)


def test_a_fed_image_that_does_not_fit_the_filter_fails_the_run_naming_the_op():
    x = df.placeholder(df.float32, [None, None, None, None])
    y = df.nn.conv2d(x, df.zeros([3, 3, 2, 1]), 1, "SAME")
    with pytest.raises(InvalidArgumentError, match="channels") as info:
        run(y, {x: np.zeros((1, 4, 4, 3), np.float32)})
    assert "Conv2D" in str(info.value) and HERE in str(info.value)


def test_conv2d_transpose_with_a_fed_value_of_the_wrong_size_fails_the_run():
    value = df.placeholder(df.float32, [None, None, None, 4])
    y = df.nn.conv2d_transpose(value, df.zeros([3, 3, 2, 4]), [1, 8, 8, 2], 2)
    with pytest.raises(InvalidArgumentError, match="does not match") as info:
        run(y, {value: np.zeros((1, 5, 5, 4), np.float32)})
    assert "conv2d_transpose" in str(info.value) and HERE in str(info.value)

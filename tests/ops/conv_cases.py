"""The grid of convolution, pooling and normalization cases whose TensorFlow 1.x figures
``test_conv_ops.py`` pins (printed by ``make_conv_references.py``): each is ``(name, function
of tf.nn / df.nn, input shapes, keyword arguments)``, with inputs made by `pattern`."""

import numpy as np

# The kernels TensorFlow has in float32 only on CPU; the other cases run in float64.
FLOAT32_KINDS = ("lrn", "fused_batch_norm")

EXPLICIT = [[0, 0], [1, 2], [2, 0], [0, 0]]


def pattern(shape, phase):
    """Deterministic values in [-1, 1] of the given shape."""
    return np.sin(np.arange(int(np.prod(shape))) * 0.37 + phase).reshape(shape)


def _conv(name, x, f, strides, padding, dilations=(1, 1, 1, 1)):
    kwargs = {"strides": list(strides), "padding": padding, "dilations": list(dilations)}
    return (name, "conv2d", [x, f], kwargs)


CASES = [
    _conv("conv_3x3_same", [2, 7, 8, 3], [3, 3, 3, 4], [1, 1, 1, 1], "SAME"),
    _conv("conv_3x3_valid", [2, 7, 8, 3], [3, 3, 3, 4], [1, 1, 1, 1], "VALID"),
    _conv("conv_3x3_same_stride2", [2, 7, 8, 3], [3, 3, 3, 4], [1, 2, 2, 1], "SAME"),
    _conv("conv_3x2_valid_stride21", [2, 7, 8, 3], [3, 2, 3, 4], [1, 2, 1, 1], "VALID"),
    _conv("conv_2x2_same_stride3", [1, 7, 8, 2], [2, 2, 2, 3], [1, 3, 3, 1], "SAME"),
    _conv("conv_5x5_same_on_4x4", [1, 4, 4, 2], [5, 5, 2, 2], [1, 1, 1, 1], "SAME"),
    _conv("conv_1x1", [2, 5, 5, 3], [1, 1, 3, 4], [1, 1, 1, 1], "VALID"),
    _conv("conv_1x1_stride2", [2, 5, 5, 3], [1, 1, 3, 4], [1, 2, 2, 1], "SAME"),
    _conv("conv_dilated_same", [2, 7, 8, 3], [3, 3, 3, 2], [1, 1, 1, 1], "SAME", [1, 2, 2, 1]),
    _conv("conv_dilated_valid", [2, 9, 8, 3], [3, 2, 3, 2], [1, 1, 1, 1], "VALID", [1, 2, 3, 1]),
    _conv("conv_dilated_strided", [1, 9, 9, 2], [3, 3, 2, 2], [1, 2, 2, 1], "SAME", [1, 2, 2, 1]),
    _conv("conv_explicit", [2, 7, 8, 3], [3, 3, 3, 4], [1, 1, 1, 1], EXPLICIT),
    _conv("conv_explicit_strided", [2, 7, 8, 3], [3, 3, 3, 4], [1, 2, 3, 1], EXPLICIT),
    (
        "transpose_stride2_same",
        "conv2d_transpose",
        [[2, 4, 4, 3], [3, 3, 2, 3]],
        {"output_shape": [2, 8, 8, 2], "strides": [1, 2, 2, 1], "padding": "SAME"},
    ),
    (
        "transpose_stride2_valid",
        "conv2d_transpose",
        [[2, 3, 4, 3], [3, 3, 2, 3]],
        {"output_shape": [2, 7, 9, 2], "strides": [1, 2, 2, 1], "padding": "VALID"},
    ),
    (
        "depthwise_same",
        "depthwise_conv2d",
        [[2, 6, 7, 3], [3, 3, 3, 2]],
        {"strides": [1, 1, 1, 1], "padding": "SAME"},
    ),
    (
        "depthwise_valid_stride2",
        "depthwise_conv2d",
        [[2, 7, 7, 2], [3, 2, 2, 3]],
        {"strides": [1, 2, 2, 1], "padding": "VALID"},
    ),
    (
        "depthwise_rate2",
        "depthwise_conv2d",
        [[1, 8, 8, 2], [3, 3, 2, 1]],
        {"strides": [1, 1, 1, 1], "padding": "SAME", "rate": [2, 2]},
    ),
    (
        "separable",
        "separable_conv2d",
        [[2, 6, 6, 3], [3, 3, 3, 2], [1, 1, 6, 4]],
        {"strides": [1, 1, 1, 1], "padding": "VALID"},
    ),
    ("atrous_rate2", "atrous_conv2d", [[1, 8, 9, 2], [3, 3, 2, 3]], {"rate": 2, "padding": "SAME"}),
    ("conv1d_same", "conv1d", [[2, 9, 3], [3, 3, 4]], {"stride": 2, "padding": "SAME"}),
]

for _kind in ("max_pool", "avg_pool"):
    for _name, _shape, _ksize, _strides, _padding in (
        ("2x2_stride2_valid", [2, 6, 8, 3], 2, 2, "VALID"),
        ("2x2_stride2_same_odd", [2, 7, 5, 3], 2, 2, "SAME"),
        ("3x3_stride2_same", [2, 7, 8, 2], 3, 2, "SAME"),
        ("3x3_stride1_same", [1, 5, 6, 2], 3, 1, "SAME"),
        ("3x2_stride12_valid", [1, 6, 6, 2], [3, 2], [1, 2], "VALID"),
    ):
        _k = [1, *_ksize, 1] if isinstance(_ksize, list) else [1, _ksize, _ksize, 1]
        _s = [1, *_strides, 1] if isinstance(_strides, list) else [1, _strides, _strides, 1]
        CASES.append(
            (f"{_kind}_{_name}", _kind, [_shape], {"ksize": _k, "strides": _s, "padding": _padding})
        )

CASES += [
    ("lrn_default", "lrn", [[2, 3, 4, 7]], {}),
    (
        "lrn_radius2",
        "lrn",
        [[2, 3, 3, 6]],
        {"depth_radius": 2, "bias": 2.0, "alpha": 0.3, "beta": 0.75},
    ),
    ("fused_batch_norm_training", "fused_batch_norm", [[4, 3, 5, 3], [3], [3]], {"epsilon": 0.01}),
    (
        "fused_batch_norm_inference",
        "fused_batch_norm",
        [[4, 3, 5, 3], [3], [3], [3], [3]],
        {"epsilon": 0.01, "is_training": False},
    ),
]

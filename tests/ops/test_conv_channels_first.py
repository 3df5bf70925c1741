"""The generic ``Conv`` op on channels-first data (the layout ONNX models arrive in) gives the
channels-last kernel's values: every group layout (one group, several, depthwise, depthwise
with a channel multiplier), window, stride (equal and unequal per dim), dilation and padding,
in one, two and three spatial dims."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dataflow as df
from dataflow.ops.conv_nd_ops import conv

GROUP_LAYOUTS = {  # name: (groups, input channels per group, output channels per group)
    "one group": (1, 3, 4),
    "two groups": (2, 2, 3),
    "depthwise": (4, 1, 1),
    "depthwise, multiplier 2": (3, 1, 2),
}


def _run_both(x, f, strides, dilations, padding, explicit, groups):
    """The Conv of channels-first ``x`` and of its channels-last copy, the second moved back."""
    spatial = x.ndim - 2
    graph = df.Graph()
    with graph.as_default():
        first = conv(
            x,
            f,
            strides=[1, 1, *strides],
            padding=padding,
            explicit_paddings=[0, 0, 0, 0, *explicit] if padding == "EXPLICIT" else [],
            data_format="CHANNELS_FIRST",
            dilations=[1, 1, *dilations],
            groups=groups,
        )
        last = conv(
            np.ascontiguousarray(np.moveaxis(x, 1, -1)),
            f,
            strides=[1, *strides, 1],
            padding=padding,
            explicit_paddings=[0, 0, *explicit, 0, 0] if padding == "EXPLICIT" else [],
            data_format="CHANNELS_LAST",
            dilations=[1, *dilations, 1],
            groups=groups,
        )
    with df.Session(graph=graph) as sess:
        got, expected = sess.run([first, last])
    return got, np.moveaxis(expected, -1, 1), spatial


@pytest.mark.parametrize("layout", list(GROUP_LAYOUTS))
@pytest.mark.parametrize("spatial", [1, 2, 3])
def test_channels_first_conv_equals_channels_last(layout, spatial):
    groups, per_group_in, per_group_out = GROUP_LAYOUTS[layout]
    rng = np.random.default_rng(spatial)
    sizes = [9, 7, 6][:spatial]
    x = rng.standard_normal((2, groups * per_group_in, *sizes)).astype(np.float32)
    stride_choices = [(1,) * spatial, (2,) * spatial]
    if spatial > 1:
        stride_choices.append(tuple(range(1, spatial + 1)))  # unequal strides
    for kernel, strides, dilation, padding in itertools.product(
        (1, 3), stride_choices, (1, 2), ("VALID", "SAME", "EXPLICIT")
    ):
        f = rng.standard_normal((*[kernel] * spatial, per_group_in, groups * per_group_out))
        f = f.astype(np.float32)
        explicit = [1, 2] * spatial
        got, expected, _ = _run_both(
            x, f, strides, (dilation,) * spatial, padding, explicit, groups
        )
        case = f"kernel {kernel}, strides {strides}, dilation {dilation}, {padding}"
        assert got.shape == expected.shape, case
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=case)


def test_channels_first_conv_names_the_channel_mismatch():
    x = np.zeros((1, 6, 5, 5), np.float32)
    f = np.zeros((3, 3, 4, 6), np.float32)  # expects 4 channels per group, 2 groups: 8
    graph = df.Graph()
    with graph.as_default():
        y = df.placeholder(df.float32, [None, None, None, None])
        convolved = conv(y, f, [1, 1, 1, 1], "VALID", data_format="CHANNELS_FIRST", groups=2)
    with (
        df.Session(graph=graph) as sess,
        pytest.raises(
            df.errors.InvalidArgumentError, match="6 channels but the filter .* expects 4 in each"
        ),
    ):
        sess.run(convolved, {y: x})


@pytest.mark.parametrize("layout", list(GROUP_LAYOUTS))
def test_wide_images_read_as_long_runs_give_the_same_values(layout):
    # Wide rows (40 columns, a 3x3 window) take the product over the long runs, columns past
    # the rows' ends included and then cut; the narrow images above cut them first.
    groups, per_group_in, per_group_out = GROUP_LAYOUTS[layout]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, groups * per_group_in, 6, 40)).astype(np.float32)
    f = rng.standard_normal((3, 3, per_group_in, groups * per_group_out)).astype(np.float32)
    for strides, padding in itertools.product([(1, 1), (2, 2), (1, 2)], ["SAME", "EXPLICIT"]):
        got, expected, _ = _run_both(x, f, strides, (1, 1), padding, [1, 1, 0, 2], groups)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5, err_msg=str(strides))

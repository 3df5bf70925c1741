"""Colour adjustments with TensorFlow 2's bits: ``adjust_saturation``, ``adjust_hue`` and
``adjust_contrast`` compute as TensorFlow's CPU kernels do (float32 C++ arithmetic, pixel by
pixel), ``rgb_to_hsv``/``hsv_to_rgb`` as its Eigen kernels, ``adjust_brightness`` in float16
and float32 as they are, and integer images through float32 and back.

Expected values were printed by TensorFlow 2.21 for the same inputs (float32 results as their
bits).  The property tests check the vectorized kernels against plain per-pixel Python
translations of TensorFlow's C++ kernels written below with float32 scalars.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dataflow as df

F = np.float32


@pytest.fixture(autouse=True)
def eager():
    with df.eager_mode():
        yield


def bits(values) -> list:
    return [hex(v) for v in np.asarray(values, F).reshape(-1).view(np.uint32).tolist()]


LINEAR = np.linspace(0, 1, 12).reshape(2, 2, 3).astype(F)
U8 = np.array([[[10, 200, 30], [255, 0, 128]], [[7, 7, 7], [90, 91, 250]]], np.uint8)
# grey, red, green, blue, yellowish and cyanish pixels: ties between channels
TIES = np.array(
    [[[0.2, 0.2, 0.2], [0.9, 0.1, 0.1], [0.1, 0.9, 0.1], [0.1, 0.1, 0.9], [0.5, 0.5, 0.1],
      [0.3, 0.6, 0.6]]],
    F,
)  # fmt: skip


# -- TensorFlow's values ---------------------------------------------------------------------------
def test_adjust_saturation_has_tensorflows_bits():
    # tf: [[0.09090909, 0.13636364, ...]]: the hue's 2/6 and 4/6 are added in double
    assert df.image.adjust_saturation(LINEAR, 0.5).numpy()[0, 0].tolist() == [
        0.09090909361839294,
        0.13636364042758942,
        0.1818181872367859,
    ]
    assert bits(df.image.adjust_saturation(LINEAR, 0.5)) == [
        "0x3dba2e8c", "0x3e0ba2e9", "0x3e3a2e8c", "0x3eba2e8c", "0x3ed1745e", "0x3ee8ba2f",
        "0x3f22e8ba", "0x3f2e8ba2", "0x3f3a2e8c", "0x3f68ba2e", "0x3f745d17", "0x3f800000",
    ]  # fmt: skip
    assert bits(df.image.adjust_saturation(TIES, 3.0)) == [
        "0x3e4ccccd", "0x3e4ccccd", "0x3e4ccccd", "0x3f666666", "0x0", "0x0", "0x0",
        "0x3f666666", "0x0", "0x0", "0x0", "0x3f666666", "0x3f000000", "0x3f000000", "0x0",
        "0x0", "0x3f19999a", "0x3f19999a",
    ]  # fmt: skip


def test_adjust_hue_has_tensorflows_bits():
    assert bits(df.image.adjust_hue(LINEAR, 0.3)) == [
        "0x3e3a2e8c", "0x0", "0x3e0253c6", "0x3ee8ba2f", "0x3e8ba2e9", "0x3ecccccc",
        "0x3f3a2e8c", "0x3f0ba2e9", "0x3f2c37da", "0x3f800000", "0x3f51745d", "0x3f720950",
    ]  # fmt: skip
    assert bits(df.image.adjust_hue(LINEAR, -0.77)) == [
        "0x3e23d70c", "0x0", "0x3e3a2e8c", "0x3edd8e6f", "0x3e8ba2e9", "0x3ee8ba2f",
        "0x3f3498ac", "0x3f0ba2e9", "0x3f3a2e8c", "0x3f7a6a20", "0x3f51745d", "0x3f800000",
    ]  # fmt: skip
    assert bits(df.image.adjust_hue(TIES, 0.5)) == [
        "0x3e4ccccd", "0x3e4ccccd", "0x3e4ccccd", "0x3dcccccd", "0x3f666666", "0x3f666666",
        "0x3f666666", "0x3dcccccd", "0x3f666666", "0x3f666666", "0x3f666666", "0x3dcccccd",
        "0x3dcccccd", "0x3dcccccd", "0x3f000000", "0x3f19999a", "0x3e99999a", "0x3e99999a",
    ]  # fmt: skip
    with pytest.raises(ValueError, match=r"delta must be in the interval \[-1, 1\]"):
        df.image.adjust_hue(LINEAR, 1.5)


def test_adjust_contrast_has_tensorflows_bits():
    assert bits(df.image.adjust_contrast(LINEAR, 1.7)) == [
        "0xbe929e42", "0xbe48253c", "0xbdd61bf0", "0x3e3586fb", "0x3e894f21", "0x3eb7dac4",
        "0x3f24129e", "0x3f3b5870", "0x3f529e42", "0x3f8d61bf", "0x3f9904a8", "0x3fa4a790",
    ]  # fmt: skip
    # 15 pixels: the halves folded are 7 and 8 long, then 4, 2, 1
    odd = np.arange(5 * 3 * 3, dtype=F).reshape(5, 3, 3) / F(7)
    assert bits(df.image.adjust_contrast(odd, 0.3))[:6] == [
        "0x40066667", "0x400f8af9", "0x4018af8b", "0x400ea0eb", "0x4017c57d", "0x4020ea0f",
    ]  # fmt: skip
    assert df.image.adjust_contrast(np.zeros((0, 2, 3), F), 2.0).shape.as_list() == [0, 2, 3]
    with pytest.raises(ValueError, match="images must be at least 3-D"):
        df.image.adjust_contrast(np.zeros((2, 3), F), 2.0)


def test_integer_images_go_through_float32_and_back():
    assert df.image.adjust_saturation(U8, 1.8).numpy().tolist() == [
        [[0, 200, 21], [255, 0, 128]],
        [[7, 7, 7], [0, 1, 250]],
    ]
    assert df.image.adjust_hue(U8, 0.45).numpy().tolist() == [
        [[163, 10, 200], [0, 255, 50]],
        [[7, 7, 7], [250, 201, 90]],
    ]
    assert df.image.adjust_contrast(U8, 2.5).numpy().tolist() == [
        [[0, 255, 0], [255, 0, 164]],
        [[0, 0, 0], [89, 115, 255]],
    ]
    assert df.image.adjust_brightness(U8, 0.2).numpy().tolist() == [
        [[61, 251, 81], [255, 51, 179]],
        [[58, 58, 58], [141, 142, 255]],
    ]


def test_brightness_of_float16_images_adds_in_float16():
    brighter = df.image.adjust_brightness(df.constant(LINEAR.astype(np.float16)), 0.13)
    assert brighter.dtype is df.float16
    assert brighter.numpy()[0].tolist() == [
        [0.1300048828125, 0.220947265625, 0.311767578125],
        [0.40283203125, 0.49365234375, 0.58447265625],
    ]


def test_hsv_conversions_have_tensorflows_bits_in_each_float_dtype():
    assert bits(df.image.rgb_to_hsv(LINEAR)) == [
        "0x3f155556", "0x3f800000", "0x3e3a2e8c", "0x3f155556", "0x3ecccccd", "0x3ee8ba2f",
        "0x3f155556", "0x3e800000", "0x3f3a2e8c", "0x3f155555", "0x3e3a2e8c", "0x3f800000",
    ]  # fmt: skip
    assert bits(df.image.hsv_to_rgb(LINEAR)) == [
        "0x3e3a2e8c", "0x3e294196", "0x3e294196", "0x3eb2df7e", "0x3ee8ba2f", "0x3e941964",
        "0x3e8767ac", "0x3f19de88", "0x3f3a2e8c", "0x3f6ad7cf", "0x3dba2e88", "0x3f800000",
    ]  # fmt: skip
    wide = df.image.rgb_to_hsv(df.constant(LINEAR.astype(np.float64)))
    assert wide.dtype is df.float64
    assert wide.numpy().reshape(-1).tolist()[:8] == [
        0.5833333333333333, 1.0, 0.1818181872367859, 0.5833333333333333, 0.4,
        0.4545454680919647, 0.583333360652128, 0.25,
    ]  # fmt: skip
    assert df.image.hsv_to_rgb(df.constant(LINEAR.astype(np.float16))).dtype is df.float16


def test_adjustments_run_in_graphs_and_have_no_gradient():
    eager_bits = [
        bits(df.image.adjust_contrast(LINEAR, 1.7)),
        bits(df.image.adjust_hue(LINEAR, 0.3)),
        bits(df.image.adjust_saturation(LINEAR, 0.5)),
    ]
    with df.Graph().as_default():
        images = df.placeholder(df.float32, [None, None, 3])
        adjusted = [
            df.image.adjust_contrast(images, 1.7),
            df.image.adjust_hue(images, 0.3),
            df.image.adjust_saturation(images, 0.5),
        ]
        for tensor in adjusted:
            with pytest.raises(LookupError, match="No gradient defined"):
                df.gradients(tensor, images)
        with df.Session() as sess:
            assert [bits(v) for v in sess.run(adjusted, {images: LINEAR})] == eager_bits


# -- per-pixel references: TensorFlow's C++ kernels with float32 scalars --------------------------
def c_int(x):
    """``static_cast<int>(x)`` on x86: truncation; NaN and out-of-range values give INT_MIN."""
    return int(x) if math.isfinite(x) and abs(x) < 2**31 else -(2**31)


def cpp_max(a, b):
    return b if a < b else a


def cpp_min(a, b):
    return b if b < a else a


@np.errstate(all="ignore")
def reference_saturation(r, g, b, scale):
    """adjust_saturation_op.cc's rgb_to_hsv, the scaling and hsv_to_rgb for one pixel."""
    vv = cpp_max(r, cpp_max(g, b))
    spread = vv - cpp_min(r, cpp_min(g, b))
    s = spread / vv if vv > 0 else F(0)
    norm = F(1) / (F(6) * spread)
    if r == vv:
        h = norm * (g - b)
    elif g == vv:
        h = F(float(norm * (b - r)) + 2.0 / 6.0)
    else:
        h = F(float(norm * (r - g)) + 4.0 / 6.0)
    if spread <= 0:
        h = F(0)
    if h < 0:
        h = h + F(1)
    s = cpp_min(F(1), cpp_max(F(0), s * scale))
    c = s * vv
    m = vv - c
    dh = h * F(6)
    category = c_int(dh)
    phase = dh
    # (the C++ loops never end where a step does not move the value: inf, huge; left as is)
    while phase <= 0 and phase + F(2) != phase:
        phase += F(2)
    while phase >= F(2) and phase - F(2) != phase:
        phase -= F(2)
    x = c * (F(1) - abs(phase - F(1)))
    rgb = {0: (c, x, 0), 1: (x, c, 0), 2: (0, c, x), 3: (0, x, c), 4: (x, 0, c), 5: (c, 0, x)}
    return [F(v) + m for v in rgb.get(category, (0, 0, 0))]


@np.errstate(all="ignore")
def reference_hue(r, g, b, delta):
    """adjust_hue_op.cc's rgb_to_hv_range, the shift and hv_range_to_rgb for one pixel."""
    if r < g:
        if b < r:
            top, mid, low, category = g, r, b, 1
        elif b > g:
            top, mid, low, category = b, g, r, 3
        else:
            top, mid, low, category = g, b, r, 2
    elif b < g:
        top, mid, low, category = r, g, b, 0
    elif b > r:
        top, mid, low, category = b, r, g, 4
    else:
        top, mid, low, category = r, b, g, 5
    if top == low:
        h = F(0)
    else:
        ratio = (mid - low) / (top - low)
        h = F(category) + (ratio if category % 2 == 0 else F(1) - ratio)
    h = h + delta * F(6)
    while h < 0 and h + F(6) != h:
        h += F(6)
    while h >= F(6) and h - F(6) != h:
        h -= F(6)
    category = c_int(h)
    ratio = h - F(category)
    if category % 2:
        ratio = F(1) - ratio
    mid = low + ratio * (top - low)
    table = {0: (top, mid, low), 1: (mid, top, low), 2: (low, top, mid), 3: (low, mid, top),
             4: (mid, low, top)}  # fmt: skip
    return list(table.get(category, (top, low, mid)))


def reference_contrast(image, factor):
    """adjust_contrast_op.cc for one image [height, width, channels]: the sum folded in halves."""
    height, width, channels = image.shape
    pixels = [list(p) for p in image.reshape(height * width, channels)]
    remaining, first = height * width, True
    sums = [row[:] for row in pixels]
    while first or remaining > 1:
        right = remaining // 2
        left = remaining - right
        source = pixels if first else sums
        for i in range(right):
            sums[i] = [F(x + y) for x, y in zip(source[left + i], source[i])]
        if first and left > right:
            sums[right] = pixels[right][:]
        remaining, first = left, False
    mean = [F(v * (F(1) / F(height * width))) for v in sums[0]]
    out = [[F(m + factor * (v - m)) for v, m in zip(p, mean)] for p in pixels]
    return np.array(out, F).reshape(image.shape)


# Subnormal channels too, though TensorFlow's threads flush them to zero (where neither these
# kernels nor the references are TensorFlow's): the two must still agree there.
colour = st.floats(-0.25, 1.25, width=32) | st.sampled_from([0.0, 0.5, 1.0, 0.25, 1e-44])
images = hnp.arrays(F, hnp.array_shapes(min_dims=3, max_dims=3, min_side=1, max_side=5).map(
    lambda shape: shape[:2] + (3,)), elements=colour)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(images, st.floats(0, 3, width=32))
def test_saturation_matches_the_per_pixel_kernel(image, factor):
    expected = [reference_saturation(*pixel, F(factor)) for pixel in image.reshape(-1, 3)]
    got = df.image.adjust_saturation(image, factor).numpy().reshape(-1, 3)
    assert bits(got) == bits(expected)


@settings(max_examples=60, deadline=None)
@given(images, st.floats(-1, 1, width=32))
def test_hue_matches_the_per_pixel_kernel(image, delta):
    expected = [reference_hue(*pixel, F(delta)) for pixel in image.reshape(-1, 3)]
    got = df.image.adjust_hue(image, delta).numpy().reshape(-1, 3)
    assert bits(got) == bits(expected)


@settings(max_examples=60, deadline=None)
@given(images, st.floats(0, 3, width=32))
def test_contrast_matches_the_folded_sums_of_the_kernel(image, factor):
    got = df.image.adjust_contrast(image, factor).numpy()
    assert bits(got) == bits(reference_contrast(image, F(factor)))
    # and it is the plain formula up to rounding
    mean = image.astype(np.float64).mean(axis=(0, 1))
    plain = mean + factor * (image - mean)
    assert np.allclose(got, plain, atol=1e-5) and not math.isnan(float(got.sum()))

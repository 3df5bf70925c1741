"""The convolution and pooling kernels at training sizes: the blocked matrix products of
`dataflow.ops.conv_gemm` against a direct reference on random geometries, cut into many
blocks and row bands and run on several threads; their gradients against finite differences
and TensorFlow's figures; the tiled max-pool gradient; and ``ReluGrad``."""

import itertools

import numpy as np
import pytest
from conv_cases import pattern
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.framework import intra_op
from dataflow.framework.op_registry import apply_op_output
from dataflow.ops import conv_gemm
from dataflow.ops import conv_ops as kernels

# -- a direct reference ----------------------------------------------------------------------------


def _padded(x, pads):
    (top, bottom), (left, right) = pads
    return np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))


def _offsets(kh, kw, strides, dilations, oh, ow):
    """For each filter offset, the rows and columns of the padded input it meets."""
    for i, j in itertools.product(range(kh), range(kw)):
        rows = slice(i * dilations[0], i * dilations[0] + (oh - 1) * strides[0] + 1, strides[0])
        cols = slice(j * dilations[1], j * dilations[1] + (ow - 1) * strides[1] + 1, strides[1])
        yield i, j, rows, cols


def reference(x, f, dy, strides, dilations, pads, oh, ow):
    """Output, input gradient and filter gradient of the convolution, by one product per
    filter offset, in float64."""
    x, f, dy = (a.astype(np.float64) for a in (x, f, dy))
    xp = _padded(x, pads)
    out = np.zeros((x.shape[0], oh, ow, f.shape[3]))
    dxp = np.zeros_like(xp)
    dfilter = np.zeros_like(f)
    for i, j, rows, cols in _offsets(*f.shape[:2], strides, dilations, oh, ow):
        out += xp[:, rows, cols] @ f[i, j]
        dxp[:, rows, cols] += dy @ f[i, j].T
        dfilter[i, j] = np.einsum("nhwc,nhwo->co", xp[:, rows, cols], dy)
    (top, _), (left, _) = pads
    dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2]]
    return out, dx, dfilter


@pytest.fixture
def many_blocks(monkeypatch):
    """Blocks of 256 bytes, so that a small convolution has many blocks and row bands, on a
    pool of three cores, so that helpers are granted on any machine."""
    monkeypatch.setattr(conv_gemm, "BLOCK_BYTES", 256)
    monkeypatch.setattr(intra_op, "_shared_pool", intra_op.IntraOpPool(cores=3))


geometries = st.fixed_dictionaries(
    {
        "n": st.integers(1, 3),
        "h": st.integers(1, 9),
        "w": st.integers(1, 9),
        "c": st.integers(1, 4),
        "o": st.integers(1, 4),
        "kh": st.integers(1, 4),
        "kw": st.integers(1, 4),
        "strides": st.tuples(st.integers(1, 3), st.integers(1, 3)),
        "dilations": st.tuples(st.integers(1, 2), st.integers(1, 2)),
        "padding": st.sampled_from(["SAME", "VALID", "EXPLICIT"]),
        "explicit": st.lists(st.integers(0, 3), min_size=4, max_size=4),
        "seed": st.integers(0, 2**16),
    }
)


# the fixture is the same for every example: it only sets sizes
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(geometries)
def test_blocked_products_equal_the_direct_convolution_and_its_gradients(many_blocks, geo):
    attrs = {"strides": geo["strides"], "dilations": geo["dilations"], "padding": geo["padding"]}
    if geo["padding"] == "EXPLICIT":
        attrs["explicit_paddings"] = geo["explicit"]
    g = kernels._Geometry(geo["h"], geo["w"], geo["kh"], geo["kw"], attrs)
    if g.oh <= 0 or g.ow <= 0:
        return  # the window does not fit: an error, tested with the ops
    rng = np.random.default_rng(geo["seed"])
    x = rng.standard_normal((geo["n"], geo["h"], geo["w"], geo["c"]))
    f = rng.standard_normal((geo["kh"], geo["kw"], geo["c"], geo["o"]))
    dy = rng.standard_normal((geo["n"], g.oh, g.ow, geo["o"]))
    out, dx, dfilter = reference(x, f, dy, g.strides, g.dilations, g.pads, g.oh, g.ow)
    np.testing.assert_allclose(kernels._conv2d_nhwc(x, f, attrs), out, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        kernels._conv2d_backprop_input_nhwc(x.shape, f, dy, attrs), dx, rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(
        kernels._conv2d_backprop_filter_nhwc(x, f.shape, dy, attrs),
        dfilter,
        rtol=1e-10,
        atol=1e-10,
    )


def test_a_large_image_is_cut_into_bands_of_output_rows(monkeypatch):
    monkeypatch.setattr(conv_gemm, "BLOCK_BYTES", 1000)
    regions = list(conv_gemm._blocks(images=2, rows=5, row_bytes=400))
    assert regions == [
        (slice(0, 1), slice(0, 2)),
        (slice(0, 1), slice(2, 4)),
        (slice(0, 1), slice(4, 5)),
        (slice(1, 2), slice(0, 2)),
        (slice(1, 2), slice(2, 4)),
        (slice(1, 2), slice(4, 5)),
    ]
    # small images go several to a block
    assert list(conv_gemm._blocks(images=5, rows=1, row_bytes=400)) == [
        (slice(0, 2), slice(0, 1)),
        (slice(2, 4), slice(0, 1)),
        (slice(4, 5), slice(0, 1)),
    ]


def test_the_filter_gradient_has_the_same_bits_on_one_thread_and_on_three(monkeypatch):
    monkeypatch.setattr(conv_gemm, "BLOCK_BYTES", 4096)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 12, 12, 6)).astype(np.float32)
    dy = rng.standard_normal((8, 12, 12, 5)).astype(np.float32)
    attrs = {"strides": (1, 1), "padding": "SAME"}
    results = []
    for cores in (1, 3):
        pool = intra_op.IntraOpPool(cores=cores)
        monkeypatch.setattr(intra_op, "_shared_pool", pool)
        results.append(kernels._conv2d_backprop_filter_nhwc(x, (3, 3, 6, 5), dy, attrs))
        assert (pool.helpers_granted > 0) is (cores > 1)
    assert results[0].tobytes() == results[1].tobytes()


# -- gradients: finite differences and TensorFlow ------------------------------------------------
@pytest.mark.parametrize(
    "strides, padding, dilations",
    [((1, 1), "SAME", (1, 1)), ((2, 2), "SAME", (1, 1)), ((1, 1), "VALID", (2, 1))],
    ids=["stride 1: the full convolution", "stride 2: col2im", "dilated"],
)
def test_gradients_of_the_blocked_kernels_match_finite_differences(
    many_blocks, strides, padding, dilations
):
    rng = np.random.default_rng(7)
    x_value = rng.standard_normal((2, 6, 7, 3))
    f_value = rng.standard_normal((3, 3, 3, 2))
    x, f = df.constant(x_value), df.constant(f_value)
    y = df.nn.conv2d(x, f, [1, *strides, 1], padding, dilations=[1, *dilations, 1])
    weights = rng.standard_normal(y.shape.as_list())
    loss = df.reduce_sum(y * weights)
    with df.Session() as sess:
        dx, dfilter = sess.run(df.gradients(loss, [x, f]))

    def loss_at(xv, fv):
        attrs = {"strides": strides, "dilations": dilations, "padding": padding}
        return np.sum(kernels._conv2d_nhwc(xv, fv, attrs) * weights)

    eps = 1e-6
    for index in [(0, 0, 0, 0), (1, 3, 4, 2), (0, 5, 6, 1), (1, 2, 0, 0)]:
        bump = np.zeros_like(x_value)
        bump[index] = eps
        slope = (loss_at(x_value + bump, f_value) - loss_at(x_value - bump, f_value)) / (2 * eps)
        assert dx[index] == pytest.approx(slope, rel=1e-6, abs=1e-8)
    for index in [(0, 0, 0, 0), (2, 1, 2, 1), (1, 2, 1, 0)]:
        bump = np.zeros_like(f_value)
        bump[index] = eps
        slope = (loss_at(x_value, f_value + bump) - loss_at(x_value, f_value - bump)) / (2 * eps)
        assert dfilter[index] == pytest.approx(slope, rel=1e-6, abs=1e-8)


# Printed by TensorFlow 2.21 (tf.compat.v1 graph mode, float64) for the figures of
# test_conv_ops.py: output shape, sum(y), sum(y * pattern(y.shape, 0.7)), and the sums of the
# input and filter gradients of that weighted sum against pattern(shape, 0.3).
TF_TRAINING_SIZES = {
    "lenet_conv2": (
        ([6, 14, 14, 32], [5, 5, 32, 16], [1, 1, 1, 1], "SAME"),
        [6, 14, 14, 16],
        [21.387642658160246, 737.2456822288696, 518.6024155976665, 1378.1768420310007],
    ),
    "resnet_downsample": (
        ([4, 16, 16, 8], [3, 3, 8, 16], [1, 2, 2, 1], "SAME"),
        [4, 8, 8, 16],
        [-68.77483366920183, 74.9271087019398, 160.99952480488832, -268.3720964437517],
    ),
}


@pytest.mark.parametrize("name", list(TF_TRAINING_SIZES))
def test_training_sized_convolutions_match_tensorflow(monkeypatch, name):
    monkeypatch.setattr(conv_gemm, "BLOCK_BYTES", 64 * 1024)  # several blocks at these sizes
    (x_shape, f_shape, strides, padding), shape, expected = TF_TRAINING_SIZES[name]
    x, f = df.constant(pattern(x_shape, 0.1)), df.constant(pattern(f_shape, 1.1))
    y = df.nn.conv2d(x, f, strides, padding)
    weights = pattern(shape, 0.7)
    dx, dfilter = df.gradients(df.reduce_sum(y * weights), [x, f])
    with df.Session() as sess:
        y_value, dx_value, df_value = sess.run([y, dx, dfilter])
    assert list(y_value.shape) == shape
    figures = [
        np.sum(y_value),
        np.sum(y_value * weights),
        np.sum(dx_value * pattern(x_shape, 0.3)),
        np.sum(df_value * pattern(f_shape, 0.3)),
    ]
    np.testing.assert_allclose(figures, expected, rtol=1e-10)


# -- max pooling's gradient where the windows tile the input ---------------------------------------
def _first_maximum_gradient(x, y, dy, k, attrs):
    """The gradient routed to each window's first maximum, window by window."""
    g = kernels._pool_geometry(x, attrs)
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    (top, bottom), (left, right) = g.pads
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=lowest)
    grad = np.zeros(xp.shape, dy.dtype)
    for n, r, c, ch in itertools.product(*(range(s) for s in y.shape)):
        window = xp[n, r * k : r * k + k, c * k : c * k + k, ch].reshape(-1)
        hits = np.flatnonzero(window == y[n, r, c, ch])
        if hits.size:
            i, j = divmod(int(hits[0]), k)
            grad[n, r * k + i, c * k + j, ch] += dy[n, r, c, ch]
    return grad[:, top : top + x.shape[1], left : left + x.shape[2]]


@settings(max_examples=60, deadline=None)
@given(
    h=st.integers(1, 7),
    w=st.integers(1, 7),
    k=st.integers(1, 3),
    padding=st.sampled_from(["SAME", "VALID"]),
    dtype=st.sampled_from([np.float32, np.float64, np.int32]),
    seed=st.integers(0, 2**16),
)
def test_tiled_max_pool_gradient_goes_to_each_windows_first_maximum(h, w, k, padding, dtype, seed):
    if padding == "VALID" and k > min(h, w):
        return
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, (2, h, w, 2)).astype(dtype)  # a coarse grid: many ties
    if x.dtype.kind == "f":
        x[0, 0, 0, 0] = np.nan  # never a maximum
        x[-1, -1, -1, -1] = -np.inf
    attrs = {"ksize": (k, k), "strides": (k, k), "padding": padding}
    y = kernels._max_pool_nhwc(x, attrs)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    expected = _first_maximum_gradient(x, y, dy, k, attrs)
    np.testing.assert_array_equal(kernels._max_pool_grad_nhwc(x, y, dy, attrs), expected)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_max_pooling_shares_a_large_batch_of_images_among_threads_with_the_same_bits(
    monkeypatch, padding
):
    """Above `POOL_PARALLEL_ELEMENTS`, MaxPool and its tiled gradient pool blocks of images on
    the intra-op threads; each image is pooled alone, so the values are those of one thread."""
    monkeypatch.setattr(kernels, "POOL_PARALLEL_ELEMENTS", 1000)
    rng = np.random.default_rng(11)
    x = rng.integers(0, 3, (13, 9, 9, 4)).astype(np.float32)  # ties in most windows
    x[0, 0, 0, 0], x[5, 3, 3, 1] = np.nan, -np.inf
    pool = intra_op.IntraOpPool(cores=3)
    monkeypatch.setattr(intra_op, "shared_pool", lambda: pool)
    attrs = {"ksize": (2, 2), "strides": (2, 2), "padding": padding}
    results = {}
    for threads in (1, 3):
        y = kernels._max_pool_nhwc(x, {**attrs, "intra_op_threads": threads})
        dy = np.arange(y.size, dtype=np.float32).reshape(y.shape)
        grad = kernels._max_pool_grad_nhwc(x, y, dy, {**attrs, "intra_op_threads": threads})
        results[threads] = y, dy, grad
    assert pool.helpers_granted > 0
    for one, shared in zip(results[1], results[3]):
        np.testing.assert_array_equal(one, shared)
    y, dy, grad = results[3]
    np.testing.assert_array_equal(grad, _first_maximum_gradient(x, y, dy, 2, attrs))


# -- ReluGrad --------------------------------------------------------------------------------------
def test_the_relu_gradient_is_one_relugrad_op_as_in_tensorflow():
    x = df.placeholder(df.float32, [4], name="x")
    (dx,) = df.gradients(df.nn.relu(x), [x])
    assert dx.op.type == "ReluGrad"
    assert dx.op.name == "gradients/Relu_grad/ReluGrad"
    with df.Session() as sess:
        value = sess.run(dx, {x: [-1.0, 0.0, 2.0, 3.0]})
    np.testing.assert_array_equal(value, [0.0, 0.0, 1.0, 1.0])


def test_relugrad_multiplies_so_a_nan_or_infinite_gradient_stays_nan_where_the_unit_is_off():
    # TensorFlow 2.21: gen_nn_ops.relu_grad([nan, nan, 1, inf, 2], [-1, 0, 0, -1, 3])
    #   -> [nan, nan, 0, nan, 2]; on int32 [1, 2, 3], [-1, 0, 4] -> [0, 0, 3].
    def relu_grad(gradients, features):
        gradients, features = df.convert_to_tensor(gradients), df.convert_to_tensor(features)
        return apply_op_output("ReluGrad", (gradients, features))

    with df.Session() as sess:
        floats = sess.run(
            relu_grad(gradients=[np.nan, np.nan, 1.0, np.inf, 2.0], features=[-1, 0, 0, -1, 3.0])
        )
        ints = sess.run(relu_grad(gradients=[1, 2, 3], features=[-1, 0, 4]))
    np.testing.assert_array_equal(floats, [np.nan, np.nan, 0.0, np.nan, 2.0])
    np.testing.assert_array_equal(ints, [0, 0, 3])
    assert ints.dtype == np.int32


def test_relugrad_refuses_gradients_and_features_of_other_shapes():
    with pytest.raises(ValueError, match="ReluGrad.*must have one shape"):
        apply_op_output("ReluGrad", (df.constant([1.0, 2.0]), df.constant([1.0, 2.0, 3.0])))
    g = df.placeholder(df.float32, [None])
    op = apply_op_output("ReluGrad", (g, df.constant([1.0, 2.0, 3.0])))
    with df.Session() as sess, pytest.raises(df.errors.InvalidArgumentError, match="ReluGrad"):
        sess.run(op, {g: [1.0, 2.0]})


def test_second_derivative_of_relu_is_zero_as_in_tensorflow():
    # TensorFlow 2.21, nested tapes over relu at [-1, 2]: first [0, 1], second [0, 0].
    x = df.constant([-1.0, 2.0])
    (first,) = df.gradients(df.nn.relu(x), [x])
    (second,) = df.gradients(first, [x])
    with df.Session() as sess:
        np.testing.assert_array_equal(sess.run(first), [0.0, 1.0])
        np.testing.assert_array_equal(sess.run(second), [0.0, 0.0])


# -- fused batch normalization in blocks -----------------------------------------------------------
def _batch_norm_reference(x, dy, scale, offset, epsilon):
    """Training-mode batch norm and its gradients, in float64, by the textbook formulas."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    axes = (0, 1, 2)
    mean, variance = x.mean(axis=axes), x.var(axis=axes)
    inv = 1 / np.sqrt(variance + epsilon)
    normalized = (x - mean) * inv
    y = normalized * scale + offset
    count = x.size // x.shape[3]
    grad_offset = dy.sum(axis=axes)
    grad_scale = (dy * normalized).sum(axis=axes)
    dx = scale * inv / count * (count * dy - grad_offset - normalized * grad_scale)
    return y, mean, variance * count / max(count - 1, 1), dx, grad_scale, grad_offset


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.tuples(
        st.integers(1, 3), st.integers(1, 6), st.integers(1, 6), st.sampled_from([1, 3, 5, 32])
    ),
    seed=st.integers(0, 2**16),
)
def test_batch_norm_in_many_blocks_equals_the_textbook_formulas(monkeypatch, shape, seed):
    from dataflow.framework.op_registry import get_op_def
    from dataflow.ops import norm_ops

    monkeypatch.setattr(norm_ops, "BLOCK_BYTES", 64)
    monkeypatch.setattr(norm_ops, "MIN_PARALLEL_ELEMENTS", 1)
    monkeypatch.setattr(intra_op, "_shared_pool", intra_op.IntraOpPool(cores=3))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3 + 1
    dy = rng.standard_normal(shape)
    scale, offset = rng.standard_normal(shape[3]), rng.standard_normal(shape[3])
    empty = np.zeros(0)
    attrs = {"epsilon": 1e-3, "is_training": True, "exponential_avg_factor": 1.0}
    forward = get_op_def("FusedBatchNormV3").kernel(attrs)
    backward = get_op_def("FusedBatchNormGradV3").kernel(attrs)
    y, mean, variance = forward(x, scale, offset, empty, empty)
    dx, grad_scale, grad_offset = backward(dy, x, scale, empty, empty)
    expected = _batch_norm_reference(x, dy, scale, offset, 1e-3)
    for got, want in zip((y, mean, variance, dx, grad_scale, grad_offset), expected):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


# -- depthwise convolutions in blocks --------------------------------------------------------------
def depthwise_reference(x, f, dy, strides, dilations, pads, oh, ow):
    """Output, input gradient and filter gradient of the depthwise convolution, channel by
    channel and multiplier by multiplier, in float64."""
    n, _, _, c = x.shape
    m = f.shape[3]
    xp = _padded(x.astype(np.float64), pads)
    dy = dy.astype(np.float64).reshape(n, oh, ow, c, m)
    out = np.zeros((n, oh, ow, c, m))
    dxp = np.zeros_like(xp)
    dfilter = np.zeros(f.shape)
    for i, j, rows, cols in _offsets(*f.shape[:2], strides, dilations, oh, ow):
        for q in range(m):
            out[..., q] += xp[:, rows, cols] * f[i, j, :, q]
            dxp[:, rows, cols] += dy[..., q] * f[i, j, :, q]
            dfilter[i, j, :, q] = (xp[:, rows, cols] * dy[..., q]).sum(axis=(0, 1, 2))
    (top, _), (left, _) = pads
    dx = dxp[:, top : top + x.shape[1], left : left + x.shape[2]]
    return out.reshape(n, oh, ow, c * m), dx, dfilter


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(geometries, st.integers(1, 3))
def test_blocked_depthwise_convolution_equals_the_direct_one_and_its_gradients(
    monkeypatch, geo, multiplier
):
    from dataflow.ops import conv_depthwise

    monkeypatch.setattr(conv_depthwise, "BLOCK_BYTES", 128)
    monkeypatch.setattr(conv_gemm, "BLOCK_BYTES", 128)
    monkeypatch.setattr(intra_op, "_shared_pool", intra_op.IntraOpPool(cores=3))
    attrs = {"strides": geo["strides"], "dilations": geo["dilations"], "padding": geo["padding"]}
    if geo["padding"] == "EXPLICIT":
        attrs["explicit_paddings"] = geo["explicit"]
    g = kernels._Geometry(geo["h"], geo["w"], geo["kh"], geo["kw"], attrs)
    if g.oh <= 0 or g.ow <= 0:
        return
    rng = np.random.default_rng(geo["seed"])
    x = rng.standard_normal((geo["n"], geo["h"], geo["w"], geo["c"]))
    f = rng.standard_normal((geo["kh"], geo["kw"], geo["c"], multiplier))
    dy = rng.standard_normal((geo["n"], g.oh, g.ow, geo["c"] * multiplier))
    out, dx, dfilter = depthwise_reference(x, f, dy, g.strides, g.dilations, g.pads, g.oh, g.ow)
    np.testing.assert_allclose(kernels._depthwise_nhwc(x, f, attrs), out, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        kernels._depthwise_backprop_input_nhwc(x.shape, f, dy, attrs), dx, rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(
        kernels._depthwise_backprop_filter_nhwc(x, f.shape, dy, attrs),
        dfilter,
        rtol=1e-10,
        atol=1e-10,
    )


# -- large matrix products in bands ----------------------------------------------------------------
@pytest.mark.parametrize(
    "m, k, n, transpose_a, transpose_b",
    [(64, 300, 40, False, False), (10, 300, 200, False, True), (200, 64, 30, True, False)],
    ids=["bands of rows", "bands of columns", "transposed"],
)
def test_a_large_product_runs_in_bands_whose_bits_do_not_depend_on_the_threads(
    monkeypatch, m, k, n, transpose_a, transpose_b
):
    """The bands are the same on any number of threads, so the bits are too; numpy's one
    product may add in another order (BLAS picks its kernels by the shapes it is given)."""
    from dataflow.ops import math_ops

    monkeypatch.setattr(math_ops, "PARALLEL_PRODUCT_MACS", 1000)
    monkeypatch.setattr(math_ops, "BAND_MACS", 100)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    product = df.matmul(a, b, transpose_a=transpose_a, transpose_b=transpose_b)
    values = []
    for cores in (1, 3):
        pool = intra_op.IntraOpPool(cores=cores)
        monkeypatch.setattr(intra_op, "_shared_pool", pool)
        with df.Session() as sess:
            values.append(sess.run(product))
        assert (pool.helpers_granted > 0) is (cores > 1)
    assert values[0].tobytes() == values[1].tobytes()
    expected = np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)
    np.testing.assert_allclose(values[0], expected, rtol=1e-5, atol=1e-4)


def test_a_product_too_small_to_share_runs_on_the_calling_thread_alone(monkeypatch):
    """Waking a helper costs more than it saves on a product of a few hundred microseconds:
    below PARALLEL_PRODUCT_MACS the product is one call, on one BLAS thread."""
    from dataflow.ops import math_ops

    pool = intra_op.IntraOpPool(cores=3)
    monkeypatch.setattr(intra_op, "_shared_pool", pool)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 784)).astype(np.float32)
    b = rng.standard_normal((784, 256)).astype(np.float32)
    assert math_ops.BLAS_THREADS_MACS < a.shape[0] * a.shape[1] * b.shape[1]
    assert a.shape[0] * a.shape[1] * b.shape[1] < math_ops.PARALLEL_PRODUCT_MACS
    with df.Session() as sess:
        value = sess.run(df.matmul(a, b))
    assert pool.helpers_granted == 0
    np.testing.assert_allclose(value, a @ b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("threads, uses_helpers", [(1, False), (3, True)])
def test_the_sessions_intra_op_budget_bounds_the_threads_of_a_training_step(
    monkeypatch, threads, uses_helpers
):
    monkeypatch.setattr(conv_gemm, "BLOCK_BYTES", 4096)
    pool = intra_op.IntraOpPool(cores=3)
    monkeypatch.setattr(intra_op, "_shared_pool", pool)
    rng = np.random.default_rng(1)
    x = df.constant(rng.standard_normal((4, 8, 8, 3)).astype(np.float32))
    f = df.Variable(rng.standard_normal((3, 3, 3, 4)).astype(np.float32))
    y = df.nn.conv2d(x, f, 1, "SAME")
    step = df.train.GradientDescentOptimizer(0.1).minimize(df.reduce_sum(y * y))
    config = df.ConfigProto(intra_op_parallelism_threads=threads)
    with df.Session(config=config) as sess:
        sess.run(df.global_variables_initializer())
        sess.run(step)
    assert (pool.helpers_granted > 0) is uses_helpers

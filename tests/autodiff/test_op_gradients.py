"""Every differentiable op's gradient agrees with central finite differences (float64)."""

import numpy as np
import pytest
from gradient_checking import check_gradients
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.framework.op_registry import apply_op, get_op_def, registered_op_types

rng = np.random.default_rng(1234)


def normal(*shape):
    return rng.normal(size=shape)


def positive(*shape):
    return rng.uniform(0.5, 2.0, size=shape)


def distinct(*shape):
    """Values well apart from each other and from 0 (no ties or kinks within eps)."""
    n = int(np.prod(shape))
    values = rng.permutation(np.arange(1, n + 1)) * 0.37 * rng.choice([-1, 1], size=n)
    return values.reshape(shape)


# (case id, function of placeholders, input arrays)
CASES = [
    ("Add broadcast", lambda x, y: x + y, [normal(3, 4), normal(4)]),
    ("Add both broadcast", lambda x, y: df.add(x, y), [normal(3, 1), normal(1, 4)]),
    ("Sub", lambda x, y: x - y, [normal(2, 3), normal(2, 1)]),
    ("Mul", lambda x, y: x * y, [normal(2, 3, 2), normal(3, 1)]),
    ("RealDiv", lambda x, y: x / y, [normal(2, 3), positive(3)]),
    ("FloorMod", lambda x, y: df.mod(x, y), [positive(4) * 3.1, positive(4) + 0.3]),
    ("Pow", lambda x, y: df.pow(x, y), [positive(2, 3), normal(3)]),
    ("Maximum", lambda x, y: df.maximum(x, y), [distinct(2, 3), distinct(3) * 1.01]),
    ("Minimum", lambda x, y: df.minimum(x, y), [distinct(2, 3), distinct(2, 1) * 1.01]),
    ("SquaredDifference", lambda x, y: df.squared_difference(x, y), [normal(3, 2), normal(2)]),
    ("Neg", lambda x: -x, [normal(5)]),
    ("Abs", lambda x: df.abs(x), [distinct(2, 3)]),
    ("Sign", lambda x: df.sign(x) * x, [distinct(4)]),
    ("Square", df.square, [normal(2, 2)]),
    ("Sqrt", df.sqrt, [positive(3)]),
    ("Rsqrt", df.rsqrt, [positive(3)]),
    ("Exp", df.exp, [normal(3)]),
    ("Log", df.log, [positive(3)]),
    ("Log1p", df.log1p, [positive(3)]),
    ("Sin", df.sin, [normal(3)]),
    ("Cos", df.cos, [normal(3)]),
    ("Tan", df.tan, [normal(3) * 0.5]),
    ("Tanh", df.tanh, [normal(3)]),
    ("Sigmoid", df.sigmoid, [normal(3)]),
    ("SelectV2", lambda x, y: df.where_v2(x > y, x * 2.0, y), [distinct(2, 3), distinct(3) * 1.01]),
    ("Select", lambda x, y: df.where(x > y, x * 2.0, y), [distinct(2, 3), distinct(2, 3) * 1.01]),
    (
        "ClipByValue",
        lambda t, lo, hi: df.clip_by_value(t, lo, hi),
        [distinct(2, 3), np.array(-1.1), np.array(1.2)],
    ),
    ("MatMul", lambda a, b: df.matmul(a, b), [normal(2, 3), normal(3, 4)]),
    (
        "MatMul transpose_a",
        lambda a, b: df.matmul(a, b, transpose_a=True),
        [normal(3, 2), normal(3, 4)],
    ),
    (
        "MatMul transpose_b",
        lambda a, b: df.matmul(a, b, transpose_b=True),
        [normal(2, 3), normal(4, 3)],
    ),
    (
        "MatMul transpose both",
        lambda a, b: df.matmul(a, b, transpose_a=True, transpose_b=True),
        [normal(3, 2), normal(4, 3)],
    ),
    ("BatchMatMulV2 broadcast", lambda a, b: df.matmul(a, b), [normal(2, 2, 3), normal(3, 2)]),
    (
        "BatchMatMulV2 transpose",
        lambda a, b: df.matmul(a, b, transpose_b=True),
        [normal(1, 2, 3), normal(2, 2, 3)],
    ),
    ("AddN", lambda x, y: df.add_n([x, y, x]), [normal(2, 2), normal(2, 2)]),
    ("Sum", lambda x: df.reduce_sum(x, 1), [normal(2, 3, 2)]),
    ("Sum all keepdims", lambda x: df.reduce_sum(x, keepdims=True), [normal(2, 3)]),
    ("Mean", lambda x: df.reduce_mean(x, [0, 2]), [normal(2, 3, 2)]),
    ("Prod", lambda x: df.reduce_prod(x, 1), [normal(3, 3)]),
    (
        "Prod with zeros",
        lambda x: df.reduce_prod(
            x * df.constant([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], df.float64), 1
        ),
        [normal(2, 3)],
    ),
    ("Max", lambda x: df.reduce_max(x, -1), [distinct(2, 3)]),
    ("Min", lambda x: df.reduce_min(x, keepdims=True), [distinct(2, 3)]),
    ("Cumsum", lambda x: df.cumsum(x, 1), [normal(2, 3)]),
    (
        "Cumsum exclusive reverse",
        lambda x: df.cumsum(x, 0, exclusive=True, reverse=True),
        [normal(3, 2)],
    ),
    ("Identity", df.identity, [normal(3)]),
    ("PlaceholderWithDefault", lambda x: df.placeholder_with_default(x, [2, 2]), [normal(2, 2)]),
    ("Print", lambda x: df.Print(x, [x], first_n=0), [normal(2)]),
    ("Reshape", lambda x: df.reshape(x, [3, 2]), [normal(2, 3)]),
    ("Transpose", lambda x: df.transpose(x, [2, 0, 1]), [normal(2, 3, 4)]),
    ("ExpandDims", lambda x: df.expand_dims(x, 1), [normal(2, 3)]),
    ("Squeeze", lambda x: df.squeeze(x), [normal(2, 1, 3)]),
    ("ConcatV2", lambda x, y: df.concat([x, y, x], 1), [normal(2, 1), normal(2, 3)]),
    ("Pack", lambda x, y: df.stack([x, y], axis=1), [normal(2, 3), normal(2, 3)]),
    ("Unpack", lambda x: df.unstack(x, axis=1)[0] * 2.0 + df.unstack(x, axis=1)[2], [normal(2, 3)]),
    ("Split", lambda x: df.split(x, 2, axis=1)[1], [normal(2, 4)]),
    ("SplitV", lambda x: df.concat(df.split(x, [1, 3], axis=0)[::-1], 0), [normal(4, 2)]),
    ("Slice", lambda x: df.slice(x, [1, 0], [1, -1]), [normal(3, 3)]),
    ("StridedSlice", lambda x: x[1:, ::2], [normal(3, 5)]),
    ("StridedSlice shrink newaxis", lambda x: x[1, None, ::-1], [normal(3, 4)]),
    ("StridedSlice to a single element", lambda x: x[1, -1], [normal(3, 4)]),
    ("GatherV2", lambda x: df.gather(x, [2, 0, 2]), [normal(3, 2)]),
    ("GatherV2 axis 1", lambda x: df.gather(x, [[1, 1], [0, 2]], axis=1), [normal(2, 3, 2)]),
    (
        "UnsortedSegmentSum",
        lambda x: df.unsorted_segment_sum(x, [[1, -1], [1, 0]], 3),
        [normal(2, 2, 3)],
    ),
    ("SegmentSum", lambda x: df.segment_sum(x, [0, 0, 2]), [normal(3, 2)]),
    ("GatherNd", lambda x: df.gather_nd(x, [[1, 0], [1, 0], [0, 2]]), [normal(2, 3, 2)]),
    ("ScatterNd", lambda u: df.scatter_nd([[1], [1], [3]], u, [5, 2]), [normal(3, 2)]),
    (
        "SparseToDense",
        lambda v, d: df.sparse_to_dense([[0, 1], [2, 0]], [3, 2], v, d),
        [normal(2), normal()],
    ),
    (
        "SparseTensorDenseMatMul",
        lambda v, b: df.sparse_tensor_dense_matmul(
            df.SparseTensor([[0, 0], [1, 2], [2, 1]], v, [3, 4]), b
        ),
        [normal(3), normal(4, 2)],
    ),
    (
        "SparseTensorDenseMatMul adjoints",
        lambda v, b: df.sparse_tensor_dense_matmul(
            df.SparseTensor([[0, 0], [1, 2], [2, 1]], v, [3, 4]), b, True, True
        ),
        [normal(3), normal(2, 3)],
    ),
    ("Tile", lambda x: df.tile(x, [2, 3]), [normal(2, 2)]),
    ("PadV2", lambda x: df.pad(x, [[1, 0], [2, 1]]), [normal(2, 2)]),
    ("MirrorPad reflect", lambda x: df.pad(x, [[1, 2], [2, 1]], mode="REFLECT"), [normal(3, 4)]),
    (
        "MirrorPad symmetric",
        lambda x: df.pad(x, [[2, 1], [0, 3]], mode="SYMMETRIC"),
        [normal(3, 4)],
    ),
    ("Fill", lambda v: df.fill([2, 3], v), [np.array(0.7)]),
    ("Relu", df.nn.relu, [distinct(2, 3)]),
    ("Relu6", df.nn.relu6, [distinct(2, 3) * 3]),
    ("Elu", df.nn.elu, [distinct(2, 3)]),
    ("Softplus", df.nn.softplus, [normal(2, 3)]),
    ("Softmax", df.nn.softmax, [normal(2, 3)]),
    ("Softmax axis 0", lambda x: df.nn.softmax(x, axis=0), [normal(3, 2)]),
    ("LogSoftmax", df.nn.log_softmax, [normal(2, 3)]),
    (
        "SoftmaxCrossEntropyWithLogits",
        lambda lo: df.nn.softmax_cross_entropy_with_logits(
            labels=df.constant([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0]], df.float64), logits=lo
        ),
        [normal(2, 3)],
    ),
    (
        "SoftmaxCrossEntropyWithLogits labels",
        lambda lo, la: apply_op(
            "SoftmaxCrossEntropyWithLogits",
            (lo, la / df.reduce_sum(la, -1, keepdims=True)),
            {"axis": -1},
        ).outputs[0],
        [normal(2, 3), positive(2, 3)],
    ),
    (
        "SparseSoftmaxCrossEntropyWithLogits",
        lambda lo: df.nn.sparse_softmax_cross_entropy_with_logits(
            labels=df.constant([2, 0]), logits=lo
        ),
        [normal(2, 3)],
    ),
    ("BiasAdd", lambda x, b: df.nn.bias_add(x, b), [normal(2, 2, 3), normal(3)]),
    (
        "BiasAdd NCHW",
        lambda x, b: df.nn.bias_add(x, b, data_format="NCHW"),
        [normal(2, 3, 2), normal(3)],
    ),
    (
        "Conv2D SAME strided",
        lambda x, f: df.nn.conv2d(x, f, strides=2, padding="SAME"),
        [normal(1, 5, 4, 2), normal(3, 2, 2, 3)],
    ),
    (
        "Conv2D VALID dilated",
        lambda x, f: df.nn.conv2d(x, f, strides=1, padding="VALID", dilations=2),
        [normal(2, 5, 5, 1), normal(2, 2, 1, 2)],
    ),
    (
        "Conv2D 1x1",
        lambda x, f: df.nn.conv2d(x, f, strides=1, padding="SAME"),
        [normal(1, 2, 3, 2), normal(1, 1, 2, 2)],
    ),
    ("MaxPool", lambda x: df.nn.max_pool(x, 2, 2, "SAME"), [distinct(1, 3, 5, 2)]),
    ("AvgPool", lambda x: df.nn.avg_pool(x, 3, 2, "SAME"), [normal(2, 5, 4, 1)]),
    ("AvgPool VALID", lambda x: df.nn.avg_pool(x, 2, 1, "VALID"), [normal(1, 3, 3, 2)]),
    ("Dropout rate 0", lambda x: df.nn.dropout(x, rate=0.0), [positive(3, 2)]),
    (
        "batch_normalization",
        lambda x, m, v: df.nn.batch_normalization(x, m, v, None, None, 1e-3),
        [normal(4, 2), normal(2), positive(2)],
    ),
    ("moments", lambda x: df.add_n(list(df.nn.moments(x, [0]))), [normal(4, 3)]),
    ("ReadVariableOp via placeholder", lambda x: df.identity(x) * 3.0, [normal(2)]),
]
CASES = [c for c in CASES if c[0] != "ReadVariableOp via placeholder"]


@pytest.mark.parametrize("make, inputs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(make, inputs):
    check_gradients(make, inputs)


# Second-order: the backward ops are ops of the library, so they have gradients too.
SECOND_ORDER = [
    (
        "Conv2DBackprop ops",
        lambda x, f: df.gradients(df.reduce_sum(df.square(df.nn.conv2d(x, f, 1, "SAME"))), [x, f]),
    ),
    ("StridedSliceGrad", lambda x: df.gradients(df.reduce_sum(df.square(x[1:, ::2])), x)),
    (
        "SumToShape and Tile",
        lambda x: df.gradients(
            df.reduce_sum(df.square(x * df.placeholder_with_default(np.ones((2, 3)), [None, 3]))), x
        ),
    ),
    (
        "MirrorPadGrad",
        lambda x: df.gradients(
            df.reduce_sum(df.square(df.pad(x, [[1, 1], [1, 1]], mode="REFLECT"))), x
        ),
    ),
    (
        "AvgPoolGrad",
        lambda x: df.gradients(df.reduce_sum(df.square(df.nn.avg_pool(x, 2, 1, "SAME"))), x),
    ),
    ("tanh", lambda x: df.gradients(df.reduce_sum(df.tanh(x) ** 3.0), x)),
    (
        "MaxPoolGrad and MaxPoolGradGrad",
        lambda x: df.gradients(
            df.reduce_sum(df.square(df.nn.max_pool(x, 2, 1, "SAME")) * x[:, :, :1, :1]), x
        ),
    ),
]


@pytest.mark.parametrize(
    "make, inputs_fn",
    [
        (SECOND_ORDER[0][1], lambda: [normal(1, 3, 3, 2), normal(2, 2, 2, 1)]),
        (SECOND_ORDER[1][1], lambda: [normal(3, 4)]),
        (SECOND_ORDER[2][1], lambda: [normal(1, 3)]),
        (SECOND_ORDER[3][1], lambda: [normal(3, 3)]),
        (SECOND_ORDER[4][1], lambda: [normal(1, 3, 3, 1)]),
        (SECOND_ORDER[5][1], lambda: [normal(3)]),
        (SECOND_ORDER[6][1], lambda: [distinct(1, 3, 4, 1)]),
    ],
    ids=[c[0] for c in SECOND_ORDER],
)
def test_gradient_of_gradient_matches_finite_differences(make, inputs_fn):
    def total(*xs):
        return df.add_n([df.reduce_sum(df.square(g)) for g in make(*xs) if g is not None])

    check_gradients(total, inputs_fn())


@settings(max_examples=15, deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=0, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
    st.integers(0, 3),
    st.sampled_from(["Add", "Sub", "Mul", "RealDiv", "SquaredDifference", "Pow"]),
)
def test_broadcasting_binary_gradients_sum_over_broadcast_dimensions(dims, ones, drop, op_type):
    x_shape = list(dims)
    y_shape = [1 if one else d for d, one in zip(dims, ones)][drop:]
    fn = {
        "Add": df.add,
        "Sub": df.subtract,
        "Mul": df.multiply,
        "RealDiv": df.realdiv,
        "SquaredDifference": df.squared_difference,
        "Pow": df.pow,
    }[op_type]
    # Pow needs a positive base, RealDiv a divisor away from zero.
    first = positive if op_type == "Pow" else normal
    second = positive if op_type in ("RealDiv", "Pow") else normal
    check_gradients(fn, [first(*x_shape), second(*y_shape)])
    check_gradients(fn, [first(*y_shape), second(*x_shape)])


def test_gradient_with_run_time_shapes_uses_shape_ops():
    def make(x, y):
        xu = df.placeholder_with_default(x, [None, None])
        yu = df.placeholder_with_default(y, [None])
        return xu * yu + df.reduce_sum(df.tile(xu, [1, 2]), 0)[:3]

    check_gradients(make, [normal(2, 3), normal(3)])


@pytest.mark.parametrize(
    "reduce", [df.reduce_sum, df.reduce_mean, df.reduce_max, df.reduce_min, df.reduce_prod]
)
@pytest.mark.parametrize("axis", [-1, [0, -1], [-3, 1]])
def test_reduction_gradients_take_negative_axes_on_an_input_of_unknown_rank(reduce, axis):
    def make(x):
        unknown_rank = df.placeholder_with_default(x, None)
        return reduce(unknown_rank, axis)

    check_gradients(make, [distinct(2, 3, 4)])


def test_negative_axes_count_from_the_rank_of_each_runs_input():
    x = df.placeholder(df.float64, shape=None)
    (grad,) = df.gradients(df.reduce_max(x, -1) * df.constant(2.0, df.float64), x)
    with df.Session() as session:
        np.testing.assert_array_equal(session.run(grad, {x: [1.0, 3.0, 2.0]}), [0, 2, 0])
        np.testing.assert_array_equal(
            session.run(grad, {x: [[1.0, 3.0], [4.0, 2.0]]}), [[0, 2], [2, 0]]
        )


def test_every_op_declares_a_gradient_or_non_differentiability():
    types = [t for t in registered_op_types() if not t.endswith("ForTest")]
    missing = [t for t in types if get_op_def(t).gradient is None]
    assert missing == []


@pytest.mark.parametrize(
    "op_type",
    "Equal Less Greater ArgMax ArgMin Shape Size Rank OneHot StopGradient ZerosLike Any All "
    "Range Where LogicalAnd Const Placeholder PyFunc".split(),
)
def test_non_differentiable_ops_are_declared(op_type):
    assert is_not_differentiable_type(op_type)


def is_not_differentiable_type(op_type):
    from dataflow.framework.gradient_registry import _not_differentiable

    return get_op_def(op_type).gradient is _not_differentiable


def test_cast_between_floats_passes_the_gradient_in_the_source_dtype():
    x = df.placeholder(df.float64, [3])
    (grad,) = df.gradients(df.cast(df.square(df.cast(x, df.float32)), df.float64), x)
    assert grad.dtype is df.float64
    with df.Session() as session:
        np.testing.assert_allclose(session.run(grad, {x: [1.0, 2.0, 3.0]}), [2.0, 4.0, 6.0])


def test_casts_to_int_and_argmax_pass_no_gradient():
    x = df.placeholder(df.float64, [3])
    y = df.cast(df.cast(x, df.int32), df.float64) + df.cast(df.argmax(x), df.float64)
    assert df.gradients(y, x) == [None]


def test_dropout_gradient_is_the_drawn_mask_even_where_the_input_is_zero():
    # noise_shape [1, 50] shares one mask between the two rows: row 1 (ones) shows the scaled
    # mask in its output, and row 0 (zeros, whose output is all zeros) must get that mask as
    # its gradient.
    x = df.constant(np.array([np.zeros(50), np.ones(50)]), dtype=df.float64)
    y = df.nn.dropout(x, rate=0.5, noise_shape=[1, 50], seed=3)
    (grad,) = df.gradients(df.reduce_sum(y), [x])
    with df.Session() as sess:
        y_value, grad_value = sess.run([y, grad])
    mask = y_value[1]
    assert set(np.unique(mask)) == {0.0, 2.0}
    np.testing.assert_array_equal(grad_value, [mask, mask])


def test_softmax_cross_entropy_v2_passes_a_gradient_to_the_labels_and_v1_does_not():
    logits_value = np.array([[2.0, -1.0, 0.5], [0.0, 3.0, -2.0]])
    labels_value = np.array([[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]])
    logits = df.constant(logits_value)
    labels = df.constant(labels_value)
    v1 = df.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = df.nn.softmax_cross_entropy_with_logits_v2(labels, logits)
    assert df.gradients(df.reduce_sum(v1), [labels]) == [None]
    (to_labels,) = df.gradients(df.reduce_sum(v2), [labels])
    with df.Session() as sess:
        loss_v1, loss_v2, grad = sess.run([v1, v2, to_labels])
    np.testing.assert_array_equal(loss_v1, loss_v2)
    shifted = logits_value - logits_value.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(grad, -log_softmax, rtol=1e-12)

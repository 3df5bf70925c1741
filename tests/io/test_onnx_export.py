"""`df.onnx.export`: a graph's fetches as an ONNX model that onnxruntime runs with the results
the Session gives.

Every model is checked with ``onnx.checker.check_model`` and run in onnxruntime on the same
feeds as the Session; the results must agree (to float rounding).  The conds must arrive as
``If`` nodes and the loops as ``Loop`` nodes, nested ones inside their parents' subgraphs.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dataflow as df
from dataflow.io.onnx import control_flow  # the analysis needs no onnx

onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(26)


def _run_onnx(model, feeds: dict) -> list:
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # leave out onnxruntime's notes on unused initializers
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, feeds)


def _export_and_compare(fetches, feed_dict, tmp_path, session=None, opset=None, atol=1e-5):
    """Exports ``fetches`` (fed by the placeholders of ``feed_dict``) to a file, checks and
    loads it back, runs it in onnxruntime and compares with the Session; returns the model."""
    fetch_list = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
    own_session = session is None
    session = session or df.Session()
    try:
        expected = session.run(fetch_list, feed_dict)
        path = tmp_path / "model.onnx"
        kwargs = {} if opset is None else {"opset": opset}
        df.onnx.export(fetch_list, list(feed_dict), str(path), session=session, **kwargs)
    finally:
        if own_session:
            session.close()
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    names = [t.op.name if t.value_index == 0 else t.name for t in feed_dict]
    got = _run_onnx(model, {n: np.asarray(v) for n, v in zip(names, feed_dict.values())})
    assert len(got) == len(expected)
    for fetch, want, have in zip(fetch_list, expected, got):
        want = np.asarray(want)
        assert have.dtype == want.dtype, fetch.name
        assert have.shape == want.shape, fetch.name
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=atol, err_msg=fetch.name)
    return model


def _node_types(graph) -> list[str]:
    """The op types of a graph's nodes and of its subgraphs' nodes, depth first."""
    types = []
    for node in graph.node:
        types.append(node.op_type)
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                types.extend(_node_types(attribute.g))
    return types


def _top_node(model, op_type: str):
    return next(node for node in model.graph.node if node.op_type == op_type)


def _subgraph(node, name: str):
    return next(a.g for a in node.attribute if a.name == name)


def _floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# -- models with variables ----------------------------------------------------------------------
def test_an_mlp_exports_its_variables_as_initializers_and_a_symbolic_batch(tmp_path):
    x = df.placeholder(df.float32, [None, 4], name="x")
    w1 = df.Variable(_floats(4, 8), name="w1")
    b1 = df.Variable(_floats(8), name="b1")
    w2 = df.Variable(_floats(8, 3), name="w2")
    hidden = df.nn.relu(df.nn.bias_add(df.matmul(x, w1), b1))
    probabilities = df.nn.softmax(df.matmul(hidden, w2))
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for batch in (1, 5):
            model = _export_and_compare(probabilities, {x: _floats(batch, 4)}, tmp_path, session)
    assert {t.name for t in model.graph.initializer} == {"w1", "b1", "w2"}
    (graph_input,) = model.graph.input
    batch_dim, width = graph_input.type.tensor_type.shape.dim
    assert batch_dim.dim_param and not batch_dim.HasField("dim_value")
    assert width.dim_value == 4
    assert [o.name for o in model.graph.output] == ["Softmax"]


def test_a_layers_cnn_classifier_exports_whole(tmp_path):
    images = df.placeholder(df.float32, [None, 12, 12, 1], name="images")
    h = df.layers.conv2d(images, 4, 5, padding="same", activation=df.nn.relu)
    h = df.layers.batch_normalization(h, training=False)
    h = df.layers.max_pooling2d(h, 2, 2)
    h = df.layers.conv2d(h, 8, 3, strides=2, activation=df.nn.relu)
    h = df.layers.average_pooling2d(h, 2, 2, padding="same")
    h = df.layers.dropout(df.layers.flatten(h), 0.5, training=False)
    logits = df.layers.dense(df.layers.dense(h, 16, activation=df.nn.relu), 10)
    fetches = [df.nn.softmax(logits), df.argmax(logits, 1)]
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        model = _export_and_compare(fetches, {images: _floats(3, 12, 12, 1)}, tmp_path, session)
    assert {"Conv", "BatchNormalization", "MaxPool", "AveragePool", "MatMul"} <= set(
        _node_types(model.graph)
    )


def test_a_frozen_graph_exports_without_a_session(tmp_path):
    x = df.placeholder(df.float32, [2, 3], name="x")
    w = df.Variable(_floats(3, 3), name="w")
    df.tanh(df.matmul(x, w), name="y")
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        frozen = df.graph_util.convert_variables_to_constants(session, session.graph, ["y"])
    x_value = _floats(2, 3)
    with frozen.as_default():
        _export_and_compare(
            frozen.get_tensor_by_name("y:0"),
            {frozen.get_tensor_by_name("x:0"): x_value},
            tmp_path,
        )


def test_a_variable_read_without_a_session_is_an_error_saying_what_to_do():
    x = df.placeholder(df.float32, [2], name="x")
    w = df.Variable(np.ones(2, np.float32), name="weights")
    with pytest.raises(df.onnx.OnnxExportError, match="variable 'weights': pass session="):
        df.onnx.export(x * w, [x])


# -- op families --------------------------------------------------------------------------------
def test_elementwise_math_comparisons_and_logic(tmp_path):
    x = df.placeholder(df.float32, [3, 4], name="x")
    y = df.placeholder(df.float32, [4], name="y")
    positive = df.abs(x) + 0.5
    fetches = [
        x + y,
        x - y,
        x * y,
        x / y,
        df.maximum(x, y),
        df.minimum(x, y),
        df.pow(positive, 1.5),
        df.squared_difference(x, y),
        df.square(x),
        df.sqrt(positive),
        df.rsqrt(positive),
        df.log(positive),
        df.exp(x),
        df.math.log1p(positive),
        df.math.expm1(x),
        df.negative(x),
        df.sign(x),
        df.floor(x),
        df.ceil(x),
        df.reciprocal(positive),
        df.sigmoid(x),
        df.tanh(x),
        df.nn.relu(x),
        df.nn.relu6(x * 4.0),
        df.nn.leaky_relu(x, 0.1),
        df.nn.elu(x),
        df.nn.selu(x),
        df.nn.softplus(x),
        df.nn.softmax(x, axis=0),
        df.nn.log_softmax(x),
        df.math.erf(x),
        df.sin(x),
        df.cos(x),
        df.add_n([x, x, x]),
        df.clip_by_value(x, -0.5, y),
        df.floordiv(x, 0.7),
        df.floormod(x, 0.7),
        df.nn.l2_loss(x),
        df.identity(x),
        df.stop_gradient(x),
        df.equal(x, y),
        df.not_equal(x, y),
        df.less(x, y),
        df.less_equal(x, y),
        df.greater(x, y),
        df.greater_equal(x, y),
        df.logical_and(x > 0, y > 0),
        df.logical_or(x > 0, y > 0),
        df.logical_not(x > 0),
        df.math.logical_xor(x > 0, y > 0),
        df.where_v2(x > y, x, y),
        df.where(df.constant([True, False, True]), x, -x),  # TF1 Select picks rows
        df.cast(x * 10.0, df.int32),
        df.cast(x, df.bool),
    ]
    _export_and_compare(fetches, {x: _floats(3, 4), y: _floats(4)}, tmp_path)


def test_integer_division_floors_as_tensorflow_does(tmp_path):
    a = df.placeholder(df.int32, [6], name="a")
    b = df.placeholder(df.int32, [6], name="b")
    fetches = [df.floordiv(a, b), df.floormod(a, b), a + b * 2]
    values = {
        a: np.array([7, -7, 7, -7, 6, -6], np.int32),
        b: np.array([2, 2, -2, -2, 3, 3], np.int32),
    }
    _export_and_compare(fetches, values, tmp_path)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_nhwc_convolutions_pools_and_batch_norm(tmp_path, padding, stride):
    image = df.placeholder(df.float32, [None, 7, 7, 3], name="image")
    kernel = df.constant(_floats(3, 3, 3, 4))
    strides = [1, stride, stride, 1]
    conv = df.nn.conv2d(image, kernel, strides, padding)
    depthwise = df.nn.depthwise_conv2d(image, df.constant(_floats(3, 3, 3, 2)), strides, padding)
    computed_kernel = df.nn.conv2d(image, df.exp(kernel) - 1.0, strides, padding)
    computed_depthwise = df.nn.depthwise_conv2d(
        image, df.constant(_floats(3, 3, 3, 2)) * 2.0, strides, padding
    )
    normed, _, _ = df.nn.fused_batch_norm(
        conv,
        df.constant(_floats(4)),
        df.constant(_floats(4)),
        mean=df.constant(_floats(4)),
        variance=df.constant(np.abs(_floats(4)) + 0.1),
        is_training=False,
    )
    pools = [
        df.nn.max_pool(conv, [1, 3, 3, 1], strides, padding),
        df.nn.avg_pool(conv, [1, 3, 3, 1], strides, padding),  # SAME: padding not in the mean
    ]
    fetches = [conv, depthwise, computed_kernel, computed_depthwise, normed] + pools
    _export_and_compare(fetches, {image: _floats(2, 7, 7, 3)}, tmp_path)


def test_channels_first_and_three_dimensional_convolutions_and_pools(tmp_path):
    x = df.placeholder(df.float32, [2, 3, 6, 6], name="x")
    volume = df.placeholder(df.float32, [1, 4, 4, 4, 2], name="volume")
    fetches = [
        df.nn.conv2d(x, df.constant(_floats(3, 3, 3, 4)), [1, 1, 2, 2], "SAME", data_format="NCHW"),
        df.nn.bias_add(x, df.constant(_floats(3)), data_format="NCHW"),
        df.nn.max_pool(x, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW"),
        df.nn.conv3d(volume, df.constant(_floats(2, 2, 2, 2, 3)), [1, 1, 1, 1, 1], "SAME"),
        df.nn.max_pool3d(volume, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
        df.nn.avg_pool3d(volume, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
    ]
    model = _export_and_compare(
        fetches, {x: _floats(2, 3, 6, 6), volume: _floats(1, 4, 4, 4, 2)}, tmp_path
    )
    first_conv = next(node for node in model.graph.node if node.op_type == "Conv")
    assert first_conv.input[0] == "x"  # NCHW already: no transpose before it


def test_more_elementwise_ops_and_a_default_placeholder(tmp_path):
    x = df.placeholder(df.float32, [5], name="x")
    i = df.placeholder(df.int32, [4], name="i")
    fetches = [
        df.asin(x * 0.1),
        df.acos(x * 0.1),
        df.atan(x),
        df.sinh(x),
        df.cosh(x),
        df.tan(x),
        df.nn.softsign(x),
        df.round(x * 3.0),  # halves to even, as both do
        df.math.is_nan(df.log(x)),
        df.math.is_inf(df.math.reciprocal(x - x)),
        df.bitwise.bitwise_and(i, 6),
        df.bitwise.bitwise_or(i, 6),
        df.bitwise.bitwise_xor(i, 6),
        df.div(i, 3),  # floors, as TensorFlow's Div on integers
        df.placeholder_with_default(df.ones([2]), [2]) * 2.0,  # not fed: its default
    ]
    values = {
        x: np.array([-1.5, -0.5, 0.5, 1.5, 2.5], np.float32),
        i: np.array([-7, -1, 5, 12], np.int32),
    }
    _export_and_compare(fetches, values, tmp_path, opset=18)  # bitwise ops: from opset 18
    with pytest.raises(df.onnx.OnnxExportError, match="BitwiseAnd.*opset 18"):
        df.onnx.export(fetches[10], [i], opset=17)


def test_a_symmetric_mirror_pad_is_refused_with_the_reason():
    x = df.placeholder(df.float32, [3, 3], name="x")
    with pytest.raises(df.onnx.OnnxExportError, match="MirrorPad.*SYMMETRIC"):
        df.onnx.export(df.pad(x, [[1, 1], [1, 1]], mode="SYMMETRIC"), [x])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_a_training_batch_norm_uses_the_batchs_statistics(tmp_path, data_format):
    x = df.placeholder(df.float32, [None, 3, 4, 5], name="x")
    channels = 5 if data_format == "NHWC" else 3
    scale, offset = df.constant(_floats(channels)), df.constant(_floats(channels))
    fetches = list(
        df.nn.fused_batch_norm(x, scale, offset, data_format=data_format, is_training=True)
    )
    blended = df.nn.fused_batch_norm(
        x,
        scale,
        offset,
        mean=df.constant(_floats(channels)),
        variance=df.constant(np.abs(_floats(channels))),
        data_format=data_format,
        is_training=True,
        exponential_avg_factor=0.25,
    )
    fetches += list(blended)
    _export_and_compare(fetches, {x: _floats(2, 3, 4, 5)}, tmp_path)


def test_a_layers_batch_norm_with_a_training_switch_exports_both_sides(tmp_path):
    x = df.placeholder(df.float32, [None, 4, 4, 3], name="x")
    training = df.placeholder_with_default(False, [], name="training")
    y = df.layers.batch_normalization(x, training=training)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for mode in (False, True):
            _export_and_compare(
                y, {x: _floats(2, 4, 4, 3), training: np.bool_(mode)}, tmp_path, session
            )


def test_shapes_pieces_and_gathers(tmp_path):
    x = df.placeholder(df.float32, [2, 3, 4], name="x")
    n = df.placeholder(df.int32, [], name="n")
    flat = df.reshape(x, [-1, 4])
    fetches = [
        flat,
        df.reshape(x, df.stack([n, -1])),
        df.transpose(x, [2, 0, 1]),
        df.concat([x, x * 2.0], axis=-1),
        *df.split(x, 2, axis=2),
        *df.split(x, [1, -1], axis=1),
        df.slice(x, [0, 1, 0], [-1, 2, 3]),
        df.slice(x, df.stack([0, n, 0]), [1, -1, 2]),
        x[:, 1:, ::2],
        x[1],
        x[..., -1],
        x[:, df.newaxis, ::-1],
        x[::-1, 2:0:-1, 1:-1],
        x[-1, ..., df.newaxis],
        df.gather(flat, [5, 0, 2]),
        df.gather(x, df.constant([[3, 0], [1, 1]]), axis=2),
        df.stack([flat, flat], axis=1),
        *df.unstack(x, axis=1),
        df.expand_dims(x, -1),
        df.squeeze(df.expand_dims(x, 0), [0]),
        df.tile(x, [1, 2, 1]),
        df.pad(x, [[0, 1], [1, 0], [2, 2]]),
        df.pad(x, [[0, 0], [1, 1], [2, 1]], mode="REFLECT"),
        df.shape(x),
        df.size(x),
        df.zeros_like(x),
        df.ones_like(x),
        df.fill(df.stack([n, 2]), 3.5),
        df.range(0, n * 3, 2),
        df.one_hot(df.constant([0, 2, 1]), 3),
        df.cumsum(x, axis=1),
        df.cumsum(x, axis=2, exclusive=True, reverse=True),
    ]
    _export_and_compare(fetches, {x: _floats(2, 3, 4), n: np.int32(1)}, tmp_path)


def test_image_ops_top_k_scatters_and_the_composites_built_from_mapped_ops(tmp_path):
    x = df.placeholder(df.float32, [2, 4, 4, 3], name="x")
    fetches = [
        *df.nn.top_k(x, 2),
        df.gather_nd(x, [[0, 1], [1, 2]]),
        df.scatter_nd([[0], [2], [0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [4, 2]),
        df.reverse(x, [1, 2]),
        df.math.is_finite(df.math.log(x)),
        df.rank(x),
        df.nn.lrn(x, 2, 1.0, 0.5, 0.75),
        df.where(x > 0.5),
        df.image.resize_bilinear(x, [7, 6]),
        df.image.resize_nearest_neighbor(x, [8, 6], align_corners=True),
        df.nn.depth_to_space(df.concat([x, x, x, x], -1), 2),
        df.nn.space_to_depth(x, 2),
        df.broadcast_to(x[0:1], [3, 4, 4, 3]),
        df.math.reduce_logsumexp(x, 1),
    ]
    _export_and_compare(fetches, {x: _floats(2, 4, 4, 3)}, tmp_path)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_transposed_convolutions(tmp_path, padding):
    x = df.placeholder(df.float32, [2, 4, 4, 3], name="x")
    height = 8 if padding == "SAME" else 9
    fetches = [
        df.nn.conv2d_transpose(
            x, df.constant(_floats(3, 3, 2, 3)), [2, height, height, 2], [1, 2, 2, 1], padding
        ),
        df.nn.conv2d_transpose(
            x, df.constant(_floats(2, 2, 5, 3)), [2, 4, 4, 5], [1, 1, 1, 1], "SAME"
        ),
    ]
    _export_and_compare(fetches, {x: _floats(2, 4, 4, 3)}, tmp_path)


@pytest.mark.parametrize("opset", [13, 17, 18])
def test_reductions_in_each_opset_form(tmp_path, opset):
    x = df.placeholder(df.float32, [3, 4, 5], name="x")
    fetches = [
        df.reduce_sum(x),
        df.reduce_sum(x, axis=[0, 2], keepdims=True),
        df.reduce_mean(x, axis=1),
        df.reduce_max(x, axis=-1),
        df.reduce_min(x, axis=0),
        df.reduce_prod(x, axis=2),
        df.reduce_all(x > -1.0, axis=1),
        df.reduce_any(x > 1.0),
        df.argmax(x, axis=1),
        df.argmin(x, axis=2, output_type=df.int32),
        *df.split(x, 5, axis=2),
    ]
    model = _export_and_compare(fetches, {x: _floats(3, 4, 5)}, tmp_path, opset=opset)
    assert model.opset_import[0].version == opset


@pytest.mark.parametrize("opset", [13, 18])
def test_an_even_split_of_an_axis_of_unknown_size_exports(tmp_path, opset):
    """A frozen LSTM's gates are split along an axis the graph does not know the size of:
    ONNX's Split makes equal parts without sizes, as TensorFlow's does."""
    x = df.placeholder(df.float32, [None, None], name="x")
    parts = df.split(x, 4, axis=1)
    _export_and_compare(parts, {x: _floats(3, 8)}, tmp_path, opset=opset)


def test_matrix_products(tmp_path):
    a = df.placeholder(df.float32, [3, 4], name="a")
    batch = df.placeholder(df.float32, [2, 3, 4], name="batch")
    fetches = [
        df.matmul(a, a, transpose_b=True),
        df.matmul(a, a, transpose_a=True),
        df.matmul(batch, batch, adjoint_b=True),
        df.einsum("bij,kj->bik", batch, a),
    ]
    _export_and_compare(fetches, {a: _floats(3, 4), batch: _floats(2, 3, 4)}, tmp_path)


def test_a_chain_of_ops_deeper_than_pythons_recursion_limit_exports(tmp_path):
    x = df.placeholder(df.float32, [3], name="x")
    y = x
    for step in range(sys.getrecursionlimit() + 200):
        y = df.tanh(y) if step % 2 else y + 0.001
    _export_and_compare(y, {x: _floats(3)}, tmp_path)


# -- control flow --------------------------------------------------------------------------------
def test_a_cond_becomes_one_if_with_both_branches(tmp_path):
    x = df.placeholder(df.float32, [3], name="x")
    outside = df.exp(x)

    def true_fn():
        return outside * 2.0, df.constant(1), x  # a captured tensor returned as it is

    def false_fn():
        return outside - 1.0, df.constant(2), -x

    results = df.cond(df.reduce_sum(x) > 0, true_fn, false_fn)
    for value in (np.array([1, 2, 3], np.float32), np.array([-1, -2, 0], np.float32)):
        model = _export_and_compare(list(results), {x: value}, tmp_path)
    assert _node_types(model.graph).count("If") == 1
    if_node = _top_node(model, "If")
    assert len(if_node.output) == 3
    # The branch reads Exp from the enclosing graph: it is computed once, outside the If.
    assert [n.op_type for n in model.graph.node].count("Exp") == 1


def test_a_while_loop_becomes_a_loop_carrying_its_variables(tmp_path):
    x = df.placeholder(df.float32, [2], name="x")
    limit = df.placeholder(df.int32, [], name="limit")
    scale = df.exp(x)  # a loop invariant, read by the body from the enclosing graph

    def body(i, total, product):
        return i + 1, total + df.cast(i, df.float32) * scale, product * 1.5

    results = df.while_loop(lambda i, t, p: i < limit, body, [df.constant(0), x, x])
    for trips in (0, 1, 4):  # 0: the body never runs and the results are the initial values
        model = _export_and_compare(
            list(results), {x: np.array([1.0, -2.0], np.float32), limit: np.int32(trips)}, tmp_path
        )
    loop = _top_node(model, "Loop")
    assert loop.input[0] == ""  # no trip count: the condition alone ends the loop
    body_graph = _subgraph(loop, "body")
    assert len(body_graph.input) == 2 + 3 and len(body_graph.output) == 1 + 3
    assert body_graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.INT64
    assert body_graph.input[1].type.tensor_type.elem_type == onnx.TensorProto.BOOL


def test_maximum_iterations_becomes_the_loops_trip_count(tmp_path):
    x = df.placeholder(df.float32, [], name="x")
    result = df.while_loop(lambda v: v < 1000.0, lambda v: v * 2.0, [x], maximum_iterations=3)
    for start in (1.0, 600.0, 5000.0):
        model = _export_and_compare(result, {x: np.float32(start)}, tmp_path)
    loop = _top_node(model, "Loop")
    assert loop.input[0] != ""


def test_only_the_loop_variables_the_fetches_need_are_carried(tmp_path):
    x = df.placeholder(df.float32, [], name="x")
    i, needed, _unused = df.while_loop(
        lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a + 1.0, b * 2.0), [0, x, x]
    )
    model = _export_and_compare(needed, {x: np.float32(0.5)}, tmp_path)
    assert len(_top_node(model, "Loop").output) == 2  # the counter and `needed`


def test_a_cond_inside_a_loop(tmp_path):
    x = df.placeholder(df.float32, [3], name="x")

    def body(i, v):
        v = df.cond(df.equal(i % 2, 0), lambda: v + 1.0, lambda: v * x)
        return i + 1, v

    result = df.while_loop(lambda i, v: i < 5, body, [0, x])
    model = _export_and_compare(list(result), {x: np.array([1, 2, -3], np.float32)}, tmp_path)
    body_graph = _subgraph(_top_node(model, "Loop"), "body")
    assert "If" in [n.op_type for n in body_graph.node]


def test_a_loop_inside_a_loop(tmp_path):
    n = df.placeholder(df.int32, [], name="n")

    def outer_body(i, total):
        def inner_body(j, t):
            return j + 1, t + i * j

        _, total = df.while_loop(lambda j, t: j < i, inner_body, [0, total])
        return i + 1, total

    result = df.while_loop(lambda i, t: i < n, outer_body, [0, 0])
    for trips in (0, 1, 5):
        model = _export_and_compare(list(result), {n: np.int32(trips)}, tmp_path)
    outer = _top_node(model, "Loop")
    assert "Loop" in [node.op_type for node in _subgraph(outer, "body").node]


def test_a_loop_inside_a_cond_and_a_cond_inside_a_cond(tmp_path):
    x = df.placeholder(df.float32, [], name="x")

    def true_fn():
        return df.while_loop(lambda v: v < 100.0, lambda v: v * 3.0, [x])

    def false_fn():
        return df.cond(x < -5.0, lambda: x * x, lambda: x - 1.0)

    result = df.cond(x > 0, true_fn, false_fn)
    for value in (2.0, -1.0, -10.0, 500.0):
        model = _export_and_compare(result, {x: np.float32(value)}, tmp_path)
    if_node = _top_node(model, "If")
    assert "Loop" in _node_types(_subgraph(if_node, "then_branch"))
    assert "If" in _node_types(_subgraph(if_node, "else_branch"))


def test_control_flow_v2s_functional_if_becomes_an_if(tmp_path):
    x = df.placeholder(df.float32, [3], name="x")
    outside = df.exp(x)
    df.enable_control_flow_v2()
    try:
        nested = df.cond(
            df.reduce_sum(x) > 0,
            lambda: outside + 1.0,
            lambda: df.cond(x[0] > -1.0, lambda: x * 3.0, lambda: -x),
        )
        _, looped = df.while_loop(
            lambda i, v: i < 3,
            lambda i, v: (i + 1, df.cond(v[0] > 2.0, lambda: v, lambda: v * 2.0)),
            [0, x],
        )
    finally:
        df.disable_control_flow_v2()
    assert "If" in [op.type for op in df.get_default_graph().get_operations()]
    for value in ([1, 2, 3], [-1, -2, 0.5], [-5, 0, 0]):
        model = _export_and_compare([nested, looped], {x: np.array(value, np.float32)}, tmp_path)
    assert _node_types(model.graph).count("If") == 3


def test_a_loop_with_a_variable_read_inside_its_body(tmp_path):
    x = df.placeholder(df.float32, [2, 2], name="x")
    w = df.Variable(_floats(2, 2), name="w")
    result = df.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, df.matmul(a, w)), [0, x])
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        model = _export_and_compare(result[1], {x: _floats(2, 2)}, tmp_path, session)
    assert [t.name for t in model.graph.initializer].count("w") == 1


def test_a_graph_loaded_from_a_dfg_file_exports_its_control_flow(tmp_path, round_trip):
    x = df.placeholder(df.float32, [], name="x")
    looped = df.while_loop(lambda v: v < 50.0, lambda v: v * 2.0, [x], name="grow")
    df.cond(looped > 60.0, lambda: looped - 60.0, lambda: looped, name="trim")
    loaded = round_trip(df.get_default_graph())
    with loaded.as_default():
        _export_and_compare(
            loaded.get_tensor_by_name("trim/Merge:0"),
            {loaded.get_tensor_by_name("x:0"): np.float32(3.0)},
            tmp_path,
        )


def test_a_loop_variable_that_grows_keeps_a_relaxed_shape(tmp_path):
    x = df.placeholder(df.float32, [None], name="x")
    _, grown = df.while_loop(
        lambda i, v: i < 3,
        lambda i, v: (i + 1, df.concat([v, v * 2.0], 0)),
        [0, x],
        shape_invariants=[df.TensorShape([]), df.TensorShape([None])],
    )
    _export_and_compare(grown, {x: np.array([1.0, 2.0], np.float32)}, tmp_path)


def test_switch_case_and_case_become_chains_of_ifs(tmp_path):
    x = df.placeholder(df.float32, [2], name="x")
    k = df.placeholder(df.int32, [], name="k")
    switched = df.switch_case(k, [lambda: x * 1.0, lambda: x * 2.0, lambda: x * 3.0])
    cased = df.case([(k > 1, lambda: x + 10.0), (k > 0, lambda: x + 5.0)], default=lambda: x)
    for index in (0, 1, 2, 7):  # out of range: switch_case's last branch, as TensorFlow
        model = _export_and_compare(
            [switched, cased], {x: np.array([1.0, 2.0], np.float32), k: np.int32(index)}, tmp_path
        )
    assert "If" in _node_types(model.graph)


def test_a_traced_function_graph_exports(tmp_path):
    @df.function
    def double_if_positive(a):
        return df.cond(df.reduce_sum(a) > 0, lambda: a * 2.0, lambda: a)

    concrete = double_if_positive.get_concrete_function(df.TensorSpec([None], df.float32))
    with concrete.graph.as_default():
        for value in ([1.0, 2.0], [-3.0]):
            _export_and_compare(
                concrete.outputs, {concrete.inputs[0]: np.array(value, np.float32)}, tmp_path
            )


def test_feeds_and_fetches_given_as_dicts_name_the_models_inputs_and_outputs():
    x = df.placeholder(df.float32, [2], name="x")
    y = df.placeholder(df.float32, [2], name="y")
    model = df.onnx.export({"total": x + y, "x_again": x}, {"first": x, "second": y})
    assert [i.name for i in model.graph.input] == ["first", "second"]
    assert [o.name for o in model.graph.output] == ["total", "x_again"]
    one, two = np.array([1.0, 2.0], np.float32), np.array([10.0, 20.0], np.float32)
    total, again = _run_onnx(model, {"first": one, "second": two})
    np.testing.assert_array_equal(total, one + two)
    np.testing.assert_array_equal(again, one)


def test_nhwc_convolutions_sit_between_transposes_to_onnxs_nchw():
    image = df.placeholder(df.float32, [1, 5, 5, 2], name="image")
    conv = df.nn.conv2d(image, df.constant(_floats(3, 3, 2, 4)), [1, 1, 1, 1], "SAME")
    model = df.onnx.export(conv, [image])
    assert [node.op_type for node in model.graph.node] == [
        "Transpose",
        "Conv",
        "Transpose",
        "Identity",
    ]
    (kernel,) = model.graph.initializer  # a constant filter is stored as OIHW
    assert list(kernel.dims) == [4, 2, 3, 3]
    assert [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim] == [1, 5, 5, 4]


def test_map_fn_scan_and_foldl_carry_their_tensor_arrays_as_sequences(tmp_path):
    x = df.placeholder(df.float32, [None, 3], name="x")
    fetches = [
        df.map_fn(lambda row: row * 2.0, x),
        df.scan(lambda total, row: total + row, x),
        df.foldl(lambda product, row: product * row, x, initializer=df.ones([3])),
    ]
    for rows in (4, 1):
        model = _export_and_compare(fetches, {x: _floats(rows, 3)}, tmp_path)
    assert "SequenceInsert" in _node_types(model.graph)
    body = _subgraph(_top_node(model, "Loop"), "body")
    assert any(i.type.HasField("sequence_type") for i in body.input)


def test_a_map_fn_over_no_rows_stacks_to_an_empty_result(tmp_path):
    x = df.placeholder(df.float32, [None, 3], name="x")
    _export_and_compare(df.map_fn(lambda row: row + 1.0, x), {x: _floats(0, 3)}, tmp_path)


def test_a_dynamic_rnn_lstm_exports_with_its_weights(tmp_path):
    sequence = df.placeholder(df.float32, [2, 5, 3], name="sequence")
    cell = df.nn.rnn_cell.LSTMCell(4)
    outputs, state = df.nn.dynamic_rnn(cell, sequence, dtype=df.float32)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        _export_and_compare([outputs, state.h], {sequence: _floats(2, 5, 3)}, tmp_path, session)


def test_tensor_arrays_need_opset_14():
    x = df.placeholder(df.float32, [None, 3], name="x")
    with pytest.raises(df.onnx.OnnxExportError, match="opset 14"):
        df.onnx.export(df.map_fn(lambda row: row * 2.0, x), [x], opset=13)


def test_a_graph_imported_from_a_graph_def_exports_its_loops_and_conds(tmp_path):
    pytest.importorskip("tensorboardX")  # GraphDef's protos
    built = df.Graph()
    with built.as_default():
        x = df.placeholder(df.float32, [], name="x")

        def body(i, v):
            v = df.cond(v > 10.0, lambda: v + 1.0, lambda: v * 3.0)
            _, w = df.while_loop(lambda j, w: j < i, lambda j, w: (j + 1, w + 0.5), [0, v])
            return i + 1, w

        result = df.while_loop(lambda i, v: i < 4, body, [0, x], name="grow")
        df.cond(result[1] > 60.0, lambda: result[1] - 60.0, lambda: result[1], name="trim")
    imported = df.Graph()
    with imported.as_default():
        df.import_graph_def(df.io.export_graph_def(built), name="")
    # The import keeps no record of the conds and loops: the exporter finds them in the ops.
    assert not imported.get_collection(df.GraphKeys.WHILE_CONTEXT)
    fetch = imported.get_tensor_by_name("trim/Merge:0")
    feed = imported.get_tensor_by_name("x:0")
    with imported.as_default():
        with pytest.raises(df.onnx.OnnxExportError, match="'trim/Merge' have no known rank"):
            df.onnx.export(fetch, [feed])
        fetch.set_shape([])
        for value in (0.5, 2.0, 30.0):
            model = _export_and_compare(fetch, {feed: np.float32(value)}, tmp_path)
    assert _node_types(model.graph).count("Loop") == 2


TF_DATA = pathlib.Path(__file__).parent.parent / "summary" / "data"


def _import_frozen(name: str) -> df.Graph:
    """A graph TensorFlow froze (tests/summary/data/make_*.py made it), imported here."""
    pytest.importorskip("tensorboardX")  # GraphDef's protos
    graph_def = df.GraphDef()
    graph_def.ParseFromString((TF_DATA / name).read_bytes())
    graph = df.Graph()
    with graph.as_default():
        df.import_graph_def(graph_def, name="")
    return graph


def test_tensorflows_frozen_while_loop_with_a_cond_exports(tmp_path):
    graph = _import_frozen("tf1_while_cond.pb")
    out, x, n = (graph.get_tensor_by_name(name) for name in ("out:0", "x:0", "n:0"))
    out.set_shape([])  # the import cannot know the rank of a loop's result
    with graph.as_default():
        for x_value, trips in (([1.0, 2.0, 3.0], 4), ([0.0, -1.0, 0.5], 7), ([5.0, 5.0, 5.0], 0)):
            model = _export_and_compare(
                out, {x: np.array(x_value, np.float32), n: np.int32(trips)}, tmp_path
            )
    loop = _top_node(model, "Loop")
    assert "If" in [node.op_type for node in _subgraph(loop, "body").node]


def test_tensorflows_frozen_cnn_exports(tmp_path):
    graph = _import_frozen("tf1_cnn.pb")
    fetches = [graph.get_tensor_by_name(name) for name in ("probabilities:0", "label:0")]
    images = graph.get_tensor_by_name("images:0")
    batch = np.linspace(-1.0, 1.0, 2 * 8 * 8, dtype=np.float32).reshape(2, 8, 8, 1)
    with graph.as_default():
        _export_and_compare(fetches, {images: batch}, tmp_path)


def _same_context(record, found) -> bool:
    """Whether a context df.cond/df.while_loop recorded is the one the analysis found."""
    if record is None or found is None:
        return record is None and found is None
    if isinstance(found, control_flow.Loop):
        return record.frame_name == found.name and _same_context(record.outer_context, found.outer)
    return (
        getattr(record, "branch", None) == found.branch
        and record.pred is found.pred
        and _same_context(record.outer_context, found.outer)
    )


def test_the_analysis_finds_the_contexts_the_builders_record():
    x = df.placeholder(df.float32, [], name="x")

    def body(i, v):
        v = df.cond(v > 10.0, lambda: v + 1.0, lambda: df.constant(3.0) * v)
        _, w = df.while_loop(lambda j, w: j < i, lambda j, w: (j + 1, w + 0.5), [0, v])
        return i + 1, w

    looped = df.while_loop(lambda i, v: i < 4, body, [0, x])[1]
    df.cond(
        looped > 60.0,
        lambda: df.cond(x > 0, lambda: looped - 60.0, lambda: x),
        lambda: looped,
    )
    graph = df.get_default_graph()
    flow = control_flow.analyse(graph)
    assert not flow.problems
    for op in graph.get_operations():
        record = op._control_flow_context
        if op.type == "Switch" and getattr(record, "pred", None) is op.inputs[1]:
            found = flow.tensor_context(op.outputs[record.branch])  # a capture into a branch
        else:
            found = flow.op_context(op)
        assert _same_context(record, found), op.name
    assert len(flow.loops) == 2 and len([c for c in flow.conds.values() if c.merges]) == 3


# -- errors --------------------------------------------------------------------------------------
def test_every_op_without_a_mapping_is_named_at_once_with_its_line():
    x = df.placeholder(df.float32, [3, 3], name="x")
    inverse = df.matrix_inverse(x)  # line A
    determinant = df.linalg.det(x)  # line B
    lines = [_line_of("line A"), _line_of("line B")]
    with pytest.raises(df.onnx.OnnxExportError) as caught:
        df.onnx.export(inverse + determinant, [x])
    message = str(caught.value)
    assert "MatrixInverse" in message and "MatrixDeterminant" in message
    for line in lines:
        assert f"test_onnx_export.py:{line}" in message
    assert "2 op(s)" in message


def test_a_placeholder_not_fed_is_an_error_naming_it():
    x = df.placeholder(df.float32, [2], name="x")
    forgotten = df.placeholder(df.float32, [2], name="forgotten")
    with pytest.raises(df.onnx.OnnxExportError, match="Placeholder 'forgotten'.*add it to feeds"):
        df.onnx.export(x + forgotten, [x])


def test_a_feed_of_unknown_rank_is_refused_naming_it():
    anything = df.placeholder(df.float32, None, name="anything")
    with pytest.raises(df.onnx.OnnxExportError, match="'anything' have no known rank"):
        df.onnx.export(anything * 2.0, [anything])


def test_a_strided_slice_with_computed_bounds_is_refused_with_the_reason():
    x = df.placeholder(df.float32, [4], name="x")
    n = df.placeholder(df.int32, [], name="n")
    with pytest.raises(df.onnx.OnnxExportError, match="StridedSlice.*computed at run time"):
        df.onnx.export(x[n:], [x, n])


def test_an_opset_out_of_range_is_refused_at_the_callers_line():
    x = df.placeholder(df.float32, [2], name="x")
    with pytest.raises(df.onnx.OnnxExportError, match="opset") as caught:
        df.onnx.export(x * 2.0, [x], opset=9)  # the export call
    assert f"test_onnx_export.py:{_line_of('the export call')}" in str(caught.value)


def test_a_string_fetch_is_refused_naming_it():
    words = df.placeholder(df.string, [2], name="words")
    with pytest.raises(df.onnx.OnnxExportError, match="'words:0'.*string"):
        df.onnx.export(words, [words])


def test_fetches_that_are_not_tensors_are_refused():
    with pytest.raises(df.onnx.OnnxExportError, match="fetches holds 3"):
        df.onnx.export([3], [])
    with pytest.raises(df.onnx.OnnxExportError, match="fetches is empty"):
        df.onnx.export([], [])


def test_importing_dataflow_does_not_import_onnx():
    code = "import sys, dataflow; print('onnx' in sys.modules, 'onnxruntime' in sys.modules)"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.split() == ["False", "False"]


def _line_of(marker: str) -> int:
    with open(__file__, encoding="utf-8") as source:
        for number, line in enumerate(source, 1):
            if line.rstrip().endswith(f"# {marker}"):
                return number
    raise AssertionError(marker)

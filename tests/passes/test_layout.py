"""The layout pass: chains of NCHW convolutions, pools and elementwise ops run in NHWC with
transposes only at the chain's edges, and every value stays the same bit for bit."""

import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from passes_testing import run_both

import dataflow as df
from dataflow.passes import RewriterConfig, optimize, pipeline_for

LAYOUT = ["layout", "pruning"]
SENSITIVE = {"Conv2D", "MaxPool", "AvgPool", "BiasAdd", "Conv2DBackpropInput",
             "Conv2DBackpropFilter", "MaxPoolGrad", "FusedBatchNormV3"}  # fmt: skip


def _weights(*shape, seed=0):
    return df.constant(np.random.default_rng(seed).normal(0, 0.3, shape).astype(np.float32))


def _nchw_chain(x):
    y = df.nn.conv2d(x, _weights(3, 3, 3, 4), 1, "SAME", data_format="NCHW")
    y = df.nn.relu(df.nn.bias_add(y, _weights(4, seed=1), data_format="NCHW"))
    y = df.nn.max_pool(y, [1, 1, 2, 2], [1, 1, 2, 2], "SAME", data_format="NCHW")
    y = df.nn.conv2d(y, _weights(3, 3, 4, 2, seed=2), 1, "VALID", data_format="NCHW")
    return df.nn.avg_pool(df.tanh(y) * 2.0, [1, 1, 2, 2], [1, 1, 1, 1], "VALID", "NCHW")


def _image(*shape):
    return np.random.default_rng(5).normal(size=shape).astype(np.float32)


def _layout_ops(graph):
    return [op for op in graph.get_operations() if op.type in ("ToLayout", "Transpose")]


def test_a_chain_of_nchw_ops_runs_in_nhwc_with_one_transpose_at_each_edge(fresh_graph):
    x = df.placeholder(df.float32, [2, 3, 9, 9], name="x")
    y = _nchw_chain(x)
    item, reports = optimize(fresh_graph, [y], [x], LAYOUT)
    ops = item.graph.get_operations()
    assert {op.attrs.get("data_format") for op in ops if op.type in SENSITIVE} == {"NHWC"}
    edges = _layout_ops(item.graph)
    assert [(op.type, tuple(op.attrs["perm"])) for op in edges] == [
        ("ToLayout", (0, 2, 3, 1)),
        ("ToLayout", (0, 3, 1, 2)),
    ]
    assert edges[0].inputs[0].name == "x:0"
    assert item.fetches[0].name == y.name and item.fetches[0].shape.as_list() == [2, 2, 2, 2]
    assert reports[0].counts == {"ops run in NHWC": 5, "elementwise ops run in NHWC": 3}
    off, on = run_both(y, {x: _image(2, 3, 9, 9)}, ["layout"])
    assert_bitwise_equal(off, on)


def test_a_training_step_in_nchw_gives_the_same_bits_with_the_pass(fresh_graph):
    x = df.placeholder(df.float32, [2, 3, 9, 9], name="x")
    w = df.Variable(np.random.default_rng(0).normal(0, 0.3, (3, 3, 3, 4)).astype(np.float32))
    y = df.nn.conv2d(x, w, 1, "SAME", data_format="NCHW")
    y, _, _ = df.nn.fused_batch_norm(y, df.ones([4]), df.zeros([4]), data_format="NCHW")
    y = df.nn.max_pool(df.nn.relu(y), [1, 1, 3, 3], [1, 1, 2, 2], "SAME", data_format="NCHW")
    loss = df.reduce_mean(df.square(y))
    grads = df.gradients(loss, [x, w])
    item, _ = optimize(fresh_graph, [loss, *grads], [x], LAYOUT)
    assert len(_layout_ops(item.graph)) <= 6
    feed = {x: _image(2, 3, 9, 9)}
    off, on = run_both([loss, *grads], feed, ["layout"], setup=df.global_variables_initializer())
    for a, b in zip(off, on):
        assert_bitwise_equal(a, b)


def test_nhwc_graphs_are_left_alone(fresh_graph):
    x = df.placeholder(df.float32, [2, 9, 9, 3], name="x")
    y = df.nn.max_pool(df.nn.relu(df.nn.conv2d(x, _weights(3, 3, 3, 4), 1, "SAME")), 2, 2, "SAME")
    _, reports = optimize(fresh_graph, [y], [x], LAYOUT)
    assert reports[0].counts == {}


def test_an_nchw_bias_add_of_another_rank_than_4_is_left_alone(fresh_graph):
    x = df.placeholder(df.float32, [2, 3, 5], name="x")
    y = df.nn.relu(df.nn.bias_add(x, _weights(3), data_format="NCHW"))
    _, reports = optimize(fresh_graph, [y], [x], LAYOUT)
    assert reports[0].counts == {}
    off, on = run_both(y, {x: _image(2, 3, 5)}, ["layout"])
    assert_bitwise_equal(off, on)


def test_a_fetched_tensor_inside_the_chain_keeps_its_name_and_its_nchw_value(fresh_graph):
    x = df.placeholder(df.float32, [1, 3, 6, 6], name="x")
    hidden = df.nn.relu(df.nn.conv2d(x, _weights(3, 3, 3, 2), 1, "SAME", data_format="NCHW"))
    y = df.nn.max_pool(hidden, [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    off, on = run_both([hidden, y], {x: _image(1, 3, 6, 6)}, ["layout"])
    assert on[0].shape == (1, 2, 6, 6)
    for a, b in zip(off, on):
        assert_bitwise_equal(a, b)


def test_a_chain_in_a_while_loop_is_rewritten_and_gives_the_same_bits(fresh_graph):
    x = df.placeholder(df.float32, [1, 2, 6, 6], name="x")
    f = _weights(3, 3, 2, 2)

    def body(i, y):
        y = df.nn.conv2d(y, f, 1, "SAME", data_format="NCHW")
        return i + 1, df.nn.avg_pool(df.tanh(y), [1, 1, 3, 3], 1, "SAME", data_format="NCHW")

    _, y = df.while_loop(lambda i, y: i < 3, body, [0, x])
    (grad,) = df.gradients(df.reduce_sum(y), f)
    item, reports = optimize(fresh_graph, [y, grad], [x], LAYOUT)
    assert reports[0].counts["ops run in NHWC"] >= 4  # forward and backward ops in loops
    off, on = run_both([y, grad], {x: _image(1, 2, 6, 6)}, ["layout"])
    for a, b in zip(off, on):
        assert_bitwise_equal(a, b)


def test_the_rewriter_config_switch_turns_the_pass_off():
    assert "layout" in pipeline_for(None)
    off = df.passes.GraphOptions(
        rewrite_options=RewriterConfig(layout_optimizer=RewriterConfig.OFF)
    )
    assert "layout" not in pipeline_for(off)


def test_an_optimized_graph_saves_and_loads_with_its_layout_ops(fresh_graph, tmp_path):
    x = df.placeholder(df.float32, [2, 3, 9, 9], name="x")
    y = _nchw_chain(x)
    item, _ = optimize(fresh_graph, [y], [x], LAYOUT)
    df.io.save_graph(item.graph, tmp_path / "g.dfg")
    loaded = df.io.load_graph(tmp_path / "g.dfg")
    assert "ToLayout" in {op.type for op in loaded.get_operations()}
    feed = {"x:0": _image(2, 3, 9, 9)}
    results = []
    for graph in (fresh_graph, loaded):
        with df.Session(graph=graph) as sess:
            results.append(sess.run(y.name, feed))
    assert_bitwise_equal(*results)


@pytest.mark.parametrize("fetch_transposed", [False, True])
def test_a_users_transpose_to_nhwc_after_the_chain_cancels_the_edge(fresh_graph, fetch_transposed):
    x = df.placeholder(df.float32, [2, 3, 9, 9], name="x")
    y = df.transpose(_nchw_chain(x), [0, 2, 3, 1])
    flat = df.reshape(y, [2, -1])
    fetches = [flat, y] if fetch_transposed else [flat]
    item, _ = optimize(fresh_graph, fetches, [x], LAYOUT)
    assert [op.type for op in _layout_ops(item.graph)] == ["ToLayout"]  # the one into the chain
    off, on = run_both(fetches, {x: _image(2, 3, 9, 9)}, ["layout"])
    for a, b in zip(off, on):
        assert_bitwise_equal(a, b)

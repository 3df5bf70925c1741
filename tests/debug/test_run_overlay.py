"""``df.render(..., run_metadata=...)``: the graph picture with what one run did drawn on it."""

import re

import numpy as np
import pytest

import dataflow as df
from dataflow.render import graph_to_digraph


def run_with_metadata(fetches, feed_dict=None):
    metadata = df.RunMetadata()
    with df.Session() as sess:
        sess.run(fetches, feed_dict, run_metadata=metadata)
    return metadata


def node_line(source: str, name: str) -> str:
    """The DOT statement that declares node ``name``."""
    pattern = re.compile(rf'^\s*"?{re.escape(name)}"?\s*\[', re.MULTILINE)
    match = pattern.search(source)
    assert match, f"node {name!r} is not drawn"
    return source[match.start() : source.index("\n", match.start())]


def cluster_labels(source: str) -> list[str]:
    """The HTML labels of the boxes (loops and conds are drawn with a bold title)."""
    return re.findall(r"label=(<<b>.*?>) (?:penwidth|style)", source)


def branchy_loop():
    x = df.placeholder(df.float32, [], name="x")

    def body(i, v):
        doubled = df.multiply(v, 2.0, name="double")
        return i + 1, df.cond(
            x > 100.0,
            lambda: df.sqrt(doubled, name="huge_only"),
            lambda: df.add(doubled, 1.0, name="small_only"),
            name="pick",
        )

    _, out = df.while_loop(lambda i, v: i < 4, body, [df.constant(0), x], name="loop")
    return x, out


def test_ops_that_ran_show_their_total_time_and_how_often_they_fired(graph):
    x, out = branchy_loop()
    metadata = run_with_metadata(out, {x: 1.0})
    line = node_line(graph_to_digraph(out, run_metadata=metadata).source, "loop/double")
    assert "×4" in line and re.search(r"\d+(\.\d+)? (µs|ms|s)", line)
    assert "penwidth=" in line and "dashed" not in line and "dotted" not in line
    assert "ran 4×" in line and "loop[iter 0 of root]" in line  # the tooltip


def test_ops_of_an_untaken_branch_are_drawn_dead(graph):
    x, out = branchy_loop()
    metadata = run_with_metadata(out, {x: 1.0})
    source = graph_to_digraph(out, run_metadata=metadata).source
    dead = node_line(source, "loop/pick/huge_only")
    assert "dashed" in dead and ">dead<" in dead and "its kernel never ran" in dead
    taken = node_line(source, "loop/pick/small_only")
    assert "dashed" not in taken and "×4" in taken
    overlay = df.debug.RunOverlay(metadata)
    assert overlay.status("loop/pick/huge_only") == "dead"
    assert overlay.status("loop/pick/small_only") == "ran"


def test_ops_the_run_did_not_need_are_drawn_as_not_run(graph):
    x = df.placeholder(df.float32, [], name="x")
    used = df.add(x, 1.0, name="used")
    df.multiply(x, 3.0, name="unused")
    metadata = run_with_metadata(used, {x: 2.0})
    source = graph_to_digraph(graph, run_metadata=metadata).source
    unused = node_line(source, "unused")
    assert "dotted" in unused and ">not run<" in unused
    assert ">fed<" in node_line(source, "x")
    assert "not run" not in node_line(source, "used")


def test_each_loop_box_shows_its_iterations_and_how_often_the_body_ran(graph):
    n = df.placeholder(df.int32, [], name="n")
    counted = df.while_loop(lambda i: i < n, lambda i: i + 1, [df.constant(0)], name="count")
    never = df.while_loop(lambda i: i < 0, lambda i: i + 1, [df.constant(0)], name="never")
    metadata = run_with_metadata([counted, never], {n: 4})
    labels = cluster_labels(graph_to_digraph(graph, run_metadata=metadata).source)
    count_label = next(label for label in labels if "while_loop  count" in label)
    never_label = next(label for label in labels if "while_loop  never" in label)
    assert "5 iterations (body ran 4×)" in count_label
    assert "1 iteration (body ran 0×)" in never_label


def test_a_nested_loop_box_lists_the_iterations_of_each_instance(graph):
    def outer_body(i):
        inner = df.while_loop(lambda j: j < i, lambda j: j + 1, [df.constant(0)], name="inner")
        return i + 1 + 0 * inner

    out = df.while_loop(lambda i: i < 3, outer_body, [df.constant(0)], name="outer")
    metadata = run_with_metadata(out)
    labels = cluster_labels(graph_to_digraph(out, run_metadata=metadata).source)
    inner_label = next(label for label in labels if "while_loop  outer/inner" in label)
    # The outer loop's last iteration (predicate false) starts an instance of the inner loop
    # that only passes dead values through.
    assert "3 instances: 1, 2, 3 iterations; 1 more fired dead" in inner_label


def test_a_loop_that_did_not_run_says_so(graph):
    pred = df.placeholder(df.bool, [], name="pred")
    looped = df.cond(
        pred,
        lambda: df.while_loop(lambda i: i < 3, lambda i: i + 1, [df.constant(0)], name="maybe"),
        lambda: df.constant(-1),
    )
    metadata = run_with_metadata(looped, {pred: False})
    labels = cluster_labels(graph_to_digraph(looped, run_metadata=metadata).source)
    assert "fired dead: did not run" in next(label for label in labels if "maybe" in label)


def test_the_overlay_draws_the_same_nodes_edges_and_boxes(graph):
    x, out = branchy_loop()
    metadata = run_with_metadata(out, {x: 1.0})

    def skeleton(source):
        ids = re.findall(
            r'^\s*("(?:[^"\\]|\\.)*"|[^\s\[\]{}]+)\s*(?:->\s*("(?:[^"\\]|\\.)*"|\S+))?',
            source,
            re.MULTILINE,
        )
        return sorted(ids)

    plain = graph_to_digraph(out).source
    drawn = graph_to_digraph(out, run_metadata=metadata).source
    assert skeleton(plain) == skeleton(drawn)
    assert "not run" not in plain and "dead" not in plain


def test_a_collapsed_box_says_how_many_of_its_ops_ran(graph):
    x = df.placeholder(df.float32, [], name="x")
    with df.name_scope("block"):
        a = df.add(x, 1.0, name="a")
        df.multiply(x, 2.0, name="b")
    metadata = run_with_metadata(a, {x: 1.0})
    source = graph_to_digraph(graph, collapse_scopes=["block"], run_metadata=metadata).source
    assert re.search(r"\d+ of 4 ran", node_line(source, "[block]"))


def test_a_collapsed_loop_sums_up_its_ops_and_gives_its_iterations(graph):
    x, out = branchy_loop()
    metadata = run_with_metadata(out, {x: 1.0})
    overlay = df.debug.RunOverlay(metadata)
    source = graph_to_digraph(out, collapse_scopes=["loop"], run_metadata=metadata).source
    line = node_line(source, "[loop]")
    loop_ops = [op for op in df.get_default_graph().get_operations() if op.name.startswith("loop/")]
    ran = [op for op in loop_ops if overlay.status(op.name) == "ran"]
    dead = [op for op in loop_ops if overlay.status(op.name) == "dead"]
    assert ran and dead
    assert re.search(rf"{len(ran)} of \d+ ran \(\d+ firings\)", line)
    assert f"{len(dead)} fired dead" in line  # the untaken branch's ops
    assert "5 iterations (body ran 4×)" in line


def test_render_refuses_something_that_is_not_run_metadata(graph):
    with pytest.raises(TypeError, match="RunMetadata"):
        df.render(df.constant(1.0), run_metadata={"step_stats": []})


def test_render_writes_the_overlay_picture_with_a_legend(graph, tmp_path):
    x, out = branchy_loop()
    metadata = run_with_metadata(out, {x: 1.0})
    path = tmp_path / "run.png"
    digraph = df.render(out, path, run_metadata=metadata, legend=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "this run" in digraph.source
    assert np.frombuffer(path.read_bytes(), np.uint8).size > 1000


def test_ops_the_graph_passes_took_out_say_what_happened_to_them(graph):
    # The default passes fuse the elementwise chain into one kernel, which runs under the name
    # of the chain's last op, and fold the constant subexpression into one constant.
    x = df.placeholder(df.float64, [4096], name="x")
    scale = df.add(df.constant(1.5, df.float64, name="one_and_a_half"), 0.5, name="two")
    y = df.tanh(df.exp(df.multiply(x, scale, name="scaled"), name="grown"), name="squashed")
    metadata = run_with_metadata(y, {x: np.linspace(-1, 1, 4096)})
    assert metadata.rewritten_ops["grown"] == "fused (elementwise_fusion)"
    assert metadata.rewritten_ops["scaled"] == "fused (elementwise_fusion)"
    assert metadata.rewritten_ops["one_and_a_half"] == "folded (constant_folding)"
    (kernel,) = [s for s in metadata.step_stats if s.original_op_name == "squashed"]
    assert kernel.op_type == "FusedElementwise"
    source = graph_to_digraph(y, run_metadata=metadata).source
    assert "fused" in node_line(source, "grown") and "dotted" in node_line(source, "grown")
    assert "folded (constant_folding)" in node_line(source, "one_and_a_half")
    assert "as FusedElementwise" in node_line(source, "squashed")
    assert "as Const" in node_line(source, "two")  # the folded constant took its name


def test_a_hoisted_op_is_drawn_on_the_op_the_user_wrote(graph):
    x = df.placeholder(df.float64, [2048], name="x")

    def body(i, total):
        return i + 1, total + df.exp(x, name="invariant")  # depends on x alone: hoisted

    _, out = df.while_loop(
        lambda i, total: i < 3, body, [df.constant(0), df.zeros([2048], df.float64)], name="loop"
    )
    metadata = run_with_metadata(out, {x: np.zeros(2048)})
    (hoisted,) = [
        s
        for s in metadata.step_stats
        if s.original_op_name == "loop/invariant" and s.op_type == "Exp"
    ]
    assert hoisted.node_name != "loop/invariant" and hoisted.frame == "root"
    line = node_line(graph_to_digraph(out, run_metadata=metadata).source, "loop/invariant")
    assert "not run" not in line and "ran 1×" in line and "after the graph passes" in line

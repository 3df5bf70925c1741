"""Rendering placed and partitioned graphs: ops coloured by device, one box per device, and a
run's partition graphs drawn as one picture with each ``_Send`` joined to its ``_Recv``.

The DOT text is read back with `test_render`'s parser.
"""

import pytest
from drawing_engines import ENGINES
from placed_programs import partitioned_config
from test_render import _dot

import dataflow as df
from dataflow.render.digraph import _DEVICE_COLOURS, _NODE_STYLES

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}".format
BLUE, GREEN, ORANGE = (colours[2] for colours in _DEVICE_COLOURS[:3])


@pytest.fixture
def graph():
    g = df.Graph()
    with g.as_default():
        yield g


def _chain_on_three_devices():
    """a, x on CPU:0; b = a * x on CPU:1; c = b + a on CPU:2."""
    with df.device("/cpu:0"):
        a = df.constant(2.0, name="a")
        x = df.placeholder(df.float32, (), name="x")
    with df.device("/cpu:1"):
        b = df.multiply(a, x, name="b")
    with df.device("/cpu:2"):
        c = df.add(b, a, name="c")
    return x, c


def _partition_graphs(fetch, feed=None, cpus=3):
    config = partitioned_config(device_count={"CPU": cpus})
    metadata = df.RunMetadata()
    with df.Session(config=config) as sess:
        value = sess.run(
            fetch,
            feed,
            options=df.RunOptions(output_partition_graphs=True),
            run_metadata=metadata,
        )
    return value, metadata.partition_graphs


def _device_legend(dot):
    return sorted(
        dot.nodes[n]["label"]
        for n, clusters in dot.node_clusters.items()
        if "cluster_devices" in clusters
    )


# -- colours ---------------------------------------------------------------------------------------
def test_ops_take_the_colour_of_their_device_annotation(graph):
    _chain_on_three_devices()
    dot = _dot(graph)
    assert dot.node("a")["color"] == BLUE and dot.node("a")["fillcolor"] == _DEVICE_COLOURS[0][0]
    assert dot.node("b")["color"] == GREEN and dot.node("b")["fillcolor"] == _DEVICE_COLOURS[1][0]
    assert dot.node("c")["color"] == ORANGE
    assert "on /device:CPU:1" in dot.node("b")["tooltip"]
    assert _device_legend(dot) == ["CPU:0", "CPU:1", "CPU:2"]


def test_a_placeholder_keeps_its_fill_and_takes_its_device_border(graph):
    _chain_on_three_devices()
    node = _dot(graph).node("x")
    assert node["shape"] == "parallelogram"
    assert node["fillcolor"] == _NODE_STYLES["placeholder"]["fillcolor"]
    assert node["color"] == BLUE


def test_a_placement_decides_the_colours_over_the_annotations(graph):
    x, c = _chain_on_three_devices()
    placement = {"a": CPU(2), "x": CPU(2), "b": CPU(2), "c": CPU(0)}
    dot = _dot(graph, placement=placement)
    assert dot.node("c")["color"] == BLUE  # CPU:0 sorts first whatever placed it
    assert {dot.node(n)["color"] for n in ("a", "x", "b")} == {GREEN}
    assert "on " + CPU(2) in dot.node("b")["tooltip"]
    assert _device_legend(dot) == ["CPU:0", "CPU:2"]


def test_a_graph_on_no_device_is_drawn_without_device_colours(graph):
    x = df.placeholder(df.float32, (), name="x")
    df.negative(x, name="y")
    dot = _dot(graph)
    assert dot.node("y")["color"] == _NODE_STYLES["op"]["color"]
    assert "penwidth" not in dot.node("y")
    assert "cluster_devices" not in dot.clusters


def test_devices_of_a_cluster_are_named_by_job_and_task(graph):
    with df.device("/job:ps/task:0"):
        w = df.constant(1.0, name="w")
    with df.device("/job:worker/task:1"):
        df.negative(w, name="y")
    placement = {"w": "/job:ps/replica:0/task:0/device:CPU:0"}
    placement["y"] = "/job:worker/replica:0/task:1/device:CPU:0"
    assert _device_legend(_dot(graph, placement=placement)) == [
        "ps/task:0/CPU:0",
        "worker/task:1/CPU:0",
    ]


# -- one box per device ----------------------------------------------------------------------------
def test_group_by_device_draws_each_device_in_its_own_box(graph):
    _chain_on_three_devices()
    dot = _dot(graph, group_by_device=True)
    assert dot.clusters_of("a")[0] == "CPU:0"
    assert dot.clusters_of("b")[0] == "CPU:1"
    assert dot.clusters_of("c")[0] == "CPU:2"
    (box,) = [c for c, attrs in dot.clusters.items() if dot.label(c) == "CPU:1"]
    assert dot.clusters[box]["color"] == GREEN
    (edge,) = dot.edges_between("a", "b")  # the edge between devices is drawn as before
    assert edge["label"] == "float32 ()"


def test_ops_on_no_device_stay_outside_the_device_boxes(graph):
    with df.device("/cpu:1"):
        a = df.constant(1.0, name="a")
    df.negative(a, name="free")
    dot = _dot(graph, group_by_device=True)
    assert dot.clusters_of("free") == []
    assert dot.clusters_of("a") == ["CPU:1"]


def test_a_loop_split_across_devices_is_drawn_in_each_device_box(graph):
    def body(i, total):
        with df.device("/cpu:1"):
            total = df.add(total, df.cast(i, df.float32), name="accumulate")
        return i + 1, total

    with df.device("/cpu:0"):
        df.while_loop(lambda i, total: i < 4, body, [df.constant(0), df.constant(0.0)], name="loop")
    dot = _dot(graph, group_by_device=True)
    less = [n for n in dot.nodes if dot.node(n).get("shape") == "diamond"]  # the loop condition
    for name, device in (("loop/accumulate", "CPU:1"), (less[0], "CPU:0")):
        outer, loop = dot.clusters_of(name)[:2]
        assert outer == device and loop.startswith("while_loop  loop")


def test_a_device_box_is_never_collapsed(graph):
    _chain_on_three_devices()
    dot = _dot(graph, group_by_device=True, max_depth=0)
    assert [dot.label(c) for c in dot.clusters if "device" in c and c != "cluster_devices"] == [
        "CPU:0",
        "CPU:1",
        "CPU:2",
    ]


# -- partition graphs ------------------------------------------------------------------------------
def test_partition_graphs_are_drawn_as_one_picture_with_each_send_joined_to_its_recv(graph):
    x, c = _chain_on_three_devices()
    value, partitions = _partition_graphs(c, {x: 3.0})
    assert value == 8.0
    dot = _dot(partitions)
    recvs = [n for n, attrs in dot.nodes.items() if "_Recv from" in attrs.get("label", "")]
    pairs = [(t, h, a) for t, h, a in dot.edges if a.get("arrowhead") == "vee"]
    assert len(pairs) == len(recvs) == 4
    (b_pair,) = dot.edges_between("[CPU 1] b/_send_0_to_CPU_2", "[CPU 2] b/_recv_0_from_CPU_1")
    assert b_pair["style"] == "dashed" and b_pair["label"] == "b:0"
    assert b_pair["color"] == GREEN  # the sender's colour
    assert dot.clusters_of("[CPU 1] b/_send_0_to_CPU_2")[0] == "CPU:1"
    assert dot.clusters_of("[CPU 2] b/_recv_0_from_CPU_1")[0] == "CPU:2"
    # a:0 goes to two devices: two pairs, one per destination
    assert dot.edges_between("[CPU 0] a/_send_0_to_CPU_1", "[CPU 1] a/_recv_0_from_CPU_0")
    assert dot.edges_between("[CPU 0] a/_send_0_to_CPU_2", "[CPU 2] a/_recv_0_from_CPU_0")


def test_a_dict_of_graphs_is_boxed_by_its_keys(graph):
    x, c = _chain_on_three_devices()
    _, partitions = _partition_graphs(c, {x: 3.0})
    by_device = {g.get_operations()[0].device: g for g in partitions}
    dot = _dot(by_device)
    assert sorted(dot.label(c) for c in dot.clusters if "_device_" in c) == [
        "CPU:0",
        "CPU:1",
        "CPU:2",
    ]


def test_one_partition_alone_shows_its_sends_and_recvs_in_its_colour(graph):
    x, c = _chain_on_three_devices()
    _, partitions = _partition_graphs(c, {x: 3.0})
    (middle,) = [g for g in partitions if g.get_operations()[0].device == CPU(1)]
    dot = _dot(middle)
    send = dot.node("b/_send_0_to_CPU_2")
    assert send["shape"] == "cds" and "_Send to CPU:2" in send["label"]
    assert send["color"] == BLUE  # the only device drawn takes the first colour
    recv = dot.node("a/_recv_0_from_CPU_0")
    assert "_Recv from CPU:0" in recv["label"]
    assert not [a for _, _, a in dot.edges if a.get("arrowhead") == "vee"]


def test_each_partition_of_a_loop_holds_its_own_control_loop(graph):
    def body(i, total):
        with df.device("/cpu:1"):
            total = df.add(total, df.cast(i, df.float32), name="accumulate")
        return i + 1, total

    with df.device("/cpu:0"):
        _, total = df.while_loop(
            lambda i, total: i < 4, body, [df.constant(0), df.constant(0.0)], name="loop"
        )
    value, partitions = _partition_graphs(total, cpus=2)
    assert value == 6.0
    dot = _dot(partitions)
    for device in ("CPU 0", "CPU 1"):
        merges = [
            n
            for n, a in dot.nodes.items()
            if n.startswith(f"[{device}]") and a.get("shape") == "invtriangle"
        ]
        assert merges, f"no Merge in the partition of {device}"
    pairs = [a["label"] for _, _, a in dot.edges if a.get("arrowhead") == "vee"]
    assert any("LoopCond" in label for label in pairs)  # the predicate travels to CPU:1


def test_a_mix_of_graphs_and_fetches_is_refused(graph):
    x, c = _chain_on_three_devices()
    with pytest.raises(TypeError, match="a list or dict of Graphs"):
        df.render([graph, c])


@pytest.mark.parametrize("engine", ENGINES)
def test_partition_graphs_are_drawn_by_either_engine(graph, tmp_path, engine):
    x, c = _chain_on_three_devices()
    _, partitions = _partition_graphs(c, {x: 3.0})
    df.render(partitions, tmp_path / "parts.svg", engine=engine)
    svg = (tmp_path / "parts.svg").read_text()
    assert "CPU:2" in svg and "b:0" in svg


def test_a_partitions_control_loop_is_drawn_inside_its_frame(graph):
    def body(i, total):
        with df.device("/cpu:1"):
            total = total + df.cast(i, df.float32)
        return i + 1, total

    with df.device("/cpu:0"):
        _, total = df.while_loop(
            lambda i, total: i < 4, body, [df.constant(0), df.constant(0.0)], name="loop"
        )
    _, partitions = _partition_graphs(total, cpus=2)
    dot = _dot(partitions)
    control_loop = [n for n in dot.nodes if n.startswith("[CPU 1] loop/_cloop_CPU_1/")]
    assert len(control_loop) == 4  # Enter, Merge, Switch, NextIteration
    for name in control_loop:
        assert any(label.startswith("frame  loop") for label in dot.clusters_of(name)), name

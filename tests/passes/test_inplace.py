"""In-place buffer reuse: an elementwise op writes into an input nothing else holds."""

import json
import zipfile

import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from passes_testing import peak_in_arrays, run_both, session

import dataflow as df
from dataflow.passes import GraphOptions, PassManager, RewriterConfig, optimize, pipeline_for

INPLACE = ["inplace"]
SIZE = 4096


def inplace_ops(graph):
    return [
        op
        for op in graph.get_operations()
        if op.type == "FusedElementwise" and op.attrs["inplace_input"] >= 0
    ]


def test_an_op_reading_a_fresh_single_use_value_writes_into_it(fresh_graph):
    x = df.placeholder(df.float64, [SIZE], name="x")
    y = df.exp(df.sin(x))
    item, reports = optimize(fresh_graph, [y], [x], INPLACE)
    (op,) = inplace_ops(item.graph)
    assert op.name == y.op.name and op.location is y.op.location
    data = np.linspace(-3, 3, SIZE)
    before, after = run_both(y, {x: data}, INPLACE)
    assert_bitwise_equal(before, after)


@pytest.mark.measures_its_runs
def test_reusing_the_buffer_saves_an_allocation(fresh_graph):
    size = 1 << 20
    x = df.placeholder(df.float64, [size])
    y = df.exp(df.sin(x))
    data = np.random.default_rng(1).random(size)
    peaks = {
        name: peak_in_arrays(y, {x: data}, passes, data)
        for name, passes in (("off", []), ("inplace", INPLACE))
    }
    assert peaks["inplace"] < 1.5 <= peaks["off"], peaks


def test_a_fed_value_is_never_overwritten(fresh_graph):
    x = df.placeholder(df.float64, [SIZE])
    y = df.exp(x) + 1.0
    data = np.linspace(0, 1, SIZE)
    copy = data.copy()
    with session() as sess:
        sess.run(y, {x: data})
    assert_bitwise_equal(data, copy)
    item, _ = optimize(fresh_graph, [df.exp(x)], [x], INPLACE)
    assert not inplace_ops(item.graph)


def test_constants_and_variables_are_never_overwritten(fresh_graph):
    c = df.constant(np.linspace(0, 1, SIZE))
    v = df.Variable(np.linspace(1, 2, SIZE))
    y = df.exp(c) + df.exp(v.value())
    with session() as sess:
        sess.run(v.initializer)
        first = sess.run(y)
        assert_bitwise_equal(first, sess.run(y))
        assert_bitwise_equal(sess.run(v), np.linspace(1, 2, SIZE))


def test_a_value_with_two_consumers_or_a_fetch_is_not_reused(fresh_graph):
    x = df.placeholder(df.float64, [SIZE])
    shared = df.sin(x)
    y = df.exp(shared) * df.cos(shared)
    fetched = df.sin(x + 1.0)
    z = df.exp(fetched)
    item, _ = optimize(fresh_graph, [y, fetched, z], [x], INPLACE)
    reused = {op.inputs[op.attrs["inplace_input"]].op.name for op in inplace_ops(item.graph)}
    assert shared.op.name not in reused and fetched.op.name not in reused
    before, after = run_both([y, fetched, z], {x: np.linspace(0, 1, SIZE)}, INPLACE)
    for a, b in zip(before, after):
        assert_bitwise_equal(a, b)


def test_views_are_not_fresh_values(fresh_graph):
    x = df.placeholder(df.float64, [SIZE])
    y = df.exp(df.reshape(df.sin(x), [SIZE]) * 1.0 + df.identity(x))
    item, _ = optimize(fresh_graph, [y], [x], INPLACE)
    reused = {op.inputs[op.attrs["inplace_input"]].op.type for op in inplace_ops(item.graph)}
    assert reused == {"Mul", "FusedElementwise"}  # never the Reshape or Identity views


def test_the_kernel_falls_back_to_allocating_for_buffers_it_may_not_write(fresh_graph):
    x = df.placeholder(df.float64, [SIZE])
    y = df.exp(df.sin(x))
    item, _ = optimize(fresh_graph, [y], [x], INPLACE)
    (op,) = inplace_ops(item.graph)
    kernel = op.op_def.kernel(op.attrs)
    frozen = np.linspace(0, 1, SIZE)
    frozen.flags.writeable = False
    assert_bitwise_equal(kernel(frozen), np.exp(frozen))
    ints = np.arange(SIZE)
    assert kernel(ints).dtype == np.float64 and ints[5] == 5
    writable = np.linspace(0, 1, SIZE)
    assert kernel(writable) is writable


def test_small_values_are_left_to_allocate(fresh_graph):
    x = df.placeholder(df.float64, [8])
    item, _ = optimize(fresh_graph, [df.exp(df.sin(x))], [x], INPLACE)
    assert not inplace_ops(item.graph)


def _overwritable_graph():
    """``not(x < 0.5)``: the comparison is a fresh array read once, so the LogicalNot writes
    into it, unless a run feeds it."""
    x = df.placeholder(df.float32, [SIZE], name="x")
    less = df.less(x, 0.5, name="less")
    return x, less, df.logical_not(less, name="negated")


def test_a_saved_optimized_graph_never_overwrites_a_fed_array(fresh_graph, tmp_path):
    x, less, negated = _overwritable_graph()
    item, _ = optimize(fresh_graph, [negated], [x])
    assert inplace_ops(item.graph)  # the optimized graph lets the kernel write into `less`
    df.io.save_graph(item.graph, tmp_path / "optimized.dfg")
    loaded = df.io.load_graph(tmp_path / "optimized.dfg")
    assert not inplace_ops(loaded)
    fed = np.zeros(SIZE, bool)
    for passes in ([], None):
        with session(passes, graph=loaded) as sess:
            got = sess.run("negated:0", {"less:0": fed})
        assert got.all() and not fed.any()


def test_a_file_asking_a_kernel_to_overwrite_an_input_is_not_obeyed(fresh_graph, tmp_path):
    x, less, negated = _overwritable_graph()
    item, _ = optimize(fresh_graph, [negated], [x])
    (fused,) = inplace_ops(item.graph)
    df.io.save_graph(item.graph, tmp_path / "g.dfg")
    with zipfile.ZipFile(tmp_path / "g.dfg") as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members["graph.json"])
    record = next(op for op in document["ops"] if op["name"] == fused.name)
    assert record["attrs"]["inplace_input"] == {"int": -1}  # what save_graph writes
    record["attrs"]["inplace_input"] = {"int": 0}  # an older or hand-written file
    members["graph.json"] = json.dumps(document).encode()
    with zipfile.ZipFile(tmp_path / "g.dfg", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    loaded = df.io.load_graph(tmp_path / "g.dfg")
    assert not inplace_ops(loaded)
    fed = np.zeros(SIZE, bool)
    with session([], graph=loaded) as sess:
        sess.run("negated:0", {"less:0": fed})
    assert not fed.any()


def test_an_optimized_graph_run_again_decides_again_what_may_be_overwritten(fresh_graph):
    x, less, negated = _overwritable_graph()
    item, _ = optimize(fresh_graph, [negated], [x])
    assert inplace_ops(item.graph)
    fed = np.zeros(SIZE, bool)
    again, _ = optimize(item.graph, [negated.name], [less.name])
    assert not inplace_ops(again.graph)
    with session(None, graph=item.graph) as sess:
        assert sess.run(negated.name, {less.name: fed}).all()
    assert not fed.any()


def test_inplace_runs_last_whatever_order_the_passes_are_given_in(fresh_graph):
    x = df.placeholder(df.float32, [SIZE], name="x")
    # Two equal products, each read once: inplace alone would let exp and sin each write
    # into its own; common subexpression elimination then merges them into one, read twice.
    b = df.exp(x * 2.0)
    e = df.sin(x * 2.0)
    order = ["inplace", "common_subexpression"]
    assert pipeline_for(GraphOptions(rewrite_options=RewriterConfig(optimizers=order))) == (
        "common_subexpression",
        "inplace",
    )
    assert [p.name for p in PassManager(order).passes] == ["common_subexpression", "inplace"]
    data = np.linspace(0, 1, SIZE, dtype=np.float32)
    copy = data.copy()
    with session(order) as sess:
        got_b, got_e = sess.run([b, e], {x: data})
    assert_bitwise_equal(got_b, np.exp(data * np.float32(2.0)))
    assert_bitwise_equal(got_e, np.sin(data * np.float32(2.0)))
    assert_bitwise_equal(data, copy)
    _, reports = optimize(fresh_graph, [b, e], [x], order)
    assert [r.name for r in reports] == ["common_subexpression", "inplace"]


def test_an_optimized_graph_run_without_passes_never_overwrites_a_fed_array(fresh_graph):
    x, less, negated = _overwritable_graph()
    item, _ = optimize(fresh_graph, [negated], [x])
    assert inplace_ops(item.graph)  # the kernel may write into `less` when it computed it
    fed = np.zeros(SIZE, bool)
    with session([], graph=item.graph) as sess:
        assert sess.run(negated.name, {less.name: fed}).all()
    assert not fed.any()  # but a fed array reaches the run read-only

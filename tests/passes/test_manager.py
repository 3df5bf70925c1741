"""The pass manager, the options that choose passes, and how a Session uses them."""

import numpy as np
import pytest
from passes_testing import op_types, session

import dataflow as df
from dataflow.passes import (
    DEFAULT_PIPELINE,
    GraphItem,
    GraphOptions,
    OptimizerOptions,
    PassManager,
    RewriterConfig,
    get_pass,
    optimize,
    pipeline_for,
    registered_passes,
)


def test_every_pass_of_the_default_pipeline_is_registered():
    assert set(DEFAULT_PIPELINE) <= set(registered_passes())
    assert DEFAULT_PIPELINE[-2:] == ("elementwise_fusion", "inplace")


def test_an_unknown_pass_name_is_a_clear_error():
    with pytest.raises(ValueError, match="no graph pass named 'folding'.*constant_folding"):
        PassManager(["folding"])


def test_a_pass_called_alone_returns_a_new_item_and_leaves_its_input_alone(fresh_graph):
    x = df.placeholder(df.float32, [], name="x")
    y = x * (df.constant(2.0) + 1.0)
    item = GraphItem.from_graph(fresh_graph, [y], [x])
    text = str(item.graph)
    folded, report = get_pass("constant_folding")(item)
    assert str(item.graph) == text
    assert folded.graph is not item.graph and report.counts == {"folded": 1}
    assert "constant_folding: 5 -> 5 ops (folded 1)" == str(report)


def test_reports_come_one_per_pass_in_order(fresh_graph):
    x = df.placeholder(df.float32, [], name="x")
    y = df.exp(x * 1.0)
    _, reports = optimize(fresh_graph, ["Exp:0"], ["x:0"], ["arithmetic", "pruning"])
    assert [r.name for r in reports] == ["arithmetic", "pruning"]
    assert reports[0].counts == {"identity elements removed": 1}
    assert reports[1].ops_after == 2  # x and Exp: the Mul is gone, its constant pruned
    assert y.op.name == "Exp"


def test_the_users_graph_and_its_records_are_never_changed(fresh_graph):
    x = df.placeholder(df.float32, [4], name="x")
    y = df.cond(df.constant(True), lambda: df.tanh(x * 1.0), lambda: x)
    _, total = df.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + y), [0, x])
    text, version = str(fresh_graph), fresh_graph.version
    contexts = fresh_graph.get_collection(df.GraphKeys.COND_CONTEXT)
    pivots = [c.pivot for c in contexts]
    optimize(fresh_graph, [total], [x])
    with session() as sess:
        sess.run(total, {x: np.ones(4, np.float32)})
    assert str(fresh_graph) == text and fresh_graph.version == version
    assert [c.pivot for c in contexts] == pivots
    assert all(c.graph is fresh_graph for c in contexts)


@pytest.mark.parametrize(
    "options, expected",
    [
        (GraphOptions(), DEFAULT_PIPELINE),
        (GraphOptions(rewrite_options=RewriterConfig(disable_meta_optimizer=True)), ()),
        (
            GraphOptions(rewrite_options=RewriterConfig(optimizers=["inplace", "pruning"])),
            ("pruning", "inplace"),  # inplace always runs last
        ),
        (
            GraphOptions(optimizer_options=OptimizerOptions(opt_level=OptimizerOptions.L0)),
            tuple(
                p for p in DEFAULT_PIPELINE if p not in ("constant_folding", "common_subexpression")
            ),
        ),
        (
            GraphOptions(
                optimizer_options=OptimizerOptions(opt_level=OptimizerOptions.L0),
                rewrite_options=RewriterConfig(constant_folding=RewriterConfig.ON),
            ),
            tuple(p for p in DEFAULT_PIPELINE if p != "common_subexpression"),
        ),
        (
            GraphOptions(
                optimizer_options=OptimizerOptions(
                    opt_level=OptimizerOptions.L0, do_constant_folding=True
                )
            ),
            tuple(p for p in DEFAULT_PIPELINE if p != "common_subexpression"),
        ),
        (
            GraphOptions(
                optimizer_options=OptimizerOptions(
                    do_function_inlining=True, do_constant_folding=False
                )
            ),
            DEFAULT_PIPELINE,  # L1 folds constants whatever do_constant_folding says
        ),
        (
            GraphOptions(
                rewrite_options=RewriterConfig(
                    remapping=RewriterConfig.OFF, disable_model_pruning=True
                )
            ),
            tuple(p for p in DEFAULT_PIPELINE if p not in ("elementwise_fusion", "pruning")),
        ),
    ],
)
def test_options_choose_the_pipeline_with_tensorflows_names(options, expected):
    assert pipeline_for(options) == expected


@pytest.mark.measures_its_runs
def test_the_session_optimizes_each_plan_once(fresh_graph, monkeypatch):
    x = df.placeholder(df.float32, [3])
    y = df.exp(x * 2.0) + 1.0
    calls = []
    original = PassManager.run
    monkeypatch.setattr(PassManager, "run", lambda *a, **k: calls.append(1) or original(*a, **k))
    with df.Session() as sess:
        for _ in range(5):
            sess.run(y, {x: np.ones(3, np.float32)})
        assert len(calls) == 1
        sess.run([y, x], {x: np.ones(3, np.float32)})
        assert len(calls) == 2


def test_the_graph_options_are_read_when_the_session_is_created(fresh_graph):
    x = df.placeholder(df.float32, [3])
    y = df.tanh(df.exp(x) * 2.0)
    config = df.ConfigProto()
    with df.Session(config=config) as sess:
        config.graph_options = df.GraphOptions(
            rewrite_options=RewriterConfig(disable_meta_optimizer=True)
        )
        metadata = df.RunMetadata()
        sess.run(y, {x: np.ones(3, np.float32)}, run_metadata=metadata)
    assert "FusedElementwise" in {s.op_type for s in metadata.step_stats}


def test_run_options_switch_passes_off_for_one_run(fresh_graph):
    x = df.placeholder(df.float32, [3])
    y = df.tanh(df.exp(x) * 2.0)
    off = df.RunOptions(rewrite_options=RewriterConfig(disable_meta_optimizer=True))
    with df.Session() as sess:
        on_metadata, off_metadata = df.RunMetadata(), df.RunMetadata()
        a = sess.run(y, {x: np.ones(3, np.float32)}, run_metadata=on_metadata)
        b = sess.run(y, {x: np.ones(3, np.float32)}, options=off, run_metadata=off_metadata)
    assert np.array_equal(a, b)
    assert {s.op_type for s in on_metadata.step_stats} == {
        "FusedElementwise",
        "Const",
        "Placeholder",
    }
    assert {"Exp", "Mul", "Tanh"} <= {s.op_type for s in off_metadata.step_stats}


def test_a_fetched_fed_tensor_and_a_fetched_op_still_work(fresh_graph):
    x = df.placeholder(df.float32, [], name="x")
    middle = df.exp(x, name="middle")
    y = middle * 2.0
    noop = df.no_op(name="target")
    with df.Session() as sess:
        got = sess.run([y, middle, noop, x], {middle: 3.0, x: 1.0})
    assert got == [6.0, 3.0, None, 1.0]


def test_passes_work_on_a_graph_loaded_from_a_file(fresh_graph, tmp_path):
    x = df.placeholder(df.float32, [2], name="x")
    df.identity(df.exp(x) * 1.0 + df.constant(1.0) * 2.0, name="y")
    df.io.save_graph(fresh_graph, tmp_path / "g.dfg")
    loaded = df.io.load_graph(tmp_path / "g.dfg")
    item, _ = optimize(loaded, ["y:0"], ["x:0"])
    assert "Mul" not in op_types(item.graph)
    with df.Session(graph=loaded) as sess:
        got = sess.run("y:0", {"x:0": [0.0, 1.0]})
    assert np.allclose(got, np.exp([0.0, 1.0]) + 2.0)


def test_a_run_that_watches_tensors_runs_without_passes(fresh_graph):
    x = df.placeholder(df.float32, [3], name="x")
    inner = df.exp(x * 2.0, name="inner")
    y = df.tanh(inner)
    options = df.RunOptions()
    df.debug.watch_graph(options, fresh_graph, node_name_regex_allowlist="inner")
    metadata = df.RunMetadata()
    with df.Session() as sess:
        value = sess.run(y, {x: np.ones(3, np.float32)}, options=options, run_metadata=metadata)
        assert np.array_equal(value, sess.run(y, {x: np.ones(3, np.float32)}))
    (record,) = metadata.debug_dump.records("inner:0")
    assert np.array_equal(record[2], np.exp(np.full(3, 2.0, np.float32)))


def test_each_report_names_the_users_ops_its_pass_took_out_of_the_plan():
    x = df.placeholder(df.float64, [8], name="x")
    two = df.add(df.constant(1.0, df.float64, name="one"), 1.0, name="two")
    y = df.tanh(df.exp(x * two, name="grown"), name="squashed")
    _, reports = df.passes.optimize(df.get_default_graph(), [y], [x])
    taken_out = {report.name: report.taken_out for report in reports}
    # "one" and the Add's constant operand are needed no more once "two" is a constant; the
    # ops of the fused chain but its last are done by the fused kernel.
    assert "one" in taken_out["constant_folding"]
    assert {"grown", "mul"} <= set(taken_out["elementwise_fusion"])
    assert taken_out["pruning"] == []  # it removes what the others made useless
    assert all(report.verb for report in reports)


def test_every_edit_of_an_item_changes_its_graph_version(fresh_graph):
    # The pass manager takes an unchanged version to mean an unchanged graph, and then skips
    # the walk that finds what a pass took out.
    x = df.placeholder(df.float64, [4], name="x")
    a = df.exp(x, name="a")
    b = df.add_n([a, x, a], name="b")
    item = GraphItem.from_graph(fresh_graph, [b], [x])
    ops = {op.name: op for op in item.ops()}
    x2, a2, b2 = ops["x"]._outputs[0], ops["a"], ops["b"]
    edits = [
        lambda: item.set_input(b2, 1, a2._outputs[0]),
        lambda: item.remove_input(b2, 2),
        lambda: item.add_control_inputs(b2, [ops["x"]]),
        lambda: item.replace_op(a2, [x2], [ops["x"]]),
        lambda: item.add_op("Neg", [x2], {}, "neg", b2),
        lambda: item.remove_ops([item.graph.get_operation_by_name("neg")]),
    ]
    for edit in edits:
        before = item.graph.version
        edit()
        assert item.graph.version != before


def test_a_pass_that_changes_nothing_leaves_the_report_empty_and_the_graph_as_it_was(
    fresh_graph,
):
    x = df.placeholder(df.float64, [4], name="x")
    y = df.tanh(x, name="y")
    item = GraphItem.from_graph(fresh_graph, [y], [x])
    text = str(item.graph)
    item, (report,) = PassManager(["loop_invariant_motion"]).run(item)
    assert str(item.graph) == text
    assert report.taken_out == [] and report.counts == {}

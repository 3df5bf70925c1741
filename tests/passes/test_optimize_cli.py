"""``python -m dataflow optimize FILE -o FILE``: an optimized graph file that runs the same."""

import json

import numpy as np

import dataflow as df
from dataflow.__main__ import main


def build_and_save(path):
    x = df.placeholder(df.float32, [3], name="x")
    scale = df.constant(2.0) * df.constant(3.0)
    hidden = df.tanh(x * scale + 1.0)
    df.identity(df.cond(df.constant(True), lambda: hidden * 1.0, lambda: -hidden), name="y")
    df.io.save_graph(df.get_default_graph(), path)


def run_cli(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_optimize_writes_a_smaller_graph_that_gives_the_same_results(tmp_path, capsys):
    source, target = tmp_path / "model.dfg", tmp_path / "model.opt.dfg"
    build_and_save(source)
    status, out, err = run_cli(["optimize", str(source), "-o", str(target)], capsys)
    assert status == 0, err
    assert "constant_folding:" in out and "elementwise_fusion:" in out
    before = len(df.io.load_graph(source).get_operations())
    optimized = df.io.load_graph(target)
    assert len(optimized.get_operations()) < before
    assert "Switch" not in {op.type for op in optimized.get_operations()}
    results = []
    for path in (source, target):
        status, out, err = run_cli(
            ["run", str(path), "--feed", "x=[0.5, -1.0, 2.0]", "--fetch", "y:0"], capsys
        )
        assert status == 0, err
        results.append(json.loads(out)["y:0"])
    assert results[0] == results[1]


def test_optimize_keeps_the_named_fetches_and_feeds(tmp_path, capsys):
    source, target = tmp_path / "model.dfg", tmp_path / "model.opt.dfg"
    build_and_save(source)
    argv = ["optimize", str(source), "-o", str(target), "--fetch", "y", "--feed", "x"]
    assert run_cli(argv + ["--passes", "constant_folding,pruning"], capsys)[0] == 0
    graph = df.io.load_graph(target)
    with df.Session(graph=graph) as sess:
        got = sess.run("y:0", {"x:0": np.array([1.0, 2.0, 3.0], np.float32)})
    assert np.allclose(got, np.tanh(np.array([1.0, 2.0, 3.0]) * 6.0 + 1.0))


def test_an_unknown_pass_is_a_usage_error(tmp_path, capsys):
    source = tmp_path / "model.dfg"
    build_and_save(source)
    status, _, err = run_cli(
        ["optimize", str(source), "-o", str(tmp_path / "o.dfg"), "--passes", "magic"], capsys
    )
    assert status == 2 and "no graph pass named 'magic'" in err and "usage:" in err
    assert not (tmp_path / "o.dfg").exists()

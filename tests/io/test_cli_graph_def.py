"""python -m dataflow inspect | render | run | optimize, on TensorFlow's frozen GraphDefs (``.pb``):
the nodes keep their names, the results are TensorFlow's, and a damaged ``.pb`` is one line of
error naming the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dataflow as df
from dataflow.__main__ import main

pytest.importorskip("tensorboardX")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "io", "graphdefs")


def model(name: str) -> str:
    return os.path.join(DATA, f"{name}.pb")


def run_main(capsys, *args):
    """``(exit status, stdout, stderr)`` of the command line run in this process."""
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_inspect_lists_a_frozen_models_ops_inputs_and_outputs(capsys):
    status, out, err = run_main(capsys, "inspect", "--json", model("lstm"))
    assert status == 0, err
    info = json.loads(out)
    assert info["placeholders"] == [{"name": "x:0", "dtype": "float32", "shape": [None, 7, 5]}]
    assert "y:0" in info["outputs"]
    assert info["op_types"]["TensorArrayV3"] == 2 and info["op_types"]["Enter"] == 14


def test_run_gives_tensorflows_output(capsys, tmp_path):
    data = np.load(os.path.join(DATA, "resnet_block.npz"))
    np.save(tmp_path / "x.npy", data["input"])
    status, out, err = run_main(
        capsys,
        "run",
        model("resnet_block"),
        "--feed",
        f"x=@{tmp_path / 'x.npy'}",
        "--fetch",
        "pooled",
    )
    assert status == 0, err
    got = np.array(json.loads(out)["pooled"], np.float32)
    np.testing.assert_allclose(got, data["output_0"], rtol=1e-5, atol=1e-6)  # float32 sums


def test_optimize_writes_a_graph_file_or_a_graph_def_that_runs_the_same(capsys, tmp_path):
    data = np.load(os.path.join(DATA, "transformer_block.npz"))
    for output in (tmp_path / "optimized.dfg", tmp_path / "optimized.pb"):
        status, out, err = run_main(capsys, "optimize", model("transformer_block"), "-o", output)
        assert status == 0, err
        assert out.rstrip().endswith(f"ops: {output}")
        graph = df.io.load_graph_def(output) if output.suffix == ".pb" else df.io.load_graph(output)
        with df.Session(graph=graph) as sess:
            got = sess.run("y:0", {"x:0": data["input"]})
        np.testing.assert_allclose(got, data["output_0"], rtol=1e-5, atol=1e-6)


def test_render_draws_a_frozen_model(capsys, tmp_path):
    status, out, err = run_main(capsys, "render", model("nested_cond"), "-o", tmp_path / "g.gv")
    assert status == 0, err
    assert "digraph" in (tmp_path / "g.gv").read_text()


def test_a_damaged_pb_is_one_line_of_error_naming_the_file(capsys, tmp_path):
    damaged = tmp_path / "damaged.pb"
    with open(model("lenet"), "rb") as f:
        damaged.write_bytes(f.read()[:3000])
    status, out, err = run_main(capsys, "inspect", damaged)
    assert status == 1 and out == ""
    assert err.startswith("error: the bytes are not a GraphDef (") and str(damaged) in err
    assert len(err.strip().splitlines()) == 1


def test_a_pb_with_an_unknown_op_type_names_it(capsys, tmp_path):
    graph_def = df.GraphDef()
    graph_def.node.add(name="table", op="HashTableV2")
    path = tmp_path / "table.pb"
    path.write_bytes(graph_def.SerializeToString())
    status, _, err = run_main(capsys, "run", path, "--fetch", "table")
    assert status == 1
    assert err.startswith("error: cannot import HashTableV2 node 'table': dataflow has no such op")


def test_the_module_runs_a_pb_from_the_shell():
    result = subprocess.run(
        [sys.executable, "-m", "dataflow", "run", model("mlp"), "--fetch", "probabilities"]
        + ["--feed", "x=" + json.dumps([[0.0] * 16])],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert np.isclose(sum(json.loads(result.stdout)["probabilities"][0]), 1.0, rtol=1e-6)

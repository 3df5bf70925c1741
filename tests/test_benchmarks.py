"""The benchmark scripts run and print what they claim to measure."""

from __future__ import annotations

import math
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_bench_training_prints_a_finite_step_time_and_loss_for_each_dataflow_mode():
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_training.py"),
            # One BLAS thread: on a loaded machine BLAS threads wait on each other.
            *("--quick", "--only", "mlp", "--no-peers", "--blas-threads", "1"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=True,
    )
    rows = {}
    for line in result.stdout.splitlines():
        # "  dataflow compiled   4.48   4.20   0.853730": the way, ms/step, x floor, the loss.
        number = r"(\d[\d.e+-]*)"
        match = re.match(rf"\s+(dataflow \w+|GEMM floor)\s+{number}\s+{number}\s*{number}?$", line)
        if match:
            rows[match[1]] = match.groups()[1:]
    # The native row is "n/a" where numba is not installed.
    assert {"dataflow interpreted", "dataflow compiled", "GEMM floor"} <= set(rows)
    for way in (way for way in rows if way.startswith("dataflow")):
        milliseconds, _, loss = (float(value) for value in rows[way])
        assert math.isfinite(milliseconds) and milliseconds > 0
        # Three Adam steps on one batch from the same start: the loss of ten classes fell
        # below ln(10), the same in every mode.
        assert math.isfinite(loss) and 0 < loss < math.log(10)
        assert loss == float(rows["dataflow interpreted"][2])
    assert "peers: none" in result.stdout
    assert "BLAS threads: 1 " in result.stdout.splitlines()[0]


def test_bench_interchange_prints_dataflow_beside_onnxruntime_with_small_differences():
    pytest.importorskip("onnxruntime")
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "bench_interchange.py"),
            *("--quick", "--models", "mlp", "--no-tensorflow"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        check=True,
    )
    rows = {}
    for line in result.stdout.splitlines():
        # "mlp  1  0.13  0.08  0.04  0.02  -  2.21  3.32  2.98e-08  5.96e-08 saved"
        fields = line.split()
        if fields and fields[0] == "mlp":
            rows[int(fields[1])] = fields[2:]
    assert set(rows) == {1, 8}
    for fields in rows.values():
        interp, passes, ort1, ort, tensorflow = fields[:5]
        assert tensorflow == "-"  # left out by --no-tensorflow
        for figure in (interp, passes, ort1, ort):
            assert math.isfinite(float(figure)) and float(figure) > 0
        # The two ratios over onnxruntime on one thread (from unrounded times).
        assert all(math.isfinite(float(r)) and float(r) > 0 for r in fields[5:7])
        # dataflow's output is onnxruntime's (on the exported model) up to rounding, and
        # TensorFlow's saved output at batch 1.
        assert float(fields[7]) < 1e-5
    assert float(rows[1][8]) < 1e-5 and rows[1][9] == "saved"

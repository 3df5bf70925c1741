"""benchmarks/harness.py: TensorFlow's runs (any partner framework's) are timed in the same
rounds as dataflow's, in this process or in a child that has the framework."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import sys
import textwrap
import time

import pytest

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def harness(monkeypatch):
    # Importing harness pins BLAS threads in os.environ; keep that to this test.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, os.environ.get(variable, "1"))
    spec = importlib.util.spec_from_file_location("benchmark_harness", BENCHMARKS / "harness.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_partner_in_this_process_runs_in_turn_with_ours_every_round(harness):
    order = []
    partner = harness.Partner(cases=lambda: {"step": lambda: lambda: order.append("theirs")})
    theirs = partner.timer("step")
    assert order == ["theirs"] and partner.first_ms["step"] >= 0  # made, and run once
    order.clear()
    ours, their_seconds = harness.paired_median_times(
        lambda: order.append("ours"), theirs, repeats=3
    )
    assert order == ["ours", "theirs"] * 4  # one untimed call of each, then three rounds
    assert ours >= 0 and their_seconds >= 0


CHILD = """
import sys, time
sys.path.insert(0, {benchmarks!r})
import harness

def load():
    return "the framework"

def cases(framework):
    runs = []

    def make(label):
        print("a framework that prints to stdout", label)  # must not break the protocol
        return lambda: runs.append(time.monotonic())

    return {{"step": make, "runs": lambda: runs, "framework": lambda: framework}}

harness.serve_partner(load, cases)
"""


def test_a_partner_in_another_python_answers_each_round_between_ours(harness, tmp_path):
    script = tmp_path / "partner.py"
    script.write_text(CHILD.format(benchmarks=str(BENCHMARKS)))
    partner = harness.Partner.start(
        lambda: None, None, str(script), "--partner", python=sys.executable
    )
    assert partner is not None
    try:
        theirs = partner.timer("step", "label")
        assert partner.call("framework") == "the framework"
        ours = []
        harness.paired_median_times(lambda: ours.append(time.monotonic()), theirs, repeats=3)
        their_runs = partner.call("runs")
    finally:
        partner.close()
    # The first run (when made), then one untimed run and three rounds, each after ours: the
    # monotonic clock is the machine's, so the two processes' times interleave.
    assert len(their_runs) == 5 and len(ours) == 4
    for k in range(4):
        assert ours[k] < their_runs[k + 1]
        assert k == 3 or their_runs[k + 1] < ours[k + 1]


def test_no_partner_when_the_framework_is_nowhere(harness, tmp_path, capsys):
    assert harness.Partner.start(lambda: None, None, "unused.py", "--partner", None) is None
    script = tmp_path / "partner.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(BENCHMARKS)!r})
            import harness
            def load():
                return None
            harness.serve_partner(load, None)
            """
        )
    )
    assert harness.Partner.start(lambda: None, None, str(script), "-", sys.executable) is None
    assert "nothing to load" in capsys.readouterr().out

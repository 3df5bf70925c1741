"""The execution modes: when ops run at once, when they are built into a graph."""

import subprocess
import sys
import threading

import numpy as np
import pytest

import dataflow as df
from dataflow.framework import op_registry


def test_graph_mode_is_the_default_and_builds_ops(fresh_graph):
    assert df.executing_eagerly() is False
    t = df.constant(1.0) + 1
    assert not isinstance(t, df.EagerTensor)
    assert t.graph is fresh_graph


def test_eager_mode_runs_ops_at_once_and_adds_nothing_to_any_graph(fresh_graph):
    with df.eager_mode():
        assert df.executing_eagerly() is True
        t = df.constant([1.0, 2.0]) * 3
        assert isinstance(t, df.EagerTensor)
        np.testing.assert_array_equal(t.numpy(), [3.0, 6.0])
    assert df.executing_eagerly() is False
    assert fresh_graph.get_operations() == []


def test_entering_a_graph_inside_eager_mode_builds_graph_ops():
    with df.eager_mode():
        g = df.Graph()
        with g.as_default():
            assert df.executing_eagerly() is False
            t = df.constant(2.0) * 2
        assert df.executing_eagerly() is True
    assert t.graph is g and [op.type for op in g.get_operations()] == ["Const", "Const", "Mul"]


def test_graph_mode_inside_eager_mode_builds_into_the_graph_from_before(fresh_graph):
    with df.eager_mode():
        with df.graph_mode():
            assert df.executing_eagerly() is False
            t = df.constant(1.0)
            with df.eager_mode():
                assert df.executing_eagerly() is True
        assert df.executing_eagerly() is True
    assert t.graph is fresh_graph


def test_modes_are_per_thread():
    seen = {}
    inside = threading.Event()
    done = threading.Event()

    def other_thread():
        inside.wait()
        seen["other"] = df.executing_eagerly()
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with df.eager_mode():
        inside.set()
        done.wait()
        seen["this"] = df.executing_eagerly()
    thread.join()
    assert seen == {"this": True, "other": False}


def test_an_eager_tensor_used_in_a_plain_graph_is_refused_with_the_line():
    with df.eager_mode():
        value = df.constant(1.0)
    with pytest.raises(RuntimeError, match=r"capture an EagerTensor.*test_modes.py:\d+"):
        df.add(value, 1.0)


def test_op_runner_hook_hands_every_op_to_the_default_graphs_runner():
    """The hook a mode plugs into: a graph with an op runner gets each op, unconverted."""
    seen = []

    class Recorder:
        def apply(self, op_def, inputs, attrs, name, control_inputs):
            seen.append((op_def.type, list(inputs), name))
            return type("Op", (), {"outputs": ["result"]})()

    class RecordingGraph(df.Graph):
        _op_runner = Recorder()

    op_registry.enable_op_runners()
    with RecordingGraph().as_default():
        assert op_registry.apply_op("Add", [1, 2], name="sum").outputs == ["result"]
    assert seen == [("Add", [1, 2], "sum")]


ENABLE_SCRIPT = """
import dataflow as df
{before}
try:
    df.enable_eager_execution()
except ValueError as e:
    print("refused:", e)
print(df.executing_eagerly(), df.constant(2.0) * 2)
import threading
seen = []
thread = threading.Thread(target=lambda: seen.append(df.executing_eagerly()))
thread.start(); thread.join()
print("thread:", seen)
"""


def _run(before: str) -> str:
    script = ENABLE_SCRIPT.format(before=before)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_enable_eager_execution_is_process_wide():
    out = _run("")
    assert "True df.Tensor(4.0, shape=(), dtype=float32)" in out
    assert "thread: [True]" in out


def test_enable_eager_execution_is_refused_once_a_graph_op_was_built():
    out = _run("df.constant(1.0)")
    assert "refused: df.enable_eager_execution must be called at program startup" in out
    assert 'False Tensor("mul:0"' in out


RESET_SCRIPT = """
import dataflow as df
df.enable_eager_execution()
step = df.train.get_or_create_global_step()
df.reset_default_graph()
print(df.executing_eagerly(), df.constant(2.0) * 2)
print("same step:", df.train.get_or_create_global_step() is step)
with df.Graph().as_default():
    try:
        df.reset_default_graph()
    except AssertionError as e:
        print("nested:", e)
"""


def test_reset_default_graph_keeps_eager_execution_on_and_forgets_the_global_step():
    result = subprocess.run(
        [sys.executable, "-c", RESET_SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "True df.Tensor(4.0, shape=(), dtype=float32)" in result.stdout
    assert "same step: False" in result.stdout
    assert "nested: Do not use reset_default_graph() inside" in result.stdout

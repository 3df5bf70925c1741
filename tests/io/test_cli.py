"""python -m dataflow inspect | render | run, on a saved graph."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from test_hostile_files import printing_to_a_file

import dataflow as df
from dataflow.__main__ import main
from dataflow.io import dfg  # where the bounds of a graph file are read

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "dataflow", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env=env,
    )


@pytest.fixture
def model(tmp_path, fresh_graph):
    x = df.placeholder(df.float32, [None], name="x")
    n = df.placeholder(df.int32, [], name="n")
    v = df.Variable(np.float32([1.0, 2.0, 3.0]), name="v")
    out = df.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 2.0), [0, x])[1]
    df.identity(df.cond(n > 2, lambda: out + v, lambda: out), name="result")
    path = tmp_path / "model.dfg"
    df.io.save_graph(fresh_graph, path)
    return path


def test_inspect_lists_op_types_inputs_outputs_loops_and_conds(model):
    result = cli("inspect", model)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "Placeholder" in text and "x:0  float32[None]" in text and "n:0  int32[]" in text
    assert "result:0" in text and "loops: 1" in text and "conds: 1" in text
    assert "v:0  float32(3,)" in text
    info = json.loads(cli("inspect", "--json", model).stdout)
    assert info["op_types"]["Merge"] == 3 and info["loops"][0]["loop_vars"] == 2


def test_run_feeds_json_and_npy_values_and_prints_json(model, tmp_path):
    np.save(tmp_path / "x.npy", np.float32([1.0, -1.0, 0.5]))
    result = cli(
        "run",
        model,
        "--init",
        "--feed",
        f"x=@{tmp_path / 'x.npy'}",
        "--feed",
        "n=3",
        "--fetch",
        "result",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"result": [9.0, -6.0, 7.0]}


def test_run_writes_npy_files_with_out(model, tmp_path):
    out = tmp_path / "results"
    result = cli(
        "run",
        model,
        "--feed",
        "x=[1, 2]",
        "--feed",
        "n=1",
        "--fetch",
        "result:0",
        "--out",
        out,
    )
    assert result.returncode == 0, result.stderr
    value = np.load(out / "result_0.npy", allow_pickle=False)
    assert value.dtype == np.float32 and value.tolist() == [2.0, 4.0]


def test_run_reports_a_missing_feed_or_name_as_an_error(model):
    result = cli("run", model, "--fetch", "result")
    assert result.returncode == 1 and "x" in result.stderr and "Traceback" not in result.stderr
    result = cli("run", model, "--fetch", "nothing_here")
    assert result.returncode == 1 and "nothing_here" in result.stderr


def test_a_hostile_file_is_reported_not_run(tmp_path):
    path = tmp_path / "bad.dfg"
    path.write_bytes(b"not a zip")
    result = cli("inspect", path)
    assert result.returncode == 1 and "zip archive" in result.stderr


def test_render_writes_an_image(model, tmp_path):
    image = tmp_path / "model.svg"
    result = cli("render", model, "-o", image)
    assert result.returncode == 0, result.stderr
    assert image.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_run_lets_a_graph_print_to_a_file_only_when_asked(tmp_path, fresh_graph):
    path, log = printing_to_a_file(tmp_path, fresh_graph)
    refused = cli("run", path, "--feed", "x=2", "--fetch", "y")
    assert refused.returncode == 1 and "--allow-file-output" in refused.stderr
    assert not log.exists()
    assert cli("inspect", path).returncode == 0  # nothing runs
    allowed = cli("run", path, "--feed", "x=2", "--fetch", "y", "--allow-file-output")
    assert allowed.returncode == 0, allowed.stderr
    assert log.read_text() == "x is 2\n"


@pytest.fixture
def numbers(tmp_path, fresh_graph):
    x = df.placeholder(df.float32, [3], name="x")
    df.placeholder(df.int8, [], name="k")
    df.identity(x / 0.0, name="ratio")  # inf, -inf and nan for x = [1, -1, 0]
    df.identity(df.placeholder(df.uint8, [None], name="u"), name="bytes")
    path = tmp_path / "numbers.dfg"
    df.io.save_graph(fresh_graph, path)
    return path


def test_run_prints_standard_json_with_non_finite_floats_as_strings(numbers):
    result = cli("run", numbers, "--feed", "x=[1, -1, 0]", "--fetch", "ratio")
    assert result.returncode == 0, result.stderr

    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    assert json.loads(result.stdout, parse_constant=refuse) == {"ratio": ["inf", "-inf", "nan"]}


@pytest.mark.parametrize(
    "feed, message",
    [
        ("k=300", "--feed k: the value does not fit 'k:0' (int8): it holds 300, out of the range"),
        ("k=-129", "--feed k: the value does not fit 'k:0' (int8): it holds -129"),
        ("u=[1, -1]", "--feed u: the value does not fit 'u:0' (uint8): it holds -1"),
        ("x=[1e40, 0, 0]", "--feed x: the value does not fit 'x:0' (float32): a number is out"),
        ("x=[1, 2]", "--feed x: the value does not fit 'x:0' (float32, shape (3,)): it has shape"),
        ('x=["a", "b", "c"]', "--feed x: the value does not fit 'x:0' (float32): it is not an"),
        ("nothing=1", "--feed nothing: The name 'nothing:0'"),
    ],
)
def test_a_feed_that_does_not_fit_is_an_error_naming_the_feed(numbers, feed, message):
    result = cli("run", numbers, "--feed", feed, "--fetch", "ratio")
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {message}"), result.stderr
    assert "Traceback" not in result.stderr and "runpy" not in result.stderr


def test_a_feed_from_an_npy_file_must_fit_too(numbers, tmp_path):
    np.save(tmp_path / "k.npy", np.int64(300))
    result = cli("run", numbers, "--feed", f"k=@{tmp_path / 'k.npy'}", "--fetch", "ratio")
    assert result.returncode == 1 and "it holds 300, out of the range of int8" in result.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "{file}", "--feed", "x", "--fetch", "ratio"], "--feed expects name=value"),
        (["run", "{file}", "--feed", "x=[1,", "--fetch", "ratio"], "is not a JSON literal"),
        (["render", "{file}", "-o", "{dir}/graph.xyz"], "the image format comes from the"),
        (["render", "{file}", "-o", "{dir}/graph"], "the image format comes from the"),
        (["optimize", "{file}", "-o", "{dir}/o.dfg", "--passes", "nope"], "no graph pass"),
    ],
)
def test_usage_errors_exit_with_status_2_and_write_nothing(numbers, tmp_path, argv, message):
    argv = [a.format(file=numbers, dir=tmp_path) for a in argv]
    result = cli(*argv)
    assert result.returncode == 2, result.stderr
    assert "usage:" in result.stderr and message in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["numbers.dfg"]


# -- hostile and damaged files, through every subcommand -----------------------------------------
def damaged_copy(path, tmp_path):
    """``path`` with a byte of graph.json's compressed data flipped."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("graph.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 2] ^= 0xFF
    damaged = tmp_path / "damaged.dfg"
    damaged.write_bytes(bytes(data))
    return damaged


def memory_bomb(tmp_path):
    """A file whose graph.json is a long array of empty objects."""
    path = tmp_path / "bomb.dfg"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("graph.json", "[" + "{}," * 200_000 + "{}]")
    return path


def misplaced_variable(model, tmp_path):
    """``model`` with a number in its collection of variables."""
    with zipfile.ZipFile(model) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members.pop("graph.json"))
    document["collections"]["variables"] = [{"value": {"int": 3}}]
    path = tmp_path / "misplaced.dfg"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("graph.json", json.dumps(document))
        for name, data in members.items():
            archive.writestr(name, data)
    return path


SUBCOMMANDS = [
    ["inspect", "{file}"],
    ["render", "{file}", "-o", "{dir}/graph.gv"],
    ["run", "{file}", "--init", "--feed", "x=[1]", "--feed", "n=1", "--fetch", "result"],
    ["optimize", "{file}", "-o", "{dir}/optimized.dfg"],
]


@pytest.mark.parametrize("argv", SUBCOMMANDS, ids=lambda argv: argv[0])
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda model, tmp_path: damaged_copy(model, tmp_path), "'graph.json' is damaged"),
        (lambda model, tmp_path: memory_bomb(tmp_path), "more than 100000 JSON values"),
        (misplaced_variable, "holds only variables, not int"),
    ],
    ids=["damaged", "memory-bomb", "misplaced-variable"],
)
def test_every_subcommand_reports_a_bad_file_in_one_line(
    model, tmp_path, monkeypatch, capsys, argv, make, message
):
    monkeypatch.setattr(dfg, "MAX_JSON_VALUES", 100_000)
    path = make(model, tmp_path)
    status = main([a.format(file=path, dir=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert status == 1 and err.startswith(f"error: {path}: ") and message in err, err
    assert err.count("\n") == 1


def test_an_error_no_one_foresaw_is_one_line_too(model, tmp_path):
    # The system's Graphviz asked for on a PATH without it: the drawing program's own error.
    image = tmp_path / "model.png"
    no_dot = {**os.environ, "PATH": str(tmp_path), "DATAFLOW_RENDER_ENGINE": "system"}
    result = cli("render", model, "-o", image, env=no_dot)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("error: ") and "Graphviz" in result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


# -- run --timeout and numbers no dtype holds ----------------------------------------------------
@pytest.fixture
def forever(tmp_path, fresh_graph):
    n = df.placeholder(df.int32, [], name="n")
    df.identity(df.while_loop(lambda i: i >= 0, lambda i: i + 1, [n]), name="count")
    path = tmp_path / "forever.dfg"
    df.io.save_graph(fresh_graph, path)
    return path


def test_run_stops_at_its_timeout_with_a_clear_message(forever):
    # The timeout covers planning the run too: 2 s leave a loaded machine the time to reach the
    # endless loop, whose name the message gives.
    result = cli("run", forever, "--feed", "n=0", "--fetch", "count", "--timeout", "2")
    assert result.returncode == 1
    assert result.stderr.startswith("error: the run did not finish within --timeout 2 s")
    # Stopped inside an iteration or between two, the message names the loop.
    assert "loop 'while'" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_run_with_a_timeout_that_it_meets_prints_its_results(forever):
    result = cli("run", forever, "--feed", "n=-5", "--fetch", "count", "--timeout", "30")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"count": -5}  # the loop never runs its body


@pytest.mark.parametrize("value", ["0", "-1", "inf", "nan"])
def test_a_timeout_is_a_positive_number_of_seconds(forever, value):
    result = cli("run", forever, "--feed", "n=0", "--fetch", "count", "--timeout", value)
    assert result.returncode == 2
    assert "--timeout: a number of seconds greater than 0" in result.stderr


@pytest.mark.parametrize("literal", ["[1e400, 0, 0]", "-1e400", "1" * 5000])
def test_a_feed_holding_a_number_no_dtype_holds_is_refused(numbers, literal):
    result = cli("run", numbers, "--feed", f"x={literal}", "--fetch", "ratio")
    assert result.returncode == 2, result.stderr
    assert "--feed x: " in result.stderr and "no dtype holds" in result.stderr
    assert "Traceback" not in result.stderr


def _ticking_graph(graph, path) -> list[str]:
    """Saves at ``path`` a loop that never ends and prints "tick" to stderr each iteration;
    returns the command line that runs it."""
    n = df.placeholder(df.int32, [], name="n")

    def body(i):
        with df.control_dependencies([df.print("tick", output_stream=sys.stderr)]):
            return i + 1

    df.identity(df.while_loop(lambda i: i >= 0, body, [n]), name="count")
    df.io.save_graph(graph, path)
    return ["-m", "dataflow", "run", str(path), "--feed", "n=0", "--fetch", "count"]


def _as_a_terminal_starts_it() -> None:
    """In the child before it runs: SIGINT handled by default and not blocked, as for a program
    started at a prompt, whatever the test process inherited or a library there changed."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _interrupt(argv: list[str]) -> tuple[int, str]:
    """Starts ``python *argv``, sends SIGINT once it has ticked, and returns its exit status and
    stderr (a child still running 60 s later fails the test)."""
    child = subprocess.Popen(
        [sys.executable, *argv],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=_as_a_terminal_starts_it,
    )
    try:
        assert child.stderr.readline() == "tick\n"  # the run is under way
        child.send_signal(signal.SIGINT)
        try:
            err = child.communicate(timeout=60)[1]
        except subprocess.TimeoutExpired:
            pytest.fail("the run went on after SIGINT")
    finally:
        child.kill()
    return child.returncode, err


def test_an_interrupted_run_exits_with_status_130_and_one_line(tmp_path, fresh_graph):
    status, err = _interrupt(_ticking_graph(fresh_graph, tmp_path / "ticking.dfg"))
    assert status == 130
    assert err.splitlines()[-1] == "error: interrupted" and "Traceback" not in err


def test_an_interrupt_stops_the_run_even_when_code_on_the_way_swallows_it(tmp_path, fresh_graph):
    # Python delivers Ctrl-C as a KeyboardInterrupt raised in whatever the main thread runs at
    # that moment; code that catches BaseException there (a finalizer, a callback, a library)
    # loses it.  Here the standard error stream does: the interrupt must still stop the run.
    command = _ticking_graph(fresh_graph, tmp_path / "ticking.dfg")
    swallowing = (
        "import runpy, sys\n"
        "class Swallowing:\n"
        "    def __init__(self, stream): self.stream = stream\n"
        "    def __getattr__(self, name): return getattr(self.stream, name)\n"
        "    def write(self, text):\n"
        "        try:\n"
        "            return self.stream.write(text)\n"
        "        except BaseException:\n"
        "            return 0\n"
        "    def flush(self):\n"
        "        try:\n"
        "            self.stream.flush()\n"
        "        except BaseException:\n"
        "            pass\n"
        "sys.stderr = Swallowing(sys.stderr)\n"
        f"sys.argv = ['dataflow', *{command[2:]!r}]\n"
        "runpy.run_module('dataflow', run_name='__main__', alter_sys=True)\n"
    )
    status, err = _interrupt(["-c", swallowing])
    assert status == 130
    assert err.splitlines()[-1] == "error: interrupted" and "Traceback" not in err

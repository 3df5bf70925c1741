"""A graph file is untrusted: the text it carries (names, locations, fused steps, frame and
cond names, devices, attributes) never runs as code.  A loader refuses control characters in
it, naming the field and the op; the code generators write it only as string literals
(`tests/client/compiler/test_graph_text_in_generated_code.py` holds them to that alone)."""

from __future__ import annotations

import io
import json
import os
import pathlib
import subprocess
import sys
import unicodedata
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.client import compiler
from dataflow.framework.source_location import SourceLocation
from dataflow.io.dfg import GraphFormatError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FETCHES = ["y:0", "fused:0", "c/Merge:0", "loop/Exit_1:0"]
FEEDS = {"x:0": np.float32(2.0), "p:0": True}


def statement(marker: pathlib.Path) -> str:
    return f"__import__('pathlib').Path({str(marker)!r}).touch()"


def injections(marker: pathlib.Path) -> list[str]:
    """Texts that end a comment of generated code and run a statement that creates
    ``marker``: one for each depth of indentation a generated line may have, and one that
    closes the function and runs at the top level of its module (on import)."""
    texts = []
    for depth in range(8):
        pad = " " * (4 * depth)
        texts.append(f"x\n{pad}{statement(marker)}\n{pad}#")
    texts.append(f"x\n    pass\n{statement(marker)}\ndef after():\n    #")
    return texts


def encode(value):
    """The typed JSON of a plain value (lists, strings, ints)."""
    if isinstance(value, list):
        return {"list": [encode(v) for v in value]}
    if isinstance(value, str):
        return {"str": value}
    return {"int": value}


@pytest.fixture
def saved(tmp_path, fresh_graph):
    """A saved graph, as (graph.json document, {member: bytes}): a region (``y``), a fused
    chain as ``dataflow optimize`` writes it (``fused``), a cond (``c``) and a loop
    (``loop``), all of scalars."""
    x = df.placeholder(df.float32, [], name="x")
    p = df.placeholder(df.bool, [], name="p")
    df.identity(x * 2.0 + 1.0, name="y")
    df.cond(p, lambda: x + 1.0, lambda: x * 0.5, name="c")
    df.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 1.5), [0, x], name="loop")
    data = df.io.graph_to_bytes(fresh_graph)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    document = json.loads(members.pop("graph.json"))
    steps = [["Mul", [0, 1], "mul", "f.py:1"], ["Add", [-1, 2], "add", "f.py:2"]]
    document["ops"].append(
        {
            "name": "fused",
            "type": "FusedElementwise",
            "inputs": [["x", 0], ["mul/y", 0], ["add/y", 0]],
            "control_inputs": [],
            "attrs": {
                "steps": encode(steps),
                "inplace_input": {"int": -1},
                "T": {"dtype": "float32"},
            },
            "location": {"file": "f.py", "line": 2, "function": "f"},
            "context": None,
            "outputs": [{"dtype": "float32", "shape": []}],
        }
    )
    return document, members


def write(path, document, members) -> pathlib.Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("graph.json", json.dumps(document))
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def op(document, name):
    return next(o for o in document["ops"] if o["name"] == name)


def context(document, kind):
    return next(c for c in document["contexts"] if c["kind"] == kind)


def set_location_file(document, text):
    op(document, "y")["location"]["file"] = text


def set_location_function(document, text):
    op(document, "y")["location"]["function"] = text


def set_step_name(document, text):
    op(document, "fused")["attrs"]["steps"]["list"][0]["list"][2] = {"str": text}


def set_step_type(document, text):
    op(document, "fused")["attrs"]["steps"]["list"][0]["list"][0] = {"str": "Mul" + text}


def set_location_line(document, text):
    op(document, "y")["location"]["line"] = "3" + text


def set_scope(document, text):
    op(document, "y")["name"] = f"scope{text}/y"


def set_collection_key(document, text):
    document.setdefault("collections", {})[text] = []


def set_step_location(document, text):
    op(document, "fused")["attrs"]["steps"]["list"][0]["list"][3] = {"str": text}


def set_frame_name(document, text):
    for record in document["ops"]:
        if record["type"] == "Enter":
            record["attrs"]["frame_name"] = {"str": text}
    context(document, "while")["frame_name"] = text


def set_loop_name(document, text):
    context(document, "while")["name"] = text


def set_cond_name(document, text):
    for record in document["contexts"]:
        if record["kind"] == "cond":
            record["name"] = text


def set_device(document, text):
    op(document, "y")["device"] = f"/device:CPU:0{text}"


def set_colocation(document, text):
    op(document, "y")["attrs"]["_class"] = encode([f"loc:@x{text}"])


# field -> (what sets it, what the error names, and why it refuses it when not for a control
# character)
FIELDS = {
    "op type": (
        lambda document, text: op(document, "y").update(type=text),
        "op 'y'",
        "unknown op type",
    ),
    "scope name": (set_scope, "op #6", "is not a valid op name"),
    "location line": (set_location_line, "op 'y' location line", "expected an integer"),
    "fused step type": (set_step_type, "attribute 'steps' of 'FusedElementwise' op 'fused'"),
    "collection key": (set_collection_key, 'collection "x\\n'),
    "location file": (set_location_file, "op 'y' location file"),
    "location function": (set_location_function, "op 'y' location function"),
    "fused step name": (set_step_name, "attribute 'steps' of 'FusedElementwise' op 'fused'"),
    "fused step location": (
        set_step_location,
        "attribute 'steps' of 'FusedElementwise' op 'fused'",
    ),
    "frame name": (set_frame_name, "attribute 'frame_name' of 'Enter' op 'loop/Enter'"),
    "loop name": (set_loop_name, "context #2 name"),
    "cond name": (set_cond_name, "context #0 name"),
    "device": (set_device, "op 'y' device"),
    "attribute": (set_colocation, "attribute '_class' of 'Identity' op 'y'"),
}


# The fields whose text reaches only the native modules' source (numba's), where the
# Python functions give it an identifier: they are tried with native code compiled at once.
NATIVE_FIELDS = {"frame name"}


@pytest.fixture
def native_code(tmp_path, monkeypatch):
    """Sets the native mode ("force" or the default "auto") for one test, with a cache of the
    test's own."""
    monkeypatch.setenv("DATAFLOW_CACHE_DIR", str(tmp_path / "cache"))
    previous = compiler.native_mode()
    yield compiler.set_native
    compiler.set_native(previous)


def load_and_run_three_times(path):
    """What ``load_graph`` and three runs in the default compilation mode (which compiles on
    the third) give: the results, or the error."""
    previous = compiler.set_mode("auto")
    try:
        graph = df.io.load_graph(path)
        with df.Session(graph=graph) as sess:
            return [sess.run(FETCHES, FEEDS) for _ in range(3)][-1]
    except Exception as error:  # the outcome is checked by the caller
        return error
    finally:
        compiler.set_mode(previous)


@pytest.mark.parametrize("field", FIELDS)
def test_a_file_whose_text_would_run_as_code_is_refused_and_nothing_runs(
    tmp_path, saved, native_code, field
):
    set_text, where, *why = FIELDS[field]
    native_code("force" if field in NATIVE_FIELDS else "auto")
    marker = tmp_path / "ran"
    outcomes = []
    for k, text in enumerate(injections(marker)):
        document = json.loads(json.dumps(saved[0]))
        set_text(document, text)
        outcomes.append(load_and_run_three_times(write(tmp_path / f"{k}.dfg", document, saved[1])))
    assert not marker.exists(), "text from the graph file ran as code"
    for outcome in outcomes:
        assert isinstance(outcome, GraphFormatError), outcome
        assert where in str(outcome)
        assert (why or ["control character '\\n'"])[0] in str(outcome)


def test_an_op_name_ending_in_a_newline_is_refused(tmp_path, saved):
    """The name check once ended in ``$``, which matches before a final newline too."""
    document, members = saved
    op(document, "y")["name"] = "y\n"
    with pytest.raises(GraphFormatError, match="'y\\\\n' is not a valid op name"):
        df.io.load_graph(write(tmp_path / "bad.dfg", document, members))


def test_the_untampered_file_runs_alike_in_every_mode(tmp_path, saved):
    path = write(tmp_path / "good.dfg", *saved)
    results = load_and_run_three_times(path)
    previous = compiler.set_mode("off")
    try:
        with df.Session(graph=df.io.load_graph(path)) as sess:
            assert sess.run(FETCHES, FEEDS) == results == [5.0, 5.0, 3.0, 6.75]
    finally:
        compiler.set_mode(previous)


def cli_run(path, cache, native="auto"):
    env = dict(
        os.environ,
        DATAFLOW_COMPILE="force",
        DATAFLOW_NATIVE=native,
        DATAFLOW_CACHE_DIR=str(cache),
    )
    fetches = [arg for fetch in FETCHES for arg in ("--fetch", fetch)]
    return subprocess.run(
        [sys.executable, "-m", "dataflow", "run", str(path), "--feed", "x=2.0", "--feed", "p=true"]
        + fetches,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=env,
    )


# field -> which of `injections` ran on code that pasted the text into a comment: the depth of
# a line in a region's function, or the top level of a native module
CLI_INJECTION = {
    "location file": 3,
    "fused step name": 3,
    "fused step location": 3,
    "frame name": -1,
}


@pytest.mark.parametrize("field", CLI_INJECTION)
def test_python_m_dataflow_run_refuses_the_file_and_runs_nothing_in_force_mode(
    tmp_path, saved, field
):
    set_text, where, *_ = FIELDS[field]
    marker = tmp_path / "ran"
    document, members = saved
    set_text(document, injections(marker)[CLI_INJECTION[field]])
    native = "force" if field in NATIVE_FIELDS else "auto"
    result = cli_run(write(tmp_path / "evil.dfg", document, members), tmp_path / "cache", native)
    assert not marker.exists(), "text from the graph file ran as code"
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith("error: ") and where in result.stderr
    assert "Traceback" not in result.stderr


def test_python_m_dataflow_run_runs_the_untampered_file_in_force_mode(tmp_path, saved):
    result = cli_run(write(tmp_path / "good.dfg", *saved), tmp_path / "cache", "force")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == dict(zip(FETCHES, [5.0, 5.0, 3.0, 6.75]))


def test_attributes_that_are_data_keep_their_control_characters(tmp_path, fresh_graph, capfd):
    """A print's separator and end, or a regex, are data a kernel uses, not text that
    generated code holds: a newline or a tab there loads and runs."""
    x = df.placeholder(df.float32, [], name="x")
    shout = df.print("x\tis", x, sep="\t", end="\r\n", output_stream="stderr", name="shout")
    with df.control_dependencies([shout]):
        df.identity(x, name="y")
    path = tmp_path / "prints.dfg"
    df.io.save_graph(fresh_graph, path)
    loaded = df.io.load_graph(path)
    assert loaded.get_operation_by_name("shout").get_attr("end") == "\r\n"
    with df.Session(graph=loaded) as sess:
        assert sess.run("y:0", {"x:0": 2.0}) == 2.0
    assert capfd.readouterr().err == "x\tis\t2\r\n"


def _control_character(text: str):
    return next(
        (c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")), None
    )


_PIECES = st.sampled_from(
    [
        "\n",
        "\r",
        "\x0c",
        "\x00",
        "\u2028",
        "\x85",
        "\u202e",
        "'",
        '"',
        '"""',
        "\\",
        "#",
        "    ",
        ":",
        "(",
        "é",
        "\U0001f600",
        "\ud800",
        "pass",
        "x = 1",
    ]
)
_TEXT = st.one_of(
    st.text(max_size=12),
    st.lists(st.one_of(_PIECES, st.text(max_size=3)), max_size=6).map("".join),
)
_PROPERTY_FIELDS = [
    "location file",
    "location function",
    "fused step name",
    "fused step location",
    "frame name",
    "loop name",
    "cond name",
]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(field=st.sampled_from(_PROPERTY_FIELDS), text=_TEXT)
def test_random_text_in_a_file_is_refused_for_its_control_characters_or_runs_as_before(
    tmp_path, saved, field, text
):
    set_text, where, *_ = FIELDS[field]
    marker = tmp_path / "ran"
    document = json.loads(json.dumps(saved[0]))
    text = "z" + text + statement(marker)  # a frame name may not be empty
    set_text(document, text)
    outcome = load_and_run_three_times(write(tmp_path / "random.dfg", document, saved[1]))
    assert not marker.exists()
    bad = _control_character(text)
    if bad is not None:
        assert isinstance(outcome, GraphFormatError), outcome
        assert where in str(outcome) and f"control character {bad!r}" in str(outcome)
    else:
        assert outcome == [5.0, 5.0, 3.0, 6.75], outcome


@pytest.mark.parametrize(
    "spoil, field",
    [
        (lambda op: setattr(op, "location", SourceLocation("a\nb.py", 3, "f")), "location"),
        (lambda op: setattr(op, "_name", "y\n"), "not a valid op name"),
        (lambda op: op.attrs.__setitem__("frame_name", "while\n"), "attribute 'frame_name'"),
    ],
    ids=["location", "name", "attribute"],
)
def test_a_graph_the_format_cannot_hold_is_refused_when_saved_not_when_loaded(
    tmp_path, spoil, field
):
    """Saving never writes a file that loading refuses: a control character (or a name no
    file may hold), put into a graph behind the builders' back, is refused at once."""
    graph = df.Graph()
    with graph.as_default():
        y = df.identity(df.constant(1.0), name="y")
    spoil(y.op)
    with pytest.raises(df.io.GraphNotSerializableError, match=field):
        df.io.save_graph(graph, tmp_path / "g.dfg")
    assert not (tmp_path / "g.dfg").exists()


def test_a_collection_that_names_an_op_taken_out_of_the_graph_saves_without_it(tmp_path):
    """A graph that forgets ops (lazy mode compacts its graph so) may leave them in a
    collection; the file holds only the ops the graph has, so it loads."""
    graph = df.Graph()
    with graph.as_default():
        kept = df.constant(1.0, name="kept")
        gone = df.constant(2.0, name="gone")
        df.add_to_collection("notes", kept)
        df.add_to_collection("notes", gone.op)
    graph._forget_ops([gone.op])
    df.io.save_graph(graph, tmp_path / "g.dfg")
    loaded = df.io.load_graph(tmp_path / "g.dfg")
    assert [t.name for t in loaded.get_collection("notes")] == ["kept:0"]

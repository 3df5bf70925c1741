"""Text that a graph carries into generated code (op names, the file and function of an op's
location, a fused step's name and location, a loop's frame name, a cond's name) appears there
only as a string literal: whatever it holds, compiled code computes what the interpreter
computes, and nothing of the text runs.

The graphs here are built in memory and their text is set afterwards, past every check a
loader makes (`tests/io/test_graph_text_never_runs.py` has the files), so these tests hold
the code generators alone to the rule."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from bitwise import same_bits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.client import compiler
from dataflow.client.compiler import native
from dataflow.framework.graph import SourceLocation


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


def program():
    """A region with a fused chain (``y``), a cond of its own (``c``) and a loop (``loop``),
    all of scalars (so each has native code too); the fetches and the feeds."""
    x = df.placeholder(df.float32, [], name="x")
    p = df.placeholder(df.bool, [], name="p")
    y = df.identity(x * 2.0 + 1.0, name="y")
    c = df.cond(p, lambda: x + 1.0, lambda: x * 0.5, name="c")
    _, a = df.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 1.5), [0, x], name="loop")
    return [y, c, a], {x: np.float32(2.0), p: True}


def ops_of(graph, prefix):
    return [op for op in graph.get_operations() if op.name.startswith(prefix)]


def set_location_file(graph, text):
    graph.get_operation_by_name("y").location = SourceLocation(text, 3, "f")


def set_location_function(graph, text):
    graph.get_operation_by_name("y").location = SourceLocation("f.py", 3, text)


def set_step_location(graph, text):
    graph.get_operation_by_name("mul").location = SourceLocation(text, 3, "f")


def set_step_name(graph, text):
    graph.get_operation_by_name("mul")._name = text


def set_loop_op_location(graph, text):
    graph.get_operation_by_name("loop/mul").location = SourceLocation(text, 3, "f")


def set_branch_op_location(graph, text):
    graph.get_operation_by_name("c/add").location = SourceLocation(text, 3, "f")


def set_frame_name(graph, text):
    for op in graph.get_operations():
        if op.type == "Enter":
            op.attrs["frame_name"] = text
    for context in graph.get_collection(df.GraphKeys.WHILE_CONTEXT):
        context.frame_name = text


def set_cond_name(graph, text):
    for context in graph.get_collection(df.GraphKeys.COND_CONTEXT):
        context.name = text


SITES = {
    "the file of an op's location": set_location_file,
    "the function of an op's location": set_location_function,
    "the location of a fused step": set_step_location,
    "the name of a fused step": set_step_name,
    "the location of an op in a loop": set_loop_op_location,
    "the location of an op in a cond": set_branch_op_location,
    "a loop's frame name": set_frame_name,
    "a cond's name": set_cond_name,
}


@pytest.fixture
def modes(tmp_path, monkeypatch):
    """Native code written (mode "auto") but never compiled by numba here: the tests run
    each plan fewer times than a background compilation needs, and import the native
    modules themselves (`import_native_modules`)."""
    monkeypatch.setenv("DATAFLOW_CACHE_DIR", str(tmp_path / "cache"))
    previous_mode = compiler.set_mode("force")
    previous_native = compiler.set_native("auto")
    yield
    compiler.set_mode(previous_mode)
    compiler.set_native(previous_native)


def interpreted(graph, fetches, feeds):
    previous = compiler.set_mode("off")
    try:
        with df.Session(graph=graph) as sess:
            return sess.run(fetches, feeds)
    finally:
        compiler.set_mode(previous)


def compiled(graph, fetches, feeds):
    """The compiled run's results, and the source of each native module of its plan."""
    with df.Session(graph=graph) as sess:
        results = sess.run(fetches, feeds)
        regions = sess._compiled_regions(fetches, list(feeds))
    sources = [r.function.source for r in regions if isinstance(r.function, native._Tier)]
    return results, sources


def import_native_modules(sources, directory: pathlib.Path) -> None:
    """Runs each native module's top level, from a file in ``directory`` as the cache would
    (numba's decorator compiles nothing until a call)."""
    pytest.importorskip("numba")
    for k, source in enumerate(sources):
        path = directory / f"native_{k}.py"
        path.write_text(source)
        exec(compile(source, str(path), "exec"), {})  # noqa: S102


def run_with_text(set_text, text, marker):
    """Builds `program`, sets ``text`` with ``set_text``, and checks the compiled run, and the
    import of its native modules, against the interpreter."""
    with df.Graph().as_default() as graph:
        fetches, feeds = program()
    set_text(graph, text)
    want = interpreted(graph, fetches, feeds)
    got, sources = compiled(graph, fetches, feeds)
    assert len(sources) >= 3  # the region's, the cond's and the loop's
    import_native_modules(sources, marker.parent)
    assert not marker.exists(), f"text from the graph ran as code: {text!r}"
    for a, b in zip(got, want):
        assert same_bits(a, b), (a, b)


@pytest.mark.parametrize("site", SITES)
def test_text_that_would_end_a_comment_and_run_a_statement_is_only_a_string(modes, tmp_path, site):
    marker = tmp_path / "ran"
    failures = []
    for text in injections(marker):
        try:
            run_with_text(SITES[site], text, marker)
        except Exception as error:  # a text that breaks the code is a failure too
            failures.append((text, error))
    assert not marker.exists(), "text from the graph ran as code"
    assert not failures


def test_a_name_that_holds_odd_characters_still_makes_a_valid_function_name(modes, tmp_path):
    """Function names come from a cond's or loop's name, reduced to ASCII letters, digits and
    underscores (``str.isalnum`` alone lets through ``²``, which no identifier holds)."""
    for text in ("c²", "ﬁ", "a b", "1st", "é\u200d"):
        run_with_text(set_cond_name, text, tmp_path / "ran")
        run_with_text(set_frame_name, text, tmp_path / "ran")


# Pieces that matter to Python's tokenizer, mixed into random text.
_PIECES = st.sampled_from(
    [
        "\n",
        "\r",
        "\r\n",
        "\x0c",
        "\x00",
        "\u2028",
        "\x85",
        "'",
        '"',
        '"""',
        "'''",
        "\\",
        "#",
        "    ",
        ":",
        "(",
        ")",
        "{",
        "}",
        "\\n",
        "é",
        "\U0001f600",
        "\ud800",
        "pass",
        "x = 1",
    ]
)
_TEXT = st.one_of(
    st.text(max_size=20),
    st.lists(st.one_of(_PIECES, st.text(max_size=3)), max_size=8).map("".join),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(texts=st.fixed_dictionaries({site: _TEXT for site in SITES}))
def test_random_text_in_every_site_never_changes_what_runs(modes, tmp_path, texts):
    marker = tmp_path / "ran"
    with df.Graph().as_default() as graph:
        fetches, feeds = program()
    for site, text in texts.items():
        SITES[site](graph, text + statement(marker))
    want = interpreted(graph, fetches, feeds)
    got, sources = compiled(graph, fetches, feeds)
    import_native_modules(sources, tmp_path)
    assert not marker.exists()
    for a, b in zip(got, want):
        assert same_bits(a, b), (a, b)

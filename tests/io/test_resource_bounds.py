"""load_graph bounds the memory and work a file can make it spend, before spending it."""

from __future__ import annotations

import json
import tracemalloc
import zipfile
from typing import Optional

import numpy as np
import pytest

import dataflow as df
from dataflow.io import dfg  # where the bounds of a graph file are read
from dataflow.io.dfg import GraphFormatError


def graph_file(tmp_path, graph_json: str):
    """A file whose graph.json holds ``graph_json`` (compressed, as save_graph writes it)."""
    path = tmp_path / "hostile.dfg"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("graph.json", graph_json)
    return path


def load_peak(path, **kwargs):
    """``(what load_graph raised or returned, its peak traced allocation in bytes)``."""
    tracemalloc.start()
    try:
        try:
            outcome = df.io.load_graph(path, **kwargs)
        except GraphFormatError as e:
            outcome = e
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_json_array_of_a_million_empty_objects_is_refused_before_any_is_built(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(dfg, "MAX_JSON_VALUES", 100_000)
    text = "[" + "{}," * 1_000_000 + "{}]"  # 3 MB that json.loads would make 70 MB of dicts of
    outcome, peak = load_peak(graph_file(tmp_path, text))
    assert isinstance(outcome, GraphFormatError)
    assert "graph.json holds more than 100000 JSON values" in str(outcome)
    assert peak < 4 * len(text), f"{peak} bytes allocated for {len(text)} bytes of JSON"


def test_counting_the_values_of_text_made_of_brackets_and_commas_does_not_copy_it(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(dfg, "MAX_JSON_VALUES", 100_000)
    text = "[" + "{}," * 3_000_000 + "{}]"
    outcome, peak = load_peak(graph_file(tmp_path, text))
    assert "graph.json holds more than 100000 JSON values" in str(outcome)
    # Reading the member holds its bytes; scanning them costs the arrays of a chunk more.
    assert peak < len(text) + 2**22, f"{peak} bytes allocated for {len(text)} bytes of JSON"


@pytest.mark.parametrize(
    "bomb",
    [
        '["' + '","' * 300_000 + '"]',  # strings
        "[" + "0," * 300_000 + "0]",  # numbers
        "[" + "[]," * 300_000 + "[]]",  # arrays
        '{"k": {' + '"a":1,' * 300_000 + '"a":1}}',  # members of one object
    ],
    ids=["strings", "numbers", "arrays", "members"],
)
def test_every_kind_of_json_value_counts_towards_the_bound(tmp_path, monkeypatch, bomb):
    monkeypatch.setattr(dfg, "MAX_JSON_VALUES", 100_000)
    outcome, _ = load_peak(graph_file(tmp_path, bomb))
    assert isinstance(outcome, GraphFormatError) and "more than 100000 JSON values" in str(outcome)


def test_brackets_commas_and_colons_inside_strings_are_not_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(dfg, "MAX_JSON_VALUES", 100)
    text = '{"format": "dataflow.graph", "version": 1, "ops": [], "note": "' + "[{,:" * 10_000
    text += '\\"\\\\"}'
    outcome, _ = load_peak(graph_file(tmp_path, text))
    assert isinstance(outcome, GraphFormatError) and "unknown field(s) ['note']" in str(outcome)


def test_an_unterminated_string_full_of_escaped_quotes_is_scanned_in_linear_time(tmp_path):
    # A scanner that retried from every quote would take minutes here rather than milliseconds.
    text = '["' + '\\"' * 100_000
    outcome, _ = load_peak(graph_file(tmp_path, text))
    assert isinstance(outcome, GraphFormatError) and "not valid JSON" in str(outcome)


def test_values_nested_deeper_than_the_bound_are_refused_before_parsing(tmp_path):
    def nested(levels):  # an object holding lists, ``levels`` deep in all
        inner = "[" * (levels - 1) + "]" * (levels - 1)
        return '{"format": "dataflow.graph", "version": 1, "ops": [], "x": ' + inner + "}"

    bound = df.io.MAX_JSON_DEPTH
    outcome, _ = load_peak(graph_file(tmp_path, nested(bound + 1)))
    assert isinstance(outcome, GraphFormatError)
    assert f"graph.json is nested too deeply (more than {bound} levels)" in str(outcome)
    outcome, _ = load_peak(graph_file(tmp_path, nested(bound)))
    assert "unknown field(s) ['x']" in str(outcome)


@pytest.mark.parametrize(
    "number, message",
    [("1e400", "the number 1e400 is out of the range of a float64"), ("9" * 5000, "digits")],
)
def test_numbers_python_cannot_hold_exactly_are_refused(tmp_path, number, message):
    text = '{"format": "dataflow.graph", "version": 1, "ops": [], "x": ' + number + "}"
    outcome, _ = load_peak(graph_file(tmp_path, text))
    assert isinstance(outcome, GraphFormatError) and message in str(outcome)


def test_loading_an_array_allocates_the_array_and_a_small_constant_more(tmp_path, fresh_graph):
    size = 2**24
    df.constant(np.arange(size // 4, dtype=np.float32), name="c")
    path = tmp_path / "big.dfg"
    df.io.save_graph(fresh_graph, path)
    loaded, peak = load_peak(path)
    assert loaded.get_operation_by_name("c").attrs["value"].nbytes == size
    assert peak < size + 2**22, f"{peak - size} bytes allocated besides the array"


def spaces_member(path, size: int, declared: Optional[int] = None):
    """A file whose graph.json is ``{``, ``size - 2`` spaces and ``}``, compressed, declaring
    its true size or ``declared`` in the archive's central directory."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("graph.json", b"{" + b" " * (size - 2) + b"}")
        entry = archive.start_dir  # where the central directory will be written
    if declared is not None:
        with open(path, "r+b") as f:
            f.seek(entry + 24)  # the uncompressed size in the central directory entry
            f.write(declared.to_bytes(4, "little"))
    return path


def test_a_member_declared_larger_than_the_bound_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(dfg, "MAX_JSON_BYTES", 2**20)
    outcome, peak = load_peak(spaces_member(tmp_path / "bomb.dfg", 2**23))
    assert isinstance(outcome, GraphFormatError)
    assert f"graph.json is too large ({2**23}B, at most {2**20}B)" in str(outcome)
    assert peak < 2**18


def test_a_member_decompressing_to_more_than_it_declares_costs_its_declared_size(tmp_path):
    outcome, peak = load_peak(spaces_member(tmp_path / "bomb.dfg", 2**23, declared=1000))
    assert isinstance(outcome, GraphFormatError)
    assert "'graph.json' is damaged: Bad CRC-32" in str(outcome)
    assert peak < 2**18, f"{peak} bytes allocated to read a member declared as 1000 bytes"


def one_op_named(tmp_path, name: str):
    document = {
        "format": "dataflow.graph",
        "version": 1,
        "ops": [
            {
                "name": name,
                "type": "NoOp",
                "inputs": [],
                "control_inputs": [],
                "attrs": {},
                "outputs": [],
                "location": {"file": "model.py", "line": 1, "function": "build"},
                "context": None,
            }
        ],
    }
    return graph_file(tmp_path, json.dumps(document))


def test_an_op_name_nested_in_thousands_of_scopes_is_refused_within_the_bound(
    tmp_path, monkeypatch
):
    # Each scope of "a/a/.../a" is a string as long as its depth: 12.5 million characters in
    # all for this 10 KB name, of which the bound lets 1 MiB be made.
    monkeypatch.setattr(dfg, "MAX_SCOPE_BYTES", 2**20)
    outcome, peak = load_peak(one_op_named(tmp_path, "/".join(["a"] * 5000)))
    assert isinstance(outcome, GraphFormatError)
    assert f"the op names lie in scopes of more than {2**20}B in all" in str(outcome)
    assert "is nested 4999 deep" in str(outcome)
    assert peak < 2**23, f"{peak} bytes allocated"


def test_the_scopes_of_loaded_ops_are_names_in_use(tmp_path):
    loaded = df.io.load_graph(one_op_named(tmp_path, "outer/inner/op"))
    with loaded.as_default():
        assert df.no_op(name="outer").name == "outer_1"
        assert df.no_op(name="outer/inner").name == "outer/inner_1"
        assert df.no_op(name="outer/other").name == "outer/other"

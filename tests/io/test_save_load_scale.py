"""Saving and loading do work linear in the size of the graph: counted here, never timed."""

from __future__ import annotations

import gc
import io
import json
import zipfile

import numpy as np
import pytest

import dataflow as df
from dataflow.framework.graph import Operation
from dataflow.io import dfg  # the .dfg format's internals


def many_constants(scalars: int, vectors: int) -> None:
    """``scalars`` float32 scalar constants and ``vectors`` int32 vectors of 2, all distinct."""
    for i in range(scalars):
        df.constant(np.float32(i))
    for i in range(vectors):
        df.constant(np.int32([i, -i]))


def members_of(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_saving_many_arrays_writes_one_npy_header_per_dtype_and_shape(
    tmp_path, fresh_graph, monkeypatch
):
    many_constants(200, 100)
    headers_written = []
    write_array = np.lib.format.write_array
    monkeypatch.setattr(
        np.lib.format,
        "write_array",
        lambda *a, **k: headers_written.append(a[1].shape) or write_array(*a, **k),
    )
    df.io.save_graph(fresh_graph, tmp_path / "g.dfg")
    assert sorted(headers_written) == [(), (2,)]


def test_loading_many_arrays_parses_one_npy_header_per_dtype_and_shape(
    tmp_path, fresh_graph, monkeypatch
):
    many_constants(200, 100)
    df.io.save_graph(fresh_graph, tmp_path / "g.dfg")
    dfg._parse_npy_preamble.cache_clear()
    headers_parsed = []
    read_header = np.lib.format.read_array_header_1_0
    monkeypatch.setattr(
        np.lib.format,
        "read_array_header_1_0",
        lambda *a, **k: headers_parsed.append(1) or read_header(*a, **k),
    )
    loaded = df.io.load_graph(tmp_path / "g.dfg")
    assert len(headers_parsed) == 2
    values = [op.attrs["value"] for op in loaded.get_operations()]
    assert [float(v) for v in values[:200]] == list(range(200))
    assert [v.tolist() for v in values[200:]] == [[i, -i] for i in range(100)]


def test_each_array_member_is_the_npy_file_numpy_writes(tmp_path, fresh_graph):
    arrays = [
        np.arange(6, dtype=np.float64).reshape(2, 3),
        np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3)),
        np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2],
        np.zeros((0, 3), np.uint8),
        np.array([True, False]),
        np.float32(2.5),
    ]
    for i, value in enumerate(arrays):
        df.constant(value, name=f"c{i}")
    df.io.save_graph(fresh_graph, tmp_path / "g.dfg")
    members = members_of(tmp_path / "g.dfg")
    document = json.loads(members["graph.json"])
    for record in document["ops"]:
        value = fresh_graph.get_operation_by_name(record["name"]).attrs["value"]
        expected = io.BytesIO()
        np.lib.format.write_array(expected, np.asarray(value), allow_pickle=False)
        key = record["attrs"]["value"]["array"]["key"]
        assert members[f"arrays/{key}.npy"] == expected.getvalue(), record["name"]


def test_graph_json_holds_the_document_one_op_to_a_line(tmp_path, fresh_graph):
    x = df.placeholder(df.float32, [2], name="x")
    df.identity(df.cond(x[0] > 0, lambda: x, lambda: -x), name="y")
    df.io.save_graph(fresh_graph, tmp_path / "g.dfg")
    text = members_of(tmp_path / "g.dfg")["graph.json"].decode("utf-8")
    document, _ = df.io.graph_to_document(fresh_graph)
    assert json.loads(text) == document
    for record in document["ops"]:
        (line,) = [line for line in text.splitlines() if f'"name": "{record["name"]}"' in line]
        assert json.loads(line.strip().rstrip(",")) == record


def test_loading_an_op_with_many_control_inputs_compares_no_two_ops(
    tmp_path, fresh_graph, monkeypatch
):
    # Deduplicating the control inputs by scanning the ones kept would compare each with all
    # the others: a group of n ops would cost n * n / 2 comparisons.
    x = df.placeholder(df.float32, [], name="x")
    outputs = [df.identity(x) for _ in range(2000)]
    df.group(*outputs, name="all")
    df.io.save_graph(fresh_graph, tmp_path / "g.dfg")
    comparisons = []
    monkeypatch.setattr(
        Operation, "__eq__", lambda a, b: comparisons.append(1) or a is b, raising=False
    )
    loaded = df.io.load_graph(tmp_path / "g.dfg")
    assert [op.name for op in loaded.get_operation_by_name("all").control_inputs] == [
        t.op.name for t in outputs
    ]
    assert len(comparisons) < len(outputs)


def test_a_control_input_listed_twice_is_kept_once_where_it_first_appears(tmp_path, fresh_graph):
    for name in ("a", "b", "c"):
        df.no_op(name=name)
    df.io.save_graph(fresh_graph, tmp_path / "g.dfg")
    members = members_of(tmp_path / "g.dfg")
    document = json.loads(members.pop("graph.json"))
    document["ops"][2]["control_inputs"] = ["b", "a", "b", "a"]
    path = tmp_path / "twice.dfg"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("graph.json", json.dumps(document))
    loaded = df.io.load_graph(path)
    assert [op.name for op in loaded.get_operation_by_name("c").control_inputs] == ["b", "a"]


def collections_started_by(fn) -> list[int]:
    """The generations of the garbage collections that start while ``fn()`` runs."""
    generations = []

    def note(phase, info):
        if phase == "start":
            generations.append(info["generation"])

    gc.collect()  # so that no collection is due before ``fn`` has made a few hundred objects
    gc.callbacks.append(note)
    try:
        fn()
    finally:
        gc.callbacks.remove(note)
    return generations


def test_saving_and_loading_start_no_garbage_collection_on_the_way(tmp_path, fresh_graph):
    # Each collection traverses every object alive, the graph's and the document's, so a
    # collection every few hundred objects made saving and loading a large graph super-linear.
    many_constants(1000, 0)
    path = tmp_path / "g.dfg"
    # At most one, when the collector resumes and finds the objects made meanwhile.
    assert len(collections_started_by(lambda: df.io.save_graph(fresh_graph, path))) <= 1
    assert len(collections_started_by(lambda: df.io.load_graph(path))) <= 1
    assert gc.isenabled()


def test_a_failed_load_leaves_the_collector_running_and_a_paused_one_paused(tmp_path):
    path = tmp_path / "bad.dfg"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("graph.json", '{"format": "dataflow.graph", "version": 1, "ops": [{}]}')
    with pytest.raises(df.io.GraphFormatError, match="op #0: missing field"):
        df.io.load_graph(path)
    assert gc.isenabled()
    gc.disable()
    try:
        df.io.save_graph(df.Graph(), tmp_path / "empty.dfg")
        df.io.load_graph(tmp_path / "empty.dfg")
        assert not gc.isenabled()
    finally:
        gc.enable()

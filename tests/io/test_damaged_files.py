"""A damaged graph file loads as it was saved or raises a GraphFormatError naming the file and,
when the damage lies in one member, that member."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

import dataflow as df
from dataflow.io.dfg import GraphFormatError


@pytest.fixture
def saved(tmp_path, fresh_graph):
    """The bytes of a small saved graph: a placeholder, an array constant, a product."""
    x = df.placeholder(df.float32, [2], name="x")
    df.identity(x * df.constant(np.float32([1.5, -2.0]), name="c"), name="y")
    path = tmp_path / "small.dfg"
    df.io.save_graph(fresh_graph, path)
    return path.read_bytes()


def load_bytes(tmp_path, data: bytes):
    """What loading a file holding ``data`` gives: the graph, or the GraphFormatError."""
    path = tmp_path / "damaged.dfg"
    path.write_bytes(data)
    try:
        return df.io.load_graph(path)
    except GraphFormatError as e:
        assert str(e).startswith(f"{path}: "), str(e)
        return e


def check_runs_as_saved(graph: df.Graph) -> None:
    with df.Session(graph=graph) as sess:
        y = sess.run("y:0", {"x:0": np.float32([2.0, 3.0])})
    np.testing.assert_array_equal(y, np.float32([3.0, -6.0]))


def unexpected_outcomes(tmp_path, variants) -> dict:
    """``{label: exception}`` for the variants whose loading raised anything but a
    GraphFormatError, or gave a graph that does not compute what the saved one did."""
    failures = {}
    for label, data in variants:
        try:
            outcome = load_bytes(tmp_path, data)
            if isinstance(outcome, df.Graph):
                check_runs_as_saved(outcome)
        except Exception as e:  # what the test looks for: anything else
            failures[label] = f"{type(e).__name__}: {e}"
    return failures


def flipped(data: bytes, position: int, mask: int) -> bytes:
    damaged = bytearray(data)
    damaged[position] ^= mask
    return bytes(damaged)


@pytest.mark.parametrize("mask", [0xFF, 0x01], ids=["all-bits", "low-bit"])
def test_each_flipped_byte_loads_as_saved_or_is_a_format_error(tmp_path, saved, mask):
    variants = ((position, flipped(saved, position, mask)) for position in range(len(saved)))
    failures = unexpected_outcomes(tmp_path, variants)
    assert not failures, f"{len(failures)} of {len(saved)} positions: {failures}"


def test_a_file_cut_short_anywhere_is_a_format_error(tmp_path, saved):
    variants = ((length, saved[:length]) for length in range(len(saved)))
    failures = unexpected_outcomes(tmp_path, variants)
    assert not failures, f"{len(failures)} of {len(saved)} lengths: {failures}"
    assert all(isinstance(load_bytes(tmp_path, saved[:n]), GraphFormatError) for n in (0, 100))


def compressed_data_offset(data: bytes, tmp_path, member: str) -> int:
    """Where the compressed bytes of ``member`` begin in the archive ``data``."""
    path = tmp_path / "probe.dfg"
    path.write_bytes(data)
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    name_length = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
    extra_length = int.from_bytes(data[info.header_offset + 28 : info.header_offset + 30], "little")
    return info.header_offset + 30 + name_length + extra_length


@pytest.mark.parametrize("member", ["graph.json", "arrays/a0.npy"])
def test_damage_inside_a_member_names_the_member(tmp_path, saved, member):
    start = compressed_data_offset(saved, tmp_path, member)
    outcome = load_bytes(tmp_path, flipped(saved, start + 2, 0xFF))
    assert isinstance(outcome, GraphFormatError)
    assert f"'{member}' is damaged" in str(outcome), str(outcome)

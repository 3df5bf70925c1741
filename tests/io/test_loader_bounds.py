"""GraphDef import and checkpoint restore refuse what a hostile file declares before they
allocate it, name what is wrong in it, and checkpoint housekeeping stays in its directory."""

from __future__ import annotations

import io
import json
import os
import tracemalloc
import zipfile

import numpy as np
import pytest

import dataflow as df
from dataflow.framework import array_bounds
from dataflow.io.graph_def import GraphDefError, make_ndarray

pytest.importorskip("tensorboardX")
from dataflow.framework.tensorboard_protos import protos  # noqa: E402

FLOAT = 1  # TensorFlow's DataType enum
INT32 = 3


def node(name, op, inputs=(), **attrs):
    p = protos()
    result = p.NodeDef(name=name, op=op)
    result.input.extend(inputs)
    for key, value in attrs.items():
        result.attr[key].CopyFrom(value)
    return result


def graph_def(*nodes):
    result = protos().GraphDef()
    result.node.extend(nodes)
    return result


def dtype(enum=FLOAT):
    return protos().AttrValue(type=enum)


def ints(*values):
    p = protos()
    return p.AttrValue(list=p.AttrValue.ListValue(i=list(values)))


def const(name, values=(1.0,), shape=None):
    """A float Const node; ``shape`` is what its TensorProto declares (values are padded)."""
    p = protos()
    tensor = p.TensorProto(dtype=FLOAT)
    tensor.float_val.extend(values)
    for size in shape or ():
        tensor.tensor_shape.dim.add(size=size)
    return node(name, "Const", dtype=dtype(), value=p.AttrValue(tensor=tensor))


def import_peak(definition, **kwargs):
    """``(what import_graph_def raised or returned, its peak traced allocation in bytes)``."""
    tracemalloc.start()
    try:
        try:
            outcome = df.import_graph_def(definition.SerializeToString(), **kwargs)
        except GraphDefError as e:
            outcome = e
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- GraphDef: sizes -------------------------------------------------------------------------------
def test_a_const_declaring_two_billion_floats_is_refused_before_they_are_allocated():
    hostile = graph_def(const("big", shape=[2**31]))  # 8 GiB from a node of a few bytes
    assert len(hostile.SerializeToString()) < 64
    outcome, peak = import_peak(hostile)
    assert isinstance(outcome, GraphDefError), outcome
    assert "node 'big'" in str(outcome) and "[2147483648]" in str(outcome)
    assert f"larger than {array_bounds.MAX_ARRAY_BYTES}B" in str(outcome)
    assert peak < 2**20, f"{peak} bytes allocated"


def test_the_consts_of_a_graph_def_share_df_io_s_bound_in_all(monkeypatch):
    monkeypatch.setattr(array_bounds, "MAX_ARRAY_BYTES", 2**20)
    fits = graph_def(*(const(f"c{i}", shape=[2**16]) for i in range(4)))  # 4 x 256 KiB
    assert df.import_graph_def(fits, return_elements=["c3:0"])[0].shape.as_list() == [2**16]
    with df.Graph().as_default():
        outcome, peak = import_peak(graph_def(*(const(f"c{i}", shape=[2**16]) for i in range(5))))
    assert isinstance(outcome, GraphDefError), outcome
    assert "node 'c4'" in str(outcome) and f"more than {2**20}B in all" in str(outcome)
    assert peak < 2**19, f"{peak} bytes allocated"


@pytest.mark.parametrize(
    ("shape", "error"),
    [([-5], "dimension -5"), ([1] * 40, "rank 40"), ([2**62, 2**62, 0], "too large")],
    ids=["negative", "rank", "overflowing-product"],
)
def test_a_const_with_an_impossible_shape_is_a_graph_def_error(shape, error):
    outcome, _ = import_peak(graph_def(const("c", shape=shape)))
    assert isinstance(outcome, GraphDefError), outcome
    assert "node 'c'" in str(outcome) and error in str(outcome)


def test_make_ndarray_refuses_what_df_io_would_refuse():
    tensor = protos().TensorProto(dtype=FLOAT)
    tensor.tensor_shape.dim.add(size=2**40)
    with pytest.raises(GraphDefError, match=f"larger than {array_bounds.MAX_ARRAY_BYTES}B"):
        make_ndarray(tensor)


# -- GraphDef: inputs ------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["c:-1", "c:+0", "c: 0", "c:x", "c:", "c:1_0", "c:0:1"])
def test_an_input_whose_output_index_is_not_digits_is_refused(text):
    hostile = graph_def(const("c"), node("y", "Identity", [text], T=dtype()))
    outcome, _ = import_peak(hostile, return_elements=["y:0"])
    assert isinstance(outcome, GraphDefError), outcome
    assert f"'{text}'" in str(outcome) and "node 'y'" in str(outcome)


def test_an_input_naming_an_output_its_node_lacks_is_refused():
    hostile = graph_def(const("c"), node("y", "Identity", ["c:1"], T=dtype()))
    outcome, _ = import_peak(hostile)
    assert isinstance(outcome, GraphDefError), outcome
    assert "node 'y'" in str(outcome) and "'c:1'" in str(outcome) and "1 output" in str(outcome)


def test_return_elements_and_input_map_keys_are_parsed_the_same_strict_way():
    definition = graph_def(const("c"), node("y", "Identity", ["c:0"], T=dtype()))
    for element in ("y:-1", "y:1"):
        with df.Graph().as_default():
            with pytest.raises(GraphDefError, match=f"'{element}'"):
                df.import_graph_def(definition, return_elements=[element])
    with pytest.raises(GraphDefError, match="'c:-1'"):
        df.import_graph_def(definition, input_map={"c:-1": df.constant(2.0)})


def test_well_formed_inputs_still_import():
    definition = graph_def(
        const("c", [1.0, 2.0], [2]),
        node("y", "Identity", ["c"], T=dtype()),
        node("z", "Identity", ["y:0", "^c"], T=dtype()),
    )
    (z,) = df.import_graph_def(definition, return_elements=["z:0"])
    with df.Session() as sess:
        assert sess.run(z).tolist() == [1.0, 2.0]


# -- GraphDef: attributes TensorFlow strips when they hold their default ---------------------------
def _conv(**attrs):
    return node("y", "Conv2D", ["x", "w"], T=dtype(), strides=ints(1, 1, 1, 1), **attrs)


def _string_const(name, text):
    p = protos()
    tensor = p.TensorProto(dtype=7, string_val=[text])
    return node(name, "Const", dtype=dtype(7), value=p.AttrValue(tensor=tensor))


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        (
            [const("a", [1, 2, 3, 4], [2, 2]), node("y", "MatMul", ["a", "a"], T=dtype())],
            [[7, 10], [15, 22]],
        ),
        ([const("a", [1, 2, 3, 4], [2, 2]), node("y", "Shape", ["a"], T=dtype())], [2, 2]),
        (
            [
                const("a", [1, 2], [2]),
                node("y", "Pack", ["a", "a"], T=dtype(), N=protos().AttrValue(i=2)),
            ],
            [[1, 2], [1, 2]],
        ),
        (
            [const("a", [1.5]), node("y", "AsString", ["a"], T=dtype())],
            b"1.500000",
        ),  # tf.as_string(1.5)
        (
            [
                _string_const("s", b"aXa"),
                node(
                    "y",
                    "StaticRegexReplace",
                    ["s"],
                    pattern=protos().AttrValue(s=b"a"),
                    rewrite=protos().AttrValue(s=b"b"),
                ),
            ],
            b"bXb",
        ),
        (
            [
                const("x", [1, 2, 3, 4], [1, 2, 2, 1]),
                const("w", [2], [1, 1, 1, 1]),
                _conv(padding=protos().AttrValue(s=b"SAME")),
            ],
            [[[[2], [4]], [[6], [8]]]],
        ),
    ],
    ids=["MatMul", "Shape", "Pack", "AsString", "StaticRegexReplace", "Conv2D"],
)
def test_attributes_tensorflow_stripped_as_defaults_take_tensorflows_defaults(nodes, expected):
    (y,) = df.import_graph_def(graph_def(*nodes), return_elements=["y:0"])
    with df.Session() as sess:
        value = sess.run(y)
    assert (value == expected) if isinstance(expected, bytes) else value.tolist() == expected


def test_a_missing_attribute_without_a_default_is_a_graph_def_error_naming_it():
    definition = graph_def(const("x", shape=[1, 1, 1, 1]), const("w", shape=[1, 1, 1, 1]), _conv())
    outcome, _ = import_peak(definition)
    assert isinstance(outcome, GraphDefError), outcome
    message = str(outcome)
    assert "Conv2D node 'y'" in message and "attribute 'padding'" in message
    no_dtype = graph_def(
        node("c", "Const", value=protos().AttrValue(tensor=protos().TensorProto(dtype=FLOAT)))
    )
    with df.Graph().as_default():
        outcome, _ = import_peak(no_dtype)
    assert isinstance(outcome, GraphDefError) and "Const node 'c'" in str(outcome)
    assert "attribute 'dtype'" in str(outcome)


# -- checkpoints -----------------------------------------------------------------------------------
def npy_header(shape, dtype="<f4") -> bytes:
    stream = io.BytesIO()
    header = {"descr": dtype, "fortran_order": False, "shape": tuple(shape)}
    np.lib.format.write_array_header_1_0(stream, header)
    return stream.getvalue()


def write_checkpoint(path, members: dict, compression=zipfile.ZIP_DEFLATED):
    """A checkpoint whose member ``name.npy`` holds each ``members[name]``: bytes, or a pair
    (header bytes, number of zero bytes after it), streamed so that building it stays small."""
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, content in members.items():
            with archive.open(name + ".npy", "w", force_zip64=True) as f:
                if isinstance(content, bytes):
                    f.write(content)
                    continue
                header, zeros = content
                f.write(header)
                chunk = bytes(2**20)
                for start in range(0, zeros, len(chunk)):
                    f.write(chunk[: zeros - start])


def restore_peak(saver, path):
    """``(what restore raised, its peak traced allocation in bytes)``."""
    with df.Session() as sess:
        tracemalloc.start()
        try:
            try:
                saver.restore(sess, path)
                outcome = None
            except (ValueError, df.errors.OpError) as e:
                outcome = e
            return outcome, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def test_a_checkpoint_of_the_wrong_shape_is_refused_before_it_is_inflated(tmp_path):
    df.Variable(np.zeros(2, np.float32), name="v")
    saver = df.train.Saver()
    elements = 2**26  # 256 MiB of zeros, which deflate to a quarter of a megabyte
    write_checkpoint(tmp_path / "bomb.npz", {"v": (npy_header([elements]), 4 * elements)})
    assert os.path.getsize(tmp_path / "bomb.npz") < 2**20
    outcome, peak = restore_peak(saver, str(tmp_path / "bomb"))
    assert isinstance(outcome, df.errors.InvalidArgumentError), outcome
    assert f"Variable v has shape (2,) but the checkpoint holds shape [{elements}]" in str(outcome)
    assert peak < 2**22, f"{peak} bytes allocated"


def test_a_checkpoint_for_a_variable_of_unknown_shape_is_bounded_as_df_io_bounds(
    tmp_path, monkeypatch
):
    initial = df.placeholder_with_default(np.zeros(2, np.float32), [None])
    df.Variable(initial, validate_shape=False, name="v")
    saver = df.train.Saver()
    monkeypatch.setattr(array_bounds, "MAX_ARRAY_BYTES", 2**20)
    write_checkpoint(tmp_path / "big.npz", {"v": (npy_header([2**22]), 2**24)})
    outcome, peak = restore_peak(saver, str(tmp_path / "big"))
    assert isinstance(outcome, df.errors.InvalidArgumentError), outcome
    assert f"larger than {2**20}B" in str(outcome) and "Variable v" in str(outcome)
    assert peak < 2**19, f"{peak} bytes allocated"
    write_checkpoint(
        tmp_path / "fits.npz", {"v": npy_header([3]) + np.float32([1, 2, 3]).tobytes()}
    )
    with df.Session() as sess:
        saver.restore(sess, str(tmp_path / "fits"))
        assert sess.run("v:0").tolist() == [1, 2, 3]


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (npy_header([2**28]) + bytes(8), "truncated"),  # 1 GiB declared, 8 bytes there
        (npy_header([2]) + bytes(12), "more bytes than its header declares"),
        (b"\x93NUMPY\x01\x00\xff\xff" + b" " * 100, "NPY header"),
        (b"not an array", "not a valid NPY file"),
    ],
    ids=["truncated", "too-long", "huge-header", "not-npy"],
)
def test_a_damaged_checkpoint_member_is_a_clear_error_without_a_large_allocation(
    tmp_path, content, error
):
    initial = df.placeholder_with_default(np.zeros(2, np.float32), [None])
    df.Variable(initial, validate_shape=False, name="v")
    saver = df.train.Saver()
    write_checkpoint(tmp_path / "bad.npz", {"v": content}, compression=zipfile.ZIP_STORED)
    outcome, peak = restore_peak(saver, str(tmp_path / "bad"))
    assert isinstance(outcome, ValueError), outcome
    assert f"Checkpoint {tmp_path / 'bad.npz'} is not readable" in str(outcome)
    assert error in str(outcome) and "'v.npy'" in str(outcome)
    assert peak < 2**20, f"{peak} bytes allocated"


def test_a_checkpoint_missing_a_variable_or_of_another_dtype_is_refused_as_before(tmp_path):
    df.Variable(np.zeros(2, np.float32), name="v")
    saver = df.train.Saver()
    write_checkpoint(tmp_path / "other.npz", {"w": npy_header([2]) + bytes(8)})
    outcome, _ = restore_peak(saver, str(tmp_path / "other"))
    assert isinstance(outcome, df.errors.NotFoundError) and "Key v not found" in str(outcome)
    write_checkpoint(tmp_path / "ints.npz", {"v": npy_header([2], "<i4") + bytes(8)})
    outcome, _ = restore_peak(saver, str(tmp_path / "ints"))
    assert isinstance(outcome, df.errors.InvalidArgumentError), outcome
    assert "Variable v is float32 but the checkpoint holds int32" in str(outcome)


def test_a_checkpoint_of_object_arrays_is_refused_without_reading_their_bytes(tmp_path):
    initial = df.placeholder_with_default(np.zeros(2, np.float32), [None])
    df.Variable(initial, validate_shape=False, name="v")
    saver = df.train.Saver()
    write_checkpoint(tmp_path / "objects.npz", {"v": npy_header([2], "|O") + bytes(16)})
    outcome, _ = restore_peak(saver, str(tmp_path / "objects"))
    assert isinstance(outcome, df.errors.InvalidArgumentError), outcome
    assert "Variable v: the checkpoint holds an array of Python objects" in str(outcome)


# -- checkpoint housekeeping ---------------------------------------------------------------------
def test_max_to_keep_never_deletes_a_file_outside_the_checkpoint_directory(tmp_path):
    directory, outside = tmp_path / "ckpt", tmp_path / "elsewhere"
    directory.mkdir()
    outside.mkdir()
    victims = [outside / "precious.npz", tmp_path / "sibling.npz"]
    for victim in victims:
        victim.write_bytes(b"not yours")
    df.Variable(np.zeros(2, np.float32), name="v")
    saver = df.train.Saver(max_to_keep=1)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        own = saver.save(sess, str(directory / "model"), global_step=1)
        # A hostile index names a file elsewhere, by an absolute path and by a relative one.
        index = {
            "model_checkpoint_path": "model-1",
            "all_model_checkpoint_paths": [str(outside / "precious"), "../sibling", "model-1"],
        }
        (directory / "checkpoint").write_text(json.dumps(index))
        state = df.train.get_checkpoint_state(str(directory))
        restarted = df.train.Saver(max_to_keep=1)
        restarted.recover_last_checkpoints(state.all_model_checkpoint_paths)
        restarted.save(sess, str(directory / "model"), global_step=2)
        restarted.save(sess, str(directory / "model"), global_step=3)
    assert all(victim.read_bytes() == b"not yours" for victim in victims)
    # Its own older checkpoints in the directory are still deleted.
    assert not os.path.exists(own + ".npz") and not (directory / "model-2.npz").exists()
    assert (directory / "model-3.npz").exists()
    assert df.train.latest_checkpoint(str(directory)) == str(directory / "model-3")

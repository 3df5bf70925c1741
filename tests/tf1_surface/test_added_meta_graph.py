"""Meta graphs: tf.train.export_meta_graph, tf.train.import_meta_graph, MetaGraphDef,
TensorInfo and the meta graph Saver.save writes (expected behaviour from TensorFlow 2.21's
tf.compat.v1 in graph mode; the file is dataflow's format, not TensorFlow's)."""

import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _model():
    """w = [1, 2]; loss = sum(x * w); one GradientDescent step of 0.1 subtracts 0.1 * x."""
    w = tf.Variable([1.0, 2.0], name="w")
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    loss = tf.reduce_sum(x * w, name="loss")
    tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
    tf.add_to_collection("my_train_op", step)
    return w, x, step


def _save_trained_model(path):
    with tf.Graph().as_default():
        w, x, step = _model()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step, {x: [[1.0, 1.0]]})
            return saver.save(sess, path)


def test_saver_save_writes_a_meta_graph_that_import_meta_graph_restores_and_trains(tmp_path):
    path = _save_trained_model(str(tmp_path / "model"))
    assert os.path.exists(path + ".meta")
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(path + ".meta")
        assert isinstance(saver, tf.train.Saver)
        assert [v.name for v in tf.global_variables()] == ["w:0"]
        assert [v.name for v in tf.trainable_variables()] == ["w:0"]
        (train_op,) = tf.get_collection("my_train_op")
        assert train_op is graph.get_operation_by_name("train")
        assert tf.get_collection(tf.GraphKeys.LOSSES) == [graph.get_tensor_by_name("loss:0")]
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_allclose(sess.run("w:0"), [0.9, 1.9], rtol=1e-6)
            assert sess.run("loss:0", {"x:0": [[1.0, 2.0]]}) == pytest.approx(4.7)
            sess.run(train_op, {"x:0": [[1.0, 1.0]]})
            np.testing.assert_allclose(sess.run("w:0"), [0.8, 1.8], rtol=1e-6)
            # and it saves again, meta graph included
            again = saver.save(sess, str(tmp_path / "again"))
        assert os.path.exists(again + ".meta")


def test_import_meta_graph_with_import_scope_prefixes_every_name(tmp_path):
    path = _save_trained_model(str(tmp_path / "model"))
    with tf.Graph().as_default() as graph:
        first = tf.train.import_meta_graph(path + ".meta")
        second = tf.train.import_meta_graph(path + ".meta", import_scope="imp")
        assert [v.name for v in tf.global_variables()] == ["w:0", "imp/w:0"]
        assert tf.get_collection("my_train_op")[1].name == "imp/train"
        with tf.Session() as sess:
            first.restore(sess, path)
            second.restore(sess, path)  # the checkpoint's own names, without the scope
            sess.run(graph.get_operation_by_name("imp/train"), {"imp/x:0": [[1.0, 1.0]]})
            np.testing.assert_allclose(sess.run("imp/w:0"), [0.8, 1.8], rtol=1e-6)
            np.testing.assert_allclose(sess.run("w:0"), [0.9, 1.9], rtol=1e-6)


def test_import_meta_graph_refuses_a_name_already_in_the_graph_and_adds_nothing(tmp_path):
    path = _save_trained_model(str(tmp_path / "model"))
    with tf.Graph().as_default() as graph:
        tf.constant(1.0, name="loss")
        with pytest.raises(ValueError, match="'loss'.*already has an op of this name"):
            tf.train.import_meta_graph(path + ".meta")
        assert [op.name for op in graph.get_operations()] == ["loss"]
        assert tf.global_variables() == []


def test_import_meta_graph_returns_none_for_a_graph_without_variables():
    with tf.Graph().as_default():
        tf.constant(1.0, name="c")
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as graph:
        assert tf.train.import_meta_graph(meta) is None
        with tf.Session() as sess:
            assert sess.run(graph.get_tensor_by_name("c:0")) == 1.0


def test_import_meta_graph_keeps_loops_and_conds_working_under_a_scope():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        _, total = tf.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + x), [0, 0.0])
        tf.identity(tf.cond(x > 0, lambda: total * 2.0, lambda: total - 1.0), name="out")
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(meta, import_scope="a")
        tf.train.import_meta_graph(meta, import_scope="b")
        with tf.Session() as sess:
            got = sess.run(["a/out:0", "b/out:0"], {"a/x:0": 1.5, "b/x:0": -1.0})
        assert got == [12.0, -5.0]
        (g,) = tf.gradients(graph.get_tensor_by_name("a/out:0"), graph.get_tensor_by_name("a/x:0"))
        with tf.Session() as sess:
            assert sess.run(g, {"a/x:0": 1.5}) == 8.0


def test_saver_save_parameters_do_what_tensorflow_does(tmp_path):
    with tf.Graph().as_default():
        w = tf.Variable(3.0, name="w")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(w.initializer)
            p = saver.save(sess, str(tmp_path / "a"), write_meta_graph=False, write_state=False)
            assert sorted(os.listdir(tmp_path)) == ["a.npz"]
            p = saver.save(sess, str(tmp_path / "b"), global_step=7, meta_graph_suffix="graph")
            assert p.endswith("b-7")
            assert sorted(os.listdir(tmp_path)) == ["a.npz", "b-7.graph", "b-7.npz", "checkpoint"]
            with pytest.raises(ValueError, match="strip_default_attrs"):
                saver.save(sess, str(tmp_path / "c"), strip_default_attrs=True)
            assert not os.path.exists(tmp_path / "c.npz"), "refused before anything is written"
            saver.save(sess, str(tmp_path / "c"), write_meta_graph=False, strip_default_attrs=True)
            meta = saver.export_meta_graph(str(tmp_path / "d.meta"), collection_list=[])
    assert meta.saver_def.variables == {"w": "w"}
    assert meta.collection_def == {}
    parsed = tf.MetaGraphDef()
    data = open(tmp_path / "d.meta", "rb").read()
    assert parsed.ParseFromString(data) == len(data)
    assert parsed == meta


def test_saver_settings_come_back_with_the_imported_saver(tmp_path):
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        tf.Variable(2.0, name="b")  # not saved by this saver
        saver = tf.train.Saver({"renamed": a}, max_to_keep=1, pad_step_number=True)
        meta = saver.export_meta_graph()
    with tf.Graph().as_default():
        imported = tf.train.import_meta_graph(meta)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in (1, 2):
                last = imported.save(sess, str(tmp_path / "m"), global_step=step)
        assert last.endswith("m-00000002")
        assert imported.last_checkpoints == [last]
        assert np.load(last + ".npz").files == ["renamed"]


def test_export_meta_graph_options(tmp_path):
    with tf.Graph().as_default() as graph:
        with tf.device("/cpu:0"):
            tf.constant(1.0, name="outside")
            with tf.name_scope("tower"):
                v = tf.Variable(2.0, name="v")
                tf.multiply(v, 3.0, name="y")
        tf.add_to_collection("notes", "hello")
        tf.add_to_collection("skipped", "no")
        meta = tf.train.export_meta_graph(
            str(tmp_path / "m.meta"),
            graph=graph,
            export_scope="tower",
            clear_devices=True,
            collection_list=["notes", "variables"],
            meta_info_def={"meta_graph_version": "v1", "tags": ["serve"]},
        )
        with pytest.raises(ValueError, match="as_text"):
            tf.train.export_meta_graph(as_text=True)
        with pytest.raises(ValueError, match="strip_default_attrs"):
            tf.train.export_meta_graph(strip_default_attrs=True)
        with pytest.raises(TypeError, match="unexpected keyword"):
            tf.train.export_meta_graph(bogus=1)
    assert meta.collection_def == {"notes": 1, "variables": 1}
    loaded = tf.MetaGraphDef.FromString(open(tmp_path / "m.meta", "rb").read())
    assert loaded.meta_info_def.tags == ["serve"]
    built = loaded.graph()
    names = [op.name for op in built.get_operations()]
    assert "v" in names and "y" in names and "outside" not in names
    assert not any(name.startswith("tower") for name in names)
    assert all(op.device == "" for op in built.get_operations())
    assert built.get_collection("notes") == ["hello"]
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(str(tmp_path / "m.meta"), import_scope="t2")
        assert [v.name for v in tf.global_variables()] == ["t2/v:0"]
        assert saver is not None
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run("t2/y:0") == 6.0


def test_import_meta_graph_restore_collections_predicate_and_bad_arguments():
    with tf.Graph().as_default():
        tf.add_to_collection("keep", tf.constant(1.0, name="c"))
        tf.add_to_collection("drop", "x")
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(meta, restore_collections_predicate=lambda k: k != "drop")
        assert graph.get_all_collection_keys() == ["keep"]
        with pytest.raises(TypeError, match="unexpected keyword"):
            tf.train.import_meta_graph(meta, input_map={})


def test_tensor_info_names_a_tensor_in_a_signature():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        info = tf.TensorInfo.from_tensor(x)
        meta = tf.train.export_meta_graph()
    assert (info.name, info.dtype, info.tensor_shape.as_list()) == ("x:0", tf.float32, [None, 3])
    assert tf.TensorInfo(name="y:0", dtype="int64").tensor_shape.rank is None
    meta.signature_def["serving_default"] = {"inputs": {"x": info}, "method_name": "predict"}
    parsed = tf.MetaGraphDef.FromString(meta.SerializeToString())
    sig = parsed.signature_def["serving_default"]
    assert sig.inputs["x"] == info and sig.method_name == "predict"
    with pytest.raises(TypeError):
        tf.TensorInfo(name=3)


# -- hostile files ---------------------------------------------------------------------------------
class _Payload:
    """Unpickling this creates a marker file: what a pickle in a file could do to a reader."""

    marker = None

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _meta_file(path, meta_json, graph_bytes) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("meta_graph.json", meta_json)
        archive.writestr("graph.dfg", graph_bytes)
    return str(path)


def _graph_archive(document, members=()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("graph.json", json.dumps(document))
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


_META_JSON = json.dumps({"format": "dataflow.meta_graph", "version": 1, "saver_def": None})


def test_a_hostile_meta_file_runs_no_code_and_leaves_the_graph_unchanged(tmp_path):
    marker = str(tmp_path / "pwned")
    _Payload.marker = marker
    pickled = pickle.dumps(_Payload())
    npy = io.BytesIO()
    np.lib.format.write_array(npy, np.array([_Payload()], dtype=object), allow_pickle=True)
    const = {
        "name": "c",
        "type": "Const",
        "inputs": [],
        "control_inputs": [],
        "attrs": {
            "value": {"array": {"key": "a0", "dtype": "object", "shape": [1], "scalar": False}},
            "dtype": {"dtype": "float32"},
        },
        "location": {"file": "f", "line": 1, "function": "g"},
        "context": None,
    }
    graph_doc = {"format": "dataflow.graph", "version": 1, "ops": [const]}
    hostile = {
        "pickle instead of json": _meta_file(tmp_path / "a.meta", pickled, b""),
        "pickled array": _meta_file(
            tmp_path / "b.meta",
            _META_JSON,
            _graph_archive(graph_doc, [("arrays/a0.npy", npy.getvalue())]),
        ),
        "unknown op": _meta_file(
            tmp_path / "c.meta",
            _META_JSON,
            _graph_archive(dict(graph_doc, ops=[dict(const, type="os.system")])),
        ),
        "pickle as graph": _meta_file(tmp_path / "d.meta", _META_JSON, pickled),
        "bad saver": _meta_file(
            tmp_path / "e.meta",
            json.dumps({"format": "dataflow.meta_graph", "version": 1, "saver_def": {"x": 1}}),
            b"",
        ),
        "bad saver version": _meta_file(
            tmp_path / "g.meta",
            json.dumps(
                {"format": "dataflow.meta_graph", "version": 1, "saver_def": {"version": 9}}
            ),
            b"",
        ),
        "not a zip": str(tmp_path / "f.meta"),
    }
    (tmp_path / "f.meta").write_bytes(pickled)
    for what, path in hostile.items():
        with tf.Graph().as_default() as graph:
            with pytest.raises(df.io.GraphFormatError) as raised:
                tf.train.import_meta_graph(path)
            assert str(raised.value).startswith(path), what
            assert graph.get_operations() == [], what
    assert not os.path.exists(marker)


def test_a_meta_file_printing_to_a_file_is_refused(tmp_path):
    target = tmp_path / "written"
    with tf.Graph().as_default():
        tf.print("x", output_stream=f"file://{target}", name="p")
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as graph:
        with pytest.raises(df.io.GraphFormatError, match="file"):
            tf.train.import_meta_graph(meta)
        assert graph.get_operations() == []


def test_a_meta_file_declaring_a_huge_member_is_refused_before_reading_it(tmp_path):
    path = _meta_file(tmp_path / "m.meta", _META_JSON, b"")
    data = bytearray(open(path, "rb").read())
    # Make meta_graph.json declare 2**31 bytes (its size field in the central directory).
    central = data.rfind(b"PK\x01\x02", 0, data.rfind(b"meta_graph.json") + 1)
    data[central + 24 : central + 28] = (2**31).to_bytes(4, "little")
    with pytest.raises(df.io.GraphFormatError, match="too large"):
        tf.MetaGraphDef.FromString(bytes(data))


def test_import_meta_graph_of_a_missing_file_or_a_bad_scope_is_a_clear_error(tmp_path):
    with tf.Graph().as_default():
        with pytest.raises(FileNotFoundError, match="no file"):
            tf.train.import_meta_graph(str(tmp_path / "nothing.meta"))
        tf.constant(1.0, name="c")
        meta = tf.train.export_meta_graph()
        with pytest.raises(ValueError, match="import_scope"):
            tf.train.import_meta_graph(meta, import_scope="not a scope!")

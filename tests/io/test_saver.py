"""df.train.Saver checkpoints and df.graph_util.convert_variables_to_constants (freezing)."""

from __future__ import annotations

import os
import time
import zipfile

import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from forking import in_forked_child

import dataflow as df


def make_model():
    w = df.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    b = df.Variable(np.float32([0.5, -0.5]), name="b")
    x = df.placeholder(df.float32, [None, 3], name="x")
    y = df.identity(df.matmul(x, w) + b, name="y")
    return w, b, x, y


def test_save_then_restore_brings_back_the_values(tmp_path):
    w, b, x, y = make_model()
    saver = df.train.Saver()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        sess.run(w.assign(w * 3.0))
        path = saver.save(sess, str(tmp_path / "model"))
        expected = sess.run([w, b])
    assert path == str(tmp_path / "model") and os.path.exists(path + ".npz")
    with df.Session() as sess:
        saver.restore(sess, path)
        for got, want in zip(sess.run([w, b]), expected):
            assert_bitwise_equal(got, want)


def test_the_checkpoint_is_a_plain_npz_readable_without_pickle(tmp_path):
    w, b, _, _ = make_model()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        path = df.train.Saver().save(sess, str(tmp_path / "m"))
    with np.load(path + ".npz", allow_pickle=False) as data:
        assert sorted(data.files) == ["b", "w"]
        assert data["w"].dtype == np.float32 and data["w"].shape == (3, 2)


def test_global_step_names_the_checkpoint_and_latest_checkpoint_finds_it(tmp_path):
    make_model()
    saver = df.train.Saver(max_to_keep=2)
    assert df.train.latest_checkpoint(str(tmp_path)) is None
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        paths = [saver.save(sess, str(tmp_path / "model"), global_step=s) for s in (1, 2, 3)]
    assert paths[-1].endswith("model-3")
    assert df.train.latest_checkpoint(str(tmp_path)) == paths[-1]
    assert not os.path.exists(paths[0] + ".npz"), "max_to_keep=2 deletes the oldest"
    assert saver.last_checkpoints == paths[1:]
    assert sorted(os.listdir(tmp_path)) == [
        "checkpoint",
        "model-2.meta",
        "model-2.npz",
        "model-3.meta",
        "model-3.npz",
    ], "each checkpoint has its meta graph, deleted with it"


def test_global_step_may_be_a_variable(tmp_path):
    make_model()
    step = df.Variable(41, trainable=False, name="global_step")
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        path = df.train.Saver().save(sess, str(tmp_path / "m"), global_step=step)
    assert path.endswith("m-41")


def test_a_crash_during_save_leaves_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    w, _, _, _ = make_model()
    saver = df.train.Saver()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model"))
        before = open(path + ".npz", "rb").read()
        sess.run(w.assign(w + 1.0))

        def crash(*args, **kwargs):
            raise OSError("disk unplugged")

        monkeypatch.setattr(zipfile.ZipFile, "writestr", crash)
        with pytest.raises(OSError, match="unplugged"):
            saver.save(sess, str(tmp_path / "model"))
    assert open(path + ".npz", "rb").read() == before
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.meta", "model.npz"], (
        "no temp file is left"
    )


def crash_while_saving(saver, sess, save_path) -> None:
    """Runs ``saver.save`` in a forked child that dies in the middle of writing the checkpoint,
    as a killed process would: no cleanup code runs."""

    def die(*args, **kwargs):
        os._exit(1)

    def save_and_die():
        zipfile.ZipFile.writestr = die
        return saver.save(sess, save_path)

    assert in_forked_child(save_and_die) == "", "the child died before it could report"


def temporary_files(directory) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".part"))


def age(path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_later_save_removes_what_a_crashed_save_left(tmp_path):
    make_model()
    saver = df.train.Saver()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        crash_while_saving(saver, sess, str(tmp_path / "model"))
        (left,) = temporary_files(tmp_path)
        age(tmp_path / left, df.io.STALE_TEMPORARY_SECONDS + 1)
        left_by_an_earlier_version = tmp_path / f".tmp-{'0' * 16}.part"  # no pid in its name
        left_by_an_earlier_version.write_bytes(b"")
        age(left_by_an_earlier_version, df.io.STALE_TEMPORARY_SECONDS + 1)
        saver.save(sess, str(tmp_path / "model"))
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model.meta", "model.npz"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_save_leaves_the_temporary_files_that_may_still_be_written(tmp_path):
    make_model()
    saver = df.train.Saver()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        crash_while_saving(saver, sess, str(tmp_path / "model"))
        (just_crashed,) = temporary_files(tmp_path)  # its writer may be on another machine
        live_writer = f".tmp-{os.getpid()}-{'0' * 16}.part"  # a writer in a live process
        someone_elses = ".tmp-notes.part"
        for name in (live_writer, someone_elses):
            (tmp_path / name).write_bytes(b"")
            age(tmp_path / name, 10 * df.io.STALE_TEMPORARY_SECONDS)
        saver.save(sess, str(tmp_path / "model"))
    assert temporary_files(tmp_path) == sorted([just_crashed, live_writer, someone_elses])


def test_restore_checks_names_dtypes_and_shapes(tmp_path):
    with df.Graph().as_default():
        make_model()
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            path = df.train.Saver().save(sess, str(tmp_path / "m"))
    with df.Graph().as_default():
        df.Variable(np.zeros((3, 2), np.float32), name="w")
        df.Variable(np.zeros(2, np.float32), name="other")
        with df.Session() as sess, pytest.raises(df.errors.NotFoundError, match="other"):
            df.train.Saver().restore(sess, path)
    with df.Graph().as_default():
        df.Variable(np.zeros((3, 2), np.float64), name="w")
        with df.Session() as sess, pytest.raises(df.errors.InvalidArgumentError, match="float"):
            df.train.Saver().restore(sess, path)
    with df.Graph().as_default():
        df.Variable(np.zeros((2, 3), np.float32), name="w")
        with df.Session() as sess, pytest.raises(df.errors.InvalidArgumentError, match="shape"):
            df.train.Saver().restore(sess, path)
    with df.Graph().as_default():
        df.Variable(np.zeros((3, 2), np.float32), name="w")
        with df.Session() as sess, pytest.raises(df.errors.NotFoundError):
            df.train.Saver().restore(sess, str(tmp_path / "missing"))


def test_a_failed_restore_changes_no_variable(tmp_path):
    with df.Graph().as_default():
        df.Variable(np.ones(2, np.float32), name="a")
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            path = df.train.Saver().save(sess, str(tmp_path / "m"))
    with df.Graph().as_default():
        a = df.Variable(np.zeros(2, np.float32), name="a")
        df.Variable(np.zeros(2, np.float32), name="b")
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            with pytest.raises(df.errors.NotFoundError):
                df.train.Saver().restore(sess, path)
            assert sess.run(a).tolist() == [0.0, 0.0]


def test_var_list_as_a_dict_renames_in_the_checkpoint(tmp_path):
    w, _, _, _ = make_model()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        path = df.train.Saver({"layer/kernel": w}).save(sess, str(tmp_path / "m"))
    with np.load(path + ".npz", allow_pickle=False) as data:
        assert data.files == ["layer/kernel"]


def test_saving_an_uninitialized_variable_fails(tmp_path):
    make_model()
    with df.Session() as sess, pytest.raises(df.errors.FailedPreconditionError, match="w"):
        df.train.Saver().save(sess, str(tmp_path / "m"))


def test_a_checkpoint_restores_into_a_loaded_graph(tmp_path, fresh_graph, round_trip):
    _, _, x, y = make_model()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        path = df.train.Saver().save(sess, str(tmp_path / "m"))
        feed = np.ones((2, 3), np.float32)
        expected = sess.run(y, {x: feed})
    loaded = round_trip(fresh_graph)
    with loaded.as_default(), df.Session() as sess:
        df.train.Saver().restore(sess, path)
        assert_bitwise_equal(sess.run("y:0", {"x:0": feed}), expected)


# -- freezing ------------------------------------------------------------------------------------
def test_freezing_turns_variables_into_constants_with_the_same_results(tmp_path):
    w, b, x, y = make_model()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        sess.run(w.assign(w - 2.0))
        frozen = df.graph_util.convert_variables_to_constants(sess, sess.graph, ["y"])
        feed = np.arange(6, dtype=np.float32).reshape(2, 3)
        expected = sess.run(y, {x: feed})
    types = {op.type for op in frozen.get_operations()}
    assert not types & {"VarHandleOp", "ReadVariableOp", "Assign"}
    assert frozen.get_collection(df.GraphKeys.GLOBAL_VARIABLES) == []
    path = tmp_path / "frozen.dfg"
    df.io.save_graph(frozen, path)
    with df.Session(graph=df.io.load_graph(path)) as sess:
        assert_bitwise_equal(sess.run("y:0", {"x:0": feed}), expected)


def test_freezing_keeps_variables_read_inside_conds_and_loops_gated():
    v = df.Variable(np.float32(2.0), name="v")
    p = df.placeholder(df.bool, [], name="p")
    branch = df.cond(p, lambda: v.read_value(), lambda: df.constant(-1.0))
    looped = df.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * v), [0, 1.0])[1]
    out = df.identity(branch + looped, name="out")
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        expected = [sess.run(out, {p: flag}) for flag in (True, False)]
        frozen = df.graph_util.convert_variables_to_constants(sess, sess.graph, ["out:0"])
    assert frozen.get_collection(df.GraphKeys.WHILE_CONTEXT)
    with df.Session(graph=frozen) as sess:
        got = [sess.run("out:0", {"p:0": flag}) for flag in (True, False)]
    for a, b in zip(got, expected):
        assert_bitwise_equal(a, b)


def test_freezing_an_output_that_writes_a_variable_is_refused():
    v = df.Variable(1.0, name="v")
    df.identity(v.assign_add(1.0), name="bump")
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        with pytest.raises(ValueError, match="writes a variable"):
            df.graph_util.convert_variables_to_constants(sess, sess.graph, ["bump"])


def test_freezing_and_extracting_ignore_py_funcs_the_outputs_do_not_need():
    w, b, x, y = make_model()
    df.py_func(lambda a: a, [x], df.float32, name="unrelated")  # cannot be saved
    feed = np.ones((2, 3), np.float32)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        expected = sess.run(y, {x: feed})
        frozen = df.graph_util.convert_variables_to_constants(sess, sess.graph, ["y"])
        extracted = df.graph_util.extract_sub_graph(sess.graph, ["y"])
    assert "PyFunc" not in {op.type for op in frozen.get_operations()}
    with df.Session(graph=frozen) as sess:
        assert_bitwise_equal(sess.run("y:0", {"x:0": feed}), expected)
    assert "PyFunc" not in {op.type for op in extracted.get_operations()}
    assert "ReadVariableOp" in {op.type for op in extracted.get_operations()}


def test_extracting_keeps_variables_and_their_reads(fresh_graph):
    v = df.Variable(np.float32(2.0), name="v")
    p = df.placeholder(df.bool, [], name="p")
    df.identity(df.cond(p, lambda: v.read_value() * 3.0, lambda: df.constant(-1.0)), name="out")
    extracted = df.graph_util.extract_sub_graph(fresh_graph, ["out", v.initializer.name])
    assert "ReadVariableOp" in {op.type for op in extracted.get_operations()}
    with df.Session(graph=extracted) as sess:
        sess.run(v.initializer.name)
        assert sess.run("out:0", {"p:0": True}) == 6.0


def test_frozen_and_extracted_graphs_keep_the_records_of_their_conds(fresh_graph):
    v = df.Variable(np.float32(2.0), name="v")
    x = df.placeholder(df.float32, [], name="x")
    df.identity(df.cond(x > 0, lambda: x * v.read_value(), lambda: -x, name="c"), name="out")
    with df.Session() as sess:
        sess.run(v.initializer)
        frozen = df.graph_util.convert_variables_to_constants(sess, fresh_graph, ["out"])
    extracted = df.graph_util.extract_sub_graph(fresh_graph, ["out"])
    for graph in (frozen, extracted):
        branches = graph.get_collection(df.GraphKeys.COND_CONTEXT)
        assert sorted((c.name, c.branch) for c in branches) == [("c", 0), ("c", 1)]
        true_branch = next(c for c in branches if c.branch)
        assert graph.get_operation_by_name("c/mul")._control_flow_context is true_branch
        assert true_branch.pivot.name == "c/switch_t:0"
    with df.Session(graph=frozen) as sess:
        assert sess.run("out:0", {"x:0": 1.5}) == 3.0
        assert sess.run("out:0", {"x:0": -1.5}) == 1.5


def test_old_checkpoints_are_deleted_only_once_the_index_names_the_new_one(tmp_path, monkeypatch):
    make_model()
    saver = df.train.Saver(max_to_keep=1)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        first = saver.save(sess, str(tmp_path / "model"), global_step=1)
        write = df.saver._atomic_write

        def index_write_fails(path, contents):
            if os.path.basename(path) == "checkpoint":
                raise OSError("disk full")
            write(path, contents)

        monkeypatch.setattr(df.saver, "_atomic_write", index_write_fails)
        with pytest.raises(OSError, match="disk full"):
            saver.save(sess, str(tmp_path / "model"), global_step=2)
        # The index still names the first checkpoint, which is still there.
        assert df.train.latest_checkpoint(str(tmp_path)) == first
        monkeypatch.setattr(df.saver, "_atomic_write", write)
        second = saver.save(sess, str(tmp_path / "model"), global_step=3)
    assert df.train.latest_checkpoint(str(tmp_path)) == second
    assert saver.last_checkpoints == [second]
    assert not os.path.exists(first + ".npz")


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_saved_files_get_the_permissions_of_any_new_file(tmp_path, fresh_graph):
    make_model()
    old_umask = os.umask(0o027)
    try:
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            path = df.train.Saver().save(sess, str(tmp_path / "model"))
        df.io.save_graph(fresh_graph, tmp_path / "graph.dfg")
    finally:
        os.umask(old_umask)
    for name in ("model.npz", "checkpoint", "graph.dfg"):
        assert os.stat(tmp_path / name).st_mode & 0o777 == 0o640, name
    assert path == str(tmp_path / "model")


def test_get_checkpoint_state_lists_the_kept_checkpoints_newest_last(tmp_path):
    with df.Graph().as_default():
        v = df.Variable(1.0, name="v")
        saver = df.train.Saver(max_to_keep=2)
        with df.Session() as sess:
            sess.run(v.initializer)
            paths = [
                saver.save(sess, str(tmp_path / "model"), global_step=step) for step in (1, 2, 3)
            ]
    state = df.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[-1]
    assert state.all_model_checkpoint_paths == paths[1:]
    assert df.train.checkpoint_exists(paths[-1]) and not df.train.checkpoint_exists(paths[0])
    assert df.train.get_checkpoint_state(str(tmp_path / "nowhere")) is None

"""Behaviour of the tf.train, tf.errors, tf.summary, tf.graph_util and related names added to
close tf.compat.v1 surface gaps (expected values from TensorFlow 2.21's tf.compat.v1)."""

import os
import warnings

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(t, feed_dict=None):
    graph = t[0].graph if isinstance(t, list) else t.graph
    with tf.Session(graph=graph) as sess:
        return sess.run(t, feed_dict)


# -- tf.errors -------------------------------------------------------------------------------------


def test_error_code_from_exception_type_does_map_classes_to_codes():
    assert tf.errors.error_code_from_exception_type(tf.errors.NotFoundError) == 5
    assert tf.errors.error_code_from_exception_type(tf.errors.DataLossError) == 15
    with pytest.warns(UserWarning, match="Unknown class exception"):
        unknown = tf.errors.error_code_from_exception_type(ValueError)
    assert isinstance(unknown, tf.errors.UnknownError)


def test_exception_type_from_error_code_does_map_codes_to_classes():
    assert tf.errors.exception_type_from_error_code(5) is tf.errors.NotFoundError
    assert tf.errors.exception_type_from_error_code(16) is tf.errors.UnauthenticatedError
    with pytest.raises(KeyError):
        tf.errors.exception_type_from_error_code(99)
    with pytest.raises(KeyError):
        tf.errors.exception_type_from_error_code(tf.errors.OK)


def test_raise_exception_on_not_ok_status_does_raise_the_class_of_the_code():
    with tf.errors.raise_exception_on_not_ok_status() as status:
        assert status.code == tf.errors.OK
    with pytest.raises(tf.errors.NotFoundError, match="gone"):
        with tf.errors.raise_exception_on_not_ok_status() as status:
            status.set(tf.errors.NOT_FOUND, "gone")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(tf.errors.UnknownError) as info:
            with tf.errors.raise_exception_on_not_ok_status() as status:
                status.set(42, "odd")
    assert info.value.error_code == 42


def test_op_error_is_at_the_top_level_with_its_code():
    assert tf.OpError is tf.errors.OpError
    e = tf.OpError(None, None, "msg", 3)
    assert (e.error_code, str(e)) == (3, "msg")


# -- tf.logging, tf.resource_loader, versions ------------------------------------------------------


def test_task_level_status_message_does_log_an_error(capsys):
    tf.logging.TaskLevelStatusMessage("status here")
    assert "ERROR:dataflow:status here" in capsys.readouterr().err


def test_resource_loader_does_resolve_paths_next_to_the_caller():
    here = os.path.dirname(os.path.abspath(__file__))
    assert tf.resource_loader.get_data_files_path() == here
    assert tf.resource_loader.get_path_to_datafile("x.txt") == os.path.join(here, "x.txt")
    assert tf.resource_loader.get_root_dir_with_all_resources() == here
    assert tf.resource_loader.readahead_file_path("/a/b") == "/a/b"
    assert tf.resource_loader.load_resource("__init__.py").startswith(b'"""')
    with pytest.raises(OSError):
        tf.resource_loader.load_resource("no_such_file.txt")


def test_graph_def_versions_are_the_ones_written():
    assert tf.GRAPH_DEF_VERSION == 134
    assert tf.GRAPH_DEF_VERSION_MIN_CONSUMER == 0
    assert tf.GRAPH_DEF_VERSION_MIN_PRODUCER == 0


# -- protocol buffer messages ----------------------------------------------------------------------


def _example():
    return tf.train.Example(
        features=tf.train.Features(
            feature={
                "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2])),
                "b": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5])),
                "c": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"x"])),
            }
        )
    )


def test_example_does_serialize_as_tensorflow_does():
    data = _example().SerializeToString(deterministic=True)
    assert data.hex() == (
        "0a280a0b0a016112061a040a0201020a0d0a0162120812060a040000003f0a0a0a016312050a030a0178"
    )
    back = tf.train.Example.FromString(data)
    assert list(back.features.feature["a"].int64_list.value) == [1, 2]
    assert back.features.feature["c"].WhichOneof("kind") == "bytes_list"


def test_example_does_parse_with_parse_single_example():
    with tf.Graph().as_default():
        parsed = tf.io.parse_single_example(
            _example().SerializeToString(),
            {
                "a": tf.io.FixedLenFeature([2], tf.int64),
                "b": tf.io.FixedLenFeature([1], tf.float32),
                "c": tf.io.FixedLenFeature([], tf.string),
            },
        )
        with tf.Session() as sess:
            values = sess.run(parsed)
    np.testing.assert_array_equal(values["a"], [1, 2])
    np.testing.assert_array_equal(values["b"], [0.5])
    assert values["c"] == b"x"


def test_sequence_example_does_serialize_as_tensorflow_does():
    se = tf.train.SequenceExample()
    se.context.feature["n"].int64_list.value.append(3)
    se.feature_lists.feature_list["t"].feature.add().float_list.value.extend([1.0, 2.0])
    assert se.SerializeToString(deterministic=True).hex() == (
        "0a0c0a0a0a016e12051a030a010312150a130a0174120e0a0c120a0a080000803f00000040"
    )
    assert isinstance(se.feature_lists.feature_list["t"], tf.train.FeatureList)
    assert isinstance(se.feature_lists, tf.train.FeatureLists)


def test_saver_def_cluster_def_and_log_message_do_serialize_as_tensorflow_does():
    saver_def = tf.train.SaverDef(version=tf.train.SaverDef.V2, max_to_keep=3)
    assert saver_def.SerializeToString().hex() == "20033802"
    assert (tf.train.SaverDef.LEGACY, tf.train.SaverDef.V1) == (0, 1)
    cluster = tf.train.ClusterDef(job=[tf.train.JobDef(name="w", tasks={0: "a:1"})])
    assert cluster.SerializeToString().hex() == "0a0c0a0177120708001203613a31"
    message = tf.LogMessage(level=tf.LogMessage.WARN, message="hi")
    assert message.SerializeToString().hex() == "081e12026869"
    with pytest.raises(TypeError):
        tf.train.Int64List(value=["not a number"])


def test_cluster_spec_does_take_and_give_a_cluster_def():
    cluster = tf.train.ClusterDef(job=[tf.train.JobDef(name="w", tasks={0: "a:1", 2: "b:2"})])
    spec = tf.train.ClusterSpec(cluster)
    assert spec.as_dict() == {"w": {0: "a:1", 2: "b:2"}}
    assert spec.as_cluster_def() == cluster


def test_name_attr_list_and_summary_description_are_protos():
    assert tf.NameAttrList(name="f").name == "f"
    assert tf.summary.SummaryDescription(type_hint="x").type_hint == "x"


# -- checkpoint files and their index --------------------------------------------------------------


def test_generate_checkpoint_state_proto_does_append_and_relativize():
    state = tf.train.generate_checkpoint_state_proto(
        "rel/dir", "rel/dir/model-3", ["rel/dir/model-1"], [1.0, 2.0], 0.5
    )
    assert state.model_checkpoint_path == "model-3"
    assert list(state.all_model_checkpoint_paths) == ["model-1", "model-3"]
    assert list(state.all_model_checkpoint_timestamps) == [1.0, 2.0]
    assert state.last_preserved_timestamp == 0.5
    state = tf.train.generate_checkpoint_state_proto("/abs", "model-3")
    assert list(state.all_model_checkpoint_paths) == ["model-3"]
    with pytest.raises(ValueError, match="must match checkpoint paths"):
        tf.train.generate_checkpoint_state_proto("/abs", "m", ["a"], [1.0])


def test_update_checkpoint_state_does_write_what_get_checkpoint_state_reads(tmp_path):
    d = str(tmp_path)
    tf.train.update_checkpoint_state(
        d,
        os.path.join(d, "model-5"),
        [os.path.join(d, "model-4")],
        all_model_checkpoint_timestamps=[3.0, 4.0],
        last_preserved_timestamp=1.5,
    )
    state = tf.train.get_checkpoint_state(d)
    assert state.model_checkpoint_path == os.path.join(d, "model-5")
    assert state.all_model_checkpoint_paths == [os.path.join(d, "model-4"), state[0]]
    assert state.all_model_checkpoint_timestamps == [3.0, 4.0]
    assert state.last_preserved_timestamp == 1.5
    tf.train.update_checkpoint_state(d, "model-6", latest_filename="other")
    assert tf.train.get_checkpoint_state(d, "other").model_checkpoint_path == os.path.join(
        d, "model-6"
    )
    with pytest.raises(RuntimeError, match="conflicts with path used for checkpoint state"):
        tf.train.update_checkpoint_state(d, os.path.join(d, "checkpoint"))


def _saved(directory, steps):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        saver = tf.train.Saver(max_to_keep=None)
        with tf.Session() as sess:
            sess.run(v.initializer)
            return [
                saver.save(sess, os.path.join(directory, "model"), global_step=s) for s in steps
            ]


def test_get_checkpoint_mtimes_and_remove_checkpoint_do_act_on_saved_files(tmp_path):
    first, second = _saved(str(tmp_path), [1, 2])
    mtimes = tf.train.get_checkpoint_mtimes([first, str(tmp_path / "none"), second])
    assert len(mtimes) == 2
    assert mtimes[0] == pytest.approx(os.path.getmtime(first + ".npz"))
    (tmp_path / "model-1.meta").write_bytes(b"")
    tf.train.remove_checkpoint(first)
    assert not tf.train.checkpoint_exists(first) and tf.train.checkpoint_exists(second)
    assert not (tmp_path / "model-1.meta").exists()
    tf.train.remove_checkpoint(first)  # nothing left to delete: no error
    with pytest.raises(ValueError, match="checkpoint_format_version"):
        tf.train.remove_checkpoint(second, checkpoint_format_version=7)


def test_checkpoints_iterator_does_yield_new_checkpoints_until_timeout(tmp_path):
    (path,) = _saved(str(tmp_path), [1])
    calls = []

    def timeout_fn():  # False after the checkpoint, True after the wait that times out
        calls.append(1)
        return len(calls) > 1

    found = list(tf.train.checkpoints_iterator(str(tmp_path), timeout=0, timeout_fn=timeout_fn))
    assert found == [path] and len(calls) == 2
    assert list(tf.train.checkpoints_iterator(str(tmp_path / "empty"), timeout=0)) == []


def test_match_filenames_once_is_the_io_function():
    assert tf.train.match_filenames_once is tf.io.match_filenames_once


# -- optimizers, gradients, variables --------------------------------------------------------------


def test_adam_does_put_non_slot_variables_in_its_own_scope():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="w")
        opt = tf.train.AdamOptimizer(0.1, use_own_namescope_for_non_slot_vars=True)
        opt2 = tf.train.AdamOptimizer(0.1, use_own_namescope_for_non_slot_vars=True)
        with tf.name_scope("outer"):
            step = opt.minimize(tf.reduce_sum(v * v))
            opt2.minimize(tf.reduce_sum(v * v))
        names = [x.name for x in tf.global_variables()]
        assert "Adam/beta1_power:0" in names and "Adam_1/beta2_power:0" in names
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            values = sess.run([v] + opt._non_slot_variables())
    np.testing.assert_allclose(values[0], [0.9, 1.9], rtol=1e-6)
    np.testing.assert_allclose(values[1:], [0.81, 0.998001], rtol=1e-6)


def test_optimizer_default_keeps_non_slot_variables_in_the_name_scope():
    with tf.Graph().as_default():
        v = tf.Variable([1.0], name="w")
        with tf.name_scope("outer"):
            tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(v))
        assert "outer/beta1_power:0" in [x.name for x in tf.global_variables()]


def test_grad_pass_through_does_pass_the_gradient_unchanged():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        y = tf.grad_pass_through(lambda t: tf.round(t * 10.0))(x)
        (g,) = tf.gradients(y * 3.0, x)
        with tf.Session() as sess:
            values = sess.run([y, g])
    np.testing.assert_allclose(values[0], [10.0, 20.0])
    np.testing.assert_allclose(values[1], [3.0, 3.0])


def test_recompute_grad_does_give_the_functions_values_and_gradients():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0])
        r = tf.recompute_grad(lambda t: tf.sin(t) * t)(x)
        (g,) = tf.gradients(tf.reduce_sum(r), x)
        w = tf.Variable(2.0)
        r2 = tf.recompute_grad(lambda t: t * w * w)(x)
        g2 = tf.gradients(tf.reduce_sum(r2), [x, w])
        with tf.Session() as sess:
            sess.run(w.initializer)
            values = sess.run([r, g] + g2)
    np.testing.assert_allclose(values[0], [0.84147096, 1.8185948], rtol=1e-6)
    np.testing.assert_allclose(values[1], [1.3817732, 0.07700372], rtol=1e-5)
    np.testing.assert_allclose(values[2], [4.0, 4.0])
    assert values[3] == pytest.approx(12.0)


def test_recompute_grad_does_work_eagerly():
    with tf.eager_mode():
        x = tf.constant([1.0, 2.0])
        with tf.GradientTape() as tape:
            tape.watch(x)
            r = tf.recompute_grad(lambda t: tf.sin(t) * t)(x)
        np.testing.assert_allclose(
            np.asarray(tape.gradient(r, x)), [1.3817732, 0.07700372], rtol=1e-5
        )


def test_assert_variables_initialized_does_fail_until_initialized():
    with tf.Graph().as_default():
        assert tf.assert_variables_initialized() is None
        tf.Variable([1.0, 2.0], name="w")
        u = tf.Variable(3.0, name="u")
        every = tf.assert_variables_initialized()
        one = tf.assert_variables_initialized([u])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError):
                sess.run(every)
            sess.run(tf.global_variables_initializer())
            ranks, rank = sess.run([every, one])
    np.testing.assert_array_equal(ranks, [1, 0])
    assert rank == 0


# -- summaries -------------------------------------------------------------------------------------


def test_tensor_summary_does_hold_the_tensor_and_metadata():
    with tf.Graph().as_default():
        x = tf.constant([[1, 2], [3, 4]])
        with tf.name_scope("sc"):
            s = tf.summary.tensor_summary(
                "t", x, summary_description="desc", display_name="disp", family="fam"
            )
            s2 = tf.summary.tensor_summary("u", 1.5)
        assert s.name == "sc/fam/t:0" and s2.name == "sc/u:0"
        assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s, s2]
        value, value2 = _run([s, s2])
    (entry,) = tf.Summary.FromString(value).value
    assert entry.tag == "fam/sc/fam/t"
    assert (entry.metadata.display_name, entry.metadata.summary_description) == ("disp", "desc")
    np.testing.assert_array_equal(tf.make_ndarray(entry.tensor), [[1, 2], [3, 4]])
    (entry2,) = tf.Summary.FromString(value2).value
    assert entry2.tag == "sc/u"
    assert entry2.tensor.dtype == 1 and tf.make_ndarray(entry2.tensor) == np.float32(1.5)


def test_get_summary_description_does_read_a_tensor_summary_node():
    node = tf.NodeDef(op="TensorSummary")
    node.attr["description"].s = b'{"typeHint": "scalar"}'
    assert tf.summary.get_summary_description(node).type_hint == "scalar"
    with pytest.raises(ValueError, match="Can't get_summary_description on TensorSummaryV2"):
        tf.summary.get_summary_description(tf.NodeDef(op="TensorSummaryV2"))


def test_all_v2_summary_ops_does_leave_out_tf1_summaries():
    with tf.Graph().as_default():
        tf.summary.scalar("s", 1.0)
        assert tf.summary.all_v2_summary_ops() == []
    with tf.eager_mode():
        assert tf.summary.all_v2_summary_ops() is None


def test_summary_iterator_does_read_back_an_event_file(tmp_path):
    with tf.Graph().as_default():
        value = _run(tf.summary.scalar("loss", 0.25))
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_summary(value, 3)
    writer.close()
    (name,) = os.listdir(tmp_path)
    events = list(tf.train.summary_iterator(str(tmp_path / name)))
    assert events[0].file_version == "brain.Event:2"
    assert events[1].step == 3
    assert events[1].summary.value[0].tag == "loss"
    assert events[1].summary.value[0].simple_value == 0.25
    data = (tmp_path / name).read_bytes()
    (tmp_path / "bad").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(tf.errors.DataLossError):
        list(tf.train.summary_iterator(str(tmp_path / "bad")))


# -- graph_util ------------------------------------------------------------------------------------


def _training_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        c = tf.debugging.check_numerics(x, "bad", name="check")
        i = tf.identity(x, name="ident")
        s = tf.stop_gradient(i, name="stop")
        y = tf.multiply(s, c, name="y")
        z = tf.add(x, 1.0, name="z")
        with tf.control_dependencies([z]):
            tf.identity(y, name="k")
    return g


def _nodes(graph_def):
    return [(n.name, list(n.input)) for n in graph_def.node]


def test_remove_training_nodes_does_splice_identities_and_drop_checks():
    gd = _training_graph().as_graph_def()
    assert [n.op for n in gd.node][:5] == [
        "Placeholder",
        "CheckNumerics",
        "Identity",
        "StopGradient",
        "Mul",
    ]
    z_const = gd.node[5].name
    assert _nodes(tf.graph_util.remove_training_nodes(gd)) == [
        ("x", []),
        ("y", ["x"]),
        (z_const, []),
        ("z", ["x", z_const]),
        ("k", ["y", "^z"]),
    ]
    assert _nodes(tf.graph_util.remove_training_nodes(gd, protected_nodes=["ident"]))[:3] == [
        ("x", []),
        ("ident", ["x"]),
        ("y", ["ident"]),
    ]


def test_extract_sub_graph_does_keep_what_the_nodes_need():
    g = _training_graph()
    gd = g.as_graph_def()
    out = tf.graph_util.extract_sub_graph(gd, ["y"])
    assert [n.name for n in out.node] == ["x", "check", "ident", "stop", "y"]
    assert out.versions.producer == gd.versions.producer
    with pytest.raises(TypeError, match="dest_nodes must be an iterable of strings"):
        tf.graph_util.extract_sub_graph(gd, "y")
    with pytest.raises(AssertionError, match="nope is not in graph"):
        tf.graph_util.extract_sub_graph(gd, ["nope"])
    with pytest.raises(TypeError, match="GraphDef"):
        tf.graph_util.extract_sub_graph("not a graph", ["y"])
    sub = tf.graph_util.extract_sub_graph(g, ["y"])
    assert sorted(op.name for op in sub.get_operations()) == ["check", "ident", "stop", "x", "y"]


def test_must_run_on_cpu_does_follow_tf1s_rules():
    g = _training_graph()
    gd = g.as_graph_def()
    with g.as_default():
        ci = tf.constant(3, name="ci")
        cast = tf.cast(ci, tf.float32)
        cf = tf.constant(3.0, name="cf")
    assert tf.graph_util.must_run_on_cpu(ci.op)
    assert tf.graph_util.must_run_on_cpu(cast.op)
    assert not tf.graph_util.must_run_on_cpu(cf.op)
    assert not tf.graph_util.must_run_on_cpu(gd.node[0])
    node = tf.NodeDef(op="VariableV2")
    assert not tf.graph_util.must_run_on_cpu(node)
    assert tf.graph_util.must_run_on_cpu(node, pin_variables_on_cpu=True)


def test_tensor_shape_from_node_def_name_and_import_graph_def():
    g = _training_graph()
    assert tf.graph_util.tensor_shape_from_node_def_name(g, "x").as_list() == [2]
    assert tf.graph_util.tensor_shape_from_node_def_name(g, "y:0").as_list() == [2]
    assert tf.graph_util.import_graph_def is tf.import_graph_def


def test_convert_variables_to_constants_does_freeze_a_graph_def():
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        u = tf.Variable([10.0, 20.0], name="u")
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
    gd = tf.GraphDef()
    for name in ("w", "u"):
        handle = gd.node.add(name=name, op="VarHandleOp")
        handle.attr["dtype"].type = 1
        handle.attr["shape"].shape.dim.add(size=2)
        read = gd.node.add(name=name + "/Read", op="ReadVariableOp", input=[name])
        read.attr["dtype"].type = 1
    y = gd.node.add(name="y", op="AddV2", input=["w/Read", "u/Read"])
    y.attr["T"].type = 1
    frozen = tf.graph_util.convert_variables_to_constants(sess, gd, ["y"])
    assert [(n.name, n.op) for n in frozen.node] == [
        ("w", "Const"),
        ("w/Read", "Identity"),
        ("u", "Const"),
        ("u/Read", "Identity"),
        ("y", "AddV2"),
    ]
    with tf.Graph().as_default():
        (out,) = tf.import_graph_def(frozen, return_elements=["y:0"], name="")
        np.testing.assert_allclose(_run(out), [11.0, 22.0])
    partly = tf.graph_util.convert_variables_to_constants(
        sess, gd, ["y"], variable_names_blacklist=["u"]
    )
    assert [n.op for n in partly.node][:3] == ["Const", "Identity", "VarHandleOp"]
    only_u = tf.graph_util.convert_variables_to_constants(
        sess, gd, ["y"], variable_names_whitelist=["u"]
    )
    assert [n.op for n in only_u.node][:3] == ["VarHandleOp", "ReadVariableOp", "Const"]
    sess.close()
    del w, u


def test_convert_variables_to_constants_does_freeze_a_graph_with_lists():
    with tf.Graph().as_default() as g:
        w = tf.Variable([1.0, 2.0], name="w")
        u = tf.Variable([10.0, 20.0], name="u")
        tf.add(w, u, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, g, ["y", u.initializer.name], variable_names_whitelist=["w"]
            )
    types = {op.name: op.type for op in frozen.get_operations()}
    assert types["w"] == "Const" and types["u"] == "VarHandleOp"
    with tf.Session(graph=frozen) as sess:
        sess.run(frozen.get_operation_by_name(u.initializer.name))
        np.testing.assert_allclose(sess.run("y:0"), [11.0, 22.0])


# -- autograph -------------------------------------------------------------------------------------


def _counting_loop(n):
    i = tf.constant(0)
    while i < n:
        tf.autograph.experimental.set_loop_options(maximum_iterations=3, parallel_iterations=1)
        i += 1
    return i


def test_set_loop_options_does_pass_while_loop_arguments():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.int32, [])
        y = tf.autograph.to_graph(_counting_loop)(x)
        enters = [op for op in g.get_operations() if op.type == "Enter"]
        assert enters and all(op.attrs["parallel_iterations"] == 1 for op in enters)
        with tf.Session() as sess:
            assert sess.run(y, {x: 10}) == 3
            assert sess.run(y, {x: 2}) == 2
    assert tf.autograph.experimental.set_loop_options(maximum_iterations=3) is None


def _asserting(x):
    assert x > 0, "must be positive"
    items = []
    for i in range(2):
        items.append(x + i)
    return items


def test_to_graph_does_choose_optional_features():
    feature = tf.autograph.experimental.Feature
    assert feature.ALL.value == "ALL" and feature.LISTS.value == "LISTS"
    code = tf.autograph.to_code(_asserting)
    assert "ag__.assert_" in code and "ag__.list_append" in code
    code = tf.autograph.to_code(_asserting, experimental_optional_features=feature.LISTS)
    assert "ag__.assert_" not in code and "ag__.list_append" in code
    code = tf.autograph.to_code(_asserting, experimental_optional_features=())
    assert "ag__.assert_" not in code and "ag__.list_append" not in code
    code = tf.autograph.to_code(_asserting, experimental_optional_features=[feature.ALL])
    assert "ag__.assert_" in code and "ag__.list_append" in code
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        converted = tf.autograph.to_graph(
            _asserting, experimental_optional_features=feature.ASSERT_STATEMENTS
        )
        out = converted(x)
        with tf.Session() as sess:
            assert sess.run(out, {x: 1.0}) == [1.0, 2.0]
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(out, {x: -1.0})
    with pytest.raises(TypeError, match="Feature"):
        tf.autograph.to_graph(_asserting, experimental_optional_features=["LISTS"])
    assert set(feature.all_but(feature.LISTS)) == set(feature) - {feature.ALL, feature.LISTS}


def test_do_not_convert_does_work_as_a_decorator_factory():
    @tf.autograph.experimental.do_not_convert()
    def kept(x):
        return x

    assert tf.autograph.experimental.do_not_convert(kept) is kept
    assert tf.autograph.experimental.do_not_convert is tf.autograph.do_not_convert


def test_set_verbosity_does_log_conversions(capsys):
    def converted_here(x):
        if x > 0:
            x = x + 1
        return x

    tf.autograph.set_verbosity(1, alsologtostdout=True)
    try:
        tf.autograph.to_graph(converted_here)
    finally:
        tf.autograph.set_verbosity(0)
    assert "Converted " in capsys.readouterr().out
    tf.autograph.trace("value", 3)
    assert capsys.readouterr().out == "value 3\n"


# -- debugging -------------------------------------------------------------------------------------


def test_assert_shapes_does_check_symbols_statically_and_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 7], name="y")
        s = tf.placeholder(tf.float32, None, name="s")
        check = tf.debugging.assert_shapes([(x, ["N", "Q"]), (y, ["N", 7]), (s, [])])
        with tf.Session() as sess:
            sess.run(check, {x: np.zeros((2, 3)), y: np.zeros((2, 7)), s: 1.0})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(check, {x: np.zeros((2, 3)), y: np.zeros((4, 7)), s: 1.0})
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(check, {x: np.zeros((2, 3)), y: np.zeros((2, 7)), s: np.zeros((2, 2))})
        with pytest.raises(ValueError, match="dimension 1 must have size 4"):
            tf.debugging.assert_shapes([(x, ["N", 4])], message="msg")
        with pytest.raises(ValueError, match="must have rank 3"):
            tf.debugging.assert_shapes([(x, [1, "N", 3])])
        with pytest.raises(ValueError, match="only allowed as the first entry"):
            tf.debugging.assert_shapes([(x, ["N", ..., 3])])
        with pytest.raises(ValueError, match="must be an iterable"):
            tf.debugging.assert_shapes([(x, 5)])
        tf.debugging.assert_shapes([(x, ["*", 3])])
        tf.debugging.assert_shapes({x: ("N", 3), y: None})


def test_is_non_decreasing_and_is_strictly_increasing_are_the_math_functions():
    assert tf.debugging.is_non_decreasing is tf.is_non_decreasing
    assert tf.debugging.is_strictly_increasing is tf.math.is_strictly_increasing


def test_set_log_device_placement_does_reach_sessions_without_config(capfd):
    assert tf.debugging.get_log_device_placement() is False
    tf.debugging.set_log_device_placement(True)
    try:
        assert tf.debugging.get_log_device_placement() is True
        with tf.Graph().as_default():
            y = tf.add(tf.constant(1.0), 2.0, name="placed_add")
            with tf.Session() as sess:
                sess.run(y)
    finally:
        tf.debugging.set_log_device_placement(False)
    assert "placed_add: (Add" in capfd.readouterr().err
    with tf.Graph().as_default():
        y = tf.add(tf.constant(1.0), 2.0, name="quiet_add")
        with tf.Session() as sess:
            sess.run(y)
    assert "quiet_add" not in capfd.readouterr().err


# -- conditional batching --------------------------------------------------------------------------


def _drain(sess, batch) -> list:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    got = []
    try:
        while True:
            got.append(sess.run(batch).tolist())
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)
    return got


def test_maybe_batch_does_keep_the_examples_a_scalar_keeps():
    with tf.Graph().as_default():
        i = tf.train.range_input_producer(10, shuffle=False, num_epochs=1).dequeue()
        b = tf.train.maybe_batch(
            [i], tf.equal(i % 2, 0), batch_size=2, allow_smaller_final_batch=True
        )
        assert b.name == "batch:0"
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert _drain(sess, b) == [[0, 2], [4, 6], [8]]


def test_maybe_batch_does_keep_the_rows_a_vector_keeps():
    with tf.Graph().as_default():
        data = tf.constant(np.arange(6).reshape(6, 1))
        keep = tf.constant([True, False, True, True, False, True])
        b = tf.train.maybe_batch([data], keep, batch_size=4, enqueue_many=True)
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert sess.run(b).ravel().tolist() == [0, 2, 3, 5]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)


def test_maybe_batch_does_check_keep_input():
    with tf.Graph().as_default():
        x = tf.constant(1)
        with pytest.raises(ValueError, match="cannot be a vector when `enqueue_many=False`"):
            tf.train.maybe_batch([x], tf.constant([True]), 2)
        with pytest.raises(ValueError, match="must be known at graph construction"):
            tf.train.maybe_batch([x], tf.placeholder(tf.bool), 2)
        with pytest.raises(ValueError, match="must be 0 or 1 dimensions"):
            tf.train.maybe_batch([x], tf.constant([[True]]), 2, enqueue_many=True)


def test_maybe_shuffle_batch_and_joins_do_batch_kept_examples():
    with tf.Graph().as_default():
        b = tf.train.maybe_shuffle_batch([tf.constant([1, 2])], 3, 10, 2, True, seed=1)
        bj = tf.train.maybe_batch_join([[tf.constant(1)], [tf.constant(2)]], True, 4)
        sj = tf.train.maybe_shuffle_batch_join(
            [[tf.constant(1)], [tf.constant(2)]], 4, 10, 1, tf.constant(False)
        )
        assert (b.shape.as_list(), b.name) == ([3, 2], "shuffle_batch:0")
        assert (bj.shape.as_list(), bj.name) == ([4], "batch_join:0")
        assert sj.name == "shuffle_batch_join:0"
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert sess.run(b).tolist() == [[1, 2]] * 3
            assert set(sess.run(bj).tolist()) <= {1, 2}
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)


# -- init_from_checkpoint --------------------------------------------------------------------------


def _checkpoint_with_scopes(directory):
    with tf.Graph().as_default():
        with tf.variable_scope("old"):
            tf.get_variable("a", initializer=np.array([1.0, 2.0], np.float32))
            tf.get_variable("b", initializer=np.array([[3.0]], np.float32))
        tf.get_variable("c", initializer=np.float32(5.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.train.Saver().save(sess, os.path.join(directory, "m"))


def test_init_from_checkpoint_does_load_scopes_names_and_variables(tmp_path):
    path = _checkpoint_with_scopes(str(tmp_path))
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            a = tf.get_variable("a", shape=[2], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", shape=[1, 1], initializer=tf.zeros_initializer())
        z = tf.get_variable("z", shape=[], initializer=tf.zeros_initializer())
        w = tf.Variable(0.0, name="w")
        tf.train.init_from_checkpoint(str(tmp_path), {"old/": "new/"})
        tf.train.init_from_checkpoint(path, {"c": "z"})
        tf.train.init_from_checkpoint(path, [("c", w)])
        assert w.initial_value.op.type == "RestoreV2"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run([a, b, z, w])
    np.testing.assert_array_equal(values[0], [1.0, 2.0])
    np.testing.assert_array_equal(values[1], [[3.0]])
    assert values[2] == 5.0 and values[3] == 5.0


def test_init_from_checkpoint_does_reject_missing_and_mismatched_names(tmp_path):
    _checkpoint_with_scopes(str(tmp_path))
    with tf.Graph().as_default():
        tf.get_variable("z", shape=[], initializer=tf.zeros_initializer())
        with pytest.raises(ValueError, match="Tensor nope is not found"):
            tf.train.init_from_checkpoint(str(tmp_path), {"nope": "z"})
        with pytest.raises(ValueError, match="doesn't match with shape of tensor old/a"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old/a": "z"})
        with pytest.raises(ValueError, match="Tensor old/ is not found"):
            tf.train.init_from_checkpoint(str(tmp_path), {"old/": "z"})
        with pytest.raises(ValueError, match="should map to scope only"):
            tf.train.init_from_checkpoint(str(tmp_path), {"c": "missing/"})


def test_init_from_checkpoint_does_read_the_file_when_the_initializer_runs(tmp_path):
    path = _checkpoint_with_scopes(str(tmp_path))
    with tf.Graph().as_default():
        z = tf.get_variable("z", shape=[], initializer=tf.zeros_initializer())
        tf.train.init_from_checkpoint(path, {"c": "z"})
        os.remove(path + ".npz")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.NotFoundError):
                sess.run(z.initializer)


# -- AdagradDAOptimizer ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "l1, l2, v_expected, e_rows",
    [
        (0.0, 0.0, [-0.07886684, 0.08991796, -0.06204436], [-0.17284536, -0.1717795]),
        (0.1, 0.2, [-0.0641555, 0.08576819, -0.05359612], [-0.16708028, -0.16043459]),
    ],
)
def test_adagrad_da_does_step_as_tensorflow(l1, l2, v_expected, e_rows):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, -2.0, 0.5], name="v")
        e = tf.Variable(np.ones((4, 2), np.float32), name="e")
        gs = tf.train.get_or_create_global_step()
        opt = tf.train.AdagradDAOptimizer(0.1, gs, 0.2, l1, l2)
        loss = tf.reduce_sum(v * v * [1.0, 2.0, 3.0]) + tf.reduce_sum(tf.gather(e, [0, 2, 0]) * 2.0)
        step = opt.minimize(loss, global_step=gs)
        names = sorted(x.name for x in tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step)
            v_value, e_value, gs_value = sess.run([v, e, gs])
    assert names == [
        "e/AdagradDA:0",
        "e/AdagradDA_1:0",
        "e:0",
        "global_step:0",
        "v/AdagradDA:0",
        "v/AdagradDA_1:0",
        "v:0",
    ]
    np.testing.assert_allclose(v_value, v_expected, rtol=1e-5)
    np.testing.assert_allclose(e_value[[0, 2], 0], e_rows, rtol=1e-5)
    np.testing.assert_array_equal(e_value[[1, 3]], np.ones((2, 2)))
    assert gs_value == 3


def test_adagrad_da_does_reject_a_non_positive_accumulator():
    with pytest.raises(ValueError, match="must be positive: 0.0"):
        tf.train.AdagradDAOptimizer(0.1, None, 0.0)


# -- loss scales -----------------------------------------------------------------------------------


def test_dynamic_loss_scale_does_skip_nonfinite_steps_and_adapt():
    experimental = tf.train.experimental
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v")
        x = tf.placeholder(tf.float32, [])
        gs = tf.train.get_or_create_global_step()
        scale = experimental.DynamicLossScale(
            initial_loss_scale=8.0, increment_period=2, multiplier=2.0
        )
        opt = experimental.MixedPrecisionLossScaleOptimizer(
            tf.train.GradientDescentOptimizer(0.1), scale
        )
        grads_and_vars = opt.compute_gradients(tf.reduce_sum(v * v) * x)
        step = opt.apply_gradients(grads_and_vars, global_step=gs)
        names = sorted(x.name for x in tf.global_variables())
        got = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with np.errstate(invalid="ignore"):
                for feed in (1.0, 1.0, 1.0, np.inf, 1.0):
                    sess.run(step, {x: feed})
                    got.append(sess.run([v, scale(), gs]))
            grad = sess.run(grads_and_vars[0][0], {x: 1.0})
    assert names == ["current_loss_scale:0", "global_step:0", "good_steps:0", "v:0"]
    expected_v = [[0.8, 1.6], [0.64, 1.28], [0.512, 1.024], [0.512, 1.024], [0.4096, 0.8192]]
    np.testing.assert_allclose([g[0] for g in got], expected_v, rtol=1e-5)
    assert [float(g[1]) for g in got] == [8.0, 16.0, 16.0, 8.0, 8.0]
    assert [int(g[2]) for g in got] == [1, 2, 3, 3, 4]
    np.testing.assert_allclose(grad, [0.8191999, 1.6383998], rtol=1e-5)


def test_fixed_loss_scale_and_rewrite_switches_do_as_tensorflow():
    experimental = tf.train.experimental
    fixed = experimental.FixedLossScale(4)
    assert repr(fixed) == "FixedLossScale(4.0)"
    assert fixed.get_config() == {"loss_scale_value": 4.0}
    with pytest.raises(ValueError, match="at least 1"):
        experimental.FixedLossScale(0.5)
    with pytest.raises(ValueError, match="Python int or float"):
        experimental.FixedLossScale("x")
    with pytest.raises(ValueError, match='"opt" must be an instance of Optimizer'):
        experimental.MixedPrecisionLossScaleOptimizer(object(), 1.0)
    with tf.Graph().as_default():
        v = tf.Variable(3.0)
        opt = experimental.enable_mixed_precision_graph_rewrite(
            tf.train.GradientDescentOptimizer(0.5), 128.0
        )
        assert isinstance(opt, experimental.MixedPrecisionLossScaleOptimizer)
        assert repr(opt._loss_scale) == "FixedLossScale(128.0)"
        with pytest.raises(ValueError, match="must not already be an instance"):
            experimental.enable_mixed_precision_graph_rewrite(opt)
        experimental.disable_mixed_precision_graph_rewrite()
        step = opt.minimize(v * v)
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(step)
            assert sess.run(v) == 0.0
    assert isinstance(experimental.DynamicLossScale, type)
    assert issubclass(experimental.DynamicLossScale, experimental.LossScale)


# -- object-based checkpoints ----------------------------------------------------------------------


class _Model:
    def __init__(self, scope):
        with tf.variable_scope(scope):
            self.w = tf.get_variable("w", initializer=np.array([1.0, 2.0], np.float32))
            self.b = tf.get_variable("b", initializer=np.float32(3.0))


def test_checkpoint_does_save_the_object_graph_with_tensorflows_keys(tmp_path):
    with tf.Graph().as_default():
        model = _Model("m")
        opt = tf.train.AdamOptimizer(0.1)
        step = opt.minimize(tf.reduce_sum(model.w * model.w) + model.b)
        ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            first = ckpt.save(str(tmp_path / "ck"), session=sess)
            second = ckpt.save(str(tmp_path / "ck"), session=sess)
    assert (os.path.basename(first), os.path.basename(second)) == ("ck-1", "ck-2")
    assert tf.train.latest_checkpoint(str(tmp_path)) == second
    assert [name for name, _ in tf.train.list_variables(second)] == [
        "model/b/.ATTRIBUTES/VARIABLE_VALUE",
        "model/b/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
        "model/b/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
        "model/w/.ATTRIBUTES/VARIABLE_VALUE",
        "model/w/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
        "model/w/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
        "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE",
        "optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
    ]


def test_checkpoint_does_restore_by_object_path_not_name(tmp_path):
    with tf.Graph().as_default():
        model = _Model("m")
        ckpt = tf.train.Checkpoint(model=model)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(model.w.assign([7.0, 8.0]))
            path = ckpt.save(str(tmp_path / "ck"), session=sess)
    with tf.Graph().as_default():
        other = _Model("elsewhere")
        extra = tf.Variable(4.0, name="extra")
        ckpt = tf.train.Checkpoint(model=other, extra=extra)
        status = ckpt.restore(path)
        with tf.Session() as sess:
            status.initialize_or_restore(sess)
            w, b, e, counter = sess.run([other.w, other.b, extra, ckpt.save_counter])
            with pytest.raises(AssertionError):
                status.assert_existing_objects_matched()
            status.assert_nontrivial_match()
    np.testing.assert_array_equal(w, [7.0, 8.0])
    assert (b, e, counter) == (3.0, 4.0, 1)
    with pytest.raises(tf.errors.NotFoundError):
        ckpt.restore(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="expecting a trackable object"):
        tf.train.Checkpoint(number=3)


def test_checkpoint_does_save_and_restore_eagerly(tmp_path):
    with tf.eager_mode():
        v = tf.Variable([1.0, 2.0])
        ckpt = tf.train.Checkpoint(v=v)
        path = ckpt.save(str(tmp_path / "e"))
        v.assign([5.0, 6.0])
        ckpt.restore(path).assert_consumed()
        np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
        assert int(ckpt.save_counter.numpy()) == 1


def test_checkpoint_manager_does_keep_the_newest_and_recover(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        step = tf.Variable(0, dtype=tf.int64, name="step")
        increment = step.assign_add(1)
        ckpt = tf.train.Checkpoint(v=v, step=step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            manager = tf.train.CheckpointManager(ckpt, d, max_to_keep=2)
            assert manager.restore_or_initialize() is None
            saved = [os.path.basename(manager.save()) for _ in range(3)]
            assert saved == ["ckpt-1", "ckpt-2", "ckpt-3"]
            assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-2", "ckpt-3"]
            assert os.path.basename(manager.save(checkpoint_number=step)) == "ckpt-0"
            assert sorted(f for f in os.listdir(d) if f.startswith("ckpt")) == [
                "ckpt-0.npz",
                "ckpt-3.npz",
            ]
            recovered = tf.train.CheckpointManager(ckpt, d, max_to_keep=3)
            assert [os.path.basename(p) for p in recovered.checkpoints] == ["ckpt-3", "ckpt-0"]
            assert os.path.basename(recovered.latest_checkpoint) == "ckpt-0"
            timed = tf.train.CheckpointManager(
                ckpt, os.path.join(d, "iv"), None, step_counter=step, checkpoint_interval=2
            )
            got = []
            for _ in range(4):
                got.append(timed.save())
                sess.run(increment)
    assert [None if g is None else os.path.basename(g) for g in got] == [
        "ckpt-5",
        None,
        "ckpt-6",
        None,
    ]
    with pytest.raises(ValueError, match="positive integer or `None`"):
        tf.train.CheckpointManager(ckpt, d, max_to_keep=0)


def test_checkpoint_options_do_skip_slots_and_call_back(tmp_path):
    written = []
    options = tf.train.CheckpointOptions(
        experimental_skip_slot_variables=True, experimental_write_callbacks=[written.append]
    )
    assert options.enable_async is False
    with pytest.raises(ValueError, match="experimental_sharding_callback"):
        tf.train.CheckpointOptions(experimental_sharding_callback=object())
    with tf.Graph().as_default():
        v = tf.Variable([1.0], name="v")
        opt = tf.train.AdamOptimizer(0.1)
        step = opt.minimize(tf.reduce_sum(v))
        ckpt = tf.train.Checkpoint(v=v, opt=opt)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step)
            manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
            path = manager.save(options=options)
    assert written == [path]
    assert not any(".OPTIMIZER_SLOT" in n for n, _ in tf.train.list_variables(path))


# -- warm_start ------------------------------------------------------------------------------------


def _vocab_checkpoint(d):
    (d / "old.txt").write_text("mercury\nvenus\nmars\n")
    (d / "new.txt").write_text("venus\njupiter\nmercury\n")
    with tf.Graph().as_default():
        tf.get_variable("emb", initializer=np.arange(6, dtype=np.float32).reshape(3, 2))
        tf.get_variable("out", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
        tf.get_variable("bias", initializer=np.float32(7.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, str(d / "m"))


def test_warm_start_does_remap_vocabularies_and_rename(tmp_path):
    _vocab_checkpoint(tmp_path)
    new, old = str(tmp_path / "new.txt"), str(tmp_path / "old.txt")
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", shape=[4, 2], initializer=tf.zeros_initializer())
        out2 = tf.get_variable("out2", shape=[2, 3], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", shape=[], initializer=tf.zeros_initializer())
        untouched = tf.get_variable("untouched", shape=[], initializer=tf.ones_initializer())
        tf.train.warm_start(
            str(tmp_path),
            ["emb", "out2", "b"],
            {
                "emb": tf.train.VocabInfo(new, 3, 1, old),
                "out2": tf.train.VocabInfo(new, 3, 0, old, axis=1),
            },
            {"out2": "out", "b": "bias"},
        )
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run([emb, out2, b, untouched])
    np.testing.assert_array_equal(values[0], [[2, 3], [0, 0], [0, 1], [0, 0]])
    np.testing.assert_array_equal(values[1], [[1, 0, 0], [4, 0, 3]])
    assert (values[2], values[3]) == (7.0, 1.0)


def test_warm_start_does_fill_missing_rows_from_the_backup_initializer(tmp_path):
    _vocab_checkpoint(tmp_path)
    new, old = str(tmp_path / "new.txt"), str(tmp_path / "old.txt")
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", shape=[5, 2], initializer=tf.zeros_initializer())
        info = tf.train.VocabInfo(
            new, 3, 2, old, old_vocab_size=1, backup_initializer=lambda shape: tf.fill(shape, -1.0)
        )
        tf.train.warm_start(str(tmp_path), "emb", {"emb": info})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(emb)
    np.testing.assert_array_equal(value, [[-1, -1], [-1, -1], [0, 1], [-1, -1], [-1, -1]])


def test_warm_start_does_reject_bad_arguments(tmp_path):
    _vocab_checkpoint(tmp_path)
    with pytest.raises(ValueError, match="axis argument are 0 and 1.  Provided axis: 2"):
        tf.train.VocabInfo("a", 1, 0, "b", axis=2)
    with tf.Graph().as_default():
        tf.get_variable("b", shape=[], initializer=tf.zeros_initializer())
        with pytest.raises(ValueError, match="Tensor b is not found"):
            tf.train.warm_start(str(tmp_path), ["b"])
        with pytest.raises(ValueError, match="var_name_to_prev_var_name that were not used"):
            tf.train.warm_start(
                str(tmp_path), ["b"], var_name_to_prev_var_name={"b": "bias", "nope": "x"}
            )
        with pytest.raises(ValueError, match="must be a `list` or `str`"):
            tf.train.warm_start(str(tmp_path), 3)


# -- SyncReplicasOptimizer -------------------------------------------------------------------------


def _sync_replicas_graph(replicas_to_aggregate, total_num_replicas=None):
    w = tf.Variable([1.0, 2.0], name="w")
    emb = tf.Variable(np.ones((3, 2), np.float32), name="emb")
    x = tf.placeholder(tf.float32, [2])
    ids = tf.placeholder(tf.int32, [None])
    gs = tf.train.get_or_create_global_step()
    loss = tf.reduce_sum(w * x) + tf.reduce_sum(tf.gather(emb, ids))
    opt = tf.train.SyncReplicasOptimizer(
        tf.train.GradientDescentOptimizer(1.0), replicas_to_aggregate, total_num_replicas
    )
    return w, emb, x, ids, gs, opt, opt.minimize(loss, global_step=gs)


def _run_replicas(sess, train_op, feeds):
    import threading

    errors = []

    def replica(feed):
        try:
            sess.run(train_op, feed)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=replica, args=(feed,)) for feed in feeds]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and not any(t.is_alive() for t in threads)


def _wait_for_step(sess, gs, step):
    import time

    deadline = time.monotonic() + 30
    while sess.run(gs) < step and time.monotonic() < deadline:
        time.sleep(0.01)


# The chief's queue runner, waiting in an accumulator when the session closes, ends with
# CancelledError in its thread, as TensorFlow's does.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_sync_replicas_does_apply_the_average_of_the_replicas_gradients():
    with tf.Graph().as_default():
        w, emb, x, ids, gs, opt, train_op = _sync_replicas_graph(2)
        hook = opt.make_session_run_hook(is_chief=True)
        a = {x: np.array([1.0, 0.0], np.float32), ids: [0]}
        b = {x: np.array([3.0, 2.0], np.float32), ids: [0, 2]}
        # The chief's queue runner waits in the accumulators until the grace period ends, as
        # in TensorFlow: keep that period short.
        with tf.train.MonitoredTrainingSession(hooks=[hook], stop_grace_period_secs=1) as sess:
            _run_replicas(sess, train_op, [a, b])  # two replicas at once
            _wait_for_step(sess, gs, 1)  # the first tokens are handed out before any update
            w_value, emb_value, step = sess.run([w, emb, gs])
            # One replica after the other: the first still has the local step of the first
            # tokens (0), so the accumulators, at step 1 now, drop its gradient as stale (as
            # TensorFlow's do); it then takes a token of step 1.
            sess.run(train_op, a)
            sess.run(train_op, b)
            stale_step = sess.run(gs)
            sess.run(train_op, a)
            _wait_for_step(sess, gs, 2)
            w_value2, step2 = sess.run([w, gs])
    np.testing.assert_array_equal(w_value, [-1.0, 1.0])
    np.testing.assert_array_equal(emb_value, [[0, 0], [1, 1], [0, 0]])
    assert step == 1 and stale_step == 1
    np.testing.assert_array_equal(w_value2, [-3.0, 0.0])
    assert step2 == 2


# The chief's queue runner, waiting in an accumulator when the session closes, ends with
# CancelledError in its thread, as TensorFlow's does.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_sync_replicas_does_check_its_use():
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(1.0), 2, 3)
        with pytest.raises(ValueError, match="after apply_gradients"):
            opt.get_chief_queue_runner()
        with pytest.raises(ValueError, match="Global step is required"):
            opt.minimize(v * v)
        gs = tf.train.get_or_create_global_step()
        opt.minimize(v * v, global_step=gs)
        assert opt._tokens_per_step == 3
        with pytest.raises(ValueError, match="Too few tokens"):
            opt.get_init_tokens_op(num_tokens=-2)
        assert opt.get_init_tokens_op(num_tokens=0).type == "NoOp"
        assert isinstance(opt.get_chief_queue_runner(), tf.train.QueueRunner)
        local = tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES)
        assert [v.op.name for v in local] == ["sync_rep_local_step"]


# -- ProfilerHook ----------------------------------------------------------------------------------


def test_profiler_hook_does_write_timelines_every_n_steps(tmp_path):
    import json

    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        v = tf.Variable([1.0, 2.0], name="v")
        y = tf.reduce_sum(v * 2.0, name="y")
        step = tf.group(y, gs.assign_add(1))
        hook = tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path))
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(step)
    names = sorted(f for f in os.listdir(tmp_path) if f.startswith("timeline"))
    assert names == ["timeline-2.json", "timeline-4.json"]
    trace = json.loads((tmp_path / names[0]).read_text())
    ops = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert "y" in ops
    flows = [e for e in trace["traceEvents"] if e.get("cat") == "DataFlow"]
    assert flows and {e["ph"] for e in flows} == {"s", "t"}
    assert len({e["id"] for e in flows}) * 2 == len(flows)


def test_profiler_hook_does_refuse_what_it_cannot_do():
    with pytest.raises(ValueError, match="show_memory"):
        tf.train.ProfilerHook(save_steps=1, show_memory=True)
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.ProfilerHook()
    with tf.Graph().as_default():
        hook = tf.train.ProfilerHook(save_steps=1)
        with pytest.raises(RuntimeError, match="Global step should be created"):
            hook.begin()


def test_traceback_filtering_does_leave_out_runtime_frames_per_thread():
    import threading
    import traceback

    def frames_of(error):
        return [f.filename for f in traceback.extract_tb(error.__traceback__)]

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32)
        y = tf.debugging.check_numerics(tf.log(x), "bad")
        found = {}
        with tf.Session() as sess:
            for enabled in (True, False):
                if enabled:
                    tf.debugging.enable_traceback_filtering()
                else:
                    tf.debugging.disable_traceback_filtering()
                assert tf.debugging.is_traceback_filtering_enabled() is enabled
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    sess.run(y, {x: -1.0})
                found[enabled] = frames_of(info.value)
                assert isinstance(info.value.__cause__, tf.errors.InvalidArgumentError)
        seen_in_thread = []
        thread = threading.Thread(
            target=lambda: seen_in_thread.append(tf.debugging.is_traceback_filtering_enabled())
        )
        thread.start()
        thread.join()
        tf.debugging.enable_traceback_filtering()
    assert seen_in_thread == [True]  # the switch is per thread; on by default
    runtime = os.sep + "dataflow" + os.sep
    assert found[True][0] == __file__ and found[False][0] == __file__
    assert sum(runtime in f for f in found[True]) < sum(runtime in f for f in found[False])


class _Counter(tf.train.experimental.PythonState):
    def __init__(self, n=0):
        self.n = n

    def serialize(self):
        return str(self.n)

    def deserialize(self, string_value):
        self.n = int(string_value)


def test_python_state_does_go_into_checkpoints(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(2.0, name="v")
        ckpt = tf.train.Checkpoint(c=_Counter(5), v=v)
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = ckpt.save(str(tmp_path / "x"), session=sess)
    assert [name for name, _ in tf.train.list_variables(path)] == [
        "c/.ATTRIBUTES/py_state",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
        "v/.ATTRIBUTES/VARIABLE_VALUE",
    ]
    with tf.Graph().as_default():
        counter = _Counter()
        status = tf.train.Checkpoint(c=counter).restore(path)
        with tf.Session() as sess:
            status.run_restore_ops(sess)
    assert counter.n == 5
    with tf.eager_mode():
        counter = _Counter()
        tf.train.Checkpoint(c=counter).restore(path)
        assert counter.n == 5
    with pytest.raises(TypeError):
        tf.train.experimental.PythonState()


def test_sdca_shrink_l1_does_shrink_every_weight():
    with tf.Graph().as_default():
        a = tf.Variable([1.0, -0.3, 0.05, -2.0])
        b = tf.Variable([[0.5, -0.1]])
        shrink = tf.train.sdca_shrink_l1([a, b], l1=0.2, l2=2.0)
        unchanged = tf.train.sdca_shrink_l1([a], l1=0.0, l2=0.5)
        assert shrink.name == "SdcaShrinkL1"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(unchanged)
            np.testing.assert_allclose(sess.run(a), [1.0, -0.3, 0.05, -2.0])
            sess.run(shrink)
            a_value, b_value = sess.run([a, b])
    np.testing.assert_allclose(a_value, [0.9, -0.2, 0.0, -1.9], rtol=1e-6)
    np.testing.assert_allclose(b_value, [[0.4, 0.0]], rtol=1e-6)


def test_sync_replicas_shares_its_accumulators_and_token_queue_on_the_ps_as_tensorflow_does():
    # Under replica_device_setter, TensorFlow 2.21's tf.compat.v1 puts each accumulator with
    # its variable, the token queue and the update with the global step, and the local step on
    # the worker (colocated with an op of the worker), so that the replicas share the first
    # and not the last: the devices asserted here are the ones it gives this graph.
    with tf.Graph().as_default() as graph:
        cluster = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222"]})
        setter = tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")
        with tf.device(setter):
            gs = tf.train.get_or_create_global_step()  # ps 0
            w = tf.Variable([1.0, 2.0], name="w")  # ps 1
            opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, 2)
            opt.minimize(tf.reduce_sum(w * w), global_step=gs)
        devices = {op.type: op.device for op in graph.get_operations()}
        assert gs.device == "/job:ps/task:0" and w.device == "/job:ps/task:1"
        assert devices["ResourceConditionalAccumulator"] == w.device
        assert devices["ResourceAccumulatorTakeGradient"] == w.device
        assert devices["ResourceAccumulatorSetGlobalStep"] == w.device
        assert devices["FIFOQueueV2"] == gs.device
        assert devices["QueueDequeueV2"] == gs.device
        local_step = tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES)[0]
        assert local_step.device == "/job:worker/task:0"

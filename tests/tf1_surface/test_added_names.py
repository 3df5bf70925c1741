"""Behaviour of the tf.compat.v1 names added to close gaps of ``known_missing.txt``.

Expected values are what TensorFlow 2.21's ``tf.compat.v1`` (graph mode,
``disable_v2_behavior()``) gives for the same program.
"""

import os

import numpy as np
import pytest

import dataflow as df


def test_gfile_manages_files_and_directories_with_tensorflows_errors(tmp_path):
    root = str(tmp_path / "run")
    df.gfile.MakeDirs(os.path.join(root, "a", "b"))
    df.gfile.MakeDirs(root)  # exists: nothing
    with df.gfile.GFile(os.path.join(root, "notes.txt"), "w") as f:
        f.write("one\ntwo\n")
    with df.gfile.Open(os.path.join(root, "notes.txt")) as f:
        assert list(f) == ["one\n", "two\n"] and f.size() == 8
    assert df.gfile.Exists(root) and df.gfile.IsDirectory(root)
    assert df.gfile.ListDirectory(root) == ["a", "notes.txt"]
    assert df.gfile.Glob(os.path.join(root, "*.txt")) == [os.path.join(root, "notes.txt")]
    assert df.gfile.Stat(os.path.join(root, "notes.txt")).length == 8
    assert [w[0] for w in df.gfile.Walk(root)] == [root, f"{root}/a", f"{root}/a/b"]
    copy = os.path.join(root, "copy.txt")
    df.gfile.Copy(os.path.join(root, "notes.txt"), copy)
    with pytest.raises(df.errors.AlreadyExistsError):
        df.gfile.Copy(os.path.join(root, "notes.txt"), copy)
    df.gfile.Rename(copy, os.path.join(root, "moved.txt"))
    with pytest.raises(df.errors.AlreadyExistsError):
        df.gfile.MkDir(os.path.join(root, "a"))
    with pytest.raises(df.errors.NotFoundError):
        df.gfile.GFile(os.path.join(root, "missing.txt"))
    with pytest.raises(df.errors.NotFoundError):
        df.gfile.Remove(os.path.join(root, "missing.txt"))
    assert df.io.gfile.listdir(root) == ["a", "moved.txt", "notes.txt"]
    assert df.io.gfile.join(root, "a", "b") == os.path.join(root, "a", "b")
    df.io.gfile.rmtree(os.path.join(root, "a"))
    assert not df.io.gfile.exists(os.path.join(root, "a"))
    with df.io.gfile.GFile(os.path.join(root, "bytes.bin"), "wb") as f:
        f.write(b"\x00\x01")
    with df.io.gfile.GFile(os.path.join(root, "bytes.bin"), "rb") as f:
        assert f.read() == b"\x00\x01"


def test_deprecated_variable_spellings_are_the_current_functions():
    v = df.Variable(1.0, name="v")
    local = df.Variable(2.0, name="w", collections=[df.GraphKeys.LOCAL_VARIABLES])
    assert df.all_variables() == [v]
    with df.Session() as sess:
        sess.run([df.initialize_variables([v]), df.initialize_local_variables()])
        assert sess.run([v, local]) == [1.0, 2.0]
        assert sess.run(df.tables_initializer()) is None  # no table: a no_op
    assert df.initialize_all_tables().type == "NoOp"


def test_tables_initializer_runs_what_the_table_initializers_collection_holds():
    v = df.Variable(0.0, name="table_state")
    init = df.assign(v, 7.0)
    df.add_to_collection(df.GraphKeys.TABLE_INITIALIZERS, init)
    with df.Session() as sess:
        sess.run(df.tables_initializer(name="tables"))
        assert sess.run(v) == 7.0


def test_op_scope_and_variable_op_scope_take_the_values_first():
    x = df.constant(1.0)
    with df.op_scope([x], "outer", "default"):
        a = df.identity(x, name="a")
    with df.variable_op_scope([x], None, default_name="layer"):
        w = df.get_variable("w", [], initializer=df.zeros_initializer())
    assert (a.name, w.name) == ("outer/a:0", "layer/w:0")


def test_batch_gather_gathers_per_batch_row():
    params = df.constant([[1, 2, 3], [4, 5, 6]])
    indices = df.constant([[2, 0], [1, 1]])
    deep = df.constant(np.arange(24).reshape(2, 2, 3, 2))
    deep_indices = df.constant([[[2], [0]], [[1], [1]]])
    with df.Session() as sess:
        got, got_deep = sess.run(
            [df.batch_gather(params, indices), df.batch_gather(deep, deep_indices)]
        )
    # TF: [[3 1] [5 5]] and [[[[4 5]] [[6 7]]] [[[14 15]] [[20 21]]]]
    np.testing.assert_array_equal(got, [[3, 1], [5, 5]])
    np.testing.assert_array_equal(got_deep, [[[[4, 5]], [[6, 7]]], [[[14, 15]], [[20, 21]]]])


def test_saturate_cast_clips_to_the_target_range_first():
    x = df.constant([-5.0, 300.0, 3.7])
    y = df.saturate_cast(x, df.uint8)
    small = df.saturate_cast(df.constant([-40000, 40000]), df.int16)
    with df.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [0, 255, 3])
        np.testing.assert_array_equal(sess.run(small), [-32768, 32767])
    assert y.dtype == df.uint8


def test_no_gradient_declares_an_op_type_without_gradient():
    x = df.constant([1.0, -2.0])
    df.no_gradient("Shape")  # already without a gradient: declaring it again is allowed
    (grad,) = df.gradients(df.cast(df.shape(x), df.float32), [x])
    assert grad is None and df.NoGradient is df.no_gradient


def test_manip_and_queue_are_the_top_level_functions_and_classes():
    assert df.manip.roll is df.roll and df.manip.gather_nd is df.gather_nd
    assert df.manip.reverse is df.reverse and df.manip.tile is df.tile
    assert df.queue.FIFOQueue is df.FIFOQueue and df.io.RandomShuffleQueue is df.RandomShuffleQueue
    assert df.space_to_depth is df.nn.space_to_depth and df.depth_to_space is df.nn.depth_to_space
    assert df.get_logger() is df.logging.get_logger()


def test_make_tensor_proto_infers_casts_and_fills_as_tensorflow():
    pytest.importorskip("tensorboardX")
    # TF: float32 [1. 2.]; int32 [[3 3] [3 3]]; float64 [1. 2. 2.]
    floats = df.make_ndarray(df.make_tensor_proto([1.0, 2.0]))
    filled = df.make_ndarray(df.make_tensor_proto(3, shape=[2, 2]))
    padded = df.make_ndarray(df.make_tensor_proto([1, 2], dtype=df.float64, shape=[3]))
    assert floats.dtype == np.float32 and filled.dtype == np.int32 and padded.dtype == np.float64
    np.testing.assert_array_equal(filled, [[3, 3], [3, 3]])
    np.testing.assert_array_equal(padded, [1.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="Too many elements provided. Needed at most 2"):
        df.make_tensor_proto([1, 2, 3], shape=[2])
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        df.make_tensor_proto([1, 2], shape=[1, 2], verify_shape=True)


def test_a_frozen_graph_is_read_into_tf_graphdef_and_imported_as_tf1_programs_do():
    pytest.importorskip("tensorboardX")
    path = os.path.join(os.path.dirname(__file__), "..", "summary", "data", "tf1_while_cond.pb")
    graph_def = df.GraphDef()
    with df.gfile.GFile(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    (out,) = df.import_graph_def(graph_def, return_elements=["out:0"], name="")
    with df.Session() as sess:
        # TF: 6.1666665 for x=[1, 2, 3], n=4 (tests/summary/test_graph_def.py)
        np.testing.assert_allclose(sess.run(out, {"x:0": [1.0, 2.0, 3.0], "n:0": 4}), 6.1666665)
    summary = df.Summary(value=[df.Summary.Value(tag="loss", simple_value=0.5)])
    assert df.summary.Summary is df.Summary and summary.value[0].tag == "loss"
    assert df.NodeDef(name="n").name == "n" and df.summary.Event(step=3).step == 3


def test_cross_entropies_take_labels_and_logits_by_position_as_tensorflow_2_does():
    labels, logits = df.constant([[0.0, 1.0]]), df.constant([[1.0, 2.0]])
    by_position = df.nn.softmax_cross_entropy_with_logits(labels, logits)
    by_name = df.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    sparse = df.nn.sparse_softmax_cross_entropy_with_logits(df.constant([1]), logits)
    sigmoid = df.nn.sigmoid_cross_entropy_with_logits(labels, logits)
    with df.Session() as sess:
        a, b, c, d = sess.run([by_position, by_name, sparse, sigmoid])
    # TF: [0.31326166] twice, [0.31326166], [[1.3132616 0.12692805]]
    np.testing.assert_allclose(a, [0.31326166], rtol=1e-6)
    np.testing.assert_allclose(b, a) and np.testing.assert_allclose(c, a)
    np.testing.assert_allclose(d, [[1.3132616, 0.12692805]], rtol=1e-6)


def test_tensorflow_2_parameter_spellings_of_compat_v1_functions_work():
    x = df.placeholder(df.float32, [None, 2])
    assert df.shape(x, out_type=None).dtype == df.int32 and df.size(x).dtype == df.int32
    assert df.convert_to_tensor(3, dtype_hint=df.float32).dtype == df.float32
    assert df.convert_to_tensor(3, preferred_dtype=df.int64).dtype == df.int64
    number = df.string_to_number(input=df.constant(["2.5"]))
    checked = df.verify_tensor_all_finite(x=df.constant([1.0]), message="finite")
    doubled = df.numpy_function(lambda a: a * 2, [df.constant([1, 2])], df.int32, stateful=False)
    assert doubled.op.type == "PyFuncStateless"
    with df.Session() as sess:
        np.testing.assert_allclose(sess.run(number), [2.5])
        assert sess.run(checked) == [1.0] and list(sess.run(doubled)) == [2, 4]
    with pytest.raises(ValueError, match="one of string_tensor and input"):
        df.string_to_number(df.constant(["1"]), input=df.constant(["1"]))
    a = df.SparseTensor([[0]], [1.0], [2])
    summed = df.sparse_add(a, a)  # threshold None: every sum kept
    with df.Session() as sess:
        assert list(sess.run(summed).values) == [2.0]


def test_a_variable_is_trainable_unless_it_is_synchronized_on_read():
    v = df.Variable(1.0, name="v")
    on_read = df.Variable(1.0, synchronization=df.VariableSynchronization.ON_READ, name="r")
    assert v.trainable and not on_read.trainable
    assert df.trainable_variables() == [v]


def test_conversion_functions_of_lower_priority_are_tried_first():
    class Celsius:
        def __init__(self, degrees):
            self.degrees = degrees

    class Precise(Celsius):
        pass

    df.register_tensor_conversion_function(
        Celsius, lambda v, dtype=None, name=None, **_: df.constant(float(v.degrees))
    )
    df.register_tensor_conversion_function(
        Precise,
        lambda v, dtype=None, name=None, **_: df.constant(v.degrees, df.float64),
        priority=10,
    )
    # Precise is a Celsius too: its own function wins by its lower priority
    assert df.convert_to_tensor(Precise(2)).dtype == df.float64
    assert df.convert_to_tensor(Celsius(2)).dtype == df.float32

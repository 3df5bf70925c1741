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


def test_saver_takes_tensorflows_parameters_in_their_order(tmp_path):
    import inspect

    names = list(inspect.signature(df.train.Saver).parameters)
    assert names[:4] == ["var_list", "reshape", "sharded", "max_to_keep"]
    assert names[-2:] == ["filename", "graph"]
    with pytest.raises(ValueError, match="saver_def describes TensorFlow's save ops"):
        df.train.Saver(saver_def=object())


def test_saver_pads_the_step_and_defers_its_build(tmp_path):
    v = df.Variable([1.0, 2.0], name="v")
    saver = df.train.Saver(defer_build=True, pad_step_number=True)
    w = df.Variable(3.0, name="w")  # made after the Saver: saved, since it builds later
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        with pytest.raises(RuntimeError, match="build\\(\\)` should be called before save"):
            saver.save(sess, str(tmp_path / "model"))
        saver.build()
        path = saver.save(sess, str(tmp_path / "model"), global_step=7)
        assert path == str(tmp_path / "model-00000007")
        sess.run([v.assign([0.0, 0.0]), w.assign(0.0)])
        saver.restore(sess, path)
        assert sess.run(w) == 3.0 and list(sess.run(v)) == [1.0, 2.0]


def test_saver_with_reshape_restores_a_value_of_another_shape(tmp_path):
    with df.Graph().as_default():
        df.Variable([[1.0, 2.0], [3.0, 4.0]], name="m")
        saver = df.train.Saver()
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "square"))
    with df.Graph().as_default():
        flat = df.Variable(df.zeros([4]), name="m")
        with df.Session() as sess:
            with pytest.raises(df.errors.InvalidArgumentError, match="shape"):
                df.train.Saver().restore(sess, path)
            df.train.Saver(reshape=True).restore(sess, path)
            assert list(sess.run(flat)) == [1.0, 2.0, 3.0, 4.0]


def test_an_empty_saver_is_refused_unless_allowed(tmp_path):
    with pytest.raises(ValueError, match="No variables to save"):
        df.train.Saver()
    saver = df.train.Saver(allow_empty=True)
    with df.Session() as sess:
        assert saver.save(sess, str(tmp_path / "nothing")) is None
        saver.restore(sess, str(tmp_path / "nothing"))
    assert os.listdir(tmp_path) == []


def test_saver_keeps_one_checkpoint_every_n_hours_beyond_max_to_keep(tmp_path, monkeypatch):
    import dataflow.io.saver as saver_module

    clock = [1000.0]
    monkeypatch.setattr(saver_module, "_now", lambda: clock[0])
    df.Variable(1.0, name="v")
    saver = df.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1.0)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        for step, at in enumerate([1000.0, 2000.0, 5000.0, 5100.0, 5200.0]):
            clock[0] = at
            saver.save(sess, str(tmp_path / "m"), global_step=step)
    # TF: the first checkpoint saved more than an hour after the Saver was made (step 2, at
    # 5000 s) stays; the others beyond max_to_keep go
    kept = sorted(p for p in os.listdir(tmp_path) if p.endswith(".npz"))
    assert kept == ["m-2.npz", "m-4.npz"]
    assert saver.last_checkpoints == [str(tmp_path / "m-4")]


def test_image_augmentation_and_box_crops_of_the_cifar10_tutorial():
    image = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    gray = np.array([[[1.0], [2.0]], [[3.0], [4.0]]], np.float32)
    with df.Session() as sess:
        for k in range(-1, 5):
            np.testing.assert_array_equal(
                sess.run(df.image.rot90(image, k)), np.rot90(image, k, axes=(0, 1))
            )
        # TF: adjust_contrast(gray, 2.0) -> [-0.5 1.5 3.5 5.5]
        contrast = sess.run(df.image.adjust_contrast(gray, 2.0))
        np.testing.assert_allclose(contrast.ravel(), [-0.5, 1.5, 3.5, 5.5])
        padded = sess.run(df.image.pad_to_bounding_box(gray, 1, 0, 3, 3))
        np.testing.assert_array_equal(padded[..., 0], [[0, 0, 0], [1, 2, 0], [3, 4, 0]])
        cropped = sess.run(df.image.crop_to_bounding_box(image, 1, 1, 1, 2))
        np.testing.assert_array_equal(cropped, image[1:2, 1:3])
        assert sess.run(df.image.grayscale_to_rgb(gray)).shape == (2, 2, 3)
        np.testing.assert_array_equal(sess.run(df.image.transpose(image)), image.transpose(1, 0, 2))
        brighter = sess.run(df.image.random_brightness(image, 0.5, seed=1))
        assert np.all(np.abs(brighter - image) <= 0.5) and np.ptp(brighter - image) < 1e-5
        varied = sess.run(df.image.random_contrast(gray, 0.5, 1.5, seed=1))
        factor = (varied.ravel()[0] - 2.5) / (1.0 - 2.5)
        assert 0.5 <= factor < 1.5
    assert df.image.resize_with_crop_or_pad is df.image.resize_image_with_crop_or_pad
    with pytest.raises(ValueError, match="upper must be > lower"):
        df.image.random_contrast(gray, 1.0, 0.5)
    with pytest.raises(ValueError, match="the box must lie within the image"):
        df.image.crop_to_bounding_box(image, 1, 1, 2, 2)


def test_math_composites_are_zero_safe_and_their_gradients_match_tensorflows():
    x = df.constant([0.0, 1.0, 2.0])
    y = df.constant([0.0, np.e, 0.0])
    big = df.constant([np.inf, 2.0, 3.0])
    xlogy = df.math.xlogy(x, y)
    grads = df.gradients(df.reduce_sum(xlogy), [x, y])
    with df.Session() as sess:
        got = sess.run(
            [
                xlogy,
                df.math.xdivy(x, y),
                df.math.xlog1py(x, df.constant([-1.0, np.e - 1, 0.0])),
                df.math.multiply_no_nan(big, y),
                df.math.reciprocal_no_nan(x),
                df.math.reduce_std([[1.0, 2.0], [3.0, 4.0]]),
                df.math.reduce_variance([[1.0, 2.0], [3.0, 4.0]], axis=0),
                df.math.reduce_euclidean_norm([3.0, 4.0]),
                df.math.polyval([2.0, 3.0, 4.0], 2.0),
            ]
        )
        # TF: [0 1 -inf] [0 0.36787945 inf] [0 1 0] [0 5.4365635 0] [0 1 0.5] 1.118034 [1 1] 5 18
        expected = [
            [0.0, 1.0, -np.inf],
            [0.0, 0.36787945, np.inf],
            [0.0, 1.0, 0.0],
            [0.0, 5.4365635, 0.0],
            [0.0, 1.0, 0.5],
            1.118034,
            [1.0, 1.0],
            5.0,
            18.0,
        ]
        for value, want in zip(got, expected):
            np.testing.assert_allclose(value, want, rtol=1e-6)
        # TF: d/dx = xlogy(x != 0, y) = [0 1 -inf], d/dy = xdivy(x, y) = [0 0.36787945 inf]
        np.testing.assert_allclose(sess.run(grads[0]), [0.0, 1.0, -np.inf])
        np.testing.assert_allclose(sess.run(grads[1]), [0.0, 0.36787945, np.inf], rtol=1e-6)
        assert sess.run(df.math.is_non_decreasing([1, 2, 2])) and sess.run(df.is_non_decreasing(3))
        assert not sess.run(df.is_strictly_increasing([1, 2, 2]))


def test_make_template_shares_the_variables_of_its_first_call():
    def dense(x, units):
        w = df.get_variable("w", [int(x.shape[-1]), units], initializer=df.ones_initializer())
        return df.matmul(x, w)

    template = df.make_template("dense", dense, units=2)
    first, second = template(df.ones([1, 3])), template(df.ones([1, 3]))
    other = df.make_template("dense", dense, units=2)(df.ones([1, 3]))
    # TF: variables dense/w:0 and dense_1/w:0; outputs dense/MatMul:0 and dense_1/MatMul:0
    assert [v.name for v in df.global_variables()] == ["dense/w:0", "dense_1/w:0"]
    assert (first.name, second.name, template.variable_scope_name) == (
        "dense/MatMul:0",
        "dense_1/MatMul:0",
        "dense",
    )
    assert [v.name for v in template.trainable_variables] == ["dense/w:0"]
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        assert sess.run(first).tolist() == sess.run(second).tolist() == [[3.0, 3.0]]
        assert sess.run(other).tolist() == [[3.0, 3.0]]

    leaky = df.make_template("leaky", lambda x: x * df.Variable(1.0))
    leaky(1.0)
    with pytest.raises(ValueError, match="Trainable variable created when calling a template"):
        leaky(1.0)


def test_checkpoints_are_listed_and_read_without_a_graph(tmp_path):
    with df.Graph().as_default():
        df.Variable([[1.0, 2.0]], name="dense/kernel")
        df.Variable(7, name="step")
        saver = df.train.Saver()
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model"), global_step=3)
    # TF: [('dense/kernel', [1, 2]), ('step', [])]
    assert df.train.list_variables(str(tmp_path)) == [("dense/kernel", [1, 2]), ("step", [])]
    np.testing.assert_array_equal(df.train.load_variable(path, "dense/kernel:0"), [[1.0, 2.0]])
    reader = df.train.NewCheckpointReader(path)
    assert reader.has_tensor("step") and reader.get_tensor("step") == 7
    assert reader.get_variable_to_dtype_map() == {"dense/kernel": df.float32, "step": df.int32}
    assert df.train.load_checkpoint(str(tmp_path)).get_variable_to_shape_map()["step"] == []
    with pytest.raises(df.errors.NotFoundError, match="Key missing not found"):
        reader.get_tensor("missing")
    os.mkdir(tmp_path / "nothing")
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        df.train.load_checkpoint(str(tmp_path / "nothing"))


def test_assert_near_rank_in_and_the_static_dtype_checks():
    x = df.placeholder(df.float32, [None])
    near = df.assert_near(x, df.constant([1.0, 2.0]), atol=0.1)
    unknown_rank = df.placeholder(df.float32)
    in_ranks = df.debugging.assert_rank_in(unknown_rank, [1, 2])
    with df.Session() as sess:
        sess.run(near, {x: [1.05, 1.95]})
        with pytest.raises(df.errors.InvalidArgumentError, match="not equal to tolerance"):
            sess.run(near, {x: [1.2, 2.0]})
        sess.run(in_ranks, {unknown_rank: [[1.0]]})
        with pytest.raises(df.errors.InvalidArgumentError, match="must have rank in"):
            sess.run(in_ranks, {unknown_rank: 1.0})
    with pytest.raises(df.errors.InvalidArgumentError, match="not equal to tolerance"):
        df.assert_near(df.constant([1.0]), df.constant([1.5]))  # both known: fails now
    with pytest.raises(ValueError, match=r"must have rank in \(0, 1\)"):
        df.assert_rank_in(df.zeros([2, 2]), [0, 1])
    a, b = df.constant(1.0), df.constant(2.0, df.float64)
    assert (
        df.assert_same_float_dtype([a]) == df.float32 and df.assert_same_float_dtype() == df.float32
    )
    with pytest.raises(ValueError, match="must be of the same type"):
        df.assert_same_float_dtype([a, b])
    with pytest.raises(ValueError, match="Expected floating point type, got int32"):
        df.assert_same_float_dtype([df.constant(1)])
    df.assert_proper_iterable([a, b])
    for bad in (a, np.zeros(2), "text", 3):
        with pytest.raises(TypeError, match="iterable"):
            df.assert_proper_iterable(bad)
    assert df.is_numeric_tensor(a) and not df.is_numeric_tensor(df.constant(True))
    assert not df.is_numeric_tensor(1.0)


def test_text_line_dataset_reads_lines_of_plain_and_compressed_files(tmp_path):
    import gzip
    import zlib

    (tmp_path / "a.txt").write_bytes(b"one\ntwo\r\n\nlast")
    (tmp_path / "b.gz").write_bytes(gzip.compress(b"x\ny\n"))
    (tmp_path / "c.z").write_bytes(zlib.compress(b"z\n"))
    plain = df.data.TextLineDataset([str(tmp_path / "a.txt")])
    packed = df.data.TextLineDataset(str(tmp_path / "b.gz"), compression_type="GZIP")
    deflated = df.data.TextLineDataset(str(tmp_path / "c.z"), compression_type="ZLIB")
    lines = plain.concatenate(packed).concatenate(deflated).prefetch(df.data.AUTOTUNE)
    batch = lines.batch(10).make_one_shot_iterator().get_next()
    missing = df.data.TextLineDataset(str(tmp_path / "none.txt")).make_one_shot_iterator()
    with df.Session() as sess:
        # TF: [b'one' b'two' b'' b'last' b'x' b'y' b'z']
        assert sess.run(batch).tolist() == [b"one", b"two", b"", b"last", b"x", b"y", b"z"]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(batch)
        with pytest.raises(df.errors.NotFoundError, match="none.txt"):
            sess.run(missing.get_next())
    assert plain.output_types == df.string and plain.output_shapes.as_list() == []


def test_uniform_unit_scaling_and_identity_initializers():
    w = df.get_variable("w", [50, 4], initializer=df.uniform_unit_scaling_initializer(2.0, seed=1))
    eye = df.get_variable("eye", [2, 3], initializer=df.initializers.identity(gain=0.5))
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        values = sess.run(w)
        limit = 2.0 * np.sqrt(3 / 50)
        assert np.all(np.abs(values) <= limit) and np.abs(values).max() > limit / 2
        np.testing.assert_array_equal(sess.run(eye), [[0.5, 0, 0], [0, 0.5, 0]])
    assert df.initializers.uniform_unit_scaling is df.uniform_unit_scaling_initializer
    with pytest.raises(ValueError, match="only be used for 2D matrices"):
        df.initializers.identity()([2, 2, 2])


def test_batch_join_and_shuffle_batch_join_batch_examples_of_several_sources():
    sources = [[df.constant(1), df.constant("a")], [df.constant(2), df.constant("b")]]
    numbers, letters = df.train.batch_join(sources, batch_size=6, capacity=8)
    shuffled = df.train.shuffle_batch_join(
        [{"n": df.constant(3)}, {"n": df.constant(4)}], 5, capacity=10, min_after_dequeue=2, seed=1
    )
    assert numbers.shape.as_list() == [6] and shuffled["n"].shape.as_list() == [5]
    with df.Session() as sess:
        coord = df.train.Coordinator()
        threads = df.train.start_queue_runners(sess, coord)
        try:
            got_numbers, got_letters = sess.run([numbers, letters])
            got_shuffled = sess.run(shuffled["n"])
        finally:
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=30)
    pairs = set(zip(got_numbers.tolist(), got_letters.tolist()))
    assert pairs <= {(1, b"a"), (2, b"b")} and set(got_shuffled.tolist()) <= {3, 4}
    with pytest.raises(TypeError, match="must have the dtypes"):
        df.train.batch_join([[df.constant(1)], [df.constant(1.0)]], 2)
    with pytest.raises(ValueError, match="Expected at least one input in batch_join"):
        df.train.batch_join([], 2)


def test_py_function_runs_its_function_eagerly_on_eager_tensors():
    x = df.placeholder(df.float32, [2])
    seen = []

    def scale(a, b):
        seen.append((type(a).__name__, df.executing_eagerly()))
        return a * 2.0 + df.reduce_sum(a), b + 1

    doubled, bumped = df.py_function(scale, [x, df.constant(3)], [df.float32, df.int32])
    total = df.py_function(lambda a: a.numpy().sum(), [x], df.float32)
    with df.Session() as sess:
        got = sess.run([doubled, bumped, total], {x: [1.0, 2.0]})
    # TF: [5. 7.], 4, 3.0
    np.testing.assert_array_equal(got[0], [5.0, 7.0])
    assert (got[1], got[2]) == (4, 3.0) and seen == [("EagerTensor", True)]
    assert not df.executing_eagerly()


def test_counting_functions_match_tensorflow():
    values = [-1.0, 0.0, 1.5, 2.0, 5.0, 15.0]
    with df.Session() as sess:
        got = sess.run(
            [
                df.math.confusion_matrix([1, 2, 4], [2, 2, 4]),
                df.confusion_matrix([1, 2], [2, 2], num_classes=3, weights=[0.5, 2.0]),
                df.math.bincount([1, 1, 3]),
                df.bincount([1, 1, 3], minlength=6),
                df.bincount([1, 1, 3], maxlength=2),
                df.bincount([0, 2], weights=[0.5, 1.5]),
                df.histogram_fixed_width(values, [0.0, 5.0], nbins=5),
                df.histogram_fixed_width_bins(values, [0.0, 5.0], nbins=5),
                df.unravel_index([2, 5, 7], [3, 3]),
                df.unravel_index(1621, [6, 7, 8, 9]),
            ]
        )
    expected_matrix = np.zeros((5, 5), np.int32)
    expected_matrix[1, 2] = expected_matrix[2, 2] = expected_matrix[4, 4] = 1
    np.testing.assert_array_equal(got[0], expected_matrix)
    np.testing.assert_array_equal(got[1], [[0, 0, 0], [0, 0, 0], [0, 0, 2]])  # int32 weights
    # TF: [0 2 0 1], [0 2 0 1 0 0], [0 2], [0.5 0. 1.5], [2 1 1 0 2], [0 0 1 2 4 4]
    for value, want in zip(
        got[2:8],
        [
            [0, 2, 0, 1],
            [0, 2, 0, 1, 0, 0],
            [0, 2],
            [0.5, 0, 1.5],
            [2, 1, 1, 0, 2],
            [0, 0, 1, 2, 4, 4],
        ],
    ):
        np.testing.assert_array_equal(value, want)
    np.testing.assert_array_equal(got[8], np.unravel_index([2, 5, 7], (3, 3)))
    np.testing.assert_array_equal(got[9], [3, 1, 4, 1])


def test_one_d_pools_the_v2_pools_and_tf2s_loss_helpers():
    x = np.arange(12, dtype=np.float32).reshape(1, 6, 2)
    with df.Session() as sess:
        np.testing.assert_array_equal(
            sess.run(df.nn.max_pool1d(x, 2, 2, "VALID"))[0], [[2, 3], [6, 7], [10, 11]]
        )
        np.testing.assert_array_equal(
            sess.run(df.nn.avg_pool_v2(x, [2], [2], "VALID"))[0], [[1, 2], [5, 6], [9, 10]]
        )
        assert sess.run(df.nn.max_pool_v2(x.reshape(1, 2, 3, 2), 2, 1, "VALID")).shape == (
            1,
            1,
            2,
            2,
        )
        assert sess.run(df.nn.compute_average_loss([1.0, 2.0, 3.0])) == 2.0
        weighted = df.nn.compute_average_loss(
            [1.0, 2.0], sample_weight=[2.0, 0.0], global_batch_size=4
        )
        assert sess.run(weighted) == 0.5
        assert sess.run(df.nn.scale_regularization_loss([1.0, 2.0])) == 3.0
        normalized = df.nn.batch_norm_with_global_normalization(
            np.ones((1, 2), np.float32), [0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [2.0, 2.0], 0.0, True
        )
        np.testing.assert_array_equal(sess.run(normalized), [[2.0, 2.0]])
    channels_first = np.arange(12, dtype=np.float32).reshape(1, 2, 6)
    with df.Session() as sess:  # values from TensorFlow 2.21
        np.testing.assert_array_equal(
            sess.run(df.nn.max_pool1d(channels_first, 2, 2, "VALID", data_format="NCW"))[0],
            [[1, 3, 5], [7, 9, 11]],
        )
        np.testing.assert_array_equal(
            sess.run(df.nn.avg_pool1d(channels_first, 2, 2, "VALID", data_format="NCW"))[0],
            [[0.5, 2.5, 4.5], [6.5, 8.5, 10.5]],
        )

"""TensorFlow 1.x's small names: compat.v1, the v2 switches, logging, flags and app.run,
arg_max/arg_min, cond's old argument names, Dimension, and fetch/feed prevention.

Expected values and messages are those TensorFlow 2.21's ``tf.compat.v1`` (graph mode,
``disable_v2_behavior()``) gives for the same program.
"""

import subprocess
import sys
import textwrap

import pytest

import dataflow as df
from dataflow.compat.flags import FlagValues


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_compat_v1_is_the_whole_package_and_the_v2_switches_are_accepted():
    import dataflow.compat.v1 as tf

    tf.disable_v2_behavior()
    tf.disable_eager_execution()
    tf.disable_control_flow_v2()
    tf.disable_v2_tensorshape()
    assert tf.executing_eagerly() is False
    assert tf.placeholder is df.placeholder and tf.train is df.train and tf.nn is df.nn
    assert df.compat.v1.get_variable is df.get_variable
    assert "placeholder" in dir(tf)
    assert (df.compat.as_bytes("é"), df.compat.as_text(b"x"), df.compat.as_str_any(3)) == (
        "é".encode(),
        "x",
        "3",
    )
    assert tf is df  # dataflow.compat.v1 is the package itself
    with pytest.raises(AttributeError, match="module 'dataflow' has no attribute 'estimator'"):
        tf.estimator  # noqa: B018


def test_arg_max_and_arg_min_are_argmax_and_argmin_with_a_dimension():
    a = df.arg_max([[1, 3, 2]], 1)
    b = df.arg_min([[1, 3, 2]], dimension=1, name="am", output_type=df.int32)
    x = df.placeholder(df.float32, [3])
    in_branch = df.cond(df.reduce_sum(x) > 0, lambda: df.arg_max(x, 0), lambda: df.arg_min(x, 0))
    # TF: ArgMax int64 ArgMax:0, ArgMin int32 am:0
    assert (a.op.type, a.dtype, a.name, b.op.type, b.dtype, b.name) == (
        "ArgMax",
        df.int64,
        "ArgMax:0",
        "ArgMin",
        df.int32,
        "am:0",
    )
    with df.Session() as sess:
        assert sess.run([a, b]) == [[1], [0]]
        assert sess.run(in_branch, {x: [1.0, 5.0, 2.0]}) == 1
        assert sess.run(in_branch, {x: [-1.0, -5.0, 2.0]}) == 1


def test_cond_takes_the_old_fn1_fn2_names_and_strict():
    x = df.placeholder(df.float32, [])
    old = df.cond(x > 0, fn1=lambda: x, fn2=lambda: -x)
    strict = df.cond(x > 0, lambda: [x], lambda: [-x], strict=True)
    loose = df.cond(x > 0, lambda: [x], lambda: [-x])
    assert isinstance(strict, list) and isinstance(loose, df.Tensor)
    with pytest.raises(TypeError, match="'true_fn' and 'fn1' may not be set simultaneously"):
        df.cond(x > 0, lambda: x, lambda: -x, fn1=lambda: x)
    with df.Session() as sess:
        assert sess.run(old, {x: -2.0}) == 2.0


def test_shapes_offer_tensorflow_1_dimensions_beside_plain_integers():
    x = df.placeholder(df.float32, [None, 3])
    shape = x.shape
    assert shape[1].value == 3 and shape[1] == 3 and isinstance(shape[1], df.Dimension)
    assert shape[0].value is None and shape.as_list() == [None, 3]
    assert (repr(shape[1]), str(shape[1])) == ("Dimension(3)", "3")
    unknown, known = shape.dims
    assert (unknown.value, known.value, repr(unknown), str(unknown)) == (
        None,
        3,
        "Dimension(None)",
        "?",
    )
    # TF: Dimension(None) == 3 is None, Dimension(None) + 1 is unknown
    assert (unknown == 3) is None and (unknown + 1).value is None and (known + 1) == 4
    assert int(shape[1]) * 2 == 6 and df.zeros([shape[1], 2]).shape == (3, 2)
    assert df.TensorShape(shape.dims) == shape
    assert df.dimension_value(shape[1]) == 3 and df.dimension_value(unknown) is None
    assert df.Dimension(5).value == 5 and df.Dimension(df.Dimension(None)).value is None
    assert df.Dimension(3).merge_with(None).value == 3
    assert not df.Dimension(3).is_compatible_with(4)
    with pytest.raises(ValueError, match="Dimension -2 must be >= 0"):
        df.Dimension(-2)
    with pytest.raises(TypeError, match="Dimension value must be integer or None"):
        df.Dimension(2.5)


def test_shape_items_are_tf1_dimensions_after_disable_v2_behavior():
    # TF: import tensorflow.compat.v1 as tf; tf.disable_v2_behavior() gives these.
    df.disable_v2_behavior()
    x = df.placeholder(df.float32, [None, 3])
    first, second = x.shape[0], x.get_shape()[1]
    assert isinstance(first, df.Dimension) and isinstance(second, df.Dimension)
    assert (first.value, second.value, repr(first), repr(second)) == (
        None,
        3,
        "Dimension(None)",
        "Dimension(3)",
    )
    assert [d.value for d in x.shape] == [None, 3]  # iteration gives Dimensions too
    assert [type(d) for d in x.shape.as_list()] == [type(None), int]  # as_list stays plain
    assert second == 3 and second != 4 and (first == 3) is None and (first != 3) is None
    assert (second + 1, 2 * second, second // 2, int(second), [0, 1, 2, 3][second]) == (
        4,
        6,
        1,
        3,
        3,
    )
    assert df.zeros([second, 2]).shape.as_list() == [3, 2]
    assert df.TensorShape(None)[0].value is None
    assert df.TensorShape([2, None])[1:].as_list() == [None]
    with pytest.raises(TypeError):
        int(first)


def test_enable_v2_tensorshape_gives_plain_integers_and_none():
    x = df.placeholder(df.float32, [None, 3])
    try:
        df.enable_v2_tensorshape()
        assert x.shape[0] is None and type(x.shape[1]) is int and x.shape[1] == 3
        assert list(x.shape) == [None, 3] and df.TensorShape(None)[0] is None
        df.disable_v2_tensorshape()
        assert x.shape[0].value is None and isinstance(x.shape[1], df.Dimension)
        df.enable_v2_tensorshape()
        df.disable_v2_behavior()
        assert x.shape[0].value is None
    finally:
        df.disable_v2_tensorshape()


def test_dataflows_own_code_reads_unknown_dimensions_as_none_whatever_the_switch():
    x = df.placeholder(df.float32, [None])
    with pytest.raises(ValueError, match=r"Cannot infer num from the shape \(\?,\)"):
        df.unstack(x)
    y = df.placeholder(df.float32, [None, 4])
    parts = df.split(y, 2, axis=1)
    assert [p.shape.as_list() for p in parts] == [[None, 2], [None, 2]]


def test_prevented_fetches_and_feeds_are_refused_with_tensorflows_errors(fresh_graph):
    p = df.placeholder(df.float32, [], name="p")
    y = p * 2.0
    assert fresh_graph.is_fetchable(p) and fresh_graph.is_feedable(p)
    fresh_graph.prevent_fetching(p.op)
    fresh_graph.prevent_feeding(p)
    assert not fresh_graph.is_fetchable(p) and not fresh_graph.is_fetchable(p.op)
    assert not fresh_graph.is_feedable(p) and fresh_graph.is_feedable(y)
    with df.Session() as sess:
        with pytest.raises(ValueError, match=rf"Tensor 'p:0' may not be fed.*{__file__}"):
            sess.run(y, {p: 1.0})
        marked = "Operation 'p' .*has been marked as not fetchable"
        with pytest.raises(df.errors.InaccessibleTensorError, match=marked):
            sess.run(p.op)
        q = df.placeholder_with_default(1.0, [])
        assert sess.run(q * 3.0) == 3.0  # the Session is still usable


def test_logging_levels_and_verbosity(capfd):
    old = df.logging.get_verbosity()
    try:
        assert old == df.logging.WARN
        df.logging.info("hidden")
        df.logging.set_verbosity(df.logging.INFO)
        df.logging.info("step %d", 3)
        df.logging.debug("still hidden")
        df.logging.warn("careful")
        df.logging.error("bad")
        for i in range(3):
            df.logging.log_first_n(df.logging.INFO, "first %d", 2, i)
    finally:
        df.logging.set_verbosity(old)
    assert capfd.readouterr().err.splitlines() == [
        "INFO:dataflow:step 3",
        "WARNING:dataflow:careful",
        "ERROR:dataflow:bad",
        "INFO:dataflow:first 0",
        "INFO:dataflow:first 1",
    ]


def test_flags_parse_the_command_line_and_app_run_calls_main(tmp_path):
    program = tmp_path / "train.py"
    program.write_text(
        textwrap.dedent(
            """
            import dataflow as tf

            tf.app.flags.DEFINE_integer("steps", 10, "how many steps")
            tf.flags.DEFINE_float("rate", 0.5, "learning rate")
            tf.app.flags.DEFINE_string("name", "run", "a name")
            tf.app.flags.DEFINE_boolean("fast", False, "go fast")
            tf.app.flags.DEFINE_boolean("check", True, "check things")
            FLAGS = tf.app.flags.FLAGS

            def main(argv):
                print(argv[1:], FLAGS.steps, FLAGS.rate, FLAGS.name, FLAGS.fast, FLAGS.check)
                return 3

            if __name__ == "__main__":
                tf.app.run()
            """
        )
    )
    args = ["--steps=5", "--rate", "0.25", "--fast", "--nocheck", "extra", "--unknown=1"]
    done = subprocess.run(
        [sys.executable, str(program), *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout.split("\n")[0] == "['extra', '--unknown=1'] 5 0.25 run True False"


def test_flags_read_before_parsing_parse_sys_argv_and_errors_are_clear(monkeypatch):
    flags = FlagValues()
    monkeypatch.setattr(df.flags, "FLAGS", flags)
    df.flags.DEFINE_integer("batch", 32, "batch size")
    df.flags.DEFINE_enum("mode", "train", ["train", "eval"], "mode")
    monkeypatch.setattr(sys, "argv", ["prog", "--batch=8"])
    assert flags.batch == 8 and flags.mode == "train" and flags.is_parsed()
    flags.batch = 16
    assert flags.flag_values_dict() == {"batch": 16, "mode": "train"}
    with pytest.raises(df.flags.Error, match="The flag 'batch' is defined twice"):
        df.flags.DEFINE_integer("batch", 1, "")
    with pytest.raises(df.flags.Error, match="Invalid value for flag --batch"):
        flags(["prog", "--batch=many"])
    with pytest.raises(df.flags.Error, match="Invalid value for flag --mode"):
        flags(["prog", "--mode=test"])
    with pytest.raises(df.flags.Error, match="Unknown command line flag 'other'"):
        flags(["prog", "--other=1"])
    assert flags(["prog", "--batch", "4", "rest"]) == ["prog", "rest"] and flags.batch == 4


# The everyday names of tf.compat.v1 that classic programs reach for; each has a behaviour test
# in tests/ops (test_extra_math_ops, test_extra_nn_ops, test_image_ops,
# test_matrix_and_array_extras, test_extra_segment_ops, test_check_ops).
EVERYDAY_NAMES = {
    "": """to_float to_double to_int32 to_int64 round reciprocal rint is_nan is_inf is_finite sort
        argsort cumprod reduce_logsumexp count_nonzero einsum tensordot boolean_mask
        sequence_mask eye linspace lin_space diag diag_part matrix_transpose matrix_inverse
        matrix_determinant matrix_band_part matrix_diag matrix_diag_part matrix_set_diag
        matrix_solve cholesky broadcast_to repeat roll unique_with_counts dynamic_partition
        dynamic_stitch unsorted_segment_max unsorted_segment_min unsorted_segment_mean
        unsorted_segment_prod segment_max segment_min segment_mean segment_prod div div_no_nan
        truncatediv truncatemod floormod atan2 erf erfc lgamma digamma sinh cosh asin acos atan
        asinh acosh atanh expm1 log_sigmoid scalar_mul accumulate_n shape_n identity_n setdiff1d
        invert_permutation meshgrid ensure_shape get_static_value is_tensor random_crop trace
        assert_equal assert_none_equal assert_less assert_less_equal assert_greater
        assert_greater_equal assert_positive assert_negative assert_non_negative
        assert_non_positive assert_rank assert_rank_at_least assert_type assert_integer
        assert_scalar check_numerics add_check_numerics_ops verify_tensor_all_finite""",
    "nn": """leaky_relu selu softsign swish silu crelu top_k in_top_k xw_plus_b relu_layer
        zero_fraction log_poisson_loss sufficient_statistics normalize_moments weighted_moments
        max_pool2d avg_pool2d space_to_depth depth_to_space embedding_lookup_sparse""",
    "math": """erf top_k in_top_k divide_no_nan polygamma zeta segment_max unsorted_segment_prod
        invert_permutation softplus log_softmax zero_fraction reduce_logsumexp""",
    "image": """resize_images resize_bilinear resize_nearest_neighbor flip_left_right flip_up_down
        random_flip_left_right random_flip_up_down per_image_standardization
        convert_image_dtype rgb_to_grayscale central_crop resize_image_with_crop_or_pad
        random_crop adjust_brightness ResizeMethod""",
    "linalg": """inv det solve cholesky band_part diag diag_part set_diag eye matmul norm
        l2_normalize einsum tensordot trace transpose matrix_transpose qr""",
    "debugging": """Assert assert_all_finite assert_equal assert_less assert_rank check_numerics
        is_nan is_inf is_finite""",
}


@pytest.mark.parametrize("module", sorted(EVERYDAY_NAMES))
def test_everyday_tf1_names_exist_under_their_tensorflow_spelling(module):
    namespace = getattr(df, module) if module else df
    missing = [n for n in EVERYDAY_NAMES[module].split() if not hasattr(namespace, n)]
    assert missing == []

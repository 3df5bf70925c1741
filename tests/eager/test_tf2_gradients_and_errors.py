"""What a GradientTape gives for variable targets and integer values, the errors of ops run
eagerly, and Python integers mixed with integer tensors, as TensorFlow 2 has them.

Every expected value, error class and warning here is what TensorFlow 2.21 gives for the same
program in eager mode (or in a ``tf.function``, or ``tf.compat.v1`` graph mode, where a test
says so).
"""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager_only(eager):
    yield


def _value(tensor):
    return None if tensor is None else np.asarray(tensor.numpy()).tolist()


# -- a variable as the target ---------------------------------------------------------------------
def test_the_gradient_of_a_variable_with_respect_to_itself_is_ones():
    v, w = df.Variable(3.0), df.Variable([1.0, 2.0])
    with df.GradientTape(persistent=True) as tape:
        pass  # nothing recorded: the target is the source itself
    scalar = tape.gradient(v, v)
    assert scalar.dtype is df.float32 and scalar.shape == () and _value(scalar) == 1.0
    assert _value(tape.gradient(w, w)) == [1.0, 1.0]
    assert _value(tape.gradient(w, w, output_gradients=df.constant([3.0, 4.0]))) == [3.0, 4.0]
    assert [_value(g) for g in tape.gradient(v, [v, w])] == [1.0, None]
    assert tape.gradient(v, w) is None
    assert _value(tape.gradient(v, v, unconnected_gradients="zero")) == 1.0
    assert _value(tape.jacobian(w, w)) == [[1.0, 0.0], [0.0, 1.0]]


def test_a_variable_target_is_its_own_source_whatever_its_kind():
    untrained, counter = df.Variable(2.0, trainable=False), df.Variable(2)
    with df.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        pass
    assert _value(tape.gradient(untrained, untrained)) == 1.0
    ones = tape.gradient(counter, counter)
    assert ones.dtype is df.int32 and _value(ones) == 1  # even an integer variable
    v = df.Variable(3.0)
    assert _value(tape.gradient(v.assign(5.0), v)) == 1.0  # the variable after an update


def test_targets_that_read_a_variable_still_differentiate_through_the_reads():
    v = df.Variable(3.0)
    with df.GradientTape(persistent=True) as tape:
        times_one, read, doubled = v * 1.0, v.read_value(), v * 2.0
    assert _value(tape.gradient(times_one, v)) == 1.0
    assert _value(tape.gradient(read, v)) == 1.0
    assert _value(tape.gradient([v, doubled], v)) == 3.0
    x = df.constant(2.0)
    assert _value(tape.gradient(x, x)) == 1.0  # a tensor target that is the source, unwatched


# -- integers get no gradient ---------------------------------------------------------------------
def test_an_integer_source_gets_no_gradient(capsys):
    x = df.constant(3)
    with df.GradientTape(persistent=True) as tape:
        tape.watch(x)
        squared = x * x
        as_float = df.cast(x, df.float32) * 2.0
    assert "The dtype of the watched tensor must be floating (e.g. df.float32), got df.int32" in (
        capsys.readouterr().err
    )
    assert tape.gradient(squared, x) is None and tape.gradient(as_float, x) is None
    zero = tape.gradient(squared, x, unconnected_gradients="zero")
    assert zero.dtype is df.int32 and _value(zero) == 0
    ones = tape.gradient(x, x)  # the target is the source: ones, of its dtype
    assert ones.dtype is df.int32 and _value(ones) == 1
    assert tape.jacobian(squared, x) is None


@pytest.mark.parametrize(
    "make, op",
    [
        (lambda: df.constant(3, df.int64), lambda x: x * x),
        (lambda: df.constant([1, 2]), df.reduce_sum),
        (lambda: df.constant(True), df.logical_not),
    ],
)
def test_no_integer_or_bool_dtype_gets_a_gradient(make, op):
    x = make()
    with df.GradientTape() as tape:
        tape.watch(x)
        y = op(x)
    assert tape.gradient(y, x) is None


@pytest.mark.parametrize(
    "value, expected",
    [(np.float16(3.0), 6.0), (np.complex128(3 + 1j), 6 - 2j), (np.float64(3.0), 6.0)],
)
def test_floating_and_complex_dtypes_get_gradients(value, expected):
    x = df.constant(value)
    with df.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    grad = tape.gradient(y, x)
    assert grad.dtype is x.dtype and grad.numpy() == expected


def test_an_integer_value_on_the_way_cuts_the_gradient_through_it():
    x = df.constant(3.0)
    with df.GradientTape(persistent=True) as tape:
        tape.watch(x)
        as_int = df.cast(x, df.int32)
        through_int_only = df.cast(as_int * as_int, df.float32)
        both_ways = df.cast(as_int, df.float32) * x
        int_target = as_int * 2
    assert tape.gradient(through_int_only, x) is None
    assert _value(tape.gradient(both_ways, x)) == 3.0  # only the float path counts
    assert tape.gradient(int_target, x) is None
    assert tape.gradient(through_int_only, as_int) is None


def test_an_integer_and_a_float_watched_together():
    i, f = df.constant(3), df.constant(2.0)
    with df.GradientTape(persistent=True) as tape:
        tape.watch([i, f])
        y = df.cast(i, df.float32) * f
    grads = tape.gradient(y, [i, f])
    assert grads[0] is None and _value(grads[1]) == 3.0
    zeros = tape.gradient(y, [i, f], unconnected_gradients="zero")
    assert zeros[0].dtype is df.int32 and [_value(g) for g in zeros] == [0, 3.0]


def test_an_integer_variable_is_watched_but_gets_no_gradient():
    counter = df.Variable(3)
    with df.GradientTape() as tape:
        y = counter * 2
    assert tape.gradient(y, counter) is None
    assert [v is counter for v in tape.watched_variables()] == [True]


def test_the_warning_about_a_watched_integer_is_given_five_times_per_line(capsys):
    for _ in range(7):
        with df.GradientTape() as tape:
            tape.watch(df.constant(1))
    assert capsys.readouterr().err.count("The dtype of the watched tensor must be floating") == 5


def test_unconnected_sources_of_a_jacobian_are_none_or_zeros():
    x, z = df.constant([1.0, 2.0]), df.constant([3.0, 4.0])
    with df.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = x * 2.0
    jx, jz = tape.jacobian(y, [x, z])
    assert _value(jx) == [[2.0, 0.0], [0.0, 2.0]] and jz is None
    _, zeros = tape.jacobian(y, [x, z], unconnected_gradients="zero")
    assert _value(zeros) == [[0.0, 0.0], [0.0, 0.0]]


# -- eager shape and dtype errors are InvalidArgumentError ----------------------------------------
C = df.constant


@pytest.mark.parametrize(
    "run, op",
    [
        (lambda: df.reshape(C([1, 2, 3]), [2, 2]), "Reshape"),
        (lambda: df.reshape(C([1, 2, 3]), [-1, 2]), "Reshape"),
        (lambda: df.reshape(C([1, 2, 3, 4]), [-1, -1]), "Reshape"),
        (lambda: df.matmul(C([[1.0, 2.0]]), C([[1.0, 2.0]])), "MatMul"),
        (lambda: C([[1.0, 2.0]]) @ C([[1.0, 2.0]]), "MatMul"),
        (lambda: df.matmul(C([1.0, 2.0]), C([1.0, 2.0])), "MatMul"),
        (lambda: df.concat([C([[1, 2]]), C([[1, 2, 3]])], 0), "ConcatV2"),
        (lambda: df.concat([C([1, 2]), C([[1, 2]])], 0), "ConcatV2"),
        (lambda: df.concat([C([1, 2]), C([1, 2])], 3), "ConcatV2"),
        (lambda: C([1, 2, 3]) + C([1, 2]), "Add"),
        (lambda: df.add(C([1, 2, 3]), C([1, 2])), "Add"),
        (lambda: df.equal(C([1, 2, 3]), C([1, 2])), "Equal"),
        (lambda: df.stack([C([1, 2]), C([1, 2, 3])]), "Pack"),
        (lambda: df.transpose(C([[1, 2]]), [0, 1, 2]), "Transpose"),
        (lambda: df.reduce_sum(C([1, 2, 3]), axis=2), "Sum"),
        (lambda: df.squeeze(C([[1, 2]]), axis=1), "Squeeze"),
        (lambda: df.split(C([1, 2, 3]), 2), "Split"),
        (lambda: df.tile(C([1, 2]), [1, 2]), "Tile"),
        (lambda: df.broadcast_to(C([1, 2, 3]), [2]), "broadcast_to"),
        (lambda: df.gather(C([1, 2]), 5), "GatherV2"),
        (lambda: C([1, 2, 3]) + C([1.0, 2.0, 3.0]), "Add"),  # dtypes that do not match
        (lambda: df.matmul(df.ones([2, 2]), df.ones([2, 2], df.int32)), "MatMul"),
        (lambda: df.concat([C([1, 2]), C([1.0])], 0), "ConcatV2"),
    ],
)
def test_eager_shape_and_dtype_errors_are_invalid_argument_errors_naming_op_and_line(run, op):
    with pytest.raises(df.errors.InvalidArgumentError) as raised:
        run()
    assert op in str(raised.value) and "test_tf2_gradients_and_errors.py:" in str(raised.value)


def test_the_reshape_error_says_what_does_not_fit():
    with pytest.raises(df.errors.InvalidArgumentError, match=r"Reshape op .*3 elements.*\[2, 2\]"):
        df.reshape(df.constant([1, 2, 3]), [2, 2])


def test_a_python_value_that_does_not_convert_is_still_a_type_error():
    # TF 2.21: "Cannot convert 1.5 to EagerTensor of dtype int32" (TypeError) for these.
    x = df.constant([1, 2])
    for run in (lambda: x * 1.5, lambda: x - 1.5, lambda: 1.5 + x, lambda: x < 1.5):
        with pytest.raises(TypeError):
            run()


def test_inside_a_function_and_in_a_graph_the_errors_stay_value_and_type_errors():
    @df.function
    def bad_reshape():
        return df.reshape(df.constant([1, 2, 3]), [2, 2])

    @df.function
    def bad_matmul():
        return df.matmul(df.constant([[1.0, 2.0]]), df.constant([[1.0, 2.0]]))

    @df.function
    def mixed_dtypes(x):
        return x + df.constant(1.5)

    with pytest.raises(ValueError, match=r"Reshape op .*test_tf2_gradients_and_errors.py:\d+"):
        bad_reshape()
    with pytest.raises(ValueError, match="MatMul"):
        bad_matmul()
    with pytest.raises(TypeError, match="Add"):
        mixed_dtypes(df.constant([1, 2]))
    with df.graph_mode(), df.Graph().as_default():
        with pytest.raises(ValueError, match="Reshape"):
            df.reshape(df.constant([1, 2]), [3])
        with pytest.raises(TypeError, match="Add"):
            df.constant([1, 2]) + df.constant(1.0)


# -- Python integers and bools with integer tensors -----------------------------------------------
def test_python_integers_wrap_to_the_dtype_of_an_integer_tensor():
    x = df.constant([1, 2], df.int32)
    assert _value(x + 2**40) == [1, 2] and _value(2**40 + x) == [1, 2]  # 2**40 wraps to 0
    assert _value(x + 2**31) == [-2147483647, -2147483646]
    assert _value(x + (2**32 + 5)) == [6, 7] and _value(x + -(2**40)) == [1, 2]
    assert _value(x * 2**40) == [0, 0] and _value(x - 2**40) == [1, 2]
    assert _value(x < 2**40) == [False, False] and _value(x == 2**40) == [False, False]
    assert _value(df.add(x, 2**40)) == [1, 2] and _value(x + [2**40, 1]) == [1, 3]
    assert _value(df.constant(2**40, df.int32)) == 0
    assert _value(df.constant([1], df.uint8) + 300) == [45]
    assert _value(df.constant([1], df.int64) + 2**40) == [1099511627777]
    assert _value(df.Variable([1, 2]) + 2**40) == [1, 2]


def test_python_bools_add_to_integer_and_float_tensors_as_one_and_zero():
    x = df.constant([1, 2], df.int32)
    assert _value(x + True) == [2, 3] and _value(True + x) == [2, 3] and _value(x + False) == [1, 2]
    assert _value(df.constant(1.0) + True) == 2.0
    assert _value(df.constant(True, df.int32)) == 1

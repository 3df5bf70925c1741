"""Variables: names, conversions and the values of their assign ops, as in tf.compat.v1."""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_variable_op_names_follow_tensorflow():
    v = df.Variable([1.0, 2.0], name="v")
    assert v.initial_value.name == "v/initial_value:0"
    assert v.initializer.name == "v/Assign"
    assert v.value().name == "v/read:0"
    assert v.read_value().name == "read:0"
    with df.name_scope("outer"):
        assert v.read_value().name == "outer/read:0"
    update = v.assign([3.0, 4.0])
    assert update.name == "Assign:0" and update.op.inputs[1].op.name == "Assign/value"
    assert v.assign_add([1.0, 1.0], name="step").name == "step:0"


def test_callable_initial_value_is_built_in_an_initializer_scope():
    v = df.Variable(lambda: [1.0], name="v")
    assert v.initial_value.name == "v/Initializer/initial_value:0"


def test_assign_with_read_value_false_returns_the_operation():
    v = df.Variable(1.0)
    op = v.assign(2.0, read_value=False)
    assert isinstance(op, df.Operation) and op.type == "Assign"
    with df.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(op) is None
        assert sess.run(v) == 2.0


def test_assigning_a_tensor_of_another_dtype_is_a_type_error():
    v = df.Variable([1.0, 2.0])
    with pytest.raises(TypeError, match="int32"):
        v.assign(df.constant([1, 2]))
    # Python values convert to the variable's dtype.
    assert v.assign([1, 2]).dtype is df.float32


def test_initial_value_of_unknown_shape_needs_validate_shape_false():
    x = df.placeholder(df.float32, [None])
    with pytest.raises(ValueError, match="shape specified"):
        df.Variable(x)
    v = df.Variable(x, validate_shape=False)
    assert v.shape.ndims is None


def test_module_level_assign_can_change_the_shape_without_validation():
    v = df.Variable([1.0, 2.0], validate_shape=False)
    grow = df.assign(v, [1.0, 2.0, 3.0], validate_shape=False)
    with df.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(grow).tolist() == [1.0, 2.0, 3.0]
        assert sess.run(v.read_value()).shape == (3,)
    w = df.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        df.assign(w, [1.0, 2.0, 3.0])


def test_failed_assign_leaves_the_value_unchanged():
    v = df.Variable(np.float32([1.0, 2.0]), validate_shape=False)
    x = df.placeholder(df.float32)
    bad = v.assign(x * df.constant([1.0, 2.0]))
    with df.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(df.errors.InvalidArgumentError):
            sess.run(bad, {x: np.ones(3, np.float32)})
        assert sess.run(v.read_value()).tolist() == [1.0, 2.0]

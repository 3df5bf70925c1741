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
    # As TF1's resource variables: an update's result is named after its op.
    assert update.name == "Assign" and update.op.inputs[1].op.name == "Assign/value"
    assert v.assign_add([1.0, 1.0], name="step").name == "step"


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


def test_an_update_returns_the_variable_as_seen_after_it_as_tf1_resource_variables_do():
    v = df.Variable(0.0)
    incremented = v.assign_add(1.0)
    assert isinstance(incremented, df.Variable) and incremented not in df.global_variables()
    assert incremented.op.type == "AssignAdd" and incremented.name == incremented.op.name
    assert (incremented.dtype, incremented.shape) == (df.float32, df.TensorShape([]))
    read = incremented.read_value()
    assert incremented.op in read.op.control_inputs
    with df.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(incremented) == 1.0  # fetching it runs the update
        assert sess.run(read) == 2.0
        assert sess.run(incremented * 10.0) == 30.0  # used as a tensor: read after the update
        assert sess.run(v) == 3.0


def test_depending_on_an_update_runs_it_and_a_further_update_runs_after_it():
    v = df.Variable(1.0)
    doubled_then_incremented = v.assign(v * 2.0).assign_add(1.0)
    with df.control_dependencies([v.assign_sub(0.5)]):
        marker = df.constant(0)
    with df.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(doubled_then_incremented) == 3.0
        sess.run(marker)
        assert sess.run(v) == 2.5


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


# -- a variable's value shares memory with nothing the user holds ---------------------------------
def test_load_copies_the_users_array():
    v = df.Variable(np.zeros(3))
    user = np.array([1.0, 2.0, 3.0])
    with df.Session() as sess:
        v.load(user, sess)
        user[0] = 99.0
        assert sess.run(v).tolist() == [1.0, 2.0, 3.0]


def test_assign_from_a_fed_array_copies_it():
    v = df.Variable(np.zeros(3))
    x = df.placeholder(df.float64, [3])
    assign = v.assign(x)
    user = np.array([1.0, 2.0, 3.0])
    with df.Session() as sess:
        sess.run(v.initializer)
        sess.run(assign.op, {x: user})
        user[0] = 99.0
        assert sess.run(v).tolist() == [1.0, 2.0, 3.0]


def test_assign_from_a_fed_tensor_that_an_op_would_compute_copies_it():
    # ``a + b`` makes a fresh array when it runs; fed, it is the user's array.
    v = df.Variable(np.zeros(3))
    a = df.placeholder(df.float64, [3])
    total = a + 1.0
    assign = v.assign(total)
    user = np.array([1.0, 2.0, 3.0])
    with df.Session() as sess:
        sess.run(v.initializer)
        sess.run(assign.op, {total: user})
        user[0] = 99.0
        assert sess.run(v).tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("fetch", ["variable", "read", "assign", "assign_add"])
def test_a_fetched_value_is_the_callers_to_change(fetch):
    v = df.Variable(np.array([1.0, 2.0]))
    fetches = {
        "variable": v,
        "read": v.read_value(),
        "assign": v.assign(df.constant([1.0, 2.0], dtype=df.float64) * 1.0),
        "assign_add": v.assign_add(np.zeros(2)),
    }
    with df.Session() as sess:
        sess.run(v.initializer)
        result = sess.run(fetches[fetch])
        result[0] = 99.0
        assert sess.run(v).tolist() == [1.0, 2.0]
        assert sess.run(v.handle).tolist() == [1.0, 2.0]
        sess.run(v.handle)[0] = 99.0
        assert sess.run(v).tolist() == [1.0, 2.0]


def test_a_computed_value_fetched_beside_its_assign_is_the_callers_to_change():
    v = df.Variable(np.zeros(2))
    x = df.placeholder(df.float64, [2])
    doubled = x * 2.0
    assign = v.assign(doubled)
    with df.Session() as sess:
        sess.run(v.initializer)
        value, _ = sess.run([doubled, assign.op], {x: np.array([1.0, 2.0])})
        value[0] = 99.0
        assert sess.run(v).tolist() == [2.0, 4.0]


def test_a_py_func_cannot_write_into_a_variables_value():
    v = df.Variable(np.array([1.0, 2.0]))

    def scribble(a):
        a[0] = 99.0
        return a

    scribbled = df.py_func(scribble, [v.read_value()], df.float64)
    with df.Session() as sess:
        v.load(np.array([1.0, 2.0]), sess)
        with pytest.raises(df.errors.InvalidArgumentError, match="read-only"):
            sess.run(scribbled)
        assert sess.run(v).tolist() == [1.0, 2.0]


def test_a_variable_made_in_a_loop_body_or_branch_is_built_outside_them():
    x = df.placeholder(df.float32, [])

    def body(i):
        v = df.Variable(1.0, name="v")
        assert v.op.name == "while/v" and v.initializer.name == "while/v/Assign"
        return i + v

    out = df.while_loop(lambda i: i < 5, body, [x])
    chosen = df.cond(x > 0, lambda: df.Variable(2.0, name="b") + 1.0, lambda: x)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        assert sess.run([out, chosen], {x: 1.0}) == [5.0, 3.0]

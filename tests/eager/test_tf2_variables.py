"""Variables made eagerly behave as TensorFlow 2's: elementwise ``==``, no hash (``ref()`` keys
them), and updates that return the variable as it is after them.

Every expected value, error class and message fragment here is what TensorFlow 2.21 gives for
the same program (``tf.Variable`` in eager mode, in a ``tf.function``, and ``tf.compat.v1``
in graph mode for the graph-mode tests at the end).
"""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager_only(eager):
    yield


def _values(tensor):
    return np.asarray(tensor.numpy()).tolist()


# -- equality -------------------------------------------------------------------------------------
def test_variables_compare_elementwise_and_give_a_bool_tensor():
    v, w = df.Variable([1.0, 2.0, 3.0]), df.Variable([1.0, 0.0, 3.0])
    equal, unequal = v == w, v != w
    assert equal.dtype is df.bool and equal.shape == (3,)
    assert _values(equal) == [True, False, True] and _values(unequal) == [False, True, False]
    assert _values(v == v) == [True, True, True]


def test_a_variable_compares_with_tensors_and_python_values_on_either_side():
    v = df.Variable([1.0, 2.0, 3.0])
    assert _values(v == df.constant([1.0, 5.0, 3.0])) == [True, False, True]
    assert _values(df.constant([1.0, 2.0, 3.0]) == v) == [True, True, True]
    assert _values(v == 2.0) == [False, True, False] and _values(2.0 == v) == [False, True, False]
    assert _values(v == [1.0, 2.0, 3.0]) == [True, True, True]
    assert _values([1.0, 2.0, 3.0] == v) == [True, True, True]
    assert _values(v == (1.0, 2.0, 3.0)) == [True, True, True]
    assert _values(v == v.value()) == [True, True, True]
    assert _values(df.Variable(1) == 1) is True and _values(df.Variable(True) == True) is True  # noqa: E712


def test_comparison_broadcasts_a_scalar_variable_against_a_vector():
    assert _values(df.Variable(1.0) == df.Variable([1.0, 2.0, 3.0])) == [True, False, False]
    assert _values(df.Variable([[1.0], [2.0]]) != df.Variable([1.0, 2.0])) == [
        [False, True],
        [True, False],
    ]


def test_variables_whose_shapes_do_not_broadcast_are_unequal_as_one_bool_scalar():
    v = df.Variable([1.0, 2.0, 3.0])
    for other in (df.Variable([[1.0, 2.0]]), df.Variable([1.0, 2.0]), df.constant([1.0, 2.0])):
        equal, unequal = v == other, v != other
        assert equal.shape == () and equal.dtype is df.bool and _values(equal) is False
        assert unequal.shape == () and _values(unequal) is True


def test_comparing_a_variable_with_none_is_a_value_error_but_a_tensor_is_simply_unequal():
    # TF 2.21: the variable converts None to a tensor and fails ("Attempt to convert a value
    # (None) with an unsupported type"), while Tensor.__eq__ answers None with a plain False.
    v = df.Variable([1.0, 2.0])
    for compare in (lambda: v == None, lambda: v != None, lambda: None == v):  # noqa: E711
        with pytest.raises(ValueError, match=r"test_tf2_var.*Attempt to convert a value \(None\)"):
            compare()
    t = df.constant([1.0, 2.0])
    assert (t == None) is False and (t != None) is True  # noqa: E711
    assert v is not None  # the way to test for a missing variable


def test_comparing_values_of_other_dtypes_fails_as_in_tensorflow():
    v = df.Variable([1.0, 2.0])
    # A tensor of another dtype: the Equal op's InvalidArgumentError, eagerly.
    with pytest.raises(df.errors.InvalidArgumentError, match=r"Equal.*test_tf2_variables.py:\d+"):
        _ = v == df.constant([1, 2])
    with pytest.raises(df.errors.InvalidArgumentError):
        _ = v == df.Variable([1, 2])
    # A Python value that does not convert to the variable's dtype: TypeError.
    with pytest.raises(TypeError):
        _ = df.Variable(1) == 1.5
    with pytest.raises(TypeError):
        _ = v == "a"


def test_an_eager_variable_is_unhashable_and_is_keyed_through_ref():
    v, w = df.Variable([1.0, 2.0]), df.Variable([1.0, 2.0])
    with pytest.raises(TypeError, match=r"Variable is unhashable\. Instead, use variable\.ref\(\)"):
        hash(v)
    with pytest.raises(TypeError, match="unhashable"):
        {v: 1}  # noqa: B018
    with pytest.raises(TypeError, match="unhashable"):
        {v}  # noqa: B018
    table = {v.ref(): "v", w.ref(): "w"}
    assert table[v.ref()] == "v" and table[w.ref()] == "w"
    assert v.ref().deref() is v and v.ref() == v.ref() and v.ref() != w.ref()
    assert hash(v.ref()) == hash(v.experimental_ref())
    assert repr(v.ref()).startswith("<Reference wrapping <df.Variable 'Variable")


def test_in_on_a_list_of_vector_variables_is_ambiguous_as_in_tensorflow():
    v, w = df.Variable([1.0, 2.0]), df.Variable([3.0, 4.0])
    with pytest.raises(ValueError, match="truth value of an array with more than one element"):
        v in [w]  # noqa: B015
    assert any(x is v for x in [w, v])  # identity is what such code means


def test_disabling_tensor_equality_gives_tf1_identity_and_hashing_back():
    v, w = df.Variable([1.0, 2.0]), df.Variable([1.0, 2.0])
    df.disable_tensor_equality()
    try:
        assert (v == v) is True and (v == w) is False and (v != w) is True
        assert (v == None) is False  # noqa: E711
        assert {v: 1}[v] == 1 and hash(v) == id(v)
    finally:
        df.enable_tensor_equality()
    assert _values(v == w) == [True, True]
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)


def test_variables_compare_elementwise_inside_a_function():
    v, w = df.Variable([1.0, 2.0]), df.Variable([1.0, 5.0])

    @df.function
    def compare():
        return v == w, v != w, v == df.constant([1.0, 2.0, 3.0])

    equal, unequal, mismatched = compare()
    assert _values(equal) == [True, False] and _values(unequal) == [False, True]
    assert mismatched.shape == () and _values(mismatched) is False


# -- updates return the variable as it is after them ----------------------------------------------
def test_an_update_returns_the_variable_after_it_usable_as_a_value():
    v = df.Variable(5.0)
    after = v.assign_sub(1.0)
    assert isinstance(after, df.Variable) and after is not v
    assert after.name == "UnreadVariable" and after.handle is v.handle
    assert after.dtype is df.float32 and after.shape == ()
    assert float(after * 2) == 8.0 and float(after) == 4.0 and after.numpy() == 4.0
    assert float(after.read_value()) == 4.0 and float(after.value()) == 4.0
    assert float(df.add(after, 1.0)) == 5.0 and float(df.convert_to_tensor(after)) == 4.0
    assert repr(after) == "<df.Variable 'UnreadVariable' shape=() dtype=float32, numpy=4.0>"
    assert bool(after) and int(after) == 4


def test_updates_chain_and_each_step_reads_the_value_of_the_moment():
    v = df.Variable(5.0)
    chained = v.assign(1.0).assign_add(2.0).assign_sub(0.5)
    assert float(chained) == 2.5 and float(v) == 2.5
    earlier = v.assign(10.0)
    v.assign(20.0)  # eagerly the returned variable reads the variable when asked
    assert float(earlier) == 20.0
    vector = df.Variable([1.0, 2.0])
    assert _values(vector.assign([3.0, 4.0])[0:1]) == [3.0]
    assert [float(x) for x in vector.assign_add([1.0, 1.0])] == [4.0, 5.0]
    assert np.asarray(vector.assign([7.0, 8.0])).tolist() == [7.0, 8.0]


def test_an_update_without_its_value_returns_none_eagerly():
    v = df.Variable([1.0, 2.0])
    assert v.assign([3.0, 4.0], read_value=False) is None
    assert v.assign_add([1.0, 1.0], read_value=False) is None
    assert v.assign_sub([1.0, 0.0], read_value=False) is None
    assert _values(v) == [3.0, 5.0]


def test_the_module_functions_and_sparse_updates_return_the_variable_after_them():
    v = df.Variable([1.0, 2.0, 3.0])
    assert type(df.assign(v, [0.0, 0.0, 0.0])) is type(v.assign(v))
    assert _values(df.assign_add(v, [1.0, 1.0, 1.0])) == [1.0, 1.0, 1.0]
    assert _values(df.assign_sub(v, [1.0, 0.0, 0.0])) == [0.0, 1.0, 1.0]
    updated = v.scatter_update(df.IndexedSlices(df.constant([9.0]), df.constant([0])))
    assert updated.name == "UnreadVariable" and _values(updated) == [9.0, 1.0, 1.0]
    assert _values(v.scatter_add(df.IndexedSlices(df.constant([1.0]), df.constant([2])))) == [
        9.0,
        1.0,
        2.0,
    ]
    assert _values(v.scatter_nd_update([[1]], [7.0]).scatter_nd_add([[1]], [1.0])) == [
        9.0,
        8.0,
        2.0,
    ]
    assert _values(df.scatter_update(v, [2], [5.0])) == [9.0, 8.0, 5.0]


def test_the_variable_after_an_update_compares_and_hashes_as_the_variable():
    v = df.Variable(3.0)
    after = v.assign(4.0)
    assert _values(after == v) is True and _values(after == 4.0) is True
    with pytest.raises(TypeError, match="unhashable"):
        hash(after)
    assert after.ref() != v.ref() and after.ref().deref() is after


def test_a_tape_follows_the_variable_after_an_update():
    v = df.Variable(2.0)
    with df.GradientTape() as tape:
        y = v.assign(3.0) * v
    assert float(tape.gradient(y, v)) == 6.0
    with df.GradientTape() as tape:
        y = v * 2.0
    assert float(tape.gradient(y, v.assign(4.0))) == 2.0  # the same handle: the same source


def test_an_assign_of_a_wrong_shape_or_dtype_is_a_value_error_and_changes_nothing():
    v = df.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"Assign op .*test_tf2_variables.py:\d+: Cannot assign"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"Shape mismatch.*\(2,\).*\(\)"):
        v.assign(1.0)
    with pytest.raises(ValueError, match="requested dtype float32 for Tensor with dtype int32"):
        v.assign(df.constant([1, 2]))
    with pytest.raises(ValueError, match="requested dtype float32 for Tensor with dtype int32"):
        v.assign_add(df.constant([1, 2]))
    with pytest.raises(TypeError):  # a Python value that is not an int32
        df.Variable([1, 2]).assign([1.5, 2.0])
    # assign_add and assign_sub do not broadcast: the op's InvalidArgumentError, eagerly.
    with pytest.raises(df.errors.InvalidArgumentError, match=r"AssignAdd.*test_tf2_variables"):
        v.assign_add([1.0, 2.0, 3.0])
    with pytest.raises(df.errors.InvalidArgumentError, match=r"AssignSub"):
        v.assign_sub(1.0)
    assert _values(v) == [1.0, 2.0]


# -- inside df.function ---------------------------------------------------------------------------
def test_inside_a_function_an_update_is_usable_as_a_value_and_chains():
    v = df.Variable(0.0)

    @df.function
    def step():
        after = v.assign(1.0).assign_add(2.0)
        return after * 2, after.read_value(), after.value(), isinstance(after, df.Variable)

    doubled, read, value, is_variable = step()
    assert float(doubled) == 6.0 and float(read) == 3.0 and float(value) == 3.0 and is_variable
    assert float(v) == 3.0


def test_a_function_that_returns_an_updated_variable_returns_its_new_value():
    v = df.Variable(3.0)

    @df.function
    def decrement():
        return v.assign_sub(1.0)

    @df.function
    def bump():
        return {"after": v.assign_add(10.0), "doubled": v.assign(v * 2.0)}

    first = decrement()
    assert isinstance(first, df.Tensor) and float(first) == 2.0
    assert float(decrement()) == 1.0 and float(v) == 1.0
    # A returned update is read when the function returns, after every update it made.
    bumped = bump()
    assert float(bumped["after"]) == 22.0 and float(bumped["doubled"]) == 22.0


def test_reads_of_an_update_inside_a_function_come_after_it():
    v = df.Variable(1.0)

    @df.function
    def update_then_read():
        after = v.assign_add(1.0)
        before_next = after * 10.0
        again = after.assign_add(1.0)
        return before_next, again * 10.0

    first, second = update_then_read()
    assert (float(first), float(second)) == (20.0, 30.0) and float(v) == 3.0


# -- optimizers and moving averages key eager variables through ref() -----------------------------
def test_optimizer_slots_and_moving_averages_work_on_unhashable_variables():
    v = df.Variable([1.0, 2.0])
    opt = df.train.AdamOptimizer(0.1)
    opt.minimize(lambda: df.reduce_sum(v * v), var_list=[v])
    opt.minimize(lambda: df.reduce_sum(v * v), var_list=[v])
    assert opt.get_slot(v, "m") is not None and opt.get_slot(v, "m").shape == (2,)
    assert opt.get_slot(df.Variable([0.0, 0.0]), "m") is None
    ema = df.train.ExponentialMovingAverage(0.5)
    ema.apply([v])
    assert ema.average(v) is not None and ema.average_name(v) == "Variable/ExponentialMovingAverage"


# -- graph mode keeps TF1's behaviour -------------------------------------------------------------
def test_graph_variables_compare_by_identity_and_hash_by_id():
    with df.graph_mode(), df.Graph().as_default():
        v, w = df.Variable([1.0, 2.0]), df.Variable([1.0, 2.0])
        assert (v == v) is True and (v == w) is False and (v != w) is True
        assert (v == None) is False  # noqa: E711
        assert {v: "v", w: "w"}[w] == "w" and hash(v) == id(v) and v in [w, v]


def test_graph_updates_return_the_variable_after_the_op_and_the_op_without_a_value():
    # tf.compat.v1 resource variables (use_resource=True) in graph mode: an _UnreadVariable
    # named after the update op; read_value=False gives the Operation.
    with df.graph_mode(), df.Graph().as_default():
        v = df.Variable([1.0, 2.0], name="v")
        after = v.assign_add([1.0, 1.0])
        assert isinstance(after, df.Variable) and after.op.type == "AssignAdd"
        assert after.name == after.op.name
        op = v.assign([0.0, 0.0], read_value=False)
        assert isinstance(op, df.Operation) and op.type == "Assign"
        with df.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(after * 2).tolist() == [4.0, 6.0]
            assert sess.run(after.assign_sub([1.0, 1.0])).tolist() == [2.0, 3.0]

"""Ops run eagerly: values at once, the same OpDefs, errors at the failing line."""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager_only(eager):
    yield


def test_an_eager_tensor_holds_its_value_and_reads_as_tensorflows():
    t = df.constant([1.0, 2.0])
    assert isinstance(t, df.Tensor) and isinstance(t, df.EagerTensor)
    assert t.dtype is df.float32 and t.shape.as_list() == [2]
    assert repr(t) == "<df.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    assert repr(df.constant(3)) == "<df.Tensor: shape=(), dtype=int32, numpy=3>"
    np.testing.assert_array_equal(np.asarray(t), [1.0, 2.0])
    assert len(t) == 2 and [float(x) for x in t] == [1.0, 2.0]


def test_scalars_drive_python_control_flow():
    x = df.constant(5)
    steps = 0
    while x > 0:
        x = x - 2
        steps += 1
    assert steps == 3 and int(x) == -1
    assert [10, 20, 30][df.constant(1)] == 20
    assert float(df.constant(2.5)) == 2.5


def test_equality_compares_values_so_python_if_tests_the_value():
    x = df.constant(0)
    taken = "zero" if x == 0 else "other"  # identity here would always say "other"
    assert taken == "zero" and not (x != 0)
    v = df.constant([1, 2, 3])
    np.testing.assert_array_equal((v == 2).numpy(), [False, True, False])
    np.testing.assert_array_equal((v != df.constant([1, 0, 3])).numpy(), [False, True, False])
    assert (v == None) is False and (v != None) is True  # noqa: E711
    # Shapes that do not broadcast are simply unequal: one bool scalar (TF 2.21's).
    unequal, not_unequal = v == [1, 2], v != [1, 2]
    assert unequal.shape == () and unequal.dtype is df.bool and not unequal.numpy()
    assert not_unequal.shape == () and not_unequal.numpy()


def test_an_eager_tensor_is_a_dict_key_only_through_ref():
    x = df.constant(1.0)
    with pytest.raises(TypeError, match=r"unhashable.*tensor\.ref\(\)"):
        hash(x)
    table = {x.ref(): "x"}
    assert table[x.ref()] == "x" and x.ref().deref() is x
    assert df.constant(1.0).ref() not in table  # the same value is another tensor


def test_operators_and_ops_compute_what_numpy_computes():
    a = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    x = df.constant(a)
    np.testing.assert_allclose((x * 2 + 1).numpy(), a * 2 + 1)
    np.testing.assert_allclose(df.matmul(x, x).numpy(), a @ a)
    np.testing.assert_allclose(df.reduce_sum(x, axis=1).numpy(), a.sum(axis=1))
    np.testing.assert_allclose(df.nn.relu(x).numpy(), np.maximum(a, 0))
    np.testing.assert_allclose((1 - x).numpy(), 1 - a)


def test_a_shape_error_names_the_op_and_the_users_line():
    # TF 2.21, eagerly: InvalidArgumentError "Matrix size-incompatible: In[0]: [2,3], ..."
    with pytest.raises(
        df.errors.InvalidArgumentError, match=r"MatMul op 'MatMul' at .*test_eager_ops.py:\d+"
    ):
        df.matmul(df.ones([2, 3]), df.ones([2, 3]))


def test_a_kernel_error_is_the_sessions_error_class_with_the_line():
    with pytest.raises(df.errors.InvalidArgumentError, match=r"GatherV2.*test_eager_ops.py:\d+"):
        df.gather(df.constant([1.0, 2.0]), [5])


def test_ops_without_eager_meaning_are_refused():
    with pytest.raises(RuntimeError, match=r"placeholder\(\) is not compatible with eager"):
        df.placeholder(df.float32)
    with pytest.raises(RuntimeError, match=r"Session\(\) is not compatible with eager"):
        df.Session()


def test_cond_runs_only_the_branch_taken():
    called = []

    def branch(label, value):
        def fn():
            called.append(label)
            return value

        return fn

    result = df.cond(df.constant(3.0) > 2, branch("true", df.constant(1.0)), branch("no", 0.0))
    assert float(result) == 1.0 and called == ["true"]


def test_while_loop_is_a_python_loop_bounded_by_maximum_iterations():
    result = df.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, s + i), [0, df.constant(0)])
    assert int(result[0]) == 10 and int(result[1]) == 45
    bounded = df.while_loop(
        lambda i: i < 10, lambda i: i + 1, [df.constant(0)], maximum_iterations=4
    )
    assert int(bounded) == 4


def test_control_dependencies_and_grouping_have_nothing_to_order():
    x = df.constant(1.0)
    with df.control_dependencies([x]):
        y = x + 1
    assert float(y) == 2.0
    assert df.group(x, y) is None
    assert df.tuple([x, y]) == [x, y]


def test_seeded_random_ops_repeat_after_the_seed_is_set_again():
    df.set_random_seed(7)
    first = [df.random_uniform([3]).numpy() for _ in range(2)]
    df.set_random_seed(7)
    again = [df.random_uniform([3]).numpy() for _ in range(2)]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first[0], first[1])


def test_an_eager_tensor_keeps_no_history():
    import gc
    import weakref

    x = df.constant([1.0])
    y = x * 2
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None and float(y[0]) == 2.0


def test_printing_a_tensor_shows_numpys_shortest_float32_digits():
    # tf: print(tf.constant(0.1)) -> tf.Tensor(0.1, shape=(), dtype=float32); a Python float of
    # the same value would show 0.10000000149011612
    assert str(df.constant(0.1)) == "df.Tensor(0.1, shape=(), dtype=float32)"
    assert str(df.constant([0.1, 0.2])) == "df.Tensor([0.1 0.2], shape=(2,), dtype=float32)"
    assert str(df.constant("x")) == "df.Tensor(b'x', shape=(), dtype=string)"

"""Variables in eager mode hold their value: no Session, no initializer to run."""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager_only(eager):
    yield


def test_a_variable_holds_its_value_and_updates_in_place():
    v = df.Variable([1.0, 2.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub([0.5, 0.0])
    np.testing.assert_array_equal(v.numpy(), [1.5, 3.0])
    np.testing.assert_array_equal(v.value().numpy(), [1.5, 3.0])
    np.testing.assert_array_equal((v * 2).numpy(), [3.0, 6.0])
    assert float(v.assign([4.0, 5.0])[1]) == 5.0 and float(v.read_value()[0]) == 4.0


def test_sparse_updates_and_reads():
    v = df.Variable([1.0, 2.0, 3.0])
    v.scatter_update(df.IndexedSlices(df.constant([9.0]), df.constant([1])))
    v.scatter_add(df.IndexedSlices(df.constant([1.0]), df.constant([0])))
    np.testing.assert_array_equal(v.numpy(), [2.0, 9.0, 3.0])
    np.testing.assert_array_equal(v.sparse_read([2, 0]).numpy(), [3.0, 2.0])


def test_variables_go_into_no_collection_and_get_variable_makes_new_ones():
    w = df.get_variable("w", shape=[2], initializer=df.ones_initializer())
    again = df.get_variable("w", shape=[2], initializer=df.zeros_initializer())
    assert again is not w and w.name == again.name == "w:0"
    assert df.global_variables() == [] and df.trainable_variables() == []
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])


def test_a_bad_assign_is_refused_and_leaves_the_value():
    v = df.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"Assign op .*test_eager_variables.py:\d+"):
        v.assign([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_repr_shows_the_value():
    assert (
        repr(df.Variable(1.5, name="x")) == "<df.Variable 'x:0' shape=() dtype=float32, numpy=1.5>"
    )

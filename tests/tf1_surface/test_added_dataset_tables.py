"""Lookup tables filled from datasets, and the names that are other names' aliases (values
from TensorFlow 2.21, ``tf.compat.v1`` graph mode)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _pairs():
    keys = tf.constant(["a", "b", "c"])
    return tf.data.Dataset.from_tensor_slices((keys, tf.constant([7, 8, 9], tf.int64)))


def test_table_from_dataset_does_map_keys_and_hash_the_rest_into_buckets():
    table = tf.data.experimental.table_from_dataset(_pairs(), default_value=-1)
    hashed = tf.data.experimental.table_from_dataset(_pairs(), num_oov_buckets=2)
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        np.testing.assert_array_equal(sess.run(table.lookup(tf.constant(["b", "z"]))), [8, -1])
        np.testing.assert_array_equal(
            sess.run(hashed.lookup(tf.constant(["b", "zz", "q"]))), [8, 3, 4]
        )


def test_index_table_from_dataset_does_number_the_keys():
    words = tf.data.Dataset.from_tensor_slices(tf.constant(["x", "y", "z"]))
    table = tf.data.experimental.index_table_from_dataset(words, vocab_size=2)
    with_buckets = tf.data.experimental.index_table_from_dataset(
        tf.data.Dataset.from_tensor_slices(tf.constant(["x", "y"])), num_oov_buckets=1
    )
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        np.testing.assert_array_equal(sess.run(table.lookup(tf.constant(["y", "z"]))), [1, -1])
        np.testing.assert_array_equal(
            sess.run(with_buckets.lookup(tf.constant(["y", "w"]))), [1, 2]
        )


def test_dataset_initializer_does_fill_a_static_hash_table():
    initializer = tf.data.experimental.DatasetInitializer(_pairs())
    table = tf.lookup.StaticHashTable(initializer, default_value=0)
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        np.testing.assert_array_equal(sess.run(table.lookup(tf.constant(["c", "a"]))), [9, 7])
    with pytest.raises(ValueError, match=r"\(key, value\) pairs"):
        tf.data.experimental.DatasetInitializer(tf.data.Dataset.range(3))
    with pytest.raises(ValueError, match="only the FarmHash fingerprint"):
        tf.data.experimental.table_from_dataset(_pairs(), hasher_spec="strong")


def test_the_tf2_names_of_specs_are_the_same_classes():
    assert tf.OptionalSpec is tf.data.experimental.OptionalStructure
    assert tf.data.experimental.Structure is tf.TypeSpec
    spec = tf.data.experimental.TensorArrayStructure(tf.int32, [2], True, False)
    assert spec == tf.TensorArraySpec([2], tf.int32, dynamic_size=True, infer_shape=False)
    assert tf.nn.space_to_batch is tf.space_to_batch

"""Behaviour of the small top-level names and modules added to close gaps of
``known_missing.txt`` (queues, scatters, space/batch moves, lookup tables, partitioners, ...).

Expected values are what TensorFlow 2.21's ``tf.compat.v1`` (graph mode,
``disable_v2_behavior()``) gives for the same program.
"""

import numpy as np
import pytest

import dataflow as df


def _run(fetches, feed_dict=None):
    with df.Session() as sess:
        return sess.run(fetches, feed_dict)


# -- tensor_scatter_nd_* ---------------------------------------------------------------------------
def test_tensor_scatter_nd_ops_combine_updates_as_tensorflow():
    t = df.constant([1, 2, 3, 4, 5, 6, 7, 8])
    idx = df.constant([[4], [3], [1], [7]])
    up = df.constant([9, 10, 11, 12])
    got = _run(
        [
            df.tensor_scatter_nd_add(t, idx, up),
            df.tensor_scatter_nd_sub(t, idx, up),
            df.tensor_scatter_nd_min(t, idx, up),
            df.tensor_scatter_nd_max(t, idx, up),
            df.tensor_scatter_nd_update(t, idx, up),
            df.tensor_scatter_nd_update(t, [[1], [1]], [5, 6]),
            df.tensor_scatter_nd_add(t, [[1], [1]], [5, 6]),
        ]
    )
    assert [g.tolist() for g in got] == [
        [1, 13, 3, 14, 14, 6, 7, 20],
        [1, -9, 3, -6, -4, 6, 7, -4],
        [1, 2, 3, 4, 5, 6, 7, 8],
        [1, 11, 3, 10, 9, 6, 7, 12],
        [1, 11, 3, 10, 9, 6, 7, 12],
        [1, 6, 3, 4, 5, 6, 7, 8],
        [1, 13, 3, 4, 5, 6, 7, 8],
    ]
    assert df.tensor_scatter_add is df.tensor_scatter_nd_add
    assert df.tensor_scatter_sub is df.tensor_scatter_nd_sub
    assert df.tensor_scatter_update is df.tensor_scatter_nd_update
    assert df.tensor_scatter_nd_max(t, idx, up).op.type == "TensorScatterMax"


def test_tensor_scatter_nd_update_writes_slices_and_checks_shapes():
    r = df.tensor_scatter_nd_update(df.zeros([4, 4, 4]), [[0], [2]], df.ones([2, 4, 4]))
    assert r.shape.as_list() == [4, 4, 4] and _run(df.reduce_sum(r)) == 32.0
    with pytest.raises(ValueError, match="updates has shape"):
        df.tensor_scatter_nd_update(df.zeros([4, 4, 4]), [[0], [2]], df.ones([2, 4, 3]))
    unknown = df.tensor_scatter_nd_add(
        df.placeholder(df.float32, [None, 3]),
        df.placeholder(df.int32),
        df.placeholder(df.float32),
    )
    assert unknown.shape.as_list() == [None, 3]
    empty = df.tensor_scatter_nd_add([1, 2], df.zeros([0, 1], df.int32), df.zeros([0], df.int32))
    assert _run(empty).tolist() == [1, 2]


def test_bad_indices_are_errors_unless_the_policy_ignores_them():
    t = df.constant([1, 2, 3, 4, 5, 6, 7, 8])
    with pytest.raises(df.errors.InvalidArgumentError, match=r"indices\[1\] = \[9\]"):
        _run(df.tensor_scatter_nd_add(t, [[1], [9]], [5, 6], bad_indices_policy="ERROR"))
    with pytest.raises(df.errors.InvalidArgumentError):
        _run(df.scatter_nd([[1], [9]], [5, 6], [8]))
    with pytest.raises(df.errors.InvalidArgumentError):
        _run(df.gather_nd(t, [[1], [9]], bad_indices_policy="DEFAULT"))
    got = _run(
        [
            df.tensor_scatter_nd_add(t, [[1], [9]], [5, 6], bad_indices_policy="IGNORE"),
            df.scatter_nd([[1], [9]], [5, 6], [8], bad_indices_policy="IGNORE"),
            df.gather_nd(t, [[1], [9]], bad_indices_policy="IGNORE"),
            df.manip.scatter_nd([[1], [9]], [5, 6], [8], "IGNORE"),
        ]
    )
    assert [g.tolist() for g in got] == [
        [1, 7, 3, 4, 5, 6, 7, 8],
        [0, 5, 0, 0, 0, 0, 0, 0],
        [2, 0],
        [0, 5, 0, 0, 0, 0, 0, 0],
    ]
    with pytest.raises(ValueError, match="bad_indices_policy"):
        df.tensor_scatter_nd_add(t, [[1]], [5], bad_indices_policy="FOO")


def test_tensor_scatter_gradients_match_tensorflow():
    x = df.constant([1.0, 2, 3, 4])
    u = df.constant([5.0, 6])
    w = df.constant([1.0, 2, 3, 4])
    expected = {
        df.tensor_scatter_nd_add: ([1, 2, 3, 4], [2, 4]),
        df.tensor_scatter_nd_sub: ([1, 2, 3, 4], [-2, -4]),
        df.tensor_scatter_nd_min: ([1, 2, 3, 4], [0, 0]),
        df.tensor_scatter_nd_max: ([1, 0, 3, 0], [2, 4]),
        df.tensor_scatter_nd_update: ([1, 0, 3, 0], [2, 4]),
    }
    for fn, (dx, du) in expected.items():
        gx, gu = _run(df.gradients(fn(x, [[1], [3]], u) * w, [x, u]))
        assert gx.tolist() == dx and gu.tolist() == du, fn.__name__


def test_batch_scatter_update_updates_each_batch_row():
    v = df.Variable([[1, 2, 3], [4, 5, 6]])
    r = df.batch_scatter_update(v, [[0, 2], [1, 1]], [[10, 20], [30, 40]])
    assert r.name == "ScatterNdUpdate:0"
    with df.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(r).tolist() == [[10, 2, 20], [4, 40, 6]]
        assert sess.run(v).tolist() == [[10, 2, 20], [4, 40, 6]]
    with pytest.raises(ValueError, match="unknown shape"):
        df.batch_scatter_update(v, df.placeholder(df.int32), [1])


# -- space_to_batch and batch_to_space -------------------------------------------------------------
def test_space_to_batch_nd_moves_padded_blocks_into_the_batch():
    x = np.arange(2 * 4 * 6 * 3).reshape(2, 4, 6, 3).astype(np.float32)
    r = df.space_to_batch_nd(x, [2, 3], [[0, 0], [1, 2]])
    assert r.op.type == "SpaceToBatchND" and r.shape.as_list() == [12, 2, 3, 3]
    got = _run(r)
    assert got[:4, :, :, 0].tolist() == [
        [[0.0, 6.0, 15.0], [0.0, 42.0, 51.0]],
        [[0.0, 78.0, 87.0], [0.0, 114.0, 123.0]],
        [[0.0, 9.0, 0.0], [36.0, 45.0, 0.0]],
        [[72.0, 81.0, 0.0], [108.0, 117.0, 0.0]],
    ]
    assert got[-1, :, :, 0].tolist() == [[93.0, 102.0, 0.0], [129.0, 138.0, 0.0]]
    back = df.batch_to_space_nd(r, [2, 3], [[0, 0], [1, 2]])
    assert back.shape.as_list() == [2, 4, 6, 3]
    np.testing.assert_array_equal(_run(back), x)
    assert df.manip.space_to_batch_nd is df.space_to_batch_nd
    assert df.manip.batch_to_space_nd is df.batch_to_space_nd
    assert _run(df.space_to_batch_nd(np.arange(4).reshape(1, 4), [2], [[0, 0]])).tolist() == [
        [0, 2],
        [1, 3],
    ]
    assert _run(df.space_to_batch_nd(np.zeros((0, 4, 1)), [2], [[0, 0]])).shape == (0, 2, 1)


def test_space_to_batch_shapes_errors_and_gradients():
    x = np.arange(2 * 4 * 6 * 3).reshape(2, 4, 6, 3).astype(np.float32)
    with pytest.raises(ValueError, match="evenly divisible by 3 but is 8"):
        df.space_to_batch_nd(x, [2, 3], [[0, 0], [1, 1]])
    with pytest.raises(ValueError, match="evenly divisible by 3 but is 2"):
        df.batch_to_space_nd(x, [3, 1], [[0, 0], [0, 0]])
    ph = df.placeholder(df.float32, [None, 4, 6, 3])
    assert df.space_to_batch_nd(ph, [2, 3], [[0, 0], [1, 2]]).shape.as_list() == [None, 2, 3, 3]
    assert df.batch_to_space_nd(ph, [2, 1], [[0, 1], [0, 0]]).shape.as_list() == [None, 7, 6, 3]
    xx = df.constant(x)
    g1 = df.gradients(df.space_to_batch_nd(xx, [2, 3], [[0, 0], [1, 2]]) * 2.0, xx)[0]
    cropped = df.batch_to_space_nd(xx, [2, 1], [[1, 1], [0, 0]])
    g2 = df.gradients(cropped * 2.0, xx)[0]
    assert cropped.shape.as_list() == [1, 6, 6, 3]
    assert _run([df.reduce_sum(g1), df.reduce_sum(g2)]) == [288.0, 216.0]
    with pytest.raises(df.errors.InvalidArgumentError, match="not divisible"):
        p = df.placeholder(df.int32, [2, 2])
        _run(df.space_to_batch_nd(x, [2, 3], p), {p: [[0, 0], [1, 1]]})


def test_space_to_batch_and_batch_to_space_take_a_square_block():
    x = np.arange(2 * 4 * 6 * 3).reshape(2, 4, 6, 3).astype(np.float32)
    r = df.space_to_batch(x, [[0, 0], [1, 1]], block_size=2)
    assert r.shape.as_list() == [8, 2, 4, 3]
    back = df.batch_to_space(r, [[0, 0], [1, 1]], block_size=2)
    np.testing.assert_array_equal(_run(back), x)
    r2 = df.space_to_batch(x, [[0, 0], [1, 1]], block_shape=2)
    np.testing.assert_array_equal(*_run([r, r2]))


def test_required_space_to_batch_paddings_pads_to_multiples_of_the_block():
    p, c = df.required_space_to_batch_paddings([5, 7], [2, 3])
    assert p.op.name == "required_space_to_batch_paddings/paddings"
    assert [a.tolist() for a in _run([p, c])] == [[[0, 1], [0, 2]], [[0, 1], [0, 2]]]
    p, c = df.required_space_to_batch_paddings([5, 7], [2, 3], base_paddings=[[1, 0], [0, 2]])
    assert [a.tolist() for a in _run([p, c])] == [[[1, 0], [0, 2]], [[0, 0], [0, 0]]]
    shape = df.placeholder(df.int32, [2])
    p, c = df.required_space_to_batch_paddings(shape, [2, 3])
    assert p.shape.as_list() == [2, 2]
    got = _run([p, c], {shape: [5, 7]})
    assert [a.tolist() for a in got] == [[[0, 1], [0, 2]], [[0, 1], [0, 2]]]


def test_parallel_stack_stacks_values_of_a_known_shape():
    r = df.parallel_stack([[1, 2], [3, 4], [5, 6]])
    assert r.op.name.startswith("parallel_stack/")
    assert _run(r).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert df.parallel_stack([df.placeholder(df.float32, [2])] * 2).shape.as_list() == [2, 2]
    with pytest.raises(ValueError, match="fully defined"):
        df.parallel_stack([df.placeholder(df.float32)] * 2)


# -- queues ----------------------------------------------------------------------------------------
def test_padding_fifo_queue_pads_batches_to_their_largest_element():
    q = df.PaddingFIFOQueue(10, [df.int32, df.string], shapes=[[None], [None]])
    assert q.name == "padding_fifo_queue" and q.queue_ref.op.type == "PaddingFIFOQueueV2"
    assert [s.as_list() for s in q.shapes] == [[None], [None]]
    many = q.dequeue_many(3)
    assert [t.shape.as_list() for t in many] == [[3, None], [3, None]]
    one = q.dequeue()
    with df.Session() as sess:
        sess.run(q.enqueue(([1, 2], ["a"])))
        sess.run(q.enqueue(([3], ["b", "c", "d"])))
        sess.run(q.enqueue(([], [])))
        ints, strings = sess.run(many)
        assert ints.tolist() == [[1, 2], [3, 0], [0, 0]]
        assert strings.tolist() == [[b"a", b"", b""], [b"b", b"c", b"d"], [b"", b"", b""]]
        sess.run(q.enqueue(([5, 6, 7], ["x"])))
        ints, strings = sess.run(one)
        assert ints.tolist() == [5, 6, 7] and strings.tolist() == [b"x"]
        sess.run(q.close())
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(q.dequeue_up_to(2))
    assert df.queue.PaddingFIFOQueue is df.PaddingFIFOQueue is df.io.PaddingFIFOQueue


def test_padding_fifo_queue_pads_only_the_unknown_dimensions():
    q = df.PaddingFIFOQueue(10, [df.float32], shapes=[[2, None]])
    with pytest.raises(ValueError, match="not compatible"):
        q.enqueue([[[1.0, 2, 3]]])
    with df.Session() as sess:
        sess.run(q.enqueue([[[1.0, 2, 3], [4, 5, 6]]]))
        sess.run(q.enqueue([[[1.0], [2]]]))
        got = sess.run(q.dequeue_many(2))
    assert got.tolist() == [[[1, 2, 3], [4, 5, 6]], [[1, 0, 0], [2, 0, 0]]]
    with pytest.raises(TypeError):
        df.PaddingFIFOQueue(10, [df.int32])
    with pytest.raises(ValueError, match="list of shapes must be provided"):
        df.PaddingFIFOQueue(10, [df.int32], shapes=[None])


def test_priority_queue_hands_out_the_smallest_priority_first():
    pq = df.PriorityQueue(10, [df.string], shapes=[[]])
    assert pq.name == "priority_queue" and pq.queue_ref.op.type == "PriorityQueueV2"
    assert pq.dtypes == [df.int64, df.string]
    assert [s.as_list() for s in pq.shapes] == [[], []]
    ties = df.PriorityQueue(10, [df.int32], shapes=[[]])
    with df.Session() as sess:
        sess.run(pq.enqueue((5, "e")))
        sess.run(pq.enqueue_many(([3, 1, 4, 1], ["c", "a", "d", "a2"])))
        assert sess.run(pq.dequeue()) == [1, b"a"]
        priorities, values = sess.run(pq.dequeue_many(2))
        assert priorities.tolist() == [1, 3] and values.tolist() == [b"a2", b"c"]
        assert sess.run(pq.size()) == 2
        # equal priorities come out in the order of TensorFlow's heap
        sess.run(ties.enqueue_many(([1, 1, 1, 0, 2], [1, 2, 3, 4, 5])))
        priorities, values = sess.run(ties.dequeue_many(5))
        assert priorities.tolist() == [0, 1, 1, 1, 2] and values.tolist() == [4, 3, 1, 2, 5]
    with pytest.raises(TypeError, match="int64"):
        pq.enqueue((2.5, "x"))


def test_priority_queue_with_names_and_a_queue_base_from_a_handle():
    pq = df.PriorityQueue(10, [df.int32], shapes=[[]], names=["p", "v"])
    assert pq.names == ["p", "v"]
    with df.Session() as sess:
        sess.run(pq.enqueue({"p": 3, "v": 1}))
        assert sess.run(pq.dequeue()) == {"p": 3, "v": 1}
    fifo = df.FIFOQueue(5, [df.int32], shapes=[[]])
    base = df.QueueBase([df.int32], None, None, fifo.queue_ref)
    assert base.name == fifo.name and [s.ndims for s in base.shapes] == [None]
    with df.Session() as sess:
        sess.run(base.enqueue(7))
        assert sess.run(fifo.dequeue()) == 7
    with pytest.raises(ValueError, match="same length as dtypes"):
        df.QueueBase([df.int32], None, ["a", "b"], fifo.queue_ref)
    assert df.queue.QueueBase is df.io.QueueBase is df.QueueBase


# -- lookup tables ---------------------------------------------------------------------------------
def test_static_hash_table_looks_up_after_tables_initializer():
    init = df.lookup.KeyValueTensorInitializer(["a", "b", "c"], [1, 2, 3])
    assert (init.key_dtype, init.value_dtype) == (df.string, df.int32)
    table = df.lookup.StaticHashTable(init, -1)
    assert table.name == "hash_table" and table.resource_handle.op.type == "HashTableV2"
    assert table.initializer.name == "key_value_init/LookupTableImportV2"
    assert df.get_collection(df.GraphKeys.TABLE_INITIALIZERS) == [table.initializer]
    found = table.lookup(df.constant(["a", "x", "c"]))
    assert found.op.name == "hash_table_Lookup/LookupTableFindV2"
    assert found.shape.as_list() == [3]
    sparse = table.lookup(df.SparseTensor([[0, 0], [1, 2]], ["b", "z"], [2, 3]))
    with df.Session() as sess:
        with pytest.raises(df.errors.FailedPreconditionError, match="Table not initialized"):
            sess.run(found)
        sess.run(df.initializers.tables_initializer())
        assert sess.run(found).tolist() == [1, -1, 3]
        assert sess.run(table.size()) == 3
        keys, values = sess.run(table.export())
        assert keys.tolist() == [b"a", b"b", b"c"] and values.tolist() == [1, 2, 3]
        sess.run(table.initializer)  # again: the same contents
        assert sess.run(sparse.values).tolist() == [2, -1]
    assert df.initializers.tables_initializer is df.tables_initializer


def test_static_hash_table_checks_keys_and_duplicates():
    table = df.lookup.StaticHashTable(df.lookup.KeyValueTensorInitializer([1, 2], [1.5, 2.5]), 0.0)
    assert (table.key_dtype, table.value_dtype) == (df.int32, df.float32)
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be"):
        table.lookup(df.constant(["a"]))
    dup = df.lookup.StaticHashTable(
        df.lookup.KeyValueTensorInitializer([1, 1], [1, 2], df.int64, df.int64), -1
    )
    with df.Session() as sess:
        sess.run(table.initializer)
        assert sess.run(table.lookup(df.constant([[1, 5], [2, 2]]))).tolist() == [
            [1.5, 0.0],
            [2.5, 2.5],
        ]
        with pytest.raises(df.errors.FailedPreconditionError, match="different value"):
            sess.run(dup.initializer)
    with pytest.raises(ValueError, match="anonymous"):
        df.lookup.StaticHashTable(
            df.lookup.KeyValueTensorInitializer([1], [1]), 0, experimental_is_anonymous=True
        )


def test_text_file_initializer_reads_columns_lines_and_line_numbers(tmp_path):
    path = str(tmp_path / "vocab.txt")
    with open(path, "w") as f:
        f.write("emerson 10\nlake 20\npalmer 30\n")
    lookup = df.lookup
    by_column = lookup.StaticHashTable(
        lookup.TextFileInitializer(path, df.string, 0, df.int64, 1, delimiter=" "), -1
    )
    whole_line = lookup.StaticHashTable(
        lookup.TextFileInitializer(
            path,
            df.string,
            lookup.TextFileIndex.WHOLE_LINE,
            df.int64,
            lookup.TextFileIndex.LINE_NUMBER,
        ),
        -1,
    )
    offset = lookup.StaticHashTable(
        lookup.TextFileInitializer(
            path, df.string, 0, df.int64, -1, vocab_size=2, delimiter=" ", value_index_offset=5
        ),
        -1,
    )
    too_short = lookup.StaticHashTable(
        lookup.TextFileInitializer(path, df.string, 0, df.int64, -1, vocab_size=5, delimiter=" "),
        -1,
    )
    int_keys = lookup.StaticHashTable(
        lookup.TextFileInitializer(path, df.int64, 1, df.string, 0, delimiter=" "), "?"
    )
    assert (lookup.TextFileIndex.WHOLE_LINE, lookup.TextFileIndex.LINE_NUMBER) == (-2, -1)
    with df.Session() as sess:
        for table in (by_column, whole_line, offset, int_keys):
            sess.run(table.initializer)
        assert sess.run(by_column.lookup(df.constant(["lake", "x"]))).tolist() == [20, -1]
        assert sess.run(whole_line.lookup(df.constant(["lake 20", "palmer 30"]))).tolist() == [
            1,
            2,
        ]
        got = sess.run(offset.lookup(df.constant(["emerson", "lake", "palmer"])))
        assert got.tolist() == [5, 6, -1]
        got = sess.run(int_keys.lookup(df.constant([20, 7], df.int64)))
        assert got.tolist() == [b"lake", b"?"]
        with pytest.raises(df.errors.InvalidArgumentError, match="expected 5 but got 3"):
            sess.run(too_short.initializer)
    with pytest.raises(ValueError, match="must be int64"):
        lookup.TextFileInitializer(path, df.string, 0, df.int32, -1)


def test_mutable_hash_table_inserts_removes_and_exports():
    table = df.lookup.experimental.MutableHashTable(df.string, df.int64, -1)
    assert table.name == "MutableHashTable"
    insert = table.insert(["a", "b"], df.constant([1, 2], df.int64))
    assert insert.name == "MutableHashTable_lookup_table_insert/LookupTableInsertV2"
    vectors = df.lookup.experimental.MutableHashTable(df.int64, df.float32, [0.0, 0.0])
    found = vectors.lookup(df.constant([[2, 5]], df.int64))
    assert found.shape.as_list() == [1, 2, 2]
    strings = df.lookup.experimental.MutableHashTable(df.int64, df.string, "none")
    with df.Session() as sess:
        sess.run(insert)
        assert sess.run(table.lookup(["a", "c", "b"])).tolist() == [1, -1, 2]
        assert sess.run(table.size()) == 2
        sess.run(table.remove(df.constant(["a", "zz"])))
        assert sess.run(table.lookup(["a", "b"])).tolist() == [-1, 2]
        keys, values = sess.run(table.export())
        assert keys.tolist() == [b"b"] and values.tolist() == [2]
        dynamic = table.lookup(["b", "q"], dynamic_default_values=df.constant([7, 8], df.int64))
        assert sess.run(dynamic).tolist() == [2, 8]
        sess.run(vectors.insert(df.constant([1, 2], df.int64), [[1.0, 2], [3, 4]]))
        assert sess.run(found).tolist() == [[[3.0, 4.0], [0.0, 0.0]]]
        sess.run(strings.insert(df.constant([3], df.int64), ["three"]))
        got = sess.run(strings.lookup(df.constant([3, 4], df.int64)))
        assert got.tolist() == [b"three", b"none"]
        with pytest.raises(df.errors.InvalidArgumentError, match="Expected shape"):
            sess.run(vectors.insert(df.constant([1], df.int64), [[1.0, 2, 3]]))


def test_dense_hash_table_refuses_its_empty_and_deleted_keys():
    table = df.lookup.experimental.DenseHashTable(
        df.int64, df.int64, default_value=-1, empty_key=0, deleted_key=-1
    )
    assert table.name == "MutableDenseHashTable"
    keys = df.constant([5, 6, 7], df.int64)
    with df.Session() as sess:
        sess.run(table.insert(df.constant([5, 7], df.int64), df.constant([50, 70], df.int64)))
        assert sess.run(table.lookup(keys)).tolist() == [50, -1, 70]
        sess.run(table.erase(df.constant([5], df.int64)))
        assert sess.run([table.lookup(keys), table.size()])[0].tolist() == [-1, -1, 70]
        with pytest.raises(df.errors.InvalidArgumentError, match="empty_key"):
            sess.run(table.insert(df.constant([0], df.int64), df.constant([1], df.int64)))
        with pytest.raises(df.errors.InvalidArgumentError, match="deleted_key"):
            sess.run(table.lookup(df.constant([-1], df.int64)))


# -- partitioners ----------------------------------------------------------------------------------
def test_partitioners_compute_tensorflows_partitions():
    shape = df.TensorShape([100, 10])
    assert df.fixed_size_partitioner(3)(df.TensorShape([2, 4])) == [2, 1]
    assert df.fixed_size_partitioner(3, 1)(df.TensorShape([2, 4])) == [1, 3]
    assert df.min_max_variable_partitioner(8, min_slice_size=64)(shape, df.float32) == [8, 1]
    assert df.variable_axis_size_partitioner(1000)(shape, df.float32) == [4, 1]
    assert df.variable_axis_size_partitioner(1000, max_shards=2)(shape, df.float32) == [2, 1]
    strings = df.variable_axis_size_partitioner(100, bytes_per_string_element=4)
    assert strings(shape, df.string) == [50, 1]
    with pytest.raises(ValueError, match="must be positive"):
        df.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="Cannot partition variable along axis 2"):
        df.min_max_variable_partitioner(2, axis=2)(shape, df.float32)


def test_create_partitioned_variables_slices_the_initial_value():
    full = df.constant(np.arange(10.0).reshape(5, 2), df.float32)
    parts = df.create_partitioned_variables([5, 2], [3, 1], full)
    assert [v.name for v in parts] == [
        "PartitionedVariable/part_0:0",
        "PartitionedVariable/part_1:0",
        "PartitionedVariable/part_2:0",
    ]
    assert [v.shape.as_list() for v in parts] == [[2, 2], [2, 2], [1, 2]]
    ones = df.create_partitioned_variables([7], [3], df.ones_initializer(), name="w")
    assert [v.shape.as_list() for v in ones] == [[3], [2], [2]]
    local = df.create_partitioned_variables(
        [4, 6], [1, 2], df.zeros_initializer(), df.float64, False, ["c"], "z"
    )
    assert df.get_collection("c") == local and local[0].dtype.base_dtype == df.float64
    assert not set(local) & set(df.trainable_variables())
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        assert [p.tolist() for p in sess.run(parts)] == [
            [[0.0, 1.0], [2.0, 3.0]],
            [[4.0, 5.0], [6.0, 7.0]],
            [[8.0, 9.0]],
        ]
        assert [p.tolist() for p in sess.run(ones)] == [[1.0] * 3, [1.0] * 2, [1.0] * 2]
    with df.variable_scope("r"):
        first = df.create_partitioned_variables([4], [2], df.zeros_initializer(), name="v")
    with df.variable_scope("r", reuse=True):
        again = df.create_partitioned_variables([4], [2], df.zeros_initializer(), name="v")
    assert first[0] is again[0] and again[1].name == "r/v/part_1:0"


def test_create_partitioned_variables_refuses_bad_slicings():
    with pytest.raises(ValueError, match="along one dimension"):
        df.create_partitioned_variables([4, 6], [2, 2], df.zeros_initializer())
    with pytest.raises(ValueError, match="must have the length"):
        df.create_partitioned_variables([4], [2, 2], df.zeros_initializer())
    with pytest.raises(ValueError, match="offset=3, shape=3"):
        df.create_partitioned_variables([3], [5], df.zeros_initializer())


def test_partitioned_slices_draw_with_the_fans_of_the_full_variable():
    calls = []

    def init(shape, dtype=None, partition_info=None):
        calls.append((list(shape), partition_info.full_shape, partition_info.var_offset))
        return df.zeros(shape, dtype)

    df.create_partitioned_variables([6, 3], [2, 1], init)
    assert calls == [([3, 3], [6, 3], [0, 0]), ([3, 3], [6, 3], [3, 0])]


# -- df.function's parameters ----------------------------------------------------------------------
def test_function_takes_tensorflows_parameters_in_order():
    import inspect

    names = list(inspect.signature(df.function).parameters)
    assert names[:11] == [
        "func",
        "input_signature",
        "autograph",
        "jit_compile",
        "reduce_retracing",
        "experimental_implements",
        "experimental_autograph_options",
        "experimental_attributes",
        "experimental_relax_shapes",
        "experimental_compile",
        "experimental_follow_type_hints",
    ]
    f = df.function(lambda x: x + 1, experimental_implements="my.add", jit_compile=True)
    assert f.experimental_attributes == {"_implements": "my.add"} and f.jit_compile
    g = df.function(experimental_attributes={"api_implements": "a"})(lambda x: x * 2)
    assert g.experimental_attributes == {"api_implements": "a"}
    assert df.function(lambda x: x, experimental_compile=True).jit_compile
    with pytest.raises(ValueError, match="disagree"):
        df.function(lambda x: x, jit_compile=False, experimental_compile=True)
    # A feature's name is not a feature (TF 2.21 fails later, at the trace, on 'str').
    with pytest.raises(TypeError, match="experimental_autograph_options"):
        df.function(lambda x: x, experimental_autograph_options=("LISTS",))
    with pytest.raises(TypeError, match="experimental_implements"):
        df.function(lambda x: x, experimental_implements=3)
    with df.Session() as sess:
        assert sess.run(f(df.constant(1))) == 2 and sess.run(g(df.constant(3))) == 6


def test_function_reduce_retracing_traces_once_for_other_shapes():
    def double(x):
        return x * 2

    with df.eager_mode():
        relaxed = df.function(double, reduce_retracing=True)
        relaxed(np.ones(2, np.float32))
        relaxed(np.ones(3, np.float32))
        relaxed(np.ones(4, np.float32))
        strict = df.function(double)
        strict(np.ones(2, np.float32))
        strict(np.ones(3, np.float32))
        strict(np.ones(4, np.float32))
    assert relaxed.experimental_get_tracing_count() == 2
    assert strict.experimental_get_tracing_count() == 3


# -- small top-level ops ---------------------------------------------------------------------------
def test_bitcast_reads_the_bytes_as_another_type():
    wide_to_narrow = df.bitcast(df.constant([1, 2, 3, 4], df.int32), df.int16)
    assert wide_to_narrow.shape.as_list() == [4, 2]
    narrow_to_wide = df.bitcast(df.constant([[1, 2], [3, 4]], df.int16), df.int32)
    assert narrow_to_wide.shape.as_list() == [2]
    got = _run([df.bitcast(df.constant([1.0, 2.0]), df.int32), wide_to_narrow, narrow_to_wide])
    assert got[0].tolist() == [1065353216, 1073741824]
    assert got[1].tolist() == [[1, 0], [2, 0], [3, 0], [4, 0]]
    assert got[2].tolist() == [131073, 262147]
    assert df.bitcast(df.constant([1, 2, 3, 4], df.uint8), df.int32).shape.as_list() == []
    unknown = df.bitcast(df.placeholder(df.int32, [None, 3]), df.uint8)
    assert unknown.shape.as_list() == [None, 3, 4]
    with pytest.raises(ValueError, match="3 does not match 4"):
        df.bitcast(df.constant([1, 2, 3], df.uint8), df.int32)
    with pytest.raises(TypeError, match="string"):
        df.bitcast(df.constant(["a"]), df.int32)


def test_broadcast_shapes_at_run_time_and_build_time():
    shape = df.broadcast_dynamic_shape([2, 1, 3], [4, 1])
    assert shape.op.type == "BroadcastArgs" and shape.shape.as_list() == [3]
    assert _run(shape).tolist() == [2, 4, 3]
    with pytest.raises(df.errors.InvalidArgumentError, match=r"Incompatible shapes: \[2,3\]"):
        _run(df.broadcast_dynamic_shape([2, 3], [4]))
    static = df.broadcast_static_shape(df.TensorShape([2, 1, 3]), df.TensorShape([None, 1]))
    assert static.as_list() == [2, None, 3]
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        df.broadcast_static_shape(df.TensorShape([2, 3]), df.TensorShape([4]))


def test_searchsorted_searches_each_row():
    left = df.searchsorted([[1, 3, 5], [2, 4, 6]], [[3, 4], [7, 0]])
    right = df.searchsorted([1, 3, 5], [3, 4], side="right", out_type=df.int64)
    assert right.dtype == df.int64 and left.shape.as_list() == [2, 2]
    got = _run([left, right])
    assert got[0].tolist() == [[1, 2], [3, 0]] and got[1].tolist() == [2, 2]
    with pytest.raises(ValueError, match="either 'right' or 'left'"):
        df.searchsorted([1, 3, 5], [3], side="mid")


def test_timestamp_is_the_time_of_the_run():
    import time

    before = time.time()
    stamp = df.timestamp()
    assert stamp.dtype == df.float64 and stamp.op.type == "Timestamp"
    assert before <= _run(stamp) <= time.time()


def test_floor_div_and_guarantee_const():
    div = df.floor_div(df.constant([7, -7]), 2)
    assert div.op.type == "FloorDiv"
    x = df.constant([1.0, 2.0])
    const = df.guarantee_const(x)
    assert const.op.type == "GuaranteeConst"
    got = _run([div, const, df.gradients(const * 3.0, x)[0]])
    assert got[0].tolist() == [3, -4] and got[1].tolist() == [1.0, 2.0]
    assert got[2].tolist() == [3.0, 3.0]


def test_hessians_are_the_second_derivatives():
    x = df.constant([1.0, 2.0])
    (h,) = df.hessians(df.reduce_sum(x**3), x)
    m = df.Variable([[1.0, 2.0], [3.0, 4.0]])
    (hm,) = df.hessians(df.reduce_sum(m**3), m)
    assert h.shape.as_list() == [2, 2] and hm.shape.as_list() == [2, 2, 2, 2]
    with df.Session() as sess:
        sess.run(m.initializer)
        assert sess.run(h).tolist() == [[6.0, 0.0], [0.0, 12.0]]
        np.testing.assert_array_equal(sess.run(hm).reshape(4, 4), np.diag([6.0, 12, 18, 24]))


def test_contexts_and_predicates_of_tensors_and_shapes():
    x = df.constant([1.0, 2.0])
    v = df.Variable(1.0)
    assert df.is_symbolic_tensor(x)
    assert not any(
        df.is_symbolic_tensor(o) for o in (1, np.ones(2), v, df.SparseTensor([[0]], [1], [2]))
    )
    assert df.executing_eagerly_outside_functions() is False
    with df.eager_mode():
        assert df.executing_eagerly_outside_functions() is True
        assert not df.is_symbolic_tensor(df.constant(1.0))
    assert df.dimension_at_index(df.TensorShape([2, None]), 1).value is None
    assert df.dimension_at_index(df.TensorShape(None), 1).value is None
    assert df.dimension_at_index(df.TensorShape([2, None]), 0).value == 2
    sparse = df.convert_to_tensor_or_sparse_tensor(df.SparseTensorValue([[0]], [1], [2]))
    assert isinstance(sparse, df.SparseTensor)
    dense = df.convert_to_tensor_or_sparse_tensor([1, 2], dtype=df.float32, name="q")
    assert dense.name == "q:0" and dense.dtype == df.float32
    with pytest.raises(RuntimeError, match="Sparse dtype mismatch"):
        df.convert_to_tensor_or_sparse_tensor(sparse, dtype=df.float32)


def test_init_scope_leaves_control_dependencies_and_loop_bodies():
    graph = df.get_default_graph()
    made = []

    def body(i):
        with df.init_scope():
            made.append(df.constant(5, name="lifted"))
        return i + 1

    df.while_loop(lambda i: i < 3, body, [0])
    assert made[0].op._control_flow_context is None
    gate = df.no_op(name="gate")
    with df.control_dependencies([gate]), df.name_scope("outer"):
        with df.init_scope():
            c = df.constant(1, name="c")
    assert c.op.control_inputs == [] and c.name == "outer/c:0" and c.graph is graph


def test_init_scope_lifts_out_of_a_function_traced_eagerly():
    made = []
    with df.eager_mode():

        @df.function(autograph=False)
        def double(x):
            with df.init_scope():
                made.append((df.executing_eagerly(), df.constant(2.0)))
                made.append(df.executing_eagerly_outside_functions())
            return x * 2

        assert double(df.constant(1.0)).numpy() == 2.0
    assert made[0][0] is True and made[0][1].numpy() == 2.0 and made[1] is True


# -- dtypes, dimensions, nest, map_fn, switches ----------------------------------------------------
def test_dtype_and_dimension_from_tensorflows_constructor_arguments():
    assert df.DType(1) is df.float32 and df.DType(101) is df.float32_ref
    assert df.dtypes.DType(3) is df.int32
    with pytest.raises(TypeError, match="99 does not correspond"):
        df.DType(99)
    with pytest.raises(ValueError, match="handle_data"):
        df.DType(20, handle_data=object())
    assert df.Dimension(3) == 3 and df.Dimension(None).value is None
    assert df.dtypes.QUANTIZED_DTYPES == frozenset(
        {df.qint8, df.quint8, df.qint16, df.quint16, df.qint32}
        | {df.qint8_ref, df.quint8_ref, df.qint16_ref, df.quint16_ref, df.qint32_ref}
    )
    assert df.variant is df.dtypes.variant and df.variant.as_datatype_enum == 21
    assert not df.variant.is_numpy_compatible
    assert df.dtypes.cast is df.cast and df.dtypes.saturate_cast is df.saturate_cast
    assert df.dtypes.as_string is df.as_string


def test_nest_expands_composite_tensors_in_tensorflows_order():
    st = df.SparseTensor([[0, 0]], [1.0], [2, 2])
    rt = df.ragged.constant([[[1], [2, 3]], [[4]]])
    structure = {"a": st, "b": [1, rt]}
    flat = df.nest.flatten(structure, expand_composites=True)
    assert flat[:3] == [st.indices, st.values, st.dense_shape] and flat[3] == 1
    assert flat[4:] == [rt.flat_values, rt.row_splits, rt.values.row_splits]
    assert df.nest.flatten(st) == [st]
    packed = df.nest.pack_sequence_as(structure, flat, expand_composites=True)
    assert isinstance(packed["a"], df.SparseTensor) and packed["a"].values is st.values
    assert packed["b"][1].flat_values is rt.flat_values and packed["b"][1].ragged_rank == 2
    other = df.SparseTensor([[1, 1], [0, 1]], [1.0, 3.0], [2, 2])
    df.nest.assert_same_structure(st, other, expand_composites=True)
    df.nest.assert_same_structure(nest1=st, nest2=rt)  # leaves both, without expansion
    with pytest.raises(ValueError):
        df.nest.assert_same_structure(st, rt, expand_composites=True)
    with pytest.raises(ValueError):
        df.nest.assert_same_structure(st, 1, expand_composites=True)
    assert not df.nest.is_nested(seq=st) and df.nest.is_nested([1]) and df.nest.is_nested({})


def test_map_fn_takes_fn_output_signature():
    x = df.constant([1.0, 2.0])
    ints = df.map_fn(lambda v: df.cast(v, df.int64) * 2, x, fn_output_signature=df.int64)
    pair = df.map_fn(
        lambda v: (v, df.cast(v, df.int64)),
        x,
        fn_output_signature=(df.float32, df.TensorSpec([], df.int64)),
    )
    assert ints.dtype == df.int64 and pair[1].dtype == df.int64
    got = _run([ints, pair])
    assert got[0].tolist() == [2, 4] and got[1][1].tolist() == [1, 2]
    with pytest.raises(TypeError, match="composite"):
        df.map_fn(lambda v: v, x, fn_output_signature=df.SparseTensorSpec([1], df.float32))


def test_tensor_equality_switches_eager_comparison():
    with df.eager_mode():
        x = df.constant([1, 2])
        assert (x == x).numpy().tolist() == [True, True]
        df.disable_tensor_equality()
        try:
            assert (x == x) is True and (x == df.constant([1, 2])) is False
            assert {x: 1}[x] == 1
        finally:
            df.enable_tensor_equality()
        assert (x == df.constant([1, 3])).numpy().tolist() == [True, False]
        with pytest.raises(TypeError, match="unhashable"):
            hash(x)
    g = df.constant(1)
    assert (g == g) is True  # graph tensors compare by identity either way


def test_variable_creator_scope_wraps_every_variable_creation():
    seen = []

    def rename(next_creator, **kwargs):
        seen.append(sorted(kwargs))
        kwargs["name"] = "renamed"
        return next_creator(**kwargs)

    with df.variable_creator_scope(rename):
        v = df.Variable(1.0, name="orig")
        w = df.get_variable("gv", [2])
    assert (v.name, w.name) == ("renamed:0", "renamed_1:0")
    assert "initial_value" in seen[0] and "experimental_enable_variable_lifting" in seen[0]
    order = []

    def outer(next_creator, **kwargs):
        order.append("outer")
        kwargs["trainable"] = False
        return next_creator(**kwargs)

    def inner(next_creator, **kwargs):
        order.append("inner")
        return next_creator(**kwargs)

    with df.variable_creator_scope(outer), df.variable_creator_scope(inner):
        z = df.Variable(2.0)
    assert order == ["inner", "outer"] and z not in df.trainable_variables()
    assert df.Variable(3.0, name="plain").name == "plain:0"


def test_identity_reader_reads_each_work_item_as_key_and_value():
    queue = df.FIFOQueue(5, df.string)
    reader = df.IdentityReader()
    key, value = reader.read(queue)
    with df.Session() as sess:
        sess.run(queue.enqueue_many([["a", "b\xff", "c"]]))
        assert sess.run([key, value]) == [b"a", b"a"]
        counts = [reader.num_records_produced(), reader.num_work_units_completed()]
        assert sess.run(counts) == [1, 1]
        keys, values = sess.run(reader.read_up_to(queue, 2))  # a work item ends a batch
        assert keys.tolist() == values.tolist() == ["b\xff".encode()]
        assert sess.run(counts) == [2, 2]


# -- type specs ------------------------------------------------------------------------------------
def test_type_spec_from_value_gives_each_kind_its_spec():
    spec = df.type_spec_from_value
    assert spec(df.constant([1, 2])) == df.TensorSpec([2], df.int32)
    assert spec(np.ones((2, 3))) == df.TensorSpec([2, 3], df.float64)
    assert spec(3) == df.TensorSpec([], df.int32) and spec(2.5) == df.TensorSpec([], df.float32)
    assert spec("s") == df.TensorSpec([], df.string) and spec([1, 2]) == df.TensorSpec(
        [2], df.int32
    )
    assert spec(df.Variable(1.0)) == df.TensorSpec([], df.float32)
    assert spec(None) == df.NoneTensorSpec()
    assert spec(df.SparseTensor([[0]], [1.0], [3])) == df.SparseTensorSpec([3], df.float32)
    ragged = spec(df.ragged.constant([[1], [2, 3]]))
    assert isinstance(ragged, df.RaggedTensorSpec) and ragged.shape.as_list() == [2, None]
    slices = df.IndexedSlices(df.constant([[1.0]]), df.constant([0]))
    assert spec(slices) == df.IndexedSlicesSpec([None, 1], df.float32, df.int32, None, [1])
    shaped = df.IndexedSlices(df.constant([[1.0]]), df.constant([0]), df.constant([4, 1]))
    assert spec(shaped) == df.IndexedSlicesSpec([4, 1], df.float32, df.int32, df.int32, [1])
    assert spec(df.TensorArray(df.float32, 3)) == df.TensorArraySpec(None, df.float32, False, True)
    with pytest.raises(TypeError, match="Could not build a TypeSpec"):
        spec(object())


def test_type_specs_share_the_type_spec_base():
    assert all(
        issubclass(c, df.TypeSpec)
        for c in (df.TensorSpec, df.SparseTensorSpec, df.RaggedTensorSpec, df.IndexedSlicesSpec)
    )
    with pytest.raises(TypeError, match="abstract"):
        df.TypeSpec()
    slices = df.IndexedSlicesSpec([None, 3], df.float32)
    assert slices.value_type is df.IndexedSlices and slices.shape.as_list() == [None, 3]
    assert slices.is_compatible_with(df.IndexedSlicesSpec([2, 3]))
    assert not slices.is_compatible_with(df.IndexedSlicesSpec([2, 4]))
    assert df.TensorSpec([None], df.int32).is_compatible_with(df.constant([1, 2]))
    arrays = df.TensorArraySpec([2], df.int32, True, False)
    assert arrays == df.TensorArraySpec([2], df.int32, True, False)
    assert arrays != df.TensorArraySpec([2], df.int32) and arrays.value_type is df.TensorArray
    assert hash(arrays) == hash(df.TensorArraySpec([2], df.int32, True, False))
    assert df.NoneTensorSpec().value_type is type(None)
    assert df.NoneTensorSpec().is_compatible_with(None)
    assert df.TensorSpec([2], df.int32).value_type is df.Tensor


# -- Module ----------------------------------------------------------------------------------------
def test_module_finds_its_variables_and_submodules_as_tensorflow():
    class Dense(df.Module):
        def __init__(self, n, name=None):
            super().__init__(name=name)
            with self.name_scope:
                self.w = df.Variable(df.ones([n]), name="w")
                self.b = df.Variable(0.0, name="b", trainable=False)

        @df.Module.with_name_scope
        def __call__(self, x):
            return df.identity(x * self.w + self.b, name="out")

    class MLP(df.Module):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(2), Dense(2, name="second")]
            self.extra = {"z": df.Variable(3.0, name="z")}

    m = MLP()
    assert (m.name, m.name_scope.name) == ("mlp", "mlp/")
    assert [v.name for v in m.variables] == [
        "z:0",
        "dense/b:0",
        "dense/w:0",
        "second/b:0",
        "second/w:0",
    ]
    assert [v.name for v in m.trainable_variables] == ["z:0", "dense/w:0", "second/w:0"]
    assert [v.name for v in m.non_trainable_variables] == ["dense/b:0", "second/b:0"]
    assert [s.name for s in m.submodules] == ["dense", "second"]
    assert m.layers[0](df.constant([1.0, 2.0])).name == "dense/out:0"
    assert df.Module().name == "module" and df.Module().name_scope.name == "module_1/"
    assert df.Module(name="x").name_scope.name == "x/"
    assert df.Module(name="x").name_scope.name == "x_1/"

    class MyFancyModel(df.Module):
        pass

    assert MyFancyModel().name == "my_fancy_model"
    with pytest.raises(ValueError, match="not a valid module name"):
        df.Module(name="bad name")


# -- conditional accumulators ----------------------------------------------------------------------
def test_conditional_accumulator_averages_fresh_gradients():
    acc = df.ConditionalAccumulator(df.float32, shape=[2])
    assert acc.name == "conditional_accumulator" and acc.dtype == df.float32
    take = acc.take_grad(2)
    assert take.shape.as_list() == [2]
    with df.Session() as sess:
        sess.run(acc.apply_grad([1.0, 2.0]))
        sess.run(acc.apply_grad([3.0, 4.0]))
        assert sess.run(acc.num_accumulated()) == 2
        assert sess.run(take).tolist() == [2.0, 3.0] and sess.run(acc.num_accumulated()) == 0
        sess.run(acc.apply_grad([1.0, 1.0], local_step=0))  # older than step 1: dropped
        assert sess.run(acc.num_accumulated()) == 0
        sess.run(acc.set_global_step(5))
        sess.run(acc.apply_grad([1.0, 1.0], local_step=3))
        sess.run(acc.apply_grad([2.0, 2.0], local_step=5))
        assert sess.run(acc.take_grad(1)).tolist() == [2.0, 2.0]
        with pytest.raises(df.errors.InvalidArgumentError, match="must be positive"):
            sess.run(acc.take_grad(0))
    with pytest.raises(ValueError, match="incompatible"):
        acc.apply_grad([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="reduction_type"):
        df.ConditionalAccumulator(df.float32, reduction_type="MAX")
    with pytest.raises(TypeError, match="floating-point"):
        df.ConditionalAccumulator(df.int32)


def test_conditional_accumulator_sums_and_checks_shapes_at_run_time():
    acc = df.ConditionalAccumulator(df.float32, reduction_type="SUM")
    with df.Session() as sess:
        sess.run(acc.apply_grad([[1.0, 2.0]]))
        with pytest.raises(df.errors.InvalidArgumentError, match=r"expected \[1,2\], got \[1,3\]"):
            sess.run(acc.apply_grad([[1.0, 2.0, 3.0]]))
        sess.run(acc.apply_grad([[1.0, 2.0]]))
        assert sess.run(acc.take_grad(2)).tolist() == [[2.0, 4.0]]


def test_take_grad_waits_for_enough_gradients():
    import threading

    acc = df.ConditionalAccumulator(df.float32, shape=[])
    take = acc.take_grad(2)
    apply_one = acc.apply_grad(1.0)
    with df.Session() as sess:
        results = []
        waiter = threading.Thread(target=lambda: results.append(sess.run(take)))
        waiter.start()
        sess.run(apply_one)
        waiter.join(0.3)
        assert waiter.is_alive()  # one gradient is not enough
        sess.run(apply_one)
        waiter.join(10)
        assert results == [1.0]
        with pytest.raises(df.errors.DeadlineExceededError):
            sess.run(take, options=df.RunOptions(timeout_in_ms=100))


def test_sparse_conditional_accumulator_averages_each_row():
    acc = df.SparseConditionalAccumulator(df.float32, shape=[4, 2])
    assert df.sparse.SparseConditionalAccumulator is df.SparseConditionalAccumulator
    with df.Session() as sess:
        sess.run(acc.apply_grad([0, 2], [[1.0, 1.0], [2.0, 2.0]]))
        sess.run(acc.apply_grad([2, 3], [[4.0, 4.0], [3.0, 3.0]]))
        assert sess.run(acc.num_accumulated()) == 2
        got = sess.run(acc.take_grad(2))
        assert got.indices.tolist() == [0, 2, 3] and got.shape.tolist() == [4, 2]
        assert got.values.tolist() == [[1.0, 1.0], [3.0, 3.0], [3.0, 3.0]]
        slices = df.IndexedSlices(
            df.constant([[5.0, 5.0]]), df.constant([1], df.int64), df.constant([4, 2], df.int64)
        )
        sess.run(acc.apply_indexed_slices_grad(slices, local_step=1))
        taken = sess.run(acc.take_indexed_slices_grad(1))
        assert taken.indices.tolist() == [1] and taken.values.tolist() == [[5.0, 5.0]]
    summed = df.SparseConditionalAccumulator(df.float32, reduction_type="SUM")
    with df.Session() as sess:
        # TensorFlow's merge takes the indices as sorted: unsorted ones are not combined
        sess.run(summed.apply_grad([3, 1], [[1.0], [2.0]], grad_shape=[5, 1]))
        sess.run(summed.apply_grad([1], [[7.0]]))
        got = sess.run(summed.take_grad(2))
        assert got.indices.tolist() == [1, 3, 1] and got.values.tolist() == [[7.0], [1.0], [2.0]]
        assert got.shape.tolist() == [-1, 1]


def test_conditional_accumulator_base_wraps_a_handle():
    acc = df.ConditionalAccumulator(df.float32, shape=[2])
    base = df.ConditionalAccumulatorBase(df.float32, [2], acc.accumulator_ref)
    assert base.name == acc.name and base.accumulator_ref is acc.accumulator_ref
    with df.Session() as sess:
        sess.run(acc.apply_grad([1.0, 2.0]))
        assert sess.run(base.num_accumulated()) == 1


def test_vectorized_map_maps_and_stacks_like_tensorflow():
    x = df.constant(np.arange(6.0).reshape(3, 2).astype(np.float32))
    w = df.constant(2.0)
    ops_before = len(df.get_default_graph().get_operations())
    sums, ints = df.vectorized_map(lambda e: (df.reduce_sum(e) * w, df.cast(e, df.int32)), x)
    added = df.get_default_graph().get_operations()[ops_before:]
    assert all(op.name.startswith("vectorized_map") for op in added)  # the trace is apart
    assert sums.shape.as_list() == [3] and ints.dtype == df.int32
    both = df.vectorized_map(lambda d: d["a"] + d["b"], {"a": x, "b": x * 10})
    product = df.vectorized_map(lambda e: df.matmul(df.expand_dims(e, 0), df.ones([2, 3])), x)
    assert product.shape.as_list() == [3, 1, 3]
    got = _run([sums, ints, both])
    assert got[0].tolist() == [2.0, 10.0, 18.0] and got[1].tolist() == [[0, 1], [2, 3], [4, 5]]
    assert got[2].tolist() == [[0.0, 11.0], [22.0, 33.0], [44.0, 55.0]]
    with pytest.raises(ValueError, match="first dimension"):
        df.vectorized_map(lambda e: e, df.constant(1.0))


# -- ragged ----------------------------------------------------------------------------------------
def _lists(value):
    with df.Session() as sess:
        got = sess.run(value)
    return got.to_list() if hasattr(got, "to_list") else got.tolist()


def test_ragged_stack_dynamic_partitions_groups_items_by_partition():
    data = df.constant(["a", "b", "c", "d", "e"])
    got = df.ragged.stack_dynamic_partitions(data, df.constant([3, 0, 3, 2, 0]), 5)
    assert _lists(got) == [[b"b", b"e"], [], [b"d"], [b"a", b"c"], []]
    rows = df.ragged.stack_dynamic_partitions(
        df.ragged.constant([[1], [2, 3], [4]]), df.constant([1, 0, 1]), 2
    )
    assert _lists(rows) == [[[2, 3]], [[1], [4]]]
    bad = df.ragged.stack_dynamic_partitions(data, df.constant([0, 0, 7, 0, 0]), 5)
    with pytest.raises(df.errors.InvalidArgumentError, match="less than num_partitions"):
        _lists(bad)


def test_ragged_boolean_mask_keeps_rows_of_what_is_left():
    dense = df.constant([[1, 2, 3], [4, 5, 6]])
    ragged = df.ragged.constant([[1, 2, 3], [4], [5, 6]])
    mask = df.constant([[True, False, True], [False, False, True]])
    assert _lists(df.ragged.boolean_mask(dense, mask)) == [[1, 3], [6]]
    ragged_mask = df.ragged.constant([[True, False, True], [False], [True, True]])
    assert _lists(df.ragged.boolean_mask(ragged, ragged_mask)) == [[1, 3], [], [5, 6]]
    rows = df.ragged.boolean_mask(ragged, df.constant([True, False, True]))
    assert _lists(rows) == [[1, 2, 3], [5, 6]]
    plain = df.ragged.boolean_mask(df.constant([[1, 2], [3, 4], [5, 6]]), [True, False, True])
    assert isinstance(plain, df.Tensor) and _lists(plain) == [[1, 2], [5, 6]]


def test_ragged_stack_stacks_along_a_new_axis():
    a, b = df.ragged.constant([[1, 2], [3]]), df.ragged.constant([[4], [5, 6], [7]])
    assert _lists(df.ragged.stack([a, b])) == [[[1, 2], [3]], [[4], [5, 6], [7]]]
    c = df.ragged.constant([[4], [5, 6]])
    assert _lists(df.ragged.stack([a, c], axis=1)) == [[[1, 2], [4]], [[3], [5, 6]]]
    vectors = df.ragged.stack([df.constant([1, 2]), df.constant([3, 4])])
    assert isinstance(vectors, df.RaggedTensor) and _lists(vectors) == [[1, 2], [3, 4]]
    mixed = df.ragged.stack([a, df.constant([[4, 5], [6, 7]])])
    assert _lists(mixed) == [[[1, 2], [3]], [[4, 5], [6, 7]]]


def test_ragged_fill_empty_rows_and_its_gradient():
    rowids = df.constant([0, 0, 2, 4], df.int64)
    values = df.constant([1.0, 2.0, 3.0, 4.0])
    filled = df.ragged_fill_empty_rows(rowids, values, df.constant(6, df.int64), 9.0)
    assert filled.reverse_index_map.shape.as_list() == [4]
    grad = df.ragged_fill_empty_rows_grad(
        df.constant([0, 1, 3, 5], df.int64), df.constant([1.0, 2, 3, 4, 5, 6, 7])
    )
    default = df.constant(9.0)
    through = df.ragged_fill_empty_rows(rowids, values, 6, default).output_values
    weights = df.constant([1.0, 2, 3, 4, 5, 6, 7])
    d_values, d_default = df.gradients(df.reduce_sum(through * weights), [values, default])
    with df.Session() as sess:
        got = sess.run(filled)
        assert got.output_value_rowids.tolist() == [0, 0, 1, 2, 3, 4, 5]
        assert got.output_values.tolist() == [1.0, 2.0, 9.0, 3.0, 9.0, 4.0, 9.0]
        assert got.empty_row_indicator.tolist() == [False, True, False, True, False, True]
        assert got.reverse_index_map.tolist() == [0, 1, 3, 5]
        g = sess.run(grad)
        assert g.d_values.tolist() == [1.0, 2.0, 4.0, 6.0] and g.d_default_value == 15.0
        assert sess.run(d_values).tolist() == [1.0, 2.0, 4.0, 6.0]
        assert sess.run(d_default) == 15.0


def test_cross_combines_one_feature_of_each_input_per_row():
    crossed = df.ragged.cross(
        [
            df.ragged.constant([["a1", "a2"], ["b"], []]),
            df.ragged.constant([["x1", "x2"], ["y"], ["z"]]),
            df.constant([[1, 2], [3, 4], [5, 6]], df.int64),
        ]
    )
    got = _lists(crossed)
    assert got[0][:3] == [b"a1_X_x1_X_1", b"a1_X_x1_X_2", b"a1_X_x2_X_1"] and len(got[0]) == 8
    assert got[1:] == [[b"b_X_y_X_3", b"b_X_y_X_4"], []]
    sparse = df.sparse.cross(
        [df.SparseTensor([[0, 0], [1, 0], [1, 1]], ["a", "b", "c"], [2, 2]), [[1], [2]]],
        separator="+",
    )
    with df.Session() as sess:
        value = sess.run(sparse)
    assert value.indices.tolist() == [[0, 0], [1, 0], [1, 1]]
    assert value.values.tolist() == [b"a+1", b"b+2", b"c+2"] and value.dense_shape.tolist() == [
        2,
        2,
    ]
    with pytest.raises(TypeError, match="string or integer"):
        df.sparse.cross([df.constant([["a"]]), df.constant([[1.5]])])


def test_ragged_tensor_and_value_take_tensorflows_arguments():
    value = df.ragged.RaggedTensorValue(values=np.array([1, 2]), row_splits=np.array([0, 1, 2]))
    assert value.to_list() == [[1], [2]]

    class RowPartition:
        def row_splits(self):
            return df.constant([0, 2, 3], df.int64)

    rt = df.RaggedTensor(df.constant([1, 2, 3]), row_partition=RowPartition(), internal=True)
    assert _lists(rt) == [[1, 2], [3]]
    with pytest.raises(ValueError, match="private"):
        df.RaggedTensor(df.constant([1]), df.constant([0, 1], df.int64))


def test_sparse_bincount_counts_values_overall_and_per_row():
    per_row = df.sparse.bincount(
        df.constant([[1, 2, 2], [0, 0, 5]], df.int64), axis=-1, minlength=8
    )
    binary = df.sparse.bincount(
        df.ragged.constant([[1, 2, 2], [], [5]]), axis=-1, binary_output=True
    )
    weighted = df.sparse.bincount(
        df.constant([[1, 2, 2], [0, 0, 5]]), weights=df.constant([[1.0, 2, 3], [4, 5, 6]])
    )
    sparse = df.sparse.bincount(
        df.SparseTensor([[0, 0], [1, 1]], [3, 3], [2, 2]),
        weights=df.SparseTensor([[0, 0], [1, 1]], [0.5, 2.0], [2, 2]),
        axis=-1,
    )
    capped = df.sparse.bincount(df.constant([1, 2, 9]), maxlength=3)
    empty = df.sparse.bincount(df.constant([], df.int32))
    with df.Session() as sess:
        got = sess.run([per_row, binary, weighted, sparse, capped, empty])
        with pytest.raises(df.errors.InvalidArgumentError, match="non-negative"):
            sess.run(df.sparse.bincount(df.constant([-1, 2])))
    assert got[0].indices.tolist() == [[0, 1], [0, 2], [1, 0], [1, 5]]
    assert got[0].values.tolist() == [1, 2, 2, 1] and got[0].dense_shape.tolist() == [2, 8]
    assert got[1].indices.tolist() == [[0, 1], [0, 2], [2, 5]]
    assert got[1].values.tolist() == [1, 1, 1] and got[1].dense_shape.tolist() == [3, 6]
    assert got[2].values.tolist() == [9.0, 1.0, 5.0, 6.0] and got[2].dense_shape.tolist() == [6]
    assert got[3].indices.tolist() == [[0, 3], [1, 3]] and got[3].values.tolist() == [0.5, 2.0]
    assert got[4].indices.tolist() == [[1], [2]] and got[4].dense_shape.tolist() == [3]
    assert got[5].values.tolist() == [] and got[5].dense_shape.tolist() == [1]
    with pytest.raises(ValueError, match="Only 0 and -1"):
        df.sparse.bincount(df.constant([1, 2]), axis=1)


def test_nondifferentiable_batch_function_runs_the_function_on_its_rows():
    @df.nondifferentiable_batch_function(1, 4, 100000, allowed_batch_sizes=[2, 4])
    def scale(x, y):
        return x * 2 + y

    @df.nondifferentiable_batch_function(1, 4, 100000)
    def two(x):
        return x * 2, df.reduce_sum(x, axis=1)

    x = df.constant([[1.0], [2.0], [3.0]])
    out = scale(x, df.constant([[10.0], [20.0], [30.0]]))
    doubled, sums = two(df.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert df.gradients(out, x) == [None]
    got = _run([out, doubled, sums])
    assert got[0].tolist() == [[12.0], [24.0], [36.0]]
    assert got[1].tolist() == [[2.0, 4.0], [6.0, 8.0]] and got[2].tolist() == [3.0, 7.0]
    big = df.constant([1.0, 2, 3, 4, 5, 6])
    with pytest.raises(df.errors.InvalidArgumentError, match="maximum input batch size 4"):
        _run(scale(big, big))
    with pytest.raises(ValueError, match="must increase"):
        df.nondifferentiable_batch_function(1, 4, 10, allowed_batch_sizes=[4, 2])


def test_session_handles_keep_values_between_runs():
    a = df.constant(10.0) * 2
    handle_op = df.get_session_handle(a)
    assert handle_op.op.type == "GetSessionHandle" and handle_op.dtype == df.string
    with df.Session() as sess:
        h = sess.run(handle_op)
        assert h.handle == "GetSessionHandle;0;/job:localhost/replica:0/task:0/device:CPU:0"
        assert h.eval() == 20.0
        holder, tensor = df.get_session_tensor(h.handle, df.float32)
        assert sess.run(tensor * 3, feed_dict={holder: h.handle}) == 60.0
        holder2, deleter = df.delete_session_tensor(h.handle)
        assert deleter.type == "DeleteSessionTensor"
        sess.run(deleter, feed_dict={holder2: h.handle})
        with pytest.raises(df.errors.InvalidArgumentError, match="not in the session store"):
            sess.run(tensor, feed_dict={holder: h.handle})
        ints = sess.run(df.get_session_handle(df.constant([1, 2])))
        assert ints.handle.split(";")[1] == "1"
        holder3, wrong = df.get_session_tensor(ints.handle, df.float32)
        with pytest.raises(df.errors.InternalError, match="does not match"):
            sess.run(wrong, feed_dict={holder3: ints.handle})
        ints.delete()
        with pytest.raises(df.errors.InvalidArgumentError):
            ints.eval()
    with pytest.raises(ValueError, match="not a session tensor handle"):
        df.get_session_tensor("nonsense", df.float32)


# -- FarmHash fingerprints: fingerprint, hashed crosses, vocabulary buckets ------------------------
def test_fingerprint_gives_tensorflows_bytes_per_row():
    got = _run(
        [
            df.fingerprint(df.constant(["hello", "a"])),
            df.fingerprint(df.constant([["ab", "cd"], ["x", "y"]])),
            df.fingerprint(df.constant([[1, 2], [3, 4]], df.int32)),
            df.fingerprint(df.constant([1.5])),
        ]
    )
    assert got[0].tolist() == [
        [232, 12, 56, 49, 169, 229, 139, 180],
        [227, 117, 223, 182, 101, 66, 69, 179],
    ]
    assert got[1][0].tolist() == [219, 37, 118, 251, 208, 176, 236, 56]
    assert got[2][1].tolist() == [254, 162, 60, 240, 103, 244, 53, 255]
    assert got[3].tolist() == [[64, 181, 56, 72, 223, 224, 189, 72]]
    assert got[0].dtype == np.uint8
    with pytest.raises(ValueError, match="at least rank 1"):
        df.fingerprint(df.constant(1))
    with pytest.raises(ValueError, match="Unsupported method: md5"):
        df.fingerprint(df.constant([1]), method="md5")


def test_hashed_crosses_match_tensorflows_buckets():
    sparse_a = df.SparseTensor([[0, 0], [1, 0]], ["a", "b"], [2, 1])
    bucketed = df.sparse.cross_hashed([sparse_a, df.constant([["x"], ["y"]])], num_buckets=1000)
    raw = df.sparse.cross_hashed([sparse_a, df.constant([[5], [7]], df.int64)])
    keyed = df.sparse.cross_hashed([df.constant([["a"]])], num_buckets=0, hash_key=123)
    ragged = df.ragged.cross_hashed(
        [df.ragged.constant([["a", "b"]]), df.constant([["x"]])], num_buckets=50
    )
    with df.Session() as sess:
        got = sess.run([bucketed, raw, keyed])
        assert sess.run(ragged).to_list() == [[42, 4]]
    assert got[0].values.tolist() == [892, 805] and got[0].indices.tolist() == [[0, 0], [1, 0]]
    assert got[1].values.tolist() == [1019146045564160463, 443223928722139976]
    assert got[2].values.tolist() == [6263229206288292497]


def test_static_vocabulary_table_hashes_unknown_keys_into_buckets():
    init = df.lookup.KeyValueTensorInitializer(["a", "b"], df.constant([0, 1], df.int64))
    table = df.lookup.StaticVocabularyTable(init, 3)
    assert table.name == "hash_table" and table.key_dtype == df.string
    ints = df.lookup.KeyValueTensorInitializer(
        df.constant([10, 20], df.int64), df.constant([0, 1], df.int64)
    )
    int_table = df.lookup.StaticVocabularyTable(ints, 3)
    narrow = df.lookup.StaticVocabularyTable(ints, 3, lookup_key_dtype=df.int32)
    assert narrow.key_dtype == df.int32
    with df.Session() as sess:
        sess.run(df.tables_initializer())
        got = sess.run(table.lookup(df.constant(["a", "b", "c", "d", "hello", ""])))
        assert got.tolist() == [0, 1, 3, 4, 3, 4] and sess.run(table.size()) == 5
        got = sess.run(int_table.lookup(df.constant([10, 5, 7, 123456789], df.int64)))
        assert got.tolist() == [0, 3, 3, 4]
        assert sess.run(narrow.lookup(df.constant([10, 5], df.int32))).tolist() == [0, 3]
        sparse = sess.run(table.lookup(df.SparseTensor([[0]], ["zz"], [3])))
        assert sparse.values.tolist() == [3]
    with pytest.raises(ValueError, match="must be > 0"):
        df.lookup.StaticVocabularyTable(init, 0)
    with pytest.raises(TypeError, match="value_dtype"):
        df.lookup.StaticVocabularyTable(df.lookup.KeyValueTensorInitializer(["a"], [0]), 1)
    with pytest.raises(TypeError, match="must be"):
        table.lookup(df.constant([1]))


def test_static_vocabulary_table_without_a_vocabulary_only_hashes():
    table = df.lookup.StaticVocabularyTable(None, 4)
    assert (table.name, table.key_dtype, table.resource_handle) == ("hash_bucket", df.string, None)
    assert table.initializer.name == "init/NoOp"
    assert _run([table.lookup(df.constant(["x", "y"])), table.size()])[0].tolist() == [2, 1]
    assert _run(table.size()) == 4


def test_container_separates_resources_of_one_shared_name():
    with df.container("a") as name:
        first = df.FIFOQueue(3, df.int32, shared_name="q")
        raw = df.ref_variables.variable([], df.float32, name="raw", shared_name="s")
    assert name == "a" and first.queue_ref.op.attrs["container"] == "a"
    assert raw.op.attrs["container"] == "a"
    with df.container("b"):
        second = df.FIFOQueue(3, df.int32, shared_name="q")
    outside = df.FIFOQueue(3, df.int32, shared_name="q", name="outside")
    again = df.FIFOQueue(3, df.int32, shared_name="q", name="again")
    with df.Session() as sess:
        sess.run([first.enqueue(1), outside.enqueue(5)])
        sizes = sess.run([first.size(), second.size(), outside.size(), again.size()])
    assert sizes == [1, 0, 1, 1]  # same container and shared name: the same queue


# -- CriticalSection -------------------------------------------------------------------------------
def test_critical_section_runs_its_bodies_one_run_at_a_time():
    import threading
    import time

    v = df.Variable(0.0)
    cs = df.CriticalSection(name="cs")
    assert cs.name == "cs"
    increment = cs.execute(lambda: v.assign(v.read_value() + 1.0))
    queue = df.FIFOQueue(1, df.float32)
    waiting = cs.execute(lambda: queue.dequeue() + 1.0)
    quick = cs.execute(lambda: df.constant(7.0))
    with df.Session() as sess:
        sess.run(v.initializer)

        def work():
            for _ in range(20):
                sess.run(increment)

        threads = [threading.Thread(target=work) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sess.run(v) == 60.0
        results = []
        holder = threading.Thread(target=lambda: results.append(sess.run(waiting)))
        holder.start()
        deadline = time.monotonic() + 10
        while not (sess._resources.get("cs") and sess._resources["cs"].held):
            assert time.monotonic() < deadline, "the run never took the section"
            time.sleep(0.01)
        # it waits on the queue, holding the section: another body cannot run meanwhile
        with pytest.raises(df.errors.DeadlineExceededError):
            sess.run(quick, options=df.RunOptions(timeout_in_ms=200))
        sess.run(queue.enqueue(1.0))
        holder.join(10)
        assert results == [2.0] and sess.run(quick) == 7.0


def test_critical_section_refuses_nesting_and_shared_exclusive_resources():
    cs = df.CriticalSection(name="cs")
    with pytest.raises(ValueError, match="already running"):
        cs.execute(lambda: cs.execute(lambda: df.constant(1)))
    w = df.Variable(1.0, name="w")
    other = df.CriticalSection()
    cs.execute(lambda: w.read_value() * 2)
    with pytest.raises(ValueError, match=r"would access resources: \[w\]"):
        other.execute(lambda: w.read_value() * 3)
    u = df.Variable(1.0, name="u")
    cs.execute(lambda: u.read_value(), exclusive_resource_access=False)
    shared = other.execute(lambda: u.read_value() * 3, exclusive_resource_access=False)
    with df.Session() as sess:
        sess.run(u.initializer)
        assert sess.run(shared) == 3.0
    with pytest.raises(ValueError, match="critical_section_def"):
        df.CriticalSection(critical_section_def=object())

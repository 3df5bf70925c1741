"""Behaviour of the ``data``, ``io``, ``python_io``, ``sparse`` and ``sets`` names added to
close gaps of ``known_missing.txt``.

Expected values are what TensorFlow 2.21's ``tf.compat.v1`` (graph mode) gives for the same
program; the serialized examples and the TFRecord bytes were written by TensorFlow.
"""

import numpy as np
import pytest

import dataflow as df

# tf.train.Example: a = int64 [1, -2], f = float [1.5], s = bytes [b"x", b"yz"]
EXAMPLE_AFS = bytes.fromhex(
    "0a350a0d0a0166120812060a040000c03f0a140a0161120f1a0d0a0b01feffffffffffffffff010a0e0a017312"
    "090a070a01780a02797a"
)
# tf.train.Example: a = int64 [7]
EXAMPLE_A7 = bytes.fromhex("0a0c0a0a0a016112051a030a0107")
# what tf.io.TFRecordWriter writes for the records b"hello" and b""
TFRECORD_HELLO_EMPTY = bytes.fromhex(
    "0500000000000000eab2043e68656c6c6fbb1f1c19000000000000000029039807d8ea82a2"
)


def _features():
    return {
        "a": df.io.VarLenFeature(df.int64),
        "f": df.io.FixedLenFeature([1], df.float32, default_value=[9.0]),
        "s": df.io.VarLenFeature(df.string),
    }


def test_parse_example_does_give_sparse_and_dense_features_with_defaults():
    serialized = df.placeholder(df.string, [None])
    out = df.io.parse_example(serialized, _features())
    assert out["f"].shape.as_list() == [None, 1]
    assert out["a"].indices.shape.as_list() == [None, 2]
    with df.Session() as sess:
        got = sess.run(out, {serialized: [EXAMPLE_AFS, EXAMPLE_A7]})
    np.testing.assert_array_equal(got["a"].indices, [[0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(got["a"].values, [1, -2, 7])
    np.testing.assert_array_equal(got["a"].dense_shape, [2, 2])
    np.testing.assert_array_equal(got["s"].indices, [[0, 0], [0, 1]])
    assert list(got["s"].values) == [b"x", b"yz"]
    np.testing.assert_array_equal(got["s"].dense_shape, [2, 2])
    np.testing.assert_array_equal(got["f"], np.array([[1.5], [9.0]], np.float32))
    assert got["f"].dtype == np.float32


def test_parse_single_example_does_give_rank_one_sparse_and_scalar_dense():
    out = df.parse_single_example(
        EXAMPLE_AFS, {"a": df.VarLenFeature(df.int64), "f": df.FixedLenFeature([], df.float32)}
    )
    assert out["f"].shape.as_list() == []
    with df.Session() as sess:
        got = sess.run(out)
    np.testing.assert_array_equal(got["a"].indices, [[0], [1]])
    np.testing.assert_array_equal(got["a"].values, [1, -2])
    np.testing.assert_array_equal(got["a"].dense_shape, [2])
    assert got["f"] == np.float32(1.5)


def test_parse_example_does_fail_as_tensorflow_on_missing_wrong_size_and_wrong_type():
    serialized = df.placeholder(df.string, [None])
    cases = [
        (
            {"f": df.io.FixedLenFeature([], df.float32)},
            [EXAMPLE_AFS, EXAMPLE_A7],
            "Feature: f (data type: float) is required but could not be found.",
        ),
        (
            {"f": df.io.FixedLenFeature([2], df.float32)},
            [EXAMPLE_AFS],
            "Key: f, Index: 0.  Number of float values != expected.  Values size: 1 but output "
            "shape: [2]",
        ),
        (
            {"a": df.io.FixedLenFeature([2], df.float32)},
            [EXAMPLE_AFS],
            "Key: a, Index: 0.  Data types don't match. Data type: int64 but expected type: float",
        ),
    ]
    with df.Session() as sess:
        for features, feed, message in cases:
            with pytest.raises(
                df.errors.InvalidArgumentError,
                match=message.replace(".", r"\.")
                .replace("[", r"\[")
                .replace("]", r"\]")
                .replace("(", r"\(")
                .replace(")", r"\)"),
            ):
                sess.run(df.io.parse_example(serialized, features), {serialized: feed})


def test_parse_example_does_reject_a_default_of_the_wrong_size_when_building():
    with pytest.raises(ValueError, match="default value of feature 'f'"):
        df.io.parse_example(
            ["x"], {"f": df.io.FixedLenFeature([2], df.float32, default_value=[1.0])}
        )


@pytest.mark.parametrize("compression", [None, "", "GZIP", "ZLIB"])
def test_tfrecord_writer_and_readers_do_round_trip_records(tmp_path, compression):
    path = str(tmp_path / "records")
    with df.python_io.TFRecordWriter(path, df.io.TFRecordOptions(compression)) as writer:
        writer.write(b"hello")
        writer.write("")
        writer.write(EXAMPLE_A7)
    assert list(df.io.tf_record_iterator(path, compression)) == [b"hello", b"", EXAMPLE_A7]
    record = df.data.TFRecordDataset([path], compression_type=compression)
    got = record.make_one_shot_iterator().get_next()
    with df.Session() as sess:
        assert [sess.run(got) for _ in range(3)] == [b"hello", b"", EXAMPLE_A7]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(got)


def test_tfrecord_writer_does_write_tensorflows_bytes(tmp_path):
    path = str(tmp_path / "records")
    with df.io.TFRecordWriter(path) as writer:
        writer.write(b"hello")
        writer.write(b"")
    with open(path, "rb") as f:
        assert f.read() == TFRECORD_HELLO_EMPTY


def test_tfrecord_readers_do_report_corruption_as_data_loss(tmp_path):
    path = tmp_path / "bad"
    path.write_bytes(TFRECORD_HELLO_EMPTY[:-6])
    with pytest.raises(df.errors.DataLossError):
        list(df.python_io.tf_record_iterator(str(path)))
    flipped = bytearray(TFRECORD_HELLO_EMPTY)
    flipped[13] ^= 1
    path.write_bytes(bytes(flipped))
    with pytest.raises(df.errors.DataLossError, match="CRC"):
        list(df.io.tf_record_iterator(str(path)))
    with pytest.raises(df.errors.NotFoundError):
        list(df.io.tf_record_iterator(str(tmp_path / "missing")))


def test_tfrecord_compression_names_are_tensorflows():
    options = df.io.TFRecordOptions
    assert int(df.io.TFRecordCompressionType.GZIP) == 2
    assert options.get_compression_type_string(options(1)) == "ZLIB"
    assert options.get_compression_type_string("GZIP") == "GZIP"
    assert options.get_compression_type_string(None) == ""
    with pytest.raises(ValueError):
        options.get_compression_type_string("LZ4")


def test_parse_example_of_a_tfrecord_dataset_does_batch_examples(tmp_path):
    path = str(tmp_path / "examples")
    with df.io.TFRecordWriter(path) as writer:
        writer.write(EXAMPLE_AFS)
        writer.write(EXAMPLE_A7)
    batch = df.data.TFRecordDataset(path).batch(2).make_one_shot_iterator().get_next()
    out = df.io.parse_example(
        batch, {"f": df.io.FixedLenFeature([], df.float32, default_value=0.5)}
    )
    with df.Session() as sess:
        np.testing.assert_array_equal(sess.run(out["f"]), np.array([1.5, 0.5], np.float32))


def test_write_file_and_read_file_do_round_trip_bytes_and_make_directories(tmp_path):
    path = str(tmp_path / "new" / "dir" / "x.bin")
    write = df.io.write_file(path, b"ab\x00c")
    assert write.type == "WriteFile" and not write.outputs
    with df.Session() as sess:
        sess.run(write)
        assert sess.run(df.read_file(path)) == b"ab\x00c"
        with pytest.raises(df.errors.NotFoundError, match="No such file or directory"):
            sess.run(df.io.read_file(str(tmp_path / "nope")))


def test_matching_files_does_give_the_sorted_matches_of_all_patterns(tmp_path):
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_bytes(b"")
    root = str(tmp_path)
    with df.Session() as sess:
        got = sess.run(df.io.matching_files(f"{root}/*.txt"))
        assert list(got) == [f"{root}/a.txt".encode(), f"{root}/b.txt".encode()]
        got = sess.run(df.matching_files([f"{root}/*.csv", f"{root}/a*"]))
        assert list(got) == [f"{root}/a.txt".encode(), f"{root}/c.csv".encode()]
        assert sess.run(df.io.matching_files(f"{root}/none*")).shape == (0,)


def test_base64_does_use_the_web_safe_alphabet_with_optional_padding():
    with df.Session() as sess:
        got = sess.run(df.io.encode_base64([b"hello?>", b"\xff\xfe"]))
        assert list(got) == [b"aGVsbG8_Pg", b"__4"]
        assert sess.run(df.encode_base64(b"hi", pad=True)) == b"aGk="
        assert list(sess.run(df.io.decode_base64(["aGVsbG8_Pg", "aGk="]))) == [b"hello?>", b"hi"]
        with pytest.raises(df.errors.InvalidArgumentError, match="cannot be 1 modulo 4"):
            sess.run(df.decode_base64("a"))
        for bad in ("a+b/", "ab!d", "aGk=x"):
            with pytest.raises(df.errors.InvalidArgumentError, match="Invalid character"):
                sess.run(df.io.decode_base64(bad))


def _sp():
    return df.SparseTensor([[0, 1], [1, 0], [1, 2]], [1.0, 2.0, 3.0], [2, 3])


def _triple(value):
    return (value.indices.tolist(), value.values.tolist(), value.dense_shape.tolist())


def test_sparse_ops_that_move_indices_do_give_tensorflows_values():
    sp = _sp()
    small = df.SparseTensor([[0, 0]], [9.0], [1, 3])
    cases = {
        "transpose": (df.sparse.transpose(sp), ([[0, 1], [1, 0], [2, 1]], [2.0, 1.0, 3.0], [3, 2])),
        "reshape": (
            df.sparse.reshape(sp, [3, -1]),
            ([[0, 1], [1, 1], [2, 1]], [1.0, 2.0, 3.0], [3, 2]),
        ),
        "retain": (
            df.sparse.retain(sp, [True, False, True]),
            ([[0, 1], [1, 2]], [1.0, 3.0], [2, 3]),
        ),
        "reset_shape": (
            df.sparse.reset_shape(sp),
            ([[0, 1], [1, 0], [1, 2]], [1.0, 2.0, 3.0], [2, 3]),
        ),
        "reset_shape2": (
            df.sparse_reset_shape(sp, [4, 5]),
            ([[0, 1], [1, 0], [1, 2]], [1.0, 2.0, 3.0], [4, 5]),
        ),
        "slice": (df.sparse.slice(sp, [1, 1], [5, 5]), ([[0, 1]], [3.0], [1, 2])),
        "concat": (
            df.sparse.concat(1, [sp, sp]),
            (
                [[0, 1], [0, 4], [1, 0], [1, 2], [1, 3], [1, 5]],
                [1.0, 1.0, 2.0, 3.0, 2.0, 3.0],
                [2, 6],
            ),
        ),
        "concat0": (
            df.sparse_concat(0, [sp, small]),
            ([[0, 1], [1, 0], [1, 2], [2, 0]], [1.0, 2.0, 3.0, 9.0], [3, 3]),
        ),
        "expand_dims": (
            df.sparse.expand_dims(sp, 1),
            ([[0, 0, 1], [1, 0, 0], [1, 0, 2]], [1.0, 2.0, 3.0], [2, 1, 3]),
        ),
        "expand_dims_none": (
            df.sparse.expand_dims(sp),
            ([[0, 1, 0], [1, 0, 0], [1, 2, 0]], [1.0, 2.0, 3.0], [2, 3, 1]),
        ),
        "eye": (df.sparse.eye(2, 3), ([[0, 0], [1, 1]], [1.0, 1.0], [2, 3])),
        "from_dense": (
            df.sparse.from_dense(df.constant([[0, 5, 0], [7, 0, 0]])),
            ([[0, 1], [1, 0]], [5, 7], [2, 3]),
        ),
    }
    with df.Session() as sess:
        for name, (tensor, expected) in cases.items():
            assert _triple(sess.run(tensor)) == expected, name


def test_sparse_split_and_fill_empty_rows_do_give_tensorflows_values():
    filled, empty = df.sparse.fill_empty_rows(
        df.SparseTensor([[0, 1], [2, 0]], [1.0, 2.0], [4, 3]), -1.0
    )
    pieces = df.sparse.split(sp_input=_sp(), num_split=2, axis=1)
    with df.Session() as sess:
        got_filled, got_empty = sess.run([filled, empty])
        assert _triple(got_filled) == (
            [[0, 1], [1, 0], [2, 0], [3, 0]],
            [1.0, -1.0, 2.0, -1.0],
            [4, 3],
        )
        assert got_empty.tolist() == [False, True, False, True]
        assert [_triple(p) for p in sess.run(pieces)] == [
            ([[0, 1], [1, 0]], [1.0, 2.0], [2, 2]),
            ([[1, 0]], [3.0], [2, 1]),
        ]
    with pytest.raises(ValueError, match="Keyword arguments are required"):
        df.sparse.split(_sp(), 2, 1)


def test_sparse_maximum_minimum_softmax_and_reductions_do_give_tensorflows_values():
    sp = _sp()
    other = df.SparseTensor([[0, 1], [0, 2]], [-4.0, 5.0], [2, 3])
    with df.Session() as sess:
        assert _triple(sess.run(df.sparse.maximum(sp, other))) == (
            [[0, 1], [0, 2], [1, 0], [1, 2]],
            [1.0, 5.0, 2.0, 3.0],
            [2, 3],
        )
        assert _triple(sess.run(df.sparse_minimum(sp, other))) == (
            [[0, 1], [0, 2], [1, 0], [1, 2]],
            [-4.0, 0.0, 0.0, 0.0],
            [2, 3],
        )
        soft = sess.run(df.sparse.softmax(sp))
        np.testing.assert_allclose(soft.values, [1.0, 0.26894143, 0.7310586], rtol=1e-6)
        assert sess.run(df.sparse.reduce_max(sp, 1)).tolist() == [1.0, 3.0]
        negative = df.SparseTensor([[0, 1]], [-1.0], [2, 3])
        assert sess.run(df.sparse_reduce_max(negative, 1)).tolist() == [-1.0, 0.0]
        assert sess.run(df.sparse.reduce_max(sp)) == 3.0
        assert _triple(sess.run(df.sparse.reduce_max_sparse(sp, 0))) == (
            [[0], [1], [2]],
            [2.0, 1.0, 3.0],
            [3],
        )
        assert _triple(sess.run(df.sparse.reduce_sum_sparse(sp, 1, keepdims=True))) == (
            [[0, 0], [1, 0]],
            [1.0, 5.0],
            [2, 1],
        )
        ids = df.SparseTensor([[0, 0], [0, 1], [1, 0]], df.constant([0, 3, 2], df.int64), [2, 2])
        assert sess.run(df.sparse.to_indicator(ids, 4)).tolist() == [
            [True, False, False, True],
            [False, False, True, False],
        ]
        with pytest.raises(df.errors.InvalidArgumentError, match="same ranks or shapes"):
            sess.run(df.sparse.maximum(sp, df.SparseTensor([[0, 1]], [1.0], [3, 3])))
        with pytest.raises(df.errors.InvalidArgumentError, match="6 dense values"):
            sess.run(df.sparse.reshape(sp, df.constant([4, -1], df.int64) + 0))


def test_sparse_segment_reductions_do_gather_rows_then_reduce_segments():
    data = df.constant([[1.0, 2], [3, 4], [5, 6]])
    with df.Session() as sess:
        got = sess.run(df.sparse.segment_sum(data, [0, 2, 1], [0, 0, 1]))
        assert got.tolist() == [[6.0, 8.0], [3.0, 4.0]]
        got = sess.run(df.sparse_segment_mean(data, [0, 2, 1], [0, 0, 2]))
        assert got.tolist() == [[3.0, 4.0], [0.0, 0.0], [3.0, 4.0]]
        got = sess.run(df.sparse.segment_sqrt_n(data, [0, 2, 1], [0, 0, 1], num_segments=3))
        np.testing.assert_allclose(got, [[4.2426405, 5.656854], [3.0, 4.0], [0.0, 0.0]], rtol=1e-6)
    grad = df.gradients(df.reduce_sum(df.sparse.segment_sum(data, [0, 0], [0, 1])), data)[0]
    with df.Session() as sess:
        assert df.convert_to_tensor(grad) is not None
        np.testing.assert_array_equal(
            sess.run(df.convert_to_tensor(grad)), [[2, 2], [0, 0], [0, 0]]
        )


def test_set_operations_do_give_tensorflows_sorted_sets_per_row():
    a = df.constant([[1, 2, 2, 5], [3, 0, 0, 0]], df.int64)
    b = df.constant([[2, 4, 1, 1], [3, 3, 7, 0]], df.int64)
    sparse_b = df.SparseTensor([[0, 0], [0, 1], [1, 0]], df.constant([5, 2, 9], df.int64), [2, 3])
    cases = {
        "union": (
            df.sets.union(a, b),
            (
                [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2]],
                [1, 2, 4, 5, 0, 3, 7],
                [2, 4],
            ),
        ),
        "intersection": (
            df.sets.intersection(a, b),
            ([[0, 0], [0, 1], [1, 0], [1, 1]], [1, 2, 0, 3], [2, 2]),
        ),
        "difference": (df.sets.difference(a, b), ([[0, 0]], [5], [2, 1])),
        "difference_b_a": (
            df.sets.set_difference(a, b, aminusb=False),
            ([[0, 0], [1, 0]], [4, 7], [2, 1]),
        ),
        "sparse": (df.sets.set_intersection(a, sparse_b), ([[0, 0], [0, 1]], [2, 5], [2, 2])),
        "both_sparse": (
            df.sets.set_union(sparse_b, sparse_b),
            ([[0, 0], [0, 1], [1, 0]], [2, 5, 9], [2, 2]),
        ),
        "strings": (
            df.sets.union(df.constant([["a", "b"]]), df.constant([["c", "a"]])),
            ([[0, 0], [0, 1], [0, 2]], [b"a", b"b", b"c"], [1, 3]),
        ),
        "rank3": (
            df.sets.intersection(df.ones([2, 1, 2], df.int32), df.ones([2, 1, 3], df.int32)),
            ([[0, 0, 0], [1, 0, 0]], [1, 1], [2, 1, 1]),
        ),
    }
    with df.Session() as sess:
        for name, (tensor, expected) in cases.items():
            assert _triple(sess.run(tensor)) == expected, name
        counted = df.SparseTensor(
            [[0, 0], [0, 1], [1, 0]], df.constant([1, 1, 2], df.int64), [2, 3]
        )
        assert sess.run(df.sets.size(counted)).tolist() == [1, 1]
    with pytest.raises(TypeError, match="Expected `SparseTensor`"):
        df.sets.set_size(a)
    with pytest.raises(TypeError, match="integer or string"):
        df.sets.union(df.constant([[1.0]]), df.constant([[1.0]]))
    with pytest.raises(ValueError, match="at least rank 2"):
        df.sets.union(df.constant([1, 2]), df.constant([2, 3]))


def test_decode_csv_does_give_one_typed_column_per_default():
    records = ['1,2.5,"a,b"', "3,,x", 'NA,1e3,"q""r"']
    columns = df.io.decode_csv(records, [[0], [9.0], [""]], na_value="NA")
    assert [c.dtype for c in columns] == [df.int32, df.float32, df.string]
    with df.Session() as sess:
        ints, floats, strings = sess.run(columns)
        assert ints.tolist() == [1, 3, 0] and ints.dtype == np.int32
        assert floats.tolist() == [2.5, 9.0, 1000.0]
        assert strings.tolist() == [b"a,b", b"x", b'q"r']
        selected = df.decode_csv(
            "1;2;3", [[0], df.constant([], df.int64)], field_delim=";", select_cols=[0, 2]
        )
        assert sess.run(selected) == [1, 3]
        unquoted = df.io.decode_csv(['"a",1'], [[""], [0]], use_quote_delim=False)
        assert [v.tolist() for v in sess.run(unquoted)] == [[b'"a"'], [1]]
        assert [v.tolist() for v in sess.run(df.io.decode_csv([" 1 ,2"], [[0.0], [0]]))] == [
            [1.0],
            [2],
        ]


@pytest.mark.parametrize(
    "records, defaults, message",
    [
        (["1,2"], [[0], [0], [0]], "Expect 3 fields but have 2 in record 0"),
        (["1,2,3"], [[0], [0]], "Expect 2 fields but have 3 in record 0"),
        (["1,"], [[0], "int32"], "Field 1 is required but missing in record 0!"),
        (["x,1"], [[0], [0]], "Field 0 in record 0 is not a valid int32: x"),
        (["1.5,2"], [[0], [0]], "Field 0 in record 0 is not a valid int32: 1.5"),
        (['"a"b,1'], [[""], [0]], "Quote inside a string has to be escaped by another quote"),
    ],
)
def test_decode_csv_does_fail_as_tensorflow_on_bad_records(records, defaults, message):
    defaults = [df.constant([], df.int32) if d == "int32" else d for d in defaults]
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match=message.replace(".", r"\.")):
            sess.run(df.io.decode_csv(records, defaults))


def test_fixed_length_record_dataset_does_skip_headers_and_footers(tmp_path):
    first, second = tmp_path / "a.bin", tmp_path / "b.bin"
    first.write_bytes(b"HHabcdefFF")
    second.write_bytes(b"HHxyzFF")
    records = df.data.FixedLengthRecordDataset(
        [str(first), str(second)], 3, header_bytes=2, footer_bytes=2
    )
    got = records.make_one_shot_iterator().get_next()
    with df.Session() as sess:
        assert [sess.run(got) for _ in range(3)] == [b"abc", b"def", b"xyz"]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(got)
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"HHabcdefgFF")
    got = df.data.FixedLengthRecordDataset(str(bad), 3, 2, 2).make_one_shot_iterator().get_next()
    message = (
        "Excluding the header (2 bytes) and footer (2 bytes), input file "
        f'"{bad}" has body length 7 bytes, which is not an exact multiple of the record '
        "length (3 bytes)."
    )
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError) as raised:
            sess.run(got)
    assert message in str(raised.value)


def test_experimental_transformations_do_compose_dataset_methods_through_apply():
    assert df.data.experimental.AUTOTUNE == -1
    assert df.data.experimental.INFINITE_CARDINALITY == -1
    assert df.data.experimental.UNKNOWN_CARDINALITY == -2
    numbers = df.data.Dataset.range(5)
    batched = numbers.apply(df.data.experimental.map_and_batch(lambda x: x * 10, 2))
    got = batched.make_one_shot_iterator().get_next()
    with df.Session() as sess:
        assert [sess.run(got).tolist() for _ in range(3)] == [[0, 10], [20, 30], [40]]
    dropped = numbers.apply(df.data.experimental.map_and_batch(lambda x: x, 2, drop_remainder=True))
    assert dropped.output_shapes.as_list() == [2]
    repeated = numbers.apply(df.data.experimental.shuffle_and_repeat(5, count=2, seed=1))
    got = repeated.make_one_shot_iterator().get_next()
    with df.Session() as sess:
        values = [sess.run(got) for _ in range(10)]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(got)
    assert sorted(values[:5]) == [0, 1, 2, 3, 4] and sorted(values[5:]) == [0, 1, 2, 3, 4]
    with pytest.raises(TypeError, match="must return a Dataset"):
        numbers.apply(lambda d: 3)


def test_tfrecord_reader_does_read_records_keyed_by_byte_offset(tmp_path):
    path = str(tmp_path / "records")
    with df.io.TFRecordWriter(path, "GZIP") as writer:
        for record in (b"hello", b"", b"xyz"):
            writer.write(record)
    queue = df.FIFOQueue(3, df.string)
    reader = df.TFRecordReader(options=df.io.TFRecordOptions("GZIP"))
    key, value = reader.read(queue)
    with df.Session() as sess:
        sess.run(queue.enqueue_many([[path]]))
        sess.run(queue.close())
        got = [sess.run([key, value]) for _ in range(3)]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(value)
    assert got == [
        [f"{path}:0".encode(), b"hello"],
        [f"{path}:21".encode(), b""],
        [f"{path}:37".encode(), b"xyz"],
    ]


def test_fixed_len_sequence_features_do_pad_to_the_longest_example():
    features = {
        "a": df.io.FixedLenSequenceFeature([], df.int64, allow_missing=True, default_value=-1),
        "s": df.FixedLenSequenceFeature([], df.string, allow_missing=True),
        "f": df.io.FixedLenSequenceFeature([], df.float32, allow_missing=True),
    }
    out = df.io.parse_example([EXAMPLE_AFS, EXAMPLE_A7, EXAMPLE_A7], features)
    assert out["a"].shape.as_list() == [3, None]
    single = df.io.parse_single_example(
        EXAMPLE_AFS, {"a": df.io.FixedLenSequenceFeature([2], df.int64, allow_missing=True)}
    )
    assert single["a"].shape.as_list() == [None, 2]
    with df.Session() as sess:
        got = sess.run(out)
        assert got["a"].tolist() == [[1, -2], [7, -1], [7, -1]]
        assert got["s"].tolist() == [[b"x", b"yz"], [b"", b""], [b"", b""]]
        assert got["f"].tolist() == [[1.5], [0.0], [0.0]]
        assert sess.run(single)["a"].tolist() == [[1, -2]]
        uneven = df.io.parse_single_example(
            EXAMPLE_AFS, {"a": df.io.FixedLenSequenceFeature([3], df.int64, allow_missing=True)}
        )
        with pytest.raises(
            df.errors.InvalidArgumentError,
            match="key a: number of elements should be divisible by 3, found 2 instead",
        ):
            sess.run(uneven)
    with pytest.raises(ValueError, match="requires allow_missing to be True"):
        df.io.parse_example([EXAMPLE_AFS], {"a": df.io.FixedLenSequenceFeature([], df.int64)})


def test_match_filenames_once_is_a_local_variable_of_the_matches(tmp_path):
    for name in ("b.txt", "a.txt"):
        (tmp_path / name).write_bytes(b"")
    names = df.io.match_filenames_once(str(tmp_path / "*.txt"))
    assert names.name == "matching_filenames:0"
    assert df.get_collection(df.GraphKeys.LOCAL_VARIABLES) == [names]
    assert df.trainable_variables() == []
    with df.Session() as sess:
        sess.run(df.local_variables_initializer())
        assert sess.run(names).tolist() == [str(tmp_path / n).encode() for n in ("a.txt", "b.txt")]


def test_counter_and_enumerate_dataset_do_count_elements():
    counter = df.data.experimental.Counter(3, 2, df.int32)
    assert counter.output_types == df.int32
    got = counter.make_one_shot_iterator().get_next()
    letters = df.data.Dataset.from_tensor_slices(np.array([b"a", b"b"], dtype=object))
    pairs = letters.apply(df.data.experimental.enumerate_dataset(start=5))
    pair = pairs.make_one_shot_iterator().get_next()
    with df.Session() as sess:
        assert [sess.run(got) for _ in range(3)] == [3, 5, 7]
        assert [tuple(sess.run(pair)) for _ in range(2)] == [(5, b"a"), (6, b"b")]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(pair)
    assert df.data.get_output_classes(letters) is df.Tensor


def test_unbatch_and_take_while_do_split_and_stop_elements():
    batches = df.data.Dataset.range(5).batch(2)
    flat = batches.apply(df.data.experimental.unbatch())
    assert flat.output_shapes.as_list() == []
    got = flat.make_one_shot_iterator().get_next()
    pairs = df.data.Dataset.from_tensor_slices(
        (np.arange(6).reshape(3, 2), np.array([[1, 2], [3, 4], [5, 6]]))
    ).unbatch()
    pair = pairs.make_one_shot_iterator().get_next()
    head = df.data.Dataset.range(10).apply(df.data.experimental.take_while(lambda x: x < 3))
    first = head.make_one_shot_iterator().get_next()
    with df.Session() as sess:
        assert [sess.run(got) for _ in range(5)] == [0, 1, 2, 3, 4]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(got)
        assert [tuple(sess.run(pair)) for _ in range(2)] == [(0, 1), (1, 2)]
        assert [sess.run(first) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(df.errors.OutOfRangeError):
            sess.run(first)
    with pytest.raises(ValueError, match="scalar components"):
        df.data.Dataset.range(3).unbatch()
    with pytest.raises(ValueError, match="scalar boolean"):
        df.data.Dataset.range(3).take_while(lambda x: x)


# serialize_tensor's bytes as TensorFlow writes them
TENSOR_PROTOS = [
    (np.array([[1.5, 2.0]], np.float32), "08011208120208011202080222080000c03f00000040"),
    (np.int64(7), "0809120022080700000000000000"),
    (np.array([b"ab", b""], dtype=object), "0807120412020802420261624200"),
    (np.array([True, False]), "080a12041202080222020100"),
    (np.zeros((0, 3), np.int32), "08031206120012020803"),
    (np.array([1, 2], np.uint8), "080412041202080222020102"),
    (np.float16(1.0), "081312002202003c"),
]


@pytest.mark.parametrize("value, proto", TENSOR_PROTOS)
def test_serialize_tensor_does_write_tensorflows_tensor_proto(value, proto):
    tensor = df.constant(value)
    with df.Session() as sess:
        assert sess.run(df.io.serialize_tensor(tensor)).hex() == proto
        parsed = sess.run(df.parse_tensor(bytes.fromhex(proto), tensor.dtype))
    assert parsed.shape == np.shape(value) and parsed.tolist() == np.asarray(value).tolist()


def test_parse_tensor_does_reject_a_wrong_type_or_bad_bytes():
    serialized = df.serialize_tensor(df.constant([[1.5, 2.0]]))
    with df.Session() as sess:
        with pytest.raises(
            df.errors.InvalidArgumentError,
            match=r"Type mismatch between parsed tensor \(float\) and dtype \(int32\)",
        ):
            sess.run(df.io.parse_tensor(serialized, df.int32))
        with pytest.raises(df.errors.InvalidArgumentError, match="Could not parse `serialized`"):
            sess.run(df.io.parse_tensor(b"\xff\xff", df.int32))


def test_serialized_sparse_tensors_are_tensorflows_bytes_and_read_back():
    sp = df.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 3])
    many = df.io.serialize_many_sparse(sp)
    assert many.shape.as_list() == [None, 3]
    back = df.io.deserialize_many_sparse(many, df.float32)
    with df.Session() as sess:
        assert [v.hex() for v in sess.run(df.io.serialize_sparse(sp))] == [
            "08091208120208021202080222200000000000000000010000000000000001000000000000000000000000000000",
            "080112041202080222080000803f00000040",
            "0809120412020802221002000000000000000300000000000000",
        ]
        assert [[v.hex() for v in row] for row in sess.run(many)] == [
            ["08091208120208011202080122080100000000000000", "080112041202080122040000803f",
             "080912041202080122080300000000000000"],
            ["08091208120208011202080122080000000000000000", "0801120412020801220400000040",
             "080912041202080122080300000000000000"],
        ]  # fmt: skip
        assert _triple(sess.run(back)) == ([[0, 1], [1, 0]], [1.0, 2.0], [2, 3])
    with pytest.raises(TypeError, match="out_type must be string"):
        df.io.serialize_sparse(sp, out_type=df.int32)


def test_sparse_mask_does_drop_the_masked_slices():
    values = df.constant([[1.0, 2], [3, 4], [5, 6]])
    slices = df.IndexedSlices(values, df.constant([12, 26, 37]), df.constant([40, 2]))
    masked = df.sparse.mask(slices, [12, 45])
    assert isinstance(masked, df.IndexedSlices)
    with df.Session() as sess:
        got = sess.run(masked)
    assert got.values.tolist() == [[3.0, 4.0], [5.0, 6.0]]
    assert got.indices.tolist() == [26, 37]
    assert got.dense_shape.tolist() == [40, 2]


def test_sparse_merge_does_put_values_at_their_ids():
    ids = df.SparseTensor([[0, 0], [0, 1], [1, 0]], df.constant([4, 1, 3], df.int64), [2, 2])
    values = df.SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, -1.0, 2.0], [2, 2])
    more_ids = df.SparseTensor([[0, 0], [0, 1], [1, 0]], df.constant([0, 2, 1], df.int64), [2, 2])
    with df.Session() as sess:
        assert _triple(sess.run(df.sparse.merge(ids, values, 5))) == (
            [[0, 1], [0, 4], [1, 3]],
            [-1.0, 0.5, 2.0],
            [2, 5],
        )
        assert _triple(sess.run(df.sparse_merge(ids, values, 5, already_sorted=True))) == (
            [[0, 4], [0, 1], [1, 3]],
            [0.5, -1.0, 2.0],
            [2, 5],
        )
        assert _triple(sess.run(df.sparse.merge([ids, more_ids], values, [5, 3]))) == (
            [[0, 1, 2], [0, 4, 0], [1, 3, 1]],
            [-1.0, 0.5, 2.0],
            [2, 5, 3],
        )

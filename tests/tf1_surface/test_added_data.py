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

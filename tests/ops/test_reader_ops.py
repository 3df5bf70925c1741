"""TF1's readers: records of the files whose names a queue holds, with TensorFlow's keys.

Expected keys and values are what TensorFlow 2.21's ``tf.compat.v1`` readers give for the
same files.
"""

import gzip

import numpy as np
import pytest

import dataflow as df


def _filename_queue(paths):
    queue = df.FIFOQueue(10, df.string, shapes=[[]])
    fill = queue.enqueue_many([[str(p) for p in paths]])
    with df.control_dependencies([fill]):
        return queue, [queue.close()]


def test_text_line_reader_reads_lines_file_after_file_with_tensorflows_keys(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"header\n1,2\r\n3,4\n")
    (tmp_path / "b.csv").write_bytes(b"header\n5,6")
    queue, fill = _filename_queue([tmp_path / "a.csv", tmp_path / "b.csv"])
    reader = df.TextLineReader(skip_header_lines=1)
    key, value = reader.read(queue)
    produced, completed = reader.num_records_produced(), reader.num_work_units_completed()
    with df.Session() as sess:
        sess.run(fill)
        records = [sess.run([key, value]) for _ in range(3)]
        with pytest.raises(df.errors.OutOfRangeError, match="is closed"):
            sess.run(key)
        assert sess.run([produced, completed]) == [3, 2]
    # TF: (b'.../a.csv:2', b'1,2'), (b'.../a.csv:3', b'3,4'), (b'.../b.csv:2', b'5,6')
    assert records == [
        [f"{tmp_path}/a.csv:2".encode(), b"1,2"],
        [f"{tmp_path}/a.csv:3".encode(), b"3,4"],
        [f"{tmp_path}/b.csv:2".encode(), b"5,6"],
    ]


def test_fixed_length_record_reader_reads_records_between_header_and_footer(tmp_path):
    # the CIFAR-10 binary layout: a label byte and the pixels, record after record
    (tmp_path / "data.bin").write_bytes(b"HH" + bytes(range(9)) + b"F")
    (tmp_path / "data.gz").write_bytes(gzip.compress(bytes([7, 7, 7])))
    queue, fill = _filename_queue([tmp_path / "data.bin"])
    reader = df.FixedLengthRecordReader(3, header_bytes=2, footer_bytes=1)
    key, value = reader.read(queue)
    pixels = df.decode_raw(value, df.uint8)
    zipped_queue, zipped_fill = _filename_queue([tmp_path / "data.gz"])
    zipped = df.FixedLengthRecordReader(record_bytes=3, encoding="GZIP").read(zipped_queue)
    with df.Session() as sess:
        sess.run(fill + zipped_fill)
        got = [sess.run([key, pixels]) for _ in range(3)]
        assert sess.run(zipped[1]) == bytes([7, 7, 7])
    assert [k for k, _ in got] == [f"{tmp_path}/data.bin:{i}".encode() for i in range(3)]
    np.testing.assert_array_equal([p for _, p in got], [[0, 1, 2], [3, 4, 5], [6, 7, 8]])


def test_whole_file_reader_reads_a_file_as_one_record_and_reset_starts_over(tmp_path):
    (tmp_path / "one.txt").write_bytes(b"all of it\n")
    queue = df.FIFOQueue(10, df.string, shapes=[[]])
    fill = queue.enqueue_many([[str(tmp_path / "one.txt")] * 2])
    reader = df.WholeFileReader()
    key, value = reader.read(queue)
    produced = reader.num_records_produced()
    with df.Session() as sess:
        sess.run(fill)
        assert sess.run([key, value]) == [str(tmp_path / "one.txt").encode(), b"all of it\n"]
        assert sess.run(produced) == 1
        sess.run(reader.reset())
        assert sess.run(produced) == 0
        assert sess.run(value) == b"all of it\n"


def test_read_up_to_stops_at_a_files_end_and_a_missing_file_is_not_found(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"1\n2\n3\n")
    (tmp_path / "b.txt").write_bytes(b"4\n")
    queue, fill = _filename_queue([tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "no.txt"])
    keys, values = df.TextLineReader().read_up_to(queue, 2)
    assert keys.shape.as_list() == [None] and values.dtype == df.string
    with df.Session() as sess:
        sess.run(fill)
        # TF: [b'1' b'2'], [b'3'] (the end of a.txt), [b'4']
        assert [sess.run(values).tolist() for _ in range(3)] == [[b"1", b"2"], [b"3"], [b"4"]]
        with pytest.raises(df.errors.NotFoundError, match="no.txt"):
            sess.run(values)


def test_a_reader_reads_from_a_queue_only():
    with pytest.raises(TypeError, match="reads file names from a queue"):
        df.TextLineReader().read(df.constant("a.txt"))
    with pytest.raises(ValueError, match="record_bytes must be > 0"):
        df.FixedLengthRecordReader(0)


def test_a_graph_of_readers_saves_and_loads(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"1\n2\n")
    queue, fill = _filename_queue([tmp_path / "a.txt"])
    reader = df.TextLineReader()
    _, value = reader.read(queue)
    _, values = df.WholeFileReader().read_up_to(queue, 1)
    counts = [reader.num_records_produced(), reader.num_work_units_completed()]
    reset = reader.reset()
    df.io.save_graph(df.get_default_graph(), str(tmp_path / "readers.dfg"))
    loaded = df.io.load_graph(str(tmp_path / "readers.dfg"))
    types = {op.type for op in loaded.get_operations()}
    assert {"ReaderHandle", "ReaderReadV2", "ReaderReadUpToV2", "ReaderCountV2"} <= types
    assert "ReaderResetV2" in types
    with df.Session(graph=loaded) as sess:
        sess.run(fill[0].name)
        assert sess.run(value.name) == b"1"
        assert sess.run([c.name for c in counts]) == [1, 0]
        sess.run(reset.name)
        assert sess.run([c.name for c in counts]) == [0, 0]
    assert values.shape.as_list() == [None]


def test_reader_base_wraps_a_reader_handle():
    reader = df.TextLineReader(name="lines")
    same = df.ReaderBase(reader.reader_ref)
    assert same.reader_ref is reader.reader_ref and not same.supports_serialize
    with pytest.raises(TypeError, match="reader_ref must be a reader handle"):
        df.ReaderBase(df.constant(1))

"""Readers: TF1's ``TextLineReader``, ``FixedLengthRecordReader``, ``TFRecordReader`` and
``WholeFileReader``, which read records from the files whose names a queue holds
(``string_input_producer``).

A reader is a handle op (``ReaderHandle``, its kind and parameters in attributes:
``reader``, ``record_bytes``, ...) whose value,
made in the Session the first time a run needs it (`RunContext.resource`), is the reader's
state: the file it is in, where, and its counts.  ``reader.read(queue)`` (``ReaderReadV2``)
gives the next record as ``(key, value)`` strings; when the current file has no more records
it takes the next file name from ``queue`` (waiting as a dequeue waits, and raising
``OutOfRangeError`` once the queue is closed and empty), as TensorFlow's readers do.  Keys are
TensorFlow's: ``"<file>:<line>"`` (lines counted from 1), ``"<file>:<record>"`` (records from
0), or the file name for a whole file.  An ``IdentityReader`` reads no file: each string of the
queue is one record, its own key and value.
"""

from __future__ import annotations

import gzip
import zlib
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, NotFoundError
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tfrecord import TFRecordOptions, read_records

__all__ = [
    "FixedLengthRecordReader",
    "IdentityReader",
    "ReaderBase",
    "TFRecordReader",
    "TextLineReader",
    "WholeFileReader",
]


class _ReaderState:
    """The run-time state behind a reader handle."""

    def __init__(self, attrs: dict, name: str):
        self.attrs = attrs
        self.name = name
        self.records = None  # an iterator of (key, value) over the current file
        self.produced = 0
        self.completed = 0

    def reset(self) -> None:
        self.records, self.produced, self.completed = None, 0, 0

    def next_in_file(self, context, queue) -> Optional[tuple[bytes, bytes]]:
        """The next record of the current file (opening the next file named in ``queue``
        when there is none); None at the file's end, which completes it."""
        if self.records is None:
            (element,) = queue.dequeue(context, 1, False)
            filename = np.asarray(element[0]).item()
            if self.attrs["reader"] == "IdentityReader":  # the work itself is the record
                work = filename if isinstance(filename, bytes) else str(filename).encode()
                self.produced += 1
                self.completed += 1
                return work, work
            filename = filename.decode() if isinstance(filename, bytes) else str(filename)
            self.records = _RECORDS[self.attrs["reader"]](filename, self.attrs)
        record = next(self.records, None)
        if record is None:
            self.records = None
            self.completed += 1
        else:
            self.produced += 1
        return record

    def next_record(self, context, queue) -> tuple[bytes, bytes]:
        while True:
            record = self.next_in_file(context, queue)
            if record is not None:
                return record


def _file_bytes(filename: str, compression: str = "") -> bytes:
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{filename}; No such file or directory") from None
    if compression == "GZIP":
        return gzip.decompress(data)
    if compression == "ZLIB":
        return zlib.decompress(data)
    return data


def _text_lines(filename: str, attrs: dict):
    data = _file_bytes(filename)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if number <= attrs["skip_header_lines"]:
            continue
        yield f"{filename}:{number}".encode(), line[:-1] if line.endswith(b"\r") else line


def _fixed_length_records(filename: str, attrs: dict):
    data = _file_bytes(filename, attrs["encoding"])
    size, header, footer = attrs["record_bytes"], attrs["header_bytes"], attrs["footer_bytes"]
    step = attrs["hop_bytes"] or size
    end = len(data) - footer
    start, number = header, 0
    while start + size <= end:
        yield f"{filename}:{number}".encode(), data[start : start + size]
        start, number = start + step, number + 1


def _tf_records(filename: str, attrs: dict):
    offset = 0
    for record in read_records(filename, attrs["encoding"]):
        yield f"{filename}:{offset}".encode(), record
        offset += 16 + len(record)


def _whole_file(filename: str, attrs: dict):
    yield filename.encode(), _file_bytes(filename)


_RECORDS = {
    "TextLineReader": _text_lines,
    "FixedLengthRecordReader": _fixed_length_records,
    "WholeFileReader": _whole_file,
    "TFRecordReader": _tf_records,
    "IdentityReader": None,  # see `_ReaderState.next_in_file`
}


# -- ops -------------------------------------------------------------------------------------------
def _infer_handle(op):
    if op.attrs["reader"] not in _RECORDS:
        raise ValueError(f"unknown reader {op.attrs['reader']!r}")
    return [(_dtypes.resource, ())]


def _handle_kernel(attrs):
    key = attrs["shared_name"]

    def handle(context):
        return context.resource(key, lambda: _ReaderState(attrs, key))

    return handle


define_op(
    "ReaderHandle", _infer_handle, _handle_kernel, stateful=True, inline=True, wants_context=True
)


def _check_reader_and_queue(op) -> None:
    if len(op.inputs) < 2 or any(t.dtype != _dtypes.resource for t in op.inputs[:2]):
        raise TypeError("a reader op takes a reader handle and a queue handle")


def _infer_read(op):
    _check_reader_and_queue(op)
    return [(_dtypes.string, ()), (_dtypes.string, ())]


def _read_kernel(attrs):
    def read(context, reader, queue):
        key, value = reader.next_record(context, queue)
        return np.array(key, dtype=object), np.array(value, dtype=object)

    return read


define_op("ReaderReadV2", _infer_read, _read_kernel, stateful=True, inline=True, wants_context=True)


def _infer_read_up_to(op):
    _check_reader_and_queue(op)
    return [(_dtypes.string, (None,)), (_dtypes.string, (None,))]


def _read_up_to_kernel(attrs):
    def read_up_to(context, reader, queue, num_records):
        wanted = int(num_records)
        if wanted <= 0:
            raise InvalidArgumentError(None, None, f"num_records must be > 0, got {wanted}")
        keys, values = [], []
        while len(keys) < wanted:  # as TensorFlow: a file's end ends a batch that has records
            if keys and reader.records is None:
                break
            record = reader.next_in_file(context, queue)
            if record is None:
                if keys:
                    break
                continue
            keys.append(record[0])
            values.append(record[1])
        return np.array(keys, dtype=object), np.array(values, dtype=object)

    return read_up_to


define_op(
    "ReaderReadUpToV2",
    _infer_read_up_to,
    _read_up_to_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)


def _infer_count(op):
    return [(_dtypes.int64, ())]


def _count_kernel(attrs):
    field = attrs["field"]

    def count(reader):
        return np.int64(getattr(reader, field))

    return count


define_op("ReaderCountV2", _infer_count, _count_kernel, stateful=True, inline=True)


def _infer_reset(op):
    return []


def _reset_kernel(attrs):
    def reset(reader):
        reader.reset()

    return reset


define_op("ReaderResetV2", _infer_reset, _reset_kernel, stateful=True, inline=True)


# -- the reader classes ----------------------------------------------------------------------------
def _reader_handle(kind: str, attrs: dict, name: str) -> Tensor:
    with name_scope(name) as scope:
        op_name = scope[:-1]
        attrs = {"reader": kind, "shared_name": op_name, **attrs}
        return apply_op("ReaderHandle", (), attrs, name=op_name + "/").outputs[0]


class ReaderBase:
    """What the readers share: the ops on a reader handle ``reader_ref`` (``tf.ReaderBase``).
    No reader here serializes its state (``supports_serialize``)."""

    def __init__(self, reader_ref: Tensor, supports_serialize: bool = False):
        if not isinstance(reader_ref, Tensor) or reader_ref.op.type != "ReaderHandle":
            raise TypeError(f"reader_ref must be a reader handle, got {reader_ref!r}")
        if supports_serialize:
            raise ValueError("no reader here serializes its state (supports_serialize=False)")
        self._reader_ref = reader_ref

    @property
    def reader_ref(self) -> Tensor:
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        return False

    def read(self, queue, name: Optional[str] = None):
        """The next record of the files named in ``queue``: ``(key, value)`` string tensors."""
        key, value = apply_op(
            "ReaderReadV2", (self._reader_ref, _queue_ref(queue)), {}, name or "ReaderReadV2"
        ).outputs
        return key, value

    def read_up_to(self, queue, num_records, name: Optional[str] = None):
        """Up to ``num_records`` records of one file: ``(keys, values)`` string vectors."""
        count = convert_to_tensor(num_records, dtype=_dtypes.int64, name="num_records")
        key, value = apply_op(
            "ReaderReadUpToV2",
            (self._reader_ref, _queue_ref(queue), count),
            {},
            name or "ReaderReadUpToV2",
        ).outputs
        return key, value

    def num_records_produced(self, name: Optional[str] = None) -> Tensor:
        return apply_op(
            "ReaderCountV2", (self._reader_ref,), {"field": "produced"}, name or "ReaderNumRecords"
        ).outputs[0]

    def num_work_units_completed(self, name: Optional[str] = None) -> Tensor:
        return apply_op(
            "ReaderCountV2", (self._reader_ref,), {"field": "completed"}, name or "ReaderNumWork"
        ).outputs[0]

    def reset(self, name: Optional[str] = None):
        """Starts over: no current file, counts at 0."""
        return apply_op("ReaderResetV2", (self._reader_ref,), {}, name or "ReaderResetV2")


def _queue_ref(queue) -> Tensor:
    ref = getattr(queue, "queue_ref", queue)
    if not isinstance(ref, Tensor) or ref.dtype != _dtypes.resource:
        raise TypeError(f"a reader reads file names from a queue, got {queue!r}")
    return ref


class TextLineReader(ReaderBase):
    """Records are the lines of each file, without their ``"\\n"``/``"\\r\\n"``; the first
    ``skip_header_lines`` of each file are skipped."""

    def __init__(self, skip_header_lines: Optional[int] = None, name: Optional[str] = None):
        attrs = {"skip_header_lines": int(skip_header_lines or 0)}
        super().__init__(_reader_handle("TextLineReader", attrs, name or "TextLineReader"))


class FixedLengthRecordReader(ReaderBase):
    """Records are ``record_bytes`` long, after ``header_bytes`` and before ``footer_bytes``
    of each file, one every ``hop_bytes`` (``record_bytes`` when None or 0); ``encoding``
    ``"GZIP"`` or ``"ZLIB"`` for compressed files."""

    def __init__(
        self,
        record_bytes: int,
        header_bytes: Optional[int] = None,
        footer_bytes: Optional[int] = None,
        hop_bytes: Optional[int] = None,
        name: Optional[str] = None,
        encoding: Optional[str] = None,
    ):
        if int(record_bytes) <= 0:
            raise ValueError(f"record_bytes must be > 0, got {record_bytes}")
        if encoding not in (None, "", "GZIP", "ZLIB"):
            raise ValueError(f"encoding must be GZIP, ZLIB or None, got {encoding!r}")
        attrs = {
            "record_bytes": int(record_bytes),
            "header_bytes": int(header_bytes or 0),
            "footer_bytes": int(footer_bytes or 0),
            "hop_bytes": int(hop_bytes or 0),
            "encoding": encoding or "",
        }
        kind = "FixedLengthRecordReader"
        super().__init__(_reader_handle(kind, attrs, name or kind))


class TFRecordReader(ReaderBase):
    """Records are those of TFRecord files (compressed as ``options`` says: a
    `TFRecordOptions`, a `TFRecordCompressionType` or its name); the key is
    ``"<file>:<offset>"``, the record's byte offset in the file."""

    def __init__(self, name: Optional[str] = None, options=None):
        attrs = {"encoding": TFRecordOptions.get_compression_type_string(options)}
        super().__init__(_reader_handle("TFRecordReader", attrs, name or "TFRecordReader"))


class IdentityReader(ReaderBase):
    """One record per work item of the queue (a string): the key and the value are the work
    itself."""

    def __init__(self, name: Optional[str] = None):
        super().__init__(_reader_handle("IdentityReader", {}, name or "IdentityReader"))


class WholeFileReader(ReaderBase):
    """One record per file: the key is its name and the value its contents."""

    def __init__(self, name: Optional[str] = None):
        super().__init__(_reader_handle("WholeFileReader", {}, name or "WholeFileReader"))


from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in ("ReaderHandle", "ReaderReadV2", "ReaderReadUpToV2", "ReaderCountV2", "ReaderResetV2"):
    NotDifferentiable(_type)

"""TF1's datasets of files: lines of text (``TextLineDataset``), TFRecord records
(``TFRecordDataset``) and fixed-length records (``FixedLengthRecordDataset``), each a `Dataset`
whose first stage reads the files."""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .dataset_ops import Dataset, _int64
from .pipeline import (
    _Stage,
)


class TextLineDataset(Dataset):
    """The lines of the text files ``filenames`` (a string or a vector of them), one string
    element per line without its ``"\\n"``/``"\\r\\n"``, file after file;
    ``compression_type`` is ``""`` (or None), ``"GZIP"`` or ``"ZLIB"``.  ``buffer_size`` and
    ``num_parallel_reads`` tune TensorFlow's reading and change no element."""

    def __init__(
        self,
        filenames,
        compression_type=None,
        buffer_size=None,
        num_parallel_reads=None,
        name: Optional[str] = None,
    ):
        with name_scope(name or "TextLineDataset"):
            files = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
            compression = convert_to_tensor(
                compression_type or "", dtype=_dtypes.string, name="compression_type"
            )
        if files.shape.ndims not in (None, 0, 1):
            raise ValueError(f"filenames must be a string or a vector of them, got {files.shape}")
        stage = _Stage("text_lines", [files, compression])
        super().__init__(stage, 0, [_dtypes.string], [TensorShape([])])


class TFRecordDataset(Dataset):
    """The records of the TFRecord files ``filenames`` (a string or a vector of them), one
    string element per record, file after file; ``compression_type`` is ``""`` (or None),
    ``"GZIP"`` or ``"ZLIB"``.  A corrupted record fails ``get_next`` with `DataLossError`.
    ``buffer_size`` and ``num_parallel_reads`` tune TensorFlow's reading and change no
    element."""

    def __init__(
        self,
        filenames,
        compression_type=None,
        buffer_size=None,
        num_parallel_reads=None,
        name: Optional[str] = None,
    ):
        with name_scope(name or "TFRecordDataset"):
            files = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
            compression = convert_to_tensor(
                compression_type or "", dtype=_dtypes.string, name="compression_type"
            )
        if files.shape.ndims not in (None, 0, 1):
            raise ValueError(f"filenames must be a string or a vector of them, got {files.shape}")
        stage = _Stage("tf_records", [files, compression])
        super().__init__(stage, 0, [_dtypes.string], [TensorShape([])])


class FixedLengthRecordDataset(Dataset):
    """The records of ``record_bytes`` bytes of the files ``filenames`` (a string or a vector
    of them), after each file's ``header_bytes`` and before its ``footer_bytes``, one string
    element per record; a file whose body is not a whole number of records fails with
    `InvalidArgumentError`.  ``compression_type`` is ``""`` (or None), ``"GZIP"`` or
    ``"ZLIB"``; ``buffer_size`` and ``num_parallel_reads`` change no element."""

    def __init__(
        self,
        filenames,
        record_bytes,
        header_bytes=None,
        footer_bytes=None,
        buffer_size=None,
        compression_type=None,
        num_parallel_reads=None,
        name: Optional[str] = None,
    ):
        with name_scope(name or "FixedLengthRecordDataset"):
            files = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
            sizes = [
                _int64(value, what)
                for value, what in (
                    (record_bytes, "record_bytes"),
                    (header_bytes or 0, "header_bytes"),
                    (footer_bytes or 0, "footer_bytes"),
                )
            ]
            compression = convert_to_tensor(
                compression_type or "", dtype=_dtypes.string, name="compression_type"
            )
        if files.shape.ndims not in (None, 0, 1):
            raise ValueError(f"filenames must be a string or a vector of them, got {files.shape}")
        stage = _Stage("fixed_length_records", [files, *sizes, compression])
        super().__init__(stage, 0, [_dtypes.string], [TensorShape([])])


__all__ = [
    "FixedLengthRecordDataset",
    "TFRecordDataset",
    "TextLineDataset",
]

"""TFRecord files: TensorFlow's format of a sequence of byte strings (``tf.io.TFRecordWriter``,
``tf.io.tf_record_iterator``, ``tf.data.TFRecordDataset``).

Each record is its length (8 bytes, little-endian), a masked CRC-32C of the length (4 bytes),
the bytes, and a masked CRC-32C of the bytes; the whole file may be compressed with ZLIB or
GZIP.  Files written here are read by TensorFlow and the other way round.
"""

from __future__ import annotations

import enum
import gzip
import io
import struct
import zlib
from collections.abc import Iterator

from .errors import DataLossError, InvalidArgumentError, NotFoundError

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator"]


def _crc32c_table() -> list:
    table = []
    for i in range(256):
        crc = i
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC32C_TABLE = _crc32c_table()


def _masked_crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _CRC32C_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class TFRecordCompressionType(enum.IntEnum):
    """How a whole TFRecord file is compressed."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_COMPRESSION_NAMES = {
    TFRecordCompressionType.NONE: "",
    TFRecordCompressionType.ZLIB: "ZLIB",
    TFRecordCompressionType.GZIP: "GZIP",
}


class TFRecordOptions:
    """The options of a TFRecord file: its ``compression_type`` (a `TFRecordCompressionType`,
    ``"ZLIB"``, ``"GZIP"``, ``""`` or None) and zlib's tuning (``compression_level``,
    ``window_bits``, ``mem_level``, ``compression_strategy``, ``compression_method``) for
    writing; the buffer sizes and ``flush_mode`` tune TensorFlow's streams and change no
    byte of the records."""

    compression_type_map = {
        TFRecordCompressionType.ZLIB: "ZLIB",
        TFRecordCompressionType.GZIP: "GZIP",
        TFRecordCompressionType.NONE: "",
    }

    def __init__(
        self,
        compression_type=None,
        flush_mode=None,
        input_buffer_size=None,
        output_buffer_size=None,
        window_bits=None,
        compression_level=None,
        compression_method=None,
        mem_level=None,
        compression_strategy=None,
    ):
        if compression_type is not None and not isinstance(compression_type, (str, int)):
            raise ValueError(
                f"compression_type must be a string or an int, got {compression_type!r}"
            )
        self.compression_type = compression_type
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """``"ZLIB"``, ``"GZIP"`` or ``""`` for ``options`` (`TFRecordOptions`, a
        `TFRecordCompressionType`, one of those strings, or None)."""
        if options is None:
            return ""
        if isinstance(options, TFRecordOptions):
            return cls.get_compression_type_string(options.compression_type)
        if isinstance(options, str):
            if options not in ("", "ZLIB", "GZIP"):
                raise ValueError(f"Unsupported compression_type: {options!r} (ZLIB, GZIP or '')")
            return options
        try:
            return _COMPRESSION_NAMES[TFRecordCompressionType(options)]
        except ValueError:
            raise ValueError(f"Unsupported compression_type: {options!r}") from None


def _open_for_reading(path: str, compression: str):
    try:
        raw = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    if compression == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    if compression == "ZLIB":
        with raw:
            data = raw.read()
        try:
            return io.BytesIO(zlib.decompress(data)), None
        except zlib.error as e:
            raise DataLossError(None, None, f"{path}: corrupted ZLIB stream ({e})") from None
    return raw, None


def read_records(path: str, compression: str = "") -> Iterator[bytes]:
    """The records of the TFRecord file ``path``, checked against their CRCs: a truncated or
    corrupted record raises `DataLossError`, as TensorFlow's readers do."""
    f, underlying = _open_for_reading(path, compression)
    try:
        while True:
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                raise DataLossError(None, None, f"{path}: truncated record header")
            (length,) = struct.unpack("<Q", header[:8])
            (length_crc,) = struct.unpack("<I", header[8:])
            if _masked_crc32c(header[:8]) != length_crc:
                raise DataLossError(None, None, f"{path}: corrupted record length")
            body = f.read(length + 4)
            if len(body) < length + 4:
                raise DataLossError(None, None, f"{path}: truncated record of {length} bytes")
            data = body[:length]
            if _masked_crc32c(data) != struct.unpack("<I", body[length:])[0]:
                raise DataLossError(None, None, f"{path}: corrupted record (its CRC differs)")
            yield data
    except (OSError, EOFError) as e:
        raise DataLossError(None, None, f"{path}: {e}") from None
    finally:
        f.close()
        if underlying is not None:
            underlying.close()


def encode_record(data: bytes) -> bytes:
    """``data`` framed as one TFRecord: length, its CRC, the bytes, their CRC."""
    length = struct.pack("<Q", len(data))
    return b"".join(
        (
            length,
            struct.pack("<I", _masked_crc32c(length)),
            data,
            struct.pack("<I", _masked_crc32c(data)),
        )
    )


def _as_bytes(record, what: str) -> bytes:
    if isinstance(record, str):
        return record.encode()
    if isinstance(record, (bytes, bytearray, memoryview)):
        return bytes(record)
    raise TypeError(f"{what} takes bytes or a str, got {type(record).__name__}")


class TFRecordWriter:
    """Writes records (byte strings) to the TFRecord file ``path``, compressed as ``options``
    says (a `TFRecordOptions`, a `TFRecordCompressionType` or its string).  A context manager;
    the file is complete once ``close()`` has run."""

    def __init__(self, path, options=None):
        self._path = str(path)
        compression = TFRecordOptions.get_compression_type_string(options)
        opts = options if isinstance(options, TFRecordOptions) else TFRecordOptions()
        level = -1 if opts.compression_level is None else opts.compression_level
        try:
            self._file = open(self._path, "wb")  # noqa: SIM115 - closed by close()
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{self._path}; No such file or directory") from None
        self._compress = None
        if compression == "GZIP":
            self._compress = zlib.compressobj(level, zlib.DEFLATED, 16 + (opts.window_bits or 15))
        elif compression == "ZLIB":
            self._compress = zlib.compressobj(
                level,
                zlib.DEFLATED if opts.compression_method is None else opts.compression_method,
                opts.window_bits or 15,
                opts.mem_level or 8,
                opts.compression_strategy or 0,
            )
        self._closed = False

    def _check_open(self) -> None:
        if self._closed:
            raise InvalidArgumentError(None, None, f"{self._path}: the writer is closed")

    def write(self, record) -> None:
        """Appends ``record`` (bytes; a str is written as UTF-8)."""
        self._check_open()
        framed = encode_record(_as_bytes(record, "TFRecordWriter.write"))
        self._file.write(self._compress.compress(framed) if self._compress else framed)

    def flush(self) -> None:
        """Writes what is buffered to the file (a compressed stream's pending bytes too)."""
        self._check_open()
        if self._compress is not None:
            self._file.write(self._compress.flush(zlib.Z_SYNC_FLUSH))
        self._file.flush()

    def close(self) -> None:
        if self._closed:
            return
        if self._compress is not None:
            self._file.write(self._compress.flush(zlib.Z_FINISH))
        self._file.close()
        self._closed = True

    def __enter__(self) -> TFRecordWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def tf_record_iterator(path, options=None) -> Iterator[bytes]:
    """The records of the TFRecord file ``path`` (compressed as ``options`` says), one bytes
    object each; a corrupted or truncated record raises `DataLossError`."""
    return read_records(str(path), TFRecordOptions.get_compression_type_string(options))

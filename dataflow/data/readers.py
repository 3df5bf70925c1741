"""``df.data.experimental``'s file and database sources and its TFRecord writer: `CsvDataset`,
`make_csv_dataset`, `SqlDataset` (SQLite, through Python's ``sqlite3``) and `TFRecordWriter`.

Each source is a stage of the pipeline like ``TextLineDataset``: it reads when the iterator
runs.  A CSV record that cannot be parsed fails ``get_next`` and leaves the reader where it
was, so ``ignore_errors`` reads on past it, as TensorFlow does.
"""

from __future__ import annotations

import collections
import csv
import glob
import gzip
import io
import sqlite3
import zlib

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, NotFoundError, UnknownError
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops.csv_ops import _split
from .dataset_ops import (
    _STAGE_FACTORIES,
    AUTOTUNE,
    Dataset,
    _describe_pipeline,
    _Resumable,
    _run_pipeline,
    _Stage,
)

__all__ = ["CsvDataset", "SqlDataset", "TFRecordWriter", "make_csv_dataset"]

_CSV_TYPES = {
    _dtypes.int32: "int32",
    _dtypes.int64: "int64",
    _dtypes.float32: "float",
    _dtypes.float64: "double",
    _dtypes.string: "string",
}


def _compression_of(value) -> str:
    compression = np.asarray(value).item()
    compression = compression.decode() if isinstance(compression, bytes) else str(compression)
    if compression not in ("", "GZIP", "ZLIB"):
        raise InvalidArgumentError(
            None, None, f"Unsupported compression_type: {compression} (ZLIB, GZIP or '')"
        )
    return compression


def _file_bytes(path: str, compression: str) -> bytes:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    if compression == "GZIP":
        return gzip.decompress(data)
    if compression == "ZLIB":
        return zlib.decompress(data)
    return data


# -- CsvDataset ------------------------------------------------------------------------------------
def _csv_records(text: str, use_quotes: bool):
    """The records of a CSV text: its lines, except that a line break inside a quoted field
    belongs to the field."""
    record, quoted = [], False
    for line in io.StringIO(text, newline=""):
        record.append(line)
        if use_quotes:
            quoted ^= line.count('"') % 2 == 1
        if not quoted:
            yield "".join(record).rstrip("\r\n")
            record = []
    if record:
        yield "".join(record).rstrip("\r\n")


def _csv_value(field: str, column: int, dtype):
    if dtype == _dtypes.string:
        return np.array(field.encode("utf-8", "surrogateescape"), dtype=object)
    numpy_type = _dtypes.numpy_dtype(dtype).type
    try:
        value = int(field) if dtype.is_integer else float(field)
        if dtype.is_integer and not (np.iinfo(numpy_type).min <= value <= np.iinfo(numpy_type).max):
            raise ValueError
    except ValueError:
        raise InvalidArgumentError(
            None, None, f"Field {column} in record is not a valid {_CSV_TYPES[dtype]}: {field}"
        ) from None
    return numpy_type(value)


def _csv(inputs, parents, params, function):
    files = [f.decode() if isinstance(f, bytes) else str(f) for f in np.ravel(inputs[0])]
    compression = _compression_of(inputs[1])
    defaults = inputs[2:]
    types = params["types"]
    delim, use_quotes, na_value = (
        params["field_delim"],
        params["use_quote_delim"],
        params["na_value"],
    )
    select = params["select_cols"]

    def records():
        for path in files:
            text = _file_bytes(path, compression).decode("utf-8", "surrogateescape")
            lines = _csv_records(text, use_quotes)
            if params["header"]:
                next(lines, None)
            yield from lines

    def parse(record: str) -> tuple:
        try:
            fields = _split(record, delim, use_quotes)
        except ValueError as e:
            raise InvalidArgumentError(None, None, str(e)) from None
        wanted = len(defaults) if select is None else select[-1] + 1
        columns = range(len(defaults)) if select is None else select
        element = []
        for j, (column, default, dtype) in enumerate(zip(columns, defaults, types)):
            if column >= len(fields):
                break
            field = fields[column]
            if field == "" or field == na_value:
                if np.size(default) == 0:
                    raise InvalidArgumentError(
                        None, None, f"Field {j} is required but missing in record!"
                    )
                element.append(np.ravel(default)[0])
            else:
                element.append(_csv_value(field, j, dtype))
        if len(fields) < wanted or (select is None and len(fields) != wanted):
            raise InvalidArgumentError(
                None, None, f"Expect {wanted} fields but have {len(fields)} in record"
            )
        return tuple(element)

    return lambda: _Resumable(records(), parse)


_STAGE_FACTORIES["csv"] = _csv


class CsvDataset(Dataset):
    """The records of the CSV files ``filenames``, one element per record: a tuple with a
    scalar per column of ``record_defaults``.  A default is a one-value tensor (the column's
    type, and the value of an empty or ``na_value`` field) or a dtype or empty tensor (a
    required column); the types are int32, int64, float32, float64 and string.
    ``select_cols`` (or the columns not in ``exclude_cols``) picks the columns read;
    ``header`` skips each file's first line; ``use_quote_delim`` reads double-quoted fields.
    ``buffer_size`` tunes TensorFlow's reading and changes no element."""

    def __init__(
        self,
        filenames,
        record_defaults,
        compression_type=None,
        buffer_size=None,
        header=False,
        field_delim=",",
        use_quote_delim=True,
        na_value="",
        select_cols=None,
        exclude_cols=None,
    ):
        if len(field_delim) != 1:
            raise ValueError(f"field_delim should be a single character, got {field_delim!r}")
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be empty")
        with name_scope("CSVDataset"):
            files = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
            compression = convert_to_tensor(
                compression_type or "", dtype=_dtypes.string, name="compression_type"
            )
            defaults = []
            for i, d in enumerate(record_defaults):
                if isinstance(d, (_dtypes.DType, type)) and _dtypes.as_dtype(d) in _CSV_TYPES:
                    d = _dtypes.as_dtype(d)
                    d = convert_to_tensor(np.array([], _dtypes.numpy_dtype(d)), dtype=d)
                defaults.append(convert_to_tensor(d, name=f"record_defaults_{i}"))
        for d in defaults:
            if d.dtype not in _CSV_TYPES:
                raise TypeError(
                    "record_defaults may be int32, int64, float, double or string, got "
                    f"{d.dtype.name}"
                )
            if d.shape.num_elements() not in (None, 0, 1) or d.shape.ndims not in (None, 0, 1):
                raise ValueError(f"each record default must hold at most one value, got {d.shape}")
        if exclude_cols is not None:
            excluded = sorted({int(c) for c in exclude_cols})
            select_cols, column = [], 0
            while len(select_cols) < len(defaults):
                if column not in excluded:
                    select_cols.append(column)
                column += 1
        if select_cols is not None:
            select_cols = [int(c) for c in select_cols]
            if select_cols != sorted(set(select_cols)) or (select_cols and select_cols[0] < 0):
                raise ValueError("select_cols is not strictly increasing or has a negative column")
            if len(select_cols) != len(defaults):
                raise ValueError("Length of select_cols and record_defaults do not match.")
        params = {
            "types": [d.dtype for d in defaults],
            "header": bool(header),
            "field_delim": field_delim,
            "use_quote_delim": bool(use_quote_delim),
            "na_value": na_value,
            "select_cols": select_cols,
        }
        stage = _Stage("csv", [files, compression, *defaults], params)
        types = [d.dtype for d in defaults]
        super().__init__(stage, tuple(range(len(types))), types, [TensorShape([])] * len(types))


# -- make_csv_dataset ------------------------------------------------------------------------------
def _file_names(file_pattern, shuffle: bool) -> list:
    patterns = file_pattern if isinstance(file_pattern, list) else [file_pattern]
    if isinstance(file_pattern, list) and not file_pattern:
        raise ValueError("Argument `file_pattern` should not be empty.")
    names = [name for p in patterns for name in glob.glob(str(p))]
    if not names:
        raise ValueError(f"No files match `file_pattern` {file_pattern}.")
    return names if shuffle else sorted(names)


def _infer_type(value: str, na_value: str, previous):
    if value in ("", na_value):
        return previous
    order = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64, _dtypes.string]

    def fits(dtype) -> bool:
        try:
            if dtype.is_integer:
                return (
                    np.iinfo(_dtypes.numpy_dtype(dtype)).min
                    <= int(value)
                    <= np.iinfo(_dtypes.numpy_dtype(dtype)).max
                )
            if dtype.is_floating:
                with np.errstate(over="ignore"):
                    return bool(_dtypes.numpy_dtype(dtype).type(value) < np.inf)
        except (ValueError, OverflowError):
            return False
        return True

    for i, dtype in enumerate(order):
        if fits(dtype) and (previous is None or previous in order[: i + 1]):
            return dtype
    return _dtypes.string


def _csv_reader(opener, field_delim, use_quote_delim):
    quoting = csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE
    return csv.reader(opener, delimiter=field_delim, quoting=quoting)


def _constant_value(default):
    """A record default as a value each file's reader can use in its own graph: a constant
    tensor's value, or the dtype or value given."""
    if not isinstance(default, Tensor):
        return default
    if default.op.type != "Const":
        raise ValueError(
            "make_csv_dataset: a column default must be a constant (a value, a dtype or a "
            f"constant tensor), got {default.name} made by a {default.op.type} op"
        )
    value = np.asarray(default.op.attrs["value"])
    return value if value.dtype != object else np.array(value, object)


def make_csv_dataset(
    file_pattern,
    batch_size,
    column_names=None,
    column_defaults=None,
    label_name=None,
    select_columns=None,
    field_delim=",",
    use_quote_delim=True,
    na_value="",
    header=True,
    num_epochs=None,
    shuffle=True,
    shuffle_buffer_size=10000,
    shuffle_seed=None,
    prefetch_buffer_size=None,
    num_parallel_reads=None,
    sloppy=False,
    num_rows_for_inference=100,
    compression_type=None,
    ignore_errors=False,
    encoding="utf-8",
):
    """Batches of the records of the CSV files ``file_pattern`` (a glob or a list of them) as
    TensorFlow makes them: each batch a dict of column name to a vector of ``batch_size``
    values (with ``label_name``, a ``(features, label)`` pair).  Column names come from the
    header unless given; column types from ``column_defaults`` or else from the first
    ``num_rows_for_inference`` records (int32, int64, float32, float64, then string).  The
    files, then the records, are shuffled unless ``shuffle`` is False; they are read
    ``num_epochs`` times (None: without end, batches then all full)."""
    if num_parallel_reads is None:
        num_parallel_reads = 1
    filenames = _file_names(file_pattern, False)
    dataset = Dataset.from_tensor_slices(filenames)
    if shuffle:
        dataset = dataset.shuffle(len(filenames), shuffle_seed)
    compression = "" if compression_type is None else str(compression_type)
    if compression not in ("", "GZIP", "ZLIB"):
        raise ValueError(
            f"Received unknown `compression_type` {compression_type}. Expected: GZIP, ZLIB or "
            "(empty string)."
        )

    def opened(name):
        if compression == "GZIP":
            return gzip.open(name, "rt", encoding=encoding, newline="")
        if compression == "ZLIB":
            raise ValueError(f"`compression_type` {compression_type} is not supported for probing "
                             "columns.")  # fmt: skip
        return open(name, encoding=encoding, newline="")  # noqa: SIM115 - closed by the caller

    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` arguments. Neither is provided.")
        column_names = None
        for name in filenames:
            with opened(name) as f:
                try:
                    names = next(_csv_reader(f, field_delim, use_quote_delim))
                except StopIteration:
                    raise ValueError(
                        f"Failed when reading the header line of {name}. Is it an empty file?"
                    ) from None
            if column_names is not None and names != column_names:
                raise ValueError(
                    "All input CSV files should have the same column names in the header row. "
                    f"File {name} has different column names."
                )
            column_names = column_names or names
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        duplicates = {n for n in column_names if column_names.count(n) > 1}
        raise ValueError(
            "Either `column_names` argument or CSV header row contains duplicate column names: "
            f"{duplicates}."
        )
    if select_columns is not None:
        indices = {n: i for i, n in enumerate(column_names)}
        chosen = []
        for v in select_columns:
            if isinstance(v, int):
                if not 0 <= v < len(column_names):
                    raise ValueError(
                        f"Column index {v} specified in `select_columns` should be > 0  and <= "
                        f"{len(column_names)}, which is the number of columns."
                    )
                chosen.append(v)
            elif v not in indices:
                raise ValueError(
                    f"Column {v} specified in `select_columns` must be of one of the columns: "
                    f"{indices.keys()}."
                )
            else:
                chosen.append(indices[v])
        if len(set(chosen)) != len(chosen):
            raise ValueError(
                "The `select_columns` argument contains duplicate columns: "
                f"{ {c for c in chosen if chosen.count(c) > 1} }."
            )
        select_columns = sorted(chosen)
    if column_defaults is not None:
        column_defaults = [_constant_value(d) for d in column_defaults]  # dtypes: required
    else:
        columns = select_columns if select_columns is not None else range(len(column_names))
        inferred = [None] * len(columns)
        count = 0
        for name in filenames:
            with opened(name) as f:
                reader = _csv_reader(f, field_delim, use_quote_delim)
                row_number = 1
                if header:
                    next(reader, None)
                    row_number += 1
                for row in reader:
                    if num_rows_for_inference is not None and count >= num_rows_for_inference:
                        break
                    if len(row) != len(column_names):
                        raise ValueError(
                            f"Problem inferring types: CSV row {row_number} has {len(row)} "
                            f"number of fields. Expected: {len(column_names)}."
                        )
                    row_number += 1
                    count += 1
                    for j, c in enumerate(columns):
                        inferred[j] = _infer_type(row[c], na_value, inferred[j])
        column_defaults = [
            np.array([b""], object)
            if t in (None, _dtypes.string)
            else np.zeros(1, _dtypes.numpy_dtype(t))
            for t in inferred
        ]
    if select_columns is not None and len(column_defaults) != len(select_columns):
        raise ValueError(
            "If specified, `column_defaults` and `select_columns` must have the same length: "
            f"`column_defaults` has length {len(column_defaults)}, `select_columns` has length "
            f"{len(select_columns)}."
        )
    if select_columns is not None and len(column_names) > len(select_columns):
        column_names = [column_names[i] for i in select_columns]
    if label_name is not None and label_name not in column_names:
        raise ValueError(
            f"`label_name` provided must be one of the columns: {column_names}. Received: "
            f"{label_name}."
        )

    def file_records(filename):
        records = CsvDataset(
            filename,
            record_defaults=column_defaults,
            field_delim=field_delim,
            use_quote_delim=use_quote_delim,
            na_value=na_value,
            select_cols=select_columns,
            header=header,
            compression_type=compression_type,
        )
        return records.ignore_errors() if ignore_errors else records

    def features_of(*columns):
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            label = features.pop(label_name)
            return features, label
        return features

    cycle = AUTOTUNE if num_parallel_reads == AUTOTUNE else num_parallel_reads
    dataset = dataset.interleave(file_records, cycle_length=cycle, block_length=1)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=num_epochs is None)
    return dataset.map(features_of).prefetch(prefetch_buffer_size)


# -- SqlDataset ------------------------------------------------------------------------------------
_SQL_TYPES = (
    _dtypes.string,
    _dtypes.int8,
    _dtypes.int16,
    _dtypes.int32,
    _dtypes.int64,
    _dtypes.uint8,
    _dtypes.uint16,
    _dtypes.bool,
    _dtypes.float64,
)


def _sql(inputs, parents, params, function):
    driver, source, query = (
        np.asarray(v).item().decode() if isinstance(np.asarray(v).item(), bytes) else str(v)
        for v in inputs
    )
    types = params["types"]
    if driver != "sqlite":
        raise InvalidArgumentError(
            None,
            None,
            f"The database type, {driver}, is not supported by SqlDataset. The set of supported "
            "databases is: {'sqlite'}.",
        )
    for t in types:
        if t not in _SQL_TYPES:
            raise InvalidArgumentError(
                None,
                None,
                "Each element of `output_types_` must be one of: DT_STRING, DT_INT8, DT_INT16, "
                "DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_BOOL, DT_DOUBLE ",
            )

    def convert(value, dtype):
        if dtype == _dtypes.string:
            if value is None:
                return np.array(b"", dtype=object)
            if isinstance(value, bytes):
                return np.array(value, dtype=object)
            return np.array(str(value).encode(), dtype=object)
        numpy_type = _dtypes.numpy_dtype(dtype).type
        if value is None:
            return numpy_type(0)
        if dtype == _dtypes.bool:
            return np.bool_(int(value) != 0)
        return numpy_type(value)

    def run():
        try:
            connection = sqlite3.connect(source)
        except sqlite3.Error as e:
            raise UnknownError(None, None, f"Error in opening {source}: {e}") from None
        try:
            try:
                cursor = connection.execute(query)
            except sqlite3.Error as e:
                raise UnknownError(None, None, f"Prepare() failed: {e}: {query}") from None
            width = len(cursor.description or ())
            if width != len(types):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"The number of columns in query ({width}) must match the number of "
                    f"elements in output_types ({len(types)}).",
                )
            for row in cursor:
                yield tuple(convert(v, t) for v, t in zip(row, types))
        finally:
            connection.close()

    return run


_STAGE_FACTORIES["sql"] = _sql


class SqlDataset(Dataset):
    """The rows of the result of the SQL ``query`` on the database ``data_source_name``, one
    element per row with a scalar of ``output_types`` per column (string, int8, int16, int32,
    int64, uint8, uint16, bool, float64; a NULL gives 0 or b"").  ``driver_name`` is
    ``"sqlite"``, the one database TensorFlow reads."""

    def __init__(self, driver_name, data_source_name, query, output_types):
        with name_scope("SqlDataset"):
            tensors = [
                convert_to_tensor(value, dtype=_dtypes.string, name=what)
                for value, what in (
                    (driver_name, "driver_name"),
                    (data_source_name, "data_source_name"),
                    (query, "query"),
                )
            ]
        structure = output_types
        types = [
            _dtypes.as_dtype(t)
            for t in (output_types if isinstance(output_types, tuple) else (output_types,))
        ]
        stage = _Stage("sql", tensors, {"types": types})
        if not isinstance(output_types, tuple):
            structure = 0
        super().__init__(stage, structure, types, [TensorShape([])] * len(types))


# -- TFRecordWriter --------------------------------------------------------------------------------
class TFRecordWriter:
    """Writes the elements of a dataset of strings, one record each, to the TFRecord file
    ``filename`` (``compression_type``: ``""``/None, ``"GZIP"`` or ``"ZLIB"``) when the op
    ``write(dataset)`` runs."""

    def __init__(self, filename, compression_type=None):
        with name_scope("TFRecordWriter"):
            self._filename = convert_to_tensor(filename, dtype=_dtypes.string, name="filename")
            self._compression_type = convert_to_tensor(
                compression_type or "", dtype=_dtypes.string, name="compression_type"
            )

    def write(self, dataset):
        """The op that writes every element of ``dataset`` (scalar strings) to the file."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"`dataset` must be a `tf.data.Dataset` object, got {type(dataset)}.")
        if dataset._types != [_dtypes.string] or not dataset._shapes[0].is_compatible_with([]):
            raise TypeError(
                "Invalid `dataset`. Expected a`dataset` that produces scalar `tf.string` "
                "elements, but got a dataset which produces elements with shapes "
                f"{dataset.output_shapes} and types {dataset.output_types!r}."
            )
        records, tensors = _describe_pipeline(dataset._stage)
        return apply_op(
            "DatasetToTFRecord",
            [self._filename, self._compression_type, *tensors],
            {"pipeline": records},
            name="DatasetToTFRecord",
        )


def _infer_to_tfrecord(op):
    return []


def _to_tfrecord_kernel(attrs):
    from ..framework.tfrecord import TFRecordOptions
    from ..framework.tfrecord import TFRecordWriter as _Writer

    records = attrs["pipeline"]

    def to_tfrecord(filename, compression, *arrays):
        path = np.asarray(filename).item()
        path = path.decode() if isinstance(path, bytes) else str(path)
        compression = _compression_of(compression)
        sessions: dict = {}
        try:
            with _Writer(path, TFRecordOptions(compression)) as writer:
                for (record,) in _run_pipeline(records, list(arrays), sessions):
                    writer.write(record)
        finally:
            for key, session in sessions.items():
                if not isinstance(key, tuple):
                    session.close()
        return ()

    return to_tfrecord


define_op("DatasetToTFRecord", _infer_to_tfrecord, _to_tfrecord_kernel, stateful=True, inline=True)
NotDifferentiable("DatasetToTFRecord")

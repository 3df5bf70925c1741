"""``tf.io.decode_csv``: the fields of CSV records, one tensor per column."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from .string_ops import _check_string_input

__all__ = ["decode_csv"]

_FIELD_TYPES = {
    _dtypes.int32: "int32",
    _dtypes.int64: "int64",
    _dtypes.float32: "float",
    _dtypes.float64: "double",
    _dtypes.string: "string",
}


def _split(record: str, delim: str, use_quotes: bool) -> list:
    """The fields of one record; a field in double quotes may hold the delimiter, and ``""``
    stands for one quote in it."""
    if not use_quotes:
        return record.split(delim)
    fields, pos, n = [], 0, len(record)
    while True:
        if pos < n and record[pos] == '"':
            text, pos = [], pos + 1
            while True:
                end = record.find('"', pos)
                if end < 0:
                    raise ValueError("Quoted field has to end with quote followed by delim or end")
                text.append(record[pos:end])
                if record.startswith('""', end):
                    text.append('"')
                    pos = end + 2
                    continue
                pos = end + 1
                break
            if pos < n and record[pos] != delim:
                raise ValueError("Quote inside a string has to be escaped by another quote")
            fields.append("".join(text))
        else:
            end = record.find(delim, pos)
            end = n if end < 0 else end
            fields.append(record[pos:end])
            pos = end
        if pos >= n:
            return fields
        pos += 1  # the delimiter
        if pos == n:
            fields.append("")
            return fields


def _infer_decode_csv(op):
    records = _check_string_input(op, 0, "records")
    outputs = []
    for default in op.inputs[1:]:
        if default.dtype not in _FIELD_TYPES:
            raise TypeError(
                "record_defaults may be int32, int64, float, double or string, got "
                f"{default.dtype.name}"
            )
        if default.shape.ndims not in (None, 0, 1) or (
            default.shape.ndims == 1 and default.shape.as_list()[0] not in (None, 0, 1)
        ):
            raise ValueError(
                f"each record default must hold at most one value, got {default.shape}"
            )
        outputs.append((default.dtype, records.shape))
    return outputs


def _decode_csv_kernel(attrs):
    delim, use_quotes, na_value = attrs["field_delim"], attrs["use_quote_delim"], attrs["na_value"]
    select = attrs["select_cols"]

    def decode_csv(records, *defaults):
        columns = [[] for _ in defaults]
        types = [
            _dtypes.as_dtype(d.dtype) if d.dtype != object else _dtypes.string for d in defaults
        ]
        for r, raw in enumerate(np.ravel(records)):
            text = bytes(raw).decode("utf-8", "surrogateescape")
            try:
                fields = _split(text, delim, use_quotes)
            except ValueError as e:
                raise InvalidArgumentError(None, None, f"{e}") from None
            if select is None:
                if len(fields) != len(defaults):
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"Expect {len(defaults)} fields but have {len(fields)} in record {r}",
                    )
                chosen = list(enumerate(fields))
            else:
                if len(fields) <= select[-1]:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"Expect {select[-1] + 1} fields but have {len(fields)} in record {r}",
                    )
                chosen = [(c, fields[c]) for c in select]
            for j, ((col, field), default, dtype) in enumerate(zip(chosen, defaults, types)):
                if field == "" or field == na_value:
                    if np.size(default) == 0:
                        raise InvalidArgumentError(
                            None, None, f"Field {col} is required but missing in record {r}!"
                        )
                    columns[j].append(np.ravel(default)[0])
                    continue
                if dtype == _dtypes.string:
                    columns[j].append(field.encode("utf-8", "surrogateescape"))
                    continue
                try:
                    value = int(field) if dtype.is_integer else float(field)
                    if (
                        dtype.is_integer
                        and not np.iinfo(_dtypes.numpy_dtype(dtype)).min
                        <= value
                        <= np.iinfo(_dtypes.numpy_dtype(dtype)).max
                    ):
                        raise ValueError
                except ValueError:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"Field {col} in record {r} is not a valid {_FIELD_TYPES[dtype]}: {field}",
                    ) from None
                columns[j].append(value)
        out = []
        for values, default in zip(columns, defaults):
            array = np.empty(len(values), dtype=default.dtype)
            array[:] = values
            out.append(array.reshape(np.shape(records)))
        return out[0] if len(out) == 1 else tuple(out)

    return decode_csv


define_op("DecodeCSV", _infer_decode_csv, _decode_csv_kernel)


def decode_csv(
    records,
    record_defaults,
    field_delim=",",
    use_quote_delim=True,
    name: Optional[str] = None,
    na_value="",
    select_cols=None,
):
    """The columns of the CSV ``records`` (a string tensor), one tensor of the records' shape
    per entry of ``record_defaults``: a one-value tensor gives that column's type and the value
    of an empty (or ``na_value``) field, an empty tensor makes the column required.
    ``use_quote_delim`` reads double-quoted fields (``""`` for a quote); ``select_cols`` (sorted
    column numbers) keeps only those columns."""
    if len(field_delim) != 1:
        raise ValueError(f"field_delim should be a single character, got {field_delim!r}")
    if select_cols is not None:
        select_cols = tuple(int(c) for c in select_cols)
        if list(select_cols) != sorted(set(select_cols)) or (select_cols and select_cols[0] < 0):
            raise ValueError("select_cols is not strictly increasing or has a negative column")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    with name_scope(name or "DecodeCSV"):
        records = convert_to_tensor(records, _dtypes.string, name="records")
        defaults = [
            convert_to_tensor(d, name=f"record_defaults_{i}") for i, d in enumerate(record_defaults)
        ]
        attrs = {
            "field_delim": field_delim,
            "use_quote_delim": bool(use_quote_delim),
            "na_value": na_value,
            "select_cols": select_cols,
        }
        return list(apply_op("DecodeCSV", (records, *defaults), attrs, "DecodeCSV").outputs)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("DecodeCSV")

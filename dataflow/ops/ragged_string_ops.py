"""The string ops whose results are ragged (TensorFlow's ``ragged_string_ops``): splitting strings
(``StringSplit``, ``StringSplitV2``), Unicode decoding and encoding, and n-grams."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, executing_eagerly_outside_functions
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from . import slice_ops as _slices
from . import unicode_text as _text
from .math_ops import (
    INDEX_TYPES,
    check_dtype,
)
from .string_base import (
    STRING_TYPES,
    _check_string_input,
    _string_input,
    _strings,
)


# -- StringSplit / StringSplitV2 -------------------------------------------------------------------
def _sparse_rows(rows: list) -> tuple:
    """The (indices, values, dense_shape) of a 2-D SparseTensor whose row ``i`` is
    ``rows[i]``, as the split ops return it."""
    lengths = np.array([len(row) for row in rows], dtype=np.int64)
    row_ids = np.repeat(np.arange(len(rows), dtype=np.int64), lengths)
    starts = np.cumsum(lengths) - lengths
    columns = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)
    indices = np.stack([row_ids, columns], axis=1).reshape(-1, 2)
    values = _strings(len(row_ids), [v for row in rows for v in row])
    shape = np.array([len(rows), int(lengths.max()) if len(rows) else 0], dtype=np.int64)
    return indices, values, shape


def _infer_split(op):
    x = _check_string_input(op)
    x.shape.with_rank(1)
    sep = _check_string_input(op, 1, "delimiter" if op.type == "StringSplit" else "sep")
    if not sep.shape.is_compatible_with([]):
        raise ValueError(f"{op.type}: the delimiter must be a scalar, got shape {sep.shape}")
    return [
        (_dtypes.int64, TensorShape([None, 2])),
        (_dtypes.string, TensorShape([None])),
        (_dtypes.int64, TensorShape([2])),
    ]


def _check_vector(op_type: str, x: np.ndarray, sep: np.ndarray) -> None:
    if x.ndim != 1:
        raise InvalidArgumentError(
            None, None, f"{op_type}: input must be a vector, got shape {x.shape}"
        )
    if sep.ndim != 0:
        raise InvalidArgumentError(
            None, None, f"{op_type}: sep must be a scalar, got shape {sep.shape}"
        )


def _string_split_kernel(attrs):
    skip_empty = attrs["skip_empty"]

    def split_one(value: bytes, delimiters: bytes) -> list:
        if not delimiters:
            return [value[i : i + 1] for i in range(len(value))]
        tokens, start = [], 0
        for i, byte in enumerate(value):
            if byte in delimiters:
                tokens.append(value[start:i])
                start = i + 1
        tokens.append(value[start:])
        return [t for t in tokens if t] if skip_empty else tokens

    def string_split(x, delimiter):
        _check_vector("StringSplit", x, delimiter)
        return _sparse_rows([split_one(v, delimiter[()]) for v in x])

    return string_split


def _string_split_v2_kernel(attrs):
    maxsplit = attrs["maxsplit"]

    def string_split_v2(x, sep):
        _check_vector("StringSplitV2", x, sep)
        separator = sep[()] or None  # an empty separator splits at runs of whitespace
        return _sparse_rows([v.split(separator, maxsplit) for v in x])

    return string_split_v2


define_op("StringSplit", _infer_split, _string_split_kernel)


define_op("StringSplitV2", _infer_split, _string_split_v2_kernel)


def _string_vector_or_ragged(value, name: str):
    from ..framework.ragged_tensor import RaggedTensor

    if isinstance(value, RaggedTensor):
        return value
    return _string_input(value, name)


def _split_result(indices, values, shape, result_type: str):
    from ..framework.ragged_tensor import RaggedTensor
    from ..framework.sparse_tensor import SparseTensor

    if result_type == "SparseTensor":
        return SparseTensor(indices, values, shape)
    row_ids = _slices.strided_slice(indices, [0, 0], [0, 1], shrink_axis_mask=2, end_mask=1)
    nrows = _slices.strided_slice(shape, [0], [1], shrink_axis_mask=1)
    return RaggedTensor.from_value_rowids(values, row_ids, nrows=nrows, validate=False)


def _check_result_type(result_type: str) -> None:
    if result_type not in ("SparseTensor", "RaggedTensor"):
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


def string_split(
    source,
    sep=None,
    skip_empty: bool = True,
    delimiter=None,
    result_type: str = "SparseTensor",
    name: Optional[str] = None,
):
    """Splits each string of the vector ``source`` at every byte that is in ``sep`` (a space
    by default; ``delimiter`` is its older name), into a 2-D SparseTensor (or a RaggedTensor
    with ``result_type="RaggedTensor"``), as TF1's ``tf.string_split``.  An empty ``sep``
    splits into single bytes; empty tokens are dropped unless ``skip_empty`` is False."""
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'")
    _check_result_type(result_type)
    sep = delimiter if sep is None else sep
    sep = convert_to_tensor(" " if sep is None else sep, _dtypes.string, name="delimiter")
    source = _string_input(source, "source")
    attrs = {"skip_empty": bool(skip_empty)}
    indices, values, shape = apply_op(
        "StringSplit", (source, sep), attrs, name or "StringSplit"
    ).outputs
    return _split_result(indices, values, shape, result_type)


def _split_ragged(x, sep: Tensor, maxsplit: int):
    """TensorFlow 2's ``strings.split`` of a tensor or RaggedTensor ``x`` of rank >= 1: a
    RaggedTensor with one more (ragged) dimension, row ``i`` the tokens of string ``i``."""
    from ..framework.ragged_tensor import RaggedTensor

    if isinstance(x, RaggedTensor):
        return x.with_flat_values(_split_ragged(x.flat_values, sep, maxsplit))
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"strings.split needs an input of known rank, got {x.name}")
    if rank > 1:
        return _split_ragged(RaggedTensor.from_tensor(x), sep, maxsplit)
    indices, values, shape = apply_op(
        "StringSplitV2", (x, sep), {"maxsplit": int(maxsplit)}, "StringSplitV2"
    ).outputs
    return _split_result(indices, values, shape, "RaggedTensor")


class _DefaultResultType(str):
    """The default of `split`'s ``result_type``: TF1's ``"SparseTensor"`` (as its signature
    shows), told apart from a ``"SparseTensor"`` the caller passes, since without one an eager
    program gets TensorFlow 2's form (`_use_tf2_split`)."""

    __slots__ = ()


_SPARSE_BY_DEFAULT = _DefaultResultType("SparseTensor")


def _use_tf2_split() -> bool:
    """Whether ``strings.split`` without a ``result_type`` takes TensorFlow 2's form: in a
    program that runs eagerly (and the df.functions it traces), as ``tf.strings.split``;
    TF1's ``tf.compat.v1.strings.split`` (a SparseTensor) in a graph built for a Session."""
    return executing_eagerly_outside_functions()


def split(
    input=None,  # noqa: A002 - mirrors tf.strings.split
    sep=None,
    maxsplit: int = -1,
    result_type: str = _SPARSE_BY_DEFAULT,
    source=None,
    name: Optional[str] = None,
):
    """Splits each string at ``sep`` (at runs of whitespace when None, dropping empty tokens,
    as Python's ``str.split``), at most ``maxsplit`` times (no limit when negative);
    ``source`` is the older name of ``input``.

    Without a ``result_type``, in a program that runs eagerly (and in its df.functions) this
    is TensorFlow 2's ``tf.strings.split``: a RaggedTensor with one more dimension than
    ``input`` (a RaggedTensor too), and for a scalar the 1-D tensor of its tokens.  In a graph
    built for a Session, or with a ``result_type`` given, it is ``tf.compat.v1.strings.split``
    (``"SparseTensor"`` by default): the SparseTensor of the tokens, or with
    ``result_type="RaggedTensor"`` the RaggedTensor; both take a scalar as a vector of one.
    """
    from ..framework.graph import name_scope
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops

    if input is not None and source is not None:
        raise ValueError("Cannot specify both 'input' and 'source'")
    tf2_form = result_type is _SPARSE_BY_DEFAULT and _use_tf2_split()
    _check_result_type(result_type)
    with name_scope(name or "StringSplit"):
        x = _string_vector_or_ragged(source if input is None else input, "input")
        sep = convert_to_tensor("" if sep is None else sep, _dtypes.string, name="sep")
        if not isinstance(x, RaggedTensor) and x.shape.ndims == 0:
            if tf2_form:
                return _split_ragged(array_ops.expand_dims(x, 0), sep, maxsplit).values
            x = array_ops.expand_dims(x, 0)
        if tf2_form or result_type == "RaggedTensor":
            return _split_ragged(x, sep, maxsplit)
        if not isinstance(x, RaggedTensor) and x.shape.ndims == 1:
            indices, values, shape = apply_op(
                "StringSplitV2", (x, sep), {"maxsplit": int(maxsplit)}, "StringSplitV2"
            ).outputs
            return _split_result(indices, values, shape, "SparseTensor")
        return _split_ragged(x, sep, maxsplit).to_sparse()


def bytes_split(input, name: Optional[str] = None):  # noqa: A002 - mirrors tf.strings.bytes_split
    """Each string cut into its bytes: a RaggedTensor with one more dimension (for a scalar,
    a vector of its bytes)."""
    from ..framework.graph import name_scope
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops

    x = _string_vector_or_ragged(input, "input")
    with name_scope(name or "StringsByteSplit"):
        if isinstance(x, RaggedTensor):
            return x.with_flat_values(bytes_split(x.flat_values))
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("input must have a statically-known rank.")
        if rank == 0:
            return bytes_split(array_ops.expand_dims(x, 0)).values
        if rank > 1:
            return bytes_split(RaggedTensor.from_tensor(x))
        empty = convert_to_tensor("", _dtypes.string)
        indices, values, shape = apply_op(
            "StringSplit", (x, empty), {"skip_empty": False}, "StringSplit"
        ).outputs
        return _split_result(indices, values, shape, "RaggedTensor")


def _check_errors(op_type: str, errors: str, replacement: int) -> None:
    if errors not in _text.ERRORS:
        raise ValueError(
            f"{op_type}: errors must be 'strict', 'replace' or 'ignore', got {errors!r}"
        )
    if not 0 <= replacement <= 0x10FFFF:
        raise ValueError(
            f"{op_type}: replacement_char out of unicode codepoint range: {replacement}"
        )


def _check_output_encoding(op_type: str, encoding: str) -> None:
    if encoding not in _text.ENCODINGS:
        raise ValueError(
            f"{op_type}: output_encoding must be one of UTF-8, UTF-16-BE, UTF-32-BE, got "
            f"{encoding!r}"
        )


def _infer_unicode_decode(op):
    _check_string_input(op)
    _text.decoding(op.attrs["input_encoding"])
    _check_errors(op.type, op.attrs["errors"], op.attrs["replacement_char"])
    outputs = [(_dtypes.int64, TensorShape([None])), (_dtypes.int32, TensorShape([None]))]
    if op.type == "UnicodeDecodeWithOffsets":
        outputs.append((_dtypes.int64, TensorShape([None])))
    return outputs


def _unicode_decode_kernel(with_offsets: bool):
    def build(attrs):
        code = _text.decoding(attrs["input_encoding"])
        options = (attrs["errors"], attrs["replacement_char"], attrs["replace_control_characters"])

        def unicode_decode(x):
            splits, points, starts = [0], [], []
            for value in x.reshape(-1):
                try:
                    decoded, offsets = _text.decode(bytes(value), code, *options)
                except _text.TextError as e:
                    raise InvalidArgumentError(None, None, f"UnicodeDecode: {e}") from None
                points += decoded
                starts += offsets
                splits.append(len(points))
            result = [np.array(splits, np.int64), np.array(points, np.int32)]
            if with_offsets:
                result.append(np.array(starts, np.int64))
            return tuple(result)

        return unicode_decode

    return build


define_op("UnicodeDecode", _infer_unicode_decode, _unicode_decode_kernel(False))


define_op("UnicodeDecodeWithOffsets", _infer_unicode_decode, _unicode_decode_kernel(True))


def _infer_unicode_encode(op):
    values, splits = op.inputs
    check_dtype(values.dtype, frozenset({_dtypes.int32}), "Input 'input_values' of 'UnicodeEncode'")
    check_dtype(splits.dtype, frozenset({_dtypes.int64}), "Input 'input_splits' of 'UnicodeEncode'")
    values.shape.with_rank(1)
    splits.shape.with_rank(1)
    _check_errors(op.type, op.attrs["errors"], op.attrs["replacement_char"])
    _check_output_encoding(op.type, op.attrs["output_encoding"])
    rows = splits.shape[0]
    return [(_dtypes.string, TensorShape([None if rows is None else max(rows - 1, 0)]))]


def _unicode_encode_kernel(attrs):
    options = (attrs["output_encoding"], attrs["errors"], attrs["replacement_char"])

    def unicode_encode(values, splits):
        if (
            splits.size == 0
            or splits[0] != 0
            or np.any(np.diff(splits) < 0)
            or splits[-1] != len(values)
        ):
            raise InvalidArgumentError(
                None,
                None,
                f"UnicodeEncode: input_splits {splits.tolist()} are not valid row splits",
            )
        items = []
        for start, end in zip(splits[:-1], splits[1:]):
            try:
                items.append(_text.encode(values[start:end], *options))
            except _text.TextError as e:
                raise InvalidArgumentError(None, None, f"UnicodeEncode: {e}") from None
        return _strings(len(items), items)

    return unicode_encode


define_op("UnicodeEncode", _infer_unicode_encode, _unicode_encode_kernel)


def _infer_unicode_transcode(op):
    x = _check_string_input(op)
    _text.decoding(op.attrs["input_encoding"])
    _check_errors(op.type, op.attrs["errors"], op.attrs["replacement_char"])
    _check_output_encoding(op.type, op.attrs["output_encoding"])
    return [(_dtypes.string, x.shape)]


def _unicode_transcode_kernel(attrs):
    code = _text.decoding(attrs["input_encoding"])
    errors, replacement = attrs["errors"], attrs["replacement_char"]
    controls = attrs["replace_control_characters"]

    def unicode_transcode(x):
        items = []
        for value in x.reshape(-1):
            try:
                points, _ = _text.decode(bytes(value), code, errors, replacement, controls, True)
                items.append(_text.encode(points, attrs["output_encoding"], errors, replacement))
            except _text.TextError as e:
                raise InvalidArgumentError(None, None, f"UnicodeTranscode: {e}") from None
        return _strings(x.shape, items)

    return unicode_transcode


define_op("UnicodeTranscode", _infer_unicode_transcode, _unicode_transcode_kernel)


def _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters) -> dict:
    return {
        "input_encoding": str(input_encoding),
        "errors": str(errors),
        "replacement_char": int(replacement_char),
        "replace_control_characters": bool(replace_control_characters),
    }


def _unicode_decode(x, attrs: dict, with_offsets: bool, name: str):
    """UnicodeDecode of the strings ``x`` (a Tensor or RaggedTensor of known rank): the code
    points as a RaggedTensor with one more dimension (a vector for a scalar)."""
    from ..framework.graph import name_scope
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops

    x = _string_vector_or_ragged(x, "input")
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("Rank of `input` must be statically known.")
    with name_scope(name):
        if rank > 1:
            if not isinstance(x, RaggedTensor):
                x = RaggedTensor.from_tensor(x, ragged_rank=rank - 1)
            elif x.ragged_rank < rank - 1:
                inner = RaggedTensor.from_tensor(
                    x.flat_values, ragged_rank=rank - x.ragged_rank - 1
                )
                x = x.with_flat_values(inner)
        flat = array_ops.reshape(x.flat_values if isinstance(x, RaggedTensor) else x, [-1])
        op_type = "UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode"
        outputs = apply_op(op_type, (flat,), attrs, op_type).outputs
        splits, parts = outputs[0], outputs[1:]
        if rank == 0:
            return tuple(parts) if with_offsets else parts[0]
        results = []
        for part in parts:
            rows = RaggedTensor.from_row_splits(part, splits, validate=False)
            results.append(x.with_flat_values(rows) if rank > 1 else rows)
        return tuple(results) if with_offsets else results[0]


def unicode_decode(
    input,  # noqa: A002 - mirrors tf.strings.unicode_decode
    input_encoding,
    errors: str = "replace",
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: Optional[str] = None,
):
    """The code points (int32) of each string in ``input_encoding`` (UTF-8, UTF-16 or
    UTF-32, big- or little-endian): a RaggedTensor with one more dimension than ``input``
    (a vector for a scalar).  Malformed text is an error (``errors="strict"``), skipped
    (``"ignore"``) or ``replacement_char`` (``"replace"``); ``replace_control_characters``
    replaces U+0000 to U+001F too."""
    attrs = _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters)
    return _unicode_decode(input, attrs, False, name or "UnicodeDecode")


def unicode_decode_with_offsets(
    input,  # noqa: A002
    input_encoding,
    errors: str = "replace",
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: Optional[str] = None,
):
    """`unicode_decode`, and the byte offset (int64) in its string where each character
    starts, shaped as the code points."""
    attrs = _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters)
    return _unicode_decode(input, attrs, True, name or "UnicodeDecodeWithOffsets")


def _encode_rows(values, splits, encoding, errors, replacement_char) -> Tensor:
    attrs = {
        "output_encoding": str(encoding),
        "errors": str(errors),
        "replacement_char": int(replacement_char),
    }
    return apply_op("UnicodeEncode", (values, splits), attrs, "UnicodeEncode").outputs[0]


def unicode_encode(
    input,  # noqa: A002 - mirrors tf.strings.unicode_encode
    output_encoding,
    errors: str = "replace",
    replacement_char: int = 65533,
    name: Optional[str] = None,
):
    """The strings of the code points along the last dimension of ``input`` (an int32
    Tensor or RaggedTensor of rank at least 1), in ``output_encoding`` (UTF-8, UTF-16-BE or
    UTF-32-BE); invalid code points are an error, skipped or ``replacement_char`` as
    ``errors`` says.  The result has one dimension fewer (a scalar for a vector)."""
    from ..framework.graph import name_scope
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops, math_ops

    with name_scope(name or "UnicodeEncode"):
        if not isinstance(input, RaggedTensor):
            input = convert_to_tensor(input, _dtypes.int32, name="input")  # noqa: A001
        if input.dtype != _dtypes.int32:
            input = math_ops.cast(input, _dtypes.int32)  # noqa: A001
        rank = input.shape.ndims
        if rank is None:
            raise ValueError("Rank of input_tensor must be statically known.")
        options = (output_encoding, errors, replacement_char)
        if isinstance(input, RaggedTensor):
            if input.flat_values.shape.ndims > 1:
                return input.with_flat_values(unicode_encode(input.flat_values, *options))
            if input.ragged_rank > 1:
                return input.with_values(unicode_encode(input.values, *options))
            splits = math_ops.cast(input.row_splits, _dtypes.int64)
            return _encode_rows(input.values, splits, *options)
        if rank == 0:
            raise ValueError("input_tensor's rank must be at least 1.")
        if rank == 2:
            return unicode_encode(RaggedTensor.from_tensor(input), *options)
        if rank > 2:
            shape = array_ops.shape(input)
            last = _slices.strided_slice(shape, [rank - 1], [rank])
            flat = array_ops.reshape(input, array_ops.concat([[-1], last], 0))
            encoded = unicode_encode(flat, *options)
            return array_ops.reshape(encoded, _slices.strided_slice(shape, [0], [rank - 1]))
        length = array_ops.shape(input, out_type=_dtypes.int64)
        splits = array_ops.concat([convert_to_tensor([0], _dtypes.int64), length], 0)
        return array_ops.reshape(_encode_rows(input, splits, *options), [])


def unicode_transcode(
    input,  # noqa: A002 - mirrors tf.strings.unicode_transcode
    input_encoding,
    output_encoding,
    errors: str = "replace",
    replacement_char: int = 65533,
    replace_control_characters: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """Each string from ``input_encoding`` to ``output_encoding`` (UTF-8, UTF-16-BE or
    UTF-32-BE), malformed text handled as ``errors`` says (see `unicode_decode`)."""
    attrs = _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters)
    attrs["output_encoding"] = str(output_encoding)
    x = _string_input(input, "input")
    return apply_op("UnicodeTranscode", (x,), attrs, name or "UnicodeTranscode").outputs[0]


def _unicode_split(x, input_encoding, errors, replacement_char, name, with_offsets: bool):
    """Each string cut into its characters, each encoded again in ``input_encoding``."""
    from ..framework.graph import name_scope
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops

    encoding = str(input_encoding).upper()
    _check_output_encoding("unicode_split", encoding)
    with name_scope(name):
        attrs = _decode_attrs(input_encoding, errors, replacement_char, False)
        points, starts = _unicode_decode(x, attrs, True, "UnicodeDecodeWithOffsets")
        flat = points.flat_values if isinstance(points, RaggedTensor) else points
        count = array_ops.shape(flat, out_type=_dtypes.int64)
        one_each = array_ops.range(array_ops.reshape(count, []) + 1, dtype=_dtypes.int64)
        chars = _encode_rows(flat, one_each, encoding, errors, replacement_char)
        chars = points.with_flat_values(chars) if isinstance(points, RaggedTensor) else chars
        return (chars, starts) if with_offsets else chars


def unicode_split(
    input,  # noqa: A002 - mirrors tf.strings.unicode_split
    input_encoding,
    errors: str = "replace",
    replacement_char: int = 65533,
    name: Optional[str] = None,
):
    """Each string cut into its characters (strings in ``input_encoding``): a RaggedTensor
    with one more dimension (a vector for a scalar); malformed text as in `unicode_decode`."""
    return _unicode_split(
        input, input_encoding, errors, replacement_char, name or "UnicodeSplit", False
    )


def unicode_split_with_offsets(
    input,  # noqa: A002
    input_encoding,
    errors: str = "replace",
    replacement_char: int = 65533,
    name: Optional[str] = None,
):
    """`unicode_split`, and the byte offset where each character starts."""
    return _unicode_split(
        input, input_encoding, errors, replacement_char, name or "UnicodeSplitWithOffsets", True
    )


# -- StringNGrams ----------------------------------------------------------------------------------
def _infer_string_ngrams(op):
    data, splits = op.inputs
    check_dtype(data.dtype, STRING_TYPES, "Input 'data' of 'StringNGrams'")
    check_dtype(splits.dtype, INDEX_TYPES, "Input 'data_splits' of 'StringNGrams'")
    data.shape.with_rank(1)
    splits.shape.with_rank(1)
    if any(w < 1 for w in op.attrs["ngram_widths"]):
        raise ValueError(f"ngram_widths must be positive, got {list(op.attrs['ngram_widths'])}")
    return [(_dtypes.string, TensorShape([None])), (splits.dtype, splits.shape)]


def _string_ngrams_kernel(attrs):
    separator = attrs["separator"].encode("utf-8")
    left, right = attrs["left_pad"].encode("utf-8"), attrs["right_pad"].encode("utf-8")
    widths, pad_attr = attrs["ngram_widths"], attrs["pad_width"]
    preserve = attrs["preserve_short_sequences"]

    def pad_width(width: int) -> int:
        return min(width - 1 if pad_attr < 0 else pad_attr, width - 1)

    def count(length: int, width: int) -> int:
        return max(0, length + 2 * pad_width(width) - width + 1)

    def ngrams_of(tokens: list, number: int, width: int) -> list:
        out = []
        pad = pad_width(width)
        for index in range(number):
            left_pad = max(0, pad - index)
            right_pad = max(0, pad - (number - (index + 1)))
            used = width - (left_pad + right_pad)
            start = 0 if left_pad > 0 else index - pad
            pieces = [left] * left_pad + tokens[start : start + used] + [right] * right_pad
            out.append(separator.join(pieces))
        return out

    def string_ngrams(data, splits):
        splits = splits.astype(np.int64)
        if (
            splits.size == 0
            or splits[0] != 0
            or splits[-1] != len(data)
            or np.any(np.diff(splits) < 0)
        ):
            raise InvalidArgumentError(
                None,
                None,
                f"StringNGrams: invalid data_splits {splits.tolist()} for {len(data)} strings",
            )
        items, out_splits = [], [0]
        for start, end in zip(splits[:-1], splits[1:]):
            tokens = list(data[start:end])
            row = []
            for width in widths:
                row += ngrams_of(tokens, count(len(tokens), width), width)
            if preserve and not row and tokens:
                row = ngrams_of(tokens, 1, len(tokens) + 2 * pad_attr)
            items += row
            out_splits.append(len(items))
        return _strings(len(items), items), np.array(out_splits, dtype=splits.dtype)

    return string_ngrams


define_op("StringNGrams", _infer_string_ngrams, _string_ngrams_kernel)


def ngrams(
    data,
    ngram_width,
    separator: str = " ",
    pad_values=None,
    padding_width=None,
    preserve_short_sequences: bool = False,
    name: Optional[str] = None,
):
    """The n-grams along the last axis of ``data`` (strings, a Tensor or RaggedTensor), of
    each width in ``ngram_width``, joined by ``separator``: a RaggedTensor (a Tensor when
    ``data`` is one).  ``pad_values`` (one string, or a (left, right) pair) pads each row by
    ``padding_width`` (by ``width - 1`` when None); ``preserve_short_sequences`` makes one
    n-gram of a row too short for any."""
    from ..framework.graph import name_scope
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops

    if pad_values is None:
        left_pad = right_pad = ""
    elif isinstance(pad_values, (list, tuple)):
        if len(pad_values) != 2 or not all(isinstance(v, (str, bytes)) for v in pad_values):
            raise ValueError("pad_values must be a string, tuple of strings, or None.")
        left_pad, right_pad = pad_values
    elif isinstance(pad_values, (str, bytes)):
        left_pad = right_pad = pad_values
    else:
        raise ValueError("pad_values must be a string, tuple of strings, or None.")
    left_pad, right_pad = (
        v.decode("utf-8") if isinstance(v, bytes) else v for v in (left_pad, right_pad)
    )
    if padding_width is not None and padding_width < 1:
        raise ValueError("padding_width must be greater than 0.")
    if padding_width is not None and pad_values is None:
        raise ValueError("pad_values must be provided if padding_width is set.")
    widths = tuple(
        int(w) for w in (ngram_width if isinstance(ngram_width, (list, tuple)) else [ngram_width])
    )
    with name_scope(name or "StringNGrams"):
        data = _string_vector_or_ragged(data, "data")
        dense_shape = None
        if not isinstance(data, RaggedTensor):
            rank = data.shape.ndims
            if rank is None:
                raise ValueError("Rank of data must be known.")
            if rank == 0:
                raise ValueError("Data must have rank>0")
            if rank == 1:
                splits = array_ops.concat(
                    [
                        convert_to_tensor([0], _dtypes.int64),
                        array_ops.shape(data, out_type=_dtypes.int64),
                    ],
                    0,
                )
                rows = RaggedTensor.from_row_splits(data, splits, validate=False)
                return ngrams(
                    rows, widths, separator, pad_values, padding_width, preserve_short_sequences
                ).values
            shape = array_ops.shape(data)
            dense_shape = array_ops.concat([_slices.strided_slice(shape, [0], [rank - 1]), [-1]], 0)
            data = RaggedTensor.from_tensor(data, ragged_rank=rank - 1)
        if data.ragged_rank > 1:
            inner = ngrams(
                data.values, widths, separator, pad_values, padding_width, preserve_short_sequences
            )
            output = data.with_values(inner)
        else:
            attrs = {
                "separator": separator if isinstance(separator, str) else separator.decode("utf-8"),
                "ngram_widths": widths,
                "left_pad": left_pad,
                "right_pad": right_pad,
                "pad_width": 0
                if pad_values is None
                else (-1 if padding_width is None else int(padding_width)),
                "preserve_short_sequences": bool(preserve_short_sequences),
            }
            values, splits = apply_op(
                "StringNGrams", (data.values, data.row_splits), attrs, "StringNGrams"
            ).outputs
            output = RaggedTensor.from_row_splits(values, splits, validate=False)
        if dense_shape is not None:
            return array_ops.reshape(output.flat_values, dense_shape)
        return output

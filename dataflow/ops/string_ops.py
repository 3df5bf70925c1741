"""String ops: formatting numbers as text, joining, slicing, parsing, regular expressions.

A string tensor holds a numpy object array of ``bytes`` (`dtypes.string_array`); every kernel
here returns such arrays, as TensorFlow 1.x returns ``bytes`` from a fetch.  Python ``str``
arguments are encoded as UTF-8 when they become constants.

None of these ops has a gradient, as in TensorFlow.  Differences from TensorFlow: the axes of
``reduce_join`` are attributes, known when the graph is built (as for the numeric reductions);
a rewrite string that RE2 would silently ignore (an escape other than ``\\0`` to ``\\9`` and
``\\\\``, a group the pattern lacks) is an error here.  Regular expressions are RE2's, as in
TensorFlow, from the optional ``google-re2`` package (``pip install 'dataflow[strings]'``), and
never Python's ``re``, which can backtrack for hours on a hostile pattern; a pattern given as a
Python string is checked when the graph is built.
"""

from __future__ import annotations

import functools
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, convert_to_tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_shape import TensorShape
from .math_ops import (
    BOOL_TYPES,
    INDEX_TYPES,
    NUMERIC_TYPES,
    broadcast_shape,
    check_dtype,
    reduced_shape,
    static_axis,
)

__all__ = [
    "as_string",
    "reduce_join",
    "regex_replace",
    "string_join",
    "string_to_number",
    "substr",
]

STRING_TYPES = frozenset({_dtypes.string})
_UNITS = ("BYTE", "UTF8_CHAR")


def _strings(shape, items) -> np.ndarray:
    """An object array of ``shape`` holding ``items`` (bytes) in row-major order."""
    result = np.empty(len(items), dtype=object)
    result[:] = items
    return result.reshape(shape)


def _check_string_input(op, index: int = 0, what: str = "input") -> Tensor:
    tensor = op.inputs[index]
    check_dtype(tensor.dtype, STRING_TYPES, f"Input '{what}' of '{op.type}'")
    return tensor


def _check_unit(unit: str) -> str:
    if unit not in _UNITS:
        raise ValueError(f"unit must be one of {', '.join(_UNITS)}, got {unit!r}")
    return unit


# -- AsString --------------------------------------------------------------------------------------
_FILL_FLAGS = " +-0#"


def _as_string_format(dtype: _dtypes.DType, attrs: dict) -> Optional[str]:
    """The printf format TensorFlow's AsString kernel builds for ``dtype`` (``None`` for bool,
    which is always ``true``/``false``); ``ValueError`` for options the dtype does not take."""
    precision, scientific, shortest = attrs["precision"], attrs["scientific"], attrs["shortest"]
    width, fill = attrs["width"], attrs["fill"]
    if len(fill) > 1:
        raise ValueError(f"Fill string must be one or fewer characters, got {fill!r}")
    if fill and fill not in _FILL_FLAGS:
        raise ValueError(f'Fill argument not supported: "{fill}"')
    if scientific and shortest:
        raise ValueError("Cannot select both scientific and shortest notation")
    if not dtype.is_floating:
        for option, chosen in (
            ("scientific", scientific),
            ("shortest", shortest),
            ("precision", precision > -1),
        ):
            if chosen:
                raise ValueError(f"{option} not supported for datatype {dtype.name}")
    if dtype.is_bool:
        return None
    form = "%" + fill + (str(width) if width > -1 else "")
    if dtype.is_floating:
        form += f".{precision}" if precision > -1 else ""
        return form + ("g" if shortest else "e" if scientific else "f")
    return form + ("s" if dtype.is_string else "d")


def _infer_as_string(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_TYPES | BOOL_TYPES | STRING_TYPES, f"Input 'input' of '{op.type}'")
    _as_string_format(x.dtype, op.attrs)
    return [(_dtypes.string, x.shape)]


def _as_string_kernel(attrs):
    def as_string(x):
        form = _as_string_format(_dtypes.as_dtype(x.dtype), attrs)
        flat = x.reshape(-1)
        if form is None:
            items = [b"true" if v else b"false" for v in flat]
        elif x.dtype == object:
            encoded = form.encode("ascii")
            items = [encoded % v for v in flat]
        else:
            items = [(form % v).encode("ascii") for v in flat.tolist()]
        return _strings(x.shape, items)

    return as_string


define_op("AsString", _infer_as_string, _as_string_kernel)


def as_string(
    input,  # noqa: A002 - mirrors tf.as_string
    precision: int = -1,
    scientific: bool = False,
    shortest: bool = False,
    width: int = -1,
    fill: str = "",
    name: Optional[str] = None,
) -> Tensor:
    """Each element as text: floats with ``precision`` digits (six by default), in scientific
    notation or the shortest form; padded to ``width`` with spaces, or with ``fill`` as a
    printf flag (``"0"`` pads integers with zeros).  Bools are ``true``/``false``."""
    attrs = {
        "precision": int(precision),
        "scientific": bool(scientific),
        "shortest": bool(shortest),
        "width": int(width),
        "fill": str(fill),
    }
    return apply_op("AsString", (input,), attrs, name or "AsString").outputs[0]


# -- StringJoin ------------------------------------------------------------------------------------
def _infer_string_join(op):
    shape = TensorShape([])
    for i, t in enumerate(op.inputs):
        check_dtype(t.dtype, STRING_TYPES, f"Input 'inputs[{i}]' of '{op.type}'")
        if t.shape.rank != 0:
            if not shape.is_compatible_with(t.shape) and shape.rank != 0:
                raise ValueError(
                    f"inputs must be scalars or of one shape, but got {shape} and {t.shape}"
                )
            shape = t.shape if shape.rank == 0 else shape.merge_with(t.shape)
    if not op.inputs:
        raise ValueError("string_join needs at least one input")
    return [(_dtypes.string, shape)]


def _string_join_kernel(attrs):
    separator = attrs["separator"].encode("utf-8")

    def string_join(*inputs):
        shapes = {x.shape for x in inputs if x.ndim}
        if len(shapes) > 1:
            raise InvalidArgumentError(
                None, None, f"inputs must be scalars or of one shape, got shapes {sorted(shapes)}"
            )
        columns = np.broadcast_arrays(*inputs)
        shape = columns[0].shape
        rows = zip(*(c.reshape(-1) for c in columns))
        return _strings(shape, [separator.join(row) for row in rows])

    return string_join


define_op("StringJoin", _infer_string_join, _string_join_kernel)


def string_join(inputs, separator: str = "", name: Optional[str] = None) -> Tensor:
    """Joins the strings of ``inputs`` elementwise with ``separator``; scalars are repeated to
    the shape of the others."""
    tensors = [x if isinstance(x, Tensor) else convert_to_tensor(x, _dtypes.string) for x in inputs]
    attrs = {"separator": str(separator)}
    return apply_op("StringJoin", tensors, attrs, name or "StringJoin").outputs[0]


# -- StringLength ----------------------------------------------------------------------------------
def _utf8_length(value: bytes) -> int:
    """Characters in UTF-8 ``value``: the bytes that do not continue a sequence."""
    return sum(1 for b in value if b & 0xC0 != 0x80)


def _infer_string_length(op):
    x = _check_string_input(op)
    _check_unit(op.attrs["unit"])
    return [(_dtypes.int32, x.shape)]


def _string_length_kernel(attrs):
    count = len if attrs["unit"] == "BYTE" else _utf8_length

    def string_length(x):
        return np.array([count(v) for v in x.reshape(-1)], dtype=np.int32).reshape(x.shape)

    return string_length


define_op("StringLength", _infer_string_length, _string_length_kernel, inline=True)


def string_length(input, name: Optional[str] = None, unit: str = "BYTE") -> Tensor:  # noqa: A002
    """The length of each string, in bytes or (``unit="UTF8_CHAR"``) in characters."""
    return apply_op("StringLength", (input,), {"unit": unit}, name or "StringLength").outputs[0]


# -- Substr ----------------------------------------------------------------------------------------
def _infer_substr(op):
    x = _check_string_input(op)
    pos, length = op.inputs[1:]
    check_dtype(pos.dtype, INDEX_TYPES, f"Input 'pos' of '{op.type}'")
    if length.dtype is not pos.dtype:
        raise TypeError(
            f"Input 'len' of '{op.type}' Op has type {length.dtype.name} that does not match "
            f"type {pos.dtype.name} of argument 'pos'."
        )
    _check_unit(op.attrs["unit"])
    return [(_dtypes.string, broadcast_shape(broadcast_shape(x.shape, pos.shape), length.shape))]


def _substr_kernel(attrs):
    by_character = attrs["unit"] == "UTF8_CHAR"

    def substr(x, pos, length):
        try:
            columns = np.broadcast_arrays(x, pos, length)
        except ValueError as e:
            raise InvalidArgumentError(
                None, None, f"input, pos and len must broadcast: {e}"
            ) from None
        items = []
        for i, (value, start, size) in enumerate(zip(*(c.reshape(-1) for c in columns))):
            text = value.decode("utf-8", "surrogateescape") if by_character else value
            start, size = int(start), int(size)
            if not -len(text) <= start <= len(text):
                raise InvalidArgumentError(
                    None, None, f"pos {start} out of range for string {value!r} at index {i}"
                )
            if start < 0:
                start += len(text)
            piece = text[start:] if size < 0 else text[start : start + size]
            items.append(piece.encode("utf-8", "surrogateescape") if by_character else piece)
        return _strings(columns[0].shape, items)

    return substr


define_op("Substr", _infer_substr, _substr_kernel)


def substr(input, pos, len, name: Optional[str] = None, unit: str = "BYTE") -> Tensor:  # noqa: A002
    """The ``len`` bytes (or characters) of each string from ``pos``; a negative ``pos``
    counts from the end, and a ``pos`` past the end is an error at run time."""
    pos = convert_to_tensor(pos, name="pos")
    length = convert_to_tensor(len, dtype=pos.dtype, name="len")
    attrs = {"unit": unit}
    return apply_op("Substr", (input, pos, length), attrs, name or "Substr").outputs[0]


# -- StringToNumber --------------------------------------------------------------------------------
_NUMBER_TYPES = frozenset({_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64})


def _infer_string_to_number(op):
    x = _check_string_input(op, what="string_tensor")
    check_dtype(op.attrs["out_type"], _NUMBER_TYPES, f"Attribute 'out_type' of '{op.type}'")
    return [(op.attrs["out_type"], x.shape)]


def _parse_number(value: bytes, np_dtype: np.dtype):
    text = value.decode("ascii", "replace").strip()
    if np_dtype.kind == "f":
        try:
            return float(text)
        except ValueError:
            return float.fromhex(text)  # TensorFlow's strtod reads hexadecimal too
    number = int(text)
    info = np.iinfo(np_dtype)
    if not info.min <= number <= info.max:
        raise ValueError(number)
    return number


def _string_to_number_kernel(attrs):
    np_dtype = _dtypes.numpy_dtype(attrs["out_type"])

    def string_to_number(x):
        flat = x.reshape(-1)
        result = np.empty(flat.shape, dtype=np_dtype)
        for i, value in enumerate(flat):
            try:
                result[i] = _parse_number(value, np_dtype)
            except ValueError:
                raise InvalidArgumentError(
                    None, None, f"StringToNumberOp could not correctly convert string: {value!r}"
                ) from None
        return result.reshape(x.shape)

    return string_to_number


define_op("StringToNumber", _infer_string_to_number, _string_to_number_kernel)


def string_to_number(
    string_tensor=None,
    out_type=_dtypes.float32,
    name: Optional[str] = None,
    input=None,  # noqa: A002
):
    """Parses each string as a number of ``out_type`` (float32, float64, int32 or int64); a
    string that is not one, or does not fit, is an error at run time.  ``input`` is
    TensorFlow 2's name for ``string_tensor``."""
    if (string_tensor is None) == (input is None):
        raise ValueError("string_to_number takes one of string_tensor and input")
    string_tensor = input if string_tensor is None else string_tensor
    attrs = {"out_type": _dtypes.as_dtype(out_type)}
    return apply_op("StringToNumber", (string_tensor,), attrs, name or "StringToNumber").outputs[0]


# -- ReduceJoin ------------------------------------------------------------------------------------
def _infer_reduce_join(op):
    x = _check_string_input(op, what="inputs")
    return [(_dtypes.string, reduced_shape(x.shape, op.attrs["axis"], op.attrs["keepdims"]))]


def _reduce_join_kernel(attrs):
    axis, keepdims = attrs["axis"], attrs["keepdims"]
    separator = attrs["separator"].encode("utf-8")

    def reduce_join(x):
        axes = tuple(range(x.ndim)) if axis is None else tuple(a % x.ndim for a in axis)
        kept = [a for a in range(x.ndim) if a not in axes]
        rows = np.transpose(x, kept + list(axes)).reshape(
            int(np.prod([x.shape[a] for a in kept], dtype=np.int64)), -1
        )
        shape = [1 if a in axes else x.shape[a] for a in range(x.ndim)] if keepdims else None
        joined = _strings(len(rows), [separator.join(row) for row in rows])
        return joined.reshape(shape if keepdims else [x.shape[a] for a in kept])

    return reduce_join


define_op("ReduceJoin", _infer_reduce_join, _reduce_join_kernel)


def reduce_join(
    inputs,
    axis=None,
    keep_dims=None,
    separator: str = "",
    name: Optional[str] = None,
    reduction_indices=None,
    keepdims=None,
) -> Tensor:
    """Joins the strings along ``axis`` (all axes when ``None``) with ``separator``, in
    row-major order; joining no strings gives ``b""``."""
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'")
        axis = reduction_indices
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        keepdims = keep_dims
    axis = static_axis(axis, "reduction axis")
    attrs = {
        "axis": (axis,) if isinstance(axis, int) else axis,
        "keepdims": bool(keepdims),
        "separator": str(separator),
    }
    return apply_op("ReduceJoin", (inputs,), attrs, name or "ReduceJoin").outputs[0]


# -- RegexReplace ----------------------------------------------------------------------------------
_RE2_MISSING = (
    "regular expressions need the google-re2 package (RE2, TensorFlow's engine, matches in "
    "time linear in the text): pip install 'dataflow[strings]'"
)


@functools.cache
def _re2():
    """The ``re2`` module, with the options TensorFlow's ``RE2(pattern)`` has (UTF-8, Perl
    classes), errors returned rather than logged.  Never Python's ``re``: a backtracking engine
    can run for hours on a hostile pattern, holding the GIL past any deadline."""
    try:
        import re2
    except ImportError:
        return None
    options = re2.Options()
    options.log_errors = False
    return re2, options


def _compile(pattern: bytes):
    """``pattern`` compiled by RE2; ``ValueError`` if RE2 rejects it (as TensorFlow does,
    including the Perl features RE2 leaves out: backreferences, lookaround)."""
    loaded = _re2()
    if loaded is None:
        raise ValueError(_RE2_MISSING)
    re2, options = loaded
    try:
        return re2.compile(pattern, options)
    except re2.error as e:
        text = pattern.decode("utf-8", "replace")
        error = e.args[0].decode("utf-8", "replace") if e.args else str(e)
        raise ValueError(f"Invalid pattern: {text}, error: {error}") from None


def _parse_rewrite(rewrite: bytes, groups: int) -> list:
    """``rewrite`` as RE2 reads it, as literal ``bytes`` and group numbers: ``\\0`` to ``\\9``
    are groups and ``\\\\`` is a backslash.  Where RE2 would silently leave the text alone (any
    other escape, a group the pattern lacks) this raises ``ValueError``."""
    pieces: list = []
    literal = bytearray()
    i = 0
    while i < len(rewrite):
        byte = rewrite[i : i + 1]
        i += 1
        if byte != b"\\":
            literal += byte
            continue
        if i == len(rewrite):
            error = "'\\' not allowed at the end"
        else:
            after = rewrite[i : i + 1]
            i += 1
            if after == b"\\":
                literal += after
                continue
            if after.isdigit() and int(after) <= groups:
                pieces += [bytes(literal), int(after)]
                literal.clear()
                continue
            if after.isdigit():
                error = (
                    f"\\{int(after)} refers to group {int(after)}, but the pattern has "
                    f"{groups} capturing group{'' if groups == 1 else 's'}"
                )
            else:
                escape = after.decode("utf-8", "replace")
                error = f"'\\{escape}' is neither a group (\\0 to \\9) nor '\\\\'"
        text = rewrite.decode("utf-8", "replace")
        raise ValueError(f"Invalid rewrite: {text}, error: {error}")
    pieces.append(bytes(literal))
    return pieces


def _rune_length(value: bytes, at: int) -> int:
    """The length of the UTF-8 character starting at ``value[at]`` (1 for an invalid one)."""
    for length in (1, 2, 3, 4):
        try:
            value[at : at + length].decode("utf-8")
            return length
        except UnicodeDecodeError:
            continue
    return 1


def _replace(value: bytes, compiled, rewrite: list, replace_global: bool) -> bytes:
    """``RE2::GlobalReplace`` (or ``RE2::Replace``): each match, left to right, is replaced by
    ``rewrite``; an empty match right where the previous match ended is skipped."""
    out = []
    at, last_end = 0, -1
    while at <= len(value):
        match = compiled.search(value, at)
        if match is None:
            break
        start, end = match.span()
        out.append(value[at:start])
        if start == end == last_end:
            step = _rune_length(value, at)
            out.append(value[at : at + step])
            at += step
            continue
        for index, piece in enumerate(rewrite):
            out.append(piece if index % 2 == 0 else match.group(piece) or b"")
        at = last_end = end
        if not replace_global:
            break
    out.append(value[at:])
    return b"".join(out)


def _replace_all(x: np.ndarray, compiled, rewrite: list, replace_global: bool) -> np.ndarray:
    items = [_replace(v, compiled, rewrite, replace_global) for v in x.reshape(-1)]
    return _strings(x.shape, items)


def _compile_static(attrs):
    compiled = _compile(attrs["pattern"].encode("utf-8"))
    return compiled, _parse_rewrite(attrs["rewrite"].encode("utf-8"), compiled.groups)


def _infer_static_regex_replace(op):
    x = _check_string_input(op)
    _compile_static(op.attrs)
    return [(_dtypes.string, x.shape)]


def _static_regex_replace_kernel(attrs):
    compiled, rewrite = _compile_static(attrs)
    replace_global = attrs["replace_global"]
    return lambda x: _replace_all(x, compiled, rewrite, replace_global)


define_op("StaticRegexReplace", _infer_static_regex_replace, _static_regex_replace_kernel)


def _infer_regex_replace(op):
    x = _check_string_input(op)
    if _re2() is None:
        raise ValueError(_RE2_MISSING)
    for index, what in ((1, "pattern"), (2, "rewrite")):
        t = _check_string_input(op, index, what)
        if not t.shape.is_compatible_with([]):
            raise ValueError(f"{what} must be a scalar, got shape {t.shape}")
    return [(_dtypes.string, x.shape)]


def _regex_replace_kernel(attrs):
    replace_global = attrs["replace_global"]

    def regex_replace(x, pattern, rewrite):
        try:
            compiled = _compile(pattern[()])
            pieces = _parse_rewrite(rewrite[()], compiled.groups)
        except ValueError as e:
            raise InvalidArgumentError(None, None, str(e)) from None
        return _replace_all(x, compiled, pieces, replace_global)

    return regex_replace


define_op("RegexReplace", _infer_regex_replace, _regex_replace_kernel)


def regex_replace(
    input,  # noqa: A002 - mirrors tf.regex_replace
    pattern,
    rewrite,
    replace_global: bool = True,
    name: Optional[str] = None,
) -> Tensor:
    """Replaces the matches of ``pattern`` in each string with ``rewrite`` (``\\1`` for a
    group); only the first match unless ``replace_global``.  With Python strings for
    ``pattern`` and ``rewrite`` the op is TensorFlow's ``StaticRegexReplace``."""
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        attrs = {
            "pattern": pattern if isinstance(pattern, str) else pattern.decode("utf-8"),
            "rewrite": rewrite if isinstance(rewrite, str) else rewrite.decode("utf-8"),
            "replace_global": bool(replace_global),
        }
        return apply_op(
            "StaticRegexReplace", (input,), attrs, name or "StaticRegexReplace"
        ).outputs[0]
    pattern = convert_to_tensor(pattern, dtype=_dtypes.string, name="pattern")
    rewrite = convert_to_tensor(rewrite, dtype=_dtypes.string, name="rewrite")
    attrs = {"replace_global": bool(replace_global)}
    return apply_op(
        "RegexReplace", (input, pattern, rewrite), attrs, name or "RegexReplace"
    ).outputs[0]


# -- StringUpper / StringLower ---------------------------------------------------------------------
def _infer_change_case(op):
    x = _check_string_input(op)
    if op.attrs["encoding"] not in ("", "utf-8"):
        raise ValueError(f"encoding must be '' or 'utf-8', got {op.attrs['encoding']!r}")
    return [(_dtypes.string, x.shape)]


def _change_case_kernel(upper: bool):
    def build(attrs):
        def change(value: bytes) -> bytes:
            if attrs["encoding"]:
                text = value.decode("utf-8", "surrogateescape")
                text = text.upper() if upper else text.lower()
                return text.encode("utf-8", "surrogateescape")
            return value.upper() if upper else value.lower()  # ASCII letters only

        return lambda x: _strings(x.shape, [change(v) for v in x.reshape(-1)])

    return build


define_op("StringUpper", _infer_change_case, _change_case_kernel(True))
define_op("StringLower", _infer_change_case, _change_case_kernel(False))


def upper(input, encoding: str = "", name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each string in upper case: ASCII letters only, or all of UTF-8 with ``encoding``."""
    attrs = {"encoding": encoding}
    return apply_op("StringUpper", (input,), attrs, name or "StringUpper").outputs[0]


def lower(input, encoding: str = "", name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each string in lower case: ASCII letters only, or all of UTF-8 with ``encoding``."""
    attrs = {"encoding": encoding}
    return apply_op("StringLower", (input,), attrs, name or "StringLower").outputs[0]


# -- strip ---------------------------------------------------------------------------------------
# TensorFlow's StringStrip removes what C's isspace calls whitespace, at both ends.
_SPACE = "[ \\t\\n\\v\\f\\r]"


def string_strip(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each string without the whitespace (space, tab, newline, vertical tab, form feed,
    carriage return) at its start and end."""
    return regex_replace(input, f"^{_SPACE}+|{_SPACE}+$", "", name=name or "StringStrip")


# -- DecodeRaw -------------------------------------------------------------------------------------
_DECODE_RAW_TYPES = frozenset(
    {_dtypes.float16, _dtypes.float32, _dtypes.float64, _dtypes.int8, _dtypes.int16}
    | {_dtypes.int32, _dtypes.int64, _dtypes.uint8, _dtypes.bool}
)


def _infer_decode_raw(op):
    x = _check_string_input(op, what="bytes")
    out_type = op.attrs["out_type"]
    if out_type not in _DECODE_RAW_TYPES:
        raise TypeError(f"DecodeRaw cannot decode to {out_type.name}")
    if x.shape.ndims is None:
        return [(out_type, TensorShape(None))]
    return [(out_type, x.shape.concatenate([None]))]


def _decode_raw_kernel(attrs):
    dtype = _dtypes.numpy_dtype(attrs["out_type"])
    dtype = dtype.newbyteorder("<" if attrs["little_endian"] else ">")

    def decode_raw(x):
        values = [bytes(v) for v in x.reshape(-1)]
        sizes = {len(v) for v in values}
        if len(sizes) > 1:
            first = len(values[0])
            index, size = next((i, len(v)) for i, v in enumerate(values) if len(v) != first)
            raise InvalidArgumentError(
                None,
                None,
                "DecodeRaw requires input strings to all be the same size, but element "
                f"{index} has size {size} != {first}",
            )
        size = sizes.pop() if sizes else 0
        if size % dtype.itemsize:
            raise InvalidArgumentError(
                None,
                None,
                f"Input to DecodeRaw has length {size} that is not a multiple of "
                f"{dtype.itemsize}, the size of {attrs['out_type'].name}",
            )
        flat = np.frombuffer(b"".join(values), dtype=dtype).astype(dtype.newbyteorder("="))
        return flat.reshape(x.shape + (size // dtype.itemsize,))

    return decode_raw


define_op("DecodeRaw", _infer_decode_raw, _decode_raw_kernel)


def decode_raw(
    input_bytes=None,
    out_type=None,
    little_endian: bool = True,
    name: Optional[str] = None,
    bytes=None,  # noqa: A002 - TensorFlow 1.x's name for input_bytes
) -> Tensor:
    """Each string of ``input_bytes`` read as a vector of ``out_type`` numbers (bytes in
    ``little_endian`` order or big-endian); every string must have the same length, a
    multiple of the type's size.  ``bytes`` is TensorFlow 1.x's name for ``input_bytes``."""
    if (input_bytes is None) == (bytes is None):
        raise ValueError("decode_raw takes one of input_bytes and bytes")
    if out_type is None:
        raise ValueError("decode_raw needs an out_type")
    data = convert_to_tensor(bytes if input_bytes is None else input_bytes, _dtypes.string)
    attrs = {"out_type": _dtypes.as_dtype(out_type), "little_endian": bool(little_endian)}
    return apply_op("DecodeRaw", (data,), attrs, name or "DecodeRaw").outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (
    "AsString StringJoin StringLength Substr StringToNumber ReduceJoin StaticRegexReplace "
    "DecodeRaw "
    "RegexReplace StringUpper StringLower"
).split():
    NotDifferentiable(_type)


# -- StringToHashBucket, StringToHashBucketFast, StringToHashBucketStrong --------------------------
from . import string_hash as _hash  # noqa: E402


def _infer_hash_bucket(op):
    x = _check_string_input(op)
    if op.attrs["num_buckets"] < 1:
        raise ValueError(
            f"{op.type}: num_buckets must be at least 1, got {op.attrs['num_buckets']}"
        )
    if op.type == "StringToHashBucketStrong" and len(op.attrs["key"]) != 2:
        raise ValueError(
            f"StringToHashBucketStrong: key must have 2 elements, got {op.attrs['key']}"
        )
    return [(_dtypes.int64, x.shape)]


def _hash_bucket_kernel(hash_of):
    def build(attrs):
        buckets = attrs["num_buckets"]
        key = attrs.get("key")

        def hash_bucket(x):
            flat = x.reshape(-1)
            if key is None:
                items = [hash_of(v) % buckets for v in flat]
            else:
                items = [hash_of(key, v) % buckets for v in flat]
            return np.array(items, dtype=np.int64).reshape(x.shape)

        return hash_bucket

    return build


define_op("StringToHashBucket", _infer_hash_bucket, _hash_bucket_kernel(_hash.legacy_hash64))
define_op("StringToHashBucketFast", _infer_hash_bucket, _hash_bucket_kernel(_hash.fingerprint64))
define_op("StringToHashBucketStrong", _infer_hash_bucket, _hash_bucket_kernel(_hash.siphash))


def _string_input(value, name: str) -> Tensor:
    return (
        value if isinstance(value, Tensor) else convert_to_tensor(value, _dtypes.string, name=name)
    )


def string_to_hash_bucket_fast(input, num_buckets, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each string's bucket in ``[0, num_buckets)``: its FarmHash ``Fingerprint64`` modulo
    ``num_buckets``, as TensorFlow computes it (stable across processes and machines)."""
    attrs = {"num_buckets": int(num_buckets)}
    x = _string_input(input, "input")
    return apply_op(
        "StringToHashBucketFast", (x,), attrs, name or "StringToHashBucketFast"
    ).outputs[0]


def string_to_hash_bucket_strong(input, num_buckets, key, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each string's bucket in ``[0, num_buckets)``: its SipHash-2-4 under the 128-bit ``key``
    (a list of two integers) modulo ``num_buckets``, so that an adversary who does not know
    the key cannot choose strings that share a bucket."""
    attrs = {"num_buckets": int(num_buckets), "key": tuple(int(k) for k in key)}
    x = _string_input(input, "input")
    return apply_op(
        "StringToHashBucketStrong", (x,), attrs, name or "StringToHashBucketStrong"
    ).outputs[0]


def string_to_hash_bucket(
    string_tensor=None,
    num_buckets=None,
    name: Optional[str] = None,
    input=None,  # noqa: A002
) -> Tensor:
    """Each string's bucket in ``[0, num_buckets)`` by TensorFlow's older ``Hash64`` (prefer
    `string_to_hash_bucket_fast`).  ``input`` is TensorFlow 2's name for ``string_tensor``."""
    if (string_tensor is None) == (input is None):
        raise ValueError("string_to_hash_bucket takes one of string_tensor and input")
    if num_buckets is None:
        raise ValueError("string_to_hash_bucket needs num_buckets")
    x = _string_input(input if string_tensor is None else string_tensor, "string_tensor")
    attrs = {"num_buckets": int(num_buckets)}
    return apply_op("StringToHashBucket", (x,), attrs, name or "StringToHashBucket").outputs[0]


# -- RegexFullMatch / StaticRegexFullMatch ---------------------------------------------------------
def _full_match_all(x: np.ndarray, compiled) -> np.ndarray:
    flat = [compiled.fullmatch(v) is not None for v in x.reshape(-1)]
    return np.array(flat, dtype=bool).reshape(x.shape)


def _infer_static_full_match(op):
    x = _check_string_input(op)
    _compile(op.attrs["pattern"].encode("utf-8"))
    return [(_dtypes.bool, x.shape)]


def _static_full_match_kernel(attrs):
    compiled = _compile(attrs["pattern"].encode("utf-8"))
    return lambda x: _full_match_all(x, compiled)


define_op("StaticRegexFullMatch", _infer_static_full_match, _static_full_match_kernel)


def _infer_full_match(op):
    x = _check_string_input(op)
    if _re2() is None:
        raise ValueError(_RE2_MISSING)
    pattern = _check_string_input(op, 1, "pattern")
    if not pattern.shape.is_compatible_with([]):
        raise ValueError(f"pattern must be a scalar, got shape {pattern.shape}")
    return [(_dtypes.bool, x.shape)]


def _full_match_kernel(attrs):
    def regex_full_match(x, pattern):
        try:
            compiled = _compile(pattern[()])
        except ValueError as e:
            raise InvalidArgumentError(None, None, str(e)) from None
        return _full_match_all(x, compiled)

    return regex_full_match


define_op("RegexFullMatch", _infer_full_match, _full_match_kernel)


def regex_full_match(input, pattern, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Whether each whole string matches the RE2 ``pattern``.  With a Python string for
    ``pattern`` the op is TensorFlow's ``StaticRegexFullMatch``, checked when built."""
    x = _string_input(input, "input")
    if isinstance(pattern, (str, bytes)):
        text = pattern if isinstance(pattern, str) else pattern.decode("utf-8")
        return apply_op(
            "StaticRegexFullMatch", (x,), {"pattern": text}, name or "StaticRegexFullMatch"
        ).outputs[0]
    pattern = convert_to_tensor(pattern, dtype=_dtypes.string, name="pattern")
    return apply_op("RegexFullMatch", (x, pattern), {}, name or "RegexFullMatch").outputs[0]


# -- UnsortedSegmentJoin ---------------------------------------------------------------------------
def _infer_unsorted_segment_join(op):
    x = _check_string_input(op, what="inputs")
    segment_ids, num_segments = op.inputs[1:]
    check_dtype(segment_ids.dtype, INDEX_TYPES, f"Input 'segment_ids' of '{op.type}'")
    check_dtype(num_segments.dtype, INDEX_TYPES, f"Input 'num_segments' of '{op.type}'")
    if x.shape.ndims is None or segment_ids.shape.ndims is None:
        return [(_dtypes.string, TensorShape(None))]
    ids_rank = segment_ids.shape.ndims
    if not x.shape[:ids_rank].is_compatible_with(segment_ids.shape):
        raise ValueError(
            f"UnsortedSegmentJoin: segment_ids of shape {segment_ids.shape} must be a prefix of "
            f"the shape of inputs, {x.shape}"
        )
    from ..framework.graph import numpy_value_or_none

    count = numpy_value_or_none(num_segments)
    first = None if count is None else int(count)
    return [(_dtypes.string, TensorShape([first]).concatenate(x.shape[ids_rank:]))]


def _unsorted_segment_join_kernel(attrs):
    separator = attrs["separator"].encode("utf-8")

    def unsorted_segment_join(x, segment_ids, num_segments):
        count = int(num_segments)
        ids = segment_ids.reshape(-1)
        if x.shape[: segment_ids.ndim] != segment_ids.shape:
            raise InvalidArgumentError(
                None,
                None,
                f"segment_ids should be the same size as inputs' leading dimensions: "
                f"{segment_ids.shape} against {x.shape}",
            )
        if count < 0:
            raise InvalidArgumentError(None, None, f"num_segments must be >= 0, got {count}")
        if ids.size and (ids.min() < 0 or ids.max() >= count):
            raise InvalidArgumentError(
                None,
                None,
                "segment_ids are not allowed to exceed num_segments or be negative: "
                f"found {int(ids.min() if ids.min() < 0 else ids.max())} with num_segments "
                f"{count}",
            )
        inner = x.shape[segment_ids.ndim :]
        rows = x.reshape((ids.size, -1))
        width = int(np.prod(inner, dtype=np.int64))
        groups: list = [[[] for _ in range(width)] for _ in range(count)]
        for row, segment in zip(rows, ids.tolist()):
            for column, value in enumerate(row):
                groups[segment][column].append(value)
        items = [separator.join(cell) for group in groups for cell in group]
        return _strings((count,) + inner, items)

    return unsorted_segment_join


define_op("UnsortedSegmentJoin", _infer_unsorted_segment_join, _unsorted_segment_join_kernel)


def unsorted_segment_join(
    inputs, segment_ids, num_segments, separator: str = "", name: Optional[str] = None
) -> Tensor:
    """Joins with ``separator`` the strings of ``inputs`` that ``segment_ids`` (a prefix of its
    shape) sends to the same segment, in their order; a segment no string goes to is ``b""``.
    Ids must lie in ``[0, num_segments)``."""
    x = _string_input(inputs, "inputs")
    segment_ids = convert_to_tensor(segment_ids, name="segment_ids")
    num_segments = convert_to_tensor(num_segments, name="num_segments")
    attrs = {"separator": str(separator)}
    return apply_op(
        "UnsortedSegmentJoin", (x, segment_ids, num_segments), attrs, name or "UnsortedSegmentJoin"
    ).outputs[0]


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
    from . import array_ops

    if result_type == "SparseTensor":
        return SparseTensor(indices, values, shape)
    row_ids = array_ops.strided_slice(indices, [0, 0], [0, 1], shrink_axis_mask=2, end_mask=1)
    nrows = array_ops.strided_slice(shape, [0], [1], shrink_axis_mask=1)
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
    with ``result_type="RaggedTensor"``).  An empty ``sep`` splits into single bytes; empty
    tokens are dropped unless ``skip_empty`` is False."""
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


def _nest_rows(rows, shape: Tensor, rank: int):
    """``rows`` (a RaggedTensor with one row per element of a tensor of ``shape`` and static
    ``rank``, in row-major order) nested into that tensor's dimensions."""
    from ..framework.ragged_tensor import RaggedTensor
    from . import array_ops, math_ops

    shape = math_ops.cast(shape, rows.row_splits.dtype)
    for axis in reversed(range(1, rank)):
        outer = math_ops.reduce_prod(array_ops.strided_slice(shape, [0], [axis]))
        width = array_ops.strided_slice(shape, [axis], [axis + 1], shrink_axis_mask=1)
        splits = array_ops.range(outer + 1, dtype=shape.dtype) * width
        rows = RaggedTensor.from_row_splits(rows, splits, validate=False)
    return rows


def _split_v2(x, sep, maxsplit: int, name: Optional[str], sparse: bool):
    """StringSplitV2 of the tensor ``x`` of any known rank: a RaggedTensor with one more
    dimension, or (``sparse``) the SparseTensor of its values."""
    from ..framework.graph import name_scope
    from ..framework.ragged_tensor import RaggedTensor
    from ..framework.sparse_tensor import SparseTensor
    from . import array_ops

    sep = convert_to_tensor("" if sep is None else sep, _dtypes.string, name="sep")
    attrs = {"maxsplit": int(maxsplit)}
    if isinstance(x, RaggedTensor):
        if sparse:
            raise TypeError("strings.split of a RaggedTensor gives a RaggedTensor only")
        return x.with_flat_values(_split_v2(x.flat_values, sep, maxsplit, name, False))
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("strings.split: the rank of input must be known")
    with name_scope(name or "StringSplit"):
        if rank == 0:
            x = array_ops.expand_dims(x, 0)
            rank = 1
        flat = x if rank == 1 else array_ops.reshape(x, [-1])
        indices, values, shape = apply_op(
            "StringSplitV2", (flat, sep), attrs, "StringSplitV2"
        ).outputs
        if rank == 1:
            return _split_result(indices, values, shape, "SparseTensor" if sparse else "Ragged")
        if sparse:
            dims = array_ops.shape(x, out_type=_dtypes.int64)
            rows = array_ops.strided_slice(indices, [0, 0], [0, 1], shrink_axis_mask=2, end_mask=1)
            columns = array_ops.strided_slice(indices, [0, 1], [0, 2], end_mask=1)
            from .extra_math_ops import unravel_index

            outer = array_ops.transpose(unravel_index(rows, dims))
            longest = array_ops.strided_slice(shape, [1], [2])
            return SparseTensor(
                array_ops.concat([outer, columns], 1), values, array_ops.concat([dims, longest], 0)
            )
        flat_rows = _split_result(indices, values, shape, "RaggedTensor")
        return _nest_rows(flat_rows, array_ops.shape(x, out_type=_dtypes.int64), rank)


def split(
    input=None,  # noqa: A002 - mirrors tf.strings.split
    sep=None,
    maxsplit: int = -1,
    result_type: str = "SparseTensor",
    source=None,
    name: Optional[str] = None,
):
    """Splits each string at ``sep`` (at runs of whitespace when None, dropping empty tokens,
    as Python's ``str.split``), at most ``maxsplit`` times (no limit when -1).  A SparseTensor
    with one more dimension than ``input`` (a scalar counts as a vector of one), or a
    RaggedTensor with ``result_type="RaggedTensor"``; ``source`` is the older name of
    ``input``."""
    if input is not None and source is not None:
        raise ValueError("Cannot specify both 'input' and 'source'")
    _check_result_type(result_type)
    x = _string_vector_or_ragged(source if input is None else input, "input")
    return _split_v2(x, sep, maxsplit, name, result_type == "SparseTensor")


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


# -- UnicodeDecode, UnicodeDecodeWithOffsets, UnicodeEncode, UnicodeTranscode ----------------------
from . import unicode_text as _text  # noqa: E402


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
            last = array_ops.strided_slice(shape, [rank - 1], [rank])
            flat = array_ops.reshape(input, array_ops.concat([[-1], last], 0))
            encoded = unicode_encode(flat, *options)
            return array_ops.reshape(encoded, array_ops.strided_slice(shape, [0], [rank - 1]))
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
            dense_shape = array_ops.concat(
                [array_ops.strided_slice(shape, [0], [rank - 1]), [-1]], 0
            )
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


# -- StringFormat ----------------------------------------------------------------------------------
def _escape(value: bytes) -> str:
    """``value`` escaped as C++ (absl::CEscape) escapes it."""
    named = {9: "\\t", 10: "\\n", 13: "\\r", 34: '\\"', 39: "\\'", 92: "\\\\"}
    out = []
    for byte in value:
        if byte in named:
            out.append(named[byte])
        elif 32 <= byte < 127:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)


def _format_element(value, kind: str) -> str:
    """One element as TensorFlow's ``StrCat`` prints it for ``tf.strings.format``."""
    if kind == "S":
        return '"' + _escape(bytes(value)) + '"'
    if kind == "b":
        return "1" if value else "0"
    if kind == "c":
        return "?"
    if kind == "f":
        number = float(value)
        if number != number:
            return "nan"
        if number in (float("inf"), float("-inf")):
            return "inf" if number > 0 else "-inf"
        if value.dtype == np.float64:
            short = f"{number:.15g}"
            return short if float(short) == number else f"{number:.17g}"
        single = float(np.float32(value))
        short = f"{single:.6g}"
        return short if np.float32(float(short)) == np.float32(single) else f"{single:.9g}"
    return str(int(value))


def _summarize(array: np.ndarray, summarize: int) -> str:
    """TensorFlow's ``Tensor::SummarizeValue(summarize, print_v2=true)`` of ``array``."""
    kind = "S" if array.dtype == object else array.dtype.kind
    kind = "f" if kind == "f" else kind
    if array.ndim == 0:
        return _format_element(array[()], kind)
    flat = array.reshape(-1)
    ends = flat.size if summarize < 0 else min(summarize, flat.size)
    rank, shape = array.ndim, array.shape
    parts: list = []

    def spacing(dim: int) -> None:
        parts.append(" " if dim == rank - 1 else "\n" * (rank - dim - 1) + " " * (dim + 1))

    def one_dim(dim: int, index: int) -> None:
        if dim == rank:
            parts.append(_format_element(flat[index], kind))
            return
        parts.append("[")
        count = shape[dim]
        stride = int(np.prod(shape[dim + 1 :], dtype=np.int64))
        for i in range(min(ends, count)):
            if i > 0:
                spacing(dim)
            one_dim(dim + 1, index + stride * i)
        if count > 2 * ends:
            spacing(dim)
            parts.append("...")
        for i in range(max(ends, count - ends), count):
            spacing(dim)
            one_dim(dim + 1, index + stride * i)
        parts.append("]")

    one_dim(0, 0)
    return "".join(parts)


def _infer_string_format(op):
    pieces = op.attrs["template"].split(op.attrs["placeholder"])
    if len(pieces) - 1 != len(op.inputs):
        raise ValueError(
            f"num placeholders in template and num inputs must match: {len(pieces) - 1} vs. "
            f"{len(op.inputs)}"
        )
    return [(_dtypes.string, TensorShape([]))]


def _string_format_kernel(attrs):
    pieces = attrs["template"].split(attrs["placeholder"])
    summarize = attrs["summarize"]

    def string_format(*inputs):
        out = [pieces[0]]
        for value, piece in zip(inputs, pieces[1:]):
            out += [_summarize(np.asarray(value), summarize), piece]
        return np.array("".join(out).encode("utf-8"), dtype=object)

    return string_format


define_op("StringFormat", _infer_string_format, _string_format_kernel)


def string_format(
    template: str, inputs, placeholder: str = "{}", summarize: int = 3, name: Optional[str] = None
) -> Tensor:
    """``template`` with each ``placeholder`` replaced by one of ``inputs`` (a tensor or a
    list of them) printed as TensorFlow prints tensors: nested brackets, strings quoted and
    escaped, and only the first and last ``summarize`` entries of each dimension (-1: all)."""
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(
            f"The template expects {template.count(placeholder)} tensors, but the inputs only "
            f"has {len(inputs)}. Please ensure the number of placeholders in template matches "
            "inputs length."
        )
    tensors = [convert_to_tensor(x) for x in inputs]
    attrs = {
        "template": str(template),
        "placeholder": str(placeholder),
        "summarize": int(summarize),
    }
    return apply_op("StringFormat", tensors, attrs, name or "StringFormat").outputs[0]


for _type in (
    "StringToHashBucket StringToHashBucketFast StringToHashBucketStrong StaticRegexFullMatch "
    "RegexFullMatch UnsortedSegmentJoin StringSplit StringSplitV2 UnicodeDecode "
    "UnicodeDecodeWithOffsets UnicodeEncode UnicodeTranscode StringNGrams StringFormat"
).split():
    NotDifferentiable(_type)

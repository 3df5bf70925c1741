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
import re
from fractions import Fraction
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
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
from .ragged_string_ops import (  # noqa: F401 - defined there, reached here too
    _infer_split,
    bytes_split,
    ngrams,
    split,
    string_split,
    unicode_decode,
    unicode_decode_with_offsets,
    unicode_encode,
    unicode_split,
    unicode_split_with_offsets,
    unicode_transcode,
)
from .string_base import (  # noqa: F401 - defined there, reached here too
    STRING_TYPES,
    _check_string_input,
    _check_unit,
    _string_input,
    _strings,
)
from .summarize import summarize_value

__all__ = [
    "as_string",
    "reduce_join",
    "regex_replace",
    "string_join",
    "string_to_number",
    "substr",
]


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


# What TensorFlow's StringToNumber reads (its strtod and strtol with these options): ASCII digits,
# an optional sign, C's whitespace around; floats also in hexadecimal (with a binary exponent),
# and inf, infinity and nan (with an optional "(chars)") in any case.
_NUMBER_SPACE = b" \t\n\v\f\r"
_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEXADECIMAL = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?[0-9]+))?")
_INFINITY = re.compile(rb"[+-]?(?:inf|infinity)", re.IGNORECASE)
_NAN = re.compile(rb"[+-]?nan(?:\([0-9A-Za-z_]*\))?", re.IGNORECASE)
_INTEGER = re.compile(rb"[+-]?[0-9]+")
# Halfway between the largest float32 and 2**128 (where the next one would be): from here up a
# number rounds to inf.
_FLOAT32_OVERFLOW_MIDPOINT = float(2**128 - 2**103)


def _exact_number(text: bytes) -> Fraction:
    """The exact value of ``text``, a decimal or hexadecimal float (`_float_or_none` says
    which)."""
    match = _HEXADECIMAL.fullmatch(text)
    if match is None:
        return Fraction(text.decode("ascii"))
    sign, whole, fraction, exponent = match.groups()
    fraction = fraction or b""
    value = Fraction(int(whole + fraction, 16), 16 ** len(fraction))
    value *= Fraction(2) ** int(exponent or 0)
    return -value if sign == b"-" else value


def _float_or_none(text: bytes) -> Optional[float]:
    """``text`` (no spaces around) rounded once to the nearest float64, as strtod reads it;
    None when it is no decimal or hexadecimal float."""
    if _DECIMAL.fullmatch(text):
        return float(text)  # a decimal beyond float64's range is inf
    match = _HEXADECIMAL.fullmatch(text)
    if match is None or not (match.group(2) or match.group(3)):
        return None
    try:
        return float.fromhex(text.decode("ascii"))
    except OverflowError:
        return -np.inf if match.group(1) == b"-" else np.inf


def _nearest_float32(text: bytes, value: float) -> np.float32:
    """The float32 nearest the number ``text`` spells (ties to even), as TensorFlow's strtof
    reads it, from ``value``, its nearest float64.  Rounding ``value`` to float32 is right
    except where ``value`` falls exactly halfway between two float32s while the exact number
    does not: that rare case is settled on the exact number."""
    with np.errstate(over="ignore"):
        rounded = np.float32(value)
    if float(rounded) == value or not np.isfinite(value):
        return rounded
    magnitude = abs(value)
    nearest = np.float32(abs(rounded))
    with np.errstate(over="ignore"):  # the float32 after the largest is inf
        if np.isfinite(nearest) and float(nearest) < magnitude:
            below, above = nearest, np.nextafter(nearest, np.float32(np.inf))
        else:
            below, above = np.nextafter(nearest, np.float32(0)), nearest
    midpoint = (
        (float(below) + float(above)) / 2 if np.isfinite(above) else _FLOAT32_OVERFLOW_MIDPOINT
    )
    if magnitude != midpoint:
        return rounded
    exact = abs(_exact_number(text))
    if exact == Fraction(midpoint):
        return rounded  # a true tie: numpy rounded it to even
    closer = above if exact > Fraction(midpoint) else below
    return np.float32(-closer) if value < 0 else closer


def _parse_number(value: bytes, np_dtype: np.dtype):
    """The number ``value`` spells, as TensorFlow's StringToNumber reads it (see above);
    ``ValueError`` when it spells none, or an integer out of ``np_dtype``'s range."""
    text = value.strip(_NUMBER_SPACE)
    if np_dtype.kind != "f":
        if not _INTEGER.fullmatch(text):
            raise ValueError(value)
        number = int(text)
        info = np.iinfo(np_dtype)
        if not info.min <= number <= info.max:
            raise ValueError(value)
        return number
    if _INFINITY.fullmatch(text):
        return -np.inf if text.startswith(b"-") else np.inf
    if _NAN.fullmatch(text):
        return np.nan
    number = _float_or_none(text)
    if number is None:
        raise ValueError(value)
    return _nearest_float32(text, number) if np_dtype == np.float32 else number


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
    from ..framework.tensor_conversion import numpy_value_or_none

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


# -- UnicodeDecode, UnicodeDecodeWithOffsets, UnicodeEncode, UnicodeTranscode ----------------------


# -- StringFormat ----------------------------------------------------------------------------------
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
            out += [summarize_value(np.asarray(value), summarize), piece]
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

"""Text in the Unicode encodings of TensorFlow's ``Unicode*`` ops, decoded to code points with
the byte offset each one starts at, and encoded back, with TensorFlow's error handling.

A malformed sequence is replaced as ICU (TensorFlow's converter) and Python replace it: once
per maximal part of a well-formed sequence (``b"\\xe2\\x82"`` is one error, ``b"\\xff\\xfe"``
two), in UTF-8, UTF-16 and UTF-32, big- or little-endian.  Encodings are named as ICU names
them, in any case (``"UTF-8"``, ``"utf-16-be"``).
"""

from __future__ import annotations

_DECODINGS = {
    "UTF-8": "utf8",
    "UTF8": "utf8",
    "UTF-16-BE": ">2",
    "UTF-16BE": ">2",
    "UTF-16-LE": "<2",
    "UTF-16LE": "<2",
    "UTF-32-BE": ">4",
    "UTF-32BE": ">4",
    "UTF-32-LE": "<4",
    "UTF-32LE": "<4",
    "ISO-8859-1": "latin1",
    "LATIN1": "latin1",
    "US-ASCII": "ascii",
    "ASCII": "ascii",
}
# TensorFlow's UnicodeEncode and UnicodeTranscode write these three only
ENCODINGS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
ERRORS = ("strict", "replace", "ignore")


class TextError(ValueError):
    """The text is not valid in its encoding and ``errors`` is ``"strict"``."""


def decoding(name: str) -> str:
    """The decoder for the encoding ``name``; ``ValueError`` for one not supported."""
    key = name.upper()
    if key not in _DECODINGS:
        supported = "UTF-8, UTF-16-BE, UTF-16-LE, UTF-32-BE, UTF-32-LE, ISO-8859-1, US-ASCII"
        raise ValueError(f"Could not create converter for input encoding: {name} ({supported})")
    return _DECODINGS[key]


def _utf8_units(data: bytes):
    """(code point or None for a malformed part, start, end) of each unit of UTF-8 ``data``."""
    i, n = 0, len(data)
    while i < n:
        lead = data[i]
        if lead < 0x80:
            yield lead, i, i + 1
            i += 1
            continue
        if 0xC2 <= lead <= 0xDF:
            need, low, high, value = 1, 0x80, 0xBF, lead & 0x1F
        elif 0xE0 <= lead <= 0xEF:
            need, value = 2, lead & 0x0F
            low, high = (
                (0xA0, 0xBF) if lead == 0xE0 else (0x80, 0x9F) if lead == 0xED else (0x80, 0xBF)
            )
        elif 0xF0 <= lead <= 0xF4:
            need, value = 3, lead & 0x07
            low, high = (
                (0x90, 0xBF) if lead == 0xF0 else (0x80, 0x8F) if lead == 0xF4 else (0x80, 0xBF)
            )
        else:
            yield None, i, i + 1
            i += 1
            continue
        j = i + 1
        while j < n and j - i <= need:
            byte = data[j]
            if not (low <= byte <= high if j == i + 1 else 0x80 <= byte <= 0xBF):
                break
            value = (value << 6) | (byte & 0x3F)
            j += 1
        if j - i == need + 1:
            yield value, i, j
        else:
            yield None, i, j
        i = j


def _wide_units(data: bytes, code: str):
    """The units of UTF-16 or UTF-32 ``data`` (``code`` ">2", "<2", ">4" or "<4")."""
    order = "big" if code[0] == ">" else "little"
    width = int(code[1])
    i, n = 0, len(data)
    while i < n:
        if i + width > n:
            yield None, i, n
            return
        unit = int.from_bytes(data[i : i + width], order)
        if width == 4:
            valid = unit <= 0x10FFFF and not 0xD800 <= unit <= 0xDFFF
            yield (unit if valid else None), i, i + 4
            i += 4
            continue
        if 0xD800 <= unit <= 0xDBFF and i + 4 <= n:
            low = int.from_bytes(data[i + 2 : i + 4], order)
            if 0xDC00 <= low <= 0xDFFF:
                yield 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), i, i + 4
                i += 4
                continue
        yield (None if 0xD800 <= unit <= 0xDFFF else unit), i, i + 2
        i += 2


def _byte_units(data: bytes, ascii_only: bool):
    for i, byte in enumerate(data):
        yield (None if ascii_only and byte > 0x7F else byte), i, i + 1


def decode(
    data: bytes,
    code: str,
    errors: str,
    replacement: int,
    replace_controls: bool,
    controls_are_errors: bool = False,
) -> tuple[list, list]:
    """The code points of ``data`` and the byte offset each starts at, as TensorFlow's
    kernels give them: a malformed part is an error (``errors="strict"``), dropped
    (``"ignore"``) or ``replacement``; with ``replace_controls`` so is U+0000 to U+001F, though
    in strict mode only UnicodeTranscode (``controls_are_errors``) fails on one."""
    if code == "utf8":
        units = _utf8_units(data)
    elif code in ("latin1", "ascii"):
        units = _byte_units(data, code == "ascii")
    else:
        units = _wide_units(data, code)
    points, starts = [], []
    for point, start, _end in units:
        malformed = point is None
        if malformed and errors == "strict":
            raise TextError("Invalid formatting on input string")
        if malformed or (replace_controls and point <= 0x1F):
            if errors == "strict" and controls_are_errors:
                raise TextError("Invalid formatting on input string")
            if errors == "ignore":
                continue
            point = replacement
        points.append(point)
        starts.append(start)
    return points, starts


def valid_point(point: int) -> bool:
    return 0 <= point <= 0x10FFFF and not 0xD800 <= point <= 0xDFFF


def encode(points, encoding: str, errors: str, replacement: int) -> bytes:
    """The code points ``points`` in ``encoding`` (one of `ENCODINGS`)."""
    chars = []
    for point in points:
        point = int(point)
        if not valid_point(point):
            if errors == "strict":
                raise TextError(f"Invalid code point {point}")
            if errors == "ignore":
                continue
            point = replacement
        chars.append(chr(point))
    return "".join(chars).encode(ENCODINGS[encoding])

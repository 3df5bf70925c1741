"""How TensorFlow prints a tensor's value: ``Tensor::SummarizeValue`` in its print form.

``tf.print`` (the ``PrintV2`` op) and ``tf.strings.format`` show values this way, and so do
they here: ``1.0`` prints as ``1``, a float32 with the shortest of 6 or 9 significant digits
that reads back as the same number, bools as ``1``/``0``, strings quoted and C-escaped, and at
most ``summarize`` elements at each end of every dimension with ``...`` between.

Layer: ops (``dataflow.ops``); numpy only.
"""

from __future__ import annotations

import numpy as np


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


def format_element(value, kind: str) -> str:
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


def summarize_value(array: np.ndarray, summarize: int) -> str:
    """TensorFlow's ``Tensor::SummarizeValue(summarize, print_v2=true)`` of ``array``."""
    kind = "S" if array.dtype == object else array.dtype.kind
    kind = "f" if kind == "f" else kind
    if array.ndim == 0:
        return format_element(array[()], kind)
    flat = array.reshape(-1)
    ends = flat.size if summarize < 0 else min(summarize, flat.size)
    rank, shape = array.ndim, array.shape
    parts: list = []

    def spacing(dim: int) -> None:
        parts.append(" " if dim == rank - 1 else "\n" * (rank - dim - 1) + " " * (dim + 1))

    def one_dim(dim: int, index: int) -> None:
        if dim == rank:
            parts.append(format_element(flat[index], kind))
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

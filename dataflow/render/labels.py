"""The text of a picture: an op's label (its name, type and shapes, attributes that matter) and
an edge's (dtype and shape), escaped for Graphviz."""

from __future__ import annotations

import html
import re
from typing import Optional

import numpy as np

from ..framework.graph import (
    Operation,
    Tensor,
)
from .clusters import (
    _Box,
    _kind,
)
from .style import (
    _KIND_CATEGORY,
    _LOOP_FILLS,
    _SUBTLE,
    _TYPE_CATEGORY,
)


# -- labels ----------------------------------------------------------------------------------------
def _category(op: Operation, loop_cond_ops: set) -> str:
    kind = _kind(op)
    if kind in _KIND_CATEGORY:
        return _KIND_CATEGORY[kind]
    if op in loop_cond_ops:
        return "loop_cond"
    category = _TYPE_CATEGORY.get(op.type)
    if category is not None:
        return category
    return "stateful" if getattr(op.op_def, "stateful", False) else "op"


def _html_label(title: str, subtitle: str, subtitle_size: int = 8) -> str:
    return (
        f"<{html.escape(title)}<br/>"
        f'<font point-size="{subtitle_size}" color="{_SUBTLE}">{html.escape(subtitle)}</font>>'
    )


def _const_text(op: Operation) -> Optional[str]:
    value = op.attrs.get("value")
    if not isinstance(value, np.ndarray) or value.size > 4:
        return None
    items = [_scalar_text(x) for x in value.reshape(-1)]
    text = items[0] if value.ndim == 0 else "[" + ", ".join(items) + "]"
    return text if len(text) <= 18 else None


def _scalar_text(x) -> str:
    if isinstance(x, np.floating):
        return np.format_float_positional(x, precision=4, trim="0")
    return str(x.item() if isinstance(x, np.generic) else x)


def _tensor_text(t: Tensor) -> str:
    if t.dtype.name == "resource":
        return "resource"
    return f"{t.dtype.name} {t.shape}"


# Longer names relative to their box (made by gradients inside loops) are cut in the middle, so
# that a row of them does not widen the picture; the tooltip has the full name.
_LABEL_CHARACTERS = 36


def _shortened(name: str) -> str:
    if len(name) <= _LABEL_CHARACTERS:
        return name
    tail = _LABEL_CHARACTERS * 2 // 3
    return name[: _LABEL_CHARACTERS - tail - 1] + "…" + name[-tail:]


# The suffix that makes a name unique: "Switch_3" is named after its type, like "Switch".
_UNIQUE_SUFFIX = re.compile(r"_\d+\Z")


def _box_label(box: _Box) -> str:
    if box.kind in ("while", "cond"):
        return f"<<b>{html.escape(box.label)}</b>>"
    return box.label


_BOX_STYLES = {
    "scope": {
        "style": "rounded",
        "color": "#B0BEC5",
        "fontcolor": _SUBTLE,
        "penwidth": "1",
        "bgcolor": "transparent",
    },
    "cond": {
        "style": "rounded,filled",
        "fillcolor": "#FFFDE7",
        "color": "#F9A825",
        "fontcolor": "#8D6E00",
        "penwidth": "1.5",
    },
    "true": {
        "style": "rounded,filled",
        "fillcolor": "#E8F5E9",
        "color": "#66BB6A",
        "fontcolor": "#2E7D32",
        "penwidth": "1",
    },
    "false": {
        "style": "rounded,filled",
        "fillcolor": "#FFEBEE",
        "color": "#EF5350",
        "fontcolor": "#C62828",
        "penwidth": "1",
    },
    "while": {
        "style": "rounded,filled",
        "color": "#1E88E5",
        "fontcolor": "#1565C0",
        "penwidth": "1.5",
    },
}


def _box_style(box: _Box) -> dict[str, str]:
    if box.kind == "branch":
        style = dict(_BOX_STYLES[box.label])
    else:
        style = dict(_BOX_STYLES[box.kind])
    if box.kind == "while":
        style["fillcolor"] = _LOOP_FILLS[min(box.loop_depth, len(_LOOP_FILLS) - 1)]
    return style

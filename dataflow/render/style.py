"""How a picture looks: the colours, shapes and fonts of each kind of op and edge, which ops are
forward, backward or updates, and the colours of devices."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from executor.program import NodeKind

from ..framework.device import DeviceSpec, canonical_name
from ..framework.graph import Graph, Operation
from ..framework.graph_keys import GraphKeys

# -- visual conventions ----------------------------------------------------------------------------
_NODE_STYLES: dict[str, dict[str, str]] = {
    "op": {"shape": "box", "style": "rounded,filled", "fillcolor": "#FFFFFF", "color": "#546E7A"},
    "stateful": {
        "shape": "box",
        "style": "rounded,filled",
        "fillcolor": "#FFFFFF",
        "color": "#E65100",
    },
    "const": {
        "shape": "box",
        "style": "filled",
        "fillcolor": "#ECEFF1",
        "color": "#B0BEC5",
        "fontsize": "8",
        "height": "0.2",
        "margin": "0.06,0.02",
    },
    "placeholder": {
        "shape": "parallelogram",
        "style": "filled",
        "fillcolor": "#DCEDC8",
        "color": "#558B2F",
        "margin": "0.02,0.04",
    },
    "variable": {
        "shape": "cylinder",
        "style": "filled",
        "fillcolor": "#FFE0B2",
        "color": "#E65100",
    },
    "switch": {
        "shape": "triangle",
        "style": "filled",
        "fillcolor": "#E1BEE7",
        "color": "#8E24AA",
        "margin": "0.02,0",
    },
    "merge": {
        "shape": "invtriangle",
        "style": "filled",
        "fillcolor": "#C5CAE9",
        "color": "#3949AB",
        "margin": "0.02,0",
    },
    "enter": {"shape": "invhouse", "style": "filled", "fillcolor": "#B2DFDB", "color": "#00897B"},
    "exit": {"shape": "house", "style": "filled", "fillcolor": "#B2DFDB", "color": "#00897B"},
    "next_iteration": {
        "shape": "larrow",
        "style": "filled",
        "margin": "0.14,0.03",
        "fillcolor": "#F8BBD0",
        "color": "#C2185B",
    },
    "loop_cond": {
        "shape": "diamond",
        "style": "filled",
        "fillcolor": "#FFE082",
        "color": "#FF8F00",
        "margin": "0.02,0",
    },
    "send": {"shape": "cds", "style": "filled", "fillcolor": "#FFFFFF", "color": "#455A64"},
    "recv": {"shape": "cds", "style": "filled", "fillcolor": "#FFFFFF", "color": "#455A64"},
    "collapsed": {
        "shape": "box3d",
        "style": "filled",
        "fillcolor": "#CFD8DC",
        "color": "#455A64",
    },
    "collapsed_while": {
        "shape": "box3d",
        "style": "filled",
        "fillcolor": "#BBDEFB",
        "color": "#1E88E5",
    },
    "collapsed_cond": {
        "shape": "box3d",
        "style": "filled",
        "fillcolor": "#FFF59D",
        "color": "#F9A825",
    },
}


_KIND_CATEGORY = {
    NodeKind.SWITCH: "switch",
    NodeKind.MERGE: "merge",
    NodeKind.ENTER: "enter",
    NodeKind.EXIT: "exit",
    NodeKind.NEXT_ITERATION: "next_iteration",
}


# Source ops are told apart by type: they have no node kind of their own.
_TYPE_CATEGORY = {
    "Const": "const",
    "Placeholder": "placeholder",
    "PlaceholderWithDefault": "placeholder",
    "VarHandleOp": "variable",
    "_Send": "send",
    "_Recv": "recv",
}


_LOOP_FILLS = ("#E3F0FC", "#CCE2F8", "#B6D4F3", "#A0C6EE")


_EDGE_COLORS = {
    "data": "#546E7A",
    "true": "#2E7D32",
    "false": "#C62828",
    "back": "#C2185B",
    "control": "#90A4AE",
    "gradient": "#AD1457",  # the edges leaving backward ops
    "pair": "#455A64",  # from a _Send to its _Recv, when the sender is on no device
}


_ROLE_STYLES = {
    "backward": {"fill": "#FCE4EC", "color": "#AD1457", "box_fill": "#FFF5F8"},
    "update": {"fill": "#EDE7F6", "color": "#5E35B1", "box_fill": "#F8F5FD"},
}


_ROLE_TITLES = {"backward": "backward (gradients)", "update": "update (optimizer)"}


# Categories whose own fill says nothing: a role recolours them entirely.
_ROLE_FILLED = ("op", "stateful", "const")


def _roles(graph: Graph, ops: list[Operation]) -> dict[Operation, str]:
    """The role of each drawn op that has one."""
    train_scopes = [
        op.name for op in graph.get_collection(GraphKeys.TRAIN_OP) if isinstance(op, Operation)
    ]
    backward = set(graph.get_collection(GraphKeys.BACKWARD_OPS))
    roles = {}
    for op in ops:
        if op in backward:
            roles[op] = "backward"
        elif any(op.name == s or op.name.startswith(s + "/") for s in train_scopes):
            roles[op] = "update"
    return roles


def _box_role(box, roles: dict) -> Optional[str]:
    """The role of a name-scope box: that of its ops when they all share one."""
    if box.kind != "scope":
        return None
    found = {roles.get(op) for op in box.all_ops()}
    return found.pop() if len(found) == 1 else None


def _apply_role(attrs: dict[str, str], category: str, role: Optional[str]) -> dict[str, str]:
    if role is None:
        return attrs
    style = _ROLE_STYLES[role]
    attrs["color"] = style["color"]
    if category in _ROLE_FILLED or category.startswith("collapsed"):
        attrs["fillcolor"] = style["fill"]
    return attrs


def _role_box_style(style: dict[str, str], role: Optional[str]) -> dict[str, str]:
    if role is None:
        return style
    colours = _ROLE_STYLES[role]
    style = dict(style, color=colours["color"], fontcolor=colours["color"])
    style.update(style="rounded,filled", fillcolor=colours["box_fill"])
    style.pop("bgcolor", None)
    return style


# -- devices -------------------------------------------------------------------------------------
# Each device has a colour: (fill of its ordinary ops, fill of its box, border).  Devices take
# them in order of their names, so /cpu:0 is always blue; more devices than colours reuse them.
_DEVICE_COLOURS = (
    ("#BBDEFB", "#F3F9FE", "#1565C0"),
    ("#C8E6C9", "#F4FAF4", "#2E7D32"),
    ("#FFE0B2", "#FFF8F0", "#E65100"),
    ("#E1BEE7", "#FAF3FB", "#6A1B9A"),
    ("#B2DFDB", "#F0F9F8", "#00695C"),
    ("#FFCDD2", "#FFF5F6", "#C62828"),
    ("#D7CCC8", "#F8F5F4", "#4E342E"),
    ("#F0F4C3", "#FBFCF0", "#827717"),
)


# Categories whose fill says nothing about the op: a device recolours them entirely (the
# control-flow primitives, and _Send/_Recv, keep their fill and take the device's border).
_DEVICE_FILLED = ("op", "stateful", "const")


def _canonical_device(name: str) -> str:
    try:
        return canonical_name(name)
    except ValueError:
        return name


def _short_device(name: str) -> str:
    """A device name as the picture shows it: ``/job:localhost/replica:0/task:0/device:CPU:1``
    is ``CPU:1``, ``/job:worker/replica:0/task:1/device:CPU:0`` is ``worker/task:1/CPU:0``."""
    try:
        spec = DeviceSpec.from_string(name)
    except ValueError:
        return name
    parts = []
    if spec.job not in (None, "localhost"):
        parts.append(spec.job)
    if spec.task is not None and (spec.job not in (None, "localhost") or spec.task != 0):
        parts.append(f"task:{spec.task}")
    if spec.device_type is not None:
        index = "*" if spec.device_index is None else spec.device_index
        parts.append(f"{spec.device_type}:{index}")
    return "/".join(parts) or name


def _device_order(name: str) -> list:
    """Sorts device names with their numbers as numbers (CPU:2 before CPU:10)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


@dataclass
class _Devices:
    """The device each drawn op is assigned (canonical full name; ops on none are left out)
    and the colours of the devices: ``(op fill, box fill, border)``."""

    of: dict = field(default_factory=dict)
    colours: dict = field(default_factory=dict)

    @classmethod
    def find(cls, ops: list[Operation], placement: Optional[dict]) -> _Devices:
        """``placement`` (op name -> device, as the placer gives) where it names the op, else
        the op's own ``device`` annotation."""
        placement = placement or {}
        of = {}
        for op in ops:
            device = placement.get(op.name) or getattr(op, "device", "")
            if device:
                of[op] = _canonical_device(str(device))
        names = sorted(set(of.values()), key=_device_order)
        colours = {name: _DEVICE_COLOURS[i % len(_DEVICE_COLOURS)] for i, name in enumerate(names)}
        return cls(of, colours)


def _apply_device(attrs: dict[str, str], category: str, colours: Optional[tuple]) -> dict:
    if colours is None:
        return attrs
    op_fill, _, border = colours
    attrs["color"] = border
    attrs.setdefault("penwidth", "1.6")
    if category in _DEVICE_FILLED:
        attrs["fillcolor"] = op_fill
    return attrs


def _pair_key(op: Operation) -> tuple:
    """What a ``_Send`` and the ``_Recv`` it feeds share (their rendezvous key, less the frame
    and iteration, which only a run knows)."""
    attrs = op.attrs
    return (
        _canonical_device(str(attrs.get("send_device", ""))),
        attrs.get("send_device_incarnation"),
        _canonical_device(str(attrs.get("recv_device", ""))),
        attrs.get("tensor_name"),
    )


_FONT = "Helvetica,Arial,sans-serif"


_TEXT = "#263238"


_SUBTLE = "#607D8B"

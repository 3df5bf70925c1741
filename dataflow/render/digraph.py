"""Drawing graphs with Graphviz: `render` writes a picture, `graph_to_digraph` builds it.

Both return a `Picture`, a ``graphviz.Digraph`` whose ``.source`` is the DOT text and which
Jupyter shows inline.  Turning DOT into an image is `dataflow.render.engine`'s work: with
Graphviz's ``dot`` program when it is installed, else with the Graphviz that dataflow installs
(compiled to WebAssembly; svg and png).  ``render(..., format="dot")`` needs neither.

What the picture shows (``render(..., legend=True)`` adds a key):

==================  ==================================  ====================================
 node                shape                               colour
==================  ==================================  ====================================
 ordinary op         rounded box                         white, slate border
 stateful op         rounded box                         white, orange border
 Const               small box, ``name = value``         light grey
 Placeholder         parallelogram                       light green
 VarHandleOp         cylinder                            orange
 Switch              triangle (one in, two out)          purple
 Merge               inverted triangle (many in, one)    indigo
 Enter / Exit        inverted house / house              teal
 NextIteration       left arrow                          magenta
 LoopCond            diamond                             amber
 collapsed scope     3-D box with its op count           blue-grey (a loop blue, a cond
                                                         yellow, a variable a cylinder)
==================  ==================================  ====================================

A node is labelled with its name relative to the box it sits in (the full name, the user's
line that created it and the device it was built for, if any, are in the SVG tooltip) and,
below, its type, unless the name already says it (``Switch_1``).  A constant Enter (a loop
invariant) says so.

Edges: data edges are solid and labelled ``dtype shape`` (``float32 (?, 3)``; ``×2`` when an op
takes one tensor twice); control edges are dashed; a Switch's outputs are labelled ``T``
(output 1, green) and ``F`` (output 0, red); a loop's ``NextIteration -> Merge`` back edge is
thick magenta and does not constrain the layout, so a loop still reads from top to bottom.
When ``render`` is given fetches, the fetched ops have a thick border.

Forward and backward.  The ops `dataflow.autodiff.gradients` added (those it listed in the graph's
``GraphKeys.BACKWARD_OPS`` collection, whatever the name scope they were given) are drawn rose:
an ordinary op rose-filled, a control-flow primitive keeping its fill with a rose border, and
the edges leaving them, the gradients flowing backwards, rose.  The ops an optimizer added to
apply them (the ops of each op in the ``train_op`` collection: ``GradientDescent`` and
everything under ``GradientDescent/``) are drawn lavender.  Their name-scope boxes are tinted
and labelled likewise, and the legend gains the two kinds when the picture holds them.  So
``render(train_op)`` shows the forward graph and the backward graph built from it in one
picture, told apart.

Given ``run_metadata``, the picture also shows what that run did (which ops ran and for how
long, which fired dead, each loop's iterations); that layer lives in ``dataflow.render.overlay``
and is applied through three hooks in `_Builder` (nodes, loop boxes, collapsed boxes), after
the colours above.

Devices.  An op placed on a device (``render(..., placement=...)``, else its ``device()``
annotation) takes the device's colour: an ordinary op is filled with it, a control-flow
primitive keeps its fill and takes the device's border; a key of the devices is added.
``group_by_device=True`` draws one box per device.  ``_Send`` and ``_Recv`` (tag shapes, labelled
with the device they send to or receive from) are joined, when both are drawn, by a dashed edge
labelled with the tensor they carry, so a run's partition graphs (a list or dict of graphs)
render as one picture, each partition in the box of its device.

Boxes: a while loop is a blue box labelled with its name and ``parallel_iterations`` (nested
loops are darker); a cond is a yellow box holding ``Switch(pred, pred)``, its result Merges,
and its two branches, ``true`` (green) and ``false`` (red), each with the Switches that capture
tensors into it.  Name scopes are thin grey boxes.

Which box an op goes in.  Control flow first, from the records `primitives` keeps (the
``CondContext``/``WhileContext`` in ``op._control_flow_context`` and the graph collections): an
op sits in the innermost branch or loop it was built in; a loop's Enters and Exits sit just
inside the loop although their outputs lie in the frames around it; a cond's
``Switch(pred, pred)`` and result Merges sit in the cond's box although they belong to the
context around it.  A loop written by hand with the raw primitives leaves no record: its frame
is found the way the executor finds it (from the Enters' ``frame_name``) and drawn as a
``frame`` box.  Then, within each box and at the top level, ops are grouped by name scope.  A
scope is not drawn when it would add nothing: a single op, or an op with the constants and
captures made for its operands (``add`` with ``add/y``).  An op named like a scope (a variable
``w`` beside ``w/read``) sits in that scope.  So each op is drawn exactly once, and a name scope
that straddles a loop's boundary becomes two boxes.
"""

from __future__ import annotations

import heapq
import html
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import graphviz
import numpy as np

from executor.program import NodeKind

from ..framework import nest
from ..framework.device import DeviceSpec, canonical_name
from ..framework.graph import (
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    get_default_graph,
    register_svg_drawer,
)
from .engine import GraphvizNotFoundError, draw, resolve_engine, svg_to_png

__all__ = ["GraphvizNotFoundError", "Picture", "graph_to_digraph", "render"]

FORMATS = ("png", "svg", "pdf", "dot")
_EXTENSIONS = {"png": "png", "svg": "svg", "pdf": "pdf", "dot": "dot", "gv": "dot"}

# Above this many nodes, data edges are not labelled unless asked (labels double the layout).
_EDGE_LABEL_LIMIT = 150

_FONT = "Helvetica,Arial,sans-serif"
_TEXT = "#263238"
_SUBTLE = "#607D8B"


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


# -- forward, backward and update ops ------------------------------------------------------------
# An op's role in training: "backward" (added by `gradients`) or "update" (added by an
# optimizer); ops of the forward graph have no role.

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


# -- the cluster tree ------------------------------------------------------------------------------
@dataclass(eq=False)
class _Box:
    """A cluster of the picture: the top level, a loop, a cond, a branch or a name scope.

    ``prefix`` is the name prefix that node labels inside are shown relative to; ``name`` is
    what ``collapse_scopes`` matches (None: cannot be collapsed).
    """

    kind: str  # "root", "device", "while", "cond", "branch", "scope"
    label: str = ""
    prefix: str = ""
    name: Optional[str] = None
    context: Any = None
    parent: Optional[_Box] = None
    ops: list = field(default_factory=list)
    children: list = field(default_factory=list)
    collapsed: bool = False

    @property
    def loop_depth(self) -> int:
        box, depth = self.parent, 0
        while box is not None:
            depth += box.kind == "while"
            box = box.parent
        return depth

    def is_within(self, other: _Box) -> bool:
        box: Optional[_Box] = self
        while box is not None:
            if box is other:
                return True
            box = box.parent
        return False

    def all_ops(self) -> list:
        ops = list(self.ops)
        for child in self.children:
            ops.extend(child.all_ops())
        return ops


def _strip(name: Any) -> str:
    return str(name or "").rstrip("/")


def _as_op(x: Any) -> Optional[Operation]:
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    return None


def _ops_of(record: Any) -> list[Operation]:
    """The ops named by a context attribute that may hold an op, a tensor or a list of them."""
    if record is None:
        return []
    items = record if isinstance(record, (list, tuple, set)) else [record]
    return [op for op in map(_as_op, items) if op is not None]


def _is_while(context: Any) -> bool:
    return hasattr(context, "frame_name") or hasattr(context, "loop_enters")


def _is_cond(context: Any) -> bool:
    return hasattr(context, "branch") and hasattr(context, "pred")


def _kind(op: Operation) -> NodeKind:
    return getattr(op.op_def, "kind", NodeKind.OP)


def _producers_first(ops: list[Operation]) -> list[Operation]:
    """``ops`` in a topological order of their data and control edges, leaving out the back
    edges (NextIteration -> Merge), and in the given order where the edges leave it free."""
    drawn = set(ops)
    waiting_on = {}
    consumers: dict[Operation, list[Operation]] = {}
    for op in ops:
        producers = {
            p
            for p in [t.op for t in op.inputs] + list(op.control_inputs)
            if p in drawn and not (_kind(p) == NodeKind.NEXT_ITERATION and p is not op)
        }
        waiting_on[op] = len(producers)
        for p in producers:
            consumers.setdefault(p, []).append(op)
    position = {op: i for i, op in enumerate(ops)}
    ready = [(position[op], op) for op in ops if waiting_on[op] == 0]
    heapq.heapify(ready)
    ordered = []
    while ready:
        _, op = heapq.heappop(ready)
        ordered.append(op)
        for consumer in consumers.get(op, ()):
            waiting_on[consumer] -= 1
            if waiting_on[consumer] == 0:
                heapq.heappush(ready, (position[consumer], consumer))
    seen = set(ordered)
    return ordered + [op for op in ops if op not in seen]  # a cycle: keep what is left as given


class _Layout:
    """Assigns every drawn op to exactly one box."""

    def __init__(self, ops: list[Operation], graph: Graph):
        self.ops = ops
        self.drawn = set(ops)
        self.root = _Box("root")
        self.box_of_context: dict[int, _Box] = {}
        self.cond_boxes: dict[tuple, _Box] = {}
        self.loop_cond_ops: set[Operation] = set()
        contexts = self._contexts(graph)
        for context in contexts:
            self._box_for_context(context)
        self.home = {op: self._default_home(op) for op in ops}
        self.loops_by_frame: dict[str, list[_Box]] = {}
        for context in contexts:
            if _is_while(context) and getattr(context, "frame_name", None) is not None:
                box = self.box_of_context[id(context)]
                self.loops_by_frame.setdefault(str(context.frame_name), []).append(box)
        self._place_unrecorded_frames()
        self._find_loop_conditions()
        self._claim_loop_ops(contexts)
        self._claim_cond_ops(contexts)
        for op in ops:
            self.home[op].ops.append(op)

    def _contexts(self, graph: Graph) -> list:
        seen: dict[int, Any] = {}

        def visit(context):
            while context is not None and id(context) not in seen:
                seen[id(context)] = context
                context = getattr(context, "outer_context", None)

        for op in self.ops:
            visit(getattr(op, "_control_flow_context", None))
        for key in (GraphKeys.WHILE_CONTEXT, GraphKeys.COND_CONTEXT):
            for context in graph.get_collection(key):
                if self._has_drawn_ops(context):
                    visit(context)
        return [c for c in seen.values() if _is_while(c) or _is_cond(c)]

    def _has_drawn_ops(self, context) -> bool:
        for attr in ("pivot", "loop_enters", "exits", "merges", "switches", "next_iterations"):
            if any(op in self.drawn for op in _ops_of(getattr(context, attr, None))):
                return True
        return False

    def _box_for_context(self, context) -> _Box:
        """The box of a loop or of one branch of a cond (made on first use)."""
        if context is None:
            return self.root
        box = self.box_of_context.get(id(context))
        if box is not None:
            return box
        outer = self._outer_box(context)
        name = _strip(getattr(context, "name", ""))
        if _is_while(context):
            parallel = getattr(context, "parallel_iterations", None)
            label = f"while_loop  {name}" + (
                f"   (parallel_iterations={parallel})" if parallel is not None else ""
            )
            box = _Box("while", label, name, name, context, outer)
            outer.children.append(box)
            self.loop_cond_ops.update(_ops_of(getattr(context, "loop_cond", None)))
        else:
            pred = getattr(context, "pred", None)
            key = (id(outer), name, id(pred))
            cond_box = self.cond_boxes.get(key)
            if cond_box is None:
                pred_name = getattr(pred, "name", None)
                label = f"cond  {name}" + (f"   (pred: {pred_name})" if pred_name else "")
                cond_box = _Box("cond", label, name, name, context, outer)
                outer.children.append(cond_box)
                self.cond_boxes[key] = cond_box
            taken = bool(getattr(context, "branch", 0))
            box = _Box("branch", "true" if taken else "false", name, None, context, cond_box)
            # The false branch first, as in Merge([false_result, true_result]).
            cond_box.children.append(box)
            cond_box.children.sort(key=lambda b: b.label == "true")
        self.box_of_context[id(context)] = box
        return box

    def _outer_box(self, context) -> _Box:
        outer = getattr(context, "outer_context", None)
        while outer is not None and not (_is_while(outer) or _is_cond(outer)):
            outer = getattr(outer, "outer_context", None)
        return self._box_for_context(outer)

    def _default_home(self, op: Operation) -> _Box:
        context = getattr(op, "_control_flow_context", None)
        while context is not None and not (_is_while(context) or _is_cond(context)):
            context = getattr(context, "outer_context", None)
        return self._box_for_context(context)

    def _claim(self, op: Operation, box: _Box) -> None:
        """Moves ``op`` into ``box`` unless it already sits somewhere inside it."""
        if op in self.drawn and not self.home[op].is_within(box):
            self.home[op] = box

    def _place_unrecorded_frames(self) -> None:
        """Gives loops written by hand with the raw primitives (which leave no record) a box.

        Their frames are found the way the executor finds them: an op lies in the frame of its
        inputs, except that an Enter's output lies in its child frame and an Exit's output in
        the parent frame.  Ops are visited producers first, back edges aside (a partition
        graph creates a control loop's Switch before its Merge).
        """
        if not any(_kind(op) == NodeKind.ENTER for op in self.ops):
            return
        output_frame: dict[Operation, tuple] = {}
        frame_of: dict[Operation, tuple] = {}
        parallel: dict[str, Any] = {}
        for op in _producers_first(self.ops):
            frame: tuple = ()
            for producer in [t.op for t in op.inputs] + op.control_inputs:
                if producer in output_frame:
                    frame = output_frame[producer]
                    break
            frame_of[op] = frame
            kind = _kind(op)
            if kind == NodeKind.ENTER:
                name = str(op.attrs.get("frame_name"))
                parallel.setdefault(name, op.attrs.get("parallel_iterations"))
                output_frame[op] = frame + (name,)
            elif kind == NodeKind.EXIT:
                output_frame[op] = frame[:-1]
            else:
                output_frame[op] = frame
        boxes: dict[tuple, _Box] = {}

        def box_for(frame: tuple) -> _Box:
            if not frame:
                return self.root
            recorded = self.loops_by_frame.get(frame[-1])
            if recorded and recorded[0].context is not None:
                return recorded[0]
            if frame not in boxes:
                outer = box_for(frame[:-1])
                name, count = frame[-1], parallel.get(frame[-1])
                label = f"frame  {name}" + (
                    f"   (parallel_iterations={count})" if count is not None else ""
                )
                box = _Box("while", label, "", name, None, outer)
                outer.children.append(box)
                boxes[frame] = box
                self.loops_by_frame.setdefault(name, []).append(box)
            return boxes[frame]

        for op in self.ops:
            if getattr(op, "_control_flow_context", None) is None and frame_of[op]:
                self.home[op] = box_for(frame_of[op])
        for op in self.ops:
            if _kind(op) == NodeKind.ENTER and getattr(op, "_control_flow_context", None) is None:
                box_for(output_frame[op])

    def _find_loop_conditions(self) -> None:
        """The predicate of a Switch that feeds an Exit is a loop's condition (for loops written
        by hand too, which have no record of it)."""
        exits_of = {t.op for op in self.ops if _kind(op) == NodeKind.EXIT for t in op.inputs}
        for op in exits_of:
            if _kind(op) == NodeKind.SWITCH and len(op.inputs) == 2:
                pred = op.inputs[1].op
                if _kind(pred) == NodeKind.OP:
                    self.loop_cond_ops.add(pred)

    def _claim_loop_ops(self, contexts) -> None:
        loops_by_frame = self.loops_by_frame
        for context in contexts:
            if not _is_while(context):
                continue
            box = self.box_of_context[id(context)]
            for attr in ("loop_enters", "exits", "merges", "switches", "next_iterations"):
                for op in _ops_of(getattr(context, attr, None)):
                    self._claim(op, box)
            for op in _ops_of(getattr(context, "pivot", None)) + _ops_of(
                getattr(context, "loop_cond", None)
            ):
                self._claim(op, box)
        # Enters of captured tensors are not in the records: find them by their frame name.
        for op in self.ops:
            kind = _kind(op)
            if kind == NodeKind.ENTER:
                boxes = loops_by_frame.get(str(op.attrs.get("frame_name")), [])
                outer = [b for b in boxes if b.parent is self.home[op]]
                if outer or boxes:
                    self._claim(op, (outer or boxes)[0])
            elif kind == NodeKind.EXIT and op.inputs and op.inputs[0].op in self.drawn:
                inner = self.home[op.inputs[0].op]
                while inner is not None and inner.kind != "while":
                    inner = inner.parent
                if inner is not None and inner.parent is self.home[op]:
                    self._claim(op, inner)

    def _claim_cond_ops(self, contexts) -> None:
        consumers: dict[Operation, list[Operation]] = {}
        for op in self.ops:
            for t in op.inputs:
                consumers.setdefault(t.op, []).append(op)
            for c in op.control_inputs:
                consumers.setdefault(c, []).append(op)
        for context in contexts:
            if _is_cond(context):
                for op in _ops_of(getattr(context, "pivot", None)):
                    self._claim(op, self.box_of_context[id(context)])
        for cond_box in self.cond_boxes.values():
            pred = getattr(cond_box.context, "pred", None)
            prefix = cond_box.prefix + "/"
            for op in self.ops:
                if _kind(op) != NodeKind.SWITCH or self.home[op] is not cond_box.parent:
                    continue
                if len(op.inputs) < 2 or op.inputs[1] is not pred:
                    continue
                feeds_cond = any(self.home[c].is_within(cond_box) for c in consumers.get(op, ()))
                if feeds_cond or op.name.startswith(prefix):
                    self.home[op] = cond_box
            for op in self.ops:
                if _kind(op) != NodeKind.MERGE or self.home[op] is not cond_box.parent:
                    continue
                sources = [t.op for t in op.inputs]
                if sources and all(
                    s in self.drawn and self.home[s].is_within(cond_box) for s in sources
                ):
                    self.home[op] = cond_box


# -- name scopes -----------------------------------------------------------------------------------
@dataclass(eq=False)
class _Scope:
    """A name scope while boxes are being laid out: ``path`` is its full name."""

    path: str
    ops: list = field(default_factory=list)
    boxes: list = field(default_factory=list)
    children: dict = field(default_factory=dict)
    owner: Optional[Operation] = None  # the op named like the scope


def _relative(name: str, prefix: str) -> str:
    if prefix and name.startswith(prefix + "/"):
        return name[len(prefix) + 1 :]
    if prefix and name == prefix:  # the op a scope is named after, drawn inside it
        return name.rsplit("/", 1)[-1]
    return name


def _group_by_scope(box: _Box) -> None:
    """Puts name-scope boxes between ``box`` and its ops and loop/cond children, recursively."""
    top = _Scope(box.prefix)
    # Ops named inside a loop's or cond's scope but built outside it (a loop's initial values)
    # sit beside its box, not in a second box of the same name.
    flow_prefixes = {child.prefix for child in box.children if child.kind != "branch"}

    def scope_of(name: str) -> _Scope:
        if box.prefix and name.startswith(box.prefix + "/"):
            parts, path = name[len(box.prefix) + 1 :].split("/")[:-1], box.prefix
        else:
            parts, path = name.split("/")[:-1], ""
        scope = top
        for part in parts:
            path = f"{path}/{part}" if path else part
            if path in flow_prefixes:
                break
            scope = scope.children.setdefault(path, _Scope(path))
        return scope

    for op in box.ops:
        scope_of(op.name).ops.append(op)
    for child in box.children:
        if child.kind == "branch":
            top.boxes.append(child)
        else:
            scope_of(child.prefix).boxes.append(child)
    _adopt_namesakes(top)
    _simplify(top)
    # Inside a loop or cond, one scope around everything adds nothing.
    while box.kind != "root" and not top.ops and not top.boxes and len(top.children) == 1:
        (only,) = top.children.values()
        top = _Scope(box.prefix, only.ops, only.boxes, only.children)
    box.ops, box.children = [], []
    _attach(top, box)
    _group_inner(box)


def _group_inner(box: _Box) -> None:
    for child in box.children:
        if child.kind == "scope":
            _group_inner(child)
        else:
            _group_by_scope(child)


def _adopt_namesakes(scope: _Scope) -> None:
    """An op named like a scope (a variable ``w`` beside ``w/read``) goes into that scope."""
    for op in list(scope.ops):
        if op.name in scope.children:
            scope.ops.remove(op)
            scope.children[op.name].ops.insert(0, op)
            scope.children[op.name].owner = op
    for child in scope.children.values():
        _adopt_namesakes(child)


def _simplify(scope: _Scope) -> None:
    """Dissolves scopes that add nothing and merges chains of lone sub-scopes.

    A scope adds nothing when it holds a single op, or an op and what was made for its operands
    (``add`` and ``add/y`` from ``x + 1``, and the Switch or Enter that captures ``x`` into a
    branch or loop).
    """
    for key, child in list(scope.children.items()):
        _simplify(child)
        if not child.children and (
            len(child.ops) + len(child.boxes) == 1
            or (
                child.owner is not None
                and not child.boxes
                and all(op is child.owner or _is_operand_helper(op) for op in child.ops)
            )
        ):
            del scope.children[key]
            scope.ops.extend(child.ops)
            scope.boxes.extend(child.boxes)
        elif not child.ops and not child.boxes and len(child.children) == 1:
            (grandchild,) = child.children.values()
            del scope.children[key]
            scope.children[grandchild.path] = grandchild


def _is_operand_helper(op: Operation) -> bool:
    return op.type == "Const" or _kind(op) in (NodeKind.SWITCH, NodeKind.ENTER)


def _attach(scope: _Scope, box: _Box) -> None:
    box.ops.extend(scope.ops)
    for child in scope.boxes:
        child.parent = box
        box.children.append(child)
    for sub in scope.children.values():
        label = _relative(sub.path, box.prefix)
        scope_box = _Box("scope", label, sub.path, sub.path, None, box)
        box.children.append(scope_box)
        _attach(sub, scope_box)


# -- collapsing ------------------------------------------------------------------------------------
# The default view (max_depth="auto").  A graph of at most NODE_BUDGETS[0] ops is drawn whole.
# A bigger one is opened breadth-first within a budget of nodes (an op or a collapsed box each),
# trying the budgets in turn until Graphviz lays the picture out within MAX_WIDTH_PX (at 96 dpi,
# the pixels of a PNG): a count of nodes alone does not bound the width, which depends on how
# many of them sit side by side.  benchmarks/probe_render.py prints the sizes this gives.
NODE_BUDGETS = (80, 60, 45, 30, 20, 12)
# A cond's branch is part of its cond, and a device's box holds a partition: neither is
# ever drawn as one node.
_NEVER_COLLAPSED = ("branch", "device")
MAX_WIDTH_PX = 2500


def _collapsible_children(box: _Box) -> list[_Box]:
    """The boxes just inside ``box`` that can be collapsed, looking through a cond's branches
    (a branch is part of its cond, never collapsed on its own)."""
    found = []
    for child in box.children:
        if child.kind in _NEVER_COLLAPSED:
            found.extend(_collapsible_children(child))
        else:
            found.append(child)
    return found


def _visible_nodes(box: _Box, closed) -> int:
    """How many nodes ``box``'s content is drawn as when the boxes in ``closed`` are collapsed."""
    count = len(box.ops)
    for child in box.children:
        if child.kind not in _NEVER_COLLAPSED and child in closed:
            count += 1
        else:
            count += _visible_nodes(child, closed)
    return count


def _named_boxes(root: _Box, names, ops: list[Operation], option: str) -> list[_Box]:
    """The boxes called ``names`` (a name, or a list of them), refusing a name that is not that
    of a box or an op among the drawn ones."""
    names = [names] if isinstance(names, str) else list(names)
    names = {_strip(n) for n in names}
    boxes = [b for b in _walk(root) if b.name and b.kind not in _NEVER_COLLAPSED]
    known = {b.name for b in boxes}
    for name in names:
        if name not in known and not any(
            op.name == name or op.name.startswith(name + "/") for op in ops
        ):
            raise ValueError(
                f"{option}: there is no name scope, loop or cond named {name!r} among "
                f"the drawn ops (scopes: {sorted(known) or 'none'})."
            )
    return [b for b in boxes if b.name in names]


def _collapse(
    root: _Box,
    collapse_scopes,
    ops: list[Operation],
    expand=(),
    max_depth="auto",
    node_budget: int = NODE_BUDGETS[0],
) -> None:
    """Marks the boxes drawn as a single node (and unmarks the others).

    A box is collapsed when ``collapse_scopes`` names it (True: every outermost name scope) or
    when it lies deeper than ``max_depth`` (counting name scopes, loops and conds; a top-level
    box has depth 1), unless ``expand`` names it or a box inside it.  ``max_depth="auto"`` opens
    boxes breadth-first (loops and conds before name scopes at each depth; a variable's scope
    stays closed) while the picture stays within ``node_budget`` nodes, so a graph of at most
    that many ops is drawn whole.
    """
    if max_depth != "auto" and max_depth is not None:
        if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
            raise ValueError(f"max_depth must be 'auto', None or an int >= 0, got {max_depth!r}")
    collapsible = [b for b in _walk(root) if b.kind not in _NEVER_COLLAPSED and b is not root]
    wanted_closed: set = set()
    if collapse_scopes is True:

        def visit(box: _Box) -> None:
            for child in _collapsible_children(box):
                if child.kind == "scope":
                    wanted_closed.add(child)
                else:
                    visit(child)

        visit(root)
    elif collapse_scopes:
        wanted_closed.update(_named_boxes(root, collapse_scopes, ops, "collapse_scopes"))
    wanted_open: set = set()
    for box in _named_boxes(root, expand or (), ops, "expand"):
        while box is not None and box is not root:
            if box.kind not in _NEVER_COLLAPSED:
                wanted_open.add(box)
            box = box.parent
    both = wanted_open & wanted_closed
    if both:
        name = sorted(b.name for b in both)[0]
        raise ValueError(
            f"{name!r} is both collapsed (collapse_scopes) and expanded (expand, which opens "
            "the boxes around what it names too)."
        )
    if max_depth == "auto" and _visible_nodes(root, set()) <= node_budget:
        closed = set()  # a small graph is drawn whole
    elif max_depth == "auto":
        closed = set(collapsible) - wanted_open
        level = _collapsible_children(root)
        while level:
            level.sort(key=lambda b: b.kind == "scope")  # loops and conds first; stable
            next_level = []
            for box in level:
                if box in wanted_closed or (box not in wanted_open and _is_variable_box(box)):
                    continue
                if box in closed:
                    closed.discard(box)
                    if _visible_nodes(root, closed) > node_budget:
                        closed.add(box)
                        continue
                next_level.extend(_collapsible_children(box))
            level = next_level
    elif max_depth is None:
        closed = set()
    else:
        closed = {b for b in collapsible if _box_depth(b) > max_depth} - wanted_open
    for box in collapsible:
        box.collapsed = box in closed or box in wanted_closed


def _is_variable_box(box: _Box) -> bool:
    """A name scope that holds a variable and its helpers (read, assign, initial value, the
    optimizer's slots), drawn collapsed as the variable's cylinder."""
    return box.kind == "scope" and any(
        op.name == box.name and op.type == "VarHandleOp" for op in box.ops
    )


def _collapsed_boxes(root: _Box) -> set:
    return {b for b in _walk(root) if b.collapsed}


def _box_depth(box: _Box) -> int:
    depth = 0
    while box.parent is not None:
        depth += box.kind not in _NEVER_COLLAPSED
        box = box.parent
    return depth


def _walk(box: _Box):
    yield box
    for child in box.children:
        yield from _walk(child)


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


# -- building the Digraph --------------------------------------------------------------------------
class _Builder:
    """Emits the boxes, nodes and edges of a laid-out picture.

    ``node_ids`` names the nodes of ops whose name is not unique in the picture (the ops of
    several partition graphs share names); the others are named by their op name.
    """

    def __init__(
        self,
        ops,
        fetched,
        loop_cond_ops,
        full_names,
        edge_labels,
        roles,
        overlay=None,
        devices=None,
        node_ids=None,
    ):
        self.ops = ops
        self.devices = devices or _Devices()
        self.node_ids = node_ids or {}
        self.roles = roles
        self.overlay = overlay
        self.fetched = fetched
        self.loop_cond_ops = loop_cond_ops
        self.full_names = full_names
        self.edge_labels = edge_labels
        self.rep: dict[Operation, str] = {}
        self.collapsed_ids: set[str] = set()
        self.clusters = 0

    def emit(self, box: _Box, sub) -> None:
        for op in box.ops:
            node_id = self.rep[op] = self.node_ids.get(op, op.name)
            sub.node(node_id, **self.node_attrs(op, box))
        for child in box.children:
            if child.collapsed:
                self.emit_collapsed(child, sub)
                continue
            self.clusters += 1
            slug = "".join(c if c.isalnum() else "_" for c in (child.name or child.label))
            with sub.subgraph(name=f"cluster_{self.clusters}_{child.kind}_{slug}") as cluster:
                if child.kind == "device":
                    cluster.attr(**self.device_box_attrs(child.context))
                    self.emit(child, cluster)
                    continue
                role = _box_role(child, self.roles)
                label = _box_label(child)
                if role is not None and role != _box_role(box, self.roles):
                    label = f"{label}  ·  {_ROLE_TITLES[role]}"  # on the outermost box only
                attrs = {"label": label, **_role_box_style(_box_style(child), role)}
                if self.overlay is not None and child.kind == "while":
                    frame_name = getattr(child.context, "frame_name", None) or child.name
                    self.overlay.decorate_loop(str(frame_name), attrs)
                cluster.attr(**attrs)
                self.emit(child, cluster)

    def device_box_attrs(self, device: str) -> dict[str, str]:
        _, box_fill, border = self.devices.colours.get(device, _DEVICE_COLOURS[0])
        return {
            "label": f"<<b>{html.escape(_short_device(device))}</b>>",
            "tooltip": device,
            "style": "rounded,filled",
            "fillcolor": box_fill,
            "color": border,
            "fontcolor": border,
            "penwidth": "2",
        }

    def node_attrs(self, op: Operation, box: _Box) -> dict[str, str]:
        category = _category(op, self.loop_cond_ops)
        attrs = dict(_NODE_STYLES[category])
        name = op.name if self.full_names else _shortened(_relative(op.name, box.prefix))
        value = _const_text(op) if category == "const" else None
        if value is not None:
            attrs["label"] = f"{name} = {value}"
        elif category == "const":
            attrs["label"] = _html_label(name, op.type, 7)
        elif category == "send":
            to = _short_device(str(op.attrs.get("recv_device", "")))
            attrs["label"] = _html_label(name, f"_Send to {to}")
        elif category == "recv":
            source = _short_device(str(op.attrs.get("send_device", "")))
            attrs["label"] = _html_label(name, f"_Recv from {source}")
        elif category == "enter" and op.attrs.get("is_constant"):
            attrs["label"] = _html_label(name, "Enter (constant)", 7)
        elif _UNIQUE_SUFFIX.sub("", name.rsplit("/", 1)[-1]).lower() == op.type.lower():
            attrs["label"] = name  # "Switch_1" says its type already
        else:
            attrs["label"] = _html_label(name, op.type)
        location = str(getattr(op, "location", "")).replace("\\", "/")
        created = f"\\ncreated at {location}" if location else ""
        device = self.devices.of.get(op) or getattr(op, "device", "")
        on = f"\\non {device}" if device else ""
        attrs["tooltip"] = f"{op.name} ({op.type}){created}{on}"
        if op in self.fetched:
            attrs["penwidth"] = "2.5"
        attrs = _apply_role(attrs, category, self.roles.get(op))
        attrs = _apply_device(attrs, category, self.devices.colours.get(device))
        if self.overlay is not None:
            self.overlay.decorate_node(op, attrs)
        return attrs

    def emit_collapsed(self, box: _Box, sub) -> None:
        ops = box.all_ops()
        node_id = f"[{box.name}]"
        while node_id in self.rep.values():
            node_id += "'"
        for op in ops:
            self.rep[op] = node_id
        self.collapsed_ids.add(node_id)
        kind = {"while": "while_loop", "cond": "cond"}.get(box.kind, "name scope")
        style = {"while": "collapsed_while", "cond": "collapsed_cond"}.get(box.kind, "collapsed")
        owner = [op for op in ops if op.name == box.name]
        if owner and _category(owner[0], self.loop_cond_ops) == "variable":
            kind, style = "variable", "variable"  # a variable with its read and assign ops
        label = _relative(box.name or "", box.parent.prefix if box.parent else "")
        count = f"{len(ops)} op" + ("s" if len(ops) != 1 else "")
        attrs = _apply_role(dict(_NODE_STYLES[style]), style, _box_role(box, self.roles))
        if any(op in self.fetched for op in ops):
            attrs["penwidth"] = "2.5"
        attrs["label"] = _html_label(label, f"{kind} · {count}")
        attrs["tooltip"] = box.name or ""
        if self.overlay is not None:
            frame = None
            if box.kind == "while":
                frame = str(getattr(box.context, "frame_name", None) or box.name)
            self.overlay.decorate_collapsed(ops, attrs, frame)
        sub.node(node_id, **attrs)

    def emit_edges(self, digraph) -> None:
        """One edge per (producer, consumer, tensor); edges into and out of a collapsed box
        are merged per pair of nodes."""
        edges: dict[tuple, list] = {}
        for op in self.ops:
            head = self.rep[op]
            for t in op.inputs:
                tail = self.rep.get(t.op)
                if tail is not None and tail != head:
                    attrs = self.data_edge_attrs(t, op)
                    merge_key = "" if self.is_collapsed(tail, head) else id(t)
                    key = (tail, head, attrs.get("style", "solid"), merge_key)
                    edges.setdefault(key, []).append((t, attrs))
            for c in op.control_inputs:
                tail = self.rep.get(c)
                if tail is not None and tail != head:
                    attrs = {
                        "style": "dashed",
                        "color": _EDGE_COLORS["control"],
                        "arrowhead": "odot",
                    }
                    edges.setdefault((tail, head, "dashed", ""), []).append((None, attrs))
        for (tail, head, _, _), items in edges.items():
            attrs = dict(items[0][1])
            tensors = {id(t) for t, _ in items if t is not None}
            if "label" in attrs:
                if len(tensors) > 1:
                    attrs["label"] = f"{len(tensors)} tensors"
                elif len(items) > 1:
                    attrs["label"] += f"  ×{len(items)}"
            digraph.edge(tail, head, **attrs)
        self.emit_pairs(digraph)

    def emit_pairs(self, digraph) -> None:
        """A dashed edge from each drawn ``_Send`` to its drawn ``_Recv``, labelled with the
        tensor the pair carries, in the sending device's colour."""
        sends = {_pair_key(op): op for op in self.ops if op.type == "_Send"}
        for recv in self.ops:
            send = sends.get(_pair_key(recv)) if recv.type == "_Recv" else None
            if send is None or self.rep[send] == self.rep[recv]:
                continue
            colours = self.devices.colours.get(self.devices.of.get(send))
            colour = colours[2] if colours else _EDGE_COLORS["pair"]
            digraph.edge(
                self.rep[send],
                self.rep[recv],
                label=str(recv.attrs.get("tensor_name", "")),
                style="dashed",
                color=colour,
                fontcolor=colour,
                penwidth="1.5",
                arrowhead="vee",
            )

    def is_collapsed(self, *node_ids: str) -> bool:
        return any(node_id in self.collapsed_ids for node_id in node_ids)

    def data_edge_attrs(self, t: Tensor, consumer: Operation) -> dict[str, str]:
        label = _tensor_text(t) if self.edge_labels else ""
        attrs = {"color": _EDGE_COLORS["data"]}
        if self.roles.get(t.op) == "backward":
            attrs.update(color=_EDGE_COLORS["gradient"], fontcolor=_EDGE_COLORS["gradient"])
        source_kind = _kind(t.op)
        if source_kind == NodeKind.SWITCH:
            side = "true" if t.value_index == 1 else "false"
            mark = "T" if side == "true" else "F"
            label = f"{mark}  {label}" if label else mark
            attrs.update(color=_EDGE_COLORS[side], fontcolor=_EDGE_COLORS[side])
        elif source_kind == NodeKind.MERGE and t.value_index == 1:
            label = f"index  {label}" if label else "index"
        elif source_kind == NodeKind.NEXT_ITERATION and _kind(consumer) == NodeKind.MERGE:
            attrs.update(
                color=_EDGE_COLORS["back"],
                fontcolor=_EDGE_COLORS["back"],
                penwidth="2",
                constraint="false",
                style="bold",
            )
            label = f"next  {label}" if label else "next"
        if label:
            attrs["label"] = label
        return attrs


def _add_device_legend(digraph, colours: dict) -> None:
    """The key of the device colours, one swatch per device in a row; drawn whenever the
    picture colours ops by device."""
    with digraph.subgraph(name="cluster_devices") as key:
        key.attr(label="<<b>devices</b>>", style="rounded", color="#CFD8DC", fontcolor=_SUBTLE)
        ids = []
        for index, (device, (op_fill, _, border)) in enumerate(colours.items()):
            node_id = f"[device {index}]"  # no ":", which an edge would read as a port
            ids.append(node_id)
            key.node(
                node_id,
                label=_short_device(device),
                tooltip=device,
                shape="box",
                style="rounded,filled",
                fillcolor=op_fill,
                color=border,
                penwidth="1.6",
            )
        with key.subgraph() as same:
            same.attr(rank="same")
            for left, right in zip(ids, ids[1:]):
                same.edge(left, right, style="invis")


def _add_legend(digraph, roles: frozenset = frozenset()) -> None:
    samples = [
        ("op", "op", "Add"),
        ("stateful", "stateful op", "Assign"),
        ("const", "constant", "Const"),
        ("placeholder", "placeholder", "Placeholder"),
        ("variable", "variable", "VarHandleOp"),
        ("collapsed", "name scope", "collapsed"),
        ("switch", "Switch", "T / F out"),
        ("merge", "Merge", "first in"),
        ("loop_cond", "LoopCond", "loop test"),
        ("enter", "Enter", "into loop"),
        ("exit", "Exit", "out of loop"),
        ("next_iteration", "NextIteration", "to next"),
    ]
    role_samples = [
        ("backward", "backward op", "added by gradients"),
        ("update", "update op", "added by an optimizer"),
    ]
    samples += [sample for sample in role_samples if sample[0] in roles]
    with digraph.subgraph(name="cluster_legend") as legend:
        legend.attr(
            label="<<b>legend</b>>",
            style="rounded",
            color="#CFD8DC",
            fontcolor=_SUBTLE,
            bgcolor="white",
        )
        ids = []
        for category, title, subtitle in samples:
            node_id = f"[legend] {category}"
            ids.append(node_id)
            if category in _ROLE_STYLES:
                attrs = _apply_role(dict(_NODE_STYLES["op"]), "op", category)
            else:
                attrs = dict(_NODE_STYLES[category])
            attrs["label"] = _html_label(title, subtitle, 7)
            legend.node(node_id, **attrs)
        for row in range(0, len(ids), 3):
            row_ids = ids[row : row + 3]
            with legend.subgraph() as same:
                same.attr(rank="same")
                for node_id in row_ids:
                    same.node(node_id)
                for left, right in zip(row_ids, row_ids[1:]):
                    same.edge(left, right, style="invis")
            if row + 3 < len(ids):
                legend.edge(ids[row], ids[row + 3], style="invis")
        edges = [
            ("data", {"label": "float32 (?, 3)", "color": _EDGE_COLORS["data"]}),
            ("control", {"style": "dashed", "color": _EDGE_COLORS["control"], "arrowhead": "odot"}),
            (
                "back",
                {
                    "label": "next",
                    "color": _EDGE_COLORS["back"],
                    "fontcolor": _EDGE_COLORS["back"],
                    "style": "bold",
                    "penwidth": "2",
                },
            ),
        ]
        if "backward" in roles:
            edges.append(
                (
                    "gradient",
                    {
                        "label": "float32 (?, 3)",
                        "color": _EDGE_COLORS["gradient"],
                        "fontcolor": _EDGE_COLORS["gradient"],
                    },
                )
            )
        tails = []
        for name, attrs in edges:
            tail, head = f"[legend] {name} from", f"[legend] {name} to"
            legend.node(tail, label=f"{name} edge", shape="plaintext", fontsize="8", height="0.2")
            legend.node(head, label="", shape="point", width="0.06", color=_SUBTLE)
            legend.edge(tail, head, **attrs)
            tails.append(tail)
        with legend.subgraph() as same:
            same.attr(rank="same")
            for tail in tails:
                same.node(tail)
            for left, right in zip(tails, tails[1:]):
                same.edge(left, right, style="invis")
        last_row = ids[(len(ids) - 1) // 3 * 3 :]
        legend.edge(last_row[min(1, len(last_row) - 1)], tails[1], style="invis")


# -- the public functions --------------------------------------------------------------------------
class Picture(graphviz.Digraph):
    """The picture `render` returns: a ``graphviz.Digraph`` that draws itself with
    `dataflow.render.engine`, so ``pipe()`` and Jupyter's inline display work without ``dot``.

    ``drawing_engine`` is the engine asked for (``"auto"``, ``"system"``, ``"wasm"``, or None
    for the default); ``pipe`` with Graphviz's own options (a renderer, a formatter, another
    layout engine than dot) is the system ``dot``'s, as in ``graphviz.Digraph``.
    """

    drawing_engine: Optional[str] = None

    def pipe(
        self,
        format: Optional[str] = None,  # noqa: A002 - graphviz.Digraph.pipe's signature
        renderer: Optional[str] = None,
        formatter: Optional[str] = None,
        neato_no_op: Union[bool, int, None] = None,
        quiet: bool = False,
        *,
        engine: Optional[str] = None,
        encoding: Optional[str] = None,
    ) -> Union[bytes, str]:
        if renderer or formatter or neato_no_op or engine not in (None, "dot"):
            return super().pipe(
                format, renderer, formatter, neato_no_op, quiet, engine=engine, encoding=encoding
            )
        data = self.draw(format or self.format)
        return data.decode(encoding) if encoding is not None else data

    def draw(self, fmt: str, target: str = "the picture") -> bytes:
        """The picture in format ``fmt``, drawn by its engine (an SVG laid out already to
        measure the picture is reused)."""
        engine = resolve_engine(self.drawing_engine)
        laid_out = self._laid_out
        if laid_out is not None and laid_out[:2] == (engine, self.source):
            if fmt == "svg":
                return laid_out[2]
            if fmt == "png" and engine == "wasm":
                return svg_to_png(laid_out[2])
        return draw(self.source, fmt, engine, target)

    def measured_width(self, engine: Optional[str] = None) -> Optional[float]:
        """The width in pixels (at 96 dpi) Graphviz lays the picture out at; None when no
        Graphviz can lay it out."""
        self.drawing_engine = engine
        try:
            svg = self.draw("svg")
        except GraphvizNotFoundError:
            return None
        self._laid_out = (resolve_engine(engine), self.source, svg)
        match = re.search(rb'<svg[^>]*?\swidth="([\d.]+)pt"', svg)
        return float(match.group(1)) * 96 / 72 if match else None

    _laid_out: Optional[tuple[str, str, bytes]] = None


GraphOrFetches = Union[Graph, Tensor, Operation, Sequence[Any], dict, None]


def _graphs_given(graph_or_fetches) -> Optional[list[tuple[Optional[str], Graph]]]:
    """The graphs of a list or dict of graphs (partition graphs), each with the device it
    holds: the dict's key, else the one device all its ops are on (None when they are not);
    None when ``graph_or_fetches`` is not such a list or dict."""
    if isinstance(graph_or_fetches, dict):
        items = list(graph_or_fetches.items())
    elif isinstance(graph_or_fetches, (list, tuple)):
        items = [(None, g) for g in graph_or_fetches]
    else:
        return None
    if not items or not all(isinstance(g, Graph) for _, g in items):
        if any(isinstance(g, Graph) for _, g in items):
            raise TypeError(
                "render() draws a Graph, fetches, or a list or dict of Graphs (the partition "
                "graphs of a run); got a mix of Graphs and other things."
            )
        return None
    graphs = []
    for device, graph in items:
        if device is None:
            found = {_canonical_device(op.device) for op in graph.get_operations() if op.device}
            device = found.pop() if len(found) == 1 else None
        graphs.append((_canonical_device(str(device)) if device else None, graph))
    return graphs


def _device_boxes(parts: list[tuple[Optional[str], Graph, list[Operation]]]) -> tuple:
    """Lays out each part (a device, a graph and the ops of it on that device) on its own and
    puts it in a box of kind ``"device"`` (whose ``context`` is the device name); the ops of a
    part on no device go at the top level.  Returns the root box and the loop conditions."""
    root, loop_cond_ops = _Box("root"), set()
    for device, graph, ops in parts:
        if not ops:
            continue
        layout = _Layout(ops, graph)
        _group_by_scope(layout.root)
        loop_cond_ops |= layout.loop_cond_ops
        box = root
        if device is not None:
            box = _Box("device", _short_device(device), "", None, device, root)
            root.children.append(box)
        box.ops.extend(layout.root.ops)
        for child in layout.root.children:
            child.parent = box
            box.children.append(child)
    return root, loop_cond_ops


def _ops_to_draw(graph_or_fetches) -> tuple[Graph, list[Operation], set[Operation]]:
    """The graph, the ops to draw (in creation order) and the fetched ops."""
    if graph_or_fetches is None:
        graph_or_fetches = get_default_graph()
    if isinstance(graph_or_fetches, Graph):
        return graph_or_fetches, graph_or_fetches.get_operations(), set()
    elements = []
    for leaf in nest.flatten(graph_or_fetches):
        if isinstance(leaf, str):
            leaf = get_default_graph().as_graph_element(leaf)
        elif not isinstance(leaf, (Tensor, Operation)) and hasattr(leaf, "_as_graph_element"):
            leaf = leaf._as_graph_element()
        op = _as_op(leaf)
        if op is None:
            raise TypeError(
                "render() draws a Graph, or the ops that fetches need (Tensors, Operations, "
                f"Variables or their names, possibly in lists or dicts); got {leaf!r}."
            )
        elements.append(op)
    if not elements:
        raise ValueError("render() was given no fetches; pass a Graph to draw all of it.")
    graph = elements[0].graph
    for op in elements:
        if op.graph is not graph:
            raise ValueError(f"The fetches come from different graphs ({op.name!r}).")
    needed: set[Operation] = set()
    stack = list(elements)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return graph, [op for op in graph.get_operations() if op in needed], set(elements)


def graph_to_digraph(
    graph_or_fetches: GraphOrFetches = None,
    collapse_scopes: Union[bool, str, Sequence[str]] = False,
    *,
    legend: bool = False,
    edge_labels: Optional[bool] = None,
    full_names: bool = False,
    rankdir: str = "TB",
    run_metadata: Any = None,
    expand: Union[str, Sequence[str]] = (),
    max_depth: Union[int, str, None] = "auto",
    engine: Optional[str] = None,
    placement: Optional[dict] = None,
    group_by_device: bool = False,
) -> Picture:
    """Builds the `Picture` (a ``graphviz.Digraph``) of a graph, of the ops fetches need, or of
    a list or dict of graphs (partition graphs) side by side.

    The options are those of `render`.  Only the default view of a graph of more than
    ``NODE_BUDGETS[0]`` ops needs a Graphviz (``engine``'s): it lays candidate views out to find
    one within `MAX_WIDTH_PX`; with no Graphviz at all it takes the first candidate.
    """
    node_ids: dict[Operation, str] = {}
    graphs = _graphs_given(graph_or_fetches)
    if graphs is not None:
        fetched: set[Operation] = set()
        ops, roles, parts = [], {}, []
        for index, (device, graph) in enumerate(graphs):
            graph_ops = graph.get_operations()
            # A node id in an edge may not hold ":" (Graphviz reads it as a port).
            prefix = _short_device(device).replace(":", " ") if device else f"graph {index}"
            node_ids.update((op, f"[{prefix}] {op.name}") for op in graph_ops)
            ops.extend(graph_ops)
            roles.update(_roles(graph, graph_ops))
            parts.append((device, graph, graph_ops))
        devices = _Devices.find(ops, placement)
        root, loop_cond_ops = _device_boxes(parts)
    else:
        graph, ops, fetched = _ops_to_draw(graph_or_fetches)
        roles = _roles(graph, ops)
        devices = _Devices.find(ops, placement)
        if group_by_device:
            by_device: dict[Optional[str], list[Operation]] = {}
            for op in ops:
                by_device.setdefault(devices.of.get(op), []).append(op)
            order = sorted(by_device, key=lambda d: (d is not None, _device_order(d or "")))
            root, loop_cond_ops = _device_boxes([(d, graph, by_device[d]) for d in order])
        else:
            layout = _Layout(ops, graph)
            _group_by_scope(layout.root)
            root, loop_cond_ops = layout.root, layout.loop_cond_ops
    overlay = None
    if run_metadata is not None:
        from .overlay import RunOverlay

        overlay = RunOverlay(run_metadata)

    def build(node_budget: int) -> Picture:
        _collapse(root, collapse_scopes, ops, expand, max_depth, node_budget)
        builder = _Builder(
            ops,
            fetched,
            loop_cond_ops,
            full_names,
            edge_labels,
            roles,
            overlay,
            devices,
            node_ids,
        )
        return _build_picture(root, builder, roles, overlay, legend, rankdir)

    if max_depth != "auto" or len(ops) <= NODE_BUDGETS[0]:
        return build(NODE_BUDGETS[0])
    for budget in NODE_BUDGETS:
        picture = build(budget)
        width = picture.measured_width(engine)
        if width is None or width <= MAX_WIDTH_PX:
            break
    return picture


def _build_picture(root, builder, roles, overlay, legend, rankdir) -> Picture:
    if builder.edge_labels is None:
        shown = _visible_nodes(root, _collapsed_boxes(root))
        builder.edge_labels = shown <= _EDGE_LABEL_LIMIT
    digraph = Picture(
        name="dataflow",
        graph_attr={
            "rankdir": rankdir,
            "fontname": _FONT,
            "fontsize": "10",
            "labeljust": "l",
            "nodesep": "0.25",
            "ranksep": "0.35",
            "bgcolor": "white",
            "pad": "0.2",
        },
        node_attr={
            "fontname": _FONT,
            "fontsize": "10",
            "fontcolor": _TEXT,
            "height": "0.3",
            "margin": "0.08,0.03",
        },
        edge_attr={
            "fontname": _FONT,
            "fontsize": "7",
            "fontcolor": _SUBTLE,
            "arrowsize": "0.6",
        },
    )
    builder.emit(root, digraph)
    builder.emit_edges(digraph)
    if builder.devices.colours:
        _add_device_legend(digraph, builder.devices.colours)
    if legend:
        _add_legend(digraph, frozenset(roles.values()))
        if overlay is not None:
            overlay.add_legend(digraph)
    return digraph


def render(
    graph_or_fetches: GraphOrFetches = None,
    path: Optional[Union[str, os.PathLike]] = None,
    format: Optional[str] = None,  # noqa: A002 - the name graphviz and TensorBoard users expect
    collapse_scopes: Union[bool, str, Sequence[str]] = False,
    *,
    legend: bool = False,
    edge_labels: Optional[bool] = None,
    full_names: bool = False,
    rankdir: str = "TB",
    keep_source: bool = False,
    run_metadata: Any = None,
    expand: Union[str, Sequence[str]] = (),
    max_depth: Union[int, str, None] = "auto",
    engine: Optional[str] = None,
    placement: Optional[dict] = None,
    group_by_device: bool = False,
) -> Picture:
    """Draws a graph (or the ops that fetches need) and optionally writes the picture to ``path``.

    Args:
      graph_or_fetches: a `Graph` (all of it; the default graph when omitted), or a Tensor,
        Operation, Variable or name, or a list or dict of them: then only the ops those fetches
        need are drawn (following data and control inputs backwards), the fetched ops with a
        thick border.  A list of Graphs, or a dict of them keyed by device (a run's
        ``run_metadata.partition_graphs``), is drawn as one picture with one box per graph,
        labelled with its device, and each ``_Send`` joined to its ``_Recv`` in another graph.
      path: where to write the picture, or None to only build it.  ``path`` is the file name
        itself when it ends in the format's extension (``"out.png"`` writes ``out.png``);
        otherwise the extension is added (``render(g, "out", format="svg")`` writes ``out.svg``).
      format: ``"png"``, ``"svg"``, ``"pdf"`` (drawn by the system's ``dot`` only), or
        ``"dot"`` for the DOT text (which needs no Graphviz).  By default it is taken from the
        extension of ``path`` (``.gv`` means ``"dot"``), else ``"png"``.
      collapse_scopes: ``True`` draws each outermost name scope as a single box; a name or a
        list of names collapses just those name scopes, loops or conds (by full name).  A
        collapsed box is one node labelled with its name, kind and op count; the edges between
        two nodes are drawn as one, labelled with how many tensors it carries.
      legend: add a key of the node shapes and edge styles.
      edge_labels: label data edges with dtype and shape; by default only when the picture has
        at most 150 nodes.
      full_names: label nodes with full op names instead of names relative to their box.
      rankdir: Graphviz layout direction, ``"TB"`` (top to bottom) or ``"LR"``.
      keep_source: also write the DOT text next to the picture, as ``<path stem>.gv``.
      run_metadata: a ``df.RunMetadata`` filled in by ``Session.run(..., run_metadata=...)``:
        draw that run on the picture (ops that ran with their time, dead and unrun ops, loop
        iteration counts; see ``dataflow.render.overlay``).
      expand: a name or a list of names of name scopes, loops or conds to draw open, with the
        boxes around them, whatever ``max_depth`` says.
      max_depth: how deep boxes are drawn open: ``None`` opens every box; an int ``n`` collapses
        the boxes inside ``n`` others (``0``: every top-level name scope, loop and cond);
        ``"auto"`` (the default) draws a graph of up to 80 ops whole, and opens the boxes of a
        bigger one breadth-first, loops and conds first (a variable's scope stays one
        cylinder), as far as a picture about 2500 px wide allows, so that a training step
        with its gradients and optimizer fits a screen or two and shows its structure.
      engine: which Graphviz draws the picture (not a Graphviz layout engine: the layout is
        always ``dot``'s).  ``"system"``: the ``dot`` program on PATH; ``"wasm"``: the Graphviz
        installed with dataflow, compiled to WebAssembly (svg and png); ``"auto"``: the first
        when ``dot`` is installed, else the second.  None: the environment variable
        ``DATAFLOW_RENDER_ENGINE``, else ``"auto"``.  See `dataflow.render.engine`.
      placement: op name -> device (what the placer assigned, e.g. from
        ``log_device_placement`` or ``dataflow.client.placer.place``); an op it does not
        name is on the device of its ``device()`` annotation.  Ops on a device are coloured by
        it (one colour per device, in a key of the devices); ops on none keep their colours.
      group_by_device: draw the ops of each device in one box of the device's colour (a loop or
        cond whose ops lie on several devices is drawn in each, with that device's part).

    Returns:
      The `Picture`, a ``graphviz.Digraph`` (in Jupyter it displays itself inline, drawn by
      ``engine``).

    Raises:
      GraphvizNotFoundError: (a RuntimeError) no Graphviz can draw the picture asked for: the
        system engine without ``dot``, pdf without ``dot``, or Python 3.10 without ``dot``.
      ValueError: an unknown format or engine, or a path whose extension names another format.
    """
    resolve_engine(engine)  # an unknown engine is an error before any work
    digraph = graph_to_digraph(
        graph_or_fetches,
        collapse_scopes,
        legend=legend,
        edge_labels=edge_labels,
        full_names=full_names,
        rankdir=rankdir,
        run_metadata=run_metadata,
        expand=expand,
        max_depth=max_depth,
        engine=engine,
        placement=placement,
        group_by_device=group_by_device,
    )
    digraph.drawing_engine = engine
    if path is not None:
        _write(digraph, os.fspath(path), format, keep_source)
    elif format is not None and format.lower() not in FORMATS:
        raise ValueError(f"Unknown format {format!r}; use one of {', '.join(FORMATS)}.")
    return digraph


def _output_path(path: str, format: Optional[str]) -> tuple[str, str]:  # noqa: A002
    """The file to write and its format, following the rules in `render`'s docstring."""
    stem, ext = os.path.splitext(path)
    implied = _EXTENSIONS.get(ext[1:].lower()) if ext else None
    if format is None:
        return path, implied or "png"
    fmt = format.lower()
    if fmt == "gv":
        fmt = "dot"
    if fmt not in FORMATS:
        raise ValueError(f"Unknown format {format!r}; use one of {', '.join(FORMATS)}.")
    if implied is None:
        return f"{path}.{fmt}", fmt
    if implied != fmt:
        raise ValueError(
            f"The path {path!r} has the extension {ext!r} but format={format!r} was asked for; "
            "make them agree or leave format out."
        )
    return path, fmt


def _write(digraph, path: str, format: Optional[str], keep_source: bool) -> str:  # noqa: A002
    target, fmt = _output_path(path, format)
    directory = os.path.dirname(target)
    if directory:
        os.makedirs(directory, exist_ok=True)
    if fmt == "dot":
        with open(target, "w", encoding="utf-8") as f:
            f.write(digraph.source)
        return target
    data = digraph.draw(fmt, target)
    with open(target, "wb") as f:
        f.write(data)
    if keep_source:
        with open(os.path.splitext(target)[0] + ".gv", "w", encoding="utf-8") as f:
            f.write(digraph.source)
    return target


# A Graph shows itself in Jupyter as this module draws it.
register_svg_drawer(lambda graph: graph_to_digraph(graph)._repr_image_svg_xml())

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

import html
import os
import re
from collections.abc import Sequence
from typing import Any, Optional, Union

import graphviz

from executor.program import NodeKind

from ..framework import nest
from ..framework.graph import (
    Graph,
    Operation,
    Tensor,
    get_default_graph,
    register_svg_drawer,
)
from .clusters import (  # noqa: F401 - defined there, reached here too
    MAX_WIDTH_PX,
    NODE_BUDGETS,
    _as_op,
    _attach,
    _Box,
    _collapse,
    _collapsed_boxes,
    _group_by_scope,
    _kind,
    _Layout,
    _ops_of,
    _relative,
    _visible_nodes,
    _walk,
)
from .engine import GraphvizNotFoundError, draw, resolve_engine, svg_to_png
from .labels import (  # noqa: F401 - defined there, reached here too
    _UNIQUE_SUFFIX,
    _box_label,
    _box_style,
    _category,
    _const_text,
    _html_label,
    _shortened,
    _tensor_text,
)
from .style import (  # noqa: F401 - defined there, reached here too
    _DEVICE_COLOURS,
    _EDGE_COLORS,
    _FONT,
    _KIND_CATEGORY,
    _LOOP_FILLS,
    _NODE_STYLES,
    _ROLE_STYLES,
    _ROLE_TITLES,
    _SUBTLE,
    _TEXT,
    _TYPE_CATEGORY,
    _apply_device,
    _apply_role,
    _box_role,
    _canonical_device,
    _device_order,
    _Devices,
    _pair_key,
    _role_box_style,
    _roles,
    _short_device,
)

__all__ = ["GraphvizNotFoundError", "Picture", "graph_to_digraph", "render"]

FORMATS = ("png", "svg", "pdf", "dot")
_EXTENSIONS = {"png": "png", "svg": "svg", "pdf": "pdf", "dot": "dot", "gv": "dot"}

# Above this many nodes, data edges are not labelled unless asked (labels double the layout).
_EDGE_LABEL_LIMIT = 150


# -- forward, backward and update ops ------------------------------------------------------------
# An op's role in training: "backward" (added by `gradients`) or "update" (added by an
# optimizer); ops of the forward graph have no role.


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

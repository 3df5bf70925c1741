"""The boxes of a picture: the tree of clusters (name scopes, cond branches, loop frames, devices)
that holds each op, how it is laid out, and how a scope collapses into one node."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Optional

from executor.program import NodeKind

from ..framework.graph import Graph, Operation, Tensor
from ..framework.graph_keys import GraphKeys


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

"""`GraphItem`: the graph a pass rewrites, with the tensors a run fetches and feeds.

A pass never sees the user's graph.  `GraphItem.from_graph` copies the part of it that the
fetches need (`dataflow.framework.graph.needed_ops`, the pruning a Session does: data and control
inputs, cut at fed tensors)
into a new `Graph`; passes then rewrite that copy through the editing methods below, which keep
the graph's bookkeeping (consumers, names, control-flow records) consistent.

What the copy holds:

- every needed op, as a new `Operation` with the same name, type, attributes, control inputs,
  static output dtypes and shapes, and the same ``location`` (the user's file:line);
- every fed tensor as a ``Placeholder`` of its dtype and shape.  A fed output 0 of an op that is
  not needed otherwise keeps the op's name, so its tensor name resolves as before; any other
  fed tensor becomes ``<op>/fed_<index>``;
- the cond and loop records (`primitives.contexts`) of the copied ops, with their fields pointing
  at the copies, and the graph's collections.

One attribute is not copied as it is: the ``inplace_input`` of a ``FusedElementwise`` (a graph
optimized before, or loaded from a file) becomes -1.  Whether a kernel may overwrite an input
depends on what a run feeds and fetches and on every pass that ran after the decision, so only
the ``inplace`` pass of the item's own pipeline, which runs last, may set it.

Invariants kept by the editing methods (every pass relies on them):

- ``fetches`` and ``feeds`` hold the item's own tensors and ops; a fetched tensor's name still
  resolves after a pass: an op that is replaced while one of its outputs is fetched leaves an
  ``Identity`` (or the ``Const`` that replaced it) under its name.
- An op created by a pass takes the ``location`` of the op it replaces, so a run error still
  names the user's line; every op also records, as ``_original``, the op of the user's graph it
  stands for (a copy its source, a new op that of the op it replaces), which a Session's errors
  and run statistics name.
- Names are never reused: removed ops keep their names reserved.
- Every edit of the graph's ops or edges (not of attributes) changes ``graph.version``, so a
  pass that left it unchanged left the graph as it was.

Every query and edit costs what it touches, never a scan of the graph, so a pass that visits
each op once is linear: besides the graph's own indexes (ops, names, the data edges out of each
tensor), the item keeps the positions of each fetched element, the set of fed tensors and the
control edges out of each op.  ``fetches`` and ``feeds`` may be replaced whole (the indexes are
rebuilt), but are changed in place only by the editing methods.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any, Optional, Union

import numpy as np

from executor.program import NodeKind

from ..framework import dtypes as _dtypes
from ..framework.graph import Consumers, Graph, Operation, SourceLocation, Tensor
from ..framework.graph_walk import control_sources, needed_ops
from ..framework.op_registry import get_op_def
from ..framework.tensor_conversion import numpy_value_or_none
from ..framework.tensor_shape import TensorShape

Fetch = Union[Tensor, Operation]
_NO_CONSUMERS = Consumers()  # what `GraphItem.consumers` gives for a tensor nothing reads


def is_pure(op: Operation) -> bool:
    """An ordinary op whose outputs depend only on its inputs and attributes: not stateful, not
    reading the run's state, and with a kernel."""
    op_def = op._op_def
    return (
        op_def.kind == NodeKind.OP
        and not op_def.stateful
        and not op_def.wants_context
        and op_def.kernel is not None
        # an op that checks its outputs for Inf and NaN (`df.debugging.enable_check_numerics`)
        # must run as itself
        and not op.attrs.get("_check_numerics")
    )


def constant_value(t: Tensor) -> Optional[np.ndarray]:
    """The value of ``t`` when it is the output of a ``Const`` op, else None."""
    return numpy_value_or_none(t)


def attrs_fingerprint(value: Any) -> Any:
    """A hashable value equal for attribute values that make an op compute the same thing.

    Floats compare by their bits (``0.0`` and ``-0.0`` differ, NaN equals itself), arrays by
    dtype, shape and bytes (string arrays by their strings); anything unhashable by identity.
    """
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, attrs_fingerprint(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(attrs_fingerprint(v) for v in value))
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ("strings", value.shape, tuple(value.reshape(-1).tolist()))
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str, value.tobytes())
    if isinstance(value, float):
        return ("float", np.float64(value).tobytes())
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value).__name__, value)


class GraphItem:
    """A graph owned by the passes, with what a run fetches from it and feeds into it.

    ``fetches``: tensors and ops of ``graph``, in the order of the run's flat fetches.
    ``feeds``: the tensors that stand for the fed tensors, in the order they were given.
    """

    def __init__(self, graph: Graph, fetches: list, feeds: list):
        self.graph = graph
        self.fetches = fetches
        self.feeds = feeds
        # Op -> the ops that have it as a control input (a dict used as an ordered set).
        self._control_index: Optional[dict[Operation, dict[Operation, None]]] = None
        # Op -> the position of each of its control inputs (built for an op when one of its
        # control inputs is first replaced, dropped when one is removed).
        self._control_slots: dict[Operation, dict[Operation, int]] = {}

    @property
    def fetches(self) -> list:
        return self._fetches

    @fetches.setter
    def fetches(self, fetches: list) -> None:
        self._fetches = list(fetches)
        self._fetch_positions: dict[Fetch, list[int]] = {}
        for position, element in enumerate(self._fetches):
            self._fetch_positions.setdefault(element, []).append(position)

    @property
    def feeds(self) -> list:
        return self._feeds

    @feeds.setter
    def feeds(self, feeds: list) -> None:
        self._feeds = list(feeds)
        self._fed = set(self._feeds)

    def _set_fetch(self, position: int, element: Fetch) -> None:
        old = self._fetches[position]
        positions = self._fetch_positions[old]
        positions.remove(position)
        if not positions:
            del self._fetch_positions[old]
        self._fetches[position] = element
        self._fetch_positions.setdefault(element, []).append(position)

    # -- making one --------------------------------------------------------------------------
    @classmethod
    def from_graph(
        cls, graph: Graph, fetches: Sequence[Fetch], feeds: Sequence[Tensor] = ()
    ) -> GraphItem:
        """A copy of what ``fetches`` need of ``graph`` (``graph`` is not changed)."""
        fed = set(feeds)
        needed = needed_ops(list(fetches), fed)
        needed_set = set(needed)
        new = Graph()
        new._names_in_use = dict(graph._names_in_use)
        copies: dict[Operation, Operation] = {}
        fed_copies: dict[Tensor, Tensor] = {}
        for t in feeds:
            op = t.op
            if t.value_index == 0 and op not in needed_set:
                name = op.name
            else:
                name = _unique(new, f"{op.name}/fed_{t.value_index}")
            attrs = {"dtype": t.dtype, "shape": t.shape}
            placeholder = _new_op(new, get_op_def("Placeholder"), name, [], [], attrs, op.location)
            placeholder._outputs = [Tensor(placeholder, 0, t.dtype, t.shape)]
            placeholder._original = getattr(op, "_original", op)
            fed_copies[t] = placeholder._outputs[0]
        for op in needed:
            twin = _new_op(
                new, op._op_def, op._name, [], [], _imported_attrs(op), op.location, register=False
            )
            twin._outputs = [Tensor(twin, i, t.dtype, t.shape) for i, t in enumerate(op._outputs)]
            twin._original = getattr(op, "_original", op)
            copies[op] = twin
        for op in needed:
            twin = copies[op]
            twin._inputs = [
                fed_copies[t] if t in fed_copies else copies[t.op]._outputs[t.value_index]
                for t in op._inputs
            ]
            twin._control_inputs = _copied_controls(op._control_inputs, fed, copies, fed_copies)
            _register(new, twin)
        item = cls(
            new,
            [
                copies[f]
                if isinstance(f, Operation)
                else (fed_copies[f] if f in fed_copies else copies[f.op]._outputs[f.value_index])
                for f in fetches
            ],
            [fed_copies[t] for t in feeds],
        )
        item._copy_records(graph, copies, fed_copies)
        return item

    def copy(self) -> GraphItem:
        """An independent copy (a pass called on its own rewrites a copy, never its input)."""
        item = GraphItem.from_graph(self.graph, self.fetches, ())
        if self.feeds:
            # Feeds of an item are Placeholders already: they were copied as needed ops, or
            # must be copied now when nothing else needs them.
            by_name = item.graph._ops_by_name
            feeds = []
            for t in self.feeds:
                op = by_name.get(t.op.name)
                if op is None:
                    op = _new_op(
                        item.graph,
                        t.op._op_def,
                        t.op.name,
                        [],
                        [],
                        dict(t.op.attrs),
                        t.op.location,
                    )
                    op._outputs = [Tensor(op, 0, t.dtype, t.shape)]
                    op._original = getattr(t.op, "_original", t.op)
                feeds.append(op._outputs[0])
            item.feeds = feeds
        return item

    def _copy_records(self, graph: Graph, copies: dict, fed_copies: dict) -> None:
        """Copies the cond/loop records of the copied ops and the collections."""
        from ..ops.variables import Variable

        def tensor(t):
            if t is None:
                return None
            if t in fed_copies:
                return fed_copies[t]
            op = copies.get(t.op)
            return None if op is None else op._outputs[t.value_index]

        def ops(seq):
            return [copies[o] for o in seq if o in copies]

        contexts: dict[int, Any] = {}

        def context_copy(context):
            if context is None:
                return None
            known = contexts.get(id(context))
            if known is not None:
                return known
            twin = copy.copy(context)
            contexts[id(context)] = twin
            twin.graph = self.graph
            twin.outer_context = context_copy(context.outer_context)
            twin._external_values = {}
            twin._control_proxies = {}
            for field in ("pred", "pivot", "pivot_for_pred", "maximum_iterations"):
                if hasattr(context, field):
                    setattr(twin, field, tensor(getattr(context, field)))
            for field in ("loop_enters", "merges", "switches", "exits", "next_iterations"):
                if hasattr(context, field):
                    setattr(twin, field, ops(getattr(context, field)))
            if hasattr(context, "loop_cond"):
                twin.loop_cond = copies.get(context.loop_cond)
            if hasattr(context, "_exit_ops"):
                twin._exit_ops = set(twin.exits)
            return twin

        for op, twin in copies.items():
            twin._control_flow_context = context_copy(op._control_flow_context)
        for key in graph.get_all_collection_keys():
            items = []
            for value in graph.get_collection(key):
                if isinstance(value, Tensor):
                    value = tensor(value)
                elif isinstance(value, Operation):
                    value = copies.get(value)
                elif isinstance(value, Variable):
                    value = _copy_variable(value, self.graph, tensor, copies)
                elif hasattr(value, "outer_context"):
                    value = contexts.get(id(value))
                if value is not None:
                    items.append(value)
            if items:
                self.graph._collections[key] = items

    # -- queries -----------------------------------------------------------------------------
    def ops(self) -> list[Operation]:
        return list(self.graph._ops)

    def consumers(self, t: Tensor) -> Consumers:
        """The ops that take ``t`` as a data input, once per input edge."""
        return self.graph._consumers.get(t, _NO_CONSUMERS)

    def use_count(self, t: Tensor) -> int:
        """Data edges out of ``t`` plus the number of times it is fetched."""
        return len(self.graph._consumers.get(t, ())) + len(self._fetch_positions.get(t, ()))

    def is_fetched(self, element: Fetch) -> bool:
        return element in self._fetch_positions

    def is_fed(self, t: Tensor) -> bool:
        return t in self._fed

    def has_fetched_output(self, op: Operation) -> bool:
        fetched = self._fetch_positions
        return op in fetched or any(t in fetched for t in op._outputs)

    def control_consumers(self, op: Operation) -> list[Operation]:
        """The ops that have ``op`` as a control input, each once."""
        return list(self._controls().get(op, ()))

    def _controls(self) -> dict[Operation, dict[Operation, None]]:
        """The control edges out of each op: an index the editing methods keep up to date,
        built on first use (a pass that never asks pays nothing)."""
        index = self._control_index
        if index is None:
            index = self._control_index = {}
            for consumer in self.graph._ops:
                for c in consumer._control_inputs:
                    index.setdefault(c, {})[consumer] = None
        return index

    # -- editing -----------------------------------------------------------------------------
    def add_op(
        self,
        type_name: str,
        inputs: Sequence[Tensor],
        attrs: dict,
        name: str,
        like: Operation,
        control_inputs: Iterable[Operation] = (),
        context: Any = "like",
        outputs: Optional[list[tuple]] = None,
    ) -> Operation:
        """Creates an op that stands for ``like``: it takes ``like``'s location and (unless
        ``context`` is given) its control-flow context.  ``name`` is used as is when free,
        else made unique.  Static outputs are inferred unless ``outputs`` gives them as
        ``[(dtype, shape), ...]``."""
        op_def = get_op_def(type_name)
        if name in self.graph._ops_by_name:
            name = _unique(self.graph, name)
        op = _new_op(
            self.graph,
            op_def,
            name,
            list(inputs),
            _dedup(control_inputs),
            attrs,
            like.location,
            register=False,
        )
        specs = outputs if outputs is not None else op_def.infer(op)
        op._outputs = [
            Tensor(op, i, _dtypes.as_dtype(dt), TensorShape(None) if s is None else s)
            for i, (dt, s) in enumerate(specs)
        ]
        op._original = getattr(like, "_original", like)
        _register(self.graph, op)
        if self._control_index is not None:
            for c in op._control_inputs:
                self._control_index.setdefault(c, {})[op] = None
        op._control_flow_context = like._control_flow_context if context == "like" else context
        return op

    def add_const(
        self,
        value: np.ndarray,
        name: str,
        like: Operation,
        control_inputs: Iterable[Operation] = (),
    ) -> Tensor:
        """A read-only ``Const`` of ``value`` standing for ``like``."""
        value = np.array(value)
        value.flags.writeable = False
        dtype = _dtypes.as_dtype(value.dtype)
        op = self.add_op(
            "Const",
            [],
            {"value": value, "dtype": dtype},
            name,
            like,
            control_inputs,
            outputs=[(dtype, TensorShape(value.shape))],
        )
        return op._outputs[0]

    def ops_made_outside(self) -> None:
        """Tells the item that ops were made in its graph without `add_op` (by the graph's own
        ``create_op``, as a lowering that reuses a graph builder does): the control-edge index
        is rebuilt on its next use.  The caller gives those ops ``_original`` itself."""
        self._control_index = None

    def set_input(self, op: Operation, index: int, tensor: Tensor) -> None:
        graph = self.graph
        graph._remove_edge(op._inputs[index], op, index)
        op._inputs[index] = tensor
        graph._add_edge(tensor, op, index)
        graph._version += 1

    def remove_input(self, op: Operation, index: int) -> None:
        """Drops input ``index`` of ``op``; the inputs after it move one place down."""
        graph, inputs = self.graph, op._inputs
        for i in range(index, len(inputs)):
            graph._remove_edge(inputs[i], op, i)
        del inputs[index]
        for i in range(index, len(inputs)):
            graph._add_edge(inputs[i], op, i)
        graph._version += 1

    def add_control_inputs(self, op: Operation, controls: Iterable[Operation]) -> None:
        index = self._controls()
        slots = self._control_slots.get(op)
        for c in controls:
            consumers = index.setdefault(c, {})
            if c is not op and op not in consumers:
                if slots is not None:
                    slots[c] = len(op._control_inputs)
                op._control_inputs.append(c)
                consumers[op] = None
                self.graph._version += 1

    def _replace_control_input(
        self, op: Operation, old: Operation, controls: list[Operation]
    ) -> None:
        """Replaces the control input ``old`` of ``op`` by those of ``controls`` it lacks: the
        first takes ``old``'s place and the others go last, so no position shifts and an op
        with many control inputs (a ``group``) loses one in O(1)."""
        index = self._controls()
        added = [c for c in controls if c is not op and op not in index.get(c, ())]
        slots = self._slots(op)
        if added and slots is not None:
            position = slots.pop(old)
            op._control_inputs[position] = added[0]
            slots[added[0]] = position
            index.setdefault(added[0], {})[op] = None
            self.graph._version += 1
            added = added[1:]
        else:
            self._drop_control_input(op, old)
        index[old].pop(op, None)
        self.add_control_inputs(op, added)

    def _slots(self, op: Operation) -> Optional[dict[Operation, int]]:
        """The position of each control input of ``op``, or None when one is repeated (an op
        made with the same control input twice; it takes the slow path)."""
        slots = self._control_slots.get(op)
        if slots is None:
            slots = {c: position for position, c in enumerate(op._control_inputs)}
            if len(slots) < len(op._control_inputs):
                return None
            self._control_slots[op] = slots
        return slots

    def _drop_control_input(self, op: Operation, control: Operation) -> None:
        """Removes every control edge from ``control`` into ``op``, keeping the others' order
        (O(control inputs of ``op``): positions after it shift)."""
        op._control_inputs = [c for c in op._control_inputs if c is not control]
        self._control_slots.pop(op, None)
        self.graph._version += 1

    def replace_uses(self, old: Tensor, new: Tensor) -> None:
        """Every data input reading ``old`` reads ``new`` instead (fetches are left alone)."""
        consumers = self.graph._consumers.get(old)
        if consumers is not None:
            for op, index in consumers.edges():
                self.set_input(op, index, new)

    def replace_op(
        self,
        op: Operation,
        new_outputs: Sequence[Tensor],
        control_inputs: Optional[Iterable[Operation]] = None,
    ) -> None:
        """Removes ``op`` after moving every use of its outputs to ``new_outputs``.

        Control consumers of ``op`` take ``control_inputs`` instead (the ops that gate the
        replacement, so nothing runs earlier than before); by default, the ops that produce
        ``new_outputs``.  A control edge is never dropped by omission: a gradient's stack pushes
        reach the loop counter their pops wait for only through control edges.  A fetched
        output is replaced by an ``Identity`` of its new tensor under the old op's name.
        """
        if control_inputs is None:
            control_inputs = [t.op for t in new_outputs if t.op is not op]
        control_inputs = _dedup(control_inputs)
        for old, new in zip(op._outputs, new_outputs):
            if old is not new:
                self.replace_uses(old, new)
        for consumer in self.control_consumers(op):
            self._replace_control_input(consumer, op, control_inputs)
        fetched = sorted((i, t) for t in op._outputs for i in self._fetch_positions.get(t, ()))
        if op in self._fetch_positions:
            raise ValueError(f"op '{op.name}' is fetched as an operation and cannot be replaced")
        self.remove_ops([op])
        name = getattr(op, "_former_name", op.name)
        for i, f in fetched:
            new = new_outputs[f.value_index]
            if new.op.name == name and new.value_index == f.value_index:
                self._set_fetch(i, new)
                continue
            identity = self.add_op("Identity", [new], {}, name, op, context=value_context(new))
            self._set_fetch(i, identity._outputs[0])

    def free_name(self, op: Operation) -> str:
        """Renames ``op`` (about to be replaced) so that its replacement can take its name,
        which is returned."""
        graph = self.graph
        name = op._name
        del graph._ops_by_name[name]
        renamed = f"{name}/replaced"
        while renamed in graph._ops_by_name:
            renamed += "_"
        op._name = renamed
        op._former_name = name
        graph._ops_by_name[renamed] = op
        return name

    def remove_ops(self, ops: Iterable[Operation]) -> None:
        """Removes ``ops``; nothing outside them may still use their outputs.  Ops that kept
        one of them as a control input lose that edge.  Costs the edges of ``ops``."""
        ops = dict.fromkeys(ops)
        graph = self.graph
        for op in ops:
            for out in op._outputs:
                users = [c for c in graph._consumers.get(out, ()) if c not in ops]
                if users:
                    raise ValueError(
                        f"cannot remove op '{op.name}': '{users[0].name}' still reads '{out.name}'"
                    )
        controls = self._controls()
        for op in ops:
            for index, t in enumerate(op._inputs):
                graph._remove_edge(t, op, index)
        for op in ops:
            del graph._ops[op]
            del graph._ops_by_name[op._name]
            for c in op._control_inputs:
                if c not in ops:
                    controls[c].pop(op, None)
            for consumer in controls.pop(op, ()):
                if consumer not in ops:
                    self._drop_control_input(consumer, op)
            self._control_slots.pop(op, None)
        graph._version += 1

    def finish(self) -> None:
        """Drops records (cond/loop contexts, collection items) that name removed ops."""
        graph = self.graph
        present = graph._ops

        def alive(t) -> bool:
            return t is not None and t.op in present

        dropped: dict[int, Any] = {}
        contexts = _all_contexts(graph)
        for context in contexts:
            if hasattr(context, "branch"):
                pivot = context.pivot
                context.merges = [o for o in context.merges if o in present]
                if alive(pivot):
                    keep = (
                        alive(context.pred)
                        and pivot.op._inputs
                        and pivot.op._inputs[0].op._op_def.kind == NodeKind.SWITCH
                    )
                else:
                    # Nothing the fetches need hangs on the pivot: the cond stands as long as
                    # its Merges do (folding a constant predicate replaces them).
                    context.pivot = None
                    keep = alive(context.pred) and any(
                        o._op_def.kind == NodeKind.MERGE for o in context.merges
                    )
            else:
                context.loop_enters = [o for o in context.loop_enters if o in present]
                context.merges = [o for o in context.merges if o in present]
                context.switches = [o for o in context.switches if o in present]
                context.exits = [o for o in context.exits if o in present]
                context.next_iterations = [o for o in context.next_iterations if o in present]
                context._exit_ops = set(context.exits)
                if context.loop_cond is not None and context.loop_cond not in present:
                    context.loop_cond = None
                for field in ("pivot", "pivot_for_pred", "maximum_iterations"):
                    if not alive(getattr(context, field)):
                        setattr(context, field, None)
                keep = context.loop_cond is not None
            if not keep:
                dropped[id(context)] = context

        def surviving(context):
            while context is not None and id(context) in dropped:
                context = context.outer_context
            return context

        if dropped:
            for context in contexts:
                context.outer_context = surviving(context.outer_context)
            for op in graph._ops:
                op._control_flow_context = surviving(op._control_flow_context)
        from ..ops.variables import Variable

        for key in list(graph._collections):
            items = []
            for value in graph._collections[key]:
                if isinstance(value, Tensor):
                    keep = value.op in present
                elif isinstance(value, Operation):
                    keep = value in present
                elif isinstance(value, Variable):
                    keep = all(
                        x is not None and x.op in present if isinstance(x, Tensor) else x in present
                        for x in (
                            value._handle,
                            value._initializer_op,
                            value._snapshot,
                            value._initial_value,
                        )
                    )
                elif hasattr(value, "outer_context"):
                    keep = id(value) not in dropped
                else:
                    keep = True
                if keep:
                    items.append(value)
            graph._collections[key] = items


# -- helpers ---------------------------------------------------------------------------------------
def _imported_attrs(op: Operation) -> dict:
    """The attributes of the copy of ``op``: its own, with a fused kernel's permission to write
    into an input withdrawn (see the module docstring)."""
    attrs = dict(op.attrs)
    if op._op_def.type == "FusedElementwise" and attrs.get("inplace_input", -1) != -1:
        attrs["inplace_input"] = -1
    return attrs


def _new_op(
    graph: Graph,
    op_def,
    name: str,
    inputs: list,
    control_inputs: list,
    attrs: dict,
    location: SourceLocation,
    register: bool = True,
) -> Operation:
    op = Operation(graph, op_def, name, inputs, control_inputs, attrs, location)
    if register:
        _register(graph, op)
    return op


def _register(graph: Graph, op: Operation) -> None:
    graph._ops[op] = None
    graph._ops_by_name[op._name] = op
    graph._names_in_use.setdefault(op._name.lower(), 1)
    for index, t in enumerate(op._inputs):
        graph._add_edge(t, op, index)
    graph._version += 1


def _copied_controls(controls: list, fed: set, copies: dict, fed_copies: dict) -> list:
    """The copies of ``controls``; where the feeds stand in for a control input (a fed
    Placeholder, `dataflow.framework.graph.control_sources`), the Placeholders that stand for its
    feeds."""
    return [
        fed_copies[source].op if isinstance(source, Tensor) else copies[source]
        for c in controls
        for source in control_sources(c, fed)
    ]


def _unique(graph: Graph, base: str) -> str:
    name, count = base, 0
    while name in graph._ops_by_name or name.lower() in graph._names_in_use:
        count += 1
        name = f"{base}_{count}"
    graph._names_in_use[name.lower()] = 1
    return name


def _dedup(ops: Iterable[Operation]) -> list[Operation]:
    return list(dict.fromkeys(ops))


def value_context(t: Tensor):
    """The context the value ``t`` lives in (a loop's Exit outputs live outside the loop)."""
    op = t.op
    context = op._control_flow_context
    if context is not None and op in getattr(context, "_exit_ops", ()):
        return context.outer_context
    return context


def _all_contexts(graph: Graph) -> list:
    seen: dict[int, Any] = {}

    def visit(context):
        while context is not None and id(context) not in seen:
            seen[id(context)] = context
            context = context.outer_context

    for op in graph._ops:
        visit(op._control_flow_context)
    for key in graph._collections:
        for value in graph._collections[key]:
            if hasattr(value, "outer_context") and hasattr(value, "name"):
                visit(value)
    return list(seen.values())


def _copy_variable(variable, graph: Graph, tensor, copies: dict):
    handle = tensor(variable._handle)
    initializer = copies.get(variable._initializer_op)
    snapshot = tensor(variable._snapshot)
    initial = tensor(variable._initial_value)
    if handle is None or initializer is None or snapshot is None or initial is None:
        return None
    twin = copy.copy(variable)
    twin._handle = handle
    twin._initializer_op = initializer
    twin._snapshot = snapshot
    twin._initial_value = initial
    twin._graph = graph
    return twin

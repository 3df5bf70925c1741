"""Which nodes of a lowered program may run together as one compiled region.

A node is *eligible* when it is an ordinary op (``NodeKind.OP``) whose kernel is a pure
function of its inputs: its op is not stateful, not random, not fed, takes no run context and
has none of the rendezvous flags.  A *region* is a set of eligible nodes that one node can
stand for without changing any run.  Three rules make that so:

1. **Same deadness.**  A region fires once, so its outputs are all live or all dead; the nodes
   in it must be dead in exactly the same firings.  Each node gets a *guard*, the set of
   places a dead value can come from that reach it: a Switch output on a given predicate
   (all Switches of one ``cond`` or loop share it), a Merge with several forward inputs, an
   Exit, a rendezvous kernel.  An ordinary op's guard is the union of its inputs' guards, an
   Enter passes its input's guard on, a loop's Merge has the guard of its entering value (its
   back edge never carries a dead value).  An ordinary op is dead in a firing exactly when one
   of its guard's places is, so nodes with equal guards are dead together.
2. **One frame.**  Regions grow along direct edges between eligible nodes, and such an edge
   never leaves a frame.
3. **Convex.**  No path leaves a region and comes back into it, or the region node would wait
   for itself.  Each node gets a *tier*: the largest number of times a path from a source to
   it crosses from one candidate group into another; a region is the nodes of one group and
   one tier, and a path that left it and came back would have crossed twice.  A node without
   inputs whose consumers are all in its group takes the tier of the lowest of them.

Only cheap nodes (``inline=True``: scalars, small arrays, shape queries) share a region; any
other eligible node is a region of its own, so that independent large kernels still run
concurrently on the inter-op pool (a region runs its members one after another).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Optional

from executor.program import Node, NodeKind, Program


class NotCompiled(Exception):
    """Why a cond or a loop stays interpreted: the message names the node and the reason
    (`dataflow.debug.compiled_source` shows it)."""


def why_not_eligible(node: Node, in_structure: bool = False) -> str:
    """Why ``node`` may not be part of a compiled region, or "" when it may (see the module
    docstring).  With ``in_structure`` (a member of a cond or loop compiled whole), a stateful
    op whose every effect is ordered by the program's edges (its op definition says
    ``state_ordered_by_edges``: a stack's push and pop, a TensorArray's read and write) may
    be one too: the generated code runs the members one after another in an order the edges
    allow, and a compiled loop runs its iterations in order, so such an op acts on its state
    in an order the interpreter could have taken, and the edges make every such order give
    the same result (the push of forward iteration ``k`` before that of ``k + 1``, the pop of
    backward iteration ``j`` before that of ``j + 1``).  So may a read of a variable
    (``reads_variable``), given the run's context: a write in the same structure keeps it
    interpreted (a write is stateful), and one outside it is ordered before or after the
    whole structure by the edges, or the interpreter's result would not be defined either.
    A native array kernel (`native_arrays`) is a member of a structure, never of another
    region."""
    if node.kind != NodeKind.OP:
        return f"{node.kind.name} nodes only take part in the conds and loops compiled whole"
    op_def = getattr(node.tag, "_op_def", None)
    if op_def is None or op_def.kind != NodeKind.OP:
        return "it is not an ordinary op"
    if op_def.extra.get("random_stream"):
        return "it draws from the Session's random stream"
    reads_variable = in_structure and bool(op_def.extra.get("reads_variable"))
    ordered = in_structure and bool(op_def.extra.get("state_ordered_by_edges"))
    if op_def.stateful and not (ordered or reads_variable):
        return "it is stateful"
    if op_def.feed_only:
        return "it only takes a fed value"
    if op_def.extra.get("lowering"):
        return "it is lowered to other ops"
    if node.tag.attrs.get("_check_numerics"):  # its kernel checks what it gives
        return "its outputs are checked for Inf and NaN"
    if node.kernel is None or node.wants_frame:
        return "its kernel needs the run's context or frame"
    if (node.wants_context or op_def.wants_context) and not reads_variable:
        return "its kernel needs the run's context or frame"
    if node.fires_on_dead:
        return "it fires on dead inputs"
    if node.blocking or node.asynchronous:
        return "its kernel may wait for another thread"
    if getattr(node.kernel, "native_array_region", False) and not in_structure:
        return "it is a native array kernel, which runs as one node (`native_arrays`)"
    return ""


def is_eligible(node: Node, in_structure: bool = False) -> bool:
    """Whether ``node`` may be part of a compiled region, or with ``in_structure`` of a cond
    or loop compiled whole (`why_not_eligible`)."""
    return not why_not_eligible(node, in_structure)


def topological_order(nodes: Sequence[Node]) -> list[int]:
    """The node indices, each after its producers (back edges ``NextIteration -> Merge`` do
    not count); nodes on a cycle that no source reaches are left out."""
    consumers: list[list[int]] = [[] for _ in nodes]
    pending = [0] * len(nodes)
    for index, node in enumerate(nodes):
        producers = [p for p, _ in node.inputs] + list(node.control_inputs)
        if node.kind == NodeKind.MERGE:
            producers = [
                p
                for p in producers
                if not (nodes[p].kind == NodeKind.NEXT_ITERATION and (p, 0) in node.inputs)
            ]
        pending[index] = len(producers)
        for p in producers:
            consumers[p].append(index)
    ready = [i for i in range(len(nodes)) if pending[i] == 0]
    ready.reverse()
    order = []
    while ready:
        index = ready.pop()
        order.append(index)
        for consumer in reversed(consumers[index]):
            pending[consumer] -= 1
            if pending[consumer] == 0:
                ready.append(consumer)
    return order


def _is_back_edge(nodes: Sequence[Node], producer: int, consumer: Node) -> bool:
    return consumer.kind == NodeKind.MERGE and nodes[producer].kind == NodeKind.NEXT_ITERATION


def guards(nodes: Sequence[Node], order: Sequence[int]) -> list:
    """Per node, a frozenset of the places its outputs' deadness comes from (rule 1)."""
    guard: list = [frozenset()] * len(nodes)

    def of_inputs(node: Node, producers) -> frozenset:
        result = frozenset()
        for p, output in node.inputs:
            if p in producers:
                result |= guard[p]
                if nodes[p].kind == NodeKind.SWITCH:  # which branch: (predicate edge, output)
                    result |= {("switch", tuple(nodes[p].inputs[1]), output)}
        for p in node.control_inputs:
            # A control edge carries its producer's liveness; a Switch's is that of its
            # inputs (it is live when both are, whichever output is dead: `executor.runner`).
            result |= guard[p]
        return result

    for index in order:
        node = nodes[index]
        kind = node.kind
        producers = {p for p, _ in node.inputs}
        if kind == NodeKind.OP and (
            node.fires_on_dead or node.blocking or node.asynchronous or node.wants_frame
        ):
            guard[index] = frozenset({("node", index)})
        elif kind in (NodeKind.OP, NodeKind.SWITCH, NodeKind.ENTER, NodeKind.ARG):
            guard[index] = of_inputs(node, producers)
        elif kind == NodeKind.MERGE:
            forward = {p for p in producers if not _is_back_edge(nodes, p, node)}
            if len(forward) == 1 and len(forward) < len(producers):
                guard[index] = of_inputs(node, forward)
            else:
                guard[index] = frozenset({("node", index)})
        else:  # EXIT, NEXT_ITERATION
            guard[index] = frozenset({("node", index)})
    return guard


def find_regions(
    nodes: Sequence[Node],
    min_size: int = 1,
    admitted: Optional[Sequence[bool]] = None,
    joins: Optional[Callable[[int, int], bool]] = None,
) -> list[list[int]]:
    """The regions of ``nodes`` with at least ``min_size`` nodes, each a list of node indices
    in topological order; a node is in at most one region.

    By default the members are the eligible nodes (`is_eligible`), and an edge joins two of
    them into one region when both are cheap (module docstring).  ``admitted`` (per node,
    whether it may be a member) and ``joins(producer, consumer)`` (whether an edge between
    two admitted nodes may join them) choose otherwise: the native array regions
    (`native_arrays`) take the elementwise ops of one shape.  Rules 1 to 3 hold either way."""
    order = topological_order(nodes)
    return regions_with_guards(nodes, order, guards(nodes, order), min_size, admitted, joins)


def regions_with_guards(
    nodes: Sequence[Node],
    order: Sequence[int],
    guard: Sequence[frozenset],
    min_size: int = 1,
    admitted: Optional[Sequence[bool]] = None,
    joins: Optional[Callable[[int, int], bool]] = None,
) -> list[list[int]]:
    """`find_regions` with the nodes' topological ``order`` and their ``guard``s given: the
    guards of `guards`, or a coarser rewriting of them in which equal guards still mean dead
    together (`loops.loop_guards`: an interpreted loop's Exits as its Enters)."""
    if admitted is None:
        eligible = [False] * len(nodes)
        for index in order:
            eligible[index] = is_eligible(nodes[index])
    else:
        eligible = list(admitted)
    parent = list(range(len(nodes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def cheap(i: int) -> bool:
        return nodes[i].inline is True

    for index in order:
        if not eligible[index]:
            continue
        node = nodes[index]
        for p in [p for p, _ in node.inputs] + list(node.control_inputs):
            if not eligible[p] or guard[p] != guard[index]:
                continue
            if joins(p, index) if joins is not None else cheap(p) and cheap(index):
                parent[find(p)] = find(index)
    tier = [0] * len(nodes)
    for index in order:
        node = nodes[index]
        group = find(index)
        best = 0
        for p in [p for p, _ in node.inputs] + list(node.control_inputs):
            if _is_back_edge(nodes, p, node):
                continue
            best = max(best, tier[p] + (0 if eligible[index] and find(p) == group else 1))
        tier[index] = best
    # A node without inputs (a constant) that feeds only its own group can join the tier of
    # its lowest consumer: no path reaches it, and every path from it stays in the group.
    consumers: list[list[int]] = [[] for _ in nodes]
    for index, node in enumerate(nodes):
        for p in {p for p, _ in node.inputs} | set(node.control_inputs):
            consumers[p].append(index)
    for index in order:
        node = nodes[index]
        if eligible[index] and not node.inputs and not node.control_inputs and consumers[index]:
            group = find(index)
            if all(eligible[c] and find(c) == group for c in consumers[index]):
                tier[index] = min(tier[c] for c in consumers[index])
    members: dict = defaultdict(list)
    for index in order:
        if eligible[index]:
            members[(find(index), tier[index])].append(index)
    return [region for region in members.values() if len(region) >= min_size]


def replace_many(program: Program, replacements) -> Program:
    """``program`` with each group of nodes replaced by one node, placed where the last of them
    was, and every edge, control edge, fetch and target renumbered, in one pass.

    Each replacement is ``(members, make_node, inputs, control_inputs, output_of)``, the groups
    of ``members`` disjoint: ``make_node(inputs, control_inputs)`` makes the node from the
    renumbered ``inputs`` and ``control_inputs`` (edges and producers outside ``members``);
    ``output_of`` maps each edge of a member that is read outside to the node's output giving
    it.  A control edge from a member becomes one from its node."""
    group_of: dict[int, int] = {}
    last_of: dict[int, int] = {}
    for g, (members, *_rest) in enumerate(replacements):
        for index in members:
            group_of[index] = g
        last_of[max(members)] = g
    new_index: dict[int, int] = {}
    replacement_index: dict[int, int] = {}
    position = 0
    for index in range(len(program.nodes)):
        if index in last_of:
            replacement_index[last_of[index]] = position
            position += 1
        elif index not in group_of:
            new_index[index] = position
            position += 1

    def edge_of(edge) -> tuple[int, int]:
        producer, output = edge
        g = group_of.get(producer)
        if g is not None:
            return (replacement_index[g], replacements[g][4][(producer, output)])
        return (new_index[producer], output)

    def control_of(producers) -> list[int]:
        result: list[int] = []
        for p in producers:
            g = group_of.get(p)
            target = replacement_index[g] if g is not None else new_index[p]
            if target not in result:
                result.append(target)
        return result

    new_nodes: list[Node] = []
    for index, node in enumerate(program.nodes):
        g = last_of.get(index)
        if g is not None:
            _, make_node, inputs, control_inputs, _ = replacements[g]
            new_nodes.append(make_node([edge_of(e) for e in inputs], control_of(control_inputs)))
        elif index not in group_of:
            new_nodes.append(
                Node(
                    **{
                        **node.__dict__,
                        "inputs": [edge_of(e) for e in node.inputs],
                        "control_inputs": control_of(node.control_inputs),
                    }
                )
            )
    return Program(
        nodes=new_nodes,
        arg_nodes=tuple(new_index[a] for a in program.arg_nodes),
        fetches=[edge_of(e) for e in program.fetches],
        targets=tuple(control_of(program.targets)),
    )

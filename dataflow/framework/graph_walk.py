"""Walks over a graph: the ops a set of fetches needs given the fed tensors, where feeds stand in
for control inputs, a topological order, and pausing the garbage collector while a large graph is
built or walked."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterable, Sequence

from executor.program import NodeKind

from .graph import Graph, Operation, Tensor

# -- bulk work on a graph -------------------------------------------------------------------------
_gc_pause_lock = threading.Lock()
_gc_pauses = 0  # how many `gc_paused` blocks are open, on any thread
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused():
    """Pauses Python's cyclic garbage collector inside the ``with``: for work that makes many
    objects that live on (copying, rewriting and lowering a graph of many ops; saving and
    loading one).

    Each full collection visits every object alive, and a graph of 100k ops holds millions of
    them, so collections triggered by the allocations of one plan cost more than the plan
    itself (two to three times the work, measured on 30k-op graphs).  The garbage this work
    leaves (ops a pass removed) is collected once the block ends.  Blocks may nest and run on
    several threads; the collector is enabled again when the last one ends, if it was before
    the first.
    """
    global _gc_pauses, _gc_was_enabled
    with _gc_pause_lock:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_pause_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


# -- walks over a graph ----------------------------------------------------------------------------
def needed_ops(fetches: Sequence, fed: Iterable[Tensor] = ()) -> list[Operation]:
    """The ops ``fetches`` (tensors and ops of one graph) need through data and control inputs,
    cut at the ``fed`` tensors (a fed tensor's producer is not needed for it, nor a fed
    Placeholder for a control edge from it, `feeds_stand_in_for`), in the graph's creation
    order: the pruning of a Session run, and of the graph passes' copy of it."""
    fed = fed if isinstance(fed, (set, frozenset)) else set(fed)
    needed: set[Operation] = set()
    stack: list[Operation] = []
    for element in fetches:
        if isinstance(element, Operation):
            stack.append(element)
        elif element not in fed:
            stack.append(element.op)
    while stack:
        op = stack.pop()
        if op in needed:
            continue
        needed.add(op)
        for t in op._inputs:
            if t not in fed and t._op not in needed:
                stack.append(t._op)
        for c in op._control_inputs:
            if c not in needed and not (fed and feeds_stand_in_for(c, fed)):
                stack.append(c)
    if not fetches:
        return []
    return [op for op in fetches[0].graph._ops if op in needed]


def feeds_stand_in_for(op: Operation, fed: Iterable[Tensor]) -> bool:
    """Whether a run that feeds ``fed`` (a set or dict of tensors) replaces ``op`` whole by the
    feeds of its outputs: ``op`` is ``feed_only`` (a ``Placeholder``) and every output is fed.

    A control edge from such an op waits for its feeds; the op does not run, so what it waited
    for is not waited for either, as TensorFlow 1.x rewires a fed Placeholder.  Any other op
    with a control consumer still runs when its outputs are fed, as in TensorFlow, where
    feeding replaces a tensor, not the op: an ``assign`` still assigns, and an op with inputs
    still needs them.
    """
    return op._op_def.feed_only and all(t in fed for t in op._outputs)


def control_sources(op: Operation, fed: Iterable[Tensor]) -> list:
    """What a control edge from ``op`` waits for in a run that feeds ``fed``: the fed output
    tensors of ``op`` when they stand in for it (`feeds_stand_in_for`), else ``[op]``."""
    if fed and feeds_stand_in_for(op, fed):
        return list(op._outputs)
    return [op]


def topological_order(graph: Graph, control_inputs: bool = True) -> list[Operation]:
    """The ops of ``graph`` with every op after its inputs (and, unless ``control_inputs`` is
    False, its control inputs), a Merge's inputs from a NextIteration (a loop's back edge) left
    out; ties keep the creation order.  On a malformed graph with another cycle every op is
    still listed once."""
    ops = graph._ops
    position = {op: i for i, op in enumerate(ops)}
    if _created_in_order(position, control_inputs):
        return list(ops)
    placed: set[Operation] = set()
    entered: set[Operation] = set()
    order: list[Operation] = []
    for root in ops:
        if root in placed:
            continue
        stack = [(root, False)]
        while stack:
            op, expanded = stack.pop()
            if op in placed:
                continue
            if expanded:
                placed.add(op)
                order.append(op)
                continue
            if op in entered:
                continue  # a cycle the executor will reject; any order will do
            entered.add(op)
            stack.append((op, True))
            if op._op_def.kind == NodeKind.MERGE:
                deps = [t._op for t in op._inputs if t._op._op_def.kind != NodeKind.NEXT_ITERATION]
            else:
                deps = [t._op for t in op._inputs]
            if control_inputs:
                deps.extend(op._control_inputs)
            if len(deps) > 1:
                deps = sorted(set(deps), key=position.__getitem__, reverse=True)
            for dep in deps:
                if dep not in placed:
                    stack.append((dep, False))
    return order


def _created_in_order(position: dict, control_inputs: bool) -> bool:
    """Whether every op of ``position`` (op -> creation index) was created after the ops it
    depends on, as `topological_order` counts them: then the order it computes is the
    creation order (each op's dependencies are placed before it is reached), which this
    check finds without the walk.  True of every graph no pass has rewired; an input from
    outside the graph (a malformed graph) makes it False, and the walk then handles it."""
    for op, index in position.items():
        is_merge = op._op_def.kind == NodeKind.MERGE
        for t in op._inputs:
            producer = t._op
            if position.get(producer, index) >= index and not (
                is_merge and producer._op_def.kind == NodeKind.NEXT_ITERATION
            ):
                return False
        if control_inputs:
            for c in op._control_inputs:
                if position.get(c, index) >= index:
                    return False
    return True

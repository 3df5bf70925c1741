"""Automatic control dependencies: the rule that makes a traced function's side effects run.

A TensorFlow 2 function runs its stateful ops (variable reads and writes, prints, asserts,
queue and iterator ops, ``py_function``) in the order the program made them, and runs them
even when nothing uses their results.  A graph alone does not: an op runs only when a fetch
needs it.  `order_effects` closes that gap for the ops made at one level of a graph (the top
of a function, one branch of a cond, one loop body):

1. the stateful ops at that level run in the order the program made them, as TensorFlow orders
   them: per variable (a read waits for the write before it, a write for the reads and the
   write before it), and the effects that touch no variable (prints, asserts) among
   themselves, so that updates of different variables still run at once;
2. the level's results wait for all of them (an Identity with control inputs each);
3. a cond or loop nested at that level that holds a stateful op is one link of that chain: it
   starts after the effects made before it (its Enters, pivots and Switches wait for them),
   the effects made after it wait for it to finish, and so do the results (the ops that read
   its results: a cond's Merges, a loop's Exits, and what reads those).

`cond` and `while_loop` call it for each branch and body they build while
``graph.automatic_control_dependencies`` is on (a ``df.function`` turns it on while its Python
function runs), so effects inside control flow run when their branch or iteration does, in
order; the function's own level is ordered by the tracing code when the trace ends.

Stateful ops that TensorFlow leaves out of the ordering are left out here too: the legacy
random ops (``RandomUniform``, ...; they may initialize variables, whose initialization is not
part of the program's order), checkpoint reads and writes (``RestoreV2``, ``SaveV2``) and the
lookup of a variable's handle (``VarHandleOp``), which has no effect of its own.

Invariants: an op is only made to wait for ops made before it, so no cycle can appear;
nothing here runs an op or changes an op's data inputs.

Layer: primitives; it imports the framework and the op modules below it.
"""

from __future__ import annotations

from typing import Any

from dataflow.framework import dtypes, nest
from dataflow.framework.graph import Graph, Operation, Tensor
from dataflow.framework.graph_keys import GraphKeys
from dataflow.framework.graph_walk import needed_ops

# Stateful ops TensorFlow's automatic control dependencies do not order (see the docstring).
UNORDERED_STATEFUL_OPS = frozenset(
    {
        "RandomUniform",
        "RandomUniformInt",
        "RandomStandardNormal",
        "ParameterizedTruncatedNormal",
        "TruncatedNormal",
        "RandomShuffle",
        "Multinomial",
        "RandomGamma",
        "RandomGammaGrad",
        "RandomPoisson",
        "RandomPoissonV2",
        "RestoreV2",
        "SaveV2",
        # Looking a variable up by name changes nothing: the reads and writes through the
        # handle are what is ordered.
        "VarHandleOp",
    }
)

# The ops that carry a value out of a nested cond or loop whenever the construct runs: a Merge
# is live as soon as one input is, an Exit when its loop ends.
_LIVE_WHEN_CONSTRUCT_RUNS = frozenset({"Merge", "RefMerge", "Exit", "RefExit"})
_EXITS = frozenset({"Exit", "RefExit"})
_SWITCHES = frozenset({"Switch", "RefSwitch"})
# Ops that only read the resource they are given: reads of one resource need no order among
# themselves, only against its writes.
_RESOURCE_READS = frozenset({"ReadVariableOp", "IsVariableInitialized", "VarIsInitializedOp"})


def is_ordered_effect(op: Operation) -> bool:
    """Whether ``op`` is a side effect the rule orders and runs."""
    return op.op_def.stateful and op.type not in UNORDERED_STATEFUL_OPS


def variables_of(graph: Graph) -> list:
    """The graph's global and local variables, each once."""
    seen: dict = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for v in graph.get_collection(key):
            seen[id(v)] = v
    return list(seen.values())


def ops_made_by_variables(variables: list) -> set:
    """The ops that make and initialize ``variables``: not part of the program's order."""
    made: set = set()
    for v in variables:
        made.update(needed_ops([v.initializer]))
        made.add(v.op)
    return made


def _child_context_of(op: Operation, context):
    """The context directly inside ``context`` that holds ``op``, or None when ``op`` is not
    inside a cond or loop nested in ``context``."""
    inner = op._control_flow_context
    while inner is not None and inner.outer_context is not context:
        inner = inner.outer_context
    return inner


def _ops_run_by_one_branch(new_ops: list, context) -> set:
    """The ops among ``new_ops`` at the level of ``context`` that only run when a nested cond
    takes a particular branch, so that waiting for them would leave the results dead.

    Such an op reads, directly or through other such ops, a tensor from inside a nested cond or
    loop that is not a Merge or Exit output: the zeros a gradient makes for a Switch's untaken
    output are the usual case.  A Merge at this level ends the chain, since it is live as soon
    as one of its inputs is.  ``new_ops`` are in creation order, so inputs come first."""
    bound: set = set()
    for op in new_ops:
        if op._control_flow_context is not context or op.type in _LIVE_WHEN_CONSTRUCT_RUNS:
            continue
        for t in op.inputs:
            source = t.op
            if source in bound or (
                source.type not in _LIVE_WHEN_CONSTRUCT_RUNS
                and _child_context_of(source, context) is not None
            ):
                bound.add(op)
                break
    return bound


def effects_to_wait_for(new_ops: list, context, excluded: set = frozenset()) -> list:
    """Orders the side effects among ``new_ops`` made at the level of ``context`` as the
    program made them, and returns the ops the level's results must wait for: those effects,
    then the ops at this level that finish a nested cond or loop holding an effect.

    The order is TensorFlow's, resource by resource: an op that reads a variable (or any
    resource) waits for the last op that wrote it, one that writes it waits for that write and
    for the reads since; stateful ops that touch no resource (prints, asserts) wait for each
    other.  Ops on different variables stay free to run at once.  A nested cond or loop that
    holds an effect is ordered as a whole against everything: it starts after the effects made
    before it (its entries, a loop's Enters and a cond's pivots and Switches, wait for them),
    and the effects made after it wait for it to finish (its Merges, or its loop's Exits)."""
    excluded = set(excluded) | _ops_run_by_one_branch(new_ops, context)
    stateful_nested: dict[int, object] = {}
    for op in new_ops:
        if op in excluded or not is_ordered_effect(op) or op._control_flow_context is context:
            continue
        inner = _child_context_of(op, context)
        if inner is not None:
            stateful_nested[id(inner)] = inner
    entries = _entries_of(new_ops, context, stateful_nested)
    order = _ResourceOrder()
    effects: list[Operation] = []
    finishers: list[Operation] = []
    for op in new_ops:
        if op in excluded:
            continue
        if op in entries:
            order.after_everything(op)
        elif op._control_flow_context is context and is_ordered_effect(op):
            order.add(op)
            effects.append(op)
        elif stateful_nested and _finishes(op, context, stateful_nested):
            order.barrier.append(op)
            finishers.append(op)
    return effects + finishers


class _ResourceOrder:
    """The state of the ordering at one level, in program order (see `effects_to_wait_for`):
    per resource (keyed by the tensor its ops read it through; None for effects that touch no
    resource) the last write and the reads since, and the ops of finished nested constructs
    that every later effect waits for."""

    def __init__(self):
        self.last_write: dict[int, Operation] = {}
        self.reads_since: dict[int, list[Operation]] = {}
        self.barrier: list[Operation] = []

    def add(self, op: Operation) -> None:
        waits = list(self.barrier)
        resources = {id(t): t for t in op.inputs if _is_resource(t)}
        if not resources:  # a print or an assert: in order with the other such effects
            resources = {None: None}
        reads = op.type in _RESOURCE_READS and None not in resources
        for key in resources:
            if key in self.last_write:
                waits.append(self.last_write[key])
            if reads:
                self.reads_since.setdefault(key, []).append(op)
            else:
                waits.extend(self.reads_since.pop(key, ()))
                self.last_write[key] = op
        _wait(op, waits)

    def after_everything(self, op: Operation) -> None:
        """``op`` (a nested construct's entry) waits for every effect made so far."""
        waits = list(self.barrier) + list(self.last_write.values())
        for reads in self.reads_since.values():
            waits.extend(reads)
        _wait(op, waits)


def _is_resource(t: Tensor) -> bool:
    return t.dtype is dtypes.resource or t.dtype.is_ref_dtype


def _wait(op: Operation, earlier: list) -> None:
    for other in earlier:
        if other is not op and other not in op.control_inputs:
            op._add_control_input(other)


def _entries_of(new_ops: list, context, stateful_nested: dict) -> set:
    """The ops through which each nested cond or loop in ``stateful_nested`` starts: a loop's
    loop-variable Enters, a cond branch's pivot and the Switches at this level that its ops
    read.  Every op of the construct depends on one of them."""
    entries: set = set()
    for inner in stateful_nested.values():
        if getattr(inner, "loop_enters", None):
            entries.update(inner.loop_enters)
        pivot = getattr(inner, "pivot", None)
        if pivot is not None and getattr(inner, "loop_enters", None) is None:
            entries.add(pivot.op)
    for op in new_ops:
        inner = _child_context_of(op, context)
        if inner is None or id(inner) not in stateful_nested:
            continue
        for t in op.inputs:
            if t.op.type in _SWITCHES and t.op._control_flow_context is context:
                entries.add(t.op)
    return entries


def _finishes(op: Operation, context, stateful_nested: dict) -> bool:
    """Whether ``op`` finishes a nested construct holding an effect: an op at this level that
    reads from inside one (a cond's Merge, or what reads a loop's Exit), or a loop's Exit."""
    if op._control_flow_context is context:
        return any(
            t.op._control_flow_context is not None
            and id(t.op._control_flow_context) in stateful_nested
            for t in op.inputs
        )
    # A loop's Exit lives in the loop's context; waiting for it waits for the loop to end even
    # when nothing reads the loop's results.
    inner = _child_context_of(op, context)
    return op.type in _EXITS and inner is op._control_flow_context and id(inner) in stateful_nested


def wait_for(graph: Graph, results, must_run: list) -> Any:
    """``results`` (a nested structure, composite tensors included) with each tensor replaced
    by an Identity that waits for ``must_run``; other leaves are kept."""
    if not must_run:
        return results
    from dataflow.ops.array_ops import identity

    def wait(value):
        if isinstance(value, Tensor):
            with graph.control_dependencies(must_run):
                return identity(value)
        return value

    flat = nest.flatten(results, expand_composites=True)
    return nest.pack_sequence_as(results, [wait(t) for t in flat], expand_composites=True)


def order_effects(graph: Graph, new_ops: list, context, results) -> Any:
    """The rule for one branch or loop body (see the module docstring): ``new_ops`` are the
    ops made while it was built, ``context`` its control-flow context, ``results`` what it
    gives back (a list of tensors).  Returns the results to use instead."""
    made_here = set(new_ops)
    made_by_variables = ops_made_by_variables([v for v in variables_of(graph) if v.op in made_here])
    must_run = effects_to_wait_for(new_ops, context, made_by_variables)
    return wait_for(graph, results, must_run)

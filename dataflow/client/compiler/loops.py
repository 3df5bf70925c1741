"""Whole `while_loop` frames compiled to one node: a generated function with a Python loop.

A frame is compiled when `while_loop` built it and every op in it is pure, or stateful in a
way its edges order (below): its Enter, Merge, Switch, Exit and NextIteration nodes were built
in the loop's `WhileContext` (a graph of hand-wired primitives keeps the interpreter), either
recorded by it or added by a `gradients` call as one whole loop variable (the forward
counter of `primitives.loop_gradients`: an Enter read only by its Merge, a NextIteration read
only by its Merge, an Exit of its Switch's false output); each Merge joins one loop variable's
Enter and NextIteration, one LoopCond drives every Switch, a Switch's false output goes only to
its Exit, and every other node of the frame is eligible for a region (`regions.is_eligible`,
with ``in_structure``) or is an inner loop or `cond` compiled already (structures are compiled
innermost first, so a loop around an inner loop or cond that was refused is refused too).  The
loop node stands in the parent frame where the Enters' inputs are; it takes those inputs (each
outer edge once) and gives the Exits' values.

Gradient stacks.  The forward loop of a differentiated `while_loop` pushes the values its
backward loop reads (``StackPushV2``), the backward loop pops them (``StackPopV2``), and
`primitives.loop_gradients` orders them by edges: each push waits on the forward counter's
Switch and comes before the counter's increment, each pop waits on the backward index and
comes before the backward count.  Those ops, a TensorArray's reads and writes (ordered by
their flows) and reads of variables may be members of a compiled loop
(`regions.why_not_eligible`): the loop runs its iterations in order and each iteration's ops in
an order of the edges, so the pushes of iteration ``k`` come before those of ``k + 1`` and the
pops of backward iteration ``j`` before those of ``j + 1``, as the interpreter orders them.
The stack is the one `dataflow.ops.stack_ops.Stack` object either way (the compiled loop calls
the kernels on it), so a forward loop compiled and a backward loop interpreted, or the
reverse, share it as two interpreted loops do; errors are the kernels' own (a pop of an empty
stack names the pop).  A control edge from one of the loop's own Switches (the pushes' edge
from the counter) is live in every iteration (a Switch's control edge carries the liveness of
its inputs, which are live while the loop runs), so it orders nothing within the generated
iteration and is dropped; an op that waits only on it runs on the predicate side.

What the generated function does, and why it equals the interpreter:

- Each iteration runs first the *predicate side* (the ops that do not read a Switch's true
  output, directly or through others: the interpreter runs them in every iteration, the last
  included), then tests the predicate with ``bool`` as a Switch does, then the *body* (the ops
  downstream of a true output: they run only when the predicate holds), then moves each
  NextIteration's value into its Merge's variable.  Every op is pure, so running iterations
  one at a time (``parallel_iterations`` = 1) gives what any overlap gives.
- A compiled cond of the body is written in the loop's code (`CompiledCond.inline_lines`):
  the same ``if``/``else`` and branch lines its own function runs, without a call per
  iteration; an error of a branch line names the cond's member as that function would.
- Lines that give the same value in every iteration run once, before the loop: the
  constants, and the numpy scalar of each invariant input of static shape ``()``
  (`codegen.LineEmitter.scalar_alias`).
- A zero-trip loop returns the Enters' values themselves; ``maximum_iterations`` is part of
  the predicate the graph computes.
- Deadness: an ordinary node is dead when an input is.  The Enters' inputs must have the same
  guard (`regions.guards`), so they are dead together; the interpreter then makes every Merge,
  the predicate and every Switch dead, and each Exit delivers a dead value when the instance
  completes: the whole loop is dead, as the node is.
- Errors: a failing line is found from the traceback (`codegen.locate_member`), and the loop
  adds ``(frame name, iteration)`` to ``error.compiled_frames`` (innermost first, as the
  error leaves each compiled loop), from which `failed_where` rebuilds the frame instance and
  iteration that the interpreter would name.
- Accumulations: a loop variable whose value in the body goes only to one op, whose result
  goes only to the variable's NextIteration (a weight's gradient summed over the backward
  loop's iterations, ``acc = acc + g``), and whose op is a plain numpy ufunc of two inputs of
  one fully known shape and dtype (`_updates_in_place`), is updated in place from the second
  iteration on: ``np.add(acc, g, out=acc)``, the same ufunc on the same operands, so the
  same bits, without a fresh array per iteration.  The first iteration calls the kernel, so
  the Enter's value (a value of the run outside the loop) is never written; from then on the
  variable holds an array the loop made and no one else reads until the loop ends.  Should
  an operand not be what the plan says at run time, the kernel runs.
- Deadlines and cancellation: the node takes the run's context, and the loop itself stops
  when the run's ``context.cancellation`` is cancelled (its Session closed:
  `executor.RunCancelledError`) or ``context.deadline`` passes
  (`executor.DeadlineExceededError`, which the Session reports as the interpreter's deadline
  error), so no work goes on after the run has given up.  It looks after `FIRST_CHECK`
  iterations, then at intervals that grow fourfold (up to `CHECK_CLOCK_EVERY` iterations)
  while the iterations between two looks take less than `CHECK_CLOCK_SECONDS`, and halve
  when they take more: a loop of slow iterations looks after each one, a loop of fast ones
  pays for a look every 64, and a short inner loop for one or two looks per call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

import executor
from executor.program import Node, NodeKind, Program

from . import native
from .codegen import (
    LineEmitter,
    _constant_value,
    describe,
    identifier,
    locate_member,
    quoted,
    value_name,
)
from .conds import is_compiled_structure
from .regions import (
    NotCompiled,
    guards,
    is_eligible,
    replace_many,
    topological_order,
    why_not_eligible,
)

CHECK_CLOCK_EVERY = 64
CHECK_CLOCK_SECONDS = 0.001
FIRST_CHECK = 2


def frames_of(nodes: Sequence[Node]) -> Optional[list[tuple]]:
    """Per node, the path of loop frame names it lies in (``()`` is the root frame), or None
    when some node lies on a cycle no source reaches (the executor rejects that program)."""
    order = topological_order(nodes)
    if len(order) != len(nodes):
        return None
    frame: list = [()] * len(nodes)
    for index in order:
        node = nodes[index]
        producers = [p for p, _ in node.inputs] + list(node.control_inputs)
        if node.kind == NodeKind.MERGE:
            producers = [p for p in producers if nodes[p].kind != NodeKind.NEXT_ITERATION]
        outer = frame[producers[0]] if producers else ()
        if node.kind == NodeKind.ENTER:
            frame[index] = (*outer, node.frame_name)
        elif node.kind == NodeKind.EXIT:
            frame[index] = outer[:-1]
        else:
            frame[index] = outer
    return frame


def failed_where(error: BaseException, frame: str, iteration: int) -> tuple[str, int]:
    """The frame instance and iteration where ``error`` arose, from those of the node that
    raised it (``frame``, ``iteration``) and the compiled loops it left."""
    for name, inner_iteration in reversed(getattr(error, "compiled_frames", ())):
        frame, iteration = f"{name}[iter {iteration} of {frame}]", inner_iteration
    return frame, iteration


def compile_loops(program: Program, refusals: Optional[dict] = None) -> tuple[Program, list]:
    """``program`` with each loop frame that may be compiled replaced by one node, innermost
    first, and the `CompiledLoop`s made; why each other frame may not be goes into
    ``refusals`` (``{"loop <frame name>": reason}``).  Each pass analyses the program once and
    replaces every innermost frame it can together, so the work grows with the program times
    the depth of its nesting, not with the number of loops."""
    loops: list = []
    refused: set = set()
    while True:
        nodes = program.nodes
        frame = frames_of(nodes)
        if frame is None or any(node.blocking for node in nodes):
            return program, loops
        inside, exits = _members_and_exits(nodes, frame)
        parents = {path[:-1] for path in inside}
        innermost = sorted(p for p in inside if p not in refused and p not in parents)
        if not innermost:
            return program, loops
        order = topological_order(nodes)
        guard = guards(nodes, order)
        same_as = _exits_dead_with_their_loop(nodes, guard, inside, exits)
        analysis = (guard, {index: k for k, index in enumerate(order)}, same_as)
        made = []
        for path in innermost:
            try:
                made.append(_make_loop(nodes, inside[path], exits.get(path, []), path, analysis))
            except NotCompiled as e:
                refused.add(path)
                if refusals is not None:
                    refusals[f"loop {quoted(path[-1])}"] = str(e)
        if made:
            if refusals is not None:  # refused while an inner or earlier structure was not made
                for loop in made:
                    refusals.pop(f"loop {quoted(loop.frame_name)}", None)
            program = replace_many(program, [_replacement(loop) for loop in made])
            loops += made


def _members_and_exits(nodes: Sequence[Node], frame: list) -> tuple[dict, dict]:
    """Per loop frame (its path of `frames_of`), the indices of the nodes inside it, and of the
    Exits that leave it."""
    inside: dict[tuple, list[int]] = {}
    exits: dict[tuple, list[int]] = {}
    for index, path in enumerate(frame):
        if path:
            inside.setdefault(path, []).append(index)
        node = nodes[index]
        if node.kind == NodeKind.EXIT and frame[node.inputs[0][0]]:
            exits.setdefault(frame[node.inputs[0][0]], []).append(index)
    return inside, exits


def loop_guards(nodes: Sequence[Node]) -> Optional[tuple[list[int], list]]:
    """The nodes' topological order and their guards (`regions.guards`), each Exit of a loop
    whose Enters share one guard counting as that guard (`_exits_dead_with_their_loop`), or
    None when some node lies on a cycle no source reaches."""
    frame = frames_of(nodes)
    if frame is None:
        return None
    inside, exits = _members_and_exits(nodes, frame)
    order = topological_order(nodes)
    guard = guards(nodes, order)
    same_as = _exits_dead_with_their_loop(nodes, guard, inside, exits)
    return order, [same_as(places) for places in guard]


def _context_of(node: Node):
    return getattr(node.tag, "_control_flow_context", None)


def _exits_dead_with_their_loop(nodes, guard, inside: dict, exits: dict):
    """A function that rewrites a guard (`regions.guards`) so that each Exit of an
    interpreted ``while_loop`` frame whose Enters' inputs share one guard ``G`` counts as
    ``G``: such Exits are dead together, exactly when ``G`` is (with live Enters every loop
    variable is live in every iteration and each Exit delivers its Switch's false output;
    with dead ones every Merge, Switch and Exit is dead).  The guards themselves give each
    Exit a place of its own, so without this a backward loop that takes several results of an
    interpreted forward loop would look partly dead."""
    exit_guard: dict[tuple, frozenset] = {}
    for path, members in inside.items():
        enters = [i for i in members if nodes[i].kind == NodeKind.ENTER]
        frame_exits = exits.get(path, [])
        if not enters or not frame_exits or len({guard[i] for i in enters}) != 1:
            continue
        if getattr(_context_of(nodes[enters[0]]), "frame_name", None) != path[-1]:
            continue  # hand-wired primitives: no while_loop record
        if all(
            nodes[nodes[e].inputs[0][0]].kind == NodeKind.SWITCH and nodes[e].inputs[0][1] == 0
            for e in frame_exits
        ):
            for e in frame_exits:
                exit_guard[("node", e)] = guard[enters[0]]
    memo: dict[frozenset, frozenset] = {}

    def same_as(places: frozenset) -> frozenset:
        if places not in memo:
            memo[places] = frozenset().union(
                *(same_as(exit_guard[p]) if p in exit_guard else {p} for p in places)
            )
        return memo[places]

    return same_as


def _make_loop(
    nodes: Sequence[Node], inside: list, exits: list, path: tuple, analysis: tuple
) -> CompiledLoop:
    """The compiled loop of frame ``path`` (its nodes ``inside``, its Exits ``exits``);
    `NotCompiled` says why the frame may not be compiled.  ``analysis`` is ``(guards,
    topological positions)`` of the program's nodes and the rewriting of a guard by which
    an interpreted loop's Exits count as its Enters (`_exits_dead_with_their_loop`).  The
    frame must be a ``while_loop`` as its record describes it (`_loop_record`), every node of
    it one the loop compiles (`_switches_of_merges`), and its edges those of such a loop
    (`_check_loop_edges`)."""
    guard, position, same_as = analysis
    enters = [i for i in inside if nodes[i].kind == NodeKind.ENTER]
    context, recorded, predicate = _loop_record(nodes, inside, exits, path, enters)
    switch_of_merge = _switches_of_merges(nodes, inside, exits, context, recorded, predicate)
    _check_loop_edges(nodes, inside, exits, set(switch_of_merge.values()))
    if len({same_as(guard[i]) for i in enters}) != 1:
        raise NotCompiled("some of its inputs could be dead while others are live")
    return CompiledLoop(path[-1], nodes, inside, exits, predicate, switch_of_merge, position)


def _loop_record(nodes: Sequence[Node], inside: list, exits: list, path: tuple, enters: list):
    """The frame's `WhileContext`, the ops it records by kind, and the loop condition's edge."""
    context = _context_of(nodes[enters[0]]) if enters else None
    if not exits:
        raise NotCompiled("it has no Exit the run needs")
    if getattr(context, "frame_name", None) != path[-1]:
        raise NotCompiled("it was written with the raw primitives (no while_loop record)")
    recorded = {
        NodeKind.ENTER: {id(op) for op in context.loop_enters},
        NodeKind.MERGE: {id(op) for op in context.merges},
        NodeKind.SWITCH: {id(op) for op in context.switches},
        NodeKind.EXIT: {id(op) for op in context.exits},
        NodeKind.NEXT_ITERATION: {id(op) for op in context.next_iterations},
    }
    loop_cond = [i for i in inside if nodes[i].tag is context.loop_cond]
    if len(loop_cond) != 1:
        raise NotCompiled("its LoopCond is not in the plan")
    return context, recorded, (loop_cond[0], 0)


def _switches_of_merges(nodes, inside, exits, context, recorded, predicate) -> dict[int, int]:
    """Checks each node of the frame; returns the Switch of each loop variable's Merge."""
    switch_of_merge: dict[int, int] = {}
    added: list[int] = []  # primitives of the loop's context that it did not record
    for index in [*inside, *exits]:
        node = nodes[index]
        kind = node.kind
        if kind in recorded and (
            id(node.tag) not in recorded[kind] and not (kind == NodeKind.ENTER and node.is_constant)
        ):
            if _context_of(node) is not context:
                if kind == NodeKind.ENTER:
                    raise NotCompiled(f"{describe(node)} enters another loop's frame")
                raise NotCompiled(f"{describe(node)} is not one of the loop's own primitives")
            added.append(index)
        if kind == NodeKind.ENTER:
            if _context_of(node) is not context:
                raise NotCompiled(f"{describe(node)} enters another loop's frame")
        elif kind == NodeKind.MERGE:
            _check_loop_merge(nodes, node)
        elif kind == NodeKind.SWITCH:
            merge = node.inputs[0][0]
            if node.control_inputs or tuple(node.inputs[1]) != predicate:
                raise NotCompiled(
                    f"its Switch {quoted(node.name)} does not switch on the loop condition"
                )
            if nodes[merge].kind != NodeKind.MERGE or merge in switch_of_merge:
                raise NotCompiled(
                    f"its Switch {quoted(node.name)} does not switch one loop variable"
                )
            switch_of_merge[merge] = index
        elif kind in (NodeKind.EXIT, NodeKind.NEXT_ITERATION):
            if node.control_inputs:
                raise NotCompiled(f"{describe(node)} waits on a control edge")
        elif kind == NodeKind.OP:
            if not (
                is_eligible(node, in_structure=True)
                or index == predicate[0]
                or is_compiled_structure(node)
            ):
                reason = why_not_eligible(node, in_structure=True)
                raise NotCompiled(f"{describe(node)} may not be compiled: {reason}")
        else:
            raise NotCompiled(
                f"{describe(node)} is a {kind.name} of no loop or cond compiled whole"
            )
    merges = [i for i in inside if nodes[i].kind == NodeKind.MERGE]
    if sorted(switch_of_merge) != merges:
        raise NotCompiled("a loop variable's Merge has no Switch")
    if added:
        _check_added_variables(nodes, inside, exits, added, set(switch_of_merge.values()))
    return switch_of_merge


def _check_added_variables(nodes, inside, exits, added, switches: set) -> None:
    """The primitives of the loop's context that it did not record (``added``) must make
    whole loop variables, as `primitives.loop_gradients` adds its forward counter: a
    non-constant Enter and a NextIteration read only by a Merge (as its first and second
    input: `_check_loop_merge` checks every Merge), an Exit of a loop Switch's false
    output.  The Merges and Switches are checked with the recorded ones."""
    readers: dict[int, list] = {index: [] for index in added}
    for index in [*inside, *exits]:
        for position, (producer, _) in enumerate(nodes[index].inputs):
            if producer in readers:
                readers[producer].append((index, position))
        for producer in nodes[index].control_inputs:
            if producer in readers:
                readers[producer].append((index, None))
    for index in added:
        node = nodes[index]
        kind = node.kind
        expected = {NodeKind.ENTER: 0, NodeKind.NEXT_ITERATION: 1}.get(kind)
        if expected is not None and not all(
            nodes[reader].kind == NodeKind.MERGE and position == expected
            for reader, position in readers[index]
        ):
            raise NotCompiled(f"{describe(node)} is read by another node than its Merge")
        if kind == NodeKind.EXIT and tuple(node.inputs[0]) not in {(s, 0) for s in switches}:
            raise NotCompiled(f"{describe(node)} does not take a loop Switch's false output")


def _check_loop_merge(nodes: Sequence[Node], node: Node) -> None:
    """A loop variable's Merge: its Enter first, its NextIteration second, nothing else."""
    if node.control_inputs or len(node.inputs) != 2:
        raise NotCompiled(
            f"its Merge {quoted(node.name)} waits on a control edge or has not two inputs"
        )
    (enter, _), (back, _) = node.inputs
    if nodes[enter].kind != NodeKind.ENTER or nodes[enter].is_constant:
        raise NotCompiled(
            f"its Merge {quoted(node.name)} does not start from a loop variable's Enter"
        )
    if nodes[back].kind != NodeKind.NEXT_ITERATION:
        raise NotCompiled(f"its Merge {quoted(node.name)} is not fed back by a NextIteration")


def _check_loop_edges(nodes: Sequence[Node], inside: list, exits: list, switches: set) -> None:
    """No node waits on a Switch (but an op on one of the loop's own ``switches``: see the
    module docstring), reads the exit side of a Switch (but an Exit) or which input a Merge
    took."""
    for index in [*inside, *exits]:
        node = nodes[index]
        waited = [p for p in node.control_inputs if nodes[p].kind == NodeKind.SWITCH]
        if waited and (node.kind != NodeKind.OP or not set(waited) <= switches):
            raise NotCompiled(f"{describe(node)} waits on a Switch of the loop")
        for p, output in node.inputs:
            if nodes[p].kind == NodeKind.SWITCH and output == 0 and node.kind != NodeKind.EXIT:
                raise NotCompiled(f"{describe(node)} reads the loop's exit side of a Switch")
            if nodes[p].kind == NodeKind.MERGE and output != 0:
                raise NotCompiled(f"{describe(node)} reads which input a Merge took")


def _accumulations(nodes, inside, merges, switch_of_merge) -> dict[int, int]:
    """The loop variables updated in place (module docstring, "Accumulations"): per op that
    makes a variable's next value, the variable's Merge."""
    readers: dict[tuple, list[int]] = {}
    for index in inside:
        for edge in nodes[index].inputs:
            readers.setdefault(tuple(edge), []).append(index)
    found: dict[int, int] = {}
    for merge in merges:
        switch = switch_of_merge[merge]
        back = nodes[merge].inputs[1][0]
        producer, output = nodes[back].inputs[0]
        node = nodes[producer]
        if (
            output != 0
            or producer not in inside
            or readers.get((merge, 0)) != [switch]
            or readers.get((switch, 1)) != [producer]
            or readers.get((producer, 0)) != [back]
            or not _updates_in_place(node, [tuple(e) for e in node.inputs], (switch, 1))
        ):
            continue
        found[producer] = merge
    return found


def _updates_in_place(node: Node, inputs: list, variable: tuple) -> bool:
    """Whether ``node`` is an op whose kernel is a plain numpy ufunc of two inputs, one of
    them ``variable``, with an output of a fully known shape of rank at least 1 that its
    inputs have too, and one dtype: then ``ufunc(a, b, out=variable)`` gives its value."""
    op = node.tag
    op_def = getattr(op, "_op_def", None)
    extra = op_def.extra if op_def is not None else {}
    ufunc = extra.get("ufunc")
    if ufunc is None or node.kernel is not ufunc or node.num_outputs != 1:
        return False
    if len(inputs) != 2 or inputs.count(variable) != 1:
        return False
    tensors = [*getattr(op, "inputs", ()), *getattr(op, "outputs", ())]
    if len(tensors) != 3:
        return False
    shapes = {tuple(t.shape.as_list()) if t.shape.is_fully_defined() else None for t in tensors}
    dtypes = {t.dtype for t in tensors}
    (shape,) = shapes if len(shapes) == 1 else (None,)
    return shape is not None and len(shape) >= 1 and len(dtypes) == 1


def _accumulation_line(node: Node, index: int, args: tuple, variable: str, merge: int, bound):
    """The line of an accumulation (`_accumulations`): the ufunc into the variable's own
    array once the loop owns it and the operands are what the plan says, else the kernel."""
    bound[f"k{index}"] = node.kernel
    bound["np_ndarray"] = np.ndarray
    other = args[1] if args[0] == variable else args[0]
    target = value_name(index, 0, 1)
    fits = (
        f"own{merge} and type({other}) is np_ndarray and {other}.shape == {variable}.shape "
        f"and {other}.dtype == {variable}.dtype"
    )
    call = ", ".join(args)
    return f"{target} = k{index}({call}, out={variable}) if {fits} else k{index}({call})"


class CompiledLoop:
    """One loop frame's generated function and what it stands for.

    ``members``: the node indices of the frame (and its Exits) in the program it was made
    from; ``inputs``: the outer edges its Enters take, each once (the function's arguments
    after the run's context); ``control_inputs``: the Enters' control inputs; ``exits``: the
    Exit nodes, whose values it returns in this order; ``source``, ``function``: the code.
    """

    kind = "loop"

    def __init__(self, frame_name, nodes, inside, exits, predicate, switch_of_merge, position):
        self.frame_name = frame_name
        self.name = frame_name
        self.nodes = nodes
        self.members = tuple(sorted([*inside, *exits]))
        self.exits = tuple(exits)
        enters = [i for i in inside if nodes[i].kind == NodeKind.ENTER]
        inputs: list = []
        controls: list = []
        for index in enters:
            edge = tuple(nodes[index].inputs[0])
            if edge not in inputs:
                inputs.append(edge)
            controls += [p for p in nodes[index].control_inputs if p not in controls]
        self.inputs = tuple(inputs)
        self.control_inputs = tuple(controls)
        self.tag = nodes[predicate[0]].tag
        self.predicate = predicate
        self.switch_of_merge = switch_of_merge
        self.lines: dict[int, tuple[int, tuple[str, ...], Any]] = {}
        self.source, bound = self._generate(inside, predicate, switch_of_merge, position)
        namespace: dict[str, Any] = {}
        code = compile(self.source, f"<compiled loop {quoted(frame_name)}>", "exec")
        exec(code, namespace)  # noqa: S102 - the text generated just above
        self.function = namespace["make"](
            **bound,
            locate=self.locate,
            monotonic=time.monotonic,
            stop_error=self.stop_error,
            check_every=CHECK_CLOCK_EVERY,
            check_seconds=CHECK_CLOCK_SECONDS,
        )
        self.function.compiled_loop = self
        self._code = self.function.__code__
        self.function = native.native_loop(self, self.function, self.schedule)

    @property
    def function_name(self) -> str:
        return identifier("loop_", self.name)

    def _generate(self, inside, predicate, switch_of_merge, position) -> tuple[str, dict]:
        nodes = self.nodes
        parameters = {edge: f"in{i}" for i, edge in enumerate(self.inputs)}
        names: dict[tuple[int, int], str] = {}
        bound: dict[str, Any] = {}
        emitter = LineEmitter(bound)
        start: list[str] = []
        for index in inside:
            node = nodes[index]
            if node.kind == NodeKind.ENTER:
                parameter = parameters[tuple(node.inputs[0])]
                names[(index, 0)] = parameter
                if node.is_constant and parameter not in emitter.scalars:
                    alias = emitter.scalar_alias(parameter, node)
                    if alias is not None:
                        start.append(f"{alias}  # {describe(node)}")
        merges = [i for i in inside if nodes[i].kind == NodeKind.MERGE]
        for merge in merges:
            variable = value_name(merge, 0, 1)
            enter = nodes[merge].inputs[0][0]
            start.append(f"{variable} = {names[(enter, 0)]}  # {describe(nodes[merge])}")
            names[(merge, 0)] = variable
            switch = switch_of_merge[merge]
            names[(switch, 0)] = names[(switch, 1)] = variable
        ops = sorted(inside, key=position.__getitem__)
        ops = [i for i in ops if nodes[i].kind == NodeKind.OP]
        in_body: set[int] = set()
        for index in ops:
            node = nodes[index]
            producers = [p for p, _ in node.inputs] + list(node.control_inputs)
            if any(p in in_body for p in producers) or any(
                nodes[p].kind == NodeKind.SWITCH for p, _ in node.inputs
            ):
                in_body.add(index)
        if predicate[0] in in_body:
            raise AssertionError("the loop's predicate lies in its body")
        steps: list[tuple[str, int, tuple[str, ...], Any]] = []

        accumulations = _accumulations(nodes, inside, merges, switch_of_merge)
        for merge in accumulations.values():
            start.append(f"own{merge} = False  # {describe(nodes[merge])} holds an Enter's value")

        def emit(index: int) -> None:
            node = nodes[index]
            args = tuple(names[tuple(edge)] for edge in node.inputs)
            targets = [value_name(index, k, node.num_outputs) for k in range(node.num_outputs)]
            cond = getattr(node.kernel, "compiled_cond", None)
            if index in accumulations:
                merge = accumulations[index]
                text = _accumulation_line(node, index, args, names[(merge, 0)], merge, bound)
                steps.append((f"{text}  # {describe(node)}", index, args, None))
                steps.append((f"own{merge} = True", None, (), None))
            elif _constant_value(node) is not None:
                start.extend(text for text, _ in emitter.lines(node, index, args))
            elif cond is not None:
                steps.extend(cond.inline_lines(emitter, args, targets, f"c{index}_"))
            else:
                for text, step in emitter.lines(node, index, args):
                    steps.append((text, index, args, step))
            for k in range(node.num_outputs):
                names[(index, k)] = targets[k]

        self.schedule = (
            merges,
            [i for i in ops if i not in in_body],
            [i for i in ops if i in in_body],
        )
        for index in ops:
            if index not in in_body:
                emit(index)
        first_switch = switch_of_merge[merges[0]]
        test_args = (names[(merges[0], 0)], names[predicate])
        steps.append((f"if not {names[predicate]}:  # the Switches", first_switch, test_args, None))
        steps.append(("    break", None, (), None))
        for index in ops:
            if index in in_body:
                emit(index)
        next_values = []
        for merge in merges:
            back = nodes[merge].inputs[1][0]
            next_values.append(names[tuple(nodes[back].inputs[0])])
        variables = ", ".join(names[(m, 0)] for m in merges)
        steps.append(
            (f"{variables} = {', '.join(next_values)}  # the NextIterations", None, (), None)
        )
        results = [names[(nodes[e].inputs[0][0], 0)] for e in self.exits]
        returned = results[0] if len(results) == 1 else f"({', '.join(results)},)"
        closure = ", ".join(
            [*bound, "locate", "monotonic", "stop_error", "check_every", "check_seconds"]
        )
        arguments = ", ".join(["context", *parameters.values()])
        lines = [
            f"def make({closure}):",
            f"    def {self.function_name}({arguments}):",
            *(f"        {text}" for text in start),
            "        iteration = 0",
            '        deadline = getattr(context, "deadline", None)',
            '        cancellation = getattr(context, "cancellation", None)',
            f"        next_check = interval = {FIRST_CHECK}",
            "        checked = monotonic()",
            "        try:",
            "            while True:",
        ]
        for text, member, args, step in steps:
            if member is not None:
                self.lines[len(lines) + 1] = (member, args, step)
            lines.append(f"                {text}")
        lines += [
            "                iteration += 1",
            "                if iteration >= next_check:",
            "                    now = monotonic()",
            "                    if (cancellation is not None and cancellation.cancelled) or (",
            "                        deadline is not None and now > deadline",
            "                    ):",
            "                        raise stop_error(context, iteration, now)",
            "                    if now - checked < check_seconds:",
            "                        interval = min(4 * interval, check_every)",
            "                    else:",
            "                        interval = (interval + 1) // 2",
            "                    next_check = iteration + interval",
            "                    checked = now",
            "        except Exception as error:",
            "            locate(error, iteration)",
            "            raise",
            f"        return {returned}",
            f"    return {self.function_name}",
        ]
        return "\n".join(lines) + "\n", bound

    def stop_error(self, context, iteration: int, now: float) -> Optional[Exception]:
        """The error that stops the loop in iteration ``iteration`` at time ``now``: its run
        was cancelled or is past its deadline; else None."""
        cancellation = getattr(context, "cancellation", None)
        if cancellation is not None and cancellation.cancelled:
            return cancellation.error()
        deadline = getattr(context, "deadline", None)
        if deadline is not None and now > deadline:
            return self._deadline_error(iteration)
        return None

    def _deadline_error(self, iteration: int) -> executor.DeadlineExceededError:
        return executor.DeadlineExceededError(
            f"the run did not finish before its deadline; it was noticed in iteration "
            f"{iteration} of compiled loop {self.frame_name!r}",
            iteration=iteration,
        )

    def locate(self, error: BaseException, iteration: int) -> None:
        """Adds this loop's ``(frame name, iteration)`` to ``error.compiled_frames`` and, for
        an error of one of its lines, records the member that raised it (`locate_member`)."""
        if not hasattr(error, "compiled_frames"):
            error.compiled_frames = []
        error.compiled_frames.append((self.frame_name, iteration))
        locate_member(error, self._code, self.lines, self.nodes)


def _replacement(loop: CompiledLoop) -> tuple:
    """What `replace_many` needs to put ``loop``'s node where its last member was."""

    def loop_node(inputs, control_inputs) -> Node:
        return Node(
            name=loop.name,
            kind=NodeKind.OP,
            kernel=loop.function,
            inputs=inputs,
            control_inputs=control_inputs,
            num_outputs=len(loop.exits),
            wants_context=True,
            inline=None,
            tag=loop.tag,
        )

    output_of = {(exit_index, 0): k for k, exit_index in enumerate(loop.exits)}
    return loop.members, loop_node, loop.inputs, loop.control_inputs, output_of

"""Compiled regions: a lowering choice that runs stretches of a plan as generated Python.

Where it plugs in: after lowering.  `session.lower_graph` makes the interpreted plan, the
reference; `compile_program` takes that plan's `executor.Program` and returns a twin program
in which each *region* (`regions`: a convex set of pure ordinary ops of one frame that are
dead together) is one ordinary node whose kernel is a generated function (`codegen`) calling
the members' kernels in order.  The Session keeps both and picks one per run:

- a run that records statistics (``run_metadata``) or watches tensors (``dataflow.debug``)
  always uses the interpreted plan, so every op has its own record and watch;
- otherwise, by the mode (the environment variable ``DATAFLOW_COMPILE``, read at import, or
  `set_mode`): ``"off"`` never compiles; ``"auto"`` (the default) compiles a plan on its
  ``AUTO_AFTER_RUNS + 1``-th run, regions of at least ``AUTO_MIN_OPS`` ops, so a graph run once
  or twice pays nothing; ``"force"`` compiles every plan on its first run, every region down
  to one op (the test mode: the suite run with it proves compiled runs equal interpreted
  ones).

Conds and loops go first, innermost first: a structured `cond` of pure branches becomes one
node running ``if pred: ... else: ...`` (`conds`), a structured `while_loop` frame of pure ops
(and of conds and loops compiled already) one node running a Python ``while`` loop (`loops`);
the two alternate until neither finds more to compile.  A cond or loop may also hold the
stateful ops whose effects the program's edges order (a gradient stack's pushes and pops, a
TensorArray's reads and writes) and reads of variables (`regions.why_not_eligible`), so that
the forward and backward loops of a differentiated `while_loop`, and the gradient of a cond
inside one, run compiled: a loop runs its iterations in order, as the edges order the pushes
and pops (`loops`, "Gradient stacks").  Regions are then found in what is
left, outside every cond and loop that could not be compiled as a whole.

Invariants of a compiled run, each as the interpreter's: the same values, bit for bit, of the
same types and dtypes (members run their own kernels, see `codegen` for the few expressions
that replace one); the same errors (a region's failure names the member that raised, its
inputs, and the frame and iteration, `session._kernel_error`); the same deadness (rule 1 of
`regions`); deadlines and cancellation (a region is straight-line, bounded work, and the
executor checks between nodes; a compiled loop checks itself, at intervals of iterations
that it keeps about a millisecond of work long, see `loops`).
Only plans that the Session lowers itself are compiled: functions run
inside an op (``If``, ``PartitionedCall``) and partitioned steps keep the interpreter.

Where numba is installed, a region or loop of scalars whose every op has an exact native form
runs as machine code (`native`: `set_native`, ``DATAFLOW_NATIVE``, `native_available`), the
Python function staying its fallback; and the elementwise ops on arrays of one shape (Adam's
update of a variable, a bias and its ReLU, a ReLU's gradient, an LSTM cell's gate arithmetic)
are grouped into regions that run as one numba loop each (`native_arrays`), in the same
modes: those inside loop frames before the conds and loops are compiled, so compiled loop
bodies call them, the others before the regions are found.

Layer: the lowest part of the client (``dataflow.client``): it may import `executor`, the
framework, ops, `primitives`, `linalg`, autodiff and passes, never the Session that asks it.
Invariant: compiled code gives the interpreter's values, deadness and errors; what it
cannot compile it leaves to the interpreter and says why (`regions.NotCompiled`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Optional

import executor
from executor.program import Node, NodeKind, Program

from . import native_arrays
from .compiled_region import CompiledRegion
from .conds import CompiledCond, compile_conds
from .loops import CompiledLoop, compile_loops, failed_where
from .loops import frames_of as _frames_of
from .loops import loop_guards as _loop_guards
from .native import native_available, native_mode, set_native
from .regions import find_regions

MODES = ("off", "auto", "force")
_mode = os.environ.get("DATAFLOW_COMPILE", "auto")
if _mode not in MODES:
    raise ValueError(f"DATAFLOW_COMPILE must be one of {MODES}, not {_mode!r}")
AUTO_AFTER_RUNS = 2
AUTO_MIN_OPS = 4


def mode() -> str:
    return _mode


def set_mode(new_mode: str) -> str:
    """Sets the compilation mode (one of `MODES`) for plans compiled from now on; returns the
    mode it replaces."""
    global _mode
    if new_mode not in MODES:
        raise ValueError(f"the compilation mode must be one of {MODES}, not {new_mode!r}")
    previous, _mode = _mode, new_mode
    return previous


def compile_now(runs: int) -> bool:
    """Whether a plan that has now run ``runs`` times (this run included) is compiled."""
    return _mode == "force" or (_mode == "auto" and runs > AUTO_AFTER_RUNS)


@dataclasses.dataclass
class CompiledProgram:
    """The twin of an interpreted program: ``nodes`` (a region's node has the tag of its last
    member), the analysed ``executable``, and the ``regions`` in it."""

    nodes: list
    executable: executor.Plan
    regions: list  # the `CompiledCond`s and `CompiledLoop`s, then the `CompiledRegion`s


def compile_structures(program: Program, refusals: Optional[dict] = None) -> tuple[Program, list]:
    """``program`` with every cond and loop that may be compiled replaced by one node, inner
    ones first, and the `CompiledCond`s and `CompiledLoop`s made, in the order made; why each
    other cond and loop stays interpreted goes into ``refusals`` (``{"loop <name>": reason}``)."""
    made: list = []
    while True:
        program, conds = compile_conds(program, refusals)
        program, loops = compile_loops(program, refusals)
        made += conds + loops
        if not loops:
            return program, made


def compile_program(
    program: Program, min_ops: int | None = None, refusals: Optional[dict] = None
) -> CompiledProgram | None:
    """The twin of ``program`` with every cond and loop frame that may be compiled (`conds`,
    `loops`) and its regions of at least ``min_ops`` ops (by default what the mode says)
    compiled, or None when it has neither.  Why each other cond and loop stays interpreted
    goes into ``refusals`` (``{"cond <name>": reason, "loop <name>": reason}``)."""
    if min_ops is None:
        min_ops = 1 if _mode == "force" else AUTO_MIN_OPS
    if any(node.blocking or node.asynchronous for node in program.nodes):
        if refusals is not None:
            refusals["program"] = "an op of the run waits for another thread (a Recv, a queue)"
        return None  # a rendezvous partner could wait on a member while the region waits
    program, in_loops = _compile_array_regions(program, in_loops=True)
    program, loops = compile_structures(program, refusals)
    program, arrays = compile_array_regions(program)
    arrays = in_loops + arrays
    nodes = list(program.nodes)
    found = find_regions(nodes, min_ops)
    if not found:
        if not loops and not arrays:
            return None
        return CompiledProgram(nodes, executor.prepare(program), [*loops, *arrays])
    new_nodes, new_program, regions = _replace_regions(program, found, CompiledRegion)
    return CompiledProgram(new_nodes, executor.prepare(new_program), [*loops, *arrays, *regions])


def compile_array_regions(program: Program) -> tuple[Program, list]:
    """``program`` with each region of elementwise array ops that has a native kernel
    (`native_arrays`) replaced by one node, and those `CompiledRegion`s; ``program`` itself
    where the native tier is off or numba is missing."""
    return _compile_array_regions(program, in_loops=False)


def _compile_array_regions(program: Program, in_loops: bool) -> tuple[Program, list]:
    """`compile_array_regions`, of every node (``in_loops`` False) or only of the nodes inside
    loop frames (True): those run before the loops are compiled, so that a compiled loop's
    body calls their kernels (a loop compiled whole hides its members from a later search)."""
    if native_mode() == "off" or not native_available():
        return program, []
    within = analysis = None
    if in_loops:
        frame = _frames_of(program.nodes)
        analysis = _loop_guards(program.nodes)
        if frame is None or analysis is None:
            return program, []
        within = [bool(path) for path in frame]
    found, forms = native_arrays.find_array_regions(program.nodes, within, analysis)
    outputs = _outputs_of(program, found)
    kept = [
        members
        for members, used in zip(found, outputs)
        if native_arrays.array_kernel_writable(program.nodes, members, used, forms)
    ]
    sigmoids = {
        index: dtype
        for index, node in enumerate(program.nodes)
        if (within is None or within[index])
        and (dtype := native_arrays.sigmoid_dtype(node)) is not None
    }
    kept += [[index] for index in sigmoids]
    if not kept:
        return program, []

    def make(name, nodes, members, used):
        def make_native(region, python_function):
            if len(members) == 1 and members[0] in sigmoids:
                return native_arrays.NativeSigmoid(region, python_function, sigmoids[members[0]])
            return native_arrays.native_array_region(region, python_function, forms)

        return CompiledRegion(name, nodes, members, used, make_native)

    _, new_program, regions = _replace_regions(program, kept, make)
    return new_program, regions


def _outputs_of(program: Program, found: list) -> list[list]:
    """Per group of ``found``, the edges of its members used outside it or fetched, sorted."""
    region_of = {member: r for r, members in enumerate(found) for member in members}
    used_outside: list[list] = [[] for _ in found]

    def note_use(edge) -> None:
        r = region_of.get(edge[0])
        if r is not None and tuple(edge) not in used_outside[r]:
            used_outside[r].append(tuple(edge))

    for index, node in enumerate(program.nodes):
        for edge in node.inputs:
            if region_of.get(edge[0], -1) != region_of.get(index, -2):
                note_use(edge)
    for edge in program.fetches:
        note_use(edge)
    return [sorted(used) for used in used_outside]


def _replace_regions(program: Program, found: list, make) -> tuple[list, Program, list]:
    """``program`` with each group of ``found`` (node indices in topological order) replaced
    by the node of its region ``make(name, nodes, members, outputs)`` (a `CompiledRegion`):
    the new nodes, the new program and the regions."""
    nodes = list(program.nodes)
    region_of = {member: r for r, members in enumerate(found) for member in members}
    regions = []
    for members, used in zip(found, _outputs_of(program, found)):
        last = nodes[members[-1]]
        name = last.name if len(members) == 1 else f"{nodes[members[0]].name}..{last.name}"
        regions.append(make(name, nodes, members, used))
    new_nodes, new_program = _twin_program(program, nodes, regions, region_of)
    return new_nodes, new_program, regions


def _twin_program(program: Program, nodes: Sequence[Node], regions, region_of: dict):
    """``program`` with each region's members replaced by one node, placed where its last
    member was, and every edge, control edge, fetch and target renumbered."""
    last_members = {region.members[-1]: r for r, region in enumerate(regions)}
    new_index: dict[int, int] = {}
    region_index: dict[int, int] = {}
    order = []
    for index in range(len(nodes)):
        r = region_of.get(index)
        if r is None:
            new_index[index] = len(order)
            order.append(("node", index))
        elif index in last_members:
            region_index[r] = len(order)
            order.append(("region", r))
    output_position = {
        edge: (region_index[r], k)
        for r, region in enumerate(regions)
        for k, edge in enumerate(region.outputs)
    }

    def edge_of(edge) -> tuple[int, int]:
        edge = tuple(edge)
        if edge[0] in region_of:
            return output_position[edge]
        return (new_index[edge[0]], edge[1])

    def control_of(producers, exclude: int = -1) -> list[int]:
        result = []
        for p in producers:
            r = region_of.get(p)
            target = new_index[p] if r is None else region_index[r]
            if target != exclude and target not in result:
                result.append(target)
        return result

    new_nodes = []
    for kind, which in order:
        if kind == "node":
            node = nodes[which]
            new_nodes.append(
                dataclasses.replace(
                    node,
                    inputs=[edge_of(e) for e in node.inputs],
                    control_inputs=control_of(node.control_inputs),
                )
            )
            continue
        region = regions[which]
        members = [nodes[m] for m in region.members]
        controls = [p for m in members for p in m.control_inputs if p not in region.members]
        inline = True if all(m.inline is True for m in members) else None
        new_nodes.append(
            Node(
                name=region.name,
                kind=NodeKind.OP,
                kernel=region.function,
                inputs=[edge_of(e) for e in region.inputs],
                control_inputs=control_of(controls, exclude=region_index[which]),
                num_outputs=len(region.outputs),
                inline=inline,
                tag=members[-1].tag,
            )
        )
    targets = []
    for t in program.targets:
        r = region_of.get(t)
        target = new_index[t] if r is None else region_index[r]
        if target not in targets:
            targets.append(target)
    twin = Program(
        nodes=new_nodes,
        arg_nodes=tuple(new_index[a] for a in program.arg_nodes),
        fetches=[edge_of(e) for e in program.fetches],
        targets=tuple(targets),
    )
    return new_nodes, twin

"""Whole `cond`s compiled to one node: a generated function ``if pred: ... else: ...``.

Two parts, kept apart so that another code generator can reuse the first:

- `find_conds` (the analysis) finds, in a lowered program, each `cond` that may be compiled
  and says what it is made of (`CondStructure`): its predicate edge, the Switches that bring
  values into each branch, each branch's ops in the order they run, the Merges, and what the
  node takes (the predicate, then each outer value once; control inputs) and gives (the Merge
  outputs used outside it).
- `CompiledCond` (the code) writes the Python function of one structure.

A cond is compiled when `cond` built it (or the gradient of a cond inside a differentiated
loop, `primitives.loop_gradients`) and each of its branches is pure, or stateful only in the
ways the edges order (`regions.why_not_eligible` with ``in_structure``):

- its Merges are the ones the cond's `CondContext` recorded (``merges``), and the ones built
  around it that join a value of each branch (`_add_joining_merges`: the tokens that order a
  branch's stack pushes, a cond gradient's Merges), each joining one value of the false
  branch (input 0) and one of the true branch (input 1); hand-wired Switch/Merge pairs whose
  values come from no cond's branches keep the interpreter;
- a node is in a branch when the context it was built in lies within that branch's context;
  every such node is a Switch on the cond's predicate built by the branch's context for a
  value from outside (a capture: its data input lies outside the cond), or an op eligible for
  a region (`regions.is_eligible`, the branch's pivot included), or an inner cond or loop
  compiled already (the compiler works innermost first, so a cond around an inner structure
  that could not be compiled is refused too); a Switch on the cond's predicate built outside
  the branches and read only by the cond is a capture too (`_add_switches_around`: how a cond
  gradient brings the gradient into its branches);
- the cond's own Switch(pred, pred), read by the two pivots, is part of it;
- a branch node reads only its own branch's nodes, the outputs of Switches on its side, and
  (by control edges only) nodes outside the cond; nothing outside reads a branch node except
  through a Merge, and no branch node is fetched or run as a target (fetching a tensor inside
  a branch keeps the cond interpreted);
- **deadness**: every value and control edge entering the cond is dead only when the
  predicate is.  Precisely, the guard (`regions.guards`) of each entering edge is a subset of
  the predicate's.  The interpreter then gives: with a dead predicate, every Switch, hence every
  branch op and every Merge, dead; with a live one, the taken branch all live and run (its
  inputs are live), the untaken branch all dead, never run (ops without data inputs hang on the
  pivot by a control edge), and every Merge live with the taken side's value.  The node gives
  exactly that: it fires when all its inputs are live, and is dead as a whole otherwise.  A cond
  whose data inputs may be dead on their own (a live predicate with a dead value that only the
  untaken branch reads still gives live results) stays interpreted: one node cannot be partly
  dead.

What the generated function does: it tests the predicate with ``if`` (``bool``, as a Switch
does), runs the taken branch's ops in topological order, each as a region's member runs (the
`codegen.LineEmitter` lines: the same kernels or expressions, so values and dtypes are the
interpreter's bit for bit), and returns the Merges' values: the taken side's value, the value
itself when a branch returns a captured tensor, and ``value_index`` (output 1 of a Merge)
as the interpreter's ``np.int32`` position.  An error names the op that raised it
(`codegen.locate_member`); inside a compiled loop, the loop adds the iteration.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from executor.program import Node, NodeKind, Program

from . import native
from .codegen import (
    LineEmitter,
    describe,
    identifier,
    locate_member,
    quoted,
    return_statement,
    value_name,
)
from .regions import (
    NotCompiled,
    guards,
    is_eligible,
    replace_many,
    topological_order,
    why_not_eligible,
)


def is_compiled_structure(node: Node) -> bool:
    """Whether ``node`` stands for a cond or loop compiled already."""
    return hasattr(node.kernel, "compiled_cond") or hasattr(node.kernel, "compiled_loop")


@dataclasses.dataclass
class Branch:
    """One branch of a `CondStructure`: ``switches`` are the Switches whose output
    ``taken_when`` (1: true, 0: false) it reads, each standing for the outer value it passes;
    ``ops`` its ops in the order they run; ``results`` the edge giving each Merge's value when
    it is taken (an edge of ``ops``, or a Switch output)."""

    taken_when: int
    switches: tuple[int, ...]
    ops: tuple[int, ...]
    results: tuple[tuple[int, int], ...]


@dataclasses.dataclass
class CondStructure:
    """What one compilable cond of a program is made of (node indices of that program).

    ``predicate``: the edge every Switch tests; ``switch``: the cond's own Switch(pred, pred)
    or None (pruned with the pivots); ``branches``: (false, true); ``merges``: the Merges, in
    node order; ``inputs``: the edges from outside the node takes, the predicate first, then the
    value of each Switch from outside (each edge once); ``control_inputs``: the control inputs
    of members from outside; ``outputs``: the Merge outputs ``(merge, 0 or 1)`` used outside or
    fetched, in the order the node gives them; ``members``: every node it stands for.
    """

    name: str
    predicate: tuple[int, int]
    switch: Optional[int]
    branches: tuple[Branch, Branch]
    merges: tuple[int, ...]
    inputs: tuple[tuple[int, int], ...]
    control_inputs: tuple[int, ...]
    outputs: tuple[tuple[int, int], ...]
    members: tuple[int, ...]

    def outer_value(self, switch: int, nodes: Sequence[Node]) -> tuple[int, int]:
        """The edge from outside that Switch ``switch`` passes into a branch."""
        return tuple(nodes[switch].inputs[0])


def _context_chain(node: Node) -> list:
    context = getattr(node.tag, "_control_flow_context", None)
    chain = []
    while context is not None:
        chain.append(context)
        context = context.outer_context
    return chain


def find_conds(program: Program, refusals: Optional[dict] = None) -> list[CondStructure]:
    """The conds of ``program`` that may be compiled (see the module docstring); none of them
    contains another, so they can be replaced together.  Why each other cond may not be is put
    in ``refusals`` (``{"cond <name>": reason}``)."""
    nodes = program.nodes
    chains = [_context_chain(node) for node in nodes]
    owners: dict[int, dict[int, Any]] = {}  # id(Merge op) -> {branch: CondContext}
    for chain in chains:
        for context in chain:
            if hasattr(context, "branch"):
                for merge in context.merges:
                    owners.setdefault(id(merge), {})[context.branch] = context
    groups: dict[tuple[int, int], list[int]] = {}
    contexts_of: dict[tuple[int, int], tuple] = {}
    for index, node in enumerate(nodes):
        pair = owners.get(id(node.tag))
        if node.kind == NodeKind.MERGE and pair is not None and len(pair) == 2:
            key = (id(pair[0]), id(pair[1]))
            groups.setdefault(key, []).append(index)
            contexts_of[key] = (pair[0], pair[1])
    _pair_branches(chains, contexts_of)
    if not contexts_of:
        return []
    _add_joining_merges(nodes, chains, owners, groups, contexts_of)
    if not groups:
        return []
    order = topological_order(nodes)
    if len(order) != len(nodes):
        return []
    guard = guards(nodes, order)
    consumers: list[list[int]] = [[] for _ in nodes]
    for index, node in enumerate(nodes):
        for p in {p for p, _ in node.inputs} | set(node.control_inputs):
            consumers[p].append(index)
    outside_reads = {tuple(e) for e in program.fetches}
    targets = set(program.targets)
    within: dict[int, list[int]] = {}  # id(context) -> the nodes inside it, at any depth
    for index, chain in enumerate(chains):
        for context in chain:
            within.setdefault(id(context), []).append(index)
    position = {index: k for k, index in enumerate(order)}
    found = []
    for key, merges in groups.items():
        name = contexts_of[key][1].name
        try:
            found.append(
                _analyse(
                    nodes,
                    within,
                    position,
                    guard,
                    consumers,
                    contexts_of[key],
                    merges,
                    outside_reads,
                    targets,
                )  # fmt: skip
            )
        except NotCompiled as e:
            if refusals is not None:
                refusals[f"cond {quoted(name)}"] = str(e)
        else:
            if refusals is not None:
                refusals.pop(f"cond {quoted(name)}", None)
    return found


def _pair_branches(chains, contexts_of: dict) -> None:
    """Adds to ``contexts_of`` the (false, true) branch contexts of each cond some node lies
    in whose Merges its contexts did not record: the gradient of a cond inside a
    differentiated loop (`primitives.loop_gradients.BackwardCondContext`), whose Merges and
    the Switch that brings the gradient in are built around the branches, not by them.  The
    two branches of one cond share its name and predicate."""
    branches: dict[tuple, dict[int, Any]] = {}
    for chain in chains:
        for context in chain:
            pred = getattr(context, "pred", None)
            if getattr(context, "branch", None) in (0, 1) and pred is not None:
                branches.setdefault((context.name, id(pred)), {})[context.branch] = context
    for pair in branches.values():
        if len(pair) == 2:
            contexts_of.setdefault((id(pair[0]), id(pair[1])), (pair[0], pair[1]))


def _add_joining_merges(nodes, chains, owners, groups, contexts_of) -> None:
    """Adds to each cond's ``groups`` entry the Merges its contexts did not record that join
    a value of its false branch (input 0) with one of its true branch (input 1), a value of
    a branch being one computed in it or a Switch output on the cond's predicate for that
    branch: the tokens by which `primitives.loop_gradients` orders the stack pushes and pops
    of a branch inside a differentiated loop (``push_sync``, ``pop_sync``), and the Merges of
    a cond's gradient there.  Such a Merge is the cond's like a recorded one: live with the
    taken branch's value whenever the predicate is live."""
    key_of = {}  # id(branch context) -> the key of its cond in ``groups``
    by_predicate = {}  # (id(predicate op), output) -> the key of its cond
    for key, pair in contexts_of.items():
        key_of[id(pair[0])], key_of[id(pair[1])] = (key, 0), (key, 1)
        pred = pair[0].pred
        by_predicate[(id(pred.op), pred.value_index)] = key

    def side_of(producer: int, output: int):
        node = nodes[producer]
        found = key_of.get(id((chains[producer] or [None])[0]))
        if found is None and node.kind == NodeKind.SWITCH and output in (0, 1):
            predicate, which = node.inputs[1]
            key = by_predicate.get((id(nodes[predicate].tag), which))
            found = None if key is None else (key, output)
        return found

    for index, node in enumerate(nodes):
        if node.kind != NodeKind.MERGE or id(node.tag) in owners or len(node.inputs) != 2:
            continue
        sides = [side_of(p, output) for p, output in node.inputs]
        if None in sides or sides[0][0] != sides[1][0] or (sides[0][1], sides[1][1]) != (0, 1):
            continue
        key = sides[0][0]
        if (chains[index] or [None])[0] is contexts_of[key][0].outer_context:
            groups.setdefault(key, []).append(index)


def _edge_guard(nodes: Sequence[Node], guard: list, edge) -> frozenset:
    producer, output = edge
    result = guard[producer]
    if nodes[producer].kind == NodeKind.SWITCH:
        result |= {("switch", tuple(nodes[producer].inputs[1]), output)}
    return result


def _control_guard(nodes: Sequence[Node], guard: list, producer: int) -> frozenset:
    """The guard of a control edge from ``producer``: the producer's own (a Switch's control
    edge is live when its inputs are, whichever of its outputs is dead)."""
    return guard[producer]


def _analyse(nodes, within, position, guard, consumers, contexts, merges, fetched, targets):
    """The `CondStructure` of the cond whose branch contexts are ``contexts`` (false, true)
    and whose Merges in the program are ``merges``; `NotCompiled` says why it may not be.
    ``within`` lists the nodes inside each context; ``position`` is each node's place in a
    topological order.  The steps: which branch each node lies in and the cond's own Switch
    (`_cond_sides`), the one predicate every Switch switches on (`_cond_switches`), what may
    cross the cond's edge (`_check_cond_switches`, `_cond_controls`), the results its Merges
    take (`_cond_results`), and that nothing enters dead where the predicate is live."""
    not_to_replace = {producer for producer, _ in fetched} | targets
    side, own_switch = _cond_sides(nodes, within, contexts)
    predicate, switch_side = _cond_switches(nodes, side, own_switch, contexts)
    _add_switches_around(nodes, side, own_switch, switch_side, merges, predicate, consumers)
    members = set(side) | set(switch_side) | set(merges)
    if predicate[0] in members:
        raise NotCompiled("its predicate is computed inside the cond")
    _check_cond_switches(nodes, switch_side, members, consumers)
    controls = _cond_controls(nodes, side, switch_side, members, consumers, not_to_replace)
    if own_switch is not None:
        controls += [p for p in nodes[own_switch].control_inputs if p not in controls]
    if not_to_replace & set(switch_side):
        raise NotCompiled("one of its Switches is fetched or a target of the run")
    results = _cond_results(nodes, merges, side, switch_side)
    inputs = [predicate]
    for switch in switch_side:
        edge = tuple(nodes[switch].inputs[0])
        if edge not in inputs:
            inputs.append(edge)
    allowed = _edge_guard(nodes, guard, predicate)
    entering = [_edge_guard(nodes, guard, e) for e in inputs]
    entering += [_control_guard(nodes, guard, c) for c in controls]
    if any(not g <= allowed for g in entering):
        raise NotCompiled("some of its inputs may be dead when its predicate is live")
    outputs = []
    for merge in merges:
        for output in (0, 1):
            edge = (merge, output)
            used = edge in fetched or any(
                c not in members and edge in {tuple(e) for e in nodes[c].inputs}
                for c in consumers[merge]
            )
            if used:
                outputs.append(edge)
    branches = tuple(
        Branch(
            taken_when=branch,
            switches=tuple(s for s, b in switch_side.items() if b in (None, branch)),
            ops=tuple(
                sorted(
                    (i for i, b in side.items() if b == branch and i not in switch_side),
                    key=position.__getitem__,
                )
            ),
            results=tuple(results[branch]),
        )
        for branch in (0, 1)
    )
    return CondStructure(
        name=contexts[1].name,
        predicate=predicate,
        switch=own_switch,
        branches=branches,
        merges=tuple(sorted(merges)),
        inputs=tuple(inputs),
        control_inputs=tuple(controls),
        outputs=tuple(outputs),
        members=tuple(sorted(members)),
    )


class CompiledCond:
    """One cond's generated function and what it stands for: ``structure`` (`CondStructure`),
    ``members``, ``inputs`` (after the run's context when ``wants_context``), ``outputs``,
    ``source`` and ``function``; ``lines`` maps a line of the source to ``(member, argument
    names, step)`` (`codegen.locate_member`)."""

    kind = "cond"

    def __init__(self, nodes: Sequence[Node], structure: CondStructure):
        self.nodes = nodes
        self.structure = structure
        self.name = structure.name
        self.members = structure.members
        self.inputs = structure.inputs
        self.outputs = structure.outputs
        ops = [i for branch in structure.branches for i in branch.ops]
        self.wants_context = any(nodes[i].wants_context for i in ops)
        self.inline = True if all(nodes[i].inline is True for i in ops) else None
        self.tag = nodes[structure.merges[0]].tag
        tester = structure.switch
        if tester is None:
            tester = (
                structure.branches[1].switches[0]
                if structure.branches[1].switches
                else (structure.branches[0].switches[0])
            )
        self.tester = tester  # the node an error of the test of the predicate names
        self.lines: dict[int, tuple[int, tuple[str, ...], Any]] = {}
        self.source, bound = self._generate()
        namespace: dict[str, Any] = {}
        code = compile(self.source, f"<compiled cond {quoted(self.name)}>", "exec")
        exec(code, namespace)  # noqa: S102 - the text generated just above
        self.function = namespace["make"](**bound, locate=self.locate)
        self.function.compiled_cond = self
        self._code = self.function.__code__
        self.function = native.native_cond(self, self.function)

    @property
    def function_name(self) -> str:
        return identifier("cond_", self.name)

    def _generate(self) -> tuple[str, dict]:
        nodes, structure = self.nodes, self.structure
        parameters = {edge: f"in{k}" for k, edge in enumerate(structure.inputs)}
        bound: dict[str, Any] = {"value_index0": np.int32(0), "value_index1": np.int32(1)}
        emitter = LineEmitter(bound)
        predicate = parameters[structure.predicate]
        tester = self.tester
        arguments = (["context"] if self.wants_context else []) + list(parameters.values())
        # The header names what the body binds: written once the body is, counted now.
        lines = ["", "", "        try:"]
        self.lines[len(lines) + 1] = (tester, (predicate, predicate), None)
        lines.append(f"            if {predicate}:  # {describe(nodes[tester])}")
        for branch in reversed(structure.branches):
            body, results = self._branch(branch, emitter, parameters, "")
            if branch.taken_when == 0:
                lines.append("            else:")
            returned = return_statement(results)
            for text, index, args, step in body:
                self.lines[len(lines) + 1] = (index, args, step)
                lines.append(f"                {text}")
            lines.append(f"                {returned}")
        lines[0] = f"def make({', '.join([*bound, 'locate'])}):"
        lines[1] = f"    def {self.function_name}({', '.join(arguments)}):"
        lines += [
            "        except Exception as error:",
            "            locate(error)",
            "            raise",
            f"    return {self.function_name}",
        ]
        return "\n".join(lines) + "\n", bound

    def _branch(self, branch: Branch, emitter: LineEmitter, parameters: dict, stem: str):
        """The lines ``(text, member, argument names, step)`` of one branch, its ops' values
        named with ``stem`` before their indices (`codegen.LineEmitter.lines`), and the names
        of the values it gives for ``outputs``."""
        nodes, structure = self.nodes, self.structure
        names: dict[tuple[int, int], str] = {}
        for switch in branch.switches:
            outer = parameters[tuple(nodes[switch].inputs[0])]
            names[(switch, 0)] = names[(switch, 1)] = outer
        body = []
        for index in branch.ops:
            node = nodes[index]
            args = tuple(names[tuple(edge)] for edge in node.inputs)
            for text, step in emitter.lines(node, f"{stem}{index}", args):
                body.append((text, index, args, step))
            for k in range(node.num_outputs):
                names[(index, k)] = value_name(f"{stem}{index}", k, node.num_outputs)
        results = []
        for merge, output in structure.outputs:
            if output == 1:
                results.append(f"value_index{branch.taken_when}")
            else:
                results.append(names[branch.results[structure.merges.index(merge)]])
        return body, results

    def inline_lines(self, emitter: LineEmitter, arguments: tuple, targets: list, stem: str):
        """The lines ``(text, member node, argument names, step)`` that run this cond where
        its node would be called, for a caller's generated code (a compiled loop's body):
        ``if``/``else`` on the predicate, each branch's lines, then its values assigned to
        ``targets``.  ``arguments`` name the node's inputs; ``emitter`` is the caller's, so
        the branches' names (``stem`` before each member's index) and bindings join its own."""
        nodes, structure = self.nodes, self.structure
        parameters = dict(zip(structure.inputs, arguments))
        emitter.bound["value_index0"], emitter.bound["value_index1"] = np.int32(0), np.int32(1)
        predicate = parameters[structure.predicate]
        lines = [
            (
                f"if {predicate}:  # {describe(nodes[self.tester])}",
                nodes[self.tester],
                (predicate, predicate),
                None,
            )
        ]
        for branch in reversed(structure.branches):
            body, results = self._branch(branch, emitter, parameters, stem)
            if branch.taken_when == 0:
                lines.append(("else:", None, (), None))
            for text, index, args, step in body:
                lines.append(("    " + text, nodes[index], args, step))
            if targets:
                assigned = f"{', '.join(targets)} = {', '.join(results)}"
                lines.append((f"    {assigned}  # the Merges", None, (), None))
            else:
                lines.append(("    pass", None, (), None))
        return lines

    def node(self, inputs, control_inputs) -> Node:
        """The node that runs this cond, taking ``inputs`` and ``control_inputs`` (renumbered)."""
        return Node(
            name=self.name,
            kind=NodeKind.OP,
            kernel=self.function,
            inputs=inputs,
            control_inputs=control_inputs,
            num_outputs=len(self.outputs),
            wants_context=self.wants_context,
            inline=self.inline,
            tag=self.tag,
        )

    def locate(self, error: BaseException) -> None:
        """Records on ``error`` which member raised it and with what inputs."""
        locate_member(error, self._code, self.lines, self.nodes)


def _cond_sides(nodes, within, contexts) -> tuple[dict[int, int], Optional[int]]:
    """The branch each node inside the cond lies in, and the Switch its pivots read (the
    cond's own Switch of the predicate on itself), if any."""
    side: dict[int, int] = {}  # node -> the branch it lies in
    for context in contexts:
        for index in within.get(id(context), ()):
            side[index] = context.branch
    pivot_ops = {id(c.pivot.op) for c in contexts if c.pivot is not None}
    own_switch = None
    for index in side:
        if id(nodes[index].tag) in pivot_ops:
            producers = {p for p, _ in nodes[index].inputs}
            if len(producers) != 1 or (own_switch is not None and producers != {own_switch}):
                raise NotCompiled(
                    f"its pivot {quoted(nodes[index].name)} reads more than one Switch"
                )
            own_switch = producers.pop()
    return side, own_switch


def _cond_switches(nodes, side, own_switch, contexts) -> tuple[tuple, dict]:
    """The predicate's edge and the cond's Switches, each with the branch that reads it
    (None: both); every other node inside must be an op that may be compiled."""
    predicates = set()
    switch_side: dict[int, Optional[int]] = {}
    if own_switch is not None:
        switch = nodes[own_switch]
        if switch.kind != NodeKind.SWITCH or own_switch in side or len(switch.inputs) != 2:
            raise NotCompiled(
                f"its pivots do not come from a Switch of the cond: {quoted(switch.name)}"
            )
        if tuple(switch.inputs[0]) != tuple(switch.inputs[1]):
            raise NotCompiled(
                f"its pivot Switch {quoted(switch.name)} does not switch the predicate"
            )
        predicates.add(tuple(switch.inputs[1]))
        switch_side[own_switch] = None
    for index, branch in side.items():
        node = nodes[index]
        if node.kind == NodeKind.SWITCH:
            if node.tag._control_flow_context is not contexts[branch] or node.control_inputs:
                raise NotCompiled(
                    f"the Switch {quoted(node.name)} belongs to another cond or waits on a "
                    "control edge"
                )
            predicates.add(tuple(node.inputs[1]))
            switch_side[index] = branch
        elif node.kind != NodeKind.OP or not (
            is_eligible(node, in_structure=True) or is_compiled_structure(node)
        ):
            reason = why_not_eligible(node, in_structure=True)
            raise NotCompiled(f"{describe(node)} may not be compiled: {reason}")
    if len(predicates) != 1:
        raise NotCompiled("its Switches do not all switch on one predicate")
    return predicates.pop(), switch_side


def _add_switches_around(nodes, side, own_switch, switch_side, merges, predicate, consumers):
    """Adds to ``switch_side`` each Switch built outside the branches (no branch context
    holds it) that switches a value on the cond's ``predicate`` for the cond's nodes alone:
    how the gradient of a cond's Merge brings the gradient into both branches of the cond's
    gradient (`primitives.loop_gradients`).  It is a capture like a branch's own Switches."""
    readers = set(side) | set(merges)
    for index in consumers[predicate[0]]:
        node = nodes[index]
        if (
            node.kind == NodeKind.SWITCH
            and index not in side
            and index != own_switch
            and index not in switch_side
            and len(node.inputs) == 2
            and tuple(node.inputs[1]) == predicate
            and tuple(node.inputs[0]) != predicate
            and not node.control_inputs
            and consumers[index]
            and all(c in readers for c in consumers[index])
        ):
            switch_side[index] = None


def _check_cond_switches(nodes, switch_side, members, consumers) -> None:
    """A Switch of the cond switches a value from outside it, and only the cond reads it."""
    for switch in switch_side:
        if nodes[switch].inputs[0][0] in members:
            raise NotCompiled(
                f"the Switch {quoted(nodes[switch].name)} switches a value of a branch"
            )
        for c in consumers[switch]:
            if c not in members:
                raise NotCompiled(
                    f"{describe(nodes[c])}, outside the cond, reads one of its Switches"
                )


def _reads_from(nodes, side, switch_side, edge, branch: int) -> bool:
    """Whether a node of ``branch`` (or a Merge's ``branch`` side) may read ``edge``."""
    producer, output = edge
    if producer in switch_side:
        return output == branch and switch_side[producer] in (None, branch)
    return side.get(producer) == branch and nodes[producer].kind == NodeKind.OP


def _cond_controls(nodes, side, switch_side, members, consumers, not_to_replace) -> list[int]:
    """The control inputs from outside the cond that its ops wait on; each op reads only its
    own branch, is read only inside the cond, and is neither fetched nor a target."""
    controls: list[int] = []
    for index, branch in side.items():
        node = nodes[index]
        if node.kind == NodeKind.SWITCH:
            continue
        if not all(_reads_from(nodes, side, switch_side, tuple(e), branch) for e in node.inputs):
            raise NotCompiled(f"{describe(node)} reads a value from outside its branch directly")
        for p in node.control_inputs:
            if p in members:
                if side.get(p) != branch:
                    raise NotCompiled(f"{describe(node)} waits on the other branch")
            elif p not in controls:
                controls.append(p)
        if index in not_to_replace:
            raise NotCompiled(f"{describe(node)} is fetched or a target of the run")
        if any(c not in members for c in consumers[index]):
            raise NotCompiled(f"{describe(node)} is read outside the cond, not through a Merge")
    return controls


def _cond_results(nodes, merges, side, switch_side) -> tuple[list, list]:
    """The edge each Merge takes from each branch (false, true)."""
    results: tuple[list, list] = ([], [])
    for merge in merges:
        node = nodes[merge]
        if node.control_inputs or len(node.inputs) != 2:
            raise NotCompiled(
                f"its Merge {quoted(node.name)} waits on a control edge or has not two inputs"
            )
        for branch in (0, 1):
            edge = tuple(node.inputs[branch])
            if not _reads_from(nodes, side, switch_side, edge, branch):
                raise NotCompiled(
                    f"its Merge {quoted(node.name)} reads a value from outside its branch"
                )
            results[branch].append(edge)
    return results


def compile_conds(
    program: Program, refusals: Optional[dict] = None
) -> tuple[Program, list[CompiledCond]]:
    """``program`` with each cond that may be compiled now replaced by one node, innermost
    first, and the `CompiledCond`s made; why the others may not be goes into ``refusals``."""
    made: list[CompiledCond] = []
    while True:
        found = find_conds(program, refusals)
        if not found:
            return program, made
        conds = [CompiledCond(program.nodes, structure) for structure in found]
        made += conds
        program = replace_many(
            program,
            [
                (
                    cond.members,
                    lambda inputs, controls, cond=cond: cond.node(inputs, controls),
                    cond.inputs,
                    cond.structure.control_inputs,
                    {edge: k for k, edge in enumerate(cond.outputs)},
                )
                for cond in conds
            ],
        )  # then look again: an outer cond may be compilable now that its inner ones are nodes

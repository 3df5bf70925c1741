"""Static analysis of a `Program`, done once: `prepare(program) -> Plan`.

What `prepare` finds out, in this order (``docs/control-flow-semantics.md``, "Static analysis"):

1. **Shape checks.**  Every edge names an existing node and output; each node kind has the
   inputs its firing rule needs (``SWITCH`` two, ``ENTER``/``EXIT``/``NEXT_ITERATION`` one,
   ``MERGE`` at least one, ``ARG`` none and a place in ``arg_nodes``); ``OP`` has a kernel.
2. **Cycles.**  Every edge counts except a data edge ``NextIteration -> Merge`` (a back edge).
   A cycle left over raises `CycleError` with the nodes on it, in order.
3. **Frames.**  A walk from the nodes without inputs gives each node the static frame it runs
   in.  An ``ENTER`` runs in its input's frame and delivers into the child frame ``frame_name``;
   an ``EXIT`` runs in the child frame and delivers into its parent; everything else delivers
   into the frame it runs in.  All inputs of a node, data and control, must come from one frame,
   an ``EXIT`` or ``NEXT_ITERATION`` may not run in the root frame, and all ``ENTER`` nodes of a
   frame must come from one parent frame; otherwise `FrameMismatchError` names the node and the
   frames.  A node that no walk reaches (a cycle fed only by itself) is left out: it can never
   fire, and nothing that can fire depends only on it.
4. **Layout.**  Per frame: a local number for each node, the input *slots* of each node (where
   arriving values wait until the node fires), the template of pending counts that each new
   iteration copies, the consumers of each output as ``(consumer, slot)`` pairs, the Enter count,
   the Exits, ``parallel_iterations``, and the back-edge positions of each Merge.
5. **Dispatch tables.**  Per frame, one flat tuple per node ``(code, kernel, first_slot,
   second_slot_or_end, consumer, slot)`` that the runner's hot loop unpacks in one step: a node
   with a single consumer has its local number and slot there; otherwise ``consumer`` is the
   tuple of ``(consumer, slot)`` pairs and ``slot`` is -1.  An ordinary
   single-output op whose consumers are all ordinary nodes gets a *fast* code; anything else
   (control flow, several outputs, a context, a Merge or a control edge among its consumers) is
   handled by the runner's general firing method.

Decisions where the contract is silent (each as TensorFlow 1.x does unless said otherwise):

- A frame is identified by its ``frame_name``; two Enters naming one frame from different parent
  frames are an error (TensorFlow assumes frame names are unique, the helpers make them so).
- ``parallel_iterations`` of a frame is the smallest value among its Enters (TensorFlow takes the
  value of whichever Enter creates the instance first; the smallest is the same for every run).
- The Enter count of a frame counts the Enters that a walk reaches; an Enter that can never
  fire would otherwise keep every instance of its frame open.
- ``SWITCH`` and ``MERGE`` always have two outputs, ``ENTER``/``EXIT``/``NEXT_ITERATION``/``ARG``
  one; ``Node.num_outputs`` is read for ``OP`` only.  An ``OP`` with ``num_outputs == 0`` runs for
  its effect; whatever its kernel returns is ignored.
- A ``NEXT_ITERATION`` in the root frame is rejected like an ``EXIT`` there (the root frame has a
  single iteration).
- A fetch of an output that lies inside a loop frame is accepted; it never reaches the root
  frame, so at the end of the run it is reported as ``"never produced"``.
- The program is run whole: the front end prunes it.  ``targets`` are checked to be node
  indices and need nothing more (every node fires once its inputs allow).
"""

from __future__ import annotations

import concurrent.futures
from collections import deque
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np

from .costs import KernelCosts
from .errors import CycleError, FrameMismatchError, InvalidProgramError
from .observe import RunObserver
from .program import Node, NodeKind, Program
from .runner import _Run
from .stats import RunStats
from .tables import (  # noqa: F401 - the *_TABLE numbers are read from here too
    DEAD,
    FAST_BINARY,
    FAST_NARY,
    FAST_UNARY,
    FETCH_SINK,
    INLINE_TABLE,
    MEASURE_TABLE,
    NOT_MERGE,
    NOT_PRODUCED,
    POOL_TABLE,
    POOLABLE,
    SINK_PENDING,
    SLOW,
    SLOW_TABLE,
    FrameInfo,
    NodeInfo,
)


class Plan:
    """A program analysed once; `run` executes it, any number of times, from any threads.

    Its structure is immutable after `prepare`: every run keeps its own state
    (``runner._Run``).  What changes is ``costs``, the measured time of each kernel (`costs`),
    and with it which nodes the pool table keeps on the fast path.
    """

    def __init__(
        self,
        program: Program,
        infos: list[NodeInfo],
        frames: list[FrameInfo],
        fetch_slots: tuple[Optional[int], ...],
    ):
        self.program = program
        self.node_infos = infos
        self.frames = frames
        self.root_frame = frames[0]
        # Slot of each fetch in the root frame, or None for a fetch inside a loop frame.
        self.fetch_slots = fetch_slots
        self.arg_count = len(program.arg_nodes)
        # A run with a blocking or asynchronous kernel shares its state with the thread that
        # kernel waits on, or that completes it.
        self.has_blocking_nodes = any(info.blocking or info.asynchronous for info in infos)
        # What each kernel of ``inline=None`` took, on average: whether it is worth the pool.
        self.costs = KernelCosts(len(infos))

    def run(
        self,
        args: Sequence[Any] = (),
        *,
        context: Any = None,
        pool: Optional[concurrent.futures.Executor] = None,
        deadline: Optional[float] = None,
        stats: Optional[RunStats] = None,
        observer: Optional[RunObserver] = None,
    ) -> list[Any]:
        """Runs the program once and returns the values of ``program.fetches``, in order.

        ``args[k]`` is the value of ``program.arg_nodes[k]``; ``context`` is passed first to
        kernels with ``wants_context``, and its ``cancellation`` (a `Cancellation`), when it
        has one, stops the run; ``pool`` runs expensive independent kernels concurrently;
        ``deadline`` is a ``time.monotonic()`` instant; ``stats`` collects per-node records;
        ``observer`` (a `RunObserver`) is shown the values that nodes produce.
        Raises `KernelError`, `DeadlineExceededError`, `FetchNotLiveError` or
        `RunCancelledError`.
        """
        if len(args) != self.arg_count:
            raise TypeError(f"the program takes {self.arg_count} argument(s), {len(args)} given")
        return _Run(self, args, context, pool, deadline, stats, observer).execute()

    def frame_of(self, node_index: int) -> Optional[str]:
        """Name of the frame node ``node_index`` runs in (``"root"``), or None if unreachable."""
        frame = self.node_infos[node_index].frame
        return None if frame is None else frame.name

    def output_frame_of(self, node_index: int) -> Optional[str]:
        """Name of the frame the outputs of node ``node_index`` lie in: the frame it runs in,
        except the child frame for an ``ENTER`` and the parent frame for an ``EXIT``; None if
        the node is unreachable."""
        frame = self.node_infos[node_index].out_frame
        return None if frame is None else frame.name


def prepare(program: Program) -> Plan:
    """Analyses ``program`` once (frames, cycles, Enter counts, back edges, layout).

    Raises `InvalidProgramError` (`CycleError`, `FrameMismatchError`) for a program that breaks
    a static rule; no kernel runs.
    """
    nodes = list(program.nodes)
    infos = _check_shape(program, nodes)
    _check_cycles(nodes, infos)
    frames = _assign_frames(nodes, infos)
    _check_gated_next_iterations(nodes, infos)
    fetch_slots = _lay_out(program, nodes, infos, frames)
    return Plan(program, infos, frames, fetch_slots)


# -- 1. shape checks ------------------------------------------------------------------------------


def _check_shape(program: Program, nodes: list[Node]) -> list[NodeInfo]:
    count = len(nodes)
    infos: list[NodeInfo] = []
    for index, node in enumerate(nodes):
        if not isinstance(node, Node):
            raise InvalidProgramError(f"node {index} is {node!r}, not a Node", [])
        try:
            kind = NodeKind(node.kind)
        except ValueError:
            raise InvalidProgramError(
                f"node {node.name!r} has unknown kind {node.kind!r}", [index]
            ) from None
        infos.append(NodeInfo(index, node, kind))
    for index, node in enumerate(nodes):
        info = infos[index]
        for position, edge in enumerate(node.inputs):
            producer, output = _edge(edge, count, node, index, f"input {position}")
            if not 0 <= output < infos[producer].num_outputs:
                raise InvalidProgramError(
                    f"input {position} of node {node.name!r} is output {output} of node "
                    f"{nodes[producer].name!r}, which has {infos[producer].num_outputs} output(s)",
                    [index, producer],
                )
        for producer in node.control_inputs:
            if not (isinstance(producer, (int, np.integer)) and 0 <= producer < count):
                raise InvalidProgramError(
                    f"control input {producer!r} of node {node.name!r} is not a node index",
                    [index],
                )
        kind = info.kind
        wanted = {
            NodeKind.SWITCH: (2, "two inputs (data, pred)"),
            NodeKind.ENTER: (1, "one input"),
            NodeKind.EXIT: (1, "one input"),
            NodeKind.NEXT_ITERATION: (1, "one input"),
        }.get(kind)
        if wanted is not None and info.num_inputs != wanted[0]:
            raise InvalidProgramError(
                f"{kind.name} node {node.name!r} needs {wanted[1]}, has {info.num_inputs}", [index]
            )
        if kind == NodeKind.MERGE and info.num_inputs == 0:
            raise InvalidProgramError(f"MERGE node {node.name!r} has no data input", [index])
        if kind == NodeKind.ENTER:
            if not isinstance(node.frame_name, str) or not node.frame_name:
                raise InvalidProgramError(f"ENTER node {node.name!r} has no frame_name", [index])
            if not isinstance(node.parallel_iterations, int) or node.parallel_iterations < 1:
                raise InvalidProgramError(
                    f"ENTER node {node.name!r} has parallel_iterations="
                    f"{node.parallel_iterations!r}; it must be a positive int",
                    [index],
                )
        if kind == NodeKind.OP:
            if not callable(node.kernel):
                raise InvalidProgramError(f"OP node {node.name!r} has no kernel", [index])
            if not isinstance(node.num_outputs, int) or node.num_outputs < 0:
                raise InvalidProgramError(
                    f"OP node {node.name!r} has num_outputs={node.num_outputs!r}", [index]
                )
        if kind == NodeKind.ARG and (node.inputs or node.control_inputs):
            raise InvalidProgramError(f"ARG node {node.name!r} has inputs", [index])
    for position, index in enumerate(program.arg_nodes):
        if not (isinstance(index, (int, np.integer)) and 0 <= index < count):
            raise InvalidProgramError(f"arg_nodes[{position}] = {index!r} is not a node index", [])
        info = infos[index]
        if info.kind != NodeKind.ARG:
            raise InvalidProgramError(
                f"arg_nodes[{position}] is node {info.name!r}, a {info.kind.name}, not an ARG",
                [index],
            )
        if info.arg_position >= 0:
            raise InvalidProgramError(
                f"ARG node {info.name!r} is listed twice in arg_nodes", [index]
            )
        info.arg_position = position
    for info in infos:
        if info.kind == NodeKind.ARG and info.arg_position < 0:
            raise InvalidProgramError(
                f"ARG node {info.name!r} is not listed in arg_nodes", [info.index]
            )
    for position, edge in enumerate(program.fetches):
        producer, output = _edge(edge, count, None, None, f"fetch {position}")
        if not 0 <= output < infos[producer].num_outputs:
            raise InvalidProgramError(
                f"fetch {position} is output {output} of node {infos[producer].name!r}, which "
                f"has {infos[producer].num_outputs} output(s)",
                [producer],
            )
    for index in program.targets:
        if not (isinstance(index, (int, np.integer)) and 0 <= index < count):
            raise InvalidProgramError(f"target {index!r} is not a node index", [])
    return infos


def _edge(edge, count: int, node: Optional[Node], index: Optional[int], what: str):
    try:
        producer, output = edge
    except (TypeError, ValueError):
        producer = output = None
    if not (
        isinstance(producer, (int, np.integer))
        and isinstance(output, (int, np.integer))
        and 0 <= producer < count
    ):
        owner = f" of node {node.name!r}" if node is not None else ""
        raise InvalidProgramError(
            f"{what}{owner} is {edge!r}, not a (node index, output index) pair",
            [] if index is None else [index],
        )
    return int(producer), int(output)


# -- 2. cycles ------------------------------------------------------------------------------------


def _is_back_edge(producer: NodeInfo, consumer: NodeInfo) -> bool:
    return producer.kind == NodeKind.NEXT_ITERATION and consumer.kind == NodeKind.MERGE


def _check_cycles(nodes: list[Node], infos: list[NodeInfo]) -> None:
    """Raises `CycleError` for a cycle that has no ``NextIteration -> Merge`` data edge."""
    successors: list[list[int]] = [[] for _ in nodes]
    for index, node in enumerate(nodes):
        for producer, _ in node.inputs:
            if not _is_back_edge(infos[producer], infos[index]):
                successors[producer].append(index)
        for producer in node.control_inputs:
            successors[producer].append(index)
    # Iterative depth-first search; colour 1 = on the current path, 2 = finished.
    colour = [0] * len(nodes)
    for start in range(len(nodes)):
        if colour[start]:
            continue
        path = [start]
        iterators = [iter(successors[start])]
        colour[start] = 1
        while path:
            for successor in iterators[-1]:
                if colour[successor] == 0:
                    colour[successor] = 1
                    path.append(successor)
                    iterators.append(iter(successors[successor]))
                    break
                if colour[successor] == 1:
                    cycle = path[path.index(successor) :]
                    names = " -> ".join(repr(nodes[i].name) for i in cycle + [successor])
                    raise CycleError(
                        f"the program has a cycle that does not pass through a "
                        f"NextIteration -> Merge edge: {names}",
                        cycle,
                    )
            else:
                colour[path.pop()] = 2
                iterators.pop()


# -- 3. frames ------------------------------------------------------------------------------------


def _assign_frames(nodes: list[Node], infos: list[NodeInfo]) -> list[FrameInfo]:
    root = FrameInfo("root", 0, None)
    frames = [root]
    by_name: dict[str, FrameInfo] = {}
    first_enter: dict[str, NodeInfo] = {}
    # The producer whose output frame decided each node's frame (for error messages).
    decided_by: list[Optional[int]] = [None] * len(nodes)
    all_consumers: list[list[int]] = [[] for _ in nodes]
    for index, node in enumerate(nodes):
        producers = {p for p, _ in node.inputs} | set(node.control_inputs)
        for producer in sorted(producers):
            all_consumers[producer].append(index)

    # Errors found while placing nodes are raised after the walk, once a node whose inputs
    # disagree (usually the real mistake, and the cause of a misplaced Exit) has been reported.
    problems: list[FrameMismatchError] = []

    def place(info: NodeInfo, frame: FrameInfo) -> None:
        info.frame = frame
        kind = info.kind
        if kind == NodeKind.ENTER:
            name = info.node.frame_name
            child = by_name.get(name)
            if child is None:
                ancestor: Optional[FrameInfo] = frame
                while ancestor is not None:
                    if ancestor.name == name and ancestor is not root:
                        problems.append(
                            FrameMismatchError(
                                f"ENTER node {info.name!r} enters frame {name!r} from inside "
                                f"that frame ({frame.name!r})",
                                [info.index],
                            )
                        )
                        return
                    ancestor = ancestor.parent
                child = FrameInfo(name, len(frames), frame)
                frames.append(child)
                by_name[name] = child
                first_enter[name] = info
            elif child.parent is not frame:
                other = first_enter[name]
                problems.append(
                    FrameMismatchError(
                        f"ENTER node {info.name!r} enters frame {name!r} from frame "
                        f"{frame.name!r}, but ENTER node {other.name!r} enters it from frame "
                        f"{child.parent.name!r}",
                        [info.index, other.index],
                    )
                )
            info.out_frame = child
        elif kind == NodeKind.EXIT or kind == NodeKind.NEXT_ITERATION:
            if frame is root:
                problems.append(
                    FrameMismatchError(
                        f"{kind.name} node {info.name!r} lies in the root frame; it must lie "
                        "in a loop frame (entered through an ENTER node)",
                        [info.index],
                    )
                )
                return
            info.out_frame = frame.parent if kind == NodeKind.EXIT else frame
        else:
            info.out_frame = frame

    queue: deque[int] = deque()
    for index, node in enumerate(nodes):
        if not node.inputs and not node.control_inputs:
            place(infos[index], root)
            queue.append(index)
    while queue:
        producer = queue.popleft()
        out_frame = infos[producer].out_frame
        if out_frame is None:
            continue  # a misplaced node (in ``problems``): nothing downstream is placed
        for consumer in all_consumers[producer]:
            if infos[consumer].frame is None:
                decided_by[consumer] = producer
                place(infos[consumer], out_frame)
                queue.append(consumer)

    for index, node in enumerate(nodes):
        info = infos[index]
        if info.frame is None:
            continue
        producers = [p for p, _ in node.inputs] + list(node.control_inputs)
        for producer in producers:
            produced_in = infos[producer].out_frame
            if produced_in is not None and produced_in is not info.frame:
                first = decided_by[index]
                raise FrameMismatchError(
                    f"node {info.name!r} has inputs from different frames: {info.frame.name!r} "
                    f"(from node {infos[first].name!r}) and {produced_in.name!r} "
                    f"(from node {infos[producer].name!r})",
                    [index, first, producer],
                )
    if problems:
        raise problems[0]
    return frames


# -- 3b. NextIterations that would never stop ---------------------------------------------------


def _check_gated_next_iterations(nodes: list[Node], infos: list[NodeInfo]) -> None:
    """Rejects a ``NEXT_ITERATION`` that depends on loop invariants only.

    Such a node fires live in every iteration (a constant Enter delivers to every iteration),
    also in the one whose predicate is false, so it would start iterations forever.
    TensorFlow's while_loop prevents this by giving every op whose inputs are all constant
    Enters a control input from the loop's pivot; a program without that is rejected here.

    A node *varies* when it depends on a Merge or a non-constant Enter of its frame, or on an
    Exit of a child frame that has an Enter with a varying input.
    """
    consumers: list[list[int]] = [[] for _ in nodes]
    for index, node in enumerate(nodes):
        for producer in {p for p, _ in node.inputs} | set(node.control_inputs):
            consumers[producer].append(index)
    exits_of: dict[str, list[int]] = {}
    for info in infos:
        if info.kind == NodeKind.EXIT and info.frame is not None:
            exits_of.setdefault(info.frame.name, []).append(info.index)
    varying = [False] * len(nodes)
    stack = [
        info.index
        for info in infos
        if info.kind == NodeKind.MERGE or (info.kind == NodeKind.ENTER and not info.is_constant)
    ]
    for index in stack:
        varying[index] = True
    while stack:
        producer = stack.pop()
        for consumer in consumers[producer]:
            info = infos[consumer]
            if info.kind == NodeKind.ENTER:
                # Inside the child frame a constant Enter stays invariant; the child's Exits
                # now vary with this frame's iterations.
                targets = exits_of.get(info.node.frame_name, ())
            else:
                targets = (consumer,)
            for target in targets:
                if not varying[target]:
                    varying[target] = True
                    stack.append(target)
    for info in infos:
        if (
            info.kind == NodeKind.NEXT_ITERATION
            and info.frame is not None
            and not varying[info.index]
        ):
            raise InvalidProgramError(
                f"NEXT_ITERATION node {info.name!r} in frame {info.frame.name!r} depends only "
                "on loop invariants (constant Enters), so it would start new iterations "
                "forever; give it, or the op feeding it, a control input from the loop's pivot",
                [info.index],
            )


# -- 4. and 5. layout and dispatch tables --------------------------------------------------------


def _lay_out(
    program: Program, nodes: list[Node], infos: list[NodeInfo], frames: list[FrameInfo]
) -> tuple[Optional[int], ...]:
    root = frames[0]
    for info in infos:
        if info.frame is None:
            continue
        frame = info.frame
        info.local = len(frame.nodes)
        frame.nodes.append(info)
        if info.kind == NodeKind.ENTER:
            child = info.out_frame
            child.enter_count += 1
            pi = info.node.parallel_iterations
            child.parallel_iterations = (
                pi if child.parallel_iterations == 0 else min(child.parallel_iterations, pi)
            )
        elif info.kind == NodeKind.EXIT:
            frame.exits += (info,)

    # Input slots and pending-count templates.
    for frame in frames:
        slots = 0
        pending = []
        for info in frame.nodes:
            info.slot_base = slots
            width = 2 if info.kind == NodeKind.MERGE else info.num_inputs
            slots += width
            info.slot_end = slots
            info.empty_slots = (None,) * width
            controls = len(set(info.node.control_inputs))  # a repeated control edge counts once
            pending.append(controls if info.kind == NodeKind.MERGE else info.num_inputs + controls)
        frame.pending_template = pending
        frame.slot_template = [None] * slots
        frame.sources = tuple(
            info.local
            for info in reversed(frame.nodes)
            if not info.node.inputs and not info.node.control_inputs
        )

    # Fetch sinks: one extra slot and pending entry per fetch in the root frame.
    sinks: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    fetch_slots: list[Optional[int]] = []
    for edge in program.fetches:
        producer, output = int(edge[0]), int(edge[1])
        if infos[producer].out_frame is not root:
            fetch_slots.append(None)
            continue
        sink = len(root.pending_template)
        slot = len(root.slot_template)
        root.pending_template.append(SINK_PENDING)
        root.slot_template.append(NOT_PRODUCED)
        sinks.setdefault((producer, output), []).append((sink, slot, FETCH_SINK))
        fetch_slots.append(slot)

    # Consumers, in the frame each output is delivered to.
    data: list[list[list[tuple[int, int, int, int]]]] = [
        [[] for _ in range(info.num_outputs)] for info in infos
    ]
    control: list[list[tuple[int, int, bool]]] = [[] for _ in infos]
    for index, node in enumerate(nodes):
        info = infos[index]
        if info.frame is None:
            continue
        is_merge = info.kind == NodeKind.MERGE
        for position, (producer, output) in enumerate(node.inputs):
            if is_merge:
                entry = (index, info.local, -1, position)
            else:
                entry = (index, info.local, info.slot_base + position, NOT_MERGE)
            data[producer][output].append(entry)
        for producer in node.control_inputs:
            control[producer].append((index, info.local, is_merge))
    for info in infos:
        if info.frame is None:
            continue
        per_output = []
        for output, entries in enumerate(data[info.index]):
            entries.sort(reverse=True)
            consumers = tuple((local, slot, mp) for _, local, slot, mp in entries)
            consumers = tuple(sinks.get((info.index, output), ())) + consumers
            per_output.append(consumers)
        info.consumers = tuple(per_output)
        entries = sorted(set(control[info.index]), reverse=True)
        info.control_consumers = tuple((local, is_merge) for _, local, is_merge in entries)
        if info.kind == NodeKind.MERGE:
            back = frozenset(
                position
                for position, (producer, _) in enumerate(info.node.inputs)
                if infos[producer].kind == NodeKind.NEXT_ITERATION
            )
            info.back_positions = back
            info.back_count = len(back)
            info.forward_count = info.num_inputs - len(back)
            info.value_indices = tuple(np.int32(i) for i in range(info.num_inputs))

    for frame in frames:
        inline_table, measure_table = [], []
        for info in frame.nodes:
            entry = _table_entry(info)
            inline_table.append(entry)
            if entry[0] != SLOW and info.inline is not True:
                entry = (entry[0] + POOLABLE, *entry[1:])
            measure_table.append(entry)
        tables = [None] * 4
        tables[INLINE_TABLE] = inline_table
        # Every node that may go to the pool starts unmeasured, so expensive (`costs`).
        tables[POOL_TABLE] = list(measure_table)
        tables[SLOW_TABLE] = [_SLOW_ENTRY] * len(frame.nodes)
        tables[MEASURE_TABLE] = measure_table
        frame.tables = tuple(tables)
    return tuple(fetch_slots)


_SLOW_ENTRY = (SLOW, None, 0, 0, (), -1)


def _table_entry(info: NodeInfo) -> tuple:
    """The node's entry of the inline table (the measuring table's adds POOLABLE to a fast code
    when the node may run on the pool; the pool table's follows the cost model)."""
    if (
        info.kind != NodeKind.OP
        or info.wants_context
        or info.talks
        or info.num_outputs != 1
        or info.control_consumers
        or any(mp >= 0 for _, _, mp in info.consumers[0])
    ):
        return _SLOW_ENTRY
    consumers = tuple((local, slot) for local, slot, _ in info.consumers[0])
    if len(consumers) == 1:
        consumer, slot = consumers[0]
    else:
        consumer, slot = consumers, -1
    if info.num_inputs == 1:
        code, a, b = FAST_UNARY, info.slot_base, 0
    elif info.num_inputs == 2:
        code, a, b = FAST_BINARY, info.slot_base, info.slot_base + 1
    else:
        code, a, b = FAST_NARY, info.slot_base, info.slot_end
    return (code, info.kernel, a, b, consumer, slot)

"""Frames at run time, and the firing rules of the control-flow primitives.

A `FrameInstance` is one activation of a static frame (a loop run from one parent
iteration); an `IterationState` holds one iteration's slots, pending counts and ready
nodes.  `ControlFlowFiring` is the part of a run (`runner._Run`) that fires Switch, Merge,
Enter, Exit and NextIteration and completes frame instances, by the rules of
``docs/control-flow-semantics.md``: Switch forwards its data to one output and deadness to the
other; Merge fires on its first live input (or dead when all are dead); Enter makes or finds
the child frame instance; NextIteration starts the next iteration; Exit leaves the frame; an
instance completes when every iteration has drained.
"""

from __future__ import annotations

import time
from typing import Any, Optional

from .tables import DEAD, FrameInfo, NodeInfo

# Pending count of a Merge that has been pushed to fire: later arrivals are dropped.
_MERGE_FIRED = -1
_monotonic = time.monotonic


class FrameInstance:
    """One activation of a static frame.

    Invariants: ``iterations`` holds exactly the iterations ``oldest .. newest`` that exist and
    are not complete; ``newest - oldest < frame.parallel_iterations``; ``deferred`` holds the
    live NextIteration values for iteration ``newest + 1`` and is non-empty only while that
    iteration cannot be created yet; ``constants`` holds the value of every constant Enter that
    has fired, delivered to each iteration when it is created.
    """

    __slots__ = (
        "frame",
        "parent_iteration",
        "iterations",
        "oldest",
        "newest",
        "pending_enters",
        "constants",
        "deferred",
        "exits_delivered",
        "done",
        "_description",
    )

    def __init__(self, frame: FrameInfo, parent_iteration: Optional[IterationState]):
        self.frame = frame
        self.parent_iteration = parent_iteration
        self.iterations: dict[int, IterationState] = {}
        self.oldest = 0
        self.newest = -1
        self.pending_enters = frame.enter_count
        self.constants: list[tuple[NodeInfo, Any]] = []
        self.deferred: list[tuple[NodeInfo, Any]] = []
        self.exits_delivered: set[int] = set()
        self.done = False
        self._description: Optional[str] = None

    @property
    def description(self) -> str:
        """``"root"`` or ``"<frame>[iter <k> of <parent instance>]"``."""
        if self._description is None:
            parent = self.parent_iteration
            if parent is None:
                self._description = "root"
            else:
                self._description = (
                    f"{self.frame.name}[iter {parent.number} of {parent.instance.description}]"
                )
        return self._description

    def __repr__(self) -> str:
        return f"FrameInstance({self.description})"


class IterationState:
    """One iteration of one frame instance (see the module docstring for each field).

    Invariants: ``pending[n] == 0`` exactly when node n has been pushed to ``ready`` or has
    fired (a Merge that is pushed is set to ``_MERGE_FIRED``); ``slots`` of a node are cleared
    when it fires; ``done`` is set when the iteration completes, and after that nothing is
    delivered to it.
    """

    __slots__ = (
        "instance",
        "frame",
        "number",
        "pending",
        "slots",
        "ready",
        "dead",
        "merge_dead_counts",
        "children",
        "running",
        "scheduled",
        "done",
    )

    def __init__(self, instance: FrameInstance, number: int):
        frame = instance.frame
        self.instance = instance
        self.frame = frame
        self.number = number
        self.pending = frame.pending_template[:]
        self.slots = frame.slot_template[:]
        self.ready: list[int] = []
        self.dead: set[int] = set()
        self.merge_dead_counts: Optional[dict[int, int]] = None
        self.children: dict[int, FrameInstance] = {}
        self.running = 0
        self.scheduled = False
        self.done = False

    def __repr__(self) -> str:
        return f"IterationState({self.instance.description}, iteration {self.number})"


def _take_input(iteration: IterationState, info: NodeInfo) -> Any:
    """The value waiting in the one input slot of ``info`` (Enter, Exit, NextIteration), taken
    out of the slot; `DEAD` when a dead input arrived there."""
    slots = iteration.slots
    value = slots[info.slot_base]
    slots[info.slot_base] = None
    if info.local in iteration.dead:
        iteration.dead.discard(info.local)
        return DEAD
    return value


class ControlFlowFiring:
    """The firing of the control-flow primitives and the completion of frame instances, as a
    part of `runner._Run` (whose state these methods read and write)."""

    # -- Switch and Merge -------------------------------------------------------------------------

    def _fire_switch(self, iteration: IterationState, info: NodeInfo) -> bool:
        slots = iteration.slots
        first = info.slot_base
        data = slots[first]
        pred = slots[first + 1]
        slots[first] = slots[first + 1] = None
        if info.local in iteration.dead:
            iteration.dead.discard(info.local)
            self._send_dead(iteration, info)
            return False
        try:
            taken = bool(pred)
        except Exception as exc:
            self._kernel_failed(iteration, info, exc, (data, pred))
            return False
        pred = None
        self._send(iteration, info, (DEAD, data) if taken else (data, DEAD))
        return True

    def _expected_inputs(self, iteration: IterationState, info: NodeInfo, position: int) -> int:
        """How many data inputs the Merge expects in this iteration; 0 if not ``position``."""
        back = info.back_positions
        if not back:
            return info.num_inputs
        if iteration.number == 0:
            return 0 if position in back else info.forward_count
        return info.back_count if position in back else 0

    def _arrive_merge(self, target: IterationState, local: int, position: int, value) -> None:
        pending = target.pending
        if pending[local] < 0:
            return  # already fired: a late input is dropped
        info = target.frame.nodes[local]
        expected = self._expected_inputs(target, info, position)
        if not expected:
            return  # not an input this Merge expects in this iteration
        slots = target.slots
        first = info.slot_base
        if value is DEAD:
            counts = target.merge_dead_counts
            if counts is None:
                counts = target.merge_dead_counts = {}
            dead_inputs = counts.get(local, 0) + 1
            counts[local] = dead_inputs
            if dead_inputs == expected and slots[first + 1] is None and not pending[local]:
                pending[local] = _MERGE_FIRED
                self._push(target, local)
        elif slots[first + 1] is None:
            slots[first] = value
            slots[first + 1] = position
            if not pending[local]:
                pending[local] = _MERGE_FIRED
                self._push(target, local)
        # else: a live input already waits for the control inputs; the first live one wins.

    def _control_to_merge(self, target: IterationState, local: int, live: bool) -> None:
        pending = target.pending
        count = pending[local] - 1
        pending[local] = count
        if not live:
            target.dead.add(local)
        if count:
            return
        info = target.frame.nodes[local]
        if target.slots[info.slot_base + 1] is not None:
            pending[local] = _MERGE_FIRED
            self._push(target, local)
            return
        counts = target.merge_dead_counts
        dead_inputs = counts.get(local, 0) if counts else 0
        back = info.back_positions
        if not back:
            expected = info.num_inputs
        else:
            expected = info.back_count if target.number else info.forward_count
        if expected and dead_inputs == expected:
            pending[local] = _MERGE_FIRED
            self._push(target, local)

    def _fire_merge(self, iteration: IterationState, info: NodeInfo) -> bool:
        slots = iteration.slots
        first = info.slot_base
        value = slots[first]
        position = slots[first + 1]
        slots[first] = slots[first + 1] = None
        local = info.local
        if iteration.merge_dead_counts:
            iteration.merge_dead_counts.pop(local, None)
        dead_control = local in iteration.dead
        if dead_control:
            iteration.dead.discard(local)
        if position is None or dead_control:
            self._send_dead(iteration, info)
            return False
        self._send(iteration, info, (value, info.value_indices[position]))
        return True

    # -- frames: Enter, Exit, NextIteration -------------------------------------------------------

    def _fire_enter(self, iteration: IterationState, info: NodeInfo) -> bool:
        value = _take_input(iteration, info)
        child = info.out_frame
        instance = iteration.children.get(child.index)
        if instance is None:
            instance = self._new_instance(child, iteration)
        instance.pending_enters -= 1
        if info.is_constant:
            instance.constants.append((info, value))
            for target in list(instance.iterations.values()):
                self._send_one(target, info, value)
        else:
            self._send_one(instance.iterations[0], info, value)
        if not instance.pending_enters:
            self._try_complete(instance)
        return value is not DEAD

    def _fire_exit(self, iteration: IterationState, info: NodeInfo) -> bool:
        value = _take_input(iteration, info)
        if value is DEAD:
            return False  # delivered dead when the instance completes, if never live
        instance = iteration.instance
        if info.local in instance.exits_delivered:
            return False
        instance.exits_delivered.add(info.local)
        self._send_one(instance.parent_iteration, info, value)
        return True

    def _fire_next_iteration(self, iteration: IterationState, info: NodeInfo) -> bool:
        value = _take_input(iteration, info)
        if value is DEAD:
            return False
        instance = iteration.instance
        number = iteration.number + 1
        target = instance.iterations.get(number)
        if target is None:
            if number - instance.oldest >= instance.frame.parallel_iterations:
                instance.deferred.append((info, value))
                return True
            target = self._new_iteration(instance, number)
        self._send_one(target, info, value)
        return True

    def _new_instance(self, frame: FrameInfo, parent: IterationState) -> FrameInstance:
        instance = FrameInstance(frame, parent)
        parent.children[frame.index] = instance
        self._new_iteration(instance, 0)
        return instance

    def _new_iteration(self, instance: FrameInstance, number: int) -> IterationState:
        iteration = IterationState(instance, number)
        instance.iterations[number] = iteration
        instance.newest = number
        for info, value in instance.constants:
            self._send_one(iteration, info, value)
        deadline = self.deadline
        if deadline is not None and _monotonic() > deadline:
            self._deadline_reached(iteration)
        return iteration

    # -- completion -------------------------------------------------------------------------------

    def _try_complete(self, instance: FrameInstance) -> None:
        """Completes the oldest iterations of ``instance`` that can, then maybe the instance."""
        if instance.done:
            return
        iterations = instance.iterations
        while True:
            iteration = iterations.get(instance.oldest)
            if (
                iteration is None
                or iteration.ready
                or iteration.running
                or iteration.children
                or (iteration.number == 0 and instance.pending_enters)
            ):
                break
            del iterations[instance.oldest]
            instance.oldest += 1
            iteration.done = True
            if iteration.scheduled:
                self.ready_iterations.pop(iteration, None)
            iteration.slots = iteration.pending = iteration.merge_dead_counts = None
            if instance.deferred:
                deferred = instance.deferred
                instance.deferred = []
                target = self._new_iteration(instance, instance.newest + 1)
                for info, value in deferred:
                    self._send_one(target, info, value)
                deferred = value = None
        if not iterations:
            self._complete_instance(instance)

    def _complete_instance(self, instance: FrameInstance) -> None:
        instance.done = True
        parent = instance.parent_iteration
        delivered = instance.exits_delivered
        for info in instance.frame.exits:
            if info.local not in delivered:
                self._send_one(parent, info, DEAD)
        del parent.children[instance.frame.index]
        instance.constants = []
        if self.stats is not None:
            self.stats.frame_iterations.setdefault(instance.frame.name, []).append(
                instance.newest + 1
            )
        if parent.instance is not self.root_instance:
            self._try_complete(parent.instance)

"""Records of the conds and loops the helpers build, and the hooks that keep their graphs valid.

While `cond` runs a branch function, or `while_loop` runs ``cond``/``body``, a control-flow
context is the graph's current one (``graph._control_flow_context``, per thread).
``Graph.create_op`` calls its two hooks for every new op:

- ``prepare_op_inputs(op_def, inputs, control_inputs, op_name)`` before the op exists, to
  return the inputs the op should really have.  A tensor from outside the branch or loop is
  replaced by its captured form: ``Switch(tensor, pred)[branch]`` in a cond branch, a constant
  ``Enter`` in a loop, one per tensor and context (memoized), level by level through nested
  contexts.  An op that nothing inside the context would otherwise gate gets a control input
  from the pivot.
- ``add_op(op)`` after it exists (the graph has already set ``op._control_flow_context``).

Pivot rule.  In a cond branch, an op with no data input and no control input from inside the
branch gets a control input from the branch's pivot, so it runs only when the branch is taken.
In a loop, an op with no data input, or whose data inputs are all loop invariants (constant
Enters of this loop), and with no control input from the loop's frame, gets a control input
from the loop's pivot (TensorFlow's ``_MaybeAddControlDependency``): a constant Enter delivers to
every iteration, including the last one where the predicate is false, so without the pivot such
an op would run once more than the body (and a zero-trip loop would run it once).  While the
loop's ``cond`` function is built the pivot does not exist yet, and the first loop variable's
Merge output (``pivot_for_pred``) serves instead, as in TensorFlow.

External control dependencies.  A control input from an enclosing frame (say ``with
df.control_dependencies([init]):`` inside a loop body, ``init`` outside the loop) would be an
edge between frames, which the executor rejects.  TensorFlow pulls such a dependency in as data:
it enters ``init``'s first output and adds an Identity of it as the control input, and silently
drops the dependency when ``init`` has no outputs (a NoOp, an Assert).  Here every such
dependency is routed the same way, never dropped: a scalar ``control_token`` constant with a
control input from ``init`` is built beside ``init``, captured like any external tensor (through
constant Enters and Switches, level by level), and an Identity of the captured token, built in
this context, becomes the op's control input (memoized per context).  So the op still runs after
``init``, and only in iterations or branches that are actually executed.  A control input from
inside a different loop, and a value computed inside a loop used outside it other than through
its Exits, are build-time errors.

Fetch and feed marks.  ``add_op`` marks what TensorFlow 1.x's builders mark (see
``Graph.prevent_fetching``/``prevent_feeding``; a run refuses them before anything runs, with
the reason given here): every op of a cond branch is unfetchable; every op of a loop is
unfetchable and its outputs unfeedable, except a top-level loop's Exits (its results); the
Enters of a loop are unfeedable only; a cond's Switches and pivots are unfetchable.  Ops a
nested context builds in its outer one for itself (captures, loop-variable Enters) carry the
nested context's marks only, as TensorFlow builds them outside every context: so an op of a
cond inside a loop stays feedable there, though the executor's frame check still refuses it.

Record fields (read by rendering, by the Session's error messages and, later, by autodiff; the
names are fixed)::

    CondContext, one per branch; the two branches of a cond share `name` and `pred`:
      name            str        the cond's name scope: "cond", "cond_1", "outer/cond"
      pred            Tensor     the predicate as the cond sees it (entered into the frame
                                 the cond is built in); every Switch of the cond uses it
      pivot           Tensor     Identity of output `branch` of Switch(pred, pred), named
                                 "switch_t" / "switch_f"; alive exactly when the branch is taken
      branch          int        1 for the true branch, 0 for the false branch
      branch_name     str|None   how errors name the branch: "true_fn"/"false_fn", or
                                 switch_case's "branch <k>" (None for its chaining conds)
      isolated        bool       whether the other branch may not use this branch's tensors (a
                                 cond in a df.function graph, and switch_case), as TensorFlow
      merges          [Operation]  the cond's result Merges, in the order of its flat results
                                 (the same ops in both branches' records; empty in a record
                                 loaded from a saved graph)
      outer_context   the enclosing CondContext or WhileContext, or None at the top level

    WhileContext, one per loop:
      name            str        the loop's name scope: "while", "while_1", "outer/while"
      frame_name      str        the frame name of the loop's Enters: `name`, unless another
                                 loop has that frame (a scope re-entered as name="scope/")
      pivot           Tensor     Identity of the first loop variable's Switch output_true; the
                                 body sees it as the first loop variable
      pivot_for_pred  Tensor     the first loop variable's Merge output (gates `cond`'s ops)
      loop_enters     [Operation]  the non-constant Enter of each loop variable
      merges          [Operation]  the Merge of each loop variable
      switches        [Operation]  the Switch(merge, loop_cond) of each loop variable
      exits           [Operation]  the Exit of each loop variable (its output is the result)
      next_iterations [Operation]  the NextIteration closing each back edge
      loop_cond       Operation    the LoopCond
      parallel_iterations int, back_prop bool, swap_memory bool (recorded, has no effect)
      maximum_iterations  Tensor or None
      outer_context   the enclosing CondContext or WhileContext, or None at the top level

The per-variable lists are in the order of ``nest.flatten(loop_vars)`` (with the iteration
counter first when ``maximum_iterations`` is given).  Constant Enters of captured tensors are not
listed: they are the Enter ops whose ``_control_flow_context`` is the loop and whose
``is_constant`` attr is true.  Each op records the context it was built in
(`control_flow_context_of`): the ops of a branch or of a loop's cond/body, a loop's
Enter/Merge/Switch/Identity/NextIteration/Exit ops, and the Switches that capture tensors into a
branch.  A cond's Switch(pred, pred) and result Merges belong to the context around the cond.
Every context is added to ``GraphKeys.COND_CONTEXT`` or ``GraphKeys.WHILE_CONTEXT``, nested ones
included (TensorFlow lists only top-level ones, because it serializes nested contexts inside
their parents; here rendering wants them all).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Union

from dataflow.framework import graph as _graph
from dataflow.framework.graph import Operation, Tensor
from dataflow.framework.graph_keys import GraphKeys
from dataflow.framework.op_registry import apply_op
from dataflow.ops.constant_op import constant
from executor.program import NodeKind

_logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Consumer:
    """The op about to be made that reads a value, for the errors that name it: its name as it
    will be, its type, and the loop it will run in (None: the root frame)."""

    name: str
    type: str
    frame: Optional[WhileContext] = None


def _as_consumer(consumer: Union[Consumer, str]) -> Consumer:
    return consumer if isinstance(consumer, Consumer) else Consumer(consumer, consumer)


__all__ = [
    "CondContext",
    "ControlFlowContext",
    "WhileContext",
    "control_flow_context_of",
]


def control_flow_context_of(op_or_tensor: Union[Operation, Tensor]):
    """The `CondContext` or `WhileContext` an op was built in (for a tensor, its op's), or None.

    A loop's Exit belongs to the loop although its output lies in the enclosing context.
    """
    op = op_or_tensor.op if isinstance(op_or_tensor, Tensor) else op_or_tensor
    return op._control_flow_context


def _output_context(op: Operation):
    """The context in which the outputs of ``op`` live: its own, except for a loop's Exits."""
    context = op._control_flow_context
    if isinstance(context, WhileContext) and op in context._exit_ops:
        return context.outer_context
    return context


def _is_within(context, ancestor) -> bool:
    """True when ``context`` is ``ancestor`` or nested in it (everything is within None)."""
    while context is not None:
        if context is ancestor:
            return True
        context = context.outer_context
    return ancestor is None


def _frame_of(context) -> Optional[WhileContext]:
    """The innermost loop around ``context`` (itself if it is one); None for the root frame."""
    while context is not None and not isinstance(context, WhileContext):
        context = context.outer_context
    return context


def _describe(context) -> str:
    if isinstance(context, WhileContext):
        return f"while loop '{context.name}'"
    if isinstance(context, CondContext):
        return f"the {'true' if context.branch else 'false'} branch of cond '{context.name}'"
    return "the top level"


@contextlib.contextmanager
def building_in(graph, context, keep_control_dependencies: bool = False, marks: bool = True):
    """Makes ``context`` the graph's current control-flow context for the ops built inside.

    Control dependencies are cleared unless asked otherwise: the structural ops of a cond or
    loop must not inherit the user's ``control_dependencies`` blocks.  ``marks=False`` keeps
    ``context`` from marking the ops unfetchable or unfeedable: the ops a nested context builds
    in its outer one for itself (captures, a loop variable's Enter), which TensorFlow builds
    outside every context and marks as the nested context says.
    """
    saved = graph._control_flow_context
    graph._control_flow_context = context
    paused = context if context is not None and not marks else None
    if paused is not None:
        paused._marks_paused += 1
    try:
        if keep_control_dependencies:
            yield
        else:
            with graph.control_dependencies(None):
                yield
    finally:
        if paused is not None:
            paused._marks_paused -= 1
        graph._control_flow_context = saved


def fetch_refusal(context) -> str:
    """Why a run may not fetch an op whose outputs live in ``context`` (a branch or a loop)."""
    loop = _frame_of(context)
    if loop is not None:
        return (
            f"it lies inside the while loop '{loop.name}' built at {loop.location}, which runs "
            "it once per iteration, while a run returns one value. Fetch the loop's results, "
            "or make the value a loop variable and fetch its final value."
        )
    return (
        f"it lies in {_describe(context)} built at {context.location}, so it has no value when "
        "the other branch is taken. Fetch the cond's result, which has a value whichever "
        "branch runs."
    )


def feed_refusal(context) -> str:
    """Why a run may not feed a tensor that lives in ``context``, inside a loop or (a nested
    loop's result) in a cond branch."""
    loop = _frame_of(context)
    if loop is not None:
        return (
            f"it lies inside the while loop frame '{loop.frame_name}' (loop built at "
            f"{loop.location}). Only tensors outside every while loop can be fed, as in "
            "TensorFlow 1.x: a loop sees one value per iteration, and a feed gives one value "
            "per run. Feed a tensor the loop reads from outside, a loop variable's initial "
            "value, or the loop's result"
        )
    return (
        f"it is the result of a while loop built in {_describe(context)} (built at "
        f"{context.location}), and TensorFlow 1.x feeds no tensor of a loop built inside a cond. "
        "Feed the cond's result, or a tensor the loop reads from outside"
    )


class ControlFlowContext:
    """What a `CondContext` and a `WhileContext` share: capturing values and the hooks."""

    def __init__(self, graph, name: str, outer_context):
        self.graph = graph
        self.name = name
        self.outer_context = outer_context
        self.location = _graph._user_location()
        self._marks_paused = 0  # > 0 while building ops that belong to a nested context
        # Tensor from outside -> the tensor that stands for it inside this context.
        self._external_values: dict[Tensor, Tensor] = {}
        # Operation in an enclosing frame -> the Identity that stands for it as a control input.
        self._control_proxies: dict[Operation, Operation] = {}

    # -- the hooks Graph.create_op calls ----------------------------------------------------------
    def prepare_op_inputs(
        self, op_def, inputs: list, control_inputs: list, op_name: str = ""
    ) -> tuple[list, list]:
        consumer = Consumer(op_name or op_def.type, op_def.type, _frame_of(self))
        inputs = [self.add_value(t, consumer) for t in inputs]
        same_frame, enclosing_frames = self._split_control_inputs(control_inputs, consumer)
        controls = list(same_frame)
        if self._needs_pivot(inputs, same_frame):
            pivot = self.control_pivot().op
            if pivot not in controls:
                controls.append(pivot)
        for c in enclosing_frames:
            proxy = self._control_proxy(c)
            if proxy not in controls:
                controls.append(proxy)
        return inputs, controls

    def add_op(self, op: Operation) -> None:
        """Marks ``op`` unfetchable (and, in a loop, its outputs unfeedable) as TensorFlow 1.x
        does; membership itself is ``op._control_flow_context``, set by the graph."""
        raise NotImplementedError

    def check_used_outside(self, source: Operation, op_name: str, op_type: str) -> None:
        """Raises if an op outside every context (``op_name``, of type ``op_type``, about to be
        made) may not read ``source`` (an op of this context): the values of a loop leave it
        only through its Exits."""
        consumer = Consumer(op_name, op_type)
        _check_not_inside_other_loop(source, _output_context(source), None, consumer)

    # -- capturing -------------------------------------------------------------------------------
    def add_value(self, value: Tensor, consumer: Union[Consumer, str] = "op") -> Tensor:
        """The tensor that stands for ``value`` inside this context (``value`` if it is inside)."""
        known = self._external_values.get(value)
        if known is not None:
            return known
        source = _output_context(value.op)
        if _is_within(source, self):
            _check_not_inside_other_loop(value, source, self, consumer)
            return value
        _check_not_from_other_branch(value, source, self)
        if self.outer_context is not None:
            outer_value = self.outer_context.add_value(value, consumer)
        else:
            _check_not_inside_other_loop(value, source, None, consumer)
            outer_value = value
        inner = self._capture(outer_value)
        self._external_values[value] = inner
        return inner

    def _capture(self, outer_value: Tensor) -> Tensor:
        raise NotImplementedError

    def control_pivot(self) -> Tensor:
        raise NotImplementedError

    def _needs_pivot(self, inputs: list, same_frame_controls: list) -> bool:
        raise NotImplementedError

    # -- control inputs --------------------------------------------------------------------------
    def _split_control_inputs(self, control_inputs: list, consumer: Consumer) -> tuple[list, list]:
        """(control inputs in this context's frame, control inputs from enclosing frames)."""
        frame = _frame_of(self)
        same, enclosing = [], []
        for c in control_inputs:
            source = _output_context(c)
            source_frame = _frame_of(source)
            if source_frame is frame:
                same.append(c)
            elif _is_within(frame, source_frame):
                enclosing.append(c)
            else:
                raise ValueError(
                    f"Cannot make '{c.name}' (created at {c.location}) a control input of op "
                    f"'{consumer.name}' in {_describe(self)} ({_graph._user_location()}): it "
                    f"runs inside {_describe(source_frame)}, which does not contain this op. Only "
                    "the results of a loop (its Exits) can be used outside it."
                )
        return same, enclosing

    def _control_proxy(self, control_op: Operation) -> Operation:
        """An op inside this context that runs after ``control_op`` (see the module docstring)."""
        proxy = self._control_proxies.get(control_op)
        if proxy is None:
            owner = _output_context(control_op)
            with self.graph.as_default(), building_in(self.graph, owner):
                with self.graph.control_dependencies([control_op]):
                    token = constant(True, name="control_token")
            captured = self.add_value(token, "Identity")
            with building_in(self.graph, self):
                proxy = apply_op("Identity", [captured], name="control_dependency")
            self._control_proxies[control_op] = proxy
        return proxy


def _check_not_inside_other_loop(
    value: Union[Tensor, Operation], source, stop, consumer: Union[Consumer, str]
) -> None:
    """Raises if a loop lies between ``source`` (where ``value``, a tensor or an op, lives) and
    ``stop``.

    The error begins as TensorFlow's does ("Cannot use 'while/x' as input to 'y' because ...",
    which TensorFlow's tests match); the details it logs at INFO level follow in the message.
    """
    context = source
    while context is not stop and context is not None:
        if isinstance(context, WhileContext):
            raise _used_outside_its_loop(value, context, _as_consumer(consumer))
        context = context.outer_context


def _used_outside_its_loop(value, loop: WhileContext, consumer: Consumer) -> ValueError:
    op = value.op if isinstance(value, Tensor) else value
    if consumer.frame is None:
        reason = f"'{op.name}' is in a while loop"
    else:
        reason = "they are in different while loops"
    details = (
        f"'{op.name}' (created at {op.location}) is computed inside while loop '{loop.name}', "
        f"and op '{consumer.name}' ({consumer.type}, at {_graph._user_location()}) is not in "
        "that loop. A loop's values leave it only as its results: make the value a loop "
        "variable and use the output of while_loop."
    )
    _logger.info(details)
    return ValueError(
        f"Cannot use '{op.name}' as input to '{consumer.name}' because {reason}. See info log "
        f"for more details: {details}"
    )


def _check_not_from_other_branch(value: Tensor, source, reader) -> None:
    """Raises if ``value``, made in ``source``, is read in ``reader`` inside another branch of
    the same cond (or switch_case) whose branches are `CondContext.isolated`.

    The message is TensorFlow's ("Tensor x:0 in true_fn is accessed from false_fn."), the tensor
    named as inside its cond and the branches by their `CondContext.branch_name`.
    """
    owner_name = None
    context = source
    while context is not None:
        if isinstance(context, CondContext):
            owner_name = context.branch_name or owner_name
            reader_name = None
            other = reader
            while other is not None:
                if isinstance(other, CondContext):
                    reader_name = other.branch_name or reader_name
                    if other.is_sibling_of(context) and context.isolated:
                        name = value.name.removeprefix(context.name + "/")
                        raise ValueError(
                            f"Tensor {name} in {owner_name} is accessed from {reader_name}. "
                            f"('{value.name}', created at {value.op.location}, lives in "
                            f"{_describe(context)}, which never runs together with "
                            f"{_describe(other)}; compute it outside the cond, or in each "
                            "branch.)"
                        )
                other = other.outer_context
        context = context.outer_context


class CondContext(ControlFlowContext):
    """One branch of a `cond`.  Fields: see the module docstring."""

    # Whether the other branch may not read this branch's tensors: TensorFlow builds a cond in a
    # function (and every switch_case) as functional branches that cannot see each other; a TF1
    # graph's cond allows it (the value is dead whenever the reader runs).  Class-level defaults
    # serve the records of a loaded graph, which are made without __init__.
    isolated: bool = False
    _branch_name: Optional[str] = ""
    merges: Sequence = ()

    @property
    def branch_name(self) -> Optional[str]:
        """How errors name this branch: "true_fn"/"false_fn" unless set (switch_case names its
        branches "branch <k>" and its chaining conds None; see `_check_not_from_other_branch`)."""
        if self._branch_name == "":
            return "true_fn" if self.branch else "false_fn"
        return self._branch_name

    @branch_name.setter
    def branch_name(self, name: Optional[str]) -> None:
        self._branch_name = name

    def __init__(self, graph, name: str, pred: Tensor, pivot: Tensor, branch: int, outer_context):
        super().__init__(graph, name, outer_context)
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self.isolated = graph.building_function
        pivot.op._control_flow_context = self
        graph.add_to_collection(GraphKeys.COND_CONTEXT, self)

    def is_sibling_of(self, other) -> bool:
        """True when ``other`` is the other branch of the same cond."""
        return (
            isinstance(other, CondContext)
            and other.pivot.op.inputs[0].op is self.pivot.op.inputs[0].op
            and other.branch != self.branch
        )

    def add_op(self, op: Operation) -> None:
        """Every op of a branch is unfetchable: it has no value when the other one is taken."""
        if not self._marks_paused:
            self.graph.prevent_fetching(op, fetch_refusal(self))

    def _capture(self, outer_value: Tensor) -> Tensor:
        with building_in(self.graph, self.outer_context, marks=False):
            op = apply_op("Switch", [outer_value, self.pred], name="Switch")
        op._control_flow_context = self
        self.graph.prevent_fetching(op, switch_refusal(self))
        return op.outputs[self.branch]

    def control_pivot(self) -> Tensor:
        return self.pivot

    def _needs_pivot(self, inputs: list, same_frame_controls: list) -> bool:
        return not inputs and not any(
            _is_within(_output_context(c), self) for c in same_frame_controls
        )

    def __repr__(self) -> str:
        side = "true" if self.branch else "false"
        return (
            f"<CondContext '{self.name}' branch={self.branch} ({side}) pred='{self.pred.name}' "
            f"pivot='{self.pivot.name}', outer: {_describe(self.outer_context)}>"
        )


def switch_refusal(context: CondContext) -> str:
    """Why a run may not fetch a Switch of the cond of branch ``context``."""
    if _frame_of(context) is not None:
        return fetch_refusal(context)
    return (
        f"it is a Switch of cond '{context.name}' built at {context.location}, which passes "
        "its input to one branch only, so one of its outputs has no value whichever branch is "
        "taken. Fetch the cond's result instead."
    )


def _unique_frame_name(graph, name: str) -> str:
    """``name``, unless a loop of ``graph`` already has that frame (a scope re-entered with a
    trailing "/"): then ``name_1``, ``name_2``, ...; two loops must never share a frame."""
    taken = {c.frame_name for c in graph.get_collection(GraphKeys.WHILE_CONTEXT)}
    frame, count = name, 0
    while frame in taken:
        count += 1
        frame = f"{name}_{count}"
    return frame


class WhileContext(ControlFlowContext):
    """One `while_loop`.  Fields: see the module docstring; its node lists fill in as it builds."""

    def __init__(
        self,
        graph,
        name: str,
        outer_context,
        parallel_iterations: int = 10,
        back_prop: bool = True,
        swap_memory: bool = False,
        maximum_iterations: Optional[Tensor] = None,
    ):
        super().__init__(graph, name, outer_context)
        self.frame_name = _unique_frame_name(graph, name)
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        self.maximum_iterations = maximum_iterations
        self.pivot: Optional[Tensor] = None
        self.pivot_for_pred: Optional[Tensor] = None
        self.loop_enters: list[Operation] = []
        self.merges: list[Operation] = []
        self.switches: list[Operation] = []
        self.exits: list[Operation] = []
        self.next_iterations: list[Operation] = []
        self.loop_cond: Optional[Operation] = None
        self._exit_ops: set[Operation] = set()
        graph.add_to_collection(GraphKeys.WHILE_CONTEXT, self)

    def enter_attrs(self, is_constant: bool) -> dict:
        return {
            "frame_name": self.frame_name,
            "is_constant": is_constant,
            "parallel_iterations": self.parallel_iterations,
        }

    def enter_loop_variable(
        self, initial: Tensor, shape=None, keep_control_dependencies: bool = False
    ) -> Operation:
        """The non-constant Enter that brings a loop variable's ``initial`` value into this
        loop, built in the outer context, with the static shape the loop keeps for the
        variable: ``shape`` (a shape invariant) or ``initial``'s.  The Enter op alone knows no
        shape (later iterations may differ); the loop's builder, which checks what its body
        returns, vouches for it, as TensorFlow's ``_Enter(use_input_shape=True)`` does."""
        with building_in(self.graph, self.outer_context, keep_control_dependencies, marks=False):
            op = apply_op("Enter", [initial], self.enter_attrs(False), name="Enter")
        op._control_flow_context = self
        self.graph.prevent_feeding(op.outputs[0], feed_refusal(self))
        op.outputs[0].set_shape(initial.shape if shape is None else shape)
        return op

    def _capture(self, outer_value: Tensor) -> Tensor:
        with building_in(self.graph, self.outer_context, marks=False):
            op = apply_op("Enter", [outer_value], self.enter_attrs(True), name="Enter")
        op._control_flow_context = self
        self.graph.prevent_feeding(op.outputs[0], feed_refusal(self))
        return op.outputs[0]

    def add_op(self, op: Operation) -> None:
        """An op of the loop is unfetchable and its outputs unfeedable, as TensorFlow 1.x marks
        them; so is an Exit of a loop nested in a cond or loop (where its output lives)."""
        if self._marks_paused:
            return
        if op.op_def.kind == NodeKind.EXIT:
            if self.outer_context is None:
                return  # a top-level loop's result
            where = self.outer_context
        else:
            where = self
        self.graph.prevent_fetching(op, fetch_refusal(where))
        refusal = feed_refusal(where)
        for output in op.outputs:
            self.graph.prevent_feeding(output, refusal)

    def add_exit(self, exit_op: Operation) -> None:
        self.exits.append(exit_op)
        self._exit_ops.add(exit_op)

    def exit_of(self, switch: Operation) -> Optional[Operation]:
        """The Exit that takes ``switch``'s false output: the loop variable's result, or None
        when a pruned copy of the graph (`dataflow.passes`) dropped it.  Found by its input,
        not by position: pruning drops an unused Exit but keeps its loop variable's Switch."""
        for exit_op in self.exits:
            if exit_op._inputs and exit_op._inputs[0].op is switch:
                return exit_op
        return None

    def control_pivot(self) -> Tensor:
        pivot = self.pivot if self.pivot is not None else self.pivot_for_pred
        if pivot is None:
            raise RuntimeError(f"while loop '{self.name}' has no pivot yet")
        return pivot

    def _is_invariant(self, t: Tensor) -> bool:
        op = t.op
        return (
            op.op_def.kind == NodeKind.ENTER
            and op.attrs.get("is_constant") is True
            and op._control_flow_context is self
        )

    def _needs_pivot(self, inputs: list, same_frame_controls: list) -> bool:
        return not same_frame_controls and all(self._is_invariant(t) for t in inputs)

    def __repr__(self) -> str:
        return (
            f"<WhileContext '{self.name}' loop_vars={len(self.loop_enters)} "
            f"parallel_iterations={self.parallel_iterations}, "
            f"outer: {_describe(self.outer_context)}>"
        )

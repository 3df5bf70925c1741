"""The backward loops of a `gradients` call: how a gradient flows back through `while_loop`.

`dataflow.autodiff.gradients` walks the graph from ``ys`` back to ``xs``.  When the walk meets a
loop, it builds a *backward loop* that runs as many iterations as the forward one did, in reverse,
and reads the forward values it needs from TF1's stacks (``StackV2``, ``dataflow.ops.stack_ops``)
that the forward loop fills.  This module holds that machinery; the gradient functions of the
primitives (``primitives.raw_ops``) call into it.  TensorFlow 1.x does the same
(``control_flow_grad.py``, ``control_flow_state.py``; Yu et al., EuroSys 2018); the shapes below
follow it.

Invariants first:

- **Differentiated loops.**  A loop is differentiated by a call when ``back_prop`` is true and
  one of its loop-variable Switches lies between ``ys`` and ``xs``.  Each gets one `LoopGradState`
  (per call: two calls build two backward loops).
- **Mirror contexts.**  Every backward op is built in the *mirror* of the forward op's context:
  the mirror of a differentiated loop ``W`` is its backward loop ``G(W)`` (a `BackwardLoopContext`,
  built where ``W``'s surroundings are mirrored); the mirror of a cond branch inside a
  differentiated loop is a `BackwardCondContext` whose predicate is the forward predicate of the
  same iteration, read back from a stack; anything outside every differentiated loop is its own
  mirror (the cond gradients of ``dataflow.autodiff.gradients``), unless it lies outside the context
  `gradients` was called in (a loop body): then the mirror is that context, as the gradient is
  computed there.  So a backward op runs exactly in the
  backward iterations and branches that mirror the forward ones it differentiates, and none of
  an untaken branch's backward kernels run.
- **Forward values reach the backward loop only through the mirror contexts' capture hook.**
  When a backward op built in mirror context ``M`` takes a forward tensor ``v`` computed in the
  forward context ``M`` mirrors, `ControlFlowGradState.saved_value` replaces it by a pop:
  ``StackV2`` (made in the loop's enclosing context, so each run of the loop, i.e. each
  forward frame instance, gets its own), ``StackPushV2(stack, v)`` in ``v``'s forward
  context, ``StackPopV2(stack)`` in ``M``.  Tensors from further out are captured the
  usual way (constant Enter, Switch), level by level, and go through the same hook at their
  own level: a loop invariant is entered into the backward loop, not saved, and so is one
  that a cond inside the loop switched into a branch (the backward branch captures it from the
  backward loop in turn); a constant is rebuilt; the stack handle of an inner loop, and the
  inner loop's iteration count, are forward values of the outer loop and are themselves saved
  per outer iteration.  Only what some backward op reads is saved, once per forward value, and
  only when the call's results depend on that op: a gradient function builds the gradients of
  all its op's inputs, and a pop read only for an input gradient that no result needs (of a
  constant, say) is left without its push (`ControlFlowGradState.push_saved_values`, once the
  results are known).
- **Shapes instead of values.**  A backward op that needs only the shape of a forward value
  (``shape``, ``size``, ``rank``, ``zeros_like``/``ones_like`` of an unknown shape: the
  gradients of Reshape, ExpandDims, Squeeze, ConcatV2, of broadcasting ops, ...) asks the
  mirror context (`_MirrorCapture.shape_query`); the query is computed beside the value in the
  forward loop, and only its result, a few integers, is saved.
- **Counters.**  The forward loop gets a counter loop variable: ``forward_index`` is ``k`` in
  iteration ``k`` and its Exit is the iteration count ``n``.  The backward loop counts ``n,
  n-1, ..., 1`` on its own counter and stops at 0; its body sees ``backward_index = count - 1``
  (``n-1-j`` in backward iteration ``j``), which is also its pivot.
- **Order: pushes in iteration order, pops in reverse, whatever ``parallel_iterations``.**  A
  stack is last in, first out, so the backward iteration that mirrors forward iteration ``k``
  must pop exactly what iteration ``k`` pushed.  With several iterations in flight (and on the
  inter-op pool) nothing would order the kernels of different iterations, so the counters
  chain them, as TensorFlow's ``forward_sync``/``grad_sync`` do: every push of iteration ``k``
  has a control input from the counter's Switch of iteration ``k`` and is a control input of
  the counter's increment (``next_index``) of iteration ``k``, which the counter of iteration
  ``k+1`` waits for.  Likewise every pop of backward iteration ``j`` has a control input from
  ``backward_index`` and is a control input of ``next_count``, the op between it and the
  backward counter's NextIteration.  A push or pop in a cond branch reaches the increment
  through a Merge of one token per branch (``push_sync``, ``pop_sync``), so the untaken
  branch's dead stack ops do not kill it; TensorFlow uses a ControlTrigger there.  Only the
  counters are serialized: the rest of each iteration still overlaps with its neighbours.
- **Pushes before pops.**  The count ``n`` leaves the forward loop only after the last
  increment, so after every push, and every pop depends on ``n``.

How the walk uses it (the pending-count exclusions that break the loop's cycle):

1. The walk reaches a loop through its Exits.  An Exit whose Switch is between is not
   differentiated on its own: its gradient is collected and, once every such Exit of the loop
   has its gradient, the loop is *activated*: the counters and the backward loop's header are
   built, and for each floating loop variable whose Switch is between, the Exit's gradient
   (zeros if it has none, as TensorFlow does for unused exits) enters the backward loop
   (``Exit`` gradient: an ``Enter``) and becomes a backward Merge (``Switch`` gradient, first
   visit).  If no Exit has a gradient, nothing is built and the loop is walked with None.
2. The forward Merge's gradient is a Switch on the backward loop's condition: output 0 leaves the
   backward loop as the gradient of the initial value (``Enter`` gradient: an ``Exit``), output 1
   is the gradient of the body's result (``NextIteration`` gradient: the identity).
3. The body's ops are walked like any others (their gradients built in mirror contexts).  A loop
   Switch's output-1 edge (to the body's Identity) is not in the pending counts: when the body
   Identity has sent its gradient, the Switch is visited a second time and closes the backward
   Merge's back edge with it (``NextIteration``).  A variable whose body passes no gradient back
   gets zeros on its back edge when the walk ends (`LoopGradState.finish`).
4. A loop invariant (constant Enter) sums its gradient over the backward iterations in an
   accumulator loop variable of the backward loop, starting from zeros; the sum leaves by an
   Exit.

What is saved, concretely.  Per forward iteration, one value for each forward tensor read by
some backward op the results need (a scalar loop ``a <- tanh(a * w)`` differentiated with
respect to its start and ``w`` saves ``a`` and ``tanh(a * w)``: 16 bytes of data per iteration;
``w``, an invariant, is not saved).  A variable read inside the loop's
body is a forward value like any other and is saved per iteration, as in TensorFlow (the
backward loop must see the value the forward iteration saw); read it before the loop to make
it an invariant instead.  All the pushes for a loop run whenever its backward loop runs (they
are ordered before the iteration count it starts from), so fetching one gradient of several
also saves what the others read; those values are dropped with the run.

Zeros.  Where a gradient function needs zeros shaped like a forward value inside a
differentiated loop (`zeros_like_forward`): a constant when the static shape is known, built in
the current mirror context so that it is gated like the gradients beside it; otherwise the
forward value's shape is saved (not the value), as for any shape query.  The zeros for the
untaken side of a Switch that captures a tensor into a branch are built in the mirror of the
other branch.

Stopped loop variables: zeros or None, as in TensorFlow 1.x.  TensorFlow decides which loop
variables to differentiate by data edges alone, ignoring ``stop_gradient`` and the other stops:
once a gradient flows out of one of a loop's results, every floating loop variable that is
reached from ``xs`` and from which ``ys`` are reached at all gets a backward variable.  One that
reaches ``ys`` only through a stop (``stop_gradient`` inside the body, a stopped result) gets
zeros from its unused result and nothing from the body, so the gradient of its initial value,
and of what it is computed from, is zeros, not None.  `stopped_loop_variables` adds such
variables (and the loop's Exits that receive a gradient, which activate the loop) to the
walk.  When no result of the loop receives a gradient (``stop_gradient(result)``, a
``back_prop=False`` loop), nothing is built and every ``x`` behind it gets None, as in
TensorFlow.

What is not supported (raises `dataflow.autodiff.gradients.WhileLoopGradientError` before any op is
added): second-order gradients through a loop, where a gradient would flow into a backward
loop (its stack pops have no gradient; behind ``stop_gradient`` none flows), gradients
through a frame written by hand with the raw primitives (no record to mirror), ``ys`` inside a
loop whose loop variables the gradient would flow through, an ``x`` inside a differentiated
loop (its gradient would differ per iteration), and a gradient taken inside a loop body through
a loop that runs outside the body (a stack's values are popped once, and the backward loop would
run in every iteration of the body).
"""

from __future__ import annotations

from typing import Optional

from dataflow.framework import dtypes as _dtypes
from dataflow.framework.gradient_registry import (
    InitialLoopValueGradientError,
    SecondOrderLoopGradientError,
    WhileLoopGradientError,
    register_zeros_like_forward,
)
from dataflow.framework.graph import Operation, Tensor, _user_location
from dataflow.framework.graph_keys import GraphKeys
from dataflow.framework.op_registry import apply_op
from dataflow.ops.constant_op import constant
from dataflow.ops.stack_ops import stack_pop_v2, stack_push_v2, stack_v2
from executor.program import NodeKind

from .contexts import (
    CondContext,
    WhileContext,
    _describe,
    _is_within,
    _output_context,
    building_in,
)
from .raw_ops import set_merge_input

__all__ = [
    "BackwardCondContext",
    "BackwardLoopContext",
    "ControlFlowGradState",
    "LoopGradState",
    "backward_context",
    "stopped_loop_variables",
    "zeros_like_forward",
]


def _differentiable(dtype) -> bool:
    """Whether values of ``dtype`` carry gradients (floating and complex ones, as in TF)."""
    return dtype.is_floating or dtype.is_complex


def _second_order_error(message: str) -> Exception:

    return SecondOrderLoopGradientError(
        f"Second-order gradient for while loops not supported: {message} (gradients() called "
        f"at {_user_location()})"
    )


def _initial_value_error(loop, switches: list, reached: set) -> Exception:
    """TF1's error for a gradient taken inside ``loop``'s body that flows back through the
    loop's own variables to their initial values: it names the nearest x behind them."""

    target, queue, seen = None, list(switches), set()
    while queue and target is None:
        op = queue.pop(0)
        if op in seen:
            continue
        seen.add(op)
        sources = [t.op for t in op.inputs if t.op in reached]
        if not sources and op in reached:
            target = op
        queue.extend(sources)
    name = target.name if target is not None else switches[0].name
    return InitialLoopValueGradientError(
        f"Cannot compute gradient inside while loop with respect to op '{name}'. We do not "
        "support taking the gradient wrt or through the initial value of a loop variable. "
        "Gradients can be computed through loop invariants or wrt the input parameters to the "
        f"loop body. (While loop '{loop.name}' created at {switches[0].location}; gradients() "
        f"called in its body at {_user_location()}.)"
    )


def _loop_error(message: str) -> Exception:

    return WhileLoopGradientError(f"{message} (gradients() called at {_user_location()})")


def _is_branch_capture(value: Tensor) -> bool:
    """True when ``value`` is the output of a Switch that brings a tensor into a cond branch
    (built by the branch's capture, on the cond's predicate, feeding that branch): whenever
    the branch runs, ``value`` is that tensor."""
    op = value.op
    context = op._control_flow_context
    return (
        op.op_def.kind == NodeKind.SWITCH
        and isinstance(context, CondContext)
        and value.value_index == context.branch
        and op.inputs[1] is context.pred
    )


def _is_loop_constant(value: Tensor) -> bool:
    """True when ``value`` is the same in every iteration of the loops around it: a constant,
    a loop invariant (a constant Enter), or one of those brought into a cond branch."""
    while _is_branch_capture(value):
        value = value.op.inputs[0]
    op = value.op
    return op.type == "Const" or (
        op.op_def.kind == NodeKind.ENTER and bool(op.attrs.get("is_constant"))
    )


def _innermost_loop(context) -> Optional[WhileContext]:
    while context is not None and not isinstance(context, WhileContext):
        context = context.outer_context
    return context


# -- the backward contexts -------------------------------------------------------------------------
class _MirrorCapture:
    """What both backward contexts add to capturing: forward values of the context they mirror
    are read back from stacks (see the module docstring)."""

    forward_context = None
    grad_state: ControlFlowGradState

    def add_value(self, value: Tensor, consumer: str = "op") -> Tensor:
        known = self._external_values.get(value)
        if known is not None:
            return known
        if _output_context(value.op) is self.forward_context:
            saved = self.grad_state.saved_value(value, self)
            self._external_values[value] = saved
            return saved
        return super().add_value(value, consumer)

    def shape_query(self, kind: str, value: Tensor, out_type) -> Optional[Tensor]:
        """``kind`` ("Shape", "Size" or "Rank", of ``out_type``) of ``value`` for a backward op
        built here, when ``value`` is a forward value that would be saved per iteration: the
        query is computed beside ``value`` in the forward graph and only its result (a few
        integers) is saved.  None when ``value`` is not such a value; the caller then queries
        it as usual.  ``dataflow.ops.array_ops`` asks this of the current context for every
        shape query and for zeros or ones shaped like a tensor."""
        if value.dtype is _dtypes.resource or _is_loop_constant(value):
            return None
        if self.grad_state.innermost_state(_output_context(value.op)) is None:
            return None
        query = self.grad_state.forward_query(kind, value, out_type)
        return self.add_value(query, kind)


class BackwardLoopContext(_MirrorCapture, WhileContext):
    """The backward loop of a differentiated `while_loop` (a `WhileContext` record like any).

    ``forward_context`` is the forward loop, ``grad_state`` the call's `ControlFlowGradState`.
    Its records list the backward counter first, then the backward variables and accumulators in
    the order they were built.  ``pivot`` is ``backward_index`` (the count minus one on the body
    side of the counter's Switch): live exactly in the iterations that run the body.
    """

    def __init__(self, graph, name, outer_context, forward: WhileContext, grad_state):
        super().__init__(
            graph, name, outer_context, forward.parallel_iterations, True, forward.swap_memory
        )
        self.forward_context = forward
        self.grad_state = grad_state
        # Each stack pop of this loop and the forward value it reads back (kept for a later
        # gradients() call, to tell whether its xs reach this loop through saved values).
        self.saved_values: dict[Operation, Tensor] = {}


class BackwardCondContext(_MirrorCapture, CondContext):
    """One branch of the mirror of a forward cond inside a differentiated loop.  ``pred`` is
    the forward predicate of the mirrored iteration (popped from a stack)."""

    def __init__(self, graph, name, pred, pivot, branch, outer_context, forward, grad_state):
        super().__init__(graph, name, pred, pivot, branch, outer_context)
        self.forward_context = forward
        self.grad_state = grad_state


def backward_context(graph, forward_context):
    """The mirror of ``forward_context`` for the gradient being built in ``graph`` now (the
    context itself when no loop gradient is being built around it)."""
    current = graph._control_flow_context
    state = getattr(current, "grad_state", None)
    if state is None:
        # No loop gradient around: the mirror is the context itself, or the context the
        # gradient is built in when that one does not contain it (`ControlFlowGradState.mirror`).
        return forward_context if _is_within(forward_context, current) else current
    return state.mirror(forward_context)


def zeros_like_forward(t: Tensor) -> Optional[Tensor]:
    """Zeros shaped like the forward tensor ``t``, built in the current backward context, when
    ``t`` lies inside a loop being differentiated; None otherwise (see the module docstring)."""
    graph = t.graph
    context = graph._control_flow_context
    state = getattr(context, "grad_state", None)
    if state is None or t.dtype is _dtypes.resource:
        return None
    if state.innermost_state(_output_context(t.op)) is None:
        return None
    return state.zeros_in_current_context(t.dtype, t.shape, lambda: t)


# -- one differentiated loop -----------------------------------------------------------------------
class LoopGradState:
    """The gradient of one forward loop in one `gradients` call (see the module docstring).

    Before activation: ``waiting_exits`` (the Exits whose gradients are still to come) and
    ``exit_grads``.  After: the forward counter (``forward_index``, ``forward_increment``,
    ``count``), the backward loop ``grad_context`` with its ``backward_index``, and per loop
    variable the backward Merge (``backward_merges``, by forward Switch) and the Switch of the
    forward Merge's gradient (``backward_switches``, by forward Merge).
    """

    def __init__(self, forward: WhileContext, cf_state: ControlFlowGradState, switches: list):
        self.forward = forward
        self.cf_state = cf_state
        self.graph = forward.graph
        self.switches = switches  # the forward loop-variable Switches between ys and xs
        self.waiting_exits: set[Operation] = set()
        self.exit_grads: dict[Operation, Optional[Tensor]] = {}
        self.active = False
        self.scope = ""
        self.forward_index: Optional[Tensor] = None
        self.forward_increment: Optional[Operation] = None
        self.count: Optional[Tensor] = None
        self.grad_context: Optional[BackwardLoopContext] = None
        self.backward_index: Optional[Tensor] = None
        self.backward_merges: dict[Operation, Tensor] = {}
        self.backward_switches: dict[Operation, Operation] = {}
        self.closed: set[Operation] = set()
        self.backward_increment: Optional[Operation] = None
        # Per cond branch inside the forward or backward loop: the token its stack ops precede.
        self._syncs: dict[CondContext, Operation] = {}

    def __repr__(self) -> str:
        return f"<LoopGradState of while loop '{self.forward.name}' active={self.active}>"

    # -- the walk's entry points ------------------------------------------------------------------
    def exit_reached(self, exit_op: Operation, grad: Optional[Tensor]) -> bool:
        """Records the gradient of an Exit; True when it was the last one awaited."""
        self.exit_grads[exit_op] = grad
        self.waiting_exits.discard(exit_op)
        return not self.waiting_exits

    def activate(self) -> None:
        """Builds the forward counter and the backward loop's header (module docstring)."""
        graph = self.graph
        self.active = True
        with graph.name_scope(self.forward.name + "_grad") as scope:
            self.scope = scope
            self._add_forward_counter()
            self._add_backward_loop()

    def _add_forward_counter(self) -> None:
        graph, forward = self.graph, self.forward
        with graph.name_scope("forward_count"):
            with building_in(graph, forward.outer_context):
                zero = constant(0, name="zero")
                one = constant(1, name="one")
            _, _, switch, next_iteration, exit_op = _add_loop_variable(
                graph,
                forward,
                zero,
                lambda index: apply_op("Add", [index, one], name="next_index").outputs[0],
            )
        # Not listed in the loop's records (they list the user's loop variables), but its
        # output lives outside the loop like every Exit's.
        forward._exit_ops.add(exit_op)
        self.forward_index = switch.outputs[1]
        self.forward_increment = next_iteration.inputs[0].op
        self.count = exit_op.outputs[0]

    def _add_backward_loop(self) -> None:
        graph = self.graph
        outer = self.cf_state.mirror(self.forward.outer_context)
        context = BackwardLoopContext(graph, self.scope[:-1], outer, self.forward, self.cf_state)
        self.grad_context = context
        with graph.name_scope("backward_count"):
            with building_in(graph, outer):
                one = constant(1, name="one")
            enter = context.enter_loop_variable(self.count)
            context.loop_enters.append(enter)
            with building_in(graph, context):
                entered = enter.outputs[0]
                merge = apply_op("Merge", [entered, entered], name="Merge")
                context.merges.append(merge)
                context.pivot_for_pred = merge.outputs[0]
                positive = apply_op("GreaterEqual", [merge.outputs[0], one], name="positive")
                loop_cond = apply_op("LoopCond", positive.outputs, name="LoopCond")
                context.loop_cond = loop_cond
                switch = apply_op("Switch", [merge.outputs[0], loop_cond.outputs[0]], name="Switch")
                context.switches.append(switch)
                index = apply_op("Sub", [switch.outputs[1], one], name="index").outputs[0]
                context.pivot = index
                # The pops of this iteration are control inputs of the next count.
                next_count = apply_op("Identity", [index], name="next_count")
                next_iteration = apply_op("NextIteration", next_count.outputs, name="NextIteration")
                set_merge_input(merge, 1, next_iteration.outputs[0])
                context.next_iterations.append(next_iteration)
        self.backward_index = index
        self.backward_increment = next_count

    # -- gradients of the loop's primitives (called by raw_ops' registered gradients) ------------
    def exit_grad(self, grad: Tensor) -> Tensor:
        """A forward Exit's gradient enters the backward loop."""
        context = self.grad_context
        enter = context.enter_loop_variable(grad)
        context.loop_enters.append(enter)
        return enter.outputs[0]

    def switch_grad(self, op: Operation, grad_false, grad_true) -> tuple:
        """First visit (from the Exit): the backward Merge.  Second visit (from the body): its
        back edge."""
        context = self.grad_context
        merged = self.backward_merges.get(op)
        if merged is None:
            if grad_false is None:
                return None, None
            with building_in(self.graph, context):
                merge = apply_op("Merge", [grad_false, grad_false], name="Merge")
            context.merges.append(merge)
            self.backward_merges[op] = merge.outputs[0]
            return merge.outputs[0], None
        if grad_true is not None:
            self._close_back_edge(op, grad_true)
        return None, None

    def _close_back_edge(self, switch: Operation, grad: Tensor) -> None:
        context = self.grad_context
        with building_in(self.graph, context):
            next_iteration = apply_op("NextIteration", [grad], name="NextIteration")
        set_merge_input(self.backward_merges[switch], 1, next_iteration.outputs[0])
        context.next_iterations.append(next_iteration)
        self.closed.add(switch)

    def merge_grad(self, op: Operation, grad: Tensor) -> list:
        """A forward Merge's gradient: Switch on the backward condition; output 0 for the
        Enter (the loop's first value), output 1 for the NextIteration (the body's result)."""
        context = self.grad_context
        with building_in(self.graph, context):
            switch = apply_op("Switch", [grad, context.loop_cond.outputs[0]], name="Switch")
        context.switches.append(switch)
        self.backward_switches[op] = switch
        return [switch.outputs[0], switch.outputs[1]] + [None] * (len(op.inputs) - 2)

    def enter_grad(self, op: Operation, grad: Tensor) -> Tensor:
        """A loop variable's Enter: the gradient leaves the backward loop.  A loop invariant's
        (constant) Enter: the gradient is summed over the backward iterations."""
        context = self.grad_context
        if not op.attrs.get("is_constant"):
            with building_in(self.graph, context):
                exit_op = apply_op("Exit", [grad], name="Exit")
            context.add_exit(exit_op)
            return exit_op.outputs[0]
        graph = self.graph
        with graph.name_scope("accumulate"):
            with building_in(graph, context.outer_context):
                initial = self.cf_state.zeros_in_current_context(
                    grad.dtype, grad.shape, lambda: _readable(op.inputs[0], grad)
                )
            enter, merge, switch, next_iteration, exit_op = _add_loop_variable(
                graph,
                context,
                initial,
                lambda total: apply_op("Add", [total, grad], name="Add").outputs[0],
            )
        context.loop_enters.append(enter)
        context.merges.append(merge)
        context.switches.append(switch)
        context.next_iterations.append(next_iteration)
        context.add_exit(exit_op)
        return exit_op.outputs[0]

    def finish(self) -> None:
        """Closes the back edge of every backward variable whose body sent no gradient: from
        the second backward iteration on its gradient is zero."""
        if not self.active:
            return
        forward_merges = {switch: switch.inputs[0].op for switch in self.backward_merges}
        for switch in self.backward_merges:
            if switch in self.closed:
                continue
            body_side = self.backward_switches[forward_merges[switch]].outputs[1]
            with self.graph.name_scope(self.scope), building_in(self.graph, self.grad_context):
                zeros = apply_op("ZerosLike", [body_side], name="zeros").outputs[0]
            self._close_back_edge(switch, zeros)

    # -- saving forward values --------------------------------------------------------------------
    def save(self, value: Tensor, forward_context, backward_context) -> Tensor:
        """Pops ``value`` in ``backward_context`` from a new stack; returns the pop.  The push
        of ``value`` in ``forward_context`` is added by `push` once the call knows the pop is
        needed (the pop joins the backward order only then, so an unneeded pop never runs)."""
        graph = self.graph
        name = value.op.name.replace("/", "_") + (
            f"_{value.value_index}" if value.value_index else ""
        )
        # Colocated with the value, as TensorFlow colocates its accumulators, whatever the
        # gradient being built is colocated with.
        with (
            graph.name_scope(self.scope + "saved/"),
            graph.name_scope(name) as scope,
            graph.colocate_with(value.op, ignore_existing=True),
        ):
            with building_in(graph, self.forward.outer_context):
                stack = stack_v2(-1, value.dtype.base_dtype, stack_name=scope[:-1], name="stack")
            with building_in(graph, backward_context):
                pop = stack_pop_v2(stack, value.dtype.base_dtype, name="pop")
            pop.set_shape(value.shape)
            pop.op._add_control_input(self.backward_index.op)
        self.cf_state.unpushed[pop.op] = (self, scope, stack, value, forward_context)
        _backward_loop_around(backward_context).saved_values[pop.op] = value
        return pop

    def push(
        self, scope: str, stack: Tensor, value: Tensor, forward_context, pop: Operation
    ) -> None:
        """Pushes ``value`` in ``forward_context`` on ``stack`` after the push of the previous
        iteration, and orders ``pop`` before the pop of the next backward iteration (module
        docstring, "Order")."""
        graph = self.graph
        with graph.name_scope(scope), graph.colocate_with(value.op, ignore_existing=True):
            with building_in(graph, forward_context):
                push = stack_push_v2(stack, value, self.forward.swap_memory, name="push").op
        push._add_control_input(self.forward_index.op)
        self._sync_target(forward_context, forward=True)._add_control_input(push)
        backward_context = pop._control_flow_context
        self._sync_target(backward_context, forward=False)._add_control_input(pop)

    def _sync_target(self, context, forward: bool) -> Operation:
        """The op that a push (``forward``) or pop in ``context`` must run before so that the
        next iteration's pushes or pops come after it (module docstring, "Order")."""
        loop = self.forward if forward else self.grad_context
        if context is loop:
            return self.forward_increment if forward else self.backward_increment
        if not isinstance(context, CondContext):
            raise AssertionError(f"a stack op in {_describe(context)} is not inside '{loop.name}'")
        sync = self._syncs.get(context)
        if sync is not None:
            return sync
        graph = self.graph
        if forward:
            sibling = _sibling_branch(context)
        else:
            sibling = self.cf_state.mirror(_sibling_branch(context.forward_context))
        tokens = {}
        with graph.name_scope(self.scope + ("push_sync/" if forward else "pop_sync/")):
            for branch in (context, sibling):
                with building_in(graph, branch):
                    side = "true" if branch.branch else "false"
                    tokens[branch.branch] = apply_op("Identity", [branch.pivot], name=side)
                self._syncs[branch] = tokens[branch.branch]
            with building_in(graph, context.outer_context):
                merge = apply_op(
                    "Merge", [tokens[0].outputs[0], tokens[1].outputs[0]], name="Merge"
                )
        self._sync_target(context.outer_context, forward)._add_control_input(merge)
        return tokens[context.branch]


register_zeros_like_forward(zeros_like_forward)


def _add_loop_variable(graph, context: WhileContext, initial: Tensor, step) -> tuple:
    """Adds a loop variable by hand to the loop of ``context`` (whose predicate exists):
    ``Enter(initial)`` -> ``Merge`` -> ``Switch`` on the loop's predicate; ``step(value)`` builds
    the next value from the body's side of the Switch, and it goes back to the Merge through a
    ``NextIteration``; the final value leaves through an ``Exit``.  ``initial`` lives in the
    loop's outer context.  Returns ``(enter, merge, switch, next_iteration, exit_op)``; the
    loop's records are the caller's to update."""
    enter = context.enter_loop_variable(initial)
    with building_in(graph, context):
        entered = enter.outputs[0]
        merge = apply_op("Merge", [entered, entered], name="Merge")
        switch = apply_op("Switch", [merge.outputs[0], context.loop_cond.outputs[0]], name="Switch")
        next_iteration = apply_op("NextIteration", [step(switch.outputs[1])], name="NextIteration")
        set_merge_input(merge, 1, next_iteration.outputs[0])
        exit_op = apply_op("Exit", [switch.outputs[0]], name="Exit")
    return enter, merge, switch, next_iteration, exit_op


def _sibling_branch(branch: CondContext) -> CondContext:
    for context in branch.graph.get_collection(GraphKeys.COND_CONTEXT):
        if (
            isinstance(context, CondContext)
            and context is not branch
            and context.name == branch.name
            and context.pred is branch.pred
            and context.branch == 1 - branch.branch
        ):
            return context
    raise AssertionError(f"cond '{branch.name}' has no record of its other branch")


def _readable(value: Tensor, like: Tensor) -> Tensor:
    """``value``, or for a resource (a variable) a read of it, to take a shape from."""
    if value.dtype is not _dtypes.resource:
        return value
    attrs = {"dtype": like.dtype, "shape": like.shape}
    with building_in(value.graph, _output_context(value.op)):
        return apply_op("ReadVariableOp", [value], attrs, name="read_for_shape").outputs[0]


def stopped_loop_variables(reached: set, between: set, connected, passed_back, passes) -> tuple:
    """``(exits, switches)`` that ``between`` lacks for the stopped loop variables (module
    docstring): of each loop with a stopped variable, the Exits ``passed_back()`` holds (the
    ops a gradient from ``ys`` reaches) that pass it on, and the Switches of its stopped
    variables.  A loop
    none of whose Exits receives a gradient has none (its variables get None, as in
    TensorFlow).  ``connected()`` holds the reached ops from which ``ys`` are reached along any
    data edges."""
    if not any(_is_loop_variable_switch(op) for op in reached):
        return [], []
    loops: dict[WhileContext, list] = {}
    for op in connected():
        if (
            _is_loop_variable_switch(op)
            and op not in between
            and _differentiable(op.outputs[0].dtype)
        ):
            loops.setdefault(op._control_flow_context, []).append(op)
    exits: list = []
    switches: list = []
    for loop, stopped in loops.items():
        receiving = [e for e in loop.exits if e in passed_back() and passes(e)]
        if receiving:
            exits.extend(e for e in receiving if e not in between)
            switches.extend(stopped)
    return exits, switches


def _is_loop_variable_switch(op: Operation) -> bool:
    """True for the Switch of a loop variable of a `while_loop` built with ``back_prop``."""
    context = op._control_flow_context
    return (
        op.op_def.kind == NodeKind.SWITCH
        and isinstance(context, WhileContext)
        and context.back_prop
        and op in context.switches
    )


# -- one gradients() call --------------------------------------------------------------------------
class ControlFlowGradState:
    """The differentiated loops of one `gradients` call and the mirror of each forward context.

    Built before any op is added: it finds the loops the gradient flows through and raises
    `WhileLoopGradientError` for what is not supported (module docstring).
    """

    def __init__(self, graph, between: set, passes, ys: list, reached: set):
        self.graph = graph
        # Where `gradients` was called: a loop body or cond branch, or None at the top level.
        self.caller_context = graph._control_flow_context
        self.loops: dict[WhileContext, LoopGradState] = {}
        self._mirrors: dict = {}
        self._cond_pivots: dict = {}
        self._shape_queries: dict[tuple, Tensor] = {}
        # The pops whose pushes `push_saved_values` adds if the results need them.
        self.unpushed: dict[Operation, tuple] = {}
        _check_not_second_order(graph, ys, reached, passes)
        switches_of: dict[WhileContext, list] = {}
        for op in between:
            context = op._control_flow_context
            kind = op.op_def.kind
            if kind in (NodeKind.ENTER, NodeKind.EXIT, NodeKind.NEXT_ITERATION) or (
                kind == NodeKind.MERGE
                and any(t.op.op_def.kind == NodeKind.NEXT_ITERATION for t in op.inputs)
            ):
                if _innermost_loop(context) is None:
                    raise _loop_error(
                        f"Gradients through a loop frame written by hand are not supported: op "
                        f"'{op.name}' ({op.type}, created at {op.location}) lies on a path from "
                        "ys back to xs, and only loops built by df.while_loop keep the record "
                        "a backward loop is built from. Use df.while_loop."
                    )
            if (
                kind == NodeKind.SWITCH
                and isinstance(context, WhileContext)
                and op in context.switches
                and passes(op)
            ):
                switches_of.setdefault(context, []).append(op)
        for loop, switches in switches_of.items():
            if loop.back_prop:
                order = {op: i for i, op in enumerate(loop.switches)}
                switches.sort(key=order.__getitem__)
                self.loops[loop] = LoopGradState(loop, self, switches)
        calling_loop = _innermost_loop(self.caller_context)
        for loop, state in self.loops.items():
            if calling_loop is not None and not _is_within(loop, calling_loop):
                raise _loop_error(
                    f"gradients() is called inside while loop '{calling_loop.name}' and "
                    f"differentiates through while loop '{loop.name}' (created at "
                    f"{state.switches[0].location}), which runs outside it: the values "
                    f"'{loop.name}' saves for its gradient are read once, and this gradient "
                    f"would read them in every iteration of '{calling_loop.name}'. Take the "
                    "gradient outside the loop, or build the differentiated loop in its body."
                )
        for op in between:
            self._check_loop_op(op, passes)
        for state in self.loops.values():
            loop = state.forward
            for exit_op in loop.exits:
                if exit_op in between and passes(exit_op):
                    state.waiting_exits.add(exit_op)
            if not state.waiting_exits:
                switch = state.switches[0]
                if _is_within(self.caller_context, loop):
                    raise _initial_value_error(loop, state.switches, reached)
                raise _loop_error(
                    f"The gradient flows through the loop variables of while loop "
                    f"'{loop.name}' (created at {switch.location}) but not out of the loop's "
                    f"results: some ys lie inside the loop while the xs they depend on enter it "
                    f"as loop variables (through '{switch.name}'). Take the gradient of the "
                    "loop's results, or of values computed and differentiated within one "
                    "iteration."
                )

    def _check_loop_op(self, op: Operation, passes) -> None:
        """Loop structure between ys and xs must belong to a differentiated loop (a constant
        Enter of another loop passes its gradient through unchanged, as in TensorFlow)."""
        if not passes(op):
            return
        context = op._control_flow_context
        kind = op.op_def.kind
        if not isinstance(context, WhileContext) or context in self.loops:
            return
        structural = kind in (NodeKind.MERGE, NodeKind.SWITCH, NodeKind.NEXT_ITERATION) or (
            kind == NodeKind.ENTER and not op.attrs.get("is_constant")
        )
        if structural and (
            op in context.merges
            or op in context.switches
            or op in context.next_iterations
            or op in context.loop_enters
        ):
            raise _loop_error(
                f"The gradient would flow through the loop variables of while loop "
                f"'{context.name}' (op '{op.name}', {op.type}, created at {op.location}) "
                "without leaving through the "
                "loop's results: some ys lie inside the loop while the xs they depend on enter "
                "it as loop variables. Take the gradient of the loop's results, or of values "
                "computed and differentiated within one iteration."
            )

    def check_inside(self, tensor: Tensor, what: str) -> None:
        """Raises if ``tensor`` (a y or an x) lies inside a differentiated loop."""
        context = _output_context(tensor.op)
        state = self.innermost_state(context)
        if state is not None:
            raise _loop_error(
                f"{what} tensor '{tensor.name}' (created at {tensor.op.location}) lies inside "
                f"while loop '{state.forward.name}', "
                "through whose results the gradient flows: it has a value per iteration, and "
                "the gradient is taken from outside the loop. Differentiate with respect to "
                "(or of) values outside the loop, or make the value a loop variable."
            )

    # -- queries ----------------------------------------------------------------------------------
    def innermost_state(self, context) -> Optional[LoopGradState]:
        """The state of the innermost loop around ``context`` if that loop is differentiated."""
        loop = _innermost_loop(context)
        return self.loops.get(loop) if loop is not None else None

    def loop_of_exit(self, op: Operation) -> Optional[LoopGradState]:
        """The state whose activation waits for the Exit ``op``, if any."""
        if op.op_def.kind != NodeKind.EXIT:
            return None
        state = self.loops.get(op._control_flow_context)
        if state is None or op not in state.waiting_exits and op not in state.exit_grads:
            return None
        return state

    def loop_of_switch(self, op: Operation) -> Optional[LoopGradState]:
        """The state of the loop whose loop-variable Switch ``op`` is, if differentiated."""
        if op.op_def.kind != NodeKind.SWITCH:
            return None
        state = self.loops.get(op._control_flow_context)
        if state is None or op not in state.forward.switches:
            return None
        return state

    # -- mirrors ----------------------------------------------------------------------------------
    def mirror(self, context):
        """The backward context in which the gradients of ``context``'s ops are built.

        Outside every differentiated loop: ``context`` itself when it lies within the context
        `gradients` was called in, else that caller's context (a gradient taken inside a loop
        body is computed in every iteration, from the values of that iteration, so the
        backward ops of the ops outside the body are built in the body too, as in TensorFlow).
        """
        if context is None:
            return self.caller_context
        mirrored = self._mirrors.get(context)
        if mirrored is not None:
            return mirrored
        state = self.innermost_state(context)
        if state is None:
            return context if _is_within(context, self.caller_context) else self.caller_context
        if isinstance(context, WhileContext):
            if context is not state.forward or not state.active:
                raise AssertionError(f"no backward loop for while loop '{context.name}' yet")
            mirrored = state.grad_context
        else:
            mirrored = self._mirror_cond(context)
        self._mirrors[context] = mirrored
        return mirrored

    def _mirror_cond(self, branch: CondContext) -> BackwardCondContext:
        graph = self.graph
        outer = self.mirror(branch.outer_context)
        key = (branch.name, branch.pred)
        known = self._cond_pivots.get(key)
        if known is None:
            loop_scope = self.innermost_state(branch).scope
            with (
                graph.name_scope(loop_scope),
                graph.name_scope(branch.name.split("/")[-1] + "_grad") as scope,
            ):
                with building_in(graph, outer):
                    switch = apply_op("Switch", [branch.pred, branch.pred], name="Switch")
                    pivot_t = apply_op("Identity", [switch.outputs[1]], name="switch_t")
                    pivot_f = apply_op("Identity", [switch.outputs[0]], name="switch_f")
            known = (scope[:-1], switch.inputs[1], pivot_f.outputs[0], pivot_t.outputs[0])
            self._cond_pivots[key] = known
        name, pred, pivot_f, pivot_t = known
        pivot = pivot_t if branch.branch else pivot_f
        return BackwardCondContext(graph, name, pred, pivot, branch.branch, outer, branch, self)

    # -- saved values -----------------------------------------------------------------------------
    def saved_value(self, value: Tensor, backward) -> Tensor:
        """``value`` (a forward tensor of the context ``backward`` mirrors) as the backward op
        of the mirrored iteration sees it."""
        op = value.op
        if op.op_def.kind == NodeKind.ENTER and op.attrs.get("is_constant"):
            return backward.add_value(op.inputs[0])
        if _is_branch_capture(value) and _is_loop_constant(value):
            # A loop invariant or constant switched into a branch: the backward branch
            # captures it from the backward loop in turn (the mirror of the Switch), and
            # nothing is saved per iteration.
            return backward.add_value(op.inputs[0])
        if op.type == "Const":
            with building_in(self.graph, backward):
                return constant(op.attrs["value"], dtype=value.dtype, name=op.name.split("/")[-1])
        forward = backward.forward_context
        return self.innermost_state(forward).save(value, forward, backward)

    def zeros_in_current_context(self, dtype, shape, forward_tensor) -> Tensor:
        """Zeros of ``dtype`` and ``shape`` built in the current context: a constant when
        ``shape`` is fully known, else shaped like ``forward_tensor()`` (a forward value, of
        which only the shape is saved when it lies in a differentiated loop)."""
        from dataflow.ops.array_ops import fill, zeros

        if shape.is_fully_defined():
            return zeros(shape.as_list(), dtype, name="zeros")
        source = forward_tensor()
        shape_tensor = self.forward_query("Shape", source, _dtypes.int32)
        return fill(shape_tensor, constant(0, dtype=dtype, name="zero"), name="zeros")

    def forward_query(self, kind: str, value: Tensor, out_type) -> Tensor:
        """``kind`` ("Shape", "Size" or "Rank") of ``value`` as an ``out_type`` tensor,
        computed beside ``value`` in the forward graph (memoized): a backward op that needs
        only the shape of a forward value reads this instead, so that only it is saved."""
        key = (kind, value, out_type)
        known = self._shape_queries.get(key)
        if known is None:
            attrs = {"out_type": out_type}
            with building_in(self.graph, _output_context(value.op)):
                known = apply_op(kind, [value], attrs, name=f"{kind.lower()}_to_save").outputs[0]
            self._shape_queries[key] = known
        return known

    def zeros_for_untaken_branch(self, switch: Operation, branch: CondContext, like: Tensor):
        """Zeros for the output of a capturing Switch that feeds the other branch than
        ``branch``, live exactly when that other branch runs in the backward pass; None when
        ``branch`` is not inside a differentiated loop."""
        if self.innermost_state(branch) is None:
            return None
        other = self.mirror(_sibling_branch(branch))
        with building_in(self.graph, other):
            return self.zeros_in_current_context(
                like.dtype, like.shape, lambda: _readable(switch.inputs[0], like)
            )

    def finish(self) -> None:
        for state in self.loops.values():
            state.finish()

    def push_saved_values(self, results: list) -> None:
        """Adds the pushes of the saved values that ``results`` (the call's gradients) depend
        on.  A gradient function builds the gradients of all its op's inputs, and a pop read
        only by those that no result needs (the gradient of a constant, say) stays unpushed: a
        Session never runs it, as no fetch of the results reaches it."""
        seen: set = set()
        stack = [t.op for t in results if t is not None]
        while stack:
            op = stack.pop()
            if op in seen or op.type == "StackPushV2":
                continue
            seen.add(op)
            stack.extend(t.op for t in op._inputs)
            stack.extend(op._control_inputs)
        for pop in [pop for pop in self.unpushed if pop in seen]:  # in the order saved
            state, *saved = self.unpushed.pop(pop)
            state.push(*saved, pop)


def _check_not_second_order(graph, ys: list, reached: set, passes) -> None:
    """Raises (TF1's ``TypeError``) if a gradient from ``ys`` would flow into a backward loop
    that ``xs`` affect: through an op of it that ``xs`` reach (a tensor captured into it, as
    TensorFlow finds at the loop's Exit), or through a stack pop of a forward value that
    ``xs`` reach.

    A backward loop reads the forward values through stack pops, which have no data edge from
    the pushes, so the walk would not see that the gradient depends on ``xs`` through them: it
    would silently return too little.  Only the edges a gradient flows back along count: a
    backward loop that ``ys`` depend on only through ``stop_gradient`` (or another stop), or
    through integer values, is not differentiated, and is no reason to refuse; nor is one that
    ``xs`` do not affect at all (its gradient with respect to them is None, as in TensorFlow).
    Checked only when the graph holds a backward loop.
    """
    backward_loops = [
        c
        for c in graph.get_collection(GraphKeys.WHILE_CONTEXT)
        if isinstance(c, BackwardLoopContext)
    ]
    if not backward_loops:
        return
    reached_loops = set()
    for op in reached:
        context = op._control_flow_context
        while context is not None:
            reached_loops.add(context)
            context = context.outer_context
    if not any(c.forward_context in reached_loops for c in backward_loops):
        return
    seen: set = set()
    stack = [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        backward = _backward_loop_around(op._control_flow_context)
        if backward is not None and backward.forward_context in reached_loops:
            # A stack pop passes no gradient (StackPopV2 is not differentiable): it is
            # checked here, before the walk stops at it.
            saved = backward.saved_values.get(op)
            if (op in reached and passes(op)) or (saved is not None and saved.op in reached):
                raise _second_order_error(
                    f"ys depend on '{op.name}' ({op.type}, created at {op.location}) of the "
                    f"backward loop '{backward.name}', which reads values of while loop "
                    f"'{backward.forward_context.name}' saved by the forward pass, and xs "
                    "affect that loop (the saved values have no gradient)."
                )
        if not passes(op):
            continue
        stack.extend(
            t.op for t in op._inputs if _differentiable(t.dtype) or t.dtype is _dtypes.resource
        )


def _backward_loop_around(context) -> Optional[BackwardLoopContext]:
    while context is not None:
        if isinstance(context, BackwardLoopContext):
            return context
        context = context.outer_context
    return None

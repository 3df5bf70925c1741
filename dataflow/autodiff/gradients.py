"""Reverse-mode autodiff as a graph pass: `gradients` adds the backward ops to the forward graph.

Invariants:

- Every backward op is created in the name scope ``gradients`` (unique per call), under
  ``<forward op name>_grad``; the loop machinery of a loop ``L`` under ``<L>_grad``, including
  the few ops it adds to the forward loop (an iteration counter, the pushes that save values).
  Every op a call adds, whatever the scope's name, is listed in the graph's
  ``GraphKeys.BACKWARD_OPS`` collection (saved with the graph; rendering reads it).
- The backward op of a forward op is built in the *mirror* of the forward op's control-flow
  context.  Outside every loop being differentiated the mirror of a context is the context
  itself: the backward ops of a cond branch are built in that branch (TensorFlow re-enters the
  forward CondContext the same way), so the forward values a gradient reads are switched into
  the branch, ops without data inputs are gated by the branch's pivot, and only the taken
  branch's backward ops run.  The exception is a context that does not lie within the one
  `gradients` is called in (a loop body, say): its mirror is the caller's context, where the
  gradient is used.  Inside a loop being differentiated, the mirror is the backward loop, or a
  backward cond on the same iteration's saved predicate.
- A backward op inside a backward loop reads a forward value of the loop only through a stack
  the forward loop filled at that iteration's index; only the values read by backward ops that
  the results depend on are saved, and of a value whose shape alone is read, only the shape
  (loop invariants are entered into the backward loop, constants are rebuilt).
- A gradient never depends on the order in which kernels ran: ``parallel_iterations``, threads
  and concurrent runs of one Session give identical results.

The pass, as in TensorFlow 1.x:

1. **Between ops.**  ``reached``: the ops reachable from ``xs`` along data edges.  ``between``:
   the reached ops from which some ``ys`` op is reachable along edges that gradients can flow
   back through (not into the inputs of a ``stop_gradient`` op, of an op whose gradient is
   declared `NotDifferentiable`, of an op listed in ``stop_gradients``, or of an Exit of a
   ``while_loop`` built with ``back_prop=False``).  A loop is *differentiated* when one of its
   loop-variable Switches is between (``primitives.loop_gradients.ControlFlowGradState``, which
   also refuses the unsupported cases below before any op is added).  A differentiated loop's
   variables that reach ``ys`` only through such stops are between too, with what leads to
   them: TensorFlow 1.x differentiates every loop variable that reaches ``ys`` at all, so the
   gradient of such a variable's initial value is zeros, not None (module
   ``primitives.loop_gradients``, "Stopped loop variables").
2. **Pending counts.**  ``pending[op]`` is the number of data edges from ``op``'s outputs into
   between ops that pass gradients back.  An op's gradient function runs only once every
   consumer has sent its gradient contribution (pending count zero).  A loop's cycle is broken
   at its Switches: they are not in ``pending``; the edges to the body count in
   ``body_pending`` instead.
3. **Walk.**  Starting from the ``ys`` ops, each ready op aggregates the contributions to each
   of its outputs (``AddN``), calls its OpDef's ``gradient(op, *output_grads)`` and sends the
   returned input gradients to the producers of its inputs.  Outputs without a contribution
   are passed as ``None`` (only multi-output ops can see one).  Through a cond, the gradient
   of a Switch is a Merge, built where the Switch's data input lives, and the gradient of a
   Merge is a Switch on the cond's predicate, built where the Merge lives.
4. **Result.**  The aggregated gradient of each ``x``; ``None`` when no path leads to it.

While loops (``primitives.loop_gradients`` has the details).  The walk reaches a loop through
its Exits.  Once every Exit of the loop has its gradient, the loop is *activated*: a counter is
added to the forward loop (its value is the index of every push; its final value, the number of
iterations, leaves the loop only after every push has run), and a backward loop is built that
counts that number down.  Each floating loop variable whose Switch is between becomes a
backward loop variable: the Exit's gradient (zeros when the result is unused) enters the
backward loop (Exit gradient: Enter) as a backward Merge (Switch gradient, first visit); the
forward Merge's gradient switches it on the backward condition, out of the backward loop as the
gradient of the initial value (Enter gradient: Exit) or into the body as the gradient of the
body's result (NextIteration gradient: identity).  The body's ops are then walked like any
others; when the body has sent the gradient of a loop variable back to its Switch (second
visit), it closes the backward Merge's back edge (NextIteration), and a variable that receives
nothing there gets zeros.  A loop invariant (a constant Enter) sums its gradient over the
backward iterations in an accumulator loop variable that starts from zeros; the sum leaves the
backward loop.  Nested loops, conds inside loops and loops inside conds compose: an inner
loop's iteration count and stack handles are forward values of the outer loop, saved per
outer iteration like any other.  A gradient taken inside a loop body is an ordinary gradient
there, computed in every iteration: a captured tensor's Enter passes the gradient through, and
the backward ops of the ops outside the body are built in the body, as in TensorFlow.

Not supported, and refused with `WhileLoopGradientError` (raised before any op is added):
second-order gradients through a while loop, that is a gradient that would flow into a backward
loop (the saved values have no gradient, as in TensorFlow 1.x; a loop's gradient behind
``stop_gradient`` or in ``stop_gradients`` is not differentiated and is fine), gradients
through a loop frame written by hand with the raw primitives (there is no record to build the
backward loop from), ``ys`` inside a loop whose loop variables the gradient would flow through,
an ``x`` inside a loop being differentiated, and a gradient taken inside a loop body through a
loop that runs outside that body (its saved values are read once).
"""

from __future__ import annotations

import enum
import functools
from collections import deque
from collections.abc import Callable, Sequence
from typing import Optional, Union

from executor.program import NodeKind

from ..framework import dtypes as _dtypes
from ..framework.gradient_registry import (
    InitialLoopValueGradientError,
    NotDifferentiable,
    RegisterGradient,
    SecondOrderLoopGradientError,
    WhileLoopGradientError,
    gradient_function,
    is_not_differentiable,
    zeros_like_output,
)
from ..framework.gradient_registry import dense_gradient as _dense
from ..framework.graph import (
    Graph,
    Operation,
    Tensor,
    _user_location,
    get_default_graph,
    name_scope,
)
from ..framework.graph_keys import GraphKeys
from ..framework.indexed_slices import IndexedSlices
from ..ops.array_ops import concat, reshape, shape, stack, zeros_like
from ..ops.array_ops import size as _size
from ..ops.extra_array_ops import get_static_value

__all__ = [
    "AggregationMethod",
    "NotDifferentiable",
    "RegisterGradient",
    "UnconnectedGradients",
    "InitialLoopValueGradientError",
    "SecondOrderLoopGradientError",
    "WhileLoopGradientError",
    "gradients",
    "hessians",
]


class UnconnectedGradients(enum.Enum):
    """What `gradients` gives for an ``x`` that no path connects to ``ys``: ``None`` (NONE) or
    zeros of the shape and dtype of ``x`` (ZERO)."""

    NONE = "none"
    ZERO = "zero"


class AggregationMethod:
    """How `gradients` sums the contributions to one tensor (``tf.AggregationMethod``).  Every
    method gives the same sums here (an ``AddN``); the names are accepted so that TensorFlow
    code passing them runs, and any other value is refused."""

    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


# -- helpers ---------------------------------------------------------------------------------------
def _as_list(values) -> list:
    if values is None:
        return []
    if isinstance(values, (list, tuple)):
        return list(values)
    return [values]


def _as_tensor(value, graph: Optional[Graph], what: str) -> Tensor:
    """``value`` as a tensor of the graph being built.  A value computed eagerly (a variable's
    eager handle, or an eager tensor a traced function closes over) is the tensor that stands
    for it in the function's graph, its capture, as any op of that graph would take it."""
    from ..ops.variables import Variable

    if isinstance(value, Variable):
        value = value.handle
    if not isinstance(value, Tensor):
        raise TypeError(f"{what} must be Tensors or Variables, got {value!r}")
    graph_being_built = get_default_graph()
    if value._is_eager and graph_being_built.captures_outer_tensors:
        return graph_being_built._capture_eager_tensor(value, "gradients")
    return value


def _is_backpropagatable(t: Tensor) -> bool:
    return t.dtype.is_floating or t.dtype.is_complex or t.dtype is _dtypes.resource


def _passes_gradient(op: Operation, stop_ops: set) -> bool:
    if op in stop_ops or is_not_differentiable(op):
        return False
    # The results of a `while_loop(..., back_prop=False)` pass no gradient back (TensorFlow 1.x).
    return not (
        op.op_def.kind == NodeKind.EXIT
        and getattr(op._control_flow_context, "back_prop", True) is False
    )


def _between_ops(ys: list, xs: list, stop_ops: set) -> tuple[set, set]:
    """``(between, reached)``: ``reached`` holds the ops reached from ``xs`` along data edges,
    ``between`` those of them from which a ``ys`` op is reached along gradient-passing edges,
    and the stopped loop variables of the loops that makes differentiated (module docstring)."""
    from primitives.loop_gradients import stopped_loop_variables

    graph_consumers = ys[0].graph._consumers
    reached: set = set()
    queue = deque(x.op for x in xs)
    while queue:
        op = queue.popleft()
        if op in reached:
            continue
        reached.add(op)
        for out in op._outputs:
            for consumer in graph_consumers.get(out, ()):
                if consumer not in reached:
                    queue.append(consumer)

    def passes(op: Operation) -> bool:
        return _passes_gradient(op, stop_ops)

    y_ops = [y.op for y in ys]
    between = _reaching(y_ops, reached, passes)

    @functools.cache
    def connected() -> set:
        """The reached ops from which ys are reached along any data edges (TensorFlow's
        between ops)."""
        return _reaching(y_ops, reached, lambda op: True)

    @functools.cache
    def passed_back() -> set:
        """Every op that a gradient from ys reaches along gradient-passing edges."""
        return _reaching(y_ops, None, passes)

    while True:
        exits, switches = stopped_loop_variables(reached, between, connected, passed_back, passes)
        if not exits and not switches:
            return between, reached
        between.update(exits)
        between |= _reaching(switches, reached, passes)


def _reaching(targets: list, within: Optional[set], follow: Callable) -> set:
    """The ops (of ``within``, unless None) from which an op of ``targets`` is reachable,
    walking back along the data inputs of the ops for which ``follow(op)`` is true."""
    found: set = set()
    queue = deque(targets)
    while queue:
        op = queue.popleft()
        if op in found or (within is not None and op not in within):
            continue
        found.add(op)
        if follow(op):
            queue.extend(t.op for t in op._inputs)
    return found


def _innermost(contexts: list):
    """The context of ``contexts`` that lies within all the others (the first when none does)."""
    from primitives.contexts import _is_within

    best = contexts[0]
    for context in contexts[1:]:
        if _is_within(context, best):
            best = context
    return best


def _check_grad_y_dtype(y: Tensor, grad_y: Tensor) -> None:
    """TF1's rule for a ``grad_ys`` entry (``gradients_util._DefaultGradYs``): a real or integer
    ``y`` takes a real or integer gradient, a complex ``y`` a complex one; a reference is read
    as its value.  ``TypeError`` otherwise, in TensorFlow's words."""
    y_dtype, g_dtype = y.dtype.base_dtype, grad_y.dtype.base_dtype
    if y_dtype.is_floating or y_dtype.is_integer:
        if not (g_dtype.is_floating or g_dtype.is_integer):
            raise TypeError(
                f"Gradient type {g_dtype.name} generated for real or integer-valued tensor "
                f"{y} with type {y_dtype.name} must be real or integer"
            )
    elif y_dtype.is_complex and not g_dtype.is_complex:
        raise TypeError(
            f"Gradient type {g_dtype.name} generated for complex-valued tensor {y} with type "
            f"{y_dtype.name} must be real"
        )


# -- the pass --------------------------------------------------------------------------------------
def gradients(
    ys,
    xs,
    grad_ys=None,
    name: str = "gradients",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method=None,
    stop_gradients=None,
    unconnected_gradients=UnconnectedGradients.NONE,
) -> list[Optional[Tensor]]:
    """The symbolic gradients of ``sum(ys)`` with respect to each of ``xs`` (``tf.gradients``).

    ``ys`` and ``xs`` are Tensors (or lists of them); ``xs`` may also hold Variables, whose
    gradient is the sum over all reads of the variable.  ``grad_ys`` (one per ``y``, None
    entries allowed) are the incoming gradients; by default ones of the shape of ``y``.  An
    ``x`` that no path connects to ``ys`` gets ``None``, or zeros like ``x`` when
    ``unconnected_gradients`` is ``UnconnectedGradients.ZERO`` (or ``"zero"``).  No gradient
    flows through ``stop_gradient`` ops, nor through the ops of the tensors in
    ``stop_gradients`` (their own gradients are still computed when they are in ``xs``), nor
    out of a ``while_loop`` built with ``back_prop=False``.

    Gradients flow through `cond` and `while_loop` (module docstring).  With
    ``colocate_gradients_with_ops`` the ops of each op's gradient are colocated with it (they
    take its device and ``loc:@`` group, see `Graph.colocate_with`).  The gating and
    aggregation arguments are accepted for compatibility and have no effect, but an
    ``aggregation_method`` that is not an `AggregationMethod` is a ``ValueError``, as is a
    ``grad_ys`` entry whose static shape is incompatible with its ``y`` (TensorFlow's gradient
    functions refuse it when they meet it; summing it into ``x``'s shape would hide the bug).
    Raises `WhileLoopGradientError`, before adding any op, for the loop cases that are not
    supported (second-order gradients through a loop, hand-written loop frames, ``ys`` or ``xs``
    inside a loop the gradient flows through).
    """
    from primitives.loop_gradients import ControlFlowGradState

    try:  # the enum member, or its value ("none", "zero")
        unconnected = UnconnectedGradients(
            getattr(unconnected_gradients, "value", unconnected_gradients)
        )
    except ValueError:
        raise ValueError(
            f"unconnected_gradients must be 'none' or 'zero', got {unconnected_gradients!r}"
        ) from None
    valid_methods = (
        AggregationMethod.ADD_N,
        AggregationMethod.EXPERIMENTAL_TREE,
        AggregationMethod.EXPERIMENTAL_ACCUMULATE_N,
    )
    if aggregation_method is not None and (
        isinstance(aggregation_method, bool) or aggregation_method not in valid_methods
    ):
        raise ValueError(
            f"Invalid aggregation_method specified {aggregation_method!r}. Accepted values are "
            f"{list(valid_methods)} (df.AggregationMethod)."
        )
    if get_default_graph()._eager:
        raise RuntimeError(
            "df.gradients is not supported when eager execution is enabled; use "
            f"df.GradientTape instead ({_user_location()})."
        )
    ys_list = [_as_tensor(y, None, "ys") for y in _as_list(ys)]
    xs_list = [_as_tensor(x, None, "xs") for x in _as_list(xs)]
    stops = [_as_tensor(s, None, "stop_gradients") for s in _as_list(stop_gradients)]
    if not ys_list:
        raise ValueError("gradients needs at least one y")
    grad_ys_list = _as_list(grad_ys) if grad_ys is not None else [None] * len(ys_list)
    if len(grad_ys_list) != len(ys_list):
        raise ValueError(
            f"Passed {len(grad_ys_list)} grad_ys for {len(ys_list)} ys; give one per y (or None)"
        )
    graph = ys_list[0].graph
    for what, values in (("ys", ys_list), ("xs", xs_list), ("stop_gradients", stops)):
        for t in values:
            if t.graph is not graph:
                raise ValueError(
                    f"gradients: {what} tensor '{t.name}' is from a different graph than ys "
                    f"tensor '{ys_list[0].name}'; all ys, xs and stop_gradients must be "
                    "elements of one graph."
                )
    converted_grad_ys = []
    for y, g in zip(ys_list, grad_ys_list):
        if g is not None and not isinstance(g, Tensor):
            with graph.as_default():
                from ..framework.tensor_conversion import convert_to_tensor

                g = convert_to_tensor(g, dtype=y.dtype)
        if g is not None and g.graph is not graph:
            raise ValueError(f"grad_ys tensor '{g.name}' is from a different graph than ys")
        if g is not None and not g.shape.is_compatible_with(y.shape):
            raise ValueError(
                f"grad_ys tensor '{g.name}' has shape {g.shape}, incompatible with the shape "
                f"{y.shape} of its y '{y.name}'."
            )
        if g is not None:
            _check_grad_y_dtype(y, g)
        converted_grad_ys.append(g)
    if not xs_list:
        return []

    stop_ops = {t.op for t in stops}
    between, reached = _between_ops(ys_list, xs_list, stop_ops)
    control_flow = ControlFlowGradState(
        graph, between, lambda op: _passes_gradient(op, stop_ops), ys_list, reached
    )
    for y in ys_list:
        if y.op in between:
            control_flow.check_inside(y, "ys")
    for x in xs_list:
        if x.op in between:
            control_flow.check_inside(x, "xs")

    walk = _GradientWalk(graph, xs_list, between, stop_ops, control_flow)
    walk.colocate = bool(colocate_gradients_with_ops)
    first_new_op = len(graph._ops)
    try:
        with graph.as_default(), graph.name_scope(name):
            walk.seed(ys_list, converted_grad_ys)
            walk.run()
            results = [walk.result(x) for x in xs_list]
            control_flow.push_saved_values(results)
            if unconnected is UnconnectedGradients.ZERO:
                from ..ops.array_ops import zeros_like

                results = [zeros_like(x) if g is None else g for x, g in zip(xs_list, results)]
            return results
    finally:
        graph.get_collection_ref(GraphKeys.BACKWARD_OPS).extend(list(graph._ops)[first_new_op:])


class _GradientWalk:
    """The walk of one `gradients` call (steps 2-4 of the module docstring).

    ``grads[t]``: the contributions received so far for tensor ``t``.  ``pending[op]``: data
    edges from ``op``'s outputs into between ops that pass gradients and have not sent theirs,
    except the edges out of a differentiated loop's Switches, which ``body_pending`` counts
    (output 1 only; see ``primitives.loop_gradients``).
    """

    colocate = False  # whether each op's gradient ops are colocated with it

    def __init__(self, graph: Graph, xs: list, between: set, stop_ops: set, control_flow):
        self.graph = graph
        self.xs = xs
        self.between = between
        self.stop_ops = stop_ops
        self.control_flow = control_flow
        self.grads: dict[Tensor, list] = {}
        self.pending: dict[Operation, int] = dict.fromkeys(between, 0)
        self.body_pending: dict[Operation, int] = {}
        for state in control_flow.loops.values():
            for switch in state.switches:
                self.body_pending[switch] = 0
                del self.pending[switch]
        for op in between:
            if not _passes_gradient(op, stop_ops):
                continue
            for t in op._inputs:
                producer = t.op
                if producer in self.body_pending:
                    if t.value_index == 1:
                        self.body_pending[producer] += 1
                elif producer in self.pending:
                    self.pending[producer] += 1
        self.ready: deque = deque()
        self.done: set = set()
        self.scopes: dict[Operation, str] = {}

    def grad_scope(self, op: Operation):
        """The name scope ``<op name>_grad`` of ``op``'s backward ops (the same one each time)."""
        scope = self.scopes.get(op)
        if scope is None:
            scope = self.scopes[op] = self.graph.unique_name(op.name + "_grad") + "/"
        return self.graph.name_scope(scope)

    # -- steps ------------------------------------------------------------------------------------
    def seed(self, ys: list, grad_ys: list) -> None:
        from primitives.contexts import _output_context, building_in

        from ..ops.array_ops import ones_like

        for y, g in zip(ys, grad_ys):
            context = self.control_flow.mirror(_output_context(y.op))
            if g is None:
                with building_in(self.graph, context, True):
                    g = ones_like(y, name="grad_ys")
            elif g.dtype.base_dtype is not y.dtype.base_dtype or g.dtype.is_ref_dtype:
                # TF1 takes a grad_y of another real dtype as it is; here every gradient has
                # its tensor's dtype, so the grad_y is read and cast to y's.
                from ..ops.math_ops import cast

                with building_in(self.graph, context, True):
                    g = cast(g, y.dtype.base_dtype, name="grad_ys")
            self.grads.setdefault(y, []).append(g)
        self.ready.extend(op for op in {y.op for y in ys} if self.pending.get(op) == 0)

    def run(self) -> None:
        from primitives.contexts import _output_context

        while self.ready:
            op = self.ready.popleft()
            if op in self.done:
                continue
            self.done.add(op)
            if not _passes_gradient(op, self.stop_ops):
                continue
            loop = self.control_flow.loop_of_exit(op)
            if loop is not None:
                with self.grad_scope(op):
                    grad = self.aggregate(op.outputs[0], _output_context(op))
                if loop.exit_reached(op, grad):
                    self.activate(loop)
                continue
            self.differentiate(op)
        self.control_flow.finish()

    def differentiate(self, op: Operation) -> None:
        """Aggregates ``op``'s output gradients, calls its gradient, passes the results on."""
        from primitives.contexts import _output_context

        with self.grad_scope(op):
            context = _output_context(op)
            out_grads = [self.aggregate(t, context) for t in op._outputs]
            if any(g is not None for g in out_grads) and any(
                self.needs_gradient(t) for t in op._inputs
            ):
                self.send(op, self.call_gradient(op, out_grads))
        self.release_inputs(op)

    def activate(self, loop) -> None:
        """All the gradients from beyond a loop's Exits are in: build its backward loop."""
        from primitives.contexts import building_in

        forward = loop.forward
        if any(g is not None for g in loop.exit_grads.values()):
            loop.activate()
            outer = self.control_flow.mirror(forward.outer_context)
            for switch in loop.switches:
                if (
                    not (switch.outputs[0].dtype.is_floating or switch.outputs[0].dtype.is_complex)
                    or switch.inputs[0].op not in self.between
                ):
                    continue
                exit_op = forward.exit_of(switch)
                if exit_op is None:
                    raise LookupError(
                        f"Cannot differentiate through loop variable '{switch.inputs[0].name}' "
                        f"of while loop '{forward.name}' (created at {switch.location}): this "
                        "graph is a pruned copy (optimized or extracted) that dropped the "
                        "variable's result, which the backward loop starts from. Take the "
                        "gradients on the graph the loop was built in."
                    )
                grad = loop.exit_grads.get(exit_op)
                with self.grad_scope(exit_op):
                    if grad is None:
                        with building_in(self.graph, outer):
                            grad = zeros_like_output(exit_op.outputs[0])
                    (entered,) = self.call_gradient(exit_op, [grad])
                with self.grad_scope(switch):
                    merged, _ = self.call_gradient(switch, [entered, None])
                self.grads.setdefault(switch.inputs[0], []).append(merged)
        for switch in loop.switches:
            self.release_inputs(switch)

    def second_visit(self, switch: Operation) -> None:
        """Every body consumer of a loop Switch has sent its gradient: close the back edge."""
        loop = self.control_flow.loop_of_switch(switch)
        if switch not in loop.backward_merges:
            return
        with self.grad_scope(switch):
            grad = self.aggregate(switch.outputs[1], switch._control_flow_context)
            if grad is not None:
                self.call_gradient(switch, [None, grad])

    def release_inputs(self, op: Operation) -> None:
        for t in op._inputs:
            producer = t.op
            count = self.body_pending.get(producer)
            if count is not None:
                if t.value_index == 1:
                    self.body_pending[producer] = count - 1
                    if count == 1:
                        self.second_visit(producer)
                continue
            count = self.pending.get(producer)
            if count is not None:
                self.pending[producer] = count - 1
                if count == 1:
                    self.ready.append(producer)

    def result(self, x: Tensor) -> Optional[Tensor]:
        from primitives.contexts import _output_context

        contributions = [g for g in self.grads.get(x, []) if g is not None]
        if not contributions:
            return None
        context = _innermost([_output_context(g.op) for g in contributions])
        return _aggregate_in(self.graph, contributions, context, _x_grad_name(x))

    # -- helpers ----------------------------------------------------------------------------------
    def needs_gradient(self, t: Tensor) -> bool:
        return t.op in self.between or t in self.xs

    def aggregate(self, t: Tensor, forward_context) -> Optional[Tensor]:
        """The sum of the contributions to ``t``, built in the mirror of ``forward_context``
        (the context ``t`` lives in)."""
        contributions = [g for g in self.grads.get(t, []) if g is not None]
        if len(contributions) > 1:
            context = self.control_flow.mirror(forward_context)
            return _aggregate_in(self.graph, contributions, context, "AddN")
        return contributions[0] if contributions else None

    def send(self, op: Operation, in_grads: list) -> None:
        for t, g in zip(op._inputs, in_grads):
            if g is not None and _is_backpropagatable(t):
                self.grads.setdefault(t, []).append(g)

    def call_gradient(self, op: Operation, out_grads: list) -> list:
        from primitives.contexts import _output_context

        if op.op_def.kind == NodeKind.SWITCH:
            # Built where the Switch's data input lives (outside the branch it captures into).
            forward = _output_context(op.inputs[0].op)
        else:
            forward = op._control_flow_context
        context = self.control_flow.mirror(forward)
        if not self.colocate:
            return _call_gradient(self.graph, op, out_grads, context)
        with self.graph.colocate_with(op):
            return _call_gradient(self.graph, op, out_grads, context)


def _aggregate_in(graph: Graph, grads: list, context, name: str):
    """The sum of ``grads``: an ``AddN``, or when all are IndexedSlices, IndexedSlices holding
    all their rows (a mix is summed dense, each IndexedSlices converted)."""
    from primitives.contexts import building_in

    from ..ops.array_ops import concat
    from ..ops.math_ops import add_n

    if len(grads) == 1:
        return grads[0]
    with building_in(graph, context, True):
        if all(isinstance(g, IndexedSlices) for g in grads):
            with graph.name_scope(name):
                return IndexedSlices(
                    concat([g.values for g in grads], 0, name="values"),
                    concat([g.indices for g in grads], 0, name="indices"),
                    grads[0].dense_shape,
                )
        return add_n(grads, name=name)


def _x_grad_name(x: Tensor) -> str:
    return x.op.name.replace("/", "_") + "_grad_sum"


def _call_gradient(graph: Graph, op: Operation, out_grads: list, context) -> list:
    from primitives.contexts import building_in

    grad_fn = gradient_function(op)
    if grad_fn is None:
        raise LookupError(
            f"No gradient defined for operation '{op.name}' (op type: {op.type}), created at "
            f"{op.location}. Register one with @df.RegisterGradient('{op.type}'), or declare it "
            f"with df.NotDifferentiable('{op.type}')."
        )
    with building_in(graph, context, True):
        if not op.op_def.extra.get("passes_sparse_gradients"):
            out_grads = [_dense(g) for g in out_grads]
        result = grad_fn(op, *out_grads)
    if isinstance(result, (Tensor, IndexedSlices)) or result is None:
        result = [result]
    result = list(result)
    if len(result) != len(op.inputs):
        raise ValueError(
            f"The gradient function of op type {op.type} returned {len(result)} gradients for "
            f"op '{op.name}', which has {len(op.inputs)} inputs."
        )
    for t, g in zip(op.inputs, result):
        if (
            g is not None
            and t.dtype is not _dtypes.resource
            and g.dtype.base_dtype is not t.dtype.base_dtype
        ):
            raise TypeError(
                f"The gradient function of op type {op.type} returned a {g.dtype.name} gradient "
                f"for input '{t.name}' of dtype {t.dtype.name} (op '{op.name}')."
            )
    return result


GradientFunction = Callable[..., Union[Tensor, Sequence[Optional[Tensor]], None]]


# -- second derivatives ----------------------------------------------------------------------------
def hessians(
    ys,
    xs,
    name: str = "hessians",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
    aggregation_method=None,
) -> list:
    """For each of ``xs``, the second derivatives of ``sum(ys)``: a tensor of shape
    ``x.shape + x.shape``, built as TensorFlow builds it (the gradient, flattened, and the
    gradient of each of its elements)."""
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    kwargs = {
        "colocate_gradients_with_ops": colocate_gradients_with_ops,
        "gate_gradients": gate_gradients,
        "aggregation_method": aggregation_method,
    }
    results = []
    with name_scope(name):
        first = gradients(ys, xs, **kwargs)
        for gradient, x in zip(first, xs):
            if gradient is None:
                raise ValueError(f"hessians: {x.name} does not reach ys (its gradient is None)")
            flat = reshape(gradient, [-1])
            count = get_static_value(_size(x))
            if count is None:
                count = x.shape.num_elements()
            if count is None:
                raise ValueError(
                    f"hessians needs x of a known number of elements, got {x.name} of shape "
                    f"{x.shape}"
                )
            rows = []
            for j in range(int(count)):
                row = gradients(flat[j], x, **kwargs)[0]
                rows.append(row if row is not None else _zeros_of(x))
            x_shape = shape(x)
            stacked = stack(rows) if rows else reshape(flat, [0])
            results.append(reshape(stacked, concat([x_shape, x_shape], 0)))
    return results


def _zeros_of(x):
    return zeros_like(x)

"""Reverse-mode autodiff as a graph pass: `gradients` adds the backward ops to the forward graph.

The pass, as in TensorFlow 1.x:

1. **Between ops.**  ``reached``: the ops reachable from ``xs`` along data edges.  ``between``:
   the reached ops from which some ``ys`` op is reachable along edges that gradients can flow
   back through (not into the inputs of a ``stop_gradient`` op, of an op whose gradient is
   declared `NotDifferentiable`, or of an op listed in ``stop_gradients``).
2. **Pending counts.**  ``pending[op]`` is the number of data edges from ``op``'s outputs into
   between ops that pass gradients back.  An op's gradient function runs only once every
   consumer has sent its gradient contribution (pending count zero).
3. **Walk.**  Starting from the ``ys`` ops, each ready op aggregates the contributions to each
   of its outputs (``AddN``), calls its OpDef's ``gradient(op, *output_grads)`` and sends the
   returned input gradients to the producers of its inputs.  Outputs without a contribution
   are passed as ``None`` (only multi-output ops can see one).
4. **Result.**  The aggregated gradient of each ``x``; ``None`` when no path leads to it.

Every backward op is created inside the name scope ``gradients`` (unique per call), under
``<forward op name>_grad``.

Control flow.  The backward op of a forward op is built in the forward op's control-flow context
(TensorFlow re-enters the forward op's CondContext the same way), so the forward values a
gradient reads are switched into the branch and ops without data inputs are gated by the
branch's pivot.  Exceptions: a Switch's gradient (a Merge) is built where the Switch's data
input lives, outside the branch; a Merge's gradient (a Switch on the cond's predicate) is built
where the Merge lives.  Only the taken branch's backward ops run.

While loops.  A gradient through a ``while_loop`` needs a backward loop fed by per-iteration
stacks; that is not built yet.  When an op of a loop (any op whose context chain holds a
`WhileContext`, or a hand-written Enter/Exit/NextIteration/LoopCond) lies between ``ys`` and
``xs``, `gradients` raises `WhileLoopGradientError` before adding any op, rather than returning
a wrong answer.  The walk is organised so that the loop case can plug in at the same places as
in TensorFlow (entering the gradient loop's context around aggregation and the gradient call).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Optional, Union

from . import dtypes as _dtypes
from .graph import Graph, Operation, Tensor
from .op_registry import apply_op, get_op_def

__all__ = ["NotDifferentiable", "RegisterGradient", "WhileLoopGradientError", "gradients"]


class WhileLoopGradientError(LookupError, NotImplementedError):
    """A gradient was asked through a ``while_loop``, which is not supported yet."""


def _not_differentiable(op: Operation, *grads):
    return [None] * len(op.inputs)


class RegisterGradient:
    """Decorator: ``@RegisterGradient("OpType")`` makes the function ``op``'s gradient.

    The function is called as ``fn(op, *output_grads)`` and returns one gradient (a Tensor or
    None) per input of ``op`` (a single Tensor is accepted for a one-input op).  An output
    that received no gradient is passed as None.
    """

    def __init__(self, op_type: str):
        if not isinstance(op_type, str):
            raise TypeError(f"op_type must be a string, got {op_type!r}")
        self._op_type = op_type

    def __call__(self, fn: Callable) -> Callable:
        op_def = get_op_def(self._op_type)
        if op_def.gradient is not None:
            raise KeyError(f"A gradient for op type {self._op_type!r} is already registered")
        op_def.gradient = fn
        return fn


def NotDifferentiable(op_type: str) -> None:  # noqa: N802 - TensorFlow's name
    """Declares that no gradient flows through ops of type ``op_type`` (comparisons, shape
    queries, ...): their inputs get no gradient from them, and it is not an error."""
    op_def = get_op_def(op_type)
    if op_def.gradient is not None and op_def.gradient is not _not_differentiable:
        raise KeyError(f"A gradient for op type {op_type!r} is already registered")
    op_def.gradient = _not_differentiable


def is_not_differentiable(op: Operation) -> bool:
    return op.op_def.gradient is _not_differentiable


# -- helpers ---------------------------------------------------------------------------------------
def _as_list(values) -> list:
    if values is None:
        return []
    if isinstance(values, (list, tuple)):
        return list(values)
    return [values]


def _as_tensor(value, graph: Optional[Graph], what: str) -> Tensor:
    from .variables import Variable

    if isinstance(value, Variable):
        return value.handle
    if not isinstance(value, Tensor):
        raise TypeError(f"{what} must be Tensors or Variables, got {value!r}")
    return value


def _while_context_of(op: Operation):
    from primitives.contexts import WhileContext

    context = op._control_flow_context
    while context is not None:
        if isinstance(context, WhileContext):
            return context
        context = context.outer_context
    return None


_LOOP_OP_TYPES = frozenset({"Enter", "Exit", "NextIteration", "LoopCond"})


def _check_no_loop(op: Operation) -> None:
    loop = _while_context_of(op)
    if loop is None and op.type not in _LOOP_OP_TYPES:
        return
    where = f"while loop '{loop.name}'" if loop is not None else "a hand-written loop frame"
    raise WhileLoopGradientError(
        f"Gradients through while_loop are not supported yet: op '{op.name}' ({op.type}, "
        f"created at {op.location}) of {where} lies on a path from ys back to xs. Compute "
        "the loop outside the differentiated path, wrap its result in df.stop_gradient, or "
        "unroll the loop in Python."
    )


def _is_backpropagatable(t: Tensor) -> bool:
    return t.dtype.is_floating or t.dtype is _dtypes.resource


def _passes_gradient(op: Operation, stop_ops: set) -> bool:
    return op not in stop_ops and not is_not_differentiable(op)


def _between_ops(ys: list, xs: list, stop_ops: set) -> set:
    """Ops reached from ``xs`` from which a ``ys`` op is reached along gradient-passing edges."""
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
    between: set = set()
    queue = deque(y.op for y in ys)
    while queue:
        op = queue.popleft()
        if op in between or op not in reached:
            continue
        between.add(op)
        if _passes_gradient(op, stop_ops):
            for t in op._inputs:
                queue.append(t.op)
    return between


def _aggregate(grads: list, name: str) -> Optional[Tensor]:
    from .ops.math_ops import add_n

    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    return add_n(grads, name=name)


def _grad_building_context(op: Operation):
    """The control-flow context the gradient ops of ``op`` are built in (see module docstring)."""
    if op.type == "Switch":
        from primitives.contexts import _output_context

        return _output_context(op.inputs[0].op)
    return op._control_flow_context


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
) -> list[Optional[Tensor]]:
    """The symbolic gradients of ``sum(ys)`` with respect to each of ``xs`` (``tf.gradients``).

    ``ys`` and ``xs`` are Tensors (or lists of them); ``xs`` may also hold Variables, whose
    gradient is the sum over all reads of the variable.  ``grad_ys`` (one per ``y``, None
    entries allowed) are the incoming gradients; by default ones of the shape of ``y``.  An
    ``x`` that no path connects to ``ys`` gets ``None``.  No gradient flows through
    ``stop_gradient`` ops, nor through the ops of the tensors in ``stop_gradients`` (their own
    gradients are still computed when they are in ``xs``).

    The colocation, gating and aggregation arguments are accepted for compatibility and have no
    effect.  Raises `WhileLoopGradientError` when the gradient would flow through a
    ``while_loop``.
    """
    from primitives.contexts import building_in

    from .ops.array_ops import ones_like

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
                from .graph import convert_to_tensor

                g = convert_to_tensor(g, dtype=y.dtype)
        if g is not None and g.graph is not graph:
            raise ValueError(f"grad_ys tensor '{g.name}' is from a different graph than ys")
        converted_grad_ys.append(g)
    if not xs_list:
        return []

    stop_ops = {t.op for t in stops}
    between = _between_ops(ys_list, xs_list, stop_ops)
    for op in between:
        _check_no_loop(op)

    # pending[op]: data edges from op's outputs into between ops that pass gradients back.
    pending: dict = dict.fromkeys(between, 0)
    for op in between:
        if _passes_gradient(op, stop_ops):
            for t in op._inputs:
                if t.op in pending:
                    pending[t.op] += 1

    grads: dict[Tensor, list] = {}
    with graph.as_default(), graph.name_scope(name):
        for y, g in zip(ys_list, converted_grad_ys):
            if g is None:
                with building_in(graph, y.op._control_flow_context, True):
                    g = ones_like(y, name="grad_ys")
            grads.setdefault(y, []).append(g)

        ready = deque(op for op in {y.op for y in ys_list} if pending.get(op) == 0)
        done: set = set()
        while ready:
            op = ready.popleft()
            if op in done:
                continue
            done.add(op)
            if not _passes_gradient(op, stop_ops):
                continue
            with graph.name_scope(op.name + "_grad"):
                with building_in(graph, op._control_flow_context, True):
                    out_grads = [_aggregate(grads.get(t, []), name="AddN") for t in op._outputs]
                if any(_needs_input_grad(t, xs_list, between) for t in op._inputs) and any(
                    g is not None for g in out_grads
                ):
                    in_grads = _call_gradient(graph, op, out_grads)
                    for t, g in zip(op._inputs, in_grads):
                        if g is not None and _is_backpropagatable(t):
                            grads.setdefault(t, []).append(g)
            for t in op._inputs:
                if t.op in pending:
                    pending[t.op] -= 1
                    if pending[t.op] == 0:
                        ready.append(t.op)

        results = []
        for x in xs_list:
            with building_in(graph, x.op._control_flow_context, True):
                results.append(_aggregate(grads.get(x, []), name=_x_grad_name(x)))
    return results


def _x_grad_name(x: Tensor) -> str:
    return x.op.name.replace("/", "_") + "_grad_sum"


def _needs_input_grad(t: Tensor, xs: list, between: set) -> bool:
    return t.op in between or t in xs


def _call_gradient(graph: Graph, op: Operation, out_grads: list) -> list:
    from primitives.contexts import building_in

    grad_fn = op.op_def.gradient
    if grad_fn is None:
        raise LookupError(
            f"No gradient defined for operation '{op.name}' (op type: {op.type}), created at "
            f"{op.location}. Register one with @df.RegisterGradient('{op.type}'), or declare it "
            f"with df.NotDifferentiable('{op.type}')."
        )
    with building_in(graph, _grad_building_context(op), True):
        result = grad_fn(op, *out_grads)
    if isinstance(result, Tensor) or result is None:
        result = [result]
    result = list(result)
    if len(result) != len(op.inputs):
        raise ValueError(
            f"The gradient function of op type {op.type} returned {len(result)} gradients for "
            f"op '{op.name}', which has {len(op.inputs)} inputs."
        )
    for t, g in zip(op.inputs, result):
        if g is not None and t.dtype is not _dtypes.resource and g.dtype is not t.dtype:
            raise TypeError(
                f"The gradient function of op type {op.type} returned a {g.dtype.name} gradient "
                f"for input '{t.name}' of dtype {t.dtype.name} (op '{op.name}')."
            )
    return result


# -- helpers for gradient functions ----------------------------------------------------------------
def zeros_like_output(t: Tensor) -> Tensor:
    """Zeros shaped like ``t`` computed from ``t`` itself, so they are live exactly when ``t``
    is (a constant would be live on an untaken branch too)."""
    return apply_op("ZerosLike", [t], name="zeros_like").outputs[0]


GradientFunction = Callable[..., Union[Tensor, Sequence[Optional[Tensor]], None]]

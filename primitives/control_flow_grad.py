"""The gradients of the control-flow primitives (TensorFlow's `control_flow_grad.py`).

Through a cond, the gradient of a Switch is a Merge and the gradient of a Merge is a Switch
on the cond's predicate.  Through a while loop, the gradients of Exit, Enter, Merge, Switch
and NextIteration build the backward loop, with the state `loop_gradients` keeps (its
docstring describes the shapes).  This module imports the primitives and the backward-loop
machinery; neither imports it."""

from __future__ import annotations

from dataflow.framework import dtypes as _dtypes

# -- gradients -------------------------------------------------------------------------------------
# Through a cond, the gradient of a Switch is a Merge and the gradient of a Merge is a Switch on
# the same predicate, so only the taken branch's backward ops run (see dataflow.autodiff.gradients).
# Through a while_loop, the gradients of the loop's primitives build the backward loop; the
# state they share lives in primitives.loop_gradients, whose docstring describes the shapes.
from dataflow.framework.gradient_registry import (  # noqa: E402
    NotDifferentiable,
    RegisterGradient,
    WhileLoopGradientError,
    zeros_like_output,
)
from dataflow.framework.graph import Operation, Tensor
from dataflow.framework.indexed_slices import IndexedSlices
from dataflow.framework.op_registry import apply_op
from dataflow.framework.tensor_conversion import convert_to_tensor

from .loop_gradients import BackwardLoopContext, backward_context
from .raw_ops import merge, switch


def _as_dense(grad):
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad


def _cond_context_of_switch(op: Operation):
    from .contexts import CondContext

    context = op._control_flow_context
    if isinstance(context, CondContext) and op.inputs[1] is context.pred:
        return context
    return None


def _loop_of(op: Operation, records: str):
    """The `WhileContext` that lists ``op`` in its field ``records`` ("switches", ...), or None."""
    from .contexts import WhileContext

    context = op._control_flow_context
    if isinstance(context, WhileContext) and op in getattr(context, records):
        return context
    return None


def _loop_grad_state(op: Operation):
    """The `LoopGradState` whose backward loop the gradient of ``op`` is being built in, or None
    when ``op``'s loop is not being differentiated (gradients taken inside its body)."""
    from .contexts import WhileContext

    forward = op._control_flow_context
    current = op.graph._control_flow_context
    if (
        isinstance(forward, WhileContext)
        and isinstance(current, BackwardLoopContext)
        and current.forward_context is forward
    ):
        return current.grad_state.loops[forward]
    return None


def _require_loop_grad_state(op: Operation):
    state = _loop_grad_state(op)
    if state is None:
        raise WhileLoopGradientError(
            f"No backward loop is being built for op '{op.name}' ({op.type}, created at "
            f"{op.location}); gradients through this loop frame are not supported."
        )
    return state


def _zeros_for_other_output(op: Operation, index: int, like: Tensor, branch=None) -> Tensor:
    """Zeros for output ``index`` of a Switch: live exactly when that output is.  For a
    resource (a variable captured into a branch) the zeros have the shape of its value."""
    state = getattr(op.graph._control_flow_context, "grad_state", None)
    if state is not None and branch is not None:
        zeros = state.zeros_for_untaken_branch(op, branch, like)
        if zeros is not None:
            return zeros
    other = op.outputs[index]
    if other.dtype is _dtypes.resource:
        attrs = {"dtype": like.dtype, "shape": like.shape}
        other = apply_op("ReadVariableOp", [other], attrs, name="read_for_zeros").outputs[0]
    return zeros_like_output(other)


@RegisterGradient("RefSwitch")
@RegisterGradient("Switch")
def _switch_grad(op, grad_false, grad_true):
    if _loop_of(op, "switches") is not None or getattr(
        op.graph._control_flow_context, "grad_state", None
    ):
        # Backward loops carry dense gradients.
        grad_false, grad_true = _as_dense(grad_false), _as_dense(grad_true)
    if _loop_of(op, "switches") is not None:
        return _require_loop_grad_state(op).switch_grad(op, grad_false, grad_true)
    grads = [grad_false, grad_true]
    known = [g for g in grads if g is not None]
    if not known:
        return None, None
    context = _cond_context_of_switch(op)
    if context is not None:
        # A value captured into one branch: the other output has no consumers.  Its zeros make
        # the Merge live whichever branch runs.
        taken = grads[context.branch]
        if taken is None:
            return None, None
        grads[1 - context.branch] = _zeros_for_other_output(
            op, 1 - context.branch, taken, branch=context
        )
    else:
        # A Switch on its own: the gradient of output k counts only when the predicate took
        # output k, yet it may be live when output k was dead (a constant, as ``grad_ys`` of a
        # known shape is).  Each goes through a Switch on the same predicate, as in TensorFlow,
        # so that exactly one input of the Merge is live.
        pred = op.inputs[1]
        grads = [
            switch(
                g if g is not None else _zeros_for_other_output(op, i, known[0]),
                pred,
                name="switch_grad",
            )[i]
            for i, g in enumerate(grads)
        ]
    return merge(grads, name="cond_grad")[0], None


def _cond_of_merge(op: Operation):
    """``(pred, [context of input 0, context of input 1])`` when ``op`` is the result Merge of a
    `cond`, else None."""
    from .contexts import CondContext, _output_context

    if len(op.inputs) != 2:
        return None
    contexts = [_output_context(t.op) for t in op.inputs]
    if not all(isinstance(c, CondContext) for c in contexts):
        return None
    false_ctx, true_ctx = contexts
    if false_ctx.branch != 0 or true_ctx.branch != 1 or false_ctx.pred is not true_ctx.pred:
        return None
    return false_ctx.pred, contexts


@RegisterGradient("RefMerge")
@RegisterGradient("Merge")
def _merge_grad(op, grad, grad_value_index=None):
    if grad is None:
        return [None] * len(op.inputs)
    if _loop_of(op, "merges") is not None:
        return _require_loop_grad_state(op).merge_grad(op, grad)
    cond = _cond_of_merge(op)
    if cond is not None:
        pred, contexts = cond
        grad_false, grad_true = switch(grad, pred, name="cond_grad")
        # The gradient of each branch's result enters its branch (or, inside a loop being
        # differentiated, the branch's mirror) through this Switch, so the branch must not
        # switch it a second time.
        for context, g in zip(contexts, (grad_false, grad_true)):
            backward_context(op.graph, context)._external_values[g] = g
        return grad_false, grad_true
    from dataflow.ops.math_ops import equal

    value_index = op.outputs[1]
    return [
        switch(grad, equal(value_index, i), name="merge_grad")[1] for i in range(len(op.inputs))
    ]


@RegisterGradient("RefExit")
@RegisterGradient("Exit")
def _exit_grad(op, grad):
    # The forward loop's result: its gradient enters the backward loop.
    return _require_loop_grad_state(op).exit_grad(grad)


@RegisterGradient("RefEnter")
@RegisterGradient("Enter")
def _enter_grad(op, grad):
    state = _loop_grad_state(op)
    if state is not None:
        return state.enter_grad(op, grad)
    if op.attrs.get("is_constant"):
        # Gradients taken inside the loop's body (the loop itself is not differentiated): the
        # gradient of a captured tensor is the in-loop gradient, as in TensorFlow.
        return grad
    return _require_loop_grad_state(op).enter_grad(op, grad)


@RegisterGradient("RefNextIteration")
@RegisterGradient("NextIteration")
def _next_iteration_grad(op, grad):
    # The backward NextIteration is added by the Switch's second visit.
    return grad


NotDifferentiable("LoopCond")

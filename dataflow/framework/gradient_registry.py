"""The gradient registry: which function gives each op's gradient.

An op type's gradient function is registered where the op is defined (`RegisterGradient`,
`NotDifferentiable`), a single op's by `set_op_gradient` (`df.custom_gradient`), and
`dataflow.autodiff.gradients` looks them up with `gradient_function` when it builds a backward
graph. The registry belongs with the op registry, below every op module: op modules register their
gradients here without importing the autodiff pass that calls them.

Also here, for the gradient functions: `zeros_like_output` and `dense_gradient`, and the errors
of gradients through ``while_loop`` (raised by `primitives.loop_gradients`).
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import Optional

from .graph import Operation, Tensor
from .indexed_slices import IndexedSlices
from .op_registry import apply_op, get_op_def
from .tensor_conversion import convert_to_tensor


class WhileLoopGradientError(LookupError, NotImplementedError):
    """A gradient was asked through a ``while_loop`` in one of the ways that are not supported:
    second-order gradients through a loop, a loop frame written by hand with the raw primitives,
    ``ys`` inside a loop whose loop variables the gradient would flow through, an ``x``
    inside a loop being differentiated, or a gradient taken inside a loop body through a loop
    outside it (see the module docstring)."""


class InitialLoopValueGradientError(WhileLoopGradientError, ValueError):
    """A gradient taken inside a loop's body that flows through that loop's variables back to
    their initial values.  A ``ValueError`` worded as TF1's ("Cannot compute gradient inside
    while loop with respect to op ...")."""


class SecondOrderLoopGradientError(WhileLoopGradientError, TypeError):
    """A second-order gradient through a ``while_loop``: a gradient that would flow into a
    backward loop that ``xs`` affect.  A ``TypeError`` whose message starts as TF1's ("Second-
    order gradient for while loops not supported")."""


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


# Gradient functions of single ops, by the name in the op's ``_gradient_op_type`` attr (the ops
# `df.custom_gradient` makes).  An op keeps its own function alive (`set_op_gradient`), so the
# entry goes when the op does: a graph's ops with the graph, an eager op with the tape that
# recorded it.
_op_gradients: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_op_gradient_names = itertools.count()


def set_op_gradient(op: Operation, fn: Callable) -> None:
    """Makes ``fn`` (called as a registered gradient is) the gradient function of ``op`` alone,
    named in its ``_gradient_op_type`` attr, as TensorFlow's gradient_override_map names one."""
    name = f"CustomGradient-{next(_op_gradient_names)}"
    _op_gradients[name] = fn
    op.attrs["_gradient_op_type"] = name
    op._gradient_function = fn


def gradient_function(op: Operation) -> Optional[Callable]:
    """The gradient function of ``op``: the one given to the op itself (`set_op_gradient`), or
    the one registered for its type; None when there is neither."""
    name = op.attrs.get("_gradient_op_type")
    if name is None:
        return op.op_def.gradient
    fn = _op_gradients.get(name)
    if fn is None:
        raise LookupError(
            f"Op '{op.name}' (op type: {op.type}), created at {op.location}, takes its gradient "
            f"from the function '{name}', which no longer exists (a custom gradient defined in "
            "another process or graph)."
        )
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


# -- helpers for gradient functions ----------------------------------------------------------------
# Zeros for a forward value inside a loop being differentiated, from `primitives.loop_gradients`
# (registered when it is imported, which `import dataflow` does).
_zeros_like_forward: Optional[Callable[[Tensor], Optional[Tensor]]] = None


def register_zeros_like_forward(fn: Callable[[Tensor], Optional[Tensor]]) -> None:
    """Sets the function `zeros_like_output` asks first (`primitives.loop_gradients`)."""
    global _zeros_like_forward
    _zeros_like_forward = fn


def zeros_like_output(t: Tensor) -> Tensor:
    """Zeros shaped like ``t`` computed from ``t`` itself, so they are live exactly when ``t``
    is (a constant would be live on an untaken branch too).  Inside a loop being differentiated,
    where ``t`` is a forward value of another frame, zeros built in the current backward context
    instead (``primitives.loop_gradients.zeros_like_forward``: no forward value is saved for
    them, at most its shape)."""
    if _zeros_like_forward is not None:
        zeros = _zeros_like_forward(t)
        if zeros is not None:
            return zeros
    return apply_op("ZerosLike", [t], name="zeros_like").outputs[0]


def dense_gradient(grad):
    """``grad`` as a Tensor: an IndexedSlices becomes the dense tensor it stands for, for the
    gradient functions that expect one (all but those whose OpDef says it passes sparse
    gradients on: ``extra["passes_sparse_gradients"]``)."""
    if isinstance(grad, IndexedSlices):
        return convert_to_tensor(grad)
    return grad

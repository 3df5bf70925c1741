"""The losses and norms of ``df.nn`` that training code reaches for: ``l2_loss`` (an op, as in
TensorFlow, with its gradient), and ``l2_normalize``, ``sigmoid_cross_entropy_with_logits`` and
``weighted_cross_entropy_with_logits``, built from other ops as TensorFlow's ``nn_impl.py``
builds them (so their numbers, gradients and op names are TensorFlow's).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .array_ops import zeros_like
from .math_ops import (
    FLOAT_TYPES,
    add,
    check_dtype,
    exp,
    greater_equal,
    log1p,
    maximum,
    multiply,
    reduce_sum,
    rsqrt,
    square,
    where,
)
from .math_ops import abs as _abs
from .nn_ops import relu

__all__ = [
    "l2_loss",
    "l2_normalize",
    "sigmoid_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits",
]


def _infer_l2_loss(op):
    (t,) = op.inputs
    check_dtype(t.dtype, FLOAT_TYPES, "Input 't' of 'L2Loss'")
    return [(t.dtype, TensorShape([]))]


def _l2_loss_kernel(attrs):
    def l2_loss(t):
        return np.asarray(np.sum(np.square(t) * t.dtype.type(0.5)), dtype=t.dtype)

    return l2_loss


define_op("L2Loss", _infer_l2_loss, _l2_loss_kernel)


def l2_loss(t, name: Optional[str] = None) -> Tensor:
    """``sum(t ** 2) / 2``, a scalar: half the squared l2 norm (weight decay's usual term)."""
    return apply_op("L2Loss", (t,), None, name or "L2Loss").outputs[0]


def l2_normalize(x, axis=None, epsilon=1e-12, name: Optional[str] = None, dim=None) -> Tensor:
    """``x / sqrt(max(sum(x ** 2, axis), epsilon))``: ``x`` scaled to unit l2 norm along
    ``axis`` (all axes when None; ``dim`` is its old name), with ``epsilon`` keeping a zero
    vector at zero."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = reduce_sum(square(x), axis, keepdims=True)
        x_inv_norm = rsqrt(maximum(square_sum, epsilon))
        return multiply(x, x_inv_norm, name=scope)


def _xent_inputs(fn_name: str, labels, logits) -> tuple[Tensor, Tensor]:
    if labels is None or logits is None:
        raise ValueError(
            f"Both labels and logits must be provided for {fn_name}: labels={labels}, "
            f"logits={logits}"
        )
    logits = convert_to_tensor(logits, name="logits")
    labels = convert_to_tensor(labels, name="labels")
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(
            f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})"
        )
    return labels, logits


def sigmoid_cross_entropy_with_logits(
    labels=None, logits=None, name: Optional[str] = None
) -> Tensor:
    """The logistic loss of each element, ``labels`` in [0, 1] being the probability that
    the event whose log-odds are ``logits`` happens: ``max(x, 0) - x * z + log1p(exp(-|x|))``
    for ``x = logits``, ``z = labels``, which overflows for no ``x``."""
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        labels, logits = _xent_inputs("sigmoid_cross_entropy_with_logits", labels, logits)
        zeros = zeros_like(logits, dtype=logits.dtype)
        positive = greater_equal(logits, zeros)
        relu_logits = where(positive, logits, zeros)
        neg_abs_logits = where(positive, -logits, logits)
        return add(relu_logits - logits * labels, log1p(exp(neg_abs_logits)), name=scope)


def weighted_cross_entropy_with_logits(
    labels=None, logits=None, pos_weight=None, name: Optional[str] = None, targets=None
) -> Tensor:
    """`sigmoid_cross_entropy_with_logits` with the positive term weighted by
    ``pos_weight``: ``(1 - z) * x + (1 + (pos_weight - 1) * z) * log1p(exp(-x))``, computed
    as ``... * (log1p(exp(-|x|)) + relu(-x))``.  ``targets`` is the old name of ``labels``."""
    if targets is not None:
        if labels is not None:
            raise ValueError("Cannot specify both 'labels' and 'targets'")
        labels = targets
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        labels, logits = _xent_inputs("weighted_cross_entropy_with_logits", labels, logits)
        log_weight = 1 + (pos_weight - 1) * labels
        return add(
            (1 - labels) * logits,
            log_weight * (log1p(exp(-_abs(logits))) + relu(-logits)),
            name=scope,
        )


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402


@RegisterGradient("L2Loss")
def _l2_loss_grad(op, grad):
    return multiply(op.inputs[0], grad)

"""``df.losses`` (``tf.compat.v1.losses``): losses that weigh, reduce and collect themselves.

Each loss computes one value per element (per example for the cross entropies), multiplies
it by ``weights`` (a scalar, or a tensor of the losses' rank whose dimensions are each 1 or the
losses' own), reduces it as ``reduction`` says, and adds the result to ``loss_collection``
(``GraphKeys.LOSSES``, so that `get_total_loss` finds it).  The reductions
(`Reduction`):

- ``NONE``: the weighted losses, unreduced;
- ``SUM``: their sum;
- ``MEAN``: the sum divided by the sum of the weights (broadcast to the losses' shape);
- ``SUM_OVER_BATCH_SIZE``: the sum divided by the number of losses;
- ``SUM_BY_NONZERO_WEIGHTS`` (the default, also ``SUM_OVER_NONZERO_WEIGHTS``): the sum
  divided by the number of losses whose weight is not zero.

A division by zero (every weight zero) gives 0, not NaN.  As in TensorFlow, the weighting and
the reduction are computed in float32 whatever the losses' dtype, and the result is cast back
to it; the losses are built from other ops as TensorFlow builds them, with its names (a default
``mean_squared_error`` is ``mean_squared_error/value:0``), numbers and gradients.  The weights'
shape is checked when the graph is built if both shapes are known; TensorFlow also checks it at
run time when they are not, which is left out here (the multiplication then broadcasts as numpy
does).

The regularization losses are those ``get_variable``'s ``regularizer`` adds to
``GraphKeys.REGULARIZATION_LOSSES``.
"""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location, get_default_graph, name_scope
from ..framework.graph_keys import GraphKeys
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.array_ops import ones_like, rank, shape, size, squeeze, stop_gradient, zeros_like
from ..ops.array_ops import range as range_
from ..ops.constant_op import constant
from ..ops.math_ops import abs as _abs
from ..ops.math_ops import (
    add,
    add_n,
    cast,
    equal,
    log,
    maximum,
    minimum,
    multiply,
    realdiv,
    reduce_sum,
    square,
    squared_difference,
    subtract,
    where,
)
from ..ops.nn_impl import sigmoid_cross_entropy_with_logits
from ..ops.nn_ops import (
    relu,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
)

__all__ = [
    "Reduction",
    "absolute_difference",
    "add_loss",
    "compute_weighted_loss",
    "cosine_distance",
    "get_losses",
    "get_regularization_loss",
    "get_regularization_losses",
    "get_total_loss",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_pairwise_squared_error",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]


class Reduction:
    """How a loss reduces its weighted values (see the module docstring)."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple:
        return (
            cls.NONE,
            cls.SUM,
            cls.MEAN,
            cls.SUM_OVER_BATCH_SIZE,
            cls.SUM_OVER_NONZERO_WEIGHTS,
            cls.SUM_BY_NONZERO_WEIGHTS,
        )

    @classmethod
    def validate(cls, key) -> None:
        if key not in cls.all():
            raise ValueError(
                f"Invalid Reduction Key {key}. Key should be one of {cls.all()} "
                f"(at {_user_location()})."
            )


# -- weighting and reducing ------------------------------------------------------------------------
def _check_broadcastable(weights: Tensor, values: Tensor) -> None:
    """TensorFlow's ``assert_broadcastable``, when both shapes are known: ``weights`` is a
    scalar or has ``values``' rank with each dimension 1 or ``values``' own."""
    weights_shape, values_shape = weights.shape, values.shape
    if weights_shape.ndims is None or values_shape.ndims is None or weights_shape.ndims == 0:
        return
    prefix = f"weights can not be broadcast to values (at {_user_location()})."
    if weights_shape.ndims != values_shape.ndims:
        raise ValueError(
            f"{prefix} values.rank={values_shape.ndims}. weights.rank={weights_shape.ndims}. "
            f"values.shape={values_shape}. weights.shape={weights_shape}."
        )
    for i, (w, v) in enumerate(zip(weights_shape.as_list(), values_shape.as_list())):
        if w is not None and v is not None and w not in (1, v):
            raise ValueError(
                f"{prefix} Mismatch at dim {i}. values.shape={values_shape}, "
                f"weights.shape={weights_shape}."
            )


def _div_no_nan(x: Tensor, y: Tensor, name: str) -> Tensor:
    """``x / y``, and 0 where ``y`` is 0 (with a gradient that is finite there too)."""
    zero = equal(y, 0.0)
    safe_y = where(zero, ones_like(y), y)
    return where(zero, zeros_like(x), realdiv(x, safe_y), name=name)


def _safe_mean(losses: Tensor, num_present: Tensor) -> Tensor:
    return _div_no_nan(reduce_sum(losses), num_present, name="value")


def _num_elements(losses: Tensor) -> Tensor:
    with name_scope(None, "num_elements", [losses]) as scope:
        return cast(size(losses, name=scope), losses.dtype)


def _broadcast_weights(weights: Tensor, values: Tensor) -> Tensor:
    with name_scope(None, "broadcast_weights", [weights, values]) as scope:
        if (
            weights.shape.is_fully_defined()
            and values.shape.is_fully_defined()
            and weights.shape.is_compatible_with(values.shape)
        ):
            return weights
        _check_broadcastable(weights, values)
        return multiply(weights, ones_like(values), name=scope)


def _num_present(losses: Tensor, weights) -> Tensor:
    """How many elements of ``losses`` have a non-zero weight (``weights`` broadcast)."""
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with name_scope(None, "num_present", [losses, weights]) as scope:
        weights = cast(weights, _dtypes.float32)
        present = where(equal(weights, 0.0), zeros_like(weights), ones_like(weights))
        present = _broadcast_weights(present, losses)
        return reduce_sum(present, name=scope)


def compute_weighted_loss(
    losses,
    weights=1.0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """``losses * weights`` reduced as ``reduction`` says (in float32, cast back to the
    losses' dtype), added to ``loss_collection`` unless that is None."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", [losses, weights]):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype
        losses = cast(losses, _dtypes.float32)
        weights_tensor = cast(weights, _dtypes.float32)
        _check_broadcastable(weights_tensor, losses)
        weighted_losses = multiply(losses, weights_tensor)
        if reduction == Reduction.NONE:
            loss = weighted_losses
        else:
            loss = reduce_sum(weighted_losses)
            if reduction == Reduction.MEAN:
                loss = _safe_mean(loss, reduce_sum(ones_like(losses) * weights_tensor))
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = _safe_mean(loss, _num_present(losses, weights))
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = _safe_mean(loss, _num_elements(losses))
        loss = cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


def _require(**arguments) -> None:
    for argument, value in arguments.items():
        if value is None:
            raise ValueError(f"Argument `{argument}` must not be None (at {_user_location()}).")


def _as_float32_pair(predictions, labels, what: str = "predictions") -> tuple[Tensor, Tensor]:
    predictions = cast(predictions, _dtypes.float32)
    labels = cast(labels, _dtypes.float32)
    _check_compatible(predictions, labels, what, "labels")
    return predictions, labels


def _check_compatible(a: Tensor, b: Tensor, a_name: str, b_name: str) -> None:
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(
            f"Shapes {a.shape} and {b.shape} are incompatible: {a_name} and {b_name} must "
            f"have one shape (at {_user_location()})"
        )


# -- the losses ------------------------------------------------------------------------------------
def absolute_difference(
    labels,
    predictions,
    weights=1.0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """``|predictions - labels|``, weighted and reduced (l1 loss)."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "absolute_difference", [predictions, labels, weights]) as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        losses = _abs(subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def mean_squared_error(
    labels,
    predictions,
    weights=1.0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """``(predictions - labels) ** 2``, weighted and reduced (the mean by default)."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        losses = squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def huber_loss(
    labels,
    predictions,
    weights=1.0,
    delta=1.0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """Squared error for small errors, linear for large ones: ``0.5 * e ** 2`` while ``|e| <=
    delta``, ``0.5 * delta ** 2 + delta * (|e| - delta)`` beyond, for ``e = predictions -
    labels``; weighted and reduced."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "huber_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        abs_error = _abs(subtract(predictions, labels))
        quadratic = minimum(abs_error, delta)
        linear = subtract(abs_error, quadratic)
        half = convert_to_tensor(0.5, dtype=quadratic.dtype)
        losses = add(multiply(half, multiply(quadratic, quadratic)), multiply(delta, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def log_loss(
    labels,
    predictions,
    weights=1.0,
    epsilon=1e-7,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """The binary cross entropy of probabilities: ``-labels * log(predictions + epsilon) -
    (1 - labels) * log(1 - predictions + epsilon)``, weighted and reduced."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "log_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        losses = -multiply(labels, log(predictions + epsilon)) - multiply(
            (1 - labels), log(1 - predictions + epsilon)
        )
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def hinge_loss(
    labels,
    logits,
    weights=1.0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """``max(0, 1 - y * logits)`` with ``y = 2 * labels - 1`` (labels 0 and 1 become -1 and
    1), weighted and reduced."""
    _require(labels=labels, logits=logits)
    with name_scope(scope, "hinge_loss", [logits, labels, weights]) as scope:
        logits, labels = _as_float32_pair(logits, labels, "logits")
        all_ones = ones_like(labels)
        signs = subtract(2 * labels, all_ones)
        losses = relu(subtract(all_ones, multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def cosine_distance(
    labels,
    predictions,
    axis=None,
    weights=1.0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
    dim=None,
) -> Tensor:
    """``1 - sum(predictions * labels, axis)`` (kept as a dimension of size 1), for unit-norm
    ``labels`` and ``predictions``; weighted and reduced.  ``dim`` is the old name of
    ``axis``, which is required."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError(f"You must specify argument `axis` (at {_user_location()}).")
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _as_float32_pair(predictions, labels)
        radial_diffs = multiply(predictions, labels)
        losses = 1 - reduce_sum(radial_diffs, axis=(axis,), keepdims=True)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def mean_pairwise_squared_error(
    labels, predictions, weights=1.0, scope: Optional[str] = None, loss_collection=GraphKeys.LOSSES
) -> Tensor:
    """For each example (the first dimension), the mean over all pairs of its elements of
    ``((p_i - p_j) - (l_i - l_j)) ** 2``, computed as TensorFlow does from the sums of the
    differences and of their squares; ``weights`` scales each example's value (a scalar or one
    weight per example, broadcast against ``[batch, 1, ...]``), and the result is the sum (0
    when no element has a non-zero weight).  Always summed: there is no ``reduction``."""
    _require(labels=labels, predictions=predictions)
    with name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]):
        weights = cast(weights, _dtypes.float32)
        labels = cast(labels, _dtypes.float32)
        _check_broadcastable(weights, labels)
        predictions = cast(predictions, _dtypes.float32)
        _check_compatible(predictions, labels, "predictions", "labels")
        diffs = subtract(predictions, labels)
        axis = range_(1, rank(diffs))
        sum_squares_diff_per_batch = reduce_sum(square(diffs), axis=axis, keepdims=True)
        with name_scope(None, "num_present", [diffs, weights]) as present_scope:
            present = where(equal(weights, 0.0), zeros_like(weights), ones_like(weights))
            present = _broadcast_weights(present, diffs)
            num_present_per_batch = reduce_sum(
                present, axis=range_(1, rank(present)), keepdims=True, name=present_scope
            )
        term1 = 2.0 * _div_no_nan(
            sum_squares_diff_per_batch, maximum(num_present_per_batch - 1, 0), name="value"
        )
        sum_diff = reduce_sum(diffs, axis=axis, keepdims=True)
        term2 = 2.0 * _div_no_nan(
            square(sum_diff),
            maximum(multiply(num_present_per_batch, num_present_per_batch - 1), 0),
            name="value",
        )
        loss = reduce_sum(multiply(term1 - term2, weights))
        mean_loss = where(
            reduce_sum(num_present_per_batch) > 0, loss, zeros_like(loss), name="value"
        )
        add_loss(mean_loss, loss_collection)
        return mean_loss


def sigmoid_cross_entropy(
    multi_class_labels,
    logits,
    weights=1.0,
    label_smoothing=0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """`df.nn.sigmoid_cross_entropy_with_logits` of each element, weighted and reduced; with
    ``label_smoothing`` the labels move towards 1/2: ``labels * (1 - s) + s / 2``."""
    _require(multi_class_labels=multi_class_labels, logits=logits)
    with name_scope(
        scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]
    ) as scope:
        logits = convert_to_tensor(logits)
        labels = cast(multi_class_labels, logits.dtype)
        _check_compatible(logits, labels, "logits", "multi_class_labels")
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def softmax_cross_entropy(
    onehot_labels,
    logits,
    weights=1.0,
    label_smoothing=0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """The softmax cross entropy of each example (the last axis holds the classes), weighted
    (``weights`` of shape ``[]`` or ``[batch]``) and reduced; with ``label_smoothing`` the
    labels move towards uniform: ``labels * (1 - s) + s / num_classes``.  No gradient flows
    into the labels."""
    _require(onehot_labels=onehot_labels, logits=logits)
    with name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as scope:
        logits = convert_to_tensor(logits)
        labels = cast(onehot_labels, logits.dtype)
        _check_compatible(logits, labels, "logits", "onehot_labels")
        if label_smoothing > 0:
            num_classes = cast(shape(labels)[-1], logits.dtype)
            smooth_positives = 1.0 - label_smoothing
            smooth_negatives = label_smoothing / num_classes
            labels = labels * smooth_positives + smooth_negatives
        labels = stop_gradient(labels, name="labels_stop_gradient")
        losses = softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def _squeeze_last_if_one(t: Tensor) -> Tensor:
    return squeeze(t, [-1]) if t.shape.ndims and t.shape.as_list()[-1] == 1 else t


def sparse_softmax_cross_entropy(
    labels,
    logits,
    weights=1.0,
    scope: Optional[str] = None,
    loss_collection=GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
) -> Tensor:
    """The softmax cross entropy of each example against its class index in ``labels``,
    weighted and reduced.  ``labels`` of shape ``[batch, 1]`` and ``weights`` of shape
    ``[batch, 1]`` are taken as ``[batch]``, as TensorFlow does when the ranks are known."""
    _require(labels=labels, logits=logits)
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as scope:
        labels, logits = convert_to_tensor(labels), convert_to_tensor(logits)
        labels_rank, logits_rank = labels.shape.ndims, logits.shape.ndims
        if labels_rank is not None and logits_rank is not None:
            if logits_rank - labels_rank == 0:
                labels = _squeeze_last_if_one(labels)
            weights = convert_to_tensor(weights)
            if weights.shape.ndims is not None and weights.shape.ndims - labels.shape.ndims == 1:
                weights = squeeze(weights, [-1])
        losses = sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


# -- the collections -------------------------------------------------------------------------------
def add_loss(loss: Tensor, loss_collection=GraphKeys.LOSSES) -> None:
    """Adds ``loss`` to ``loss_collection`` (nothing when that is None or empty)."""
    if loss_collection:
        get_default_graph().add_to_collection(loss_collection, loss)


def get_losses(scope: Optional[str] = None, loss_collection=GraphKeys.LOSSES) -> list:
    """The losses in ``loss_collection``, those whose names match ``scope`` when given."""
    return get_default_graph().get_collection(loss_collection, scope)


def get_regularization_losses(scope: Optional[str] = None) -> list:
    """The ``REGULARIZATION_LOSSES`` (filled by ``get_variable``'s regularizers), those whose
    names match ``scope`` when given."""
    return get_default_graph().get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(
    scope: Optional[str] = None, name: str = "total_regularization_loss"
) -> Tensor:
    """The sum of the regularization losses, or the constant 0.0 when there is none."""
    losses = get_regularization_losses(scope)
    if losses:
        return add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(
    add_regularization_losses: bool = True, name: str = "total_loss", scope=None
) -> Tensor:
    """The sum of the collected losses and (by default) the regularization losses;
    ``ValueError`` when there is none."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError(
            f"No losses to add up: nothing in the '{GraphKeys.LOSSES}' or "
            f"'{GraphKeys.REGULARIZATION_LOSSES}' collections (at {_user_location()})"
        )
    return add_n(losses, name=name)

"""What every metric is made of: its local variables (``metric_variable``), labels, predictions
and weights squeezed to agree, and the collections its value and update op join."""

from __future__ import annotations

from typing import Optional

from ..framework.graph import Tensor, _user_location
from ..framework.graph import add_to_collections as _add_to_collections
from ..framework.graph_keys import GraphKeys
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.array_ops import (
    expand_dims,
    squeeze,
    zeros,
)
from ..ops.variables import Variable


def metric_variable(shape, dtype, validate_shape: bool = True, name: Optional[str] = None):
    """A variable of zeros holding a running total: not trainable, in ``LOCAL_VARIABLES`` and
    ``METRIC_VARIABLES`` only."""
    return Variable(
        lambda: zeros(shape, dtype),
        trainable=False,
        collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
        validate_shape=validate_shape,
        name=name,
    )


def _squeeze_last(t: Tensor) -> Tensor:
    return squeeze(t, [-1])


def _last_dim_may_be_one(t: Tensor) -> bool:
    last = t.shape.as_list()[-1]
    return last is None or last == 1


def _remove_squeezable_dimensions(predictions, labels, weights):
    """``predictions``, ``labels`` and ``weights`` with a trailing dimension of 1 squeezed
    where one has a rank one more than the other (and ``weights`` expanded where it has one
    less), as TensorFlow does when the ranks are known."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels = convert_to_tensor(labels)
        labels_rank, predictions_rank = labels.shape.ndims, predictions.shape.ndims
        if labels_rank is not None and predictions_rank is not None:
            if predictions_rank - labels_rank == 1 and _last_dim_may_be_one(predictions):
                predictions = _squeeze_last(predictions)
            elif predictions_rank - labels_rank == -1 and _last_dim_may_be_one(labels):
                labels = _squeeze_last(labels)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(
                f"Shapes {predictions.shape} and {labels.shape} are incompatible: predictions "
                f"and labels must have one shape (at {_user_location()})"
            )
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    weights_rank, predictions_rank = weights.shape.ndims, predictions.shape.ndims
    if weights_rank and predictions_rank is not None:
        if weights_rank - predictions_rank == 1:
            weights = _squeeze_last(weights)
        elif predictions_rank - weights_rank == 1:
            weights = expand_dims(weights, -1)
    return predictions, labels, weights


def _collect(collections, value) -> None:
    if collections:
        _add_to_collections(collections, value)

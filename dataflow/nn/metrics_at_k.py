"""The metrics of ranked predictions (TF1's ``*_at_k`` and ``*_at_top_k``): precision and
recall of the top k, and average precision at k, each a value and an update op over local
variables as every metric."""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.array_ops import concat, expand_dims, fill, ones_like, size, zeros_like
from ..ops.array_ops import shape as shape_
from ..ops.constant_op import constant
from ..ops.gather_ops import tile
from ..ops.math_ops import (
    add,
    cast,
    cumsum,
    divide,
    equal,
    greater_equal,
    minimum,
    multiply,
    reduce_sum,
    where,
    where_v2,
)
from ..ops.set_ops import set_difference, set_intersection, set_size
from .losses import _broadcast_weights, _div_no_nan
from .metric_util import (
    _collect,
    metric_variable,
)


# -- precision and recall of the top k ---------------------------------------------------------
def _at_k_name(name: str, k=None, class_id=None) -> str:
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return f"{name}_class{class_id}" if class_id is not None else name


def _is_sparse(t) -> bool:
    from ..framework.sparse_tensor import SparseTensor, SparseTensorValue

    return isinstance(t, (SparseTensor, SparseTensorValue))


def _as_labels(labels):
    from ..framework.sparse_tensor import SparseTensor, SparseTensorValue

    if isinstance(labels, SparseTensorValue):
        return SparseTensor(labels.indices, labels.values, labels.dense_shape)
    return labels if isinstance(labels, SparseTensor) else convert_to_tensor(labels)


def _maybe_expand_labels(labels, predictions: Tensor):
    """``labels`` with a last dimension of 1 added when they have one dimension less than
    ``predictions`` (both ranks must be known when the graph is built)."""
    from ..ops.sparse_extra_ops import sparse_reshape

    with name_scope(None, "expand_labels", [labels, predictions]) as scope:
        labels = _as_labels(labels)
        predictions_rank = predictions.shape.ndims
        if _is_sparse(labels):
            labels_rank = labels.dense_shape.shape.as_list()[0]
        else:
            labels_rank = labels.shape.ndims
        if labels_rank is None or predictions_rank is None:
            raise ValueError(
                f"the ranks of labels and predictions must be known (at {_user_location()})"
            )
        if predictions_rank == labels_rank:
            return labels
        if predictions_rank != labels_rank + 1:
            raise ValueError(
                f"Unexpected labels shape {labels.shape if not _is_sparse(labels) else labels_rank}"
                f" for predictions shape {predictions.shape}. Predictions rank should be the "
                f"same rank as labels rank or labels rank plus one (at {_user_location()})."
            )
        if _is_sparse(labels):
            shape = concat([labels.dense_shape, constant([1], _dtypes.int64)], 0)
            return sparse_reshape(labels, shape, name=scope)
        return expand_dims(labels, -1, name=scope)


def _select_class_id(ids, selected_id):
    """The entries of ``ids`` equal to ``selected_id``, a SparseTensor of ``ids``' shape."""
    from ..framework.sparse_tensor import SparseTensor
    from ..ops.sparse_extra_ops import sparse_retain

    if _is_sparse(ids):
        return sparse_retain(ids, equal(ids.values, cast(selected_id, ids.values.dtype)))
    ids_shape = shape_(ids, out_type=_dtypes.int64)
    filled_shape = concat([ids_shape[:-1], constant([1], _dtypes.int64)], 0)
    filled = fill(filled_shape, cast(selected_id, _dtypes.int64))
    result = set_intersection(filled, ids)
    return SparseTensor(result.indices, result.values, ids_shape)


def _maybe_select_class_id(labels, predictions_idx, class_id):
    if class_id is None:
        return labels, predictions_idx
    return _select_class_id(labels, class_id), _select_class_id(predictions_idx, class_id)


def _weighted_set_count(kind: str, labels, predictions_idx, class_id, weights, name=None):
    """Per example, how many of the top ids are labels (``tp``), are not (``fp``), or how many
    labels are not among the top ids (``fn``), times ``weights``, float64."""
    scope_name = {"tp": "true_positives", "fp": "false_positives", "fn": "false_negatives"}[kind]
    with name_scope(name, scope_name, [predictions_idx, labels, weights]):
        labels, predictions_idx = _maybe_select_class_id(labels, predictions_idx, class_id)
        if kind == "tp":
            found = set_intersection(predictions_idx, labels)
        else:
            found = set_difference(predictions_idx, labels, aminusb=kind == "fp")
        count = cast(set_size(found), _dtypes.float64)
        if weights is not None:
            count = multiply(count, cast(weights, _dtypes.float64))
        return count


def _streaming_count_at_k(kind: str, labels, predictions_idx, k, class_id, weights):
    base = {"tp": "true_positive", "fp": "false_positive", "fn": "false_negative"}[kind]
    scope_name = _at_k_name(base, k, class_id)
    with name_scope(None, scope_name, [predictions_idx, labels, weights]) as scope:
        count = _weighted_set_count(kind, labels, predictions_idx, class_id, weights)
        batch_total = cast(reduce_sum(count), _dtypes.float64)
        var = metric_variable([], _dtypes.float64, name=scope)
        return var.read_value(), var.assign_add(batch_total)


def _top_k_share(other: str, default: str, labels, predictions_idx, k, class_id, weights,
                 metrics_collections, updates_collections, name):  # fmt: skip
    default_name = _at_k_name(default, k, class_id)
    with name_scope(name, default_name, [predictions_idx, labels, weights]) as scope:
        predictions_idx = convert_to_tensor(predictions_idx)
        labels = _maybe_expand_labels(labels, predictions_idx)
        top_k_idx = cast(predictions_idx, _dtypes.int64)
        tp, tp_update = _streaming_count_at_k("tp", labels, top_k_idx, k, class_id, weights)
        o, o_update = _streaming_count_at_k(other, labels, top_k_idx, k, class_id, weights)
        value = divide(tp, add(tp, o), name=scope)
        _collect(metrics_collections, value)
        update = divide(tp_update, add(tp_update, o_update), name="update")
        _collect(updates_collections, update)
        return value, update


def precision_at_top_k(
    labels,
    predictions_idx,
    k=None,
    class_id=None,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The precision of the top ids ``predictions_idx`` (``[..., k]``) against the int64
    ``labels`` (a tensor of ``[..., num_labels]`` or ``[...]``, or a SparseTensor): the share of
    top ids that are labels over everything seen, float64; with ``class_id`` only that class
    counts (NaN while it was never predicted)."""
    return _top_k_share(
        "fp", "precision", labels, predictions_idx, k, class_id, weights,
        metrics_collections, updates_collections, name,
    )  # fmt: skip


def recall_at_top_k(
    labels,
    predictions_idx,
    k=None,
    class_id=None,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The recall of the top ids ``predictions_idx``: the share of labels found among them
    over everything seen, float64 (see `precision_at_top_k`)."""
    return _top_k_share(
        "fn", "recall", labels, predictions_idx, k, class_id, weights,
        metrics_collections, updates_collections, name,
    )  # fmt: skip


def _top_k_indices(predictions, k):
    from ..ops.extra_nn_ops import top_k

    return top_k(predictions, k)[1]


def precision_at_k(
    labels,
    predictions,
    k,
    class_id=None,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """`precision_at_top_k` of the ids of the ``k`` largest ``predictions`` (logits or
    scores of ``[..., num_classes]``)."""
    with name_scope(name, _at_k_name("precision", k, class_id), [predictions, labels]) as scope:
        return precision_at_top_k(
            labels, _top_k_indices(predictions, k), k, class_id, weights,
            metrics_collections, updates_collections, scope,
        )  # fmt: skip


def recall_at_k(
    labels,
    predictions,
    k,
    class_id=None,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """`recall_at_top_k` of the ids of the ``k`` largest ``predictions``."""
    with name_scope(name, _at_k_name("recall", k, class_id), [predictions, labels]) as scope:
        return recall_at_top_k(
            labels, _top_k_indices(predictions, k), k, class_id, weights,
            metrics_collections, updates_collections, scope,
        )  # fmt: skip


def sparse_precision_at_k(
    labels,
    predictions,
    k,
    class_id=None,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The old name of `precision_at_k`."""
    return precision_at_k(
        labels, predictions, k, class_id, weights, metrics_collections, updates_collections,
        name,
    )  # fmt: skip


# -- average precision of the top k ----------------------------------------------------------
def _expand_and_tile(labels, multiple: int):
    """``labels`` with a new second-to-last dimension repeated ``multiple`` times."""
    from ..ops.sparse_extra_ops import sparse_concat, sparse_reshape

    with name_scope(None, "labels_per_k", [labels]) as scope:
        if _is_sparse(labels):
            dense_shape = labels.dense_shape
            expanded = sparse_reshape(
                labels,
                concat([dense_shape[:-1], constant([1], _dtypes.int64), dense_shape[-1:]], 0),
                name="expand",
            )
            if multiple == 1:
                return expanded
            return sparse_concat(-2, [expanded] * multiple, name=scope)
        expanded = expand_dims(labels, -2, name="expand")
        if multiple == 1:
            return expanded
        ones = ones_like(shape_(labels))
        multiples = concat([ones[:-1], constant([multiple]), ones[-1:]], 0, name="multiples")
        return tile(expanded, multiples, name=scope)


def _num_relevant(labels, k: int):
    with name_scope(None, "num_relevant", [labels]) as scope:
        if _is_sparse(labels):
            return minimum(set_size(labels), k, name=scope)
        positive = where(greater_equal(labels, 0), ones_like(labels), zeros_like(labels))
        return minimum(reduce_sum(positive, axis=-1), cast(k, labels.dtype), name=scope)


def _average_precision_at_top_k(labels, predictions_idx):
    with name_scope(None, "average_precision", [predictions_idx, labels]) as scope:
        predictions_idx = cast(predictions_idx, _dtypes.int64, name="predictions_idx")
        if predictions_idx.shape.ndims == 0:
            raise ValueError("The rank of `predictions_idx` must be at least 1.")
        k = predictions_idx.shape.as_list()[-1] if predictions_idx.shape.ndims else None
        if k is None:
            raise ValueError(
                "The last dimension of predictions_idx must be set. Currently, it is None."
            )
        labels = _maybe_expand_labels(labels, predictions_idx)
        predictions_idx_per_k = expand_dims(predictions_idx, -1, name="predictions_idx_per_k")
        labels_per_k = _expand_and_tile(labels, k)
        relevant_per_k = _weighted_set_count(
            "tp", labels_per_k, predictions_idx_per_k, None, None, name="relevant_per_k"
        )
        tp_per_k = cumsum(relevant_per_k, axis=-1, name="tp_per_k")
        retrieved_per_k = cumsum(ones_like(relevant_per_k), axis=-1, name="retrieved_per_k")
        precision_per_k = divide(tp_per_k, retrieved_per_k, name="precision_per_k")
        relevant_precision_per_k = multiply(precision_per_k, relevant_per_k)
        precision_sum = reduce_sum(relevant_precision_per_k, axis=(-1,), name="precision_sum")
        num_relevant = cast(_num_relevant(labels, k), _dtypes.float64)
        return divide(precision_sum, num_relevant, name=scope)


def _clean_out_of_range_indices(labels, num_classes: Tensor):
    """``labels`` with every id of at least ``num_classes`` replaced by -1."""
    from ..framework.sparse_tensor import SparseTensor

    def clean(values):
        return where_v2(greater_equal(values, num_classes), -1 * ones_like(values), values)

    if _is_sparse(labels):
        values = cast(labels.values, _dtypes.int64)
        return SparseTensor(labels.indices, clean(values), labels.dense_shape)
    return clean(cast(labels, _dtypes.int64))


def average_precision_at_k(
    labels,
    predictions,
    k,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The mean over every example seen of the average precision at ``k`` of the ``k`` largest
    ``predictions`` against the int64 ``labels`` (a tensor or SparseTensor): the sum of the
    precision at each rank where a label was found, over ``min(k, number of labels)``;
    float64, with the totals in ``.../max`` and ``.../total``."""
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1 (at {_user_location()}).")
    with name_scope(name, _at_k_name("average_precision", k), [predictions, labels]) as scope:
        predictions = convert_to_tensor(predictions)
        predictions_idx = _top_k_indices(predictions, k)
        labels = _clean_out_of_range_indices(
            _as_labels(labels), cast(shape_(predictions)[-1], _dtypes.int64)
        )
        average_precision = _average_precision_at_top_k(labels, predictions_idx)
        if weights is not None:
            weights = _broadcast_weights(cast(weights, _dtypes.float64), average_precision)
            average_precision = multiply(average_precision, weights)
        with name_scope(None, "max", [average_precision]) as max_scope:
            max_var = metric_variable([], _dtypes.float64, name=max_scope)
            if weights is None:
                batch_max = cast(size(average_precision, name="batch_max"), _dtypes.float64)
            else:
                batch_max = reduce_sum(weights, name="batch_max")
            max_update = max_var.assign_add(batch_max)
        with name_scope(None, "total", [average_precision]) as total_scope:
            total_var = metric_variable([], _dtypes.float64, name=total_scope)
            total_update = total_var.assign_add(reduce_sum(average_precision, name="batch_total"))
        value = _div_no_nan(total_var.read_value(), max_var.read_value(), "mean")
        _collect(metrics_collections, value)
        update = _div_no_nan(total_update, max_update, scope)
        _collect(updates_collections, update)
        return value, update


def sparse_average_precision_at_k(
    labels,
    predictions,
    k,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The old name of `average_precision_at_k`."""
    return average_precision_at_k(
        labels, predictions, k, weights, metrics_collections, updates_collections, name
    )


__all__ = [
    "average_precision_at_k",
    "precision_at_k",
    "precision_at_top_k",
    "recall_at_k",
    "recall_at_top_k",
    "sparse_average_precision_at_k",
    "sparse_precision_at_k",
]

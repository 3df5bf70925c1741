"""``df.metrics`` (``tf.compat.v1.metrics``): streaming metrics over many batches.

Each metric returns ``(value, update_op)``: running ``update_op`` on a batch adds the batch to
the metric's running totals (and returns the metric over everything seen so far), and
``value`` reads the metric from the totals without changing them.  The totals are variables
named as TensorFlow names them (``accuracy/total``, ``accuracy/count``, ``auc/true_positives``)
in the ``LOCAL_VARIABLES`` and ``METRIC_VARIABLES`` collections, never trainable and never in
``GLOBAL_VARIABLES``: ``df.local_variables_initializer()`` sets them to zero, which is how an
evaluation starts again.  A division by zero (no batch seen yet, all weights zero) gives 0.

``weights`` is a scalar or a tensor of the labels' rank (or one more or one less, which is
squeezed or expanded) whose dimensions are each 1 or the labels' own; a weight of 0 leaves an
element out.  ``metrics_collections`` and ``updates_collections`` name collections that the
value and the update are added to.  ``name`` names the variable scope (default: the metric's
name, made unique).

As TensorFlow, the metrics are built from other ops, with its names and numbers; labels and
predictions with a trailing dimension of 1 are squeezed when their ranks are known (TensorFlow
also decides it at run time when they are not, which is left out here), and `auc` fails the run
when a prediction is outside [0, 1].
"""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import (
    GraphKeys,
    Tensor,
    _user_location,
    control_dependencies,
    convert_to_tensor,
    name_scope,
)
from ..framework.graph import add_to_collections as _add_to_collections
from ..ops.array_ops import (
    concat,
    expand_dims,
    fill,
    gather,
    identity,
    ones_like,
    reshape,
    size,
    squeeze,
    tile,
    zeros,
    zeros_like,
)
from ..ops.array_ops import shape as shape_
from ..ops.constant_op import constant
from ..ops.extra_math_ops import confusion_matrix
from ..ops.math_ops import abs as abs_
from ..ops.math_ops import (
    add,
    argmax,
    argmin,
    cast,
    cumsum,
    divide,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    maximum,
    minimum,
    multiply,
    not_equal,
    reduce_all,
    reduce_mean,
    reduce_min,
    reduce_sum,
    sqrt,
    squared_difference,
    subtract,
    where,
    where_v2,
)
from ..ops.matrix_ops import diag_part
from ..ops.misc_ops import Assert
from ..ops.set_ops import set_difference, set_intersection, set_size
from ..ops.state_ops import scatter_add
from ..ops.variable_scope import variable_scope
from ..ops.variables import Variable
from .losses import _broadcast_weights, _div_no_nan

__all__ = [
    "accuracy",
    "auc",
    "average_precision_at_k",
    "false_negatives",
    "false_negatives_at_thresholds",
    "false_positives",
    "false_positives_at_thresholds",
    "mean",
    "mean_absolute_error",
    "mean_cosine_distance",
    "mean_iou",
    "mean_per_class_accuracy",
    "mean_relative_error",
    "mean_squared_error",
    "mean_tensor",
    "percentage_below",
    "precision",
    "precision_at_k",
    "precision_at_thresholds",
    "precision_at_top_k",
    "recall",
    "recall_at_k",
    "recall_at_thresholds",
    "recall_at_top_k",
    "root_mean_squared_error",
    "sensitivity_at_specificity",
    "sparse_average_precision_at_k",
    "sparse_precision_at_k",
    "specificity_at_sensitivity",
    "true_negatives",
    "true_negatives_at_thresholds",
    "true_positives",
    "true_positives_at_thresholds",
]


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


def mean(
    values,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The (weighted) mean of every value seen: ``total / count`` in the variables
    ``mean/total`` and ``mean/count``, float32."""
    with variable_scope(name, "mean", [values, weights]):
        values = cast(values, _dtypes.float32)
        total = metric_variable([], _dtypes.float32, name="total")
        count = metric_variable([], _dtypes.float32, name="count")
        if weights is None:
            num_values = cast(size(values), _dtypes.float32)
        else:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = _broadcast_weights(cast(weights, _dtypes.float32), values)
            values = multiply(values, weights)
            num_values = reduce_sum(weights)
        update_total = total.assign_add(reduce_sum(values))
        with control_dependencies([values]):
            update_count = count.assign_add(num_values)
        mean_value = _div_no_nan(total.read_value(), maximum(count.read_value(), 0), "value")
        _collect(metrics_collections, mean_value)
        update_op = _div_no_nan(update_total, maximum(update_count, 0), "update_op")
        _collect(updates_collections, update_op)
        return mean_value, update_op


def accuracy(
    labels,
    predictions,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """How often ``predictions`` equals ``labels`` (weighted): the `mean` of the matches, in
    ``accuracy/total`` and ``accuracy/count``.  ``predictions`` are cast to the labels'
    dtype."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    if labels.dtype is not predictions.dtype:
        predictions = cast(predictions, labels.dtype)
    is_correct = cast(equal(predictions, labels), _dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(
    labels,
    predictions,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The (weighted) mean of ``(labels - predictions) ** 2`` over everything seen, in
    ``mean_squared_error/total`` and ``mean_squared_error/count``."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    squared_error = squared_difference(labels, predictions)
    return mean(
        squared_error, weights, metrics_collections, updates_collections,
        name or "mean_squared_error",
    )  # fmt: skip


# -- counts of true and false positives and negatives ----------------------------------------------
def _count_condition(values: Tensor, weights, metrics_collections, updates_collections):
    count = metric_variable([], _dtypes.float32, name="count")
    values = cast(values, _dtypes.float32)
    if weights is not None:
        values = multiply(values, cast(weights, _dtypes.float32))
    value = identity(count.read_value())
    _collect(metrics_collections, value)
    update_op = count.assign_add(reduce_sum(values))
    _collect(updates_collections, update_op)
    return value, update_op


def _counter(default_name: str, label_value: bool, prediction_value: bool):
    def count(
        labels,
        predictions,
        weights=None,
        metrics_collections=None,
        updates_collections=None,
        name: Optional[str] = None,
    ):
        with variable_scope(name, default_name, [predictions, labels, weights]):
            predictions, labels, weights = _remove_squeezable_dimensions(
                cast(predictions, _dtypes.bool), cast(labels, _dtypes.bool), weights
            )
            condition = logical_and(
                equal(labels, label_value), equal(predictions, prediction_value)
            )
            return _count_condition(condition, weights, metrics_collections, updates_collections)

    count.__name__ = default_name
    count.__doc__ = (
        f"The (weighted) number of {default_name.replace('_', ' ')} seen: elements whose label "
        f"is {label_value} and whose prediction is {prediction_value} (both cast to bool), in "
        f"``{default_name}/count``."
    )
    return count


true_positives = _counter("true_positives", True, True)
false_positives = _counter("false_positives", False, True)
false_negatives = _counter("false_negatives", True, False)
true_negatives = _counter("true_negatives", False, False)


def _ratio(numerator: Tensor, other: Tensor, name: str) -> Tensor:
    """``numerator / (numerator + other)``, 0 where that sum is 0."""
    total = numerator + other
    return where(greater(total, 0), divide(numerator, total), zeros_like(total), name=name)


def _true_positive_share(other_count, default_name, labels, predictions, weights,
                         metrics_collections, updates_collections, name):  # fmt: skip
    """``true_positives / (true_positives + other)``, ``other`` counted by ``other_count``
    (false positives: precision; false negatives: recall), over everything seen."""
    with variable_scope(name, default_name, [predictions, labels, weights]):
        predictions, labels, weights = _remove_squeezable_dimensions(
            cast(predictions, _dtypes.bool), cast(labels, _dtypes.bool), weights
        )
        true_p, update_true_p = true_positives(labels, predictions, weights)
        other, update_other = other_count(labels, predictions, weights)
        value = _ratio(true_p, other, "value")
        _collect(metrics_collections, value)
        update_op = _ratio(update_true_p, update_other, "update_op")
        _collect(updates_collections, update_op)
        return value, update_op


def precision(
    labels,
    predictions,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """``true_positives / (true_positives + false_positives)`` over everything seen
    (predictions and labels cast to bool), with the counts in
    ``precision/true_positives/count`` and ``precision/false_positives/count``."""
    return _true_positive_share(
        false_positives, "precision", labels, predictions, weights, metrics_collections,
        updates_collections, name,
    )  # fmt: skip


def recall(
    labels,
    predictions,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """``true_positives / (true_positives + false_negatives)`` over everything seen
    (predictions and labels cast to bool), with the counts in
    ``recall/true_positives/count`` and ``recall/false_negatives/count``."""
    return _true_positive_share(
        false_negatives, "recall", labels, predictions, weights, metrics_collections,
        updates_collections, name,
    )  # fmt: skip


# -- the area under a curve ------------------------------------------------------------------------
def _confusion_matrix_at_thresholds(
    labels, predictions, thresholds: list, weights=None, includes=("tp", "fn", "tn", "fp")
):
    """The variables ``true_positives``, ``false_negatives``, ``true_negatives`` and
    ``false_positives`` (one count per threshold: a prediction above the threshold counts as
    positive) and the ops that add a batch to them, as two dicts keyed ``tp``, ``fn``, ``tn``,
    ``fp`` (only those in ``includes``).  The run fails when a prediction is outside [0, 1]."""
    predictions = convert_to_tensor(predictions)
    in_range = logical_and(
        reduce_all(greater_equal(predictions, cast(0.0, predictions.dtype))),
        reduce_all(less_equal(predictions, cast(1.0, predictions.dtype))),
    )
    with control_dependencies([Assert(in_range, ["predictions must be in [0, 1]"])]):
        predictions, labels, weights = _remove_squeezable_dimensions(
            cast(predictions, _dtypes.float32), cast(labels, _dtypes.bool), weights
        )
    # [1, N] against [T, 1]: a [T, N] table, one row per threshold.
    predictions_row = reshape(predictions, [1, -1])
    thresholds_column = reshape(constant(thresholds, _dtypes.float32), [-1, 1])
    prediction_is_positive = greater(predictions_row, thresholds_column)
    prediction_is_negative = logical_not(prediction_is_positive)
    label_is_positive = reshape(labels, [1, -1])
    label_is_negative = logical_not(label_is_positive)
    if weights is not None:
        weights = _broadcast_weights(cast(weights, _dtypes.float32), predictions)
        weights = reshape(weights, [1, -1])
    values, update_ops = {}, {}
    for key, name, label_side, prediction_side in (
        ("tp", "true_positives", label_is_positive, prediction_is_positive),
        ("fn", "false_negatives", label_is_positive, prediction_is_negative),
        ("tn", "true_negatives", label_is_negative, prediction_is_negative),
        ("fp", "false_positives", label_is_negative, prediction_is_positive),
    ):
        if key not in includes:
            continue
        counts = metric_variable([len(thresholds)], _dtypes.float32, name=name)
        hits = cast(logical_and(label_side, prediction_side), _dtypes.float32)
        if weights is not None:
            hits = hits * weights
        update_ops[key] = counts.assign_add(reduce_sum(hits, 1))
        values[key] = counts.read_value()
    return values, update_ops


_SUMMATION_METHODS = ("trapezoidal", "careful_interpolation", "minoring", "majoring")


def auc(
    labels,
    predictions,
    weights=None,
    num_thresholds: int = 200,
    metrics_collections=None,
    updates_collections=None,
    curve: str = "ROC",
    name: Optional[str] = None,
    summation_method: str = "trapezoidal",
    thresholds=None,
):
    """The area under the ROC curve (``curve="ROC"``: recall against false-positive rate) or
    the precision-recall curve (``"PR"``) of the scores ``predictions`` (in [0, 1]) for the
    bool ``labels``, over everything seen, by a Riemann sum over ``num_thresholds`` thresholds
    spread evenly over [0, 1] (or over ``thresholds``, with 0 and 1 added).

    ``summation_method``: ``"trapezoidal"``, ``"minoring"`` (a lower bound), ``"majoring"``
    (an upper bound), or for PR ``"careful_interpolation"`` (Davis and Goadrich's
    interpolation, which the trapezoidal rule gets wrong for PR curves).  The counts are in
    ``auc/true_positives``, ``auc/false_negatives``, ``auc/true_negatives`` and
    ``auc/false_positives``.
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(
            f"Curve must be either ROC or PR. Curve {curve} is unknown (at {_user_location()})."
        )
    if summation_method not in _SUMMATION_METHODS:
        raise ValueError(
            f"Invalid summation_method: {summation_method} summation_method should be "
            f"'trapezoidal', 'careful_interpolation', 'minoring', or 'majoring' "
            f"(at {_user_location()})."
        )
    with variable_scope(name, "auc", [labels, predictions, weights]):
        kepsilon = 1e-7  # so that predictions of exactly 0 and 1 fall inside the ends
        if thresholds is not None:
            thresholds = sorted(thresholds)
            num_thresholds = len(thresholds) + 2
        else:
            thresholds = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        thresholds = [0.0 - kepsilon] + thresholds + [1.0 + kepsilon]
        values, update_ops = _confusion_matrix_at_thresholds(
            labels, predictions, thresholds, weights
        )
        n = num_thresholds

        def interpolate_pr_auc(tp, fp, fn):
            # Precision varies as TP / P with TP and P = TP + FP linear between thresholds;
            # integrating over recall in closed form gives each interval's area.
            dtp = tp[: n - 1] - tp[1:]
            p = tp + fp
            prec_slope = _div_no_nan(dtp, maximum(p[: n - 1] - p[1:], 0), "prec_slope")
            intercept = tp[1:] - multiply(prec_slope, p[1:])
            both_positive = logical_and(greater(p[: n - 1], 0), greater(p[1:], 0))
            ratio = _div_no_nan(p[: n - 1], maximum(p[1:], 0), "recall_relative_ratio")
            safe_p_ratio = where(both_positive, ratio, zeros_like(ratio) + 1)
            increments = _div_no_nan(
                prec_slope * (dtp + intercept * log(safe_p_ratio)),
                maximum(tp[1:] + fn[1:], 0),
                "pr_auc_increment",
            )
            return reduce_sum(increments, name="interpolate_pr_auc")

        def compute_auc(tp, fn, tn, fp, name):
            if curve == "PR" and summation_method == "careful_interpolation":
                return interpolate_pr_auc(tp, fp, fn)
            epsilon = 1.0e-6
            rec = divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = divide(fp, fp + tn + epsilon), rec
            else:
                x, y = rec, divide(tp + epsilon, tp + fp + epsilon)
            widths = x[: n - 1] - x[1:]
            if summation_method == "minoring":
                heights = minimum(y[: n - 1], y[1:])
            elif summation_method == "majoring":
                heights = maximum(y[: n - 1], y[1:])
            else:
                heights = (y[: n - 1] + y[1:]) / 2.0
            return reduce_sum(multiply(widths, heights), name=name)

        value = compute_auc(values["tp"], values["fn"], values["tn"], values["fp"], "value")
        _collect(metrics_collections, value)
        update_op = compute_auc(
            update_ops["tp"], update_ops["fn"], update_ops["tn"], update_ops["fp"], "update_op"
        )
        _collect(updates_collections, update_op)
        return value, update_op


# -- more means --------------------------------------------------------------------------------
def mean_absolute_error(
    labels,
    predictions,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The (weighted) mean of ``|predictions - labels|`` over everything seen, in
    ``mean_absolute_error/total`` and ``mean_absolute_error/count``."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    absolute_errors = abs_(subtract(predictions, labels))
    return mean(
        absolute_errors, weights, metrics_collections, updates_collections,
        name or "mean_absolute_error",
    )  # fmt: skip


def root_mean_squared_error(
    labels,
    predictions,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The square root of `mean_squared_error` over everything seen (the totals in
    ``root_mean_squared_error/total`` and ``/count``)."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    mse, update_mse = mean_squared_error(
        labels, predictions, weights, None, None, name or "root_mean_squared_error"
    )
    rmse = sqrt(mse)
    _collect(metrics_collections, rmse)
    update_op = sqrt(update_mse)
    _collect(updates_collections, update_op)
    return rmse, update_op


def mean_relative_error(
    labels,
    predictions,
    normalizer,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The (weighted) mean of ``|labels - predictions| / normalizer`` over everything seen
    (0 where ``normalizer`` is 0), in ``mean_relative_error/total`` and ``/count``."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    predictions, normalizer, _ = _remove_squeezable_dimensions(predictions, normalizer, None)
    relative_errors = where(
        equal(normalizer, 0.0),
        zeros_like(labels),
        divide(abs_(subtract(labels, predictions)), normalizer),
    )
    return mean(
        relative_errors, weights, metrics_collections, updates_collections,
        name or "mean_relative_error",
    )  # fmt: skip


def mean_cosine_distance(
    labels,
    predictions,
    dim,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """One minus the (weighted) mean over everything seen of the dot products of ``labels``
    and ``predictions`` (unit vectors) along ``dim``: the mean cosine distance, in
    ``mean_cosine_distance/total`` and ``/count``."""
    predictions, labels, weights = _remove_squeezable_dimensions(predictions, labels, weights)
    radial_diffs = reduce_sum(multiply(predictions, labels), axis=[dim], keepdims=True)
    mean_distance, update_op = mean(
        radial_diffs, weights, None, None, name or "mean_cosine_distance"
    )
    mean_distance = subtract(1.0, mean_distance)
    update_op = subtract(1.0, update_op)
    _collect(metrics_collections, mean_distance)
    _collect(updates_collections, update_op)
    return mean_distance, update_op


def mean_tensor(
    values,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The element-wise (weighted) mean of every ``values`` seen (all of one shape), in
    ``mean/total_tensor`` and ``mean/count_tensor``."""
    with variable_scope(name, "mean", [values, weights]):
        values = cast(values, _dtypes.float32)
        if not values.shape.is_fully_defined():
            raise ValueError(
                f"mean_tensor needs values of a fully known shape, got {values.shape} (at "
                f"{_user_location()})"
            )
        total = metric_variable(values.shape, _dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, _dtypes.float32, name="count_tensor")
        num_values = ones_like(values)
        if weights is not None:
            values, _, weights = _remove_squeezable_dimensions(values, None, weights)
            weights = _broadcast_weights(cast(weights, _dtypes.float32), values)
            values = multiply(values, weights)
            num_values = multiply(num_values, weights)
        update_total = total.assign_add(values)
        with control_dependencies([values]):
            update_count = count.assign_add(num_values)
        value = _div_no_nan(total.read_value(), maximum(count.read_value(), 0), "value")
        _collect(metrics_collections, value)
        update_op = _div_no_nan(update_total, maximum(update_count, 0), "update_op")
        _collect(updates_collections, update_op)
        return value, update_op


def percentage_below(
    values,
    threshold,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The (weighted) share of the ``values`` seen that are below ``threshold``, in
    ``percentage_below_threshold/total`` and ``/count``."""
    is_below = cast(less(values, threshold), _dtypes.float32)
    return mean(
        is_below, weights, metrics_collections, updates_collections,
        name or "percentage_below_threshold",
    )  # fmt: skip


# -- counts and ratios at thresholds -------------------------------------------------------------
def _at_thresholds(key: str, default_name: str):
    def count(
        labels,
        predictions,
        thresholds,
        weights=None,
        metrics_collections=None,
        updates_collections=None,
        name: Optional[str] = None,
    ):
        with variable_scope(name, default_name, [predictions, labels, weights]):
            values, update_ops = _confusion_matrix_at_thresholds(
                labels, predictions, list(thresholds), weights=weights, includes=(key,)
            )
            _collect(metrics_collections, values[key])
            _collect(updates_collections, update_ops[key])
            return values[key], update_ops[key]

    count.__name__ = f"{default_name}_at_thresholds"
    count.__doc__ = (
        f"The (weighted) number of {default_name.replace('_', ' ')} seen at each of the "
        f"``thresholds`` (a prediction above a threshold counts as positive; predictions in "
        f"[0, 1]), in ``{default_name}/{default_name}``."
    )
    return count


true_positives_at_thresholds = _at_thresholds("tp", "true_positives")
false_positives_at_thresholds = _at_thresholds("fp", "false_positives")
true_negatives_at_thresholds = _at_thresholds("tn", "true_negatives")
false_negatives_at_thresholds = _at_thresholds("fn", "false_negatives")


def _share_at_thresholds(other: str, default_name: str, labels, predictions, thresholds,
                         weights, metrics_collections, updates_collections, name):  # fmt: skip
    with variable_scope(name, default_name, [predictions, labels, weights]):
        values, update_ops = _confusion_matrix_at_thresholds(
            labels, predictions, list(thresholds), weights, includes=("tp", other)
        )
        epsilon = 1e-7

        def share(tp, o, op_name):
            return divide(tp, add(epsilon, add(tp, o)), name=op_name)

        value = share(values["tp"], values[other], "value")
        _collect(metrics_collections, value)
        update_op = share(update_ops["tp"], update_ops[other], "update_op")
        _collect(updates_collections, update_op)
        return value, update_op


def precision_at_thresholds(
    labels,
    predictions,
    thresholds,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The precision ``tp / (tp + fp)`` at each of the ``thresholds`` over everything seen
    (predictions in [0, 1], positive above a threshold)."""
    return _share_at_thresholds(
        "fp", "precision_at_thresholds", labels, predictions, thresholds, weights,
        metrics_collections, updates_collections, name,
    )  # fmt: skip


def recall_at_thresholds(
    labels,
    predictions,
    thresholds,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The recall ``tp / (tp + fn)`` at each of the ``thresholds`` over everything seen."""
    return _share_at_thresholds(
        "fn", "recall_at_thresholds", labels, predictions, thresholds, weights,
        metrics_collections, updates_collections, name,
    )  # fmt: skip


def _even_thresholds(num_thresholds: int, last: float) -> list:
    kepsilon = 1e-7
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - kepsilon] + inner + [last]


def sensitivity_at_specificity(
    labels,
    predictions,
    specificity,
    weights=None,
    num_thresholds: int = 200,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The sensitivity (recall) at the threshold whose specificity ``tn / (tn + fp)`` is
    closest to ``specificity``, over ``num_thresholds`` thresholds spread over [0, 1]."""
    if specificity < 0 or specificity > 1:
        raise ValueError(
            f"`specificity` must be in the range [0, 1]. Currently, `specificity` got "
            f"{specificity} (at {_user_location()})."
        )
    with variable_scope(name, "sensitivity_at_specificity", [predictions, labels, weights]):
        kepsilon = 1e-7
        thresholds = _even_thresholds(num_thresholds, 1.0 + kepsilon)
        values, update_ops = _confusion_matrix_at_thresholds(
            labels, predictions, thresholds, weights
        )

        def compute(tp, tn, fp, fn, op_name):
            specificities = divide(tn, tn + fp + kepsilon)
            index = cast(argmin(abs_(specificities - specificity), 0), _dtypes.int32)
            return divide(gather(tp, index), gather(tp, index) + gather(fn, index) + kepsilon,
                          name=op_name)  # fmt: skip

        value = compute(values["tp"], values["tn"], values["fp"], values["fn"], "value")
        _collect(metrics_collections, value)
        update_op = compute(
            update_ops["tp"], update_ops["tn"], update_ops["fp"], update_ops["fn"], "update_op"
        )
        _collect(updates_collections, update_op)
        return value, update_op


def specificity_at_sensitivity(
    labels,
    predictions,
    sensitivity,
    weights=None,
    num_thresholds: int = 200,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The specificity at the threshold whose sensitivity ``tp / (tp + fn)`` is closest to
    ``sensitivity`` (the last such threshold on ties), over ``num_thresholds`` thresholds
    spread over [0, 1]."""
    if sensitivity < 0 or sensitivity > 1:
        raise ValueError(
            f"`sensitivity` must be in the range [0, 1]. Currently, `sensitivity` is "
            f"{sensitivity} (at {_user_location()})."
        )
    with variable_scope(name, "specificity_at_sensitivity", [predictions, labels, weights]):
        kepsilon = 1e-7
        thresholds = _even_thresholds(num_thresholds, 1.0 - kepsilon)
        values, update_ops = _confusion_matrix_at_thresholds(
            labels, predictions, thresholds, weights
        )

        def compute(tp, tn, fp, fn, op_name):
            distance = abs_(divide(tp, tp + fn + kepsilon) - sensitivity)
            at_min = cast(equal(distance, reduce_min(distance)), _dtypes.int64)
            index = cast(argmax(cumsum(at_min), 0), _dtypes.int32)
            return divide(gather(tn, index), gather(tn, index) + gather(fp, index) + kepsilon,
                          name=op_name)  # fmt: skip

        value = compute(values["tp"], values["tn"], values["fp"], values["fn"], "value")
        _collect(metrics_collections, value)
        update_op = compute(
            update_ops["tp"], update_ops["tn"], update_ops["fp"], update_ops["fn"], "update_op"
        )
        _collect(updates_collections, update_op)
        return value, update_op


# -- per-class metrics ---------------------------------------------------------------------------
def _flat(t: Tensor) -> Tensor:
    return reshape(t, [-1]) if t.shape.ndims is None or t.shape.ndims > 1 else t


def mean_iou(
    labels,
    predictions,
    num_classes,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The mean over classes of the intersection over union ``tp / (tp + fp + fn)`` of the
    class ids ``labels`` and ``predictions`` (classes that appear in neither are left out),
    from the running confusion matrix ``mean_iou/total_confusion_matrix`` (float64); the
    update op returns the updated matrix, as in TensorFlow."""
    with variable_scope(name, "mean_iou", [predictions, labels, weights]):
        predictions, labels = convert_to_tensor(predictions), convert_to_tensor(labels)
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(
                f"Shapes {predictions.shape} and {labels.shape} are incompatible (at "
                f"{_user_location()})"
            )
        total_cm = metric_variable(
            [num_classes, num_classes], _dtypes.float64, name="total_confusion_matrix"
        )
        if weights is not None:
            weights = _flat(convert_to_tensor(weights))
        current = confusion_matrix(
            _flat(cast(labels, _dtypes.int64)), _flat(cast(predictions, _dtypes.int64)),
            cast(num_classes, _dtypes.int64), weights=weights, dtype=_dtypes.float64,
        )  # fmt: skip
        update_op = total_cm.assign_add(current)
        cm = total_cm.read_value()
        sum_over_row = cast(reduce_sum(cm, 0), _dtypes.float32)
        sum_over_col = cast(reduce_sum(cm, 1), _dtypes.float32)
        cm_diag = cast(diag_part(cm), _dtypes.float32)
        denominator = sum_over_row + sum_over_col - cm_diag
        num_valid = reduce_sum(cast(not_equal(denominator, 0), _dtypes.float32))
        denominator = where(greater(denominator, 0), denominator, ones_like(denominator))
        iou = divide(cm_diag, denominator)
        value = where(
            greater(num_valid, 0),
            reduce_sum(iou, name="mean_iou") / num_valid,
            zeros_like(num_valid),
        )
        _collect(metrics_collections, value)
        _collect(updates_collections, update_op)
        return value, update_op


def mean_per_class_accuracy(
    labels,
    predictions,
    num_classes,
    weights=None,
    metrics_collections=None,
    updates_collections=None,
    name: Optional[str] = None,
):
    """The mean over the ``num_classes`` classes of each class's (weighted) accuracy: how
    often an example of that label was predicted as it, in ``mean_accuracy/total`` (examples
    per class) and ``mean_accuracy/count`` (correct ones)."""
    with variable_scope(name, "mean_accuracy", [predictions, labels, weights]):
        labels = _flat(cast(labels, _dtypes.int64))
        predictions = _flat(convert_to_tensor(predictions))
        if not predictions.shape.is_compatible_with(labels.shape):
            raise ValueError(
                f"Shapes {predictions.shape} and {labels.shape} are incompatible (at "
                f"{_user_location()})"
            )
        total = metric_variable([num_classes], _dtypes.float32, name="total")
        count = metric_variable([num_classes], _dtypes.float32, name="count")
        ones = ones_like(labels, dtype=_dtypes.float32)
        if labels.dtype is not predictions.dtype:
            predictions = cast(predictions, labels.dtype)
        is_correct = cast(equal(predictions, labels), _dtypes.float32)
        if weights is not None:
            weights = cast(_flat(convert_to_tensor(weights)), _dtypes.float32)
            is_correct = is_correct * weights
            ones = ones * weights
        update_total = scatter_add(total, labels, ones)
        update_count = scatter_add(count, labels, is_correct)
        per_class = _div_no_nan(count.read_value(), maximum(total.read_value(), 0), "div_no_nan")
        value = reduce_mean(per_class, name="mean_accuracy")
        _collect(metrics_collections, value)
        update_op = _div_no_nan(update_count, maximum(update_total, 0), "update_op")
        _collect(updates_collections, update_op)
        return value, update_op


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

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
from ..framework.graph import Tensor, _user_location, control_dependencies
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.array_ops import identity, ones_like, reshape, size, zeros_like
from ..ops.constant_op import constant
from ..ops.extra_math_ops import confusion_matrix
from ..ops.gather_ops import gather
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
)
from ..ops.matrix_ops import diag_part
from ..ops.misc_ops import Assert
from ..ops.state_ops import scatter_add
from ..ops.variable_scope import variable_scope
from .losses import _broadcast_weights, _div_no_nan
from .metric_util import (  # noqa: F401 - defined there, reached here too
    _collect,
    _remove_squeezable_dimensions,
    metric_variable,
)
from .metrics_at_k import (  # noqa: F401 - defined there, reached here too
    average_precision_at_k,
    precision_at_k,
    precision_at_top_k,
    recall_at_k,
    recall_at_top_k,
    sparse_average_precision_at_k,
    sparse_precision_at_k,
)

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


# isort: split
# Names ``df.metrics`` has offered since this module also held the ranked metrics and their
# imports; kept so that code reaching them here still works.
from ..framework.graph import name_scope  # noqa: E402, F401
from ..framework.graph_keys import GraphKeys  # noqa: E402, F401
from ..ops.array_ops import concat, expand_dims, fill, squeeze, zeros  # noqa: E402, F401
from ..ops.array_ops import shape as shape_  # noqa: E402, F401
from ..ops.gather_ops import tile  # noqa: E402, F401
from ..ops.selection_ops import where_v2  # noqa: E402, F401
from ..ops.set_ops import set_difference, set_intersection, set_size  # noqa: E402, F401
from ..ops.variables import Variable  # noqa: E402, F401

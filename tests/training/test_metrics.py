"""`df.metrics`: TensorFlow's streaming numbers, names and local variables for each metric over
two batches, resetting by the local initializer, bad input, and metrics in control flow, saved
graphs and pictures."""

import numpy as np
import pytest

import dataflow as df

LABELS = np.array([1, 0, 1, 1, 0, 0, 1, 0], np.int64)
SCORES = np.array([0.9, 0.2, 0.6, 0.35, 0.55, 0.1, 0.8, 0.45], np.float32)
WEIGHTS = np.array([1.0, 2.0, 1.0, 0.5, 1.0, 0.0, 1.0, 3.0], np.float32)
BATCHES = (slice(0, 4), slice(4, 8))


def program():
    """The metrics the TensorFlow numbers below were recorded with (``df`` for ``tf``)."""
    labels = df.placeholder(df.int64, [None], name="labels")
    scores = df.placeholder(df.float32, [None], name="scores")
    weights = df.placeholder(df.float32, [None], name="weights")
    predicted = df.cast(scores > 0.5, df.int64)
    m = df.metrics
    metrics = {
        "accuracy": m.accuracy(labels, predicted),
        "accuracy_w": m.accuracy(labels, predicted, weights=weights),
        "mean": m.mean(scores),
        "mean_w": m.mean(scores, weights=weights),
        "precision": m.precision(labels, predicted),
        "recall_w": m.recall(labels, predicted, weights=weights),
        "mse": m.mean_squared_error(df.cast(labels, df.float32), scores),
        "auc": m.auc(labels, scores, num_thresholds=20),
        "auc_pr": m.auc(labels, scores, curve="PR", num_thresholds=20),
        "auc_pr_careful": m.auc(
            labels, scores, curve="PR", num_thresholds=20, summation_method="careful_interpolation"
        ),
        "auc_minoring_w": m.auc(
            labels, scores, weights=weights, num_thresholds=20, summation_method="minoring"
        ),
        "auc_majoring_thresholds": m.auc(
            labels, scores, thresholds=[0.3, 0.5, 0.7], summation_method="majoring"
        ),
    }
    return (labels, scores, weights), metrics


def feed(placeholders, batch):
    labels, scores, weights = placeholders
    return {labels: LABELS[batch], scores: SCORES[batch], weights: WEIGHTS[batch]}


# tensorflow.compat.v1 2.21 on `program` (tf.metrics.*): the update ops' results after the first
# batch (the values read then are the same) and after the second.
TENSORFLOW_AFTER_BATCHES = [
    {
        "accuracy": 0.75,
        "accuracy_w": 0.8888888955116272,
        "mean": 0.512499988079071,
        "mean_w": 0.4611111283302307,
        "precision": 1.0,
        "recall_w": 0.800000011920929,
        "mse": 0.15812498331069946,
        "auc": 0.9999990463256836,
        "auc_pr": 0.9999996423721313,
        "auc_pr_careful": 1.0,
        "auc_minoring_w": 0.9999995231628418,
        "auc_majoring_thresholds": 0.9999990463256836,
    },  # noqa: E501
    {
        "accuracy": 0.75,
        "accuracy_w": 0.8421052694320679,
        "mean": 0.4937500059604645,
        "mean_w": 0.5026315450668335,
        "precision": 0.75,
        "recall_w": 0.8571428656578064,
        "mse": 0.1484374850988388,
        "auc": 0.8749998211860657,
        "auc_pr": 0.9083331227302551,
        "auc_pr_careful": 0.908839225769043,
        "auc_minoring_w": 0.904761791229248,
        "auc_majoring_thresholds": 0.9374997615814209,
    },  # noqa: E501
]
TENSORFLOW_NAMES = {
    "accuracy": ("accuracy/value:0", "accuracy/update_op:0"),
    "accuracy_w": ("accuracy_1/value:0", "accuracy_1/update_op:0"),
    "mean": ("mean/value:0", "mean/update_op:0"),
    "mean_w": ("mean_1/value:0", "mean_1/update_op:0"),
    "precision": ("precision/value:0", "precision/update_op:0"),
    "recall_w": ("recall/value:0", "recall/update_op:0"),
    "mse": ("mean_squared_error/value:0", "mean_squared_error/update_op:0"),
    "auc": ("auc/value:0", "auc/update_op:0"),
    "auc_pr": ("auc_1/value:0", "auc_1/update_op:0"),
    "auc_pr_careful": ("auc_2/interpolate_pr_auc:0", "auc_2/interpolate_pr_auc_1:0"),
    "auc_minoring_w": ("auc_3/value:0", "auc_3/update_op:0"),
    "auc_majoring_thresholds": ("auc_4/value:0", "auc_4/update_op:0"),
}
AUC_COUNTS = ["true_positives", "false_negatives", "true_negatives", "false_positives"]
TENSORFLOW_LOCAL_VARIABLES = (
    [
        f"{scope}/{v}:0"
        for scope in ("accuracy", "accuracy_1", "mean", "mean_1")
        for v in ("total", "count")
    ]  # noqa: E501
    + ["precision/true_positives/count:0", "precision/false_positives/count:0"]
    + ["recall/true_positives/count:0", "recall/false_negatives/count:0"]
    + ["mean_squared_error/total:0", "mean_squared_error/count:0"]
    + [
        f"{scope}/{c}:0"
        for scope in ("auc", "auc_1", "auc_2", "auc_3", "auc_4")
        for c in AUC_COUNTS
    ]  # noqa: E501
)


def test_metrics_stream_tensorflow_numbers_bit_for_bit_over_two_batches():
    placeholders, metrics = program()
    with df.Session() as session:
        session.run(df.local_variables_initializer())
        for batch, expected in zip(BATCHES, TENSORFLOW_AFTER_BATCHES):
            updates = session.run(
                {k: u for k, (v, u) in metrics.items()}, feed(placeholders, batch)
            )
            values = session.run({k: v for k, (v, u) in metrics.items()})
            assert {k: float(x) for k, x in updates.items()} == expected
            assert {k: float(x) for k, x in values.items()} == expected


def test_metric_variables_are_named_and_collected_as_in_tensorflow():
    _, metrics = program()
    assert {k: (v.name, u.name) for k, (v, u) in metrics.items()} == TENSORFLOW_NAMES
    assert [v.name for v in df.local_variables()] == TENSORFLOW_LOCAL_VARIABLES
    assert df.get_collection(df.GraphKeys.METRIC_VARIABLES) == df.local_variables()
    assert df.global_variables() == [] and df.trainable_variables() == []


def test_the_local_initializer_starts_the_count_again():
    placeholders, metrics = program()
    accuracy, update = metrics["accuracy_w"]
    with df.Session() as session:
        session.run(df.local_variables_initializer())
        assert session.run(accuracy) == 0.0  # nothing seen: 0, not nan
        session.run(update, feed(placeholders, BATCHES[1]))
        session.run(df.local_variables_initializer())
        session.run(update, feed(placeholders, BATCHES[0]))
        assert float(session.run(accuracy)) == TENSORFLOW_AFTER_BATCHES[0]["accuracy_w"]


def test_collections_receive_the_value_and_the_update():
    value, update = df.metrics.recall(
        [1, 0], [1, 1], metrics_collections=["values"], updates_collections=["updates"], name="my"
    )
    assert df.get_collection("values") == [value] and df.get_collection("updates") == [update]
    assert value.name == "my/value:0"


def test_counts_of_each_kind():
    labels, predictions = [True, True, False, False, True], [True, False, True, False, True]
    weights = [1.0, 2.0, 3.0, 4.0, 0.5]
    counts = [
        df.metrics.true_positives(labels, predictions, weights=weights),
        df.metrics.false_negatives(labels, predictions, weights=weights),
        df.metrics.false_positives(labels, predictions, weights=weights),
        df.metrics.true_negatives(labels, predictions),
    ]
    assert [v.name for v in df.local_variables()] == [
        "true_positives/count:0",
        "false_negatives/count:0",
        "false_positives/count:0",
        "true_negatives/count:0",
    ]
    with df.Session() as session:
        session.run(df.local_variables_initializer())
        assert session.run([u for _, u in counts]) == [1.5, 2.0, 3.0, 1.0]


def test_labels_predictions_and_weights_with_a_trailing_one_are_squeezed():
    value, update = df.metrics.accuracy(
        [[1], [0], [1]], np.array([1, 1, 1]), weights=np.array([[1.0], [1.0], [0.0]])
    )
    with df.Session() as session:
        session.run(df.local_variables_initializer())
        assert session.run(update) == 0.5


def test_bad_arguments_are_errors_naming_the_line():
    with pytest.raises(ValueError, match=r"Curve must be either ROC or PR.*test_metrics\.py"):
        df.metrics.auc([1, 0], [0.5, 0.5], curve="XY")
    with pytest.raises(ValueError, match="Invalid summation_method: simpson"):
        df.metrics.auc([1, 0], [0.5, 0.5], summation_method="simpson")
    with pytest.raises(ValueError, match=r"incompatible.*test_metrics\.py"):
        df.metrics.accuracy([1, 0, 1], [1, 0])


def test_a_prediction_outside_0_1_fails_the_auc_update_and_leaves_the_counts():
    scores = df.placeholder(df.float32, [None], name="scores")
    value, update = df.metrics.auc(np.array([1, 0]), scores, num_thresholds=5)
    with df.Session() as session:
        session.run(df.local_variables_initializer())
        session.run(update, {scores: [0.9, 0.2]})
        with pytest.raises(
            df.errors.InvalidArgumentError, match=r"predictions must be in \[0, 1\]"
        ):
            session.run(update, {scores: [1.5, 0.2]})
        assert session.run(value) == pytest.approx(1.0, abs=1e-5)


def test_metrics_update_inside_a_while_loop_and_a_cond():
    def body(i):
        _, update = df.metrics.mean(df.cast(i, df.float32), name="loop_mean")
        with df.control_dependencies([update]):
            return i + 1

    loop = df.while_loop(lambda i: i < 4, body, [df.constant(0)])
    total, count = df.local_variables()
    evaluate = df.placeholder(df.bool, [], name="evaluate")
    branch = df.cond(
        evaluate, lambda: df.metrics.accuracy([1, 1, 0], [1, 0, 0])[1], lambda: df.constant(-1.0)
    )
    correct, seen = df.local_variables()[2:]
    with df.Session() as session:
        session.run(df.local_variables_initializer())
        session.run(loop)
        # One variable pair for the loop, made once, summing 0 + 1 + 2 + 3 over four values.
        assert session.run([total.value(), count.value()]) == [6.0, 4.0]
        assert session.run(branch, {evaluate: False}) == -1.0
        assert session.run([correct.value(), seen.value()]) == [0.0, 0.0]
        assert session.run(branch, {evaluate: True}) == np.float32(2 / 3)
        assert session.run([correct.value(), seen.value()]) == [2.0, 3.0]


def test_a_saved_graph_of_metrics_streams_the_same_and_renders(tmp_path):
    graph = df.Graph()
    with graph.as_default():
        placeholders, metrics = program()
        init = df.local_variables_initializer()
    df.io.save_graph(graph, tmp_path / "metrics.dfg")
    loaded = df.io.load_graph(tmp_path / "metrics.dfg")
    assert [v.name for v in loaded.get_collection(df.GraphKeys.LOCAL_VARIABLES)] == (
        TENSORFLOW_LOCAL_VARIABLES
    )
    updates = [u.name for _, u in metrics.values()]
    results = []
    for g in (graph, loaded):
        with df.Session(graph=g) as session:
            session.run(init.name)
            for batch in BATCHES:
                names = {p.name: value for p, value in feed(placeholders, batch).items()}
                results.append(session.run(updates, names))
    assert results[:2] == results[2:]
    assert "auc_2" in df.render(loaded, format="dot").source

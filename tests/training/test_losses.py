"""`df.losses`: TensorFlow's numbers and names for each loss, weighting and reduction, the
loss collections and the regularization losses, gradients, and losses in control flow, saved
graphs and pictures."""

import numpy as np
import pytest

import dataflow as df

LABELS = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], np.float32)
PREDICTIONS = np.array([[0.2, 0.7], [0.9, 0.4], [0.6, 0.99]], np.float32)
LOGITS = np.array([[-1.0, 2.0], [0.5, 0.3], [3.0, -0.5]], np.float32)
CLASSES = np.array([1, 0, 1], np.int32)
WEIGHTS = {
    "default": None,
    "scalar": 2.0,
    "column": np.array([[1.0], [0.0], [2.0]], np.float32),
    "full": np.array([[1.0, 0.5], [0.0, 0.0], [2.0, 1.0]], np.float32),
}
REDUCTIONS = ["NONE", "SUM", "MEAN", "SUM_OVER_BATCH_SIZE", "SUM_BY_NONZERO_WEIGHTS"]
LOSSES = {
    "absolute_difference": lambda **k: df.losses.absolute_difference(LABELS, PREDICTIONS, **k),
    "mean_squared_error": lambda **k: df.losses.mean_squared_error(LABELS, PREDICTIONS, **k),
    "huber_loss": lambda **k: df.losses.huber_loss(LABELS, PREDICTIONS * 3.0, delta=0.5, **k),
    "log_loss": lambda **k: df.losses.log_loss(LABELS, PREDICTIONS, **k),
    "hinge_loss": lambda **k: df.losses.hinge_loss(LABELS, LOGITS, **k),
    "sigmoid_cross_entropy": lambda **k: df.losses.sigmoid_cross_entropy(
        LABELS, LOGITS, label_smoothing=0.1, **k
    ),
    "softmax_cross_entropy": lambda **k: df.losses.softmax_cross_entropy(
        LABELS, LOGITS, label_smoothing=0.2, **k
    ),
    "sparse_softmax_cross_entropy": lambda **k: df.losses.sparse_softmax_cross_entropy(
        CLASSES, LOGITS, **k
    ),
    "cosine_distance": lambda **k: df.losses.cosine_distance(
        df.nn.l2_normalize(LABELS + 0.1, 1), df.nn.l2_normalize(PREDICTIONS, 1), axis=1, **k
    ),
}
PER_EXAMPLE = ("sparse_softmax_cross_entropy", "softmax_cross_entropy", "cosine_distance")


def build_every_loss() -> dict:
    """Every loss with every weighting and reduction, in one graph, in the order the
    TensorFlow program below built them (so that the names match)."""
    built = {}
    for loss, make in LOSSES.items():
        for weighting, weights in WEIGHTS.items():
            if loss in PER_EXAMPLE and weighting == "full":
                continue
            if loss == "softmax_cross_entropy" and weighting == "column":
                weights = weights[:, 0]
            for reduction in REDUCTIONS:
                kwargs = {"reduction": getattr(df.losses.Reduction, reduction)}
                if weights is not None:
                    kwargs["weights"] = weights
                built[(loss, weighting, reduction)] = make(**kwargs)
    return built


# The same program in tensorflow.compat.v1 2.21 (tf.losses.* and tf.nn.l2_normalize, built in
# `build_every_loss`'s order), a selection of its results: (name, value).
TENSORFLOW = {
    ("absolute_difference", "default", "SUM_BY_NONZERO_WEIGHTS"): (
        "absolute_difference_4/value:0",
        0.23499999940395355,
    ),  # noqa: E501
    ("absolute_difference", "scalar", "SUM_OVER_BATCH_SIZE"): (
        "absolute_difference_8/value:0",
        0.4699999988079071,
    ),  # noqa: E501
    ("absolute_difference", "column", "NONE"): (
        "absolute_difference_10/Mul:0",
        [
            [0.20000000298023224, 0.30000001192092896],
            [0.0, 0.0],
            [0.7999999523162842, 0.019999980926513672],
        ],
    ),  # noqa: E501
    ("absolute_difference", "column", "SUM"): ("absolute_difference_11/Sum:0", 1.3199999332427979),  # noqa: E501
    ("absolute_difference", "column", "MEAN"): (
        "absolute_difference_12/value:0",
        0.2199999839067459,
    ),  # noqa: E501
    ("absolute_difference", "column", "SUM_BY_NONZERO_WEIGHTS"): (
        "absolute_difference_14/value:0",
        0.32999998331069946,
    ),  # noqa: E501
    ("mean_squared_error", "default", "SUM_BY_NONZERO_WEIGHTS"): (
        "mean_squared_error_4/value:0",
        0.07668332755565643,
    ),  # noqa: E501
    ("mean_squared_error", "scalar", "SUM_OVER_BATCH_SIZE"): (
        "mean_squared_error_8/value:0",
        0.15336665511131287,
    ),  # noqa: E501
    ("mean_squared_error", "column", "NONE"): (
        "mean_squared_error_10/Mul:0",
        [
            [0.04000000283122063, 0.09000000357627869],
            [0.0, 0.0],
            [0.31999996304512024, 0.0001999996165977791],
        ],
    ),  # noqa: E501
    ("mean_squared_error", "column", "SUM"): ("mean_squared_error_11/Sum:0", 0.45019999146461487),  # noqa: E501
    ("mean_squared_error", "column", "MEAN"): (
        "mean_squared_error_12/value:0",
        0.07503332942724228,
    ),  # noqa: E501
    ("mean_squared_error", "column", "SUM_BY_NONZERO_WEIGHTS"): (
        "mean_squared_error_14/value:0",
        0.11254999786615372,
    ),  # noqa: E501
    ("huber_loss", "default", "SUM_BY_NONZERO_WEIGHTS"): (
        "huber_loss_4/value:0",
        0.48916664719581604,
    ),  # noqa: E501
    ("huber_loss", "scalar", "SUM_OVER_BATCH_SIZE"): ("huber_loss_8/value:0", 0.9783332943916321),  # noqa: E501
    ("huber_loss", "column", "NONE"): (
        "huber_loss_10/Mul_3:0",
        [
            [0.17500001192092896, 0.4249999523162842],
            [0.0, 0.0],
            [0.5500000715255737, 1.7200000286102295],
        ],
    ),  # noqa: E501
    ("huber_loss", "column", "SUM"): ("huber_loss_11/Sum:0", 2.870000123977661),  # noqa: E501
    ("huber_loss", "column", "MEAN"): ("huber_loss_12/value:0", 0.47833335399627686),  # noqa: E501
    ("huber_loss", "column", "SUM_BY_NONZERO_WEIGHTS"): (
        "huber_loss_14/value:0",
        0.7175000309944153,
    ),  # noqa: E501
    ("log_loss", "default", "SUM_BY_NONZERO_WEIGHTS"): ("log_loss_4/value:0", 0.2861465811729431),  # noqa: E501
    ("log_loss", "scalar", "SUM_OVER_BATCH_SIZE"): ("log_loss_8/value:0", 0.5722931623458862),  # noqa: E501
    ("log_loss", "column", "NONE"): (
        "log_loss_10/Mul_2:0",
        [
            [0.22314338386058807, 0.35667479038238525],
            [0.0, 0.0],
            [1.021650791168213, 0.020100411027669907],
        ],
    ),  # noqa: E501
    ("log_loss", "column", "SUM"): ("log_loss_11/Sum:0", 1.6215693950653076),  # noqa: E501
    ("log_loss", "column", "MEAN"): ("log_loss_12/value:0", 0.2702615559101105),  # noqa: E501
    ("log_loss", "column", "SUM_BY_NONZERO_WEIGHTS"): ("log_loss_14/value:0", 0.4053923487663269),  # noqa: E501
    ("hinge_loss", "default", "SUM_BY_NONZERO_WEIGHTS"): (
        "hinge_loss_4/value:0",
        0.550000011920929,
    ),  # noqa: E501
    ("hinge_loss", "scalar", "SUM_OVER_BATCH_SIZE"): ("hinge_loss_8/value:0", 1.100000023841858),  # noqa: E501
    ("hinge_loss", "column", "NONE"): (
        "hinge_loss_10/Mul_2:0",
        [[0.0, 0.0], [0.0, 0.0], [0.0, 3.0]],
    ),  # noqa: E501
    ("hinge_loss", "column", "SUM"): ("hinge_loss_11/Sum:0", 3.0),  # noqa: E501
    ("hinge_loss", "column", "MEAN"): ("hinge_loss_12/value:0", 0.5),  # noqa: E501
    ("hinge_loss", "column", "SUM_BY_NONZERO_WEIGHTS"): ("hinge_loss_14/value:0", 0.75),  # noqa: E501
    ("sigmoid_cross_entropy", "default", "SUM_BY_NONZERO_WEIGHTS"): (
        "sigmoid_cross_entropy_loss_4/value:0",
        0.5127143859863281,
    ),  # noqa: E501
    ("sigmoid_cross_entropy", "scalar", "SUM_OVER_BATCH_SIZE"): (
        "sigmoid_cross_entropy_loss_8/value:0",
        1.0254287719726562,
    ),  # noqa: E501
    ("sigmoid_cross_entropy", "column", "NONE"): (
        "sigmoid_cross_entropy_loss_10/Mul_1:0",
        [
            [0.36326169967651367, 0.22692802548408508],
            [0.0, 0.0],
            [0.3971748948097229, 1.8981540203094482],
        ],
    ),  # noqa: E501
    ("sigmoid_cross_entropy", "column", "SUM"): (
        "sigmoid_cross_entropy_loss_11/Sum:0",
        2.8855185508728027,
    ),  # noqa: E501
    ("sigmoid_cross_entropy", "column", "MEAN"): (
        "sigmoid_cross_entropy_loss_12/value:0",
        0.480919748544693,
    ),  # noqa: E501
    ("sigmoid_cross_entropy", "column", "SUM_BY_NONZERO_WEIGHTS"): (
        "sigmoid_cross_entropy_loss_14/value:0",
        0.7213796377182007,
    ),  # noqa: E501
    ("softmax_cross_entropy", "default", "SUM_BY_NONZERO_WEIGHTS"): (
        "softmax_cross_entropy_loss_4/value:0",
        1.390092372894287,
    ),  # noqa: E501
    ("softmax_cross_entropy", "scalar", "SUM_OVER_BATCH_SIZE"): (
        "softmax_cross_entropy_loss_8/value:0",
        2.780184745788574,
    ),  # noqa: E501
    ("softmax_cross_entropy", "column", "NONE"): (
        "softmax_cross_entropy_loss_10/Mul_1:0",
        [0.3485873341560364, 0.0, 6.407101631164551],
    ),  # noqa: E501
    ("softmax_cross_entropy", "column", "SUM"): (
        "softmax_cross_entropy_loss_11/Sum:0",
        6.7556891441345215,
    ),  # noqa: E501
    ("softmax_cross_entropy", "column", "MEAN"): (
        "softmax_cross_entropy_loss_12/value:0",
        2.251896381378174,
    ),  # noqa: E501
    ("softmax_cross_entropy", "column", "SUM_BY_NONZERO_WEIGHTS"): (
        "softmax_cross_entropy_loss_14/value:0",
        3.3778445720672607,
    ),  # noqa: E501
    ("sparse_softmax_cross_entropy", "default", "SUM_BY_NONZERO_WEIGHTS"): (
        "sparse_softmax_cross_entropy_loss_4/value:0",
        1.39215886592865,
    ),  # noqa: E501
    ("sparse_softmax_cross_entropy", "scalar", "SUM_OVER_BATCH_SIZE"): (
        "sparse_softmax_cross_entropy_loss_8/value:0",
        2.7843177318573,
    ),  # noqa: E501
    ("sparse_softmax_cross_entropy", "column", "NONE"): (
        "sparse_softmax_cross_entropy_loss_10/Mul:0",
        [0.04858732968568802, 0.0, 7.059500694274902],
    ),  # noqa: E501
    ("sparse_softmax_cross_entropy", "column", "SUM"): (
        "sparse_softmax_cross_entropy_loss_11/Sum:0",
        7.10808801651001,
    ),  # noqa: E501
    ("sparse_softmax_cross_entropy", "column", "MEAN"): (
        "sparse_softmax_cross_entropy_loss_12/value:0",
        2.3693625926971436,
    ),  # noqa: E501
    ("sparse_softmax_cross_entropy", "column", "SUM_BY_NONZERO_WEIGHTS"): (
        "sparse_softmax_cross_entropy_loss_14/value:0",
        3.554044008255005,
    ),  # noqa: E501
    ("cosine_distance", "default", "SUM_BY_NONZERO_WEIGHTS"): (
        "cosine_distance_loss_4/value:0",
        0.033170998096466064,
    ),  # noqa: E501
    ("cosine_distance", "scalar", "SUM_OVER_BATCH_SIZE"): (
        "cosine_distance_loss_8/value:0",
        0.06634199619293213,
    ),  # noqa: E501
    ("cosine_distance", "column", "NONE"): (
        "cosine_distance_loss_10/Mul_1:0",
        [[0.017552673816680908], [0.0], [0.057578086853027344]],
    ),  # noqa: E501
    ("cosine_distance", "column", "SUM"): ("cosine_distance_loss_11/Sum_1:0", 0.07513076066970825),  # noqa: E501
    ("cosine_distance", "column", "MEAN"): (
        "cosine_distance_loss_12/value:0",
        0.025043586269021034,
    ),  # noqa: E501
    ("cosine_distance", "column", "SUM_BY_NONZERO_WEIGHTS"): (
        "cosine_distance_loss_14/value:0",
        0.037565380334854126,
    ),  # noqa: E501
}


def test_losses_give_tensorflow_names_and_values_for_each_weighting_and_reduction():
    built = build_every_loss()
    assert len(df.get_collection(df.GraphKeys.LOSSES)) == len(built) == 165
    with df.Session() as session:
        values = session.run({key: built[key] for key in TENSORFLOW})
    for key, (name, expected) in TENSORFLOW.items():
        assert built[key].name == name, key
        assert values[key].dtype == np.float32
        np.testing.assert_allclose(values[key], expected, rtol=1e-6, err_msg=str(key))


def run(*fetches, feed_dict=None):
    with df.Session() as session:
        return session.run(list(fetches), feed_dict)


# -- weighting and reducing ------------------------------------------------------------------------
def test_all_zero_weights_give_zero_rather_than_nan():
    zero = np.zeros((3, 1), np.float32)
    values = run(
        df.losses.mean_squared_error(LABELS, PREDICTIONS, weights=zero),
        df.losses.absolute_difference(
            LABELS, PREDICTIONS, weights=zero, reduction=df.losses.Reduction.MEAN
        ),
    )
    assert values == [0.0, 0.0]


def test_a_float64_loss_is_reduced_in_float32_and_returned_as_float64():
    loss = df.losses.compute_weighted_loss(
        df.constant([1.0 + 1e-12, 2.0], df.float64), reduction=df.losses.Reduction.SUM
    )
    assert loss.dtype is df.float64
    (value,) = run(loss)
    assert value.dtype == np.float64 and value == 3.0


def test_the_loss_collection_may_be_chosen_or_left_out():
    kept = df.losses.mean_squared_error(LABELS, PREDICTIONS, loss_collection="mine")
    df.losses.mean_squared_error(LABELS, PREDICTIONS, loss_collection=None)
    assert df.losses.get_losses() == []
    assert df.losses.get_losses(loss_collection="mine") == [kept]


def test_bad_arguments_are_errors_naming_the_line():
    with pytest.raises(ValueError, match=r"Invalid Reduction Key sum.*test_losses\.py"):
        df.losses.mean_squared_error(LABELS, PREDICTIONS, reduction="sum")
    with pytest.raises(ValueError, match=r"Mismatch at dim 1.*weights.shape=\(3, 3\)"):
        df.losses.mean_squared_error(LABELS, PREDICTIONS, weights=np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"values.rank=2. weights.rank=1"):
        df.losses.log_loss(LABELS, PREDICTIONS, weights=np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"Argument `predictions` must not be None"):
        df.losses.huber_loss(LABELS, None)
    with pytest.raises(ValueError, match=r"incompatible.*test_losses\.py"):
        df.losses.absolute_difference(LABELS, PREDICTIONS[:, :1] * np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="You must specify argument `axis`"):
        df.losses.cosine_distance(LABELS, PREDICTIONS)


def test_sparse_labels_and_weights_with_a_trailing_one_are_squeezed():
    flat = df.losses.sparse_softmax_cross_entropy(CLASSES, LOGITS, weights=[1.0, 0.0, 2.0])
    column = df.losses.sparse_softmax_cross_entropy(
        CLASSES[:, None], LOGITS, weights=[[1.0], [0.0], [2.0]]
    )
    a, b = run(flat, column)
    assert a == b


# -- the collections -------------------------------------------------------------------------------
def test_total_loss_adds_the_losses_and_the_regularization_losses_of_get_variable():
    with df.variable_scope("layer", regularizer=lambda w: 0.5 * df.reduce_sum(w * w)):
        w = df.get_variable("w", initializer=np.array([2.0, 2.0], np.float32))
    assert [t.name for t in df.losses.get_regularization_losses()] == [
        "layer/w/Regularizer/mul_1:0"
    ]
    data = df.losses.absolute_difference([0.0], df.reshape(w[0], [1]))
    total = df.losses.get_total_loss()
    only_data = df.losses.get_total_loss(add_regularization_losses=False, name="data_only")
    regularization = df.losses.get_regularization_loss()
    assert total.name == "total_loss:0" and only_data.name == "data_only:0"
    assert regularization.name == "total_regularization_loss:0"
    assert df.losses.get_losses() == [data]
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        assert session.run([total, only_data, regularization]) == [6.0, 2.0, 4.0]


def test_regularization_loss_without_regularizers_is_zero_and_total_needs_a_loss():
    assert run(df.losses.get_regularization_loss()) == [0.0]
    with pytest.raises(ValueError, match="No losses to add up"):
        df.losses.get_total_loss()
    df.losses.add_loss(df.constant(3.0, name="custom"))
    assert run(df.losses.get_total_loss()) == [3.0]


# -- gradients, control flow, saving, pictures -----------------------------------------------------
def numeric_gradient_check(make, x: np.ndarray, eps=1e-3, rtol=2e-3, atol=1e-4):
    """The losses compute in float32, too coarse for `check_gradients`' float64 differences:
    central differences with a larger step instead."""
    graph = df.Graph()
    with graph.as_default():
        placeholder = df.placeholder(df.float32, x.shape, name="x")
        loss = make(placeholder)
        (grad,) = df.gradients(loss, [placeholder])
        with df.Session() as session:
            symbolic = session.run(grad, {placeholder: x})
            numeric = np.zeros_like(x)
            for index in np.ndindex(x.shape):
                up, down = x.copy(), x.copy()
                up[index] += eps
                down[index] -= eps
                numeric[index] = (
                    session.run(loss, {placeholder: up}) - session.run(loss, {placeholder: down})
                ) / (2 * eps)
    np.testing.assert_allclose(symbolic, numeric, rtol=rtol, atol=atol)


@pytest.mark.parametrize(
    "make",
    [
        lambda x: df.losses.mean_squared_error(LABELS, x, weights=WEIGHTS["column"]),
        lambda x: df.losses.absolute_difference(LABELS, x, reduction=df.losses.Reduction.MEAN),
        lambda x: df.losses.huber_loss(LABELS, 2.0 * x, delta=0.5, weights=WEIGHTS["full"]),
        lambda x: df.losses.log_loss(LABELS, x),
        lambda x: df.losses.hinge_loss(LABELS, x * 3.0),
        lambda x: df.losses.sigmoid_cross_entropy(LABELS, x, label_smoothing=0.1),
        # (labels summing to 1: TensorFlow's gradient is softmax - labels, right only then)
        lambda x: df.losses.softmax_cross_entropy(
            [[0.25, 0.75], [0.9, 0.1], [0.5, 0.5]], x, label_smoothing=0.2
        ),
        lambda x: df.losses.sparse_softmax_cross_entropy(CLASSES, x, weights=[1.0, 0.0, 2.0]),
        lambda x: df.losses.cosine_distance(LABELS, x, axis=1),
    ],
    ids=list(LOSSES),
)
def test_losses_have_gradients(make):
    numeric_gradient_check(make, PREDICTIONS.copy())


def test_all_zero_weights_give_a_zero_gradient_not_nan():
    x = df.constant(PREDICTIONS)
    loss = df.losses.mean_squared_error(LABELS, x, weights=np.zeros((3, 1), np.float32))
    (grad,) = df.gradients(loss, [x])
    np.testing.assert_array_equal(run(grad)[0], np.zeros((3, 2)))


def test_losses_inside_a_while_loop_and_a_cond():
    def body(i, total):
        scaled = df.cast(i, df.float32) * PREDICTIONS
        return i + 1, total + df.losses.mean_squared_error(LABELS, scaled, loss_collection=None)

    _, looped = df.while_loop(lambda i, t: i < 3, body, [df.constant(0), df.constant(0.0)])
    use_hinge = df.placeholder(df.bool, [], name="use_hinge")
    chosen = df.cond(
        use_hinge,
        lambda: df.losses.hinge_loss(LABELS, LOGITS, loss_collection=None),
        lambda: df.losses.log_loss(LABELS, PREDICTIONS, loss_collection=None),
    )
    expected = sum(np.mean((LABELS - i * PREDICTIONS) ** 2) for i in range(3))
    (value,) = run(looped)
    np.testing.assert_allclose(value, expected, rtol=1e-6)
    hinge = TENSORFLOW[("hinge_loss", "default", "SUM_BY_NONZERO_WEIGHTS")][1]
    log = TENSORFLOW[("log_loss", "default", "SUM_BY_NONZERO_WEIGHTS")][1]
    np.testing.assert_allclose(run(chosen, feed_dict={use_hinge: True}), [hinge], rtol=1e-6)
    np.testing.assert_allclose(run(chosen, feed_dict={use_hinge: False}), [log], rtol=1e-6)


def test_a_saved_graph_of_losses_loads_with_its_collection_and_renders(tmp_path):
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [3, 2], name="x")
        df.losses.softmax_cross_entropy(LABELS, x, weights=[1.0, 0.0, 2.0], label_smoothing=0.1)
        df.losses.huber_loss(LABELS, x)
        total = df.losses.get_total_loss()
    df.io.save_graph(graph, tmp_path / "losses.dfg")
    loaded = df.io.load_graph(tmp_path / "losses.dfg")
    assert [t.name for t in loaded.get_collection(df.GraphKeys.LOSSES)] == [
        "softmax_cross_entropy_loss/value:0",
        "huber_loss/value:0",
    ]
    values = []
    for g in (graph, loaded):
        with df.Session(graph=g) as session:
            values.append(session.run(total.name, {"x:0": LOGITS}))
    assert values[0] == values[1]
    assert "softmax_cross_entropy_loss" in df.render(loaded, format="dot").source

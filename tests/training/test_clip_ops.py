"""Clipping by norm (`df.clip_by_norm`, `df.clip_by_global_norm`, `df.global_norm`,
`df.clip_by_average_norm`) and the losses and norms of `df.nn` that training uses
(`l2_loss`, `l2_normalize`, the sigmoid cross entropies): TensorFlow's numbers and names,
gradients, control flow, saving and pictures."""

import numpy as np
import pytest
from autodiff.gradient_checking import check_gradients

import dataflow as df

A = np.array([[3.0, 4.0], [1.0, -2.0]], np.float32)
B = np.array([1.0, 2.0, 2.0], np.float32)


def run(*fetches, feed_dict=None):
    with df.Session() as session:
        return session.run(list(fetches), feed_dict)


# -- clipping --------------------------------------------------------------------------------------
# Values and names from tensorflow.compat.v1 2.21: a = tf.constant(A), b = tf.constant(B),
# tf.global_norm([a, None, b]), tf.clip_by_global_norm([a, None, b], 2.0),
# tf.clip_by_norm(a, 2.0), tf.clip_by_norm(a, 2.0, axes=[1]), tf.clip_by_norm(a, -1.0),
# tf.clip_by_average_norm(a, 0.5), tf.clip_by_global_norm([b], 2.0, use_norm=tf.constant(6.0)).
TF_GLOBAL_NORM = 6.244997978210449
TF_CLIPPED_BY_GLOBAL_NORM = (
    [[0.9607689380645752, 1.2810252904891968], [0.3202563226222992, -0.6405126452445984]],
    [0.3202563226222992, 0.6405126452445984, 0.6405126452445984],
)
TF_CLIP_BY_NORM = [
    [1.0954450368881226, 1.4605934619903564],
    [0.3651483654975891, -0.7302967309951782],
]
TF_CLIP_BY_NORM_AXES_1 = [
    [1.2000000476837158, 1.600000023841858],
    [0.8944271802902222, -1.7888543605804443],
]
TF_CLIP_BY_AVERAGE_NORM = [
    [1.095445156097412, 1.4605934619903564],
    [0.3651483654975891, -0.7302967309951782],
]
TF_USE_NORM_6 = [0.3333333432674408, 0.6666666865348816, 0.6666666865348816]


def test_global_norm_and_clip_by_global_norm_give_tensorflow_values_and_names():
    a, b = df.constant(A), df.constant(B)
    norm = df.global_norm([a, None, b])
    (clipped_a, none, clipped_b), norm_used = df.clip_by_global_norm([a, None, b], 2.0)
    assert none is None
    assert norm.name == "global_norm/global_norm:0"
    assert norm_used.name == "global_norm_1/global_norm:0"
    assert clipped_a.name == "clip_by_global_norm/clip_by_global_norm/_0:0"
    assert clipped_b.name == "clip_by_global_norm/clip_by_global_norm/_2:0"
    values = run(norm, clipped_a, clipped_b, norm_used)
    assert values[0] == np.float32(TF_GLOBAL_NORM) and values[3] == values[0]
    np.testing.assert_allclose(values[1], TF_CLIPPED_BY_GLOBAL_NORM[0], rtol=1e-7)
    np.testing.assert_allclose(values[2], TF_CLIPPED_BY_GLOBAL_NORM[1], rtol=1e-7)


def test_clip_by_global_norm_uses_a_given_norm_and_keeps_small_lists_unchanged():
    b = df.constant(B)
    (by_given_norm,), given = df.clip_by_global_norm([b], 2.0, use_norm=df.constant(6.0))
    (unchanged,), norm = df.clip_by_global_norm([b], 10.0)
    values = run(by_given_norm, given, unchanged, norm)
    np.testing.assert_allclose(values[0], TF_USE_NORM_6, rtol=1e-7)
    assert values[1] == 6.0 and values[3] == 3.0
    np.testing.assert_array_equal(values[2], B)


def test_a_non_finite_global_norm_makes_every_clipped_tensor_nan():
    (clipped, other), norm = df.clip_by_global_norm(
        [df.constant([np.inf, 1.0]), df.constant(2.0)], 1.0
    )
    clipped, other, norm = run(clipped, other, norm)
    assert np.isinf(norm) and np.all(np.isnan(clipped)) and np.isnan(other)


def test_clip_by_norm_gives_tensorflow_values_over_all_axes_or_some():
    a = df.constant(A)
    whole, by_row, negative = (
        df.clip_by_norm(a, 2.0),
        df.clip_by_norm(a, 2.0, axes=[1]),
        df.clip_by_norm(a, -1.0),
    )
    assert [t.name for t in (whole, by_row, negative)] == [
        "clip_by_norm:0",
        "clip_by_norm_1:0",
        "clip_by_norm_2:0",
    ]
    whole, by_row, negative = run(whole, by_row, negative)
    np.testing.assert_allclose(whole, TF_CLIP_BY_NORM, rtol=1e-7)
    np.testing.assert_allclose(by_row, TF_CLIP_BY_NORM_AXES_1, rtol=1e-7)
    np.testing.assert_array_equal(negative, np.zeros((2, 2)))


def test_clip_by_norm_leaves_a_short_tensor_and_a_zero_tensor_alone():
    small, zero = run(df.clip_by_norm(df.constant(B), 3.5), df.clip_by_norm(df.zeros([2]), 1.0))
    np.testing.assert_array_equal(small, B)
    np.testing.assert_array_equal(zero, [0.0, 0.0])


def test_clip_by_norm_takes_a_tensor_clip_norm_and_refuses_a_vector():
    a = df.constant(A)
    limit = df.placeholder(df.float32, [], name="limit")
    (clipped,) = run(df.clip_by_norm(a, limit), feed_dict={limit: 2.0})
    np.testing.assert_allclose(clipped, TF_CLIP_BY_NORM, rtol=1e-7)
    with pytest.raises(ValueError, match=r"clip_by_norm_1' at .*test_clip_ops\.py:\d+: clip_norm"):
        df.clip_by_norm(df.constant(B), df.constant([[1.0], [2.0]]))


def test_clip_by_average_norm_gives_tensorflow_values():
    clipped = df.clip_by_average_norm(df.constant(A), 0.5)
    assert clipped.name == "clip_by_average_norm:0"
    np.testing.assert_allclose(run(clipped)[0], TF_CLIP_BY_AVERAGE_NORM, rtol=1e-7)


def test_a_list_is_required():
    with pytest.raises(TypeError, match="t_list should be a sequence"):
        df.global_norm(df.constant(B))
    with pytest.raises(TypeError, match="t_list should be a sequence"):
        df.clip_by_global_norm(df.constant(B), 1.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda x: df.clip_by_norm(x, 2.0),
        lambda x: df.clip_by_norm(x, 2.0, axes=[1]),
        lambda x: df.clip_by_norm(x, 100.0),
        lambda x: df.clip_by_average_norm(x, 0.5),
        lambda x: df.global_norm([x, None, x * 2.0]),
        lambda x: df.stack(df.clip_by_global_norm([x, None, x * 3.0], 2.0)[0][::2]),
    ],
    ids=["norm", "norm_axes", "norm_unclipped", "average_norm", "global_norm", "global_clip"],
)
def test_clipping_has_gradients(make):
    check_gradients(make, [A.astype(np.float64)])


def test_a_zero_tensor_clipped_by_norm_has_a_zero_gradient():
    x = df.zeros([3])
    (grad,) = df.gradients(df.reduce_sum(df.clip_by_norm(x, 1.0)), [x])
    np.testing.assert_array_equal(run(grad)[0], [1.0, 1.0, 1.0])


def test_clipping_gradients_before_an_optimizer_applies_them():
    w = df.Variable([3.0, 4.0], name="w")
    optimizer = df.train.GradientDescentOptimizer(1.0)
    grads, variables = zip(*optimizer.compute_gradients(df.reduce_sum(w * w) / 2.0))
    clipped, norm = df.clip_by_global_norm(list(grads), 1.0)
    step = optimizer.apply_gradients(zip(clipped, variables))
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        assert session.run([step, norm])[1] == 5.0
        np.testing.assert_allclose(session.run(w.value()), [2.4, 3.2], rtol=1e-6)


def test_clipping_inside_a_while_loop_and_a_cond():
    def body(i, x):
        return i + 1, df.clip_by_norm(x * 2.0, 5.0)

    _, looped = df.while_loop(lambda i, x: i < 3, body, [df.constant(0), df.constant([1.0, 1.0])])
    clip = df.placeholder(df.bool, [], name="clip")
    x = df.constant(B)
    chosen = df.cond(clip, lambda: df.clip_by_global_norm([x], 1.5)[0][0], lambda: x)
    looped, clipped = run(looped, chosen, feed_dict={clip: True})
    np.testing.assert_allclose(looped, [5 / np.sqrt(2)] * 2, rtol=1e-6)
    np.testing.assert_allclose(clipped, B / 2, rtol=1e-6)
    np.testing.assert_array_equal(run(chosen, feed_dict={clip: False})[0], B)


def test_a_saved_clipping_graph_loads_and_renders(tmp_path):
    graph = df.Graph()
    with graph.as_default():
        a = df.placeholder(df.float32, [2, 2], name="a")
        (clipped,), norm = df.clip_by_global_norm([df.nn.l2_normalize(a, 1) * 3.0], 1.0)
        df.identity(clipped, name="out")
    df.io.save_graph(graph, tmp_path / "clip.dfg")
    loaded = df.io.load_graph(tmp_path / "clip.dfg")
    results = []
    for g in (graph, loaded):
        with df.Session(graph=g) as session:
            results.append(session.run(["out:0", norm.name], {"a:0": A}))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]
    assert "global_norm" in df.render(loaded, format="dot").source
    assert "L2Loss" in df.render(loaded, format="dot", max_depth=None).source


# -- df.nn -----------------------------------------------------------------------------------------
LOGITS = np.array([[1.0, -1.0, 0.0], [2.5, -30.0, 40.0]], np.float32)
LABELS = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 1.0]], np.float32)
# From tensorflow.compat.v1 2.21 with the float32 arrays above: tf.nn.l2_loss(logits),
# tf.nn.l2_normalize(logits, axis=1), tf.nn.l2_normalize(logits),
# tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
# tf.nn.weighted_cross_entropy_with_logits(labels=labels, logits=logits, pos_weight=3.0).
TF_NN = {
    "L2Loss:0": 1254.125,
    "l2_normalize:0": [
        [0.7071067690849304, -0.7071067690849304, 0.0],
        [0.04993761330842972, -0.599251389503479, 0.7990018129348755],
    ],
    "l2_normalize_1:0": [
        [0.019967081025242805, -0.019967081025242805, 0.0],
        [0.04991770163178444, -0.5990124344825745, 0.798683226108551],
    ],
    "logistic_loss:0": [
        [1.3132617473602295, 1.3132617473602295, 0.6931471824645996],
        [0.07888973504304886, 9.357622912219837e-14, 4.24835413113866e-18],
    ],
    "logistic_loss_1:0": [
        [1.3132617473602295, 3.9397852420806885, 1.3862943649291992],
        [0.23666921257972717, 0.0, 1.2745062393415979e-17],
    ],
}


def test_nn_losses_and_norms_give_tensorflow_values_and_names():
    logits, labels = df.constant(LOGITS), df.constant(LABELS)
    outputs = [
        df.nn.l2_loss(logits),
        df.nn.l2_normalize(logits, axis=1),
        df.nn.l2_normalize(logits),
        df.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
        df.nn.weighted_cross_entropy_with_logits(labels=labels, logits=logits, pos_weight=3.0),
    ]
    assert [t.name for t in outputs] == list(TF_NN)
    for value, expected in zip(run(*outputs), TF_NN.values()):
        assert value.dtype == np.float32
        np.testing.assert_allclose(value, expected, rtol=2e-7, atol=1e-30)


def test_l2_normalize_takes_dim_as_the_old_name_of_axis():
    by_dim, by_axis = run(
        df.nn.l2_normalize(df.constant(LOGITS), dim=0),
        df.nn.l2_normalize(df.constant(LOGITS), axis=0),
    )
    np.testing.assert_array_equal(by_dim, by_axis)


def test_nn_losses_refuse_bad_arguments():
    logits = df.constant(LOGITS)
    with pytest.raises(ValueError, match="Both labels and logits must be provided"):
        df.nn.sigmoid_cross_entropy_with_logits(logits=logits)
    with pytest.raises(ValueError, match=r"must have the same shape \(\(2, 3\) vs \(3,\)\)"):
        df.nn.weighted_cross_entropy_with_logits(
            labels=df.constant([1.0, 0.0, 1.0]), logits=logits, pos_weight=2.0
        )
    with pytest.raises(TypeError, match=r"L2Loss.*test_clip_ops\.py:\d+"):
        df.nn.l2_loss(df.constant([1, 2]))


@pytest.mark.parametrize(
    "make",
    [
        lambda x: df.nn.l2_loss(x),
        lambda x: df.nn.l2_normalize(x, axis=1),
        lambda x: df.nn.sigmoid_cross_entropy_with_logits(labels=LABELS.astype("f8"), logits=x),
        lambda x: df.nn.weighted_cross_entropy_with_logits(LABELS.astype("f8"), x, 3.0),
    ],
    ids=["l2_loss", "l2_normalize", "sigmoid_xent", "weighted_xent"],
)
def test_nn_losses_and_norms_have_gradients(make):
    check_gradients(make, [np.array([[1.0, -1.0, 0.5], [2.5, -3.0, 4.0]])])

"""GradientTape: the registered gradient functions, replayed eagerly on what the tape saw."""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager_only(eager):
    yield


def _model(x, w, b):
    return df.reduce_sum(df.tanh(df.matmul(x, w) + b) ** 2)


X = np.array([[0.5, -1.0], [2.0, 0.25], [-0.3, 0.8]], np.float32)
W = np.array([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], np.float32)
B = np.array([0.05, -0.1, 0.2], np.float32)


def test_tape_gradients_match_graph_mode_gradients_and_a_numeric_check():
    w, b = df.Variable(W), df.Variable(B)
    with df.GradientTape() as tape:
        loss = _model(df.constant(X), w, b)
    eager_w, eager_b = tape.gradient(loss, [w, b])
    assert {id(v) for v in tape.watched_variables()} == {id(w), id(b)}

    with df.graph_mode(), df.Graph().as_default():
        gw, gb = df.Variable(W), df.Variable(B)
        grads = df.gradients(_model(df.constant(X), gw, gb), [gw, gb])
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            graph_w, graph_b = sess.run(grads)
    np.testing.assert_allclose(eager_w.numpy(), graph_w, rtol=1e-5)
    np.testing.assert_allclose(eager_b.numpy(), graph_b, rtol=1e-5)

    def loss_at(w_value):
        return float(_model(df.constant(X), df.constant(w_value), df.constant(B)))

    eps, numeric = 1e-3, np.zeros_like(W, np.float64)
    for index in np.ndindex(W.shape):
        up, down = W.astype(np.float64), W.astype(np.float64)
        up[index] += eps
        down[index] -= eps
        numeric[index] = (loss_at(up.astype(np.float32)) - loss_at(down.astype(np.float32))) / (
            2 * eps
        )
    np.testing.assert_allclose(eager_w.numpy(), numeric, rtol=2e-2, atol=2e-3)


def test_nested_tapes_give_higher_order_gradients():
    x = df.constant(3.0)
    with df.GradientTape() as outer:
        outer.watch(x)
        with df.GradientTape() as inner:
            inner.watch(x)
            y = x**3
        dy = inner.gradient(y, x)
    assert float(dy) == 27.0 and float(outer.gradient(dy, x)) == 18.0


def test_a_non_persistent_tape_refuses_a_second_gradient():
    x = df.constant(1.0)
    with df.GradientTape() as tape:
        tape.watch(x)
        y = x * 2
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        tape.gradient(y, x)


def test_unconnected_sources_get_none_or_zeros():
    x, other = df.constant(2.0), df.constant([1.0, 1.0])
    with df.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, [x, other])[1] is None
    zeros = tape.gradient(y, other, unconnected_gradients=df.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(zeros.numpy(), [0.0, 0.0])


def test_stop_recording_and_unwatched_variables():
    v = df.Variable(2.0)
    frozen = df.Variable(5.0, trainable=False)
    with df.GradientTape(persistent=True) as tape:
        y = v * frozen
        with tape.stop_recording():
            z = v * v
    assert float(tape.gradient(y, v)) == 5.0
    assert tape.gradient(y, frozen) is None
    assert tape.gradient(z, v) is None
    with df.GradientTape(watch_accessed_variables=False) as tape:
        y = v * v
    assert tape.gradient(y, v) is None


def test_gather_gradients_come_back_as_indexed_slices():
    table = df.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
    with df.GradientTape() as tape:
        total = df.reduce_sum(df.gather(table, [0, 2, 0]))
    grad = tape.gradient(total, table)
    assert isinstance(grad, df.IndexedSlices)
    np.testing.assert_array_equal(grad.indices.numpy(), [0, 2, 0])
    np.testing.assert_array_equal(df.convert_to_tensor(grad).numpy(), [[2, 2], [0, 0], [1, 1]])


def test_output_gradients_weigh_the_targets_and_jacobian_stacks_rows():
    w = df.constant([1.0, 2.0])
    with df.GradientTape(persistent=True) as tape:
        tape.watch(w)
        y = w * w
    weighted = tape.gradient(y, w, output_gradients=df.constant([1.0, 10.0]))
    np.testing.assert_array_equal(weighted.numpy(), [2.0, 40.0])
    np.testing.assert_array_equal(tape.jacobian(y, w).numpy(), [[2.0, 0.0], [0.0, 4.0]])


def test_python_control_flow_is_differentiated_along_the_path_taken():
    x = df.constant(-2.0)
    with df.GradientTape() as tape:
        tape.watch(x)
        y = x * x if x > 0 else x * 3
    assert float(tape.gradient(y, x)) == 3.0

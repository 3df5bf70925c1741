"""A GradientTape under `df.lazy_mode`: it records the lazy ops as it records eager ones, and
the gradient functions it replays record lazily too, so gradients agree with eager mode."""

import numpy as np
import pytest

import dataflow as df

DATA = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32)
TARGETS = DATA @ np.array([[1.0], [-2.0], [0.5]], np.float32)


def _gradients_of_a_small_model(mode):
    with mode():
        weights = df.Variable([[0.5], [0.25], [-1.0]])
        x = df.constant([[1.0, 2.0, 3.0]])
        with df.GradientTape() as tape:
            tape.watch(x)
            hidden = df.tanh(df.matmul(x, weights) * 2.0)
            loss = df.reduce_sum(hidden * hidden) + df.reduce_sum(weights * weights)
        grad_x, grad_weights = tape.gradient(loss, [x, weights])
        return type(grad_x), grad_x.numpy(), grad_weights.numpy()


def test_tape_under_lazy_mode_gives_lazy_gradients_equal_to_eager_ones():
    lazy_type, *lazy = _gradients_of_a_small_model(df.lazy_mode)
    _, *eager = _gradients_of_a_small_model(df.eager_mode)
    assert lazy_type is df.LazyTensor
    for got, want in zip(lazy, eager):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_gradient_records_lazily_and_runs_once_when_asked_for():
    with df.lazy_mode() as recording:
        x = df.constant(3.0)
        with df.GradientTape() as tape:
            tape.watch(x)
            y = x * x + 2.0 * x
        grad = tape.gradient(y, x)
        assert recording.materialisations == 0
        assert grad.numpy() == 8.0
        assert recording.materialisations == 1


def test_a_value_read_inside_the_tape_does_not_cut_the_gradient():
    with df.lazy_mode():
        v = df.Variable([1.0, 2.0])
        with df.GradientTape() as tape:
            squares = v * v
            assert squares.numpy().tolist() == [1.0, 4.0]  # materialises mid-tape
            total = df.reduce_sum(squares * v)
        assert tape.gradient(total, v).numpy().tolist() == [3.0, 12.0]


def test_unwatched_values_and_ops_before_the_tape_get_no_gradient():
    with df.lazy_mode():
        x = df.constant(2.0)
        before = x * x
        with df.GradientTape() as tape:
            tape.watch(x)
            y = before * x
        constant = df.constant(5.0)
        assert tape.gradient(y, x).numpy() == 4.0
    with df.lazy_mode():
        x = df.constant(2.0)
        with df.GradientTape() as tape:
            y = x * constant
        assert tape.gradient(y, x) is None


def test_nested_tapes_under_lazy_mode_give_higher_order_gradients():
    with df.lazy_mode():
        x = df.constant(2.0)
        with df.GradientTape() as outer:
            outer.watch(x)
            with df.GradientTape() as inner:
                inner.watch(x)
                y = x * x * x
            dy = inner.gradient(y, x)
        assert (dy.numpy(), outer.gradient(dy, x).numpy()) == (12.0, 12.0)


def _train(mode, steps: int = 5):
    with mode() as recording:
        weights = df.Variable(np.zeros((3, 1), np.float32))
        optimizer = df.train.GradientDescentOptimizer(0.1)
        losses = []
        for _ in range(steps):
            with df.GradientTape() as tape:
                loss = df.reduce_mean(df.square(df.matmul(DATA, weights) - TARGETS))
            optimizer.apply_gradients(zip(tape.gradient(loss, [weights]), [weights]))
            losses.append(float(loss))
        return losses, weights.numpy(), recording


def test_a_taped_training_loop_under_lazy_mode_matches_eager_and_reuses_its_plan():
    lazy_losses, lazy_weights, recording = _train(df.lazy_mode)
    eager_losses, eager_weights, _ = _train(df.eager_mode)
    np.testing.assert_allclose(lazy_losses, eager_losses, rtol=1e-6)
    np.testing.assert_allclose(lazy_weights, eager_weights, rtol=1e-6)
    assert lazy_losses[-1] < lazy_losses[0]
    assert recording.plan_reuses >= 3


@pytest.mark.parametrize("construct", ["cond", "while_loop"])
def test_a_watched_value_into_lazy_control_flow_is_refused_naming_the_line(construct):
    with df.lazy_mode():
        x = df.constant(3.0)
        with df.GradientTape() as tape:
            tape.watch(x)
            with pytest.raises(NotImplementedError, match="cannot differentiate through cond") as e:
                if construct == "cond":
                    df.cond(x > 0.0, lambda: x * x, lambda: -x)
                else:
                    df.while_loop(lambda a: a < 100.0, lambda a: a * a, [x])
    assert "test_lazy_tape.py" in str(e.value)


def test_lazy_control_flow_on_values_the_tape_does_not_follow_is_allowed():
    with df.lazy_mode():
        x = df.constant(3.0)
        with df.GradientTape() as tape:
            tape.watch(x)
            scale = df.cond(df.constant(True), lambda: df.constant(2.0), lambda: df.constant(5.0))
            y = scale * x
        assert tape.gradient(y, x).numpy() == 2.0

"""A df.function called under a GradientTape: one recorded op whose gradient is the trace's."""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def eager():
    with df.eager_mode():
        yield


def _layer(weights, bias):
    def forward(x):
        hidden = df.tanh(df.matmul(x, weights) + bias)
        return df.reduce_sum(hidden * hidden), hidden

    return forward


def test_gradient_through_a_call_matches_the_same_computation_run_eagerly():
    weights = df.Variable([[1.0, 2.0], [3.0, 4.0]])
    bias = df.Variable([0.5, -0.5])
    forward = _layer(weights, bias)
    traced = df.function(forward)
    x = df.constant([[1.0, -1.0], [0.25, 0.5]])

    with df.GradientTape() as tape:
        tape.watch(x)
        loss, _ = traced(x)
    through_call = tape.gradient(loss, [x, weights, bias])
    with df.GradientTape() as tape:
        tape.watch(x)
        loss, _ = forward(x)
    eagerly = tape.gradient(loss, [x, weights, bias])

    for got, want in zip(through_call, eagerly):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_gradient_of_each_output_uses_only_that_output():
    weights = df.Variable([[1.0, 0.0], [0.0, 2.0]])
    forward = _layer(weights, df.Variable([0.0, 0.0]))
    traced = df.function(forward)
    x = df.constant([[0.3, -0.2]])

    with df.GradientTape(persistent=True) as tape:
        _, hidden = traced(x)
        _, hidden_eagerly = forward(x)
    np.testing.assert_allclose(
        tape.gradient(hidden, weights).numpy(),
        tape.gradient(hidden_eagerly, weights).numpy(),
        rtol=1e-6,
    )


def test_captured_variables_are_watched_as_accessed_variables():
    scale = df.Variable(3.0)
    frozen = df.Variable(5.0, trainable=False)

    @df.function
    def scaled(x):
        return x * scale * frozen

    with df.GradientTape() as tape:
        y = scaled(df.constant(2.0))
    assert tape.watched_variables() == (scale,)
    assert tape.gradient(y, scale).numpy() == 10.0


def test_unconnected_source_gets_none_or_zeros():
    used = df.Variable(2.0)
    unused = df.Variable(7.0)

    @df.function
    def doubled():
        return used * 2.0, unused.read_value()

    with df.GradientTape(persistent=True) as tape:
        tape.watch(unused)
        y, _ = doubled()
    assert tape.gradient(y, unused) is None
    zero = tape.gradient(y, unused, unconnected_gradients=df.UnconnectedGradients.ZERO)
    assert zero.numpy() == 0.0


def test_backward_uses_the_forward_runs_random_draws():
    @df.function
    def noisy(x):
        noise = df.random.uniform([4], seed=1)
        return x * noise, noise

    x = df.constant([1.0, 1.0, 1.0, 1.0])
    with df.GradientTape() as tape:
        tape.watch(x)
        y, noise = noisy(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), noise.numpy())


def test_backward_does_not_repeat_the_functions_assignments():
    counter = df.Variable(0.0)
    weight = df.Variable(2.0)

    @df.function
    def step(x):
        counter.assign_add(1.0)
        return x * weight

    with df.GradientTape() as tape:
        y = step(df.constant(4.0))
    assert tape.gradient(y, weight).numpy() == 4.0
    assert counter.numpy() == 1.0


def test_nested_tapes_each_get_first_order_gradients():
    weight = df.Variable(3.0)

    @df.function
    def cube(x):
        return x * x * x * weight

    x = df.constant(2.0)
    with df.GradientTape() as outer:
        outer.watch(x)
        with df.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        assert inner.gradient(y, x).numpy() == 36.0
    assert outer.gradient(y, weight).numpy() == 8.0


def test_an_eager_optimizer_step_through_a_function_trains_the_variable():
    weight = df.Variable([0.0, 0.0])
    target = np.array([1.0, -2.0], np.float32)

    @df.function
    def loss():
        return df.reduce_sum(df.square(weight - target))

    for _ in range(60):
        with df.GradientTape() as tape:
            value = loss()
        (grad,) = tape.gradient(value, [weight])
        weight.assign_sub(0.1 * grad)
    np.testing.assert_allclose(weight.numpy(), target, atol=1e-4)
    assert loss.experimental_get_tracing_count() == 1


def test_second_order_gradient_through_a_call_matches_the_same_computation_run_eagerly():
    weights = df.Variable([[1.0, 2.0], [3.0, 4.0]])
    bias = df.Variable([0.5, -0.5])
    forward = _layer(weights, bias)
    traced = df.function(forward)
    x = df.constant([[1.0, -1.0], [0.25, 0.5]])

    def second_order(layer):
        with df.GradientTape() as outer:
            outer.watch(x)
            with df.GradientTape() as inner:
                inner.watch(x)
                loss, _ = layer(x)
            grad_x, grad_w = inner.gradient(loss, [x, weights])
            curvature = df.reduce_sum(grad_x * grad_x) + df.reduce_sum(grad_w)
        return outer.gradient(curvature, [x, weights, bias])

    for got, want in zip(second_order(traced), second_order(forward)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


def test_third_order_gradient_through_a_call():
    @df.function
    def cube(x):
        return x * x * x

    x = df.constant(2.0)
    with df.GradientTape() as third:
        third.watch(x)
        with df.GradientTape() as second:
            second.watch(x)
            with df.GradientTape() as first:
                first.watch(x)
                y = cube(x)
            dy = first.gradient(y, x)
        d2y = second.gradient(dy, x)
    d3y = third.gradient(d2y, x)
    assert (dy.numpy(), d2y.numpy(), d3y.numpy()) == (12.0, 12.0, 6.0)


def test_second_order_gradient_uses_the_forward_runs_random_draws():
    @df.function
    def noisy_square(x):
        noise = df.random.uniform([4], seed=1)
        return x * x * noise, noise

    x = df.constant([1.0, 2.0, 3.0, 4.0])
    with df.GradientTape() as outer:
        outer.watch(x)
        with df.GradientTape() as inner:
            inner.watch(x)
            y, noise = noisy_square(x)
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), 2.0 * noise.numpy(), rtol=1e-6)


def test_second_order_gradient_does_not_repeat_the_functions_assignments():
    counter = df.Variable(0.0)

    @df.function
    def step(x):
        counter.assign_add(1.0)
        return df.sin(x)

    x = df.constant(0.5)
    with df.GradientTape() as outer:
        outer.watch(x)
        with df.GradientTape() as inner:
            inner.watch(x)
            y = step(x)
        dy = inner.gradient(y, x)
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), -np.sin(0.5), rtol=1e-6)
    assert counter.numpy() == 1.0

"""`df.custom_gradient`: a function's own gradient, found by `df.gradients` in a graph and by a
`GradientTape` eagerly, for its arguments and for the variables it reads."""

import numpy as np
import pytest

import dataflow as df


@df.custom_gradient
def log1pexp(x):
    """log(1 + e^x) with the stable gradient 1 - 1/(1 + e^x) (the naive one is inf/inf)."""
    e = df.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return df.log(1 + e), grad


@df.custom_gradient
def claimed_seven(x):
    """x * x, whose gradient is claimed to be 7 everywhere."""
    return x * x, lambda dy: dy * 7.0


def values_and_gradients(mode, fn, inputs, sources=None):
    """``(fn(*inputs), d fn / d sources)`` as numpy, in a Session (``mode == "graph"``) or
    eagerly with a tape; ``sources`` (a function of the input tensors) defaults to them."""
    if mode == "graph":
        xs = [df.constant(x) for x in inputs]
        y = fn(*xs)
        wrt = sources(xs) if sources else xs
        grads = df.gradients(y, wrt)
        with df.Session() as session:
            session.run(df.global_variables_initializer())
            return session.run([y, grads])
    with df.eager_mode():
        xs = [df.constant(x) for x in inputs]
        with df.GradientTape(persistent=True) as tape:
            tape.watch(xs)
            y = fn(*xs)
        wrt = sources(xs) if sources else xs
        return y.numpy(), [g.numpy() for g in tape.gradient(y, wrt)]


MODES = ["graph", "eager"]


@pytest.mark.parametrize("mode", MODES)
def test_the_functions_own_gradient_replaces_the_derived_one(mode):
    value, (grad,) = values_and_gradients(mode, log1pexp, [np.float32(100.0)])
    assert np.isinf(value) and grad == 1.0
    with df.Graph().as_default():
        x = df.constant(100.0)
        with df.Session() as session:
            assert np.isnan(session.run(df.gradients(df.log(1 + df.exp(x)), [x]))[0])


@pytest.mark.parametrize("mode", MODES)
def test_no_gradient_flows_through_the_ops_inside(mode):
    value, (grad,) = values_and_gradients(mode, claimed_seven, [np.float32(3.0)])
    assert value == 9.0 and grad == 7.0


@df.custom_gradient
def product_and_sum(x, y):
    def grad(d_product, d_sum):
        return d_product * y + d_sum, d_product * x + d_sum * 10

    return (x * y, x + y), grad


@pytest.mark.parametrize("mode", MODES)
def test_several_arguments_and_results(mode):
    def loss(x, y):
        product, total = product_and_sum(x, y)
        return product * 2.0 + total

    value, grads = values_and_gradients(mode, loss, [np.float32(3.0), np.float32(4.0)])
    assert value == 31.0
    np.testing.assert_array_equal(grads, [2 * 4 + 1, 2 * 3 + 10])


@df.custom_gradient
def cubed(x):
    return x * x * x, lambda dy: dy * 3.0 * x * x


def test_a_gradient_of_the_custom_gradient_is_taken_by_nested_tapes(eager):
    x = df.constant(2.0)
    with df.GradientTape() as outer:
        outer.watch(x)
        with df.GradientTape() as inner:
            inner.watch(x)
            y = cubed(x)
        dy_dx = inner.gradient(y, x)
    assert dy_dx.numpy() == 12.0 and outer.gradient(dy_dx, x).numpy() == 12.0


def test_a_gradient_of_the_custom_gradient_in_a_graph():
    x = df.constant(2.0)
    (dy_dx,) = df.gradients(cubed(x), [x])
    (d2y_dx2,) = df.gradients(dy_dx, [x])
    with df.Session() as session:
        assert session.run([dy_dx, d2y_dx2]) == [12.0, 12.0]


def scale_by_variable():
    v = df.Variable(2.0, name="v")

    @df.custom_gradient
    def scaled(x):
        def grad(dy, variables=None):
            assert variables == [v]
            return dy * v, [dy * x * 10.0]

        return x * v, grad

    return v, scaled


@pytest.mark.parametrize("mode", MODES)
def test_variables_read_inside_get_their_gradients_from_grad_fn(mode):
    graph = df.Graph() if mode == "graph" else None
    with graph.as_default() if graph else df.eager_mode():
        v, scaled = scale_by_variable()
    with graph.as_default() if graph else df.eager_mode():
        value, grads = values_and_gradients(mode, scaled, [np.float32(3.0)], lambda xs: [*xs, v])
    assert value == 6.0
    np.testing.assert_array_equal(grads, [2.0, 30.0])


def test_an_optimizer_steps_by_the_custom_gradient(eager):
    w = df.Variable(3.0)
    df.train.GradientDescentOptimizer(0.5).minimize(lambda: claimed_seven(w), var_list=[w])
    assert w.numpy() == 3.0 - 0.5 * 7.0


@pytest.mark.parametrize("mode", MODES)
def test_a_grad_fn_that_ignores_the_variables_is_refused_with_the_function(mode):
    with df.eager_mode() if mode == "eager" else df.Graph().as_default():
        v = df.Variable(2.0, name="v")

        @df.custom_gradient
        def uses_v(x):
            return x * v, lambda dy: dy

        with pytest.raises(TypeError, match=r"uses_v \(.*test_custom_gradient.py:\d+\).*'v:0'"):
            uses_v(df.constant(1.0))


@pytest.mark.parametrize("mode", MODES)
def test_a_wrong_number_of_gradients_is_an_error_naming_the_function(mode):
    @df.custom_gradient
    def two_args(x, y):
        return x + y, lambda dy: dy

    with pytest.raises(ValueError, match=r"two_args \(.*test_custom_gradient.py:\d+\).* 1 grad"):
        values_and_gradients(mode, two_args, [np.float32(1.0), np.float32(2.0)])


def test_keyword_arguments_are_refused_in_a_graph_with_the_line():
    @df.custom_gradient
    def keyword(x, scale=1.0):
        return x * scale, lambda dy: dy * scale

    with pytest.raises(ValueError, match=r"only when executing eagerly.*test_custom_gradient.py"):
        keyword(df.constant(1.0), scale=2.0)
    with df.eager_mode():
        x = df.constant(1.0)
        with df.GradientTape() as tape:
            tape.watch(x)
            y = keyword(x, scale=2.0)
        assert tape.gradient(y, x).numpy() == 2.0

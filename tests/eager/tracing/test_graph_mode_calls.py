"""A df.function called while a TF1 graph is built: its ops join the caller's graph."""

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test builds in a graph of its own and leaves none of its ops to the next."""
    df.reset_default_graph()
    yield
    df.reset_default_graph()


@df.function
def cubic(x):
    return x * x * x + 2.0 * x


def test_call_adds_ops_that_a_session_runs_and_gradients_flow_through():
    x = df.placeholder(df.float32, [3])
    y = cubic(x)
    (dy_dx,) = df.gradients(y, x)
    assert y.graph is df.get_default_graph()
    with df.Session() as sess:
        value, grad = sess.run([y, dy_dx], {x: [0.0, 1.0, 2.0]})
    np.testing.assert_allclose(value, [0.0, 3.0, 12.0])
    np.testing.assert_allclose(grad, [2.0, 5.0, 14.0])


def test_call_inside_cond_runs_only_in_the_taken_branch():
    x = df.placeholder(df.float32, [])
    y = df.cond(x > 0, lambda: cubic(x), lambda: -x)
    (dy_dx,) = df.gradients(y, x)
    with df.Session() as sess:
        assert sess.run([y, dy_dx], {x: 2.0}) == [12.0, 14.0]
        assert sess.run([y, dy_dx], {x: -3.0}) == [3.0, -1.0]


def test_call_inside_while_loop_body_runs_each_iteration():
    start = df.placeholder(df.float32, [])

    @df.function
    def step(v):
        return v * 2.0 + 1.0

    _, result = df.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, step(v)), [0, start])
    (grad,) = df.gradients(result, start)
    with df.Session() as sess:
        assert sess.run([result, grad], {start: 1.0}) == [15.0, 8.0]


def test_side_effects_run_in_program_order_and_outputs_wait_for_them():
    v = df.Variable(1.0)
    out = io.StringIO()

    @df.function
    def update():
        v.assign(v.read_value() * 10.0)
        df.print("after multiply", output_stream=out)
        v.assign_add(1.0)
        return df.constant(0.0)

    done = update()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        sess.run(done)
        assert sess.run(v) == 11.0
    assert out.getvalue() == "after multiply\n"


def test_function_without_outputs_returns_an_op_that_runs_its_effects():
    v = df.Variable(0.0)

    @df.function
    def bump():
        v.assign_add(1.0)
        v.assign_add(2.0)

    op = bump()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        sess.run(op)
        sess.run(op)
        assert sess.run(v) == 6.0


def test_gradients_through_a_stateful_cond_in_a_function_are_live_on_either_branch():
    # The true branch reads a variable, so the outputs wait for the cond; the gradient of each
    # captured value makes zeros for its untaken Switch output, which the outputs must not wait
    # for.
    v = df.Variable([1.0, 2.0])
    x = df.constant(3.0)
    take_true = df.placeholder(df.bool, [])

    @df.function
    def grads():
        y = df.cond(take_true, lambda: df.reduce_sum(v.read_value()) * x, lambda: x * x)
        return df.gradients(y, [v, x])

    dv, dx = grads()
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        np.testing.assert_allclose(sess.run(dv, {take_true: True}), [3.0, 3.0])
        assert sess.run(dx, {take_true: True}) == 3.0
        assert sess.run(dx, {take_true: False}) == 6.0


def test_wrap_function_prunes_effects_the_outputs_do_not_need():
    out = io.StringIO()

    def build():
        df.print("unneeded", output_stream=out)
        return df.constant(3.0)

    wrapped = df.wrap_function(build, [])
    with df.Session() as sess:
        assert sess.run(wrapped()) == 3.0
    assert out.getvalue() == ""


def test_defun_takes_tensors_of_its_declared_dtypes():
    @df.Defun(df.float32)
    def square(x):
        return x * x

    x = df.constant(3.0)
    y = square(x)
    (grad,) = df.gradients(y, x)
    with df.Session() as sess:
        assert sess.run([y, grad]) == [9.0, 6.0]
    with pytest.raises(TypeError, match="argument 0 is int32"):
        square(df.constant(3))


# -- random small programs: traced and called in a graph, against numpy ---------------------------
_UNARY = {
    "neg": (lambda t: -t, np.negative),
    "square": (lambda t: t * t, np.square),
    "tanh": (df.tanh, np.tanh),
    "half": (lambda t: t * 0.5, lambda a: a * 0.5),
}
_BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "max": (df.maximum, np.maximum),
}

_steps = st.lists(
    st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(sorted(_UNARY)), st.integers(0, 10)),
        st.tuples(
            st.just("binary"),
            st.sampled_from(sorted(_BINARY)),
            st.tuples(st.integers(0, 10), st.integers(0, 10)),
        ),
    ),
    min_size=1,
    max_size=8,
)


def _program(steps, ops_of):
    """Runs ``steps`` on the two inputs; each step reads earlier values by index (modulo)."""

    def run(a, b):
        values = [a, b]
        for kind, name, picks in steps:
            fn = ops_of(kind, name)
            if kind == "unary":
                values.append(fn(values[picks % len(values)]))
            else:
                values.append(fn(values[picks[0] % len(values)], values[picks[1] % len(values)]))
        return values[-1]

    return run


@settings(max_examples=30, deadline=None)
@given(
    steps=_steps,
    a=st.lists(st.floats(-3, 3), min_size=3, max_size=3),
    b=st.lists(st.floats(-3, 3), min_size=3, max_size=3),
)
def test_random_programs_agree_with_numpy_traced_and_called_in_a_graph(steps, a, b):
    df.reset_default_graph()
    traced = df.function(_program(steps, lambda k, n: (_UNARY if k == "unary" else _BINARY)[n][0]))
    reference = _program(steps, lambda k, n: (_UNARY if k == "unary" else _BINARY)[n][1])
    a, b = np.float32(a), np.float32(b)
    expected = reference(a, b)

    concrete = traced.get_concrete_function(
        df.TensorSpec([3], df.float32), df.TensorSpec([3], df.float32)
    )
    (ran,) = concrete._run([a, b])
    np.testing.assert_allclose(ran, expected, rtol=1e-5, atol=1e-6)

    pa, pb = df.placeholder(df.float32, [3]), df.placeholder(df.float32, [3])
    with df.Session() as sess:
        called = sess.run(traced(pa, pb), {pa: a, pb: b})
    np.testing.assert_allclose(called, expected, rtol=1e-5, atol=1e-6)

"""The programs of TensorFlow 1.x's control-flow gradient tests (``control_flow_ops_py_test.py``,
control flow v1) give the values TensorFlow gives, with the Session's default passes."""

import numpy as np
import pytest

import dataflow as df
from dataflow.gradients import WhileLoopGradientError
from primitives.contexts import CondContext, control_flow_context_of


def run(fetches, feed_dict=None):
    with df.Session() as sess:
        return sess.run(fetches, feed_dict)


# -- conds inside loops ----------------------------------------------------------------------------
@pytest.mark.parametrize("known_shape", [True, False])
def test_a_cond_on_a_constant_predicate_in_a_loop_body_passes_its_gradient(known_shape):
    # testWhileCondGrad_Simple and testWhileCondGrad_UnknownShape: x -> x*x from 2 to 256.
    v = df.convert_to_tensor(2.0, name="v") if known_shape else df.placeholder(df.float32)
    n = df.convert_to_tensor(100.0, name="n")
    one = df.convert_to_tensor(1.0, name="one")

    def body(x):
        return df.cond(df.constant(True), lambda: df.square(x), lambda: df.subtract(x, one))

    r = df.while_loop(lambda x: df.less(x, n), body, [v])
    (grad,) = df.gradients(r, v)
    assert run(grad, None if known_shape else {v: 2.0}) == 1024.0


# -- gradients taken inside a loop body ------------------------------------------------------------
def test_gradients_called_inside_a_loop_body_are_computed_in_every_iteration():
    # testCallGradInLoop: d(data * params^2)/d(params) = 6 * 2 * 5, summed over 10 iterations.
    i0 = df.constant(0)
    params = df.constant(5.0)
    params_1 = df.square(params)

    def body(i, x):
        data = df.multiply(df.constant([1.0, 2.0, 3.0]), params_1)
        return i + 1, x + df.gradients(data, params)[0]

    _, total = df.while_loop(lambda i, _: i < 10, body, [i0, df.constant(0.0)])
    assert run(total) == 600.0


def test_a_gradient_inside_a_loop_body_flows_through_a_cond_outside_the_loop():
    p = df.constant(3.0)
    take_sin = df.placeholder_with_default(True, [])
    q = df.cond(take_sin, lambda: df.sin(p), lambda: df.cos(p))

    def body(i, x):
        return i + 1, x + df.gradients(q * df.cast(i, df.float32), p)[0]

    total = df.while_loop(lambda i, _: i < 3, body, [0, df.constant(0.0)])[1]
    with df.Session() as sess:
        np.testing.assert_allclose(sess.run(total), 3 * np.cos(3.0), rtol=1e-6)
        np.testing.assert_allclose(sess.run(total, {take_sin: False}), -3 * np.sin(3.0), rtol=1e-6)


def test_a_gradient_inside_a_cond_branch_is_computed_only_in_that_branch():
    p = df.constant(3.0)
    q = df.sin(p)
    taken = df.placeholder_with_default(True, [])
    inside = []

    def branch():
        inside.append(df.gradients(q * q, p)[0])
        return inside[0]

    out = df.cond(taken, branch, lambda: df.constant(0.0))
    context = control_flow_context_of(inside[0])
    assert isinstance(context, CondContext) and context.branch == 1
    np.testing.assert_allclose(run(out), 2 * np.sin(3.0) * np.cos(3.0), rtol=1e-6)


def test_a_gradient_inside_a_loop_body_through_a_loop_outside_it_is_refused():
    # TensorFlow refuses it too (its backward loop would read the forward loop's saved values
    # in every iteration of the outer loop, and they are read once).
    p = df.constant(1.5)
    one = df.constant(1.0)
    r = df.while_loop(lambda j, y: j < 3, lambda j, y: (j + 1, y * p), [0, one])[1]

    def body(i, x):
        return i + 1, x + df.gradients(r, p)[0]

    with pytest.raises(WhileLoopGradientError, match="runs outside it") as info:
        df.while_loop(lambda i, _: i < 2, body, [0, df.constant(0.0)])
    assert "test_control_flow_gradients_as_in_tensorflow.py" in str(info.value)

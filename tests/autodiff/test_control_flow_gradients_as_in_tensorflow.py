"""The programs of TensorFlow 1.x's control-flow gradient tests (``control_flow_ops_py_test.py``,
control flow v1) give the values TensorFlow gives, with the Session's default passes."""

import numpy as np
import pytest

import dataflow as df
from dataflow.autodiff.gradients import WhileLoopGradientError
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


# -- second-order gradients: refused only where a gradient enters a backward loop ------------------
def test_a_stopped_loop_gradient_is_not_a_second_order_gradient():
    # testStopGradOnWhileGrad: d(y^2 + 2 * y^6 + stop(d(2 * y^6)/dy))/dy at y = 2.
    x = df.constant(2.0, name="x")
    y = df.constant(2.0, name="y")
    rx = df.while_loop(lambda x: df.less(x, 100.0), lambda x: df.multiply(x, y), [x])
    rg = df.stop_gradient(df.gradients(rx, y)[0])
    r = df.add(df.add(df.square(y), rx), rg)
    assert run(df.gradients(r, y)[0]) == 388.0


def test_a_loop_gradient_listed_in_stop_gradients_is_not_differentiated_either():
    # TensorFlow refuses this one; no gradient enters the backward loop, so it is accepted.
    x = df.constant(2.0, name="x")
    y = df.constant(2.0, name="y")
    rx = df.while_loop(lambda x: df.less(x, 100.0), lambda x: df.multiply(x, y), [x])
    rg = df.gradients(rx, y)[0]
    r = df.add(df.add(df.square(y), rx), rg)
    assert run(df.gradients(r, y, stop_gradients=[rg])[0]) == 388.0


def test_a_gradient_through_a_backward_loop_is_refused_and_its_stopped_form_is_none():
    # testWhileGradGradFail, with the scan written as a while_loop.
    theta = df.Variable(1.0)
    elements = df.constant([1.0, 2.0, 3.0])

    def body(i, previous, total):
        current = previous + df.gather(elements, i) * theta
        return i + 1, current, total + current

    start = [0, df.constant(0.0), df.constant(0.0)]
    result = df.while_loop(lambda i, p, t: i < 3, body, start)[2]
    grad_theta = df.gradients(result, theta)
    with pytest.raises(WhileLoopGradientError, match="Second-order"):
        df.gradients(grad_theta, theta)
    assert df.gradients(df.stop_gradient(grad_theta), theta) == [None]


def test_a_second_order_loop_gradient_is_a_type_error_worded_as_tf1s():
    x = df.placeholder(df.float32, [])
    y = df.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * a), [0, x])[1]
    (g,) = df.gradients(y, x)
    with pytest.raises(TypeError, match="^Second-order gradient for while loops not supported"):
        df.gradients(g, x)


def test_a_gradient_of_a_backward_loop_that_xs_do_not_affect_is_none():
    # testWhileCondGradMultiDevice: d(x * 2)/dx needs no saved x, so dgrad/dx_init is None.
    pred = df.placeholder(df.bool, [])
    x_init = df.constant(1.0)
    z = df.while_loop(
        lambda i, _: i < 3,
        lambda i, x: (i + 1, df.cond(pred, lambda: x * 2.0, lambda: 10.0)),
        [0, x_init],
    )
    grad = df.gradients(z, x_init)[0]
    assert df.gradients(grad, x_init) == [None]
    with df.Session() as sess:
        assert sess.run(grad, {pred: True}) == 8.0
        assert sess.run(grad, {pred: False}) == 0.0


def test_a_stopped_norm_of_a_loop_gradient_leaves_the_first_order_gradient():
    # testStopGradMultiFlows: z = r + stop(|dr/dx|) with r the sum of y * x after one step.
    x = df.Variable(1.0, name="x")

    def body(i, y, r):
        y = y * x
        return [i + 1, y, r + df.reduce_sum(y)]

    start = [df.constant(0), df.ones(5), df.constant(0.0)]
    _, _, r = df.while_loop(lambda i, y, r: i < 1, body, start, back_prop=True)
    grad = df.gradients(r, [x])[0]
    z = df.add(r, df.stop_gradient(df.reduce_sum(df.sqrt(df.reduce_sum(df.square(grad))))))
    result = df.gradients(z, [x])[0]
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        assert sess.run(result) == 5.0


# -- stop_gradient and loops: zeros or None --------------------------------------------------------
def squaring_loop(x, y, stop_inside=False):
    """testWhileGrad_StopGrad's loop: ``x <- x^2 + y^2``, ``y <- y^2`` while ``x < 100``."""

    def body(x, y):
        y1 = df.square(y, name="stopped")
        if stop_inside:
            y1 = df.stop_gradient(y1)
        return df.add(df.square(x), y1), y1

    return df.while_loop(lambda x, y: df.less(df.reduce_sum(x), 100.0), body, [x, y])


def test_a_loop_variable_stopped_inside_the_body_has_a_zero_gradient_not_none():
    # testWhileGrad_StopGradInside: y reaches rx only through stop_gradient; TensorFlow still
    # differentiates y's loop variable, and its gradient is zero.
    x = df.constant(3.0, name="x")
    y = df.constant(2.0, name="y")
    rx, _ = squaring_loop(x, y, stop_inside=True)
    grad_y = df.gradients(rx, y)[0]
    assert grad_y is not None
    assert run(grad_y) == 0.0
    assert run(df.gradients(rx, x)[0]) == 156.0


def test_a_stopped_loop_variable_of_unknown_shape_gets_zeros_and_no_backward_op_of_the_stop():
    # testWhileGrad_StopGradInsideNoShape
    x = df.placeholder(df.float32)
    y = df.placeholder(df.float32)
    rx, _ = squaring_loop(x, y, stop_inside=True)
    feed = {x: [3.0, 4.0], y: [2.0, 3.0]}
    np.testing.assert_array_equal(run(df.gradients(rx, y)[0], feed), [0.0, 0.0])
    np.testing.assert_array_equal(run(df.gradients(rx, x)[0], feed), [156.0, 400.0])
    names = [op.name for op in df.get_default_graph().get_operations()]
    assert not any("stopped_grad" in name for name in names)


def test_gradients_through_the_results_of_a_loop_with_stopped_results():
    # testWhileGrad_StopGrad: a gradient that no result of the loop receives is None; once one
    # result receives it, the other result's stopped variable contributes zeros.
    x = df.constant(3.0, name="x")
    y = df.constant(2.0, name="y")
    rx, ry = squaring_loop(x, y)
    assert run(df.gradients(rx, y)[0]) == 136.0
    assert run(df.gradients(ry, y)[0]) == 32.0
    assert df.gradients(df.stop_gradient(rx), y) == [None]
    assert df.gradients(df.stop_gradient(ry), y) == [None]
    assert df.gradients(df.stop_gradient(df.square(rx)), y) == [None]
    assert df.gradients(df.stop_gradient(df.add(rx, ry)), x) == [None]
    assert df.gradients(df.stop_gradient(df.add(rx, ry)), y) == [None]
    assert run(df.gradients(df.add(rx, ry), y)[0]) == 168.0
    assert run(df.gradients(df.add(rx, df.stop_gradient(ry)), y)[0]) == 136.0
    assert run(df.gradients(df.add(df.stop_gradient(rx), ry), y)[0]) == 32.0


def test_a_variable_whose_only_result_is_stopped_gets_zeros_when_another_result_is_used():
    x = df.constant(3.0)
    y = df.constant(2.0)
    rx, ry = df.while_loop(lambda a, b: a < 100.0, lambda a, b: (a * a, b * a), [x, y])
    grad = df.gradients(rx + df.stop_gradient(ry), y)[0]
    assert grad is not None and run(grad) == 0.0


def test_zeros_flow_back_from_a_stopped_loop_variable_to_what_its_start_is_computed_from():
    w = df.constant(2.0)
    x = df.constant(3.0)
    body = lambda a, b: (a * a + df.stop_gradient(b * b), b * b)  # noqa: E731
    rx, _ = df.while_loop(lambda a, b: a < 100.0, body, [x, w * 3.0])
    assert run(df.gradients(rx, w)[0]) == 0.0


def test_stop_gradients_inside_a_loop_body_give_zeros_like_stop_gradient():
    x = df.constant(3.0)
    y = df.constant(2.0)
    stopped = []

    def body(a, b):
        stopped.append(b * b)
        return a * a + stopped[-1], b * b

    rx, _ = df.while_loop(lambda a, b: a < 100.0, body, [x, y])
    assert run(df.gradients(rx, y, stop_gradients=stopped)[0]) == 0.0


def test_a_stop_outside_the_loop_variables_still_gives_none():
    # Only a loop variable gets a backward variable: a stop before the loop, or on a tensor
    # the body captures, leaves no path, as in TensorFlow.
    x = df.constant(3.0)
    y = df.constant(2.0)
    started = df.while_loop(
        lambda a, b: a < 100.0, lambda a, b: (a * a + b, b * b), [x, df.stop_gradient(y * 2.0)]
    )[0]
    captured = df.while_loop(
        lambda a, b: a < 100.0, lambda a, b: (a * a + df.stop_gradient(y * y), b), [x, x]
    )[0]
    assert df.gradients(started, y) == [None]
    assert df.gradients(captured, y) == [None]


def test_a_loop_built_without_back_prop_gives_none():
    x = df.constant(3.0)
    y = df.constant(2.0)
    body = lambda a, b: (a * a + b, b * b)  # noqa: E731
    rx, _ = df.while_loop(lambda a, b: a < 100.0, body, [x, y], back_prop=False)
    assert df.gradients(rx, y) == [None]
    assert run(df.gradients(rx * y, y)[0]) == 125.0

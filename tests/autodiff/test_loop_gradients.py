"""Gradients through `while_loop`: a backward loop fed by per-iteration stacks."""

import collections
import threading
import time

import numpy as np
import pytest
from gradient_checking import check_gradients, define_counted_identity

import dataflow as df
from dataflow.autodiff.gradients import WhileLoopGradientError
from dataflow.framework.op_registry import apply_op, define_op
from dataflow.ops.stack_ops import Stack

rng = np.random.default_rng(11)


def normal(*shape):
    return rng.normal(size=shape)


def loop(cond, body, loop_vars, **kwargs):
    return df.while_loop(cond, body, loop_vars, **kwargs)


# -- agreement with finite differences -------------------------------------------------------------
def test_gradient_of_a_simple_loop_matches_finite_differences():
    def make(x, w):
        return loop(lambda i, a: i < 4, lambda i, a: (i + 1, df.sin(a) * w + a), [0, x])[1]

    check_gradients(make, [normal(3), normal(3)])


def test_nested_loops_whose_inner_trip_count_depends_on_the_outer_iteration():
    def make(x, w):
        def outer_body(i, a):
            inner = loop(lambda j, b: j < i + 1, lambda j, b: (j + 1, df.tanh(b * w) + a), [0, a])
            return i + 1, inner[1]

        return loop(lambda i, a: i < 3, outer_body, [0, x])[1]

    check_gradients(make, [normal(2), normal(2)])


def test_cond_inside_a_loop_follows_each_iterations_branch():
    def make(x, w):
        def body(i, a):
            return i + 1, df.cond(df.reduce_sum(a) > 0.0, lambda: a * w, lambda: df.sin(a) - w)

        return loop(lambda i, a: i < 5, body, [0, x])[1]

    check_gradients(make, [normal(2), normal(2)])


@pytest.mark.parametrize("taken", [True, False])
def test_loop_inside_a_cond_for_either_branch(taken):
    def make(x, w):
        p = df.placeholder_with_default(taken, [])
        return df.cond(
            p,
            lambda: loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * w), [0, x])[1],
            lambda: x * 2.0,
        )

    check_gradients(make, [normal(2), normal(2)])


def test_loop_inside_a_cond_inside_a_loop():
    def make(x, w):
        def body(i, a):
            def inner():
                return loop(lambda j, b: j < i, lambda j, b: (j + 1, df.tanh(b) * w), [0, a])[1]

            return i + 1, df.cond(df.equal(df.mod(i, 2), 0), inner, lambda: a * 0.5 + w)

        return loop(lambda i, a: i < 5, body, [0, x])[1]

    check_gradients(make, [normal(2), normal(2)])


def test_an_invariant_captured_two_levels_deep_accumulates_over_all_iterations():
    def make(x, w):
        def outer_body(i, a):
            inner = loop(lambda j, b: j < 2, lambda j, b: (j + 1, b * w + df.cos(w)), [0, a])
            return i + 1, inner[1]

        return loop(lambda i, a: i < 3, outer_body, [0, x])[1]

    check_gradients(make, [normal(2), normal(2) * 0.5])


def test_maximum_iterations_bounds_the_backward_loop_too():
    def make(x, w):
        return loop(
            lambda a: df.reduce_sum(a) < 100.0, lambda a: a * w + 1.0, [x], maximum_iterations=4
        )

    check_gradients(make, [normal(2), normal(2)])


def test_a_zero_trip_loop_passes_the_gradient_straight_through():
    def make(x, w):
        return loop(lambda i, a: i < 0, lambda i, a: (i + 1, a * w), [0, x])[1] + w

    grads = check_gradients(make, [normal(2), normal(2)])
    np.testing.assert_allclose(grads[0], grads[1])


def test_several_loop_variables_in_nested_structures():
    def make(x, w):
        def body(i, s):
            return i + 1, {"a": s["a"] * w, "b": (s["b"][0] + s["a"], df.sin(s["b"][1]))}

        _, r = loop(lambda i, s: i < 3, body, [0, {"a": x, "b": (w, x * 2.0)}])
        return r["a"] + r["b"][0] * r["b"][1]

    check_gradients(make, [normal(2), normal(2)])


def test_a_loop_result_that_is_not_used_still_carries_gradient_through_the_body():
    # Only the first result is differentiated, but b feeds a in every iteration.
    def make(x, w):
        return loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a + b, b * w), [0, x, x])[1]

    check_gradients(make, [normal(2), normal(2)])


def test_a_loop_variable_overwritten_in_every_iteration():
    def make(x, w):
        return loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * b, w), [0, x, x])[1]

    check_gradients(make, [normal(2), normal(2)])


def test_run_time_shapes_inside_the_loop():
    def make(x, w):
        xu = df.placeholder_with_default(x, [None])
        wu = df.placeholder_with_default(w, [None])

        def body(i, a):
            return i + 1, df.cond(df.reduce_sum(a) > 0.0, lambda: a * wu, lambda: df.sin(a) + 1.0)

        invariants = [df.TensorShape([]), df.TensorShape([None])]
        return loop(lambda i, a: i < 4, body, [0, xu], shape_invariants=invariants)[1]

    check_gradients(make, [normal(3), normal(3)])


def test_a_loop_variable_that_grows_every_iteration():
    def make(x, w):
        def body(i, a):
            return i + 1, df.concat([a, df.sin(a[-2:]) * w], axis=0)

        invariants = [df.TensorShape([]), df.TensorShape([None])]
        return df.reduce_sum(loop(lambda i, a: i < 3, body, [0, x], shape_invariants=invariants)[1])

    check_gradients(make, [normal(2), normal(2)])


def test_gradient_with_respect_to_a_variable_read_inside_the_loop():
    v = df.Variable(np.array([0.5, -1.0]), name="v")
    x = df.placeholder(df.float64, [2])
    y = loop(lambda i, a: i < 3, lambda i, a: (i + 1, df.tanh(a * v)), [0, x])[1]
    (g,) = df.gradients(df.reduce_sum(y), v)
    with df.Session() as session:
        session.run(v.initializer)
        symbolic = session.run(g, {x: [0.3, 0.7]})
        eps, numeric = 1e-6, np.zeros(2)
        for k in range(2):
            values = []
            for sign in (1, -1):
                shifted = np.array([0.5, -1.0])
                shifted[k] += sign * eps
                v.load(shifted, session)
                values.append(session.run(df.reduce_sum(y), {x: [0.3, 0.7]}))
            numeric[k] = (values[0] - values[1]) / (2 * eps)
    np.testing.assert_allclose(symbolic, numeric, rtol=1e-6)


# -- which xs get a gradient -----------------------------------------------------------------------
def test_integer_loop_variables_have_no_gradient():
    x = df.placeholder(df.float64, [])
    n = df.placeholder(df.int32, [])
    _, y = loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 2.0), [0, x])
    gx, gn = df.gradients(y, [x, n])
    assert gn is None
    with df.Session() as session:
        assert session.run(gx, {x: 1.0, n: 3}) == 8.0


def test_back_prop_false_stops_the_gradient_at_the_loop():
    x = df.placeholder(df.float64, [])
    y = loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, x], back_prop=False)[1]
    assert df.gradients(y, x) == [None]
    (g,) = df.gradients(y + x * x, x)
    with df.Session() as session:
        assert session.run(g, {x: 3.0}) == 6.0


def test_loop_variables_unconnected_to_xs_get_none_and_cost_nothing():
    x = df.placeholder(df.float64, [])
    z = df.placeholder(df.float64, [])
    _, a, b = loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * x, b + 1.0), [0, x, z])
    assert df.gradients(a, [x, z])[1] is None
    grad_a, grad_z = df.gradients(a + b, [x, z])
    with df.Session() as session:
        assert session.run([grad_a, grad_z], {x: 2.0, z: 5.0}) == [32.0, 1.0]


# -- the runtime -----------------------------------------------------------------------------------
def _recurrent_program(parallel_iterations):
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, [4], name="x")
        w = df.placeholder(df.float64, [4, 4], name="w")

        def body(i, h, total):
            h2 = df.tanh(df.reshape(df.matmul(df.reshape(h, [1, 4]), w), [4]) + x)
            inner = loop(
                lambda j, b: j < i % 3,
                lambda j, b: (j + 1, df.sin(b) * h2),
                [0, h2],
                parallel_iterations=parallel_iterations,
            )[1]
            c = df.cond(df.reduce_sum(h2) > 0.0, lambda: inner * 2.0, lambda: inner - h)
            return i + 1, c, total + df.reduce_sum(c * c)

        zero = df.constant(0.0, df.float64)
        _, h, total = loop(
            lambda i, h, t: i < 12, body, [0, x, zero], parallel_iterations=parallel_iterations
        )
        grads = df.gradients(total + df.reduce_sum(h), [x, w])
    return graph, x, w, grads


def test_results_do_not_depend_on_parallel_iterations_or_threads():
    feed_values = (normal(4), normal(4, 4) * 0.5)
    results = []
    for parallel_iterations in (1, 32):
        for threads in (1, 4):
            graph, x, w, grads = _recurrent_program(parallel_iterations)
            config = df.ConfigProto(inter_op_parallelism_threads=threads)
            with df.Session(graph=graph, config=config) as session:
                results.append(session.run(grads, dict(zip((x, w), feed_values))))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert a.tobytes() == b.tobytes()


def _define_slow_scale():
    """``SlowScaleForTest(k)``: 1 + k/10, after a sleep that is longer for smaller k, on a pool
    thread (not inline), so that with several iterations in flight later ones finish first."""

    def kernel(attrs):
        def slow_scale(k):
            time.sleep(0.003 * (8 - int(k)))
            return np.float64(1.0 + 0.1 * int(k))

        return slow_scale

    scalar = df.TensorShape([])
    define_op("SlowScaleForTest", lambda op: [(df.float64, scalar)], kernel, inline=False)
    df.NotDifferentiable("SlowScaleForTest")
    return lambda k: apply_op("SlowScaleForTest", [k]).outputs[0]


@pytest.mark.parametrize("parallel_iterations", [1, 10])
@pytest.mark.parametrize("threads", [1, 4])
def test_each_pop_reads_the_value_its_forward_iteration_pushed(parallel_iterations, threads):
    # v_k depends only on k and is ready out of order under the pool; the gradient pairs v_k
    # with a_k (d/da of a*v + sin(a) is v + cos(a)), so a push or pop out of order shows.
    slow_scale = _define_slow_scale()
    x = df.placeholder(df.float64, [])

    def body(i, a):
        return i + 1, a * slow_scale(i) + df.sin(a)

    _, y = loop(lambda i, a: i < 8, body, [0, x], parallel_iterations=parallel_iterations)
    (g,) = df.gradients(y, x)
    config = df.ConfigProto(inter_op_parallelism_threads=threads)
    with df.Session(config=config) as session:
        value, grad = session.run([y, g], {x: 0.7})
    a, expected = 0.7, 1.0
    for k in range(8):
        v = 1.0 + 0.1 * k
        expected *= v + np.cos(a)
        a = a * v + np.sin(a)
    np.testing.assert_allclose(value, a)
    np.testing.assert_allclose(grad, expected)


def test_concurrent_runs_of_one_session_do_not_share_stacks():
    graph, x, w, grads = _recurrent_program(32)
    w_value = normal(4, 4) * 0.5
    inputs = [normal(4) for _ in range(6)]
    with df.Session(graph=graph, config=df.ConfigProto(inter_op_parallelism_threads=4)) as s:
        expected = [s.run(grads, {x: v, w: w_value}) for v in inputs]
        results = [None] * len(inputs)

        def worker(k):
            results[k] = s.run(grads, {x: inputs[k], w: w_value})

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(len(inputs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for got, want in zip(results, expected):
        for a, b in zip(got, want):
            assert a.tobytes() == b.tobytes()


def test_a_failed_run_leaves_the_session_usable():
    x = df.placeholder(df.float64, [])
    limit = df.placeholder_with_default(np.float64(10.0), [])

    def body(i, a):
        check = df.Assert(a < limit, ["value too large:", a])
        with df.control_dependencies([check]):
            return i + 1, df.sin(a) * 3.0

    y = loop(lambda i, a: i < 4, body, [0, x])[1]
    (g,) = df.gradients(y, x)
    with df.Session() as session:
        with pytest.raises(df.errors.InvalidArgumentError, match="value too large"):
            session.run(g, {x: 0.5, limit: 1.0})
        expected, a = 1.0, 0.5
        for _ in range(4):
            expected *= 3.0 * np.cos(a)
            a = np.sin(a) * 3.0
        np.testing.assert_allclose(session.run(g, {x: 0.5}), expected)


def test_backward_pass_runs_no_kernel_of_an_iterations_untaken_branch():
    calls = []
    counted = define_counted_identity(calls)
    x = df.placeholder(df.float64, [])

    def body(i, a):
        even = df.equal(df.mod(i, 2), 0)
        return i + 1, df.cond(
            even, lambda: counted("even", a * 2.0), lambda: counted("odd", df.sin(a))
        )

    y = loop(lambda i, a: i < 5, body, [0, x])[1]
    (g,) = df.gradients(y, x)
    with df.Session() as session:
        value = session.run(g, {x: 0.3})
    assert collections.Counter(calls) == {"even": 3, "odd": 2}
    a, expected = 0.3, 1.0
    for i in range(5):
        expected *= 2.0 if i % 2 == 0 else np.cos(a)
        a = a * 2.0 if i % 2 == 0 else np.sin(a)
    np.testing.assert_allclose(value, expected)


def test_loop_in_an_untaken_branch_runs_no_backward_kernel_and_does_not_stall():
    calls = []
    counted = define_counted_identity(calls)
    x = df.placeholder(df.float64, [])
    p = df.placeholder(df.bool, [])

    def looping():
        return loop(lambda i, a: i < 3, lambda i, a: (i + 1, counted("loop", a * a)), [0, x])[1]

    y = df.cond(p, looping, lambda: x * 3.0)
    (g,) = df.gradients(y, x)
    with df.Session() as session:
        assert session.run(g, {x: 1.5, p: False}) == 3.0
        assert calls == []
        np.testing.assert_allclose(session.run(g, {x: 1.1, p: True}), 8 * 1.1**7)
        assert calls == ["loop"] * 3


@pytest.mark.measures_its_runs
def test_a_thousand_iterations_save_only_what_the_backward_ops_read(monkeypatch):
    pushed, popped = [], []
    original_push, original_pop = Stack.push, Stack.pop

    def push(self, value):
        pushed.append(np.asarray(value).nbytes)
        original_push(self, value)

    def pop(self):
        value = original_pop(self)
        popped.append(float(value))
        return value

    monkeypatch.setattr(Stack, "push", push)
    monkeypatch.setattr(Stack, "pop", pop)
    x = df.placeholder(df.float64, [])
    w = df.placeholder(df.float64, [])
    _, y = loop(lambda i, a: i < 1000, lambda i, a: (i + 1, a * w), [0, x], parallel_iterations=1)
    gx, gw = df.gradients(y, [x, w])
    saved = [
        op.inputs[1] for op in df.get_default_graph().get_operations() if op.type == "StackPushV2"
    ]
    # The gradient of a * w reads a (w is a loop invariant, entered into the backward loop).
    assert [t.op.type for t in saved] == ["Identity"]
    with df.Session() as session:
        grad_x, grad_w = session.run([gx, gw], {x: 1.0, w: 1.001})
    np.testing.assert_allclose(grad_x, 1.001**1000)
    np.testing.assert_allclose(grad_w, 1000 * 1.001**999)
    assert pushed == [8] * 1000
    # One backward iteration per forward one, in reverse: a is 1.001**k in iteration k.
    np.testing.assert_allclose(popped, [1.001**k for k in range(999, -1, -1)])


def _record_pushes(monkeypatch) -> list:
    """The values pushed on stacks by the runs that follow, in push order."""
    pushed = []
    original_push = Stack.push

    def push(self, value):
        pushed.append(np.asarray(value))
        original_push(self, value)

    monkeypatch.setattr(Stack, "push", push)
    return pushed


def _saved_tensors(graph=None) -> list:
    graph = graph or df.get_default_graph()
    return [op.inputs[1] for op in graph.get_operations() if op.type == "StackPushV2"]


def test_backward_ops_that_need_only_a_shape_save_the_shape_not_the_value(monkeypatch):
    # Every op of this body has a gradient that reads no forward value, only forward shapes
    # (Reshape, ExpandDims, ConcatV2, Add with broadcasting, Mean, Squeeze), and the shapes
    # are unknown until run time.  Per iteration, only those shapes (and the Mean's element
    # counts) are saved: a few integers, never one of the float tensors.
    pushed = _record_pushes(monkeypatch)
    x = df.placeholder(df.float64, [None, None])
    bias = df.placeholder(df.float64, [None])

    def body(i, a):
        row = df.expand_dims(df.reshape(a, [-1]), 0)
        rows = df.concat([row, row + row], axis=0)
        mean = df.squeeze(df.reduce_mean(rows, axis=0, keepdims=True), [0])
        return i + 1, df.reshape(mean + bias, df.shape(a))

    _, y = loop(lambda i, a: i < 5, body, [0, x])
    gx, gbias = df.gradients(df.reduce_sum(y), [x, bias])
    saved = _saved_tensors()
    assert saved and all(t.dtype == df.int32 and t.shape.ndims <= 1 for t in saved), saved
    with df.Session() as session:
        grad_x, grad_bias = session.run([gx, gbias], {x: np.ones((30, 40)), bias: [0.5]})
    # a <- 1.5 a + bias, five times.
    np.testing.assert_allclose(grad_x, np.full((30, 40), 1.5**5))
    np.testing.assert_allclose(grad_bias, [30 * 40 * sum(1.5**k for k in range(5))])
    assert pushed and all(v.dtype == np.int32 and v.size <= 2 for v in pushed)


def test_an_invariant_used_in_a_cond_inside_a_loop_is_read_once_not_saved_per_iteration(
    monkeypatch,
):
    def make(x, w):
        def body(i, a):
            odd = df.equal(i % 2, 1)
            return i + 1, df.cond(odd, lambda: df.tanh(df.matmul(a, w)), lambda: a * 0.5)

        return loop(lambda i, a: i < 5, body, [0, x])[1]

    check_gradients(make, [normal(1, 4), normal(4, 4)])

    pushed = _record_pushes(monkeypatch)
    x = df.placeholder(df.float64, [1, 64])
    w = df.placeholder(df.float64, [64, 64])
    (gw,) = df.gradients(make(x, w), w)
    assert all(t.shape.as_list() != [64, 64] for t in _saved_tensors())
    with df.Session() as session:
        session.run(gw, {x: normal(1, 64), w: normal(64, 64) / 8})
    assert pushed and max(v.nbytes for v in pushed) == 64 * 8  # rows of a, never w


def test_a_value_read_only_for_a_gradient_nobody_asked_for_is_not_saved(monkeypatch):
    # The gradient function of a * b builds the gradients of both inputs, and that of b reads
    # a; but b does not depend on x, so no result needs it, and only b is saved.
    pushed = _record_pushes(monkeypatch)
    x = df.placeholder(df.float64, [100])
    body_values = {}

    def body(i, a, b):
        body_values.update(a=a, b=b)
        return i + 1, a * b, b * 1.5

    b_0 = df.placeholder(df.float64, [100])
    _, y, _ = loop(lambda i, a, b: i < 4, body, [0, x, b_0])
    (gx,) = df.gradients(y, x)
    assert [t.name for t in _saved_tensors()] == [body_values["b"].name]
    with df.Session() as session:
        grad = session.run(gx, {x: np.ones(100), b_0: np.full(100, 2.0)})
    np.testing.assert_allclose(grad, np.full(100, 2.0 * 3.0 * 4.5 * 6.75))
    assert {float(v[0]) for v in pushed} == {2.0, 3.0, 4.5, 6.75}  # b, never a


# -- gradients inside a loop body ------------------------------------------------------------------
def test_gradient_descent_inside_a_loop_body():
    x0 = df.placeholder(df.float64, [])
    target = df.placeholder(df.float64, [])

    def step(i, x):
        loss = df.square(x - target)
        (grad,) = df.gradients(loss, x)
        return i + 1, x - 0.25 * grad

    _, x = loop(lambda i, x: i < 20, step, [0, x0])
    with df.Session() as session:
        np.testing.assert_allclose(session.run(x, {x0: 5.0, target: 2.0}), 2.0 + 3.0 * 0.5**20)


def test_gradient_inside_a_loop_body_of_a_captured_tensor_and_through_an_inner_loop():
    w = df.placeholder(df.float64, [])

    def step(i, acc):
        inner = loop(lambda j, b: j < 3, lambda j, b: (j + 1, b * w), [0, acc])[1]
        (grad,) = df.gradients(inner, w)  # d(acc * w^3)/dw, inside iteration i
        return i + 1, acc + grad

    _, result = loop(lambda i, a: i < 2, step, [0, df.constant(1.0, df.float64)])
    with df.Session() as session:
        a = 1.0
        for _ in range(2):
            a = a + a * 3 * 2.0**2
        np.testing.assert_allclose(session.run(result, {w: 2.0}), a)


# -- what is refused -------------------------------------------------------------------------------
def test_second_order_gradients_through_a_loop_are_refused():
    x = df.placeholder(df.float64, [])
    y = loop(lambda i, a: i < 3, lambda i, a: (i + 1, df.sin(a)), [0, x])[1]
    (g,) = df.gradients(y, x)
    with pytest.raises(WhileLoopGradientError, match="Second-order"):
        df.gradients(g, x)


def test_ys_inside_a_loop_whose_xs_enter_as_loop_variables_are_refused_as_tf1_words_it():
    x = df.placeholder(df.float64, [], name="x")
    grads = []

    def body(i, a):
        grads.append(df.gradients(df.sin(a), x))
        return i + 1, a

    with pytest.raises(WhileLoopGradientError) as info:
        loop(lambda i, a: i < 3, body, [0, x])
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(
        "Cannot compute gradient inside while loop with respect to op 'x'. We do not support "
        "taking the gradient wrt or through the initial value of a loop variable."
    )
    assert "test_loop_gradients.py" in str(info.value)


def test_an_x_inside_a_differentiated_loop_is_refused():
    x = df.placeholder(df.float64, [])
    inside = []

    def body(i, a):
        inside.append(df.sin(a))
        return i + 1, inside[-1] * 2.0

    y = loop(lambda i, a: i < 3, body, [0, x])[1]
    with pytest.raises(WhileLoopGradientError, match="lies inside while loop"):
        df.gradients(y, inside[0])


# -- the graph it builds ---------------------------------------------------------------------------
def test_two_gradient_calls_build_two_independent_backward_loops():
    x = df.placeholder(df.float64, [])
    y = loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * a), [0, x])[1]
    (g1,) = df.gradients(y, x)
    (g2,) = df.gradients(y * 2.0, x)
    backward = [
        c
        for c in df.get_default_graph().get_collection(df.GraphKeys.WHILE_CONTEXT)
        if getattr(c, "forward_context", None) is not None
    ]
    assert len(backward) == 2 and len({c.frame_name for c in backward}) == 2
    assert all(c.name.startswith(("gradients/", "gradients_1/")) for c in backward)
    with df.Session() as session:
        assert session.run([g1, g2], {x: 1.5}) == [8 * 1.5**7, 16 * 1.5**7]


def test_nested_conds_and_a_case_inside_a_loop():
    def make(x, w):
        def body(i, a):
            def inner_cond():
                return df.cond(i > 1, lambda: df.sin(a) * w, lambda: a * a)

            a = df.cond(df.reduce_sum(a) > 0.0, inner_cond, lambda: a - w)
            a = df.case(
                [(df.equal(i, 0), lambda: a * 2.0), (df.equal(i, 2), lambda: df.tanh(a))],
                default=lambda: a + w,
            )
            return i + 1, a

        return loop(lambda i, a: i < 5, body, [0, x])[1]

    check_gradients(make, [normal(2), normal(2)])


def test_the_backward_graph_renders_every_op_once_with_the_backward_loop_as_a_cluster():
    import re

    from dataflow.render import graph_to_digraph

    x = df.placeholder(df.float64, [], name="x")

    def body(i, a):
        return i + 1, df.cond(a > 0.0, lambda: df.sin(a), lambda: a * a)

    y = loop(lambda i, a: i < 3, body, [0, x], name="grow")[1]
    df.gradients(y, x)
    source = graph_to_digraph(df.get_default_graph(), max_depth=None).source
    declared = re.findall(r'^\s*("(?:[^"\\]|\\.)*"|[^\s\[\];{}]+) \[', source, flags=re.M)
    names = sorted(d.strip('"') for d in declared if d not in ("graph", "node", "edge"))
    assert names == sorted(op.name for op in df.get_default_graph().get_operations())
    assert "while_loop  gradients/grow_grad" in source


def test_gradients_through_a_loop_of_an_optimized_graph_whose_unused_result_was_pruned():
    from dataflow.passes import optimize

    x = df.placeholder(df.float64, [], name="x")
    one = df.constant(1.0, df.float64)
    _, y = df.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, one])
    for passes in ([], None):  # the copy alone, and the default pipeline
        item, _ = optimize(df.get_default_graph(), [y], [x], passes)
        graph = item.graph
        assert len(graph.get_collection(df.GraphKeys.WHILE_CONTEXT)[0].exits) == 1
        with graph.as_default():
            x_copy = graph.get_tensor_by_name("x:0")
            (grad,) = df.gradients(graph.get_tensor_by_name(y.name), [x_copy])
            with df.Session(graph=graph) as sess:
                assert sess.run(grad, {x_copy: 2.0}) == 12.0  # d(x^3)/dx


def test_a_gradient_that_needs_a_pruned_loop_result_says_so():
    from dataflow.passes import optimize

    x = df.placeholder(df.float64, [], name="x")
    start = [df.constant(1.0, df.float64), df.constant(0.0, df.float64)]
    _, b = df.while_loop(lambda a, b: b < 100, lambda a, b: (a * x, b + a), start)
    item, _ = optimize(df.get_default_graph(), [b], [x], [])
    graph = item.graph
    with graph.as_default():
        with pytest.raises(LookupError, match="pruned copy") as info:
            df.gradients(graph.get_tensor_by_name(b.name), [graph.get_tensor_by_name("x:0")])
    assert "test_loop_gradients.py" in str(info.value)

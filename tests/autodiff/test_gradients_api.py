"""`df.gradients`: TF1 semantics of the pass itself."""

import numpy as np
import pytest

import dataflow as df
from dataflow.autodiff.gradients import WhileLoopGradientError


def run(fetches, feed=None):
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        return session.run(fetches, feed)


def test_gradients_of_several_ys_are_summed():
    x = df.placeholder(df.float64, [2])
    (g,) = df.gradients([x * 2.0, df.square(x)], x)
    np.testing.assert_allclose(run(g, {x: [1.0, 3.0]}), [4.0, 8.0])


def test_unconnected_x_gets_none():
    x, z = df.placeholder(df.float64, [2]), df.placeholder(df.float64, [2])
    assert df.gradients(x * 3.0, [x, z])[1] is None


@pytest.mark.parametrize("zero", [df.UnconnectedGradients.ZERO, "zero"])
def test_unconnected_gradients_zero_gives_zeros_like_x(zero):
    x = df.placeholder(df.float64, [2])
    n = df.placeholder(df.int32, [None, 3])
    g = df.gradients(x * 3.0, [x, n], unconnected_gradients=zero)
    values = run(g, {x: [1.0, 2.0], n: np.ones((2, 3), np.int32)})
    np.testing.assert_allclose(values[0], [3.0, 3.0])
    assert values[1].dtype == np.int32 and values[1].shape == (2, 3) and not values[1].any()
    assert df.gradients(x * 3.0, [n], unconnected_gradients="none") == [None]
    with pytest.raises(ValueError, match="unconnected_gradients"):
        df.gradients(x * 3.0, [n], unconnected_gradients="ones")


@pytest.mark.parametrize(
    "method",
    [
        None,
        df.AggregationMethod.ADD_N,
        df.AggregationMethod.DEFAULT,
        df.AggregationMethod.EXPERIMENTAL_TREE,
        df.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N,
    ],
)
def test_every_aggregation_method_gives_the_same_sum(method):
    x = df.placeholder(df.float64, [2])
    (g,) = df.gradients(x * x + x * 3.0 + df.square(x), x, aggregation_method=method)
    np.testing.assert_allclose(run(g, {x: [1.0, 2.0]}), [7.0, 11.0])


@pytest.mark.parametrize("method", [7, -1, "add_n", True])
def test_an_unknown_aggregation_method_is_a_value_error(method):
    x = df.placeholder(df.float64, [2])
    with pytest.raises(ValueError, match="aggregation_method"):
        df.gradients(x * x, x, aggregation_method=method)


def test_optimizer_passes_aggregation_method_on():
    v = df.Variable(1.0)
    optimizer = df.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="aggregation_method"):
        optimizer.minimize(v * v, aggregation_method=5)
    step = optimizer.minimize(v * v, aggregation_method=df.AggregationMethod.EXPERIMENTAL_TREE)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        np.testing.assert_allclose(session.run(v), 0.8)


def test_grad_ys_of_a_shape_incompatible_with_y_is_a_value_error():
    # Summing a [2] grad_ys into the scalar x would silently give 2*x*(2+1).
    x = df.constant(3.0)
    with pytest.raises(ValueError, match="incompatible with the shape"):
        df.gradients(x * x, x, grad_ys=df.constant([2.0, 1.0]))
    p = df.placeholder(df.float32, [None])
    (g,) = df.gradients(p * 2.0, p, grad_ys=df.placeholder_with_default([1.0, 3.0], None))
    np.testing.assert_allclose(run(g, {p: [1.0, 1.0]}), [2.0, 6.0])


def test_grad_ys_scale_the_incoming_gradient():
    x = df.placeholder(df.float64, [2])
    (g,) = df.gradients(x * 3.0, x, grad_ys=[np.array([1.0, -2.0])])
    np.testing.assert_allclose(run(g, {x: [0.0, 0.0]}), [3.0, -6.0])


def test_an_integer_grad_ys_for_a_float_y_is_taken_as_tf1_takes_it():
    x = df.placeholder(df.float32, [2])
    (g,) = df.gradients(x * 3.0, x, grad_ys=[df.constant([2, -1])])
    assert g.dtype == df.float32
    np.testing.assert_allclose(run(g, {x: [0.0, 0.0]}), [6.0, -3.0])


def test_a_reference_grad_ys_is_read_as_its_value():
    x = df.placeholder(df.float32, [])
    seed = df.Variable(7)._ref()
    (g,) = df.gradients(x * 2.0, x, grad_ys=[seed])
    assert run(g, {x: 1.0}) == 14.0


def test_a_grad_ys_that_is_not_a_number_is_tf1s_type_error():
    x = df.constant(1.0)
    with pytest.raises(TypeError, match="Gradient type bool generated for real or integer"):
        df.gradients(x * 2.0, x, grad_ys=[df.constant(True)])


def test_default_grad_ys_are_ones_like_y():
    x = df.placeholder(df.float64, [None])
    (g,) = df.gradients(x * x, x)
    np.testing.assert_allclose(run(g, {x: [1.0, 2.0, 3.0]}), [2.0, 4.0, 6.0])


def test_stop_gradient_op_blocks_the_path():
    x = df.placeholder(df.float64, [])
    (g,) = df.gradients(x * df.stop_gradient(x * 5.0), x)
    assert run(g, {x: 2.0}) == 10.0


def test_stop_gradients_argument_blocks_paths_through_those_tensors():
    a = df.constant(1.0, df.float64)
    b = a * 2.0
    c = a + b
    ga, gb = df.gradients(c, [a, b], stop_gradients=[a, b])
    assert run([ga, gb]) == [1.0, 1.0]
    assert run(df.gradients(c, a)[0]) == 3.0


def test_gradient_with_respect_to_a_variable_sums_over_all_its_reads():
    v = df.Variable(np.array([1.0, 2.0]), name="v")
    y = df.reduce_sum(v * 3.0) + df.reduce_sum(df.square(v.read_value()))
    (g,) = df.gradients(y, v)
    np.testing.assert_allclose(run(g), [5.0, 7.0])


def test_variable_read_as_tensor_is_a_valid_x():
    v = df.Variable(2.0, name="v", dtype=df.float64)
    r = v.value()
    (g,) = df.gradients(r * r, r)
    assert run(g) == 4.0


def test_backward_ops_live_in_a_unique_gradients_name_scope():
    x = df.placeholder(df.float64, [2])
    (g1,) = df.gradients(df.sin(x), x)
    (g2,) = df.gradients(df.sin(x), x)
    assert g1.op.name.startswith("gradients/")
    assert g2.op.name.startswith("gradients_1/")


def test_tensors_from_another_graph_are_rejected():
    x = df.placeholder(df.float64, [])
    with df.Graph().as_default():
        other = df.placeholder(df.float64, [])
    with pytest.raises(ValueError, match="different graph"):
        df.gradients(x * 2.0, other)


def test_gradient_through_a_hand_written_loop_frame_is_refused_not_wrong():
    x = df.placeholder(df.float64, [])
    entered = df.enter(x, frame_name="by_hand")
    value, _ = df.merge([entered, entered])
    keep_going = df.loop_cond(df.less(value, 10.0))
    done, body = df.switch(value, keep_going)
    df.set_merge_input(value, 1, df.next_iteration(body * 2.0))
    y = df.exit(done)
    with pytest.raises(WhileLoopGradientError, match="written by hand"):
        df.gradients(y, x)
    with pytest.raises(LookupError):
        df.gradients(y, x)
    with pytest.raises(NotImplementedError):
        df.gradients(y, x)


def test_loop_off_the_differentiated_path_is_fine():
    x = df.placeholder(df.float64, [])
    n = df.while_loop(lambda i: i < 3, lambda i: i + 1.0, [df.constant(0.0, df.float64)])
    (g,) = df.gradients(x * x + n, x)
    assert run(g, {x: 3.0}) == 6.0
    m = df.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, x])[1]
    (g,) = df.gradients(x * df.stop_gradient(m), x)
    assert run(g, {x: 2.0}) == 16.0


def test_registering_a_gradient_for_a_new_op_type():
    from dataflow.framework.op_registry import apply_op, define_op

    define_op(
        "TimesThreeForTest",
        lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
        lambda attrs: lambda x: x * 3,
    )

    @df.RegisterGradient("TimesThreeForTest")
    def _grad(op, grad):
        return grad * 3.0

    x = df.placeholder(df.float64, [])
    y = apply_op("TimesThreeForTest", [x]).outputs[0]
    assert run(df.gradients(y, x)[0], {x: 1.0}) == 3.0


def test_op_without_gradient_raises_lookup_error_naming_it():
    from dataflow.framework.op_registry import apply_op, define_op

    define_op(
        "NoGradientForTest",
        lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
        lambda attrs: lambda x: x,
    )
    x = df.placeholder(df.float64, [])
    y = apply_op("NoGradientForTest", [x]).outputs[0]
    with pytest.raises(LookupError, match="NoGradientForTest"):
        df.gradients(y, x)


def test_not_differentiable_op_gives_none_without_error():
    x = df.placeholder(df.float64, [])
    y = df.cast(df.greater(x, 0.0), df.float64)
    assert df.gradients(y, x) == [None]


def test_every_op_a_call_adds_is_listed_as_a_backward_op():
    # Including those it adds to the forward loop (the counter, the pushes), and whatever the
    # call's name scope is called.
    graph = df.get_default_graph()
    x = df.placeholder(df.float64, [])
    _, y = df.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, df.sin(a)), [0, x])
    forward = graph.get_operations()
    df.gradients(y, x, name="mygrads")
    added = graph.get_operations()[len(forward) :]
    assert any(op.type == "StackPushV2" for op in added)
    assert graph.get_collection(df.GraphKeys.BACKWARD_OPS) == added
    doubled = y * 2.0
    before_second_call = len(graph.get_operations())
    df.gradients(doubled, x)
    second = graph.get_operations()[before_second_call:]
    assert graph.get_collection(df.GraphKeys.BACKWARD_OPS) == added + second

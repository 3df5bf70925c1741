"""`df.train`: optimizers, their state and the global step, with tf.compat.v1 semantics."""

import numpy as np
import pytest

import dataflow as df

X = np.random.default_rng(3).normal(size=(8, 3))
Y = X @ np.array([0.5, -1.0, 2.0]) + 0.3


def f32(value: float) -> float:
    """A Python-number hyperparameter as the optimizer uses it: a float32 tensor, cast."""
    return float(np.float32(value))


def loss_and_grad_numpy(w, b):
    r = X @ w + b - Y
    return 2 * X.T @ r / len(Y), 2 * r.mean()


def build(dtype=df.float64):
    w = df.Variable(np.zeros(3), name="w", dtype=dtype)
    b = df.Variable(0.0, name="b", dtype=dtype)
    prediction = df.reshape(df.matmul(X.astype(dtype.name), df.reshape(w, [3, 1])), [-1]) + b
    loss = df.reduce_mean(df.square(prediction - Y.astype(dtype.name)))
    return w, b, loss


def run_steps(optimizer, steps=4, dtype=df.float64):
    w, b, loss = build(dtype)
    step = optimizer.minimize(loss)
    values = []
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for _ in range(steps):
            session.run(step)
            values.append(session.run([w.value(), b.value()]))
    return values


def reference(update, steps=4):
    w, b = np.zeros(3), 0.0
    state = {}
    out = []
    for t in range(1, steps + 1):
        gw, gb = loss_and_grad_numpy(w, b)
        w = update(w, gw, state, "w", t)
        b = update(b, gb, state, "b", t)
        out.append((w, b))
    return out


def assert_same_trajectory(got, expected, rtol=1e-12):
    for (w, b), (ew, eb) in zip(got, expected):
        np.testing.assert_allclose(w, ew, rtol=rtol)
        np.testing.assert_allclose(b, eb, rtol=rtol)


# -- the update rules ------------------------------------------------------------------------------
def test_gradient_descent_matches_numpy():
    got = run_steps(df.train.GradientDescentOptimizer(0.1))
    assert_same_trajectory(got, reference(lambda v, g, s, k, t: v - g * f32(0.1)))


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_numpy(nesterov):
    lr, momentum = f32(0.05), f32(0.9)

    def update(v, g, state, key, t):
        accum = state.get(key, 0.0) * momentum + g
        state[key] = accum
        if nesterov:
            return v - (g * lr + accum * momentum * lr)
        return v - accum * lr

    got = run_steps(df.train.MomentumOptimizer(0.05, 0.9, use_nesterov=nesterov))
    assert_same_trajectory(got, reference(update))


def test_adam_matches_numpy_with_float32_beta_powers():
    lr, b1, b2, eps = f32(0.01), f32(0.9), f32(0.999), f32(1e-8)

    def update(v, g, state, key, t):
        # beta1^t and beta2^t are float32 variables multiplied by float32 betas each step.
        b1_power = float(np.prod([np.float32(0.9)] * t, dtype=np.float32))
        b2_power = float(np.prod([np.float32(0.999)] * t, dtype=np.float32))
        m = state.get(key + "m", 0.0)
        s = state.get(key + "v", 0.0)
        m = m + (g - m) * (1 - b1)
        s = s + (g * g - s) * (1 - b2)
        state[key + "m"], state[key + "v"] = m, s
        alpha = lr * np.sqrt(1 - b2_power) / (1 - b1_power)
        return v - m * alpha / (np.sqrt(s) + eps)

    got = run_steps(df.train.AdamOptimizer(0.01))
    assert_same_trajectory(got, reference(update))


# Four steps on the least-squares problem above, float64 variables, recorded with
# tensorflow.compat.v1 2.21 (GradientDescent(0.1), Momentum(0.05, 0.9, use_nesterov=True),
# Adam(0.01)).
TENSORFLOW_TRAJECTORY_ENDS = {
    "gd": ([0.6903660863081875, -0.7167535736160184, 0.4218262902671718], -0.06313368921539642),
    "nesterov": (
        [0.9971125243689442, -1.0851459456687822, 0.644300665105385],
        -0.11592781581965271,
    ),
    "adam": (
        [0.03995638427239166, -0.03996911719674866, 0.03999358794195592],
        0.03979149189522669,
    ),
}


@pytest.mark.parametrize("kind", sorted(TENSORFLOW_TRAJECTORY_ENDS))
def test_optimizers_reproduce_tensorflow_numbers(kind):
    optimizer = {
        "gd": lambda: df.train.GradientDescentOptimizer(0.1),
        "nesterov": lambda: df.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
        "adam": lambda: df.train.AdamOptimizer(0.01),
    }[kind]()
    w, b = run_steps(optimizer)[-1]
    expected_w, expected_b = TENSORFLOW_TRAJECTORY_ENDS[kind]
    np.testing.assert_allclose(w, expected_w, rtol=1e-13)
    np.testing.assert_allclose(b, expected_b, rtol=1e-13)


def test_adam_adds_epsilon_to_the_uncorrected_root():
    # loss = 3 * x, so g = 3 on every step.  After one step m = 0.1 * 3, v = 0.001 * 9 and the
    # corrected step size is lr * sqrt(0.001) / 0.1: with epsilon = 1 the step is
    # lr * sqrt(0.001) / 0.1 * 0.3 / (sqrt(0.009) + 1), not lr * 3 / (3 + 1) (bias-corrected
    # moments with epsilon outside the correction).
    x = df.Variable(0.0, dtype=df.float64, name="x")
    step = df.train.AdamOptimizer(learning_rate=0.5, epsilon=1.0).minimize(x * 3.0)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        got = session.run(x.value())
    b1, b2, eps = f32(0.9), f32(0.999), 1.0
    alpha = 0.5 * np.sqrt(1 - b2) / (1 - b1)
    expected = -alpha * ((1 - b1) * 3) / (np.sqrt((1 - b2) * 9) + eps)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert abs(got - (-0.5 * 3 / (3 + 1))) > 0.1


def test_python_float_hyperparameters_are_float32_as_in_tensorflow():
    x = df.Variable(1.0, dtype=df.float64, name="x")
    step = df.train.GradientDescentOptimizer(0.1).minimize(x)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        assert session.run(x.value()) == 1.0 - float(np.float32(0.1))
        assert session.run(x.value()) != 1.0 - 0.1


def test_hyperparameters_may_be_tensors_or_callables():
    x = df.Variable(1.0, name="x")
    rate = df.placeholder(df.float32, [], name="rate")
    by_tensor = df.train.GradientDescentOptimizer(rate).minimize(x)
    by_callable = df.train.MomentumOptimizer(lambda: df.constant(0.5), momentum=0.0).minimize(x)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(by_tensor, {rate: 0.25})
        assert session.run(x.value()) == 0.75
        session.run(by_callable)
        assert session.run(x.value()) == 0.25


def test_a_float64_learning_rate_tensor_is_cast_to_a_float32_variable():
    x = df.Variable(1.0, name="x")
    step = df.train.GradientDescentOptimizer(df.constant(0.5, df.float64)).minimize(x)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        assert session.run(x.value()) == np.float32(0.5)


# -- optimizer state -------------------------------------------------------------------------------
def test_slot_variables_are_named_as_in_tensorflow():
    with df.name_scope("model"):
        w = df.Variable(np.zeros(3), name="w")
    b = df.Variable(0.0, name="b", dtype=df.float64)
    loss = df.reduce_sum(df.square(w)) + b
    with df.name_scope("train"):
        adam = df.train.AdamOptimizer()
        adam.minimize(loss)
    assert [v.name for v in adam.variables()] == [
        "b/Adam:0",
        "b/Adam_1:0",
        "model/w/Adam:0",
        "model/w/Adam_1:0",
        "train/beta1_power:0",
        "train/beta2_power:0",
    ]
    assert adam.get_slot_names() == ["m", "v"]
    assert adam.get_slot(w, "m").name == "model/w/Adam:0"
    assert adam.get_slot(w, "v").name == "model/w/Adam_1:0"
    assert adam.get_slot(w, "momentum") is None
    momentum = df.train.MomentumOptimizer(0.1, 0.9)
    momentum.minimize(loss)
    assert momentum.get_slot_names() == ["momentum"]
    assert momentum.get_slot(b, "momentum").name == "b/Momentum:0"


def test_optimizer_state_is_global_and_not_trainable():
    w, b, loss = build()
    adam = df.train.AdamOptimizer()
    adam.minimize(loss)
    assert all(not v.trainable for v in adam.variables())
    assert set(adam.variables()) <= set(df.global_variables())
    assert set(df.trainable_variables()) == {w, b}
    beta1_power = adam._get_beta_accumulators()[0]
    assert beta1_power.dtype is df.float32  # a Python-number beta makes float32 powers
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        np.testing.assert_array_equal(session.run(adam.get_slot(w, "m").value()), np.zeros(3))
        assert session.run(beta1_power.value()) == np.float32(0.9)


def test_one_optimizer_keeps_one_slot_per_variable_across_calls():
    w, b, loss = build()
    adam = df.train.AdamOptimizer()
    first = adam.minimize(loss)
    second = adam.minimize(2.0 * loss)
    assert len(adam.variables()) == 6
    assert first.name == "Adam" and second.name == "Adam_1"
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run([first])
        session.run([second])
        # Both steps advanced the one pair of beta powers.
        beta1_power = adam._get_beta_accumulators()[0]
        np.testing.assert_allclose(session.run(beta1_power.value()), 0.9**3, rtol=1e-6)


def test_non_slot_variables_are_made_once_per_graph():
    adam = df.train.AdamOptimizer()
    graphs = [df.Graph(), df.Graph()]
    for graph in graphs:
        with graph.as_default():
            x = df.Variable(1.0, name="x")
            adam.minimize(x * x)
            assert [v.name for v in adam.variables()] == [
                "beta1_power:0",
                "beta2_power:0",
                "x/Adam:0",
                "x/Adam_1:0",
            ]
            assert all(v.graph is graph for v in adam.variables())


def test_state_is_created_outside_control_dependencies_and_control_flow():
    x = df.Variable(1.0, name="x")
    gate = df.no_op(name="gate")
    with df.control_dependencies([gate]):
        momentum = df.train.MomentumOptimizer(0.1, 0.9)
        momentum.minimize(x * x)
    slot = momentum.get_slot(x, "momentum")
    assert slot.initializer.control_inputs == []
    assert slot.op._control_flow_context is None


def test_slot_of_a_variable_of_unknown_shape_is_shaped_at_initialization():
    x = df.Variable(np.ones(3, np.float32), validate_shape=False, name="x")
    momentum = df.train.MomentumOptimizer(0.5, 0.9)
    step = momentum.minimize(df.reduce_sum(x))
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        np.testing.assert_array_equal(session.run(momentum.get_slot(x, "momentum").value()), 1)
        np.testing.assert_array_equal(session.run(x.value()), [0.5, 0.5, 0.5])


# -- the train op and the global step --------------------------------------------------------------
def test_train_op_is_named_after_the_optimizer_and_collected():
    w, b, loss = build()
    plain = df.train.GradientDescentOptimizer(0.1).minimize(loss)
    named = df.train.GradientDescentOptimizer(0.1).minimize(loss, name="step")
    counted = df.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=df.train.create_global_step()
    )
    assert isinstance(plain, df.Operation) and plain.name == "GradientDescent"
    assert named.name == "step"
    assert counted.name == "GradientDescent_1" and counted.type == "AssignAdd"
    assert df.get_default_graph().get_collection(df.GraphKeys.TRAIN_OP) == [plain, named, counted]


def test_global_step_is_incremented_after_the_update():
    # The learning rate reads the global step: 1 + step.  The update reads it before the
    # increment, so the steps use rates 1 and 2.
    x = df.Variable(0.0, name="x")
    step = df.train.get_or_create_global_step()
    rate = df.cast(step.read_value(), df.float32) + 1.0
    train = df.train.GradientDescentOptimizer(rate).minimize(x, global_step=step)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(train)
        assert (session.run(x.value()), df.train.global_step(session, step)) == (-1.0, 1)
        session.run(train)
        assert (session.run(x.value()), df.train.global_step(session, step)) == (-3.0, 2)


def test_least_squares_converges_and_counts_global_steps():
    w, b, loss = build()
    global_step = df.train.get_or_create_global_step()
    assert df.train.get_global_step() is global_step
    step = df.train.GradientDescentOptimizer(0.2).minimize(loss, global_step=global_step)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for _ in range(600):
            session.run(step)
        np.testing.assert_allclose(session.run(w.value()), [0.5, -1.0, 2.0], atol=1e-5)
        np.testing.assert_allclose(session.run(b.value()), 0.3, atol=1e-5)
        assert df.train.global_step(session, global_step) == 600


def test_get_or_create_global_step_returns_the_existing_step():
    first = df.train.get_or_create_global_step()
    assert df.train.get_or_create_global_step() is first
    assert len(df.global_variables()) == 1


def test_global_step_is_created_at_the_top_level():
    with df.name_scope("train"), df.control_dependencies([df.no_op()]):
        step = df.train.create_global_step()
    assert step.name == "global_step:0"
    assert step.dtype is df.int64 and step.shape == df.TensorShape([])
    assert not step.trainable and step.initializer.control_inputs == []


def test_create_global_step_twice_is_an_error():
    df.train.create_global_step()
    with pytest.raises(ValueError, match="already exists"):
        df.train.create_global_step()


def test_get_global_step_finds_a_variable_named_global_step():
    assert df.train.get_global_step() is None
    step = df.Variable(0, name="global_step", trainable=False)
    assert df.train.get_global_step() is step


def test_get_global_step_rejects_a_step_that_is_not_an_integer_scalar():
    df.Variable(0.0, name="global_step")
    with pytest.raises(TypeError, match="does not have integer type"):
        df.train.get_global_step()
    with df.Graph().as_default() as graph:
        graph.add_to_collection(df.GraphKeys.GLOBAL_STEP, df.Variable([0, 0], name="s"))
        with pytest.raises(TypeError, match="is not scalar"):
            df.train.get_global_step()


def test_several_global_steps_in_the_collection_mean_none():
    for name in ("a", "b"):
        df.get_default_graph().add_to_collection(
            df.GraphKeys.GLOBAL_STEP, df.Variable(0, name=name)
        )
    assert df.train.get_global_step() is None


# -- compute_gradients and apply_gradients ---------------------------------------------------------
def test_compute_gradients_pairs_each_trainable_variable_with_its_gradient():
    w, b, loss = build()
    unused = df.Variable(1.0, name="unused")
    df.Variable(1.0, name="frozen", trainable=False)
    pairs = df.train.GradientDescentOptimizer(0.1).compute_gradients(loss)
    assert [v for _, v in pairs] == [w, b, unused]
    assert pairs[2][0] is None and pairs[0][0] is not None


def test_var_list_may_be_nested_and_hold_tensors():
    w, b, loss = build()
    optimizer = df.train.GradientDescentOptimizer(0.1)
    pairs = optimizer.compute_gradients(loss, var_list=[[w], (b,)])
    assert [v for _, v in pairs] == [w, b]
    prediction = loss.op.inputs[0]
    ((grad, tensor),) = optimizer.compute_gradients(loss, var_list=[prediction])
    assert tensor is prediction and grad is not None
    with pytest.raises(NotImplementedError, match="Trying to update a Tensor"):
        optimizer.apply_gradients([(grad, tensor)])


def test_none_gradients_are_skipped():
    w, b, loss = build()
    unused = df.Variable(5.0, name="unused")
    optimizer = df.train.GradientDescentOptimizer(0.1)
    step = optimizer.apply_gradients(optimizer.compute_gradients(loss))
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        assert session.run(unused.value()) == 5.0
        assert session.run(b.value()) != 0.0


def test_gate_graph_gives_the_same_gradients():
    w, b, loss = build()
    optimizer = df.train.GradientDescentOptimizer(0.1)
    plain = optimizer.compute_gradients(loss)
    gated = optimizer.compute_gradients(loss, gate_gradients=df.train.Optimizer.GATE_GRAPH)
    assert all(g.op.type == "Identity" for g, _ in gated)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for (g1, _), (g2, _) in zip(plain, gated):
            np.testing.assert_array_equal(session.run(g1), session.run(g2))


def test_grad_loss_scales_the_gradients():
    x = df.Variable(2.0, name="x")
    ((grad, _),) = df.train.GradientDescentOptimizer(0.1).compute_gradients(
        x * x, grad_loss=df.constant(3.0)
    )
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        assert session.run(grad) == 12.0


def test_minimize_without_any_gradient_is_an_error():
    x = df.Variable(1.0, name="x")
    df.Variable(1.0, name="y")
    loss = df.stop_gradient(x) * 2.0
    with pytest.raises(ValueError, match="No gradients provided for any variable, check your"):
        df.train.GradientDescentOptimizer(0.1).minimize(loss)


def test_apply_gradients_without_any_gradient_is_an_error():
    v = df.Variable(1.0, name="v")
    with pytest.raises(ValueError, match=r"No gradients provided for any variable: \[.*v:0"):
        df.train.GradientDescentOptimizer(0.1).apply_gradients([(None, v)])
    with pytest.raises(ValueError, match="No variables provided"):
        df.train.GradientDescentOptimizer(0.1).apply_gradients([])


def test_bad_arguments_are_errors():
    x = df.Variable(1.0, name="x")
    optimizer = df.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="gate_gradients must be one of"):
        optimizer.compute_gradients(x * 2.0, gate_gradients=7)
    with pytest.raises(ValueError, match="Invalid type int32"):
        optimizer.compute_gradients(df.constant(3), var_list=[x])
    with pytest.raises(ValueError, match="No variables to optimize"):
        optimizer.compute_gradients(x * 2.0, var_list=[])
    with pytest.raises(TypeError, match="unsupported type"):
        optimizer.compute_gradients(x * 2.0, var_list=["x"])
    with pytest.raises(TypeError, match="loss must be a Tensor"):
        optimizer.minimize("x * 2.0")
    with pytest.raises(TypeError, match="Gradient must be convertible"):
        optimizer.apply_gradients([(object(), x)])
    with pytest.raises(TypeError, match="global_step must be a Variable"):
        optimizer.minimize(x * 2.0, global_step=3)
    with pytest.raises(ValueError, match="Must specify the optimizer name"):
        df.train.GradientDescentOptimizer(0.1, name="")


def test_a_gradient_of_the_wrong_shape_is_an_error_when_built():
    x = df.Variable(np.zeros(3, np.float32), name="x")
    with pytest.raises(ValueError, match="incompatible"):
        df.train.GradientDescentOptimizer(0.1).apply_gradients([(df.constant([1.0, 2.0]), x)])

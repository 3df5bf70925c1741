"""The optimizers of `df.train` beyond GradientDescent, Momentum and Adam: their numbers step for
step against TensorFlow 1.x, their slot variables, their arguments, and their use inside
control flow, in saved graphs and in pictures."""

import numpy as np
import pytest

import dataflow as df

X = np.random.default_rng(3).normal(size=(8, 3))
Y = X @ np.array([0.5, -1.0, 2.0]) + 0.3


def least_squares(dtype=df.float64):
    w = df.Variable(np.zeros(3), name="w", dtype=dtype)
    b = df.Variable(0.0, name="b", dtype=dtype)
    prediction = df.reshape(df.matmul(X.astype(dtype.name), df.reshape(w, [3, 1])), [-1]) + b
    loss = df.reduce_mean(df.square(prediction - Y.astype(dtype.name)))
    return w, b, loss


def train(optimizer, steps=4):
    """``steps`` steps of ``optimizer`` on `least_squares`: the final ``(w, b)``."""
    w, b, loss = least_squares()
    step = optimizer.minimize(loss)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for _ in range(steps):
            session.run(step)
        return session.run([w.value(), b.value()])


def f64(value):
    return df.constant(value, df.float64)


OPTIMIZERS = {
    "rmsprop": lambda: df.train.RMSPropOptimizer(0.01),
    "rmsprop_momentum_centered": lambda: df.train.RMSPropOptimizer(
        0.01, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True
    ),
    "adagrad": lambda: df.train.AdagradOptimizer(0.1),
    "adadelta": lambda: df.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda: df.train.FtrlOptimizer(0.1),
    "ftrl_l1_l2_power": lambda: df.train.FtrlOptimizer(
        0.1,
        learning_rate_power=-0.6,
        l1_regularization_strength=0.01,
        l2_regularization_strength=0.02,
    ),
    "ftrl_shrinkage": lambda: df.train.FtrlOptimizer(
        0.1,
        l1_regularization_strength=0.01,
        l2_regularization_strength=0.02,
        l2_shrinkage_regularization_strength=0.05,
    ),
    "ftrl_beta": lambda: df.train.FtrlOptimizer(0.1, l1_regularization_strength=0.001, beta=0.5),
    "proximal_gd": lambda: df.train.ProximalGradientDescentOptimizer(f64(0.1), f64(0.05), f64(0.1)),
    "proximal_adagrad": lambda: df.train.ProximalAdagradOptimizer(
        f64(0.1), 0.1, f64(0.01), f64(0.1)
    ),
    "adamw": lambda: df.train.AdamWOptimizer(0.01, learning_rate=0.01),
}

# (w, b) after four steps on `least_squares`, float64 variables, recorded with
# tensorflow.compat.v1 2.21 from the same program with tf.train.<Optimizer> and the same
# arguments (tf.constant(x, tf.float64) where `f64` is used above).  "adamw": TF 2.21 has no
# contrib, so its program decays by hand what contrib's AdamWOptimizer decays: after
# compute_gradients, `v.assign_sub(0.01 * v)` for each variable, then under a control dependency
# on those, tf.train.AdamOptimizer(0.01).apply_gradients.
TENSORFLOW_AFTER_FOUR_STEPS = {
    "rmsprop": (
        [0.07991577497248901, -0.07094526509784914, 0.048682418024501226],
        0.019067672436279354,
    ),
    "rmsprop_momentum_centered": (
        [0.12145063963526595, -0.1113553437372988, 0.08081047716193035],
        0.032518540817871054,
    ),
    "adagrad": (
        [0.25229085799348555, -0.26000692355087923, 0.26761346032033645],
        0.12741863921069713,
    ),
    "adadelta": (
        [0.001815343294373416, -0.0018156849147764197, 0.0018163980969126252],
        0.0018119778949432495,
    ),
    "ftrl": (
        [0.25229085799348555, -0.26000692355087923, 0.2676134603203364],
        0.12741863921069713,
    ),
    "ftrl_l1_l2_power": (
        [0.18158094287389562, -0.20243884108874635, 0.23783201822096728],
        0.15563106592320924,
    ),
    "ftrl_shrinkage": (
        [0.2514049534775412, -0.25846057603742345, 0.2641425797128621],
        0.12264219980633032,
    ),
    "ftrl_beta": (
        [0.235393792199868, -0.23119520729691012, 0.20968849164133657],
        0.09150596216972724,
    ),
    "proximal_gd": (
        [0.6745257040251378, -0.6895819835731797, 0.3943963856207369],
        -0.05562069282980423,
    ),
    "proximal_adagrad": (
        [0.2508361186913888, -0.25746075317021305, 0.261861161656834],
        0.11884430154059117,
    ),
    "adamw": (
        [0.03936096114171093, -0.03937351720369562, 0.039397660269177154],
        0.03919862180623875,
    ),
}


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_optimizers_reproduce_tensorflow_numbers(kind):
    w, b = train(OPTIMIZERS[kind]())
    expected_w, expected_b = TENSORFLOW_AFTER_FOUR_STEPS[kind]
    np.testing.assert_allclose(w, expected_w, rtol=1e-13)
    np.testing.assert_allclose(b, expected_b, rtol=1e-13)


def test_rmsprop_matches_its_formula_step_by_step():
    lr, rho, momentum, eps = (float(np.float32(v)) for v in (0.01, 0.8, 0.5, 1e-6))
    w, b, loss = least_squares()
    step = df.train.RMSPropOptimizer(0.01, 0.8, 0.5, 1e-6, centered=True).minimize(loss)
    ms, mg, mom, value = np.ones(3), np.zeros(3), np.zeros(3), np.zeros(3)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for _ in range(3):
            grad = session.run(df.gradients(loss, [w])[0])
            session.run(step)
            ms = ms + (grad * grad - ms) * (1 - rho)
            mg = mg + (grad - mg) * (1 - rho)
            mom = mom * momentum + grad * lr / np.sqrt(ms - mg * mg + eps)
            value = value - mom
            np.testing.assert_allclose(session.run(w.value()), value, rtol=1e-14)


def test_ftrl_with_a_large_l1_keeps_weights_at_zero():
    # |linear| stays below l1, so FTRL's closed form puts every weight at exactly zero.
    w, b = train(df.train.FtrlOptimizer(0.1, l1_regularization_strength=100.0))
    assert np.all(w == 0.0) and b == 0.0


def test_proximal_gradient_descent_without_regularization_is_gradient_descent():
    plain = train(df.train.GradientDescentOptimizer(f64(0.1)))
    proximal = train(df.train.ProximalGradientDescentOptimizer(f64(0.1)))
    np.testing.assert_array_equal(plain[0], proximal[0])
    np.testing.assert_array_equal(plain[1], proximal[1])


def test_float32_variables_train_with_python_number_hyperparameters():
    w, b, loss = least_squares(df.float32)
    steps = [
        optimizer.minimize(loss)
        for optimizer in (
            df.train.RMSPropOptimizer(0.01, momentum=0.9),
            df.train.AdagradOptimizer(0.1),
            df.train.AdadeltaOptimizer(),
            df.train.FtrlOptimizer(0.1, learning_rate_power=-0.7),
            df.train.ProximalGradientDescentOptimizer(0.1, 0.01, 0.01),
            df.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.01),
            df.train.AdamWOptimizer(0.001),
        )
    ]
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        before = session.run(loss)
        for _ in range(5):
            session.run(steps)
        assert session.run(w.value()).dtype == np.float32
        assert session.run(loss) < before


# -- decoupled weight decay ------------------------------------------------------------------------
def test_adamw_with_zero_weight_decay_is_adam():
    adam = train(df.train.AdamOptimizer(0.01))
    adamw = train(df.train.AdamWOptimizer(0.0, learning_rate=0.01))
    np.testing.assert_array_equal(adam[0], adamw[0])


def test_weight_decay_shrinks_a_variable_without_gradient_scaling():
    # The loss is constant in x, so Momentum's update is zero and only the decay moves x.
    x = df.Variable(np.array([2.0, -4.0]), name="x")
    loss = df.reduce_sum(x * 0.0)
    step = df.train.MomentumWOptimizer(0.25, learning_rate=0.1, momentum=0.9).minimize(loss)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        np.testing.assert_array_equal(session.run(x.value()), [1.5, -3.0])


def test_decay_var_list_chooses_the_variables_that_decay():
    x = df.Variable(2.0, dtype=df.float64, name="x")
    y = df.Variable(2.0, dtype=df.float64, name="y")
    loss = (x + y) * 0.0
    optimizer = df.train.MomentumWOptimizer(0.5, 0.1, 0.0)
    by_minimize = optimizer.minimize(loss, decay_var_list=[x])
    by_apply = optimizer.apply_gradients(optimizer.compute_gradients(loss), decay_var_list=[y])
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(by_minimize)
        assert session.run([x.value(), y.value()]) == [1.0, 2.0]
        session.run(by_apply)
        assert session.run([x.value(), y.value()]) == [1.0, 1.0]


def test_extend_with_decoupled_weight_decay_makes_a_weight_decay_class():
    adagrad_w = df.train.extend_with_decoupled_weight_decay(df.train.AdagradOptimizer)
    assert issubclass(adagrad_w, df.train.AdagradOptimizer)
    optimizer = adagrad_w(0.5, 0.1, initial_accumulator_value=1.0)
    x = df.Variable(2.0, dtype=df.float64, name="x")
    step = optimizer.minimize(x * 0.0)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        assert session.run(x.value()) == 1.0
    assert optimizer.get_slot(x, "accumulator").name == "x/Adagrad:0"


def test_a_weight_decay_tensor_is_cast_to_the_variable_dtype():
    x = df.Variable(2.0, dtype=df.float64, name="x")
    rate = df.placeholder(df.float32, [], name="rate")
    step = df.train.AdamWOptimizer(rate).minimize(x * 0.0)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step, {rate: 0.25})
        assert session.run(x.value()) == 1.5


# -- slots -------------------------------------------------------------------------------------
# Slot names and initial values as tensorflow.compat.v1 2.21 makes them for a float32 variable
# "model/w" and minimize called in name scope "train".
TENSORFLOW_SLOTS = {
    "rmsprop_centered": {
        "mg": ("model/w/RMSProp_1:0", 0.0),
        "momentum": ("model/w/RMSProp_2:0", 0.0),
        "rms": ("model/w/RMSProp:0", 1.0),
    },
    "rmsprop": {"momentum": ("model/w/RMSProp_1:0", 0.0), "rms": ("model/w/RMSProp:0", 1.0)},
    "adadelta": {
        "accum": ("model/w/Adadelta:0", 0.0),
        "accum_update": ("model/w/Adadelta_1:0", 0.0),
    },
    "ftrl": {"accum": ("model/w/Ftrl:0", 0.1), "linear": ("model/w/Ftrl_1:0", 0.0)},
    "ftrl_named": {"accum": ("model/w/acc:0", 0.1), "linear": ("model/w/lin:0", 0.0)},
    "adagrad": {"accumulator": ("model/w/Adagrad:0", 0.1)},
    "proximal_adagrad": {"accumulator": ("model/w/ProximalAdagrad:0", 0.1)},
}
SLOT_MAKERS = {
    "rmsprop_centered": lambda: df.train.RMSPropOptimizer(0.1, centered=True),
    "rmsprop": lambda: df.train.RMSPropOptimizer(0.1),
    "adadelta": lambda: df.train.AdadeltaOptimizer(),
    "ftrl": lambda: df.train.FtrlOptimizer(0.1),
    "ftrl_named": lambda: df.train.FtrlOptimizer(0.1, accum_name="acc", linear_name="lin"),
    "adagrad": lambda: df.train.AdagradOptimizer(0.1),
    "proximal_adagrad": lambda: df.train.ProximalAdagradOptimizer(0.1),
}


@pytest.mark.parametrize("kind", sorted(SLOT_MAKERS))
def test_slots_are_named_and_initialized_as_in_tensorflow(kind):
    with df.name_scope("model"):
        w = df.Variable(np.zeros(3, np.float32), name="w")
    optimizer = SLOT_MAKERS[kind]()
    with df.name_scope("train"):
        op = optimizer.minimize(df.reduce_sum(w * w))
    assert op.name == "train/" + optimizer.get_name()
    expected = TENSORFLOW_SLOTS[kind]
    assert optimizer.get_slot_names() == sorted(expected)
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        for slot_name, (variable_name, initial) in expected.items():
            slot = optimizer.get_slot(w, slot_name)
            assert slot.name == variable_name and not slot.trainable
            value = session.run(slot.value())
            assert value.dtype == np.float32
            np.testing.assert_array_equal(value, np.full(3, initial, np.float32))


def test_adamw_slots_and_beta_powers_are_named_after_it():
    w, b, loss = least_squares()
    optimizer = df.train.AdamWOptimizer(0.01)
    optimizer.minimize(loss)
    assert [v.name for v in optimizer.variables()] == [
        "b/AdamW:0",
        "b/AdamW_1:0",
        "beta1_power:0",
        "beta2_power:0",
        "w/AdamW:0",
        "w/AdamW_1:0",
    ]


def test_a_slot_of_a_variable_of_unknown_shape_is_filled_at_initialization():
    x = df.Variable(np.ones(3, np.float32), validate_shape=False, name="x")
    optimizer = df.train.AdagradOptimizer(0.5, initial_accumulator_value=3.0)
    step = optimizer.minimize(df.reduce_sum(x))
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step)
        np.testing.assert_array_equal(session.run(optimizer.get_slot(x, "accumulator")), 4.0)
        np.testing.assert_allclose(session.run(x.value()), np.full(3, 1 - 0.5 / 2))


# -- arguments -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: df.train.AdagradOptimizer(0.1, 0.0), "initial_accumulator_value must be positive"),
        (
            lambda: df.train.ProximalAdagradOptimizer(0.1, -1.0),
            "initial_accumulator_value must be positive",
        ),
        (
            lambda: df.train.FtrlOptimizer(0.1, learning_rate_power=0.5),
            "learning_rate_power 0.500000 needs to be negative or zero",
        ),
        (
            lambda: df.train.FtrlOptimizer(0.1, initial_accumulator_value=-0.1),
            "initial_accumulator_value -0.100000 needs to be positive or zero",
        ),
        (
            lambda: df.train.FtrlOptimizer(0.1, l1_regularization_strength=-1),
            "l1_regularization_strength -1.000000 needs to be positive or zero",
        ),
        (
            lambda: df.train.FtrlOptimizer(0.1, l2_regularization_strength=-1),
            "l2_regularization_strength -1.000000 needs to be positive or zero",
        ),
        (
            lambda: df.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=-1),
            "l2_shrinkage_regularization_strength -1.000000 needs to be positive or zero",
        ),
        (lambda: df.train.RMSPropOptimizer(0.1, name=""), "Must specify the optimizer name"),
    ],
)
def test_bad_hyperparameters_are_errors_as_in_tensorflow(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_gradient_of_the_wrong_shape_names_the_op_and_the_line():
    x = df.Variable(np.zeros(3, np.float32), name="x")
    with pytest.raises(ValueError, match=r"test_optimizers\.py:\d+") as raised:
        df.train.RMSPropOptimizer(0.1).apply_gradients([(df.constant([1.0, 2.0]), x)])
    assert "incompatible" in str(raised.value) or "Incompatible" in str(raised.value)


def test_hyperparameters_may_be_tensors_fed_at_run_time():
    x = df.Variable(np.array([1.0, -1.0]), name="x")
    rate = df.placeholder(df.float64, [], name="rate")
    step = df.train.AdagradOptimizer(rate, initial_accumulator_value=1.0).minimize(df.reduce_sum(x))
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(step, {rate: 0.0})
        np.testing.assert_array_equal(session.run(x.value()), [1.0, -1.0])
        session.run(step, {rate: 3.0})
        # The accumulator is 1 + 1 + 1 after two steps with gradient 1.
        np.testing.assert_allclose(session.run(x.value()), np.array([1.0, -1.0]) - np.sqrt(3.0))


# -- in control flow, saved, drawn -------------------------------------------------------------
def test_training_steps_inside_a_while_loop_match_steps_run_one_by_one():
    def make():
        return df.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01)

    x = df.Variable(np.array([1.0, -2.0]), name="x")
    in_loop = make()

    def body(i):
        with df.control_dependencies([in_loop.minimize(df.reduce_sum(df.square(x)))]):
            return i + 1

    loop = df.while_loop(lambda i: i < 3, body, [df.constant(0)])
    y = df.Variable(np.array([1.0, -2.0]), name="y")
    step = make().minimize(df.reduce_sum(df.square(y)))
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        assert session.run(loop) == 3
        for _ in range(3):
            session.run(step)
        np.testing.assert_array_equal(session.run(x.value()), session.run(y.value()))
        assert np.all(session.run(x.value()) != [1.0, -2.0])


def test_a_training_step_in_an_untaken_branch_changes_nothing():
    x = df.Variable(np.array([1.0, -2.0]), name="x")
    optimizer = df.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True)
    take = df.placeholder(df.bool, [], name="take")

    def train_branch():
        with df.control_dependencies([optimizer.minimize(df.reduce_sum(df.square(x)))]):
            return df.constant(1)

    taken = df.cond(take, train_branch, lambda: df.constant(0))
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(taken, {take: False})
        np.testing.assert_array_equal(session.run(x.value()), [1.0, -2.0])
        np.testing.assert_array_equal(session.run(optimizer.get_slot(x, "rms")), [1.0, 1.0])
        session.run(taken, {take: True})
        assert np.all(np.abs(session.run(x.value())) < [1.0, 2.0])


@pytest.mark.parametrize("kind", ["rmsprop_momentum_centered", "ftrl_shrinkage", "adamw"])
def test_a_saved_training_graph_trains_the_same_when_loaded(kind, tmp_path):
    graph = df.Graph()
    with graph.as_default():
        w, b, loss = least_squares()
        step = OPTIMIZERS[kind]().minimize(loss, global_step=df.train.create_global_step())
        init = df.global_variables_initializer()
    df.io.save_graph(graph, tmp_path / "train.dfg")
    loaded = df.io.load_graph(tmp_path / "train.dfg")
    results = []
    for g in (graph, loaded):
        with df.Session(graph=g) as session:
            session.run(init.name)
            for _ in range(3):
                session.run(step.name)
            results.append(session.run(["w/read:0", "b/read:0", "global_step/read:0"]))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1:] == results[1][1:] and results[1][2] == 3


def test_the_training_step_renders_with_its_update_scopes():
    w, b, loss = least_squares()
    step = df.train.FtrlOptimizer(0.1).minimize(loss)
    source = df.render(step, format="dot", max_depth=None).source
    assert "Ftrl/update_w" in source and "w/Ftrl_1" in source


def test_var_list_may_be_a_dicts_values_view():
    # As TF1 tutorials write it: minimize(loss, var_list=weights.values()).
    weights = {"a": df.Variable(1.0, name="a"), "b": df.Variable(2.0, name="b")}
    loss = weights["a"] * weights["b"]
    pairs = df.train.GradientDescentOptimizer(0.1).compute_gradients(
        loss, var_list=weights.values()
    )
    assert [v.op.name for _, v in pairs] == ["a", "b"]

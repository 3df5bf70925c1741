"""Optimizers in eager mode: each step runs at once, through the same update ops as in a graph,
so a model trained eagerly ends with the same values as the same model trained by a Session."""

import numpy as np
import pytest

import dataflow as df

OPTIMIZERS = {
    "gradient_descent": lambda: df.train.GradientDescentOptimizer(0.1),
    "momentum": lambda: df.train.MomentumOptimizer(0.1, 0.9),
    "nesterov": lambda: df.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "adam": lambda: df.train.AdamOptimizer(0.1),
    "rmsprop_centered": lambda: df.train.RMSPropOptimizer(0.05, momentum=0.5, centered=True),
    "adagrad": lambda: df.train.AdagradOptimizer(0.1),
    "adadelta": lambda: df.train.AdadeltaOptimizer(1.0),
    "ftrl": lambda: df.train.FtrlOptimizer(
        0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02
    ),
    "proximal_gradient_descent": lambda: df.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.01
    ),
    "proximal_adagrad": lambda: df.train.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.01
    ),
    "adamw": lambda: df.train.AdamWOptimizer(0.01, learning_rate=0.1),
    "momentumw": lambda: df.train.MomentumWOptimizer(0.01, 0.1, 0.9),
}

FEATURES = np.array([[1.0, 2.0, 0.5], [0.0, 1.0, -1.0], [2.0, -1.0, 1.0], [1.0, 1.0, 1.0]])
TARGETS = np.array([1.0, -1.0, 2.0, 0.5])
ROWS = [0, 2, 0, 3]  # the embedding rows a sparse model looks up (row 0 twice, row 1 never)
STEPS = 3


def make_model():
    """Weights, bias, an embedding table, and the loss of a linear model with an embedding
    term, whose gradient for the table is IndexedSlices (from gather)."""
    w = df.Variable(np.array([0.5, -0.25, 1.0], np.float32), name="w")
    b = df.Variable(np.float32(0.1), name="b")
    table = df.Variable(np.arange(8, dtype=np.float32).reshape(4, 2) / 8, name="table")

    def loss():
        linear = df.reduce_sum(df.constant(FEATURES, df.float32) * w, axis=1) + b
        embedded = df.reduce_sum(df.gather(table, ROWS), axis=1)
        return df.reduce_mean(df.square(linear + embedded - df.constant(TARGETS, df.float32)))

    return [w, b, table], loss


def train_in_a_session(make_optimizer):
    with df.Graph().as_default():
        variables, loss = make_model()
        step = df.train.get_or_create_global_step()
        train_op = make_optimizer().minimize(loss(), global_step=step, var_list=variables)
        with df.Session() as session:
            session.run(df.global_variables_initializer())
            for _ in range(STEPS):
                session.run(train_op)
            return session.run(variables), session.run(step)


def train_eagerly(make_optimizer, use_minimize: bool):
    with df.eager_mode():
        variables, loss = make_model()
        step = df.Variable(np.int64(0), trainable=False, name="global_step")
        optimizer = make_optimizer()
        for _ in range(STEPS):
            if use_minimize:
                result = optimizer.minimize(loss, global_step=step, var_list=variables)
            else:
                with df.GradientTape() as tape:
                    value = loss()
                grads = tape.gradient(value, variables)
                assert isinstance(grads[2], df.IndexedSlices)
                result = optimizer.apply_gradients(zip(grads, variables), global_step=step)
            assert result is None
        return [v.numpy() for v in variables], step.numpy()


@pytest.mark.parametrize("use_minimize", [True, False], ids=["minimize", "apply_gradients"])
@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_training_eagerly_reaches_the_values_of_a_session(kind, use_minimize):
    expected, expected_step = train_in_a_session(OPTIMIZERS[kind])
    found, found_step = train_eagerly(OPTIMIZERS[kind], use_minimize)
    assert found_step == expected_step == STEPS
    for got, want in zip(found, expected):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(found[0], [0.5, -0.25, 1.0])


def test_sparse_gradient_leaves_the_rows_it_does_not_touch(eager):
    table = df.Variable(np.ones((3, 2), np.float32))
    optimizer = df.train.AdagradOptimizer(0.5)
    optimizer.minimize(lambda: df.reduce_sum(df.gather(table, [2, 2])), var_list=[table])
    accumulator = optimizer.get_slot(table, "accumulator").numpy()
    np.testing.assert_array_equal(table.numpy()[:2], np.ones((2, 2)))
    assert (table.numpy()[2] < 1).all()
    np.testing.assert_allclose(accumulator[2], [4.1, 4.1], rtol=1e-6)  # (1 + 1)^2, summed once
    np.testing.assert_allclose(accumulator[:2], np.full((2, 2), 0.1), rtol=1e-6)


def test_slots_and_state_are_made_once_and_kept_across_steps(eager):
    w = df.Variable([1.0, 2.0], name="w")
    optimizer = df.train.AdamOptimizer(0.1)
    for _ in range(2):
        optimizer.minimize(lambda: df.reduce_sum(w * w), var_list=[w])
    names = sorted(v.name for v in optimizer.variables())
    assert names == ["beta1_power:0", "beta2_power:0", "w/Adam:0", "w/Adam_1:0"]
    beta1_power = next(v for v in optimizer.variables() if v.name == "beta1_power:0")
    np.testing.assert_allclose(beta1_power.numpy(), 0.9**3, rtol=1e-6)


def test_minimize_without_var_list_trains_the_trainable_variables_the_loss_read(eager):
    w = df.Variable(3.0)
    frozen = df.Variable(2.0, trainable=False)
    df.train.GradientDescentOptimizer(0.25).minimize(lambda: w * w * frozen)
    assert w.numpy() == pytest.approx(3.0 - 0.25 * 12.0) and frozen.numpy() == 2.0


def test_global_step_is_found_again_eagerly(eager):
    step = df.train.get_or_create_global_step()
    assert df.train.get_or_create_global_step() is step
    assert df.global_variables() == []


def test_a_loss_tensor_is_refused_eagerly_with_the_line(eager):
    w = df.Variable(1.0)
    with pytest.raises(RuntimeError, match=r"should be a function .*test_eager_optimizers.py:\d+"):
        df.train.GradientDescentOptimizer(0.1).minimize(w * w)
    assert w.numpy() == 1.0


def test_a_callable_loss_in_a_graph_is_called_once_and_differentiated():
    w = df.Variable(3.0)
    train_op = df.train.GradientDescentOptimizer(0.25).minimize(lambda: w * w, var_list=[w])
    with df.Session() as session:
        session.run(df.global_variables_initializer())
        session.run(train_op)
        assert session.run(w) == pytest.approx(1.5)

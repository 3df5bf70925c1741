"""`df.train`: optimizers match numpy re-implementations, and training converges."""

import numpy as np
import pytest

import dataflow as df

X = np.random.default_rng(3).normal(size=(8, 3))
Y = X @ np.array([0.5, -1.0, 2.0]) + 0.3


def loss_and_grad_numpy(w, b):
    r = X @ w + b - Y
    return 2 * X.T @ r / len(Y), 2 * r.mean()


def build():
    w = df.Variable(np.zeros(3), name="w")
    b = df.Variable(np.float64(0.0), name="b")
    loss = df.reduce_mean(df.square(df.reshape(df.matmul(X, df.reshape(w, [3, 1])), [-1]) + b - Y))
    return w, b, loss


def run_steps(optimizer, steps=4):
    w, b, loss = build()
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


def assert_same_trajectory(got, expected):
    for (w, b), (ew, eb) in zip(got, expected):
        np.testing.assert_allclose(w, ew, rtol=1e-10)
        np.testing.assert_allclose(b, eb, rtol=1e-10)


def test_gradient_descent_matches_numpy():
    got = run_steps(df.train.GradientDescentOptimizer(0.1))
    assert_same_trajectory(got, reference(lambda v, g, s, k, t: v - 0.1 * g))


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_matches_numpy(nesterov):
    def update(v, g, state, key, t):
        accum = state.get(key, 0.0) * 0.9 + g
        state[key] = accum
        return v - 0.05 * (g + 0.9 * accum if nesterov else accum)

    got = run_steps(df.train.MomentumOptimizer(0.05, 0.9, use_nesterov=nesterov))
    assert_same_trajectory(got, reference(update))


def test_adam_matches_numpy():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8

    def update(v, g, state, key, t):
        m = b1 * state.get(key + "m", 0.0) + (1 - b1) * g
        s = b2 * state.get(key + "v", 0.0) + (1 - b2) * g * g
        state[key + "m"], state[key + "v"] = m, s
        lr_t = lr * np.sqrt(1 - b2**t) / (1 - b1**t)
        return v - lr_t * m / (np.sqrt(s) + eps)

    got = run_steps(df.train.AdamOptimizer(lr))
    assert_same_trajectory(got, reference(update))


def test_slot_variables_live_under_the_optimizer_scope():
    w, b, loss = build()
    optimizer = df.train.AdamOptimizer()
    optimizer.minimize(loss)
    names = sorted(v.name for v in optimizer.variables())
    assert names == [
        "Adam/b/m:0",
        "Adam/b/v:0",
        "Adam/beta1_power:0",
        "Adam/beta2_power:0",
        "Adam/w/m:0",
        "Adam/w/v:0",
    ]
    assert all(not v.trainable for v in optimizer.variables())
    assert optimizer.get_slot(w, "m").name == "Adam/w/m:0"
    momentum = df.train.MomentumOptimizer(0.1, 0.9)
    momentum.minimize(loss)
    assert momentum.get_slot(b, "momentum").name == "Momentum/b/momentum:0"


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
        assert session.run(global_step.value()) == 600


def test_create_global_step_twice_is_an_error():
    df.train.create_global_step()
    with pytest.raises(ValueError, match="already exists"):
        df.train.create_global_step()


def test_compute_gradients_pairs_each_variable_with_its_gradient():
    w, b, loss = build()
    unused = df.Variable(1.0, name="unused")
    pairs = df.train.GradientDescentOptimizer(0.1).compute_gradients(loss)
    assert [v for _, v in pairs] == [w, b, unused]
    assert pairs[2][0] is None and pairs[0][0] is not None


def test_apply_gradients_without_any_gradient_is_an_error():
    v = df.Variable(1.0, name="v")
    with pytest.raises(ValueError, match="No gradients provided"):
        df.train.GradientDescentOptimizer(0.1).apply_gradients([(None, v)])

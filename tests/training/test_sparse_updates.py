"""Optimizers given sparse gradients (IndexedSlices, from ``embedding_lookup``) update only
the gradient's rows of the variable and of its slots, with duplicate rows summed first, and
give TensorFlow 1.x's numbers.

The pinned rows are what TensorFlow 1.x (tensorflow-cpu 2.21, graph mode) gives for this
program: a float32 table of ``linspace(-1, 1, 15)`` in 5x3, rows ``[1, 3, 1]`` looked up, loss
``sum(rows * rows * [[1], [2], [3]])``, three steps of ``apply_gradients``.
"""

import numpy as np
import pytest

import dataflow as df

INITIAL = np.linspace(-1, 1, 15).reshape(5, 3).astype(np.float32)

OPTIMIZERS = {
    "GradientDescent": lambda: df.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda: df.train.MomentumOptimizer(0.1, 0.9),
    "MomentumNesterov": lambda: df.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "Adam": lambda: df.train.AdamOptimizer(0.1),
    "RMSProp": lambda: df.train.RMSPropOptimizer(0.1, momentum=0.5),
    "RMSPropCentered": lambda: df.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
    "Adagrad": lambda: df.train.AdagradOptimizer(0.1),
    "Adadelta": lambda: df.train.AdadeltaOptimizer(1.0),
    "Ftrl": lambda: df.train.FtrlOptimizer(
        0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02
    ),
    "ProximalGD": lambda: df.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02
    ),
    "ProximalAdagrad": lambda: df.train.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.01, l2_regularization_strength=0.02
    ),
}

# Rows 1 and 3 of the table after three steps (the other rows never change).
TENSORFLOW_ROWS = {
    "GradientDescent": [
        [-0.00457142713, -0.00342857093, -0.00228571356],
        [0.0617142841, 0.0925714225, 0.123428568],
    ],
    "Momentum": [
        [0.530285716, 0.397714287, 0.265142858],
        [-0.154285744, -0.231428549, -0.308571488],
    ],
    "MomentumNesterov": [
        [0.0285074264, 0.0213805586, 0.0142537132],
        [-0.123798847, -0.185698271, -0.247597694],
    ],
    "Adam": [
        [-0.275279522, -0.135050029, -0.00047146529],
        [0.000471509993, 0.135050029, 0.275279522],
    ],
    "RMSProp": [
        [0.112576202, 0.12618877, 0.0991158336],
        [-0.0363818631, -0.0312081873, -0.00352752209],
    ],
    "RMSPropCentered": [
        [0.129651129, 0.133103132, 0.100357398],
        [-0.0383844413, -0.0373869687, -0.0163139105],
    ],
    "Adagrad": [
        [-0.359908044, -0.22388728, -0.0963855833],
        [0.0995608717, 0.22558184, 0.360921264],
    ],
    "Adadelta": [
        [-0.570072293, -0.427215338, -0.284358561],
        [0.284358561, 0.427215338, 0.570072293],
    ],
    "Ftrl": [[-0.325532794, -0.192308977, -0.0716364235], [0.0532544106, 0.164366081, 0.29333514]],
    "ProximalGD": [
        [-0.00330714136, -0.00217111292, -0.00103508716],
        [0.0593920201, 0.090064764, 0.120737493],
    ],
    "ProximalAdagrad": [
        [-0.359008312, -0.22289294, -0.0952398703],
        [0.0973062366, 0.223609924, 0.35913074],
    ],
}


def train_table(make_optimizer, steps=3):
    with df.Graph().as_default():
        table = df.Variable(INITIAL, name="table")
        rows = df.nn.embedding_lookup(table, [1, 3, 1])
        loss = df.reduce_sum(rows * rows * np.array([[1.0], [2.0], [3.0]], np.float32))
        optimizer = make_optimizer()
        grads_and_vars = optimizer.compute_gradients(loss, [table])
        step = optimizer.apply_gradients(grads_and_vars)
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            for _ in range(steps):
                sess.run(step)
            slots = {n: sess.run(optimizer.get_slot(table, n)) for n in optimizer.get_slot_names()}
            return grads_and_vars[0][0], sess.run(table), slots


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_sparse_gradient_updates_its_rows_as_tensorflow(name):
    grad, table, slots = train_table(OPTIMIZERS[name])
    assert isinstance(grad, df.IndexedSlices)
    np.testing.assert_allclose(table[[1, 3]], TENSORFLOW_ROWS[name], rtol=2e-6, atol=1e-7)
    untouched = [0, 2, 4]
    np.testing.assert_array_equal(table[untouched], INITIAL[untouched])
    if name != "Adam":  # TensorFlow's sparse Adam decays every row's moments (all zero here)
        for slot in slots.values():
            assert len({tuple(row) for row in slot[untouched]}) == 1, "untouched slot rows moved"


def test_duplicate_rows_are_summed_before_the_update():
    # Momentum's accumulator sees the row's summed gradient once, not each copy in turn.
    _, summed, _ = train_table(lambda: df.train.MomentumOptimizer(0.1, 0.9), steps=1)
    grad_row_1 = 2 * INITIAL[1] * (1.0 + 3.0)
    np.testing.assert_allclose(summed[1], INITIAL[1] - 0.1 * grad_row_1, rtol=1e-6)


def test_decoupled_weight_decay_decays_only_the_gradients_rows():
    _, table, _ = train_table(lambda: df.train.MomentumWOptimizer(0.5, 0.1, 0.9), steps=1)
    np.testing.assert_array_equal(table[[0, 2, 4]], INITIAL[[0, 2, 4]])
    grad_row_3 = 2 * INITIAL[3] * 2.0
    decayed = INITIAL[3] - 0.5 * INITIAL[3]
    np.testing.assert_allclose(table[3], decayed - 0.1 * grad_row_3, rtol=1e-6)

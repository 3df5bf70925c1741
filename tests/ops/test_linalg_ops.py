"""The QR decomposition: factors that multiply back to the input, TensorFlow's shapes, and a
gradient that agrees with central differences."""

import numpy as np
import pytest
from ops_testing import evaluate

import dataflow as df


@pytest.mark.parametrize("rows, columns", [(5, 3), (3, 3), (2, 4)])
def test_qr_factors_multiply_back_with_orthonormal_q_and_upper_triangular_r(rows, columns):
    a = np.random.default_rng(0).normal(size=(2, rows, columns))
    q, r = evaluate(list(df.linalg.qr(a)))
    k = min(rows, columns)
    assert q.shape == (2, rows, k) and r.shape == (2, k, columns)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(
        np.swapaxes(q, 1, 2) @ q, np.broadcast_to(np.eye(k), (2, k, k)), atol=1e-12
    )
    np.testing.assert_array_equal(r, np.triu(r))


def test_full_matrices_gives_a_square_q():
    q, r = df.qr(df.zeros([4, 2]), full_matrices=True)
    assert (q.shape.as_list(), r.shape.as_list()) == ([4, 4], [4, 2])


def test_qr_of_a_vector_is_a_value_error_naming_the_users_line():
    with pytest.raises(ValueError, match=f"Qr op 'Qr' at {__file__}.*matrix"):
        df.linalg.qr(df.zeros([3]))


def test_qr_gradient_matches_central_differences():
    a_value = np.random.default_rng(1).normal(size=(4, 3))
    weights = np.random.default_rng(2).uniform(0.5, 1.5, size=(2, 4, 3))
    a = df.placeholder(df.float64, [4, 3])
    q, r = df.linalg.qr(a)
    loss = df.reduce_sum(q * weights[0]) + df.reduce_sum(r * weights[1][:3])
    (grad,) = df.gradients(loss, a)
    with df.Session() as sess:
        symbolic = sess.run(grad, {a: a_value})
        numeric = np.zeros_like(a_value)
        for index in np.ndindex(a_value.shape):
            shifted = a_value.copy()
            shifted[index] += 1e-6
            up = sess.run(loss, {a: shifted})
            shifted[index] -= 2e-6
            numeric[index] = (up - sess.run(loss, {a: shifted})) / 2e-6
    np.testing.assert_allclose(symbolic, numeric, rtol=1e-5, atol=1e-6)


def test_qr_gradient_of_a_wide_matrix_is_not_implemented():
    a = df.placeholder(df.float64, [2, 4])
    with pytest.raises(NotImplementedError, match="at least as many rows"):
        df.gradients(df.reduce_sum(df.linalg.qr(a)[0]), a)


@pytest.mark.parametrize(
    "kwargs, expected",
    [  # what TensorFlow 1.x's tf.norm gives for X below
        ({}, 9.539392014169456),
        ({"ord": 1}, 21.0),
        ({"ord": np.inf}, 6.0),
        ({"ord": 3, "axis": 1}, [3.30192725, 7.39863622]),
        ({"axis": 0, "keepdims": True}, [[4.12310563, 5.38516481, 6.70820393]]),
        ({"ord": 1, "axis": [0, 1]}, 9.0),
        ({"ord": np.inf, "axis": (0, 1)}, 15.0),
        ({"ord": "fro", "axis": (0, 1)}, 9.539392014169456),
    ],
)
def test_norm_of_vectors_and_matrices_as_tensorflow(kwargs, expected):
    x = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
    with df.Session() as sess:
        np.testing.assert_allclose(sess.run(df.norm(x, **kwargs)), expected, rtol=1e-7)


def test_norm_refuses_an_order_it_does_not_compute():
    with pytest.raises(ValueError, match="'ord' must be one of"):
        df.norm(np.ones((2, 2)), ord=2, axis=(0, 1))

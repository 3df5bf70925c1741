"""The decomposition and matrix-function ops of tf.linalg (Svd, SelfAdjointEigV2, Lu, ...):
each run in a Session, and the gradient kernels checked against central differences."""

import numpy as np
import pytest
from ops_testing import evaluate

import dataflow as df

RNG = np.random.default_rng(7)
A = RNG.normal(size=(4, 3))
SQUARE = RNG.normal(size=(3, 3))
SPD = SQUARE @ SQUARE.T + 3 * np.eye(3)
WEIGHTS = RNG.uniform(0.5, 1.5, size=(4, 4))


def _central_difference(loss_of, x, step=1e-6):
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[index] += step
        down[index] -= step
        grad[index] = (loss_of(up) - loss_of(down)) / (2 * step)
    return grad


def _check_gradient(build, x_value, rtol=1e-5, atol=1e-7):
    x = df.placeholder(df.float64, x_value.shape)
    loss = build(x)
    (grad,) = df.gradients(loss, x)
    with df.Session() as sess:
        analytic = sess.run(grad, {x: x_value})
        numeric = _central_difference(lambda v: sess.run(loss, {x: v}), x_value)
    np.testing.assert_allclose(analytic, numeric, rtol=rtol, atol=atol)


def test_svd_op_and_its_gradient_kernel():
    s, u, v = evaluate(list(df.svd(A)))
    np.testing.assert_allclose((u * s) @ v.T, A, atol=1e-12)
    _check_gradient(
        lambda x: (
            df.reduce_sum(df.svd(x)[0] * np.array([1.0, 2.0, 3.0]))
            + df.reduce_sum(df.abs(df.svd(x)[1][:, :2]) * WEIGHTS[:, :2])
        ),
        A,
    )


def test_self_adjoint_eig_op_and_its_gradient():
    e, v = evaluate(list(df.self_adjoint_eig(SPD)))
    np.testing.assert_allclose((v * e) @ v.T, SPD, atol=1e-12)
    _check_gradient(
        lambda x: df.reduce_sum(df.linalg.eigvalsh(x + df.transpose(x)) * np.array([1.0, 2, 3])),
        SPD,
    )


def test_triangular_solve_op():
    x = evaluate(df.matrix_triangular_solve(SPD, A[:3]))
    np.testing.assert_allclose(np.tril(SPD) @ x, A[:3], atol=1e-12)


def test_log_matrix_determinant_op():
    sign, log_abs = evaluate(list(df.linalg.slogdet(SQUARE)))
    np.testing.assert_allclose(sign * np.exp(log_abs), np.linalg.det(SQUARE), rtol=1e-12)


def test_matrix_square_root_op_and_its_gradient_kernel():
    root = evaluate(df.matrix_square_root(SPD))
    np.testing.assert_allclose(root @ root, SPD, atol=1e-10)
    _check_gradient(lambda x: df.reduce_sum(df.linalg.sqrtm(x) * WEIGHTS[:3, :3]), SPD)


def test_matrix_exponential_op_and_its_gradient_kernel():
    e = evaluate(df.linalg.expm(np.diag([0.0, 1.0, 2.0])))
    np.testing.assert_allclose(e, np.diag(np.exp([0.0, 1.0, 2.0])), rtol=1e-12)
    _check_gradient(lambda x: df.reduce_sum(df.linalg.expm(x) * WEIGHTS[:3, :3]), SQUARE * 0.5)


def test_lu_op():
    lu, perm = evaluate(list(df.linalg.lu(SQUARE)))
    lower = np.tril(lu, -1) + np.eye(3)
    np.testing.assert_allclose(lower @ np.triu(lu), SQUARE[perm], atol=1e-12)


def test_matrix_solve_ls_op_without_the_fast_path():
    rank_one = np.outer([1.0, 2.0, 0.0], [1.0, 2.0])
    x = evaluate(df.matrix_solve_ls(rank_one, np.ones((3, 1)), fast=False))
    np.testing.assert_allclose(x, np.linalg.pinv(rank_one) @ np.ones((3, 1)), atol=1e-12)


def test_cross_op():
    np.testing.assert_array_equal(evaluate(df.cross([1.0, 0, 0], [0.0, 1, 0])), [0, 0, 1])


def test_tridiagonal_ops():
    diagonals = np.array([[1.0, 2.0, 0.0], [4.0, 5.0, 7.0], [0.0, 8.0, 9.0]])
    dense = np.array([[4.0, 1.0, 0.0], [8.0, 5.0, 2.0], [0.0, 9.0, 7.0]])
    product = evaluate(df.linalg.tridiagonal_matmul(diagonals, A[:3]))
    solved = evaluate(df.linalg.tridiagonal_solve(diagonals, A[:3]))
    np.testing.assert_allclose(product, dense @ A[:3], atol=1e-12)
    np.testing.assert_allclose(solved, np.linalg.solve(dense, A[:3]), atol=1e-12)


def test_batch_matmul_v3_op():
    a = np.array([[100, 100], [3, 4]], np.int8)
    out = evaluate(df.matmul(a, a, output_type=df.int32))
    np.testing.assert_array_equal(out, a.astype(np.int32) @ a.astype(np.int32))


@pytest.mark.parametrize("k", [0, (-1, 1)])
def test_band_diagonal_ops_round_trip(k):
    x = RNG.normal(size=(2, 3, 4))
    part = df.linalg.diag_part(x, k=k)
    rebuilt = df.linalg.set_diag(np.zeros_like(x), part, k=k)
    dense = df.linalg.diag(part, k=k, num_rows=3, num_cols=4)
    out, back = evaluate([rebuilt, dense])
    np.testing.assert_array_equal(out, back)

"""Behaviour of tf.linalg.LinearOperator and its subclasses (values from TF 2.21)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1
L = tf.linalg

SYM = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 0.5], [2.0, 0.5, 5.0]])
M = np.array([[1.0, 2.0, 0.0], [3.0, -1.0, 4.0], [0.5, 2.0, 2.0]])
X = np.array([[1.0, 2.0], [0.0, 3.0], [-1.0, 1.0]])
DIAG = np.array([2.0, -3.0, 0.5])


def _run(t):
    graph = (t[0] if isinstance(t, (list, tuple)) else t).graph
    with tf.Session(graph=graph) as sess:
        return sess.run(t)


def _operators():
    """Each operator with the dense matrix it stands for."""
    return {
        "full": (L.LinearOperatorFullMatrix(M), M),
        "diag": (L.LinearOperatorDiag(DIAG), np.diag(DIAG)),
        "tril": (L.LinearOperatorLowerTriangular(M + 3 * np.eye(3)), np.tril(M + 3 * np.eye(3))),
        "scaled": (L.LinearOperatorScaledIdentity(3, np.float64(-2.5)), -2.5 * np.eye(3)),
        "identity": (L.LinearOperatorIdentity(3, dtype=tf.float64), np.eye(3)),
        "composition": (
            L.LinearOperatorComposition(
                [L.LinearOperatorFullMatrix(M), L.LinearOperatorDiag(DIAG)]
            ),
            M @ np.diag(DIAG),
        ),
        "adjoint": (L.LinearOperatorAdjoint(L.LinearOperatorFullMatrix(M)), M.T),
        "inversion": (L.LinearOperatorInversion(L.LinearOperatorFullMatrix(M)), np.linalg.inv(M)),
        "block_diag": (
            L.LinearOperatorBlockDiag(
                [L.LinearOperatorFullMatrix(M[:2, :2]), L.LinearOperatorDiag(np.array([7.0]))]
            ),
            np.block([[M[:2, :2], np.zeros((2, 1))], [np.zeros((1, 2)), np.array([[7.0]])]]),
        ),
        "kronecker": (
            L.LinearOperatorKronecker(
                [
                    L.LinearOperatorFullMatrix(np.array([[1.0, 2.0], [3.0, 5.0]])),
                    L.LinearOperatorFullMatrix(np.array([[2.0, 0.5], [1.0, 3.0]])),
                ]
            ),  # fmt: skip
            np.kron([[1.0, 2.0], [3.0, 5.0]], [[2.0, 0.5], [1.0, 3.0]]),
        ),
        "low_rank": (
            L.LinearOperatorLowRankUpdate(
                L.LinearOperatorDiag(np.array([2.0, 3.0, 4.0])),
                np.array([[1.0], [2.0], [0.5]]),
                diag_update=np.array([0.7]),
            ),
            np.diag([2.0, 3.0, 4.0]) + 0.7 * np.outer([1.0, 2.0, 0.5], [1.0, 2.0, 0.5]),
        ),
        "householder": (
            L.LinearOperatorHouseholder(np.array([1.0, 2.0, -1.0])),
            np.eye(3) - 2 * np.outer([1, 2, -1], [1, 2, -1]) / 6.0,
        ),
        "permutation": (
            L.LinearOperatorPermutation(np.array([1, 2, 0], np.int32), dtype=tf.float64),
            np.eye(3)[[1, 2, 0]],
        ),
        "toeplitz": (
            L.LinearOperatorToeplitz(np.array([1.0, 2.0, 3.0]), np.array([9.0, -1.0, 4.0])),
            np.array([[1.0, -1.0, 4.0], [2.0, 1.0, -1.0], [3.0, 2.0, 1.0]]),
        ),
        "tridiag": (
            L.LinearOperatorTridiag(np.array([[1.0, 2.0, 0.0], [4.0, 5.0, 7.0], [0.0, 8.0, 9.0]])),
            np.array([[4.0, 1.0, 0.0], [8.0, 5.0, 2.0], [0.0, 9.0, 7.0]]),
        ),
        "block_lower": (
            L.LinearOperatorBlockLowerTriangular(
                [
                    [L.LinearOperatorFullMatrix(M[:2, :2])],
                    [
                        L.LinearOperatorFullMatrix(np.array([[1.0, 2.0]])),
                        L.LinearOperatorDiag(np.array([7.0])),
                    ],
                ]
            ),  # fmt: skip
            np.array([[1.0, 2.0, 0.0], [3.0, -1.0, 0.0], [1.0, 2.0, 7.0]]),
        ),
    }


def test_every_operator_does_act_as_its_dense_matrix():
    with tf.Graph().as_default():
        for key, (op, dense) in _operators().items():
            n = dense.shape[-1]
            x = tf.constant(X[:n] if n == 3 else np.arange(1.0, 2 * n + 1).reshape(n, 2))
            xv = _run(x)
            ones = np.ones((dense.shape[-2], 2))
            got = _run(
                [op.to_dense(), op.matmul(x), op.matmul(tf.constant(ones), adjoint=True),
                 op.matmul(tf.transpose(x), adjoint_arg=True), op.matvec(x[:, 0]),
                 op.diag_part(), op.trace(), op.determinant(), op.log_abs_determinant(),
                 op.solve(x), op.solve(x, adjoint=True), op.solvevec(x[:, 1]),
                 op.inverse().to_dense(), op.adjoint().to_dense(),
                 op.add_to_tensor(tf.constant(np.ones(dense.shape)))]
            )  # fmt: skip
            expected = [
                dense, dense @ xv, dense.T @ ones, dense @ xv, dense @ xv[:, 0], np.diag(dense),
                np.trace(dense), np.linalg.det(dense), np.log(abs(np.linalg.det(dense))),
                np.linalg.solve(dense, xv), np.linalg.solve(dense.T, xv),
                np.linalg.solve(dense, xv[:, 1]), np.linalg.inv(dense), dense.T, dense + 1,
            ]  # fmt: skip
            for g, e in zip(got, expected):
                np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9, err_msg=key)
            assert op.shape.as_list() == list(dense.shape), key


def test_operator_names_and_hints_do_follow_tensorflow():
    with tf.Graph().as_default():
        ops = {k: op for k, (op, _) in _operators().items()}
        hints = {k: (op.is_non_singular, op.is_self_adjoint, op.is_positive_definite, op.is_square)
                 for k, op in ops.items()}  # fmt: skip
        assert hints["identity"] == (True, True, True, True)
        assert hints["diag"] == (None, True, None, True)
        assert hints["scaled"] == (None, True, None, True)
        assert hints["householder"] == (None, True, False, True)
        assert hints["permutation"] == (None, None, None, True)
        assert hints["low_rank"] == (None, True, None, True)
        assert hints["full"] == (None, None, None, True)
        assert ops["composition"].name == "LinearOperatorFullMatrix_o_LinearOperatorDiag"
        assert ops["adjoint"].name == "LinearOperatorFullMatrix_adjoint"
        assert ops["inversion"].name == "LinearOperatorFullMatrix_inv"
        assert ops["block_diag"].name == "LinearOperatorFullMatrix_ds_LinearOperatorDiag"
        assert ops["kronecker"].name == "LinearOperatorFullMatrix_x_LinearOperatorFullMatrix"
        zeros = L.LinearOperatorZeros(3, dtype=tf.float64)
        assert (zeros.is_non_singular, zeros.is_self_adjoint, zeros.is_positive_definite) == (
            False, True, False,
        )  # fmt: skip


def test_operator_hints_do_reject_contradictions():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="non-singular"):
            L.LinearOperatorFullMatrix(M, is_positive_definite=True, is_non_singular=False)
        with pytest.raises(ValueError, match="self adjoint"):
            L.LinearOperatorDiag(DIAG, is_self_adjoint=False)
        with pytest.raises(ValueError, match="always non-singular"):
            L.LinearOperatorIdentity(3, is_non_singular=False)
        with pytest.raises(ValueError, match="positive definite"):
            L.LinearOperatorHouseholder(np.ones(3), is_positive_definite=True)
        with pytest.raises(ValueError, match="always singular"):
            L.LinearOperatorZeros(3, is_non_singular=True)
        with pytest.raises(ValueError, match="Invalid permutation"):
            L.LinearOperatorPermutation(np.array([0, 0, 1], np.int32))
        with pytest.raises(TypeError, match="float"):
            L.LinearOperatorFullMatrix(np.eye(2, dtype=np.int32))


def test_operator_does_refuse_solving_what_it_promises_is_singular():
    with tf.Graph().as_default():
        singular = L.LinearOperatorFullMatrix(M, is_non_singular=False)
        with pytest.raises(NotImplementedError, match="singular"):
            singular.solve(X)
        wide = L.LinearOperatorFullMatrix(np.ones((2, 3)))
        assert wide.is_square is False
        with pytest.raises(NotImplementedError, match="square"):
            wide.determinant()
        with pytest.raises(ValueError, match="non square"):
            wide.inverse()


def test_batched_operators_do_broadcast():
    with tf.Graph().as_default():
        batch = L.LinearOperatorIdentity(3, batch_shape=[2], dtype=tf.float64)
        assert batch.shape.as_list() == [2, 3, 3]
        out = _run(batch.matmul(tf.constant(X)))
        np.testing.assert_array_equal(out, np.stack([X, X]))
        diag = L.LinearOperatorDiag(np.array([[2.0, 3.0, 0.5], [1.0, 4.0, 2.0]]))
        np.testing.assert_allclose(_run(diag.determinant()), [3.0, 8.0])
        np.testing.assert_allclose(_run(diag.solve(tf.constant(X)))[1], X / [[1.0], [4.0], [2.0]])
        np.testing.assert_array_equal(_run(batch.shape_tensor()), [2, 3, 3])


def test_special_values_do_match_tensorflow():
    with tf.Graph().as_default():
        ops = {k: op for k, (op, _) in _operators().items()}
        odd = L.LinearOperatorPermutation(np.array([1, 0, 2], np.int32), dtype=tf.float64)
        pd = L.LinearOperatorFullMatrix(SYM, is_self_adjoint=True, is_positive_definite=True)
        got = _run(
            [ops["permutation"].determinant(), odd.determinant(), ops["householder"].eigvals(),
             ops["householder"].trace(), ops["full"].cond(), pd.cond(), pd.cholesky().to_dense(),
             ops["scaled"].log_abs_determinant(),
             L.LinearOperatorZeros(2, dtype=tf.float64).determinant()]
        )  # fmt: skip
        assert got[0] == 1.0 and got[1] == -1.0
        np.testing.assert_allclose(got[2], [-1.0, 1.0, 1.0])
        np.testing.assert_allclose(got[3], 1.0)
        np.testing.assert_allclose(got[4], 4.834834347690159, rtol=1e-9)
        np.testing.assert_allclose(got[5], 3.258375384417216, rtol=1e-9)
        np.testing.assert_allclose(got[6], np.linalg.cholesky(SYM), rtol=1e-12)
        np.testing.assert_allclose(got[7], 2.7488721956224653, rtol=1e-12)
        assert got[8] == 0.0


def test_operator_matmul_does_compose_operators():
    with tf.Graph().as_default():
        full, diag = L.LinearOperatorFullMatrix(M), L.LinearOperatorDiag(DIAG)
        product = full @ diag
        assert isinstance(product, L.LinearOperatorComposition)
        np.testing.assert_allclose(_run(product.to_dense()), M @ np.diag(DIAG))


def test_zeros_does_give_zeros_of_any_shape():
    with tf.Graph().as_default():
        rect = L.LinearOperatorZeros(3, 2, dtype=tf.float64, is_square=False, is_self_adjoint=False)
        assert rect.shape.as_list() == [3, 2]
        np.testing.assert_array_equal(
            _run(rect.matmul(tf.constant(np.ones((2, 4))))), np.zeros((3, 4))
        )
        np.testing.assert_array_equal(
            _run(rect.matmul(tf.constant(np.ones((3, 2))), adjoint=True)), np.zeros((2, 2))
        )
        with pytest.raises(ValueError, match="is_square=True"):
            L.LinearOperatorZeros(3, 2)


def test_operators_do_have_gradients_through_their_parameters():
    with tf.Graph().as_default():
        d = tf.constant(DIAG)
        solved = L.LinearOperatorDiag(d).solvevec(tf.constant(np.ones(3)))
        (grad,) = tf.gradients(tf.reduce_sum(solved), d)
        np.testing.assert_allclose(_run(grad), -1.0 / DIAG**2)
        m = tf.constant(M)
        (grad_m,) = tf.gradients(L.LinearOperatorFullMatrix(m).log_abs_determinant(), m)
        np.testing.assert_allclose(_run(grad_m), np.linalg.inv(M).T, rtol=1e-12)


def test_conjugate_gradient_does_converge_in_a_graph_loop():
    with tf.Graph().as_default():
        pd = L.LinearOperatorFullMatrix(SYM, is_self_adjoint=True, is_positive_definite=True)
        rhs = tf.constant(np.array([1.0, -2.0, 0.5]))
        state = L.experimental.conjugate_gradient(pd, rhs, tol=1e-10, max_iter=10)
        i, x = _run([state.i, state.x])
        assert i == 3
        np.testing.assert_allclose(x, [4.545454545455e-01, -8.181818181818e-01, 0.0], atol=1e-12)
        pre = L.LinearOperatorDiag(1 / np.diag(SYM), is_positive_definite=True)
        two = L.experimental.conjugate_gradient(pd, rhs, preconditioner=pre, max_iter=2)
        x2, r2 = _run([two.x, two.r])
        np.testing.assert_allclose(x2, [0.460873521383, -0.806664066901, 0.024307812297], rtol=1e-9)
        np.testing.assert_allclose(r2, [-0.085445643225, -0.05303522683, -0.1399540708], rtol=1e-8)
        with pytest.raises(ValueError, match="positive definite"):
            L.experimental.conjugate_gradient(L.LinearOperatorFullMatrix(M), rhs)


def test_identities_do_assert_proper_shapes_when_asked():
    with tf.Graph().as_default():
        rows = tf.placeholder(tf.int32, [])
        x = tf.placeholder(tf.float64, [None, 2])
        checked = L.LinearOperatorIdentity(rows, dtype=tf.float64, assert_proper_shapes=True)
        scaled = L.LinearOperatorScaledIdentity(rows, np.float64(2.0), assert_proper_shapes=True)
        unchecked = L.LinearOperatorIdentity(rows, dtype=tf.float64)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(checked.matmul(x), {rows: 3, x: X}), X)
            np.testing.assert_array_equal(sess.run(scaled.matmul(x), {rows: 3, x: X}), 2 * X)
            np.testing.assert_array_equal(sess.run(unchecked.matmul(x), {rows: 2, x: X}), X)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible"):
                sess.run(checked.matmul(x), {rows: 2, x: X})
            with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
                sess.run(checked.to_dense(), {rows: -1})
        with pytest.raises(ValueError, match="rows"):
            L.LinearOperatorZeros(3, 2, is_square=False, is_self_adjoint=False).matmul(
                np.ones((3, 1), np.float32)
            )


def test_kronecker_does_multiply_batched_factors():
    first = np.stack([[[1.0, 2.0], [3.0, 5.0]], [[2.0, 0.0], [1.0, 1.0]]])
    second = np.array([[2.0, 0.5, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
    x = np.arange(12.0).reshape(6, 2)
    with tf.Graph().as_default():
        op = L.LinearOperatorKronecker(
            [L.LinearOperatorFullMatrix(first), L.LinearOperatorFullMatrix(second)]
        )
        assert op.shape.as_list() == [2, 6, 6]
        dense = np.stack([np.kron(f, second) for f in first])
        np.testing.assert_allclose(_run(op.matmul(tf.constant(x))), dense @ x)
        np.testing.assert_allclose(
            _run(op.solve(tf.constant(x))), np.linalg.solve(dense, x), atol=1e-12
        )
        np.testing.assert_allclose(_run(op.determinant()), np.linalg.det(dense))


def test_block_operators_do_broadcast_batched_blocks():
    batch = np.stack([M, M.T]) + 3 * np.eye(3)
    with tf.Graph().as_default():
        op = L.LinearOperatorBlockDiag(
            [L.LinearOperatorFullMatrix(batch[:, :2, :2]), L.LinearOperatorDiag(np.array([7.0]))]
        )
        assert op.shape.as_list() == [2, 3, 3]
        dense = np.zeros((2, 3, 3))
        dense[:, :2, :2], dense[:, 2, 2] = batch[:, :2, :2], 7.0
        got = _run([op.to_dense(), op.log_abs_determinant(), op.diag_part()])
        np.testing.assert_allclose(got[0], dense)
        np.testing.assert_allclose(got[1], np.log(np.abs(np.linalg.det(dense))))
        np.testing.assert_allclose(got[2], np.diagonal(dense, axis1=1, axis2=2))

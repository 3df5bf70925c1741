"""Behaviour of tf.linalg's decompositions and matrix functions (values from TF 2.21)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1

SYM = np.array([[4.0, 1.0, 2.0], [1.0, 3.0, 0.5], [2.0, 0.5, 5.0]])
M = np.array([[1.0, 2.0, 0.0], [3.0, -1.0, 4.0], [0.5, 2.0, 2.0]])
TALL = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
RHS = np.array([[1.0, 2.0], [0.0, 3.0], [-1.0, 1.0]])
WEIGHTS = np.arange(9.0).reshape(3, 3)
DIAGS = np.array([[1.0, 2.0, 3.0, 0.0], [4.0, 5.0, 6.0, 7.0], [0.0, 8.0, 9.0, 10.0]])
RHS4 = np.arange(8.0).reshape(4, 2)


def _run(t):
    graph = (t[0] if isinstance(t, (list, tuple)) else t).graph
    with tf.Session(graph=graph) as sess:
        return sess.run(t)


def _grad(y, x):
    return _run(tf.gradients(y, x)[0])


def test_svd_does_decompose_and_reconstruct():
    with tf.Graph().as_default():
        s, u, v = tf.svd(TALL)
        assert s.shape.as_list() == [2] and u.shape.as_list() == [3, 2]
        s_val, u_val, v_val = _run([s, u, v])
        np.testing.assert_allclose(s_val, [10.1914282571, 0.3671376859], rtol=1e-9)
        np.testing.assert_allclose((u_val * s_val) @ v_val.T, TALL, atol=1e-12)
        np.testing.assert_allclose(u_val.T @ u_val, np.eye(2), atol=1e-12)
        sf, uf, vf = tf.linalg.svd(TALL.T, full_matrices=True)
        assert uf.shape.as_list() == [2, 2] and vf.shape.as_list() == [3, 3]
        only = tf.svd(np.stack([TALL, 2 * TALL]), compute_uv=False)
        np.testing.assert_allclose(_run(only)[1], 2 * s_val, rtol=1e-9)


def test_svd_does_handle_empty_matrices():
    with tf.Graph().as_default():
        s, u, v = tf.svd(np.zeros((2, 0, 3)))
        assert [t.shape for t in _run([s, u, v])] == [(2, 0), (2, 0, 0), (2, 3, 0)]


def test_svd_does_have_tensorflows_gradients():
    with tf.Graph().as_default():
        x = tf.constant(TALL)
        g = _grad(tf.reduce_sum(tf.svd(x, compute_uv=False) * np.array([1.0, 2.0])), x)
        np.testing.assert_allclose(
            g, [[-1.4043729662, 1.2653207158], [0.8407865637, 0.0036887004],
                [0.5589933624, 0.6381934084]], rtol=1e-8,
        )  # fmt: skip
        _, u, v = tf.svd(x)
        g_uv = _grad(tf.reduce_sum(tf.abs(u[:, 0])) + tf.reduce_sum(tf.abs(v[:, 1])), x)
        np.testing.assert_allclose(
            g_uv, [[0.0410732801, 0.0498242336], [0.0221987714, 0.0133238818],
                   [-0.0030515469, -0.0350508363]], rtol=1e-7,
        )  # fmt: skip


def test_svd_gradient_does_refuse_full_matrices_far_from_square():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((4, 2)))
        _, u, _ = tf.svd(x, full_matrices=True)
        with pytest.raises(NotImplementedError, match="full_matrices"):
            tf.gradients(tf.reduce_sum(u), x)


def test_eigh_does_give_ascending_eigenpairs_of_the_lower_triangle():
    assert tf.linalg.eigh is tf.self_adjoint_eig and tf.linalg.eigvalsh is tf.self_adjoint_eigvals
    with tf.Graph().as_default():
        e, v = tf.linalg.eigh(SYM)
        e_val, v_val = _run([e, v])
        np.testing.assert_allclose(e_val, [2.0965216173, 3.072223952, 6.8312544307], rtol=1e-9)
        np.testing.assert_allclose((v_val * e_val) @ v_val.T, SYM, atol=1e-12)
        upper_garbage = np.tril(SYM) + np.triu(np.full((3, 3), 100.0), 1)
        np.testing.assert_allclose(_run(tf.linalg.eigvalsh(upper_garbage)), e_val, rtol=1e-9)


def test_eigh_does_have_tensorflows_gradient():
    with tf.Graph().as_default():
        a = tf.constant(SYM)
        e, v = tf.linalg.eigh(a)
        g = _grad(tf.reduce_sum(e * np.array([1.0, 2.0, 3.0])) + tf.reduce_sum(tf.abs(v[:, 0])), a)
        np.testing.assert_allclose(
            g, [[1.8811823071, 0, 0], [1.0948855352, 1.7645704556, 0],
                [1.5534369718, -0.1134068939, 2.3542472373]], rtol=1e-7, atol=1e-12,
        )  # fmt: skip


def test_triangular_solve_does_read_one_triangle_and_broadcast():
    assert tf.linalg.triangular_solve is tf.matrix_triangular_solve
    with tf.Graph().as_default():
        lower = tf.matrix_triangular_solve(M, RHS)
        upper = tf.linalg.triangular_solve(M, RHS, lower=False, adjoint=True)
        batch = tf.linalg.triangular_solve(M, np.stack([RHS, 2 * RHS]))
        np.testing.assert_allclose(_run(lower), [[1, 2], [3, 3], [-3.75, -3]])
        np.testing.assert_allclose(_run(upper), [[1, 2], [2, 1], [-4.5, -1.5]])
        assert batch.shape.as_list() == [2, 3, 2]
        np.testing.assert_allclose(_run(batch)[1], 2 * _run(lower))
        m = tf.constant(M)
        g = _grad(tf.reduce_sum(tf.linalg.triangular_solve(m, tf.constant(RHS)) ** 2), m)
        np.testing.assert_allclose(
            g, [[-127.375, 0, 0], [37.5, 76.5, 0], [9.75, 20.25, -23.0625]], rtol=1e-12
        )


def test_slogdet_does_give_sign_and_log_and_its_gradient():
    with tf.Graph().as_default():
        m = tf.constant(M)
        sign, log_abs = tf.linalg.slogdet(m)
        assert _run(sign) == -1.0
        np.testing.assert_allclose(_run(log_abs), 2.8903717578961645, rtol=1e-12)
        np.testing.assert_allclose(_grad(log_abs, m), np.linalg.inv(M).T, rtol=1e-12)
        sing_sign, sing_log = _run(list(tf.linalg.slogdet(np.array([[1.0, 2.0], [2.0, 4.0]]))))
        assert sing_sign == 0 and sing_log == -np.inf


def test_sqrtm_does_give_the_principal_root_or_nan():
    assert tf.linalg.sqrtm is tf.matrix_square_root
    with tf.Graph().as_default():
        root = _run(tf.linalg.sqrtm(SYM))
        np.testing.assert_allclose(
            root, [[1.9234459526, 0.2625526339, 0.4810631788],
                   [0.2625526339, 1.7093396165, 0.0960426458],
                   [0.4810631788, 0.0960426458, 2.1815943776]], rtol=1e-9,
        )  # fmt: skip
        jordan = _run(tf.linalg.sqrtm(np.array([[1.0, 1.0], [0.0, 1.0]], np.float32)))
        np.testing.assert_allclose(jordan, [[1.0, 0.5], [0.0, 1.0]], rtol=1e-6)
        assert np.isnan(_run(tf.linalg.sqrtm(np.array([[-1.0, 0.0], [0.0, 4.0]])))).all()
        a = tf.constant(SYM)
        g = _grad(tf.reduce_sum(tf.linalg.sqrtm(a) * WEIGHTS), a)
        np.testing.assert_allclose(
            g, [[-0.2180295203, -0.0105155769, 0.2515206864],
                [0.5850570332, 1.0476736911, 1.1300180025],
                [1.1784133729, 1.6551232703, 1.6145574795]], rtol=1e-8,
        )  # fmt: skip


def test_expm_does_match_tensorflows_pade_approximants():
    with tf.Graph().as_default():
        np.testing.assert_allclose(
            _run(tf.linalg.expm(M * 0.5)),
            [[3.0106735979, 1.8513427934, 1.9140491531],
             [3.2555264783, 3.0733799576, 4.6597101633],
             [2.2572567793, 2.5691112258, 5.1326257152]], rtol=1e-9,
        )  # fmt: skip
        single = tf.linalg.expm(tf.constant(M, tf.float32))
        assert single.dtype == tf.float32
        np.testing.assert_allclose(
            _run(single),
            [[19.411798, 16.181114, 24.213453], [30.325024, 27.44413, 44.468937],
             [26.74538, 25.261147, 42.635742]], rtol=1e-5,
        )  # fmt: skip
        np.testing.assert_allclose(
            _run(tf.linalg.expm(np.zeros((2, 3, 3)))), np.eye(3)[None] + 0 * np.ones((2, 1, 1))
        )
        assert np.isnan(_run(tf.linalg.expm(np.array([[np.inf, 0.0], [0.0, 1.0]])))).all()


def test_expm_does_have_the_frechet_derivative_as_gradient():
    with tf.Graph().as_default():
        m = tf.constant(M)
        g = _grad(tf.reduce_sum(tf.linalg.expm(m * 0.5) * WEIGHTS), m)
        np.testing.assert_allclose(
            g, [[8.1203328794, 14.1969411569, 14.9514839084],
                [11.663083803, 19.2142841611, 19.2296361027],
                [22.0706198322, 35.1419523143, 34.4785910392]], rtol=1e-8,
        )  # fmt: skip


def test_lu_does_pivot_as_lapack_and_its_helpers_invert_it():
    with tf.Graph().as_default():
        lu, p = tf.linalg.lu(M)
        assert (
            p.dtype == tf.int32 and tf.linalg.lu(M, output_idx_type=tf.int64)[1].dtype == tf.int64
        )
        lu_val, p_val = _run([lu, p])
        np.testing.assert_allclose(
            lu_val, [[3, -1, 4], [1 / 3, 7 / 3, -4 / 3], [1 / 6, 0.9285714286, 2.5714285714]],
            rtol=1e-9,
        )  # fmt: skip
        np.testing.assert_array_equal(p_val, [1, 0, 2])
        np.testing.assert_allclose(_run(tf.linalg.lu_reconstruct(lu, p)), M, atol=1e-12)
        np.testing.assert_allclose(_run(tf.linalg.lu_solve(lu, p, RHS)), np.linalg.solve(M, RHS))
        np.testing.assert_allclose(_run(tf.linalg.lu_matrix_inverse(lu, p)), np.linalg.inv(M))
        batch = np.stack([M, M.T])
        blu, bp = tf.linalg.lu(batch)
        np.testing.assert_allclose(_run(tf.linalg.lu_reconstruct(blu, bp)), batch, atol=1e-12)


def test_lu_does_fail_on_a_singular_matrix():
    with tf.Graph().as_default():
        lu, _ = tf.linalg.lu(np.zeros((2, 2)))
        with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
            _run(lu)
        with pytest.raises(TypeError, match="output_idx_type"):
            tf.linalg.lu(M, output_idx_type=tf.float32)


def test_lstsq_does_solve_over_and_under_determined_systems():
    assert tf.linalg.lstsq is tf.matrix_solve_ls
    with tf.Graph().as_default():
        np.testing.assert_allclose(
            _run(tf.matrix_solve_ls(TALL, RHS[:, :1] + 1.0)), [[-3.3571428571], [2.5]], rtol=1e-9
        )
        np.testing.assert_allclose(
            _run(tf.linalg.lstsq(TALL, RHS, l2_regularizer=0.5)),
            [[-0.4981132075, -0.2264150943], [0.279245283, 0.4905660377]], rtol=1e-9,
        )  # fmt: skip
        np.testing.assert_allclose(
            _run(tf.linalg.lstsq(TALL.T, np.array([[1.0], [2.0]]))),
            [[0.9285714286], [-0.2142857143], [0.1428571429]], rtol=1e-9,
        )  # fmt: skip
        rank_one = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])
        slow = tf.linalg.lstsq(rank_one, np.ones((3, 1)), l2_regularizer=0.1, fast=False)
        np.testing.assert_allclose(_run(slow), [[0.12], [0.24]], rtol=1e-9)


def test_lstsq_does_have_the_gradient_of_its_normal_equations():
    with tf.Graph().as_default():
        x = tf.constant(TALL)
        g = _grad(tf.reduce_sum(tf.linalg.lstsq(x, tf.constant(RHS), l2_regularizer=0.1) ** 2), x)
        np.testing.assert_allclose(
            g, [[-5.9071629686, 3.3134738321], [-24.542821061, 17.7888845775],
                [15.7944686534, -11.2208914343]], rtol=1e-8,
        )  # fmt: skip


def test_pinv_and_matrix_rank_do_cut_small_singular_values():
    with tf.Graph().as_default():
        np.testing.assert_allclose(
            _run(tf.linalg.pinv(TALL)),
            [[-2.0714285714, 0.7857142857, 0.1428571429], [1.5, -0.5, 0.0]], atol=1e-9,
        )  # fmt: skip
        singular = np.array([[1.0, 2.0], [2.0, 4.0]])
        np.testing.assert_allclose(_run(tf.linalg.pinv(singular)), np.linalg.pinv(singular))
        assert _run(tf.linalg.matrix_rank(singular)) == 1
        ranks = tf.linalg.matrix_rank(np.stack([np.eye(3), np.diag([1.0, 0.1, 0.01])]), tol=0.05)
        assert ranks.dtype == tf.int32
        np.testing.assert_array_equal(_run(ranks), [3, 2])
        with pytest.raises(TypeError, match="float"):
            tf.linalg.pinv(np.eye(2, dtype=np.int32))


def test_cross_does_multiply_vectors_and_has_gradients():
    assert tf.cross is tf.linalg.cross
    with tf.Graph().as_default():
        a = tf.constant(np.array([[1.0, 0, 2], [1, 2, 3]]))
        b = tf.constant(np.array([[0.0, 1, 0], [4, 5, 6]]))
        np.testing.assert_array_equal(_run(tf.cross(a, b)), [[-2, 0, 1], [-3, 6, -3]])
        np.testing.assert_array_equal(_run(tf.cross([1, 2, 3], [4, 5, 6])), [-3, 6, -3])
        ga, gb = tf.gradients(tf.reduce_sum(tf.cross(a, b) * np.array([1.0, 2.0, 3.0])), [a, b])
        np.testing.assert_array_equal(_run(ga), [[3, 0, -1], [3, -6, 3]])
        np.testing.assert_array_equal(_run(gb), [[4, 1, -2], [0, 0, 0]])
        with pytest.raises(ValueError, match="3"):
            tf.cross(np.ones((2, 2)), np.ones((2, 2)))


def test_tridiagonal_matmul_does_take_all_three_formats():
    dense = np.diag(DIAGS[1]) + np.diag(DIAGS[0][:3], 1) + np.diag(DIAGS[2][1:], -1)
    expected = [[2, 7], [18, 33], [60, 78], [82, 99]]
    with tf.Graph().as_default():
        compact = tf.linalg.tridiagonal_matmul(DIAGS, RHS4)
        sequence = tf.linalg.tridiagonal_matmul(
            [DIAGS[0, :3], DIAGS[1], DIAGS[2, 1:]], RHS4, diagonals_format="sequence"
        )
        matrix = tf.linalg.tridiagonal_matmul(dense, RHS4, diagonals_format="matrix")
        for t in (compact, sequence, matrix):
            np.testing.assert_allclose(_run(t), expected)
        with pytest.raises(ValueError, match="diagonals_format"):
            tf.linalg.tridiagonal_matmul(DIAGS, RHS4, diagonals_format="banded")


def test_tridiagonal_solve_does_pivot_or_not_and_takes_vectors():
    with tf.Graph().as_default():
        x = tf.linalg.tridiagonal_solve(DIAGS, RHS4)
        np.testing.assert_allclose(
            _run(x), [[0.0111111111, 0.2055555556], [-0.0444444444, 0.1777777778],
                      [1.0666666667, 0.2333333333], [-0.6666666667, 0.6666666667]], rtol=1e-8,
        )  # fmt: skip
        vector = tf.linalg.tridiagonal_solve(DIAGS, RHS4[:, 0])
        transposed = tf.linalg.tridiagonal_solve(DIAGS, RHS4.T, transpose_rhs=True)
        np.testing.assert_allclose(_run(vector), _run(x)[:, 0])
        np.testing.assert_allclose(_run(transposed), _run(x))
        zero_pivot = np.array([[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 1.0, 1.0]])
        np.testing.assert_allclose(
            _run(tf.linalg.tridiagonal_solve(zero_pivot, RHS4)),
            [[0.8, 1], [0, 1], [1.2, 1], [1.6, 2]], atol=1e-12,
        )  # fmt: skip
        unpivoted = tf.linalg.tridiagonal_solve(zero_pivot, RHS4, partial_pivoting=False)
        assert not np.isfinite(_run(unpivoted)).all()
        with pytest.raises(ValueError, match="partial_pivoting"):
            tf.linalg.tridiagonal_solve(DIAGS, RHS4, partial_pivoting=False, perturb_singular=True)


def test_tridiagonal_solve_does_perturb_singular_pivots_when_asked():
    singular = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    rhs = np.array([[1.0], [1.0], [1.0]])
    with tf.Graph().as_default():
        assert np.isnan(_run(tf.linalg.tridiagonal_solve(singular, rhs))).all()
        x = _run(tf.linalg.tridiagonal_solve(singular, rhs, perturb_singular=True))
        np.testing.assert_allclose(x, [[1.0], [0.0], [1.0]])


def test_tridiagonal_ops_do_have_gradients():
    with tf.Graph().as_default():
        d, r = tf.constant(DIAGS), tf.constant(RHS4)
        product = tf.linalg.tridiagonal_matmul(d, r)
        gd, gr = tf.gradients(tf.reduce_sum(product**2), [d, r])
        dense = np.diag(DIAGS[1]) + np.diag(DIAGS[0][:3], 1) + np.diag(DIAGS[2][1:], -1)
        np.testing.assert_allclose(_run(gr), 2 * dense.T @ dense @ RHS4)
        assert _run(gd)[0, 3] == 0 and _run(gd)[2, 0] == 0
        solved = tf.linalg.tridiagonal_solve(d, r)
        gd2, gr2 = tf.gradients(tf.reduce_sum(solved), [d, r])
        inverse = np.linalg.inv(dense)
        np.testing.assert_allclose(_run(gr2), inverse.T @ np.ones((4, 2)), atol=1e-12)
        full = -(inverse.T @ np.ones((4, 2))) @ (inverse @ RHS4).T
        np.testing.assert_allclose(_run(gd2)[1], np.diag(full), atol=1e-12)
        np.testing.assert_allclose(_run(gd2)[0, :3], np.diag(full, 1), atol=1e-12)


def test_eigh_tridiagonal_does_select_eigenvalues():
    alpha, beta = np.array([2.0, 3.0, 1.0, 5.0]), np.array([1.0, -1.0, 0.5])
    expected = [0.4285444295, 1.6383147773, 3.8616852227, 5.0714555705]
    with tf.Graph().as_default():
        np.testing.assert_allclose(_run(tf.linalg.eigh_tridiagonal(alpha, beta)), expected)
        values, vectors = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
        v, w = _run([values, vectors])
        dense = np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1)
        np.testing.assert_allclose((w * v) @ w.T, dense, atol=1e-12)
        by_value = tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=[1.0, 4.0])
        by_index = tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=[1, 2])
        np.testing.assert_allclose(_run(by_value), expected[1:3])
        np.testing.assert_allclose(_run(by_index), expected[1:3])
        with pytest.raises(ValueError, match="select"):
            tf.linalg.eigh_tridiagonal(alpha, beta, select="x")


def test_pinv_and_matrix_rank_do_validate_unknown_ranks_when_asked():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float64)
        rank = tf.linalg.matrix_rank(p, validate_args=True)
        inverse = tf.linalg.pinv(p, validate_args=True)
        with tf.Session() as sess:
            assert sess.run(rank, {p: np.eye(3)}) == 3
            np.testing.assert_allclose(sess.run(inverse, {p: 2 * np.eye(2)}), 0.5 * np.eye(2))
            with pytest.raises(tf.errors.InvalidArgumentError, match="at least 2 dimensions"):
                sess.run(rank, {p: np.ones(3)})


def test_lu_does_have_no_gradient_as_in_tensorflow():
    with tf.Graph().as_default():
        x = tf.constant(M)
        lu, _ = tf.linalg.lu(x)
        with pytest.raises(LookupError, match="Lu"):
            tf.gradients(tf.reduce_sum(lu), x)
        slow = tf.linalg.lstsq(x, tf.constant(RHS), fast=False)
        with pytest.raises(ValueError, match="fast=False"):
            tf.gradients(tf.reduce_sum(slow), x)


def test_decompositions_do_treat_nan_inputs_as_tensorflow():
    nan = np.array([[np.nan, 1.0], [1.0, 2.0]])
    with tf.Graph().as_default():
        assert np.isnan(_run(list(tf.svd(nan)))[0]).all()
        sign, log_abs = _run(list(tf.linalg.slogdet(nan)))
        assert np.isnan(sign) and np.isnan(log_abs)
        assert np.isnan(_run(tf.linalg.triangular_solve(nan, np.ones((2, 1))))).all()
        with pytest.raises(tf.errors.InvalidArgumentError, match="eigen decomposition"):
            _run(tf.linalg.eigh(nan)[0])
        with pytest.raises(tf.errors.InvalidArgumentError, match="not invertible"):
            _run(tf.linalg.lu(nan)[0])


def test_lu_helpers_do_validate_unknown_shapes_when_asked():
    with tf.Graph().as_default():
        lu, perm = tf.linalg.lu(M)
        factors = tf.placeholder(tf.float64)
        rhs = tf.placeholder(tf.float64)
        solved = tf.linalg.lu_solve(factors, perm, rhs, validate_args=True)
        rebuilt = tf.linalg.lu_reconstruct(factors, perm, validate_args=True)
        with tf.Session() as sess:
            lu_value = sess.run(lu)
            np.testing.assert_allclose(
                sess.run(solved, {factors: lu_value, rhs: RHS}), np.linalg.solve(M, RHS)
            )
            np.testing.assert_allclose(sess.run(rebuilt, {factors: lu_value}), M, atol=1e-12)
            with pytest.raises(tf.errors.InvalidArgumentError, match="rhs"):
                sess.run(solved, {factors: lu_value, rhs: np.ones((2, 1))})
            with pytest.raises(tf.errors.InvalidArgumentError, match="rank"):
                sess.run(rebuilt, {factors: np.ones((1, 3, 3))})
        with pytest.raises(ValueError, match="do not match"):
            tf.linalg.lu_solve(lu, perm, np.ones((2, 1)))


def test_lstsq_does_choose_its_normal_equations_when_the_shape_is_unknown():
    with tf.Graph().as_default():
        matrix = tf.placeholder(tf.float64, [None, None])
        rhs = tf.placeholder(tf.float64, [None, None])
        x = tf.linalg.lstsq(matrix, rhs, l2_regularizer=0.5)
        (grad,) = tf.gradients(tf.reduce_sum(x), matrix)
        with tf.Session() as sess:
            np.testing.assert_allclose(
                sess.run(x, {matrix: TALL, rhs: RHS}),
                [[-0.4981132075, -0.2264150943], [0.279245283, 0.4905660377]], rtol=1e-9,
            )  # fmt: skip
            np.testing.assert_allclose(
                sess.run(x, {matrix: TALL.T, rhs: np.array([[1.0], [2.0]])}),
                np.linalg.solve(TALL @ TALL.T + 0.5 * np.eye(3), TALL) @ [[1.0], [2.0]],
                rtol=1e-9,
            )
            assert sess.run(grad, {matrix: TALL, rhs: RHS}).shape == (3, 2)

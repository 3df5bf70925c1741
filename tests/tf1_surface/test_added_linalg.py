"""Behaviour of linalg names added to close tf.compat.v1 surface gaps (values from TF 2.21)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1


def _run(t):
    with tf.Session(graph=t.graph) as sess:
        return sess.run(t)


def test_cholesky_solve_does_solve_with_the_factor_of_a():
    with tf.Graph().as_default():
        a = np.array([[4.0, 2.0], [2.0, 3.0]])
        chol = tf.constant(np.linalg.cholesky(a))
        x = tf.linalg.cholesky_solve(chol, tf.constant(np.array([[1.0, 2.0], [3.0, 4.0]])))
        np.testing.assert_allclose(_run(x), [[-0.375, -0.25], [1.25, 1.5]], rtol=1e-6)


def test_cholesky_solve_does_batch_and_is_the_top_level_name():
    assert tf.cholesky_solve is tf.linalg.cholesky_solve
    rng = np.random.default_rng(0)
    m = rng.normal(size=(3, 4, 4))
    a = m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)
    b = rng.normal(size=(3, 4, 2))
    with tf.Graph().as_default():
        x = tf.cholesky_solve(tf.constant(np.linalg.cholesky(a)), tf.constant(b))
        assert x.shape.as_list() == [3, 4, 2]
        np.testing.assert_allclose(_run(x), np.linalg.solve(a, b), rtol=1e-8)


def test_cholesky_solve_does_reject_a_rank_one_rhs():
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.linalg.cholesky_solve(tf.constant(np.eye(2)), tf.constant(np.array([1.0, 2.0])))


def test_matvec_does_multiply_batches_of_matrices_by_vectors():
    a = np.arange(12.0).reshape(2, 2, 3)
    v = np.array([1.0, -1.0, 2.0])
    with tf.Graph().as_default():
        y = tf.linalg.matvec(tf.constant(a), tf.constant(v))
        yt = tf.linalg.matvec(
            tf.constant(a[0]), tf.constant(np.array([1.0, 2.0])), transpose_a=True
        )
        assert y.shape.as_list() == [2, 2]
        np.testing.assert_allclose(_run(y), [[3.0, 9.0], [15.0, 21.0]])
        np.testing.assert_allclose(_run(yt), [6.0, 9.0, 12.0])


def test_global_norm_does_take_the_norm_of_all_tensors_together():
    with tf.Graph().as_default():
        n = tf.linalg.global_norm([tf.constant([3.0]), tf.constant([[4.0, 12.0]])])
        np.testing.assert_allclose(_run(n), 13.0, rtol=1e-6)


def test_adjoint_does_swap_the_matrix_dimensions():
    a = np.arange(12.0).reshape(2, 2, 3)
    with tf.Graph().as_default():
        t = tf.linalg.adjoint(tf.constant(a))
        assert t.shape.as_list() == [2, 3, 2]
        np.testing.assert_array_equal(_run(t), np.swapaxes(a, -1, -2))


def test_logdet_does_not_overflow_where_det_would():
    with tf.Graph().as_default():
        small = tf.linalg.logdet(tf.constant(np.array([[4.0, 2.0], [2.0, 3.0]])))
        big = tf.linalg.logdet(tf.constant(np.eye(400) * 1e3))
        np.testing.assert_allclose(_run(small), np.log(8.0), rtol=1e-12)
        np.testing.assert_allclose(_run(big), 400 * np.log(1e3), rtol=1e-12)


def test_tensor_diag_does_build_and_read_a_rank_2k_diagonal():
    assert tf.linalg.tensor_diag is tf.diag and tf.linalg.tensor_diag_part is tf.diag_part
    d = np.array([[1.0, 2.0], [3.0, 4.0]])
    with tf.Graph().as_default():
        t = tf.linalg.tensor_diag(tf.constant(d))
        assert t.shape.as_list() == [2, 2, 2, 2]
        out = _run(t)
        assert out[1, 0, 1, 0] == 3.0 and out[1, 0, 0, 1] == 0.0 and out.sum() == 10.0
        np.testing.assert_array_equal(_run(tf.linalg.tensor_diag_part(t)), d)


def test_normalize_does_return_the_unit_tensor_and_its_kept_norm():
    x = np.array([[3.0, 4.0], [6.0, 8.0]])
    with tf.Graph().as_default():
        rows, row_norms = tf.linalg.normalize(tf.constant(x), axis=1)
        whole, total = tf.linalg.normalize(tf.constant(x), ord=1)
        np.testing.assert_allclose(_run(rows), [[0.6, 0.8], [0.6, 0.8]])
        np.testing.assert_allclose(_run(row_norms), [[5.0], [10.0]])
        np.testing.assert_allclose(_run(whole), x / 21.0)
        np.testing.assert_allclose(_run(total), [[21.0]])


# -- band diagonals (values from TF 2.21's MatrixDiagV3 family) ------------------------------------
_X34 = np.arange(1.0, 13.0).reshape(3, 4)


def test_diag_part_does_read_a_band_aligned_as_asked():
    with tf.Graph().as_default():
        band = tf.linalg.diag_part(_X34, k=(-1, 2))
        left_right = tf.linalg.diag_part(_X34, k=(-1, 2), align="LEFT_RIGHT", padding_value=9)
        assert band.shape.as_list() == [4, 3]
        np.testing.assert_array_equal(_run(band), [[0, 3, 8], [2, 7, 12], [1, 6, 11], [5, 10, 0]])
        np.testing.assert_array_equal(
            _run(left_right), [[3, 8, 9], [2, 7, 12], [1, 6, 11], [9, 5, 10]]
        )


def test_diag_part_does_batch_one_off_diagonal():
    xb = np.arange(1.0, 25.0).reshape(2, 4, 3)
    with tf.Graph().as_default():
        np.testing.assert_array_equal(_run(tf.linalg.diag_part(xb, k=1)), [[2, 6], [14, 18]])
        low = _run(tf.matrix_diag_part(xb, k=(-2, 0), align="LEFT_LEFT"))
        np.testing.assert_array_equal(low[1], [[13, 17, 21], [16, 20, 24], [19, 23, 0]])


def test_diag_does_build_bands_with_padding_and_sizes():
    with tf.Graph().as_default():
        up = tf.linalg.diag(np.array([[1.0, 2.0], [3.0, 4.0]]), k=1)
        band = tf.matrix_diag(
            np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), k=(-1, 0), padding_value=-1.0
        )
        tall = tf.linalg.diag(np.array([1.0, 2.0]), k=-1, num_rows=4)
        wide = tf.linalg.diag(np.array([1.0, 2.0]), num_rows=2, num_cols=3)
        assert up.shape.as_list() == [2, 3, 3] and tall.shape.as_list() == [4, 2]
        np.testing.assert_array_equal(_run(up)[1], [[0, 3, 0], [0, 0, 4], [0, 0, 0]])
        np.testing.assert_array_equal(_run(band), [[1, -1, -1], [4, 2, -1], [-1, 5, 3]])
        np.testing.assert_array_equal(_run(tall), [[0, 0], [1, 0], [0, 2], [0, 0]])
        np.testing.assert_array_equal(_run(wide), [[1, 0, 0], [0, 2, 0]])


def test_set_diag_does_replace_a_band():
    with tf.Graph().as_default():
        out = tf.linalg.set_diag(_X34, np.array([[7.0, 8.0, 0.0], [1.0, 2.0, 3.0]]), k=(0, 1))
        right = tf.matrix_set_diag(
            _X34, np.array([[0.0, 7.0, 8.0], [1.0, 2.0, 3.0]]), k=(0, 1), align="RIGHT_RIGHT"
        )
        np.testing.assert_array_equal(_run(out), [[1, 7, 3, 4], [5, 2, 8, 8], [9, 10, 3, 0]])
        np.testing.assert_array_equal(_run(right), [[1, 0, 3, 4], [5, 2, 7, 8], [9, 10, 3, 8]])


def test_diag_part_does_have_the_gradient_of_its_band():
    with tf.Graph().as_default():
        x = tf.constant(_X34)
        d = tf.linalg.diag_part(x, k=(-1, 1))
        (grad,) = tf.gradients(tf.reduce_sum(d * d), x)
        np.testing.assert_array_equal(_run(grad), [[2, 4, 0, 0], [10, 12, 14, 0], [0, 20, 22, 24]])
        diag = tf.constant(np.array([[1.0, 2.0], [3.0, 4.0]]))
        (grad_diag,) = tf.gradients(tf.reduce_sum(tf.linalg.diag(diag, k=1) * 3.0), diag)
        np.testing.assert_array_equal(_run(grad_diag), np.full((2, 2), 3.0))


def test_diag_part_does_reject_bad_bands_and_aligns():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="align"):
            tf.linalg.diag_part(_X34, align="MIDDLE")
        with pytest.raises(ValueError, match="low <= high"):
            tf.linalg.diag_part(_X34, k=(2, 1))
        with pytest.raises(ValueError, match="outside"):
            tf.linalg.diag_part(_X34, k=4)
        with pytest.raises(ValueError, match="num_rows"):
            tf.linalg.diag(np.array([1.0, 2.0]), num_rows=5, num_cols=7)


# -- matmul's parameters ---------------------------------------------------------------------------
_I8A = np.array([[100, 100], [3, 4]], np.int8)
_I8B = np.array([[100, 1], [2, 3]], np.int8)


def test_matmul_does_multiply_int8_into_int32_with_output_type():
    with tf.Graph().as_default():
        a, b = tf.constant(_I8A), tf.constant(_I8B)
        r = tf.matmul(a, b, output_type=tf.int32)
        rb = tf.linalg.matmul(
            tf.reshape(a, [1, 2, 2]), tf.cast(b, tf.uint8), output_type=tf.int32, transpose_a=True
        )
        assert r.dtype == tf.int32 and rb.shape.as_list() == [1, 2, 2]
        np.testing.assert_array_equal(_run(r), [[10200, 400], [308, 15]])
        np.testing.assert_array_equal(_run(rb), [[[10006, 109], [10008, 112]]])


def test_matmul_does_keep_grad_hints_and_reject_bad_output_types():
    with tf.Graph().as_default():
        fa, fb = tf.constant(_I8A.astype(np.float32)), tf.constant(_I8B.astype(np.float32))
        same = tf.matmul(fa, fb, output_type=tf.float32, grad_a=True)
        assert same.op.get_attr("grad_a") is True
        np.testing.assert_array_equal(_run(same), [[10200, 400], [308, 15]])
        with pytest.raises(TypeError, match="output_type"):
            tf.matmul(fa, fb, output_type=tf.int32)
        with pytest.raises(TypeError, match="int32"):
            tf.matmul(tf.constant(_I8A), tf.constant(_I8B), output_type=tf.int64)
        with pytest.raises(ValueError, match="transpose_a"):
            tf.matmul(fa, fb, transpose_a=True, adjoint_a=True)


def test_sparse_matmul_does_multiply_float32_matrices():
    with tf.Graph().as_default():
        fa, fb = tf.constant(_I8A.astype(np.float32)), tf.constant(_I8B.astype(np.float32))
        sp = tf.sparse_matmul(fa, fb, transpose_b=True, a_is_sparse=True)
        np.testing.assert_array_equal(_run(sp), [[10100, 500], [304, 18]])
        with pytest.raises(TypeError, match="float32"):
            tf.sparse_matmul(tf.cast(fa, tf.float64), tf.cast(fb, tf.float64))


def test_diag_ops_do_take_the_band_and_sizes_as_tensors():
    with tf.Graph().as_default():
        k = tf.placeholder(tf.int32, [2])
        rows = tf.placeholder(tf.int32, [])
        part = tf.linalg.diag_part(_X34, k=k)
        built = tf.linalg.diag(np.array([1.0, 2.0]), k=-1, num_rows=rows)
        assert part.shape.ndims is None and built.shape.as_list() == [None, None]
        with tf.Session() as sess:
            np.testing.assert_array_equal(
                sess.run(part, {k: [-1, 2]}), [[0, 3, 8], [2, 7, 12], [1, 6, 11], [5, 10, 0]]
            )
            np.testing.assert_array_equal(
                sess.run(built, {rows: 4}), [[0, 0], [1, 0], [0, 2], [0, 0]]
            )
            with pytest.raises(tf.errors.InvalidArgumentError, match="low <= high"):
                sess.run(part, {k: [2, 1]})
        with pytest.raises(TypeError, match="integer"):
            tf.linalg.diag_part(_X34, k=1.5)

"""Behaviour of ``tf.linalg.LinearOperatorCirculant``, ``...Circulant2D``, ``...Circulant3D`` and
``tf.linalg.logm`` (values from TF 2.21, tf.compat.v1 graph mode)."""

import numpy as np
import pytest

import dataflow as df

tf = df.compat.v1

SPECTRUM = np.array([[6.0, -2 - 2j, -2, -2 + 2j], [1, 2j, 3, 4]], np.complex64)
X = np.arange(8).reshape(4, 2).astype(np.complex64)


def _run(fetches, feed=None, graph=None):
    with tf.Session(graph=graph or tf.get_default_graph()) as sess:
        return sess.run(fetches, feed)


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_circulant_to_dense_matmul_and_solve_match_tf(graph):
    op = tf.linalg.LinearOperatorCirculant(tf.constant(SPECTRUM))
    assert op.shape.as_list() == [2, 4, 4]
    assert op.dtype == tf.complex64 and op.block_depth == 1
    assert op.block_shape.as_list() == [4]
    x = tf.constant(X)
    dense, mm, mma, mv, solve = _run(
        [op.to_dense(), op.matmul(x), op.matmul(x, adjoint=True), op.matvec(x[:, 0]), op.solve(x)]
    )
    assert dense.dtype == np.complex64
    np.testing.assert_allclose(
        dense[0].real, [[0, 1, 2, 3], [3, 0, 1, 2], [2, 3, 0, 1], [1, 2, 3, 0]], atol=1e-5
    )
    np.testing.assert_allclose(dense[1, 0], [2 + 0.5j, 1j, -0.5j, -1 - 1j], atol=1e-5)
    np.testing.assert_allclose(
        mm,
        [
            [[28, 34], [16, 22], [12, 18], [16, 22]],
            [[-6 - 6j, -5 - 6j], [4 + 2j, 5 + 2j], [6 + 6j, 7 + 6j], [8 - 2j, 9 - 2j]],
        ],
        atol=1e-4,
    )
    np.testing.assert_allclose(
        mma,
        [
            [[20, 26], [24, 30], [20, 26], [8, 14]],
            [[-2 - 2j, -1 - 2j], [6j, 1 + 6j], [2 + 2j, 3 + 2j], [12 - 6j, 13 - 6j]],
        ],
        atol=1e-4,
    )
    np.testing.assert_allclose(mv, mm[..., 0], atol=1e-4)
    np.testing.assert_allclose(
        solve[1],
        [
            [2.916667 + 0.25j, 3.916667 + 0.25j],
            [2.583333 + 0.75j, 3.583333 + 0.75j],
            [2.416667 - 0.25j, 3.416667 - 0.25j],
            [4.083333 - 0.75j, 5.083333 - 0.75j],
        ],
        atol=1e-4,
    )
    np.testing.assert_allclose(solve[0, :, 0], [1, 1, 1, -1], atol=1e-4)


def test_circulant_reductions_match_tf(graph):
    op = tf.linalg.LinearOperatorCirculant(tf.constant(SPECTRUM))
    det, lad, diag, trace, kernel, cond = _run(
        [
            op.determinant(),
            op.log_abs_determinant(),
            op.diag_part(),
            op.trace(),
            op.convolution_kernel(),
            op.cond(),
        ]
    )
    np.testing.assert_allclose(det, [-96, 24j], atol=1e-3)
    assert lad.dtype == np.complex64
    np.testing.assert_allclose(lad, [4.564348, 3.178054], atol=1e-5)
    np.testing.assert_allclose(diag, [[0] * 4, [2 + 0.5j] * 4], atol=1e-5)
    np.testing.assert_allclose(trace, [0, 8 + 2j], atol=1e-5)
    np.testing.assert_allclose(kernel, [[0, 3, 2, 1], [2 + 0.5j, -1 - 1j, -0.5j, 1j]], atol=1e-5)
    assert cond.dtype == np.float32
    np.testing.assert_allclose(cond, [3, 4], atol=1e-5)


def test_circulant_adjoint_inverse_and_products_are_circulant(graph):
    op = tf.linalg.LinearOperatorCirculant(tf.constant(SPECTRUM))
    adjoint, inverse = op.adjoint(), op.inverse()
    product, quotient = op.matmul(op), op.solve(op)
    for derived in (adjoint, inverse, product, quotient):
        assert isinstance(derived, tf.linalg.LinearOperatorCirculant)
    adj, inv, prod, quot, dense = _run(
        [x.to_dense() for x in (adjoint, inverse, product, quotient, op)]
    )
    np.testing.assert_allclose(adj, np.conj(np.swapaxes(dense, -1, -2)), atol=1e-5)
    np.testing.assert_allclose(
        inv[1, 0],
        [0.395833 - 0.125j, 0.041667 + 0.0625j, 0.270833 + 0.125j, 0.291667 - 0.0625j],
        atol=1e-5,
    )
    np.testing.assert_allclose(prod[0, 0], [10, 12, 10, 4], atol=1e-4)
    np.testing.assert_allclose(prod[1, 0], [5.5, -2 + 5j, -0.5, -2 - 5j], atol=1e-4)
    np.testing.assert_allclose(quot, np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-5)


def test_circulant_real_spectrum_is_self_adjoint_with_real_dtype(graph):
    op = tf.linalg.LinearOperatorCirculant(
        tf.constant([6.0, 2.0, 1.0, 2.0], tf.float64), input_output_dtype=tf.float64
    )
    assert op.is_self_adjoint is True and op.dtype == tf.float64
    dense, det, trace, solved, eig = _run(
        [
            op.to_dense(),
            op.determinant(),
            op.trace(),
            op.solvevec(tf.constant([1.0, 2, 3, 4], tf.float64)),
            op.eigvals(),
        ]
    )
    assert dense.dtype == np.float64
    np.testing.assert_allclose(dense[0], [2.75, 1.25, 0.75, 1.25])
    np.testing.assert_allclose(det, 24.0)
    np.testing.assert_allclose(trace, 11.0)
    np.testing.assert_allclose(solved, [-0.583333, 0.416667, 0.416667, 1.416667], atol=1e-6)
    np.testing.assert_allclose(eig, [6, 2, 1, 2])


def test_circulant_2d_and_3d_match_tf(graph):
    op2 = tf.linalg.LinearOperatorCirculant2D(
        tf.constant(np.array([[1.0, 2, 3], [4, 5, 6]], np.complex64))
    )
    op3 = tf.linalg.LinearOperatorCirculant3D(
        tf.constant(np.arange(1, 9, dtype=np.float32).reshape(2, 2, 2)),
        input_output_dtype=tf.float32,
    )
    assert op2.shape.as_list() == [6, 6] and op3.shape.as_list() == [8, 8]
    d2, t2, d3, det3, k3 = _run(
        [op2.to_dense(), op2.trace(), op3.to_dense(), op3.determinant(), op3.convolution_kernel()]
    )
    np.testing.assert_allclose(
        d2[0], [3.5, -0.5 + 0.288675j, -0.5 - 0.288675j, -1.5, 0, 0], atol=1e-5
    )
    np.testing.assert_allclose(
        d2[3], [-1.5, 0, 0, 3.5, -0.5 + 0.288675j, -0.5 - 0.288675j], atol=1e-5
    )
    np.testing.assert_allclose(t2, 21.0, atol=1e-5)
    assert d3.dtype == np.float32
    np.testing.assert_allclose(d3[0], [4.5, -0.5, -1, 0, -2, 0, 0, 0], atol=1e-5)
    np.testing.assert_allclose(d3[5], [0, -2, 0, 0, -0.5, 4.5, 0, -1], atol=1e-5)
    np.testing.assert_allclose(det3, 40320.0)
    np.testing.assert_allclose(k3, [[[4.5, -0.5], [-1, 0]], [[-2, 0], [0, 0]]], atol=1e-5)


def test_circulant_matmul_broadcasts_batches(graph):
    op = tf.linalg.LinearOperatorCirculant(
        tf.constant([[3.0, 1.0], [0.0, 2.0]]), input_output_dtype=tf.float32
    )
    y = op.matmul(tf.constant(np.arange(6, dtype=np.float32).reshape(3, 1, 2, 1)))
    assert y.shape.as_list() == [3, 2, 2, 1]
    np.testing.assert_allclose(
        _run(y),
        [[[[1], [2]], [[-1], [1]]], [[[7], [8]], [[-1], [1]]], [[[13], [14]], [[-1], [1]]]],
        atol=1e-5,
    )


def test_circulant_unknown_batch_and_empty_batch(graph):
    ph = tf.placeholder(tf.float32, [None, 3])
    op = tf.linalg.LinearOperatorCirculant(ph, input_output_dtype=tf.float32)
    assert op.shape.as_list() == [None, 3, 3]
    dense, diag = _run([op.to_dense(), op.diag_part()], {ph: [[1.0, 2.0, 3.0], [2.0, 0.0, 1.0]]})
    np.testing.assert_allclose(dense[0, 0], [2, -0.5, -0.5], atol=1e-6)
    np.testing.assert_allclose(dense[1, 0], [1, 0.5, 0.5], atol=1e-6)
    np.testing.assert_allclose(diag, [[2, 2, 2], [1, 1, 1]], atol=1e-6)
    empty = tf.linalg.LinearOperatorCirculant(tf.zeros([0, 4], tf.complex64))
    assert empty.shape.as_list() == [0, 4, 4]
    assert _run(empty.to_dense()).shape == (0, 4, 4)


def test_circulant_asserts_check_the_spectrum(graph):
    singular = tf.linalg.LinearOperatorCirculant(
        tf.placeholder_with_default(tf.constant([[3.0, 1.0], [0.0, 2.0]]), [2, 2]),
        input_output_dtype=tf.float32,
    )
    good = tf.linalg.LinearOperatorCirculant(
        tf.constant([[3.0, 1.0], [1.0, 2.0]]), input_output_dtype=tf.float32
    )
    complex_op = tf.linalg.LinearOperatorCirculant(
        tf.placeholder_with_default(tf.constant([1 + 1j, 2 - 1j], tf.complex64), [2])
    )
    hermitian = tf.linalg.LinearOperatorCirculant(
        tf.constant([4 + 0j, 1 + 2j, 3, 1 - 2j], tf.complex128), input_output_dtype=tf.complex128
    )
    with pytest.raises(df.errors.InvalidArgumentError, match="Spectrum contained zero"):
        _run(singular.assert_non_singular())
    with pytest.raises(df.errors.InvalidArgumentError, match="non-zero imaginary part"):
        _run(complex_op.assert_self_adjoint())
    with pytest.raises(df.errors.InvalidArgumentError, match="not Hermitian"):
        _run(complex_op.assert_hermitian_spectrum())
    _run(
        [
            good.assert_non_singular(),
            good.assert_positive_definite(),
            good.assert_self_adjoint(),
            hermitian.assert_hermitian_spectrum(),
        ]
    )


def test_circulant_bad_arguments_raise_like_tf(graph):
    with pytest.raises(ValueError, match="self-adjoint"):
        tf.linalg.LinearOperatorCirculant([1.0, 2.0], is_self_adjoint=False)
    with pytest.raises(ValueError, match="always square"):
        tf.linalg.LinearOperatorCirculant([1.0 + 0j, 2.0], is_square=False)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        tf.linalg.LinearOperatorCirculant2D(tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="at least 3 dimensions"):
        tf.linalg.LinearOperatorCirculant3D(tf.zeros([2, 2]))
    op = tf.linalg.LinearOperatorCirculant(tf.constant([3.0, 1.0]), input_output_dtype=tf.float32)
    with pytest.raises(TypeError, match="LinearOperatorCirculant.*float64"):
        op.matmul(tf.constant(np.ones((2, 1)), tf.float64))


def test_circulant_signatures_follow_tf():
    import inspect

    for cls, default_name in [
        (tf.linalg.LinearOperatorCirculant, "LinearOperatorCirculant"),
        (tf.linalg.LinearOperatorCirculant2D, "LinearOperatorCirculant2D"),
        (tf.linalg.LinearOperatorCirculant3D, "LinearOperatorCirculant3D"),
    ]:
        params = inspect.signature(cls).parameters
        assert list(params) == [
            "spectrum",
            "input_output_dtype",
            "is_non_singular",
            "is_self_adjoint",
            "is_positive_definite",
            "is_square",
            "name",
        ]
        assert params["input_output_dtype"].default == tf.complex64
        assert params["name"].default == default_name
    assert df.linalg.LinearOperatorCirculant is tf.linalg.LinearOperatorCirculant


def test_circulant_gradients_flow_to_the_spectrum_and_the_argument(graph):
    spectrum = tf.constant([[3.0, 1.0, 2.0], [1.0, 2.0, 5.0]], tf.float64)
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], tf.float64)
    op = tf.linalg.LinearOperatorCirculant(spectrum, input_output_dtype=tf.float64)
    loss = (
        tf.reduce_sum(op.matmul(x) ** 2) + tf.reduce_sum(op.solve(x)) + op.log_abs_determinant()[0]
    )
    complex_spectrum = tf.constant([[3.0 + 1j, 1.0, 2.0 - 1j]], tf.complex64)
    op2 = tf.linalg.LinearOperatorCirculant2D(complex_spectrum)
    complex_loss = tf.reduce_sum(tf.abs(op2.matvec(tf.constant([1j, 2, 3], tf.complex64))))
    grads = _run(tf.gradients(loss, [spectrum, x]) + tf.gradients(complex_loss, complex_spectrum))
    np.testing.assert_allclose(grads[0], [[448.0, 25.0, 24.5], [129.0, 56.0, 56.0]], atol=1e-8)
    np.testing.assert_allclose(
        grads[1],
        [[3.33333333, 23.33333333], [61.33333333, 81.33333333], [119.33333333, 139.33333333]],
        atol=1e-7,
    )
    np.testing.assert_allclose(
        grads[2],
        [[4.435516 + 1.6813953j, 0.67218655 - 0.32225183j, 0.5554168 - 0.42091778j]],
        atol=1e-5,
    )


def test_circulant_hints_and_dtypes_of_derived_operators_follow_tf(graph):
    pd = tf.linalg.LinearOperatorCirculant(
        tf.constant([1.0, 2.0], tf.complex64),
        is_positive_definite=True,
        is_non_singular=True,
        is_self_adjoint=True,
    )
    not_sa = tf.linalg.LinearOperatorCirculant(
        tf.constant([1 + 1j, 2.0], tf.complex64), is_self_adjoint=False, is_non_singular=False
    )
    other = tf.linalg.LinearOperatorCirculant(
        tf.constant([1 + 1j, 2.0], tf.complex64), is_positive_definite=True
    )

    def hints(op):
        return (op.is_non_singular, op.is_self_adjoint, op.is_positive_definite)

    assert hints(pd.matmul(pd)) == (True, True, True)
    assert hints(pd.solve(pd)) == (True, True, True)
    assert hints(pd.matmul(not_sa)) == (False, False, None)
    assert hints(pd.solve(not_sa)) == (False, False, None)
    assert hints(not_sa.matmul(pd)) == (False, False, None)
    assert hints(pd.matmul(other)) == (True, None, None)
    assert hints(other.solve(other)) == (True, None, None)
    assert pd.adjoint() is pd and pd.inverse().is_non_singular
    assert not_sa.adjoint().is_self_adjoint is False
    real = tf.linalg.LinearOperatorCirculant([1.0, 2.0], input_output_dtype=tf.float32)
    assert real.adjoint() is real and real.inverse().dtype == tf.float32
    # As TensorFlow: products and quotients take the default dtype, complex64.
    assert real.matmul(real).dtype == tf.complex64 and real.solve(real).dtype == tf.complex64
    assert sorted(real.parameters) == [
        "input_output_dtype",
        "is_non_singular",
        "is_positive_definite",
        "is_self_adjoint",
        "is_square",
        "name",
        "spectrum",
    ]
    with pytest.raises(NotImplementedError, match="singular"):
        not_sa.solve(pd)


def test_circulant_of_unknown_rank_says_what_it_needs(graph):
    op = tf.linalg.LinearOperatorCirculant2D(tf.placeholder(tf.complex64, None))
    assert op.shape.ndims is None and op.batch_shape.ndims is None
    with pytest.raises(ValueError, match="LinearOperatorCirculant2D.*ranks known"):
        op.matmul(tf.placeholder(tf.complex64, None))
    spectrum = tf.placeholder(tf.complex64, None)
    op = tf.linalg.LinearOperatorCirculant2D(spectrum)
    det, trace, shape = _run(
        [op.determinant(), op.trace(), op.shape_tensor()],
        {spectrum: np.arange(1, 7).reshape(1, 2, 3).astype(np.complex64)},
    )
    np.testing.assert_allclose(det, [720.0])
    np.testing.assert_allclose(trace, [21.0])
    assert shape.tolist() == [1, 6, 6]


# -- logm ------------------------------------------------------------------------------------------
def test_logm_matches_tf_on_defective_rotation_and_batched_matrices(graph):
    defective = np.array([[2.0, 1, 0], [0, 2, 1], [0, 0, 2]], np.complex128)
    rotation = np.array([[0.0, -1], [1, 0]], np.complex64)
    batch = np.array(
        [[[1 + 2j, 0.5], [0.25j, 3]], [[4, 1], [1, 4]]],
        np.complex128,
    )
    negative = np.array([[-1.0, 0], [0, -2]], np.complex64)
    stiff = np.array([[1e-3, 1], [0, 1e3]], np.complex128)
    out = _run(
        [tf.linalg.logm(tf.constant(v)) for v in (defective, rotation, batch, negative, stiff)]
    )
    assert [o.dtype for o in out] == [
        np.complex128,
        np.complex64,
        np.complex128,
        np.complex64,
        np.complex128,
    ]
    np.testing.assert_allclose(
        out[0], [[0.69314718, 0.5, -0.125], [0, 0.69314718, 0.5], [0, 0, 0.69314718]], atol=1e-8
    )
    np.testing.assert_allclose(out[1], [[0, -1.5707964], [1.5707964, 0]], atol=1e-6)
    np.testing.assert_allclose(
        out[2],
        [
            [
                [0.79378456 + 1.10564178j, 0.17645002 - 0.10170229j],
                [0.05085114 + 0.08822501j, 1.09277547 - 0.00696744j],
            ],
            [[1.3540251, 0.25541281], [0.25541281, 1.3540251]],
        ],
        atol=1e-7,
    )
    np.testing.assert_allclose(out[3], [[3.1415927j, 0], [0, 0.6931472 + 3.1415927j]], atol=1e-6)
    np.testing.assert_allclose(out[4], [[-6.90775528, 0.01381552], [0, 6.90775528]], atol=1e-7)


def test_logm_of_a_singular_matrix_is_nan_and_empty_inputs_pass_through(graph):
    singular = np.stack([np.eye(2), np.zeros((2, 2)), [[1, 1], [1, 1]], [[0, 1], [0, 0]]])
    tiny = np.array([[1e-30, 0], [0, 1]], np.complex128)
    out, small, empty, no_rows = _run(
        [
            tf.linalg.logm(tf.constant(singular.astype(np.complex64))),
            tf.linalg.logm(tf.constant(tiny)),
            tf.linalg.logm(tf.zeros([0, 3, 3], tf.complex64)),
            tf.linalg.logm(tf.zeros([2, 0, 0], tf.complex128)),
        ]
    )
    np.testing.assert_array_equal(out[0], np.zeros((2, 2)))
    assert np.all(np.isnan(out[1:].real)) and np.all(np.isnan(out[1:].imag))
    np.testing.assert_allclose(small, [[-69.07755278982137, 0], [0, 0]])
    assert empty.shape == (0, 3, 3) and empty.dtype == np.complex64
    assert no_rows.shape == (2, 0, 0) and no_rows.dtype == np.complex128


def test_logm_takes_square_complex_matrices_only(graph):
    with pytest.raises(TypeError, match="not in list of allowed values: complex64, complex128"):
        tf.linalg.logm(tf.constant([[1.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.linalg.logm(tf.zeros([2, 3], tf.complex64))
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.linalg.logm(tf.zeros([2], tf.complex64))
    ph = tf.placeholder(tf.complex64, [None, None])
    with pytest.raises(df.errors.InvalidArgumentError, match="must be square"):
        _run(tf.linalg.logm(ph), {ph: np.zeros((2, 3), np.complex64)})


def test_logm_is_inverted_by_expm_and_its_gradient_matches_finite_differences(graph):
    rng = np.random.default_rng(0)
    a = np.eye(3) * 2 + 0.3 * rng.normal(size=(3, 3)) + 0.3j * rng.normal(size=(3, 3))
    w = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))
    x = tf.placeholder(tf.complex128, [3, 3])
    log = tf.linalg.logm(x)
    loss = tf.reduce_sum(tf.math.real(tf.math.conj(tf.constant(w)) * log))
    (grad,) = tf.gradients(loss, x)
    with tf.Session(graph=graph) as sess:
        value, g = sess.run([log, grad], {x: a})

        def f(v):
            return sess.run(loss, {x: v})

        h = 1e-6
        numeric = np.zeros((3, 3), complex)
        for i in range(3):
            for j in range(3):
                e = np.zeros((3, 3))
                e[i, j] = h
                numeric[i, j] = (f(a + e) - f(a - e)) / (2 * h) + 1j * (
                    f(a + 1j * e) - f(a - 1j * e)
                ) / (2 * h)
    eigenvalues, vectors = np.linalg.eig(value)
    np.testing.assert_allclose(
        vectors @ np.diag(np.exp(eigenvalues)) @ np.linalg.inv(vectors), a, atol=1e-10
    )
    np.testing.assert_allclose(g, numeric, atol=1e-6)
    assert df.linalg.logm is tf.linalg.logm


def test_logm_without_scipy_names_the_extra(graph, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "scipy.linalg", None)
    with pytest.raises(ImportError, match=r"logm at .*test_added_circulant.*dataflow\[special\]"):
        tf.linalg.logm(tf.eye(2, dtype=tf.complex64))

"""Matrices (inverse, determinant, solve, Cholesky, diagonals, bands, einsum, tensordot) and
TF1's remaining array names (sort, masks, linspace, broadcast_to, repeat, roll, partitions,
sets, grids, small helpers), with df.linalg's names for the matrix functions.

Expected values are TensorFlow 2.21's (``tf.compat.v1``, graph mode) for the same programs,
printed by running them in a ``tf.Session``; each test names the expressions.
"""

import warnings

import numpy as np
import pytest
from ops_testing import assert_same, evaluate

import dataflow as df

# TF programs below use A = [[4., 2.], [2., 3.]], B = [[1., 2., 3.], [4., 5., 6.]],
# M = arange(12.).reshape(3, 4) and V = [[3., 1., 2.], [0., 5., -1.]].
A = np.float32([[4, 2], [2, 3]])
B = np.float32([[1, 2, 3], [4, 5, 6]])
M = np.arange(12, dtype=np.float32).reshape(3, 4)
V = np.float32([[3, 1, 2], [0, 5, -1]])


def test_inverse_determinant_solve_and_cholesky():
    # TF: tf.matrix_inverse(A), tf.matrix_determinant(tf.stack([A, 2 * A])),
    # tf.matrix_solve(A, B), tf.matrix_solve(A + [[0, 1], [0, 0]], B, adjoint=True), tf.cholesky(A)
    inverse, determinant, solved, solved_adjoint, lower = evaluate(
        [
            df.matrix_inverse(A),
            df.matrix_determinant(df.stack([A, 2 * A])),
            df.matrix_solve(A, B),
            df.matrix_solve(A + np.float32([[0, 1], [0, 0]]), B, adjoint=True),
            df.cholesky(A),
        ]
    )
    assert_same(inverse, np.float32([[0.375, -0.25], [-0.25, 0.5]]))
    assert_same(determinant, np.float32([8, 32]), rtol=1e-5)
    assert_same(solved, np.float32([[-0.625, -0.5, -0.375], [1.75, 2, 2.25]]), rtol=1e-5)
    assert_same(
        solved_adjoint,
        np.float32([[-0.8333334, -0.66666675, -0.5], [2.1666667, 2.3333335, 2.5]]),
        rtol=1e-5,
    )
    assert_same(lower, np.float32([[2, 0], [1, 1.4142135]]))


def test_matrix_errors_name_the_op_and_the_line():
    # TF: tf.matrix_inverse([[1., 2., 3.]]) is a ValueError at build time; of a singular
    # matrix an InvalidArgumentError "Input is not invertible." when it runs
    with pytest.raises(ValueError, match=r"MatrixInverse op .* at .*extras.py:\d+: .*square"):
        df.matrix_inverse([[1.0, 2.0, 3.0]])
    with pytest.raises(df.errors.InvalidArgumentError, match="not invertible"):
        evaluate(df.matrix_inverse([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(df.errors.InvalidArgumentError, match="Cholesky decomposition"):
        evaluate(df.cholesky([[1.0, 2.0], [2.0, 1.0]]))


def test_cholesky_gradient_matches_tensorflow():
    # TF: tf.gradients(tf.reduce_sum(tf.cholesky(A) * [[1., 0.], [2., 3.]]), A)
    a = df.constant(A)
    (grad,) = df.gradients(df.reduce_sum(df.cholesky(a) * [[1.0, 0.0], [2.0, 3.0]]), a)
    assert_same(
        evaluate(grad), np.float32([[0.26516503, -0.03033008], [-0.03033008, 1.0606601]]), 1e-5
    )


def test_diagonals_bands_and_identities():
    # TF: tf.matrix_band_part(M, 1, 0), (M, -1, 1); tf.matrix_diag([[1., 2.], [3., 4.]]);
    # tf.matrix_diag_part(M) and of M's transpose -> [0, 5, 10]; tf.matrix_set_diag(M, [9, 8,
    # 7]) and of M's transpose; tf.eye(2, 3); tf.eye(2, batch_shape=[2], dtype=tf.int32);
    # tf.diag([1, 2]); tf.diag_part(reshape(range(16.), [2, 2, 2, 2])) -> [[0, 5], [10, 15]];
    # tf.trace(M) -> 15; tf.matrix_diag_part([[1., inf], [nan, 2.]]) -> [1, 2]
    values = evaluate(
        [
            df.matrix_band_part(M, 1, 0),
            df.matrix_band_part(M, -1, 1),
            df.matrix_diag([[1.0, 2.0], [3.0, 4.0]]),
            df.matrix_diag_part(M),
            df.matrix_diag_part(M.T),
            df.matrix_set_diag(M, [9.0, 8.0, 7.0]),
            df.matrix_set_diag(M.T, [9.0, 8.0, 7.0]),
            df.eye(2, 3),
            df.eye(2, batch_shape=[2], dtype=df.int32),
            df.diag([1, 2]),
            df.diag_part(np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2)),
            df.trace(M),
            df.matrix_diag_part([[1.0, np.inf], [np.nan, 2.0]]),
        ]
    )
    expected = [
        np.float32([[0, 0, 0, 0], [4, 5, 0, 0], [0, 9, 10, 0]]),
        np.float32([[0, 1, 0, 0], [4, 5, 6, 0], [8, 9, 10, 11]]),
        np.float32([[[1, 0], [0, 2]], [[3, 0], [0, 4]]]),
        np.float32([0, 5, 10]),
        np.float32([0, 5, 10]),
        np.float32([[9, 1, 2, 3], [4, 8, 6, 7], [8, 9, 7, 11]]),
        np.float32([[9, 4, 8], [1, 8, 9], [2, 6, 7], [3, 7, 11]]),
        np.float32([[1, 0, 0], [0, 1, 0]]),
        np.int32([[[1, 0], [0, 1]], [[1, 0], [0, 1]]]),
        np.int32([[1, 0], [0, 2]]),
        np.float32([[0, 5], [10, 15]]),
        np.float32(15),
        np.float32([1, 2]),
    ]
    for value, want in zip(values, expected):
        assert_same(value, want)
    assert df.diag(df.ones([2, 3])).shape.as_list() == [2, 3, 2, 3]
    assert df.matrix_transpose(df.zeros([2, 3, 4])).shape.as_list() == [2, 4, 3]


def test_einsum_and_tensordot():
    # TF: tf.einsum('ij,jk->ik', M, ones([4, 2])), ('ij->', M), ('ij,ij->i', M, M),
    # ("ij,kj", M, M); tf.tensordot(M, ones([4, 2]), 1); tf.tensordot(reshape(range(24.),
    # [2, 3, 4]), reshape(range(12.), [4, 3]), [[1, 2], [1, 0]]) -> [440, 1232]
    ones = np.ones((4, 2), np.float32)
    product, total, rows, gram, dot, pairs = evaluate(
        [
            df.einsum("ij,jk->ik", M, ones),
            df.einsum("ij->", M),
            df.einsum("ij,ij->i", M, M),
            df.einsum("ij,kj", M, M),
            df.tensordot(M, ones, 1),
            df.tensordot(
                np.arange(24, dtype=np.float32).reshape(2, 3, 4),
                np.arange(12, dtype=np.float32).reshape(4, 3),
                [[1, 2], [1, 0]],
            ),
        ]
    )
    assert_same(product, np.float32([[6, 6], [22, 22], [38, 38]]))
    assert_same(dot, np.float32([[6, 6], [22, 22], [38, 38]]))
    assert_same(total, np.float32(66))
    assert_same(rows, np.float32([14, 126, 366]))
    assert_same(gram, np.float32([[14, 38, 62], [38, 126, 214], [62, 214, 366]]))
    assert_same(pairs, np.float32([440, 1232]))


def test_linalg_module_names_the_same_functions():
    assert df.linalg.inv is df.matrix_inverse and df.linalg.det is df.matrix_determinant
    assert df.linalg.band_part is df.matrix_band_part and df.linalg.diag is df.matrix_diag
    assert df.linalg.solve is df.matrix_solve and df.linalg.transpose is df.matrix_transpose
    assert all(hasattr(df.linalg, name) for name in df.linalg.__all__)


def test_sort_and_argsort():
    # TF: tf.sort(V), tf.sort(V, axis=0, direction="DESCENDING"), tf.argsort(V),
    # tf.argsort([2, 1, 2, 1], stable=True) -> [1, 3, 0, 2]
    ascending, descending, order, ties = evaluate(
        [
            df.sort(V),
            df.sort(V, axis=0, direction="DESCENDING"),
            df.argsort(V),
            df.argsort([2, 1, 2, 1], stable=True),
        ]
    )
    assert_same(ascending, np.float32([[1, 2, 3], [-1, 0, 5]]))
    assert_same(descending, np.float32([[3, 5, 2], [0, 1, -1]]))
    assert_same(order, np.int32([[1, 2, 0], [2, 0, 1]]))
    assert_same(ties, np.int32([1, 3, 0, 2]))


def test_masks():
    # TF: tf.boolean_mask(V, [True, False]); (V, [[T, F, T], [F, T, F]]) -> [3, 2, 5];
    # (V, [False, True, True], axis=1); tf.sequence_mask([1, 3, 0]);
    # tf.sequence_mask([[1], [2]], 4, dtype=tf.float32)
    rows, entries, columns, mask, float_mask = evaluate(
        [
            df.boolean_mask(V, [True, False]),
            df.boolean_mask(V, [[True, False, True], [False, True, False]]),
            df.boolean_mask(V, [False, True, True], axis=1),
            df.sequence_mask([1, 3, 0]),
            df.sequence_mask([[1], [2]], 4, dtype=df.float32),
        ]
    )
    assert_same(rows, np.float32([[3, 1, 2]]))
    assert_same(entries, np.float32([3, 2, 5]))
    assert_same(columns, np.float32([[1, 2], [5, -1]]))
    assert mask.tolist() == [[True, False, False], [True, True, True], [False, False, False]]
    assert_same(float_mask, np.float32([[[1, 0, 0, 0]], [[1, 1, 0, 0]]]))
    with pytest.raises(ValueError, match=r"boolean_mask at .*extras.py:\d+: Shapes"):
        df.boolean_mask(V, [True, False, True])


def test_ranges_broadcasts_repeats_and_rolls():
    # TF: tf.linspace(0., 1., 5); tf.lin_space(2., 3., 1) -> [2]; tf.broadcast_to([1, 2],
    # [3, 2]); tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0); tf.repeat([[1, 2], [3, 4]], 2);
    # tf.roll([[1, 2, 3], [4, 5, 6]], [1, -1], [0, 1]) -> [[5, 6, 4], [2, 3, 1]]
    values = evaluate(
        [
            df.linspace(0.0, 1.0, 5),
            df.lin_space(2.0, 3.0, 1),
            df.broadcast_to([1, 2], [3, 2]),
            df.repeat([[1, 2], [3, 4]], [1, 2], axis=0),
            df.repeat([[1, 2], [3, 4]], 2),
            df.roll([[1, 2, 3], [4, 5, 6]], [1, -1], [0, 1]),
        ]
    )
    expected = [
        np.float32([0, 0.25, 0.5, 0.75, 1]),
        np.float32([2]),
        np.int32([[1, 2], [1, 2], [1, 2]]),
        np.int32([[1, 2], [3, 4], [3, 4]]),
        np.int32([1, 1, 2, 2, 3, 3, 4, 4]),
        np.int32([[5, 6, 4], [2, 3, 1]]),
    ]
    for value, want in zip(values, expected):
        assert_same(value, want)
    with pytest.raises(ValueError, match="cannot broadcast"):
        df.broadcast_to([1, 2, 3], [3, 2])


def test_sets_partitions_permutations_and_grids():
    # TF: tf.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8]); tf.setdiff1d([1..6], [1, 3, 5]);
    # tf.dynamic_partition([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2);
    # tf.invert_permutation([3, 4, 0, 2, 1]) -> [2, 4, 3, 0, 1]; tf.meshgrid([1, 2, 3], [4, 5])
    # and with indexing="ij"
    y, idx, count = df.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8])
    out, kept = df.setdiff1d([1, 2, 3, 4, 5, 6], [1, 3, 5])
    parts = df.dynamic_partition([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2)
    xy = df.meshgrid([1, 2, 3], [4, 5])
    ij = df.meshgrid([1, 2, 3], [4, 5], indexing="ij")
    values = evaluate(
        [y, idx, count, out, kept, *parts, df.invert_permutation([3, 4, 0, 2, 1]), *xy, *ij]
    )
    expected = [
        [1, 2, 4, 7, 8],
        [0, 0, 1, 2, 2, 2, 3, 4, 4],
        [2, 1, 3, 1, 2],
        [2, 4, 6],
        [1, 3, 5],
        [10, 20, 50],
        [30, 40],
        [2, 4, 3, 0, 1],
        [[1, 2, 3], [1, 2, 3]],
        [[4, 4, 4], [5, 5, 5]],
        [[1, 1], [2, 2], [3, 3]],
        [[4, 5], [4, 5], [4, 5]],
    ]
    for value, want in zip(values, expected):
        assert_same(value, np.int32(want))


def test_small_helpers():
    # TF: tf.get_static_value(tf.constant([1, 2])) -> [1 2], of a placeholder None, of
    # tf.shape(V) [2 3]; tf.is_tensor(V) True, of 3 False; tf.ensure_shape(placeholder [None,
    # 3], [2, None]).shape (2, 3); ensure_shape(V, [3, 3]) is a ValueError; a mismatch at run
    # time an InvalidArgumentError
    v = df.constant(V)
    assert df.get_static_value(df.constant([1, 2])).tolist() == [1, 2]
    assert df.get_static_value(df.placeholder(df.float32)) is None
    assert df.get_static_value(df.shape(v)).tolist() == [2, 3]
    assert df.is_tensor(v) and not df.is_tensor(3)
    x = df.placeholder(df.float32, [None, 3])
    assert df.ensure_shape(x, [2, None]).shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match=r"ensure_shape at .*extras.py:\d+"):
        df.ensure_shape(v, [3, 3])
    loose = df.placeholder(df.float32, [None, None])
    with pytest.raises(df.errors.InvalidArgumentError, match="does not match"):
        evaluate(df.ensure_shape(loose, [2, 2]), {loose: V})
    shapes = evaluate(df.shape_n([v, df.zeros([4])]))
    assert [s.tolist() for s in shapes] == [[2, 3], [4]]
    both = df.identity_n([v, v])  # one IdentityN op, as TensorFlow builds
    assert both[0].op is both[1].op and both[0].op.type == "IdentityN"


def test_matrix_and_array_names_in_a_cond_and_a_loop():
    x = df.placeholder(df.float32, [2, 2])
    branch = df.cond(df.matrix_determinant(x) > 0, lambda: df.matrix_inverse(x), lambda: df.sort(x))
    _, looped = df.while_loop(
        lambda i, m: i < 2, lambda i, m: (i + 1, df.roll(df.matrix_transpose(m), 1, 0)), [0, x]
    )
    inverse, rolled = evaluate([branch, looped], {x: A})
    assert_same(inverse, np.float32([[0.375, -0.25], [-0.25, 0.5]]))
    assert_same(rolled, np.float32([[3, 2], [2, 4]]))


def test_boolean_mask_gradient_is_dense_of_a_known_shape_without_a_warning():
    x = df.placeholder(df.float32, [3, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (grad,) = df.gradients(df.reduce_sum(df.boolean_mask(x, [True, False, True])), x)
        value = evaluate(df.convert_to_tensor(grad), {x: np.ones((3, 2), np.float32)})
    assert_same(value, np.float32([[1, 1], [0, 0], [1, 1]]))

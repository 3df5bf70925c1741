"""Gradients of TF1's remaining math and nn ops agree with central finite differences
(float64), and the ops TensorFlow gives no gradient pass none."""

import numpy as np
import pytest
from gradient_checking import check_gradients

import dataflow as df

rng = np.random.default_rng(4321)


def normal(*shape):
    return rng.normal(size=shape)


def positive(*shape):
    return rng.uniform(0.5, 2.0, size=shape)


def inside_unit(*shape):
    return rng.uniform(-0.8, 0.8, size=shape)


def distinct(*shape):
    """Values well apart from each other and from 0 (no ties or kinks within eps)."""
    n = int(np.prod(shape))
    values = rng.permutation(np.arange(1, n + 1)) * 0.37 * rng.choice([-1, 1], size=n)
    return values.reshape(shape)


def well_conditioned(*shape):
    """Square ``n x n`` matrices (``shape`` is the batch then ``n``) near twice the identity,
    far from singular."""
    n = shape[-1]
    return normal(*shape, n) * 0.3 + 2 * np.eye(n)


def positive_definite(n):
    m = normal(n, n)
    return m @ m.T + n * np.eye(n)


CASES = [
    ("Reciprocal", df.reciprocal, [positive(3)]),
    ("Sinh", df.sinh, [normal(3)]),
    ("Cosh", df.cosh, [normal(3)]),
    ("Asin", df.asin, [inside_unit(3)]),
    ("Acos", df.acos, [inside_unit(3)]),
    ("Atan", df.atan, [normal(3)]),
    ("Asinh", df.asinh, [normal(3)]),
    ("Acosh", df.acosh, [positive(3) + 1.0]),
    ("Atanh", df.atanh, [inside_unit(3)]),
    ("Expm1", df.expm1, [normal(3)]),
    ("Erf", df.erf, [normal(3)]),
    ("Erfc", df.erfc, [normal(3)]),
    ("Lgamma", df.lgamma, [positive(3)]),
    ("Digamma", df.digamma, [positive(3)]),
    ("Polygamma", lambda x: df.math.polygamma(df.constant(2.0, df.float64), x), [positive(3)]),
    ("Zeta", lambda q: df.math.zeta(df.constant(3.0, df.float64), q), [positive(3)]),
    ("Atan2", df.atan2, [normal(2, 3), positive(3)]),
    ("DivNoNan", df.div_no_nan, [normal(2, 3), positive(3)]),
    ("Cumprod", lambda x: df.cumprod(x, 1, exclusive=True, reverse=True), [positive(2, 4)]),
    ("reduce_logsumexp", lambda x: df.reduce_logsumexp(x, 1), [normal(3, 4)]),
    ("log_sigmoid", df.log_sigmoid, [normal(4)]),
    ("TopKV2", lambda x: df.nn.top_k(x, 2).values, [distinct(3, 4)]),
    ("LeakyRelu", lambda x: df.nn.leaky_relu(x, 0.3), [distinct(5)]),
    ("selu", df.nn.selu, [distinct(5)]),
    ("softsign", df.nn.softsign, [distinct(5)]),
    ("swish", df.nn.swish, [normal(5)]),
    ("crelu", df.nn.crelu, [distinct(2, 3)]),
    (
        "weighted_moments",
        lambda x, w: df.add_n(list(df.nn.weighted_moments(x, [1], w))),
        [normal(2, 3), positive(2, 3)],
    ),
    ("space_to_depth", lambda x: df.nn.space_to_depth(x, 2), [normal(1, 4, 2, 3)]),
    ("log_poisson_loss", lambda t, x: df.nn.log_poisson_loss(t, x, True), [positive(4), normal(4)]),
    ("MatrixInverse", df.matrix_inverse, [well_conditioned(2, 3)]),
    ("MatrixInverse adjoint", lambda x: df.matrix_inverse(x, adjoint=True), [well_conditioned(3)]),
    ("MatrixDeterminant", df.matrix_determinant, [well_conditioned(2, 3)]),
    ("MatrixSolve", df.matrix_solve, [well_conditioned(3), normal(3, 2)]),
    (
        "MatrixSolve adjoint",
        lambda a, b: df.matrix_solve(a, b, True),
        [well_conditioned(3), normal(3, 2)],
    ),
    ("Cholesky", lambda x: df.cholesky((x + df.matrix_transpose(x)) / 2), [positive_definite(3)]),
    ("Einsum", lambda a, b: df.einsum("ij,jk->ik", a, b), [normal(2, 3), normal(3, 4)]),
    ("Einsum summed letter", lambda a, b: df.einsum("ij,k->ik", a, b), [normal(2, 3), normal(4)]),
    ("tensordot", lambda a, b: df.tensordot(a, b, [[0], [1]]), [normal(3, 2), normal(4, 3)]),
    ("matrix_band_part", lambda x: df.matrix_band_part(x, 1, 0), [normal(3, 4)]),
    ("matrix_set_diag", df.matrix_set_diag, [normal(4, 3), normal(3)]),
    ("diag_part", lambda x: df.diag_part(x), [normal(3, 3)]),
    ("sort", lambda x: df.sort(x, axis=0), [distinct(3, 2)]),
    ("boolean_mask", lambda x: df.boolean_mask(x, [True, False, True]), [normal(3, 2)]),
    ("broadcast_to", lambda x: df.broadcast_to(x, [2, 3]), [normal(3)]),
    ("roll", lambda x: df.roll(x, 2, 1), [normal(2, 3)]),
    ("repeat", lambda x: df.repeat(x, [2, 0, 1], axis=0), [normal(3, 2)]),
    (
        "UnsortedSegmentMax",
        lambda x: df.unsorted_segment_max(x, [1, 0, 1, -1], 2),
        [distinct(4, 2)],
    ),
    ("UnsortedSegmentMin", lambda x: df.unsorted_segment_min(x, [1, 0, 1, 1], 2), [distinct(4, 2)]),
    ("UnsortedSegmentProd", lambda x: df.unsorted_segment_prod(x, [1, 0, 1, 1], 2), [normal(4, 2)]),
    ("segment_mean", lambda x: df.segment_mean(x, [0, 0, 2]), [normal(3, 2)]),
    (
        "dynamic_stitch",
        lambda a, b: df.dynamic_stitch([[0, 2], [1]], [a, b]),
        [normal(2, 3), normal(1, 3)],
    ),
]


@pytest.mark.parametrize("make, inputs", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(make, inputs):
    check_gradients(make, inputs)


@pytest.mark.parametrize(
    "make",
    [df.round, df.rint, df.is_nan, lambda x: df.truncatediv(x, 2.0)],
    ids=["round", "rint", "is_nan", "truncatediv"],
)
def test_ops_tensorflow_gives_no_gradient_pass_none(make):
    x = df.placeholder(df.float32, [3])
    assert df.gradients(df.cast(make(x), df.float32), x) == [None]

"""The rest of TF1's elementwise math and ``df.math``: values, dtypes and names as TensorFlow
gives them, in conds and loops, and errors naming the op and the caller's line.

Expected values are TensorFlow 2.21's (``tf.compat.v1``, graph mode) for the same expressions,
printed by running them in a ``tf.Session``; each test names the expressions.
"""

import numpy as np
import pytest
from ops_testing import assert_same, evaluate

import dataflow as df

X = [0.5, 1.5, 2.5, -2.5, 3.7]


def test_round_and_rint_take_halves_to_even_and_round_leaves_integers_alone():
    # TF: tf.round(X), tf.rint(X) -> [0, 2, 2, -2, 4]
    x = df.constant(X)
    ints = df.constant([3, -4])
    assert df.round(ints) is ints
    for value in evaluate([df.round(x), df.rint(x)]):
        assert_same(value, np.array([0.0, 2.0, 2.0, -2.0, 4.0], np.float32))


def test_special_functions_match_tensorflow():
    # TF: tf.math.erf/erfc/lgamma/digamma(X), tf.math.polygamma(1., X), tf.math.zeta(2., X)
    x = df.constant(X)
    erf, erfc, lgamma, digamma, polygamma, zeta = evaluate(
        [
            df.erf(x),
            df.erfc(x),
            df.lgamma(x),
            df.digamma(x),
            df.math.polygamma(df.constant(1.0), x),
            df.math.zeta(df.constant(2.0), x),
        ]
    )
    assert_same(erf, np.float32([0.5204999, 0.9661051, 0.99959296, -0.99959296, 0.99999994]))
    assert_same(
        erfc, np.float32([4.7950011e-01, 3.3894848e-02, 4.0695202e-04, 1.9995930, 1.6715099e-07])
    )
    assert_same(lgamma, np.float32([0.5723649, -0.12078223, 0.28468287, -0.05624371, 1.4280725]))
    assert_same(digamma, np.float32([-1.9635108, 0.03648996, 0.7031568, 1.1031568, 1.1671536]))
    trigamma = np.float32([4.934802, 0.93480223, 0.49035773, 9.539247, 0.31003785])
    assert_same(polygamma, trigamma, rtol=1e-5)
    assert_same(zeta, trigamma, rtol=1e-5)


def test_special_functions_at_their_poles():
    # TF: tf.math.lgamma([0., -1.]) -> [inf, inf]; tf.math.digamma([0., -1.]) -> [nan, nan]
    lgamma, digamma = evaluate([df.lgamma([0.0, -1.0]), df.digamma([0.0, -1.0])])
    assert np.isposinf(lgamma).all() and np.isnan(digamma).all()


def test_trigonometric_and_hyperbolic_functions_match_tensorflow():
    # TF: tf.stack([tf.sinh(X), tf.cosh(X), tf.asinh(X), tf.atan(X), tf.expm1(X)]) and
    # tf.stack([tf.asin(a), tf.acos(a), tf.atanh(a), tf.acosh([1.5, 3.])]), a = [0.3, -0.9]
    x = df.constant(X)
    a = [0.3, -0.9]
    hyper, trig = evaluate(
        [
            df.stack([df.sinh(x), df.cosh(x), df.asinh(x), df.atan(x), df.expm1(x)]),
            df.stack([df.asin(a), df.acos(a), df.atanh(a), df.acosh([1.5, 3.0])]),
        ]
    )
    assert_same(
        hyper,
        np.float32(
            [
                [0.5210953, 2.1292794, 6.0502048, -6.0502048, 20.211292],
                [1.127626, 2.3524096, 6.1322894, 6.1322894, 20.236015],
                [0.48121184, 1.1947632, 1.6472312, -1.6472312, 2.0192606],
                [0.4636476, 0.98279375, 1.19029, -1.19029, 1.3068326],
                [0.6487213, 3.481689, 11.182494, -0.917915, 39.447308],
            ]
        ),
    )
    assert_same(
        trig,
        np.float32(
            [
                [0.30469266, -1.1197695],
                [1.2661036, 2.6905658],
                [0.30951962, -1.4722193],
                [0.9624237, 1.7627472],
            ]
        ),
    )


def test_divisions_round_as_tensorflow_names_them():
    # TF: tf.truncatediv([-7, 7], 2) -> [-3, 3]; tf.truncatemod -> [-1, 1]; tf.floormod ->
    # [1, 1]; tf.div on ints -> [-4, 3], on floats -> [-3.5, 3.5];
    # tf.div_no_nan(X, [0, 1, 2, 0, 1]) -> [0, 1.5, 1.25, 0, 3.7]; tf.reciprocal([2., 4.])
    ints = df.constant([-7, 7])
    values = evaluate(
        [
            df.truncatediv(ints, 2),
            df.truncatemod(ints, 2),
            df.floormod(ints, 2),
            df.div(ints, 2),
            df.div(df.constant([-7.0, 7.0]), 2.0),
            df.div_no_nan(df.constant(X), df.constant([0.0, 1, 2, 0, 1])),
            df.reciprocal([2.0, 4.0]),
            df.atan2([1.0, -1.0], [-1.0, -1.0]),
        ]
    )
    expected = [
        np.int32([-3, 3]),
        np.int32([-1, 1]),
        np.int32([1, 1]),
        np.int32([-4, 3]),
        np.float32([-3.5, 3.5]),
        np.float32([0, 1.5, 1.25, 0, 3.7]),
        np.float32([0.5, 0.25]),
        np.float32([2.3561945, -2.3561945]),
    ]
    for value, want in zip(values, expected):
        assert_same(value, want)
    with pytest.raises(df.errors.InvalidArgumentError, match="Integer division by zero"):
        evaluate(df.truncatediv(ints, 0))


def test_predicates_on_floats_give_bools():
    # TF: tf.is_nan/is_inf/is_finite([nan, 1., inf or -inf])
    values = evaluate(
        [
            df.is_nan([np.nan, 1.0, np.inf]),
            df.is_inf([np.nan, 1.0, -np.inf]),
            df.is_finite([np.nan, 1.0, np.inf]),
        ]
    )
    assert [v.tolist() for v in values] == [
        [True, False, False],
        [False, False, True],
        [False, True, False],
    ]
    with pytest.raises(TypeError, match=r"IsNan op 'IsNan_1' at .*test_extra_math_ops.py:\d+"):
        df.is_nan([1, 2])


def test_reductions_composed_as_in_tensorflow():
    # TF: tf.reduce_logsumexp(X) -> 4.074861; reduce_logsumexp([[1,2],[3,4]], axis=1,
    # keepdims=True) -> [[2.3132617], [4.3132615]]; of [-inf, -inf] -> -inf;
    # tf.count_nonzero(X) -> 5 (int64); count_nonzero([[0,1,2],[0,0,3]], axis=1, dtype=int32)
    lse, lse_rows, lse_inf, count, per_row = evaluate(
        [
            df.reduce_logsumexp(X),
            df.reduce_logsumexp([[1.0, 2], [3, 4]], axis=1, keepdims=True),
            df.reduce_logsumexp([-np.inf, -np.inf]),
            df.count_nonzero(X),
            df.count_nonzero([[0, 1, 2], [0, 0, 3]], axis=1, dtype=df.int32),
        ]
    )
    assert_same(lse, np.float32(4.074861))
    assert_same(lse_rows, np.float32([[2.3132617], [4.3132615]]))
    assert lse_inf == -np.inf
    assert_same(count, np.int64(5))
    assert_same(per_row, np.int32([2, 1]))


def test_cumprod_exclusive_and_reverse():
    # TF: tf.cumprod(X, exclusive=True), tf.cumprod(X, reverse=True)
    x = df.constant(X)
    exclusive, backwards = evaluate([df.cumprod(x, exclusive=True), df.cumprod(x, reverse=True)])
    assert_same(exclusive, np.float32([1.0, 0.5, 0.75, 1.875, -4.6875]))
    assert_same(backwards, np.float32([-17.34375, -34.6875, -23.125, -9.25, 3.7]))


def test_shorthands_cast_and_are_named_as_in_tensorflow():
    # TF: tf.to_float([1]).name == "ToFloat:0", tf.to_int64([1.]).name == "ToInt64:0",
    # tf.to_int32([-1.7, 1.7]) -> [-1, 1], tf.log_sigmoid([-100., 0., 100.]) -> [-100,
    # -0.6931472, -0], tf.accumulate_n([x, x, x]), tf.scalar_mul(2., x).name == "Mul:0"
    assert df.to_float([1]).name == "ToFloat:0" and df.to_float([1]).dtype is df.float32
    assert df.to_int64([1.0]).name == "ToInt64:0" and df.to_double([1]).dtype is df.float64
    x = df.constant(X)
    assert df.scalar_mul(2.0, x).name == "Mul:0"
    ints, log_sigmoid, scaled, summed = evaluate(
        [
            df.to_int32([-1.7, 1.7]),
            df.log_sigmoid([-100.0, 0.0, 100.0]),
            df.scalar_mul(2.0, x),
            df.accumulate_n([x, x, x]),
        ]
    )
    assert_same(ints, np.int32([-1, 1]))
    # TensorFlow flushes exp(-100)'s subnormal float32 to zero; numpy keeps it.
    assert_same(log_sigmoid, np.float32([-100.0, -0.6931472, -0.0]), atol=1e-40)
    assert_same(scaled, np.float32(X) * 2)
    assert_same(summed, np.float32(X) * 3)
    with pytest.raises(ValueError, match=r"scalar_mul at .*test_extra_math_ops.py:\d+: .*0-D"):
        df.scalar_mul([1.0, 2.0], x)


def test_math_module_holds_tensorflows_names_for_the_same_functions():
    assert df.math.erf is df.erf and df.math.top_k is df.nn.top_k
    assert df.math.divide_no_nan is df.div_no_nan and df.math.reduce_sum is df.reduce_sum
    assert df.math.softplus is df.nn.softplus and df.math.in_top_k is df.nn.in_top_k
    assert all(hasattr(df.math, name) for name in df.math.__all__)


def test_new_ops_run_in_a_cond_and_a_loop():
    x = df.placeholder(df.float32, [3])
    branch = df.cond(
        df.reduce_sum(x) > 0, lambda: df.erf(x) + df.cumprod(x), lambda: df.atan2(x, x)
    )
    _, looped = df.while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, df.sinh(df.asinh(v)) + 1.0), [0, x]
    )
    value = np.float32([0.5, 1.0, 2.0])
    got_branch, got_loop = evaluate([branch, looped], {x: value})
    np.testing.assert_allclose(
        got_branch, np.float32([0.5204999, 0.8427008, 0.9953223]) + np.cumprod(value), 1e-6
    )
    np.testing.assert_allclose(got_loop, value + 3, 1e-6)

"""Checks: static answers raise when the graph is built, naming the caller's line, as in TF1;
the others are Assert or CheckNumerics ops that fail the run and leave the Session usable.

Messages and names follow TensorFlow 2.21's ``tf.compat.v1`` (graph mode) for the same
programs; each test names them.
"""

import numpy as np
import pytest
from ops_testing import evaluate

import dataflow as df

HERE = r"test_check_ops.py:\d+"


def test_value_checks_known_when_built_raise_at_once():
    # TF: tf.assert_equal(tf.constant([1, 2]), [1, 3]) raises InvalidArgumentError
    # "Condition x == y did not hold element-wise: x (Const:0) = [1 2] ..." at build time;
    # tf.assert_positive(tf.constant([1, -1])) "Condition x > 0 did not hold element-wise"
    with pytest.raises(df.errors.InvalidArgumentError, match=f"assert_equal at .*{HERE}: Cond"):
        df.assert_equal(df.constant([1, 2]), [1, 3])
    with pytest.raises(df.errors.InvalidArgumentError, match=r"x > 0 did not hold"):
        df.assert_positive(df.constant([1, -1]))
    passing = df.assert_less(df.constant([1, 2]), 3)
    assert passing.type == "Assert"


@pytest.mark.parametrize(
    "check, good, bad",
    [
        (df.assert_equal, [1.0, 2.0], [1.0, 3.0]),
        (df.assert_none_equal, [3.0, 4.0], [1.0, 4.0]),
        (df.assert_less, [0.0, 1.0], [1.0, 1.0]),
        (df.assert_less_equal, [1.0, 2.0], [2.0, 2.0]),
        (df.assert_greater, [2.0, 3.0], [1.0, 3.0]),
        (df.assert_greater_equal, [1.0, 2.0], [0.0, 2.0]),
    ],
)
def test_value_checks_fail_the_run_and_leave_the_session_usable(check, good, bad):
    # TF: a failing tf.assert_less(x, 1.0, message=...) run is an InvalidArgumentError whose
    # message holds the message, the condition and the values
    x = df.placeholder(df.float32, [2], name="x")
    guard = check(x, [1.0, 2.0], message="checked")
    with df.control_dependencies([guard]):
        out = df.identity(x)
    with df.Session() as sess:
        assert sess.run(out, {x: good}).tolist() == good
        with pytest.raises(df.errors.InvalidArgumentError, match="checked.*did not hold"):
            sess.run(out, {x: bad})
        assert sess.run(out, {x: good}).tolist() == good


def test_sign_checks_are_named_after_the_comparison_they_build():
    # TF: tf.assert_positive(x).name == "assert_positive/assert_less/Assert/AssertGuard/Merge"
    # (dataflow builds no guard: the Assert op itself)
    x = df.placeholder(df.float32, [2])
    assert df.assert_positive(x).name == "assert_positive/assert_less/Assert/Assert"
    checks = [
        df.assert_positive(x),
        df.assert_negative(-x),
        df.assert_non_negative(x),
        df.assert_non_positive(-x),
    ]
    with df.Session() as sess:
        sess.run(checks, {x: [1.0, 2.0]})
        with pytest.raises(df.errors.InvalidArgumentError, match="x > 0"):
            sess.run(checks[0], {x: [0.0, 2.0]})
        sess.run(checks[2:], {x: [0.0, 2.0]})


def test_rank_type_and_scalar_checks_are_static():
    # TF: tf.assert_rank(zeros([2, 3]), 1): ValueError "Tensor zeros:0 must have rank 1.
    # Received rank 2, shape (2, 3)"; assert_rank_at_least(x [2], 2): "must have rank at least
    # 2"; tf.assert_type(x, tf.int32): TypeError "x:0 must be of type tf.int32; got
    # tf.float32"; tf.assert_integer(x): TypeError 'Expected "x" to be integer type.'; a
    # passing one returns the NoOp ".../static_checks_determined_all_ok";
    # tf.assert_scalar(x): ValueError "Expected scalar shape for x:0, saw shape: (2,)."
    x = df.placeholder(df.float32, [2], name="x")
    with pytest.raises(
        ValueError, match=f"assert_rank at .*{HERE}: Tensor zeros:0 must have rank 1"
    ):
        df.assert_rank(df.zeros([2, 3]), 1)
    with pytest.raises(ValueError, match="must have rank at least 2.  Received rank 1"):
        df.assert_rank_at_least(x, 2)
    with pytest.raises(TypeError, match="x:0 must be of type int32; got float32"):
        df.assert_type(x, df.int32)
    with pytest.raises(TypeError, match='Expected "x" to be integer type'):
        df.assert_integer(x)
    with pytest.raises(ValueError, match=r"Expected scalar shape for x:0, saw shape: \(2,\)"):
        df.assert_scalar(x)
    assert df.assert_rank(x, 1).name.endswith("/static_checks_determined_all_ok")
    assert df.assert_type(x, df.float32).type == "NoOp"
    scalar = df.constant(1.0)
    assert df.assert_scalar(scalar) is scalar


def test_rank_check_of_an_unknown_rank_runs():
    x = df.placeholder(df.float32)
    check = df.assert_rank(x, 2)
    with df.Session() as sess:
        sess.run(check, {x: np.zeros((2, 2))})
        with pytest.raises(df.errors.InvalidArgumentError, match="must have rank"):
            sess.run(check, {x: np.zeros(3)})


def test_check_numerics_names_the_message_and_the_kind_of_value():
    # TF: tf.check_numerics(x, "bad x") on [nan, 1] fails with "bad x : Tensor had NaN values",
    # on [inf, 1] "Tensor had Inf values"; tf.verify_tensor_all_finite(x, "x finite")
    x = df.placeholder(df.float32, [2])
    checked = df.check_numerics(x, "bad x")
    verified = df.verify_tensor_all_finite(x, "x finite")
    with df.Session() as sess:
        assert sess.run(checked, {x: [1.0, 2.0]}).tolist() == [1.0, 2.0]
        with pytest.raises(df.errors.InvalidArgumentError, match="bad x : Tensor had NaN values"):
            sess.run(checked, {x: [np.nan, 1.0]})
        with pytest.raises(df.errors.InvalidArgumentError, match="x finite : Tensor had Inf"):
            sess.run(verified, {x: [np.inf, 1.0]})
    assert df.debugging.assert_all_finite is df.verify_tensor_all_finite
    assert df.debugging.assert_equal is df.assert_equal


def test_check_numerics_checks_the_gradient_that_flows_back_through_it():
    # TF: the gradient of check_numerics is check_numerics of the gradient, with the message
    # "Not a number (NaN) or infinity (Inf) values detected in gradient. " + message
    x = df.placeholder(df.float32, [2])
    weights = df.placeholder(df.float32, [2])
    (grad,) = df.gradients(df.reduce_sum(df.check_numerics(x, "forward") * weights), x)
    assert evaluate(grad, {x: [1.0, 2.0], weights: [2.0, 3.0]}).tolist() == [2.0, 3.0]
    with pytest.raises(df.errors.InvalidArgumentError, match="detected in gradient. forward"):
        evaluate(grad, {x: [1.0, 2.0], weights: [np.inf, 3.0]})


def test_add_check_numerics_ops_checks_every_float_output():
    # TF: y = placeholder; z = tf.log(y); tf.add_check_numerics_ops() adds two CheckNumerics
    # and a NoOp; running it with y = -1 fails naming "Log:0 : Log : Tensor had NaN values"; a
    # graph with tf.cond is a ValueError
    y = df.placeholder(df.float32)
    z = df.log(y)
    checks = df.add_check_numerics_ops()
    assert checks.type == "NoOp"
    with df.Session() as sess:
        assert sess.run([z, checks], {y: 1.0})[0] == 0.0
        with pytest.raises(df.errors.InvalidArgumentError, match="Log:0 : Log : Tensor had NaN"):
            sess.run([z, checks], {y: -1.0})
    df.cond(y > 0, lambda: y, lambda: -y)
    with pytest.raises(ValueError, match="not compatible with control flow"):
        df.add_check_numerics_ops()


def test_checks_inside_a_cond_and_a_loop():
    x = df.placeholder(df.float32, [])

    def checked_branch():
        with df.control_dependencies([df.assert_positive(x)]):
            return df.check_numerics(df.sqrt(x), "root")

    branch = df.cond(x > 0, checked_branch, lambda: -x)

    def body(i, v):
        with df.control_dependencies([df.assert_less(i, 5)]):
            return i + 1, df.check_numerics(v / (3.0 - v), "dividing")

    _, looped = df.while_loop(lambda i, v: i < 3, body, [0, x])
    with df.Session() as sess:
        assert sess.run(branch, {x: 4.0}) == 2.0 and sess.run(branch, {x: -4.0}) == 4.0
        np.testing.assert_allclose(sess.run(looped, {x: 1.0}), 0.2 / 2.8, rtol=1e-6)
        with pytest.raises(df.errors.InvalidArgumentError, match="dividing : Tensor had Inf"):
            sess.run(looped, {x: 3.0})

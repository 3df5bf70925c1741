"""Gradients through `cond`: Switch <-> Merge, and only the taken branch's backward ops run."""

import numpy as np
from gradient_checking import check_gradients, define_counted_identity

import dataflow as df

rng = np.random.default_rng(7)


def test_gradient_through_cond_on_a_placeholder_predicate_follows_the_taken_branch():
    for taken in (True, False):

        def make(x, y, taken=taken):
            p = df.placeholder_with_default(taken, [])
            return df.cond(p, lambda: df.sin(x) * y, lambda: df.square(x) + y * 2.0)

        check_gradients(make, [rng.normal(size=(2, 3)), rng.normal(size=(3,))])


def test_gradient_through_nested_conds():
    for outer in (True, False):
        for inner in (True, False):

            def make(x, outer=outer, inner=inner):
                p = df.placeholder_with_default(outer, [])
                q = df.placeholder_with_default(inner, [])
                return df.cond(
                    p,
                    lambda: df.cond(q, lambda: df.exp(x) * x, lambda: df.tanh(x)) * 2.0,
                    lambda: df.cond(q, lambda: x * 5.0, lambda: df.square(x)),
                )

            check_gradients(make, [rng.normal(size=(3,))])


def test_gradient_through_cond_whose_predicate_depends_on_x():
    check_gradients(
        lambda x: df.cond(df.reduce_sum(x) > 0.0, lambda: x * x, lambda: -x * 3.0),
        [rng.normal(size=(4,))],
    )


def test_gradient_of_a_branch_that_returns_an_outside_tensor_unchanged():
    def make(x, p=None):
        p = df.placeholder_with_default(False, [])
        return df.cond(p, lambda: x * 2.0, lambda: x)

    check_gradients(make, [rng.normal(size=(2,))])


def test_gradient_of_a_variable_read_inside_both_branches():
    v = df.Variable(np.array([1.0, 2.0]), name="v")
    p = df.placeholder(df.bool, [])
    y = df.cond(p, lambda: df.reduce_sum(v * 2.0), lambda: df.reduce_sum(v * v))
    (g,) = df.gradients(y, v)
    with df.Session() as session:
        session.run(v.initializer)
        np.testing.assert_allclose(session.run(g, {p: True}), [2.0, 2.0])
        np.testing.assert_allclose(session.run(g, {p: False}), [2.0, 4.0])


def test_untaken_branch_runs_no_backward_kernel():
    calls = []
    counted = define_counted_identity(calls)

    def branch(tag, scale):
        return lambda: counted(tag, x * scale)

    x = df.placeholder(df.float64, [])
    p = df.placeholder(df.bool, [])
    y = df.cond(p, branch("true", 2.0), branch("false", 3.0))
    (g,) = df.gradients(y, x)
    with df.Session() as session:
        assert session.run(g, {x: 1.0, p: True}) == 2.0
        assert calls == ["true"]
        assert session.run(g, {x: 1.0, p: False}) == 3.0
        assert calls == ["true", "false"]


# -- a Switch used on its own ----------------------------------------------------------------------
def test_gradient_through_the_untaken_output_of_a_switch_is_zero():
    # testGradientThroughSingleBranchOutsideOfContext
    x = df.constant(2.0)
    x_false, x_true = df.switch(x, df.constant(True))
    (grad_true,) = df.gradients(x_true, x)
    (grad_false,) = df.gradients(x_false, x)
    with df.Session() as session:
        assert session.run(grad_true) == 1.0
        assert session.run(grad_false) == 0.0


def test_the_gradient_of_one_switch_output_is_one_only_when_the_predicate_took_it():
    x = df.placeholder(df.float64, [2])
    p = df.placeholder(df.bool, [])
    x_false, x_true = df.switch(x, p)
    grads = df.gradients(x_false, x) + df.gradients(x_true, x)
    with df.Session() as session:
        for _ in range(10):  # whichever input of a backward Merge arrives first
            for taken in (False, True):
                got = session.run(grads, {x: [1.0, 2.0], p: taken})
                np.testing.assert_array_equal(got[0], [0.0, 0.0] if taken else [1.0, 1.0])
                np.testing.assert_array_equal(got[1], [1.0, 1.0] if taken else [0.0, 0.0])

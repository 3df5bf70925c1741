"""Random small programs with nested cond and while_loop, against a plain-Python interpreter.

The language: four scalar variables (``f0``, ``f1`` float64; ``i0``, ``i1`` int32) and two
inputs fed at run time (``x`` float64, ``n`` int32).  Statements assign an expression to a
variable, branch on a predicate (`cond`), or loop while a predicate holds, at most 0-3 times
(`while_loop`, counting either with an explicit counter variable or with
``maximum_iterations``).  Loops and branches nest two to three deep, so values are captured
from several levels out and loops run inside untaken branches.

Each program is evaluated by `evaluate` (Python floats and ints) and built as a graph by
`build`, then run with ``parallel_iterations`` 1 and 10; all three must agree exactly (float64
arithmetic is the same IEEE arithmetic in both, done in the same order).
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dataflow as df

FLOAT_VARS = ("f0", "f1")
INT_VARS = ("i0", "i1")
NAMES = FLOAT_VARS + INT_VARS
INT_LIMIT = 2**31 - 1


class Overflow(Exception):
    """A value left the range where int32 and float64 agree with Python's arithmetic."""


# -- the language ----------------------------------------------------------------------------------
# Expressions and statements are tuples: ("op", operands...).
def float_exprs(depth: int):
    leaves = st.one_of(
        st.sampled_from([("var", v) for v in FLOAT_VARS] + [("input", "x")]),
        st.sampled_from([-1.5, -0.5, 0.0, 0.25, 1.0, 2.0]).map(lambda c: ("fconst", c)),
    )
    if depth == 0:
        return leaves
    sub = float_exprs(depth - 1)
    return st.one_of(
        leaves,
        st.tuples(st.sampled_from(["fadd", "fsub"]), sub, sub),
        st.tuples(st.just("scale"), sub, st.sampled_from([-1.5, 0.5, 2.0])),
        st.tuples(st.just("tofloat"), int_exprs(depth - 1)),
    )


def int_exprs(depth: int):
    leaves = st.one_of(
        st.sampled_from([("var", v) for v in INT_VARS] + [("input", "n")]),
        st.integers(-3, 3).map(lambda c: ("iconst", c)),
    )
    if depth == 0:
        return leaves
    sub = int_exprs(depth - 1)
    return st.one_of(leaves, st.tuples(st.sampled_from(["iadd", "isub", "imin", "imax"]), sub, sub))


def predicates(depth: int):
    compare = st.one_of(
        st.tuples(st.just("flt"), float_exprs(1), float_exprs(1)),
        st.tuples(st.sampled_from(["ilt", "ieq"]), int_exprs(1), int_exprs(1)),
    )
    if depth == 0:
        return compare
    sub = predicates(depth - 1)
    return st.one_of(
        compare,
        st.tuples(st.sampled_from(["and", "or"]), sub, sub),
        st.tuples(st.just("not"), sub),
    )


def assignments():
    return st.one_of(
        st.tuples(st.just("assign"), st.sampled_from(FLOAT_VARS), float_exprs(2)),
        st.tuples(st.just("assign"), st.sampled_from(INT_VARS), int_exprs(2)),
    )


def statements(depth: int):
    if depth == 0:
        return assignments()
    block = st.lists(statements(depth - 1), min_size=1, max_size=3)
    bound = st.one_of(
        st.integers(0, 3).map(lambda c: ("iconst", c)),
        int_exprs(1).map(lambda e: ("imin", ("imax", e, ("iconst", 0)), ("iconst", 3))),
    )
    return st.one_of(
        assignments(),
        st.tuples(st.just("if"), predicates(1), block, block),
        st.tuples(st.just("while"), predicates(1), bound, block, st.booleans()),
    )


programs = st.lists(statements(3), min_size=1, max_size=4)


# -- the reference interpreter ---------------------------------------------------------------------
def _checked(value):
    if isinstance(value, int):
        if abs(value) > INT_LIMIT:
            raise Overflow
    elif not math.isfinite(value) or abs(value) > 1e300:
        raise Overflow
    return value


def evaluate_expr(e, env, inputs):
    kind = e[0]
    if kind == "var":
        return env[e[1]]
    if kind == "input":
        return inputs[e[1]]
    if kind in ("fconst", "iconst"):
        return e[1]
    if kind == "tofloat":
        return float(evaluate_expr(e[1], env, inputs))
    if kind == "scale":
        return _checked(evaluate_expr(e[1], env, inputs) * e[2])
    a, b = evaluate_expr(e[1], env, inputs), evaluate_expr(e[2], env, inputs)
    result = {
        "fadd": lambda: a + b,
        "fsub": lambda: a - b,
        "iadd": lambda: a + b,
        "isub": lambda: a - b,
        "imin": lambda: min(a, b),
        "imax": lambda: max(a, b),
    }[kind]()
    return _checked(result)


def evaluate_pred(p, env, inputs) -> bool:
    kind = p[0]
    if kind == "not":
        return not evaluate_pred(p[1], env, inputs)
    if kind in ("and", "or"):
        a, b = evaluate_pred(p[1], env, inputs), evaluate_pred(p[2], env, inputs)
        return (a and b) if kind == "and" else (a or b)
    a, b = evaluate_expr(p[1], env, inputs), evaluate_expr(p[2], env, inputs)
    return a == b if kind == "ieq" else a < b


def evaluate(program, env, inputs) -> dict:
    env = dict(env)
    for s in program:
        if s[0] == "assign":
            env[s[1]] = evaluate_expr(s[2], env, inputs)
        elif s[0] == "if":
            taken = s[2] if evaluate_pred(s[1], env, inputs) else s[3]
            env = evaluate(taken, env, inputs)
        else:
            _, pred, bound, body, _ = s
            limit = evaluate_expr(bound, env, inputs)
            trips = 0
            while trips < limit and evaluate_pred(pred, env, inputs):
                env = evaluate(body, env, inputs)
                trips += 1
    return env


# -- the graph builder -----------------------------------------------------------------------------
def build_expr(e, env, inputs):
    kind = e[0]
    if kind == "var":
        return env[e[1]]
    if kind == "input":
        return inputs[e[1]]
    if kind == "fconst":
        return df.constant(e[1], dtype=df.float64)
    if kind == "iconst":
        return df.constant(e[1], dtype=df.int32)
    if kind == "tofloat":
        return df.cast(build_expr(e[1], env, inputs), df.float64)
    if kind == "scale":
        return df.multiply(build_expr(e[1], env, inputs), df.constant(e[2], dtype=df.float64))
    a, b = build_expr(e[1], env, inputs), build_expr(e[2], env, inputs)
    op = {
        "fadd": df.add,
        "fsub": df.subtract,
        "iadd": df.add,
        "isub": df.subtract,
        "imin": df.minimum,
        "imax": df.maximum,
    }[kind]
    return op(a, b)


def build_pred(p, env, inputs):
    kind = p[0]
    if kind == "not":
        return df.logical_not(build_pred(p[1], env, inputs))
    if kind in ("and", "or"):
        op = df.logical_and if kind == "and" else df.logical_or
        return op(build_pred(p[1], env, inputs), build_pred(p[2], env, inputs))
    a, b = build_expr(p[1], env, inputs), build_expr(p[2], env, inputs)
    return df.equal(a, b) if kind == "ieq" else df.less(a, b)


def build(program, env, inputs, parallel: int, through=None) -> dict:
    """The graph of ``program``: its variables' final tensors.  ``through``, when given, is
    applied to every assigned value (a test's way to add a kernel of its own after each)."""
    env = dict(env)
    for s in program:
        if s[0] == "assign":
            value = build_expr(s[2], env, inputs)
            env[s[1]] = value if through is None else through(value)
        elif s[0] == "if":
            _, pred, then_block, else_block = s

            def branch(block, start=env):
                result = build(block, start, inputs, parallel, through)
                return tuple(result[n] for n in NAMES)

            values = df.cond(
                build_pred(pred, env, inputs),
                lambda block=then_block: branch(block),
                lambda block=else_block: branch(block),
            )
            env = dict(zip(NAMES, values))
        else:
            _, pred, bound, body, use_maximum_iterations = s
            limit = build_expr(bound, env, inputs)

            def loop_env(values):
                return dict(zip(NAMES, values))

            def run_body(values, body=body):
                result = build(body, loop_env(values), inputs, parallel, through)
                return tuple(result[n] for n in NAMES)

            start = tuple(env[n] for n in NAMES)
            if use_maximum_iterations:
                values = df.while_loop(
                    lambda *vs, pred=pred: build_pred(pred, loop_env(vs), inputs),
                    lambda *vs: run_body(vs),
                    list(start),
                    maximum_iterations=limit,
                    parallel_iterations=parallel,
                )
            else:
                _, values = df.while_loop(
                    lambda k, vs, pred=pred, limit=limit: df.logical_and(
                        df.less(k, limit), build_pred(pred, loop_env(vs), inputs)
                    ),
                    lambda k, vs: (df.add(k, 1), run_body(vs)),
                    (df.constant(0), start),
                    parallel_iterations=parallel,
                )
            env = dict(zip(NAMES, values))
    return env


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    program=programs,
    x=st.floats(-4.0, 4.0, allow_nan=False),
    n=st.integers(-3, 5),
    f1=st.sampled_from([0.0, 1.0, -2.5]),
    i1=st.integers(-2, 2),
)
def test_random_programs_match_the_reference_interpreter(program, x, n, f1, i1):
    start = {"f0": x, "f1": f1, "i0": n, "i1": i1}
    try:
        expected = evaluate(program, start, {"x": x, "n": n})
    except Overflow:
        assume(False)
    results = []
    for parallel in (1, 10):
        with df.Graph().as_default():
            xp = df.placeholder(df.float64, shape=[], name="x")
            np_ = df.placeholder(df.int32, shape=[], name="n")
            env = {
                "f0": xp,
                "f1": df.constant(f1, dtype=df.float64),
                "i0": np_,
                "i1": df.constant(i1, dtype=df.int32),
            }
            final = build(program, env, {"x": xp, "n": np_}, parallel)
            with df.Session() as sess:
                results.append(
                    sess.run(
                        {k: final[k] for k in NAMES},
                        {xp: np.float64(x), np_: np.int32(n)},
                        options=df.RunOptions(timeout_in_ms=60_000),
                    )
                )
    for result in results:
        for name in NAMES:
            assert result[name] == expected[name], (name, result, expected, program)


def test_the_reference_interpreter_bounds_loops():
    program = [
        (
            "while",
            ("ilt", ("iconst", 0), ("iconst", 1)),
            ("iconst", 3),
            [("assign", "i0", ("iadd", ("var", "i0"), ("iconst", 1)))],
            False,
        )
    ]
    assert (
        evaluate(program, {"f0": 0.0, "f1": 0.0, "i0": 0, "i1": 0}, {"x": 0.0, "n": 0})["i0"] == 3
    )


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q"])

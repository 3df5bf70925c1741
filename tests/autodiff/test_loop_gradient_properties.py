"""Random small loop programs: the gradient through `while_loop` equals the gradient of the
same program unrolled in Python (which has no loop, only ops and conds)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as df

UNARY = {"sin": df.sin, "tanh": df.tanh, "half": lambda t: t * 0.5, "square": df.square}
BINARY = {"add": df.add, "sub": df.subtract, "mul": df.multiply}


def expressions(num_vars: int, num_invariants: int, inner: bool):
    """Expression trees over the loop variables ("var", k), the invariants ("inv", k) and, in an
    inner loop's body, the inner loop's variable ("inner",)."""
    leaves = [st.tuples(st.just("var"), st.integers(0, num_vars - 1))]
    leaves.append(st.tuples(st.just("inv"), st.integers(0, num_invariants - 1)))
    if inner:
        leaves.append(st.just(("inner",)))

    def extend(children):
        return st.one_of(
            st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), children),
            st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), children, children),
        )

    return st.recursive(st.one_of(leaves), extend, max_leaves=4)


@st.composite
def programs(draw):
    num_vars = draw(st.integers(1, 3))
    num_invariants = draw(st.integers(1, 2))
    updates = []
    for _ in range(num_vars):
        kind = draw(st.sampled_from(["plain", "cond", "inner", "inner in cond"]))
        if kind == "plain":
            updates.append(("plain", draw(expressions(num_vars, num_invariants, False))))
        elif kind == "cond":
            updates.append(
                (
                    "cond",
                    draw(st.integers(0, num_vars - 1)),
                    draw(expressions(num_vars, num_invariants, False)),
                    draw(expressions(num_vars, num_invariants, False)),
                )
            )
        else:
            updates.append(
                (
                    kind,
                    draw(st.integers(0, 2)),
                    draw(st.integers(0, num_vars - 1)),
                    draw(expressions(num_vars, num_invariants, True)),
                )
            )
    return {
        "num_vars": num_vars,
        "num_invariants": num_invariants,
        "iterations": draw(st.integers(0, 4)),
        "updates": updates,
        "parallel_iterations": draw(st.sampled_from([1, 10])),
    }


def evaluate(expr, variables, invariants, inner=None):
    kind = expr[0]
    if kind == "var":
        return variables[expr[1]]
    if kind == "inv":
        return invariants[expr[1]]
    if kind == "inner":
        return inner
    if kind == "unary":
        return UNARY[expr[1]](evaluate(expr[2], variables, invariants, inner))
    a = evaluate(expr[2], variables, invariants, inner)
    b = evaluate(expr[3], variables, invariants, inner)
    return BINARY[expr[1]](a, b)


def step(program, variables, invariants, inner_loop):
    """One iteration: the new value of every variable.  ``inner_loop(count, start, body)``
    runs ``body`` ``count`` times on ``start`` (a while_loop, or a Python loop)."""
    new = []
    for update in program["updates"]:
        if update[0] == "plain":
            new.append(df.tanh(evaluate(update[1], variables, invariants)))
        elif update[0] == "cond":
            _, k, if_true, if_false = update
            new.append(
                df.cond(
                    df.reduce_sum(variables[k]) > 0.0,
                    lambda e=if_true: df.tanh(evaluate(e, variables, invariants)),
                    lambda e=if_false: df.sin(evaluate(e, variables, invariants)),
                )
            )
        else:
            kind, count, k, body = update

            def run_inner(k=k, count=count, body=body):
                return inner_loop(
                    count,
                    variables[k],
                    lambda b: df.tanh(evaluate(body, variables, invariants, inner=b)),
                )

            if kind == "inner":
                new.append(run_inner())
            else:  # the inner loop runs only in the iterations where variable k sums to > 0
                new.append(
                    df.cond(
                        df.reduce_sum(variables[k]) > 0.0, run_inner, lambda k=k: variables[k] * 0.5
                    )
                )
    return new


def build(program, unrolled: bool):
    graph = df.Graph()
    with graph.as_default():
        xs = [df.placeholder(df.float64, [2], name=f"x{k}") for k in range(program["num_vars"])]
        ws = [
            df.placeholder(df.float64, [2], name=f"w{k}") for k in range(program["num_invariants"])
        ]
        parallel = program["parallel_iterations"]
        if unrolled:
            variables = list(xs)

            def python_loop(count, start, body):
                value = start
                for _ in range(count):
                    value = body(value)
                return value

            for _ in range(program["iterations"]):
                variables = step(program, variables, ws, python_loop)
        else:

            def inner_while(count, start, body):
                return df.while_loop(
                    lambda j, b: j < count,
                    lambda j, b: (j + 1, body(b)),
                    [0, start],
                    parallel_iterations=parallel,
                )[1]

            def outer_body(i, *variables):
                return [i + 1, *step(program, list(variables), ws, inner_while)]

            results = df.while_loop(
                lambda i, *variables: i < program["iterations"],
                outer_body,
                [0, *xs],
                parallel_iterations=parallel,
            )
            variables = results[1:]
        weights = np.linspace(0.5, 1.5, 2 * len(variables)).reshape(len(variables), 2)
        loss = df.add_n([df.reduce_sum(v * w) for v, w in zip(variables, weights)])
        grads = df.gradients(loss, xs + ws)
    return graph, xs + ws, grads


@settings(max_examples=25, deadline=None)
@given(programs(), st.integers(0, 2**31 - 1))
def test_loop_gradient_equals_the_gradient_of_the_unrolled_program(program, seed):
    values = np.random.default_rng(seed).normal(size=(program["num_vars"] + 2, 2))
    results = []
    for unrolled in (False, True):
        graph, inputs, grads = build(program, unrolled)
        feed = dict(zip(inputs, values))
        fetch = [g if g is not None else inputs[0] for g in grads]
        with df.Session(graph=graph) as session:
            got = session.run(fetch, feed)
        results.append([v if g is not None else None for v, g in zip(got, grads)])
    for k, (looped, reference) in enumerate(zip(*results)):
        if reference is None:
            assert looped is None or np.all(looped == 0), f"input {k}"
            continue
        if looped is None:
            np.testing.assert_array_equal(reference, 0, err_msg=f"input {k}")
            continue
        np.testing.assert_allclose(looped, reference, rtol=1e-9, atol=1e-12, err_msg=f"input {k}")

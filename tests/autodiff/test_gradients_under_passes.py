"""Graph passes never change a gradient: the backward ops of a loop read the forward values from
stacks the forward loop fills, and every pass keeps each push ordered before the iteration
count the backward loop starts from."""

import numpy as np
import pytest
from bitwise import same_bits
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.passes import RewriterConfig, registered_passes


def config(rewrite: RewriterConfig) -> df.ConfigProto:
    return df.ConfigProto(graph_options=df.GraphOptions(rewrite_options=rewrite))


ALL_OFF = RewriterConfig(disable_meta_optimizer=True)
PIPELINES = {
    "default": RewriterConfig(),
    "none": ALL_OFF,
    **{name: RewriterConfig(optimizers=[name]) for name in registered_passes()},
}


def loop_with_a_constant_cond(x, taken_branch):
    """``v + prod(x)`` once, in the false branch of a cond whose predicate is a constant."""

    def body(i, v):
        return i + 1, df.cond(df.constant(0.0) > 0, lambda: v * 0.0, lambda: taken_branch(v))

    return df.while_loop(lambda i, v: i < 1, body, [0, df.zeros([3], df.float64)])[1]


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
@pytest.mark.parametrize("inner_loop", [False, True], ids=["ops", "inner loop"])
def test_a_cond_on_a_constant_predicate_inside_a_loop_keeps_its_saved_values(pipeline, inner_loop):
    x = df.placeholder(df.float64, [3])

    def add_product(v):
        return v + df.reduce_prod(x)

    def add_product_twice(v):
        step = lambda j, w: (j + 1, add_product(w))  # noqa: E731
        return df.while_loop(lambda j, w: j < 2, step, [0, v])[1]

    out = loop_with_a_constant_cond(x, add_product_twice if inner_loop else add_product)
    (grad,) = df.gradients(df.reduce_sum(out), x)
    with df.Session(config=config(PIPELINES[pipeline])) as sess:
        got = sess.run(grad, {x: [1.0, 2.0, 3.0]})
    times = 2 if inner_loop else 1
    np.testing.assert_array_equal(got, times * np.array([18.0, 9.0, 6.0]))


# -- the property: random programs with conds and loops inside each other ------------------------
UNARY = {"sin": df.sin, "tanh": df.tanh, "neg": df.negative, "square": df.square}
BINARY = {"add": df.add, "sub": df.subtract, "mul": df.multiply}
# Constant leaves: 1 and 0 give the arithmetic pass its exact cases (x*1, x+0).
CONSTANTS = {"one": 1.0, "zero": 0.0, "half": [0.5, -0.25]}
NUM_VARS = 2


def expressions():
    """Trees over the program's variables ("var", k), its invariants ("inv", k) and constants;
    a subtree of constants and invariants alone is what folding and hoisting rewrite."""
    leaves = st.one_of(
        st.tuples(st.just("var"), st.integers(0, NUM_VARS - 1)),
        st.tuples(st.just("inv"), st.integers(0, 1)),
        st.tuples(st.just("const"), st.sampled_from(sorted(CONSTANTS))),
    )

    def extend(children):
        return st.one_of(
            st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), children),
            st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), children, children),
        )

    return st.recursive(leaves, extend, max_leaves=4)


def blocks(depth: int):
    """A list of statements, each mapping the variables to new ones: an update of one variable,
    a cond (on the data, on a constant, or on a predicate folded from constants) or a loop,
    whose branches and body are blocks one level deeper."""
    update = st.tuples(st.just("update"), st.integers(0, NUM_VARS - 1), expressions())
    if depth == 0:
        statement = update
    else:
        inner = blocks(depth - 1)
        predicate = st.one_of(
            st.tuples(st.just("data"), st.integers(0, NUM_VARS - 1)),
            st.tuples(st.just("constant"), st.booleans()),
            st.tuples(st.just("folded"), st.booleans()),
        )
        statement = st.one_of(
            update,
            st.tuples(st.just("cond"), predicate, inner, inner),
            st.tuples(st.just("loop"), st.integers(0, 3), inner),
        )
    return st.lists(statement, min_size=1, max_size=2)


def evaluate(expr, variables, invariants):
    kind = expr[0]
    if kind == "var":
        return variables[expr[1]]
    if kind == "inv":
        return invariants[expr[1]]
    if kind == "const":
        return df.constant(CONSTANTS[expr[1]], df.float64)
    if kind == "unary":
        return UNARY[expr[1]](evaluate(expr[2], variables, invariants))
    a = evaluate(expr[2], variables, invariants)
    return BINARY[expr[1]](a, evaluate(expr[3], variables, invariants))


def run_block(block, variables, invariants):
    for statement in block:
        variables = list(variables)
        kind = statement[0]
        if kind == "update":
            _, k, expr = statement
            variables[k] = df.tanh(variables[k] + evaluate(expr, variables, invariants))
        elif kind == "cond":
            _, (pred_kind, arg), if_true, if_false = statement
            if pred_kind == "data":
                pred = df.reduce_sum(variables[arg]) > 0.0
            elif pred_kind == "constant":
                pred = df.constant(arg)
            else:
                pred = df.constant(1.0 if arg else -1.0) > df.constant(0.0)
            variables = df.cond(
                pred,
                lambda b=if_true, v=variables: run_block(b, v, invariants),
                lambda b=if_false, v=variables: run_block(b, v, invariants),
                strict=True,
            )
        else:
            _, count, body = statement
            variables = df.while_loop(
                lambda i, *v, n=count: i < n,
                lambda i, *v, b=body: [i + 1, *run_block(b, v, invariants)],
                [0, *variables],
            )[1:]
    return list(variables)


@settings(max_examples=50, deadline=None)
@given(blocks(depth=2), st.integers(0, 2**31 - 1))
def test_every_pass_alone_all_passes_and_none_give_the_same_gradients(program, seed):
    graph = df.Graph()
    with graph.as_default():
        xs = [df.placeholder(df.float64, [2], name=f"x{k}") for k in range(NUM_VARS)]
        ws = [df.placeholder(df.float64, [2], name=f"w{k}") for k in range(2)]
        results = run_block(program, xs, ws)
        loss = df.add_n([df.reduce_sum(v * (k + 1.0)) for k, v in enumerate(results)])
        grads = [g for g in df.gradients(loss, xs + ws) if g is not None]
    values = np.random.default_rng(seed).normal(size=(len(xs + ws), 2))
    feed = dict(zip(xs + ws, values))
    outcomes = {}
    for name, rewrite in PIPELINES.items():
        with df.Session(graph=graph, config=config(rewrite)) as sess:
            outcomes[name] = sess.run(grads, feed)
    reference = outcomes.pop("none")
    for name, got in outcomes.items():
        for k, (a, b) in enumerate(zip(got, reference)):
            assert same_bits(a, b), f"{name}: gradient {k} is {a}, with no pass {b}"

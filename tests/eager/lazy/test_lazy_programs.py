"""Random small programs give the same values run eagerly, recorded lazily, and computed by
numpy directly.

A program is a list of steps over a pool of float64 values of one shape (3, 3): elementwise
ops on two pool entries, a matmul, a row sum broadcast back, and a Python ``if`` on the sign of
a pool entry's mean (which materialises in the middle of the program, so later steps record
into a new run that reads the earlier values as data).  A step may also look at a value
at once (``np.array``), which materialises what was recorded so far.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as df

BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "maximum": (df.maximum, np.maximum),
    "matmul": (df.matmul, np.matmul),
}
UNARY = {
    "tanh": (df.tanh, np.tanh),
    "neg": (lambda a: -a, np.negative),
    "square": (df.square, np.square),
    "row_sum": (
        lambda a: a * 0.0 + df.reduce_sum(a, axis=1, keepdims=True),
        lambda a: a * 0.0 + a.sum(axis=1, keepdims=True),
    ),
}

steps = st.one_of(
    st.tuples(
        st.just("binary"), st.sampled_from(sorted(BINARY)), st.integers(0, 20), st.integers(0, 20)
    ),
    st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), st.integers(0, 20), st.just(0)),
    st.tuples(st.just("if"), st.just(""), st.integers(0, 20), st.integers(0, 20)),
    st.tuples(st.just("look"), st.just(""), st.integers(0, 20), st.just(0)),
)


def run(program, inputs, with_ops: bool):
    """Runs ``program`` on ``inputs``: with dataflow ops (in the mode in force) when ``with_ops``,
    else on numpy arrays."""
    pool = [df.constant(x) for x in inputs] if with_ops else list(inputs)
    looked = []
    for kind, name, i, j in program:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        if kind == "binary":
            pool.append(BINARY[name][0 if with_ops else 1](a, b))
        elif kind == "unary":
            pool.append(UNARY[name][0 if with_ops else 1](a))
        elif kind == "if":
            mean = df.reduce_mean(a) if with_ops else a.mean()
            pool.append(a - b if mean > 0 else a + b)
        else:
            looked.append(np.array(a))
    return looked + [np.asarray(x) for x in pool]


@settings(max_examples=60, deadline=None)
@given(
    program=st.lists(steps, min_size=1, max_size=12),
    seed=st.integers(0, 2**16),
)
def test_eager_and_lazy_programs_agree_with_numpy(program, seed):
    inputs = list(np.random.default_rng(seed).uniform(-1.0, 1.0, size=(2, 3, 3)))
    expected = run(program, inputs, with_ops=False)
    with df.eager_mode():
        eager = run(program, inputs, with_ops=True)
    with df.lazy_mode():
        lazy = run(program, inputs, with_ops=True)
    for want, got_eagerly, got_lazily in zip(expected, eager, lazy):
        np.testing.assert_allclose(got_eagerly, want, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(got_lazily, want, rtol=1e-9, atol=1e-12)

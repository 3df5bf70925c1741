"""Random small programs give the same values eagerly, in a graph, and in plain numpy."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import dataflow as df

# Each step: (dataflow function, numpy function) on the running value and a constant.
STEPS = {
    "add": (lambda x, c: x + c, lambda x, c: x + c),
    "mul": (lambda x, c: x * c, lambda x, c: x * c),
    "tanh": (lambda x, c: df.tanh(x), lambda x, c: np.tanh(x)),
    "relu": (lambda x, c: df.nn.relu(x - c), lambda x, c: np.maximum(x - c, 0)),
    "matmul": (lambda x, c: df.matmul(x, df.transpose(x)) * c, lambda x, c: x @ x.T * c),
    "rowsum": (
        lambda x, c: x + df.reduce_sum(x, axis=1, keepdims=True),
        lambda x, c: x + x.sum(axis=1, keepdims=True),
    ),
}


def _dataflow_program(x, steps, value_of):
    """The steps on ``x``, with a Python ``if`` on the value of the running mean (which
    ``value_of`` reads: eagerly the tensor itself, in a graph a Session run)."""
    for name, c in steps:
        x = STEPS[name][0](x, np.float32(c))
    if value_of(df.reduce_mean(x)) > 0:
        x = x * 2.0
    return df.reduce_sum(x, axis=0)


def _numpy_program(x, steps):
    for name, c in steps:
        x = STEPS[name][1](x, np.float32(c)).astype(np.float32)
    if x.mean() > 0:
        x = x * np.float32(2.0)
    return x.sum(axis=0)


programs = st.lists(
    st.tuples(st.sampled_from(sorted(STEPS)), st.floats(-1.0, 1.0, width=32)), max_size=5
)
inputs = st.lists(st.floats(-1.0, 1.0, width=32), min_size=6, max_size=6).map(
    lambda v: np.array(v, np.float32).reshape(3, 2)
)


@settings(max_examples=40, deadline=None)
@given(programs, inputs)
def test_eager_graph_and_numpy_agree(steps, x):
    expected = _numpy_program(x, steps)
    with df.eager_mode():
        eager = _dataflow_program(df.constant(x), steps, value_of=float).numpy()
    with df.Graph().as_default(), df.Session() as sess:
        graph = sess.run(_dataflow_program(df.constant(x), steps, value_of=sess.run))
    np.testing.assert_allclose(eager, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(eager, graph)

"""The code of a compiled loop's body (`dataflow.client.compiler.loops`): what runs once before the
loop (constants, the numpy scalars of invariant inputs), and values whose kind changes from
the first iteration (a fed 0-d array) to the next (an op's numpy scalar), all giving the
interpreter's bits, types and warnings."""

import itertools

import numpy as np
import pytest
from interpreter_match import NO_PASSES, assert_same_as_interpreter

import dataflow as df


def float32_nans():
    """Two NaNs of different signs and payloads: a sum of both keeps its first operand's."""
    return [
        np.frombuffer(np.uint32(bits).tobytes(), np.float32)[0] for bits in (0x7FC00001, 0xFFC00002)
    ]


def loop_source(set_mode, fetches, feed) -> str:
    set_mode("force")
    with df.Session(config=NO_PASSES) as sess:
        sess.run(fetches, feed)
        source = df.debug.compiled_source(sess, fetches)
    loop = source[source.index("# loop ") :]
    return loop[: loop.index("\n\n")]


@pytest.mark.parametrize("trips", [0, 1, 2, 5])
def test_loop_variables_keep_the_ufuncs_nan_in_the_first_iteration_and_after(mode, trips):
    """In the first iteration ``a`` is the fed 0-d array, after it a numpy scalar."""
    n = df.placeholder(df.int32, [], name="n")
    a0 = df.placeholder(df.float32, [], name="a0")
    x = df.placeholder(df.float32, [], name="x")
    _, a = df.while_loop(
        lambda i, a: i < n, lambda i, a: (i + 1, (a + x) * x - a), [df.constant(0), a0]
    )
    values = [*float32_nans(), np.float32(1.5), np.float32(np.inf), np.float32(-0.0)]
    feeds = [
        {n: np.array(trips, np.int32), a0: np.array(p), x: np.array(q)}
        for p, q in itertools.product(values, values)
    ]
    assert_same_as_interpreter(mode, [a], feeds)


def test_an_invariant_input_is_made_a_numpy_scalar_once_before_the_loop(mode):
    """``x`` (fed: a 0-d array) is compared and added, as either operand, as a numpy scalar:
    the sums keep the NaN of the ufunc's first operand."""
    n = df.placeholder(df.float32, [], name="n")
    x = df.placeholder(df.float32, [], name="x")
    fetches = df.while_loop(
        lambda i, a, b: i < n,
        lambda i, a, b: (i + 1.0, a + x, x + b),
        [df.constant(0.0), df.constant(0.0), df.constant(0.0)],
    )
    nan, other_nan = float32_nans()
    feeds = [
        {n: np.array(k, np.float32), x: np.array(v)}
        for k in (0, 1, 3, np.nan)
        for v in (nan, 2.5, other_nan, np.inf)
    ]
    assert_same_as_interpreter(mode, fetches, feeds)
    before, inside = loop_source(mode, fetches, feeds[1]).split("while True:")
    assert "_scalar = in" in before and "_scalar  # 'while/Less'" in inside


def test_constants_of_a_loop_body_are_bound_once_before_the_loop(mode):
    n = df.placeholder(df.int32, [], name="n")
    result = df.while_loop(lambda i: i < n, lambda i: i + 3, [df.constant(0)])
    feed = {n: np.array(10, np.int32)}
    assert_same_as_interpreter(mode, [result], [feed])
    before, inside = loop_source(mode, result, feed).split("while True:")
    assert "(Const)" in before and "(Const)" not in inside


@pytest.mark.parametrize("limit", [0, 1, 7])
def test_integer_loop_variables_wrap_as_the_ufunc_does_without_a_warning(mode, limit):
    """``i * 3 + 7`` overflows int8 in a few iterations: the kernel wraps it silently."""
    n = df.placeholder(df.int32, [], name="n")
    _, i = df.while_loop(
        lambda k, i: k < n,
        lambda k, i: (k + 1, i * df.constant(3, df.int8) + df.constant(7, df.int8)),
        [df.constant(0), df.constant(100, df.int8)],
    )
    assert_same_as_interpreter(mode, [i], [{n: np.array(limit, np.int32)}])

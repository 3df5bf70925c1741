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


def split_in_a_loop(x, split):
    """A loop that splits its variable in two and adds the halves' sum to a total."""

    def body(i, total):
        left, right = split(x)
        return i + 1, total + df.reduce_sum(left) * 2.0 + df.reduce_sum(right)

    return df.while_loop(lambda i, t: i < 3, body, [df.constant(0), df.constant(0.0)])[1]


@pytest.mark.parametrize(
    "split, pieces",
    [
        (lambda x: df.split(x, 2, axis=1), "[:, 0:3], x[:, 3:6]"),
        (lambda x: df.split(x, [2, -1], axis=-1), "[:, 0:2], x[:, 2:6]"),
        (lambda x: df.split(x, [1, 3], axis=0), "[0:1], x[1:4]"),
    ],
    ids=["Split", "SplitV with -1 on axis -1", "SplitV on axis 0"],
)
def test_a_split_of_static_size_is_sliced_in_place_with_the_interpreters_values(
    mode, split, pieces
):
    x = df.placeholder(df.float32, [4, 6], name="x")
    total = split_in_a_loop(x, split)
    feed = {x: np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5}
    source = assert_same_as_interpreter(mode, [total], [feed])
    body = source[source.index("# loop ") :]
    (line,) = [line for line in body.splitlines() if "(Split" in line]
    name = line.split("= (")[1].split("[")[0]
    assert f"= ({name}{pieces.replace('x[', name + '[')})" in line
    assert "else k" in line


def test_a_split_of_a_size_known_only_at_run_time_calls_its_kernel(mode):
    x = df.placeholder(df.float32, [4, None], name="x")
    total = split_in_a_loop(x, lambda x: df.split(x, 2, axis=1))
    feeds = [{x: np.ones((4, 6), np.float32)}]
    source = assert_same_as_interpreter(mode, [total], feeds)
    (line,) = [line for line in source.splitlines() if "(Split)" in line]
    assert "[:, " not in line and " = k" in line
    mode("force")
    with df.Session(config=NO_PASSES) as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="cannot be split into 2 parts"):
            sess.run(total, {x: np.ones((4, 5), np.float32)})

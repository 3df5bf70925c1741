"""Large fused chains run in blocks on several threads, with the one-thread kernel's results."""

import threading
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from bitwise import assert_bitwise_equal
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dataflow as df
from dataflow.framework import intra_op
from dataflow.framework.op_registry import _OP_DEFS, get_op_def
from dataflow.passes import blocked_elementwise as blocked

UFUNC_OPS = sorted(name for name, op_def in _OP_DEFS.items() if "ufunc" in op_def.extra)
DTYPES = [
    np.float16,
    np.float32,
    np.float64,
    np.int8,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    bool,
]


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch):
    """Blocks of 4 KiB and no size threshold: small arrays have many blocks and odd ends."""
    monkeypatch.setattr(blocked, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(blocked, "MIN_PARALLEL_ELEMENTS", 1)


@pytest.fixture
def pool(monkeypatch):
    """A pool of its own with three cores, so that helpers are granted on any machine."""
    own = intra_op.IntraOpPool(cores=3)
    monkeypatch.setattr(intra_op, "_shared_pool", own)
    return own


def kernel(step_types, operands, dtype, threads, inplace_input=-1):
    steps = [
        [t, ops, f"step{i}", f"file.py:{i}"] for i, (t, ops) in enumerate(zip(step_types, operands))
    ]
    attrs = {
        "steps": steps,
        "inplace_input": inplace_input,
        "T": df.as_dtype(dtype),
        "intra_op_threads": threads,
    }
    return get_op_def("FusedElementwise").kernel(attrs)


def values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(
            dtype
        )
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    flat = x.reshape(-1)
    with np.errstate(over="ignore"):
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e-30], dtype)
    flat[: len(specials) * 97 : 97] = specials[: len(flat[: len(specials) * 97 : 97])]
    return x


def run_both(step_types, operands, inputs, dtype, inplace_input=-1):
    """(one-thread result, blocked result), each on its own copy of the inputs."""
    one = kernel(step_types, operands, dtype, threads=1, inplace_input=inplace_input)
    many = kernel(step_types, operands, dtype, threads=2, inplace_input=inplace_input)
    with np.errstate(all="ignore"):
        expected = one(*[x.copy() for x in inputs])
        got = many(*[x.copy() for x in inputs])
    return expected, got


@pytest.mark.parametrize("op_type", UFUNC_OPS)
def test_every_elementwise_op_kind_and_dtype_gives_the_one_thread_bits(op_type, pool):
    ufunc = get_op_def(op_type).extra["ufunc"]
    rng = np.random.default_rng(7)
    operands = [[0], [-1]] if ufunc.nin == 1 else [[0, 1], [-1, 1]]
    tried = 0
    for dtype in DTYPES:
        inputs = [values(rng, dtype, (5003,)) for _ in range(ufunc.nin)]
        chain = blocked.BlockedChain(
            [(ufunc, tuple(o)) for o in operands], [], False, -1, np.dtype(dtype), 2, None
        )
        if not chain.usable:  # the op changes this dtype, or cannot take it
            continue
        granted = pool.helpers_granted
        expected, got = run_both([op_type, op_type], operands, inputs, dtype)
        assert_bitwise_equal(got, expected)
        assert pool.helpers_granted > granted
        tried += 1
    assert tried > 0


@pytest.mark.parametrize(
    "shapes",
    [
        [(10_007,), ()],  # a 0-d operand
        [(301, 67), (67,)],  # a row
        [(301, 67), (301, 1)],  # a column
        [(5, 7, 3001), (7, 1), (5, 1, 3001)],  # blocks inside the last axis
        [(2, 1, 1000), (1, 9, 1)],  # the output is bigger than every input
        [(), (4096,)],  # the first step is on a scalar only
    ],
)
def test_broadcasting_operands_are_seen_whole_by_each_block(shapes, pool):
    rng = np.random.default_rng(1)
    inputs = [values(rng, np.float64, s) for s in shapes]
    step_types = ["Mul", "Tanh", "Add", "Exp", "Sub", "Sin"]
    n = len(inputs)
    operands = [[0, 0], [-1], [-1, 1], [-1], [-1, n - 1], [-1]]
    expected, got = run_both(step_types, operands, inputs, np.float64)
    assert_bitwise_equal(got, expected)
    assert pool.helpers_granted > 0


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.T,  # F-ordered
        lambda x: x[:, ::3],  # strided rows
        lambda x: x[::2],  # every other row
    ],
    ids=["transposed", "strided_columns", "every_other_row"],
)
def test_non_contiguous_inputs_give_the_one_thread_bits(make, pool):
    rng = np.random.default_rng(2)
    x = make(values(rng, np.float32, (900, 333)))
    y = make(values(rng, np.float32, (900, 333)))
    step_types = ["Sin", "Mul", "Exp", "Tanh", "Sqrt"]
    operands = [[0], [-1, 1], [-1], [-1], [-1]]
    expected, got = run_both(step_types, operands, [x, y], np.float32)
    assert_bitwise_equal(got, expected)


@pytest.mark.parametrize("size", [1, 63, 512, 513, 4097, 100_003])
def test_sizes_that_are_not_a_multiple_of_the_block(size, pool):
    x = values(np.random.default_rng(size), np.float64, (size,))
    expected, got = run_both(["Cos", "Log1p", "Atan"], [[0], [-1], [-1]], [x], np.float64)
    assert_bitwise_equal(got, expected)


def test_a_fresh_input_is_written_in_place_as_by_the_one_thread_kernel(pool):
    x = values(np.random.default_rng(3), np.float64, (20_000,))
    many = kernel(["Exp", "Tanh"], [[0], [-1]], np.float64, threads=2, inplace_input=0)
    one = kernel(["Exp", "Tanh"], [[0], [-1]], np.float64, threads=1)
    fresh = x.copy()
    result = many(fresh)
    assert result is fresh
    assert_bitwise_equal(result, one(x))


def test_a_quiet_chain_gives_no_warning_from_any_thread(pool, recwarn):
    x = values(np.random.default_rng(4), np.float64, (50_000,))
    many = kernel(["Log", "RealDiv", "Sqrt"], [[0], [1, -1], [-1]], np.float64, threads=2)
    one = kernel(["Log", "RealDiv", "Sqrt"], [[0], [1, -1], [-1]], np.float64, threads=1)
    zeros = np.zeros_like(x)
    assert_bitwise_equal(many(x, zeros), one(x, zeros))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def warnings_of(function, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = function(*args)
    return value, [(w.category, str(w.message), w.filename, w.lineno) for w in caught]


def test_warnings_are_those_of_the_whole_arrays_in_order(pool):
    # Overflow at step 0 in the first blocks, invalid (inf - inf) at step 2 in the last ones,
    # overflow at step 2 nowhere else: the one-thread kernel warns once per step and flag.
    x = np.ones(40_000)
    x[:10] = 1e300
    x[-10:] = np.inf
    step_types = ["Mul", "Add", "Sub", "Mul"]
    operands = [[0, 0], [-1, 1], [-1, -1], [-1, 1]]
    y = np.full_like(x, 2.0)
    one = kernel(step_types, operands, np.float64, threads=1)
    many = kernel(step_types, operands, np.float64, threads=2)
    expected, expected_warnings = warnings_of(one, x, y)
    got, got_warnings = warnings_of(many, x, y)
    assert_bitwise_equal(got, expected)
    assert len(expected_warnings) == 2
    assert got_warnings == expected_warnings
    _, none = warnings_of(many, np.ones(40_000), y)
    assert none == []


def test_an_error_raised_by_numpy_names_the_first_failing_step_and_whole_shapes(pool):
    x = np.ones(40_000, np.float32)
    x[-5:] = np.float32(3e38)  # overflows at step 1, in the last block only
    row = np.full(40_000, np.float32(2.0))
    step_types = ["Abs", "Mul", "Add"]
    operands = [[0], [-1, 0], [-1, 1]]
    failures = []
    for threads in (1, 2):
        with np.errstate(over="raise"), pytest.raises(FloatingPointError) as caught:
            kernel(step_types, operands, np.float32, threads)(x, row)
        record, args = caught.value.fused_step
        failures.append((str(caught.value), record, [(a.dtype, a.shape) for a in args]))
    assert failures[0] == failures[1]
    assert failures[0][1][2] == "step1"


def test_integer_power_keeps_the_one_thread_kernel_and_its_error(pool):
    k = np.arange(-3, 30_000, dtype=np.int64)
    many = kernel(["Add", "Pow"], [[0, 1], [-1, 1]], np.int64, threads=2)
    with pytest.raises(ValueError, match="negative integer powers") as caught:
        many(k, k)
    assert caught.value.fused_step[0][2] == "step1"
    assert pool.helpers_granted == 0


def big_chain_graph():
    x = df.placeholder(df.float64, [30_000], name="x")
    y = x
    for _ in range(3):
        y = df.tanh(y * 1.5 + 0.5)
    return x, y


@pytest.mark.parametrize("threads, uses_helpers", [(1, False), (2, True)])
def test_a_session_gives_its_chains_its_intra_op_budget(threads, uses_helpers, pool):
    with df.Graph().as_default():
        x, y = big_chain_graph()
        data = np.linspace(-3, 3, 30_000)
        config = df.ConfigProto(intra_op_parallelism_threads=threads)
        with df.Session(config=config) as sess:
            value = sess.run(y, {x: data})
    assert (pool.helpers_granted > 0) is uses_helpers
    expected = data
    for _ in range(3):
        expected = np.tanh(expected * 1.5 + 0.5)
    assert_bitwise_equal(value, expected)


def test_two_chains_on_two_threads_at_once_give_their_one_thread_bits(pool):
    rng = np.random.default_rng(5)
    inputs = [values(rng, np.float64, (60_000,)) for _ in range(2)]
    one = kernel(["Exp", "Sin", "Tanh"], [[0], [-1], [-1]], np.float64, threads=1)
    many = kernel(["Exp", "Sin", "Tanh"], [[0], [-1], [-1]], np.float64, threads=3)
    results = [None, None]

    def run(i):
        with np.errstate(all="ignore"):
            results[i] = many(inputs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with np.errstate(all="ignore"):
        for i in range(2):
            assert_bitwise_equal(results[i], one(inputs[i]))


FLOAT_STEPS = ["Add", "Sub", "Mul", "RealDiv", "Maximum", "Tanh", "Exp", "Sin", "Sqrt", "Log1p"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_random_chains_give_the_one_thread_bits(data):
    dtype = data.draw(st.sampled_from([np.float32, np.float64]))
    out_shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=40))
    count = data.draw(st.integers(1, 3))
    shapes = [
        data.draw(hnp.broadcastable_shapes(out_shape, max_dims=len(out_shape)))
        for _ in range(count)
    ]
    shapes[0] = out_shape
    # a shape "broadcastable to" out_shape may widen one of its 1s (not a chain of this shape),
    # and two of them may widen the same 1 differently (not a chain at all)
    try:
        combined = np.broadcast_shapes(*shapes)
    except ValueError:
        combined = None
    assume(combined == out_shape)
    step_types, operands = [], []
    for position in range(data.draw(st.integers(1, 8))):
        op_type = data.draw(st.sampled_from(FLOAT_STEPS))
        first = -1 if position else 0
        if get_op_def(op_type).extra["ufunc"].nin == 1:
            operands.append([first])
        else:
            other = data.draw(st.integers(0, count - 1))
            operands.append(data.draw(st.permutations([first, other])))
        step_types.append(op_type)
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    inputs = [values(rng, dtype, s) for s in shapes]
    expected, got = run_both(step_types, operands, inputs, dtype)
    assert_bitwise_equal(got, expected)

"""The native tier (`dataflow.client.compiler.native`): regions and loops of scalars run as numba
machine code with the interpreter's values, dtypes, errors and deadlines, and fall back to
the Python tier, per region, where they may not."""

import json
import math
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest
from bitwise import same_bits
from hypothesis import given, settings
from hypothesis import strategies as st
from rerun import reruns_the_suite, run_suites

pytest.importorskip("numba")
pytestmark = pytest.mark.usefixtures("native_forced")

import dataflow as df  # noqa: E402
import executor  # noqa: E402
from dataflow.client import compiler  # noqa: E402
from dataflow.client.compiler import codegen, native  # noqa: E402
from dataflow.framework import errors  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
NO_PASSES = df.ConfigProto(
    graph_options=df.passes.GraphOptions(
        rewrite_options=df.passes.RewriterConfig(disable_meta_optimizer=True)
    )
)


def run(fetches, feeds=(), native_mode="force", config=NO_PASSES):
    """The results of ``fetches`` for each feed dict of ``feeds`` (one Session, one plan) in
    ``native_mode`` ("interpreted": compilation off), and the plan's compiled regions."""
    if native_mode == "interpreted":
        compiler.set_mode("off")
    else:
        compiler.set_native(native_mode)
    try:
        with df.Session(config=config) as sess:
            results = [sess.run(fetches, feed) for feed in (feeds or [None])]
            plan = next(iter(sess._plans.values()))
            regions = plan.compiled.regions if plan.compiled else []
    finally:
        compiler.set_mode("force")
        compiler.set_native("force")
    return results, regions


def natives(regions) -> list:
    return [r for r in regions if isinstance(r.function, native._Tier) and r.function.native]


def assert_same_as_interpreted(fetches, feeds=(), config=NO_PASSES):
    """Runs natively and interpreted and compares every result bit for bit, types included;
    returns the compiled regions."""
    compiled, regions = run(fetches, feeds, config=config)
    interpreted, _ = run(fetches, feeds, "interpreted", config=config)
    for got, want in zip(compiled, interpreted):
        for a, b in zip(df.nest.flatten(got), df.nest.flatten(want)):
            assert same_bits(a, b), (a, b)
    return regions


def assert_native_where_anything_is_computed(regions) -> None:
    """Every region runs natively but those of constants alone, which stay in Python."""
    computing = [r for r in regions if "computes nothing" not in native.status(r)]
    assert natives(regions) == computing, [native.status(r) for r in regions]


# -- the API -----------------------------------------------------------------------------------
def test_set_native_returns_the_previous_mode_and_refuses_an_unknown_one():
    assert compiler.set_native("auto") == "force"
    assert compiler.set_native("off") == "auto"
    with pytest.raises(ValueError, match="off"):
        compiler.set_native("fast")
    assert compiler.native_available()


def test_importing_dataflow_does_not_import_numba():
    code = "import sys, dataflow; print('numba' in sys.modules)"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPOSITORY
    )
    assert output.stdout.strip() == "False"


# -- values and dtypes --------------------------------------------------------------------------
SPECIAL_FLOATS = [0.0, -0.0, 1.0, -1.5, 0.1, 3.4e38, -3.4e38, 1e-45, np.inf, -np.inf, np.nan, 7.0]
FLOAT_DTYPES = [np.float32, np.float64]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8]


def special_values(dtype) -> list:
    if np.dtype(dtype).kind == "f":
        return [dtype(v) for v in SPECIAL_FLOATS]
    info = np.iinfo(dtype)
    return [dtype(v) for v in {0, 1, 2, 7, info.max, info.min, info.max // 3, info.min + 1}]


def every_op(x, y, dtype):
    """One output per admitted op that applies to ``dtype``."""
    outputs = [x + y, x - y, x * y, df.minimum(x, y), df.maximum(x, y), df.square(x)]
    outputs += [x < y, x <= y, x > y, x >= y, df.equal(x, y), df.not_equal(x, y)]
    outputs += [df.where(x < y, x, y)]
    if np.dtype(dtype).kind in "fi":
        outputs += [-x, df.abs(x)]
    if np.dtype(dtype).kind == "f":
        outputs += [x / y, df.sqrt(x), df.floor(x), df.ceil(x)]
    for target in (df.float32, df.float64, df.int8, df.int64, df.uint16, df.bool):
        if not (np.dtype(dtype).kind == "f" and target.is_integer):
            outputs.append(df.cast(x, target))
    return outputs


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_each_admitted_op_gives_the_interpreters_bits_and_types(dtype):
    x = df.placeholder(df.as_dtype(dtype), [])
    y = df.placeholder(df.as_dtype(dtype), [])
    values = special_values(dtype)
    feeds = [{x: a, y: b} for a in values for b in values]
    regions = assert_same_as_interpreted(every_op(x, y, dtype), feeds)
    assert natives(regions), [native.status(r) for r in regions]


def test_logical_ops_on_bools_give_the_interpreters_bits():
    p = df.placeholder(df.bool, [])
    q = df.placeholder(df.bool, [])
    outputs = [df.logical_and(p, q), df.logical_or(p, q), df.logical_xor(p, q)]
    outputs += [df.logical_not(p), df.cast(p, df.float32), df.cast(p, df.int8)]
    feeds = [{p: np.bool_(a), q: np.bool_(b)} for a in (False, True) for b in (False, True)]
    assert natives(assert_same_as_interpreted(outputs, feeds))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.uint8], ids=lambda d: np.dtype(d).name)
def test_a_narrow_integer_loop_variable_wraps_as_numpy_where_the_loop_compares_it(dtype):
    """``int8(81) * 3`` is -13: the loop ends after five trips (machine code that let the
    product overflow to 243 would never leave it)."""
    x = df.while_loop(
        lambda i, x: df.logical_and(x > 0, i < 1000),
        lambda i, x: (i + 1, x * df.constant(3, df.as_dtype(dtype))),
        [0, df.constant(1, df.as_dtype(dtype))],
    )
    (loop,) = natives(assert_same_as_interpreted(x))
    (results,), _ = run(x)
    trips, product = {np.int8: (5, -13), np.int16: (10, -6487), np.uint8: (1000, 33)}[dtype]
    assert results[0] == trips and results[1] == dtype(product)


def test_int32_overflow_wraps_as_numpy_in_a_native_loop():
    x = df.while_loop(lambda i, x: i < 40, lambda i, x: (i + 1, x * 3 + 1), [0, df.constant(1)])
    regions = assert_same_as_interpreted(x)
    (loop,) = natives(regions)
    assert "while" in loop.name
    (results,), _ = run(x)
    assert results[1].dtype == np.int32 and results[1] != 3**40  # it wrapped


def test_float32_stays_float32_and_a_0d_array_stays_an_array():
    """A ufunc of 0-d values gives a numpy scalar; a cast of a constant (a 0-d array) gives a
    0-d array, as ``astype`` does; ``where`` gives a 0-d array."""
    x = df.placeholder(df.float32, [])
    c = df.constant(2.5, df.float32)
    fetches = [x * 0.1 + c, df.cast(df.cast(c, df.float64), df.float32), df.where(x > c, x, c)]
    regions = assert_same_as_interpreted(fetches, [{x: np.float32(3.0)}])
    seen = set()
    for region in natives(regions):  # a Session returns numpy scalars: ask the regions
        values = [np.float32(3.0)] * len(region.inputs)
        results = df.nest.flatten(region.function(*values))
        expected = df.nest.flatten(region.function.python_function(*values))
        assert all(same_bits(a, b) for a, b in zip(results, expected))
        seen |= {(type(r), r.dtype) for r in results}
    assert seen == {(np.float32, np.dtype(np.float32)), (np.ndarray, np.dtype(np.float32))}


def test_a_fused_chain_runs_natively_step_by_step_with_the_interpreters_bits():
    """With the default graph passes, elementwise fusion makes the chain one
    ``FusedElementwise`` op; its steps are written out natively, one ufunc each."""
    x = df.placeholder(df.float32, [])
    y = df.sqrt(df.abs(x * 3.0 - 1.0)) / (x + 0.5)
    feeds = [{x: v} for v in special_values(np.float32)]
    regions = assert_same_as_interpreted(y, feeds, config=None)
    (region,) = natives(regions)
    assert ", step 1" in region.function.source and "np.sqrt(" in region.function.source


def test_a_float_minimum_and_maximum_break_ties_and_keep_nans_as_numpy():
    """numpy gives the second of two equal operands (-0.0 for ``minimum(0.0, -0.0)``, 0.0 the
    other way round) and a NaN where either is one; numba's own ``np.minimum`` keeps the
    first, so the native code writes the comparison out.  Fused or not, the bits agree."""
    assert native.INTEGER_ONLY_UFUNCS == frozenset()  # this numpy breaks ties that way
    x = df.placeholder(df.float32, [])
    y = df.placeholder(df.float32, [])
    values = special_values(np.float32)
    feeds = [{x: a, y: b} for a in values for b in values]
    for config in (NO_PASSES, None):
        chain = df.maximum(df.minimum(x, y) * 2.0, y) - 1.0
        regions = assert_same_as_interpreted([chain, df.minimum(y, x) < 0.5], feeds, config)
        assert natives(regions) == regions, [native.status(r) for r in regions]
        source = "".join(r.function.source for r in regions)
        assert " < " in source and " != " in source and "np.minimum" not in source


def divisors(dtype) -> list:
    """The constant divisors the native tier takes: every special value but 0 and -1."""
    return [d for d in special_values(dtype) if d != 0] + (
        [dtype(-2), dtype(-7)] if np.dtype(dtype).kind == "i" else []
    )


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_floor_division_and_remainder_by_a_constant_give_the_interpreters_bits(dtype):
    x = df.placeholder(df.as_dtype(dtype), [])
    fetches = []
    for d in divisors(dtype):
        c = df.constant(d, df.as_dtype(dtype))
        fetches += [df.floordiv(x, c), df.mod(x, c)]
    signed = np.dtype(dtype).kind == "i"
    values = special_values(dtype) + ([dtype(-1), dtype(-2), dtype(-7)] if signed else [])
    regions = assert_same_as_interpreted(fetches, [{x: v} for v in values])
    assert natives(regions) == regions, [native.status(r) for r in regions]
    source = "".join(r.function.source for r in regions)
    assert "np.remainder(" in source and "np.floor_divide(" in source


@pytest.mark.parametrize("divisor", ["minus one", "fed"])
def test_a_division_by_minus_one_or_by_a_fed_value_stays_in_python(divisor):
    """Only a constant divisor other than 0 and -1 can neither raise nor trap the machine
    (``MIN // -1``); a division by zero raises as the interpreter's does (see below)."""
    x = df.placeholder(df.int32, [])
    y = df.constant(-1) if divisor == "minus one" else df.placeholder(df.int32, [])
    feeds = {x: np.int32(-(2**31))}
    if divisor == "fed":
        feeds[y] = np.int32(-1)
    regions = assert_same_as_interpreted([df.mod(x, y) + 1, df.floordiv(x, y) * 2], [feeds])
    assert not natives(regions)
    assert any("no exact native form" in native.status(r) for r in regions)


def test_a_loop_counting_modulo_a_constant_runs_natively():
    """The parity test of a loop, ``i % 2``, is native: 2 is a constant."""
    n = df.while_loop(lambda i, n: i < 50, lambda i, n: (i + 1, n + i % 2 * i // 3), [0, 0])
    (loop,) = natives(assert_same_as_interpreted(n))
    assert "np.remainder(" in loop.function.source


# -- conds and inner loops ---------------------------------------------------------------------
def same_as_its_python_function(compiled, *arguments, identity=True) -> None:
    """Calls a native region, cond or loop and its Python function on ``arguments``: the
    same bits, the same types (scalar or 0-d array), and (``identity``) an input passed
    through is that very input.  A loop gives an equal copy of an input that came back
    unchanged through iterations: its variables live in machine code."""
    got = df.nest.flatten(compiled.function(*arguments))
    want = df.nest.flatten(compiled.function.python_function(*arguments))
    assert [type(g) for g in got] == [type(w) for w in want], (got, want)
    assert all(same_bits(g, w) for g, w in zip(got, want)), (got, want)
    assert not identity or [any(g is a for a in arguments) for g in got] == [
        any(w is a for a in arguments) for w in want
    ]


def inputs_of(compiled, fed) -> list:
    """The values a compiled loop's inputs take: each constant's own value (a 0-d array, as
    the interpreter passes it), ``fed`` for the others."""
    values = []
    for producer, _ in compiled.inputs:
        value = codegen._constant_value(compiled.nodes[producer])
        values.append(fed if value is None else value)
    return values


def test_a_cond_runs_natively_with_each_branchs_values_and_kinds():
    """Each branch gives what the interpreter's branch gives: a numpy scalar from a ufunc, a
    0-d array from a constant, the captured input itself when passed through, and the Merge's
    ``value_index`` as an ``np.int32``."""
    x = df.placeholder(df.float32, [])
    y = df.placeholder(df.float32, [])
    value = df.cond(x > y, lambda: x * 2.0, lambda: df.constant(3.0))
    passed = df.cond(x < y, lambda: x - y, lambda: y)
    fetches = [value, value.op.outputs[1], passed]
    feeds = [{x: np.float32(a), y: np.float32(b)} for a, b in [(1, 0), (0, 1), (np.nan, 0)]]
    regions = assert_same_as_interpreted(fetches, feeds)
    conds = [r for r in natives(regions) if getattr(r, "kind", None) == "cond"]
    assert len(conds) == 2, [native.status(r) for r in regions]
    for cond in conds:
        assert "if in0:" in cond.function.source and "else:" in cond.function.source
        for taken in (np.bool_(True), np.bool_(False)):
            for value in (np.float32(1.5), np.array(-2.0, np.float32)):
                same_as_its_python_function(cond, taken, *[value] * (len(cond.inputs) - 1))


def test_a_loop_with_a_cond_in_its_body_runs_natively():
    """The parity cond of the benchmark's loop is written inline, as an if/else in the
    while, each branch assigning the cond's outputs."""

    def body(i, a):
        a = df.cond(df.equal(i % 2, 0), lambda: a + df.cast(i, df.float32), lambda: a - 1.0)
        return i + 1, a

    limit = df.placeholder(df.int32, [])
    fetches = df.while_loop(lambda i, a: i < limit, body, [df.constant(0), df.constant(0.0)])
    regions = assert_same_as_interpreted(fetches, [{limit: n} for n in (0, 1, 7, 100)])
    (loop,) = [r for r in natives(regions) if getattr(r, "kind", None) == "loop"]
    assert "if v" in loop.function.source and "np.remainder(" in loop.function.source
    for n in (0, 1, 9):
        same_as_its_python_function(loop, None, *inputs_of(loop, np.int32(n)), identity=False)


def test_a_nested_loop_runs_natively_with_the_inner_while_inside_the_outer_body():
    """The inner loop's value is the outer variable itself when it runs no iteration (a 0-d
    array constant at first), a scalar once it has run: the kind each value has at run time
    travels beside it in the native code."""

    def outer_body(i, a):
        def inner_body(j, b):
            return j + 1, b + df.cast(i + j, df.float32)

        _, a = df.while_loop(lambda j, b: j < i % 3, inner_body, [df.constant(0), a])
        return i + 1, a

    limit = df.placeholder(df.int32, [])
    start = df.constant(0.5)
    fetches = df.while_loop(lambda i, a: i < limit, outer_body, [df.constant(0), start])
    regions = assert_same_as_interpreted(fetches, [{limit: n} for n in (0, 1, 2, 30)])
    (loop,) = [
        r
        for r in natives(regions)
        if getattr(r, "kind", None) == "loop" and "while True" in r.function.source
    ]
    for n in (0, 1, 2, 5):
        same_as_its_python_function(loop, None, *inputs_of(loop, np.int32(n)), identity=False)


def test_a_long_inner_loop_under_a_deadline_gives_up_its_chunk_to_python(monkeypatch):
    """With a deadline, an inner loop past `INNER_STEPS_LIMIT` steps in one chunk makes the
    call rerun in Python, which checks the clock inside it: an endless inner loop stops at
    the deadline, and the Session stays usable."""

    def outer_body(i):
        inner = df.while_loop(lambda j: j >= 0, lambda j: [j + 1 - 1], [i])
        return [inner + 1]

    endless = df.while_loop(lambda i: i < 10, outer_body, [df.constant(0)])
    with df.Session(config=NO_PASSES) as sess:
        with pytest.raises(errors.DeadlineExceededError):
            sess.run(endless, options=df.RunOptions(timeout_in_ms=300))
        plan = next(iter(sess._plans.values()))
        assert any("while True" in r.function.source for r in natives(plan.compiled.regions))
        assert sess.run(df.constant(2.0)) == 2.0
    monkeypatch.setattr(native, "INNER_STEPS_LIMIT", 5)
    counting = df.while_loop(
        lambda i, n: i < 4,
        lambda i, n: (i + 1, df.while_loop(lambda j: j < 50, lambda j: [j + 1], [n])),
        [0, 0],
    )
    (interpreted,), _ = run(counting, native_mode="interpreted")
    with df.Session(config=NO_PASSES) as sess:
        sess.run(counting)
        regions = next(iter(sess._plans.values())).compiled.regions
        (loop,) = [r.function for r in natives(regions) if "while True" in r.function.source]
        python_calls = []
        python_function = loop.python_function
        loop.python_function = lambda *a: python_calls.append(1) or python_function(*a)
        assert same_bits(sess.run(counting), interpreted)
        assert not python_calls  # no deadline: no limit
        options = df.RunOptions(timeout_in_ms=60_000)
        assert same_bits(sess.run(counting, options=options), interpreted)
        assert python_calls == [1]


# -- random programs -------------------------------------------------------------------------
BINARY = [
    lambda a, b: a + b,
    lambda a, b: a - b,
    lambda a, b: a * b,
    df.minimum,
    df.maximum,
    lambda a, b: df.where(a < b, b, a),
]
UNARY = [lambda a: -a, df.abs, df.square]


def scalar_program(draw, dtype, inputs):
    """A random straight-line program over ``inputs``; returns its values."""
    values = list(inputs)
    for _ in range(draw(st.integers(1, 12))):
        if draw(st.booleans()):
            op = draw(st.sampled_from(BINARY))
            values.append(op(draw(st.sampled_from(values)), draw(st.sampled_from(values))))
        else:
            unary = UNARY if np.dtype(dtype).kind != "u" else [df.square]
            values.append(draw(st.sampled_from(unary))(draw(st.sampled_from(values))))
    return values


@st.composite
def programs(draw):
    """(fetches, feeds): a random scalar program, or a loop that runs one each iteration."""
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.int8, np.uint8]))
    x = df.placeholder(df.as_dtype(dtype), [])
    elements = st.sampled_from(special_values(dtype))
    feeds = [{x: draw(elements)} for _ in range(8)]
    if draw(st.booleans()):
        values = scalar_program(draw, dtype, [x, df.constant(draw(elements))])
        return values[-draw(st.integers(1, 3)) :], feeds
    trips = draw(st.integers(0, 30))

    def body(i, a, b):
        values = scalar_program(draw, dtype, [a, b, df.cast(i, df.as_dtype(dtype))])
        return i + 1, values[-1], values[-2]

    return list(df.while_loop(lambda i, a, b: i < trips, body, [0, x, x * x])), feeds


@settings(max_examples=12, deadline=None)
@given(st.data())
def test_random_scalar_programs_and_loops_give_the_interpreters_bits(data):
    with df.Graph().as_default():
        fetches, feeds = data.draw(programs())
        regions = assert_same_as_interpreted(fetches, feeds)
    assert_native_where_anything_is_computed(regions)


@st.composite
def control_flow_programs(draw):
    """(fetches, feeds): a loop whose body holds a cond of random branches (one of them may
    pass a value through) and an inner loop, on random scalar programs."""
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int32, np.int64]))
    tensor_dtype = df.as_dtype(dtype)
    x = df.placeholder(tensor_dtype, [])
    trips = df.placeholder(df.int32, [])
    elements = st.sampled_from(special_values(dtype))
    feeds = [{x: draw(elements), trips: draw(st.integers(0, 5))} for _ in range(4)]
    inner_trips = draw(st.integers(0, 3))

    def branch(values):
        if draw(st.booleans()):
            return lambda: scalar_program(draw, dtype, values)[-1]
        return lambda: draw(st.sampled_from(values))

    def body(i, a, b):
        counter = df.cast(i, tensor_dtype)
        if draw(st.booleans()):
            predicate = df.equal(i % draw(st.integers(2, 3)), 0)
        else:
            predicate = a < b
        chosen = df.cond(predicate, branch([a, counter]), branch([b, counter]))

        def inner_body(j, c):
            values = scalar_program(draw, dtype, [c, chosen, df.cast(j, tensor_dtype)])
            return j + 1, values[-1]

        _, inner = df.while_loop(lambda j, c: j < inner_trips, inner_body, [i, b])
        return i + 1, chosen, inner

    return list(df.while_loop(lambda i, a, b: i < trips, body, [0, x, x * x])), feeds


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_random_loops_with_conds_and_inner_loops_give_the_interpreters_bits(data):
    with df.Graph().as_default():
        fetches, feeds = data.draw(control_flow_programs())
        regions = assert_same_as_interpreted(fetches, feeds)
    outermost = [r for r in regions if "while True" in getattr(r.function, "source", "")]
    assert outermost, [native.status(r) for r in regions]


LOOP_DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8]
CAST_TARGETS = [df.as_dtype(d) for d in LOOP_DTYPES] + [df.bool]


def mixed_program(draw, values: list, steps: int) -> list:
    """``values`` grown by ``steps`` random ops over values of several dtypes: arithmetic,
    casts, comparisons feeding ``where`` and logic, integer ``//`` and ``%`` by constants."""
    values = list(values)
    for _ in range(steps):
        a = draw(st.sampled_from(values))
        b = draw(st.sampled_from([v for v in values if v.dtype == a.dtype]))
        kind = np.dtype(a.dtype.as_numpy_dtype).kind
        choice = draw(st.sampled_from(["binary", "unary", "cast", "compare", "divide", "where"]))
        if kind == "b":
            values.append(df.logical_not(a) if choice == "unary" else df.logical_xor(a, b))
        elif choice == "binary":
            operators = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b]
            operators += [lambda a, b: a / b] if kind == "f" else [df.minimum, df.maximum]
            values.append(draw(st.sampled_from(operators))(a, b))
        elif choice == "unary":
            values.append(draw(st.sampled_from(UNARY if kind != "u" else [df.square]))(a))
        elif choice == "cast":
            target = draw(st.sampled_from(CAST_TARGETS))
            values.append(df.cast(a, df.float64 if kind == "f" and target.is_integer else target))
        elif choice == "compare":
            values.append(draw(st.sampled_from([df.less, df.greater_equal, df.equal]))(a, b))
        elif choice == "divide" and kind in "iu":
            divisor = df.constant(draw(st.sampled_from(divisors(a.dtype.as_numpy_dtype))))
            values.append(draw(st.sampled_from([df.floordiv, df.mod]))(a, divisor))
        else:
            values.append(df.where(a < b, b, a))
    return values


@st.composite
def mixed_programs(draw):
    """(fetches, feeds): a loop over two variables of random dtypes (8 and 16 bits too) whose
    body is a mixed program, with a cond and an inner loop in it or not."""
    x_dtype, y_dtype = (draw(st.sampled_from(LOOP_DTYPES)) for _ in range(2))
    x = df.placeholder(df.as_dtype(x_dtype), [])
    y = df.placeholder(df.as_dtype(y_dtype), [])
    trips = df.placeholder(df.int32, [])
    feeds = [
        {
            x: draw(st.sampled_from(special_values(x_dtype))),
            y: draw(st.sampled_from(special_values(y_dtype))),
            trips: np.int32(draw(st.integers(0, 25))),
        }
        for _ in range(4)
    ]
    nested = draw(st.booleans())

    def pick(values, like):
        return draw(st.sampled_from([v for v in values if v.dtype == like.dtype]))

    def body(i, a, b):
        values = mixed_program(draw, [a, b, df.cast(i, a.dtype), df.cast(i, b.dtype)], 8)
        next_a, next_b = pick(values, a), pick(values, b)
        if nested:
            predicates = [v for v in values if v.dtype == df.bool] or [df.equal(i % 2, 0)]
            branches = [lambda: pick(mixed_program(draw, [next_a, next_b], 3), a) for _ in range(2)]
            next_a = df.cond(draw(st.sampled_from(predicates)), *branches)
            _, next_b = df.while_loop(
                lambda j, c: j < 3,
                lambda j, c: (j + 1, pick(mixed_program(draw, [c, df.cast(j, b.dtype)], 3), b)),
                [i, next_b],
            )
        return i + 1, next_a, next_b

    return list(df.while_loop(lambda i, a, b: i < trips, body, [0, x, y])), feeds


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_random_loops_mixing_dtypes_give_the_interpreters_bits(data):
    with df.Graph().as_default():
        fetches, feeds = data.draw(mixed_programs())
        regions = assert_same_as_interpreted(fetches, feeds)
    assert_native_where_anything_is_computed(regions)


def test_a_nan_result_has_the_interpreters_sign_and_payload():
    """LLVM does not keep a NaN's sign: ``inf - inf`` on constants folds to a positive NaN where
    the machine makes a negative one, and ``a - (-b)`` may become ``a + b``.  A native call
    whose results hold a NaN is run again in Python."""
    inf = df.constant(np.inf, df.float32)
    x = df.placeholder(df.float32, [])
    y = df.placeholder(df.float32, [])
    fetches = [inf - inf, x * (inf - inf), x - (-y), (x - x) * y]
    nan = np.float32(np.nan)
    feeds = [
        {x: a, y: b} for a in (np.float32(1.0), nan, -nan, np.float32(np.inf)) for b in (nan, -nan)
    ]
    regions = assert_same_as_interpreted(fetches, feeds)
    assert natives(regions)


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_a_signed_overflow_wraps_before_the_next_op_reads_it(dtype):
    """numba's signed arithmetic promises LLVM it never wraps, which let LLVM drop the ``abs``
    of ``MAX - x``; written on unsigned operands, every op wraps as numpy's."""
    info = np.iinfo(dtype)
    x = df.placeholder(df.as_dtype(dtype), [])
    biggest = df.constant(dtype(info.max))
    fetches = [df.abs(biggest - x), (x * 3 + 1) > 0, df.abs(-x), df.square(x + biggest) < 0]
    feeds = [{x: dtype(v)} for v in (info.min, info.min + 1, -1, 0, 1, info.max)]
    regions = assert_same_as_interpreted(fetches, feeds)
    assert natives(regions)


SIGNED_DTYPES = [np.int8, np.int16, np.int32, np.int64]


def wrapping_facts(x) -> list:
    """Comparisons true of mathematical integers that numpy's wrapped arithmetic breaks at the
    ends of the range: ``x + MAX > x`` (for ``x > 0``), ``x - 1 < x`` (but at ``MIN``),
    ``x * x >= 0`` and ``x**2 >= 0`` (where the square passes the top), ``-x > 0`` exactly
    when ``x < 0`` (but at ``MIN``).  Machine code that let LLVM assume that signed
    arithmetic never wraps folds the add, subtract and multiply facts to True in a region
    and a cond, and the multiply facts in a loop (numba marks those ops so; its negation and
    square it does not mark today, and their facts pin the values all the same)."""
    dtype = x.dtype
    biggest = df.constant(dtype.max, dtype)
    return [
        df.logical_or((x + biggest) > x, x <= 0),
        (x - df.constant(1, dtype)) < x,
        (x * x) >= 0,
        df.square(x) >= 0,
        df.equal(-x > 0, x < 0),
    ]


def wrapping_structures(dtype) -> tuple[dict, tuple]:
    """``wrapping_facts`` of a fed value of ``dtype`` in a straight region, in each branch of
    a cond, and in the body of a loop: the fetches per structure, and the placeholders."""
    x = df.placeholder(df.as_dtype(dtype), [])
    p = df.placeholder(df.bool, [])
    in_cond = df.cond(
        p,
        lambda: wrapping_facts(x),
        lambda: [df.logical_not(f) for f in wrapping_facts(x)],
    )
    in_loop = df.while_loop(
        lambda i, a, *facts: i < 2,
        lambda i, a, *facts: (i + 1, a, *wrapping_facts(a)),
        [df.constant(0), x, *[df.constant(False)] * 5],
    )[2:]
    return {"region": wrapping_facts(x), "cond": in_cond, "loop": in_loop}, (x, p)


@pytest.mark.parametrize("structure", ["region", "cond", "loop"])
@pytest.mark.parametrize("dtype", SIGNED_DTYPES, ids=lambda d: np.dtype(d).name)
def test_signed_add_sub_mul_and_neg_wrap_in_native_code_as_in_numpy(dtype, structure):
    """Each fact is False at an end of the range in the interpreter, and native code gives
    the interpreter's bits for every value: the signed arithmetic is written on the unsigned
    type of the same width, whose arithmetic wraps by definition."""
    info = np.iinfo(dtype)
    fetches, (x, p) = wrapping_structures(dtype)
    square_wraps = math.isqrt(int(info.max)) + 1  # its square lies past the top
    ends = [info.min, info.min + 1, -1, 0, 1, square_wraps, info.max - 1, info.max]
    feeds = [{x: dtype(a), p: np.bool_(taken)} for a in ends for taken in (True, False)]
    regions = assert_same_as_interpreted(fetches[structure], feeds)
    assert natives(regions), [native.status(r) for r in regions]
    interpreted, _ = run(fetches[structure], feeds, "interpreted")
    for fact in range(5):
        assert not all(results[fact] for results in interpreted), fact


# -- falling back ------------------------------------------------------------------------------
def test_a_region_with_an_inexact_op_runs_in_python_with_the_right_value():
    x = df.placeholder(df.float32, [])
    y = df.tanh(x * 2.0) + 1.0
    regions = assert_same_as_interpreted(y, [{x: np.float32(0.3)}])
    assert not natives(regions)
    assert any("Tanh" in native.status(r) for r in regions), [native.status(r) for r in regions]


def test_an_input_of_an_unexpected_type_takes_the_python_function():
    x = df.placeholder(df.float32, [])
    y = x * 2.0 + 1.0
    _, regions = run(y, [{x: np.float32(1.0)}])
    (region,) = natives(regions)
    assert region.function(np.float64(1.5)) == region.function.python_function(np.float64(1.5))


def test_a_loop_that_fails_runs_in_python_and_names_the_op_and_iteration():
    """Integer division may raise, so the loop stays in Python and its error is the
    interpreter's: the same op, message and iteration."""
    zero_at_3 = df.while_loop(lambda i, s: i < 6, lambda i, s: (i + 1, s + 6 // (3 - i)), [0, 0])
    compiler.set_native("force")
    caught = []
    for mode in ("force", "interpreted"):
        with pytest.raises(errors.OpError) as error:
            run(zero_at_3, native_mode=mode)
        caught.append(error.value)
    assert caught[0].op is caught[1].op and caught[0].message == caught[1].message
    assert "iteration 3" in caught[0].message


def test_a_native_call_that_raises_is_rerun_in_python(monkeypatch):
    """Should machine code raise, the same inputs go through the Python function (a region
    is pure), which gives the interpreter's value or names the op that fails."""
    x = df.placeholder(df.float32, [])
    y = x * 2.0 + 1.0
    _, regions = run(y, [{x: np.float32(1.0)}])
    (region,) = natives(regions)

    def broken(*arguments):
        raise RuntimeError("machine code failed")

    monkeypatch.setattr(region.function, "native", broken)
    assert region.function(np.float32(4.0)) == np.float32(9.0)


def overflowing(structure: str):
    """A float64 computation that overflows, as a straight region, a cond, or a loop squaring
    ``1e20`` (its fourth square, in iteration 3, passes the top); the fetch, the feeds and the
    op that overflows."""
    x = df.placeholder(df.float64, [])
    if structure == "region":
        product = x * x
        return product + 1.0, {x: 1e200}, product.op
    if structure == "cond":
        products = []

        def square():
            products.append(x * x)
            return products[0]

        return df.cond(x > 0, square, lambda: x - 1.0), {x: 1e200}, products[0].op
    squares = []

    def body(i, a):
        squares.append(a * a)
        return i + 1, squares[0]

    fetch = df.while_loop(lambda i, a: i < 5, body, [df.constant(0), x])
    return fetch, {x: 1e20}, squares[0].op


@pytest.mark.parametrize("structure", ["region", "cond", "loop"])
def test_numpys_error_state_raises_in_every_tier(structure):
    """Under ``np.errstate(over="raise")`` an overflow is an error of the op that overflowed,
    interpreted, compiled to Python and native alike (native code notices no floating-point
    error, so the call goes to Python); under numpy's default state the native code runs and
    gives ``inf`` as numpy does."""
    fetch, feed, overflowing_op = overflowing(structure)
    with np.errstate(over="ignore"):
        regions = assert_same_as_interpreted(fetch, [feed])
        assert natives(regions), [native.status(r) for r in regions]
    for tier in ("interpreted", "off", "force"):
        with np.errstate(over="raise"), pytest.raises(errors.InvalidArgumentError) as caught:
            run(fetch, [feed], tier)
        assert caught.value.op is overflowing_op, (tier, caught.value)
        assert "overflow" in caught.value.message
        if structure == "loop":
            assert "iteration 3" in caught.value.message


def test_numpys_error_callback_is_called_for_an_overflow_in_a_native_region():
    """``np.errstate(over="call")`` calls the function given to ``np.seterrcall``, as the
    interpreter's multiply does: the call goes to Python."""
    fetch, feed, _ = overflowing("region")
    calls = []
    previous = np.seterrcall(lambda kind, flag: calls.append(kind))
    try:
        with np.errstate(over="call"):
            (results,), regions = run(fetch, [feed])
    finally:
        np.seterrcall(previous)
    assert natives(regions) and results == np.inf
    assert calls and "overflow" in calls[0]


# -- deadlines ---------------------------------------------------------------------------------
def test_a_native_loop_that_never_ends_stops_at_the_deadline():
    endless = df.while_loop(lambda i: i >= 0, lambda i: [i + 1 - 1], [df.constant(0)])
    with df.Session(config=NO_PASSES) as sess:
        with pytest.raises(errors.DeadlineExceededError) as caught:
            sess.run(endless, options=df.RunOptions(timeout_in_ms=300))
        plan = next(iter(sess._plans.values()))
        assert natives(plan.compiled.regions)
        assert "while[iter 0 of root]" in caught.value.message
        assert sess.run(df.constant(2.0)) == 2.0


def test_a_native_loop_stops_between_chunks_when_its_run_is_cancelled():
    endless = df.while_loop(lambda i: i >= 0, lambda i: [i + 1 - 1], [df.constant(0)])
    with df.Session(config=NO_PASSES) as sess:
        (loop,) = [r for r in sess._compiled_regions(endless, []) if hasattr(r, "frame_name")]
    assert loop.function.native
    context = types.SimpleNamespace(deadline=None, cancellation=executor.Cancellation())
    context.cancellation.cancel("the Session was closed")
    with pytest.raises(executor.RunCancelledError, match="Session was closed") as caught:
        loop.function(context, *inputs_of(loop, np.int32(0)))
    assert caught.value.compiled_frames == [(loop.frame_name, native.CHUNK_ITERATIONS)]


# -- when it compiles, and the cache ----------------------------------------------------------
def test_auto_mode_compiles_in_the_background_after_a_few_calls():
    n = df.placeholder(df.int32, [])
    fetches = df.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 0.5 + 1.0), [0, 2.0])
    compiler.set_native("auto")
    with df.Session(config=NO_PASSES) as sess:
        sess.run(fetches, {n: 5})
        regions = next(iter(sess._plans.values())).compiled.regions
        (tier,) = [r.function for r in regions if hasattr(r, "frame_name")]
        python_calls = []
        python_function = tier.python_function
        tier.python_function = lambda *a: python_calls.append(1) or python_function(*a)
        for runs in range(2, native.AUTO_AFTER_CALLS + 1):
            assert tier.native is None
            sess.run(fetches, {n: runs})
        tier.wait()
        assert tier.native is not None
        assert same_bits(sess.run(fetches, {n: 9}), run(fetches, [{n: 9}], "interpreted")[0][0])
    assert len(python_calls) == native.AUTO_AFTER_CALLS - 1


def test_a_new_process_loads_the_machine_code_from_the_cache(tmp_path):
    script = textwrap.dedent(
        """
        import json, numpy as np, dataflow as df
        from dataflow import compiler
        compiler.set_mode("force"); compiler.set_native("force")
        x = df.placeholder(df.float32, [])
        y = df.while_loop(lambda i, a: i < 50, lambda i, a: (i + 1, a * 0.5 + x), [0, x])
        with df.Session() as sess:
            value = sess.run(y, {x: np.float32(3.0)})
            regions = next(iter(sess._plans.values())).compiled.regions
        (loop,) = [r for r in regions if hasattr(r, "frame_name")]
        stats = loop.function.dispatcher.stats
        hits, misses = sum(stats.cache_hits.values()), sum(stats.cache_misses.values())
        print(json.dumps([hits, misses, float(value[1])]))
        """
    )
    env = dict(os.environ, DATAFLOW_CACHE_DIR=str(tmp_path), DATAFLOW_NATIVE="force")

    def counts():
        output = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=REPOSITORY,
        )
        return json.loads(output.stdout.strip().splitlines()[-1])

    first, second = counts(), counts()
    assert first[:2] == [0, 1]  # compiled
    assert second[:2] == [1, 0]  # loaded, not compiled
    assert first[2] == second[2]
    assert any(name.endswith(".py") for name in os.listdir(tmp_path / "native"))


def test_compiled_source_says_which_regions_run_natively():
    x = df.placeholder(df.float32, [])
    fast = df.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + x), [0, x])
    slow = df.exp(x * 2.0) + 1.0
    with df.Session(config=NO_PASSES) as sess:
        source = df.debug.compiled_source(sess, [fast, slow], {x: 0.0}, native=True)
    headers = [
        line for line in source.splitlines() if line.startswith("# loop") or "# region" in line
    ]
    assert any(h.startswith("# loop") and "runs native" in h for h in headers), headers
    assert any("Exp" in h and "runs Python" in h for h in headers), headers
    assert "@njit" in source and "np.add(" in source


# -- the suite's programs --------------------------------------------------------------------
@reruns_the_suite
def test_native_runs_give_the_interpreters_results_on_programs_of_the_suite(tmp_path):
    """Reruns the control-flow, loop and math tests with every region and loop that may be
    native compiled by numba at once (compile_plugin.py, native mode "force"), each run
    checked bit for bit against the same run interpreted.  A part of the suite only: numba
    takes tens of milliseconds per function, and the whole suite has thousands of regions."""
    reports = run_suites(
        os.path.join(HERE, "compile_plugin.py"),
        [
            [
                "primitives/test_control_flow_runs.py",
                "primitives/test_switch_case.py",
                "primitives/test_composites_in_control_flow.py",
                "primitives/test_cond_graph.py",
                "client/compiler/test_compiled_loops.py",
                "ops/test_math_ops.py",
            ]
        ],
        "DATAFLOW_COMPILE_REPORT",
        tmp_path,
        env={"DATAFLOW_NATIVE": "force", "DATAFLOW_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert sum(int(report) for report in reports) > 50, reports
    assert len(os.listdir(tmp_path / "cache" / "native")) > 20  # numba compiled them

"""The cheap forms of generated code (`dataflow.client.compiler.codegen`): where a line is a Python
operator instead of a kernel call, a run gives the interpreter's values, types, dtypes and
warnings bit for bit, over the special values of each dtype, whether an operand is a fed 0-d
array or a numpy scalar computed by an op."""

import itertools

import numpy as np
import pytest
from interpreter_match import NO_PASSES, assert_same_as_interpreter

import dataflow as df


def special_values(dtype) -> list:
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        nan = np.frombuffer(np.array(-1, np.int64).tobytes()[: dtype.itemsize], dtype)[0]
        return [dtype.type(v) for v in (0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan)] + [nan]
    if dtype.kind == "b":
        return [np.True_, np.False_]
    info = np.iinfo(dtype)
    return [
        dtype.type(v)
        for v in {info.min, info.min + 1, -3, -1, 0, 1, 2, 7, info.max}
        if info.min <= v <= info.max
    ]


def operand_kinds(x, y):
    """``x`` and ``y`` as fed (0-d arrays) and as an op's results (numpy scalars)."""
    as_scalar = (lambda t: df.identity(t) * 1) if x.dtype != df.bool else df.logical_not
    return [(x, y), (as_scalar(x), as_scalar(y))]


COMPARISONS = [
    (df.equal, "=="),
    (df.not_equal, "!="),
    (df.less, "<"),
    (df.less_equal, "<="),
    (df.greater, ">"),
    (df.greater_equal, ">="),
]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float32, np.float64])
@pytest.mark.parametrize(("comparison", "symbol"), COMPARISONS)
def test_a_comparison_of_scalars_is_an_operator_with_the_ufuncs_bits(
    mode, dtype, comparison, symbol
):
    x = df.placeholder(df.as_dtype(dtype), [], name="x")
    y = df.placeholder(df.as_dtype(dtype), [], name="y")
    fetches = [comparison(a, b) for a, b in operand_kinds(x, y)]
    values = special_values(dtype)
    feeds = [{x: np.array(a), y: np.array(b)} for a, b in itertools.product(values, values)]
    source = assert_same_as_interpreter(mode, fetches, feeds)
    assert f" {symbol} " in source


def test_an_equality_of_booleans_is_an_operator_with_the_ufuncs_bits(mode):
    x = df.placeholder(df.bool, [], name="x")
    y = df.placeholder(df.bool, [], name="y")
    fetches = [df.equal(a, b) for a, b in operand_kinds(x, y)]
    pairs = itertools.product([True, False], repeat=2)
    feeds = [{x: np.array(a), y: np.array(b)} for a, b in pairs]
    source = assert_same_as_interpreter(mode, fetches, feeds)
    assert " == " in source


def test_a_comparison_of_arrays_keeps_the_ufunc(mode):
    x = df.placeholder(df.float32, [2], name="x")
    fetches = [df.less(x, 1.0)]
    source = assert_same_as_interpreter(mode, fetches, [{x: np.array([0.5, np.nan], np.float32)}])
    assert " < " not in source


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("divisor", [2, 3, -2, -7, 127])
@pytest.mark.parametrize(("division", "symbol"), [(df.floormod, "%"), (df.floordiv, "//")])
def test_an_integer_floormod_or_floordiv_by_a_constant_is_an_operator(
    mode, dtype, divisor, division, symbol
):
    if np.dtype(dtype).kind == "u" and divisor < 0:
        pytest.skip("no negative unsigned divisor")
    x = df.placeholder(df.as_dtype(dtype), [], name="x")
    constant = df.constant(divisor, df.as_dtype(dtype))
    fetches = [division(a, constant) for a, _ in operand_kinds(x, x)]
    feeds = [{x: np.array(v)} for v in special_values(dtype)]
    source = assert_same_as_interpreter(mode, fetches, feeds)
    assert f" {symbol} scalar" in source


@pytest.mark.parametrize("divisor", [0, -1])
@pytest.mark.parametrize("division", [df.floormod, df.floordiv])
def test_an_integer_division_by_zero_or_minus_one_keeps_the_kernel(mode, divisor, division):
    """The kernel names a zero divisor and wraps ``MIN // -1`` silently."""
    x = df.placeholder(df.int32, [], name="x")
    quotient = division(x, df.constant(divisor, df.int32))
    feeds = [{x: np.array(v, np.int32)} for v in (-(2**31), 5)]
    if divisor == 0:
        for new_mode in ("force", "off"):
            mode(new_mode)
            with df.Session(config=NO_PASSES) as sess:
                with pytest.raises(df.errors.InvalidArgumentError, match="division by zero"):
                    sess.run(quotient, feeds[1])
        return
    source = assert_same_as_interpreter(mode, [quotient], feeds)
    assert " % " not in source and " // " not in source


def test_a_float_floormod_keeps_the_kernel_and_its_silence(mode):
    x = df.placeholder(df.float32, [], name="x")
    fetches = [df.floormod(x, df.constant(2.0))]
    source = assert_same_as_interpreter(
        mode, fetches, [{x: np.array(v, np.float32)} for v in (np.inf, -1.5, np.nan)]
    )
    assert " % " not in source


ARITHMETIC = [(lambda a, b: a + b, "+"), (lambda a, b: a - b, "-"), (lambda a, b: a * b, "*")]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize(("operation", "symbol"), ARITHMETIC)
def test_integer_arithmetic_uses_the_operator_only_where_it_cannot_overflow(
    mode, dtype, operation, symbol
):
    """numpy's scalar operators warn on overflow where the kernel wraps silently: a run that
    overflows gives the kernel's wrapped value and no warning."""
    x = df.placeholder(df.as_dtype(dtype), [], name="x")
    y = df.placeholder(df.as_dtype(dtype), [], name="y")
    fetches = [operation(a, b) for a, b in operand_kinds(x, y)]
    fetches.append(operation(x, df.constant(3, df.as_dtype(dtype))))
    values = special_values(dtype)
    feeds = [{x: np.array(a), y: np.array(b)} for a, b in itertools.product(values, values)]
    source = assert_same_as_interpreter(mode, fetches, feeds)
    assert f" {symbol} " in source and " if " in source


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("operation", "symbol"), ARITHMETIC)
def test_float_arithmetic_of_operands_of_unknown_kind_keeps_the_ufuncs_nan_bits(
    mode, dtype, operation, symbol
):
    """A fed operand is a 0-d array, whose operator would keep the other NaN: the line tests
    the operands' types and calls the kernel unless both are numpy scalars."""
    x = df.placeholder(df.as_dtype(dtype), [], name="x")
    y = df.placeholder(df.as_dtype(dtype), [], name="y")
    scalar_x, scalar_y = operand_kinds(x, y)[1]
    fetches = [operation(x, y), operation(x, scalar_y), operation(scalar_x, y)]
    fetches.append(operation(scalar_x, scalar_y))
    values = special_values(dtype)
    feeds = [{x: np.array(a), y: np.array(b)} for a, b in itertools.product(values, values)]
    source = assert_same_as_interpreter(mode, fetches, feeds)
    assert "is np_" in source


CAST_TYPES = [np.bool_, np.int8, np.int32, np.int64, np.uint8, np.float16, np.float32, np.float64]


@pytest.mark.parametrize("source_dtype", CAST_TYPES)
@pytest.mark.parametrize("target_dtype", CAST_TYPES)
def test_a_cast_of_a_numpy_scalar_converts_as_astype_and_keeps_a_0d_array(
    mode, source_dtype, target_dtype
):
    x = df.placeholder(df.as_dtype(source_dtype), [], name="x")
    as_scalar = operand_kinds(x, x)[1][0]
    target = df.as_dtype(target_dtype)
    fetches = [df.cast(x, target), df.cast(as_scalar, target)]
    feeds = [{x: np.array(v)} for v in special_values(source_dtype)]
    source = assert_same_as_interpreter(mode, fetches, feeds)
    source_kind, target_kind = np.dtype(source_dtype).kind, np.dtype(target_dtype).kind
    widening = np.can_cast(source_dtype, target_dtype, "safe")
    converts = (source_kind in "biu" and target_kind == "f") or widening
    expected = converts and source_dtype is not target_dtype  # a cast to its dtype is no op
    assert (f"np_{np.dtype(target_dtype).name}(" in source) == expected

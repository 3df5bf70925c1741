"""Elementwise math, comparisons, casts, matrix products and reductions.

Every op here broadcasts like numpy.  Binary ops take their dtype from their tensor operand and
convert Python and numpy operands to it (``x + 1`` on a float32 ``x`` stays float32); two
tensors of different dtypes are a ``TypeError``, as in TensorFlow.

Kernels return the numpy function itself wherever numpy already computes the right dtype
(``np.add`` for ``Add``), because the kernel call is on the executor's hot path.  Where numpy
would upcast (integer sums, means, ``argmax``'s ``intp``) the kernel names the dtype.  Division,
logarithms and roots run under ``np.errstate(all="ignore")``: TensorFlow gives ``inf``/``nan``
silently there and so do we.

The helpers at the top (static broadcasting, operand conversion, axis arguments) are shared by
``array_ops`` and ``nn_ops``.

Deliberate differences from TensorFlow: the axes of reductions, ``argmax``/``argmin`` and
``cumsum`` are attributes, so they must be known when the graph is built (a Python int or list,
or a constant tensor), where TensorFlow also takes a tensor computed at run time; and a repeated
or out-of-range axis is a ``ValueError`` at build time, where TensorFlow's kernel reports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import (
    Tensor,
    _user_location,
    convert_to_tensor,
    get_default_graph,
    graph_to_build_in,
    is_tensor_like,
    numpy_value_or_none,
    register_conversion_op,
)
from ..framework.op_registry import apply_op_output, define_op
from ..framework.ragged_tensor import override_for
from ..framework.tensor_shape import TensorShape
from .static_values import known_int_value

__all__ = [
    "abs",
    "add",
    "add_n",
    "argmax",
    "argmin",
    "cast",
    "ceil",
    "clip_by_value",
    "cos",
    "cumsum",
    "divide",
    "equal",
    "exp",
    "floor",
    "floordiv",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "log",
    "log1p",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "not_equal",
    "pow",
    "realdiv",
    "reduce_all",
    "reduce_any",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
    "rsqrt",
    "sigmoid",
    "sign",
    "sin",
    "sparse_matmul",
    "sqrt",
    "square",
    "squared_difference",
    "subtract",
    "tan",
    "tanh",
    "truediv",
    "where",
    "where_v2",
]

FLOAT_TYPES = frozenset({_dtypes.float16, _dtypes.float32, _dtypes.float64})
INT_TYPES = frozenset({_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8})
NUMERIC_TYPES = FLOAT_TYPES | INT_TYPES
BOOL_TYPES = frozenset({_dtypes.bool})
NUMERIC_OR_BOOL_TYPES = NUMERIC_TYPES | BOOL_TYPES
COMPLEX_TYPES = frozenset({_dtypes.complex64, _dtypes.complex128})
# The types of ops TensorFlow also registers for complex numbers (arithmetic, sums, products).
ARITHMETIC_TYPES = NUMERIC_TYPES | COMPLEX_TYPES
INEXACT_TYPES = FLOAT_TYPES | COMPLEX_TYPES
EQUALITY_TYPES = NUMERIC_OR_BOOL_TYPES | COMPLEX_TYPES | {_dtypes.string}
INDEX_TYPES = frozenset({_dtypes.int32, _dtypes.int64})
# TensorFlow registers no unsigned kernels for sign changes and powers, and only the wide
# integers for SquaredDifference.
SIGNED_TYPES = NUMERIC_TYPES - {_dtypes.uint8}
SQUARED_DIFFERENCE_TYPES = FLOAT_TYPES | INDEX_TYPES


# -- helpers shared by the op modules --------------------------------------------------------------
def check_dtype(dtype: _dtypes.DType, allowed: frozenset, what: str) -> None:
    """Raises ``TypeError`` unless ``dtype`` is in ``allowed``."""
    if dtype not in allowed:
        names = ", ".join(sorted(d.name for d in allowed))
        raise TypeError(f"{what} has dtype {dtype.name}, which is not one of: {names}")


def check_same_dtype(tensors: Sequence[Tensor], names: Sequence[str], op_type: str) -> None:
    """Raises ``TypeError`` (worded like TensorFlow's) unless all ``tensors`` share a dtype."""
    first = tensors[0]
    for t, arg in zip(tensors[1:], names[1:]):
        if t.dtype is not first.dtype:
            raise TypeError(
                f"Input '{arg}' of '{op_type}' Op has type {t.dtype.name} that does not match "
                f"type {first.dtype.name} of argument '{names[0]}'."
            )


def broadcast_shape(a: TensorShape, b: TensorShape) -> TensorShape:
    """The static shape of ``a`` and ``b`` broadcast together; ``ValueError`` if they cannot be.

    An unknown dimension against a known one ``d != 1`` is ``d`` (it must be ``d`` or 1 at run
    time); against 1 or another unknown it stays unknown.
    """
    if a.ndims is None or b.ndims is None:
        return TensorShape(None)
    da, db = a.as_list(), b.as_list()
    if len(da) < len(db):
        da, db = db, da
    db = [1] * (len(da) - len(db)) + db
    dims = []
    for x, y in zip(da, db):
        if x == y or y == 1:
            dims.append(x)
        elif x == 1:
            dims.append(y)
        elif x is None:
            dims.append(y)
        elif y is None:
            dims.append(x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    return TensorShape(dims)


def graph_of(values):
    """The graph of the first tensor-like value in ``values``, else the default graph; but
    always the default graph when it captures the tensors of other graphs (a function being
    traced, whose ops must be its own even when they read a closure's tensors)."""
    for v in values:
        if isinstance(v, Tensor):
            return graph_to_build_in(v.graph)
        if is_tensor_like(v):
            return graph_to_build_in(convert_to_tensor(v).graph)
    return get_default_graph()


def convert_all(values: Sequence, names: Sequence[str], dtype=None) -> list[Tensor]:
    """Converts the non-tensor ``values`` to tensors of one dtype: ``dtype`` if given, else that
    of the first tensor-like value, else that of the first value.  Must run inside the graph
    the tensors belong to."""
    tensors: list = [None] * len(values)
    for i, v in enumerate(values):
        if isinstance(v, Tensor) or is_tensor_like(v):
            # Tensors keep their dtype: a mismatch is the op's TypeError, not a conversion's.
            tensors[i] = convert_to_tensor(v, name=names[i])
            if dtype is None:
                dtype = tensors[i].dtype
    for i, v in enumerate(values):
        if tensors[i] is None:
            tensors[i] = convert_to_tensor(v, dtype=dtype, name=names[i])
            if dtype is None:
                dtype = tensors[i].dtype
    return tensors


def convert_in_order(values: Sequence, names: Sequence[str]) -> list[Tensor]:
    """Converts the inputs of an op whose inputs share one dtype, as TensorFlow does: in order,
    each non-tensor to the dtype of the inputs before it, the first one to its own default
    dtype.  So ``add(x, 1)`` on a float32 ``x`` is float32, while ``add(1, x)`` makes an int32
    constant and is a ``TypeError`` (the operators convert the Python operand first:
    ``1 + x`` works)."""
    tensors: list[Tensor] = []
    dtype = None
    for v, name in zip(values, names):
        if isinstance(v, Tensor) or is_tensor_like(v):
            # Tensors keep their dtype: a mismatch is the op's TypeError, not a conversion's.
            t = convert_to_tensor(v, name=name)
        else:
            try:
                t = convert_to_tensor(v, dtype=dtype, name=name)
            except TypeError:
                raise TypeError(
                    f"Expected {dtype.name} passed to parameter '{name}', got {v!r} of type "
                    f"'{type(v).__name__}' instead."
                ) from None
        if dtype is None:
            dtype = t.dtype
        tensors.append(t)
    return tensors


def static_axis(axis, what: str = "axis"):
    """An axis argument as a Python ``int`` or ``tuple`` of ints (``None`` stays ``None``).

    Accepts ints, sequences and constant tensors; a tensor computed at run time is a
    ``ValueError``, since the axes must be attributes of the op.
    """
    if axis is None:
        return None
    if isinstance(axis, Tensor) or is_tensor_like(axis):
        t = convert_to_tensor(axis)
        value = numpy_value_or_none(t)
        if value is None:
            value = known_int_value(t)
        if value is None:
            raise ValueError(
                f"{what} must be known when the graph is built (a Python int, a list of ints or "
                f"a constant tensor), but '{t.name}' is only computed at run time"
            )
        axis = value
    array = np.asarray(axis)
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{what} must be an int or a list of ints, got {axis!r}")
    if array.ndim == 0:
        return int(array)
    if array.ndim == 1:
        return tuple(int(a) for a in array)
    raise ValueError(f"{what} must be an int or a list of ints, got {axis!r}")


def normalize_axis(axis: int, rank: Optional[int], what: str = "axis") -> int:
    """``axis`` in ``[0, rank)``; unchanged when the rank is unknown."""
    if rank is None:
        return axis
    if not -rank <= axis < rank:
        raise ValueError(
            f"{what} {axis} is out of range for a tensor of rank {rank} "
            f"(expected in [{-rank}, {rank}))"
        )
    return axis % rank


def _ufunc_kernel(fn):
    return lambda attrs: fn


def _quiet(fn):
    """``fn`` with numpy's floating-point warnings off (TensorFlow is silent on inf/nan)."""

    def quiet(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    quiet.ufunc = fn
    return quiet


# What graph passes may know about an elementwise op (`OpDef.extra`, see `dataflow.passes`):
#   "ufunc": the kernel is this numpy ufunc called on the inputs (with "quiet": under
#   np.errstate(all="ignore")), so it can write into a buffer with out= and returns a fresh
#   array; "identity": {"left"/"right": v}: v op x == x (x op v == x) bit for bit, for every x
#   (floats: x + -0.0 == x, but x + 0.0 turns -0.0 into 0.0); "involution": op(op(x)) == x;
#   "annihilator": x op v == v for integers (for floats NaN, inf and signed zeros differ).
# What the native tier may write for an op that is not a ufunc (`dataflow.client.compiler.native`):
#   "native": (op, constants) -> (template, result) or None, ``constants`` holding per input
#   its value when the native code has it as a constant (else None), ``template`` an expression
#   over the inputs ``{0}``, ``{1}``... (numpy's functions as ``np.``) that numba computes
#   exactly as the kernel does on 0-d values, and ``result`` what the kernel returns then:
#   "scalar" (a numpy scalar), "array" (a 0-d array) or "like 0" (the kind of its first input);
#   None where it cannot.
_ALGEBRA = {
    "Add": {"identity": {"left": -0.0, "right": -0.0}},
    "Sub": {"identity": {"right": 0.0}},
    "Mul": {"identity": {"left": 1, "right": 1}, "annihilator": 0},
    "RealDiv": {"identity": {"right": 1}},
    "Neg": {"involution": True},
    "LogicalNot": {"involution": True},
}


def _integer_division_native(ufunc: np.ufunc):
    """The native template of an integer floor division or remainder by a constant divisor
    other than 0 and -1, which cannot raise: numba's ``floor_divide``/``remainder`` give numpy's
    bits for every integer dtype and sign, but a zero divisor is not an error there, and
    ``MIN // -1`` traps the machine.  Float operands keep Python (``_floordiv`` floors a true
    division, which numba need not round alike)."""

    def native(op, constants):
        divisor = constants[1]
        if divisor is None or divisor.dtype.kind not in "iu" or divisor.ndim != 0:
            return None
        if divisor == 0 or (divisor.dtype.kind == "i" and divisor == -1):
            return None
        return f"np.{ufunc.__name__}({{0}}, {{1}})", "scalar"

    return native


_NATIVE = {
    "FloorDiv": _integer_division_native(np.floor_divide),
    "FloorMod": _integer_division_native(np.remainder),
}


def _elementwise_extra(op_type: str, fn) -> dict:
    extra = dict(_ALGEBRA.get(op_type, {}))
    if op_type in _NATIVE:
        extra["native"] = _NATIVE[op_type]
    if isinstance(fn, np.ufunc):
        extra["ufunc"] = fn
    elif isinstance(getattr(fn, "ufunc", None), np.ufunc):
        extra["ufunc"] = fn.ufunc
        extra["quiet"] = True
    return extra


# -- binary elementwise ops ------------------------------------------------------------------------
def _infer_binary(allowed: frozenset, out_dtype: Optional[_dtypes.DType] = None):
    def infer(op):
        x, y = op.inputs
        check_same_dtype((x, y), ("x", "y"), op.type)
        check_dtype(x.dtype, allowed, f"Input 'x' of '{op.type}'")
        return [(out_dtype or x.dtype, broadcast_shape(x.shape, y.shape))]

    return infer


def _check_integer_divisor(y) -> None:
    if y.dtype.kind in "iu" and not np.all(y):
        raise InvalidArgumentError(None, None, "Integer division by zero")


def _floordiv(x, y):
    _check_integer_divisor(y)
    with np.errstate(all="ignore"):
        if np.result_type(x, y).kind == "f":
            # TensorFlow floors the quotient: 1.0 // 0.1 is floor(10.0) = 10 and -5.0 // inf is
            # -0.0, where numpy's floor_divide (Python's //) gives 9 and -1.
            return np.floor(np.true_divide(x, y))
        return np.floor_divide(x, y)


def _floormod(x, y):
    _check_integer_divisor(y)
    with np.errstate(all="ignore"):
        return np.mod(x, y)


def _squared_difference(x, y):
    d = np.subtract(x, y)
    return np.multiply(d, d)


_BINARY_OPS = [
    # (op type, allowed input dtypes, output dtype or None for the input dtype, kernel)
    ("Add", ARITHMETIC_TYPES, None, np.add),
    ("Sub", ARITHMETIC_TYPES, None, np.subtract),
    ("Mul", ARITHMETIC_TYPES, None, np.multiply),
    ("RealDiv", INEXACT_TYPES, None, _quiet(np.true_divide)),
    ("FloorDiv", NUMERIC_TYPES, None, _floordiv),
    ("FloorMod", NUMERIC_TYPES, None, _floormod),
    ("Pow", SIGNED_TYPES | COMPLEX_TYPES, None, _quiet(np.power)),
    ("Minimum", NUMERIC_TYPES, None, np.minimum),
    ("Maximum", NUMERIC_TYPES, None, np.maximum),
    ("SquaredDifference", SQUARED_DIFFERENCE_TYPES, None, _squared_difference),
    ("Equal", EQUALITY_TYPES, _dtypes.bool, np.equal),
    ("NotEqual", EQUALITY_TYPES, _dtypes.bool, np.not_equal),
    ("Less", NUMERIC_TYPES, _dtypes.bool, np.less),
    ("LessEqual", NUMERIC_TYPES, _dtypes.bool, np.less_equal),
    ("Greater", NUMERIC_TYPES, _dtypes.bool, np.greater),
    ("GreaterEqual", NUMERIC_TYPES, _dtypes.bool, np.greater_equal),
    ("LogicalAnd", BOOL_TYPES, None, np.logical_and),
    ("LogicalOr", BOOL_TYPES, None, np.logical_or),
    ("LogicalXor", BOOL_TYPES, None, np.logical_xor),
]
for _type, _allowed, _out, _fn in _BINARY_OPS:
    define_op(
        _type,
        _infer_binary(_allowed, _out),
        _ufunc_kernel(_fn),
        extra=_elementwise_extra(_type, _fn),
    )


def binary_op(op_type: str, x, y, name: Optional[str]) -> Tensor:
    """Creates the binary op ``op_type``; the op is named ``name``.

    When an operand needs converting, its constant is created inside a name scope of the op's
    name, as ``add/y`` for ``x + 1`` in TensorFlow; see `convert_in_order` for its dtype.
    """
    if isinstance(x, Tensor) and isinstance(y, Tensor):
        return apply_op_output(op_type, (x, y), None, name)
    graph = graph_of((x, y))
    if graph._eager:  # no scope to open: eager ops are not named uniquely
        try:
            x, y = convert_in_order((x, y), ("x", "y"))
        except TypeError as e:
            raise TypeError(f"{op_type} op '{name}' at {_user_location()}: {e}") from None
        return apply_op_output(op_type, (x, y), None, name)
    with graph.as_default(), graph.name_scope(name) as scope:
        try:
            x, y = convert_in_order((x, y), ("x", "y"))
        except TypeError as e:
            raise TypeError(f"{op_type} op '{scope[:-1]}' at {_user_location()}: {e}") from None
        return apply_op_output(op_type, (x, y), None, scope)


def add(x, y, name: Optional[str] = None) -> Tensor:
    """``x + y`` elementwise."""
    return binary_op("Add", x, y, name or "Add")


def subtract(x, y, name: Optional[str] = None) -> Tensor:
    """``x - y`` elementwise."""
    return binary_op("Sub", x, y, name or "Sub")


def multiply(x, y, name: Optional[str] = None) -> Tensor:
    """``x * y`` elementwise."""
    return binary_op("Mul", x, y, name or "Mul")


def realdiv(x, y, name: Optional[str] = None) -> Tensor:
    """``x / y`` for floating-point tensors (the ``RealDiv`` op; integers are a TypeError here,
    use `truediv`)."""
    return binary_op("RealDiv", x, y, name or "RealDiv")


# TensorFlow's true division casts integers first: small ones to float32, wide ones to float64.
_TRUEDIV_DTYPE = {
    _dtypes.uint8: _dtypes.float32,
    _dtypes.int8: _dtypes.float32,
    _dtypes.int16: _dtypes.float32,
    _dtypes.int32: _dtypes.float64,
    _dtypes.int64: _dtypes.float64,
}


def truediv(x, y, name: Optional[str] = None) -> Tensor:
    """``x / y`` with Python 3 semantics: integer operands are cast to float first (int8/int16/
    uint8 to float32, int32/int64 to float64), floating ones divide as they are."""
    graph = graph_of((x, y))
    with graph.as_default(), graph.name_scope(name or "truediv") as scope:
        x, y = convert_in_order((x, y), ("x", "y"))
        check_same_dtype((x, y), ("x", "y"), "truediv")
        float_dtype = _TRUEDIV_DTYPE.get(x.dtype)
        if float_dtype is not None:
            x, y = cast(x, float_dtype), cast(y, float_dtype)
        elif x.dtype not in INEXACT_TYPES:
            raise TypeError(f"Invalid dtype {x.dtype.name} for division")
        return apply_op_output("RealDiv", (x, y), None, scope)


def divide(x, y, name: Optional[str] = None) -> Tensor:
    """``x / y``: `truediv`, except that without a ``name`` it is the ``/`` operator, so a
    Python ``x`` takes the dtype of a tensor ``y`` (``divide(1, t)`` works, ``truediv(1, t)`` on
    a float ``t`` is a TypeError), as in TensorFlow."""
    if name is None and isinstance(y, Tensor) and not (isinstance(x, Tensor) or is_tensor_like(x)):
        return y.__rtruediv__(x)
    return truediv(x, y, name=name)


def floordiv(x, y, name: Optional[str] = None) -> Tensor:
    """``x // y`` rounding toward negative infinity, like Python; integer division by zero is a
    run-time error."""
    return binary_op("FloorDiv", x, y, name or "floordiv")


def mod(x, y, name: Optional[str] = None) -> Tensor:
    """``x % y`` with the sign of ``y``, like Python (TensorFlow's ``floormod``)."""
    return binary_op("FloorMod", x, y, name or "FloorMod")


def pow(x, y, name: Optional[str] = None) -> Tensor:  # noqa: A001 - mirrors tf.pow
    """``x ** y`` elementwise; integers to negative integer powers fail at run time."""
    return binary_op("Pow", x, y, name or "Pow")


def minimum(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise minimum of ``x`` and ``y``, with broadcasting."""
    return binary_op("Minimum", x, y, name or "Minimum")


def maximum(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise maximum of ``x`` and ``y``, with broadcasting."""
    return binary_op("Maximum", x, y, name or "Maximum")


def squared_difference(x, y, name: Optional[str] = None) -> Tensor:
    """``(x - y) ** 2`` elementwise."""
    return binary_op("SquaredDifference", x, y, name or "SquaredDifference")


def equal(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise ``x == y``, with broadcasting: a bool tensor."""
    return binary_op("Equal", x, y, name or "Equal")


def not_equal(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise ``x != y``, with broadcasting: a bool tensor."""
    return binary_op("NotEqual", x, y, name or "NotEqual")


def less(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise ``x < y``, with broadcasting: a bool tensor."""
    return binary_op("Less", x, y, name or "Less")


def less_equal(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise ``x <= y``, with broadcasting: a bool tensor."""
    return binary_op("LessEqual", x, y, name or "LessEqual")


def greater(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise ``x > y``, with broadcasting: a bool tensor."""
    return binary_op("Greater", x, y, name or "Greater")


def greater_equal(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise ``x >= y``, with broadcasting: a bool tensor."""
    return binary_op("GreaterEqual", x, y, name or "GreaterEqual")


def logical_and(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise and of two bool tensors, with broadcasting."""
    return binary_op("LogicalAnd", x, y, name or "LogicalAnd")


def logical_or(x, y, name: Optional[str] = None) -> Tensor:
    """Elementwise or of two bool tensors, with broadcasting."""
    return binary_op("LogicalOr", x, y, name or "LogicalOr")


def logical_xor(x, y, name: Optional[str] = "LogicalXor") -> Tensor:
    """Elementwise exclusive or of two bool tensors (one op here; TensorFlow composes it)."""
    return binary_op("LogicalXor", x, y, name or "LogicalXor")


# -- unary elementwise ops -------------------------------------------------------------------------
def _infer_unary(allowed: frozenset):
    def infer(op):
        (x,) = op.inputs
        check_dtype(x.dtype, allowed, f"Input 'x' of '{op.type}'")
        return [(x.dtype, x.shape)]

    return infer


def _rsqrt(x):
    with np.errstate(all="ignore"):
        return np.reciprocal(np.sqrt(x))


def _sigmoid(x):
    # exp only of -|x|: no overflow, and full relative precision in the negative tail.
    z = np.exp(-np.abs(x))
    r = 1 / (1 + z)
    return np.where(x >= 0, r, z * r)


_UNARY_OPS = [
    ("Neg", SIGNED_TYPES | COMPLEX_TYPES, np.negative),
    ("Abs", SIGNED_TYPES, np.abs),
    ("Sign", SIGNED_TYPES | COMPLEX_TYPES, np.sign),
    ("Square", ARITHMETIC_TYPES, np.square),
    ("Sqrt", INEXACT_TYPES, _quiet(np.sqrt)),
    ("Rsqrt", INEXACT_TYPES, _rsqrt),
    ("Exp", INEXACT_TYPES, _quiet(np.exp)),
    ("Log", INEXACT_TYPES, _quiet(np.log)),
    ("Log1p", INEXACT_TYPES, _quiet(np.log1p)),
    ("Sin", INEXACT_TYPES, np.sin),
    ("Cos", INEXACT_TYPES, np.cos),
    ("Tan", INEXACT_TYPES, np.tan),
    ("Tanh", INEXACT_TYPES, np.tanh),
    ("Sigmoid", FLOAT_TYPES, _sigmoid),
    ("LogicalNot", BOOL_TYPES, np.logical_not),
    ("Floor", FLOAT_TYPES, np.floor),
    ("Ceil", FLOAT_TYPES, np.ceil),
]
for _type, _allowed, _fn in _UNARY_OPS:
    define_op(
        _type, _infer_unary(_allowed), _ufunc_kernel(_fn), extra=_elementwise_extra(_type, _fn)
    )


def unary_op(op_type: str, x, name: Optional[str]) -> Tensor:
    return apply_op_output(op_type, (x,), None, name or op_type)


def negative(x, name: Optional[str] = None) -> Tensor:
    """``-x`` elementwise."""
    return unary_op("Neg", x, name)


def abs(x, name: Optional[str] = None) -> Tensor:  # noqa: A001 - mirrors tf.abs
    """``|x|`` elementwise; for a complex tensor the modulus, a real tensor (``ComplexAbs``)."""
    if getattr(x, "dtype", None) in COMPLEX_TYPES:
        return apply_op_output("ComplexAbs", (x,), None, name or "ComplexAbs")
    return unary_op("Abs", x, name)


def sign(x, name: Optional[str] = None) -> Tensor:
    """``-1``, ``0`` or ``1`` elementwise, as ``x`` is negative, zero or positive; for a complex
    ``x``, ``x / |x|`` (0 where ``x`` is 0), composed as TensorFlow does so that it has a
    gradient."""
    if getattr(x, "dtype", None) in COMPLEX_TYPES:
        return _complex_sign(x, name)
    return unary_op("Sign", x, name)


# The sign of a complex tensor is composed of ops of other families; `complex_ops`, which sits
# above this module, registers it.
_complex_sign: Optional[Callable] = None


def register_complex_sign(fn: Callable) -> None:
    """Makes ``fn(x, name)`` what `sign` does for a complex ``x``."""
    global _complex_sign
    _complex_sign = fn


def square(x, name: Optional[str] = None) -> Tensor:
    """``x * x`` elementwise."""
    return unary_op("Square", x, name)


def sqrt(x, name: Optional[str] = None) -> Tensor:
    """Square root elementwise; negative inputs give ``nan``, silently."""
    return unary_op("Sqrt", x, name)


def rsqrt(x, name: Optional[str] = None) -> Tensor:
    """``1 / sqrt(x)`` elementwise."""
    return unary_op("Rsqrt", x, name)


def exp(x, name: Optional[str] = None) -> Tensor:
    """``e ** x`` elementwise; overflow gives ``inf``, silently."""
    return unary_op("Exp", x, name)


def log(x, name: Optional[str] = None) -> Tensor:
    """Natural logarithm; ``log(0)`` is ``-inf`` and negative inputs give ``nan``, silently."""
    return unary_op("Log", x, name)


def log1p(x, name: Optional[str] = None) -> Tensor:
    """``log(1 + x)`` elementwise, accurate for small ``x``; ``x < -1`` gives ``nan``, silently."""
    return unary_op("Log1p", x, name)


def sin(x, name: Optional[str] = None) -> Tensor:
    """Sine elementwise (radians)."""
    return unary_op("Sin", x, name)


def cos(x, name: Optional[str] = None) -> Tensor:
    """Cosine elementwise (radians)."""
    return unary_op("Cos", x, name)


def tan(x, name: Optional[str] = None) -> Tensor:
    """Tangent elementwise (radians)."""
    return unary_op("Tan", x, name)


def tanh(x, name: Optional[str] = None) -> Tensor:
    """Hyperbolic tangent elementwise."""
    return unary_op("Tanh", x, name)


def sigmoid(x, name: Optional[str] = None) -> Tensor:
    """``1 / (1 + exp(-x))`` elementwise."""
    return unary_op("Sigmoid", x, name)


def logical_not(x, name: Optional[str] = None) -> Tensor:
    """Elementwise not of a bool tensor."""
    return unary_op("LogicalNot", x, name)


def floor(x, name: Optional[str] = None) -> Tensor:
    """The largest integer not greater than ``x``, elementwise (in ``x``'s float dtype)."""
    return unary_op("Floor", x, name)


def ceil(x, name: Optional[str] = None) -> Tensor:
    """The smallest integer not less than ``x``, elementwise (in ``x``'s float dtype)."""
    return unary_op("Ceil", x, name)


# -- selection and casting -------------------------------------------------------------------------
def _infer_select(op):
    cond, x, y = op.inputs
    check_dtype(cond.dtype, BOOL_TYPES, "condition of 'SelectV2'")
    check_same_dtype((x, y), ("x", "y"), op.type)
    return [(x.dtype, broadcast_shape(cond.shape, broadcast_shape(x.shape, y.shape)))]


def _select_native(op, constants):
    return ("({1} if {0} else {2})", "array")


define_op(
    "SelectV2",
    _infer_select,
    _ufunc_kernel(np.where),
    extra={"layout": "elementwise", "native": _select_native},
)


def _infer_select_v1(op):
    cond, x, y = op.inputs
    check_dtype(cond.dtype, BOOL_TYPES, "condition of 'Select'")
    check_same_dtype((x, y), ("t", "e"), op.type)
    data = x.shape.merge_with(y.shape)
    if cond.shape.ndims is None or data.ndims is None or cond.shape.ndims == 0:
        return [(x.dtype, data)]
    if cond.shape.ndims == 1 and data.ndims > 1:
        if not cond.shape.is_compatible_with(data[:1]):
            raise ValueError(
                f"A condition vector of shape {cond.shape} needs one element per row of the "
                f"data, of shape {data}"
            )
        return [(x.dtype, data)]
    return [(x.dtype, data.merge_with(cond.shape))]


def _select_v1(cond, x, y):
    if x.shape != y.shape:
        raise InvalidArgumentError(
            None, None, f"'then' and 'else' must have the same size, got {x.shape} and {y.shape}"
        )
    if cond.ndim == 1 and x.ndim > 1:
        if cond.shape[0] != x.shape[0]:
            raise InvalidArgumentError(
                None,
                None,
                f"Number of batches of 'then' must match size of 'cond', but saw: "
                f"{x.shape[0]} vs. {cond.shape[0]}",
            )
        cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
    elif cond.ndim and cond.shape != x.shape:
        raise InvalidArgumentError(
            None, None, f"'then' and 'cond' must have the same size, got {x.shape} and {cond.shape}"
        )
    return np.where(cond, x, y)


define_op(
    "Select",
    _infer_select_v1,
    _ufunc_kernel(_select_v1),
    extra={"layout": "elementwise", "native": _select_native},
)


def _infer_where(op):
    (cond,) = op.inputs
    check_dtype(cond.dtype, NUMERIC_OR_BOOL_TYPES, "condition of 'Where'")
    if cond.shape.ndims == 0:
        raise ValueError("where(condition) needs a condition of rank at least 1, got a scalar")
    return [(_dtypes.int64, TensorShape([None, cond.shape.ndims]))]


def _where_kernel(attrs):
    def where(cond):
        if np.ndim(cond) == 0:
            # A scalar has no coordinates to list (numpy would give one empty row).
            raise InvalidArgumentError(
                None, None, "where(condition) needs a condition of rank at least 1, got a scalar"
            )
        return np.argwhere(cond).astype(np.int64, copy=False)

    return where


define_op("Where", _infer_where, _where_kernel)


def where(condition, x=None, y=None, name: Optional[str] = None) -> Tensor:
    """``where(cond, x, y)`` picks from ``x`` where ``cond`` is true, else from ``y``;
    ``where(cond)`` gives the int64 coordinates of the true (non-zero) elements, one row each.

    The three-argument form is TF1's ``Select``, which does not broadcast: ``x`` and ``y`` have
    one shape; ``condition`` is a scalar, has that shape too, or is a vector that picks whole
    rows (``where([True, False], a, b)`` on 2x3 ``a``, ``b`` is ``[a[0], b[1]]``).  `where_v2`
    broadcasts all three.
    """
    if x is None and y is None:
        return apply_op_output("Where", (condition,), None, name or "Where")
    if x is None or y is None:
        raise ValueError("x and y must both be given, or both be None")
    graph = graph_of((condition, x, y))
    with graph.as_default(), graph.name_scope(name or "Select") as scope:
        condition = convert_to_tensor(condition, name="condition")
        x, y = convert_in_order((x, y), ("t", "e"))
        return apply_op_output("Select", (condition, x, y), None, scope)


def where_v2(condition, x=None, y=None, name: Optional[str] = None) -> Tensor:
    """``where`` with numpy broadcasting of all three operands (TensorFlow 2's ``where``): a
    condition vector lines up with the last dimension of the data."""
    if x is None and y is None:
        return apply_op_output("Where", (condition,), None, name or "Where")
    if x is None or y is None:
        raise ValueError("x and y must both be given, or both be None")
    graph = graph_of((condition, x, y))
    with graph.as_default(), graph.name_scope(name or "SelectV2") as scope:
        condition = convert_to_tensor(condition, name="condition")
        x, y = convert_in_order((x, y), ("x", "y"))
        return apply_op_output("SelectV2", (condition, x, y), None, scope)


def _infer_cast(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_OR_BOOL_TYPES | COMPLEX_TYPES, "Input of 'Cast'")
    return [(op.attrs["DstT"], x.shape)]


def _cast_kernel(attrs):
    np_dtype = _dtypes.numpy_dtype(attrs["DstT"])
    if np_dtype.kind != "c":

        def cast_dropping_imaginary(x):
            if x.dtype.kind == "c":  # as in TensorFlow, the imaginary part is dropped
                x = x.real
            return x.astype(np_dtype)

        return cast_dropping_imaginary
    return lambda x: x.astype(np_dtype)


def _cast_native(op, constants):
    """``astype`` in numba: numpy's conversion, except float to integer (numpy's result for NaN
    and out-of-range values is the machine's, which LLVM need not share)."""
    source = _dtypes.numpy_dtype(op.inputs[0].dtype)
    target = _dtypes.numpy_dtype(op.attrs["DstT"])
    if target == np.bool_:
        return (
            "{0}" if source == np.bool_ else f"np.not_equal({{0}}, np.{source.name}(0))"
        ), "like 0"
    if (source.kind == "f" and target.kind in "iu") or "c" in (source.kind, target.kind):
        return None
    return f"np.{target.name}({{0}})", "like 0"


define_op("Cast", _infer_cast, _cast_kernel, extra={"native": _cast_native})


def cast(x, dtype, name: Optional[str] = None) -> Tensor:
    """``x`` converted to ``dtype`` (floats to integers truncate toward zero).  A tensor that
    already has ``dtype`` is returned as it is, as in TensorFlow."""
    dtype = _dtypes.as_dtype(dtype)
    if isinstance(x, Tensor):
        if x.dtype is dtype:
            return x
        return apply_op_output("Cast", (x,), {"DstT": dtype}, name or "Cast")
    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "Cast") as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype is dtype:
            return x
        return apply_op_output("Cast", (x,), {"DstT": dtype}, scope)


def _infer_clip(op):
    t, low, high = op.inputs
    check_same_dtype((t, low, high), ("t", "clip_value_min", "clip_value_max"), op.type)
    check_dtype(t.dtype, NUMERIC_TYPES, "Input 't' of 'ClipByValue'")
    shape = broadcast_shape(t.shape, broadcast_shape(low.shape, high.shape))
    if not shape.is_compatible_with(t.shape):
        raise ValueError(
            f"clip values of shapes {low.shape} and {high.shape} would change the shape "
            f"{t.shape} of the clipped tensor"
        )
    return [(t.dtype, t.shape.merge_with(shape))]


def _clip(t, low, high):
    return np.maximum(np.minimum(t, high), low)


define_op("ClipByValue", _infer_clip, _ufunc_kernel(_clip))


def clip_by_value(t, clip_value_min, clip_value_max, name: Optional[str] = None) -> Tensor:
    """``t`` limited to ``[clip_value_min, clip_value_max]`` (bounds broadcast against ``t``).
    When ``min > max`` the result is ``min``, as in TensorFlow."""
    graph = graph_of((t, clip_value_min, clip_value_max))
    with graph.as_default(), graph.name_scope(name or "clip_by_value") as scope:
        tensors = convert_all(
            (t, clip_value_min, clip_value_max), ("t", "clip_value_min", "clip_value_max")
        )
        return apply_op_output("ClipByValue", tensors, None, scope)


# -- matrix products and sums of several tensors ---------------------------------------------------
def _infer_matmul(op):
    a, b = op.inputs
    check_same_dtype((a, b), ("a", "b"), op.type)
    check_dtype(a.dtype, ARITHMETIC_TYPES, f"Input 'a' of '{op.type}'")
    return [(a.dtype, _matmul_shape(op))]


def _matmul_shape(op) -> TensorShape:
    """The static shape of the product of a MatMul-family op's two inputs."""
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    batched = op.type != "MatMul"
    for t, arg in ((a, "a"), (b, "b")):
        rank = t.shape.ndims
        if rank is not None and (rank < 2 if batched else rank != 2):
            need = "at least 2" if batched else "2"
            raise ValueError(f"Input '{arg}' must have rank {need}, but has shape {t.shape}")
    if a.shape.ndims is None or b.shape.ndims is None:
        return TensorShape(None)
    a_dims, b_dims = a.shape.as_list(), b.shape.as_list()
    m, ka = (a_dims[-1], a_dims[-2]) if ta else (a_dims[-2], a_dims[-1])
    kb, n = (b_dims[-1], b_dims[-2]) if tb else (b_dims[-2], b_dims[-1])
    if ka is not None and kb is not None and ka != kb:
        raise ValueError(
            f"Inner dimensions of the matrix product must agree, but are {ka} and {kb} "
            f"(shapes {a.shape} and {b.shape}, transpose_a={ta}, transpose_b={tb})"
        )
    batch = broadcast_shape(TensorShape(a_dims[:-2]), TensorShape(b_dims[:-2]))
    return TensorShape(batch.as_list() + [m, n])


def _matmul_kernel(attrs):
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if not ta and not tb:
        return np.matmul
    if ta and tb:
        return lambda a, b: np.matmul(a.swapaxes(-1, -2), b.swapaxes(-1, -2))
    if ta:
        return lambda a, b: np.matmul(a.swapaxes(-1, -2), b)
    return lambda a, b: np.matmul(a, b.swapaxes(-1, -2))


define_op("MatMul", _infer_matmul, _matmul_kernel)
define_op("BatchMatMulV2", _infer_matmul, _matmul_kernel)


def _infer_matmul_v3(op):
    """(u)int8 matrices multiplied into ``output_type`` (int32)."""
    for t, arg in zip(op.inputs, ("a", "b")):
        if t.dtype not in (_dtypes.int8, _dtypes.uint8):
            raise TypeError(f"Input '{arg}' of '{op.type}' must be int8 or uint8, got {t.dtype}")
    return [(op.attrs["output_type"], _matmul_shape(op))]


def _matmul_v3_kernel(attrs):
    product = _matmul_kernel(attrs)
    out = _dtypes.numpy_dtype(attrs["output_type"])
    return lambda a, b: product(a.astype(out), b.astype(out))


define_op("BatchMatMulV3", _infer_matmul_v3, _matmul_v3_kernel)


def matmul(
    a,
    b,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    output_type=None,
    grad_a: bool = False,
    grad_b: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """The matrix product ``a @ b`` of the last two dimensions, broadcasting leading (batch)
    dimensions.  Rank-2 operands make a ``MatMul`` op, others a ``BatchMatMulV2``.  The adjoint
    of a real matrix is its transpose, of a complex one its conjugate transpose; the sparsity
    hints are ignored.  ``output_type`` int32
    multiplies int8/uint8 matrices into int32 (a ``BatchMatMulV3``), as TensorFlow's;
    ``grad_a``/``grad_b`` are TensorFlow's hints that an operand is of the backward pass, kept
    as attributes of the op (they change no value)."""
    if transpose_a and adjoint_a:
        raise ValueError("matmul: only one of transpose_a and adjoint_a can be True")
    if transpose_b and adjoint_b:
        raise ValueError("matmul: only one of transpose_b and adjoint_b can be True")
    if adjoint_a or adjoint_b:
        a, b = _conjugated_for_adjoint(a, b, adjoint_a, adjoint_b)
    attrs = {
        "transpose_a": bool(transpose_a or adjoint_a),
        "transpose_b": bool(transpose_b or adjoint_b),
    }
    if grad_a or grad_b:
        attrs.update(grad_a=bool(grad_a), grad_b=bool(grad_b))
    graph = graph_of((a, b))
    if output_type is not None:
        output_type = _dtypes.as_dtype(output_type)
    if graph._eager and output_type is None:  # no scope to open: eager ops are not named uniquely
        if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
            a, b = convert_in_order((a, b), ("a", "b"))
        op_type = "MatMul" if a.shape.ndims == 2 and b.shape.ndims == 2 else "BatchMatMulV2"
        return apply_op_output(op_type, (a, b), attrs, name or "MatMul")
    with graph.as_default(), graph.name_scope(name or "MatMul") as scope:
        if output_type is not None:
            a = convert_to_tensor(a, name="a")
            b = convert_to_tensor(b, name="b")
            if output_type != a.dtype or output_type != b.dtype:
                quantized = (_dtypes.int8, _dtypes.uint8)
                if a.dtype not in quantized or b.dtype not in quantized:
                    raise TypeError(
                        f"matmul: output_type {output_type.name} needs (u)int8 inputs (or "
                        f"inputs of that dtype), got {a.dtype.name} and {b.dtype.name}"
                    )
                if output_type != _dtypes.int32:
                    raise TypeError(
                        f"matmul: output_type must be int32 for (u)int8 inputs, got "
                        f"{output_type.name}"
                    )
                attrs["output_type"] = output_type
                return apply_op_output("BatchMatMulV3", (a, b), attrs, scope)
        a, b = convert_in_order((a, b), ("a", "b"))
        op_type = "MatMul" if a.shape.ndims == 2 and b.shape.ndims == 2 else "BatchMatMulV2"
        return apply_op_output(op_type, (a, b), attrs, scope)


def sparse_matmul(
    a,
    b,
    transpose_a: bool = False,
    transpose_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """TF1's ``SparseMatMul``: the float32 product of two float32 matrices, with hints that
    one is mostly zeros (which change no value: the product is `matmul`'s)."""
    graph = graph_of((a, b))
    with graph.as_default(), graph.name_scope(name or "SparseMatMul") as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b")
        for t, arg in ((a, "a"), (b, "b")):
            if t.dtype != _dtypes.float32:
                raise TypeError(f"sparse_matmul: '{arg}' must be float32, got {t.dtype.name}")
            if t.shape.ndims is not None and t.shape.ndims != 2:
                raise ValueError(f"sparse_matmul: '{arg}' must be a matrix, got shape {t.shape}")
        attrs = {"transpose_a": bool(transpose_a), "transpose_b": bool(transpose_b)}
        return apply_op_output("MatMul", (a, b), attrs, scope)


def _conjugated_for_adjoint(a, b, adjoint_a: bool, adjoint_b: bool):
    """``a`` and ``b`` with the complex ones that are to be adjoint conjugated (the transposes
    are the op's attributes)."""
    graph = graph_of((a, b))
    with graph.as_default():
        a, b = convert_in_order((a, b), ("a", "b"))
    if a.dtype in COMPLEX_TYPES:  # the conjugates (a ``Conj`` op, defined by `complex_ops`)
        a = apply_op_output("Conj", (a,), None, "Conj") if adjoint_a else a
        b = apply_op_output("Conj", (b,), None, "Conj") if adjoint_b else b
    return a, b


def _infer_add_n(op):
    inputs = op.inputs
    check_same_dtype(inputs, [f"inputs[{i}]" for i in range(len(inputs))], op.type)
    check_dtype(inputs[0].dtype, ARITHMETIC_TYPES, "inputs of 'AddN'")
    shape = TensorShape(None)
    for t in inputs:
        if not shape.is_compatible_with(t.shape):
            raise ValueError(f"AddN needs inputs of one shape, got {t.shape} and {shape}")
        shape = shape.merge_with(t.shape)
    return [(inputs[0].dtype, shape)]


def _add_n(*inputs):
    shape = np.shape(inputs[0])
    total = inputs[0]
    for x in inputs[1:]:
        if np.shape(x) != shape:
            raise InvalidArgumentError(
                None, None, f"AddN needs inputs of one shape, got {shape} and {np.shape(x)}"
            )
        total = np.add(total, x)
    return total


define_op("AddN", _infer_add_n, _ufunc_kernel(_add_n), extra={"layout": "elementwise"})


def add_n(inputs, name: Optional[str] = None) -> Tensor:
    """The elementwise sum of a list of tensors of one dtype and shape (no broadcasting)."""
    if isinstance(inputs, Tensor) or not isinstance(inputs, (list, tuple)):
        raise TypeError(f"add_n needs a list of tensors, got {inputs!r}")
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n needs a list of at least one tensor of one dtype and shape")
    if len(inputs) == 1 and isinstance(inputs[0], Tensor) and name is None:
        return inputs[0]
    graph = graph_of(inputs)
    with graph.as_default(), graph.name_scope(name or "AddN") as scope:
        tensors = convert_all(inputs, [f"inputs_{i}" for i in range(len(inputs))])
        return apply_op_output("AddN", tensors, None, scope)


# -- reductions ------------------------------------------------------------------------------------
def reduced_shape(shape: TensorShape, axis, keepdims: bool) -> TensorShape:
    """The static shape after reducing ``axis`` (``None``: all) of ``shape``; checks the axes."""
    rank = shape.ndims
    if axis is None:
        if not keepdims:
            return TensorShape([])
        return TensorShape(None if rank is None else [1] * rank)
    if rank is None:
        return TensorShape(None)
    axes = [normalize_axis(a, rank, "reduction axis") for a in axis]
    if len(set(axes)) != len(axes):
        raise ValueError(f"reduction axes {list(axis)} name a dimension twice")
    dims = shape.as_list()
    if keepdims:
        return TensorShape([1 if i in axes else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in axes])


def _infer_reduction(allowed: frozenset):
    def infer(op):
        (x,) = op.inputs
        check_dtype(x.dtype, allowed, f"Input of '{op.type}'")
        return [(x.dtype, reduced_shape(x.shape, op.attrs["axis"], op.attrs["keepdims"]))]

    return infer


def _sum_kernel(attrs):
    axis, keepdims = attrs["axis"], attrs["keepdims"]
    return lambda x: np.add.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)


def _prod_kernel(attrs):
    axis, keepdims = attrs["axis"], attrs["keepdims"]

    def prod(x):
        with np.errstate(all="ignore"):
            return np.multiply.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)

    return prod


def _mean_kernel(attrs):
    axis, keepdims = attrs["axis"], attrs["keepdims"]

    def mean(x):
        if x.dtype.kind in "fc":
            return np.mean(x, axis=axis, keepdims=keepdims)
        # An integer mean truncates toward zero, as in TensorFlow; the sum is taken in 64 bits
        # so that it cannot wrap around (the mean of uint8 pixels is right).
        wide = np.uint64 if x.dtype.kind == "u" else np.int64
        total = np.add.reduce(x, axis=axis, dtype=wide, keepdims=keepdims)
        count = max(np.size(x) // max(np.size(total), 1), 1)
        quotient = np.abs(total) // count
        return (quotient * np.sign(total)).astype(x.dtype, copy=False)

    return mean


def _extremum_kernel(ufunc, float_identity: float, int_identity: str):
    def build(attrs):
        axis, keepdims = attrs["axis"], attrs["keepdims"]

        def reduce(x):
            try:
                return ufunc.reduce(x, axis=axis, keepdims=keepdims)
            except ValueError:
                if np.size(x):
                    raise
                # An empty reduction gives the identity (-inf for max), as in TensorFlow.
                identity = (
                    float_identity
                    if x.dtype.kind == "f"
                    else getattr(np.iinfo(x.dtype), int_identity)
                )
                return ufunc.reduce(x, axis=axis, keepdims=keepdims, initial=identity)

        return reduce

    return build


def _logical_reduce_kernel(ufunc):
    def build(attrs):
        axis, keepdims = attrs["axis"], attrs["keepdims"]
        return lambda x: ufunc.reduce(x, axis=axis, keepdims=keepdims)

    return build


define_op("Sum", _infer_reduction(ARITHMETIC_TYPES), _sum_kernel)
define_op("Prod", _infer_reduction(ARITHMETIC_TYPES), _prod_kernel)
define_op("Mean", _infer_reduction(ARITHMETIC_TYPES), _mean_kernel)
define_op("Max", _infer_reduction(NUMERIC_TYPES), _extremum_kernel(np.maximum, -np.inf, "min"))
define_op("Min", _infer_reduction(NUMERIC_TYPES), _extremum_kernel(np.minimum, np.inf, "max"))
define_op("Any", _infer_reduction(BOOL_TYPES), _logical_reduce_kernel(np.logical_or))
define_op("All", _infer_reduction(BOOL_TYPES), _logical_reduce_kernel(np.logical_and))


def _reduction_args(axis, keepdims, reduction_indices, keep_dims):
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'")
        axis = reduction_indices
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        keepdims = keep_dims
    axis = static_axis(axis, "reduction axis")
    if isinstance(axis, int):
        axis = (axis,)
    return {"axis": axis, "keepdims": bool(keepdims)}


def _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    attrs = _reduction_args(axis, keepdims, reduction_indices, keep_dims)
    return apply_op_output(op_type, (input_tensor,), attrs, name or op_type)


def reduce_sum(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The sum over ``axis`` (all axes when ``None``), in the input's dtype."""
    ragged = override_for("reduce_sum", input_tensor)
    if ragged is not None:
        return ragged(input_tensor, axis, keepdims, name, reduction_indices, keep_dims)
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The mean over ``axis``, in the input's dtype: integer means truncate toward zero."""
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The maximum over ``axis``; over no elements it is the lowest value (``-inf``)."""
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The minimum over ``axis``; over no elements it is the highest value (``inf``)."""
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The product over ``axis`` (all axes when ``None``), in the input's dtype; over no
    elements it is 1."""
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """Whether any element over ``axis`` is true (a bool input); over no elements, False."""
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """Whether every element over ``axis`` is true (a bool input); over no elements, True."""
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def _infer_arg_reduce(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_OR_BOOL_TYPES, f"Input of '{op.type}'")
    check_dtype(op.attrs["output_type"], INDEX_TYPES, "output_type")
    rank = x.shape.ndims
    if rank is None:
        return [(op.attrs["output_type"], TensorShape(None))]
    if rank == 0:
        raise ValueError(f"{op.type} needs a tensor of rank at least 1, got a scalar")
    axis = normalize_axis(op.attrs["axis"], rank)
    dims = x.shape.as_list()
    return [(op.attrs["output_type"], TensorShape(dims[:axis] + dims[axis + 1 :]))]


def _arg_reduce_kernel(fn, nan_as):
    """``fn`` (np.argmax/np.argmin) that skips NaNs as TensorFlow's kernels do: a NaN never wins
    (numpy would return the first NaN), so it counts as ``nan_as`` (-inf for argmax, +inf for
    argmin); a slice of NaNs only gives index 0."""

    def build(attrs):
        axis, np_dtype = attrs["axis"], _dtypes.numpy_dtype(attrs["output_type"])

        def arg_reduce(x):
            if x.dtype.kind == "f":
                nans = np.isnan(x)
                if nans.any():
                    x = np.where(nans, x.dtype.type(nan_as), x)
            return fn(x, axis=axis).astype(np_dtype, copy=False)

        return arg_reduce

    return build


define_op("ArgMax", _infer_arg_reduce, _arg_reduce_kernel(np.argmax, -np.inf))
define_op("ArgMin", _infer_arg_reduce, _arg_reduce_kernel(np.argmin, np.inf))


def _arg_reduce(op_type, input, axis, name, dimension, output_type):  # noqa: A002
    if dimension is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dimension'")
        axis = dimension
    axis = static_axis(0 if axis is None else axis)
    if not isinstance(axis, int):
        raise TypeError(f"{op_type} takes a single axis, got {axis!r}")
    attrs = {"axis": axis, "output_type": _dtypes.as_dtype(output_type)}
    return apply_op_output(op_type, (input,), attrs, name or op_type)


def argmax(
    input,  # noqa: A002 - TensorFlow's argument name
    axis=None,
    name: Optional[str] = None,
    dimension=None,
    output_type=_dtypes.int64,
) -> Tensor:
    """The index of the largest value along ``axis`` (default 0); ties give the first index and
    NaNs are skipped, as in TensorFlow."""
    return _arg_reduce("ArgMax", input, axis, name, dimension, output_type)


def argmin(
    input,  # noqa: A002 - TensorFlow's argument name
    axis=None,
    name: Optional[str] = None,
    dimension=None,
    output_type=_dtypes.int64,
) -> Tensor:
    """The index of the smallest value along ``axis`` (default 0); ties give the first index
    and NaNs are skipped, as in TensorFlow."""
    return _arg_reduce("ArgMin", input, axis, name, dimension, output_type)


def _infer_running(op):
    """Cumsum's and Cumprod's inference: the input's dtype and shape, along a valid axis."""
    (x,) = op.inputs
    check_dtype(
        x.dtype, ARITHMETIC_TYPES if op.type == "Cumsum" else NUMERIC_TYPES, f"Input of '{op.type}'"
    )
    rank = x.shape.ndims
    if rank == 0:
        raise ValueError(f"{op.type} needs a tensor of rank at least 1, got a scalar")
    normalize_axis(op.attrs["axis"], rank)
    return [(x.dtype, x.shape)]


def running_kernel(accumulate, empty):
    """The kernel builder of a running reduction (``np.cumsum`` for Cumsum, ``np.cumprod``
    for Cumprod) with TensorFlow's ``exclusive`` (shifted by one, ``empty`` first: 0 for
    sums, 1 for products) and ``reverse``; overflow is silent, as in TensorFlow."""

    def kernel(attrs):
        axis, exclusive, reverse = attrs["axis"], attrs["exclusive"], attrs["reverse"]

        def running(x):
            if reverse:
                x = np.flip(x, axis)
            with np.errstate(all="ignore"):
                out = accumulate(x, axis=axis, dtype=x.dtype)
            if exclusive:
                shifted = np.full_like(out, empty)
                into = [slice(None)] * out.ndim
                take = [slice(None)] * out.ndim
                into[axis], take[axis] = slice(1, None), slice(None, -1)
                shifted[tuple(into)] = out[tuple(take)]
                out = shifted
            if reverse:
                out = np.flip(out, axis)
            return out

        return running

    return kernel


define_op("Cumsum", _infer_running, running_kernel(np.cumsum, 0))


def cumsum(
    x, axis=0, exclusive: bool = False, reverse: bool = False, name: Optional[str] = None
) -> Tensor:
    """Running sums along ``axis``: ``exclusive`` leaves out the current element, ``reverse``
    sums from the end."""
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"cumsum takes a single axis, got {axis!r}")
    attrs = {"axis": axis, "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return apply_op_output("Cumsum", (x,), attrs, name or "Cumsum")


# ... and their tensors cast to the dtype asked for with `cast`.
register_conversion_op("cast", cast)

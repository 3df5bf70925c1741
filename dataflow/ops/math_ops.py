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

from collections.abc import Callable
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import intra_op
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op_output, define_op
from ..framework.tensor_conversion import convert_to_tensor, is_tensor_like
from ..framework.tensor_shape import TensorShape
from . import complex_arithmetic as _complex
from .op_util import (  # noqa: F401 - defined there, reached here too
    ARITHMETIC_TYPES,
    BOOL_TYPES,
    COMPLEX_TYPES,
    EQUALITY_TYPES,
    FLOAT_TYPES,
    INDEX_TYPES,
    INEXACT_TYPES,
    INT_TYPES,
    NUMERIC_OR_BOOL_TYPES,
    NUMERIC_TYPES,
    SIGNED_TYPES,
    SQUARED_DIFFERENCE_TYPES,
    _elementwise_extra,
    _quiet,
    _ufunc_kernel,
    broadcast_shape,
    check_dtype,
    check_same_dtype,
    convert_all,
    convert_in_order,
    graph_of,
    kernel_by_dtype,
    marking_dtype,
    normalize_axis,
    static_axis,
)
from .reduction_ops import (  # noqa: F401 - defined there, reached here too
    _infer_running,
    _reduce,
    _reduction_args,
    argmax,
    argmin,
    cumsum,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    reduced_shape,
    running_kernel,
)
from .selection_ops import (  # noqa: F401 - defined there, reached here too
    _clip,
    cast,
    clip_by_value,
    where,
    where_v2,
)

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


def _concatenate_strings(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Elementwise ``x + y`` of object arrays of bytes, broadcasting.  numpy gives a bare
    ``bytes`` for two 0-d operands; a string tensor's value is always an array."""
    result = np.add(x, y)
    return result if result.__class__ is np.ndarray else np.array(result, dtype=object)


def _for_complex(kernel) -> dict:
    return {_dtypes.complex64: kernel, _dtypes.complex128: kernel}


# The dtypes whose ops run kernels of their own (see `op_util.kernel_by_dtype`): ``Add``
# concatenates strings, as TensorFlow's; complex products and quotients round as TensorFlow's
# CPU kernels do (`complex_arithmetic`).  Every other dtype keeps the numpy ufunc itself, which
# the compiler writes as an operator (``a + b``, see `codegen`).
_DTYPE_KERNELS = {
    "Add": {_dtypes.string: _concatenate_strings},
    "Mul": _for_complex(_complex.multiply),
    "RealDiv": _for_complex(_complex.divide),
    "Square": _for_complex(_complex.square),
}


def _define_elementwise(op_type: str, infer, fn) -> None:
    """Defines an elementwise op whose kernel is ``fn`` (a ufunc, or a function of arrays), or,
    for the dtypes `_DTYPE_KERNELS` names, the kernel of that dtype."""
    extra = _elementwise_extra(op_type, fn)
    by_dtype = _DTYPE_KERNELS.get(op_type)
    if by_dtype is None:
        define_op(op_type, infer, _ufunc_kernel(fn), extra=extra)
        return
    extra["dtype_kernels"] = frozenset(by_dtype)
    define_op(op_type, marking_dtype(infer, by_dtype), kernel_by_dtype(fn, by_dtype), extra=extra)


_BINARY_OPS = [
    # (op type, allowed input dtypes, output dtype or None for the input dtype, kernel)
    ("Add", ARITHMETIC_TYPES | {_dtypes.string}, None, np.add),
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
    _define_elementwise(_type, _infer_binary(_allowed, _out), _fn)


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
    """``x + y`` elementwise: the sum of numbers, the concatenation of strings."""
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


def compare_for_equality(x: Tensor, y, op_type: str) -> Tensor:
    """``x == y`` (``op_type`` ``Equal``) or ``x != y`` (``NotEqual``) as the ``==`` and
    ``!=`` of a value that compares elementwise (an eager tensor, a variable made eagerly)
    compute it, as TensorFlow 2's operators: the elementwise op with broadcasting, or, when the
    static shapes of ``x`` and ``y`` cannot broadcast, one bool scalar (False for ``==``,
    True for ``!=``: TensorFlow's ``incompatible_shape_error=False``).  ``y`` converts to the
    dtype of ``x`` as for any binary op; a tensor of another dtype is the op's error."""
    if isinstance(y, Tensor) or is_tensor_like(y):
        y_shape = y.shape
    else:
        try:
            y_shape = TensorShape(np.shape(y))
        except ValueError:  # a ragged list: the conversion reports it
            y_shape = TensorShape(None)
    try:
        broadcast_shape(x.shape, y_shape)
    except ValueError:
        from .constant_op import constant

        with graph_of((x, y)).as_default():
            return constant(op_type == "NotEqual", _dtypes.bool, name=op_type)
    return binary_op(op_type, x, y, op_type)


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
    _define_elementwise(_type, _infer_unary(_allowed), _fn)


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


# Above BLAS_THREADS_MACS multiply-adds, OpenBLAS starts its own threads for a product; they
# spin while they wait and, on a loaded machine, wait for each other (a product that takes 1 ms
# alone took tens beside two busy processes).  So a product that large runs with BLAS held to
# one thread (`intra_op.blas_threads`; a Session holds it for the whole run), and one of at
# least PARALLEL_PRODUCT_MACS runs in bands on the intra-op threads instead, the cores the pool
# grants (all on the calling thread when none is free).  Between the two, one thread does it:
# waking a Python thread costs tens of microseconds, more than half such a product saves.
BLAS_THREADS_MACS = 1 << 18
PARALLEL_PRODUCT_MACS = 1 << 24
# A band is at least this many multiply-adds (about 50 microseconds of one core).
BAND_MACS = 1 << 21


def _product(a, b, threads=None):
    """``a @ b``: in bands of rows (or of columns, when there are fewer rows than columns) on
    up to ``threads`` intra-op threads (None: one per core) when it is large; else numpy's
    ``matmul`` on one BLAS thread."""
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype or a.dtype.kind not in "fc":
        return np.matmul(a, b)
    (m, k), n = a.shape, b.shape[1]
    macs = m * n * k
    if macs <= BLAS_THREADS_MACS or k != b.shape[0]:
        return np.matmul(a, b)
    by_rows = m >= n
    length = m if by_rows else n
    count = int(min(8, length // 8, macs // BAND_MACS))
    if macs < PARALLEL_PRODUCT_MACS or count < 2 or threads == 1:
        with intra_op.blas_threads:
            return np.matmul(a, b)
    out = np.empty((m, n), a.dtype)
    edges = [length * part // count for part in range(count + 1)]

    def band(number: int) -> None:
        part = slice(edges[number], edges[number + 1])
        if by_rows:
            np.matmul(a[part], b, out=out[part])
        else:
            np.matmul(a, b[:, part], out=out[:, part])

    intra_op.run_blocks(count, band, threads)
    return out


def _matmul_kernel(attrs):
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    threads = attrs.get("intra_op_threads")
    if not ta and not tb:
        return lambda a, b: _product(a, b, threads)
    if ta and tb:
        return lambda a, b: _product(a.swapaxes(-1, -2), b.swapaxes(-1, -2), threads)
    if ta:
        return lambda a, b: _product(a.swapaxes(-1, -2), b, threads)
    return lambda a, b: _product(a, b.swapaxes(-1, -2), threads)


# "intra_op_threads": the Session gives the kernel its budget of intra-op threads.
define_op("MatMul", _infer_matmul, _matmul_kernel, extra={"intra_op_threads": True})
define_op("BatchMatMulV2", _infer_matmul, _matmul_kernel, extra={"intra_op_threads": True})


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

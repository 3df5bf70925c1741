"""What the op modules share: the dtype sets ops are registered for, dtype and shape checks
whose errors name the op, broadcasting of static shapes, axes, and the wrappers that build an
op's function from its definition."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, get_default_graph, graph_to_build_in
from ..framework.tensor_conversion import convert_to_tensor, is_tensor_like, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from .static_values import known_int_value

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
#   "annihilator": x op v == v for integers (for floats NaN, inf and signed zeros differ);
#   "dtype_kernels": the dtypes whose ops run a kernel of their own instead of the ufunc
#   (`kernel_by_dtype`), which passes must not replace by the ufunc.
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


def marking_dtype(infer: Callable, dtypes) -> Callable:
    """``infer`` that also records the first input's dtype as the attribute ``T`` when it is one
    of ``dtypes``: the op's kernel is chosen from its attributes (`kernel_by_dtype`), and so
    stays one callable per set of attributes for the executor, eager mode and passes alike."""

    def infer_and_mark(op):
        specs = infer(op)
        dtype = op.inputs[0].dtype
        if dtype in dtypes:
            op.attrs["T"] = dtype
        return specs

    return infer_and_mark


def kernel_by_dtype(default: Callable, by_dtype: dict) -> Callable:
    """The kernel builder of an op whose dtypes in ``by_dtype`` have kernels of their own (their
    ops carry ``T``, see `marking_dtype`); every other dtype runs ``default`` itself."""
    return lambda attrs: by_dtype.get(attrs.get("T"), default)


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

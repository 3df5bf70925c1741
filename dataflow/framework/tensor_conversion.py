"""Python values as tensors: ``convert_to_tensor`` and the conversion functions registered for
other types (TensorFlow's ``register_tensor_conversion_function``); the op modules register the
constants, casts and packing of lists that conversion uses, so this module needs no op."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Optional

import numpy as np

from . import dtypes as _dtypes
from .graph import Tensor
from .source_location import (
    _user_location,
)

# -- conversion of Python values into tensors ------------------------------------------------------
_conversion_functions: list[tuple[type, Callable]] = []


_conversion_priorities: list[int] = []  # beside _conversion_functions, ascending


def register_tensor_conversion_function(
    base_type: type, conversion_func: Callable, priority: int = 100
) -> None:
    """``conversion_func(value, dtype, name)`` turns instances of ``base_type`` into Tensors.
    Functions of lower ``priority`` are tried first, equal ones in the order registered."""
    position = bisect.bisect_right(_conversion_priorities, priority)
    _conversion_priorities.insert(position, priority)
    _conversion_functions.insert(position, (base_type, conversion_func))


def convert_to_tensor(
    value, dtype=None, name: Optional[str] = None, preferred_dtype=None, dtype_hint=None
) -> Tensor:
    """Returns ``value`` as a Tensor: tensors pass through, Python and numpy values become
    constants, registered types (variables) convert themselves.  ``dtype_hint`` is TensorFlow
    2's name for ``preferred_dtype``."""
    if dtype_hint is not None and preferred_dtype is None:
        preferred_dtype = dtype_hint
    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for tensor '{value.name}' "
                f"with dtype {value.dtype.name}"
            )
        return value
    constant = _conversion_op("constant")
    if value.__class__ in _PYTHON_SCALARS and preferred_dtype is None:
        return constant(value, dtype=dtype, name=name)
    for base_type, func in _conversion_functions:
        if isinstance(value, base_type):
            return func(value, dtype, name)
    if isinstance(value, (list, tuple)) and holds_tensor(value):
        return _autopack_list(value, dtype, name or "packed")
    if dtype is None and preferred_dtype is not None:
        try:
            return constant(value, dtype=preferred_dtype, name=name)
        except (TypeError, ValueError):
            pass
    return constant(value, dtype=dtype, name=name)


# What the op modules above this one register for conversion: `constant_op.constant`, and the
# `array_ops.stack` and `math_ops.cast` that lists mixing tensors and values are packed with.
# ``import dataflow`` (any part of it) imports them all before a value is converted.
_registered_ops: dict[str, Callable] = {}


def register_conversion_op(role: str, fn: Callable) -> None:
    """Gives conversion the op function of ``role`` ("constant", "stack" or "cast")."""
    _registered_ops[role] = fn


def _conversion_op(role: str) -> Callable:
    try:
        return _registered_ops[role]
    except KeyError:
        raise RuntimeError(
            f"no {role} op is registered for tensor conversion: import dataflow first"
        ) from None


def holds_tensor(value) -> bool:
    """Whether ``value`` is tensor-like or a (nested) list or tuple with such an element."""
    if isinstance(value, (list, tuple)):
        return any(holds_tensor(v) for v in value)
    return is_tensor_like(value)


def _autopack_list(values, dtype, name: str) -> Tensor:
    """A (nested) list mixing tensors and Python or numpy values, stacked into one tensor as
    TensorFlow does: the plain values take the dtype of the tensors among them.  Where a dtype
    other than the first tensor's is requested, the tensors are cast to it, as TensorFlow's
    autopacking does (``concat([int64_indices, [[i], [i]]], 1)`` with an int32 ``i``).  An
    element that does not fit is an error naming the Pack op and the user's line."""
    inferred = _first_tensor_dtype(values)
    cast_tensors = (
        dtype is not None and inferred is not None and _dtypes.as_dtype(dtype) is not inferred
    )
    if dtype is None:
        dtype = inferred
    try:
        return _autopack(values, dtype, name, cast_tensors)
    except (TypeError, ValueError) as e:
        raise type(e)(f"Pack op '{name}' at {_user_location()}: {e}") from None


def _autopack(values, dtype, name: str, cast_tensors: bool = False) -> Tensor:
    stack, cast = _conversion_op("stack"), _conversion_op("cast")

    def element(v):
        if isinstance(v, (list, tuple)) and holds_tensor(v):
            return _autopack(v, dtype, "packed", cast_tensors)
        if cast_tensors and is_tensor_like(v):
            v = convert_to_tensor(v)
            return v if v.dtype is _dtypes.as_dtype(dtype) else cast(v, dtype)
        return convert_to_tensor(v, dtype=dtype)

    return stack([element(v) for v in values], name=name)


def _first_tensor_dtype(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            found = _first_tensor_dtype(v)
            if found is not None:
                return found
        elif is_tensor_like(v):
            return convert_to_tensor(v).dtype
    return None


def is_tensor_like(value) -> bool:
    if value.__class__ in _PYTHON_SCALARS:
        return False
    return isinstance(value, Tensor) or any(isinstance(value, t) for t, _ in _conversion_functions)


_PYTHON_SCALARS = frozenset({float, int, bool})


def numpy_value_or_none(t: Tensor) -> Optional[np.ndarray]:
    """The value of ``t`` if it is a constant known at build time, else None."""
    if t.op.type == "Const":
        return t.op.attrs["value"]
    return None

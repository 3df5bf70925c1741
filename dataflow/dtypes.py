"""Element types of tensors, mirroring ``tf.compat.v1`` dtypes on top of numpy dtypes."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np


class DType:
    """The element type of a tensor.  Compares equal to itself and to nothing else.

    Each DType wraps one numpy dtype (``as_numpy_dtype``); ``resource`` wraps ``object`` and is
    the type of a variable handle.
    """

    __slots__ = ("name", "_np")

    def __init__(self, name: str, numpy_dtype: Any):
        self.name = name
        self._np = np.dtype(numpy_dtype)

    @property
    def as_numpy_dtype(self) -> type:
        return self._np.type

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._np.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def is_numeric(self) -> bool:
        return self._np.kind in "iuf"

    @property
    def size(self) -> int:
        return self._np.itemsize

    @property
    def min(self):
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other: Any) -> bool:
        return self is as_dtype(other)

    def __repr__(self) -> str:
        return f"df.{self.name}"

    def __reduce__(self):
        return as_dtype, (self.name,)


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
bool = DType("bool", np.bool_)  # noqa: A001 - the public name mirrors tf.bool
resource = DType("resource", object)
half = float16
double = float64

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, resource)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, double=float64, float=float32)
_BY_NUMPY = {d._np: d for d in _ALL if d is not resource}
# Python's own types map as in TensorFlow: float -> float32, bool -> bool; int follows numpy.
_BY_PYTHON = {builtins.float: float32, builtins.bool: bool, builtins.int: int32}


def as_dtype(type_value: Any) -> DType:
    """Converts a DType, numpy dtype or type, Python type, or name string into a DType."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str) and type_value in _BY_NAME:
        return _BY_NAME[type_value]
    if type_value in _BY_PYTHON:
        return _BY_PYTHON[type_value]
    try:
        found = _BY_NUMPY.get(np.dtype(type_value))
    except TypeError:
        found = None
    if found is None:
        raise TypeError(f"Cannot convert {type_value!r} to a dataflow DType.")
    return found


def numpy_dtype(dtype: DType) -> np.dtype:
    """The numpy dtype object of ``dtype`` (faster to use than ``as_numpy_dtype`` in kernels)."""
    return dtype._np

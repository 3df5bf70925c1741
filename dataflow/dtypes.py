"""Element types of tensors, mirroring ``tf.compat.v1`` dtypes on top of numpy dtypes.

Deliberately a subset of TensorFlow's types: float16/32/64, int8/16/32/64, uint8, bool,
``string`` (and ``resource`` for variable handles).  ``as_dtype`` raises ``TypeError`` for the
others (complex, uint16, ...), which TensorFlow accepts.

A ``string`` tensor's value is a numpy object array whose elements are ``bytes``, as TensorFlow
1.x returns them from a fetch; `string_array` converts what users write (``str`` is encoded as
UTF-8) into that form.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np


class DType:
    """The element type of a tensor.

    Each DType wraps one numpy dtype (``as_numpy_dtype``); ``resource`` wraps ``object`` and is
    the type of a variable handle.  There is one instance per type, so the project compares
    with ``is``; ``==`` also accepts anything `as_dtype` converts (``df.float32 == "float32"``,
    ``df.float32 == np.float32``), as in TensorFlow.
    """

    __slots__ = ("name", "_np", "_enum")

    def __init__(self, name: str, numpy_dtype: Any, enum: int):
        self.name = name
        self._np = np.dtype(numpy_dtype)
        self._enum = enum

    @property
    def as_numpy_dtype(self) -> type:
        return self._np.type

    @property
    def base_dtype(self) -> DType:
        return self

    @property
    def real_dtype(self) -> DType:
        return self

    @property
    def as_datatype_enum(self) -> int:
        """TensorFlow's ``DataType`` number for this type (``3`` for int32)."""
        return self._enum

    @property
    def is_numpy_compatible(self) -> bool:
        return self is not resource

    @property
    def is_string(self) -> bool:
        return self is string

    @property
    def is_complex(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

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
        if not self.is_numeric:
            raise TypeError(f"Cannot find minimum value of {self}.")
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        if not self.is_numeric:
            raise TypeError(f"Cannot find maximum value of {self}.")
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other: Any) -> bool:
        return self is as_dtype(other)

    def __eq__(self, other: Any) -> builtins.bool:
        if self is other:
            return True
        if other is None or isinstance(other, DType):
            return False
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other: Any) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._enum

    def __repr__(self) -> str:
        return f"df.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: {self.name!r}>"

    def __reduce__(self):
        return as_dtype, (self.name,)


# The third argument is TensorFlow's DataType number (types.proto), which `as_dtype` accepts.
float16 = DType("float16", np.float16, 19)
float32 = DType("float32", np.float32, 1)
float64 = DType("float64", np.float64, 2)
int8 = DType("int8", np.int8, 6)
int16 = DType("int16", np.int16, 5)
int32 = DType("int32", np.int32, 3)
int64 = DType("int64", np.int64, 9)
uint8 = DType("uint8", np.uint8, 4)
bool = DType("bool", np.bool_, 10)  # noqa: A001 - the public name mirrors tf.bool
string = DType("string", object, 7)
resource = DType("resource", object, 20)
half = float16
double = float64

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, string, resource)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, double=float64, float=float32)
_BY_NUMPY = {d._np: d for d in _ALL if d is not resource}
_BY_ENUM = {d._enum: d for d in _ALL}
# Python's own types map as in TensorFlow: float -> float32, bool -> bool.  ``int`` (and the
# name "int") is no dtype in TensorFlow: its width is ambiguous, so it is a TypeError there too.
_BY_PYTHON = {builtins.float: float32, builtins.bool: bool, builtins.str: string, bytes: string}


def as_dtype(type_value: Any) -> DType:
    """Converts a DType, numpy dtype or type, Python type, name string or TensorFlow
    ``DataType`` number into a DType."""
    if isinstance(type_value, DType):
        return type_value
    found = None
    if isinstance(type_value, str):
        found = _BY_NAME.get(type_value)
    elif isinstance(type_value, builtins.int) and not isinstance(type_value, builtins.bool):
        found = _BY_ENUM.get(type_value)
    elif type_value in _BY_PYTHON:
        found = _BY_PYTHON[type_value]
    elif type_value is not None and type_value is not builtins.int:
        try:
            np_dtype = np.dtype(type_value)
        except TypeError:
            np_dtype = None
        if np_dtype is not None:
            # numpy's fixed-width text types (``S5``, ``<U3``) are all TensorFlow's string.
            found = string if np_dtype.kind in "SU" else _BY_NUMPY.get(np_dtype)
    if found is None:
        raise TypeError(f"Cannot convert {type_value!r} to a dataflow DType.")
    return found


def numpy_dtype(dtype: DType) -> np.dtype:
    """The numpy dtype object of ``dtype`` (faster to use than ``as_numpy_dtype`` in kernels)."""
    return dtype._np


def string_array(value) -> np.ndarray:
    """``value`` (a ``str``, ``bytes``, nested lists of them, or a numpy array of text) as the
    value of a string tensor: an object array of ``bytes``, ``str`` encoded as UTF-8.

    Anything else (a number, ``None``) is a ``TypeError``: TensorFlow never turns numbers into
    strings implicitly (``as_string`` does it explicitly)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "S":
        array = value.astype(object)
    else:
        array = np.array(value, dtype=object)
    flat = array.reshape(-1)
    for i, item in enumerate(flat):
        if isinstance(item, str):
            flat[i] = item.encode("utf-8")
        elif isinstance(item, np.str_):
            flat[i] = str(item).encode("utf-8")
        elif isinstance(item, (bytes, np.bytes_)):
            flat[i] = builtins.bytes(item)
        else:
            raise TypeError(f"Expected string, but got {item!r} of type '{type(item).__name__}'.")
    return array

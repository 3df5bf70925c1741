"""Element types of tensors, mirroring ``tf.compat.v1`` dtypes on top of numpy dtypes.

Deliberately a subset of TensorFlow's types: float16/32/64, int8/16/32/64, uint8/16/32/64,
complex64/128, bool, ``string`` (and ``resource`` for variable handles, ``variant`` for opaque
values), the quantized types ``qint8``, ``quint8``, ``qint16``, ``quint16``, ``qint32`` (numpy
structured dtypes of one field, as TensorFlow represents them: ``np.dtype([("qint8",
np.int8)])``), and TF1's reference types (``float32_ref``, ...): the dtype of a tensor that names
a variable's storage rather than holding a value (see `dataflow.ops.ref_variables`); its
``base_dtype`` is the value's dtype.  ``as_dtype`` raises ``TypeError`` for the others
(bfloat16, ...), which TensorFlow accepts.

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

    __slots__ = ("name", "_np", "_enum", "_base", "_ref")

    def __new__(cls, type_enum, handle_data=None):
        """The DType of TensorFlow's ``DataType`` number ``type_enum`` (``DType(1)`` is
        ``float32``): there is one instance per type.  ``handle_data`` (what a resource handle
        refers to) is not kept by a DType here: only None is accepted."""
        if handle_data is not None:
            raise ValueError(
                "DType(handle_data=...): the dtype and shape data of a resource handle are not "
                "kept on DTypes here; pass handle_data=None"
            )
        if isinstance(type_enum, builtins.bool) or not isinstance(type_enum, (int, np.integer)):
            raise ValueError(f"invalid literal for int() with base 10: {type_enum!r}")
        found = _BY_ENUM.get(int(type_enum))
        if found is None:
            raise TypeError(f"{type_enum} does not correspond to a valid tensorflow::DataType")
        return found

    def __init__(self, type_enum, handle_data=None):
        """Nothing to set: `__new__` returns the one instance of the type."""

    @classmethod
    def _make(cls, name: str, numpy_dtype: Any, enum: int, base: DType | None = None) -> DType:
        self = object.__new__(cls)
        self.name = name
        self._np = np.dtype(numpy_dtype)
        self._enum = enum
        self._base = base if base is not None else self
        self._ref = None
        return self

    @property
    def as_numpy_dtype(self):
        """The numpy type; for a quantized type the structured numpy dtype, as TensorFlow's."""
        return self._np if self._np.names else self._np.type

    @property
    def base_dtype(self) -> DType:
        """The dtype of the value: itself, or for a reference type the type it refers to."""
        return self._base

    @property
    def is_ref_dtype(self) -> bool:
        """True for TF1's reference types (``float32_ref``): a variable's storage, not a value."""
        return self._base is not self

    _is_ref_dtype = is_ref_dtype  # TensorFlow's spelling

    @property
    def _as_ref(self) -> DType:
        """The reference type of this dtype (``float32_ref`` for ``float32``)."""
        return self._base._ref

    @property
    def real_dtype(self) -> DType:
        """The dtype of the real and imaginary parts: float32 for complex64, float64 for
        complex128, the type itself for the others."""
        return _REAL_OF.get(self._base, self)

    @property
    def as_datatype_enum(self) -> int:
        """TensorFlow's ``DataType`` number for this type (``3`` for int32)."""
        return self._enum

    @property
    def is_numpy_compatible(self) -> bool:
        return self._base not in (resource, variant)

    @property
    def is_string(self) -> bool:
        return self is string

    @property
    def is_complex(self) -> bool:
        return self._np.kind == "c"

    @property
    def is_quantized(self) -> bool:
        return self._base in _QUANTIZED

    @property
    def is_floating(self) -> bool:
        return self._np.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self._np.kind in "iu"

    @property
    def is_unsigned(self) -> bool:
        return self._np.kind == "u" or self._base in (quint8, quint16)

    @property
    def is_bool(self) -> bool:
        return self._np.kind == "b"

    @property
    def is_numeric(self) -> bool:
        return self._np.kind in "iufc"

    @property
    def size(self) -> int:
        return self._np.itemsize

    @property
    def min(self):
        if not self.is_numeric or self.is_complex:
            raise TypeError(f"Cannot find minimum value of {self}.")
        return np.finfo(self._np).min if self.is_floating else np.iinfo(self._np).min

    @property
    def max(self):
        if not self.is_numeric or self.is_complex:
            raise TypeError(f"Cannot find maximum value of {self}.")
        return np.finfo(self._np).max if self.is_floating else np.iinfo(self._np).max

    def is_compatible_with(self, other: Any) -> bool:
        """True when a value of dtype ``other`` may be used where this dtype is expected: the
        same type, or (as in TensorFlow) a reference to a value of this type."""
        other = as_dtype(other)
        return self is other or self is other._base

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
float16 = DType._make("float16", np.float16, 19)
float32 = DType._make("float32", np.float32, 1)
float64 = DType._make("float64", np.float64, 2)
int8 = DType._make("int8", np.int8, 6)
int16 = DType._make("int16", np.int16, 5)
int32 = DType._make("int32", np.int32, 3)
int64 = DType._make("int64", np.int64, 9)
uint8 = DType._make("uint8", np.uint8, 4)
uint16 = DType._make("uint16", np.uint16, 17)
uint32 = DType._make("uint32", np.uint32, 22)
uint64 = DType._make("uint64", np.uint64, 23)
complex64 = DType._make("complex64", np.complex64, 8)
complex128 = DType._make("complex128", np.complex128, 18)
bool = DType._make("bool", np.bool_, 10)  # noqa: A001 - the public name mirrors tf.bool
string = DType._make("string", object, 7)
resource = DType._make("resource", object, 20)
# TensorFlow's type of opaque C++ values (tensor lists, datasets' handles): an object array.
variant = DType._make("variant", object, 21)
qint8 = DType._make("qint8", [("qint8", np.int8)], 11)
quint8 = DType._make("quint8", [("quint8", np.uint8)], 12)
qint16 = DType._make("qint16", [("qint16", np.int16)], 15)
quint16 = DType._make("quint16", [("quint16", np.uint16)], 16)
qint32 = DType._make("qint32", [("qint32", np.int32)], 13)
half = float16
double = float64

_QUANTIZED = (qint8, quint8, qint16, quint16, qint32)
_VALUES = (
    (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool)
    + (complex64, complex128, string, resource, variant)
    + _QUANTIZED
)
# Each value type's reference type, numbered as TensorFlow does (the value's number + 100).
for _value in _VALUES:
    _value._ref = DType._make(f"{_value.name}_ref", _value._np, _value._enum + 100, base=_value)
    globals()[_value._ref.name] = _value._ref
_ALL = _VALUES + tuple(d._ref for d in _VALUES)
QUANTIZED_DTYPES = frozenset(_QUANTIZED + tuple(d._ref for d in _QUANTIZED))
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, double=float64, float=float32)
_REAL_OF = {complex64: float32, complex128: float64}
_BY_NUMPY = {d._np: d for d in _VALUES if d not in (resource, variant)}
_BY_ENUM = {d._enum: d for d in _ALL}
# Python's own types map as in TensorFlow: float -> float32, bool -> bool.  ``int`` and
# ``complex`` (and the name "int") are no dtype in TensorFlow: their width is ambiguous, so they
# are a TypeError there too.
_NO_DTYPE = (builtins.int, builtins.complex)
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
    elif type_value is not None and all(type_value is not t for t in _NO_DTYPE):
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

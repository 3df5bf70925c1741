"""Type specs: descriptions of values (their kind, dtype and static shape) without a value.

`TypeSpec` is the base of every spec (`TensorSpec`, `SparseTensorSpec`, `RaggedTensorSpec`,
and here `IndexedSlicesSpec`, `TensorArraySpec`, `NoneTensorSpec`); it cannot be made itself.
A spec is immutable and compares by its kind and fields.  `type_spec_from_value` gives the spec
of a value: a tensor (or what converts to one: numpy arrays, Python numbers and strings, lists
of them), a composite tensor, a TensorArray, a variable (the spec of its value), or None.
"""

from __future__ import annotations

from typing import Any, Optional

from . import dtypes as _dtypes
from .tensor_shape import TensorShape, as_shape

__all__ = [
    "IndexedSlicesSpec",
    "NoneTensorSpec",
    "TensorArraySpec",
    "TypeSpec",
    "type_spec_from_value",
]


class TypeSpec:
    """The base of type specs (abstract: only its subclasses are made)."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        if cls is TypeSpec:
            raise TypeError("Can't instantiate abstract class TypeSpec")
        return super().__new__(cls)

    @property
    def value_type(self) -> type:
        """The Python type of the values this spec describes."""
        raise TypeError(f"{type(self).__name__} does not name the type of its values")

    def _fields(self) -> tuple:
        """The fields that make the spec (compared by `__eq__`)."""
        raise TypeError(f"{type(self).__name__} has no fields to compare")

    def _compatible_fields(self, other) -> bool:
        """Whether ``other`` (a spec of the same kind) describes values that fit this spec."""
        return self._fields() == other._fields()

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether ``spec_or_value`` (a spec, or a value whose spec is taken) fits this spec:
        the same kind, dtypes and compatible shapes."""
        other = (
            spec_or_value
            if isinstance(spec_or_value, TypeSpec)
            else type_spec_from_value(spec_or_value)
        )
        return type(other) is type(self) and self._compatible_fields(other)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, _hashable(self._fields())))


def _hashable(value):
    if isinstance(value, TensorShape):
        return None if value.ndims is None else tuple(value.as_list())
    if isinstance(value, tuple):
        return tuple(_hashable(v) for v in value)
    return value


def _shape_text(shape: TensorShape) -> str:
    if shape.ndims is None:
        return "TensorShape(None)"
    return f"TensorShape({shape.as_list()})"


class IndexedSlicesSpec(TypeSpec):
    """Describes an `IndexedSlices`: the ``shape`` of the dense tensor it stands for, the
    ``dtype`` of its values, the dtypes of its indices and of its ``dense_shape`` (None when it
    has none), and the shape of its indices (a vector)."""

    __slots__ = (
        "_shape",
        "_values_dtype",
        "_indices_dtype",
        "_dense_shape_dtype",
        "_indices_shape",
    )

    def __init__(
        self,
        shape=None,
        dtype=_dtypes.float32,
        indices_dtype=_dtypes.int64,
        dense_shape_dtype=None,
        indices_shape=None,
    ):
        self._shape = as_shape(shape)
        self._values_dtype = _dtypes.as_dtype(dtype)
        self._indices_dtype = _dtypes.as_dtype(indices_dtype)
        self._dense_shape_dtype = (
            None if dense_shape_dtype is None else _dtypes.as_dtype(dense_shape_dtype)
        )
        self._indices_shape = as_shape(indices_shape).with_rank(1)

    @property
    def value_type(self) -> type:
        from .indexed_slices import IndexedSlices

        return IndexedSlices

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._values_dtype

    def _fields(self) -> tuple:
        return (
            self._shape,
            self._values_dtype,
            self._indices_dtype,
            self._dense_shape_dtype,
            self._indices_shape,
        )

    def _compatible_fields(self, other) -> bool:
        return (
            self._fields()[1:4] == other._fields()[1:4]
            and self._shape.is_compatible_with(other._shape)
            and self._indices_shape.is_compatible_with(other._indices_shape)
        )

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and _hashable(self._fields()) == _hashable(other._fields())

    __hash__ = TypeSpec.__hash__

    def __repr__(self) -> str:
        dense = "None" if self._dense_shape_dtype is None else f"df.{self._dense_shape_dtype.name}"
        return (
            f"IndexedSlicesSpec({_shape_text(self._shape)}, df.{self._values_dtype.name}, "
            f"df.{self._indices_dtype.name}, {dense}, {_shape_text(self._indices_shape)})"
        )


class TensorArraySpec(TypeSpec):
    """Describes a `TensorArray`: the shape of its elements, their dtype, whether it grows
    (``dynamic_size``) and whether it checks its elements' shapes (``infer_shape``)."""

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(
        self, element_shape=None, dtype=_dtypes.float32, dynamic_size=False, infer_shape=True
    ):
        self._element_shape = as_shape(element_shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    @property
    def value_type(self) -> type:
        from .ops.tensor_array_ops import TensorArray

        return TensorArray

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    def _fields(self) -> tuple:
        return (self._element_shape, self._dtype, self._dynamic_size, self._infer_shape)

    def _compatible_fields(self, other) -> bool:
        return self._fields()[1:] == other._fields()[1:] and (
            self._element_shape.is_compatible_with(other._element_shape)
        )

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and _hashable(self._fields()) == _hashable(other._fields())

    __hash__ = TypeSpec.__hash__

    def __repr__(self) -> str:
        return (
            f"TensorArraySpec({_shape_text(self._element_shape)}, df.{self._dtype.name}, "
            f"{self._dynamic_size}, {self._infer_shape})"
        )


class NoneTensorSpec(TypeSpec):
    """The spec of None where a structure of tensors may hold one."""

    __slots__ = ()

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError("NoneTensorSpec takes no arguments")

    @property
    def value_type(self) -> type:
        return type(None)

    def _fields(self) -> tuple:
        return ()

    def is_compatible_with(self, spec_or_value) -> bool:
        return spec_or_value is None or isinstance(spec_or_value, NoneTensorSpec)

    def __repr__(self) -> str:
        return "NoneTensorSpec()"


def type_spec_from_value(value) -> TypeSpec:
    """The spec of ``value`` (see the module docstring); ``TypeError`` for a value that is
    none of those."""
    from .graph import Tensor
    from .indexed_slices import IndexedSlices
    from .ops.tensor_array_ops import TensorArray
    from .ragged_tensor import RaggedTensor, RaggedTensorSpec
    from .sparse_tensor import SparseTensor, SparseTensorSpec
    from .tensor_spec import TensorSpec
    from .variables import Variable

    if value is None:
        return NoneTensorSpec()
    if isinstance(value, TypeSpec):
        raise TypeError(f"{value!r} is a spec, not a value")
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, Variable):
        return TensorSpec(value.shape, value.dtype.base_dtype)
    if isinstance(value, SparseTensor):
        return SparseTensorSpec.from_value(value)
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec(value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype)
    if isinstance(value, IndexedSlices):
        dense = value.dense_shape
        return IndexedSlicesSpec(
            _dense_shape_of(value),
            value.values.dtype,
            value.indices.dtype,
            None if dense is None else dense.dtype,
            value.indices.shape,
        )
    if isinstance(value, TensorArray):
        return TensorArraySpec(
            value.element_shape, value.dtype, value._dynamic_size, value._infer_shape
        )
    try:
        return TensorSpec.from_value(_converted(value))
    except (TypeError, ValueError):
        raise TypeError(
            f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}."
        ) from None


def _converted(value: Any):
    """What a value becomes as a tensor (strings are strings), for its spec."""
    import numpy as np

    array = np.asarray(value)
    if array.dtype.kind in "SUO":
        _dtypes.string_array(value)  # TypeError unless it is text
        return _StringValue(array.shape)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"no tensor of {array.dtype}")
    return value


class _StringValue:
    """Stands for a string value in `TensorSpec.from_value` (its shape and dtype)."""

    def __init__(self, shape):
        self.shape = TensorShape(list(shape))
        self.dtype = _dtypes.string


def _dense_shape_of(value) -> Optional[TensorShape]:
    from .ops.extra_array_ops import get_static_value

    dense = value.dense_shape
    known = None if dense is None else get_static_value(dense)
    if known is not None:
        return TensorShape([int(d) for d in known])
    rest = value.values.shape[1:] if value.values.shape.ndims else None
    if rest is None:
        return TensorShape(None)
    return TensorShape([None]).concatenate(rest)

"""Type specs: descriptions of values (their kind, dtype and static shape) without a value.

`TypeSpec` is the base of every spec (`TensorSpec`, `SparseTensorSpec`, `RaggedTensorSpec`,
`TensorArraySpec`, and here `IndexedSlicesSpec` and `NoneTensorSpec`); it cannot be made itself.
A spec is immutable and compares by its kind and fields.  Every spec is a `TraceType`
(`trace_type`), as in TensorFlow: a traced function keys an argument by its spec, reuses a
trace whose spec is a supertype (`is_subtype_of`), and relaxes specs with
`most_specific_common_supertype`; a spec whose values can be a traced function's arguments
also makes the placeholders of one (`placeholder_value`) and gives the tensors a call feeds
(`to_tensors`).  `type_spec_from_value` gives the spec
of a value: a tensor (or what converts to one: numpy arrays, Python numbers and strings, lists
of them), a composite tensor, a TensorArray, a variable (the spec of its value), or None.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from . import dtypes as _dtypes
from .tensor_shape import TensorShape, as_shape
from .trace_type import TraceType

__all__ = [
    "IndexedSlicesSpec",
    "placeholder_part",
    "NoneTensorSpec",
    "TypeSpec",
    "register_spec_of",
    "type_spec_from_value",
]


class TypeSpec(TraceType):
    """The base of type specs (abstract: only its subclasses are made).

    As a `TraceType`: by default a spec is a subtype only of an equal spec, and two specs have
    a common supertype only when they are equal; specs with shapes relax them instead.  A spec
    whose values cannot be a traced function's arguments says so in `placeholder_value`."""

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

    # -- as a trace type ------------------------------------------------------------------------
    def is_subtype_of(self, other) -> bool:
        """Whether every value of this spec is one of ``other`` (by default: they are equal)."""
        return self == other

    def most_specific_common_supertype(self, others) -> Optional[TypeSpec]:
        """The narrowest spec of which this one and ``others`` are subtypes (by default this
        one, when they are all equal), or None."""
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context=None):
        raise TypeError(
            f"{self!r} describes values that a traced function cannot take as an argument"
        )

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()

    def __ne__(self, other) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self).__name__, _hashable(self._fields())))


# `tensor_spec.TensorSpec`, which builds on this module, registers itself here
# (`register_tensor_spec_class`), so that a spec defined here can give the specs of its parts.
_tensor_spec_class: Optional[type] = None


def register_tensor_spec_class(cls: type) -> None:
    global _tensor_spec_class
    _tensor_spec_class = cls


def placeholder_part(dtype, shape, placeholder_context, default_name: str):
    """A placeholder of ``dtype`` and ``shape`` in the default graph: one part of an argument
    a trace receives (named after the argument when ``placeholder_context`` names it)."""
    from .graph import get_default_graph
    from .op_registry import apply_op

    name = getattr(placeholder_context, "name", None) or default_name
    attrs = {"dtype": _dtypes.as_dtype(dtype), "shape": as_shape(shape)}
    return apply_op("Placeholder", (), attrs, name=name, graph=get_default_graph()).outputs[0]


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

    # -- as a trace type: a traced function's argument is its values, indices (and shape) -----
    def is_subtype_of(self, other) -> bool:
        """Whether every IndexedSlices of this spec fits ``other``: the same dtypes, and shapes
        (dense and of the indices) that are subtypes of ``other``'s."""
        return (
            type(other) is IndexedSlicesSpec
            and self._fields()[1:4] == other._fields()[1:4]
            and self._shape.is_subtype_of(other._shape)
            and self._indices_shape.is_subtype_of(other._indices_shape)
        )

    def most_specific_common_supertype(self, others) -> Optional[IndexedSlicesSpec]:
        if any(
            type(o) is not IndexedSlicesSpec or o._fields()[1:4] != self._fields()[1:4]
            for o in others
        ):
            return None
        return IndexedSlicesSpec(
            self._shape.most_specific_common_supertype([o._shape for o in others]),
            self._values_dtype,
            self._indices_dtype,
            self._dense_shape_dtype,
            self._indices_shape.most_specific_common_supertype([o._indices_shape for o in others]),
        )

    def flatten(self) -> list:
        """The specs of the parts: ``values`` (one row per index), ``indices`` and, when the
        slices have one, ``dense_shape``."""
        TensorSpec = _tensor_spec_class  # noqa: N806 - a class
        rows = self._indices_shape[0] if self._indices_shape.ndims == 1 else None
        row_shape = self._shape[1:] if self._shape.ndims is not None else TensorShape(None)
        specs = [
            TensorSpec(TensorShape([rows]).concatenate(row_shape), self._values_dtype),
            TensorSpec(self._indices_shape, self._indices_dtype),
        ]
        if self._dense_shape_dtype is not None:
            specs.append(TensorSpec([self._shape.ndims], self._dense_shape_dtype))
        return specs

    def placeholder_value(self, placeholder_context=None):
        """An IndexedSlices of placeholders, one per part (`flatten`)."""
        parts = [
            placeholder_part(spec.dtype, spec.shape, placeholder_context, "IndexedSlices")
            for spec in self.flatten()
        ]
        return self.from_tensors(iter(parts))

    def to_tensors(self, value) -> list:
        parts = [value.values, value.indices]
        return parts if self._dense_shape_dtype is None else parts + [value.dense_shape]

    def from_tensors(self, tensors):
        from .indexed_slices import IndexedSlices

        values, indices = next(tensors), next(tensors)
        dense_shape = None if self._dense_shape_dtype is None else next(tensors)
        return IndexedSlices(values, indices, dense_shape)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and _hashable(self._fields()) == _hashable(other._fields())

    __hash__ = TypeSpec.__hash__

    def __repr__(self) -> str:
        dense = "None" if self._dense_shape_dtype is None else f"df.{self._dense_shape_dtype.name}"
        return (
            f"IndexedSlicesSpec({_shape_text(self._shape)}, df.{self._values_dtype.name}, "
            f"df.{self._indices_dtype.name}, {dense}, {_shape_text(self._indices_shape)})"
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


# -- the spec of a value ---------------------------------------------------------------------------
# Each kind of value has its spec made by the module that defines the kind (`register_spec_of`):
# tensors and plain values in `tensor_spec`, composites in their modules, TensorArrays and
# variables with their ops.  A value's class and its bases are looked up in order.
_spec_functions: dict[type, Callable[[Any], TypeSpec]] = {}


def register_spec_of(value_type: type, spec_of: Callable[[Any], TypeSpec]) -> None:
    """Makes ``spec_of(value)`` the spec of values of ``value_type`` (and its subclasses)."""
    _spec_functions[value_type] = spec_of


def type_spec_from_value(value) -> TypeSpec:
    """The spec of ``value`` (see the module docstring); ``TypeError`` for a value that is
    none of those."""
    if value is None:
        return NoneTensorSpec()
    if isinstance(value, TypeSpec):
        raise TypeError(f"{value!r} is a spec, not a value")
    for kind in type(value).__mro__:
        spec_of = _spec_functions.get(kind)
        if spec_of is not None:
            return spec_of(value)
    raise TypeError(f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}.")

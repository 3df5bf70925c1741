"""``df.TensorSpec``: the dtype and (possibly partial) shape a tensor must have, as TensorFlow's.

A spec describes tensors without holding one: ``df.function``'s ``input_signature`` is a list
of them, ``get_concrete_function`` takes them in place of arguments, and ``while_loop`` takes
one as a loop variable's shape invariant.  Specs are immutable and hashable, so they serve as
keys of the concrete-function cache.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import dtypes as _dtypes
from .graph import Tensor
from .tensor_shape import TensorShape, as_shape
from .type_spec import TypeSpec, placeholder_part, register_spec_of, register_tensor_spec_class


class TensorSpec(TypeSpec):
    """Describes a tensor: ``shape`` (dims may be None, or the whole shape for any rank),
    ``dtype`` and an optional ``name`` (the name of the placeholder a trace makes for it)."""

    __slots__ = ("_shape", "_dtype", "_name")

    @property
    def value_type(self) -> type:
        from .graph import Tensor

        return Tensor

    def __init__(self, shape, dtype=_dtypes.float32, name: Optional[str] = None):
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name: Optional[str] = None) -> TensorSpec:
        """The spec of a tensor (a graph `Tensor`, or anything with ``dtype`` and ``shape``)."""
        return cls(tensor.shape, tensor.dtype, name)

    @classmethod
    def from_value(cls, value) -> TensorSpec:
        """The spec of a tensor or of a value a tensor is made from (numpy array, Python number)."""
        if (
            hasattr(value, "dtype")
            and hasattr(value, "shape")
            and not isinstance(value, np.ndarray)
        ):
            return cls(value.shape, value.dtype)
        array = np.asarray(value)
        if array.dtype == np.float64 and not isinstance(value, np.ndarray):
            array = array.astype(np.float32)  # Python floats become float32, as constant() does
        if array.dtype == np.int64 and not isinstance(value, np.ndarray):
            array = array.astype(np.int32)
        return cls(array.shape, array.dtype)

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def name(self) -> Optional[str]:
        return self._name

    def is_compatible_with(self, spec_or_tensor) -> bool:
        """Whether a tensor (or spec) of ``spec_or_tensor``'s dtype and shape fits this spec."""
        return self._dtype == _dtypes.as_dtype(
            spec_or_tensor.dtype
        ) and self._shape.is_compatible_with(spec_or_tensor.shape)

    def most_specific_compatible_type(self, other: TensorSpec) -> TensorSpec:
        """The narrowest spec both fit: the dims they agree on, None elsewhere."""
        if self._dtype != other.dtype:
            raise ValueError(f"{self} and {other} have different dtypes")
        return TensorSpec(self._shape.most_specific_compatible_shape(other.shape), self._dtype)

    # -- as a trace type ------------------------------------------------------------------------
    def is_subtype_of(self, other) -> bool:
        """Whether every tensor of this spec fits ``other``: the same dtype and name, and a
        shape that is a subtype of ``other``'s (``(2,)`` is one of ``(None,)``)."""
        return (
            type(other) is TensorSpec
            and self._dtype == other._dtype
            and self._name == other._name
            and self._shape.is_subtype_of(other._shape)
        )

    def most_specific_common_supertype(self, others) -> Optional[TensorSpec]:
        """The narrowest spec this one and ``others`` fit (their shapes relaxed where they
        differ), or None when a dtype or name differs."""
        if any(
            type(o) is not TensorSpec or o._dtype != self._dtype or o._name != self._name
            for o in others
        ):
            return None
        shape = self._shape.most_specific_common_supertype([o._shape for o in others])
        return TensorSpec(shape, self._dtype, self._name)

    def placeholder_value(self, placeholder_context=None) -> Tensor:
        """A placeholder of this spec in the default graph (named after the argument when
        ``placeholder_context`` names it, else after this spec)."""
        return placeholder_part(
            self._dtype, self._shape, placeholder_context, self._name or "Placeholder"
        )

    def to_tensors(self, value) -> list:
        return [value]

    def from_tensors(self, tensors):
        return next(tensors)

    def flatten(self) -> list:
        return [self]

    def _key(self) -> tuple:
        return (self._shape.as_tuple() if self._shape.dims is not None else None, self._dtype)

    def __eq__(self, other) -> bool:
        return (
            type(other) is TensorSpec and self._key() == other._key() and self._name == other._name
        )

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"TensorSpec(shape={self._shape}, dtype=df.{self._dtype.name}, name={self._name!r})"


# -- the spec of a tensor, and of what converts to one ---------------------------------------------
def _converted(value: Any):
    """What a value becomes as a tensor (strings are strings), for its spec."""
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


def _spec_of_value(value) -> TensorSpec:
    """The spec of a value that converts to a tensor: a numpy array, a Python number or string,
    a (nested) list of them."""
    try:
        return TensorSpec.from_value(_converted(value))
    except (TypeError, ValueError):
        raise TypeError(
            f"Could not build a TypeSpec for {value!r} of unsupported type {type(value)}."
        ) from None


register_tensor_spec_class(TensorSpec)
register_spec_of(Tensor, lambda value: TensorSpec(value.shape, value.dtype))
register_spec_of(object, _spec_of_value)

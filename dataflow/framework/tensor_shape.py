"""Static shapes that may be partly unknown, as in ``tf.TensorShape``.

A dimension is an ``int`` or ``None`` (unknown); the rank itself may be unknown
(``TensorShape(None)``).  What indexing and iterating a shape give follows TensorFlow's
switch: after ``disable_v2_tensorshape()`` (the default, as ``tf.compat.v1`` after
``disable_v2_behavior()``), `Dimension` objects, as TensorFlow 1.x code expects
(``x.get_shape()[1].value``); a known one is an ``int`` subclass, so it also works wherever a
number does.  After ``enable_v2_tensorshape()``, plain ``int`` and ``None``, as TensorFlow 2.
``shape.dims`` is always the list of `Dimension` objects and ``as_list()`` always plain values.

dataflow's own modules read an unknown dimension as ``None`` whatever the switch: the switch
is a view for programs, and the library's shape inference (``if shape[0] is None``) does not
change with what a program asked for.  Which code is reading is told by the caller's module,
and only an unknown dimension under the TensorFlow 1.x view asks.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import Optional, Union

import numpy as np

ShapeLike = Union["TensorShape", Iterable[Optional[int]], None]

# False: indexing and iterating give `Dimension` objects (TensorFlow 1.x, the default).
_v2_tensorshape = False
_LIBRARY_PACKAGES = ("dataflow", "primitives", "executor")


def enable_v2_tensorshape() -> None:
    """Indexing and iterating a shape give plain ``int`` and ``None``, as TensorFlow 2."""
    global _v2_tensorshape
    _v2_tensorshape = True


def disable_v2_tensorshape() -> None:
    """Indexing and iterating a shape give `Dimension` objects (``shape[1].value``), as
    TensorFlow 1.x: the default here, as in ``tf.compat.v1`` after ``disable_v2_behavior()``."""
    global _v2_tensorshape
    _v2_tensorshape = False


def _program_reads(depth: int = 2) -> bool:
    """Whether the code that indexed or iterated a shape (``depth`` frames up) is a program's
    rather than this library's (see the module docstring)."""
    module = sys._getframe(depth).f_globals.get("__name__", "")
    return module.partition(".")[0] not in _LIBRARY_PACKAGES


class TensorShape:
    """A possibly partial shape.  Immutable."""

    __slots__ = ("_dims",)

    def __init__(self, dims: ShapeLike):
        if isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif dims is None:
            self._dims = None
        elif isinstance(dims, (int, np.integer)):
            self._dims = (_as_dim(dims),)
        else:
            self._dims = tuple(_as_dim(d) for d in dims)

    @property
    def dims(self) -> Optional[list[Dimension]]:
        """The dimensions as `Dimension` objects (TensorFlow 1.x), or None for an unknown rank."""
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def ndims(self) -> Optional[int]:
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self) -> list[Optional[int]]:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_tuple(self) -> Optional[tuple]:
        return self._dims

    def is_fully_defined(self) -> bool:
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self) -> Optional[int]:
        if not self.is_fully_defined():
            return None
        return math.prod(self._dims)

    def is_compatible_with(self, other: ShapeLike) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other: ShapeLike) -> TensorShape:
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape(a if a is not None else b for a, b in zip(self._dims, other._dims))

    def most_specific_compatible_shape(self, other: ShapeLike) -> TensorShape:
        """The most specific shape that both ``self`` and ``other`` are compatible with."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape(a if a == b else None for a, b in zip(self._dims, other._dims))

    def is_subtype_of(self, other: ShapeLike) -> bool:
        """Whether every shape this one admits, ``other`` admits too: ``other``'s rank is
        unknown, or it has this rank and each of its dimensions is unknown or this one's (so
        ``(2,)`` is a subtype of ``(None,)``, not the other way round)."""
        other = as_shape(other)
        if other._dims is None:
            return True
        if self._dims is None or len(self._dims) != len(other._dims):
            return False
        return all(b is None or a == b for a, b in zip(self._dims, other._dims))

    def most_specific_common_supertype(self, others) -> TensorShape:
        """The narrowest shape that this one and each of ``others`` are subtypes of: the
        dimensions all agree on, None elsewhere, and an unknown rank where ranks differ."""
        result = self
        for other in others:
            result = result.most_specific_compatible_shape(other)
        return result

    def concatenate(self, other: ShapeLike) -> TensorShape:
        """The dimensions of ``self`` followed by those of ``other`` (unknown rank if either
        rank is unknown)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __add__(self, other: ShapeLike) -> TensorShape:
        return self.concatenate(other)

    def __radd__(self, other: ShapeLike) -> TensorShape:
        return as_shape(other).concatenate(self)

    def with_rank(self, rank: int) -> TensorShape:
        """This shape, with an unknown rank made ``rank``; a ``ValueError`` for another rank."""
        try:
            return self.merge_with(unknown_shape(rank))
        except ValueError:
            raise ValueError(f"Shape {self} must have rank {rank}") from None

    def with_rank_at_least(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank: int) -> TensorShape:
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_is_compatible_with(self, other: ShapeLike) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def assert_has_rank(self, rank: int) -> None:
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other: ShapeLike) -> None:
        other = as_shape(other)
        if self._dims is not None and other._dims is not None and len(self) != len(other):
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_is_fully_defined(self) -> None:
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        if _v2_tensorshape or None not in self._dims or not _program_reads():
            return iter(self._dims)
        return iter([Dimension(d) for d in self._dims])

    def __getitem__(self, key):
        if isinstance(key, slice):
            return TensorShape(None if self._dims is None else self._dims[key])
        dim = None if self._dims is None else self._dims[key]
        if _v2_tensorshape:
            return dim
        if dim is not None:
            return _KnownDimension(dim)
        return _UnknownDimension() if _program_reads() else None

    def __eq__(self, other) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __repr__(self) -> str:
        return f"TensorShape({self.as_list() if self._dims is not None else None})"

    def __str__(self) -> str:
        """``(2, ?)`` as TensorFlow 1.x prints it; ``(2, None)`` after
        ``enable_v2_tensorshape()``, as TensorFlow 2."""
        if self._dims is None:
            return "<unknown>"
        unknown = "None" if _v2_tensorshape else "?"
        inner = ", ".join(unknown if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


class Dimension:
    """One dimension of a static shape as TensorFlow 1.x models it: ``value`` is an ``int`` or
    None (unknown).  ``Dimension(3)`` is an ``int`` (of the subclass `_KnownDimension`), so it
    works wherever a number does; ``Dimension(None)`` compares and computes to unknown:
    ``Dimension(None) == 3`` is None and ``Dimension(None) + 1`` is ``Dimension(None)``."""

    def __new__(cls, value):
        value = _dimension_value_of(value)
        if value is None:
            return _UnknownDimension()
        return _KnownDimension(value)

    def __init__(self, value=None):
        """Nothing to set: `__new__` made the known or unknown dimension of ``value``."""

    @property
    def value(self) -> Optional[int]:
        raise NotImplementedError

    def is_compatible_with(self, other) -> bool:
        other = Dimension(other)
        return self.value is None or other.value is None or self.value == other.value

    def assert_is_compatible_with(self, other) -> None:
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {Dimension(other)} are not compatible")

    def merge_with(self, other) -> Dimension:
        other = Dimension(other)
        self.assert_is_compatible_with(other)
        return self if self.value is not None else other


class _KnownDimension(int, Dimension):
    """A known dimension: an ``int`` with TensorFlow 1.x's ``value``."""

    __new__ = int.__new__

    @property
    def value(self) -> int:
        return int(self)

    def __repr__(self) -> str:
        return f"Dimension({int(self)})"

    __str__ = int.__repr__


class _UnknownDimension(Dimension):
    """An unknown dimension: comparisons give None, arithmetic gives unknown."""

    __new__ = object.__new__

    @property
    def value(self) -> None:
        return None

    def __repr__(self) -> str:
        return "Dimension(None)"

    def __str__(self) -> str:
        return "?"

    def __eq__(self, other):
        return None

    def __ne__(self, other):
        return None

    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    __hash__ = None

    def _unknown(self, other=None) -> Dimension:
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unknown
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _unknown


def _dimension_value_of(value) -> Optional[int]:
    if isinstance(value, Dimension):
        return value.value
    if value is None:
        return None
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(
            "Dimension value must be integer or None or have an __index__ method, got value "
            f"'{value!r}' with type '{type(value)}'"
        )
    value = value.__index__()
    if value < 0:
        raise ValueError(f"Dimension {value} must be >= 0")
    return value


def _as_dim(d) -> Optional[int]:
    if isinstance(d, Dimension):
        d = d.value
    if d is None or d == -1 and not isinstance(d, bool):
        return None
    if isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0:
        return int(d)
    raise TypeError(f"A dimension must be a non-negative int or None, got {d!r}")


def as_shape(shape: ShapeLike) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank: Optional[int] = None) -> TensorShape:
    """A shape of unknown rank, or of rank ``rank`` with every dimension unknown."""
    return TensorShape(None if rank is None else [None] * rank)


def dimension_value(dimension) -> Optional[int]:
    """A dimension (an ``int``, None or a `Dimension`) as a plain ``int`` or None."""
    if isinstance(dimension, Dimension):
        return dimension.value
    return dimension


def scalar() -> TensorShape:
    return TensorShape(())

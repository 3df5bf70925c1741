"""Static shapes that may be partly unknown, as in ``tf.TensorShape``.

A dimension is an ``int`` or ``None`` (unknown); the rank itself may be unknown
(``TensorShape(None)``).  Indexing a shape gives plain ``int``/``None`` values, as
``tf.compat.v1`` does under TensorFlow 2.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Optional, Union

import numpy as np

ShapeLike = Union["TensorShape", Iterable[Optional[int]], None]


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
    def dims(self) -> Optional[list[Optional[int]]]:
        return None if self._dims is None else list(self._dims)

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
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

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
        return f"TensorShape({self.dims})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("?" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"


def _as_dim(d) -> Optional[int]:
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
    """A dimension as a plain ``int`` or ``None`` (dimensions already are: TensorFlow 2's
    behaviour of ``tf.compat.v1``)."""
    return dimension


def scalar() -> TensorShape:
    return TensorShape(())

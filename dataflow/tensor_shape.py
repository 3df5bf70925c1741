"""Static shapes that may be partly unknown, as in ``tf.TensorShape``.

A dimension is an ``int`` or ``None`` (unknown); the rank itself may be unknown
(``TensorShape(None)``).  Indexing a shape gives plain ``int``/``None`` values, as
``tf.compat.v1`` does under TensorFlow 2.
"""

from __future__ import annotations

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
        return int(np.prod(self._dims, dtype=np.int64))

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


def unknown_shape() -> TensorShape:
    return TensorShape(None)


def scalar() -> TensorShape:
    return TensorShape(())

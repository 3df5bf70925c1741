"""``df.lookup.experimental``: TensorFlow 1.x's mutable tables."""

from ..lookup_ops import DenseHashTable, MutableHashTable

__all__ = ["DenseHashTable", "MutableHashTable"]

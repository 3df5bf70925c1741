"""`IndexedSlices`: a tensor given by some of its rows, the way sparse gradients travel.

``IndexedSlices(values, indices, dense_shape)`` stands for the dense tensor of shape
``dense_shape`` that is zero except at rows ``indices``, where it holds ``values`` (rows named
twice add up).  The gradient of ``gather``/``embedding_lookup`` with respect to its params is
one: a batch touching 64 rows of a 50,000-row embedding sends back 64 rows, not 50,000, and an
optimizer updates only those rows (``_apply_sparse``).

It is not a Tensor.  Where an op needs a Tensor it is converted to the dense one (an
``UnsortedSegmentSum`` of its values into ``dense_shape[0]`` rows), as TensorFlow does, with a
warning when that tensor would be large (the conversion is registered by `ops.segment_ops`,
where that op is defined, and unary minus by `ops.overloads`).  `gradients` keeps it sparse
where TensorFlow does: sums of several IndexedSlices concatenate their rows, a mix with dense
gradients becomes dense, and ops that only pass a gradient on (identities, variable reads, a
cond's Switch and Merge) pass it on unchanged.  ``Session.run`` fetches one as an
`IndexedSlicesValue` of arrays.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from . import dtypes as _dtypes
from .graph import Tensor
from .tensor_conversion import convert_to_tensor

__all__ = ["IndexedSlices", "IndexedSlicesValue", "convert_to_tensor_or_indexed_slices"]

# Converting to a dense tensor of more elements than this warns, as TensorFlow does.
LARGE_DENSE_ELEMENTS = 100_000_000


class IndexedSlicesValue(NamedTuple):
    """The value of an `IndexedSlices` that ``Session.run`` returns."""

    values: np.ndarray
    indices: np.ndarray
    dense_shape: Optional[np.ndarray]


class IndexedSlices:
    """Rows ``indices`` of a tensor of shape ``dense_shape``, holding ``values``."""

    def __init__(self, values, indices, dense_shape=None):
        self._values = convert_to_tensor(values, name="values")
        self._indices = convert_to_tensor(indices, name="indices")
        self._dense_shape = None if dense_shape is None else convert_to_tensor(dense_shape)
        if not self._indices.dtype.is_integer:
            raise TypeError(f"IndexedSlices indices must be integers, got {self._indices.dtype}")

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def dense_shape(self) -> Optional[Tensor]:
        return self._dense_shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._values.dtype

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def device(self) -> str:
        return getattr(self._values, "device", "")

    @property
    def shape(self):
        """The static shape of the dense tensor: the values' row shape under the known
        ``dense_shape`` (or an unknown number of rows)."""
        from .tensor_shape import TensorShape

        if self._dense_shape is not None and self._dense_shape.op.type == "Const":
            return TensorShape([int(d) for d in self._dense_shape.op.attrs["value"]])
        return TensorShape([None]).concatenate(self._values.shape[1:])

    def get_shape(self):
        return self.shape

    def consumers(self) -> list:
        return self._values.consumers()

    def __repr__(self) -> str:
        """Eagerly, the values of its parts as TensorFlow 2's ``str`` shows them (no
        ``dense_shape`` when it has none); in a graph, the names of its tensors."""
        parts = [p for p in (self._indices, self._values, self._dense_shape) if p is not None]
        if all(part._is_eager for part in parts):
            shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
            return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"
        shape = "None" if self._dense_shape is None else self._dense_shape.name
        return (
            f"IndexedSlices(indices={self._indices.name}, values={self._values.name}, "
            f"dense_shape={shape})"
        )

    # -- what Session.run fetches and feeds for it ------------------------------------------------
    def _fetch_structure(self) -> IndexedSlicesValue:
        return IndexedSlicesValue(self._values, self._indices, self._dense_shape)

    def _feed_pairs(self, value) -> list:
        value = IndexedSlicesValue(*value)
        pairs = [(self._values, value.values), (self._indices, value.indices)]
        if self._dense_shape is not None and value.dense_shape is not None:
            pairs.append((self._dense_shape, value.dense_shape))
        return pairs


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    """``value`` itself when it is IndexedSlices, else ``convert_to_tensor(value)``."""
    if isinstance(value, IndexedSlices):
        if dtype is not None and _dtypes.as_dtype(dtype) is not value.dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for "
                f"IndexedSlices with dtype {value.dtype.name}"
            )
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)

"""`SparseTensor`: a tensor given by the coordinates and values of its non-default elements.

``SparseTensor(indices, values, dense_shape)``, as TensorFlow 1.x: ``indices`` is an int64
``[N, rank]`` tensor of coordinates (in row-major order for the ops that need it), ``values``
the ``[N]`` values there, ``dense_shape`` the int64 ``[rank]`` shape of the whole.  It is three
tensors, not one: ``Session.run`` fetches it as a `SparseTensorValue` and feeds it from one
(or from an ``(indices, values, dense_shape)`` tuple), and ``sparse_placeholder``
(`dataflow.ops.sparse_ops`) makes one to feed.  The ops that read it are there too.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import dtypes as _dtypes
from .graph import Tensor, name_scope
from .tensor_conversion import convert_to_tensor
from .tensor_shape import TensorShape, as_shape
from .type_spec import TypeSpec, register_spec_of

__all__ = ["SparseTensor", "SparseTensorSpec", "SparseTensorValue"]


class SparseTensorValue(NamedTuple):
    """The value of a `SparseTensor` that ``Session.run`` returns."""

    indices: np.ndarray
    values: np.ndarray
    dense_shape: np.ndarray


class SparseTensor:
    """The tensor of shape ``dense_shape`` holding ``values`` at ``indices``, zero elsewhere."""

    def __init__(self, indices, values, dense_shape):
        with name_scope("SparseTensor"):
            self._indices = convert_to_tensor(indices, dtype=_dtypes.int64, name="indices")
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = convert_to_tensor(
                dense_shape, dtype=_dtypes.int64, name="dense_shape"
            )
        self._indices.shape.with_rank(2)
        self._values.shape.with_rank(1)
        self._dense_shape.shape.with_rank(1)
        rows = self._indices.shape[0]
        if not TensorShape([rows]).is_compatible_with(self._values.shape):
            raise ValueError(
                f"SparseTensor has {rows} indices but values of shape {self._values.shape}"
            )

    @classmethod
    def from_value(cls, value) -> SparseTensor:
        """A SparseTensor of constants holding ``value`` (a `SparseTensorValue`)."""
        if isinstance(value, SparseTensor):
            return value
        return cls(*SparseTensorValue(*value))

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def dense_shape(self) -> Tensor:
        return self._dense_shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._values.dtype

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def shape(self) -> TensorShape:
        """The static dense shape: known where ``dense_shape`` is a constant or its rank is."""
        from .tensor_conversion import numpy_value_or_none

        known = numpy_value_or_none(self._dense_shape)
        if known is not None:
            return TensorShape([int(d) for d in known])
        rank = self._dense_shape.shape[0] if self._dense_shape.shape.ndims == 1 else None
        return TensorShape(None) if rank is None else TensorShape([None] * rank)

    def get_shape(self) -> TensorShape:
        return self.shape

    def eval(self, feed_dict=None, session=None):
        from .session_stack import _session_for_eval

        return _session_for_eval(session, self.graph).run(self, feed_dict)

    def __repr__(self) -> str:
        parts = (self._indices, self._values, self._dense_shape)
        if all(t._is_eager for t in parts):  # TensorFlow 2 shows an eager one's values
            indices, values, dense_shape = (str(t) for t in parts)
            return f"SparseTensor(indices={indices}, values={values}, dense_shape={dense_shape})"
        return (
            f"SparseTensor(indices={self._indices.name}, values={self._values.name}, "
            f"dense_shape={self._dense_shape.name})"
        )

    # -- what Session.run fetches and feeds for it ------------------------------------------------
    def _fetch_structure(self) -> SparseTensorValue:
        return SparseTensorValue(self._indices, self._values, self._dense_shape)

    def _feed_pairs(self, value) -> list:
        indices, values, dense_shape = value
        return [
            (self._indices, indices),
            (self._values, values),
            (self._dense_shape, dense_shape),
        ]


class SparseTensorSpec(TypeSpec):
    """Describes a `SparseTensor`: the (possibly partial) ``shape`` of the dense tensor it stands
    for and the ``dtype`` of its values, as TensorFlow's ``tf.SparseTensorSpec``.

    ``while_loop`` takes one as the shape invariant of a SparseTensor loop variable; only a
    SparseTensor fits it, never a dense tensor.  Immutable and hashable, like `TensorSpec`.
    """

    __slots__ = ("_shape", "_dtype")

    @property
    def value_type(self) -> type:
        return SparseTensor

    def __init__(self, shape=None, dtype=_dtypes.float32):
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)

    @classmethod
    def from_value(cls, value: SparseTensor) -> SparseTensorSpec:
        return cls(value.shape, value.dtype)

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether ``spec_or_value`` (a SparseTensor or SparseTensorSpec) fits this spec: its
        values' dtype is this one and its dense shape is compatible with this shape."""
        if isinstance(spec_or_value, SparseTensor):
            spec_or_value = SparseTensorSpec.from_value(spec_or_value)
        if not isinstance(spec_or_value, SparseTensorSpec):
            return False
        return self._dtype == spec_or_value.dtype and self._shape.is_compatible_with(
            spec_or_value.shape
        )

    def _key(self) -> tuple:
        return (self._shape.as_tuple() if self._shape.dims is not None else None, self._dtype)

    def __eq__(self, other) -> bool:
        return type(other) is SparseTensorSpec and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(("SparseTensorSpec", *self._key()))

    def __repr__(self) -> str:
        return f"SparseTensorSpec(shape={self._shape}, dtype=df.{self._dtype.name})"


register_spec_of(SparseTensor, SparseTensorSpec.from_value)

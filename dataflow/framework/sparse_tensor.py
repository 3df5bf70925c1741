"""`SparseTensor`: a tensor given by the coordinates and values of its non-default elements.

``SparseTensor(indices, values, dense_shape)``, as TensorFlow 1.x: ``indices`` is an int64
``[N, rank]`` tensor of coordinates (in row-major order for the ops that need it), ``values``
the ``[N]`` values there, ``dense_shape`` the int64 ``[rank]`` shape of the whole.  It is three
tensors, not one: ``Session.run`` fetches it as a `SparseTensorValue` and feeds it from one
(or from an ``(indices, values, dense_shape)`` tuple), and ``sparse_placeholder``
(`dataflow.ops.sparse_ops`) makes one to feed.  The ops that read it are there too.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from . import dtypes as _dtypes
from .graph import Tensor, name_scope
from .tensor_conversion import convert_to_tensor
from .tensor_shape import TensorShape, as_shape
from .type_spec import TypeSpec, placeholder_part, register_spec_of

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
        # The dense shape known statically besides what ``dense_shape`` tells: a trace's
        # placeholder argument knows its spec's (`SparseTensorSpec.placeholder_value`).
        self._known_shape = TensorShape(None)

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
        shape = TensorShape(None) if rank is None else TensorShape([None] * rank)
        return shape.merge_with(self._known_shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    def eval(self, feed_dict=None, session=None):
        from .session_stack import _session_for_eval

        return _session_for_eval(session, self.graph).run(self, feed_dict)

    def __repr__(self) -> str:
        """Eagerly, the values of its parts, as TensorFlow 2 prints them; in a graph, the
        names of its tensors."""
        parts = (self._indices, self._values, self._dense_shape)
        if all(part._is_eager for part in parts):
            indices, values, dense_shape = (str(part) for part in parts)
        else:
            indices, values, dense_shape = (part.name for part in parts)
        return f"SparseTensor(indices={indices}, values={values}, dense_shape={dense_shape})"

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

    # -- as a trace type: a traced function's argument is three placeholders -------------------
    def is_subtype_of(self, other) -> bool:
        """Whether every SparseTensor of this spec fits ``other``: the same dtype, and a dense
        shape that is a subtype of ``other``'s."""
        return (
            type(other) is SparseTensorSpec
            and self._dtype == other._dtype
            and self._shape.is_subtype_of(other._shape)
        )

    def most_specific_common_supertype(self, others) -> Optional[SparseTensorSpec]:
        if any(type(o) is not SparseTensorSpec or o._dtype != self._dtype for o in others):
            return None
        shape = self._shape.most_specific_common_supertype([o._shape for o in others])
        return SparseTensorSpec(shape, self._dtype)

    def flatten(self) -> list:
        """The specs of the parts: ``indices`` ``[N, rank]``, ``values`` ``[N]`` (any number
        N of stored values) and ``dense_shape`` ``[rank]``."""
        from .tensor_spec import TensorSpec

        rank = self._shape.ndims
        return [
            TensorSpec([None, rank], _dtypes.int64),
            TensorSpec([None], self._dtype),
            TensorSpec([rank], _dtypes.int64),
        ]

    def placeholder_value(self, placeholder_context=None) -> SparseTensor:
        """A SparseTensor of three placeholders (`flatten`'s specs) that knows this spec's
        dense shape statically."""
        parts = [
            placeholder_part(spec.dtype, spec.shape, placeholder_context, "SparseTensor")
            for spec in self.flatten()
        ]
        value = SparseTensor(*parts)
        value._known_shape = self._shape
        return value

    def to_tensors(self, value) -> list:
        return [value.indices, value.values, value.dense_shape]

    def from_tensors(self, tensors) -> SparseTensor:
        value = SparseTensor(next(tensors), next(tensors), next(tensors))
        value._known_shape = self._shape
        return value

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
        return f"SparseTensorSpec({self._shape!r}, df.{self._dtype.name})"


register_spec_of(SparseTensor, SparseTensorSpec.from_value)

"""`RaggedTensor`: a tensor whose rows have different lengths, as ``values`` cut by ``row_splits``.

``RaggedTensor(values, row_splits)``, as TensorFlow 1.x: row ``i`` is
``values[row_splits[i]:row_splits[i + 1]]``, so ``row_splits`` is a non-decreasing int64 (or
int32) vector that starts at 0 and ends at ``len(values)``, one longer than the number of rows.
``values`` is a Tensor, or itself a RaggedTensor for more than one ragged dimension: the
``ragged_rank`` is how many RaggedTensors are nested, ``flat_values`` the Tensor at the bottom
and ``nested_row_splits`` the splits from the outermost down.  The static ``shape`` is
``[nrows, None, ..., None] + flat_values.shape[1:]`` (one None per ragged dimension).

Like `SparseTensor` it is several tensors, not one: ``Session.run`` fetches it as a
`RaggedTensorValue`, feeds its parts from one, and cond/while_loop/identity move it part by part
(`dataflow.framework.composites`).  The ops that read and make ragged tensors, and its Python
operators, are in `dataflow.ops.ragged_ops`, which registers them here (`register_operator`,
`register_override`) so that this module sits below the op modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Optional

import numpy as np

from . import dtypes as _dtypes
from .graph import Tensor
from .tensor_conversion import convert_to_tensor, numpy_value_or_none
from .tensor_shape import TensorShape, as_shape
from .type_spec import TypeSpec, register_spec_of

__all__ = ["RaggedTensor", "RaggedTensorSpec", "RaggedTensorValue"]


class _RaggedTensorValueFields(NamedTuple):
    values: Any
    row_splits: np.ndarray


class RaggedTensorValue(_RaggedTensorValueFields):
    """The value of a `RaggedTensor` that ``Session.run`` returns: ``values`` (an array, or a
    RaggedTensorValue for a nested ragged dimension) and ``row_splits`` (an array)."""

    __slots__ = ()

    def __init__(self, values, row_splits):
        """TensorFlow's constructor arguments (the tuple holds them)."""

    @property
    def flat_values(self) -> np.ndarray:
        values = self.values
        while isinstance(values, RaggedTensorValue):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> tuple:
        splits, value = [], self
        while isinstance(value, RaggedTensorValue):
            splits.append(value.row_splits)
            value = value.values
        return tuple(splits)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    @property
    def dtype(self) -> np.dtype:
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self) -> np.dtype:
        return self.row_splits.dtype

    @property
    def shape(self) -> tuple:
        """``(nrows, None, ..., None) + flat_values.shape[1:]``."""
        return (len(self.row_splits) - 1,) + (None,) * self.ragged_rank + self.flat_values.shape[1:]

    def to_list(self) -> list:
        """The nested Python lists this value stands for."""
        if isinstance(self.values, RaggedTensorValue):
            rows = self.values.to_list()
        else:
            rows = np.asarray(self.values).tolist()
        splits = np.asarray(self.row_splits)
        return [rows[start:limit] for start, limit in zip(splits[:-1], splits[1:])]

    def __repr__(self) -> str:
        return f"<RaggedTensorValue {self.to_list()}>"


class RaggedTensorSpec(TypeSpec):
    """The type of a RaggedTensor: its static ``shape``, ``dtype``, ``ragged_rank`` and
    ``row_splits_dtype`` (TensorFlow's, used here as a while_loop shape invariant)."""

    @property
    def value_type(self) -> type:
        return RaggedTensor

    def __init__(
        self,
        shape=None,
        dtype=_dtypes.float32,
        ragged_rank: Optional[int] = None,
        row_splits_dtype=_dtypes.int64,
        flat_values_spec=None,
    ):
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)
        rank = self._shape.ndims
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank.")
            ragged_rank = rank - 1
        if rank is not None and not 0 <= ragged_rank < max(rank, 1):
            raise ValueError(f"ragged_rank must be in [0, {rank}) for shape {self._shape}")
        self._ragged_rank = ragged_rank
        if flat_values_spec is not None:
            raise NotImplementedError("RaggedTensorSpec(flat_values_spec=...) is not supported")

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def ragged_rank(self) -> int:
        return self._ragged_rank

    @property
    def row_splits_dtype(self) -> _dtypes.DType:
        return self._row_splits_dtype

    @classmethod
    def from_value(cls, value: RaggedTensor) -> RaggedTensorSpec:
        return cls(value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype)

    def part_shapes(self) -> tuple:
        """The static shapes the parts of a RaggedTensor of this type keep:
        ``(flat_values, outermost row_splits, ..., innermost row_splits)``.  Only the outermost
        splits know a length (``nrows + 1``, when ``shape[0]`` is known)."""
        shape = self._shape
        if shape.ndims is None:
            flat_values = TensorShape(None)
            nrows = None
        else:
            flat_values = TensorShape([None]).concatenate(shape[self._ragged_rank + 1 :])
            nrows = shape[0]
        outer = TensorShape([None if nrows is None else nrows + 1])
        inner = [TensorShape([None])] * (self._ragged_rank - 1)
        return (flat_values, outer, *inner)

    # -- as a trace type: a traced function's argument is its flat values and row splits ------
    def is_subtype_of(self, other) -> bool:
        """Whether every RaggedTensor of this spec fits ``other``: the same dtype, ragged rank
        and row-splits dtype, and a shape that is a subtype of ``other``'s."""
        return (
            type(other) is RaggedTensorSpec
            and self._key()[1:] == other._key()[1:]
            and self._shape.is_subtype_of(other._shape)
        )

    def most_specific_common_supertype(self, others) -> Optional[RaggedTensorSpec]:
        if any(type(o) is not RaggedTensorSpec or o._key()[1:] != self._key()[1:] for o in others):
            return None
        shape = self._shape.most_specific_common_supertype([o._shape for o in others])
        return RaggedTensorSpec(shape, self._dtype, self._ragged_rank, self._row_splits_dtype)

    def flatten(self) -> list:
        """The specs of the parts: the flat values, then the row splits from the outermost
        in (`part_shapes`)."""
        from .tensor_spec import TensorSpec

        flat_values, *splits = self.part_shapes()
        return [TensorSpec(flat_values, self._dtype)] + [
            TensorSpec(shape, self._row_splits_dtype) for shape in splits
        ]

    def placeholder_value(self, placeholder_context=None) -> RaggedTensor:
        """A RaggedTensor of placeholders, one per part (`flatten`)."""
        from .type_spec import placeholder_part

        parts = [
            placeholder_part(spec.dtype, spec.shape, placeholder_context, "RaggedTensor")
            for spec in self.flatten()
        ]
        return self.from_tensors(iter(parts))

    def to_tensors(self, value) -> list:
        if not isinstance(value, RaggedTensor) or value.ragged_rank != self._ragged_rank:
            raise ValueError(f"{value!r} is not a value of {self!r}")
        return [value.flat_values, *value.nested_row_splits]

    def from_tensors(self, tensors) -> RaggedTensor:
        result = next(tensors)
        splits = [next(tensors) for _ in range(self._ragged_rank)]
        for row_splits in reversed(splits):
            result = RaggedTensor(result, row_splits, internal=True)
        return result

    def _key(self) -> tuple:
        return (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype)

    def __eq__(self, other) -> bool:
        if not isinstance(other, RaggedTensorSpec):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"RaggedTensorSpec({self._shape!r}, df.{self._dtype.name}, "
            f"{self._ragged_rank}, df.{self._row_splits_dtype.name})"
        )


class RaggedTensor:
    """Rows of different lengths: row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``.

    Make one with the ``from_*`` class methods or ``df.ragged.constant``; the constructor takes
    already-checked parts, as TensorFlow's does.
    """

    def __init__(self, values, row_partition, internal: bool = False):
        """Private, as in TensorFlow (``internal=True``): ``row_partition`` is the row splits
        of the outermost ragged dimension (a vector, or an object whose ``row_splits()`` gives
        it, as TensorFlow's RowPartition)."""
        if not internal:
            raise ValueError(
                "RaggedTensor constructor is private; please use one of the factory methods "
                "instead (e.g., RaggedTensor.from_row_lengths())"
            )
        row_splits = row_partition
        if callable(getattr(row_partition, "row_splits", None)):
            row_splits = row_partition.row_splits()
        if not isinstance(values, RaggedTensor):
            values = convert_to_tensor(values, name="values")
            if values.shape.ndims == 0:
                raise ValueError("RaggedTensor values must have rank >= 1, got a scalar")
        row_splits = convert_to_tensor(row_splits, name="row_splits")
        if row_splits.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"row_splits must be int32 or int64, got {row_splits.dtype.name}")
        row_splits.shape.with_rank(1)
        if isinstance(values, RaggedTensor) and values.row_splits.dtype is not row_splits.dtype:
            raise ValueError(
                "RaggedTensor row_splits dtypes differ between ragged dimensions: "
                f"{row_splits.dtype.name} and {values.row_splits.dtype.name}"
            )
        self._values = values
        self._row_splits = row_splits

    # -- factories ---------------------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate: bool = True) -> RaggedTensor:
        """Rows ``values[row_splits[i]:row_splits[i + 1]]``; ``validate`` adds run-time checks
        that the splits start at 0, never decrease and end at ``len(values)``."""
        return _override("from_row_splits")(values, row_splits, name=name, validate=validate)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate: bool = True):
        """Rows of ``row_lengths[i]`` values each, in order."""
        return _override("from_row_lengths")(values, row_lengths, name=name, validate=validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """Value ``j`` in row ``value_rowids[j]`` (non-decreasing); ``nrows`` rows (default:
        one past the last row id)."""
        return _override("from_value_rowids")(
            values, value_rowids, nrows=nrows, name=name, validate=validate
        )

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        """``flat_values`` cut by each of ``nested_row_splits``, innermost last."""
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, name=name, validate=validate)
        return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank: int = 1, name=None):
        """The rows of a dense ``tensor`` (its first ``ragged_rank + 1`` dimensions become
        ragged ones, every row full length)."""
        if lengths is not None or padding is not None:
            raise NotImplementedError(
                "RaggedTensor.from_tensor(lengths=, padding=) is not supported"
            )
        return _override("from_tensor")(tensor, ragged_rank=ragged_rank, name=name)

    # -- parts -------------------------------------------------------------------------------------
    @property
    def values(self):
        """The concatenated rows: a Tensor, or a RaggedTensor when ``ragged_rank > 1``."""
        return self._values

    @property
    def row_splits(self) -> Tensor:
        return self._row_splits

    @property
    def flat_values(self) -> Tensor:
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values.values
        return values

    @property
    def nested_row_splits(self) -> tuple:
        splits, value = [], self
        while isinstance(value, RaggedTensor):
            splits.append(value.row_splits)
            value = value.values
        return tuple(splits)

    @property
    def ragged_rank(self) -> int:
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self) -> _dtypes.DType:
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self) -> _dtypes.DType:
        return self._row_splits.dtype

    @property
    def graph(self):
        return self._row_splits.graph

    @property
    def op(self):
        return self.flat_values.op

    @property
    def name(self) -> str:
        return self.flat_values.name

    @property
    def shape(self) -> TensorShape:
        """``[nrows, None, ..., None] + flat_values.shape[1:]``; ``nrows`` known where the
        length of ``row_splits`` is."""
        splits_length = self._row_splits.shape[0] if self._row_splits.shape.ndims == 1 else None
        known = numpy_value_or_none(self._row_splits) if splits_length is None else None
        if known is not None:
            splits_length = len(known)
        nrows = None if splits_length is None else splits_length - 1
        inner = self.flat_values.shape[1:] if self.flat_values.shape.ndims is not None else None
        head = TensorShape([nrows] + [None] * self.ragged_rank)
        return TensorShape(None) if inner is None else head.concatenate(inner)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def _type_spec(self) -> RaggedTensorSpec:
        return RaggedTensorSpec.from_value(self)

    def with_values(self, new_values) -> RaggedTensor:
        """This tensor's outermost row partition over ``new_values``."""
        return RaggedTensor(new_values, self._row_splits, internal=True)

    def with_flat_values(self, new_values) -> RaggedTensor:
        """This tensor's row partitions over ``new_values`` (one row per flat value)."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    # -- ops, registered by dataflow.ops.ragged_ops ------------------------------------------------
    def row_lengths(self, axis: int = 1, name=None) -> Tensor:
        """The length of each row (``axis=1``), or of each row of the ragged dimension
        ``axis``."""
        return _override("row_lengths")(self, axis=axis, name=name)

    def row_starts(self, name=None) -> Tensor:
        return self._row_splits[:-1]

    def row_limits(self, name=None) -> Tensor:
        return self._row_splits[1:]

    def nrows(self, out_type=None, name=None) -> Tensor:
        return _override("nrows")(self, out_type=out_type, name=name)

    def value_rowids(self, name=None) -> Tensor:
        """The row of each of ``values``."""
        return _override("value_rowids")(self, name=name)

    def to_tensor(self, default_value=None, name=None, shape=None) -> Tensor:
        """The dense tensor with every row padded to the longest with ``default_value`` (zero
        by default)."""
        if shape is not None:
            raise NotImplementedError("RaggedTensor.to_tensor(shape=...) is not supported")
        return _override("to_tensor")(self, default_value=default_value, name=name)

    def to_sparse(self, name=None):
        """The `SparseTensor` of the same values: one index per value of ``flat_values`` (its
        row, then its position in each ragged dimension and in the dense ones inside), and a
        dense shape of the number of rows, then each dimension's longest row."""
        return _override("to_sparse")(self, name=name)

    def _eager_value(self) -> Optional[RaggedTensorValue]:
        """The value of a RaggedTensor whose parts are eager tensors, else None."""
        if not self._row_splits._is_eager:
            return None
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values._eager_value()
            if values is None:
                return None
        elif values._is_eager:
            values = values.numpy()
        else:
            return None
        return RaggedTensorValue(values, self._row_splits.numpy())

    def to_list(self, session=None) -> list:
        """The nested Python lists of this tensor's value: eagerly, its own; in a graph, run
        in ``session`` or the default one (TensorFlow 2 offers ``to_list`` only eagerly)."""
        if self._is_eager():
            splits = self._row_splits.numpy().tolist()
            if isinstance(self._values, RaggedTensor):
                rows = self._values.to_list()
            else:
                rows = self._values.numpy().tolist()
            return [rows[start:limit] for start, limit in zip(splits[:-1], splits[1:])]
        return self.eval(session=session).to_list()

    def numpy(self) -> np.ndarray:
        """The value as numpy arrays, as TensorFlow 2's: rows of different lengths are a
        one-dimensional ``object`` array of row arrays, rows of one length one array of a rank
        more.  Eager mode only."""
        if not self._is_eager():
            raise ValueError("RaggedTensor.numpy() is only supported in eager mode.")
        values = self._values.numpy()
        splits = self._row_splits.numpy()
        rows = [values[splits[i] : splits[i + 1]] for i in range(len(splits) - 1)]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        ragged = any(len(row) != len(rows[0]) for row in rows)
        return np.array(rows, dtype=object if ragged else None)

    def _is_eager(self) -> bool:
        """Whether every part holds its value (made in eager mode)."""
        return self.flat_values._is_eager and all(s._is_eager for s in self.nested_row_splits)

    def eval(self, feed_dict=None, session=None) -> RaggedTensorValue:
        from .session_stack import _session_for_eval

        return _session_for_eval(session, self.graph).run(self, feed_dict)

    def __repr__(self) -> str:
        """Eagerly, ``<df.RaggedTensor [[1, 2], [3]]>`` as TensorFlow 2 prints its value; in a
        graph, its parts."""
        if self._is_eager():
            with np.printoptions(formatter={"all": _element_text}):
                return f"<df.RaggedTensor {_element_text(self.numpy())}>"
        return f"RaggedTensor(values={self._values!r}, row_splits={self._row_splits.name})"

    # -- what Session.run fetches and feeds for it ------------------------------------------------
    def _fetch_structure(self) -> RaggedTensorValue:
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values._fetch_structure()
        return RaggedTensorValue(values, self._row_splits)

    def _feed_pairs(self, value) -> list:
        if not isinstance(value, RaggedTensorValue):
            raise TypeError(
                f"A RaggedTensor is fed from a RaggedTensorValue (as Session.run returns, or "
                f"df.ragged.constant_value makes), got {type(value).__name__}"
            )
        if value.ragged_rank != self.ragged_rank:
            raise ValueError(
                f"A RaggedTensor of ragged_rank {self.ragged_rank} cannot be fed a "
                f"RaggedTensorValue of ragged_rank {value.ragged_rank}"
            )
        pairs = [(self._row_splits, value.row_splits)]
        if isinstance(self._values, RaggedTensor):
            return pairs + self._values._feed_pairs(value.values)
        return pairs + [(self._values, value.values)]


def _element_text(x) -> str:
    """How an eager RaggedTensor's value prints, as TensorFlow's: arrays with their elements
    separated by commas (an empty one as the lists it holds), other elements as ``str``."""
    if isinstance(x, np.ndarray):
        if x.size != 0:
            return np.array2string(x, separator=", ")
        return repr(x.tolist())
    return str(x)


# The ragged ops the class's methods and operators use, registered by dataflow.ops.ragged_ops.
_OVERRIDES: dict[str, Callable] = {}


def register_override(name: str, fn: Callable) -> None:
    """Makes ``fn`` the ragged version of the op ``name`` (``concat``, ``reduce_sum``, ...)."""
    _OVERRIDES[name] = fn


def override_for(name: str, *values) -> Optional[Callable]:
    """The ragged version of ``name`` when any of ``values`` (or a value in a list among them)
    is a RaggedTensor; else None.  The dense ops call this first, as TF's dispatch does."""
    for value in values:
        if isinstance(value, RaggedTensor) or (
            isinstance(value, (list, tuple)) and any(isinstance(v, RaggedTensor) for v in value)
        ):
            return _override(name)
    return None


def _override(name: str) -> Callable:
    try:
        return _OVERRIDES[name]
    except KeyError:
        raise NotImplementedError(f"{name} is not supported for RaggedTensor") from None


def register_operator(name: str, fn: Callable) -> None:
    """Gives RaggedTensor the Python operator ``name`` (``__add__``, ``__getitem__``, ...)."""
    setattr(RaggedTensor, name, fn)


register_spec_of(
    RaggedTensor,
    lambda value: RaggedTensorSpec(
        value.shape, value.dtype, value.ragged_rank, value.row_splits.dtype
    ),
)

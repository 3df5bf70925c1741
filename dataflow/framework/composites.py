"""Values made of several tensors (``IndexedSlices``, ``SparseTensor``, ``RaggedTensor``) in the
ops that move tensors one by one: identities, conds and loops.

A cond's branches may return, and a while_loop may carry, such composite values, as in
TensorFlow 1.x.  The control-flow ops only move tensors, so each composite travels as a named
tuple of its parts (`expand`), and is made again from the parts that come out (`pack`):

- ``IndexedSlices``: ``values``, ``indices`` and, when it has one, ``dense_shape``;
- ``SparseTensor``: ``indices``, ``values`` and ``dense_shape``;
- ``RaggedTensor``: ``values`` (itself the parts of a RaggedTensor when there is more than one
  ragged dimension) and ``row_splits``.

A shape invariant given for a composite loop variable is TensorFlow 1.x's: for IndexedSlices,
the shape of its values; for a SparseTensor, the shape of its ``dense_shape`` vector (so
``TensorShape([None])`` lets its rank change); for a RaggedTensor, its shape as a whole, or a
``RaggedTensorSpec``: the outermost row splits keep their length where the number of rows is
known, the inner ones and the flat values may change length.  Without one, a SparseTensor's
number of stored values may change across iterations (its indices and values keep only their
rank), a RaggedTensor keeps its number of rows (its own shape as invariant), and an
IndexedSlices keeps its parts' shapes.  (TensorArrays travel as their flows, see
``control_flow_ops``.)
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import nest
from .indexed_slices import IndexedSlices
from .ragged_tensor import RaggedTensor, RaggedTensorSpec
from .sparse_tensor import SparseTensor
from .tensor_shape import TensorShape, as_shape

__all__ = [
    "expand",
    "indexed_slices_indices",
    "expand_for_fetch",
    "expand_invariants",
    "holds_composites",
    "map_parts",
    "pack",
]


class SlicesParts(NamedTuple):
    values: Any
    indices: Any
    dense_shape: Any


class SlicesPartsWithoutShape(NamedTuple):
    values: Any
    indices: Any


class SparseParts(NamedTuple):
    indices: Any
    values: Any
    dense_shape: Any


class RaggedParts(NamedTuple):
    values: Any  # a tensor, or the RaggedParts of a RaggedTensor
    row_splits: Any


_PARTS = (SlicesParts, SlicesPartsWithoutShape, SparseParts, RaggedParts)


def is_composite(value) -> bool:
    return isinstance(value, (IndexedSlices, SparseTensor, RaggedTensor))


def holds_composites(structure) -> bool:
    if is_composite(structure):
        return True
    if isinstance(structure, dict):
        return any(holds_composites(v) for v in structure.values())
    if isinstance(structure, (list, tuple)):
        return any(holds_composites(v) for v in structure)
    return False


def _parts_of(value):
    if isinstance(value, RaggedTensor):
        values = value.values
        return RaggedParts(_parts_of(values) if is_composite(values) else values, value.row_splits)
    if isinstance(value, SparseTensor):
        return SparseParts(value.indices, value.values, value.dense_shape)
    if value.dense_shape is None:
        return SlicesPartsWithoutShape(value.values, value.indices)
    return SlicesParts(value.values, value.indices, value.dense_shape)


def _rebuild(structure, make):
    """``structure`` with each leaf ``x`` replaced by ``make(x)``, containers kept."""
    if isinstance(structure, dict):
        return type(structure)((k, _rebuild(v, make)) for k, v in structure.items())
    if isinstance(structure, tuple) and hasattr(type(structure), "_fields"):
        return type(structure)(*(_rebuild(v, make) for v in structure))
    if isinstance(structure, (list, tuple)):
        return type(structure)(_rebuild(v, make) for v in structure)
    return make(structure)


def expand(structure):
    """``structure`` with each composite replaced by the named tuple of its parts."""
    return _rebuild(structure, lambda x: _parts_of(x) if is_composite(x) else x)


def expand_for_fetch(structure):
    """``structure`` with each composite replaced by the named tuple of tensors its value is
    fetched as (``IndexedSlicesValue``, ``SparseTensorValue``; a missing part is None), for
    ``Session.run``."""
    return _rebuild(structure, lambda x: x._fetch_structure() if is_composite(x) else x)


def indexed_slices_indices(structure) -> list:
    """For each leaf of ``nest.flatten(expand(structure))``, whether it is the ``indices`` of an
    IndexedSlices (which a cond casts to int64 where its branches disagree, as TF1 does)."""

    def mark(x):
        if isinstance(x, IndexedSlices):
            parts = _parts_of(x)
            return type(parts)(*(field == "indices" for field in parts._fields))
        if is_composite(x):
            return nest.map_structure(lambda _: False, _parts_of(x))
        return False

    return nest.flatten(_rebuild(structure, mark))


def map_parts(value, fn):
    """The composite ``value`` made again from ``fn`` of each of its parts (an identity, an
    Enter of each part, ...)."""
    return pack(value, nest.map_structure(fn, _parts_of(value)))


def pack(original, expanded):
    """``expanded`` (in the structure `expand` made of ``original``) with each composite of
    ``original`` made again from its parts."""
    if is_composite(original):
        if isinstance(expanded, RaggedParts):
            values = pack(original.values, expanded.values)
            return RaggedTensor(values, expanded.row_splits, internal=True)
        if isinstance(expanded, SparseParts):
            return SparseTensor(expanded.indices, expanded.values, expanded.dense_shape)
        return IndexedSlices(
            expanded.values, expanded.indices, getattr(expanded, "dense_shape", None)
        )
    if isinstance(original, dict):
        return type(expanded)((k, pack(original[k], expanded[k])) for k in expanded)
    if isinstance(original, (list, tuple)) and isinstance(expanded, (list, tuple)):
        items = [pack(o, e) for o, e in zip(original, expanded)]
        if isinstance(expanded, _PARTS) or hasattr(type(expanded), "_fields"):
            return type(expanded)(*items)
        return type(expanded)(items)
    return expanded


def _ragged_invariant(value: RaggedTensor, spec: RaggedTensorSpec) -> RaggedParts:
    if spec.ragged_rank != value.ragged_rank:
        raise ValueError(
            f"The shape invariant {spec} has ragged_rank {spec.ragged_rank}, but the loop "
            f"variable {value!r} has ragged_rank {value.ragged_rank}"
        )
    flat_values, *splits = spec.part_shapes()

    def parts(level: int, rt) -> RaggedParts:
        inner = rt.values
        below = parts(level + 1, inner) if isinstance(inner, RaggedTensor) else flat_values
        return RaggedParts(below, splits[level])

    return parts(0, value)


def _default_invariant(value):
    if isinstance(value, RaggedTensor):
        return _ragged_invariant(value, RaggedTensorSpec.from_value(value))
    if isinstance(value, SparseTensor):
        rank = value.dense_shape.shape[0] if value.dense_shape.shape.ndims == 1 else None
        return SparseParts(TensorShape([None, rank]), TensorShape([None]), None)
    return type(_parts_of(value))(*([None] * len(_parts_of(value))))  # each part keeps its own


def _invariant_parts(value, invariant):
    if invariant is None:
        return _default_invariant(value)
    if isinstance(value, RaggedTensor):
        if not isinstance(invariant, RaggedTensorSpec):
            shape = as_shape(invariant)
            invariant = RaggedTensorSpec(
                shape, value.dtype, value.ragged_rank, value.row_splits_dtype
            )
        return _ragged_invariant(value, invariant)
    if isinstance(invariant, RaggedTensorSpec):
        raise TypeError(
            f"A RaggedTensorSpec is the shape invariant of a RaggedTensor, not {value!r}"
        )
    shape = as_shape(invariant)
    if isinstance(value, SparseTensor):
        rank = shape[0] if shape.ndims == 1 else None
        return SparseParts(TensorShape([None, rank]), TensorShape([None]), shape)
    dense_rank = TensorShape([shape.ndims]) if shape.ndims is not None else TensorShape([None])
    indices = TensorShape([shape[0]]) if shape.ndims else TensorShape([None])
    if value.dense_shape is None:
        return SlicesPartsWithoutShape(shape, indices)
    return SlicesParts(shape, indices, dense_rank)


def expand_invariants(loop_vars, shape_invariants):
    """Shape invariants for `expand`'s loop variables: each composite's given (or default)
    invariant turned into invariants of its parts, any other leaf's kept (None when not
    given)."""

    def walk(value, invariant):
        if is_composite(value):
            return _invariant_parts(value, invariant)
        if isinstance(value, dict):
            return {
                k: walk(v, None if invariant is None else invariant[k]) for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            invariants = [None] * len(value) if invariant is None else invariant
            if isinstance(invariants, TensorShape) or not isinstance(invariants, (list, tuple)):
                return invariant  # a leaf's invariant given as a list of dims, or a shape
            if len(invariants) != len(value):
                return invariant  # the loop reports the mismatch in its own words
            items = [walk(v, i) for v, i in zip(value, invariants)]
            return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)
        return invariant

    return walk(loop_vars, shape_invariants)

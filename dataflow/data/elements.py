"""The structure of a dataset's elements: nests of tensors and composite tensors (sparse, ragged),
flattened to the tensors a pipeline passes and packed back, with the spec of each part."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.tensor_shape import TensorShape


# -- element structures ----------------------------------------------------------------------------
def _is_structure(value) -> bool:
    """Tuples, namedtuples and dicts nest; a list is one tensor (as ``tf.data`` treats it)."""
    return isinstance(value, (tuple, dict))


def _composite_spec(value):
    """The spec of a sparse or ragged leaf (a tensor, its value or its spec), else None."""
    from ..framework.ragged_tensor import RaggedTensor, RaggedTensorSpec, RaggedTensorValue
    from ..framework.sparse_tensor import SparseTensor, SparseTensorSpec, SparseTensorValue

    if isinstance(value, (SparseTensorSpec, RaggedTensorSpec)):
        return value
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    if isinstance(value, SparseTensorValue):
        return SparseTensorSpec(
            [int(d) for d in np.asarray(value.dense_shape)], np.asarray(value.values).dtype
        )
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec.from_value(value)
    if isinstance(value, RaggedTensorValue):
        rank = value.ragged_rank
        inner = list(np.shape(value.flat_values)[1:])
        return RaggedTensorSpec(
            [len(value.row_splits) - 1] + [None] * rank + inner,
            value.flat_values.dtype,
            rank,
            np.asarray(value.row_splits).dtype,
        )
    return None


def _flatten(value) -> list:
    """The leaves of an element; a sparse leaf is its indices, values and dense shape, a
    ragged one its flat values and row splits."""
    spec = _composite_spec(value)
    if spec is not None and not isinstance(value, type(spec)):
        if hasattr(value, "indices"):
            return [value.indices, value.values, value.dense_shape]
        return [value.flat_values, *value.nested_row_splits]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _flatten(value[key])]
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _structure_of(value):
    """``value``'s nesting, each sparse or ragged leaf replaced by its spec."""
    spec = _composite_spec(value)
    if spec is not None:
        return spec
    if isinstance(value, dict):
        return {key: _structure_of(value[key]) for key in value}
    if isinstance(value, tuple):
        items = [_structure_of(item) for item in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    return value


def _width(spec) -> int:
    """How many flat components a leaf of a structure stands for."""
    spec = _composite_spec(spec)
    if spec is None:
        return 1
    return 1 + spec.ragged_rank if hasattr(spec, "ragged_rank") else 3


def _parts(spec) -> list:
    """The (dtype, shape) of each flat component of a leaf spec (sparse or ragged)."""
    shape = spec.shape
    if not hasattr(spec, "ragged_rank"):
        rank = shape.ndims
        return [
            (_dtypes.int64, TensorShape([None, rank])),
            (spec.dtype, TensorShape([None])),
            (_dtypes.int64, TensorShape([rank])),
        ]
    inner = TensorShape(None) if shape.ndims is None else shape[spec.ragged_rank + 1 :]
    return [(spec.dtype, TensorShape([None]).concatenate(inner))] + [
        (spec.row_splits_dtype, TensorShape([None]))
    ] * spec.ragged_rank


def _composite(spec, parts: list):
    """The sparse or ragged tensor (or value) ``spec`` describes, from its flat ``parts``."""
    from ..framework.ragged_tensor import RaggedTensor, RaggedTensorValue
    from ..framework.sparse_tensor import SparseTensor, SparseTensorValue

    tensors = all(isinstance(p, Tensor) for p in parts)
    if not hasattr(spec, "ragged_rank"):
        return SparseTensor(*parts) if tensors else SparseTensorValue(*parts)
    if tensors:
        return RaggedTensor.from_nested_row_splits(parts[0], parts[1:], validate=False)
    value = parts[0]
    for splits in reversed(parts[1:]):
        value = RaggedTensorValue(value, splits)
    return value


def _pack(structure, flat: list, meta: Optional[str] = None):
    """``flat`` in the nesting of ``structure`` (whose dense leaves are ignored): a sparse or
    ragged leaf takes its components, made into that tensor, or with ``meta`` into what
    ``output_types`` ("types"), ``output_shapes`` ("shapes"), ``output_classes`` ("classes")
    or ``element_spec`` ("specs") give for it."""
    position = 0

    def rebuild(s):
        nonlocal position
        spec = _composite_spec(s)
        if spec is not None:
            width = _width(spec)
            parts = flat[position : position + width]
            position += width
            if meta is None:
                return _composite(spec, parts)
            return {
                "types": spec.dtype,
                "shapes": spec.shape,
                "classes": _composite_class(spec),
                "specs": spec,
            }[meta]
        if isinstance(s, dict):
            return {key: rebuild(s[key]) for key in sorted(s)}
        if isinstance(s, tuple):
            items = [rebuild(item) for item in s]
            return type(s)(*items) if hasattr(type(s), "_fields") else tuple(items)
        position += 1
        return flat[position - 1]

    return rebuild(structure)


def _replace_leaves(structure, leaves: list):
    """``structure`` with its leaves (a sparse or ragged spec being one) replaced in turn."""
    remaining = iter(leaves)

    def rebuild(s):
        if _composite_spec(s) is None and isinstance(s, dict):
            return {key: rebuild(s[key]) for key in sorted(s)}
        if _composite_spec(s) is None and isinstance(s, tuple):
            items = [rebuild(item) for item in s]
            return type(s)(*items) if hasattr(type(s), "_fields") else tuple(items)
        return next(remaining)

    return rebuild(structure)


def _composite_class(spec):
    from ..framework.ragged_tensor import RaggedTensor
    from ..framework.sparse_tensor import SparseTensor

    return RaggedTensor if hasattr(spec, "ragged_rank") else SparseTensor

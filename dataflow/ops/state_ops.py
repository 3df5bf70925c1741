"""Sparse updates of variables: ``scatter_*`` (rows) and ``scatter_nd_*`` (elements).

Each op takes a variable's handle, ``indices`` and ``updates`` and outputs the variable's new
value, as ``Assign`` does (``dataflow.ops.variables``).  The kernel writes a new array into the
run's context, so a failed run leaves the variable as it was.  ``ScatterAdd``/``ScatterSub``
and their ``Nd`` forms are updates: when runs on several threads change one variable at once,
each one's change is applied at its commit to what the others committed, so none is lost (what
sparse optimizers need).  The others replace the value, as an assign does.

As in TensorFlow on CPU: an index outside the variable is a run-time ``InvalidArgumentError``
(``indices[1] = 5 is not in [0, 3)``) and nothing is written; with duplicate indices, adds
accumulate and ``scatter_update`` keeps the last update.  ``updates`` has the shape
``indices.shape + ref.shape[1:]`` (``scatter_*``; a scalar is also accepted) or
``indices.shape[:-1] + ref.shape[indices.shape[-1]:]`` (``scatter_nd_*``).
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import Tensor
from ..framework.op_registry import define_op
from ..framework.tensor_shape import TensorShape
from .variables import Variable, _check_assignable

__all__ = [
    "batch_scatter_update",
    "scatter_add",
    "scatter_div",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_nd_add",
    "scatter_nd_sub",
    "scatter_nd_update",
    "scatter_sub",
    "scatter_update",
]

_INDEX_DTYPES = (_dtypes.int32, _dtypes.int64)

# Op type -> (how the updates combine with the value, whether it is an additive update).
_ROW_UPDATES = {
    "ScatterUpdate": (None, False),
    "ScatterAdd": (np.add, True),
    "ScatterSub": (np.subtract, True),
    "ScatterMul": (np.multiply, False),
    "ScatterDiv": (np.divide, False),
    "ScatterMin": (np.minimum, False),
    "ScatterMax": (np.maximum, False),
}
_ELEMENT_UPDATES = {
    "ScatterNdUpdate": (None, False),
    "ScatterNdAdd": (np.add, True),
    "ScatterNdSub": (np.subtract, True),
}


def _check_indices_and_updates(op) -> tuple[TensorShape, TensorShape, TensorShape]:
    _, indices, updates = op.inputs
    if indices.dtype not in _INDEX_DTYPES:
        raise TypeError(
            f"Value passed to parameter 'indices' has DataType {indices.dtype.name} not in list "
            "of allowed values: int32, int64"
        )
    if updates.dtype is not op.attrs["dtype"]:
        raise TypeError(
            f"Cannot update a {op.attrs['dtype'].name} variable with {updates.dtype.name} values"
        )
    return op.attrs["shape"], indices.shape, updates.shape


def _infer_row_update(op):
    ref, indices, updates = _check_indices_and_updates(op)
    if ref.ndims is not None and ref.ndims == 0:
        raise ValueError("Cannot scatter into a scalar variable")
    if updates.ndims != 0 and ref.ndims is not None and indices.ndims is not None:
        expected = indices.concatenate(ref[1:])
        if not expected.is_compatible_with(updates):
            raise ValueError(
                f"Must have updates.shape = indices.shape + ref.shape[1:] or updates.shape = [], "
                f"got updates.shape {updates}, indices.shape {indices}, ref.shape {ref}"
            )
    return [(op.attrs["dtype"], ref)]


def _infer_element_update(op):
    ref, indices, updates = _check_indices_and_updates(op)
    if indices.ndims == 0:
        raise ValueError("Indices of scatter_nd_* must have rank at least 1")
    depth = indices[-1] if indices.ndims is not None else None
    if depth is not None and ref.ndims is not None:
        if depth > ref.ndims:
            raise ValueError(
                f"The last dimension of indices ({depth}) must be at most the rank of ref "
                f"({ref.ndims})"
            )
        expected = indices[:-1].concatenate(ref[depth:])
        if not expected.is_compatible_with(updates):
            raise ValueError(
                f"Must have updates.shape = indices.shape[:-1] + ref.shape[indices.shape[-1]:], "
                f"got updates.shape {updates}, indices.shape {indices}, ref.shape {ref}"
            )
    return [(op.attrs["dtype"], ref)]


def _row_index(value: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``indices`` checked against the first dimension of ``value``."""
    rows = value.shape[0]
    outside = (indices < 0) | (indices >= rows)
    if outside.any():
        position = int(np.flatnonzero(outside.ravel())[0])
        raise InvalidArgumentError(
            None,
            None,
            f"indices[{position}] = {indices.ravel()[position]} is not in [0, {rows})",
        )
    return indices


def _element_index(value: np.ndarray, indices: np.ndarray) -> tuple:
    """``indices`` (``[..., depth]``) checked against ``value``, as a tuple of index arrays."""
    depth = indices.shape[-1]
    flat = indices.reshape(-1, depth)
    bounds = np.asarray(value.shape[:depth])
    outside = ((flat < 0) | (flat >= bounds)).any(axis=1)
    if outside.any():
        position = int(np.flatnonzero(outside)[0])
        shape = ",".join(str(d) for d in value.shape)
        raise InvalidArgumentError(
            None,
            None,
            f"indices[{position}] = {flat[position].tolist()} does not index into shape [{shape}]",
        )
    return tuple(flat.T)


def _scatter_kernel(combine, additive: bool, element_wise: bool):
    """The kernel factory of one scatter op: ``combine`` (a ufunc, or None to replace) applies
    the updates at the indices of a copy of the variable's value."""

    def make(attrs):
        def scatter(context, ref, indices, updates):
            base = context.read_variable(ref)
            value = np.array(base)  # a new array: the run's, frozen by _check_assignable
            if element_wise:
                index = _element_index(value, indices)
                updates = np.reshape(updates, (len(index[0]),) + value.shape[len(index) :])
            else:
                index = _row_index(value, indices)
            if combine is None:
                value[index] = updates
            else:
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                    combine.at(value, index, updates)
            value = _check_assignable(ref, value, True, owned=True)
            if additive:
                context.update_variable(ref, base, value)
            else:
                context.write_variable(ref, value)
            return value

        return scatter

    return make


def _define(table: dict, infer, element_wise: bool) -> None:
    for op_type, (combine, additive) in table.items():
        define_op(
            op_type,
            infer,
            _scatter_kernel(combine, additive, element_wise),
            stateful=True,
            wants_context=True,
        )
        NotDifferentiable(op_type)


_define(_ROW_UPDATES, _infer_row_update, element_wise=False)
_define(_ELEMENT_UPDATES, _infer_element_update, element_wise=True)


def _variable(ref, function: str) -> Variable:
    if not isinstance(ref, Variable):
        raise TypeError(f"{function} updates a Variable; got {ref!r:.80}")
    return ref


def scatter_update(ref, indices, updates, use_locking=True, name=None) -> Tensor:
    """Sets ``ref[indices[i], ...] = updates[i, ...]`` and outputs the new value of ``ref``
    (with duplicate indices the last update wins)."""
    return _variable(ref, "scatter_update")._scatter("ScatterUpdate", indices, updates, name)


def scatter_add(ref, indices, updates, use_locking=False, name=None) -> Tensor:
    """Adds ``updates[i, ...]`` to ``ref[indices[i], ...]`` (duplicate indices accumulate)."""
    return _variable(ref, "scatter_add")._scatter("ScatterAdd", indices, updates, name)


def scatter_sub(ref, indices, updates, use_locking=False, name=None) -> Tensor:
    """Subtracts ``updates[i, ...]`` from ``ref[indices[i], ...]``."""
    return _variable(ref, "scatter_sub")._scatter("ScatterSub", indices, updates, name)


def scatter_mul(ref, indices, updates, use_locking=False, name=None) -> Tensor:
    """Multiplies ``ref[indices[i], ...]`` by ``updates[i, ...]``."""
    return _variable(ref, "scatter_mul")._scatter("ScatterMul", indices, updates, name)


def scatter_div(ref, indices, updates, use_locking=False, name=None) -> Tensor:
    """Divides ``ref[indices[i], ...]`` by ``updates[i, ...]``."""
    return _variable(ref, "scatter_div")._scatter("ScatterDiv", indices, updates, name)


def scatter_min(ref, indices, updates, use_locking=False, name=None) -> Tensor:
    """Sets ``ref[indices[i], ...]`` to its minimum with ``updates[i, ...]``."""
    return _variable(ref, "scatter_min")._scatter("ScatterMin", indices, updates, name)


def scatter_max(ref, indices, updates, use_locking=False, name=None) -> Tensor:
    """Sets ``ref[indices[i], ...]`` to its maximum with ``updates[i, ...]``."""
    return _variable(ref, "scatter_max")._scatter("ScatterMax", indices, updates, name)


def scatter_nd_update(ref, indices, updates, use_locking=True, name=None) -> Tensor:
    """Sets the elements (or slices) of ``ref`` that the last axis of ``indices`` addresses."""
    return _variable(ref, "scatter_nd_update")._scatter("ScatterNdUpdate", indices, updates, name)


def scatter_nd_add(ref, indices, updates, use_locking=False, name=None) -> Tensor:
    """Adds ``updates`` to the elements (or slices) of ``ref`` that ``indices`` address."""
    return _variable(ref, "scatter_nd_add")._scatter("ScatterNdAdd", indices, updates, name)


def scatter_nd_sub(ref, indices, updates, use_locking=False, name=None) -> Tensor:
    """Subtracts ``updates`` from the elements (or slices) of ``ref`` that ``indices`` address."""
    return _variable(ref, "scatter_nd_sub")._scatter("ScatterNdSub", indices, updates, name)


def batch_scatter_update(ref, indices, updates, use_locking=True, name=None) -> Tensor:
    """Sets ``ref[i..., indices[i..., j], ...]`` to ``updates[i..., j, ...]``: a
    `scatter_update` in each row of the leading (batch) dimensions of ``indices``, built as
    TensorFlow builds it, as one `scatter_nd_update`."""
    from ..framework.graph import name_scope
    from ..framework.tensor_conversion import convert_to_tensor
    from .array_ops import concat, expand_dims, ones_like, reshape
    from .array_ops import range as _range
    from .array_ops import shape as _shape
    from .math_ops import cast

    with name_scope(name):
        indices = convert_to_tensor(indices, name="indices")
        rank = indices.shape.ndims
        if rank is None:
            raise ValueError("batch_gather does not allow indices with unknown shape.")
        indices_shape = _shape(indices)
        nd_indices = expand_dims(indices, axis=-1)
        parts = []
        for dimension in range(rank - 1):
            size = indices_shape[dimension]
            broadcast = [1] * (rank + 1)
            broadcast[dimension] = size
            positions = reshape(_range(0, size, 1), broadcast)
            if positions.dtype != nd_indices.dtype:
                positions = cast(positions, nd_indices.dtype)
            parts.append(positions * ones_like(nd_indices))
        parts.append(nd_indices)
        return scatter_nd_update(ref, concat(parts, axis=-1), updates, use_locking=use_locking)

"""``tf.sets``: union, intersection and difference of the sets held in the last dimension of
dense tensors or SparseTensors, and ``set_size``.

Each index of all but the last dimension names one set: the elements of a dense tensor's row
(all of them, zeros included) or the values a SparseTensor stores in that row.  The result is
a SparseTensor whose rows hold the resulting sets, sorted, in the batch order of the inputs.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.sparse_tensor import SparseTensor
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = ["set_difference", "set_intersection", "set_size", "set_union"]

_SET_TYPES = frozenset(
    {_dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64, _dtypes.uint8, _dtypes.uint16}
    | {_dtypes.string}
)
_OPERATIONS = {
    "union": lambda a, b: a | b,
    "intersection": lambda a, b: a & b,
    "a-b": lambda a, b: a - b,
    "b-a": lambda a, b: b - a,
}


def _groups(arrays, sparse: bool):
    """The batch shape and {batch index: set} of one operand."""
    if sparse:
        indices, values, shape = arrays
        groups = {}
        for index, value in zip(map(tuple, indices[:, :-1].tolist()), values.tolist()):
            groups.setdefault(index, set()).add(value)
        return tuple(int(d) for d in shape[:-1]), groups
    (dense,) = arrays
    if dense.ndim < 2:
        raise InvalidArgumentError(None, None, f"Shape must be at least rank 2, got {dense.shape}")
    rows = dense.reshape(-1, dense.shape[-1])
    batch = dense.shape[:-1]
    return batch, {np.unravel_index(i, batch): set(row.tolist()) for i, row in enumerate(rows)}


def _set_operation_kernel(attrs):
    combine = _OPERATIONS[attrs["set_operation"]]
    a_count = 3 if attrs["a_sparse"] else 1

    def set_operation(*arrays):
        a_batch, a_sets = _groups(arrays[:a_count], attrs["a_sparse"])
        b_batch, b_sets = _groups(arrays[a_count:], attrs["b_sparse"])
        if a_batch != b_batch:
            raise InvalidArgumentError(
                None, None, f"Sets have different batch shapes: {list(a_batch)} and {list(b_batch)}"
            )
        indices, values, longest = [], [], 0
        for position in np.ndindex(*a_batch):
            position = tuple(int(p) for p in position)
            result = sorted(combine(a_sets.get(position, set()), b_sets.get(position, set())))
            longest = max(longest, len(result))
            indices.extend(position + (i,) for i in range(len(result)))
            values.extend(result)
        rank = len(a_batch) + 1
        out_values = np.empty(len(values), dtype=arrays[1 if attrs["a_sparse"] else 0].dtype)
        out_values[:] = values
        return (
            np.asarray(indices, np.int64).reshape(len(indices), rank),
            out_values,
            np.asarray(list(a_batch) + [longest], np.int64),
        )

    return set_operation


def _infer_set_operation(op):
    first = op.inputs[0]
    dtype = op.inputs[1].dtype if op.attrs["a_sparse"] else first.dtype
    if dtype not in _SET_TYPES:
        raise TypeError(f"sets take integer or string elements, got {dtype.name}")
    if op.attrs["a_sparse"]:
        rank = first.shape.as_list()[1] if first.shape.ndims == 2 else None
    else:
        rank = first.shape.ndims
        if rank is not None and rank < 2:
            raise ValueError(f"Shape must be at least rank 2 but is rank {rank}")
    return [
        (_dtypes.int64, TensorShape([None, rank])),
        (dtype, TensorShape([None])),
        (_dtypes.int64, TensorShape([rank])),
    ]


define_op("SetOperation", _infer_set_operation, _set_operation_kernel)


def _operand(value, name: str) -> tuple:
    if isinstance(value, SparseTensor):
        return [value.indices, value.values, value.dense_shape], True, value.dtype
    tensor = convert_to_tensor(value, name=name)
    return [tensor], False, tensor.dtype


def _set_operation(a, b, operation: str, name: str) -> SparseTensor:
    with name_scope(name):
        a_inputs, a_sparse, a_dtype = _operand(a, "a")
        b_inputs, b_sparse, b_dtype = _operand(b, "b")
        if a_dtype != b_dtype:
            raise TypeError(f"sets: a is {a_dtype.name}, b is {b_dtype.name}")
        attrs = {"set_operation": operation, "a_sparse": a_sparse, "b_sparse": b_sparse}
        outputs = apply_op("SetOperation", tuple(a_inputs + b_inputs), attrs, name).outputs
    return SparseTensor(*outputs)


def set_union(a, b, validate_indices=True) -> SparseTensor:
    """The union of the sets of ``a`` and ``b`` (dense tensors or SparseTensors)."""
    return _set_operation(a, b, "union", "SetUnion")


def set_intersection(a, b, validate_indices=True) -> SparseTensor:
    """The intersection of the sets of ``a`` and ``b`` (dense tensors or SparseTensors)."""
    return _set_operation(a, b, "intersection", "SetIntersection")


def set_difference(a, b, aminusb=True, validate_indices=True) -> SparseTensor:
    """The elements of each set of ``a`` not in ``b``'s (``b``'s not in ``a``'s when
    ``aminusb`` is False)."""
    return _set_operation(a, b, "a-b" if aminusb else "b-a", "SetDifference")


def _set_size_kernel(attrs):
    def set_size(indices, values, shape):
        batch, groups = _groups((indices, values, shape), True)
        out = np.zeros(batch, dtype=np.int32)
        for position, members in groups.items():
            out[position] = len(members)
        return out

    return set_size


def _infer_set_size(op):
    if op.inputs[1].dtype not in _SET_TYPES:
        raise TypeError(f"sets take integer or string elements, got {op.inputs[1].dtype.name}")
    shape = op.inputs[0].shape
    rank = shape.as_list()[1] if shape.ndims == 2 else None
    return [(_dtypes.int32, TensorShape(None if rank is None else [None] * (rank - 1)))]


define_op("SetSize", _infer_set_size, _set_size_kernel)


def set_size(a, validate_indices=True):
    """How many distinct values each set (row of the last dimension) of the SparseTensor
    ``a`` holds, an int32 tensor of its batch shape."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"Expected `SparseTensor`, got {a!r}.")
    with name_scope("SetSize"):
        return apply_op("SetSize", (a.indices, a.values, a.dense_shape), {}, "SetSize").outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("SetOperation")
NotDifferentiable("SetSize")

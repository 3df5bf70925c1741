"""Segment sums: adding the rows of a tensor into the rows of a result chosen by an index.

``unsorted_segment_sum(data, segment_ids, num_segments)`` adds ``data[i]`` into row
``segment_ids[i]`` of a result with ``num_segments`` rows (rows no id names stay zero); it is how a
sparse gradient (`dataflow.framework.indexed_slices.IndexedSlices`) becomes dense, and the gradient
of a gather.  ``segment_sum`` is the same for sorted ids, with as many rows as the largest id needs.
Negative ids drop their row, as in TensorFlow; ids at or past ``num_segments`` are an error.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .math_ops import ARITHMETIC_TYPES, INDEX_TYPES, check_dtype

__all__ = ["segment_sum", "unique", "unsorted_segment_sum"]


def _check_ids(op) -> tuple:
    data, ids = op.inputs[0], op.inputs[1]
    check_dtype(data.dtype, ARITHMETIC_TYPES, "segment data")
    check_dtype(ids.dtype, INDEX_TYPES, "segment_ids")
    if data.shape.ndims is not None and ids.shape.ndims is not None:
        if not data.shape[: ids.shape.ndims].is_compatible_with(ids.shape):
            raise ValueError(
                f"segment_ids.shape = {ids.shape} must be a prefix of data.shape = {data.shape}"
            )
    tail = (
        data.shape[ids.shape.ndims :]
        if data.shape.ndims is not None and ids.shape.ndims is not None
        else None
    )
    return data, ids, tail


def _infer_unsorted(op):
    data, _, tail = _check_ids(op)
    num = op.inputs[2]
    check_dtype(num.dtype, INDEX_TYPES, "num_segments")
    known = op.inputs[2].op.attrs.get("value") if op.inputs[2].op.type == "Const" else None
    rows = int(known) if known is not None else None
    shape = TensorShape([rows]).concatenate(tail) if tail is not None else TensorShape(None)
    return [(data.dtype, shape)]


def _unsorted_kernel(attrs):
    def unsorted_segment_sum(data, ids, num_segments):
        rows = int(num_segments)
        if rows < 0:
            raise InvalidArgumentError(None, None, f"num_segments must be >= 0, got {rows}")
        ids = np.asarray(ids)
        tail = data.shape[ids.ndim :]
        flat_ids = ids.reshape(-1)
        if flat_ids.size and flat_ids.max() >= rows:
            bad = flat_ids[flat_ids >= rows][0]
            raise InvalidArgumentError(
                None, None, f"segment_ids[{int(np.argmax(flat_ids >= rows))}] = {bad} is out of "
                f"range [0, {rows})",
            )  # fmt: skip
        flat_data = data.reshape((flat_ids.size,) + tail)
        keep = flat_ids >= 0
        if not keep.all():
            flat_ids, flat_data = flat_ids[keep], flat_data[keep]
        out = np.zeros((rows,) + tail, dtype=data.dtype)
        np.add.at(out, flat_ids, flat_data)
        return out

    return unsorted_segment_sum


define_op("UnsortedSegmentSum", _infer_unsorted, _unsorted_kernel)


def unsorted_segment_sum(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """The sums of the rows of ``data`` grouped by ``segment_ids``, in ``num_segments`` rows."""
    data = convert_to_tensor(data, name="data")
    inputs = (data, convert_to_tensor(segment_ids), convert_to_tensor(num_segments))
    return apply_op("UnsortedSegmentSum", inputs, {}, name or "UnsortedSegmentSum").outputs[0]


def _infer_sorted(op):
    data, _, tail = _check_ids(op)
    shape = TensorShape([None]).concatenate(tail) if tail is not None else TensorShape(None)
    return [(data.dtype, shape)]


def _sorted_kernel(attrs):
    unsorted = _unsorted_kernel(attrs)

    def segment_sum(data, ids):
        flat = np.asarray(ids).reshape(-1)
        if flat.size and (np.any(np.diff(flat) < 0) or flat[0] < 0):
            raise InvalidArgumentError(None, None, "segment ids must be sorted and non-negative")
        return unsorted(data, ids, int(flat[-1]) + 1 if flat.size else 0)

    return segment_sum


define_op("SegmentSum", _infer_sorted, _sorted_kernel)


def segment_sum(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The sums of the rows of ``data`` grouped by the sorted ``segment_ids``."""
    data = convert_to_tensor(data, name="data")
    ids = convert_to_tensor(segment_ids)
    return apply_op("SegmentSum", (data, ids), {}, name or "SegmentSum").outputs[0]


def _infer_unique(op):
    (x,) = op.inputs
    x.shape.with_rank(1)
    return [(x.dtype, TensorShape([None])), (op.attrs["out_idx"], x.shape)]


def _unique_kernel(attrs):
    index_dtype = _dtypes.numpy_dtype(attrs["out_idx"])

    def unique(x):
        values, first, inverse = np.unique(x, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # in order of first appearance, as TensorFlow
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return values[order], rank[inverse.reshape(-1)].astype(index_dtype)

    return unique


define_op("Unique", _infer_unique, _unique_kernel)


def unique(x, out_idx=None, name: Optional[str] = None):
    """``(y, idx)``: the distinct elements of the vector ``x`` in order of first appearance,
    and for each element of ``x`` its position in ``y``."""
    out_idx = _dtypes.as_dtype(out_idx or _dtypes.int32)
    x = convert_to_tensor(x, name="x")
    op = apply_op("Unique", (x,), {"out_idx": out_idx}, name or "Unique")
    return op.outputs[0], op.outputs[1]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402
from .array_ops import concat, expand_dims, ones, rank, reshape, shape, zeros_like  # noqa: E402
from .gather_ops import gather  # noqa: E402
from .math_ops import greater_equal, maximum, subtract, where_v2  # noqa: E402

NotDifferentiable("Unique")


@RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    # Row i of data went to row ids[i] of the result, or nowhere for a negative id.
    ids = op.inputs[1]
    gathered = gather(grad, maximum(ids, 0))
    kept = greater_equal(ids, 0)
    extra_dims = subtract(rank(gathered), rank(ids))
    kept = reshape(kept, concat([shape(ids), ones(expand_dims(extra_dims, 0), _dtypes.int32)], 0))
    return where_v2(kept, gathered, zeros_like(gathered)), None, None


@RegisterGradient("SegmentSum")
def _segment_sum_grad(op, grad):
    return gather(grad, op.inputs[1]), None


# -- IndexedSlices where a Tensor is needed ------------------------------------------------------
# Registered here, where the op that makes the dense tensor is defined.
import warnings  # noqa: E402

from ..framework import indexed_slices as _indexed_slices  # noqa: E402
from ..framework.indexed_slices import IndexedSlices  # noqa: E402
from ..framework.tensor_conversion import register_tensor_conversion_function  # noqa: E402
from .slice_ops import strided_slice  # noqa: E402


def _indexed_slices_to_dense(slices: IndexedSlices, dtype=None, name=None) -> Tensor:
    """The dense tensor ``slices`` stands for (`dataflow.framework.indexed_slices`): an
    ``UnsortedSegmentSum`` of its values into ``dense_shape[0]`` rows."""
    if dtype is not None and _dtypes.as_dtype(dtype) is not slices.dtype:
        raise ValueError(
            f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for "
            f"IndexedSlices with dtype {slices.dtype.name}"
        )
    if slices.dense_shape is None:
        raise ValueError(
            f"Cannot convert {slices!r} to a Tensor: it has no dense_shape, so the number of "
            "rows is unknown."
        )
    static = slices.shape
    if not static.is_fully_defined():
        warnings.warn(
            "Converting sparse IndexedSlices to a dense Tensor of unknown shape. This may "
            "consume a large amount of memory.",
            stacklevel=3,
        )
    elif static.num_elements() > _indexed_slices.LARGE_DENSE_ELEMENTS:
        warnings.warn(
            f"Converting sparse IndexedSlices to a dense Tensor with {static.num_elements()} "
            "elements. This may consume a large amount of memory.",
            stacklevel=3,
        )
    return unsorted_segment_sum(slices.values, slices.indices, _row_count(slices), name=name)


def _row_count(slices: IndexedSlices):
    dense_shape = slices.dense_shape
    if dense_shape.op.type == "Const":
        return int(dense_shape.op.attrs["value"][0])
    return strided_slice(dense_shape, [0], [1], shrink_axis_mask=1)


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_dense)

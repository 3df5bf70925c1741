"""Segment maxima, minima, products and means, sorted and unsorted, and ``dynamic_stitch``.

The unsorted maximum, minimum and product are ops (TensorFlow has kernels for them); an empty
segment holds the lowest finite value of the dtype for a maximum, the highest for a minimum,
1 for a product, as in TensorFlow.  The sorted forms reduce into ``max id + 1``
segments and give 0 for an empty one, as TensorFlow's sorted kernels do; means divide a
segment sum by the segment's size.  Negative ids drop their row.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from . import array_ops as _a
from . import gather_ops as _g
from . import math_ops as _m
from .extra_math_ops import div_no_nan
from .math_ops import graph_of
from .segment_ops import _infer_unsorted, unsorted_segment_sum

__all__ = [
    "dynamic_stitch",
    "unsorted_segment_sqrt_n",
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "unsorted_segment_max",
    "unsorted_segment_mean",
    "unsorted_segment_min",
    "unsorted_segment_prod",
]


def _identity_of(ufunc, dtype: np.dtype):
    if ufunc is np.multiply:
        return 1
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    return info.min if ufunc is np.maximum else info.max


def _reduce_kernel(ufunc):
    def kernel(attrs):
        def unsorted_segment_reduce(data, ids, num_segments):
            rows = int(num_segments)
            if rows < 0:
                raise InvalidArgumentError(None, None, f"num_segments must be >= 0, got {rows}")
            ids = np.asarray(ids)
            tail = data.shape[ids.ndim :]
            flat_ids = ids.reshape(-1)
            if flat_ids.size and flat_ids.max() >= rows:
                raise InvalidArgumentError(
                    None, None, f"segment id {int(flat_ids.max())} is out of range [0, {rows})"
                )
            flat_data = data.reshape((flat_ids.size,) + tail)
            keep = flat_ids >= 0
            out = np.full((rows,) + tail, _identity_of(ufunc, data.dtype), dtype=data.dtype)
            ufunc.at(out, flat_ids[keep], flat_data[keep])
            return out

        return unsorted_segment_reduce

    return kernel


for _type, _ufunc in (
    ("UnsortedSegmentMax", np.maximum),
    ("UnsortedSegmentMin", np.minimum),
    ("UnsortedSegmentProd", np.multiply),
):
    define_op(_type, _infer_unsorted, _reduce_kernel(_ufunc))


def _unsorted(op_type: str, data, segment_ids, num_segments, name) -> Tensor:
    graph = graph_of((data, segment_ids))
    with graph.as_default():
        inputs = (
            convert_to_tensor(data, name="data"),
            convert_to_tensor(segment_ids, name="segment_ids"),
            convert_to_tensor(num_segments, name="num_segments"),
        )
        return apply_op(op_type, inputs, {}, name or op_type).outputs[0]


def unsorted_segment_max(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """The maxima of the rows of ``data`` grouped by ``segment_ids`` (an empty segment holds
    the dtype's lowest finite value)."""
    return _unsorted("UnsortedSegmentMax", data, segment_ids, num_segments, name)


def unsorted_segment_min(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """The minima of the rows of ``data`` grouped by ``segment_ids`` (an empty segment holds
    the dtype's highest finite value)."""
    return _unsorted("UnsortedSegmentMin", data, segment_ids, num_segments, name)


def unsorted_segment_prod(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """The products of the rows of ``data`` grouped by ``segment_ids`` (1 when empty)."""
    return _unsorted("UnsortedSegmentProd", data, segment_ids, num_segments, name)


def _segment_sizes(data: Tensor, ids: Tensor, num_segments) -> Tensor:
    """How many rows each segment has, shaped to divide a segment result."""
    ones = _m.cast(_a.ones_like(ids), data.dtype)
    sizes = unsorted_segment_sum(ones, ids, num_segments)
    extra = data.shape.ndims - ids.shape.ndims if data.shape.ndims is not None else None
    if extra is None or ids.shape.ndims is None:
        raise ValueError(f"segment means need data and ids of known rank ({_user_location()})")
    return _a.reshape(sizes, [-1] + [1] * extra)


def unsorted_segment_mean(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """The means of the rows of ``data`` grouped by ``segment_ids`` (0 when empty)."""
    graph = graph_of((data, segment_ids))
    with graph.as_default(), graph.name_scope(name or "UnsortedSegmentMean"):
        data = convert_to_tensor(data, name="data")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        total = unsorted_segment_sum(data, ids, num_segments)
        sizes = _m.maximum(_segment_sizes(data, ids, num_segments), 1)
        return _m.realdiv(total, sizes) if data.dtype in _m.FLOAT_TYPES else total // sizes


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name: Optional[str] = None) -> Tensor:
    """The sums of the rows of ``data`` grouped by ``segment_ids``, each divided by the square
    root of its segment's row count (0 when empty); floats only."""
    graph = graph_of((data, segment_ids))
    with graph.as_default(), graph.name_scope(name or "UnsortedSegmentSqrtN"):
        data = convert_to_tensor(data, name="data")
        _m.check_dtype(data.dtype, _m.FLOAT_TYPES, "Input 'data' of 'unsorted_segment_sqrt_n'")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        total = unsorted_segment_sum(data, ids, num_segments)
        sizes = _m.maximum(_segment_sizes(data, ids, num_segments), 1)
        return _m.realdiv(total, _m.sqrt(sizes))


def _sorted(reduce, empty_is_zero: bool, data, segment_ids, name, scope: str) -> Tensor:
    graph = graph_of((data, segment_ids))
    with graph.as_default(), graph.name_scope(name or scope):
        data = convert_to_tensor(data, name="data")
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        count = _m.add(_m.reduce_max(_a.concat([_a.reshape(ids, [-1]), [-1]], 0)), 1)
        result = reduce(data, ids, count)
        if not empty_is_zero:
            return result
        filled = _m.greater(_segment_sizes(data, ids, count), 0)
        return _m.where_v2(filled, result, _a.zeros_like(result))


def segment_max(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The maxima of the rows of ``data`` grouped by the sorted ``segment_ids`` (0 when
    empty)."""
    return _sorted(unsorted_segment_max, True, data, segment_ids, name, "SegmentMax")


def segment_min(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The minima of the rows of ``data`` grouped by the sorted ``segment_ids`` (0 when
    empty)."""
    return _sorted(unsorted_segment_min, True, data, segment_ids, name, "SegmentMin")


def segment_prod(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The products of the rows of ``data`` grouped by the sorted ``segment_ids`` (1 when
    empty)."""
    return _sorted(unsorted_segment_prod, False, data, segment_ids, name, "SegmentProd")


def segment_mean(data, segment_ids, name: Optional[str] = None) -> Tensor:
    """The means of the rows of ``data`` grouped by the sorted ``segment_ids`` (0 when
    empty)."""
    return _sorted(unsorted_segment_mean, False, data, segment_ids, name, "SegmentMean")


def dynamic_stitch(indices, data, name: Optional[str] = None) -> Tensor:
    """Interleaves the ``data`` tensors: ``result[indices[m][i]] = data[m][i]``; where an
    index repeats, the later value wins (and takes the gradient).  The result has
    ``max index + 1`` rows; a row no index names is zeros."""
    if len(indices) != len(data) or not indices:
        raise ValueError(
            f"dynamic_stitch at {_user_location()}: needs as many data as indices tensors"
        )
    graph = graph_of(list(indices) + list(data))
    with graph.as_default(), graph.name_scope(name or "DynamicStitch"):
        index_tensors = [convert_to_tensor(i, dtype=_dtypes.int32) for i in indices]
        data_tensors = [convert_to_tensor(d) for d in data]
        dtype = data_tensors[0].dtype
        flat_data = []
        for i, d in zip(index_tensors, data_tensors):
            if d.dtype is not dtype:
                raise TypeError(f"dynamic_stitch at {_user_location()}: data dtypes differ")
            if i.shape.ndims is None or d.shape.ndims is None:
                raise ValueError(f"dynamic_stitch at {_user_location()}: needs known ranks")
            tail = _a.shape(d)[i.shape.ndims :]
            flat_data.append(_a.reshape(d, _a.concat([[-1], tail], 0)))
        flat_index = _a.concat([_a.reshape(i, [-1]) for i in index_tensors], 0)
        values = _a.concat(flat_data, 0)
        rows = _m.add(_m.reduce_max(flat_index), 1)
        positions = _a.range(_a.size(flat_index))
        winner = unsorted_segment_max(positions, flat_index, rows)
        written = _m.greater_equal(winner, 0)
        picked = _g.gather(values, _m.maximum(winner, 0))
        mask_shape = _a.concat([[-1], _a.ones_like(_a.shape(values)[1:])], 0)
        return _m.where_v2(_a.reshape(written, mask_shape), picked, _a.zeros_like(picked))


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402


def _gather_rows(values: Tensor, ids: Tensor, data: Tensor) -> tuple:
    """``values`` gathered at each id (negative ids read row 0), and a mask of the data
    entries whose id is not negative, broadcastable against ``data``."""
    gathered = _g.gather(values, _m.maximum(ids, 0))
    extra = data.shape.ndims - ids.shape.ndims
    kept = _m.greater_equal(ids, 0)
    if extra:
        kept = _a.reshape(kept, _a.concat([_a.shape(ids), [1] * extra], 0))
    return gathered, kept


def _extremum_grad(op, grad):
    """The gradient goes to the entries equal to their segment's extremum, split evenly
    between ties, as TensorFlow's."""
    data, ids, num_segments = op.inputs
    extremum, kept = _gather_rows(op.outputs[0], ids, data)
    selected = _m.logical_and(_m.equal(data, extremum), kept)
    count = unsorted_segment_sum(_m.cast(selected, grad.dtype), ids, num_segments)
    share, _ = _gather_rows(div_no_nan(grad, count), ids, data)
    return _m.where_v2(selected, share, _a.zeros_like(share)), None, None


RegisterGradient("UnsortedSegmentMax")(_extremum_grad)
RegisterGradient("UnsortedSegmentMin")(_extremum_grad)


@RegisterGradient("UnsortedSegmentProd")
def _prod_grad(op, grad):
    """The product of the other entries of the segment, exact with zeros: one zero in a
    segment passes the others' product to it and 0 to the rest; two or more pass 0."""
    data, ids, num_segments = op.inputs
    is_zero = _m.equal(data, _a.zeros_like(data))
    zeros = unsorted_segment_sum(_m.cast(is_zero, _dtypes.int32), ids, num_segments)
    grad = _m.where_v2(_m.greater(zeros, 1), _a.zeros_like(grad), grad)
    nonzero_data = _m.where_v2(is_zero, _a.ones_like(data), data)
    nonzero_product = unsorted_segment_prod(nonzero_data, ids, num_segments)
    product, kept = _gather_rows(op.outputs[0], ids, data)
    others_nonzero, _ = _gather_rows(nonzero_product, ids, data)
    partial = _m.where_v2(is_zero, others_nonzero, _m.realdiv(product, nonzero_data))
    gathered_grad, _ = _gather_rows(grad, ids, data)
    gathered_grad = _m.where_v2(kept, gathered_grad, _a.zeros_like(gathered_grad))
    return _m.multiply(gathered_grad, partial), None, None

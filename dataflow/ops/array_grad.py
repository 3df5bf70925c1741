"""Gradients of the ops of `array_ops` (and the ops only they use, as `StridedSliceGrad`).

Each gradient builds ops of the op library, so gradients of gradients can be taken.  This
module imports the op modules it builds with; none of them imports it."""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes

# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient, zeros_like_output  # noqa: E402
from ..framework.graph import Tensor
from ..framework.indexed_slices import IndexedSlices
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_shape import TensorShape
from .array_ops import (
    _pyrange,
    _shape_from_vector,
    concat,
    ones_like,
    reshape,
    shape,
    size,
    stack,
    transpose,
    unstack,
)
from .constant_op import constant
from .math_ops import INDEX_TYPES, add, check_dtype, reduce_sum, where  # noqa: E402
from .slice_ops import _MASKS, _strided_slice_indexer, slice  # noqa: A004

for _type in "StopGradient ZerosLike OnesLike Shape Size Rank Range OneHot".split():
    NotDifferentiable(_type)


def _infer_strided_slice_grad(op):
    shape, begin, end, strides, dy = op.inputs
    check_dtype(shape.dtype, INDEX_TYPES, "StridedSliceGrad's shape")
    return [(dy.dtype, _shape_from_vector(shape, "StridedSliceGrad's shape"))]


def _strided_slice_grad_kernel(attrs):
    index_of = _strided_slice_indexer(attrs)

    def strided_slice_grad(shape, begin, end, strides, dy):
        out = np.zeros(tuple(int(d) for d in shape), dtype=dy.dtype)
        index = index_of(begin, end, strides)
        # Assigning through the forward index scatters dy into place, a single element included.
        out[index] = np.reshape(dy, np.shape(out[index]))
        return out

    return strided_slice_grad


# ``StridedSliceGrad(shape, begin, end, strides, dy)``: zeros of ``shape`` with ``dy`` written
# where ``StridedSlice`` with the same masks reads (TensorFlow's op of that name).
define_op("StridedSliceGrad", _infer_strided_slice_grad, _strided_slice_grad_kernel)


def _strided_slice_grad(x_shape, begin, end, strides, dy, attrs) -> Tensor:
    inputs = (x_shape, begin, end, strides, dy)
    return apply_op("StridedSliceGrad", inputs, dict(attrs), "StridedSliceGrad").outputs[0]


@RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    attrs = {m: op.attrs[m] for m in _MASKS}
    dy = apply_op("StridedSlice", (grad, begin, end, strides), attrs, "StridedSlice").outputs[0]
    return None, None, None, None, dy


@RegisterGradient("StridedSlice")
def _strided_slice_grad_fn(op, grad):
    x, begin, end, strides = op.inputs
    attrs = {m: op.attrs[m] for m in _MASKS}
    return _strided_slice_grad(shape(x), begin, end, strides, grad, attrs), None, None, None


@RegisterGradient("Slice")
def _slice_grad(op, grad):
    x, begin, size_ = op.inputs
    x_shape = shape(x, out_type=begin.dtype)
    end = where(equal_minus_one(size_), x_shape, add(begin, size_))
    attrs = dict.fromkeys(_MASKS, 0)
    return _strided_slice_grad(x_shape, begin, end, ones_like(begin), grad, attrs), None, None


def equal_minus_one(t: Tensor) -> Tensor:
    from .math_ops import equal

    return equal(t, constant(-1, dtype=t.dtype))


@RegisterGradient("Identity")
def _identity_grad(op, grad):
    return grad


@RegisterGradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


@RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    return reshape(grad, shape(op.inputs[0])), None


RegisterGradient("ExpandDims")(lambda op, grad: reshape(grad, shape(op.inputs[0])))
RegisterGradient("Squeeze")(lambda op, grad: reshape(grad, shape(op.inputs[0])))


@RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    perm = op.attrs["perm"]
    if perm is None:
        return transpose(grad)
    rank = len(perm)
    return transpose(grad, list(np.argsort([p % rank for p in perm])))


def _axis_of(op, rank_source: Tensor) -> int:
    rank = rank_source.shape.ndims
    axis = op.attrs["axis"]
    if axis < 0:
        if rank is None:
            raise ValueError(f"The gradient of '{op.name}' needs the rank of its input")
        axis %= rank
    return axis


@RegisterGradient("ConcatV2")
def _concat_grad(op, grad):
    values = op.inputs
    axis = _axis_of(op, values[0])
    sizes = [v.shape[axis] if v.shape.ndims is not None else None for v in values]
    if all(s is not None for s in sizes):
        return apply_op(
            "SplitV", (grad,), {"size_splits": tuple(sizes), "axis": axis}, "split"
        ).outputs
    # Run-time sizes: a Slice per input, starting at the sum of the sizes before it.
    rank = values[0].shape.ndims
    if rank is None:
        raise ValueError(f"The gradient of '{op.name}' needs the rank of its inputs")
    grads = []
    offset = constant(0, dtype=_dtypes.int32)
    for v in values:
        v_shape = shape(v)
        begin = stack([offset if i == axis else 0 for i in _pyrange(rank)])
        grads.append(slice(grad, begin, v_shape))
        offset = add(offset, v_shape[axis])
    return grads


@RegisterGradient("Pack")
def _pack_grad(op, grad):
    return unstack(grad, num=len(op.inputs), axis=op.attrs["axis"])


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    filled = [g if g is not None else zeros_like_output(t) for g, t in zip(grads, op.outputs)]
    return stack(filled, axis=op.attrs["axis"])


def _split_grad(op, *grads):
    filled = [g if g is not None else zeros_like_output(t) for g, t in zip(grads, op.outputs)]
    return concat(filled, axis=op.attrs["axis"])


RegisterGradient("Split")(_split_grad)
RegisterGradient("SplitV")(_split_grad)


@RegisterGradient("GatherV2")
def _gather_grad(op, grad):
    # Along axis 0 the gradient is sparse: the gathered rows, sent back to their indices (the
    # rows gathered twice add up when it is made dense, or applied by an optimizer).
    from .segment_ops import unsorted_segment_sum

    params, indices = op.inputs
    axis = _axis_of(op, params)
    params_shape = shape(params)
    if axis == 0:
        rows = stack([size(indices)])
        values = reshape(grad, concat([rows, params_shape[1:]], 0))
        return IndexedSlices(values, reshape(indices, rows), params_shape), None
    rank = params.shape.ndims
    if rank is None or indices.shape.ndims is None:
        raise ValueError(f"The gradient of '{op.name}' needs the ranks of params and indices")
    n_idx = indices.shape.ndims
    flat_indices = reshape(indices, [-1])
    # Move the gathered axis (and the index dims) of grad to the front, sum rows by index.
    order = (
        list(_pyrange(axis, axis + n_idx))
        + list(_pyrange(axis))
        + list(_pyrange(axis + n_idx, rank - 1 + n_idx))
    )
    flat_grad = reshape(transpose(grad, order), stack([size(flat_indices), -1]))
    scattered = unsorted_segment_sum(flat_grad, flat_indices, params_shape[axis])
    perm = [axis] + [i for i in _pyrange(rank) if i != axis]
    # Element by element, so the dimensions of params known statically stay known in the result.
    result = reshape(scattered, stack([params_shape[i] for i in perm]))
    return transpose(result, list(np.argsort(perm))), None


@RegisterGradient("Tile")
def _tile_grad(op, grad):
    x, multiples = op.inputs
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"The gradient of '{op.name}' needs the rank of its input")
    x_shape = shape(x, out_type=multiples.dtype)
    split_shape = reshape(transpose(stack([multiples, x_shape])), [-1])
    summed = reduce_sum(reshape(grad, split_shape), list(_pyrange(0, 2 * rank, 2)))
    return reshape(summed, x_shape), None


@RegisterGradient("PadV2")
def _pad_grad(op, grad):
    x = op.inputs[0]
    begin = [before for before, _ in op.attrs["paddings"]]
    return slice(grad, begin, shape(x)), None


@RegisterGradient("Fill")
def _fill_grad(op, grad):
    return None, reduce_sum(grad)


def _infer_mirror_pad_grad(op):
    (dy,) = op.inputs
    if dy.shape.ndims is None:
        return [(dy.dtype, TensorShape(None))]
    dims = [
        None if d is None else d - before - after
        for d, (before, after) in zip(dy.shape.as_list(), op.attrs["paddings"])
    ]
    return [(dy.dtype, TensorShape(dims))]


def _mirror_pad_grad_kernel(attrs):
    paddings, offset = attrs["paddings"], 1 if attrs["mode"] == "REFLECT" else 0

    def mirror_pad_grad(dy):
        out = dy
        for axis, (before, after) in enumerate(paddings):
            size = out.shape[axis] - before - after
            # Index of the input element each padded position copies.
            source = np.concatenate(
                [
                    np.arange(before, 0, -1) - 1 + offset,
                    np.arange(size),
                    size - 1 - offset - np.arange(after),
                ]
            )
            moved = np.moveaxis(out, axis, 0)
            folded = np.zeros((size,) + moved.shape[1:], dtype=dy.dtype)
            np.add.at(folded, source, moved)
            out = np.moveaxis(folded, 0, axis)
        return out

    return mirror_pad_grad


# ``MirrorPadGrad(dy)``: ``dy`` folded back onto the unpadded input (the adjoint of MirrorPad).
define_op("MirrorPadGrad", _infer_mirror_pad_grad, _mirror_pad_grad_kernel)


@RegisterGradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    attrs = {"paddings": op.attrs["paddings"], "mode": op.attrs["mode"]}
    return apply_op("MirrorPadGrad", (grad,), attrs, "MirrorPadGrad").outputs[0]


@RegisterGradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    attrs = {"paddings": op.attrs["paddings"], "mode": op.attrs["mode"]}
    return apply_op("MirrorPad", (grad,), attrs, "MirrorPad").outputs[0]

"""Moving blocks of the spatial dimensions into the batch dimension and back.

``space_to_batch_nd(input, block_shape, paddings)`` pads the ``M = len(block_shape)`` dimensions
after the batch dimension, cuts each into blocks of ``block_shape[i]`` and moves the offsets
inside a block into the batch dimension: an input ``[batch] + spatial + rest`` becomes
``[batch * prod(block_shape)] + [padded[i] // block_shape[i]] + rest``, the batch index of the
output being ``offset * batch + b`` for the offset's row-major position in the block.
``batch_to_space_nd(input, block_shape, crops)`` undoes it and crops.  Each is the other's
gradient.  ``space_to_batch``/``batch_to_space`` are TF1's 4-D forms with a square block;
``required_space_to_batch_paddings`` computes the paddings that make the spatial sizes multiples
of the block; ``parallel_stack`` stacks tensors of a fully known shape.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .extra_array_ops import get_static_value
from .math_ops import INDEX_TYPES, check_dtype

__all__ = [
    "batch_to_space",
    "batch_to_space_nd",
    "parallel_stack",
    "required_space_to_batch_paddings",
    "space_to_batch",
    "space_to_batch_nd",
]


def _block_and_pairs(op, what: str):
    """``(block_shape, pairs)`` as numpy arrays when both are known at build time (else
    None), after the checks of their shapes and values TensorFlow makes."""
    _, block, pairs = op.inputs
    check_dtype(block.dtype, INDEX_TYPES, f"{op.type}'s block_shape")
    check_dtype(pairs.dtype, INDEX_TYPES, f"{op.type}'s {what}")
    if block.shape.ndims is not None and block.shape.ndims != 1:
        raise ValueError(f"block_shape must have rank 1, got shape {block.shape}")
    m = block.shape[0] if block.shape.ndims == 1 else None
    if pairs.shape.ndims is not None and (
        pairs.shape.ndims != 2 or not pairs.shape[1:].is_compatible_with([2])
    ):
        raise ValueError(f"{what} must have shape [M, 2], got {pairs.shape}")
    if m is not None and pairs.shape.ndims == 2 and not pairs.shape[:1].is_compatible_with([m]):
        raise ValueError(f"{what} has shape {pairs.shape}, but block_shape has {m} elements")
    block_value, pairs_value = get_static_value(block), get_static_value(pairs)
    if block_value is not None and np.any(block_value < 1):
        raise ValueError(f"block_shape must be positive, got {block_value.tolist()}")
    if pairs_value is not None and np.any(pairs_value < 0):
        raise ValueError(f"{what} must be non-negative, got {pairs_value.tolist()}")
    return m, block_value, pairs_value


def _shape_unless_all_known(x, m, block, pairs):
    """The inferred output when the rank of ``x``, the block count ``m`` or the values of the
    block shape and ``pairs`` (paddings or crops) are unknown; None when all are known."""
    if x.shape.ndims is None or m is None:
        return [(x.dtype, TensorShape(None))]
    if x.shape.ndims < m + 1:
        raise ValueError(f"input must have rank at least {m + 1}, got shape {x.shape}")
    dims = x.shape.as_list()
    if block is None or pairs is None:
        return [(x.dtype, TensorShape([None] * (m + 1) + dims[m + 1 :]))]
    return None


def _infer_space_to_batch(op):
    x = op.inputs[0]
    m, block, pads = _block_and_pairs(op, "paddings")
    partly_known = _shape_unless_all_known(x, m, block, pads)
    if partly_known is not None:
        return partly_known
    dims = x.shape.as_list()
    out = [None if dims[0] is None else dims[0] * int(np.prod(block))]
    for i in range(m):
        size = dims[i + 1]
        if size is None:
            out.append(None)
            continue
        padded = size + int(pads[i].sum())
        if padded % int(block[i]):
            raise ValueError(
                f"Dimension size must be evenly divisible by {int(block[i])} but is {padded}"
            )
        out.append(padded // int(block[i]))
    return [(x.dtype, TensorShape(out + dims[m + 1 :]))]


def _infer_batch_to_space(op):
    x = op.inputs[0]
    m, block, crops = _block_and_pairs(op, "crops")
    partly_known = _shape_unless_all_known(x, m, block, crops)
    if partly_known is not None:
        return partly_known
    dims = x.shape.as_list()
    count = int(np.prod(block))
    if dims[0] is not None and dims[0] % count:
        raise ValueError(f"Dimension size must be evenly divisible by {count} but is {dims[0]}")
    out = [None if dims[0] is None else dims[0] // count]
    for i in range(m):
        size = dims[i + 1]
        if size is None:
            out.append(None)
            continue
        cropped = size * int(block[i]) - int(crops[i].sum())
        if cropped < 0:
            raise ValueError(f"crops {crops[i].tolist()} are larger than dimension {i + 1}")
        out.append(cropped)
    return [(x.dtype, TensorShape(out + dims[m + 1 :]))]


def _as_block(block_shape) -> list:
    block = [int(b) for b in np.asarray(block_shape).reshape(-1)]
    if any(b < 1 for b in block):
        raise InvalidArgumentError(None, None, f"block_shape must be positive, got {block}")
    return block


def _checked_arguments(x, block_shape, amounts, what: str):
    """The kernels' arguments as arrays: ``x``, the block sizes, and ``amounts`` (the paddings or
    crops, named ``what``) as one non-negative (before, after) pair per block dimension."""
    x = np.asarray(x)
    block = _as_block(block_shape)
    m = len(block)
    amounts = np.asarray(amounts, dtype=np.int64).reshape(m, 2)
    if np.any(amounts < 0):
        raise InvalidArgumentError(None, None, f"{what} must be non-negative: {amounts}")
    if x.ndim < m + 1:
        raise InvalidArgumentError(
            None, None, f"input rank should be >= {m + 1} instead of {x.ndim}"
        )
    return x, block, amounts


def _space_to_batch_kernel(attrs):
    def space_to_batch(x, block_shape, paddings):
        x, block, pads = _checked_arguments(x, block_shape, paddings, "paddings")
        m = len(block)
        padded = np.pad(x, [(0, 0), *map(tuple, pads), *[(0, 0)] * (x.ndim - 1 - m)])
        batch, rest = padded.shape[0], padded.shape[m + 1 :]
        shape = [batch]
        for i, b in enumerate(block):
            size = padded.shape[i + 1]
            if size % b:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"padded_shape[{i}]={size} is not divisible by block_shape[{i}]={b}",
                )
            shape += [size // b, b]
        blocks = padded.reshape(shape + list(rest))
        perm = (
            [2 + 2 * i for i in range(m)]
            + [0]
            + [1 + 2 * i for i in range(m)]
            + list(range(1 + 2 * m, blocks.ndim))
        )
        out_shape = [batch * int(np.prod(block))] + shape[1::2] + list(rest)
        return np.ascontiguousarray(blocks.transpose(perm)).reshape(out_shape)

    return space_to_batch


def _batch_to_space_kernel(attrs):
    def batch_to_space(x, block_shape, crops):
        x, block, crops = _checked_arguments(x, block_shape, crops, "crops")
        m = len(block)
        count = int(np.prod(block))
        if x.shape[0] % count:
            raise InvalidArgumentError(
                None,
                None,
                f"Input batch dimension ({x.shape[0]}) is not divisible by the product of "
                f"block sizes ({count})",
            )
        batch, spatial, rest = x.shape[0] // count, x.shape[1 : m + 1], x.shape[m + 1 :]
        blocks = x.reshape(block + [batch] + list(x.shape[1:]))
        perm = [m]
        for i in range(m):
            perm += [m + 1 + i, i]
        perm += list(range(2 * m + 1, blocks.ndim))
        full = [s * b for s, b in zip(spatial, block)]
        out = np.ascontiguousarray(blocks.transpose(perm)).reshape([batch, *full, *rest])
        index = [slice(None)]
        for i in range(m):
            start, stop = int(crops[i, 0]), full[i] - int(crops[i, 1])
            if stop < start:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Crops must be non-negative and not larger than the dimension: "
                    f"crops[{i}] = {crops[i].tolist()} for size {full[i]}",
                )
            index.append(slice(start, stop))
        return out[tuple(index)]

    return batch_to_space


define_op("SpaceToBatchND", _infer_space_to_batch, _space_to_batch_kernel)
define_op("BatchToSpaceND", _infer_batch_to_space, _batch_to_space_kernel)


def _inputs(input, block_shape, pairs, what):  # noqa: A002
    return (
        convert_to_tensor(input, name="input"),
        convert_to_tensor(block_shape, name="block_shape"),
        convert_to_tensor(pairs, name=what),
    )


def space_to_batch_nd(input, block_shape, paddings, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Pads the dimensions after the batch dimension and moves ``block_shape`` blocks of them
    into the batch dimension (see the module docstring)."""
    inputs = _inputs(input, block_shape, paddings, "paddings")
    return apply_op("SpaceToBatchND", inputs, {}, name or "SpaceToBatchND").outputs[0]


def batch_to_space_nd(input, block_shape, crops, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse of `space_to_batch_nd`: moves blocks of the batch dimension back into the
    dimensions after it, then crops them."""
    inputs = _inputs(input, block_shape, crops, "crops")
    return apply_op("BatchToSpaceND", inputs, {}, name or "BatchToSpaceND").outputs[0]


def _square_block(block_size, block_shape, what: str) -> np.ndarray:
    if block_size is not None and block_shape is not None:
        raise ValueError(f"{what}: pass only one of block_size and block_shape")
    size = block_shape if block_size is None else block_size
    if size is None:
        raise ValueError(f"{what}: block_size is required")
    return np.array([size, size], dtype=np.int64)


def space_to_batch(input, paddings, block_size=None, name=None, block_shape=None) -> Tensor:  # noqa: A002
    """`space_to_batch_nd` of a 4-D ``[batch, height, width, depth]`` input with a square
    block of ``block_size`` (``block_shape`` is its newer name)."""
    block = _square_block(block_size, block_shape, "space_to_batch")
    result = space_to_batch_nd(input, block, paddings, name=name)
    result.set_shape(result.shape.with_rank(4))
    return result


def batch_to_space(input, crops, block_size, name=None, block_shape=None) -> Tensor:  # noqa: A002
    """`batch_to_space_nd` of a 4-D input with a square block of ``block_size``."""
    block = _square_block(block_size, block_shape, "batch_to_space")
    result = batch_to_space_nd(input, block, crops, name=name)
    result.set_shape(result.shape.with_rank(4))
    return result


def required_space_to_batch_paddings(input_shape, block_shape, base_paddings=None, name=None):
    """``(paddings, crops)``: the paddings (``base_paddings`` plus what makes each padded size
    a multiple of ``block_shape``) and the crops that undo the extra part, as TensorFlow
    computes them (constants when the inputs are known at build time)."""
    from .array_ops import stack, zeros
    from .math_ops import mod as floormod

    with name_scope(name, "required_space_to_batch_paddings"):
        input_shape = convert_to_tensor(input_shape, name="input_shape")
        block_shape = convert_to_tensor(block_shape, name="block_shape")
        if input_shape.dtype != block_shape.dtype:
            from .math_ops import cast

            input_shape = cast(input_shape, block_shape.dtype)
        block_shape.shape.assert_has_rank(1)
        input_shape.shape.assert_is_compatible_with(block_shape.shape)
        num_dims = block_shape.shape[0]
        if num_dims is None:
            raise ValueError("block_shape must have a known number of elements")
        if base_paddings is not None:
            base_paddings = convert_to_tensor(base_paddings, dtype=block_shape.dtype)
            base_paddings.shape.assert_is_compatible_with([num_dims, 2])
        else:
            base_paddings = zeros([num_dims, 2], block_shape.dtype)
        known = [get_static_value(t) for t in (input_shape, block_shape, base_paddings)]
        if all(v is not None for v in known):
            shape_v, block_v, base_v = (np.asarray(v) for v in known)
            pad_start = base_v[:, 0]
            full = shape_v + pad_start + base_v[:, 1]
            pad_end = base_v[:, 1] + (block_v - full % block_v) % block_v
            crop_end = pad_end - base_v[:, 1]
            dtype = block_shape.dtype
            paddings = convert_to_tensor(
                np.stack([pad_start, pad_end], axis=1).astype(dtype.as_numpy_dtype),
                name="paddings",
            )
            crops = convert_to_tensor(
                np.stack([np.zeros_like(crop_end), crop_end], axis=1).astype(dtype.as_numpy_dtype),
                name="crops",
            )
            return paddings, crops
        pad_start = base_paddings[:, 0]
        orig_pad_end = base_paddings[:, 1]
        full_input_shape = input_shape + pad_start + orig_pad_end
        pad_end_extra = floormod(block_shape - floormod(full_input_shape, block_shape), block_shape)
        pad_end = orig_pad_end + pad_end_extra
        paddings = stack([[pad_start[i], pad_end[i]] for i in range(num_dims)], name="paddings")
        crops = stack([[0, pad_end_extra[i]] for i in range(num_dims)], name="crops")
        return paddings, crops


def parallel_stack(values, name: str = "parallel_stack") -> Tensor:
    """`stack` of tensors whose shape is fully known at build time (TensorFlow's
    ``ParallelConcat`` copies each into a preallocated output, which needs that shape)."""
    from .array_ops import stack

    with name_scope(name):
        values = [convert_to_tensor(v) for v in values]
        shape = values[0].shape if values else TensorShape(None)
        for v in values[1:]:
            shape = shape.merge_with(v.shape)
        if not shape.is_fully_defined():
            raise ValueError(
                f"parallel_stack: the values' shape must be fully defined, got {shape}"
            )
        return stack(values, name="ParallelConcat")


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402


@RegisterGradient("SpaceToBatchND")
def _space_to_batch_grad(op, grad):
    return batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None


@RegisterGradient("BatchToSpaceND")
def _batch_to_space_grad(op, grad):
    return space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None

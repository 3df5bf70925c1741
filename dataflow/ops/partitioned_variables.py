"""TF1's variable partitioners and ``create_partitioned_variables``.

A partitioner is a function ``(shape, dtype) -> [partitions per axis]`` that says how many
slices a variable is cut into along one axis (``fixed_size_partitioner``,
``min_max_variable_partitioner``, ``variable_axis_size_partitioner``, as TensorFlow computes
them).  ``create_partitioned_variables`` makes the slices themselves: one variable a slice,
``<name>/part_<i>``, the first slices one larger while the size does not divide evenly, each
initialized from its part of ``initializer`` (a tensor of the full shape is sliced; an
initializer function gets the slice's shape and a ``partition_info`` of the full shape, so that
fans come from the full variable, as in TensorFlow).
"""

from __future__ import annotations

import math

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.tensor_shape import TensorShape

__all__ = [
    "create_partitioned_variables",
    "fixed_size_partitioner",
    "min_max_variable_partitioner",
    "variable_axis_size_partitioner",
]


def _element_size(dtype, bytes_per_string_element: int) -> int:
    dtype = _dtypes.as_dtype(dtype)
    if dtype.base_dtype == _dtypes.string:
        return bytes_per_string_element
    return dtype.size


def variable_axis_size_partitioner(
    max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None
):
    """A partitioner that cuts along ``axis`` into shards of at most ``max_shard_bytes``
    (as nearly as slices along one axis allow), and at most ``max_shards`` shards."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(
            "Both max_shard_bytes and bytes_per_string_element must be positive. "
            f"Currently, max_shard_bytes is {max_shard_bytes} and"
            f"bytes_per_string_element is {bytes_per_string_element}"
        )
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        element_size = _element_size(dtype, bytes_per_string_element)
        partitions = [1] * shape.ndims
        size = shape.as_list()[axis]
        bytes_per_slice = 1.0 * (shape.num_elements() / size) * element_size
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(1.0 * size / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions[axis] = axis_shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(
    max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16
):
    """A partitioner that gives each slice at least ``min_slice_size`` bytes, into at most
    ``max_partitions`` slices along ``axis``."""

    def _partitioner(shape, dtype):
        shape = TensorShape(shape)
        if axis >= shape.ndims:
            raise ValueError(
                f"Cannot partition variable along axis {axis} when shape is only {shape}"
            )
        total_size_bytes = shape.num_elements() * _element_size(dtype, bytes_per_string_element)
        partitions = total_size_bytes / min_slice_size
        partitions_list = [1] * shape.ndims
        partitions_list[axis] = max(
            1, min(shape.as_list()[axis], max_partitions, int(math.ceil(partitions)))
        )
        return partitions_list

    return _partitioner


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner that cuts along ``axis`` into ``num_shards`` slices (fewer when the axis
    is shorter)."""

    def _partitioner(shape, **unused_args):
        shape = TensorShape(shape)
        partitions_list = [1] * shape.ndims
        partitions_list[axis] = min(num_shards, shape.as_list()[axis])
        return partitions_list

    return _partitioner


class _PartitionInfo:
    """Where a slice lies in its full variable (what initializers read ``full_shape`` of)."""

    def __init__(self, full_shape, var_offset):
        self.full_shape = list(full_shape)
        self.var_offset = list(var_offset)

    def single_offset(self, shape):
        axis = self.single_slice_dim(shape)
        return 0 if axis is None else self.var_offset[axis]

    def single_slice_dim(self, shape):
        for i, (full, part) in enumerate(zip(self.full_shape, shape)):
            if full != part:
                return i
        return None


def create_partitioned_variables(
    shape,
    slicing,
    initializer,
    dtype=_dtypes.float32,
    trainable=True,
    collections=None,
    name=None,
    reuse=None,
):
    """The variables of a variable of ``shape`` cut into ``slicing[i]`` slices along the one
    axis with ``slicing[i] > 1`` (see the module docstring): a list, in order along the axis."""
    from .slice_ops import slice as _slice
    from .variable_scope import get_variable, variable_scope

    shape, slicing = list(shape), list(slicing)
    if len(shape) != len(slicing):
        raise ValueError(
            "The 'shape' and 'slicing' of a partitioned Variable must have the length: "
            f"shape: {shape}, slicing: {slicing}"
        )
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    sliced = [i for i, n in enumerate(slicing) if n > 1]
    if len(sliced) > 1:
        raise ValueError(
            "Can only slice a variable along one dimension: shape: "
            f"{tuple(shape)}, partitioning: {slicing}"
        )
    axis = sliced[0] if sliced else 0
    count = slicing[axis]
    size = shape[axis]
    base, slack = divmod(size, count)
    if isinstance(initializer, Tensor):
        dtype = initializer.dtype.base_dtype
    variables = []
    with variable_scope(name, "PartitionedVariable", reuse=reuse):
        offset = 0
        for i in range(count):
            part = base + (1 if i < slack else 0)
            if not 0 <= offset < size or part == 0:
                raise ValueError(
                    f"Expected 0 <= offset < shape but found offset={offset}, shape={size} "
                    f"for var_offset={[offset if k == axis else 0 for k in range(len(shape))]}"
                    f", full_shape={shape}"
                )
            part_shape = list(shape)
            part_shape[axis] = part
            var_offset = [offset if k == axis else 0 for k in range(len(shape))]
            if isinstance(initializer, Tensor):
                value = _slice(initializer, var_offset, part_shape)
                init, init_shape = value, None
            else:
                info = _PartitionInfo(shape, var_offset)
                init = _sliced_initializer(initializer, info)
                init_shape = part_shape
            variables.append(
                get_variable(
                    f"part_{i}",
                    shape=init_shape,
                    dtype=dtype,
                    initializer=init,
                    trainable=trainable,
                    collections=collections,
                )
            )
            offset += part
    return variables


def _sliced_initializer(initializer, partition_info):
    """``initializer`` called with the slice's ``partition_info`` where it takes one."""
    import inspect

    if inspect.isclass(initializer):
        initializer = initializer()
    try:
        takes_info = "partition_info" in inspect.signature(initializer).parameters
    except (TypeError, ValueError):
        takes_info = False
    if not takes_info:
        return initializer

    def init(shape, dtype=None):
        return initializer(shape, dtype=dtype, partition_info=partition_info)

    return init

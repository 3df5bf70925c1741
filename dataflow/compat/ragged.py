"""``df.ragged``: TensorFlow 1.x's ``tf.ragged`` names for RaggedTensors and their ops."""

from ..framework.ragged_tensor import RaggedTensor, RaggedTensorSpec, RaggedTensorValue
from ..ops.ragged_extra_ops import (
    boolean_mask,
    cross,
    cross_hashed,
    stack,
    stack_dynamic_partitions,
)
from ..ops.ragged_ops import (
    constant,
    constant_value,
    map_flat_values,
    placeholder,
    row_splits_to_segment_ids,
    segment_ids_to_row_splits,
)
from ..ops.ragged_ops import ragged_range as range  # noqa: A004 - TensorFlow's name

__all__ = [
    "RaggedTensor",
    "RaggedTensorSpec",
    "RaggedTensorValue",
    "boolean_mask",
    "constant",
    "constant_value",
    "cross",
    "cross_hashed",
    "map_flat_values",
    "placeholder",
    "range",
    "row_splits_to_segment_ids",
    "segment_ids_to_row_splits",
    "stack",
    "stack_dynamic_partitions",
]

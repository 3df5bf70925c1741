"""``df.sparse``: TensorFlow 1.x's ``tf.sparse`` names for the SparseTensor ops."""

from ..framework.sparse_tensor import SparseTensor, SparseTensorValue
from ..ops.accumulator_ops import SparseConditionalAccumulator
from ..ops.assorted_ops import sparse_bincount as bincount
from ..ops.ragged_extra_ops import sparse_cross as cross
from ..ops.ragged_extra_ops import sparse_cross_hashed as cross_hashed
from ..ops.sparse_extra_ops import sparse_concat as concat
from ..ops.sparse_extra_ops import sparse_expand_dims as expand_dims
from ..ops.sparse_extra_ops import sparse_eye as eye
from ..ops.sparse_extra_ops import sparse_fill_empty_rows as fill_empty_rows
from ..ops.sparse_extra_ops import sparse_from_dense as from_dense
from ..ops.sparse_extra_ops import sparse_mask as mask
from ..ops.sparse_extra_ops import sparse_maximum as maximum
from ..ops.sparse_extra_ops import sparse_merge as merge
from ..ops.sparse_extra_ops import sparse_minimum as minimum
from ..ops.sparse_extra_ops import sparse_reduce_max as reduce_max
from ..ops.sparse_extra_ops import sparse_reduce_max_sparse as reduce_max_sparse
from ..ops.sparse_extra_ops import sparse_reduce_sum_sparse as reduce_sum_sparse
from ..ops.sparse_extra_ops import sparse_reset_shape as reset_shape
from ..ops.sparse_extra_ops import sparse_reshape as reshape
from ..ops.sparse_extra_ops import sparse_retain as retain
from ..ops.sparse_extra_ops import sparse_segment_mean as segment_mean
from ..ops.sparse_extra_ops import sparse_segment_sqrt_n as segment_sqrt_n
from ..ops.sparse_extra_ops import sparse_segment_sum as segment_sum
from ..ops.sparse_extra_ops import sparse_slice as slice  # noqa: A004 - TensorFlow's name
from ..ops.sparse_extra_ops import sparse_softmax as softmax
from ..ops.sparse_extra_ops import sparse_split as split
from ..ops.sparse_extra_ops import sparse_to_indicator as to_indicator
from ..ops.sparse_extra_ops import sparse_transpose as transpose
from ..ops.sparse_ops import sparse_add as add
from ..ops.sparse_ops import sparse_placeholder as placeholder
from ..ops.sparse_ops import sparse_reduce_sum as reduce_sum
from ..ops.sparse_ops import sparse_reorder as reorder
from ..ops.sparse_ops import sparse_tensor_dense_matmul as sparse_dense_matmul
from ..ops.sparse_ops import sparse_tensor_to_dense as to_dense

matmul = sparse_dense_matmul

__all__ = [
    "SparseConditionalAccumulator",
    "SparseTensor",
    "SparseTensorValue",
    "add",
    "bincount",
    "concat",
    "cross",
    "cross_hashed",
    "expand_dims",
    "eye",
    "fill_empty_rows",
    "from_dense",
    "mask",
    "matmul",
    "maximum",
    "merge",
    "minimum",
    "placeholder",
    "reduce_max",
    "reduce_max_sparse",
    "reduce_sum",
    "reduce_sum_sparse",
    "reorder",
    "reset_shape",
    "reshape",
    "retain",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "slice",
    "softmax",
    "sparse_dense_matmul",
    "split",
    "to_dense",
    "to_indicator",
    "transpose",
]

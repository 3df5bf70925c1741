"""``df.sparse``: TensorFlow 1.x's ``tf.sparse`` names for the SparseTensor ops."""

from .ops.sparse_ops import sparse_add as add
from .ops.sparse_ops import sparse_reduce_sum as reduce_sum
from .ops.sparse_ops import sparse_reorder as reorder
from .ops.sparse_ops import sparse_tensor_dense_matmul as sparse_dense_matmul
from .ops.sparse_ops import sparse_tensor_to_dense as to_dense
from .sparse_tensor import SparseTensor, SparseTensorValue
from .sparse_tensor import sparse_placeholder as placeholder

matmul = sparse_dense_matmul

__all__ = [
    "SparseTensor",
    "SparseTensorValue",
    "add",
    "matmul",
    "placeholder",
    "reduce_sum",
    "reorder",
    "sparse_dense_matmul",
    "to_dense",
]

"""Ops on `dataflow.framework.sparse_tensor.SparseTensor`: to dense, times a dense matrix, sums.

``sparse_to_dense(indices, output_shape, values, default_value)`` fills a dense tensor; with
``validate_indices`` (the default) the indices must be in row-major order without repeats, and
TensorFlow's messages say which index breaks that.  ``sparse_tensor_dense_matmul(sp_a, b)``
multiplies without making ``sp_a`` dense: each stored value adds its multiple of a row of ``b``.
Both have gradients with respect to the values and the dense operand.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.sparse_tensor import SparseTensor
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from .math_ops import INDEX_TYPES, check_dtype

__all__ = [
    "sparse_add",
    "sparse_reduce_sum",
    "sparse_reorder",
    "sparse_tensor_dense_matmul",
    "sparse_placeholder",
    "sparse_tensor_to_dense",
    "sparse_to_dense",
]


# -- SparseToDense ---------------------------------------------------------------------------------
def _infer_sparse_to_dense(op):
    indices, output_shape, values, default = op.inputs
    check_dtype(indices.dtype, INDEX_TYPES, "sparse_indices")
    check_dtype(output_shape.dtype, INDEX_TYPES, "output_shape")
    if values.dtype is not default.dtype:
        raise TypeError(
            f"sparse_values ({values.dtype.name}) and default_value ({default.dtype.name}) "
            "must have the same dtype"
        )
    default.shape.with_rank(0)
    known = numpy_value_or_none(output_shape)
    if known is not None:
        return [(values.dtype, TensorShape([int(d) for d in np.reshape(known, -1)]))]
    rank = output_shape.shape[0] if output_shape.shape.ndims == 1 else None
    return [(values.dtype, TensorShape(None if rank is None else [None] * rank))]


def _check_sparse_indices(indices: np.ndarray, shape: tuple, validate: bool) -> None:
    bad = np.nonzero(np.any((indices < 0) | (indices >= np.asarray(shape)), axis=1))[0]
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(
            None,
            None,
            f"indices[{i}] = {indices[i].tolist()} is out of bounds: need 0 <= index < "
            f"{list(shape)}",
        )
    if validate and len(indices) > 1:
        flat = np.ravel_multi_index(indices.T, shape) if indices.shape[1] else np.zeros(0)
        steps = np.diff(flat)
        for i in np.nonzero(steps <= 0)[0][:1]:
            problem = "repeated" if steps[i] == 0 else "out of order"
            hint = (
                ". Many sparse ops require sorted indices. Use `tf.sparse.reorder` to create a "
                "correctly ordered copy."
                if problem == "out of order"
                else ""
            )
            raise InvalidArgumentError(
                None, None, f"indices[{i + 1}] = {indices[i + 1].tolist()} is {problem}{hint}"
            )


def _sparse_to_dense_kernel(attrs):
    validate = attrs["validate_indices"]

    def sparse_to_dense(indices, output_shape, values, default):
        shape = tuple(int(d) for d in np.reshape(output_shape, -1))
        indices = np.asarray(indices).reshape(-1, 1) if np.ndim(indices) < 2 else indices
        if indices.shape[1] != len(shape):
            raise InvalidArgumentError(
                None,
                None,
                f"sparse_indices have {indices.shape[1]} columns but output_shape has rank "
                f"{len(shape)}",
            )
        values = np.asarray(values)
        if values.ndim and values.shape[0] != indices.shape[0]:
            raise InvalidArgumentError(
                None,
                None,
                f"sparse_values has {values.shape[0]} values but sparse_indices has "
                f"{indices.shape[0]} indices",
            )
        _check_sparse_indices(indices, shape, validate)
        out = np.full(shape, default, dtype=values.dtype)
        out[tuple(indices.T)] = values
        return out

    return sparse_to_dense


define_op("SparseToDense", _infer_sparse_to_dense, _sparse_to_dense_kernel)


def sparse_to_dense(
    sparse_indices,
    output_shape,
    sparse_values,
    default_value=0,
    validate_indices: bool = True,
    name: Optional[str] = None,
) -> Tensor:
    """A dense tensor of ``output_shape`` holding ``sparse_values`` at ``sparse_indices`` (a
    scalar, a vector of positions, or an ``[N, rank]`` matrix) and ``default_value`` elsewhere."""
    with name_scope(name or "SparseToDense") as scope:
        values = convert_to_tensor(sparse_values, name="sparse_values")
        inputs = (
            convert_to_tensor(sparse_indices, name="sparse_indices"),
            convert_to_tensor(output_shape, name="output_shape"),
            values,
            convert_to_tensor(default_value, dtype=values.dtype, name="default_value"),
        )
        attrs = {"validate_indices": bool(validate_indices)}
        return apply_op("SparseToDense", inputs, attrs, scope).outputs[0]


def sparse_tensor_to_dense(
    sp_input: SparseTensor, default_value=None, validate_indices: bool = True, name=None
) -> Tensor:
    """``sp_input`` as a dense tensor, ``default_value`` (zero) where it stores nothing."""
    sp_input = _as_sparse(sp_input, "sp_input")
    default = 0 if default_value is None else default_value
    if sp_input.dtype.name == "string" and default_value is None:
        default = b""
    return sparse_to_dense(
        sp_input.indices,
        sp_input.dense_shape,
        sp_input.values,
        default,
        validate_indices,
        name or "SparseToDense",
    )


def _as_sparse(value, what: str) -> SparseTensor:
    if isinstance(value, SparseTensor):
        return value
    if isinstance(value, tuple) and len(value) == 3:
        return SparseTensor.from_value(value)
    raise TypeError(f"{what} must be a SparseTensor, got {value!r:.80}")


# -- SparseTensorDenseMatMul -----------------------------------------------------------------------
def _infer_sparse_matmul(op):
    indices, values, a_shape, b = op.inputs
    if values.dtype is not b.dtype:
        raise TypeError(f"values ({values.dtype.name}) and b ({b.dtype.name}) differ in dtype")
    b.shape.with_rank(2)
    known = numpy_value_or_none(a_shape)
    rows = None
    if known is not None:
        if len(known) != 2:
            raise ValueError(f"sparse_tensor_dense_matmul needs a matrix, got shape {known}")
        rows = int(known[1] if op.attrs["adjoint_a"] else known[0])
    cols = b.shape[0] if op.attrs["adjoint_b"] else b.shape[1]
    return [(values.dtype, TensorShape([rows, cols]))]


def _sparse_matmul_kernel(attrs):
    adjoint_a, adjoint_b = attrs["adjoint_a"], attrs["adjoint_b"]

    def sparse_tensor_dense_matmul(indices, values, a_shape, b):
        rows, inner = (int(d) for d in a_shape)
        indices = np.asarray(indices)
        out_rows, a_cols = indices[:, 0], indices[:, 1]
        if adjoint_a:
            rows, inner = inner, rows
            out_rows, a_cols = a_cols, out_rows
        b = np.conj(b.T) if adjoint_b else b
        if b.shape[0] != inner:
            raise InvalidArgumentError(
                None, None, f"Cannot multiply A and B because inner dimension does not match: "
                f"{inner} vs. {b.shape[0]}",
            )  # fmt: skip
        if len(indices) and (a_cols.max() >= inner or out_rows.max() >= rows or indices.min() < 0):
            raise InvalidArgumentError(None, None, f"sparse index out of range of shape {a_shape}")
        values = np.conj(values) if adjoint_a else values
        out = np.zeros((rows, b.shape[1]), dtype=b.dtype)
        np.add.at(out, out_rows, values[:, None] * b[a_cols])
        return out

    return sparse_tensor_dense_matmul


define_op("SparseTensorDenseMatMul", _infer_sparse_matmul, _sparse_matmul_kernel)


def sparse_tensor_dense_matmul(
    sp_a: SparseTensor, b, adjoint_a: bool = False, adjoint_b: bool = False, name=None
) -> Tensor:
    """``sp_a @ b`` (either side transposed and conjugated by its ``adjoint_*`` flag)."""
    sp_a = _as_sparse(sp_a, "sp_a")
    with name_scope(name or "SparseTensorDenseMatMul") as scope:
        b = convert_to_tensor(b, name="b")
        attrs = {"adjoint_a": bool(adjoint_a), "adjoint_b": bool(adjoint_b)}
        inputs = (sp_a.indices, sp_a.values, sp_a.dense_shape, b)
        return apply_op("SparseTensorDenseMatMul", inputs, attrs, scope).outputs[0]


# -- built from the above --------------------------------------------------------------------------
def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The sum of ``sp_input``'s values along ``axis`` (all axes when None), as a dense tensor."""
    from .math_ops import reduce_sum

    axis = reduction_axes if axis is None else axis
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    return reduce_sum(sparse_tensor_to_dense(sp_input), axis=axis, keepdims=keepdims)


# -- SparseAdd -------------------------------------------------------------------------------------
def _infer_sparse_add(op):
    a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh = op.inputs
    if a_values.dtype is not b_values.dtype:
        raise TypeError(
            f"sparse_add needs values of one dtype, got {a_values.dtype.name} and "
            f"{b_values.dtype.name}"
        )
    thresh.shape.with_rank(0)
    rank = a_indices.shape[1] if a_indices.shape.ndims == 2 else None
    if rank is None and b_indices.shape.ndims == 2:
        rank = b_indices.shape[1]
    if not a_shape.shape.is_compatible_with(b_shape.shape):
        raise ValueError(
            f"Operands do not have the same ranks; got shapes: {a_shape.shape} and {b_shape.shape}"
        )
    return [
        (a_indices.dtype, TensorShape([None, rank])),
        (a_values.dtype, TensorShape([None])),
        (a_shape.dtype, a_shape.shape.merge_with(b_shape.shape)),
    ]


def _sparse_add_kernel(attrs):
    def sparse_add(a_indices, a_values, a_shape, b_indices, b_values, b_shape, thresh):
        if a_shape.shape != b_shape.shape or np.any(a_shape != b_shape):
            raise InvalidArgumentError(
                None,
                None,
                f"Operands' shapes do not match: A.shape = {a_shape.tolist()} vs. B.shape = "
                f"{b_shape.tolist()}",
            )
        rank = len(a_shape)
        indices = np.concatenate([a_indices.reshape(-1, rank), b_indices.reshape(-1, rank)])
        if len(indices) == 0:
            return indices.astype(a_indices.dtype), a_values[:0], a_shape
        # Row-major order is the lexicographic order of the index rows.
        unique, slot = np.unique(indices, axis=0, return_inverse=True)
        slot = slot.reshape(-1)
        sums = np.zeros(len(unique), dtype=a_values.dtype)
        np.add.at(sums, slot, np.concatenate([a_values, b_values]))
        counts = np.bincount(slot, minlength=len(unique))
        # As TensorFlow: only a sum of two stored values is dropped for being below thresh.
        keep = (counts == 1) | (np.abs(sums) >= thresh)
        return unique[keep].astype(a_indices.dtype), sums[keep], a_shape

    return sparse_add


define_op("SparseAdd", _infer_sparse_add, _sparse_add_kernel)


def _infer_sparse_add_grad(op):
    grad, a_indices, b_indices, _ = op.inputs
    return [
        (grad.dtype, TensorShape([a_indices.shape[0]])),
        (grad.dtype, TensorShape([b_indices.shape[0]])),
    ]


def _sparse_add_grad_kernel(attrs):
    def sparse_add_grad(grad, a_indices, b_indices, sum_indices):
        position = {tuple(row): k for k, row in enumerate(sum_indices.tolist())}

        def gathered(indices):
            out = np.zeros(len(indices), dtype=grad.dtype)
            for k, row in enumerate(indices.tolist()):
                at = position.get(tuple(row))
                if at is not None:
                    out[k] = grad[at]
            return out

        return gathered(a_indices), gathered(b_indices)

    return sparse_add_grad


define_op("SparseAddGrad", _infer_sparse_add_grad, _sparse_add_grad_kernel)


def sparse_add(a, b, threshold=None, thresh=None):
    """``a + b`` where at least one is a SparseTensor.

    Two SparseTensors (of one dense shape, indices in row-major order) give a SparseTensor
    whose indices are both operands' in row-major order; where both store a value the sum is
    kept only when its magnitude is at least ``threshold`` (TF1's ``thresh``).  A SparseTensor
    and a dense tensor give a dense tensor.
    """
    from .math_ops import add, cast

    if thresh is not None:
        threshold = thresh
    if threshold is None:
        threshold = 0
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        with name_scope("SparseAdd"):
            threshold = cast(convert_to_tensor(threshold), a.dtype.real_dtype, name="thresh")
            inputs = [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape]
            op = apply_op("SparseAdd", inputs + [threshold], {}, "SparseAdd")
        return SparseTensor(*op.outputs)
    if isinstance(a, SparseTensor):
        return add(sparse_tensor_to_dense(a), b)
    if isinstance(b, SparseTensor):
        return add(a, sparse_tensor_to_dense(b))
    raise TypeError("sparse_add needs at least one SparseTensor")


def _infer_reorder(op):
    return [(op.inputs[0].dtype, op.inputs[0].shape), (op.inputs[1].dtype, op.inputs[1].shape)]


def _reorder_kernel(attrs):
    def sparse_reorder(indices, values, shape):
        if len(indices) == 0:
            return indices, values
        order = np.lexsort(tuple(np.asarray(indices).T[::-1]))
        return indices[order], values[order]

    return sparse_reorder


define_op("SparseReorder", _infer_reorder, _reorder_kernel)


def sparse_reorder(sp_input: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """``sp_input`` with its indices in row-major order (values moved with them)."""
    sp_input = _as_sparse(sp_input, "sp_input")
    inputs = (sp_input.indices, sp_input.values, sp_input.dense_shape)
    op = apply_op("SparseReorder", inputs, {}, name or "SparseReorder")
    return SparseTensor(op.outputs[0], op.outputs[1], sp_input.dense_shape)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402
from .array_ops import reshape  # noqa: E402
from .gather_ops import gather  # noqa: E402
from .math_ops import reduce_sum, subtract  # noqa: E402
from .nd_index_ops import gather_nd  # noqa: E402

NotDifferentiable("SparseReorder")
NotDifferentiable("SparseAddGrad")


@RegisterGradient("SparseAdd")
def _sparse_add_grad(op, indices_grad, values_grad, shape_grad):
    a_indices, b_indices, sum_indices = op.inputs[0], op.inputs[3], op.outputs[0]
    grad_op = apply_op("SparseAddGrad", [values_grad, a_indices, b_indices, sum_indices])
    a_grad, b_grad = grad_op.outputs
    return None, a_grad, None, None, b_grad, None, None


@RegisterGradient("SparseToDense")
def _sparse_to_dense_grad(op, grad):
    indices = op.inputs[0]
    if indices.shape.ndims is not None and indices.shape.ndims < 2:
        indices = reshape(indices, [-1, 1])
    values_grad = gather_nd(grad, indices)
    if op.inputs[2].shape.ndims == 0:
        values_grad = reduce_sum(values_grad)
    default_grad = subtract(reduce_sum(grad), reduce_sum(values_grad))
    return None, None, values_grad, default_grad


@RegisterGradient("SparseTensorDenseMatMul")
def _sparse_matmul_grad(op, grad):
    indices, values, a_shape, b = op.inputs
    adjoint_a, adjoint_b = op.attrs["adjoint_a"], op.attrs["adjoint_b"]
    sp = SparseTensor(indices, values, a_shape)
    # d b: A^T @ grad (or its transpose, for adjoint_b).
    b_grad = sparse_tensor_dense_matmul(sp, grad, adjoint_a=not adjoint_a)
    if adjoint_b:
        from .array_ops import transpose

        b_grad = transpose(b_grad)
    # d values: for stored (i, j), the dot product of grad's row i with b's row j.
    rows, cols = indices[:, 0], indices[:, 1]
    if adjoint_a:
        rows, cols = cols, rows
    from .array_ops import transpose

    b_rows = gather(transpose(b) if adjoint_b else b, cols)
    values_grad = reduce_sum(gather(grad, rows) * b_rows, axis=1)
    return None, values_grad, None, b_grad


# -- a SparseTensor to feed ------------------------------------------------------------------------
from ..framework import dtypes as _dtypes  # noqa: E402
from .constant_op import placeholder  # noqa: E402


def sparse_placeholder(dtype, shape=None, name: Optional[str] = None) -> SparseTensor:
    """A SparseTensor to feed: placeholders for its indices, values and (when ``shape`` is not
    fully known) dense shape."""
    shape = TensorShape(shape)
    with name_scope(name or "Placeholder"):
        rank = shape.ndims
        values = placeholder(dtype, [None], name="values")
        indices = placeholder(_dtypes.int64, [None, rank], name="indices")
        if shape.is_fully_defined():
            dense_shape = convert_to_tensor(shape.as_list(), dtype=_dtypes.int64, name="shape")
        else:
            dense_shape = placeholder(_dtypes.int64, [rank], name="shape")
    return SparseTensor(indices, values, dense_shape)

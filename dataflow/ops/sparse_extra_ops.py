"""More of ``tf.sparse``: SparseTensor ops that change indices (``transpose``, ``reshape``,
``slice``, ``concat``, ``split``, ``expand_dims``, ``retain``, ``reset_shape``,
``fill_empty_rows``), combine two SparseTensors (``maximum``, ``minimum``), reduce them
(``reduce_max``, ``reduce_max_sparse``, ``reduce_sum_sparse``), ``softmax`` over rows, and the
builders ``from_dense``, ``eye`` and ``to_indicator``.

A SparseTensor op takes the ``indices``, ``values`` and ``dense_shape`` of its operands as
inputs and gives the three of its result as outputs.  Results are in row-major order, as
TensorFlow's are.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.sparse_tensor import SparseTensor
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = [
    "sparse_concat",
    "sparse_expand_dims",
    "sparse_eye",
    "sparse_fill_empty_rows",
    "sparse_from_dense",
    "sparse_mask",
    "sparse_maximum",
    "sparse_merge",
    "sparse_minimum",
    "sparse_reduce_max",
    "sparse_reduce_max_sparse",
    "sparse_reduce_sum_sparse",
    "sparse_reset_shape",
    "sparse_reshape",
    "sparse_retain",
    "sparse_segment_mean",
    "sparse_segment_sqrt_n",
    "sparse_segment_sum",
    "sparse_slice",
    "sparse_softmax",
    "sparse_split",
    "sparse_to_indicator",
    "sparse_transpose",
]


def _sparse_outputs(dtype, rank: Optional[int]) -> list:
    return [
        (_dtypes.int64, TensorShape([None, rank])),
        (dtype, TensorShape([None])),
        (_dtypes.int64, TensorShape([rank])),
    ]


def _rank(op, index: int = 0) -> Optional[int]:
    """The rank of the SparseTensor whose indices are input ``index``, when known."""
    shape = op.inputs[index].shape
    return None if shape.ndims is None else shape.as_list()[1]


def _row_major(indices: np.ndarray, values: np.ndarray):
    if len(indices) == 0:
        return indices, values
    order = np.lexsort(tuple(indices.T[::-1]))
    return indices[order], values[order]


def _as_sparse(value, what: str) -> SparseTensor:
    if not isinstance(value, SparseTensor):
        raise TypeError(f"{what} must be a SparseTensor, got {type(value).__name__}")
    return value


def _apply_sparse(op_type: str, inputs, attrs: dict, name) -> SparseTensor:
    return SparseTensor(*apply_op(op_type, tuple(inputs), attrs, name or op_type).outputs[:3])


def _parts(sp: SparseTensor) -> list:
    return [sp.indices, sp.values, sp.dense_shape]


# -- SparseTranspose -------------------------------------------------------------------------------
def _transpose_kernel(attrs):
    def transpose(indices, values, shape, perm):
        perm = np.asarray(perm, dtype=np.int64)
        if sorted(perm.tolist()) != list(range(len(shape))):
            raise InvalidArgumentError(
                None, None, f"perm {perm.tolist()} is not a permutation of {len(shape)} axes"
            )
        new_indices, new_values = _row_major(indices[:, perm], values)
        return new_indices, new_values, np.asarray(shape)[perm]

    return transpose


define_op(
    "SparseTranspose",
    lambda op: _sparse_outputs(op.inputs[1].dtype, _rank(op)),
    _transpose_kernel,
)


def sparse_transpose(sp_input, perm=None, name=None) -> SparseTensor:
    """``sp_input`` with its dimensions permuted by ``perm`` (default: reversed)."""
    sp = _as_sparse(sp_input, "sp_input")
    with name_scope(name or "SparseTranspose"):
        if perm is None:
            rank = _rank_of(sp)
            if rank is None:
                raise ValueError("sparse.transpose needs perm when the rank is unknown")
            perm = list(range(rank))[::-1]
        perm = convert_to_tensor(perm, _dtypes.int64, name="perm")
        return _apply_sparse("SparseTranspose", _parts(sp) + [perm], {}, "SparseTranspose")


def _rank_of(sp: SparseTensor) -> Optional[int]:
    shape = sp.indices.shape
    return None if shape.ndims is None else shape.as_list()[1]


# -- SparseReshape ---------------------------------------------------------------------------------
def _reshape_kernel(attrs):
    def reshape(indices, values, shape, new_shape):
        new_shape = np.asarray(new_shape, dtype=np.int64).copy()
        size = int(np.prod(shape, dtype=np.int64))
        unknown = np.flatnonzero(new_shape == -1)
        if len(unknown) > 1:
            raise InvalidArgumentError(None, None, "only one output dimension may be -1")
        if len(unknown):
            known = int(np.prod(np.delete(new_shape, unknown), dtype=np.int64))
            if known == 0 or size % known:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Input to reshape is a SparseTensor with {size} dense values, but the "
                    f"requested shape requires a multiple of {known}",
                )
            new_shape[unknown[0]] = size // known
        if int(np.prod(new_shape, dtype=np.int64)) != size:
            raise InvalidArgumentError(
                None,
                None,
                f"Input to reshape is a tensor with {size} dense values, but the requested "
                f"shape has {int(np.prod(new_shape, dtype=np.int64))}",
            )
        if len(indices) == 0:
            return np.zeros((0, len(new_shape)), np.int64), values, new_shape
        flat = np.ravel_multi_index(tuple(indices.T), tuple(shape))
        new_indices = np.stack(np.unravel_index(flat, tuple(new_shape)), axis=1)
        return new_indices.astype(np.int64), values, new_shape

    return reshape


def _infer_reshape(op):
    new_shape = op.inputs[3].shape
    rank = new_shape.as_list()[0] if new_shape.ndims == 1 else None
    return _sparse_outputs(op.inputs[1].dtype, rank)


define_op("SparseReshape", _infer_reshape, _reshape_kernel)


def sparse_reshape(sp_input, shape, name=None) -> SparseTensor:
    """``sp_input`` with the dense shape ``shape`` (one dimension may be -1), its values at
    the same row-major positions."""
    sp = _as_sparse(sp_input, "sp_input")
    with name_scope(name or "SparseReshape"):
        shape = convert_to_tensor(shape, _dtypes.int64, name="shape")
        return _apply_sparse("SparseReshape", _parts(sp) + [shape], {}, "SparseReshape")


# -- SparseRetain ----------------------------------------------------------------------------------
def _retain_kernel(attrs):
    def retain(indices, values, shape, keep):
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != values.shape:
            raise InvalidArgumentError(
                None, None, f"to_retain has {keep.size} entries; sp_input has {values.size} values"
            )
        return indices[keep], values[keep], shape

    return retain


define_op("SparseRetain", lambda op: _sparse_outputs(op.inputs[1].dtype, _rank(op)), _retain_kernel)


def sparse_retain(sp_input, to_retain) -> SparseTensor:
    """The values of ``sp_input`` where the boolean vector ``to_retain`` is True."""
    sp = _as_sparse(sp_input, "sp_input")
    with name_scope("SparseRetain"):
        keep = convert_to_tensor(to_retain, _dtypes.bool, name="to_retain")
        if keep.shape.ndims not in (None, 1):
            raise ValueError(f"to_retain must be a vector, got shape {keep.shape}")
        return _apply_sparse("SparseRetain", _parts(sp) + [keep], {}, "SparseRetain")


# -- SparseResetShape ------------------------------------------------------------------------------
def _reset_shape_kernel(attrs):
    def reset_shape(indices, values, shape, *new_shape):
        if not new_shape:
            tight = indices.max(axis=0) + 1 if len(indices) else np.zeros(len(shape), np.int64)
            return indices, values, tight.astype(np.int64)
        new = np.asarray(new_shape[0], dtype=np.int64)
        if new.shape != np.shape(shape) or np.any(new < shape):
            raise InvalidArgumentError(
                None,
                None,
                f"new_shape {new.tolist()} must have the rank of dense_shape {shape.tolist()} "
                "and no smaller dimension",
            )
        return indices, values, new

    return reset_shape


define_op(
    "SparseResetShape",
    lambda op: _sparse_outputs(op.inputs[1].dtype, _rank(op)),
    _reset_shape_kernel,
)


def sparse_reset_shape(sp_input, new_shape=None) -> SparseTensor:
    """``sp_input`` with the dense shape ``new_shape`` (no dimension smaller than the old),
    or when None the smallest shape that holds its indices."""
    sp = _as_sparse(sp_input, "sp_input")
    with name_scope("SparseResetShape"):
        inputs = _parts(sp)
        if new_shape is not None:
            inputs.append(convert_to_tensor(new_shape, _dtypes.int64, name="new_shape"))
        return _apply_sparse("SparseResetShape", inputs, {}, "SparseResetShape")


# -- SparseFillEmptyRows ---------------------------------------------------------------------------
def _fill_empty_rows_kernel(attrs):
    def fill_empty_rows(indices, values, shape, default):
        rows = int(shape[0])
        empty = np.ones(rows, dtype=bool)
        empty[indices[:, 0]] = False
        missing = np.flatnonzero(empty)
        added = np.zeros((len(missing), len(shape)), np.int64)
        added[:, 0] = missing
        all_indices = np.concatenate([indices, added])
        all_values = np.concatenate([values, np.full(len(missing), default, dtype=values.dtype)])
        order = np.argsort(all_indices[:, 0], kind="stable")
        return all_indices[order], all_values[order], shape, empty

    return fill_empty_rows


def _infer_fill_empty_rows(op):
    return _sparse_outputs(op.inputs[1].dtype, _rank(op)) + [(_dtypes.bool, TensorShape([None]))]


define_op("SparseFillEmptyRows", _infer_fill_empty_rows, _fill_empty_rows_kernel)


def sparse_fill_empty_rows(sp_input, default_value, name=None):
    """``sp_input`` with ``default_value`` at column 0 of each row that has no value, and a
    bool vector that is True for those rows."""
    sp = _as_sparse(sp_input, "sp_input")
    with name_scope(name or "SparseFillEmptyRows"):
        default = convert_to_tensor(default_value, sp.dtype, name="default_value")
        op = apply_op(
            "SparseFillEmptyRows", tuple(_parts(sp)) + (default,), {}, "SparseFillEmptyRows"
        )
        return SparseTensor(*op.outputs[:3]), op.outputs[3]


# -- SparseSlice -----------------------------------------------------------------------------------
def _slice_kernel(attrs):
    def sparse_slice(indices, values, shape, start, size):
        start = np.asarray(start, np.int64)
        end = np.minimum(start + np.asarray(size, np.int64), shape)
        inside = np.all((indices >= start) & (indices < end), axis=1)
        return indices[inside] - start, values[inside], np.maximum(end - start, 0)

    return sparse_slice


define_op("SparseSlice", lambda op: _sparse_outputs(op.inputs[1].dtype, _rank(op)), _slice_kernel)


def sparse_slice(sp_input, start, size, name=None) -> SparseTensor:
    """The part of ``sp_input`` from ``start`` of ``size`` (clipped at its dense shape)."""
    sp = _as_sparse(sp_input, "sp_input")
    with name_scope(name or "SparseSlice"):
        start = convert_to_tensor(start, _dtypes.int64, name="start")
        size = convert_to_tensor(size, _dtypes.int64, name="size")
        return _apply_sparse("SparseSlice", _parts(sp) + [start, size], {}, "SparseSlice")


# -- SparseConcat ----------------------------------------------------------------------------------
def _concat_kernel(attrs):
    axis, expand = attrs["axis"], attrs["expand_nonconcat_dim"]

    def concat(*parts):
        n = len(parts) // 3
        indices, values, shapes = (
            parts[:n],
            parts[n : 2 * n],
            [np.asarray(s) for s in parts[2 * n :]],
        )
        rank = len(shapes[0])
        a = axis % rank
        out_shape = shapes[0].copy()
        for s in shapes[1:]:
            others = np.delete(s, a) != np.delete(shapes[0], a)
            if len(s) != rank or (not expand and np.any(others)):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"All SparseTensors must have the same shape except on the concat "
                    f"dimension {a}: {shapes[0].tolist()} and {s.tolist()}",
                )
            out_shape = np.maximum(out_shape, s)
        offset, moved = 0, []
        for ind, s in zip(indices, shapes):
            ind = np.array(ind, dtype=np.int64).reshape(-1, rank)
            ind[:, a] += offset
            offset += int(s[a])
            moved.append(ind)
        out_shape[a] = offset
        return (
            *_row_major(np.concatenate(moved), np.concatenate(values)),
            out_shape.astype(np.int64),
        )

    return concat


def _infer_concat(op):
    return _sparse_outputs(op.inputs[len(op.inputs) // 3].dtype, _rank(op))


define_op("SparseConcat", _infer_concat, _concat_kernel)


def sparse_concat(
    axis,
    sp_inputs,
    name=None,
    expand_nonconcat_dim=False,
    concat_dim=None,
    expand_nonconcat_dims=None,
) -> SparseTensor:
    """The SparseTensors ``sp_inputs`` joined along ``axis`` (TF1's ``concat_dim``); with
    ``expand_nonconcat_dim`` (``expand_nonconcat_dims``) their other dimensions may differ and
    the result takes the largest."""
    if concat_dim is not None:
        axis = concat_dim
    if expand_nonconcat_dims is not None:
        expand_nonconcat_dim = expand_nonconcat_dims
    sps = [_as_sparse(s, "sp_inputs") for s in sp_inputs]
    if not sps:
        raise ValueError("sparse.concat needs at least one SparseTensor")
    inputs = [s.indices for s in sps] + [s.values for s in sps] + [s.dense_shape for s in sps]
    attrs = {"axis": int(axis), "expand_nonconcat_dim": bool(expand_nonconcat_dim)}
    with name_scope(name or "SparseConcat"):
        return _apply_sparse("SparseConcat", inputs, attrs, "SparseConcat")


# -- SparseSparseMaximum / SparseSparseMinimum -----------------------------------------------------
def _elementwise_kernel(combine):
    def build(attrs):
        def elementwise(a_ind, a_val, a_shape, b_ind, b_val, b_shape):
            if not np.array_equal(a_shape, b_shape):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Operands do not have the same ranks or shapes: {a_shape.tolist()} and "
                    f"{b_shape.tolist()}",
                )
            both = {}
            for ind, val, side in ((a_ind, a_val, 0), (b_ind, b_val, 1)):
                for i, v in zip(map(tuple, ind.tolist()), val):
                    both.setdefault(i, [0, 0])[side] = v
            keys = sorted(both)
            indices = np.asarray(keys, np.int64).reshape(-1, len(a_shape))
            values = np.asarray([combine(*both[k]) for k in keys], dtype=a_val.dtype)
            return indices, values, a_shape

        return elementwise

    return build


define_op(
    "SparseSparseMaximum",
    lambda op: _sparse_outputs(op.inputs[1].dtype, _rank(op)),
    _elementwise_kernel(max),
)
define_op(
    "SparseSparseMinimum",
    lambda op: _sparse_outputs(op.inputs[1].dtype, _rank(op)),
    _elementwise_kernel(min),
)


def _elementwise(op_type: str, sp_a, sp_b, name) -> SparseTensor:
    a, b = _as_sparse(sp_a, "sp_a"), _as_sparse(sp_b, "sp_b")
    if a.dtype != b.dtype:
        raise TypeError(f"{op_type}: sp_a is {a.dtype.name}, sp_b is {b.dtype.name}")
    with name_scope(name or op_type):
        return _apply_sparse(op_type, _parts(a) + _parts(b), {}, op_type)


def sparse_maximum(sp_a, sp_b, name=None) -> SparseTensor:
    """The element-wise maximum of two SparseTensors of one shape (a missing value is 0),
    at the union of their indices."""
    return _elementwise("SparseSparseMaximum", sp_a, sp_b, name)


def sparse_minimum(sp_a, sp_b, name=None) -> SparseTensor:
    """The element-wise minimum of two SparseTensors of one shape (a missing value is 0),
    at the union of their indices."""
    return _elementwise("SparseSparseMinimum", sp_a, sp_b, name)


# -- SparseSoftmax ---------------------------------------------------------------------------------
def _softmax_kernel(attrs):
    def softmax(indices, values, shape):
        out = np.empty_like(values)
        groups = {}
        for i, row in enumerate(map(tuple, indices[:, :-1].tolist())):
            groups.setdefault(row, []).append(i)
        for members in groups.values():
            x = values[members]
            e = np.exp(x - x.max())
            out[members] = e / e.sum()
        return out

    return softmax


def _infer_softmax(op):
    values = op.inputs[1]
    if values.dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        raise TypeError(f"SparseSoftmax takes floating-point values, got {values.dtype.name}")
    return [(values.dtype, values.shape)]


define_op("SparseSoftmax", _infer_softmax, _softmax_kernel)


def sparse_softmax(sp_input, name=None) -> SparseTensor:
    """The softmax of the stored values of each innermost row of ``sp_input`` (missing values
    take no part), at the same indices."""
    sp = _as_sparse(sp_input, "sp_input")
    with name_scope(name or "SparseSoftmax"):
        values = apply_op("SparseSoftmax", tuple(_parts(sp)), {}, "SparseSoftmax").outputs[0]
    return SparseTensor(sp.indices, values, sp.dense_shape)


# -- SparseReduceMax / SparseReduceSumSparse ------------------------------------------------------
def _reduced(indices, values, shape, axes, keepdims: bool, combine):
    rank = len(shape)
    axes = sorted({int(a) % rank for a in (range(rank) if axes is None else np.ravel(axes))})
    kept = [d for d in range(rank) if d not in axes]
    cells = {}
    for ind, v in zip(indices.tolist(), values):
        key = (
            tuple(0 if d in axes else ind[d] for d in range(rank))
            if keepdims
            else tuple(ind[d] for d in kept)
        )
        cells[key] = combine(cells[key], v) if key in cells else v
    out_shape = np.array(
        [1 if d in axes else shape[d] for d in range(rank)]
        if keepdims
        else [shape[d] for d in kept],
        dtype=np.int64,
    )
    keys = sorted(cells)
    out_indices = np.asarray(keys, np.int64).reshape(len(keys), len(out_shape))
    return out_indices, np.asarray([cells[k] for k in keys], dtype=values.dtype), out_shape


def _reduce_kernel(combine, sparse_output: bool):
    def build(attrs):
        def reduce(indices, values, shape, *axes):
            out = _reduced(
                indices, values, shape, axes[0] if axes else None, attrs["keepdims"], combine
            )
            if sparse_output:
                return out
            dense = np.zeros(tuple(out[2]), dtype=values.dtype)
            if len(out[1]):
                dense[tuple(out[0].T)] = out[1] if dense.ndim else out[1][0]
            return dense

        return reduce

    return build


def _infer_reduce_sparse(op):
    return _sparse_outputs(op.inputs[1].dtype, None)


def _infer_reduce_dense(op):
    return [(op.inputs[1].dtype, TensorShape(None))]


define_op("SparseReduceMax", _infer_reduce_dense, _reduce_kernel(max, False))
define_op("SparseReduceMaxSparse", _infer_reduce_sparse, _reduce_kernel(max, True))
define_op("SparseReduceSumSparse", _infer_reduce_sparse, _reduce_kernel(lambda a, b: a + b, True))


def _reduce(op_type, sp_input, axis, keepdims, reduction_axes, keep_dims):
    sp = _as_sparse(sp_input, "sp_input")
    axis = reduction_axes if axis is None else axis
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    with name_scope(op_type):
        inputs = _parts(sp)
        if axis is not None:
            inputs.append(convert_to_tensor(axis, _dtypes.int32, name="reduction_axes"))
        op = apply_op(op_type, tuple(inputs), {"keepdims": keepdims}, op_type)
    return op.outputs


def sparse_reduce_max(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The maximum of the stored values of ``sp_input`` over ``axis`` (all when None), a dense
    tensor; a cell that no stored value reaches is 0."""
    return _reduce("SparseReduceMax", sp_input, axis, keepdims, reduction_axes, keep_dims)[0]


def sparse_reduce_max_sparse(
    sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None
) -> SparseTensor:
    """`sparse_reduce_max` as a SparseTensor of the cells that stored values reach."""
    outputs = _reduce("SparseReduceMaxSparse", sp_input, axis, keepdims, reduction_axes, keep_dims)
    return SparseTensor(*outputs)


def sparse_reduce_sum_sparse(
    sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None
) -> SparseTensor:
    """The sum of ``sp_input`` over ``axis`` as a SparseTensor of the cells that stored values
    reach."""
    outputs = _reduce("SparseReduceSumSparse", sp_input, axis, keepdims, reduction_axes, keep_dims)
    return SparseTensor(*outputs)


# -- builders by composition -----------------------------------------------------------------------
def sparse_from_dense(tensor, name=None) -> SparseTensor:
    """The non-zero (non-empty, for strings) elements of ``tensor`` as a SparseTensor."""
    from .array_ops import shape as _shape
    from .math_ops import not_equal, where
    from .nd_index_ops import gather_nd

    with name_scope(name or "dense_to_sparse"):
        tensor = convert_to_tensor(tensor, name="tensor")
        zero = b"" if tensor.dtype == _dtypes.string else 0
        indices = where(not_equal(tensor, convert_to_tensor(zero, tensor.dtype)))
        values = gather_nd(tensor, indices)
        return SparseTensor(indices, values, _shape(tensor, out_type=_dtypes.int64))


def sparse_eye(num_rows, num_columns=None, dtype=_dtypes.float32, name=None) -> SparseTensor:
    """A ``num_rows`` x ``num_columns`` (default: square) SparseTensor with ones on the
    diagonal."""
    from .array_ops import ones_like, stack
    from .array_ops import range as _range
    from .math_ops import cast, minimum

    with name_scope(name or "eye"):
        rows = cast(convert_to_tensor(num_rows, name="num_rows"), _dtypes.int64)
        cols = rows
        if num_columns is not None:
            cols = cast(convert_to_tensor(num_columns, name="num_columns"), _dtypes.int64)
        diagonal = _range(minimum(rows, cols))
        return SparseTensor(
            stack([diagonal, diagonal], axis=1),
            ones_like(diagonal, dtype=_dtypes.as_dtype(dtype)),
            stack([rows, cols]),
        )


def sparse_expand_dims(sp_input, axis=None, name=None) -> SparseTensor:
    """``sp_input`` with a dimension of size 1 inserted at ``axis`` (default: last)."""
    from .array_ops import concat

    sp = _as_sparse(sp_input, "sp_input")
    rank = _rank_of(sp)
    axis = -1 if axis is None else int(axis)
    if rank is None:
        raise ValueError("sparse.expand_dims needs a SparseTensor of known rank")
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"axis {axis} is out of range for a SparseTensor of rank {rank}")
    axis = axis + rank + 1 if axis < 0 else axis
    with name_scope(name or "ExpandDims"):
        one = convert_to_tensor([1], _dtypes.int64)
        shape = concat([sp.dense_shape[:axis], one, sp.dense_shape[axis:]], 0)
        return sparse_reshape(sp, shape)


def _split_kernel(attrs):
    count, axis = attrs["num_split"], attrs["axis"]

    def split(indices, values, shape):
        a = axis % len(shape)
        size, extra = divmod(int(shape[a]), count)
        outs = ([], [], [])
        start = 0
        for i in range(count):
            width = size + (1 if i < extra else 0)
            inside = (indices[:, a] >= start) & (indices[:, a] < start + width)
            moved = indices[inside].copy()
            moved[:, a] -= start
            piece_shape = np.array(shape, dtype=np.int64)
            piece_shape[a] = width
            for out, part in zip(outs, (moved, values[inside], piece_shape)):
                out.append(part)
            start += width
        return tuple(outs[0] + outs[1] + outs[2])

    return split


def _infer_split(op):
    count = op.attrs["num_split"]
    parts = _sparse_outputs(op.inputs[1].dtype, _rank(op))
    return [parts[0]] * count + [parts[1]] * count + [parts[2]] * count


define_op("SparseSplit", _infer_split, _split_kernel)


def sparse_split(
    keyword_required=None, sp_input=None, num_split=None, axis=None, name=None, split_dim=None
) -> list:
    """``sp_input`` cut along ``axis`` (TF1's ``split_dim``) into ``num_split`` SparseTensors;
    when the dimension does not divide evenly the first pieces are one wider.  Every argument
    is passed by keyword."""
    if keyword_required is not None:
        raise ValueError("Keyword arguments are required for this function.")
    axis = split_dim if axis is None else axis
    if sp_input is None or num_split is None or axis is None:
        raise ValueError("sparse.split needs sp_input, num_split and axis")
    sp = _as_sparse(sp_input, "sp_input")
    attrs = {"num_split": int(num_split), "axis": int(axis)}
    with name_scope(name or "SparseSplit"):
        outputs = apply_op("SparseSplit", tuple(_parts(sp)), attrs, "SparseSplit").outputs
    n = attrs["num_split"]
    return [SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i]) for i in range(n)]


def _to_indicator_kernel(attrs):
    vocab = attrs["vocab_size"]

    def to_indicator(indices, values, shape):
        out = np.zeros(tuple(int(d) for d in shape[:-1]) + (vocab,), dtype=bool)
        if np.any((values < 0) | (values >= vocab)):
            raise InvalidArgumentError(None, None, f"values must be in [0, {vocab})")
        out[tuple(indices[:, :-1].T) + (values,)] = True
        return out

    return to_indicator


def _infer_to_indicator(op):
    rank = _rank(op)
    return [
        (
            _dtypes.bool,
            TensorShape(None if rank is None else [None] * (rank - 1) + [op.attrs["vocab_size"]]),
        )
    ]


define_op("SparseToIndicator", _infer_to_indicator, _to_indicator_kernel)


def sparse_to_indicator(sp_input, vocab_size, name=None):
    """A dense bool tensor ``dense_shape[:-1] + [vocab_size]``, True at the ids that each
    innermost row of ``sp_input`` (int32 or int64 values) holds."""
    sp = _as_sparse(sp_input, "sp_input")
    if sp.dtype not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"sparse.to_indicator takes int32 or int64 ids, got {sp.dtype.name}")
    with name_scope(name or "SparseToIndicator"):
        op = apply_op(
            "SparseToIndicator",
            tuple(_parts(sp)),
            {"vocab_size": int(vocab_size)},
            "SparseToIndicator",
        )
    return op.outputs[0]


def sparse_mask(a, mask_indices, name=None):
    """The IndexedSlices ``a`` without its slices whose index is in ``mask_indices``."""
    from ..framework.indexed_slices import IndexedSlices
    from .extra_array_ops import setdiff1d
    from .gather_ops import gather

    with name_scope(name or "sparse_mask"):
        kept_indices, positions = setdiff1d(a.indices, mask_indices)
        return IndexedSlices(gather(a.values, positions), kept_indices, a.dense_shape)


def sparse_merge(sp_ids, sp_values, vocab_size, name=None, already_sorted=False):
    """The SparseTensor with ``sp_values``'s values at the ids of ``sp_ids`` as a new last
    dimension of ``vocab_size`` (a list of id SparseTensors and of sizes give one dimension
    each); its indices are put in row-major order unless ``already_sorted``."""
    from .array_ops import concat, expand_dims
    from .math_ops import cast
    from .sparse_ops import sparse_reorder

    many = isinstance(sp_ids, (list, tuple))
    ids_list = list(sp_ids) if many else [sp_ids]
    sizes = list(vocab_size) if isinstance(vocab_size, (list, tuple)) else [vocab_size]
    if len(ids_list) != len(sizes):
        raise ValueError("sp_ids and vocab_size must have the same length")
    ids_list = [_as_sparse(ids, "sp_ids") for ids in ids_list]
    values = _as_sparse(sp_values, "sp_values")
    for ids in ids_list:
        if ids.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"sp_ids must hold int32 or int64 ids, got {ids.dtype.name}")
    with name_scope(name or "SparseMerge"):
        columns = [cast(expand_dims(ids.values, 1), _dtypes.int64) for ids in ids_list]
        indices = concat([ids_list[0].indices[:, :-1]] + columns, 1)
        sizes = [cast(convert_to_tensor(v, name="vocab_size"), _dtypes.int64) for v in sizes]
        shape = concat([ids_list[0].dense_shape[:-1]] + [expand_dims(v, 0) for v in sizes], 0)
        merged = SparseTensor(indices, values.values, shape)
        return merged if already_sorted else sparse_reorder(merged)


# -- sparse segment reductions (by composition: rows gathered, then segment sums) ---------------
def _sparse_segment(kind: str, data, indices, segment_ids, name, num_segments) -> object:
    from . import extra_segment_ops as _seg
    from . import math_ops as _m
    from .array_ops import concat, reshape
    from .gather_ops import gather
    from .segment_ops import unsorted_segment_sum

    with name_scope(name or f"SparseSegment{kind}"):
        data = convert_to_tensor(data, name="data")
        rows = gather(data, convert_to_tensor(indices, name="indices"))
        ids = convert_to_tensor(segment_ids, name="segment_ids")
        if num_segments is None:
            num_segments = _m.add(_m.reduce_max(concat([reshape(ids, [-1]), [-1]], 0)), 1)
        total = unsorted_segment_sum(rows, ids, num_segments)
        if kind == "Sum":
            return total
        if data.dtype not in _m.FLOAT_TYPES:
            raise TypeError(f"sparse.segment_{kind.lower()} takes floats, got {data.dtype.name}")
        sizes = _m.maximum(_seg._segment_sizes(rows, ids, num_segments), 1)
        return _m.realdiv(total, sizes if kind == "Mean" else _m.sqrt(sizes))


def sparse_segment_sum(
    data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False
):
    """The sums of the rows ``data[indices]`` grouped by the sorted ``segment_ids``
    (``num_segments`` rows, or one more than the largest id).  ``sparse_gradient`` chooses
    TensorFlow's representation of the gradient and changes no value."""
    return _sparse_segment("Sum", data, indices, segment_ids, name, num_segments)


def sparse_segment_mean(
    data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False
):
    """The means of the rows ``data[indices]`` grouped by ``segment_ids`` (0 when empty)."""
    return _sparse_segment("Mean", data, indices, segment_ids, name, num_segments)


def sparse_segment_sqrt_n(
    data, indices, segment_ids, name=None, num_segments=None, sparse_gradient=False
):
    """The sums of the rows ``data[indices]`` grouped by ``segment_ids``, each divided by the
    square root of its row count (0 when empty)."""
    return _sparse_segment("SqrtN", data, indices, segment_ids, name, num_segments)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (
    "SparseTranspose SparseReshape SparseRetain SparseResetShape SparseFillEmptyRows SparseSlice "
    "SparseConcat SparseSparseMaximum SparseSparseMinimum SparseSoftmax SparseReduceMax "
    "SparseReduceMaxSparse SparseReduceSumSparse SparseToIndicator SparseSplit"
).split():
    NotDifferentiable(_type)

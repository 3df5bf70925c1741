"""TF1's small top-level names that are not part of a larger family.

- ``bitcast``: the bytes of a tensor read as another type (``Bitcast``); a wider type takes the
  last dimension's elements together, a narrower one adds a last dimension.
- ``broadcast_dynamic_shape`` (``BroadcastArgs``) and ``broadcast_static_shape``: the shape of
  the broadcast of two shapes, at run time or at build time.
- ``searchsorted``: ``LowerBound``/``UpperBound`` along the last dimension.
- ``timestamp``: the time of the run, in seconds (``Timestamp``).
- ``floor_div`` (``FloorDiv``), ``guarantee_const`` (``GuaranteeConst``, an identity that
  promises its input is constant), ``hessians``.
- ``init_scope``, ``executing_eagerly_outside_functions``, ``is_symbolic_tensor``,
  ``dimension_at_index``, ``convert_to_tensor_or_sparse_tensor``.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import Dimension, TensorShape
from .math_ops import INDEX_TYPES, check_dtype

__all__ = [
    "bitcast",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "convert_to_tensor_or_sparse_tensor",
    "dimension_at_index",
    "fingerprint",
    "floor_div",
    "guarantee_const",
    "is_symbolic_tensor",
    "searchsorted",
    "sparse_bincount",
    "timestamp",
]

# -- bitcast ---------------------------------------------------------------------------------------
_BITCAST_TYPES = frozenset(d for d in _dtypes._VALUES if d.is_numeric or d.is_quantized) - {
    _dtypes.bool
}


def _infer_bitcast(op):
    (x,) = op.inputs
    out = op.attrs["type"]
    check_dtype(x.dtype, _BITCAST_TYPES, "bitcast's input")
    check_dtype(out, _BITCAST_TYPES, "bitcast's type")
    size_in, size_out = x.dtype.size, out.size
    shape = x.shape
    if size_in == size_out or shape.ndims is None:
        return [(out, shape if size_in == size_out else TensorShape(None))]
    if size_in > size_out:
        return [(out, shape.concatenate([size_in // size_out]))]
    if shape.ndims == 0:
        raise ValueError(f"Cannot bitcast from {size_in} to {size_out} due to shape. ")
    last = shape.as_list()[-1]
    if last is not None and last != size_out // size_in:
        raise ValueError(
            f"Cannot bitcast from {size_in} to {size_out} due to shape. {last} does not match "
            f"{size_out // size_in}"
        )
    return [(out, shape[:-1])]


def _bitcast_kernel(attrs):
    out = _dtypes.numpy_dtype(attrs["type"])

    def bitcast(x):
        x = np.ascontiguousarray(x)
        size_in, size_out = x.dtype.itemsize, out.itemsize
        if size_in == size_out:
            return x.view(out)
        if size_in > size_out:
            return x.reshape(x.shape + (1,)).view(out)
        if x.ndim == 0 or x.shape[-1] != size_out // size_in:
            raise InvalidArgumentError(
                None, None, f"Cannot bitcast from {size_in} to {size_out} due to shape {x.shape}"
            )
        return x.view(out).reshape(x.shape[:-1])

    return bitcast


define_op("Bitcast", _infer_bitcast, _bitcast_kernel)


def bitcast(input, type, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The bytes of ``input`` read as ``type``: the same shape for a type of the same size, a
    new last dimension for a narrower type, the last dimension taken together for a wider one
    (it must have ``type.size // input.dtype.size`` elements)."""
    x = convert_to_tensor(input, name="input")
    return apply_op("Bitcast", [x], {"type": _dtypes.as_dtype(type)}, name or "Bitcast").outputs[0]


# -- broadcast shapes ------------------------------------------------------------------------------
def _broadcast_lists(x: list, y: list) -> Optional[list]:
    """The broadcast of two shapes given as lists (None: unknown dimension), or None when
    they do not broadcast."""
    out = []
    for i in range(1, max(len(x), len(y)) + 1):
        a = x[-i] if i <= len(x) else 1
        b = y[-i] if i <= len(y) else 1
        if a == 1:
            out.append(b)
        elif b == 1:
            out.append(a)
        elif a is None or b is None:
            out.append(a if b is None else b)
        elif a == b:
            out.append(a)
        else:
            return None
    return out[::-1]


def _infer_broadcast_args(op):
    x, y = op.inputs
    check_dtype(x.dtype, INDEX_TYPES, "broadcast_dynamic_shape's shape_x")
    if y.dtype != x.dtype:
        raise TypeError(f"shape_y has dtype {y.dtype.name}, but shape_x has {x.dtype.name}")
    for s in (x, y):
        if s.shape.ndims not in (None, 1):
            raise ValueError(f"a shape must be a vector, got shape {s.shape}")
    known = [s.shape.as_list()[0] if s.shape.ndims == 1 else None for s in (x, y)]
    length = None if None in known else max(known)
    return [(x.dtype, TensorShape([length]))]


def _broadcast_args_kernel(attrs):
    def broadcast_args(x, y):
        out = _broadcast_lists([int(d) for d in x], [int(d) for d in y])
        if out is None:
            raise InvalidArgumentError(
                None,
                None,
                f"Incompatible shapes: [{','.join(map(str, x))}] vs. [{','.join(map(str, y))}]",
            )
        return np.asarray(out, dtype=np.asarray(x).dtype)

    return broadcast_args


define_op("BroadcastArgs", _infer_broadcast_args, _broadcast_args_kernel)


def broadcast_dynamic_shape(shape_x, shape_y) -> Tensor:
    """The shape (a vector) of the broadcast of tensors of shapes ``shape_x`` and ``shape_y``;
    ``InvalidArgumentError`` at run time when they do not broadcast."""
    x = convert_to_tensor(shape_x, name="shape_x")
    y = convert_to_tensor(shape_y, dtype=x.dtype, name="shape_y")
    return apply_op("BroadcastArgs", [x, y], {}, "BroadcastArgs").outputs[0]


def broadcast_static_shape(shape_x, shape_y) -> TensorShape:
    """The `TensorShape` of the broadcast of ``shape_x`` and ``shape_y`` (unknown dimensions
    stay unknown unless the other is known and not 1); ``ValueError`` when they do not
    broadcast."""
    x, y = TensorShape(shape_x), TensorShape(shape_y)
    if x.ndims is None or y.ndims is None:
        return TensorShape(None)
    out = _broadcast_lists(x.as_list(), y.as_list())
    if out is None:
        raise ValueError(
            "Incompatible shapes for broadcasting. Two shapes are compatible if for each "
            f"dimension pair they are either equal or one of them is 1. Received: {x} and {y}."
        )
    return TensorShape(out)


# -- searchsorted ----------------------------------------------------------------------------------
def _infer_bound(op):
    sorted_inputs, values = op.inputs
    if sorted_inputs.dtype != values.dtype:
        raise TypeError(
            f"values has dtype {values.dtype.name}, but sorted_sequence has "
            f"{sorted_inputs.dtype.name}"
        )
    for t in (sorted_inputs, values):
        if t.shape.ndims not in (None, 2):
            raise ValueError(f"{op.type} takes 2-D inputs, got shape {t.shape}")
    batch = TensorShape(sorted_inputs.shape[:1] if sorted_inputs.shape.ndims else None)
    if values.shape.ndims == 2:
        if not batch.is_compatible_with(values.shape[:1]):
            raise ValueError(
                f"Leading dim_size of both tensors must match: {sorted_inputs.shape} and "
                f"{values.shape}"
            )
        return [(op.attrs["out_type"], values.shape)]
    return [(op.attrs["out_type"], TensorShape([None, None]))]


def _bound_kernel(side: str):
    def factory(attrs):
        out_type = _dtypes.numpy_dtype(attrs["out_type"])

        def bound(sorted_inputs, values):
            sorted_inputs, values = np.asarray(sorted_inputs), np.asarray(values)
            if sorted_inputs.shape[0] != values.shape[0]:
                raise InvalidArgumentError(
                    None,
                    None,
                    "Leading dim_size of both tensors must match: "
                    f"{sorted_inputs.shape[0]} vs. {values.shape[0]}",
                )
            out = np.empty(values.shape, dtype=out_type)
            for i in range(values.shape[0]):
                out[i] = np.searchsorted(sorted_inputs[i], values[i], side=side)
            return out

        return bound

    return factory


define_op("LowerBound", _infer_bound, _bound_kernel("left"))
define_op("UpperBound", _infer_bound, _bound_kernel("right"))


def searchsorted(sorted_sequence, values, side="left", out_type=_dtypes.int32, name=None) -> Tensor:
    """For each of ``values``, the index in ``sorted_sequence`` (sorted along its last
    dimension; the leading dimensions of both match) where it would be inserted: before equal
    elements (``side="left"``) or after them (``"right"``)."""
    from .array_ops import reshape, shape

    if side not in ("left", "right"):
        raise ValueError(
            f"Argument `side` must be either 'right' or 'left'. Received: `side` = '{side}'."
        )
    with name_scope(name, "searchsorted"):
        sorted_sequence = convert_to_tensor(sorted_sequence, name="sorted_sequence")
        values = convert_to_tensor(values, dtype=sorted_sequence.dtype, name="values")
        sequence_size = shape(sorted_sequence)[-1]
        values_size = shape(values)[-1]
        sorted_2d = reshape(sorted_sequence, [-1, sequence_size])
        values_2d = reshape(values, [-1, values_size])
        op_type = "LowerBound" if side == "left" else "UpperBound"
        attrs = {"out_type": _dtypes.as_dtype(out_type)}
        found = apply_op(op_type, [sorted_2d, values_2d], attrs, op_type).outputs[0]
        return reshape(found, shape(values))


# -- small ops -------------------------------------------------------------------------------------
define_op(
    "Timestamp",
    lambda op: [(_dtypes.float64, TensorShape([]))],
    lambda attrs: lambda: np.float64(time.time()),
    stateful=True,
    inline=True,
)


def timestamp(name: Optional[str] = None) -> Tensor:
    """The time the op runs, in seconds since the epoch (a float64 scalar)."""
    return apply_op("Timestamp", [], {}, name or "Timestamp").outputs[0]


def floor_div(x, y, name: Optional[str] = None) -> Tensor:
    """``x // y`` rounded toward negative infinity (``FloorDiv``), as `floordiv`."""
    from .math_ops import floordiv

    return floordiv(x, y, name=name or "FloorDiv")


define_op(
    "GuaranteeConst",
    lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
    lambda attrs: lambda x: x,
    inline=True,
)


def guarantee_const(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """``input`` itself, marked as constant for the life of the Session (``GuaranteeConst``;
    TensorFlow's optimizers may fold what depends on it)."""
    x = convert_to_tensor(input, name="input")
    return apply_op("GuaranteeConst", [x], {}, name or "GuaranteeConst").outputs[0]


# -- fingerprint -----------------------------------------------------------------------------------
def _infer_fingerprint(op):
    data, method = op.inputs
    if data.shape.ndims is not None and data.shape.ndims < 1:
        raise ValueError(f"Shape must be at least rank 1 but is rank {data.shape.ndims}")
    if data.dtype in (_dtypes.resource, _dtypes.variant):
        raise TypeError(f"fingerprint of {data.dtype.name} data")
    batch = data.shape[:1] if data.shape.ndims is not None else TensorShape([None])
    return [(_dtypes.uint8, batch.concatenate([8]))]


def _fingerprint_kernel(attrs):
    import struct

    from .string_hash import fingerprint64

    def fingerprint(data, method):
        method = np.asarray(method).item()
        method = method.decode() if isinstance(method, bytes) else str(method)
        if method != "farmhash64":
            raise InvalidArgumentError(None, None, f"Unsupported method: {method}")
        data = np.asarray(data)
        rows = data.reshape(data.shape[0], -1) if data.shape[0] else data.reshape(0, 1)
        out = np.zeros((data.shape[0], 8), dtype=np.uint8)
        for i, row in enumerate(rows):
            if data.dtype.kind == "O":  # strings: one's own fingerprint, several fingerprinted
                if row.size == 1:
                    value = fingerprint64(row[0])
                else:
                    joined = b"".join(struct.pack("<Q", fingerprint64(x)) for x in row)
                    value = fingerprint64(joined)
            else:
                value = fingerprint64(np.ascontiguousarray(row).tobytes())
            out[i] = np.frombuffer(struct.pack("<Q", value), dtype=np.uint8)
        return out

    return fingerprint


define_op("Fingerprint", _infer_fingerprint, _fingerprint_kernel)


def fingerprint(data, method="farmhash64", name=None) -> Tensor:
    """For each row of ``data`` (its slices along dimension 0), TensorFlow's 8-byte
    fingerprint (uint8, shape ``[batch, 8]``): FarmHash's Fingerprint64 of the row's bytes, of
    a row's one string, or of the fingerprints of a row's several strings."""
    data = convert_to_tensor(data, name="data")
    method_t = convert_to_tensor(method, _dtypes.string, name="method")
    if method != "farmhash64" and isinstance(method, str):
        raise ValueError(f"Unsupported method: {method}")
    return apply_op("Fingerprint", [data, method_t], {}, name or "Fingerprint").outputs[0]


# -- sparse.bincount ------------------------------------------------------------------------------
def _infer_count_sparse(op):
    dtype = op.attrs["out_type"]
    rank = 2 if op.attrs["per_row"] else 1
    return [
        (_dtypes.int64, TensorShape([None, rank])),
        (dtype, TensorShape([None])),
        (_dtypes.int64, TensorShape([rank])),
    ]


def _count_sparse_kernel(attrs):
    weighted, per_row, binary = attrs["weighted"], attrs["per_row"], attrs["binary_output"]

    def count(values, rows, weights, nrows, minlength, maxlength):
        values = np.asarray(values).reshape(-1).astype(np.int64)
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        weights = np.asarray(weights).reshape(-1)
        if values.size and values.min() < 0:
            raise InvalidArgumentError(
                None, None, f"Input must be non-negative, got {int(values.min())}"
            )
        size = (int(values.max()) if values.size else 0) + 1
        minlength, maxlength = int(minlength), int(maxlength)
        if maxlength >= 0:
            size = min(size, maxlength)
            keep = values < maxlength
            values, rows = values[keep], rows[keep]
            weights = weights[keep] if weighted else weights
        if minlength >= 0:
            size = max(size, minlength)
        counts: dict = {}
        for k, (row, value) in enumerate(zip(rows, values)):
            key = (int(row), int(value)) if per_row else (int(value),)
            counts[key] = counts.get(key, 0) + (weights[k] if weighted else 1)
        keys = sorted(counts)
        out_values = np.array(
            [1 if binary else counts[k] for k in keys],
            dtype=_dtypes.numpy_dtype(attrs["out_type"]),
        )
        rank = 2 if per_row else 1
        indices = np.array(keys, dtype=np.int64).reshape(len(keys), rank)
        shape = [int(nrows), size] if per_row else [size]
        return indices, out_values, np.asarray(shape, dtype=np.int64)

    return count


define_op("CountSparseOutput", _infer_count_sparse, _count_sparse_kernel)


def sparse_bincount(
    values,
    weights=None,
    axis=0,
    minlength=None,
    maxlength=None,
    binary_output=False,
    name=None,
):
    """How many times each value of ``values`` (a Tensor, SparseTensor or RaggedTensor of
    non-negative integers) occurs, as a SparseTensor: over everything (``axis=0``) or per row
    of a 2-D input (``axis=-1``); with ``weights`` (of ``values``' structure) their sums
    instead, with ``binary_output`` 1 for each value present.  Values at or above
    ``maxlength`` are left out; the output has at least ``minlength`` bins."""
    from ..framework.ragged_tensor import RaggedTensor
    from ..framework.sparse_tensor import SparseTensor
    from .array_ops import reshape, shape, zeros
    from .math_ops import cast

    if axis is None:
        axis = 0
    if axis not in (0, -1):
        raise ValueError(
            f"Unsupported value for argument axis={axis}. Only 0 and -1 are currently supported."
        )
    with name_scope(name, "count"):
        if isinstance(values, SparseTensor):
            flat, rows = values.values, values.indices[:, 0]
            nrows = values.dense_shape[0]
            flat_weights = weights.values if isinstance(weights, SparseTensor) else weights
        elif isinstance(values, RaggedTensor):
            flat, rows = values.flat_values, cast(values.value_rowids(), _dtypes.int64)
            nrows = cast(values.nrows(), _dtypes.int64)
            flat_weights = weights.flat_values if isinstance(weights, RaggedTensor) else weights
        else:
            values = convert_to_tensor(values, name="values")
            if axis == -1 and values.shape.ndims != 2:
                raise ValueError(f"sparse.bincount with axis=-1 needs 2-D values, got {values}")
            dims = shape(values, out_type=_dtypes.int64)
            flat = reshape(values, [-1])
            if axis == -1:
                from .array_ops import range as _range

                columns = dims[1]
                rows = reshape(_range(0, dims[0] * columns, dtype=_dtypes.int64) // columns, [-1])
                nrows = dims[0]
            else:
                rows = zeros(shape(flat, out_type=_dtypes.int64), _dtypes.int64)
                nrows = convert_to_tensor(1, _dtypes.int64)
            flat_weights = None if weights is None else reshape(convert_to_tensor(weights), [-1])
        if flat.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"sparse.bincount counts integers, got {flat.dtype.name}")
        weighted = flat_weights is not None
        weights_in = (
            convert_to_tensor(flat_weights, name="weights")
            if weighted
            else convert_to_tensor(np.zeros([0], np.float32))
        )
        attrs = {
            "weighted": weighted,
            "per_row": axis == -1,
            "binary_output": bool(binary_output),
            "out_type": weights_in.dtype if weighted else flat.dtype,
        }
        inputs = [
            flat,
            rows,
            weights_in,
            convert_to_tensor(nrows, _dtypes.int64),
            convert_to_tensor(-1 if minlength is None else minlength, _dtypes.int64),
            convert_to_tensor(-1 if maxlength is None else maxlength, _dtypes.int64),
        ]
        indices, counts, dense_shape = apply_op(
            "CountSparseOutput", inputs, attrs, "CountSparseOutput"
        ).outputs
        return SparseTensor(indices, counts, dense_shape)


# -- batch functions -------------------------------------------------------------------------------
def is_symbolic_tensor(tensor) -> bool:
    """Whether ``tensor`` is a graph tensor (not an eager one, a variable or a value)."""
    return isinstance(tensor, Tensor) and not tensor._is_eager


def dimension_at_index(shape, index) -> Dimension:
    """Dimension ``index`` of ``shape`` as a `Dimension` (unknown when the rank is)."""
    shape = TensorShape(shape)
    if shape.ndims is None:
        return Dimension(None)
    return Dimension(shape.as_list()[index])


def convert_to_tensor_or_sparse_tensor(value, dtype=None, name=None):
    """``value`` as a SparseTensor (a SparseTensorValue is made one) or a Tensor."""
    from ..framework.sparse_tensor import SparseTensor, SparseTensorValue

    if dtype is not None:
        dtype = _dtypes.as_dtype(dtype)
    if isinstance(value, SparseTensorValue):
        value = SparseTensor(value.indices, value.values, value.dense_shape)
    if isinstance(value, SparseTensor):
        if dtype and not dtype.is_compatible_with(value.dtype):
            raise RuntimeError(
                f"Sparse dtype mismatch. Requested: {dtype.name}, Actual: {value.dtype.name}"
            )
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402

for _type in (
    "Bitcast",
    "BroadcastArgs",
    "LowerBound",
    "UpperBound",
    "Timestamp",
    "CountSparseOutput",
    "Fingerprint",
):
    NotDifferentiable(_type)


@RegisterGradient("GuaranteeConst")
def _guarantee_const_grad(op, grad):
    return grad

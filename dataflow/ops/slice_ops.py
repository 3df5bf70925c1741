"""Slicing: ``Slice`` and ``StridedSlice`` (the ops behind ``tensor[...]``, with numpy's and
TensorFlow's rules for masks, ellipses and new axes), their gradients, and the ops that write
into slices."""

from __future__ import annotations

import builtins
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, get_default_graph, graph_to_build_in
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import (
    convert_to_tensor,
)
from ..framework.tensor_shape import TensorShape
from .array_ops import _as_index_vector, _pyrange, _pyslice, ones_like
from .math_ops import (
    INDEX_TYPES,
    check_dtype,
    check_same_dtype,
    convert_all,
)
from .static_values import (
    constant_vector,
)


# -- slicing ---------------------------------------------------------------------------------------
def _infer_slice(op):
    x, begin, size = op.inputs
    check_same_dtype((begin, size), ("begin", "size"), op.type)
    check_dtype(begin.dtype, INDEX_TYPES, "slice's begin")
    begins, sizes = constant_vector(begin), constant_vector(size)
    rank = x.shape.ndims
    n = len(begins) if begins is not None else len(sizes) if sizes is not None else rank
    if n is None:
        return [(x.dtype, TensorShape(None))]
    for vec in (begins, sizes):
        if vec is not None and len(vec) != n:
            raise ValueError(f"slice's begin and size must have one entry per dimension ({n})")
    if rank is not None and rank != n:
        raise ValueError(
            f"slice of a rank-{rank} tensor needs {rank} begin and size entries, got {n}"
        )
    begins = begins or [None] * n
    sizes = sizes or [None] * n
    dims = x.shape.as_list() if rank is not None else [None] * n
    out = []
    for i, (b, s, d) in enumerate(zip(begins, sizes, dims)):
        if s is not None and s != -1:
            if s < -1:
                raise ValueError(f"slice size {s} for dimension {i} must be -1 or at least 0")
            if b is not None and d is not None and (b < 0 or b + s > d):
                raise ValueError(
                    f"slice [{b}, {b + s}) is out of bounds for dimension {i} of size {d}"
                )
            out.append(s)
        elif s == -1 and b is not None and d is not None:
            if not 0 <= b <= d:
                raise ValueError(f"slice begin {b} is out of bounds for dimension {i} of size {d}")
            out.append(d - b)
        else:
            out.append(None)
    return [(x.dtype, TensorShape(out))]


def _slice(x, begin, size):
    shape = np.shape(x)
    begin, size = begin.tolist(), size.tolist()
    if not len(begin) == len(size) == len(shape):
        raise InvalidArgumentError(
            None, None, f"slice of shape {shape} needs {len(shape)} begin and size entries"
        )
    index = []
    for i, (b, s, d) in enumerate(zip(begin, size, shape)):
        if s == -1:
            s = d - b
        if not (0 <= b <= d and 0 <= s <= d - b):
            raise InvalidArgumentError(
                None, None, f"slice [{b}, {b + s}) is out of bounds for dimension {i} of {shape}"
            )
        index.append(_pyslice(b, b + s))
    return x[tuple(index)]


define_op("Slice", _infer_slice, lambda attrs: _slice, inline=True)


def slice(input_, begin, size, name: Optional[str] = None) -> Tensor:  # noqa: A001 - tf.slice
    """The block of ``input_`` starting at ``begin`` with extent ``size`` (-1: to the end).
    Out-of-bounds requests are errors, not clipped."""
    input_ = convert_to_tensor(input_)
    graph = graph_to_build_in(input_.graph)
    with graph.as_default(), graph.name_scope(name or "Slice") as scope:
        begin = _as_index_vector(begin, "begin")
        size = _as_index_vector(size, "size", begin.dtype)
        return apply_op("Slice", (input_, begin, size), None, scope).outputs[0]


_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _infer_strided_slice(op):
    x, begin, end, strides = op.inputs
    check_same_dtype((begin, end, strides), ("begin", "end", "strides"), op.type)
    check_dtype(begin.dtype, INDEX_TYPES, "strided_slice's begin")
    masks = [op.attrs[m] for m in _MASKS]
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = masks
    vectors = [constant_vector(t) for t in (begin, end, strides)]
    lengths = {len(v) for v in vectors if v is not None}
    if len(lengths) > 1:
        raise ValueError("strided_slice's begin, end and strides must have the same length")
    if not lengths:
        return [(x.dtype, TensorShape(None))]
    n = lengths.pop()
    begins, ends, steps = (v if v is not None else [None] * n for v in vectors)
    if bin(ellipsis_mask).count("1") > 1:
        raise ValueError("strided_slice allows at most one ellipsis")
    for i, s in enumerate(steps):
        if s == 0 and not (ellipsis_mask | new_axis_mask | shrink_mask) >> i & 1:
            raise ValueError("strided_slice's strides must not be 0")
    rank = x.shape.ndims
    consumed = sum(1 for i in _pyrange(n) if not (ellipsis_mask >> i & 1 or new_axis_mask >> i & 1))
    if rank is None:
        return [(x.dtype, TensorShape(None))]
    if consumed > rank:
        raise ValueError(f"Index of {consumed} dimensions is too long for shape {x.shape}")
    dims = x.shape.as_list()
    out: list = []
    dim = 0
    for i in _pyrange(n):
        if ellipsis_mask >> i & 1:
            covered = rank - consumed
            out.extend(dims[dim : dim + covered])
            dim += covered
        elif new_axis_mask >> i & 1:
            out.append(1)
        elif shrink_mask >> i & 1:
            b, d = begins[i], dims[dim]
            if b is not None and d is not None and not -d <= b < d:
                raise ValueError(f"Index {b} is out of bounds for dimension {dim} of size {d}")
            dim += 1
        else:
            b = None if begin_mask >> i & 1 else begins[i]
            e = None if end_mask >> i & 1 else ends[i]
            s, d = steps[i], dims[dim]
            b_known = b is not None or begin_mask >> i & 1
            e_known = e is not None or end_mask >> i & 1
            if d is None or s is None or not (b_known and e_known):
                out.append(None)
            else:
                out.append(len(_pyrange(*_pyslice(b, e, s).indices(d))))
            dim += 1
    out.extend(dims[dim:])
    return [(x.dtype, TensorShape(out))]


def _strided_slice_indexer(attrs):
    """The function from ``(begin, end, strides)`` arrays to the numpy index that StridedSlice
    with these masks reads, shared by the op and its gradient."""
    begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_mask = (attrs[m] for m in _MASKS)

    def index_of(begin, end, strides) -> tuple:
        index = []
        for i, (b, e, s) in enumerate(zip(begin.tolist(), end.tolist(), strides.tolist())):
            if ellipsis_mask >> i & 1:
                index.append(Ellipsis)
            elif new_axis_mask >> i & 1:
                index.append(None)
            elif shrink_mask >> i & 1:
                index.append(b)
            else:
                if s == 0:
                    raise InvalidArgumentError(None, None, "strided_slice's strides must not be 0")
                index.append(
                    _pyslice(
                        None if begin_mask >> i & 1 else b, None if end_mask >> i & 1 else e, s
                    )
                )
        return tuple(index)

    return index_of


def _strided_slice_kernel(attrs):
    index_of = _strided_slice_indexer(attrs)

    def strided_slice(x, begin, end, strides):
        try:
            return x[index_of(begin, end, strides)]
        except IndexError as e:
            raise InvalidArgumentError(
                None, None, f"strided_slice of a tensor of shape {np.shape(x)}: {e}"
            ) from None

    return strided_slice


define_op("StridedSlice", _infer_strided_slice, _strided_slice_kernel, inline=True)


def strided_slice(
    input_,
    begin,
    end,
    strides=None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var=None,
    name: Optional[str] = None,
) -> Tensor:
    """Python-style slicing with TensorFlow's bit masks: bit ``i`` of ``begin_mask``/``end_mask``
    ignores ``begin[i]``/``end[i]``, of ``ellipsis_mask`` makes entry ``i`` an ``...``, of
    ``new_axis_mask`` a new size-1 axis, of ``shrink_axis_mask`` an integer index."""
    input_ = convert_to_tensor(input_)
    graph = graph_to_build_in(input_.graph)
    with graph.as_default(), graph.name_scope(name or "StridedSlice") as scope:
        begin = _as_index_vector(begin, "begin")
        end = _as_index_vector(end, "end", begin.dtype)
        if strides is None:
            strides = ones_like(begin, name="strides")
        strides = _as_index_vector(strides, "strides", begin.dtype)
        attrs = dict(
            zip(_MASKS, (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask))
        )
        return apply_op("StridedSlice", (input_, begin, end, strides), attrs, scope).outputs[0]


_INDEX_ERROR = (
    "Only integers, slices (`:`), ellipsis (`...`), df.newaxis (`None`) and scalar int32/int64 "
    "tensors are valid indices, got {!r}"
)


def _check_index(value) -> None:
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, Tensor):
        if value.dtype in INDEX_TYPES and value.shape.ndims in (None, 0):
            return
    raise TypeError(_INDEX_ERROR.format(value))


def _pack_indices(values: list, name: str, dtype) -> Tensor:
    if any(isinstance(v, Tensor) for v in values):
        with get_default_graph().name_scope(name) as scope:
            tensors = convert_all(values, [f"{i}" for i in _pyrange(len(values))], dtype)
            return apply_op("Pack", tensors, {"axis": 0}, scope).outputs[0]
    return _as_index_vector(values, name, dtype)


def _getitem(tensor: Tensor, key) -> Tensor:
    """``tensor[key]`` lowered to a ``StridedSlice``, as TensorFlow does.  A list key is read
    as a tuple (``t[[0, 1]]`` is ``t[0, 1]``), as TensorFlow 1.x does; it does not gather."""
    if not isinstance(key, (tuple, list)):
        key = (key,)
    begin, end, strides = [], [], []
    masks = dict.fromkeys(_MASKS, 0)
    for i, item in enumerate(key):
        bit = 1 << i
        if isinstance(item, _pyslice):
            for part in (item.start, item.stop, item.step):
                if part is not None:
                    _check_index(part)
            if item.step is not None and not isinstance(item.step, Tensor) and item.step == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(0 if item.start is None else item.start)
            end.append(0 if item.stop is None else item.stop)
            strides.append(1 if item.step is None else item.step)
            if item.start is None:
                masks["begin_mask"] |= bit
            if item.stop is None:
                masks["end_mask"] |= bit
        elif item is Ellipsis:
            if masks["ellipsis_mask"]:
                raise ValueError("An index can only have a single ellipsis ('...')")
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask"] |= bit
        elif item is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["new_axis_mask"] |= bit
        else:
            _check_index(item)
            # Only begin matters for a shrunk axis, so end repeats it.
            begin.append(item), end.append(item), strides.append(1)
            masks["shrink_axis_mask"] |= bit
    index_tensors = [v for v in begin + end + strides if isinstance(v, Tensor)]
    dtype = index_tensors[0].dtype if index_tensors else None
    if dtype is None and max(map(builtins.abs, begin + end), default=0) >= 2**31:
        dtype = _dtypes.int64
    dtype = dtype or _dtypes.int32
    graph = graph_to_build_in(tensor.graph)
    with graph.as_default(), graph.name_scope("strided_slice") as scope:
        vectors = [
            _pack_indices(v, n, dtype)
            for v, n in ((begin, "begin"), (end, "end"), (strides, "strides"))
        ]
        return apply_op("StridedSlice", [tensor, *vectors], masks, scope).outputs[0]


__all__ = [
    "slice",
    "strided_slice",
]

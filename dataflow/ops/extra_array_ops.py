"""TF1's remaining everyday array names: sorting, masks, ``linspace``, broadcasting and
repeating, rolls, partitions, set differences, permutations, grids and the small helpers
(``shape_n``, ``ensure_shape``, ``get_static_value``, ``is_tensor``).

All of them compose existing ops, as TensorFlow's Python does for most (``sort`` is a
``top_k``, ``boolean_mask`` a ``where`` and a ``gather``), so their gradients, their runs in
conds and loops and their saving come from those ops.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location, control_dependencies, graph_to_build_in
from ..framework.indexed_slices import IndexedSlices
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from ..framework.type_spec import IndexedSlicesSpec, register_spec_of
from . import array_ops as _a
from . import gather_ops as _g
from . import math_ops as _m
from .extra_nn_ops import top_k
from .math_ops import graph_of, static_axis
from .misc_ops import Assert

__all__ = [
    "argsort",
    "boolean_mask",
    "broadcast_to",
    "dynamic_partition",
    "ensure_shape",
    "get_static_value",
    "invert_permutation",
    "is_tensor",
    "lin_space",
    "linspace",
    "meshgrid",
    "repeat",
    "roll",
    "sequence_mask",
    "setdiff1d",
    "shape_n",
    "sort",
    "unique_with_counts",
]


def _fail(function: str, message: str, error=ValueError):
    raise error(f"{function} at {_user_location()}: {message}")


# -- sorting ---------------------------------------------------------------------------------------
def _sort_along(function: str, values, axis, direction: str):
    """``top_k`` over all of ``axis`` (moved last and back): the values and indices, largest
    first for DESCENDING; ascending sorts the negation (of floats or signed integers)."""
    if direction not in ("ASCENDING", "DESCENDING"):
        _fail(function, f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    values = convert_to_tensor(values, name="values")
    rank = values.shape.ndims
    if rank is None or rank == 0:
        _fail(function, f"values must have a known rank of at least 1, got {values.shape}")
    axis = static_axis(axis)
    if not isinstance(axis, int):
        _fail(function, f"axis must be an int, got {axis!r}", TypeError)
    axis = _m.normalize_axis(axis, rank)
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = values if axis == rank - 1 else _a.transpose(values, perm)
    size = moved.shape.as_list()[-1]
    k = size if size is not None else _a.shape(moved)[-1]
    keys = _m.negative(moved) if direction == "ASCENDING" else moved
    top, indices = top_k(keys, k)
    if direction == "ASCENDING":
        top = _m.negative(top)
    if axis != rank - 1:
        top, indices = _a.transpose(top, perm), _a.transpose(indices, perm)
    return top, indices


def sort(values, axis=-1, direction: str = "ASCENDING", name: Optional[str] = None) -> Tensor:
    """``values`` sorted along ``axis``."""
    graph = graph_of((values,))
    with graph.as_default(), graph.name_scope(name or "sort"):
        return _sort_along("sort", values, axis, direction)[0]


def argsort(
    values, axis=-1, direction: str = "ASCENDING", stable: bool = False, name=None
) -> Tensor:
    """The int32 indices that sort ``values`` along ``axis`` (equal values keep their order,
    so every sort here is stable)."""
    graph = graph_of((values,))
    with graph.as_default(), graph.name_scope(name or "argsort"):
        return _sort_along("argsort", values, axis, direction)[1]


# -- masks -----------------------------------------------------------------------------------------
def boolean_mask(tensor, mask, name: str = "boolean_mask", axis=None) -> Tensor:
    """The entries of ``tensor`` where the bool ``mask`` (covering dimensions ``axis`` to
    ``axis + mask rank``) is true, those dimensions flattened into one."""
    graph = graph_of((tensor, mask))
    with graph.as_default(), graph.name_scope(name):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        if mask.dtype is not _dtypes.bool:
            _fail("boolean_mask", f"mask must be bool, got {mask.dtype.name}", TypeError)
        mask_rank = mask.shape.ndims
        if mask_rank is None or mask_rank == 0:
            _fail("boolean_mask", "mask dimensions must be known and at least 1")
        axis = 0 if axis is None else int(axis)
        if tensor.shape.ndims is not None:
            covered = tensor.shape[axis : axis + mask_rank]
            if not covered.is_compatible_with(mask.shape):
                _fail(
                    "boolean_mask",
                    f"Shapes {covered} and {mask.shape} are incompatible (tensor {tensor.shape})",
                )
        shape = _a.shape(tensor)
        flat_shape = _a.concat(
            [shape[:axis], _m.reduce_prod(shape[axis : axis + mask_rank], keepdims=True),
             shape[axis + mask_rank :]],
            0,
        )  # fmt: skip
        flat = _a.reshape(tensor, flat_shape)
        if tensor.shape.ndims is not None:
            dims = tensor.shape.as_list()
            covered = dims[axis : axis + mask_rank]
            merged = None if None in covered else int(np.prod(covered))
            flat.set_shape(dims[:axis] + [merged] + dims[axis + mask_rank :])
        picked = _a.reshape(_m.where(_a.reshape(mask, [-1])), [-1])
        return _g.gather(flat, picked, axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=_dtypes.bool, name: Optional[str] = None) -> Tensor:
    """``mask[..., j] = j < lengths[...]`` over ``maxlen`` columns (default the largest
    length), as ``dtype``."""
    graph = graph_of((lengths, maxlen))
    with graph.as_default(), graph.name_scope(name or "SequenceMask"):
        lengths = convert_to_tensor(lengths, name="lengths")
        if maxlen is None:
            maxlen = _m.maximum(_m.reduce_max(lengths), _a.zeros_like(_m.reduce_max(lengths)))
        maxlen = convert_to_tensor(maxlen, name="maxlen")
        if maxlen.shape.ndims not in (None, 0):
            _fail("sequence_mask", f"maxlen must be scalar, got shape {maxlen.shape}")
        columns = _a.range(_m.cast(maxlen, lengths.dtype))
        mask = _m.less(columns, _a.expand_dims(lengths, -1))
        dtype = _dtypes.as_dtype(dtype)
        return mask if dtype is _dtypes.bool else _m.cast(mask, dtype)


# -- ranges, broadcasting, repeats, rolls ----------------------------------------------------------
def linspace(start, stop, num, name: Optional[str] = None, axis: int = 0) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive, along a new dimension
    ``axis`` (TensorFlow 2's ``linspace``, which ``tf.compat.v1`` has too): ``start`` and
    ``stop`` broadcast together, ``stop`` takes ``start``'s dtype, and integers give floats
    (``/`` divides them: int32 and int64 give float64).  Computed as TensorFlow composes it:
    the step is ``(stop - start) / (num - 1)``, the values between the ends are
    ``start + step * k``, and the ends are ``start`` and ``stop`` themselves."""
    from .assorted_ops import broadcast_dynamic_shape
    from .slice_ops import slice as _slice

    graph = graph_of((start, stop, num))
    with graph.as_default(), graph.name_scope(name or "linspace"):
        start = convert_to_tensor(start, name="start")
        stop = convert_to_tensor(stop, dtype=start.dtype, name="stop")
        num = convert_to_tensor(num, name="num")
        if num.dtype not in (_dtypes.int32, _dtypes.int64):
            _fail("linspace", f"num must be an integer, got {num.dtype.name}", TypeError)
        if num.shape.ndims not in (None, 0):
            _fail("linspace", f"num must be a scalar, got shape {num.shape}")
        known = numpy_value_or_none(num)
        if known is not None and known < 0:
            _fail("linspace", f"num must not be negative, got {int(known)}")
        if not (start.shape.is_fully_defined() and start.shape == stop.shape):
            both = broadcast_dynamic_shape(_a.shape(start), _a.shape(stop))
            start, stop = broadcast_to(start, both), broadcast_to(stop, both)
        rank = start.shape.ndims
        if rank is None:
            _fail("linspace", "start and stop must have a known rank")
        if not isinstance(axis, int) or not -rank - 1 <= axis <= rank:
            _fail("linspace", f"axis must be an int in [{-rank - 1}, {rank}], got {axis!r}")
        axis = axis % (rank + 1)
        first = _a.expand_dims(start, axis)
        last = _a.expand_dims(stop, axis)
        between = _m.maximum(_m.subtract(num, 2), 0)
        steps = _m.maximum(_m.subtract(num, 1), 1)
        delta = _m.truediv(_m.subtract(last, first), _m.cast(steps, last.dtype))
        first, last = _m.cast(first, delta.dtype), _m.cast(last, delta.dtype)
        # A negative num fails here, in the range (as TensorFlow's does).
        end = _m.where_v2(_m.greater_equal(num, 0), steps, -1)
        positions = _m.cast(_a.range(1, end, dtype=_dtypes.int64), delta.dtype)
        ones_before = _a.ones([axis], _dtypes.int64)
        ones_after = _a.ones([rank - axis], _dtypes.int64)
        positions = _a.reshape(
            positions,
            _a.concat(
                [ones_before, _a.reshape(_m.cast(between, _dtypes.int64), [1]), ones_after], 0
            ),
        )
        inner = _m.add(first, _m.multiply(delta, positions))
        joined = _a.concat([first, inner, last], axis)
        dims = _a.shape(first, out_type=_dtypes.int64)
        size = _a.concat(
            [dims[:axis], _a.reshape(_m.cast(num, _dtypes.int64), [1]), dims[axis + 1 :]], 0
        )
        result = _slice(joined, _a.zeros_like(dims), size)
        static = first.shape.as_list()
        static[axis] = None if known is None else int(known)
        result.set_shape(static)
        return result


lin_space = linspace


def broadcast_to(input, shape, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """``input`` broadcast to ``shape`` (numpy's rules)."""
    graph = graph_of((input, shape))
    with graph.as_default(), graph.name_scope(name or "BroadcastTo"):
        x = convert_to_tensor(input, name="input")
        target = _a.fill(shape, True)
        if x.shape.ndims is not None and target.shape.is_fully_defined():
            try:
                result = _m.broadcast_shape(x.shape, target.shape)
            except ValueError:
                result = None
            if result is None or result != target.shape:
                message = f"cannot broadcast shape {x.shape} to {target.shape}"
                if graph._eager:  # TensorFlow 2's eager kernel reports it so
                    raise InvalidArgumentError(
                        None, None, f"broadcast_to at {_user_location()}: {message}"
                    )
                _fail("broadcast_to", message)
        # A select of x against itself under an all-true condition of the target shape:
        # works for every dtype, and its gradient sums back to x's shape.
        return _m.where_v2(target, x, x)


def repeat(input, repeats, axis=None, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Each element (``axis=None``: of the flattened input) or slice along ``axis`` repeated
    ``repeats`` times (an int or one count per slice, known when the graph is built)."""
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or "Repeat"):
        x = convert_to_tensor(input, name="input")
        if axis is None:
            x = _a.reshape(x, [-1])
            axis = 0
        counts = numpy_value_or_none(convert_to_tensor(repeats, name="repeats"))
        if counts is None:
            _fail("repeat", "repeats must be known when the graph is built")
        size = x.shape.as_list()[axis] if x.shape.ndims is not None else None
        if counts.ndim == 0:
            if size is None:
                _fail("repeat", "needs a known size along axis for a scalar repeats")
            counts = np.full(size, int(counts))
        if size is not None and len(counts) != size:
            _fail("repeat", f"repeats has {len(counts)} entries for {size} slices")
        index = np.repeat(np.arange(len(counts)), counts).astype(np.int32)
        return _g.gather(x, index, axis=axis)


def roll(input, shift, axis, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """``input`` shifted by ``shift`` along ``axis`` with wrap-around (each may be a list)."""
    graph = graph_of((input, shift))
    with graph.as_default(), graph.name_scope(name or "Roll"):
        x = convert_to_tensor(input, name="input")
        shifts = shift if isinstance(shift, (list, tuple)) else [shift]
        axes = axis if isinstance(axis, (list, tuple)) else [axis]
        if len(shifts) != len(axes):
            _fail("roll", f"shift and axis must have the same size, got {shifts} and {axes}")
        for one_shift, one_axis in zip(shifts, axes):
            size = _a.shape(x)[one_axis]
            one_shift = _m.cast(convert_to_tensor(one_shift), _dtypes.int32)
            source = _m.mod(_m.subtract(_a.range(size), one_shift), size)
            x = _g.gather(x, source, axis=one_axis)
        return x


# -- sets, partitions, permutations ----------------------------------------------------------------
def unique_with_counts(x, out_idx=_dtypes.int32, name: Optional[str] = None) -> tuple:
    """``(y, idx, count)``: `unique`'s result and how often each element of ``y`` occurs."""
    from .segment_ops import unique, unsorted_segment_sum

    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "UniqueWithCounts"):
        y, idx = unique(x, out_idx=out_idx)
        count = unsorted_segment_sum(_a.ones_like(idx), idx, _a.size(y, out_type=idx.dtype))
        return y, idx, count


def setdiff1d(x, y, index_dtype=_dtypes.int32, name: Optional[str] = None) -> tuple:
    """``(out, idx)``: the elements of the vector ``x`` not in ``y``, in order, and their
    positions in ``x``."""
    graph = graph_of((x, y))
    with graph.as_default(), graph.name_scope(name or "ListDiff"):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y")
        matches = _m.equal(_a.expand_dims(x, 1), _a.expand_dims(y, 0))
        keep = _m.logical_not(_m.reduce_any(matches, 1))
        idx = _m.cast(_a.reshape(_m.where(keep), [-1]), index_dtype)
        return _g.gather(x, idx), idx


def dynamic_partition(data, partitions, num_partitions: int, name=None) -> list:
    """``num_partitions`` tensors: the ``i``-th holds the slices of ``data`` whose
    ``partitions`` entry is ``i``, in order."""
    if not isinstance(num_partitions, int) or num_partitions < 1:
        _fail("dynamic_partition", f"num_partitions must be a positive int, got {num_partitions!r}")
    graph = graph_of((data, partitions))
    with graph.as_default(), graph.name_scope(name or "DynamicPartition"):
        data = convert_to_tensor(data, name="data")
        partitions = convert_to_tensor(partitions, name="partitions")
        return [boolean_mask(data, _m.equal(partitions, i)) for i in range(num_partitions)]


def invert_permutation(x, name: Optional[str] = None) -> Tensor:
    """The inverse permutation of the vector ``x``: ``y[x[i]] = i``."""
    from .segment_ops import unsorted_segment_sum

    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "InvertPermutation"):
        x = convert_to_tensor(x, name="x")
        positions = _a.range(_a.size(x, out_type=x.dtype))
        return unsorted_segment_sum(positions, x, _a.size(x, out_type=x.dtype))


def meshgrid(*args, **kwargs) -> list:
    """Coordinate grids of the vectors ``args``: ``indexing='xy'`` (default, Cartesian: the
    first two outputs' axes swapped) or ``'ij'`` (matrix)."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", None)
    if kwargs:
        _fail("meshgrid", f"unexpected arguments {sorted(kwargs)}", TypeError)
    if indexing not in ("xy", "ij"):
        _fail("meshgrid", f"indexing must be 'xy' or 'ij', got {indexing!r}")
    graph = graph_of(args)
    with graph.as_default(), graph.name_scope(name or "meshgrid"):
        vectors = [_a.reshape(convert_to_tensor(v), [-1]) for v in args]
        count = len(vectors)
        outputs = []
        for i, v in enumerate(vectors):
            shape = [1] * count
            shape[i] = -1
            if indexing == "xy" and count > 1 and i < 2:
                shape[0], shape[1] = shape[1], shape[0]
            outputs.append(_a.reshape(v, shape))
        sizes = [_a.size(v) for v in vectors]
        if indexing == "xy" and count > 1:
            sizes[0], sizes[1] = sizes[1], sizes[0]
        return [broadcast_to(o, _a.stack(sizes)) for o in outputs]


# -- small helpers ---------------------------------------------------------------------------------
def shape_n(input, out_type=_dtypes.int32, name: Optional[str] = None) -> list:  # noqa: A002
    """The shape of each tensor in ``input``."""
    return [_a.shape(t, out_type=out_type) for t in input]


def ensure_shape(x, shape, name: Optional[str] = None) -> Tensor:
    """``x`` with its static shape narrowed to ``shape``; a shape ``x`` cannot have is a
    ``ValueError`` now, and a run-time shape that does not match is an error when it runs."""
    x = convert_to_tensor(x, name="x")
    shape = TensorShape(shape)
    if not x.shape.is_compatible_with(shape):
        _fail("ensure_shape", f"Shape of tensor {x.name} {x.shape} is not compatible with {shape}")
    graph = graph_to_build_in(x.graph)
    with graph.as_default(), graph.name_scope(name or "EnsureShape"):
        actual = _a.shape(x)
        checks = []
        if shape.ndims is not None:
            checks.append(_m.equal(_a.rank(x), shape.ndims))
            for i, dim in enumerate(shape.as_list()):
                if dim is not None:
                    checks.append(_m.equal(actual[i], dim))
        ok = _m.reduce_all(_a.stack(checks)) if checks else convert_to_tensor(True)
        check = Assert(ok, [f"Shape of tensor {x.name} does not match {shape}: ", actual])
        with control_dependencies([check]):
            result = _a.identity(x)
        result.set_shape(shape)
        return result


def get_static_value(tensor, partial: bool = False):
    """The value of ``tensor`` as a numpy array when it is known without running the graph
    (constants and what folds from them), else None."""
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor)
    value = numpy_value_or_none(tensor)
    source = tensor.op.inputs[0] if tensor.op.type == "Shape" else None
    if value is None and source is not None and source.shape.is_fully_defined():
        value = np.asarray(source.shape.as_list(), tensor.dtype.as_numpy_dtype)
    return value


def is_tensor(x) -> bool:
    """Whether ``x`` is a graph tensor or a composite of them (SparseTensor, IndexedSlices)."""
    from ..framework.sparse_tensor import SparseTensor

    return isinstance(x, (Tensor, SparseTensor, IndexedSlices))


# -- the spec of an IndexedSlices value (its dense shape, as far as it is known statically) --------
def _dense_shape_of(value: IndexedSlices) -> Optional[TensorShape]:
    dense = value.dense_shape
    known = None if dense is None else get_static_value(dense)
    if known is not None:
        return TensorShape([int(d) for d in known])
    rest = value.values.shape[1:] if value.values.shape.ndims else None
    if rest is None:
        return TensorShape(None)
    return TensorShape([None]).concatenate(rest)


def _indexed_slices_spec(value: IndexedSlices) -> IndexedSlicesSpec:
    dense = value.dense_shape
    return IndexedSlicesSpec(
        _dense_shape_of(value),
        value.values.dtype,
        value.indices.dtype,
        None if dense is None else dense.dtype,
        value.indices.shape,
    )


register_spec_of(IndexedSlices, _indexed_slices_spec)

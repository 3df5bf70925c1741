"""Gathering, tiling and padding: ``GatherV2`` (with batch dimensions), ``Tile``,
``Pad``/``PadV2``/``MirrorPad``, with their gradients."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, graph_to_build_in
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import (
    convert_to_tensor,
    is_tensor_like,
    numpy_value_or_none,
)
from ..framework.tensor_shape import TensorShape
from .array_ops import _as_index_vector, _pyslice
from .math_ops import (
    INDEX_TYPES,
    check_dtype,
    check_same_dtype,
    normalize_axis,
    static_axis,
)
from .static_values import (
    constant_vector,
)


# -- gather, tile, pad -----------------------------------------------------------------------------
def _infer_gather(op):
    params, indices = op.inputs
    check_dtype(indices.dtype, INDEX_TYPES, "gather's indices")
    if params.shape.ndims is None or indices.shape.ndims is None:
        return [(params.dtype, TensorShape(None))]
    if params.shape.ndims == 0:
        raise ValueError("Cannot gather from a scalar")
    axis = normalize_axis(op.attrs["axis"], params.shape.ndims)
    dims = params.shape.as_list()
    return [(params.dtype, TensorShape(dims[:axis] + indices.shape.as_list() + dims[axis + 1 :]))]


def _gather_kernel(attrs):
    axis = attrs["axis"]

    def gather(params, indices):
        size = np.shape(params)[axis]
        if np.size(indices) and (indices.min() < 0 or indices.max() >= size):
            indices = np.asarray(indices)
            bad = indices[(indices < 0) | (indices >= size)].flat[0]
            raise InvalidArgumentError(
                None, None, f"gather index {bad} is not in [0, {size}) (axis {axis})"
            )
        return np.take(params, indices, axis=axis)

    return gather


define_op("GatherV2", _infer_gather, _gather_kernel)


def gather(
    params, indices, validate_indices=None, name: Optional[str] = None, axis=None, batch_dims=0
) -> Tensor:
    """The slices of ``params`` along ``axis`` (default 0) at ``indices``; the result's shape is
    ``params.shape[:axis] + indices.shape + params.shape[axis+1:]``.  Indices outside
    ``[0, params.shape[axis])`` are a run-time error (TensorFlow on CPU does the same)."""
    if batch_dims != 0:
        raise ValueError("gather supports only batch_dims=0")
    axis = static_axis(0 if axis is None else axis)
    if not isinstance(axis, int):
        raise TypeError(f"gather takes a single axis, got {axis!r}")
    params = convert_to_tensor(params)
    graph = graph_to_build_in(params.graph)
    with graph.as_default(), graph.name_scope(name or "GatherV2") as scope:
        indices = convert_to_tensor(indices, name="indices")
        return apply_op("GatherV2", (params, indices), {"axis": axis}, scope).outputs[0]


def _infer_tile(op):
    x, multiples = op.inputs
    check_dtype(multiples.dtype, INDEX_TYPES, "tile's multiples")
    reps = constant_vector(multiples)
    rank = x.shape.ndims
    if reps is None:
        return [(x.dtype, TensorShape(None if rank is None else [None] * rank))]
    if rank is not None and len(reps) != rank:
        raise ValueError(f"tile's multiples {reps} must have one entry per dimension of {x.shape}")
    if any(r is not None and r < 0 for r in reps):
        raise ValueError(f"tile's multiples must not be negative, got {reps}")
    dims = x.shape.as_list() if rank is not None else [None] * len(reps)
    out = [0 if r == 0 else None if d is None or r is None else d * r for d, r in zip(dims, reps)]
    return [(x.dtype, TensorShape(out))]


def _tile(x, multiples):
    if len(multiples) != np.ndim(x) or (multiples.size and multiples.min() < 0):
        raise InvalidArgumentError(
            None, None, f"tile's multiples {multiples.tolist()} do not fit shape {np.shape(x)}"
        )
    return np.tile(x, multiples.tolist())


define_op("Tile", _infer_tile, lambda attrs: _tile)


def tile(input, multiples, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """``input`` repeated ``multiples[i]`` times along each dimension ``i``."""
    input = convert_to_tensor(input)  # noqa: A001
    graph = graph_to_build_in(input.graph)
    with graph.as_default(), graph.name_scope(name or "Tile") as scope:
        multiples = _as_index_vector(multiples, "multiples")
        return apply_op("Tile", (input, multiples), None, scope).outputs[0]


def _check_paddings(x: Tensor, paddings, mode: str) -> TensorShape:
    rank = x.shape.ndims
    if rank is not None and len(paddings) != rank:
        raise ValueError(f"paddings must have one [before, after] pair per dimension of {x.shape}")
    if rank is None:
        return TensorShape([None] * len(paddings))
    out = []
    for i, ((before, after), d) in enumerate(zip(paddings, x.shape.as_list())):
        if before < 0 or after < 0:
            raise ValueError(f"paddings must not be negative, got {[list(p) for p in paddings]}")
        if d is not None and mode != "CONSTANT":
            limit = d - 1 if mode == "REFLECT" else d
            if before > limit or after > limit:
                raise ValueError(
                    f"{mode} padding of dimension {i} (size {d}) must be at most {limit}, "
                    f"got {[before, after]}"
                )
        out.append(None if d is None else d + before + after)
    return TensorShape(out)


def _infer_pad(op):
    x, constant_values = op.inputs
    check_same_dtype((x, constant_values), ("input", "constant_values"), op.type)
    if constant_values.shape.ndims not in (None, 0):
        raise ValueError(f"constant_values must be a scalar, got shape {constant_values.shape}")
    return [(x.dtype, _check_paddings(x, op.attrs["paddings"], "CONSTANT"))]


def _pad_kernel(attrs):
    paddings = attrs["paddings"]

    def pad(x, constant_values):
        shape = np.shape(x)
        if len(shape) != len(paddings):
            raise InvalidArgumentError(None, None, f"paddings do not fit shape {shape}")
        out_shape = [d + before + after for d, (before, after) in zip(shape, paddings)]
        out = np.full(out_shape, constant_values, dtype=x.dtype)
        out[tuple(_pyslice(b, b + d) for d, (b, _) in zip(shape, paddings))] = x
        return out

    return pad


define_op("PadV2", _infer_pad, _pad_kernel)


def _infer_mirror_pad(op):
    (x,) = op.inputs
    return [(x.dtype, _check_paddings(x, op.attrs["paddings"], op.attrs["mode"]))]


def _mirror_pad_kernel(attrs):
    paddings, mode = attrs["paddings"], attrs["mode"]
    np_mode = "reflect" if mode == "REFLECT" else "symmetric"
    offset = 1 if mode == "REFLECT" else 0

    def mirror_pad(x):
        shape = np.shape(x)
        if len(shape) != len(paddings) or any(max(p) > d - offset for d, p in zip(shape, paddings)):
            raise InvalidArgumentError(None, None, f"{mode} paddings {paddings} do not fit {shape}")
        return np.pad(x, paddings, mode=np_mode)

    return mirror_pad


define_op("MirrorPad", _infer_mirror_pad, _mirror_pad_kernel)


def pad(tensor, paddings, mode: str = "CONSTANT", name: Optional[str] = None, constant_values=0):
    """``tensor`` with ``paddings[i] = [before, after]`` elements added around dimension ``i``:
    ``constant_values`` (mode CONSTANT), a mirror image without the edge (REFLECT) or with it
    (SYMMETRIC).  ``paddings`` must be known when the graph is built."""
    tensor = convert_to_tensor(tensor)
    mode = str(mode).upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad's mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}")
    if isinstance(paddings, Tensor) or is_tensor_like(paddings):
        t = convert_to_tensor(paddings)
        paddings = numpy_value_or_none(t)
        if paddings is None:
            raise ValueError(f"paddings must be known when the graph is built; '{t.name}' is not")
    array = np.asarray(paddings)
    if array.size and (array.dtype.kind not in "iu" or array.ndim != 2 or array.shape[1] != 2):
        raise ValueError(f"paddings must be a list of [before, after] int pairs, got {paddings!r}")
    pairs = tuple((int(a), int(b)) for a, b in array.reshape(-1, 2))
    if any(a < 0 or b < 0 for a, b in pairs):
        raise ValueError(f"Paddings must be non-negative, got {paddings!r}")
    graph = graph_to_build_in(tensor.graph)
    if mode != "CONSTANT":
        attrs = {"paddings": pairs, "mode": mode}
        return apply_op("MirrorPad", (tensor,), attrs, name or "MirrorPad").outputs[0]
    # TensorFlow names the op after the kernel it picks: Pad for zeros, PadV2 otherwise.
    is_zero = not is_tensor_like(constant_values) and np.all(np.asarray(constant_values) == 0)
    with graph.as_default(), graph.name_scope(name or ("Pad" if is_zero else "PadV2")) as scope:
        if is_zero:
            # Any zero pads with the dtype's zero, False for a bool tensor: pad(bools, p) works.
            constant_values = np.zeros((), _dtypes.numpy_dtype(tensor.dtype))
        value = convert_to_tensor(constant_values, dtype=tensor.dtype, name="constant_values")
        return apply_op("PadV2", (tensor, value), {"paddings": pairs}, scope).outputs[0]


__all__ = [
    "gather",
    "pad",
    "tile",
]

"""``gather_nd`` and ``scatter_nd``: reading and writing a tensor at lists of multi-indices.

An index tensor of shape ``[..., K]`` holds multi-indices into the first ``K`` dimensions of a
tensor.  ``gather_nd(params, indices)`` reads the slices there (shape ``indices.shape[:-1] +
params.shape[K:]``); ``scatter_nd(indices, updates, shape)`` adds ``updates`` into zeros of
``shape`` there (indices named twice add up).  Each is the other's gradient.  An index outside
the tensor is a run-time error, as TensorFlow on CPU reports it.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..errors import InvalidArgumentError
from ..graph import Tensor, convert_to_tensor, numpy_value_or_none
from ..op_registry import apply_op, define_op
from ..tensor_shape import TensorShape
from .math_ops import INDEX_TYPES, check_dtype

__all__ = ["gather_nd", "scatter_nd"]


def _index_depth(indices: Tensor) -> Optional[int]:
    if indices.shape.ndims is None:
        return None
    if indices.shape.ndims == 0:
        raise ValueError("indices must have rank at least 1")
    return indices.shape[-1] if isinstance(indices.shape[-1], int) else None


def _checked_positions(indices: np.ndarray, shape: tuple, what: str) -> tuple:
    """The index arrays numpy needs for ``indices`` (shape ``[..., K]``) into ``shape``."""
    depth = indices.shape[-1]
    if depth > len(shape):
        raise InvalidArgumentError(
            None, None, f"index innermost dimension {depth} is larger than the rank {len(shape)}"
        )
    flat = indices.reshape(-1, depth)
    bounds = np.asarray(shape[:depth])
    bad = np.nonzero(np.any((flat < 0) | (flat >= bounds), axis=1))[0]
    if bad.size:
        i = int(bad[0])
        raise InvalidArgumentError(
            None,
            None,
            f"indices[{i}] = {flat[i].tolist()} does not index into {what} {list(shape)}",
        )
    return tuple(indices[..., k] for k in range(depth))


# -- gather_nd -------------------------------------------------------------------------------------
def _infer_gather_nd(op):
    params, indices = op.inputs
    check_dtype(indices.dtype, INDEX_TYPES, "gather_nd's indices")
    depth = _index_depth(indices)
    if depth is None or params.shape.ndims is None:
        return [(params.dtype, TensorShape(None))]
    if depth > params.shape.ndims:
        raise ValueError(
            f"indices.shape[-1] = {depth} must be <= the rank of params ({params.shape.ndims})"
        )
    return [(params.dtype, indices.shape[:-1].concatenate(params.shape[depth:]))]


def _gather_nd_kernel(attrs):
    def gather_nd(params, indices):
        return params[_checked_positions(np.asarray(indices), np.shape(params), "param shape")]

    return gather_nd


define_op("GatherNd", _infer_gather_nd, _gather_nd_kernel)


def gather_nd(params, indices, name: Optional[str] = None, batch_dims: int = 0) -> Tensor:
    """The slices of ``params`` at the multi-indices in the last dimension of ``indices``."""
    if batch_dims != 0:
        raise ValueError("gather_nd supports only batch_dims=0")
    params = convert_to_tensor(params, name="params")
    indices = convert_to_tensor(indices, name="indices")
    return apply_op("GatherNd", (params, indices), {}, name or "GatherNd").outputs[0]


# -- scatter_nd ------------------------------------------------------------------------------------
def _infer_scatter_nd(op):
    indices, updates, shape = op.inputs
    check_dtype(indices.dtype, INDEX_TYPES, "scatter_nd's indices")
    check_dtype(shape.dtype, INDEX_TYPES, "scatter_nd's shape")
    known = numpy_value_or_none(shape)
    out = TensorShape(None if known is None else [int(d) for d in known])
    depth = _index_depth(indices)
    if known is not None and depth is not None and updates.shape.ndims is not None:
        expected = indices.shape[:-1].concatenate(out[depth:])
        if not updates.shape.is_compatible_with(expected):
            raise ValueError(
                f"updates has shape {updates.shape}, but indices {indices.shape} into shape "
                f"{out} need {expected}"
            )
    return [(updates.dtype, out)]


def _scatter_nd_kernel(attrs):
    def scatter_nd(indices, updates, shape):
        shape = tuple(int(d) for d in np.asarray(shape))
        out = np.zeros(shape, dtype=np.asarray(updates).dtype)
        positions = _checked_positions(np.asarray(indices), shape, "shape")
        np.add.at(out, positions, updates)
        return out

    return scatter_nd


define_op("ScatterNd", _infer_scatter_nd, _scatter_nd_kernel)


def scatter_nd(indices, updates, shape, name: Optional[str] = None) -> Tensor:
    """Zeros of ``shape`` with ``updates`` added at the multi-indices in ``indices``."""
    inputs = (
        convert_to_tensor(indices, name="indices"),
        convert_to_tensor(updates, name="updates"),
        convert_to_tensor(shape, name="shape"),
    )
    return apply_op("ScatterNd", inputs, {}, name or "ScatterNd").outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..gradients import RegisterGradient  # noqa: E402
from .array_ops import shape as _shape  # noqa: E402


@RegisterGradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    return scatter_nd(indices, grad, _shape(params, out_type=indices.dtype)), None


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return None, gather_nd(grad, op.inputs[0]), None

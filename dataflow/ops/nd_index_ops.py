"""``gather_nd`` and ``scatter_nd``: reading and writing a tensor at lists of multi-indices.

An index tensor of shape ``[..., K]`` holds multi-indices into the first ``K`` dimensions of a
tensor.  ``gather_nd(params, indices)`` reads the slices there (shape ``indices.shape[:-1] +
params.shape[K:]``); ``scatter_nd(indices, updates, shape)`` adds ``updates`` into zeros of
``shape`` there (indices named twice add up).  Each is the other's gradient.  An index outside
the tensor is a run-time error, as TensorFlow on CPU reports it, unless ``bad_indices_policy``
is ``"IGNORE"``: then ``gather_nd`` reads zeros there and the scatters skip it.

``tensor_scatter_nd_{update,add,sub,min,max}`` write ``updates`` into a copy of ``tensor`` in
the same way (replacing, adding, subtracting, or keeping the smaller or larger value).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from .math_ops import INDEX_TYPES, check_dtype

__all__ = [
    "gather_nd",
    "scatter_nd",
    "tensor_scatter_add",
    "tensor_scatter_nd_add",
    "tensor_scatter_nd_max",
    "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update",
    "tensor_scatter_sub",
    "tensor_scatter_update",
]

_POLICIES = ("", "DEFAULT", "ERROR", "IGNORE")


def _check_policy(policy: str, op: str) -> str:
    if policy not in _POLICIES:
        raise ValueError(
            f"{op}: bad_indices_policy must be one of {', '.join(map(repr, _POLICIES))}, "
            f"got {policy!r}"
        )
    return policy


def _index_depth(indices: Tensor) -> Optional[int]:
    if indices.shape.ndims is None:
        return None
    if indices.shape.ndims == 0:
        raise ValueError("indices must have rank at least 1")
    return indices.shape[-1] if isinstance(indices.shape[-1], int) else None


def _bad_rows(indices: np.ndarray, shape: tuple) -> np.ndarray:
    """Which multi-indices of ``indices`` (shape ``[..., K]``) fall outside ``shape``."""
    depth = indices.shape[-1]
    if depth > len(shape):
        raise InvalidArgumentError(
            None, None, f"index innermost dimension {depth} is larger than the rank {len(shape)}"
        )
    return np.any((indices < 0) | (indices >= np.asarray(shape[:depth], dtype=np.int64)), axis=-1)


def _checked_positions(indices: np.ndarray, shape: tuple, what: str) -> tuple:
    """The index arrays numpy needs for ``indices`` (shape ``[..., K]``) into ``shape``."""
    depth = indices.shape[-1]
    flat = indices.reshape(-1, depth)
    bad = np.nonzero(_bad_rows(indices, shape).reshape(-1))[0]
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
    ignore = attrs.get("bad_indices_policy") == "IGNORE"

    def gather_nd(params, indices):
        params, indices = np.asarray(params), np.asarray(indices)
        if not ignore:
            return params[_checked_positions(indices, params.shape, "param shape")]
        bad = _bad_rows(indices, params.shape)
        safe = np.where(bad[..., None], 0, indices)
        if params.size == 0:
            out_shape = indices.shape[:-1] + params.shape[indices.shape[-1] :]
            return np.zeros(out_shape, dtype=params.dtype)
        out = params[tuple(safe[..., k] for k in range(indices.shape[-1]))]
        out[bad] = 0
        return out

    return gather_nd


define_op("GatherNd", _infer_gather_nd, _gather_nd_kernel)


def gather_nd(
    params,
    indices,
    name: Optional[str] = None,
    batch_dims: int = 0,
    bad_indices_policy: str = "",
) -> Tensor:
    """The slices of ``params`` at the multi-indices in the last dimension of ``indices``;
    with ``bad_indices_policy="IGNORE"`` a multi-index outside ``params`` reads zeros."""
    if batch_dims != 0:
        raise ValueError("gather_nd supports only batch_dims=0")
    attrs = {"bad_indices_policy": _check_policy(bad_indices_policy, "gather_nd")}
    params = convert_to_tensor(params, name="params")
    indices = convert_to_tensor(indices, name="indices")
    return apply_op("GatherNd", (params, indices), attrs, name or "GatherNd").outputs[0]


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


def _scatter_into(out: np.ndarray, indices, updates, combine, ignore: bool) -> np.ndarray:
    """Writes ``updates`` into ``out`` (in place) at ``indices`` with ``combine`` (a ufunc, or
    None to replace: the last of repeated indices wins, as TensorFlow on CPU)."""
    indices = np.asarray(indices)
    updates = np.asarray(updates, dtype=out.dtype)
    if ignore:
        keep = ~_bad_rows(indices, out.shape)
        indices, updates = indices[keep], updates[keep]
    positions = _checked_positions(indices, out.shape, "shape")
    if combine is None:
        out[positions] = updates
    else:
        combine.at(out, positions, updates)
    return out


def _scatter_nd_kernel(attrs):
    ignore = attrs.get("bad_indices_policy") == "IGNORE"

    def scatter_nd(indices, updates, shape):
        shape = tuple(int(d) for d in np.asarray(shape))
        out = np.zeros(shape, dtype=np.asarray(updates).dtype)
        return _scatter_into(out, indices, updates, np.add, ignore)

    return scatter_nd


define_op("ScatterNd", _infer_scatter_nd, _scatter_nd_kernel)


def scatter_nd(
    indices, updates, shape, bad_indices_policy: str = "", name: Optional[str] = None
) -> Tensor:
    """Zeros of ``shape`` with ``updates`` added at the multi-indices in ``indices``; with
    ``bad_indices_policy="IGNORE"`` updates at multi-indices outside ``shape`` are dropped."""
    attrs = {"bad_indices_policy": _check_policy(bad_indices_policy, "scatter_nd")}
    inputs = (
        convert_to_tensor(indices, name="indices"),
        convert_to_tensor(updates, name="updates"),
        convert_to_tensor(shape, name="shape"),
    )
    return apply_op("ScatterNd", inputs, attrs, name or "ScatterNd").outputs[0]


# -- tensor_scatter_nd_* ---------------------------------------------------------------------------
_TENSOR_SCATTERS = {
    "TensorScatterUpdate": None,
    "TensorScatterAdd": np.add,
    "TensorScatterSub": np.subtract,
    "TensorScatterMin": np.minimum,
    "TensorScatterMax": np.maximum,
}


def _infer_tensor_scatter(op):
    tensor, indices, updates = op.inputs
    check_dtype(indices.dtype, INDEX_TYPES, f"{op.type}'s indices")
    if updates.dtype != tensor.dtype:
        raise TypeError(
            f"updates has dtype {updates.dtype.name}, but tensor has dtype {tensor.dtype.name}"
        )
    depth = _index_depth(indices)
    shape = tensor.shape
    if depth is not None and shape.ndims is not None:
        if depth > shape.ndims:
            raise ValueError(
                f"indices.shape[-1] = {depth} must be <= the rank of tensor ({shape.ndims})"
            )
        if updates.shape.ndims is not None and indices.shape.ndims is not None:
            expected = indices.shape[:-1].concatenate(shape[depth:])
            if not updates.shape.is_compatible_with(expected):
                raise ValueError(
                    f"updates has shape {updates.shape}, but indices {indices.shape} into "
                    f"tensor {shape} need {expected}"
                )
    return [(tensor.dtype, shape)]


def _tensor_scatter_kernel(combine):
    def factory(attrs):
        ignore = attrs.get("bad_indices_policy") == "IGNORE"

        def tensor_scatter(tensor, indices, updates):
            out = np.array(tensor, copy=True)
            return _scatter_into(out, indices, updates, combine, ignore)

        return tensor_scatter

    return factory


for _type, _combine in _TENSOR_SCATTERS.items():
    define_op(_type, _infer_tensor_scatter, _tensor_scatter_kernel(_combine))


def _tensor_scatter(op_type, what, tensor, indices, updates, bad_indices_policy, name):
    attrs = {"bad_indices_policy": _check_policy(bad_indices_policy, what)}
    tensor = convert_to_tensor(tensor, name="tensor")
    inputs = (
        tensor,
        convert_to_tensor(indices, name="indices"),
        convert_to_tensor(updates, dtype=tensor.dtype, name="updates"),
    )
    return apply_op(op_type, inputs, attrs, name or op_type).outputs[0]


def tensor_scatter_nd_update(tensor, indices, updates, name: Optional[str] = None) -> Tensor:
    """A copy of ``tensor`` with the slices at ``indices`` replaced by ``updates`` (of repeated
    indices, the last update wins)."""
    return _tensor_scatter(
        "TensorScatterUpdate", "tensor_scatter_nd_update", tensor, indices, updates, "", name
    )


def tensor_scatter_nd_add(
    tensor, indices, updates, bad_indices_policy: str = "", name: Optional[str] = None
) -> Tensor:
    """A copy of ``tensor`` with ``updates`` added at ``indices`` (repeated indices add up)."""
    return _tensor_scatter(
        "TensorScatterAdd",
        "tensor_scatter_nd_add",
        tensor,
        indices,
        updates,
        bad_indices_policy,
        name,
    )


def tensor_scatter_nd_sub(
    tensor, indices, updates, bad_indices_policy: str = "", name: Optional[str] = None
) -> Tensor:
    """A copy of ``tensor`` with ``updates`` subtracted at ``indices``."""
    return _tensor_scatter(
        "TensorScatterSub",
        "tensor_scatter_nd_sub",
        tensor,
        indices,
        updates,
        bad_indices_policy,
        name,
    )


def tensor_scatter_nd_min(
    tensor, indices, updates, bad_indices_policy: str = "", name: Optional[str] = None
) -> Tensor:
    """A copy of ``tensor`` holding the smaller of it and ``updates`` at ``indices``."""
    return _tensor_scatter(
        "TensorScatterMin",
        "tensor_scatter_nd_min",
        tensor,
        indices,
        updates,
        bad_indices_policy,
        name,
    )


def tensor_scatter_nd_max(
    tensor, indices, updates, bad_indices_policy: str = "", name: Optional[str] = None
) -> Tensor:
    """A copy of ``tensor`` holding the larger of it and ``updates`` at ``indices``."""
    return _tensor_scatter(
        "TensorScatterMax",
        "tensor_scatter_nd_max",
        tensor,
        indices,
        updates,
        bad_indices_policy,
        name,
    )


# TF1's first spellings
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub
tensor_scatter_update = tensor_scatter_nd_update


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402
from .array_ops import shape as _shape  # noqa: E402


@RegisterGradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    return scatter_nd(indices, grad, _shape(params, out_type=indices.dtype)), None


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    return None, gather_nd(grad, op.inputs[0]), None


@RegisterGradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(op, grad):
    from .array_ops import zeros_like

    indices, updates = op.inputs[1], op.inputs[2]
    return (
        tensor_scatter_nd_update(grad, indices, zeros_like(updates)),
        None,
        gather_nd(grad, indices),
    )


@RegisterGradient("TensorScatterAdd")
def _tensor_scatter_add_grad(op, grad):
    return grad, None, gather_nd(grad, op.inputs[1])


@RegisterGradient("TensorScatterSub")
def _tensor_scatter_sub_grad(op, grad):
    from .math_ops import negative

    return grad, None, negative(gather_nd(grad, op.inputs[1]))


def _tensor_scatter_min_or_max_grad(op, grad):
    """As TensorFlow: the gradient is shared among the values equal to the result."""
    from .math_ops import cast, divide, equal, multiply

    x, indices, y = op.inputs
    output = op.outputs[0]
    x_indicators = cast(equal(x, output), grad.dtype)
    y_indicators = cast(equal(y, gather_nd(output, indices)), grad.dtype)
    ys_indicators = scatter_nd(indices, y_indicators, _shape(x, out_type=indices.dtype))
    indicators = x_indicators + ys_indicators
    x_grad = divide(multiply(grad, x_indicators), indicators)
    y_grad = multiply(gather_nd(divide(grad, indicators), indices), y_indicators)
    return x_grad, None, y_grad


RegisterGradient("TensorScatterMin")(_tensor_scatter_min_or_max_grad)
RegisterGradient("TensorScatterMax")(_tensor_scatter_min_or_max_grad)

"""Reversing tensors along dimensions: ``reverse`` (``ReverseV2``) and ``reverse_sequence``
(``ReverseSequence``, each batch entry reversed over its own length), as in tf.compat.v1.

Each op's gradient is the same reversal of the incoming gradient.  The bidirectional RNNs run
their backward direction on inputs reversed with them.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from .array_ops import known_int_value

__all__ = ["reverse", "reverse_sequence", "reverse_v2"]


def _infer_reverse(op):
    if len(op.inputs) != 2:
        raise ValueError(f"expects (tensor, axis), got {len(op.inputs)} inputs")
    tensor, axis = op.inputs
    if not axis.dtype.is_integer or axis.shape.ndims not in (None, 1):
        raise TypeError(f"axis must be a vector of integers, got {axis.dtype.name} {axis.shape}")
    rank = tensor.shape.ndims
    known = known_int_value(axis)
    if rank is not None and known is not None:
        for a in known.reshape(-1):
            if not -rank <= a < rank:
                raise ValueError(f"axis {int(a)} is out of range for a tensor of rank {rank}")
        normalized = [int(a) % rank for a in known.reshape(-1)]
        if len(set(normalized)) != len(normalized):
            raise ValueError(f"axis {known.tolist()} names a dimension twice")
    return [(tensor.dtype, tensor.shape)]


def _reverse_kernel(attrs):
    def reverse(x, axis):
        axes = [int(a) for a in np.asarray(axis).reshape(-1)]
        x = np.asarray(x)
        for a in axes:
            if not -x.ndim <= a < x.ndim:
                raise InvalidArgumentError(
                    None, None, f"axis {a} is out of range for a tensor of rank {x.ndim}"
                )
        return np.flip(x, axis=tuple(axes)).copy() if axes else x

    return reverse


define_op("ReverseV2", _infer_reverse, _reverse_kernel)


def reverse(tensor, axis, name: Optional[str] = None):
    """``tensor`` with the dimensions in ``axis`` (a list of ints) reversed."""
    with name_scope(name or "ReverseV2") as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        axis = convert_to_tensor(
            axis, dtype=None if hasattr(axis, "dtype") else _dtypes.int32, name="axis"
        )
        return apply_op("ReverseV2", [tensor, axis], name=scope).outputs[0]


reverse_v2 = reverse


def _infer_reverse_sequence(op):
    if len(op.inputs) != 2:
        raise ValueError(f"expects (input, seq_lengths), got {len(op.inputs)} inputs")
    x, lengths = op.inputs
    seq_axis, batch_axis = op.attrs.get("seq_dim"), op.attrs.get("batch_dim")
    if not isinstance(seq_axis, int) or not isinstance(batch_axis, int):
        raise TypeError("attrs seq_dim and batch_dim must be integers")
    if not lengths.dtype.is_integer or lengths.shape.ndims not in (None, 1):
        raise TypeError(
            f"seq_lengths must be a vector of integers, got {lengths.dtype.name} {lengths.shape}"
        )
    rank = x.shape.ndims
    if rank is not None:
        if not (0 <= seq_axis < rank and 0 <= batch_axis < rank) or seq_axis == batch_axis:
            raise ValueError(
                f"seq_axis {seq_axis} and batch_axis {batch_axis} must be two different "
                f"dimensions of the input, of rank {rank}"
            )
        if x.shape[batch_axis] is not None and lengths.shape.ndims == 1:
            if lengths.shape[0] not in (None, x.shape[batch_axis]):
                raise ValueError(
                    f"Length of seq_lengths != input.dims({batch_axis}), ({lengths.shape[0]} vs. "
                    f"{x.shape[batch_axis]})"
                )
    return [(x.dtype, x.shape)]


def _reverse_sequence_kernel(attrs):
    seq_axis, batch_axis = attrs["seq_dim"], attrs["batch_dim"]

    def reverse_sequence(x, lengths):
        x = np.asarray(x)
        lengths = np.asarray(lengths).reshape(-1)
        if len(lengths) != x.shape[batch_axis]:
            raise InvalidArgumentError(
                None,
                None,
                f"Length of seq_lengths != input.dims({batch_axis}), ({len(lengths)} vs. "
                f"{x.shape[batch_axis]})",
            )
        if (lengths < 0).any() or (lengths > x.shape[seq_axis]).any():
            raise InvalidArgumentError(
                None,
                None,
                f"seq_lengths must be in [0, {x.shape[seq_axis]}] (input.dims({seq_axis})), "
                f"got {lengths.tolist()}",
            )
        out = x.copy()
        for b, length in enumerate(lengths):
            index = [slice(None)] * x.ndim
            index[batch_axis] = b
            index[seq_axis] = slice(0, int(length))
            out[tuple(index)] = np.flip(x[tuple(index)], axis=seq_axis - (batch_axis < seq_axis))
        return out

    return reverse_sequence


define_op("ReverseSequence", _infer_reverse_sequence, _reverse_sequence_kernel)


def reverse_sequence(
    input,  # noqa: A002 - TensorFlow's name
    seq_lengths,
    seq_axis: Optional[int] = None,
    batch_axis: Optional[int] = None,
    name: Optional[str] = None,
    seq_dim: Optional[int] = None,
    batch_dim: Optional[int] = None,
):
    """``input`` with the first ``seq_lengths[b]`` entries along ``seq_axis`` reversed in each
    slice ``b`` along ``batch_axis`` (the rest stays in place).  ``seq_dim``/``batch_dim`` are
    TF1's older names of the two axes."""
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim or 0)
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis")
    with name_scope(name or "ReverseSequence") as scope:
        input = convert_to_tensor(input, name="input")  # noqa: A001
        seq_lengths = convert_to_tensor(seq_lengths, name="seq_lengths")
        rank = input.shape.ndims
        if rank is not None:
            seq_axis, batch_axis = seq_axis % rank, batch_axis % rank
        attrs = {"seq_dim": int(seq_axis), "batch_dim": int(batch_axis)}
        return apply_op("ReverseSequence", [input, seq_lengths], attrs, name=scope).outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402


@RegisterGradient("ReverseV2")
def _reverse_grad(op, grad):
    return [reverse(grad, op.inputs[1]), None]


@RegisterGradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    attrs = op.attrs
    return [
        reverse_sequence(
            grad, op.inputs[1], seq_axis=attrs["seq_dim"], batch_axis=attrs["batch_dim"]
        ),
        None,
    ]

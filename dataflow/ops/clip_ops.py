"""Clipping by norm, for gradients before an optimizer applies them: `clip_by_norm`,
`clip_by_average_norm`, `global_norm` and `clip_by_global_norm` (``clip_by_value`` is with
the elementwise math ops).

Each is built from other ops as TensorFlow builds it, so the numbers, the gradients and the op
names are TensorFlow's (``clip_by_norm:0``, ``global_norm/global_norm:0``).  In particular a
zero tensor clips to zero with a zero gradient (the norm's square root is never taken of 0),
and `clip_by_global_norm` turns every tensor into NaNs when the global norm is not finite, so
that a bad step shows instead of silently becoming a zero step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from .array_ops import identity, ones_like, rank, size, stack
from .array_ops import range as _range
from .math_ops import (
    cast,
    greater,
    maximum,
    minimum,
    reduce_sum,
    rsqrt,
    sqrt,
    where,
)
from .nn_impl import l2_loss

__all__ = ["clip_by_average_norm", "clip_by_global_norm", "clip_by_norm", "global_norm"]


def clip_by_norm(t, clip_norm, axes=None, name: Optional[str] = None) -> Tensor:
    """``t * clip_norm / max(l2norm(t), clip_norm)``: ``t`` unchanged when its l2 norm (over
    ``axes``, default all; one norm per remaining index) is at most ``clip_norm``, else scaled
    down to norm ``clip_norm``.  A negative ``clip_norm`` counts as 0."""
    with name_scope(name, "clip_by_norm", [t, clip_norm]) as scope:
        values = convert_to_tensor(t, name="t")
        if isinstance(clip_norm, (int, float)):
            clip_norm = max(clip_norm, 0)
        else:
            clip_norm = cast(maximum(clip_norm, 0), values.dtype)
        l2sum = reduce_sum(values * values, axes, keepdims=True)
        positive = greater(l2sum, 0)
        l2sum_safe = where(positive, l2sum, ones_like(l2sum))
        l2norm = where(positive, sqrt(l2sum_safe), l2sum)
        intermediate = values * clip_norm
        if not values.shape.is_compatible_with(intermediate.shape):
            raise ValueError(
                f"clip_by_norm '{scope[:-1]}' at {_user_location()}: clip_norm must be a "
                f"scalar, but t * clip_norm has shape {intermediate.shape}, not {values.shape}"
            )
        return identity(intermediate / maximum(l2norm, clip_norm), name=scope)


def _as_list(t_list) -> list:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError(f"t_list should be a sequence of tensors, got {type(t_list).__name__}")
    return list(t_list)


def _converted(t_list: list) -> list:
    return [
        None if t is None else convert_to_tensor(t, name=f"t_{i}") for i, t in enumerate(t_list)
    ]


def global_norm(t_list, name: Optional[str] = None) -> Tensor:
    """``sqrt(sum(l2norm(t) ** 2 for t in t_list))``, None entries left out: the l2 norm of
    all the tensors taken as one vector."""
    t_list = _as_list(t_list)
    with name_scope(name, "global_norm", [t for t in t_list if isinstance(t, Tensor)]):
        values = _converted(t_list)
        present = [v for v in values if v is not None]
        if not present:
            raise ValueError("global_norm needs at least one tensor that is not None")
        half_squared_norm = reduce_sum(stack([l2_loss(v) for v in present]))
        two = convert_to_tensor(2.0, dtype=half_squared_norm.dtype)
        return sqrt(half_squared_norm * two, name="global_norm")


def clip_by_global_norm(
    t_list, clip_norm, use_norm=None, name: Optional[str] = None
) -> tuple[list, Tensor]:
    """``([t * clip_norm / max(global_norm, clip_norm) for t in t_list], global_norm)``: the
    tensors scaled by one common factor so that their `global_norm` is at most ``clip_norm``
    (None entries stay None), and the norm before clipping.  ``use_norm`` gives the norm to
    use instead of computing it.  A norm that is inf or NaN makes every clipped tensor NaN."""
    t_list = _as_list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    use_norm = convert_to_tensor(use_norm)
    inputs = [t for t in t_list if isinstance(t, Tensor)] + [clip_norm]
    with name_scope(name, "clip_by_global_norm", inputs) as scope:
        one = convert_to_tensor(1.0, dtype=use_norm.dtype)
        scale_for_finite = clip_norm * minimum(1.0 / use_norm, one / clip_norm)
        # use_norm - use_norm is 0 for a finite norm and NaN for inf or NaN.
        scale = scale_for_finite + (use_norm - use_norm)
        values = _converted(t_list)
        clipped = [
            None if v is None else identity(v * cast(scale, v.dtype), name=f"{scope}_{i}")
            for i, v in enumerate(values)
        ]
    return clipped, use_norm


def clip_by_average_norm(t, clip_norm, name: Optional[str] = None) -> Tensor:
    """``t * clip_norm / max(l2norm(t) / size(t), clip_norm)``: `clip_by_norm` applied to the
    average l2 norm per element (deprecated in TensorFlow: ``clip_by_norm(t, clip_norm *
    size(t))`` is the same)."""
    with name_scope(name, "clip_by_average_norm", [t, clip_norm]) as scope:
        t = convert_to_tensor(t, name="t")
        n_element = cast(size(t), t.dtype if t.dtype.is_floating else _dtypes.float32)
        l2norm_inv = rsqrt(reduce_sum(t * t, _range(rank(t))))
        one = convert_to_tensor(1.0, dtype=n_element.dtype)
        return identity(
            t * clip_norm * minimum(l2norm_inv * n_element, one / clip_norm), name=scope
        )

"""``df.nn.experimental`` (``tf.compat.v1.nn.experimental``): dropout with a random source the
caller gives, or TensorFlow's stateless random numbers."""

from __future__ import annotations

import numbers
from typing import Optional

from ..framework.graph import Tensor, _user_location, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..ops import array_ops as _a
from ..ops import math_ops as _m
from ..ops.constant_op import constant

__all__ = ["general_dropout", "stateless_dropout"]


def _noise_shape(x: Tensor, noise_shape):
    """The shape of the mask: ``x``'s, or ``noise_shape`` with its None entries taken from
    ``x``; a list of ints when known, else a shape tensor."""
    if noise_shape is None:
        return x.shape.as_list() if x.shape.is_fully_defined() else _a.shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    dims = list(noise_shape)
    if x.shape.ndims is not None and len(dims) == x.shape.ndims:
        dims = [d if d is not None else x.shape.as_list()[i] for i, d in enumerate(dims)]
    if any(d is None for d in dims):
        raise ValueError(f"noise_shape {noise_shape} has unknown dimensions not known in x")
    return dims


def general_dropout(x, rate, uniform_sampler, noise_shape=None, name: Optional[str] = None):
    """``x`` with the elements where ``uniform_sampler(shape=..., dtype=x.dtype)`` (values in
    [0, 1)) is below ``rate`` zeroed and the others scaled by ``1 / (1 - rate)``; the sampler is
    called once per graph, with the mask's shape (``x``'s, or ``noise_shape`` broadcast
    against it).  A rate of 0 returns ``x``."""
    with name_scope(name, "general_dropout", [x]):
        is_number = isinstance(rate, numbers.Real)
        if is_number and (rate < 0 or rate >= 1):
            raise ValueError(
                f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: "
                f"rate={rate} (at {_user_location()})"
            )
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(
                f"`x.dtype` must be a floating point tensor as `x` will be scaled. Received: "
                f"x_dtype={x.dtype.name} (at {_user_location()})"
            )
        if is_number and rate == 0:
            return x
        if is_number:
            scaled = _m.multiply(x, constant(1 / (1 - rate), dtype=x.dtype))
        else:
            rate = convert_to_tensor(rate)
            if rate.shape.ndims not in (None, 0):
                raise ValueError(f"`rate` must be a scalar, got shape {rate.shape}")
            if rate.dtype is not x.dtype:
                rate = _m.cast(rate, x.dtype, name="rate")
            scaled = _m.realdiv(x, _m.subtract(constant(1, dtype=x.dtype), rate))
        random = uniform_sampler(shape=_noise_shape(x, noise_shape), dtype=x.dtype)
        keep = _m.greater_equal(random, rate)
        return _m.where_v2(keep, scaled, constant(0, dtype=x.dtype))


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name: Optional[str] = None):
    """`general_dropout` whose mask comes from ``stateless_random_uniform`` with ``seed`` (a
    shape-[2] int seed) and ``rng_alg``: the same seed gives the same mask, TensorFlow's own
    values (from ``ops/stateless_random_ops.py``)."""
    from ..ops.stateless_random_ops import stateless_uniform

    alg = "auto_select" if rng_alg is None else rng_alg

    def sampler(shape, dtype):
        return stateless_uniform(shape, seed=seed, dtype=dtype, alg=alg)

    with name_scope(name, "stateless_dropout", [x]) as scope:
        return general_dropout(x, rate, sampler, noise_shape, name=scope)

"""Learning-rate schedules (``tf.compat.v1.train.exponential_decay`` and the others): each
builds, from the global step, the graph ops that compute the decayed rate, and returns that
tensor, to be passed to an optimizer as its ``learning_rate``.

As in TensorFlow, the rate is computed in the dtype of ``learning_rate`` (float32 for a Python
number), the step is cast to that dtype, and each function opens a name scope named after the
schedule (``ExponentialDecay``), whose name the result takes.  The formulas, and so the numbers
to the last bit, are those of TensorFlow 2.x's ``tf.compat.v1.train`` (``natural_exp_decay`` is
an ``exponential_decay`` with rate ``exp(-decay_rate)``).  Nothing here is stateful: the step
is read wherever the returned tensor is evaluated, so a rate fetched in the same run as a
training step that increments the step sees the value from before the increment.
"""

from __future__ import annotations

import math
from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.math_ops import (
    add,
    cast,
    ceil,
    cos,
    divide,
    equal,
    exp,
    floor,
    greater,
    less_equal,
    log,
    logical_and,
    minimum,
    multiply,
    negative,
    sqrt,
    where_v2,
)
from ..ops.math_ops import pow as _pow

__all__ = [
    "cosine_decay",
    "cosine_decay_restarts",
    "exponential_decay",
    "inverse_time_decay",
    "linear_cosine_decay",
    "natural_exp_decay",
    "noisy_linear_cosine_decay",
    "piecewise_constant",
    "piecewise_constant_decay",
    "polynomial_decay",
]


def _require_step(global_step, schedule: str) -> None:
    if global_step is None:
        raise ValueError(f"global_step is required for {schedule} (at {_user_location()}).")


def _rate_and_step(learning_rate, global_step, *others):
    """``learning_rate`` as a tensor, then ``global_step`` and each of ``others`` cast to its
    dtype."""
    rate = convert_to_tensor(learning_rate, name="learning_rate")
    return (rate, *(cast(value, rate.dtype) for value in (global_step, *others)))


def exponential_decay(
    learning_rate,
    global_step,
    decay_steps,
    decay_rate,
    staircase: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """``learning_rate * decay_rate ** (global_step / decay_steps)``; with ``staircase`` the
    exponent is rounded down, so the rate drops by ``decay_rate`` every ``decay_steps``."""
    _require_step(global_step, "exponential_decay")
    with name_scope(name, "ExponentialDecay", [learning_rate, global_step]) as scope:
        rate, step, decay_steps, decay_rate = _rate_and_step(
            learning_rate, global_step, decay_steps, decay_rate
        )
        p = step / decay_steps
        if staircase:
            p = floor(p)
        return multiply(rate, _pow(decay_rate, p), name=scope)


def natural_exp_decay(
    learning_rate,
    global_step,
    decay_steps,
    decay_rate,
    staircase: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """``learning_rate * exp(-decay_rate * global_step / decay_steps)``, rounded down to
    whole ``decay_steps`` with ``staircase``."""
    _require_step(global_step, "natural_exp_decay")
    natural_rate = exp(negative(decay_rate))
    return exponential_decay(
        learning_rate, global_step, decay_steps, natural_rate, staircase=staircase, name=name
    )


def inverse_time_decay(
    learning_rate,
    global_step,
    decay_steps,
    decay_rate,
    staircase: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """``learning_rate / (1 + decay_rate * global_step / decay_steps)``, the ratio rounded
    down with ``staircase``."""
    _require_step(global_step, "inverse_time_decay")
    with name_scope(name, "InverseTimeDecay", [learning_rate, global_step]) as scope:
        rate, step, decay_steps, decay_rate = _rate_and_step(
            learning_rate, global_step, decay_steps, decay_rate
        )
        p = step / decay_steps
        if staircase:
            p = floor(p)
        denominator = add(cast(1, rate.dtype), multiply(decay_rate, p))
        return divide(rate, denominator, name=scope)


def polynomial_decay(
    learning_rate,
    global_step,
    decay_steps,
    end_learning_rate=0.0001,
    power=1.0,
    cycle: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """From ``learning_rate`` to ``end_learning_rate`` in ``decay_steps`` steps along
    ``(learning_rate - end_learning_rate) * (1 - step / decay_steps) ** power +
    end_learning_rate``, then ``end_learning_rate`` for ever; with ``cycle`` the decay starts
    again from a higher rate after each ``decay_steps`` (``decay_steps`` is taken times the
    first multiple that is past the step)."""
    _require_step(global_step, "polynomial_decay")
    with name_scope(name, "PolynomialDecay", [learning_rate, global_step]) as scope:
        rate, step, decay_steps_t, end_rate, power = _rate_and_step(
            learning_rate, global_step, decay_steps, end_learning_rate, power
        )
        if cycle:
            one = convert_to_tensor(1.0, dtype=rate.dtype)
            multiplier = where_v2(equal(step, 0), one, ceil(step / decay_steps_t))
            decay_steps_t = multiply(decay_steps_t, multiplier)
        else:
            step = minimum(step, decay_steps_t)
        p = divide(step, decay_steps_t)
        return add(multiply(rate - end_rate, _pow(1 - p, power)), end_rate, name=scope)


def cosine_decay(
    learning_rate, global_step, decay_steps, alpha=0.0, name: Optional[str] = None
) -> Tensor:
    """Half a cosine from ``learning_rate`` down to ``alpha * learning_rate`` over
    ``decay_steps`` steps (Loshchilov and Hutter's SGDR without restarts), then flat:
    ``learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) /
    decay_steps)) + alpha)``."""
    _require_step(global_step, "cosine_decay")
    with name_scope(name, "CosineDecay", [learning_rate, global_step]):
        rate, step, decay_steps_t = _rate_and_step(learning_rate, global_step, decay_steps)
        step = minimum(step, decay_steps_t)
        completed_fraction = step / decay_steps_t
        pi = convert_to_tensor(math.pi, dtype=rate.dtype)
        cosine_decayed = 0.5 * (1.0 + cos(pi * completed_fraction))
        decayed = (1 - alpha) * cosine_decayed + alpha
        return multiply(rate, decayed)


def cosine_decay_restarts(
    learning_rate,
    global_step,
    first_decay_steps,
    t_mul=2.0,
    m_mul=1.0,
    alpha=0.0,
    name: Optional[str] = None,
) -> Tensor:
    """`cosine_decay` restarted at the top each time a period ends (SGDR, Loshchilov and
    Hutter): the first period lasts ``first_decay_steps``, each next one ``t_mul`` times
    longer, and each restart starts ``m_mul`` times lower.  The period a step falls in is
    found by a `cond` on ``t_mul == 1`` (equal periods) or not (a geometric series)."""
    from primitives.control_flow_ops import cond

    _require_step(global_step, "cosine_decay_restarts")
    with name_scope(name, "SGDRDecay", [learning_rate, global_step]) as scope:
        rate, step, first_steps, alpha_t, t_mul_t, m_mul_t = _rate_and_step(
            learning_rate, global_step, first_decay_steps, alpha, t_mul, m_mul
        )
        completed_fraction = step / first_steps

        def equal_periods():
            restarts = floor(completed_fraction)
            return restarts, completed_fraction - restarts

        def growing_periods():
            restarts = floor(log(1.0 - completed_fraction * (1.0 - t_mul_t)) / log(t_mul_t))
            periods_before = (1.0 - _pow(t_mul_t, restarts)) / (1.0 - t_mul_t)
            return restarts, (completed_fraction - periods_before) / _pow(t_mul_t, restarts)

        restarts, fraction = cond(equal(t_mul_t, 1.0), equal_periods, growing_periods)
        pi = convert_to_tensor(math.pi, dtype=rate.dtype)
        cosine_decayed = 0.5 * _pow(m_mul_t, restarts) * (1.0 + cos(pi * fraction))
        decayed = (1 - alpha_t) * cosine_decayed + alpha_t
        return multiply(rate, decayed, name=scope)


def _linear_cosine(learning_rate, global_step, decay_steps, num_periods, noise, alpha, beta):
    """``learning_rate * ((alpha + linear + noise(step)) * cosine + beta)`` where ``linear``
    falls from 1 to 0 over ``decay_steps`` and ``cosine`` makes ``num_periods`` periods over
    them; both stay at their end value afterwards."""
    rate, step, decay_steps_t, num_periods_t, alpha_t, beta_t = _rate_and_step(
        learning_rate, global_step, decay_steps, num_periods, alpha, beta
    )
    step = minimum(step, decay_steps_t)
    linear_decayed = (decay_steps_t - step) / decay_steps_t
    if noise is not None:
        linear_decayed = linear_decayed + noise(step)
    fraction = 2.0 * num_periods_t * (step / decay_steps_t)
    pi = convert_to_tensor(math.pi, dtype=rate.dtype)
    cosine_decayed = 0.5 * (1.0 + cos(pi * fraction))
    return rate, (alpha_t + linear_decayed) * cosine_decayed + beta_t


def linear_cosine_decay(
    learning_rate,
    global_step,
    decay_steps,
    num_periods=0.5,
    alpha=0.0,
    beta=0.001,
    name: Optional[str] = None,
) -> Tensor:
    """A linear decay times a cosine of ``num_periods`` periods over ``decay_steps`` (Bello et
    al., "Neural Optimizer Search with Reinforcement Learning", 2017), see `_linear_cosine`."""
    _require_step(global_step, "linear_cosine_decay")
    with name_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as scope:
        rate, decayed = _linear_cosine(
            learning_rate, global_step, decay_steps, num_periods, None, alpha, beta
        )
        return multiply(rate, decayed, name=scope)


def noisy_linear_cosine_decay(
    learning_rate,
    global_step,
    decay_steps,
    initial_variance=1.0,
    variance_decay=0.55,
    num_periods=0.5,
    alpha=0.0,
    beta=0.001,
    name: Optional[str] = None,
) -> Tensor:
    """`linear_cosine_decay` with Gaussian noise added to the linear part, of variance
    ``initial_variance / (1 + step) ** variance_decay``: a new draw at every evaluation."""
    from ..ops.random_ops import random_normal

    _require_step(global_step, "noisy_linear_cosine_decay")
    with name_scope(name, "NoisyLinearCosineDecay", [learning_rate, global_step]) as scope:

        def noise(step):
            initial = cast(initial_variance, step.dtype)
            variance = initial / _pow(1.0 + step, cast(variance_decay, step.dtype))
            return random_normal([], stddev=sqrt(variance), dtype=step.dtype)

        rate, decayed = _linear_cosine(
            learning_rate, global_step, decay_steps, num_periods, noise, alpha, beta
        )
        return multiply(rate, decayed, name=scope)


def piecewise_constant(x, boundaries, values, name: Optional[str] = None) -> Tensor:
    """``values[0]`` while ``x <= boundaries[0]``, ``values[i]`` while ``boundaries[i-1] < x
    <= boundaries[i]``, and ``values[-1]`` past the last boundary: a `case` over the
    intervals.  The boundaries must have ``x``'s dtype (Python ints are promoted to an int64
    step) and the values one dtype; there is one boundary fewer than values."""
    if len(boundaries) != len(values) - 1:
        raise ValueError(
            "The length of boundaries should be 1 less than the length of values "
            f"(at {_user_location()})"
        )
    with name_scope(name, "PiecewiseConstant"):
        x = convert_to_tensor(x)
        boundaries = [convert_to_tensor(b) for b in boundaries]
        values = [convert_to_tensor(v) for v in values]
        for i, b in enumerate(boundaries):
            if b.dtype is not x.dtype:
                if b.dtype is _dtypes.int32 and x.dtype is _dtypes.int64:
                    boundaries[i] = cast(b, x.dtype)
                else:
                    raise ValueError(
                        f"Boundaries ({b.dtype.name}) must have the same dtype as x "
                        f"({x.dtype.name}) (at {_user_location()})."
                    )
        for v in values[1:]:
            if v.dtype is not values[0].dtype:
                raise ValueError(
                    "Values must have elements all with the same dtype "
                    f"({values[0].dtype.name} vs {v.dtype.name}) (at {_user_location()})."
                )
        from primitives.control_flow_ops import case

        pairs = [
            (less_equal(x, boundaries[0]), lambda: values[0]),
            (greater(x, boundaries[-1]), lambda: values[-1]),
        ]
        for low, high, v in zip(boundaries[:-1], boundaries[1:], values[1:-1]):
            inside = logical_and(greater(x, low), less_equal(x, high))
            pairs.append((inside, lambda v=v: v))
        return case(pairs, default=lambda: values[0], exclusive=True)


piecewise_constant_decay = piecewise_constant

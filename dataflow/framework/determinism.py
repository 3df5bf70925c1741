"""Whether op determinism was asked for (``df.config.experimental.enable_op_determinism``).

One process-wide flag, as TensorFlow's: the code that could otherwise give different results
for the same program and inputs reads it.  With it on:

- a random op needs a seed (the graph's or its own): `random_seed.get_seed` raises otherwise,
  as do making a ``Generator`` from the operating system's entropy and the global generator
  before one is set;
- ``sample_distorted_bounding_box`` and ``fractional_max_pool``/``fractional_avg_pool`` need
  their seeds (and the pools ``deterministic=True``), as in TensorFlow;
- a Session runs each step on one thread: with the inter-op pool, ops that finish at different
  times may reorder the stateful ops after them (two ``assign_add`` of one float variable give
  different sums in different orders); on one thread the executor fires ops depth first in
  program order, the same order every run.

Everything else is deterministic already: kernels are numpy's, which compute each result in a
fixed order; ops that split work among intra-op threads (`dataflow.passes.blocked_elementwise`)
give the bits of one thread; input pipelines (`dataflow.data`) keep their elements' order.

Layer: framework, so that every layer above may read the flag; the config sets it.
"""

from __future__ import annotations

__all__ = ["disable_op_determinism", "enable_op_determinism", "is_op_determinism_enabled"]

_enabled = False


def enable_op_determinism() -> None:
    """Turns op determinism on for the process (see the module docstring)."""
    global _enabled
    _enabled = True


def disable_op_determinism() -> None:
    """Turns op determinism off again (TensorFlow's internal ``disable_op_determinism``)."""
    global _enabled
    _enabled = False


def is_op_determinism_enabled() -> bool:
    return _enabled

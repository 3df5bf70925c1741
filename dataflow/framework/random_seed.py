"""The seeds of random ops: a graph-level seed and an op seed, combined as TensorFlow 1.x does.

Every random op carries two integer attributes, ``seed`` and ``seed2``, fixed when it is built
by `get_seed`:

- graph seed set, no op seed: ``(graph seed, n)`` where ``n`` counts the random ops of the graph
  that took a derived op seed before this one (0, 1, 2, ...), so two such ops differ and the
  same program builds the same seeds;
- op seed only: ``(DEFAULT_GRAPH_SEED, op seed)``;
- both: ``(graph seed, op seed)``;
- neither: ``(0, 0)``, which means "nondeterministic": each Session picks a fresh key for it.

Seeds are reduced modulo ``2**31 - 1`` and ``(0, 0)`` from two given zeros becomes
``(0, 2**31 - 1)``, so that explicit zeros stay deterministic.  This is the rule of
``tf.compat.v1.random.get_seed`` (TensorFlow 2's graph mode counts derived op seeds per graph;
TensorFlow 1.x used the graph's last op id instead, which depends on unrelated ops).

How a Session turns the two seeds into values is in `dataflow.client.random_streams`.
"""

from __future__ import annotations

from typing import Optional

from .determinism import is_op_determinism_enabled
from .graph import Graph, get_default_graph

__all__ = ["DEFAULT_GRAPH_SEED", "get_seed", "set_random_seed"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


def _truncate_seed(seed: int) -> int:
    return int(seed) % _MAXINT32


def _check_seed(seed, what: str) -> None:
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        try:
            seed = seed.__index__()
        except AttributeError:
            raise TypeError(f"{what} must be an integer or None, got {seed!r}") from None


def set_random_seed(seed: Optional[int]) -> None:
    """Sets the graph-level seed of the default graph (``Graph.seed``).

    It applies to random ops built after this call; ops built before keep their seeds.
    ``None`` turns it off again.
    """
    _check_seed(seed, "The graph-level seed")
    get_default_graph().seed = None if seed is None else int(seed)


def get_seed(op_seed: Optional[int], graph: Optional[Graph] = None) -> tuple:
    """The ``(seed, seed2)`` a random op built now in ``graph`` (the default graph) takes, given
    its op seed; ``(None, None)`` when neither seed is set.

    Deriving an op seed from the graph seed counts it, so call this once per random op.  With
    op determinism on (`dataflow.framework.determinism`), neither seed is a ``RuntimeError``.
    """
    _check_seed(op_seed, "The op seed")
    graph = get_default_graph() if graph is None else graph
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            with graph._lock:
                op_seed = graph._derived_op_seeds
                graph._derived_op_seeds += 1
        seeds = (_truncate_seed(graph_seed), _truncate_seed(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate_seed(op_seed))
    elif is_op_determinism_enabled():
        raise RuntimeError(
            "Random ops require a seed to be set when determinism is enabled. Please set a "
            "seed before running the op, e.g. by calling df.set_random_seed(1)."
        )
    else:
        return (None, None)
    if seeds == (0, 0):
        return (0, _MAXINT32)
    return seeds


def op_seed_attrs(op_seed: Optional[int], graph: Optional[Graph] = None) -> dict:
    """The ``seed`` and ``seed2`` attributes of a random op: `get_seed`'s pair, ``(0, 0)`` for
    "nondeterministic" as TensorFlow's ops record it."""
    seed, seed2 = get_seed(op_seed, graph)
    return {"seed": seed or 0, "seed2": seed2 or 0}

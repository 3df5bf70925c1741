"""``df.config.threading``: the threads of Sessions made without a ``config`` (0: one per
core), as ``ConfigProto``'s ``inter_op_parallelism_threads`` and
``intra_op_parallelism_threads``."""

from __future__ import annotations

from ._state import STATE

__all__ = [
    "get_inter_op_parallelism_threads",
    "get_intra_op_parallelism_threads",
    "set_inter_op_parallelism_threads",
    "set_intra_op_parallelism_threads",
]


def _count(num_threads, function: str) -> int:
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 0:
        raise ValueError(f"config.threading.{function}: num_threads must be an int >= 0")
    return num_threads


def get_inter_op_parallelism_threads() -> int:
    """Threads that run independent ops of a step at once (0: one per core)."""
    return STATE.inter_op_threads


def set_inter_op_parallelism_threads(num_threads) -> None:
    STATE.inter_op_threads = _count(num_threads, "set_inter_op_parallelism_threads")


def get_intra_op_parallelism_threads() -> int:
    """Threads one kernel may use (0: one per core)."""
    return STATE.intra_op_threads


def set_intra_op_parallelism_threads(num_threads) -> None:
    STATE.intra_op_threads = _count(num_threads, "set_intra_op_parallelism_threads")

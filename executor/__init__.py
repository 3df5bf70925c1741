"""``executor``: runs a lowered `Program` as the dataflow machine of docs/control-flow-semantics.md.

::

    plan = executor.prepare(program)          # static analysis, once per program
    values = plan.run(args, context=..., pool=..., deadline=..., stats=executor.RunStats(),
                      observer=...)

It imports nothing from ``dataflow`` or ``primitives``: any front end that lowers its computation
to `Node`s with kernels can use it.  `plan` holds the static analysis, `runner` the run-time
state machine (with `frames`, the frame instances and the firing of the control-flow
primitives, and `pool`, asynchronous kernels and the inter-op pool), `costs` the measured
kernel times that decide which kernels may leave the run's thread, `tables` what both read,
`stats` the optional per-run records, `observe` the optional hook that sees the
values nodes produce (for debuggers).

Layer: the lowest of all.  It imports nothing of `dataflow` or `primitives` (only the
standard library and numpy): the executor knows programs, nodes and frames, not graphs.
"""

from .cancellation import Cancellation
from .errors import (
    CycleError,
    DeadlineExceededError,
    ExecutorError,
    FetchNotLiveError,
    FrameMismatchError,
    InvalidProgramError,
    KernelError,
    RunCancelledError,
)
from .observe import RunObserver
from .plan import Plan, prepare
from .pool import completions_only_hand_over
from .program import Node, NodeKind, Program
from .stats import NodeRecord, OutputRecord, RunStats
from .tables import DEAD
from .threads import DaemonThreadPool

__all__ = [
    "Cancellation",
    "DEAD",
    "CycleError",
    "DaemonThreadPool",
    "completions_only_hand_over",
    "DeadlineExceededError",
    "ExecutorError",
    "FetchNotLiveError",
    "FrameMismatchError",
    "InvalidProgramError",
    "KernelError",
    "Node",
    "NodeKind",
    "NodeRecord",
    "OutputRecord",
    "Plan",
    "Program",
    "RunCancelledError",
    "RunObserver",
    "RunStats",
    "prepare",
]

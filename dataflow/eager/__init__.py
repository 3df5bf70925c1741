"""Eager execution: ops that run at once and return their values, on the same op table.

Role: in eager mode every op goes through its `OpDef` as in a graph, static inference first
(its errors name the op and the user's line) and then its kernel, but nothing is added to a
graph: the op returns `EagerTensor` values at once.  There is no second implementation of any
op, and the gradient table is the one `df.gradients` uses (`dataflow.eager.tape`).

The mode contract (`context`), which tracing and lazy modes rely on:

- ``executing_eagerly()`` is True iff eager mode is on for this thread (process-wide with
  `enable_eager_execution`, or inside ``with eager_mode():``) AND no other graph has been made
  the default with ``Graph.as_default()`` since it was turned on.  Eager mode makes its own
  `EagerGraph` the default graph; a tracer that enters a graph of its own with ``as_default()``
  therefore builds graph ops even inside eager mode, and eager mode is back when it leaves.
- The one hook is `op_registry.apply_op`: it asks the default graph for its ``_op_runner``;
  eager mode's graph answers with an `EagerOpRunner`, a graph being built answers None and the
  op is built as always.  Another mode plugs in by giving a graph of its own a runner with
  ``apply(op_def, inputs, attrs, name, control_inputs) -> object with .outputs`` and calling
  `op_registry.enable_op_runners()` first.
- The short way (`runner.run_planned`) only shortens that hook: an op that already ran with
  the same type, attrs, input dtypes and shapes goes straight to the kernel of the plan kept
  for it, and returns its output tensor with no `EagerOperation`.  It is taken by
  `EagerTensor`'s operators (`operators`) and by `op_registry.apply_op_output` (the functions
  of ops of one output), and only while eager mode's runner is the default graph's and no
  tape records; anything else (a first run, a tape, a trace, lazy mode, a failing kernel)
  goes through ``apply``.

Invariants: state that outlives an op (variable values, random streams, queues) lives in one
process-wide `EagerContext`; an `EagerTensor` keeps its value only, never the op that made it
or that op's inputs, so a long eager loop holds no history unless a tape records it.

Layer: eager, the front ends above the client (eager execution, `tape`, `tracing`,
`autograph`, `lazy`); they may import the client and everything below it, never io,
distribute, training or anything above.
"""

from . import operators as _operators  # noqa: F401 - attaches EagerTensor's operators
from .context import (
    EagerGraph,
    eager_mode,
    enable_eager_execution,
    executing_eagerly,
    graph_mode,
)
from .runner import EagerContext, EagerOpRunner, eager_context
from .tape import GradientTape
from .tensor import EagerTensor

__all__ = [
    "EagerContext",
    "EagerGraph",
    "EagerOpRunner",
    "EagerTensor",
    "GradientTape",
    "eager_context",
    "eager_mode",
    "enable_eager_execution",
    "executing_eagerly",
    "graph_mode",
]

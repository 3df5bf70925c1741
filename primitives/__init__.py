"""In-graph control flow for dataflow: the primitive ops and the cond/case/while_loop helpers.

- `raw_ops`: the ops ``Switch``, ``Merge``, ``Enter``, ``Exit``, ``NextIteration`` and
  ``LoopCond``, and builders to write loops and conds by hand.
- `control_flow_ops`: `cond`, `case` and `while_loop`, mirroring ``tf.compat.v1``.
- `switch_case`: `switch_case`, an integer-indexed choice built as a chain of conds.
- `auto_control_deps`: the rule that makes a traced function's side effects run in program
  order, which `cond` and `while_loop` apply to each branch and body while a ``df.function``
  is traced (``graph.automatic_control_dependencies``).
- `contexts`: the `CondContext`/`WhileContext` records the helpers leave in the graph, which
  rendering and autodiff read.
- `loop_gradients`: the backward loops `dataflow.autodiff.gradients` builds through `while_loop`.
- `control_flow_grad`: the gradients of the primitives, which call into `loop_gradients`.

``dataflow`` re-exports the builders and helpers (``df.cond``, ``df.while_loop``, ...).

Layer: primitives, above the framework and ops; it may import `executor`, the framework
and the op modules it uses, never the ``dataflow`` package root, autodiff (gradients
register themselves), the Session or anything above.
"""

from dataflow.framework import nest

# The backward loops of gradients; imported here because it registers the zeros that gradient
# functions use inside them (`dataflow.framework.gradient_registry.zeros_like_output`).
from . import control_flow_grad, loop_gradients  # noqa: F401
from .contexts import CondContext, ControlFlowContext, WhileContext, control_flow_context_of
from .control_flow_ops import case, cond, while_loop
from .raw_ops import (
    enter,
    exit,  # noqa: A004 - TensorFlow's name
    loop_cond,
    merge,
    next_iteration,
    set_merge_input,
    switch,
)
from .switch_case import switch_case

__all__ = [
    "CondContext",
    "ControlFlowContext",
    "WhileContext",
    "case",
    "cond",
    "control_flow_context_of",
    "enter",
    "exit",
    "loop_cond",
    "merge",
    "nest",
    "next_iteration",
    "set_merge_input",
    "switch",
    "switch_case",
    "while_loop",
]

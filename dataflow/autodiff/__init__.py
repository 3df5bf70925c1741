"""Reverse-mode differentiation of graphs: `gradients.gradients` (``df.gradients``),
``df.hessians`` and the aggregation of gradients that meet.

It walks a graph backwards from the targets, asks the gradient registry
(`dataflow.framework.gradient_registry`) for each op's gradient function, and builds the
backward graph with ordinary ops; for the control-flow primitives it builds backward loops and
conds (`primitives.loop_gradients`) as the contract in ``docs/control-flow-semantics.md``
requires.

Layer: autodiff, above the framework, the ops, `primitives` and `linalg`; it may import those
and `executor`, nothing above (no Session: a gradient is a graph, not a run).

Invariant: a gradient is made of the same ops as any other graph, so it is drawn, saved,
optimised and compiled like one; an op with no registered gradient is an error that names it.
"""

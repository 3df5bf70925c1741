"""Tracing Python functions into graphs: ``df.function``, concrete functions, ``Defun``.

``df.function(fn)`` is a front end that turns a Python function into the ordinary graph IR by
running it once per *signature* on symbolic tensors (a trace), as ``tf.function`` does:

- A `Function` maps each call to a signature key: the structure of the arguments, each tensor
  argument's dtype and shape, and each Python argument's value.  One `ConcreteFunction` (a
  traced `FuncGraph` with placeholders for the tensor arguments and the Python values baked in)
  is kept per key; a new key is a new trace.  ``input_signature`` fixes one key;
  ``experimental_relax_shapes`` traces a shape that changed with unknown dims instead, so that
  one trace serves every later shape.
- A trace applies automatic control dependencies: the stateful ops the function made at its
  top level (variable writes, prints, asserts) run in program order, and its outputs wait for
  them, as TensorFlow's do.  Ops inside a cond or loop keep v1 control flow's own order.
- Called while a graph is being built (TF1 graph mode: ``executing_eagerly()`` is False), the
  function's ops are added to the caller's graph at the call site, with the call's tensors as
  its inputs: the Python function is run on them there, under the caller's name scope,
  control dependencies and cond/loop context, so ``Session.run``, ``df.gradients``, ``cond`` and
  ``while_loop`` treat them as any other ops.  The signature cache still decides what counts as
  a trace (`Function.experimental_get_tracing_count`).  The function is built anew at each call
  site rather than copied from its `FuncGraph`, because a traced cond or loop would have to be
  re-nested inside the caller's cond or loop, which only building it there does exactly.

Invariants: a trace never runs an op; a `FuncGraph` is an ordinary `Graph` (passes, rendering
and ``df.io`` take it as it is); the Python function to trace is chosen in one place,
`Function._python_function_to_trace` (where AutoGraph's conversion plugs in).
"""

from ..tensor_spec import TensorSpec
from .legacy import Defun, wrap_function
from .tracing import ConcreteFunction, FuncGraph, Function, function

__all__ = [
    "ConcreteFunction",
    "Defun",
    "FuncGraph",
    "Function",
    "TensorSpec",
    "function",
    "wrap_function",
]

"""Tracing Python functions into graphs: ``df.function``, concrete functions, ``Defun``.

``df.function(fn)`` is a front end that turns a Python function into the ordinary graph IR by
running it once per *signature* on symbolic tensors (a trace), as ``tf.function`` does:

- A `Function` maps each call to a signature key: the structure of the arguments, each tensor
  argument's dtype and shape, and each Python argument's value.  One `ConcreteFunction` (a
  traced `FuncGraph` with placeholders for the tensor arguments and the Python values baked in)
  is kept per key; a new key is a new trace.  ``input_signature`` fixes one key;
  ``experimental_relax_shapes`` traces a shape that changed with unknown dims instead, so that
  one trace serves every later shape.  A higher layer may register a kind of argument that is
  keyed by a spec of its own and fed as a tensor (`tracing.register_traced_argument_kind`):
  ``df.data`` keys a `Dataset` by its element spec, so datasets alike share a trace.
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
  TF1's ``Defun`` is the exception, as in TensorFlow: its call is one ``PartitionedCall`` op
  that runs the traced graph, with the function's gradient as its own (`defun_call`).
- Called eagerly, the function reads and writes eager variables as TensorFlow does: a variable
  it uses is a captured resource of its graph (a ``VarHandleOp`` of the trace, not a constant),
  so each call reads the value of the moment and its assignments stay, and only when the call
  succeeds.  A variable made on the first trace is made eagerly and outlives the trace.
- Called eagerly under a `GradientTape`, a call is recorded as one op whose gradient is
  ``df.gradients`` of the trace, fed with the forward run's own values (`tape_calls`); under
  nested tapes that gradient is recorded as one op too, so gradients of any order flow.
- ``df.function(fn, experimental_graph_breaks=True)`` splits an eager call where a statement
  needs a tensor's value (TorchDynamo's graph breaks) and retraces a part when a Python value
  it baked in changes (guards); which statements break is said in `breaks`.

Invariants: a trace never runs an op (a variable made by a trace in eager mode is not the
trace's op: it is made at once, outside the graph); a `FuncGraph` is an ordinary `Graph`
(passes, rendering and ``df.io`` take it as it is); the Python function to trace is chosen in
one place, `Function._python_function_to_trace` (where AutoGraph's conversion plugs in).

Layer: eager (``dataflow.eager``); it may import the client and the layers below it.
"""

from ...framework.tensor_spec import TensorSpec
from .breaks import BreakingFunction, GraphBreak
from .legacy import Defun, wrap_function
from .tracing import ConcreteFunction, FuncGraph, Function, function

__all__ = [
    "BreakingFunction",
    "ConcreteFunction",
    "Defun",
    "FuncGraph",
    "Function",
    "GraphBreak",
    "TensorSpec",
    "function",
    "wrap_function",
]

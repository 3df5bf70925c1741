"""A ``Defun`` called in a graph: one ``PartitionedCall`` op that runs the function's graph.

TensorFlow 1 adds a ``Defun``'s body to the graph's function library and its call to the graph
as *one* op; the call's gradient is the gradient of the function, one op again, that takes the
call's inputs and the gradients of its outputs (TF1's ``SymbolicGradient``).  That is what
makes a call inside a differentiated ``while_loop`` cheap: the loop saves the call's inputs
per iteration, not every intermediate value of the body.  The same holds here:

- A `GraphFunction` is a `FuncGraph` with the tensors a call feeds (``inputs``: a placeholder
  per argument, then one per outer tensor the body captured) and fetches (``outputs``).  The
  ``PartitionedCall`` op (attribute ``f``, the `GraphFunction`) has the call's arguments and
  captured tensors as inputs; its kernel runs ``f``'s graph on their values through one
  cached plan, so a call inside ``cond`` or ``while_loop`` is an ordinary op to the executor.
- Its gradient is a ``PartitionedCall`` of ``f.gradient(needed)``: the same `FuncGraph`
  with a placeholder per needed output gradient added to the inputs, and ``df.gradients`` of
  the needed outputs with respect to the floating inputs as its outputs (built once per set of
  needed outputs).  Because the gradient lives in the same graph as the function, the
  gradient of a gradient call is built the same way, so higher orders compose.
- The function is traced once per graph that calls it (captures belong to that graph), with
  each argument of unknown shape as TF1's ``Defun`` declares it; outputs have the shapes the
  trace infers from that.

Invariant: the call op is pure.  A body that has effects or reads state (a variable, a random
op, a print, a queue) is not made a call op, because its kernel runs the function in a plan of
its own, which sees neither the calling Session's variables nor its order of effects: such a
``Defun`` is built inline at the call site, as ``df.function`` calls are, and its gradient is
its ops' own.  A graph holding a call op is refused by ``df.io`` with an error that says so,
as a TF1 graph function needs the function library the file format does not carry.
"""

from __future__ import annotations

import threading
import weakref
from typing import Optional

from ...framework import dtypes as _dtypes
from ...framework import nest
from ...framework.graph import Graph, Tensor, get_default_graph
from ...framework.op_registry import apply_op, define_op
from ...framework.tensor_shape import TensorShape
from .tracing import FuncGraph, Function, _CallerLocation, _executing_eagerly

__all__ = ["DefunFunction", "GraphFunction"]


def _differentiable(dtype) -> bool:
    return dtype.is_floating or dtype.is_complex


class GraphFunction:
    """What one ``PartitionedCall`` runs: ``outputs`` of ``graph`` computed from ``inputs``.

    ``gradient(needed)`` is the `GraphFunction` of the gradient for the outputs at positions
    ``needed``, with ``gradient_inputs`` saying which of this function's inputs each of its
    outputs is the gradient of.  The plan and the gradients are made on first use, under a
    lock (a call in a loop may run on several pool threads at once).
    """

    def __init__(self, name: str, graph: FuncGraph, inputs: list, outputs: list):
        self.name = name
        self.graph = graph
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.gradient_inputs: tuple[int, ...] = ()
        self._runner = None
        self._gradients: dict[tuple, GraphFunction] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        counts = f"{len(self.inputs)} inputs, {len(self.outputs)} outputs"
        return f"<GraphFunction {self.name}: {counts}>"

    def run(self, *values):
        """The outputs' values for ``values`` of the inputs (one array, or a tuple for several
        outputs, as kernels return them)."""
        runner = self._runner
        if runner is None:
            with self._lock:
                if self._runner is None:
                    from ...client.session import Session

                    session = Session(graph=self.graph)
                    self._runner = session.make_callable(self.outputs, feed_list=self.inputs)
                runner = self._runner
        results = runner(*values)
        return results[0] if len(self.outputs) == 1 else tuple(results)

    def gradient(self, needed: tuple) -> GraphFunction:
        """The gradient of the outputs at ``needed`` with respect to the floating inputs."""
        with self._lock:
            known = self._gradients.get(needed)
            if known is None:
                known = self._gradients[needed] = self._build_gradient(needed)
            return known

    def _build_gradient(self, needed: tuple) -> GraphFunction:
        from ...autodiff.gradients import gradients
        from ...framework.gradient_registry import dense_gradient as _dense
        from ...ops.constant_op import placeholder

        graph = self.graph
        sources = [i for i, t in enumerate(self.inputs) if _differentiable(t.dtype)]
        with graph.as_default(), graph.name_scope(None), graph.name_scope("gradients"):
            seeds = [
                placeholder(self.outputs[i].dtype, self.outputs[i].shape, name="grad_y")
                for i in needed
            ]
            found = gradients(
                [self.outputs[i] for i in needed],
                [self.inputs[i] for i in sources],
                grad_ys=seeds,
            )
        pairs = [(i, _dense(g)) for i, g in zip(sources, found) if g is not None]
        result = GraphFunction(
            f"{self.name}_grad", graph, self.inputs + seeds, [g for _, g in pairs]
        )
        result.gradient_inputs = tuple(i for i, _ in pairs)
        return result


# -- the op ----------------------------------------------------------------------------------------
def _infer_call(op):
    function = op.attrs.get("f")
    if not isinstance(function, GraphFunction):
        raise TypeError(f"attr f must be a GraphFunction, got {type(function).__name__}")
    if len(op.inputs) != len(function.inputs):
        raise ValueError(
            f"function '{function.name}' takes {len(function.inputs)} inputs, got {len(op.inputs)}"
        )
    for i, (given, declared) in enumerate(zip(op.inputs, function.inputs)):
        if given.dtype.base_dtype is not declared.dtype.base_dtype:
            raise TypeError(
                f"input {i} of function '{function.name}' must be {declared.dtype.name}, "
                f"got {given.dtype.name}"
            )
    return [(t.dtype, t.shape) for t in function.outputs]


def _call_kernel(attrs):
    return attrs["f"].run


define_op("PartitionedCall", _infer_call, _call_kernel)


def call(function: GraphFunction, inputs: list, name: Optional[str] = None) -> list:
    """Adds a ``PartitionedCall`` of ``function`` on ``inputs``; returns its outputs."""
    return apply_op("PartitionedCall", inputs, {"f": function}, name=name or function.name).outputs


def _call_grad(op, *output_gradients):
    """The call's gradient: one call of the function's gradient on the call's inputs and the
    gradients of the outputs that have one."""
    from ...framework.gradient_registry import dense_gradient as _dense

    function = op.attrs["f"]
    needed = tuple(i for i, g in enumerate(output_gradients) if g is not None)
    result: list = [None] * len(op.inputs)
    if not needed:
        return result
    backward = function.gradient(needed)
    if not backward.outputs:
        return result
    seeds = [_dense(output_gradients[i]) for i in needed]
    grads = call(backward, list(op.inputs) + seeds, name=op.name.split("/")[-1] + "_grad")
    for position, grad in zip(backward.gradient_inputs, grads):
        result[position] = grad
    return result


# -- Defun's graph-mode calls ----------------------------------------------------------------------
def _is_pure(graph: FuncGraph) -> bool:
    """Whether ``graph`` can run in a plan of its own (module docstring, "Invariant")."""
    if graph.eager_captures or graph.captured_variables or graph.control_captures:
        return False
    if any(t.dtype is _dtypes.resource for t in graph.captures):
        return False
    return not any(op.op_def.stateful for op in graph.get_operations())


class DefunFunction(Function):
    """What ``Defun`` returns: called while a graph is built, a ``PartitionedCall`` op (or,
    for a body with effects, the body built inline); called eagerly, as ``df.function``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The traced function per calling graph; None for one that is built inline.
        self._per_graph: weakref.WeakKeyDictionary[Graph, Optional[tuple]] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self, *args, **kwargs):
        if _executing_eagerly() or self.input_signature is None:
            return super().__call__(*args, **kwargs)
        location = _CallerLocation()
        arguments = self._canonical_arguments(args, kwargs, location)
        self._signature_for(arguments, location)  # a TypeError names a wrong argument
        graph = get_default_graph()
        if graph not in self._per_graph:
            self._per_graph[graph] = self._trace_for(graph)
        traced = self._per_graph[graph]
        if traced is None:
            return super().__call__(*args, **kwargs)
        function, structured = traced
        tensors = list(self._as_signature_tensors(arguments[0])) + list(function.graph.captures)
        outputs = iter(call(function, tensors))
        return nest.map_structure(
            lambda leaf: next(outputs) if isinstance(leaf, Tensor) else leaf, structured
        )

    def _trace_for(self, outer: Graph) -> Optional[tuple]:
        """Traces the body into a `FuncGraph` whose captures come from ``outer``: ``(function,
        structured outputs)``, or None when the body is not pure or returns no tensor."""
        from ...ops.constant_op import placeholder

        graph = FuncGraph(self._name, outer)
        with graph.as_default():
            for i, spec in enumerate(self.input_signature):
                graph.inputs.append(placeholder(spec.dtype, TensorShape(None), name=f"arg{i}"))
            structured = self._python_function_to_trace()(*graph.inputs)
        outputs = [t for t in nest.flatten(structured) if isinstance(t, Tensor)]
        if not outputs or not _is_pure(graph):
            return None
        inputs = graph.inputs + list(graph.captures.values())
        return GraphFunction(self._name, graph, inputs, outputs), structured


from ...framework.gradient_registry import RegisterGradient  # noqa: E402

RegisterGradient("PartitionedCall")(_call_grad)

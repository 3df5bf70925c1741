"""A df.function called eagerly under a `GradientTape`: the call is recorded as one op.

The recorded op (`FunctionCallOp`) has the call's tensors as inputs (the tensor arguments, the
captured eager tensors, the captured variables' handles) and its results as outputs.  Its
gradient is the trace's own: ``df.gradients`` of the outputs the tape needs, with respect to
the inputs, built once per concrete function and set of needed outputs (`Backward`) in the
trace's graph, under the name scope ``gradients``.

Exactness: a taped call also fetches the *saved tensors*, the values of the trace's top-level
tensors that its gradient ops read, and the backward run is fed those values, so it computes
with the very values of the forward run (a random op is not drawn again, a variable read sees
the value it saw).  A tensor inside a cond or loop cannot be fetched: what the gradient reads
there is computed again, from the saved values around it.  A variable the function reads is
watched by a tape that watches accessed variables, as TensorFlow's tapes do; the backward run
is a gradient of the function, so it changes no variable.

Higher order, as TensorFlow's function gradients: the saved values are outputs of the
recorded call too, and a backward run made while other tapes record (a gradient taken inside
an outer tape) is recorded on them as one op (`DerivativeCallOp`): a run of the trace's graph
from the call's inputs, the saved values and the output gradients to the input gradients.  Its
gradient is ``df.gradients`` of that run, holding the saved values as inputs of their own
(``stop_gradients``); what flows back to them reaches the call's inputs through the call's own
gradient.  So every order computes with the forward run's values, and is again one op.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Optional

import numpy as np

from ...framework import dtypes as _dtypes
from ...framework.graph import Tensor, _user_location
from ..runner import active_tapes
from ..tensor import EagerTensor


def _differentiable(dtype) -> bool:
    return _dtypes.as_dtype(dtype).is_floating or _dtypes.as_dtype(dtype).is_complex


class _CallOpDef:
    """What a tape asks of a recorded op's definition: its type, its gradient function and
    whether it reads a variable (no: the variables it reads are watched when it is recorded)."""

    type = "PartitionedCall"
    extra: dict = {}

    @staticmethod
    def gradient(op: FunctionCallOp, *output_gradients):
        return op.backward(output_gradients)


class FunctionCallOp:
    """One eager call of a concrete function, as a tape records it (see the module
    docstring): its outputs are the function's, then the saved values (as eager tensors), and
    ``saved`` holds those values as the backward run is fed them."""

    op_def = _op_def = _CallOpDef()
    type = _CallOpDef.type
    attrs = MappingProxyType({})  # no attributes, so no custom gradient of its own

    def __init__(self, concrete, inputs: list, outputs: list, feeds: list, saved: list):
        self._concrete = concrete
        self._inputs = inputs
        self._outputs = outputs
        self._feeds = feeds
        self._saved = saved
        self.name = concrete.name
        self.location = _user_location()

    def backward(self, output_gradients) -> list:
        """The gradients of the inputs, given one gradient (or None) per output."""
        needed = tuple(i for i, g in enumerate(output_gradients) if g is not None)
        if not needed:
            return [None] * len(self._inputs)
        concrete = self._concrete
        backward = _backward_for(concrete, needed)
        seeds = [np.asarray(output_gradients[i]) for i in needed]
        results = backward.run(self._feeds, self._saved, seeds)
        grads = [
            None if value is None else eager_result(value, _source_dtype(source))
            for value, source in zip(results, _sources(concrete))
        ]
        tapes = active_tapes()
        if tapes:
            saved = saved_tensors(concrete)
            run = _GraphRun(
                concrete,
                sources=_sources(concrete) + saved + backward.seeds,
                fed=concrete.inputs + saved + backward.seeds,
                results=backward.grads,
                held=saved,
            )
            saved_outputs = self._outputs[len(concrete.outputs) :]
            inputs = self._inputs + saved_outputs + [output_gradients[i] for i in needed]
            fed_values = self._feeds + self._saved + seeds
            _record(DerivativeCallOp(run, inputs, grads, fed_values), tapes)
        return grads


class _GraphRun:
    """A differentiable run of part of a trace's graph: ``results`` (tensors, or None)
    computed from ``sources``; ``fed`` are the tensors fed for a run (the other sources are
    captured variables' handles).  ``held`` are fed tensors of the forward computation that
    the run takes as given: its derivative does not differentiate through what computes them.
    Its derivative is another `_GraphRun`."""

    def __init__(self, concrete, sources: list, fed: list, results: list, held: list):
        self.concrete = concrete
        self.sources = sources
        self.fed = fed
        self.results = results
        self.held = held
        self._derivatives: dict[tuple, _GraphRun] = {}
        self._runner = None

    def derivative(self, needed: tuple) -> _GraphRun:
        """The run giving the sources' gradients from the sources and one gradient per
        ``results[i]`` for ``i`` in ``needed`` (new placeholders, fed after ``fed``)."""
        known = self._derivatives.get(needed)
        if known is not None:
            return known
        from ...autodiff.gradients import gradients
        from ...framework.gradient_registry import dense_gradient as _dense
        from ...ops.constant_op import placeholder

        graph = self.concrete.graph
        ys = [self.results[i] for i in needed]
        differentiable = [s for s in self.sources if _differentiable(_source_dtype(s))]
        with graph.as_default(), graph.name_scope(None):
            seeds = [placeholder(y.dtype, y.shape, name="grad_y") for y in ys]
            found = []
            if differentiable:
                found = gradients(
                    ys, differentiable, grad_ys=seeds, stop_gradients=self.held or None
                )
            by_source = {
                id(s): None if g is None else _dense(g) for s, g in zip(differentiable, found)
            }
        derivative = _GraphRun(
            self.concrete,
            sources=self.sources + seeds,
            fed=self.fed + seeds,
            results=[by_source.get(id(s)) for s in self.sources],
            held=self.held,
        )
        self._derivatives[needed] = derivative
        return derivative

    def run(self, fed_values: list) -> list:
        """The values of ``results`` (None where a result is None) for values of ``fed``."""
        fetched = [r for r in self.results if r is not None]
        if not fetched:
            return [None] * len(self.results)
        if self._runner is None:
            self._runner = self.concrete._session().make_callable(fetched, feed_list=self.fed)
        values = iter(self._runner(*fed_values))
        return [None if r is None else next(values) for r in self.results]


class DerivativeCallOp:
    """A backward run of a taped call, recorded on the tapes that were active while it ran
    (see the module docstring): ``inputs`` are the eager tensors standing for its run's
    sources, ``outputs`` the gradients it gave (None for a source that got none)."""

    op_def = _op_def = _CallOpDef()
    type = _CallOpDef.type
    attrs = MappingProxyType({})

    def __init__(self, run: _GraphRun, inputs: list, outputs: list, fed_values: list):
        self._run = run
        self._inputs = inputs
        self._outputs = [t for t in outputs if t is not None]
        self._given = [i for i, t in enumerate(outputs) if t is not None]
        self._fed_values = fed_values
        self.name = run.concrete.name + "/gradient"
        self.location = _user_location()

    def backward(self, output_gradients) -> list:
        """The gradients of the inputs, given one gradient (or None) per output."""
        by_result = dict(zip(self._given, output_gradients))
        needed = tuple(i for i in self._given if by_result[i] is not None)
        if not needed:
            return [None] * len(self._inputs)
        derivative = self._run.derivative(needed)
        seeds = [np.asarray(by_result[i]) for i in needed]
        fed_values = self._fed_values + seeds
        grads = [
            None if value is None else eager_result(value, _source_dtype(source))
            for value, source in zip(derivative.run(fed_values), derivative.sources)
        ]
        tapes = active_tapes()
        if tapes:
            inputs = self._inputs + [by_result[i] for i in needed]
            _record(DerivativeCallOp(derivative, inputs, grads, fed_values), tapes)
        return grads[: len(self._inputs)]


def _record(op, tapes: list) -> None:
    for tape in tapes:
        tape._record(op)


class Backward:
    """The gradient graph of one concrete function for one set of needed outputs, and the
    callable that runs it on the forward run's inputs, saved values and output gradients."""

    def __init__(self, concrete, needed: tuple):
        from ...autodiff.gradients import gradients
        from ...framework.gradient_registry import dense_gradient as _dense
        from ...ops.constant_op import placeholder

        graph = concrete.graph
        sources = _sources(concrete)
        differentiable = [s for s in sources if _differentiable(_source_dtype(s))]
        with graph.as_default(), graph.name_scope(None):
            ys = [_call_outputs(concrete, needed)[i] for i in needed]
            seeds = [placeholder(y.dtype, y.shape, name="grad_y") for y in ys]
            found = gradients(ys, differentiable, grad_ys=seeds) if differentiable else []
            by_source = {
                id(s): None if g is None else _dense(g) for s, g in zip(differentiable, found)
            }
        self.grads: list[Optional[Tensor]] = [by_source.get(id(s)) for s in sources]
        self._concrete = concrete
        self.seeds = seeds
        self._runner = None

    def run(self, feeds: list, saved: list, seeds: list) -> list:
        fetched = [g for g in self.grads if g is not None]
        if not fetched:
            return [None] * len(self.grads)
        if self._runner is None:
            concrete = self._concrete
            self._runner = concrete._session().make_callable(
                fetched, feed_list=concrete.inputs + saved_tensors(concrete) + self.seeds
            )
        values = iter(self._runner(*feeds, *saved, *seeds))
        return [None if g is None else next(values) for g in self.grads]


def _call_outputs(concrete, needed: tuple) -> list:
    """What a taped call's recorded outputs are in the trace: the outputs, then (when
    ``needed`` reaches past them) the saved tensors."""
    if max(needed) < len(concrete.outputs):
        return concrete.outputs
    return concrete.outputs + saved_tensors(concrete)


def _sources(concrete) -> list:
    """What the call op's inputs are in the trace: the inputs, then the captured handles."""
    return concrete.inputs + [inner for _, inner in concrete.graph.captured_variables.values()]


def _source_dtype(source: Tensor):
    if source.dtype is _dtypes.resource:
        return source.op.attrs["dtype"]
    return source.dtype


def _backward_for(concrete, needed: tuple) -> Backward:
    cache = concrete.__dict__.setdefault("_backwards", {})
    backward = cache.get(needed)
    if backward is None:
        backward = cache[needed] = Backward(concrete, needed)
    return backward


def saved_tensors(concrete) -> list:
    """The top-level tensors of the trace that the gradient of all its differentiable outputs
    reads, which a taped call fetches: fixed per concrete function (made once, with that
    gradient)."""
    known = concrete.__dict__.get("_saved_tensors")
    if known is not None:
        return known
    outputs = tuple(i for i, t in enumerate(concrete.outputs) if _differentiable(t.dtype))
    forward_ops = set(concrete.graph.get_operations())
    inputs = set(concrete.inputs)
    backward = _backward_for(concrete, outputs) if outputs else None
    saved: list = []
    if backward is not None:
        grad_ops = set(concrete.graph.get_operations()) - forward_ops
        seen: set = set()
        for op in concrete.graph.get_operations():
            if op not in grad_ops:
                continue
            for t in op.inputs:
                if (
                    t.op in forward_ops
                    and t not in seen
                    and t not in inputs
                    and t.op._control_flow_context is None
                    and t.dtype is not _dtypes.resource
                    and not t.op.op_def.feed_only
                ):
                    seen.add(t)
                    saved.append(t)
    concrete._saved_tensors = saved
    return saved


def taped_call(concrete, arguments: list, values: list, tapes: list):
    """Runs ``concrete`` on ``values`` (its ``inputs``' values) for a call whose tensor
    arguments are ``arguments``, records the call on ``tapes`` and returns the flat output
    values (the saved values are outputs of the recorded op only)."""
    saved = saved_tensors(concrete)
    results = concrete._run_with(values, saved)
    outputs = [eager_result(v, t.dtype) for v, t in zip(results, concrete.outputs)]
    saved_values = results[len(concrete.outputs) :]
    saved_outputs = [eager_result(v, t.dtype) for v, t in zip(saved_values, saved)]
    handles = [handle for handle, _ in concrete.graph.captured_variables.values()]
    eager_captured = [tensor for tensor, _ in concrete.graph.eager_captures.values()]
    op = FunctionCallOp(
        concrete,
        list(arguments) + eager_captured + handles,
        outputs + saved_outputs,
        values,
        saved_values,
    )
    for variable in concrete.captured_variables:
        if variable.trainable:
            for tape in tapes:
                if tape._watch_accessed_variables:
                    tape.watch(variable)
    for tape in tapes:
        tape._record(op)
    return outputs


def eager_result(value, dtype):
    """A run's result as an `EagerTensor` (which holds an array: a Session gives a numpy
    scalar for a 0-d result)."""
    return EagerTensor(value if value.__class__ is np.ndarray else np.asarray(value), dtype)

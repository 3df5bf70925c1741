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

Limits: the backward run is one graph run, not recorded on an outer tape, so a gradient through
a call cannot be differentiated again (nested tapes each get first-order gradients).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Optional

import numpy as np

from .. import dtypes as _dtypes
from ..graph import Tensor, _user_location


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
    docstring); ``saved`` holds the values of the forward run that the gradient reads."""

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
        from .tracing import eager_result

        needed = tuple(i for i, g in enumerate(output_gradients) if g is not None)
        if not needed:
            return [None] * len(self._inputs)
        backward = _backward_for(self._concrete, needed)
        seeds = [np.asarray(output_gradients[i]) for i in needed]
        results = backward.run(self._feeds, self._saved, seeds)
        return [
            None if value is None else eager_result(value, _source_dtype(source))
            for value, source in zip(results, _sources(self._concrete))
        ]


class Backward:
    """The gradient graph of one concrete function for one set of needed outputs, and the
    callable that runs it on the forward run's inputs, saved values and output gradients."""

    def __init__(self, concrete, needed: tuple):
        from ..gradients import _dense, gradients
        from ..ops.constant_op import placeholder

        graph = concrete.graph
        sources = _sources(concrete)
        differentiable = [s for s in sources if _differentiable(_source_dtype(s))]
        with graph.as_default(), graph.name_scope(None):
            seeds = [
                placeholder(concrete.outputs[i].dtype, concrete.outputs[i].shape, name="grad_y")
                for i in needed
            ]
            ys = [concrete.outputs[i] for i in needed]
            found = gradients(ys, differentiable, grad_ys=seeds) if differentiable else []
            by_source = {
                id(s): None if g is None else _dense(g) for s, g in zip(differentiable, found)
            }
        self.grads: list[Optional[Tensor]] = [by_source.get(id(s)) for s in sources]
        self._concrete = concrete
        self._seeds = seeds
        self._runner = None

    def run(self, feeds: list, saved: list, seeds: list) -> list:
        fetched = [g for g in self.grads if g is not None]
        if not fetched:
            return [None] * len(self.grads)
        if self._runner is None:
            concrete = self._concrete
            self._runner = concrete._session().make_callable(
                fetched, feed_list=concrete.inputs + saved_tensors(concrete) + self._seeds
            )
        values = iter(self._runner(*feeds, *saved, *seeds))
        return [None if g is None else next(values) for g in self.grads]


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
    values."""
    from .tracing import eager_result

    saved = saved_tensors(concrete)
    results = concrete._run_with(values, saved)
    outputs = [eager_result(v, t.dtype) for v, t in zip(results, concrete.outputs)]
    handles = [handle for handle, _ in concrete.graph.captured_variables.values()]
    eager_captured = [tensor for tensor, _ in concrete.graph.eager_captures.values()]
    op = FunctionCallOp(
        concrete,
        list(arguments) + eager_captured + handles,
        outputs,
        values,
        results[len(concrete.outputs) :],
    )
    for variable in concrete.captured_variables:
        if variable.trainable:
            for tape in tapes:
                if tape._watch_accessed_variables:
                    tape.watch(variable)
    for tape in tapes:
        tape._record(op)
    return outputs

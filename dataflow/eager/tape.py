"""`GradientTape`: reverse-mode autodiff of the ops run eagerly while the tape is active
(and, used while a graph is built, inside a ``df.function`` or in TF1 graph mode, of the ops
made while it records: see `graph_tape`).

A tape records each op whose inputs depend on a watched tensor (a variable read, or a tensor
given to `watch`), in the order the ops ran.  ``gradient`` walks that record backwards and calls
each op's registered gradient function (the table `df.gradients` uses), which runs eagerly.
The tape does not record its own backward ops, but every outer tape that is active does: so a
gradient computed under an outer tape can itself be differentiated (higher order).

As TensorFlow 2's tape, only values of a trainable dtype (floating, complex, and the
resource handles of variables) carry a dependence: an op is recorded only when one of its
inputs of such a dtype depends on a watched value.  So an integer (or bool) tensor gets no
gradient, whether it is watched (which logs a warning, as TensorFlow does) or computed on the
way from a watched float: ``gradient`` gives None for it (zeros with
``UnconnectedGradients.ZERO``).  A target that is itself a source is the one exception: its
gradient with respect to itself is ones of its dtype, for any dtype and for a variable too
(``tape.gradient(v, v)`` is 1.0 for a scalar ``v``).

Invariants: a tape keeps the ops it recorded, and through them their inputs and outputs, until
it is reset or dropped; a tensor is known to the tape by identity, and the recorded ops keep
every such tensor alive, so identities are never reused while the tape holds them.
"""

from __future__ import annotations

import contextlib

from ..autodiff.gradients import UnconnectedGradients
from ..framework import dtypes as _dtypes
from ..framework import logging as _logging
from ..framework import nest
from ..framework.gradient_registry import dense_gradient as _dense
from ..framework.gradient_registry import gradient_function
from ..framework.graph import Tensor, _user_location
from ..framework.indexed_slices import IndexedSlices
from ..ops.variables import _eager_variables as _variables_by_handle
from .graph_tape import GraphRecord, building_a_graph, is_graph_value
from .runner import active_tapes
from .tensor import EagerTensor

# The dtypes a tape differentiates through (TensorFlow's ``backprop_util.IsTrainable``, less
# bfloat16, which dataflow has not).
_TRAINABLE_DTYPES = frozenset(
    (
        _dtypes.float16,
        _dtypes.float32,
        _dtypes.float64,
        _dtypes.complex64,
        _dtypes.complex128,
        _dtypes.resource,
        _dtypes.variant,
    )
)


def _handle_of(value) -> Tensor:
    """The tensor a tape tracks for ``value``: a variable's handle, or the tensor itself."""
    from ..ops.variables import Variable

    if isinstance(value, Variable):
        return value.handle
    if isinstance(value, EagerTensor) or (isinstance(value, Tensor) and value._is_eager):
        return value  # an eager tensor, or a lazy one (`dataflow.eager.lazy`)
    raise TypeError(
        f"A GradientTape watches eager tensors and variables, got {value!r:.80} "
        f"({_user_location()})"
    )


class GradientTape:
    """Records eager ops for differentiation (``tf.GradientTape``).

    ``persistent=False`` allows one `gradient` (or `jacobian`) call; ``True`` allows many.
    ``watch_accessed_variables=True`` watches every trainable variable read while recording.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._recording = False
        self._used = False
        self.reset()

    # -- recording ------------------------------------------------------------------------------
    def __enter__(self) -> GradientTape:
        if self._recording:
            raise ValueError("The tape is already recording; a tape cannot be entered twice.")
        self._push()
        return self

    def __exit__(self, *exc) -> None:
        if self._recording:
            self._pop()

    def _push(self) -> None:
        active_tapes().append(self)
        self._recording = True
        if building_a_graph():
            self._graph_record.start()

    def _pop(self) -> None:
        active_tapes().remove(self)
        self._recording = False
        self._graph_record.stop()

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops run inside are not recorded on this tape."""
        if not self._recording:
            raise ValueError("Tape must be recording to stop recording.")
        self._pop()
        try:
            yield
        finally:
            self._push()

    def reset(self) -> None:
        """Forgets every op and watched tensor, as a new tape."""
        self._ops: list = []
        self._tracked: dict[int, Tensor] = {}  # id -> a tensor that depends on a watched one
        self._watched: dict[int, Tensor] = {}
        self._graph_record = GraphRecord()  # what it saw while a graph was built (`graph_tape`)

    def watch(self, tensor) -> None:
        """Makes the tape record the ops that depend on ``tensor`` (tensors or variables,
        possibly nested)."""
        for value in nest.flatten(tensor):
            if is_graph_value(value) or building_a_graph():
                self._graph_record.watch(value)
                continue
            handle = _handle_of(value)
            if value.dtype.base_dtype not in _TRAINABLE_DTYPES:
                _warn_untrainable_watch(value.dtype)
            self._watched[id(handle)] = handle
            self._tracked[id(handle)] = handle

    def watched_variables(self) -> tuple:
        """The variables the tape watched, in the order it first watched them."""
        found = (_variables_by_handle.get(key) for key in self._watched)
        eager = [v for v in found if v is not None]
        record = self._graph_record
        if not record.ops and not record.watched_variables:
            return tuple(eager)
        from ..framework.graph import get_default_graph

        graph_side = list(record.watched_variables.values())
        if self._watch_accessed_variables:
            graph_side += record.accessed_variables(get_default_graph())
        unique = {id(v): v for v in eager + graph_side}
        return tuple(unique.values())

    def _record(self, op) -> None:
        """Called by the eager runner for each op run while this tape is recording."""
        tracked = self._tracked
        inputs = op._inputs
        if (
            self._watch_accessed_variables
            and op._op_def.extra.get("reads_variable")
            and id(inputs[0]) not in tracked
        ):
            variable = _variables_by_handle.get(id(inputs[0]))
            if variable is not None and variable.trainable:
                self._watched[id(inputs[0])] = inputs[0]
                tracked[id(inputs[0])] = inputs[0]
        if any(id(t) in tracked and t.dtype in _TRAINABLE_DTYPES for t in inputs):
            self._ops.append(op)
            for t in op._outputs:
                tracked[id(t)] = t

    # -- differentiation ------------------------------------------------------------------------
    def gradient(
        self,
        target,
        sources,
        output_gradients=None,
        unconnected_gradients=UnconnectedGradients.NONE,
    ):
        """d(sum of ``target``)/d``sources``, in the structure of ``sources`` (tensors or
        variables); ``output_gradients`` weighs each target.  A source no recorded op connects
        to the target gets None, or zeros with ``UnconnectedGradients.ZERO``."""
        if self._used and not self._persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of "
                "gradients (or jacobians)"
            )
        self._used = True
        unconnected_gradients = UnconnectedGradients(unconnected_gradients)
        if any(is_graph_value(t) for t in nest.flatten(target)):
            return self._graph_record.gradient(
                target,
                sources,
                output_gradients,
                unconnected_gradients,
                self._watch_accessed_variables,
            )
        flat_targets = nest.flatten(target)
        targets = [_handle_of(t) for t in flat_targets]
        flat_sources = nest.flatten(sources)
        handles = [_handle_of(s) for s in flat_sources]
        if output_gradients is None:
            seeds = [None] * len(targets)
        else:
            seeds = nest.flatten(output_gradients)
        recording = self._recording
        if recording:
            self._pop()  # the backward ops are not this tape's to record (outer tapes record them)
        try:
            seeds = [_ones_for(t) if s is None else s for t, s in zip(flat_targets, seeds)]
            grads = self._backprop(targets, seeds, {id(h) for h in handles})
            results = []
            for source, handle in zip(flat_sources, handles):
                grad = grads.get(id(handle))
                if grad is None and unconnected_gradients is UnconnectedGradients.ZERO:
                    from ..ops.array_ops import zeros_like

                    grad = zeros_like(source)
                results.append(grad)
        finally:
            if recording:
                self._push()
        if not self._persistent:  # the record is of no more use: let its tensors go
            self._ops, self._tracked = [], {}
        return nest.pack_sequence_as(sources, results)

    def _backprop(self, targets: list, seeds: list, wanted: set) -> dict:
        pending: dict[int, list] = {}
        for t, seed in zip(targets, seeds):
            pending.setdefault(id(t), []).append(seed)
        for op in reversed(self._ops):
            out_grads = [pending.get(id(t)) for t in op._outputs]
            if all(g is None for g in out_grads):
                continue
            for t in op._outputs:
                if id(t) not in wanted:
                    pending.pop(id(t), None)
            out_grads = [None if g is None else _aggregate(g) for g in out_grads]
            for t, g in zip(op._inputs, _call_eagerly(op, out_grads)):
                if g is not None:
                    pending.setdefault(id(t), []).append(g)
        return {key: _aggregate(grads) for key, grads in pending.items() if key in wanted}

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE):
        """d``target``[i...]/d``sources``: one gradient per element of ``target``, stacked,
        shaped ``target.shape + source.shape``."""
        from ..ops.array_ops import reshape, stack, zeros_like
        from ..ops.math_ops import cast

        flat_target = reshape(target, [-1])
        flat_sources = nest.flatten(sources)
        rows: list = [[] for _ in flat_sources]
        connected = [False] * len(flat_sources)
        persistent, self._persistent = self._persistent, True
        try:
            for i in range(int(flat_target.shape[0])):
                seed = [0.0] * int(flat_target.shape[0])
                seed[i] = 1.0
                seeds = reshape(cast(seed, target.dtype), target.shape)
                grads = self.gradient(target, flat_sources, seeds, unconnected_gradients)
                for k, (row, g, s) in enumerate(zip(rows, grads, flat_sources)):
                    connected[k] = connected[k] or g is not None
                    row.append(zeros_like(s) if g is None else _dense(g))
        finally:
            self._persistent = persistent
        results = []
        for row, source, linked in zip(rows, flat_sources, connected):
            if not row or not linked:  # unconnected (with UnconnectedGradients.ZERO it is not)
                results.append(None)
                continue
            stacked = stack(row)
            results.append(reshape(stacked, target.shape.concatenate(source.shape)))
        return nest.pack_sequence_as(sources, results)


# How many times the watch of a value that gets no gradient was warned about, per line of user
# code: TensorFlow warns the first five times each line does it.
_untrainable_watch_warnings: dict = {}


def _warn_untrainable_watch(dtype) -> None:
    where = _user_location()
    where = (where.filename, where.lineno)
    count = _untrainable_watch_warnings.get(where, 0)
    if count < 5:
        _untrainable_watch_warnings[where] = count + 1
        _logging.warning(
            "The dtype of the watched tensor must be floating (e.g. df.float32), got %r", dtype
        )


def _ones_for(target):
    """The default weight of ``target`` in a gradient: ones of its shape and dtype (a
    variable's too, without reading it)."""
    from ..ops.array_ops import ones, ones_like
    from ..ops.variables import Variable

    if isinstance(target, Variable):
        return ones(target.shape, target.dtype)
    return ones_like(target)


def _aggregate(grads: list):
    """The sum of the gradients sent to one tensor, as `df.gradients` sums them: IndexedSlices
    stay IndexedSlices when all are, a mix is summed dense."""
    from ..ops.array_ops import concat
    from ..ops.math_ops import add_n

    if len(grads) == 1:
        return grads[0]
    if all(isinstance(g, IndexedSlices) for g in grads):
        values = concat([g.values for g in grads], 0)
        return IndexedSlices(values, concat([g.indices for g in grads], 0), grads[0].dense_shape)
    return add_n([_dense(g) for g in grads])


def _call_eagerly(op, out_grads: list) -> list:
    """The gradients of ``op``'s inputs from its registered gradient function."""
    grad_fn = gradient_function(op)
    if grad_fn is None:
        raise LookupError(
            f"No gradient defined for operation '{op.name}' (op type: {op.type}), run at "
            f"{op.location}. Register one with @df.RegisterGradient('{op.type}'), or declare it "
            f"with df.NotDifferentiable('{op.type}')."
        )
    if not op._op_def.extra.get("passes_sparse_gradients"):
        out_grads = [_dense(g) for g in out_grads]
    result = grad_fn(op, *out_grads)
    if isinstance(result, (Tensor, IndexedSlices)) or result is None:
        return [result]
    return list(result)

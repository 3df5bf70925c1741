"""A `GradientTape` used while a graph is built: inside a ``df.function`` trace, or in TF1
graph mode.

There no op runs, so nothing is recorded as it runs: the tape remembers which ops were made
while it was recording (between ``__enter__`` and ``__exit__``, minus ``stop_recording``
blocks), which tensors it was told to watch, and which variables those ops read.
``gradient`` is then `df.gradients` of the target with respect to the sources the tape can
see, in the graph itself, so the backward pass is part of the traced function (one graph run
per training step), exactly as TensorFlow 2 builds it inside a ``tf.function``.

What the tape can see, as in TensorFlow: a variable it watched, or a trainable variable read
by a recorded op (``watch_accessed_variables``); a tensor it watched; a tensor a recorded op
made.  Any other source, and a source of an integer dtype, gets None (or zeros with
``UnconnectedGradients.ZERO``).

Layer: eager (``dataflow.eager``); it imports autodiff and the layers below.
"""

from __future__ import annotations

from ..autodiff.gradients import UnconnectedGradients, gradients
from ..framework import nest
from ..framework.graph import Graph, Operation, Tensor, get_default_graph
from ..framework.graph_keys import GraphKeys


def is_graph_value(value) -> bool:
    """Whether ``value`` is a tensor of a graph being built (not an eager or lazy tensor)."""
    return isinstance(value, Tensor) and not value._is_eager


def building_a_graph() -> bool:
    """Whether ops made now go into a graph rather than run (a trace, or TF1 graph mode):
    the default graph neither runs them (eager mode) nor records them to run (lazy mode)."""
    graph = get_default_graph()
    return not graph._eager and graph._op_runner is None


class GraphRecord:
    """What one tape saw while a graph was built: its recorded ops and watched values."""

    def __init__(self):
        self.ops: list[Operation] = []
        self.watched_tensors: dict[int, Tensor] = {}
        self.watched_variables: dict[int, object] = {}
        self._open: tuple = ()  # (graph, the graph's last op when recording began)

    def start(self) -> None:
        graph = get_default_graph()
        self._open = (graph, graph.last_operation())

    def stop(self) -> None:
        if self._open:
            graph, mark = self._open
            self.ops.extend(graph.operations_after(mark))
            self._open = ()

    def recorded_ops(self) -> list[Operation]:
        """The ops made while recording, including those of a recording still open."""
        if not self._open:
            return self.ops
        graph, mark = self._open
        return self.ops + graph.operations_after(mark)

    def watch(self, value) -> None:
        if _is_variable(value):
            self.watched_variables[id(value)] = value
        else:
            self.watched_tensors[id(value)] = value

    def accessed_variables(self, graph: Graph, trainable_only: bool = True) -> list:
        """The variables whose handles the recorded ops read, in the order first read."""
        by_handle = _variables_by_graph_handle(graph)
        found: dict[int, object] = {}
        for op in self.recorded_ops():
            for t in op.inputs:
                variable = by_handle.get(id(t))
                if variable is not None and (variable.trainable or not trainable_only):
                    found.setdefault(id(variable), variable)
        return list(found.values())

    def gradient(
        self,
        target,
        sources,
        output_gradients,
        unconnected_gradients: UnconnectedGradients,
        watch_accessed_variables: bool,
    ):
        """``df.gradients`` of ``target`` for the sources this record can see (see the module
        docstring), in the structure of ``sources``."""
        graph = get_default_graph()
        targets = [t for t in nest.flatten(target)]
        flat_sources = nest.flatten(sources)
        visible = self._visible(graph, watch_accessed_variables)
        differentiable = [s for s in flat_sources if _differentiable(s) and _sees(visible, s)]
        seeds = None if output_gradients is None else nest.flatten(output_gradients)
        found = {}
        if differentiable:
            results = gradients(
                targets,
                differentiable,
                grad_ys=seeds,
                stop_gradients=self._unrecorded_inputs(differentiable),
                unconnected_gradients=unconnected_gradients,
            )
            found = {id(s): g for s, g in zip(differentiable, results)}
        grads = []
        for source in flat_sources:
            grad = found.get(id(source))
            if grad is None and unconnected_gradients is UnconnectedGradients.ZERO:
                from ..ops.array_ops import zeros_like

                grad = zeros_like(source)
            grads.append(grad)
        return nest.pack_sequence_as(sources, grads)

    def _unrecorded_inputs(self, sources: list) -> list:
        """The tensors recorded ops read that no recorded op made (made before the tape
        started, or under ``stop_recording``) and that are not being differentiated for: the
        tape treats them as constants, as TensorFlow's does.  Variable handles stay, since
        gradients reach a variable through them."""
        from ..framework import dtypes

        recorded = self.recorded_ops()
        made = set(recorded)
        keep = set(self.watched_tensors)
        for source in sources:
            keep.add(id(source))
            if _is_variable(source):
                keep.add(id(source.handle))
                try:
                    keep.add(id(source._as_graph_element()))
                except (AttributeError, ValueError):
                    pass
        stops: dict[int, Tensor] = {}
        for op in recorded:
            for t in op.inputs:
                if t.op not in made and id(t) not in keep and t.dtype is not dtypes.resource:
                    stops[id(t)] = t
        return list(stops.values())

    def _visible(self, graph: Graph, watch_accessed_variables: bool) -> set:
        visible = set(self.watched_tensors) | set(self.watched_variables)
        if watch_accessed_variables:
            visible.update(id(v) for v in self.accessed_variables(graph))
        for op in self.recorded_ops():
            visible.update(id(t) for t in op.outputs)
        return visible


def _is_variable(value) -> bool:
    return hasattr(value, "_as_graph_element") and hasattr(value, "handle")


def _sees(visible: set, source) -> bool:
    return id(source) in visible


def _differentiable(source) -> bool:
    """Only floating and complex sources have gradients on a tape, as in TensorFlow."""
    dtype = getattr(source, "dtype", None)
    dtype = getattr(dtype, "base_dtype", dtype)
    return dtype is not None and (dtype.is_floating or dtype.is_complex)


def _variables_by_graph_handle(graph: Graph) -> dict:
    """id(the tensor through which ``graph``'s ops read a variable) -> the variable: the
    graph's own variables, and the eager variables a traced function captured."""
    from ..ops.variables import _eager_variables

    found: dict[int, object] = {}
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES):
        for variable in graph.get_collection(key):
            handle = getattr(variable, "handle", None)
            if handle is not None:
                found[id(handle)] = variable
            try:
                found[id(variable._as_graph_element())] = variable
            except (AttributeError, ValueError):
                pass
    for eager_handle, graph_handle in getattr(graph, "captured_variables", {}).values():
        variable = _eager_variables.get(id(eager_handle))
        if variable is not None:
            found[id(graph_handle)] = variable
    return found

"""Execution modes: eager or graph building, per thread, with eager mode's own graph.

See the package docstring for the contract.  Eager mode is the default graph being the one
`EagerGraph` of the process: ``with eager_mode():`` makes it the default of this thread,
`enable_eager_execution` makes it the global default graph (every thread), and
``Graph.as_default()`` of any other graph leaves eager mode for the ``with`` block, which is
how a tracer builds graph ops inside eager mode.  ``with graph_mode():`` makes the graph that
was the default before eager mode was entered (or a graph kept for that) the default again.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Optional

from ..framework import graph as _graph
from ..framework import op_registry

_thread_state = threading.local()
_process_lock = threading.Lock()
_process_graph: Optional[EagerGraph] = None  # the one EagerGraph, made on first use
# The global default graph from before `enable_eager_execution`: `graph_mode` builds there.
_graph_before_eager: Optional[_graph.Graph] = None


class EagerGraph(_graph.Graph):
    """The default graph of eager mode: it holds no op; its op runner runs each op at once.

    It keeps what a program sets through the default graph and eager ops still read: the name
    scopes (names are not made unique, as TensorFlow's eager names are not), the graph-level
    seed and the count of op seeds derived from it (`dataflow.framework.random_seed`).  Setting the
    seed again (``df.set_random_seed``) also restarts the random streams of the eager context, so a
    program that sets a seed draws the same values each time, as in TensorFlow's eager mode.
    """

    _eager = True

    def __init__(self):
        from .runner import EagerOpRunner, eager_context

        self._op_runner = EagerOpRunner(eager_context())
        super().__init__()

    @property
    def seed(self) -> Optional[int]:
        return self.__dict__.get("_seed")

    @seed.setter
    def seed(self, value: Optional[int]) -> None:
        if "_seed" in self.__dict__:  # not the Graph constructor's first assignment
            self._derived_op_seeds = 0
            self._op_runner.context.reset_random_streams()
        self.__dict__["_seed"] = value

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        scope = self._state.name_scope
        return scope + "/" + name if scope else name

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Nothing to order: every op has run when the next is made.  Callables among
        ``control_inputs`` are called, as in TensorFlow's eager mode."""
        for control in control_inputs or ():
            if callable(control):
                control()
        yield

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False):
        """Nothing to colocate: eager ops run on the host as they are made."""
        yield

    def _reset(self) -> None:
        """`reset_default_graph` in eager mode: eager mode stays on (this graph stays the
        default) and forgets its collections (the global step); the graph `graph_mode` builds
        into is a new one too.  The seed stays, as it is eager context state in TensorFlow."""
        global _graph_before_eager
        self._collections = {}
        with _process_lock:
            _graph_before_eager = _graph.Graph()

    def create_op(self, op_def, inputs, attrs, name=None, control_inputs=(), location=None):
        raise RuntimeError(
            f"A {op_def.type} op cannot be added to a graph while executing eagerly "
            f"({location or _graph._user_location()}): eager ops run at once. Build graphs "
            "inside `with df.Graph().as_default():` or `with df.graph_mode():`."
        )

    def __repr__(self) -> str:
        return "<df.EagerGraph: eager mode's default graph, which holds no ops>"


def _eager_graph() -> EagerGraph:
    global _process_graph
    if _process_graph is None:
        with _process_lock:
            if _process_graph is None:
                from .runner import run_planned_op

                op_registry.register_planned_output(run_planned_op)
                op_registry.enable_op_runners()
                _process_graph = EagerGraph()
    return _process_graph


def executing_eagerly() -> bool:
    """Whether ops run at once on this thread: eager mode is on and no other graph has been
    made the default since (see the package docstring)."""
    return _graph.get_default_graph()._eager


def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """Turns eager execution on for the whole process, as ``tf.enable_eager_execution``: it
    must come before any graph op is built (``ValueError`` otherwise).  ``config``,
    ``device_policy`` and ``execution_mode`` are accepted and have no effect here."""
    global _graph_before_eager
    with _process_lock:
        current = _graph._global_default_graph
        if isinstance(current, EagerGraph):
            return
        if _graph._default_graph_stack() or (current is not None and current.get_operations()):
            raise ValueError(
                "df.enable_eager_execution must be called at program startup, before any "
                f"graph op is built ({_graph._user_location()}); use `with df.eager_mode():` "
                "to run some code eagerly in a program that builds graphs."
            )
    eager_graph = _eager_graph()
    with _process_lock:
        _graph_before_eager = current or _graph.Graph()
        _graph._global_default_graph = eager_graph


def _saved_graphs() -> list:
    saved = getattr(_thread_state, "graphs_before_eager", None)
    if saved is None:
        saved = _thread_state.graphs_before_eager = []
    return saved


@contextlib.contextmanager
def eager_mode():
    """Runs the ops made inside at once, on this thread, whatever the mode outside; blocks
    nest with `graph_mode`."""
    saved = _saved_graphs()
    saved.append(_graph.get_default_graph())
    try:
        with _eager_graph().as_default():
            yield
    finally:
        saved.pop()


@contextlib.contextmanager
def graph_mode():
    """Builds the ops made inside into a graph, on this thread: the graph that was the default
    when eager mode was entered.  Outside eager mode it changes nothing."""
    graph = _graph.get_default_graph()
    if isinstance(graph, EagerGraph):
        saved = [g for g in _saved_graphs() if not isinstance(g, EagerGraph)]
        if saved:
            graph = saved[-1]
        else:
            with _process_lock:
                global _graph_before_eager
                if _graph_before_eager is None:
                    _graph_before_eager = _graph.Graph()
                graph = _graph_before_eager
    with graph.as_default():
        yield

"""Where ops are built: `init_scope` (the outermost context, outside every function being
traced, every cond or loop body, and every gradient tape) and
`executing_eagerly_outside_functions`."""

from __future__ import annotations

import contextlib

from ..framework.graph import executing_eagerly_outside_functions, get_default_graph
from ..framework.graph import outermost_graph as _outermost_graph
from ..ops.variables import _outside_control_flow
from .runner import active_tapes

__all__ = ["executing_eagerly_outside_functions", "init_scope"]


@contextlib.contextmanager
def init_scope():
    """Builds in the outermost context: outside every function being traced (eagerly when
    that context is eager), outside any cond or loop body, with no control dependencies and
    no gradient tape recording, in the current name scope."""
    graph = get_default_graph()
    scope = graph.get_name_scope()
    if scope and not scope.endswith("/"):
        scope += "/"
    outer = _outermost_graph(graph)
    with contextlib.ExitStack() as stack:
        for tape in list(active_tapes()):
            stack.enter_context(tape.stop_recording())
        stack.enter_context(outer.as_default())
        stack.enter_context(_outside_control_flow())
        stack.enter_context(outer.control_dependencies(None))
        stack.enter_context(outer.name_scope(scope or None))
        yield

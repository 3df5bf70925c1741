"""The default Session of each thread: the stack that ``with sess:`` and
``sess.as_default()`` push onto, and what ``Tensor.eval()`` and ``Operation.run()`` use.

It lives below the Session (as TensorFlow keeps it beside the default graph), so that graph
objects find the Session that evaluates them without importing the client: they need only
its ``graph`` and ``run``.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

_default_session_stack = threading.local()


def _session_stack() -> list:
    stack = getattr(_default_session_stack, "stack", None)
    if stack is None:
        stack = _default_session_stack.stack = []
    return stack


def get_default_session() -> Optional[Any]:
    """The innermost Session made the default on this thread (``with sess:``,
    ``sess.as_default()``, an ``InteractiveSession``), or None."""
    stack = _session_stack()
    return stack[-1] if stack else None


def _session_for_eval(session: Optional[Any], graph) -> Any:
    """``session`` (a `dataflow.client.session.Session`), or the default one, to evaluate something
    of ``graph`` with; ``ValueError`` when there is none or it runs another graph."""
    session = session or get_default_session()
    if session is None:
        raise ValueError(
            "Cannot evaluate a tensor with eval() or run(): no default session is registered. "
            "Use `with df.Session() as sess:` or pass session=."
        )
    if session.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate a tensor of another graph.")
    return session

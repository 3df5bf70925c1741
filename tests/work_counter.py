"""Counts the work a piece of the runtime does, without timing it: for tests that pin how the
work grows with the size of a graph (`tests/test_scale.py`).

`count_work(fn)` calls ``fn`` and returns the number of

- lines of Python executed in the project's packages (``dataflow``, ``primitives``,
  ``executor``), each iteration of a loop or comprehension included, as ``sys.settrace``
  reports them;
- comparisons of an `Operation` or `Tensor` with ``==`` made anywhere: a linear scan of a list
  of ops or tensors (``op in some_list``, ``some_list.remove(op)``, ``some_list.index(op)``)
  runs in C and executes no line, but it compares the element it looks for with every element
  before it.  Dicts and sets hash by identity and compare nothing.

Both grow with the work done and not with the machine's speed or load, so the ratio of two
counts for graphs of n and 2n ops is about 2 for linear work and about 4 for quadratic work.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

import dataflow
import executor
import primitives
from dataflow.framework.graph import Operation, Tensor

_PACKAGES = tuple(
    os.path.dirname(os.path.abspath(module.__file__)) + os.sep
    for module in (dataflow, executor, primitives)
)


def count_work(fn: Callable[[], object]) -> int:
    """Calls ``fn`` (on this thread) and returns the work it did; see the module docstring."""
    if sys.gettrace() is not None:
        import pytest

        pytest.skip("counting work needs sys.settrace, which a debugger or coverage holds")
    count = 0
    thread = threading.get_ident()

    def count_lines(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return count_lines

    def trace(frame, event, arg):
        if frame.f_code.co_filename.startswith(_PACKAGES):
            return count_lines
        return None

    def counting_eq(self, other):
        nonlocal count
        if threading.get_ident() == thread:
            count += 1
        return self is other

    saved = {cls: cls.__dict__.get("__eq__") for cls in (Operation, Tensor)}
    for cls in saved:
        cls.__eq__ = counting_eq
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
        for cls, eq in saved.items():
            if eq is None:
                del cls.__eq__
            else:
                cls.__eq__ = eq
    return count

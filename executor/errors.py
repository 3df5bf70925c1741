"""Errors the executor raises.  Front ends translate them into their own error classes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ExecutorError(Exception):
    """Base class of everything the executor raises on purpose."""


class InvalidProgramError(ExecutorError, ValueError):
    """The program breaks a static rule (found before any kernel runs).

    ``nodes`` holds the indices of the nodes the message talks about.
    """

    def __init__(self, message: str, nodes: Sequence[int] = ()):
        super().__init__(message)
        self.nodes = tuple(nodes)


class CycleError(InvalidProgramError):
    """A cycle that does not pass through a ``NextIteration -> Merge`` edge."""


class FrameMismatchError(InvalidProgramError):
    """A node whose inputs lie in different frames, or an Exit in the root frame."""


class KernelError(ExecutorError):
    """A kernel raised.  The original exception is ``cause`` (also ``__cause__``).

    ``input_values`` are the values the kernel was called with, so that the front end can
    describe their shapes and dtypes.
    """

    def __init__(self, node_index: int, node: Any, cause: BaseException, input_values: Sequence):
        super().__init__(f"kernel of node {node.name!r} raised {type(cause).__name__}: {cause}")
        self.node_index = node_index
        self.node = node
        self.cause = cause
        self.input_values = tuple(input_values)


class DeadlineExceededError(ExecutorError):
    """The run went past its deadline; nothing further was scheduled."""


class FetchNotLiveError(ExecutorError):
    """At the end of the run, some fetched outputs do not hold a live value.

    ``missing`` is a list of ``(fetch_position, node_index, state)`` with ``state`` either
    ``"dead"`` or ``"never produced"``.
    """

    def __init__(self, missing: Sequence[tuple[int, int, str]], message: str):
        super().__init__(message)
        self.missing = list(missing)

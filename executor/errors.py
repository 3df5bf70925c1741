"""Errors the executor raises.  Front ends translate them into their own error classes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional


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
    describe their shapes and dtypes; ``frame`` (the frame instance, described like
    `NodeRecord.frame`) and ``iteration`` say where the failing firing was.
    """

    def __init__(
        self,
        node_index: int,
        node: Any,
        cause: BaseException,
        input_values: Sequence,
        frame: str = "root",
        iteration: int = 0,
    ):
        super().__init__(f"kernel of node {node.name!r} raised {type(cause).__name__}: {cause}")
        self.node_index = node_index
        self.node = node
        self.cause = cause
        self.input_values = tuple(input_values)
        self.frame = frame
        self.iteration = iteration


class DeadlineExceededError(ExecutorError):
    """The run went past its deadline; nothing further was scheduled.

    Where the run was when the deadline was noticed: ``node_index`` is the node that fired
    last on the thread that noticed it (None when that thread was waiting for the pool, or
    was starting a new iteration), ``frame`` and ``iteration`` the frame instance and iteration
    it was working in (for an endless loop, the loop's instance and how far it got), and
    ``running`` lists ``(node_index, frame, iteration)`` of the kernels still running on the
    pool.
    """

    def __init__(
        self,
        message: str,
        node_index: Optional[int] = None,
        frame: Optional[str] = None,
        iteration: Optional[int] = None,
        running: Sequence[tuple[int, str, int]] = (),
    ):
        super().__init__(message)
        self.node_index = node_index
        self.frame = frame
        self.iteration = iteration
        self.running = tuple(running)


class RunCancelledError(ExecutorError):
    """The run was cancelled (`Cancellation`), or the thread pool cancelled a kernel the run
    had submitted (it was shut down meanwhile).

    ``node_index``, ``frame`` and ``iteration`` name the firing that never ran; they are None
    for a run cancelled as a whole.
    """

    def __init__(
        self,
        message: str,
        node_index: Optional[int],
        frame: Optional[str],
        iteration: Optional[int],
    ):
        super().__init__(message)
        self.node_index = node_index
        self.frame = frame
        self.iteration = iteration


class FetchNotLiveError(ExecutorError):
    """At the end of the run, some fetched outputs do not hold a live value.

    ``missing`` is a list of ``(fetch_position, node_index, state)`` with ``state`` either
    ``"dead"`` or ``"never produced"``.
    """

    def __init__(self, missing: Sequence[tuple[int, int, str]], message: str):
        super().__init__(message)
        self.missing = list(missing)

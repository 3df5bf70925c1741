"""Run-time errors with TensorFlow 1.x's names.

Every `OpError` carries the op it is about (``.op``, may be ``None``) and a message that names
the op and the file and line of user code that created it.  Build-time mistakes raise Python's
own ``ValueError``/``TypeError``, as TensorFlow does.
"""

from __future__ import annotations

from typing import Any, Optional


class OpError(Exception):
    """Base class of the errors a run raises."""

    error_code = 2

    def __init__(self, node_def: Any = None, op: Any = None, message: str = ""):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self) -> str:
        return self.message


class CancelledError(OpError):
    error_code = 1


class UnknownError(OpError):
    error_code = 2


class InvalidArgumentError(OpError):
    error_code = 3


class DeadlineExceededError(OpError):
    error_code = 4


class NotFoundError(OpError):
    error_code = 5


class FailedPreconditionError(OpError):
    error_code = 9


class OutOfRangeError(OpError):
    error_code = 11


class UnimplementedError(OpError):
    error_code = 12


class InternalError(OpError):
    error_code = 13


def describe_op(op: Optional[Any]) -> str:
    """``"op 'name' (Type) created at file.py:12"``, the way every message names an op."""
    if op is None:
        return "the run"
    return f"op '{op.name}' ({op.type}) created at {op.location}"

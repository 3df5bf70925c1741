"""Run-time errors with TensorFlow 1.x's names.

Every `OpError` carries the op it is about (``.op``, may be ``None``) and a message that names
the op and the file and line of user code that created it.  Build-time mistakes raise Python's
own ``ValueError``/``TypeError``, as TensorFlow does.
"""

from __future__ import annotations

from typing import Any, Optional


class OpError(Exception):
    """Base class of the errors a run raises.  ``OpError(node_def, op, message, error_code)``
    as in TensorFlow; the subclasses fix ``error_code``."""

    error_code = 2

    def __init__(
        self, node_def: Any = None, op: Any = None, message: str = "", *args: Any, **kwargs: Any
    ):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        code = kwargs.get("error_code", args[0] if args else None)
        if code is not None:
            self.error_code = code

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


class AlreadyExistsError(OpError):
    error_code = 6


class PermissionDeniedError(OpError):
    error_code = 7


class ResourceExhaustedError(OpError):
    error_code = 8


class AbortedError(OpError):
    error_code = 10


class UnavailableError(OpError):
    error_code = 14


class DataLossError(OpError):
    error_code = 15


class UnauthenticatedError(OpError):
    error_code = 16


# TensorFlow's error codes (error_codes.proto), as module constants.
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


def describe_op(op: Optional[Any]) -> str:
    """``"op 'name' (Type) created at file.py:12"``, the way every message names an op."""
    if op is None:
        return "the run"
    return f"op '{op.name}' ({op.type}) created at {op.location}"

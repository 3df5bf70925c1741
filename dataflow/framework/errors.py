"""Run-time errors with TensorFlow 1.x's names.

Every `OpError` carries the op it is about (``.op``, may be ``None``) and a message that names
the op and the file and line of user code that created it.  Build-time mistakes raise Python's
own ``ValueError``/``TypeError``, as TensorFlow does.
"""

from __future__ import annotations

from typing import Any, Optional

# TensorFlow's error codes (error_codes.proto); each OpError subclass has one.
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


class OpError(Exception):
    """Base class of the errors a run raises: ``OpError(node_def, op, message, error_code)`` as
    in TensorFlow (``node_def`` is kept for compatibility); the subclasses fix ``error_code``."""

    error_code = UNKNOWN

    def __init__(
        self,
        node_def: Any = None,
        op: Any = None,
        message: str = "",
        error_code: Optional[int] = None,
    ):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        if error_code is not None:
            self.error_code = error_code

    def __str__(self) -> str:
        return self.message


class InaccessibleTensorError(ValueError):
    """A fetch that a run cannot return: a tensor or op inside a while loop, which has one value
    per iteration, not one per run (TensorFlow raises its ``InaccessibleTensorError``, a
    ``ValueError`` too, for the ops a loop marks unfetchable).  Raised before anything runs."""


class CancelledError(OpError):
    """A run, or a kernel of it, was cancelled (the inter-op pool shut down under it)."""

    error_code = CANCELLED


class UnknownError(OpError):
    """A kernel failed in a way that no other class describes."""

    error_code = UNKNOWN


class InvalidArgumentError(OpError):
    """An op was given a value it cannot take: a wrong shape, dtype or content, a missing feed."""

    error_code = INVALID_ARGUMENT


class DeadlineExceededError(OpError):
    """A run did not finish within its ``timeout_in_ms``."""

    error_code = DEADLINE_EXCEEDED


class NotFoundError(OpError):
    """Something a run or a restore names (a file, a checkpoint entry) does not exist."""

    error_code = NOT_FOUND


class AlreadyExistsError(OpError):
    """What an op was asked to create exists already."""

    error_code = ALREADY_EXISTS


class PermissionDeniedError(OpError):
    """The caller may not do what an op asked."""

    error_code = PERMISSION_DENIED


class ResourceExhaustedError(OpError):
    """A resource (memory, a quota) ran out."""

    error_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    """The state does not allow the op: an uninitialized variable is read, for example."""

    error_code = FAILED_PRECONDITION


class AbortedError(OpError):
    """An operation was aborted, typically by a concurrent one."""

    error_code = ABORTED


class OutOfRangeError(OpError):
    """An op went past a valid range: an index, or the end of its input."""

    error_code = OUT_OF_RANGE


class UnimplementedError(OpError):
    """An op, or this use of it, is not implemented."""

    error_code = UNIMPLEMENTED


class InternalError(OpError):
    """An invariant of the runtime broke: a bug here, not in the user's graph."""

    error_code = INTERNAL


class UnavailableError(OpError):
    """A service an op needs is unavailable for now."""

    error_code = UNAVAILABLE


class DataLossError(OpError):
    """Data was lost or corrupted beyond recovery (a damaged file, for example)."""

    error_code = DATA_LOSS


class UnauthenticatedError(OpError):
    """The caller has no valid credentials for what an op asked."""

    error_code = UNAUTHENTICATED


def describe_op(op: Optional[Any]) -> str:
    """``"op 'name' (Type) created at file.py:12"``, the way every message names an op."""
    if op is None:
        return "the run"
    return f"op '{op.name}' ({op.type}) created at {op.location}"


_CODE_TO_EXCEPTION_CLASS = {
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    UNAUTHENTICATED: UnauthenticatedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
}
_EXCEPTION_CLASS_TO_CODE = {cls: code for code, cls in _CODE_TO_EXCEPTION_CLASS.items()}


def exception_type_from_error_code(error_code):
    """The `OpError` subclass of a TensorFlow error code (``5`` -> `NotFoundError`); a code
    that has none (``OK`` or an unknown number) is a ``KeyError``, as in TensorFlow."""
    return _CODE_TO_EXCEPTION_CLASS[error_code]


def error_code_from_exception_type(cls):
    """The error code of an `OpError` subclass (`NotFoundError` -> ``5``).  For any other
    class TensorFlow warns ``"Unknown class exception"`` and returns (not raises) an
    `UnknownError`; so does this."""
    try:
        return _EXCEPTION_CLASS_TO_CODE[cls]
    except (KeyError, TypeError):
        import warnings

        warnings.warn("Unknown class exception", stacklevel=2)
        return UnknownError(None, None, "Unknown class exception", None)


def _make_specific_exception(node_def, op, message: str, error_code: int) -> OpError:
    try:
        return exception_type_from_error_code(error_code)(node_def, op, message)
    except KeyError:
        import warnings

        warnings.warn(f"Unknown error code: {error_code}", stacklevel=3)
        return UnknownError(node_def, op, message, error_code)


class _Status:
    """What ``raise_exception_on_not_ok_status`` hands out: an error ``code`` (``OK`` until
    something sets one) and its ``message``, the Python side of TensorFlow's ``TF_Status``."""

    __slots__ = ("code", "message")

    def __init__(self):
        self.code = OK
        self.message = ""

    def set(self, code: int, message: str) -> None:
        """Records a failure (TensorFlow's ``TF_SetStatus``)."""
        self.code = int(code)
        self.message = str(message)


class raise_exception_on_not_ok_status:  # noqa: N801 (TensorFlow's name)
    """Context manager over a status: ``with raise_exception_on_not_ok_status() as status:``
    hands out a status (``OK``), and on leaving raises the `OpError` subclass of its code with
    its message if the code inside the block set one (an unknown code raises `UnknownError`
    carrying it, with a warning, as TensorFlow does).  An exception raised inside the block
    propagates unchanged."""

    def __enter__(self) -> _Status:
        self.status = _Status()
        return self.status

    def __exit__(self, type_arg, value_arg, traceback_arg) -> bool:
        try:
            if self.status.code != OK:
                raise _make_specific_exception(None, None, self.status.message, self.status.code)
        finally:
            del self.status
        return False

"""Traceback filtering: errors of a Session run show the user's frames, not the runtime's
(``tf.debugging.enable_traceback_filtering`` and its pair), per thread, on by default."""

from __future__ import annotations

import os
import threading
import traceback
import types

_filtering = threading.local()


def _checkout_root() -> str:
    """The directory that holds the three packages (this module's, climbed by its depth)."""
    root = os.path.abspath(__file__)
    for _ in range(__name__.count(".") + 1):
        root = os.path.dirname(root)
    return root


# The directories of the runtime's own code, whose frames filtering leaves out.
_RUNTIME_DIRECTORIES = tuple(
    os.path.join(_checkout_root(), package) + os.sep
    for package in ("dataflow", "executor", "primitives")
)


def is_traceback_filtering_enabled() -> bool:
    """Whether errors of a Session run show the user's frames only (on by default, per
    thread, as in TensorFlow)."""
    return getattr(_filtering, "value", True)


def enable_traceback_filtering() -> None:
    """Errors raised by ``Session.run`` (in this thread) leave dataflow's own frames out of
    their traceback, showing the user's code; the error's message and cause are unchanged."""
    _filtering.value = True


def disable_traceback_filtering() -> None:
    """Errors keep every frame of their traceback, dataflow's own included."""
    _filtering.value = False


def _filtered_traceback(tb):
    """``tb`` without the runtime's frames (its last frame kept if nothing else is left), as
    TensorFlow's ``traceback_utils`` filters."""
    frames = list(traceback.walk_tb(tb))
    new_tb = None
    for frame, line_no in reversed(frames):
        if not os.path.abspath(frame.f_code.co_filename).startswith(_RUNTIME_DIRECTORIES):
            new_tb = types.TracebackType(new_tb, frame, frame.f_lasti, line_no)
    if new_tb is None and frames:
        frame, line_no = frames[-1]
        new_tb = types.TracebackType(None, frame, frame.f_lasti, line_no)
    return new_tb

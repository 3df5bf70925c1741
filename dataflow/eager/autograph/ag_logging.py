"""AutoGraph's own log (``tf.autograph.set_verbosity``, ``tf.autograph.trace``).

At verbosity 1 and above each conversion is logged (``Converted <function>``), at 4 and above
with the converted source, as TensorFlow's AutoGraph logs them; messages go to
``df.logging`` at ``INFO`` level, and to stdout too with ``alsologtostdout``.  The verbosity is
`set_verbosity`'s, else the environment variable ``AUTOGRAPH_VERBOSITY``, else 0.
"""

from __future__ import annotations

import os
import sys

VERBOSITY_VAR_NAME = "AUTOGRAPH_VERBOSITY"
DEFAULT_VERBOSITY = 0

_verbosity_level = None
_echo_to_stdout = hasattr(sys, "ps1") or hasattr(sys, "ps2")  # on in interactive Python


def set_verbosity(level, alsologtostdout=False) -> None:
    """Sets AutoGraph's verbosity (0: no log; higher levels log more); with
    ``alsologtostdout`` its messages are printed to stdout as well.  Takes precedence over the
    ``AUTOGRAPH_VERBOSITY`` environment variable."""
    global _verbosity_level, _echo_to_stdout
    _verbosity_level = level
    _echo_to_stdout = alsologtostdout


def get_verbosity() -> int:
    if _verbosity_level is not None:
        return _verbosity_level
    return int(os.getenv(VERBOSITY_VAR_NAME, DEFAULT_VERBOSITY))


def has_verbosity(level: int) -> bool:
    return get_verbosity() >= level


def log(level: int, msg: str, *args) -> None:
    if not has_verbosity(level):
        return
    from dataflow.framework import logging as _logging

    _logging.info(msg, *args)
    if _echo_to_stdout:
        print(msg % args if args else msg)


def trace(*args) -> None:
    """Prints its arguments when run: inside converted code that is when the graph is built
    (a tensor prints as the symbolic tensor), as TensorFlow's ``tf.autograph.trace``."""
    print(*args)

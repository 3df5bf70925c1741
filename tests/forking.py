"""Running a function in a forked child, for tests of what a child process inherits."""

from __future__ import annotations

import os
from collections.abc import Callable


def in_forked_child(function: Callable[[], object]) -> str:
    """``repr`` of what ``function()`` returns in a forked child, or the name of the exception
    it raises there.  The child never returns into the test: it exits after reporting."""
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.write(write_end, repr(function()).encode())
        except BaseException as exc:
            os.write(write_end, type(exc).__name__.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        reported = pipe.read()
    os.waitpid(child, 0)
    return reported

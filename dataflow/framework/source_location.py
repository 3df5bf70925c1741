"""Where user code made an op: the file, line and function of the first frame outside the
runtime's own code (and, for code typed into a notebook, its cell), recorded on every op so
that errors name the user's line."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Optional

from .traceback_utils import _RUNTIME_DIRECTORIES

_SKIPPED_FILE_PREFIXES = _RUNTIME_DIRECTORIES + (
    os.path.dirname(contextlib.__file__) + os.sep + "contextlib",
)


class SourceLocation:
    """The file, line and function of the user code that created an op.

    Code typed into a Jupyter or IPython cell lives in a file with a made-up name; ``cell``
    then holds the name IPython shows for the cell (``"Cell In[5]"``) and the location prints
    as IPython's tracebacks do, ``Cell In[5], line 3``.
    """

    __slots__ = ("filename", "lineno", "function", "cell")

    def __init__(self, filename: str, lineno: int, function: str, cell: Optional[str] = None):
        self.filename = filename
        self.lineno = lineno
        self.function = function
        self.cell = cell

    def __str__(self) -> str:
        if self.cell is not None:
            return f"{self.cell}, line {self.lineno}"
        return f"{self.filename}:{self.lineno}"

    def __repr__(self) -> str:
        return f"SourceLocation({self.filename!r}, {self.lineno}, {self.function!r})"


def _user_location() -> SourceLocation:
    """The innermost stack frame outside this project's packages.  Wrappers that should not
    count as the user's code mark their function with ``__tracebackhide__ = True`` (pytest's
    convention), and are skipped too."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if not code.co_filename.startswith(_SKIPPED_FILE_PREFIXES) and (
            "__tracebackhide__" not in code.co_varnames
        ):
            filename = code.co_filename
            return SourceLocation(filename, frame.f_lineno, code.co_name, _ipython_cell(filename))
        frame = frame.f_back
    return SourceLocation("<unknown>", 0, "<unknown>")


def _ipython_cell(filename: str) -> Optional[str]:
    """IPython's name for the cell compiled as ``filename`` (``"Cell In[5]"``), or None when
    the code is not in a cell of a running IPython."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    try:
        shell = ipython.get_ipython()
        name = shell.compile.format_code_name(filename) if shell is not None else None
    except Exception:  # an IPython without the method: plain file names are fine
        return None
    return None if name is None else " ".join(name)

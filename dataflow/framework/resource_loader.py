"""``df.resource_loader``: TF1's ``tf.resource_loader``, paths of data files next to code.

``get_data_files_path()`` is the directory of the calling script and
``get_path_to_datafile(path)`` a path relative to it (TensorFlow first asks Bazel's runfiles,
then falls back to exactly this); ``load_resource(path)`` reads a file of dataflow's own
package (TensorFlow's reads one under its own package directory).
"""

from __future__ import annotations

import inspect as _inspect
import os as _os
import sys as _sys

__all__ = [
    "get_data_files_path",
    "get_path_to_datafile",
    "get_root_dir_with_all_resources",
    "load_resource",
    "readahead_file_path",
]


def _caller_directory(depth: int) -> str:
    return _os.path.dirname(_inspect.getfile(_sys._getframe(depth + 1)))


def load_resource(path) -> bytes:
    """The bytes of the file ``path``, relative to dataflow's package directory; ``OSError``
    (``FileNotFoundError``) if it cannot be opened."""
    package_directory = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
    with open(_os.path.join(package_directory, path), "rb") as f:
        return f.read()


def get_data_files_path() -> str:
    """The directory of the script (module) that calls this."""
    return _caller_directory(1)


def get_root_dir_with_all_resources() -> str:
    """The directory just under a Bazel ``*.runfiles`` directory above the caller's script,
    if the script is inside one; else the caller's directory, as in TensorFlow."""
    script_dir = _caller_directory(1)
    directories = [script_dir]
    data_files_dir = ""
    while True:
        candidate = directories[-1]
        if ".runfiles" in _os.path.basename(candidate):
            if len(directories) > 1:
                data_files_dir = directories[-2]
            break
        parent = _os.path.dirname(candidate)
        if parent == candidate:
            break
        directories.append(parent)
    return data_files_dir or script_dir


def get_path_to_datafile(path) -> str:
    """``path`` joined to the directory of the calling script (it need not exist)."""
    return _os.path.join(_caller_directory(1), path)


def readahead_file_path(path, readahead="128M"):
    """``path`` unchanged: TensorFlow implements no read-ahead either and returns the path."""
    return path

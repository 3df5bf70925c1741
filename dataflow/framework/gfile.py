"""``df.gfile`` and ``df.io.gfile``: TensorFlow's file functions, on the local file system.

TF1 programs manage their checkpoint and summary directories with ``tf.gfile.Exists``,
``tf.gfile.MakeDirs`` and ``tf.gfile.GFile``.  TensorFlow's versions also reach remote file
systems (``gs://``, ``hdfs://``); these reach local paths only.  Failures are TensorFlow's
errors: a missing path is `errors.NotFoundError`, an existing target that may not be
replaced `errors.AlreadyExistsError`.
"""

from __future__ import annotations

import contextlib
import glob as _glob
import os
import shutil
from collections.abc import Iterator
from typing import NamedTuple

from . import errors

__all__ = [
    "Copy",
    "DeleteRecursively",
    "Exists",
    "FastGFile",
    "GFile",
    "Glob",
    "IsDirectory",
    "ListDirectory",
    "MakeDirs",
    "MkDir",
    "Open",
    "Remove",
    "Rename",
    "Stat",
    "Walk",
]


@contextlib.contextmanager
def _as_tensorflow_errors(path):
    try:
        yield
    except FileNotFoundError as e:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from e
    except FileExistsError as e:
        raise errors.AlreadyExistsError(None, None, f"{path}; File exists") from e
    except PermissionError as e:
        raise errors.PermissionDeniedError(None, None, f"{path}; Permission denied") from e


class GFile:
    """A file, as ``tf.gfile.GFile``: ``mode`` as ``open``'s (``"r"`` reads text, ``"rb"``
    bytes).  A missing file is a `errors.NotFoundError` when it is opened."""

    def __init__(self, name, mode: str = "r"):
        self._name, self._mode = os.fspath(name), mode
        with _as_tensorflow_errors(self._name):
            self._file = open(self._name, mode)  # noqa: SIM115 - closed by close()/__exit__

    @property
    def name(self) -> str:
        return self._name

    @property
    def mode(self) -> str:
        return self._mode

    def size(self) -> int:
        self._file.flush()
        return os.path.getsize(self._name)

    def read(self, n: int = -1):
        return self._file.read(n)

    def readline(self):
        return self._file.readline()

    def readlines(self) -> list:
        return self._file.readlines()

    def next(self):
        return self.__next__()

    def __next__(self):
        line = self._file.readline()
        if not line:
            raise StopIteration
        return line

    def __iter__(self):
        return self

    def seek(self, offset=None, whence: int = 0, position=None) -> int:
        """Moves to ``offset`` (or the deprecated ``position``) from ``whence``."""
        if position is not None:
            if offset is not None:
                raise ValueError("seek takes offset or position, not both")
            offset = position
        return self._file.seek(offset or 0, whence)

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._file.tell()

    def write(self, file_content) -> None:
        if isinstance(file_content, str) and "b" in self._mode:
            file_content = file_content.encode()
        self._file.write(file_content)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


Open = FastGFile = GFile


def Exists(filename) -> bool:  # noqa: N802 - TensorFlow's name
    return os.path.exists(filename)


def IsDirectory(dirname) -> bool:  # noqa: N802
    return os.path.isdir(dirname)


def ListDirectory(dirname) -> list[str]:  # noqa: N802
    """The names in ``dirname`` (not ``.`` or ``..``), sorted."""
    with _as_tensorflow_errors(dirname):
        return sorted(os.listdir(dirname))


def MakeDirs(dirname) -> None:  # noqa: N802
    """Makes ``dirname`` and its missing parents; nothing when it exists."""
    with _as_tensorflow_errors(dirname):
        os.makedirs(dirname, exist_ok=True)


def MkDir(dirname) -> None:  # noqa: N802
    """Makes ``dirname``, whose parent exists (`errors.AlreadyExistsError` if it exists)."""
    with _as_tensorflow_errors(dirname):
        os.mkdir(dirname)


def Remove(filename) -> None:  # noqa: N802
    with _as_tensorflow_errors(filename):
        os.remove(filename)


def DeleteRecursively(dirname) -> None:  # noqa: N802
    with _as_tensorflow_errors(dirname):
        if os.path.isdir(dirname):
            shutil.rmtree(dirname)
        else:
            os.remove(dirname)


def _check_target(path, overwrite: bool) -> None:
    if not overwrite and os.path.exists(path):
        raise errors.AlreadyExistsError(None, None, f"{path}; File already exists")


def Rename(oldname, newname, overwrite: bool = False) -> None:  # noqa: N802
    _check_target(newname, overwrite)
    with _as_tensorflow_errors(oldname):
        os.replace(oldname, newname)


def Copy(oldpath, newpath, overwrite: bool = False) -> None:  # noqa: N802
    _check_target(newpath, overwrite)
    with _as_tensorflow_errors(oldpath):
        shutil.copyfile(oldpath, newpath)


def Glob(filename) -> list[str]:  # noqa: N802
    """The paths matching the pattern ``filename``, sorted."""
    return sorted(_glob.glob(os.fspath(filename)))


class FileStatistics(NamedTuple):
    """What `Stat` tells of a path, as TensorFlow's ``FileStatistics``."""

    length: int
    mtime_nsecs: int
    is_directory: bool


def Stat(filename) -> FileStatistics:  # noqa: N802
    with _as_tensorflow_errors(filename):
        st = os.stat(filename)
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(filename))


def Walk(top, in_order: bool = True) -> Iterator[tuple[str, list[str], list[str]]]:  # noqa: N802
    """``(dirname, subdirectories, files)`` for ``top`` and each directory under it, a
    directory before those under it when ``in_order``, after them otherwise; nothing for a
    missing ``top``."""
    for dirname, subdirs, files in os.walk(top, topdown=in_order):
        yield dirname, sorted(subdirs), sorted(files)


class _IoGfile:
    """``df.io.gfile``: the same functions under TensorFlow 2's lower-case names."""

    GFile = GFile

    @staticmethod
    def exists(path) -> bool:
        return Exists(path)

    @staticmethod
    def isdir(path) -> bool:
        return IsDirectory(path)

    @staticmethod
    def listdir(path) -> list[str]:
        return ListDirectory(path)

    @staticmethod
    def makedirs(path) -> None:
        MakeDirs(path)

    @staticmethod
    def mkdir(path) -> None:
        MkDir(path)

    @staticmethod
    def remove(path) -> None:
        Remove(path)

    @staticmethod
    def rmtree(path) -> None:
        DeleteRecursively(path)

    @staticmethod
    def rename(src, dst, overwrite: bool = False) -> None:
        Rename(src, dst, overwrite)

    @staticmethod
    def copy(src, dst, overwrite: bool = False) -> None:
        Copy(src, dst, overwrite)

    @staticmethod
    def glob(pattern) -> list[str]:
        return Glob(pattern)

    @staticmethod
    def stat(path) -> FileStatistics:
        return Stat(path)

    @staticmethod
    def walk(top, topdown: bool = True, onerror=None):
        """As `Walk`; ``onerror`` is called with the ``errors.NotFoundError`` of a missing
        ``top``."""
        if onerror is not None and not os.path.isdir(top):
            onerror(errors.NotFoundError(None, None, f"{top}; No such file or directory"))
            return iter(())
        return Walk(top, topdown)

    @staticmethod
    def join(path, *paths) -> str:
        return os.path.join(path, *paths)

    @staticmethod
    def get_registered_schemes() -> list[str]:
        """The URL schemes paths may have: none here but plain local paths (``file``)."""
        return ["file"]


io_gfile = _IoGfile()

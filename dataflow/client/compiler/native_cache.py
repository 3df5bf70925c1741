"""The native tier's disk cache: a directory of the user's own (never a shared or writable-by-others
one), entries named by the digest of their source and checked before numba loads them, evicted
oldest first past a size limit; and numba itself, imported once under a lock."""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import sys
import threading
import time
import types
import warnings
from collections.abc import Sequence
from typing import Any, Optional

from .native_source import (
    _ARRAY_DECORATOR,
    _DECORATOR,
    _UNCACHED_ARRAY_DECORATOR,
    _UNCACHED_DECORATOR,
)

_UNCACHED = ((_DECORATOR, _UNCACHED_DECORATOR), (_ARRAY_DECORATOR, _UNCACHED_ARRAY_DECORATOR))

_numba_import_lock = threading.Lock()


def _import_numba():
    """numba, imported whole once: under a lock, because two threads importing it at once
    (the compile thread and a run compiling in "force" mode) can see its modules half made
    ("partially initialized module 'numba.core.types'")."""
    with _numba_import_lock:
        import numba
        import numba.core.registry  # noqa: F401 - what `njit` and the code generator need

    return numba


# -- the disk cache ----------------------------------------------------------------------------
# An entry is a module ``native/df_<key>.py``, where the key is the hash of its source text, and
# numba's files for it, ``native/__pycache__/df_<key>.*`` (an index and machine code, both
# pickles that numba unpickles).  So that nobody but the user can make this process run code,
# every directory of the cache must be the user's and writable by nobody else (as pip checks
# its own); one that is not is refused, with one warning, and native code is then compiled in
# memory.  A module is never imported from the file: the process runs the source it wrote
# itself, and a file whose text is not that source (damaged, or planted) is discarded with
# numba's files for it before the source is written again.  When the entries exceed
# `CACHE_LIMIT_BYTES`, the least recently used are removed (a region's key holds its file and
# line, so every edit of a program adds entries).
CACHE_LIMIT_BYTES = 256 << 20


EVICT_EVERY = 64  # entries written between two looks at the cache's size


_modules: dict[str, Any] = {}


_modules_lock = threading.Lock()


_refused_directories: dict[str, Optional[str]] = {}  # directory -> why refused, or None


_written_since_eviction: Optional[int] = None  # None: not looked at in this process yet


def cache_directory() -> str:
    """Where generated modules and numba's machine code are kept across processes."""
    root = os.environ.get("DATAFLOW_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "dataflow"
    )
    return os.path.join(root, "native")


def cache_key(source: str) -> str:
    """The key of the module ``source`` in the cache: its file is ``df_<key>.py``."""
    return hashlib.sha256(source.encode()).hexdigest()[:24]


def _why_untrusted(path: str) -> Optional[str]:
    """Why the directory ``path`` may not hold what this process runs (not a directory, not
    the user's, writable by others), or None when it may."""
    try:
        info = os.stat(path)
    except OSError as e:
        return e.strerror or type(e).__name__
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    getuid = getattr(os, "getuid", None)  # POSIX only
    if getuid is not None and info.st_uid != getuid():
        return f"it belongs to user id {info.st_uid}, not to this user ({getuid()})"
    if info.st_mode & 0o022:
        return f"others than its owner may write it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _trusted_directory(path: str) -> Optional[str]:
    """Makes the directory ``path`` (mode 0700) where missing; why it may not hold what this
    process runs (`_why_untrusted`), or None when it may."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as e:
        return f"{path}: {e.strerror or type(e).__name__}"
    why = _why_untrusted(path)
    return None if why is None else f"{path}: {why}"


def _disk_cache() -> Optional[str]:
    """The cache directory (`cache_directory`), made where missing and checked
    (`_trusted_directory`) once per process, or None (after one warning) when it may not be
    used."""
    directory = cache_directory()
    paths = (os.path.dirname(directory), directory, _numba_directory(directory))
    return directory if _checked(directory, paths, "DATAFLOW_CACHE_DIR") else None


def _checked(key: str, paths: Sequence[str], variable: str) -> bool:
    """Whether the directories ``paths`` may hold what this process runs (`_trusted_directory`),
    found once per process for ``key``; when not, one warning, which names the environment
    variable that chooses them."""
    if key not in _refused_directories:
        reason = None
        for path in paths:
            reason = _trusted_directory(path)
            if reason is not None:
                break
        _refused_directories[key] = reason
        if reason is not None:
            warnings.warn(
                f"dataflow does not keep native code on disk in {key} ({reason}), and "
                f"compiles it in every process: point {variable} at a directory of "
                "your own that only you may write (mode 0700)",
                RuntimeWarning,
                stacklevel=3,
            )
    return _refused_directories[key] is None


def _numba_directory(directory: str) -> str:
    """Where numba keeps its files for the modules of ``directory`` (unless ``NUMBA_CACHE_DIR``
    says otherwise, `_numba_cache_trusted`)."""
    return os.path.join(directory, "__pycache__")


def _numba_cache_trusted(dispatcher, directory: str) -> bool:
    """Whether the directory numba reads ``dispatcher``'s cache from is ``directory``'s own or
    one as trustworthy (numba's ``NUMBA_CACHE_DIR`` moves it)."""
    path = getattr(getattr(dispatcher, "_cache", None), "_cache_path", None)
    if path is None or path == _numba_directory(directory):
        return True
    return _checked(path, (os.path.dirname(path), path), "NUMBA_CACHE_DIR")


def is_loaded(digest: str) -> bool:
    """Whether the module of the source with this digest is loaded in this process."""
    return digest in _modules


def load_function(source: str, function_name: str):
    """The numba dispatcher named ``function_name`` of the module ``source``, made once per
    process: from the disk cache where it may be used (numba then loads machine code another
    process compiled), else in memory."""
    digest = cache_key(source)
    with _modules_lock:
        module = _modules.get(digest)
        if module is None:
            directory = _disk_cache()
            path = None if directory is None else _cache_entry(directory, digest, source)
            name = _module_name(digest)
            module = None
            if path is not None:
                module = _run_module(name, source, path)
                if not _numba_cache_trusted(getattr(module, function_name), directory):
                    module = None
            if module is None:
                module = _run_module(name, _uncached(source), None)
            _modules[digest] = module
    return getattr(module, function_name)


def _uncached(source: str) -> str:
    """``source`` with its functions' decorators asking numba for no disk cache."""
    for cached, uncached in _UNCACHED:
        source = source.replace(cached, uncached)
    return source


def _module_name(digest: str) -> str:
    return f"dataflow_native_{digest}"


def _cache_entry(directory: str, digest: str, source: str) -> Optional[str]:
    """The path of ``source``'s module in ``directory``, whose text is ``source`` (written,
    or written again over a file with another text); None when it cannot be written."""
    global _written_since_eviction
    path = os.path.join(directory, f"df_{digest}.py")
    text = source.encode()
    try:
        with open(path, "rb") as f:
            found = f.read(len(text) + 1)
    except OSError:
        found = None
    try:
        if found == text:
            # The access time says when an entry was last used; the modification time
            # stays: numba compares it with the one its index recorded.
            os.utime(path, ns=(time.time_ns(), os.stat(path).st_mtime_ns))
            return path
        if found is not None:
            _remove(_entry_files(directory).get(digest, ()))
        partial = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(partial, "wb") as f:
            f.write(text)
        os.replace(partial, path)
    except OSError:
        return None
    if _written_since_eviction is None or _written_since_eviction >= EVICT_EVERY:
        _written_since_eviction = 0
        evict(directory)
    _written_since_eviction += 1
    return path


def _entry_files(directory: str) -> dict[str, list[str]]:
    """Per key, the files of that cache entry in ``directory``: its module and numba's."""
    entries: dict[str, list[str]] = {}
    for folder in (directory, os.path.join(directory, "__pycache__")):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.startswith("df_"):
                digest = name[3:].split(".", 1)[0]
                entries.setdefault(digest, []).append(os.path.join(folder, name))
    return entries


def _remove(paths) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.remove(path)


def evict(directory: str, limit: Optional[int] = None) -> None:
    """Removes the least recently used entries of the cache ``directory`` (not those this
    process loaded) until its files take at most three quarters of ``limit`` bytes
    (`CACHE_LIMIT_BYTES`), if they take more than ``limit``."""
    limit = CACHE_LIMIT_BYTES if limit is None else limit
    sizes: dict[str, int] = {}
    used: dict[str, float] = {}
    entries = _entry_files(directory)
    for digest, paths in entries.items():
        for path in paths:
            try:
                info = os.stat(path)
            except OSError:
                continue
            sizes[digest] = sizes.get(digest, 0) + info.st_size
            used[digest] = max(used.get(digest, 0.0), info.st_atime, info.st_mtime)
    total = sum(sizes.values())
    if total <= limit:
        return
    for digest in sorted(sizes, key=used.__getitem__):
        if total <= limit * 3 // 4:
            break
        if digest not in _modules:
            _remove(entries[digest])
            total -= sizes[digest]


def _run_module(name: str, source: str, path: Optional[str]):
    """A new module ``name`` made by running ``source`` (numba finds its cache through the
    function's file name, ``path``)."""
    _import_numba()  # the source imports njit
    module = types.ModuleType(name)
    module.__file__ = path or f"<{name}>"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module

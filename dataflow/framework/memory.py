"""Where a kernel's arrays come from: the C library's allocator, tuned so that a training step's
large arrays are reused from one step to the next instead of being mapped afresh.

numpy takes the memory of each array from ``malloc``.  glibc's ``malloc`` maps an allocation
above its *mmap threshold* (128 KiB at first, raised to the size of the largest block freed
so far, at most 32 MiB) straight from the operating system and unmaps it when it is freed, and
it gives the top of its heap back to the system when more than its *trim threshold* is free.
A training step allocates and frees the same arrays of a few megabytes every step
(activations, their gradients, patch blocks), and memory fresh from the system costs a page
fault for every 4 KiB the first time it is written: 1,500 faults for one 6 MB activation, on
every step.  `tune_malloc` sets the two thresholds once (mmap 32 MiB, trim 128 MiB), so those
arrays stay in the heap between steps and come back without faults: a LeNet training step
(batch 64) took about a quarter less time on this project's test machine.

The cost: up to `TRIM_THRESHOLD` bytes of freed memory stay with the process instead of going
back to the system.  It is applied once, when ``dataflow`` is imported, on Linux with glibc
only, and not when the environment says otherwise: ``DATAFLOW_TUNE_MALLOC=0``, or glibc's own
variables (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``), which the C library read
at start-up and which win.  `applied` records what was set (None: nothing).

Layer: framework.  Invariant: only the allocator's thresholds change; no array, value or
result does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from typing import Optional

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20

applied: Optional[dict] = None


def _wanted() -> bool:
    if os.environ.get("DATAFLOW_TUNE_MALLOC", "1") == "0":
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    return sys.platform.startswith("linux")


def tune_malloc() -> Optional[dict]:
    """Sets glibc's mmap and trim thresholds (see the module docstring) unless the environment
    says otherwise or the C library is not glibc; returns what it set, or None."""
    global applied
    if applied is not None or not _wanted():
        return applied
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    if mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD):
        applied = {"mmap_threshold": MMAP_THRESHOLD, "trim_threshold": TRIM_THRESHOLD}
    return applied

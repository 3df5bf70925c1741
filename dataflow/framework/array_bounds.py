"""The bounds on what a file from elsewhere may declare, checked before anything is allocated.

Every loader of arrays from a file (graph files, GraphDefs, checkpoints) bounds them with
`array_bytes`: a small file can declare gigabytes (a 56-byte GraphDef node can ask for 8 GiB,
a compressed checkpoint inflate a thousandfold), so the declared shape is refused before any
memory is asked for.  A module of its own, below every loader, so that they share one bound.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

MAX_ARRAY_BYTES = 2**30
MAX_RANK = 32
MAX_SHAPE_ELEMENTS = 2**40


def array_bytes(dims, dtype: np.dtype, total: int = 0, limit: Optional[int] = None) -> int:
    """The bytes an array of shape ``dims`` and ``dtype`` takes, checked before it is allocated:
    ``ValueError`` when it holds more than ``limit`` bytes (`MAX_ARRAY_BYTES` when None) alone,
    or together with the ``total`` bytes of the arrays of the same file read before it.  Every
    loader of arrays from a file (graph files, GraphDefs, checkpoints) bounds them here."""
    limit = MAX_ARRAY_BYTES if limit is None else limit
    dims = [int(d) for d in dims]
    if len(dims) > MAX_RANK:
        raise ValueError(f"an array of rank {len(dims)} is too large (at most {MAX_RANK})")
    if any(d < 0 for d in dims):
        raise ValueError(f"an array of shape {dims} has dimension {min(dims)}")
    elements = 1
    for d in dims:  # as a declared shape is checked: [2**62, 2**62, 0] is no empty array
        elements *= d
        if elements > MAX_SHAPE_ELEMENTS:
            raise ValueError(f"the shape {dims} is too large")
    size = math.prod(dims) * dtype.itemsize
    if size > limit:
        raise ValueError(f"array of shape {dims} ({dtype}) is larger than {limit}B")
    if total + size > limit:
        raise ValueError(f"the arrays of the file hold more than {limit}B in all")
    return size

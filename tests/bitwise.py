"""Bit-for-bit comparison of run results, for tests that check a transformation changes nothing
(graph passes, saving and loading)."""

from __future__ import annotations

import numpy as np


def same_bits(a, b) -> bool:
    """Whether two results are the same: same Python type, dtype and shape, and the same bytes
    (so ``-0.0`` differs from ``0.0`` and NaN payloads count); object arrays element by
    element; None only equals None."""
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b):
        return False
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return all(same_bits(x, y) for x, y in zip(a.ravel(), b.ravel()))
    return a.tobytes() == b.tobytes()


def assert_bitwise_equal(a, b) -> None:
    assert same_bits(a, b), (a, b)

"""Eager execution against the numpy floor: the cost of running one op at once.

Run: ``python benchmarks/bench_eager.py``.  Prints, per case, the median time of one call in
microseconds and its ratio to the numpy floor (the same computation as one numpy call on
arrays that already exist).  Sections are independent; later measurements (``df.function``,
training loops) go in sections of their own below.
"""

from __future__ import annotations

import statistics
import timeit

import numpy as np

import dataflow as df


def _median_us(fn, number: int = 2000, repeat: int = 7) -> float:
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number * 1e6


def section_eager_per_op_overhead() -> None:
    """One op on scalars and on small arrays, eagerly, against the numpy call."""
    print("== eager per-op overhead (median us per op; ratio to the numpy floor) ==")
    cases = [
        ("scalar add", np.float32(1.5), np.float32(2.5)),
        ("4x4 add", np.ones((4, 4), np.float32), np.ones((4, 4), np.float32)),
        ("64x64 add", np.ones((64, 64), np.float32), np.ones((64, 64), np.float32)),
    ]
    with df.eager_mode():
        for label, a, b in cases:
            ta, tb = df.constant(a), df.constant(b)
            floor = _median_us(lambda a=a, b=b: np.add(a, b))
            op = _median_us(lambda ta=ta, tb=tb: df.add(ta, tb))
            operator = _median_us(lambda ta=ta, tb=tb: ta + tb)
            print(
                f"{label:>10}: numpy {floor:6.2f}   df.add {op:6.2f} ({op / floor:5.1f}x)   "
                f"a + b {operator:6.2f} ({operator / floor:5.1f}x)"
            )
        ta = df.constant(np.float32(1.5))
        converted = _median_us(lambda: ta * 2.0)
        print(f"{'scalar*2.0':>10}: with a Python operand converted: {converted:6.2f}")
        sess_graph = df.Graph()
    with sess_graph.as_default():
        a = df.constant(np.float32(1.5))
        total = a + a
        with df.Session() as sess:
            sess.run(total)
            run = _median_us(lambda: sess.run(total), number=500)
    print(f"{'for scale':>10}: one Session.run of the same scalar add: {run:6.2f}")


if __name__ == "__main__":
    section_eager_per_op_overhead()

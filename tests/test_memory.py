"""Values are released after their last use: a long loop holds only a few iterations' values."""

import tracemalloc

import numpy as np

import dataflow as df


def _peak_bytes_of_loop(n_iterations: int) -> int:
    graph = df.Graph()
    with graph.as_default():
        n = df.placeholder(df.int32, shape=[])
        i0 = df.constant(0)
        v0 = df.zeros([1000], dtype=df.float64)
        _, total = df.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v + 1.0), [i0, v0])
    with df.Session(graph=graph) as sess:
        sess.run(total, {n: 2})  # plan built and cached before measuring
        tracemalloc.start()
        try:
            result = sess.run(total, {n: n_iterations})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert np.all(result == n_iterations)
    return peak


def test_memory_of_a_100000_iteration_loop_stays_flat():
    short = _peak_bytes_of_loop(100)
    long = _peak_bytes_of_loop(100_000)
    # Each iteration makes an 8 kB array; keeping them all would cost 800 MB.
    assert long < short + 200_000, (short, long)

"""Values are released after their last use: a long loop holds only a few iterations' values."""

import tracemalloc

import numpy as np
from placed_programs import partitioned_config

import dataflow as df


def _peak_bytes_of_run(graph, total, n, n_iterations: int, config=None) -> int:
    """The peak of memory traced during a run of ``total`` fed ``n_iterations`` (the plan is
    built and cached first, so only the run is measured); checks the result."""
    with df.Session(graph=graph, config=config) as sess:
        sess.run(total, {n: 2})
        tracemalloc.start()
        try:
            result = sess.run(total, {n: n_iterations})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert np.all(result == n_iterations)
    return peak


def _peak_bytes_of_loop(n_iterations: int) -> int:
    graph = df.Graph()
    with graph.as_default():
        n = df.placeholder(df.int32, shape=[])
        i0 = df.constant(0)
        v0 = df.zeros([1000], dtype=df.float64)
        _, total = df.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v + 1.0), [i0, v0])
    return _peak_bytes_of_run(graph, total, n, n_iterations)


def test_memory_of_a_100000_iteration_loop_stays_flat():
    short = _peak_bytes_of_loop(100)
    long = _peak_bytes_of_loop(100_000)
    # Each iteration makes an 8 kB array; keeping them all would cost 800 MB.
    assert long < short + 200_000, (short, long)


def _peak_bytes_of_loop_across_devices(n_iterations: int) -> int:
    # The predicate on /cpu:0, the body on /cpu:1: every iteration sends the 8 kB loop value
    # from one partition to the other and back.
    graph = df.Graph()
    with graph.as_default():
        n = df.placeholder(df.int32, shape=[])
        with df.device("/cpu:0"):
            i0 = df.constant(0)
            v0 = df.zeros([1000], dtype=df.float64)

            def body(i, v):
                with df.device("/cpu:1"):
                    return i + 1, v + 1.0

            _, total = df.while_loop(lambda i, v: i < n, body, [i0, v0])
            total = df.identity(total)
    config = partitioned_config(device_count={"CPU": 2})
    return _peak_bytes_of_run(graph, total, n, n_iterations, config)


def test_memory_of_a_loop_across_devices_stays_flat():
    short = _peak_bytes_of_loop_across_devices(50)
    long = _peak_bytes_of_loop_across_devices(3_000)
    # Each iteration sends an 8 kB array each way; keeping them all would cost 48 MB.
    assert long < short + 200_000, (short, long)

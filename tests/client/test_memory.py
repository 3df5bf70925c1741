"""Values are released after their last use: a long loop holds only a few iterations' values."""

import json
import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
from placed_programs import partitioned_config

import dataflow as df
from dataflow.client.compiler import native

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPOSITORY = os.path.dirname(TESTS)


def _peak_bytes_of_run(graph, total, n, n_iterations: int, config=None) -> int:
    """The peak of memory traced during a run of ``total`` fed ``n_iterations`` (the plan is
    built and cached first, so only the run is measured); checks the result."""
    with df.Session(graph=graph, config=config) as sess:
        sess.run(total, {n: 2})
        # tracemalloc counts every thread's allocations: let the native tier's compile thread
        # finish what earlier tests queued (importing numba alone takes megabytes).
        native.wait_until_idle()
        tracemalloc.start()
        try:
            result = sess.run(total, {n: n_iterations})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert np.all(result == n_iterations)
    return peak


def _peak_bytes_of_loop(n_iterations: int, size: int = 1000) -> int:
    graph = df.Graph()
    with graph.as_default():
        n = df.placeholder(df.int32, shape=[])
        i0 = df.constant(0)
        v0 = df.zeros([size], dtype=df.float64)
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


def test_a_loop_after_a_threaded_warm_up_that_compiles_natively_holds_no_more_values(tmp_path):
    # 60 runs of another loop from 4 threads make the compiler build that loop's native code
    # on its background thread.  That thread imports numba and compiles: tens of MB that
    # tracemalloc counts as well, whichever thread allocates them, and that stay (numba's
    # modules).  Measured once it is done, a loop over a 400 kB vector holds as few values
    # as in a fresh process.
    script = textwrap.dedent(
        """
        import json, sys, threading
        import dataflow as df
        from test_memory import _peak_bytes_of_loop

        n = df.placeholder(df.int32, [])
        warm = df.while_loop(
            lambda i, a: i < n, lambda i, a: (i + 1, a * 2.0 + 1.0), [0, df.constant(1.0)]
        )
        with df.Session() as sess:
            def runs():
                for _ in range(15):
                    sess.run(warm, {n: 50})
            threads = [threading.Thread(target=runs) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            (plan,) = sess._plans.values()
            (tier,) = [r.function for r in plan.compiled.regions if hasattr(r, "frame_name")]
            tier.wait()
        print(json.dumps([
            tier.native is not None,
            _peak_bytes_of_loop(100, size=50_000),
            _peak_bytes_of_loop(2_000, size=50_000),
        ]))
        """
    )
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([REPOSITORY, TESTS, HERE]),
        DATAFLOW_COMPILE="auto",
        DATAFLOW_NATIVE="auto",
        DATAFLOW_CACHE_DIR=str(tmp_path),
    )
    output = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPOSITORY,
    )
    assert output.returncode == 0, output.stderr
    compiled_natively, short, long = json.loads(output.stdout.strip().splitlines()[-1])
    assert compiled_natively
    # Each iteration makes a 400 kB array; 20 more live ones would cost 8 MB.
    assert long < short + 200_000, (short, long)

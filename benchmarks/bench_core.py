"""Core runtime benchmarks: prints figures side by side with their references.

    python benchmarks/bench_core.py            # all five
    python benchmarks/bench_core.py --quick    # fewer repeats
    python benchmarks/bench_core.py --no-passes  # with every graph pass off (df.passes)

1. A chain of 1000 scalar float64 adds, per op, against the same numpy ufunc calls made from a
   Python loop (target: at most 2x).
2. ``while_loop`` of 10 000 iterations (int counter, float accumulator), per iteration, against
   TensorFlow 1.x graph mode with control flow v1 when ``tensorflow`` is installed (target: at
   most 8x TensorFlow).
3. Two independent branches of exp/sin/tanh on 8M-element arrays, 2 inter-op threads against 1
   (target: at least 1.6x faster).
4. A chain of 20 elementwise ops on a 100 MB array: peak memory in units of that array, the fed
   input included (target: at most 3).
5. The same chain against the numpy code written by hand (target: within 1.05x).
6. The same chain with the Session's intra-op threads at 1 and at the default (one per core):
   the fused chain then runs in cache-sized blocks on every core (target, on 2 cores: at most
   0.5x numpy by hand).

Timings are medians over repeats; the machine may be shared, so read ratios, not absolutes.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, median_time, paired_median_times, try_import_tensorflow

# isort: split
import argparse
import os
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import dataflow as df

# Graph passes the Sessions run: the default pipeline unless --no-passes.
GRAPH_OPTIONS = df.GraphOptions()


def config(threads: int = 0, intra_op_threads: int = 0) -> df.ConfigProto:
    return df.ConfigProto(
        inter_op_parallelism_threads=threads,
        intra_op_parallelism_threads=intra_op_threads,
        graph_options=GRAPH_OPTIONS,
    )


# -- 1. scalar chain ------------------------------------------------------------------------------
def bench_scalar_chain(repeats: int, length: int = 1000) -> dict:
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, shape=[], name="x")
        one = df.constant(1.0, dtype=df.float64)
        y = x
        for _ in range(length):
            y = y + one
    sess = df.Session(graph=graph, config=config())
    start_value = np.float64(0.5)
    result = sess.run(y, {x: start_value})
    assert result == start_value + length, result

    add = np.add
    one_np = np.float64(1.0)

    def numpy_loop():
        v = start_value
        for _ in range(length):
            v = add(v, one_np)
        return v

    graph_time, numpy_time = paired_median_times(
        lambda: sess.run(y, {x: start_value}), numpy_loop, repeats=repeats
    )
    sess.close()
    return {
        "dataflow_ns_per_op": graph_time / length * 1e9,
        "numpy_ns_per_op": numpy_time / length * 1e9,
        "ratio": graph_time / numpy_time,
    }


# -- 2. while_loop --------------------------------------------------------------------------------
def _loop_graph(api, n_iterations: int):
    n = api.constant(n_iterations)
    i0 = api.constant(0)
    acc0 = api.constant(0.0, dtype=api.float64)
    step = api.constant(0.5, dtype=api.float64)
    _, acc = api.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a + step), [i0, acc0])
    return acc


def bench_while_loop(repeats: int, n_iterations: int = 10_000, tf1=None) -> dict:
    graph = df.Graph()
    with graph.as_default():
        acc = _loop_graph(df, n_iterations)
    sess = df.Session(graph=graph, config=config())
    assert sess.run(acc) == 0.5 * n_iterations
    if tf1 is None:
        ours = median_time(lambda: sess.run(acc), repeats) / n_iterations
        sess.close()
        return {"dataflow_us_per_iteration": ours * 1e6}
    tf_graph = tf1.Graph()
    with tf_graph.as_default():
        tf_acc = _loop_graph(tf1, n_iterations)
    with tf1.Session(graph=tf_graph) as tf_sess:
        ours, theirs = paired_median_times(
            lambda: sess.run(acc), lambda: tf_sess.run(tf_acc), repeats=repeats
        )
    sess.close()
    ours, theirs = ours / n_iterations, theirs / n_iterations
    figures = {
        "dataflow_us_per_iteration": ours * 1e6,
        "tensorflow_us_per_iteration": theirs * 1e6,
        "ratio": ours / theirs,
    }
    return figures


# -- 3. inter-op parallelism ----------------------------------------------------------------------
def bench_parallel_branches(repeats: int, size: int = 8 * 1024 * 1024) -> dict:
    graph = df.Graph()
    with graph.as_default():
        a = df.placeholder(df.float64, shape=[size])
        b = df.placeholder(df.float64, shape=[size])
        left = df.tanh(df.sin(df.exp(a)))
        right = df.tanh(df.sin(df.exp(b)))
    rng = np.random.default_rng(0)
    feed = {a: rng.random(size), b: rng.random(size)}
    sessions = {threads: df.Session(graph=graph, config=config(threads)) for threads in (1, 2)}

    # The ceiling on this machine: the same numpy code, one branch per thread.
    def branch(x):
        return np.tanh(np.sin(np.exp(x)))

    pool = ThreadPoolExecutor(2)

    def numpy_two_threads():
        futures = [pool.submit(branch, feed[a]), pool.submit(branch, feed[b])]
        return [f.result() for f in futures]

    one, two, numpy_one, numpy_two = paired_median_times(
        lambda: sessions[1].run([left, right], feed),
        lambda: sessions[2].run([left, right], feed),
        lambda: (branch(feed[a]), branch(feed[b])),
        numpy_two_threads,
        repeats=repeats,
    )
    pool.shutdown()
    for sess in sessions.values():
        sess.close()
    return {
        "one_thread_ms": one * 1e3,
        "two_threads_ms": two * 1e3,
        "speedup": one / two,
        "numpy_speedup": numpy_one / numpy_two,
    }


# -- 4 and 5. a long elementwise chain on a large array --------------------------------------------
def _chain(api_or_numpy, x):
    m = api_or_numpy
    for _ in range(5):
        x = m.multiply(x, 1.0001)
        x = m.add(x, 0.5)
        x = m.tanh(x)
        x = m.abs(x)
    return x


def bench_large_chain(repeats: int, megabytes: int = 100) -> dict:
    size = megabytes * 1024 * 1024 // 8
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, shape=[size])
        y = _chain(df, x)
    data = np.random.default_rng(0).random(size)
    with df.Session(graph=graph, config=config(1)) as sess:
        sess.run(y, {x: data})
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        result = sess.run(y, {x: data})
        peak = tracemalloc.get_traced_memory()[1] - baseline
        tracemalloc.stop()
        np.testing.assert_allclose(result, _chain(np, data))
        del result
        with df.Session(graph=graph, config=config(1, intra_op_threads=1)) as one_thread:
            assert one_thread.run(y, {x: data}).tobytes() == sess.run(y, {x: data}).tobytes()
            graph_time, numpy_time, one_thread_time = paired_median_times(
                lambda: sess.run(y, {x: data}),
                lambda: _chain(np, data),
                lambda: one_thread.run(y, {x: data}),
                repeats=repeats,
            )
    return {
        "one_thread_ms": one_thread_time * 1e3,
        "one_thread_ratio": one_thread_time / numpy_time,
        "array_mb": data.nbytes / 2**20,
        "peak_memory_in_arrays": (peak + data.nbytes) / data.nbytes,
        "dataflow_ms": graph_time * 1e3,
        "numpy_ms": numpy_time * 1e3,
        "ratio": graph_time / numpy_time,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-tensorflow", action="store_true", help="skip the TF comparison")
    parser.add_argument("--no-passes", action="store_true", help="turn every graph pass off")
    args = parser.parse_args()
    if args.no_passes:
        global GRAPH_OPTIONS
        GRAPH_OPTIONS = df.GraphOptions(
            rewrite_options=df.RewriterConfig(disable_meta_optimizer=True)
        )
    repeats = 5 if args.quick else 15
    tf1 = None if args.no_tensorflow else try_import_tensorflow()
    print(
        describe_machine(
            repeats,
            tensorflow="yes" if tf1 is not None else "not installed",
            graph_passes="off" if args.no_passes else "default pipeline",
        )
    )

    r = bench_scalar_chain(repeats)
    print(
        f"1. scalar add chain (1000 ops): {r['dataflow_ns_per_op']:.0f} ns/op vs numpy loop "
        f"{r['numpy_ns_per_op']:.0f} ns/op -> {r['ratio']:.2f}x  (target <= 2x)"
    )

    r = bench_while_loop(repeats, tf1=tf1)
    line = f"2. while_loop 10k iterations: {r['dataflow_us_per_iteration']:.1f} us/iteration"
    if "ratio" in r:
        line += (
            f" vs TensorFlow 1.x as shipped {r['tensorflow_us_per_iteration']:.1f} us/iteration -> "
            f"{r['ratio']:.2f}x  (target <= 8x)"
        )
    else:
        line += "  (TensorFlow not installed: no comparison)"
    print(line)

    r = bench_parallel_branches(max(3, repeats // 3))
    print(
        f"3. two independent 8M-element branches: 1 thread {r['one_thread_ms']:.0f} ms, "
        f"2 threads {r['two_threads_ms']:.0f} ms -> {r['speedup']:.2f}x faster  "
        f"(target >= 1.6x; numpy by hand on 2 threads: {r['numpy_speedup']:.2f}x)"
    )

    r = bench_large_chain(max(3, repeats // 3))
    print(
        f"4. 20-op chain on a {r['array_mb']:.0f} MB array: peak memory "
        f"{r['peak_memory_in_arrays']:.2f} arrays, input included  (target <= 3)"
    )
    print(
        f"5. same chain: dataflow {r['dataflow_ms']:.0f} ms vs numpy by hand "
        f"{r['numpy_ms']:.0f} ms -> {r['ratio']:.3f}x  (target <= 1.05x)"
    )
    print(
        f"6. same chain, intra-op threads: 1 -> {r['one_thread_ms']:.0f} ms "
        f"({r['one_thread_ratio']:.2f}x numpy), {os.cpu_count()} (default) -> "
        f"{r['dataflow_ms']:.0f} ms ({r['ratio']:.2f}x numpy)  (target <= 0.5x on 2 cores)"
    )


if __name__ == "__main__":
    main()

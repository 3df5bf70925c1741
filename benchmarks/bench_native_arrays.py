"""Native array kernels (`dataflow.client.compiler.native_arrays`): what one numba loop per
elementwise region saves, with the native tier off against forced, timed in alternating
rounds (medians; the ratio of two rows is measured in the same rounds).

    python benchmarks/bench_native_arrays.py                 # every section
    python benchmarks/bench_native_arrays.py --only adam,mlp --rounds 50

Sections:

- ``adam``: Adam's update alone on the MLP's variables (784x256, 256, 256x256, 256, 256x10,
  10; the gradients fed): the optimizer's step with no model around it;
- ``mlp``, ``lenet``: the training steps of `bench_training` (`training_graphs.graph_training`,
  Adam, batch 64), compiled in the default mode, the native tier off or forced;
- ``threshold``: one kernel (``relu(x + b) * s``, float32, a bias row) at growing sizes, on one
  thread and in blocks on the intra-op threads, and numpy's fused chain beside them: where
  blocks start to pay (`native_arrays.PARALLEL_MIN_ELEMENTS`).

Each row gives the median per run in each mode and their ratio (``off / force``: above 1,
the native kernels are faster).  The machine may be shared: read the ratios.

Measured on the 2-core machine, shared, ``--rounds 40`` (medians in ms)::

    step                               native off    forced off/force
    Adam alone, MLP variables              1.073     0.669     1.60
    mlp training step (Adam)               3.148     2.600     1.21
    lenet training step (Adam)           156.071   135.703     1.15

    elements      numpy   1 thread     blocks   1t/blk
      131072      0.148      0.055      0.133     0.41
      524288      0.548      0.123      0.270     0.45
     1048576      2.821      0.426      5.677     0.08
     4194304     21.196      1.504      6.324     0.24

The kernel is 3-7x faster than numpy's fused chain at every size; the blocks on two threads
never paid, hence `native_arrays.PARALLEL_MIN_ELEMENTS` past these sizes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import training_graphs as g  # noqa: E402
import training_workloads as w  # noqa: E402

import dataflow as df  # noqa: E402
from dataflow.client import compiler  # noqa: E402
from dataflow.client.compiler import native, native_arrays  # noqa: E402

SECTIONS = ("adam", "mlp", "lenet", "threshold")


def in_native_mode(step, native_mode: str):
    """``step`` run with the compiler in its default mode and the native tier in
    ``native_mode``; the modes before it restored after."""

    def run():
        compile_before = compiler.set_mode("auto")
        native_before = compiler.set_native(native_mode)
        try:
            return step()
        finally:
            compiler.set_mode(compile_before)
            compiler.set_native(native_before)

    return run


def paired_medians(functions: list, rounds: int, warm_up: int = 5) -> list[float]:
    """The median time of each function, called in turn within each round."""
    for _ in range(warm_up):
        for fn in functions:
            fn()
    native.wait_until_idle()
    samples: list[list[float]] = [[] for _ in functions]
    for _ in range(rounds):
        for fn, times in zip(functions, samples):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return [statistics.median(times) for times in samples]


def adam_alone():
    """A step function of Adam's update on the MLP's variables, gradients fed."""
    arrays = w.make_arrays("mlp")
    graph = df.Graph()
    with graph.as_default():
        variables = [df.Variable(arrays[n], name=n) for n in w.parameter_names("mlp")]
        grads = [df.placeholder(df.float32, v.shape, name=v.op.name + "_grad") for v in variables]
        train = df.train.AdamOptimizer(w.LEARNING_RATE, epsilon=w.EPSILON).apply_gradients(
            zip(grads, variables)
        )
        init = df.global_variables_initializer()
    rng = np.random.default_rng(0)
    feed = {p: rng.standard_normal(p.shape.as_list()).astype(np.float32) * 1e-2 for p in grads}
    session = df.Session(graph=graph)
    session.run(init)
    return lambda: session.run(train, feed)


def training_step(workload: str):
    step, _ = g.graph_training(df, workload, w.make_arrays(workload))
    return step


def compare(name: str, make, rounds: int) -> str:
    """Times ``make()``'s step in a Session of its own per mode, in alternating rounds."""
    off = in_native_mode(make(), "off")
    force = in_native_mode(make(), "force")
    t_off, t_force = paired_medians([off, force], rounds)
    return f"{name:<34} {t_off * 1e3:9.3f} {t_force * 1e3:9.3f} {t_off / t_force:8.2f}"


def threshold_rows(rounds: int) -> list[str]:
    rows = []
    for log_size in range(14, 23):
        columns = 256
        batch = (1 << log_size) // columns
        rng = np.random.default_rng(1)
        graph = df.Graph()
        with graph.as_default():
            x = df.placeholder(df.float32, [batch, columns])
            b = df.placeholder(df.float32, [columns])
            y = df.nn.relu(x + b) * 0.5
        feed = {
            x: rng.standard_normal((batch, columns)).astype(np.float32),
            b: rng.standard_normal(columns).astype(np.float32),
        }
        sessions = {}
        for mode in ("off", "force"):
            session = df.Session(graph=graph)
            sessions[mode] = in_native_mode(lambda s=session, y=y, f=feed: s.run(y, f), mode)
        one_thread, blocks = make_threshold_variants()
        t = paired_medians(
            [sessions["off"], one_thread(sessions["force"]), blocks(sessions["force"])], rounds
        )
        rows.append(
            f"{1 << log_size:>10} {t[0] * 1e3:10.3f} {t[1] * 1e3:10.3f} {t[2] * 1e3:10.3f}"
            f" {t[1] / t[2]:8.2f}"
        )
    return rows


def make_threshold_variants():
    def with_threshold(threshold: int):
        def wrap(step):
            def run():
                before = native_arrays.PARALLEL_MIN_ELEMENTS
                native_arrays.PARALLEL_MIN_ELEMENTS = threshold
                try:
                    return step()
                finally:
                    native_arrays.PARALLEL_MIN_ELEMENTS = before

            return run

        return wrap

    return with_threshold(1 << 62), with_threshold(1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds (30)")
    parser.add_argument("--only", default=",".join(SECTIONS), help="sections, comma-separated")
    args = parser.parse_args(argv)
    if not compiler.native_available():
        print("numba is not installed: no native kernels to measure")
        return 1
    only = args.only.split(",")
    print(f"cores {os.cpu_count()}, rounds {args.rounds}; medians in ms")
    print(f"{'step':<34} {'native off':>9} {'forced':>9} {'off/force':>8}")
    if "adam" in only:
        print(compare("Adam alone, MLP variables", adam_alone, args.rounds))
    for workload in ("mlp", "lenet"):
        if workload in only:
            step = (lambda name: lambda: training_step(name))(workload)
            print(compare(f"{workload} training step (Adam)", step, args.rounds))
    if "threshold" in only:
        print()
        print("relu(x + b) * 0.5, float32, rows of 256: numpy, the kernel on 1 thread, in blocks")
        print(f"{'elements':>10} {'numpy':>10} {'1 thread':>10} {'blocks':>10} {'1t/blk':>8}")
        for row in threshold_rows(args.rounds):
            print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())

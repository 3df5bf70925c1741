"""Scale benchmarks: how building, planning, running and saving grow with the size of a graph.

    python benchmarks/bench_scale.py                 # 10k, 50k and 200k ops (a few minutes)
    python benchmarks/bench_scale.py --quick         # 10k and 50k ops, one repeat
    python benchmarks/bench_scale.py --sizes 5000 20000 80000

Two shapes of graph, each at every size (``ops`` counts every op of the graph, constants too):

- **chain**: one long dependency chain on a 16-element float64 placeholder, ``x * c + d`` then
  ``tanh``, over and over (5 ops per step, 2 of them constants).  Every pass has work on it:
  CSE merges the repeated constants into two that thousands of ops read, fusion turns the
  whole chain into a few kernels.
- **wide**: thousands of independent branches ``tanh(x * w_i)`` on the same placeholder,
  summed by one ``AddN`` (3 ops per branch): one tensor read by every branch and one op that
  reads them all; fusion makes one kernel per branch, each rewiring an input of the ``AddN``.

Figures per graph, in seconds: ``build`` (creating the ops in Python), ``first`` (the first
``Session.run``: pruning, graph passes, lowering and the executor's analysis, then the run),
``steady`` (a run with the plan cached: the median of several), each with the default pipeline
(``passes on``) and with every pass off (``passes off``); ``save`` and ``load``
(``df.io.save_graph`` / ``load_graph`` of the graph as built).  ``first/build`` is the ratio the
target names: the first run of a 50k-op graph within 2x its build time.

``growth`` compares each size step with ``n log n``: the time ratio between two sizes divided
by the ratio of ``n log n``.  About 1 (or less) means the step grew no worse than ``n log n``;
2 at a 4x step would mean quadratic.  Each figure's growth is shown for the first run, the
planning figure that used to be quadratic.

Timings are medians over repeats where a figure is repeated; the machine may be shared, so read
the ratios.  A 200k-op graph needs about 2 GB of memory.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine

# isort: split
import argparse
import gc
import math
import os
import statistics
import tempfile
import time

import numpy as np

import dataflow as df
from dataflow.passes import RewriterConfig

WIDTH = 16  # elements of the placeholder: the figures are about the graph, not the arrays

CONFIGS = {
    "on": df.ConfigProto(inter_op_parallelism_threads=1),
    "off": df.ConfigProto(
        inter_op_parallelism_threads=1,
        graph_options=df.GraphOptions(rewrite_options=RewriterConfig(disable_meta_optimizer=True)),
    ),
}


def chain_graph(ops: int):
    """About ``ops`` ops in one dependency chain: ``tanh(y * c + d)``, repeated."""
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, [WIDTH], name="x")
        y = x
        for _ in range(max(1, (ops - 1) // 5)):
            y = df.tanh(y * 0.75 + 0.125)
    return graph, x, y


def wide_graph(ops: int):
    """About ``ops`` ops: independent branches ``tanh(x * w_i)`` summed by one AddN."""
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, [WIDTH], name="x")
        branches = max(1, (ops - 2) // 3)
        y = df.add_n([df.tanh(x * (1.0 + i / branches)) for i in range(branches)])
    return graph, x, y


SHAPES = {"chain": chain_graph, "wide": wide_graph}


def timed(fn):
    """(seconds, result) of one call of ``fn``, with the garbage collector's work included
    (a cyclic collection triggered by the call is part of its cost)."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def median_of(fn, repeats: int) -> float:
    return statistics.median(timed(fn)[0] for _ in range(repeats))


def measure(shape: str, ops: int, repeats: int, tmp: str) -> dict:
    """Every figure of one graph."""
    gc.collect()
    build_times = []
    for _ in range(repeats):
        seconds, (graph, x, y) = timed(lambda: SHAPES[shape](ops))
        build_times.append(seconds)
    figures = {"ops": len(graph.get_operations()), "build": statistics.median(build_times)}
    feed = {x: np.linspace(-1.0, 1.0, WIDTH)}
    results = {}
    for passes, config in CONFIGS.items():
        firsts = []
        for _ in range(repeats):
            sess = df.Session(graph=graph, config=config)
            seconds, results[passes] = timed(lambda sess=sess: sess.run(y, feed))
            firsts.append(seconds)
        figures[f"first {passes}"] = statistics.median(firsts)
        figures[f"steady {passes}"] = median_of(lambda sess=sess: sess.run(y, feed), 5)
        sess.close()
    figures["same results"] = results["on"].tobytes() == results["off"].tobytes()
    path = os.path.join(tmp, f"{shape}_{ops}.dfg")
    figures["save"] = median_of(lambda: df.io.save_graph(graph, path), repeats)
    figures["load"] = median_of(lambda: df.io.load_graph(path), repeats)
    return figures


COLUMNS = ["build", "first on", "steady on", "first off", "steady off", "save", "load"]


def growth(previous: dict, current: dict, column: str) -> float:
    """The time ratio of two sizes over their ratio of ``n log n``."""
    n0, n1 = previous["ops"], current["ops"]
    return (current[column] / previous[column]) / ((n1 * math.log(n1)) / (n0 * math.log(n0)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10k and 50k ops, one repeat")
    parser.add_argument("--sizes", type=int, nargs="+", help="op counts (default 10k 50k 200k)")
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    args = parser.parse_args()
    sizes = args.sizes or ([10_000, 50_000] if args.quick else [10_000, 50_000, 200_000])
    print(describe_machine("1" if args.quick else "3 below 100k ops, else 1; steady: 5"))
    print("seconds per figure; growth: time ratio per size step over the n log n ratio")
    header = f"{'graph':<7}{'ops':>8}" + "".join(f"{c:>11}" for c in COLUMNS)
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes:
            print()
            print(header + f"{'first/build':>13}{'growth':>8}")
            previous = None
            for size in sizes:
                repeats = 1 if args.quick or size >= 100_000 else 3
                figures = measure(shape, size, repeats, tmp)
                row = f"{shape:<7}{figures['ops']:>8}"
                row += "".join(f"{figures[c]:>11.3f}" for c in COLUMNS)
                row += f"{figures['first on'] / figures['build']:>13.2f}"
                if previous is not None:
                    row += f"{growth(previous, figures, 'first on'):>8.2f}"
                if not figures["same results"]:
                    row += "  (passes on and off DIFFER)"
                print(row, flush=True)
                if previous is not None:
                    grown = [c for c in COLUMNS if not c.startswith("steady")]
                    steps = "  ".join(f"{c} {growth(previous, figures, c):.2f}" for c in grown)
                    print(f"{'':<15}growth: {steps}")
                previous = figures


if __name__ == "__main__":
    main()

"""Partitioned execution benchmarks, first section: what cutting a graph across in-process
devices costs against the same graph on one device.

    python benchmarks/bench_distributed.py            # full
    python benchmarks/bench_distributed.py --quick    # fewer repeats

1. **Per Send/Recv pair**: a chain of ``K`` scalar adds placed alternately on ``/cpu:0`` and
   ``/cpu:1`` (every edge crosses, ``K`` pairs) against the same chain on one device; the
   figure is (partitioned - one device) / K.
2. **Per cross-device loop iteration**: a ``while_loop`` of ``N`` iterations whose predicate
   is on ``/cpu:0`` and whose body is on ``/cpu:1`` (each iteration sends the predicate to the
   body's control loop and the loop variable both ways) against the same loop on one device;
   the figure is (partitioned - one device) / N.

Timings are medians over repeats, each variant timed in turn within every round; the machine
may be shared, so read the per-pair and per-iteration differences, not absolutes.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse

import numpy as np

import dataflow as df


def _chain(length: int, split: bool):
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [], name="x")
        value = x
        for k in range(length):
            with df.device(f"/cpu:{k % 2 if split else 0}"):
                value = value + 1.0
    return graph, x, value


def _loop(split: bool):
    graph = df.Graph()
    with graph.as_default():
        n = df.placeholder(df.int32, [], name="n")

        def cond(i, acc):
            with df.device("/cpu:0"):
                return i < n

        def body(i, acc):
            with df.device(f"/cpu:{1 if split else 0}"):
                return i + 1, acc * 0.5 + 1.0

        with df.device("/cpu:0"):
            out = df.while_loop(cond, body, [df.constant(0), df.constant(0.0)])[1]
    return graph, n, out


def _session_runner(graph, fetch, feed):
    # No graph passes: the chain of adds would be fused into one op on one device.
    config = df.ConfigProto(
        device_count={"CPU": 2},
        graph_options=df.GraphOptions(
            rewrite_options=df.RewriterConfig(disable_meta_optimizer=True)
        ),
    )
    sess = df.Session(graph=graph, config=config)
    sess.run(fetch, feed)
    return sess, (lambda: sess.run(fetch, feed))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 10 if args.quick else 40
    print(describe_machine(repeats))

    length = 64
    runners, sessions = [], []
    for split in (False, True):
        graph, x, out = _chain(length, split)
        sess, run = _session_runner(graph, out, {x: np.float32(0)})
        sessions.append(sess)
        runners.append(run)
    one, parted = paired_median_times(*runners, repeats=repeats)
    print(
        f"1. chain of {length} adds: one device {one * 1e3:.2f} ms, split on 2 devices "
        f"{parted * 1e3:.2f} ms ({length} Send/Recv pairs): "
        f"{(parted - one) / length * 1e6:.1f} us per Send/Recv pair"
    )

    iterations = 200
    runners = []
    for split in (False, True):
        graph, n, out = _loop(split)
        sess, run = _session_runner(graph, out, {n: iterations})
        sessions.append(sess)
        runners.append(run)
    one, parted = paired_median_times(*runners, repeats=max(3, repeats // 4))
    print(
        f"2. while_loop of {iterations} iterations: one device {one * 1e3:.2f} ms, predicate "
        f"and body on 2 devices {parted * 1e3:.2f} ms: "
        f"{(parted - one) / iterations * 1e6:.1f} us per cross-device iteration "
        f"({parted / one:.1f}x)"
    )
    for sess in sessions:
        sess.close()


if __name__ == "__main__":
    main()

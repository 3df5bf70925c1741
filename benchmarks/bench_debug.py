"""What the debugging tools cost: prints figures side by side with the plain run; asserts nothing.

    python benchmarks/bench_debug.py            # all
    python benchmarks/bench_debug.py --quick    # fewer repeats

For a ``while_loop`` of 2000 iterations (int counter, float accumulator; 16 ops per iteration)
and for a chain of 1000 scalar adds, each variant is timed in turn within every round (so all
see the same load), and its median is printed with its ratio to the plain run:

- plain: ``sess.run(fetch)``; the reference.
- empty RunOptions: ``options=df.RunOptions()`` that watches nothing; must cost nothing (the
  executor keeps its fast path).
- run_metadata: per-op statistics, dead firings included (what the trace and the overlay use).
- watch 1 tensor: one ``DebugIdentity`` watch (one copy per iteration).
- watch all, summaries: every tensor with ``DebugNumericSummary`` (what ``find_inf_or_nan``
  does).
- watch all, copies: every tensor with ``DebugIdentity``.

Then the time to turn the loop's metadata into a Chrome trace and into the overlay's DOT text.
Timings are medians over repeats; the machine may be shared, so read ratios, not absolutes.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse

import dataflow as df
from dataflow.render import graph_to_digraph


def loop_graph(iterations: int):
    graph = df.Graph()
    with graph.as_default():
        _, total = df.while_loop(
            lambda i, t: i < iterations,
            lambda i, t: (i + 1, df.add(t, 0.5, name="accumulate")),
            [df.constant(0), df.constant(0.0)],
            name="loop",
        )
    return graph, total, "loop/accumulate"


def chain_graph(length: int):
    graph = df.Graph()
    with graph.as_default():
        value = df.placeholder(df.float64, [], name="x")
        for k in range(length):
            value = df.add(value, 1.0, name=f"add{k}")
    return graph, value, f"add{length // 2}"


def variants(sess, graph, fetch, watched_op, feed):
    one = df.RunOptions()
    df.debug.add_debug_tensor_watch(one, watched_op, 0)
    summaries = df.RunOptions()
    df.debug.watch_graph(summaries, graph, debug_ops="DebugNumericSummary")
    copies = df.RunOptions()
    df.debug.watch_graph(copies, graph)
    empty = df.RunOptions()
    return [
        ("plain", lambda: sess.run(fetch, feed)),
        ("empty RunOptions", lambda: sess.run(fetch, feed, options=empty)),
        ("run_metadata", lambda: sess.run(fetch, feed, run_metadata=df.RunMetadata())),
        (
            "watch 1 tensor",
            lambda: sess.run(fetch, feed, options=one, run_metadata=df.RunMetadata()),
        ),
        (
            "watch all, summaries",
            lambda: sess.run(fetch, feed, options=summaries, run_metadata=df.RunMetadata()),
        ),
        (
            "watch all, copies",
            lambda: sess.run(fetch, feed, options=copies, run_metadata=df.RunMetadata()),
        ),
    ]


def report(title: str, graph, fetch, watched_op, feed, repeats: int) -> None:
    config = df.ConfigProto(inter_op_parallelism_threads=1)
    with df.Session(graph=graph, config=config) as sess:
        named = variants(sess, graph, fetch, watched_op, feed)
        medians = paired_median_times(*(fn for _, fn in named), repeats=repeats)
    print(title)
    plain = medians[0]
    for (name, _), median in zip(named, medians):
        print(f"  {name:<22} {median * 1e3:9.2f} ms   ratio {median / plain:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 5 if args.quick else 15
    print(describe_machine(repeats))

    graph, total, watched = loop_graph(2000)
    report("while_loop of 2000 iterations", graph, total, watched, None, repeats)
    graph_chain, end, watched_chain = chain_graph(1000)
    x = graph_chain.get_tensor_by_name("x:0")
    report("chain of 1000 scalar adds", graph_chain, end, watched_chain, {x: 0.0}, repeats)

    metadata = df.RunMetadata()
    with df.Session(graph=graph) as sess:
        sess.run(total, run_metadata=metadata)
    trace_time, overlay_time = paired_median_times(
        lambda: df.debug.chrome_trace(metadata),
        lambda: graph_to_digraph(total, run_metadata=metadata).source,
        repeats=repeats,
    )
    print(f"turning the loop's metadata ({len(metadata.step_stats)} op executions) into")
    print(f"  a Chrome trace          {trace_time * 1e3:9.2f} ms")
    print(f"  the overlay's DOT text  {overlay_time * 1e3:9.2f} ms")


if __name__ == "__main__":
    main()

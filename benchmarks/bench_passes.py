"""Graph pass benchmarks: prints figures side by side with the pipeline off, in one run.

    python benchmarks/bench_passes.py            # all five
    python benchmarks/bench_passes.py --quick    # fewer repeats

1. A chain of 30 elementwise ops on 4M-element float64 arrays: time with the default pipeline
   against every pass off (target: at least 2x faster), and peak memory with the pipeline, in
   units of one array, the fed input included (target: at most 2).
2. Constant folding on a fully constant subgraph: ops before and after (target: every op of
   the subgraph folded into the one constant it computes).
3. Common subexpression elimination on 1000 copies of one subexpression: ops before and after
   (target: the unique ops only).
4. A model with a loop and a cond, saved with ``df.io`` and loaded back, optimized by the
   ``optimize`` command's code path too: results of the loaded graphs against the original,
   compared bit for bit.

5. Each pass of the default pipeline alone (with ``pruning`` after it, to drop what it made
   unused) on a program written to exercise it: ops before and after, time with every pass
   off against that pass alone, and the results compared bit for bit.

Timings are medians over repeats, each pair timed in turn within a round; the machine may be
shared, so read the ratios.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse
import os
import tempfile
import time
import tracemalloc

import numpy as np

import dataflow as df
from dataflow.passes import RewriterConfig, optimize

OFF = df.ConfigProto(
    inter_op_parallelism_threads=1,
    graph_options=df.passes.GraphOptions(
        rewrite_options=RewriterConfig(disable_meta_optimizer=True)
    ),
)
ON = df.ConfigProto(inter_op_parallelism_threads=1)


# -- 1. elementwise chain ---------------------------------------------------------------------
def elementwise_chain(x, m=df):
    """30 elementwise ops: scale, shift, clamp, fold and square, six times over."""
    for k in range(6):
        x = m.multiply(x, 0.999 - k * 1e-3)
        x = m.add(x, 0.25)
        x = m.maximum(x, -4.0)
        x = m.abs(x)
        x = m.subtract(x, 0.5)
    return x


def bench_chain(repeats: int, size: int = 4 * 1024 * 1024) -> dict:
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, shape=[size])
        y = elementwise_chain(x)
    data = np.random.default_rng(0).standard_normal(size)
    sessions = {
        "off": df.Session(graph=graph, config=OFF),
        "on": df.Session(graph=graph, config=ON),
    }
    results = {k: s.run(y, {x: data}) for k, s in sessions.items()}
    assert results["on"].tobytes() == results["off"].tobytes()
    expected = elementwise_chain(data, np)
    assert np.array_equal(results["on"], expected)
    del results
    peaks = {}
    for name, sess in sessions.items():
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        result = sess.run(y, {x: data})
        peaks[name] = (tracemalloc.get_traced_memory()[1] - baseline + data.nbytes) / data.nbytes
        tracemalloc.stop()
        del result
    off, on = paired_median_times(
        lambda: sessions["off"].run(y, {x: data}),
        lambda: sessions["on"].run(y, {x: data}),
        repeats=repeats,
    )
    for sess in sessions.values():
        sess.close()
    return {
        "ops": sum(op.type not in ("Const", "Placeholder") for op in graph.get_operations()),
        "off_ms": off * 1e3,
        "on_ms": on * 1e3,
        "speedup": off / on,
        "peak_off": peaks["off"],
        "peak_on": peaks["on"],
    }


# -- 2. constant folding --------------------------------------------------------------------
def bench_constant_folding() -> dict:
    graph = df.Graph()
    with graph.as_default():
        w = df.constant(np.arange(16, dtype=np.float32).reshape(4, 4) / 10, name="w")
        v = df.constant(np.ones([4, 1], np.float32), name="v")
        h = v
        for _ in range(10):
            h = df.tanh(df.matmul(w, h) * 0.5 + 0.1)
        y = df.reduce_sum(df.transpose(h), name="y")
    item, reports = optimize(graph, [y], [], ["constant_folding", "pruning"])
    with df.Session(graph=graph, config=OFF) as sess:
        expected = sess.run(y)
    with df.Session(graph=item.graph, config=OFF) as sess:
        got = sess.run(item.fetches[0])
    return {
        "before": len(graph.get_operations()),
        "after": len(item.graph.get_operations()),
        "after_types": sorted({op.type for op in item.graph.get_operations()}),
        "folded": reports[0].counts.get("folded", 0),
        "bitwise": np.asarray(expected).tobytes() == np.asarray(got).tobytes(),
    }


# -- 3. common subexpressions -----------------------------------------------------------------
def bench_cse(copies: int = 1000) -> dict:
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [8], name="x")
        outputs = [df.tanh(x * 2.0 + 1.0) - df.exp(x) for _ in range(copies)]
        total = df.add_n(outputs)
    start = time.perf_counter()
    item, reports = optimize(graph, [total], [x], ["common_subexpression", "pruning"])
    seconds = time.perf_counter() - start
    feed = {x: np.linspace(-1, 1, 8, dtype=np.float32)}
    with df.Session(graph=graph, config=OFF) as sess:
        expected = sess.run(total, feed)
    with df.Session(graph=item.graph, config=OFF) as sess:
        got = sess.run(item.fetches[0], {item.feeds[0]: feed[x]})
    return {
        "before": len(graph.get_operations()),
        "after": len(item.graph.get_operations()),
        "merged": reports[0].counts.get("merged", 0),
        "seconds": seconds,
        "bitwise": expected.tobytes() == got.tobytes(),
    }


# -- 4. saved graphs ------------------------------------------------------------------------
def model():
    x = df.placeholder(df.float32, [64], name="x")
    n = df.placeholder(df.int32, [], name="n")
    w = df.constant(np.linspace(-1, 1, 64, dtype=np.float32), name="w")

    def body(i, acc):
        step = df.cond(i % 2 > 0, lambda: df.tanh(acc * w), lambda: acc * 0.5 + w)
        return i + 1, step

    _, out = df.while_loop(lambda i, a: i < n, body, [df.constant(0), x], name="loop")
    return df.identity(df.reduce_mean(out * 1.0) + out, name="y")


def bench_saved_graph() -> dict:
    graph = df.Graph()
    with graph.as_default():
        model()
    feed = {"x:0": np.linspace(-2, 2, 64, dtype=np.float32), "n:0": 9}
    checks = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.dfg")
        df.io.save_graph(graph, path)
        item, _ = optimize(graph, ["y:0"], ["x:0", "n:0"])
        optimized_path = os.path.join(tmp, "model.opt.dfg")
        df.io.save_graph(item.graph, optimized_path)
        with df.Session(graph=graph, config=OFF) as sess:
            expected = sess.run("y:0", feed)
        for name, source, config in (
            ("original, default pipeline", graph, ON),
            ("loaded, pipeline off", df.io.load_graph(path), OFF),
            ("loaded, default pipeline", df.io.load_graph(path), ON),
            ("loaded optimized file", df.io.load_graph(optimized_path), OFF),
        ):
            with df.Session(graph=source, config=config) as sess:
                checks[name] = sess.run("y:0", feed).tobytes() == expected.tobytes()
        checks["ops"] = (len(graph.get_operations()), len(item.graph.get_operations()))
    return checks


# -- 5. each pass alone ---------------------------------------------------------------------
SIZE = 1024 * 1024


def arithmetic_program():
    x = df.placeholder(df.float64, [SIZE // 1024, 1024], name="x")
    y = df.transpose(df.transpose(df.negative(df.negative(x)))) * 1.0 + 0.0
    return df.reshape(df.reshape(y, [-1]), [1024, -1]), {x: _data([SIZE // 1024, 1024])}


def loop_program():
    x = df.placeholder(df.float64, [SIZE // 8], name="x")
    _, total = df.while_loop(
        lambda i, t: i < 20,
        lambda i, t: (i + 1, t + df.tanh(x * 3.0) * df.exp(x)),  # the product is invariant
        [0, df.zeros([SIZE // 8], df.float64)],
    )
    return total, {x: _data([SIZE // 8])}


def chain_program():
    x = df.placeholder(df.float64, [SIZE], name="x")
    return elementwise_chain(x), {x: _data([SIZE])}


def dead_work_program():
    x = df.placeholder(df.float64, [SIZE], name="x")
    keep = df.cond(df.constant(True), lambda: df.sin(x), lambda: df.cos(x) * df.exp(x))
    return keep + 1.0, {x: _data([SIZE])}


def constant_program():
    x = df.placeholder(df.float64, [SIZE], name="x")
    table = df.constant(np.linspace(0, 1, SIZE))
    scale = df.reduce_mean(df.exp(df.sin(table) * 2.0))  # the same on every run
    return x * scale, {x: _data([SIZE])}


def cse_program():
    x = df.placeholder(df.float64, [SIZE], name="x")
    return df.add_n([df.tanh(x * 2.0) for _ in range(8)]), {x: _data([SIZE])}


def _data(shape):
    return np.random.default_rng(5).standard_normal(shape)


# (pass, program, what it shows).  Pruning is measured on its own program, after constant
# folding: a cond on a constant, whose dead branch folding cuts off and pruning then drops.  It
# saves no time there, since a run's plan never holds ops its fetches cannot reach: pruning
# keeps the graph (and the consumer counts later passes read) to what can run.
EACH_PASS = [
    ("constant_folding", constant_program, "x times a statistic of a 1M constant"),
    ("arithmetic", arithmetic_program, "x*1, +0, double negation, transpose, reshape"),
    ("common_subexpression", cse_program, "8 copies of tanh(2x)"),
    ("loop_invariant_motion", loop_program, "tanh(3x)*exp(x) out of a 20-iteration loop"),
    ("elementwise_fusion", chain_program, "the 30-op chain on 1M float64"),
    ("inplace", chain_program, "the same chain, each op writing into its input"),
]


def _config(passes) -> df.ConfigProto:
    """A Session config that runs exactly ``passes`` (none at all when empty)."""
    if not passes:
        return OFF
    return df.ConfigProto(
        inter_op_parallelism_threads=1,
        graph_options=df.passes.GraphOptions(
            rewrite_options=RewriterConfig(optimizers=list(passes))
        ),
    )


def bench_each_pass(repeats: int) -> list:
    rows = []
    cases = [(name, build, what, [name, "pruning"]) for name, build, what in EACH_PASS]
    cases.append(("pruning", dead_work_program, "the dead branch of a constant cond", None))
    for name, build, what, passes in cases:
        graph = df.Graph()
        with graph.as_default():
            fetch, feed = build()
        if passes is None:  # pruning, after constant folding made a branch unreachable
            baseline_passes, passes = ["constant_folding"], ["constant_folding", "pruning"]
        else:
            baseline_passes = []
        feeds = list(feed)
        before, _ = optimize(graph, [fetch], feeds, baseline_passes)
        after, reports = optimize(graph, [fetch], feeds, passes)
        counts = {k: v for r in reports if r.name == name for k, v in r.counts.items()}
        sessions = [df.Session(graph=graph, config=_config(p)) for p in (baseline_passes, passes)]
        off_value, on_value = (s.run(fetch, feed) for s in sessions)
        off, on = paired_median_times(
            *(lambda s=s, f=fetch, d=feed: s.run(f, d) for s in sessions), repeats=repeats
        )
        peaks = []
        for sess in sessions:
            tracemalloc.start()
            sess.run(fetch, feed)
            peaks.append(tracemalloc.get_traced_memory()[1] / (SIZE * 8))
            tracemalloc.stop()
            sess.close()
        rows.append(
            {
                "name": name,
                "what": what,
                "counts": counts,
                "ops": (len(before.graph.get_operations()), len(after.graph.get_operations())),
                "ms": (off * 1e3, on * 1e3),
                "peak": peaks,
                "bitwise": np.asarray(off_value).tobytes() == np.asarray(on_value).tobytes(),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 3 if args.quick else 9
    print(describe_machine(repeats))

    r = bench_chain(repeats)
    print(
        f"1. {r['ops']}-op elementwise chain on 4M float64: pipeline off {r['off_ms']:.0f} ms, "
        f"default pipeline {r['on_ms']:.0f} ms -> {r['speedup']:.2f}x faster  (target >= 2x)"
    )
    print(
        f"   peak memory in arrays, input included: off {r['peak_off']:.2f}, "
        f"default pipeline {r['peak_on']:.2f}  (target <= 2)"
    )

    r = bench_constant_folding()
    print(
        f"2. constant folding of a fully constant subgraph: {r['before']} ops -> {r['after']} "
        f"({', '.join(r['after_types'])}); {r['folded']} ops folded; "
        f"bitwise equal: {r['bitwise']}"
    )

    r = bench_cse()
    print(
        f"3. 1000 copies of one subexpression: {r['before']} ops -> {r['after']} "
        "(x, 2 constants, Mul, Add, Tanh, Exp, Sub, AddN) "
        f"({r['merged']} merged, {r['seconds'] * 1e3:.0f} ms); bitwise equal: {r['bitwise']}"
    )

    r = bench_saved_graph()
    before, after = r.pop("ops")
    print(f"4. saved graph with a loop and a cond ({before} ops; optimized file {after} ops):")
    for name, same in r.items():
        print(f"   {name}: {'bit for bit equal' if same else 'DIFFERENT'}")

    print("5. each pass alone (then pruning) against every pass off; time per run, and peak")
    print("   memory in 1M-float64 arrays, outputs included:")
    for r in bench_each_pass(repeats):
        (ops_off, ops_on), (ms_off, ms_on) = r["ops"], r["ms"]
        did = ", ".join(f"{v} {k}" for k, v in r["counts"].items()) or "no change"
        print(f"   {r['name']}: {r['what']}")
        print(
            f"      {did}; {ops_off} -> {ops_on} ops; {ms_off:.1f} -> {ms_on:.1f} ms "
            f"({ms_off / ms_on:.2f}x); peak {r['peak'][0]:.2f} -> {r['peak'][1]:.2f}; "
            f"bitwise equal: {r['bitwise']}"
        )


if __name__ == "__main__":
    main()

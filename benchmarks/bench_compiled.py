"""Compiled regions (`dataflow.compiler`) against the interpreter, numpy and TensorFlow 1.x.

    python benchmarks/bench_compiled.py
    python benchmarks/bench_compiled.py --tensorflow-python /work/tfvenv/bin/python
    python benchmarks/bench_compiled.py --quick

1. A chain of 1000 scalar float32 adds (``y = y + one``, one fed placeholder), per op:
   dataflow interpreted and compiled (graph passes off, so that each add is a node: the
   elementwise fusion pass would make the chain one kernel), one ``np.add`` call per op from a
   Python loop (the floor of an interpreter of numpy calls), and TensorFlow 1.x graph mode
   (Grappler off, so that its executor runs every add).  Target: compiled at most TF1's cost.
   Also the first-run cost: a first run interpreted and a first run compiled, each in a new
   Session (lowering included), and the compilation alone.
   The same chain with the default graph passes on, where elementwise fusion makes it one
   ``FusedElementwise`` op: interpreted (its kernel) and compiled (its steps written out).

2. A 10k-iteration ``while_loop`` (``i + 1``, ``a + cast(i)`` in float32), per iteration:
   dataflow interpreted and compiled (the whole loop one generated function), and TensorFlow
   1.x graph mode with control flow v1.  Target: compiled at most TF1's cost.  Fewer repeats
   (a fifth): one interpreted run takes about a second.

Where numba is installed, both also run natively (`dataflow.compiler.native`, mode "force":
the chain and the loop as machine code), with the first-run cost of that tier: numba
compiling, and loading the machine code from its disk cache.  Target: a tenth of TF1's cost.

Timings are medians over repeats, taken in turn within each round so that all see the same
load; the machine may be shared, so read ratios, not absolutes.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import (
    describe_machine,
    paired_median_times,
    tensorflow_figures,
    try_import_tensorflow,
)

# isort: split
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

LENGTH = 1000
ITERATIONS = 10_000


def _chain(api, length: int):
    x = api.placeholder(api.float32, shape=[], name="x")
    one = api.constant(1.0, dtype=api.float32)
    y = x
    for _ in range(length):
        y = y + one
    return x, y


def _dataflow():
    import dataflow as df

    return df


def _session(df, graph, passes: bool = False):
    if passes:
        return df.Session(graph=graph)
    rewrite = df.passes.RewriterConfig(disable_meta_optimizer=True)
    config = df.ConfigProto(graph_options=df.passes.GraphOptions(rewrite_options=rewrite))
    return df.Session(graph=graph, config=config)


def bench_chain(repeats: int, length: int = LENGTH) -> dict:
    """Per-op nanoseconds of the chain interpreted, compiled and as numpy calls."""
    df = _dataflow()
    from dataflow import compiler

    graph = df.Graph()
    with graph.as_default():
        x, y = _chain(df, length)
    start = np.float32(0.5)
    feed = {x: start}
    compiler.set_mode("off")
    interpreted = _session(df, graph)
    reference = interpreted.run(y, feed)
    compiler.set_mode("force")
    compiler.set_native("off")
    compiled = _session(df, graph)
    result = compiled.run(y, feed)
    assert type(result) is type(reference) and result.tobytes() == reference.tobytes()
    plan = next(iter(compiled._plans.values()))
    assert plan.compiled and max(len(r.members) for r in plan.compiled.regions) >= length
    native = _native_session(df, compiler, graph, y, feed, reference)

    add, one = np.add, np.float32(1.0)

    def numpy_loop():
        v = start
        for _ in range(length):
            v = add(v, one)
        return v

    def run_in(mode, sess):
        # A plan not compiled yet follows the mode of the run that reaches it.
        compiler.set_mode(mode)
        return sess.run(y, feed)

    runs = [lambda: run_in("off", interpreted), lambda: run_in("force", compiled), numpy_loop]
    if native is not None:
        runs.append(lambda: run_in("force", native))
    times = paired_median_times(*runs, repeats=repeats)
    names = ("interpreted", "compiled", "numpy", "native")
    figures = dict(zip(names, (t / length * 1e9 for t in times)))
    for sess in (interpreted, compiled, native):
        if sess is not None:
            sess.close()
    compiler.set_native("off")
    figures.update(first_run(df, compiler, graph, y, feed, max(3, repeats // 5)))
    if native is not None:
        figures.update(first_native_run(df, compiler, graph, y, feed, 3))
    return figures


def _native_session(df, compiler, graph, fetches, feed, reference):
    """A Session whose plan runs natively (numba, `dataflow.compiler.native`), checked
    against ``reference``, or None without numba."""
    if not compiler.native_available():
        return None
    compiler.set_native("force")
    sess = _session(df, graph)
    result = sess.run(fetches, feed)
    flat = result if isinstance(result, list) else [result]
    expected = reference if isinstance(reference, list) else [reference]
    assert [v.tobytes() for v in flat] == [v.tobytes() for v in expected]
    regions = next(iter(sess._plans.values())).compiled.regions
    assert any(getattr(r.function, "native", None) is not None for r in regions)
    return sess


def first_native_run(df, compiler, graph, fetches, feed, repeats: int) -> dict:
    """Milliseconds of a first run in a new Session in native "force" mode: with numba's
    compilation (an empty cache directory), and with its machine code loaded from the disk
    cache (as a new process finds it)."""
    import tempfile

    from dataflow.compiler import native

    cold, warm = [], []
    previous = os.environ.get("DATAFLOW_CACHE_DIR")
    compiler.set_mode("force")
    compiler.set_native("force")
    try:
        for _ in range(repeats):
            with tempfile.TemporaryDirectory() as directory:
                os.environ["DATAFLOW_CACHE_DIR"] = directory
                for samples in (cold, warm):
                    native._modules.clear()  # as in a new process
                    with _session(df, graph) as sess:
                        began = time.perf_counter()
                        sess.run(fetches, feed)
                        samples.append((time.perf_counter() - began) * 1e3)
    finally:
        if previous is None:
            os.environ.pop("DATAFLOW_CACHE_DIR", None)
        else:
            os.environ["DATAFLOW_CACHE_DIR"] = previous
    return {"first_native_ms": statistics.median(cold), "first_cached_ms": statistics.median(warm)}


def bench_fused_chain(repeats: int, length: int = LENGTH) -> dict:
    """Per-op nanoseconds of the chain with the default passes, interpreted and compiled."""
    df = _dataflow()
    from dataflow import compiler

    graph = df.Graph()
    with graph.as_default():
        x, y = _chain(df, length)
    feed = {x: np.float32(0.5)}
    compiler.set_native("off")
    sessions = {mode: _session(df, graph, passes=True) for mode in ("off", "force")}

    def run_in(mode):
        # A plan not compiled yet follows the mode of the run that reaches it.
        compiler.set_mode(mode)
        return sessions[mode].run(y, feed)

    interpreted, compiled = run_in("off"), run_in("force")
    assert type(compiled) is type(interpreted) and compiled.tobytes() == interpreted.tobytes()
    assert not next(iter(sessions["off"]._plans.values())).compiled

    times = paired_median_times(lambda: run_in("off"), lambda: run_in("force"), repeats=repeats)
    for sess in sessions.values():
        sess.close()
    return dict(zip(("interpreted", "compiled"), (t / length * 1e9 for t in times)))


def first_run(df, compiler, graph, y, feed, repeats: int) -> dict:
    """Milliseconds of a first run in a new Session, interpreted and compiled, and of the
    compilation alone (`compiler.compile_program` on the lowered plan)."""
    samples: dict[str, list] = {"first_interpreted_ms": [], "first_compiled_ms": []}
    compile_samples = []
    for _ in range(repeats):
        for mode, key in (("off", "first_interpreted_ms"), ("force", "first_compiled_ms")):
            compiler.set_mode(mode)
            with _session(df, graph) as sess:
                began = time.perf_counter()
                sess.run(y, feed)
                samples[key].append((time.perf_counter() - began) * 1e3)
                if mode == "off":
                    program = next(iter(sess._plans.values())).executable.program
                    began = time.perf_counter()
                    compiler.compile_program(program, 1)
                    compile_samples.append((time.perf_counter() - began) * 1e3)
    figures = {key: statistics.median(values) for key, values in samples.items()}
    figures["compile_ms"] = statistics.median(compile_samples)
    return figures


def _loop(api, iterations: int):
    limit = api.placeholder(api.int32, shape=[], name="limit")
    i, a = api.while_loop(
        lambda i, a: i < limit,
        lambda i, a: (i + 1, a + api.cast(i, api.float32)),
        [api.constant(0), api.constant(0.0)],
    )
    return limit, {limit: iterations}, [i, a]


def bench_loop(repeats: int, iterations: int = ITERATIONS) -> dict:
    """Per-iteration nanoseconds of the loop interpreted and compiled, and compilation's
    first-run cost."""
    df = _dataflow()
    from dataflow import compiler

    graph = df.Graph()
    with graph.as_default():
        _, feed, fetches = _loop(df, iterations)
    compiler.set_mode("off")
    interpreted = _session(df, graph)
    reference = interpreted.run(fetches, feed)
    compiler.set_mode("force")
    compiler.set_native("off")
    compiled = _session(df, graph)
    result = compiled.run(fetches, feed)
    assert [v.tobytes() for v in result] == [v.tobytes() for v in reference]
    plan = next(iter(compiled._plans.values()))
    assert plan.compiled and any(hasattr(r, "frame_name") for r in plan.compiled.regions)
    native = _native_session(df, compiler, graph, fetches, feed, reference)

    def run_in(mode, sess):
        compiler.set_mode(mode)
        return sess.run(fetches, feed)

    runs = [lambda: run_in("off", interpreted), lambda: run_in("force", compiled)]
    if native is not None:
        runs.append(lambda: run_in("force", native))
    times = paired_median_times(*runs, repeats=repeats)
    figures = dict(
        zip(("interpreted", "compiled", "native"), (t / iterations * 1e9 for t in times))
    )
    for sess in (interpreted, compiled, native):
        if sess is not None:
            sess.close()
    small_feed = {key: 10 for key in feed}
    compiler.set_native("off")
    figures.update(first_run(df, compiler, graph, fetches, small_feed, 3))
    if native is not None:
        figures.update(first_native_run(df, compiler, graph, fetches, small_feed, 3))
    return figures


def bench_tensorflow_loop(tf1, repeats: int, iterations: int = ITERATIONS) -> dict:
    tf1.disable_control_flow_v2()
    graph = tf1.Graph()
    with graph.as_default():
        _, feed, fetches = _loop(tf1, iterations)
    with tf1.Session(graph=graph) as sess:
        assert sess.run(fetches, feed)[0] == iterations
        (seconds,) = paired_median_times(lambda: sess.run(fetches, feed), repeats=repeats)
    return {"tensorflow_loop": seconds / iterations * 1e9}


def bench_tensorflow(tf1, repeats: int) -> dict:
    return {
        **bench_tensorflow_chain(tf1, repeats),
        **bench_tensorflow_loop(tf1, max(3, repeats // 5)),
    }


def bench_tensorflow_chain(tf1, repeats: int, length: int = LENGTH) -> dict:
    graph = tf1.Graph()
    with graph.as_default():
        x, y = _chain(tf1, length)
    rewrite = tf1.OptimizerOptions(opt_level=tf1.OptimizerOptions.L0)
    config = tf1.ConfigProto(
        graph_options=tf1.GraphOptions(optimizer_options=rewrite),
        inter_op_parallelism_threads=1,
        intra_op_parallelism_threads=1,
    )
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    with tf1.Session(graph=graph, config=config) as sess:
        feed = {x: np.float32(0.5)}
        assert sess.run(y, feed) == np.float32(0.5) + length
        (seconds,) = paired_median_times(lambda: sess.run(y, feed), repeats=repeats)
    return {"tensorflow": seconds / length * 1e9}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--repeats", type=int, help="repeats of every figure")
    parser.add_argument("--tensorflow-python", help="a Python with TensorFlow, for its figures")
    parser.add_argument("--tensorflow-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    repeats = args.repeats or (11 if args.quick else 51)
    if args.tensorflow_only:
        print(json.dumps(bench_tensorflow(try_import_tensorflow(), repeats)))
        return
    tf = tensorflow_figures(__file__, bench_tensorflow, repeats, args.tensorflow_python)
    print(
        describe_machine(
            repeats,
            tensorflow="not installed" if tf is None else "yes",
            python=sys.version.split()[0],
        )
    )
    r = bench_chain(repeats)
    tiers = [name for name in ("interpreted", "compiled", "native") if name in r]
    print(f"1. scalar float32 add chain ({LENGTH} ops), ns per op (median):")
    for name in tiers:
        print(f"   dataflow {name:12}  {r[name]:7.0f}  ({r[name] / r['numpy']:.2f}x numpy)")
    print(f"   numpy, one np.add/op  {r['numpy']:7.0f}")
    if tf is not None:
        ratios = ", ".join(f"{name} / TF1 = {r[name] / tf['tensorflow']:.3f}" for name in tiers[1:])
        print(f"   TensorFlow 1.x graph  {tf['tensorflow']:7.0f}  ({ratios})")
    print(
        f"   first run in a new Session: interpreted {r['first_interpreted_ms']:.1f} ms, "
        f"compiled {r['first_compiled_ms']:.1f} ms (compilation alone {r['compile_ms']:.1f} ms)"
    )
    _print_first_native(r)
    fused = bench_fused_chain(repeats)
    print("   graph passes on (the chain is one FusedElementwise op), ns per op (median):")
    for name in ("interpreted", "compiled"):
        print(f"   dataflow {name:12}  {fused[name]:7.0f}  ({fused[name] / r['numpy']:.2f}x numpy)")

    r = bench_loop(max(3, repeats // 5))
    tiers = [name for name in ("interpreted", "compiled", "native") if name in r]
    print(f"2. while_loop of {ITERATIONS} iterations (i + 1, a + cast(i)), ns per iteration:")
    for name in tiers:
        print(f"   dataflow {name:12}  {r[name]:7.0f}")
    if tf is not None:
        loop = tf["tensorflow_loop"]
        ratios = ", ".join(f"{name} / TF1 = {r[name] / loop:.3f}" for name in tiers[1:])
        print(f"   TensorFlow 1.x graph  {loop:7.0f}  ({ratios})")
    print(
        f"   first run (10 iterations) in a new Session: interpreted "
        f"{r['first_interpreted_ms']:.1f} ms, compiled {r['first_compiled_ms']:.1f} ms "
        f"(compilation alone {r['compile_ms']:.1f} ms)"
    )
    _print_first_native(r)


def _print_first_native(r: dict) -> None:
    if "first_native_ms" in r:
        print(
            f'   first run, native "force" (compiled before the run): numba compiling '
            f"{r['first_native_ms']:.1f} ms, loading from the disk cache "
            f'{r["first_cached_ms"]:.1f} ms; "auto" compiles in the background instead'
        )


if __name__ == "__main__":
    main()

"""Compiled plans (`dataflow.client.compiler`) against the interpreter, numpy, TensorFlow 1.x and
JAX.

    python benchmarks/bench_compiled.py
    python benchmarks/bench_compiled.py --quick \\
        --tensorflow-python /work/tfvenv/bin/python --jax-python /work/jaxvenv/bin/python

Every workload of issue 14, each in one table with a column per way of running it:

- ``interpreted``: dataflow with compilation off (``compiler.set_mode("off")``);
- ``compiled``: every region and loop compiled to generated Python (``"force"``, native off);
- ``native``: the same with the native tier forced (``compiler.set_native("force")``), printed
  only where ``compiler.native_available()`` exists and is true;
- ``numpy``: hand-written numpy, where one applies (the floor of an interpreter of numpy calls);
- ``TF1``: TensorFlow 1.x graph mode with control flow v1 as users run it (a default
  ``ConfigProto``: Grappler and the graph optimizer on, default thread pools), in the Python
  given by ``--tensorflow-python`` (or here, when TensorFlow is importable);
- ``TF1 strip``: the same with Grappler and the L0 optimizer off and the workload's thread
  pools (``chain`` one thread), where that differs: TensorFlow's executor running every op;
- ``JAX``: ``lax.while_loop`` under ``jit``, for the loop workloads, as the limit, measured in the
  Python given by ``--jax-python`` (JAX is never a dependency of dataflow).

The workloads:

1. ``chain``: 1000 scalar float32 adds (``y = y + one``, one fed placeholder), ns per op, graph
   passes off so each add is a node (fusion would make the chain one kernel).  As shipped,
   Grappler folds TensorFlow's chain into a few ops; ``TF1 strip`` runs every add.
   Target: compiled at most TF1, native a tenth.
   Also the same chain with the default passes, where fusion makes it one ``FusedElementwise``.
2. ``loop``: a 10k-iteration ``while_loop`` (``i + 1``, ``a + cast(i)``), ns per iteration.
3. ``cond_loop``: the same with a ``cond`` in the body (even ``i`` adds, odd ``i`` subtracts).
4. ``nested_loop``: a 100x100 nested ``while_loop``, ns per inner iteration.
   Target for 2-4: compiled at most TF1, native a tenth of TF1.
5. ``mlp_step``: one training step of the digits MLP (`programs.digits_mlp`, a batch of 64), and
   ``rnn_step``: one training step of an Elman RNN over 20 time steps written as a
   ``while_loop`` (the backward loop included), time per step with the default graph passes.
6. ``big_chain``: a 20-op elementwise chain on 100 MB of float32, default passes, against the
   same 20 numpy calls.  Target: at most 0.5x numpy on 2 cores.

Under each table, the first-run cost: a first run in a new Session in each column (lowering and
compilation included) and ``compiler.compile_program`` alone on the lowered plan; for JAX, its
first call (trace and XLA compilation).  Values are checked bit for bit against the interpreted
run before anything is timed (the native column's are reported if they differ).

Timings are medians over repeats, the columns taken in turn within each round so all see the
same load, TensorFlow's included (its process is kept for the whole run and times each run
around ``Session.run``, between dataflow's runs: `harness.Partner`); the ratios are of those
medians.  The machine may be shared, so read ratios, not absolutes.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import (
    Partner,
    describe_machine,
    paired_median_times,
    serve_partner,
    side_figures,
    try_import_tensorflow,
)
from programs import digits_mlp

# isort: split
import argparse
import dataclasses
import functools
import json
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

LENGTH = 1000
ITERATIONS = 10_000
NESTED = 100  # outer and inner iterations of the nested loop
RNN_STEPS, RNN_BATCH, RNN_INPUTS, RNN_UNITS = 20, 32, 16, 32
BIG_CHAIN_BYTES = 100 * 1024 * 1024


# -- The programs, each built by one function for dataflow and TensorFlow alike -------------------
@dataclasses.dataclass
class Built:
    """What a workload's builder returns: the fetches of a timed run, its feed, and the op to
    run once first (variable initialisation) or None."""

    fetches: list
    feed: dict
    init: object = None


def _chain(api, length: int = LENGTH) -> Built:
    x = api.placeholder(api.float32, shape=[], name="x")
    one = api.constant(1.0, dtype=api.float32)
    y = x
    for _ in range(length):
        y = y + one
    return Built([y], {x: np.float32(0.5)})


def _loop(api) -> Built:
    limit = api.placeholder(api.int32, shape=[], name="limit")
    i, a = api.while_loop(
        lambda i, a: i < limit,
        lambda i, a: (i + 1, a + api.cast(i, api.float32)),
        [api.constant(0), api.constant(0.0)],
    )
    return Built([i, a], {limit: ITERATIONS})


def _cond_loop(api) -> Built:
    limit = api.placeholder(api.int32, shape=[], name="limit")

    def body(i, a):
        even = api.equal(i % 2, 0)
        a = api.cond(even, lambda: a + api.cast(i, api.float32), lambda: a - 1.0)
        return i + 1, a

    i, a = api.while_loop(lambda i, a: i < limit, body, [api.constant(0), api.constant(0.0)])
    return Built([i, a], {limit: ITERATIONS})


def _nested_loop(api) -> Built:
    limit = api.placeholder(api.int32, shape=[], name="limit")

    def outer_body(i, a):
        def inner_body(j, b):
            return j + 1, b + api.cast(i + j, api.float32)

        _, a = api.while_loop(lambda j, b: j < limit, inner_body, [api.constant(0), a])
        return i + 1, a

    i, a = api.while_loop(lambda i, a: i < limit, outer_body, [api.constant(0), api.constant(0.0)])
    return Built([i, a], {limit: NESTED})


def _mlp_step(api) -> Built:
    """The digits MLP's step on a fixed batch of 64 images shaped like the digits (a step's
    cost does not depend on the values, and TensorFlow's Python has no scikit-learn)."""
    x, y, train, loss, _, _ = digits_mlp(api)
    rng = np.random.default_rng(0)
    images = rng.integers(0, 17, size=(64, 64)).astype(np.float32) / 16.0
    labels = rng.integers(0, 10, size=64).astype(np.int32)
    return Built([train, loss], {x: images, y: labels}, api.global_variables_initializer())


def _rnn_step(api) -> Built:
    """An Elman RNN, ``h = tanh(x[t] W_in + h W_rec + b)``, over time by a ``while_loop`` that
    sums the squared error of ``h W_out`` against the targets; one gradient-descent step."""
    rng = np.random.default_rng(0)

    def weight(name, *shape):
        value = rng.normal(0.0, 1.0 / np.sqrt(shape[0]), shape).astype(np.float32)
        return api.Variable(value, name=name).value()

    x = api.placeholder(api.float32, [RNN_STEPS, RNN_BATCH, RNN_INPUTS], name="x")
    y = api.placeholder(api.float32, [RNN_STEPS, RNN_BATCH, 1], name="y")
    w_in, w_rec = weight("w_in", RNN_INPUTS, RNN_UNITS), weight("w_rec", RNN_UNITS, RNN_UNITS)
    w_out = weight("w_out", RNN_UNITS, 1)
    b = api.Variable(np.zeros(RNN_UNITS, np.float32), name="b").value()

    def body(t, h, total):
        h = api.tanh(api.matmul(x[t], w_in) + api.matmul(h, w_rec) + b)
        error = api.matmul(h, w_out) - y[t]
        return t + 1, h, total + api.reduce_sum(api.square(error))

    h0 = api.zeros([RNN_BATCH, RNN_UNITS])
    _, _, total = api.while_loop(
        lambda t, h, total: t < RNN_STEPS, body, [api.constant(0), h0, api.constant(0.0)]
    )
    loss = total / float(RNN_STEPS * RNN_BATCH)
    train = api.train.GradientDescentOptimizer(0.05).minimize(loss)
    feed = {
        x: rng.normal(size=(RNN_STEPS, RNN_BATCH, RNN_INPUTS)).astype(np.float32),
        y: rng.normal(size=(RNN_STEPS, RNN_BATCH, 1)).astype(np.float32),
    }
    return Built([train, loss], feed, api.global_variables_initializer())


def _elementwise_chain(x, m):
    """20 elementwise ops: scale, shift, clamp, fold and shift back, four times over."""
    for k in range(4):
        x = m.multiply(x, np.float32(0.999 - k * 1e-3))
        x = m.add(x, np.float32(0.25))
        x = m.maximum(x, np.float32(-4.0))
        x = m.abs(x)
        x = m.subtract(x, np.float32(0.5))
    return x


def _big_input() -> np.ndarray:
    return np.random.default_rng(0).standard_normal(BIG_CHAIN_BYTES // 4, dtype=np.float32)


def _big_chain(api) -> Built:
    x = api.placeholder(api.float32, shape=[BIG_CHAIN_BYTES // 4], name="x")
    return Built([_elementwise_chain(x, api)], {x: _big_input()})


@dataclasses.dataclass
class Workload:
    """One figure of the issue: ``build(api)`` makes its program in the default graph, and one
    run does ``units`` of work (ops, iterations, steps), reported per ``unit`` in ``scale``s."""

    key: str
    title: str
    build: Callable[[object], Built]
    unit: str
    units: int
    scale: str = "ns"  # or "ms"
    passes: bool = False  # dataflow's default graph passes (and Grappler) on
    repeats_divisor: int = 1  # a run of this workload is long: a fraction of the repeats
    tensorflow_threads: int = 0  # 0: TensorFlow's default pools


WORKLOADS = [
    Workload("chain", f"scalar float32 add chain ({LENGTH} ops)", _chain, "op", LENGTH,
             tensorflow_threads=1),
    Workload("loop", f"while_loop of {ITERATIONS} iterations (i + 1, a + cast(i))", _loop,
             "iteration", ITERATIONS, repeats_divisor=2),
    Workload("cond_loop", f"while_loop of {ITERATIONS} iterations with a cond in the body",
             _cond_loop, "iteration", ITERATIONS, repeats_divisor=2),
    Workload("nested_loop", f"nested while_loop, {NESTED}x{NESTED} iterations",
             _nested_loop, "inner iteration", NESTED * NESTED, repeats_divisor=2),
    Workload("mlp_step", "digits MLP training step (64-64-10, batch 64)", _mlp_step, "step", 1,
             scale="ms", passes=True),
    Workload("rnn_step", f"RNN-on-while_loop training step ({RNN_STEPS} steps, batch "
             f"{RNN_BATCH}, {RNN_UNITS} units)", _rnn_step, "step", 1, scale="ms", passes=True),
    Workload("big_chain", "20-op elementwise chain on 100 MB of float32", _big_chain, "run", 1,
             scale="ms", passes=True, repeats_divisor=2),
]  # fmt: skip
SCALES = {"ns": 1e9, "ms": 1e3}


def _repeats(workload: Workload, repeats: int) -> int:
    return max(3, repeats // workload.repeats_divisor)


# -- dataflow: interpreted, compiled, native ------------------------------------------------------
def _native_switch(compiler):
    """``compiler.set_native`` when the native tier is there and usable, else None."""
    available = getattr(compiler, "native_available", None)
    set_native = getattr(compiler, "set_native", None)
    if available is None or set_native is None or not available():
        return None
    return set_native


def _session(df, graph, passes: bool):
    if passes:
        return df.Session(graph=graph)
    rewrite = df.passes.RewriterConfig(disable_meta_optimizer=True)
    config = df.ConfigProto(graph_options=df.passes.GraphOptions(rewrite_options=rewrite))
    return df.Session(graph=graph, config=config)


def _same(a, b) -> bool:
    return all(
        (x is None and y is None)
        or (type(x) is type(y) and np.asarray(x).tobytes() == np.asarray(y).tobytes())
        for x, y in zip(a, b)
    )


def _describe_compiled(plan) -> str:
    twin = plan.compiled
    if not twin:
        return "nothing compiled"
    loops = [r for r in twin.regions if hasattr(r, "frame_name")]
    regions = [r for r in twin.regions if not hasattr(r, "frame_name")]
    members = sum(len(r.members) for r in twin.regions)
    return f"compiled: {len(loops)} loop(s), {len(regions)} region(s), {members} ops in them"


def bench_dataflow(workload: Workload, repeats: int, tensorflow: Partner | None = None) -> dict:
    """Per-unit times of ``workload`` in each dataflow column and, with ``tensorflow``, in
    TensorFlow's columns, timed in the same rounds; the first-run costs, and what compilation
    made of it."""
    import dataflow as df
    from dataflow.client import compiler

    set_native = _native_switch(compiler)
    columns = {"interpreted": ("off", "off"), "compiled": ("force", "off")}
    if set_native is not None:
        columns["native"] = ("force", "force")
    graph = df.Graph()
    with graph.as_default():
        built = workload.build(df)

    def switch(column: str) -> None:
        # A plan not compiled yet follows the modes of the run that reaches it.
        mode, native = columns[column]
        compiler.set_mode(mode)
        if set_native is not None:
            set_native(native)

    def run_in(column: str, sess, fetches):
        switch(column)
        return sess.run(fetches, built.feed)

    sessions = {column: _session(df, graph, workload.passes) for column in columns}
    results = {}
    for column, sess in sessions.items():
        if built.init is not None:
            run_in(column, sess, built.init)
        results[column] = run_in(column, sess, built.fetches)
    assert _same(results["compiled"], results["interpreted"]), workload.key
    figures: dict = {
        "native_differs": "native" in results
        and not _same(results["native"], results["interpreted"]),
        "what": _describe_compiled(list(sessions["compiled"]._plans.values())[-1]),
    }
    del results
    timed = {c: lambda c=c, s=s: run_in(c, s, built.fetches) for c, s in sessions.items()}
    if tensorflow is not None:
        for column, key in tensorflow_columns(workload).items():
            timed[column] = tensorflow.timer(key)
            figures[f"first_{column}_ms"] = tensorflow.first_ms[key]
    times = paired_median_times(*timed.values(), repeats=_repeats(workload, repeats))
    for column, seconds in zip(timed, times):
        figures[column] = seconds / workload.units * SCALES[workload.scale]
    for sess in sessions.values():
        sess.close()
    figures.update(_first_run(df, compiler, graph, built, workload, switch, list(columns)))
    return figures


def _first_run(df, compiler, graph, built: Built, workload: Workload, switch, columns) -> dict:
    """Milliseconds of a first run in a new Session in each column (lowering and compilation
    included; a workload with variables initialises them first, untimed), and of
    `compiler.compile_program` alone on the lowered plan."""
    samples: dict[str, list] = {column: [] for column in columns}
    compile_samples = []
    for _ in range(3):
        for column in columns:
            switch(column)
            with _session(df, graph, workload.passes) as sess:
                if built.init is not None:
                    sess.run(built.init)
                began = time.perf_counter()
                sess.run(built.fetches, built.feed)
                samples[column].append((time.perf_counter() - began) * 1e3)
                if column == "interpreted":
                    program = list(sess._plans.values())[-1].executable.program
                    began = time.perf_counter()
                    compiler.compile_program(program, 1)
                    compile_samples.append((time.perf_counter() - began) * 1e3)
    figures = {f"first_{column}_ms": statistics.median(s) for column, s in samples.items()}
    figures["compile_ms"] = statistics.median(compile_samples)
    return figures


def bench_fused_chain(repeats: int) -> dict:
    """Per-op nanoseconds of the chain with the default passes (one FusedElementwise op),
    interpreted and compiled."""
    import dataflow as df
    from dataflow.client import compiler

    graph = df.Graph()
    with graph.as_default():
        built = _chain(df)
    sessions = {mode: _session(df, graph, passes=True) for mode in ("off", "force")}

    def run_in(mode):
        compiler.set_mode(mode)
        return sessions[mode].run(built.fetches, built.feed)

    assert _same(run_in("force"), run_in("off"))
    times = paired_median_times(lambda: run_in("off"), lambda: run_in("force"), repeats=repeats)
    for sess in sessions.values():
        sess.close()
    return dict(zip(("interpreted", "compiled"), (t / LENGTH * 1e9 for t in times)))


# -- numpy, where a hand-written program applies --------------------------------------------------
def bench_numpy(workload: Workload, repeats: int) -> float | None:
    if workload.key == "chain":
        add, one, start = np.add, np.float32(1.0), np.float32(0.5)

        def program():
            v = start
            for _ in range(LENGTH):
                v = add(v, one)
            return v

    elif workload.key == "big_chain":
        data = _big_input()

        def program():
            return _elementwise_chain(data, np)

    else:
        return None
    (seconds,) = paired_median_times(program, repeats=_repeats(workload, repeats))
    return seconds / workload.units * SCALES[workload.scale]


# -- TensorFlow 1.x graph mode (in a Python that has it, timed in step: harness.Partner) ---------
def tensorflow_columns(workload: Workload) -> dict[str, str]:
    """TensorFlow's columns of ``workload`` and the `tensorflow_cases` key of each: as shipped
    always, and stripped where its config differs from the default."""
    columns = {"TF1": workload.key}
    if not workload.passes or workload.tensorflow_threads:
        columns["TF1 strip"] = f"{workload.key}/stripped"
    return columns


def tensorflow_cases(tf1) -> dict:
    """Every workload's TensorFlow case (`harness.Partner`): as shipped, and stripped."""
    cases = {}
    for workload in WORKLOADS:
        for key in tensorflow_columns(workload).values():
            stripped = key.endswith("/stripped")
            cases[key] = functools.partial(_tensorflow_case, tf1, workload, stripped)
    return cases


def _tensorflow_case(tf1, workload: Workload, stripped: bool):
    """``workload`` built in a TF1 Session (a default ``ConfigProto``, or ``stripped``: the
    workload's thread pools, and Grappler and the L0 optimizer off unless it has passes on),
    its variables initialised; returns a function that runs it once."""
    graph = tf1.Graph()
    with graph.as_default():
        built = workload.build(tf1)
    config = tf1.ConfigProto()
    if stripped:
        config.inter_op_parallelism_threads = workload.tensorflow_threads
        config.intra_op_parallelism_threads = workload.tensorflow_threads
        if not workload.passes:
            config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
            config.graph_options.rewrite_options.disable_meta_optimizer = True
    sess = tf1.Session(graph=graph, config=config)
    if built.init is not None:
        sess.run(built.init)
    return functools.partial(sess.run, built.fetches, built.feed)


# -- JAX: lax.while_loop under jit, for the loop workloads (run in a Python that has it) ----------
def bench_jax(repeats: int) -> dict:
    import jax
    import jax.numpy as jnp
    from jax import lax

    def loop(limit):
        def body(state):
            i, a = state
            return i + 1, a + i.astype(jnp.float32)

        return lax.while_loop(lambda s: s[0] < limit, body, (0, jnp.float32(0.0)))

    def cond_loop(limit):
        def body(state):
            i, a = state
            a = lax.cond(i % 2 == 0, lambda: a + i.astype(jnp.float32), lambda: a - 1.0)
            return i + 1, a

        return lax.while_loop(lambda s: s[0] < limit, body, (0, jnp.float32(0.0)))

    def nested_loop(limit):
        def outer_body(state):
            i, a = state

            def inner_body(inner):
                j, b = inner
                return j + 1, b + (i + j).astype(jnp.float32)

            _, a = lax.while_loop(lambda s: s[0] < limit, inner_body, (0, a))
            return i + 1, a

        return lax.while_loop(lambda s: s[0] < limit, outer_body, (0, jnp.float32(0.0)))

    programs = {"loop": loop, "cond_loop": cond_loop, "nested_loop": nested_loop}
    figures = {}
    for workload in WORKLOADS:
        if workload.key in programs:
            limit = NESTED if workload.key == "nested_loop" else ITERATIONS
            run = functools.partial(jax.jit(programs[workload.key]), limit)
            began = time.perf_counter()
            jax.block_until_ready(run())
            first_ms = (time.perf_counter() - began) * 1e3
            (seconds,) = paired_median_times(
                lambda run=run: jax.block_until_ready(run()), repeats=_repeats(workload, repeats)
            )
            figures[workload.key] = {
                "time": seconds / workload.units * SCALES[workload.scale],
                "first_ms": first_ms,
            }
    return figures


# -- The report -----------------------------------------------------------------------------------
COLUMN_NAMES = ("interpreted", "compiled", "native", "numpy", "TF1", "TF1 strip", "JAX")


# -- Time to native code in "auto" mode, under a stream of runs -----------------------------------
STREAM_SECONDS = 90  # at most, per measurement
TIME_TO_NATIVE = [  # the workloads measured (--quick: the first): a short native function and
    # a long one (`native.PROCESS_MIN_LINES`: the long one compiles in the child process)
    *[w for w in WORKLOADS if w.key == "loop"],
    Workload("chain100", "scalar float32 add chain (100 ops)",
             functools.partial(_chain, length=100), "op", 100),
]  # fmt: skip
NATIVE_COMPILERS = {  # how "auto" mode compiles: `native.COMPILE_PROCESS`
    "process": "in a child process (the default; a function under "
    "native.PROCESS_MIN_LINES lines is compiled in the thread all the same)",
    "thread": "in the compile thread alone",
}


def bench_time_to_native(quick: bool) -> None:
    """Prints, per workload and per way of compiling, the time from a stream's first run to
    its first native run, and how the runs meanwhile compare with the Python tier's: each
    measured in a new process with an empty cache (numba not imported, nothing compiled), as
    a program's first start finds it."""
    import os
    import subprocess
    import tempfile

    from dataflow.client import compiler

    if _native_switch(compiler) is None:
        print('8. time to native code in "auto" mode: numba is not installed')
        return
    keys = [w.key for w in (TIME_TO_NATIVE[:1] if quick else TIME_TO_NATIVE)]
    print(
        '8. time to native code in "auto" mode: a new process with an empty cache runs one '
        "workload without a pause:"
    )
    print(
        f"   {'':13}{'compiled':>12}{'Python tier':>13}{'native from':>13}"
        f"{'runs before it, ms':>22}{'slowdown':>10}"
    )
    print(f"   {'':13}{'':>12}{'run, ms':>13}{'run, s':>13}{'median':>11}{'max':>11}{'':>10}")
    for key in keys:
        for how in NATIVE_COMPILERS:
            with tempfile.TemporaryDirectory() as cache:
                output = subprocess.run(
                    [sys.executable, __file__, "--time-to-native-of", key, how],
                    env=dict(os.environ, DATAFLOW_CACHE_DIR=cache),
                    capture_output=True,
                    text=True,
                    timeout=STREAM_SECONDS + 120,
                )
            if output.returncode != 0:
                print(f"   {key:13}{how:>12}   failed: {output.stderr.strip()[-200:]}")
                continue
            f = json.loads(output.stdout.strip().splitlines()[-1])
            native = "never" if f["native_s"] is None else f"{f['native_s']:.2f}"
            slowdown = (
                "" if f["meanwhile_ms"] is None else f"{f['meanwhile_ms'] / f['python_ms']:.1f}x"
            )
            print(
                f"   {key:13}{how:>12}{_cell(f['python_ms'], 13)}{native:>13}"
                f"{_cell(f['meanwhile_ms'], 11)}{_cell(f['meanwhile_max_ms'], 11)}{slowdown:>10}"
            )
    print(
        "   (native from: seconds from the stream's first run, lowering and compiling included, "
        "to the first run whose code is all native; runs before it: from the start of the "
        "native compilation; slowdown: their median over the Python tier's; compiled: "
        + "; ".join(f"{how} = {what}" for how, what in NATIVE_COMPILERS.items())
        + ")"
    )


def measure_time_to_native(key: str, how: str) -> dict:
    """In this process: the Python tier's median run of workload ``key``, then a stream of runs
    in "auto" mode until native code runs (`bench_time_to_native`)."""
    import dataflow as df
    from dataflow.client import compiler
    from dataflow.client.compiler import native

    native.COMPILE_PROCESS = how == "process"
    (workload,) = [w for w in TIME_TO_NATIVE if w.key == key]
    graph = df.Graph()
    with graph.as_default():
        built = workload.build(df)
    compiler.set_mode("auto")
    compiler.set_native("off")
    with _session(df, graph, workload.passes) as sess:
        for _ in range(compiler.AUTO_AFTER_RUNS + 1):
            sess.run(built.fetches, built.feed)
        python_runs = []
        for _ in range(21):
            began = time.perf_counter()
            sess.run(built.fetches, built.feed)
            python_runs.append(time.perf_counter() - began)
    compiler.set_native("auto")
    runs = []  # (start, seconds, whether the run was native, whether compiling had begun)
    start = time.perf_counter()
    native_at = None
    with _session(df, graph, workload.passes) as sess:
        while time.perf_counter() - start < STREAM_SECONDS:
            plan = next(iter(sess._plans.values()), None)
            tiers = [r.function for r in plan.compiled.regions] if plan and plan.compiled else []
            tiers = [t for t in tiers if isinstance(t, native._Tier) and t.calls]
            compiling = any(t.pending is not None for t in tiers)
            natively = bool(tiers) and all(t.native is not None for t in tiers)
            began = time.perf_counter()
            sess.run(built.fetches, built.feed)
            runs.append((began - start, time.perf_counter() - began, natively, compiling))
            if natively:
                native_at = began - start
                break
    meanwhile = [seconds for _, seconds, natively, compiling in runs if compiling and not natively]
    return {
        "python_ms": statistics.median(python_runs) * 1e3,
        "native_s": native_at,
        "meanwhile_ms": statistics.median(meanwhile) * 1e3 if meanwhile else None,
        "meanwhile_max_ms": max(meanwhile) * 1e3 if meanwhile else None,
    }


def _cell(value: float | None, width: int = 12) -> str:
    if value is None:
        return f"{'--':>{width}}"
    return f"{value:{width}.0f}" if value >= 100 else f"{value:{width}.3g}"


def report(workload: Workload, number: int, ours: dict, numpy: float | None, jax) -> None:
    values = {
        "interpreted": ours["interpreted"],
        "compiled": ours["compiled"],
        "native": ours.get("native"),
        "numpy": numpy,
        "TF1": ours.get("TF1"),
        "TF1 strip": ours.get("TF1 strip"),
        "JAX": jax["time"] if jax else None,
    }
    shown = [name for name in COLUMN_NAMES if values[name] is not None or name == "native"]
    print(f"{number}. {workload.title}, {workload.scale} per {workload.unit} (median):")
    print(f"   {'':20}" + "".join(f"{name:>12}" for name in shown))
    print(
        f"   {workload.scale + ' per ' + workload.unit:20}"
        + "".join(_cell(values[n]) for n in shown)
    )
    for base in ("numpy", "TF1", "TF1 strip"):
        if values[base] is not None:
            ratios = [None if values[n] is None else values[n] / values[base] for n in shown]
            print(
                f"   {'/ ' + base:20}"
                + "".join(f"{'--':>12}" if r is None else f"{r:11.3g}x" for r in ratios)
            )
    firsts = {
        "interpreted": ours["first_interpreted_ms"],
        "compiled": ours["first_compiled_ms"],
        "native": ours.get("first_native_ms"),
        "TF1": ours.get("first_TF1_ms"),
        "TF1 strip": ours.get("first_TF1 strip_ms"),
        "JAX": jax["first_ms"] if jax else None,
    }
    print(f"   {'first run, ms':20}" + "".join(_cell(firsts.get(n)) for n in shown))
    notes = [f"compile_program alone {ours['compile_ms']:.1f} ms", ours["what"]]
    if "native" not in ours:
        notes.append("native tier: not available")
    if ours["native_differs"]:
        notes.append("NATIVE VALUES DIFFER FROM THE INTERPRETER'S")
    print("   (" + "; ".join(notes) + ")")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--repeats", type=int, help="repeats of every figure")
    parser.add_argument("--tensorflow-python", help="a Python with TensorFlow, for its figures")
    parser.add_argument("--jax-python", help="a Python with JAX, for its figures")
    parser.add_argument("--tensorflow-partner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jax-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--only", nargs="+", choices=[w.key for w in WORKLOADS], help="these workloads alone"
    )
    parser.add_argument(
        "--time-to-native", action="store_true", help="the time to native code alone (8.)"
    )
    parser.add_argument("--time-to-native-of", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.time_to_native_of:
        print(json.dumps(measure_time_to_native(*args.time_to_native_of)))
        return
    if args.time_to_native:
        bench_time_to_native(args.quick)
        return
    workloads = [w for w in WORKLOADS if args.only is None or w.key in args.only]
    repeats = args.repeats or (11 if args.quick else 51)
    if args.tensorflow_partner:
        serve_partner(try_import_tensorflow, tensorflow_cases)
        return
    if args.jax_only:
        print(json.dumps(bench_jax(repeats)))
        return
    tf = Partner.start(
        try_import_tensorflow,
        tensorflow_cases,
        __file__,
        "--tensorflow-partner",
        args.tensorflow_python,
    )
    jax = side_figures(__file__, "--jax-only", "jax", bench_jax, repeats, args.jax_python)
    print(
        describe_machine(
            repeats,
            tensorflow="not installed" if tf is None else "as shipped, and stripped",
            jax="not installed" if jax is None else "yes",
            python=sys.version.split()[0],
        )
    )
    for workload in workloads:
        number = WORKLOADS.index(workload) + 1
        ours = bench_dataflow(workload, repeats, tf)
        numpy = bench_numpy(workload, repeats)
        report(workload, number, ours, numpy, (jax or {}).get(workload.key))
        if workload.key == "chain":
            fused = bench_fused_chain(repeats)
            print(
                "   graph passes on (the chain is one FusedElementwise op), ns per op: "
                f"interpreted {fused['interpreted']:.0f}, compiled {fused['compiled']:.0f}"
            )
    if tf is not None:
        tf.close()
    if args.only is None:
        bench_time_to_native(args.quick)


if __name__ == "__main__":
    main()

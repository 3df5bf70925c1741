"""Prints the executor's overhead figures (medians of several repeats); asserts nothing.

1. A chain of 1000 scalar float64 adds (1 ARG + 1 constant OP + 1000 ``np.add`` nodes), against
   the same 1000 ``np.add`` calls from a plain Python loop: ns per op and the ratio.  Run
   without a pool and with a pool of 2 (nothing goes to it: every op is a scalar).
2. A ``while_loop`` of 10,000 iterations (``i < n``, ``i + 1``, ``acc + x``; 14 nodes per
   iteration) built the way ``primitives`` builds it: µs per iteration, for parallel_iterations
   1, 10 and 32.
3. Two independent branches of ``exp``/``sin``/``tanh`` on 8M-element float64 arrays joined by
   an add: the speedup of a pool of 2 over no pool (numpy releases the GIL on large arrays).
4. Under load (``--only load``): a LeNet inference (batch 1 and 64), a 10-op scalar chain, an
   MLP training step and two independent matrix products through a Session, each run many
   times on the machine as it is ("idle") and beside two busy processes (`harness.CpuHogs`):
   median, 90th and 99th percentile and their ratio.  ``--baseline PATH`` times the same runs
   with the dataflow checkout at PATH (the scheduling before a change) in a child process;
   ``--tensorflow-python`` (or TensorFlow importable here) adds TensorFlow 1.x the same way.
   ``--protocol paired`` (the default) takes the ways' runs round by round, as the training
   benchmark does beside TensorFlow; ``--protocol blocks`` runs each way's runs back to back in
   blocks (see `bench_load` for why the two differ on a busy machine).  Then the two big
   independent matmuls that must still overlap on the pool: time with a pool of 2 and without.

Usage: ``python benchmarks/bench_executor.py [--quick] [--only chain,while,branches,load]
[--baseline /path/to/other/checkout] [--tensorflow-python /path/to/python]
[--protocol paired|blocks] [--load-repeats N]``.  Where a slow run's time goes:
``benchmarks/probe_executor_waits.py``.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import (
    CpuHogs,
    Partner,
    SelfTimed,
    describe_machine,
    median_time,
    serve_partner,
    try_import_tensorflow,
)

# isort: split
import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

# The checkout whose dataflow runs here: this one, or the baseline a partner child times.
_BASELINE_FLAG = "--baseline-partner"
if _BASELINE_FLAG in sys.argv:
    sys.path.insert(0, sys.argv[sys.argv.index(_BASELINE_FLAG) + 1])
else:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import executor  # noqa: E402
from executor import Node, NodeKind, Program  # noqa: E402


def chain_program(length: int) -> Program:
    nodes = [
        Node("x", NodeKind.ARG, inline=True),
        Node("one", kernel=lambda: np.float64(1.0), inline=True),
    ]
    previous = 0
    for k in range(length):
        nodes.append(Node(f"add_{k}", kernel=np.add, inputs=[(previous, 0), (1, 0)]))
        previous = len(nodes) - 1
    return Program(nodes, arg_nodes=[0], fetches=[(previous, 0)])


def bench_chain(length: int, repeats: int) -> None:
    plan = executor.prepare(chain_program(length))
    x = np.float64(0.5)
    one = np.float64(1.0)

    def plain() -> None:
        value = x
        add = np.add
        for _ in range(length):
            value = add(value, one)

    assert plan.run([x])[0] == x + length
    plain_ns = median_time(plain, repeats) / length * 1e9
    print(f"chain of {length} scalar np.add")
    print(f"  plain numpy loop        {plain_ns:8.0f} ns/op")
    for label, pool in (("executor, no pool", None), ("executor, pool of 2", POOL)):
        ns = median_time(lambda pool=pool: plan.run([x], pool=pool), repeats) / length * 1e9
        print(
            f"  {label:<23} {ns:8.0f} ns/op   ratio {ns / plain_ns:4.2f}   "
            f"overhead {ns - plain_ns:5.0f} ns/op"
        )


def while_program(parallel_iterations: int) -> Program:
    """``while i < n: i, acc = i + 1, acc + x``, lowered as ``primitives.while_loop`` does."""
    nodes: list[Node] = []

    def add(node: Node) -> int:
        nodes.append(node)
        return len(nodes) - 1

    frame = "while/while_context"
    n = add(Node("n", NodeKind.ARG, inline=True))
    i0 = add(Node("i0", kernel=lambda: np.int64(0), inline=True))
    acc0 = add(Node("acc0", kernel=lambda: np.float64(0.0), inline=True))
    x = add(Node("x", kernel=lambda: np.float64(0.5), inline=True))
    one = add(Node("one", kernel=lambda: np.int64(1), inline=True))

    def enter(name, source, constant):
        return add(
            Node(
                name,
                NodeKind.ENTER,
                inputs=[(source, 0)],
                frame_name=frame,
                is_constant=constant,
                parallel_iterations=parallel_iterations,
            )
        )

    enter_i = enter("while/Enter", i0, False)
    enter_acc = enter("while/Enter_1", acc0, False)
    enter_n = enter("while/n", n, True)
    enter_x = enter("while/x", x, True)
    enter_one = enter("while/one", one, True)
    merge_i = add(Node("while/Merge", NodeKind.MERGE, inputs=[(enter_i, 0)]))
    merge_acc = add(Node("while/Merge_1", NodeKind.MERGE, inputs=[(enter_acc, 0)]))
    less = add(Node("while/Less", kernel=np.less, inputs=[(merge_i, 0), (enter_n, 0)]))
    pred = add(Node("while/LoopCond", kernel=lambda v: v, inputs=[(less, 0)], inline=True))
    switch_i = add(Node("while/Switch", NodeKind.SWITCH, inputs=[(merge_i, 0), (pred, 0)]))
    switch_acc = add(Node("while/Switch_1", NodeKind.SWITCH, inputs=[(merge_acc, 0), (pred, 0)]))
    exit_i = add(Node("while/Exit", NodeKind.EXIT, inputs=[(switch_i, 0)]))
    exit_acc = add(Node("while/Exit_1", NodeKind.EXIT, inputs=[(switch_acc, 0)]))
    body_i = add(Node("while/Identity", kernel=lambda v: v, inputs=[(switch_i, 1)], inline=True))
    body_acc = add(
        Node("while/Identity_1", kernel=lambda v: v, inputs=[(switch_acc, 1)], inline=True)
    )
    next_i_value = add(Node("while/add", kernel=np.add, inputs=[(body_i, 0), (enter_one, 0)]))
    next_acc_value = add(Node("while/add_1", kernel=np.add, inputs=[(body_acc, 0), (enter_x, 0)]))
    next_i = add(Node("while/NextIteration", NodeKind.NEXT_ITERATION, inputs=[(next_i_value, 0)]))
    next_acc = add(
        Node("while/NextIteration_1", NodeKind.NEXT_ITERATION, inputs=[(next_acc_value, 0)])
    )
    nodes[merge_i].inputs = [(enter_i, 0), (next_i, 0)]
    nodes[merge_acc].inputs = [(enter_acc, 0), (next_acc, 0)]
    return Program(nodes, arg_nodes=[n], fetches=[(exit_i, 0), (exit_acc, 0)])


def bench_while(iterations: int, repeats: int) -> None:
    print(f"while_loop of {iterations} iterations (14 nodes per iteration)")
    for parallel_iterations in (1, 10, 32):
        plan = executor.prepare(while_program(parallel_iterations))
        n = np.int64(iterations)
        i, acc = plan.run([n])
        assert i == iterations and acc == 0.5 * iterations
        seconds = median_time(lambda plan=plan, n=n: plan.run([n]), repeats)
        print(
            f"  parallel_iterations={parallel_iterations:<3} "
            f"{seconds / iterations * 1e6:6.2f} µs/iteration"
        )


def branches_program() -> Program:
    nodes = [Node("x", NodeKind.ARG, inline=True)]
    ends = []
    for branch in ("a", "b"):
        previous = 0
        for kernel in (np.exp, np.sin, np.tanh):
            nodes.append(Node(f"{branch}/{kernel.__name__}", kernel=kernel, inputs=[(previous, 0)]))
            previous = len(nodes) - 1
        ends.append(previous)
    nodes.append(Node("sum", kernel=np.add, inputs=[(ends[0], 0), (ends[1], 0)]))
    return Program(nodes, arg_nodes=[0], fetches=[(len(nodes) - 1, 0)])


def bench_branches(elements: int, repeats: int) -> None:
    plan = executor.prepare(branches_program())
    x = np.random.default_rng(0).random(elements)
    without = median_time(lambda: plan.run([x]), repeats)
    with_pool = median_time(lambda: plan.run([x], pool=POOL), repeats)
    print(f"two branches of exp/sin/tanh on {elements:,} float64 elements")
    print(f"  no pool    {without * 1e3:7.1f} ms")
    print(f"  pool of 2  {with_pool * 1e3:7.1f} ms   speedup {without / with_pool:4.2f}x")


# -- 4. under load ---------------------------------------------------------------------------------
# The same code builds each case for dataflow and for TensorFlow 1.x (``tf`` is either module).


def lenet_inference(tf, batch: int):
    """LeNet (NHWC): two 5x5 SAME convolutions of 32 and 64 channels with bias, relu and 2x2
    max-pooling, a dense layer of 256 with relu, a dense layer of 10 and softmax."""
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [batch, 28, 28, 1])

        def weights(*shape):
            return tf.Variable((rng.standard_normal(shape) * 0.1).astype(np.float32))

        h = tf.nn.conv2d(x, weights(5, 5, 1, 32), [1, 1, 1, 1], "SAME")
        h = tf.nn.max_pool(tf.nn.relu(h + weights(32)), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.nn.conv2d(h, weights(5, 5, 32, 64), [1, 1, 1, 1], "SAME")
        h = tf.nn.max_pool(tf.nn.relu(h + weights(64)), [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        h = tf.matmul(tf.reshape(h, [batch, 7 * 7 * 64]), weights(7 * 7 * 64, 256))
        y = tf.nn.softmax(tf.matmul(tf.nn.relu(h + weights(256)), weights(256, 10)) + weights(10))
        init = tf.global_variables_initializer()
    session = tf.Session(graph=graph)
    session.run(init)
    images = rng.standard_normal((batch, 28, 28, 1)).astype(np.float32)
    return lambda: session.run(y, {x: images})


def scalar_chain(tf):
    """Ten scalar ops in a chain (five multiply-adds) from a fed scalar."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [])
        value = x
        for _ in range(5):
            value = value * 1.0001 + 0.5
    session = tf.Session(graph=graph)
    return lambda: session.run(value, {x: 1.0})


def mlp_step(tf):
    """One gradient-descent step of a 64-128-10 MLP with relu on a batch of 64."""
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [64, 64])
        target = tf.placeholder(tf.float32, [64, 10])
        w1 = tf.Variable((rng.standard_normal((64, 128)) * 0.1).astype(np.float32))
        w2 = tf.Variable((rng.standard_normal((128, 10)) * 0.1).astype(np.float32))
        y = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
        loss = tf.reduce_mean(tf.square(y - target))
        step = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        init = tf.global_variables_initializer()
    session = tf.Session(graph=graph)
    session.run(init)
    feed = {
        x: rng.standard_normal((64, 64)).astype(np.float32),
        target: rng.standard_normal((64, 10)).astype(np.float32),
    }
    return lambda: session.run(step, feed)


def two_products(tf):
    """Two independent 256x256 float32 matrix products, added: the one case here whose runs use
    the inter-op pool (each product takes a millisecond or more)."""
    rng = np.random.default_rng(0)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [256, 256])
        left = tf.constant(rng.standard_normal((256, 256)).astype(np.float32))
        right = tf.constant(rng.standard_normal((256, 256)).astype(np.float32))
        total = tf.matmul(x, left) + tf.matmul(x, right)
    session = tf.Session(graph=graph)
    value = rng.standard_normal((256, 256)).astype(np.float32)
    return lambda: session.run(total, {x: value})


# Case name -> (builder, arguments, share of the repeats it gets: the batch-64 LeNet takes
# about a hundred times as long as the others).
LOAD_CASES = {
    "LeNet inference, batch 1": (lenet_inference, (1,), 1.0),
    "LeNet inference, batch 64": (lenet_inference, (64,), 0.1),
    "scalar chain of 10 ops": (scalar_chain, (), 1.0),
    "MLP training step": (mlp_step, (), 1.0),
    "two independent 256x256 products": (two_products, (), 0.5),
}


def load_cases(tf) -> dict:
    """The cases of `LOAD_CASES` for ``tf`` (dataflow, or TensorFlow's ``compat.v1``), each as
    a function that builds the case and returns the function that runs it once (`Partner`);
    and, under ``"block: <case>"``, a function of ``runs`` that times that many runs of the
    case back to back (built once, with ten untimed runs first) and returns their seconds."""
    cases = {
        name: (lambda build=build, arguments=arguments: build(tf, *arguments))
        for name, (build, arguments, _) in LOAD_CASES.items()
    }
    built: dict = {}

    def block(name: str, runs: int) -> list[float]:
        if name not in built:
            built[name] = cases[name]()
            for _ in range(10):
                built[name]()
        run = built[name]
        times = []
        for _ in range(runs):
            began = time.perf_counter()
            run()
            times.append(time.perf_counter() - began)
        return times

    for name in LOAD_CASES:
        cases[f"block: {name}"] = lambda runs, name=name: block(name, runs)
    return cases


def _load_dataflow():
    import dataflow

    return dataflow


def _percentiles(samples: list[float]) -> tuple[float, float, float]:
    """Median, 90th and 99th percentile of ``samples`` (seconds), in milliseconds."""
    ordered = sorted(samples)

    def at(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1e3

    return statistics.median(ordered) * 1e3, at(0.9), at(0.99)


def _paired_samples(runs: dict, repeats: int) -> dict:
    """Times of each run, taken in turn within every round (after ten untimed calls of each);
    a `harness.SelfTimed` run returns its own seconds."""
    for run in runs.values():
        for _ in range(10):
            run()
    samples = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            if isinstance(run, SelfTimed):
                samples[name].append(run())
                continue
            began = time.perf_counter()
            run()
            samples[name].append(time.perf_counter() - began)
    return samples


# Blocks per figure in the ``blocks`` protocol.
BLOCKS = 5


def _block_samples(name: str, here: dict, partners: dict, repeats: int) -> dict:
    """Times of case ``name`` run back to back in `BLOCKS` blocks per way (here, and in each
    partner's process), the blocks of the ways taken in turn."""
    samples: dict = {"dataflow": []}
    samples.update({label: [] for label in partners})
    per_block = max(10, repeats // BLOCKS)
    for _ in range(BLOCKS):
        samples["dataflow"] += here[f"block: {name}"](per_block)
        for label, partner in partners.items():
            samples[label] += partner.call(f"block: {name}", per_block)
    return samples


def bench_load(repeats: int, partners: dict, protocol: str, cases: str = "") -> None:
    """Section 4: every case of `LOAD_CASES` idle and beside two CPU hogs, here and in each of
    ``partners`` (label -> `Partner`): round by round (``paired``: each way's process waits
    while the others run, as in a benchmark beside TensorFlow), or in blocks of runs back to
    back (``blocks``: as a program that does nothing else runs them).  The two differ on a busy
    machine: the scheduler gives a thread that waits between runs a core sooner than one that
    never waits, so the way a run is split among threads changes its share of the cores.
    ``cases``: only the cases whose names contain it (any case)."""
    import dataflow

    here = load_cases(dataflow)
    print(
        f"under load ({protocol}): median / p90 / p99 in ms, p90/median; {repeats} runs per figure"
    )
    for load in ("idle", "2 CPU hogs"):
        hogs = CpuHogs(2) if load != "idle" else None
        if hogs is not None:
            hogs.__enter__()
        try:
            for name, (_, _, share) in LOAD_CASES.items():
                if cases.lower() not in name.lower():
                    continue
                count = max(50, int(repeats * share))
                if protocol == "blocks":
                    samples = _block_samples(name, here, partners, count)
                else:
                    runs = {"dataflow": here[name]()}
                    for label, partner in partners.items():
                        runs[label] = partner.timer(name)
                    samples = _paired_samples(runs, count)
                print(f"  {load:<10} {name}")
                for label, times in samples.items():
                    median, p90, p99 = _percentiles(times)
                    print(
                        f"    {label:<22} {median:8.3f} {p90:8.3f} {p99:8.3f}   "
                        f"p90/median {p90 / median:5.2f}"
                    )
        finally:
            if hogs is not None:
                hogs.__exit__(None, None, None)


def two_matmuls_program(size: int) -> Program:
    """Two independent ``size x size`` matmuls of one argument, joined by an add."""
    nodes = [Node("x", NodeKind.ARG, inline=True)]
    for name in ("left", "right"):
        nodes.append(Node(name, kernel=np.matmul, inputs=[(0, 0), (0, 0)]))
    nodes.append(Node("sum", kernel=np.add, inputs=[(1, 0), (2, 0)]))
    return Program(nodes, arg_nodes=[0], fetches=[(3, 0)])


def bench_overlap(size: int, repeats: int) -> None:
    """Two big independent matmuls: still overlapped on a pool of 2 (numpy's BLAS releases the
    GIL), now that the pool takes expensive kernels only."""
    plan = executor.prepare(two_matmuls_program(size))
    x = np.random.default_rng(0).random((size, size))
    without = median_time(lambda: plan.run([x]), repeats)
    with_pool = median_time(lambda: plan.run([x], pool=POOL), repeats)
    print(f"two independent {size}x{size} float64 matmuls")
    print(f"  no pool    {without * 1e3:7.1f} ms")
    print(f"  pool of 2  {with_pool * 1e3:7.1f} ms   speedup {without / with_pool:4.2f}x")


POOL = ThreadPoolExecutor(2, thread_name_prefix="bench-inter-op")
SECTIONS = ("chain", "while", "branches", "load")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", help=f"comma-separated sections among {', '.join(SECTIONS)}")
    parser.add_argument("--load-repeats", type=int, help="runs per figure under load")
    parser.add_argument(
        "--protocol",
        choices=("paired", "blocks"),
        default="paired",
        help="under load: the ways' runs round by round, or in blocks back to back",
    )
    parser.add_argument("--cases", default="", help="under load: the cases whose names hold this")
    parser.add_argument("--baseline", help="another dataflow checkout, timed beside this one")
    parser.add_argument("--tensorflow-python", help="a Python with TensorFlow, for its figures")
    parser.add_argument("--no-tensorflow", action="store_true", help="skip the TF comparison")
    parser.add_argument("--tensorflow-partner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(_BASELINE_FLAG, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tensorflow_partner:
        serve_partner(try_import_tensorflow, load_cases)
        return
    if args.baseline_partner:
        serve_partner(_load_dataflow, load_cases)
        return
    sections = SECTIONS if args.only is None else tuple(args.only.split(","))
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose among {', '.join(SECTIONS)}")
    quick = args.quick
    chain_repeats, while_repeats, branch_repeats = (21, 3, 3) if quick else (101, 9, 7)
    load_repeats = args.load_repeats or (300 if quick else 2000)
    print(
        describe_machine(
            f"{chain_repeats}/{while_repeats}/{branch_repeats}/{load_repeats}",
            switch_interval=f"{sys.getswitchinterval() * 1e3:g} ms",
        )
    )
    if "chain" in sections:
        bench_chain(1000, chain_repeats)
    if "while" in sections:
        bench_while(10_000, while_repeats)
    if "branches" in sections:
        bench_branches(8_000_000, branch_repeats)
    if "load" in sections:
        partners = {}
        if args.baseline:
            command = [sys.executable, __file__, _BASELINE_FLAG, args.baseline]
            partners[f"before ({Path(args.baseline).name})"] = Partner(command=command)
        if not args.no_tensorflow:
            tf = Partner.start(
                try_import_tensorflow,
                load_cases,
                __file__,
                "--tensorflow-partner",
                args.tensorflow_python,
            )
            if tf is not None:
                partners["TensorFlow 1.x"] = tf
        try:
            bench_load(load_repeats, partners, args.protocol, args.cases)
        finally:
            for partner in partners.values():
                partner.close()
        bench_overlap(1000, branch_repeats)
    POOL.shutdown()


if __name__ == "__main__":
    main()

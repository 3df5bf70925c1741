"""Training real models here and in TensorFlow, PyTorch and JAX: time per step against the
GEMM floor, and the loss each reaches from the same start (issue 25's "Measured").

    python benchmarks/bench_training.py                     # dataflow, and peers installed here
    python benchmarks/bench_training.py --quick --only mlp  # a smoke run
    python benchmarks/bench_training.py --no-peers          # dataflow and the floor alone
    python benchmarks/bench_training.py \\
        --tensorflow-python /work/tfvenv/bin/python \\
        --torch-python /work/torchvenv/bin/python --jax-python /work/jaxvenv/bin/python

The workloads (`training_workloads`): the MLP (784-256-256-10, batch 64), LeNet on 28x28x1
(batch 64), a small ResNet with batch norm (batch 32, 32x32x3), an LSTM through
``dynamic_rnn`` (50 steps, batch 32, hidden 128), the same LSTM written by hand with
``while_loop``, and the MLP written the TF2 way (a ``Module``, a ``GradientTape``, a
``function``); each a softmax cross-entropy trained with Adam on one fixed batch.  ``--only
NAME[,NAME]`` picks some of them (``load`` is the run under load below).

For each workload, a row per way of running its training step, with its median time per
step, the ratio to TensorFlow 1.x's (``x TF1``) and to the GEMM floor (``x floor``), and the
loss after ``--steps`` steps from the start:

- ``dataflow interpreted``: the TF1 graph (`training_graphs.graph_training`, the same code
  TensorFlow runs) with compilation off (`dataflow.client.compiler.set_mode("off")`);
- ``dataflow compiled``: the default mode (compiled from the third run, the native tier in its
  default ``auto``), timed after warm-up: what a user gets;
- ``dataflow native``: the native (numba) tier forced on (``set_native("force")``);
  for ``mlp-tf2`` the three are a ``df.function`` step in the same three modes;
- ``GEMM floor``: numpy's BLAS doing only the matrix products the step must do, forward and
  backward (`training_workloads.gemms`: a convolution as its im2col GEMM; no gradient for
  the input of the first layer), timed in the same rounds with the same BLAS threads: no
  framework doing the step as these GEMMs can do it in less (TensorFlow's oneDNN convolutions
  are not im2col GEMMs, and may be faster); ``GEMM floor, 1 thread``: the same with BLAS held
  to one thread (where threadpoolctl is installed), since on a machine shared with other
  work, BLAS threads that wait on each other can make the default slower than one thread;
- ``TF1 graph``: TensorFlow 1.x graph mode (``tf.compat.v1``, control flow v1, a default
  ``ConfigProto``, Grappler on): the same graph code as dataflow's;
- ``TF2 tf.function``, ``PyTorch eager``, ``PyTorch compile`` (``torch.compile`` of the model,
  where it compiles), ``JAX jit``: each framework as its users write the model
  (`training_tensorflow`, `training_torch`, `training_jax`).

Every framework starts from the same weights on the same batch: this script draws them with
numpy (`training_workloads.make_arrays`) and hands them to the peers in a file, so the losses
after N steps agree (and the curves can be compared), which shows each row computes the
same step: dataflow's and TensorFlow's to float rounding; PyTorch's and optax's Adam add its
epsilon after the bias correction, TensorFlow's before, which moves their losses by about
1e-4 after three steps (differences grow over the steps, as rounding differences do in
training).  Each peer runs in its own process, in the Python given (``--tensorflow-python``,
``--torch-python``, ``--jax-python``; by default this Python when the framework imports
here), and its steps are timed round by round between dataflow's
(`harness.Partner`, `harness.paired_median_times`): every way sees the same load.  The
machine may be shared: read the ratios, measured in the same rounds, more than the times.

Threads, as users run each framework: numpy's BLAS keeps its default (one thread per core)
unless ``--blas-threads N`` says otherwise (the first line says what was used); TensorFlow,
PyTorch and JAX keep their default pools.

Then, under load (``load``): LeNet's forward pass at batch 1 and 64, dataflow (default mode)
and TensorFlow 1.x, first without hogs (the machine as it is), then with two busy processes
beside it (`harness.CpuHogs`): the median and 90th percentile per run; the target is a 90th
percentile at most twice the median.

Finally, a summary: per workload, dataflow's default mode against TensorFlow 1.x and against
the floor, with issue 25's targets (at most 1.0x TF1, at most 1.3x the floor).
"""

from __future__ import annotations

import os
import sys


def _blas_threads(argv: list) -> tuple[str, str]:
    """The BLAS threads to use and why: ``--blas-threads N``, else the environment's
    ``OPENBLAS_NUM_THREADS``, else numpy's default (OpenBLAS takes one thread per core)."""
    for i, argument in enumerate(argv):
        if argument == "--blas-threads" and i + 1 < len(argv):
            return argv[i + 1], "--blas-threads"
        if argument.startswith("--blas-threads="):
            return argument.split("=", 1)[1], "--blas-threads"
    if "OPENBLAS_NUM_THREADS" in os.environ:
        return os.environ["OPENBLAS_NUM_THREADS"], "the environment"
    return str(os.cpu_count()), "numpy's default"


# Before numpy is imported (harness would pin BLAS to one thread): BLAS as users run it.  The
# peers are started with the variables as they were (`_as_started`), so that each keeps its
# framework's defaults.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
STARTED_WITH = {variable: os.environ.get(variable) for variable in THREAD_VARIABLES}
BLAS_THREADS, BLAS_THREADS_FROM = _blas_threads(sys.argv)
for _variable in THREAD_VARIABLES:
    os.environ[_variable] = BLAS_THREADS

from harness import (  # noqa: E402
    CpuHogs,
    Partner,
    SelfTimed,
    describe_machine,
    paired_median_times,
    serve_partner,
)

# isort: split
import argparse  # noqa: E402
import contextlib  # noqa: E402
import importlib.util  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import training_graphs as g  # noqa: E402
import training_workloads as w  # noqa: E402

WARMUP_STEPS = 6  # before timing: a plan compiles on its third run, numba after more


# -- the peers -----------------------------------------------------------------------------------
# name -> (the module that says it is installed, its flag here, the argument naming its Python)
PEERS = {
    "TF1": ("tensorflow", "--tensorflow1-partner", "tensorflow_python"),
    "TF2": ("tensorflow", "--tensorflow2-partner", "tensorflow_python"),
    "PyTorch": ("torch", "--torch-partner", "torch_python"),
    "JAX": ("jax", "--jax-partner", "jax_python"),
}


def _serve(flag: str) -> None:
    """The peer's side: answer `harness.Partner`'s requests (in the peer's Python)."""
    if flag == "--tensorflow1-partner":
        import training_tensorflow as t

        serve_partner(t.try_import_tensorflow1, t.tensorflow1_cases)
    elif flag == "--tensorflow2-partner":
        import training_tensorflow as t

        serve_partner(t.try_import_tensorflow2, t.tensorflow2_cases)
    elif flag == "--torch-partner":
        import training_torch as t

        serve_partner(t.try_import_torch, t.torch_cases)
    else:
        import training_jax as t

        serve_partner(t.try_import_jax, t.jax_cases)


def start_peers(args) -> dict:
    """The peers that run, by name: each in its own process (TensorFlow 1.x's graph mode is a
    process-wide switch, and each framework keeps its thread pools to itself), in the Python
    given for it, else in this one when the framework imports here."""
    peers = {}
    for name, (module, flag, python_argument) in PEERS.items():
        python = getattr(args, python_argument)
        if python is None and importlib.util.find_spec(module) is not None:
            python = sys.executable
        if python is None or args.no_peers:
            continue
        with _as_started():
            partner = Partner.start(lambda: None, None, os.path.abspath(__file__), flag, python)
        if partner is None:
            print(f"({name}: its Python {python} did not start the partner)")
        else:
            peers[name] = partner
    return peers


@contextlib.contextmanager
def _as_started():
    """The thread variables of the environment as this script was started with them, while
    the block runs (a peer started in it inherits them, not ``--blas-threads``)."""
    for variable, value in STARTED_WITH.items():
        if value is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = value
    try:
        yield
    finally:
        for variable in THREAD_VARIABLES:
            os.environ[variable] = BLAS_THREADS


def _peer_way(partner: Partner, key: str, *args) -> SelfTimed | str:
    """The peer's case as a timed function, or why it could not be made (``torch.compile``
    without a compiler, say)."""
    try:
        return partner.timer(key, *args)
    except RuntimeError as e:
        return str(e).split(": ", 1)[-1][:100]


# -- dataflow --------------------------------------------------------------------------------------
def _in_mode(step, compile_mode: str, native_mode: str):
    """``step`` run with the compiler in ``compile_mode`` and the native tier in
    ``native_mode``, the modes before it restored after."""
    from dataflow.client import compiler

    def run():
        compile_before = compiler.set_mode(compile_mode)
        native_before = compiler.set_native(native_mode)
        try:
            return step()
        finally:
            compiler.set_mode(compile_before)
            compiler.set_native(native_before)

    return run


DATAFLOW_MODES = {
    "dataflow interpreted": ("off", "off"),
    "dataflow compiled": ("auto", "auto"),
    "dataflow native": ("auto", "force"),
}


def dataflow_step(workload: str, arrays: dict, way: str):
    """A function that runs one training step of ``workload`` here in ``way``'s mode and
    returns the loss, and one that frees what it holds."""
    import dataflow as df

    step, close = _dataflow_step(df, workload, arrays)
    return _in_mode(step, *DATAFLOW_MODES[way]), close


def _dataflow_step(df, workload: str, arrays: dict):
    if workload != "mlp-tf2":
        step, session = g.graph_training(df, workload, arrays)
        return step, session.close
    with df.eager_mode():
        optimizer = df.train.AdamOptimizer(w.LEARNING_RATE, epsilon=w.EPSILON)
        traced = g.function_training(df, df, optimizer, workload, arrays)

    def step():
        with df.eager_mode():
            return traced()

    return step, lambda: None


def _native_available() -> bool:
    from dataflow.client import compiler

    return compiler.native_available()


# -- one workload ----------------------------------------------------------------------------------
def measure_workload(workload: str, peers: dict, rounds: int, steps: int, directory: str) -> dict:
    """Every way of ``workload``'s step, timed in the same rounds: ``{way: (seconds or the
    reason it did not run, loss after `steps` steps or None)}``."""
    arrays = w.make_arrays(workload)
    path = os.path.join(directory, f"{workload}.npz")
    np.savez(path, **arrays)

    ways: dict = {}
    losses: dict = {}
    closers = []
    for way in DATAFLOW_MODES:
        if way == "dataflow native" and not _native_available():
            ways[way] = "numba is not installed"
            continue
        step, close = dataflow_step(workload, arrays, way)
        closers.append(close)
        ways[way] = step
        fresh, close_fresh = dataflow_step(workload, arrays, way)
        losses[way] = [fresh() for _ in range(steps)][-1]
        close_fresh()
    ways["GEMM floor"] = w.gemm_floor_step(workload)
    if BLAS_THREADS != "1" and importlib.util.find_spec("threadpoolctl") is not None:
        ways["GEMM floor, 1 thread"] = w.gemm_floor_step(workload, blas_threads=1)

    peer_cases = {
        "TF1 graph": ("TF1", "train", ()),
        "TF2 tf.function": ("TF2", "train", ()),
        "PyTorch eager": ("PyTorch", "eager", ()),
        "PyTorch compile": ("PyTorch", "compiled", ()),
        "JAX jit": ("JAX", "jit", ()),
    }
    for way, (peer, key, _) in peer_cases.items():
        if peer not in peers:
            flag = "--" + PEERS[peer][2].replace("_", "-")
            ways[way] = f"not run: no Python with it ({flag})"
            continue
        ways[way] = made = _peer_way(peers[peer], f"{key} {workload}", path)
        if isinstance(made, str):
            continue
        try:
            compiled = [True] if key == "compiled" else []
            losses[way] = peers[peer].call("losses", workload, path, steps, *compiled)[-1]
        except RuntimeError as e:
            losses[way] = None
            print(f"({way}: no losses: {e})")

    timed = {way: fn for way, fn in ways.items() if not isinstance(fn, str)}
    for fn in timed.values():
        for _ in range(WARMUP_STEPS):
            fn()
    seconds = dict(zip(timed, paired_median_times(*timed.values(), repeats=rounds)))
    for close in closers:
        close()
    return {way: (seconds.get(way, ways[way]), losses.get(way)) for way in ways}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f}"


def workload_table(workload: str, results: dict, rounds: int, steps: int) -> str:
    tf1 = results.get("TF1 graph", (None,))[0]
    floor = results["GEMM floor"][0]
    rows = []
    for way, (seconds, loss) in results.items():
        if isinstance(seconds, str):
            rows.append([way, "n/a", "", "", f"({seconds})"])
            continue
        rows.append(
            [
                way,
                _ms(seconds),
                f"{seconds / tf1:.2f}" if isinstance(tf1, float) else "",
                f"{seconds / floor:.2f}",
                "" if loss is None else f"{loss:.6g}",
            ]
        )
    header = ["way", "ms/step", "x TF1", "x floor", f"loss after {steps}"]
    return "\n".join(
        [
            f"== {workload}: {w.DESCRIPTIONS[workload]}; Adam; median over {rounds} rounds ==",
            _table(header, rows),
        ]
    )


def summary_table(all_results: dict) -> str:
    """dataflow's default mode against TensorFlow 1.x and the floor, with issue 25's
    targets."""
    rows = []
    for workload, results in all_results.items():
        ours, floor = results["dataflow compiled"][0], results["GEMM floor"][0]
        tf1 = results.get("TF1 graph", ("n/a",))[0]
        best = min(
            (results[way][0] for way in DATAFLOW_MODES if isinstance(results[way][0], float)),
        )
        row = [
            workload,
            _ms(ours),
            _ms(tf1) if isinstance(tf1, float) else "n/a",
            f"{ours / tf1:.2f}" if isinstance(tf1, float) else "",
            f"{best / tf1:.2f}" if isinstance(tf1, float) else "",
            _ms(floor),
            f"{ours / floor:.2f}",
        ]
        if "GEMM floor, 1 thread" in results:
            row.append(f"{ours / results['GEMM floor, 1 thread'][0]:.2f}")
        rows.append(row)
    header = ["workload", "ours ms", "TF1 ms", "ours/TF1", "best/TF1", "floor ms", "ours/floor"]
    if all(len(row) > len(header) for row in rows):
        header.append("ours/floor 1 thread")
    rows = [row[: len(header)] for row in rows]
    return "\n".join(
        [
            "== summary: ours = dataflow's default mode (compiled), best = the fastest of its "
            "three modes; targets: ours/TF1 <= 1.0, ours/floor <= 1.3 ==",
            _table(header, rows),
        ]
    )


def _table(header: list, rows: list) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).rjust(width) for cell, width in zip(header, widths))]
    for row in rows:
        cells = [str(row[0]).ljust(widths[0])]
        cells += [str(cell).rjust(width) for cell, width in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells))
    return "\n".join("  " + line for line in lines)


# -- under load ------------------------------------------------------------------------------------
def paired_samples(*functions, repeats: int) -> list[list[float]]:
    """Every timing of each function, timed in turn within each round (after one untimed
    call of each), as `harness.paired_median_times` times them."""
    for fn in functions:
        fn()
    samples: list[list[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for fn, times in zip(functions, samples):
            if isinstance(fn, SelfTimed):
                times.append(fn())
                continue
            began = time.perf_counter()
            fn()
            times.append(time.perf_counter() - began)
    return samples


def _percentile(samples: list, fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


def load_table(peers: dict, rounds: int, directory: str) -> str:
    """LeNet's forward pass at each of `training_workloads.LOAD_BATCHES`, dataflow (default
    mode) and TensorFlow 1.x in turn, without and then beside two CPU hogs: median and 90th
    percentile."""
    import dataflow as df

    arrays = w.make_arrays("lenet")
    path = os.path.join(directory, "lenet-load.npz")
    np.savez(path, **arrays)
    rows = []
    for batch in w.LOAD_BATCHES:
        batch_arrays = {**arrays, "x": arrays["x"][:batch], "labels": arrays["labels"][:batch]}
        run, session = g.graph_training(df, "lenet", batch_arrays, forward_only=True)
        ways = {"dataflow": run}
        if "TF1" in peers:
            ways["TF1 graph"] = peers["TF1"].timer(f"infer lenet {batch}", path)
        for fn in ways.values():
            for _ in range(WARMUP_STEPS):
                fn()
        repeats = rounds * (10 if batch == 1 else 2)
        without_hogs = paired_samples(*ways.values(), repeats=repeats)
        with CpuHogs(2):
            loaded = paired_samples(*ways.values(), repeats=repeats)
        session.close()
        for way, alone_times, loaded_times in zip(ways, without_hogs, loaded):
            median = statistics.median(loaded_times)
            p90 = _percentile(loaded_times, 0.9)
            rows.append(
                [
                    f"batch {batch}",
                    way,
                    _ms(statistics.median(alone_times)),
                    _ms(_percentile(alone_times, 0.9)),
                    _ms(median),
                    _ms(p90),
                    f"{p90 / median:.2f}",
                ]
            )
    header = ["batch", "way", "med", "p90", "2 hogs: med", "p90", "p90/med"]
    return "\n".join(
        [
            "== under load: LeNet forward pass, ms per run, without and beside 2 CPU hogs; "
            "target: loaded p90/med <= 2 ==",
            _table(header, rows),
        ]
    )


# -- the run ---------------------------------------------------------------------------------------
def parse_arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, 3 steps: a smoke run")
    parser.add_argument(
        "--only", help=f"workloads to run, comma-separated, of {', '.join(w.WORKLOADS)}, load"
    )
    parser.add_argument("--steps", type=int, help="steps before the loss is printed (20)")
    parser.add_argument("--rounds", type=int, help="timed rounds per workload (30)")
    parser.add_argument(
        "--blas-threads", help="numpy's BLAS threads (default: numpy's, one per core)"
    )
    parser.add_argument("--tensorflow-python", metavar="PYTHON", help="a Python with TensorFlow")
    parser.add_argument("--torch-python", metavar="PYTHON", help="a Python with PyTorch")
    parser.add_argument("--jax-python", metavar="PYTHON", help="a Python with JAX and optax")
    parser.add_argument("--no-peers", action="store_true", help="dataflow and the floor only")
    for _, flag, _ in PEERS.values():
        parser.add_argument(flag, action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_arguments(argv)
    for _, flag, _ in PEERS.values():
        if getattr(args, flag.lstrip("-").replace("-", "_")):
            _serve(flag)
            return 0
    names = args.only.split(",") if args.only else [*w.WORKLOADS, "load"]
    unknown = set(names) - {*w.WORKLOADS, "load"}
    if unknown:
        sys.exit(f"unknown workloads: {', '.join(sorted(unknown))}")
    rounds = args.rounds or (3 if args.quick else 30)
    steps = args.steps or (3 if args.quick else 20)

    print(
        describe_machine(
            rounds,
            blas_threads_from=BLAS_THREADS_FROM,
            loss_after=f"{steps} steps",
            peers="their default thread pools",
        )
    )
    peers = start_peers(args)
    print("peers: " + (", ".join(peers) if peers else "none"))
    results = {}
    try:
        with tempfile.TemporaryDirectory() as directory:
            for workload in (name for name in w.WORKLOADS if name in names):
                results[workload] = measure_workload(workload, peers, rounds, steps, directory)
                print()
                print(workload_table(workload, results[workload], rounds, steps), flush=True)
            if "load" in names:
                print()
                print(load_table(peers, rounds, directory), flush=True)
    finally:
        for partner in peers.values():
            partner.close()
    if results:
        print()
        print(summary_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What every benchmark script shares: BLAS threads pinned, median timings, TensorFlow 1.x.

A script imports this module before numpy (``import harness`` first, then ``# isort: split``):
importing it pins numpy's BLAS to one thread, because BLAS threads spin while they wait, and on
a small shared machine they fight the inter-op pool and other processes and make a 0.3 ms
matmul take 10 ms at random.  One BLAS thread keeps the figures about the runtime, the same in
every script; a setting already in the environment wins, and `describe_machine` prints what
was used.  Scripts run as ``python benchmarks/bench_x.py``, so this directory is on
``sys.path``.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402


def median_time(fn: Callable[[], object], repeats: int) -> float:
    """The median of ``repeats`` timings of ``fn``, after one call that is not timed (it builds
    and caches the plan)."""
    return paired_median_times(fn, repeats=repeats)[0]


def paired_median_times(*functions: Callable[[], object], repeats: int) -> tuple[float, ...]:
    """Medians of each function, timed in turn within every round so all see the same load
    (after one untimed call of each)."""
    for fn in functions:
        fn()
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for fn, samples in zip(functions, times):
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return tuple(statistics.median(samples) for samples in times)


def try_import_tensorflow():
    """``tf.compat.v1`` in graph mode with control flow v1 and quiet logs, or None when
    TensorFlow is not installed (or not usable here)."""
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        tf1 = tf.compat.v1
        tf1.logging.set_verbosity(tf1.logging.ERROR)
        tf1.disable_v2_behavior()
        tf1.disable_control_flow_v2()
        return tf1
    except Exception:  # not installed, or unusable here
        return None


def tensorflow_figures(
    script: str, measure: Callable[[object, int], dict], repeats: int, python: str | None
) -> dict | None:
    """TensorFlow's figures for a benchmark: ``measure(tf1, repeats)`` here when TensorFlow is
    importable, else ``script`` run with ``--tensorflow-only`` in ``python`` (`side_figures`);
    None when neither is possible."""
    tf1 = try_import_tensorflow()
    if tf1 is not None:
        return measure(tf1, repeats)
    return side_figures(script, "--tensorflow-only", "TensorFlow", None, repeats, python)


def side_figures(
    script: str,
    flag: str,
    what: str,
    measure: Callable[[int], dict] | None,
    repeats: int,
    python: str | None,
) -> dict | None:
    """Figures of another framework (``what``) that may be installed only in another Python:
    ``script`` run with ``flag --repeats N`` in ``python`` (it prints the figures as its last
    line of JSON), else ``measure(repeats)`` here when ``what``'s module imports here, else
    None."""
    if python is None:
        if measure is None:
            return None
        try:
            return measure(repeats)
        except ImportError:
            return None
    command = [python, script, flag, "--repeats", str(repeats)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print(f"({what} in {python} failed: {result.stderr.strip().splitlines()[-1:]})")
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


def describe_machine(repeats: object, **more: object) -> str:
    """The first line a script prints: cores, numpy, BLAS threads, repeats (a count, or counts
    per figure) and ``more`` (``graph_passes="off"`` prints ``graph passes: off``)."""
    import numpy as np

    fields = {
        "cores": os.cpu_count(),
        "numpy": np.__version__,
        "BLAS threads": os.environ["OPENBLAS_NUM_THREADS"],
        "repeats": repeats,
        **{name.replace("_", " "): value for name, value in more.items()},
    }
    return "   ".join(f"{name}: {value}" for name, value in fields.items())

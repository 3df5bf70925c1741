"""What every benchmark script shares: BLAS threads pinned, median timings, TensorFlow 1.x
timed in step with dataflow (`Partner`).

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

import functools  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402


def median_time(fn: Callable[[], object], repeats: int) -> float:
    """The median of ``repeats`` timings of ``fn``, after one call that is not timed (it builds
    and caches the plan)."""
    return paired_median_times(fn, repeats=repeats)[0]


def paired_median_times(*functions: Callable[[], object], repeats: int) -> tuple[float, ...]:
    """Medians of each function, timed in turn within every round so all see the same load
    (after one untimed call of each).  A `SelfTimed` function (another framework's run in its
    own process, `Partner.timer`) is not timed here: it returns its own seconds."""
    for fn in functions:
        fn()
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeats):
        for fn, samples in zip(functions, times):
            if isinstance(fn, SelfTimed):
                samples.append(fn())
                continue
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return tuple(statistics.median(samples) for samples in times)


class SelfTimed:
    """A function that times one run itself and returns its seconds (see `Partner`)."""

    def __init__(self, fn: Callable[[], float]) -> None:
        self._fn = fn

    def __call__(self) -> float:
        return self._fn()


# -- Another framework, timed in step with dataflow -----------------------------------------------
class Partner:
    """Another framework's runs (TensorFlow's), timed round by round between dataflow's.

    A benchmark names its cases for the other framework with ``cases(module) -> {key: make}``,
    where ``make()`` builds one case and returns a function that runs it once.  The partner
    lives where that framework does: in this process when it imports here, else in a child,
    ``script`` run with ``flag`` in the Python given (`serve_partner` answers there, one JSON
    line per request), started once and kept for the whole benchmark.  `timer` gives a case as
    a `SelfTimed` function, so `paired_median_times` takes its runs in the same rounds as
    dataflow's: dataflow, TensorFlow, dataflow, TensorFlow, ... under the same load; the time
    of a run is measured where it runs, around the run alone.  ``first_ms[key]``: the first
    run of each case (built and run once when `timer` is first asked for it).
    """

    def __init__(self, cases: Callable[[], dict] | None = None, command: list | None = None):
        self.first_ms: dict[str, float] = {}
        self._made: dict[str, Callable[[], object]] = {}
        self._cases = cases() if cases is not None else None
        self._process = None
        if command is not None:
            # The framework's logs go to a file, shown when the partner fails.
            self._log = tempfile.TemporaryFile("w+")
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                text=True,
                bufsize=1,
            )

    @classmethod
    def start(cls, load: Callable[[], object], cases, script: str, flag: str, python: str | None):
        """A partner for ``cases`` of the module that ``load`` gives (`try_import_tensorflow`):
        here when it imports, else in ``python``; None when neither is possible."""
        module = load()
        if module is not None:
            return cls(cases=lambda: cases(module))
        if python is None:
            return None
        partner = cls(command=[python, script, flag])
        if partner._ask({"ping": True}) is None:
            partner.close()
            return None
        return partner

    def _ask(self, request: dict) -> dict | None:
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            line = self._process.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            self._log.seek(0)
            print(f"(the partner {self._process.args} ended: {self._log.read()[-2000:]})")
            return None
        return json.loads(line)

    def timer(self, key: str, *args) -> SelfTimed:
        """Case ``key`` as a function that runs it once and returns its seconds (made by
        ``make(*args)``, and its first run timed into ``first_ms``, on the first call of
        `timer`; ``args`` are JSON values)."""
        if self._process is None:
            if key not in self._made:
                began = time.perf_counter()
                self._made[key] = run = self._cases[key](*args)
                run()
                self.first_ms[key] = (time.perf_counter() - began) * 1e3
            return SelfTimed(functools.partial(_time_once, self._made[key]))
        if key not in self.first_ms:
            answer = self._ask({"make": key, "args": list(args)})
            if answer is None or "error" in answer:
                raise RuntimeError(f"the partner could not make {key!r}: {answer}")
            self.first_ms[key] = answer["first_ms"]
        return SelfTimed(lambda: self._answer({"time": key})["seconds"])

    def call(self, key: str, *args):
        """What ``cases[key](*args)`` returns (a JSON value), not timed: figures a benchmark
        collects after its runs."""
        if self._process is None:
            return self._cases[key](*args)
        return self._answer({"call": key, "args": list(args)})["value"]

    def _answer(self, request: dict) -> dict:
        answer = self._ask(request)
        if answer is None:
            raise RuntimeError(f"the partner ended before it answered {request}")
        return answer

    def close(self) -> None:
        if self._process is not None:
            self._process.stdin.close()
            self._process.wait(timeout=60)
            self._process = None
            self._log.close()


def _time_once(run: Callable[[], object]) -> float:
    began = time.perf_counter()
    run()
    return time.perf_counter() - began


def serve_partner(load: Callable[[], object], cases: Callable[[object], dict]) -> None:
    """The child's side of `Partner`: ``cases(load())`` (it exits at once when ``load`` gives
    None: the framework does not import here), answering requests on stdin (``make`` a case,
    ``time`` one run of it) with one JSON line each on the original stdout; anything else the
    framework prints goes to stderr."""
    module = load()
    if module is None:
        sys.exit(f"{load.__name__}: nothing to load in {sys.executable}")
    cases = cases(module)
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    made: dict[str, Callable[[], object]] = {}
    for line in sys.stdin:
        request = json.loads(line)
        if "ping" in request:
            answer: dict = {"pong": True}
        elif "call" in request:
            answer = {"value": cases[request["call"]](*request["args"])}
        elif "make" in request:
            key = request["make"]
            try:
                began = time.perf_counter()
                made[key] = run = cases[key](*request["args"])
                run()
                answer = {"first_ms": (time.perf_counter() - began) * 1e3}
            except Exception as e:  # noqa: BLE001 - reported to the parent
                answer = {"error": f"{type(e).__name__}: {e}"}
        else:
            answer = {"seconds": _time_once(made[request["time"]])}
        answers.write(json.dumps(answer) + "\n")


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


# -- Load from elsewhere on the machine ------------------------------------------------------------
def _spin(stop) -> None:
    while not stop.is_set():
        sum(range(10_000))


class CpuHogs:
    """``count`` processes that keep one core busy each, for as long as the ``with`` block runs:
    the load another program on a shared machine puts beside a benchmark, to show how a run
    behaves when it does not have the cores to itself.

        with CpuHogs(2):
            ...  # timings under load
    """

    def __init__(self, count: int = 2) -> None:
        self.count = count
        self._processes: list = []

    def __enter__(self) -> CpuHogs:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._stop = context.Event()
        self._processes = [
            context.Process(target=_spin, args=(self._stop,), daemon=True)
            for _ in range(self.count)
        ]
        for process in self._processes:
            process.start()
        time.sleep(0.2)  # let them reach the loop before the timings start
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
        self._processes = []

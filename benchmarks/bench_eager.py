"""Dynamic against static execution: prints figures side by side, in one run.

    python benchmarks/bench_eager.py            # every figure
    python benchmarks/bench_eager.py --quick    # fewer repeats and sizes (CI speed)

One function per figure; `main` prints them in turn.

0. `section_eager_per_op_overhead`: add, mul, matmul, relu and reduce_sum on scalars and on
   10x10 arrays, eagerly, as the df function and as the Python operator (``+ * @``), against
   the numpy call the op's kernel makes (median microseconds per op in CPU time, ratio to that
   numpy floor); TensorFlow 2's and PyTorch's eager ops beside them with
   ``--tensorflow-python PATH`` / ``--torch-python PATH`` (a Python that has the library:
   neither is a dependency), and one ``Session.run`` of a scalar add for scale.
   `section_where_the_time_goes` then splits one eager ``a + b`` into its steps.
0b. `bench_function` (tracing): the call overhead of a traced 10-op function after tracing
   (its `ConcreteFunction` run through its cached plan) against one ``Session.run`` of the
   same 10-op graph, fed the same value, and the whole eager call (finding the trace,
   running it, making the EagerTensor) against the same (target: within 2x); and trace time
   against the function's length (10 to 3000 ops, `trace_time_figure`): it grows linearly,
   so the time per op added stays flat.
0c. `bench_graph_breaks` (breaks): a 20-op function with one ``.numpy()`` in the middle,
   called eagerly op by op, through ``df.function(experimental_graph_breaks=True)`` (two
   traced segments and the breaking statement), and the same 20 ops with no break under a
   plain ``df.function``, for scale.
1. `lazy_chain_figure`: a chain of 30 small elementwise ops at several array sizes, run by
   numpy directly (the floor), eagerly (one op at a time), lazily (`df.lazy_mode`: recorded,
   then one run with the graph passes, which fuse the chain into one kernel; in a new block
   each time, and again in one block, where the plan of the first run is reused), traced
   (`df.function`, called eagerly) and as a graph built once and run by a Session.  Lazy
   mode pays for recording on every run (and in a new block, for planning too), so against
   eager it wins only once the arrays are large enough for fusion (no intermediate arrays) to
   outweigh that.
2. `training_loop_figure`: an MLP's training step (forward, gradients, SGD update) on random
   data, for a range of layer widths: eagerly (`df.GradientTape`), under `df.function` (the
   step traced whole, parameters in and out), lazily (`df.gradients` in one ``lazy_mode``
   block) and as a graph run by a Session; time per step, and where the fastest way changes.
   PyTorch eager is an optional row when ``torch`` is importable.  A way whose parts are not
   in this build prints ``n/a``.
3. `training_crossover_figure`: from how many ops a df.function (called eagerly) is faster
   than the same ops run eagerly: a chain of 2 to 64 small ops, then the training step of
   figure 2 at depths 0 to 8 (16) hidden layers, at widths 8 and 512; each prints its
   crossover.

4. `tf2_training_figure`: one training step written the TensorFlow 2 way (a `df.Module` MLP,
   `GradientTape`, the optimizer's ``apply_gradients``, in a ``df.function``) beside the same
   step run eagerly, the same model as a TF1 graph here, TensorFlow 2's ``tf.function`` and
   PyTorch eager (each timed round by round in its own process when given
   ``--tensorflow-python`` / ``--torch-python``), with the loss after the same steps from the
   same start (`tf2_training`).  ``--only tf2`` prints this figure alone.

Timings are medians over repeats, every way timed in turn within a round; the machine may be
shared, so read the ratios.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import Partner, describe_machine, paired_median_times, serve_partner

# isort: split
import argparse
import gc
import json
import operator
import statistics
import subprocess
import time
import timeit
from functools import partial
from typing import Optional

import numpy as np

import dataflow as df


# -- 0. eager per-op overhead ----------------------------------------------------------------
def _median_us(fn, number: int = 2000, repeat: int = 7) -> float:
    """Median microseconds per call of ``fn``, in CPU time of this process (so the other load
    of a shared machine counts less than it would in wall time)."""
    times = timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time)
    return statistics.median(times) / number * 1e6


# The per-op cases: (label, op, operand shape).  An op is timed as the numpy call its kernel
# makes (the floor), as the df function, as its Python operator where it has one, and in
# TensorFlow 2 and PyTorch eager when a Python with them is given.  ``matmul`` of "scalars"
# multiplies 1x1 matrices.
_PER_OP_CASES = tuple(
    (f"{label} {op}", op, shape)
    for label, shape in (("scalar", ()), ("10x10", (10, 10)))
    for op in ("add", "mul", "matmul", "relu", "reduce_sum")
)
_OPERATORS = {"add": operator.add, "mul": operator.mul, "matmul": operator.matmul}


def _operands(op: str, shape: tuple) -> tuple:
    if op == "matmul" and not shape:
        shape = (1, 1)
    return np.full(shape, 1.5, np.float32), np.full(shape, -2.5, np.float32)


# The same cases in another Python, timed the same way: OPS maps an op to a function of the
# two operands, made from ``LIBRARY`` and ``CONVERT`` (its eager tensor from a numpy array).
_OTHER_EAGER = """
import json, os, statistics, time, timeit
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
SETUP
figures = {}
for label, op, shape in CASES:
    if op == "matmul" and not shape:
        shape = (1, 1)
    a = CONVERT(np.full(shape, 1.5, np.float32))
    b = CONVERT(np.full(shape, -2.5, np.float32))
    fn = OPS[op]
    fn(a, b)
    times = timeit.repeat(lambda: fn(a, b), number=2000, repeat=7, timer=time.process_time)
    figures[label] = statistics.median(times) / 2000 * 1e6
print(json.dumps(figures))
"""
_TENSORFLOW_SETUP = """
import tensorflow as tf
CONVERT = tf.constant
OPS = {"add": tf.add, "mul": tf.multiply, "matmul": tf.matmul,
       "relu": lambda a, b: tf.nn.relu(a), "reduce_sum": lambda a, b: tf.reduce_sum(a)}
"""
_TORCH_SETUP = """
import torch
torch.set_num_threads(1)
CONVERT = torch.from_numpy
OPS = {"add": torch.add, "mul": torch.mul, "matmul": torch.matmul,
       "relu": lambda a, b: torch.relu(a), "reduce_sum": lambda a, b: torch.sum(a)}
"""


def _other_eager_per_op(python: Optional[str], setup: str, what: str) -> dict:
    """Microseconds per op of another framework's eager mode, per case, measured by
    ``python`` (a Python that has it); empty when none is given or it fails."""
    if python is None:
        return {}
    script = _OTHER_EAGER.replace("SETUP", setup).replace("CASES", repr(_PER_OP_CASES))
    result = subprocess.run([python, "-c", script], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print(f"({what} in {python} failed: {result.stderr.strip().splitlines()[-1:]})")
        return {}
    return json.loads(result.stdout.strip().splitlines()[-1])


def _numpy_floor(op: str, a, b):
    """The numpy call the op's kernel makes, on the same operands."""
    return {
        "add": lambda: np.add(a, b),
        "mul": lambda: np.multiply(a, b),
        "matmul": lambda: np.matmul(a, b),
        "relu": lambda: np.maximum(a, 0),
        "reduce_sum": lambda: np.add.reduce(a, axis=None, dtype=a.dtype, keepdims=False),
    }[op]


def _df_function(op: str, ta, tb):
    return {
        "add": lambda: df.add(ta, tb),
        "mul": lambda: df.multiply(ta, tb),
        "matmul": lambda: df.matmul(ta, tb),
        "relu": lambda: df.nn.relu(ta),
        "reduce_sum": lambda: df.reduce_sum(ta),
    }[op]


def section_eager_per_op_overhead(
    tensorflow_python: Optional[str] = None, torch_python: Optional[str] = None
) -> None:
    """One op on scalars and on 10x10 arrays, eagerly, against the numpy call its kernel makes
    (and TensorFlow 2's and PyTorch's eager ops, given a Python that has them)."""
    print("== eager per-op overhead (median us per op, CPU time; x = ratio to the numpy floor) ==")
    others = {
        "TF2": _other_eager_per_op(tensorflow_python, _TENSORFLOW_SETUP, "TensorFlow"),
        "torch": _other_eager_per_op(torch_python, _TORCH_SETUP, "PyTorch"),
    }
    header = ["case", "numpy", "df function", "operator"] + [n for n, f in others.items() if f]
    rows = []
    with df.eager_mode():
        for label, op, shape in _PER_OP_CASES:
            a, b = _operands(op, shape)
            ta, tb = df.constant(a), df.constant(b)
            floor = _median_us(_numpy_floor(op, a, b))
            row = [label, f"{floor:.2f}"]
            function = _median_us(_df_function(op, ta, tb))
            row.append(f"{function:.2f} ({function / floor:.1f}x)")
            if op in _OPERATORS:
                by_operator = _median_us(partial(_OPERATORS[op], ta, tb))
                row.append(f"{by_operator:.2f} ({by_operator / floor:.1f}x)")
            else:
                row.append("-")
            for figures in others.values():
                if figures:
                    other = figures.get(label)
                    row.append("n/a" if other is None else f"{other:.2f} ({other / floor:.1f}x)")
            rows.append(row)
        print(_table(header, rows))
        ta = df.constant(np.float32(1.5))
        converted = _median_us(lambda: ta * 2.0)
        print(f"scalar * 2.0 (a Python operand, converted once and kept): {converted:6.2f}")
        sess_graph = df.Graph()
    with sess_graph.as_default():
        a = df.constant(np.float32(1.5))
        total = a + a
        with df.Session() as sess:
            sess.run(total)
            run = _median_us(lambda: sess.run(total), number=500)
    print(f"for scale, one Session.run of a scalar add: {run:6.2f}")


def section_where_the_time_goes() -> None:
    """The short way of one eager ``a + b`` (`dataflow.eager.runner.run_planned`), step by
    step: each step timed alone, less the cost of an empty call; the operator's own share is
    the whole ``a + b`` less one ``run_planned`` call, and run_planned's is that call less its
    steps (Python calls and the freeing of the result)."""
    from dataflow.eager.runner import EagerTensor, run_planned, runs_eagerly_unrecorded

    print("-- where the time of one eager a + b goes (median us, CPU time) --")
    rows = []
    with df.eager_mode():
        plans = df.get_default_graph()._op_runner._plans
        for label, shape in (("scalar", ()), ("10x10", (10, 10))):
            a, b = _operands("add", shape)
            ta, tb = df.constant(a), df.constant(b)
            enum = ta.dtype.as_datatype_enum
            key = ("Add", (), enum, a.shape, enum, b.shape)
            ta + tb  # the plan is kept
            result = np.add(a, b)
            empty = _median_us(lambda: None)
            whole = _median_us(partial(operator.add, ta, tb)) - empty
            short_way = _median_us(partial(run_planned, key, (a, b), "add")) - empty
            steps = {
                "the operator: call, operand check, plan key": whole - short_way,
                "run_planned: mode and tape check": _median_us(runs_eagerly_unrecorded) - empty,
                "run_planned: plan lookup": _median_us(partial(plans.get, key)) - empty,
                "run_planned: kernel (np.add)": _median_us(partial(np.add, a, b)) - empty,
                "run_planned: a 0-d result made an array": (
                    _median_us(partial(np.asarray, result, np.float32)) - empty if not shape else 0
                ),
                "run_planned: the EagerTensor": _median_us(
                    partial(EagerTensor, np.asarray(result), df.float32, "add")
                )
                - empty,
            }
            steps["run_planned: its call, the steps between"] = short_way - sum(
                time for name, time in steps.items() if name.startswith("run_planned")
            )
            rows.append((label, steps, whole))
    names = list(rows[0][1])
    table = [[name, *(f"{steps[name]:.2f}" for _, steps, _ in rows)] for name in names]
    table.append(["whole a + b", *(f"{whole:.2f}" for _, _, whole in rows)])
    print(_table(["step", *(label for label, _, _ in rows)], table))


# -- 0b. df.function call overhead and trace time ----------------------------------------------
def _ten_ops(x):
    """Ten small elementwise ops on ``x``."""
    y = x
    for i in range(5):
        y = df.tanh(y * (0.5 + i))
    return y


def bench_function(repeats: int) -> None:
    """df.function: call overhead against Session.run, and trace time against length."""
    print("-- df.function --")
    value = np.ones(4, np.float32)

    traced = df.function(_ten_ops)
    concrete = traced.get_concrete_function(df.TensorSpec([4], df.float32))
    computing = [op for op in concrete.graph.get_operations() if op.inputs]
    assert len(computing) == 10, [op.type for op in computing]

    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [4])
        y = _ten_ops(x)
    session = df.Session(graph=graph)
    call_time, run_time = paired_median_times(
        lambda: concrete._run([value]), lambda: session.run(y, {x: value}), repeats=repeats
    )
    print(
        f"10-op function call: {call_time * 1e6:8.1f} us   Session.run of the same graph: "
        f"{run_time * 1e6:8.1f} us   ratio {call_time / run_time:.2f} (target <= 2)"
    )
    with df.eager_mode():
        eager_value = df.constant(value)
        traced(eager_value)
        eager_call, run_time = paired_median_times(
            lambda: traced(eager_value), lambda: session.run(y, {x: value}), repeats=repeats
        )
    print(
        f"10-op function called eagerly (signature, run, EagerTensor out): "
        f"{eager_call * 1e6:8.1f} us   ratio to Session.run {eager_call / run_time:.2f} "
        "(target <= 2)"
    )

    print(trace_time_figure((10, 100, 1000, 3000), rounds=9 if repeats < 1000 else 21))


def _function_of_length(length: int):
    """A Python function of ``length`` small ops (a multiply and a tanh, ``length // 2`` times)."""

    def long_function(x):
        for _ in range(length // 2):
            x = df.tanh(x * 0.5)
        return x

    return long_function


def trace_time_figure(lengths: tuple, rounds: int) -> str:
    """Trace time against the function's length: the median time of one trace (of a new
    ``df.function``, so nothing is cached), per op, and per op added from the length before
    (the slope, free of the fixed cost of a trace).  Linear means the slope stays flat from
    the second length on (the first slope, over a few ops, is mostly noise).  Python's garbage
    collector is paused during each trace: its full collections scan the whole heap, and their
    timing, not the tracer, would decide the figure for the longest functions."""
    spec = df.TensorSpec([4], df.float32)

    def trace(length: int) -> None:
        function = df.function(_function_of_length(length))
        gc.disable()
        try:
            function.get_concrete_function(spec)
        finally:
            gc.enable()

    traces = [lambda length=length: trace(length) for length in lengths]
    medians = paired_median_times(*traces, repeats=rounds)
    lines = ["trace time by function length (median of one trace; per op; per op added):"]
    slopes = []
    for i, (length, median) in enumerate(zip(lengths, medians)):
        added = ""
        if i:
            slope = (median - medians[i - 1]) / (length - lengths[i - 1])
            slopes.append(slope)
            added = f"   {slope * 1e6:6.1f} us per op from {lengths[i - 1]} ops"
        lines.append(
            f"  {length:5d} ops: {median * 1e3:8.2f} ms   {median / length * 1e6:6.1f} us per op"
            + added
        )
    lines.append(
        f"  linear: the slope from {lengths[-2]} ops is {slopes[-1] / slopes[1]:.2f}x the one "
        f"from {lengths[1]} (about 1 when each op costs the same to trace, however long the "
        "function)"
    )
    return "\n".join(lines)


def _twenty_ops_with_a_break(x):
    """Twenty small ops, with one statement that needs a value between the two halves."""
    y = _ten_ops(x)
    peek = y.numpy()
    return _ten_ops(y) + peek


def _twenty_ops(x):
    return _ten_ops(_ten_ops(x)) + 1.0


def bench_graph_breaks(repeats: int) -> None:
    """df.function with graph breaks against eager calls and a break-free trace."""
    print("-- graph breaks --")
    with df.eager_mode():
        value = df.constant(np.ones(4, np.float32))
        broken = df.function(_twenty_ops_with_a_break, experimental_graph_breaks=True)
        whole = df.function(_twenty_ops)
        eager_time, broken_time, whole_time = paired_median_times(
            lambda: _twenty_ops_with_a_break(value),
            lambda: broken(value),
            lambda: whole(value),
            repeats=max(20, repeats // 10),
        )
    print(
        f"20 ops, one .numpy() between: eagerly {eager_time * 1e6:8.1f} us   with graph breaks "
        f"{broken_time * 1e6:8.1f} us ({broken_time / eager_time:.2f}x eager; "
        f"{len(broken.graph_breaks())} break)   no break, one trace {whole_time * 1e6:8.1f} us"
    )


def _table(header: list, rows: list) -> str:
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(cell).rjust(width) for cell, width in zip(row, widths)) for row in rows]
    head = "  ".join(str(cell).rjust(width) for cell, width in zip(header, widths))
    return "\n".join([head, "-" * len(head), *lines])


def _crossover(claim: str, ratios: list, unit: str = "") -> str:
    """Where ``claim`` holds, from (setting, ratio) pairs in increasing order of the setting:
    a ratio above 1.1 counts as faster (below that, within the noise of a shared machine)."""
    wins = [setting for setting, ratio in ratios if ratio > 1.1]
    if not wins:
        return f"   nowhere measured: {claim} by more than 10%"
    if len(wins) == len(ratios):
        return f"   at every setting measured: {claim} by more than 10%"
    return f"   {claim} by more than 10% at {', '.join(f'{unit}{w}' for w in wins)} only"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


# -- 1. a chain of small elementwise ops: eager, lazy, graph ----------------------------------
def elementwise_chain(x, m=df):
    """30 elementwise ops: scale, shift, clamp, fold and squash, six times over."""
    for k in range(6):
        x = m.multiply(x, 0.999 - k * 1e-3)
        x = m.add(x, 0.25)
        x = m.maximum(x, -4.0)
        x = m.abs(x)
        x = m.tanh(x)
    return x


def _chain_row(size: int, repeats: int) -> tuple:
    """The figure's row for arrays of ``size`` elements, and eager's time over lazy's."""
    data = np.random.default_rng(0).standard_normal(size)
    expected = elementwise_chain(data, np)

    def eager():
        with df.eager_mode():
            return elementwise_chain(df.constant(data)).numpy()

    def lazy():
        with df.lazy_mode():
            return elementwise_chain(df.constant(data)).numpy()

    graph = df.Graph()
    with graph.as_default():
        fed = df.placeholder(df.float64, [size])
        result = elementwise_chain(fed)
    traced_chain = df.function(elementwise_chain)

    def traced():
        with df.eager_mode():
            return traced_chain(df.constant(data)).numpy()

    with df.Session(graph=graph) as session, df.lazy_mode() as recording:

        def static():
            return session.run(result, {fed: data})

        def lazy_again():  # in one lazy_mode block: the chain's plan is made once
            return elementwise_chain(df.constant(data)).numpy()

        ways = (eager, lazy, lazy_again, traced, static)
        for way in ways:
            np.testing.assert_allclose(way(), expected, rtol=1e-12)
        floor, *times = paired_median_times(
            lambda: elementwise_chain(data, np), *ways, repeats=repeats
        )
        assert recording.plan_reuses == recording.materialisations - 1
    eager_t, _, again_t, traced_t, _ = times
    row = [
        f"{size:,}",
        _ms(floor),
        *(_ms(t) for t in times),
        f"{eager_t / again_t:.2f}",
        f"{again_t / traced_t:.2f}",
    ]
    return row, eager_t / again_t


def lazy_chain_figure(quick: bool) -> str:
    sizes = (1, 1_000, 100_000) if quick else (1, 1_000, 100_000, 1_000_000)
    repeats = 5 if quick else 15
    measured = [(size, *_chain_row(size, repeats)) for size in sizes]
    rows = [row for _, row, _ in measured]
    lazy_gains = [(f"{size:,} elements", gain) for size, _, gain in measured]
    header = [
        "elements",
        "numpy",
        "eager",
        "lazy, new",
        "lazy, again",
        "function",
        "graph",
        "eager/again",
        "again/function",
    ]
    return (
        "1. A chain of 30 elementwise ops (float64), median time per evaluation\n"
        + _table(header, rows)
        + "\n   lazy, new = a new lazy_mode block each time: record, plan with the passes (the"
        "\n     chain fuses into one kernel), run;"
        "\n   lazy, again = the chain recorded again in one block: record, then the plan made"
        "\n     the first time runs with the new data;"
        "\n   function = df.function of the chain, traced once, called eagerly;"
        "\n   graph = the chain built once as a graph, a Session run of its cached plan."
        + "\n"
        + _crossover("lazy (again) is faster than eager", lazy_gains)
    )


# -- 2. a training loop: eager, df.function, lazy, graph --------------------------------------
LEARNING_RATE = 0.01
BATCH = 32
INPUTS = 16


def _mlp_init(width: int, depth: int = 2) -> list:
    """The initial weights and biases of an MLP with ``depth`` hidden layers of ``width``
    units (weight, bias, weight, bias, ...; the last pair is the linear output layer)."""
    rng = np.random.default_rng(0)
    sizes = [INPUTS] + [width] * depth + [1]
    shapes = [shape for n, m in zip(sizes, sizes[1:]) for shape in ((n, m), (m,))]
    return [
        (rng.normal(size=shape) / np.sqrt(shape[0] if len(shape) == 2 else 1)).astype(np.float32)
        for shape in shapes
    ]


def _mlp_loss(params, x, y):
    *hidden_layers, w_out, b_out = params
    hidden = x
    for weights, biases in zip(hidden_layers[::2], hidden_layers[1::2]):
        hidden = df.nn.relu(df.matmul(hidden, weights) + biases)
    return df.reduce_mean(df.square(df.matmul(hidden, w_out) + b_out - y))


def _sgd(params, grads, learning_rate: float = LEARNING_RATE) -> None:
    for param, grad in zip(params, grads):
        param.assign_sub(learning_rate * grad)


def _graph_step(width: int, x, y):
    graph = df.Graph()
    with graph.as_default():
        params = [df.Variable(value) for value in _mlp_init(width)]
        fed_x = df.placeholder(df.float32, x.shape)
        fed_y = df.placeholder(df.float32, y.shape)
        loss = _mlp_loss(params, fed_x, fed_y)
        grads = df.gradients(loss, params)
        with df.control_dependencies([loss]):
            train = df.group(*[p.assign_sub(LEARNING_RATE * g) for p, g in zip(params, grads)])
        session = df.Session(graph=graph)
        session.run(df.global_variables_initializer())
    return lambda: session.run([loss, train], {fed_x: x, fed_y: y})[0]


def _lazy_step(width: int, x, y):
    """Must be called, and its step run, inside one ``lazy_mode`` block."""
    params = [df.Variable(value) for value in _mlp_init(width)]

    def step():
        loss = _mlp_loss(params, x, y)
        _sgd(params, df.gradients(loss, params))
        return float(loss)

    return step


def _eager_step(width: int, x, y, depth: int = 2, learning_rate: float = LEARNING_RATE):
    if not hasattr(df, "GradientTape"):
        return None
    with df.eager_mode():
        params = [df.Variable(value) for value in _mlp_init(width, depth)]

    def step():
        with df.eager_mode():
            with df.GradientTape() as tape:
                loss = _mlp_loss(params, x, y)
            _sgd(params, tape.gradient(loss, params), learning_rate)
            return float(loss)

    return step


def _function_step(width: int, x, y, depth: int = 2, learning_rate: float = LEARNING_RATE):
    """The step as one traced function: it takes the parameters and returns the loss and the
    updated parameters, so the whole step is one graph run (variables captured by a traced
    function get no gradient from ``df.gradients`` in this build)."""
    if not hasattr(df, "function"):
        return None

    @df.function
    def train(params, x, y):
        loss = _mlp_loss(params, x, y)
        grads = df.gradients(loss, params)
        return loss, [p - learning_rate * g for p, g in zip(params, grads)]

    with df.eager_mode():
        params = [df.constant(value) for value in _mlp_init(width, depth)]

    def step():
        nonlocal params
        with df.eager_mode():
            loss, params = train(params, x, y)
            return float(loss)

    step.function = train
    step.arguments = (params, x, y)
    return step


def _torch_step(width: int, x, y):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    params = [torch.tensor(value, requires_grad=True) for value in _mlp_init(width)]
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def step():
        w1, b1, w2, b2, w3, b3 = params
        hidden = torch.relu(tx @ w1 + b1)
        hidden = torch.relu(hidden @ w2 + b2)
        loss = ((hidden @ w3 + b3 - ty) ** 2).mean()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for param, grad in zip(params, grads):
                param -= LEARNING_RATE * grad
        return float(loss)

    return step


def _training_row(width: int, repeats: int) -> tuple:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(BATCH, INPUTS)).astype(np.float32)
    y = rng.normal(size=(BATCH, 1)).astype(np.float32)
    ways = {
        "eager": _eager_step(width, x, y),
        "function": _function_step(width, x, y),
        "graph": _graph_step(width, x, y),
        "torch": _torch_step(width, x, y),
    }
    with df.lazy_mode():
        ways["lazy"] = _lazy_step(width, x, y)
        present = {name: step for name, step in ways.items() if step is not None}
        first_losses = {name: step() for name, step in present.items()}
        reference = first_losses["graph"]
        for name, loss in first_losses.items():
            assert abs(loss - reference) <= 1e-4 * max(1.0, abs(reference)), (name, loss)
        times = dict(zip(present, paired_median_times(*present.values(), repeats=repeats)))
    return width, times


TRAINING_WAYS = ("eager", "function", "lazy", "graph", "torch")


def training_loop_figure(quick: bool) -> str:
    widths = (4, 64, 512) if quick else (4, 16, 64, 256, 1024)
    repeats = 5 if quick else 15
    results = [_training_row(width, repeats) for width in widths]
    header = ["width", *TRAINING_WAYS, "fastest"]
    rows = []
    for width, times in results:
        ours = {name: t for name, t in times.items() if name != "torch"}
        rows.append(
            [
                width,
                *(_ms(times[name]) if name in times else "n/a" for name in TRAINING_WAYS),
                min(ours, key=ours.get),
            ]
        )
    lines = [
        f"2. One SGD step of an MLP ({INPUTS} inputs, two hidden ReLU layers of `width` units, "
        f"batch {BATCH}), median time per step",
        _table(header, rows),
    ]
    if "function" in results[0][1] and "eager" in results[0][1]:
        ratios = [(width, times["eager"] / times["function"]) for width, times in results]
        lines.append(
            "   eager/function per width: "
            + ", ".join(f"{width}: {ratio:.2f}" for width, ratio in ratios)
        )
        lines.append(_crossover("df.function is faster than eager", ratios, "width "))
    return "\n".join(lines)


# Deep, wide MLPs diverge at figure 2's rate within the timed steps (and inf and NaN run at
# other speeds): the crossover sweep learns slower.
CROSSOVER_LEARNING_RATE = 1e-4


def _ops_per_step(function_step) -> int:
    """The computing ops (neither placeholders nor constants) of a traced training step."""
    with df.eager_mode():
        concrete = function_step.function.get_concrete_function(*function_step.arguments)
    return sum(op.type not in ("Placeholder", "Const") for op in concrete.graph.get_operations())


def _faster_from(counts_and_ratios: list) -> Optional[int]:
    """The smallest op count from which every ratio (eager over function) is above 1.1 (faster
    by more than the noise of a shared machine), or None when the largest is not."""
    crossover = None
    for count, ratio in reversed(counts_and_ratios):
        if ratio <= 1.1:
            break
        crossover = count
    return crossover


def _chain_crossover(repeats: int) -> tuple[list, str]:
    """Rows of a chain of n small ops (on 4 floats) run eagerly and as a df.function called
    eagerly, and from how many ops the function is faster."""
    value = np.ones(4, np.float32)
    rows, measured = [], []
    with df.eager_mode():
        tensor = df.constant(value)
        for length in (2, 4, 8, 16, 32, 64):
            chain = _function_of_length(length)
            traced = df.function(chain)
            np.testing.assert_allclose(traced(tensor).numpy(), chain(tensor).numpy(), rtol=1e-6)
            eager_time, function_time = paired_median_times(
                lambda chain=chain: chain(tensor),
                lambda traced=traced: traced(tensor),
                repeats=repeats,
            )
            measured.append((length, eager_time / function_time))
            rows.append(
                ["chain", "", length, _ms(eager_time), _ms(function_time), f"{measured[-1][1]:.2f}"]
            )
    return rows, f"   a chain of small ops: df.function is {_crossover_words(measured)}"


def _crossover_words(counts_and_ratios: list) -> str:
    crossover = _faster_from(counts_and_ratios)
    if crossover is None:
        return "not faster by more than 10% at the most ops measured"
    if crossover == counts_and_ratios[0][0]:
        return f"faster by more than 10% at every size measured, from {crossover} ops"
    return f"faster by more than 10% from {crossover} ops on"


def training_crossover_figure(quick: bool) -> str:
    """Where a function under ``df.function`` becomes faster than the same ops run eagerly: a
    chain of n small ops, then the training step of figure 2 over its depth (ops per step) at
    a small and a large width.  Eager pays a fixed cost per op (and the tape's per op again
    for gradients); a function pays a fixed cost per call, then far less per op; with large
    ops the kernels dominate both, so the function wins once ops are many and small."""
    depths = (0, 1, 4, 8) if quick else (0, 1, 2, 4, 8, 16)
    widths = (8, 512)
    repeats = 9 if quick else 21
    rows, chain_said = _chain_crossover(repeats * 10)
    crossovers = [chain_said]
    rng = np.random.default_rng(1)
    x = rng.normal(size=(BATCH, INPUTS)).astype(np.float32)
    y = rng.normal(size=(BATCH, 1)).astype(np.float32)
    for width in widths:
        measured = []
        for depth in depths:
            eager = _eager_step(width, x, y, depth, CROSSOVER_LEARNING_RATE)
            traced = _function_step(width, x, y, depth, CROSSOVER_LEARNING_RATE)
            if eager is None or traced is None:
                return "3. Crossover: n/a (no GradientTape or df.function in this build)"
            assert abs(eager() - traced()) <= 1e-4 * max(1.0, abs(traced()))
            eager_time, function_time = paired_median_times(eager, traced, repeats=repeats)
            assert np.isfinite(eager()) and np.isfinite(traced())
            ops = _ops_per_step(traced)
            measured.append((ops, eager_time / function_time))
            rows.append(
                [
                    width,
                    depth,
                    ops,
                    _ms(eager_time),
                    _ms(function_time),
                    f"{eager_time / function_time:.2f}",
                ]
            )
        crossovers.append(
            f"   training step, width {width}: df.function is {_crossover_words(measured)}"
        )
    header = ["width", "depth", "ops", "eager", "function", "eager/function"]
    return "\n".join(
        [
            "3. Crossover: a chain of `ops` small ops (tanh and multiply on 4 floats), then the "
            "training step of figure 2 with `depth` hidden layers (`ops`: the computing ops of "
            "the traced step), eagerly and as a df.function called eagerly",
            _table(header, rows),
            *crossovers,
        ]
    )


# -- 4. a training step written the TensorFlow 2 way -----------------------------------------------
def tf2_training_figure(repeats: int, tensorflow_python, torch_python) -> str:
    """Figure 4 (see `tf2_training`): median milliseconds per step of each way, and the loss
    after the same steps from the same start."""
    import tf2_training as t2

    partners = {
        "TF2 tf.function": Partner.start(
            t2.try_import_tensorflow2,
            t2.tensorflow2_cases,
            __file__,
            "--tensorflow2-partner",
            tensorflow_python,
        ),
        "PyTorch eager": Partner.start(
            t2.try_import_torch, t2.torch_cases, __file__, "--torch-partner", torch_python
        ),
    }
    ways = {
        "df.function": t2.dataflow_tf2_step(df),
        "eager": t2.dataflow_tf2_step(df, traced=False),
        "TF1 graph": t2.dataflow_graph_step(df),
    }
    losses = {}
    for name, make in (
        ("df.function", t2.dataflow_tf2_step),
        ("TF1 graph", t2.dataflow_graph_step),
    ):
        step = make(df)
        losses[name] = [step() for _ in range(t2.LOSS_STEPS)][-1]
    keys = {
        "TF2 tf.function": ("tf2_step", "tf2_losses"),
        "PyTorch eager": ("torch_step", "torch_losses"),
    }
    for name, partner in partners.items():
        if partner is not None:
            step_key, losses_key = keys[name]
            ways[name] = partner.timer(step_key)
            losses[name] = partner.call(losses_key, t2.LOSS_STEPS)[-1]
    times = dict(zip(ways, paired_median_times(*ways.values(), repeats=repeats)))
    for partner in partners.values():
        if partner is not None:
            partner.close()
    function = times["df.function"]
    rows = [
        [
            name,
            _ms(seconds),
            f"{seconds / function:.2f}",
            f"{losses[name]:.6f}" if name in losses else "",
        ]
        for name, seconds in times.items()
    ]
    for name, partner in partners.items():
        if partner is None:
            rows.append(
                [name, "n/a", "", "(not installed: give --tensorflow-python/--torch-python)"]
            )
    lines = [
        f"4. A training step written the TF2 way: MLP {t2.INPUTS}-{t2.HIDDEN}-{t2.HIDDEN}-"
        f"{t2.CLASSES}, batch {t2.BATCH}, Adam; median time per step over {repeats} rounds, "
        f"each way in turn (x = time / df.function's); loss after {t2.LOSS_STEPS} steps",
        _table(["way", "per step", "x", "loss"], rows),
        f"   df.function / TF1 graph here: {function / times['TF1 graph']:.2f} "
        "(target at most 1.2)",
    ]
    if "TF2 tf.function" in times:
        lines.append(
            f"   df.function / TF2 tf.function: {function / times['TF2 tf.function']:.2f} "
            "(target below 1)"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and sizes")
    parser.add_argument(
        "--tensorflow-python", help="a Python with TensorFlow 2, for its figures (0 and 4)"
    )
    parser.add_argument("--torch-python", help="a Python with PyTorch, for its figures (0 and 4)")
    parser.add_argument("--only", choices=["tf2"], help="print figure 4 only")
    parser.add_argument("--tensorflow2-partner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--torch-partner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tensorflow2_partner or args.torch_partner:
        import tf2_training as t2

        if args.tensorflow2_partner:
            serve_partner(t2.try_import_tensorflow2, t2.tensorflow2_cases)
        else:
            serve_partner(t2.try_import_torch, t2.torch_cases)
        return
    if args.only == "tf2":
        print(describe_machine(10 if args.quick else 30))
        print(
            tf2_training_figure(10 if args.quick else 30, args.tensorflow_python, args.torch_python)
        )
        return
    repeats = 200 if args.quick else 2000
    figure_repeats = 5 if args.quick else 15
    print(describe_machine(f"{repeats} (sections 0b, 0c), {figure_repeats} (figures 1, 2)"))
    print()
    section_eager_per_op_overhead(args.tensorflow_python, args.torch_python)
    section_where_the_time_goes()
    print()
    bench_function(repeats)
    print()
    print(lazy_chain_figure(args.quick))
    print()
    print(training_loop_figure(args.quick))
    print()
    print(training_crossover_figure(args.quick))
    print()
    print(tf2_training_figure(figure_repeats * 2, args.tensorflow_python, args.torch_python))
    print()
    bench_graph_breaks(repeats)


if __name__ == "__main__":
    main()

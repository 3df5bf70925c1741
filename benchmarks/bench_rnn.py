"""RNN benchmarks: one training step of an LSTM over a batch of sequences, here and in
TensorFlow 1.x.

    python benchmarks/bench_rnn.py            # full
    python benchmarks/bench_rnn.py --quick    # fewer repeats
    TF_USE_LEGACY_KERAS=1 python benchmarks/bench_rnn.py \\
        --tensorflow-python /work/tfvenv/bin/python      # TensorFlow's figures beside ours

1. A small LSTM: ``dynamic_rnn`` of a ``BasicLSTMCell`` (batch 32, 20 steps, 16 inputs, 64
   units), the last output through a dense layer, mean squared error, one
   ``GradientDescentOptimizer`` step.  Printed: the median time of the forward pass, of the
   training step (forward, the backward loop reading the forward values back, the update),
   their ratio, and the same for the cell unrolled with ``static_rnn``.
2. The LSTM of issue 25 (batch 32, 50 steps, 32 inputs, hidden 128, trained with Adam), in two
   forms: ``dynamic_rnn`` of a ``BasicLSTMCell``, and the same cell written by hand in a
   ``while_loop`` (one matrix product of ``[x_t, h]`` by the gates' kernel, then the gates, as
   ``BasicLSTMCell`` computes them).  Each step is timed interpreted (compilation off) and
   compiled (``DATAFLOW_COMPILE=force``: the forward loop with its stack pushes and the
   backward loop with its pops run as generated code, `dataflow.client.compiler.loops`); the
   two give the same loss bit for bit (checked).  Beside them: the *GEMM floor*, the time numpy
   takes for the step's matrix products alone (per time step ``[x_t, h] K`` forward, ``dz K^T``
   and ``[x_t, h]^T dz`` backward, on BLAS as pinned here), and TensorFlow 1.x graph mode with
   control flow v1, as users run it (a default ``ConfigProto``: its intra-op pool on every
   core) and pinned to one thread per kernel as BLAS is here.  A second line gives the
   processor time of a step (all threads together; TensorFlow pinned, as its idle pool
   threads would count too as shipped), which the other processes of a shared machine
   disturb far less than the wall clock.

TensorFlow's figures come from this process when TensorFlow imports here, or from
``--tensorflow-python`` (the same script runs there with ``--tensorflow-partner``, needing no
dataflow, and times each of its runs when asked: `harness.Partner`); its ``nn.rnn_cell`` needs
the legacy Keras (``tf_keras``) under TensorFlow 2.16 and later, which ``TF_USE_LEGACY_KERAS=1``
selects (the script sets it for the partner when the environment does not).  Timings are
medians over repeats, each function timed in turn within every round, TensorFlow's in the same
rounds as ours; the machine may be shared, so read ratios, not absolutes.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.compat.v1.nn.rnn_cell needs tf_keras

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import (  # noqa: E402
    Partner,
    describe_machine,
    paired_median_times,
    serve_partner,
    try_import_tensorflow,
)

# isort: split
import argparse  # noqa: E402
import functools  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

BATCH, STEPS, INPUTS, UNITS = 32, 20, 16, 64
# The LSTM of issue 25.
ISSUE_BATCH, ISSUE_STEPS, ISSUE_INPUTS, ISSUE_UNITS = 32, 50, 32, 128
ISSUE_FORMS = ("dynamic_rnn", "while_loop")


def _model(api, dynamic: bool):
    """(forward fetch, training op, feed) of the small LSTM step in the default graph of
    ``api``."""
    rng = np.random.default_rng(0)
    x_value = rng.normal(size=(BATCH, STEPS, INPUTS)).astype(np.float32)
    y_value = rng.normal(size=(BATCH, 1)).astype(np.float32)
    x = api.placeholder(api.float32, [BATCH, STEPS, INPUTS])
    y = api.placeholder(api.float32, [BATCH, 1])
    cell = api.nn.rnn_cell.BasicLSTMCell(UNITS)
    if dynamic:
        outputs, _ = api.nn.dynamic_rnn(cell, x, dtype=api.float32)
        last = outputs[:, -1]
    else:
        outputs, _ = api.nn.static_rnn(cell, api.unstack(x, axis=1), dtype=api.float32)
        last = outputs[-1]
    w = api.get_variable("w", [UNITS, 1])
    loss = api.reduce_mean(api.square(api.matmul(last, w) - y))
    train = api.train.GradientDescentOptimizer(0.01).minimize(loss)
    return loss, train, {x: x_value, y: y_value}


def _issue_model(api, form: str):
    """(loss, training op, feed) of the issue's LSTM step in ``form`` (`ISSUE_FORMS`) in the
    default graph of ``api``; the same data on both sides, and for the ``while_loop`` form the
    same initial weights."""
    rng = np.random.default_rng(0)
    api.set_random_seed(0)  # the cell's initial weights, the same in every graph
    batch, steps, inputs, units = ISSUE_BATCH, ISSUE_STEPS, ISSUE_INPUTS, ISSUE_UNITS
    x = api.placeholder(api.float32, [batch, steps, inputs], name="x")
    y = api.placeholder(api.float32, [batch, 1], name="y")
    feed = {
        x: rng.normal(size=(batch, steps, inputs)).astype(np.float32),
        y: rng.normal(size=(batch, 1)).astype(np.float32),
    }
    if form == "dynamic_rnn":
        cell = api.nn.rnn_cell.BasicLSTMCell(units)
        outputs, _ = api.nn.dynamic_rnn(cell, x, dtype=api.float32)
        last = outputs[:, -1]
    else:
        scale = 1.0 / np.sqrt(inputs + units)
        kernel = api.Variable(
            rng.normal(0.0, scale, (inputs + units, 4 * units)).astype(np.float32), name="kernel"
        )
        bias = api.Variable(np.zeros(4 * units, np.float32), name="bias")
        time_major = api.transpose(x, [1, 0, 2])
        kernel_value, bias_value = kernel.value(), bias.value()

        def body(t, h, c):
            gates = api.matmul(api.concat([time_major[t], h], 1), kernel_value) + bias_value
            i, j, f, o = api.split(gates, 4, axis=1)
            c = c * api.sigmoid(f + 1.0) + api.sigmoid(i) * api.tanh(j)
            h = api.tanh(c) * api.sigmoid(o)
            return t + 1, h, c

        zeros = api.zeros([batch, units])
        _, last, _ = api.while_loop(
            lambda t, h, c: t < steps, body, [api.constant(0), zeros, zeros]
        )
    w = api.Variable(rng.normal(0.0, 0.1, (units, 1)).astype(np.float32), name="w")
    loss = api.reduce_mean(api.square(api.matmul(last, w) - y))
    train = api.train.AdamOptimizer(0.001).minimize(loss)
    return loss, train, feed


def _runs(api, dynamic: bool) -> tuple:
    """The model in a new Session of ``api`` (a default config: TensorFlow as users run it),
    its variables initialised: (a forward run, a training step, the Session)."""
    graph = api.Graph()
    with graph.as_default():
        loss, train, feed = _model(api, dynamic)
        init = api.global_variables_initializer()
    sess = api.Session(graph=graph)
    sess.run(init)
    return lambda: sess.run(loss, feed), lambda: sess.run(train, feed), sess


def _dataflow():
    import dataflow as df

    return df


def bench(dynamic: bool, repeats: int, tensorflow: Partner | None = None) -> tuple[float, ...]:
    """Medians of dataflow's forward run and training step and, with ``tensorflow``,
    TensorFlow's, all four timed in turn within every round."""
    forward, step, sess = _runs(_dataflow(), dynamic)
    timed = [forward, step]
    if tensorflow is not None:
        form = "dynamic" if dynamic else "static"
        timed += [tensorflow.timer(f"small_{form}_forward"), tensorflow.timer(f"small_{form}_step")]
    times = paired_median_times(*timed, repeats=repeats)
    sess.close()
    return times


def gemm_floor(repeats: int) -> tuple[float, float]:
    """Seconds numpy's BLAS takes for the matrix products of one step of the issue's LSTM:
    the median wall time and processor time."""
    rng = np.random.default_rng(0)
    rows = ISSUE_INPUTS + ISSUE_UNITS
    inputs = rng.normal(size=(ISSUE_BATCH, rows)).astype(np.float32)
    kernel = rng.normal(size=(rows, 4 * ISSUE_UNITS)).astype(np.float32)
    gates = rng.normal(size=(ISSUE_BATCH, 4 * ISSUE_UNITS)).astype(np.float32)

    def products():
        for _ in range(ISSUE_STEPS):
            np.matmul(inputs, kernel)
            np.matmul(gates, kernel.T)
            np.matmul(inputs.T, gates)

    wall = paired_median_times(products, repeats=repeats)[0]
    return wall, statistics.median(cpu_seconds(products) for _ in range(repeats))


def bench_issue(form: str, repeats: int, tensorflow: Partner | None = None) -> dict:
    """Milliseconds of one training step of the issue's LSTM in ``form``: dataflow
    interpreted and compiled, and with ``tensorflow`` TensorFlow's as shipped and pinned,
    timed in the same rounds; the compiled run's loss is checked against the interpreted one."""
    df = _dataflow()
    from dataflow.client import compiler

    sessions = {}
    for mode in ("off", "force"):
        graph = df.Graph()
        with graph.as_default():
            loss, train, feed = _issue_model(df, form)
            init = df.global_variables_initializer()
        sess = df.Session(graph=graph)
        sess.run(init)
        sessions[mode] = (sess, loss, train, feed)

    def step_in(mode):
        sess, loss, train, feed = sessions[mode]
        previous = compiler.set_mode(mode)
        try:
            return sess.run([loss, train], feed)[0]
        finally:
            compiler.set_mode(previous)

    first = step_in("off"), step_in("force")
    if first[0].tobytes() != first[1].tobytes():
        raise AssertionError(f"{form}: the compiled step's loss {first[1]} is not {first[0]}")
    timed = {"interpreted": lambda: step_in("off"), "compiled": lambda: step_in("force")}
    if tensorflow is not None:
        timed["TF1"] = tensorflow.timer(f"issue_{form}")
        timed["TF1 pinned"] = tensorflow.timer(f"issue_{form}_pinned")
    times = paired_median_times(*timed.values(), repeats=repeats)
    result = {column: seconds * 1e3 for column, seconds in zip(timed, times)}
    cpu = {"interpreted": [], "compiled": []}
    for _ in range(repeats):
        for column, mode in (("interpreted", "off"), ("compiled", "force")):
            cpu[column].append(cpu_seconds(functools.partial(step_in, mode)))
    result["cpu"] = {column: statistics.median(samples) * 1e3 for column, samples in cpu.items()}
    if tensorflow is not None:
        result["cpu"]["TF1 pinned"] = tensorflow.call("issue_cpu_ms", form, repeats)
    for sess, *_ in sessions.values():
        sess.close()
    return result


def cpu_seconds(run) -> float:
    """The processor time of one call of ``run``, all the process's threads together: a
    figure that other processes on a shared machine disturb far less than the wall clock."""
    began = time.process_time()
    run()
    return time.process_time() - began


def _tf_issue_cpu_ms(tf1, form: str, repeats: int) -> float:
    """The median processor milliseconds of the issue's step in TensorFlow pinned to one
    thread (as shipped, its idle pool threads would count too)."""
    run = _tf_issue(tf1, form, True)
    run()
    return statistics.median(cpu_seconds(run) for _ in range(repeats)) * 1e3


def tensorflow_cases(tf1) -> dict:
    """The TensorFlow runs of both sections, as cases of `harness.Partner`."""
    cases = {}
    for form in ("dynamic", "static"):
        cases[f"small_{form}_forward"] = functools.partial(_tf_small, tf1, form, "forward")
        cases[f"small_{form}_step"] = functools.partial(_tf_small, tf1, form, "step")
    for form in ISSUE_FORMS:
        cases[f"issue_{form}"] = functools.partial(_tf_issue, tf1, form, False)
        cases[f"issue_{form}_pinned"] = functools.partial(_tf_issue, tf1, form, True)
    cases["issue_cpu_ms"] = functools.partial(_tf_issue_cpu_ms, tf1)
    return cases


def _tf_small(tf1, form: str, what: str):
    forward, step, _ = _runs(tf1, form == "dynamic")
    return forward if what == "forward" else step


def _tf_issue(tf1, form: str, pinned: bool):
    """The issue's LSTM step in a TF1 Session, as shipped or ``pinned`` to one thread;
    returns a function that runs it once."""
    graph = tf1.Graph()
    with graph.as_default():
        loss, train, feed = _issue_model(tf1, form)
        init = tf1.global_variables_initializer()
    config = tf1.ConfigProto()
    if pinned:
        config.intra_op_parallelism_threads = config.inter_op_parallelism_threads = 1
    sess = tf1.Session(graph=graph, config=config)
    sess.run(init)
    return functools.partial(sess.run, [loss, train], feed)


def _tensorflow_with_cells():
    """`try_import_tensorflow`, when its ``nn.rnn_cell`` works (it needs tf_keras)."""
    tf1 = try_import_tensorflow()
    if tf1 is None:
        return None
    try:
        _ = tf1.nn.rnn_cell.BasicLSTMCell
    except Exception:
        return None
    return tf1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--repeats", type=int, help="repeats of every figure")
    parser.add_argument("--no-tensorflow", action="store_true", help="skip the TF comparison")
    parser.add_argument("--only", choices=("small", "issue"), help="run one section")
    parser.add_argument("--tensorflow-python", help="a Python with TensorFlow, for its figures")
    parser.add_argument("--tensorflow-partner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.tensorflow_partner:
        serve_partner(_tensorflow_with_cells, tensorflow_cases)
        return
    repeats = args.repeats or (5 if args.quick else 20)
    tf = None
    if not args.no_tensorflow:
        tf = Partner.start(
            _tensorflow_with_cells,
            tensorflow_cases,
            __file__,
            "--tensorflow-partner",
            args.tensorflow_python,
        )
    tensorflow = "not installed (or no tf_keras)" if tf is None else "as shipped, and pinned"
    print(describe_machine(repeats, tensorflow=tensorflow, python=sys.version.split()[0]))
    if args.only != "issue":
        print(
            f"1. LSTM training step: batch {BATCH}, {STEPS} steps, {INPUTS} inputs, {UNITS} units"
        )
        for dynamic, what in ((True, "dynamic_rnn"), (False, "static_rnn ")):
            forward, step, *tf_times = bench(dynamic, repeats, tf)
            line = (
                f"   {what}  dataflow: forward {forward * 1e3:7.2f} ms, training step "
                f"{step * 1e3:7.2f} ms ({step / forward:.1f}x)"
            )
            if tf_times:
                tf_forward, tf_step = tf_times
                line += (
                    f"   TF1 as shipped: forward {tf_forward * 1e3:7.2f} ms, training step "
                    f"{tf_step * 1e3:7.2f} ms ({tf_step / tf_forward:.1f}x); "
                    f"dataflow/TF1 step {step / tf_step:.2f}x"
                )
            print(line)
    if args.only != "small":
        floor_ms, floor_cpu_ms = (seconds * 1e3 for seconds in gemm_floor(repeats))
        print(
            f"2. The LSTM of issue 25: batch {ISSUE_BATCH}, {ISSUE_STEPS} steps, "
            f"{ISSUE_INPUTS} inputs, hidden {ISSUE_UNITS}, Adam; ms per training step "
            f"(GEMM floor {floor_ms:.2f} ms, processor time {floor_cpu_ms:.2f} ms)"
        )
        for form in ISSUE_FORMS:
            r = bench_issue(form, repeats, tf)
            cpu = r.pop("cpu")
            line = f"   {form:<11}  " + ", ".join(f"{k} {v:6.2f}" for k, v in r.items())
            if "TF1" in r:
                line += (
                    f";  compiled/TF1 {r['compiled'] / r['TF1']:.2f}x, "
                    f"compiled/TF1 pinned {r['compiled'] / r['TF1 pinned']:.2f}x"
                )
            line += f", compiled/floor {r['compiled'] / floor_ms:.2f}x"
            print(line)
            line = f"   {'':<11}  processor time: " + ", ".join(
                f"{k} {v:6.2f}" for k, v in cpu.items()
            )
            if "TF1 pinned" in cpu:
                line += f";  compiled/TF1 pinned {cpu['compiled'] / cpu['TF1 pinned']:.2f}x"
            line += f", compiled/floor {cpu['compiled'] / floor_cpu_ms:.2f}x"
            print(line)
    if tf is not None:
        tf.close()


if __name__ == "__main__":
    main()

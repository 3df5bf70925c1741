"""RNN benchmarks: one training step of an LSTM over a batch of sequences.

    python benchmarks/bench_rnn.py            # full
    python benchmarks/bench_rnn.py --quick    # fewer repeats

The model: ``dynamic_rnn`` of a ``BasicLSTMCell`` (batch 32, 20 steps, 16 inputs, 64 units),
the last output through a dense layer, mean squared error, one ``GradientDescentOptimizer``
step.  Printed: the median time of the forward pass, of the training step (forward, the
backward loop reading the forward values back, the update), their ratio, and the same for the
cell unrolled with ``static_rnn``.  With TensorFlow 1.x and its legacy Keras (``tf_keras``,
which ``tf.compat.v1.nn.rnn_cell`` needs under TensorFlow 2.16 and later; run with
``TF_USE_LEGACY_KERAS=1``) installed, its figures for the same programs (a default
``ConfigProto``: TensorFlow as users run it) are printed beside ours.  Timings are medians over
repeats, each function timed in turn within every round, TensorFlow's in the same rounds as
ours; the machine may be shared, so read ratios, not absolutes.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times, try_import_tensorflow

# isort: split
import argparse

import numpy as np

import dataflow as df

BATCH, STEPS, INPUTS, UNITS = 32, 20, 16, 64


def _model(api, dynamic: bool):
    """(forward fetch, training op, feed) of the LSTM step in the default graph of ``api``."""
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


def bench(dynamic: bool, repeats: int, tf1=None) -> tuple[float, ...]:
    """Medians of dataflow's forward run and training step and, with ``tf1``, TensorFlow's,
    all four timed in turn within every round."""
    forward, step, sess = _runs(df, dynamic)
    timed, sessions = [forward, step], [sess]
    if tf1 is not None:
        tf_forward, tf_step, tf_sess = _runs(tf1, dynamic)
        timed += [tf_forward, tf_step]
        sessions.append(tf_sess)
    times = paired_median_times(*timed, repeats=repeats)
    for sess in sessions:
        sess.close()
    return times


def _tf1_with_cells():
    tf1 = try_import_tensorflow()
    if tf1 is None:
        return None, "TensorFlow is not installed"
    try:
        _ = tf1.nn.rnn_cell.BasicLSTMCell
    except Exception:
        return None, "tf.compat.v1.nn.rnn_cell needs tf_keras and TF_USE_LEGACY_KERAS=1"
    return tf1, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeats = 5 if parser.parse_args().quick else 20
    print(describe_machine(repeats))
    tf1, why_not = _tf1_with_cells()
    print(f"LSTM training step: batch {BATCH}, {STEPS} steps, {INPUTS} inputs, {UNITS} units")
    for dynamic, what in ((True, "dynamic_rnn"), (False, "static_rnn ")):
        forward, step, *tf_times = bench(dynamic, repeats, tf1)
        line = (
            f"  {what}  dataflow: forward {forward * 1e3:7.2f} ms, training step "
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
    if why_not:
        print(f"  (no TF1 figures: {why_not})")


if __name__ == "__main__":
    main()

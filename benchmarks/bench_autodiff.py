"""Autodiff benchmarks: prints figures side by side with their references.

    python benchmarks/bench_autodiff.py            # both
    python benchmarks/bench_autodiff.py --quick    # fewer repeats

1. One training step's gradient of a 2-layer MLP (batch 256, 64 -> 128 -> 10, ReLU, softmax
   cross-entropy, random data): forward plus backward against the forward alone, in the same
   Session (target: at most 3x).
2. The gradient of a 1000-iteration scalar ``while_loop`` (``a <- tanh(a * w)``): forward plus
   backward loop against the forward loop alone (target: at most 4x), and the memory the
   gradient keeps per iteration, measured with tracemalloc as the growth of the run's peak from
   1000 to 2000 iterations, next to the forward loop's own growth (which should be about zero).

With TensorFlow 1.x installed here (graph mode, control flow v1, a default ``ConfigProto``: as
users run it), its gradient/forward ratios for the same two programs are printed beside ours.
Timings are medians over repeats, each function timed in turn within every round, TensorFlow's
runs in the same rounds as ours; the machine may be shared, so read ratios, not absolutes.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times, try_import_tensorflow

# isort: split
import argparse
import tracemalloc

import numpy as np

import dataflow as df

# -- 1. MLP training step --------------------------------------------------------------------------
BATCH, FEATURES, HIDDEN, CLASSES = 256, 64, 128, 10


def _mlp(api, x, labels):
    rng = np.random.default_rng(0)
    w1 = api.Variable(rng.normal(0, 0.1, (FEATURES, HIDDEN)).astype(np.float32), name="w1")
    b1 = api.Variable(np.zeros(HIDDEN, np.float32), name="b1")
    w2 = api.Variable(rng.normal(0, 0.1, (HIDDEN, CLASSES)).astype(np.float32), name="w2")
    b2 = api.Variable(np.zeros(CLASSES, np.float32), name="b2")
    hidden = api.nn.relu(api.matmul(x, w1) + b1)
    logits = api.matmul(hidden, w2) + b2
    loss = api.reduce_mean(api.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    grads = api.gradients(loss, [w1, b1, w2, b2])
    return loss, grads


def _mlp_data():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(BATCH, FEATURES)).astype(np.float32)
    labels = np.eye(CLASSES, dtype=np.float32)[rng.integers(0, CLASSES, BATCH)]
    return x, labels


def bench_mlp(repeats: int, tf1=None) -> dict:
    x_value, label_value = _mlp_data()
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [BATCH, FEATURES])
        labels = df.placeholder(df.float32, [BATCH, CLASSES])
        loss, grads = _mlp(df, x, labels)
        init = df.global_variables_initializer()
    sess = df.Session(graph=graph)
    sess.run(init)
    feed = {x: x_value, labels: label_value}
    timed = [lambda: sess.run(loss, feed), lambda: sess.run([loss, grads], feed)]
    if tf1 is not None:
        tf_graph = tf1.Graph()
        with tf_graph.as_default():
            tx = tf1.placeholder(tf1.float32, [BATCH, FEATURES])
            tl = tf1.placeholder(tf1.float32, [BATCH, CLASSES])
            tf_loss, tf_grads = _mlp(tf1, tx, tl)
            tf_init = tf1.global_variables_initializer()
        tf_sess = tf1.Session(graph=tf_graph)
        tf_sess.run(tf_init)
        tf_feed = {tx: x_value, tl: label_value}
        timed += [
            lambda: tf_sess.run(tf_loss, tf_feed),
            lambda: tf_sess.run([tf_loss, tf_grads], tf_feed),
        ]
    forward, both, *tf_times = paired_median_times(*timed, repeats=repeats)
    sess.close()
    figures = {"forward_ms": forward * 1e3, "gradient_ms": both * 1e3, "ratio": both / forward}
    if tf1 is not None:
        tf_sess.close()
        tf_forward, tf_both = tf_times
        figures["tensorflow_ratio"] = tf_both / tf_forward
        figures["tensorflow_gradient_ms"] = tf_both * 1e3
    return figures


# -- 2. a 1000-iteration scalar loop ---------------------------------------------------------------
def _scalar_loop(api, x, w, n):
    _, y = api.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, api.tanh(a * w)), [0, x])
    return y, api.gradients(y, [x, w])


def _loop_session(n: int):
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float64, [], name="x")
        w = df.placeholder(df.float64, [], name="w")
        y, grads = _scalar_loop(df, x, w, n)
    saved = [op.inputs[1].name for op in graph.get_operations() if op.type == "StackPushV2"]
    return df.Session(graph=graph), {x: 0.5, w: 1.1}, y, grads, saved


def _peak_bytes(fn) -> int:
    fn()  # the plan is built and cached outside the measurement
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - baseline
    finally:
        tracemalloc.stop()


def _loop_peaks(n: int) -> tuple[int, int]:
    """Peak bytes of a run of the forward loop, and of a run of forward and backward."""
    sess, feed, y, grads, _ = _loop_session(n)
    with sess:
        return (
            _peak_bytes(lambda: sess.run(y, feed)),
            _peak_bytes(lambda: sess.run([y, grads], feed)),
        )


def bench_loop(repeats: int, n: int = 1000, tf1=None) -> dict:
    sess, feed, y, grads, saved = _loop_session(n)
    timed = [lambda: sess.run(y, feed), lambda: sess.run([y, grads], feed)]
    if tf1 is not None:
        tf_graph = tf1.Graph()
        with tf_graph.as_default():
            tx = tf1.placeholder(tf1.float64, [])
            tw = tf1.placeholder(tf1.float64, [])
            tf_y, tf_grads = _scalar_loop(tf1, tx, tw, n)
        tf_sess = tf1.Session(graph=tf_graph)
        tf_feed = {tx: 0.5, tw: 1.1}
        timed += [
            lambda: tf_sess.run(tf_y, tf_feed),
            lambda: tf_sess.run([tf_y, tf_grads], tf_feed),
        ]
    forward, both, *tf_times = paired_median_times(*timed, repeats=repeats)
    figures = {"forward_ms": forward * 1e3, "gradient_ms": both * 1e3, "ratio": both / forward}
    figures["saved"] = saved
    if tf1 is not None:
        tf_sess.close()
        tf_forward, tf_both = tf_times
        figures["tensorflow_ratio"] = tf_both / tf_forward
        figures["tensorflow_gradient_ms"] = tf_both * 1e3

    sess.close()
    peaks = {iterations: _loop_peaks(iterations) for iterations in (n, 2 * n)}
    figures["forward_bytes_per_iteration"] = (peaks[2 * n][0] - peaks[n][0]) / n
    figures["gradient_bytes_per_iteration"] = (peaks[2 * n][1] - peaks[n][1]) / n
    one_value = np.float64(0.5)
    figures["value_bytes"] = one_value.nbytes
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--no-tensorflow", action="store_true", help="skip the TF comparison")
    args = parser.parse_args()
    repeats = 5 if args.quick else 15
    tf1 = None if args.no_tensorflow else try_import_tensorflow()
    print(describe_machine(repeats, tensorflow="yes" if tf1 is not None else "not installed"))

    r = bench_mlp(repeats, tf1=tf1)
    line = (
        f"1. MLP step gradient (batch {BATCH}, {FEATURES}->{HIDDEN}->{CLASSES}): forward "
        f"{r['forward_ms']:.2f} ms, forward+backward {r['gradient_ms']:.2f} ms -> "
        f"{r['ratio']:.2f}x  (target <= 3x)"
    )
    if "tensorflow_ratio" in r:
        line += (
            f"; TensorFlow 1.x as shipped: {r['tensorflow_ratio']:.2f}x "
            f"({r['tensorflow_gradient_ms']:.2f} ms for forward+backward: dataflow/TensorFlow "
            f"{r['gradient_ms'] / r['tensorflow_gradient_ms']:.2f}x)"
        )
    print(line)

    r = bench_loop(repeats, tf1=tf1)
    line = (
        f"2. 1000-iteration while_loop gradient: forward {r['forward_ms']:.1f} ms, "
        f"forward+backward {r['gradient_ms']:.1f} ms -> {r['ratio']:.2f}x  (target <= 4x)"
    )
    if "tensorflow_ratio" in r:
        line += (
            f"; TensorFlow 1.x as shipped: {r['tensorflow_ratio']:.2f}x "
            f"({r['tensorflow_gradient_ms']:.1f} ms for forward+backward: dataflow/TensorFlow "
            f"{r['gradient_ms'] / r['tensorflow_gradient_ms']:.2f}x)"
        )
    print(line)
    print(
        f"   memory per iteration: gradient run {r['gradient_bytes_per_iteration']:.0f} B, "
        f"forward run {r['forward_bytes_per_iteration']:.0f} B (peak growth from 1000 to 2000 "
        "iterations, tracemalloc)"
    )
    print(
        f"   saved per iteration: {len(r['saved'])} float64 scalar(s) "
        f"({', '.join(r['saved'])}), {r['value_bytes']} B of data each; the rest is the numpy "
        "scalar object and its slot in the stack's list.  The gradient of tanh reads its output "
        "and that of a * w reads a; w is a loop invariant and is not saved."
    )


if __name__ == "__main__":
    main()

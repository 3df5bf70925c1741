"""Convolution benchmark: one LeNet-sized training step, here and in TensorFlow 1.x.

    python benchmarks/bench_conv.py            # all figures
    python benchmarks/bench_conv.py --quick    # fewer repeats
    python benchmarks/bench_conv.py --tensorflow-python path/to/python-with-tensorflow
                                               # TensorFlow's figures from another environment

1. A LeNet training step (batch 64 of 28x28x1: conv 5x5x32 SAME + ReLU, max pool 2x2, conv
   5x5x64 SAME + ReLU, max pool 2x2, dense 1024 + ReLU, dense 10, softmax cross entropy, one
   gradient descent update), NHWC: the median time of the forward pass alone and of the whole
   step, and the same two figures for TensorFlow 1.x (graph mode) with the ratio ours /
   TensorFlow's, when TensorFlow is importable here or ``--tensorflow-python`` names a Python
   that has it (the same script runs there with ``--tensorflow-partner``, which needs no
   dataflow, and times each of TensorFlow's runs when asked: `harness.Partner`).  TensorFlow
   as users run it (a default ``ConfigProto``: its intra-op pool on every core), and beside
   it pinned to one thread per kernel as BLAS is here.
2. The same step written in NCHW, with the ``layout`` pass on (the default) and off: the pass
   runs the chain of convolutions and pools in NHWC, the layout the kernels are fast in, and
   transposes only at the chain's edges.  TensorFlow's CPU kernels do not run NCHW
   convolutions, so it has no figure here.
3. Each kernel of the step alone (the NHWC step's ops, timed through ``RunMetadata`` with
   ``FULL_TRACE``): where the time goes.

Timings are medians over repeats, each function timed in turn within every round (dataflow's
runs and TensorFlow's alike); the machine may be shared, so read ratios, not absolutes.  BLAS
runs on one thread here; TensorFlow's pinned figures use one core per kernel too.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import (
    Partner,
    describe_machine,
    paired_median_times,
    serve_partner,
    try_import_tensorflow,
)

# isort: split
import argparse
import collections
import functools
import statistics
import sys

import numpy as np

BATCH, SIZE, CLASSES = 64, 28, 10


def _weights():
    rng = np.random.default_rng(0)

    def normal(*shape):
        return rng.normal(0, 0.1, shape).astype(np.float32)

    return {
        "conv1": normal(5, 5, 1, 32),
        "bias1": np.zeros(32, np.float32),
        "conv2": normal(5, 5, 32, 64),
        "bias2": np.zeros(64, np.float32),
        "dense1": normal(7 * 7 * 64, 1024),
        "bias3": np.zeros(1024, np.float32),
        "dense2": normal(1024, CLASSES),
        "bias4": np.zeros(CLASSES, np.float32),
    }


def lenet_step(api, images, labels, data_format="NHWC"):
    """The LeNet loss and its training step, in ``api`` (``df`` or ``tf.compat.v1``);
    ``images`` are NHWC or NCHW as ``data_format`` says."""
    w = {name: api.Variable(value, name=name) for name, value in _weights().items()}
    nchw = data_format == "NCHW"
    window = [1, 1, 2, 2] if nchw else [1, 2, 2, 1]

    def conv(x, f, b):
        y = api.nn.conv2d(x, f, [1, 1, 1, 1], "SAME", data_format=data_format)
        return api.nn.relu(api.nn.bias_add(y, b, data_format=data_format))

    def pool(x):
        return api.nn.max_pool(x, window, window, "SAME", data_format=data_format)

    x = pool(conv(images, w["conv1"], w["bias1"]))
    x = pool(conv(x, w["conv2"], w["bias2"]))
    if nchw:
        x = api.transpose(x, [0, 2, 3, 1])
    x = api.reshape(x, [-1, 7 * 7 * 64])
    x = api.nn.relu(api.matmul(x, w["dense1"]) + w["bias3"])
    logits = api.matmul(x, w["dense2"]) + w["bias4"]
    loss = api.reduce_mean(
        api.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )
    return loss, api.train.GradientDescentOptimizer(0.01).minimize(loss)


def _data(data_format="NHWC"):
    rng = np.random.default_rng(1)
    images = rng.uniform(0, 1, (BATCH, SIZE, SIZE, 1)).astype(np.float32)
    if data_format == "NCHW":
        images = np.ascontiguousarray(images.transpose(0, 3, 1, 2))
    return images, rng.integers(0, CLASSES, BATCH).astype(np.int32)


def _build(api, data_format):
    images_value, labels_value = _data(data_format)
    graph = api.Graph()
    with graph.as_default():
        images = api.placeholder(api.float32, images_value.shape, name="images")
        labels = api.placeholder(api.int32, [BATCH], name="labels")
        loss, step = lenet_step(api, images, labels, data_format)
        init = api.global_variables_initializer()
    return graph, init, loss, step, {images: images_value, labels: labels_value}


def _dataflow():
    import dataflow

    return dataflow


# TensorFlow's figures of `bench_step`: as shipped, and pinned to one thread per kernel.
TENSORFLOW_FIGURES = {
    "tf_forward_ms": ("forward", False),
    "tf_step_ms": ("step", False),
    "tf_pinned_forward_ms": ("forward", True),
    "tf_pinned_step_ms": ("step", True),
}


def bench_step(repeats: int, tensorflow: Partner | None = None) -> dict:
    """The NHWC step's forward and whole-step times, and with ``tensorflow`` its figures
    (`TENSORFLOW_FIGURES`), all timed in the same rounds."""
    df = _dataflow()
    graph, init, loss, step, feed = _build(df, "NHWC")
    timed = {}
    with df.Session(graph=graph) as sess:
        sess.run(init)
        timed["forward_ms"] = lambda: sess.run(loss, feed)
        timed["step_ms"] = lambda: sess.run([loss, step], feed)
        if tensorflow is not None:
            for figure in TENSORFLOW_FIGURES:
                timed[figure] = tensorflow.timer(figure)
        times = paired_median_times(*timed.values(), repeats=repeats)
    return {figure: seconds * 1e3 for figure, seconds in zip(timed, times)}


def tensorflow_cases(tf1) -> dict:
    """`TENSORFLOW_FIGURES` as cases of `harness.Partner`."""
    return {
        figure: functools.partial(_tensorflow_case, tf1, what, pinned)
        for figure, (what, pinned) in TENSORFLOW_FIGURES.items()
    }


def _tensorflow_case(tf1, what: str, pinned: bool):
    """The LeNet step (``what``: its forward pass or the whole step) in a TF1 Session, as
    shipped or ``pinned`` to one thread; returns a function that runs it once."""
    graph, init, loss, step, feed = _build(tf1, "NHWC")
    config = tf1.ConfigProto()
    if pinned:
        config.intra_op_parallelism_threads = config.inter_op_parallelism_threads = 1
    sess = tf1.Session(graph=graph, config=config)
    sess.run(init)
    fetches = loss if what == "forward" else [loss, step]
    return functools.partial(sess.run, fetches, feed)


def bench_layout(repeats: int) -> dict:
    df = _dataflow()
    graph, init, loss, step, feed = _build(df, "NCHW")
    off_config = df.RewriterConfig(layout_optimizer=df.RewriterConfig.OFF)
    off = df.RunOptions(rewrite_options=off_config)
    with df.Session(graph=graph) as sess:
        sess.run(init)
        on_ms, off_ms = paired_median_times(
            lambda: sess.run([loss, step], feed),
            lambda: sess.run([loss, step], feed, options=off),
            repeats=repeats,
        )
    return {"on_ms": on_ms * 1e3, "off_ms": off_ms * 1e3}


def bench_kernels(repeats: int) -> list:
    """(op type, median milliseconds per step, count) for the NHWC step, slowest first."""
    df = _dataflow()
    graph, init, loss, step, feed = _build(df, "NHWC")
    per_type = collections.defaultdict(list)
    options = df.RunOptions(trace_level=df.RunOptions.FULL_TRACE)
    with df.Session(graph=graph) as sess:
        sess.run(init)
        sess.run([loss, step], feed)
        for _ in range(repeats):
            metadata = df.RunMetadata()
            sess.run([loss, step], feed, options=options, run_metadata=metadata)
            totals = collections.Counter()
            counts = collections.Counter()
            for node in metadata.step_stats:
                totals[node.op_type] += node.duration
                counts[node.op_type] += 1
            for op_type, seconds in totals.items():
                per_type[op_type].append((seconds, counts[op_type]))
    rows = [
        (op_type, statistics.median(s for s, _ in samples) * 1e3, samples[0][1])
        for op_type, samples in per_type.items()
    ]
    return sorted(rows, key=lambda row: -row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--repeats", type=int, help="repeats of every figure")
    parser.add_argument("--no-tensorflow", action="store_true", help="skip the TF comparison")
    parser.add_argument("--tensorflow-python", help="a Python with TensorFlow, for its figures")
    parser.add_argument("--tensorflow-partner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    repeats = args.repeats or (5 if args.quick else 15)
    if args.tensorflow_partner:
        serve_partner(try_import_tensorflow, tensorflow_cases)
        return
    tf = None
    if not args.no_tensorflow:
        tf = Partner.start(
            try_import_tensorflow,
            tensorflow_cases,
            __file__,
            "--tensorflow-partner",
            args.tensorflow_python,
        )
    tensorflow = "not installed" if tf is None else "as shipped, and pinned"
    print(describe_machine(repeats, tensorflow=tensorflow, python=sys.version.split()[0]))

    r = bench_step(repeats, tf)
    print(
        f"1. LeNet step (batch {BATCH}, NHWC): forward {r['forward_ms']:.1f} ms, "
        f"forward+backward+update {r['step_ms']:.1f} ms"
    )
    if tf is not None:
        for name, prefix in (("as shipped", "tf_"), ("pinned to one thread", "tf_pinned_")):
            forward, step = r[f"{prefix}forward_ms"], r[f"{prefix}step_ms"]
            print(
                f"   TensorFlow 1.x {name}: forward {forward:.1f} ms, step {step:.1f} ms "
                f"-> ours/TensorFlow {r['step_ms'] / step:.2f}x "
                f"(forward {r['forward_ms'] / forward:.2f}x)"
            )
        tf.close()

    r = bench_layout(repeats)
    print(
        f"2. LeNet step written in NCHW: layout pass on {r['on_ms']:.1f} ms, off "
        f"{r['off_ms']:.1f} ms -> {r['off_ms'] / r['on_ms']:.2f}x faster with the pass"
    )

    print("3. kernels of the NHWC step (median ms per step, op count):")
    for op_type, ms, count in bench_kernels(repeats):
        if ms >= 0.05:
            print(f"   {op_type:28s} {ms:7.2f} ms  x{count}")


if __name__ == "__main__":
    main()

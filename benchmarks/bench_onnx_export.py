"""ONNX export: for a few models, the time ``df.onnx.export`` takes, the size of the model, one
inference in dataflow's Session beside the exported model in onnxruntime (one thread and its
default threads), and the largest difference between their outputs.

    python benchmarks/bench_onnx_export.py            # all models
    python benchmarks/bench_onnx_export.py --quick    # fewer repeats

Models: an MLP (784 -> 256 -> 10, batch 64), a small CNN built with ``df.layers`` (two
convolutions, batch norm, pools, dense; batch 8 of 28x28), an LSTM through ``dynamic_rnn``
(batch 8, 20 steps of 32 features, 64 units: a Loop carrying TensorArrays as sequences) and a
scalar ``while_loop`` of 1000 iterations with a ``cond`` inside (a Loop with an If in its body).
Timings are medians over repeats, each runtime timed in turn within every round; the machine
may be shared, so read ratios, not absolutes.  Needs the ``onnx`` extra.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times

# isort: split
import argparse
import time

import numpy as np

import dataflow as df


def _mlp(rng):
    x = df.placeholder(df.float32, [None, 784], name="x")
    hidden = df.layers.dense(x, 256, activation=df.nn.relu)
    return df.nn.softmax(df.layers.dense(hidden, 10)), {x: rng.random((64, 784), np.float32)}


def _cnn(rng):
    x = df.placeholder(df.float32, [None, 28, 28, 1], name="x")
    h = df.layers.conv2d(x, 16, 5, padding="same", activation=df.nn.relu)
    h = df.layers.batch_normalization(h, training=False)
    h = df.layers.max_pooling2d(h, 2, 2)
    h = df.layers.conv2d(h, 32, 3, padding="same", activation=df.nn.relu)
    h = df.layers.average_pooling2d(h, 2, 2)
    logits = df.layers.dense(df.layers.flatten(h), 10)
    return df.nn.softmax(logits), {x: rng.random((8, 28, 28, 1), np.float32)}


def _lstm(rng):
    x = df.placeholder(df.float32, [8, 20, 32], name="x")
    outputs, _ = df.nn.dynamic_rnn(df.nn.rnn_cell.LSTMCell(64), x, dtype=df.float32)
    return outputs, {x: rng.random((8, 20, 32), np.float32)}


def _loop(rng):
    x = df.placeholder(df.float32, [], name="x")

    def body(i, a):
        return i + 1, df.cond(a > 0.5, lambda: a * 0.9, lambda: df.tanh(a + 0.7))

    _, result = df.while_loop(lambda i, a: i < 1000, body, [0, x])
    return result, {x: np.float32(rng.random())}


MODELS = {"mlp": _mlp, "cnn": _cnn, "lstm (dynamic_rnn)": _lstm, "while_loop + cond": _loop}


def _onnx_session(model_bytes: bytes, threads: int):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeats = 5 if parser.parse_args().quick else 20
    print(describe_machine(repeats))
    print(
        f"{'model':<20} {'export ms':>9} {'KB':>7} {'dataflow ms':>11} {'ort 1t ms':>9} "
        f"{'ort ms':>7} {'max |diff|':>10}"
    )
    df.onnx.export  # noqa: B018 - imports onnx and the exporter before anything is timed
    rng = np.random.default_rng(0)
    for label, build in MODELS.items():
        print(_measure(label, build, rng, repeats))


def _measure(label: str, build, rng, repeats: int) -> str:
    """One row of the table: export, then time the Session and onnxruntime on the model."""
    with df.Graph().as_default(), df.Session() as session:
        fetch, feeds = build(rng)
        session.run(df.global_variables_initializer())
        start = time.perf_counter()
        model = df.onnx.export(fetch, list(feeds), session=session)
        export_ms = (time.perf_counter() - start) * 1e3
        model_bytes = model.SerializeToString()
        one_thread = _onnx_session(model_bytes, 1)
        default = _onnx_session(model_bytes, 0)
        onnx_feeds = {t.op.name: np.asarray(v) for t, v in feeds.items()}
        ours, single, many = paired_median_times(
            lambda: session.run(fetch, feeds),
            lambda: one_thread.run(None, onnx_feeds),
            lambda: default.run(None, onnx_feeds),
            repeats=repeats,
        )
        difference = np.abs(one_thread.run(None, onnx_feeds)[0] - session.run(fetch, feeds))
    return (
        f"{label:<20} {export_ms:>9.1f} {len(model_bytes) / 1024:>7.0f} "
        f"{ours * 1e3:>11.3f} {single * 1e3:>9.3f} {many * 1e3:>7.3f} "
        f"{float(difference.max()):>10.2e}"
    )


if __name__ == "__main__":
    main()

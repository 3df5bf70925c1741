"""The workloads of `bench_training` in TensorFlow: 1.x graph mode and TensorFlow 2's
``tf.function``, each in its own process (graph mode is a process-wide switch).

- TensorFlow 1.x: `training_graphs.graph_training` run with ``tensorflow.compat.v1`` (control
  flow v1, a default ``ConfigProto``: its default thread pools and Grappler on).  The LSTM's
  ``BasicLSTMCell`` lives in TensorFlow's legacy Keras (``tf_keras``), which
  ``TF_USE_LEGACY_KERAS=1`` selects; it is set here before TensorFlow is imported.
- TensorFlow 2: `training_graphs.function_training` with ``tf.Module``, ``tf.GradientTape``
  and ``tf.keras.optimizers.Adam`` in a ``tf.function``; the LSTM (``dynamic_rnn`` has no TF2
  form) is ``tf.keras.layers.LSTM`` given the same weights (`training_workloads.lstm_ifgo`),
  the hand-written ``while_loop`` RNN the same code as TF1's (``while_loop`` becomes TF2's
  functional loop inside a ``tf.function``).
"""

from __future__ import annotations

import functools
import os

import training_graphs as g
import training_workloads as w
from harness import try_import_tensorflow


def try_import_tensorflow1():
    """``tf.compat.v1`` in graph mode with control flow v1 and legacy Keras (for its RNN
    cells), or None when TensorFlow is not installed here."""
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    return try_import_tensorflow()


def try_import_tensorflow2():
    """TensorFlow 2 with its default behaviour and config, or None when it is not installed."""
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        return tf
    except Exception:  # not installed, or unusable here
        return None


def _batch_of(arrays: dict, batch: int) -> dict:
    return {**arrays, "x": arrays["x"][:batch], "labels": arrays["labels"][:batch]}


def tensorflow1_cases(tf1) -> dict:
    """`harness.Partner`'s cases: ``train <workload>`` makes a training step of the workload
    from a file of arrays, ``infer lenet <batch>`` a forward run of LeNet on the first
    ``batch`` examples, ``losses`` gives the losses of the first steps of a new model."""
    sessions: list = []

    def train(workload: str, path: str):
        step, session = g.graph_training(tf1, workload, w.read_arrays(path))
        sessions.append(session)
        return step

    def infer(workload: str, path: str, batch: int):
        arrays = _batch_of(w.read_arrays(path), batch)
        run, session = g.graph_training(tf1, workload, arrays, forward_only=True)
        sessions.append(session)
        return run

    def losses(workload: str, path: str, steps: int):
        step, session = g.graph_training(tf1, workload, w.read_arrays(path))
        values = [step() for _ in range(steps)]
        session.close()
        return values

    return {
        **w.cases_per_workload("train", train),
        **{
            f"infer lenet {batch}": functools.partial(infer, "lenet", batch=batch)
            for batch in w.LOAD_BATCHES
        },
        "losses": losses,
    }


def _keras_lstm(tf, arrays: dict):
    """``(forward, variables, names)`` of the LSTM as TF2's users write it: a Keras ``LSTM``
    layer holding the shared weights, its last output to the Module's dense layer (``names``:
    the parameters the Module holds)."""
    layer = tf.keras.layers.LSTM(w.RNN_HIDDEN)
    layer.build((w.RNN_BATCH, w.RNN_STEPS, w.RNN_INPUTS))
    kernel, bias = w.lstm_ifgo(arrays["kernel"], arrays["bias"])
    layer.set_weights([kernel[: w.RNN_INPUTS], kernel[w.RNN_INPUTS :], bias])

    def forward(ops, p, x):
        return ops.matmul(layer(x), p["out"]) + p["out_b"]

    return forward, layer.trainable_variables, ["out", "out_b"]


def tensorflow2_cases(tf) -> dict:
    """`harness.Partner`'s cases: ``train <workload>`` makes a ``tf.function`` training step
    of the workload from a file of arrays; ``losses`` gives the losses of the first steps of a
    new model."""

    def train(workload: str, path: str):
        arrays = w.read_arrays(path)
        optimizer = tf.keras.optimizers.Adam(learning_rate=w.LEARNING_RATE, epsilon=w.EPSILON)
        layer = _keras_lstm(tf, arrays) if workload == "lstm" else None
        return g.function_training(tf, tf.compat.v1, optimizer, workload, arrays, layer)

    def losses(workload: str, path: str, steps: int):
        step = train(workload, path)
        return [step() for _ in range(steps)]

    return {**w.cases_per_workload("train", train), "losses": losses}

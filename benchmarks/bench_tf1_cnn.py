"""Notebook 6's TF1 CNN, trained here and in TensorFlow 1.x: time per step and final accuracy.

    python benchmarks/bench_tf1_cnn.py
    python benchmarks/bench_tf1_cnn.py --quick        # 20 steps
    python benchmarks/bench_tf1_cnn.py --tensorflow-python path/to/python-with-tensorflow
                                       # TensorFlow's figures from another environment

The program is notebook 6's: the "deep MNIST" network as TF1's tutorials write it (two 5x5
SAME convolutions with ReLU, each followed by a 2x2 max pool, a dense layer with dropout, a
dense layer of ten logits, ``tf.losses.sparse_softmax_cross_entropy``, Adam, weights from
``tf.truncated_normal`` under ``tf.set_random_seed``), narrowed to 8 and 16 filters and 128
dense units so that it trains in seconds.  It is one function of a module ``tf``, run once with
``dataflow`` and once with ``tensorflow.compat.v1`` (graph mode, control flow v1), on the same
minibatches of the corpus's MNIST stand-in (``tf1_corpus/mnist_standin.py``: scikit-learn's
digits at 28x28).  Initial weights and dropout masks come from each side's own random streams
under the same seeds, so the accuracies agree in class, not digit for digit.

Printed for each side: the median wall time of one training step (the steps after the first
two: the first builds the plan), the minibatch loss at the first and last step, and the
accuracy on the 400 test images.  TensorFlow runs when it is importable here or
``--tensorflow-python`` names a Python that has it (the script runs there with
``--tensorflow-partner``, reads the minibatches from a file and needs neither dataflow nor
scikit-learn): as users run it (a default ``ConfigProto``) and, beside it, with its intra-op
pool pinned to one thread as BLAS is here (one core per kernel on both sides).  The three
train step by step in turn (dataflow, TensorFlow, pinned TensorFlow, dataflow, ...:
`harness.Partner`), so each step of each side sees the same load; the machine may be shared,
so read the ratios, not the absolutes.
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
import os
import sys
import tempfile

import numpy as np

STEPS, BATCH, SEED = 200, 50, 0


def deepnn(tf, x):
    """The network: logits ``[batch, 10]`` of images ``x`` ``[batch, 784]``, and the dropout's
    ``keep_prob`` placeholder."""

    def weight_variable(shape):
        return tf.Variable(tf.truncated_normal(shape, stddev=0.1))

    def bias_variable(shape):
        return tf.Variable(tf.constant(0.1, shape=shape))

    def conv2d(x, W):
        return tf.nn.conv2d(x, W, strides=[1, 1, 1, 1], padding="SAME")

    def max_pool_2x2(x):
        return tf.nn.max_pool(x, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="SAME")

    with tf.name_scope("reshape"):
        x_image = tf.reshape(x, [-1, 28, 28, 1])
    with tf.name_scope("conv1"):
        W_conv1 = weight_variable([5, 5, 1, 8])
        b_conv1 = bias_variable([8])
        h_conv1 = tf.nn.relu(conv2d(x_image, W_conv1) + b_conv1)
    with tf.name_scope("pool1"):
        h_pool1 = max_pool_2x2(h_conv1)
    with tf.name_scope("conv2"):
        W_conv2 = weight_variable([5, 5, 8, 16])
        b_conv2 = bias_variable([16])
        h_conv2 = tf.nn.relu(conv2d(h_pool1, W_conv2) + b_conv2)
    with tf.name_scope("pool2"):
        h_pool2 = max_pool_2x2(h_conv2)
    with tf.name_scope("fc1"):
        W_fc1 = weight_variable([7 * 7 * 16, 128])
        b_fc1 = bias_variable([128])
        h_pool2_flat = tf.reshape(h_pool2, [-1, 7 * 7 * 16])
        h_fc1 = tf.nn.relu(tf.matmul(h_pool2_flat, W_fc1) + b_fc1)
    with tf.name_scope("dropout"):
        keep_prob = tf.placeholder(tf.float32, name="keep_prob")
        h_fc1_drop = tf.nn.dropout(h_fc1, keep_prob)
    with tf.name_scope("fc2"):
        W_fc2 = weight_variable([128, 10])
        b_fc2 = bias_variable([10])
        y_conv = tf.matmul(h_fc1_drop, W_fc2) + b_fc2
    return y_conv, keep_prob


def build(tf):
    """The training graph in the default graph: ``(x, y_, keep_prob, loss, accuracy,
    train_step)``."""
    tf.set_random_seed(SEED)
    x = tf.placeholder(tf.float32, [None, 784], name="x")
    y_ = tf.placeholder(tf.int64, [None], name="y_")
    y_conv, keep_prob = deepnn(tf, x)
    with tf.name_scope("loss"):
        cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y_conv)
    with tf.name_scope("adam_optimizer"):
        train_step = tf.train.AdamOptimizer(1e-3).minimize(cross_entropy)
    with tf.name_scope("accuracy"):
        correct_prediction = tf.cast(tf.equal(tf.argmax(y_conv, 1), y_), tf.float32)
    accuracy = tf.reduce_mean(correct_prediction)
    return x, y_, keep_prob, cross_entropy, accuracy, train_step


def stand_in_batches(steps: int = STEPS, batch: int = BATCH) -> dict:
    """``steps`` minibatches of the MNIST stand-in's training images (``images`` ``[steps,
    batch, 784]``, ``labels`` ``[steps, batch]``) as ``next_batch`` hands them out, and its
    test images and labels."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf1_corpus"))
    import mnist_standin

    mnist = mnist_standin.read_data_sets("MNIST_data")
    images, labels = zip(*(mnist.train.next_batch(batch) for _ in range(steps)))
    return {
        "images": np.stack(images),
        "labels": np.stack(labels),
        "test_images": mnist.test.images,
        "test_labels": mnist.test.labels,
    }


class Training:
    """The program of `build` in a Session of ``tf`` (a default ``ConfigProto``, or ``pinned``:
    one intra-op thread), trained by `step` on ``data``'s minibatches one after another."""

    def __init__(self, tf, data: dict, pinned: bool = False) -> None:
        self.data = data
        graph = tf.Graph()
        with graph.as_default():
            self.x, self.y_, self.keep_prob, self.loss, self.accuracy, self.train_step = build(tf)
            init = tf.global_variables_initializer()
        config = tf.ConfigProto()
        if pinned:
            config.intra_op_parallelism_threads = 1
            config.inter_op_parallelism_threads = 2
        self.sess = tf.Session(graph=graph, config=config)
        self.sess.run(init)
        self.losses: list[float] = []

    def step(self) -> None:
        n = len(self.losses)
        feed = {
            self.x: self.data["images"][n],
            self.y_: self.data["labels"][n],
            self.keep_prob: 0.5,
        }
        _, batch_loss = self.sess.run([self.train_step, self.loss], feed)
        self.losses.append(float(batch_loss))

    def figures(self) -> dict:
        """The first and last losses and the test accuracy (closes the Session)."""
        test_feed = {
            self.x: self.data["test_images"],
            self.y_: self.data["test_labels"],
            self.keep_prob: 1.0,
        }
        test_accuracy = float(self.sess.run(self.accuracy, test_feed))
        self.sess.close()
        return {
            "first_loss": self.losses[0],
            "last_loss": self.losses[-1],
            "test_accuracy": test_accuracy,
        }


def tensorflow_cases(tf) -> dict:
    """`harness.Partner`'s cases: a training as shipped and one pinned, each on the minibatches
    of an ``.npz`` file, a step per run; ``figures`` (a call) ends one and gives its figures."""
    trainings: dict[str, Training] = {}

    def start(name: str, path: str):
        trainings[name] = Training(tf, dict(np.load(path)), pinned=name == "pinned")
        return trainings[name].step

    return {
        "shipped": lambda path: start("shipped", path),
        "pinned": lambda path: start("pinned", path),
        "figures": lambda name: trainings.pop(name).figures(),
    }


def train_in_step(data: dict, tensorflow: Partner | None) -> dict:
    """Trains dataflow and, with ``tensorflow``, TensorFlow as shipped and pinned, a step of
    each in turn on ``data``'s minibatches; each side's figures by name."""
    import dataflow

    ours = Training(dataflow, data)
    ours.step()  # the first step builds the plan, as the first run of TensorFlow's (`timer`)
    timed = {"dataflow": ours.step}
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "batches.npz")
        if tensorflow is not None:
            np.savez(path, **data)
            timed["TensorFlow"] = tensorflow.timer("shipped", path)
            timed["TF pinned"] = tensorflow.timer("pinned", path)
        steps = len(data["images"])
        times = paired_median_times(*timed.values(), repeats=steps - 2)
    figures = {"dataflow": ours.figures()}
    if tensorflow is not None:
        figures["TensorFlow"] = tensorflow.call("figures", "shipped")
        figures["TF pinned"] = tensorflow.call("figures", "pinned")
    for name, seconds in zip(timed, times):
        figures[name]["step_seconds"] = seconds
    return figures


def _row(name: str, figures: dict) -> str:
    return (
        f"{name:<11} {figures['step_seconds'] * 1000:6.1f} ms per step   "
        f"loss {figures['first_loss']:.2f} -> {figures['last_loss']:.2f}   "
        f"test accuracy {figures['test_accuracy']:.1%}"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"20 steps instead of {STEPS}")
    parser.add_argument("--tensorflow-python", metavar="PYTHON")
    parser.add_argument("--tensorflow-partner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.tensorflow_partner:
        serve_partner(try_import_tensorflow, tensorflow_cases)
        return 0

    steps = 20 if args.quick else STEPS
    print(describe_machine("median of the steps after the first two", steps=steps, batch=BATCH))
    tf = Partner.start(
        try_import_tensorflow,
        tensorflow_cases,
        os.path.abspath(__file__),
        "--tensorflow-partner",
        args.tensorflow_python,
    )
    figures = train_in_step(stand_in_batches(steps), tf)
    for name, row in figures.items():
        print(_row(name, row))
    if tf is None:
        print("TensorFlow is not installed here (give --tensorflow-python): no comparison")
        return 0
    tf.close()
    for name in ("TensorFlow", "TF pinned"):
        ratio = figures["dataflow"]["step_seconds"] / figures[name]["step_seconds"]
        print(f"time per step, dataflow / {name}: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

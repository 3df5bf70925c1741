"""Train a two-layer perceptron on handwritten digits, with gradients built by the framework.

The data set is scikit-learn's 8x8 handwritten digits (1797 images, ten classes), which ships
inside the package: nothing is downloaded.  A quarter of the images are held out and never
trained on; the test accuracy is measured on them.

The model is written as a TensorFlow 1.x graph: ``images -> relu(images @ W1 + b1) -> logits =
hidden @ W2 + b2``, a softmax cross-entropy loss, and ``AdamOptimizer.minimize(loss)``, which
asks `df.gradients` to add the backward graph and adds the update ops.  Each ``Session.run``
of the train op is one step of minibatch training.

Run ``python examples/train_mlp_digits.py`` (about two seconds); it prints the loss and the
accuracies after every epoch.  ``--plot curves.png`` draws the curves (needs matplotlib),
``--graph step.png`` draws the forward and backward graph of one training step.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

import numpy as np

import dataflow as df


def load_data(test_fraction: float = 0.25, seed: int = 0):
    """``(train_images, test_images, train_labels, test_labels)``: pixels scaled to [0, 1],
    float32 rows of 64; labels int32.  The split is stratified, so both halves hold every
    digit in the same proportions."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    return train_test_split(
        images, labels, test_size=test_fraction, random_state=seed, stratify=labels
    )


@dataclass
class Model:
    """The tensors and ops of the training graph that the training loop feeds and fetches."""

    images: df.Tensor
    labels: df.Tensor
    logits: df.Tensor
    loss: df.Tensor
    accuracy: df.Tensor
    train_op: df.Operation
    global_step: df.Variable


def build_model(hidden_units: int = 128, learning_rate: float = 0.005, seed: int = 0) -> Model:
    """Builds the two-layer perceptron and its training step in the default graph.

    The weights start from He-scaled normal noise drawn with numpy (seeded), the biases at 0.
    """
    rng = np.random.default_rng(seed)
    images = df.placeholder(df.float32, [None, 64], name="images")
    labels = df.placeholder(df.int32, [None], name="labels")
    with df.name_scope("hidden"):
        w1 = df.Variable(_normal(rng, (64, hidden_units), 2.0 / 64), name="weights")
        b1 = df.Variable(np.zeros(hidden_units, np.float32), name="biases")
        hidden = df.nn.relu(df.matmul(images, w1) + b1)
    with df.name_scope("output"):
        w2 = df.Variable(_normal(rng, (hidden_units, 10), 1.0 / hidden_units), name="weights")
        b2 = df.Variable(np.zeros(10, np.float32), name="biases")
        logits = df.matmul(hidden, w2) + b2
    with df.name_scope("loss"):
        losses = df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = df.reduce_mean(losses)
    with df.name_scope("accuracy"):
        predictions = df.argmax(logits, axis=1, output_type=df.int32)
        accuracy = df.reduce_mean(df.cast(df.equal(predictions, labels), df.float32))
    global_step = df.train.get_or_create_global_step()
    train_op = df.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
    return Model(images, labels, logits, loss, accuracy, train_op, global_step)


def _normal(rng, shape, variance):
    return rng.normal(0.0, np.sqrt(variance), shape).astype(np.float32)


@dataclass
class History:
    """What training measured: the minibatch loss of every step, and per epoch the loss and
    accuracy on the whole training set and the accuracy on the held-out test set."""

    step_loss: list = field(default_factory=list)
    train_loss: list = field(default_factory=list)
    train_accuracy: list = field(default_factory=list)
    test_accuracy: list = field(default_factory=list)


def train(
    epochs: int = 10,
    batch_size: int = 64,
    hidden_units: int = 128,
    learning_rate: float = 0.005,
    seed: int = 0,
    log=print,
) -> History:
    """Trains a fresh model in a new graph and returns its `History`."""
    train_images, test_images, train_labels, test_labels = load_data(seed=seed)
    order_rng = np.random.default_rng(seed)
    history = History()
    with df.Graph().as_default():
        model = build_model(hidden_units, learning_rate, seed)
        with df.Session() as session:
            session.run(df.global_variables_initializer())
            for epoch in range(1, epochs + 1):
                order = order_rng.permutation(len(train_images))
                for start in range(0, len(order), batch_size):
                    batch = order[start : start + batch_size]
                    feed = {model.images: train_images[batch], model.labels: train_labels[batch]}
                    _, loss = session.run([model.train_op, model.loss], feed)
                    history.step_loss.append(float(loss))
                loss, accuracy = session.run(
                    [model.loss, model.accuracy],
                    {model.images: train_images, model.labels: train_labels},
                )
                test_accuracy = session.run(
                    model.accuracy, {model.images: test_images, model.labels: test_labels}
                )
                history.train_loss.append(float(loss))
                history.train_accuracy.append(float(accuracy))
                history.test_accuracy.append(float(test_accuracy))
                step = df.train.global_step(session, model.global_step)
                log(
                    f"epoch {epoch:2d}  step {step:4d}  train loss {loss:.4f}  "
                    f"train accuracy {accuracy:.2%}  test accuracy {test_accuracy:.2%}"
                )
    return history


def plot(history: History, path: str) -> None:
    """Draws the step losses and the per-epoch accuracies side by side into ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    left.plot(history.step_loss, linewidth=0.8, label="minibatch loss")
    steps_per_epoch = len(history.step_loss) // len(history.train_loss)
    epoch_ends = [steps_per_epoch * (i + 1) for i in range(len(history.train_loss))]
    left.plot(epoch_ends, history.train_loss, "o-", label="training-set loss")
    left.set(xlabel="step", ylabel="cross-entropy", yscale="log", title="loss")
    left.legend()
    epochs = range(1, len(history.test_accuracy) + 1)
    right.plot(epochs, history.train_accuracy, "o-", label="train")
    right.plot(epochs, history.test_accuracy, "s-", label="test (held out)")
    right.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    right.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden-units", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=0.005)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", metavar="PNG", help="draw the loss and accuracy curves")
    parser.add_argument("--graph", metavar="PNG", help="draw the graph of one training step")
    args = parser.parse_args(argv)
    history = train(args.epochs, args.batch_size, args.hidden_units, args.learning_rate, args.seed)
    print(f"test accuracy: {history.test_accuracy[-1]:.2%}")
    if args.plot:
        plot(history, args.plot)
        print(f"wrote {args.plot}")
    if args.graph:
        with df.Graph().as_default():
            model = build_model(args.hidden_units, args.learning_rate, args.seed)
            # One box per name scope: the forward layers, the backward graph, Adam's updates.
            df.render(model.train_op, args.graph, legend=True)
        print(f"wrote {args.graph}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

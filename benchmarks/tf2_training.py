"""Figure 4 of `bench_eager`: one training step written the TensorFlow 2 way, beside its peers.

The model is an MLP (784 inputs, two hidden ReLU layers of 256 units, 10 classes; softmax
cross-entropy, batch 64, Adam at 1e-3), from the same initial weights and data everywhere:

- ``df.function``: the TF2 way here (a `df.Module` of `Dense` modules, a `GradientTape`, the
  optimizer's ``apply_gradients``, all inside one ``df.function``);
- ``eager``: the same step without ``df.function`` (op by op);
- ``TF1 graph``: the same model as a TF1 graph here (placeholders, ``minimize``, one
  ``Session.run`` per step);
- ``TF2 tf.function``: TensorFlow 2 as its users write it (``tf.Module``, ``tf.GradientTape``,
  ``tf.keras.optimizers.Adam`` inside a ``tf.function``), with TensorFlow's default config;
- ``PyTorch eager``: ``torch.nn.Linear`` layers and ``torch.optim.Adam`` with PyTorch's
  default threads.

TensorFlow and PyTorch run in their own processes when they are installed in another Python
(``--tensorflow-python``, ``--torch-python``), timed round by round between dataflow's steps
(`harness.Partner`).  The loss after `LOSS_STEPS` steps is printed for each, from the same
start: the figures are of the same computation.
"""

from __future__ import annotations

import os

import numpy as np

INPUTS, HIDDEN, CLASSES, BATCH = 784, 256, 10, 64
LEARNING_RATE, EPSILON = 1e-3, 1e-8
LOSS_STEPS = 5


def initial_weights() -> list:
    """w1, b1, w2, b2, w3, b3: Glorot-scaled normal weights, zero biases (seeded)."""
    rng = np.random.default_rng(0)
    sizes = [INPUTS, HIDDEN, HIDDEN, CLASSES]
    weights = []
    for n, m in zip(sizes, sizes[1:]):
        weights.append((rng.normal(size=(n, m)) * np.sqrt(2.0 / (n + m))).astype(np.float32))
        weights.append(np.zeros(m, np.float32))
    return weights


def batch() -> tuple:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(BATCH, INPUTS)).astype(np.float32)
    labels = rng.integers(0, CLASSES, BATCH).astype(np.int32)
    return x, labels


# -- dataflow --------------------------------------------------------------------------------------
def dataflow_tf2_step(df, traced: bool = True):
    """The TF2 way here: modules, tape and optimizer, in one df.function (or eagerly)."""

    class Dense(df.Module):
        def __init__(self, weights, biases, activation=None, name=None):
            super().__init__(name=name)
            self.w = df.Variable(weights, name="w")
            self.b = df.Variable(biases, name="b")
            self.activation = activation

        def __call__(self, x):
            y = df.matmul(x, self.w) + self.b
            return self.activation(y) if self.activation else y

    class MLP(df.Module):
        def __init__(self, weights):
            super().__init__(name="mlp")
            w1, b1, w2, b2, w3, b3 = weights
            self.layers = [Dense(w1, b1, df.nn.relu), Dense(w2, b2, df.nn.relu), Dense(w3, b3)]

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    with df.eager_mode():
        model = MLP(initial_weights())
        optimizer = df.train.AdamOptimizer(LEARNING_RATE, epsilon=EPSILON)
        x, labels = (df.constant(v) for v in batch())

    def train_step(x, labels):
        with df.GradientTape() as tape:
            logits = model(x)
            loss = df.reduce_mean(
                df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    if traced:
        train_step = df.function(train_step)

    def step():
        with df.eager_mode():
            return float(train_step(x, labels))

    step.function = train_step if traced else None
    return step


def dataflow_graph_step(df):
    """The same model and step as a TF1 graph here."""
    graph = df.Graph()
    with graph.as_default():
        w1, b1, w2, b2, w3, b3 = (df.Variable(v) for v in initial_weights())
        x = df.placeholder(df.float32, [BATCH, INPUTS])
        labels = df.placeholder(df.int32, [BATCH])
        hidden = df.nn.relu(df.matmul(x, w1) + b1)
        hidden = df.nn.relu(df.matmul(hidden, w2) + b2)
        logits = df.matmul(hidden, w3) + b3
        loss = df.reduce_mean(
            df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        train = df.train.AdamOptimizer(LEARNING_RATE, epsilon=EPSILON).minimize(loss)
        session = df.Session(graph=graph)
        session.run(df.global_variables_initializer())
    feed = dict(zip((x, labels), batch()))
    return lambda: float(session.run([loss, train], feed)[0])


# -- TensorFlow 2, as its users write it -----------------------------------------------------------
def try_import_tensorflow2():
    """TensorFlow 2 with its default behaviour and config, or None when it is not installed."""
    try:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        return tf
    except Exception:  # not installed, or unusable here
        return None


def tensorflow2_cases(tf) -> dict:
    def make_step():
        class Dense(tf.Module):
            def __init__(self, weights, biases, activation=None):
                super().__init__()
                self.w = tf.Variable(weights)
                self.b = tf.Variable(biases)
                self.activation = activation

            def __call__(self, x):
                y = tf.matmul(x, self.w) + self.b
                return self.activation(y) if self.activation else y

        class MLP(tf.Module):
            def __init__(self, weights):
                super().__init__()
                w1, b1, w2, b2, w3, b3 = weights
                self.layers = [
                    Dense(w1, b1, tf.nn.relu),
                    Dense(w2, b2, tf.nn.relu),
                    Dense(w3, b3),
                ]

            def __call__(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x

        model = MLP(initial_weights())
        optimizer = tf.keras.optimizers.Adam(learning_rate=LEARNING_RATE, epsilon=EPSILON)
        x, labels = (tf.constant(v) for v in batch())

        @tf.function
        def train_step(x, labels):
            with tf.GradientTape() as tape:
                logits = model(x)
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
                )
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        return lambda: float(train_step(x, labels))

    def losses(steps):
        step = make_step()
        return [step() for _ in range(steps)]

    return {"tf2_step": make_step, "tf2_losses": losses}


# -- PyTorch eager ---------------------------------------------------------------------------------
def try_import_torch():
    try:
        import torch

        torch.set_num_threads(os.cpu_count())  # PyTorch's default, whatever the environment says
        return torch
    except Exception:  # not installed, or unusable here
        return None


def torch_cases(torch) -> dict:
    def make_step():
        w1, b1, w2, b2, w3, b3 = initial_weights()
        layers = []
        for weights, biases in ((w1, b1), (w2, b2), (w3, b3)):
            layer = torch.nn.Linear(*weights.shape)
            with torch.no_grad():
                layer.weight.copy_(torch.from_numpy(weights.T.copy()))
                layer.bias.copy_(torch.from_numpy(biases))
            layers.append(layer)
        model = torch.nn.Sequential(
            layers[0], torch.nn.ReLU(), layers[1], torch.nn.ReLU(), layers[2]
        )
        optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE, eps=EPSILON)
        x, labels = batch()
        x, labels = torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            optimizer.zero_grad()
            loss = loss_fn(model(x), labels)
            loss.backward()
            optimizer.step()
            return float(loss)

        return step

    def losses(steps):
        step = make_step()
        return [step() for _ in range(steps)]

    return {"torch_step": make_step, "torch_losses": losses}

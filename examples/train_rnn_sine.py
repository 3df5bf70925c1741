"""Train a recurrent network, written with ``df.while_loop``, to continue noisy sine waves.

Each example is a sine wave with its own frequency and phase, sampled at 21 points with
Gaussian noise added.  At every step ``t`` the network sees the noisy value ``x[t]`` and must
predict the next one, ``x[t+1]``.  A single value says little (is the wave going up or down?
how fast?), so the network has to carry what it saw in its hidden state.

The network is an Elman RNN, ``h[t] = tanh(x[t] W_in + h[t-1] W_rec + b)`` and
``prediction[t] = h[t] W_out + b_out``, and the loop over time is an in-graph
``df.while_loop``: one loop whatever the sequence length, not one copy of the cell per step.
``AdamOptimizer.minimize`` differentiates through that loop: `df.gradients` builds a backward
loop that runs the iterations in reverse, reading the hidden states the forward loop saved
on stacks, and sums the weights' gradients over the iterations.

Run ``python examples/train_rnn_sine.py`` (a few seconds); it prints the held-out loss as
training goes, next to two baselines.  ``--plot curves.png`` draws the loss curve and a
held-out wave with its predictions (needs matplotlib); ``--graph step.png`` draws the graph of
one training step, forward loop and backward loop.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

import numpy as np

import dataflow as df

SEQUENCE_LENGTH = 20  # predictions per wave: x[0..19] in, x[1..20] out
NOISE = 0.1


def make_waves(rng: np.random.Generator, count: int, length: int = SEQUENCE_LENGTH):
    """``(inputs, targets, clean)`` for ``count`` random waves, time-major.

    ``inputs`` is ``[length, count, 1]`` (the noisy values ``x[0..length-1]``), ``targets`` is
    ``[length, count]`` (the noisy values ``x[1..length]``), ``clean`` is ``[length + 1,
    count]`` (the waves without noise).  Frequencies are drawn from 0.3 to 0.9 radians per
    step (a period of 7 to 21 steps), phases uniformly.
    """
    omega = rng.uniform(0.3, 0.9, size=(1, count))
    phase = rng.uniform(0.0, 2 * np.pi, size=(1, count))
    time = np.arange(length + 1)[:, None]
    clean = np.sin(omega * time + phase)
    noisy = clean + rng.normal(0.0, NOISE, size=clean.shape)
    inputs = noisy[:-1, :, None].astype(np.float32)
    targets = noisy[1:].astype(np.float32)
    return inputs, targets, clean.astype(np.float32)


@dataclass
class Model:
    """The tensors and ops of the training graph that the training loop feeds and fetches."""

    inputs: df.Tensor
    targets: df.Tensor
    predictions: df.Tensor
    loss: df.Tensor
    train_op: df.Operation


def make_parameters(hidden_units: int, rng: np.random.Generator) -> dict:
    """The RNN's variables: small random weights (seeded), zero biases."""
    return {
        "w_in": df.Variable(_normal(rng, (1, hidden_units), 1.0), name="w_in"),
        "w_rec": df.Variable(
            _normal(rng, (hidden_units, hidden_units), 1.0 / hidden_units), name="w_rec"
        ),
        "b": df.Variable(np.zeros(hidden_units, np.float32), name="b"),
        "w_out": df.Variable(_normal(rng, (hidden_units, 1), 1.0 / hidden_units), name="w_out"),
        "b_out": df.Variable(np.zeros(1, np.float32), name="b_out"),
    }


def cell(x_t: df.Tensor, h: df.Tensor, weights: dict) -> tuple[df.Tensor, df.Tensor]:
    """One time step: the new hidden state ``[batch, hidden]`` and the prediction ``[batch]``."""
    h = df.tanh(df.matmul(x_t, weights["w_in"]) + df.matmul(h, weights["w_rec"]) + weights["b"])
    prediction = df.reshape(df.matmul(h, weights["w_out"]) + weights["b_out"], [-1])
    return h, prediction


def recurrent_network(inputs: df.Tensor, params: dict) -> df.Tensor:
    """The predictions ``[time, batch]`` of the RNN run over ``inputs`` ``[time, batch, 1]`` by
    one ``while_loop``.

    The loop variables are the time step ``t``, the hidden state ``h`` ``[batch, hidden]`` and
    the predictions so far, ``[t, batch]``, which grow by one row per iteration (hence their
    shape invariant ``[None, None]``).  The weights are read once, before the loop, so they
    enter it as loop invariants: the backward loop adds their gradients up over the
    iterations, and only the values that change per iteration (inputs, hidden states) are
    saved for it.  (Reading a variable inside the body works too, but then each iteration's
    read is a value of its own, saved for the backward loop.)
    """
    hidden_units = params["w_rec"].shape[0]
    weights = {name: variable.value() for name, variable in params.items()}
    num_steps = df.shape(inputs)[0]
    batch_size = df.shape(inputs)[1]
    h0 = df.zeros(df.stack([batch_size, hidden_units]), name="h0")
    no_predictions = df.zeros(df.stack([0, batch_size]), name="no_predictions")

    def keep_going(t, h, predictions):
        return t < num_steps

    def step(t, h, predictions):
        h, prediction = cell(inputs[t], h, weights)
        return t + 1, h, df.concat([predictions, prediction[None]], axis=0)

    _, _, predictions = df.while_loop(
        keep_going,
        step,
        [df.constant(0, name="t0"), h0, no_predictions],
        shape_invariants=[
            df.TensorShape([]),
            df.TensorShape([None, hidden_units]),
            df.TensorShape([None, None]),
        ],
        name="over_time",
    )
    return predictions


def _normal(rng, shape, variance):
    return rng.normal(0.0, np.sqrt(variance), shape).astype(np.float32)


def build_model(hidden_units: int = 16, learning_rate: float = 0.01, seed: int = 0) -> Model:
    """Builds the RNN, its mean-squared-error loss and its Adam training step in the default
    graph."""
    rng = np.random.default_rng(seed)
    inputs = df.placeholder(df.float32, [None, None, 1], name="inputs")
    targets = df.placeholder(df.float32, [None, None], name="targets")
    with df.name_scope("rnn"):
        predictions = recurrent_network(inputs, make_parameters(hidden_units, rng))
    loss = df.reduce_mean(df.square(predictions - targets), name="loss")
    train_op = df.train.AdamOptimizer(learning_rate).minimize(loss)
    return Model(inputs, targets, predictions, loss, train_op)


@dataclass
class History:
    """What training measured: the minibatch loss of every step, the loss on held-out waves
    every ``eval_every`` steps (``eval_steps`` says which), and the baselines on those waves."""

    step_loss: list = field(default_factory=list)
    eval_steps: list = field(default_factory=list)
    eval_loss: list = field(default_factory=list)
    persistence_loss: float = 0.0  # predict x[t+1] = x[t]
    noise_floor: float = NOISE**2  # the best any predictor of the noisy value can do
    example: dict = field(default_factory=dict)  # one held-out wave and its predictions


def train(
    steps: int = 200,
    batch_size: int = 32,
    hidden_units: int = 16,
    learning_rate: float = 0.01,
    eval_every: int = 20,
    seed: int = 0,
    log=print,
) -> History:
    """Trains a fresh model in a new graph on fresh random waves each step; returns its
    `History`.  The held-out waves come from their own generator, never trained on."""
    data_rng = np.random.default_rng(seed)
    eval_inputs, eval_targets, eval_clean = make_waves(np.random.default_rng(seed + 1000), 256)
    history = History(persistence_loss=float(np.mean((eval_inputs[:, :, 0] - eval_targets) ** 2)))
    held_out = {}
    with df.Graph().as_default():
        model = build_model(hidden_units, learning_rate, seed)
        held_out = {model.inputs: eval_inputs, model.targets: eval_targets}
        with df.Session() as session:
            session.run(df.global_variables_initializer())
            for step in range(steps + 1):
                if step % eval_every == 0 or step == steps:
                    history.eval_steps.append(step)
                    history.eval_loss.append(float(session.run(model.loss, held_out)))
                    log(f"step {step:4d}  held-out loss {history.eval_loss[-1]:.4f}")
                if step == steps:
                    break
                inputs, targets, _ = make_waves(data_rng, batch_size)
                feed = {model.inputs: inputs, model.targets: targets}
                _, loss = session.run([model.train_op, model.loss], feed)
                history.step_loss.append(float(loss))
            predictions = session.run(model.predictions, held_out)
    history.example = {
        "inputs": eval_inputs[:, 0, 0],
        "targets": eval_targets[:, 0],
        "clean": eval_clean[:, 0],
        "predictions": predictions[:, 0],
    }
    log(
        f"held-out loss {history.eval_loss[0]:.4f} -> {history.eval_loss[-1]:.4f}; "
        f"predicting x[t+1] = x[t] scores {history.persistence_loss:.4f}, "
        f"the noise alone {history.noise_floor:.4f}"
    )
    return history


def plot(history: History, path: str) -> None:
    """Draws the loss curves and one held-out wave with its predictions into ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    left.plot(history.step_loss, linewidth=0.8, alpha=0.7, label="minibatch")
    left.plot(history.eval_steps, history.eval_loss, "o-", label="held-out waves")
    left.axhline(history.persistence_loss, color="grey", linestyle="--", label="x[t+1] = x[t]")
    left.axhline(history.noise_floor, color="black", linestyle=":", label="noise floor")
    left.set(xlabel="training step", ylabel="mean squared error", yscale="log", title="loss")
    left.legend()
    example = history.example
    time = np.arange(len(example["clean"]))
    right.plot(time, example["clean"], color="grey", linewidth=1, label="wave without noise")
    right.plot(time[:-1], example["inputs"], "o", markersize=4, label="noisy values seen")
    right.plot(time[1:], example["predictions"], "x-", label="predicted next value")
    right.set(xlabel="t", title="a held-out wave")
    right.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--hidden-units", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plot", metavar="PNG", help="draw the loss curve and a prediction")
    parser.add_argument("--graph", metavar="PNG", help="draw the graph of one training step")
    args = parser.parse_args(argv)
    history = train(
        args.steps, args.batch_size, args.hidden_units, args.learning_rate, seed=args.seed
    )
    if args.plot:
        plot(history, args.plot)
        print(f"wrote {args.plot}")
    if args.graph:
        with df.Graph().as_default():
            model = build_model(args.hidden_units, args.learning_rate, args.seed)
            # One box per name scope: the network (with the forward loop), the backward graph
            # (with the backward loop), Adam's updates.
            df.render(model.train_op, args.graph, legend=True)
        print(f"wrote {args.graph}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The workloads of `bench_training`: their sizes, their parameters, their initial values and
data, and the matrix products a training step of each must do (the GEMM floor).

numpy only, so every framework's Python can import it: the peers read the constants here and
the arrays from the ``.npz`` file `bench_training` writes (`write_arrays`); they never draw
random values of their own, so every framework starts from the same weights on the same data.

A workload's arrays, by key: ``x`` (the inputs of one batch), ``labels`` (int32 classes), and
one key per parameter in `PARAMETERS` order.  Layouts are TensorFlow's: images NHWC, filters
HWIO, dense weights ``[inputs, outputs]``, the LSTM's kernel ``[inputs + hidden, 4 * hidden]``
with the gates in `BasicLSTMCell` order (input, new value, forget, output; forget bias 1.0
added inside the cell).  `lstm_ifgo` and `torch_fc1_rows` convert for the frameworks that use
other layouts.
"""

from __future__ import annotations

import functools

import numpy as np

CLASSES = 10
LEARNING_RATE, EPSILON = 1e-3, 1e-8  # Adam, everywhere
BN_EPSILON = 1e-3  # fused_batch_norm's default, given to every framework explicitly

MLP_INPUTS, MLP_HIDDEN, MLP_BATCH = 784, 256, 64
LENET_BATCH, LENET_SIZE = 64, 28
RESNET_BATCH, RESNET_SIZE = 32, 32
# (input channels, output channels, stride) of each residual block, after a 16-channel stem.
RESNET_BLOCKS = ((16, 16, 1), (16, 32, 2), (32, 64, 2))
RNN_BATCH, RNN_STEPS, RNN_INPUTS, RNN_HIDDEN = 32, 50, 32, 128
LOAD_BATCHES = (1, 64)  # LeNet's forward pass under load, at these batch sizes

# The training workloads, in the order printed.  ``mlp-tf2`` is the MLP written the TF2 way.
WORKLOADS = ("mlp", "lenet", "resnet", "lstm", "rnn-while", "mlp-tf2")
DESCRIPTIONS = {
    "mlp": f"MLP {MLP_INPUTS}-{MLP_HIDDEN}-{MLP_HIDDEN}-{CLASSES}, batch {MLP_BATCH}",
    "lenet": f"LeNet 28x28x1 (5x5 conv 32, pool, 5x5 conv 64, pool, dense 256), "
    f"batch {LENET_BATCH}",
    "resnet": f"ResNet: 3x3 stem 16, 3 residual blocks (16, 32/2, 64/2) with batch norm, "
    f"{RESNET_SIZE}x{RESNET_SIZE}x3, batch {RESNET_BATCH}",
    "lstm": f"LSTM via dynamic_rnn: {RNN_STEPS} steps, batch {RNN_BATCH}, {RNN_INPUTS} inputs, "
    f"hidden {RNN_HIDDEN}",
    "rnn-while": f"the same LSTM written with while_loop by hand ({RNN_STEPS} steps)",
    "mlp-tf2": "the MLP written the TF2 way: a Module, a GradientTape, a function",
}
# The workload whose arrays each one uses (the hand-written RNN and the TF2 MLP share theirs).
ARRAYS_OF = {"rnn-while": "lstm", "mlp-tf2": "mlp"}


def _dense(name: str, inputs: int, outputs: int) -> list:
    return [(name, (inputs, outputs)), (name + "_b", (outputs,))]


def _resnet_parameters() -> list:
    parameters = [("stem", (3, 3, 3, 16)), ("stem_gamma", (16,)), ("stem_beta", (16,))]
    for k, (cin, cout, stride) in enumerate(RESNET_BLOCKS):
        parameters += [
            (f"block{k}_a", (3, 3, cin, cout)),
            (f"block{k}_a_gamma", (cout,)),
            (f"block{k}_a_beta", (cout,)),
            (f"block{k}_b", (3, 3, cout, cout)),
            (f"block{k}_b_gamma", (cout,)),
            (f"block{k}_b_beta", (cout,)),
        ]
        if stride != 1 or cin != cout:
            parameters.append((f"block{k}_skip", (1, 1, cin, cout)))
    return parameters + _dense("fc", RESNET_BLOCKS[-1][1], CLASSES)


PARAMETERS = {
    "mlp": _dense("w1", MLP_INPUTS, MLP_HIDDEN)
    + _dense("w2", MLP_HIDDEN, MLP_HIDDEN)
    + _dense("w3", MLP_HIDDEN, CLASSES),
    "lenet": [
        ("conv1", (5, 5, 1, 32)),
        ("conv1_b", (32,)),
        ("conv2", (5, 5, 32, 64)),
        ("conv2_b", (64,)),
    ]
    + _dense("fc1", 7 * 7 * 64, 256)
    + _dense("fc2", 256, CLASSES),
    "resnet": _resnet_parameters(),
    "lstm": [
        ("kernel", (RNN_INPUTS + RNN_HIDDEN, 4 * RNN_HIDDEN)),
        ("bias", (4 * RNN_HIDDEN,)),
    ]
    + _dense("out", RNN_HIDDEN, CLASSES),
}
INPUT_SHAPES = {
    "mlp": (MLP_BATCH, MLP_INPUTS),
    "lenet": (LENET_BATCH, LENET_SIZE, LENET_SIZE, 1),
    "resnet": (RESNET_BATCH, RESNET_SIZE, RESNET_SIZE, 3),
    "lstm": (RNN_BATCH, RNN_STEPS, RNN_INPUTS),
}


def cases_per_workload(kind: str, make) -> dict:
    """`harness.Partner` cases ``"<kind> <workload>"``, one per workload, each
    ``make(workload, *args)``: a partner keeps one made case per key, so each workload needs
    its own."""
    return {f"{kind} {name}": functools.partial(make, name) for name in WORKLOADS}


def parameter_names(workload: str) -> list:
    return [name for name, _ in PARAMETERS[ARRAYS_OF.get(workload, workload)]]


def make_arrays(workload: str, seed: int = 0) -> dict:
    """The initial parameters and the batch of ``workload``, drawn here with numpy (seeded):
    Glorot-scaled normal weights, zero biases and batch-norm offsets, unit batch-norm scales;
    standard normal inputs, uniform labels."""
    key = ARRAYS_OF.get(workload, workload)
    rng = np.random.default_rng(seed)
    arrays = {}
    for name, shape in PARAMETERS[key]:
        if name.endswith("_gamma"):
            value = np.ones(shape)
        elif len(shape) == 1:
            value = np.zeros(shape)
        else:
            fan_in = int(np.prod(shape[:-1]))
            value = rng.normal(size=shape) * np.sqrt(2.0 / (fan_in + shape[-1]))
        arrays[name] = value.astype(np.float32)
    arrays["x"] = rng.normal(size=INPUT_SHAPES[key]).astype(np.float32)
    arrays["labels"] = rng.integers(0, CLASSES, INPUT_SHAPES[key][0]).astype(np.int32)
    return arrays


def write_arrays(workload: str, path: str) -> None:
    np.savez(path, **make_arrays(workload))


def read_arrays(path: str) -> dict:
    with np.load(path) as stored:
        return {name: stored[name] for name in stored.files}


# -- layouts of other frameworks ---------------------------------------------------------------
def lstm_ifgo(kernel: np.ndarray, bias: np.ndarray) -> tuple:
    """The LSTM's kernel and bias with the gates in (input, forget, new value, output) order,
    as PyTorch and Keras keep them, and `BasicLSTMCell`'s forget bias of 1.0 folded into the
    bias: the same cell, bit for bit up to summation order."""
    i, j, f, o = np.split(kernel, 4, axis=1)
    bi, bj, bf, bo = np.split(bias, 4)
    return (
        np.concatenate([i, f, j, o], axis=1),
        np.concatenate([bi, bf + 1.0, bj, bo]).astype(np.float32),
    )


def torch_fc1_rows(fc1: np.ndarray, height: int, width: int, channels: int) -> np.ndarray:
    """A dense weight that follows an NHWC flatten, reordered to follow an NCHW flatten."""
    outputs = fc1.shape[1]
    return np.ascontiguousarray(
        fc1.reshape(height, width, channels, outputs).transpose(2, 0, 1, 3).reshape(-1, outputs)
    )


# -- the GEMM floor ------------------------------------------------------------------------------
def _dense_gemms(batch: int, inputs: int, outputs: int, first: bool) -> list:
    """(M, K, N) of a dense layer's products: forward, the weights' gradient and, unless it
    is the first layer (whose input needs no gradient), the input's gradient."""
    gemms = [(batch, inputs, outputs), (inputs, batch, outputs)]
    return gemms if first else gemms + [(batch, outputs, inputs)]


def _conv_gemms(batch, size, kernel, cin, cout, stride, first) -> list:
    """A SAME convolution as its im2col GEMMs: patches ``[batch * out * out, k * k * cin]``
    times the filter ``[k * k * cin, cout]``, and the two gradients as products of the same
    shapes (the patch matrix's gather and scatter are not counted)."""
    out = -(-size // stride)
    return _dense_gemms(batch * out * out, kernel * kernel * cin, cout, first)


def gemms(workload: str) -> list:
    """The (M, K, N) of every matrix product one training step of ``workload`` must do."""
    key = ARRAYS_OF.get(workload, workload)
    if key == "mlp":
        b = MLP_BATCH
        return (
            _dense_gemms(b, MLP_INPUTS, MLP_HIDDEN, True)
            + _dense_gemms(b, MLP_HIDDEN, MLP_HIDDEN, False)
            + _dense_gemms(b, MLP_HIDDEN, CLASSES, False)
        )
    if key == "lenet":
        b = LENET_BATCH
        return (
            _conv_gemms(b, 28, 5, 1, 32, 1, True)
            + _conv_gemms(b, 14, 5, 32, 64, 1, False)
            + _dense_gemms(b, 7 * 7 * 64, 256, False)
            + _dense_gemms(b, 256, CLASSES, False)
        )
    if key == "resnet":
        b, size = RESNET_BATCH, RESNET_SIZE
        products = _conv_gemms(b, size, 3, 3, 16, 1, True)
        for cin, cout, stride in RESNET_BLOCKS:
            products += _conv_gemms(b, size, 3, cin, cout, stride, False)
            if stride != 1 or cin != cout:
                products += _conv_gemms(b, size, 1, cin, cout, stride, False)
            size = -(-size // stride)
            products += _conv_gemms(b, size, 3, cout, cout, 1, False)
        return products + _dense_gemms(b, RESNET_BLOCKS[-1][1], CLASSES, False)
    # The LSTM: per time step, the gates from [x, h] (forward), the kernel's gradient, and the
    # gradient of h (the inputs x need none); then the output layer.
    b, n, h = RNN_BATCH, RNN_INPUTS + RNN_HIDDEN, 4 * RNN_HIDDEN
    step = [(b, n, h), (n, b, h), (b, h, RNN_HIDDEN)]
    return step * RNN_STEPS + _dense_gemms(b, RNN_HIDDEN, CLASSES, False)


def gemm_floor_step(workload: str, blas_threads: int | None = None):
    """A function that does ``gemms(workload)`` with numpy (float32 operands made once, the
    products written into buffers made once): the time it takes is the floor.  With
    ``blas_threads``, BLAS is held to that many threads while it runs (threadpoolctl's
    `ThreadpoolController`, a few microseconds a call)."""
    rng = np.random.default_rng(0)
    operands = [
        (
            rng.standard_normal((m, k), np.float32),
            rng.standard_normal((k, n), np.float32),
            np.empty((m, n), np.float32),
        )
        for m, k, n in gemms(workload)
    ]

    def step():
        for a, b, out in operands:
            np.matmul(a, b, out=out)

    if blas_threads is None:
        return step
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()

    def limited_step():
        with controller.limit(limits=blas_threads, user_api="blas"):
            step()

    return limited_step

"""The workloads of `bench_training` as TensorFlow spells them: one definition, run by dataflow
and by TensorFlow.

``api`` is ``dataflow`` or ``tensorflow.compat.v1``: the same function builds the same model
in either, so the two sides run the same program.  Two ways to write a training step:

- `graph_training`: TensorFlow 1.x's way, a graph of placeholders, variables and
  ``AdamOptimizer.minimize`` run by a ``Session`` (TensorFlow: a default ``ConfigProto``, control
  flow v1, Grappler on, as its users run it);
- `function_training`: TensorFlow 2's way, variables in a ``Module``, a ``GradientTape`` and the
  optimizer's ``apply_gradients`` inside one traced function (``df.function`` / ``tf.function``).

The forward passes (`FORWARD`) take ``ops``, the namespace whose op functions they call
(``dataflow``, or ``tensorflow.compat.v1``, whose ops run in TF2's functions as well), the
parameters by name (`training_workloads.PARAMETERS`) and the input batch, and give the
logits.  The loss is the mean sparse softmax cross-entropy everywhere, the optimizer Adam at
`training_workloads.LEARNING_RATE`.
"""

from __future__ import annotations

import training_workloads as w


# -- the forward passes ------------------------------------------------------------------------
def mlp_logits(ops, p: dict, x):
    hidden = ops.nn.relu(ops.matmul(x, p["w1"]) + p["w1_b"])
    hidden = ops.nn.relu(ops.matmul(hidden, p["w2"]) + p["w2_b"])
    return ops.matmul(hidden, p["w3"]) + p["w3_b"]


def _conv(ops, x, filters, stride: int = 1):
    return ops.nn.conv2d(x, filters, [1, stride, stride, 1], "SAME")


def _pool(ops, x):
    return ops.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")


def lenet_logits(ops, p: dict, x):
    hidden = _pool(ops, ops.nn.relu(_conv(ops, x, p["conv1"]) + p["conv1_b"]))
    hidden = _pool(ops, ops.nn.relu(_conv(ops, hidden, p["conv2"]) + p["conv2_b"]))
    hidden = ops.reshape(hidden, [-1, 7 * 7 * 64])
    hidden = ops.nn.relu(ops.matmul(hidden, p["fc1"]) + p["fc1_b"])
    return ops.matmul(hidden, p["fc2"]) + p["fc2_b"]


def resnet_logits(ops, p: dict, x):
    """A stem, then residual blocks: conv, batch norm, ReLU, conv, batch norm, plus the
    block's input (through a strided 1x1 convolution where the shape changes), ReLU; a global
    average pool and a dense layer.  Batch norm is ``fused_batch_norm`` in training mode (the
    batch's statistics; no moving averages are kept, on any side)."""

    def norm(h, name):
        y, _, _ = ops.nn.fused_batch_norm(
            h, p[name + "_gamma"], p[name + "_beta"], epsilon=w.BN_EPSILON, is_training=True
        )
        return y

    hidden = ops.nn.relu(norm(_conv(ops, x, p["stem"]), "stem"))
    for k, (_, _, stride) in enumerate(w.RESNET_BLOCKS):
        name = f"block{k}"
        inner = ops.nn.relu(norm(_conv(ops, hidden, p[name + "_a"], stride), name + "_a"))
        inner = norm(_conv(ops, inner, p[name + "_b"]), name + "_b")
        skip = _conv(ops, hidden, p[name + "_skip"], stride) if name + "_skip" in p else hidden
        hidden = ops.nn.relu(inner + skip)
    pooled = ops.reduce_mean(hidden, axis=[1, 2])
    return ops.matmul(pooled, p["fc"]) + p["fc_b"]


def lstm_cell(ops, p: dict, x_t, h, c):
    """One step of `BasicLSTMCell` (gates i, j, f, o; forget bias 1.0), written out."""
    gates = ops.matmul(ops.concat([x_t, h], 1), p["kernel"]) + p["bias"]
    i, j, f, o = ops.split(gates, 4, axis=1)
    c = c * ops.sigmoid(f + 1.0) + ops.sigmoid(i) * ops.tanh(j)
    return ops.tanh(c) * ops.sigmoid(o), c


def while_rnn_logits(ops, p: dict, x):
    """The LSTM as a user writes it by hand: the inputs unstacked into a ``TensorArray``, a
    ``while_loop`` over the time steps carrying ``(t, h, c)``, the last ``h`` to a dense
    layer."""
    inputs = ops.TensorArray(ops.float32, size=w.RNN_STEPS).unstack(ops.transpose(x, [1, 0, 2]))
    zeros = ops.zeros([w.RNN_BATCH, w.RNN_HIDDEN], ops.float32)

    def body(t, h, c):
        h, c = lstm_cell(ops, p, inputs.read(t), h, c)
        return t + 1, h, c

    _, h, _ = ops.while_loop(lambda t, h, c: t < w.RNN_STEPS, body, [ops.constant(0), zeros, zeros])
    return ops.matmul(h, p["out"]) + p["out_b"]


def dynamic_rnn_logits(ops, p: dict, x):
    """The LSTM as TF1's users write it: a ``BasicLSTMCell`` run by ``dynamic_rnn``.  The cell
    makes its own kernel and bias; `graph_training` loads ``p``'s into them."""
    cell = ops.nn.rnn_cell.BasicLSTMCell(w.RNN_HIDDEN)
    _, state = ops.nn.dynamic_rnn(cell, x, dtype=ops.float32)
    return ops.matmul(state.h, p["out"]) + p["out_b"]


FORWARD = {
    "mlp": mlp_logits,
    "mlp-tf2": mlp_logits,
    "lenet": lenet_logits,
    "resnet": resnet_logits,
    "lstm": dynamic_rnn_logits,
    "rnn-while": while_rnn_logits,
}


def mean_cross_entropy(ops, labels, logits):
    return ops.reduce_mean(
        ops.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    )


# -- TensorFlow 1.x's way: a graph and a Session -----------------------------------------------
def graph_training(api, workload: str, arrays: dict, forward_only: bool = False):
    """``workload`` as a TF1 graph in a new Session of ``api`` (its default config), from
    ``arrays``: a function that runs one training step on the batch and returns the loss (or,
    ``forward_only``, one that returns the logits), and the Session."""
    graph = api.Graph()
    with graph.as_default():
        x = api.placeholder(api.float32, arrays["x"].shape, name="x")
        labels = api.placeholder(api.int32, arrays["labels"].shape, name="labels")
        p = {name: api.Variable(arrays[name], name=name) for name in w.parameter_names(workload)}
        logits = FORWARD[workload](api, p, x)
        loss = mean_cross_entropy(api, labels, logits)
        train = api.train.AdamOptimizer(w.LEARNING_RATE, epsilon=w.EPSILON).minimize(loss)
        init = api.global_variables_initializer()
        cell_variables = {
            v.name.split("/")[-1].split(":")[0]: v
            for v in api.trainable_variables()
            if "basic_lstm_cell" in v.name
        }
    session = api.Session(graph=graph)
    session.run(init)
    for name, variable in cell_variables.items():  # dynamic_rnn's cell: the shared weights
        variable.load(arrays[name], session)
    if forward_only:
        feed = {x: arrays["x"]}
        return (lambda: session.run(logits, feed)), session
    feed = {x: arrays["x"], labels: arrays["labels"]}
    return (lambda: float(session.run([loss, train], feed)[0])), session


# -- TensorFlow 2's way: a Module, a tape, a traced function -----------------------------------
def function_training(api, ops, optimizer, workload: str, arrays: dict, layer=None):
    """``workload`` written the TF2 way with ``api`` (``dataflow`` or ``tensorflow``): the
    parameters as variables of a ``Module``, the step a ``GradientTape`` and ``optimizer``'s
    ``apply_gradients`` inside ``api.function``.  ``ops`` is the namespace the forward pass
    calls.  ``layer``, when given, is ``(forward, variables, names)``: a forward pass of its
    own that uses a framework's layer, the layer's variables, and the names of the parameters
    the Module still holds.  Returns a function that runs one step (eagerly, as TF2 runs) and
    returns the loss."""
    forward, more, names = layer or (FORWARD[workload], (), w.parameter_names(workload))

    class Parameters(api.Module):
        def __init__(self):
            super().__init__(name=workload.replace("-", "_"))
            self.by_name = {name: api.Variable(arrays[name], name=name) for name in names}

    model = Parameters()
    variables = list(model.trainable_variables) + list(more)
    x, labels = api.constant(arrays["x"]), api.constant(arrays["labels"])

    @api.function
    def train_step(x, labels):
        with api.GradientTape() as tape:
            loss = mean_cross_entropy(ops, labels, forward(ops, model.by_name, x))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    return lambda: float(train_step(x, labels))

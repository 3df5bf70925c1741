"""Programs that several benchmarks build, written once against an ``api`` module.

``api`` is ``dataflow`` or TensorFlow's ``tf.compat.v1``: the same code builds the same graph
in either, so a figure beside TensorFlow's measures the runtimes, not two versions of a model.
Nothing here imports either (a script may run in a Python that has only one of them).
"""

from __future__ import annotations


def digits_mlp(api, setter=None):
    """The digits MLP (64 inputs, 64 hidden ReLU units, 10 classes; softmax cross-entropy, one
    gradient-descent step that also counts the global step) in the default graph, under
    ``setter`` (a device function) if given.  Returns ``(x, y, train, loss, accuracy,
    gradients)``."""
    with api.device(setter):
        step = api.train.get_or_create_global_step()
        x = api.placeholder(api.float32, [None, 64], name="x")
        y = api.placeholder(api.int32, [None], name="y")
        init = api.glorot_uniform_initializer(seed=1)
        w1 = api.get_variable("w1", [64, 64], initializer=init)
        b1 = api.get_variable("b1", [64], initializer=api.zeros_initializer())
        w2 = api.get_variable("w2", [64, 10], initializer=init)
        b2 = api.get_variable("b2", [10], initializer=api.zeros_initializer())
        logits = api.matmul(api.nn.relu(api.matmul(x, w1) + b1), w2) + b2
        loss = api.reduce_mean(
            api.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        optimizer = api.train.GradientDescentOptimizer(0.2)
        grads_and_vars = optimizer.compute_gradients(loss)
        train = optimizer.apply_gradients(grads_and_vars, global_step=step)
        correct = api.equal(api.argmax(logits, 1, output_type=api.int32), y)
        accuracy = api.reduce_mean(api.cast(correct, api.float32))
    return x, y, train, loss, accuracy, [g for g, _ in grads_and_vars]

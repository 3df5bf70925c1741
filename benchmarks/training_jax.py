"""The workloads of `bench_training` in JAX, as its users write them: pure functions of a
dictionary of parameters, ``jax.value_and_grad``, an ``optax.adam`` update, the whole step
under one ``jax.jit`` (parameters and optimizer state in, new ones out).

Layouts are TensorFlow's (NHWC images, HWIO filters, SAME padding as TensorFlow pads), so the
weights of `bench_training`'s file are used as they are; both LSTMs are one ``lax.scan`` of
`BasicLSTMCell`'s step (a compiler makes the same loop of either).  Batch norm uses the
batch's statistics (biased variance), as ``fused_batch_norm`` in training mode.  JAX keeps its
default threads.  Needs ``optax`` beside ``jax``.
"""

from __future__ import annotations

import os

import training_workloads as w


def try_import_jax():
    try:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import optax  # noqa: F401 - the optimizer the steps use

        return jax
    except Exception:  # not installed, or unusable here
        return None


def _forwards(jax):
    jnp, lax = jax.numpy, jax.lax

    def conv(x, filters, stride=1):
        return lax.conv_general_dilated(
            x, filters, (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def mlp(p, x):
        hidden = jax.nn.relu(x @ p["w1"] + p["w1_b"])
        hidden = jax.nn.relu(hidden @ p["w2"] + p["w2_b"])
        return hidden @ p["w3"] + p["w3_b"]

    def lenet(p, x):
        hidden = pool(jax.nn.relu(conv(x, p["conv1"]) + p["conv1_b"]))
        hidden = pool(jax.nn.relu(conv(hidden, p["conv2"]) + p["conv2_b"]))
        hidden = jax.nn.relu(hidden.reshape(hidden.shape[0], -1) @ p["fc1"] + p["fc1_b"])
        return hidden @ p["fc2"] + p["fc2_b"]

    def norm(p, h, name):
        mean = h.mean(axis=(0, 1, 2))
        variance = ((h - mean) ** 2).mean(axis=(0, 1, 2))
        scale = p[name + "_gamma"] * lax.rsqrt(variance + w.BN_EPSILON)
        return (h - mean) * scale + p[name + "_beta"]

    def resnet(p, x):
        hidden = jax.nn.relu(norm(p, conv(x, p["stem"]), "stem"))
        for k, (_, _, stride) in enumerate(w.RESNET_BLOCKS):
            name = f"block{k}"
            inner = jax.nn.relu(norm(p, conv(hidden, p[name + "_a"], stride), name + "_a"))
            inner = norm(p, conv(inner, p[name + "_b"]), name + "_b")
            skip = conv(hidden, p[name + "_skip"], stride) if name + "_skip" in p else hidden
            hidden = jax.nn.relu(inner + skip)
        return hidden.mean(axis=(1, 2)) @ p["fc"] + p["fc_b"]

    def lstm(p, x):
        def cell(carry, x_t):
            h, c = carry
            gates = jnp.concatenate([x_t, h], axis=1) @ p["kernel"] + p["bias"]
            i, j, f, o = jnp.split(gates, 4, axis=1)
            c = c * jax.nn.sigmoid(f + 1.0) + jax.nn.sigmoid(i) * jnp.tanh(j)
            return (jnp.tanh(c) * jax.nn.sigmoid(o), c), None

        zeros = jnp.zeros((x.shape[0], w.RNN_HIDDEN), x.dtype)
        (h, _), _ = lax.scan(cell, (zeros, zeros), jnp.swapaxes(x, 0, 1))
        return h @ p["out"] + p["out_b"]

    return {
        "mlp": mlp,
        "mlp-tf2": mlp,
        "lenet": lenet,
        "resnet": resnet,
        "lstm": lstm,
        "rnn-while": lstm,
    }


def jax_cases(jax) -> dict:
    """`harness.Partner`'s cases: ``jit <workload>`` makes a training step of the workload
    from a file of arrays; ``losses`` gives the losses of the first steps of a new model."""
    import optax

    jnp = jax.numpy
    forwards = _forwards(jax)

    def make(workload: str, path: str):
        arrays = w.read_arrays(path)
        forward = forwards[workload]
        params = {name: jnp.asarray(arrays[name]) for name in w.parameter_names(workload)}
        x, labels = jnp.asarray(arrays["x"]), jnp.asarray(arrays["labels"])
        optimizer = optax.adam(w.LEARNING_RATE, eps=w.EPSILON)
        state = {"params": params, "opt": optimizer.init(params)}

        def loss_of(params, x, labels):
            logits = forward(params, x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()

        @jax.jit
        def train_step(params, opt_state, x, labels):
            loss, grads = jax.value_and_grad(loss_of)(params, x, labels)
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss

        def step():
            state["params"], state["opt"], loss = train_step(
                state["params"], state["opt"], x, labels
            )
            return float(loss)

        return step

    def losses(workload: str, path: str, steps: int):
        step = make(workload, path)
        return [step() for _ in range(steps)]

    return {**w.cases_per_workload("jit", make), "losses": losses}

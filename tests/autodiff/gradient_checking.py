"""Helpers of the gradient tests: compare `df.gradients` with central finite differences, in
float64, and count the runs of a gradient (`define_counted_identity`).

``check_gradients(make, inputs)`` builds ``y = make(*placeholders)`` for the arrays in
``inputs``, takes ``loss = sum(y * weights)`` with fixed random weights (so that every element
of ``y`` gets a different incoming gradient), and compares ``df.gradients(loss, placeholders)``
with ``(loss(x + eps) - loss(x - eps)) / (2 eps)`` element by element.
"""

from __future__ import annotations

import numpy as np

import dataflow as df
from dataflow.framework.op_registry import apply_op, define_op


def numeric_gradient(run_loss, values: list, eps: float = 1e-6) -> list:
    grads = []
    for i, value in enumerate(values):
        grad = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            shifted = [v.copy() for v in values]
            shifted[i][index] = value[index] + eps
            up = run_loss(shifted)
            shifted[i][index] = value[index] - eps
            down = run_loss(shifted)
            grad[index] = (up - down) / (2 * eps)
        grads.append(grad)
    return grads


def check_gradients(make, inputs, feeds=None, rtol=1e-5, atol=1e-6, seed=0):
    """Builds ``make(*placeholders)`` and asserts that the symbolic gradient of a weighted sum
    of its result matches central differences for every input.  ``feeds`` maps extra
    placeholders that ``make`` closes over to values.  Returns the symbolic gradients."""
    values = [np.asarray(v, dtype=np.float64) for v in inputs]
    graph = df.Graph()
    with graph.as_default():
        placeholders = [
            df.placeholder(df.float64, v.shape, name=f"x{i}") for i, v in enumerate(values)
        ]
        y = make(*placeholders)
        weights = df.placeholder(df.float64, name="weights")
        loss = df.reduce_sum(y * weights)
        grads = df.gradients(loss, placeholders)
        extra = dict(feeds(graph) if callable(feeds) else (feeds or {}))
        with df.Session() as session:

            def feed(vals, w=None):
                d = dict(zip(placeholders, vals), **extra)
                if w is not None:
                    d[weights] = w
                return d

            y_value = session.run(y, feed(values))
            w_value = np.random.default_rng(seed).uniform(0.5, 1.5, np.shape(y_value))

            def run_loss(vals):
                return session.run(loss, feed(vals, w_value))

            # A sparse gradient (IndexedSlices) is compared as the dense tensor it stands for.
            fetch = [
                y
                if g is None
                else df.convert_to_tensor(g)
                if isinstance(g, df.IndexedSlices)
                else g
                for g in grads
            ]
            symbolic = session.run(fetch, feed(values, w_value))
            symbolic = [s if g is not None else None for s, g in zip(symbolic, grads)]
            numeric = numeric_gradient(run_loss, values)
    for i, (s, n) in enumerate(zip(symbolic, numeric)):
        if s is None:
            np.testing.assert_allclose(n, 0, atol=atol, err_msg=f"input {i} has no gradient")
            continue
        assert np.shape(s) == np.shape(n), f"input {i}: gradient shape {np.shape(s)} != {n.shape}"
        np.testing.assert_allclose(s, n, rtol=rtol, atol=atol, err_msg=f"input {i}")
    return symbolic


def define_counted_identity(calls: list):
    """Defines ``CountedIdentityForTest``, an identity op whose gradient appends its ``tag``
    attribute to ``calls`` each time the gradient runs, and returns ``counted(tag, t)``, which
    applies it to ``t``.  (The autodiff conftest forgets op types a test defines.)"""
    define_op(
        "CountedIdentityForTest",
        lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
        lambda attrs: lambda x: x,
    )

    @df.RegisterGradient("CountedIdentityForTest")
    def _counted_grad(op, grad):
        tag = op.attrs["tag"]

        def count(value):
            calls.append(tag)
            return value

        out = df.py_func(count, [grad], df.float64)
        out.set_shape(grad.shape)
        return out

    return lambda tag, t: apply_op("CountedIdentityForTest", [t], {"tag": tag}).outputs[0]

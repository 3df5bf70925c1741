"""ONNX's recurrent layers, ``RNN``, ``GRU`` and ``LSTM``, unrolled over their time steps.

Role: the converters of the recurrent family (see `converters` for the contract).  Each layer
is the cell's equations of ONNX's definition applied step by step from dataflow's matmul and
elementwise ops, in each direction asked for (forward, reverse, bidirectional), with the
optional per-sequence lengths (steps past a sequence's end leave its state alone and output
zeros), initial states, peepholes, cell clipping and the named activations.

Invariants: the number of time steps must be known at import (the steps are unrolled); the
weights ``W [dirs, gates * hidden, input]``, ``R [dirs, gates * hidden, hidden]`` and
``B [dirs, 2 * gates * hidden]`` are split into gates in ONNX's order (LSTM ``i o f c``,
GRU ``z r h``); ``layout=1`` (batch first) is transposed in and out.
"""

from __future__ import annotations

from ...framework import dtypes
from ...ops import array_ops, math_ops, nn_ops, selection_ops
from ...ops.constant_op import constant
from ...ops.reverse_ops import reverse_sequence, reverse_v2
from .converters import NodeContext, converts

MAX_UNROLLED_STEPS = 4096


def _activation(ctx: NodeContext, name: str, alpha, beta):
    """ONNX's activation ``name`` (with its alpha/beta where it has them) as a function."""

    def scalar(value, like):
        return constant(value, dtype=like.dtype)

    if name == "Tanh":
        return math_ops.tanh
    if name == "Sigmoid":
        return math_ops.sigmoid
    if name == "Relu":
        return nn_ops.relu
    if name == "Softplus":
        return nn_ops.softplus
    if name == "Softsign":
        return lambda x: math_ops.truediv(x, math_ops.add(math_ops.abs(x), scalar(1.0, x)))
    if name == "HardSigmoid":
        a, b = 0.2 if alpha is None else alpha, 0.5 if beta is None else beta
        return lambda x: math_ops.minimum(
            math_ops.maximum(
                math_ops.add(math_ops.multiply(x, scalar(a, x)), scalar(b, x)), scalar(0.0, x)
            ),
            scalar(1.0, x),
        )
    if name == "LeakyRelu":
        a = 0.01 if alpha is None else alpha
        return lambda x: math_ops.maximum(x, math_ops.multiply(x, scalar(a, x)))
    if name == "Affine":
        a, b = 1.0 if alpha is None else alpha, 0.0 if beta is None else beta
        return lambda x: math_ops.add(math_ops.multiply(x, scalar(a, x)), scalar(b, x))
    if name == "ScaledTanh":
        a, b = 1.0 if alpha is None else alpha, 1.0 if beta is None else beta
        return lambda x: math_ops.multiply(
            scalar(a, x), math_ops.tanh(math_ops.multiply(x, scalar(b, x)))
        )
    raise ctx.error(f"activation {name!r} is not supported")


def _activations(ctx: NodeContext, defaults: list, directions: int) -> list:
    """Per direction, the list of the cell's activation functions."""
    names = ctx.attr("activations", defaults * directions)
    alphas = ctx.attr("activation_alpha", [])
    betas = ctx.attr("activation_beta", [])
    count = len(defaults)
    if len(names) != count * directions:
        raise ctx.error(f"activations names {len(names)} functions, {count * directions} expected")
    functions = [
        _activation(
            ctx,
            name,
            alphas[i] if i < len(alphas) else None,
            betas[i] if i < len(betas) else None,
        )
        for i, name in enumerate(names)
    ]
    return [functions[d * count : (d + 1) * count] for d in range(directions)]


def _run(ctx: NodeContext, gates: int, cell, defaults: list):
    """The common part of the three layers: inputs, directions, the unrolled steps, outputs.
    ``cell(x_t, h, c, weights, functions)`` returns the new ``(h, c)``."""
    x = ctx.required_input(0)
    layout = ctx.attr("layout", 0)
    if layout:
        x = array_ops.transpose(x, [1, 0, 2])
    steps = x.shape.as_list()[0]
    if steps is None:
        raise ctx.error("the number of time steps must be known at import")
    if steps > MAX_UNROLLED_STEPS:
        raise ctx.error(f"{steps} time steps, more than {MAX_UNROLLED_STEPS} are unrolled")
    hidden = ctx.attr("hidden_size")
    direction = ctx.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ctx.error(f"direction {direction!r} is not forward, reverse or bidirectional")
    directions = 2 if direction == "bidirectional" else 1
    functions = _activations(ctx, defaults, directions)
    w, r, b = ctx.required_input(1), ctx.required_input(2), ctx.input(3)
    lengths = ctx.input(4)
    initial_h = ctx.input(5)
    initial_c = ctx.input(6) if ctx.op_type == "LSTM" else None
    peepholes = ctx.input(7) if ctx.op_type == "LSTM" else None
    if layout and initial_h is not None:
        initial_h = array_ops.transpose(initial_h, [1, 0, 2])
    if layout and initial_c is not None:
        initial_c = array_ops.transpose(initial_c, [1, 0, 2])
    batch = array_ops.shape(x)[1]
    zeros = array_ops.fill(array_ops.stack([batch, hidden]), constant(0, dtype=x.dtype))
    if lengths is not None:
        lengths = selection_ops.cast(lengths, dtypes.int64)
    outputs, last_h, last_c = [], [], []
    for d in range(directions):
        reverse = direction == "reverse" or d == 1
        weights = {
            "w": array_ops.split(w[d], gates, axis=0),
            "r": array_ops.split(r[d], gates, axis=0),
            "wb": array_ops.split(b[d][: gates * hidden], gates) if b is not None else None,
            "rb": array_ops.split(b[d][gates * hidden :], gates) if b is not None else None,
            "p": array_ops.split(peepholes[d], 3) if peepholes is not None else None,
        }
        sequence = x
        if reverse:
            sequence = (
                reverse_v2(sequence, [0])
                if lengths is None
                else reverse_sequence(sequence, lengths, seq_axis=0, batch_axis=1)
            )
        h = initial_h[d] if initial_h is not None else zeros
        c = initial_c[d] if initial_c is not None else zeros
        per_step = []
        for t in range(steps):
            new_h, new_c = cell(sequence[t], h, c, weights, functions[d])
            if lengths is not None:
                running = array_ops.expand_dims(
                    math_ops.less(constant(t, dtype=dtypes.int64), lengths), 1
                )
                new_h = selection_ops.where_v2(running, new_h, h)
                new_c = selection_ops.where_v2(running, new_c, c) if new_c is not None else None
                per_step.append(selection_ops.where_v2(running, new_h, array_ops.zeros_like(h)))
            else:
                per_step.append(new_h)
            h, c = new_h, new_c
        y = array_ops.stack(per_step, axis=0)
        if reverse:
            y = (
                reverse_v2(y, [0])
                if lengths is None
                else reverse_sequence(y, lengths, seq_axis=0, batch_axis=1)
            )
        outputs.append(y)
        last_h.append(h)
        last_c.append(c)
    y = array_ops.stack(outputs, axis=1)  # [steps, dirs, batch, hidden]
    y_h = array_ops.stack(last_h, axis=0)
    y_c = array_ops.stack(last_c, axis=0) if ctx.op_type == "LSTM" else None
    if layout:
        y = array_ops.transpose(y, [2, 0, 1, 3])
        y_h = array_ops.transpose(y_h, [1, 0, 2])
        y_c = array_ops.transpose(y_c, [1, 0, 2]) if y_c is not None else None
    return [y, y_h, y_c]


def _affine(x_t, h, weights, gate: int):
    """``x_t W_g^T + h R_g^T + Wb_g + Rb_g`` of gate ``gate``."""
    total = math_ops.add(
        math_ops.matmul(x_t, weights["w"][gate], transpose_b=True),
        math_ops.matmul(h, weights["r"][gate], transpose_b=True),
    )
    if weights["wb"] is not None:
        total = math_ops.add(total, math_ops.add(weights["wb"][gate], weights["rb"][gate]))
    return total


@converts("RNN")
def _rnn(ctx: NodeContext):
    def cell(x_t, h, c, weights, functions):
        return functions[0](_affine(x_t, h, weights, 0)), None

    return _run(ctx, 1, cell, ["Tanh"])


@converts("GRU")
def _gru(ctx: NodeContext):
    linear_before_reset = ctx.attr("linear_before_reset", 0)

    def cell(x_t, h, c, weights, functions):
        f, g = functions
        z = f(_affine(x_t, h, weights, 0))
        reset = f(_affine(x_t, h, weights, 1))
        projected = math_ops.matmul(x_t, weights["w"][2], transpose_b=True)
        if weights["wb"] is not None:
            projected = math_ops.add(projected, weights["wb"][2])
        if linear_before_reset:
            recurrent = math_ops.matmul(h, weights["r"][2], transpose_b=True)
            if weights["rb"] is not None:
                recurrent = math_ops.add(recurrent, weights["rb"][2])
            candidate = g(math_ops.add(projected, math_ops.multiply(reset, recurrent)))
        else:
            recurrent = math_ops.matmul(
                math_ops.multiply(reset, h), weights["r"][2], transpose_b=True
            )
            if weights["rb"] is not None:
                recurrent = math_ops.add(recurrent, weights["rb"][2])
            candidate = g(math_ops.add(projected, recurrent))
        one = constant(1, dtype=z.dtype)
        return math_ops.add(
            math_ops.multiply(math_ops.subtract(one, z), candidate), math_ops.multiply(z, h)
        ), None

    return _run(ctx, 3, cell, ["Sigmoid", "Tanh"])


@converts("LSTM")
def _lstm(ctx: NodeContext):
    clip = ctx.attr("clip", None)
    couple = ctx.attr("input_forget", 0)

    def clipped(value):
        if clip is None:
            return value
        bound = constant(clip, dtype=value.dtype)
        return math_ops.minimum(math_ops.maximum(value, math_ops.negative(bound)), bound)

    def cell(x_t, h, c, weights, functions):
        f, g, h_function = functions
        peep = weights["p"]
        i_pre = _affine(x_t, h, weights, 0)
        f_pre = _affine(x_t, h, weights, 2)
        if peep is not None:
            i_pre = math_ops.add(i_pre, math_ops.multiply(peep[0], c))
            f_pre = math_ops.add(f_pre, math_ops.multiply(peep[2], c))
        i = f(clipped(i_pre))
        forget = f(clipped(f_pre))
        if couple:
            forget = math_ops.subtract(constant(1, dtype=i.dtype), i)
        candidate = g(clipped(_affine(x_t, h, weights, 3)))
        new_c = math_ops.add(math_ops.multiply(forget, c), math_ops.multiply(i, candidate))
        o_pre = _affine(x_t, h, weights, 1)
        if peep is not None:
            o_pre = math_ops.add(o_pre, math_ops.multiply(peep[1], new_c))
        o = f(clipped(o_pre))
        return math_ops.multiply(o, h_function(new_c)), new_c

    return _run(ctx, 4, cell, ["Sigmoid", "Tanh", "Tanh"])

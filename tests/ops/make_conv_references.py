"""Prints the TensorFlow 1.x reference figures that ``test_conv_ops.py`` pins (CONV_CASES).

Run with a Python that has TensorFlow (never imported by the suite)::

    python tests/ops/make_conv_references.py > /tmp/references.txt

Each case builds one op on float64 inputs made by ``pattern`` in TF 1.x graph mode (control
flow v1), takes ``loss = sum(y * pattern(y.shape, 0.7))`` and prints the output shape, the
sums ``sum(y)`` and ``sum(y * pattern(y.shape, 0.7))`` and, for every differentiable input,
``sum(d loss / d input * pattern(input.shape, 0.3))`` (None where TensorFlow has no gradient
or no CPU kernel for it): a few numbers that change when any element of the output or of a
gradient does.
"""

import numpy as np
import tensorflow.compat.v1 as tf
from conv_cases import CASES, FLOAT32_KINDS, pattern

tf.disable_v2_behavior()
tf.disable_control_flow_v2()


def build(kind, inputs, kwargs):
    nn = tf.nn
    if kind == "conv2d":
        dilations = kwargs["dilations"][1:3]
        if dilations != [1, 1] and kwargs["strides"] == [1, 1, 1, 1]:
            # TensorFlow's CPU kernels have no dilated convolution gradient; its generic
            # convolution (space to batch around an undilated one) computes the same values.
            return nn.convolution(inputs[0], inputs[1], kwargs["padding"], dilation_rate=dilations)
        return nn.conv2d(inputs[0], inputs[1], **kwargs)
    if kind == "conv2d_transpose":
        return nn.conv2d_transpose(inputs[0], inputs[1], **kwargs)
    if kind == "depthwise_conv2d":
        return nn.depthwise_conv2d(inputs[0], inputs[1], **kwargs)
    if kind == "separable_conv2d":
        return nn.separable_conv2d(*inputs, **kwargs)
    if kind == "conv1d":
        return nn.conv1d(inputs[0], inputs[1], **kwargs)
    if kind == "atrous_conv2d":
        return nn.atrous_conv2d(inputs[0], inputs[1], **kwargs)
    if kind == "max_pool":
        return nn.max_pool(inputs[0], **kwargs)
    if kind == "avg_pool":
        return nn.avg_pool(inputs[0], **kwargs)
    if kind == "lrn":
        return nn.local_response_normalization(inputs[0], **kwargs)
    if kind == "fused_batch_norm":
        return nn.fused_batch_norm(*inputs, **kwargs)[0]
    raise ValueError(kind)


def main():
    for name, kind, shapes, kwargs in CASES:
        graph = tf.Graph()
        with graph.as_default():
            values = [pattern(shape, 0.1 + i) for i, shape in enumerate(shapes)]
            if kind == "max_pool":  # ties: values on a coarse grid
                values = [np.round(v * 2) for v in values]
            if kind == "fused_batch_norm" and len(values) == 5:
                values[4] = np.abs(values[4]) + 0.5  # a variance
            if kind in FLOAT32_KINDS:
                values = [v.astype(np.float32) for v in values]
            inputs = [tf.constant(v) for v in values]
            y = build(kind, inputs, kwargs)
            weights = pattern(y.shape.as_list(), 0.7).astype(values[0].dtype)
            loss = tf.reduce_sum(y * weights)
            grads = tf.gradients(loss, inputs)
            with tf.Session() as sess:
                present = [g for g in grads if g is not None]
                try:
                    y_value, present_values = sess.run([y, present])
                    present_values = iter(present_values)
                    grad_values = [None if g is None else next(present_values) for g in grads]
                except tf.errors.InvalidArgumentError:  # no CPU gradient kernel (dilated, strided)
                    y_value, grad_values = sess.run(y), [None] * len(inputs)
        y_value = y_value.astype(np.float64)
        figures = [float(np.sum(y_value)), float(np.sum(y_value * weights))]
        for grad, shape in zip(grad_values, shapes):
            figures.append(
                None
                if grad is None
                else float(np.sum(grad.astype(np.float64) * pattern(shape, 0.3)))
            )
        print(f"    {name!r}: ({list(y_value.shape)}, {figures!r}),")


if __name__ == "__main__":
    main()

"""Gradients through TensorArrays, TF1's scheme: a gradient array per forward array and per
`gradients` call; writes differentiate into reads of it and reads into writes, also inside the
backward loop of a while_loop."""

from __future__ import annotations

import numpy as np
import pytest
from gradient_checking import check_gradients

import dataflow as df


def _run(fetches, feed_dict=None):
    with df.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_writes_then_stack_match_tf1():
    x = df.constant([1.0, 2.0])
    y = df.constant([3.0, 4.0])
    ta = df.TensorArray(df.float32, size=2).write(0, x).write(1, y * y)
    loss = df.reduce_sum(ta.stack() * df.constant([[1.0, 2.0], [3.0, 4.0]]))
    gx, gy = df.gradients(loss, [x, y])
    assert gx.shape == df.TensorShape([2])
    assert gx.op.type == "TensorArrayReadV3" and gx.op.name.startswith("gradients/")
    # tf.compat.v1 (TF 2.21, control flow v1), the same program: [1, 2] and [18, 32].
    got_x, got_y = _run([gx, gy])
    np.testing.assert_allclose(got_x, [1.0, 2.0])
    np.testing.assert_allclose(got_y, [18.0, 32.0])


def test_an_element_never_read_gets_a_zero_gradient():
    x = df.constant([1.0, 2.0])
    y = df.constant([3.0, 4.0])
    read = df.TensorArray(df.float32, size=3).unstack(df.stack([x, y, x])).read(1)
    # tf.compat.v1: [0, 0] and [6, 8].
    got_x, got_y = _run(df.gradients(read * read, [x, y]))
    np.testing.assert_allclose(got_x, [0.0, 0.0])
    np.testing.assert_allclose(got_y, [6.0, 8.0])


def test_unstack_read_write_stack_gradients_are_numerically_right():
    def make(x, w):
        source = df.TensorArray(df.float64, size=3).unstack(x)
        out = df.TensorArray(df.float64, size=3)
        for i in range(3):
            out = out.write(2 - i, df.tanh(source.read(i) * w))
        return out.stack()

    check_gradients(make, [np.linspace(-1, 1, 6).reshape(3, 2), [0.5, -1.5]])


def test_gather_scatter_split_and_concat_gradients_are_numerically_right():
    def make(x):
        scattered = df.TensorArray(df.float64, size=4).scatter([3, 0, 2], x * x)
        gathered = scattered.gather([0, 3, 1, 2])
        split = df.TensorArray(df.float64, size=2, infer_shape=False).split(
            df.reshape(gathered, [-1]), [3, 5]
        )
        return split.concat() * df.constant(np.arange(8.0))

    check_gradients(make, [np.linspace(-1, 2, 6).reshape(3, 2)])


def _rnn(x, w, parallel_iterations=10):
    """A tanh RNN over the time-major ``x``, written as dynamic_rnn writes it: the inputs in
    an array read in the loop, the outputs written to an array that is a loop variable."""
    steps = x.shape[0]
    inputs = df.TensorArray(x.dtype, size=steps).unstack(x)
    outputs = df.TensorArray(x.dtype, size=steps)

    def body(t, h, outputs):
        h = df.tanh(df.matmul(df.concat([inputs.read(t), h], 1), w))
        return t + 1, h, outputs.write(t, h)

    h0 = df.zeros([x.shape[1], w.shape[1]], x.dtype)
    _, last, outputs = df.while_loop(
        lambda t, h, o: t < steps, body, [0, h0, outputs], parallel_iterations=parallel_iterations
    )
    return outputs.stack(), last


def test_gradients_flow_through_a_loop_that_reads_and_writes_arrays_as_in_tf1():
    x = df.constant(np.linspace(-1, 1, 6).reshape(3, 1, 2).astype(np.float32))
    w = df.constant(np.linspace(-0.5, 0.7, 8).reshape(4, 2).astype(np.float32))
    # tf.compat.v1 (TF 2.21, control flow v1), the same loop and loss.
    tf_loss = 0.8345024585723877
    tf_gx = [
        [[-1.41367006, -0.18305469]],
        [[-1.14761126, -0.15214121]],
        [[-0.78569418, -0.08345285]],
    ]
    tf_gw = [
        [-1.19832075, -1.74274254],
        [0.06322473, 0.41209304],
        [0.81206429, 1.38990057],
        [0.64063692, 1.16472423],
    ]
    for parallel in (1, 10):
        outputs, last = _rnn(x, w, parallel_iterations=parallel)
        loss = df.reduce_sum(outputs * outputs) + df.reduce_sum(last)
        got = _run([loss] + df.gradients(loss, [x, w]))
        np.testing.assert_allclose(got[0], tf_loss, rtol=1e-5)
        np.testing.assert_allclose(got[1], tf_gx, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[2], tf_gw, rtol=1e-5, atol=1e-6)


def test_loop_gradients_through_arrays_are_numerically_right():
    def make(x, w):
        outputs, last = _rnn(x, w)
        return df.concat([df.reshape(outputs, [-1]), df.reshape(last, [-1])], 0)

    check_gradients(
        make, [np.linspace(-1, 1, 12).reshape(3, 2, 2), np.linspace(-1, 1, 8).reshape(4, 2) * 0.5]
    )


def test_gradients_through_a_cond_that_writes_an_array():
    def make(x):
        pred = df.placeholder(df.bool, [], name="pred")
        ta = df.TensorArray(df.float64, size=2).write(0, x)
        ta = df.cond(pred, lambda: ta.write(1, x * x), lambda: ta.write(1, -x))
        return ta.stack()

    for taken in (True, False):
        check_gradients(make, [[0.5, -2.0]], feeds={"pred:0": taken})


def test_two_gradient_calls_use_two_gradient_arrays():
    x = df.constant([1.0, 2.0])
    ta = df.TensorArray(df.float32, size=1).write(0, x * 3.0)
    stacked = ta.stack()
    (first,) = df.gradients(stacked, [x])
    (second,) = df.gradients(stacked * 2.0, [x])
    got_first, got_second = _run([first, second])
    np.testing.assert_allclose(got_first, [3.0, 3.0])
    np.testing.assert_allclose(got_second, [6.0, 6.0])
    sources = {
        op.attrs["source"]
        for op in df.get_default_graph().get_operations()
        if op.type == "TensorArrayGradV3"
    }
    assert sources == {"gradients", "gradients_1"}


def test_a_gradient_array_adds_up_multiple_writes_to_one_index():
    x = df.constant([1.0, 2.0])
    ta = df.TensorArray(df.float32, size=1, clear_after_read=False).write(0, x)
    loss = df.reduce_sum(ta.read(0) * 2.0) + df.reduce_sum(ta.read(0) * 5.0)
    np.testing.assert_allclose(_run(df.gradients(loss, [x])[0]), [7.0, 7.0])


def test_the_source_of_a_gradient_array_must_name_a_gradients_scope():
    ta = df.TensorArray(df.float32, size=1).write(0, [1.0])
    read_grad = df.get_default_graph().get_operation_by_name("TensorArrayWrite/TensorArrayWriteV3")
    with pytest.raises(ValueError, match="Expected op/tensor name to start with gradients"):
        read_grad.op_def.gradient(read_grad, df.constant(0.0, name="not_a_gradient"))
    assert ta.flow is not None


# -- the functional ops built on TensorArrays ------------------------------------------------------
ROWS = np.linspace(-1.0, 1.5, 8).reshape(4, 2)


def test_map_fn_gradients_are_numerically_right():
    check_gradients(lambda x, w: df.map_fn(lambda r: df.tanh(r * w), x), [ROWS, [0.5, -2.0]])


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_gradients_are_numerically_right(reverse):
    def make(x, w):
        products = df.scan(lambda a, e: df.tanh(a * w + e), x, reverse=reverse)
        sums = df.scan(lambda a, e: a + e * e, x, initializer=w, reverse=reverse)
        return products + sums

    check_gradients(make, [ROWS, [0.5, -2.0]])


def test_fold_gradients_are_numerically_right():
    def make(x, w):
        left = df.foldl(lambda a, e: df.sin(a * e), x, initializer=w)
        right = df.foldr(lambda a, e: a * e + w, x)
        return left + right

    check_gradients(make, [ROWS, [0.5, -2.0]])


def test_map_fn_without_back_prop_passes_no_gradient():
    x = df.constant(ROWS)
    assert df.gradients(df.map_fn(lambda r: r * r, x, back_prop=False), [x]) == [None]


def test_dynamic_rnn_gradients_are_numerically_right():
    from gradient_checking import numeric_gradient

    def initializer(shape, dtype=None, partition_info=None):
        n = int(np.prod(shape))
        return df.constant(np.linspace(-0.5, 0.5, n).reshape(shape), dtype=df.float64)

    inputs = np.linspace(-1, 1, 18).reshape(2, 3, 3)
    x = df.placeholder(df.float64, [2, 3, 3])
    with df.variable_scope("", initializer=initializer):
        cell = df.nn.rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2)
        outputs, state = df.nn.dynamic_rnn(cell, x, sequence_length=[3, 2], dtype=df.float64)
    weights = df.constant(np.linspace(0.5, 1.5, 12).reshape(2, 3, 2))
    loss = df.reduce_sum(outputs * weights) + df.reduce_sum(state.c * state.c)
    (grad,) = df.gradients(loss, [x])  # the cells' variables are checked against TF1
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        symbolic = sess.run(grad, {x: inputs})
        (numeric,) = numeric_gradient(lambda v: sess.run(loss, {x: v[0]}), [inputs])
    np.testing.assert_allclose(symbolic, numeric, rtol=1e-5, atol=1e-7)


def test_reverse_gradients_are_numerically_right():
    def make(x):
        flipped = df.reverse(x * x, [1])
        return df.reverse_sequence(flipped, [1, 3], seq_axis=1, batch_axis=0) * df.constant(
            np.arange(6.0).reshape(2, 3)
        )

    check_gradients(make, [np.linspace(-1, 1, 6).reshape(2, 3)])

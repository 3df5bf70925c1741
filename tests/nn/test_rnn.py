"""df.nn.dynamic_rnn, bidirectional_dynamic_rnn, static_rnn and the cells of df.nn.rnn_cell:
TF1's graphs, variable names and values (pinned from tf.compat.v1, control flow v1, with the
same weights)."""

from __future__ import annotations

import numpy as np
import pytest

import dataflow as df

rnn_cell = df.nn.rnn_cell
B, T, D = 2, 4, 3
INPUTS = np.linspace(-1, 1, B * T * D).reshape(B, T, D).astype(np.float32)


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def _linspace_initializer(shape, dtype=None, partition_info=None):
    """Every variable from -0.5 to 0.5: the weights the TF1 runs below were given."""
    n = int(np.prod(shape))
    return df.constant(np.linspace(-0.5, 0.5, n).reshape(shape).astype(np.float32))


def _zeros_initializer(shape, dtype=None, partition_info=None):
    return df.zeros(shape)


def _weighted_sum(t):
    """sum(t * w) for weights from 0.5 to 1.5, so that every element counts differently."""
    n = int(np.prod(t.shape.as_list()))
    w = np.linspace(0.5, 1.5, n).reshape(t.shape.as_list()).astype(np.float32)
    return df.reduce_sum(t * df.constant(w))


def _loss_and_gradients(outputs, state, feed):
    loss = _weighted_sum(outputs) + sum(df.reduce_sum(s) for s in df.nest.flatten(state))
    variables = df.trainable_variables()
    grads = df.gradients(loss, variables)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        return [v.name for v in variables], *sess.run([loss, grads], feed)


# Per cell: the variables and the loss of the same program under tf.compat.v1 (TF 2.21 with
# tf_keras 2.21): dynamic_rnn over INPUTS with sequence_length [3, 4], loss =
# _weighted_sum(outputs) + sum of the final state.
CELLS = {
    "basic_rnn": (
        lambda: rnn_cell.BasicRNNCell(5),
        ["rnn/basic_rnn_cell/kernel:0", "rnn/basic_rnn_cell/bias:0"],
        -6.751003265380859,
    ),
    "gru": (
        lambda: rnn_cell.GRUCell(4),
        [
            "rnn/gru_cell/gates/kernel:0",
            "rnn/gru_cell/gates/bias:0",
            "rnn/gru_cell/candidate/kernel:0",
            "rnn/gru_cell/candidate/bias:0",
        ],
        -4.695131778717041,
    ),
    "lstm_with_peepholes_projection_and_clipping": (
        lambda: rnn_cell.LSTMCell(5, use_peepholes=True, num_proj=3, cell_clip=0.2, proj_clip=0.5),
        [
            "rnn/lstm_cell/kernel:0",
            "rnn/lstm_cell/bias:0",
            "rnn/lstm_cell/w_f_diag:0",
            "rnn/lstm_cell/w_i_diag:0",
            "rnn/lstm_cell/w_o_diag:0",
            "rnn/lstm_cell/projection/kernel:0",
        ],
        0.09937521815299988,
    ),
    "multi_rnn_cell": (
        lambda: rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(4), rnn_cell.GRUCell(3)]),
        [
            "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel:0",
            "rnn/multi_rnn_cell/cell_0/basic_lstm_cell/bias:0",
            "rnn/multi_rnn_cell/cell_1/gru_cell/gates/kernel:0",
            "rnn/multi_rnn_cell/cell_1/gru_cell/gates/bias:0",
            "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/kernel:0",
            "rnn/multi_rnn_cell/cell_1/gru_cell/candidate/bias:0",
        ],
        3.659857988357544,
    ),
    "lstm_state_not_a_tuple": (
        lambda: rnn_cell.BasicLSTMCell(3, state_is_tuple=False),
        ["rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0"],
        4.828045845031738,
    ),
}


@pytest.mark.parametrize("kind", sorted(CELLS))
def test_dynamic_rnn_cells_name_their_variables_and_compute_as_tf1(kind):
    make, names, tf_loss = CELLS[kind]
    x = df.placeholder(df.float32, [B, T, D])
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, state = df.nn.dynamic_rnn(make(), x, sequence_length=[3, 4], dtype=df.float32)
    got_names, loss, _ = _loss_and_gradients(outputs, state, {x: INPUTS})
    assert got_names == names
    np.testing.assert_allclose(loss, tf_loss, rtol=2e-6)


def test_basic_lstm_dynamic_rnn_matches_tf1_in_names_shapes_and_values():
    x = df.placeholder(df.float32, [None, T, D])
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, state = df.nn.dynamic_rnn(
            rnn_cell.BasicLSTMCell(5), x, sequence_length=[4, 2], dtype=df.float32
        )
    assert outputs.name == "rnn/transpose_1:0" and outputs.shape.as_list() == [None, T, 5]
    assert isinstance(state, rnn_cell.LSTMStateTuple)
    assert (state.c.name, state.h.name) == ("rnn/while/Exit_3:0", "rnn/while/Exit_4:0")
    graph = df.get_default_graph()
    assert graph.get_operation_by_name("rnn/while/basic_lstm_cell/MatMul").type == "MatMul"
    loss = df.reduce_sum(outputs) + df.reduce_sum(state.c)
    grads = df.gradients(loss, df.trainable_variables())
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        out, h, got_loss, got_grads = sess.run([outputs, state.h, loss, grads], {x: INPUTS})
    # tf.compat.v1, the same program.
    np.testing.assert_allclose(got_loss, 17.251106, rtol=1e-6)
    np.testing.assert_allclose([g.sum() for g in got_grads], [2.538334, 29.139662], rtol=2e-5)
    np.testing.assert_allclose(
        out[1, :2, 0], [-0.02503662, -0.07577268], rtol=1e-5
    )  # the second sequence stops after 2 steps: zeros after, its last output is its state
    assert not out[1, 2:].any()
    np.testing.assert_allclose(h[1], out[1, 1], rtol=1e-6)


def test_sequence_length_zeroes_outputs_and_carries_the_state_through():
    x = df.placeholder(df.float32, [B, T, D])
    lengths = df.placeholder(df.int32, [B])
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, state = df.nn.dynamic_rnn(
            rnn_cell.GRUCell(3), x, sequence_length=lengths, dtype=df.float32
        )
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        full, full_state = sess.run([outputs, state], {x: INPUTS, lengths: [4, 4]})
        short, short_state = sess.run([outputs, state], {x: INPUTS, lengths: [1, 3]})
        none, none_state = sess.run([outputs, state], {x: INPUTS, lengths: [0, 0]})
    np.testing.assert_allclose(short[0, :1], full[0, :1])
    assert not short[0, 1:].any() and not short[1, 3:].any()
    np.testing.assert_allclose(short_state[0], full[0, 0])
    np.testing.assert_allclose(short_state[1], full[1, 2])
    assert not none.any() and not none_state.any()  # the zero state, carried through


def test_time_major_inputs_and_an_initial_state():
    x = df.placeholder(df.float32, [T, B, D])
    cell = rnn_cell.BasicRNNCell(2)
    initial = df.ones([B, 2])
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, state = df.nn.dynamic_rnn(cell, x, initial_state=initial, time_major=True)
    assert outputs.shape.as_list() == [T, B, 2]
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        out, last = sess.run([outputs, state], {x: INPUTS.transpose(1, 0, 2)})
    kernel = np.linspace(-0.5, 0.5, 10).reshape(5, 2).astype(np.float32)
    h = np.ones((B, 2), np.float32)
    for t in range(T):
        h = np.tanh(np.concatenate([INPUTS[:, t], h], 1) @ kernel)
        np.testing.assert_allclose(out[t], h, rtol=1e-5)
    np.testing.assert_allclose(last, h, rtol=1e-5)


def test_bidirectional_dynamic_rnn_matches_tf1():
    x = df.placeholder(df.float32, [B, T, D])
    with df.variable_scope("", initializer=_linspace_initializer):
        (out_fw, out_bw), (state_fw, state_bw) = df.nn.bidirectional_dynamic_rnn(
            rnn_cell.GRUCell(3),
            rnn_cell.BasicRNNCell(2),
            x,
            sequence_length=[2, 4],
            dtype=df.float32,
        )
    weights = np.linspace(0, 1, B * T * 2).reshape(B, T, 2).astype(np.float32)
    loss = (
        df.reduce_sum(out_fw * out_fw)
        + df.reduce_sum(out_bw * df.constant(weights))
        + df.reduce_sum(state_fw)
        + df.reduce_sum(state_bw)
    )
    assert [v.name for v in df.trainable_variables()] == [
        "bidirectional_rnn/fw/gru_cell/gates/kernel:0",
        "bidirectional_rnn/fw/gru_cell/gates/bias:0",
        "bidirectional_rnn/fw/gru_cell/candidate/kernel:0",
        "bidirectional_rnn/fw/gru_cell/candidate/bias:0",
        "bidirectional_rnn/bw/basic_rnn_cell/kernel:0",
        "bidirectional_rnn/bw/basic_rnn_cell/bias:0",
    ]
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        got, backward = sess.run([loss, out_bw], {x: INPUTS})
    np.testing.assert_allclose(got, -2.1906540393829346, rtol=2e-6)  # tf.compat.v1
    assert not backward[0, 2:].any()  # past the length, in input order


def test_static_rnn_unrolls_the_cell_and_reuses_its_variables():
    x = df.placeholder(df.float32, [B, T, D])
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, state = df.nn.static_rnn(
            rnn_cell.BasicLSTMCell(3),
            df.unstack(x, axis=1),
            sequence_length=[3, 1],
            dtype=df.float32,
        )
    assert len(outputs) == T
    weights = np.linspace(0, 1, T * B * 3).reshape(T, B, 3).astype(np.float32)
    loss = df.reduce_sum(df.stack(outputs) * df.constant(weights)) + df.reduce_sum(state.c)
    names = [v.name for v in df.trainable_variables()]
    assert names == ["rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0"]
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        np.testing.assert_allclose(sess.run(loss, {x: INPUTS}), 4.458564281463623, rtol=2e-6)


def test_static_bidirectional_rnn_concatenates_both_directions():
    steps = [df.constant(INPUTS[:, t]) for t in range(T)]
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, state_fw, state_bw = df.nn.static_bidirectional_rnn(
            rnn_cell.BasicRNNCell(2), rnn_cell.BasicRNNCell(3), steps, dtype=df.float32
        )
    assert [o.shape.as_list() for o in outputs] == [[B, 5]] * T
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        out, last_fw, last_bw = sess.run([outputs, state_fw, state_bw])
    np.testing.assert_allclose(out[-1][:, :2], last_fw)
    np.testing.assert_allclose(out[0][:, 2:], last_bw)  # the backward pass ends at step 0


def test_a_tiny_lstm_trains_to_tf1s_losses():
    steps, depth, units = 5, 2, 4
    xv = np.sin(np.linspace(0, 6, 3 * steps * depth)).reshape(3, steps, depth).astype(np.float32)
    yv = np.cos(np.linspace(0, 3, 3)).reshape(3, 1).astype(np.float32)
    x = df.placeholder(df.float32, [None, steps, depth])
    y = df.placeholder(df.float32, [None, 1])
    with df.variable_scope("", initializer=_zeros_initializer):
        _, state = df.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(units), x, dtype=df.float32)
        w = df.get_variable("w", [units, 1])
        b = df.get_variable("b", [1])
    loss = df.reduce_mean(df.square(df.matmul(state.h, w) + b - y))
    train = df.train.GradientDescentOptimizer(0.5).minimize(loss)
    start = {
        "rnn/basic_lstm_cell/kernel:0": np.linspace(-0.6, 0.6, 96).reshape(6, 16),
        "rnn/basic_lstm_cell/bias:0": np.linspace(-0.1, 0.1, 16),
        "w:0": np.linspace(-1, 1, 4).reshape(4, 1),
        "b:0": np.array([0.1]),
    }
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        for v in df.trainable_variables():
            sess.run(v.assign(start[v.name].astype(np.float32)))
        losses = [sess.run([loss, train], {x: xv, y: yv})[0] for _ in range(5)]
        losses.append(sess.run(loss, {x: xv, y: yv}))
    # tf.compat.v1, the same model, weights and GradientDescentOptimizer(0.5).
    tf_losses = [0.69645357, 0.22075635, 0.10148188, 0.05311701, 0.02861385, 0.01545139]
    np.testing.assert_allclose(losses, tf_losses, rtol=1e-5)


def test_cells_run_inside_cond_and_while_loop():
    x = df.placeholder(df.float32, [B, T, D])
    pred = df.placeholder(df.bool, [])
    with df.variable_scope("", initializer=_linspace_initializer):
        cell = rnn_cell.GRUCell(2)

        def run_rnn():
            return df.nn.dynamic_rnn(cell, x, dtype=df.float32)[1]

        chosen = df.cond(pred, run_rnn, lambda: df.zeros([B, 2]))

        def body(i, h):
            out, h = cell(x[:, 0], h)
            return i + 1, h

        _, looped = df.while_loop(lambda i, h: i < 3, body, [0, df.zeros([B, 2])])
    assert len(df.trainable_variables()) == 4  # one cell, one set of variables
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        taken, untaken, by_loop = sess.run(
            [chosen, df.identity(chosen), looped], {x: INPUTS, pred: True}
        )
        assert not sess.run(chosen, {x: INPUTS, pred: False}).any()
        h = np.zeros((B, 2), np.float32)
        for _ in range(3):
            h = sess.run(cell(df.constant(INPUTS[:, 0]), df.constant(h))[1])
    np.testing.assert_allclose(by_loop, h, rtol=1e-5)
    np.testing.assert_allclose(taken, untaken)


def test_zero_state_and_sizes():
    lstm = rnn_cell.LSTMCell(4, num_proj=2)
    assert lstm.state_size == rnn_cell.LSTMStateTuple(4, 2) and lstm.output_size == 2
    stacked = rnn_cell.MultiRNNCell([lstm, rnn_cell.GRUCell(3)])
    assert stacked.state_size == (rnn_cell.LSTMStateTuple(4, 2), 3)
    zeros = stacked.zero_state(5, df.float32)
    assert zeros[0].c.shape.as_list() == [5, 4] and zeros[1].shape.as_list() == [5, 3]
    assert zeros[0].c.op.name.startswith("MultiRNNCellZeroState/LSTMCellZeroState/")
    batch = df.placeholder(df.int32, [])
    state = rnn_cell.BasicRNNCell(3).zero_state(batch, df.float32)
    assert state.shape.as_list() == [None, 3]
    with df.Session() as sess:
        assert sess.run(state, {batch: 2}).shape == (2, 3)


def test_dropout_wrapper_with_keep_probability_one_adds_no_op():
    cell = rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(2), output_keep_prob=1.0)
    before = len(df.get_default_graph().get_operations())
    with df.variable_scope("", initializer=_linspace_initializer):
        out, _ = cell(df.constant(INPUTS[:, 0]), df.zeros([B, 2]))
    plain = rnn_cell.BasicRNNCell(2)
    with df.variable_scope("plain", initializer=_linspace_initializer):
        expected, _ = plain(df.constant(INPUTS[:, 0]), df.zeros([B, 2]))
    assert not any("dropout" in op.name for op in df.get_default_graph().get_operations()[before:])
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        np.testing.assert_allclose(*sess.run([out, expected]))
    with pytest.raises(ValueError, match="must be between 0 and 1"):
        rnn_cell.DropoutWrapper(rnn_cell.BasicRNNCell(2), input_keep_prob=1.5)


def test_residual_wrapper_adds_the_input():
    cell = rnn_cell.ResidualWrapper(rnn_cell.BasicRNNCell(3))
    inputs = df.constant(INPUTS[:, 0])
    with df.variable_scope("", initializer=_linspace_initializer):
        out, state = cell(inputs, df.zeros([B, 3]))
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        got, new_state = sess.run([out, state])
    np.testing.assert_allclose(got, new_state + INPUTS[:, 0], rtol=1e-6)


def test_bad_inputs_are_refused_with_tf1s_messages():
    x = df.placeholder(df.float32, [B, T, D])
    with pytest.raises(ValueError, match="you must give a dtype"):
        df.nn.dynamic_rnn(rnn_cell.BasicRNNCell(2), x)
    with pytest.raises(ValueError, match="Input size \\(depth of inputs\\) must be accessible"):
        df.nn.dynamic_rnn(
            rnn_cell.BasicRNNCell(2), df.placeholder(df.float32, [B, T, None]), dtype=df.float32
        )
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        df.nn.dynamic_rnn(rnn_cell.BasicRNNCell(2), x, sequence_length=[[1]], dtype=df.float32)
    with pytest.raises(TypeError, match="must be an instance of RNNCell"):
        df.nn.dynamic_rnn(lambda a, b: (a, b), x, dtype=df.float32)
    lengths = df.placeholder(df.int32, [None])
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, _ = df.nn.dynamic_rnn(
            rnn_cell.BasicRNNCell(2), x, sequence_length=lengths, dtype=df.float32
        )
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        with pytest.raises(df.errors.InvalidArgumentError, match="Expected shape for Tensor"):
            sess.run(outputs, {x: INPUTS, lengths: [1, 2, 3]})


def test_an_lstm_graph_saves_loads_and_renders(tmp_path):
    x = df.placeholder(df.float32, [B, T, D], name="x")
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, _ = df.nn.dynamic_rnn(rnn_cell.BasicLSTMCell(3), x, dtype=df.float32)
    df.identity(outputs, name="out")
    df.global_variables_initializer()
    graph = df.get_default_graph()
    path = str(tmp_path / "lstm.dfg")
    df.io.save_graph(graph, path)
    results = []
    for g in (graph, df.io.load_graph(path)):
        with g.as_default(), df.Session() as sess:
            sess.run("init")
            results.append(sess.run("out:0", {"x:0": INPUTS}))
    np.testing.assert_array_equal(*results)
    assert "basic_lstm_cell" in df.render(graph, format="dot").source


def test_cells_default_to_glorot_kernels_and_tf1s_biases():
    x = df.constant(INPUTS)
    df.nn.dynamic_rnn(rnn_cell.GRUCell(4), x, dtype=df.float32)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        values = {v.name: sess.run(v) for v in df.trainable_variables()}
    kernel = values["rnn/gru_cell/gates/kernel:0"]
    limit = np.sqrt(6.0 / (kernel.shape[0] + kernel.shape[1]))
    assert np.abs(kernel).max() <= limit and kernel.std() > limit / 4
    assert (values["rnn/gru_cell/gates/bias:0"] == 1).all()
    assert (values["rnn/gru_cell/candidate/bias:0"] == 0).all()


def test_dropout_wrapper_drops_outputs_and_scales_the_rest():
    inputs = df.constant(INPUTS[:, 0])
    cell = rnn_cell.BasicRNNCell(50)
    dropped = rnn_cell.DropoutWrapper(cell, output_keep_prob=0.5, seed=3)
    with df.variable_scope("", initializer=_linspace_initializer):
        out, _ = dropped(inputs, df.zeros([B, 50]))
        plain, _ = cell(inputs, df.zeros([B, 50]))
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        got, expected = sess.run([out, plain])
    kept = got != 0
    np.testing.assert_allclose(got[kept], 2 * expected[kept], rtol=1e-6)
    assert 0.2 < kept.mean() < 0.8


def test_variational_dropout_uses_one_mask_for_every_step():
    x = df.constant(np.ones((B, T, D), np.float32))
    cell = rnn_cell.DropoutWrapper(
        rnn_cell.GRUCell(40), output_keep_prob=0.5, variational_recurrent=True, dtype=df.float32
    )
    with df.variable_scope("", initializer=_linspace_initializer):
        outputs, _ = df.nn.dynamic_rnn(cell, x, dtype=df.float32)
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        first, second = sess.run(outputs), sess.run(outputs)
    dropped = first == 0
    assert dropped.any() and not dropped.all()
    assert (dropped == dropped[:1, :1]).all()  # the same units at every step and batch entry
    assert ((second == 0) != dropped).any()  # a new run draws new masks
    with pytest.raises(ValueError, match="dtype must be provided"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), variational_recurrent=True)

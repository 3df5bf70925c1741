"""A GradientTape used while a graph is built (inside a df.function, or in TF1 graph mode).

The backward pass becomes part of the graph, as TensorFlow 2 builds it inside a tf.function,
and the tape sees what TensorFlow's does: watched tensors, trainable variables read while it
records, tensors recorded ops made.  Everything else (an unwatched argument, a non-trainable
variable, an integer tensor) has no gradient, and values made before the tape started or under
``stop_recording`` are constants to it.  Each expected value is what TensorFlow 2.21 gives.
"""

import numpy as np
import pytest

import dataflow as df


def values(structure):
    return df.nest.map_structure(lambda t: None if t is None else t.numpy().tolist(), structure)


def test_unwatched_arguments_and_non_trainable_variables_get_none(eager):
    v = df.Variable([1.0, 2.0])
    w = df.Variable(3.0, trainable=False)

    @df.function
    def grads(x):
        with df.GradientTape() as tape:
            y = df.reduce_sum(v * v * x) + w * x[0]
        return tape.gradient(y, [v, w, x])

    assert values(grads(df.constant([1.0, 2.0]))) == [[2.0, 8.0], None, None]


def test_watched_and_intermediate_tensors_and_output_gradients_on_a_persistent_tape(eager):
    v = df.Variable([1.0, 2.0])

    @df.function
    def grads(x):
        with df.GradientTape(persistent=True) as tape:
            tape.watch(x)
            h = x * x
            y = df.reduce_sum(h * v)
        weighted = tape.gradient(y, v, output_gradients=df.constant(2.0))
        return tape.gradient(y, [x, h]), tape.gradient(h, x), weighted

    assert values(grads(df.constant([1.0, 3.0]))) == (
        [[2.0, 12.0], [1.0, 2.0]],
        [2.0, 6.0],
        [2.0, 18.0],
    )


def test_without_watching_accessed_variables_only_watched_ones_have_gradients(eager):
    v = df.Variable([1.0, 2.0])
    w = df.Variable(3.0)

    @df.function
    def grads():
        with df.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(w)
            y = df.reduce_sum(v) * w
        return tape.gradient(y, [v, w])

    assert values(grads()) == [None, 3.0]


def test_an_integer_source_has_no_gradient(eager):
    @df.function
    def grad(n):
        with df.GradientTape() as tape:
            tape.watch(n)
            y = n * n
        return tape.gradient(y, n)

    assert grad(df.constant(3)) is None


def test_a_non_persistent_tape_gives_one_set_of_gradients(eager):
    @df.function
    def twice(x):
        with df.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.gradient(y, x), tape.gradient(y, x)

    with pytest.raises(RuntimeError, match="non-persistent GradientTape"):
        twice(df.constant(3.0))


def test_nested_tapes_give_second_derivatives(eager):
    @df.function
    def derivatives(x):
        with df.GradientTape() as outer:
            outer.watch(x)
            with df.GradientTape() as inner:
                inner.watch(x)
                y = x * x * x
            first = inner.gradient(y, x)
        return first, outer.gradient(first, x)

    assert values(derivatives(df.constant(2.0))) == (12.0, 12.0)


def test_jacobian_in_a_function(eager):
    @df.function
    def jacobian(x):
        with df.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.jacobian(y, x)

    assert values(jacobian(df.constant([1.0, 2.0]))) == [[2.0, 0.0], [0.0, 4.0]]


def test_values_made_under_stop_recording_or_before_the_tape_are_constants(eager):
    @df.function
    def grads(x):
        before = x * 5.0
        with df.GradientTape() as tape:
            tape.watch(x)
            with tape.stop_recording():
                paused = x * 3.0
            y = x * x + paused + before
        return tape.gradient(y, x)

    assert grads(df.constant(2.0)).numpy() == 4.0


def test_watched_variables_lists_the_variables_read_while_recording(eager):
    v = df.Variable(1.0, name="read")
    df.Variable(2.0, name="not_read")

    @df.function
    def names(x):
        with df.GradientTape() as tape:
            tape.watch(x)
            x * v
        return [variable.name for variable in tape.watched_variables()]

    assert [n.numpy() for n in names(df.constant(1.0))] == [b"read:0"]


def test_a_tf2_training_step_in_a_function_matches_the_same_step_run_eagerly(eager):
    def make():
        rng = np.random.default_rng(0)
        return [
            df.Variable(rng.normal(size=(4, 3)).astype(np.float32)),
            df.Variable(np.zeros(3, np.float32)),
        ]

    x = np.random.default_rng(1).normal(size=(8, 4)).astype(np.float32)
    labels = np.arange(8, dtype=np.int32) % 3

    def step(params, optimizer):
        with df.GradientTape() as tape:
            logits = df.matmul(x, params[0]) + params[1]
            loss = df.reduce_mean(
                df.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        grads = tape.gradient(loss, params)
        optimizer.apply_gradients(zip(grads, params))
        return loss

    eager_params, traced_params = make(), make()
    eager_optimizer = df.train.AdamOptimizer(0.1)
    traced_optimizer = df.train.AdamOptimizer(0.1)
    traced_step = df.function(lambda: step(traced_params, traced_optimizer))
    for _ in range(5):
        eager_loss = step(eager_params, eager_optimizer).numpy()
        traced_loss = traced_step().numpy()
        np.testing.assert_allclose(traced_loss, eager_loss, rtol=1e-5)
    for a, b in zip(eager_params, traced_params):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
    assert traced_step.experimental_get_tracing_count() == 1


def test_a_tape_in_a_tf1_graph_builds_gradients_a_session_runs():
    x = df.placeholder(df.float32, [2])
    v = df.Variable([1.0, 2.0])
    with df.GradientTape() as tape:
        tape.watch(x)
        y = df.reduce_sum(x * x * v)
    gx, gv = tape.gradient(y, [x, v])
    with df.Session() as sess:
        sess.run(df.global_variables_initializer())
        got_x, got_v = sess.run([gx, gv], {x: [1.0, 3.0]})
    assert got_x.tolist() == [2.0, 12.0] and got_v.tolist() == [1.0, 9.0]

"""Compiled loops with their gradient stacks (`dataflow.client.compiler.loops`, "Gradient
stacks"): the forward loop of a differentiated `while_loop` pushes onto stacks and its backward
loop pops from them, each inside one generated function, and a run gives the interpreter's
values bit for bit, its errors, and a stack that either tier may fill or empty."""

import re

import numpy as np
import pytest
from bitwise import same_bits

import dataflow as df
from dataflow.client.compiler import loops
from dataflow.client.compiler.loops import CompiledLoop
from dataflow.client.compiler.regions import NotCompiled
from dataflow.framework import errors
from dataflow.ops.stack_ops import stack_pop_v2, stack_push_v2, stack_v2

NO_PASSES = df.ConfigProto(
    graph_options=df.passes.GraphOptions(
        rewrite_options=df.passes.RewriterConfig(disable_meta_optimizer=True)
    )
)


def all_same_bits(a, b) -> bool:
    return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))


def run_in(new_mode, set_mode, fetches, feed_dict=None, steps: int = 1):
    """The results of ``steps`` runs in a new Session with compilation ``new_mode`` (its
    variables initialised first), and the plan of the last."""
    set_mode(new_mode)
    with df.Session(config=NO_PASSES) as sess:
        sess.run(df.global_variables_initializer())
        results = [sess.run(fetches, feed_dict) for _ in range(steps)]
        plan = list(sess._plans.values())[-1]
    return results, plan


def compiled_frames(plan) -> list[str]:
    """The frame names of the loops compiled in ``plan``, as made (inner ones first)."""
    if not plan.compiled:
        return []
    return [r.frame_name for r in plan.compiled.regions if isinstance(r, CompiledLoop)]


def refusals_of(fetches, feed_dict=None) -> list[str]:
    with df.Session(config=NO_PASSES) as sess:
        source = df.debug.compiled_source(sess, fetches, feed_dict)
    return [line for line in source.splitlines() if "stays interpreted" in line]


def scalar_rnn(parallel_iterations: int = 10, swap_memory: bool = False):
    """``a <- tanh(a * w)`` five times; the gradient of the result for its start and ``w``."""
    x = df.placeholder(df.float32, [], name="x")
    w = df.constant(0.7, name="w")
    _, y = df.while_loop(
        lambda i, a: i < 5,
        lambda i, a: (i + 1, df.tanh(a * w)),
        [0, x],
        parallel_iterations=parallel_iterations,
        swap_memory=swap_memory,
    )
    return [y, *df.gradients(y, [x, w])], {x: np.float32(0.9)}


@pytest.mark.parametrize("parallel_iterations, swap_memory", [(10, False), (1, True)])
def test_the_forward_and_backward_loops_of_a_gradient_compile_with_the_interpreters_bits(
    mode, parallel_iterations, swap_memory
):
    fetches, feed = scalar_rnn(parallel_iterations, swap_memory)
    compiled, plan = run_in("force", mode, fetches, feed)
    interpreted, _ = run_in("off", mode, fetches, feed)
    assert all_same_bits(compiled[0], interpreted[0])
    assert sorted(compiled_frames(plan)) == ["gradients/while_grad", "while"]


def test_compiled_source_shows_the_pushes_and_pops_and_no_refusal(mode):
    mode("force")
    fetches, feed = scalar_rnn()
    with df.Session(config=NO_PASSES) as sess:
        source = df.debug.compiled_source(sess, fetches, feed)
    assert "# loop while:" in source and "# loop gradients/while_grad:" in source
    assert "(StackPushV2)" in source and "(StackPopV2)" in source
    assert "stays interpreted" not in source


def elman_rnn(steps: int = 6, batch: int = 3, inputs: int = 2, units: int = 4):
    """An Elman RNN over time by a hand-written ``while_loop``, its weights read once before
    the loop; one gradient-descent step on its summed squared error."""
    rng = np.random.default_rng(1)
    x = df.placeholder(df.float32, [steps, batch, inputs], name="x")
    w_in = df.Variable(rng.normal(size=(inputs, units)).astype(np.float32), name="w_in")
    w_rec = df.Variable(rng.normal(size=(units, units)).astype(np.float32) * 0.5, name="w_rec")
    w_in_value, w_rec_value = w_in.value(), w_rec.value()

    def body(t, h, total):
        h = df.tanh(df.matmul(x[t], w_in_value) + df.matmul(h, w_rec_value))
        return t + 1, h, total + df.reduce_sum(df.square(h))

    _, _, total = df.while_loop(
        lambda t, h, total: t < steps,
        body,
        [df.constant(0), df.zeros([batch, units]), df.constant(0.0)],
    )
    train = df.train.GradientDescentOptimizer(0.01).minimize(total)
    feed = {x: rng.normal(size=(steps, batch, inputs)).astype(np.float32)}
    return [total, train, w_in.value(), w_rec.value()], feed


def test_a_while_loop_rnn_trains_compiled_as_interpreted_bit_for_bit(mode):
    fetches, feed = elman_rnn()
    compiled, plan = run_in("force", mode, fetches, feed, steps=3)
    interpreted, _ = run_in("off", mode, fetches, feed, steps=3)
    for got, want in zip(compiled, interpreted):
        assert all_same_bits(got, want)
    assert sorted(compiled_frames(plan)) == ["gradients/while_grad", "while"]


def lstm_step():
    """``dynamic_rnn`` of a ``BasicLSTMCell`` (its variables read inside the loop, its
    inputs and outputs in TensorArrays) and one Adam step on the last output's error."""
    rng = np.random.default_rng(2)
    df.set_random_seed(3)
    x = df.placeholder(df.float32, [2, 5, 3], name="x")
    cell = df.nn.rnn_cell.BasicLSTMCell(4)
    outputs, _ = df.nn.dynamic_rnn(cell, x, dtype=df.float32)
    loss = df.reduce_mean(df.square(outputs[:, -1]))
    train = df.train.AdamOptimizer(0.01).minimize(loss)
    return [loss, train, *df.trainable_variables()], {x: rng.normal(size=(2, 5, 3)).astype("f")}


def test_a_dynamic_rnn_lstm_trains_compiled_as_interpreted_bit_for_bit(mode):
    fetches, feed = lstm_step()
    compiled, plan = run_in("force", mode, fetches, feed, steps=3)
    interpreted, _ = run_in("off", mode, fetches, feed, steps=3)
    for got, want in zip(compiled, interpreted):
        assert all_same_bits(got, want)
    assert sorted(compiled_frames(plan)) == ["gradients/rnn/while_grad", "rnn/while"]


def test_a_dynamic_rnn_lstm_step_gives_no_refusal(mode):
    mode("force")
    fetches, feed = lstm_step()
    assert refusals_of(fetches, feed) == []


def nested_loops():
    """An outer loop of four iterations around an inner one of three; the gradient of the
    result for its start (the inner loop's stacks are pushed per outer iteration)."""
    x = df.placeholder(df.float32, [], name="x")

    def outer(i, a):
        _, a = df.while_loop(lambda j, b: j < 3, lambda j, b: (j + 1, df.tanh(b * 1.3)), [0, a])
        return i + 1, a * 0.9

    _, y = df.while_loop(lambda i, a: i < 4, outer, [0, x])
    return [y, *df.gradients(y, x)], {x: np.float32(0.3)}


def test_nested_loops_and_their_backward_loops_all_compile_with_the_interpreters_bits(mode):
    fetches, feed = nested_loops()
    compiled, plan = run_in("force", mode, fetches, feed)
    interpreted, _ = run_in("off", mode, fetches, feed)
    assert all_same_bits(compiled[0], interpreted[0])
    assert sorted(compiled_frames(plan)) == [
        "gradients/while/while_grad",
        "gradients/while_grad",
        "while",
        "while/while",
    ]


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_a_loop_of_any_trip_count_gives_the_interpreters_gradient(mode, trips):
    """With no trip, nothing is pushed and the backward loop pops nothing: the gradient is
    the identity's."""
    x = df.placeholder(df.float32, [], name="x")
    n = df.placeholder(df.int32, [], name="n")
    _, y = df.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, df.sin(a) * 1.5), [0, x])
    fetches, feed = [y, *df.gradients(y, x)], {x: np.float32(0.4), n: trips}
    compiled, plan = run_in("force", mode, fetches, feed)
    interpreted, _ = run_in("off", mode, fetches, feed)
    assert all_same_bits(compiled[0], interpreted[0])
    assert sorted(compiled_frames(plan)) == ["gradients/while_grad", "while"]
    if trips == 0:
        assert compiled[0][1] == np.float32(1.0)


def cond_in_loop():
    """A cond in the body whose branches read different values: the forward loop pushes
    inside each branch (only the taken one runs) and the predicate of every iteration."""
    x = df.placeholder(df.float32, [], name="x")
    w = df.constant(0.7, name="w")

    def body(i, a):
        a = df.cond(a > 0.5, lambda: df.tanh(a * w), lambda: df.sin(a) * w + 0.6)
        return i + 1, a

    _, y = df.while_loop(lambda i, a: i < 6, body, [0, x])
    return [y, *df.gradients(y, [x, w])], {x: np.float32(1.0)}


@pytest.mark.parametrize("start", [1.0, 0.2, -3.0], ids=["true first", "false first", "never"])
def test_a_cond_in_the_loop_and_its_gradient_compile_inside_their_loops(mode, start):
    """Each iteration takes the branch its value chooses; the backward loop's cond takes
    the branch of the forward iteration it mirrors (its predicate is popped)."""
    fetches, feed = cond_in_loop()
    feed = {key: np.float32(start) for key in feed}
    compiled, plan = run_in("force", mode, fetches, feed)
    interpreted, _ = run_in("off", mode, fetches, feed)
    assert all_same_bits(compiled[0], interpreted[0])
    assert sorted(compiled_frames(plan)) == ["gradients/while_grad", "while"]
    mode("force")
    assert refusals_of(fetches, feed) == []


@pytest.mark.parametrize("taken", [True, False])
def test_a_differentiated_loop_in_a_branch_compiles_and_is_dead_when_the_branch_is(mode, taken):
    """In the untaken branch the loop's inputs, its stack handles and so both compiled loops
    are dead, as the interpreter makes every op of them dead."""
    x = df.placeholder(df.float32, [], name="x")
    take = df.placeholder(df.bool, [], name="take")

    def looped():
        _, y = df.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, df.tanh(a * 1.5)), [0, x])
        return y

    y = df.cond(take, looped, lambda: x * 2.0)
    fetches, feed = [y, *df.gradients(y, x)], {x: np.float32(0.5), take: taken}
    compiled, plan = run_in("force", mode, fetches, feed)
    interpreted, _ = run_in("off", mode, fetches, feed)
    assert all_same_bits(compiled[0], interpreted[0])
    assert sorted(compiled_frames(plan)) == ["cond/while", "gradients/cond/while_grad"]


def refuse_frames(monkeypatch, refused: str) -> None:
    """Makes the compiler leave the loops whose frame name matches ``refused`` interpreted."""
    make_loop = loops._make_loop

    def make_or_refuse(nodes, inside, exits, path, analysis):
        if re.fullmatch(refused, path[-1]):
            raise NotCompiled("refused by the test")
        return make_loop(nodes, inside, exits, path, analysis)

    monkeypatch.setattr(loops, "_make_loop", make_or_refuse)


@pytest.mark.parametrize(
    "refused, compiled_frame",
    [(r".*_grad", "while"), (r"while", "gradients/while_grad")],
    ids=["forward compiled, backward interpreted", "forward interpreted, backward compiled"],
)
def test_one_loop_compiled_and_the_other_interpreted_share_the_stacks(
    mode, monkeypatch, refused, compiled_frame
):
    fetches, feed = elman_rnn()
    interpreted, _ = run_in("off", mode, fetches, feed, steps=2)
    refuse_frames(monkeypatch, refused)
    mixed, plan = run_in("force", mode, fetches, feed, steps=2)
    for got, want in zip(mixed, interpreted):
        assert all_same_bits(got, want)
    assert compiled_frames(plan) == [compiled_frame]


def popping_loop(pushes: int):
    """A loop that pushes ``pushes`` values onto a stack, then one that pops three, each op
    ordered by edges as a stack's ops must be (`dataflow.ops.stack_ops`)."""
    stack = stack_v2(-1, df.float32, stack_name="values")

    def push_body(i, total):
        pushed = stack_push_v2(stack, df.cast(i, df.float32) * 2.0)
        return i + 1, total + pushed

    _, pushed_total = df.while_loop(
        lambda i, t: i < pushes, push_body, [0, 0.0], parallel_iterations=1
    )

    def pop_body(i, total):
        # Each pop after the pushes (the first total waits on them) and after the pop before.
        with df.control_dependencies([total]):
            popped = stack_pop_v2(stack, df.float32, name="take")
        popped.set_shape([])
        return i + 1, total * 10.0 + popped

    with df.control_dependencies([pushed_total]):
        start = df.constant(0.0)
    _, popped_total = df.while_loop(lambda i, t: i < 3, pop_body, [0, start], parallel_iterations=1)
    return popped_total


def test_pushes_and_pops_of_a_users_stack_run_in_iteration_order(mode):
    compiled, plan = run_in("force", mode, popping_loop(3))
    interpreted, _ = run_in("off", mode, popping_loop(3))
    assert compiled[0] == interpreted[0] == np.float32(((4.0 * 10) + 2.0) * 10 + 0.0)
    assert len(compiled_frames(plan)) == 2


def test_a_pop_of_an_empty_stack_in_a_compiled_loop_fails_as_interpreted(mode):
    fetches = popping_loop(2)
    failures = []
    for new_mode in ("force", "off"):
        mode(new_mode)
        with df.Session(config=NO_PASSES) as sess:
            with pytest.raises(errors.InvalidArgumentError) as caught:
                sess.run(fetches)
        failures.append(caught.value)
    compiled, interpreted = failures
    assert compiled.op is interpreted.op and compiled.op.name == "while_1/take"
    numbered = re.compile(r"Stack\[values_\d+\]")
    assert numbered.sub("Stack[values]", compiled.message) == numbered.sub(
        "Stack[values]", interpreted.message
    )
    assert "is empty when calling Pop()" in compiled.message
    assert "iteration 2" in compiled.message and "test_compiled_gradient_stacks.py" in (
        compiled.message
    )


def test_a_push_past_the_max_size_in_a_compiled_loop_fails_as_interpreted(mode):
    stack = stack_v2(2, df.float32, stack_name="small")
    _, total = df.while_loop(
        lambda i, t: i < 5,
        lambda i, t: (i + 1, t + stack_push_v2(stack, df.cast(i, df.float32), name="put")),
        [0, 0.0],
        parallel_iterations=1,
    )
    failures = []
    for new_mode in ("force", "off"):
        mode(new_mode)
        with df.Session(config=NO_PASSES) as sess:
            with pytest.raises(errors.InvalidArgumentError) as caught:
                sess.run(total)
        failures.append(caught.value)
    compiled, interpreted = failures
    assert compiled.op is interpreted.op and compiled.op.name == "while/put"
    assert "overflowed its max_size (2)" in compiled.message
    assert "iteration 2" in compiled.message and "iteration 2" in interpreted.message


def test_a_stack_closed_in_a_loop_keeps_the_loop_interpreted(mode):
    """A close takes the handle alone, so no edge orders it after the pushes and pops."""
    from dataflow.ops.stack_ops import stack_close_v2

    stack = stack_v2(-1, df.float32)

    def body(i):
        with df.control_dependencies([stack_close_v2(stack)]):
            return i + 1

    counted = df.while_loop(lambda i: i < 2, body, [0])
    mode("force")
    (line,) = refusals_of(counted)
    assert "(StackCloseV2)" in line and line.endswith("it is stateful")


def test_a_loop_with_stacks_runs_in_python_and_says_why_it_is_not_native(mode):
    from dataflow.client.compiler import native

    if not native.native_available():
        pytest.skip("numba is not installed")
    previous = native.set_native("force")
    try:
        mode("force")
        fetches, feed = scalar_rnn()
        with df.Session(config=NO_PASSES) as sess:
            source = df.debug.compiled_source(sess, fetches, feed, native=True)
    finally:
        native.set_native(previous)
    headers = [line for line in source.splitlines() if line.startswith("# loop ")]
    assert len(headers) == 2
    for header in headers:
        assert "runs Python (" in header
        assert "acts on a stack, an array or a variable, which native code does not hold" in (
            header
        )

"""Native array kernels inside compiled loops, and the sigmoid's native loops
(`dataflow.client.compiler.native_arrays`).

The elementwise ops of a loop body (an LSTM cell's gate arithmetic, its backward chain) are
grouped into array kernels before the loops are compiled, so a compiled loop calls one native
kernel where it called many numpy functions; ``AddN`` joins them as a left-to-right sum;
``Sigmoid`` runs as two native loops around numpy's ``exp``.  Every result keeps the
interpreter's bits."""

import numpy as np
import pytest
from bitwise import same_bits

pytest.importorskip("numba")
pytestmark = pytest.mark.usefixtures("native_forced")

import dataflow as df  # noqa: E402
from dataflow.client import compiler  # noqa: E402
from dataflow.client.compiler import native_arrays  # noqa: E402
from dataflow.client.compiler.loops import CompiledLoop  # noqa: E402
from dataflow.framework.errors import InvalidArgumentError  # noqa: E402


def run(graph, fetches, feed=None, interpreted=False, train=None, steps=0):
    """The results of ``fetches`` after ``steps`` runs of ``train`` (variables initialized
    first), compiled with the native tier forced or ``interpreted``; and the compiled
    regions and loops of the Session's plans."""
    if interpreted:
        compiler.set_mode("off")
    try:
        with df.Session(graph=graph) as sess:
            for init in graph.get_collection("init"):
                sess.run(init)
            for _ in range(steps):
                sess.run(train, feed)
            results = sess.run(fetches, feed)
            made = [
                region
                for plan in sess._plans.values()
                if plan.compiled
                for region in plan.compiled.regions
            ]
    finally:
        compiler.set_mode("force")
    return results, made


def same_as_interpreted(graph, fetches, feed=None, train=None, steps=0) -> list:
    """Runs compiled (native forced) and interpreted, compares every result bit for bit;
    returns the compiled regions and loops."""
    compiled, made = run(graph, fetches, feed, False, train, steps)
    interpreted, _ = run(graph, fetches, feed, True, train, steps)
    for got, want in zip(df.nest.flatten(compiled), df.nest.flatten(interpreted)):
        assert same_bits(got, want), (got, want)
    return made


def kernels(made, kind=native_arrays.NativeArrayRegion) -> list:
    return [r for r in made if isinstance(r.function, kind)]


def member_types(region) -> list:
    return [region.nodes[m].tag.type for m in region.members]


# -- an LSTM written with while_loop, trained with Adam ------------------------------------------
STEPS, BATCH, INPUTS, HIDDEN = 6, 4, 3, 8


def lstm_training_graph(dtype=df.float32):
    """The LSTM of `benchmarks/training_graphs.py` (a ``TensorArray`` of inputs, a
    ``while_loop`` carrying ``(t, h, c)``), small, trained with Adam."""
    graph = df.Graph()
    rng = np.random.default_rng(7)
    np_type = dtype.as_numpy_dtype
    with graph.as_default():
        x = df.placeholder(dtype, [BATCH, STEPS, INPUTS], name="x")
        kernel = df.Variable(
            rng.standard_normal((INPUTS + HIDDEN, 4 * HIDDEN)).astype(np_type) * 0.5
        )
        bias = df.Variable(np.zeros(4 * HIDDEN, np_type))
        inputs = df.TensorArray(dtype, size=STEPS).unstack(df.transpose(x, [1, 0, 2]))
        zeros = df.zeros([BATCH, HIDDEN], dtype)

        def body(t, h, c):
            gates = df.matmul(df.concat([inputs.read(t), h], 1), kernel) + bias
            i, j, f, o = df.split(gates, 4, axis=1)
            c = c * df.sigmoid(f + 1.0) + df.sigmoid(i) * df.tanh(j)
            return t + 1, df.tanh(c) * df.sigmoid(o), c

        _, h, _ = df.while_loop(lambda t, h, c: t < STEPS, body, [df.constant(0), zeros, zeros])
        loss = df.reduce_mean(df.square(h - 0.25))
        train = df.train.AdamOptimizer(0.05).minimize(loss)
        graph.add_to_collection("init", df.global_variables_initializer())
    feed = {x: rng.standard_normal((BATCH, STEPS, INPUTS)).astype(np_type)}
    return graph, [loss, train], [kernel, bias], feed


@pytest.mark.parametrize("dtype", [df.float32, df.float64], ids=["float32", "float64"])
def test_an_lstms_loops_call_native_kernels_and_train_to_the_interpreters_bits(dtype):
    graph, train, fetches, feed = lstm_training_graph(dtype)
    made = same_as_interpreted(graph, fetches, feed, train, steps=3)
    loops = [r for r in made if isinstance(r, CompiledLoop)]
    assert len(loops) == 2  # the forward loop and the backward loop, each compiled whole
    assert {loop.name for loop in loops} == {"while", "gradients/while_grad"}
    in_loops = [r for r in kernels(made) if "while/" in r.name]
    forward = [r for r in in_loops if not r.name.startswith("gradients/")]
    backward = [r for r in in_loops if r.name.startswith("gradients/")]
    # the cell's new state ``c * sigmoid(f) + sigmoid(i) * tanh(j)`` is one kernel
    assert any({"Mul", "FusedElementwise"} & set(member_types(r)) for r in forward)
    # the backward chains of the four gates and the state's gradient, AddN included, are one
    # kernel: the chain of gate o reads the popped values the others read
    (chains,) = backward
    assert "AddN" in member_types(chains) and len(chains.outputs) == 5
    for region in forward + backward:  # three training steps, every iteration natively
        assert region.function.native_calls == 3 * STEPS, region.name
    sigmoids = kernels(made, native_arrays.NativeSigmoid)
    assert len(sigmoids) == 3  # the gates i, f and o of the forward loop
    assert all(s.function.native_calls == 3 * STEPS for s in sigmoids)


def test_a_loop_that_stays_interpreted_runs_the_kernels_inside_its_frame():
    """A variable assigned in the body keeps the loop interpreted; the kernels of its body
    run as nodes of its frame, iteration by iteration."""
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [4, 5])
        counter = df.Variable(0.0)

        def body(i, y):
            with df.control_dependencies([counter.assign_add(1.0)]):
                y = df.identity(y)
            return i + 1, (y * 0.5 + 1.0) * y - 0.25

        _, y = df.while_loop(lambda i, y: i < 3, body, [0, x])
        graph.add_to_collection("init", df.global_variables_initializer())
    feed = {x: np.linspace(-2, 2, 20, dtype=np.float32).reshape(4, 5)}
    made = same_as_interpreted(graph, [y, counter], feed)
    assert not [r for r in made if isinstance(r, CompiledLoop)]
    (region,) = kernels(made)
    assert region.function.native_calls == 3


# -- AddN ----------------------------------------------------------------------------------------
def test_add_n_sums_from_the_first_input_as_its_kernel_does():
    graph = df.Graph()
    with graph.as_default():
        a, b, c = (df.placeholder(df.float32, [6]) for _ in range(3))
        y = df.add_n([a * 2.0, b, c]) * 3.0
    big, tiny = np.float32(3.0e38), np.float32(1.0e-7)
    # (big + big) - big is inf where big + (big - big) would be big: the order shows
    feed = {
        a: np.array([big / 2, 1, -0.0, tiny, 1, 2], np.float32),
        b: np.array([big, tiny, -0.0, 1, -1, 2], np.float32),
        c: np.array([-big, -1, -0.0, -1, 1e30, 2], np.float32),
    }
    made = same_as_interpreted(graph, [y], feed)
    (region,) = kernels(made)
    assert "AddN" in member_types(region)
    assert region.function.native_calls == 1


def test_add_n_of_inputs_of_two_shapes_fails_as_interpreted():
    """An InvalidArgumentError, as TensorFlow raises for AddN of two shapes."""
    graph = df.Graph()
    with graph.as_default():
        a = df.placeholder(df.float32, [None])
        b = df.placeholder(df.float32, [None])
        y = df.add_n([a * 2.0, b]) * 3.0
    feed = {a: np.ones(3, np.float32), b: np.ones(2, np.float32)}
    for interpreted in (False, True):
        with pytest.raises(InvalidArgumentError, match="AddN needs inputs of one shape"):
            run(graph, y, feed, interpreted)


# -- views ---------------------------------------------------------------------------------------
def test_a_view_with_strides_as_input_runs_natively_with_the_same_bits():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [4, 12])
        left, right = df.split(x, [5, 7], axis=1)
        y = (right * 2.0 + 1.0) * right
    feed = {x: np.linspace(-3, 3, 48, dtype=np.float32).reshape(4, 12)}
    made = same_as_interpreted(graph, [y, left], feed)
    (region,) = kernels(made)
    assert region.function.native_calls == 1


# -- the sigmoid ---------------------------------------------------------------------------------
SPECIAL = [0.0, -0.0, 1.0, -1.5, 0.1, 88.7, -88.7, 103.0, -103.0, 3.4e38, -3.4e38, 1e-45, -1e-45]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_sigmoids_native_loops_give_numpys_bits_over_many_values(dtype):
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(dtype, [None])
        y = df.sigmoid(x)
    rng = np.random.default_rng(3)
    if dtype == np.float32:  # every finite float32 pattern is as likely as any other
        bits = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
        values = bits.view(np.float32)
    else:
        values = rng.standard_normal(200_000) * 10.0 ** rng.integers(-3, 3, 200_000)
    values = np.concatenate([values[np.isfinite(values)], np.array(SPECIAL + [np.inf, -np.inf])])
    made = same_as_interpreted(graph, [y], {x: values.astype(dtype)})
    (sigmoid,) = kernels(made, native_arrays.NativeSigmoid)
    assert sigmoid.function.native_calls == 1


def test_the_sigmoid_of_a_gate_reads_its_view_and_keeps_its_shape():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [2, 3, 8])
        first, second = df.split(x, 2, axis=2)  # views with strides
        y = df.sigmoid(second)
        z = df.sigmoid(df.reshape(first, [24]))
    feed = {x: np.linspace(-9, 9, 48, dtype=np.float32).reshape(2, 3, 8)}
    compiled, _ = run(graph, [y, z], feed)
    assert compiled[0].shape == (2, 3, 4) and compiled[1].shape == (24,)
    made = same_as_interpreted(graph, [y, z], feed)
    sigmoids = kernels(made, native_arrays.NativeSigmoid)
    assert [s.function.native_calls for s in sigmoids] == [1, 1]


def test_a_nan_or_an_empty_input_goes_to_the_kernel():
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [None])
        y = df.sigmoid(x)
    nans = np.array([1.0, np.nan, -np.nan, -2.0], np.float32)
    made = same_as_interpreted(graph, [y], {x: nans})
    assert kernels(made, native_arrays.NativeSigmoid)[0].function.native_calls == 0
    made = same_as_interpreted(graph, [y], {x: np.zeros(0, np.float32)})
    assert kernels(made, native_arrays.NativeSigmoid)[0].function.native_calls == 0


def test_without_the_native_tier_the_sigmoid_is_its_kernel():
    compiler.set_native("off")
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [3])
        y = df.sigmoid(x)
    made = same_as_interpreted(graph, [y], {x: np.array([-1, 0, 1], np.float32)})
    assert not kernels(made, native_arrays.NativeSigmoid)


# -- accumulations in place ------------------------------------------------------------------
def gradient_graph(width=4):
    """``y = y @ w`` five times; the gradient with respect to ``w`` sums a product per
    iteration of the backward loop into an accumulator (as an LSTM's weights' do)."""
    graph = df.Graph()
    with graph.as_default():
        y0 = df.placeholder(df.float32, [3, width], name="y0")
        w = df.placeholder(df.float32, [width, width], name="w")
        _, y = df.while_loop(lambda i, y: i < 5, lambda i, y: (i + 1, df.matmul(y, w)), [0, y0])
        (grad,) = df.gradients(df.reduce_sum(y), [w])
    rng = np.random.default_rng(5)
    feed = {
        y0: rng.standard_normal((3, 4)).astype(np.float32),
        w: rng.standard_normal((4, 4)).astype(np.float32),
    }
    return graph, grad, feed


def backward_loop(made) -> CompiledLoop:
    (loop,) = [r for r in made if isinstance(r, CompiledLoop) and "_grad" in r.name]
    return loop


def test_a_gradient_summed_over_iterations_is_updated_in_place_with_the_same_bits():
    graph, grad, feed = gradient_graph()
    kept = {key: value.copy() for key, value in feed.items()}
    compiled, made = run(graph, [grad, grad], feed)
    again, _ = run(graph, [grad], feed)  # a second plan: the first run wrote no one's array
    interpreted, _ = run(graph, [grad], feed, interpreted=True)
    assert ", out=" in backward_loop(made).source
    for got in (compiled[0], compiled[1], again[0]):
        assert same_bits(got, interpreted[0])
    assert all(same_bits(feed[key], kept[key]) for key in feed)


def test_an_accumulation_of_unknown_shape_calls_its_kernel():
    graph, grad, feed = gradient_graph(width=None)  # the accumulator's shape is unknown
    made = same_as_interpreted(graph, [grad], feed)
    assert ", out=" not in backward_loop(made).source


def test_a_loop_variable_read_by_other_ops_is_not_updated_in_place():
    graph = df.Graph()
    with graph.as_default():
        start = df.placeholder(df.float32, [3])

        def body(i, acc, seen):
            return i + 1, acc + 1.0, seen + acc  # acc is read twice, seen through an Identity

        outputs = df.while_loop(lambda i, a, s: i < 4, body, [0, start, df.zeros([3])])
    made = same_as_interpreted(graph, outputs[1:], {start: np.arange(3, dtype=np.float32)})
    (loop,) = [r for r in made if isinstance(r, CompiledLoop)]
    assert ", out=" not in loop.source

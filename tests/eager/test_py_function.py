"""``df.py_function`` and ``df.numpy_function``: their values and their gradients, eagerly, in
df.functions and in TF1 graphs.

TensorFlow 2.21 printed the expected values for the same programs: ``tf.py_function`` is
differentiated through a tape its function runs under (d(a*a)/da at 2 is 4.0), also in a graph
with ``tf.gradients``; ``tf.numpy_function`` has no gradient (None).
"""

import numpy as np
import pytest

import dataflow as df


@pytest.fixture
def eager():
    with df.eager_mode():
        yield


def square(a):
    return a * a


def gradient_at(function, value=2.0, dtype=df.float32):
    x = df.constant(value, dtype)
    with df.GradientTape() as tape:
        tape.watch(x)
        y = function(x)
    return tape.gradient(y, x)


# -- gradients, eagerly ----------------------------------------------------------------------------
def test_tape_differentiates_through_the_python_function(eager):
    grad = gradient_at(lambda x: df.py_function(square, [x], df.float32))
    assert grad.dtype is df.float32 and grad.numpy() == 4.0
    # sin(py(3x)) at 2: cos(36) * 2 * 6 * 3
    chained = gradient_at(lambda x: df.sin(df.py_function(square, [x * 3.0], df.float32)))
    assert chained.numpy() == np.float32(-4.606693)


def test_numpy_function_has_no_gradient(eager):
    assert gradient_at(lambda x: df.numpy_function(square, [x], df.float32)) is None


def test_gradients_of_several_inputs_and_outputs(eager):
    # d(a*a + 3a)/da at 2 = 7; d(a*b)/da at (2, 5) = 5
    both = gradient_at(
        lambda x: df.add_n(df.py_function(lambda a: [a * a, a * 3.0], [x], [df.float32] * 2))
    )
    assert both.numpy() == 7.0
    assert gradient_at(lambda x: df.py_function(lambda a, b: a * b, [x, 5.0], df.float32)) == 5.0
    # an integer input takes no gradient (TensorFlow fails to make its zero; here it is None)
    x, n = df.constant(2.0), df.constant(5)
    with df.GradientTape() as tape:
        tape.watch(x)
        y = df.py_function(lambda a, b: a * df.cast(b, df.float32), [x, n], df.float32)
    assert tape.gradient(y, [x, n])[0].numpy() == 5.0
    # only the output asked for counts: d(a*a)/da at 2 = 4
    x = df.constant(2.0)
    with df.GradientTape() as tape:
        tape.watch(x)
        first, _ = df.py_function(lambda a: [a * a, a * 2.0], [x], [df.float32, df.float32])
    assert tape.gradient(first, x).numpy() == 4.0


def test_an_output_the_tape_cannot_see_gives_zero_gradients(eager):
    # tf: a function computing with .numpy() (or returning a constant) gives 0.0, not None
    numpy_inside = gradient_at(lambda x: df.py_function(lambda a: a.numpy() ** 2, [x], df.float32))
    assert numpy_inside.numpy() == 0.0
    constant = gradient_at(lambda x: df.py_function(lambda a: df.constant(7.0), [x], df.float32))
    assert constant.numpy() == 0.0


def test_complex_and_double_inputs(eager):
    # d(a*a)/da at 1+2j, as TensorFlow's conjugate convention: (2-4j)
    grad = gradient_at(lambda x: df.py_function(square, [x], df.complex64), 1 + 2j, df.complex64)
    assert grad.numpy() == np.complex64(2 - 4j)
    cube = gradient_at(
        lambda x: df.py_function(lambda a: a * a * a, [x], df.float64), 2.0, df.float64
    )
    assert cube.dtype is df.float64 and cube.numpy() == 12.0


def test_a_persistent_tape_asks_twice_and_a_second_order_is_none(eager):
    x = df.constant(2.0)
    with df.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = df.py_function(lambda a: a * a * a, [x], df.float32)
    # TensorFlow fails the second request (its record is gone); here the record stays
    assert tape.gradient(y, x).numpy() == 12.0 and tape.gradient(y, x).numpy() == 12.0
    with df.GradientTape() as outer:
        outer.watch(x)
        with df.GradientTape() as inner:
            inner.watch(x)
            y = df.py_function(lambda a: a * a * a, [x], df.float32)
        first = inner.gradient(y, x)
    assert first.numpy() == 12.0 and outer.gradient(first, x) is None


def test_a_variable_used_inside_takes_no_gradient(eager):
    # tf: only the inputs are watched: grad to the variable None, to x 3.0
    v = df.Variable(3.0)
    x = df.constant(2.0)
    with df.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = df.py_function(lambda a: a * v, [x], df.float32)
    assert tape.gradient(y, v) is None and tape.gradient(y, x).numpy() == 3.0


# -- gradients in df.functions and graphs ----------------------------------------------------------
def test_gradient_through_a_function_call(eager):
    through = df.function(lambda v: df.py_function(square, [v], df.float32))
    assert gradient_at(through).numpy() == 4.0
    plain = df.function(lambda v: df.numpy_function(square, [v], df.float32))
    assert gradient_at(plain) is None


def test_gradients_built_inside_a_function(eager):
    @df.function
    def value_and_slope(v):
        y = df.py_function(lambda a: a * a * a, [v], df.float32)
        return y, df.gradients(y, v)[0]

    assert [t.numpy() for t in value_and_slope(df.constant(2.0))] == [8.0, 12.0]
    assert [t.numpy() for t in value_and_slope(df.constant(3.0))] == [27.0, 27.0]

    @df.function
    def numpy_slope(v):
        return df.gradients(df.numpy_function(square, [v], df.float32), v)

    assert numpy_slope(df.constant(2.0)) == [None]


def test_tf1_gradients_in_a_graph():
    x = df.placeholder(df.float32, [])
    y = df.py_function(square, [x], df.float32)
    (grad,) = df.gradients(y, x)
    assert grad.shape.as_list() == []  # a gradient has its input's shape
    assert df.gradients(df.numpy_function(square, [x], df.float32), x) == [None]
    assert df.gradients(df.py_func(square, [x], df.float32), x) == [None]
    chained = df.gradients(df.sin(df.py_function(square, [x], df.float32)) * 2.0, x)
    with df.Session() as sess:
        # tf: [4.0], then [6.0]; y and its gradient together [9.0, [6.0]]; chained -5.229149
        assert sess.run(grad, {x: 2.0}) == 4.0
        assert sess.run(grad, {x: 3.0}) == 6.0
        assert sess.run([y, grad], {x: 3.0}) == [9.0, 6.0]
        for _ in range(3):  # the compiled plan gives the same
            assert sess.run(grad, {x: 4.0}) == 8.0
        assert sess.run(chained, {x: 2.0}) == [np.float32(-5.229149)]


def test_gradient_in_a_while_loop_reads_each_iterations_record():
    # TensorFlow's process-wide record table fails here (KeyError); each iteration keeps its own
    x = df.placeholder(df.float32, [])

    def body(i, v):
        scaled = df.py_function(lambda a: a * 1.5, [v], df.float32)
        scaled.set_shape([])
        return i + 1, scaled

    _, out = df.while_loop(lambda i, v: i < 3, body, [0, x])
    (grad,) = df.gradients(out, x)
    with df.Session() as sess:
        assert sess.run([out, grad], {x: 2.0}) == [6.75, 3.375]


def test_a_run_before_the_gradient_was_built_kept_no_record():
    x = df.placeholder(df.float32, [])
    y = df.py_function(square, [x], df.float32)
    with df.Session() as sess:
        assert sess.run(y, {x: 2.0}) == 4.0  # no gradient yet: no tape is kept
        (grad,) = df.gradients(y, x)
        assert sess.run(grad, {x: 2.0}) == 4.0


# -- values ----------------------------------------------------------------------------------------
def test_results_convert_to_tout_as_tensorflow(eager):
    x = df.constant(2.0)
    # numpy float64 arrays, Python floats and ints become float32 results
    assert df.py_function(lambda a: np.array([1.5]), [x], df.float32).numpy().tolist() == [1.5]
    assert df.py_function(lambda a: 2.5, [x], df.float32).numpy() == 2.5
    assert df.py_function(lambda a: 3, [x], df.float32).dtype is df.float32
    assert df.py_function(lambda a: a + "!", [df.constant("s")], df.string).numpy() == b"s!"
    assert df.py_function(lambda a: None, [x], []) == []
    # a tensor of another dtype is an error, as in TensorFlow
    with pytest.raises(df.errors.InvalidArgumentError, match="float64 tensor, but Tout expects"):
        df.py_function(lambda a: df.constant(1.5, df.float64), [x], df.float32)
    # TF: "returns 0 values, but expects to see 1 values"
    with pytest.raises(df.errors.InvalidArgumentError, match="returned 0 values, but Tout lists 1"):
        df.py_function(lambda a: None, [x], df.float32)
    with pytest.raises(TypeError, match="py_function needs Tout"):
        df.py_function(square, [x])


def test_decorator_forms(eager):
    @df.py_function(Tout=df.float32)
    def cube(a):
        return a * a * a

    @df.numpy_function(Tout=df.float32)
    def halve(a):
        return a / np.float32(2)

    assert cube(df.constant(3.0)).numpy() == 27.0 and cube.__name__ == "cube"
    assert halve(df.constant(3.0)).numpy() == 1.5
    assert gradient_at(cube).numpy() == 12.0 and gradient_at(halve) is None


def test_numpy_function_runs_eagerly_in_functions_and_graphs():
    with df.eager_mode():
        x = df.constant(2.0)
        assert df.numpy_function(square, [x], df.float32).numpy() == 4.0
        inside = df.function(lambda v: df.numpy_function(square, [v], df.float32))
        assert inside(x).numpy() == 4.0
    p = df.placeholder(df.float32, [])
    with df.Session() as sess:
        assert sess.run(df.numpy_function(square, [p], df.float32), {p: 3.0}) == 9.0


def test_the_op_is_eager_py_func_whose_last_output_is_the_record():
    x = df.placeholder(df.float32, [])
    y = df.py_function(square, [x], df.float32, name="sq")
    assert y.op.type == "EagerPyFunc" and y.op.name == "sq" and y.op.op_def.stateful
    assert [t.dtype for t in y.op.outputs] == [df.float32, df.variant]
    no_results = df.py_function(lambda a: None, [x], [])
    assert isinstance(no_results, df.Operation)

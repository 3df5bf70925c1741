"""AutoGraph under ``df.function`` (``autograph=True`` converts what is traced) and in eager mode
(converted code on eager tensors runs as plain Python)."""

import numpy as np
import pytest

import dataflow as df
from dataflow.eager import autograph


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def clipped_or_negated(x):
    if df.reduce_sum(x) > 0:
        y = df.minimum(x, 1.0)
    else:
        y = -x
    return y


def _op_types(graph):
    return {op.type for op in graph.get_operations()}


def test_function_with_autograph_stages_a_data_dependent_if_and_while():
    with df.Graph().as_default():
        staged_if = df.function(clipped_or_negated)
        staged_while = df.function(collatz_steps)
        if_graph = staged_if.get_concrete_function(df.TensorSpec([2], df.float32)).graph
        while_graph = staged_while.get_concrete_function(df.TensorSpec([], df.int32)).graph
    assert {"Switch", "Merge"} <= _op_types(if_graph)
    assert {"Enter", "Exit", "LoopCond"} <= _op_types(while_graph)


def test_function_with_autograph_gives_python_values_in_a_session():
    with df.Graph().as_default():
        n = df.placeholder(df.int32, [])
        steps = df.function(collatz_steps)(n)
        x = df.placeholder(df.float32, [2])
        y = df.function(clipped_or_negated)(x)
        with df.Session() as sess:
            assert [sess.run(steps, {n: v}) for v in (1, 6, 27)] == [0, 8, 111]
            np.testing.assert_allclose(sess.run(y, {x: [3.0, -1.0]}), [1.0, -1.0])
            np.testing.assert_allclose(sess.run(y, {x: [-3.0, 1.0]}), [3.0, -1.0])


def test_function_without_autograph_does_not_convert_and_python_if_on_a_tensor_fails():
    with df.Graph().as_default():
        unconverted = df.function(clipped_or_negated, autograph=False)
        with pytest.raises(TypeError, match="as a Python bool is not allowed"):
            unconverted.get_concrete_function(df.TensorSpec([2], df.float32))


def test_function_called_eagerly_runs_the_converted_trace():
    with df.eager_mode():
        staged = df.function(collatz_steps)
        assert int(staged(df.constant(27))) == 111
        assert int(staged(df.constant(6))) == 8
        assert staged.experimental_get_tracing_count() == 1


def test_converted_code_on_eager_tensors_runs_as_plain_python():
    with df.eager_mode():
        converted = autograph.to_graph(collatz_steps)
        # The counter stays a Python int: Python's loop ran, on the eager tensor's values.
        assert converted(df.constant(27)) == 111
        y = autograph.to_graph(clipped_or_negated)(df.constant([-3.0, 1.0]))
        assert isinstance(y, df.EagerTensor)
        np.testing.assert_allclose(y.numpy(), [3.0, -1.0])


def test_function_whose_source_is_missing_is_traced_as_it_is_with_a_warning():
    namespace = {}
    exec("def double(x):\n    return x * 2\n", namespace)
    with df.Graph().as_default():
        doubled = df.function(namespace["double"])
        with pytest.warns(UserWarning, match="AutoGraph could not convert double"):
            result = doubled(df.constant(4))
        with df.Session() as sess:
            assert sess.run(result) == 8

"""A df.function called in eager mode: the trace runs through its plan and gives eager values."""

import numpy as np
import pytest

import dataflow as df


def test_eager_call_runs_the_trace_and_returns_eager_tensors():
    with df.eager_mode():

        @df.function
        def affine(x, shift=1.0):
            return {"y": x * 3.0 + shift, "shift": shift}

        first = affine(df.constant([1.0, 2.0]))
        second = affine(df.constant([0.0, -1.0]))
        assert isinstance(first["y"], df.EagerTensor) and first["shift"] == 1.0
        assert first["y"].numpy().tolist() == [4.0, 7.0]
        assert second["y"].numpy().tolist() == [1.0, -2.0]
        assert affine.experimental_get_tracing_count() == 1


def test_captured_eager_tensor_is_a_graph_input_not_a_baked_constant():
    with df.eager_mode():
        weights = df.constant([2.0, 3.0])

        @df.function
        def scaled(x):
            return x * weights

        concrete = scaled.get_concrete_function(df.TensorSpec([2], df.float32))
        assert [t.op.type for t in concrete.inputs] == ["Placeholder", "Placeholder"]
        assert not [op for op in concrete.graph.get_operations() if op.type == "Const"]
        np.testing.assert_allclose(scaled(df.constant([1.0, 1.0])).numpy(), [2.0, 3.0])


def test_eager_call_of_a_concrete_function():
    with df.eager_mode():

        @df.function
        def square(x):
            return x * x

        concrete = square.get_concrete_function(df.TensorSpec([None], df.float32))
        assert concrete(df.constant([3.0])).numpy().tolist() == [9.0]
        assert concrete(df.constant([1.0, 2.0])).numpy().tolist() == [1.0, 4.0]


def test_gradients_in_a_trace_with_respect_to_a_captured_eager_tensor_and_variable():
    # The eager values the function closes over stand for their captures in the trace, so
    # gradients with respect to them are gradients with respect to those graph inputs.
    with df.eager_mode():
        scale = df.constant(3.0)
        weights = df.Variable([1.0, 2.0])

        @df.function
        def grads(x):
            y = df.reduce_sum(weights * x) * scale
            return df.gradients(y, [scale, weights])

        d_scale, d_weights = grads(df.constant([2.0, 5.0]))
        assert d_scale.numpy() == 12.0
        np.testing.assert_allclose(d_weights.numpy(), [6.0, 15.0])
        scale_captures = [
            p
            for t, p in grads.get_concrete_function(
                df.TensorSpec([2], df.float32)
            ).graph.eager_captures.values()
            if t is scale
        ]
        assert [p.op.type for p in scale_captures] == ["Placeholder"]


def test_gradients_called_eagerly_names_gradient_tape():
    with df.eager_mode():
        x = df.constant(1.0)
        with pytest.raises(RuntimeError, match=r"GradientTape instead \(.*test_eager_calls.py:\d+"):
            df.gradients(x * 2.0, [x])

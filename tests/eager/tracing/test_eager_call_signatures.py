"""A df.function called eagerly again: which trace a repeated call finds, found without work.

A repeated call whose arguments are eager tensors, arrays or plain Python values, given by
position, finds its trace from a cheap key; these tests pin that it finds the trace the full
signature would choose, under each of TensorFlow's retracing rules."""

import numpy as np
import pytest

import dataflow as df
from dataflow.eager.tracing import tracing


def test_repeated_eager_call_finds_its_trace_without_computing_a_signature(monkeypatch):
    signatures_computed = []
    computing = tracing.Signature.of.__func__
    monkeypatch.setattr(
        tracing.Signature,
        "of",
        classmethod(
            lambda cls, arguments: signatures_computed.append(1) or computing(cls, arguments)
        ),
    )
    with df.eager_mode():

        @df.function
        def scale(x, factor):
            return x * factor

        results = [scale(df.constant([1.0, 2.0]), 3.0).numpy().tolist() for _ in range(3)]
    assert results == [[3.0, 6.0]] * 3
    assert len(signatures_computed) == 1


def test_python_values_of_other_types_trace_apart_even_when_equal():
    with df.eager_mode():

        @df.function
        def kind(x, value):
            return x + df.constant(float(value)), type(value).__name__

        x = df.constant(1.0)
        # A returned Python string comes back as a string tensor, as in TensorFlow 2.
        seen = [kind(x, value)[1].numpy().decode() for value in (1, 1.0, True, 1, 1.0, True)]
    assert seen == ["int", "float", "bool"] * 2
    assert kind.experimental_get_tracing_count() == 3


def test_python_value_is_baked_in_per_trace_on_repeated_calls():
    with df.eager_mode():

        @df.function
        def scale(x, factor):
            return x * factor

        x = df.constant(2.0)
        assert [float(scale(x, f)) for f in (2.0, 3.0, 2.0, 3.0)] == [4.0, 6.0, 4.0, 6.0]
    assert scale.experimental_get_tracing_count() == 2


def test_array_and_eager_tensor_of_one_dtype_and_shape_share_a_trace():
    with df.eager_mode():

        @df.function
        def double(x):
            return x * 2.0

        from_array = double(np.array([1.0, 2.0], np.float32))
        from_tensor = double(df.constant([3.0, 4.0]))
        again = double(np.array([5.0, 6.0], np.float32))
    assert [from_array.numpy().tolist(), from_tensor.numpy().tolist(), again.numpy().tolist()] == [
        [2.0, 4.0],
        [6.0, 8.0],
        [10.0, 12.0],
    ]
    assert double.experimental_get_tracing_count() == 1


@pytest.mark.parametrize(
    "second",
    [np.zeros(3, np.float32), np.zeros(2, np.float64), np.zeros((2, 1), np.float32)],
    ids=["shape", "dtype", "rank"],
)
def test_repeated_eager_call_with_a_new_dtype_or_shape_traces_again(second):
    with df.eager_mode():

        @df.function
        def total(x):
            return df.reduce_sum(x)

        first = np.ones(2, np.float32)
        for value in (first, second, first, second):
            total(value)
    assert total.experimental_get_tracing_count() == 2


def test_eager_call_after_a_wider_relaxed_trace_uses_the_most_specific_that_fits():
    """A relaxed trace that fits more shapes does not take over the calls that a narrower
    relaxed trace serves: the most specific trace that fits wins, as TensorFlow 2's dispatch
    decides (TF 2.21 gives 0, 1, 1, 2, 1, 0 here, and three traces)."""
    with df.eager_mode():

        @df.function(experimental_relax_shapes=True)
        def unknown_dims(x):
            return df.constant(sum(d is None for d in x.shape.as_list()))

        def call(rows, columns):
            return int(unknown_dims(np.zeros((rows, columns), np.float32)))

        assert call(2, 7) == 0
        assert call(3, 7) == 1  # traced as [None, 7]
        assert call(4, 7) == 1
        assert call(3, 8) == 2  # traced as [None, None]
        assert call(4, 7) == 1  # [None, 7] fits it more closely than [None, None]
        assert call(5, 9) == 2
        assert call(2, 7) == 0  # its own exact trace still
    assert unknown_dims.experimental_get_tracing_count() == 3


def test_keyword_and_default_arguments_find_the_same_trace_as_positional_ones():
    with df.eager_mode():

        @df.function
        def affine(x, scale=2.0):
            return x * scale

        x = df.constant(1.5)
        results = [float(affine(x)), float(affine(x, 2.0)), float(affine(x, scale=2.0))]
    assert results == [3.0, 3.0, 3.0]
    assert affine.experimental_get_tracing_count() == 1


def test_eager_variable_argument_is_read_at_each_call():
    with df.eager_mode():
        v = df.Variable(1.0)

        @df.function
        def read(variable, x):
            return variable + x

        first = float(read(v, df.constant(1.0)))
        v.assign(5.0)
        second = float(read(v, df.constant(1.0)))
    assert (first, second) == (2.0, 6.0)
    assert read.experimental_get_tracing_count() == 1


def test_input_signature_refuses_a_repeated_bad_call_each_time():
    with df.eager_mode():

        @df.function(input_signature=[df.TensorSpec([None], df.float32)])
        def total(x):
            return df.reduce_sum(x)

        assert float(total(df.constant([1.0, 2.0]))) == 3.0
        for _ in range(2):
            with pytest.raises(TypeError, match="does not match its input_signature"):
                total(df.constant([1, 2]))
        assert float(total(np.array([4.0], np.float32))) == 4.0
    assert total.experimental_get_tracing_count() == 1

"""df.function: which calls trace, what a concrete function holds, and the errors of bad calls."""

import re
import warnings

import numpy as np
import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test builds in a graph of its own and leaves none of its ops to the next."""
    df.reset_default_graph()
    yield
    df.reset_default_graph()


def test_same_dtype_and_shape_reuses_the_trace():
    @df.function
    def double(x):
        return x * 2.0

    x = df.placeholder(df.float32, [3])
    y = df.placeholder(df.float32, [3])
    double(x)
    double(y)
    assert double.experimental_get_tracing_count() == 1


def test_new_dtype_or_shape_traces_again():
    @df.function
    def double(x):
        return x * 2

    double(df.placeholder(df.float32, [3]))
    double(df.placeholder(df.float32, [4]))
    double(df.placeholder(df.int32, [4]))
    assert double.experimental_get_tracing_count() == 3


def test_new_python_value_traces_again_and_is_baked_in():
    @df.function
    def scale(x, factor):
        return x * factor

    x = df.placeholder(df.float32, [])
    by_two, by_three, by_two_again = scale(x, 2.0), scale(x, 3.0), scale(x, 2.0)
    assert scale.experimental_get_tracing_count() == 2
    with df.Session() as sess:
        assert sess.run([by_two, by_three, by_two_again], {x: 5.0}) == [10.0, 15.0, 10.0]


def test_nested_structures_are_part_of_the_signature():
    @df.function
    def total(pair):
        return pair["a"] + pair["b"]

    a = df.placeholder(df.float32, [])
    total({"a": a, "b": a})
    total({"a": a, "b": 1.0})
    total({"a": a, "b": a})
    assert total.experimental_get_tracing_count() == 2


def test_relax_shapes_generalises_a_changed_dimension_to_unknown():
    @df.function(experimental_relax_shapes=True)
    def first(x):
        return x[0]

    for n in (2, 3, 4, 5):
        first.get_concrete_function(df.TensorSpec([n, 7], df.float32))
    assert first.experimental_get_tracing_count() == 2
    relaxed = first.get_concrete_function(df.TensorSpec([9, 7], df.float32))
    assert relaxed.inputs[0].shape.as_list() == [None, 7]


def test_input_signature_fixes_one_trace():
    @df.function(input_signature=[df.TensorSpec([None], df.float32, name="values")])
    def norm(x):
        return df.reduce_sum(x * x)

    norm(df.placeholder(df.float32, [3]))
    norm(df.placeholder(df.float32, [8]))
    assert norm.experimental_get_tracing_count() == 1
    concrete = norm.get_concrete_function()
    assert concrete.inputs[0].name == "values:0"


def test_concrete_function_fields():
    @df.function
    def affine(x, shift=1.0):
        return {"y": x * 3.0 + shift, "shift": shift}

    concrete = affine.get_concrete_function(df.TensorSpec([None, 2], df.float32))
    assert isinstance(concrete.graph, df.Graph)
    assert [t.shape.as_list() for t in concrete.inputs] == [[None, 2]]
    assert concrete.inputs[0].op.type == "Placeholder"
    # A returned Python number is a tensor output too (TensorFlow 2); dicts flatten by key.
    shift, y = concrete.structured_outputs["shift"], concrete.structured_outputs["y"]
    assert concrete.outputs == [shift, y]
    assert shift.op.type == "Const" and shift.dtype == df.float32
    args, kwargs = concrete.structured_input_signature
    # TF 2.21 names the spec after its parameter: TensorSpec(shape=(None, 2), ..., name='x').
    assert args[0] == df.TensorSpec([None, 2], df.float32, name="x")
    assert args[1] == 1.0 and kwargs == {}
    assert concrete is affine.get_concrete_function(df.TensorSpec([None, 2], df.float32))


def test_concrete_function_graph_runs_through_one_plan():
    @df.function
    def affine(x):
        return x * 3.0 + 1.0

    concrete = affine.get_concrete_function(df.TensorSpec([2], df.float32))
    assert concrete._run([np.array([1.0, 2.0], np.float32)])[0].tolist() == [4.0, 7.0]
    assert concrete._run([np.array([0.0, 1.0], np.float32)])[0].tolist() == [1.0, 4.0]


def test_tracing_often_warns_with_the_reason_and_the_function_name():
    @df.function
    def power(x, n):
        return x**n

    x = df.placeholder(df.float32, [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(5):
            power(x, n)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert "'power'" in messages[0] and "traced 5 times" in messages[0]
    assert "argument 'n' is the Python value 4, was 3" in messages[0]


def test_wrong_argument_count_names_the_callers_line():
    @df.function
    def add(a, b):
        return a + b

    with pytest.raises(TypeError) as info:
        add(df.constant(1.0))  # the line the error names
    assert re.search(r"'add' called at .*test_tracing.py:\d+", str(info.value))
    assert "missing a required argument: 'b'" in str(info.value)


def test_wrong_dtype_against_input_signature_names_the_callers_line():
    @df.function(input_signature=[df.TensorSpec([None], df.float32)])
    def norm(x):
        return df.reduce_sum(x)

    with pytest.raises(TypeError) as info:
        norm(df.constant([1, 2]))
    assert re.search(
        r"'norm' called at .*test_tracing.py:\d+: argument 0 is int32", str(info.value)
    )


def test_input_signature_must_hold_tensor_specs():
    with pytest.raises(TypeError, match="df.TensorSpec"):
        df.function(lambda x: x, input_signature=[df.float32])


def test_variables_made_on_a_later_trace_are_an_error():
    @df.function
    def counter(x, step):
        v = df.Variable(0.0)
        return v.assign_add(x * step)

    x = df.placeholder(df.float32, [])
    counter(x, 1.0)
    with pytest.raises(ValueError, match="made variables .* on a trace after its first"):
        counter(x, 2.0)

"""Ops built while a function is traced belong to the function, even when every input is a
tensor of the graph around it (a closure's)."""

import pytest

import dataflow as df
from dataflow.eager.tracing import FuncGraph


@pytest.fixture
def traced():
    with df.Graph().as_default() as outer:
        x = df.placeholder(df.float32, [2], name="x")
        v = df.Variable([0.0, 0.0], name="v")
        function_graph = FuncGraph("f", outer_graph=outer)
        with function_graph.as_default():
            yield function_graph, x, v


BUILDERS = {
    "operator": lambda x, v: x * 2.0,
    "reflected_operator": lambda x, v: 2.0 - x,
    "math": lambda x, v: df.add(x, 1.0),
    "array": lambda x, v: df.reshape(x, [2, 1]),
    "check": lambda x, v: df.debugging.assert_positive(x),
    "variable_update": lambda x, v: v.assign_add(x),
}


@pytest.mark.parametrize("build", BUILDERS.values(), ids=BUILDERS.keys())
def test_an_op_on_a_closures_tensors_belongs_to_the_function(traced, build):
    function_graph, x, v = traced
    result = build(x, v)
    assert result.graph is function_graph
    assert x in function_graph.captures

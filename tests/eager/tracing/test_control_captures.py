"""A traced body may ask to run after an op of the graph it is called from (``with
df.control_dependencies([outer]):``), as in TensorFlow: the trace records the op as a control
capture instead of making an edge between graphs."""

import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_a_control_dependency_on_an_outer_op_is_a_control_capture_of_the_trace():
    outer = df.identity(1.0)

    @df.function
    def f():
        with df.control_dependencies([outer]):
            return df.identity(2.0)

    concrete = f.get_concrete_function()
    assert concrete.graph.control_captures == {outer.op}
    assert all(op.graph is concrete.graph for op in concrete.graph.get_operations())
    assert all(not op.control_inputs for op in concrete.graph.get_operations())


def test_called_in_the_outer_graph_the_body_still_waits_for_the_outer_op():
    counter = df.Variable(0)
    bump = df.assign_add(counter, 1)

    @df.function
    def f():
        with df.control_dependencies([bump]):
            return df.identity(counter.read_value())

    r = f()
    with df.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(r) == 1

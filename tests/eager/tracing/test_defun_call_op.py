"""A ``Defun`` called in a graph is one ``PartitionedCall`` op whose gradient is one call too.

Expected values are TensorFlow 1's (graph mode, control flow v1, ``function.Defun``), run on
the same programs.
"""

import io

import numpy as np
import pytest

import dataflow as df


@df.Defun(df.float32)
def quartic(x):
    return df.square(df.square(x))


@df.Defun(df.float32, df.float32)
def scaled_sin(x, w):
    return df.sin(x * w)


def _calls(graph=None):
    graph = graph or df.get_default_graph()
    return [op for op in graph.get_operations() if op.type == "PartitionedCall"]


def test_a_call_is_one_op_and_its_gradient_one_more():
    x = df.placeholder(df.float32, [])
    y = quartic(x)
    assert [op.name for op in _calls()] == ["quartic"]
    assert not any(op.type == "Square" for op in df.get_default_graph().get_operations())
    (g,) = df.gradients(y, x)
    calls = _calls()
    assert len(calls) == 2 and g.op is calls[1]
    assert list(calls[1].inputs[:1]) == [x]  # the gradient takes (x, dy)
    with df.Session() as session:
        np.testing.assert_allclose(session.run([y, g], {x: 1.5}), [5.0625, 13.5])


def test_the_gradient_of_a_gradient_call_is_a_call_too():
    # TensorFlow 1 has no gradient for its SymbolicGradient op; here the second derivative of
    # x**4 is 12 x**2.
    x = df.placeholder(df.float32, [])
    (g,) = df.gradients(quartic(x), x)
    (gg,) = df.gradients(g, x)
    assert gg.op.type == "PartitionedCall"
    with df.Session() as session:
        np.testing.assert_allclose(session.run(gg, {x: 1.5}), 12 * 1.5**2)


def test_a_call_inside_a_cond_runs_and_differentiates_only_when_its_branch_is_taken():
    x = df.placeholder(df.float32, [])
    take = df.placeholder(df.bool, [])
    y = df.cond(take, lambda: quartic(x) * 3.0, lambda: x * 2.0)
    (g,) = df.gradients(y, x)
    with df.Session() as session:
        np.testing.assert_allclose(session.run([y, g], {x: 1.5, take: True}), [15.1875, 40.5])
        np.testing.assert_allclose(session.run([y, g], {x: 1.5, take: False}), [3.0, 2.0])


@pytest.mark.parametrize("parallel_iterations", [1, 10])
@pytest.mark.parametrize("threads", [1, 4])
def test_a_call_inside_a_loop_saves_only_its_inputs(parallel_iterations, threads):
    x = df.placeholder(df.float32, [])
    w = df.constant(0.5)
    _, y = df.while_loop(
        lambda i, v: i < 3,
        lambda i, v: [i + 1, scaled_sin(v, w) + v],
        [df.constant(0), x],
        [df.TensorShape(None), df.TensorShape(None)],
        parallel_iterations=parallel_iterations,
    )
    gx, gw = df.gradients(y, [x, w])
    saved = [
        op.inputs[1] for op in df.get_default_graph().get_operations() if op.type == "StackPushV2"
    ]
    # The call's gradient reads the call's loop-varying input v (w is a loop invariant); the
    # Add of unknown shapes saves its inputs' shapes, a few integers.
    assert sorted(t.op.type for t in saved) == ["Identity", "Shape", "Shape"]
    config = df.ConfigProto(inter_op_parallelism_threads=threads)
    with df.Session(config=config) as session:
        np.testing.assert_allclose(
            session.run([y, gx, gw], {x: 0.8}), [2.5171292, 2.7275052, 3.7988272], rtol=1e-6
        )


def test_calls_inside_nested_loops():
    x = df.placeholder(df.float32, [])
    w = df.constant(0.5)
    unknown = [df.TensorShape(None), df.TensorShape(None)]

    def outer_body(i, v):
        inner = df.while_loop(
            lambda j, u: j < 2,
            lambda j, u: [j + 1, scaled_sin(u, w) + u],
            [df.constant(0), v],
            unknown,
        )[1]
        return [i + 1, inner]

    _, y = df.while_loop(lambda i, v: i < 2, outer_body, [df.constant(0), x], unknown)
    (g,) = df.gradients(y, x)
    with df.Session() as session:
        np.testing.assert_allclose(session.run([y, g], {x: 0.9}), [3.7667432, 2.8153603], rtol=1e-6)


def test_a_call_captures_outer_tensors_as_inputs_and_differentiates_them():
    w = df.placeholder(df.float32, [])

    @df.Defun(df.float32)
    def times_w(x):
        return x * w

    x = df.placeholder(df.float32, [])
    y = times_w(x)
    assert list(y.op.inputs) == [x, w]
    gx, gw = df.gradients(y, [x, w])
    with df.Session() as session:
        assert session.run([y, gx, gw], {x: 3.0, w: 2.0}) == [6.0, 2.0, 3.0]


def test_a_body_with_effects_is_built_inline():
    # The call op's kernel runs the body in a plan of its own, which could not order a print
    # with the caller's effects: such a body is built at the call site instead.
    out = io.StringIO()

    @df.Defun(df.float32)
    def noisy(x):
        with df.control_dependencies([df.print("called", output_stream=out)]):
            return x * 2.0

    x = df.placeholder(df.float32, [])
    y = noisy(x)
    assert _calls() == []
    with df.Session() as session:
        assert session.run(y, {x: 1.5}) == 3.0
    assert out.getvalue().strip() == "called"


def test_a_graph_with_a_call_renders_and_refuses_to_be_saved(tmp_path):
    x = df.placeholder(df.float32, [], name="x")
    quartic(x)
    assert "quartic" in df.render(df.get_default_graph()).source
    with pytest.raises(df.io.GraphNotSerializableError, match="PartitionedCall op 'quartic'"):
        df.io.save_graph(df.get_default_graph(), tmp_path / "g.dfg")


def test_a_call_of_the_wrong_dtype_is_a_type_error_at_the_call():
    with pytest.raises(TypeError, match="argument 0 is int32"):
        quartic(df.constant(3))

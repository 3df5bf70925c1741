"""with_dependencies: a tensor's value, passed on only after the given ops have run."""

import pytest

import dataflow as df
from primitives.control_flow_ops import with_dependencies


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_value_is_passed_on_after_the_dependencies_run():
    counter = df.Variable(0, name="counter")
    bump = df.assign_add(counter, 1)
    result = with_dependencies([bump], df.constant(10))
    with df.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(result) == 10
        assert sess.run(counter) == 1


def test_variable_output_is_read_after_its_initializer():
    v = df.Variable([1.0, 2.0])
    result = with_dependencies([v.initializer], v)
    with df.Session() as sess:
        assert sess.run(result).tolist() == [1.0, 2.0]


def test_identity_is_named_as_tensorflow_names_it():
    # tf.compat.v1 graph mode names them control_dependency:0, x:0 and s/control_dependency:0.
    value, noop = df.constant(1.0), df.no_op()
    assert with_dependencies([noop], value).name == "control_dependency:0"
    assert with_dependencies([noop], value, name="x").name == "x:0"
    with df.name_scope("s"):
        scoped = with_dependencies([noop], value)
    assert scoped.name == "s/control_dependency:0"
    assert scoped.op.type == "Identity" and scoped.op.control_inputs == [noop]


def test_works_inside_cond_and_while_loop():
    v = df.Variable(0, name="v")

    def body(i):
        return with_dependencies([df.assign_add(v, 1)], i + 1)

    loop = df.while_loop(lambda i: i < 3, body, [df.constant(0)])
    chosen = df.cond(df.constant(True), lambda: with_dependencies([df.no_op()], loop), lambda: loop)
    with df.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(chosen) == 3
        assert sess.run(v) == 3

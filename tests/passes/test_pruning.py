"""Pruning: only what the fetches need is kept; stateful ops they depend on stay."""

from passes_testing import op_types

import dataflow as df
from dataflow.passes import optimize


def test_ops_no_fetch_needs_are_removed(fresh_graph):
    x = df.placeholder(df.float32, [], name="x")
    y = x + 1.0
    unused = df.exp(x) * 3.0  # noqa: F841
    item, _ = optimize(fresh_graph, [y], [x], ["pruning"])
    assert sorted(op_types(item.graph)) == ["Add", "Const", "Placeholder"]


def test_a_stateful_op_the_fetch_depends_on_by_control_is_kept(fresh_graph):
    v = df.Variable(1.0, name="v")
    bump = v.assign_add(1.0)
    with df.control_dependencies([bump]):
        y = df.identity(df.constant(0.0), name="y")
    item, _ = optimize(fresh_graph, [y], (), ["pruning", "constant_folding", "pruning"])
    assert "AssignAdd" in op_types(item.graph)
    with df.Session() as sess:
        sess.run(v.initializer)
        sess.run(y)
        assert sess.run(v) == 2.0


def test_a_fed_tensor_keeps_its_name_and_cuts_its_inputs(fresh_graph):
    a = df.placeholder(df.float32, [], name="a")
    b = df.exp(a, name="b")
    c = b * 2.0
    item, _ = optimize(fresh_graph, [c], [b], ["pruning"])
    assert item.graph.get_tensor_by_name("b:0") is item.feeds[0]
    assert item.feeds[0].op.type == "Placeholder"
    assert "Exp" not in op_types(item.graph)
    with df.Session(graph=item.graph) as sess:
        assert sess.run(item.fetches[0], {"b:0": 3.0}) == 6.0

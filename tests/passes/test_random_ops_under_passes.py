"""Graph passes never fold, merge or hoist a random op: each one draws anew every run and every
loop iteration whatever passes run."""

import numpy as np
from passes_testing import op_types, session

import dataflow as df
from dataflow.passes import optimize

RANDOM_TYPES = ("RandomStandardNormal", "RandomUniform", "Dropout")


def test_constant_folding_keeps_a_random_op_of_constant_inputs(fresh_graph):
    y = df.random_normal([3], seed=1) * 2.0 + df.random_uniform([3], 1.0, 2.0, seed=2)
    item, _ = optimize(fresh_graph, [y], (), ["constant_folding"])
    assert op_types(item.graph).count("RandomStandardNormal") == 1
    assert op_types(item.graph).count("RandomUniform") == 1
    with session(["constant_folding"]) as sess:
        first, second = sess.run(y), sess.run(y)
    assert not np.array_equal(first, second)


def test_common_subexpression_elimination_keeps_equal_random_ops_apart(fresh_graph):
    a, b = df.random_normal([8]), df.random_normal([8])
    drops = [df.nn.dropout(df.ones([8]), rate=0.5) for _ in range(2)]
    item, _ = optimize(fresh_graph, [a, b, *drops], (), ["common_subexpression"])
    assert op_types(item.graph).count("RandomStandardNormal") == 2
    assert op_types(item.graph).count("Dropout") == 2
    with session(["common_subexpression"]) as sess:
        first, second = sess.run([a, b])
    assert not np.array_equal(first, second)


def test_loop_invariant_motion_leaves_a_random_op_in_the_loop(fresh_graph):
    scale = df.placeholder(df.float32, [])

    def body(i, draws):
        draw = df.random_uniform([1], seed=3) * scale  # no input from the loop variables
        return i + 1, df.concat([draws, draw], 0)

    _, draws = df.while_loop(
        lambda i, d: i < 4,
        body,
        [0, df.zeros([0])],
        shape_invariants=[df.TensorShape([]), df.TensorShape([None])],
    )
    item, _ = optimize(fresh_graph, [draws], [scale], ["loop_invariant_motion"])
    (random_op,) = [op for op in item.graph.get_operations() if op.type == "RandomUniform"]
    assert random_op._control_flow_context is not None
    with session(["loop_invariant_motion"]) as sess:
        value = sess.run(draws, {scale: 1.0})
    assert len(np.unique(value)) == 4
    with session([]) as sess:
        np.testing.assert_array_equal(sess.run(draws, {scale: 1.0}), value)

"""The graphs `while_loop` builds, its records, and its build-time errors (no Session needed)."""

import collections
import re

import pytest

import dataflow as df
from primitives import WhileContext, control_flow_context_of


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def _op(graph, name):
    return graph.get_operation_by_name(name)


def _ops_of_type(graph, op_type):
    return [op for op in graph.get_operations() if op.type == op_type]


def _count_loop(graph):
    i = df.constant(0, name="i")
    return df.while_loop(lambda i: i < 10, lambda i: i + 1, [i])


def test_loop_shape_enter_merge_loopcond_switch_exit_identity_nextiteration(fresh_graph):
    r = _count_loop(fresh_graph)
    g = fresh_graph
    enter, merge, switch = _op(g, "while/Enter"), _op(g, "while/Merge"), _op(g, "while/Switch")
    loop_cond, exit_op = _op(g, "while/LoopCond"), _op(g, "while/Exit")
    identity, next_op = _op(g, "while/Identity"), _op(g, "while/NextIteration")
    assert enter.inputs[0].op.name == "i"
    assert enter.attrs == {"frame_name": "while", "is_constant": False, "parallel_iterations": 10}
    assert list(merge.inputs) == [enter.outputs[0], next_op.outputs[0]]
    assert loop_cond.inputs[0].op.type == "Less"
    assert loop_cond.inputs[0].op.inputs[0] is merge.outputs[0]
    assert list(switch.inputs) == [merge.outputs[0], loop_cond.outputs[0]]
    assert exit_op.inputs[0] is switch.outputs[0]
    assert identity.inputs[0] is switch.outputs[1]
    assert next_op.inputs[0].op.type == "Add"
    assert next_op.inputs[0].op.inputs[0] is identity.outputs[0]
    assert r is exit_op.outputs[0]


def test_frame_name_is_the_unique_name_scope():
    a = _count_loop(None)
    b = _count_loop(None)
    with df.name_scope("outer"):
        c = _count_loop(None)
    frames = [control_flow_context_of(t).frame_name for t in (a, b, c)]
    assert frames == ["while", "while_1", "outer/while"]
    assert df.while_loop(lambda i: i < 1, lambda i: i, [1], name="grow").op.name == "grow/Exit"
    # Re-entering a scope reuses the name, never the frame.
    again = df.while_loop(lambda i: i < 1, lambda i: i, [1], name="grow/")
    assert control_flow_context_of(again).name == "grow"
    assert control_flow_context_of(again).frame_name == "grow_1"


def test_loop_records_its_structure(fresh_graph):
    x = df.constant(1.0, name="x")
    i, y = df.while_loop(
        lambda i, y: i < 3, lambda i, y: (i + 1, y * 2.0), [0, x], parallel_iterations=4
    )
    (ctx,) = fresh_graph.get_collection(df.GraphKeys.WHILE_CONTEXT)
    assert isinstance(ctx, WhileContext)
    assert ctx.name == ctx.frame_name == "while"
    assert ctx.parallel_iterations == 4 and ctx.back_prop is True
    assert ctx.maximum_iterations is None and ctx.outer_context is None
    assert [op.type for op in ctx.loop_enters] == ["Enter", "Enter"]
    assert [op.type for op in ctx.merges] == ["Merge", "Merge"]
    assert [op.type for op in ctx.switches] == ["Switch", "Switch"]
    assert [op.type for op in ctx.next_iterations] == ["NextIteration", "NextIteration"]
    assert [op.outputs[0] for op in ctx.exits] == [i, y]
    assert ctx.loop_cond.type == "LoopCond"
    assert ctx.pivot.op.name == "while/Identity"
    assert ctx.pivot_for_pred is ctx.merges[0].outputs[0]
    for op in ctx.loop_enters + ctx.merges + ctx.switches + ctx.exits + ctx.next_iterations:
        assert control_flow_context_of(op) is ctx
    assert control_flow_context_of(ctx.loop_cond) is ctx
    assert "while" in repr(ctx)


def test_ops_without_inputs_get_the_pivot_in_body_and_the_merge_in_cond(fresh_graph):
    df.while_loop(
        lambda i: i < df.constant(5, name="limit"),
        lambda i: i + df.constant(1, name="one"),
        [df.constant(0)],
    )
    assert [c.name for c in _op(fresh_graph, "while/limit").control_inputs] == ["while/Merge"]
    assert [c.name for c in _op(fresh_graph, "while/one").control_inputs] == ["while/Identity"]


def test_outside_tensors_enter_once_per_loop_as_constants(fresh_graph):
    n = df.placeholder(df.int32, shape=[], name="n")
    df.while_loop(lambda i: i < n, lambda i: i + n * n, [df.constant(0)])
    enters = [e for e in _ops_of_type(fresh_graph, "Enter") if e.inputs[0] is n]
    assert len(enters) == 1
    (enter,) = enters
    assert enter.attrs == {"frame_name": "while", "is_constant": True, "parallel_iterations": 10}
    assert {op.type for op in enter.outputs[0].consumers()} == {"Less", "Mul"}


def test_ops_reading_only_loop_invariants_are_gated_by_the_pivot(fresh_graph):
    n = df.placeholder(df.int32, shape=[], name="n")
    df.while_loop(lambda i: i < 3, lambda i: i + df.square(n, name="sq"), [df.constant(0)])
    assert [c.name for c in _op(fresh_graph, "while/sq").control_inputs] == ["while/Identity"]


def test_a_body_returning_an_outside_tensor_feeds_a_gated_next_iteration(fresh_graph):
    z = df.constant(7, name="z")
    df.while_loop(lambda i: i < 3, lambda i: z, [df.constant(0)])
    next_op = _op(fresh_graph, "while/NextIteration")
    assert next_op.inputs[0].op.type == "Enter" and next_op.inputs[0].op.inputs[0] is z
    assert [c.name for c in next_op.control_inputs] == ["while/Identity"]


def test_a_tensor_from_two_levels_out_is_entered_level_by_level(fresh_graph):
    x = df.placeholder(df.float32, shape=[], name="x")

    def outer_body(i, acc):
        inner = df.while_loop(lambda j, a: j < 2, lambda j, a: (j + 1, a + x), [0, acc])
        return i + 1, inner[1]

    df.while_loop(lambda i, acc: i < 3, outer_body, [0, df.constant(0.0)])
    outer_enter = [e for e in _ops_of_type(fresh_graph, "Enter") if e.inputs[0] is x]
    assert len(outer_enter) == 1
    assert outer_enter[0].get_attr("frame_name") == "while"
    inner_enter = [
        e for e in _ops_of_type(fresh_graph, "Enter") if e.inputs[0] is outer_enter[0].outputs[0]
    ]
    assert len(inner_enter) == 1
    assert inner_enter[0].get_attr("frame_name") == "while/while"
    assert inner_enter[0].get_attr("is_constant") is True
    inner_ctx = control_flow_context_of(inner_enter[0])
    assert inner_ctx.outer_context is control_flow_context_of(outer_enter[0])
    assert len(fresh_graph.get_collection(df.GraphKeys.WHILE_CONTEXT)) == 2


def test_inner_loop_variable_entering_from_an_invariant_is_gated_by_the_outer_pivot(fresh_graph):
    x = df.placeholder(df.float32, shape=[], name="x")

    def outer_body(i):
        df.while_loop(lambda a: a < 5.0, lambda a: a + 1.0, [x])
        return i + 1

    df.while_loop(lambda i: i < 3, outer_body, [0])
    inner_var_enter = [
        e
        for e in _ops_of_type(fresh_graph, "Enter")
        if e.get_attr("frame_name") == "while/while" and not e.get_attr("is_constant")
    ]
    assert [c.name for c in inner_var_enter[0].control_inputs] == ["while/Identity"]


def test_maximum_iterations_adds_a_counter_and_ands_its_bound(fresh_graph):
    r = df.while_loop(lambda i: i < 10, lambda i: i + 1, [df.constant(0)], maximum_iterations=4)
    assert r.op.type == "Exit"
    (ctx,) = fresh_graph.get_collection(df.GraphKeys.WHILE_CONTEXT)
    assert len(ctx.loop_enters) == 2
    assert ctx.loop_enters[0].inputs[0].op.name == "while/iteration_counter"
    assert ctx.maximum_iterations.op.name == "while/maximum_iterations"
    assert ctx.loop_cond.inputs[0].op.type == "LogicalAnd"
    assert r is ctx.exits[1].outputs[0]


def test_maximum_iterations_accepts_a_singleton_list_body_and_structures():
    r = df.while_loop(lambda i: i < 10, lambda i: [i + 1], [df.constant(0)], maximum_iterations=3)
    assert isinstance(r, df.Tensor)
    a, b = df.while_loop(lambda a, b: a < b, lambda a, b: (a + 1, b), [0, 5], maximum_iterations=2)
    assert a.op.type == b.op.type == "Exit"


def test_a_single_loop_variable_comes_back_bare_unless_same_structure_is_asked():
    i = df.constant(0)
    assert isinstance(df.while_loop(lambda i: i < 3, lambda i: i + 1, [i]), df.Tensor)
    assert isinstance(df.while_loop(lambda i: i < 3, lambda i: (i + 1,), (i,)), df.Tensor)
    r = df.while_loop(lambda i: i < 3, lambda i: [i + 1], [i], return_same_structure=True)
    assert isinstance(r, list) and len(r) == 1


def test_structures_of_loop_variables_are_passed_and_returned():
    Pair = collections.namedtuple("Pair", "j k")
    loop_vars = (
        df.constant(0),
        Pair(df.constant(1), {"a": df.constant(2.0), "b": [df.constant(3)]}),
    )

    def body(i, p):
        return i + 1, Pair(p.j + 1, {"a": p.k["a"] * 2.0, "b": [p.k["b"][0] - 1]})

    i, p = df.while_loop(lambda i, p: i < 3, body, loop_vars)
    assert isinstance(p, Pair) and isinstance(p.k, dict) and isinstance(p.k["b"], list)
    assert p.k["a"].dtype is df.float32 and p.k["a"].op.type == "Exit"


def test_a_dict_variable_in_a_list_may_be_returned_bare():
    d = {"a": df.constant(0), "b": df.constant(1.0)}
    r = df.while_loop(lambda d: d["a"] < 3, lambda d: {"a": d["a"] + 1, "b": d["b"]}, [d])
    assert isinstance(r, list) and set(r[0]) == {"a", "b"}


def test_shape_invariants_relax_the_loop_variable_shapes():
    m0 = df.ones([2, 2])
    i, m = df.while_loop(
        lambda i, m: i < 3,
        lambda i, m: (i + 1, df.concat([m, m], axis=0)),
        [df.constant(0), m0],
        shape_invariants=[df.TensorShape([]), df.TensorShape([None, 2])],
    )
    assert m.shape.as_list() == [None, 2]
    i, m = df.while_loop(
        lambda i, m: i < 3,
        lambda i, m: (i + 1, df.concat([m, m], axis=0)),
        [df.constant(0), m0],
        shape_invariants=[None, [None, 2]],
    )
    assert m.shape.as_list() == [None, 2]


def test_loop_variables_enter_with_their_own_shape_or_their_invariant(fresh_graph):
    x = df.placeholder(df.float32, shape=[2, 3])
    grown = df.placeholder(df.float32, shape=[1])
    df.while_loop(
        lambda i, same, longer: i < 2,
        lambda i, same, longer: (i + 1, same * 2.0, df.concat([longer, longer], 0)),
        [df.constant(0), x, grown],
        shape_invariants=[None, None, df.TensorShape([None])],
    )
    entered = {op.inputs[0]: op.outputs[0] for op in _ops_of_type(fresh_graph, "Enter")}
    assert entered[x].shape.as_list() == [2, 3]  # the raw Enter's shape is unknown
    assert entered[grown].shape.as_list() == [None]


def test_gradients_through_a_loop_keep_the_static_shapes():
    x = df.placeholder(df.float32, shape=[3, 4])
    w = df.placeholder(df.float32, shape=[])
    _, y = df.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * w), [0, x])
    dx, dw = df.gradients(df.reduce_sum(y), [x, w])
    assert dx.shape.as_list() == [3, 4] and dw.shape.as_list() == []


def test_control_dependency_on_an_op_outside_the_loop_is_routed_through_an_enter(fresh_graph):
    init = df.no_op(name="init")

    def body(i):
        one = df.constant(1)  # outside the block: an input made inside would carry the edge
        with df.control_dependencies([init]):
            return i + one

    df.while_loop(lambda i: i < 3, body, [df.constant(0)])
    add = _op(fresh_graph, "while/add")
    assert init not in add.control_inputs
    (proxy,) = [c for c in add.control_inputs if c.name.endswith("control_dependency")]
    assert proxy.type == "Identity"
    entered = proxy.inputs[0].op
    assert entered.type == "Enter" and entered.get_attr("is_constant") is True
    token = entered.inputs[0].op
    assert token.control_inputs == [init]
    assert control_flow_context_of(token) is None
    # The proxy reads only a loop invariant, so the pivot gates it.
    assert [c.name for c in proxy.control_inputs] == ["while/Identity"]


def test_control_dependencies_around_a_loop_go_on_its_entering_values(fresh_graph):
    first = df.no_op(name="first")
    start = df.constant(0)  # made outside the block, so the Enter itself carries the edge
    with df.control_dependencies([first]):
        df.while_loop(lambda i: i < 3, lambda i: i + 1, [start])
    assert _op(fresh_graph, "while/Enter").control_inputs == [first]
    for name in ("while/Merge", "while/Switch", "while/LoopCond", "while/Exit"):
        assert not _op(fresh_graph, name).control_inputs, name


# -- errors ----------------------------------------------------------------------------------------
def test_body_returning_a_different_structure_names_where():
    with pytest.raises(ValueError) as info:
        df.while_loop(lambda i, j: i < 3, lambda i, j: (i + 1, [j, j]), [0, 1])
    message = str(info.value)
    assert "structure of loop_vars" in message and "[1]" in message
    assert "test_while_graph.py" in message


def test_body_returning_a_different_dtype_names_the_variable_and_both_dtypes():
    with pytest.raises(TypeError) as info:
        df.while_loop(
            lambda i, x: i < 3, lambda i, x: (i + 1, df.cast(x, df.int32)), [0, df.constant(1.0)]
        )
    message = str(info.value)
    assert "loop_vars[1]" in message and "float32" in message and "int32" in message


def test_changing_a_static_shape_without_invariants_explains_the_fix():
    with pytest.raises(ValueError) as info:
        df.while_loop(
            lambda i, m: i < 3,
            lambda i, m: (i + 1, df.concat([m, m], axis=0)),
            [df.constant(0), df.ones([2, 2], name="m0")],
        )
    message = str(info.value)
    assert "'m0:0'" in message and "loop_vars[1]" in message
    assert "(2, 2)" in message and "(4, 2)" in message
    assert "shape_invariants" in message and "TensorShape([None, 2])" in message


def test_a_shape_invariant_must_admit_the_initial_shape():
    with pytest.raises(ValueError, match="not compatible with the initial shape"):
        df.while_loop(
            lambda m: True, lambda m: m, [df.ones([2])], shape_invariants=[df.TensorShape([3])]
        )
    with pytest.raises(ValueError, match="structure of loop_vars"):
        df.while_loop(
            lambda a, b: True, lambda a, b: (a, b), [1, 2], shape_invariants=[df.TensorShape([])]
        )


def test_cond_must_return_a_bool_scalar():
    with pytest.raises(TypeError, match="bool scalar"):
        df.while_loop(lambda i: i, lambda i: i + 1, [0])
    with pytest.raises(TypeError, match="bool scalar"):
        df.while_loop(lambda i: 1, lambda i: i + 1, [0])


def test_cond_may_return_a_python_bool_as_in_tensorflow():
    never = df.while_loop(lambda i: False, lambda i: i + 1, [0])
    bounded = df.while_loop(lambda i: True, lambda i: i + 1, [0], maximum_iterations=4)
    with df.Session() as sess:
        assert sess.run([never, bounded]) == [0, 4]


def test_a_value_from_inside_a_loop_cannot_be_used_after_it():
    leaked = []

    def body(i):
        leaked.append(i * 2)
        return i + 1

    result = df.while_loop(lambda i: i < 3, body, [0])
    assert (result + 1).op.type == "Add"  # the loop's result is usable
    with pytest.raises(ValueError) as info:
        df.add(leaked[0], 1)
    message = str(info.value)
    assert "inside while loop 'while'" in message and "'while/mul'" in message
    assert "test_while_graph.py" in message
    with pytest.raises(ValueError, match="inside while loop 'while'"):
        with df.control_dependencies([leaked[0].op]):
            df.constant(1)


def _constant_made_in_a_loop():
    made = []

    def body(i):
        if not made:
            made.append(df.constant(1))
        return i + made[0]

    df.while_loop(lambda i: i < 10, body, [0])
    return made[0]


def test_a_loop_value_used_outside_it_is_refused_in_tensorflows_words(fresh_graph):
    # The first sentences of TensorFlow 1.x's errors (control_flow_ops_py_test.py,
    # ControlFlowContextCheckTest): the consumer named as it would be, and why.
    escaped = _constant_made_in_a_loop()
    with pytest.raises(ValueError) as info:
        df.add(1, escaped)
    assert str(info.value).startswith(
        "Cannot use 'while/Const_1' as input to 'Add' because 'while/Const_1' is in a while "
        "loop. See info log for more details: 'while/Const_1' (created at "
    )
    with pytest.raises(ValueError, match="as input to 'cond/Add' because 'while/Const_1' is in"):
        df.cond(df.less(1, 2), lambda: df.add(1, escaped), lambda: df.constant(0))
    with pytest.raises(ValueError, match="as input to 'while_1/Add' because they are in diff"):
        df.while_loop(lambda i: i < 10, lambda i: df.add(1, escaped), [0])
    with pytest.raises(ValueError, match="to 'while_2/NextIteration' because they are in diff"):
        df.while_loop(lambda i: i < 10, lambda i: escaped, [0])


def test_body_returning_too_few_values_is_refused_in_tensorflows_words():
    # tf.compat.v1.while_loop raises ValueError "The two structures don't have the same nested
    # structure ... The two structures don't have the same number of elements" here.
    pair = (df.constant(2.0), df.constant(3.0))
    with pytest.raises(ValueError) as info:
        df.while_loop(lambda a, b, c: a < 100.0, lambda a, b, c: [a, b], [1.0, pair, 4.0])
    message = str(info.value)
    assert "The two structures don't have the same nested structure" in message
    assert "don't have the same number of elements: 3 vs 2" in message


def test_bad_arguments_are_rejected_like_tensorflow():
    with pytest.raises(TypeError, match="'cond' must be callable"):
        df.while_loop(True, lambda i: i, [0])
    with pytest.raises(TypeError, match="'body' must be callable"):
        df.while_loop(lambda i: True, None, [0])
    with pytest.raises(TypeError, match="parallel_iterations"):
        df.while_loop(lambda i: i < 1, lambda i: i, [0], parallel_iterations=0)
    with pytest.raises(TypeError, match="loop_vars"):
        df.while_loop(lambda i: i < 1, lambda i: i, df.constant(0))
    with pytest.raises(ValueError, match="loop_vars"):
        df.while_loop(lambda: True, lambda: (), [])
    with pytest.raises(ValueError, match="scalar"):
        df.while_loop(lambda i: i < 1, lambda i: i, [0], maximum_iterations=[1, 2])


def test_a_value_from_inside_a_loop_cannot_be_used_in_another_loop(fresh_graph):
    leaked = []

    def body(i):
        leaked.append(i * 2)
        return i + 1

    df.while_loop(lambda i: i < 3, body, [0])
    with pytest.raises(ValueError, match="inside while loop 'while'"):
        df.while_loop(lambda j: j < leaked[0], lambda j: j + 1, [0])
    assert fresh_graph._control_flow_context is None


def test_a_control_input_from_inside_another_loop_is_rejected():
    leaked = []

    def body(i):
        leaked.append((i * 2).op)
        return i + 1

    df.while_loop(lambda i: i < 3, body, [0])

    def other(j):
        with df.control_dependencies(leaked):
            return df.add(j, 1)

    with pytest.raises(ValueError, match="control input"):
        df.while_loop(lambda j: j < 3, other, [0])


def test_a_loop_variable_that_changes_shape_is_refused_in_tf1s_words_then_ours():
    i = df.constant(0)
    m = df.ones([2, 2])
    with pytest.raises(ValueError) as info:
        df.while_loop(lambda i, j: i < 2, lambda i, j: [i + 1, df.concat([j, j], 0)], [i, m])
    message = str(info.value)
    assert re.search(
        r"\(2, 2\), but has shape \(4, 2\) after one iteration\. To allow the shape to vary "
        r"across iterations, use the `shape_invariants` argument of tf\.while_loop to specify "
        r"a less-specific shape\.",
        message,
    )
    assert "loop_vars[1]" in message and "test_while_graph.py" in message

"""The graphs `cond` builds, its records, and its build-time errors (no Session needed)."""

import collections

import pytest

import dataflow as df
import primitives
from primitives import CondContext, WhileContext, control_flow_context_of


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def _ops_of_type(graph, op_type):
    return [op for op in graph.get_operations() if op.type == op_type]


def test_pivots_are_identities_of_switch_pred_pred(fresh_graph):
    p = df.placeholder(df.bool, shape=[], name="p")
    r = df.cond(p, lambda: df.constant(1.0), lambda: df.constant(2.0))
    switch = fresh_graph.get_operation_by_name("cond/Switch")
    assert list(switch.inputs) == [p, p]
    t = fresh_graph.get_operation_by_name("cond/switch_t")
    f = fresh_graph.get_operation_by_name("cond/switch_f")
    assert t.type == f.type == "Identity"
    assert t.inputs[0] is switch.outputs[1] and f.inputs[0] is switch.outputs[0]
    assert r.op.type == "Merge"


def test_each_result_is_a_merge_of_false_then_true():
    p = df.placeholder(df.bool, shape=[])
    r = df.cond(p, lambda: df.constant(1.0, name="yes"), lambda: df.constant(2.0, name="no"))
    assert r.value_index == 0
    assert [t.op.name for t in r.op.inputs] == ["cond/no", "cond/yes"]


def test_ops_without_data_inputs_get_the_branch_pivot_as_control_input(fresh_graph):
    p = df.placeholder(df.bool, shape=[])
    df.cond(p, lambda: df.constant(1.0, name="yes"), lambda: df.constant(2.0, name="no"))
    yes = fresh_graph.get_operation_by_name("cond/yes")
    no = fresh_graph.get_operation_by_name("cond/no")
    assert [c.name for c in yes.control_inputs] == ["cond/switch_t"]
    assert [c.name for c in no.control_inputs] == ["cond/switch_f"]


def test_external_tensors_enter_through_one_switch_per_tensor_and_branch(fresh_graph):
    p = df.placeholder(df.bool, shape=[])
    x = df.placeholder(df.float32, shape=[], name="x")
    df.cond(p, lambda: x * x + x, lambda: x - 1.0)
    switches = [s for s in _ops_of_type(fresh_graph, "Switch") if s.inputs[0] is x]
    assert len(switches) == 2
    by_branch = {control_flow_context_of(s).branch: s for s in switches}
    assert set(by_branch) == {0, 1}
    for branch, s in by_branch.items():
        assert s.inputs[1] is p
        # Only the branch's own output is used.
        assert [bool(out.consumers()) for out in s.outputs] == [branch == 0, branch == 1]
    # x * x + x reads the true branch's Switch three times.
    assert {op.name for op in by_branch[1].outputs[1].consumers()} == {"cond/mul", "cond/add"}


def test_a_branch_returning_an_outside_tensor_returns_it_through_a_switch():
    p = df.placeholder(df.bool, shape=[])
    x = df.constant(1.0)
    y = df.constant(2.0)
    r = df.cond(p, lambda: x, lambda: y)
    false_in, true_in = r.op.inputs
    assert true_in.op.type == "Switch" and true_in.op.inputs[0] is x and true_in.value_index == 1
    assert false_in.op.type == "Switch" and false_in.op.inputs[0] is y
    assert false_in.value_index == 0


def test_cond_records_one_context_per_branch(fresh_graph):
    p = df.placeholder(df.bool, shape=[])
    r = df.cond(p, lambda: df.constant(1.0, name="yes"), lambda: df.constant(2.0, name="no"))
    contexts = fresh_graph.get_collection(df.GraphKeys.COND_CONTEXT)
    assert len(contexts) == 2
    true_ctx, false_ctx = sorted(contexts, key=lambda c: -c.branch)
    assert isinstance(true_ctx, CondContext)
    assert (true_ctx.name, false_ctx.name) == ("cond", "cond")
    assert (true_ctx.branch, false_ctx.branch) == (1, 0)
    assert true_ctx.pred is p and false_ctx.pred is p
    assert true_ctx.pivot.op.name == "cond/switch_t"
    assert false_ctx.pivot.op.name == "cond/switch_f"
    assert true_ctx.outer_context is None
    assert control_flow_context_of(fresh_graph.get_operation_by_name("cond/yes")) is true_ctx
    assert control_flow_context_of(true_ctx.pivot) is true_ctx
    assert control_flow_context_of(r) is None
    assert "cond" in repr(true_ctx) and "true" in repr(true_ctx)


def test_cond_names_are_unique_scopes():
    p = df.placeholder(df.bool, shape=[])
    a = df.cond(p, lambda: df.constant(1), lambda: df.constant(2))
    b = df.cond(p, lambda: df.constant(1), lambda: df.constant(2))
    with df.name_scope("outer"):
        c = df.cond(p, lambda: df.constant(1), lambda: df.constant(2), name="pick")
    assert [t.op.name for t in (a, b, c)] == ["cond/Merge", "cond_1/Merge", "outer/pick/Merge"]


def test_singleton_results_are_unpacked_unless_strict():
    p = df.placeholder(df.bool, shape=[])
    r = df.cond(p, lambda: [df.constant(1)], lambda: [df.constant(2)])
    assert isinstance(r, df.Tensor)
    r = df.cond(p, lambda: [df.constant(1)], lambda: [df.constant(2)], strict=True)
    assert isinstance(r, list) and len(r) == 1
    # Like TensorFlow 1.x, a singleton list and a bare tensor are compatible when not strict.
    r = df.cond(p, lambda: [df.constant(1)], lambda: df.constant(2))
    assert isinstance(r, df.Tensor)


def test_nested_structures_come_back_in_the_true_branch_structure():
    Pair = collections.namedtuple("Pair", "a b")
    p = df.placeholder(df.bool, shape=[])
    r = df.cond(
        p,
        lambda: {"x": Pair(df.constant(1), df.constant(2.0)), "y": [df.constant(3)]},
        lambda: {"x": Pair(df.constant(4), df.constant(5.0)), "y": [df.constant(6)]},
    )
    assert isinstance(r["x"], Pair) and isinstance(r["y"], list)
    assert r["x"].b.dtype is df.float32
    assert all(t.op.type == "Merge" for t in primitives.nest.flatten(r))


def test_an_operation_result_becomes_a_bool_tensor_gated_by_the_op():
    p = df.placeholder(df.bool, shape=[])
    r = df.cond(p, lambda: df.no_op(name="a"), lambda: df.no_op(name="b"))
    assert r.dtype is df.bool and r.op.type == "Merge"
    true_side = r.op.inputs[1].op
    assert true_side.type == "Identity" and true_side.inputs[0].op.name == "cond/switch_t"
    assert [c.name for c in true_side.control_inputs] == ["cond/a"]


def test_python_values_returned_by_a_branch_become_gated_constants():
    p = df.placeholder(df.bool, shape=[])
    r = df.cond(p, lambda: 1.0, lambda: 2.0)
    for t in r.op.inputs:
        assert t.op.type == "Const" and t.op.control_inputs


def test_nested_cond_captures_level_by_level(fresh_graph):
    p = df.placeholder(df.bool, shape=[], name="p")
    q = df.placeholder(df.bool, shape=[], name="q")
    x = df.placeholder(df.float32, shape=[], name="x")

    def outer_true():
        return df.cond(q, lambda: x + 1.0, lambda: df.constant(0.0))

    df.cond(p, outer_true, lambda: df.constant(5.0))
    inner_switches = [
        s for s in _ops_of_type(fresh_graph, "Switch") if s.inputs[0].op.type == "Switch"
    ]
    # x enters the outer true branch (Switch(x, p):1), then the inner true branch.
    x_inner = [s for s in inner_switches if s.inputs[0].op.inputs[0] is x]
    assert len(x_inner) == 1
    assert x_inner[0].inputs[0].value_index == 1
    assert x_inner[0].inputs[0].op.inputs[1] is p
    inner_ctx = control_flow_context_of(x_inner[0])
    assert inner_ctx.name == "cond/cond" and inner_ctx.outer_context.name == "cond"
    assert inner_ctx.pred.op.type == "Switch" and inner_ctx.pred.op.inputs[0] is q
    assert len(fresh_graph.get_collection(df.GraphKeys.COND_CONTEXT)) == 4


def test_control_dependency_inside_a_branch_is_kept_and_the_pivot_still_gates(fresh_graph):
    p = df.placeholder(df.bool, shape=[])
    outside = df.no_op(name="outside")

    def branch():
        with df.control_dependencies([outside]):
            return df.constant(1.0, name="c")

    df.cond(p, branch, lambda: df.constant(2.0))
    c = fresh_graph.get_operation_by_name("cond/c")
    assert {x.name for x in c.control_inputs} == {"outside", "cond/switch_t"}


def test_control_dependencies_around_cond_apply_to_its_entry_switch(fresh_graph):
    p = df.placeholder(df.bool, shape=[])
    first = df.no_op(name="first")
    with df.control_dependencies([first]):
        df.cond(p, lambda: df.constant(1.0), lambda: df.constant(2.0))
    assert [c.name for c in fresh_graph.get_operation_by_name("cond/Switch").control_inputs] == [
        "first"
    ]
    assert not fresh_graph.get_operation_by_name("cond/Merge").control_inputs


# -- errors ----------------------------------------------------------------------------------------
def test_branches_with_different_structures_name_the_leaf_and_the_caller():
    p = df.placeholder(df.bool, shape=[])
    with pytest.raises(ValueError) as info:
        df.cond(
            p,
            lambda: (df.constant(1), df.constant(2)),
            lambda: (df.constant(1), [df.constant(2), df.constant(3)]),
        )
    message = str(info.value)
    assert "Incompatible return values of 'true_fn' and 'false_fn'" in message
    assert "[1]" in message and "test_cond_graph.py" in message


def test_branches_with_different_sequence_types_are_a_type_error():
    p = df.placeholder(df.bool, shape=[])
    with pytest.raises(TypeError, match="Incompatible return types"):
        df.cond(p, lambda: (1, 2), lambda: [1, 2])


def test_branches_with_different_dtypes_name_the_leaf_and_both_dtypes():
    p = df.placeholder(df.bool, shape=[])
    with pytest.raises(ValueError) as info:
        df.cond(p, lambda: {"a": df.constant(1)}, lambda: {"a": df.constant(1.0)})
    message = str(info.value)
    assert "same type" in message and "result['a']" in message
    assert "int32" in message and "float32" in message
    assert "test_cond_graph.py" in message


def test_pred_must_be_a_bool_scalar_tensor():
    with pytest.raises(TypeError, match="bool"):
        df.cond(df.constant(1), lambda: 1, lambda: 2)
    with pytest.raises(ValueError, match="scalar"):
        df.cond(df.constant([True]), lambda: 1, lambda: 2)
    with pytest.raises(TypeError, match="Python bool"):
        df.cond(True, lambda: 1, lambda: 2)


def test_branch_functions_must_be_callable():
    p = df.placeholder(df.bool, shape=[])
    with pytest.raises(TypeError, match="'true_fn' argument required"):
        df.cond(p)
    with pytest.raises(TypeError, match="'false_fn' must be callable"):
        df.cond(p, lambda: 1, df.constant(2))


def test_a_branch_must_return_something():
    p = df.placeholder(df.bool, shape=[])
    with pytest.raises(ValueError, match="'false_fn' must have a return value"):
        df.cond(p, lambda: 1, lambda: None)
    with pytest.raises(ValueError, match="at least one result"):
        df.cond(p, lambda: [], lambda: [])
    with pytest.raises(TypeError, match=r"result\[1\]"):
        df.cond(p, lambda: [1, None], lambda: [1, 2])


def test_a_failed_branch_leaves_no_active_context(fresh_graph):
    p = df.placeholder(df.bool, shape=[])

    def broken():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        df.cond(p, broken, lambda: 1)
    assert fresh_graph._control_flow_context is None
    assert df.constant(1.0).op.control_inputs == []


def test_a_cond_inside_a_loop_enters_outside_tensors_then_switches_them(fresh_graph):
    p = df.placeholder(df.bool, shape=[], name="p")
    x = df.placeholder(df.float32, shape=[], name="x")

    def body(v):
        return df.cond(p, lambda: v + x, lambda: v)

    df.while_loop(lambda v: v < 10.0, body, [df.constant(0.0)])
    switch = fresh_graph.get_operation_by_name("while/cond/Switch")
    entered_p = switch.inputs[0]
    assert entered_p.op.type == "Enter" and entered_p.op.inputs[0] is p
    assert entered_p.op.get_attr("is_constant") is True
    # Switch(pred, pred) sees only loop invariants, so the loop's pivot gates it.
    assert [c.name for c in switch.control_inputs] == ["while/Identity"]
    ctx = control_flow_context_of(fresh_graph.get_operation_by_name("while/cond/switch_t"))
    assert ctx.pred is entered_p
    assert isinstance(ctx.outer_context, WhileContext)
    x_switch = [
        s
        for s in _ops_of_type(fresh_graph, "Switch")
        if s.inputs[0].op.type == "Enter" and s.inputs[0].op.inputs[0] is x
    ]
    assert len(x_switch) == 1 and x_switch[0].inputs[1] is entered_p
    assert [c.name for c in x_switch[0].control_inputs] == ["while/Identity"]

"""Each node kind on its own: the firing rules of ``docs/control-flow-semantics.md``, one by one."""

import numpy as np
import pytest
from executor_builder import Builder, identity

import executor
from executor import FetchNotLiveError, Node, NodeKind, Program


def run(builder_or_program, fetches=(), args=(), **kwargs):
    program = (
        builder_or_program.program(fetches)
        if isinstance(builder_or_program, Builder)
        else builder_or_program
    )
    return executor.prepare(program).run(args, **kwargs)


def fetch_states(builder, fetches, args=()):
    """The value of each fetch, or "dead" / "never produced"."""
    try:
        return run(builder, fetches, args)
    except FetchNotLiveError as e:
        states = {position: state for position, _, state in e.missing}
    values = []
    for position in range(len(fetches)):
        values.append(states.get(position, "live"))
    return values


def dead_value(b: Builder):
    """A dead value in the root frame: an op fed by the untaken output of a Switch."""
    x = b.const(0.0, name="unused")
    return b.op(identity, b.switch(x, b.const(False, name="false"))[1], name="dead")


# -- OP and ARG -----------------------------------------------------------------------------------


def test_op_runs_its_kernel_on_its_inputs():
    b = Builder()
    x, y = b.arg("x"), b.arg("y")
    total = b.op(np.add, x, y)
    assert run(b, [total], (np.float64(2), np.float64(3))) == [5.0]


def test_arg_k_takes_args_k_in_arg_nodes_order():
    b = Builder()
    first, second = b.arg("first"), b.arg("second")
    difference = b.op(np.subtract, first, second)
    assert run(b, [difference, first], (10, 4)) == [6, 10]


def test_wrong_number_of_args_is_a_type_error():
    b = Builder()
    b.arg("x")
    plan = executor.prepare(b.program())
    with pytest.raises(TypeError, match="takes 1 argument"):
        plan.run(())


def test_op_with_several_outputs_returns_a_sequence():
    b = Builder()
    x = b.arg()
    low, high = b.op(lambda v: (v - 1, v + 1), x, num_outputs=2)
    assert run(b, [high, low], (5,)) == [6, 4]


def test_op_returning_the_wrong_number_of_outputs_is_a_kernel_error():
    b = Builder()
    x = b.arg()
    outputs = b.op(lambda v: (v,), x, num_outputs=2, name="bad")
    with pytest.raises(executor.KernelError, match="'bad'") as info:
        run(b, [outputs[0]], (5,))
    assert isinstance(info.value.cause, ValueError)


def test_op_with_no_outputs_runs_for_its_effect():
    effects = []
    b = Builder()
    x = b.arg()
    effect = b.op(lambda v: effects.append(v), x, num_outputs=0, name="effect")
    assert executor.prepare(b.program([], targets=[effect])).run((7,)) == []
    assert effects == [7]


def test_op_with_a_dead_input_runs_no_kernel_and_is_dead():
    calls = []
    b = Builder()
    y = b.op(lambda v: calls.append(v) or v, dead_value(b))
    assert fetch_states(b, [y]) == ["dead"]
    assert calls == []


def test_dead_control_input_makes_an_op_dead():
    calls = []
    b = Builder()
    x = b.const(1.0)
    y = b.op(lambda v: calls.append(v) or v, x, control=[dead_value(b)])
    assert fetch_states(b, [y]) == ["dead"]
    assert calls == []


def test_live_control_input_orders_execution():
    order = []
    b = Builder()
    first = b.op(lambda: order.append("first"), name="first")
    second = b.op(lambda: order.append("second") or 2, name="second")
    then = b.op(lambda: order.append("then") or 3, name="then", control=[first])
    assert run(b, [then, second]) == [3, 2]
    assert order.index("first") < order.index("then")


# -- SWITCH ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("pred, live_output", [(True, 1), (False, 0)])
def test_switch_sends_data_to_the_output_the_pred_selects_and_dead_to_the_other(pred, live_output):
    b = Builder()
    outputs = b.switch(b.const(42.0), b.const(pred))
    states = fetch_states(b, list(outputs))
    assert states[live_output] == "live"
    assert states[1 - live_output] == "dead"
    b2 = Builder()
    outputs = b2.switch(b2.const(42.0), b2.const(pred))
    assert run(b2, [outputs[live_output]]) == [42.0]


def test_switch_accepts_numpy_bool_pred():
    b = Builder()
    _, true_output = b.switch(b.const(1.5), b.const(np.bool_(True)))
    assert run(b, [true_output]) == [1.5]


def test_switch_with_dead_pred_has_both_outputs_dead():
    b = Builder()
    outputs = b.switch(b.const(1.0), dead_value(b))
    assert fetch_states(b, list(outputs)) == ["dead", "dead"]


def test_switch_with_dead_data_has_both_outputs_dead():
    b = Builder()
    outputs = b.switch(dead_value(b), b.const(True))
    assert fetch_states(b, list(outputs)) == ["dead", "dead"]


def test_switch_pred_without_truth_value_is_a_kernel_error_of_the_switch():
    b = Builder()
    outputs = b.switch(b.const(1.0), b.const(np.array([True, False])), name="the_switch")
    with pytest.raises(executor.KernelError, match="the_switch") as info:
        run(b, [outputs[1]])
    assert isinstance(info.value.cause, ValueError)


# -- MERGE ----------------------------------------------------------------------------------------


def test_merge_passes_its_live_input_and_its_position():
    b = Builder()
    output, value_index = b.merge(dead_value(b), b.const(7.0))
    value, index = run(b, [output, value_index])
    assert value == 7.0
    assert index == 1 and type(index) is np.int32


def test_merge_first_live_input_wins_and_late_inputs_are_dropped():
    # ``late`` is made ready only after ``early`` has fired (control edge), and its value
    # reaches the Merge after the Merge has taken ``early``'s.
    for early_position in (0, 1):
        b = Builder()
        early = b.const(1.0, name="early")
        late = b.op(lambda: 2.0, name="late", control=[early])
        inputs = (early, late) if early_position == 0 else (late, early)
        output, value_index = b.merge(*inputs)
        assert run(b, [output, value_index]) == [1.0, early_position]


@pytest.mark.parametrize("first_position", [0, 1])
def test_merge_waiting_for_a_control_input_keeps_the_first_live_input_not_the_last(
    first_position,
):
    # Both data inputs arrive live while the Merge still waits for ``gate``: ``second`` runs
    # after ``first`` has delivered, and ``gate`` after ``second``.
    b = Builder()
    first = b.const("first", name="first")
    second = b.op(lambda: "second", name="second", control=[first])
    gate = b.op(lambda: None, name="gate", control=[second], num_outputs=0)
    inputs = (first, second) if first_position == 0 else (second, first)
    output, value_index = b.merge(*inputs, name="merge", control=[gate])
    assert run(b, [output, value_index]) == ["first", first_position]


@pytest.mark.parametrize("gated", [False, True])
def test_a_second_live_input_in_the_same_iteration_is_dropped(gated):
    # ``second`` arrives while the Merge waits for ``gate`` (gated), or once the Merge has
    # fired: the Merge and ``after`` are both consumers of ``first``, and siblings run in
    # program order, so ``second``, which waits for ``after``, runs after the Merge fired.
    b = Builder()
    first = b.const(1.0, name="first")
    output, value_index = b.merge(first, first, name="merge")
    after = b.op(identity, first, name="after")
    second = b.op(lambda: 2.0, name="second", control=[after])
    merge = b.nodes[output[0]]
    merge.inputs[1] = second
    if gated:
        merge.control_inputs.append(b.op(lambda: None, name="gate", control=[second])[0])
    assert run(b, [output, value_index]) == [1.0, 0]


def test_merge_in_a_frame_keeps_the_first_live_input_of_the_iteration():
    # The same rule in iteration 0 of a child frame, where a Merge without back edges expects
    # every input: ``second`` runs after ``first`` has delivered, ``gate`` after ``second``.
    b = Builder()
    first = b.enter(b.const("first", name="outside"), "frame", name="enter")
    second = b.op(lambda: "second", name="second", control=[first])
    gate = b.op(lambda: None, name="gate", control=[second], num_outputs=0)
    output, value_index = b.merge(second, first, name="merge", control=[gate])
    assert run(b, [b.exit(output), b.exit(value_index)]) == ["first", 1]


def test_merge_with_every_input_dead_has_both_outputs_dead():
    b = Builder()
    outputs = b.merge(dead_value(b), dead_value(b))
    assert fetch_states(b, list(outputs)) == ["dead", "dead"]


def test_merge_waits_for_its_control_inputs():
    order = []
    b = Builder()
    data = b.const(5.0, name="data")
    gate = b.op(lambda v: order.append("gate"), b.op(identity, data), name="gate")
    output, _ = b.merge(data, name="merge", control=[gate])
    after = b.op(lambda v: order.append("after") or v, output)
    assert run(b, [after]) == [5.0]
    assert order == ["gate", "after"]


def test_merge_with_dead_control_input_is_dead():
    b = Builder()
    outputs = b.merge(b.const(1.0), control=[dead_value(b)])
    assert fetch_states(b, list(outputs)) == ["dead", "dead"]


def test_merge_of_a_cond_never_runs_the_untaken_side():
    b = Builder()
    pred = b.arg("pred")
    x = b.const(3.0)
    false_side, true_side = b.switch(x, pred)
    doubled = b.op(lambda v: 2 * v, true_side)
    negated = b.op(lambda v: -v, false_side)
    output, index = b.merge(negated, doubled)
    assert run(b, [output, index], (True,)) == [6.0, 1]
    assert run(b, [output, index], (False,)) == [-3.0, 0]


# -- ENTER, EXIT, NEXT_ITERATION ------------------------------------------------------------------


def test_enter_and_exit_carry_a_value_into_a_frame_and_out():
    b = Builder()
    inside = b.enter(b.arg(), "frame")
    out = b.exit(b.op(lambda v: v + 1, inside))
    assert run(b, [out], (1,)) == [2]


def test_enter_delivers_a_dead_input_dead_and_exit_delivers_dead_at_completion():
    b = Builder()
    inside = b.enter(dead_value(b), "frame")
    out = b.exit(b.op(identity, inside))
    assert fetch_states(b, [out]) == ["dead"]


def test_exit_that_never_fires_delivers_dead_when_its_instance_completes():
    b = Builder()
    x = b.enter(b.const(1.0), "frame")
    _, never = b.switch(x, b.op(lambda v: False, x))
    out = b.exit(never, name="exit_of_untaken_output")
    assert fetch_states(b, [out]) == ["dead"]


def test_non_constant_enter_delivers_to_iteration_zero_only():
    # A loop of 3 iterations where a value entered non-constant is used by an op that also
    # needs the iteration's counter: it can fire in iteration 0 only.
    calls = []
    b = Builder()
    frame = "loop"
    once = b.enter(b.const(10), frame, name="once")

    def cond(loop):
        return b.op(lambda i: i < 3, loop.vars[0])

    def body(loop):
        b.op(lambda i, v: calls.append(int(i)), loop.vars[0], once, num_outputs=0)
        return [b.op(lambda i: i + 1, loop.vars[0])]

    # The op that uses ``once`` lives in the loop frame; build the loop by hand around it.
    (result,) = b.while_loop(cond, body, [b.const(0)], name=frame)
    assert run(b, [result]) == [3]
    assert calls == [0]


def test_constant_enter_delivers_to_every_iteration():
    calls = []
    b = Builder()
    n = b.arg("n")

    def cond(loop):
        return b.op(lambda i, limit: i < limit, loop.vars[0], loop.outer(n))

    def body(loop):
        step = loop.outer(b.const(2, name="step"))
        b.op(lambda s: calls.append(int(s)), step, num_outputs=0, control=[loop.pivot])
        return [b.op(lambda i, s: i + s, loop.vars[0], step)]

    (result,) = b.while_loop(cond, body, [b.const(0)])
    assert run(b, [result], (7,)) == [8]
    assert calls == [2, 2, 2, 2]


def test_next_iteration_moves_a_live_value_to_the_next_iteration_and_stops_a_dead_one():
    seen = []
    b = Builder()

    def cond(loop):
        return b.op(lambda i: i < 4, loop.vars[0])

    def body(loop):
        return [b.op(lambda i: seen.append(int(i)) or i + 1, loop.vars[0])]

    (result,) = b.while_loop(cond, body, [b.const(0)])
    assert run(b, [result]) == [4]
    assert seen == [0, 1, 2, 3]


def test_program_built_from_plain_nodes():
    program = Program(
        nodes=[
            Node("x", NodeKind.ARG),
            Node("square", kernel=np.square, inputs=[(0, 0)]),
        ],
        arg_nodes=[0],
        fetches=[(1, 0), (0, 0)],
    )
    assert executor.prepare(program).run([3.0]) == [9.0, 3.0]


def test_a_control_input_listed_twice_counts_once():
    b = Builder()
    first = b.op(lambda: 1, name="first")
    then = b.op(lambda: 2, name="then", control=[first, first])
    assert run(b, [then]) == [2]

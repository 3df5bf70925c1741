"""`prepare`: the static rules a program must follow, and the errors that name what breaks them."""

import numpy as np
import pytest
from executor_builder import Builder, identity

import executor
from executor import (
    CycleError,
    FetchNotLiveError,
    FrameMismatchError,
    InvalidProgramError,
    Node,
    NodeKind,
    Program,
)


def test_node_with_inputs_from_two_frames_is_rejected_naming_node_and_frames():
    b = Builder()
    x = b.arg("x")
    inside = b.enter(x, "loop_frame", name="enter")
    mixed = b.op(np.add, inside, x, name="mixed")
    b.exit(mixed)
    with pytest.raises(FrameMismatchError) as info:
        executor.prepare(b.program())
    message = str(info.value)
    assert "'mixed'" in message and "'loop_frame'" in message and "'root'" in message
    assert mixed[0] in info.value.nodes


def test_control_input_from_another_frame_is_rejected():
    b = Builder()
    x = b.arg("x")
    inside = b.enter(x, "frame")
    b.exit(b.op(identity, inside))
    b.op(identity, x, name="outside", control=[inside])
    with pytest.raises(FrameMismatchError, match="'outside'"):
        executor.prepare(b.program())


def test_merge_inputs_from_two_frames_are_rejected():
    b = Builder()
    x = b.arg("x")
    inside = b.enter(x, "frame")
    output, _ = b.merge(inside, x, name="bad_merge")
    b.exit(output)
    with pytest.raises(FrameMismatchError, match="'bad_merge'"):
        executor.prepare(b.program())


def test_exit_in_the_root_frame_is_rejected():
    b = Builder()
    b.exit(b.arg("x"), name="stray_exit")
    with pytest.raises(FrameMismatchError, match="'stray_exit'.*root frame"):
        executor.prepare(b.program())


def test_next_iteration_in_the_root_frame_is_rejected():
    b = Builder()
    b.next_iteration(b.arg("x"), name="stray_next")
    with pytest.raises(FrameMismatchError, match="'stray_next'"):
        executor.prepare(b.program())


def test_one_frame_entered_from_two_parent_frames_is_rejected():
    b = Builder()
    x = b.arg("x")
    outer = b.enter(x, "outer")
    b.exit(b.enter(outer, "shared", name="from_outer"))
    b.exit(b.enter(x, "shared", name="from_root"))
    with pytest.raises(FrameMismatchError, match="'shared'"):
        executor.prepare(b.program())


def test_cycle_without_next_iteration_is_rejected_listing_its_nodes():
    nodes = [
        Node("x", NodeKind.ARG),
        Node("a", kernel=np.add, inputs=[(0, 0), (3, 0)]),
        Node("b", kernel=np.negative, inputs=[(1, 0)]),
        Node("c", kernel=np.negative, inputs=[(2, 0)]),
    ]
    with pytest.raises(CycleError) as info:
        executor.prepare(Program(nodes, arg_nodes=[0]))
    assert sorted(info.value.nodes) == [1, 2, 3]
    assert all(f"'{name}'" in str(info.value) for name in "abc")


def test_cycle_of_control_edges_is_rejected():
    nodes = [
        Node("a", kernel=lambda: 1, control_inputs=[1]),
        Node("b", kernel=lambda: 2, control_inputs=[0]),
    ]
    with pytest.raises(CycleError, match="'a'"):
        executor.prepare(Program(nodes))


def test_cycle_through_a_merge_but_not_a_next_iteration_is_rejected():
    b = Builder()
    inside = b.enter(b.arg("x"), "frame")
    output, _ = b.merge(inside, name="merge")
    step = b.op(identity, output, name="step")
    b.nodes[output[0]].inputs = [inside, step]
    b.exit(step)
    with pytest.raises(CycleError, match="'merge'"):
        executor.prepare(b.program())


def test_cycle_through_next_iteration_into_merge_is_a_loop():
    b = Builder()
    (result,) = b.while_loop(
        lambda loop: b.op(lambda v: v < 3, loop.vars[0]),
        lambda loop: [b.op(lambda v: v + 1, loop.vars[0])],
        [b.const(0)],
    )
    assert executor.prepare(b.program([result])).run(()) == [3]


def test_nodes_no_value_can_reach_are_allowed_and_never_fire():
    calls = []
    b = Builder()
    x = b.arg("x")
    # A Merge fed only by its own NextIteration: no walk from a source reaches it.
    output, _ = b.merge(x, name="orphan_merge")
    step = b.op(lambda v: calls.append(v) or v, output, name="orphan_step")
    again = b.next_iteration(step, name="orphan_next")
    b.nodes[output[0]].inputs = [again]
    waiting = b.op(np.add, x, step, name="waits_forever")
    doubled = b.op(lambda v: 2 * v, x)
    plan = executor.prepare(b.program([doubled]))
    assert plan.run((4,)) == [8]
    assert calls == []
    assert plan.frame_of(step[0]) is None and plan.frame_of(doubled[0]) == "root"
    with pytest.raises(FetchNotLiveError) as info:
        executor.prepare(b.program([doubled, waiting])).run((4,))
    assert info.value.missing == [(1, waiting[0], "never produced")]


def test_fetch_inside_a_loop_frame_is_never_produced():
    b = Builder()
    inner = []

    def body(loop):
        inner.append(b.op(lambda v: v + 1, loop.vars[0], name="inside_loop"))
        return [inner[0]]

    (result,) = b.while_loop(lambda loop: b.op(lambda v: v < 3, loop.vars[0]), body, [b.const(0)])
    with pytest.raises(FetchNotLiveError) as info:
        executor.prepare(b.program([result, inner[0]])).run(())
    assert info.value.missing == [(1, inner[0][0], "never produced")]


@pytest.mark.parametrize(
    "nodes, arg_nodes, fetches, message",
    [
        ([Node("a", kernel=np.negative, inputs=[(5, 0)])], [], [], "not a"),
        (
            [Node("x", NodeKind.ARG), Node("a", kernel=np.negative, inputs=[(0, 1)])],
            [0],
            [],
            "has 1 output",
        ),
        (
            [Node("x", NodeKind.ARG), Node("s", NodeKind.SWITCH, inputs=[(0, 0)])],
            [0],
            [],
            "two inputs",
        ),
        ([Node("m", NodeKind.MERGE)], [], [], "no data input"),
        ([Node("a")], [], [], "no kernel"),
        ([Node("x", NodeKind.ARG)], [], [], "not listed in arg_nodes"),
        ([Node("x", NodeKind.ARG)], [0, 0], [], "listed twice"),
        ([Node("a", kernel=lambda: 1)], [0], [], "not an ARG"),
        ([Node("a", kernel=lambda: 1)], [], [(1, 0)], "fetch 0"),
        (
            [Node("x", NodeKind.ARG), Node("e", NodeKind.ENTER, inputs=[(0, 0)])],
            [0],
            [],
            "frame_name",
        ),
        (
            [
                Node("x", NodeKind.ARG),
                Node("e", NodeKind.ENTER, inputs=[(0, 0)], frame_name="f", parallel_iterations=0),
            ],
            [0],
            [],
            "parallel_iterations",
        ),
        ([Node("a", kernel=lambda: 1, control_inputs=[3])], [], [], "control input"),
    ],
)
def test_malformed_programs_are_rejected(nodes, arg_nodes, fetches, message):
    with pytest.raises(InvalidProgramError, match=message):
        executor.prepare(Program(nodes, arg_nodes=arg_nodes, fetches=fetches))


def test_a_plan_can_be_run_many_times():
    b = Builder()
    x = b.arg("x")
    plan = executor.prepare(b.program([b.op(np.square, x)]))
    assert [plan.run((v,))[0] for v in range(5)] == [0, 1, 4, 9, 16]


def test_enter_into_its_own_frame_is_rejected():
    b = Builder()
    inside = b.enter(b.arg("x"), "frame")
    again = b.enter(inside, "frame", name="reenter")
    b.exit(b.exit(again))
    with pytest.raises(FrameMismatchError, match="'reenter'"):
        executor.prepare(b.program())


def test_next_iteration_fed_only_by_loop_invariants_is_rejected():
    # It would fire live in every iteration, the last one too, and never let the loop end.
    b = Builder()
    x = b.arg("x")
    inside = b.enter(b.const(0), "loop")
    invariant = b.enter(x, "loop", constant=True)
    output, _ = b.merge(inside, name="merge")
    pred = b.op(lambda v: v < 3, output)
    false_side, true_side = b.switch(output, pred)
    b.exit(false_side)
    doubled = b.op(lambda v: 2 * v, invariant, name="only_invariant")
    forever = b.next_iteration(doubled, name="forever")
    b.nodes[output[0]].inputs = [inside, forever]
    with pytest.raises(InvalidProgramError, match="'forever'.*invariants"):
        executor.prepare(b.program())
    # With a control input from the pivot (TensorFlow adds one) it stops with the loop.
    pivot = b.op(identity, true_side, name="pivot")
    b.nodes[doubled[0]].control_inputs = [pivot[0]]
    executor.prepare(b.program())

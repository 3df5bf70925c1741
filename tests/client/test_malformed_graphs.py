"""Malformed graphs are refused before any kernel runs, with an error naming the ops."""

import pytest

import dataflow as df
import primitives


@pytest.fixture(autouse=True)
def fresh_graph():
    with df.Graph().as_default() as g:
        yield g


def test_cycle_not_through_next_iteration_is_rejected_naming_its_ops():
    calls = []
    start = df.constant(1.0, name="start")
    merged, _ = primitives.merge([start, start], name="m")
    looped = df.py_func(lambda v: calls.append(v) or v, [merged], df.float32, name="side_effect")
    doubled = df.multiply(looped, 2.0, name="doubled")
    primitives.set_merge_input(merged, 1, doubled)  # a back edge without NextIteration
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="cycle") as info:
            sess.run(doubled)
        message = str(info.value)
        assert "'m' -> 'side_effect' -> 'doubled' -> 'm'" in message
        assert "m (Merge) created at" in message and "doubled (Mul) created at" in message
        assert "test_malformed_graphs.py" in message
        assert calls == []  # nothing ran
        assert sess.run(start) == 1.0  # still usable


def test_node_with_inputs_from_two_frames_names_both_frames():
    i = primitives.enter(df.constant(0), "frame_a", name="i_enter")
    merged, _ = primitives.merge([i, i], name="i_merge")
    pred = primitives.loop_cond(merged < 3)
    out_false, out_true = primitives.switch(merged, pred)
    body = df.identity(out_true)
    primitives.set_merge_input(merged, 1, primitives.next_iteration(body + df.constant(1)))
    result = primitives.exit(out_false)
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="frame_a") as info:
            sess.run(result)
    message = str(info.value)
    assert "node 'Less' has inputs from different frames" in message
    assert "'root' (from node 'Less/y')" in message and "'frame_a' (from node 'i_merge')" in message
    assert "Less (Less) created at" in message and "test_malformed_graphs.py" in message


def test_exit_in_the_root_frame_is_rejected():
    out = primitives.exit(df.constant(1.0), name="stray_exit")
    with df.Session() as sess:
        with pytest.raises(df.errors.InvalidArgumentError, match="stray_exit"):
            sess.run(out)

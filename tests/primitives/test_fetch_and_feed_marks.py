"""What `cond` and `while_loop` mark unfetchable and unfeedable: exactly what TensorFlow 1.x's
builders mark (checked against TensorFlow 2.21 with control flow v1), so that
``graph.is_fetchable``/``is_feedable`` answer as there and a run refuses those fetches and feeds
before anything runs."""

import pytest

import dataflow as df


@pytest.fixture(autouse=True)
def graph():
    with df.Graph().as_default() as g:
        yield g


def _marks(graph):
    """op name -> (fetchable, feedable outputs as a string of 0/1)."""
    return {
        op.name: (
            graph.is_fetchable(op),
            "".join(str(int(graph.is_feedable(t))) for t in op.outputs),
        )
        for op in graph.get_operations()
    }


def test_a_cond_marks_its_switches_pivots_and_branch_ops_unfetchable_but_not_its_merge(graph):
    x = df.placeholder(df.float32, name="x")
    df.cond(df.constant(True), lambda: x + 2.0, lambda: x, name="cond")
    marks = _marks(graph)
    for name in ("cond/Switch", "cond/switch_t", "cond/switch_f", "cond/add/y", "cond/add"):
        assert marks[name][0] is False, name
    captures = [n for n, op in marks.items() if n.startswith("cond/Switch_")]
    assert captures and all(marks[n][0] is False for n in captures)
    assert marks["cond/Merge"][0] is True and marks["x"] == (True, "1")
    assert all(feedable == "1" * len(feedable) for _, feedable in marks.values())


def test_a_loop_marks_its_ops_unfetchable_and_unfeedable_its_enters_unfeedable_only(graph):
    c = df.constant(2, name="c")
    df.while_loop(lambda i: i < 10, lambda i: df.square(c) + i, [df.constant(0)], name="while")
    marks = _marks(graph)
    for name in ("while/Merge", "while/LoopCond", "while/Switch", "while/Identity", "while/add"):
        assert marks[name][0] is False and "1" not in marks[name][1], name
    enters = [n for n in marks if n.startswith("while/Enter")]
    assert len(enters) == 2  # the loop variable's and the captured c's
    assert all(marks[n] == (True, "0") for n in enters)
    assert marks["while/Exit"] == (True, "1")  # the loop's result


def test_a_cond_inside_a_loop_leaves_its_branch_ops_feedable_as_tensorflow_does(graph):
    x = df.constant(1.0, name="x")

    def body(i, v):
        return i + 1, df.cond(i < 2, lambda: v * 2.0, lambda: v + x, name="cond")

    df.while_loop(lambda i, v: i < 3, body, [df.constant(0), x], name="w")
    marks = _marks(graph)
    assert marks["w/cond/mul"] == (False, "1") and marks["w/cond/add"] == (False, "1")
    assert marks["w/cond/Switch"] == (False, "00")  # Switch(pred, pred) is an op of the loop
    assert marks["w/cond/Merge"] == (False, "00")
    captured_x = [n for n in marks if n.startswith("w/cond/Enter")]
    assert [marks[n] for n in captured_x] == [(True, "0")]


def test_nested_loops_mark_the_inner_loops_exit_and_free_the_outer_ones(graph):
    def body(i, v):
        inner = df.while_loop(lambda j: j < 2, lambda j: j + 1, [i], name="inner")
        return inner + 1, v * 2.0

    df.while_loop(lambda i, v: i < 3, body, [df.constant(0), df.constant(1.0)], name="outer")
    marks = _marks(graph)
    assert marks["outer/inner/Exit"] == (False, "0")
    assert marks["outer/Exit"] == (True, "1") and marks["outer/Exit_1"] == (True, "1")


def test_a_loop_inside_a_cond_cannot_have_its_result_fed_and_says_why(graph):
    x = df.placeholder(df.int32, name="x")
    inner = []

    def true_fn():
        inner.append(df.while_loop(lambda i: i < x, lambda i: i + 1, [x], name="while"))
        return inner[0]

    r = df.cond(x < 2, true_fn, lambda: x + 0, name="cond")
    assert _marks(graph)[inner[0].op.name] == (False, "0")
    with df.Session() as sess:
        with pytest.raises(ValueError) as info:
            sess.run(r, {x: 1, inner[0]: 5})
        message = str(info.value)
        assert f"Tensor '{inner[0].name}' may not be fed: it is the result of a while" in message
        assert "the true branch of cond 'cond'" in message and f"feed at {__file__}:" in message
        assert sess.run(r, {x: 1}) == 1


def test_feeding_a_loop_tensor_gives_tensorflows_words_and_dataflows_reason(graph):
    i0 = df.constant(0, name="i0")
    r = df.while_loop(lambda i: i < 5, lambda i: i + 1, [i0], name="count")
    enter = graph.get_operation_by_name("count/Enter").outputs[0]
    with df.Session() as sess:
        with pytest.raises(ValueError) as info:
            sess.run(r, {enter: 3})
        message = str(info.value)
        assert "Tensor 'count/Enter:0' may not be fed: it lies inside the while loop" in message
        assert f"created at {enter.op.location}" in message
        assert sess.run(r, {i0: 3}) == 5  # the loop variable's initial value may be fed

"""`df.debug.find_inf_or_nan`: the first op, in execution order, whose output holds nan or inf."""

import inspect

import numpy as np
import pytest

import dataflow as df
from dataflow.framework import errors


def here() -> int:
    """The line before the caller's (the line that built the op under test)."""
    return inspect.currentframe().f_back.f_lineno - 1


def reciprocal_loop():
    """``total += 1 / (7 - i)`` for i in 0..9: iteration 7 divides by zero."""
    line = [0]

    def body(i, total):
        gap = df.subtract(7.0, df.cast(i, df.float32), name="gap")
        step = df.divide(1.0, gap, name="step")
        line[0] = here()
        return i + 1, df.add(total, step, name="total")

    _, total = df.while_loop(
        lambda i, t: i < 10, body, [df.constant(0), df.constant(0.0)], name="loop"
    )
    return total, line[0]


def test_a_loop_whose_iteration_7_divides_by_zero_is_caught_at_that_iteration(graph):
    total, line = reciprocal_loop()
    with df.Session() as sess:
        report = df.debug.find_inf_or_nan(sess, total)
    assert report is not None
    assert (report.op_name, report.op_type, report.output_slot) == ("loop/step", "RealDiv", 0)
    assert (report.frame, report.frame_name, report.iteration) == (
        "loop[iter 0 of root]",
        "loop",
        7,
    )
    assert report.location == f"{__file__}:{line}"
    assert report.output.pos_inf_count == 1
    (numerator, first), (denominator, second) = report.inputs
    assert (numerator, denominator) == ("loop/step/x:0", "loop/gap:0")
    assert (second.min, second.max) == (0.0, 0.0) and first.min == 1.0
    text = str(report)
    assert "op 'loop/step' (RealDiv)" in text and f"{__file__}:{line}" in text
    assert "iteration 7 of frame instance loop[iter 0 of root]" in text
    assert "loop/gap:0" in text and "+inf×1" in text


def test_the_first_op_is_reported_not_the_ones_downstream(graph):
    x = df.placeholder(df.float32, [3], name="x")
    born = df.log(x, name="born")  # log of a negative number: nan
    spread = df.multiply(born, 2.0, name="spread")
    df.add(spread, 1.0, name="further")
    result = df.reduce_sum(spread + 1.0)
    with df.Session() as sess:
        report = df.debug.find_inf_or_nan(sess, result, {x: [1.0, -1.0, 0.0]})
    assert report.op_name == "born"
    assert (report.output.nan_count, report.output.neg_inf_count) == (1, 1)
    assert report.inputs[0][0] == "x:0" and report.inputs[0][1].min == -1.0
    assert report.frame == "root" and "iteration" not in str(report).splitlines()[1]


def test_a_nan_inside_a_cond_inside_a_loop_names_its_branch_op_and_iteration(graph):
    def body(i, v):
        risky = df.cond(
            df.equal(i, 4),
            lambda: df.sqrt(df.constant(-1.0), name="root_of_negative"),
            lambda: df.constant(1.0, name="one"),
            name="pick",
        )
        return i + 1, v + risky

    _, out = df.while_loop(
        lambda i, v: i < 6, body, [df.constant(0), df.constant(0.0)], name="loop"
    )
    with df.Session() as sess:
        report = df.debug.find_inf_or_nan(sess, out)
    assert report.op_name == "loop/pick/root_of_negative"
    assert report.iteration == 4 and report.frame_name == "loop"


def test_a_nan_in_an_inner_loop_is_labelled_with_both_loops(graph):
    def outer_body(i, acc):
        def inner_body(j, a):
            value = df.log(df.cast(j - i, df.float32) + 1.0, name="log_gap")
            return j + 1, a + value

        _, inner = df.while_loop(
            lambda j, a: j < 3, inner_body, [df.constant(0), acc], name="inner"
        )
        return i + 1, inner

    # parallel_iterations=1: the outer iterations run in program order (otherwise iteration 2,
    # whose inner loop also takes log(0), may run first and be the first in execution order).
    _, out = df.while_loop(
        lambda i, a: i < 3,
        outer_body,
        [df.constant(0), df.constant(0.0)],
        name="outer",
        parallel_iterations=1,
    )
    with df.Session() as sess:
        report = df.debug.find_inf_or_nan(sess, out)
    # j - i + 1 == 0 first at i = 1, j = 0: log(0) = -inf.
    assert report.op_name == "outer/inner/log_gap"
    assert report.frame == "outer/inner[iter 1 of outer[iter 0 of root]]"
    assert report.iteration == 0 and report.output.neg_inf_count == 1


def test_a_finite_run_reports_nothing(graph):
    total = df.reduce_sum(df.ones([4]) * 2.0)
    with df.Session() as sess:
        assert df.debug.find_inf_or_nan(sess, total) is None


def test_a_fed_nan_is_reported_as_fed(graph):
    x = df.placeholder(df.float32, [2], name="x")
    y = df.add(x, 1.0, name="y")
    with df.Session() as sess:
        report = df.debug.find_inf_or_nan(sess, y, {x: [np.nan, 1.0]})
    assert report.op_name == "x" and report.fed and report.inputs == []
    assert "fed to op 'x' (Placeholder)" in str(report)


def test_a_run_that_fails_after_the_nan_still_reports_it(graph):
    x = df.placeholder(df.float32, [], name="x")
    bad = df.sqrt(x, name="bad")
    check = df.Assert(df.reduce_all(bad >= 0.0), [bad], name="must_be_real")
    with df.control_dependencies([check]):
        out = df.identity(bad)
    with df.Session() as sess:
        report = df.debug.find_inf_or_nan(sess, out, {x: -4.0})
        assert report.op_name == "bad"
        assert isinstance(report.run_error, errors.InvalidArgumentError)
        assert "the run then failed: InvalidArgumentError" in str(report)


def test_a_run_that_fails_before_any_nan_raises_its_error(graph):
    x = df.placeholder(df.float32, [], name="x")
    check = df.Assert(x > 0.0, [x], name="positive")
    with df.control_dependencies([check]):
        out = df.log(x)
    with df.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError, match="positive"):
            df.debug.find_inf_or_nan(sess, out, {x: -1.0})


def test_the_tf1_filter_finds_it_in_a_dump_of_your_own_run(graph):
    total, _ = reciprocal_loop()
    options = df.RunOptions()
    df.debug.watch_graph(options, graph, op_type_regex_allowlist="RealDiv|Sub")
    metadata = df.RunMetadata()
    with df.Session() as sess:
        sess.run(total, options=options, run_metadata=metadata)
    (datum,) = metadata.debug_dump.find(df.debug.has_inf_or_nan, first_n=1)
    assert (datum.node_name, datum.iteration) == ("loop/step", 7)
    assert np.isinf(datum.get_tensor())
    report = df.debug.first_inf_or_nan(metadata)
    assert report.op_name == "loop/step" and report.inputs[1][1].max == 0.0
    assert len(metadata.debug_dump.find(df.debug.has_inf_or_nan)) == 1
    assert metadata.debug_dump.find(df.debug.has_inf_or_nan, exclude_node_names="loop/step") == []


def test_first_inf_or_nan_needs_a_dump(graph):
    with pytest.raises(TypeError, match="DebugDump or a RunMetadata"):
        df.debug.first_inf_or_nan(df.RunMetadata())


def test_has_inf_or_nan_works_on_values_and_summaries():
    check = df.debug.has_inf_or_nan
    assert check(None, np.array([1.0, np.inf])) and check(None, np.float32(np.nan))
    assert not check(None, np.array([1.0, 2.0])) and not check(None, np.array([1, 2]))
    assert not check(None, None) and not check(None, "text")
    assert check(None, df.debug.summarize(np.array([np.nan])))
    assert not check(None, df.debug.summarize(np.array([0.5])))

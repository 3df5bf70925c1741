"""Compiled conds (`dataflow.client.compiler.conds`): a `cond` of pure branches runs as one
generated ``if``/``else`` function, alone or in a loop body, and a run gives what the interpreter
gives: values, dtypes, deadness and errors."""

import contextlib

import numpy as np
import pytest
from bitwise import same_bits
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from placed_programs import build_fed, programs

import dataflow as df
from dataflow.client import compiler
from dataflow.client.compiler.conds import CompiledCond
from dataflow.client.compiler.loops import CompiledLoop
from dataflow.framework import errors
from executor.program import NodeKind


def run_in(new_mode, set_mode, fetches, feed_dict=None):
    """The results of one run in a new Session with compilation ``new_mode``, and its plan."""
    set_mode(new_mode)
    with df.Session() as sess:
        results = sess.run(fetches, feed_dict)
        plan = next(iter(sess._plans.values()))
    return results, plan


def same_in_both_modes(set_mode, fetches, feed_dict=None):
    """Runs ``fetches`` compiled (force) and interpreted, checks the results are the same bits
    of the same types, and returns the compiled results and plan."""
    compiled, plan = run_in("force", set_mode, fetches, feed_dict)
    interpreted, _ = run_in("off", set_mode, fetches, feed_dict)
    assert same_bits(compiled, interpreted), (compiled, interpreted)
    flat_c, flat_i = df.nest.flatten(compiled), df.nest.flatten(interpreted)
    assert [type(v) for v in flat_c] == [type(v) for v in flat_i]
    assert [getattr(v, "dtype", None) for v in flat_c] == [
        getattr(v, "dtype", None) for v in flat_i
    ]
    return compiled, plan


def error_in(new_mode, set_mode, fetches, feed_dict=None) -> errors.OpError:
    set_mode(new_mode)
    with df.Session() as sess:
        with pytest.raises(errors.OpError) as caught:
            sess.run(fetches, feed_dict)
    return caught.value


def compiled_conds(plan) -> list:
    return (
        [r for r in plan.compiled.regions if isinstance(r, CompiledCond)] if plan.compiled else []
    )


def interpreted_control_flow(plan) -> list:
    """The Switch, Merge, Enter, Exit and NextIteration nodes left in the compiled plan."""
    return [node.name for node in plan.compiled.nodes if node.kind != NodeKind.OP and node.inputs]


# -- a cond alone ----------------------------------------------------------------------------------
@pytest.mark.parametrize("taken", [True, False])
def test_a_cond_runs_as_one_node_with_the_interpreters_bits_and_dtypes(mode, taken):
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])
    small = df.placeholder(df.int8, [])
    result = df.cond(
        p,
        lambda: (x * 3.0 + 0.1, small * df.constant(100, df.int8)),
        lambda: (x - 0.7, small + df.constant(120, df.int8)),
    )
    feed = {p: taken, x: np.float32(1.3), small: np.int8(9)}
    compiled, plan = same_in_both_modes(mode, result, feed)
    assert compiled[0].dtype == np.float32 and compiled[1].dtype == np.int8
    assert len(compiled_conds(plan)) == 1 and not interpreted_control_flow(plan)


def test_the_untaken_branch_runs_no_kernel(mode):
    """The untaken branch gathers past the end of its table: running it would raise."""
    p = df.placeholder(df.bool, [])
    k = df.placeholder(df.int32, [])
    table = df.constant([1.0, 2.0, 3.0])
    result = df.cond(p, lambda: df.gather(table, k), lambda: df.cast(k, df.float32) * 2.0)
    compiled, plan = same_in_both_modes(mode, result, {p: False, k: 7})
    assert compiled == 14.0 and compiled_conds(plan)


def test_branches_of_constants_hang_on_the_pivot_and_run_only_when_taken(mode):
    p = df.placeholder(df.bool, [])
    result = df.cond(p, lambda: df.constant(1.5), lambda: df.constant(-2.5))
    for taken, expected in ((True, 1.5), (False, -2.5)):
        compiled, plan = same_in_both_modes(mode, result, {p: taken})
        assert compiled == expected and compiled_conds(plan)


def test_a_branch_that_returns_a_captured_tensor_returns_that_value(mode):
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float64, [3])
    result = df.cond(p, lambda: x, lambda: x * 2.0)
    compiled, plan = same_in_both_modes(mode, result, {p: True, x: np.array([1.0, 2.0, 3.0])})
    assert compiled.tolist() == [1.0, 2.0, 3.0] and compiled_conds(plan)


def test_a_merges_value_index_is_the_taken_branchs_position(mode):
    p = df.placeholder(df.bool, [])
    result = df.cond(p, lambda: df.constant(1), lambda: df.constant(2))
    for taken in (True, False):
        compiled, plan = same_in_both_modes(mode, [result, result.op.outputs[1]], {p: taken})
        assert compiled[1] == int(taken) and compiled[1].dtype == np.int32
        assert compiled_conds(plan)


def test_an_error_in_a_compiled_cond_names_the_op_and_its_line(mode):
    p = df.placeholder(df.bool, [])
    k = df.placeholder(df.int32, [])
    table = df.constant([1.0, 2.0, 3.0])
    result = df.cond(p, lambda: df.gather(table, k) + 1.0, lambda: df.constant(0.0))
    compiled = error_in("force", mode, result, {p: True, k: 5})
    interpreted = error_in("off", mode, result, {p: True, k: 5})
    assert type(compiled) is type(interpreted)
    assert compiled.op is interpreted.op and compiled.op.type == "GatherV2"
    assert compiled.message == interpreted.message and __file__ in compiled.message


# -- deadness --------------------------------------------------------------------------------------
def hand_wired_gate(value, open_):
    """``value`` where ``open_`` is true, dead elsewhere: a hand-wired Switch (interpreted)."""
    return df.switch(value, open_)[1]


def test_a_cond_whose_predicate_is_dead_gives_dead_results(mode):
    """A cond behind a hand-wired Switch: when the gate is shut its predicate and inputs are
    dead, so its result is, and the hand-wired Merge takes the other value."""
    gate = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])
    gated = hand_wired_gate(x, gate)
    inner = df.cond(gated > 0.0, lambda: gated * 2.0, lambda: gated - 1.0)
    result, _ = df.merge([inner, hand_wired_gate(x + 100.0, df.logical_not(gate))])
    for open_ in (True, False):
        compiled, plan = same_in_both_modes(mode, result, {gate: open_, x: np.float32(3.0)})
        assert compiled == (6.0 if open_ else 103.0)
        assert len(compiled_conds(plan)) == 1


def test_a_value_only_the_untaken_branch_reads_may_be_dead_and_the_result_lives(mode):
    """The interpreter gives a live result when the taken branch reads only live values; one
    node would be dead as a whole, so such a cond stays interpreted."""
    gate = df.placeholder(df.bool, [])
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])
    maybe_dead = hand_wired_gate(x, gate)
    result = df.cond(p, lambda: x + 1.0, lambda: maybe_dead * 2.0)
    compiled, plan = same_in_both_modes(mode, result, {gate: False, p: True, x: np.float32(1.0)})
    assert compiled == 2.0 and not compiled_conds(plan)


def test_fetching_the_result_of_a_cond_whose_predicate_is_dead_names_it(mode):
    gate = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])
    gated = hand_wired_gate(x, gate)
    result = df.cond(gated > 0.0, lambda: gated + 1.0, lambda: gated - 1.0)
    feed = {gate: False, x: np.float32(1.0)}
    compiled = error_in("force", mode, result, feed)
    interpreted = error_in("off", mode, result, feed)
    assert compiled.message == interpreted.message and "does not have value" in compiled.message
    _, plan = run_in("force", mode, result, {gate: True, x: np.float32(1.0)})
    assert compiled_conds(plan)


# -- what keeps the interpreter --------------------------------------------------------------------
def test_a_hand_wired_switch_and_merge_keep_the_interpreter(mode):
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])
    if_false, if_true = df.switch(x, p)
    result, _ = df.merge([if_false - 1.0, if_true + 1.0])
    compiled, plan = same_in_both_modes(mode, result, {p: True, x: np.float32(1.0)})
    assert compiled == 2.0 and not compiled_conds(plan)


def test_a_cond_with_a_stateful_branch_keeps_the_interpreter(mode):
    v = df.Variable(1.0)
    p = df.placeholder(df.bool, [])
    result = df.cond(p, lambda: v.assign_add(1.0), lambda: df.constant(0.0))
    mode("force")
    with df.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(result, {p: True}) == 2.0
        plan = next(p_ for p_ in sess._plans.values() if p_.feed_tensors)
        assert not compiled_conds(plan)


# -- conds in loops, loops in conds ----------------------------------------------------------------
def loop_with_a_cond(limit):
    """The benchmark's workload: ``i + 1``, and ``a + cast(i)`` on even steps, ``a * 0.5``
    on odd ones (float32)."""

    def body(i, a):
        even = df.equal(i % 2, 0)
        return i + 1, df.cond(even, lambda: a + df.cast(i, df.float32), lambda: a * 0.5)

    return df.while_loop(lambda i, a: i < limit, body, [df.constant(0), df.constant(1.0)])


@pytest.mark.parametrize("limit", [0, 1, 6, 301])
def test_a_while_loop_with_a_cond_in_its_body_runs_as_one_python_while(mode, limit):
    n = df.placeholder(df.int32, [])
    _, plan = same_in_both_modes(mode, loop_with_a_cond(n), {n: limit})
    assert not interpreted_control_flow(plan)
    assert len(compiled_conds(plan)) == 1
    assert len([r for r in plan.compiled.regions if isinstance(r, CompiledLoop)]) == 1


def test_nested_conds_in_a_loop_body_compile_innermost_first(mode):
    def body(i, a):
        def odd():
            return df.cond(i > 5, lambda: a * 0.5, lambda: a - df.cast(i, df.float32))

        return i + 1, df.cond(df.equal(i % 2, 0), lambda: a + 1.0, odd)

    result = df.while_loop(lambda i, a: i < 20, body, [df.constant(0), df.constant(1.0)])
    _, plan = same_in_both_modes(mode, result)
    assert len(compiled_conds(plan)) == 2 and not interpreted_control_flow(plan)


def test_a_cond_in_a_nested_loop_compiles_with_both_loops(mode):
    def outer_body(i, total):
        def inner_body(j, s):
            return j + 1, df.cond(j < i, lambda: s + 1.0, lambda: s * 0.75)

        _, inner = df.while_loop(lambda j, s: j < 7, inner_body, [df.constant(0), total])
        return i + 1, inner

    result = df.while_loop(lambda i, t: i < 9, outer_body, [df.constant(0), df.constant(2.0)])
    _, plan = same_in_both_modes(mode, result)
    assert len(compiled_conds(plan)) == 1 and not interpreted_control_flow(plan)


def test_a_loop_inside_a_cond_branch_compiles_into_the_branch(mode):
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])

    def loop():
        return df.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s * x), [0, x])[1]

    result = df.cond(p, loop, lambda: x - 1.0)
    for taken in (True, False):
        _, plan = same_in_both_modes(mode, result, {p: taken, x: np.float32(1.5)})
        assert len(compiled_conds(plan)) == 1 and not interpreted_control_flow(plan)


def test_an_error_in_a_cond_in_a_loop_names_the_op_its_line_and_iteration(mode):
    table = df.constant([1.0, 2.0, 3.0])

    def body(i, s):
        return i + 1, df.cond(i > 1, lambda: s + df.gather(table, i), lambda: s)

    result = df.while_loop(lambda i, s: i < 10, body, [0, 0.0], parallel_iterations=1)
    compiled = error_in("force", mode, result)
    interpreted = error_in("off", mode, result)
    assert compiled.op is interpreted.op and compiled.op.type == "GatherV2"
    assert compiled.message == interpreted.message
    assert "iteration 3 (frame instance while[iter 0 of root])" in compiled.message


def test_compiled_source_shows_the_if_and_else(mode):
    mode("force")
    with df.Session() as sess:
        source = df.debug.compiled_source(sess, loop_with_a_cond(df.constant(4)))
    assert "# cond while/cond:" in source
    assert "            if in0:  # 'while/cond/Switch' (Switch) at " in source
    assert "            else:" in source


def test_a_cond_in_a_loop_body_is_written_inside_the_loops_code(mode):
    """The loop's code tests the predicate itself and runs the taken branch's lines, instead
    of calling the cond's function in every iteration."""
    mode("force")
    with df.Session() as sess:
        source = df.debug.compiled_source(sess, loop_with_a_cond(df.constant(4)))
    loop = source[source.index("# loop while:") :]
    loop = loop[: loop.index("\n\n")]
    assert "the compiled cond 'while/cond' above" not in loop
    assert "                if v" in loop and "  # 'while/cond/Switch' (Switch) at " in loop
    assert "                else:" in loop and "  # the Merges" in loop


# -- random programs -------------------------------------------------------------------------------
@contextlib.contextmanager
def compilation(new_mode):
    previous = compiler.set_mode(new_mode)
    try:
        yield
    finally:
        compiler.set_mode(previous)


@settings(max_examples=40, deadline=None)
@given(programs.programs, st.floats(-3.0, 3.0), st.integers(-2, 4))
def test_random_programs_of_conds_and_loops_give_the_interpreters_bits(program, x, n):
    try:
        programs.evaluate(program, {"f0": x, "f1": 1.0, "i0": n, "i1": 1}, {"x": x, "n": n})
    except programs.Overflow:
        assume(False)
    results = []
    for new_mode in ("force", "off"):
        with compilation(new_mode), df.Graph().as_default():
            fetches, feed = build_fed(program, x, n)
            with df.Session() as sess:
                results.append(sess.run(fetches, feed))
    names = programs.NAMES
    assert same_bits([results[0][k] for k in names], [results[1][k] for k in names]), program


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from(["cond", "loop"]), min_size=1, max_size=3),
    st.integers(0, 6),
    st.integers(-1, 4),
)
def test_random_nests_fail_with_the_interpreters_error_or_give_its_bits(nest, trips, start):
    """Conds and loops nested as ``nest`` says around a gather that fails once its index
    passes the table's end: both modes give the same values or the same error (op, message,
    iteration)."""
    outcomes = []
    for new_mode in ("force", "off"):
        with compilation(new_mode), df.Graph().as_default():
            table = df.constant([0.5, 1.5, 2.5, 3.5])

            def build(level, i, s, table=table):
                if level == len(nest):
                    return s + df.gather(table, i)
                if nest[level] == "cond":
                    return df.cond(
                        df.equal(i % 2, 0),
                        lambda: build(level + 1, i + 1, s),
                        lambda: s * 0.5,
                    )
                return df.while_loop(
                    lambda j, t: j < trips,
                    lambda j, t: (j + 1, build(level + 1, i + j, t)),
                    [df.constant(0), s],
                    parallel_iterations=1,
                )[1]

            result = build(0, df.constant(start), df.constant(1.0))
            with df.Session() as sess:
                try:
                    outcomes.append(("value", sess.run(result)))
                except errors.OpError as e:
                    outcomes.append(("error", type(e), e.op.name, e.message))
    if outcomes[0][0] == "value":
        assert outcomes[1][0] == "value" and same_bits(outcomes[0][1], outcomes[1][1])
    else:
        assert outcomes[0] == outcomes[1]

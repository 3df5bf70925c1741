"""How the work of building, optimizing and planning a graph grows with its size.

Each test counts the work (`work_counter.count_work`: lines of the runtime's Python executed,
plus comparisons made by linear scans of lists of ops) for a graph of n ops and one of 2n, and
requires the ratio to stay near 2: work that is linear (or n log n) in the graph doubles, work
that is quadratic quadruples.  Nothing is timed; ``benchmarks/bench_scale.py`` prints the
times.  The graphs are small, so that the traced runs stay quick; a quadratic part shows at
these sizes already.

A last test runs a long chain through every step with little room left on the Python stack:
no step may recurse once per op.
"""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
from work_counter import count_work

import dataflow as df
from dataflow.client import compiler

# Work for 2n ops over work for n ops: 2 for linear work, 4 for quadratic work.  The margin
# takes in n log n parts and the fixed cost of a run.
LINEAR = 2.4

NO_PASSES = df.ConfigProto(
    inter_op_parallelism_threads=1,
    graph_options=df.GraphOptions(rewrite_options=df.RewriterConfig(disable_meta_optimizer=True)),
)
PASSES = df.ConfigProto(inter_op_parallelism_threads=1)


def chain(steps: int):
    """``tanh(y * 0.75 + 0.125)``, ``steps`` times: 5 ops per step, two of them constants
    that common subexpression elimination merges into two read by every step."""
    x = df.placeholder(df.float64, [4], name="x")
    y = x
    for _ in range(steps):
        y = df.tanh(y * 0.75 + 0.125)
    return x, y


def branches(count: int):
    """``count`` independent ``tanh(x * w_i)``: one tensor read by every branch."""
    x = df.placeholder(df.float64, [4], name="x")
    return x, [df.tanh(x * (1.0 + i / count)) for i in range(count)]


def first_run_work(build, config, fetch_all: bool = False) -> int:
    """The work of the first run of what ``build`` makes (planning it, then running it)."""
    graph = df.Graph()
    with graph.as_default():
        x, y = build()
        if isinstance(y, list) and not fetch_all:
            y = df.add_n(y)
    sess = df.Session(graph=graph, config=config)
    feed = {x: np.linspace(-1.0, 1.0, 4)}
    try:
        return count_work(lambda: sess.run(y, feed))
    finally:
        sess.close()


def growth(work_of_size, size: int) -> float:
    return work_of_size(2 * size) / work_of_size(size)


def test_building_a_chain_is_linear():
    def build(steps):
        with df.Graph().as_default():
            return count_work(lambda: chain(steps))

    assert growth(build, 300) < LINEAR


def test_ops_made_under_a_large_control_dependencies_block_cost_linear_work():
    def build(count):
        with df.Graph().as_default():
            ops = [df.constant(float(i)).op for i in range(count)]

            def block():
                with df.control_dependencies(ops):
                    df.identity(df.constant(0.0))
                    df.identity(df.constant(1.0))

            return count_work(block)

    assert growth(build, 500) < LINEAR


def test_grouping_many_ops_costs_linear_work():
    def build(count):
        with df.Graph().as_default():
            ops = [df.constant(float(i)).op for i in range(count)]
            return count_work(lambda: df.group(*ops, ops[0]))

    assert growth(build, 500) < LINEAR


@pytest.mark.parametrize("config", [PASSES, NO_PASSES], ids=["passes", "no passes"])
def test_first_run_of_a_chain_is_linear(config):
    assert growth(lambda steps: first_run_work(lambda: chain(steps), config), 200) < LINEAR


@pytest.mark.parametrize("config", [PASSES, NO_PASSES], ids=["passes", "no passes"])
def test_first_run_of_a_wide_graph_summed_by_one_op_is_linear(config):
    # Fusion rewires one input of the AddN per branch: each must cost that input, not a scan
    # of the AddN's inputs.
    assert growth(lambda count: first_run_work(lambda: branches(count), config), 300) < LINEAR


def test_first_run_fetching_every_branch_is_linear():
    # Every pass asks, for each op, whether it is fetched: one look-up, not a scan of fetches.
    def work(count):
        return first_run_work(lambda: branches(count), PASSES, fetch_all=True)

    assert growth(work, 300) < LINEAR


def conds_on_constants(count: int):
    """``count`` conds on constant predicates, each with a while loop in its untaken branch."""
    x = df.placeholder(df.float64, [4], name="x")

    def loop():
        return df.while_loop(lambda v: df.reduce_sum(v) < 10.0, lambda v: v + 1.0, [x])

    results = []
    for i in range(count):
        if i % 2:
            results.append(df.cond(df.constant(False), lambda: x * 2.0, loop))
        else:
            results.append(df.cond(df.constant(True), loop, lambda: x * 2.0))
    return x, results


def test_collapsing_many_conds_on_constants_is_linear():
    # Constant folding removes a loop of an untaken branch only whole: checking that must cost
    # the loop's Enters, not a scan of the graph.
    def work(count):
        return first_run_work(lambda: conds_on_constants(count), PASSES)

    assert growth(work, 80) < LINEAR


def loops_with_conds(count: int):
    """``count`` independent while loops, each with a cond in its body."""
    x = df.placeholder(df.float64, [], name="x")

    def body(v):
        return [df.cond(v > 2.0, lambda: v * 0.5, lambda: v + 1.0)]

    return x, [df.while_loop(lambda v: v < 5.0, body, [x + float(i)]) for i in range(count)]


def test_compiling_a_plan_of_many_loops_and_conds_is_linear():
    # Each loop and cond becomes one node: finding and replacing them must not rescan the
    # whole plan once per loop or cond.
    def work(count):
        graph = df.Graph()
        with graph.as_default():
            x, ys = loops_with_conds(count)
        plan = df.session.lower_graph(graph, ys, (x,), [])
        program = plan.executable.program
        return count_work(lambda: compiler.compile_program(program, min_ops=1))

    # The Python tier's work is measured: numba's, when a test mode forces the native tier
    # on, is numba's own and is not this library's to keep linear.
    previous = compiler.set_native("off")
    try:
        assert growth(work, 40) < LINEAR
    finally:
        compiler.set_native(previous)


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def test_a_long_chain_is_built_optimized_differentiated_and_run_without_recursion():
    """A step that recursed once per op would need thousands of frames for this chain; with
    only a few hundred left (the deepest call path of a run is well under that), it fails."""
    graph = df.Graph()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_stack_depth() + 250)
    try:
        with graph.as_default():
            x, y = chain(600)
            (grad,) = df.gradients(df.reduce_sum(y), [x])
        feed = {x: np.linspace(-1.0, 1.0, 4)}
        with df.Session(graph=graph, config=PASSES) as sess:
            with_passes = sess.run([y, grad], feed)
        with df.Session(graph=graph, config=NO_PASSES) as sess:
            without = sess.run([y, grad], feed)
    finally:
        sys.setrecursionlimit(limit)
    for a, b in zip(with_passes, without):
        np.testing.assert_array_equal(a, b)


def test_planning_runs_with_the_garbage_collector_paused_and_restores_it(monkeypatch):
    # A full collection visits every object alive; during the planning of a large graph
    # those would cost more than the plan (see `dataflow.framework.graph.gc_paused`).
    import executor

    seen = []
    prepare = executor.prepare

    def observing_prepare(program):
        seen.append(gc.isenabled())
        return prepare(program)

    monkeypatch.setattr(executor, "prepare", observing_prepare)
    graph = df.Graph()
    with graph.as_default():
        x, y = chain(3)
    assert gc.isenabled()
    with df.Session(graph=graph, config=PASSES) as sess:
        sess.run(y, {x: np.zeros(4)})
    assert seen and not any(seen)  # a compiled twin's program is planned the same way
    assert gc.isenabled()


def test_a_collector_the_user_disabled_stays_disabled_after_planning():
    graph = df.Graph()
    with graph.as_default():
        x, y = chain(3)
    gc.disable()
    try:
        with df.Session(graph=graph, config=PASSES) as sess:
            sess.run(y, {x: np.zeros(4)})
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_first_run_of_a_group_of_many_rewritten_ops_is_linear():
    # Fusion replaces each branch, a control input of the group: each replacement must cost
    # that edge, not a rebuild of the group's list of control inputs.
    def work(count):
        def build():
            x, ys = branches(count)
            return x, df.group(*ys)

        return first_run_work(build, PASSES)

    assert growth(work, 600) < LINEAR


def test_fusing_a_chain_that_reads_a_new_tensor_at_every_step_is_linear():
    # The fused kernel's inputs grow with the chain: finding whether a step's input is one
    # already must be a look-up, not a scan of them.
    def scaled_chain(steps):
        x = df.placeholder(df.float64, [4], name="x")
        y = x
        for i in range(steps):
            y = y * (0.5 + i / steps)
        return x, y

    assert growth(lambda steps: first_run_work(lambda: scaled_chain(steps), PASSES), 600) < LINEAR

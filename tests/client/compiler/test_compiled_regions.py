"""Compiled regions (`dataflow.client.compiler`): a straight-line stretch of pure ops runs as one
generated function, and a run gives what the interpreter gives, errors included."""

import inspect
import threading

import numpy as np
import pytest
from bitwise import same_bits
from placed_programs import partitioned_config

import dataflow as df
from dataflow.client import compiler
from dataflow.client.compiler.regions import find_regions
from dataflow.framework import errors


def here() -> int:
    return inspect.currentframe().f_back.f_lineno - 1


# Graph passes off, so that each op of a test's graph is a node of the plan (the elementwise
# fusion pass would make a chain of scalar ops one kernel).
NO_PASSES = df.ConfigProto(
    graph_options=df.passes.GraphOptions(
        rewrite_options=df.passes.RewriterConfig(disable_meta_optimizer=True)
    )
)


def run_in(new_mode, set_mode, fetches, feed_dict=None):
    set_mode(new_mode)
    with df.Session(config=NO_PASSES) as sess:
        results = sess.run(fetches, feed_dict)
        plan = next(iter(sess._plans.values()))
    return results, plan


def float32_chain(length: int):
    x = df.placeholder(df.float32, [], name="x")
    y = x
    for _ in range(length):
        y = y * 1.0009765625 + 0.1
    return x, y


def test_a_chain_of_scalar_ops_runs_as_one_region_with_the_interpreters_bits(mode):
    x, y = float32_chain(50)
    feed = {x: np.float32(1.3)}
    compiled, plan = run_in("force", mode, y, feed)
    interpreted, _ = run_in("off", mode, y, feed)
    assert same_bits(compiled, interpreted)
    assert type(compiled) is np.float32
    regions = plan.compiled.regions
    assert max(len(r.members) for r in regions) >= 50


def test_values_used_only_inside_a_region_never_leave_it(mode):
    x, y = float32_chain(10)
    _, plan = run_in("force", mode, y, {x: np.float32(2.0)})
    (chain,) = [r for r in plan.compiled.regions if len(r.members) > 1]
    assert len(chain.members) > 20 and len(chain.outputs) == 1


def test_a_failing_op_inside_a_region_is_named_with_its_line_and_inputs(mode):
    mode("force")
    a = df.placeholder(df.int32, [], name="a")
    b = a + 1
    quotient = df.floordiv(b, a, name="quotient")
    line = here()
    c = quotient * 3
    with df.Session(config=NO_PASSES) as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(c, {a: 0})
        assert sess.run(c, {a: 2}) == 3  # the Session is still usable
        plan = next(iter(sess._plans.values()))
    assert any(len(r.members) >= 3 for r in plan.compiled.regions)
    assert info.value.op is quotient.op
    assert f"{__file__}:{line}" in str(info.value)
    assert "op 'quotient' (FloorDiv)" in str(info.value)


def test_a_failing_op_in_a_loop_body_region_names_the_iteration(mode):
    mode("force")

    lines = []

    def body(i, total):
        step = df.floordiv(total + 10, 3 - i, name="step")
        lines.append(here())
        return i + 1, total + step * 2

    _, total = df.while_loop(lambda i, t: i < 5, body, [df.constant(0), df.constant(1)])
    with df.Session() as sess:
        with pytest.raises(errors.InvalidArgumentError) as info:
            sess.run(total)
    message = str(info.value)
    assert "op 'while/step' (FloorDiv)" in message and f"{__file__}:{lines[0]}" in message
    assert "iteration 3" in message


def test_ops_on_either_side_of_a_switch_never_share_a_region(mode):
    x = df.placeholder(df.float32, [], name="x")
    a = x + 1.0
    b = df.cond(x > 0.0, lambda: a * 2.0, lambda: a * 3.0)
    c = a + 5.0
    for value in (1.0, -1.0):
        compiled, plan = run_in("force", mode, [b, c], {x: np.float32(value)})
        interpreted, _ = run_in("off", mode, [b, c], {x: np.float32(value)})
        assert all(same_bits(p, q) for p, q in zip(compiled, interpreted))
    for region in plan.compiled.regions:
        names = [region.nodes[m].name for m in region.members]
        assert len({name.startswith("cond/") for name in names}) == 1, names


def test_a_path_that_leaves_a_region_and_comes_back_splits_it(mode):
    x = df.placeholder(df.float32, [], name="x")
    v = df.Variable(0.0, name="v")
    a = x + 1.0
    with df.control_dependencies([v.assign(a)]):
        b = df.identity(v) + 2.0
    c = a * b
    mode("force")
    with df.Session(config=NO_PASSES) as sess:
        sess.run(v.initializer)
        assert sess.run(c, {x: np.float32(1.0)}) == 8.0
        plan = next(p for p in sess._plans.values() if p.feed_tensors)
    members = [[plan.nodes[m].name for m in r.members] for r in plan.compiled.regions]
    (with_a,) = [names for names in members if a.op.name in names]
    assert b.op.name not in with_a and c.op.name not in with_a
    (with_b,) = [names for names in members if b.op.name in names]
    assert c.op.name in with_b


def test_runs_that_record_statistics_use_the_interpreter(mode):
    mode("force")
    x, y = float32_chain(5)
    with df.Session(config=NO_PASSES) as sess:
        metadata = df.RunMetadata()
        options = df.RunOptions(trace_level=df.RunOptions.FULL_TRACE)
        sess.run(y, {x: np.float32(1.0)}, options=options, run_metadata=metadata)
    names = {s.node_name for s in metadata.step_stats}
    assert y.op.name in names and "add_1" in names


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_nans_give_the_first_operands_nan_as_the_ufunc_does(mode, dtype):
    """Of two NaNs, numpy's scalar + and * keep the second operand's (sign and payload) and
    the ufunc the first's; the generated expressions keep the ufunc's."""
    previous = compiler.set_native("off")
    try:
        x = df.placeholder(df.as_dtype(dtype), [])
        y = df.placeholder(df.as_dtype(dtype), [])
        one = df.constant(1.0, df.as_dtype(dtype))
        a, b = x * one, y * one  # ufunc results: numpy scalars
        fetches = [a + b, a * b, a - b, b + a, (a + b) * (b - a)]
        nan = dtype(np.nan)
        for feed in ({x: nan, y: -nan}, {x: -nan, y: nan}, {x: np.inf, y: -nan}):
            compiled, plan = run_in("force", mode, fetches, feed)
            interpreted, _ = run_in("off", mode, fetches, feed)
            assert plan.compiled
            for got, want in zip(compiled, interpreted):
                assert same_bits(got, want), (feed, got, want)
        source = df.debug.compiled_source(df.Session(config=NO_PASSES), fetches, {x: 0, y: 0})
        assert " + " in source and " * " in source
    finally:
        compiler.set_native(previous)


def test_auto_mode_compiles_a_plan_on_its_third_run(mode):
    mode("auto")
    x, y = float32_chain(5)
    with df.Session(config=NO_PASSES) as sess:
        for run in range(1, 4):
            sess.run(y, {x: np.float32(1.0)})
            plan = next(iter(sess._plans.values()))
            assert (plan.compiled is not None) == (run > compiler.AUTO_AFTER_RUNS)
    assert plan.compiled.regions


@pytest.mark.measures_its_runs  # it counts the compilations of its runs
@pytest.mark.parametrize("compile_mode", ["force", "auto"])
def test_threads_starting_the_same_plan_compile_it_once(mode, monkeypatch, compile_mode):
    mode(compile_mode)
    x, y = float32_chain(5)
    compile_program = compiler.compile_program
    programs = []
    another_compiles = threading.Event()

    def counted(program, *arguments):
        programs.append(program)
        if len(programs) == 1:  # room for a racing thread to start compiling too
            another_compiles.wait(timeout=0.5)
        another_compiles.set()
        return compile_program(program, *arguments)

    monkeypatch.setattr(compiler, "compile_program", counted)
    threads = 4
    runs = 1 if compile_mode == "force" else compiler.AUTO_AFTER_RUNS + 1
    start = threading.Barrier(threads)
    results = [[] for _ in range(threads)]

    def run(k):
        start.wait()
        for _ in range(runs):
            results[k].append(sess.run(y, {x: np.float32(1.0)}))

    with df.Session(config=NO_PASSES) as sess:
        workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        (plan,) = sess._plans.values()
        assert plan.compiled and plan.compiled.regions
    assert len(programs) == 1
    assert [len(got_runs) for got_runs in results] == [runs] * threads
    want, _ = run_in("off", mode, y, {x: np.float32(1.0)})
    assert all(same_bits(got, want) for got_runs in results for got in got_runs), results


def test_off_mode_never_compiles(mode):
    mode("off")
    x, y = float32_chain(5)
    with df.Session(config=NO_PASSES) as sess:
        for _ in range(4):
            sess.run(y, {x: np.float32(1.0)})
        assert next(iter(sess._plans.values())).compiled is None


def test_compiled_source_shows_one_line_per_op_named_with_its_line(mode):
    mode("force")
    x = df.placeholder(df.float32, [], name="x")
    y = df.add(x * 2.0, 1.0, name="shifted")
    line = here()
    with df.Session(config=NO_PASSES) as sess:
        source = df.debug.compiled_source(sess, y, {x: 0.0})
    (shifted,) = [text for text in source.splitlines() if "# 'shifted' (" in text]
    assert f"'shifted' (Add) at {ascii(f'{__file__}:{line}')}" in shifted
    assert "def region_" in source
    compile(source, "<check>", "exec")


def test_find_regions_keeps_stateful_and_control_flow_ops_out():
    x = df.placeholder(df.float32, [], name="x")
    v = df.Variable(1.0)
    y = df.cond(x > 0.0, lambda: x + v, lambda: x - 1.0)
    with df.Session() as sess:
        sess.run(v.initializer)
        sess.run(y, {x: 1.0})
        plan = [p for p in sess._plans.values() if y.op.name in {n.name for n in p.nodes}][0]
    nodes = plan.nodes
    for region in find_regions(nodes):
        for member in region:
            op = nodes[member].tag
            assert not op._op_def.stateful and op.type not in ("Switch", "Merge")


def test_a_partition_that_receives_from_another_is_never_compiled(mode):
    # A region would hold back values a _Send needs until its inputs, one of them a _Recv
    # waiting on that very Send through another partition, were all there: a deadlock.
    with df.device("/cpu:0"):
        a = df.placeholder(df.float32, [], name="a")
        b = a * 2.0 + 1.0
    with df.device("/cpu:1"):
        c = b * 3.0 - 1.0
    d = (c + b) * 0.5 + a
    mode("force")
    config = partitioned_config(device_count={"CPU": 2})
    with df.Session(config=config) as sess:
        options = df.RunOptions(output_partition_graphs=True)
        metadata = df.RunMetadata()
        assert sess.run(d, {a: 1.0}, options=options, run_metadata=metadata) == 6.5
        assert sess.run(d, {a: 1.0}) == 6.5  # forced compilation leaves it interpreted
    receiving = [
        g for g in metadata.partition_graphs if "_Recv" in {op.type for op in g.get_operations()}
    ]
    assert receiving
    for graph in receiving:
        ops = graph.get_operations()
        feeds = tuple(op.outputs[0] for op in ops if op.type == "Placeholder")
        targets = [op for op in ops if op.type != "Placeholder"]
        program = df.session.lower_graph(graph, targets, feeds, ()).executable.program
        assert compiler.compile_program(program, min_ops=1) is None

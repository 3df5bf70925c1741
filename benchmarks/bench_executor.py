"""Prints the executor's overhead figures (medians of several repeats); asserts nothing.

1. A chain of 1000 scalar float64 adds (1 ARG + 1 constant OP + 1000 ``np.add`` nodes), against
   the same 1000 ``np.add`` calls from a plain Python loop: ns per op and the ratio.  Run
   without a pool and with a pool of 2 (nothing goes to it: every op is a scalar).
2. A ``while_loop`` of 10,000 iterations (``i < n``, ``i + 1``, ``acc + x``; 14 nodes per
   iteration) built the way ``primitives`` builds it: µs per iteration, for parallel_iterations
   1, 10 and 32.
3. Two independent branches of ``exp``/``sin``/``tanh`` on 8M-element float64 arrays joined by
   an add: the speedup of a pool of 2 over no pool (numpy releases the GIL on large arrays).

Usage: ``python benchmarks/bench_executor.py [--quick]``.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, median_time

# isort: split
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import executor  # noqa: E402
from executor import Node, NodeKind, Program  # noqa: E402


def chain_program(length: int) -> Program:
    nodes = [
        Node("x", NodeKind.ARG, inline=True),
        Node("one", kernel=lambda: np.float64(1.0), inline=True),
    ]
    previous = 0
    for k in range(length):
        nodes.append(Node(f"add_{k}", kernel=np.add, inputs=[(previous, 0), (1, 0)]))
        previous = len(nodes) - 1
    return Program(nodes, arg_nodes=[0], fetches=[(previous, 0)])


def bench_chain(length: int, repeats: int) -> None:
    plan = executor.prepare(chain_program(length))
    x = np.float64(0.5)
    one = np.float64(1.0)

    def plain() -> None:
        value = x
        add = np.add
        for _ in range(length):
            value = add(value, one)

    assert plan.run([x])[0] == x + length
    plain_ns = median_time(plain, repeats) / length * 1e9
    print(f"chain of {length} scalar np.add")
    print(f"  plain numpy loop        {plain_ns:8.0f} ns/op")
    for label, pool in (("executor, no pool", None), ("executor, pool of 2", POOL)):
        ns = median_time(lambda pool=pool: plan.run([x], pool=pool), repeats) / length * 1e9
        print(
            f"  {label:<23} {ns:8.0f} ns/op   ratio {ns / plain_ns:4.2f}   "
            f"overhead {ns - plain_ns:5.0f} ns/op"
        )


def while_program(parallel_iterations: int) -> Program:
    """``while i < n: i, acc = i + 1, acc + x``, lowered as ``primitives.while_loop`` does."""
    nodes: list[Node] = []

    def add(node: Node) -> int:
        nodes.append(node)
        return len(nodes) - 1

    frame = "while/while_context"
    n = add(Node("n", NodeKind.ARG, inline=True))
    i0 = add(Node("i0", kernel=lambda: np.int64(0), inline=True))
    acc0 = add(Node("acc0", kernel=lambda: np.float64(0.0), inline=True))
    x = add(Node("x", kernel=lambda: np.float64(0.5), inline=True))
    one = add(Node("one", kernel=lambda: np.int64(1), inline=True))

    def enter(name, source, constant):
        return add(
            Node(
                name,
                NodeKind.ENTER,
                inputs=[(source, 0)],
                frame_name=frame,
                is_constant=constant,
                parallel_iterations=parallel_iterations,
            )
        )

    enter_i = enter("while/Enter", i0, False)
    enter_acc = enter("while/Enter_1", acc0, False)
    enter_n = enter("while/n", n, True)
    enter_x = enter("while/x", x, True)
    enter_one = enter("while/one", one, True)
    merge_i = add(Node("while/Merge", NodeKind.MERGE, inputs=[(enter_i, 0)]))
    merge_acc = add(Node("while/Merge_1", NodeKind.MERGE, inputs=[(enter_acc, 0)]))
    less = add(Node("while/Less", kernel=np.less, inputs=[(merge_i, 0), (enter_n, 0)]))
    pred = add(Node("while/LoopCond", kernel=lambda v: v, inputs=[(less, 0)], inline=True))
    switch_i = add(Node("while/Switch", NodeKind.SWITCH, inputs=[(merge_i, 0), (pred, 0)]))
    switch_acc = add(Node("while/Switch_1", NodeKind.SWITCH, inputs=[(merge_acc, 0), (pred, 0)]))
    exit_i = add(Node("while/Exit", NodeKind.EXIT, inputs=[(switch_i, 0)]))
    exit_acc = add(Node("while/Exit_1", NodeKind.EXIT, inputs=[(switch_acc, 0)]))
    body_i = add(Node("while/Identity", kernel=lambda v: v, inputs=[(switch_i, 1)], inline=True))
    body_acc = add(
        Node("while/Identity_1", kernel=lambda v: v, inputs=[(switch_acc, 1)], inline=True)
    )
    next_i_value = add(Node("while/add", kernel=np.add, inputs=[(body_i, 0), (enter_one, 0)]))
    next_acc_value = add(Node("while/add_1", kernel=np.add, inputs=[(body_acc, 0), (enter_x, 0)]))
    next_i = add(Node("while/NextIteration", NodeKind.NEXT_ITERATION, inputs=[(next_i_value, 0)]))
    next_acc = add(
        Node("while/NextIteration_1", NodeKind.NEXT_ITERATION, inputs=[(next_acc_value, 0)])
    )
    nodes[merge_i].inputs = [(enter_i, 0), (next_i, 0)]
    nodes[merge_acc].inputs = [(enter_acc, 0), (next_acc, 0)]
    return Program(nodes, arg_nodes=[n], fetches=[(exit_i, 0), (exit_acc, 0)])


def bench_while(iterations: int, repeats: int) -> None:
    print(f"while_loop of {iterations} iterations (14 nodes per iteration)")
    for parallel_iterations in (1, 10, 32):
        plan = executor.prepare(while_program(parallel_iterations))
        n = np.int64(iterations)
        i, acc = plan.run([n])
        assert i == iterations and acc == 0.5 * iterations
        seconds = median_time(lambda plan=plan, n=n: plan.run([n]), repeats)
        print(
            f"  parallel_iterations={parallel_iterations:<3} "
            f"{seconds / iterations * 1e6:6.2f} µs/iteration"
        )


def branches_program() -> Program:
    nodes = [Node("x", NodeKind.ARG, inline=True)]
    ends = []
    for branch in ("a", "b"):
        previous = 0
        for kernel in (np.exp, np.sin, np.tanh):
            nodes.append(Node(f"{branch}/{kernel.__name__}", kernel=kernel, inputs=[(previous, 0)]))
            previous = len(nodes) - 1
        ends.append(previous)
    nodes.append(Node("sum", kernel=np.add, inputs=[(ends[0], 0), (ends[1], 0)]))
    return Program(nodes, arg_nodes=[0], fetches=[(len(nodes) - 1, 0)])


def bench_branches(elements: int, repeats: int) -> None:
    plan = executor.prepare(branches_program())
    x = np.random.default_rng(0).random(elements)
    without = median_time(lambda: plan.run([x]), repeats)
    with_pool = median_time(lambda: plan.run([x], pool=POOL), repeats)
    print(f"two branches of exp/sin/tanh on {elements:,} float64 elements")
    print(f"  no pool    {without * 1e3:7.1f} ms")
    print(f"  pool of 2  {with_pool * 1e3:7.1f} ms   speedup {without / with_pool:4.2f}x")


POOL = ThreadPoolExecutor(2, thread_name_prefix="bench-inter-op")

if __name__ == "__main__":
    quick = "--quick" in sys.argv
    chain_repeats, while_repeats, branch_repeats = (21, 3, 3) if quick else (101, 9, 7)
    print(describe_machine(f"{chain_repeats}/{while_repeats}/{branch_repeats}"))
    bench_chain(1000, chain_repeats)
    bench_while(10_000, while_repeats)
    bench_branches(8_000_000, branch_repeats)
    POOL.shutdown()

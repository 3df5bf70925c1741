"""The node flags that let kernels of two runs talk through a rendezvous: ``blocking`` (the run
goes on while the kernel waits), ``fires_on_dead`` (a kernel sees a dead input as `DEAD`),
``wants_frame`` (a kernel learns its frame instance and iteration) and a `DEAD` result."""

import threading

import numpy as np
import pytest
from executor_builder import Builder, i64, identity

import executor
from executor import DEAD, FetchNotLiveError, Node, NodeKind


def add_flagged(b: Builder, kernel, *inputs, control=(), num_outputs=1, **flags) -> int:
    return b.add(
        Node(
            f"flagged_{len(b.nodes)}",
            NodeKind.OP,
            kernel=kernel,
            inputs=list(inputs),
            control_inputs=list(control),
            num_outputs=num_outputs,
            **flags,
        )
    )


@pytest.mark.parametrize("pool", [None, "pool"])
def test_blocking_kernel_waits_while_the_run_fires_the_node_it_waits_for(pool):
    # The blocking node is ready first (it has no inputs) and waits for an event that only a
    # later node of the same run sets: the run must go on meanwhile.
    event = threading.Event()
    b = Builder()
    waited = add_flagged(b, lambda: np.float64(event.wait(5)), blocking=True)
    setter = b.op(lambda: (event.set(), np.float64(1.0))[1], name="setter")
    total = b.op(np.add, (waited, 0), setter)
    thread_pool = executor.DaemonThreadPool(max_workers=1) if pool else None
    plan = executor.prepare(b.program([total]))
    assert plan.run([], pool=thread_pool) == [2.0]


def test_fires_on_dead_kernel_sees_dead_input_and_its_outputs_are_dead():
    seen = []
    b = Builder()
    pred = b.const(np.bool_(False))
    data = b.const(i64(7))
    _, taken_when_true = b.switch(data, pred)
    reporter = add_flagged(
        b, lambda value: (seen.append(value), value)[1], taken_when_true, fires_on_dead=True
    )
    after = b.op(identity, (reporter, 0))
    with pytest.raises(FetchNotLiveError):
        executor.prepare(b.program([after])).run([])
    assert seen == [DEAD]


def test_kernel_returning_dead_makes_outputs_and_control_edges_dead():
    b = Builder()
    receiver = add_flagged(b, lambda: DEAD, blocking=True)
    data = b.op(identity, (receiver, 0))
    controlled = b.const(i64(1), control=[receiver])
    merged = b.merge(data, controlled)
    # Both inputs of the Merge are dead: the data one through the data edge, the other
    # through its control input.
    with pytest.raises(FetchNotLiveError):
        executor.prepare(b.program([merged[0]])).run([])


def test_wants_frame_kernel_gets_its_frame_instance_and_iteration():
    seen = []
    b = Builder()

    def body(loop):
        (i,) = loop.vars
        add_flagged(b, lambda where, value: seen.append(where), i, wants_frame=True, num_outputs=0)
        return (b.op(lambda v: v + 1, i),)

    (result,) = b.while_loop(
        lambda loop: b.op(lambda v: v < 3, loop.vars[0]), body, [b.const(i64(0))]
    )
    assert executor.prepare(b.program([result])).run([]) == [3]
    assert sorted(seen) == [("while[iter 0 of root]", k) for k in range(3)]

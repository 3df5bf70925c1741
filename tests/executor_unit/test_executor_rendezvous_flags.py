"""The node flags that let kernels of two runs talk through a rendezvous: ``blocking`` (the run
goes on while the kernel waits), ``fires_on_dead`` (a kernel sees a dead input as `DEAD`),
``wants_frame`` (a kernel learns its frame instance and iteration) and a `DEAD` result."""

import threading
import time

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


# -- asynchronous kernels: completed through a callback ------------------------------------------
def test_asynchronous_kernel_completed_before_it_returns_goes_on_on_the_same_thread():
    threads = []
    b = Builder()
    received = add_flagged(b, lambda done: done(np.float64(2.0)), asynchronous=True)
    doubled = b.op(lambda v: (threads.append(threading.get_ident()), v * 2)[1], (received, 0))
    assert executor.prepare(b.program([doubled])).run([]) == [4.0]
    assert threads == [threading.get_ident()]


@pytest.mark.parametrize("pool", [None, "pool"])
def test_asynchronous_kernel_completed_later_lets_the_run_fire_what_completes_it(pool):
    # The kernel keeps its callback; a later node of the same run completes it from a thread
    # of its own.  The run must go on meanwhile, and take up the value when it comes.
    callbacks = []
    b = Builder()
    received = add_flagged(b, callbacks.append, asynchronous=True)

    def complete_elsewhere():
        completer = threading.Thread(target=lambda: callbacks[0](np.float64(5.0)))
        completer.start()
        completer.join(5)
        return np.float64(1.0)

    other = b.op(complete_elsewhere, name="other")
    total = b.op(np.add, (received, 0), other)
    thread_pool = executor.DaemonThreadPool(max_workers=1) if pool else None
    plan = executor.prepare(b.program([total]))
    assert plan.run([], pool=thread_pool, deadline=None) == [6.0]


def test_asynchronous_kernel_completed_with_an_error_fails_the_run_naming_its_node():
    b = Builder()
    received = add_flagged(b, lambda done: done(error=ValueError("lost")), asynchronous=True)
    after = b.op(identity, (received, 0))
    with pytest.raises(executor.KernelError) as caught:
        executor.prepare(b.program([after])).run([])
    assert caught.value.node_index == received and isinstance(caught.value.cause, ValueError)


def test_asynchronous_kernel_never_completed_stops_at_the_deadline_naming_it():
    b = Builder()
    received = add_flagged(b, lambda done: None, asynchronous=True)
    after = b.op(identity, (received, 0))
    with pytest.raises(executor.DeadlineExceededError) as caught:
        executor.prepare(b.program([after])).run([], deadline=time.monotonic() + 0.05)
    assert [index for index, _, _ in caught.value.running] == [received]


def test_asynchronous_kernel_completed_dead_makes_its_outputs_dead():
    b = Builder()
    received = add_flagged(b, lambda done: done(DEAD), asynchronous=True)
    after = b.op(identity, (received, 0))
    with pytest.raises(FetchNotLiveError):
        executor.prepare(b.program([after])).run([])


def test_asynchronous_kernel_completed_twice_is_refused():
    callbacks = []
    b = Builder()
    received = add_flagged(
        b, lambda done: (callbacks.append(done), done(i64(1))), asynchronous=True
    )
    assert executor.prepare(b.program([(received, 0)])).run([]) == [1]
    with pytest.raises(RuntimeError, match="completed twice"):
        callbacks[0](i64(2))

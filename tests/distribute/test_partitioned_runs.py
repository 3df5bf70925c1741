"""Graphs placed on several in-process devices: the partitioning pass, Send/Recv pairs, and
runs whose values, errors, deadlines and variable updates are those of one device."""

from __future__ import annotations

import os
import random
import threading
import time

import numpy as np
import placed_programs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from placed_programs import check_placed_program, partitioned_config, programs

import dataflow as df
import executor.runner
from dataflow.distribute import rendezvous
from dataflow.distribute.partition import partition
from dataflow.distribute.rendezvous import LocalRendezvous, make_key

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}".format


def config(devices: int = 3) -> df.ConfigProto:
    return partitioned_config(device_count={"CPU": devices})


def partition_graphs_of(sess, fetches, feed_dict=None) -> dict:
    """Runs ``fetches`` and returns the partition graphs of the run, by device."""
    metadata = df.RunMetadata()
    sess.run(
        fetches,
        feed_dict,
        options=df.RunOptions(output_partition_graphs=True),
        run_metadata=metadata,
    )
    return {
        next(iter({op._device for op in graph.get_operations()})): graph
        for graph in metadata.partition_graphs
    }


def types_of(graph) -> list:
    return [op.type for op in graph.get_operations()]


# -- the pass ------------------------------------------------------------------------------------
def test_a_crossing_tensor_gets_one_send_recv_pair_shared_by_its_consumers():
    a = df.placeholder(df.float32, [], name="a")
    b = df.add(a, 1.0, name="b")
    c = df.multiply(b, 2.0, name="c")
    d = df.subtract(b, 3.0, name="d")
    graph = df.get_default_graph()
    ops = graph.get_operations()
    placement = {op.name: CPU(0) for op in ops}
    placement.update({"c": CPU(1), "d": CPU(1), "c/y": CPU(1), "d/y": CPU(1)})
    graphs = partition(graph, ops, placement)
    assert types_of(graphs[CPU(0)]).count("_Send") == 1
    assert types_of(graphs[CPU(1)]).count("_Recv") == 1
    (recv,) = [op for op in graphs[CPU(1)].get_operations() if op.type == "_Recv"]
    assert recv.attrs["tensor_name"] == b.name
    assert recv.attrs["send_device"] == CPU(0) and recv.attrs["recv_device"] == CPU(1)
    consumers = [op.name for op in graphs[CPU(1)].get_operations() if recv.outputs[0] in op.inputs]
    assert sorted(consumers) == ["c", "d"]
    assert c.op.name in {op.name for op in graphs[CPU(1)].get_operations()}
    assert d.op.graph is graph  # the user's graph is not changed
    assert [op.type for op in graph.get_operations()].count("_Send") == 0


def test_a_crossing_control_edge_travels_as_a_dummy_value():
    a = df.placeholder(df.float32, [], name="a")
    with df.control_dependencies([a.op]):
        df.constant(1.0, name="b")
    graph = df.get_default_graph()
    graphs = partition(graph, graph.get_operations(), {"a": CPU(0), "b": CPU(1)})
    (send,) = [op for op in graphs[CPU(0)].get_operations() if op.type == "_Send"]
    assert send.inputs[0].op.type == "Const" and send.inputs[0].op.control_inputs[0].name == "a"
    b_copy = graphs[CPU(1)].get_operation_by_name("b")
    assert [op.type for op in b_copy.control_inputs] == ["_Recv"]


def test_rendezvous_keys_name_devices_tensor_frame_and_iteration():
    key = make_key(CPU(0), 1, CPU(1), "x:0", "loop[iter 0 of root]", 3)
    assert key == f"{CPU(0)};1;{CPU(1)};x:0;loop[iter 0 of root]:3"


def test_a_recv_waiting_past_the_deadline_stops():
    rendezvous = LocalRendezvous()
    start = time.monotonic()
    with pytest.raises(df.errors.DeadlineExceededError, match="rendezvous key 'k'"):
        rendezvous.recv("k", deadline=start + 0.05)
    assert time.monotonic() - start < 5


def test_abort_wakes_every_waiting_recv_with_the_error():
    rendezvous = LocalRendezvous()
    woken = []

    def wait():
        try:
            rendezvous.recv("never sent")
        except Exception as e:  # noqa: BLE001 - the test records what woke it
            woken.append(e)

    threads = [threading.Thread(target=wait) for _ in range(3)]
    for t in threads:
        t.start()
    rendezvous.abort(ValueError("partition failed"))
    for t in threads:
        t.join(5)
    assert len(woken) == 3 and all("partition failed" in str(e) for e in woken)


def test_recv_async_completes_at_once_when_sent_and_on_the_senders_thread_when_not():
    rendezvous = LocalRendezvous()
    got = []

    def callback(entry=None, error=None):
        got.append((entry, error, threading.get_ident()))

    rendezvous.send("early", 1.0, False)
    rendezvous.recv_async("early", callback)
    assert got == [((1.0, False), None, threading.get_ident())]
    rendezvous.recv_async("late", callback)
    assert rendezvous.waiting_keys == ["late"] and len(got) == 1
    sender = threading.Thread(target=rendezvous.send, args=("late", None, True))
    sender.start()
    sender.join(5)
    assert got[1] == ((None, True), None, sender.ident)
    assert rendezvous.waiting_keys == [] and rendezvous.pending_keys == []


def test_waiting_keys_name_the_keys_blocking_recvs_wait_for_until_their_values_come():
    rendezvous = LocalRendezvous()
    received = {}
    receivers = {
        key: threading.Thread(
            target=lambda k=key: received.update({k: rendezvous.recv(k)}), daemon=True
        )
        for key in ("a", "b")
    }
    for receiver in receivers.values():
        receiver.start()
    end = time.monotonic() + 60
    while rendezvous.waiting_keys != ["a", "b"]:
        assert time.monotonic() < end, "the receivers never waited"
        time.sleep(0.01)
    rendezvous.send("a", 1.0, False)
    receivers["a"].join(60)
    assert received == {"a": (1.0, False)} and rendezvous.waiting_keys == ["b"]
    rendezvous.send("b", None, True)
    receivers["b"].join(60)
    assert received["b"] == (None, True) and rendezvous.waiting_keys == []


def test_abort_completes_every_waiting_recv_async_with_the_error():
    rendezvous = LocalRendezvous()
    errors = []
    for key in ("a", "b"):
        rendezvous.recv_async(key, lambda entry=None, error=None: errors.append(error))
    rendezvous.abort(ValueError("partition failed"))
    rendezvous.recv_async("c", lambda entry=None, error=None: errors.append(error))
    assert len(errors) == 3 and all("partition failed" in str(e) for e in errors)


# -- runs ----------------------------------------------------------------------------------------
class _RecordingPool:
    """Stands in for a thread pool and records what is submitted to it."""

    def __init__(self, pool):
        self.pool = pool
        self.submitted = []

    def submit(self, fn, *args):
        self.submitted.append(fn)
        return self.pool.submit(fn, *args)


def test_receiving_across_devices_takes_no_waiting_thread(monkeypatch):
    waiters = _RecordingPool(executor.runner._waiters)
    receivers = _RecordingPool(rendezvous._receivers)
    monkeypatch.setattr(executor.runner, "_waiters", waiters)
    monkeypatch.setattr(rendezvous, "_receivers", receivers)
    n = df.placeholder(df.int32, [])
    with df.device("/cpu:0"):
        out = df.while_loop(
            lambda i, acc: i < n,
            lambda i, acc: _on_cpu1(lambda: (i + 1, acc * 2.0)),
            [df.constant(0), df.constant(1.0)],
        )[1]
    with df.Session(config=config(2)) as sess:
        assert sess.run(out, {n: 20}) == 2.0**20
    assert waiters.submitted == [] and receivers.submitted == []


def _on_cpu1(build):
    with df.device("/cpu:1"):
        return build()


def test_one_device_runs_the_ordinary_plan():
    with df.device("/cpu:0"):
        a = df.placeholder(df.float32, [])
        b = a * 2.0
    with df.Session(config=config()) as sess:
        assert sess.run(b, {a: 3.0}) == 6.0
        assert partition_graphs_of(sess, b, {a: 3.0}) == {}


def test_a_value_crosses_devices_and_the_partition_graphs_are_reported():
    with df.device("/cpu:0"):
        a = df.placeholder(df.float32, [], name="a")
    with df.device("/cpu:1"):
        b = df.multiply(a, 2.0, name="b")
    c = df.add(b, a, name="c")
    with df.Session(config=config()) as sess:
        assert sess.run(c, {a: 3.0}) == 9.0
        graphs = partition_graphs_of(sess, c, {a: 3.0})
    assert set(graphs) == {CPU(0), CPU(1)}
    assert "_Send" in types_of(graphs[CPU(0)]) and "_Recv" in types_of(graphs[CPU(1)])
    assert "_Recv" in types_of(graphs[CPU(0)]) and "_Send" in types_of(graphs[CPU(1)])


def test_a_partition_graph_saves_and_loads_with_its_send_and_recv(tmp_path):
    with df.device("/cpu:0"):
        a = df.placeholder(df.float32, [], name="a")
    with df.device("/cpu:1"):
        b = df.multiply(a, 2.0, name="b")
    with df.Session(config=config()) as sess:
        graphs = partition_graphs_of(sess, b + a, {a: 3.0})
    for graph in graphs.values():
        path = tmp_path / "partition.dfg"
        df.io.save_graph(graph, path)
        loaded = df.io.load_graph(path)
        for op in graph.get_operations():
            twin = loaded.get_operation_by_name(op.name)
            assert twin.type == op.type
            if op.type in ("_Send", "_Recv"):
                assert twin.attrs == op.attrs


def test_a_partition_graph_renders():
    with df.device("/cpu:0"):
        a = df.placeholder(df.float32, [], name="a")
    with df.device("/cpu:1"):
        b = df.multiply(a, 2.0, name="b")
    with df.Session(config=config()) as sess:
        graphs = partition_graphs_of(sess, b + a, {a: 3.0})
    source = df.render(graphs[CPU(1)], format="dot")
    assert "_Recv" in str(source) and "_Send" in str(source)


def test_a_dead_branch_across_devices_is_dead_and_the_taken_one_live():
    p = df.placeholder(df.bool, [])
    x = df.placeholder(df.float32, [])

    def true_fn():
        with df.device("/cpu:1"):
            return x * 10.0

    def false_fn():
        with df.device("/cpu:2"):
            return x - 1.0

    out = df.cond(p, true_fn, false_fn)
    with df.Session(config=config()) as sess:
        assert sess.run(out, {p: True, x: 2.0}) == 20.0
        assert sess.run(out, {p: False, x: 2.0}) == 1.0
        graphs = partition_graphs_of(sess, out, {p: True, x: 2.0})
    assert len(graphs) == 3


def split_loop(n, x, cond_device="/cpu:1", body_device="/cpu:2"):
    def cond(i, acc):
        with df.device(cond_device):
            return i < n

    def body(i, acc):
        with df.device(body_device):
            return i + 1, acc * 2.0 + df.cast(i, df.float32)

    return df.while_loop(cond, body, [df.constant(0), x])


@pytest.mark.parametrize("trips", [0, 1, 6])
def test_a_loop_whose_predicate_is_on_another_device_gives_the_one_device_values(trips):
    n = df.placeholder(df.int32, [])
    x = df.placeholder(df.float32, [])
    i, acc = split_loop(n, x)
    expected = 1.5
    for k in range(trips):
        expected = expected * 2.0 + k
    with df.Session(config=config()) as sess:
        assert sess.run([i, acc], {n: trips, x: 1.5}) == [trips, expected]
        graphs = partition_graphs_of(sess, acc, {n: trips, x: 1.5})
    # The body's device runs its own copy of the loop's control structure, driven by the
    # predicate it receives.
    body_types = types_of(graphs[CPU(2)])
    for kind in ("Enter", "Merge", "Switch", "NextIteration", "_Recv"):
        assert kind in body_types


def test_a_loop_held_on_one_device_with_its_predicate_on_another_gets_one_pair_per_tensor():
    # The loop's Switches (on cpu:2) read the predicate (on cpu:1): receiving it builds the
    # control loop on cpu:2, which itself needs the predicate; one pair must serve both.
    n = df.placeholder(df.int32, [])
    x = df.placeholder(df.float32, [])
    predicate_types = ("Less", "LoopCond")
    with df.device(lambda op: "/cpu:1" if op.type in predicate_types else "/cpu:2"):
        i, acc = split_loop(n, x, cond_device=None, body_device=None)
    with df.Session(config=config()) as sess:
        assert sess.run([i, acc], {n: 3, x: 1.0}) == [3, 12.0]
        graphs = partition_graphs_of(sess, acc, {n: 3, x: 1.0})
    sent = [
        (op.attrs["tensor_name"], op.attrs["recv_device"])
        for op in graphs[CPU(1)].get_operations()
        if op.type == "_Send"
    ]
    assert len(sent) == len(set(sent))


def test_nested_loops_and_conds_across_devices_give_the_one_device_values():
    def program(split: bool):
        n = df.placeholder(df.int32, [], name="n")
        x = df.placeholder(df.float32, [], name="x")

        def on(k):
            return df.device(f"/cpu:{k if split else 0}")

        def body(i, acc):
            with on(2):
                acc2 = acc * 1.5 + df.cast(i, df.float32)

            def inner():
                with on(1):
                    return df.while_loop(
                        lambda j, a: j < i, lambda j, a: (j + 1, a + 1.0), [0, acc2]
                    )[1]

            return i + 1, df.cond(df.equal(i % 2, 0), inner, lambda: acc2 - x)

        with on(1):
            out = df.while_loop(lambda i, acc: i < n, body, [df.constant(0), x])[1]
        return n, x, out

    results = []
    for split in (False, True):
        with df.Graph().as_default():
            n, x, out = program(split)
            with df.Session(config=config()) as sess:
                results.append([sess.run(out, {n: k, x: 2.0}) for k in (0, 1, 5)])
    assert results[0] == results[1]


def test_an_error_in_one_partition_stops_the_step_names_the_op_and_keeps_variables():
    v = df.Variable(1.0, name="v")
    x = df.placeholder(df.float32, [])
    with df.device("/cpu:1"):
        checked = df.debugging.check_numerics(df.math.log(x), "log of x", name="checked")
    with df.device("/cpu:0"):
        update = df.assign_add(v, 10.0)
        with df.control_dependencies([update]):
            out = checked + 1.0
    with df.Session(config=config()) as sess:
        sess.run(v.initializer)
        with pytest.raises(df.errors.InvalidArgumentError) as caught:
            sess.run(out, {x: -1.0}, options=df.RunOptions(timeout_in_ms=20_000))
        message = str(caught.value)
        assert "checked" in message and os.path.basename(__file__) in message
        assert sess.run(v) == 1.0  # the failed step left the variable as it was
        assert sess.run(out, {x: 1.0}) == 1.0
        assert sess.run(v) == 11.0


def test_a_fetch_without_a_value_on_another_device_names_its_op_and_position():
    with df.device("/cpu:0"):
        p = df.placeholder(df.bool, [])
        a = df.constant(1.0)
        output_false, output_true = df.switch(df.constant([1, 2]), p)
    with df.device("/cpu:1"):
        b = df.identity(a) * 3.0
        dead = df.identity(output_false, name="dead_branch")
    with df.Session(config=config()) as sess:
        with pytest.raises(df.errors.InvalidArgumentError) as caught:
            sess.run([a, output_true, b, dead], {p: True})
    message = str(caught.value)
    assert "dead_branch (Retval[3] does not have value): it depends on the untaken" in message
    assert os.path.basename(__file__) in message
    assert "Retval[0]" not in message and "Retval[2]" not in message


def _yielding(tensor):
    """``tensor`` passed through a kernel that gives the GIL away before it returns, as a
    kernel that takes time does: other threads of the step run meanwhile."""

    def give_way(value):
        time.sleep(0)
        return value

    out = df.py_func(give_way, [tensor], tensor.dtype, name="give_way")
    out.set_shape(tensor.shape)
    return out


@pytest.mark.parametrize("senders", [2, 3])
def test_a_value_computed_from_several_received_values_is_there_at_the_end_of_every_step(
    senders,
):
    # Each value arrives on the receiving device from another thread and goes on through a
    # kernel run by that thread; the step ends only once the last of them has been added.
    received = []
    for k in range(senders):
        with df.device(f"/cpu:{k}"):
            received.append(_yielding(df.constant(np.full(3, float(k + 1)))))
    with df.device(f"/cpu:{senders}"):
        total = df.add_n([_yielding(value) for value in received])
    expected = np.full(3, senders * (senders + 1) / 2)
    with df.Session(config=config(senders + 1)) as sess:
        for step in range(1000):
            value = sess.run(total, options=df.RunOptions(timeout_in_ms=20_000))
            assert np.array_equal(value, expected), step


def test_a_step_stuck_on_a_recv_stops_at_its_deadline():
    release = threading.Event()

    def slow(value):
        release.wait(10)
        return value

    x = df.placeholder(df.float32, [])
    with df.device("/cpu:1"):
        stuck = df.py_func(slow, [x], df.float32)
    with df.device("/cpu:0"):
        out = stuck * 2.0
    try:
        with df.Session(config=config()) as sess:
            start = time.monotonic()
            with pytest.raises(df.errors.DeadlineExceededError):
                sess.run(out, {x: 1.0}, options=df.RunOptions(timeout_in_ms=200))
            assert time.monotonic() - start < 5
            release.set()
            assert sess.run(out, {x: 1.0}) == 2.0
    finally:
        release.set()


def test_a_step_in_the_tests_sessions_whose_recv_never_gets_its_value_fails_at_the_deadline(
    monkeypatch,
):
    """The tests' partitioned sessions (`partitioned_config`) give every step a deadline, so a
    step whose ``_Recv`` waits for a value that never comes fails its test instead of hanging
    the suite (here with the deadline made short)."""
    monkeypatch.setattr(placed_programs, "STEP_TIMEOUT_MS", 300)
    with df.device("/cpu:1"):
        queue = df.FIFOQueue(1, df.float32, shapes=[[]], name="empty_queue")
        never = queue.dequeue(name="never")
    with df.device("/cpu:0"):
        out = df.multiply(never, 2.0, name="out")
    with df.Session(config=partitioned_config(device_count={"CPU": 2})) as sess:
        with pytest.raises(df.errors.DeadlineExceededError, match="timeout_in_ms=300") as caught:
            sess.run(out)
    assert "never" in str(caught.value)


def test_closing_the_session_wakes_the_waiting_recvs_and_stops_the_step():
    # A loop that would run for ages, its predicate on one device and its body on the other:
    # each partition spends its time waiting for the other's values.
    v = df.Variable(1.0, name="v")
    n = df.placeholder(df.int32, [])
    started = threading.Event()

    def body(i, acc):
        with df.device("/cpu:1"):
            mark = df.py_func(lambda: (started.set(), np.float32(0))[1], [], df.float32)
            mark.set_shape([])
            return i + 1, acc + mark

    with df.device("/cpu:0"):
        loop = df.while_loop(lambda i, acc: i < n, body, [df.constant(0), df.constant(0.0)])
        with df.control_dependencies([loop[1]]):
            update = df.assign_add(v, 1.0)
    sess = df.Session(config=config(2))
    sess.run(v.initializer)
    outcome = []

    def run():
        try:
            sess.run(update, {n: 10**9})
        except Exception as error:  # noqa: BLE001 - the test looks at what stopped the step
            outcome.append(error)

    step = threading.Thread(target=run, daemon=True)
    step.start()
    assert started.wait(10)
    sess.close()
    step.join(10)
    assert not step.is_alive(), "the step went on after its Session was closed"
    assert len(outcome) == 1 and isinstance(outcome[0], df.errors.CancelledError)
    assert "closed" in str(outcome[0])
    with pytest.raises(RuntimeError):
        sess.run(v)


def _doubling_loop_across_devices():
    """A loop whose predicate is on /cpu:0 and whose body is on /cpu:1, fed ``x``."""
    x = df.placeholder(df.float32, [], name="x")
    with df.device("/cpu:0"):
        i0 = df.constant(0, name="i0")

        def body(i, v):
            with df.device("/cpu:1"):
                return df.add(i, 1, name="next"), df.multiply(v, 2.0, name="double")

        _, out = df.while_loop(lambda i, v: i < 4, body, [i0, x], name="loop")
    return x, out


def test_tensor_watches_see_every_partition_of_a_step():
    x, out = _doubling_loop_across_devices()
    options = df.RunOptions()
    for name in ("loop/double", "x"):
        df.debug.add_debug_tensor_watch(options, name, 0)
    metadata = df.RunMetadata()
    with df.Session(config=config(2)) as sess:
        assert sess.run(out, {x: 1.0}, options=options, run_metadata=metadata) == 16.0
    dump = metadata.debug_dump
    doubled = dump.records("loop/double:0")
    assert [(r.iteration, r.value) for r in doubled] == [(0, 2.0), (1, 4.0), (2, 8.0), (3, 16.0)]
    assert {r.frame for r in doubled} == {"loop[iter 0 of root]"}
    (fed,) = dump.records("x:0")
    assert fed.value == 1.0
    assert dump.watch_keys_not_run == []


def test_loop_iterations_count_a_loop_split_across_devices_once():
    x, out = _doubling_loop_across_devices()
    reported = []
    for devices in (1, 2):
        metadata = df.RunMetadata()
        one_or_two = partitioned_config(device_count={"CPU": devices}, allow_soft_placement=True)
        with df.Session(config=one_or_two) as sess:
            sess.run(out, {x: 1.0}, options=df.RunOptions(), run_metadata=metadata)
        reported.append(metadata.loop_iterations)
    one_device, two_devices = reported
    assert one_device == {"loop": [5]}
    assert two_devices == one_device


def _twins_and_a_chain(split: bool):
    """Two equal products (and their equal constants) and a chain of elementwise ops, half of
    each on /cpu:1 when ``split``, else all on /cpu:0."""
    a = df.placeholder(df.float32, [4], name="a")
    other = "/cpu:1" if split else "/cpu:0"
    with df.device("/cpu:0"):
        b1 = df.multiply(a, 2.0, name="b1")
        e1 = df.exp(b1, name="e1")
    with df.device(other):
        b2 = df.multiply(a, 2.0, name="b2")
        e2 = df.exp(e1, name="e2")
        t = df.tanh(e2, name="t")
    with df.device("/cpu:0"):
        out = df.add_n([b1, b2, t], name="out")
    return a, out


@pytest.mark.parametrize("split", [False, True])
def test_graph_passes_never_merge_or_fuse_ops_of_different_devices(split):
    a, out = _twins_and_a_chain(split)
    metadata = df.RunMetadata()
    ones = np.ones(4, np.float32)
    with df.Session(config=config(2)) as sess:
        value = sess.run(out, {a: ones}, options=df.RunOptions(), run_metadata=metadata)
    np.testing.assert_allclose(value, 4.0 + np.tanh(np.exp(np.exp(2.0))), rtol=1e-6)
    ran = {record.node_name for record in metadata.step_stats}
    rewritten = metadata.rewritten_ops
    if not split:
        # On one device the passes do merge the twins and fuse the chain.
        assert "b2" in rewritten and "e1" in rewritten
        return
    assert {"b1", "b2", "b1/y", "b2/y", "e1"} <= ran
    assert "b2" not in rewritten and "b2/y" not in rewritten and "e1" not in rewritten
    # Within one device they still work: e2 and t, both on /cpu:1, are fused.
    assert rewritten.get("e2") == "fused (elementwise_fusion)"


def test_variable_updates_of_several_partitions_commit_together():
    v = df.Variable(1.0, name="v")
    w = df.Variable(2.0, name="w")
    with df.device("/cpu:1"):
        update_v = df.assign_add(v, 1.0)
    with df.device("/cpu:2"):
        update_w = df.assign_add(w, 1.0)
    step = df.group(update_v, update_w)
    with df.Session(config=config()) as sess:
        sess.run([v.initializer, w.initializer])
        for _ in range(3):
            sess.run(step)
        assert sess.run([v, w]) == [4.0, 5.0]


# -- the property --------------------------------------------------------------------------------
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    program=programs.programs,
    x=st.floats(-4.0, 4.0, allow_nan=False),
    n=st.integers(-3, 5),
    devices=st.integers(2, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_programs_placed_randomly_give_the_one_device_values(program, x, n, devices, seed):
    chooser = random.Random(seed)
    check_placed_program(
        program,
        x,
        n,
        lambda op: f"/device:CPU:{chooser.randrange(devices)}",
        lambda: df.Session(config=config(devices)),
    )


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    program=programs.programs,
    x=st.floats(-4.0, 4.0, allow_nan=False),
    n=st.integers(-3, 5),
    devices=st.integers(2, 4),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_programs_with_slow_kernels_placed_randomly_give_the_reference_every_step(
    program, x, n, devices, seed
):
    # Every assigned value goes through a kernel that lets other threads run, so values cross
    # devices while the receiving partition's kernels still run.
    chooser = random.Random(seed)
    check_placed_program(
        program,
        x,
        n,
        lambda op: f"/device:CPU:{chooser.randrange(devices)}",
        lambda: df.Session(config=config(devices)),
        through=_yielding,
        steps=10,
    )


def test_feeding_a_later_output_of_a_multi_output_op_feeds_that_output():
    with df.device("/cpu:0"):
        x = df.placeholder(df.float32, [4], name="x")
        first, second = df.split(x, 2)
    with df.device("/cpu:1"):
        y = df.reduce_sum(second * 10.0) + df.reduce_sum(first)
    with df.Session(config=config()) as sess:
        fed = {x: [1.0, 2.0, 3.0, 4.0], second: [5.0, 6.0]}
        assert sess.run(y, fed) == (5.0 + 6.0) * 10.0 + 1.0 + 2.0

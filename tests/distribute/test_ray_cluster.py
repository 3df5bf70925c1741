"""df.distribute.RayCluster: one Ray actor per task, and a Session whose steps run on them."""

import ipaddress
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
from placed_programs import partitioned_config

import dataflow as df
from dataflow.distribute.rendezvous import make_key
from dataflow.framework import errors
from dataflow.io.dfg import graph_to_bytes

WORKER0 = "/job:worker/task:0"
WORKER1 = "/job:worker/task:1"


def wait_until(condition, what: str, timeout: float = 60.0) -> None:
    """Polls ``condition`` until it holds, failing the test after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"waited {timeout} s in vain until {what}"
        time.sleep(0.01)


def kill_task(ray, actor) -> None:
    """Kills a task's actor and returns once its process has ended.  Ray's kill only asks, and
    Ray may report the actor dead a moment before its process ends, while that process still
    answers the links to it."""
    _, pid = ray.get(actor.ping.remote(), timeout=60)
    ray.kill(actor)

    def ended():
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] in "ZX"  # a zombie has ended
        except FileNotFoundError:
            return True

    wait_until(ended, "the task's process has ended")


def key_to(destination, tensor="x:0", frame="", iteration=0):
    source = f"{WORKER0}/replica:0/device:CPU:0"
    return make_key(source, 1, f"{destination}/device:CPU:0", tensor, frame, iteration)


def test_cluster_has_one_named_task_per_job_index_and_a_cluster_spec(cluster, local_ray):
    assert cluster.tasks == ["/job:ps/task:0", WORKER0, WORKER1]
    assert cluster.spec.jobs == ["ps", "worker"]
    assert cluster.spec.num_tasks("worker") == 2
    assert isinstance(cluster.spec, df.train.ClusterSpec)
    names_and_pids = local_ray.get([cluster.actor(t).ping.remote() for t in cluster.tasks])
    assert [name for name, _ in names_and_pids] == cluster.tasks
    assert len({pid for _, pid in names_and_pids}) == 3  # a process each
    assert df.Session(cluster.target).sess_str == cluster.target


def test_variables_live_on_their_task_between_runs_and_sessions(cluster):
    with df.Graph().as_default():
        with df.device("/job:ps/task:0"):
            total = df.Variable(np.zeros(3, np.float32), name="total")
            x = df.placeholder(df.float32, [3], name="x")
            add = df.assign_add(total, x)
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            sess.run(total.initializer)
            sess.run(add, {x: [1.0, 2.0, 3.0]})
            assert sess.run(add, {x: [1.0, 2.0, 3.0]}).tolist() == [2.0, 4.0, 6.0]
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            assert sess.run(total).tolist() == [2.0, 4.0, 6.0]


def test_a_graph_is_registered_with_its_task_once_per_version(cluster, local_ray):
    worker1 = cluster.actor(WORKER1)
    before = local_ray.get(worker1.registrations.remote())
    with df.Graph().as_default():
        with df.device(WORKER1):
            x = df.placeholder(df.float32, [], name="x")
            y = x * 2.0
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            assert [sess.run(y, {x: float(i)}) for i in range(3)] == [0.0, 2.0, 4.0]
            assert len(local_ray.get(worker1.registrations.remote())) == len(before) + 1
            with df.device(WORKER1):
                z = y + 1.0  # a new op: the graph's new version is registered again
            assert sess.run(z, {x: 1.0}) == 3.0
    assert len(local_ray.get(worker1.registrations.remote())) == len(before) + 2


def test_loops_conds_feeds_and_nested_fetches_give_the_local_values(cluster):
    with df.Graph().as_default():
        n = df.placeholder(df.int32, [], name="n")
        x = df.placeholder(df.float32, [None], name="x")
        _, grown = df.while_loop(
            lambda i, a: i < n,
            lambda i, a: (i + 1, df.cond(i < 2, lambda: a * 2.0, lambda: a + 1.0)),
            [0, x],
        )
        fetches = {"grown": grown, "pair": (df.reduce_sum(grown), n + 1)}
        feed = {n: 5, x: np.array([1.0, -0.5], np.float32)}
        with df.Session() as local:
            expected = local.run(fetches, feed)
        with df.Session(cluster.target, config=partitioned_config()) as remote:
            got = remote.run(fetches, feed)
    assert got["grown"].tolist() == expected["grown"].tolist()
    assert got["pair"] == expected["pair"]


def test_an_error_on_a_task_names_the_op_the_users_line_and_the_task(cluster):
    with df.Graph().as_default():
        with df.device(WORKER1):
            p = df.placeholder(df.float32, [], name="needs_a_feed")
            y = p + 1.0
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            with pytest.raises(errors.InvalidArgumentError) as caught:
                sess.run(y)
            assert caught.value.op is p.op
            assert "test_ray_cluster.py" in str(caught.value)
            assert WORKER1 in str(caught.value)
            assert sess.run(y, {p: 1.0}) == 2.0  # the Session is still usable


def test_an_op_placed_on_no_task_of_the_cluster_is_refused_naming_it(cluster):
    with df.Graph().as_default():
        with df.device("/job:worker/task:7"):
            y = df.constant(1.0, name="far_away")
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            with pytest.raises(errors.InvalidArgumentError, match="far_away.*task:7"):
                sess.run(y)


def test_a_tensor_inside_a_loop_across_tasks_is_refused_as_a_local_session_refuses_it(cluster):
    with df.Graph().as_default():
        inside = []

        def body(i):
            with df.device(WORKER1):
                inside.append(i + 1)
            return inside[-1]

        with df.device(WORKER0):
            result = df.while_loop(lambda i: i < 3, body, [df.constant(0)])
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            assert sess.run(result) == 3
            with pytest.raises(errors.InaccessibleTensorError, match="inside the while loop"):
                sess.run(inside[0])


def test_a_target_naming_no_cluster_is_refused():
    with pytest.raises(ValueError, match="names no running RayCluster"):
        df.Session("ray://dataflow/no-such-cluster")


# -- the rendezvous between tasks ------------------------------------------------------------------
def test_a_tensor_sent_to_another_task_arrives_through_the_object_store(cluster, local_ray):
    array = np.arange(1 << 18, dtype=np.float32)  # 1 MB: Ray moves it through its object store
    key = key_to(WORKER1)
    local_ray.get(cluster.actor(WORKER0).send.remote("step-a", key, array))
    value, is_dead = local_ray.get(cluster.actor(WORKER1).recv.remote("step-a", key, 10_000))
    assert not is_dead
    np.testing.assert_array_equal(value, array)
    assert not value.flags.writeable  # a zero-copy view of the stored object


def test_a_small_tensor_sent_to_another_task_arrives_over_the_link_between_them(cluster, local_ray):
    array = np.arange(1000, dtype=np.float32)  # 4 KB: inline, over the link between the tasks
    key = key_to(WORKER1, "small:0")
    local_ray.get(cluster.actor(WORKER0).send.remote("step-s", key, array))
    value, is_dead = local_ray.get(cluster.actor(WORKER1).recv.remote("step-s", key, 10_000))
    np.testing.assert_array_equal(value, array)
    assert not is_dead


def test_receives_waiting_on_a_task_hold_no_thread_while_they_wait():
    from dataflow.distribute.ray_task import RayRendezvous, TaskServer
    from dataflow.distribute.rendezvous import receive_async

    server = TaskServer("worker", 1)
    rendezvous = RayRendezvous(server, "step-t", None)
    received = {}
    threads_before = threading.active_count()
    keys = [key_to(WORKER1, f"t{i}:0") for i in range(50)]
    for i, key in enumerate(keys):
        receive_async(
            rendezvous, key, None, lambda entry=None, error=None, i=i: received.update({i: entry})
        )
    assert threading.active_count() == threads_before
    assert sorted(server.waiting_keys("step-t")) == sorted(keys)
    for i, key in enumerate(keys):
        server.deliver("step-t", key, np.float32(i), False)
    assert received == {i: (np.float32(i), False) for i in range(50)}


def test_a_recv_waiting_before_the_send_gets_the_value_once_it_is_sent(cluster, local_ray):
    key = key_to(WORKER1, "late:0", frame="while", iteration=3)
    worker1 = cluster.actor(WORKER1)
    waiting = worker1.recv.remote("step-b", key, 30_000)
    wait_until(
        lambda: local_ray.get(worker1.waiting_keys.remote("step-b")) == [key],
        "worker 1's recv waits",
    )
    local_ray.get(cluster.actor(WORKER0).send.remote("step-b", key, np.float32(7.0)))
    assert local_ray.get(waiting) == (7.0, False)


def test_a_dead_value_travels_dead(cluster, local_ray):
    key = key_to(WORKER1, "branch:0")
    local_ray.get(cluster.actor(WORKER0).send.remote("step-c", key, np.ones(3), True))
    assert local_ray.get(cluster.actor(WORKER1).recv.remote("step-c", key, 10_000)) == (None, True)


def test_a_recv_that_gets_no_value_stops_at_its_deadline(cluster, local_ray):
    start = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match="never:0"):
        local_ray.get(cluster.actor(WORKER1).recv.remote("step-d", key_to(WORKER1, "never:0"), 300))
    assert time.monotonic() - start < 10


def test_a_failed_step_aborts_the_recvs_of_that_step_on_every_other_task(cluster, local_ray):
    with df.Graph().as_default() as graph:
        with df.device(WORKER0):
            p = df.placeholder(df.float32, [], name="unfed")
            y = p * 2.0
    worker0 = cluster.actor(WORKER0)
    local_ray.get(worker0.register_graph.remote("graph-e", graph_to_bytes(graph)))
    worker1 = cluster.actor(WORKER1)
    waiting = worker1.recv.remote("step-e", key_to(WORKER1), 60_000)
    wait_until(
        lambda: local_ray.get(worker1.waiting_keys.remote("step-e")) == [key_to(WORKER1)],
        "worker 1's recv waits",
    )
    outcome = local_ray.get(worker0.run_partition.remote("step-e", "graph-e", {}, [y.name], [], 0))
    assert outcome[:3] == ("error", "InvalidArgumentError", "unfed")
    with pytest.raises(errors.InvalidArgumentError, match="unfed"):
        local_ray.get(waiting, timeout=30)


# -- faults ----------------------------------------------------------------------------------------
def test_a_task_that_dies_mid_step_fails_the_step_with_unavailable_error(local_ray):
    with df.distribute.RayCluster({"worker": 2}) as small:
        with df.Graph().as_default():
            with df.device(WORKER1):
                queue = df.FIFOQueue(4, df.float32, shapes=[[]], name="empty_queue")
                taken = queue.dequeue(name="waits_forever")
            with df.Session(small.target, config=partitioned_config()) as sess:
                failures = []

                def run():
                    try:
                        sess.run(taken)
                    except Exception as e:  # noqa: BLE001 - the test inspects it
                        failures.append(e)

                runner = threading.Thread(target=run)
                runner.start()
                worker1 = small.actor(WORKER1)
                wait_until(
                    lambda: local_ray.get(worker1.steps_in_progress.remote()) != [],
                    "the step runs on worker 1 (where it blocks in the dequeue)",
                )
                local_ray.kill(small.actor(WORKER1))
                runner.join(60)
                assert not runner.is_alive()
                (failure,) = failures
                assert isinstance(failure, errors.UnavailableError)
                assert WORKER1 in str(failure) and "waits_forever" in str(failure)
                assert "test_ray_cluster.py" in str(failure)
                with pytest.raises(errors.UnavailableError, match="task:1"):
                    sess.run(taken)  # the task stays lost: the next step fails at once


def test_a_stopped_task_fails_a_step_at_its_deadline_not_long_after(local_ray):
    with df.distribute.RayCluster({"worker": 2}) as small:
        with df.Graph().as_default():
            with df.device(WORKER1):
                doubled = df.multiply(df.constant(2.0), 2.0, name="doubled_on_worker1")
                tripled = df.multiply(df.constant(2.0), 3.0, name="tripled_on_worker1")
            with df.Session(small.target) as sess:
                assert sess.run(doubled) == 4.0  # registered with worker 1 while it runs
                _, pid = local_ray.get(small.actor(WORKER1).ping.remote())
                os.kill(pid, signal.SIGSTOP)
                try:
                    # A run the task has seen, and one it must first register: both stop at
                    # the deadline, as the task cannot answer (it is stopped, not gone).
                    for fetch, op_name in [(doubled, "doubled_on_worker1"), (tripled, "tripled")]:
                        start = time.monotonic()
                        with pytest.raises(errors.DeadlineExceededError) as failure:
                            sess.run(fetch, options=df.RunOptions(timeout_in_ms=3000))
                        elapsed = time.monotonic() - start
                        assert 2.9 < elapsed < 8.0  # at the deadline of 3 s, give or take load
                        assert WORKER1 in str(failure.value) and op_name in str(failure.value)
                finally:
                    os.kill(pid, signal.SIGCONT)
                assert sess.run(tripled) == 6.0  # once it runs again, so does the Session


def test_a_dead_task_fails_runs_it_has_never_seen_with_unavailable_error(local_ray):
    with df.distribute.RayCluster({"worker": 2}) as small:
        with df.Graph().as_default():
            with df.device(WORKER1):
                doubled = df.multiply(df.constant(2.0), 2.0, name="doubled_on_worker1")
                tripled = df.multiply(df.constant(2.0), 3.0, name="tripled_on_worker1")
            with df.device(WORKER0):
                summed = df.add(doubled, 1.0, name="summed_on_worker0")
            with df.Session(small.target) as sess:
                assert sess.run(doubled) == 4.0
                kill_task(local_ray, small.actor(WORKER1))
                for fetch, op_name in [(tripled, "tripled_on_worker1"), (summed, "summed")]:
                    with pytest.raises(errors.UnavailableError) as failure:
                        sess.run(fetch, options=df.RunOptions(timeout_in_ms=60_000))
                    assert WORKER1 in str(failure.value)
                    assert op_name in str(failure.value) or "doubled" in str(failure.value)
                    assert "test_ray_cluster.py" in str(failure.value)


# -- train.Server ----------------------------------------------------------------------------------
def test_a_servers_target_runs_ops_that_ask_for_no_task_on_its_task(cluster, local_ray):
    server = df.train.Server(cluster.spec, job_name="worker", task_index=1)
    server.start()
    worker1 = cluster.actor(WORKER1)
    before = len(local_ray.get(worker1.registrations.remote()))
    with df.Graph().as_default():
        y = df.constant(3.0) * 2.0
        with df.Session(server.target, config=partitioned_config()) as sess:
            assert sess.run(y) == 6.0
    assert len(local_ray.get(worker1.registrations.remote())) == before + 1


def test_monitored_training_session_trains_on_a_servers_task(cluster):
    server = df.train.Server(cluster.spec, job_name="worker", task_index=0)
    with df.Graph().as_default():
        step = df.train.get_or_create_global_step()
        weight = df.Variable(4.0, name="weight")
        loss = df.square(weight)
        train = df.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step)
        hooks = [df.train.StopAtStepHook(last_step=3)]
        with df.train.MonitoredTrainingSession(
            master=server.target, is_chief=True, hooks=hooks, config=partitioned_config()
        ) as sess:
            while not sess.should_stop():
                sess.run(train)
        with df.Session(server.target, config=partitioned_config()) as sess:
            assert sess.run([step, weight]) == [3, 0.5]  # 4 * (1 - 2 * 0.25) ** 3


def test_a_server_for_a_task_the_ray_cluster_lacks_is_refused(cluster):
    # (A ClusterSpec of host:port addresses is served by task processes: test_task_processes.)
    with pytest.raises(ValueError, match="task:5"):
        df.train.Server(cluster.spec, job_name="worker", task_index=5)


def test_a_step_that_waits_past_its_deadline_fails_and_leaves_the_session_usable(cluster):
    with df.Graph().as_default():
        with df.device(WORKER1):
            queue = df.FIFOQueue(4, df.float32, shapes=[[]], name="slow_queue")
            taken = queue.dequeue(name="waits_for_an_item")
            put = queue.enqueue(5.0)
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            with pytest.raises(errors.DeadlineExceededError, match="waits_for_an_item"):
                sess.run(taken, options=df.RunOptions(timeout_in_ms=300))
            sess.run(put)
            assert sess.run(taken) == 5.0


# -- steps placed on several tasks -----------------------------------------------------------------
PS = "/job:ps/task:0"


def scaled_loop(placed: bool):
    """A variable on the ps, a loop reading it on worker 1, a sum of its result on worker 0
    (with ``placed`` False, the same graph on no device)."""

    def on(task):
        return df.device(task if placed else None)

    with on(PS):
        weight = df.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="weight")
    with on(WORKER1):
        x = df.placeholder(df.float32, [3], name="x")
        n = df.placeholder(df.int32, [], name="n")
        _, grown = df.while_loop(
            lambda i, a: i < n,
            lambda i, a: (i + 1, df.cond(i < 2, lambda: a * weight, lambda: a + x)),
            [0, x],
        )
    with on(WORKER0):
        total = df.reduce_sum(grown, name="total")
    return weight, x, n, grown, total


def test_a_graph_placed_on_several_tasks_gives_the_one_device_values(cluster):
    feed_values = (np.array([1.0, -0.5, 2.0], np.float32), 4)
    with df.Graph().as_default():
        weight, x, n, grown, total = scaled_loop(placed=False)
        with df.Session() as local:
            local.run(weight.initializer)
            expected = local.run({"grown": grown, "total": total}, dict(zip((x, n), feed_values)))
    with df.Graph().as_default():
        weight, x, n, grown, total = scaled_loop(placed=True)
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            sess.run(weight.initializer)
            got = sess.run({"grown": grown, "total": total}, dict(zip((x, n), feed_values)))
    assert got["grown"].tolist() == expected["grown"].tolist()
    assert got["total"] == expected["total"]


def test_each_tasks_partition_is_registered_once_per_fetches_and_feeds(cluster, local_ray):
    def registered():
        counts = local_ray.get([cluster.actor(t).registrations.remote() for t in cluster.tasks])
        return {t: len(ids) for t, ids in zip(cluster.tasks, counts)}

    with df.Graph().as_default():
        weight, x, n, grown, total = scaled_loop(placed=True)
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            sess.run(weight.initializer)
            before = registered()
            for trips in range(3):
                sess.run(total, {x: np.ones(3, np.float32), n: trips})
            after = registered()
    assert {t: after[t] - before[t] for t in cluster.tasks} == {PS: 1, WORKER0: 1, WORKER1: 1}


def test_run_metadata_gets_the_graph_of_each_task(cluster):
    with df.Graph().as_default():
        weight, x, n, grown, total = scaled_loop(placed=True)
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            sess.run(weight.initializer)
            metadata = df.RunMetadata()
            sess.run(
                total,
                {x: np.ones(3, np.float32), n: 2},
                options=df.RunOptions(output_partition_graphs=True),
                run_metadata=metadata,
            )
    graphs = metadata.partition_graphs
    assert len(graphs) == 3
    devices = [{op.device for op in g.get_operations()} for g in graphs]
    assert sorted(d.pop() for d in devices if len(d) == 1) == [
        "/job:ps/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:0/device:CPU:0",
        "/job:worker/replica:0/task:1/device:CPU:0",
    ]
    types = [op.type for g in graphs for op in g.get_operations()]
    assert types.count("_Send") == types.count("_Recv") > 0


def test_a_failure_on_one_task_leaves_every_tasks_variables_as_they_were(cluster):
    with df.Graph().as_default():
        with df.device(PS):
            count = df.Variable(0.0, name="count")
            counted = df.assign_add(count, 1.0, name="counted")
        with df.device(WORKER1):
            seen = df.Variable(0.0, name="seen")
            noted = df.assign(seen, 5.0, name="noted")
        with df.device(WORKER0):
            p = df.placeholder(df.float32, [], name="needs_a_feed")
            doubled = p * 2.0
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            sess.run([count.initializer, seen.initializer])
            with pytest.raises(errors.InvalidArgumentError) as caught:
                sess.run([counted, noted, doubled])  # the ps and worker 1 succeed, worker 0 not
            assert caught.value.op is p.op
            assert "test_ray_cluster.py" in str(caught.value) and WORKER0 in str(caught.value)
            assert sess.run([count, seen]) == [0.0, 0.0]
            assert sess.run([counted, noted, doubled], {p: 1.0})[2] == 2.0
            assert sess.run([count, seen]) == [1.0, 5.0]


def test_a_task_holding_writes_drops_them_when_another_task_misses_the_steps_deadline(cluster):
    with df.Graph().as_default():
        with df.device(PS):
            total = df.Variable(0.0, name="total")
            added = df.assign_add(total, 1.0, name="added")
        with df.device(WORKER1):
            queue = df.FIFOQueue(4, df.float32, shapes=[[]], name="late_queue")
            taken = df.identity(queue.dequeue(), name="waits_past_the_deadline")
            put = queue.enqueue(3.0)
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            sess.run(total.initializer)
            # The ps's part succeeds at once and holds its write, waiting for worker 1's word.
            with pytest.raises(errors.DeadlineExceededError):
                sess.run([added, taken], options=df.RunOptions(timeout_in_ms=500))
            assert sess.run(total) == 0.0
            sess.run(put)
            assert sess.run([added, taken]) == [1.0, 3.0]
            assert sess.run(total) == 1.0


def test_a_step_across_tasks_waiting_past_its_deadline_fails_and_keeps_the_session(cluster):
    with df.Graph().as_default():
        with df.device(WORKER1):
            queue = df.FIFOQueue(4, df.float32, shapes=[[]], name="cross_queue")
            taken = queue.dequeue(name="waits_for_an_item")
            put = queue.enqueue(5.0)
        with df.device(PS):
            used = df.identity(taken * 2.0, name="used_on_ps")
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            start = time.monotonic()
            with pytest.raises(errors.DeadlineExceededError):
                sess.run(used, options=df.RunOptions(timeout_in_ms=500))
            assert time.monotonic() - start < 10
            sess.run(put)
            assert sess.run(used) == 10.0


def test_a_replaced_task_gets_its_variables_back_from_the_last_checkpoint(local_ray, tmp_path):
    with df.distribute.RayCluster({"ps": 1, "worker": 1}) as small:
        with df.Graph().as_default():
            with df.device(PS):
                count = df.Variable(1.0, name="count")
            with df.device(WORKER0):
                bump = df.assign_add(count, 1.0, name="bump")
            saver = df.train.Saver()
            with df.Session(small.target, config=partitioned_config()) as sess:
                sess.run(count.initializer)
                sess.run(bump)
                checkpoint = saver.save(sess, str(tmp_path / "model"))
                sess.run(bump)  # after the checkpoint: lost with the task
                kill_task(local_ray, small.actor(PS))
                with pytest.raises(errors.UnavailableError, match="ps/task:0"):
                    sess.run(bump)
                small.replace_task(PS)
                with pytest.raises(errors.FailedPreconditionError):
                    sess.run(bump)  # the new task holds no variable
                saver.restore(sess, checkpoint)
                assert sess.run(count) == 2.0
                assert sess.run(bump) == 3.0


class StepAtCreation(df.train.SessionRunHook):
    """Records the global step each session created starts at."""

    def __init__(self, global_step):
        self.global_step = global_step
        self.steps = []

    def after_create_session(self, session, coord):
        self.steps.append(session.run(self.global_step))


class LoseTheTaskAt(df.train.SessionRunHook):
    """Kills ``task`` of ``cluster`` after the run that read the global step ``step``, once
    the other hooks are done with that run (a checkpoint of ``step`` is saved)."""

    def __init__(self, cluster, task, global_step, step):
        self.cluster, self.task, self.global_step, self.step = cluster, task, global_step, step
        self.killed = False

    def before_run(self, run_context):
        return df.train.SessionRunArgs(self.global_step)

    def after_run(self, run_context, run_values):
        if run_values.results == self.step and not self.killed:
            self.killed = True
            kill_task(self.cluster._ray, self.cluster.actor(self.task))


class ReplacingLostTasks(df.train.SessionCreator):
    """Creates a chief's sessions; when one cannot be created because ``task`` is gone, the
    task is replaced (as a cluster manager restarts a lost task) and the error raised."""

    def __init__(self, cluster, task, **chief_options):
        self.cluster, self.task = cluster, task
        self.chief = df.train.ChiefSessionCreator(**chief_options)
        self.replaced = 0

    def create_session(self):
        try:
            return self.chief.create_session()
        except errors.UnavailableError:
            self.replaced += 1
            self.cluster.replace_task(self.task)
            raise


def test_a_monitored_session_recovers_from_a_lost_ps_from_its_last_checkpoint(tmp_path):
    with df.distribute.RayCluster({"ps": 1, "worker": 1}) as small:
        with df.Graph().as_default():
            with df.device(PS):
                step = df.train.get_or_create_global_step()
                weight = df.Variable(4.0, name="weight")
            with df.device(WORKER0):
                train = df.train.GradientDescentOptimizer(0.25).minimize(
                    df.square(weight), global_step=step
                )
            creator = ReplacingLostTasks(
                small, PS, master=small.target, checkpoint_dir=str(tmp_path)
            )
            hooks = [
                df.train.CheckpointSaverHook(str(tmp_path), save_steps=2),
                df.train.StopAtStepHook(last_step=6),
                LoseTheTaskAt(small, PS, step, 4),
                StepAtCreation(step),
            ]
            calls = 0
            with df.train.MonitoredSession(session_creator=creator, hooks=hooks) as sess:
                while not sess.should_stop():
                    sess.run(train, options=df.RunOptions(timeout_in_ms=60_000))
                    calls += 1
            assert hooks[2].killed and creator.replaced == 1
            assert hooks[3].steps == [0, 4]  # the second session restored step 4's checkpoint
            # Five runs, the fifth (from step 4 to 5) lost with the ps; then the runs from the
            # checkpoint to step 6, the first of them the call that met the lost ps.
            assert calls == 7
            with df.Session(small.target) as check:
                assert check.run([step, weight]) == [6, 4.0 * 0.5**6]


# -- who can reach the cluster ---------------------------------------------------------------------
def is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


def test_a_local_ray_is_reachable_on_the_loopback_address_only(cluster, local_ray):
    psutil = pytest.importorskip("psutil")
    assert [n["NodeManagerAddress"] for n in local_ray.nodes() if n["Alive"]] == ["127.0.0.1"]
    # Every server of Ray (its control store, its node manager, the task actors' workers)
    # runs in a process this one started, directly or through another.
    processes = [psutil.Process(), *psutil.Process().children(recursive=True)]
    listening = set()
    for process in processes:
        try:
            connections = process.net_connections(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        listening |= {c.laddr.ip for c in connections if c.status == psutil.CONN_LISTEN}
    assert listening, "no Ray server found"
    assert all(is_loopback(address) for address in listening), listening


def join_from_another_process(address: str, auth_environment: dict) -> subprocess.CompletedProcess:
    """Runs a program that joins the Ray at ``address`` with a RayCluster of its own, in an
    environment with ``auth_environment`` (and no other token setting), runs a step on it and
    prints its value."""
    code = textwrap.dedent(
        f"""
        import dataflow as df
        with df.distribute.RayCluster({{"visitor": 1}}, address={address!r}) as cluster:
            with df.Session(cluster.target) as sess:
                print("joined", sess.run(df.constant(2.0) * 3.0), flush=True)
        """
    )
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
    }
    environment.update(auth_environment, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=180
    )


def test_a_local_ray_refuses_a_program_without_its_token(cluster, local_ray):
    address = cluster.address  # what the cluster says other processes join it by
    assert address == local_ray.get_runtime_context().gcs_address
    assert f"ray at {address}" in repr(cluster)
    refused = join_from_another_process(address, {"RAY_AUTH_TOKEN": "f" * 64})
    assert refused.returncode != 0 and "joined" not in refused.stdout
    assert "InvalidAuthToken" in refused.stderr, refused.stderr[-2000:]
    # The same program with the token (where Ray keeps it, ~/.ray/auth_token) joins.
    joined = join_from_another_process(address, {})
    assert joined.stdout.strip() == "joined 6.0", joined.stderr[-2000:]


def test_a_cluster_refuses_both_an_address_to_join_and_a_node_address():
    with pytest.raises(ValueError, match="not both"):
        df.distribute.RayCluster({"worker": 1}, address="auto", node_ip_address="10.0.0.5")


# -- a session's view of the cluster, and a server of its own --------------------------------------
def test_device_filters_keep_a_session_to_the_tasks_they_name(cluster):
    with df.Graph().as_default():
        with df.device(WORKER1):
            on_worker1 = df.constant(2.0, name="on_worker1")
        with df.device(PS):
            on_ps = df.constant(1.0) * 3.0
        config = partitioned_config(device_filters=["/job:ps", "/job:worker/task:0"])
        with df.Session(cluster.target, config=config) as sess:
            assert sess.run(on_ps) == 3.0
            # As TensorFlow 2.21's tf.compat.v1 (which refuses it when the Session extends its
            # graph): the op names a device no filter keeps.
            with pytest.raises(errors.InvalidArgumentError) as caught:
                sess.run(on_worker1)
            message = str(caught.value)
            assert message.startswith("Cannot assign a device for operation on_worker1")
            assert "/job:worker/task:1" in message and "test_ray_cluster.py" in message
            assert "/job:worker/replica:0/task:1" not in message.split("available devices")[1]


def test_create_local_server_serves_a_cluster_of_one_localhost_task(local_ray):
    server = df.train.Server.create_local_server()
    assert server.server_def["job_name"] == "localhost"  # as TensorFlow's
    assert server.server_def["task_index"] == 0
    assert server.server_def["cluster"].jobs == ["localhost"]
    with df.Graph().as_default():
        counter = df.Variable(2.0, name="counter")
        with df.Session(server.target, config=partitioned_config()) as sess:
            sess.run(counter.initializer)
            assert sess.run(counter.assign_add(1.0)) == 3.0
        with df.Session(server.target, config=partitioned_config()) as sess:
            assert sess.run(counter) == 3.0  # the variable lives on the server's task


def test_a_step_counts_its_messages_and_the_bytes_of_its_tensors(cluster):
    with df.Graph().as_default():
        with df.device(PS):
            weights = df.Variable(np.ones([4, 3], np.float32), name="weights")
        with df.device(WORKER0):
            x = df.placeholder(df.float32, [2, 4], name="x")
            y = df.matmul(x, weights)
        with df.device(PS):
            bump = weights.assign_add(np.ones([4, 3], np.float32))
        with df.Session(cluster.target, config=partitioned_config()) as sess:
            sess.run(weights.initializer)
            assert sess._master.last_step_messages.calls == 1  # one task, no write held
            sess.run(y, {x: np.ones([2, 4], np.float32)})
            # A run on each task; the ps sends the weights (48 bytes) to worker 0, which was
            # fed x (32 bytes) and returns y (24 bytes); each task tells the other it succeeded.
            assert sess._master.last_step_messages == (2, 2, 1 + 2, 48 + 32 + 24)
            sess.run([y, bump], {x: np.ones([2, 4], np.float32)})
            # The same messages: the ps commits its write once worker 0 told it, and answers
            # with the new value of the fetched bump (48 bytes more).
            assert sess._master.last_step_messages == (2, 2, 1 + 2, 48 + 32 + 24 + 48)

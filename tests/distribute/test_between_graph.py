"""TF1 between-graph replication on a Ray cluster: a ps and two workers, each worker building
its own graph with `replica_device_setter` and training the ps's variables through
`MonitoredTrainingSession(master=server.target)`, as a classic TF1 program does."""

import threading

import numpy as np
from placed_programs import partitioned_config

import dataflow as df

STEPS_PER_WORKER = 60


def blobs(seed: int, count: int = 64):
    """Two separable clusters of 2-d points, labelled 0 and 1."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, count)
    points = rng.normal(0.0, 0.5, (count, 2)) + np.where(labels[:, None] == 1, 1.5, -1.5)
    return points.astype(np.float32), labels.astype(np.int32)


def worker_program(cluster, index: int, results: dict, chief_ready, both_running) -> None:
    """One worker's program: its own graph and Session on its own task's server.  A worker
    that is not the chief starts once the chief has initialized the variables (else its
    session would wait 30 s between looks at them, as TF1's does)."""
    if index != 0:
        chief_ready.wait(120)
    server = df.train.Server(cluster.spec, job_name="worker", task_index=index)
    points, labels = blobs(seed=index)
    with df.Graph().as_default():
        setter = df.train.replica_device_setter(
            cluster=cluster.spec, worker_device=f"/job:worker/task:{index}"
        )
        with df.device(setter):
            step = df.train.get_or_create_global_step()
            x = df.placeholder(df.float32, [None, 2], name="x")
            y = df.placeholder(df.int32, [None], name="y")
            weights = df.get_variable("weights", [2, 2], initializer=df.zeros_initializer())
            bias = df.get_variable("bias", [2], initializer=df.zeros_initializer())
            logits = df.matmul(x, weights) + bias
            loss = df.reduce_mean(
                df.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
            )
            train = df.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=step)
            accuracy = df.reduce_mean(
                df.cast(df.equal(df.argmax(logits, 1, output_type=df.int32), y), df.float32)
            )
        placements = {"weights": weights.op.device, "step": step.op.device, "train": train.device}
        hooks = [df.train.StopAtStepHook(last_step=2 * STEPS_PER_WORKER)]
        with df.train.MonitoredTrainingSession(
            master=server.target,
            is_chief=index == 0,
            hooks=hooks,
            config=partitioned_config(),
        ) as sess:
            runs = 0
            while not sess.should_stop():
                sess.run(train, {x: points, y: labels})
                runs += 1
                if runs == 1:  # both train together: each waits for the other's first step
                    chief_ready.set()
                    both_running.wait(120)
        with df.Session(server.target, config=partitioned_config()) as sess:
            results[index] = {
                "runs": runs,
                "accuracy": sess.run(accuracy, {x: points, y: labels}),
                "step": sess.run(step),
                "placements": placements,
            }


def test_a_ps_and_two_workers_train_shared_variables_between_graphs(cluster):
    results: dict = {}
    failures: list = []
    chief_ready = threading.Event()
    both_running = threading.Barrier(2)

    def run(index):
        try:
            worker_program(cluster, index, results, chief_ready, both_running)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)
            chief_ready.set()
            both_running.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not failures, failures
    assert sorted(results) == [0, 1]
    for index, result in results.items():
        assert result["placements"]["weights"].startswith("/job:ps/task:0")
        assert result["placements"]["step"].startswith("/job:ps/task:0")
        assert result["placements"]["train"].startswith(f"/job:worker/task:{index}")
        assert result["accuracy"] >= 0.9, result
        assert result["step"] >= 2 * STEPS_PER_WORKER
    # Both workers advanced the one global step on the ps: together they ran its steps.
    assert results[0]["runs"] > 1 and results[1]["runs"] > 1, results
    assert results[0]["runs"] + results[1]["runs"] >= 2 * STEPS_PER_WORKER

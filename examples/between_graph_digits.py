"""TF1 between-graph replication, as TF1 users ran it: one process per task, with only the import
changed (``import dataflow as tf`` for ``import tensorflow.compat.v1 as tf``; the same file with
that import runs under TensorFlow 2's ``tf.compat.v1``, as ``benchmarks/bench_distributed.py``
does).

A parameter server and two workers, each started as its own process with the same
``--ps_hosts``/``--worker_hosts`` and its own ``--job_name``/``--task_index``::

    python -m dataflow cluster start          # the Ray head the tasks meet at (or RAY_ADDRESS)
    python examples/between_graph_digits.py --job_name=ps --task_index=0 &
    python examples/between_graph_digits.py --job_name=worker --task_index=0 &
    python examples/between_graph_digits.py --job_name=worker --task_index=1 &
    ...
    python -m dataflow cluster stop           # ends the head, and the ps's join with it

Each worker builds its own graph: ``replica_device_setter`` puts the variables on the ps and the
computation on the worker; ``MonitoredTrainingSession(master=server.target, is_chief=...)``
has the chief (worker 0) initialize the variables while the other waits for them (each
worker's ``device_filters`` keep its session to the ps and itself); both train
the shared variables asynchronously on their half of scikit-learn's 8x8 digits (a 64-32-10
MLP) until the global step reaches ``--train_steps``; with ``--sync_replicas`` a
``SyncReplicasOptimizer`` makes each step apply the average of both workers' gradients (as
under TensorFlow, the chief's queue runner then waits at the end for gradients no worker sends,
until ``MonitoredTrainingSession``'s stop grace period ends: ``--stop_grace_period_secs``,
120 s unless given).  Each worker prints the
accuracy on the held-out digits at the end::

    worker 0 done: global step 400, test accuracy 0.942, 349 steps here, median step 29.2 ms
"""

import argparse
import sys
import time

import numpy as np

import dataflow as tf  # under TensorFlow: import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
FLAGS = None


def digits(task_index: int, num_workers: int):
    """This worker's shard of the training digits, and the test digits (the same split in
    every process: scikit-learn's 1797 digits, 400 held out)."""
    from sklearn.datasets import load_digits

    data = load_digits()
    images = (data.images.reshape(-1, 64) / 16.0).astype(np.float32)
    labels = data.target.astype(np.int64)
    order = np.random.RandomState(0).permutation(len(labels))
    test, train = order[:400], order[400:]
    shard = train[task_index::num_workers]
    return (images[shard], labels[shard]), (images[test], labels[test])


def main(_):
    ps_hosts = FLAGS.ps_hosts.split(",")
    worker_hosts = FLAGS.worker_hosts.split(",")
    cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        print(f"ps {FLAGS.task_index} serving", flush=True)
        server.join()
        return

    (train_x, train_y), (test_x, test_y) = digits(FLAGS.task_index, len(worker_hosts))
    with tf.device(
        tf.train.replica_device_setter(
            worker_device=f"/job:worker/task:{FLAGS.task_index}", cluster=cluster
        )
    ):
        x = tf.placeholder(tf.float32, [None, 64], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        w1 = tf.Variable(tf.truncated_normal([64, 32], stddev=0.1, seed=1), name="w1")
        b1 = tf.Variable(tf.zeros([32]), name="b1")
        w2 = tf.Variable(tf.truncated_normal([32, 10], stddev=0.1, seed=2), name="w2")
        b2 = tf.Variable(tf.zeros([10]), name="b2")
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
        logits = tf.matmul(hidden, w2) + b2
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
        )
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.GradientDescentOptimizer(FLAGS.learning_rate)
        if FLAGS.sync_replicas:
            # Each step applies the average of one batch's gradients from every worker.
            opt = tf.train.SyncReplicasOptimizer(
                opt,
                replicas_to_aggregate=len(worker_hosts),
                total_num_replicas=len(worker_hosts),
                name="digits_sync_replicas",
            )
        train_op = opt.minimize(loss, global_step=global_step)
        correct = tf.equal(tf.argmax(logits, 1), y)
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

    rng = np.random.RandomState(FLAGS.task_index)
    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.train_steps)]
    if FLAGS.sync_replicas:
        hooks.append(opt.make_session_run_hook(FLAGS.task_index == 0))
    # This worker talks to the ps and to itself only: its session does not wait for the
    # other workers to start.
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{FLAGS.task_index}"])
    step_times = []
    with tf.train.MonitoredTrainingSession(
        master=server.target,
        is_chief=(FLAGS.task_index == 0),
        hooks=hooks,
        config=config,
        stop_grace_period_secs=FLAGS.stop_grace_period_secs,
    ) as sess:
        print(f"worker {FLAGS.task_index} session ready", flush=True)
        step = 0
        while not sess.should_stop():
            batch = rng.randint(0, len(train_y), FLAGS.batch_size)
            started = time.perf_counter()
            _, step = sess.run([train_op, global_step], {x: train_x[batch], y: train_y[batch]})
            step_times.append(time.perf_counter() - started)
    with tf.Session(server.target, config=config) as sess:
        final_step, test_accuracy = sess.run([global_step, accuracy], {x: test_x, y: test_y})
    median_ms = 1000 * float(np.median(step_times)) if step_times else float("nan")
    print(
        f"worker {FLAGS.task_index} done: global step {final_step}, test accuracy "
        f"{test_accuracy:.3f}, {len(step_times)} steps here, median step {median_ms:.1f} ms",
        flush=True,
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ps_hosts", default="localhost:2222")
    parser.add_argument("--worker_hosts", default="localhost:2223,localhost:2224")
    parser.add_argument("--job_name", choices=["ps", "worker"], required=True)
    parser.add_argument("--task_index", type=int, default=0)
    parser.add_argument("--train_steps", type=int, default=400)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--learning_rate", type=float, default=0.5)
    parser.add_argument(
        "--sync_replicas",
        action="store_true",
        help="aggregate the workers' gradients each step (SyncReplicasOptimizer)",
    )
    parser.add_argument(
        "--stop_grace_period_secs",
        type=float,
        default=120,
        help="how long the session waits at its end for its threads (queue runners) to stop",
    )
    FLAGS, unparsed = parser.parse_known_args()
    main([sys.argv[0]] + unparsed)

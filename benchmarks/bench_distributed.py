"""Distributed execution benchmarks: prints figures, one section each.

    python benchmarks/bench_distributed.py            # every section
    python benchmarks/bench_distributed.py --quick    # fewer repeats
    python benchmarks/bench_distributed.py --only in_process

Sections (each a function ``section_<name>(repeats)`` listed in `SECTIONS`):

- ``in_process``: what cutting a graph across in-process devices costs against the same graph
  on one device.  (1) Per Send/Recv pair: a chain of ``K`` scalar adds placed alternately on
  ``/cpu:0`` and ``/cpu:1`` (every edge crosses: ``K`` pairs); the figure is (partitioned - one
  device) / K.  (2) Per cross-device loop iteration: a ``while_loop`` of ``N`` iterations whose
  predicate is on ``/cpu:0`` and whose body is on ``/cpu:1`` (each iteration sends the predicate
  to the body's control loop and the loop variable both ways); the figure is (partitioned - one
  device) / N.

- ``ray_transfer``: a 1 MB and a 100 MB float32 tensor moved from one task actor to another
  through the cluster's rendezvous (the sender's ``send``, the receiver's ``recv`` of the same
  step and key), against Ray's own way of doing it between the same two actors (the sender
  ``ray.put``s the array and hands over the reference, the receiver ``ray.get``s it).  Both go
  through two actor calls and one copy into Ray's object store, and arrive zero-copy.  Target:
  the rendezvous within 1.5x of Ray's own.

- ``data_parallel``: the digits MLP (scikit-learn's 8x8 digits, 64-64-10, batches of 64)
  trained as TF1 between-graph replication on 1 ps + 2 workers of a local Ray cluster (each
  worker a thread of this process with its own graph, ``replica_device_setter`` and
  ``MonitoredTrainingSession`` on its ``train.Server``), against the same model trained in one
  process for the same number of steps: test accuracy of each, and median step times.  Where a
  cluster step's time goes, from runs of worker 0's graph: ``compute`` (the step in one
  process), ``pull + compute`` (the gradients on the worker, the parameters sent from the ps),
  ``push + apply`` (gradients fed to the ps's update, nothing computed on the worker), and the
  whole step; transfer is what the cluster adds to compute.

- ``processes``: the classic between-graph program (``examples/between_graph_digits.py``: a ps
  and two workers, each its own process with ``--job_name``/``--task_index``, 3000 steps of the
  digits MLP) on localhost, here (on a Ray head of its own) and under TensorFlow's own
  ``tf.train.Server`` (gRPC on 127.0.0.1; the same file with ``import tensorflow.compat.v1 as
  tf``, run by the Python ``--tensorflow-python`` names, or ``DATAFLOW_BENCH_TF_PYTHON``, or
  this Python, whichever imports TensorFlow first; skipped when none does), in turn each round:
  the median step time of the workers, steps per second across both workers (from the chief's
  readiness to the last worker's end, start-up of worker 1 included), the test accuracy, and
  the CPU time TensorFlow's ps process spends per step (ours runs in an actor process).
  Then the costs of one training step of the benchmark's 64-64-10 MLP, run by a process serving
  worker 0 beside a ps process and no other worker: its median time, its messages
  (``RayMaster.last_step_messages``: the master's calls and their replies, the messages the
  tasks send one another, the bytes of the tensors), and the CPU time the ps and worker 0
  spend on it; and from these a written scaling model to N machines (its assumptions printed
  with it).

- ``message_costs``: one message and its answer between the driver and a task actor, for
  values of 8 B, 16 KB and 96 KB: as a Ray actor call, through a Ray compiled graph (Ray's
  accelerated DAG: shared-memory channels set up once), and over a link
  (`dataflow.distribute.links`, what a step's messages take).

Medians over repeats, both ways timed in turn within each round; the machine may be shared, so
read ratios, not absolutes.  Ray runs locally with two CPUs and no dashboard.
"""

from __future__ import annotations

# First, before numpy is imported: importing harness pins BLAS threads.
from harness import describe_machine, paired_median_times
from programs import digits_mlp

# isort: split
import argparse
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any, NamedTuple, Optional

import numpy as np

import dataflow as df
from dataflow.distribute.ray_cluster import TaskServer
from dataflow.distribute.rendezvous import make_key


# -- In process: partitions on several CPUs of one process ------------------------------------
def _chain(length: int, split: bool):
    graph = df.Graph()
    with graph.as_default():
        x = df.placeholder(df.float32, [], name="x")
        value = x
        for k in range(length):
            with df.device(f"/cpu:{k % 2 if split else 0}"):
                value = value + 1.0
    return graph, x, value


def _loop(split: bool):
    graph = df.Graph()
    with graph.as_default():
        n = df.placeholder(df.int32, [], name="n")

        def cond(i, acc):
            with df.device("/cpu:0"):
                return i < n

        def body(i, acc):
            with df.device(f"/cpu:{1 if split else 0}"):
                return i + 1, acc * 0.5 + 1.0

        with df.device("/cpu:0"):
            out = df.while_loop(cond, body, [df.constant(0), df.constant(0.0)])[1]
    return graph, n, out


def _session_runner(graph, fetch, feed):
    # No graph passes: the chain of adds would be fused into one op on one device.
    config = df.ConfigProto(
        device_count={"CPU": 2},
        graph_options=df.GraphOptions(
            rewrite_options=df.RewriterConfig(disable_meta_optimizer=True)
        ),
    )
    sess = df.Session(graph=graph, config=config)
    sess.run(fetch, feed)
    return sess, (lambda: sess.run(fetch, feed))


def section_in_process(repeats: int) -> None:
    length = 64
    runners, sessions = [], []
    for split in (False, True):
        graph, x, out = _chain(length, split)
        sess, run = _session_runner(graph, out, {x: np.float32(0)})
        sessions.append(sess)
        runners.append(run)
    one, parted = paired_median_times(*runners, repeats=repeats * 4)
    print(
        f"In process, chain of {length} adds: one device {one * 1e3:.2f} ms, split on 2 devices "
        f"{parted * 1e3:.2f} ms ({length} Send/Recv pairs): "
        f"{(parted - one) / length * 1e6:.1f} us per Send/Recv pair"
    )
    iterations = 200
    runners = []
    for split in (False, True):
        graph, n, out = _loop(split)
        sess, run = _session_runner(graph, out, {n: iterations})
        sessions.append(sess)
        runners.append(run)
    one, parted = paired_median_times(*runners, repeats=max(3, repeats))
    print(
        f"In process, while_loop of {iterations} iterations: one device {one * 1e3:.2f} ms, "
        f"predicate and body on 2 devices {parted * 1e3:.2f} ms: "
        f"{(parted - one) / iterations * 1e6:.1f} us per cross-device iteration "
        f"({parted / one:.1f}x)"
    )
    for sess in sessions:
        sess.close()


# -- Ray transfer between two tasks ----------------------------------------------------------------
class _TransferTask(TaskServer):
    """A task that holds one array to send, and reports what it received by its size only, so
    that no array travels back to the driver."""

    def hold(self, nbytes: int) -> None:
        self._array = np.random.default_rng(0).random(nbytes // 4, dtype=np.float32)

    def send_held(self, step_id: str, key: str) -> None:
        self.rendezvous(step_id).send(key, self._array, False)

    def recv_size(self, step_id: str, key: str) -> int:
        value, _ = self.recv(step_id, key, 60_000)
        return value.nbytes

    def put_held(self) -> list:
        import ray

        return [ray.put(self._array)]  # in a list, so that Ray hands over the reference

    def get_size(self, references: list) -> int:
        import ray

        return ray.get(references[0]).nbytes


def section_ray_transfer(repeats: int) -> None:
    import ray

    from dataflow.distribute.ray_cluster import start_local_ray

    started = not ray.is_initialized()
    if started:
        start_local_ray(num_cpus=2)  # as a RayCluster starts it: loopback, token required
    names = ["/job:worker/task:0", "/job:worker/task:1"]
    actor_class = ray.remote(_TransferTask).options(num_cpus=0, max_concurrency=32)
    sender, receiver = [actor_class.remote("worker", i) for i in range(2)]
    ray.get([a.connect.remote(dict(zip(names, (sender, receiver)))) for a in (sender, receiver)])
    key = make_key(f"{names[0]}/device:CPU:0", 1, f"{names[1]}/device:CPU:0", "x:0", "", 0)
    steps = itertools.count()

    def through_rendezvous():
        step = f"bench:{next(steps)}"
        sent = sender.send_held.remote(step, key)
        size = receiver.recv_size.remote(step, key)
        ray.get([sent, size])

    def through_ray_put_get():
        ray.get(receiver.get_size.remote(sender.put_held.remote()))

    print("Ray transfer between two task actors (median seconds per tensor)")
    print(f"  {'size':>8}  {'rendezvous':>11}  {'ray.put/get':>11}  {'ratio':>6}  (target <= 1.5)")
    for megabytes, rounds in ((1, repeats * 4), (100, repeats * 2)):
        ray.get(sender.hold.remote(megabytes << 20))
        ours, theirs = paired_median_times(through_rendezvous, through_ray_put_get, repeats=rounds)
        print(f"  {megabytes:>6}MB  {ours:>11.5f}  {theirs:>11.5f}  {ours / theirs:>6.2f}")
    for actor in (sender, receiver):
        ray.kill(actor)
    if started:
        ray.shutdown()


# -- What one message costs: a Ray actor call, a Ray compiled graph, a link -----------------------
class _EchoTask:
    """An actor that answers with what it was sent, as a Ray call and over a link."""

    def echo(self, value):
        return value

    def link_address(self) -> tuple:
        import ray

        from dataflow.distribute.links import LinkServer

        if not hasattr(self, "_links"):
            host = ray.util.get_node_ip_address()
            self._links = LinkServer(host, calls={"echo": self.echo}, posts={}, threads=2)
        return (*self._links.address, self._links.secret)


def section_message_costs(repeats: int) -> None:
    import ray
    from ray.dag import InputNode

    from dataflow.distribute.links import link_to
    from dataflow.distribute.ray_cluster import start_local_ray

    started = not ray.is_initialized()
    if started:
        start_local_ray(num_cpus=2)
    actor_class = ray.remote(_EchoTask).options(num_cpus=0)
    called, compiled_on = actor_class.remote(), actor_class.remote()
    with InputNode() as value:
        graph = compiled_on.echo.bind(value)
    compiled = graph.experimental_compile()
    link = link_to(called)
    print(
        "One message and its answer between this process and a task actor (median us; "
        "the same value each way)"
    )
    print(f"  {'value':>10}  {'Ray call':>9}  {'compiled graph':>14}  {'link':>7}")
    for size in (8, 16 << 10, 96 << 10):
        array = np.ones(size // 4, np.float32)
        ray_call, compiled_graph, over_link = paired_median_times(
            lambda array=array: ray.get(called.echo.remote(array)),
            lambda array=array: ray.get(compiled.execute(array)),
            lambda array=array: link.call("echo", array).result(),
            repeats=repeats * 30,
        )
        print(
            f"  {size:>8} B  {ray_call * 1e6:>9.0f}  {compiled_graph * 1e6:>14.0f}  "
            f"{over_link * 1e6:>7.0f}"
        )
    compiled.teardown()
    for actor in (called, compiled_on):
        ray.kill(actor)
    if started:
        ray.shutdown()


# -- Data-parallel training: 1 ps + 2 workers against one process -----------------------------
def _digits():
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(0).permutation(len(labels))
    images, labels = images[order], labels[order]
    return (images[:1400], labels[:1400]), (images[1400:], labels[1400:])


def _batches(images, labels, worker: int, size: int = 64):
    rng = np.random.default_rng(worker)
    while True:
        chosen = rng.integers(0, len(labels), size)
        yield images[chosen], labels[chosen]


def section_data_parallel(repeats: int) -> None:
    import threading
    import time

    (train_x, train_y), (test_x, test_y) = _digits()
    steps = 100 * max(1, repeats // 3)

    with df.Graph().as_default():
        x, y, train, _, accuracy, grads = digits_mlp(df)
        with df.Session() as sess:
            sess.run(df.global_variables_initializer())
            batches = _batches(train_x, train_y, 0)
            times = []
            for _ in range(2 * steps):
                bx, by = next(batches)
                start = time.perf_counter()
                sess.run(train, {x: bx, y: by})
                times.append(time.perf_counter() - start)
            local_step = float(np.median(times))
            local_accuracy = sess.run(accuracy, {x: test_x, y: test_y})

    cluster = df.distribute.RayCluster({"ps": 1, "worker": 2})
    results: dict = {}
    chief_ready = threading.Event()

    def worker(index: int) -> None:
        if index:
            chief_ready.wait(120)
        server = df.train.Server(cluster.spec, job_name="worker", task_index=index)
        with df.Graph().as_default():
            setter = df.train.replica_device_setter(
                cluster=cluster.spec, worker_device=f"/job:worker/task:{index}"
            )
            x, y, train, _, accuracy, grads = digits_mlp(df, setter)
            hooks = [df.train.StopAtStepHook(last_step=2 * steps)]
            batches = _batches(train_x, train_y, index)
            times = []
            with df.train.MonitoredTrainingSession(
                master=server.target, is_chief=index == 0, hooks=hooks, log_step_count_steps=None
            ) as sess:
                while not sess.should_stop():
                    bx, by = next(batches)
                    start = time.perf_counter()
                    sess.run(train, {x: bx, y: by})
                    times.append(time.perf_counter() - start)
                    chief_ready.set()
            result = results[index] = {"steps": len(times), "step": float(np.median(times))}
            if index == 0:
                with df.Session(server.target) as sess:
                    result["accuracy"] = sess.run(accuracy, {x: test_x, y: test_y})
                    bx, by = next(batches)
                    feed = {x: bx, y: by}
                    gradient_values = sess.run(grads, feed)
                    apply_feed = dict(zip(grads, gradient_values))
                    result["pull_compute"], result["push_apply"], result["whole"] = (
                        paired_median_times(
                            lambda: sess.run(grads, feed),
                            lambda: sess.run(train, apply_feed),
                            lambda: sess.run(train, feed),
                            repeats=repeats * 5,
                        )
                    )

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - started
    cluster.shutdown()
    chief = results[0]
    print(f"Data-parallel digits MLP, {2 * steps} global steps of batch 64")
    print(f"  one process   test accuracy {local_accuracy:.3f}  median step {local_step:.5f} s")
    print(
        f"  1 ps + 2 wkrs test accuracy {chief['accuracy']:.3f}  median step "
        f"{chief['step']:.5f} s (worker 0), {results[1]['step']:.5f} s (worker 1); steps "
        f"{chief['steps']} + {results[1]['steps']}; wall {wall:.2f} s"
    )
    print(f"  cluster step / one-process step: {chief['step'] / local_step:.1f}x")
    print("  where a cluster step's time goes (worker 0's graph, median s):")
    print(f"    compute (one process)   {local_step:.5f}")
    print(f"    pull + compute          {chief['pull_compute']:.5f}")
    print(f"    push + apply            {chief['push_apply']:.5f}")
    print(f"    whole step              {chief['whole']:.5f}")
    print(f"    transfer and rendezvous ~{chief['whole'] - local_step:.5f}")


# -- One process per task: the classic program here and under TensorFlow -------------------------
_EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
# ``--tensorflow-python``: a Python with TensorFlow, for the processes section (main sets it).
_TF_PYTHON: Optional[str] = None


def _tensorflow_python() -> Optional[str]:
    """A Python that imports TensorFlow: ``--tensorflow-python``, else
    ``DATAFLOW_BENCH_TF_PYTHON``, else this one, else None."""
    for candidate in (_TF_PYTHON, os.environ.get("DATAFLOW_BENCH_TF_PYTHON"), sys.executable):
        if candidate and os.path.exists(candidate):
            probe = subprocess.run(
                [candidate, "-c", "import tensorflow"], capture_output=True, timeout=300
            )
            if probe.returncode == 0:
                return candidate
    return None


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _run_program(python: str, program: str, env: dict, train_steps: int) -> dict:
    """Runs ``program`` as a ps and two workers (worker 1 started once the chief's session is
    ready); the workers' "done" lines parsed, and the wall time from the chief's readiness to
    the last worker's end.  Every process is killed at the end, whatever happens."""
    ports = _free_ports(3)
    flags = [
        f"--ps_hosts=localhost:{ports[0]}",
        f"--worker_hosts=localhost:{ports[1]},localhost:{ports[2]}",
        f"--train_steps={train_steps}",
    ]
    processes = []

    def start(job: str, index: int):
        process = subprocess.Popen(
            [python, program, f"--job_name={job}", f"--task_index={index}", *flags],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        processes.append(process)
        return process

    def line_of(process, prefix: str) -> str:
        for line in process.stdout:
            if line.startswith(prefix):
                return line.strip()
        raise RuntimeError(f"{program}: a process ended before printing {prefix!r}")

    try:
        ps = start("ps", 0)
        chief = start("worker", 0)
        line_of(chief, "worker 0 session ready")
        began = time.perf_counter()
        ps_cpu_began = _cpu_seconds(ps.pid)
        other = start("worker", 1)
        done = [line_of(chief, "worker 0 done:"), line_of(other, "worker 1 done:")]
        wall = time.perf_counter() - began
        # The ps process's own CPU time: all of TensorFlow's ps; nothing of ours, whose ps is
        # an actor process of its own (`_costs_of_a_step` measures that one).
        ps_cpu = _cpu_seconds(ps.pid) - ps_cpu_began
    finally:
        for process in processes:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait()
    workers = []
    for line in done:
        # "worker 0 done: global step 401, test accuracy 0.942, 349 steps here, median ..."
        fields = line.split(": ", 1)[1].split(", ")
        workers.append(
            {
                "step": int(fields[0].split()[-1]),
                "accuracy": float(fields[1].split()[-1]),
                "runs": int(fields[2].split()[0]),
                "median_ms": float(fields[3].split()[-2]),
            }
        )
    return {"workers": workers, "wall": wall, "ps_cpu": ps_cpu}


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user and system, all threads) process ``pid`` has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _StepCosts(NamedTuple):
    """What one training step of worker 0 beside the ps costs, with no other worker."""

    messages: Any  # the master's StepMessages of a step
    step_seconds: float  # median step, as worker 0's process sees it
    ps_cpu_seconds: float  # the ps's CPU time per step
    worker_cpu_seconds: float  # worker 0's task's and its client's CPU time per step


def _costs_of_a_step(address: str, package_root: str, steps: int = 300) -> _StepCosts:
    """The costs of a training step of the digits MLP (the benchmark's, 64-64-10, batches of
    64) as worker 0's process of a ps and a worker runs it: this process serves worker 0
    (joining the head at ``address``), a child process the ps."""
    import ray

    from dataflow.distribute.ray_task import ACTOR_NAMESPACE, actor_name

    ports = _free_ports(2)
    spec = {"ps": [f"localhost:{ports[0]}"], "worker": [f"localhost:{ports[1]}"]}
    serve = (
        "import json, sys, dataflow as df\n"
        "server = df.train.Server(json.loads(sys.argv[1]), job_name='ps', task_index=0)\n"
        "print('serving', flush=True)\n"
        "server.join()\n"
    )
    env = dict(
        os.environ,
        RAY_ADDRESS=address,
        PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]),
    )
    ps = subprocess.Popen(
        [sys.executable, "-c", serve, json.dumps(spec)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        ps.stdout.readline()
        os.environ["RAY_ADDRESS"] = address
        server = df.train.Server(spec, job_name="worker", task_index=0)
        # The tasks live in actor processes of their own (`dataflow.distribute.task_processes`).
        pids = [
            ray.get(ray.get_actor(actor_name(a), namespace=ACTOR_NAMESPACE).ping.remote())[1]
            for a in (spec["ps"][0], spec["worker"][0])
        ]
        (train_x, train_y), _ = _digits()
        with df.Graph().as_default():
            setter = df.train.replica_device_setter(
                cluster=df.train.ClusterSpec(spec), worker_device="/job:worker/task:0"
            )
            x, y, train, _, _, _ = digits_mlp(df, setter)
            with df.Session(server.target) as sess:
                sess.run(df.global_variables_initializer())
                batches = _batches(train_x, train_y, 0)
                for _ in range(20):
                    bx, by = next(batches)
                    sess.run(train, {x: bx, y: by})
                times = []
                cpu_before = [_cpu_seconds(pid) for pid in pids] + [time.process_time()]
                for _ in range(steps):
                    bx, by = next(batches)
                    began = time.perf_counter()
                    sess.run(train, {x: bx, y: by})
                    times.append(time.perf_counter() - began)
                cpu_after = [_cpu_seconds(pid) for pid in pids] + [time.process_time()]
                used = [(b - a) / steps for a, b in zip(cpu_before, cpu_after)]
                return _StepCosts(
                    sess._master.last_step_messages,
                    float(np.median(times)),
                    used[0],
                    used[1] + used[2],
                )
    finally:
        os.kill(ps.pid, signal.SIGKILL)
        ps.wait()


# The network the scaling model assumes between machines: 10 Gb/s, and this much more time per
# message than on this machine's loopback.
_MODEL_BYTES_PER_SECOND = 10e9 / 8
_MODEL_EXTRA_SECONDS_PER_MESSAGE = 50e-6


def _print_scaling_model(costs: _StepCosts) -> None:
    """A model of the between-graph program on N machines, from the measured costs of a step:
    printed with its assumptions."""
    messages = costs.messages
    # The messages on a step's path: the master's call to the ps and its answer, the values
    # each way (one hop each way), the words between the two tasks.
    hops = 4
    step = costs.step_seconds + hops * _MODEL_EXTRA_SECONDS_PER_MESSAGE
    step += messages.bytes / _MODEL_BYTES_PER_SECOND
    ps_limit = 1.0 / costs.ps_cpu_seconds
    network_limit = _MODEL_BYTES_PER_SECOND / messages.bytes
    print(
        "  scaling model: N workers, each on a machine of its own, and one ps, updating "
        "asynchronously\n  as the program does.  A worker steps every "
        f"{step * 1e3:.2f} ms: this machine's {costs.step_seconds * 1e3:.2f} ms,\n  plus "
        f"{hops} network hops of {_MODEL_EXTRA_SECONDS_PER_MESSAGE * 1e6:.0f} us and "
        f"{messages.bytes} bytes at 10 Gb/s, until the ps is busy.\n  The ps spends "
        f"{costs.ps_cpu_seconds * 1e3:.2f} ms of CPU per step on one core (Python's lock), so "
        f"it serves at most {ps_limit:.0f} steps/s;\n  its network at most "
        f"{network_limit:.0f}."
    )
    print(f"  {'N':>5}  {'steps/s':>8}  {'ms per worker step':>18}  {'ps busy':>7}")
    for n in (1, 2, 4, 8, 16, 32, 64):
        rate = min(n / step, ps_limit, network_limit)
        print(f"  {n:>5}  {rate:>8.0f}  {n / rate * 1e3:>18.2f}  {rate / ps_limit:>7.0%}")
    print(
        f"  Beyond {ps_limit * step:.1f} workers the ps is the bottleneck; more ps tasks "
        "(replica_device_setter\n  shards the variables over them) raise its limit in "
        "proportion."
    )


def section_processes(repeats: int) -> None:
    """The between-graph digits program (``examples/between_graph_digits.py``) as three
    processes (a ps and two workers) on localhost: here, on a Ray head of its own, and under
    TensorFlow's own ``tf.train.Server`` (gRPC on 127.0.0.1) with only the import changed,
    one after the other in each round."""
    import tempfile

    from dataflow.distribute import head

    # Enough steps that worker 1, started once the chief trains, trains beside it for most of
    # the run under either runtime (TensorFlow takes seconds to import).
    train_steps = 3000
    program = os.path.join(_EXAMPLE, "between_graph_digits.py")
    tf_python = _tensorflow_python()
    tf_program = None
    if tf_python is not None:
        with open(program) as f:
            text = f.read()
        tf_program = os.path.join(tempfile.mkdtemp(prefix="bench-tf-"), "between_graph_tf.py")
        with open(tf_program, "w") as f:
            f.write(
                text.replace("import dataflow as tf  #", "import tensorflow.compat.v1 as tf  #", 1)
            )
    state_dir = tempfile.mkdtemp(prefix="dfc-bench-")
    record, _ = head.start_head(state_dir)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env_here = dict(
        os.environ,
        RAY_ADDRESS=record["address"],
        PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]),
    )
    env_tf = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env_tf["TF_CPP_MIN_LOG_LEVEL"] = "2"
    rounds = max(1, repeats // 3)
    results: dict = {"dataflow": [], "tensorflow": []}
    try:
        for _ in range(rounds):
            results["dataflow"].append(_run_program(sys.executable, program, env_here, train_steps))
            if tf_program is not None:
                results["tensorflow"].append(
                    _run_program(tf_python, tf_program, env_tf, train_steps)
                )
        costs = _costs_of_a_step(record["address"], package_root)
    finally:
        head.stop_head(state_dir)
    print(
        f"\n== processes: {train_steps} steps of the digits MLP, a ps + 2 workers, {rounds} rounds"
    )
    chief_steps = {}
    for name, runs in results.items():
        if not runs:
            print(f"{name:>10}: not run (no Python here imports tensorflow)")
            continue
        # The chief runs most steps (worker 1 starts once the chief trains): its median step
        # is the step's cost; worker 1's few steps include its first ones.
        chief_ms = float(np.median([r["workers"][0]["median_ms"] for r in runs]))
        other_ms = float(np.median([r["workers"][1]["median_ms"] for r in runs]))
        other_runs = int(np.median([r["workers"][1]["runs"] for r in runs]))
        per_second = float(
            np.median([sum(w["runs"] for w in r["workers"]) / r["wall"] for r in runs])
        )
        accuracy = [w["accuracy"] for r in runs for w in r["workers"]]
        chief_steps[name] = chief_ms
        print(
            f"{name:>10}: median step {chief_ms:6.1f} ms on worker 0, {other_ms:6.1f} ms on "
            f"worker 1 ({other_runs} of its steps); {per_second:6.1f} steps/s across workers "
            f"(worker 1's start-up included); test accuracy {min(accuracy):.3f}-"
            f"{max(accuracy):.3f}"
        )
    if len(chief_steps) == 2:
        ratio = chief_steps["dataflow"] / chief_steps["tensorflow"]
        print(f"     ratio: worker 0's step {ratio:.1f}x TensorFlow's (target: at most 1.5x)")
        tf_ps = float(
            np.median(
                [r["ps_cpu"] / sum(w["runs"] for w in r["workers"]) for r in results["tensorflow"]]
            )
        )
        print(
            f"  TensorFlow's ps process spent {tf_ps * 1e3:.2f} ms of CPU per step (both workers' "
            "steps; the scaling model below is dataflow's)"
        )
    messages = costs.messages
    print(
        f"  a training step of worker 0 alone beside the ps (the 64-64-10 MLP, batch 64): "
        f"{costs.step_seconds * 1e3:.2f} ms;\n  {messages.calls} calls from the master and "
        f"{messages.replies} replies, {messages.between_tasks} messages between tasks, "
        f"{messages.bytes} bytes of tensors; CPU per step: the ps "
        f"{costs.ps_cpu_seconds * 1e3:.2f} ms, worker 0 {costs.worker_cpu_seconds * 1e3:.2f} ms"
    )
    _print_scaling_model(costs)


SECTIONS = {
    "in_process": section_in_process,
    "ray_transfer": section_ray_transfer,
    "data_parallel": section_data_parallel,
    "processes": section_processes,
    "message_costs": section_message_costs,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", choices=sorted(SECTIONS), help="run one section")
    parser.add_argument(
        "--tensorflow-python",
        metavar="PYTHON",
        help="a Python with TensorFlow, for the processes section's TensorFlow side",
    )
    args = parser.parse_args()
    global _TF_PYTHON
    _TF_PYTHON = args.tensorflow_python
    repeats = 3 if args.quick else 9
    print(describe_machine(repeats))
    for name, section in SECTIONS.items():
        if args.only in (None, name):
            section(repeats)


if __name__ == "__main__":
    main()

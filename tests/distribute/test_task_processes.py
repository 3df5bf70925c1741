"""One process per task, as TF1 programs run: each process makes its own ``train.Server`` from a
ClusterSpec of host:port addresses, and the processes meet on a Ray head found through
``RAY_ADDRESS`` (or the head ``python -m dataflow cluster start`` recorded).

Every test here starts its own head (`head`) and its processes as children of the test, each in
a session of its own; whatever happens, the processes are killed by their ids and the head is
stopped (by ``cluster stop``, which ends its ``ray start`` process and the node's every process)
when the test ends.  The test process itself never joins the head.
"""

import json
import os
import pathlib
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest

import dataflow as df

pytest.importorskip("ray")

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "between_graph_digits.py"
# Start-up of a process (importing dataflow and joining the head) on a loaded two-core machine
# takes seconds; a line that should come takes far less than this.
LINE_TIMEOUT = 60.0


def environment(address: str, state_dir: str) -> dict:
    env = dict(os.environ)
    for key in ("RAY_ADDRESS", "RAY_AUTH_MODE"):
        env.pop(key, None)
    env.update(
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
        DATAFLOW_CLUSTER_DIR=state_dir,
        PYTHONUNBUFFERED="1",
    )
    if address:
        env["RAY_ADDRESS"] = address
    return env


def cluster_command(action: str, state_dir: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dataflow", "cluster", action],
        env=environment("", state_dir),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


class Process:
    """A child process whose output lines are read as they come (`expect`)."""

    def __init__(self, args: list, env: dict, name: str):
        self.name = name
        self.popen = subprocess.Popen(
            [sys.executable, *args],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.popen.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def expect(self, prefix: str, timeout: float = LINE_TIMEOUT) -> str:
        """The first line from now on that starts with ``prefix``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    f"{self.name}: no line {prefix!r} within {timeout} s; output:\n"
                    + "\n".join(self.lines[-40:])
                ) from None
            if line is None:
                self._queue.put(None)
                raise AssertionError(
                    f"{self.name} ended (status {self.popen.wait()}) before printing {prefix!r}; "
                    "output:\n" + "\n".join(self.lines[-40:])
                )
            self.lines.append(line)
            if line.startswith(prefix):
                return line

    def rest(self, timeout: float = LINE_TIMEOUT) -> str:
        """Everything the process prints until it ends."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            if line is None:
                self._queue.put(None)
                return "\n".join(self.lines)
            self.lines.append(line)

    def tell(self, line: str) -> None:
        """Writes ``line`` to the process's stdin."""
        self.popen.stdin.write(line + "\n")
        self.popen.stdin.flush()

    def kill(self):
        if self.popen.poll() is None:
            os.kill(self.popen.pid, signal.SIGKILL)
        self.popen.wait(30)


@pytest.fixture(scope="module")
def shared_head():
    """A Ray head for the tests of this module, through the command line: ``(address,
    state_dir)``; stopped at the end.  (A head takes seconds to start; each test's tasks have
    addresses of their own, so they never meet another test's.)"""
    state_dir = tempfile.mkdtemp(prefix="dfc-")
    started = cluster_command("start", state_dir)
    assert started.returncode == 0, started.stderr
    address = started.stdout.split("export RAY_ADDRESS=")[1].split()[0]
    try:
        yield address, state_dir
    finally:
        stopped = cluster_command("stop", state_dir)
        assert stopped.returncode == 0, stopped.stderr
        shutil.rmtree(state_dir, ignore_errors=True)


@pytest.fixture
def head(shared_head):
    """The module's Ray head for one test: ``(address, state_dir, start)``, where
    ``start(args, name)`` starts a child process joined to it; every child is killed at the
    end of the test."""
    address, state_dir = shared_head
    children: list[Process] = []

    def start(args: list, name: str, via_address: bool = True) -> Process:
        process = Process(args, environment(address if via_address else "", state_dir), name)
        children.append(process)
        return process

    try:
        yield address, state_dir, start
    finally:
        for child in children:
            child.kill()


def example(job: str, index: int, *flags: str) -> list:
    return [str(EXAMPLE), f"--job_name={job}", f"--task_index={index}", *flags]


# -- the classic program ---------------------------------------------------------------------------
def run_the_program(start, *flags: str) -> tuple:
    """Starts the example as a ps and two workers with ``flags`` and waits until both workers
    have ended: the ps's `Process`, and per worker its global step, test accuracy and runs."""
    ps = start(example("ps", 0, *flags), "ps")
    ps.expect("ps 0 serving")
    chief = start(example("worker", 0, *flags), "worker 0")
    chief.expect("worker 0 session ready")
    # Started once the chief has initialized the variables: a worker that finds them
    # uninitialized waits 30 s (recovery_wait_secs) before it looks again, as in TF1.
    other = start(example("worker", 1, *flags), "worker 1")
    other.expect("worker 1 session ready")
    results = {}
    for index, worker in enumerate([chief, other]):
        line = worker.expect(f"worker {index} done:")
        # "worker 0 done: global step 401, test accuracy 0.942, 349 steps here, ..."
        fields = line.split(": ", 1)[1].split(", ")
        results[index] = {
            "step": int(fields[0].split()[-1]),
            "accuracy": float(fields[1].split()[-1]),
            "runs": int(fields[2].split()[0]),
        }
        assert worker.popen.wait(LINE_TIMEOUT) == 0
    return ps, results


def test_the_classic_between_graph_program_trains_as_three_processes(head):
    pytest.importorskip("sklearn", reason="the program trains on scikit-learn's digits")
    _, _, start = head
    ps, results = run_the_program(start)
    # Both trained the ps's variables, together 400 steps of the shared global step (a run
    # or two more: each worker stops when it sees the step reach 400).
    assert all(r["runs"] > 0 for r in results.values()), results
    assert 400 <= results[0]["runs"] + results[1]["runs"] <= 404, results
    assert all(400 <= r["step"] <= 404 for r in results.values()), results
    # The same model as one process trains to 0.93-0.95 on the 400 held-out digits, and most
    # runs of this program do (TF 2.21's tf.compat.v1 gets 0.945-0.965).  The two workers'
    # updates interleave differently in each run, and one run in several ended at 0.70, so
    # what is required here is that the shared model learned: chance is 0.1.
    assert all(r["accuracy"] >= 0.6 for r in results.values()), results
    # The ps serves until the head stops.
    assert ps.popen.poll() is None


def test_sync_replicas_applies_one_average_per_global_step_across_processes(head):
    pytest.importorskip("sklearn", reason="the program trains on scikit-learn's digits")
    _, _, start = head
    # The chief's queue runner waits at the end for gradients nobody sends, until the stop
    # grace period ends (as under TensorFlow); then its process ends.
    _, results = run_the_program(
        start, "--sync_replicas", "--stop_grace_period_secs=2", "--train_steps=200"
    )
    # Each global step applied the average of two gradients (the accumulators and the token
    # queue live on the ps, shared by both workers): at least two runs per step, from
    # whichever workers ran them.
    assert all(200 <= r["step"] <= 201 for r in results.values()), results
    assert results[0]["runs"] + results[1]["runs"] >= 2 * 200, results
    assert all(r["runs"] > 0 for r in results.values()), results
    assert all(r["accuracy"] >= 0.6 for r in results.values()), results


# -- the command line ------------------------------------------------------------------------------
def test_cluster_status_names_the_head_and_the_tasks_served(head):
    address, state_dir, start = head
    server = start(
        ["-c", SERVE, json.dumps({"ps": ["localhost:7001"]}), "ps", "0"], "ps", via_address=False
    )
    server.expect("serving")
    status = cluster_command("status", state_dir)
    assert status.returncode == 0, status.stderr
    assert f"address {address} (from {state_dir}/head.json)" in status.stdout
    assert "task at localhost:7001" in status.stdout.splitlines()
    # A second start finds the head running and starts none.
    again = cluster_command("start", state_dir)
    assert again.returncode == 0 and f"already running at {address}" in again.stdout


def test_cluster_status_without_a_head_says_how_to_start_one(tmp_path):
    status = cluster_command("status", str(tmp_path))
    assert status.returncode == 1
    assert "python -m dataflow cluster start" in status.stdout


# A task process: serves its task until the head stops.
SERVE = textwrap.dedent(
    """
    import json, sys
    import dataflow as df
    server = df.train.Server(json.loads(sys.argv[1]), job_name=sys.argv[2],
                             task_index=int(sys.argv[3]))
    print("serving", server.target, flush=True)
    server.join()
    print("joined", flush=True)
    """
)


def test_a_second_process_for_a_served_address_is_refused(head):
    _, _, start = head
    spec = json.dumps({"ps": ["localhost:7001"]})
    first = start(["-c", SERVE, spec, "ps", "0"], "first")
    first.expect("serving grpc://localhost:7001")
    second = start(["-c", SERVE, spec, "ps", "0"], "second")
    output = second.rest()
    assert second.popen.wait(LINE_TIMEOUT) != 0
    assert "another process serves /job:ps/task:0 at localhost:7001" in output


def test_a_server_of_a_ray_cluster_address_no_cluster_runs_is_refused():
    with pytest.raises(ValueError, match="No running RayCluster"):
        df.train.Server({"worker": ["ray://dataflow/gone/job:worker/task:0"]}, job_name="worker")
    with pytest.raises(ValueError, match="no job 'chief'"):
        df.train.Server({"worker": ["localhost:2222"]}, job_name="chief", task_index=0)


# -- faults across processes -----------------------------------------------------------------------
# Worker 0's program: a step that bumps a counter on one task while it waits, on the victim's
# task, for a queue nobody fills; it reports how the step ended, as a JSON line with the time.
# Told "again" on its stdin (once the victim's process was started anew), it makes a new
# Session, which finds the victim's new actor by its address, and runs the step to the end.
CLIENT = textwrap.dedent(
    """
    import json, sys, time
    import dataflow as tf

    spec, victim, survivor = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
    server = tf.train.Server(spec, job_name="worker", task_index=0)
    with tf.device(survivor):
        counter = tf.Variable(0.0, name="counter")
        bump = counter.assign_add(1.0)
    with tf.device(victim):
        queue = tf.FIFOQueue(1, tf.float32, shapes=[[]], name="never_filled")
        waits = queue.dequeue(name="waits_on_the_victim")
        fill = queue.enqueue(2.0)

    def report(**fields):
        print(json.dumps(dict(fields, time=time.time())), flush=True)

    with tf.Session(server.target) as sess:
        sess.run(counter.initializer)
        report(event="step started")
        try:
            sess.run([bump, waits])
            report(event="step ended")
        except tf.errors.OpError as e:
            report(event="failed", error=type(e).__name__, message=e.message)
        report(event="counter", value=float(sess.run(counter)))
    sys.stdin.readline()
    with tf.Session(server.target) as sess:
        sess.run(counter.initializer)
        sess.run(fill)
        report(event="again", values=[float(v) for v in sess.run([bump, waits])])
    """
)

PS_TASK, WORKER1_TASK, WORKER0_TASK = "/job:ps/task:0", "/job:worker/task:1", "/job:worker/task:0"


@pytest.mark.parametrize(
    "victim, survivor", [(PS_TASK, WORKER0_TASK), (WORKER1_TASK, PS_TASK)], ids=["ps", "worker"]
)
def test_killing_a_task_process_mid_step_fails_the_step_at_once_and_a_new_one_rejoins(
    head, victim, survivor
):
    _, _, start = head
    spec = {"ps": ["localhost:7100"], "worker": ["localhost:7101", "localhost:7102"]}
    serve = {
        PS_TASK: ["-c", SERVE, json.dumps(spec), "ps", "0"],
        WORKER1_TASK: ["-c", SERVE, json.dumps(spec), "worker", "1"],
    }
    servers = {task: start(args, task) for task, args in serve.items()}
    for server in servers.values():
        server.expect("serving")
    client = start(["-c", CLIENT, json.dumps(spec), victim, survivor], "worker 0")
    client.expect('{"event": "step started"')
    time.sleep(1.0)  # the step waits on the victim's queue by now
    killed_at = time.time()
    servers[victim].kill()
    failed = json.loads(client.expect('{"event": "failed"'))
    # The step fails with UnavailableError naming the task whose process died, and the op of
    # the user's graph that ran there, within a second of the kill.
    assert failed["error"] == "UnavailableError", failed
    assert f"Task {victim} is unavailable" in failed["message"], failed
    assert "waits_on_the_victim" in failed["message"], failed
    assert failed["time"] - killed_at < 1.0, failed["time"] - killed_at
    # Nothing of the step was committed: the survivor's counter is still 0.
    assert json.loads(client.expect('{"event": "counter"'))["value"] == 0.0
    # A process started again for the victim's address rejoins, and a new Session uses it.
    restarted = start(serve[victim], f"{victim} again")
    restarted.expect("serving")
    client.tell("again")
    assert json.loads(client.expect('{"event": "again"'))["values"] == [1.0, 2.0]


# -- the chief's recovery --------------------------------------------------------------------------
# The chief of a ps and one worker: trains w to 0 by gradient descent on w**2 (w = 4 * 0.8**step),
# saving a checkpoint every 5 steps, and prints the global step each run read (the step's
# number before its increment); after the twelfth step it waits for a line on stdin (meanwhile
# the test replaces the ps's process), then trains on to step 20.
CHIEF = textwrap.dedent(
    """
    import json, sys
    import dataflow as tf

    spec, checkpoint_dir = json.loads(sys.argv[1]), sys.argv[2]
    server = tf.train.Server(spec, job_name="worker", task_index=0)
    cluster = tf.train.ClusterSpec(spec)
    with tf.device(tf.train.replica_device_setter(cluster=cluster,
                                                  worker_device="/job:worker/task:0")):
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(4.0, name="w")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.square(w), global_step=step)
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
    with tf.train.MonitoredTrainingSession(
        master=server.target, is_chief=True, checkpoint_dir=checkpoint_dir,
        save_checkpoint_steps=5, hooks=[tf.train.StopAtStepHook(last_step=20)], config=config,
        log_step_count_steps=None, save_summaries_steps=None,
    ) as sess:
        paused = False
        while not sess.should_stop():
            _, done = sess.run([train, step])
            print(json.dumps({"step": int(done)}), flush=True)
            if done == 11 and not paused:
                paused = True
                sys.stdin.readline()
    with tf.Session(server.target, config=config) as sess:
        final_step, final_w = sess.run([step, w])
    print(json.dumps({"final_step": int(final_step), "w": float(final_w)}), flush=True)
    """
)


def test_the_chief_recreates_its_session_after_losing_the_ps_and_restores_the_checkpoint(
    head, tmp_path
):
    _, _, start = head
    spec = {"ps": ["localhost:7200"], "worker": ["localhost:7201"]}
    serve_ps = ["-c", SERVE, json.dumps(spec), "ps", "0"]
    ps = start(serve_ps, "ps")
    ps.expect("serving")
    chief = start(["-c", CHIEF, json.dumps(spec), str(tmp_path)], "chief")
    steps = [json.loads(chief.expect('{"step": '))["step"] for _ in range(12)]
    assert steps == list(range(0, 12))
    ps.kill()  # the variables of steps 11 and 12 die with it; the checkpoint of step 10 stays
    ps = start(serve_ps, "ps again")
    ps.expect("serving")
    chief.tell("go")
    # The next run meets the lost ps (UnavailableError); the MonitoredSession makes a new
    # session, which waits for the ps's new process, restores step 10's checkpoint, and trains
    # steps 11 to 20 again.
    steps = [json.loads(chief.expect('{"step": '))["step"] for _ in range(10)]
    assert steps == list(range(10, 20))
    final = json.loads(chief.expect('{"final_step": '))
    assert final["final_step"] == 20
    assert final["w"] == pytest.approx(4.0 * 0.8**20, rel=1e-5)


# -- the chief initializes, the others wait --------------------------------------------------------
# Both workers build the same graph (w on the ps).  Worker 1, not the chief, waits for a ready
# model through a SessionManager looking every 0.3 s (recovery_wait_secs); worker 0, the chief,
# initializes it through MonitoredTrainingSession, then waits for a line on stdin.
WORKER_OF_THE_CHIEF_PROTOCOL = textwrap.dedent(
    """
    import json, sys, time
    import dataflow as tf

    spec, index = json.loads(sys.argv[1]), int(sys.argv[2])
    server = tf.train.Server(spec, job_name="worker", task_index=index)
    cluster = tf.train.ClusterSpec(spec)
    with tf.device(tf.train.replica_device_setter(cluster=cluster,
                                                  worker_device=f"/job:worker/task:{index}")):
        w = tf.Variable(7.0, name="w")
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
    if index == 0:
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=True,
                                               config=config) as sess:
            print("initialized", time.time(), flush=True)
            sys.stdin.readline()
    else:
        manager = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(),
                                          recovery_wait_secs=0.3)
        print("waiting for the chief", flush=True)
        sess = manager.wait_for_session(server.target, config=config, max_wait_secs=120)
        print("ready", time.time(), sess.run(w), flush=True)
    """
)


def test_a_worker_that_is_not_the_chief_waits_until_the_chief_initialized(head):
    _, _, start = head
    spec = {"ps": ["localhost:7300"], "worker": ["localhost:7301", "localhost:7302"]}
    ps = start(["-c", SERVE, json.dumps(spec), "ps", "0"], "ps")
    ps.expect("serving")
    other = start(["-c", WORKER_OF_THE_CHIEF_PROTOCOL, json.dumps(spec), "1"], "worker 1")
    other.expect("waiting for the chief")
    time.sleep(2.0)
    assert not any(line.startswith("ready") for line in other.lines)
    assert other.popen.poll() is None  # still waiting: w is not initialized
    chief = start(["-c", WORKER_OF_THE_CHIEF_PROTOCOL, json.dumps(spec), "0"], "worker 0")
    initialized_at = float(chief.expect("initialized").split()[1])
    _, ready_at, value = other.expect("ready").split()
    assert float(value) == 7.0
    # It found the model ready at its next look, recovery_wait_secs after the last (plus the
    # look itself, a few runs on a loaded machine).
    assert float(ready_at) - initialized_at < 0.3 + 2.0
    chief.tell("done")


def test_the_first_task_process_starts_a_head_that_outlives_it_and_stopping_it_ends_a_join(
    tmp_path,
):
    state_dir = str(tmp_path / "state")
    spec = json.dumps({"ps": ["localhost:7400"]})
    first = Process(["-c", SERVE, spec, "ps", "0"], environment("", state_dir), "ps")
    later = None
    try:
        first.expect("serving grpc://localhost:7400")
        status = cluster_command("status", state_dir)
        assert status.returncode == 0, status.stderr
        assert f"(from {state_dir}/head.json)" in status.stdout
        assert "task at localhost:7400" in status.stdout.splitlines()
        first.kill()
        # The head stays when the process that started it ends; its task went with it.
        status = cluster_command("status", state_dir)
        assert status.returncode == 0 and "task at" not in status.stdout
        # A task process that joins it serves until the head stops, then its join returns.
        later = Process(
            ["-c", SERVE, json.dumps({"ps": ["localhost:7600"]}), "ps", "0"],
            environment("", state_dir),
            "ps",
        )
        later.expect("serving")
        stopped = cluster_command("stop", state_dir)
        assert stopped.returncode == 0 and "stopped the Ray head" in stopped.stdout
        later.expect("joined", timeout=30)
        assert later.popen.wait(30) == 0
    finally:
        first.kill()
        if later is not None:
            later.kill()
        cluster_command("stop", state_dir)
    assert cluster_command("status", state_dir).returncode == 1


# A task process that also says which process runs its task's actor (the task's variables and
# kernels live there, in a process Ray started for it and ends with this one).
SERVE_SAYING_THE_ACTOR = textwrap.dedent(
    """
    import json, sys
    import ray
    import dataflow as df
    server = df.train.Server(json.loads(sys.argv[1]), job_name=sys.argv[2],
                             task_index=int(sys.argv[3]))
    print("serving", server.target, ray.get(server._actor.ping.remote())[1], flush=True)
    server.join()
    """
)
# Worker 0's program: a step that waits, on the ps, for a queue nobody fills, with a deadline.
CLIENT_WITH_A_DEADLINE = textwrap.dedent(
    """
    import json, sys, time
    import dataflow as tf

    spec = json.loads(sys.argv[1])
    server = tf.train.Server(spec, job_name="worker", task_index=0)
    with tf.device("/job:ps/task:0"):
        queue = tf.FIFOQueue(1, tf.float32, shapes=[[]], name="never_filled")
        waits = queue.dequeue(name="waits_on_the_ps")
    with tf.Session(server.target) as sess:
        sys.stdin.readline()
        started = time.time()
        try:
            sess.run(waits, options=tf.RunOptions(timeout_in_ms=1000))
        except tf.errors.OpError as e:
            print(json.dumps({"error": type(e).__name__, "message": e.message,
                              "seconds": time.time() - started}), flush=True)
    """
)


def test_a_task_that_stops_answering_fails_the_step_at_its_deadline(head):
    _, _, start = head
    spec = {"ps": ["localhost:7500"], "worker": ["localhost:7501"]}
    ps = start(["-c", SERVE_SAYING_THE_ACTOR, json.dumps(spec), "ps", "0"], "ps")
    actor_pid = int(ps.expect("serving").split()[-1])
    client = start(["-c", CLIENT_WITH_A_DEADLINE, json.dumps(spec)], "worker 0")
    os.kill(actor_pid, signal.SIGSTOP)
    try:
        client.tell("run")
        failed = json.loads(client.expect('{"error"'))
    finally:
        os.kill(actor_pid, signal.SIGCONT)
    assert failed["error"] == "DeadlineExceededError", failed
    assert "Task /job:ps/task:0 did not answer" in failed["message"], failed
    assert "waits_on_the_ps" in failed["message"], failed
    # The deadline (1 s) and the master's grace for a task to report its own deadline (0.5 s).
    assert 1.0 <= failed["seconds"] < 1.0 + 0.5 + 1.0, failed

"""Clusters on Ray: one actor per task, and the master that runs a Session's steps on them.

``RayCluster({"ps": 1, "worker": 2})`` starts a local Ray (or joins the one at ``address``)
and one actor per task, named after the task (``/job:ps/task:0``).  Each actor runs a
`TaskServer`, which holds, between steps:

- the graphs registered with it (each the partition of one task for one kind of run), each
  sent once as `dataflow.io` bytes and cached under its registration id, each with its own
  `Session`;
- the task's variables and resources (queues), shared by all its registered graphs (as a
  TensorFlow task's resource container is shared by the graphs of every client), so they live
  on the task between runs;
- one `StepMailbox` per step in progress, receiving the tensors other tasks send to it and
  their word that their part of the step succeeded.

``Session(cluster.target)`` makes a `RayMaster`, which plays TensorFlow 1.x's master: it places
the ops the fetches need on tasks, cuts them into one partition per task, registers each once,
and per ``run`` sends one message to each task involved (a fresh step id, the feeds, the fetch
names and the other tasks of the step) and gathers one answer from each; the step's variable
writes commit on every task or on none (see `RayMaster`).

A step's messages go over direct connections between the processes (`links`); Ray starts the
tasks, finds them by name, registers graphs with them and tells when one is gone.  A tensor
travels from the sending task straight to the receiving task's ``deliver``: over the link when
it is small (`links.INLINE_BYTES`), else as a Ray call, which moves it through Ray's object
store (it arrives zero-copy, read-only); the receiver's mailbox keeps it for the ``recv`` of its
key.  ``abort`` reaches every task of the step: the task whose step fails aborts
its peers' mailboxes, and the master aborts the survivors of a task that died.

Invariants: a task runs each step id at most once; a mailbox outlives its step only as the id
of a finished step, so that a value arriving late is dropped rather than kept; errors cross
processes as (error class name, op name, message) and are raised again on the master with the
op of the user's graph, so they name the user's file and line as a local run's do.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ipaddress
import itertools
import logging
import os
import threading
import time
import uuid
import weakref
from typing import Any, NamedTuple, Optional

from ..client.placer import place
from ..framework import composites, errors, nest
from ..framework.device import DeviceSpec
from ..framework.graph import Graph, Operation
from ..framework.graph_walk import needed_ops
from .cluster import ClusterSpec
from .links import LinkLost, RemoteCallError, forget_links, link_to
from .ray_task import (  # noqa: F401 - defined there, reached here too
    _TASK_CONCURRENCY,
    TaskServer,
    _describe_failure,
    _rebuild_failure,
    payload_bytes,
    task_name,
    task_of_device,
)

TARGET_PREFIX = "ray://dataflow/"

# How long after a step's deadline the master waits for a task that has not answered, so
# that a task which gave up at the deadline itself reports the op it waited in; a task silent
# past that is wedged (stopped, or its host unreachable) and the step fails without it.
_DEADLINE_GRACE_SECONDS = 0.5

_clusters: weakref.WeakValueDictionary[str, RayCluster] = weakref.WeakValueDictionary()


def import_ray():
    """The ``ray`` module, or an ``ImportError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(
            "Clusters on Ray need Ray, an optional dependency: pip install 'dataflow[distributed]'"
        ) from None
    return ray


# Ray's switch of its token authentication (Ray 2.52 and later): "token" or "disabled".
_AUTH_MODE_VARIABLE = "RAY_AUTH_MODE"
# Ray's switch between a node that other machines reach (its address on the network, the
# default on Linux) and one on this machine only (the loopback address, Ray's default on macOS
# and Windows); read by `ray._private.services.get_node_ip_address`.
_MULTI_MACHINE_VARIABLE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def start_local_ray(num_cpus: Optional[int] = None, node_ip_address: Optional[str] = None):
    """Starts Ray in this process for a cluster's tasks (``num_cpus``, default 2, and no
    dashboard) and returns the ``ray`` module.

    Anything that can reach a Ray node can run code in it, so by default the node is private
    to this machine and to the holders of its token: its servers listen on the loopback
    address only, and Ray's token authentication is on (``RAY_AUTH_MODE=token``, unless the
    environment says otherwise; Ray finds the token in ``RAY_AUTH_TOKEN``,
    ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``, and makes the last when there is
    none).  ``node_ip_address`` opts into a node that other machines reach at that address
    (to ``ray start --address=...`` more nodes into it).
    """
    ray = import_ray()
    _require_token_authentication()
    options = dict(
        num_cpus=2 if num_cpus is None else num_cpus,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,  # Ray's own start-up notes are not ours
    )
    if node_ip_address is not None:
        ray.init(_node_ip_address=node_ip_address, **options)
    else:
        with _this_machine_only():
            ray.init(**options)
    return ray


def join_ray(address: str):
    """Joins the Ray cluster at ``address`` (``"auto"``: the one running on this machine;
    ``"host:port"``) with token authentication, and returns the ``ray`` module.  A cluster
    on this machine is reached on the loopback address (see `start_local_ray`)."""
    ray = import_ray()
    _require_token_authentication()
    host = address.rsplit(":", 1)[0].strip("[]")
    local = address == "auto" or host == "localhost" or _is_loopback(host)
    with _this_machine_only() if local else contextlib.nullcontext():
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    return ray


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextlib.contextmanager
def _this_machine_only():
    """Ray's single-machine mode while a node starts or a driver joins one: Ray turns
    127.0.0.1 given as a node's address into the machine's network address, and only this
    mode keeps it on the loopback address.  The variable is read when Ray is imported (here
    perhaps before) and by the processes a node starts."""
    from ray._private import ray_constants

    saved = os.environ.get(_MULTI_MACHINE_VARIABLE), ray_constants.ENABLE_RAY_CLUSTER
    os.environ[_MULTI_MACHINE_VARIABLE] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if saved[0] is None:
            os.environ.pop(_MULTI_MACHINE_VARIABLE, None)
        else:
            os.environ[_MULTI_MACHINE_VARIABLE] = saved[0]
        ray_constants.ENABLE_RAY_CLUSTER = saved[1]


def _require_token_authentication() -> None:
    """Turns Ray's token authentication on for this process and the ones it starts, unless
    ``RAY_AUTH_MODE`` says otherwise (then a warning: the cluster takes anyone's calls)."""
    mode = os.environ.get(_AUTH_MODE_VARIABLE)
    if mode is None:
        os.environ[_AUTH_MODE_VARIABLE] = "token"
        # Ray keeps its configuration, read from the environment, once loaded: load it again
        # (as Ray's own switch to token authentication does).
        from ray._raylet import Config

        Config.initialize("")
    elif mode.lower() != "token":
        logging.getLogger(__name__).warning(
            "%s=%s: the Ray cluster of this RayCluster accepts calls from anyone who can reach "
            "it, and a call to it can run any code; unset it to require Ray's token",
            _AUTH_MODE_VARIABLE,
            mode,
        )


# -- the cluster -----------------------------------------------------------------------------------
class RayCluster:
    """A cluster of tasks on Ray, one actor per task: ``RayCluster({"ps": 1, "worker": 2})``.

    ``jobs`` maps each job name to its number of tasks.  With ``address`` None a local Ray is
    started unless this process is already connected to one (`start_local_ray`: ``num_cpus``,
    default 2; on the loopback address only, with Ray's token authentication, unless
    ``node_ip_address`` names the address other machines reach it at); otherwise Ray is
    joined at ``address`` (``"auto"`` or ``"host:port"``), with token authentication too.
    The actors take no CPU of Ray's accounting, so that any number of tasks fits a small
    machine.  ``target`` is what ``df.Session`` takes to run on the cluster; ``spec`` its
    `ClusterSpec`, whose addresses are the actors' names.
    """

    def __init__(
        self,
        jobs: dict,
        address: Optional[str] = None,
        num_cpus: Optional[int] = None,
        node_ip_address: Optional[str] = None,
    ):
        ray = import_ray()
        if not isinstance(jobs, dict) or not jobs:
            raise TypeError(
                f'RayCluster takes a dict from job names to task counts, like {{"worker": 2}}; '
                f"got {jobs!r}"
            )
        for job, count in jobs.items():
            if not isinstance(job, str) or not job or not isinstance(count, int) or count < 1:
                raise ValueError(
                    f"RayCluster: job {job!r} -> {count!r} is not a job name and a task count >= 1"
                )
        self._ray = ray
        self._started_ray = False
        if address is not None and node_ip_address is not None:
            raise ValueError(
                "RayCluster takes an address to join or a node_ip_address to start a Ray node "
                "at, not both"
            )
        if not ray.is_initialized():
            if address is None:
                start_local_ray(num_cpus, node_ip_address)
            else:
                join_ray(address)
            self._started_ray = True
        self._id = uuid.uuid4().hex[:12]
        self.target = f"{TARGET_PREFIX}{self._id}"
        names = {job: [task_name(job, i) for i in range(count)] for job, count in jobs.items()}
        self.spec = ClusterSpec(
            {job: [f"{self.target}{n}" for n in ns] for job, ns in names.items()}
        )
        self._actor_class = ray.remote(TaskServer)
        self._actors: dict[str, Any] = {}
        # Counts the replaced tasks: the masters register their graphs again when it changes.
        self.generation = 0
        for job, count in jobs.items():
            for index in range(count):
                self._actors[task_name(job, index)] = self._start_task(job, index)
        ray.get([actor.ping.remote() for actor in self._actors.values()])
        ray.get([actor.connect.remote(self._actors) for actor in self._actors.values()])
        self._closed = False
        self._stopped = threading.Event()
        _clusters[self.target] = self

    def _start_task(self, job: str, index: int):
        name = task_name(job, index)
        suffix = f"#{self.generation}" if self.generation else ""
        return self._actor_class.options(
            num_cpus=0, max_concurrency=_TASK_CONCURRENCY, name=f"{self.target}{name}{suffix}"
        ).remote(job, index)

    def replace_task(self, task: str) -> None:
        """Stops ``task`` (if it still runs) and starts a new one in its place, with no graph
        and no variable: restore them from a checkpoint (``Saver.restore``) before training
        on.  Steps in progress on the old task fail; the next runs register their graphs
        again."""
        old = self.actor(task)
        try:
            self._ray.kill(old, no_restart=True)
        except Exception:  # already gone
            pass
        spec = DeviceSpec.from_string(task)
        self.generation += 1
        self._actors[task] = self._start_task(spec.job, spec.task)
        self._ray.get(self._actors[task].ping.remote())
        self._ray.get([actor.connect.remote(self._actors) for actor in self._actors.values()])

    @property
    def tasks(self) -> list[str]:
        """The names of the tasks, ``/job:<name>/task:<index>``, job by job."""
        return list(self._actors)

    @property
    def address(self) -> str:
        """The ``host:port`` of the Ray this cluster runs on: what another process joins it
        by (``RAY_ADDRESS``, or ``RayCluster(..., address=...)``)."""
        return self._ray.get_runtime_context().gcs_address

    def actor(self, task: str):
        """The Ray actor handle of ``task`` (a name of `tasks`)."""
        try:
            return self._actors[task]
        except KeyError:
            raise ValueError(f"No task {task!r} in this cluster (tasks: {self.tasks})") from None

    def known_actors(self) -> list:
        """The actors a master aborts a failed step on: every task's."""
        return list(self._actors.values())

    def lost(self, task: str) -> None:
        """Hears that a call to ``task`` found it gone: nothing to do, the task stays lost
        until `replace_task` (a cluster of processes looks for it again instead)."""

    def shutdown(self) -> None:
        """Stops every task actor, and Ray when this cluster started it; the cluster's Sessions
        can't run any more."""
        if self._closed:
            return
        self._closed = True
        self._stopped.set()
        _clusters.pop(self.target, None)
        for actor in self._actors.values():
            try:
                self._ray.kill(actor)
            except Exception:  # already gone
                pass
        if self._started_ray:
            forget_links()
            self._ray.shutdown()

    def __enter__(self) -> RayCluster:
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()

    def __repr__(self) -> str:
        address = "shut down" if self._closed else self.address
        return f"RayCluster({self.target!r}, tasks={self.tasks}, ray at {address})"


def cluster_for_target(target: str) -> tuple[RayCluster, Optional[str]]:
    """The running cluster ``target`` names and the task it names after the cluster (a
    `Server`'s target: ``<cluster target>/job:worker/task:1``), or a ``ValueError``."""
    cluster_target, slash, task = target.partition("/job:")
    cluster = _clusters.get(cluster_target)
    if cluster is None:
        raise ValueError(
            f"Session target {target!r} names no running RayCluster in this process (make one "
            "with df.distribute.RayCluster(...) and pass its .target)"
        )
    task = slash + task if slash else None
    if task is not None:
        cluster.actor(task)  # a ValueError naming the tasks when it is not one of them
    return cluster, task


# -- the master ------------------------------------------------------------------------------------
class _TaskPart:
    """One task's part of a step of several tasks: its registered partition, and where its
    feeds come from and its fetched values go."""

    def __init__(self, task: str, graph: Graph):
        self.task = task
        self.graph = graph
        self.registration: Optional[str] = None
        self.feed_names: list[str] = []  # tensors of the partition that are fed
        self.feed_positions: list[int] = []  # per feed: index into the step's feed values
        self.fetch_names: list[str] = []  # tensors and ops of the partition fetched
        self.fetch_targets: list[int] = []  # per fetched tensor: index into the step's values
        self.target_names: list[str] = []  # its _Send ops
        # Name of an op of the partition -> the op of the user's graph it stands for.
        self.origins: dict[str, Operation] = {}

    def named_op(self) -> Operation:
        """The user's op an error about this part as a whole names: what it computes for the
        step (its first fetch, else the first value it sends)."""
        for name in (*self.fetch_names, *self.target_names):
            op_name = name.rsplit(":", 1)[0] if ":" in name else name
            if op_name in self.origins:
                return self.origins[op_name]
        return next(iter(self.origins.values()))


class _Step:
    """One ``run`` as the master sees it: its step id, its timeout (0: none), where the user
    called it, and when the master stops waiting for a task's answer (None: never)."""

    def __init__(self, step_id: str, timeout_ms: int, location):
        self.id = step_id
        self.timeout_ms = timeout_ms
        self.location = location
        self.answer_deadline = (
            time.monotonic() + timeout_ms / 1000.0 + _DEADLINE_GRACE_SECONDS
            if timeout_ms > 0
            else None
        )


def _task_failure(error, task: str, op: Operation, step: _Step) -> errors.OpError:
    """The error of a step whose call to ``task`` failed on the way (``error``: a
    ``ray.exceptions.RayError``, or a `LinkLost` or `RemoteCallError` of the task's link):
    `errors.InternalError` when the task's method itself raised, else
    `errors.UnavailableError` (the task stopped or cannot be reached)."""
    ray = import_ray()
    if isinstance(error, (ray.exceptions.RayTaskError, RemoteCallError)):
        return errors.InternalError(
            None,
            op,
            f"Task {task} failed in step {step.id} while running {errors.describe_op(op)} "
            f"(run at {step.location}): {error}",
        )
    return errors.UnavailableError(
        None,
        op,
        f"Task {task} is unavailable: it stopped during step {step.id} while running "
        f"{errors.describe_op(op)} (run at {step.location}): {type(error).__name__}",
    )


class _DistributedStep:
    """What the master keeps of a step placed on several tasks: a part per task, and the
    position of each flat fetch among the values (None for an op)."""

    def __init__(self, parts: list[_TaskPart], fetch_positions: list, value_count: int):
        self.parts = parts
        self.fetch_positions = fetch_positions
        self.value_count = value_count


class StepMessages(NamedTuple):
    """The messages of one step on a cluster: the master's calls to the tasks (one per task),
    their replies, the messages the tasks sent one another (the values, and each task's word
    to each other that its partition succeeded), and the bytes of the step's tensors (fed,
    fetched and sent between tasks; the messages' own framing not counted)."""

    calls: int
    replies: int
    between_tasks: int
    bytes: int


class RayMaster:
    """What a ``Session(cluster.target)`` runs its steps with, as TensorFlow 1.x's master.

    An op that asks for no task runs on ``default_task`` (a `Server`'s task; else the first
    worker, else the first task).  A run whose ops all lie on one task sends that task the
    whole graph (registered once per graph version) and commits there as a local run does.

    A run whose ops lie on several tasks is partitioned by task, as the in-process partitions
    are by device (`dataflow.distribute.partition`): every device of a task maps to that
    task's one CPU, so a task runs one partition per step (a task's Session has one device;
    splitting further would only add rendezvous traffic inside one process).  A fed tensor
    goes to the task of its first consumer.  Each task's partition is registered once per
    (graph version, fetches, feeds) and kept.  Per ``run`` every task involved gets the step
    id and runs its partition with that step's `RayRendezvous`; values crossing tasks go
    straight into the receiving task's `StepMailbox`.

    Variable writes of such a step commit in two phases with no second word from the master:
    each task holds its writes when its partition succeeds and tells the other tasks of the
    step so; a task commits what it holds once every other has told it, then answers (see
    `TaskServer.run_partition`).  A failure anywhere aborts the step on every task, which drops
    the held writes.  What holds: no task commits before every partition of the step
    succeeded.  What does not: a task that dies between its word and its commit loses its
    writes while the others keep theirs (there is no log to replay, as in TensorFlow, whose
    variables are not transactional at all).  The master's call to each task, the values and
    words between tasks, and the answers go over links (`dataflow.distribute.links`); Ray
    registers the graphs, carries large values and aborts, and tells when a task is gone.

    ``last_step_messages`` is the `StepMessages` of the last step that succeeded (None before).
    """

    _ids = itertools.count()

    def __init__(
        self,
        cluster: RayCluster,
        graph: Graph,
        default_task: Optional[str] = None,
        config=None,
    ):
        self._cluster = cluster
        self._graph = graph
        # What ops may be placed on: the tasks ``config.device_filters`` keeps (all without).
        self._spec = filtered_spec(cluster.spec, config)
        tasks = cluster.tasks
        workers = [t for t in tasks if t.startswith("/job:worker/")]
        self._default_task = default_task or (workers[0] if workers else tasks[0])
        self._default_job = DeviceSpec.from_string(self._default_task).job
        self._master_id = f"{uuid.uuid4().hex[:8]}"
        self._steps = itertools.count()
        # (cluster generation, graph version, fetches, feeds) -> the step's parts, registered
        # with their tasks (a replaced task knows no registration: a new generation).
        self._distributions: dict[tuple, Any] = {}
        self._lock = threading.Lock()
        # The ids of the steps running now (the Session's close aborts them).
        self._running: set[str] = set()
        self._closed = False
        self.last_step_messages: Optional[StepMessages] = None

    def run(self, session, fetches, feed_dict, options, location, run_metadata=None):
        """`Session.run` on the cluster; the checks of fetches and feeds are the Session's."""
        if self._cluster._closed:
            raise RuntimeError(f"The cluster of this Session was shut down (run at {location}).")
        flat = nest.flatten(fetches)
        if any(composites.is_composite(f) for f in flat):
            raise TypeError(
                f"A Session on a cluster fetches tensors and ops, not IndexedSlices or "
                f"SparseTensors (run at {location}); fetch their component tensors."
            )
        flat_fetches = [session._as_fetch(f, location) for f in flat]
        feed_tensors, feed_values = session._prepare_feeds(feed_dict, location)
        graph = self._graph
        if graph._unfeedable_tensors or graph._unfetchable_ops:
            # TF1's refusals of a tensor inside a loop or cond, as a local Session gives them
            # (imported here: the session module imports this package).
            from ..client.session import _check_allowed

            _check_allowed(graph, flat_fetches, feed_tensors, location)
        timeout_ms = getattr(options, "timeout_in_ms", 0) or session._config.operation_timeout_in_ms
        step_id = f"{self._master_id}:{next(self._steps)}"
        step = _Step(step_id, timeout_ms, location)
        key = (self._cluster.generation, self._graph.version, tuple(flat_fetches), feed_tensors)
        with self._lock:
            distribution = self._distributions.get(key)
        if distribution is None:
            distribution = self._distribute(session, flat_fetches, feed_tensors, step)
            with self._lock:
                if len(self._distributions) > 256:
                    self._distributions.clear()
                self._distributions[key] = distribution
        if run_metadata is not None and getattr(options, "output_partition_graphs", False):
            run_metadata.partition_graphs = [part.graph for part in distribution.parts]
        values = self._run_on_tasks(distribution, step, feed_values)
        flat_results = [None if p is None else values[p] for p in distribution.fetch_positions]
        if not nest.is_nested(fetches):
            return flat_results[0]
        return nest.pack_sequence_as(fetches, flat_results)

    def _wait(self, replies: dict, step: _Step, deadline: Optional[float]) -> dict:
        """Task -> outcome of each reply (a future of a call over a link or through Ray ->
        (task, an op it runs)), gathered as they come, until ``deadline`` (a
        ``time.monotonic()`` value, or None).  A first failure that began on a task is raised
        at once, after the step is aborted on every task; a task that stopped or cannot be
        reached is `errors.UnavailableError`, and one that has not answered by the deadline
        `errors.DeadlineExceededError`, each naming the task and the user's op."""
        pending = dict(replies)
        outcomes: dict[str, Any] = {}
        while pending:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _ = concurrent.futures.wait(
                pending, timeout=remaining, return_when=concurrent.futures.FIRST_COMPLETED
            )
            if not ready:
                task, op = next(iter(pending.values()))
                error = errors.DeadlineExceededError(
                    None,
                    op,
                    f"Task {task} did not answer step {step.id} within its deadline of "
                    f"{step.timeout_ms} ms while running {errors.describe_op(op)} "
                    f"(run at {step.location})",
                )
                self._abort_step(step.id, error)
                raise error
            for future in ready:
                task, op = pending.pop(future)
                failed = future.exception()
                if failed is not None:
                    error = _task_failure(failed, task, op, step)
                    if isinstance(error, errors.UnavailableError):
                        self._cluster.lost(task)
                    self._abort_step(step.id, error)
                    raise error from None
                outcome = future.result()
                outcomes[task] = outcome
                if isinstance(outcome, tuple) and outcome[0] == "error" and len(replies) > 1:
                    self._abort_step(step.id, outcome)
                    return outcomes
        return outcomes

    def _call(self, task: str, op: Operation, step: _Step, method: str, *args):
        """A future of ``method(*args)`` called on ``task`` over its link: it fails with
        `LinkLost` when the task cannot be reached."""
        actor = self._actor(task, op, step)
        try:
            return link_to(actor).call(method, *args)
        except LinkLost as e:
            failed: concurrent.futures.Future = concurrent.futures.Future()
            failed.set_exception(e)
            return failed

    def close(self) -> None:
        """Stops the steps running now, as the Session closes: each is aborted on its tasks
        with ``CancelledError`` (a kernel waiting on a queue or an accumulator there stops
        too), and commits nothing."""
        with self._lock:
            self._closed = True
            running = list(self._running)
        for step_id in running:
            self._abort_step(
                step_id, errors.CancelledError(None, None, "Session was closed during the step")
            )

    def _run_on_tasks(self, parts: _DistributedStep, step: _Step, feed_values) -> list:
        """Runs a step of several tasks and commits it on all of them (see the class
        docstring): the fetched values, in the order of ``parts.fetch_positions``."""
        with self._lock:
            if self._closed:
                raise errors.CancelledError(
                    None, None, f"Session was closed before step {step.id} (run at {step.location})"
                )
            self._running.add(step.id)
        try:
            return self._run_on_tasks_once(parts, step, feed_values)
        finally:
            with self._lock:
                self._running.discard(step.id)

    def _run_on_tasks_once(self, parts: _DistributedStep, step: _Step, feed_values) -> list:
        tasks = [part.task for part in parts.parts]
        replies = {}
        for part in parts.parts:
            feeds = {n: feed_values[i] for n, i in zip(part.feed_names, part.feed_positions)}
            peers = [t for t in tasks if t != part.task]
            reply = self._call(
                part.task,
                part.named_op(),
                step,
                "run_partition",
                step.id,
                part.registration,
                feeds,
                part.fetch_names,
                part.target_names,
                step.timeout_ms,
                peers,
            )
            replies[reply] = (part.task, part.named_op())
        outcomes = self._wait(replies, step, step.answer_deadline)
        by_task = {part.task: part for part in parts.parts}
        failures = [(t, o) for t, o in outcomes.items() if o[0] != "done"]
        if failures:
            began_here = [(t, o) for t, o in failures if o[0] == "error"]
            task, failure = (began_here or failures)[0]
            self._abort_step(step.id, failure)
            raise _rebuild_failure(failure, self._graph, task, by_task[task].origins)
        values: list = [None] * parts.value_count
        for part in parts.parts:
            for target, value in zip(part.fetch_targets, outcomes[part.task][1]):
                values[target] = value
        # Each task of a step of several tells each other one that it succeeded.
        notices = len(tasks) * (len(tasks) - 1)
        self.last_step_messages = StepMessages(
            calls=len(tasks),
            replies=len(tasks),
            between_tasks=sum(o[3][0] for o in outcomes.values()) + notices,
            bytes=sum(payload_bytes(v) for v in feed_values)
            + sum(payload_bytes(v) for v in values)
            + sum(o[3][1] for o in outcomes.values()),
        )
        return values

    def _abort_step(self, step_id: str, error) -> None:
        """Aborts step ``step_id`` on every task still there, so no recv of it waits on and no
        task keeps its writes (``error``: an exception, or a failure as tasks describe it)."""
        failure = error if isinstance(error, tuple) else _describe_failure(error)
        failure = ("error",) + tuple(failure[1:])
        for actor in self._cluster.known_actors():
            actor.abort_step.remote(step_id, failure)

    def _actor(self, task: str, op: Operation, step: _Step):
        """The actor of ``task``, or (in a cluster of processes, where no process may serve
        the task now) an `errors.UnavailableError` naming the task and the user's ``op``."""
        try:
            return self._cluster.actor(task)
        except errors.UnavailableError as e:
            raise errors.UnavailableError(
                None,
                op,
                f"{e.message} while step {step.id} runs {errors.describe_op(op)} "
                f"(run at {step.location})",
            ) from None

    def load_variable(self, session, variable, value) -> None:
        """Sends ``value`` to the task ``variable`` is placed on (`Session._load_variable`)."""
        op = variable.op
        placement = place(
            self._graph,
            [op],
            session._config,
            self._spec,
            default_device=self._default_task,
        )
        task = task_of_device(placement[op.name], self._default_job)
        try:
            self._cluster._ray.get(self._cluster.actor(task).load_variable.remote(op.name, value))
        except self._cluster._ray.exceptions.RayError as e:
            raise errors.UnavailableError(
                None,
                op,
                f"Task {task} is unavailable: {errors.describe_op(op)} cannot be "
                f"loaded there ({type(e).__name__})",
            ) from None

    def _distribute(self, session, flat_fetches, feed_tensors, step: _Step) -> _DistributedStep:
        """The `_DistributedStep` of a run, its partitions registered with their tasks (within
        the deadline of ``step``, the run that first needs them)."""
        ops = needed_ops(flat_fetches, feed_tensors)
        placement = place(
            self._graph, ops, session._config, self._spec, default_device=self._default_task
        )
        task_of = {op.name: task_of_device(placement[op.name], self._default_job) for op in ops}
        return self._partition(flat_fetches, feed_tensors, task_of, step)

    def _partition(self, flat_fetches, feed_tensors, task_of: dict, step: _Step):
        from ..io.dfg import graph_to_bytes
        from ..passes import GraphItem
        from .partition import _Partitioner

        item = GraphItem.from_graph(self._graph, flat_fetches, feed_tensors)
        ops = needed_ops(list(item.fetches), ())
        ops = list(dict.fromkeys([t.op for t in item.feeds] + ops))
        fed_ops = {t.op for t in item.feeds}
        first_consumer: dict[Operation, Operation] = {}
        for op in ops:
            for t in op._inputs:
                if t.op in fed_ops:
                    first_consumer.setdefault(t.op, op)
        placement = {}
        for op in ops:
            user_op = first_consumer.get(op, op) if op in fed_ops else op
            task = task_of.get(getattr(user_op, "_original", user_op).name, self._default_task)
            placement[op.name] = _task_device(task)
        partitioner = _Partitioner(item.graph, ops, placement)
        graphs = partitioner.run()
        twins = partitioner.twins
        parts = {device: _TaskPart(_task_of_full_device(device), g) for device, g in graphs.items()}
        fetch_positions: list = []
        value_count = 0
        for element in item.fetches:
            op = element if isinstance(element, Operation) else element.op
            part = parts[partitioner.device[op]]
            if isinstance(element, Operation):
                part.fetch_names.append(twins[op].name)
                fetch_positions.append(None)
                continue
            part.fetch_names.append(twins[op]._outputs[element.value_index].name)
            part.fetch_targets.append(value_count)
            fetch_positions.append(value_count)
            value_count += 1
        for position, t in enumerate(item.feeds):
            part = parts[partitioner.device[t.op]]
            part.feed_names.append(twins[t.op]._outputs[0].name)
            part.feed_positions.append(position)
        registrations = {}
        for device, part in parts.items():
            part.target_names = [send.name for send in partitioner.sends.get(device, [])]
            part.origins = {
                op.name: getattr(op, "_original", op) for op in part.graph.get_operations()
            }
            part.registration = f"{self._master_id}/{next(self._ids)}"
            data = graph_to_bytes(part.graph)
            actor = self._actor(part.task, part.named_op(), step)
            reply = actor.register_graph.remote(part.registration, data)
            registrations[reply.future()] = (part.task, part.named_op())
        self._wait(registrations, step, step.answer_deadline)
        return _DistributedStep(list(parts.values()), fetch_positions, value_count)


def _task_device(task: str) -> str:
    """The one device a task runs a partition on: ``/job:ps/task:0`` ->
    ``/job:ps/replica:0/task:0/device:CPU:0``."""
    spec = DeviceSpec.from_string(task)
    return f"/job:{spec.job}/replica:0/task:{spec.task}/device:CPU:0"


def _task_of_full_device(device: str) -> str:
    spec = DeviceSpec.from_string(device)
    return task_name(spec.job, spec.task)


def master_for_target(target: str, graph: Graph, config=None) -> RayMaster:
    """The master of a ``Session(target)`` on a `RayCluster` (`dataflow.client.session` calls
    it)."""
    cluster, task = cluster_for_target(target)
    return RayMaster(cluster, graph, task, config)


def filtered_spec(spec: ClusterSpec, config) -> ClusterSpec:
    """The tasks of ``spec`` that ``config.device_filters`` keeps (a filter names a job, or a
    job and task: ``"/job:ps"``, ``"/job:worker/task:0"``), as TensorFlow's sessions see only
    the devices the filters match; ``spec`` itself without filters."""
    filters = [DeviceSpec.from_string(f) for f in getattr(config, "device_filters", None) or []]
    if not filters:
        return spec
    kept: dict = {}
    for job in spec.jobs:
        for index in spec.task_indices(job):
            if any(f.job in (None, job) and f.task in (None, index) for f in filters):
                kept.setdefault(job, {})[index] = spec.task_address(job, index)
    return ClusterSpec(kept)

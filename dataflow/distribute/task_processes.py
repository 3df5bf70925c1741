"""``train.Server``: one task of a cluster, and clusters whose tasks are processes of their own.

A TF1 program starts one process per task, each with the same `ClusterSpec` of ``host:port``
addresses and its own ``--job_name``/``--task_index``::

    cluster = tf.train.ClusterSpec({"ps": ["localhost:2222"], "worker": ["localhost:2223", ...]})
    server = tf.train.Server(cluster, job_name="worker", task_index=0)
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=True) as sess: ...

Here the processes meet on one Ray cluster, whose head each finds through a documented address
(`dataflow.distribute.head`: ``RAY_ADDRESS``, else the head ``python -m dataflow cluster
start`` recorded, else the first task process starts one).  Each `Server` starts its task's
`TaskServer` as a Ray actor named after the task's address (`ray_task.actor_name`), owned by
the Server's process: the task's variables live in that actor, and when the process ends,
however it ends, Ray ends the actor with it, so the task is gone exactly when its process is.
A process started again with the same address makes a new actor under the same name, which
the others find again.

``server.target`` (``grpc://host:port``, as TensorFlow's) names the task; ``Session(target)``
in any process joined to that Ray runs through a `RayMaster` on a `ProcessCluster`, this
process's view of the cluster, which finds the tasks' actors by name.  As TensorFlow's
``CreateSession``, making such a Session waits until every task it may use (all, or those
``ConfigProto.device_filters`` keeps) has a process, saying every 10 s which it waits for; a
step that meets a task whose process is gone fails with ``UnavailableError`` naming the task.

A `ClusterSpec` that a `RayCluster` of this process runs (its ``spec``) keeps the in-driver
form: ``Server`` then stands for one of that cluster's actors.

Invariants: one actor per address at a time (a second process claiming a served address is
refused); an actor lives no longer than the process of its Server; this module starts Ray
(joins the head) only when a Server or Session of a cluster of processes is made.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Optional

from ..framework import errors
from ..framework.device import DeviceSpec
from . import head as _head
from .cluster import ClusterSpec
from .ray_cluster import (
    _TASK_CONCURRENCY,
    RayMaster,
    _clusters,
    filtered_spec,
    import_ray,
    join_ray,
)
from .ray_task import ACTOR_NAMESPACE, TaskServer, actor_name, task_name

TARGET_PREFIX = "grpc://"
# How often a Session waiting for the processes of its tasks says which it waits for.
_WAIT_REPORT_SECONDS = 10.0
# How often it looks for them.
_WAIT_POLL_SECONDS = 0.1

_logger = logging.getLogger(__name__)
_process_clusters: dict[tuple, ProcessCluster] = {}
_process_clusters_lock = threading.Lock()


def _spec_key(spec: ClusterSpec) -> tuple:
    return tuple(sorted((job, tuple(sorted(spec._jobs[job].items()))) for job in spec.jobs))


def _connect_ray():
    """The ``ray`` module, joined to the head of the clusters of processes (`head`)."""
    ray = import_ray()
    if not ray.is_initialized():
        join_ray(_head.resolve_head_address())
    return ray


class ProcessCluster:
    """A cluster of task processes as this process sees it: what a `RayMaster` runs steps on.

    It has the interface of `RayCluster` that masters use (``spec``, ``tasks``, ``actor``,
    ``known_actors``, ``lost``, ``generation``), but starts no task: it finds each task's
    actor by the name of its address, keeps the handle, and forgets it when a call finds the
    task gone (`lost`; ``generation`` then changes, so masters register their graphs again)."""

    def __init__(self, spec: ClusterSpec, ray):
        self.spec = spec
        self._ray = ray
        self._closed = False
        self.generation = 0
        self._addresses = {
            task_name(job, index): spec.task_address(job, index)
            for job in spec.jobs
            for index in spec.task_indices(job)
        }
        self._handles: dict = {}
        self._lock = threading.Lock()

    @property
    def tasks(self) -> list[str]:
        """The names of the tasks, ``/job:<name>/task:<index>``, job by job."""
        return list(self._addresses)

    def address(self, task: str) -> str:
        """The ``host:port`` of ``task``."""
        try:
            return self._addresses[task]
        except KeyError:
            raise ValueError(f"No task {task!r} in this cluster (tasks: {self.tasks})") from None

    def task_at(self, address: str) -> Optional[str]:
        """The task at ``address``, or None."""
        return next((t for t, a in self._addresses.items() if a == address), None)

    def _find(self, task: str):
        try:
            return self._ray.get_actor(actor_name(self.address(task)), namespace=ACTOR_NAMESPACE)
        except ValueError:
            return None

    def actor(self, task: str):
        """The actor of ``task``; `errors.UnavailableError` when no process serves it now."""
        with self._lock:
            handle = self._handles.get(task)
        if handle is not None:
            return handle
        handle = self._find(task)
        if handle is None:
            raise errors.UnavailableError(
                None,
                None,
                f"Task {task} is unavailable: no process serves its address "
                f"{self.address(task)} (a process serves it with df.train.Server(cluster, "
                f"job_name={DeviceSpec.from_string(task).job!r}, "
                f"task_index={DeviceSpec.from_string(task).task}))",
            )
        with self._lock:
            return self._handles.setdefault(task, handle)

    def known_actors(self) -> list:
        """The actors found so far (a failed step is aborted on them)."""
        with self._lock:
            return list(self._handles.values())

    def lost(self, task: str) -> None:
        """Forgets the actor of ``task``, which a call found gone: the next use looks again."""
        with self._lock:
            if self._handles.pop(task, None) is not None:
                self.generation += 1

    def wait_for_tasks(self, tasks: list[str], timeout_ms: int = 0) -> None:
        """Waits until a process serves each of ``tasks`` (TensorFlow's ``CreateSession``
        waits so for its workers), logging every `_WAIT_REPORT_SECONDS` which it still waits
        for; with ``timeout_ms`` > 0 a `errors.DeadlineExceededError` after that long."""
        started = time.monotonic()
        reported = started
        while True:
            missing = []
            for task in tasks:
                try:
                    self.actor(task)
                except errors.UnavailableError:
                    missing.append(task)
            if not missing:
                return
            now = time.monotonic()
            if timeout_ms > 0 and now - started > timeout_ms / 1000.0:
                raise errors.DeadlineExceededError(
                    None,
                    None,
                    f"No process served {', '.join(self._described(missing))} within "
                    f"{timeout_ms} ms of making the Session",
                )
            if now - reported >= _WAIT_REPORT_SECONDS:
                reported = now
                for task in missing:
                    spec = DeviceSpec.from_string(task)
                    _logger.warning(
                        "CreateSession still waiting for response from worker: "
                        "/job:%s/replica:0/task:%d (at %s)",
                        spec.job,
                        spec.task,
                        self._addresses[task],
                    )
            time.sleep(_WAIT_POLL_SECONDS)

    def _described(self, tasks: list[str]) -> list[str]:
        return [f"{t} at {self._addresses[t]}" for t in tasks]

    def __repr__(self) -> str:
        return f"ProcessCluster({self.spec!r})"


def process_cluster(spec: ClusterSpec) -> ProcessCluster:
    """This process's `ProcessCluster` of ``spec`` (one per spec), joining Ray first."""
    ray = _connect_ray()
    key = _spec_key(spec)
    with _process_clusters_lock:
        cluster = _process_clusters.get(key)
        if cluster is None:
            cluster = _process_clusters[key] = ProcessCluster(spec, ray)
        return cluster


def _cluster_of_address(address: str) -> tuple[ProcessCluster, str]:
    """The cluster and task of ``address``: from a cluster this process knows, else from the
    actor serving that address (which knows its ClusterSpec)."""
    with _process_clusters_lock:
        known = list(_process_clusters.values())
    for cluster in known:
        task = cluster.task_at(address)
        if task is not None:
            return cluster, task
    ray = _connect_ray()
    try:
        actor = ray.get_actor(actor_name(address), namespace=ACTOR_NAMESPACE)
    except ValueError:
        raise ValueError(
            f"Session target {TARGET_PREFIX}{address} names no task: no process serves "
            f"{address} on the Ray cluster this process joined"
        ) from None
    cluster = process_cluster(ClusterSpec(ray.get(actor.cluster_spec.remote())))
    return cluster, cluster.task_at(address)


def master_for_address(target: str, graph, config=None) -> RayMaster:
    """The master of ``Session("grpc://host:port")`` (`dataflow.client.session` calls it): it
    runs ops that ask for no task on the task at that address, once a process serves each
    task the Session may use (`ProcessCluster.wait_for_tasks`)."""
    address = target[len(TARGET_PREFIX) :].rstrip("/")
    cluster, task = _cluster_of_address(address)
    timeout_ms = getattr(config, "operation_timeout_in_ms", 0) if config is not None else 0
    spec = filtered_spec(cluster.spec, config)
    used = [task_name(job, index) for job in spec.jobs for index in spec.task_indices(job)]
    cluster.wait_for_tasks(used, timeout_ms)
    return RayMaster(cluster, graph, task, config)


# -- the server ------------------------------------------------------------------------------------
class Server:
    """``train.Server``: one task of a cluster, as TF1 programs make them.

    ``Server(cluster_spec, job_name="worker", task_index=1)`` with a ClusterSpec of
    ``host:port`` addresses serves that task from this process (see the module docstring):
    ``start`` (called by the constructor unless ``start=False``) joins the Ray head and starts
    the task's actor; ``target`` (``grpc://host:port``) is what ``Session``/
    ``MonitoredTrainingSession(master=...)`` take, and runs ops that ask for no task on this
    task, as a TF1 worker's Session does; ``join`` (what a parameter server's process calls)
    serves until the cluster's head stops.

    With the ``spec`` of a `RayCluster` this process runs, it stands for one of that cluster's
    actors, already running: ``start`` does nothing, and ``join`` waits until the cluster shuts
    down.  ``protocol`` and ``config`` are accepted as TensorFlow's (Ray is the transport).
    """

    def __init__(
        self,
        server_or_cluster_def,
        job_name: Optional[str] = None,
        task_index: Optional[int] = None,
        protocol: Optional[str] = None,
        config=None,
        start: bool = True,
    ):
        spec = ClusterSpec(server_or_cluster_def)
        if not spec.jobs:
            raise ValueError("train.Server needs a ClusterSpec with at least one job")
        if job_name is None:
            if len(spec.jobs) != 1:
                raise ValueError(f"Server needs a job_name: the cluster has jobs {spec.jobs}")
            job_name = spec.jobs[0]
        if job_name not in spec.jobs:
            raise ValueError(f"Server: no job {job_name!r} in the cluster (jobs: {spec.jobs})")
        if task_index is None:
            if spec.num_tasks(job_name) != 1:
                raise ValueError(f"Server needs a task_index: job {job_name!r} has several tasks")
            task_index = spec.task_indices(job_name)[0]
        self._task = task_name(job_name, task_index)
        self._job_name = job_name
        self._task_index = task_index
        self.server_def = {"cluster": spec, "job_name": job_name, "task_index": task_index}
        in_driver = [c for c in list(_clusters.values()) if c.spec == spec]
        self._actor = None
        if in_driver:
            self._in_driver = in_driver[0]
            self._in_driver.actor(self._task)  # a ValueError naming the tasks when not one
            self.target = f"{self._in_driver.target}{self._task}"
            return
        self._in_driver = None
        self._address = spec.task_address(job_name, task_index)
        if self._address.startswith("ray://dataflow/"):
            raise ValueError(
                f"No running RayCluster has the cluster {spec!r}: make one with "
                "df.distribute.RayCluster({job: task count}) and pass its .spec"
            )
        self._spec = spec
        self.target = f"{TARGET_PREFIX}{self._address}"
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start: bool = True) -> Server:
        """A server of a cluster of one task, ``/job:localhost/task:0``, in this process (as
        TensorFlow's, for a Session that uses the distributed runtime on one machine): an
        in-driver `RayCluster` (which starts a local Ray unless this process joined one)."""
        from .ray_cluster import RayCluster

        cluster = RayCluster({"localhost": 1})
        return Server(cluster.spec, job_name="localhost", task_index=0, config=config, start=start)

    def start(self) -> None:
        """Starts serving the task: joins the Ray head and starts the task's actor (once; an
        in-driver cluster's actor runs already).  A ``ValueError`` when another process serves
        the task's address."""
        if self._in_driver is not None or self._actor is not None:
            return
        cluster = process_cluster(self._spec)
        ray = cluster._ray
        name = actor_name(self._address)
        try:
            actor = (
                ray.remote(TaskServer)
                .options(
                    name=name,
                    namespace=ACTOR_NAMESPACE,
                    num_cpus=0,
                    max_concurrency=_TASK_CONCURRENCY,
                )
                .remote(self._job_name, self._task_index, self._spec.as_dict())
            )
        except ValueError as e:
            raise ValueError(
                f"train.Server: another process serves {self._task} at {self._address} "
                f"already ({e})"
            ) from None
        ray.get(actor.ping.remote())
        self._actor = actor

    def join(self) -> None:
        """Serves until the cluster stops: an in-driver cluster's shutdown, or the Ray head's
        (``python -m dataflow cluster stop``)."""
        if self._in_driver is not None:
            self._in_driver._stopped.wait()
            return
        self.start()
        gcs_address = import_ray().get_runtime_context().gcs_address
        while _head._accepts_connections(gcs_address):
            time.sleep(0.5)

    def __repr__(self) -> str:
        return f"Server({self.target!r}, task={self._task!r})"

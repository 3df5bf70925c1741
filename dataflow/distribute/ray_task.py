"""The task side of a Ray cluster: the actor that holds one task's resources and variables and
runs the partitions of a step placed on it, the names of tasks, and how errors cross from a
task's process to the master's."""

from __future__ import annotations

import builtins
import collections
import os
import threading
import time
from typing import Any, Optional

import numpy as np

import executor

from ..framework import errors
from ..framework.device import DeviceSpec
from ..framework.graph import Graph, Operation
from .links import INLINE_BYTES, LinkServer, link_to
from .rendezvous import StepMailbox, parse_key

# Threads of a task actor: one per step it runs at once, plus those delivering tensors to it
# and aborting its steps while its steps block (as many again serve its links' calls).
_TASK_CONCURRENCY = 32
# Ids of finished steps a task remembers, so that a tensor sent to a finished step is dropped.
_FINISHED_STEPS_KEPT = 4096
# The Ray namespace of the actors of task processes, named after their tasks' addresses.
ACTOR_NAMESPACE = "dataflow"


def actor_name(address: str) -> str:
    """The name of the actor of the task at ``address`` (a ``host:port`` of a ClusterSpec), by
    which every process of its cluster finds it."""
    return f"task@{address}"


def payload_bytes(value) -> int:
    """The bytes of a value a step moves (an array's data; 0 for what has no size)."""
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    return int(getattr(value, "nbytes", 0))


def task_name(job: str, index: int) -> str:
    """The short device name of a task, which is also its actor's name: ``/job:ps/task:0``."""
    return f"/job:{job}/task:{index}"


def task_of_device(device: str, default_job: str) -> str:
    """The task a device name lies on (``/job:ps/task:1/device:CPU:0`` -> ``/job:ps/task:1``);
    a name without a job lies on ``default_job``, one without a task index on task 0."""
    spec = DeviceSpec.from_string(device)
    return task_name(spec.job or default_job, spec.task or 0)


# -- the task side ---------------------------------------------------------------------------------
class TaskServer:
    """The body of one task's actor: its graphs, its variables and its steps' mailboxes.

    Ray runs its methods on up to `_TASK_CONCURRENCY` threads, so ``deliver`` and
    ``abort_step`` are served while ``run_partition`` blocks in a ``recv``.

    A step's messages reach it over links (`dataflow.distribute.links`): its `LinkServer`,
    started on the first ``link_address``, runs ``run_partition`` on a pool of
    `_TASK_CONCURRENCY` threads and takes ``deliver``, ``step_prepared`` and ``abort_step`` on
    the connection's reader.  The same methods stay reachable as Ray calls.

    The task of a `RayCluster` learns its peers' actor handles from the cluster (`connect`).
    The task of a cluster of processes (``cluster``: its ClusterSpec as a dict) finds each
    peer by the actor name of its address (`actor_name`) when it first sends to it, and looks
    again after each graph registration (a master registers its graphs again after a task
    was lost, so a restarted peer is found anew).
    """

    def __init__(self, job: str, index: int, cluster: Optional[dict] = None):
        self.name = task_name(job, index)
        self._job = job
        self._index = index
        self._cluster = cluster
        # Task name -> actor name of each peer, in a cluster of processes.
        self._peer_names: dict[str, str] = {}
        for peer_job, addresses in (cluster or {}).items():
            items = addresses.items() if isinstance(addresses, dict) else enumerate(addresses)
            for peer_index, address in items:
                self._peer_names[task_name(peer_job, peer_index)] = actor_name(address)
        self._peers: dict[str, Any] = {}
        self._sessions: dict[str, Any] = {}  # registration id -> Session of that graph
        self._variable_values: dict[str, Any] = {}
        self._resources: dict[str, Any] = {}
        self._variables_lock = threading.Lock()
        self._mailboxes: dict[str, StepMailbox] = {}
        self._finished_steps: collections.OrderedDict[str, None] = collections.OrderedDict()
        # (registration, fetches, targets, feeds) -> the lowered plan of a partition.
        self._partition_plans: dict[tuple, Any] = {}
        self._lock = threading.Lock()
        self._link_server: Optional[LinkServer] = None

    # -- cluster membership ----------------------------------------------------------------------
    def ping(self) -> tuple[str, int]:
        """This task's name and process id (the cluster waits for it before it is ready)."""
        return self.name, os.getpid()

    def link_address(self) -> tuple[str, int, bytes]:
        """The host, port and secret of this task's `LinkServer` (started on the first call),
        on the address of its Ray node."""
        import ray

        with self._lock:
            if self._link_server is None:
                self._link_server = LinkServer(
                    ray.util.get_node_ip_address(),
                    calls={"run_partition": self.run_partition},
                    posts={
                        "deliver": self.deliver,
                        "abort_step": self.abort_step,
                        "step_prepared": self.step_prepared,
                    },
                    threads=_TASK_CONCURRENCY,
                    # A link's reader takes a value or an abort without firing the kernels it
                    # makes ready: the run's own thread fires them, so the reader is never
                    # blocked in a kernel (a queue's dequeue, say) waiting for a message that
                    # only it would read.
                    around_posts=executor.completions_only_hand_over,
                )
            server = self._link_server
        return (*server.address, server.secret)

    def connect(self, peers: dict) -> None:
        """Learns the actor handle of every task of the cluster, by task name."""
        self._peers = dict(peers)

    def cluster_spec(self) -> Optional[dict]:
        """The ClusterSpec (as a dict) of this task's cluster of processes; None in a
        `RayCluster`."""
        return self._cluster

    def _peer(self, task: str):
        """The actor of ``task``, or None when it is no task of the cluster; in a cluster of
        processes, `errors.UnavailableError` when no process serves it now."""
        peer = self._peers.get(task)
        if peer is None and task in self._peer_names:
            import ray

            try:
                peer = ray.get_actor(self._peer_names[task], namespace=ACTOR_NAMESPACE)
            except ValueError:
                raise errors.UnavailableError(
                    None,
                    None,
                    f"Task {task} is unavailable: no process serves its address "
                    f"{self._peer_names[task].partition('@')[2]} now",
                ) from None
            self._peers[task] = peer
        return peer

    # -- graphs and steps ------------------------------------------------------------------------
    def register_graph(self, registration_id: str, graph_bytes: bytes) -> None:
        """Loads a graph sent as `dataflow.io` bytes and keeps it under ``registration_id``; a
        second registration under the same id changes nothing."""
        from ..client.session import Session
        from ..io.dfg import graph_from_bytes

        if self._peer_names:
            self._peers.clear()  # found again by name: a peer may have been restarted
        if registration_id in self._sessions:
            return
        graph = graph_from_bytes(graph_bytes)
        for op in graph.get_operations():
            if op.device:
                self._strip_own_task(op)
        session = Session(graph=graph)
        # All graphs of this task read and write one set of variables and share one set of
        # resources (queues), under one lock: the partitions of one graph's different runs
        # are registered apart and must see the same state.
        session._variable_values = self._variable_values
        session._resources = self._resources
        session._lock = self._variables_lock
        with self._lock:
            self._sessions.setdefault(registration_id, session)

    def registrations(self) -> list[str]:
        """The ids of the graphs registered with this task, in the order they came."""
        return list(self._sessions)

    def _strip_own_task(self, op: Operation) -> None:
        """Drops the job, replica and task of a device that names this task, so that this
        task's Session, which runs on its own host, places the op on its own device."""
        spec = DeviceSpec.from_string(op.device)
        if (spec.job, spec.task or 0) == (self._job, self._index):
            spec.job = spec.replica = spec.task = None
            op._set_device(spec.to_string())

    def run_partition(
        self,
        step_id: str,
        registration_id: str,
        feeds: dict,
        fetch_names: list,
        target_names: list,
        timeout_ms: int,
        peers: Optional[list] = None,
    ) -> tuple:
        """Runs this task's partition of step ``step_id``: the registered graph
        ``registration_id`` with ``feeds`` (tensor name -> value), computing ``fetch_names``
        (tensors and ops) and running ``target_names`` (its ``_Send`` ops), with the step's
        `RayRendezvous`.

        ``peers`` names the other tasks of a step of several tasks.  Then the step commits
        its variable writes on every task or on none, with no word from the master: each task
        whose partition succeeded tells every peer so (``step_prepared``), and a task holding
        writes commits them once every peer has told it, before it answers.  A failure
        anywhere aborts the step on every task, which drops the held writes; so does the
        step's deadline passing before every peer has told.  Without ``peers`` the writes
        commit when the partition ends, as a local run's do.

        The answer is ``("done", values of the fetched tensors, whether writes were
        committed, (values sent to other tasks, their bytes))``, or ``("error", class, op,
        message)`` when the failure began here, or ``("aborted", ...)`` when this partition
        stopped because another task failed."""
        from ..client.session import RunOptions, _as_result
        from ..ops.variables import VariableRef

        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        mailbox = self._mailbox(step_id)
        if mailbox is None:
            return ("aborted", "CancelledError", None, f"Step {step_id} ended before it began")
        mailbox.deadline = deadline
        try:
            if mailbox.aborted is not None:
                raise mailbox.aborted
            session = self._sessions.get(registration_id)
            if session is None:
                raise errors.FailedPreconditionError(
                    None, None, f"No graph is registered as {registration_id!r} on {self.name}"
                )
            plan = self._partition_plan(
                registration_id, session, fetch_names, target_names, list(feeds)
            )
            options = RunOptions(timeout_in_ms=timeout_ms) if timeout_ms > 0 else None
            held = []
            rendezvous = RayRendezvous(self, step_id, deadline)
            values = session._execute(
                plan,
                tuple(feeds.values()),
                options,
                None,
                f"step {step_id} on {self.name}",
                rendezvous=rendezvous,
                commit=held.append if peers else None,
            )
            context = held[0] if held else None
            results = []
            for position in plan.fetch_positions[: len(fetch_names)]:
                if position is None:
                    continue
                value = values[position]
                if type(value) is VariableRef:
                    pending = context.pending_writes if context is not None else {}
                    value = pending.get(value.key, session._variable_values.get(value.key))
                results.append(_as_result(value) if type(value) is np.ndarray else value)
            holds = context is not None and bool(context.pending_writes)
            if peers:
                for peer in peers:
                    self._post(self._peer(peer), "step_prepared", (step_id, self.name), inline=True)
                if holds:
                    for peer in peers:
                        mailbox.recv(_prepared_key(peer))  # or the abort, or the deadline
            with self._lock:
                # An abort is taken under this lock too: the step commits or is aborted here.
                if mailbox.aborted is not None:
                    raise mailbox.aborted
                if holds:
                    session._commit(context)
            sent = (rendezvous.messages_sent, rendezvous.bytes_sent)
            return ("done", results, holds, sent)
        except Exception as e:
            if mailbox.aborted is not None:
                return ("aborted",) + _describe_failure(mailbox.aborted)[1:]
            failure = _describe_failure(e)
            mailbox.abort(e)
            self._abort_peers(step_id, failure)
            return failure
        finally:
            self._end_step(step_id)

    def step_prepared(self, step_id: str, task: str) -> None:
        """Hears that ``task``'s partition of step ``step_id`` succeeded (see
        `run_partition`)."""
        mailbox = self._mailbox(step_id)
        if mailbox is not None:
            mailbox.send(_prepared_key(task), True, False)

    def load_variable(self, name: str, value) -> None:
        """Sets the variable ``name`` of this task to ``value`` (a restore, ``Variable.load``)."""
        value = np.array(value)
        value.flags.writeable = False
        with self._variables_lock:
            self._variable_values[name] = value

    def _partition_plan(self, registration_id, session, fetch_names, target_names, feed_names):
        """The lowered plan of a registered partition for these fetches, targets and feeds,
        made on first use and kept."""
        from ..client.session import lower_graph

        key = (registration_id, tuple(fetch_names), tuple(target_names), tuple(feed_names))
        plan = self._partition_plans.get(key)
        if plan is None:
            graph = session.graph
            elements = [graph.as_graph_element(n) for n in (*fetch_names, *target_names)]
            feeds = tuple(graph.get_tensor_by_name(n) for n in feed_names)
            plan = lower_graph(graph, elements, feeds, session._pipeline(None))
            self._partition_plans[key] = plan
        return plan

    def rendezvous(self, step_id: str, timeout_ms: int = 0) -> RayRendezvous:
        """The rendezvous of step ``step_id`` as this task sees it."""
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        return RayRendezvous(self, step_id, deadline)

    # -- the rendezvous, as other tasks and the master reach it ----------------------------------
    def deliver(self, step_id: str, key: str, value, is_dead: bool) -> None:
        """Keeps a value another task sent to this one, until this task's ``recv`` of ``key``."""
        mailbox = self._mailbox(step_id)
        if mailbox is not None:
            mailbox.send(key, value, is_dead)

    def abort_step(self, step_id: str, failure: tuple) -> None:
        """Fails step ``step_id`` here: its waiting and later ``recv`` calls raise the error
        ``failure`` describes (`_describe_failure`), and its held writes are dropped."""
        mailbox = self._mailbox(step_id)
        if mailbox is not None:
            with self._lock:
                mailbox.abort(_rebuild_failure(failure, None, self.name))

    def send(self, step_id: str, key: str, value, is_dead: bool = False) -> None:
        """Sends through step ``step_id``'s rendezvous from this task, as a `_Send` does."""
        self.rendezvous(step_id).send(key, value, is_dead)

    def recv(self, step_id: str, key: str, timeout_ms: int = 0) -> tuple:
        """Receives from step ``step_id``'s rendezvous on this task, as a `_Recv` does:
        ``(value, is_dead)``; the step ends here when the value arrives or the wait fails."""
        try:
            return self.rendezvous(step_id, timeout_ms).recv(key)
        finally:
            self._end_step(step_id)

    def steps_in_progress(self) -> list[str]:
        """The ids of the steps this task runs, or receives values for, now."""
        with self._lock:
            return list(self._mailboxes)

    def waiting_keys(self, step_id: str) -> list[str]:
        """The rendezvous keys the receives of step ``step_id`` wait for on this task (none
        once the step has ended): what a step that does not end waits on here."""
        with self._lock:
            mailbox = self._mailboxes.get(step_id)
        return [] if mailbox is None else mailbox.waiting_keys

    # -- mailboxes -------------------------------------------------------------------------------
    def _mailbox(self, step_id: str) -> Optional[StepMailbox]:
        """Step ``step_id``'s mailbox, made when first needed; None once the step has ended."""
        with self._lock:
            mailbox = self._mailboxes.get(step_id)
            if mailbox is None:
                if step_id in self._finished_steps:
                    return None
                mailbox = self._mailboxes[step_id] = StepMailbox(step_id)
            return mailbox

    def _end_step(self, step_id: str) -> None:
        with self._lock:
            self._mailboxes.pop(step_id, None)
            self._finished_steps[step_id] = None
            while len(self._finished_steps) > _FINISHED_STEPS_KEPT:
                self._finished_steps.popitem(last=False)

    def _abort_peers(self, step_id: str, failure: tuple) -> None:
        for name, peer in list(self._peers.items()):
            if name != self.name:
                peer.abort_step.remote(step_id, failure)

    @staticmethod
    def _post(peer, method: str, args: tuple, inline: bool) -> None:
        """Calls ``method(*args)`` on the task actor ``peer`` without waiting: over the link to
        it when ``inline``, else (or when the link or pickle fails) as a Ray call, whose
        arguments travel through Ray's object store when they are large."""
        if inline:
            try:
                link_to(peer).post(method, *args)
                return
            except Exception:  # no link, or a value pickle does not take: Ray's call instead
                pass
        getattr(peer, method).remote(*args)


def _prepared_key(task: str) -> str:
    """The mailbox key of ``task``'s word that its partition of a step succeeded (no
    rendezvous key looks like it: those name a send and a receive device)."""
    return f"prepared:{task}"


class RayRendezvous:
    """The rendezvous of one step as one task sees it (interface: `dataflow.distribute.rendezvous`).

    ``send`` of a key whose destination device lies on this task puts the value into this
    task's mailbox; any other goes to the destination task's ``deliver``, posted over the link
    to it when the value is small (`links.INLINE_BYTES`), else as a Ray call through Ray's
    object store; either returns at once.  ``recv`` waits on this task's mailbox until the
    step's deadline; ``recv_async`` holds no thread while it waits.
    """

    def __init__(self, server: TaskServer, step_id: str, deadline: Optional[float]):
        self._server = server
        self._step_id = step_id
        self._deadline = deadline
        # The values this task sent to other tasks in this step: how many, and their bytes.
        self.messages_sent = 0
        self.bytes_sent = 0
        self._count_lock = threading.Lock()

    def send(self, key: str, value, is_dead: bool) -> None:
        destination = task_of_device(parse_key(key).destination_device, self._server._job)
        if destination == self._server.name:
            mailbox = self._server._mailbox(self._step_id)
            if mailbox is not None:
                mailbox.send(key, value, is_dead)
            return
        peer = self._server._peer(destination)
        if peer is None:
            raise errors.InvalidArgumentError(
                None, None, f"Rendezvous key {key!r} names {destination}, not a task of the cluster"
            )
        sent_value = None if is_dead else value
        inline = is_dead or payload_bytes(value) <= INLINE_BYTES
        self._server._post(peer, "deliver", (self._step_id, key, sent_value, is_dead), inline)
        with self._count_lock:
            self.messages_sent += 1
            self.bytes_sent += 0 if is_dead else payload_bytes(value)

    def recv_async(self, key: str, done) -> None:
        """Calls ``done((value, is_dead))`` once ``key`` arrives in this task's mailbox, or
        ``done(error=...)`` with the error that aborts the step; no thread waits for it (the
        step's deadline ends its partition's run, which aborts the mailbox)."""
        mailbox = self._server._mailbox(self._step_id)
        if mailbox is None:
            done(error=errors.CancelledError(None, None, f"Step {self._step_id} has ended"))
            return
        mailbox.recv_async(key, done)

    def recv(self, key: str, deadline: Optional[float] = None) -> tuple[Any, bool]:
        """The value of ``key`` once it arrives; waits until ``deadline`` (a
        ``time.monotonic()`` value) or the step's, whichever comes first."""
        mailbox = self._server._mailbox(self._step_id)
        if mailbox is None:
            raise errors.CancelledError(None, None, f"Step {self._step_id} has ended")
        deadlines = [d for d in (deadline, self._deadline, mailbox.deadline) if d is not None]
        mailbox.deadline = min(deadlines, default=None)
        return mailbox.recv(key)

    @property
    def aborted_with(self) -> Optional[BaseException]:
        """The error this step was aborted with on this task, or None (kernels that wait on a
        queue or an accumulator look at it, to stop with their step)."""
        with self._server._lock:
            mailbox = self._server._mailboxes.get(self._step_id)
        return None if mailbox is None else mailbox.aborted

    def abort(self, error: BaseException) -> None:
        failure = _describe_failure(error)
        mailbox = self._server._mailbox(self._step_id)
        if mailbox is not None:
            mailbox.abort(error)
        self._server._abort_peers(self._step_id, failure)


# -- errors across processes -----------------------------------------------------------------------
def _describe_failure(error: BaseException) -> tuple:
    """``("error", class name, op name or None, message)``: an error as it crosses processes."""
    op = getattr(error, "op", None)
    op_name = op.name if isinstance(op, Operation) else None
    message = error.message if isinstance(error, errors.OpError) else str(error)
    return ("error", type(error).__name__, op_name, message)


def _rebuild_failure(
    failure: tuple, graph: Optional[Graph], task: str, origins: Optional[dict] = None
) -> BaseException:
    """The error ``failure`` describes, with the op of ``graph`` it names (when there is one;
    ``origins`` maps an op of a partition to the user's op it stands for), as the same class
    when it is one of `dataflow.framework.errors` or a built-in exception."""
    _, class_name, op_name, message = failure
    op = None
    if origins is not None and op_name in origins:
        op = origins[op_name]
    elif graph is not None and op_name is not None:
        try:
            op = graph.get_operation_by_name(op_name)
        except KeyError:
            op = None
    where = f" (on {task})"
    if not message.endswith(where):  # an abort of this task that came back from it
        message += where
    error_class = getattr(errors, class_name, None)
    if isinstance(error_class, type) and issubclass(error_class, errors.OpError):
        return error_class(None, op, message)
    error_class = getattr(builtins, class_name, None)
    if isinstance(error_class, type) and issubclass(error_class, Exception):
        return error_class(message)
    return errors.UnknownError(None, op, f"{class_name}: {message}")

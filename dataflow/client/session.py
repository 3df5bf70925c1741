"""`Session`: runs parts of a graph, holding the values of variables between runs.

A ``run(fetches, feed_dict)`` goes through four steps (see ``docs/architecture.md``):

1. **Prune**: keep the ops the fetches need (`graph.needed_ops`), following data and control
   inputs backwards and stopping at fed tensors (a fed tensor's producer does not run for it).
   Between steps 1 and 2, the graph passes (`dataflow.passes`) chosen by
   ``ConfigProto.graph_options`` or ``RunOptions.rewrite_options`` rewrite a copy of the kept
   ops; the user's graph is never changed, and errors still name the user's ops.  A run that
   watches tensors (``RunOptions.debug_options``) runs no pass unless its ``rewrite_options``
   choose some.
2. **Lower**: number the kept ops as executor nodes, each with its kernel built from its
   `OpDef`; every fed tensor becomes an ``ARG`` node.  Steps 1-2 and the executor's static
   analysis are cached per (graph version, fetches, fed tensors, passes), so a run whose plan is
   cached does neither.
3. **Execute** the plan with this run's feed values, a `RunContext` (variable writes of this run,
   kept apart until the run succeeds) and the inter-op thread pool.
4. **Return** the values in the structure of ``fetches``, and commit the variable writes.

A failed run raises an `errors.OpError` naming the op and the user's line that created it, and
leaves the Session usable and every variable as it was before the run.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np

import executor
from executor.program import Node, NodeKind, Program

from ..framework import composites, errors, nest
from ..framework import dtypes as _dtypes
from ..framework.device import HOST_DEVICE
from ..framework.graph import (
    Graph,
    Operation,
    Tensor,
    _user_location,
    control_sources,
    gc_paused,
    get_default_graph,
    needed_ops,
)
from ..framework.op_registry import ref_inputs
from ..framework.protos import Message
from ..framework.session_stack import (  # noqa: F401 - get_default_session is offered here too
    _session_for_eval,
    _session_stack,
    get_default_session,
)
from ..framework.traceback_utils import _filtered_traceback, is_traceback_filtering_enabled
from ..ops.variables import VariableRef, _uninitialized
from ..passes import GraphItem, PassManager
from ..passes.config import GraphOptions, RewriterConfig, pipeline_for
from ..passes.inplace import is_fresh_value
from ..passes.lower_functional_ops import LOWER_FUNCTIONAL_OPS
from . import compiler
from . import debug_watcher as _debug_watcher
from .debug_options import DebugOptions
from .placer import place
from .random_streams import RandomStreams
from .step_stats import NodeExecStats, StepStats

# Ops whose outputs are all known to be this small run inline (a thread hop costs more).
_INLINE_MAX_ELEMENTS = 4096


# ``ConfigProto.experimental.executor_type`` values (TensorFlow's names; "" is the default).
DEFAULT_EXECUTOR = "DEFAULT"
SINGLE_THREADED_EXECUTOR = "SINGLE_THREADED_EXECUTOR"


@dataclass
class Experimental(Message):
    """``ConfigProto.experimental``: ``executor_type`` is ``""``/``"DEFAULT"`` (functional
    control-flow ops such as ``If`` are lowered to Switch/Merge before a plan is made, and
    independent ops may run on the inter-op threads) or ``"SINGLE_THREADED_EXECUTOR"`` (every
    op runs on the calling thread, and an ``If`` runs as one op that calls the branch taken,
    as TensorFlow's single-threaded executor does; see ``dataflow.eager.tracing.cond_v2``)."""

    executor_type: str = ""


@dataclass
class GPUOptions(Message):
    """``ConfigProto.gpu_options``: how a process shares its GPUs' memory.  This host runs
    every op on its CPU and has no GPU, so there is nothing for these fields to configure;
    they are kept so that programs written for GPUs build their ``ConfigProto`` unchanged."""

    per_process_gpu_memory_fraction: float = 0.0
    allow_growth: bool = False
    allocator_type: str = ""
    deferred_deletion_bytes: int = 0
    visible_device_list: str = ""
    polling_active_delay_usecs: int = 0
    polling_inactive_delay_msecs: int = 0
    force_gpu_compatible: bool = False


@dataclass
class ConfigProto(Message):
    """Session options, mirroring the fields of ``tf.ConfigProto`` that apply here.

    ``inter_op_parallelism_threads``: threads that run independent expensive ops concurrently
    (0 means one per core; 1 runs everything on the calling thread).
    ``intra_op_parallelism_threads``: threads one kernel may use (0 means one per core): a large
    fused elementwise chain runs in blocks on that many threads, or fewer when other kernels
    already keep the cores busy (`dataflow.passes.blocked_elementwise`).  Like every option record
    here, it checks the type of each field as protobuf does (`dataflow.framework.protos.Message`).
    """

    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0
    # Devices (`dataflow.client.placer`): each op of a run is placed on one of the host's
    # ``device_count["CPU"]`` CPUs (default 1); an op whose ``df.device`` names a device this
    # process lacks (``/gpu:0``) goes to a CPU only with soft placement, as in TensorFlow.
    # ``log_device_placement`` prints each op's device to stderr when a run first uses it.
    allow_soft_placement: bool = False
    log_device_placement: bool = False
    device_count: dict[str, int] = field(default_factory=dict)
    operation_timeout_in_ms: int = 0
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    # Graph passes run on each plan (`dataflow.passes.config`); read when the Session is
    # created, as TensorFlow copies the ConfigProto it is given.
    graph_options: GraphOptions = field(default_factory=GraphOptions)
    experimental: Experimental = field(default_factory=Experimental)


def process_config() -> ConfigProto:
    """The ``ConfigProto`` of a Session given none: the default one, with the process's runtime
    options (`dataflow.client.config`: threads, soft placement, logical CPUs, graph-pass
    switches)."""
    from ..passes.config import RewriterConfig
    from .config._state import STATE

    config = ConfigProto(
        inter_op_parallelism_threads=STATE.inter_op_threads,
        intra_op_parallelism_threads=STATE.intra_op_threads,
        allow_soft_placement=STATE.soft_placement,
        log_device_placement=STATE.log_device_placement,
    )
    if STATE.logical_devices is not None:
        config.device_count = {"CPU": STATE.logical_cpus()}
    rewrite = config.graph_options.rewrite_options
    for option, value in STATE.optimizer_options.items():
        if isinstance(getattr(RewriterConfig, option, None), bool):
            setattr(rewrite, option, bool(value))
        elif hasattr(RewriterConfig, option) and option != "optimizers":
            setattr(rewrite, option, RewriterConfig.ON if value else RewriterConfig.OFF)
    return config


@dataclass
class RunOptions(Message):
    """Per-run options: ``timeout_in_ms`` (0 = none) and ``trace_level`` (accepted, unused:
    per-op statistics are collected whenever a ``RunMetadata`` is passed).

    ``timeout_in_ms`` (or ``ConfigProto.operation_timeout_in_ms`` when it is 0): past it, the
    run raises ``errors.DeadlineExceededError`` naming the ops still running, starts no further
    op, and leaves the Session usable and every variable as it was, even while an op blocks
    (a ``py_func`` that sleeps or waits on an event).  As in TensorFlow, an op that is running
    cannot be interrupted: it goes on on its own thread in the background until it returns,
    and its results are dropped.  If it was running on the Session's inter-op thread pool, the
    Session moves on to a new pool, so that later runs and ``close`` do not wait for it.  The
    threads that run ops (the inter-op pool's and those that drive runs with a deadline) are
    daemons: one that never returns does not keep the Python process from exiting.

    ``debug_options`` (a `DebugOptions`): tensors to watch; their values come back in
    ``run_metadata.debug_dump`` (see ``dataflow.debug``).  A run that watches tensors runs
    without graph passes, unless ``rewrite_options`` (a `RewriterConfig`, see
    ``dataflow.passes.config``) chooses some for it.
    """

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    timeout_in_ms: int = 0
    trace_level: int = 0
    debug_options: DebugOptions = field(default_factory=DebugOptions)
    # Replaces the Session's rewrite options for this run (`dataflow.passes.config`).
    rewrite_options: Optional[RewriterConfig] = None
    # Fills ``RunMetadata.partition_graphs`` when the run is partitioned across devices.
    output_partition_graphs: bool = False


@dataclass
class RunMetadata(Message):
    """Filled in by ``Session.run(..., run_metadata=...)``.

    ``step_stats``: one `NodeExecStats` per op execution, in start order; it names the ops that
    ran, after graph passes (a fused kernel under the name of the last op of its chain).  It is
    a `StepStats`, a list that also reads as TensorFlow's proto (``step_stats.dev_stats[0]
    .node_stats``, see ``dataflow.client.step_stats``); ``HasField("step_stats")`` says whether a
    run filled it.
    ``loop_iterations``: for each loop (frame name), the iterations each of its instances ran.
    ``dead_step_stats``: one `NodeExecStats` per *dead* firing (an op on an untaken branch, or
    in a loop's last iteration, that passed deadness on without running), in start order.
    ``debug_dump``: the watched tensors (a ``df.debug.DebugDump``) when ``RunOptions``
    asked for any, else None.
    ``rewritten_ops``: for each op of the user's graph that the graph passes took out of the
    plan (its work done by a fused kernel, a folded constant, a merged duplicate, ...), what
    happened to it, e.g. ``{"mul": "fused (elementwise_fusion)"}``.
    Pass it to ``df.debug.chrome_trace`` for a trace, or ``df.render(..., run_metadata=...)``
    for the graph with what ran drawn on it.
    ``partition_graphs``: with ``RunOptions(output_partition_graphs=True)``, the graph of each
    device of a run placed on several (`dataflow.distribute.partition`), with its
    ``_Send``/``_Recv`` ops; each renders with ``df.render``.
    """

    step_stats: StepStats = field(default_factory=StepStats)
    loop_iterations: dict = field(default_factory=dict)
    dead_step_stats: list = field(default_factory=list)
    debug_dump: Any = None
    rewritten_ops: dict = field(default_factory=dict)
    partition_graphs: list = field(default_factory=list)


class RunContext:
    """What kernels may see of the run they belong to: the variables, read and written, and the
    random streams (`random_generator`).  The partitions of one step share one context, so
    their variable writes commit together or not at all.

    Writes go to ``pending_writes`` and are committed by the Session only when the run succeeds.
    A variable that the run changed only by adding to (or subtracting from) the value it read
    from the Session has that value in ``update_bases``: if another run committed a new value
    meanwhile, the commit applies this run's change to it instead of overwriting it (see
    `_rebase_updates`), so concurrent ``assign_add``s lose nothing, as TensorFlow's atomic
    updates.
    """

    __slots__ = (
        "session",
        "pending_writes",
        "update_bases",
        "deadline",
        "random_draws",
        "rendezvous",
        "cancellation",
        "at_end",
        "finished",
    )

    def __init__(self, session: Session, deadline: Optional[float] = None, rendezvous=None):
        self.session = session
        # Where the _Send/_Recv of a partitioned step meet (`dataflow.distribute`); else None.
        self.rendezvous = rendezvous
        self.pending_writes: dict[str, Any] = {}
        self.update_bases: Optional[dict[str, Any]] = None
        self.deadline = deadline  # time.monotonic() value, or None
        self.random_draws: dict[tuple, Any] = {}
        self.cancellation = session._cancellation  # the runs stop when the Session closes
        # What kernels leave to the end of the run (a critical section's lock is released
        # after the run's writes are committed, or when it fails): see `defer`.
        self.at_end: list = []
        self.finished = False

    def defer(self, action) -> None:
        """Runs ``action()`` when the run ends; at once if it has ended already (a kernel of a
        run that failed or timed out may still be finishing on its thread)."""
        self.at_end.append(action)
        if self.finished:
            self.finish()

    def finish(self) -> None:
        """Runs what kernels left to the end of the run, each once."""
        self.finished = True
        while True:
            try:
                action = self.at_end.pop()
            except IndexError:
                return
            action()

    def resource(self, key: str, make):
        """The Session's resource ``key`` (a queue, an iterator), made by ``make()`` the first
        time any run asks for it.  Resources live until the Session closes, are not
        transactional (a queue's enqueue is seen at once by other runs, as in TensorFlow), and
        are told of the close through their ``cancel()`` method."""
        session = self.session
        with session._lock:
            if session._closed:
                raise _closed_during_run()
            found = session._resources.get(key)
            if found is None:
                found = session._resources[key] = make()
            return found

    def check_not_stopped(self, what: str) -> None:
        """Raises when a kernel waiting for ``what`` must give up: the Session was closed
        (``CancelledError``) or the run's deadline passed (``DeadlineExceededError``)."""
        if self.session._closed:
            raise _closed_during_run()
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise errors.DeadlineExceededError(None, None, f"Timed out waiting for {what}")

    def random_generator(self, name: str, seed: int, seed2: int) -> np.random.Generator:
        """The generator the random op ``name`` draws from in this run
        (`dataflow.client.random_streams`)."""
        return self.session._random_streams.generator_for_run(self.random_draws, name, seed, seed2)

    def read_variable(self, ref: VariableRef):
        try:
            return self.pending_writes[ref.key]
        except KeyError:
            pass
        session = self.session
        try:
            return session._variable_values[ref.key]
        except KeyError:
            if session._closed:
                raise _closed_during_run() from None
            raise _uninitialized(ref) from None

    def write_variable(self, ref: VariableRef, value) -> None:
        self.pending_writes[ref.key] = value
        if self.update_bases:
            self.update_bases.pop(ref.key, None)  # an assigned value replaces whatever was there

    def update_variable(self, ref: VariableRef, base, value) -> None:
        """Writes ``value``, computed from ``base`` (the variable's value as ``read_variable``
        gave it) by an update such as AssignAdd."""
        key = ref.key
        pending = self.pending_writes
        if key not in pending:
            bases = self.update_bases
            if bases is None:
                bases = self.update_bases = {}
            bases[key] = base
        pending[key] = value


@dataclass
class _Plan:
    """A lowered, analysed program for one (graph version, fetches, fed tensors, passes)."""

    executable: Any
    fetch_positions: list  # per flat fetch: index into the executor's results, or None for ops
    feed_tensors: tuple
    nodes: list
    # User's op name -> what the graph passes did to it, for the ops no node stands for.
    taken_out: dict
    # User's op name -> full device name, for every op the run needs (`distribute.placer`).
    placement: dict = field(default_factory=dict)
    # Compiled regions (`dataflow.client.compiler`): how often the plan ran interpreted, and its
    # compiled twin (None: not made yet; False: nothing to compile).  A twin has ``reference``,
    # the interpreted plan, and ``regions``.
    runs: int = 0
    compiled: Any = None
    reference: Any = None
    regions: list = field(default_factory=list)
    compile_lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)


# Makes the plan of a step placed on several devices (`dataflow.distribute.local.make_plan`,
# which registers itself), or None when everything lands on one.
_partitioned_steps: Optional[Callable] = None


def register_partitioned_steps(make_plan: Callable) -> None:
    global _partitioned_steps
    _partitioned_steps = make_plan


# Session targets other than "": a prefix -> function(target, graph) making the object that runs
# the Session's steps elsewhere (`register_target`; `dataflow.distribute` registers "ray://").
_TARGETS: dict[str, Callable] = {}


def register_target(prefix: str, make_master: Callable) -> None:
    """Makes a ``Session(target)`` whose target starts with ``prefix`` run its steps through
    ``make_master(target, graph)``, an object with ``run(session, fetches, feed_dict, options,
    location, run_metadata)``."""
    _TARGETS[prefix] = make_master


class Session:
    """Runs fetches of one graph; holds that graph's variable values between runs.

    Several threads may call `run` on one Session at once.  Each run's variable writes are
    committed when it succeeds; ``assign_add`` and ``assign_sub`` of concurrent runs are atomic
    (none is lost, see `dataflow.ops.variables`), and an ``assign`` replaces the value as a whole.
    `close` stops the runs still going on with ``errors.CancelledError``.
    """

    def __init__(self, target: str = "", graph: Optional[Graph] = None, config=None):
        _check_argument("target", target, str, "a str")
        _check_argument("graph", graph, (Graph, type(None)), "a df.Graph or None")
        _check_argument("config", config, (ConfigProto, type(None)), "a df.ConfigProto or None")
        self._graph = graph if graph is not None else get_default_graph()
        if self._graph._eager:
            raise RuntimeError(
                f"df.Session() is not compatible with eager execution ({_user_location()}): "
                "eager ops run at once and have their values; build a graph inside "
                "`with df.Graph().as_default():` to run it in a Session."
            )
        if config is None:  # the process's options, as `df.config` set them
            config = process_config()
        self._config = config
        executor_type = self._config.experimental.executor_type
        if executor_type not in ("", DEFAULT_EXECUTOR, SINGLE_THREADED_EXECUTOR):
            raise ValueError(
                f"No executor of type {executor_type!r} ({_user_location()}): "
                "ConfigProto.experimental.executor_type is one of '', "
                f"'{DEFAULT_EXECUTOR}' and '{SINGLE_THREADED_EXECUTOR}'."
            )
        single_threaded = executor_type == SINGLE_THREADED_EXECUTOR
        # Lowering functional ops is not a rewrite option: it runs whatever they say, as
        # TensorFlow's does, unless the single-threaded executor runs those ops as calls.
        self._lowering = () if single_threaded else (LOWER_FUNCTIONAL_OPS,)
        self._variable_values: dict[str, Any] = {}
        self._resources: dict[str, Any] = {}  # queues, iterators: see RunContext.resource
        self._random_streams = RandomStreams()
        self._plans: dict[tuple, _Plan] = {}
        self._lock = threading.Lock()
        self._closed = False
        # Stops the runs in progress, and the functions their ops call, on `close`.
        self._cancellation = executor.Cancellation()
        threads = self._config.inter_op_parallelism_threads or (os.cpu_count() or 1)
        self._inter_op_threads = 1 if single_threaded else threads
        self._intra_op_threads = self._config.intra_op_parallelism_threads or (os.cpu_count() or 1)
        self._pool: Optional[executor.DaemonThreadPool] = None
        self._default_context = None
        self._default_graph_context = None
        self._pipeline_of_config = pipeline_for(self._config.graph_options)
        self._logged_placements: set[Operation] = set()
        self._target = target
        self._master = None  # runs the steps on a cluster, for a registered target
        for prefix, make_master in _TARGETS.items():
            if target.startswith(prefix):
                self._master = make_master(target, self._graph)

    # -- lifecycle --------------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self):
        """The Session's graph as a TensorFlow ``GraphDef`` (`Graph.as_graph_def`)."""
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    def close(self) -> None:
        """Releases the thread pool and the variable values; the Session can't run any more.

        Runs still going on in other threads stop with ``errors.CancelledError`` and change no
        variable: no op starts after this, and a compiled loop stops at its next look at the
        clock (an op that is running goes on until it returns)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        self._cancellation.cancel(_CLOSED_DURING_RUN)
        for resource in self._resources.values():
            cancel = getattr(resource, "cancel", None)
            if cancel is not None:
                cancel()  # wakes kernels waiting on it, so that the pool can shut down
        if pool is not None:
            pool.shutdown(wait=True)
        self._variable_values = {}
        self._resources = {}
        self._random_streams = RandomStreams()
        self._plans = {}

    def __enter__(self) -> Session:
        """``with Session(graph=g) as sess:`` makes the session and, as TF1 does, its graph the
        defaults, so ops built in the block go into ``g``."""
        self._default_graph_context = self.graph.as_default()
        self._default_graph_context.__enter__()
        self._default_context = self.as_default()
        self._default_context.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        context, self._default_context = self._default_context, None
        if context is not None:
            context.__exit__(exc_type, exc, tb)
        graph_context, self._default_graph_context = self._default_graph_context, None
        if graph_context is not None:
            graph_context.__exit__(None, None, None)
        self.close()

    def as_default(self):
        """``with sess.as_default():`` makes ``Tensor.eval()``/``Operation.run()`` use it."""
        session = self

        class _DefaultSession:
            def __enter__(self_inner):
                _session_stack().append(session)
                return session

            def __exit__(self_inner, *exc):
                stack = _session_stack()
                if stack and stack[-1] is session:
                    stack.pop()

        return _DefaultSession()

    def _thread_pool(self) -> Optional[executor.DaemonThreadPool]:
        if self._inter_op_threads <= 1:
            return None
        pool = self._pool
        if pool is None:
            with self._lock:
                if self._closed:  # closed since the run began: no new pool that none closes
                    raise _closed_during_run()
                pool = self._pool
                if pool is None:
                    pool = self._pool = executor.DaemonThreadPool(
                        self._inter_op_threads, "dataflow-inter-op"
                    )
        return pool

    def _retire_pool(self, pool: executor.DaemonThreadPool) -> None:
        """Stops using ``pool`` (one of its threads may be blocked in an op of a run that went
        past its deadline): later runs get a new pool, and ``close`` does not wait for the old
        one.  Runs using it still finish: it takes no new work, which they then run inline."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False)

    # -- running ----------------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Computes ``fetches`` (tensors, ops, names, in any nesting of lists, tuples,
        namedtuples and dicts) and returns their values in the same structure.

        ``feed_dict`` may give a value to any tensor that lies outside every while loop: a
        placeholder, a computed tensor (whose op then does not run for it), a tensor in a
        ``cond`` branch (used when the branch is taken), or a loop's result.  A tensor inside a
        while loop (built in its ``cond`` or ``body``, a loop variable as the loop sees it, or
        the result of a loop nested in another) may not be fed: ``ValueError``, as TensorFlow
        1.x raises for the tensors it marks unfeedable.  Nor may such a tensor, or an op
        inside a while loop, be fetched: `errors.InaccessibleTensorError` (a ``ValueError``),
        raised before anything runs, as TensorFlow does for the ops it marks unfetchable.

        Feeding replaces a tensor, not its op: an op with a control consumer still runs for
        it when its outputs are fed (an ``assign`` still assigns), except a fed
        ``Placeholder``, which the feed replaces whole, so that a control edge from it waits
        for the feed, as in TensorFlow."""
        try:
            return self._run(fetches, feed_dict, options, run_metadata, _user_location())
        except Exception as e:
            if not is_traceback_filtering_enabled():
                raise
            raise e.with_traceback(_filtered_traceback(e.__traceback__))  # noqa: B904

    def _run(self, fetches, feed_dict, options, run_metadata, location):
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if self._master is not None:
            return self._master.run(self, fetches, feed_dict, options, location, run_metadata)
        if feed_dict is not None and type(feed_dict) is not dict:
            _check_argument(
                "feed_dict", feed_dict, Mapping, "a dict from tensors to values", location
            )
        if options is not None:
            _check_argument("options", options, RunOptions, "a df.RunOptions", location)
        if run_metadata is not None:
            _check_argument("run_metadata", run_metadata, RunMetadata, "a df.RunMetadata", location)
        flat = nest.flatten(fetches)
        composite = any(composites.is_composite(f) for f in flat)
        if composite:  # IndexedSlices, SparseTensor: fetched as a structure of their tensors
            if any(f is None for f in flat):
                self._as_fetch(None, location)  # the error a None fetch gets
            fetches = composites.expand_for_fetch(fetches)
            flat = nest.flatten(fetches)
            expanded_count = len(flat)
            present = [i for i, f in enumerate(flat) if f is not None]
            flat = [flat[i] for i in present]
        flat_fetches = [self._as_fetch(f, location) for f in flat]
        feed_tensors, feed_values = self._prepare_feeds(feed_dict, location)
        if self._graph._unfeedable_tensors or self._graph._unfetchable_ops:
            _check_allowed(self._graph, flat_fetches, feed_tensors, location)
        pipeline = self._pipeline(options)
        key = (self._graph.plan_version, tuple(flat_fetches), feed_tensors, pipeline)
        plan = self._plans.get(key)
        if plan is None:
            with gc_paused():
                _check_feedable(feed_tensors, location)
                placement = self._place(needed_ops(flat_fetches, feed_tensors))
                plan = None
                if len(set(placement.values())) > 1 and _partitioned_steps is not None:
                    plan = _partitioned_steps(
                        self._graph,
                        flat_fetches,
                        feed_tensors,
                        pipeline,
                        # A fed op is not placed (the feed replaces it): its value stays with
                        # the client, the host's first CPU.
                        lambda op: placement.get(op.name, HOST_DEVICE),
                    )
                if plan is None:
                    plan = self._make_plan(flat_fetches, feed_tensors, pipeline)
                plan.placement = placement
            if isinstance(plan, _Plan):
                _check_fetchable(plan, flat_fetches, location)
            with self._lock:  # threads that lowered it at once all run the first one stored
                if len(self._plans) > 256:
                    self._plans.clear()
                plan = self._plans.setdefault(key, plan)
        values = self._execute(plan, feed_values, options, run_metadata, location)
        flat_results = [None if p is None else values[p] for p in plan.fetch_positions]
        for i, value in enumerate(flat_results):
            if type(value) is np.ndarray:
                flat_results[i] = _as_result(value)
            elif type(value) is VariableRef:
                value = self._variable_values.get(value.key)
                flat_results[i] = value if value is None else _as_result(value)
        if composite:
            results = [None] * expanded_count
            for i, value in zip(present, flat_results):
                results[i] = value
            flat_results = results
        if not nest.is_nested(fetches):
            return flat_results[0]
        return nest.pack_sequence_as(fetches, flat_results)

    def make_callable(self, fetches, feed_list=None, accept_options: bool = False) -> Callable:
        """A function that runs ``fetches`` with positional values for ``feed_list``.  As in
        TensorFlow, it takes ``options=`` and ``run_metadata=`` keywords only when made with
        ``accept_options=True``."""
        location = _user_location()
        _check_argument(
            "feed_list", feed_list, (list, tuple, type(None)), "a list or tuple", location
        )
        feed_list = [self._as_feed_key(k, location) for k in (feed_list or ())]
        for f in nest.flatten(fetches):
            self._as_fetch(f, location)

        def call(*feed_values, options=None, run_metadata=None):
            if not accept_options and (options is not None or run_metadata is not None):
                raise TypeError(
                    "This callable takes no options or run_metadata: make it with "
                    f"make_callable(..., accept_options=True) (callable made at {location})"
                )
            if len(feed_values) != len(feed_list):
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"Expected {len(feed_list)} feed values, got {len(feed_values)} (callable "
                    f"made at {location})",
                )
            feed = dict(zip(feed_list, feed_values))
            return self._run(fetches, feed, options, run_metadata, _user_location())

        return call

    # -- fetches and feeds ------------------------------------------------------------------------
    def _as_fetch(self, fetch, location):
        if fetch is None:
            raise TypeError(f"Fetch argument None has invalid type (at {location}).")
        try:
            element = self._graph.as_graph_element(fetch)
        except (KeyError, ValueError, TypeError) as e:
            # As TensorFlow: an unknown name is a ValueError, a value of a wrong type a TypeError.
            message = e.args[0] if e.args else str(e)
            raise (TypeError if isinstance(e, TypeError) else ValueError)(
                f"Fetch argument {fetch!r} cannot be interpreted as a Tensor or Operation "
                f"of this Session's graph ({message}) (at {location})."
            ) from None
        return element

    def _as_feed_key(self, key, location) -> Tensor:
        try:
            element = self._graph.as_graph_element(key, allow_operation=False)
        except (KeyError, ValueError, TypeError) as e:
            message = e.args[0] if e.args else str(e)
            raise TypeError(  # whatever the reason, as TensorFlow
                f"Cannot interpret feed_dict key {key!r} as a Tensor of this Session's graph "
                f"({message}) (at {location})."
            ) from None
        if not isinstance(element, Tensor):
            raise TypeError(f"The feed_dict key {key!r} is not a Tensor (at {location}).")
        return element

    def _prepare_feeds(self, feed_dict, location):
        if not feed_dict:
            return (), ()
        pairs = []
        items = feed_dict.items()
        if any(type(key) is not Tensor and isinstance(key, tuple) for key in feed_dict):
            items = _flat_feed_items(feed_dict, location)
        for key, value in items:
            if composites.is_composite(key):  # IndexedSlices, SparseTensor: by their parts
                for tensor, part in key._feed_pairs(value):
                    tensor = self._as_feed_key(tensor, location)
                    pairs.append((tensor, _convert_feed(tensor, part, location)))
                continue
            tensor = self._as_feed_key(key, location)
            pairs.append((tensor, _convert_feed(tensor, value, location)))
        if len(pairs) > 1:
            pairs.sort(key=lambda p: p[0].name)
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)

    # -- plans: graph passes, pruning and lowering -------------------------------------------------
    def _pipeline(self, options) -> tuple:
        """The graph passes for a run: ``options.rewrite_options`` when given; else none when
        the run watches tensors, so that every watched tensor is computed as the user's graph
        says (the values are the same either way: passes never change one); else the
        Session's.  Each starts with the lowering of functional ops (``If``) unless the
        single-threaded executor was chosen, which runs them as calls."""
        rewrite = getattr(options, "rewrite_options", None)
        if rewrite is not None:
            return self._lowering + pipeline_for(self._config.graph_options, rewrite)
        if _debug_watcher.requested_watches(options):
            return self._lowering
        return self._lowering + self._pipeline_of_config

    def _place(self, ops: list) -> dict[str, str]:
        """The device of each op of a run (`dataflow.client.placer.place`) and, with
        ``log_device_placement``, a line on stderr for each op this Session has not placed
        before, as TensorFlow prints it (``name: (Type): /job:localhost/.../device:CPU:0``)."""
        placement = place(self._graph, ops, self._config)
        if self._config.log_device_placement:
            lines = []
            for op in ops:
                if op not in self._logged_placements:
                    self._logged_placements.add(op)
                    lines.append(f"{op.name}: ({op.type}): {placement[op.name]}\n")
            if lines:
                sys.stderr.write("".join(lines))
        return placement

    def _make_plan(self, flat_fetches, feed_tensors, pipeline: tuple) -> _Plan:
        return lower_graph(
            self._graph, flat_fetches, feed_tensors, pipeline, self._intra_op_threads
        )

    def _compiled_regions(self, fetches, feed_keys) -> list:
        """The compiled regions (`dataflow.client.compiler.CompiledRegion`) of the plan that runs
        ``fetches`` fed ``feed_keys``, as the compilation mode makes them (``"off"`` is shown
        as ``"auto"``); nothing runs."""
        return self._compile_report(fetches, feed_keys)[0]

    def _compile_report(self, fetches, feed_keys) -> tuple[list, dict]:
        """`_compiled_regions`, and why each other cond and loop of the plan stays
        interpreted (``{"loop <name>": reason}``)."""
        location = _user_location()
        flat_fetches = [self._as_fetch(f, location) for f in nest.flatten(fetches)]
        feed_tensors = [self._as_feed_key(k, location) for k in feed_keys]
        feed_tensors = tuple(sorted(feed_tensors, key=lambda t: t.name))
        plan = self._make_plan(flat_fetches, feed_tensors, self._pipeline(None))
        min_ops = 1 if compiler.mode() == "force" else compiler.AUTO_MIN_OPS
        refusals: dict = {}
        result = compiler.compile_program(plan.executable.program, min_ops, refusals)
        return ([] if result is None else result.regions), refusals

    # -- execution --------------------------------------------------------------------------------
    def _execute(
        self,
        plan: _Plan,
        feed_values,
        options,
        run_metadata,
        location,
        rendezvous=None,
        commit: Optional[Callable] = None,
    ):
        """Runs ``plan`` and commits its variable writes (`_commit`), or hands its `RunContext`
        to ``commit`` when given (a task of a cluster holds it until every task of the step
        succeeded); ``rendezvous`` is the step's, for a partition of a step of several tasks."""
        if run_metadata is None and type(plan) is _Plan:
            plan = _compiled(plan, options)
        timeout_ms = getattr(options, "timeout_in_ms", 0) or self._config.operation_timeout_in_ms
        deadline = time.monotonic() + timeout_ms / 1000.0 if timeout_ms > 0 else None
        stats = executor.RunStats(record_dead=True) if run_metadata is not None else None
        # Tensor watches (dataflow.debug): None unless options.debug_options names some.
        watcher = _debug_watcher.start_watching(
            options, plan.nodes, plan.feed_tensors, self._graph, run_metadata, location
        )
        context = RunContext(self, deadline, rendezvous)
        pool = self._thread_pool()
        values = None
        try:
            values = plan.executable.run(
                feed_values,
                context=context,
                pool=pool,
                deadline=deadline,
                stats=stats,
                observer=watcher,
            )
        except executor.KernelError as e:
            if isinstance(e.cause, executor.DeadlineExceededError):  # seen by a compiled loop
                e.cause.frame, e.cause.iteration = compiler.failed_where(
                    e.cause, e.frame, e.iteration
                )
                raise _deadline_error(e.cause, plan.reference or plan, timeout_ms) from None
            raise _kernel_error(e) from e.cause
        except executor.DeadlineExceededError as e:
            if e.running and pool is not None:
                self._retire_pool(pool)
            raise _deadline_error(e, plan, timeout_ms) from None
        except executor.FetchNotLiveError as e:
            raise _dead_fetch_error(e, plan) from None
        except executor.RunCancelledError as e:
            if e.node_index is None:  # the run as a whole: the Session was closed
                raise errors.CancelledError(None, None, str(e)) from None
            op = _user_op(plan.nodes[e.node_index].tag)
            raise errors.CancelledError(
                None, op, f"{errors.describe_op(op)}{_where(e.frame, e.iteration)}: {e}"
            ) from None
        finally:
            if values is None:
                context.finish()
            if values is None and context.random_draws:
                # A failed run gives its random draws back (`dataflow.client.random_streams`).
                self._random_streams.give_back(context.random_draws)
            if stats is not None:
                _fill_metadata(run_metadata, stats, plan)
            if run_metadata is not None and getattr(options, "output_partition_graphs", False):
                run_metadata.partition_graphs = list(getattr(plan, "partition_graphs", {}).values())
            if watcher is not None:
                watcher.finish(run_metadata)
        try:
            (self._commit if commit is None else commit)(context)
        finally:
            context.finish()
        return values

    def _commit(self, context: RunContext) -> None:
        """Makes the variable writes of a run that succeeded the Session's values."""
        # Closed while the run went on: the variables were released and its writes are
        # dropped, so the run reports that rather than a success that kept nothing.
        writes = context.pending_writes
        if writes:
            with self._lock:
                if self._closed:
                    raise _closed_during_run()
                if context.update_bases:
                    _rebase_updates(writes, context.update_bases, self._variable_values)
                self._variable_values.update(writes)
        elif self._closed:
            raise _closed_during_run()

    def _load_variable(self, variable, value) -> None:
        """Sets ``variable`` to a read-only copy of ``value`` (see `dataflow.ops.variables`)."""
        value = np.array(value, dtype=_dtypes.numpy_dtype(variable.dtype))
        if not variable.shape.is_compatible_with(value.shape):
            raise ValueError(
                f"Cannot load a value of shape {value.shape} into variable '{variable.name}' "
                f"of shape {variable.shape}"
            )
        value.flags.writeable = False
        if self._master is not None:  # the value lives on the variable's task of a cluster
            self._master.load_variable(self, variable, value)
            return
        with self._lock:
            self._variable_values[variable.op.name] = value


class InteractiveSession(Session):
    """A Session that makes itself the default session when it is created (for notebooks)."""

    def __init__(self, target: str = "", graph: Optional[Graph] = None, config=None):
        super().__init__(target, graph, config)
        self._default_context = self.as_default()
        self._default_context.__enter__()

    def close(self) -> None:
        context, self._default_context = self._default_context, None
        if context is not None:
            context.__exit__(None, None, None)
        super().close()


# -- helpers ---------------------------------------------------------------------------------------
def _check_argument(name: str, value, types, expected: str, location=None) -> None:
    """Raises a ``TypeError`` naming the argument ``name``, what it takes, what was given and
    the user's line (``location``, found here when not given), unless ``value`` is an instance
    of ``types``."""
    if not isinstance(value, types):
        raise TypeError(
            f"Argument `{name}` must be {expected}, got {value!r:.200} of type "
            f"{type(value).__name__} (at {location or _user_location()})."
        )


_CLOSED_DURING_RUN = (
    "The Session was closed while the run was in progress; the run was stopped and changed no "
    "variable."
)


def _closed_during_run() -> errors.CancelledError:
    return errors.CancelledError(None, None, _CLOSED_DURING_RUN)


def _rebase_updates(writes: dict, bases: dict, values: dict) -> None:
    """Makes the commit of a run's updates (AssignAdd, AssignSub) apply the run's change to
    the value each variable has now, when another run committed one since this run read it
    (``bases``: the value each update of this run started from, see `RunContext`).  The change
    is ``written - base``; a variable of another kind, or whose shape another run changed,
    takes this run's value, as an assign would."""
    for key, base in bases.items():
        current = values.get(key)
        if current is None or current is base:
            continue
        written = writes[key]
        if (
            written.dtype.kind not in "iufc"
            or current.dtype != written.dtype
            or current.shape != written.shape
            or base.shape != written.shape
        ):
            continue
        with np.errstate(all="ignore"):
            value = np.asarray(current + (written - base), dtype=written.dtype)
        value.flags.writeable = False
        writes[key] = value


def _convert_feed(tensor: Tensor, value, location) -> Any:
    """A feed value as an array of ``tensor``'s dtype, converted as TensorFlow 1.x does:
    ``np.asarray(value, dtype)``, so ``1.5`` fed to an int32 placeholder is ``1`` and ``[1, 0]``
    fed to a bool one is ``[True, False]``, and ``str`` fed to a string one is encoded as UTF-8
    (`dtypes.string_array`); a Python int that the dtype cannot hold is a
    ``TypeError``; a value numpy cannot convert (``"abc"`` for a float) raises numpy's error
    class with the tensor named.  The value is handed to the run read-only."""
    dtype = tensor.dtype
    np_dtype = _dtypes.numpy_dtype(dtype)
    if isinstance(value, Tensor):
        raise TypeError(
            f"The value of a feed cannot be a df.Tensor object (feed for '{tensor.name}', at "
            f"{location}). Acceptable feed values include Python scalars, lists and numpy arrays."
        )
    if isinstance(value, int) and not isinstance(value, bool) and np_dtype.kind in "iub":
        try:
            fits = np_dtype.type(value) == value
        except OverflowError:
            fits = False
        if not fits:
            raise TypeError(
                f"Type of feed value {value} with type {type(value)} is not compatible with "
                f"Tensor type {dtype.name} of '{tensor.name}' (feed at {location}). Try "
                "explicitly setting the type of the feed tensor to a larger type (e.g. int64)."
            )
    if dtype is _dtypes.string:
        try:
            converted = _dtypes.string_array(value)
        except TypeError as e:
            raise TypeError(
                f"Cannot feed value {value!r:.80} to tensor '{tensor.name}' of dtype string "
                f"(created at {tensor.op.location}; feed at {location}): {e}"
            ) from None
    elif isinstance(value, (np.ndarray, np.generic)) and value.dtype == np_dtype:
        converted = np.asarray(value)  # already of the dtype: nothing to convert, nothing to warn
    else:
        try:
            with np.errstate(all="ignore"):
                converted = np.asarray(value, dtype=np_dtype)
        except Exception as e:  # strings for numbers, ragged lists, out-of-range Python ints
            error = ValueError if isinstance(e, ValueError) else TypeError
            raise error(
                f"Cannot feed value {value!r} to tensor '{tensor.name}' of dtype {dtype.name} "
                f"(created at {tensor.op.location}; feed at {location}): {e}"
            ) from None
    static = tensor.shape
    if converted.shape != static.as_tuple() and not static.is_compatible_with(converted.shape):
        raise ValueError(
            f"Cannot feed value of shape {converted.shape} for Tensor '{tensor.name}', which "
            f"has shape {static} (created at {tensor.op.location}; feed at {location})."
        )
    if converted.flags.writeable:
        # The run sees the user's array through a read-only view: no kernel (an in-place one
        # in a graph optimized earlier, a py_func) can write into it.
        converted = converted.view()
        converted.flags.writeable = False
    return converted


def _as_result(value: np.ndarray):
    """What ``run`` hands back for an array: a numpy scalar for 0-d values (as TensorFlow
    does), and a copy of read-only buffers (constants, variables' values), so the caller may
    modify it."""
    if value.ndim == 0:
        return value[()]
    if not value.flags.writeable:
        return value.copy()
    return value


def lower_graph(
    graph: Graph,
    flat_fetches,
    feed_tensors,
    pipeline: tuple,
    intra_op_threads: Optional[int] = None,
) -> _Plan:
    """The plan that runs ``flat_fetches`` of ``graph`` fed ``feed_tensors``: the passes of
    ``pipeline`` run on a copy of the ops needed (the user's graph is never changed), then
    every op is lowered to an executor node and the program is analysed; a kernel may use
    ``intra_op_threads`` threads (None: one per core).  A pipeline that only
    lowers functional ops costs no copy when no op needed is one."""
    if pipeline == (LOWER_FUNCTIONAL_OPS,) and not any(
        op._op_def.extra.get("lowering") for op in needed_ops(flat_fetches, feed_tensors)
    ):
        pipeline = ()
    if pipeline and flat_fetches:
        item = GraphItem.from_graph(graph, flat_fetches, feed_tensors)
        item, reports = PassManager(pipeline).run(item, copy=False)
        flat_fetches, feed_tensors = item.fetches, tuple(item.feeds)
        taken_out = {
            name: f"{report.verb} ({report.name})"
            for report in reports
            for name in report.taken_out
        }
    else:
        taken_out = {}
    needed = needed_ops(flat_fetches, feed_tensors)
    nodes: list[Node] = []
    node_of: dict[Operation, int] = {}
    arg_of: dict[Tensor, int] = {}
    for tensor in feed_tensors:
        arg_of[tensor] = len(nodes)
        nodes.append(Node(name=tensor.name, kind=NodeKind.ARG, tag=tensor.op, inline=True))
    for op in needed:
        node_of[op] = len(nodes)
        nodes.append(None)  # filled below, once every op has its index
    for op in needed:
        try:
            nodes[node_of[op]] = _lower_op(op, node_of, arg_of, True, intra_op_threads)
        except Exception as e:  # a kernel factory that rejects the op's attributes
            op = _user_op(op)
            raise errors.InvalidArgumentError(
                None,
                op,
                f"{errors.describe_op(op)} cannot be prepared to run: {type(e).__name__}: {e}",
            ) from e
    fetch_edges = []
    fetch_positions = []
    targets = []
    for element in flat_fetches:
        if isinstance(element, Operation):
            targets.append(node_of[element])
            fetch_positions.append(None)
            continue
        edge = (
            (arg_of[element], 0)
            if element in arg_of
            else (node_of[element.op], element.value_index)
        )
        fetch_positions.append(len(fetch_edges))
        fetch_edges.append(edge)
    program = Program(
        nodes=nodes,
        arg_nodes=tuple(arg_of[t] for t in feed_tensors),
        fetches=fetch_edges,
        targets=targets,
    )
    try:
        executable = executor.prepare(program)
    except executor.InvalidProgramError as e:
        raise errors.InvalidArgumentError(
            None, _op_of_node(nodes, e.nodes), _explain_invalid_program(e, nodes)
        ) from None
    return _Plan(executable, fetch_positions, feed_tensors, nodes, taken_out)


def _compiled(plan: _Plan, options) -> _Plan:
    """The plan a run without statistics uses: ``plan``'s compiled twin when the compilation
    mode makes one (`dataflow.client.compiler`), else ``plan``; a run that watches tensors keeps the
    interpreter."""
    twin = plan.compiled
    if twin is None:
        with plan.compile_lock:  # one thread compiles; the others wait for its twin
            twin = plan.compiled
            if twin is None:
                plan.runs += 1
                if not compiler.compile_now(plan.runs):
                    return plan
                if _debug_watcher.requested_watches(options):
                    return plan
                with gc_paused():
                    result = compiler.compile_program(plan.executable.program)
                if result is None:
                    plan.compiled = twin = False
                else:
                    plan.compiled = twin = replace(
                        plan,
                        executable=result.executable,
                        nodes=result.nodes,
                        compiled=False,
                        reference=plan,
                        regions=result.regions,
                    )
    if not twin or _debug_watcher.requested_watches(options):
        return plan
    return twin


def run_inside(plan: _Plan, values, context: RunContext) -> list:
    """The values of ``plan``'s fetches, run on ``values`` for its feeds as part of the run
    ``context`` belongs to (a function an op calls, such as a branch of ``If``): it reads and
    writes that run's variables, shares its deadline and runs on the calling thread.  Its
    errors are those a run raises (an `errors.OpError` naming the op inside and its line)."""
    try:
        results = plan.executable.run(
            list(values), context=context, pool=None, deadline=context.deadline
        )
    except executor.KernelError as e:
        raise _kernel_error(e) from e.cause
    except executor.FetchNotLiveError as e:
        raise _dead_fetch_error(e, plan) from None
    return [results[p] for p in plan.fetch_positions]


def _lower_op(
    op: Operation,
    node_of: dict,
    arg_of: dict,
    with_kernel: bool = True,
    intra_op_threads: Optional[int] = None,
) -> Node:
    """The executor node of ``op``; without ``with_kernel``, one that is analysed but never
    run (see `_check_feedable`).  ``intra_op_threads``: the threads one kernel may use (None:
    one per core)."""
    op_def = op._op_def
    inputs = [(arg_of[t], 0) if t in arg_of else (node_of[t.op], t.value_index) for t in op._inputs]
    control_inputs = _control_nodes(op._control_inputs, node_of, arg_of)
    kind = op_def.kind
    node = Node(
        name=op.name,
        kind=kind,
        inputs=inputs,
        control_inputs=control_inputs,
        num_outputs=len(op._outputs),
        tag=op,
        inline=True,
    )
    if kind == NodeKind.OP and not with_kernel:
        node.kernel = _never_run
    elif kind == NodeKind.OP:
        attrs = op.attrs
        if op_def.extra.get("fresh_inputs"):
            # Which inputs are arrays the run makes and nothing else holds (never a fed one):
            # a variable's assign takes those without a copy (`dataflow.ops.variables`).
            attrs = dict(attrs)
            attrs["fresh_inputs"] = tuple(t not in arg_of and is_fresh_value(t) for t in op._inputs)
        if op_def.extra.get("named_by_op"):
            # A TF1 variable without a shared_name stores its value under the op's name.
            attrs = dict(attrs)
            attrs["op_name"] = op.name
        if op_def.extra.get("intra_op_threads"):
            # A kernel that splits its work among threads learns the Session's budget.
            attrs = dict(attrs)
            attrs["intra_op_threads"] = intra_op_threads
        if op_def.extra.get("random_stream"):
            # The op's stream in the Session is named by the op (`dataflow.client.random_streams`).
            attrs = dict(attrs)
            attrs["stream"] = op.name
        node.kernel = op_def.kernel(attrs)
        node.wants_context = op_def.wants_context
        node.fires_on_dead = op_def.fires_on_dead
        node.blocking = op_def.blocking
        node.wants_frame = op_def.wants_frame
        node.asynchronous = op_def.asynchronous
        kept = ref_inputs(op_def, len(op._inputs))
        read = [i for i, t in enumerate(op._inputs) if t._dtype.is_ref_dtype and i not in kept]
        if read:
            node.kernel = _reading_refs(node.kernel, read, op_def.wants_context)
            node.wants_context = True
        if op.attrs.get("_check_numerics"):  # `df.debugging.enable_check_numerics`
            node.kernel = _checking_numerics(node.kernel, op)
        node.inline = op_def.inline
        if node.inline is None and all(
            (t.shape.num_elements() or _INLINE_MAX_ELEMENTS + 1) <= _INLINE_MAX_ELEMENTS
            for t in op._outputs
        ):
            node.inline = True
    elif kind == NodeKind.ENTER:
        node.frame_name = op.attrs["frame_name"]
        node.is_constant = op.attrs["is_constant"]
        node.parallel_iterations = op.attrs["parallel_iterations"]
    return node


def _checking_numerics(kernel: Callable, op: Operation) -> Callable:
    """``kernel``, whose floating-point outputs must hold no Inf or NaN."""
    count = len(op._outputs)
    checked = [i for i, t in enumerate(op._outputs) if t.dtype.is_floating]

    def check_numerics(*args):
        result = kernel(*args)
        values = result if count > 1 else (result,)
        for index in checked:
            value = values[index]
            if isinstance(value, np.ndarray) or np.isscalar(value):
                if not np.isfinite(value).all():
                    raise numerics_error(op, index, value)
        return result

    return check_numerics


def numerics_error(op, index: int, value) -> errors.InvalidArgumentError:
    """The error of `df.debugging.enable_check_numerics` for output ``index`` of ``op``."""
    return errors.InvalidArgumentError(None, op, _numerics_report(op, index, value))


def _numerics_report(op, index: int, value) -> str:
    value = np.asarray(value)
    found = (
        ("-Inf", np.isneginf(value).any()),
        ("+Inf", np.isposinf(value).any()),
        ("NaN", np.isnan(value).any()),
    )
    kinds = [kind for kind, present in found if present]
    # an op run eagerly was made where it ran: the user's line now
    location = _user_location() if op.location.filename == "<eager>" else op.location
    inputs = "".join(f"\n    {i}: {t!r}" for i, t in enumerate(op.inputs))
    return (
        f'\n\n!!! Detected Infinity or NaN in output {index} of graph op "{op.type}" '
        f"(# of outputs: {len(op.outputs)}) !!!\n  dtype: {op.outputs[index].dtype!r}\n"
        f"  shape: {np.shape(value)}\n\n  Input tensors ({len(op.inputs)}):{inputs}\n\n"
        f"  Op created at: {location}\n"
        f" : Tensor had {' and '.join(kinds)} values"
    )


def _reading_refs(kernel: Callable, positions: list, kernel_wants_context: bool) -> Callable:
    """``kernel`` given the values of the references at ``positions``, read when it runs (TF1:
    an op that takes a value reads a reference it is given at that moment)."""

    def run(context, *args):
        args = list(args)
        for i in positions:
            args[i] = context.read_variable(args[i])
        return kernel(context, *args) if kernel_wants_context else kernel(*args)

    return run


def _control_nodes(control_inputs: list, node_of: dict, arg_of: dict) -> list:
    """The nodes that control edges from ``control_inputs`` wait for: an op's node, or the ARG
    nodes of its feeds where they stand in for it (`graph.control_sources`)."""
    if not arg_of:
        return [node_of[c] for c in control_inputs]
    return [
        arg_of[source] if isinstance(source, Tensor) else node_of[source]
        for c in control_inputs
        for source in control_sources(c, arg_of)
    ]


def _never_run(*args):
    raise AssertionError("a node lowered for analysis only was run")


def _check_allowed(graph: Graph, flat_fetches: list, feed_tensors: tuple, location) -> None:
    """Raises for a feed of a tensor ``graph.prevent_feeding`` marked, or a fetch of an op
    ``graph.prevent_fetching`` marked, with TensorFlow's errors and the reason given when the
    mark was made (`cond` and `while_loop` mark what TensorFlow 1.x marks)."""
    for tensor in feed_tensors:
        if not graph.is_feedable(tensor):
            reason = graph._unfeedable_tensors[tensor] or (
                "it has been marked as not feedable (graph.prevent_feeding)"
            )
            raise ValueError(
                f"Tensor '{tensor.name}' may not be fed: {reason} (tensor created at "
                f"{tensor.op.location}; feed at {location})."
            )
    for element in flat_fetches:
        if not graph.is_fetchable(element):
            is_op = isinstance(element, Operation)
            op = element if is_op else element.op
            reason = graph._unfetchable_ops[op] or (
                "Typically this happens when it is defined in another function or code block. "
                "Use return values, explicit Python locals or collections to access it."
            )
            raise errors.InaccessibleTensorError(
                f"{'Operation' if is_op else 'Tensor'} '{element.name}' (created at "
                f"{op.location}) has been marked as not fetchable (run at {location}): {reason}"
            )


def _check_feedable(feed_tensors: tuple, location) -> None:
    """Raises ``ValueError`` for a fed tensor that lies inside a while loop (see `Session.run`).

    Where a tensor lies is the executor's frame analysis of the ops it depends on, as if it
    were fetched and nothing fed, so that loops built by hand from Enter and Exit count as
    ``while_loop``'s do.  A tensor of an op without inputs (a placeholder, a constant) lies
    outside every loop, so the usual feeds cost nothing here; the check runs when a run's plan
    is made, not on every run.
    """
    computed = [t for t in feed_tensors if t.op._inputs or t.op._control_inputs]
    if not computed:
        return
    ops = needed_ops(computed)
    node_of = {op: index for index, op in enumerate(ops)}
    program = Program(
        nodes=[_lower_op(op, node_of, {}, with_kernel=False) for op in ops],
        fetches=[(node_of[t.op], t.value_index) for t in computed],
    )
    try:
        analysis = executor.prepare(program)
    except executor.InvalidProgramError:
        return  # malformed above the feeds, which may cut that part off: the run's plan says
    for tensor in computed:
        frame = analysis.output_frame_of(node_of[tensor.op])
        if frame is not None and frame != "root":
            raise ValueError(
                f"Tensor '{tensor.name}' may not be fed: it lies inside the while loop frame "
                f"'{frame}' (created at {tensor.op.location}; feed at {location}). Only tensors "
                "outside every while loop can be fed, as in TensorFlow 1.x: a loop sees one "
                "value per iteration, and a feed gives one value per run. Feed a tensor the "
                "loop reads from outside, a loop variable's initial value, or the loop's result."
            )


def _check_fetchable(plan: _Plan, flat_fetches: list, location) -> None:
    """Raises `errors.InaccessibleTensorError` for a fetched tensor or op that lies inside a
    while loop, before anything runs (see `Session.run`).

    Where a fetch lies is the executor's frame analysis of the plan, done when the plan is
    made, so that loops built by hand from Enter and Exit count as ``while_loop``'s do; graph
    passes keep a fetch where it was, as they never change what a run returns.
    """
    executable = plan.executable
    fetch_edges = executable.program.fetches
    targets = iter(executable.program.targets)
    for element, position in zip(flat_fetches, plan.fetch_positions):
        if position is None:
            frame = executable.frame_of(next(targets))
        else:
            frame = executable.output_frame_of(fetch_edges[position][0])
        if frame is None or frame == "root":
            continue
        is_op = isinstance(element, Operation)
        built = next(
            (
                f" built at {_user_op(node.tag).location}"
                for node in plan.nodes
                if node.kind == NodeKind.ENTER and node.frame_name == frame
            ),
            "",
        )
        raise errors.InaccessibleTensorError(
            f"{'Operation' if is_op else 'Tensor'} '{element.name}' (created at "
            f"{(element if is_op else element.op).location}) cannot be fetched (run at "
            f"{location}): it lies inside the while loop '{frame}'{built}, which runs it once "
            "per iteration, while a run returns one value. Fetch the loop's results, or make "
            "the value a loop variable and fetch its final value."
        )


def _user_op(op: Operation) -> Operation:
    """The op of the user's graph that ``op`` (an op of the plan) stands for: every error a run
    raises names it, never an op of the graph passes' private copy (a pass records it on the
    ops it copies or creates, see `dataflow.passes`).  Run statistics name the op that ran."""
    return getattr(op, "_original", op)


def _describe_value(value) -> str:
    if isinstance(value, (np.ndarray, np.generic)):
        return f"{value.dtype}{tuple(value.shape)}"
    return type(value).__name__


_INVALID_ARGUMENT_CAUSES = (
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    ZeroDivisionError,
    FloatingPointError,
    ArithmeticError,
)


def _where(frame: Optional[str], iteration: Optional[int]) -> str:
    """`` in loop 'loop', iteration 3 (frame instance loop[iter 0 of root])``, or nothing in
    the root frame."""
    if frame is None or frame == "root":
        return ""
    return f" in loop '{frame.split('[', 1)[0]}', iteration {iteration} (frame instance {frame})"


def _kernel_error(e: executor.KernelError) -> errors.OpError:
    op = _user_op(e.node.tag)
    cause = e.cause
    described, input_values = errors.describe_op(op), e.input_values
    member = getattr(cause, "compiled_step", None)
    if member is not None:  # a member of a compiled region (`dataflow.client.compiler`)
        op = _user_op(member[0])
        described, input_values = errors.describe_op(op), member[1]
    step = getattr(cause, "fused_step", None)
    if step is not None:  # a step of a fused kernel (`dataflow.passes.elementwise_fusion`)
        op, described, input_values = _failed_step(op, *step)
    where = described + _where(*compiler.failed_where(cause, e.frame, e.iteration))
    if isinstance(cause, errors.OpError):
        return type(cause)(None, op, f"{where}: {cause.message}")
    if isinstance(cause, executor.RunCancelledError):  # noticed by a compiled loop
        return errors.CancelledError(None, op, f"{where}: {cause}")
    inputs = ", ".join(_describe_value(v) for v in input_values) or "none"
    message = f"{where} failed: {type(cause).__name__}: {cause}\n  inputs: {inputs}"
    if isinstance(cause, _INVALID_ARGUMENT_CAUSES):
        return errors.InvalidArgumentError(None, op, message)
    return errors.UnknownError(None, op, message)


def _failed_step(fused: Operation, step: list, args: tuple) -> tuple:
    """(op, description, input values) of the failed step ``step`` of the fused kernel that
    stands for ``fused``: the user's op of the step when the graph still has it, else (a graph
    saved after fusion) the step's own record, said to be fused into ``fused``."""
    op_type, _, name, location = step
    user_op = fused.graph._ops_by_name.get(name)
    if user_op is not None and user_op.type == op_type and str(user_op.location) == location:
        return user_op, errors.describe_op(user_op), args
    described = (
        f"op '{name}' ({op_type}) created at {location}, fused into {errors.describe_op(fused)}"
    )
    return fused, described, args


def _deadline_error(e: executor.DeadlineExceededError, plan: _Plan, timeout_ms: int):
    """Names where the run was: the op that fired last, the ops still running (each with the
    loop and iteration it was in) and the lines that built those loops."""
    op = None if e.node_index is None else _user_op(plan.nodes[e.node_index].tag)
    lines = [
        f"The run did not finish within timeout_in_ms={timeout_ms}; it was stopped and no "
        "further op was scheduled. Variables keep their values from before the run."
    ]
    if op is not None:
        where = _where(e.frame, e.iteration)
        lines.append(f"  It was stopped after {errors.describe_op(op)}{where}.")
    elif e.frame is not None and e.frame != "root":
        lines.append(f"  It was stopped while starting iteration {e.iteration} of {e.frame}.")
    frames = [e.frame]
    for node_index, frame, iteration in e.running:
        node = plan.nodes[node_index]
        running = _user_op(node.tag)
        op = op or running
        loop = getattr(node.kernel, "compiled_loop", None)
        if loop is None:
            frames.append(frame)
            lines.append(
                f"  Still running: {errors.describe_op(running)}{_where(frame, iteration)}."
            )
            continue
        instance = f"{loop.frame_name}[iter {iteration} of {frame}]"
        frames.append(instance)
        lines.append(
            f"  Still running: loop '{loop.frame_name}' (frame instance {instance}), compiled "
            "into one function, which stops at its own next check of the deadline."
        )
    loops = {frame.split("[", 1)[0] for frame in frames if frame is not None and frame != "root"}
    for node in (getattr(plan, "reference", None) or plan).nodes:
        if node.kind == NodeKind.ENTER and node.frame_name in loops:
            loops.discard(node.frame_name)
            op = op or _user_op(node.tag)
            lines.append(f"  The loop '{node.frame_name}' was built at {node.tag.location}.")
    if e.running:
        lines.append(
            "  An op that is running cannot be interrupted: it goes on in the background until "
            "it returns, and its results are dropped."
        )
    return errors.DeadlineExceededError(None, op, "\n".join(lines))


def _op_of_node(nodes, indices):
    for i in indices:
        if 0 <= i < len(nodes) and nodes[i] is not None:
            return _user_op(nodes[i].tag)
    return None


def _explain_invalid_program(e, nodes) -> str:
    ops = [
        _user_op(nodes[i].tag)
        for i in e.nodes
        if 0 <= i < len(nodes) and isinstance(nodes[i].tag, Operation)
    ]
    details = [f"  {op.name} ({op.type}) created at {op.location}" for op in ops]
    return "The graph cannot run: " + str(e) + ("\n" + "\n".join(details) if details else "")


def _dead_fetch_error(e: executor.FetchNotLiveError, plan: _Plan) -> errors.OpError:
    """One line per fetch without a value: the op, TF1's own phrase for it (``Retval[i] does
    not have value``, ``i`` the fetch's position in the run's fetch list, which TF1 code and
    tests look for), why it has none, and where it was made."""
    lines = []
    first_op = None
    reference = plan.reference  # of a compiled twin: name the op as the interpreter does
    for position, node_index, state in e.missing:
        if reference is not None:
            node_index = reference.executable.program.fetches[position][0]
        op = _user_op((reference or plan).nodes[node_index].tag)
        first_op = first_op or op
        lines.append(
            f"  {op.name} (Retval[{position}] does not have value): "
            f"{_why_not_live(op, state)} (created at {op.location})"
        )
    return errors.InvalidArgumentError(
        None, first_op, "Fetched tensors hold no value at the end of the run:\n" + "\n".join(lines)
    )


def _why_not_live(op: Operation, state: str) -> str:
    context = getattr(op, "_control_flow_context", None)
    while context is not None:
        branch = getattr(context, "branch", None)
        if branch is not None:
            side = "true" if branch else "false"
            return f"it lies on the untaken ({side}) branch of cond '{context.name}'"
        context = getattr(context, "outer_context", None)
    if state == "dead":
        return "it depends on the untaken branch of a Switch"
    return "it was never produced"


def _fill_metadata(run_metadata: RunMetadata, stats, plan: _Plan) -> None:
    run_metadata.step_stats = _exec_stats(stats.node_records, plan.nodes)
    run_metadata.dead_step_stats = _exec_stats(stats.dead_records, plan.nodes)
    run_metadata.loop_iterations = dict(stats.frame_iterations)
    run_metadata.rewritten_ops = dict(plan.taken_out)


def _exec_stats(records, nodes) -> StepStats:
    step_stats = StepStats()
    for record in records:
        node = nodes[record.node_index]
        op = node.tag
        is_op = isinstance(op, Operation)
        step_stats.append(
            NodeExecStats(
                node.name,
                op.type if is_op else node.kind.name,
                record.start,
                record.end,
                record.thread,
                record.frame,
                record.iteration,
                str(op.location) if is_op else "",
                _user_op(op).name if is_op and node.kind != NodeKind.ARG else node.name,
                record.outputs,
            )
        )
    step_stats.sort(key=lambda s: s.start)
    return step_stats


def _flat_feed_items(feed_dict, location) -> list:
    """The (key, value) pairs of ``feed_dict`` with each key that is a nested structure (a
    tuple of state tensors, as TF1's RNN states) taken apart with its value, part by part, as
    TensorFlow's ``nest.flatten_dict_items`` (which also takes a list in the value where the
    key has a tensor apart; here it is that tensor's value)."""
    items, seen = [], set()
    for key, value in feed_dict.items():
        if isinstance(key, tuple):
            keys = nest.flatten(key)
            try:
                values = nest.flatten_up_to(key, value)
            except ValueError:
                values = nest.flatten(value)
                raise ValueError(
                    f"Could not flatten dictionary. Key had {len(keys)} elements, but value had "
                    f"{len(values)} elements. Key: {keys}, value: {values} (at {location})."
                ) from None
        else:
            keys, values = [key], [value]
        for part, part_value in zip(keys, values):
            name = part.name if isinstance(part, Tensor) else part
            if name in seen:
                raise ValueError(
                    f"Cannot flatten dict because this key is not unique: {name!r} (at {location})."
                )
            seen.add(name)
            items.append((part, part_value))
    return items

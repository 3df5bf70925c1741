"""The options and records of a Session and its runs, as TensorFlow's protos have them:
``ConfigProto`` (and the process's default, ``process_config``), ``RunOptions`` and
``RunMetadata``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..framework.protos import Message
from ..passes.config import GraphOptions, RewriterConfig
from .debug_options import DebugOptions
from .step_stats import StepStats

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
    # The tasks of a cluster a Session uses (``"/job:ps"``, ``"/job:worker/task:0"``): a
    # Session on a cluster waits at its creation only for these tasks' processes and places
    # ops only on them; empty, every task (`dataflow.distribute.task_processes`).
    device_filters: list[str] = field(default_factory=list)


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

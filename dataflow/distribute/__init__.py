"""Partitioned and distributed execution: placement, partitioning, and running the partitions.

The layer sits between a built graph and the executor (``docs/architecture.md``): the placer gives
every op of a run one full device name (`placer.place`); the partitioner (`partition`) cuts the
placed graph into one graph per device, joined by ``_Send``/``_Recv`` pairs (`sendrecv`) that
meet at a rendezvous (`rendezvous`); the partitions run in process (`local`, one executor run
per device) or on the tasks of a Ray cluster.

- `ClusterSpec` (``df.train.ClusterSpec``): the jobs of a cluster and their tasks' addresses.
- `rendezvous`: the interface a step's ``_Send``/``_Recv`` meet through (``send``, ``recv``,
  ``recv_async``, ``abort``, ``aborted_with``; one per step), and its in-process tables.
- `RayCluster` (`ray_cluster`): one Ray actor per task; ``df.Session(cluster.target)`` runs
  steps on it through a master, as TensorFlow 1.x's distributed runtime does.  A step's
  messages go over `links`, TCP connections between the processes that prove a per-task
  secret learnt through Ray.
- `Server` (`task_processes`, ``df.train.Server``): one task of a cluster.  With a ClusterSpec
  of ``host:port`` addresses each task is a process of its own, as TF1 programs start them
  (``--job_name``/``--task_index``): its Server starts the task's actor, named after its
  address, on the Ray cluster whose head `head` finds (``RAY_ADDRESS``, or the head that
  ``python -m dataflow cluster start`` records, or one the first task starts), and
  ``Session(server.target)`` (``grpc://host:port``) runs steps on the tasks' actors.
- Strategies (`strategy`, ``tf.distribute``'s): a step function replicated over devices
  (`MirroredStrategy`, `OneDeviceStrategy`), and `cluster_resolver`: where a cluster's tasks
  are, read from ``TF_CONFIG`` or given.

Invariants: the executor never learns about devices (each partition is an ordinary program; it
only knows the node flags ``_Send``/``_Recv`` declare: ``fires_on_dead``, ``asynchronous``,
``wants_frame``); placement is a pure function of the graph, the ops of the run, the
``ConfigProto`` and the cluster, so a plan and its placement are cached together; ops of one
colocation group always share a device; one rendezvous serves one step, and a value crosses
between partitions only through it.  Ray is optional: nothing here imports it until a
`RayCluster`, or a `Server` or Session of a cluster of processes, is made, so ``import
dataflow`` works without it; a task's variables live in its
actor between runs; the actor of a task process lives exactly as long as that process.

Layer: distribute, above data and below nn and training; it may import those below it.
The placer, which every run uses, is the client's (`dataflow.client.placer`).
"""

from . import cluster_resolver
from .cluster import ClusterSpec
from .ray_cluster import RayCluster
from .strategy import (
    CrossDeviceOps,
    HierarchicalCopyAllReduce,
    InputContext,
    InputReplicationMode,
    MirroredStrategy,
    NcclAllReduce,
    OneDeviceStrategy,
    ReduceOp,
    ReductionToOneDevice,
    ReplicaContext,
    RunOptions,
    Strategy,
    StrategyExtended,
    experimental_set_strategy,
    get_loss_reduction,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)
from .task_processes import Server

__all__ = [
    "ClusterSpec",
    "CrossDeviceOps",
    "HierarchicalCopyAllReduce",
    "InputContext",
    "InputReplicationMode",
    "MirroredStrategy",
    "NcclAllReduce",
    "OneDeviceStrategy",
    "RayCluster",
    "ReduceOp",
    "ReductionToOneDevice",
    "ReplicaContext",
    "RunOptions",
    "Server",
    "Strategy",
    "StrategyExtended",
    "cluster_resolver",
    "experimental_set_strategy",
    "get_loss_reduction",
    "get_replica_context",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
]

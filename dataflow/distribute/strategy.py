"""Distribution strategies (``tf.distribute``): one step's work replicated over devices.

A strategy runs a step function once per *replica*, each on its own device
(``strategy.run(fn, args)``), and combines what the replicas give (``strategy.reduce``).  In a
graph, "running" builds: ``run`` calls ``fn`` once per replica, under that replica's device
scope and `ReplicaContext`, and returns a `PerReplica` of the results; one Session run then
computes every replica, the partitions going in parallel (`dataflow.distribute.local`).

- The default strategy (outside any ``scope()``) has one replica on the default device.
- `OneDeviceStrategy` has one replica on the device it is given.
- `MirroredStrategy` has one replica per device (by default every logical CPU,
  ``df.config.set_logical_device_configuration``).  Variables made in its scope are created
  once and read by every replica: they hold the same values the mirrored copies of
  TensorFlow's do, because every update goes through one merged path.

Replicas meet in ``ReplicaContext.merge_call``: each replica's function runs on its own thread,
one at a time, until it calls ``merge_call``; when all have, the merge function runs once, in
cross-replica context, with a `PerReplica` of their arguments, and each replica continues with
its result.  ``Optimizer.apply_gradients`` called in a replica merges this way: the replicas'
gradients are summed, as TensorFlow's all-reduce does, and applied once.

Invariants: outside ``run`` the context is cross-replica; inside, `get_replica_context` is
the replica's; replica functions never build at the same time (one thread at a time, in
replica order), so a graph built under a strategy is the same on every call.
"""

from __future__ import annotations

import contextlib
import enum
import threading
from typing import Any, Optional

from ..framework import nest
from ..framework.graph import Tensor, _user_location, get_default_graph

__all__ = [
    "CrossDeviceOps",
    "HierarchicalCopyAllReduce",
    "InputContext",
    "InputReplicationMode",
    "MirroredStrategy",
    "NcclAllReduce",
    "OneDeviceStrategy",
    "PerReplica",
    "ReduceOp",
    "ReductionToOneDevice",
    "ReplicaContext",
    "RunOptions",
    "Strategy",
    "StrategyExtended",
    "experimental_set_strategy",
    "get_loss_reduction",
    "get_replica_context",
    "get_strategy",
    "has_strategy",
    "in_cross_replica_context",
    "merged_apply_gradients",
    "replica_merging",
]


class ReduceOp(enum.Enum):
    """How values of the replicas combine: their sum or their mean."""

    SUM = "SUM"
    MEAN = "MEAN"


class InputReplicationMode(enum.Enum):
    """How an input function's pipelines map to replicas: one per worker, or one per replica."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class InputContext:
    """What an input function needs to know to make its part of the input: how many input
    pipelines there are, which one it is, and how many replicas consume them."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """``global_batch_size`` divided among the replicas; it must divide evenly."""
        if global_batch_size % self._num_replicas_in_sync:
            raise ValueError(
                f"The `global_batch_size` {global_batch_size!r} is not divisible by "
                f"`num_replicas_in_sync` {self._num_replicas_in_sync!r}"
            )
        return global_batch_size // self._num_replicas_in_sync

    def __repr__(self) -> str:
        return (
            f"tf.distribute.InputContext(input pipeline id {self._input_pipeline_id}, "
            f"total: {self._num_input_pipelines})"
        )


class RunOptions:
    """Options of ``Strategy.run`` for TPUs (dynamic batch sizes, bucketised shapes, XLA);
    replicas on CPUs take every shape as it comes, so the defaults are all there is."""

    def __init__(
        self,
        experimental_enable_dynamic_batch_size=True,
        experimental_bucketizing_dynamic_shape=False,
        experimental_xla_options=None,
    ):
        if experimental_bucketizing_dynamic_shape or experimental_xla_options is not None:
            raise ValueError(
                "RunOptions: bucketizing dynamic shapes and XLA options are for TPU replicas"
            )
        self.experimental_enable_dynamic_batch_size = experimental_enable_dynamic_batch_size
        self.experimental_bucketizing_dynamic_shape = experimental_bucketizing_dynamic_shape
        self.experimental_xla_options = experimental_xla_options


class PerReplica:
    """One value per replica, in replica order (``strategy.experimental_local_results``)."""

    def __init__(self, values):
        self.values = tuple(values)

    def __repr__(self) -> str:
        parts = ", ".join(f"{i}: {v!r}" for i, v in enumerate(self.values))
        return f"PerReplica:{{{parts}}}"


# -- the current strategy and replica, per thread --------------------------------------------------
class _Context(threading.local):
    def __init__(self):
        self.strategies: list = []  # entered scopes, innermost last
        self.replica: Optional[ReplicaContext] = None


_CONTEXT = _Context()
_DEFAULT_GLOBAL: list = []  # experimental_set_strategy's strategy, when one is set


def get_strategy() -> Strategy:
    """The strategy of the innermost ``scope()`` entered (or of the replica this code runs
    in), else the default strategy."""
    if _CONTEXT.replica is not None:
        return _CONTEXT.replica.strategy
    if _CONTEXT.strategies:
        return _CONTEXT.strategies[-1]
    return _DEFAULT_GLOBAL[-1] if _DEFAULT_GLOBAL else _default_strategy()


def has_strategy() -> bool:
    """Whether a strategy other than the default one is in effect."""
    return not isinstance(get_strategy(), _DefaultStrategy)


def in_cross_replica_context() -> bool:
    """Whether this code runs outside any replica (in a strategy's scope, or in none)."""
    return _CONTEXT.replica is None


def get_replica_context() -> Optional[ReplicaContext]:
    """The replica this code runs in; the default strategy's one replica outside any scope;
    None in cross-replica context (inside a scope, outside ``run``), as in TensorFlow."""
    if _CONTEXT.replica is not None:
        return _CONTEXT.replica
    if _CONTEXT.strategies or _DEFAULT_GLOBAL:
        return None
    return ReplicaContext(_default_strategy(), 0)


def experimental_set_strategy(strategy) -> None:
    """Makes ``strategy`` current everywhere until it is set again (None: the default)."""
    if _CONTEXT.strategies:
        raise RuntimeError(
            "experimental_set_strategy cannot be called inside a strategy's scope "
            f"({_user_location()})"
        )
    _DEFAULT_GLOBAL.clear()
    if strategy is not None:
        _DEFAULT_GLOBAL.append(strategy)


def get_loss_reduction() -> ReduceOp:
    """How the replicas' losses combine: SUM, which TF1's optimizers expect of a loss each
    replica computes over its own part of the batch (TensorFlow answers MEAN only for the
    Estimator's scaled losses)."""
    return ReduceOp.SUM


# -- replicas --------------------------------------------------------------------------------------
class ReplicaContext:
    """The replica a step function runs in: its index, the strategy, and how replicas meet."""

    def __init__(self, strategy, replica_id_in_sync_group):
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group
        self._meeting: Optional[_Meeting] = None

    @property
    def strategy(self) -> Strategy:
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self):
        from ..ops.constant_op import constant

        return constant(self._replica_id, name="replica_id_in_sync_group")

    @property
    def devices(self) -> tuple:
        return (self._strategy.extended.worker_devices[self._replica_id],)

    def merge_call(self, merge_fn, args=(), kwargs=None):
        """Runs ``merge_fn(strategy, *args, **kwargs)`` once for all replicas, in
        cross-replica context, with each argument a `PerReplica` of the replicas' values; each
        replica gets its result."""
        kwargs = kwargs or {}
        if self._meeting is None:  # one replica: merge at once
            previous, _CONTEXT.replica = _CONTEXT.replica, None
            try:
                return merge_fn(self._strategy, *args, **kwargs)
            finally:
                _CONTEXT.replica = previous
        return self._meeting.merge(self._replica_id, merge_fn, args, kwargs)

    def all_reduce(self, reduce_op, value):
        """The ``reduce_op`` of ``value`` (a nest of tensors) over the replicas, in each."""
        reduce_op = _reduce_op(reduce_op)

        from ..ops.array_ops import identity

        def merge(strategy, per_replica):
            return strategy.extended.reduce_to(reduce_op, per_replica, None)

        # each replica takes its own copy of the result, on its device
        return nest.map_structure(lambda v: identity(self.merge_call(merge, args=(v,))), value)


class _Meeting:
    """Runs the replicas' functions on threads, one at a time in replica order, and meets
    them at ``merge_call``."""

    def __init__(self, strategy, count: int):
        self._strategy = strategy
        self._count = count
        self._turn = threading.Condition()
        self._running = 0  # the replica whose thread may build now
        self._waiting: dict[int, tuple] = {}  # replica -> (merge_fn, args, kwargs)
        self._results: dict[int, Any] = {}
        self._done: set[int] = set()
        self._errors: list = []

    def run(self, fn, per_replica_args) -> list:
        graph = get_default_graph()
        outputs: list = [None] * self._count
        threads = []
        for replica in range(self._count):
            context = ReplicaContext(self._strategy, replica)
            context._meeting = self
            thread = threading.Thread(
                target=self._replica_thread,
                args=(replica, context, graph, fn, per_replica_args[replica], outputs),
                daemon=True,
            )
            threads.append(thread)
            thread.start()
        with self._turn:
            while len(self._done) < self._count and not self._errors:
                if len(self._waiting) + len(self._done) == self._count and self._waiting:
                    self._merge_waiting()
                self._turn.wait()
        for thread in threads:
            thread.join()
        if self._errors:
            raise self._errors[0]
        return outputs

    def _replica_thread(self, replica, context, graph, fn, arguments, outputs):
        args, kwargs = arguments
        try:
            self._wait_for_turn(replica)
            _CONTEXT.replica = context
            device = self._strategy.extended.worker_devices[replica]
            with graph.as_default(), graph.device(device), _replica_scopes(replica):
                outputs[replica] = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the caller of run
            with self._turn:
                self._errors.append(e)
                self._turn.notify_all()
            return
        finally:
            _CONTEXT.replica = None
        with self._turn:
            self._done.add(replica)
            self._next_turn()

    def _wait_for_turn(self, replica):
        with self._turn:
            while self._running != replica and not self._errors:
                self._turn.wait()
            if self._errors:
                raise RuntimeError("another replica failed")

    def _next_turn(self):
        """Gives the turn to the next replica that has neither finished nor reached the
        merge, and wakes everyone (the caller of run decides when to merge)."""
        pending = [r for r in range(self._count) if r not in self._done and r not in self._waiting]
        self._running = pending[0] if pending else -1
        self._turn.notify_all()

    def merge(self, replica, merge_fn, args, kwargs):
        with self._turn:
            self._waiting[replica] = (merge_fn, args, kwargs)
            self._next_turn()
            while replica not in self._results and not self._errors:
                self._turn.wait()
            if self._errors:
                raise RuntimeError("another replica failed")
            self._wait_until_running(replica)
            return self._results.pop(replica)

    def _wait_until_running(self, replica):
        while self._running != replica and not self._errors:
            self._turn.wait()

    def _merge_waiting(self):
        """All replicas wait in merge_call: run the merge once, in cross-replica context on
        the calling thread, and hand each replica its result."""
        calls = [self._waiting[r] for r in sorted(self._waiting)]
        merge_fn = calls[0][0]
        args = _regroup([c[1] for c in calls])
        kwargs = _regroup([c[2] for c in calls])
        try:
            result = merge_fn(self._strategy, *args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the caller of run
            self._errors.append(e)
            self._turn.notify_all()
            return
        for replica in sorted(self._waiting):
            self._results[replica] = _select(result, replica)
        self._waiting.clear()
        self._running = min(self._results)
        self._turn.notify_all()


@contextlib.contextmanager
def _replica_scopes(replica: int):
    """Replica 0 builds as it would alone; a later replica's ops go under ``replica_<i>/`` and
    its ``get_variable`` calls (layers') reuse the variables replica 0 made, so every replica
    computes with the same variables."""
    if replica == 0:
        yield
        return
    from ..ops.variable_scope import get_variable_scope, variable_scope

    graph = get_default_graph()
    with variable_scope(get_variable_scope(), reuse=True), graph.name_scope(f"replica_{replica}"):
        yield


def replica_merging() -> Optional[ReplicaContext]:
    """The replica this code runs in when it is one of several (an update must merge)."""
    replica = _CONTEXT.replica
    return replica if replica is not None and replica._meeting is not None else None


def merged_apply_gradients(strategy, grads_and_vars, global_step, name, optimizer):
    """The merge of ``optimizer.apply_gradients`` (replica 0's optimizer, as TensorFlow's)
    called in replicas: each variable's gradients summed over the replicas, applied once."""
    from ..framework.indexed_slices import IndexedSlices
    from ..ops.array_ops import concat

    summed = []
    for grad, var in grads_and_vars:
        if isinstance(grad, PerReplica):
            parts = [g for g in grad.values if g is not None]
            if not parts:
                grad = None
            elif all(isinstance(g, IndexedSlices) for g in parts):
                grad = IndexedSlices(
                    concat([g.values for g in parts], 0),
                    concat([g.indices for g in parts], 0),
                    parts[0].dense_shape,
                )
            else:
                grad = strategy.extended.reduce_to(ReduceOp.SUM, PerReplica(parts), None)
        summed.append((grad, var))
    return optimizer.apply_gradients(summed, global_step=global_step, name=name)


def _regroup(values_per_replica: list):
    """One structure whose leaves are `PerReplica` of the replicas' leaves (a leaf the same
    object in every replica stays itself)."""
    first = values_per_replica[0]
    flats = [nest.flatten(v) for v in values_per_replica]
    leaves = []
    for parts in zip(*flats):
        same = all(p is parts[0] for p in parts)
        leaves.append(parts[0] if same else PerReplica(parts))
    return nest.pack_sequence_as(first, leaves)


def _select(structure, replica: int):
    """``structure`` with each `PerReplica` replaced by the value of ``replica``."""
    if isinstance(structure, PerReplica):
        return structure.values[replica]
    return nest.map_structure(
        lambda v: v.values[replica] if isinstance(v, PerReplica) else v, structure
    )


def _reduce_op(reduce_op) -> ReduceOp:
    if isinstance(reduce_op, ReduceOp):
        return reduce_op
    try:
        return ReduceOp(str(reduce_op).upper())
    except ValueError:
        raise ValueError(f"reduce_op must be SUM or MEAN, got {reduce_op!r}") from None


# -- combining values across replicas --------------------------------------------------------------
class CrossDeviceOps:
    """Reduces replicas' values onto a device: their sum (or mean) on ``destinations`` (or on
    the first replica's device when None).  On the CPUs of one host every algorithm below
    computes the same sum; they differ in how accelerators move the parts."""

    def _device(self, destinations, per_replica) -> Optional[str]:
        if destinations is None:
            return None
        if isinstance(destinations, str):
            return destinations
        device = getattr(destinations, "device", None)
        return device or None

    def reduce(self, reduce_op, per_replica_value, destinations, options=None):
        from ..ops.math_ops import add_n, realdiv

        reduce_op = _reduce_op(reduce_op)
        values = (
            per_replica_value.values
            if isinstance(per_replica_value, PerReplica)
            else (per_replica_value,)
        )
        graph = get_default_graph()
        device = self._device(destinations, per_replica_value)
        with graph.device(device) if device else contextlib.nullcontext():
            total = values[0] if len(values) == 1 else add_n(list(values))
            if reduce_op is ReduceOp.MEAN and len(values) > 1:
                total = realdiv(total, float(len(values)))
        return total

    def batch_reduce(self, reduce_op, value_destination_pairs, options=None):
        return [self.reduce(reduce_op, v, d, options) for v, d in value_destination_pairs]

    def broadcast(self, tensor, destinations):
        return tensor


class ReductionToOneDevice(CrossDeviceOps):
    """Sums the replicas' values on one device (``reduce_to_device``, else the destination),
    with ``accumulation_fn`` (default ``add_n``)."""

    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn

    def reduce(self, reduce_op, per_replica_value, destinations, options=None):
        if self.accumulation_fn is None:
            device = self.reduce_to_device or destinations
            return super().reduce(reduce_op, per_replica_value, device, options)
        from ..ops.math_ops import realdiv

        values = list(getattr(per_replica_value, "values", (per_replica_value,)))
        total = self.accumulation_fn(values)
        if _reduce_op(reduce_op) is ReduceOp.MEAN and len(values) > 1:
            total = realdiv(total, float(len(values)))
        return total


class _AllReduce(CrossDeviceOps):
    def __init__(self, num_packs=1):
        if num_packs < 0:
            raise ValueError(f"num_packs must be non-negative, got {num_packs}")
        self.num_packs = num_packs


class HierarchicalCopyAllReduce(_AllReduce):
    """The hierarchical-copy all-reduce of multi-GPU hosts; the same sums on CPUs."""


class NcclAllReduce(_AllReduce):
    """NCCL's all-reduce of GPUs; the same sums on CPUs."""


# -- strategies ------------------------------------------------------------------------------------
class StrategyExtended:
    """The parts of a strategy that libraries (optimizers, layers) use."""

    def __init__(self, container_strategy):
        self._container_strategy_weakref = container_strategy
        self._devices: tuple = (None,)
        self._cross_device_ops: CrossDeviceOps = ReductionToOneDevice()

    @property
    def worker_devices(self) -> tuple:
        return self._devices

    @property
    def parameter_devices(self) -> tuple:
        return self._devices

    @property
    def non_slot_devices(self) -> tuple:
        return self._devices[:1]

    @property
    def experimental_require_static_shapes(self) -> bool:
        return False

    @property
    def experimental_between_graph(self) -> bool:
        return False

    @property
    def experimental_should_init(self) -> bool:
        return True

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_save_summary(self) -> bool:
        return True

    def call_for_each_replica(self, fn, args=(), kwargs=None):
        """``fn`` once per replica (arguments that are `PerReplica` give each its value); a
        `PerReplica` of the results, or the one result of a single replica."""
        strategy = self._container_strategy_weakref
        kwargs = kwargs or {}
        count = len(self._devices)
        per_replica_args = [(_select(args, r), _select(kwargs, r)) for r in range(count)]
        if count == 1:
            context = ReplicaContext(strategy, 0)
            previous, _CONTEXT.replica = _CONTEXT.replica, context
            graph = get_default_graph()
            device = self._devices[0]
            try:
                with graph.device(device) if device else contextlib.nullcontext():
                    return fn(*per_replica_args[0][0], **per_replica_args[0][1])
            finally:
                _CONTEXT.replica = previous
        outputs = _Meeting(strategy, count).run(fn, per_replica_args)
        return _regroup(outputs)

    def reduce_to(self, reduce_op, value, destinations, options=None):
        return self._cross_device_ops.reduce(reduce_op, value, destinations, options)

    def batch_reduce_to(self, reduce_op, value_destination_pairs, options=None):
        return self._cross_device_ops.batch_reduce(reduce_op, value_destination_pairs, options)

    def broadcast_to(self, tensor, destinations):
        return tensor

    def update(self, var, fn, args=(), kwargs=None, group=True):
        """``fn(var, *args, **kwargs)`` in cross-replica context: variables are held once, so
        the update runs once."""
        return fn(var, *args, **(kwargs or {}))

    def update_non_slot(self, colocate_with, fn, args=(), kwargs=None, group=True):
        return fn(*args, **(kwargs or {}))

    def read_var(self, v):
        return v.read_value() if hasattr(v, "read_value") else v

    def value_container(self, value):
        return value

    def colocate_vars_with(self, colocate_with_variable):
        return get_default_graph().colocate_with(colocate_with_variable)

    def variable_created_in_scope(self, v) -> bool:
        return any(v is mine for mine in self._container_strategy_weakref._variables)

    def experimental_make_numpy_dataset(self, numpy_input, session=None):
        from ..data import Dataset

        return Dataset.from_tensor_slices(numpy_input)


class Strategy:
    """A way of running one step over several replicas (``tf.distribute.Strategy``)."""

    def __init__(self, extended):
        self._extended = extended
        self._variables: list = []

    @property
    def extended(self) -> StrategyExtended:
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        return len(self._extended.worker_devices)

    @property
    def cluster_resolver(self):
        return None

    @contextlib.contextmanager
    def scope(self):
        """Makes this the strategy in effect; variables made inside are this strategy's."""
        from ..framework.graph_keys import GraphKeys

        if _CONTEXT.replica is not None and _CONTEXT.replica.strategy is not self:
            raise RuntimeError(f"Mixing different strategies is not allowed ({_user_location()})")
        graph = get_default_graph()
        before = set(map(id, graph.get_collection(GraphKeys.GLOBAL_VARIABLES)))
        _CONTEXT.strategies.append(self)
        try:
            yield self
        finally:
            _CONTEXT.strategies.pop()
            made = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
            self._variables.extend(v for v in made if id(v) not in before)

    def run(self, fn, args=(), kwargs=None, options=None):
        """``fn(*args, **kwargs)`` once per replica, each on its device (see the module)."""
        if options is not None and not isinstance(options, RunOptions):
            raise TypeError(f"Strategy.run: options must be a RunOptions, got {options!r}")
        with self.scope():
            return self._extended.call_for_each_replica(fn, args, kwargs)

    experimental_run_v2 = run

    def reduce(self, reduce_op, value, axis=None):
        """The ``reduce_op`` of ``value`` (a `PerReplica`, or one value) over the replicas,
        each replica's value first reduced along ``axis`` when given."""
        from ..ops.array_ops import shape
        from ..ops.math_ops import cast, realdiv, reduce_mean, reduce_sum

        reduce_op = _reduce_op(reduce_op)
        values = value.values if isinstance(value, PerReplica) else (value,)
        if axis is None:
            return self._extended.reduce_to(reduce_op, PerReplica(values), None)
        if reduce_op is ReduceOp.SUM:
            return self._extended.reduce_to(
                ReduceOp.SUM, PerReplica([reduce_sum(v, axis) for v in values]), None
            )
        if len(values) == 1:
            return reduce_mean(values[0], axis)
        # a mean over all replicas' elements: their sums over the number of elements
        sums = self._extended.reduce_to(
            ReduceOp.SUM, PerReplica([reduce_sum(v, axis) for v in values]), None
        )
        counts = [cast(shape(v)[axis], sums.dtype) for v in values]
        return realdiv(sums, self._extended.reduce_to(ReduceOp.SUM, PerReplica(counts), None))

    def experimental_local_results(self, value) -> tuple:
        """The replicas' values of ``value``, in replica order."""
        if isinstance(value, PerReplica):
            return value.values
        return (value,)

    unwrap = experimental_local_results

    def group(self, value, name=None):
        """One op that runs every replica's part of ``value``."""
        from ..ops.misc_ops import group

        parts = [v for leaf in nest.flatten(value) for v in self.experimental_local_results(leaf)]
        return group(*parts, name=name)

    def colocate_vars_with(self, colocate_with_variable):
        return self._extended.colocate_vars_with(colocate_with_variable)

    def update_config_proto(self, config_proto):
        """``config_proto`` with the logical CPUs the replicas need."""
        import copy

        config = copy.deepcopy(config_proto)
        cpus = [d for d in self._extended.worker_devices if d and "CPU" in d.upper()]
        if cpus:
            config.device_count = dict(config.device_count)
            config.device_count["CPU"] = max(config.device_count.get("CPU", 1), len(cpus))
        return config

    def configure(self, session_config=None, cluster_spec=None, task_type=None, task_id=None):
        if cluster_spec is not None:
            raise ValueError(
                f"{type(self).__name__} runs on one host's devices; it takes no cluster_spec"
            )

    # -- input ----------------------------------------------------------------------------------
    def experimental_distribute_dataset(self, dataset, options=None):
        """``dataset`` (of global batches) as a `DistributedDataset` whose iterator gives a
        `PerReplica` of each batch's parts, one consecutive part per replica."""
        return DistributedDataset(dataset, self)

    def make_dataset_iterator(self, dataset):
        """An initializable iterator over ``dataset``'s batches split among the replicas."""
        return DistributedDataset(dataset, self).make_initializable_iterator()

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """Each replica's dataset from ``dataset_fn(InputContext)``, one input pipeline."""
        context = InputContext(1, 0, self.num_replicas_in_sync)
        return DistributedDataset(dataset_fn(context), self, split=False)

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def make_input_fn_iterator(self, input_fn, replication_mode=InputReplicationMode.PER_WORKER):
        if replication_mode is not InputReplicationMode.PER_WORKER:
            raise ValueError("make_input_fn_iterator takes PER_WORKER replication on one host")
        context = InputContext(1, 0, self.num_replicas_in_sync)
        return DistributedDataset(
            input_fn(context), self, split=False
        ).make_initializable_iterator()

    def experimental_make_numpy_dataset(self, numpy_input, session=None):
        return self._extended.experimental_make_numpy_dataset(numpy_input, session)

    def experimental_run(self, fn, input_iterator=None):
        """``run(fn)`` on the next element of ``input_iterator``."""
        if input_iterator is None:
            return self.run(fn)
        return self.run(fn, args=(input_iterator.get_next(),))


class DistributedDataset:
    """A dataset whose elements are split among a strategy's replicas (or, with
    ``split=False``, given whole to each)."""

    def __init__(self, dataset, strategy, split: bool = True):
        self._dataset = dataset
        self._strategy = strategy
        self._split = split

    def make_initializable_iterator(self):
        return DistributedIterator(self._dataset.make_initializable_iterator(), self)

    def make_one_shot_iterator(self):
        return DistributedIterator(self._dataset.make_one_shot_iterator(), self)

    def _parts(self, element):
        count = self._strategy.num_replicas_in_sync
        if count == 1:
            return element
        if not self._split:
            return PerReplica([element] * count)
        from ..ops.array_ops import shape

        def split(t):
            if not isinstance(t, Tensor):
                return PerReplica([t] * count)
            rows = shape(t)[0]
            bounds = [(rows * i) // count for i in range(count + 1)]
            return PerReplica([t[bounds[i] : bounds[i + 1]] for i in range(count)])

        flat = [split(t) for t in nest.flatten(element)]
        return _regroup(
            [nest.pack_sequence_as(element, [p.values[r] for p in flat]) for r in range(count)]
        )


class DistributedIterator:
    """An iterator of a `DistributedDataset`: ``get_next`` gives a `PerReplica` of parts."""

    def __init__(self, iterator, dataset: DistributedDataset):
        self._iterator = iterator
        self._dataset = dataset

    @property
    def initializer(self):
        return self._iterator.initializer

    def initialize(self):
        return [self._iterator.initializer]

    def get_next(self, name=None):
        return self._dataset._parts(self._iterator.get_next())


class _DefaultExtended(StrategyExtended):
    pass


class _DefaultStrategy(Strategy):
    """The strategy in effect when no other is: one replica, on the default device."""

    def __init__(self):
        super().__init__(_DefaultExtended(self))

    @contextlib.contextmanager
    def scope(self):
        yield self


_DEFAULT = []


def _default_strategy() -> _DefaultStrategy:
    if not _DEFAULT:
        _DEFAULT.append(_DefaultStrategy())
    return _DEFAULT[0]


class OneDeviceStrategy(Strategy):
    """One replica, on ``device`` (its variables too)."""

    def __init__(self, device):
        from ..framework.device import canonical_name

        extended = StrategyExtended(self)
        extended._devices = (canonical_name(device),)
        super().__init__(extended)

    @contextlib.contextmanager
    def scope(self):
        graph = get_default_graph()
        with super().scope(), graph.device(self._extended.worker_devices[0]):
            yield self


class MirroredStrategy(Strategy):
    """One replica per device of ``devices`` (by default every logical CPU), synchronously:
    the replicas' gradients are summed and applied once (see the module docstring)."""

    def __init__(self, devices=None, cross_device_ops=None):
        from ..client.config import list_logical_devices
        from ..framework.device import canonical_name

        if devices is None:
            devices = [d.name for d in list_logical_devices("CPU")]
        devices = [canonical_name(d) for d in devices]
        if not devices:
            raise ValueError("MirroredStrategy needs at least one device")
        if len(set(devices)) != len(devices):
            raise ValueError(f"MirroredStrategy: devices repeat in {devices}")
        if cross_device_ops is not None and not isinstance(cross_device_ops, CrossDeviceOps):
            raise TypeError(f"cross_device_ops must be a CrossDeviceOps, got {cross_device_ops!r}")
        extended = StrategyExtended(self)
        extended._devices = tuple(devices)
        extended._cross_device_ops = cross_device_ops or ReductionToOneDevice()
        super().__init__(extended)

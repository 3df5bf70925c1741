"""``train.replica_device_setter``: a device function for parameter-server training.

Inside ``with df.device(replica_device_setter(ps_tasks=2)):`` every variable (an op whose type
is in ``ps_ops``) goes to a parameter-server task, chosen by ``ps_strategy`` (round-robin over
the tasks by default, one turn per variable, as TensorFlow 1.x), and every other op to the
worker device.  What the op already asks for wins field by field (``merge_devices``), so an
inner ``df.device("/gpu:0")`` keeps its device type on either job.  The placer later puts a
variable's reads and updates beside it (`placer`), whatever device they were built with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

from ..framework.device import DeviceSpec
from .cluster import ClusterSpec

# TensorFlow's op types that hold state a parameter server keeps.
STANDARD_PS_OPS = (
    "Variable",
    "VariableV2",
    "AutoReloadVariable",
    "MutableHashTable",
    "MutableHashTableV2",
    "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable",
    "MutableDenseHashTableV2",
    "VarHandleOp",
    "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp",
    "ResourceConditionalAccumulator",
    "DecisionTreeResource",
)


class _RoundRobinStrategy:
    """Gives each variable the next parameter-server task in turn."""

    def __init__(self, num_tasks: int):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op) -> int:
        task = self._next_task
        self._next_task = (task + 1) % self._num_tasks
        return task


def replica_device_setter(
    ps_tasks: int = 0,
    ps_device: str = "/job:ps",
    worker_device: str = "/job:worker",
    merge_devices: bool = True,
    cluster=None,
    ps_ops: Optional[Sequence[str]] = None,
    ps_strategy: Optional[Callable] = None,
) -> Optional[Callable]:
    """A device function for ``df.device`` (``tf.compat.v1.train.replica_device_setter``), or
    None when there is no parameter server: ``ps_tasks`` is 0 and ``cluster`` (a
    `ClusterSpec` or its dict) has no job named as ``ps_device``'s."""
    if cluster is not None:
        jobs = cluster.as_dict() if isinstance(cluster, ClusterSpec) else cluster
        ps_job = DeviceSpec.from_string(ps_device).job or "ps"
        if ps_job not in jobs or jobs[ps_job] is None:
            return None
        ps_tasks = len(jobs[ps_job])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    elif not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    ps_spec = DeviceSpec.from_string(ps_device or "")
    worker_spec = DeviceSpec.from_string(worker_device or "")
    ps_op_types = frozenset(ps_ops)

    def device_function(op) -> str:
        if not merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        if ps_device and op.type in ps_op_types:
            spec = ps_spec
            if spec.job and (not current.job or current.job == spec.job):
                spec = spec.replace(task=ps_strategy(op))
            return spec.make_merged_spec(current).to_string()
        return worker_spec.make_merged_spec(current).to_string()

    return device_function

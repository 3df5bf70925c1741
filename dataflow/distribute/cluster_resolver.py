"""Cluster resolvers (``tf.distribute.cluster_resolver``): where a cluster's tasks are, and
which one this process is, read from what launched it.

- `SimpleClusterResolver`: given outright (a `ClusterSpec`, this task, its master).
- `TFConfigClusterResolver`: from the ``TF_CONFIG`` environment variable, the JSON that
  launchers (and TensorFlow's own docs) set for each process:
  ``{"cluster": {"worker": ["host:port", ...]}, "task": {"type": "worker", "index": 0}}``.
- `UnionResolver`: the jobs of several resolvers together; this task is the first one's.

``master()`` is the address a Session of this task connects to, prefixed by the RPC layer
(``grpc://host:port``).  Resolvers of cloud schedulers (GCE, Kubernetes, Slurm, TPU) ask
services this runtime does not talk to.
"""

from __future__ import annotations

import abc
import json
import os
from typing import Optional

from .cluster import ClusterSpec

__all__ = [
    "ClusterResolver",
    "SimpleClusterResolver",
    "TFConfigClusterResolver",
    "UnionResolver",
]


def _with_rpc_layer(address: str, rpc_layer: Optional[str]) -> str:
    if not address or not rpc_layer:
        return address
    return f"{rpc_layer}://{address}"


class ClusterResolver(abc.ABC):
    """What every resolver answers: the `ClusterSpec`, this task, and its master."""

    task_type: Optional[str] = None
    task_id: Optional[int] = None
    rpc_layer: Optional[str] = None

    @abc.abstractmethod
    def cluster_spec(self) -> ClusterSpec:
        """The cluster's jobs and their tasks' addresses."""

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """The address of ``task_type``:``task_id`` (this task when None), with the RPC
        layer; "" when the cluster has no such task."""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            return ""
        spec = self.cluster_spec()
        if task_type not in spec.jobs or task_id not in spec.task_indices(task_type):
            return ""
        address = spec.task_address(task_type, task_id)
        return _with_rpc_layer(address, rpc_layer or self.rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        """Accelerators per type on the task: none, on a host whose ops all run on its CPU."""
        return {}

    @property
    def environment(self) -> str:
        return ""


class SimpleClusterResolver(ClusterResolver):
    """A resolver of what it is given."""

    def __init__(
        self,
        cluster_spec,
        master="",
        task_type=None,
        task_id=None,
        environment="",
        num_accelerators=None,
        rpc_layer=None,
    ):
        self._cluster_spec = ClusterSpec(cluster_spec)
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self._environment = environment
        self._num_accelerators = dict(num_accelerators or {})
        self.rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """The master given, unless a task is named, whose address is then looked up."""
        if task_type is not None and task_id is not None:
            return super().master(task_type, task_id, rpc_layer)
        return _with_rpc_layer(self._master, rpc_layer or self.rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return dict(self._num_accelerators)

    @property
    def environment(self) -> str:
        return self._environment


class TFConfigClusterResolver(ClusterResolver):
    """A resolver of the ``TF_CONFIG`` environment variable (read at each call, as
    TensorFlow's)."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    @staticmethod
    def _config() -> dict:
        text = os.environ.get("TF_CONFIG", "")
        if not text:
            return {}
        try:
            config = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"TF_CONFIG is not JSON: {e}") from None
        if not isinstance(config, dict):
            raise ValueError(f"TF_CONFIG must hold a JSON object, got {text[:80]!r}")
        return config

    @property
    def task_type(self) -> Optional[str]:
        if self._task_type is not None:
            return self._task_type
        return self._config().get("task", {}).get("type")

    @task_type.setter
    def task_type(self, value):
        self._task_type = value

    @property
    def task_id(self) -> Optional[int]:
        if self._task_id is not None:
            return self._task_id
        index = self._config().get("task", {}).get("index")
        return None if index is None else int(index)

    @task_id.setter
    def task_id(self, value):
        self._task_id = value

    @property
    def rpc_layer(self) -> Optional[str]:
        if self._rpc_layer is not None:
            return self._rpc_layer
        return self._config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, value):
        self._rpc_layer = value

    @property
    def environment(self) -> str:
        if self._environment is not None:
            return self._environment
        return self._config().get("environment", "")

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec(self._config().get("cluster", {}))


class UnionResolver(ClusterResolver):
    """The jobs of all ``resolvers`` in one `ClusterSpec` (a job in two of them is an
    error); this task, its master and environment are the first resolver's."""

    def __init__(self, *args, **kwargs):
        if not args:
            raise ValueError("At least one ClusterResolver is required.")
        for resolver in args:
            if not isinstance(resolver, ClusterResolver):
                raise TypeError(f"UnionResolver takes ClusterResolvers, got {resolver!r}")
        unknown = set(kwargs) - {"task_type", "task_id", "rpc_layer"}
        if unknown:
            raise ValueError(f"Unexpected kwargs provided {sorted(unknown)}")
        self._resolvers = args
        self._task_type = kwargs.get("task_type")
        self._task_id = kwargs.get("task_id")
        self._rpc_layer = kwargs.get("rpc_layer")

    @property
    def task_type(self):
        return self._task_type if self._task_type is not None else self._resolvers[0].task_type

    @property
    def task_id(self):
        return self._task_id if self._task_id is not None else self._resolvers[0].task_id

    @property
    def rpc_layer(self):
        return self._rpc_layer if self._rpc_layer is not None else self._resolvers[0].rpc_layer

    @property
    def environment(self) -> str:
        return self._resolvers[0].environment

    def cluster_spec(self) -> ClusterSpec:
        jobs: dict = {}
        for resolver in self._resolvers:
            spec = resolver.cluster_spec().as_dict()
            for job, tasks in spec.items():
                if job in jobs:
                    raise KeyError(f"Duplicate job {job!r} in the resolvers' cluster specs")
                jobs[job] = tasks
        return ClusterSpec(jobs)

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        if task_type is not None and task_id is not None:
            return super().master(task_type, task_id, rpc_layer)
        return self._resolvers[0].master(rpc_layer=rpc_layer or self.rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return self._resolvers[0].num_accelerators(task_type, task_id, config_proto)

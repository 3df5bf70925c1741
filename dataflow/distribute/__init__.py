"""Distributed execution: clusters of tasks, the rendezvous between them, and clusters on Ray.

- `ClusterSpec` (``df.train.ClusterSpec``): the jobs of a cluster and their tasks' addresses.
- `rendezvous`: the interface a step's `_Send`/`_Recv` meet through (``send``, ``recv``,
  ``abort``; one per step) and `StepMailbox`, its in-process table of values and waiters.
- `RayCluster` (`ray_cluster`): one Ray actor per task; ``df.Session(cluster.target)`` runs
  steps on it through a master, as TensorFlow 1.x's distributed runtime does.

Invariants: Ray is optional; nothing here imports it until a `RayCluster` is made, so
``import dataflow`` works without it.  A task's variables live in its actor between runs; every
value crossing tasks travels through Ray.
"""

from ..session import register_target
from .cluster_spec import ClusterSpec
from .ray_cluster import TARGET_PREFIX, RayCluster, master_for_target

register_target(TARGET_PREFIX, master_for_target)

__all__ = ["ClusterSpec", "RayCluster"]

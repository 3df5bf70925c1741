"""``train.ClusterSpec``: the jobs of a cluster and the network address of each of their tasks.

A cluster names jobs (``"ps"``, ``"worker"``), each a set of tasks numbered from 0, each task
at an address (``"host:port"``).  The placer offers ``/job:<name>/replica:0/task:<i>`` for
every task listed here (`placer.cluster_tasks`).  As TensorFlow 1.x's, a job's tasks are a
list (indices 0..n-1) or a dict from index to address (gaps allowed); `as_dict` gives back a
list where the indices have no gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Optional


class ClusterSpec:
    """The tasks of a cluster, by job (``tf.compat.v1.train.ClusterSpec``): built from a dict
    ``{job: [address, ...] or {index: address}}`` or another ClusterSpec."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        elif _is_cluster_def(cluster):
            cluster = {job.name: dict(job.tasks) for job in cluster.job}
        if not isinstance(cluster, Mapping):
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists of "
                "network addresses, or a `ClusterDef` protocol buffer"
            )
        self._jobs: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if isinstance(tasks, (list, tuple)):
                self._jobs[str(job)] = {i: str(address) for i, address in enumerate(tasks)}
            elif isinstance(tasks, Mapping) and all(
                isinstance(i, int) and not isinstance(i, bool) for i in tasks
            ):
                self._jobs[str(job)] = {i: str(tasks[i]) for i in sorted(tasks)}
            else:
                raise TypeError(
                    f"The tasks for job {str(job)!r} must be a list or a dictionary from "
                    "integers to strings."
                )

    @property
    def jobs(self) -> list[str]:
        """The job names, in the order the cluster gave them."""
        return list(self._jobs)

    def as_dict(self) -> dict:
        """``{job: [addresses]}``, or ``{job: {index: address}}`` for a job whose task indices
        have gaps."""
        result = {}
        for job, tasks in self._jobs.items():
            contiguous = list(tasks) == list(range(len(tasks)))
            result[job] = list(tasks.values()) if contiguous else dict(tasks)
        return result

    def as_cluster_def(self):
        """The cluster as a ``tf.train.ClusterDef`` protocol buffer (one ``JobDef`` per job,
        its ``tasks`` a map from index to address)."""
        from ..framework.train_protos import messages

        protos = messages()
        return protos.ClusterDef(
            job=[protos.JobDef(name=job, tasks=tasks) for job, tasks in self._jobs.items()]
        )

    def num_tasks(self, job_name: str) -> int:
        return len(self._tasks(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return list(self._tasks(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._tasks(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index} in job {job_name!r}")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list[Optional[str]]:
        """The addresses of the job's tasks by index, None where an index has no task."""
        tasks = self._tasks(job_name)
        addresses: list[Optional[str]] = [None] * (max(tasks) + 1 if tasks else 0)
        for index, address in tasks.items():
            addresses[index] = address
        return addresses

    def _tasks(self, job_name: str) -> dict[int, str]:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return f"ClusterSpec({dict(sorted(self.as_dict().items()))!r})"


def _is_cluster_def(value) -> bool:
    descriptor = getattr(value, "DESCRIPTOR", None)
    return descriptor is not None and descriptor.name == "ClusterDef"

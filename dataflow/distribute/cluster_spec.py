"""``train.ClusterSpec``: the jobs of a cluster and the address of each of their tasks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Union


class ClusterSpec:
    """The jobs of a cluster and the address of each task, as ``tf.train.ClusterSpec``.

    Built from ``{"ps": ["host:2222"], "worker": ["host:2223", "host:2224"]}`` (a list gives
    tasks 0, 1, ...) or ``{"worker": {1: "host:2224"}}`` (sparse task indices), or from another
    ClusterSpec.  An address is any string: a `RayCluster`'s are the names of its task actors.
    """

    def __init__(self, cluster: Union[Mapping, ClusterSpec, None] = None):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if cluster is None:
            cluster = {}
        if not isinstance(cluster, Mapping):
            raise TypeError(
                "ClusterSpec takes a dict from job names to lists (or dicts from task index) of "
                f"addresses, or a ClusterSpec; got {type(cluster).__name__}"
            )
        self._jobs: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str) or not job:
                raise TypeError(f"A job name must be a non-empty str, not {job!r}")
            if isinstance(tasks, str):
                tasks = [tasks]
            if isinstance(tasks, Mapping):
                indexed = dict(tasks)
            elif isinstance(tasks, (list, tuple)):
                indexed = dict(enumerate(tasks))
            else:
                raise TypeError(
                    f"The tasks of job {job!r} must be a list of addresses or a dict from task "
                    f"index to address, not {type(tasks).__name__}"
                )
            for index, address in indexed.items():
                if not isinstance(index, int) or index < 0 or not isinstance(address, str):
                    raise TypeError(
                        f"Job {job!r}: task {index!r} -> {address!r} is not a task index "
                        "(int >= 0) and an address (str)"
                    )
            self._jobs[job] = dict(sorted(indexed.items()))

    @property
    def jobs(self) -> list[str]:
        return list(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return list(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._job(job_name)
        if task_index not in tasks:
            raise ValueError(
                f"No task with index {task_index} in job {job_name!r} (its tasks: {list(tasks)})"
            )
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list:
        """The addresses of ``job_name``'s tasks, with None for a missing index."""
        tasks = self._job(job_name)
        return [tasks.get(i) for i in range(max(tasks, default=-1) + 1)]

    def as_dict(self) -> dict:
        """``{job: [addresses]}``, or ``{job: {index: address}}`` for a job with gaps."""
        result = {}
        for job, tasks in self._jobs.items():
            dense = list(tasks) == list(range(len(tasks)))
            result[job] = list(tasks.values()) if dense else dict(tasks)
        return result

    def _job(self, job_name: str) -> dict[int, str]:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r} (jobs: {self.jobs})") from None

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"

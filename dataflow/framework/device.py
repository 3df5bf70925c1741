"""Device names: parsing, merging and the host placement of a run (``tf.DeviceSpec``).

A device string names where an op should run: ``/job:ps/replica:0/task:1/device:CPU:0``, any
part optional, with the short forms ``/cpu:0`` and ``/gpu:1``.  ``with df.device(...)``
records the merged string on every op built inside (`Operation.device`), and
``colocate_with`` records TensorFlow's ``_class`` attribute (``loc:@op``); the placer
(`dataflow.client.placer`) reads those two fields and gives each op of a run a full name
such as ``/job:localhost/replica:0/task:0/device:CPU:0``.

This module depends on nothing else in the package, so the graph can use it.
"""

from __future__ import annotations

from typing import Optional, Union

# Device types a short name may use (``/gpu:0``); ``/device:<type>:<index>`` takes any type.
_KNOWN_DEVICE_TYPES = frozenset({"CPU", "GPU", "TPU", "TPU_SYSTEM", "XLA_CPU", "XLA_GPU"})

HOST_JOB = "localhost"
HOST_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


class DeviceSpec:
    """A parsed device name: ``job``, ``replica``, ``task``, ``device_type``, ``device_index``,
    each None when not given (``tf.compat.v1.DeviceSpec``, whose fields may be set)."""

    __slots__ = ("_job", "_replica", "_task", "_device_type", "_device_index")

    def __init__(
        self,
        job: Optional[str] = None,
        replica: Optional[int] = None,
        task: Optional[int] = None,
        device_type: Optional[str] = None,
        device_index: Optional[int] = None,
    ):
        self.job = job
        self.replica = replica
        self.task = task
        self.device_type = device_type
        self.device_index = device_index

    # -- fields ----------------------------------------------------------------------------------
    @property
    def job(self) -> Optional[str]:
        return self._job

    @job.setter
    def job(self, job) -> None:
        self._job = None if job is None else str(job)

    @property
    def replica(self) -> Optional[int]:
        return self._replica

    @replica.setter
    def replica(self, replica) -> None:
        self._replica = _as_index(replica, "replica")

    @property
    def task(self) -> Optional[int]:
        return self._task

    @task.setter
    def task(self, task) -> None:
        self._task = _as_index(task, "task")

    @property
    def device_type(self) -> Optional[str]:
        return self._device_type

    @device_type.setter
    def device_type(self, device_type) -> None:
        if device_type is not None:
            device_type = str(device_type)
            if device_type.upper() in _KNOWN_DEVICE_TYPES:
                device_type = device_type.upper()
        self._device_type = device_type

    @property
    def device_index(self) -> Optional[int]:
        return self._device_index

    @device_index.setter
    def device_index(self, device_index) -> None:
        self._device_index = _as_index(device_index, "device index")

    # -- strings ---------------------------------------------------------------------------------
    @classmethod
    def from_string(cls, spec: Optional[str]) -> DeviceSpec:
        """Parses ``spec``; a malformed one is a ``ValueError`` worded as TensorFlow's."""
        return cls().parse_from_string(spec)

    def parse_from_string(self, spec: Optional[str]) -> DeviceSpec:
        """Sets the fields ``spec`` gives (and clears the others); returns ``self``."""
        if isinstance(spec, DeviceSpec):
            spec = spec.to_string()
        if spec is not None and not isinstance(spec, str):
            raise TypeError(f"A device is a string or a DeviceSpec, got {spec!r:.80}")
        job = replica = task = device_type = device_index = None
        for part in (spec or "").split("/"):
            fields = part.split(":")
            if len(fields) == 2 and fields[0] == "job":
                job = fields[1]
            elif len(fields) == 2 and fields[0] == "replica":
                replica = _parse_index(fields[1], spec)
            elif len(fields) == 2 and fields[0] == "task":
                task = _parse_index(fields[1], spec)
            elif len(fields) in (1, 2) and fields[0].upper() in _KNOWN_DEVICE_TYPES:
                device_type = _only_device_type(device_type, fields[0].upper(), spec)
                if len(fields) == 2 and fields[1] != "*":
                    device_index = _parse_index(fields[1], spec)
            elif len(fields) == 3 and fields[0] == "device":
                device_type = _only_device_type(device_type, fields[1], spec)
                if fields[2] != "*":
                    device_index = _parse_index(fields[2], spec)
            elif fields[0] != "":
                raise ValueError(
                    f"Unknown attribute '{fields[0]}' is encountered while parsing the device "
                    f"spec: '{spec}'."
                )
        self.job, self.replica, self.task = job, replica, task
        self.device_type, self.device_index = device_type, device_index
        return self

    def to_string(self) -> str:
        """The canonical string: ``/job:ps/replica:0/task:1/device:CPU:0``, parts left out when
        not set (``/device:GPU:*`` for a type without an index)."""
        parts = []
        if self._job is not None:
            parts.append("/job:" + self._job)
        if self._replica is not None:
            parts.append(f"/replica:{self._replica}")
        if self._task is not None:
            parts.append(f"/task:{self._task}")
        if self._device_type is not None:
            index = "*" if self._device_index is None else str(self._device_index)
            parts.append(f"/device:{self._device_type}:{index}")
        return "".join(parts)

    # -- merging ---------------------------------------------------------------------------------
    def merge_from(self, dev: DeviceSpec) -> None:
        """Sets the fields that ``dev`` sets (``dev`` wins where both do)."""
        for name in ("job", "replica", "task", "device_type", "device_index"):
            value = getattr(dev, name)
            if value is not None:
                setattr(self, name, value)

    def make_merged_spec(self, dev: DeviceSpec) -> DeviceSpec:
        """A new spec: this one with the fields ``dev`` sets taken from ``dev``."""
        merged = self.replace()
        merged.merge_from(dev)
        return merged

    def replace(self, **fields) -> DeviceSpec:
        values = {
            "job": self._job,
            "replica": self._replica,
            "task": self._task,
            "device_type": self._device_type,
            "device_index": self._device_index,
        }
        values.update(fields)
        return DeviceSpec(**values)

    def __eq__(self, other) -> bool:
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __repr__(self) -> str:
        return f"<DeviceSpec '{self.to_string()}'>"


def _as_index(value, what: str) -> Optional[int]:
    if value is None:
        return None
    try:
        index = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"A {what} is a non-negative integer, got {value!r:.40}") from None
    if index < 0:
        raise ValueError(f"A {what} is a non-negative integer, got {value!r:.40}")
    return index


def _parse_index(text: str, spec: str) -> int:
    if not text.isdigit():
        raise ValueError(
            f"invalid literal for int() with base 10: '{text}' in the device spec '{spec}'"
        )
    return int(text)


def _only_device_type(found: Optional[str], device_type: str, spec: str) -> str:
    if found is not None:
        raise ValueError(
            f"Multiple device types are not allowed while parsing the device spec: {spec}."
        )
    return device_type


def canonical_name(device: Union[str, DeviceSpec, None]) -> str:
    """``device`` as its canonical string (``"/cpu:0"`` -> ``"/device:CPU:0"``; None -> "")."""
    if device is None:
        return ""
    if isinstance(device, DeviceSpec):
        return device.to_string()
    return DeviceSpec.from_string(device).to_string()


def merge_device(spec: Union[str, DeviceSpec]):
    """A device function for ``with df.device(spec)``: it fills in the fields of the op's device
    that the op (or an inner ``device`` scope) has not set."""
    scope_spec = DeviceSpec.from_string(spec) if not isinstance(spec, DeviceSpec) else spec

    def merge(op) -> str:
        return scope_spec.make_merged_spec(DeviceSpec.from_string(op.device)).to_string()

    merge.device_spec = scope_spec
    return merge

"""The devices this process offers (TensorFlow's ``python.client.device_lib``).

dataflow runs every op on the host (`dataflow.framework.device`), so the local devices are the
host's CPUs: one, or ``ConfigProto.device_count["CPU"]`` of them when a ``session_config`` asks for
more, as TensorFlow's virtual CPU devices.  There is never a GPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["DeviceAttributes", "list_local_devices"]


@dataclass(frozen=True)
class DeviceAttributes:
    """One device, with the fields of TensorFlow's ``DeviceAttributes`` proto that code reads."""

    name: str
    device_type: str
    memory_limit: int = 0
    incarnation: int = 0
    physical_device_desc: str = ""


def list_local_devices(session_config=None) -> list[DeviceAttributes]:
    """The host's CPU devices, ``/device:CPU:0`` first."""
    count = 1
    if session_config is not None:
        count = max(session_config.device_count.get("CPU", 1), 1)
    return [
        DeviceAttributes(f"/device:CPU:{i}", "CPU", incarnation=hash((os.getpid(), i)) & 0xFFFF)
        for i in range(count)
    ]

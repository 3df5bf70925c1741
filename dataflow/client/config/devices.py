"""The devices of ``df.config``: the host's one physical device, its CPU, and the logical CPUs
it can be split into (`set_logical_device_configuration`); ``df.config`` and
``df.config.experimental`` offer these functions."""

from __future__ import annotations

import collections
import threading as _threading
from typing import Optional

from ._state import CPU as _CPU
from ._state import STATE as _STATE
from ._state import LogicalDevice, PhysicalDevice

__all__ = [
    "LogicalDeviceConfiguration",
    "get_logical_device_configuration",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "set_logical_device_configuration",
    "set_visible_devices",
]


class LogicalDeviceConfiguration(
    collections.namedtuple(
        "LogicalDeviceConfiguration",
        ["memory_limit", "experimental_priority", "experimental_device_ordinal"],
        defaults=(None, None, None),
    )
):
    """One logical device carved from a physical one.  The memory and ordering fields are
    for accelerators; a logical CPU takes none of them."""


_lock = _threading.Lock()


def _check_device_type(device_type: Optional[str], function: str) -> None:
    if device_type is not None and not isinstance(device_type, str):
        raise TypeError(f"config.{function}: device_type must be a str, got {device_type!r}")


def list_physical_devices(device_type: Optional[str] = None) -> list:
    """The host's devices of ``device_type`` (all when None): its one CPU."""
    _check_device_type(device_type, "list_physical_devices")
    return [_CPU] if device_type in (None, "CPU") else []


def get_visible_devices(device_type: Optional[str] = None) -> list:
    """The physical devices the runtime may use: the CPU."""
    _check_device_type(device_type, "get_visible_devices")
    return [d for d in _STATE.visible if device_type in (None, d.device_type)]


def set_visible_devices(devices, device_type: Optional[str] = None) -> None:
    """Which physical devices (of ``device_type``) the runtime may use.  The CPU cannot be
    hidden: every op runs on it."""
    _check_device_type(device_type, "set_visible_devices")
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for device in devices:
        if device != _CPU:
            raise ValueError(f"config.set_visible_devices: unknown device {device!r}")
    if device_type in (None, "CPU") and _CPU not in devices:
        raise ValueError("config.set_visible_devices: the CPU cannot be hidden")
    with _lock:
        _STATE.visible = [_CPU]


def list_logical_devices(device_type: Optional[str] = None) -> list:
    """The devices ops may be placed on: ``/device:CPU:0`` and the further logical CPUs."""
    _check_device_type(device_type, "list_logical_devices")
    if device_type not in (None, "CPU"):
        return []
    return [LogicalDevice(f"/device:CPU:{i}", "CPU") for i in range(_STATE.logical_cpus())]


def set_logical_device_configuration(device, logical_devices) -> None:
    """Splits the physical ``device`` (the CPU) into one logical device per entry of
    ``logical_devices`` (None: back to one); Sessions made afterwards have that many CPUs."""
    if device != _CPU:
        raise ValueError(f"config.set_logical_device_configuration: unknown device {device!r}")
    if logical_devices is not None:
        logical_devices = list(logical_devices)
        if not logical_devices:
            raise ValueError("config.set_logical_device_configuration: give at least one device")
        for entry in logical_devices:
            if not isinstance(entry, LogicalDeviceConfiguration):
                raise TypeError(
                    "config.set_logical_device_configuration takes LogicalDeviceConfiguration "
                    f"entries, got {entry!r}"
                )
            if entry.memory_limit is not None:
                raise ValueError(
                    "config.set_logical_device_configuration: a logical CPU has no memory_limit"
                )
    with _lock:
        _STATE.logical_devices = logical_devices


def get_logical_device_configuration(device) -> Optional[list]:
    """The logical devices ``device`` was split into, or None when it was not."""
    if device != _CPU:
        raise ValueError(f"config.get_logical_device_configuration: unknown device {device!r}")
    return None if _STATE.logical_devices is None else list(_STATE.logical_devices)

"""``df.config.experimental``: what TensorFlow 2's ``tf.config.experimental`` offers that means
something on a host of one CPU.

- ``enable_op_determinism``: the same program on the same inputs gives the same results every
  run (`dataflow.framework.determinism` says what it changes: random ops need seeds, Sessions
  run each step on one thread);
- the device functions under their earlier names (``list_physical_devices``,
  ``set_virtual_device_configuration``, ``VirtualDeviceConfiguration``, ...), the same
  functions as ``df.config``'s.

Left out: GPU memory (growth, statistics), TensorFloat-32, the MLIR bridge, eager device
policies and asynchronous eager execution, and remote clusters' device filters: none of them
has a meaning for the host's CPU here.
"""

from __future__ import annotations

from ...framework import determinism as _determinism
from .devices import (
    LogicalDeviceConfiguration,
    get_logical_device_configuration,
    get_visible_devices,
    list_logical_devices,
    list_physical_devices,
    set_logical_device_configuration,
    set_visible_devices,
)

__all__ = [
    "VirtualDeviceConfiguration",
    "enable_op_determinism",
    "get_virtual_device_configuration",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "set_virtual_device_configuration",
    "set_visible_devices",
]


def enable_op_determinism() -> None:
    """Makes the process's ops run deterministically, as ``tf.config.experimental.
    enable_op_determinism``: from now on a random op without a seed is a ``RuntimeError`` (set
    one with ``df.set_random_seed``), and Sessions run each step on one thread, so that
    stateful ops keep one order.  Everything else already gives the same bits every run (see
    `dataflow.framework.determinism`).  TensorFlow has no public switch back; neither is
    there one here."""
    _determinism.enable_op_determinism()


# TensorFlow 2.0's names of the logical-device functions.
VirtualDeviceConfiguration = LogicalDeviceConfiguration
get_virtual_device_configuration = get_logical_device_configuration
set_virtual_device_configuration = set_logical_device_configuration

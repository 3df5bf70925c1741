"""``df.config``: the process's runtime options, as ``tf.config`` sets them.

TensorFlow 2 keeps one runtime configuration per process; a ``tf.compat.v1.Session`` made
without a ``config`` starts from it.  dataflow does the same: what is set here (threads, soft
placement, logical CPUs, graph passes, compiled plans, functions run eagerly) makes the
``ConfigProto`` a `Session` takes when it is given none (`dataflow.client.session.process_config`),
and applies to Sessions made afterwards; a Session given its own ``config`` uses that alone,
as in TensorFlow.

The host has one physical device, its CPU; it can be split into several logical CPUs
(`set_logical_device_configuration`), which ops are placed on with ``df.device("/cpu:1")``
and which run as partitions of one step (`dataflow.distribute.local`).  There are no GPUs:
asking for GPU devices lists none.

Layer: client (``dataflow.client``); it may import the layers below the client.  The
options are read by the Session when it makes a plan, never by the ops.
"""

from __future__ import annotations

from . import optimizer, threading
from ._state import STATE as _STATE
from ._state import LogicalDevice, PhysicalDevice
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
    "LogicalDevice",
    "LogicalDeviceConfiguration",
    "PhysicalDevice",
    "experimental",
    "experimental_functions_run_eagerly",
    "experimental_run_functions_eagerly",
    "functions_run_eagerly",
    "get_logical_device_configuration",
    "get_soft_device_placement",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
    "optimizer",
    "run_functions_eagerly",
    "set_logical_device_configuration",
    "set_soft_device_placement",
    "set_visible_devices",
    "threading",
]


def get_soft_device_placement() -> bool:
    """Whether new Sessions place an op whose device this host lacks (``/gpu:0``) on a CPU
    instead of failing; off unless set, as TF1's ``ConfigProto.allow_soft_placement``."""
    return _STATE.soft_placement


def set_soft_device_placement(enabled) -> None:
    _STATE.soft_placement = bool(enabled)


def run_functions_eagerly(run_eagerly) -> None:
    """Makes every ``df.function`` called eagerly run its Python function as it is, op by op,
    instead of its traced graph (to debug it with prints and a debugger).  Has no effect on
    functions called while building a graph, as in TensorFlow."""
    _STATE.functions_run_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    return _STATE.functions_run_eagerly


# TensorFlow 2.0's names for the two above.
experimental_run_functions_eagerly = run_functions_eagerly
experimental_functions_run_eagerly = functions_run_eagerly

from . import experimental  # noqa: E402 - after the names it offers under others

"""The runtime options `dataflow.client.config` sets, in one place (the Session reads them to make
the ConfigProto of a Session given none: `dataflow.client.session.process_config`)."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Optional

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
PhysicalDevice.__doc__ = "A device of the host (``/physical_device:CPU:0``)."
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])
LogicalDevice.__doc__ = "A device ops are placed on (``/device:CPU:0``)."
CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")


@dataclass
class RuntimeOptions:
    inter_op_threads: int = 0
    intra_op_threads: int = 0
    soft_placement: bool = False
    log_device_placement: bool = False
    functions_run_eagerly: bool = False
    logical_devices: Optional[list] = None
    visible: list = field(default_factory=lambda: [CPU])
    optimizer_options: dict = field(default_factory=dict)

    def logical_cpus(self) -> int:
        return 1 if self.logical_devices is None else len(self.logical_devices)


STATE = RuntimeOptions()

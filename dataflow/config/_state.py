"""The runtime options `dataflow.config` sets, in one place, and the ConfigProto they make."""

from __future__ import annotations

import collections
import copy
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

    def session_config(self):
        from ..passes.config import RewriterConfig
        from ..session import ConfigProto

        config = ConfigProto(
            inter_op_parallelism_threads=self.inter_op_threads,
            intra_op_parallelism_threads=self.intra_op_threads,
            allow_soft_placement=self.soft_placement,
            log_device_placement=self.log_device_placement,
        )
        if self.logical_devices is not None:
            config.device_count = {"CPU": self.logical_cpus()}
        rewrite = config.graph_options.rewrite_options
        for option, value in self.optimizer_options.items():
            if isinstance(getattr(RewriterConfig, option, None), bool):
                setattr(rewrite, option, bool(value))
            elif hasattr(RewriterConfig, option) and option != "optimizers":
                setattr(rewrite, option, RewriterConfig.ON if value else RewriterConfig.OFF)
        return copy.deepcopy(config)


STATE = RuntimeOptions()

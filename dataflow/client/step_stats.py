"""What a run did, op by op: ``RunMetadata.step_stats`` in dataflow's form and in TensorFlow's.

``run_metadata.step_stats`` is a `StepStats`: a list of `NodeExecStats`, one per op that ran,
in start order (dataflow's documented form, which the renderer, ``df.debug`` and the notebooks
read), that also answers as TensorFlow's ``StepStats`` proto does: ``step_stats.dev_stats`` is
a list of one `DeviceStepStats` (every op runs on the host), whose ``node_stats`` are the same
`NodeExecStats` objects.  Each of those carries TensorFlow's field names next to dataflow's:
``all_start_micros``, ``op_start_rel_micros``, ``op_end_rel_micros``, ``all_end_rel_micros``,
``timeline_label`` and ``output`` (a `NodeOutput` per array the kernel returned, with its
``tensor_description.allocation_description.ptr``), so code written against
``tf.compat.v1.RunMetadata`` reads it unchanged.

Times are ``time.perf_counter()`` seconds in dataflow's fields (``start``, ``end``) and whole
microseconds of the same clock in TensorFlow's (TensorFlow counts from the epoch; only
differences between them mean anything in either).
"""

from __future__ import annotations

from dataclasses import dataclass, field

HOST_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


@dataclass(frozen=True)
class AllocationDescription:
    """Where an output's buffer lives: TensorFlow's ``AllocationDescription``.  ``ptr`` is the
    buffer's address; two outputs with the same ``ptr`` share a buffer (an op that forwarded
    its input, or one whose buffer was freed and reused)."""

    requested_bytes: int = 0
    allocated_bytes: int = 0
    allocator_name: str = "cpu"
    ptr: int = 0


@dataclass(frozen=True)
class TensorDescription:
    """An output's dtype name, shape and allocation: TensorFlow's ``TensorDescription``."""

    dtype: str = ""
    shape: tuple = ()
    allocation_description: AllocationDescription = field(default_factory=AllocationDescription)


@dataclass(frozen=True)
class NodeOutput:
    """One array an op returned: TensorFlow's ``NodeOutput``."""

    slot: int
    tensor_description: TensorDescription


@dataclass
class NodeExecStats:
    """When and where one op ran in one (frame instance, iteration); ``location`` is the
    user's file:line that built it.  ``node_name`` and ``op_type`` are those of the op that ran,
    after graph passes; ``original_op_name`` names the user's op it stands for (the same name
    unless a pass moved or replaced the op: a hoisted op is renamed, a fused kernel takes the
    name of the last op of its chain and its own type).  ``output`` (TensorFlow's name) has a
    `NodeOutput` per array the kernel returned, made when it is read from ``output_records``
    (the executor's `executor.OutputRecord` tuples); it is empty for a control-flow op, which
    passes its input on, and for numpy scalars, which own no buffer.  The other TensorFlow
    fields are computed from ``start`` and ``end``."""

    node_name: str
    op_type: str
    start: float
    end: float
    thread: str
    frame: str
    iteration: int
    location: str = ""
    original_op_name: str = ""
    output_records: tuple = ()

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def output(self) -> tuple:
        return tuple(
            NodeOutput(
                record.slot,
                TensorDescription(
                    str(record.dtype),
                    tuple(record.shape),
                    AllocationDescription(record.nbytes, record.nbytes, "cpu", record.address),
                ),
            )
            for record in self.output_records
        )

    @property
    def all_start_micros(self) -> int:
        return int(round(self.start * 1e6))

    @property
    def op_start_rel_micros(self) -> int:
        return 0

    @property
    def op_end_rel_micros(self) -> int:
        return max(int(round(self.duration * 1e6)), 0)

    @property
    def all_end_rel_micros(self) -> int:
        return self.op_end_rel_micros

    @property
    def timeline_label(self) -> str:
        return f"{self.node_name} = {self.op_type}()"


@dataclass
class DeviceStepStats:
    """The ops that ran on one device: TensorFlow's ``DeviceStepStats``."""

    device: str
    node_stats: list


class StepStats(list):
    """``RunMetadata.step_stats``: a list of `NodeExecStats` that also has TensorFlow's
    ``dev_stats`` (see the module docstring).  ``dev_stats`` is computed from the list each
    time it is read, so it always shows what the list holds; it is empty when the list is."""

    @property
    def dev_stats(self) -> list:
        if not self:
            return []
        return [DeviceStepStats(HOST_DEVICE, list(self))]

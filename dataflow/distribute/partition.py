"""`partition`: cuts a placed graph into one graph per device, as TensorFlow 1.x does.

``partition(graph, ops, placement)`` copies each op of ``ops`` into the graph of its device
(same name, type, attributes and user's line; ``_original`` names the op of the user's graph it
stands for, ``_device`` its device) and replaces every edge between two devices:

- a **data edge** by a ``_Send`` on the source device and a ``_Recv`` on the destination, one
  pair per tensor and destination device, shared by every consumer there;
- a **control edge** as TF1 carries one: a dummy ``Const`` (an empty float array) on the source
  device with a control input from the source op, sent and received like a tensor; the
  destination op takes a control input from the ``_Recv``.  A dead source makes it dead.

**Control-flow colocation** first (TF's ``OptimizeControlFlowColocation``): a Switch and an
Exit move to the device of their data input, an Enter and a NextIteration to the device of
their first data consumer.  A NextIteration thus always sits with the Merge it feeds back into,
which is what makes that edge a back edge for the executor; the values never depend on it.

**Loops across devices** (TF's ``AddControlFlow``).  Every edge that crosses devices inside a
loop frame ``F`` needs its ``_Recv`` to fire once per iteration of ``F`` on the destination
device ``D``, so ``D`` gets a *control loop* for ``F``: ``Enter -> Merge -> Switch(Merge,
pred) -> NextIteration -> Merge``, whose ``pred`` is the loop's predicate (the LoopCond output
feeding the loop's Switches), received from the device that computes it.  Every ``_Recv`` in
``F`` on ``D`` takes a control input from that Merge, so it runs in the iterations the loop
runs, with keys naming the frame instance and iteration.  The control loop's Enter takes a
dummy ``Const`` in the root frame, or the Merge of the control loop of the enclosing frame on
the same device (nested loops).  It has no Exit: the executor completes a frame instance when
its iterations are done.  In the last iteration the predicate is false: the loop body's
``_Send``s fire dead and their ``_Recv``s are dead, so the partition's part of the body is dead
as it would be on one device; a loop in the untaken branch of a cond gets a dead predicate and
stops after iteration 0.

Feeds and fetches stay with the device that owns them (the client device of TF1 is not
needed in one process): a fed tensor is a ``Placeholder`` op in the graph given, placed like
any op, and a fetch is read from the partition of its op.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

import numpy as np

from executor.program import NodeKind

from ..framework import dtypes as _dtypes
from ..framework.graph import Graph, Operation, Tensor
from ..framework.op_registry import get_op_def
from ..framework.tensor_shape import TensorShape

# A frame is the path of loop frame names from the root: () is the root frame.
Frame = tuple

# TF's incarnation number of a device: the in-process devices never restart.
INCARNATION = 1


def partition(
    graph: Graph, ops: Iterable[Operation], placement: dict[str, str]
) -> dict[str, Graph]:
    """One graph per device of ``placement`` (op name -> full device name) holding the copies
    of that device's ops of ``ops`` (which must include every op they read, as a pruned plan
    does), with ``_Send``/``_Recv`` pairs and control loops for the edges between devices
    (see the module docstring).  ``graph`` is not changed."""
    return _Partitioner(graph, ops, placement).run()


def control_flow_colocation(ops: list[Operation], placement: dict[str, str]) -> dict:
    """Op -> device: ``placement``, with Switch and Exit moved to their data input's device,
    and Enter and NextIteration to their first data consumer's (see the module docstring)."""
    in_ops = set(ops)
    device = {op: placement[op.name] for op in ops}
    first_consumer: dict[Operation, Operation] = {}
    for op in ops:
        for t in op._inputs:
            if t.op in in_ops:
                first_consumer.setdefault(t.op, op)
    for op in ops:
        kind = op._op_def.kind
        if kind in (NodeKind.SWITCH, NodeKind.EXIT):
            source = op._inputs[0].op
            if source in in_ops:
                device[op] = device[source]
        elif kind in (NodeKind.ENTER, NodeKind.NEXT_ITERATION):
            consumer = first_consumer.get(op)
            if consumer is not None:
                device[op] = device[consumer]
    return device


def frames_of(ops: list[Operation]) -> tuple[dict, dict]:
    """(input frame, output frame) of each op: the loop frame its inputs lie in and the one
    its outputs lie in (an Enter's outputs lie in its child frame, an Exit's in the parent),
    found by walking from the ops without inputs, as the executor's analysis does."""
    in_ops = set(ops)
    consumers: dict[Operation, list] = {op: [] for op in ops}
    sources = []
    for op in ops:
        producers = [t.op for t in op._inputs if t.op in in_ops]
        producers += [c for c in op._control_inputs if c in in_ops]
        if not producers:
            sources.append(op)
        for producer in producers:
            consumers[producer].append(op)
    in_frame: dict[Operation, Frame] = {}
    out_frame: dict[Operation, Frame] = {}

    def assign(op: Operation, frame: Frame) -> None:
        in_frame[op] = frame
        kind = op._op_def.kind
        if kind == NodeKind.ENTER:
            out_frame[op] = frame + (op.attrs["frame_name"],)
        elif kind == NodeKind.EXIT:
            out_frame[op] = frame[:-1]
        else:
            out_frame[op] = frame

    stack = []
    for op in sources:
        assign(op, ())
        stack.append(op)
    while stack:
        producer = stack.pop()
        for consumer in consumers[producer]:
            if consumer not in in_frame:
                assign(consumer, out_frame[producer])
                stack.append(consumer)
    return in_frame, out_frame


@dataclass
class _ControlLoop:
    """The control loop of one frame on one device: its Merge gates that device's Recvs."""

    merge: Operation


class _Partitioner:
    def __init__(self, graph: Graph, ops: Iterable[Operation], placement: dict[str, str]):
        wanted = set(ops)
        self.ops = [op for op in graph.get_operations() if op in wanted]
        missing = [op.name for op in self.ops if op.name not in placement]
        if missing:
            raise ValueError(f"partition: no device was given for the ops {missing[:5]}")
        self.device = control_flow_colocation(self.ops, placement)
        self.in_frame, self.out_frame = frames_of(self.ops)
        self.graphs: dict[str, Graph] = {}
        self.twins: dict[Operation, Operation] = {}
        self.recvs: dict[tuple, Tensor] = {}
        self.control_recvs: dict[tuple, Operation] = {}
        self.control_loops: dict[tuple, _ControlLoop] = {}
        self.sends: dict[str, list[Operation]] = {}  # device -> its _Send ops
        self._loop_facts: Optional[dict] = None

    # -- the pass ---------------------------------------------------------------------------------
    def run(self) -> dict[str, Graph]:
        for device in dict.fromkeys(self.device[op] for op in self.ops):
            self.graphs[device] = Graph()
        for op in self.ops:
            graph = self.graphs[self.device[op]]
            twin = Operation(graph, op._op_def, op._name, [], [], dict(op.attrs), op.location)
            twin._outputs = [Tensor(twin, i, t.dtype, t.shape) for i, t in enumerate(op._outputs)]
            twin._original = getattr(op, "_original", op)
            twin._device = self.device[op]
            graph._names_in_use[op._name.lower()] = 1
            self.twins[op] = twin
        for op in self.ops:
            device = self.device[op]
            twin = self.twins[op]
            twin._inputs = [self._input_on(device, t) for t in op._inputs]
            twin._control_inputs = [
                self.twins[c] if self.device[c] == device else self._control_recv_on(device, c)
                for c in op._control_inputs
                if c in self.twins
            ]
        for op in self.ops:
            _register(self.twins[op])
        return self.graphs

    def _input_on(self, device: str, t: Tensor) -> Tensor:
        if self.device[t.op] == device:
            return self.twins[t.op]._outputs[t.value_index]
        return self._recv_on(device, t)

    # -- crossing edges ---------------------------------------------------------------------------
    def _recv_on(self, device: str, t: Tensor) -> Tensor:
        """The ``_Recv`` on ``device`` of ``t`` (made with its ``_Send`` the first time)."""
        key = (t, device)
        found = self.recvs.get(key)
        if found is not None:
            return found
        source_device = self.device[t.op]
        # The control loop first: building it may receive the loop's predicate, which may be
        # this very tensor (and must then get this one pair).
        gate = self._gate(self.out_frame[t.op], device)
        found = self.recvs.get(key)
        if found is not None:
            return found
        attrs = _pair_attrs(t.name, source_device, device)
        self._send(
            source_device,
            f"{t.op.name}/_send_{t.value_index}_to_{_short(device)}",
            [self.twins[t.op]._outputs[t.value_index]],
            [],
            attrs,
            t.op,
        )
        recv = self._new(
            device,
            "_Recv",
            f"{t.op.name}/_recv_{t.value_index}_from_{_short(source_device)}",
            [],
            gate,
            dict(attrs, tensor_type=t.dtype.base_dtype, shape=t.shape),
            t.op,
        )
        self.recvs[key] = recv._outputs[0]
        return recv._outputs[0]

    def _control_recv_on(self, device: str, source: Operation) -> Operation:
        """The ``_Recv`` on ``device`` that stands for a control edge from ``source``."""
        key = (source, device)
        found = self.control_recvs.get(key)
        if found is not None:
            return found
        source_device = self.device[source]
        gate = self._gate(self.out_frame[source], device)
        dummy = self._dummy_const(source_device, f"{source.name}/_control", [self.twins[source]])
        attrs = _pair_attrs(f"^{source.name}", source_device, device)
        self._send(
            source_device,
            f"{source.name}/_send_control_to_{_short(device)}",
            [dummy._outputs[0]],
            [],
            attrs,
            source,
        )
        recv = self._new(
            device,
            "_Recv",
            f"{source.name}/_recv_control_from_{_short(source_device)}",
            [],
            gate,
            dict(attrs, tensor_type=_dtypes.float32, shape=TensorShape([0])),
            source,
        )
        self.control_recvs[key] = recv
        return recv

    def _gate(self, frame: Frame, device: str) -> list:
        """The control inputs of a ``_Recv`` in ``frame`` on ``device``."""
        if not frame:
            return []
        return [self._control_loop(frame, device).merge]

    # -- control loops ----------------------------------------------------------------------------
    def _control_loop(self, frame: Frame, device: str) -> _ControlLoop:
        key = (frame, device)
        found = self.control_loops.get(key)
        if found is not None:
            return found
        name, parallel_iterations, predicate, origin = self._loop_facts_of(frame)
        if frame[:-1]:
            source = self._control_loop(frame[:-1], device).merge._outputs[0]
        else:
            source = self._dummy_const(device, f"{name}/_cloop_start", [], origin)._outputs[0]
        base = f"{name}/_cloop_{_short(device)}"
        enter = self._new(
            device,
            "Enter",
            f"{base}/enter",
            [source],
            [],
            {"frame_name": name, "is_constant": False, "parallel_iterations": parallel_iterations},
            origin,
        )
        # The Merge's back edge is known only once the NextIteration exists: it is registered
        # last, and recorded first, so that the predicate's Recv finds this loop.
        graph = self.graphs[device]
        merge = Operation(
            graph, get_op_def("Merge"), _unique(graph, f"{base}/merge"), [], [], {}, origin.location
        )
        merge._outputs = [
            Tensor(merge, 0, _dtypes.float32, TensorShape([0])),
            Tensor(merge, 1, _dtypes.int32, TensorShape([])),
        ]
        merge._original = getattr(origin, "_original", origin)
        merge._device = device
        loop = self.control_loops[key] = _ControlLoop(merge)
        pred = self._input_on(device, predicate)
        switch = self._new(
            device, "Switch", f"{base}/switch", [merge._outputs[0], pred], [], {}, origin
        )
        next_iteration = self._new(
            device, "NextIteration", f"{base}/next_iteration", [switch._outputs[1]], [], {}, origin
        )
        merge._inputs = [enter._outputs[0], next_iteration._outputs[0]]
        _register(merge)
        return loop

    def _loop_facts_of(self, frame: Frame) -> tuple:
        """(frame name, parallel_iterations, predicate tensor, an Enter of the loop) of a loop
        frame: the predicate is the one its loop Switches (a Switch of a Merge with a back
        edge) read."""
        if self._loop_facts is None:
            facts: dict = {}
            enters: dict = {}
            for op in self.ops:
                kind = op._op_def.kind
                if kind == NodeKind.ENTER:
                    enters.setdefault(self.out_frame[op], op)
                elif kind == NodeKind.SWITCH:
                    data = op._inputs[0].op
                    if data._op_def.kind == NodeKind.MERGE and any(
                        t.op._op_def.kind == NodeKind.NEXT_ITERATION for t in data._inputs
                    ):
                        facts.setdefault(self.in_frame[op], op._inputs[1])
            self._loop_facts = {
                f: (f[-1], enter.attrs["parallel_iterations"], facts.get(f), enter)
                for f, enter in enters.items()
            }
        facts = self._loop_facts.get(frame)
        if facts is None or facts[2] is None:
            raise ValueError(
                f"the loop frame '{frame[-1]}' is split across devices but has no loop "
                "predicate (a Switch of a loop Merge) among the ops run"
            )
        return facts

    # -- building ---------------------------------------------------------------------------------
    def _send(self, device: str, name: str, inputs: list, controls: list, attrs, origin):
        send = self._new(device, "_Send", name, inputs, controls, attrs, origin)
        self.sends.setdefault(device, []).append(send)
        return send

    def _dummy_const(
        self, device: str, name: str, controls: list, origin: Optional[Operation] = None
    ) -> Operation:
        value = np.zeros(0, np.float32)
        value.flags.writeable = False
        origin = origin or controls[0]
        return self._new(
            device, "Const", name, [], controls, {"value": value, "dtype": _dtypes.float32}, origin
        )

    def _new(
        self,
        device: str,
        op_type: str,
        name: str,
        inputs: list,
        controls: list,
        attrs: dict,
        origin: Operation,
    ) -> Operation:
        """An op the pass adds on ``device``, standing for ``origin`` (whose line it takes)."""
        graph = self.graphs[device]
        op_def = get_op_def(op_type)
        op = Operation(
            graph, op_def, _unique(graph, name), inputs, controls, attrs, origin.location
        )
        op._outputs = [
            Tensor(
                op,
                i,
                _dtypes.as_dtype(dtype),
                TensorShape(shape) if shape is not None else TensorShape(None),
            )
            for i, (dtype, shape) in enumerate(_specs(op_def.infer(op)))
        ]
        op._original = getattr(origin, "_original", origin)
        op._device = device
        _register(op)
        return op


def _specs(specs) -> list:
    out = []
    for dtype, shape in specs:
        if isinstance(shape, TensorShape):
            shape = None if shape.dims is None else shape.as_list()
        out.append((dtype, shape))
    return out


def _pair_attrs(tensor_name: str, send_device: str, recv_device: str) -> dict:
    return {
        "tensor_name": tensor_name,
        "send_device": send_device,
        "send_device_incarnation": INCARNATION,
        "recv_device": recv_device,
        "client_terminated": False,
    }


def _short(device: str) -> str:
    """``CPU_1`` for ``/job:localhost/replica:0/task:0/device:CPU:1`` (for op names)."""
    tail = device.rsplit("/", 1)[-1]
    if tail.startswith("device:"):
        tail = tail[len("device:") :]
    prefix = ""
    for part in device.split("/"):
        if part.startswith("job:") and part != "job:localhost":
            prefix += part[4:] + "_"
        elif part.startswith("task:") and prefix:
            prefix += part[5:] + "_"
    return (prefix + tail).replace(":", "_")


def _unique(graph: Graph, base: str) -> str:
    name, count = base, 0
    while name in graph._ops_by_name or name.lower() in graph._names_in_use:
        count += 1
        name = f"{base}_{count}"
    graph._names_in_use[name.lower()] = 1
    return name


def _register(op: Operation) -> None:
    graph = op._graph
    graph._ops[op] = None
    graph._ops_by_name[op._name] = op
    graph._names_in_use.setdefault(op._name.lower(), 1)
    for index, t in enumerate(op._inputs):
        graph._add_edge(t, op, index)
    graph._version += 1

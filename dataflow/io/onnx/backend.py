"""``onnx.backend.base.Backend`` over dataflow, so ONNX's own conformance tests run here.

Role: `DataflowBackend.prepare(model)` imports the model into a fresh `Graph` (`import_model`)
and returns a `DataflowRep`, whose ``run(inputs)`` feeds the model's inputs in order (or by
name, from a dict) and returns the outputs in the model's order.  ``run_node`` builds a
one-node model, as ONNX's test runner expects of a backend.

Invariants: each prepared model has a graph and a Session of its own (models never share
state); only the CPU device is supported; this module imports ``onnx`` when it is imported, so
it is reached as ``dataflow.io.onnx.backend`` and never by ``import dataflow``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from ...framework.graph import Graph
from .importer import import_model


class DataflowRep(BackendRep):
    """A prepared model: its dataflow graph and the Session that runs it."""

    def __init__(self, model):
        self.graph = Graph()
        with self.graph.as_default():
            self.model = import_model(model)
        self.output_names = list(self.model.outputs)

    def run(self, inputs, **kwargs):
        names = list(self.model.inputs)
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            if isinstance(inputs, np.ndarray) and len(names) == 1:
                inputs = [inputs]
            values = list(inputs)
            if len(values) != len(names):
                raise ValueError(
                    f"{self.model.label}: the model takes {len(names)} inputs {names}, "
                    f"{len(values)} were given"
                )
            feeds = dict(zip(names, values))
        results = self.model.run(feeds)
        outputs = namedtuple("Outputs", [f"o{i}" for i in range(len(results))], rename=True)
        return outputs(*[results[name] for name in self.output_names])

    def close(self) -> None:
        self.model.close()


class DataflowBackend(Backend):
    """The backend ONNX's test runner (``onnx.backend.test.BackendTest``) drives."""

    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs) -> DataflowRep:
        if not cls.supports_device(device):
            raise ValueError(f"dataflow's ONNX backend runs on the CPU, not {device!r}")
        return DataflowRep(model)

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs):
        rep = cls.prepare(model, device, **kwargs)
        try:
            return rep.run(inputs, **kwargs)
        finally:
            rep.close()

    @classmethod
    def run_node(cls, node, inputs, device: str = "CPU", outputs_info=None, **kwargs):
        """Runs one NodeProto on ``inputs`` (arrays in the node's input order)."""
        values = list(inputs.values()) if isinstance(inputs, dict) else list(inputs)
        graph_inputs = [
            onnx.helper.make_tensor_value_info(
                name, onnx.helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype), np.shape(v)
            )
            for name, v in zip(node.input, values)
        ]
        graph_outputs = [onnx.helper.make_empty_tensor_value_info(n) for n in node.output]
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        model = onnx.helper.make_model(
            onnx.helper.make_graph([node], "run_node", graph_inputs, graph_outputs),
            opset_imports=[onnx.helper.make_opsetid(node.domain or "", opset)],
        )
        return cls.run_model(model, values, device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return str(device).upper().startswith("CPU")


backend = DataflowBackend
prepare = DataflowBackend.prepare
run_model = DataflowBackend.run_model
run_node = DataflowBackend.run_node
supports_device = DataflowBackend.supports_device

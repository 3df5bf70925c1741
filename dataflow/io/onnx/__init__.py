"""``df.onnx``: models in the ONNX interchange format.

- `import_model(path_or_proto, trainable=False)` builds an ONNX model into the default graph
  through dataflow's own ops and returns an `ImportedModel` (``.graph``, ``.inputs`` and
  ``.outputs`` keyed by ONNX names, ``.run(feeds)``).
- `backend` is ``onnx.backend.base.Backend`` over dataflow, for ONNX's conformance tests.

Layer: io (``docs/architecture.md``): it may import the framework, ops, primitives and the
client; nothing above.  The modules: `reader` (bytes to protos and arrays, bounded),
`converters` (the table of op types and the node context), `ops_math`, `ops_array`, `ops_nn`,
`ops_control` (one converter per ONNX op type, by family), `importer` (the graph walk).

Invariants:
- ``import dataflow`` does not import the ``onnx`` package: this package is loaded on first use
  of ``df.onnx`` and imports ``onnx`` (the optional extra ``dataflow[onnx]``) when a model is read.
- A model file is untrusted: it is parsed as data, never run; every size it declares is checked
  before anything is allocated; tensors stored in other files are refused.
- Every failure is an `OnnxImportError` naming the model and the node or tensor at fault; all
  op types that cannot be built are named together, each with its node.
"""

from .importer import ImportedModel, import_model
from .reader import OnnxImportError

__all__ = ["ImportedModel", "OnnxImportError", "import_model"]

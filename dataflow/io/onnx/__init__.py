"""``df.onnx``: models in the ONNX interchange format.

- `import_model(path_or_proto, trainable=False)` builds an ONNX model into the default graph
  through dataflow's own ops and returns an `ImportedModel` (``.graph``, ``.inputs`` and
  ``.outputs`` keyed by ONNX names, ``.run(feeds)``).
- `backend` is ``onnx.backend.base.Backend`` over dataflow, for ONNX's conformance tests.

Layer: io (``docs/architecture.md``): it may import the framework, ops, primitives and the
client; nothing above.  The modules: `reader` (bytes to protos and arrays, bounded),
`converters` (the table of op types and the node context), one module per family of ops with
one converter per ONNX op type (`ops_math`, `ops_array`, `ops_nn`, `ops_image`, `ops_rnn`,
`ops_quantize`, `ops_control`), `importer` (the graph walk), `backend` (ONNX's backend API).

Opsets: the default domain from opset 7 on; each converter reads the attributes and inputs of
the opset the model imports (axes as attributes before 13, as inputs after, ...).  An op type
with no converter whose ONNX schema defines it as a function of other ops is built from that
function.  Which op types convert and how many of ONNX's own test cases pass is printed by
``benchmarks/onnx_conformance.py``.

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

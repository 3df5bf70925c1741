"""``df.onnx``: models in the ONNX interchange format, in and out.

- `import_model(path_or_proto, trainable=False)` builds an ONNX model into the default graph
  through dataflow's own ops and returns an `ImportedModel` (``.graph``, ``.inputs`` and
  ``.outputs`` keyed by ONNX names, ``.run(feeds)``).
- `export(fetches, feeds, path, opset=...)` writes the part of a graph that computes some
  fetches from some feeds as an ONNX model: feeds become graph inputs, constants and variables'
  values become initializers, a ``cond`` becomes an ``If`` and a ``while_loop`` a ``Loop``.
- `backend` is ``onnx.backend.base.Backend`` over dataflow, for ONNX's conformance tests.

Layer: io (``docs/architecture.md``): it may import the framework, ops, primitives and the
client; nothing above.  The modules, importing: `reader` (bytes to protos and arrays, bounded),
`converters` (the table of op types and the node context), one module per family of ops with
one converter per ONNX op type (`ops_math`, `ops_array`, `ops_nn`, `ops_image`, `ops_rnn`,
`ops_quantize`, `ops_control`), `importer` (the graph walk), `backend` (ONNX's backend API);
exporting: `exporter` (the entry point, ``If`` and ``Loop``), `export_ops` (one table of op
mappings) and `control_flow` (which cond branch or loop each op belongs to).

Opsets: the importer reads the default domain from opset 7 on; each converter reads the
attributes and inputs of the opset the model imports (axes as attributes before 13, as inputs
after, ...).  An op type with no converter whose ONNX schema defines it as a function of other
ops is built from that function.  Which op types convert and how many of ONNX's own test cases
pass is printed by ``benchmarks/onnx_conformance.py``.  The exporter writes opsets 13 to 21.

Invariants:
- ``import dataflow`` does not import the ``onnx`` package: this package is loaded on first use
  of ``df.onnx`` and imports ``onnx`` (the optional extra ``dataflow[onnx]``) when a model is
  read or written.
- A model file is untrusted: it is parsed as data, never run; every size it declares is checked
  before anything is allocated; tensors stored in other files are refused.
- Every import failure is an `OnnxImportError` naming the model and the node or tensor at
  fault; all op types that cannot be built are named together, each with its node.  Every op
  that cannot be exported is named in one `OnnxExportError`, with the user's file and line.
"""

from __future__ import annotations

from .importer import ImportedModel, import_model
from .reader import OnnxImportError

_EXPORTED = ("export", "OnnxExportError", "DEFAULT_OPSET")
__all__ = ["ImportedModel", "OnnxImportError", "import_model", *_EXPORTED]


def __getattr__(name: str):
    # The exporter imports the optional ``onnx`` package at its top; load it on first use.
    if name in _EXPORTED:
        from . import exporter

        return getattr(exporter, name)
    raise AttributeError(f"module 'dataflow.io.onnx' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTED))

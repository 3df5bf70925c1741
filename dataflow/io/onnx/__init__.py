"""``df.onnx``: dataflow graphs as ONNX models.

`export` writes the part of a graph that computes some fetches from some feeds as an ONNX
model (``dataflow/io/onnx/exporter.py``; the op mappings are in ``export_ops.py``): feeds
become graph inputs, constants and variables' values become initializers, a ``cond`` becomes
an ``If`` and a ``while_loop`` a ``Loop``.

Layer: io.  The optional package ``onnx`` (the extra ``dataflow[onnx]``) is imported only
when a function here is first used: ``import dataflow`` never imports it, and the core install
stays numpy and graphviz.
"""

from __future__ import annotations

__all__ = ["export"]


def __getattr__(name: str):
    # The exporter imports the optional ``onnx`` package at its top; load it on first use.
    if name in ("export", "OnnxExportError", "DEFAULT_OPSET"):
        from . import exporter

        return getattr(exporter, name)
    raise AttributeError(f"module 'dataflow.io.onnx' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | {"export", "OnnxExportError", "DEFAULT_OPSET"})

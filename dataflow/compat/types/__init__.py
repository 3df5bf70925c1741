"""``df.types``: TensorFlow 2's ``tf.types`` namespace.

``df.types.experimental`` holds the protocol by which an object decides when a traced function
retraces (`TraceType`, `SupportsTracingProtocol`) and the kinds of traced functions.
"""

from . import experimental

__all__ = ["experimental"]

"""``df.linalg``: linear algebra (``tf.linalg``); for now the QR decomposition."""

from .ops.linalg_ops import norm, qr

__all__ = ["norm", "qr"]

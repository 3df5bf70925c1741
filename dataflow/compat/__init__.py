"""``df.compat``: ``df.compat.v1`` (all of dataflow, as ``tf.compat.v1``) and the text helpers
of ``tf.compat``.

``dataflow.compat.v1`` is the package ``dataflow`` itself, so that ``import
dataflow.compat.v1 as tf`` (for ``import tensorflow.compat.v1 as tf``) gives every name the
package offers; the package binds it when it has been imported (``dataflow/__init__.py``).

Layer: compat, just below the package root: its modules are TensorFlow's namespaces
(``df.math``, ``df.random``, ``df.sparse``, ...) and spellings, made of names defined in the
layers below, which they may all import; nothing in ``dataflow`` imports them but the root.
`old_paths` keeps the import paths modules had before they moved into their folders.
"""

from __future__ import annotations

from typing import Union


def as_bytes(bytes_or_text: Union[bytes, bytearray, str], encoding: str = "utf-8") -> bytes:
    """``bytes_or_text`` as bytes (text is encoded)."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Union[bytes, str], encoding: str = "utf-8") -> str:
    """``bytes_or_text`` as text (bytes are decoded)."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value) -> str:
    """``value`` as text: bytes are decoded, anything else goes through ``str``."""
    return as_text(value) if isinstance(value, bytes) else str(value)


__all__ = ["as_bytes", "as_str", "as_str_any", "as_text", "v1"]

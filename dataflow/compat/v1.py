"""``df.compat.v1``: the whole of dataflow under TensorFlow 2's ``tf.compat.v1`` path, so that
``import dataflow.compat.v1 as tf`` (for ``import tensorflow.compat.v1 as tf``) works.

Names are looked up in ``dataflow`` when read, so this module always offers what the package
does, whatever was added to it after this module was imported.
"""

from __future__ import annotations

import dataflow as _dataflow


def __getattr__(name: str):
    try:
        return getattr(_dataflow, name)
    except AttributeError:
        raise AttributeError(f"module 'dataflow.compat.v1' has no attribute '{name}'") from None


def __dir__() -> list[str]:
    return sorted(set(dir(_dataflow)) - {"__path__", "__file__"})

"""The switch between TensorFlow 2's and TensorFlow 1's ``==`` on values that hold their value.

Role: one process-wide setting read by the ``==``, ``!=`` and ``hash`` of eager tensors
(`dataflow.eager.EagerTensor`) and of variables made eagerly (`dataflow.ops.variables`).

- On (the default, TensorFlow 2's behaviour): ``x == y`` and ``x != y`` compare elementwise
  and give a bool tensor, and such values are unhashable: ``x.ref()`` is the key to use in a
  dict or a set (``ref().deref()`` gives the value back).
- Off (``disable_tensor_equality()``, TensorFlow 1's behaviour): they compare by identity and
  hash by ``id``.

Invariant: graph tensors and variables made in a graph (TensorFlow 1's graph mode) compare by
identity and hash by ``id`` with either setting, as in TensorFlow, where graph-mode equality
is object equality.  Library code that keys values it did not make itself uses ``ref()`` or
``id()``, so it works with either setting.
"""

from __future__ import annotations

_elementwise = [True]


def tensor_equality_enabled() -> bool:
    """Whether eager tensors and eager variables compare elementwise and are unhashable."""
    return _elementwise[0]


def enable_tensor_equality() -> None:
    """Eager tensors and variables compare elementwise with ``==`` and are unhashable
    (``x.ref()`` is the key to use), as in TensorFlow 2."""
    _elementwise[0] = True


def disable_tensor_equality() -> None:
    """Eager tensors and variables compare by identity with ``==`` and hash by identity, as
    in TensorFlow 1."""
    _elementwise[0] = False

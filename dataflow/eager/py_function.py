"""``df.py_function``: a Python function run eagerly as an op of a graph.

Unlike `py_func` (``numpy_function``), whose function takes and returns numpy arrays,
``py_function``'s function takes `EagerTensor` values and runs eagerly (`eager_mode`), so it
may use dataflow's ops on them, as ``tf.py_function`` does; what it returns (tensors or
values) becomes the op's outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

import numpy as np

from ..framework.tensor_conversion import convert_to_tensor
from ..ops.misc_ops import py_func
from .context import eager_mode
from .tensor import EagerTensor

__all__ = ["py_function"]


def py_function(
    func: Optional[Callable] = None,
    inp=None,
    Tout=None,  # noqa: N803 - TensorFlow's name
    name: Optional[str] = None,
):
    """An op that calls ``func`` eagerly on the values of ``inp`` (`EagerTensor` each) and
    outputs what it returns, of the dtypes ``Tout`` (one dtype, or a list of them)."""
    if func is None or inp is None or Tout is None:
        raise TypeError("py_function needs func, inp and Tout")
    inputs = [convert_to_tensor(x) for x in inp]
    dtypes = [x.dtype for x in inputs]

    def eagerly(*arrays):
        with eager_mode():
            args = [EagerTensor(np.asarray(a), d) for a, d in zip(arrays, dtypes)]
            result = func(*args)
        if isinstance(result, (list, tuple)):
            return [_value(r) for r in result]
        return _value(result)

    return py_func(eagerly, inputs, Tout, stateful=True, name=name or "EagerPyFunc")


def _value(result):
    return result.numpy() if isinstance(result, EagerTensor) else result

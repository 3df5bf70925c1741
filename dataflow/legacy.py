"""TensorFlow 1.x's old names and the switches of TensorFlow 2's ``tf.compat.v1``.

Programs written for TensorFlow 1.x call ``tf.arg_max``; programs ported to TensorFlow 2 start
with ``tf.disable_v2_behavior()`` or ``tf.compat.v1.disable_eager_execution()``.  Graph mode
is the default here, so the switches that would turn TensorFlow 2's behaviour off are accepted
as they are; the shape switch (`dataflow.tensor_shape`) and eager execution switch for real.
"""

from __future__ import annotations

from typing import Optional

from . import dtypes as _dtypes
from .ops.math_ops import argmax, argmin
from .tensor_shape import disable_v2_tensorshape, enable_v2_tensorshape


def arg_max(input, dimension, output_type=_dtypes.int64, name: Optional[str] = None):  # noqa: A002
    """``argmax`` under its TensorFlow 1.x name (the axis is called ``dimension``)."""
    return argmax(input, dimension, name=name, output_type=output_type)


def arg_min(input, dimension, output_type=_dtypes.int64, name: Optional[str] = None):  # noqa: A002
    """``argmin`` under its TensorFlow 1.x name (the axis is called ``dimension``)."""
    return argmin(input, dimension, name=name, output_type=output_type)


def disable_v2_behavior() -> None:
    """TensorFlow 1.x behaviour, the default: graph mode, and shapes whose items are
    `Dimension` objects (`disable_v2_tensorshape`)."""
    disable_v2_tensorshape()


def enable_v2_behavior() -> None:
    """TensorFlow 2's behaviour: eager execution (`dataflow.eager.enable_eager_execution`, at
    program start) and shapes whose items are plain integers (`enable_v2_tensorshape`)."""
    from .eager.context import enable_eager_execution

    enable_eager_execution()
    enable_v2_tensorshape()


def disable_eager_execution() -> None:
    """Accepted: dataflow always builds graphs."""

"""TensorFlow 1.x's old names and the switches of TensorFlow 2's ``tf.compat.v1``.

Programs written for TensorFlow 1.x call ``tf.arg_max``; programs ported to TensorFlow 2 start
with ``tf.disable_v2_behavior()`` or ``tf.compat.v1.disable_eager_execution()``.  Here graph
mode is the default (eager mode is opted into with ``enable_eager_execution`` or
``with eager_mode():``), so the switches that ask for TensorFlow 1.x's graph mode have nothing
to switch at program start and are accepted as they are; the shape switch
(`dataflow.tensor_shape`) switches for real.
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
    """Accepted: graph mode is already the default here.  Eager mode is on only where a
    program asks for it (``enable_eager_execution``, ``with eager_mode():``), which TF1
    programs that call this at start-up do not."""

"""``df.nn``: the neural-network ops (``tf.compat.v1.nn``), defined in ``ops/nn_ops.py`` and
``ops/conv_ops.py`` (convolution and pooling) and ``ops/norm_ops.py`` (fused batch norm, LRN)."""

from .ops import conv_ops as _conv_ops
from .ops import nn_ops as _nn_ops
from .ops import norm_ops as _norm_ops
from .ops.conv_ops import *  # noqa: F403
from .ops.nn_ops import *  # noqa: F403
from .ops.norm_ops import *  # noqa: F403

__all__ = sorted(_nn_ops.__all__ + _conv_ops.__all__ + _norm_ops.__all__)

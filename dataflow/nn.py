"""``df.nn``: the neural-network ops (``tf.compat.v1.nn``), defined in ``ops/nn_ops.py``."""

from .ops.nn_ops import *  # noqa: F403
from .ops.nn_ops import __all__  # noqa: F401

"""``df.bitwise``: TensorFlow's ``tf.bitwise`` names, the integer bit operations of
``ops/bitwise_ops.py``."""

from ..ops.bitwise_ops import *  # noqa: F403
from ..ops.bitwise_ops import __all__  # noqa: F401

"""``df.manip``: TensorFlow 1.x's ``tf.manip`` names, each the same function as its top-level
spelling (``df.manip.roll is df.roll``)."""

from ..ops.array_ops import reshape
from ..ops.extra_array_ops import roll
from ..ops.gather_ops import tile
from ..ops.nd_index_ops import gather_nd, scatter_nd
from ..ops.reverse_ops import reverse
from ..ops.space_batch_ops import batch_to_space_nd, space_to_batch_nd

__all__ = [
    "batch_to_space_nd",
    "gather_nd",
    "reshape",
    "reverse",
    "roll",
    "scatter_nd",
    "space_to_batch_nd",
    "tile",
]

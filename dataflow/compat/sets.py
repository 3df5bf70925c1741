"""``df.sets``: TensorFlow 1.x's ``tf.sets``, set operations over the last dimension."""

from ..ops.set_ops import set_difference, set_intersection, set_size, set_union

difference = set_difference
intersection = set_intersection
size = set_size
union = set_union

__all__ = [
    "difference",
    "intersection",
    "set_difference",
    "set_intersection",
    "set_size",
    "set_union",
    "size",
    "union",
]

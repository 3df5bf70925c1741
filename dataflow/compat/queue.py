"""``df.queue``: TensorFlow 1.x's ``tf.queue`` names, the queue classes of the top level
(``df.queue.FIFOQueue is df.FIFOQueue``)."""

from ..ops.queue_ops import (
    FIFOQueue,
    PaddingFIFOQueue,
    PriorityQueue,
    QueueBase,
    RandomShuffleQueue,
)

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]

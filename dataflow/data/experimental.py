"""``df.data.experimental``: TF1's ``tf.data.experimental`` constants and the transformations
that are compositions of `Dataset` methods (each returns a function of a dataset, for
``dataset.apply``)."""

from __future__ import annotations

from . import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "map_and_batch",
    "map_and_batch_with_legacy_function",
    "shuffle_and_repeat",
]


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``dataset.shuffle(buffer_size, seed).repeat(count)``: each pass over the dataset in a
    new order, ``count`` passes (forever when None)."""

    def apply(dataset):
        return dataset.shuffle(buffer_size, seed).repeat(count)

    return apply


def map_and_batch(
    map_func,
    batch_size,
    num_parallel_batches=None,
    drop_remainder=False,
    num_parallel_calls=None,
):
    """``dataset.map(map_func).batch(batch_size, drop_remainder)``; the parallelism arguments
    tune TensorFlow's fused kernel and change no element."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("`num_parallel_batches` and `num_parallel_calls` are mutually exclusive")

    def apply(dataset):
        return dataset.map(map_func).batch(batch_size, drop_remainder=drop_remainder)

    return apply


map_and_batch_with_legacy_function = map_and_batch

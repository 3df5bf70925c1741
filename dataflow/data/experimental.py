"""``df.data.experimental``: TF1's ``tf.data.experimental`` constants and the transformations
that are compositions of `Dataset` methods (each returns a function of a dataset, for
``dataset.apply``)."""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dtypes
from . import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset

_INT64_MAX = np.iinfo(np.int64).max

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Counter",
    "enumerate_dataset",
    "map_and_batch",
    "map_and_batch_with_legacy_function",
    "shuffle_and_repeat",
    "take_while",
    "unbatch",
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


def Counter(start=0, step=1, dtype=_dtypes.int64):  # noqa: N802 - TensorFlow's name
    """The numbers ``start``, ``start + step``, ... without end (until int64 overflows), of
    ``dtype``."""
    from ..ops.math_ops import cast

    stop = _INT64_MAX if step > 0 else -_INT64_MAX - 1
    counted = Dataset.range(start, stop, step)
    dtype = _dtypes.as_dtype(dtype)
    return counted if dtype == _dtypes.int64 else counted.map(lambda x: cast(x, dtype))


def enumerate_dataset(start=0):
    """Each element ``e`` of a dataset as ``(index, e)``, the int64 index counting from
    ``start``."""

    def apply(dataset):
        return Dataset.zip((Dataset.range(start, _INT64_MAX), dataset))

    return apply


def unbatch():
    """``dataset.unbatch()``: each element split along its first dimension."""
    return lambda dataset: dataset.unbatch()


def take_while(predicate):
    """``dataset.take_while(predicate)``: the elements before the first that fails
    ``predicate``."""
    return lambda dataset: dataset.take_while(predicate)

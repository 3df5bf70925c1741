"""Lookup tables filled from a dataset (``tf.data.experimental``'s ``DatasetInitializer``,
``table_from_dataset`` and ``index_table_from_dataset``).

The dataset is read whole, in one batch, when the table's initializer runs
(``df.tables_initializer()``): its elements must be ``(key, value)`` pairs of scalars.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import name_scope
from ..ops.lookup_ops import KeyValueTensorInitializer, StaticHashTable, StaticVocabularyTable
from .dataset_ops import Dataset

__all__ = ["DatasetInitializer", "index_table_from_dataset", "table_from_dataset"]

_ALL_AT_ONCE = np.iinfo(np.int64).max


def _check_pairs(dataset, function: str) -> None:
    if not isinstance(dataset, Dataset):
        raise TypeError(f"{function} takes a Dataset, got {type(dataset).__name__}")
    spec = dataset.element_spec
    if not (isinstance(spec, tuple) and len(spec) == 2):
        raise ValueError(
            f"{function}: the dataset's elements must be (key, value) pairs, got {spec!r}"
        )
    for part in spec:
        if getattr(part, "shape", None) is None or part.shape.ndims != 0:
            raise ValueError(f"{function}: keys and values must be scalars, got {spec!r}")


class DatasetInitializer(KeyValueTensorInitializer):
    """Fills a static table with the ``(key, value)`` pairs of ``dataset``."""

    def __init__(self, dataset):
        _check_pairs(dataset, "DatasetInitializer")
        keys, values = dataset.batch(_ALL_AT_ONCE).get_single_element()
        super().__init__(keys, values, name="dataset_init")


def table_from_dataset(
    dataset=None,
    num_oov_buckets=0,
    vocab_size=None,
    default_value=None,
    hasher_spec=None,
    key_dtype=_dtypes.string,
    name=None,
):
    """A table of ``dataset``'s ``(key, value)`` pairs (the first ``vocab_size`` of them when
    given): a missing key gives ``default_value``, or with ``num_oov_buckets`` one of that many
    buckets after the vocabulary, by the key's FarmHash fingerprint (the default
    ``hasher_spec``, the only one here)."""
    if hasher_spec is not None and str(hasher_spec).lower() not in ("fasthash", "fast"):
        raise ValueError(
            "table_from_dataset: only the FarmHash fingerprint hashes keys here, got "
            f"{hasher_spec!r}"
        )
    if vocab_size is not None:
        if vocab_size < 1:
            raise ValueError(f"vocab_size must be greater than 0, got {vocab_size}.")
        dataset = dataset.take(vocab_size)
    _check_pairs(dataset, "table_from_dataset")
    key_dtype = _dtypes.as_dtype(key_dtype)
    with name_scope(name, "string_to_index"):
        initializer = DatasetInitializer(dataset)
        if initializer.key_dtype.is_integer != key_dtype.is_integer:
            raise ValueError(
                f"table_from_dataset: key_dtype {key_dtype.name} does not match the dataset's "
                f"keys, {initializer.key_dtype.name}"
            )
        if num_oov_buckets:
            return StaticVocabularyTable(initializer, num_oov_buckets, lookup_key_dtype=key_dtype)
        return StaticHashTable(initializer, default_value)


def index_table_from_dataset(
    dataset=None,
    num_oov_buckets=0,
    vocab_size=None,
    default_value=-1,
    hasher_spec=None,
    key_dtype=_dtypes.string,
    name=None,
):
    """A table from each key of ``dataset`` to its position (int64); other keys as
    `table_from_dataset`."""
    indexed = dataset.enumerate().map(lambda index, key: (key, index))
    return table_from_dataset(
        indexed, num_oov_buckets, vocab_size, default_value, hasher_spec, key_dtype, name
    )

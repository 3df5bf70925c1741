"""Datasets in traced and converted functions, as TF2 programs use them in ``tf.function``.

How datasets meet the eager layer below, which cannot import this package:

- With tracing (``df.function``): a `Dataset` argument is traced by its `DatasetSpec`
  (`dataset_arguments`), so datasets of one element spec share a trace.
- With AutoGraph: ``for x in dataset`` (or over an iterator of the graph) stages a while loop
  that reads one element per iteration through the graph's iterator ops (`OwnedIterator`),
  a new iterator per loop, so each loop starts the dataset again; ``break`` and ``return``
  end it as in any staged loop.  In converted code run eagerly the loop runs as Python, over
  eager tensors.  ``len(dataset)`` in converted code is the dataset's cardinality, checked to
  be known and finite when the graph runs, as TensorFlow's AutoGraph has it.
"""

from __future__ import annotations

from ..eager.autograph.operators import register_read_in_graph
from ..eager.context import executing_eagerly
from ..framework.graph import control_dependencies
from ..ops import math_ops, string_ops
from ..ops.array_ops import identity
from ..ops.misc_ops import Assert
from .dataset_ops import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
)
from .owned_iterator import OwnedIterator


# -- a dataset as an argument of a df.function ----------------------------------------------------
# -- for loops and len() in converted code ---------------------------------------------------------
def _start_reading(iterated):
    """How a staged loop reads ``iterated`` (a dataset or an iterator) in the graph being built,
    or None for a loop that runs as Python (executing eagerly)."""
    if executing_eagerly():
        return None
    if isinstance(iterated, Dataset):
        iterated = OwnedIterator(iterated)  # built into the graph: not executing eagerly
    return iterated._reader_in_graph()


def _length(dataset: Dataset):
    """``len(dataset)`` in converted code: its cardinality, which the graph checks to be known
    and finite (``InvalidArgumentError`` when it runs otherwise)."""
    if executing_eagerly():
        return None  # Python's len: an int, or TensorFlow's TypeError
    count = dataset.cardinality()
    message = string_ops.string_join(
        ["len requires dataset with definitive cardinality, got ", string_ops.as_string(count)]
    )
    known = math_ops.logical_and(
        math_ops.not_equal(count, INFINITE_CARDINALITY),
        math_ops.not_equal(count, UNKNOWN_CARDINALITY),
    )
    with control_dependencies([Assert(known, [message])]):
        return identity(count)


register_read_in_graph(Dataset, _start_reading, _length)
register_read_in_graph(OwnedIterator, _start_reading)

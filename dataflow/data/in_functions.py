"""Datasets in traced and converted functions, as TF2 programs use them in ``tf.function``.

Two registrations with the eager layer below, which cannot import this package:

- With tracing (``df.function``): a `Dataset` argument is keyed by its `DatasetSpec` (its
  element spec), so another dataset of the same structure, dtypes and shapes reuses the trace.
  The trace gets a ``variant`` placeholder and a dataset reading it (a ``dataset_argument``
  stage); a call feeds it the argument's pipeline as one value (`_PipelineValue`), which the
  stage runs where the graph reads the dataset.  A dataset must be made eagerly to be passed
  this way (its tensors' values are fed).
- With AutoGraph: ``for x in dataset`` (or over an iterator of the graph) stages a while loop
  that reads one element per iteration through the graph's iterator ops (`OwnedIterator`),
  a new iterator per loop, so each loop starts the dataset again; ``break`` and ``return``
  end it as in any staged loop.  In converted code run eagerly the loop runs as Python, over
  eager tensors.  ``len(dataset)`` in converted code is the dataset's cardinality, checked to
  be known and finite when the graph runs, as TensorFlow's AutoGraph has it.
"""

from __future__ import annotations

import numpy as np

from ..eager.autograph.operators import register_read_in_graph
from ..eager.context import executing_eagerly
from ..eager.tensor import EagerTensor
from ..eager.tracing.argument_kinds import register_traced_argument_kind
from ..framework import dtypes as _dtypes
from ..framework.graph import control_dependencies
from ..ops import math_ops, string_ops
from ..ops.array_ops import identity
from ..ops.constant_op import placeholder
from ..ops.misc_ops import Assert
from .dataset_ops import (
    INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY,
    Dataset,
    _describe_pipeline,
    _flatten,
    _Stage,
)
from .iterator_ops import _eager_value
from .owned_iterator import OwnedIterator
from .pipeline import _PipelineValue
from .structures import DatasetSpec


# -- a dataset as an argument of a df.function ----------------------------------------------------
def _spec_of(dataset: Dataset) -> DatasetSpec:
    return DatasetSpec(dataset.element_spec)


def _as_variant(dataset: Dataset) -> EagerTensor:
    """The value a call feeds to the trace's placeholder for ``dataset``: its pipeline."""
    records, tensors = _describe_pipeline(dataset._stage)
    arrays = [_eager_value(t, "Passing a dataset to a df.function") for t in tensors]
    value = np.empty((), dtype=object)
    value[()] = _PipelineValue(records, arrays)
    return EagerTensor(value, _dtypes.variant, "DatasetArgument")


def _trace_input(spec: DatasetSpec):
    """The placeholder a trace gets for a dataset argument of ``spec``, and the dataset the
    traced function sees, which reads what the placeholder is fed."""
    tensor = placeholder(_dtypes.variant, [], name="dataset")
    specs = _flatten(spec.element_spec)
    dataset = Dataset(
        _Stage("dataset_argument", [tensor]),
        spec.element_spec,
        [s.dtype for s in specs],
        [s.shape for s in specs],
    )
    return tensor, dataset


register_traced_argument_kind(Dataset, DatasetSpec, _spec_of, _as_variant, _trace_input)


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

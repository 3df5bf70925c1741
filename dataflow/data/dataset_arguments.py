"""Datasets as arguments of a ``df.function``: what a trace gets for one, what a call feeds.

A `Dataset` argument's trace type is its `DatasetSpec` (TensorFlow's tracing protocol:
``Dataset.__tf_tracing_type__``, set in `structures`), so datasets of one element spec share a
trace.  The trace gets a dataset reading a ``variant`` placeholder (a ``dataset_argument``
stage, `dataset_reading_a_placeholder`); a call feeds that placeholder the argument's pipeline
as one value (`_PipelineValue`), which the stage runs where the graph reads the dataset.  A
dataset must be made eagerly to be passed this way (its tensors' values are fed).

Layer: data (``dataflow.data``).
"""

from __future__ import annotations

import numpy as np

from ..eager.tensor import EagerTensor
from ..framework import dtypes as _dtypes
from ..ops.constant_op import placeholder
from .dataset_ops import Dataset, _describe_pipeline, _flatten, _Stage
from .iterator_ops import _eager_value
from .pipeline import _PipelineValue


def dataset_reading_a_placeholder(spec, name=None) -> Dataset:
    """What a trace gets for a dataset argument of ``spec`` (`DatasetSpec.placeholder_value`):
    a dataset reading a ``variant`` placeholder, which a call feeds with its argument's
    pipeline."""
    tensor = placeholder(_dtypes.variant, [], name=name or "dataset")
    specs = _flatten(spec.element_spec)
    dataset = Dataset(
        _Stage("dataset_argument", [tensor]),
        spec.element_spec,
        [s.dtype for s in specs],
        [s.shape for s in specs],
    )
    dataset._argument_placeholder = tensor
    return dataset


def fed_tensors_of(dataset: Dataset) -> list:
    """The tensor a call feeds for a dataset argument (`DatasetSpec.to_tensors`): the trace's
    placeholder for the dataset the trace got, else the argument's pipeline as one value."""
    made = getattr(dataset, "_argument_placeholder", None)
    return [made] if made is not None else [_as_variant(dataset)]


def _as_variant(dataset: Dataset) -> EagerTensor:
    """The value a call feeds to the trace's placeholder for ``dataset``: its pipeline."""
    records, tensors = _describe_pipeline(dataset._stage)
    arrays = [_eager_value(t, "Passing a dataset to a df.function") for t in tensors]
    value = np.empty((), dtype=object)
    value[()] = _PipelineValue(records, arrays)
    return EagerTensor(value, _dtypes.variant, "DatasetArgument")

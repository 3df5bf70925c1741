"""``df.types.experimental``: TensorFlow 2's ``tf.types.experimental``.

- `TraceType` and `SupportsTracingProtocol`: a class whose objects are ``df.function``
  arguments implements ``__tf_tracing_type__(context)`` returning a `TraceType` of its own, and
  so decides which calls share a trace (`dataflow.framework.trace_type`,
  `dataflow.eager.tracing.signatures`).  `TensorSpec` and the composite specs are trace types.
- `PolymorphicFunction` (also `GenericFunction`) is what ``df.function`` returns,
  `ConcreteFunction` one of its traces, and `FunctionType` the type of one (its parameters'
  trace types and its output's, `dataflow.eager.tracing.introspection`).
- `TensorLike`: the values a tensor argument may be given as.
"""

from typing import Union

import numpy as np

from ...eager.tracing.introspection import FunctionType
from ...eager.tracing.tracing import ConcreteFunction, Function
from ...framework.graph import Tensor
from ...framework.indexed_slices import IndexedSlices
from ...framework.ragged_tensor import RaggedTensor
from ...framework.sparse_tensor import SparseTensor
from ...framework.trace_type import SupportsTracingProtocol, TraceType

PolymorphicFunction = Function
GenericFunction = Function

TensorLike = Union[
    Tensor,
    SparseTensor,
    RaggedTensor,
    IndexedSlices,
    np.ndarray,
    np.generic,
    int,
    float,
    bool,
    str,
    bytes,
    complex,
    tuple,
    list,
]

__all__ = [
    "ConcreteFunction",
    "FunctionType",
    "GenericFunction",
    "PolymorphicFunction",
    "SupportsTracingProtocol",
    "TensorLike",
    "TraceType",
]

"""The table of ONNX op types and the functions that build each one from dataflow's ops.

Role: `CONVERTERS` maps an ONNX op type (default domain) to the one function that builds it;
the op-family modules (`ops_math`, `ops_array`, `ops_nn`, `ops_control`) fill it with
`converts`.  A converter receives a `NodeContext` (the node's inputs as tensors, its attributes
with ONNX's defaults, the opset it is read under) and returns its outputs: a tensor, or a list
with None for an optional output it does not produce.

Invariants: one converter per op type (`converts` refuses a second); a converter builds only
through dataflow's op functions, so an imported model is an ordinary graph; an argument ONNX
passes as a tensor but dataflow needs when the graph is built (axes, pads) is read with
`NodeContext.static_ints`, which names the node when it is not a constant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

import numpy as np

from ...framework import dtypes
from ...framework.graph import Tensor
from ...framework.tensor_conversion import numpy_value_or_none
from ...ops import assorted_ops, bitwise_ops, selection_ops
from ...ops.constant_op import constant
from ...ops.static_values import known_int_value
from .reader import OnnxImportError

CONVERTERS: dict[str, Callable[[NodeContext], Any]] = {}

_REQUIRED = object()


def converts(*op_types: str):
    """Registers the decorated function as the converter of ``op_types``."""

    def register(function):
        for op_type in op_types:
            if op_type in CONVERTERS:
                raise ValueError(f"ONNX op type {op_type} has two converters")
            CONVERTERS[op_type] = function
        return function

    return register


class NodeContext:
    """One ONNX node while it is built: its inputs (tensors, None for an omitted optional input),
    its attributes, the opset version of its domain, and where it is for error messages."""

    def __init__(self, builder, node, inputs: list, attrs: dict, opset: int, where: str):
        self.builder = builder
        self.node = node
        self.op_type = node.op_type
        self.name = node.name
        self.inputs = inputs
        self.attrs = attrs
        self.opset = opset
        self.where = where
        self.num_outputs = len(node.output)

    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"{self.where}: {message}")

    def attr(self, name: str, default: Any = _REQUIRED) -> Any:
        """The attribute ``name``, or ``default`` (ONNX's default) when the node omits it."""
        if name in self.attrs:
            return self.attrs[name]
        if default is _REQUIRED:
            raise self.error(f"the required attribute {name!r} is missing")
        return default

    def input(self, index: int) -> Optional[Tensor]:
        """Input ``index``, or None when the node omits it (absent or named "")."""
        return self.inputs[index] if index < len(self.inputs) else None

    def required_input(self, index: int) -> Tensor:
        tensor = self.input(index)
        if tensor is None:
            raise self.error(f"input {index} is required")
        return tensor

    def static(self, index: int) -> Optional[np.ndarray]:
        """The value of input ``index`` if it is known when the graph is built, else None."""
        tensor = self.input(index)
        if tensor is None:
            return None
        value = self.builder.static_value(tensor)
        if value is not None:
            return value
        value = numpy_value_or_none(tensor)
        if value is None and tensor.dtype.is_integer:
            value = known_int_value(tensor)
        return None if value is None else np.asarray(value)

    def static_ints(self, index: int, what: str, default=None) -> Optional[list]:
        """Input ``index`` as a list of ints, which must be known when the graph is built (the
        default when the input is omitted)."""
        if self.input(index) is None:
            return default
        value = self.static(index)
        if value is None:
            raise self.error(
                f"{what} (input {index}) must be a constant, known when the model is imported"
            )
        return [int(v) for v in np.asarray(value).reshape(-1)]

    def axes(self, index: int, attribute: str = "axes") -> Optional[list]:
        """Axes an op takes as an attribute in older opsets and as an input in newer ones."""
        if attribute in self.attrs:
            return list(self.attrs[attribute])
        return self.static_ints(index, attribute)


def rank_of(ctx: NodeContext, tensor: Tensor, what: str = "the input") -> int:
    """The static rank of ``tensor``, which the conversion needs."""
    rank = tensor.shape.ndims
    if rank is None:
        raise ctx.error(f"the rank of {what} must be known when the model is imported")
    return rank


def normalize_axis(ctx: NodeContext, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


# -- unsigned integers -----------------------------------------------------------------------------
# dataflow's arithmetic, comparisons and casts take uint8 but not uint16/32/64.  Converters
# compute with such values as int64: uint16 and uint32 exactly (reinterpreted as the signed
# type of their width, widened, and masked back to their value); uint64 reinterpreted as int64,
# where addition, subtraction, multiplication and the bitwise ops give the same bits.
WIDE_UNSIGNED = (dtypes.uint16, dtypes.uint32, dtypes.uint64)
_SAME_WIDTH_SIGNED = {dtypes.uint16: dtypes.int16, dtypes.uint32: dtypes.int32}


def as_int64(x):
    """``x`` (of a type in `WIDE_UNSIGNED`) as int64: the same value for uint16 and uint32,
    the same bits for uint64; any other ``x`` unchanged."""
    if x.dtype == dtypes.uint64:
        return assorted_ops.bitcast(x, dtypes.int64)
    if x.dtype in _SAME_WIDTH_SIGNED:
        signed = assorted_ops.bitcast(x, _SAME_WIDTH_SIGNED[x.dtype])
        mask = constant((1 << (x.dtype.size * 8)) - 1, dtype=dtypes.int64)
        return bitwise_ops.bitwise_and(selection_ops.cast(signed, dtypes.int64), mask)
    return x


def from_int64(y, dtype):
    """The int64 ``y`` as ``dtype``, wrapping modulo its width as C's casts do (the inverse of
    `as_int64`); for other dtypes ``y`` unchanged."""
    if dtype == dtypes.uint64:
        return assorted_ops.bitcast(y, dtypes.uint64)
    if dtype in _SAME_WIDTH_SIGNED:
        return assorted_ops.bitcast(selection_ops.cast(y, _SAME_WIDTH_SIGNED[dtype]), dtype)
    return y

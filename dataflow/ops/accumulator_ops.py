"""Conditional accumulators: gradients from several workers summed until enough have come.

``ConditionalAccumulator`` (dense gradients) and ``SparseConditionalAccumulator`` (gradients
as indices and rows of values) mirror ``tf.compat.v1``'s, which ``SyncReplicasOptimizer``
builds on.  An accumulator lives in the Session (its handle op makes it the first time a run
needs it) and keeps a global step:

- ``apply_grad(grad, local_step)`` adds ``grad`` unless ``local_step`` is older than the
  accumulator's global step (a stale gradient is dropped, as TensorFlow drops it);
- ``take_grad(num_required)`` waits until at least ``num_required`` gradients have been added,
  returns their mean (``reduction_type="MEAN"``) or sum (``"SUM"``), empties the accumulator
  and advances its global step by one;
- ``set_global_step(step)`` sets the global step; ``num_accumulated()`` counts the gradients.

A sparse accumulator merges each gradient into the sorted list of rows it holds as
TensorFlow's kernel merges it (assuming sorted indices), and its mean divides each row by the
number of gradients that had that row.
"""

from __future__ import annotations

import collections
import threading
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.resource_containers import current_container, resource_key
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = [
    "ConditionalAccumulator",
    "ConditionalAccumulatorBase",
    "SparseConditionalAccumulator",
]

_POLL_SECONDS = 0.05
_GRADIENT_TYPES = frozenset({_dtypes.float16, _dtypes.float32, _dtypes.float64})


class _Accumulator:
    """The run-time accumulator behind a handle."""

    def __init__(self, attrs: dict, name: str):
        self.name = name
        self.sparse = attrs["sparse"]
        self.dtype = _dtypes.numpy_dtype(attrs["dtype"])
        self.shape: TensorShape = attrs["shape"]
        self.mean = attrs["reduction_type"] == "MEAN"
        self.global_step = 0
        self.count = 0
        self.changed = threading.Condition()
        self._clear()

    def _clear(self) -> None:
        self.sum = None  # dense: the summed array
        self.indices: list = []  # sparse: the rows held, their sums and counts
        self.rows: list = []
        self.row_counts: list = []

    def cancel(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def set_global_step(self, step: int) -> None:
        with self.changed:
            self.global_step = step

    # -- dense ------------------------------------------------------------------------------------
    def apply_dense(self, local_step: int, grad: np.ndarray) -> None:
        with self.changed:
            if local_step < self.global_step:
                return  # stale
            expected = self.sum.shape if self.sum is not None else None
            if expected is None and not self.shape.is_compatible_with(grad.shape):
                expected = self.shape.as_list()
            if expected is not None and list(expected) != list(grad.shape):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: expected {_dims(expected)}, got {_dims(grad.shape)}",
                )
            grad = grad.astype(self.dtype)
            self.sum = grad.copy() if self.sum is None else self.sum + grad
            self.count += 1
            self.changed.notify_all()

    def take_dense(self, context, num_required: int) -> np.ndarray:
        with self.changed:
            self._wait(context, num_required)
            result = self.sum / self.count if self.mean else self.sum
            self._taken()
            return result.astype(self.dtype)

    # -- sparse -----------------------------------------------------------------------------------
    def apply_sparse(self, local_step: int, indices, values, shape) -> None:
        with self.changed:
            if local_step < self.global_step:
                return
            values = np.asarray(values, dtype=self.dtype)
            indices = [int(i) for i in np.asarray(indices).reshape(-1)]
            if values.ndim == 0 or values.shape[0] != len(indices):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: the gradient has {len(indices)} indices and values of "
                    f"shape {_dims(values.shape)}",
                )
            if self.shape.ndims is not None:
                inner = self.shape.as_list()[1:]
                if not TensorShape(inner).is_compatible_with(values.shape[1:]):
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"Shape mismatch: expected values of shape {_dims([-1, *inner])}, got "
                        f"{_dims(values.shape)}",
                    )
            if self.rows and self.rows[0].shape != values.shape[1:]:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch: expected rows of shape {_dims(self.rows[0].shape)}, got "
                    f"{_dims(values.shape[1:])}",
                )
            if shape is not None and self.shape.ndims is not None:
                if not self.shape.is_compatible_with([int(d) for d in np.asarray(shape)]):
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"Shape mismatch: expected {self.shape}, got {_dims(np.asarray(shape))}",
                    )
            self._merge(indices, values)
            self.count += 1
            self.changed.notify_all()

    def _merge(self, indices: list, values: np.ndarray) -> None:
        """TensorFlow's merge of two lists of rows it takes to be sorted by index."""
        if self.count == 0 or not self.indices:
            self.indices = list(indices)
            self.rows = [v.copy() for v in values]
            self.row_counts = [1] * len(indices)
            return
        merged_indices, merged_rows, merged_counts = [], [], []
        i = j = 0
        while i < len(self.indices) and j < len(indices):
            if self.indices[i] < indices[j]:
                merged_indices.append(self.indices[i])
                merged_rows.append(self.rows[i])
                merged_counts.append(self.row_counts[i])
                i += 1
            elif self.indices[i] > indices[j]:
                merged_indices.append(indices[j])
                merged_rows.append(values[j].copy())
                merged_counts.append(1)
                j += 1
            else:
                merged_indices.append(indices[j])
                merged_rows.append(self.rows[i] + values[j])
                merged_counts.append(self.row_counts[i] + 1)
                i += 1
                j += 1
        for k in range(i, len(self.indices)):
            merged_indices.append(self.indices[k])
            merged_rows.append(self.rows[k])
            merged_counts.append(self.row_counts[k])
        for k in range(j, len(indices)):
            merged_indices.append(indices[k])
            merged_rows.append(values[k].copy())
            merged_counts.append(1)
        self.indices, self.rows, self.row_counts = merged_indices, merged_rows, merged_counts

    def take_sparse(self, context, num_required: int):
        with self.changed:
            self._wait(context, num_required)
            indices = np.asarray(self.indices, dtype=np.int64)
            inner = list(self.rows[0].shape) if self.rows else None
            if inner is None:
                known = self.shape.as_list()[1:] if self.shape.ndims else []
                inner = [d if d is not None else 0 for d in known]
            values = np.zeros([len(self.rows), *inner], dtype=self.dtype)
            for k, row in enumerate(self.rows):
                values[k] = row / self.row_counts[k] if self.mean else row
            if self.shape.ndims is not None:
                shape = [-1 if d is None else d for d in self.shape.as_list()]
            else:
                shape = [-1, *inner]
            self._taken()
            return indices, values, np.asarray(shape, dtype=np.int64)

    # -- shared -----------------------------------------------------------------------------------
    def _wait(self, context, num_required: int) -> None:
        if num_required < 1:
            raise InvalidArgumentError(
                None, None, f"Argument num_required must be positive, but was {num_required}"
            )
        while self.count < num_required:
            context.check_not_stopped(f"{num_required} gradients in accumulator '{self.name}'")
            self.changed.wait(_POLL_SECONDS)
        context.check_not_stopped(f"{num_required} gradients in accumulator '{self.name}'")

    def _taken(self) -> None:
        self.count = 0
        self._clear()
        self.global_step += 1


def _dims(shape) -> str:
    return "[" + ",".join(str(-1 if d is None else int(d)) for d in shape) + "]"


# -- ops -------------------------------------------------------------------------------------------
def _handle_kernel(attrs):
    key = resource_key(attrs)

    def handle(context):
        return context.resource(key, lambda: _Accumulator(attrs, attrs["shared_name"]))

    return handle


def _infer_handle(op):
    return [(_dtypes.resource, TensorShape([]))]


for _type in ("ResourceConditionalAccumulator", "ResourceSparseConditionalAccumulator"):
    define_op(_type, _infer_handle, _handle_kernel, stateful=True, inline=True, wants_context=True)


def _check_handle(op) -> None:
    if not op.inputs or op.inputs[0].dtype != _dtypes.resource:
        raise TypeError(f"{op.type}: input 0 must be an accumulator handle")


def _infer_nothing(op):
    _check_handle(op)
    return []


def _apply_dense_kernel(attrs):
    def apply(accumulator, local_step, gradient):
        accumulator.apply_dense(int(local_step), np.asarray(gradient))
        return ()

    return apply


def _apply_sparse_kernel(attrs):
    known_shape = attrs["has_known_shape"]

    def apply(accumulator, local_step, indices, values, shape):
        accumulator.apply_sparse(int(local_step), indices, values, shape if known_shape else None)
        return ()

    return apply


def _take_dense_kernel(attrs):
    def take(context, accumulator, num_required):
        return accumulator.take_dense(context, int(num_required))

    return take


def _take_sparse_kernel(attrs):
    def take(context, accumulator, num_required):
        return accumulator.take_sparse(context, int(num_required))

    return take


def _set_step_kernel(attrs):
    def set_step(accumulator, step):
        accumulator.set_global_step(int(step))
        return ()

    return set_step


define_op("ResourceAccumulatorApplyGradient", _infer_nothing, _apply_dense_kernel, stateful=True)
define_op("SparseAccumulatorApplyGradient", _infer_nothing, _apply_sparse_kernel, stateful=True)
define_op(
    "ResourceAccumulatorTakeGradient",
    lambda op: _check_handle(op) or [(op.attrs["dtype"], op.attrs["shape"])],
    _take_dense_kernel,
    stateful=True,
    wants_context=True,
)
define_op(
    "SparseAccumulatorTakeGradient",
    lambda op: (
        _check_handle(op)
        or [
            (_dtypes.int64, TensorShape([None])),
            (op.attrs["dtype"], TensorShape(None)),
            (_dtypes.int64, TensorShape([None])),
        ]
    ),
    _take_sparse_kernel,
    stateful=True,
    wants_context=True,
)
define_op(
    "ResourceAccumulatorNumAccumulated",
    lambda op: _check_handle(op) or [(_dtypes.int32, TensorShape([]))],
    lambda attrs: lambda accumulator: np.int32(accumulator.count),
    stateful=True,
    inline=True,
)
define_op("ResourceAccumulatorSetGlobalStep", _infer_nothing, _set_step_kernel, stateful=True)


# -- the Python classes ----------------------------------------------------------------------------
def _as_int64(value, name: str) -> Tensor:
    """``value`` as int64, cast from another integer type as TensorFlow's accumulators do."""
    from .math_ops import cast

    value = convert_to_tensor(value, name=name)
    return value if value.dtype == _dtypes.int64 else cast(value, _dtypes.int64)


def _dtype_and_shape(dtype, shape):
    """``dtype`` as a DType and ``shape`` as a TensorShape (unknown when None)."""
    return _dtypes.as_dtype(dtype), TensorShape(shape) if shape is not None else TensorShape(None)


class ConditionalAccumulatorBase:
    """An accumulator from its handle (``accumulator_ref``): its dtype, shape and the ops
    that every accumulator has."""

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype, self._shape = _dtype_and_shape(dtype, shape)
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self) -> Tensor:
        return self._accumulator_ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    def num_accumulated(self, name: Optional[str] = None) -> Tensor:
        """The number of gradients added since the last take (an int32 scalar)."""
        return apply_op(
            "ResourceAccumulatorNumAccumulated",
            [self._accumulator_ref],
            {},
            name or "ResourceAccumulatorNumAccumulated",
        ).outputs[0]

    def _take_op(self, op_type, num_required, attrs, name):
        """The ``op_type`` node that takes the accumulated gradient once ``num_required`` were
        added (the dense and sparse take ops differ only in type, attrs and outputs)."""
        num_required = convert_to_tensor(num_required, _dtypes.int32, name="num_required")
        return apply_op(op_type, [self._accumulator_ref, num_required], attrs, name or op_type)

    def set_global_step(self, new_global_step, name: Optional[str] = None):
        """The op that sets the accumulator's global step (gradients older are dropped)."""
        step = convert_to_tensor(new_global_step, dtype=_dtypes.int64, name="new_global_step")
        return apply_op(
            "ResourceAccumulatorSetGlobalStep",
            [self._accumulator_ref, step],
            {},
            name or "ResourceAccumulatorSetGlobalStep",
        )


def _accumulator_handle(op_type, dtype, shape, shared_name, name, reduction_type, sparse):
    dtype, shape = _dtype_and_shape(dtype, shape)
    if reduction_type not in ("MEAN", "SUM"):
        raise ValueError(
            f"Attr 'reduction_type' of '{op_type}' Op passed string '{reduction_type}' not in: "
            '"MEAN", "SUM".'
        )
    if dtype not in _GRADIENT_TYPES:
        raise TypeError(
            f"{op_type}: accumulators sum floating-point gradients (float16, float32, float64), "
            f"got {dtype.name}"
        )
    with name_scope(name) as scope:
        op_name = scope[:-1]
        attrs = {
            "dtype": dtype,
            "shape": shape,
            "reduction_type": reduction_type,
            "sparse": sparse,
            "shared_name": shared_name or op_name,
            "container": current_container(),
        }
        return apply_op(op_type, [], attrs, name=op_name + "/").outputs[0]


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients of ``dtype`` and ``shape`` (see the module docstring)."""

    def __init__(
        self,
        dtype,
        shape=None,
        shared_name=None,
        name="conditional_accumulator",
        reduction_type="MEAN",
    ):
        handle = _accumulator_handle(
            "ResourceConditionalAccumulator",
            dtype,
            shape,
            shared_name,
            name,
            reduction_type,
            False,
        )
        super().__init__(dtype, shape, handle)

    def apply_grad(self, grad, local_step=0, name: Optional[str] = None):
        """The op that adds ``grad`` (dropped when ``local_step`` is stale)."""
        grad = convert_to_tensor(grad, self._dtype, name="grad")
        grad.shape.assert_is_compatible_with(self._shape)
        local_step = _as_int64(local_step, "local_step")
        return apply_op(
            "ResourceAccumulatorApplyGradient",
            [self._accumulator_ref, local_step, grad],
            {},
            name or "ResourceAccumulatorApplyGradient",
        )

    def take_grad(self, num_required, name: Optional[str] = None) -> Tensor:
        """The mean (or sum) of the gradients, once at least ``num_required`` were added."""
        attrs = {"dtype": self._dtype, "shape": self._shape}
        op = self._take_op("ResourceAccumulatorTakeGradient", num_required, attrs, name)
        return op.outputs[0]


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse gradients (indices and rows of values) of ``dtype``; ``shape`` is
    that of the dense tensor they stand for (see the module docstring)."""

    def __init__(
        self,
        dtype,
        shape=None,
        shared_name=None,
        name="sparse_conditional_accumulator",
        reduction_type="MEAN",
    ):
        handle = _accumulator_handle(
            "ResourceSparseConditionalAccumulator",
            dtype,
            shape,
            shared_name,
            name,
            reduction_type,
            True,
        )
        super().__init__(dtype, shape, handle)

    def apply_indexed_slices_grad(self, grad, local_step=0, name: Optional[str] = None):
        """`apply_grad` of an IndexedSlices."""
        return self.apply_grad(
            grad_indices=grad.indices,
            grad_values=grad.values,
            grad_shape=grad.dense_shape,
            local_step=local_step,
            name=name,
        )

    def apply_grad(
        self, grad_indices, grad_values, grad_shape=None, local_step=0, name: Optional[str] = None
    ):
        """The op that adds the gradient whose rows ``grad_values`` are at ``grad_indices``
        (dropped when ``local_step`` is stale)."""
        local_step = _as_int64(local_step, "local_step")
        indices = _as_int64(grad_indices, "grad_indices")
        values = convert_to_tensor(grad_values, self._dtype, name="grad_values")
        if self._shape.ndims is not None and values.shape.ndims is not None:
            values.shape[1:].assert_is_compatible_with(self._shape[1:])
        known = grad_shape is not None
        shape = _as_int64(grad_shape if known else np.zeros([0], np.int64), "grad_shape")
        return apply_op(
            "SparseAccumulatorApplyGradient",
            [self._accumulator_ref, local_step, indices, values, shape],
            {"has_known_shape": known},
            name or "SparseAccumulatorApplyGradient",
        )

    def take_grad(self, num_required, name: Optional[str] = None):
        """``(indices, values, shape)``: the mean (or sum) of each row of the gradients, once at
        least ``num_required`` were added."""
        attrs = {"dtype": self._dtype}
        op = self._take_op("SparseAccumulatorTakeGradient", num_required, attrs, name)
        return _SparseGradient(*op.outputs)

    def take_indexed_slices_grad(self, num_required, name: Optional[str] = None):
        """`take_grad` as an IndexedSlices."""
        from ..framework.indexed_slices import IndexedSlices

        indices, values, shape = self.take_grad(num_required, name=name)
        return IndexedSlices(values, indices, shape)


_SparseGradient = collections.namedtuple(
    "SparseAccumulatorTakeGradient", ["indices", "values", "shape"]
)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (
    "ResourceConditionalAccumulator",
    "ResourceSparseConditionalAccumulator",
    "ResourceAccumulatorApplyGradient",
    "SparseAccumulatorApplyGradient",
    "ResourceAccumulatorTakeGradient",
    "SparseAccumulatorTakeGradient",
    "ResourceAccumulatorNumAccumulated",
    "ResourceAccumulatorSetGlobalStep",
):
    NotDifferentiable(_type)

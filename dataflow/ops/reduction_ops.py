"""Reductions over axes: sums, means, products, extrema, logical all/any, log-sum-exp and the
arg-extrema, with TensorFlow's shapes for ``keepdims`` and its errors for bad axes."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op_output, define_op
from ..framework.ragged_tensor import override_for
from ..framework.tensor_conversion import register_conversion_op
from ..framework.tensor_shape import TensorShape
from .op_util import (
    ARITHMETIC_TYPES,
    BOOL_TYPES,
    INDEX_TYPES,
    NUMERIC_OR_BOOL_TYPES,
    NUMERIC_TYPES,
    check_dtype,
    normalize_axis,
    static_axis,
)
from .selection_ops import (
    cast,
)


# -- reductions ------------------------------------------------------------------------------------
def reduced_shape(shape: TensorShape, axis, keepdims: bool) -> TensorShape:
    """The static shape after reducing ``axis`` (``None``: all) of ``shape``; checks the axes."""
    rank = shape.ndims
    if axis is None:
        if not keepdims:
            return TensorShape([])
        return TensorShape(None if rank is None else [1] * rank)
    if rank is None:
        return TensorShape(None)
    axes = [normalize_axis(a, rank, "reduction axis") for a in axis]
    if len(set(axes)) != len(axes):
        raise ValueError(f"reduction axes {list(axis)} name a dimension twice")
    dims = shape.as_list()
    if keepdims:
        return TensorShape([1 if i in axes else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in axes])


def _infer_reduction(allowed: frozenset):
    def infer(op):
        (x,) = op.inputs
        check_dtype(x.dtype, allowed, f"Input of '{op.type}'")
        return [(x.dtype, reduced_shape(x.shape, op.attrs["axis"], op.attrs["keepdims"]))]

    return infer


def _sum_kernel(attrs):
    axis, keepdims = attrs["axis"], attrs["keepdims"]
    return lambda x: np.add.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)


def _prod_kernel(attrs):
    axis, keepdims = attrs["axis"], attrs["keepdims"]

    def prod(x):
        with np.errstate(all="ignore"):
            return np.multiply.reduce(x, axis=axis, dtype=x.dtype, keepdims=keepdims)

    return prod


def _mean_kernel(attrs):
    axis, keepdims = attrs["axis"], attrs["keepdims"]

    def mean(x):
        if x.dtype.kind in "fc":
            return np.mean(x, axis=axis, keepdims=keepdims)
        # An integer mean truncates toward zero, as in TensorFlow; the sum is taken in 64 bits
        # so that it cannot wrap around (the mean of uint8 pixels is right).
        wide = np.uint64 if x.dtype.kind == "u" else np.int64
        total = np.add.reduce(x, axis=axis, dtype=wide, keepdims=keepdims)
        count = max(np.size(x) // max(np.size(total), 1), 1)
        quotient = np.abs(total) // count
        return (quotient * np.sign(total)).astype(x.dtype, copy=False)

    return mean


def _extremum_kernel(ufunc, float_identity: float, int_identity: str):
    def build(attrs):
        axis, keepdims = attrs["axis"], attrs["keepdims"]

        def reduce(x):
            try:
                return ufunc.reduce(x, axis=axis, keepdims=keepdims)
            except ValueError:
                if np.size(x):
                    raise
                # An empty reduction gives the identity (-inf for max), as in TensorFlow.
                identity = (
                    float_identity
                    if x.dtype.kind == "f"
                    else getattr(np.iinfo(x.dtype), int_identity)
                )
                return ufunc.reduce(x, axis=axis, keepdims=keepdims, initial=identity)

        return reduce

    return build


def _logical_reduce_kernel(ufunc):
    def build(attrs):
        axis, keepdims = attrs["axis"], attrs["keepdims"]
        return lambda x: ufunc.reduce(x, axis=axis, keepdims=keepdims)

    return build


define_op("Sum", _infer_reduction(ARITHMETIC_TYPES), _sum_kernel)


define_op("Prod", _infer_reduction(ARITHMETIC_TYPES), _prod_kernel)


define_op("Mean", _infer_reduction(ARITHMETIC_TYPES), _mean_kernel)


define_op("Max", _infer_reduction(NUMERIC_TYPES), _extremum_kernel(np.maximum, -np.inf, "min"))


define_op("Min", _infer_reduction(NUMERIC_TYPES), _extremum_kernel(np.minimum, np.inf, "max"))


define_op("Any", _infer_reduction(BOOL_TYPES), _logical_reduce_kernel(np.logical_or))


define_op("All", _infer_reduction(BOOL_TYPES), _logical_reduce_kernel(np.logical_and))


def _reduction_args(axis, keepdims, reduction_indices, keep_dims):
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'")
        axis = reduction_indices
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        keepdims = keep_dims
    axis = static_axis(axis, "reduction axis")
    if isinstance(axis, int):
        axis = (axis,)
    return {"axis": axis, "keepdims": bool(keepdims)}


def _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices, keep_dims):
    attrs = _reduction_args(axis, keepdims, reduction_indices, keep_dims)
    return apply_op_output(op_type, (input_tensor,), attrs, name or op_type)


def reduce_sum(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The sum over ``axis`` (all axes when ``None``), in the input's dtype."""
    ragged = override_for("reduce_sum", input_tensor)
    if ragged is not None:
        return ragged(input_tensor, axis, keepdims, name, reduction_indices, keep_dims)
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The mean over ``axis``, in the input's dtype: integer means truncate toward zero (of a
    RaggedTensor, TensorFlow's true division: an integer one's mean is float64)."""
    ragged = override_for("reduce_mean", input_tensor)
    if ragged is not None:
        return ragged(input_tensor, axis, keepdims, name, reduction_indices, keep_dims)
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The maximum over ``axis``; over no elements it is the lowest value (``-inf``)."""
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The minimum over ``axis``; over no elements it is the highest value (``inf``)."""
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """The product over ``axis`` (all axes when ``None``), in the input's dtype; over no
    elements it is 1."""
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """Whether any element over ``axis`` is true (a bool input); over no elements, False."""
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(
    input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None
) -> Tensor:
    """Whether every element over ``axis`` is true (a bool input); over no elements, True."""
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def _infer_arg_reduce(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_OR_BOOL_TYPES, f"Input of '{op.type}'")
    check_dtype(op.attrs["output_type"], INDEX_TYPES, "output_type")
    rank = x.shape.ndims
    if rank is None:
        return [(op.attrs["output_type"], TensorShape(None))]
    if rank == 0:
        raise ValueError(f"{op.type} needs a tensor of rank at least 1, got a scalar")
    axis = normalize_axis(op.attrs["axis"], rank)
    dims = x.shape.as_list()
    return [(op.attrs["output_type"], TensorShape(dims[:axis] + dims[axis + 1 :]))]


def _arg_reduce_kernel(fn, nan_as):
    """``fn`` (np.argmax/np.argmin) that skips NaNs as TensorFlow's kernels do: a NaN never wins
    (numpy would return the first NaN), so it counts as ``nan_as`` (-inf for argmax, +inf for
    argmin); a slice of NaNs only gives index 0."""

    def build(attrs):
        axis, np_dtype = attrs["axis"], _dtypes.numpy_dtype(attrs["output_type"])

        def arg_reduce(x):
            if x.dtype.kind == "f":
                nans = np.isnan(x)
                if nans.any():
                    x = np.where(nans, x.dtype.type(nan_as), x)
            return fn(x, axis=axis).astype(np_dtype, copy=False)

        return arg_reduce

    return build


define_op("ArgMax", _infer_arg_reduce, _arg_reduce_kernel(np.argmax, -np.inf))


define_op("ArgMin", _infer_arg_reduce, _arg_reduce_kernel(np.argmin, np.inf))


def _arg_reduce(op_type, input, axis, name, dimension, output_type):  # noqa: A002
    if dimension is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dimension'")
        axis = dimension
    axis = static_axis(0 if axis is None else axis)
    if not isinstance(axis, int):
        raise TypeError(f"{op_type} takes a single axis, got {axis!r}")
    attrs = {"axis": axis, "output_type": _dtypes.as_dtype(output_type)}
    return apply_op_output(op_type, (input,), attrs, name or op_type)


def argmax(
    input,  # noqa: A002 - TensorFlow's argument name
    axis=None,
    name: Optional[str] = None,
    dimension=None,
    output_type=_dtypes.int64,
) -> Tensor:
    """The index of the largest value along ``axis`` (default 0); ties give the first index and
    NaNs are skipped, as in TensorFlow."""
    return _arg_reduce("ArgMax", input, axis, name, dimension, output_type)


def argmin(
    input,  # noqa: A002 - TensorFlow's argument name
    axis=None,
    name: Optional[str] = None,
    dimension=None,
    output_type=_dtypes.int64,
) -> Tensor:
    """The index of the smallest value along ``axis`` (default 0); ties give the first index
    and NaNs are skipped, as in TensorFlow."""
    return _arg_reduce("ArgMin", input, axis, name, dimension, output_type)


def _infer_running(op):
    """Cumsum's and Cumprod's inference: the input's dtype and shape, along a valid axis."""
    (x,) = op.inputs
    check_dtype(
        x.dtype, ARITHMETIC_TYPES if op.type == "Cumsum" else NUMERIC_TYPES, f"Input of '{op.type}'"
    )
    rank = x.shape.ndims
    if rank == 0:
        raise ValueError(f"{op.type} needs a tensor of rank at least 1, got a scalar")
    normalize_axis(op.attrs["axis"], rank)
    return [(x.dtype, x.shape)]


def running_kernel(accumulate, empty):
    """The kernel builder of a running reduction (``np.cumsum`` for Cumsum, ``np.cumprod``
    for Cumprod) with TensorFlow's ``exclusive`` (shifted by one, ``empty`` first: 0 for
    sums, 1 for products) and ``reverse``; overflow is silent, as in TensorFlow."""

    def kernel(attrs):
        axis, exclusive, reverse = attrs["axis"], attrs["exclusive"], attrs["reverse"]

        def running(x):
            if reverse:
                x = np.flip(x, axis)
            with np.errstate(all="ignore"):
                out = accumulate(x, axis=axis, dtype=x.dtype)
            if exclusive:
                shifted = np.full_like(out, empty)
                into = [slice(None)] * out.ndim
                take = [slice(None)] * out.ndim
                into[axis], take[axis] = slice(1, None), slice(None, -1)
                shifted[tuple(into)] = out[tuple(take)]
                out = shifted
            if reverse:
                out = np.flip(out, axis)
            return out

        return running

    return kernel


define_op("Cumsum", _infer_running, running_kernel(np.cumsum, 0))


def cumsum(
    x, axis=0, exclusive: bool = False, reverse: bool = False, name: Optional[str] = None
) -> Tensor:
    """Running sums along ``axis``: ``exclusive`` leaves out the current element, ``reverse``
    sums from the end."""
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"cumsum takes a single axis, got {axis!r}")
    attrs = {"axis": axis, "exclusive": bool(exclusive), "reverse": bool(reverse)}
    return apply_op_output("Cumsum", (x,), attrs, name or "Cumsum")


# ... and their tensors cast to the dtype asked for with `cast`.
register_conversion_op("cast", cast)

__all__ = [
    "argmax",
    "argmin",
    "cumsum",
    "reduce_all",
    "reduce_any",
    "reduce_max",
    "reduce_mean",
    "reduce_min",
    "reduce_prod",
    "reduce_sum",
]

"""Linear algebra ops: the QR decomposition (``df.linalg.qr``, ``df.qr``), which the orthogonal
initializer is built on, and ``norm`` (built from reductions, so it has their gradients).

``Qr`` takes a batch of matrices ``[..., M, N]`` and gives ``q`` and ``r`` with ``q @ r`` equal to
the input: with ``full_matrices=False`` (the default) ``q`` is ``[..., M, K]`` with orthonormal
columns and ``r`` is ``[..., K, N]`` upper triangular, ``K = min(M, N)``; with
``full_matrices=True`` ``q`` is ``[..., M, M]`` and ``r`` ``[..., M, N]``.  Like TensorFlow's,
the signs of ``r``'s diagonal are whatever the factorization gives (LAPACK's, through numpy).

Its gradient is TensorFlow's: defined for ``full_matrices=False`` and ``M >= N`` (then ``r`` is
square and invertible for a full-rank input), and computed by one kernel, ``QrGrad``.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .math_ops import FLOAT_TYPES, check_dtype

__all__ = ["norm", "normalize", "qr"]


def _infer_qr(op):
    (x,) = op.inputs
    check_dtype(x.dtype, FLOAT_TYPES, f"Input 'input' of '{op.type}'")
    if x.shape.ndims is None:
        return [(x.dtype, TensorShape(None)), (x.dtype, TensorShape(None))]
    if x.shape.ndims < 2:
        raise ValueError(f"qr needs a matrix or a batch of matrices, got shape {x.shape}")
    *batch, m, n = x.shape.as_list()
    k = None if m is None or n is None else min(m, n)
    if op.attrs["full_matrices"]:
        return [(x.dtype, TensorShape([*batch, m, m])), (x.dtype, TensorShape([*batch, m, n]))]
    return [(x.dtype, TensorShape([*batch, m, k])), (x.dtype, TensorShape([*batch, k, n]))]


def _qr_kernel(attrs):
    mode = "complete" if attrs["full_matrices"] else "reduced"

    def qr(x):
        if x.ndim < 2:
            raise InvalidArgumentError(None, None, f"qr needs a matrix, got shape {x.shape}")
        q, r = np.linalg.qr(x, mode=mode)
        return q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)

    return qr


define_op("Qr", _infer_qr, _qr_kernel)


def qr(input, full_matrices: bool = False, name: Optional[str] = None) -> tuple:  # noqa: A002
    """``(q, r)`` with ``q @ r == input`` (``tf.linalg.qr``)."""
    x = convert_to_tensor(input, name="input")
    attrs = {"full_matrices": bool(full_matrices)}
    q, r = apply_op("Qr", (x,), attrs, name or "Qr").outputs
    return q, r


# -- gradient --------------------------------------------------------------------------------------
def _upper_solve_right(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``x @ inverse(r).T`` for upper triangular ``r``."""
    return np.swapaxes(np.linalg.solve(r, np.swapaxes(x, -1, -2)), -1, -2)


def _qr_grad(q, r, dq, dr):
    """The gradient of a reduced QR of a tall or square matrix (TensorFlow's formula)."""
    qt = np.swapaxes(q, -1, -2)
    qdq = qt @ dq
    qdq_skew = qdq - np.swapaxes(qdq, -1, -2)
    rdr = r @ np.swapaxes(dr, -1, -2)
    rdr_skew = rdr - np.swapaxes(rdr, -1, -2)
    lower = np.tril(qdq_skew + rdr_skew)
    through_r = q @ (dr + _upper_solve_right(lower, r))
    through_q = _upper_solve_right(dq - q @ qdq, r)
    return (through_r + through_q).astype(q.dtype, copy=False)


def _infer_qr_grad(op):
    a = op.inputs[0]
    return [(a.dtype, a.shape)]


define_op("QrGrad", _infer_qr_grad, lambda attrs: lambda a, q, r, dq, dr: _qr_grad(q, r, dq, dr))

from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402
from .array_ops import zeros_like  # noqa: E402


@RegisterGradient("Qr")
def _qr_gradient(op, grad_q, grad_r):
    a = op.inputs[0]
    q, r = op.outputs
    shape = a.shape
    if op.attrs["full_matrices"] or (
        shape.ndims is not None and None not in shape.as_list()[-2:] and shape[-2] < shape[-1]
    ):
        raise NotImplementedError(
            f"The gradient of qr '{op.name}' is defined for full_matrices=False and inputs with "
            f"at least as many rows as columns, got shape {shape}"
        )
    grad_q = zeros_like(q) if grad_q is None else grad_q
    grad_r = zeros_like(r) if grad_r is None else grad_r
    return apply_op("QrGrad", (a, q, r, grad_q, grad_r)).outputs[0]


# The gradient of the gradient is not defined here (TensorFlow differentiates its graph of ops).
NotDifferentiable("QrGrad")


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """The norm of ``tensor`` (``tf.norm``): of all its elements as one vector when ``axis`` is
    None, of vectors along one ``axis``, or of matrices over a pair of axes.  ``ord``:
    ``"euclidean"``/``"fro"`` (the square root of the sum of squares, whatever the shape), a
    positive number ``p`` for vectors, ``1`` or ``np.inf`` for matrices (the largest column or
    row sum of absolute values)."""
    from ..framework.graph import name_scope
    from .math_ops import abs as _abs
    from .math_ops import pow as _pow
    from .math_ops import reduce_max, reduce_sum, sqrt, square

    keepdims = bool(keep_dims if keepdims is None else keepdims)
    matrix = isinstance(axis, (list, tuple)) and len(axis) == 2
    if isinstance(axis, (list, tuple)) and len(axis) not in (1, 2):
        raise ValueError(f"'axis' must be None, an integer, or a pair of integers, got {axis}")
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    supported = ("euclidean", "fro", 1, np.inf) if matrix else ("euclidean", "fro")
    if ord not in supported and not (not matrix and isinstance(ord, (int, float)) and ord > 0):
        raise ValueError(
            f"'ord' must be one of {supported}{' or a positive number' * (not matrix)}, got {ord!r}"
        )
    with name_scope(name or "norm"):
        x = convert_to_tensor(tensor, name="tensor")
        if ord in ("euclidean", "fro") or (not matrix and ord == 2):
            if x.dtype.is_complex:  # |x|^2 as x * conj(x), as TensorFlow (a complex result)
                from .complex_ops import conj
                from .math_ops import multiply

                return sqrt(reduce_sum(multiply(x, conj(x)), axis=axis, keepdims=keepdims))
            return sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))
        magnitude = _abs(x)
        if matrix:
            rows_axis, cols_axis = axis
            summed_over, maxed_over = (rows_axis, cols_axis) if ord == 1 else (cols_axis, rows_axis)
            sums = reduce_sum(magnitude, axis=summed_over, keepdims=True)
            result = reduce_max(sums, axis=maxed_over, keepdims=True)
            if not keepdims:
                from .array_ops import squeeze

                result = squeeze(result, axis=sorted(a % x.shape.ndims for a in axis))
            return result
        if ord == np.inf:
            return reduce_max(magnitude, axis=axis, keepdims=keepdims)
        if ord == 1:
            return reduce_sum(magnitude, axis=axis, keepdims=keepdims)
        power = convert_to_tensor(float(ord), dtype=x.dtype)
        total = reduce_sum(_pow(magnitude, power), axis=axis, keepdims=keepdims)
        return _pow(total, convert_to_tensor(1.0 / float(ord), dtype=x.dtype))


def normalize(tensor, ord="euclidean", axis=None, name=None):  # noqa: A002
    """``(tensor / norm, norm)``: ``tensor`` scaled to unit `norm` (same ``ord`` and ``axis``),
    with the norm kept in reduced dimensions of size 1."""
    from ..framework.graph import name_scope
    from .math_ops import truediv

    with name_scope(name or "normalize"):
        tensor = convert_to_tensor(tensor, name="tensor")
        n = norm(tensor, ord=ord, axis=axis, keepdims=True)
        return truediv(tensor, n, name="normalized"), n

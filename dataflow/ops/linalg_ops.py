"""Linear algebra ops: the QR decomposition (``df.linalg.qr``, ``df.qr``), which the orthogonal
initializer is built on.

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

from ..errors import InvalidArgumentError
from ..graph import convert_to_tensor
from ..op_registry import apply_op, define_op
from ..tensor_shape import TensorShape
from .math_ops import FLOAT_TYPES, check_dtype

__all__ = ["qr"]


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

from ..gradients import NotDifferentiable, RegisterGradient  # noqa: E402
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

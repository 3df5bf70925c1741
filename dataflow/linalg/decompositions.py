"""Matrix decompositions and the solve they make cheap: the singular value decomposition
(``svd``), the self-adjoint eigen decomposition (``self_adjoint_eig``, ``eigh``) and
triangular solves (``matrix_triangular_solve``), with their gradients' kernels."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops.math_ops import broadcast_shape, check_same_dtype, graph_of
from .matrix_util import (
    _lapack,
    _matrix_shape,
    _np_diag,
    _safe_reciprocal,
    _swap,
)


# -- svd -------------------------------------------------------------------------------------------
def _infer_svd(op):
    shape = _matrix_shape(op, "tensor")
    dtype = op.inputs[0].dtype
    if shape.ndims is None:
        return [(dtype, TensorShape(None))] * 3
    *batch, m, n = shape.as_list()
    k = None if m is None or n is None else min(m, n)
    if not op.attrs["compute_uv"]:
        return [
            (dtype, TensorShape(batch + [k])),
            (dtype, TensorShape([0])),
            (dtype, TensorShape([0])),
        ]
    full = op.attrs["full_matrices"]
    return [
        (dtype, TensorShape(batch + [k])),
        (dtype, TensorShape(batch + [m, m if full else k])),
        (dtype, TensorShape(batch + [n, n if full else k])),
    ]


def _svd_kernel(attrs):
    compute_uv, full = attrs["compute_uv"], attrs["full_matrices"]

    def svd(x):
        dtype = x.dtype
        m, n = x.shape[-2:]
        if x.size == 0:
            k = min(m, n)
            s = np.zeros(x.shape[:-2] + (k,), dtype)
            if not compute_uv:
                return s, np.zeros(0, dtype), np.zeros(0, dtype)
            eye = (
                lambda size, cols: np.broadcast_to(  # noqa: E731
                    np.eye(size, cols, dtype=dtype), x.shape[:-2] + (size, cols)
                ).copy()
            )
            return s, eye(m, m if full else k), eye(n, n if full else k)
        if not np.all(np.isfinite(x)):  # LAPACK does not converge: NaNs, as TensorFlow gives
            k = min(m, n)
            nan = lambda *shape: np.full(x.shape[:-2] + shape, np.nan, dtype)  # noqa: E731
            if not compute_uv:
                return nan(k), np.zeros(0, dtype), np.zeros(0, dtype)
            return nan(k), nan(m, m if full else k), nan(n, n if full else k)
        with np.errstate(all="ignore"):
            if not compute_uv:
                s = np.linalg.svd(_lapack(x), compute_uv=False)
                return s.astype(dtype), np.zeros(0, dtype), np.zeros(0, dtype)
            u, s, vh = np.linalg.svd(_lapack(x), full_matrices=full)
        return s.astype(dtype), u.astype(dtype), _swap(vh).astype(dtype)

    return svd


define_op("Svd", _infer_svd, _svd_kernel)


def svd(tensor, full_matrices: bool = False, compute_uv: bool = True, name: Optional[str] = None):
    """The singular value decomposition ``tensor == u @ diag(s) @ adjoint(v)`` of each matrix:
    ``(s, u, v)``, or only ``s`` without ``compute_uv``.  ``s`` is in descending order; with
    ``full_matrices`` ``u`` and ``v`` are square, else ``[..., M, K]`` and ``[..., N, K]``,
    ``K = min(M, N)``.  The signs of the singular vectors are LAPACK's."""
    graph = graph_of((tensor,))
    with graph.as_default():
        x = convert_to_tensor(tensor, name="tensor")
        attrs = {"full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv)}
        s, u, v = apply_op("Svd", (x,), attrs, name or "Svd").outputs
        return (s, u, v) if compute_uv else s


def _svd_grad(a, s, u, v, gs, gu, gv, compute_uv, full):
    """TensorFlow's gradient of the SVD of real matrices."""
    if not compute_uv:
        uu, _, vh = np.linalg.svd(_lapack(a), full_matrices=False)
        return ((uu * gs[..., None, :]) @ vh).astype(a.dtype)
    a, s, u, v, gs, gu, gv = (_lapack(t) for t in (a, s, u, v, gs, gu, gv))
    m, n = a.shape[-2:]
    adjoint = m > n
    if adjoint:
        m, n = n, m
        u, v, gu, gv = v, u, gv, gu
    s_mat = _np_diag(s)
    s2 = s * s
    f = _safe_reciprocal(s2[..., None, :] - s2[..., :, None])
    f = f * (1 - np.eye(f.shape[-1], dtype=f.dtype))
    s_inv_mat = _np_diag(_safe_reciprocal(s))
    v1, gv1 = v[..., :, :m], gv[..., :, :m]
    f_u = f * (_swap(u) @ gu)
    f_v = f * (_swap(v1) @ gv1)
    middle = _np_diag(gs) + (f_u + _swap(f_u)) @ s_mat + s_mat @ (f_v + _swap(f_v))
    grad = u @ middle @ _swap(v1)
    if m != n:
        gv1t = _swap(gv1)
        term2 = gv1t - (gv1t @ v1) @ _swap(v1)
        if full:
            v2, gv2 = v[..., :, m:n], gv[..., :, m:n]
            term2 = term2 - (_swap(v1) @ gv2) @ _swap(v2)
        grad = grad + (u @ s_inv_mat) @ term2
    return (_swap(grad) if adjoint else grad).astype(a.dtype)


def _infer_like_first(op):
    return [(op.inputs[0].dtype, op.inputs[0].shape)]


def _svd_grad_kernel(attrs):
    def svd_grad(a, s, u, v, gs, gu, gv):
        with np.errstate(all="ignore"):
            return _svd_grad(a, s, u, v, gs, gu, gv, attrs["compute_uv"], attrs["full_matrices"])

    return svd_grad


define_op("SvdGrad", _infer_like_first, _svd_grad_kernel)


# -- self-adjoint eigen decomposition --------------------------------------------------------------
def _infer_eig(op):
    shape = _matrix_shape(op, "tensor", square=True)
    dtype = op.inputs[0].dtype
    if shape.ndims is None:
        return [(dtype, TensorShape(None))] * 2
    *batch, n, m = shape.as_list()
    n = n if n is not None else m
    v = TensorShape(batch + [n, n]) if op.attrs["compute_v"] else TensorShape([0])
    return [(dtype, TensorShape(batch + [n])), (dtype, v)]


def _eig_kernel(attrs):
    compute_v = attrs["compute_v"]

    def self_adjoint_eig(x):
        dtype = x.dtype
        if x.shape[-1] != x.shape[-2]:
            raise InvalidArgumentError(None, None, f"Input must be square, got {x.shape}")
        if x.size == 0:
            e = np.zeros(x.shape[:-1], dtype)
            return e, (np.zeros(x.shape, dtype) if compute_v else np.zeros(0, dtype))
        if not np.all(np.isfinite(np.tril(x))):
            raise InvalidArgumentError(
                None, None,
                "Self-adjoint eigen decomposition was not successful. The input might not be "
                "valid.",
            )  # fmt: skip
        with np.errstate(all="ignore"):
            if not compute_v:
                return np.linalg.eigvalsh(_lapack(x), UPLO="L").astype(dtype), np.zeros(0, dtype)
            e, v = np.linalg.eigh(_lapack(x), UPLO="L")
        return e.astype(dtype), v.astype(dtype)

    return self_adjoint_eig


define_op("SelfAdjointEigV2", _infer_eig, _eig_kernel)


def self_adjoint_eig(tensor, name: Optional[str] = None):
    """``(e, v)``: the eigenvalues of each self-adjoint matrix, ascending, and its eigenvectors
    as the columns of ``v``.  Only the lower triangle is read."""
    graph = graph_of((tensor,))
    with graph.as_default():
        x = convert_to_tensor(tensor, name="tensor")
        e, v = apply_op(
            "SelfAdjointEigV2", (x,), {"compute_v": True}, name or "SelfAdjointEigV2"
        ).outputs
        return e, v


def self_adjoint_eigvals(tensor, name: Optional[str] = None) -> Tensor:
    """The eigenvalues of each self-adjoint matrix, ascending (lower triangle read)."""
    graph = graph_of((tensor,))
    with graph.as_default():
        x = convert_to_tensor(tensor, name="tensor")
        op = apply_op("SelfAdjointEigV2", (x,), {"compute_v": False}, name or "SelfAdjointEigV2")
        return op.outputs[0]


eigh = self_adjoint_eig


eigvalsh = self_adjoint_eigvals


# -- triangular solve ------------------------------------------------------------------------------
def _infer_triangular_solve(op):
    matrix, rhs = op.inputs
    check_same_dtype((matrix, rhs), ("matrix", "rhs"), op.type)
    _matrix_shape(op, "matrix", square=True)
    if rhs.shape.ndims is not None and rhs.shape.ndims < 2:
        raise ValueError(f"rhs must be at least rank 2, got shape {rhs.shape}")
    if matrix.shape.ndims is None or rhs.shape.ndims is None:
        return [(rhs.dtype, TensorShape(None))]
    m_dims, r_dims = matrix.shape.as_list(), rhs.shape.as_list()
    if m_dims[-1] is not None and r_dims[-2] is not None and m_dims[-1] != r_dims[-2]:
        raise ValueError(f"Shapes {matrix.shape} and {rhs.shape} are incompatible")
    batch = broadcast_shape(TensorShape(m_dims[:-2]), TensorShape(r_dims[:-2]))
    return [(rhs.dtype, TensorShape(batch.as_list() + r_dims[-2:]))]


def _triangular_solve_np(matrix, rhs, lower: bool, adjoint: bool) -> np.ndarray:
    triangle = np.tril(matrix) if lower else np.triu(matrix)
    if adjoint:
        triangle = _swap(triangle)
    batch = np.broadcast_shapes(matrix.shape[:-2], rhs.shape[:-2])
    triangle = np.broadcast_to(triangle, batch + matrix.shape[-2:])
    rhs_b = np.broadcast_to(rhs, batch + rhs.shape[-2:])
    if rhs_b.size == 0 or triangle.size == 0:
        return np.zeros(rhs_b.shape, rhs.dtype)
    # Substitution, row by row: what LAPACK's trsm computes (a zero or NaN on the diagonal
    # gives infinities or NaNs, never an error).
    a, b = _lapack(triangle), _lapack(rhs_b)
    n = a.shape[-1]
    x = np.zeros(b.shape, np.result_type(a, b))
    with np.errstate(all="ignore"):
        forward = lower != adjoint  # the triangle being solved is lower
        for i in range(n) if forward else range(n - 1, -1, -1):
            done = slice(0, i) if forward else slice(i + 1, n)
            known = np.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
            x[..., i, :] = (b[..., i, :] - known) / a[..., i, i, None]
    return x.astype(rhs.dtype)


def _triangular_solve_kernel(attrs):
    lower, adjoint = attrs["lower"], attrs["adjoint"]
    return lambda matrix, rhs: _triangular_solve_np(matrix, rhs, lower, adjoint)


define_op("MatrixTriangularSolve", _infer_triangular_solve, _triangular_solve_kernel)


def matrix_triangular_solve(
    matrix, rhs, lower: bool = True, adjoint: bool = False, name: Optional[str] = None
) -> Tensor:
    """``X`` with ``matrix @ X == rhs`` for triangular ``matrix`` (its lower triangle with
    ``lower``, else its upper; the other is not read), or ``adjoint(matrix) @ X == rhs`` with
    ``adjoint``.  Batch dimensions broadcast; a zero on the diagonal gives infinities."""
    graph = graph_of((matrix, rhs))
    with graph.as_default():
        matrix = convert_to_tensor(matrix, name="matrix")
        rhs = convert_to_tensor(rhs, dtype=matrix.dtype, name="rhs")
        attrs = {"lower": bool(lower), "adjoint": bool(adjoint)}
        op = apply_op(
            "MatrixTriangularSolve", (matrix, rhs), attrs, name or "MatrixTriangularSolve"
        )
        return op.outputs[0]


triangular_solve = matrix_triangular_solve

__all__ = [
    "eigh",
    "eigvalsh",
    "matrix_triangular_solve",
    "self_adjoint_eig",
    "self_adjoint_eigvals",
    "svd",
    "triangular_solve",
]

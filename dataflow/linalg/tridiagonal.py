"""Tridiagonal matrices: solving, multiplying, and the eigenvalues of a Hermitian tridiagonal
matrix (``tf.linalg.tridiagonal_solve``, ``tridiagonal_matmul``, ``eigh_tridiagonal``)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..ops import array_ops as _a
from ..ops import gather_ops as _g
from ..ops import math_ops as _m
from ..ops import matrix_ops as _mx
from ..ops.math_ops import FLOAT_TYPES, check_dtype, check_same_dtype, graph_of
from .decompositions import (
    self_adjoint_eig,
    self_adjoint_eigvals,
)
from .matrix_util import (
    _fail,
    _lapack,
)


# -- tridiagonal matrices --------------------------------------------------------------------------
def _infer_tridiagonal_matmul(op):
    superdiag, maindiag, subdiag, rhs = op.inputs
    check_same_dtype(op.inputs, ("superdiag", "maindiag", "subdiag", "rhs"), op.type)
    check_dtype(rhs.dtype, FLOAT_TYPES, f"Input 'rhs' of '{op.type}'")
    if rhs.shape.ndims is not None and rhs.shape.ndims < 2:
        raise ValueError(f"rhs must be at least rank 2, got shape {rhs.shape}")
    for t, what in ((superdiag, "superdiag"), (maindiag, "maindiag"), (subdiag, "subdiag")):
        if t.shape.ndims is not None and rhs.shape.ndims is not None:
            if t.shape.ndims != rhs.shape.ndims:
                raise ValueError(f"{what} must have the rank of rhs, got {t.shape} and {rhs.shape}")
            m, size = t.shape.as_list()[-1], rhs.shape.as_list()[-2]
            if m is not None and size is not None and m != size:
                raise ValueError(f"{what} {t.shape} does not match rhs {rhs.shape}")
    return [(rhs.dtype, rhs.shape)]


def _tridiagonal_matmul_np(superdiag, maindiag, subdiag, rhs):
    sup, main, sub = (np.swapaxes(d, -1, -2) for d in (superdiag, maindiag, subdiag))
    out = main * rhs
    out[..., :-1, :] += sup[..., :-1, :] * rhs[..., 1:, :]
    out[..., 1:, :] += sub[..., 1:, :] * rhs[..., :-1, :]
    return out


def _tridiagonal_matmul_kernel(attrs):
    def tridiagonal_matmul(superdiag, maindiag, subdiag, rhs):
        for d in (superdiag, maindiag, subdiag):
            if d.shape[-1] != rhs.shape[-2] or d.shape[-2] != 1:
                raise InvalidArgumentError(
                    None, None, f"diagonals {d.shape} do not match rhs {rhs.shape}"
                )
        return _tridiagonal_matmul_np(superdiag, maindiag, subdiag, rhs).astype(rhs.dtype)

    return tridiagonal_matmul


define_op("TridiagonalMatMul", _infer_tridiagonal_matmul, _tridiagonal_matmul_kernel)


def _compact_diagonals(function: str, diagonals, diagonals_format: str):
    """``diagonals`` in any of TensorFlow's three formats as ``(superdiag, maindiag, subdiag)``,
    each ``[..., M]`` (the last of ``superdiag`` and the first of ``subdiag`` unused)."""
    if diagonals_format == "compact":
        d = convert_to_tensor(diagonals, name="diagonals")
        if d.shape.ndims is not None and d.shape.ndims < 2:
            _fail(function, f"diagonals must have rank at least 2, got {d.shape}")
        if d.shape.ndims is not None and d.shape.as_list()[-2] not in (None, 3):
            _fail(function, f"Expected 3 diagonals got {d.shape.as_list()[-2]}")
        return d[..., 0, :], d[..., 1, :], d[..., 2, :]
    if diagonals_format == "sequence":
        if not isinstance(diagonals, (tuple, list)) or len(diagonals) != 3:
            _fail(function, "Expected diagonals to be a sequence of length 3.")
        superdiag, maindiag, subdiag = (convert_to_tensor(d) for d in diagonals)
        m = maindiag.shape.as_list()[-1] if maindiag.shape.ndims else None

        def pad(t, what, padding):
            n = t.shape.as_list()[-1] if t.shape.ndims else None
            if not n or n == m:
                return t
            if m is not None and n == m - 1:
                return _g.pad(t, [[0, 0]] * (t.shape.ndims - 1) + [padding])
            _fail(function, f"Expected {what} to have length {m} or {m - 1}, got {n}.")

        return (
            pad(superdiag, "superdiagonal", [0, 1]),
            maindiag,
            pad(subdiag, "subdiagonal", [1, 0]),
        )
    if diagonals_format == "matrix":
        d = convert_to_tensor(diagonals, name="diagonals")
        dims = d.shape.as_list()[-2:] if d.shape.ndims else [None, None]
        if None not in dims and dims[0] != dims[1]:
            _fail(
                function,
                "Expected last two dimensions of diagonals to be same, "
                f"got {dims[0]} and {dims[1]}",
            )
        packed = _mx.matrix_diag_part(d, k=(-1, 1), padding_value=0.0, align="LEFT_RIGHT")
        return packed[..., 0, :], packed[..., 1, :], packed[..., 2, :]
    _fail(function, f"Unrecognized diagonals_format: {diagonals_format}")


def tridiagonal_matmul(
    diagonals, rhs, diagonals_format: str = "compact", name: Optional[str] = None
) -> Tensor:
    """The product of tridiagonal matrices and ``rhs`` ``[..., M, N]``.  ``diagonals``:
    ``compact`` ``[..., 3, M]`` (superdiagonal, diagonal, subdiagonal), a ``sequence`` of the
    three ``[..., M]``, or the ``matrix`` ``[..., M, M]`` (only its three diagonals read)."""
    graph = graph_of((rhs,))
    with graph.as_default(), graph.name_scope(name or "tridiagonal_matmul"):
        superdiag, maindiag, subdiag = _compact_diagonals(
            "tridiagonal_matmul", diagonals, diagonals_format
        )
        rhs = convert_to_tensor(rhs, dtype=maindiag.dtype, name="rhs")
        parts = [_a.expand_dims(d, -2) for d in (superdiag, maindiag, subdiag)]
        return apply_op("TridiagonalMatMul", (*parts, rhs), None, "TridiagonalMatMul").outputs[0]


def _infer_tridiagonal_solve(op):
    diagonals, rhs = op.inputs
    check_same_dtype((diagonals, rhs), ("diagonals", "rhs"), op.type)
    check_dtype(rhs.dtype, FLOAT_TYPES, f"Input 'rhs' of '{op.type}'")
    return [(rhs.dtype, rhs.shape)]


def _tridiagonal_solve_np(diagonals, rhs, partial_pivoting: bool, perturb_singular: bool):
    m = diagonals.shape[-1]
    if diagonals.shape[-2] != 3 or rhs.shape[-2] != m or diagonals.shape[:-2] != rhs.shape[:-2]:
        raise InvalidArgumentError(
            None, None, f"diagonals {diagonals.shape} do not match rhs {rhs.shape}"
        )
    if m == 0 or rhs.size == 0:
        return np.zeros(rhs.shape, rhs.dtype)
    sup = _lapack(diagonals[..., 0, :])
    main = _lapack(diagonals[..., 1, :])
    sub = _lapack(diagonals[..., 2, :])
    b = _lapack(rhs).copy()
    if not partial_pivoting:
        # The Thomas algorithm: elimination without row exchanges.
        c = np.zeros_like(sup)
        d = np.zeros_like(b)
        denominator = main[..., 0]
        c[..., 0] = sup[..., 0] / denominator
        d[..., 0, :] = b[..., 0, :] / denominator[..., None]
        for i in range(1, m):
            denominator = main[..., i] - sub[..., i] * c[..., i - 1]
            c[..., i] = sup[..., i] / denominator
            d[..., i, :] = (b[..., i, :] - sub[..., i, None] * d[..., i - 1, :]) / denominator[
                ..., None
            ]
        x = np.zeros_like(d)
        x[..., m - 1, :] = d[..., m - 1, :]
        for i in range(m - 2, -1, -1):
            x[..., i, :] = d[..., i, :] - c[..., i, None] * x[..., i + 1, :]
        return x.astype(rhs.dtype)
    # Gaussian elimination with partial pivoting (LAPACK's gtsv, as TensorFlow's CPU kernel):
    # row i holds u[i] on the diagonal, then u1[i] and u2[i] (fill-in) to its right.
    u = main.copy()
    u1 = np.zeros_like(main)
    u1[..., : m - 1] = sup[..., : m - 1]
    u2 = np.zeros_like(main)
    x = b.copy()
    lower = np.zeros_like(main)
    lower[..., 1:] = sub[..., 1:]
    eps = np.finfo(rhs.dtype if rhs.dtype != np.float16 else np.float32).eps
    if perturb_singular:
        norm = np.max(np.abs(np.stack([main, sup, sub], -2)), axis=(-2, -1))
        perturbation = np.where(norm == 0, 1.0, norm) * eps
    for i in range(m - 1):
        swap = np.abs(u[..., i]) < np.abs(lower[..., i + 1])
        # rows i and i+1 of the band, swapped where the subdiagonal entry is larger
        a_i, b_i, c_i = u[..., i].copy(), u1[..., i].copy(), u2[..., i].copy()
        a_n, b_n = lower[..., i + 1].copy(), u[..., i + 1].copy()
        c_n = u1[..., i + 1].copy()
        p0, p1, p2 = np.where(swap, a_n, a_i), np.where(swap, b_n, b_i), np.where(swap, c_n, c_i)
        q0, q1, q2 = np.where(swap, a_i, a_n), np.where(swap, b_i, b_n), np.where(swap, c_i, c_n)
        xi = np.where(swap[..., None], x[..., i + 1, :], x[..., i, :])
        xn = np.where(swap[..., None], x[..., i, :], x[..., i + 1, :])
        if perturb_singular:
            p0 = np.where(p0 == 0, perturbation, p0)
        factor = q0 / p0
        u[..., i], u1[..., i], u2[..., i] = p0, p1, p2
        u[..., i + 1] = q1 - factor * p1
        u1[..., i + 1] = q2 - factor * p2
        x[..., i, :] = xi
        x[..., i + 1, :] = xn - factor[..., None] * xi
    if perturb_singular:
        u[..., m - 1] = np.where(u[..., m - 1] == 0, perturbation, u[..., m - 1])
    out = np.zeros_like(x)
    out[..., m - 1, :] = x[..., m - 1, :] / u[..., m - 1, None]
    if m > 1:
        out[..., m - 2, :] = (x[..., m - 2, :] - u1[..., m - 2, None] * out[..., m - 1, :]) / u[
            ..., m - 2, None
        ]
    for i in range(m - 3, -1, -1):
        out[..., i, :] = (
            x[..., i, :]
            - u1[..., i, None] * out[..., i + 1, :]
            - u2[..., i, None] * out[..., i + 2, :]
        ) / u[..., i, None]
    return out.astype(rhs.dtype)


def _tridiagonal_solve_kernel(attrs):
    def tridiagonal_solve(diagonals, rhs):
        with np.errstate(all="ignore"):
            return _tridiagonal_solve_np(
                diagonals, rhs, attrs["partial_pivoting"], attrs["perturb_singular"]
            )

    return tridiagonal_solve


define_op("TridiagonalSolve", _infer_tridiagonal_solve, _tridiagonal_solve_kernel)


def tridiagonal_solve(
    diagonals,
    rhs,
    diagonals_format: str = "compact",
    transpose_rhs: bool = False,
    conjugate_rhs: bool = False,
    name: Optional[str] = None,
    partial_pivoting: bool = True,
    perturb_singular: bool = False,
) -> Tensor:
    """``X`` with ``A @ X == rhs`` for tridiagonal ``A`` given by ``diagonals`` (formats as
    `tridiagonal_matmul`'s).  ``rhs`` is ``[..., M, K]`` (``[..., K, M]`` with
    ``transpose_rhs``) or ``[..., M]``.  ``partial_pivoting`` exchanges rows as LAPACK's gtsv
    does (without it, the Thomas algorithm; a zero pivot gives infinities or NaNs in both,
    as in TensorFlow); ``perturb_singular`` replaces zero pivots
    by ``eps * max|A|`` instead of failing, for singular systems (inverse iteration)."""
    if perturb_singular and not partial_pivoting:
        _fail("tridiagonal_solve", "partial_pivoting must be True if perturb_singular is.")
    graph = graph_of((rhs,))
    with graph.as_default(), graph.name_scope(name or "tridiagonal_solve"):
        superdiag, maindiag, subdiag = _compact_diagonals(
            "tridiagonal_solve", diagonals, diagonals_format
        )
        packed = _a.stack([superdiag, maindiag, subdiag], axis=-2)
        rhs = convert_to_tensor(rhs, dtype=packed.dtype, name="rhs")
        diags_rank, rhs_rank = packed.shape.ndims, rhs.shape.ndims
        if (
            diags_rank is not None
            and rhs_rank is not None
            and rhs_rank not in (diags_rank, diags_rank - 1)
        ):
            _fail(
                "tridiagonal_solve",
                f"Expected the rank of rhs to be {diags_rank - 1} or {diags_rank}, got {rhs_rank}",
            )
        attrs = {
            "partial_pivoting": bool(partial_pivoting),
            "perturb_singular": bool(perturb_singular),
        }
        vector = diags_rank is not None and rhs_rank == diags_rank - 1
        if vector:
            rhs = _a.expand_dims(rhs, -1)
        elif transpose_rhs:
            rhs = _mx.matrix_transpose(rhs)
        m = packed.shape.as_list()[-1] if packed.shape.ndims else None
        size = rhs.shape.as_list()[-2] if rhs.shape.ndims else None
        if m is not None and size is not None and m != size:
            _fail(
                "tridiagonal_solve",
                "Expected number of left-hand sided and right-hand sides to be equal, "
                f"got {m} and {size}",
            )
        x = apply_op("TridiagonalSolve", (packed, rhs), attrs, "TridiagonalSolve").outputs[0]
        return _a.squeeze(x, [-1]) if vector else x


# -- eigenvalues of a tridiagonal matrix -----------------------------------------------------------
def eigh_tridiagonal(
    alpha,
    beta,
    eigvals_only: bool = True,
    select: str = "a",
    select_range=None,
    tol=None,
    name: Optional[str] = None,
):
    """The eigenvalues (ascending), and with ``eigvals_only=False`` the eigenvectors (as
    columns), of the symmetric tridiagonal matrix with diagonal ``alpha`` ``[n]`` and off
    diagonal ``beta`` ``[n - 1]``.  ``select``: ``'a'`` all, ``'v'`` those in the half-open
    interval ``(select_range[0], select_range[1]]``, ``'i'`` those of indices
    ``select_range[0]`` to ``select_range[1]`` inclusive.  ``tol`` (TensorFlow's bisection
    tolerance) must be None or positive: the values here are LAPACK's, exact to rounding."""
    if select not in ("a", "v", "i"):
        _fail("eigh_tridiagonal", f"select must be one of 'a', 'v' or 'i', got {select!r}")
    if select != "a" and select_range is None:
        _fail("eigh_tridiagonal", f"select={select!r} needs a select_range")
    graph = graph_of((alpha, beta))
    with graph.as_default(), graph.name_scope(name or "eigh_tridiagonal"):
        alpha = convert_to_tensor(alpha, name="alpha")
        beta = convert_to_tensor(beta, dtype=alpha.dtype, name="beta")
        if not alpha.dtype.is_floating:
            _fail(
                "eigh_tridiagonal",
                f"alpha must be a float tensor, got {alpha.dtype.name}",
                TypeError,
            )
        if alpha.shape.ndims not in (None, 1) or beta.shape.ndims not in (None, 1):
            _fail(
                "eigh_tridiagonal",
                f"alpha and beta must be vectors, got {alpha.shape} and {beta.shape}",
            )
        n, nb = (
            alpha.shape.as_list()[0] if alpha.shape.ndims else None,
            beta.shape.as_list()[0] if beta.shape.ndims else None,
        )
        if n is not None and nb is not None and nb != n - 1:
            _fail(
                "eigh_tridiagonal", f"beta must have one element fewer than alpha, got {nb} and {n}"
            )
        if tol is not None:
            known = tol if not isinstance(tol, Tensor) else None
            if known is not None and float(known) <= 0:
                _fail("eigh_tridiagonal", f"tol must be positive, got {tol}")
        # LEFT_RIGHT: the superdiagonal's values first in its row, the subdiagonal's last.
        packed = _a.stack([_g.pad(beta, [[0, 1]]), alpha, _g.pad(beta, [[1, 0]])], axis=0)
        dense = _mx.matrix_diag(packed, k=(-1, 1), align="LEFT_RIGHT")
        if eigvals_only:
            values = self_adjoint_eigvals(dense)
            vectors = None
        else:
            values, vectors = self_adjoint_eig(dense)
        if select == "i":
            low, high = select_range
            values = values[low : high + 1]
            vectors = None if vectors is None else vectors[:, low : high + 1]
        elif select == "v":
            low = convert_to_tensor(select_range[0], dtype=alpha.dtype)
            high = convert_to_tensor(select_range[1], dtype=alpha.dtype)
            from ..ops.extra_array_ops import boolean_mask

            keep = _m.logical_and(_m.greater(values, low), _m.less_equal(values, high))
            values = boolean_mask(values, keep)
            vectors = None if vectors is None else boolean_mask(vectors, keep, axis=1)
        return values if eigvals_only else (values, vectors)


__all__ = ["eigh_tridiagonal", "tridiagonal_matmul", "tridiagonal_solve"]

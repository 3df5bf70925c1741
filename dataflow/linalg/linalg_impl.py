"""Decompositions and matrix functions of ``tf.linalg``: ``svd``, ``eigh``/``eigvalsh``
(TensorFlow's ``SelfAdjointEigV2``), ``lu`` and the functions built on its factors, triangular
and least-squares solves, ``slogdet``, ``expm``, ``sqrtm``, ``pinv``, ``matrix_rank``, ``cross``,
the tridiagonal product and solve, ``eigh_tridiagonal`` and the conjugate gradient method.

Each decomposition is one op with a numpy kernel (LAPACK's, through numpy), as TensorFlow has a
kernel for each; the functions that TensorFlow composes of ops (``lu_solve``, ``pinv``, ...)
are composed the same way here, so they have gradients wherever their parts do.

The inner two dimensions are the matrix; any leading ones are a batch.  float16 matrices are
decomposed in float32 (LAPACK has no half precision) and the results cast back.

Gradients are TensorFlow's formulas.  Those of ``svd``, ``sqrtm`` and ``expm`` are each one
kernel (``SvdGrad``, ``MatrixSquareRootGrad``, ``MatrixExponentialGrad``; the last is the
Frechet derivative, read from the exponential of a block matrix); the others are composed of
ops.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops as _a
from ..ops import math_ops as _m
from ..ops import matrix_ops as _mx
from ..ops.math_ops import check_dtype, check_same_dtype, graph_of
from .decompositions import (  # noqa: F401 - defined there, reached here too
    _infer_like_first,
    eigh,
    eigvalsh,
    matrix_triangular_solve,
    self_adjoint_eig,
    self_adjoint_eigvals,
    svd,
    triangular_solve,
)
from .matrix_util import (  # noqa: F401 - defined there, reached here too
    _fail,
    _lapack,
    _matrix_shape,
    _not_invertible,
    _np_diag,
    _safe_reciprocal,
    _swap,
)
from .tridiagonal import (  # noqa: F401 - defined there, reached here too
    _compact_diagonals,
    eigh_tridiagonal,
    tridiagonal_matmul,
    tridiagonal_solve,
)

__all__ = [
    "cross",
    "eigh",
    "eigh_tridiagonal",
    "eigvalsh",
    "expm",
    "lstsq",
    "lu",
    "lu_matrix_inverse",
    "lu_reconstruct",
    "lu_solve",
    "matrix_rank",
    "matrix_solve_ls",
    "matrix_square_root",
    "matrix_triangular_solve",
    "pinv",
    "self_adjoint_eig",
    "self_adjoint_eigvals",
    "slogdet",
    "sqrtm",
    "svd",
    "triangular_solve",
    "tridiagonal_matmul",
    "tridiagonal_solve",
]


# -- log-determinant, square root, exponential -----------------------------------------------------
def _infer_slogdet(op):
    shape = _matrix_shape(op, square=True)
    batch = TensorShape(None) if shape.ndims is None else TensorShape(shape.as_list()[:-2])
    return [(op.inputs[0].dtype, batch)] * 2


def _slogdet_kernel(attrs):
    def log_matrix_determinant(x):
        with np.errstate(all="ignore"):
            sign, logdet = np.linalg.slogdet(_lapack(x))
            sign = np.where(np.isnan(logdet), np.nan, sign)
        return np.asarray(sign, x.dtype), np.asarray(logdet, x.dtype)

    return log_matrix_determinant


define_op("LogMatrixDeterminant", _infer_slogdet, _slogdet_kernel)


def slogdet(input, name: Optional[str] = None):  # noqa: A002
    """``(sign, log_abs_determinant)`` of each square matrix: the determinant is
    ``sign * exp(log_abs_determinant)``, with no overflow; a singular matrix gives
    ``(0, -inf)``."""
    graph = graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        sign, log_abs = apply_op(
            "LogMatrixDeterminant", (x,), None, name or "LogMatrixDeterminant"
        ).outputs
        return sign, log_abs


def _infer_square(op):
    return [(op.inputs[0].dtype, _matrix_shape(op, square=True))]


def _sqrtm_np(x: np.ndarray) -> np.ndarray:
    """The principal square root by the scaled product form of the Denman-Beavers iteration
    (Higham, Functions of Matrices, 6.17): ``M -> I``, ``Y -> sqrt(x)``."""
    n = x.shape[-1]
    eye = np.eye(n, dtype=x.dtype)
    y, m = x.copy(), x.copy()
    tolerance = n * np.finfo(x.dtype).eps
    for _ in range(100):
        det = np.abs(np.linalg.det(m))[..., None, None]
        mu = np.where((det > 0) & np.isfinite(det), det ** (-1.0 / (2 * n)), 1.0)
        m_inv = np.linalg.inv(m)
        y = 0.5 * mu * y @ (eye + m_inv / (mu * mu))
        m = 0.5 * (eye + (mu * mu * m + m_inv / (mu * mu)) / 2)
        if not np.max(np.abs(m - eye), initial=0.0) > tolerance:
            break
    return y


def _sqrtm_kernel(attrs):
    def matrix_square_root(x):
        if x.size == 0:
            return x.copy()
        dtype = x.dtype
        work = x.astype(np.float64)
        with np.errstate(all="ignore"):
            # A real matrix with a real eigenvalue <= 0 has no real principal square root:
            # NaN, as TensorFlow's real Schur method gives.
            eigenvalues = np.linalg.eigvals(np.where(np.isfinite(work), work, 0.0))
            scale = np.max(np.abs(eigenvalues), axis=-1, initial=0.0)[..., None]
            real = np.abs(eigenvalues.imag) <= 1e-12 * scale
            bad = np.any(real & (eigenvalues.real <= 0), axis=-1)
            bad |= ~np.all(np.isfinite(work), axis=(-2, -1))
            safe = np.where(bad[..., None, None], np.eye(x.shape[-1]), work)
            try:
                root = _sqrtm_np(safe)
            except np.linalg.LinAlgError:
                root = np.full(x.shape, np.nan)
            root[bad] = np.nan
        return root.astype(dtype)

    return matrix_square_root


define_op("MatrixSquareRoot", _infer_square, _sqrtm_kernel)


def matrix_square_root(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The principal square root of each square matrix: ``R`` with ``R @ R == input`` whose
    eigenvalues have positive real parts.  The input should be invertible, with no real
    negative eigenvalues."""
    graph = graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        return apply_op("MatrixSquareRoot", (x,), None, name or "MatrixSquareRoot").outputs[0]


sqrtm = matrix_square_root


def _sqrtm_grad_kernel(attrs):
    def matrix_square_root_grad(root, grad):
        # R dR + dR R = dA, as vec: (I kron R^T + R kron I) vec(dR^T) = vec(dA^T).
        n = root.shape[-1]
        eye = np.broadcast_to(np.eye(n, dtype=root.dtype), root.shape)
        kron = (
            lambda p, q: np.einsum("...ij,...kl->...ikjl", p, q).reshape(  # noqa: E731
                p.shape[:-2] + (n * n, n * n)
            )
        )
        system = kron(eye, _swap(root)) + kron(root, eye)
        vec = _swap(grad).reshape(grad.shape[:-2] + (n * n, 1))
        with np.errstate(all="ignore"):
            solved = np.linalg.solve(_lapack(system), _lapack(vec))
        return _swap(solved.reshape(grad.shape)).astype(grad.dtype)

    return matrix_square_root_grad


define_op(
    "MatrixSquareRootGrad",
    lambda op: [(op.inputs[1].dtype, op.inputs[1].shape)],
    _sqrtm_grad_kernel,
)

_PADE = {
    3: [120.0, 60.0, 12.0],
    5: [30240.0, 15120.0, 3360.0, 420.0, 30.0],
    7: [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0],
    9: [17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0],
    13: [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0],
}  # fmt: skip


def _pade(a: np.ndarray, order: int) -> tuple:
    """TensorFlow's Pade approximant terms ``(u, v)`` of ``exp(a)`` of ``order``."""
    b = _PADE[order]
    eye = np.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    if order == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (
            a6 @ (a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
        )
        v = (
            a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2)
            + b[6] * a6
            + b[4] * a4
            + b[2] * a2
            + b[0] * eye
        )
        return u, v
    powers = [eye, a2]
    while len(powers) <= order // 2:
        powers.append(powers[-1] @ a2)
    u = a @ (powers[-1] + sum(b[2 * i + 1] * powers[i] for i in range(len(powers) - 1)))
    v = sum(b[2 * i] * powers[i] for i in range(len(powers)))
    return u, v


def _expm_np(x: np.ndarray) -> np.ndarray:
    """TensorFlow's scaling and squaring with Pade approximants (Higham 2005), per matrix."""
    single = x.dtype != np.float64
    work = x.astype(np.float32 if single else np.float64)
    if single:
        maxnorm, conds, orders = (
            3.925724783138660,
            (4.258730016922831e-001, 1.880152677804762e000),
            (3, 5, 7),
        )
    else:
        maxnorm = 5.371920351148152
        conds = (
            1.495585217958292e-002,
            2.539398330063230e-001,
            9.504178996162932e-001,
            2.097847961257068e000,
        )
        orders = (3, 5, 7, 9, 13)
    flat = work.reshape((-1,) + x.shape[-2:])
    out = np.empty_like(flat)
    if not np.all(np.isfinite(np.abs(flat).sum(axis=-2))):
        return np.full(x.shape, np.nan, x.dtype)  # one non-finite matrix: all NaN, as TF
    for index, a in enumerate(flat):
        l1 = np.max(np.sum(np.abs(a), axis=0)) if a.size else 0.0
        order = next((o for c, o in zip(conds, orders) if l1 < c), orders[-1])
        squarings = int(max(np.floor(np.log(l1 / maxnorm) / np.log(2.0)), 0)) if l1 > 0 else 0
        scaled = a / np.asarray(2.0**squarings, a.dtype) if order == orders[-1] else a
        u, v = _pade(scaled, order)
        r = np.linalg.solve(-u + v, u + v)
        for _ in range(squarings if order == orders[-1] else 0):
            r = r @ r
        out[index] = r
    return out.reshape(x.shape).astype(x.dtype)


def _expm_kernel(attrs):
    def matrix_exponential(x):
        if x.size == 0:
            return x.copy()
        with np.errstate(all="ignore"):
            try:
                return _expm_np(x)
            except np.linalg.LinAlgError:
                raise _not_invertible(
                    "expm: the Pade approximant's denominator is singular"
                ) from None

    return matrix_exponential


define_op("MatrixExponential", _infer_square, _expm_kernel)


def expm(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The matrix exponential ``sum_n input^n / n!`` of each square matrix, by scaling and
    squaring with Pade approximants, as TensorFlow computes it."""
    graph = graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        return apply_op("MatrixExponential", (x,), None, name or "matrix_exponential").outputs[0]


def _expm_grad_kernel(attrs):
    def matrix_exponential_grad(a, grad):
        # The adjoint of the Frechet derivative L(A, .) is L(A^T, .): the top right block of
        # exp([[A^T, G], [0, A^T]]).
        n = a.shape[-1]
        block = np.zeros(a.shape[:-2] + (2 * n, 2 * n), a.dtype)
        block[..., :n, :n] = _swap(a)
        block[..., n:, n:] = _swap(a)
        block[..., :n, n:] = grad
        with np.errstate(all="ignore"):
            return _expm_np(block)[..., :n, n:].astype(grad.dtype)

    return matrix_exponential_grad


define_op("MatrixExponentialGrad", _infer_like_first, _expm_grad_kernel)


# -- LU --------------------------------------------------------------------------------------------
def _infer_lu(op):
    shape = _matrix_shape(op, square=True)
    index = op.attrs["output_idx_type"]
    batch = TensorShape(None) if shape.ndims is None else TensorShape(shape.as_list()[:-1])
    return [(op.inputs[0].dtype, shape), (index, batch)]


def _lu_np(x: np.ndarray) -> tuple:
    """The LU decomposition with partial pivoting (as LAPACK's getrf): ``lu`` holding the unit
    lower factor below the diagonal and the upper factor on and above it, and ``perm`` with
    ``x[..., perm, :] == L @ U``."""
    n = x.shape[-1]
    lu = np.array(_lapack(x), copy=True)
    batch = lu.shape[:-2]
    flat = lu.reshape((-1, n, n))
    perm = np.broadcast_to(np.arange(n), (flat.shape[0], n)).copy()
    rows = np.arange(flat.shape[0])
    for k in range(n):
        pivot = k + np.argmax(np.abs(flat[:, k:, k]), axis=1)
        swap = pivot != k
        if swap.any():
            r = rows[swap]
            flat[r, k], flat[r, pivot[swap]] = flat[r, pivot[swap]].copy(), flat[r, k].copy()
            perm[r, k], perm[r, pivot[swap]] = perm[r, pivot[swap]], perm[r, k].copy()
        diagonal = flat[:, k, k]
        safe = np.where(diagonal == 0, 1, diagonal)
        factors = np.where(diagonal[:, None] == 0, 0, flat[:, k + 1 :, k] / safe[:, None])
        flat[:, k + 1 :, k] = factors
        flat[:, k + 1 :, k + 1 :] -= factors[:, :, None] * flat[:, k, None, k + 1 :]
    return flat.reshape(batch + (n, n)).astype(x.dtype), perm.reshape(batch + (n,))


def _lu_kernel(attrs):
    index = _dtypes.as_dtype(attrs["output_idx_type"]).as_numpy_dtype

    def lu(x):
        if x.shape[-1] != x.shape[-2]:
            raise InvalidArgumentError(None, None, f"Input must be square, got {x.shape}")
        with np.errstate(all="ignore"):
            factors, perm = _lu_np(x)
        if not np.all(np.abs(np.diagonal(factors, axis1=-2, axis2=-1)) > 0):
            raise _not_invertible()
        return factors, perm.astype(index)

    return lu


define_op("Lu", _infer_lu, _lu_kernel)


def lu(input, output_idx_type=_dtypes.int32, name: Optional[str] = None):  # noqa: A002
    """``(lu, p)``: the LU decomposition with partial pivoting of each square matrix.  ``lu``
    holds ``L`` (unit lower triangular, its ones not stored) below the diagonal and ``U`` on
    and above it; ``p`` (of ``output_idx_type``) is the permutation with
    ``input[..., p, :] == L @ U``."""
    index = _dtypes.as_dtype(output_idx_type)
    if index not in (_dtypes.int32, _dtypes.int64):
        _fail("lu", f"output_idx_type must be int32 or int64, got {index.name}", TypeError)
    graph = graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        factors, perm = apply_op("Lu", (x,), {"output_idx_type": index}, name or "Lu").outputs
        return factors, perm


def _lu_factors(lower_upper):
    ones = _a.ones_like(_mx.matrix_diag_part(lower_upper))
    lower = _mx.matrix_set_diag(_mx.matrix_band_part(lower_upper, -1, 0), ones)
    upper = _mx.matrix_band_part(lower_upper, 0, -1)
    return lower, upper


def _permutation_matrix(perm, n, dtype):
    """``P`` with ``P @ x == x[..., perm, :]``."""
    return _a.one_hot(perm, n, dtype=dtype)


def _check_lu_args(function: str, lower_upper, perm, validate_args: bool, rhs=None) -> list:
    """TensorFlow's checks of LU factors (and a right-hand side): each made now when the
    static shapes decide it, else, with ``validate_args``, as an assertion when the graph
    runs (the assertions are returned)."""
    from ..ops.check_ops import assert_equal, assert_rank_at_least

    checks = []
    lu_rank, perm_rank = lower_upper.shape.ndims, perm.shape.ndims
    message = f"{function}: lower_upper must have at least 2 dimensions"
    if lu_rank is not None:
        if lu_rank < 2:
            _fail(function, f"lower_upper must have at least 2 dimensions, got {lower_upper.shape}")
    elif validate_args:
        checks.append(assert_rank_at_least(lower_upper, 2, message=message))
    message = f"{function}: rank(lower_upper) must equal rank(perm) + 1"
    if lu_rank is not None and perm_rank is not None:
        if lu_rank != perm_rank + 1:
            _fail(function, f"lower_upper {lower_upper.shape} and perm {perm.shape} differ in rank")
    elif validate_args:
        checks.append(assert_equal(_a.rank(lower_upper), _a.rank(perm) + 1, message=message))
    dims = lower_upper.shape.as_list()[-2:] if lu_rank else [None, None]
    if None not in dims:
        if dims[0] != dims[1]:
            _fail(function, f"lower_upper must be square, got {lower_upper.shape}")
    elif validate_args:
        shape = _a.shape(lower_upper)
        checks.append(
            assert_equal(shape[-2], shape[-1], message=f"{function}: lower_upper must be square")
        )
    if rhs is not None:
        if rhs.shape.ndims is not None:
            if rhs.shape.ndims < 2:
                _fail(function, f"rhs must have at least 2 dimensions, got {rhs.shape}")
        elif validate_args:
            message = f"{function}: rhs must have at least 2 dimensions"
            checks.append(assert_rank_at_least(rhs, 2, message=message))
        size = rhs.shape.as_list()[-2] if rhs.shape.ndims else None
        if dims[-1] is not None and size is not None:
            if dims[-1] != size:
                _fail(function, f"lower_upper {lower_upper.shape} and rhs {rhs.shape} do not match")
        elif validate_args:
            message = f"{function}: lower_upper.shape[-1] must equal rhs.shape[-2]"
            checks.append(
                assert_equal(_a.shape(lower_upper)[-1], _a.shape(rhs)[-2], message=message)
            )
    return checks


def _matrix_size(x):
    n = x.shape.as_list()[-1] if x.shape.ndims else None
    return n if n is not None else _a.shape(x)[-1]


def lu_reconstruct(lower_upper, perm, validate_args: bool = False, name: Optional[str] = None):
    """The matrix whose `lu` is ``(lower_upper, perm)``: ``P^T @ L @ U``."""
    graph = graph_of((lower_upper, perm))
    with graph.as_default(), graph.name_scope(name or "lu_reconstruct"):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        checks = _check_lu_args("lu_reconstruct", lower_upper, perm, validate_args)
        with graph.control_dependencies(checks):
            lower, upper = _lu_factors(lower_upper)
            product = _m.matmul(lower, upper)
            p = _permutation_matrix(perm, _matrix_size(lower_upper), lower_upper.dtype)
            return _m.matmul(p, product, transpose_a=True)


def lu_solve(lower_upper, perm, rhs, validate_args: bool = False, name: Optional[str] = None):
    """``X`` with ``A @ X == rhs`` given ``A``'s `lu` factors: the permuted ``rhs`` solved with
    the unit lower factor, then the upper one."""
    graph = graph_of((lower_upper, perm, rhs))
    with graph.as_default(), graph.name_scope(name or "lu_solve"):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        perm = convert_to_tensor(perm, name="perm")
        rhs = convert_to_tensor(rhs, dtype=lower_upper.dtype, name="rhs")
        checks = _check_lu_args("lu_solve", lower_upper, perm, validate_args, rhs)
        with graph.control_dependencies(checks):
            lower, upper = _lu_factors(lower_upper)
            p = _permutation_matrix(perm, _matrix_size(lower_upper), lower_upper.dtype)
            permuted = _m.matmul(p, rhs)
            y = matrix_triangular_solve(lower, permuted, lower=True)
            return matrix_triangular_solve(upper, y, lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args: bool = False, name: Optional[str] = None):
    """The inverse of the matrix whose `lu` is ``(lower_upper, perm)``."""
    graph = graph_of((lower_upper, perm))
    with graph.as_default(), graph.name_scope(name or "lu_matrix_inverse"):
        lower_upper = convert_to_tensor(lower_upper, name="lower_upper")
        eye = _mx.matrix_diag(_a.ones_like(_mx.matrix_diag_part(lower_upper)))
        return lu_solve(lower_upper, perm, eye, validate_args=validate_args)


# -- least squares, pseudo-inverse, rank -----------------------------------------------------------
def _infer_lstsq(op):
    matrix, rhs, _ = op.inputs
    check_same_dtype((matrix, rhs), ("matrix", "rhs"), op.type)
    _matrix_shape(op, "matrix")
    if matrix.shape.ndims is None or rhs.shape.ndims is None:
        return [(rhs.dtype, TensorShape(None))]
    return [
        (
            rhs.dtype,
            TensorShape(
                matrix.shape.as_list()[:-2] + [matrix.shape.as_list()[-1], rhs.shape.as_list()[-1]]
            ),
        )
    ]


def _lstsq_kernel(attrs):
    def matrix_solve_ls(matrix, rhs, l2):
        m, n = matrix.shape[-2:]
        if rhs.shape[-2] != m or rhs.shape[:-2] != matrix.shape[:-2]:
            raise InvalidArgumentError(
                None, None, f"matrix {matrix.shape} and rhs {rhs.shape} do not match"
            )
        out = np.zeros(matrix.shape[:-2] + (n, rhs.shape[-1]), rhs.dtype)
        flat_a = _lapack(matrix).reshape((-1, m, n))
        flat_b = _lapack(rhs).reshape((-1, m, rhs.shape[-1]))
        flat_out = out.reshape((-1, n, rhs.shape[-1]))
        for i in range(flat_a.shape[0]):
            if not (np.all(np.isfinite(flat_a[i])) and np.all(np.isfinite(flat_b[i]))):
                flat_out[i] = np.nan
                continue
            flat_out[i] = np.linalg.lstsq(flat_a[i], flat_b[i], rcond=None)[0]
        return out

    return matrix_solve_ls


define_op("MatrixSolveLs", _infer_lstsq, _lstsq_kernel)


def _regularized_gramian_cholesky(matrix, l2_regularizer, first_kind: bool):
    gramian = _m.matmul(matrix, matrix, transpose_a=first_kind, transpose_b=not first_kind)
    if l2_regularizer is not None:
        diagonal = _mx.matrix_diag_part(gramian)
        gramian = _mx.matrix_set_diag(gramian, diagonal + l2_regularizer)
    return _mx.cholesky(gramian)


def matrix_solve_ls(matrix, rhs, l2_regularizer=0.0, fast: bool = True, name: Optional[str] = None):
    """The least-squares solution ``X`` of ``matrix @ X == rhs``, minimizing ``||matrix @ X -
    rhs||^2 + l2_regularizer * ||X||^2``.  ``fast`` (the default) solves the normal equations
    by Cholesky: for ``M >= N`` ``(A^T A + l2 I) X = A^T rhs``, else the minimum-norm
    ``X = A^T (A A^T + l2 I)^-1 rhs`` (composed of ops, with their gradients).  ``fast=False``
    takes the minimum-norm solution by LAPACK's SVD-based least squares, which handles
    rank-deficient matrices; it has no gradient, and (as TensorFlow documents) ignores
    ``l2_regularizer``."""
    graph = graph_of((matrix, rhs, l2_regularizer))
    with graph.as_default(), graph.name_scope(name or "matrix_solve_ls"):
        matrix = convert_to_tensor(matrix, name="matrix")
        rhs = convert_to_tensor(rhs, dtype=matrix.dtype, name="rhs")
        if matrix.shape.ndims is not None and matrix.shape.ndims < 2:
            _fail("matrix_solve_ls", f"matrix must be at least rank 2, got {matrix.shape}")
        if rhs.shape.ndims is not None and rhs.shape.ndims < 2:
            _fail("matrix_solve_ls", f"rhs must be at least rank 2, got {rhs.shape}")
        l2 = convert_to_tensor(l2_regularizer, dtype=matrix.dtype, name="l2_regularizer")
        if not fast:
            l2_64 = _m.cast(l2, _dtypes.float64)
            return apply_op(
                "MatrixSolveLs", (matrix, rhs, l2_64), {"fast": False}, "MatrixSolveLs"
            ).outputs[0]
        regularizer = None if _is_zero(l2) else l2

        def overdetermined():
            chol = _regularized_gramian_cholesky(matrix, regularizer, first_kind=True)
            return _mx.cholesky_solve(chol, _m.matmul(matrix, rhs, transpose_a=True))

        def underdetermined():
            chol = _regularized_gramian_cholesky(matrix, regularizer, first_kind=False)
            return _m.matmul(matrix, _mx.cholesky_solve(chol, rhs), transpose_a=True)

        dims = matrix.shape.as_list()[-2:] if matrix.shape.ndims else [None, None]
        if None not in dims:
            return overdetermined() if dims[0] >= dims[1] else underdetermined()
        # The shape decides which normal equations when the graph runs, as in TensorFlow.
        from primitives.control_flow_ops import cond

        shape = _a.shape(matrix)
        return cond(_m.greater_equal(shape[-2], shape[-1]), overdetermined, underdetermined)


def _is_zero(t) -> bool:
    from ..framework.tensor_conversion import numpy_value_or_none

    known = numpy_value_or_none(t)
    return known is not None and float(known) == 0.0


lstsq = matrix_solve_ls


def _check_float_matrix(function: str, a, validate_args: bool):
    """``a``, checked to be a float matrix; of unknown rank with ``validate_args``, behind an
    assertion of its rank when the graph runs."""
    if not a.dtype.is_floating:
        _fail(function, f"input a must have a float dtype, got {a.dtype.name}", TypeError)
    if a.shape.ndims is not None:
        if a.shape.ndims < 2:
            _fail(function, f"input a must have at least 2 dimensions, got {a.shape}")
        return a
    if not validate_args:
        return a
    from ..ops.check_ops import assert_rank_at_least

    check = assert_rank_at_least(
        a, 2, message=f"{function}: input a must have at least 2 dimensions"
    )
    with a.graph.control_dependencies([check]):
        return _a.identity(a)


def matrix_rank(a, tol=None, validate_args: bool = False, name: Optional[str] = None) -> Tensor:
    """The number of singular values of each matrix above ``tol`` (by default ``eps *
    max(rows, columns) * the largest singular value``), as int32."""
    graph = graph_of((a, tol))
    with graph.as_default(), graph.name_scope(name or "matrix_rank"):
        a = convert_to_tensor(a, name="a")
        a = _check_float_matrix("matrix_rank", a, validate_args)
        s = svd(a, compute_uv=False)
        if tol is None:
            dims = a.shape.as_list()[-2:] if a.shape.ndims else [None, None]
            if None not in dims:
                largest = float(max(dims))
            else:
                largest = _m.cast(_m.reduce_max(_a.shape(a)[-2:]), a.dtype)
            eps = float(np.finfo(a.dtype.as_numpy_dtype).eps)
            tol = eps * largest * _m.reduce_max(s, axis=-1, keepdims=True)
        else:
            tol = convert_to_tensor(tol, dtype=a.dtype, name="tol")
        return _m.reduce_sum(_m.cast(_m.greater(s, tol), _dtypes.int32), axis=-1)


def pinv(a, rcond=None, validate_args: bool = False, name: Optional[str] = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix, from its SVD: singular values at or
    below ``rcond`` times the largest (by default ``10 * max(rows, columns) * eps``) count as
    zero."""
    graph = graph_of((a, rcond))
    with graph.as_default(), graph.name_scope(name or "pinv"):
        a = convert_to_tensor(a, name="a")
        a = _check_float_matrix("pinv", a, validate_args)
        dtype = a.dtype.as_numpy_dtype
        if rcond is None:
            dims = a.shape.as_list()[-2:] if a.shape.ndims else [None, None]
            if None not in dims:
                rcond = 10.0 * float(max(dims)) * float(np.finfo(dtype).eps)
            else:
                shape = _a.shape(a)
                largest = _m.cast(_m.maximum(shape[-2], shape[-1]), a.dtype)
                rcond = 10.0 * largest * float(np.finfo(dtype).eps)
        rcond = convert_to_tensor(rcond, dtype=a.dtype, name="rcond")
        s, u, v = svd(a, full_matrices=False, compute_uv=True)
        cutoff = rcond * _m.reduce_max(s, axis=-1)
        s = _m.where_v2(
            _m.greater(s, _a.expand_dims(cutoff, -1)),
            s,
            _a.fill(_a.shape(s), np.array(np.inf, dtype)),
        )
        return _m.matmul(_m.truediv(v, _a.expand_dims(s, -2)), u, transpose_b=True)


# -- cross product ---------------------------------------------------------------------------------
def _infer_cross(op):
    a, b = op.inputs
    check_same_dtype((a, b), ("a", "b"), op.type)
    check_dtype(a.dtype, _m.NUMERIC_TYPES, f"Input 'a' of '{op.type}'")
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    shape = a.shape.merge_with(b.shape)
    if shape.ndims is not None:
        if shape.ndims < 1 or shape.as_list()[-1] not in (None, 3):
            raise ValueError(f"the last dimension of a and b must be 3, got shape {shape}")
    return [(a.dtype, shape)]


def _cross_kernel(attrs):
    def cross(a, b):
        if a.shape != b.shape or a.ndim < 1 or a.shape[-1] != 3:
            raise InvalidArgumentError(
                None, None, f"a and b must have one shape ending in 3, got {a.shape} and {b.shape}"
            )
        return np.cross(a, b).astype(a.dtype, copy=False)

    return cross


define_op("Cross", _infer_cross, _cross_kernel)


def cross(a, b, name: Optional[str] = None) -> Tensor:
    """The cross product of 3-element vectors along the last dimension of ``a`` and ``b``."""
    graph = graph_of((a, b))
    with graph.as_default():
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, dtype=a.dtype, name="b")
        return apply_op("Cross", (a, b), None, name or "Cross").outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402


def _zeros_if_none(grad, like):
    return _a.zeros_like(like) if grad is None else grad


@RegisterGradient("Svd")
def _svd_gradient(op, grad_s, grad_u, grad_v):
    a = op.inputs[0]
    s, u, v = op.outputs
    compute_uv, full = op.attrs["compute_uv"], op.attrs["full_matrices"]
    if compute_uv:
        dims = a.shape.as_list()[-2:] if a.shape.ndims else [None, None]
        if None in dims:
            raise NotImplementedError(
                f"The gradient of svd '{op.name}' needs the matrix dimensions known, got {a.shape}"
            )
        if full and abs(dims[0] - dims[1]) > 1:
            raise NotImplementedError(
                f"The gradient of svd '{op.name}' with full_matrices=True is defined for "
                f"abs(m - n) <= 1, got shape {a.shape}"
            )
    grads = [_zeros_if_none(g, t) for g, t in ((grad_s, s), (grad_u, u), (grad_v, v))]
    return apply_op("SvdGrad", (a, s, u, v, *grads), dict(op.attrs)).outputs[0]


@RegisterGradient("SelfAdjointEigV2")
def _self_adjoint_eig_gradient(op, grad_e, grad_v):
    e, v = op.outputs
    grad_e = _zeros_if_none(grad_e, e)
    if op.attrs["compute_v"]:
        difference = _m.subtract(_a.expand_dims(e, -2), _a.expand_dims(e, -1))
        safe = _m.truediv(difference, _m.add(_m.multiply(difference, difference), 1e-20))
        f = _mx.matrix_set_diag(safe, _a.zeros_like(e))
        inner = _mx.matrix_diag(grad_e)
        if grad_v is not None:
            inner = _m.add(inner, _m.multiply(f, _m.matmul(v, grad_v, transpose_a=True)))
        grad_a = _m.matmul(v, _m.matmul(inner, v, transpose_b=True))
    else:
        _, v = self_adjoint_eig(op.inputs[0])
        grad_a = _m.matmul(v, _m.matmul(_mx.matrix_diag(grad_e), v, transpose_b=True))
    # The op reads only the lower triangle: symmetrize and keep that triangle.
    grad_a = _mx.matrix_band_part(_m.add(grad_a, _mx.matrix_transpose(grad_a)), -1, 0)
    return _mx.matrix_set_diag(grad_a, _m.multiply(_mx.matrix_diag_part(grad_a), 0.5))


@RegisterGradient("MatrixTriangularSolve")
def _triangular_solve_gradient(op, grad):
    a, b = op.inputs
    c = op.outputs[0]
    adjoint, lower = op.attrs["adjoint"], op.attrs["lower"]
    grad_b = matrix_triangular_solve(a, grad, lower=lower, adjoint=not adjoint)
    if adjoint:
        grad_a = _m.negative(_m.matmul(c, grad_b, transpose_b=True))
    else:
        grad_a = _m.negative(_m.matmul(grad_b, c, transpose_b=True))
    grad_a = _mx.matrix_band_part(grad_a, -1, 0) if lower else _mx.matrix_band_part(grad_a, 0, -1)
    if a.shape.is_fully_defined() and b.shape.is_fully_defined() and a.shape[:-2] == b.shape[:-2]:
        return grad_a, grad_b
    from ..ops.math_grad import sum_to_shape_of

    return sum_to_shape_of(grad_a, a), sum_to_shape_of(grad_b, b)


@RegisterGradient("LogMatrixDeterminant")
def _slogdet_gradient(op, _grad_sign, grad_log_abs):
    a = op.inputs[0]
    inverse = _mx.matrix_inverse(a, adjoint=True)
    return _m.multiply(_a.expand_dims(_a.expand_dims(grad_log_abs, -1), -1), inverse)


@RegisterGradient("MatrixSquareRoot")
def _sqrtm_gradient(op, grad):
    return apply_op("MatrixSquareRootGrad", (op.outputs[0], grad)).outputs[0]


@RegisterGradient("MatrixExponential")
def _expm_gradient(op, grad):
    return apply_op("MatrixExponentialGrad", (op.inputs[0], grad)).outputs[0]


@RegisterGradient("Lu")
def _lu_gradient(op, grad_lu, grad_perm):
    # TensorFlow defines none: differentiating through lu is an error there too.
    raise LookupError(f"No gradient defined for operation '{op.name}' (op type: Lu)")


@RegisterGradient("Cross")
def _cross_gradient(op, grad):
    a, b = op.inputs
    return cross(b, grad), cross(grad, a)


@RegisterGradient("MatrixSolveLs")
def _lstsq_gradient(op, grad):
    # Only fast=False makes this op (fast=True is composed of ops with their gradients).
    raise ValueError(f"Gradient not defined for fast=False (matrix_solve_ls '{op.name}')")


def _shift_left(x):
    """The rows of ``x`` (its next-to-last dimension) moved up one, a zero row last."""
    zeros = _a.zeros_like(x[..., :1, :])
    return _a.concat([x[..., 1:, :], zeros], axis=-2)


def _shift_right(x):
    zeros = _a.zeros_like(x[..., :1, :])
    return _a.concat([zeros, x[..., :-1, :]], axis=-2)


@RegisterGradient("TridiagonalMatMul")
def _tridiagonal_matmul_gradient(op, grad):
    superdiag, maindiag, subdiag, rhs = op.inputs
    sup_t, main_t, sub_t = (_mx.matrix_transpose(d) for d in (superdiag, maindiag, subdiag))
    grad_sup = _m.reduce_sum(_m.multiply(_shift_left(rhs), grad), axis=-1)
    grad_main = _m.reduce_sum(_m.multiply(rhs, grad), axis=-1)
    grad_sub = _m.reduce_sum(_m.multiply(_shift_right(rhs), grad), axis=-1)
    grad_rhs = _m.add_n(
        [
            _shift_right(_m.multiply(sup_t, grad)),
            _m.multiply(main_t, grad),
            _shift_left(_m.multiply(sub_t, grad)),
        ]
    )
    return (
        _a.expand_dims(grad_sup, -2),
        _a.expand_dims(grad_main, -2),
        _a.expand_dims(grad_sub, -2),
        grad_rhs,
    )


@RegisterGradient("TridiagonalSolve")
def _tridiagonal_solve_gradient(op, grad):
    diags = op.inputs[0]
    x = op.outputs[0]
    zeros = _a.zeros_like(diags[..., 0, :1])
    superdiag = _a.concat([diags[..., 2, 1:], zeros], axis=-1)
    subdiag = _a.concat([zeros, diags[..., 0, :-1]], axis=-1)
    transposed = _a.stack([superdiag, diags[..., 1, :], subdiag], axis=-2)
    grad_rhs = apply_op("TridiagonalSolve", (transposed, grad), dict(op.attrs)).outputs[0]
    # -(grad_rhs @ x^T), three diagonals of it only.
    diag = _m.reduce_sum(_m.multiply(grad_rhs, x), axis=-1)
    zero_row = _a.zeros_like(x[..., :1, :])
    up = _m.reduce_sum(
        _m.multiply(grad_rhs, _a.concat([x[..., 1:, :], zero_row], axis=-2)), axis=-1
    )
    down = _m.reduce_sum(
        _m.multiply(grad_rhs, _a.concat([zero_row, x[..., :-1, :]], axis=-2)), axis=-1
    )
    return _m.negative(_a.stack([up, diag, down], axis=-2)), grad_rhs


NotDifferentiable("SvdGrad")
NotDifferentiable("MatrixSquareRootGrad")
NotDifferentiable("MatrixExponentialGrad")

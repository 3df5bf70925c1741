"""Matrices and batches of matrices: inverse, determinant, solve, Cholesky (ops with numpy
kernels, as TensorFlow has kernels for them), and the diagonal and band helpers, the identity,
the trace and ``einsum``/``tensordot``.

The inner two dimensions are the matrix; any leading ones are a batch.  The diagonal helpers
compose ``where`` over an identity mask rather than multiplying by the identity, so an inf or
NaN off the diagonal never turns into NaN on it.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from . import array_ops as _a
from . import gather_ops as _g
from . import math_ops as _m
from .math_ops import FLOAT_TYPES, check_dtype, check_same_dtype, graph_of

__all__ = [
    "cholesky",
    "cholesky_solve",
    "diag",
    "diag_part",
    "einsum",
    "eye",
    "matrix_band_part",
    "matrix_determinant",
    "matrix_diag",
    "matrix_diag_part",
    "matrix_inverse",
    "matrix_set_diag",
    "matrix_solve",
    "matrix_transpose",
    "tensordot",
    "trace",
]


def _fail(function: str, message: str, error=ValueError):
    raise error(f"{function} at {_user_location()}: {message}")


def _square_shape(op, what: str = "input") -> TensorShape:
    x = op.inputs[0]
    check_dtype(x.dtype, FLOAT_TYPES, f"Input '{what}' of '{op.type}'")
    if x.shape.ndims is not None:
        if x.shape.ndims < 2:
            raise ValueError(f"{what} must be at least rank 2, got shape {x.shape}")
        rows, columns = x.shape.as_list()[-2:]
        if rows is not None and columns is not None and rows != columns:
            raise ValueError(f"{what} must be square matrices, got shape {x.shape}")
    return x.shape


def _run_linalg(function, *args):
    try:
        with np.errstate(all="ignore"):
            return function(*args)
    except np.linalg.LinAlgError as e:
        raise InvalidArgumentError(None, None, f"Input is not invertible: {e}") from None


def _infer_same_square(op):
    return [(op.inputs[0].dtype, _square_shape(op))]


def _inverse_kernel(attrs):
    adjoint = attrs["adjoint"]

    def matrix_inverse(x):
        inverse = _run_linalg(np.linalg.inv, x).astype(x.dtype)
        return np.swapaxes(inverse, -1, -2) if adjoint else inverse

    return matrix_inverse


def _infer_determinant(op):
    shape = _square_shape(op)
    batch = TensorShape(None) if shape.ndims is None else TensorShape(shape.as_list()[:-2])
    return [(op.inputs[0].dtype, batch)]


def _determinant_kernel(attrs):
    def matrix_determinant(x):
        return np.asarray(np.linalg.det(x), dtype=x.dtype)

    return matrix_determinant


def _infer_solve(op):
    matrix, rhs = op.inputs
    check_same_dtype((matrix, rhs), ("matrix", "rhs"), op.type)
    _square_shape(op, "matrix")
    if rhs.shape.ndims is not None and rhs.shape.ndims < 2:
        raise ValueError(f"rhs must be at least rank 2, got shape {rhs.shape}")
    if matrix.shape.ndims is not None and rhs.shape.ndims is not None:
        if not TensorShape(matrix.shape.as_list()[-1:]).is_compatible_with(
            rhs.shape.as_list()[-2:-1]
        ):
            raise ValueError(f"Shapes {matrix.shape} and {rhs.shape} are incompatible")
    return [(rhs.dtype, rhs.shape)]


def _solve_kernel(attrs):
    adjoint = attrs["adjoint"]

    def matrix_solve(matrix, rhs):
        if adjoint:
            matrix = np.swapaxes(matrix, -1, -2)
        return _run_linalg(np.linalg.solve, matrix, rhs).astype(rhs.dtype)

    return matrix_solve


def _cholesky_kernel(attrs):
    def cholesky(x):
        try:
            return np.linalg.cholesky(x).astype(x.dtype)
        except np.linalg.LinAlgError:
            raise InvalidArgumentError(
                None, None, "Cholesky decomposition was not successful. The input might not be "
                "valid."
            ) from None  # fmt: skip

    return cholesky


define_op("MatrixInverse", _infer_same_square, _inverse_kernel)
define_op("MatrixDeterminant", _infer_determinant, _determinant_kernel)
define_op("MatrixSolve", _infer_solve, _solve_kernel)
define_op("Cholesky", _infer_same_square, _cholesky_kernel)


def matrix_inverse(input, adjoint: bool = False, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse of each square matrix (its conjugate transpose with ``adjoint``); a singular
    matrix is an error at run time."""
    attrs = {"adjoint": bool(adjoint)}
    return apply_op("MatrixInverse", (input,), attrs, name or "MatrixInverse").outputs[0]


def matrix_determinant(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The determinant of each square matrix."""
    return apply_op("MatrixDeterminant", (input,), None, name or "MatrixDeterminant").outputs[0]


def matrix_solve(matrix, rhs, adjoint: bool = False, name: Optional[str] = None) -> Tensor:
    """``X`` with ``matrix @ X == rhs`` (``adjoint(matrix) @ X`` with ``adjoint``)."""
    graph = graph_of((matrix, rhs))
    with graph.as_default():
        attrs = {"adjoint": bool(adjoint)}
        return apply_op("MatrixSolve", (matrix, rhs), attrs, name or "MatrixSolve").outputs[0]


def cholesky(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The lower-triangular ``L`` with ``L @ L^T == input`` for each symmetric positive-definite
    matrix; any other matrix is an error at run time."""
    return apply_op("Cholesky", (input,), None, name or "Cholesky").outputs[0]


def cholesky_solve(chol, rhs, name: Optional[str] = None) -> Tensor:
    """``X`` with ``A @ X == rhs`` given ``chol``, the Cholesky factor ``L`` of ``A``
    (``A == L @ L^T``): two solves, ``L @ Y == rhs`` then ``L^T @ X == Y``."""
    graph = graph_of((chol, rhs))
    with graph.as_default(), graph.name_scope(name or "cholesky_solve"):
        y = matrix_solve(chol, rhs)
        return matrix_solve(chol, y, adjoint=True)


def matvec(
    a,
    b,
    transpose_a: bool = False,
    adjoint_a: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: Optional[str] = None,
) -> Tensor:
    """The matrix-vector product ``a @ b`` over the last dimension of ``b`` (batches
    broadcast): ``matmul`` with ``b`` as a one-column matrix."""
    graph = graph_of((a, b))
    with graph.as_default(), graph.name_scope(name or "MatVec"):
        column = _a.expand_dims(convert_to_tensor(b, name="b"), -1)
        product = _m.matmul(
            a, column, transpose_a=transpose_a, adjoint_a=adjoint_a,
            a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse,
        )  # fmt: skip
        return _a.squeeze(product, [-1])


def adjoint(matrix, name: Optional[str] = None) -> Tensor:
    """The conjugate transpose of each matrix (the transpose, for real dtypes)."""
    return matrix_transpose(matrix, name=name or "adjoint", conjugate=True)


def logdet(matrix, name: Optional[str] = None) -> Tensor:
    """``log(det(matrix))`` of each Hermitian positive-definite matrix, from its Cholesky
    factor (twice the sum of the logs of its diagonal), so it does not overflow."""
    graph = graph_of((matrix,))
    with graph.as_default(), graph.name_scope(name or "logdet"):
        chol = cholesky(matrix)
        return 2.0 * _m.reduce_sum(_m.log(matrix_diag_part(chol)), axis=[-1])


# -- composed helpers ------------------------------------------------------------------------------
def _check_matrices(function: str, x: Tensor) -> None:
    """Fails now when ``x`` is known to have rank below 2 (an unknown rank is checked by the
    kernel when the graph runs)."""
    if x.shape.ndims is not None and x.shape.ndims < 2:
        _fail(function, f"input must have rank of at least 2, got shape {x.shape}")


def _matrix_dims(function: str, x: Tensor) -> tuple:
    if x.shape.ndims is None or x.shape.ndims < 2:
        _fail(function, f"input must have a known rank of at least 2, got shape {x.shape}")
    return x.shape.ndims, x.shape.as_list()[-2:]


def matrix_transpose(a, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Each matrix of ``a`` transposed (the last two dimensions swapped); with ``conjugate``, a
    complex one is also conjugated (its adjoint)."""
    a = convert_to_tensor(a, name="a")
    rank, _ = _matrix_dims("matrix_transpose", a)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return _a.transpose(a, perm, name=name, conjugate=conjugate)


def _eye_mask(rows, columns) -> Tensor:
    """A bool ``[rows, columns]`` identity (rows/columns ints or scalar int32 tensors)."""
    return _m.equal(_a.reshape(_a.range(rows), [-1, 1]), _a.reshape(_a.range(columns), [1, -1]))


def _matrix_sizes(x: Tensor) -> tuple:
    rows, columns = x.shape.as_list()[-2:] if x.shape.ndims else (None, None)
    shape = _a.shape(x) if rows is None or columns is None else None
    rows = rows if rows is not None else shape[-2]
    columns = columns if columns is not None else shape[-1]
    return rows, columns


def eye(
    num_rows,
    num_columns=None,
    batch_shape=None,
    dtype=_dtypes.float32,
    name: Optional[str] = None,
) -> Tensor:
    """The identity matrix ``[num_rows, num_columns]`` (square by default), repeated over
    ``batch_shape``."""
    dtype = _dtypes.as_dtype(dtype)
    graph = graph_of((num_rows, num_columns))
    with graph.as_default(), graph.name_scope(name or "eye"):
        columns = num_rows if num_columns is None else num_columns
        if isinstance(num_rows, (int, np.integer)) and isinstance(columns, (int, np.integer)):
            matrix = convert_to_tensor(np.eye(num_rows, columns, dtype=dtype.as_numpy_dtype))
        else:
            matrix = _m.cast(_eye_mask(num_rows, columns), dtype)
        if batch_shape is None:
            return matrix
        batch = list(batch_shape)
        for _ in batch:
            matrix = _a.expand_dims(matrix, 0)
        return _g.tile(matrix, batch + [1, 1])


# -- band diagonals (MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3) ------------------------------
# As TensorFlow's ops, they take the band ``k`` (and MatrixDiagV3 the matrix size) as int32
# inputs, so these may be computed in the graph; a constant one also gives static shapes.
_ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")


def _int32_input(function: str, what: str, value, ranks=(0,)) -> Tensor:
    t = convert_to_tensor(value, name=what)
    if not t.dtype.is_integer:
        _fail(function, f"'{what}' must be an integer, got {t.dtype.name}", TypeError)
    if t.shape.ndims is not None and t.shape.ndims not in ranks:
        _fail(function, f"'{what}' must have rank in {list(ranks)}, got shape {t.shape}")
    return t if t.dtype == _dtypes.int32 else _m.cast(t, _dtypes.int32)


def _band_of(values, error=InvalidArgumentError) -> tuple:
    """``k`` (an int or a pair) as ``(low, high)``."""
    values = np.asarray(values).reshape(-1)
    if values.size not in (1, 2):
        message = f"k must have one or two elements, got {values.size}"
        raise error(message) if error is ValueError else error(None, None, message)
    low, high = int(values[0]), int(values[-1])
    if low > high:
        message = f"k must be (low, high) with low <= high, got ({low}, {high})"
        raise error(message) if error is ValueError else error(None, None, message)
    return low, high


def _known_band(op, index: int = 1):
    known = numpy_value_or_none(op.inputs[index])
    return None if known is None else _band_of(known, ValueError)


def _check_align(function: str, align: str) -> str:
    if align not in _ALIGNS:
        _fail(function, f"'align' must be one of {', '.join(_ALIGNS)}, got {align!r}")
    return align


def _band_layout(rows: int, columns: int, low: int, high: int, align: str) -> tuple:
    """For every ``(i, j)`` of a ``rows x columns`` matrix: whether it is in the band, and the
    (diagonal row, position) it has in the packed ``[high - low + 1, longest]`` diagonals
    (row ``r`` holds diagonal ``high - r``; a short diagonal starts at the right of its row
    when ``align`` says RIGHT for its side: superdiagonals first, subdiagonals second)."""
    longest = max(min(rows + min(0, high), columns - max(0, low)), 0)
    i = np.arange(rows).reshape(-1, 1)
    j = np.arange(columns).reshape(1, -1)
    d = j - i
    in_band = (d >= low) & (d <= high)
    lengths = np.minimum(rows + np.minimum(0, d), columns - np.maximum(0, d))
    right = np.where(d >= 0, align.split("_")[0] == "RIGHT", align.split("_")[1] == "RIGHT")
    position = np.minimum(i, j) + np.where(right, longest - lengths, 0)
    row = np.clip(high - d, 0, high - low)
    return in_band, row, np.where(in_band, position, 0), longest


def _diag_matrix_size(op_type: str, longest: int, low: int, high: int, rows: int, columns: int,
                      error=ValueError):  # fmt: skip
    least_rows = longest - min(high, 0)
    least_columns = longest + max(low, 0)
    if rows == -1 and columns == -1:
        rows = columns = max(least_rows, least_columns)
    elif rows == -1:
        rows = least_rows
    elif columns == -1:
        columns = least_columns
    if rows != least_rows and columns != least_columns:
        message = (
            f"{op_type}: the number of rows or columns is not consistent with the diagonal: "
            f"num_rows={rows}, num_cols={columns}, a diagonal of {longest} and k=({low}, {high}) "
            f"need num_rows={least_rows} or num_cols={least_columns}"
        )
        raise error(message) if error is ValueError else error(None, None, message)
    return rows, columns


def _check_band(op_type: str, rows: int, columns: int, low: int, high: int, error):
    if (rows and -low >= rows) or (columns and high >= columns):
        message = (
            f"{op_type}: the diagonal band k=({low}, {high}) is outside a {rows} x {columns} "
            f"matrix: k must lie in ({-rows}, {columns})"
        )
        raise (error(message) if error is ValueError else error(None, None, message))


def _infer_matrix_diag(op):
    diagonal, _, num_rows, num_cols, padding = op.inputs
    check_same_dtype((diagonal, padding), ("diagonal", "padding_value"), op.type)
    band = _known_band(op)
    if diagonal.shape.ndims is None or band is None:
        return [(diagonal.dtype, TensorShape(None))]
    low, high = band
    need = 1 if low == high else 2
    if diagonal.shape.ndims < need:
        raise ValueError(f"diagonal must be at least rank {need}, got shape {diagonal.shape}")
    dims = diagonal.shape.as_list()
    batch = dims[:-1] if low == high else dims[:-2]
    if low != high and dims[-2] is not None and dims[-2] != high - low + 1:
        raise ValueError(
            f"diagonal's second to last dimension must be {high - low + 1} for k=({low}, "
            f"{high}), got shape {diagonal.shape}"
        )
    sizes = [numpy_value_or_none(t) for t in (num_rows, num_cols)]
    if dims[-1] is None or any(s is None for s in sizes):
        return [(diagonal.dtype, TensorShape(batch + [None, None]))]
    rows, columns = _diag_matrix_size(op.type, dims[-1], low, high, *(int(s) for s in sizes))
    return [(diagonal.dtype, TensorShape(batch + [rows, columns]))]


def _matrix_diag_kernel(attrs):
    align = attrs["align"]

    def matrix_diag(diagonal, k, num_rows, num_cols, padding):
        low, high = _band_of(k)
        if diagonal.ndim < (1 if low == high else 2):
            raise InvalidArgumentError(None, None, f"diagonal's rank is too low: {diagonal.shape}")
        packed = diagonal[..., None, :] if low == high else diagonal
        if packed.shape[-2] != high - low + 1:
            raise InvalidArgumentError(
                None, None, f"diagonal's second to last dimension must be {high - low + 1}"
            )
        rows, columns = _diag_matrix_size(
            "MatrixDiagV3", packed.shape[-1], low, high, int(num_rows), int(num_cols),
            InvalidArgumentError,
        )  # fmt: skip
        in_band, row, position, longest = _band_layout(rows, columns, low, high, align)
        if not in_band.any():
            return np.full(packed.shape[:-2] + (rows, columns), padding, diagonal.dtype)
        if longest != packed.shape[-1]:
            raise InvalidArgumentError(
                None, None, f"diagonal's last dimension must be {longest}, got {packed.shape[-1]}"
            )
        return np.where(in_band, packed[..., row, position], padding).astype(diagonal.dtype)

    return matrix_diag


def _infer_matrix_diag_part(op):
    x, _, padding = op.inputs
    check_same_dtype((x, padding), ("input", "padding_value"), op.type)
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise ValueError(f"input must be at least rank 2, got shape {x.shape}")
    band = _known_band(op)
    if x.shape.ndims is None or band is None:
        return [(x.dtype, TensorShape(None))]
    low, high = band
    *batch, rows, columns = x.shape.as_list()
    longest = None
    if rows is not None and columns is not None:
        _check_band(op.type, rows, columns, low, high, ValueError)
        longest = max(min(rows + min(0, high), columns - max(0, low)), 0)
    if low == high:
        return [(x.dtype, TensorShape(batch + [longest]))]
    return [(x.dtype, TensorShape(batch + [high - low + 1, longest]))]


def _matrix_diag_part_kernel(attrs):
    align = attrs["align"]

    def matrix_diag_part(x, k, padding):
        low, high = _band_of(k)
        if x.ndim < 2:
            raise InvalidArgumentError(None, None, f"input must be at least rank 2: {x.shape}")
        rows, columns = x.shape[-2:]
        _check_band("MatrixDiagPartV3", rows, columns, low, high, InvalidArgumentError)
        longest = max(min(rows + min(0, high), columns - max(0, low)), 0)
        diagonals = np.arange(high, low - 1, -1).reshape(-1, 1)  # row r holds diagonal high - r
        lengths = np.minimum(rows + np.minimum(0, diagonals), columns - np.maximum(0, diagonals))
        right = np.where(
            diagonals >= 0, align.split("_")[0] == "RIGHT", align.split("_")[1] == "RIGHT"
        )
        n = np.arange(longest).reshape(1, -1) - np.where(right, longest - lengths, 0)
        valid = (n >= 0) & (n < lengths)
        i = np.where(valid, n + np.maximum(0, -diagonals), 0)
        j = np.where(valid, n + np.maximum(0, diagonals), 0)
        if x.size == 0:
            out = np.full(x.shape[:-2] + valid.shape, padding, x.dtype)
        else:
            out = np.where(valid, x[..., i, j], padding).astype(x.dtype, copy=False)
        return out[..., 0, :] if low == high else out

    return matrix_diag_part


def _infer_matrix_set_diag(op):
    x, diagonal, _ = op.inputs
    check_same_dtype((x, diagonal), ("input", "diagonal"), op.type)
    if x.shape.ndims is not None and x.shape.ndims < 2:
        raise ValueError(f"input must be at least rank 2, got shape {x.shape}")
    return [(x.dtype, x.shape)]


def _matrix_set_diag_kernel(attrs):
    align = attrs["align"]

    def matrix_set_diag(x, diagonal, k):
        low, high = _band_of(k)
        if x.ndim < 2:
            raise InvalidArgumentError(None, None, f"input must be at least rank 2: {x.shape}")
        rows, columns = x.shape[-2:]
        _check_band("MatrixSetDiagV3", rows, columns, low, high, InvalidArgumentError)
        in_band, row, position, longest = _band_layout(rows, columns, low, high, align)
        packed = diagonal[..., None, :] if low == high else diagonal
        expected = x.shape[:-2] + (high - low + 1, longest)
        if packed.shape != expected:
            shown = expected if low != high else expected[:-2] + expected[-1:]
            raise InvalidArgumentError(
                None, None,
                f"diagonal must have shape {list(shown)}, got {list(diagonal.shape)}",
            )  # fmt: skip
        if not in_band.any() or x.size == 0:
            return x.copy()
        return np.where(in_band, packed[..., row, position], x)

    return matrix_set_diag


define_op("MatrixDiagV3", _infer_matrix_diag, _matrix_diag_kernel)
define_op("MatrixDiagPartV3", _infer_matrix_diag_part, _matrix_diag_part_kernel)
define_op("MatrixSetDiagV3", _infer_matrix_set_diag, _matrix_set_diag_kernel)


def _band_input(function: str, k) -> Tensor:
    k = _int32_input(function, "k", k, ranks=(0, 1))
    known = numpy_value_or_none(k)
    if known is not None:
        try:
            _band_of(known, ValueError)
        except ValueError as e:
            _fail(function, str(e))
    return k


def matrix_diag(
    diagonal,
    name: str = "diag",
    k=0,
    num_rows=-1,
    num_cols=-1,
    padding_value=0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """Matrices with ``diagonal`` on their diagonals ``k`` (an int, or ``(low, high)`` for a
    band: then ``diagonal`` is ``[..., high - low + 1, longest]``, its row ``r`` holding
    diagonal ``high - r``, short diagonals padded as ``align`` says), ``padding_value``
    elsewhere.  ``num_rows``/``num_cols`` default (``-1``) to the smallest that fit."""
    graph = graph_of((diagonal, k, num_rows, num_cols, padding_value))
    with graph.as_default(), graph.name_scope(name):
        diagonal = convert_to_tensor(diagonal, name="diagonal")
        if diagonal.shape.ndims == 0:
            _fail("matrix_diag", "diagonal must be at least rank 1, got a scalar")
        inputs = (
            diagonal,
            _band_input("matrix_diag", k),
            _int32_input("matrix_diag", "num_rows", num_rows),
            _int32_input("matrix_diag", "num_cols", num_cols),
            convert_to_tensor(padding_value, dtype=diagonal.dtype, name="padding_value"),
        )
        attrs = {"align": _check_align("matrix_diag", align)}
        return apply_op("MatrixDiagV3", inputs, attrs, "MatrixDiag").outputs[0]


def matrix_diag_part(
    input,  # noqa: A002
    name: str = "diag_part",
    k=0,
    padding_value=0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """The diagonals ``k`` of the matrices of ``input``: the main one by default
    (``min(rows, columns)`` long); for a band ``k=(low, high)``, ``[..., high - low + 1,
    longest]`` with row ``r`` holding diagonal ``high - r``, short ones padded with
    ``padding_value`` on the side ``align`` says."""
    graph = graph_of((input, k, padding_value))
    with graph.as_default(), graph.name_scope(name):
        x = convert_to_tensor(input, name="input")
        _check_matrices("matrix_diag_part", x)
        inputs = (
            x,
            _band_input("matrix_diag_part", k),
            convert_to_tensor(padding_value, dtype=x.dtype, name="padding_value"),
        )
        attrs = {"align": _check_align("matrix_diag_part", align)}
        return apply_op("MatrixDiagPartV3", inputs, attrs, "MatrixDiagPart").outputs[0]


def matrix_set_diag(
    input,  # noqa: A002
    diagonal,
    name: str = "set_diag",
    k=0,
    align: str = "RIGHT_LEFT",
) -> Tensor:
    """``input`` with its diagonals ``k`` replaced by ``diagonal`` (laid out as
    `matrix_diag_part` gives them)."""
    graph = graph_of((input, diagonal, k))
    with graph.as_default(), graph.name_scope(name):
        x = convert_to_tensor(input, name="input")
        diagonal = convert_to_tensor(diagonal, dtype=x.dtype, name="diagonal")
        _check_matrices("matrix_set_diag", x)
        inputs = (x, diagonal, _band_input("matrix_set_diag", k))
        attrs = {"align": _check_align("matrix_set_diag", align)}
        return apply_op("MatrixSetDiagV3", inputs, attrs, "MatrixSetDiag").outputs[0]


def matrix_band_part(input, num_lower, num_upper, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """``input`` with everything outside the band of ``num_lower`` subdiagonals and
    ``num_upper`` superdiagonals zeroed (a negative count keeps that whole triangle)."""
    graph = graph_of((input, num_lower, num_upper))
    with graph.as_default(), graph.name_scope(name or "MatrixBandPart"):
        x = convert_to_tensor(input, name="input")
        _check_matrices("matrix_band_part", x)
        rows, columns = _matrix_sizes(x)
        below = _a.reshape(_a.range(rows), [-1, 1]) - _a.reshape(_a.range(columns), [1, -1])
        lower = _m.cast(convert_to_tensor(num_lower, name="num_lower"), _dtypes.int32)
        upper = _m.cast(convert_to_tensor(num_upper, name="num_upper"), _dtypes.int32)
        in_band = _m.logical_and(
            _m.logical_or(lower < 0, below <= lower),
            _m.logical_or(upper < 0, _m.negative(below) <= upper),
        )
        return _m.where_v2(in_band, x, _a.zeros_like(x))


def trace(x, name: Optional[str] = None) -> Tensor:
    """The sum of each matrix's main diagonal."""
    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "Trace"):
        return _m.reduce_sum(matrix_diag_part(x), -1)


def diag(diagonal, name: Optional[str] = None) -> Tensor:
    """The tensor of rank ``2k`` with ``diagonal`` (rank ``k``) on its diagonal:
    ``out[i..., i...] = diagonal[i...]``, zeros elsewhere."""
    graph = graph_of((diagonal,))
    with graph.as_default(), graph.name_scope(name or "Diag"):
        diagonal = convert_to_tensor(diagonal, name="diagonal")
        dims = diagonal.shape.as_list() if diagonal.shape.ndims is not None else None
        if dims is None or None in dims or not dims:
            _fail("diag", f"diagonal must have a known shape of rank >= 1, got {diagonal.shape}")
        square = matrix_diag(_a.reshape(diagonal, [-1]))
        return _a.reshape(square, dims + dims)


def diag_part(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse of `diag`: of a rank-``2k`` tensor whose first ``k`` dimensions equal the
    last ``k``, the diagonal ``out[i...] = input[i..., i...]``."""
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or "DiagPart"):
        x = convert_to_tensor(input, name="input")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is None or None in dims or not dims or len(dims) % 2:
            _fail("diag_part", f"input must have a known shape of even rank, got {x.shape}")
        half = dims[: len(dims) // 2]
        if half != dims[len(dims) // 2 :]:
            _fail("diag_part", f"input's first half of dimensions must equal its second: {dims}")
        size = int(np.prod(half))
        return _a.reshape(matrix_diag_part(_a.reshape(x, [size, size])), half)


def tensordot(a, b, axes, name: Optional[str] = None) -> Tensor:
    """The sum of products of ``a`` and ``b`` over ``axes``: an int ``n`` (the last ``n`` of
    ``a`` with the first ``n`` of ``b``) or a pair of axis lists.  Composed of transposes,
    reshapes and one ``matmul``, as TensorFlow does; the shapes must be known."""
    graph = graph_of((a, b))
    with graph.as_default(), graph.name_scope(name or "Tensordot"):
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, dtype=a.dtype, name="b")
        if a.shape.ndims is None or b.shape.ndims is None:
            _fail("tensordot", "needs a and b of known rank")
        a_dims, b_dims = a.shape.as_list(), b.shape.as_list()
        if isinstance(axes, (int, np.integer)):
            if axes < 0 or axes > min(len(a_dims), len(b_dims)):
                _fail("tensordot", f"'axes' must be at most the rank of a and b, got {axes}")
            a_axes = list(range(len(a_dims) - axes, len(a_dims)))
            b_axes = list(range(axes))
        else:
            a_axes, b_axes = axes
            a_axes = [a_axes] if isinstance(a_axes, int) else list(a_axes)
            b_axes = [b_axes] if isinstance(b_axes, int) else list(b_axes)
            a_axes = [x % len(a_dims) for x in a_axes]
            b_axes = [x % len(b_dims) for x in b_axes]
        if len(a_axes) != len(b_axes):
            _fail("tensordot", f"axes {a_axes} and {b_axes} have different lengths")
        for i, j in zip(a_axes, b_axes):
            if a_dims[i] is not None and b_dims[j] is not None and a_dims[i] != b_dims[j]:
                _fail(
                    "tensordot", f"a's axis {i} ({a_dims[i]}) does not match b's {j} ({b_dims[j]})"
                )
        a_free = [i for i in range(len(a_dims)) if i not in a_axes]
        b_free = [i for i in range(len(b_dims)) if i not in b_axes]
        if None in [a_dims[i] for i in a_free + a_axes] or None in [b_dims[i] for i in b_free]:
            _fail("tensordot", f"needs known shapes, got {a.shape} and {b.shape}")
        inner = int(np.prod([a_dims[i] for i in a_axes]))
        a_matrix = _a.reshape(_a.transpose(a, a_free + a_axes), [-1, inner])
        b_matrix = _a.reshape(_a.transpose(b, b_axes + b_free), [inner, -1])
        product = _m.matmul(a_matrix, b_matrix)
        return _a.reshape(product, [a_dims[i] for i in a_free] + [b_dims[i] for i in b_free])


# -- einsum ----------------------------------------------------------------------------------------
def _parse_einsum(equation: str, count: int) -> tuple:
    equation = equation.replace(" ", "")
    if "." in equation:
        _fail("einsum", "ellipses ('...') are not supported", NotImplementedError)
    if "->" in equation:
        inputs, output = equation.split("->")
    else:
        inputs = equation
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = inputs.split(",")
    if len(terms) != count:
        _fail("einsum", f"the equation names {len(terms)} inputs, but {count} were given")
    return terms, output


def _infer_einsum(op):
    equation = op.attrs["equation"]
    terms, output = equation.split("->")[0].split(","), equation.split("->")[1]
    sizes: dict = {}
    for term, x in zip(terms, op.inputs):
        if x.dtype is not op.inputs[0].dtype:
            raise TypeError("einsum's inputs must share one dtype")
        if x.shape.ndims is None:
            continue
        if len(term) != x.shape.ndims:
            raise ValueError(f"subscripts '{term}' do not match an input of shape {x.shape}")
        for letter, dim in zip(term, x.shape.as_list()):
            if dim is None:
                continue
            if sizes.get(letter, dim) != dim:
                raise ValueError(f"dimension '{letter}' is {sizes[letter]} and {dim}")
            sizes[letter] = dim
    return [(op.inputs[0].dtype, TensorShape([sizes.get(c) for c in output]))]


def _einsum_kernel(attrs):
    equation = attrs["equation"]

    def einsum(*inputs):
        return np.asarray(np.einsum(equation, *inputs), dtype=inputs[0].dtype)

    return einsum


define_op("Einsum", _infer_einsum, _einsum_kernel)


def einsum(equation: str, *inputs, **kwargs) -> Tensor:
    """The Einstein summation ``equation`` (``"ij,jk->ik"``) over ``inputs``; an equation
    without ``->`` outputs the letters used once, in alphabetical order."""
    name = kwargs.pop("name", None)
    if kwargs:
        _fail("einsum", f"unexpected arguments {sorted(kwargs)}", TypeError)
    terms, output = _parse_einsum(equation, len(inputs))
    graph = graph_of(inputs)
    with graph.as_default():
        tensors = [convert_to_tensor(x) for x in inputs]
        attrs = {"equation": ",".join(terms) + "->" + output}
        return apply_op("Einsum", tensors, attrs, name or "Einsum").outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402


@RegisterGradient("MatrixInverse")
def _inverse_grad(op, grad):
    # Y = inv(A): dA = -Y^T g Y^T.  With adjoint Y = inv(A^T), and dA = -Y g^T Y.
    y = op.outputs[0]
    if op.attrs["adjoint"]:
        return _m.negative(_m.matmul(y, _m.matmul(grad, y, transpose_a=True)))
    return _m.negative(_m.matmul(y, _m.matmul(grad, y, transpose_b=True), transpose_a=True))


@RegisterGradient("MatrixDeterminant")
def _determinant_grad(op, grad):
    x, determinant = op.inputs[0], op.outputs[0]
    scale = _a.expand_dims(_a.expand_dims(_m.multiply(grad, determinant), -1), -1)
    return _m.multiply(scale, matrix_transpose(matrix_inverse(x)))


@RegisterGradient("MatrixSolve")
def _solve_grad(op, grad):
    matrix, _ = op.inputs
    solution = op.outputs[0]
    adjoint = op.attrs["adjoint"]
    grad_rhs = matrix_solve(matrix, grad, adjoint=not adjoint)
    if adjoint:
        grad_matrix = _m.negative(_m.matmul(solution, grad_rhs, transpose_b=True))
    else:
        grad_matrix = _m.negative(_m.matmul(grad_rhs, solution, transpose_b=True))
    return grad_matrix, grad_rhs


@RegisterGradient("Cholesky")
def _cholesky_grad(op, grad):
    # Murray's formula, as TensorFlow's: Phi(L^T grad) halved on the diagonal, lower part.
    lower = op.outputs[0]
    lower_inverse = matrix_inverse(lower)
    middle = _m.matmul(lower, grad, transpose_a=True)
    middle = matrix_set_diag(middle, _m.multiply(matrix_diag_part(middle), 0.5))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = _m.matmul(_m.matmul(lower_inverse, middle, transpose_a=True), lower_inverse)
    grad_a = _m.add(grad_a, matrix_transpose(grad_a))
    return _m.multiply(grad_a, 0.5)


@RegisterGradient("MatrixDiagV3")
def _matrix_diag_grad(op, grad):
    diagonal, k, _, _, padding = op.inputs
    zero = _a.zeros_like(padding)
    part = apply_op("MatrixDiagPartV3", (grad, k, zero), {"align": op.attrs["align"]})
    return part.outputs[0], None, None, None, None


@RegisterGradient("MatrixDiagPartV3")
def _matrix_diag_part_grad(op, grad):
    x, k, _ = op.inputs
    placed = apply_op("MatrixSetDiagV3", (_a.zeros_like(x), grad, k), {"align": op.attrs["align"]})
    return placed.outputs[0], None, None


@RegisterGradient("MatrixSetDiagV3")
def _matrix_set_diag_grad(op, grad):
    _, diagonal, k = op.inputs
    attrs = {"align": op.attrs["align"]}
    grad_input = apply_op("MatrixSetDiagV3", (grad, _a.zeros_like(diagonal), k), attrs)
    zero = _a.zeros([], grad.dtype)
    grad_diagonal = apply_op("MatrixDiagPartV3", (grad, k, zero), attrs)
    return grad_input.outputs[0], grad_diagonal.outputs[0], None


@RegisterGradient("Einsum")
def _einsum_grad(op, grad):
    """Each input's gradient is the einsum of the output gradient with the other inputs onto
    that input's subscripts; a letter only that input has (summed away) is broadcast back."""
    terms, output = op.attrs["equation"].split("->")
    terms = terms.split(",")
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        others = [t for j, t in enumerate(terms) if j != i]
        present = set(output) | set("".join(others))
        kept = "".join(c for c in term if c in present)
        if len(set(term)) != len(term):
            _fail("einsum gradient", f"repeated subscripts in '{term}' are not supported")
        operands = [grad] + [t for j, t in enumerate(op.inputs) if j != i]
        partial = einsum(",".join([output] + others) + "->" + kept, *operands)
        if kept != term:
            expanded = partial
            for position, letter in enumerate(term):
                if letter not in present:
                    expanded = _a.expand_dims(expanded, position)
            partial = _m.add(expanded, _a.zeros_like(x))
        grads.append(partial)
    return grads

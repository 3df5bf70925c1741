"""What the matrix functions share: errors that name the function and the user's line, shapes of
(batches of) matrices, and numpy helpers (LAPACK-ready copies, transposes, diagonals)."""

from __future__ import annotations

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.graph import _user_location
from ..framework.tensor_shape import TensorShape
from ..ops.math_ops import FLOAT_TYPES, check_dtype


def _fail(function: str, message: str, error=ValueError):
    raise error(f"{function} at {_user_location()}: {message}")


def _lapack(x: np.ndarray) -> np.ndarray:
    """``x`` in a dtype LAPACK takes (float16 goes to float32)."""
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _not_invertible(what: str = "Input is not invertible."):
    return InvalidArgumentError(None, None, what)


def _matrix_shape(op, what: str = "input", square: bool = False) -> TensorShape:
    x = op.inputs[0]
    check_dtype(x.dtype, FLOAT_TYPES, f"Input '{what}' of '{op.type}'")
    if x.shape.ndims is not None:
        if x.shape.ndims < 2:
            raise ValueError(f"{what} must be at least rank 2, got shape {x.shape}")
        rows, columns = x.shape.as_list()[-2:]
        if square and rows is not None and columns is not None and rows != columns:
            raise ValueError(f"{what} must be square matrices, got shape {x.shape}")
    return x.shape


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _np_diag(d: np.ndarray) -> np.ndarray:
    return d[..., :, None] * np.eye(d.shape[-1], dtype=d.dtype)


def _safe_reciprocal(x: np.ndarray, epsilon: float = 1e-20) -> np.ndarray:
    """TensorFlow's Lorentz-broadened ``1 / x`` of its SVD and eigen gradients: no inf at 0."""
    return x / (x * x + epsilon)

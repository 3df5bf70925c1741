"""``tf.linalg.logm``: the principal matrix logarithm, TensorFlow's ``MatrixLogarithm`` op.

As in TensorFlow the op takes complex64 and complex128 matrices only (the logarithm of a real
matrix is complex in general); the inner two dimensions are the matrix, any leading ones a
batch.  The kernel is ``scipy.linalg.logm`` (the inverse scaling and squaring method of Al-Mohy
and Higham on the complex Schur form; TensorFlow's Eigen kernel is also a Schur method), from
the optional extra ``special``: a robust matrix logarithm for defective and ill-conditioned
matrices is not something to rewrite.  A matrix with a zero eigenvalue has no logarithm: all NaN,
as TensorFlow gives (a zero on the diagonal of the complex Schur form in the input's
precision; a matrix that is singular only up to rounding may give NaN in TensorFlow and large
finite values here).

TensorFlow defines no gradient for the op; here it has one: the adjoint of the Frechet
derivative, ``L(A^H, G)``, read from the logarithm of the block matrix ``[[A^H, G], [0, A^H]]``
(so it is itself differentiable).
"""

from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

from ..framework.errors import InvalidArgumentError
from ..framework.gradient_registry import RegisterGradient
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op_output, define_op
from ..framework.tensor_conversion import convert_to_tensor
from .math_ops import COMPLEX_TYPES, graph_of

__all__ = ["logm", "matrix_logarithm"]


def _scipy_linalg(where: str = "logm (MatrixLogarithm)"):
    """``scipy.linalg``, or an ImportError naming the extra that installs it."""
    try:
        import scipy.linalg
    except ImportError:
        raise ImportError(
            f"{where} needs scipy: install dataflow's 'special' extra "
            "(pip install 'dataflow[special]')"
        ) from None
    return scipy.linalg


def _infer_logm(op):
    x = op.inputs[0]
    shape = x.shape
    if shape.ndims is not None:
        if shape.ndims < 2:
            raise ValueError(
                f"Shape must be at least rank 2 but is rank {shape.ndims} for 'MatrixLogarithm' "
                f"with input shape {shape}"
            )
        rows, columns = shape.as_list()[-2:]
        if rows is not None and columns is not None and rows != columns:
            raise ValueError(
                f"Dimensions must be equal, but are {rows} and {columns} for 'MatrixLogarithm' "
                f"with input shape {shape}"
            )
    return [(x.dtype, shape)]


def _logm_kernel(attrs):
    linalg = _scipy_linalg()

    def matrix_logarithm(x):
        if x.shape[-2] != x.shape[-1]:
            raise InvalidArgumentError(
                None, None, f"Input matrix must be square. Got shape {list(x.shape)}"
            )
        if x.size == 0:
            return x.copy()
        flat = x.reshape((-1,) + x.shape[-2:])
        out = np.empty(flat.shape, np.complex128)
        for index, matrix in enumerate(flat):
            out[index] = complex(np.nan, np.nan)
            if not np.all(np.isfinite(matrix)):
                continue
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    # A zero eigenvalue (on the Schur form's diagonal, in the input's
                    # precision): no logarithm, NaN throughout, as TensorFlow's kernel.
                    schur = linalg.schur(matrix, output="complex")[0]
                    if np.any(np.diagonal(schur) == 0):
                        continue
                    result = linalg.logm(matrix.astype(np.complex128), disp=False)[0]
                except (np.linalg.LinAlgError, ValueError, ZeroDivisionError):
                    continue
            if np.all(np.isfinite(result)):
                out[index] = result
        return out.reshape(x.shape).astype(x.dtype)

    return matrix_logarithm


define_op("MatrixLogarithm", _infer_logm, _logm_kernel)


def matrix_logarithm(input, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The principal logarithm of each square complex matrix: ``L`` with ``expm(L) == input``
    whose eigenvalues have imaginary parts in ``(-pi, pi]``."""
    graph = graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        if x.dtype.base_dtype not in COMPLEX_TYPES:
            raise TypeError(
                f"MatrixLogarithm at {_user_location()}: Value passed to parameter 'input' has "
                f"DataType {x.dtype.name} not in list of allowed values: complex64, complex128"
            )
        _scipy_linalg(f"logm at {_user_location()}")
        return apply_op_output("MatrixLogarithm", (x,), None, name or "MatrixLogarithm")


logm = matrix_logarithm


@RegisterGradient("MatrixLogarithm")
def _matrix_logarithm_grad(op, grad):
    from . import array_ops as _a
    from . import matrix_ops as _mx

    a_h = _mx.adjoint(op.inputs[0])
    n = _a.shape(a_h)[-1]
    top = _a.concat([a_h, grad], -1)
    bottom = _a.concat([_a.zeros_like(a_h), a_h], -1)
    block = matrix_logarithm(_a.concat([top, bottom], -2))
    return block[..., :n, n:]

"""``df.linalg.LinearOperator`` and its subclasses: matrices (and batches of them) known by how
they act, TensorFlow's ``tf.linalg.LinearOperator*`` family.

An operator of shape ``batch_shape + [M, N]`` offers ``matmul``/``matvec``, ``solve``/
``solvevec``, ``to_dense``, ``determinant``, ``log_abs_determinant``, ``diag_part``, ``trace``,
``add_to_tensor``, ``eigvals``, ``cond``, ``adjoint``, ``inverse`` and ``cholesky``, each built
of dataflow ops (so they work in graphs, in loops and under gradients).  Each subclass computes
them the cheap way its structure allows (a diagonal operator divides to solve, a triangular one
back-substitutes, a low-rank update uses the Woodbury identity, ...); the base class falls back
on the dense matrix.

The hints ``is_non_singular``, ``is_self_adjoint``, ``is_positive_definite`` and ``is_square``
are TensorFlow's: promises by the caller, checked only where they contradict each other or the
operator's structure, and used to choose algorithms.  dataflow has no complex dtypes, so the
adjoint is the transpose.  (``LinearOperatorCirculant*`` are in linear_operator_circulant.py.)
"""

from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location, name_scope
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops as _a
from ..ops import math_ops as _m
from ..ops import matrix_ops as _mx
from . import linalg_impl as _li

__all__ = [
    "LinearOperator",
    "LinearOperatorAdjoint",
    "LinearOperatorBlockDiag",
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorHouseholder",
    "LinearOperatorIdentity",
    "LinearOperatorInversion",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
    "LinearOperatorLowerTriangular",
    "LinearOperatorPermutation",
    "LinearOperatorScaledIdentity",
    "LinearOperatorToeplitz",
    "LinearOperatorTridiag",
    "LinearOperatorZeros",
    "conjugate_gradient",
]


def _parameters_with_hints(
    own: dict, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name
) -> dict:
    """The ``parameters`` dict of an operator: its own arguments, then the four hints and name."""
    return {**own, "is_non_singular": is_non_singular, "is_self_adjoint": is_self_adjoint,
            "is_positive_definite": is_positive_definite, "is_square": is_square,
            "name": name}  # fmt: skip


def _fail(where: str, message: str, error=ValueError):
    raise error(f"{where} at {_user_location()}: {message}")


def _broadcast_static(a: TensorShape, b: TensorShape) -> TensorShape:
    return _m.broadcast_shape(a, b)


def _static_dim(value):
    """``value`` as a Python int when known when the graph is built, else None."""
    if isinstance(value, Tensor):
        value = numpy_value_or_none(value)
    if value is None:
        return None
    return int(value)


def _broadcast_to(x, shape):
    from ..ops.extra_array_ops import broadcast_to

    return broadcast_to(x, shape)


def _adjoint(x):
    return _mx.matrix_transpose(x)


class LinearOperator:
    """A linear operator of shape ``batch_shape + [M, N]``; subclasses define ``_shape``,
    ``_shape_tensor`` and ``_matmul``, and may define any of ``_to_dense``, ``_solve``,
    ``_determinant``, ``_log_abs_determinant``, ``_diag_part``, ``_adjoint``, ``_inverse``,
    ``_cholesky``, ``_eigvals`` and ``_trace`` for a cheaper way than the dense matrix."""

    def __init__(
        self,
        dtype,
        graph_parents=None,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
        parameters=None,
    ):
        if is_positive_definite:
            if is_non_singular is False:
                _fail(type(self).__name__, "A positive definite matrix is always non-singular.")
            is_non_singular = True
        if is_non_singular:
            if is_square is False:
                _fail(type(self).__name__, "A non-singular matrix is always square.")
            is_square = True
        if is_self_adjoint:
            if is_square is False:
                _fail(type(self).__name__, "A self-adjoint matrix is always square.")
            is_square = True
        self._dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
        self._graph_parents = list(graph_parents or [])
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_set_or_implied_by_hints = is_square
        self._name = name or type(self).__name__
        self._parameters = dict(parameters or {})

    # -- properties --------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def graph_parents(self) -> list:
        return list(self._graph_parents)

    @property
    def parameters(self) -> dict:
        return dict(self._parameters)

    @property
    def is_non_singular(self):
        return self._is_non_singular

    @property
    def is_self_adjoint(self):
        return self._is_self_adjoint

    @property
    def is_positive_definite(self):
        return self._is_positive_definite

    @property
    def is_square(self):
        auto = self.domain_dimension.value == self.range_dimension.value
        if self.domain_dimension.value is None or self.range_dimension.value is None:
            auto = None
        hinted = self._is_square_set_or_implied_by_hints
        if hinted is False and auto:
            _fail(self.name, "User set is_square hint to False, but the operator was square.")
        return auto if hinted is None else hinted

    @property
    def shape(self) -> TensorShape:
        return self._shape()

    @property
    def batch_shape(self) -> TensorShape:
        shape = self.shape
        return TensorShape(None) if shape.ndims is None else TensorShape(shape.as_list()[:-2])

    @property
    def tensor_rank(self):
        return self.shape.ndims

    @property
    def domain_dimension(self):
        shape = self.shape
        return TensorShape([None if shape.ndims is None else shape.as_list()[-1]]).dims[0]

    @property
    def range_dimension(self):
        shape = self.shape
        return TensorShape([None if shape.ndims is None else shape.as_list()[-2]]).dims[0]

    @property
    def H(self) -> LinearOperator:  # noqa: N802
        return self.adjoint()

    def _shape(self) -> TensorShape:
        raise NotImplementedError(f"{type(self).__name__} must define _shape")

    def _shape_tensor(self) -> Tensor:
        shape = self.shape
        if shape.is_fully_defined():
            return convert_to_tensor(np.array(shape.as_list(), np.int32))
        raise NotImplementedError(f"{type(self).__name__} must define _shape_tensor")

    def _name_scope(self, name):
        return name_scope(f"{self.name}/{name}" if name else self.name)

    def shape_tensor(self, name: str = "shape_tensor") -> Tensor:
        """The shape ``batch_shape + [M, N]`` as an int32 tensor."""
        with self._name_scope(name):
            shape = self.shape
            if shape.is_fully_defined():
                return convert_to_tensor(np.array(shape.as_list(), np.int32), name="shape")
            return self._shape_tensor()

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return convert_to_tensor(np.array(self.batch_shape.as_list(), np.int32))
            return self.shape_tensor()[:-2]

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor") -> Tensor:
        with self._name_scope(name):
            if self.tensor_rank is not None:
                return convert_to_tensor(np.int32(self.tensor_rank))
            return _a.size(self.shape_tensor())

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> Tensor:
        with self._name_scope(name):
            if self.domain_dimension.value is not None:
                return convert_to_tensor(np.int32(self.domain_dimension.value))
            return self.shape_tensor()[-1]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> Tensor:
        with self._name_scope(name):
            if self.range_dimension.value is not None:
                return convert_to_tensor(np.int32(self.range_dimension.value))
            return self.shape_tensor()[-2]

    # -- checks ------------------------------------------------------------------------------
    def _check_input_dtype(self, arg):
        arg = convert_to_tensor(arg, dtype=self.dtype, name="x")
        if arg.dtype.base_dtype != self.dtype:
            _fail(
                self.name,
                f"expected argument of dtype {self.dtype.name}, got {arg.dtype.name}",
                TypeError,
            )
        return arg

    def _check_square(self, what: str):
        if self.is_square is False:
            _fail(
                self.name,
                f"{what} not implemented for an operator that is expected to not be square.",
                NotImplementedError,
            )

    def assert_non_singular(self, name: str = "assert_non_singular"):
        """An op that fails when some matrix is singular (its smallest singular value zero)."""
        from ..ops.check_ops import assert_less

        with self._name_scope(name):
            s = _li.svd(self.to_dense(), compute_uv=False)
            smallest = _m.reduce_min(_m.abs(s), axis=-1)
            return assert_less(
                _a.zeros_like(smallest),
                smallest,
                message="Singular matrix up to precision epsilon.",
            )

    def assert_positive_definite(self, name: str = "assert_positive_definite"):
        """An op that fails when some matrix is not positive definite (needs self-adjoint)."""
        from ..ops.check_ops import assert_positive

        with self._name_scope(name):
            if not self.is_self_adjoint:
                _fail(
                    self.name,
                    "assert_positive_definite needs a self-adjoint operator",
                    NotImplementedError,
                )
            eigenvalues = _li.self_adjoint_eigvals(self.to_dense())
            return assert_positive(eigenvalues, message="Matrix was not positive definite.")

    def assert_self_adjoint(self, name: str = "assert_self_adjoint"):
        """An op that fails when some matrix differs from its adjoint."""
        from ..ops.check_ops import assert_equal

        with self._name_scope(name):
            dense = self.to_dense()
            return assert_equal(
                dense, _adjoint(dense), message="Matrix was not equal to its adjoint."
            )

    # -- products ----------------------------------------------------------------------------
    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        raise NotImplementedError(f"{type(self).__name__} must define _matmul")

    def matmul(self, x, adjoint: bool = False, adjoint_arg: bool = False, name: str = "matmul"):
        """``op @ x`` (``adjoint(op)`` with ``adjoint``, ``adjoint(x)`` with ``adjoint_arg``);
        ``x`` a tensor ``[..., N, R]`` or another `LinearOperator` (then a composition)."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return LinearOperatorComposition([left, right])
        with self._name_scope(name):
            x = self._check_input_dtype(x)
            return self._matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def __matmul__(self, other):
        return self.matmul(other)

    def _matvec(self, x, adjoint=False):
        return _a.squeeze(self._matmul(_a.expand_dims(x, -1), adjoint=adjoint), [-1])

    def matvec(self, x, adjoint: bool = False, name: str = "matvec"):
        """``op @ x`` for vectors ``x`` ``[..., N]``."""
        with self._name_scope(name):
            x = self._check_input_dtype(x)
            return self._matvec(x, adjoint=adjoint)

    # -- dense forms and reductions ----------------------------------------------------------
    def _to_dense(self):
        if self.batch_shape.is_fully_defined() and self.domain_dimension.value is not None:
            eye = _mx.eye(
                self.domain_dimension.value,
                batch_shape=self.batch_shape.as_list(),
                dtype=self.dtype,
            )
        else:
            shape = self.shape_tensor()
            eye = _mx.matrix_diag(_a.ones(_a.concat([shape[:-2], shape[-1:]], 0), dtype=self.dtype))
        return self._matmul(eye)

    def to_dense(self, name: str = "to_dense") -> Tensor:
        """The matrix (or batch of matrices) as a tensor."""
        with self._name_scope(name):
            return self._to_dense()

    def _diag_part(self):
        return _mx.matrix_diag_part(self.to_dense())

    def diag_part(self, name: str = "diag_part") -> Tensor:
        """The main diagonal(s), ``batch_shape + [min(M, N)]``."""
        with self._name_scope(name):
            return self._diag_part()

    def _trace(self):
        return _m.reduce_sum(self.diag_part(), axis=-1)

    def trace(self, name: str = "trace") -> Tensor:
        with self._name_scope(name):
            return self._trace()

    def _add_to_tensor(self, x):
        return _m.add(self.to_dense(), x)

    def add_to_tensor(self, x, name: str = "add_to_tensor") -> Tensor:
        """``to_dense() + x``."""
        with self._name_scope(name):
            x = self._check_input_dtype(x)
            return self._add_to_tensor(x)

    def _determinant(self):
        if self._can_use_cholesky():
            return _m.exp(self.log_abs_determinant())
        return _mx.matrix_determinant(self.to_dense())

    def determinant(self, name: str = "det") -> Tensor:
        """The determinant of each square matrix."""
        self._check_square("Determinant")
        with self._name_scope(name):
            return self._determinant()

    def _log_abs_determinant(self):
        if self._can_use_cholesky():
            diagonal = _mx.matrix_diag_part(_mx.cholesky(self.to_dense()))
            return 2.0 * _m.reduce_sum(_m.log(_m.abs(diagonal)), axis=-1)
        return _li.slogdet(self.to_dense())[1]

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        """``log(|det|)`` of each square matrix."""
        self._check_square("Determinant")
        with self._name_scope(name):
            return self._log_abs_determinant()

    def _can_use_cholesky(self) -> bool:
        return bool(self.is_self_adjoint and self.is_positive_definite)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        if self._can_use_cholesky():
            return _mx.cholesky_solve(_mx.cholesky(self.to_dense()), rhs)
        return _mx.matrix_solve(self.to_dense(), rhs, adjoint=adjoint)

    def _check_solvable(self):
        if self.is_non_singular is False:
            _fail(
                self.name,
                "Exact solve not implemented for an operator that is expected to be singular.",
                NotImplementedError,
            )
        if self.is_square is False:
            _fail(
                self.name,
                "Exact solve not implemented for an operator that is expected to not be square.",
                NotImplementedError,
            )

    def solve(self, rhs, adjoint: bool = False, adjoint_arg: bool = False, name: str = "solve"):
        """``X`` with ``op @ X == rhs`` (``adjoint(op)`` with ``adjoint``; ``adjoint(rhs)``
        with ``adjoint_arg``); ``rhs`` a tensor or a `LinearOperator`."""
        self._check_solvable()
        if isinstance(rhs, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            return LinearOperatorComposition([left.inverse(), right])
        with self._name_scope(name):
            rhs = self._check_input_dtype(rhs)
            return self._solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False):
        return _a.squeeze(self._solve(_a.expand_dims(rhs, -1), adjoint=adjoint), [-1])

    def solvevec(self, rhs, adjoint: bool = False, name: str = "solve"):
        """`solve` for vectors ``rhs`` ``[..., M]``."""
        self._check_solvable()
        with self._name_scope(name):
            rhs = self._check_input_dtype(rhs)
            return self._solvevec(rhs, adjoint=adjoint)

    def _eigvals(self):
        return _li.self_adjoint_eigvals(self.to_dense())

    def eigvals(self, name: str = "eigvals") -> Tensor:
        """The eigenvalues of a self-adjoint operator, ascending."""
        if not self.is_self_adjoint:
            _fail(self.name, "Only self-adjoint matrices are supported.", NotImplementedError)
        with self._name_scope(name):
            return self._eigvals()

    def _cond(self):
        if self.is_self_adjoint:
            values = _m.abs(self.eigvals())
        else:
            values = _li.svd(self.to_dense(), compute_uv=False)
        return _m.truediv(_m.reduce_max(values, axis=-1), _m.reduce_min(values, axis=-1))

    def cond(self, name: str = "cond") -> Tensor:
        """The condition number: the ratio of the largest singular value to the smallest."""
        with self._name_scope(name):
            return self._cond()

    # -- derived operators -------------------------------------------------------------------
    def _adjoint_operator(self):
        if self.is_self_adjoint:
            return self
        return LinearOperatorAdjoint(self)

    def adjoint(self, name: str = "adjoint") -> LinearOperator:
        """The adjoint (transpose) as an operator."""
        return self._adjoint_operator()

    def _inverse_operator(self):
        return LinearOperatorInversion(self)

    def inverse(self, name: str = "inverse") -> LinearOperator:
        """The inverse as an operator (of a square, non-singular one)."""
        if self.is_square is False:
            _fail(
                self.name, "Cannot take the Inverse: This operator represents a non square matrix."
            )
        if self.is_non_singular is False:
            _fail(self.name, "Cannot take the Inverse: This operator represents a singular matrix.")
        return self._inverse_operator()

    def _cholesky_operator(self):
        return LinearOperatorLowerTriangular(
            _mx.cholesky(self.to_dense()),
            is_non_singular=True,
            is_self_adjoint=False,
            is_square=True,
        )

    def cholesky(self, name: str = "cholesky") -> LinearOperator:
        """The Cholesky factor as a lower-triangular operator (of a self-adjoint positive
        definite one)."""
        if not self._can_use_cholesky():
            _fail(
                self.name,
                "Cholesky decomposition only applies to self-adjoint positive definite operators.",
            )
        return self._cholesky_operator()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} '{self.name}' shape={self.shape} dtype={self.dtype.name}>"


# -- full matrix, diagonal, triangular -------------------------------------------------------------
class LinearOperatorFullMatrix(LinearOperator):
    """A dense matrix (or batch) ``matrix`` ``[..., M, N]`` as an operator."""

    def __init__(
        self,
        matrix,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorFullMatrix",
    ):
        parameters = dict(locals())
        parameters.pop("self")
        parameters.pop("__class__", None)
        with name_scope(name):
            self._matrix = convert_to_tensor(matrix, name="matrix")
            if not self._matrix.dtype.is_floating:
                _fail(
                    name, f"matrix must be a float tensor, got {self._matrix.dtype.name}", TypeError
                )
            if self._matrix.shape.ndims is not None and self._matrix.shape.ndims < 2:
                _fail(name, f"matrix must have at least 2 dimensions, got {self._matrix.shape}")
        super().__init__(
            self._matrix.dtype, [self._matrix], is_non_singular, is_self_adjoint,
            is_positive_definite, is_square, name, parameters,
        )  # fmt: skip

    def _shape(self):
        return self._matrix.shape

    def _shape_tensor(self):
        return _a.shape(self._matrix)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _m.matmul(self._matrix, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _to_dense(self):
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """The square diagonal matrix (or batch) with ``diag`` ``[..., N]`` on its diagonal."""

    def __init__(
        self,
        diag,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorDiag",
    ):
        parameters = _parameters_with_hints({"diag": diag}, is_non_singular, is_self_adjoint,
            is_positive_definite, is_square, name)  # fmt: skip
        with name_scope(name):
            self._diag = convert_to_tensor(diag, name="diag")
            if not self._diag.dtype.is_floating:
                _fail(name, f"diag must be a float tensor, got {self._diag.dtype.name}", TypeError)
            if self._diag.shape.ndims is not None and self._diag.shape.ndims < 1:
                _fail(name, f"diag must have at least 1 dimension, got {self._diag.shape}")
        if is_self_adjoint is False:
            _fail(name, "A real diagonal operator is always self adjoint.")
        if is_square is False:
            _fail(name, "Only square diagonal operators currently supported.")
        super().__init__(
            self._diag.dtype, [self._diag], is_non_singular, True, is_positive_definite, True,
            name, parameters,
        )  # fmt: skip

    @property
    def diag(self):
        return self._diag

    def _shape(self):
        shape = self._diag.shape
        if shape.ndims is None:
            return TensorShape(None)
        return TensorShape(shape.as_list() + shape.as_list()[-1:])

    def _shape_tensor(self):
        shape = _a.shape(self._diag)
        return _a.concat([shape, shape[-1:]], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adjoint(x) if adjoint_arg else x
        return _m.multiply(_a.expand_dims(self._diag, -1), x)

    def _matvec(self, x, adjoint=False):
        return _m.multiply(self._diag, x)

    def _to_dense(self):
        return _mx.matrix_diag(self._diag)

    def _diag_part(self):
        return self._diag

    def _determinant(self):
        return _m.reduce_prod(self._diag, axis=-1)

    def _log_abs_determinant(self):
        return _m.reduce_sum(_m.log(_m.abs(self._diag)), axis=-1)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        return _m.truediv(rhs, _a.expand_dims(self._diag, -1))

    def _add_to_tensor(self, x):
        return _mx.matrix_set_diag(x, _m.add(_mx.matrix_diag_part(x), self._diag))

    def _eigvals(self):
        return self._diag

    def _cond(self):
        magnitude = _m.abs(self._diag)
        return _m.truediv(_m.reduce_max(magnitude, axis=-1), _m.reduce_min(magnitude, axis=-1))

    def _inverse_operator(self):
        return LinearOperatorDiag(
            _m.truediv(_a.ones_like(self._diag), self._diag), is_non_singular=self.is_non_singular,
            is_positive_definite=self.is_positive_definite,
        )  # fmt: skip

    def _cholesky_operator(self):
        return LinearOperatorDiag(
            _m.sqrt(self._diag), is_non_singular=True, is_positive_definite=True
        )


class LinearOperatorLowerTriangular(LinearOperator):
    """The lower triangle of ``tril`` ``[..., N, N]`` as an operator (the rest is not read)."""

    def __init__(
        self,
        tril,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorLowerTriangular",
    ):
        parameters = _parameters_with_hints({"tril": tril}, is_non_singular, is_self_adjoint,
            is_positive_definite, is_square, name)  # fmt: skip
        if is_square is False:
            _fail(name, "Only square lower triangular operators supported at this time.")
        with name_scope(name):
            tril = convert_to_tensor(tril, name="tril")
            if not tril.dtype.is_floating:
                _fail(name, f"tril must be a float tensor, got {tril.dtype.name}", TypeError)
            if tril.shape.ndims is not None and tril.shape.ndims < 2:
                _fail(name, f"tril must have at least 2 dimensions, got {tril.shape}")
            self._tril = _mx.matrix_band_part(tril, -1, 0)
        super().__init__(
            tril.dtype, [tril], is_non_singular, is_self_adjoint, is_positive_definite, True,
            name, parameters,
        )  # fmt: skip

    def _shape(self):
        return self._tril.shape

    def _shape_tensor(self):
        return _a.shape(self._tril)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _m.matmul(self._tril, x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _to_dense(self):
        return self._tril

    def _diag_part(self):
        return _mx.matrix_diag_part(self._tril)

    def _determinant(self):
        return _m.reduce_prod(self._diag_part(), axis=-1)

    def _log_abs_determinant(self):
        return _m.reduce_sum(_m.log(_m.abs(self._diag_part())), axis=-1)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        return _li.matrix_triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)

    def _eigvals(self):
        return self._diag_part()


# -- identities and zeros --------------------------------------------------------------------------
def _num_rows_tensor(where: str, num_rows, assert_proper_shapes: bool):
    known = _static_dim(num_rows)
    if known is not None and known < 0:
        _fail(where, f"num_rows must be non-negative, got {known}")
    if known is not None:
        return known
    rows = convert_to_tensor(num_rows, name="num_rows")
    if rows.dtype not in (_dtypes.int32, _dtypes.int64) or rows.shape.ndims not in (None, 0):
        _fail(where, f"num_rows must be an int32 or int64 scalar, got {rows}")
    rows = _m.cast(rows, _dtypes.int32)
    if assert_proper_shapes:  # the static checks were inconclusive: check when the graph runs
        from ..framework.graph import control_dependencies
        from ..ops.check_ops import assert_non_negative

        check = assert_non_negative(rows, message=f"{where}: num_rows must be non-negative")
        with control_dependencies([check]):
            rows = _a.identity(rows)
    return rows


class _BaseIdentity(LinearOperator):
    def _shape(self):
        batch = self._batch_shape_static
        rows = self._num_rows if isinstance(self._num_rows, int) else None
        columns = getattr(self, "_num_columns", self._num_rows)
        columns = columns if isinstance(columns, int) else None
        if batch is None:
            return TensorShape(None)
        return TensorShape(batch + [rows, columns])

    def _shape_tensor(self):
        rows = convert_to_tensor(self._num_rows, dtype=_dtypes.int32)
        columns = convert_to_tensor(
            getattr(self, "_num_columns", self._num_rows), dtype=_dtypes.int32
        )
        batch = self._batch_tensor()
        return _a.concat([batch, _a.stack([rows, columns])], 0)

    def _batch_tensor(self):
        return convert_to_tensor(np.array(self._batch_shape_static or [], np.int32))

    def _ones_diag(self):
        shape = self.shape
        if shape.is_fully_defined():
            dims = shape.as_list()
            return _a.ones(dims[:-2] + [min(dims[-2:])], dtype=self.dtype)
        shape = self.shape_tensor()
        return _a.ones(
            _a.concat([shape[:-2], [_m.minimum(shape[-2], shape[-1])]], 0), dtype=self.dtype
        )

    def _checked_rows(self, x, expected):
        """``x``, whose rows must number ``expected`` (an int or a scalar tensor): checked now
        when both are known, else, with ``assert_proper_shapes``, when the graph runs."""
        size = x.shape.as_list()[-2] if x.shape.ndims else None
        if isinstance(expected, int) and size is not None:
            if size != expected:
                _fail(self.name, f"x has {size} rows where the operator has {expected} columns")
            return x
        if not self._assert_proper_shapes:
            return x
        from ..framework.graph import control_dependencies
        from ..ops.check_ops import assert_equal

        check = assert_equal(
            _a.shape(x)[-2],
            convert_to_tensor(expected, dtype=_dtypes.int32),
            message="Incompatible matrix/vector dimensions.",
        )
        with control_dependencies([check]):
            return _a.identity(x)

    def _broadcast_batch(self, x):
        """``x`` broadcast against this operator's batch shape."""
        batch = self._batch_shape_static
        if not batch:
            return x
        zeros = _a.zeros(batch + [1, 1], dtype=x.dtype)
        return _m.add(x, zeros)


class LinearOperatorIdentity(_BaseIdentity):
    """The ``num_rows x num_rows`` identity, repeated over ``batch_shape``."""

    def __init__(
        self,
        num_rows,
        batch_shape=None,
        dtype=None,
        is_non_singular=True,
        is_self_adjoint=True,
        is_positive_definite=True,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorIdentity",
    ):
        parameters = {"num_rows": num_rows, "batch_shape": batch_shape, "dtype": dtype,
                      "is_non_singular": is_non_singular, "is_self_adjoint": is_self_adjoint,
                      "is_positive_definite": is_positive_definite, "is_square": is_square,
                      "assert_proper_shapes": assert_proper_shapes, "name": name}  # fmt: skip
        dtype = _dtypes.as_dtype(dtype or _dtypes.float32)
        if not is_self_adjoint:
            _fail(name, "An identity operator is always self adjoint.")
        if not is_non_singular:
            _fail(name, "An identity operator is always non-singular.")
        if not is_positive_definite:
            _fail(name, "An identity operator is always positive-definite.")
        if not is_square:
            _fail(name, "An identity operator is always square.")
        with name_scope(name):
            self._num_rows = _num_rows_tensor(name, num_rows, assert_proper_shapes)
            if batch_shape is None:
                self._batch_shape_static = []
            else:
                known = (
                    numpy_value_or_none(batch_shape)
                    if isinstance(batch_shape, Tensor)
                    else batch_shape
                )
                if known is None:
                    _fail(name, "batch_shape must be known when the graph is built")
                known = [int(d) for d in np.asarray(known).reshape(-1)]
                if any(d < 0 for d in known):
                    _fail(name, f"batch_shape must be non-negative, got {known}")
                self._batch_shape_static = known
        self._assert_proper_shapes = assert_proper_shapes
        super().__init__(dtype, None, True, True, True, True, name, parameters)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adjoint(x) if adjoint_arg else x
        return self._broadcast_batch(self._checked_rows(x, self._num_rows))

    def _to_dense(self):
        if isinstance(self._num_rows, int):
            return _mx.eye(
                self._num_rows, batch_shape=self._batch_shape_static or None, dtype=self.dtype
            )
        return _mx.matrix_diag(self._ones_diag())

    def _diag_part(self):
        return self._ones_diag()

    def _determinant(self):
        return _a.ones(self._batch_shape_static, dtype=self.dtype)

    def _log_abs_determinant(self):
        return _a.zeros(self._batch_shape_static, dtype=self.dtype)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint_arg=adjoint_arg)

    def _add_to_tensor(self, x):
        return _mx.matrix_set_diag(x, _m.add(_mx.matrix_diag_part(x), 1.0))

    def _eigvals(self):
        return self._ones_diag()

    def _cond(self):
        return _a.ones(self._batch_shape_static, dtype=self.dtype)

    def _inverse_operator(self):
        return self

    def _cholesky_operator(self):
        return self


class LinearOperatorScaledIdentity(_BaseIdentity):
    """``multiplier`` times the ``num_rows x num_rows`` identity; the batch shape is
    ``multiplier``'s."""

    def __init__(
        self,
        num_rows,
        multiplier,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorScaledIdentity",
    ):
        parameters = {"num_rows": num_rows, "multiplier": multiplier,
                      "is_non_singular": is_non_singular, "is_self_adjoint": is_self_adjoint,
                      "is_positive_definite": is_positive_definite, "is_square": is_square,
                      "assert_proper_shapes": assert_proper_shapes, "name": name}  # fmt: skip
        if not is_square:
            _fail(name, "A ScaledIdentity operator is always square.")
        with name_scope(name):
            self._multiplier = convert_to_tensor(multiplier, name="multiplier")
            if not self._multiplier.dtype.is_floating:
                _fail(
                    name,
                    f"multiplier must be a float tensor, got {self._multiplier.dtype.name}",
                    TypeError,
                )
            self._num_rows = _num_rows_tensor(name, num_rows, assert_proper_shapes)
            mshape = self._multiplier.shape
            self._batch_shape_static = None if mshape.ndims is None else mshape.as_list()
        if is_self_adjoint is False:
            _fail(name, "A real scaled identity operator is always self adjoint.")
        self._assert_proper_shapes = assert_proper_shapes
        super().__init__(
            self._multiplier.dtype, [self._multiplier], is_non_singular, True,
            is_positive_definite, True, name, parameters,
        )  # fmt: skip

    @property
    def multiplier(self):
        return self._multiplier

    def _batch_tensor(self):
        return _a.shape(self._multiplier)

    def _scale(self):
        return _a.expand_dims(_a.expand_dims(self._multiplier, -1), -1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adjoint(x) if adjoint_arg else x
        return _m.multiply(self._scale(), self._checked_rows(x, self._num_rows))

    def _to_dense(self):
        return _m.multiply(self._scale(), _mx.matrix_diag(self._ones_diag()))

    def _diag_part(self):
        return _m.multiply(_a.expand_dims(self._multiplier, -1), self._ones_diag())

    def _rows_as_float(self):
        return _m.cast(convert_to_tensor(self._num_rows, dtype=_dtypes.int32), self.dtype)

    def _determinant(self):
        return _m.pow(self._multiplier, self._rows_as_float())

    def _log_abs_determinant(self):
        return _m.multiply(self._rows_as_float(), _m.log(_m.abs(self._multiplier)))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        return _m.truediv(rhs, self._scale())

    def _add_to_tensor(self, x):
        diagonal = _mx.matrix_diag_part(x)
        return _mx.matrix_set_diag(x, _m.add(diagonal, _a.expand_dims(self._multiplier, -1)))

    def _eigvals(self):
        return self._diag_part()

    def _cond(self):
        return _a.ones_like(self._multiplier)

    def _inverse_operator(self):
        return LinearOperatorScaledIdentity(
            self._num_rows, _m.truediv(_a.ones_like(self._multiplier), self._multiplier),
            is_non_singular=self.is_non_singular, is_positive_definite=self.is_positive_definite,
        )  # fmt: skip

    def _cholesky_operator(self):
        return LinearOperatorScaledIdentity(
            self._num_rows, _m.sqrt(self._multiplier), is_non_singular=True,
            is_positive_definite=True,
        )  # fmt: skip


class LinearOperatorZeros(_BaseIdentity):
    """The ``num_rows x num_columns`` zero matrix (square by default), repeated over
    ``batch_shape``."""

    def __init__(
        self,
        num_rows,
        num_columns=None,
        batch_shape=None,
        dtype=None,
        is_non_singular=False,
        is_self_adjoint=True,
        is_positive_definite=False,
        is_square=True,
        assert_proper_shapes=False,
        name="LinearOperatorZeros",
    ):
        parameters = {"num_rows": num_rows, "num_columns": num_columns,
                      "batch_shape": batch_shape, "dtype": dtype,
                      "is_non_singular": is_non_singular, "is_self_adjoint": is_self_adjoint,
                      "is_positive_definite": is_positive_definite, "is_square": is_square,
                      "assert_proper_shapes": assert_proper_shapes, "name": name}  # fmt: skip
        dtype = _dtypes.as_dtype(dtype or _dtypes.float32)
        if not is_self_adjoint and is_square:
            _fail(name, "A zero operator is always self adjoint.")
        if is_non_singular:
            _fail(name, "A zero operator is always singular.")
        if is_positive_definite:
            _fail(name, "A zero operator is always not positive-definite.")
        with name_scope(name):
            self._num_rows = _num_rows_tensor(name, num_rows, assert_proper_shapes)
            self._num_columns = (
                self._num_rows if num_columns is None
                else _num_rows_tensor(name, num_columns, assert_proper_shapes)
            )  # fmt: skip
            if batch_shape is None:
                self._batch_shape_static = []
            else:
                known = (
                    numpy_value_or_none(batch_shape)
                    if isinstance(batch_shape, Tensor)
                    else batch_shape
                )
                if known is None:
                    _fail(name, "batch_shape must be known when the graph is built")
                self._batch_shape_static = [int(d) for d in np.asarray(known).reshape(-1)]
        if (
            is_square
            and isinstance(self._num_rows, int)
            and isinstance(self._num_columns, int)
            and self._num_rows != self._num_columns
        ):
            _fail(
                name,
                "LinearOperatorZeros initialized as is_square=True, but got num_rows = "
                f"{self._num_rows} != num_columns = {self._num_columns}",
            )
        self._assert_proper_shapes = assert_proper_shapes
        super().__init__(
            dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name,
            parameters,
        )  # fmt: skip

    def _out_shape(self, x, adjoint):
        rows = self._num_columns if adjoint else self._num_rows
        rows = convert_to_tensor(rows, dtype=_dtypes.int32)
        shape = _a.shape(x)
        return _a.concat([shape[:-2], _a.reshape(rows, [1]), shape[-1:]], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adjoint(x) if adjoint_arg else x
        x = self._checked_rows(x, self._num_rows if adjoint else self._num_columns)
        return self._broadcast_batch(_a.zeros(self._out_shape(x, adjoint), dtype=x.dtype))

    def _to_dense(self):
        if self.shape.is_fully_defined():
            return _a.zeros(self.shape.as_list(), dtype=self.dtype)
        return _a.zeros(self.shape_tensor(), dtype=self.dtype)

    def _diag_part(self):
        return _m.multiply(self._ones_diag(), 0.0)

    def _determinant(self):
        return _a.zeros(self._batch_shape_static, dtype=self.dtype)

    def _log_abs_determinant(self):
        return _m.log(self._determinant())

    def _add_to_tensor(self, x):
        return self._broadcast_batch(x)

    def _eigvals(self):
        return self._diag_part()

    def _adjoint_operator(self):
        if self.is_square:
            return self
        return LinearOperatorZeros(
            self._num_columns, self._num_rows, batch_shape=self._batch_shape_static,
            dtype=self.dtype, is_square=False, is_self_adjoint=False,
        )  # fmt: skip


# -- operators of operators ------------------------------------------------------------------------
def _all(values) -> Optional[bool]:
    return True if all(v is True for v in values) else None


class LinearOperatorAdjoint(LinearOperator):
    """The adjoint (transpose) of ``operator``."""

    def __init__(
        self,
        operator,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        parameters = _parameters_with_hints(
            {"operator": operator},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        self._operator = operator

        def combined(mine, theirs, what):
            if theirs is not None and mine is not None and mine != theirs:
                _fail(name or operator.name + "_adjoint", f"An operator's adjoint is {what} "
                      f"exactly when the operator is; hints disagree")  # fmt: skip
            return theirs if mine is None else mine

        is_non_singular = combined(is_non_singular, operator.is_non_singular, "non-singular")
        is_self_adjoint = combined(is_self_adjoint, operator.is_self_adjoint, "self-adjoint")
        is_positive_definite = combined(
            is_positive_definite, operator.is_positive_definite, "positive definite"
        )
        is_square = combined(is_square, operator.is_square, "square")
        super().__init__(
            operator.dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
            is_square, name or operator.name + "_adjoint", parameters,
        )  # fmt: skip

    @property
    def operator(self):
        return self._operator

    def _shape(self):
        shape = self._operator.shape
        if shape.ndims is None:
            return shape
        dims = shape.as_list()
        return TensorShape(dims[:-2] + [dims[-1], dims[-2]])

    def _shape_tensor(self):
        shape = self._operator.shape_tensor()
        return _a.concat([shape[:-2], shape[-1:], shape[-2:-1]], 0)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return self._operator.matvec(x, adjoint=not adjoint)

    def _determinant(self):
        return self._operator.determinant()

    def _log_abs_determinant(self):
        return self._operator.log_abs_determinant()

    def _trace(self):
        return self._operator.trace()

    def _diag_part(self):
        return self._operator.diag_part()

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _to_dense(self):
        return _adjoint(self._operator.to_dense())

    def _adjoint_operator(self):
        return self._operator


class LinearOperatorInversion(LinearOperator):
    """The inverse of ``operator`` (square and non-singular): its matmul is the operator's
    solve, and the other way round."""

    def __init__(
        self,
        operator,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        parameters = _parameters_with_hints(
            {"operator": operator},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        where = name or operator.name + "_inv"
        if operator.is_non_singular is False or is_non_singular is False:
            _fail(where, "operator and supplied hints must be non-singular")
        if operator.is_square is False or is_square is False:
            _fail(where, "operator and supplied hints must be square")
        self._operator = operator
        is_self_adjoint = operator.is_self_adjoint if is_self_adjoint is None else is_self_adjoint
        if is_positive_definite is None:
            is_positive_definite = operator.is_positive_definite
        super().__init__(
            operator.dtype, None, True if operator.is_non_singular else is_non_singular,
            is_self_adjoint, is_positive_definite, True, where, parameters,
        )  # fmt: skip

    @property
    def operator(self):
        return self._operator

    def _shape(self):
        return self._operator.shape

    def _shape_tensor(self):
        return self._operator.shape_tensor()

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return self._operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _matvec(self, x, adjoint=False):
        return self._operator.solvevec(x, adjoint=adjoint)

    def _determinant(self):
        determinant = self._operator.determinant()
        return _m.truediv(_a.ones_like(determinant), determinant)

    def _log_abs_determinant(self):
        return _m.negative(self._operator.log_abs_determinant())

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solvevec(self, rhs, adjoint=False):
        return self._operator.matvec(rhs, adjoint=adjoint)

    def _inverse_operator(self):
        return self._operator


def _batch_shape_of(operators) -> Optional[TensorShape]:
    """The batch shapes of ``operators`` broadcast together; None when a rank is unknown."""
    shapes = [op.shape for op in operators]
    if any(s.ndims is None for s in shapes):
        return None
    batch = TensorShape([])
    for s in shapes:
        batch = _broadcast_static(batch, TensorShape(s.as_list()[:-2]))
    return batch


def _operator_list(operators, kind: str, joiner: str, name):
    """``operators`` as a non-empty list, and the name to report: ``name``, or the operators'
    names joined by ``joiner``."""
    operators = list(operators)
    if not operators:
        _fail(kind, "Expected a non-empty list of operators.")
    return operators, name or joiner.join(op.name for op in operators)


def _check_same_dtype(where: str, operators):
    if len({op.dtype for op in operators}) != 1:
        _fail(where, "Expected all operators to have the same dtype.", TypeError)


def _hint_implied(where: str, hint, implied: bool, message: str):
    """The hint to use when the parts may imply it: True if ``implied`` (failing with ``message``
    if the caller said False), else the caller's ``hint``."""
    if implied:
        if hint is False:
            _fail(where, message)
        return True
    return hint


class LinearOperatorComposition(LinearOperator):
    """The product ``operators[0] @ operators[1] @ ...``, applied right to left."""

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        parameters = _parameters_with_hints(
            {"operators": operators},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        operators, where = _operator_list(operators, "LinearOperatorComposition", "_o_", name)
        dtypes = {op.dtype for op in operators}
        if len(dtypes) != 1:
            _fail(
                where,
                "Expected all operators to have the same dtype, "
                f"got {sorted(d.name for d in dtypes)}",
                TypeError,
            )
        for left, right in zip(operators, operators[1:]):
            inner, outer = left.domain_dimension.value, right.range_dimension.value
            if inner is not None and outer is not None and inner != outer:
                _fail(where, f"Operators {left.name} and {right.name} have incompatible shapes "
                      f"{left.shape} and {right.shape}")  # fmt: skip
        is_non_singular = _hint_implied(
            where, is_non_singular, all(op.is_non_singular for op in operators),
            "The composition of non-singular operators is always non-singular.",
        )  # fmt: skip
        self._operators = operators
        super().__init__(
            operators[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
            is_square, where, parameters,
        )  # fmt: skip

    @property
    def operators(self):
        return list(self._operators)

    def _shape(self):
        shapes = [op.shape for op in self._operators]
        batch = _batch_shape_of(self._operators)
        if batch is None:
            return TensorShape(None)
        return TensorShape(batch.as_list() + [shapes[0].as_list()[-2], shapes[-1].as_list()[-1]])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        operators = self._operators if adjoint else self._operators[::-1]
        result = operators[0].matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in operators[1:]:
            result = op.matmul(result, adjoint=adjoint)
        return result

    def _determinant(self):
        return _product([op.determinant() for op in self._operators])

    def _log_abs_determinant(self):
        return _sum([op.log_abs_determinant() for op in self._operators])

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if not all(op.is_square is not False for op in self._operators):
            return super()._solve(rhs, adjoint, adjoint_arg)
        operators = self._operators[::-1] if adjoint else self._operators
        result = operators[0].solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        for op in operators[1:]:
            result = op.solve(result, adjoint=adjoint)
        return result


class LinearOperatorBlockDiag(LinearOperator):
    """The block-diagonal matrix of square ``operators`` (their batch shapes broadcast)."""

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name=None,
    ):
        parameters = _parameters_with_hints(
            {"operators": operators},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        operators, where = _operator_list(operators, "LinearOperatorBlockDiag", "_ds_", name)
        _check_same_dtype(where, operators)
        is_non_singular = _hint_implied(
            where, is_non_singular, all(op.is_non_singular for op in operators),
            "The direct sum of non-singular operators is always non-singular.",
        )  # fmt: skip
        is_self_adjoint = _hint_implied(
            where, is_self_adjoint, all(op.is_self_adjoint for op in operators),
            "The direct sum of self-adjoint operators is always self-adjoint.",
        )  # fmt: skip
        is_positive_definite = _hint_implied(
            where, is_positive_definite, all(op.is_positive_definite for op in operators),
            "The direct sum of positive definite operators is always positive definite.",
        )  # fmt: skip
        if not is_square:
            _fail(where, "A block diagonal operator is always square.")
        for op in operators:
            if op.is_square is False:
                _fail(where, f"All operators must be square, {op.name} is not")
            if op.domain_dimension.value is None:
                _fail(where, f"the sizes of the blocks must be known, got {op.shape} for {op.name}")
        self._operators = operators
        super().__init__(
            operators[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
            True, where, parameters,
        )  # fmt: skip

    @property
    def operators(self):
        return list(self._operators)

    def _sizes(self):
        return [op.domain_dimension.value for op in self._operators]

    def _shape(self):
        batch = _batch_shape_of(self._operators)
        if batch is None:
            return TensorShape(None)
        n = sum(self._sizes())
        return TensorShape(batch.as_list() + [n, n])

    def _split(self, x, axis):
        return _a.split(x, self._sizes(), axis=axis)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adjoint(x) if adjoint_arg else x
        parts = self._split(x, -2)
        results = [op.matmul(p, adjoint=adjoint) for op, p in zip(self._operators, parts)]
        return _a.concat(_broadcast_all(results), axis=-2)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        parts = self._split(rhs, -2)
        results = [op.solve(p, adjoint=adjoint) for op, p in zip(self._operators, parts)]
        return _a.concat(_broadcast_all(results), axis=-2)

    def _to_dense(self):
        sizes = self._sizes()
        total = sum(sizes)
        rows = []
        offset = 0
        for op, size in zip(self._operators, sizes):
            dense = op.to_dense()
            rank = dense.shape.ndims
            rows.append(_a.pad(dense, [[0, 0]] * (rank - 1) + [[offset, total - offset - size]]))
            offset += size
        return _a.concat(_broadcast_all(rows), axis=-2)

    def _diag_part(self):
        return _a.concat(
            _broadcast_all([op.diag_part() for op in self._operators], core=1), axis=-1
        )

    def _determinant(self):
        return _product([op.determinant() for op in self._operators])

    def _log_abs_determinant(self):
        return _sum([op.log_abs_determinant() for op in self._operators])

    def _eigvals(self):
        return _a.concat(_broadcast_all([op.eigvals() for op in self._operators], core=1), axis=-1)

    def _inverse_operator(self):
        return LinearOperatorBlockDiag(
            [op.inverse() for op in self._operators], is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint, is_positive_definite=self.is_positive_definite,
        )  # fmt: skip

    def _adjoint_operator(self):
        if self.is_self_adjoint:
            return self
        return LinearOperatorBlockDiag([op.adjoint() for op in self._operators])


def _broadcast_all(tensors: list, core: int = 2) -> list:
    """``tensors`` with their leading (batch) dimensions broadcast against each other, their
    last ``core`` dimensions as they are (static batch shapes)."""
    ranks = {t.shape.ndims for t in tensors}
    if None in ranks or len({tuple(t.shape.as_list()[:-core]) for t in tensors}) == 1:
        return tensors
    batch = TensorShape([])
    for t in tensors:
        batch = _broadcast_static(batch, TensorShape(t.shape.as_list()[:-core]))
    if not batch.is_fully_defined():
        return tensors
    out = []
    for t in tensors:
        dims = t.shape.as_list()
        known = None not in dims[-core:]
        out.append(_broadcast_to(t, batch.as_list() + dims[-core:]) if known else t)
    return out


def _sum(tensors: list):
    """The broadcasting sum of ``tensors``."""
    total = tensors[0]
    for t in tensors[1:]:
        total = _m.add(total, t)
    return total


def _product(tensors: list):
    """The broadcasting product of ``tensors``."""
    result = tensors[0]
    for t in tensors[1:]:
        result = _m.multiply(result, t)
    return result


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """The block lower-triangular matrix whose block row ``i`` is ``operators[i]`` (``i + 1``
    operators; the last of each row on the diagonal, square)."""

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorBlockLowerTriangular",
    ):
        parameters = _parameters_with_hints(
            {"operators": operators},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        rows = [list(row) for row in operators]
        if not rows:
            _fail(name, "Expected a non-empty list of operators.")
        for i, row in enumerate(rows):
            if len(row) != i + 1:
                _fail(name, f"Argument operators[{i}] must contain {i + 1} blocks, got {len(row)}")
        diagonal = [row[-1] for row in rows]
        for op in diagonal:
            if op.is_square is False:
                _fail(name, f"The diagonal operators must be square, {op.name} is not")
            if op.domain_dimension.value is None:
                _fail(name, f"the sizes of the diagonal blocks must be known, got {op.shape}")
        for i, row in enumerate(rows):
            for j, op in enumerate(row[:-1]):
                expected = (diagonal[i].range_dimension.value, diagonal[j].domain_dimension.value)
                got = (op.range_dimension.value, op.domain_dimension.value)
                if None not in got and got != expected:
                    _fail(name, f"block ({i}, {j}) has shape {op.shape}, expected {list(expected)}")
        _check_same_dtype(name, [op for row in rows for op in row])
        is_non_singular = _hint_implied(
            name, is_non_singular, all(op.is_non_singular for op in diagonal),
            "A block lower triangular operator with non-singular diagonal blocks is always "
            "non-singular.",
        )  # fmt: skip
        if is_square is False:
            _fail(name, "A block lower triangular operator is always square.")
        self._rows = rows
        self._diagonal = diagonal
        super().__init__(
            diagonal[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, True,
            name, parameters,
        )  # fmt: skip

    @property
    def operators(self):
        return [list(row) for row in self._rows]

    def _sizes(self):
        return [op.domain_dimension.value for op in self._diagonal]

    def _shape(self):
        batch = TensorShape([])
        for row in self._rows:
            for op in row:
                if op.shape.ndims is None:
                    return TensorShape(None)
                batch = _broadcast_static(batch, TensorShape(op.shape.as_list()[:-2]))
        n = sum(self._sizes())
        return TensorShape(batch.as_list() + [n, n])

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adjoint(x) if adjoint_arg else x
        parts = _a.split(x, self._sizes(), axis=-2)
        n = len(self._rows)
        results = []
        for i in range(n):
            if adjoint:  # block column i of the transpose: blocks (j, i) for j >= i, adjoint
                terms = [self._rows[j][i].matmul(parts[j], adjoint=True) for j in range(i, n)]
            else:
                terms = [self._rows[i][j].matmul(parts[j]) for j in range(i + 1)]
            results.append(_sum(terms))
        return _a.concat(_broadcast_all(results), axis=-2)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        parts = _a.split(rhs, self._sizes(), axis=-2)
        n = len(self._rows)
        solution = [None] * n
        order = range(n - 1, -1, -1) if adjoint else range(n)
        for i in order:
            residual = parts[i]
            if adjoint:
                known = [
                    self._rows[j][i].matmul(solution[j], adjoint=True) for j in range(i + 1, n)
                ]
            else:
                known = [self._rows[i][j].matmul(solution[j]) for j in range(i)]
            for term in known:
                residual = _m.subtract(residual, term)
            solution[i] = self._diagonal[i].solve(residual, adjoint=adjoint)
        return _a.concat(_broadcast_all(solution), axis=-2)

    def _to_dense(self):
        sizes = self._sizes()
        total = sum(sizes)
        block_rows = []
        for i, row in enumerate(self._rows):
            dense = _a.concat(_broadcast_all([op.to_dense() for op in row]), axis=-1)
            rank = dense.shape.ndims
            width = sum(sizes[: i + 1])
            block_rows.append(_a.pad(dense, [[0, 0]] * (rank - 1) + [[0, total - width]]))
        return _a.concat(_broadcast_all(block_rows), axis=-2)

    def _diag_part(self):
        return _a.concat(_broadcast_all([op.diag_part() for op in self._diagonal], core=1), axis=-1)

    def _determinant(self):
        return _product([op.determinant() for op in self._diagonal])

    def _log_abs_determinant(self):
        return _sum([op.log_abs_determinant() for op in self._diagonal])


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product ``operators[0] (x) operators[1] (x) ...``."""

    def __init__(
        self,
        operators,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name=None,
    ):
        parameters = _parameters_with_hints(
            {"operators": operators},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        operators, where = _operator_list(operators, "LinearOperatorKronecker", "_x_", name)
        _check_same_dtype(where, operators)
        is_non_singular = _hint_implied(
            where, is_non_singular, all(op.is_non_singular for op in operators),
            "The Kronecker product of non-singular operators is always non-singular.",
        )  # fmt: skip
        is_self_adjoint = _hint_implied(
            where, is_self_adjoint, all(op.is_self_adjoint for op in operators),
            "The Kronecker product of self-adjoint operators is always self-adjoint.",
        )  # fmt: skip
        is_positive_definite = _hint_implied(
            where, is_positive_definite, all(op.is_positive_definite for op in operators),
            "The Kronecker product of positive-definite operators is always positive-definite.",
        )  # fmt: skip
        for op in operators:
            if None in (op.range_dimension.value, op.domain_dimension.value):
                _fail(where, f"the shapes of the factors must be known, got {op.shape}")
        self._operators = operators
        super().__init__(
            operators[0].dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
            is_square, where, parameters,
        )  # fmt: skip

    @property
    def operators(self):
        return list(self._operators)

    def _shape(self):
        batch = _batch_shape_of(self._operators)
        if batch is None:
            return TensorShape(None)
        rows = int(np.prod([op.range_dimension.value for op in self._operators]))
        columns = int(np.prod([op.domain_dimension.value for op in self._operators]))
        return TensorShape(batch.as_list() + [rows, columns])

    def _to_dense(self):
        result = self._operators[0].to_dense()
        for op in self._operators[1:]:
            right = op.to_dense()
            m1, n1 = result.shape.as_list()[-2:]
            m2, n2 = right.shape.as_list()[-2:]
            product = _m.multiply(
                _a.expand_dims(_a.expand_dims(result, -1), -3),
                _a.expand_dims(_a.expand_dims(right, -2), -4),
            )  # [..., m1, m2, n1, n2]
            shape = product.shape.as_list()
            if None in shape[:-4]:
                batch = _a.shape(product)[:-4]
                result = _a.reshape(product, _a.concat([batch, [m1 * m2, n1 * n2]], 0))
            else:
                result = _a.reshape(product, shape[:-4] + [m1 * m2, n1 * n2])
        return result

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        # (A (x) B) vec-rows: reshape x's rows to [m_A, m_B] and apply each factor on its axis.
        x = _adjoint(x) if adjoint_arg else x
        dims = [
            op.range_dimension.value if adjoint else op.domain_dimension.value
            for op in self._operators
        ]
        columns = x.shape.as_list()[-1] if x.shape.ndims else None
        batched = any(op.batch_shape.ndims != 0 for op in self._operators)
        if batched or columns is None or None in x.shape.as_list()[:-2]:
            # Factors with batches would mix their batch dimensions with the reshaped rows.
            return _m.matmul(self.to_dense(), x, adjoint_a=adjoint)
        batch = x.shape.as_list()[:-2]
        current = x
        out_dims = list(dims)
        for k, op in enumerate(self._operators):
            before = int(np.prod(out_dims[:k]))
            after = int(np.prod(out_dims[k + 1 :]))
            # rows indexed (before, d_k, after): bring d_k to the matrix-row axis.
            t = _a.reshape(current, batch + [before, out_dims[k], after * columns])
            t = op.matmul(t, adjoint=adjoint)
            new = op.domain_dimension.value if adjoint else op.range_dimension.value
            out_dims[k] = new
            t_batch = t.shape.as_list()[:-3]
            batch = t_batch
            current = _a.reshape(t, t_batch + [before * new * after, columns])
        return current

    def _determinant(self):
        total = self.domain_dimension.value
        result = None
        for op in self._operators:
            n = op.domain_dimension.value
            term = _m.pow(op.determinant(), float(total // n))
            result = term if result is None else _m.multiply(result, term)
        return result

    def _log_abs_determinant(self):
        total = self.domain_dimension.value
        terms = [_m.multiply(op.log_abs_determinant(), float(total // op.domain_dimension.value))
                 for op in self._operators]  # fmt: skip
        return _sum(terms)

    def _diag_part(self):
        result = self._operators[0].diag_part()
        for op in self._operators[1:]:
            d = op.diag_part()
            product = _m.multiply(_a.expand_dims(result, -1), _a.expand_dims(d, -2))
            shape = product.shape.as_list()
            result = _a.reshape(product, shape[:-2] + [shape[-2] * shape[-1]])
        return result

    def _trace(self):
        result = self._operators[0].trace()
        for op in self._operators[1:]:
            result = _m.multiply(result, op.trace())
        return result

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if all(op.is_square for op in self._operators):
            inverse = LinearOperatorKronecker([op.inverse() for op in self._operators])
            return inverse.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)
        return super()._solve(rhs, adjoint, adjoint_arg)


class LinearOperatorLowRankUpdate(LinearOperator):
    """``base_operator + u @ diag(diag_update) @ adjoint(v)`` (``v`` defaults to ``u``, the
    diagonal to ones); solves and determinants use the Woodbury identity and the matrix
    determinant lemma with the ``K x K`` capacitance ``diag_update^-1 + adjoint(v) @
    base^-1 @ u``."""

    def __init__(
        self,
        base_operator,
        u,
        diag_update=None,
        v=None,
        is_diag_update_positive=None,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorLowRankUpdate",
    ):
        parameters = _parameters_with_hints(
            {"base_operator": base_operator, "u": u, "diag_update": diag_update, "v": v,
             "is_diag_update_positive": is_diag_update_positive},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        dtype = base_operator.dtype
        if diag_update is not None and is_diag_update_positive is False and is_positive_definite:
            _fail(
                name, "is_diag_update_positive is False, so the update may not be positive definite"
            )
        if v is None and base_operator.is_self_adjoint:
            if is_self_adjoint is False:
                _fail(
                    name,
                    "A = L + UDU^H, with L self-adjoint and D real diagonal.  Since UDU^H is "
                    "self-adjoint, this must be a self-adjoint operator.",
                )
            is_self_adjoint = True
        if (v is None and base_operator.is_positive_definite and is_diag_update_positive
                and is_positive_definite is None):  # fmt: skip
            is_positive_definite = True
        with name_scope(name):
            self._u = convert_to_tensor(u, dtype=dtype, name="u")
            self._v = self._u if v is None else convert_to_tensor(v, dtype=dtype, name="v")
            self._diag_update = (
                None
                if diag_update is None
                else convert_to_tensor(diag_update, dtype=dtype, name="diag_update")
            )  # fmt: skip
        self._base = base_operator
        self._use_cholesky = bool(
            base_operator.is_positive_definite and base_operator.is_self_adjoint
            and is_diag_update_positive and v is None
        )  # fmt: skip
        self._is_diag_update_positive = is_diag_update_positive
        super().__init__(
            dtype, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name,
            parameters,
        )  # fmt: skip

    @property
    def base_operator(self):
        return self._base

    @property
    def u(self):
        return self._u

    @property
    def v(self):
        return self._v

    @property
    def diag_update(self):
        return self._diag_update

    @property
    def is_diag_update_positive(self):
        return self._is_diag_update_positive

    def _shape(self):
        base = self._base.shape
        if base.ndims is None or self._u.shape.ndims is None:
            return base
        batch = _broadcast_static(
            TensorShape(base.as_list()[:-2]), TensorShape(self._u.shape.as_list()[:-2])
        )
        return TensorShape(batch.as_list() + base.as_list()[-2:])

    def _shape_tensor(self):
        return self._base.shape_tensor()

    def _scaled(self, t):
        """``diag_update * t`` along ``t``'s rows (``t`` is ``[..., K, R]``)."""
        if self._diag_update is None:
            return t
        return _m.multiply(_a.expand_dims(self._diag_update, -1), t)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        left, right = (self._v, self._u) if adjoint else (self._u, self._v)
        base = self._base.matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg)
        projected = _m.matmul(right, x, adjoint_a=True, adjoint_b=adjoint_arg)
        return _m.add(base, _m.matmul(left, self._scaled(projected)))

    def _capacitance(self, adjoint=False):
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        base_inv_u = self._base.solve(u, adjoint=adjoint)
        vt_base_inv_u = _m.matmul(v, base_inv_u, adjoint_a=True)
        if self._diag_update is None:
            inverse_diag = _a.ones_like(vt_base_inv_u[..., 0])
        else:
            inverse_diag = _m.truediv(_a.ones_like(self._diag_update), self._diag_update)
        return _mx.matrix_set_diag(
            vt_base_inv_u, _m.add(_mx.matrix_diag_part(vt_base_inv_u), inverse_diag)
        )

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        if self._base.is_non_singular is False:
            return super()._solve(rhs, adjoint, adjoint_arg)
        u, v = (self._v, self._u) if adjoint else (self._u, self._v)
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        base_inv_rhs = self._base.solve(rhs, adjoint=adjoint)
        capacitance = self._capacitance(adjoint)
        inner = _mx.matrix_solve(capacitance, _m.matmul(v, base_inv_rhs, adjoint_a=True))
        return _m.subtract(base_inv_rhs, self._base.solve(_m.matmul(u, inner), adjoint=adjoint))

    def _log_abs_determinant(self):
        result = _m.add(self._base.log_abs_determinant(), _li.slogdet(self._capacitance())[1])
        if self._diag_update is not None:
            result = _m.add(result, _m.reduce_sum(_m.log(_m.abs(self._diag_update)), axis=-1))
        return result

    def _determinant(self):
        result = _m.multiply(self._base.determinant(), _mx.matrix_determinant(self._capacitance()))
        if self._diag_update is not None:
            result = _m.multiply(result, _m.reduce_prod(self._diag_update, axis=-1))
        return result

    def _to_dense(self):
        update = _m.matmul(self._u, self._scaled(_adjoint(self._v)))
        return _m.add(self._base.to_dense(), update)


# -- structured matrices ---------------------------------------------------------------------------
class LinearOperatorHouseholder(LinearOperator):
    """The reflection ``I - 2 v v^T / (v^T v)`` through the hyperplane orthogonal to
    ``reflection_axis`` ``v`` ``[..., N]``: symmetric, orthogonal, determinant -1."""

    def __init__(
        self,
        reflection_axis,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorHouseholder",
    ):
        parameters = _parameters_with_hints(
            {"reflection_axis": reflection_axis},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        with name_scope(name):
            self._axis = convert_to_tensor(reflection_axis, name="reflection_axis")
            if not self._axis.dtype.is_floating:
                _fail(
                    name,
                    f"reflection_axis must be a float tensor, got {self._axis.dtype.name}",
                    TypeError,
                )
        if is_self_adjoint is False:
            _fail(name, "A Householder operator is always self adjoint.")
        if is_non_singular is False:
            _fail(name, "A Householder operator is always non-singular.")
        if is_square is False:
            _fail(name, "A Householder operator is always square.")
        if is_positive_definite is True:
            _fail(name, "A Householder operator is never positive definite.")
        super().__init__(
            self._axis.dtype, [self._axis], is_non_singular, True, False, True, name, parameters
        )

    @property
    def reflection_axis(self):
        return self._axis

    def _shape(self):
        shape = self._axis.shape
        if shape.ndims is None:
            return shape
        return TensorShape(shape.as_list() + shape.as_list()[-1:])

    def _shape_tensor(self):
        shape = _a.shape(self._axis)
        return _a.concat([shape, shape[-1:]], 0)

    def _unit(self):
        norm = _m.sqrt(_m.reduce_sum(_m.square(self._axis), axis=-1, keepdims=True))
        return _m.truediv(self._axis, norm)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adjoint(x) if adjoint_arg else x
        unit = _a.expand_dims(self._unit(), -1)
        projection = _m.matmul(unit, x, adjoint_a=True)
        return _m.subtract(x, _m.multiply(_m.matmul(unit, projection), 2.0))

    def _determinant(self):
        return _m.negative(_a.ones_like(self._axis[..., 0]))

    def _log_abs_determinant(self):
        return _a.zeros_like(self._axis[..., 0])

    def _trace(self):
        n = _m.cast(_a.shape(self._axis)[-1], self.dtype)
        return _m.subtract(_m.multiply(_a.ones_like(self._axis[..., 0]), n), 2.0)

    def _diag_part(self):
        unit = self._unit()
        return _m.subtract(_a.ones_like(unit), _m.multiply(_m.square(unit), 2.0))

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return self._matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _eigvals(self):
        ones = _a.ones_like(self._axis)
        return _a.concat([-ones[..., :1], ones[..., 1:]], axis=-1)

    def _inverse_operator(self):
        return self


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix of ``perm`` ``[..., N]``: row ``i`` is the ``perm[i]``-th row of
    the identity, so ``op @ x == x[..., perm, :]``."""

    def __init__(
        self,
        perm,
        dtype=_dtypes.float32,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorPermutation",
    ):
        parameters = _parameters_with_hints(
            {"perm": perm, "dtype": dtype},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        with name_scope(name):
            self._perm = convert_to_tensor(perm, name="perm")
            if not self._perm.dtype.is_integer:
                _fail(
                    name, f"perm must be an integer tensor, got {self._perm.dtype.name}", TypeError
                )
            if self._perm.shape.ndims is not None and self._perm.shape.ndims < 1:
                _fail(name, f"perm must have at least 1 dimension, got {self._perm.shape}")
            known = numpy_value_or_none(self._perm)
            if known is not None:
                n = known.shape[-1]
                if not np.all(np.sort(known, axis=-1) == np.arange(n)):
                    _fail(name, f"Invalid permutation in perm: {known.tolist()}")
        if is_non_singular is False:
            _fail(name, "A Permutation operator is always non-singular.")
        if is_square is False:
            _fail(name, "A Permutation operator is always square.")
        super().__init__(
            dtype, [self._perm], is_non_singular, is_self_adjoint, is_positive_definite, True,
            name, parameters,
        )  # fmt: skip

    @property
    def perm(self):
        return self._perm

    def _shape(self):
        shape = self._perm.shape
        if shape.ndims is None:
            return shape
        return TensorShape(shape.as_list() + shape.as_list()[-1:])

    def _shape_tensor(self):
        shape = _a.shape(self._perm)
        return _a.concat([shape, shape[-1:]], 0)

    def _to_dense(self):
        n = self._perm.shape.as_list()[-1] if self._perm.shape.ndims else None
        n = n if n is not None else _a.shape(self._perm)[-1]
        return _a.one_hot(self._perm, n, dtype=self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _m.matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        return _m.matmul(self.to_dense(), rhs, adjoint_a=not adjoint, adjoint_b=adjoint_arg)

    def _determinant(self):
        # The sign of the permutation: the determinant of its (exact, 0/1) matrix.
        dense = _m.cast(self.to_dense(), _dtypes.float64)
        return _m.cast(_m.sign(_mx.matrix_determinant(dense)), self.dtype)

    def _log_abs_determinant(self):
        return _a.zeros(_a.shape(self._perm)[:-1], dtype=self.dtype)

    def _trace(self):
        n = self._perm.shape.as_list()[-1] if self._perm.shape.ndims else None
        n = n if n is not None else _a.shape(self._perm)[-1]
        fixed = _m.equal(self._perm, _m.cast(_a.range(n), self._perm.dtype))
        return _m.reduce_sum(_m.cast(fixed, self.dtype), axis=-1)

    def _diag_part(self):
        n = self._perm.shape.as_list()[-1] if self._perm.shape.ndims else None
        n = n if n is not None else _a.shape(self._perm)[-1]
        return _m.cast(_m.equal(self._perm, _m.cast(_a.range(n), self._perm.dtype)), self.dtype)

    def _cond(self):
        return _a.ones(_a.shape(self._perm)[:-1], dtype=self.dtype)


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrix with first column ``col`` and first row ``row`` (``[..., N]`` each;
    ``row[0]`` is ignored, the diagonal is ``col[0]``)."""

    def __init__(
        self,
        col,
        row,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorToeplitz",
    ):
        parameters = _parameters_with_hints(
            {"col": col, "row": row},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        with name_scope(name):
            self._col = convert_to_tensor(col, name="col")
            self._row = convert_to_tensor(row, dtype=self._col.dtype, name="row")
            if not self._col.dtype.is_floating:
                _fail(name, f"col must be a float tensor, got {self._col.dtype.name}", TypeError)
            n = self._col.shape.as_list()[-1] if self._col.shape.ndims else None
            if n is None:
                _fail(name, f"the length of col must be known, got {self._col.shape}")
            r = self._row.shape.as_list()[-1] if self._row.shape.ndims else None
            if r is not None and r != n:
                _fail(name, f"col and row must have the same length, got {n} and {r}")
        if is_square is False:
            _fail(name, "A Toeplitz operator is always square.")
        super().__init__(
            self._col.dtype, [self._col, self._row], is_non_singular, is_self_adjoint,
            is_positive_definite, True, name, parameters,
        )  # fmt: skip

    @property
    def col(self):
        return self._col

    @property
    def row(self):
        return self._row

    def _shape(self):
        batch = _broadcast_static(
            TensorShape(self._col.shape.as_list()[:-1]), TensorShape(self._row.shape.as_list()[:-1])
        )
        n = self._col.shape.as_list()[-1]
        return TensorShape(batch.as_list() + [n, n])

    def _to_dense(self):
        n = self._col.shape.as_list()[-1]
        # values[k] for k = i - j + n - 1: reversed row[1:], then col.
        from ..ops.reverse_ops import reverse

        values = _a.concat(
            _broadcast_vectors([reverse(self._row[..., 1:], [-1]), self._col]), axis=-1
        )
        index = np.arange(n)[:, None] - np.arange(n)[None, :] + n - 1
        rank = values.shape.ndims
        return _a.gather(values, index, axis=rank - 1)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return _m.matmul(self.to_dense(), x, adjoint_a=adjoint, adjoint_b=adjoint_arg)


def _broadcast_vectors(tensors):
    batch = TensorShape([])
    for t in tensors:
        batch = _broadcast_static(batch, TensorShape(t.shape.as_list()[:-1]))
    if not batch.is_fully_defined():
        return tensors
    out = []
    for t in tensors:
        dims = t.shape.as_list()
        if dims[:-1] != batch.as_list():
            t = _broadcast_to(t, batch.as_list() + dims[-1:])
        out.append(t)
    return out


class LinearOperatorTridiag(LinearOperator):
    """The square tridiagonal matrix given by ``diagonals`` in one of the formats of
    ``tf.linalg.tridiagonal_matmul``: ``compact`` ``[..., 3, N]``, ``sequence`` (three
    ``[..., N]``), or ``matrix`` ``[..., N, N]``."""

    def __init__(
        self,
        diagonals,
        diagonals_format="compact",
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=None,
        name="LinearOperatorTridiag",
    ):
        parameters = _parameters_with_hints(
            {"diagonals": diagonals, "diagonals_format": diagonals_format},
            is_non_singular, is_self_adjoint, is_positive_definite, is_square, name)  # fmt: skip
        if diagonals_format not in ("compact", "sequence", "matrix"):
            _fail(
                name,
                "Diagonals Format must be one of compact, matrix, sequence, "
                f"got {diagonals_format!r}",
            )
        if is_square is False:
            _fail(name, "A tridiagonal operator is always square.")
        with name_scope(name):
            if diagonals_format == "sequence":
                self._diagonals = [
                    convert_to_tensor(d, name=f"diag_{i}") for i, d in enumerate(diagonals)
                ]
                if len(self._diagonals) != 3:
                    _fail(name, "Expected diagonals to be a sequence of length 3.")
                dtype = self._diagonals[1].dtype
            else:
                self._diagonals = convert_to_tensor(diagonals, name="diagonals")
                dtype = self._diagonals.dtype
            if not dtype.is_floating:
                _fail(name, f"diagonals must be float tensors, got {dtype.name}", TypeError)
        self._format = diagonals_format
        super().__init__(
            dtype,
            None,
            is_non_singular,
            is_self_adjoint,
            is_positive_definite,
            True,
            name,
            parameters,
        )

    @property
    def diagonals(self):
        return self._diagonals

    @property
    def diagonals_format(self):
        return self._format

    def _shape(self):
        if self._format == "matrix":
            return self._diagonals.shape
        main = self._diagonals[1] if self._format == "sequence" else self._diagonals
        shape = main.shape
        if shape.ndims is None:
            return shape
        dims = shape.as_list()
        batch = dims[:-1] if self._format == "sequence" else dims[:-2]
        return TensorShape(batch + [dims[-1], dims[-1]])

    def _compact(self):
        return _li._compact_diagonals(self.name, self._diagonals, self._format)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _adjoint(x) if adjoint_arg else x
        superdiag, maindiag, subdiag = self._compact()
        if adjoint:  # the transpose: the subdiagonal shifted up, the superdiagonal down
            superdiag, subdiag = (
                _a.pad(subdiag[..., 1:], [[0, 0]] * (subdiag.shape.ndims - 1) + [[0, 1]]),
                _a.pad(superdiag[..., :-1], [[0, 0]] * (superdiag.shape.ndims - 1) + [[1, 0]]),
            )
        return _li.tridiagonal_matmul(
            [superdiag, maindiag, subdiag], x, diagonals_format="sequence"
        )

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        superdiag, maindiag, subdiag = self._compact()
        if adjoint:
            superdiag, subdiag = (
                _a.pad(subdiag[..., 1:], [[0, 0]] * (subdiag.shape.ndims - 1) + [[0, 1]]),
                _a.pad(superdiag[..., :-1], [[0, 0]] * (superdiag.shape.ndims - 1) + [[1, 0]]),
            )
        return _li.tridiagonal_solve(
            [superdiag, maindiag, subdiag], rhs, diagonals_format="sequence"
        )

    def _diag_part(self):
        return self._compact()[1]

    def _to_dense(self):
        superdiag, maindiag, subdiag = self._compact()
        packed = _a.stack([superdiag, maindiag, subdiag], axis=-2)
        return _mx.matrix_diag(packed, k=(-1, 1), align="LEFT_RIGHT")


# -- conjugate gradient ----------------------------------------------------------------------------
CGState = collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def conjugate_gradient(
    operator,
    rhs,
    preconditioner=None,
    x=None,
    tol=1e-5,
    max_iter=20,
    name="conjugate_gradient",
):
    """Solves ``operator @ x == rhs`` for a self-adjoint positive definite ``operator`` by
    (preconditioned) conjugate gradients in an in-graph loop: at most ``max_iter`` steps, until
    every residual's norm is at most ``tol`` times its first.  Returns a ``CGState`` ``(i, x,
    r, p, gamma)``: the steps taken, the solution, the residual, the search direction and
    ``r . (preconditioner @ r)``."""
    from primitives.control_flow_ops import while_loop

    from ..ops.linalg_ops import norm

    if not (operator.is_self_adjoint and operator.is_positive_definite):
        _fail("conjugate_gradient", "Expected a self-adjoint, positive definite operator.")
    if preconditioner is not None and not (
        preconditioner.is_self_adjoint and preconditioner.is_positive_definite
    ):
        _fail("conjugate_gradient", "Expected a self-adjoint, positive definite preconditioner.")

    def dot(a, b):
        return _m.reduce_sum(_m.multiply(a, b), axis=-1)

    with name_scope(name):
        rhs = convert_to_tensor(rhs, name="rhs")
        if rhs.shape.ndims is not None and rhs.shape.ndims < 1:
            _fail("conjugate_gradient", f"rhs must be at least a vector, got {rhs.shape}")
        batch = operator.batch_shape
        if preconditioner is not None:
            batch = _broadcast_static(batch, preconditioner.batch_shape)
        shape = _broadcast_static(TensorShape(rhs.shape.as_list()[:-1]), batch)
        r0 = _broadcast_to(rhs, shape.as_list() + rhs.shape.as_list()[-1:])
        tol = _m.multiply(convert_to_tensor(tol, dtype=rhs.dtype), norm(r0, axis=-1))
        if x is None:
            x = _a.zeros_like(r0)
        else:
            x = convert_to_tensor(x, dtype=rhs.dtype, name="x")
            r0 = _m.subtract(rhs, operator.matvec(x))
        p0 = r0 if preconditioner is None else preconditioner.matvec(r0)
        gamma0 = dot(r0, p0)
        i = convert_to_tensor(np.int32(0))

        def stopping_criterion(i, state):
            return _m.logical_and(
                _m.less(i, max_iter), _m.reduce_any(_m.greater(norm(state.r, axis=-1), tol))
            )

        def cg_step(i, state):
            z = operator.matvec(state.p)
            alpha = _m.truediv(state.gamma, dot(state.p, z))
            x = _m.add(state.x, _m.multiply(_a.expand_dims(alpha, -1), state.p))
            r = _m.subtract(state.r, _m.multiply(_a.expand_dims(alpha, -1), z))
            q = r if preconditioner is None else preconditioner.matvec(r)
            gamma = dot(r, q)
            beta = _m.truediv(gamma, state.gamma)
            p = _m.add(q, _m.multiply(_a.expand_dims(beta, -1), state.p))
            return i + 1, CGState(i + 1, x, r, p, gamma)

        state = CGState(i=i, x=x, r=r0, p=p0, gamma=gamma0)
        _, state = while_loop(stopping_criterion, cg_step, [i, state])
        return CGState(state.i, x=state.x, r=state.r, p=state.p, gamma=state.gamma)

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
    "LinearOperatorComposition",
    "LinearOperatorDiag",
    "LinearOperatorFullMatrix",
    "LinearOperatorInversion",
    "LinearOperatorLowerTriangular",
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

"""Structured matrices as linear operators (Householder reflections, permutations, Toeplitz and
tridiagonal matrices), each applied without forming the dense matrix where it can be; and
``conjugate_gradient``, which solves with any positive definite operator."""

from __future__ import annotations

import collections

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import name_scope
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops as _a
from ..ops import gather_ops as _g
from ..ops import math_ops as _m
from ..ops import matrix_ops as _mx
from . import linalg_impl as _li
from .linear_operator import (
    LinearOperator,
    _adjoint,
    _broadcast_static,
    _broadcast_to,
    _fail,
    _parameters_with_hints,
)


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
        return _g.gather(values, index, axis=rank - 1)

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
                _g.pad(subdiag[..., 1:], [[0, 0]] * (subdiag.shape.ndims - 1) + [[0, 1]]),
                _g.pad(superdiag[..., :-1], [[0, 0]] * (superdiag.shape.ndims - 1) + [[1, 0]]),
            )
        return _li.tridiagonal_matmul(
            [superdiag, maindiag, subdiag], x, diagonals_format="sequence"
        )

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _adjoint(rhs) if adjoint_arg else rhs
        superdiag, maindiag, subdiag = self._compact()
        if adjoint:
            superdiag, subdiag = (
                _g.pad(subdiag[..., 1:], [[0, 0]] * (subdiag.shape.ndims - 1) + [[0, 1]]),
                _g.pad(superdiag[..., :-1], [[0, 0]] * (superdiag.shape.ndims - 1) + [[1, 0]]),
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


__all__ = [
    "LinearOperatorHouseholder",
    "LinearOperatorPermutation",
    "LinearOperatorToeplitz",
    "LinearOperatorTridiag",
    "conjugate_gradient",
]

"""Operators built of operators: block diagonal and block lower-triangular operators, Kronecker
products and low-rank updates, each applied through the operators it holds."""

from __future__ import annotations

import numpy as np

from ..framework.graph import name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops as _a
from ..ops import gather_ops as _g
from ..ops import math_ops as _m
from ..ops import matrix_ops as _mx
from . import linalg_impl as _li
from .linear_operator import (
    LinearOperator,
    _adjoint,
    _batch_shape_of,
    _broadcast_static,
    _broadcast_to,
    _check_same_dtype,
    _fail,
    _hint_implied,
    _operator_list,
    _parameters_with_hints,
    _product,
    _sum,
)


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
            rows.append(_g.pad(dense, [[0, 0]] * (rank - 1) + [[offset, total - offset - size]]))
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
            block_rows.append(_g.pad(dense, [[0, 0]] * (rank - 1) + [[0, total - width]]))
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


__all__ = [
    "LinearOperatorBlockDiag",
    "LinearOperatorBlockLowerTriangular",
    "LinearOperatorKronecker",
    "LinearOperatorLowRankUpdate",
]

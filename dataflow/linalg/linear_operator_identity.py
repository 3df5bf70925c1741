"""Identities and zeros as operators (``LinearOperatorIdentity``, ``LinearOperatorScaledIdentity``,
``LinearOperatorZeros``): square or not, batched, checked against their declared shapes only
when asked."""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops as _a
from ..ops import math_ops as _m
from ..ops import matrix_ops as _mx
from .linear_operator import LinearOperator, _adjoint, _fail, _static_dim


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


__all__ = [
    "LinearOperatorIdentity",
    "LinearOperatorScaledIdentity",
    "LinearOperatorZeros",
]

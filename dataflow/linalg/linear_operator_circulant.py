"""``df.linalg.LinearOperatorCirculant``, ``...Circulant2D`` and ``...Circulant3D``: circulant,
block circulant and nested block circulant operators known by their spectrum,
TensorFlow's ``tf.linalg.LinearOperatorCirculant*``.

A circulant operator of ``block_depth`` ``d`` (1, 2 or 3) is defined by its spectrum, a tensor
``[B1, ..., Bb, N0, ..., N(d-1)]``: the operator is ``[B1, ..., Bb, N, N]`` with
``N = N0 * ... * N(d-1)`` and acts on a vector by a ``d``-dimensional FFT, a product with the
spectrum and the inverse FFT.  Its eigenvalues are the spectrum, so the determinant, the solve,
the adjoint and the inverse are cheap.  As in TensorFlow, arguments and results have the dtype
``input_output_dtype`` (complex64 unless given); results are cast to it, so a real dtype drops
the imaginary part (exact when the spectrum is Hermitian).
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops as _a
from ..ops import check_ops as _checks
from ..ops import complex_ops as _c
from ..ops import math_ops as _m
from ..ops import matrix_ops as _mx
from ..ops import spectral_ops as _fft
from .linear_operator import LinearOperator, LinearOperatorComposition, _fail

__all__ = [
    "LinearOperatorCirculant",
    "LinearOperatorCirculant2D",
    "LinearOperatorCirculant3D",
]

_FFT = {1: _fft.fft, 2: _fft.fft2d, 3: _fft.fft3d}
_IFFT = {1: _fft.ifft, 2: _fft.ifft2d, 3: _fft.ifft3d}


def _to_complex(x):
    if x.dtype.is_complex:
        return x
    return _m.cast(x, _dtypes.complex128 if x.dtype == _dtypes.float64 else _dtypes.complex64)


def _combined(left, right, attribute):
    """TensorFlow's hint of a product of two commuting operators: True when both are, False
    when one is not (non-singular) or exactly one is (self-adjoint), else unknown."""
    a, b = getattr(left, attribute), getattr(right, attribute)
    if a is True and b is True:
        return True
    if attribute == "is_non_singular" and (a is False or b is False):
        return False
    if attribute == "is_self_adjoint" and {a, b} == {True, False}:
        return False
    return None


class _BaseLinearOperatorCirculant(LinearOperator):
    """A [batch] [[nested] block] circulant operator of ``block_depth`` 1, 2 or 3."""

    def __init__(
        self,
        spectrum,
        block_depth,
        input_output_dtype=_dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        parameters=None,
        name="LinearOperatorCirculant",
    ):
        where = type(self).__name__
        if block_depth not in (1, 2, 3):
            _fail(
                where, f"Argument `block_depth` must be one of [1, 2, 3]. Received: {block_depth}."
            )
        self._block_depth = block_depth
        spectrum = convert_to_tensor(spectrum, name="spectrum")
        if spectrum.shape.ndims is not None and spectrum.shape.ndims < block_depth:
            _fail(
                where,
                f"Argument `spectrum` must have at least {block_depth} dimensions. "
                f"Received shape: {spectrum.shape}.",
            )
        self._spectrum = spectrum
        if not spectrum.dtype.is_complex:
            if is_self_adjoint is False:
                _fail(
                    where,
                    "A real spectrum always corresponds to a self-adjoint operator. Expected "
                    f"argument `is_self_adjoint` to be True. Received: {is_self_adjoint}.",
                )
            is_self_adjoint = True
        if is_square is False:
            _fail(
                where,
                "A [[nested] block] circulant operator is always square. Expected argument "
                f"`is_square` to be True. Received: {is_square}.",
            )
        super().__init__(
            dtype=_dtypes.as_dtype(input_output_dtype),
            graph_parents=[spectrum],
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=True,
            name=name,
            parameters=parameters,
        )

    def _init_public(
        self, block_depth, spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
        is_positive_definite, is_square, name,
    ):  # fmt: skip
        """The ``__init__`` of the public classes, which differ only in ``block_depth``: their
        arguments become ``parameters``."""
        parameters = dict(
            spectrum=spectrum,
            input_output_dtype=input_output_dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            name=name,
        )
        _BaseLinearOperatorCirculant.__init__(
            self,
            spectrum,
            block_depth=block_depth,
            input_output_dtype=input_output_dtype,
            is_non_singular=is_non_singular,
            is_self_adjoint=is_self_adjoint,
            is_positive_definite=is_positive_definite,
            is_square=is_square,
            parameters=parameters,
            name=name,
        )

    # -- structure ---------------------------------------------------------------------------
    @property
    def spectrum(self):
        return self._spectrum

    @property
    def block_depth(self) -> int:
        """1 for circulant, 2 for block circulant, 3 for nested block circulant."""
        return self._block_depth

    @property
    def block_shape(self) -> TensorShape:
        shape = self.spectrum.shape
        if shape.ndims is None:
            return TensorShape([None] * self.block_depth)
        return TensorShape(shape.as_list()[-self.block_depth :])

    def block_shape_tensor(self):
        """The shape of the block dimensions of ``spectrum`` as an int32 tensor."""
        if self.block_shape.is_fully_defined():
            return convert_to_tensor(np.array(self.block_shape.as_list(), np.int32))
        return _a.shape(self.spectrum)[-self.block_depth :]

    def _shape(self):
        shape = self.spectrum.shape
        if shape.ndims is None:
            return TensorShape(None)
        dims = shape.as_list()
        block = dims[-self.block_depth :]
        n = None if any(d is None for d in block) else int(np.prod(block))
        return TensorShape(dims[: -self.block_depth] + [n, n])

    def _shape_tensor(self):
        shape = _a.shape(self.spectrum)
        n = _m.reduce_prod(shape[-self.block_depth :], keepdims=True)
        return _a.concat([shape[: -self.block_depth], n, n], 0)

    def _block_axes(self):
        return [-(i + 1) for i in range(self.block_depth)]

    def _check_input_dtype(self, arg):
        if isinstance(arg, Tensor) and arg.dtype.base_dtype != self.dtype:
            _fail(
                self.name,
                f"expected argument of dtype {self.dtype.name}, got {arg.dtype.name}",
                TypeError,
            )
        return super()._check_input_dtype(arg)

    # -- the FFT form ------------------------------------------------------------------------
    def _fft(self, x):
        return _FFT[self.block_depth](_to_complex(x))

    def _ifft(self, x):
        return _IFFT[self.block_depth](_to_complex(x))

    def convolution_kernel(self, name="convolution_kernel"):
        """The convolution kernel whose ``block_depth``-dimensional DFT is ``spectrum``, in
        ``self.dtype``."""
        with self._name_scope(name):
            return _m.cast(self._ifft(self.spectrum), self.dtype)

    def _apply(self, x, adjoint, inverse):
        """``op @ x`` (or ``op^-1 @ x``, of the adjoint with ``adjoint``) of a batch of
        matrices ``x`` ``[..., N, R]`` through the FFT."""
        spectrum = _to_complex(self.spectrum)
        if adjoint:
            spectrum = _c.conj(spectrum)
        x = _m.cast(x, spectrum.dtype)
        depth = self.block_depth
        # Broadcast the batch dimensions of x and the spectrum against each other.
        spectrum_batch = _a.shape(spectrum)[:-depth]
        n = _m.reduce_prod(self.block_shape_tensor(), keepdims=True)
        as_matrix = _a.reshape(spectrum, _a.concat([spectrum_batch, n, [1]], 0))
        x = x + _a.zeros_like(as_matrix[..., :1, :])
        as_matrix = as_matrix + _a.zeros_like(x[..., :1, :1])
        spectrum = _a.reshape(
            as_matrix, _a.concat([_a.shape(x)[:-2], self.block_shape_tensor()], 0)
        )
        # [..., N, R] -> [R, ..., N] -> [R, ..., N0, ..., N(d-1)]
        rank = x.shape.ndims
        if rank is None:
            # Transposes here need the rank when the graph is built (as matrix_transpose).
            _fail(
                self.name,
                "the argument and the spectrum must have ranks known when the graph is built",
            )
        x = _a.transpose(x, [rank - 1] + list(range(rank - 1)))
        leading = _a.shape(x)[:-1]
        blocks = _a.reshape(x, _a.concat([leading, self.block_shape_tensor()], 0))
        transformed = self._fft(blocks)
        if inverse:
            result = self._ifft(transformed / spectrum)
        else:
            result = self._ifft(spectrum * transformed)
        flat = _a.reshape(result, _a.shape(x))
        y = _a.transpose(flat, list(range(1, rank)) + [0])
        return _m.cast(y, self.dtype)

    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        x = _mx.adjoint(x) if adjoint_arg else x
        return self._apply(x, adjoint, inverse=False)

    def _solve(self, rhs, adjoint=False, adjoint_arg=False):
        rhs = _mx.adjoint(rhs) if adjoint_arg else rhs
        return self._apply(rhs, adjoint, inverse=True)

    # -- reductions --------------------------------------------------------------------------
    def _determinant(self):
        return _m.cast(_m.reduce_prod(self.spectrum, axis=self._block_axes()), self.dtype)

    def _log_abs_determinant(self):
        log_abs = _m.reduce_sum(_m.log(_m.abs(self.spectrum)), axis=self._block_axes())
        return _m.cast(log_abs, self.dtype)

    def _trace(self):
        axes = self._block_axes()
        real_part = _m.reduce_sum(_c.real(self.spectrum), axis=axes)
        if not self.dtype.is_complex:
            return _m.cast(real_part, self.dtype)
        if self.is_self_adjoint:
            imag_part = _a.zeros_like(real_part)
        else:
            imag_part = _m.reduce_sum(_c.imag(self.spectrum), axis=axes)
        return _m.cast(_c.complex(real_part, imag_part), self.dtype)

    def _diag_part(self):
        # Every diagonal entry of a circulant matrix is the same: the trace over N.
        if self.shape.is_fully_defined():
            ones = _a.ones(self.shape.as_list()[:-1], dtype=self.dtype)
            size = self.domain_dimension.value
        else:
            ones = _a.ones(self.shape_tensor()[:-1], dtype=self.dtype)
            size = self.domain_dimension_tensor()
        value = self.trace() / _m.cast(size, self.dtype)
        return _a.expand_dims(value, -1) * ones

    def _eigvals(self):
        return self._unblockify(self.spectrum)

    def _cond(self):
        values = _m.abs(self._unblockify(self.spectrum))
        return _m.reduce_max(values, axis=-1) / _m.reduce_min(values, axis=-1)

    def _unblockify(self, x):
        shape = _a.shape(x)
        flat = _a.concat(
            [shape[: -self.block_depth], _m.reduce_prod(shape[-self.block_depth :], keepdims=True)],
            0,
        )
        return _a.reshape(x, flat)

    # -- checks ------------------------------------------------------------------------------
    def assert_hermitian_spectrum(self, name="assert_hermitian_spectrum"):
        """An op that fails unless the spectrum is Hermitian (the operator is real): the
        imaginary part of the convolution kernel must be below ``eps * N``."""
        eps = np.finfo(self.dtype.real_dtype.as_numpy_dtype).eps
        with self._name_scope(name):
            max_err = _m.cast(self.domain_dimension_tensor(), self.dtype.real_dtype) * eps
            imag_kernel = _c.imag(self.convolution_kernel())
            return _checks.assert_less(
                _m.abs(imag_kernel), max_err, message="Spectrum was not Hermitian"
            )

    def assert_non_singular(self, name="assert_non_singular"):
        """An op that fails when the spectrum has a zero."""
        with self._name_scope(name):
            modulus = _m.abs(self.spectrum)
            return _checks.assert_less(
                _a.zeros_like(modulus),
                modulus,
                message="Singular operator:  Spectrum contained zero values.",
            )

    def assert_positive_definite(self, name="assert_positive_definite"):
        """An op that fails unless the real part of the spectrum is positive."""
        with self._name_scope(name):
            return _checks.assert_positive(
                _c.real(self.spectrum),
                message="Not positive definite:  Real part of spectrum was not all positive.",
            )

    def assert_self_adjoint(self, name="assert_self_adjoint"):
        """An op that fails when the spectrum has a non-zero imaginary part."""
        from ..ops.misc_ops import no_op

        with self._name_scope(name):
            if not self.spectrum.dtype.is_complex:
                return no_op()
            imag_part = _c.imag(self.spectrum)
            return _checks.assert_equal(
                _a.zeros_like(imag_part),
                imag_part,
                message="Not self-adjoint:  The spectrum contained non-zero imaginary part.",
            )

    # -- derived operators -------------------------------------------------------------------
    def _same_kind(self, spectrum, **kwargs):
        return type(self)(spectrum=spectrum, **kwargs)

    def _adjoint_operator(self):
        if self.is_self_adjoint:
            return self
        spectrum = self.spectrum
        if spectrum.dtype.is_complex:
            spectrum = _c.conj(spectrum)
        # As TensorFlow: the adjoint keeps the hints, with the default input_output_dtype.
        return self._same_kind(
            spectrum,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
        )

    def _inverse_operator(self):
        return self._same_kind(
            1.0 / self.spectrum,
            is_non_singular=self.is_non_singular,
            is_self_adjoint=self.is_self_adjoint,
            is_positive_definite=self.is_positive_definite,
            is_square=True,
            input_output_dtype=self.dtype,
        )

    def _hints_with(self, other):
        self_adjoint = _combined(self, other, "is_self_adjoint")
        positive = None
        if self.is_positive_definite and other.is_positive_definite and self_adjoint:
            positive = True
        return dict(
            is_non_singular=_combined(self, other, "is_non_singular"),
            is_self_adjoint=self_adjoint,
            is_positive_definite=positive,
            is_square=True,
        )

    def matmul(self, x, adjoint=False, adjoint_arg=False, name="matmul"):
        """``op @ x``; the product of two circulant operators of the same kind is one
        circulant operator with the product of their spectra."""
        if isinstance(x, type(self)) and type(x) is type(self):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            return self._same_kind(left.spectrum * right.spectrum, **left._hints_with(right))
        return super().matmul(x, adjoint=adjoint, adjoint_arg=adjoint_arg, name=name)

    def solve(self, rhs, adjoint=False, adjoint_arg=False, name="solve"):
        """``X`` with ``op @ X == rhs``; with another circulant operator of the same kind,
        one circulant operator with the quotient of their spectra."""
        if isinstance(rhs, type(self)) and type(rhs) is type(self):
            self._check_solvable()
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            return self._same_kind(right.spectrum / left.spectrum, **left._hints_with(right))
        if isinstance(rhs, LinearOperator):
            self._check_solvable()
            left = self.adjoint() if adjoint else self
            right = rhs.adjoint() if adjoint_arg else rhs
            return LinearOperatorComposition([left.inverse(), right])
        return super().solve(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg, name=name)


class LinearOperatorCirculant(_BaseLinearOperatorCirculant):
    """A [batch] circulant matrix ``[B1, ..., Bb, N, N]`` given by its spectrum
    ``[B1, ..., Bb, N]`` (the DFT of its first column, its eigenvalues)."""

    def __init__(
        self,
        spectrum,
        input_output_dtype=_dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant",
    ):
        self._init_public(
            1, spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
            is_positive_definite, is_square, name,
        )  # fmt: skip


class LinearOperatorCirculant2D(_BaseLinearOperatorCirculant):
    """A [batch] block circulant matrix with circulant blocks, ``[B1, ..., Bb, N, N]``, given
    by its spectrum ``[B1, ..., Bb, N0, N1]`` (``N = N0 * N1``)."""

    def __init__(
        self,
        spectrum,
        input_output_dtype=_dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant2D",
    ):
        self._init_public(
            2, spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
            is_positive_definite, is_square, name,
        )  # fmt: skip


class LinearOperatorCirculant3D(_BaseLinearOperatorCirculant):
    """A [batch] nested block circulant matrix, ``[B1, ..., Bb, N, N]``, given by its spectrum
    ``[B1, ..., Bb, N0, N1, N2]`` (``N = N0 * N1 * N2``)."""

    def __init__(
        self,
        spectrum,
        input_output_dtype=_dtypes.complex64,
        is_non_singular=None,
        is_self_adjoint=None,
        is_positive_definite=None,
        is_square=True,
        name="LinearOperatorCirculant3D",
    ):
        self._init_public(
            3, spectrum, input_output_dtype, is_non_singular, is_self_adjoint,
            is_positive_definite, is_square, name,
        )  # fmt: skip

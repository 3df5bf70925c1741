"""``tf.bitwise``: and, or, xor, invert and the shifts of integer tensors, one op each as in
TensorFlow (``BitwiseAnd``, ``BitwiseOr``, ``BitwiseXor``, ``Invert``, ``LeftShift``,
``RightShift``), elementwise with broadcasting and no gradient.

As TensorFlow's kernels, the shifts clamp the shift amount to ``[0, bits - 1]``, and
``right_shift`` of a signed integer is arithmetic (it keeps the sign).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.graph import Tensor
from ..framework.op_registry import define_op
from .math_ops import (
    INT_TYPES,
    _elementwise_extra,
    _infer_binary,
    _infer_unary,
    _ufunc_kernel,
    binary_op,
    unary_op,
)

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]


def _clamped_shift(shift):
    def kernel(x, y):
        bits = np.iinfo(x.dtype).bits
        return shift(x, np.clip(y, 0, bits - 1).astype(x.dtype)).astype(x.dtype)

    return kernel


_BINARY = [
    ("BitwiseAnd", np.bitwise_and),
    ("BitwiseOr", np.bitwise_or),
    ("BitwiseXor", np.bitwise_xor),
    ("LeftShift", _clamped_shift(np.left_shift)),
    ("RightShift", _clamped_shift(np.right_shift)),
]
for _type, _fn in _BINARY:
    define_op(
        _type, _infer_binary(INT_TYPES), _ufunc_kernel(_fn), extra=_elementwise_extra(_type, _fn)
    )
define_op(
    "Invert",
    _infer_unary(INT_TYPES),
    _ufunc_kernel(np.invert),
    extra=_elementwise_extra("Invert", np.invert),
)


def bitwise_and(x, y, name: Optional[str] = None) -> Tensor:
    """``x & y`` elementwise, for integers."""
    return binary_op("BitwiseAnd", x, y, name or "BitwiseAnd")


def bitwise_or(x, y, name: Optional[str] = None) -> Tensor:
    """``x | y`` elementwise, for integers."""
    return binary_op("BitwiseOr", x, y, name or "BitwiseOr")


def bitwise_xor(x, y, name: Optional[str] = None) -> Tensor:
    """``x ^ y`` elementwise, for integers."""
    return binary_op("BitwiseXor", x, y, name or "BitwiseXor")


def invert(x, name: Optional[str] = None) -> Tensor:
    """``~x`` elementwise: every bit flipped (``255 - x`` for uint8)."""
    return unary_op("Invert", x, name)


def left_shift(x, y, name: Optional[str] = None) -> Tensor:
    """``x << y`` elementwise, ``y`` clamped to ``[0, bits - 1]``; bits shifted out are lost."""
    return binary_op("LeftShift", x, y, name or "LeftShift")


def right_shift(x, y, name: Optional[str] = None) -> Tensor:
    """``x >> y`` elementwise, ``y`` clamped to ``[0, bits - 1]``; arithmetic for signed types."""
    return binary_op("RightShift", x, y, name or "RightShift")


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in ("BitwiseAnd", "BitwiseOr", "BitwiseXor", "Invert", "LeftShift", "RightShift"):
    NotDifferentiable(_type)

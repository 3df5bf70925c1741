"""Python operators on `Tensor`; importing this module attaches them.

``+ - * / // % ** @`` (and their reflected forms), unary ``-`` and ``abs()``, the orderings
``< <= > >=``, ``& | ^ ~`` on bool tensors, and ``t[...]`` indexing.  ``/`` is true division
(integers become floats).  Op names follow TensorFlow's operators: ``x + y`` makes an op named
``add``, ``x / y`` one named ``truediv``.

``==``, ``!=`` and ``hash`` stay identity-based (graph.py), as in TensorFlow 1.x; use
``df.equal`` for elementwise equality.  Eager tensors and variables made eagerly compare
elementwise instead, as TensorFlow 2's (`dataflow.framework.tensor_equality`).
``__array_ufunc__ = None`` makes numpy hand ``ndarray + tensor`` over to the tensor instead of
trying to convert it.
"""

from __future__ import annotations

import numpy as np

from ..framework.graph import Tensor
from ..framework.indexed_slices import IndexedSlices
from ..framework.tensor_conversion import convert_to_tensor
from . import math_ops
from .slice_ops import _getitem

__all__: list[str] = []


# Operands that are converted to tensors: their errors (bad dtype, bad shape) are the user's.
_CONVERTIBLE = (Tensor, np.ndarray, np.generic, int, float, bool, list, tuple)


def _binary(fn, op_name: str, reflected_name: str):
    def forward(self, other):
        try:
            return fn(self, other, name=op_name)
        except (TypeError, ValueError):
            # Give another type that knows how to combine with tensors its turn.
            if hasattr(type(other), reflected_name) and not isinstance(other, _CONVERTIBLE):
                return NotImplemented
            raise

    def reflected(self, other):
        # ``other <op> self``: TensorFlow's operators convert a Python ``other`` to the dtype of
        # ``self`` first (as ``sub/x`` for ``1 - t``); the functions alone would give a Python
        # first operand its own dtype.
        if isinstance(other, Tensor):
            return fn(other, self, name=op_name)
        graph = math_ops.graph_of((self,))
        if graph._eager:  # no scope to open: eager ops are not named uniquely
            return fn(convert_to_tensor(other, dtype=self.dtype, name="x"), self, name=op_name)
        with graph.as_default(), graph.name_scope(op_name) as scope:
            other = convert_to_tensor(other, dtype=self.dtype, name="x")
            return fn(other, self, name=scope)

    return forward, reflected


def _logical(fn, op_name: str, symbol: str):
    def check(*tensors):
        for t in tensors:
            if isinstance(t, Tensor) and not t.dtype.is_bool:
                raise TypeError(
                    f"The operator {symbol} is only defined on bool tensors here, but "
                    f"'{t.name}' has dtype {t.dtype.name}"
                )

    def forward(self, other):
        check(self, other)
        return fn(self, other, name=op_name)

    def reflected(self, other):
        check(self, other)
        return fn(other, self, name=op_name)

    return forward, reflected


def _invert(self):
    if not self.dtype.is_bool:
        raise TypeError(
            f"The operator ~ is only defined on bool tensors here, but '{self.name}' has dtype "
            f"{self.dtype.name}"
        )
    return math_ops.logical_not(self)


_BINARY = [
    ("add", math_ops.add, "add"),
    ("sub", math_ops.subtract, "sub"),
    ("mul", math_ops.multiply, "mul"),
    ("truediv", math_ops.truediv, "truediv"),
    ("floordiv", math_ops.floordiv, "floordiv"),
    ("mod", math_ops.mod, "mod"),
    ("pow", math_ops.pow, "pow"),
    ("matmul", math_ops.matmul, "matmul"),
]
for _method, _fn, _name in _BINARY:
    _forward, _reflected = _binary(_fn, _name, f"__r{_method}__")
    setattr(Tensor, f"__{_method}__", _forward)
    setattr(Tensor, f"__r{_method}__", _reflected)

for _method, _fn, _symbol in (
    ("and", math_ops.logical_and, "&"),
    ("or", math_ops.logical_or, "|"),
    ("xor", math_ops.logical_xor, "^"),
):
    _forward, _reflected = _logical(_fn, _method, _symbol)
    setattr(Tensor, f"__{_method}__", _forward)
    setattr(Tensor, f"__r{_method}__", _reflected)

Tensor.__lt__ = lambda self, other: math_ops.less(self, other)
Tensor.__le__ = lambda self, other: math_ops.less_equal(self, other)
Tensor.__gt__ = lambda self, other: math_ops.greater(self, other)
Tensor.__ge__ = lambda self, other: math_ops.greater_equal(self, other)
Tensor.__neg__ = lambda self: math_ops.negative(self)
Tensor.__abs__ = lambda self: math_ops.abs(self)
IndexedSlices.__neg__ = lambda self: IndexedSlices(
    math_ops.negative(self.values), self.indices, self.dense_shape
)
Tensor.__invert__ = _invert
Tensor.__getitem__ = _getitem
Tensor.__array_ufunc__ = None

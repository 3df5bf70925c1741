"""`EagerTensor`'s operators the short way: straight to the kernel of the op's kept plan.

``x + y`` on eager tensors, in eager mode with no tape recording, looks up the plan that the
op (``Add``, for those dtypes and shapes) was given when it first ran through
`EagerOpRunner.apply`, and calls that plan's kernel: the same OpDef, kernel and inferred
dtype as ``df.add``, with no inference, no `EagerOperation` and no conversion of a tensor
operand.  Whenever that way is not open (no plan yet, a tape records, another graph is being
built or lazy mode records, an operand that is neither an eager tensor nor a plain Python
number, a kernel that fails) the operator is `Tensor`'s own (`dataflow.ops.overloads`), which
makes the plan, records on the tape, builds the graph op, or raises the error that names the
op and the user's line.

A Python number operand becomes a tensor of the other operand's dtype exactly as `Tensor`'s
operators convert it (`convert_to_tensor` with that dtype); the converted tensor is kept, per
(Python type, value, dtype), read-only, so ``x * 2.0`` in a loop converts ``2.0`` once.  Zero
and NaN floats are never kept (``0.0 == -0.0`` would share a key; NaN matches none).
"""

from __future__ import annotations

from typing import Optional

from ..framework.graph import Tensor
from ..framework.tensor_conversion import convert_to_tensor
from .runner import run_planned, runs_eagerly_unrecorded
from .tensor import EagerTensor

_CONVERTED_LIMIT = 1024
_converted: dict = {}


def _operand(other, dtype) -> Optional[EagerTensor]:
    """``other`` as an eager tensor for the short way: itself if it is one, a kept conversion
    to ``dtype`` if it is a plain Python number that converts; else None (the general way
    then converts it, or raises what is wrong with it)."""
    kind = other.__class__
    if kind is EagerTensor:
        return other
    if kind is float:
        if not other or other != other:
            return None
    elif kind is not int and kind is not bool:
        return None
    key = (kind, other, dtype._enum)
    tensor = _converted.get(key)
    if tensor is None:
        if not runs_eagerly_unrecorded():  # a conversion now would build or record a Const
            return None
        try:
            tensor = convert_to_tensor(other, dtype=dtype)
        except (TypeError, ValueError):
            return None
        tensor._value.flags.writeable = False
        if len(_converted) >= _CONVERTED_LIMIT:
            _converted.clear()
        _converted[key] = tensor
    return tensor


def _binary(op_type: str, attrs_key: tuple, name: str, general, reflected: bool = False):
    """An operator running the binary op ``op_type`` (with the attrs ``attrs_key``, as a plan
    key spells them) the short way, named ``name`` as `Tensor`'s operator names it; with
    ``reflected``, the tensor is the right operand.  ``general(self, other)`` is the operator
    when the short way is not open."""

    def operator(self, other):
        other_tensor = other if other.__class__ is EagerTensor else _operand(other, self._dtype)
        if other_tensor is not None:
            x, y = (other_tensor, self) if reflected else (self, other_tensor)
            x_value, y_value = x._value, y._value
            result = run_planned(
                (op_type, attrs_key, x._dtype._enum, x_value.shape, y._dtype._enum, y_value.shape),
                (x_value, y_value),
                name,
            )
            if result is not None:
                return result
        return general(self, other)

    return operator


def _tensor_operator(method: str):
    """`Tensor`'s operator ``method`` (attached by `dataflow.ops.overloads`), looked up when
    called."""
    return lambda self, other: getattr(Tensor, method)(self, other)


# The attrs `math_ops.matmul` gives an operator's product, as a plan key spells them.
_MATMUL_ATTRS = (("transpose_a", False), ("transpose_b", False))
_matmul_of_matrices = _binary("MatMul", _MATMUL_ATTRS, "matmul", _tensor_operator("__matmul__"))
_matmul_of_batches = _binary(
    "BatchMatMulV2", _MATMUL_ATTRS, "matmul", _tensor_operator("__matmul__")
)


def _matmul(self, other):
    """``self @ other``: a ``MatMul`` of two matrices, else a ``BatchMatMulV2``, as
    `math_ops.matmul` chooses; only eager tensors go the short way (a Python number never
    multiplies as a matrix)."""
    if other.__class__ is not EagerTensor:
        return Tensor.__matmul__(self, other)
    if self._value.ndim == 2 and other._value.ndim == 2:
        return _matmul_of_matrices(self, other)
    return _matmul_of_batches(self, other)


def _negative(self):
    value = self._value
    result = run_planned(("Neg", (), self._dtype._enum, value.shape), (value,), "Neg")
    return Tensor.__neg__(self) if result is None else result


def _attach() -> None:
    for method, op_type, name in (
        ("add", "Add", "add"),
        ("sub", "Sub", "sub"),
        ("mul", "Mul", "mul"),
        ("truediv", "RealDiv", "truediv"),  # floats only: no RealDiv plan exists for integers
    ):
        forward, backward = f"__{method}__", f"__r{method}__"
        setattr(EagerTensor, forward, _binary(op_type, (), name, _tensor_operator(forward)))
        setattr(
            EagerTensor,
            backward,
            _binary(op_type, (), name, _tensor_operator(backward), reflected=True),
        )
    EagerTensor.__matmul__ = _matmul
    EagerTensor.__neg__ = _negative
    for method, op_type in (
        ("__lt__", "Less"),
        ("__le__", "LessEqual"),
        ("__gt__", "Greater"),
        ("__ge__", "GreaterEqual"),
    ):
        setattr(EagerTensor, method, _binary(op_type, (), op_type, _tensor_operator(method)))
    # == and != have their own general way (`EagerTensor.__eq__`: None compares plainly, and
    # shapes that do not broadcast give one bool scalar); a kept plan means that the shapes
    # broadcast.  With tensor equality disabled (`dataflow.framework.tensor_equality`) they
    # compare by identity.
    from ..framework.tensor_equality import _elementwise as _tensor_equality

    equal = _binary("Equal", (), "Equal", EagerTensor.__eq__)
    not_equal = _binary("NotEqual", (), "NotEqual", EagerTensor.__ne__)

    def __eq__(self, other):  # noqa: N807
        return equal(self, other) if _tensor_equality[0] else self is other

    def __ne__(self, other):  # noqa: N807
        return not_equal(self, other) if _tensor_equality[0] else self is not other

    EagerTensor.__eq__, EagerTensor.__ne__ = __eq__, __ne__


_attach()

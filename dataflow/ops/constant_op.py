"""Source ops: ``Const``, ``Placeholder`` and ``PlaceholderWithDefault``."""

from __future__ import annotations

import numbers
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import _user_location, get_default_graph
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import register_conversion_op
from ..framework.tensor_shape import TensorShape, as_shape


def _infer_const(op):
    return [(op.attrs["dtype"], op.attrs["value"].shape)]


def _const_kernel(attrs):
    value = attrs["value"]
    return lambda: value


# ``output_is_attr``: the op's one output is the attr "value" (of the attr "dtype"), which lets
# eager mode skip inference and kernel for it.
define_op("Const", _infer_const, _const_kernel, inline=True, extra={"output_is_attr": "value"})


def _element_check(dtype: _dtypes.DType):
    """Which Python leaves ``tf.constant`` accepts for ``dtype``: integers for integer types,
    real numbers for floating types, Python bools for bool."""
    if dtype.is_bool:
        return lambda v: isinstance(v, bool)
    if dtype.is_integer:
        return lambda v: isinstance(v, (numbers.Integral, np.integer))
    if dtype.is_complex:
        return lambda v: isinstance(v, (numbers.Number, np.number)) and not isinstance(v, bool)
    return lambda v: isinstance(v, (numbers.Real, np.integer, np.floating))


def _check_python_elements(value, dtype: _dtypes.DType) -> None:
    accepts = _element_check(dtype)
    if dtype.is_bool or dtype.is_integer:
        allowed_kinds = "b" if dtype.is_bool else "iub"
    else:
        allowed_kinds = "iubfc" if dtype.is_complex else "iubf"

    def walk(v):
        if isinstance(v, (list, tuple)):
            for item in v:
                walk(item)
        elif isinstance(v, np.ndarray):
            if v.dtype.kind not in allowed_kinds:
                raise TypeError(f"Expected {dtype.name}, but got an array of {v.dtype}.")
        elif not accepts(v):
            raise TypeError(f"Expected {dtype.name}, but got {v!r} of type '{type(v).__name__}'.")

    walk(value)


def _as_constant_array(value, dtype: Optional[_dtypes.DType]) -> np.ndarray:
    """Converts ``value`` the way ``tf.constant`` does.

    Without ``dtype``: Python floats become float32 and Python ints int32 (int64 when they do
    not fit); numpy values keep their dtype.  With ``dtype``: numpy values are cast as numpy
    casts (``np.array([1.7]) -> int32`` is ``[1]``, ``300 -> uint8`` wraps to 44), while Python
    values must be of a matching kind (``1.5`` or even ``2.0`` for int32 is a ``TypeError``, as is
    ``1`` for bool); Python ints wrap around like numpy ones.
    """
    if value is None:
        raise ValueError("None values not supported.")
    if dtype is _dtypes.string or (dtype is None and _holds_text(value)):
        return _dtypes.string_array(value)
    if dtype is not None:
        np_dtype = _dtypes.numpy_dtype(dtype)
        if not isinstance(value, (np.ndarray, np.generic)):
            _check_python_elements(value, dtype)
            try:
                value = np.array(value)
            except OverflowError:
                raise TypeError(f"Cannot convert {value!r} to {dtype.name}: out of range") from None
        if value.dtype == object or value.dtype.kind in "USV":
            raise TypeError(f"Expected {dtype.name}, but got {value!r} of type {value.dtype}.")
        with np.errstate(all="ignore"):
            return np.array(value, dtype=np_dtype)
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.array(value)
    else:
        try:
            array = np.array(value)
        except OverflowError:
            raise TypeError(f"Cannot convert {value!r} to a tensor: out of range") from None
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype.kind == "i":
            info = np.iinfo(np.int32)
            fits = array.size == 0 or (array.min() >= info.min and array.max() <= info.max)
            array = array.astype(np.int32 if fits else np.int64)
    if array.dtype == object or array.dtype.kind in "USO":
        raise TypeError(f"Cannot convert {value!r} to a tensor: unsupported type {array.dtype}")
    _dtypes.as_dtype(array.dtype)  # raises for dtypes we do not support (bfloat16, ...)
    return array


def _holds_text(value) -> bool:
    """Whether ``value`` is text (``str``/``bytes``, text arrays, or lists whose first leaf is
    text): such a value makes a string constant when no dtype is given."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SU" or (
            value.dtype == object and value.size > 0 and _holds_text(value.flat[0])
        )
    return isinstance(value, (str, bytes, np.str_, np.bytes_))


def _fit_to_shape(array: np.ndarray, shape: tuple, verify_shape: bool) -> np.ndarray:
    """``tf.compat.v1.constant``'s ``shape``: the values are reshaped, and a value with fewer
    elements than ``shape`` is padded with its last element (zeros, or empty strings, when it
    has none)."""
    if verify_shape and array.shape != shape:
        raise TypeError(f"Expected Tensor's shape: {shape}, got {array.shape}.")
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return np.full(shape, b"" if array.dtype == object else 0, dtype=array.dtype)
    if array.size > size:
        raise ValueError(f"Too many elements provided. Takes at most {size}, but got {array.size}.")
    if array.size == size:
        return array.reshape(shape)
    if array.size == 0:
        return np.full(shape, b"" if array.dtype == object else 0, dtype=array.dtype)
    flat = array.reshape(-1)
    return np.concatenate([flat, np.full(size - flat.size, flat[-1], dtype=array.dtype)]).reshape(
        shape
    )


# The read-only arrays made of scalars (Python numbers, numpy scalars), by (type, value, dtype),
# so that code converting the same numbers over and over (``x * 2.0`` in an eager loop) checks
# and converts each once.  Zeros and NaNs are left out: 0.0 and -0.0 are equal keys for two
# different arrays, and a NaN is equal to no key.
_scalar_arrays: dict = {}
_SCALAR_ARRAYS_LIMIT = 1024


def _scalar_key(value, dtype):
    if (value.__class__ in (float, int, bool) or isinstance(value, np.number)) and value:
        if value == value:
            return (value.__class__, value, dtype)
    return None


def constant(value, dtype=None, shape=None, name: str = "Const", verify_shape: bool = False):
    """A tensor whose value is fixed in the graph.  Mirrors ``tf.compat.v1.constant``."""
    dtype = None if dtype is None else _dtypes.as_dtype(dtype)
    key = _scalar_key(value, dtype) if shape is None else None
    array = None if key is None else _scalar_arrays.get(key)
    if array is None:
        try:
            array = _as_constant_array(value, dtype)
            if shape is not None:
                array = _fit_to_shape(array, tuple(as_shape(shape).as_list()), verify_shape)
        except (TypeError, ValueError) as e:
            raise type(e)(f"Const op '{name}' at {_user_location()}: {e}") from None
        array.flags.writeable = False
        if key is not None:
            if len(_scalar_arrays) >= _SCALAR_ARRAYS_LIMIT:
                _scalar_arrays.clear()
            _scalar_arrays[key] = array
    attrs = {"value": array, "dtype": _dtypes.as_dtype(array.dtype)}
    return apply_op("Const", (), attrs, name=name, graph=get_default_graph()).outputs[0]


def _infer_placeholder(op):
    return [(op.attrs["dtype"], op.attrs["shape"])]


def _placeholder_kernel(attrs):
    def unfed_placeholder():
        raise InvalidArgumentError(
            None,
            None,
            "You must feed a value for placeholder tensor with dtype "
            f"{attrs['dtype'].name} and shape {attrs['shape']}",
        )

    return unfed_placeholder


define_op("Placeholder", _infer_placeholder, _placeholder_kernel, inline=True, feed_only=True)


def placeholder(dtype, shape=None, name: Optional[str] = None):
    """A tensor whose value must be fed with ``feed_dict`` when a run needs it."""
    attrs = {"dtype": _dtypes.as_dtype(dtype), "shape": TensorShape(shape)}
    return apply_op(
        "Placeholder", (), attrs, name=name or "Placeholder", graph=get_default_graph()
    ).outputs[0]


def _infer_placeholder_with_default(op):
    (default,) = op.inputs
    shape = op.attrs["shape"]
    if not shape.is_compatible_with(default.shape):
        raise ValueError(f"default value of shape {default.shape} does not match shape {shape}")
    return [(default.dtype, shape)]


define_op(
    "PlaceholderWithDefault",
    _infer_placeholder_with_default,
    lambda attrs: lambda default: default,
    inline=True,
    # Its value may be fed: constant folding leaves it alone, as TensorFlow's does.
    extra={"feedable": True},
)


def placeholder_with_default(input, shape, name: Optional[str] = None):  # noqa: A002 - TF name
    """A placeholder that passes ``input`` through when it is not fed."""
    from ..framework.tensor_conversion import convert_to_tensor

    default = convert_to_tensor(input)
    return apply_op(
        "PlaceholderWithDefault",
        [default],
        {"shape": TensorShape(shape)},
        name=name or "PlaceholderWithDefault",
    ).outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402

NotDifferentiable("Const")
NotDifferentiable("Placeholder")


@RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return grad


# Python and numpy values become tensors through `constant` (`graph.convert_to_tensor`).
register_conversion_op("constant", constant)

"""Source ops: ``Const``, ``Placeholder`` and ``PlaceholderWithDefault``."""

from __future__ import annotations

from typing import Optional

import numpy as np

from .. import dtypes as _dtypes
from ..errors import InvalidArgumentError
from ..graph import get_default_graph
from ..op_registry import apply_op, define_op
from ..tensor_shape import TensorShape, as_shape


def _infer_const(op):
    return [(op.attrs["dtype"], op.attrs["value"].shape)]


def _const_kernel(attrs):
    value = attrs["value"]
    return lambda: value


define_op("Const", _infer_const, _const_kernel, inline=True)


def _as_constant_array(value, dtype: Optional[_dtypes.DType]) -> np.ndarray:
    """Converts ``value`` the way ``tf.constant`` does: Python floats become float32 and Python
    ints int32 (int64 when they do not fit), numpy values keep their dtype."""
    if dtype is not None:
        np_dtype = _dtypes.numpy_dtype(dtype)
        array = np.asarray(value)
        if array.dtype == object:
            raise TypeError(f"Cannot convert {value!r} to a constant of dtype {dtype.name}")
        if (
            np_dtype.kind in "iub"
            and array.dtype.kind == "f"
            and not np.array_equal(array, np.trunc(array))
        ):
            raise TypeError(f"Cannot convert {value!r} to {dtype.name} without losing its fraction")
        if np_dtype.kind in "iu" and array.size and array.dtype.kind in "iu":
            info = np.iinfo(np_dtype)
            if array.min() < info.min or array.max() > info.max:
                raise ValueError(f"{value!r} does not fit in {dtype.name}")
        return np.array(array, dtype=np_dtype)
    if isinstance(value, (np.ndarray, np.generic)):
        array = np.array(value)
    else:
        array = np.array(value)
        if array.dtype == np.float64:
            array = array.astype(np.float32)
        elif array.dtype.kind == "i":
            info = np.iinfo(np.int32)
            fits = array.size == 0 or (array.min() >= info.min and array.max() <= info.max)
            array = array.astype(np.int32 if fits else np.int64)
    if array.dtype == object or array.dtype.kind in "USO":
        raise TypeError(f"Cannot convert {value!r} to a tensor: unsupported type {array.dtype}")
    _dtypes.as_dtype(array.dtype)  # raises for dtypes we do not support (complex, ...)
    return array


def constant(value, dtype=None, shape=None, name: str = "Const", verify_shape: bool = False):
    """A tensor whose value is fixed in the graph.  Mirrors ``tf.constant``."""
    dtype = None if dtype is None else _dtypes.as_dtype(dtype)
    array = _as_constant_array(value, dtype)
    if shape is not None:
        shape = tuple(as_shape(shape).as_list())
        if array.shape != shape:
            if verify_shape:
                raise TypeError(f"Expected shape {shape} for constant, got {array.shape}")
            if array.size == 1:
                array = np.full(shape, array.reshape(()), dtype=array.dtype)
            elif array.size == int(np.prod(shape)):
                array = array.reshape(shape)
            else:
                raise ValueError(
                    f"Cannot make a constant of shape {shape} from {array.size} elements"
                )
    array.flags.writeable = False
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


define_op("Placeholder", _infer_placeholder, _placeholder_kernel, inline=True)


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
)


def placeholder_with_default(input, shape, name: Optional[str] = None):  # noqa: A002 - TF name
    """A placeholder that passes ``input`` through when it is not fed."""
    from ..graph import convert_to_tensor

    default = convert_to_tensor(input)
    return apply_op(
        "PlaceholderWithDefault",
        [default],
        {"shape": TensorShape(shape)},
        name=name or "PlaceholderWithDefault",
    ).outputs[0]


# -- gradients -------------------------------------------------------------------------------------
from ..gradients import NotDifferentiable, RegisterGradient  # noqa: E402

NotDifferentiable("Const")
NotDifferentiable("Placeholder")


@RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return grad

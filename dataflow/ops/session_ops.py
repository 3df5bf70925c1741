"""Session handles: keeping a tensor's value in the Session between runs (``tf.compat.v1``'s
``get_session_handle``, ``get_session_tensor``, ``delete_session_tensor``).

``get_session_handle(data)`` (``GetSessionHandle``) stores the value of ``data`` in the
Session's tensor store when it runs and outputs its handle, a string
``"<op name>;<number>;<device>"``; fetched, the handle is a `TensorHandle` (a ``bytes`` of
that string with ``handle``, ``eval()`` and ``delete()``).  ``get_session_tensor(handle,
dtype)`` gives a placeholder to feed a handle into and the tensor whose value is the stored
one (``GetSessionTensor``); ``delete_session_tensor(handle)`` gives a placeholder and the op
that drops the stored value (``DeleteSessionTensor``).  A handle not in the store is an
``InvalidArgumentError``, as in TensorFlow.
"""

from __future__ import annotations

import threading
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InternalError, InvalidArgumentError
from ..framework.graph import Tensor, device, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = ["TensorHandle", "delete_session_tensor", "get_session_handle", "get_session_tensor"]

_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_STORE = "__session_tensor_store__"


class _Store:
    """The Session's stored tensors, by handle."""

    def __init__(self):
        self.values: dict = {}
        self.count = 0
        self.lock = threading.Lock()

    def cancel(self) -> None:
        """Nothing waits on the store."""

    def put(self, name: str, value) -> str:
        with self.lock:
            handle = f"{name};{self.count};{_DEVICE}"
            self.count += 1
            self.values[handle] = value
            return handle

    def get(self, handle: str, delete: bool = False):
        with self.lock:
            if handle not in self.values:
                raise InvalidArgumentError(
                    None, None, f"The tensor with handle '{handle}' is not in the session store."
                )
            return self.values.pop(handle) if delete else self.values[handle]


class TensorHandle(bytes):
    """A handle fetched from a ``get_session_handle`` op: the handle string (as bytes, and as
    text in ``handle``), which ``eval()`` reads and ``delete()`` drops in the Session that
    stored it."""

    def __new__(cls, handle: str, dtype, session):
        made = super().__new__(cls, handle.encode())
        made._dtype = dtype
        made._session = session
        return made

    @property
    def handle(self) -> str:
        return self.decode()

    def eval(self):
        """The stored value."""
        holder, tensor = get_session_tensor(self.handle, self._dtype)
        return self._session.run(tensor, feed_dict={holder: self.handle})

    def delete(self) -> None:
        """Drops the stored value from the Session."""
        holder, deleter = delete_session_tensor(self.handle)
        self._session.run(deleter, feed_dict={holder: self.handle})

    def __reduce__(self):
        return bytes, (bytes(self),)


def _store_of(context) -> _Store:
    return context.resource(_STORE, _Store)


def _text(value) -> str:
    value = np.asarray(value).item()
    return value.decode() if isinstance(value, bytes) else str(value)


def _get_handle_kernel(attrs):
    name, dtype = attrs["handle_name"], attrs["dtype"]

    def get_handle(context, value):
        handle = _store_of(context).put(name, np.array(value, copy=True))
        return np.array(TensorHandle(handle, dtype, context.session), dtype=object)

    return get_handle


def _get_tensor_kernel(attrs):
    dtype = attrs["dtype"]

    def get_tensor(context, handle):
        value = _store_of(context).get(_text(handle))
        if value.dtype != _dtypes.numpy_dtype(dtype):
            raise InternalError(
                None,
                None,
                f"Output 0 of type {_dtypes.as_dtype(value.dtype).name} does not match declared "
                f"output type {dtype.name}",
            )
        return value

    return get_tensor


def _delete_kernel(attrs):
    def delete(context, handle):
        _store_of(context).get(_text(handle), delete=True)
        return ()

    return delete


define_op(
    "GetSessionHandle",
    lambda op: [(_dtypes.string, TensorShape([]))],
    _get_handle_kernel,
    stateful=True,
    wants_context=True,
)
define_op(
    "GetSessionTensor",
    lambda op: [(op.attrs["dtype"], TensorShape(None))],
    _get_tensor_kernel,
    stateful=True,
    wants_context=True,
)
define_op(
    "DeleteSessionTensor",
    lambda op: [],
    _delete_kernel,
    stateful=True,
    wants_context=True,
)


def get_session_handle(data, name: Optional[str] = None) -> Tensor:
    """The op that stores the value of ``data`` in the Session and outputs its handle."""
    data = convert_to_tensor(data, name="data")
    with name_scope(name or "GetSessionHandle") as scope:
        op_name = scope[:-1]
        attrs = {"dtype": data.dtype, "handle_name": op_name}
        return apply_op("GetSessionHandle", [data], attrs, name=op_name + "/").outputs[0]


def get_session_tensor(handle, dtype, name: Optional[str] = None):
    """``(holder, tensor)``: a string placeholder to feed a handle into, and the stored value
    of that handle (of ``dtype``)."""
    from .constant_op import placeholder

    with device(_device_of(handle)):  # the handle itself is fed into the holder
        holder = placeholder(_dtypes.string)
        attrs = {"dtype": _dtypes.as_dtype(dtype)}
        tensor = apply_op("GetSessionTensor", [holder], attrs, name or "GetSessionTensor")
    return holder, tensor.outputs[0]


def delete_session_tensor(handle, name: Optional[str] = None):
    """``(holder, deleter)``: a string placeholder to feed a handle into, and the op that
    drops that handle's value from the Session."""
    from .constant_op import placeholder

    with device(_device_of(handle)):
        holder = placeholder(_dtypes.string)
        deleter = apply_op("DeleteSessionTensor", [holder], {}, name or "DeleteSessionTensor")
    return holder, deleter


def _device_of(handle) -> str:
    """The device a handle names (its last part), where its ops are placed, as in TensorFlow."""
    text = handle.decode() if isinstance(handle, bytes) else str(handle)
    parts = text.split(";")
    if len(parts) != 3:
        raise ValueError(f"{text!r} is not a session tensor handle ('<name>;<number>;<device>')")
    return parts[2]


from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in ("GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor"):
    NotDifferentiable(_type)

"""`EagerTensor`: a `Tensor` that holds its value, the result of an op run eagerly."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import graph as _graph
from ..framework.tensor_shape import TensorShape, as_shape

# How many times code has looked at an eager tensor's value through ``tensor.op`` (as shape
# inference does with a constant argument): the eager runner keeps the inference of an op only
# if it did not (`EagerOpRunner`).  Only ever compared before and after, so races only lose a
# cache entry.
value_reads = 0


class EagerTensor(_graph.Tensor):
    """The value of an op run eagerly: a numpy array with the tensor's dtype and operators.

    It subclasses `Tensor`, so ``isinstance`` checks and the operator overloads work as on a
    graph tensor; each operator runs its op at once.  It belongs to no graph and keeps no op:
    ``graph`` is the default graph of the moment (eager mode's, or the graph a tracer is
    building, which then captures the value), and ``op`` reads as a ``Const`` of the value, so
    code that folds known values sees it as known.  Scalars convert to Python numbers, so
    Python's own ``if`` and ``while`` work on them.
    """

    __slots__ = ("_value", "_producer")
    _is_eager = True

    def __init__(self, value, dtype: _dtypes.DType, producer: str = "Const", index: int = 0):
        self._op = None
        self._value_index = index
        self._dtype = dtype
        self._shape = None  # made from the value when first asked for
        self._value = value
        self._producer = producer

    # -- what a Tensor has ----------------------------------------------------------------------
    @property
    def shape(self) -> TensorShape:
        shape = self._shape
        if shape is None:
            shape = self._shape = TensorShape(self._value.shape)
        return shape

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape) -> None:
        """Checks that the value has a shape compatible with ``shape`` (the value's shape is
        already fully known)."""
        if not as_shape(shape).is_compatible_with(self.shape):
            raise ValueError(
                f"Tensor's shape {self.shape} is not compatible with supplied shape "
                f"{as_shape(shape)}"
            )

    @property
    def ndim(self) -> int:
        return self._value.ndim

    @property
    def graph(self) -> _graph.Graph:
        return _graph.get_default_graph()

    @property
    def op(self) -> _ConstView:
        global value_reads
        value_reads += 1
        return _ConstView(self)

    @property
    def name(self) -> str:
        return f"{self._producer}:{self._value_index}"

    @property
    def device(self) -> str:
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def consumers(self) -> list:
        return []

    def eval(self, feed_dict=None, session=None):
        raise NotImplementedError(
            "eval is not supported when eager execution is enabled, is .numpy() what you're "
            "looking for?"
        )

    # -- the value ------------------------------------------------------------------------------
    def numpy(self):
        """The value: a numpy array, or a numpy scalar for a 0-d tensor, as TensorFlow's."""
        value = self._value
        return value[()] if value.ndim == 0 else value

    def __array__(self, dtype=None, copy=None):
        if dtype is None:
            return self._value
        return self._value.astype(dtype, copy=False)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __index__(self) -> int:
        if not (self._dtype.is_integer or self._dtype.is_bool) or self._value.ndim:
            raise TypeError(
                f"Only integer scalar tensors can be used as an index, got a {self._dtype.name} "
                f"tensor of shape {self.shape}"
            )
        return int(self._value)

    def __len__(self) -> int:
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(self._value.shape[0]):
            yield self[i]

    def __repr__(self) -> str:
        shape, dtype = tuple(self._value.shape), self._dtype.name
        value = self._value
        shown = str(value) if value.ndim == 0 else repr(value)
        return f"<df.Tensor: shape={shape}, dtype={dtype}, numpy={shown}>"

    def __str__(self) -> str:
        shape, dtype = tuple(self._value.shape), self._dtype.name
        # ``!s``: a 0-d array formatted as such would show its value as a Python float
        # (0.10000000149011612 for a float32 0.1); TensorFlow shows numpy's 0.1.
        return f"df.Tensor({self._value!s}, shape={shape}, dtype={dtype})"

    # -- equality: by value, as TensorFlow 2's eager tensors -----------------------------------
    # A graph tensor compares by identity (TF1).  An eager tensor holds a value, so ``x == 0``
    # must mean the elementwise comparison, or Python's own ``if x == 0:`` would silently test
    # identity.  Such a tensor cannot also hash by value, so it does not hash: key on ``ref()``.
    def __hash__(self):
        if not _tensor_equality[0]:
            return id(self)
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def __eq__(self, other):
        if not _tensor_equality[0]:
            return self is other
        return _compare(self, other, "equal")

    def __ne__(self, other):
        if not _tensor_equality[0]:
            return self is not other
        return _compare(self, other, "not_equal")

    def __copy__(self) -> EagerTensor:
        return self

    def __deepcopy__(self, memo) -> EagerTensor:
        return self

    def __reduce__(self):
        return (_rebuild, (self.numpy(), self._dtype.name))


# Whether eager tensors compare elementwise and are unhashable (TensorFlow 2's behaviour, the
# default) or compare by identity and hash by id (TF1's); `enable_tensor_equality` and
# `disable_tensor_equality` switch it.  Graph tensors always compare by identity, as TF1's
# graph-mode tensors do with either setting.
_tensor_equality = [True]


def enable_tensor_equality() -> None:
    """Eager tensors compare elementwise with ``==`` and are unhashable (``tensor.ref()`` is
    the key to use), as in TensorFlow 2."""
    _tensor_equality[0] = True


def disable_tensor_equality() -> None:
    """Eager tensors compare by identity with ``==`` and hash by identity, as in TF1."""
    _tensor_equality[0] = False


def _compare(tensor: EagerTensor, other, which: str):
    """``tensor == other`` (or ``!=``) elementwise; ``None`` and values of shapes that do not
    broadcast give a plain answer, as TensorFlow's ``incompatible_shape_error=False``."""
    from ..ops import math_ops

    if other is None:
        return which == "not_equal"
    if isinstance(other, EagerTensor):
        other_shape = other._value.shape
    elif isinstance(other, _graph.Tensor):  # a graph tensor: the op decides
        other_shape = ()
    else:
        other_shape = np.shape(other)
    try:
        np.broadcast_shapes(tensor._value.shape, other_shape)
    except ValueError:
        return which == "not_equal"
    return getattr(math_ops, which)(tensor, other)


def _rebuild(value, dtype_name: str) -> EagerTensor:
    return EagerTensor(np.asarray(value), _dtypes.as_dtype(dtype_name))


class _ConstView:
    """What ``EagerTensor.op`` shows: a ``Const`` op of the tensor's value, with no inputs and
    no graph (it is not in any)."""

    __slots__ = ("_tensor",)
    type = "Const"
    inputs = ()
    control_inputs: list = []
    graph: Optional[_graph.Graph] = None
    device = ""
    location = None

    def __init__(self, tensor: EagerTensor):
        self._tensor = tensor

    @property
    def name(self) -> str:
        return self._tensor._producer

    @property
    def attrs(self) -> dict:
        return {"value": self._tensor._value, "dtype": self._tensor._dtype}

    @property
    def outputs(self) -> list:
        return [self._tensor]

    def get_attr(self, name: str):
        return self.attrs[name]

    def __repr__(self) -> str:
        return f"<eager value of {self._tensor._producer}>"

"""TensorArray: TensorFlow 1.x's array of tensors, written and read one element at a time.

``df.TensorArray`` is TF1's graph-mode (v1) TensorArray.  It is two tensors::

    handle, flow = TensorArrayV3(size, dtype=..., element_shape=..., dynamic_size=...,
                                 clear_after_read=..., identical_element_shapes=...)
    flow_1 = TensorArrayWriteV3(handle, index, value, flow)       # ta.write(index, value)
    value  = TensorArrayReadV3(handle, index, flow_1)              # ta.write(...).read(index)

``handle`` names the array; ``flow`` is a float scalar whose only purpose is ordering: each
write takes the flow it was built on and returns a new one, each read or gather takes a flow,
so a read runs after the writes it was built after.  A `TensorArray` object is immutable:
``write`` returns a new object that shares the handle and carries the new flow.  Passed through
`while_loop` or returned from `cond`, a TensorArray travels as its flow (the handle is captured
like any outside tensor), as TF1's ``_convert_tensorarray_to_flow`` does.

Where the array lives.  The value ``TensorArrayV3`` outputs as the handle *is* the storage: a
fresh `TensorArrayStorage` made by that kernel call in that run (as ``StackV2`` does for a
stack, ``dataflow.ops.stack_ops``).  Nothing is kept in the
Graph or the Session, so two concurrent runs of one Session never share an array, an array
created in a loop body is a new one in each iteration, as in TF1, and a failed run drops its
arrays with its other values.  Several iterations of a loop may write to one array at once on
the inter-op pool: each storage has a lock.

Gradients follow TF1's scheme.  ``TensorArrayGradV3(handle, flow, source=...)`` returns the
*gradient array* of the forward array for one ``gradients`` call (``source`` is that call's
name scope, "gradients" or "gradients_1"): made on first use, with the forward array's size and
element shapes, it adds up multiple writes to one index and reads an index never written as
zeros.  The gradient of a write is a read of the gradient array at that index, the gradient of
a read a write, and so for gather/scatter and concat/split; the gradient that flows back along
the flows is the gradient array's flow, so the backward reads run after the backward writes,
including through the backward loop of a `while_loop`.

Errors keep TF1's meaning and wording ("Could not write to TensorArray index 2 because it has
already been written to.", reading an unwritten element of unknown shape, writing past the size
of a fixed-size array, a second read of an element with ``clear_after_read``, an element shape
that does not fit); at run time they are `errors.InvalidArgumentError` naming the op and the
user's line, at build time ``ValueError``/``TypeError``.  Where TF1 only logs an error (a
value of the wrong dtype), this raises ``TypeError``.
"""

from __future__ import annotations

import numbers
import threading
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, UnimplementedError
from ..framework.graph import Tensor, get_default_graph, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape, unknown_shape
from ..framework.type_spec import TypeSpec, _hashable, register_spec_of
from ..framework.type_spec import _shape_text as _spec_shape_text
from .array_ops import known_int_value, shape
from .array_ops import range as _range
from .math_ops import cast

__all__ = ["TensorArray", "TensorArrayStorage"]

_HANDLE_SHAPE = TensorShape([2])  # TF1's handle is a string pair; here it holds the storage


def _shape_text(shape) -> str:
    """A shape as TF1's kernels print it: ``[2,3]``, ``[?,2]``, ``<unknown>``."""
    if isinstance(shape, TensorShape):
        if shape.dims is None:
            return "<unknown>"
        return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"
    return "[" + ",".join(str(d) for d in shape) + "]"


def _merged(a: TensorShape, b: TensorShape) -> TensorShape:
    """What ``a`` and ``b`` together say of a shape (``a`` alone if they disagree)."""
    return a.merge_with(b) if a.is_compatible_with(b) else a


class TensorArrayStorage:
    """The elements of one array in one run (the value of a TensorArray handle).

    Per index: the value (None once cleared or never written), whether it was written, read,
    cleared, and its shape, which is kept after a clearing read (a gradient array takes the
    shapes of the forward array's elements from it).  ``element_shape`` is the shape every
    element must fit; with ``identical_element_shapes`` the first write makes it exact.
    """

    def __init__(
        self,
        dtype: _dtypes.DType,
        size: int,
        element_shape: TensorShape,
        dynamic_size: bool,
        clear_after_read: bool,
        identical_element_shapes: bool,
        name: str = "",
        aggregate_writes: bool = False,
    ):
        self.dtype = dtype
        self.name = name
        self.element_shape = element_shape
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.identical_element_shapes = identical_element_shapes
        self.aggregate_writes = aggregate_writes  # a gradient array: writes to an index add up
        self.values: list = [None] * size
        self.written: list[bool] = [False] * size
        self.read: list[bool] = [False] * size
        self.cleared: list[bool] = [False] * size
        self.shapes: list = [None] * size
        self.closed = False
        self.gradients: dict[str, TensorArrayStorage] = {}
        self.lock = threading.Lock()

    def __repr__(self) -> str:
        written = sum(self.written)
        return (
            f"<TensorArrayStorage{' ' + self.name if self.name else ''} of {self.dtype.name}, "
            f"size {len(self.values)}, {written} written>"
        )

    @property
    def size(self) -> int:
        return len(self.values)

    # -- errors ------------------------------------------------------------------------------------
    def _error(self, message: str) -> InvalidArgumentError:
        label = f"TensorArray {self.name}: " if self.name else ""
        return InvalidArgumentError(None, None, label + message)

    def _check_open(self) -> None:
        if self.closed:
            raise self._error("has already been closed.")

    # -- element access (callers hold the lock) ----------------------------------------------------
    def _grow_to(self, size: int) -> None:
        extra = size - len(self.values)
        if extra > 0:
            self.values.extend([None] * extra)
            self.written.extend([False] * extra)
            self.read.extend([False] * extra)
            self.cleared.extend([False] * extra)
            self.shapes.extend([None] * extra)

    def _write(self, index: int, value: np.ndarray) -> None:
        if index < 0 or (index >= self.size and not self.dynamic_size):
            raise self._error(
                f"Tried to write to index {index} but array is not resizeable and size is: "
                f"{self.size}"
            )
        self._grow_to(index + 1)
        if not self.element_shape.is_compatible_with(TensorShape(value.shape)):
            raise self._error(
                f"Could not write to TensorArray index {index} because the value shape is "
                f"{_shape_text(value.shape)} which is incompatible with the TensorArray's "
                f"inferred element shape: {_shape_text(self.element_shape)} (consider setting "
                "infer_shape=False)."
            )
        if self.read[index]:
            raise self._error(
                f"Could not write to TensorArray index {index} because it has already been read."
            )
        if self.written[index]:
            if not self.aggregate_writes:
                raise self._error(
                    f"Could not write to TensorArray index {index} because it has already been "
                    "written to."
                )
            existing = self.values[index]
            if existing.shape != value.shape:
                raise self._error(
                    f"Could not aggregate to TensorArray index {index} because the existing "
                    f"shape is {_shape_text(existing.shape)} but the new input shape is "
                    f"{_shape_text(value.shape)}."
                )
            value = existing + value
        if self.identical_element_shapes:
            self.element_shape = TensorShape(value.shape)
        self.values[index] = value
        self.written[index] = True
        self.shapes[index] = value.shape

    def _read(self, index: int) -> np.ndarray:
        if index < 0 or index >= self.size:
            raise self._error(f"Tried to read from index {index} but array size is: {self.size}")
        if self.cleared[index]:
            raise self._error(
                f"Could not read index {index} twice because it was cleared after a previous "
                "read (perhaps try setting clear_after_read = false?)."
            )
        if self.written[index]:
            value = self.values[index]
        else:
            value = self._zeros(index)
        self.read[index] = True
        if self.clear_after_read:
            self.values[index] = None
            self.cleared[index] = True
        return value

    def _zeros(self, index: int) -> np.ndarray:
        """What reading an element never written gives: zeros of its shape when known (TF1
        returns them so that a gradient array need not be written everywhere), else an error."""
        known = self.shapes[index]
        if known is None and self.element_shape.is_fully_defined():
            known = tuple(self.element_shape.as_list())
        if known is None:
            raise self._error(
                f"Could not read from TensorArray index {index}.  Furthermore, the element shape "
                f"is not fully defined: {_shape_text(self.element_shape)}.  It is possible you "
                "are working with a resizeable TensorArray and stop_gradients is not allowing "
                "the gradients to be written.  If you set the full element_shape property on "
                "the forward TensorArray, the proper all-zeros tensor will be returned instead "
                "of incurring this error."
            )
        return np.zeros(known, self.dtype.as_numpy_dtype)

    def _empty(self, shape: TensorShape) -> np.ndarray:
        """The stack (or concatenation) of no element, whose elements would have ``shape``:
        only possible when that shape is fully known."""
        if not shape.is_fully_defined():
            raise UnimplementedError(
                None,
                None,
                f"TensorArray has size zero, but element shape {_shape_text(shape)} is not fully "
                "defined. Currently only static shapes are supported when packing zero-size "
                "TensorArrays.",
            )
        return np.zeros([0] + shape.as_list(), self.dtype.as_numpy_dtype)

    # -- the kernels' operations -------------------------------------------------------------------
    def write(self, index: int, value: np.ndarray) -> None:
        with self.lock:
            self._check_open()
            self._write(index, value)

    def read_at(self, index: int) -> np.ndarray:
        with self.lock:
            self._check_open()
            return self._read(index)

    def gather(self, indices: np.ndarray, element_shape: TensorShape) -> np.ndarray:
        with self.lock:
            self._check_open()
            values = [self._read(int(i)) for i in indices.reshape(-1)]
        if not values:
            return self._empty(_merged(self.element_shape, element_shape))
        first = values[0].shape
        for i, v in zip(indices.reshape(-1), values):
            if v.shape != first:
                raise self._error(
                    f"TensorArray has inconsistent shapes.  Index {int(indices.reshape(-1)[0])} "
                    f"has shape: {_shape_text(first)} but index {int(i)} has shape: "
                    f"{_shape_text(v.shape)}"
                )
        return np.stack(values)

    def scatter(self, indices: np.ndarray, value: np.ndarray) -> None:
        indices = indices.reshape(-1)
        if value.ndim == 0 or value.shape[0] != len(indices):
            raise self._error(
                f"Expected len(indices) == values.shape[0], but saw: {len(indices)} vs. "
                f"{value.shape[0] if value.ndim else 'a scalar'}"
            )
        with self.lock:
            self._check_open()
            if len(indices) and not self.dynamic_size and int(indices.max()) >= self.size:
                raise self._error(
                    f"Max scatter index must be < array size ({int(indices.max())} vs. {self.size})"
                )
            for i, index in enumerate(indices):
                self._write(int(index), value[i])

    def concat(self, element_shape_except0: TensorShape) -> tuple[np.ndarray, np.ndarray]:
        with self.lock:
            self._check_open()
            values = [self._read(i) for i in range(self.size)]
        if not values:
            rest = self.element_shape[1:] if self.element_shape.ndims else unknown_shape()
            return self._empty(_merged(rest, element_shape_except0)), np.zeros([0], np.int64)
        for i, v in enumerate(values):
            if v.ndim == 0:
                raise self._error(
                    f"Concat saw a scalar shape at index {i} but requires at least vectors.  "
                    "Did you mean to call pack?"
                )
            if v.shape[1:] != values[0].shape[1:]:
                raise self._error(
                    f"Concat saw mismatched shapes: index 0 has shape "
                    f"{_shape_text(values[0].shape)} but index {i} has shape "
                    f"{_shape_text(v.shape)}; all but the first "
                    "dimension must match."
                )
        lengths = np.array([v.shape[0] for v in values], np.int64)
        return np.concatenate(values), lengths

    def split(self, value: np.ndarray, lengths: np.ndarray) -> None:
        if lengths.ndim != 1:
            raise self._error(
                f"Expected lengths to be a vector, received shape: {_shape_text(lengths.shape)}"
            )
        if value.ndim == 0:
            raise self._error("Expected value to be at least a vector, but received a scalar")
        if int(lengths.sum()) != value.shape[0] or (lengths < 0).any():
            raise self._error(
                f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is "
                f"{int(lengths.sum())} and value's shape is: {_shape_text(value.shape)}"
            )
        with self.lock:
            self._check_open()
            if len(lengths) != self.size and not (self.dynamic_size and len(lengths) > self.size):
                raise self._error(
                    f"TensorArray's size is not equal to the size of lengths ({len(lengths)} vs. "
                    f"{self.size}), and the TensorArray is not marked as dynamically resizeable"
                )
            start = 0
            for i, length in enumerate(lengths):
                self._write(i, value[start : start + int(length)])
                start += int(length)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.values = [None] * self.size

    def gradient(self, source: str) -> TensorArrayStorage:
        """The gradient array of this array for the gradient ``source`` (made on first use)."""
        with self.lock:
            self._check_open()
            grad = self.gradients.get(source)
            if grad is None:
                grad = TensorArrayStorage(
                    self.dtype,
                    self.size,
                    self.element_shape,
                    dynamic_size=False,
                    clear_after_read=True,
                    identical_element_shapes=self.identical_element_shapes,
                    name=f"{self.name}@{source}" if self.name else source,
                    aggregate_writes=True,
                )
                grad.shapes = list(self.shapes)
                self.gradients[source] = grad
            return grad


# -- ops -------------------------------------------------------------------------------------------
def _as_index(value) -> int:
    if not isinstance(value, numbers.Integral):
        value = value.item()
    return int(value)


def _check_handle(op, position: int = 0) -> None:
    handle = op.inputs[position]
    if handle.dtype is not _dtypes.resource:
        raise TypeError(
            f"input {position} must be a TensorArray handle (resource), got {handle.dtype.name}"
        )


def _check_flow(op, position: int) -> None:
    flow = op.inputs[position]
    if flow.dtype is not _dtypes.float32:
        raise TypeError(f"input {position} (flow_in) must be float32, got {flow.dtype.name}")


def _check_integer(op, position: int, what: str, rank: int) -> None:
    t = op.inputs[position]
    if not t.dtype.is_integer or t.shape.ndims not in (None, rank):
        kind = "a scalar" if rank == 0 else "a vector"
        raise TypeError(
            f"input {position} ({what}) must be {kind} of integers, got {t.dtype.name} of "
            f"shape {t.shape}"
        )


def _check_inputs(op, count: int, names: str) -> None:
    if len(op.inputs) != count:
        raise ValueError(f"expects ({names}), got {len(op.inputs)} inputs")


def _check_value_dtype(op, position: int) -> None:
    value, dtype = op.inputs[position], op.attrs.get("T")
    if not isinstance(dtype, _dtypes.DType):
        raise TypeError(f"attr T must be a DType, got {dtype!r}")
    if value.dtype is not dtype:
        raise TypeError(f"the value is {value.dtype.name} but the TensorArray holds {dtype.name}")


def _attr_dtype(op) -> _dtypes.DType:
    dtype = op.attrs.get("dtype")
    if not isinstance(dtype, _dtypes.DType):
        raise TypeError(f"attr dtype must be a DType, got {dtype!r}")
    return dtype


def _attr_shape(op, name: str) -> TensorShape:
    value = op.attrs.get(name)
    if not isinstance(value, TensorShape):
        raise TypeError(f"attr {name} must be a TensorShape, got {value!r}")
    return value


def _infer_tensor_array(op):
    _check_inputs(op, 1, "size")
    _check_integer(op, 0, "size", 0)
    dtype = _attr_dtype(op)
    if dtype is _dtypes.resource:
        raise TypeError("a TensorArray cannot hold resource handles")
    _attr_shape(op, "element_shape")
    for flag in ("dynamic_size", "clear_after_read", "identical_element_shapes"):
        if not isinstance(op.attrs.get(flag), bool):
            raise TypeError(f"attr {flag} must be a bool, got {op.attrs.get(flag)!r}")
    if not isinstance(op.attrs.get("tensor_array_name"), str):
        raise TypeError("attr tensor_array_name must be a string")
    return [(_dtypes.resource, _HANDLE_SHAPE), (_dtypes.float32, TensorShape([]))]


_FLOW = np.float32(0.0)


def _tensor_array_kernel(attrs):
    def create(size):
        size = _as_index(size)
        if size < 0:
            raise InvalidArgumentError(None, None, f"Size should be >= 0, but got: {size}")
        storage = TensorArrayStorage(
            attrs["dtype"],
            size,
            attrs["element_shape"],
            attrs["dynamic_size"],
            attrs["clear_after_read"],
            attrs["identical_element_shapes"],
            attrs["tensor_array_name"],
        )
        return storage, _FLOW

    return create


def _infer_write(op):
    _check_inputs(op, 4, "handle, index, value, flow_in")
    _check_handle(op)
    _check_integer(op, 1, "index", 0)
    _check_value_dtype(op, 2)
    _check_flow(op, 3)
    return [(_dtypes.float32, TensorShape([]))]


def _write_kernel(attrs):
    def write(storage, index, value, flow):
        storage.write(_as_index(index), np.asarray(value))
        return flow

    return write


def _infer_read(op):
    _check_inputs(op, 3, "handle, index, flow_in")
    _check_handle(op)
    _check_integer(op, 1, "index", 0)
    _check_flow(op, 2)
    return [(_attr_dtype(op), unknown_shape())]


def _read_kernel(attrs):
    def read(storage, index, flow):
        return storage.read_at(_as_index(index))

    return read


def _infer_gather(op):
    _check_inputs(op, 3, "handle, indices, flow_in")
    _check_handle(op)
    _check_integer(op, 1, "indices", 1)
    _check_flow(op, 2)
    element_shape = _attr_shape(op, "element_shape")
    indices = op.inputs[1].shape
    leading = TensorShape([indices[0] if indices.ndims == 1 else None])
    return [(_attr_dtype(op), leading.concatenate(element_shape))]


def _gather_kernel(attrs):
    element_shape = attrs["element_shape"]

    def gather(storage, indices, flow):
        return storage.gather(np.asarray(indices), element_shape)

    return gather


def _infer_scatter(op):
    _check_inputs(op, 4, "handle, indices, value, flow_in")
    _check_handle(op)
    _check_integer(op, 1, "indices", 1)
    _check_value_dtype(op, 2)
    _check_flow(op, 3)
    return [(_dtypes.float32, TensorShape([]))]


def _scatter_kernel(attrs):
    def scatter(storage, indices, value, flow):
        storage.scatter(np.asarray(indices), np.asarray(value))
        return flow

    return scatter


def _infer_concat(op):
    _check_inputs(op, 2, "handle, flow_in")
    _check_handle(op)
    _check_flow(op, 1)
    rest = _attr_shape(op, "element_shape_except0")
    return [
        (_attr_dtype(op), TensorShape([None]).concatenate(rest)),
        (_dtypes.int64, TensorShape([None])),
    ]


def _concat_kernel(attrs):
    rest = attrs["element_shape_except0"]

    def concat(storage, flow):
        return storage.concat(rest)

    return concat


def _infer_split(op):
    _check_inputs(op, 4, "handle, value, lengths, flow_in")
    _check_handle(op)
    _check_value_dtype(op, 1)
    if op.inputs[2].dtype is not _dtypes.int64:
        raise TypeError(f"input 2 (lengths) must be int64, got {op.inputs[2].dtype.name}")
    _check_flow(op, 3)
    return [(_dtypes.float32, TensorShape([]))]


def _split_kernel(attrs):
    def split(storage, value, lengths, flow):
        storage.split(np.asarray(value), np.asarray(lengths))
        return flow

    return split


def _infer_size(op):
    _check_inputs(op, 2, "handle, flow_in")
    _check_handle(op)
    _check_flow(op, 1)
    return [(_dtypes.int32, TensorShape([]))]


def _size_kernel(attrs):
    def size(storage, flow):
        with storage.lock:
            return np.int32(storage.size)

    return size


def _infer_close(op):
    _check_inputs(op, 1, "handle")
    _check_handle(op)
    return []


def _close_kernel(attrs):
    def close(storage):
        storage.close()
        return ()

    return close


def _infer_grad(op):
    _check_inputs(op, 2, "handle, flow_in")
    _check_handle(op)
    _check_flow(op, 1)
    if not isinstance(op.attrs.get("source"), str):
        raise TypeError("attr source must be a string")
    return [(_dtypes.resource, _HANDLE_SHAPE), (_dtypes.float32, TensorShape([]))]


def _grad_kernel(attrs):
    source = attrs["source"]

    def grad(storage, flow):
        return storage.gradient(source), flow

    return grad


# The ops that copy whole arrays; the others are always cheap.
_COPYING = frozenset(
    {"TensorArrayGatherV3", "TensorArrayScatterV3", "TensorArrayConcatV3", "TensorArraySplitV3"}
)
for _type, _infer, _kernel in (
    ("TensorArrayV3", _infer_tensor_array, _tensor_array_kernel),
    ("TensorArrayWriteV3", _infer_write, _write_kernel),
    ("TensorArrayReadV3", _infer_read, _read_kernel),
    ("TensorArrayGatherV3", _infer_gather, _gather_kernel),
    ("TensorArrayScatterV3", _infer_scatter, _scatter_kernel),
    ("TensorArrayConcatV3", _infer_concat, _concat_kernel),
    ("TensorArraySplitV3", _infer_split, _split_kernel),
    ("TensorArraySizeV3", _infer_size, _size_kernel),
    ("TensorArrayCloseV3", _infer_close, _close_kernel),
    ("TensorArrayGradV3", _infer_grad, _grad_kernel),
):
    # Every effect on an array is ordered by the flows (a read or a write takes the flow of
    # the writes before it), so a compiled loop or cond may run these ops one after another
    # in an order its edges allow (``state_ordered_by_edges``, `dataflow.client.compiler`);
    # a close takes the handle alone, so nothing orders it: it is not so marked.
    define_op(
        _type,
        _infer,
        _kernel,
        stateful=True,
        inline=None if _type in _COPYING else True,
        extra={} if _type == "TensorArrayCloseV3" else {"state_ordered_by_edges": True},
    )


# -- the Python object -----------------------------------------------------------------------------
def _convert_index(index, name: str) -> Tensor:
    return convert_to_tensor(
        index, dtype=None if isinstance(index, Tensor) else _dtypes.int32, name=name
    )


class TensorArray:
    """A list of tensors of one dtype in the graph (``tf.compat.v1.TensorArray``, graph mode).

    ``size`` elements (an int or an int32 tensor; more appear on writes past the end when
    ``dynamic_size``).  Every element has ``element_shape``; with ``infer_shape`` (the default)
    the shape of the first value written fixes it, statically here and at run time in the
    kernels.  With ``clear_after_read`` (the default) an element can be read once.  Each write
    returns a new TensorArray to use for what follows: the old object's flow does not order
    later reads after that write.  ``handle`` and ``flow`` rebuild a TensorArray around an
    existing array (``size``, ``element_shape``, ``dynamic_size`` and ``clear_after_read`` are
    then properties of that array and may not be given).  ``colocate_with_first_write_call`` is
    accepted and has no effect (devices are annotations here).
    """

    def __init__(
        self,
        dtype,
        size=None,
        dynamic_size: Optional[bool] = None,
        clear_after_read: Optional[bool] = None,
        tensor_array_name: Optional[str] = None,
        handle=None,
        flow=None,
        infer_shape: bool = True,
        element_shape=None,
        colocate_with_first_write_call: bool = True,
        name: Optional[str] = None,
    ):
        __tracebackhide__ = True
        if flow is not None and not isinstance(flow, Tensor):
            raise TypeError(f"flow must be a Tensor, got {flow!r}")
        if handle is not None:
            for given, what in (
                (size, "size"),
                (element_shape, "element_shape"),
                (dynamic_size, "dynamic_size"),
                (clear_after_read, "clear_after_read"),
            ):
                if given is not None:
                    raise ValueError(f"Cannot provide both a handle and {what} at the same time")
            if not isinstance(handle, Tensor):
                raise TypeError("Handle must be a Tensor")
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
        elif size is None:
            raise ValueError("Size must be provided if handle is not provided")
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = infer_shape
        self._colocate_with_first_write_call = colocate_with_first_write_call
        # One-element list shared by every TensorArray built on this one (writes, loops), so
        # that a shape learned from one write is known to all of them, as in TF1.
        self._element_shape = [as_shape(element_shape)]
        graph = handle.graph if handle is not None else get_default_graph()
        with graph.as_default(), name_scope(name, "TensorArray", [handle, size, flow]) as scope:
            if handle is not None:
                self._handle, self._flow, self._size = handle, flow, None
                return
            size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
            attrs = {
                "dtype": self._dtype,
                "element_shape": self._element_shape[0],
                "dynamic_size": self._dynamic_size,
                "clear_after_read": True if clear_after_read is None else bool(clear_after_read),
                "identical_element_shapes": bool(infer_shape),
                "tensor_array_name": tensor_array_name or "",
            }
            op = apply_op("TensorArrayV3", [size], attrs, name=scope)
        self._handle, created_flow = op.outputs
        self._flow = created_flow if flow is None else flow
        self._size = size

    # -- properties ------------------------------------------------------------------------------
    @property
    def handle(self) -> Tensor:
        """The array's handle (a resource tensor)."""
        return self._handle

    @property
    def flow(self) -> Tensor:
        """The float scalar that orders this object's reads after the writes it was built on."""
        return self._flow

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    @property
    def element_shape(self) -> TensorShape:
        """The shape every element has, as far as it is known when the graph is built."""
        return self._element_shape[0]

    def __repr__(self) -> str:
        return (
            f"<df.TensorArray '{self._handle.op.name}' dtype={self._dtype.name} "
            f"element_shape={self.element_shape} flow='{self._flow.name}'>"
        )

    # -- building --------------------------------------------------------------------------------
    def _with_flow(self, flow: Tensor) -> TensorArray:
        """A TensorArray on the same array and static facts, ordered by ``flow``."""
        new = TensorArray.__new__(TensorArray)
        new.__dict__.update(self.__dict__)
        new._flow = flow
        return new

    def _merge_element_shape(self, shape: TensorShape) -> None:
        if not shape.is_compatible_with(self.element_shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self.element_shape}")
        if self._infer_shape:
            self._element_shape[0] = self.element_shape.merge_with(shape)

    def _value(self, value, op_name: str) -> Tensor:
        value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
        if value.dtype is not self._dtype:
            raise TypeError(
                f"{op_name}: the value '{value.name}' is {value.dtype.name}, but the "
                f"TensorArray '{self._handle.op.name}' holds {self._dtype.name}"
            )
        return value

    def identity(self) -> TensorArray:
        """A TensorArray whose flow is an Identity of this one's (for control dependencies)."""
        from .array_ops import identity

        return self._with_flow(identity(self._flow))

    def read(self, index, name: Optional[str] = None) -> Tensor:
        """The element at ``index`` (zeros when it was never written and its shape is known)."""
        __tracebackhide__ = True
        with name_scope(name or "TensorArrayReadV3") as scope:
            index = _convert_index(index, "index")
            op = apply_op(
                "TensorArrayReadV3",
                [self._handle, index, self._flow],
                {"dtype": self._dtype},
                name=scope,
            )
        value = op.outputs[0]
        value.set_shape(self.element_shape)
        return value

    def write(self, index, value, name: Optional[str] = None) -> TensorArray:
        """Writes ``value`` at ``index``; returns the TensorArray to read it from."""
        __tracebackhide__ = True
        with name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = self._value(value, "TensorArray.write")
            self._merge_element_shape(value.shape)
            index = _convert_index(index, "index")
            flow = apply_op(
                "TensorArrayWriteV3",
                [self._handle, index, value, self._flow],
                {"T": self._dtype},
                name=name or "TensorArrayWriteV3",
            ).outputs[0]
        return self._with_flow(flow)

    def gather(self, indices, name: Optional[str] = None) -> Tensor:
        """The elements at ``indices``, stacked along a new first dimension."""
        __tracebackhide__ = True
        with name_scope(name or "TensorArrayGatherV3") as scope:
            indices = _convert_index(indices, "indices")
            op = apply_op(
                "TensorArrayGatherV3",
                [self._handle, indices, self._flow],
                {"dtype": self._dtype, "element_shape": self.element_shape},
                name=scope,
            )
        return op.outputs[0]

    def stack(self, name: Optional[str] = None) -> Tensor:
        """Every element, stacked along a new first dimension (all must have one shape)."""
        __tracebackhide__ = True
        with name_scope(name, "TensorArrayStack", [self._handle]):
            value = self.gather(_range(0, self.size()), name=name)
            size = None if self._size is None or self._dynamic_size else known_int_value(self._size)
            if size is not None and self.element_shape:
                value.set_shape(TensorShape([int(size)]).concatenate(self.element_shape))
        return value

    def concat(self, name: Optional[str] = None) -> Tensor:
        """Every element, concatenated along its first dimension."""
        __tracebackhide__ = True
        rest = self.element_shape[1:] if self.element_shape.ndims else unknown_shape()
        op = apply_op(
            "TensorArrayConcatV3",
            [self._handle, self._flow],
            {"dtype": self._dtype, "element_shape_except0": rest},
            name=name or "TensorArrayConcatV3",
        )
        return op.outputs[0]

    def unstack(self, value, name: Optional[str] = None) -> TensorArray:
        """Writes ``value[i]`` at index ``i`` for every ``i`` along the first dimension."""
        __tracebackhide__ = True
        with name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = self._value(value, "TensorArray.unstack")
            count = value.shape[0] if value.shape.ndims else None
            length = count if count is not None else shape(value)[0]
            return self.scatter(_range(0, length), value, name=name)

    def scatter(self, indices, value, name: Optional[str] = None) -> TensorArray:
        """Writes ``value[i]`` at index ``indices[i]``."""
        __tracebackhide__ = True
        with name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = self._value(value, "TensorArray.scatter")
            if value.shape.ndims:
                self._merge_element_shape(value.shape[1:])
            indices = _convert_index(indices, "indices")
            flow = apply_op(
                "TensorArrayScatterV3",
                [self._handle, indices, value, self._flow],
                {"T": self._dtype},
                name=name or "TensorArrayScatterV3",
            ).outputs[0]
        return self._with_flow(flow)

    def split(self, value, lengths, name: Optional[str] = None) -> TensorArray:
        """Writes consecutive pieces of ``value`` (along its first dimension), of the given
        ``lengths``, at indices 0, 1, ..."""
        __tracebackhide__ = True
        with name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = self._value(value, "TensorArray.split")
            lengths = convert_to_tensor(lengths, name="lengths")
            if lengths.dtype is not _dtypes.int64:
                lengths = cast(lengths, _dtypes.int64)
            known = known_int_value(lengths)
            if (
                self._infer_shape
                and value.shape.ndims
                and known is not None
                and known.ndim == 1
                and len(known)
                and known.max() == known.min()
            ):
                self._merge_element_shape(TensorShape([int(known[0])]).concatenate(value.shape[1:]))
            flow = apply_op(
                "TensorArraySplitV3",
                [self._handle, value, lengths, self._flow],
                {"T": self._dtype},
                name=name or "TensorArraySplitV3",
            ).outputs[0]
        return self._with_flow(flow)

    def size(self, name: Optional[str] = None) -> Tensor:
        """The number of elements (the static size when the array has a fixed one)."""
        __tracebackhide__ = True
        if not self._dynamic_size and self._size is not None:
            return self._size
        return apply_op(
            "TensorArraySizeV3", [self._handle, self._flow], name=name or "TensorArraySizeV3"
        ).outputs[0]

    def close(self, name: Optional[str] = None):
        """Closes the array: its elements are dropped and later uses are errors."""
        __tracebackhide__ = True
        return apply_op("TensorArrayCloseV3", [self._handle], name=name or "TensorArrayCloseV3")

    def grad(self, source: str, flow: Optional[Tensor] = None, name: Optional[str] = None):
        """The gradient array of this array for the gradient computation ``source``."""
        __tracebackhide__ = True
        from .array_ops import identity

        flow = self._flow if flow is None else flow
        with name_scope(name, "TensorArrayGrad", [self._handle]):
            g_handle, _ = apply_op(
                "TensorArrayGradV3",
                [self._handle, flow],
                {"source": source},
                name=name or "TensorArrayGradV3",
            ).outputs
            with get_default_graph().control_dependencies([g_handle.op]):
                flow = identity(flow, name="gradient_flow")
        g = TensorArray(
            self._dtype,
            handle=g_handle,
            flow=flow,
            infer_shape=self._infer_shape,
            colocate_with_first_write_call=False,
        )
        g._element_shape = self._element_shape
        return g


def build_ta_with_new_flow(old: TensorArray, flow: Tensor) -> TensorArray:
    """``old`` ordered by ``flow`` instead: how a TensorArray comes out of a loop or a cond,
    where it travelled as its flow."""
    return old._with_flow(flow)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402

for _type in ("TensorArrayV3", "TensorArraySizeV3", "TensorArrayCloseV3", "TensorArrayGradV3"):
    NotDifferentiable(_type)


def _grad_source(grad: Tensor) -> str:
    """The name scope of the `gradients` call that built ``grad`` ("gradients", "outer/
    gradients_1"): each call has its own gradient arrays."""
    tokens = grad.name.split("/")
    positions = [i for i, token in enumerate(tokens) if token.startswith("gradients")]
    if not positions:
        raise ValueError(
            f"Expected op/tensor name to start with gradients (excluding scope), got: {grad.name}"
        )
    return "/".join(tokens[: positions[-1] + 1])


def _forward_array(op, dtype) -> TensorArray:
    return TensorArray(
        dtype, handle=op.inputs[0], flow=op.inputs[-1], colocate_with_first_write_call=False
    )


@RegisterGradient("TensorArrayReadV3")
def _read_grad(op, grad):
    """Reading index i sends ``grad`` to index i of the gradient array."""
    index, flow = op.inputs[1], op.inputs[2]
    g = _forward_array(op, op.attrs["dtype"]).grad(_grad_source(grad), flow=flow)
    return [None, None, g.write(index, grad).flow]


@RegisterGradient("TensorArrayWriteV3")
def _write_grad(op, flow):
    """Writing index i takes its gradient from index i of the gradient array, once the
    gradient array was written (``flow`` is its flow)."""
    index = op.inputs[1]
    g = _forward_array(op, op.attrs["T"]).grad(_grad_source(flow), flow=flow)
    grad = g.read(index)
    grad.set_shape(op.inputs[2].shape)
    return [None, None, grad, flow]


@RegisterGradient("TensorArrayGatherV3")
def _gather_grad(op, grad):
    indices, flow = op.inputs[1], op.inputs[2]
    g = _forward_array(op, op.attrs["dtype"]).grad(_grad_source(grad), flow=flow)
    return [None, None, g.scatter(indices, grad).flow]


@RegisterGradient("TensorArrayScatterV3")
def _scatter_grad(op, flow):
    indices = op.inputs[1]
    g = _forward_array(op, op.attrs["T"]).grad(_grad_source(flow), flow=flow)
    grad = g.gather(indices)
    grad.set_shape(op.inputs[2].shape)
    return [None, None, grad, flow]


@RegisterGradient("TensorArrayConcatV3")
def _concat_grad(op, grad, unused_lengths_grad):
    flow, lengths = op.inputs[1], op.outputs[1]
    g = _forward_array(op, op.attrs["dtype"]).grad(_grad_source(grad), flow=flow)
    return [None, g.split(grad, lengths).flow]


@RegisterGradient("TensorArraySplitV3")
def _split_grad(op, flow):
    g = _forward_array(op, op.attrs["T"]).grad(_grad_source(flow), flow=flow)
    grad = g.concat()
    grad.set_shape(op.inputs[1].shape)
    return [None, grad, None, flow]


# -- the spec of a TensorArray ---------------------------------------------------------------------
class TensorArraySpec(TypeSpec):
    """Describes a `TensorArray`: the shape of its elements, their dtype, whether it grows
    (``dynamic_size``) and whether it checks its elements' shapes (``infer_shape``)."""

    __slots__ = ("_element_shape", "_dtype", "_dynamic_size", "_infer_shape")

    def __init__(
        self, element_shape=None, dtype=_dtypes.float32, dynamic_size=False, infer_shape=True
    ):
        self._element_shape = as_shape(element_shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._dynamic_size = dynamic_size
        self._infer_shape = infer_shape

    @property
    def value_type(self) -> type:
        return TensorArray

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    def _fields(self) -> tuple:
        return (self._element_shape, self._dtype, self._dynamic_size, self._infer_shape)

    def _compatible_fields(self, other) -> bool:
        return self._fields()[1:] == other._fields()[1:] and (
            self._element_shape.is_compatible_with(other._element_shape)
        )

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and _hashable(self._fields()) == _hashable(other._fields())

    __hash__ = TypeSpec.__hash__

    def __repr__(self) -> str:
        return (
            f"TensorArraySpec({_spec_shape_text(self._element_shape)}, df.{self._dtype.name}, "
            f"{self._dynamic_size}, {self._infer_shape})"
        )


register_spec_of(
    TensorArray,
    lambda value: TensorArraySpec(
        value.element_shape, value.dtype, value._dynamic_size, value._infer_shape
    ),
)

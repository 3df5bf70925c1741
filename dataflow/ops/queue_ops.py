"""Queues: bounded buffers of tuples of tensors that the runs of one Session share.

``FIFOQueue`` and ``RandomShuffleQueue`` mirror ``tf.compat.v1``'s.  A queue is a handle op
(``FIFOQueueV2``, ``RandomShuffleQueueV2``) whose value is the queue itself, made in the Session
the first time a run needs it (`RunContext.resource`) and kept there until the Session closes; the
ops that take the handle (``QueueEnqueueV2``, ``QueueDequeueManyV2``, ``QueueCloseV2``, ...) act
on it at once.  Unlike a variable write, an enqueue is not held back until its run succeeds: other
runs see it straight away, as in TensorFlow, which is what lets one thread feed a queue that
another thread's run is waiting on (`dataflow.training.queue_runner`).

Waiting.  An enqueue into a full queue, and a dequeue from a queue with too few elements, wait.
They stop waiting when the queue gets room or elements, when it is closed (then a dequeue gets
what is left, or ``OutOfRangeError`` when too little is left; a pending enqueue continues unless
the close cancelled pending enqueues, which fails it with ``CancelledError``), when the Session
closes (``CancelledError``) or when the run's deadline passes (``DeadlineExceededError``).

A ``RandomShuffleQueue`` hands out a uniformly chosen element and keeps at least
``min_after_dequeue`` elements until it is closed, so that what it hands out is well mixed; its
choices come from a generator keyed by the graph and op seeds as TF1 derives them
(`dataflow.framework.random_seed`; nondeterministic without either).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import CancelledError, InvalidArgumentError, OutOfRangeError
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.random_seed import op_seed_attrs
from ..framework.resource_containers import current_container, resource_key
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = ["FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "QueueBase", "RandomShuffleQueue"]

# How often a waiting kernel looks at the Session and the run's deadline.
_POLL_SECONDS = 0.05


class _Queue:
    """The run-time queue behind a handle: its elements (tuples of arrays) and who waits."""

    def __init__(self, attrs: dict, name: str):
        self.name = name
        self.kind = attrs["kind"]
        self.dtypes = [_dtypes.numpy_dtype(t) for t in attrs["component_types"]]
        self.shapes = attrs["shapes"]
        self.capacity = attrs["capacity"]
        self.min_after_dequeue = attrs.get("min_after_dequeue", 0)
        # a PriorityQueue's elements are a binary heap kept as libstdc++'s std::priority_queue
        # keeps it (TensorFlow's kernel), so that equal priorities come out in its order
        self.elements = [] if self.kind == "PriorityQueue" else deque()
        self.changed = threading.Condition()
        self.closed = False
        self.cancel_pending_enqueues = False
        seeds = (attrs.get("seed", 0), attrs.get("seed2", 0))
        self.rng = np.random.default_rng(None if seeds == (0, 0) else list(seeds))

    def describe(self) -> str:
        return f"{self.kind} '{self.name}'"

    def cancel(self) -> None:
        """The Session is closing: wake every waiter (they see the Session closed)."""
        with self.changed:
            self.changed.notify_all()

    def _wait(self, context, ready, what: str) -> None:
        """Waits, holding ``self.changed``, until ``ready()``; see the module docstring."""
        while not ready():
            context.check_not_stopped(f"{what} of {self.describe()}")
            self.changed.wait(_POLL_SECONDS)
        # Woken by the change it waited for, but perhaps after its run gave up: a run past its
        # deadline must not take an element that a later run then never sees.
        context.check_not_stopped(f"{what} of {self.describe()}")

    # -- the operations ---------------------------------------------------------------------------
    def enqueue(self, context, elements: list) -> None:
        """Adds ``elements`` one by one, each as soon as there is room.  A closed queue takes
        none; an enqueue already waiting when the queue closes goes on waiting for room unless
        the close cancelled pending enqueues."""
        with self.changed:
            if self.closed:
                raise CancelledError(None, None, f"{self.describe()} is closed.")
        for element in elements:
            with self.changed:
                if self.capacity >= 0:
                    self._wait(
                        context,
                        lambda: self.cancel_pending_enqueues or len(self.elements) < self.capacity,
                        "room in",
                    )
                if self.cancel_pending_enqueues:
                    raise CancelledError(None, None, f"{self.describe()} is closed.")
                self.elements.append(element)
                if self.kind == "PriorityQueue":
                    _sift_up(self.elements, len(self.elements) - 1, 0, element)
                self.changed.notify_all()

    def dequeue(self, context, count: int, allow_fewer: bool) -> list:
        """``count`` elements (at least one when ``allow_fewer`` and the queue is closed)."""
        keep = self.min_after_dequeue if self.kind == "RandomShuffleQueue" else 0
        with self.changed:
            self._wait(
                context,
                lambda: self.closed or len(self.elements) >= count + keep,
                f"{count} element{'s' if count != 1 else ''} from",
            )
            available = len(self.elements)
            if available < count and not (allow_fewer and available > 0):
                raise OutOfRangeError(
                    None,
                    None,
                    f"{self.describe()} is closed and has insufficient elements (requested "
                    f"{count}, current size {available})",
                )
            taken = [self._take() for _ in range(min(count, available))]
            self.changed.notify_all()
            return taken

    def _take(self):
        if self.kind == "PriorityQueue":
            return _pop_heap(self.elements)
        if self.kind == "RandomShuffleQueue" and len(self.elements) > 1:
            self.elements.rotate(-int(self.rng.integers(len(self.elements))))
        return self.elements.popleft()

    def close(self, cancel_pending_enqueues: bool) -> None:
        with self.changed:
            self.closed = True
            self.cancel_pending_enqueues = self.cancel_pending_enqueues or cancel_pending_enqueues
            self.changed.notify_all()


# A PriorityQueue's heap: std::push_heap/std::pop_heap of libstdc++ with TensorFlow's comparison
# (an element ranks above another when its priority, component 0, is smaller).
def _below(a, b) -> bool:
    return int(a[0]) > int(b[0])


def _sift_up(heap: list, hole: int, top: int, value) -> None:
    parent = (hole - 1) // 2
    while hole > top and _below(heap[parent], value):
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = value


def _pop_heap(heap: list):
    first = heap[0]
    last = heap.pop()
    if not heap:
        return first
    hole, length, child = 0, len(heap), 0
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if _below(heap[child], heap[child - 1]):
            child -= 1
        heap[hole] = heap[child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        heap[hole] = heap[child - 1]
        hole = child - 1
    _sift_up(heap, hole, 0, last)
    return first


def _padded_stack(elements: list, i: int, shape: TensorShape, dtype: np.dtype) -> np.ndarray:
    """Component ``i`` of ``elements`` stacked, each padded at the end of its dimensions of
    unknown size to the largest size among them (with zeros, or empty strings)."""
    dims = [
        d if d is not None else max((e[i].shape[k] for e in elements), default=0)
        for k, d in enumerate(shape.as_list())
    ]
    out = np.zeros([len(elements), *dims], dtype=dtype)
    if out.dtype.kind == "O":
        out.fill(b"")
    for j, e in enumerate(elements):
        out[(j, *(slice(0, n) for n in e[i].shape))] = e[i]
    return out


# -- ops -------------------------------------------------------------------------------------------
def _infer_handle(op):
    return [(_dtypes.resource, ())]


def _handle_kernel(attrs):
    key = resource_key(attrs)

    def handle(context):
        return context.resource(key, lambda: _Queue(attrs, attrs["shared_name"]))

    return handle


_HANDLE_TYPES = ("FIFOQueueV2", "RandomShuffleQueueV2", "PaddingFIFOQueueV2", "PriorityQueueV2")
for _kind in _HANDLE_TYPES:
    define_op(_kind, _infer_handle, _handle_kernel, stateful=True, inline=True, wants_context=True)


def _check_handle(op) -> None:
    if not op.inputs or op.inputs[0].dtype != _dtypes.resource:
        raise TypeError("input 0 must be a queue handle")


def _component_arrays(queue: _Queue, values, many: bool) -> list:
    """The elements ``values`` (one per component; each a batch of elements when ``many``)
    make, converted to the queue's dtypes and checked against its shapes."""
    if len(values) != len(queue.dtypes):
        raise InvalidArgumentError(
            None, None, f"{queue.describe()} has {len(queue.dtypes)} components, got {len(values)}"
        )
    arrays = [np.asarray(v).astype(t, copy=False) for v, t in zip(values, queue.dtypes)]
    if many:
        sizes = {a.shape[0] if a.ndim else None for a in arrays}
        if None in sizes or len(sizes) != 1:
            raise InvalidArgumentError(
                None,
                None,
                "enqueue_many needs every component to have the same size in dimension 0, got "
                f"shapes {[list(a.shape) for a in arrays]}",
            )
        # a[i, ...] is an array even where a[i] of a string array would be bare bytes
        elements = [tuple(a[i, ...] for a in arrays) for i in range(sizes.pop())]
    else:
        elements = [tuple(arrays)]
    if queue.shapes and elements:
        for i, (shape, value) in enumerate(zip(queue.shapes, elements[0])):
            if not shape.is_compatible_with(value.shape):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Shape mismatch in tuple component {i}. Expected {shape.as_list()}, got "
                    f"{list(value.shape)}",
                )
    return elements


def _infer_enqueue(op):
    _check_handle(op)
    return []


def _enqueue_kernel(attrs):
    many = attrs["many"]

    def enqueue(context, queue, *values):
        queue.enqueue(context, _component_arrays(queue, values, many))
        return ()

    return enqueue


define_op(
    "QueueEnqueueV2",
    _infer_enqueue,
    _enqueue_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)


def _infer_dequeue(op):
    _check_handle(op)
    shapes = op.attrs["shapes"] or [TensorShape(None)] * len(op.attrs["component_types"])
    count = op.attrs["count"]
    if count is not None:
        batch = None if count < 0 else count
        shapes = [TensorShape([batch]).concatenate(s) for s in shapes]
    return list(zip(op.attrs["component_types"], shapes))


def _dequeue_kernel(attrs):
    count, allow_fewer = attrs["count"], attrs["allow_fewer"]

    def dequeue(context, queue, n=None):
        wanted = 1 if count is None else int(n)
        if wanted < 0:
            raise InvalidArgumentError(None, None, f"Dequeue count must be >= 0, got {wanted}")
        elements = queue.dequeue(context, wanted, allow_fewer)
        if count is None:
            values = elements[0]
        elif queue.kind == "PaddingFIFOQueue":
            values = [
                _padded_stack(elements, i, s, t)
                for i, (s, t) in enumerate(zip(queue.shapes, queue.dtypes))
            ]
        else:
            if queue.shapes is None or not all(s.is_fully_defined() for s in queue.shapes):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"{queue.kind}'s DequeueMany and DequeueUpTo require the components to have "
                    "specified shapes (give the queue shapes=).",
                )
            values = [
                np.stack([e[i] for e in elements])
                if elements
                else np.zeros([0, *s.as_list()], dtype=t)
                for i, (s, t) in enumerate(zip(queue.shapes, queue.dtypes))
            ]
        return values[0] if len(values) == 1 else tuple(values)

    return dequeue


define_op(
    "QueueDequeueV2",
    _infer_dequeue,
    _dequeue_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)


def _close_kernel(attrs):
    cancel = attrs["cancel_pending_enqueues"]

    def close(queue):
        queue.close(cancel)
        return ()

    return close


define_op("QueueCloseV2", _infer_enqueue, _close_kernel, stateful=True, inline=True)


def _size_kernel(attrs):
    return lambda queue: np.int32(len(queue.elements))


def _is_closed_kernel(attrs):
    return lambda queue: np.bool_(queue.closed)


define_op(
    "QueueSizeV2",
    lambda op: _check_handle(op) or [(_dtypes.int32, TensorShape([]))],
    _size_kernel,
    stateful=True,
    inline=True,
)
define_op(
    "QueueIsClosedV2",
    lambda op: _check_handle(op) or [(_dtypes.bool, TensorShape([]))],
    _is_closed_kernel,
    stateful=True,
    inline=True,
)


# -- the Python classes ----------------------------------------------------------------------------
def _as_shapes(shapes, count: int) -> Optional[list]:
    if shapes is None:
        return None
    shapes = [TensorShape(s) for s in shapes]
    if len(shapes) != count:
        raise ValueError(
            f"Queue shapes must have the same length as dtypes ({count}), got {shapes}"
        )
    return shapes


def _queue_handle(
    kind: str,
    capacity,
    dtypes: list,
    shapes: Optional[list],
    shared_name: Optional[str],
    name: str,
    extra_attrs: Optional[dict] = None,
) -> Tensor:
    """The handle op of a new queue of ``kind`` (its run-time queue is made by the Session)."""
    with name_scope(name) as scope:
        op_name = scope[:-1]
        attrs = {
            "kind": kind,
            "component_types": tuple(dtypes),
            "shapes": shapes,
            "capacity": int(capacity),
            "shared_name": shared_name or op_name,
            "container": current_container(),
            **(extra_attrs or {}),
        }
        return apply_op(kind + "V2", (), attrs, name=op_name + "/").outputs[0]


def _as_dtype_list(dtypes) -> list:
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    return [_dtypes.as_dtype(t) for t in dtypes]


class QueueBase:
    """A queue from its handle (``queue_ref``, the output of a queue op), with the ops on it;
    FIFOQueue, RandomShuffleQueue, PaddingFIFOQueue and PriorityQueue make the handle."""

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = _as_dtype_list(dtypes)
        self._shapes = _as_shapes(shapes, len(self._dtypes))
        if names is not None:
            names = [names] if isinstance(names, str) else list(names)
            if len(names) != len(self._dtypes):
                raise ValueError(
                    f"Queue names must have the same length as dtypes, received "
                    f"len(names)={len(names)}, len(dtypes)={len(self._dtypes)}"
                )
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name

    @classmethod
    def from_handle(cls, handle_op) -> QueueBase:
        """The queue whose handle op is ``handle_op`` (a graph loaded from a file); makes no op.
        ``ValueError`` when it is not a queue's handle."""
        kinds = {
            "FIFOQueueV2": FIFOQueue,
            "RandomShuffleQueueV2": RandomShuffleQueue,
            "PaddingFIFOQueueV2": PaddingFIFOQueue,
            "PriorityQueueV2": PriorityQueue,
        }
        if handle_op.type not in kinds:
            raise ValueError(f"'{handle_op.name}' is a {handle_op.type} op, not a queue")
        queue = QueueBase.__new__(kinds[handle_op.type])
        QueueBase.__init__(
            queue,
            list(handle_op.attrs["component_types"]),
            handle_op.attrs["shapes"],
            None,
            handle_op.outputs[0],
        )
        return queue

    # -- fields TF1 code reads --------------------------------------------------------------------
    @property
    def queue_ref(self) -> Tensor:
        return self._queue_ref

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtypes(self) -> list:
        return list(self._dtypes)

    @property
    def shapes(self) -> list:
        return (
            list(self._shapes)
            if self._shapes is not None
            else [TensorShape(None)] * len(self._dtypes)
        )

    @property
    def names(self):
        return self._names

    # -- ops --------------------------------------------------------------------------------------
    def _components(self, vals, many: bool) -> list:
        if self._names is not None:
            if not isinstance(vals, dict) or set(vals) != set(self._names):
                raise ValueError(
                    f"Queue {self._name} has names {self._names}; enqueue a dict with exactly "
                    f"those keys, got {vals!r:.100}"
                )
            vals = [vals[n] for n in self._names]
        elif isinstance(vals, dict):
            raise ValueError(f"Queue {self._name} has no names; enqueue a tuple, not a dict")
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(
                f"Queue {self._name} has {len(self._dtypes)} components, got {len(vals)} values"
            )
        tensors = []
        for i, (v, t) in enumerate(zip(vals, self._dtypes)):
            tensor = convert_to_tensor(v, dtype=t, name=f"component_{i}")
            if self._shapes is not None:
                shape = tensor.shape[1:] if many and tensor.shape.ndims else tensor.shape
                if not self._shapes[i].is_compatible_with(shape):
                    raise ValueError(
                        f"Shape {shape} of component {i} is not compatible with the queue's "
                        f"shape {self._shapes[i]}"
                    )
            tensors.append(tensor)
        return tensors

    def enqueue(self, vals, name: Optional[str] = None):
        """The op that adds one element (one value per component), waiting for room."""
        with name_scope(name or f"{self._name}_enqueue") as scope:
            inputs = [self._queue_ref, *self._components(vals, many=False)]
            return apply_op("QueueEnqueueV2", inputs, {"many": False}, name=scope)

    def enqueue_many(self, vals, name: Optional[str] = None):
        """The op that adds the elements of ``vals`` split along dimension 0."""
        with name_scope(name or f"{self._name}_EnqueueMany") as scope:
            inputs = [self._queue_ref, *self._components(vals, many=True)]
            return apply_op("QueueEnqueueV2", inputs, {"many": True}, name=scope)

    def _dequeue(self, name, count, allow_fewer):
        attrs = {
            "component_types": tuple(self._dtypes),
            "shapes": self._shapes,
            "count": count,
            "allow_fewer": allow_fewer,
        }
        inputs = [self._queue_ref]
        if count is not None:
            n = convert_to_tensor(count, dtype=_dtypes.int32, name="n")
            inputs.append(n)
            known = n.op.attrs.get("value") if n.op.type == "Const" else None
            attrs["count"] = int(known) if known is not None and not allow_fewer else -1
        outputs = apply_op("QueueDequeueV2", inputs, attrs, name=name).outputs
        if self._names is not None:
            return dict(zip(self._names, outputs))
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def dequeue(self, name: Optional[str] = None):
        """One element, waiting until there is one (``OutOfRangeError`` once closed and empty)."""
        return self._dequeue(name or f"{self._name}_Dequeue", None, False)

    def dequeue_many(self, n, name: Optional[str] = None):
        """``n`` elements stacked along a new dimension 0, waiting until there are ``n``."""
        return self._dequeue(name or f"{self._name}_DequeueMany", n, False)

    def dequeue_up_to(self, n, name: Optional[str] = None):
        """As `dequeue_many`, but once the queue is closed returns the fewer that are left."""
        return self._dequeue(name or f"{self._name}_DequeueUpTo", n, True)

    def close(self, cancel_pending_enqueues: bool = False, name: Optional[str] = None):
        """The op that closes the queue: no more enqueues; dequeues drain what is left."""
        attrs = {"cancel_pending_enqueues": bool(cancel_pending_enqueues)}
        return apply_op(
            "QueueCloseV2", [self._queue_ref], attrs, name=name or f"{self._name}_Close"
        )

    def size(self, name: Optional[str] = None) -> Tensor:
        op = apply_op("QueueSizeV2", [self._queue_ref], {}, name=name or f"{self._name}_Size")
        return op.outputs[0]

    def is_closed(self, name: Optional[str] = None) -> Tensor:
        op = apply_op(
            "QueueIsClosedV2", [self._queue_ref], {}, name=name or f"{self._name}_IsClosed"
        )
        return op.outputs[0]


class FIFOQueue(QueueBase):
    """A queue that hands out its elements in the order they came in."""

    def __init__(
        self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"
    ):
        dtypes = _as_dtype_list(dtypes)
        shapes = _as_shapes(shapes, len(dtypes))
        handle = _queue_handle("FIFOQueue", capacity, dtypes, shapes, shared_name, name)
        super().__init__(dtypes, shapes, names, handle)


class RandomShuffleQueue(QueueBase):
    """A queue that hands out a uniformly chosen element, keeping ``min_after_dequeue``."""

    def __init__(
        self,
        capacity,
        min_after_dequeue,
        dtypes,
        shapes=None,
        names=None,
        seed=None,
        shared_name=None,
        name="random_shuffle_queue",
    ):
        dtypes = _as_dtype_list(dtypes)
        shapes = _as_shapes(shapes, len(dtypes))
        extra = {"min_after_dequeue": int(min_after_dequeue), **op_seed_attrs(seed)}
        handle = _queue_handle(
            "RandomShuffleQueue", capacity, dtypes, shapes, shared_name, name, extra
        )
        super().__init__(dtypes, shapes, names, handle)


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose components may have dimensions of unknown size (``None`` in
    ``shapes``): ``dequeue_many``/``dequeue_up_to`` pad each component at the end of those
    dimensions to the largest size in the batch, with zeros (empty strings for strings)."""

    def __init__(
        self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"
    ):
        dtypes = _as_dtype_list(dtypes)
        if (
            shapes is None
            or not isinstance(shapes, (list, tuple))
            or any(s is None for s in shapes)
        ):
            raise ValueError("When providing partial shapes, a list of shapes must be provided.")
        shapes = [TensorShape(s) for s in shapes]
        if any(s.ndims is None for s in shapes):
            raise ValueError(f"All shapes must have a known rank, got {shapes}")
        if len(shapes) != len(dtypes):
            raise ValueError(
                f"Shapes must be provided for all components, but received {len(dtypes)} "
                f"dtypes and {len(shapes)} shapes."
            )
        handle = _queue_handle("PaddingFIFOQueue", capacity, dtypes, shapes, shared_name, name)
        super().__init__(dtypes, shapes, names, handle)


class PriorityQueue(QueueBase):
    """A queue that hands out its elements smallest priority first.  Each element starts with
    an ``int64`` priority (a scalar for ``enqueue``, a vector for ``enqueue_many``) ahead of
    the components of ``types``; dequeues return it first too."""

    def __init__(
        self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"
    ):
        types = _as_dtype_list(types)
        shapes = _as_shapes(shapes, len(types))
        dtypes = [_dtypes.int64, *types]
        shapes = [TensorShape([]), *shapes] if shapes is not None else None
        handle = _queue_handle("PriorityQueue", capacity, dtypes, shapes, shared_name, name)
        super().__init__(dtypes, shapes, names, handle)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (
    *_HANDLE_TYPES,
    "QueueEnqueueV2",
    "QueueDequeueV2",
    "QueueCloseV2",
    "QueueSizeV2",
    "QueueIsClosedV2",
):
    NotDifferentiable(_type)

"""TF1's queue-based input pipelines: producers that fill queues, and batching on queues.

``slice_input_producer([images, labels])`` gives one (image, label) row per run, shuffled, for
``num_epochs`` passes; ``batch``/``shuffle_batch`` turn single examples into batches.  Each adds
a `QueueRunner` to the ``QUEUE_RUNNERS`` collection; a program calls
``df.train.start_queue_runners(sess, coord)`` before its first step and stops on
``OutOfRangeError`` when the epochs run out, as in TensorFlow 1.x::

    image, label = df.train.slice_input_producer([images, labels], num_epochs=2)
    batch_x, batch_y = df.train.batch([image, label], batch_size=32)

Counting epochs needs a local variable (``<name>/limit_epochs/epochs``), so a program using
``num_epochs`` runs ``df.local_variables_initializer()`` first, as in TensorFlow.
"""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.errors import OutOfRangeError
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import control_dependencies, name_scope
from ..framework.graph_keys import GraphKeys
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops.array_ops import identity, shape
from ..ops.array_ops import range as _range
from ..ops.gather_ops import gather
from ..ops.queue_ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue
from ..ops.random_ops import random_shuffle
from ..ops.variables import Variable
from .queue_runner import QueueRunner, add_queue_runner

__all__ = [
    "batch",
    "batch_join",
    "shuffle_batch_join",
    "input_producer",
    "limit_epochs",
    "maybe_batch",
    "maybe_batch_join",
    "maybe_shuffle_batch",
    "maybe_shuffle_batch_join",
    "range_input_producer",
    "shuffle_batch",
    "slice_input_producer",
    "string_input_producer",
]


# -- counting up to a limit ------------------------------------------------------------------------
def _infer_count_up_to(op):
    return [(op.attrs["dtype"], TensorShape([]))]


def _count_up_to_kernel(attrs):
    limit = attrs["limit"]

    def count_up_to(context, ref):
        base = context.read_variable(ref)
        if base >= limit:
            raise OutOfRangeError(None, None, f"Reached limit of {limit}")
        context.update_variable(ref, base, base + base.dtype.type(1))
        return base

    return count_up_to


define_op(
    "CountUpTo",
    _infer_count_up_to,
    _count_up_to_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)


NotDifferentiable("CountUpTo")


def count_up_to(ref: Variable, limit: int, name: Optional[str] = None):
    """Increments the integer variable ``ref`` and returns its value before the increment;
    ``OutOfRangeError`` once it has reached ``limit``.  The increment is committed with the run,
    like every variable write (see `dataflow.ops.variables`)."""
    if not ref.dtype.is_integer:
        raise TypeError(f"count_up_to needs an integer variable, got {ref.dtype.name}")
    attrs = {"dtype": ref.dtype, "limit": int(limit)}
    return apply_op("CountUpTo", [ref.handle], attrs, name=name or "CountUpTo").outputs[0]


def limit_epochs(tensor, num_epochs: Optional[int] = None, name: Optional[str] = None):
    """``tensor``, which can be evaluated ``num_epochs`` times before ``OutOfRangeError``."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with name_scope(name or "limit_epochs") as scope:
        epochs = Variable(
            convert_to_tensor(0, dtype=_dtypes.int64),
            name="epochs",
            trainable=False,
            collections=[GraphKeys.LOCAL_VARIABLES],
        )
        counter = count_up_to(epochs, num_epochs)
        with control_dependencies([counter]):
            return identity(tensor, name=scope)


# -- producers -------------------------------------------------------------------------------------
def input_producer(
    input_tensor,
    element_shape=None,
    num_epochs: Optional[int] = None,
    shuffle: bool = True,
    seed: Optional[int] = None,
    capacity: int = 32,
    shared_name: Optional[str] = None,
    summary_name: Optional[str] = None,
    name: Optional[str] = None,
    cancel_op=None,
):
    """A queue fed with the rows of ``input_tensor``, shuffled each epoch when ``shuffle``,
    for ``num_epochs`` epochs (forever when None), by a `QueueRunner`."""
    with name_scope(name or "input_producer"):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        element_shape = input_tensor.shape[1:].merge_with(TensorShape(element_shape))
        if not element_shape.is_fully_defined():
            raise ValueError(
                "Either `input_tensor` must have a fully defined shape or `element_shape` must "
                "be specified"
            )
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = FIFOQueue(
            capacity=capacity,
            dtypes=[input_tensor.dtype],
            shapes=[element_shape],
            shared_name=shared_name,
            name=name or "input_producer",
        )
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        return queue


def string_input_producer(
    string_tensor,
    num_epochs=None,
    shuffle=True,
    seed=None,
    capacity=32,
    shared_name=None,
    name=None,
    cancel_op=None,
):
    """A queue of the strings (file names, usually) in ``string_tensor``; see `input_producer`."""
    with name_scope(name or "input_producer") as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.as_dtype("string"))
        if string_tensor.shape.is_fully_defined() and string_tensor.shape.num_elements() == 0:
            raise ValueError("string_input_producer requires a non-null input tensor")
        return input_producer(
            string_tensor, [], num_epochs, shuffle, seed, capacity, shared_name, None, scope,
            cancel_op,
        )  # fmt: skip


def range_input_producer(
    limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None
):
    """A queue of the integers ``0 .. limit - 1``; see `input_producer`."""
    with name_scope(name or "input_producer") as scope:
        return input_producer(
            _range(limit), [], num_epochs, shuffle, seed, capacity, shared_name, None, scope
        )


def slice_input_producer(
    tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None
) -> list:
    """One row of every tensor in ``tensor_list`` per evaluation (the same row of each), rows
    taken in a shuffled order each epoch when ``shuffle``."""
    with name_scope(name or "input_producer"):
        tensor_list = [convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        rows = shape(tensor_list[0])[0]
        queue = range_input_producer(
            rows, num_epochs=num_epochs, shuffle=shuffle, seed=seed, capacity=capacity,
            shared_name=shared_name,
        )  # fmt: skip
        index = queue.dequeue()
        return [gather(t, index) for t in tensor_list]


# -- batching --------------------------------------------------------------------------------------
def _as_tensor_list(tensors) -> list:
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors)]
    if isinstance(tensors, (list, tuple)):
        return list(tensors)
    return [tensors]


def _as_original_type(original, dequeued):
    """The batch in the structure the example came in (TensorFlow returns a bare tensor for a
    one-element list, and so do we)."""
    if isinstance(original, dict):
        values = dequeued if isinstance(dequeued, list) else [dequeued]
        return {k: values[i] for i, k in enumerate(sorted(original))}
    return dequeued


def _queue_shapes(tensors: list, shapes, enqueue_many: bool) -> list:
    if shapes is not None:
        return [TensorShape(s) for s in shapes]
    found = [t.shape[1:] if enqueue_many else t.shape for t in tensors]
    if not all(s.is_fully_defined() for s in found):
        raise ValueError(f"All shapes must be fully defined: {[str(s) for s in found]}")
    return found


def _batching_queue(capacity, tensors, shapes, enqueue_many, dynamic_pad, shared_name):
    """The queue `batch`, `batch_join` and their ``maybe_`` forms batch through: a FIFOQueue
    of fully defined shapes, or with ``dynamic_pad`` a PaddingFIFOQueue whose shapes may leave
    dimensions unknown, each batch padded to its longest example (TF1's choice)."""
    dtypes = [t.dtype for t in tensors]
    if not dynamic_pad:
        shapes = _queue_shapes(tensors, shapes, enqueue_many)
        return FIFOQueue(capacity=capacity, dtypes=dtypes, shapes=shapes, shared_name=shared_name)
    if shapes is None:
        shapes = [t.shape[1:] if enqueue_many else t.shape for t in tensors]
        if any(s.ndims is None for s in shapes):
            raise ValueError(f"All shapes must have a defined rank: {[str(s) for s in shapes]}")
    shapes = [TensorShape(s) for s in shapes]
    return PaddingFIFOQueue(capacity, dtypes, shapes, shared_name=shared_name)


def _validate_keep_input(keep_input, enqueue_many: bool):
    """``keep_input`` as a bool tensor of rank 0 (or 1 with ``enqueue_many``), as TF1 checks."""
    keep_input = convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _enqueue_op(queue, tensors: list, enqueue_many: bool, keep_input=None):
    """The op that enqueues ``tensors`` (one example, or a batch with ``enqueue_many``); with
    ``keep_input``, only the examples it keeps: all or none for a scalar, those whose entry is
    true for a vector (TF1's ``maybe_batch``).  The kept examples are picked with
    ``dynamic_partition`` and enqueued as a batch of 0 or more."""
    if keep_input is None:
        return queue.enqueue_many(tensors) if enqueue_many else queue.enqueue(tensors)
    from ..ops.array_ops import expand_dims, fill, reshape
    from ..ops.extra_array_ops import dynamic_partition
    from ..ops.math_ops import cast

    select = cast(keep_input, _dtypes.int32)
    if not enqueue_many:
        tensors = [expand_dims(t, 0) for t in tensors]
        select = reshape(select, [1])
    elif keep_input.shape.ndims == 0:
        select = fill(shape(tensors[0])[0:1], select)
    kept = [dynamic_partition(t, select, num_partitions=2)[1] for t in tensors]
    return queue.enqueue_many(kept)


def _batch_on(
    queue, tensors, original, batch_size, num_threads, enqueue_many, smaller, name, keep=None
):
    enqueue = _enqueue_op(queue, tensors, enqueue_many, keep)
    add_queue_runner(QueueRunner(queue, [enqueue] * num_threads))
    if smaller:
        dequeued = queue.dequeue_up_to(batch_size, name=name)
    else:
        dequeued = queue.dequeue_many(batch_size, name=name)
    return _as_original_type(original, dequeued)


def batch(
    tensors,
    batch_size,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes=None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: Optional[str] = None,
    name: Optional[str] = None,
):
    """Batches of ``batch_size`` examples, in the order the feeding threads enqueue them."""
    with name_scope(name or "batch") as scope:
        tensor_list = [convert_to_tensor(t) for t in _as_tensor_list(tensors)]
        queue = _batching_queue(
            capacity, tensor_list, shapes, enqueue_many, dynamic_pad, shared_name
        )
        return _batch_on(
            queue, tensor_list, tensors, batch_size, num_threads, enqueue_many,
            allow_smaller_final_batch, scope,
        )  # fmt: skip


def shuffle_batch(
    tensors,
    batch_size,
    capacity,
    min_after_dequeue,
    num_threads: int = 1,
    seed: Optional[int] = None,
    enqueue_many: bool = False,
    shapes=None,
    allow_smaller_final_batch: bool = False,
    shared_name: Optional[str] = None,
    name: Optional[str] = None,
):
    """Batches of ``batch_size`` examples drawn at random from a buffer that keeps at least
    ``min_after_dequeue`` of them (until the feeding threads are done)."""
    with name_scope(name or "shuffle_batch") as scope:
        tensor_list = [convert_to_tensor(t) for t in _as_tensor_list(tensors)]
        queue = RandomShuffleQueue(
            capacity=capacity,
            min_after_dequeue=min_after_dequeue,
            seed=seed,
            dtypes=[t.dtype for t in tensor_list],
            shapes=_queue_shapes(tensor_list, shapes, enqueue_many),
            shared_name=shared_name,
        )
        return _batch_on(
            queue, tensor_list, tensors, batch_size, num_threads, enqueue_many,
            allow_smaller_final_batch, scope,
        )  # fmt: skip


def _join_lists(function: str, tensors_list) -> list[list]:
    """The examples of ``tensors_list`` as lists of tensors, checked to match in length and
    dtypes (each becomes the enqueue of its own feeding thread)."""
    if not tensors_list:
        raise ValueError(f"Expected at least one input in {function}().")
    lists = [[convert_to_tensor(t) for t in _as_tensor_list(ts)] for ts in tensors_list]
    first = [t.dtype for t in lists[0]]
    for other in lists[1:]:
        if [t.dtype for t in other] != first:
            raise TypeError(
                f"{function}: every element of tensors_list must have the dtypes {first}, got "
                f"{[t.dtype for t in other]}"
            )
    return lists


def _join_on(queue, lists, original, batch_size, enqueue_many, smaller, name, keep=None):
    enqueues = [_enqueue_op(queue, tl, enqueue_many, keep) for tl in lists]
    add_queue_runner(QueueRunner(queue, enqueues))
    if smaller:
        dequeued = queue.dequeue_up_to(batch_size, name=name)
    else:
        dequeued = queue.dequeue_many(batch_size, name=name)
    return _as_original_type(original, dequeued)


def batch_join(
    tensors_list,
    batch_size,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes=None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: Optional[str] = None,
    name: Optional[str] = None,
):
    """Batches of examples from several sources: each element of ``tensors_list`` (one
    example's tensors, as ``batch`` takes) is enqueued by a thread of its own, so readers of
    different files fill one queue."""
    with name_scope(name or "batch_join") as scope:
        lists = _join_lists("batch_join", tensors_list)
        queue = _batching_queue(capacity, lists[0], shapes, enqueue_many, dynamic_pad, shared_name)
        return _join_on(
            queue, lists, tensors_list[0], batch_size, enqueue_many, allow_smaller_final_batch,
            scope,
        )  # fmt: skip


def shuffle_batch_join(
    tensors_list,
    batch_size,
    capacity,
    min_after_dequeue,
    seed: Optional[int] = None,
    enqueue_many: bool = False,
    shapes=None,
    allow_smaller_final_batch: bool = False,
    shared_name: Optional[str] = None,
    name: Optional[str] = None,
):
    """`shuffle_batch` of examples from several sources, each element of ``tensors_list``
    enqueued by a thread of its own."""
    with name_scope(name or "shuffle_batch_join") as scope:
        lists = _join_lists("shuffle_batch_join", tensors_list)
        queue = RandomShuffleQueue(
            capacity=capacity,
            min_after_dequeue=min_after_dequeue,
            seed=seed,
            dtypes=[t.dtype for t in lists[0]],
            shapes=_queue_shapes(lists[0], shapes, enqueue_many),
            shared_name=shared_name,
        )
        return _join_on(
            queue, lists, tensors_list[0], batch_size, enqueue_many, allow_smaller_final_batch,
            scope,
        )  # fmt: skip


def maybe_batch(
    tensors,
    keep_input,
    batch_size,
    num_threads: int = 1,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes=None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: Optional[str] = None,
    name: Optional[str] = None,
):
    """`batch` of the examples ``keep_input`` keeps: a bool scalar keeps or drops the example
    (or, with ``enqueue_many``, the whole batch); a bool vector (with ``enqueue_many``) keeps
    the examples whose entry is true."""
    with name_scope(name or "batch") as scope:
        tensor_list = [convert_to_tensor(t) for t in _as_tensor_list(tensors)]
        keep = _validate_keep_input(keep_input, enqueue_many)
        queue = _batching_queue(
            capacity, tensor_list, shapes, enqueue_many, dynamic_pad, shared_name
        )
        return _batch_on(
            queue, tensor_list, tensors, batch_size, num_threads, enqueue_many,
            allow_smaller_final_batch, scope, keep,
        )  # fmt: skip


def maybe_batch_join(
    tensors_list,
    keep_input,
    batch_size,
    capacity: int = 32,
    enqueue_many: bool = False,
    shapes=None,
    dynamic_pad: bool = False,
    allow_smaller_final_batch: bool = False,
    shared_name: Optional[str] = None,
    name: Optional[str] = None,
):
    """`batch_join` of the examples ``keep_input`` keeps (as `maybe_batch`)."""
    with name_scope(name or "batch_join") as scope:
        lists = _join_lists("maybe_batch_join", tensors_list)
        keep = _validate_keep_input(keep_input, enqueue_many)
        queue = _batching_queue(capacity, lists[0], shapes, enqueue_many, dynamic_pad, shared_name)
        return _join_on(
            queue, lists, tensors_list[0], batch_size, enqueue_many, allow_smaller_final_batch,
            scope, keep,
        )  # fmt: skip


def maybe_shuffle_batch(
    tensors,
    batch_size,
    capacity,
    min_after_dequeue,
    keep_input,
    num_threads: int = 1,
    seed: Optional[int] = None,
    enqueue_many: bool = False,
    shapes=None,
    allow_smaller_final_batch: bool = False,
    shared_name: Optional[str] = None,
    name: Optional[str] = None,
):
    """`shuffle_batch` of the examples ``keep_input`` keeps (as `maybe_batch`)."""
    with name_scope(name or "shuffle_batch") as scope:
        tensor_list = [convert_to_tensor(t) for t in _as_tensor_list(tensors)]
        keep = _validate_keep_input(keep_input, enqueue_many)
        queue = RandomShuffleQueue(
            capacity=capacity,
            min_after_dequeue=min_after_dequeue,
            seed=seed,
            dtypes=[t.dtype for t in tensor_list],
            shapes=_queue_shapes(tensor_list, shapes, enqueue_many),
            shared_name=shared_name,
        )
        return _batch_on(
            queue, tensor_list, tensors, batch_size, num_threads, enqueue_many,
            allow_smaller_final_batch, scope, keep,
        )  # fmt: skip


def maybe_shuffle_batch_join(
    tensors_list,
    batch_size,
    capacity,
    min_after_dequeue,
    keep_input,
    seed: Optional[int] = None,
    enqueue_many: bool = False,
    shapes=None,
    allow_smaller_final_batch: bool = False,
    shared_name: Optional[str] = None,
    name: Optional[str] = None,
):
    """`shuffle_batch_join` of the examples ``keep_input`` keeps (as `maybe_batch`)."""
    with name_scope(name or "shuffle_batch_join") as scope:
        lists = _join_lists("maybe_shuffle_batch_join", tensors_list)
        keep = _validate_keep_input(keep_input, enqueue_many)
        queue = RandomShuffleQueue(
            capacity=capacity,
            min_after_dequeue=min_after_dequeue,
            seed=seed,
            dtypes=[t.dtype for t in lists[0]],
            shapes=_queue_shapes(lists[0], shapes, enqueue_many),
            shared_name=shared_name,
        )
        return _join_on(
            queue, lists, tensors_list[0], batch_size, enqueue_many, allow_smaller_final_batch,
            scope, keep,
        )  # fmt: skip

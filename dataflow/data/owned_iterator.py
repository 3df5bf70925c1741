"""Python-style iteration of a dataset, as TF2 programs read one: `OwnedIterator`, what
``iter(dataset)`` (and so ``for x in dataset``) gives.

In eager mode the iterator runs the dataset's pipeline in Python from its first element when it
is made: ``next`` gives each element as eager tensors in the dataset's structure (tuples,
dicts, namedtuples; sparse and ragged leaves as such tensors) and raises ``StopIteration``
after the last, so a new ``for`` loop starts the dataset again.  Inside a ``df.function`` (or
wherever ops are built into a graph, as a loop AutoGraph stages over a dataset) the iterator is
made of the graph's iterator ops: ``AnonymousIterator`` (a state of its own each time it runs,
so calls and the iterations of an enclosing loop never share one) and ``MakeIterator``, which
starts it; every read (``IteratorGetNext``, ``IteratorGetNextAsOptional``) takes the handle
through an ``Identity`` that waits for the start, so no read runs before it whatever the order
of the ops.  ``next`` then builds the read of an element, which fails with ``OutOfRangeError``
when the graph runs past the last one, as TensorFlow's.

Invariant: an eager iterator's functions (``map``, ``filter``) run in Sessions the iterator
owns and closes when it is dropped; a graph iterator's state is the value of its handle, and
lives as long as the run of the graph that made it.
"""

from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

from ..eager.autograph.operators import running_converted_code
from ..eager.context import executing_eagerly
from ..eager.tensor import EagerTensor
from ..framework import dtypes as _dtypes
from ..framework.errors import OutOfRangeError
from ..framework.graph import _user_location, control_dependencies, get_default_graph
from ..framework.op_registry import apply_op
from ..ops.array_ops import identity
from .dataset_ops import Dataset, Iterator, _pack, register_python_iteration
from .iterator_ops import _EagerElements
from .structures import Optional as DatasetOptional
from .structures import _missing, get_next_as_optional

__all__ = ["OwnedIterator"]

# How many reads of a graph iterator ``next`` builds outside converted code before it refuses
# (TensorFlow's ``GET_NEXT_CALL_ERROR_THRESHOLD``).
_GRAPH_READS_WITHOUT_AUTOGRAPH = 32


class OwnedIterator:
    """An iterator over the elements of a dataset, from its first (see the module docstring).

    ``next(iterator)`` (or ``iterator.next()``) gives the next element, raising
    ``StopIteration`` after the last in eager mode; ``get_next()`` raises ``OutOfRangeError``
    there instead; ``get_next_as_optional()`` gives a `df.data.experimental.Optional`, which
    has no value past the end.  ``element_spec`` is the dataset's.

    An iterator made eagerly and read while a function is traced (a closure over it, or an
    argument) is read by the function's graph: its handle, an eager tensor that holds its
    state, becomes an input of the trace, so each call reads on from where the iterator is."""

    def __init__(self, dataset: Dataset):
        if not isinstance(dataset, Dataset):
            raise TypeError(f"OwnedIterator takes a Dataset, got {type(dataset).__name__}")
        self._structure = dataset._structure
        self._types = list(dataset._types)
        self._shapes = list(dataset._shapes)
        self._output_meta = (dataset.output_types, dataset.output_shapes, dataset.output_classes)
        self._element_spec = dataset.element_spec
        self._eager_elements: Optional[_EagerElements] = None
        # Per graph being built, the TF1 iterator whose ops read this one there.
        self._graph_iterators: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._graph_reads = 0  # reads built by ``next`` outside converted code
        if executing_eagerly():
            self._eager_elements = _EagerElements(dataset, "Iterating a dataset")
            handle = np.empty((), dtype=object)
            handle[()] = self._eager_elements.state
            self._handle = EagerTensor(handle, _dtypes.resource, "AnonymousIterator")
        else:
            self._graph_iterators[get_default_graph()] = _started_in_graph(dataset)

    @property
    def element_spec(self):
        return self._element_spec

    def __iter__(self) -> OwnedIterator:
        return self

    def __next__(self):
        if self._reads_eagerly():
            flat = next(self._eager_elements)  # StopIteration past the last element
            return self._as_eager_element(flat)
        self._count_graph_reads()
        return self._in_graph().get_next()

    def next(self):
        return self.__next__()

    def get_next(self, name: Optional[str] = None):
        """The next element; past the last one, ``OutOfRangeError`` (at once in eager mode,
        when the graph runs otherwise)."""
        if not self._reads_eagerly():
            return self._in_graph().get_next(name)
        try:
            flat = next(self._eager_elements)
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None
        return self._as_eager_element(flat)

    def get_next_as_optional(self):
        """The next element as an ``Optional``, without a value past the last one."""
        if not self._reads_eagerly():
            return get_next_as_optional(self._in_graph())
        try:
            flat = next(self._eager_elements)
            has_value = True
        except StopIteration:
            attrs = {"output_types": self._types, "output_shapes": self._shapes}
            flat, has_value = _missing(attrs), False
        values = [EagerTensor(v, t, "IteratorGetNextAsOptional", i + 1) for i, (v, t) in
                  enumerate(zip(flat, self._types))]  # fmt: skip
        flag = EagerTensor(np.asarray(has_value), _dtypes.bool, "IteratorGetNextAsOptional")
        return DatasetOptional(flag, values, self._element_spec)

    def _reads_eagerly(self) -> bool:
        return self._eager_elements is not None and executing_eagerly()

    def _in_graph(self) -> Iterator:
        """The TF1 iterator whose ops read this iterator in the graph being built: for an
        iterator made eagerly, one over its handle (which the graph captures)."""
        graph = get_default_graph()
        iterator = self._graph_iterators.get(graph)
        if iterator is None:
            if self._eager_elements is None:
                raise ValueError(
                    f"This iterator was made in another graph ({_user_location()}): an "
                    "iterator made in a function is read in that function only"
                )
            iterator = Iterator(self._handle, None, *self._output_meta)
            self._graph_iterators[graph] = iterator
        return iterator

    def _count_graph_reads(self) -> None:
        """Refuses, as TensorFlow does, the 33rd read built by Python outside converted code:
        a Python ``for`` over a dataset in a function traced without AutoGraph, which would
        otherwise build reads without end."""
        if running_converted_code():
            return
        self._graph_reads += 1
        if self._graph_reads > _GRAPH_READS_WITHOUT_AUTOGRAPH:
            raise ValueError(
                "An unusually high number of `tf.data.Iterator.get_next()` calls was detected. "
                "This suggests that the `for elem in dataset: ...` idiom is used within "
                "tf.function with AutoGraph disabled. This idiom is only supported when "
                "AutoGraph is enabled."
            )

    def _as_eager_element(self, flat: list):
        tensors = [
            EagerTensor(value, dtype, "IteratorGetNext", index)
            for index, (value, dtype) in enumerate(zip(flat, self._types))
        ]
        return _pack(self._structure, tensors)

    def _reader_in_graph(self):
        """What a loop AutoGraph stages over this iterator reads with, in the graph being
        built (see `autograph.operators.register_read_in_graph`): a function building
        ``(has_value, components)``, one packing components into an element, and one that makes
        the reads built after the loop wait for it to end (a tensor ready then): the loop's
        reads are in a frame of their own, which the ordering of the function's ops does not
        reach."""
        graph = get_default_graph()

        def read():
            optional = get_next_as_optional(self._in_graph())
            return optional._has_value, list(optional._values)

        def pack(components: list):
            return _pack(self._structure, components)

        def finish(done):
            iterator = self._in_graph()
            with control_dependencies([done]):
                handle = identity(iterator._handle, name="iterator_after_loop")
            self._graph_iterators[graph] = _with_handle(iterator, handle)

        return read, pack, finish

    def __del__(self):
        elements = getattr(self, "_eager_elements", None)
        if elements is not None:
            elements.close()

    def __repr__(self) -> str:
        where = "eager" if self._eager_elements is not None else "graph"
        return f"<OwnedIterator ({where}) element_spec={self._element_spec!r}>"


def _started_in_graph(dataset: Dataset) -> Iterator:
    """An iterator over ``dataset`` built into the default graph and started there: an
    ``AnonymousIterator`` (a state of its own each time it runs), read through an Identity of
    its handle that waits for ``MakeIterator``."""
    anonymous = apply_op("AnonymousIterator", (), {}, name="AnonymousIterator").outputs[0]
    iterator = Iterator(
        anonymous, None, dataset.output_types, dataset.output_shapes, dataset.output_classes
    )
    start = iterator.make_initializer(dataset)
    with control_dependencies([start]):
        handle = identity(iterator._handle, name="started_iterator")
    return Iterator(
        handle, start, dataset.output_types, dataset.output_shapes, dataset.output_classes
    )


def _with_handle(iterator: Iterator, handle) -> Iterator:
    """``iterator`` read through ``handle`` (an Identity of its handle that waits for
    something)."""
    return Iterator(
        handle,
        iterator._initializer,
        iterator.output_types,
        iterator.output_shapes,
        iterator.output_classes,
    )


register_python_iteration(iterator=OwnedIterator)

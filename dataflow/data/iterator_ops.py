"""Iterators at run time: the state of an iterator (its position in the pipeline's run, kept in
the Session's resources), the ops that make, initialize and advance one (``MakeIterator``,
``IteratorGetNext``, ...), and their checks of each element against the iterator's spec."""

from __future__ import annotations

import threading

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
)
from ..framework.op_registry import define_op
from .pipeline import (
    _describe_pipeline,
    _run_pipeline,
    _threading_of,
)

# -- iterators at run time -------------------------------------------------------------------------
_END = object()  # what `_IteratorState.next_or_end` gives past the last element


class _IteratorState:
    """An iterator's position in one Session: the running pipeline, or None before it starts."""

    def __init__(self, name: str):
        self.name = name
        self.lock = threading.Lock()
        self.elements = None
        self.sessions: dict = {}  # the Sessions of the pipeline's functions

    def start(self, records, arrays, only_once: bool = False, threading=None) -> None:
        """Runs the pipeline ``records`` describe from its start (with ``only_once``, unless it
        was started already: a one-shot iterator); ``threading`` is the dataset's
        ``(private_threadpool_size, max_intra_op_parallelism)`` options."""
        with self.lock:
            if not (only_once and self.elements is not None):
                self.sessions[("threading",)] = threading
                self.records, self.arrays = records, list(arrays)
                self.elements = _run_pipeline(records, self.arrays, self.sessions)
                self.consumed = 0  # the reads since the start, failed ones too

    def next(self) -> tuple:
        """The next element (``OutOfRangeError`` past the last)."""
        element = self.next_or_end()
        if element is _END:
            raise OutOfRangeError(None, None, "End of sequence")
        return element

    def next_or_end(self):
        """The next element, or `_END` past the last."""
        with self.lock:
            if self.elements is None:
                raise FailedPreconditionError(
                    None,
                    None,
                    "GetNext() failed because the iterator has not been initialized. Ensure "
                    "that you have run the initializer operation for this iterator before "
                    "getting the next element.",
                )
            try:
                element = next(self.elements)
            except StopIteration:
                return _END
            except Exception:
                self.consumed += 1
                raise
            self.consumed += 1
            return element

    def replay(self, consumed: int) -> None:
        """Runs the pipeline again from its start and reads ``consumed`` times: the position
        a saved iterator had (`make_saveable_from_iterator`)."""
        with self.lock:
            self.elements = _run_pipeline(self.records, self.arrays, self.sessions)
            self.consumed = 0
            for _ in range(consumed):
                try:
                    next(self.elements)
                except StopIteration:
                    break
                except Exception:  # noqa: S112 - the read failed then too; the position moves
                    pass
                finally:
                    self.consumed += 1

    def cancel(self) -> None:
        for key, session in self.sessions.items():
            if not isinstance(key, tuple):  # ("feed", slot) keys hold window elements
                session.close()


def _state(context, handle) -> _IteratorState:
    """The state an iterator handle names: a TF1 iterator's handle is the key of its state
    among the run context's resources (one per Session); an anonymous iterator's handle is its
    state itself (as an eager iterator's, fed to a function, holds it in a 0-d array)."""
    if isinstance(handle, np.ndarray) and handle.dtype == object and handle.ndim == 0:
        handle = handle[()]
    if isinstance(handle, _IteratorState):
        return handle
    return context.resource(handle, lambda: _IteratorState(handle))


def _infer_handle(op):
    return [(_dtypes.resource, ())]


define_op(
    "IteratorV2",
    _infer_handle,
    lambda attrs: lambda: attrs["shared_name"],
    stateful=True,
    inline=True,
)


# An iterator of its own each time it runs (TensorFlow's ``AnonymousIteratorV3``): the handle is
# a new, unstarted state, which lives as long as the run holds the handle.  What TF2's
# ``iter(dataset)`` makes in a function: a call (or an iteration of an enclosing loop) never
# shares it with another, as two runs of an ``IteratorV2`` of one name would.
define_op(
    "AnonymousIterator",
    _infer_handle,
    lambda attrs: lambda: _IteratorState("AnonymousIterator"),
    stateful=True,
    inline=True,
)


def _infer_make_iterator(op):
    return []


def _make_iterator_kernel(attrs):
    records = attrs["pipeline"]

    def make_iterator(context, key, *arrays):
        _state(context, key).start(records, arrays, threading=attrs.get("threading"))
        return ()

    return make_iterator


define_op(
    "MakeIterator",
    _infer_make_iterator,
    _make_iterator_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)


def _infer_get_next(op):
    return list(zip(op.attrs["output_types"], op.attrs["output_shapes"]))


def _check_element(element: tuple, attrs: dict) -> tuple:
    values = _checked_components(element, attrs)
    return values[0] if len(values) == 1 else tuple(values)


def _checked_components(element: tuple, attrs: dict) -> list:
    """The flat components of ``element`` as arrays of the iterator's dtypes
    (``attrs["output_types"]``), each checked against its shape (``attrs["output_shapes"]``)."""
    values = []
    for value, dtype, shape in zip(element, attrs["output_types"], attrs["output_shapes"]):
        value = np.asarray(value, dtype=_dtypes.numpy_dtype(dtype))
        if not shape.is_compatible_with(value.shape):
            raise InvalidArgumentError(
                None,
                None,
                f"An element of shape {list(value.shape)} does not match the iterator's shape "
                f"{shape}",
            )
        values.append(value)
    return values


def _get_next_kernel(attrs):
    def get_next(context, key):
        return _check_element(_state(context, key).next(), attrs)

    return get_next


def _one_shot_get_next_kernel(attrs):
    records = attrs["pipeline"]
    key = attrs["shared_name"]

    def get_next(context, *arrays):
        state = _state(context, key)
        state.start(records, arrays, only_once=True, threading=attrs.get("threading"))
        return _check_element(state.next(), attrs)

    return get_next


define_op(
    "IteratorGetNext",
    _infer_get_next,
    _get_next_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)


define_op(
    "OneShotIteratorGetNext",
    _infer_get_next,
    _one_shot_get_next_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)


# -- reading a dataset in Python -------------------------------------------------------------------
class _EagerElements:
    """The elements of a dataset made eagerly, read in Python (TF2's ``for x in dataset``):
    the pipeline runs from its start when this is made, in ``state`` (an `_IteratorState`,
    which a graph may read too: it is what an eager iterator's handle holds), its functions in
    Sessions of their own (closed by `close`); ``next`` gives each element as its flat
    components, arrays checked against the dataset's dtypes and shapes
    (`_checked_components`)."""

    def __init__(self, dataset, what: str):
        records, tensors = _describe_pipeline(dataset._stage)
        arrays = [_eager_value(t, what) for t in tensors]
        self._what = what
        self._attrs = {"output_types": tuple(dataset._types), "output_shapes": dataset._shapes}
        self.state = _IteratorState("OwnedIterator")
        try:
            self.state.start(records, arrays, threading=_threading_of(dataset))
        except OpError as e:  # a stage that fails as it starts (a batch size of 0)
            raise self._located(e) from None

    def __iter__(self):
        return self

    def __next__(self) -> list:
        """The next element's components; ``StopIteration`` after the last.  A failing read
        raises its `OpError`, naming the user's line that asked for the element."""
        try:
            element = self.state.next_or_end()
            if element is _END:
                raise StopIteration
            return _checked_components(element, self._attrs)
        except OpError as e:
            raise self._located(e) from None

    def _located(self, error: OpError) -> OpError:
        from ..framework.graph import _user_location

        message = f"{self._what} at {_user_location()}: {error.message}"
        return type(error)(error.node_def, error.op, message)

    def close(self) -> None:
        self.state.cancel()


def _eager_value(tensor, what: str):
    """The value of a tensor a dataset read eagerly uses (its values are known now)."""
    if not getattr(tensor, "_is_eager", False):
        from ..framework.graph import _user_location

        raise RuntimeError(
            f"{what} at {_user_location()}: the dataset uses the tensor '{tensor.name}' of a "
            "graph, which has no value in eager mode; make the dataset eagerly to read it in "
            "Python, or read it in the graph through an iterator and a Session"
        )
    return tensor._value

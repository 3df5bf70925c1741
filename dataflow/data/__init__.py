"""``df.data``: input pipelines as TF1's ``tf.data`` builds them, read by iterators in a graph.

A `Dataset` is a description, made in Python, of a sequence of elements: where they come from
(``from_tensor_slices``, ``from_tensors``, ``range``) and what is done to them (``map``,
``filter``, ``shuffle``, ``repeat``, ``batch``, ``take``, ``skip``, ``zip``, ``concatenate``,
``prefetch``).  An element is a nested structure (tuples, dicts, namedtuples) of arrays; as in
TensorFlow, a Python list given to ``from_tensor_slices`` is one tensor, not a structure.

Nothing runs until an iterator is read in a Session:

- ``dataset.make_one_shot_iterator()`` (or ``df.data.make_one_shot_iterator(dataset)``) starts
  the first time its ``get_next()`` runs and is read once per Session;
- ``dataset.make_initializable_iterator()`` starts (again) whenever its ``initializer`` runs, so
  a dataset made from placeholders is fed there;
- ``Iterator.from_structure(types, shapes)`` is started on any dataset of that structure by
  ``iterator.make_initializer(dataset)``.

``get_next()`` gives the next element; past the last one it raises ``OutOfRangeError``, as in
TensorFlow.  The iterator's position lives in the Session (`RunContext.resource`), not in the
graph, and moves when ``get_next`` runs, whether or not the run succeeds.

The graph holds the pipeline as ops: the iterator's initializer (``MakeIterator``, or for a
one-shot iterator its ``IteratorGetNext``) takes every tensor the pipeline uses as an input (the
sliced arrays, placeholders, batch sizes) and describes the stages in its ``pipeline``
attribute.  A ``map``/``filter`` function is traced once into a graph of its own (placeholders
for the element, its ops) and run by a Session of its own within the iterator; it cannot use
tensors of the outer graph.  A graph whose pipeline has a function cannot be saved with
``df.io`` (the function is Python), like one with ``py_func``.
"""

from __future__ import annotations

import functools
import gzip
import io
import threading
import zlib
from typing import Optional

import numpy as np

from .. import dtypes as _dtypes
from ..errors import FailedPreconditionError, InvalidArgumentError, NotFoundError, OutOfRangeError
from ..graph import Graph, Tensor, convert_to_tensor, name_scope
from ..op_registry import apply_op, define_op
from ..random_seed import get_seed
from ..tensor_shape import TensorShape
from ..tfrecord import read_records

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "FixedLengthRecordDataset",
    "Iterator",
    "TFRecordDataset",
    "TextLineDataset",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "make_initializable_iterator",
    "make_one_shot_iterator",
]


# -- element structures ----------------------------------------------------------------------------
def _is_structure(value) -> bool:
    """Tuples, namedtuples and dicts nest; a list is one tensor (as ``tf.data`` treats it)."""
    return isinstance(value, (tuple, dict))


def _flatten(value) -> list:
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _flatten(value[key])]
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _pack(structure, flat: list):
    """``flat`` in the nesting of ``structure`` (whose leaves are ignored)."""
    position = 0

    def rebuild(s):
        nonlocal position
        if isinstance(s, dict):
            return {key: rebuild(s[key]) for key in sorted(s)}
        if isinstance(s, tuple):
            items = [rebuild(item) for item in s]
            return type(s)(*items) if hasattr(type(s), "_fields") else tuple(items)
        position += 1
        return flat[position - 1]

    return rebuild(structure)


# -- the pipeline as data --------------------------------------------------------------------------
class _Stage:
    """One node of a pipeline: its kind, its tensor inputs, Python parameters and parents."""

    __slots__ = ("kind", "tensors", "params", "parents", "function")

    def __init__(self, kind, tensors=(), params=None, parents=(), function=None):
        self.kind = kind
        self.tensors = list(tensors)
        self.params = dict(params or {})
        self.parents = list(parents)
        self.function = function


def _describe_pipeline(stage: _Stage) -> tuple[list, list]:
    """(the stages in post-order as records, every tensor input in that order).  A record is
    ``[kind, number of tensor inputs, parent indices, params, function or None]``."""
    records: list = []
    tensors: list = []

    def visit(s: _Stage) -> int:
        parents = [visit(p) for p in s.parents]
        records.append([s.kind, len(s.tensors), parents, s.params, s.function])
        tensors.extend(s.tensors)
        return len(records) - 1

    visit(stage)
    return records, tensors


class _DatasetFunction:
    """A ``map``/``filter`` function traced into its own graph, run by its own Session."""

    def __init__(self, func, element_structure, types, shapes, what: str):
        from ..session import Session  # a front end over the runtime, as a user's program is

        self._session_type = Session
        self.graph = Graph()
        self.what = what
        with self.graph.as_default(), name_scope(what):
            args = [
                apply_op("Placeholder", (), {"dtype": t, "shape": s}, name=f"args_{i}").outputs[0]
                for i, (t, s) in enumerate(zip(types, shapes))
            ]
            element = _pack(element_structure, args)
            if isinstance(element, tuple) and not hasattr(type(element), "_fields"):
                result = func(*element)
            else:
                result = func(element)
            self.structure = result
            self.outputs = [
                r if isinstance(r, Tensor) else convert_to_tensor(r) for r in _flatten(result)
            ]
        self.inputs = args
        self.graph.finalize()

    def __repr__(self) -> str:
        return f"<the function given to Dataset.{self.what}>"

    def __call__(self, values: tuple, sessions: dict) -> list:
        session = sessions.get(id(self))
        if session is None:
            session = sessions[id(self)] = self._session_type(graph=self.graph)
        return session.run(self.outputs, dict(zip(self.inputs, values)))


def _run_pipeline(records: list, arrays: list, sessions: dict):
    """A Python iterator over the elements (tuples of arrays) that ``records`` describe; the
    ``map``/``filter`` functions run in the Sessions kept in ``sessions``."""
    factories: list = []
    position = 0
    for kind, count, parents, params, function in records:
        inputs = arrays[position : position + count]
        position += count
        run = None if function is None else functools.partial(function, sessions=sessions)
        factories.append(
            _STAGE_FACTORIES[kind](inputs, [factories[p] for p in parents], params, run)
        )
    return factories[-1]()


def _slices(inputs, parents, params, function):
    sizes = {np.shape(a)[0] if np.ndim(a) else None for a in inputs}
    if None in sizes or len(sizes) != 1:
        raise InvalidArgumentError(
            None,
            None,
            "from_tensor_slices needs every component to have the same size in dimension 0, "
            f"got shapes {[list(np.shape(a)) for a in inputs]}",
        )
    size = sizes.pop()
    return lambda: (tuple(a[i] for a in inputs) for i in range(size))


def _tensors(inputs, parents, params, function):
    return lambda: iter([tuple(inputs)])


def _range(inputs, parents, params, function):
    start, stop, step = (int(x) for x in inputs)
    if step == 0:
        raise InvalidArgumentError(None, None, "step size in range() must be non-zero")
    return lambda: ((np.int64(i),) for i in range(start, stop, step))


def _batch(inputs, parents, params, function):
    size = int(inputs[0])
    if size <= 0:
        raise InvalidArgumentError(None, None, f"Batch size must be greater than zero, got {size}")
    drop_remainder = params["drop_remainder"]
    (parent,) = parents

    def stack(elements):
        components = []
        for i in range(len(elements[0])):
            first = np.shape(elements[0][i])
            for k, e in enumerate(elements[1:], 1):
                if np.shape(e[i]) != first:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"Cannot batch tensors with different shapes in component {i}. First "
                        f"element had shape {list(first)} and element {k} had shape "
                        f"{list(np.shape(e[i]))}.",
                    )
            components.append(np.stack([e[i] for e in elements]))
        return tuple(components)

    def run():
        pending = []
        for element in parent():
            pending.append(element)
            if len(pending) == size:
                yield stack(pending)
                pending = []
        if pending and not drop_remainder:
            yield stack(pending)

    return run


def _shuffle(inputs, parents, params, function):
    buffer_size = int(inputs[0])
    if buffer_size <= 0:
        raise InvalidArgumentError(
            None, None, f"buffer_size must be greater than zero, got {buffer_size}"
        )
    seed = None if params["seed"] is None else [params["seed"], params["seed2"]]
    reshuffle = params["reshuffle_each_iteration"]
    (parent,) = parents
    rng = np.random.default_rng(seed)

    def run():
        generator = rng if reshuffle or seed is None else np.random.default_rng(seed)
        buffer = []
        for element in parent():
            buffer.append(element)
            if len(buffer) == buffer_size:
                k = int(generator.integers(len(buffer)))
                buffer[k], buffer[-1] = buffer[-1], buffer[k]
                yield buffer.pop()
        while buffer:
            k = int(generator.integers(len(buffer)))
            buffer[k], buffer[-1] = buffer[-1], buffer[k]
            yield buffer.pop()

    return run


def _repeat(inputs, parents, params, function):
    count = int(inputs[0])
    (parent,) = parents

    def run():
        done = 0
        while count < 0 or done < count:
            empty = True
            for element in parent():
                empty = False
                yield element
            done += 1
            if empty:
                return  # repeating nothing forever is nothing

    return run


def _take(inputs, parents, params, function):
    count = int(inputs[0])
    (parent,) = parents

    def run():
        if count == 0:
            return
        for i, element in enumerate(parent()):
            yield element
            if i + 1 == count:
                return

    return run


def _skip(inputs, parents, params, function):
    count = int(inputs[0])
    (parent,) = parents

    def run():
        for i, element in enumerate(parent()):
            if count < 0 or i < count:
                continue
            yield element

    return run


def _map(inputs, parents, params, function):
    (parent,) = parents
    return lambda: (tuple(function(element)) for element in parent())


def _filter(inputs, parents, params, function):
    (parent,) = parents

    def keep(element) -> bool:
        (verdict,) = function(element)
        return bool(verdict)

    return lambda: (element for element in parent() if keep(element))


def _take_while(inputs, parents, params, function):
    (parent,) = parents

    def run():
        for element in parent():
            (verdict,) = function(element)
            if not verdict:
                return
            yield element

    return run


def _unbatch(inputs, parents, params, function):
    (parent,) = parents

    def run():
        for element in parent():
            sizes = {np.shape(part)[0] for part in element}
            if len(sizes) > 1:
                raise InvalidArgumentError(
                    None,
                    None,
                    "Input element must have the same batch size in each component; got "
                    f"sizes {sorted(sizes)}",
                )
            for i in range(sizes.pop() if sizes else 0):
                yield tuple(part[i] for part in element)

    return run


def _zip(inputs, parents, params, function):
    def run():
        for elements in zip(*(p() for p in parents)):
            yield tuple(leaf for element in elements for leaf in element)

    return run


def _concatenate(inputs, parents, params, function):
    def run():
        for parent in parents:
            yield from parent()

    return run


def _prefetch(inputs, parents, params, function):
    return parents[0]


def _text_lines(inputs, parents, params, function):
    files = [f.decode() if isinstance(f, bytes) else str(f) for f in np.ravel(inputs[0])]
    compression = np.asarray(inputs[1]).item()
    compression = compression.decode() if isinstance(compression, bytes) else str(compression)
    if compression not in ("", "GZIP", "ZLIB"):
        raise InvalidArgumentError(
            None, None, f"Unsupported compression_type: {compression} (ZLIB, GZIP or '')"
        )

    def lines_of(path: str):
        try:
            if compression == "GZIP":
                opened = gzip.open(path, "rb")
            else:
                opened = open(path, "rb")  # noqa: SIM115 - closed by the with below
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{path}; No such file or directory") from None
        with opened as f:
            if compression == "ZLIB":
                f = io.BytesIO(zlib.decompress(f.read()))
            for line in f:  # as TensorFlow: without the "\n" or "\r\n" that ends it
                line = line[:-1] if line.endswith(b"\n") else line
                yield (line[:-1] if line.endswith(b"\r") else line,)

    return lambda: (line for path in files for line in lines_of(path))


def _tf_records(inputs, parents, params, function):
    files = [f.decode() if isinstance(f, bytes) else str(f) for f in np.ravel(inputs[0])]
    compression = np.asarray(inputs[1]).item()
    compression = compression.decode() if isinstance(compression, bytes) else str(compression)
    if compression not in ("", "GZIP", "ZLIB"):
        raise InvalidArgumentError(
            None, None, f"Unsupported compression_type: {compression} (ZLIB, GZIP or '')"
        )
    return lambda: ((record,) for path in files for record in read_records(path, compression))


def _fixed_length_records(inputs, parents, params, function):
    files = [f.decode() if isinstance(f, bytes) else str(f) for f in np.ravel(inputs[0])]
    record, header, footer = (int(np.asarray(v).item()) for v in inputs[1:4])
    compression = np.asarray(inputs[4]).item()
    compression = compression.decode() if isinstance(compression, bytes) else str(compression)
    if compression not in ("", "GZIP", "ZLIB"):
        raise InvalidArgumentError(
            None, None, f"Unsupported compression_type: {compression} (ZLIB, GZIP or '')"
        )
    if record <= 0 or header < 0 or footer < 0:
        raise InvalidArgumentError(
            None, None, "record_bytes must be positive; header_bytes and footer_bytes not negative"
        )

    def records_of(path: str):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{path}; No such file or directory") from None
        if compression == "GZIP":
            data = gzip.decompress(data)
        elif compression == "ZLIB":
            data = zlib.decompress(data)
        body = len(data) - header - footer
        if body < 0 or body % record:
            raise InvalidArgumentError(
                None,
                None,
                f"Excluding the header ({header} bytes) and footer ({footer} bytes), input file "
                f'"{path}" has body length {body} bytes, which is not an exact multiple of the '
                f"record length ({record} bytes).",
            )
        for start in range(header, header + body, record):
            yield (data[start : start + record],)

    return lambda: (r for path in files for r in records_of(path))


STAGE_KINDS = _STAGE_FACTORIES = {
    "slices": _slices,
    "tensors": _tensors,
    "range": _range,
    "batch": _batch,
    "shuffle": _shuffle,
    "repeat": _repeat,
    "take": _take,
    "skip": _skip,
    "map": _map,
    "filter": _filter,
    "take_while": _take_while,
    "unbatch": _unbatch,
    "zip": _zip,
    "concatenate": _concatenate,
    "prefetch": _prefetch,
    "text_lines": _text_lines,
    "tf_records": _tf_records,
    "fixed_length_records": _fixed_length_records,
}


# -- iterators at run time -------------------------------------------------------------------------
class _IteratorState:
    """An iterator's position in one Session: the running pipeline, or None before it starts."""

    def __init__(self, name: str):
        self.name = name
        self.lock = threading.Lock()
        self.elements = None
        self.sessions: dict = {}  # the Sessions of the pipeline's functions

    def start(self, records, arrays, only_once: bool = False) -> None:
        """Runs the pipeline ``records`` describe from its start (with ``only_once``, unless it
        was started already: a one-shot iterator)."""
        with self.lock:
            if not (only_once and self.elements is not None):
                self.elements = _run_pipeline(records, list(arrays), self.sessions)

    def next(self) -> tuple:
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
                return next(self.elements)
            except StopIteration:
                raise OutOfRangeError(None, None, "End of sequence") from None

    def cancel(self) -> None:
        for session in self.sessions.values():
            session.close()


def _state(context, key: str) -> _IteratorState:
    return context.resource(key, lambda: _IteratorState(key))


def _infer_handle(op):
    return [(_dtypes.resource, ())]


define_op(
    "IteratorV2",
    _infer_handle,
    lambda attrs: lambda: attrs["shared_name"],
    stateful=True,
    inline=True,
)


def _infer_make_iterator(op):
    return []


def _make_iterator_kernel(attrs):
    records = attrs["pipeline"]

    def make_iterator(context, key, *arrays):
        _state(context, key).start(records, arrays)
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
    return values[0] if len(values) == 1 else tuple(values)


def _get_next_kernel(attrs):
    def get_next(context, key):
        return _check_element(_state(context, key).next(), attrs)

    return get_next


def _one_shot_get_next_kernel(attrs):
    records = attrs["pipeline"]
    key = attrs["shared_name"]

    def get_next(context, *arrays):
        state = _state(context, key)
        state.start(records, arrays, only_once=True)
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


# -- Dataset ---------------------------------------------------------------------------------------
def _int64(value, name: str) -> Tensor:
    return convert_to_tensor(value, dtype=_dtypes.int64, name=name)


class Dataset:
    """A description of a sequence of elements (see the module docstring)."""

    def __init__(self, stage: _Stage, structure, types: list, shapes: list):
        self._stage = stage
        self._structure = structure
        self._types = list(types)
        self._shapes = [TensorShape(s) for s in shapes]

    # -- structure --------------------------------------------------------------------------------
    @property
    def output_types(self):
        return _pack(self._structure, self._types)

    @property
    def output_shapes(self):
        return _pack(self._structure, self._shapes)

    @property
    def output_classes(self):
        return _pack(self._structure, [Tensor] * len(self._types))

    def _derived(self, kind, tensors=(), params=None, function=None, structure=None,
                 types=None, shapes=None) -> Dataset:  # fmt: skip
        stage = _Stage(kind, tensors, params, [self._stage], function)
        return Dataset(
            stage,
            self._structure if structure is None else structure,
            self._types if types is None else types,
            self._shapes if shapes is None else shapes,
        )

    # -- sources ----------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors) -> Dataset:
        """The rows (slices along dimension 0) of ``tensors``, one element per row."""
        with name_scope("TensorSliceDataset"):
            flat = [convert_to_tensor(t, name=f"component_{i}") for i, t in enumerate(
                _flatten(tensors))]  # fmt: skip
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError(
                    f"from_tensor_slices needs tensors of rank 1 or more, got {t.name} of shape ()"
                )
        shapes = [t.shape[1:] if t.shape.ndims is not None else TensorShape(None) for t in flat]
        return Dataset(_Stage("slices", flat), tensors, [t.dtype for t in flat], shapes)

    @staticmethod
    def from_tensors(tensors) -> Dataset:
        """One element: ``tensors`` whole."""
        with name_scope("TensorDataset"):
            flat = [convert_to_tensor(t, name=f"component_{i}") for i, t in enumerate(
                _flatten(tensors))]  # fmt: skip
        return Dataset(_Stage("tensors", flat), tensors, [t.dtype for t in flat],
                       [t.shape for t in flat])  # fmt: skip

    @staticmethod
    def range(*args) -> Dataset:
        """``range(stop)``, ``range(start, stop)`` or ``range(start, stop, step)`` as int64."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 arguments, got {len(args)}")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        with name_scope("RangeDataset"):
            tensors = [_int64(start, "start"), _int64(stop, "stop"), _int64(step, "step")]
        return Dataset(_Stage("range", tensors), 0, [_dtypes.int64], [TensorShape([])])

    @staticmethod
    def zip(datasets) -> Dataset:
        """Elements made of one element of each of ``datasets`` (a tuple or dict of them)."""
        members = _flatten(datasets)
        if not all(isinstance(d, Dataset) for d in members):
            raise TypeError("Dataset.zip takes a (nested) tuple or dict of Datasets")
        stage = _Stage("zip", parents=[d._stage for d in members])
        structure = _pack(datasets, [d._structure for d in members])
        types = [t for d in members for t in d._types]
        shapes = [s for d in members for s in d._shapes]
        return Dataset(stage, structure, types, shapes)

    # -- transformations --------------------------------------------------------------------------
    def batch(self, batch_size, drop_remainder: bool = False) -> Dataset:
        """Elements of ``batch_size`` consecutive elements stacked (the last one smaller unless
        ``drop_remainder``)."""
        size = _int64(batch_size, "batch_size")
        known = int(size.op.attrs["value"]) if size.op.type == "Const" else None
        outer = known if drop_remainder and known is not None else None
        shapes = [TensorShape([outer]).concatenate(s) for s in self._shapes]
        return self._derived("batch", [size], {"drop_remainder": bool(drop_remainder)},
                             shapes=shapes)  # fmt: skip

    def shuffle(self, buffer_size, seed: Optional[int] = None,
                reshuffle_each_iteration: Optional[bool] = None) -> Dataset:  # fmt: skip
        """Elements drawn at random from a buffer of ``buffer_size`` of them."""
        seed, seed2 = get_seed(seed)
        params = {
            "seed": seed,
            "seed2": seed2,
            "reshuffle_each_iteration": True
            if reshuffle_each_iteration is None
            else bool(reshuffle_each_iteration),
        }
        return self._derived("shuffle", [_int64(buffer_size, "buffer_size")], params)

    def repeat(self, count=None) -> Dataset:
        """The elements ``count`` times over (forever when None or -1)."""
        return self._derived("repeat", [_int64(-1 if count is None else count, "count")])

    def take(self, count) -> Dataset:
        """The first ``count`` elements (all when -1)."""
        return self._derived("take", [_int64(count, "count")])

    def skip(self, count) -> Dataset:
        """All but the first ``count`` elements (none when -1)."""
        return self._derived("skip", [_int64(count, "count")])

    def prefetch(self, buffer_size) -> Dataset:
        """The same elements (reading ahead changes nothing here: a run reads them in turn)."""
        return self._derived("prefetch")

    def cache(self, filename: str = "") -> Dataset:
        """The same elements (dataflow recomputes them; only the timing differs)."""
        return self._derived("prefetch")

    def concatenate(self, dataset: Dataset) -> Dataset:
        """This dataset's elements, then ``dataset``'s (of the same structure and types)."""
        if dataset._types != self._types:
            raise TypeError(
                f"Datasets to concatenate have different types {self._types} and {dataset._types}"
            )
        shapes = [
            a.most_specific_compatible_shape(b) for a, b in zip(self._shapes, dataset._shapes)
        ]
        stage = _Stage("concatenate", parents=[self._stage, dataset._stage])
        return Dataset(stage, self._structure, self._types, shapes)

    def map(self, map_func, num_parallel_calls=None) -> Dataset:
        """``map_func`` applied to every element (a tuple element is passed unpacked)."""
        function = _DatasetFunction(map_func, self._structure, self._types, self._shapes, "map")
        return self._derived(
            "map",
            function=function,
            structure=function.structure,
            types=[t.dtype for t in function.outputs],
            shapes=[t.shape for t in function.outputs],
        )

    def filter(self, predicate) -> Dataset:
        """The elements for which ``predicate`` gives True (a scalar bool tensor)."""
        function = _DatasetFunction(predicate, self._structure, self._types, self._shapes, "filter")
        if len(function.outputs) != 1 or function.outputs[0].dtype != _dtypes.bool:
            raise ValueError("`predicate` must return a scalar boolean tensor.")
        return self._derived("filter", function=function)

    def take_while(self, predicate, name: Optional[str] = None) -> Dataset:
        """The elements up to (not including) the first for which ``predicate`` gives
        False."""
        function = _DatasetFunction(
            predicate, self._structure, self._types, self._shapes, "take_while"
        )
        if len(function.outputs) != 1 or function.outputs[0].dtype != _dtypes.bool:
            raise ValueError("`predicate` must return a scalar boolean tensor.")
        return self._derived("take_while", function=function)

    def unbatch(self, name: Optional[str] = None) -> Dataset:
        """Each element split along its first dimension into that many elements (the
        inverse of ``batch``)."""
        if any(s.ndims == 0 for s in self._shapes):
            raise ValueError("Cannot unbatch an input with scalar components.")
        shapes = [TensorShape(None) if s.ndims is None else s[1:] for s in self._shapes]
        return self._derived("unbatch", shapes=shapes)

    # -- iterators --------------------------------------------------------------------------------
    def apply(self, transformation_func) -> Dataset:
        """``transformation_func(self)``, which must be a Dataset (the transformations of
        `df.data.experimental` are such functions)."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(
                f"`transformation_func` must return a Dataset, got {type(result).__name__}"
            )
        return result

    def make_one_shot_iterator(self) -> Iterator:
        return Iterator._one_shot(self)

    def make_initializable_iterator(self, shared_name: Optional[str] = None) -> Iterator:
        iterator = Iterator.from_structure(
            self.output_types, self.output_shapes, shared_name=shared_name
        )
        iterator._initializer = iterator.make_initializer(self)
        return iterator


# -- Iterator --------------------------------------------------------------------------------------
def _get_next_attrs(types, shapes) -> dict:
    return {"output_types": tuple(types), "output_shapes": list(shapes)}


class Iterator:
    """Reads a dataset's elements in a Session (see the module docstring)."""

    def __init__(self, handle, structure, types, shapes, one_shot_dataset=None):
        self._handle = handle
        self._structure = structure
        self._types = list(types)
        self._shapes = list(shapes)
        self._initializer = None
        self._one_shot_dataset = one_shot_dataset

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An iterator for any dataset of this structure, started by `make_initializer`."""
        types = [_dtypes.as_dtype(t) for t in _flatten(output_types)]
        if output_shapes is None:
            shapes = [TensorShape(None)] * len(types)
        else:
            shapes = [TensorShape(s) for s in _flatten_shapes(output_shapes, output_types)]
        with name_scope("Iterator") as scope:
            op_name = scope[:-1]
            handle = apply_op(
                "IteratorV2", (), {"shared_name": shared_name or op_name}, name=op_name + "/"
            ).outputs[0]
        return Iterator(handle, output_types, types, shapes)

    @staticmethod
    def _one_shot(dataset: Dataset) -> Iterator:
        iterator = Iterator(None, dataset._structure, dataset._types, dataset._shapes, dataset)
        with name_scope("OneShotIterator") as scope:
            iterator._one_shot_key = scope[:-1]  # what every get_next of it reads
        return iterator

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError(
                "Iterator does not have an initializer: a one-shot iterator starts by itself, "
                "and one made with Iterator.from_structure is started by make_initializer(dataset)"
            )
        return self._initializer

    @property
    def output_types(self):
        return _pack(self._structure, self._types)

    @property
    def output_shapes(self):
        return _pack(self._structure, self._shapes)

    def make_initializer(self, dataset: Dataset, name: Optional[str] = None):
        """The op that starts this iterator (again) on ``dataset``."""
        if self._handle is None:
            raise ValueError("A one-shot iterator cannot be re-initialized")
        if dataset._types != self._types:
            raise TypeError(
                f"Expected output types {self._types} but got dataset with output types "
                f"{dataset._types}."
            )
        for mine, theirs in zip(self._shapes, dataset._shapes):
            if not mine.is_compatible_with(theirs):
                raise TypeError(
                    f"Expected output shapes compatible with {self._shapes} but got dataset "
                    f"with output shapes {dataset._shapes}."
                )
        records, tensors = _describe_pipeline(dataset._stage)
        return apply_op(
            "MakeIterator",
            [self._handle, *tensors],
            {"pipeline": records},
            name=name or "MakeIterator",
        )

    def get_next(self, name: Optional[str] = None):
        """The next element, a structure of tensors (``OutOfRangeError`` past the end)."""
        attrs = _get_next_attrs(self._types, self._shapes)
        if self._one_shot_dataset is not None:
            records, tensors = _describe_pipeline(self._one_shot_dataset._stage)
            attrs.update(pipeline=records, shared_name=self._one_shot_key)
            op = apply_op("OneShotIteratorGetNext", tensors, attrs, name=name or "IteratorGetNext")
        else:
            op = apply_op("IteratorGetNext", [self._handle], attrs, name=name or "IteratorGetNext")
        return _pack(self._structure, list(op.outputs))


def _flatten_shapes(shapes, types) -> list:
    """Shapes given in the nesting of ``types`` (a shape itself may be a list)."""
    if isinstance(types, dict):
        return [s for key in sorted(types) for s in _flatten_shapes(shapes[key], types[key])]
    if isinstance(types, tuple):
        return [s for t, sub in zip(types, shapes) for s in _flatten_shapes(sub, t)]
    return [shapes]


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    return dataset.make_one_shot_iterator()


def make_initializable_iterator(dataset: Dataset, shared_name: Optional[str] = None) -> Iterator:
    return dataset.make_initializable_iterator(shared_name)


def get_output_types(dataset_or_iterator):
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    """The classes of the components of an element (`Tensor` for each), in its structure."""
    return dataset_or_iterator.output_classes


# -- gradients -------------------------------------------------------------------------------------
from ..gradients import NotDifferentiable  # noqa: E402

for _type in ("IteratorV2", "MakeIterator", "IteratorGetNext", "OneShotIteratorGetNext"):
    NotDifferentiable(_type)


# -- TF1's file datasets and constants ---------------------------------------------------------
AUTOTUNE = -1  # a buffer size (``prefetch``) that the runtime may choose
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class TextLineDataset(Dataset):
    """The lines of the text files ``filenames`` (a string or a vector of them), one string
    element per line without its ``"\\n"``/``"\\r\\n"``, file after file;
    ``compression_type`` is ``""`` (or None), ``"GZIP"`` or ``"ZLIB"``.  ``buffer_size`` and
    ``num_parallel_reads`` tune TensorFlow's reading and change no element."""

    def __init__(
        self,
        filenames,
        compression_type=None,
        buffer_size=None,
        num_parallel_reads=None,
        name: Optional[str] = None,
    ):
        with name_scope(name or "TextLineDataset"):
            files = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
            compression = convert_to_tensor(
                compression_type or "", dtype=_dtypes.string, name="compression_type"
            )
        if files.shape.ndims not in (None, 0, 1):
            raise ValueError(f"filenames must be a string or a vector of them, got {files.shape}")
        stage = _Stage("text_lines", [files, compression])
        super().__init__(stage, 0, [_dtypes.string], [TensorShape([])])


class TFRecordDataset(Dataset):
    """The records of the TFRecord files ``filenames`` (a string or a vector of them), one
    string element per record, file after file; ``compression_type`` is ``""`` (or None),
    ``"GZIP"`` or ``"ZLIB"``.  A corrupted record fails ``get_next`` with `DataLossError`.
    ``buffer_size`` and ``num_parallel_reads`` tune TensorFlow's reading and change no
    element."""

    def __init__(
        self,
        filenames,
        compression_type=None,
        buffer_size=None,
        num_parallel_reads=None,
        name: Optional[str] = None,
    ):
        with name_scope(name or "TFRecordDataset"):
            files = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
            compression = convert_to_tensor(
                compression_type or "", dtype=_dtypes.string, name="compression_type"
            )
        if files.shape.ndims not in (None, 0, 1):
            raise ValueError(f"filenames must be a string or a vector of them, got {files.shape}")
        stage = _Stage("tf_records", [files, compression])
        super().__init__(stage, 0, [_dtypes.string], [TensorShape([])])


class FixedLengthRecordDataset(Dataset):
    """The records of ``record_bytes`` bytes of the files ``filenames`` (a string or a vector
    of them), after each file's ``header_bytes`` and before its ``footer_bytes``, one string
    element per record; a file whose body is not a whole number of records fails with
    `InvalidArgumentError`.  ``compression_type`` is ``""`` (or None), ``"GZIP"`` or
    ``"ZLIB"``; ``buffer_size`` and ``num_parallel_reads`` change no element."""

    def __init__(
        self,
        filenames,
        record_bytes,
        header_bytes=None,
        footer_bytes=None,
        buffer_size=None,
        compression_type=None,
        num_parallel_reads=None,
        name: Optional[str] = None,
    ):
        with name_scope(name or "FixedLengthRecordDataset"):
            files = convert_to_tensor(filenames, dtype=_dtypes.string, name="filenames")
            sizes = [
                _int64(value, what)
                for value, what in (
                    (record_bytes, "record_bytes"),
                    (header_bytes or 0, "header_bytes"),
                    (footer_bytes or 0, "footer_bytes"),
                )
            ]
            compression = convert_to_tensor(
                compression_type or "", dtype=_dtypes.string, name="compression_type"
            )
        if files.shape.ndims not in (None, 0, 1):
            raise ValueError(f"filenames must be a string or a vector of them, got {files.shape}")
        stage = _Stage("fixed_length_records", [files, *sizes, compression])
        super().__init__(stage, 0, [_dtypes.string], [TensorShape([])])


from . import experimental  # noqa: E402

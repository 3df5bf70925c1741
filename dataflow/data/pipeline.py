"""The input pipeline as data: a dataset is a chain of stages (`_Stage`, each a transformation
and its parameters, with the functions given to it traced into graphs), and running one is
walking that chain in Python over numpy values, in the order and with the errors and
cardinalities TensorFlow's runtime gives.  The class of datasets is registered here by
`dataset_ops`, which builds on this module, and `structures` registers the spec of a dataset."""

from __future__ import annotations

import functools
import gzip
import io
import logging
import os
import threading
import zlib
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import (
    DataLossError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
)
from ..framework.graph import Graph, Tensor, _user_location, get_default_graph, name_scope
from ..framework.op_registry import apply_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tfrecord import read_records
from ..io.dfg import _register_pipeline_stage_kinds
from .elements import (
    _flatten,
    _pack,
    _structure_of,
    _width,
)

_log = logging.getLogger("dataflow.data")


# What `structures`, which builds on this module, registers: the spec of a dataset
# ("DatasetSpec") and how an iterator's next element is taken as an Optional
# ("get_next_as_optional").
_structures: dict = {}


def _register_structures(**entries) -> None:
    _structures.update(entries)


# The class of datasets, which `dataset_ops` defines on top of the pipeline and registers
# here: a function of the pipeline may return one, and a fed dataset is one.
_DATASET_CLASS: list = []


def register_dataset_class(cls: type) -> None:
    """Makes ``cls`` the class of datasets the pipeline builds and recognises."""
    _DATASET_CLASS[:] = [cls]


def _dataset_class() -> type:
    return _DATASET_CLASS[0]


def _tf2_semantics() -> bool:
    """Whether a dataset made now is a TF2 program's (``tf.data.Dataset`` of TensorFlow 2):
    made eagerly or while a ``df.function`` is traced.  Elsewhere it is TF1's
    (``tf.compat.v1.data.Dataset`` in a graph), which differs in little: ``map`` does not keep
    the number of elements known, and every pass over a seeded ``shuffle`` (a new Session, a new
    initialization) gives the same order."""
    from ..eager.context import executing_eagerly

    return executing_eagerly() or get_default_graph().building_function


class _ShufflePasses:
    """The passes started over a shuffled dataset made eagerly, shared by all its iterators
    (TensorFlow keeps them in the dataset's seed generator): with a seed and
    ``reshuffle_each_iteration``, the first pass has the order a graph's pass has, and each
    later one an order of its own drawn from the seed and its number, so a program that makes
    the same datasets in the same order with the same seeds sees the same orders.  (They are
    not TensorFlow's orders, which come from another generator.)"""

    def __init__(self):
        self._lock = threading.Lock()
        self._started = 0

    def start(self) -> int:
        """The number of passes started before this one."""
        with self._lock:
            self._started += 1
            return self._started - 1


# -- the pipeline as data --------------------------------------------------------------------------
class _Stage:
    """One node of a pipeline: its kind, its tensor inputs, Python parameters and parents.  The
    tensors its functions capture (`_DatasetFunction.captured_tensors`) come after its own
    inputs, and `_run_pipeline` hands them back to the functions."""

    __slots__ = ("kind", "tensors", "params", "parents", "function")

    def __init__(self, kind, tensors=(), params=None, parents=(), function=None):
        self.kind = kind
        self.tensors = list(tensors) + [
            t for f in _functions_of(function) for t in _captured_tensors(f)
        ]
        self.params = dict(params or {})
        self.parents = list(parents)
        self.function = function


def _functions_of(function) -> tuple:
    """The functions of a stage (its ``function``: None, one, or a tuple of them)."""
    if function is None:
        return ()
    return function if isinstance(function, tuple) else (function,)


def _captured_tensors(function) -> list:
    """The tensors of the graph around it that a function of a pipeline reads (none for a
    stage's other callables, such as a generator)."""
    return getattr(function, "captured_tensors", [])


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


class _FunctionGraph(Graph):
    """The graph a function of a pipeline is traced into.  What the function reads from
    outside it: a tensor of the graph the dataset is made in (``ds.map(lambda x: x * k)`` in a
    ``df.function`` of ``k``, or over a TF1 placeholder) becomes a placeholder here, which the
    pipeline feeds (`captures`); a value computed eagerly (``ds.map(lambda x: x / scale)``
    with an eager ``scale``) a constant of that value, as an eager tensor never changes.  A
    variable cannot be read: its value lives outside the function's Session."""

    def __init__(self, what: str):
        super().__init__()
        self._what = what
        self._eager_constants: dict = {}  # id(eager tensor) -> (it, its constant here)
        self.captures: dict = {}  # tensor of the graph around -> its placeholder here

    def _tensor_from_other_graph(self, tensor: Tensor, op_type: str, location) -> Tensor:
        """A tensor of the graph the dataset is made in (a ``df.function``'s argument, say)
        that the function reads: a placeholder here, fed with its value when the pipeline
        runs (the stage takes the tensor as an input)."""
        from primitives.contexts import building_in

        if tensor.dtype is _dtypes.resource:
            raise TypeError(
                f"The function given to Dataset.{self._what} reads the variable or resource "
                f"'{tensor.name}' (a {op_type} op at {location}); a dataset function may read "
                "tensors only: read the variable's value outside it and use that"
            )
        known = self.captures.get(tensor)
        if known is None:
            with self.control_dependencies(None), building_in(self, None):
                attrs = {"dtype": tensor.dtype, "shape": tensor.shape}
                known = apply_op("Placeholder", (), attrs, name="captured").outputs[0]
            self.captures[tensor] = known
        return known

    def _capture_eager_tensor(self, tensor: Tensor, op_type: str) -> Tensor:
        from primitives.contexts import building_in

        if tensor.dtype is _dtypes.resource:
            raise TypeError(
                f"The function given to Dataset.{self._what} reads an eager variable or resource "
                f"(a {op_type} op at {_user_location()}); a dataset function may read eager "
                "tensors only: pass the variable's value (variable.read_value()) in an element "
                "or make the dataset again when it changes"
            )
        known = self._eager_constants.get(id(tensor))
        if known is None:
            with self.control_dependencies(None), building_in(self, None):
                attrs = {"value": tensor._value, "dtype": tensor.dtype}
                constant = apply_op("Const", (), attrs, name="captured").outputs[0]
            known = self._eager_constants[id(tensor)] = (tensor, constant)
        return known[1]


class _DatasetFunction:
    """A function of a pipeline (``map``, ``filter``, ...) traced into its own graph, run by its
    own Session.  ``extra`` are Python arguments passed after the element (a window dataset).
    A function that returns a `Dataset` gives, when run, an iterator over that dataset's
    elements.  The function is converted by AutoGraph first (as TensorFlow converts it), so
    its Python ``if``/``while``/``for`` on tensors stage control flow; it is traced once, here,
    and its Python side effects happen now only."""

    def __init__(self, func, element_structure, types, shapes, what: str, extra=()):
        from ..client.session import Session  # a front end over the runtime, as a user's program is
        from ..eager.autograph.operators import call as call_converted

        if not callable(func):
            raise ValueError(
                f"Argument `func` must be a callable. Received func={func} (of type {type(func)})"
            )
        self._session_type = Session
        self.graph = _FunctionGraph(what)
        self.what = what
        self.dataset = None
        nested = _nested_dataset_positions(element_structure)
        self.nested = {}  # flat position -> slot of a dataset the element holds
        with self.graph.as_default(), name_scope(what):
            args = []
            for i, (t, s) in enumerate(zip(types, shapes)):
                if i in nested:  # an element that is a dataset: its pipeline, run when called
                    self.nested[i] = _next_slot()
                    args.append(_fed_dataset(nested[i], self.nested[i]))
                    continue
                args.append(
                    apply_op("Placeholder", (), {"dtype": t, "shape": s}, name=f"args_{i}")
                    .outputs[0]
                )  # fmt: skip
            element = _pack(element_structure, args)
            if isinstance(element, tuple) and not hasattr(type(element), "_fields"):
                result = call_converted(func, *element, *extra)
            else:
                result = call_converted(func, element, *extra)
            is_dataset = isinstance(result, _dataset_class())
            self.structure = result if is_dataset else _structure_of(result)
            if is_dataset:
                self.dataset = result
                self.records, self.outputs = _describe_pipeline(result._stage)
            else:
                self.outputs = [
                    r if isinstance(r, Tensor) else convert_to_tensor(r) for r in _flatten(result)
                ]
        self.inputs = [None if i in self.nested else a for i, a in enumerate(args)]
        # The tensors of the graph around that the function reads, and their placeholders.
        self.captured_tensors = list(self.graph.captures)
        self._captured_inputs = list(self.graph.captures.values())
        self.graph.finalize()

    def __repr__(self) -> str:
        return f"<the function given to Dataset.{self.what}>"

    def __call__(self, values: tuple, sessions: dict, feed=None, captured=()):
        """The function's outputs on the element ``values`` (or an iterator over the dataset
        it returns); ``captured`` are the values of `captured_tensors`."""
        if feed is not None:  # the elements of the window dataset the function was given
            sessions[("feed", self.feed_slot)] = feed
        session = sessions.get(id(self))
        if session is None:
            session = sessions[id(self)] = self._session_type(
                graph=self.graph, config=_function_config(sessions.get(("threading",)))
            )
        for i, slot in self.nested.items():
            sessions[("dataset", slot)] = values[i]
        feeds = {p: v for p, v in zip(self.inputs, values) if p is not None}
        feeds.update(zip(self._captured_inputs, captured))
        outputs = session.run(self.outputs, feeds)
        if self.dataset is not None:
            return _run_pipeline(self.records, outputs, sessions)
        return outputs


def _function_config(threading):
    """The ConfigProto of the Sessions that run a pipeline's functions: the dataset's
    ``threading`` options as the Session's thread counts (None: the defaults)."""
    from ..client.session import ConfigProto

    pool, intra = threading or (None, None)
    return ConfigProto(
        inter_op_parallelism_threads=pool or 0, intra_op_parallelism_threads=intra or 0
    )


def _threading_of(dataset) -> Optional[tuple]:
    """``(private_threadpool_size, max_intra_op_parallelism)`` of a dataset's options."""
    if dataset._options_set is None:
        return None
    threading = dataset._options_set.threading
    given = {
        "private_threadpool_size": threading.private_threadpool_size,
        "max_intra_op_parallelism": threading.max_intra_op_parallelism,
    }
    for what, value in given.items():
        if value is not None and value < 0:
            raise ValueError(f"threading.{what} must be at least 0, got {value}")
    return (threading.private_threadpool_size, threading.max_intra_op_parallelism)


def _run_pipeline(records: list, arrays: list, sessions: dict):
    """A Python iterator over the elements (tuples of arrays) that ``records`` describe; the
    pipeline's functions run in the Sessions kept in ``sessions``, where a ``feed`` stage also
    finds its elements."""
    factories: list = []
    position = 0
    for kind, count, parents, params, function in records:
        inputs = arrays[position : position + count]
        position += count
        if kind == "feed":
            fed = sessions[("feed", params["slot"])]
            factories.append(functools.partial(iter, fed))
            continue
        if kind == "fed_dataset":  # a dataset an element held: (records, arrays)
            fed_records, fed_arrays = sessions[("dataset", params["slot"])]
            factories.append(functools.partial(_run_pipeline, fed_records, fed_arrays, sessions))
            continue
        bound = []
        for f in reversed(_functions_of(function)):  # the last function's captures come last
            width = len(_captured_tensors(f))
            if width:
                captured = inputs[len(inputs) - width :]
                inputs = inputs[: len(inputs) - width]
                bound.append(functools.partial(f, sessions=sessions, captured=captured))
            else:
                bound.append(functools.partial(f, sessions=sessions))
        bound.reverse()
        if function is None:
            run = None
        elif isinstance(function, tuple):
            run = tuple(bound)
        else:
            run = bound[0]
        made = [factories[p] for p in parents]
        if kind in _WITH_SESSIONS:
            factories.append(_STAGE_FACTORIES[kind](inputs, made, params, run, sessions))
        else:
            factories.append(_STAGE_FACTORIES[kind](inputs, made, params, run))
    return factories[-1]()


# Stage kinds whose factories also take the pipeline's sessions.
_WITH_SESSIONS: set = {"dataset_argument"}


def _nested_dataset_positions(structure) -> dict:
    """The flat positions of the leaves of ``structure`` that are datasets (`DatasetSpec`)."""
    found, position = {}, 0
    for leaf in _flatten(structure):
        if isinstance(leaf, _structures["DatasetSpec"]):
            found[position] = leaf
        position += _width(leaf)
    return found


def _fed_dataset(spec, slot: int):
    """The dataset of ``spec`` that an element holds, seen by a function of the pipeline."""
    specs = _flatten(spec.element_spec)
    return _dataset_class()(
        _Stage("fed_dataset", params={"slot": slot}),
        spec.element_spec,
        [s.dtype for s in specs],
        [s.shape for s in specs],
    )


class _PipelineValue:
    """A whole dataset as one value (TensorFlow's variant tensor of a dataset): its pipeline's
    records and the arrays of its tensors.  A dataset given to a ``df.function`` is fed to the
    trace as one of these, and the trace reads it through a ``dataset_argument`` stage."""

    __slots__ = ("records", "arrays")

    def __init__(self, records: list, arrays: list):
        self.records = records
        self.arrays = arrays

    def __repr__(self) -> str:
        return f"<a dataset's pipeline of {len(self.records)} stages>"


def _dataset_argument(inputs, parents, params, function, sessions):
    value = np.asarray(inputs[0], dtype=object)[()]
    return lambda: _run_pipeline(value.records, value.arrays, sessions)


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
    layout = params.get("layout")  # per leaf: ("dense"|"sparse"|"ragged"|"to_ragged", rank)
    (parent,) = parents

    def stack_dense(elements, i):
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
        return [np.stack([e[i] for e in elements])]

    def stack(elements):
        if layout is None:
            return tuple(c for i in range(len(elements[0])) for c in stack_dense(elements, i))
        components, i = [], 0
        for kind, rank in layout:
            if kind == "dense":
                components.extend(stack_dense(elements, i))
                i += 1
            elif kind == "sparse":
                components.extend(_batch_sparse([e[i : i + 3] for e in elements], i))
                i += 3
            elif kind == "ragged":
                parts = [list(e[i : i + 1 + rank]) for e in elements]
                components.extend(_batch_ragged(parts))
                i += 1 + rank
            else:  # a dense component batched as a ragged one of ``rank`` ragged dimensions
                components.extend(_batch_ragged([_dense_as_ragged(e[i], rank) for e in elements]))
                i += 1
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


def _batch_sparse(elements: list, component: int) -> list:
    """One sparse tensor of the sparse tensors ``elements`` (indices, values, dense shape),
    each a row of it."""
    ranks = {len(np.ravel(shape)) for _, _, shape in elements}
    if len(ranks) != 1:
        raise InvalidArgumentError(
            None,
            None,
            f"Cannot batch sparse tensors of different ranks in component {component}: "
            f"{sorted(ranks)}",
        )
    rank = ranks.pop()
    indices = [
        np.concatenate(
            [
                np.full((len(np.asarray(idx)), 1), k, np.int64),
                np.asarray(idx, np.int64).reshape(-1, rank),
            ],
            axis=1,
        )
        for k, (idx, _, _) in enumerate(elements)
    ]
    values = np.concatenate([np.asarray(v) for _, v, _ in elements])
    shape = np.max(np.stack([np.asarray(s, np.int64) for _, _, s in elements]), axis=0)
    return [
        np.concatenate(indices).astype(np.int64).reshape(-1, rank + 1),
        values,
        np.concatenate([[len(elements)], shape]).astype(np.int64),
    ]


def _dense_as_ragged(value, rank: int) -> list:
    """A dense array as the parts of a ragged tensor with ``rank`` ragged dimensions."""
    value = np.asarray(value)
    shape = value.shape
    splits = []
    rows = shape[0]
    for k in range(1, rank + 1):
        splits.append(np.arange(rows + 1, dtype=np.int64) * shape[k])
        rows *= shape[k]
    return [value.reshape((rows, *shape[rank + 1 :])), *splits]


def _batch_ragged(elements: list) -> list:
    """The parts (flat values, row splits outermost first) of the ragged tensor whose rows are
    the ragged tensors (or dense ones, as ``[values]``) ``elements``."""
    flat_values = np.concatenate([np.asarray(e[0]) for e in elements])
    levels = len(elements[0]) - 1
    outer_rows = [len(e[1]) - 1 if levels else len(e[0]) for e in elements]
    splits = [np.concatenate([[0], np.cumsum(outer_rows)]).astype(np.int64)]
    for level in range(1, levels + 1):
        pieces, offset = [], 0
        for e in elements:
            s = np.asarray(e[level], np.int64)
            pieces.append(s[:-1] + offset)
            offset += int(s[-1])
        pieces.append(np.array([offset], np.int64))
        splits.append(np.concatenate(pieces))
    return [flat_values, *splits]


def _shuffle(inputs, parents, params, function):
    buffer_size = int(inputs[0])
    if buffer_size <= 0:
        raise InvalidArgumentError(
            None, None, f"buffer_size must be greater than zero, got {buffer_size}"
        )
    seed = None if params["seed"] is None else [params["seed"], params["seed2"]]
    reshuffle = params["reshuffle_each_iteration"]
    passes = params.get("passes")
    if reshuffle and seed is not None and passes is not None:
        later = passes.start()  # each pass over a dataset made eagerly has an order of its own
        if later:
            seed = [*seed, later]
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


class _Resumable:
    """An iterator that stays usable after an element fails (``ignore_errors`` reads on past
    it): ``step`` maps the next input element to an output element, or to ``_SKIP``."""

    def __init__(self, parent, step):
        self._parent = parent
        self._step = step

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            result = self._step(next(self._parent))
            if result is not _SKIP:
                return result


_SKIP = object()


def _map(inputs, parents, params, function):
    (parent,) = parents
    return lambda: _Resumable(parent(), lambda element: tuple(function(element)))


def _filter(inputs, parents, params, function):
    (parent,) = parents

    def keep(element):
        (verdict,) = function(element)
        return element if verdict else _SKIP

    return lambda: _Resumable(parent(), keep)


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


def _scan(inputs, parents, params, function):
    (parent,) = parents
    state_count = params["state_count"]

    def run():
        state = list(inputs)
        for element in parent():
            outputs = function((*state, *element))
            state = list(outputs[:state_count])
            yield tuple(outputs[state_count:])

    return run


def _unique(inputs, parents, params, function):
    (parent,) = parents

    def run():
        seen = set()
        for element in parent():
            value = np.asarray(element[0])
            key = (value.shape, value.tobytes() if value.dtype != object else tuple(value.ravel()))
            if key not in seen:
                seen.add(key)
                yield element

    return run


def _ignore_errors(inputs, parents, params, function):
    (parent,) = parents

    def run():
        elements = parent()
        while True:
            try:
                element = next(elements)
            except StopIteration:
                return
            except OutOfRangeError:
                return
            except OpError as e:
                if params["log_warning"]:
                    _log.warning("Ignoring an error in the input pipeline: %s", e)
                continue
            yield element

    return run


def _assert_cardinality(inputs, parents, params, function):
    (parent,) = parents
    expected = int(inputs[0])

    def run():
        count = 0
        for element in parent():
            count += 1
            if expected != INFINITE_CARDINALITY and count > expected:
                raise FailedPreconditionError(
                    None,
                    None,
                    f"Input dataset was expected to contain {_elements(expected)} but contained "
                    f"at least {_elements(count)}.",
                )
            yield element
        if expected == INFINITE_CARDINALITY or count < expected:
            raise FailedPreconditionError(
                None,
                None,
                f"Input dataset was expected to contain {_elements(expected)} but contained "
                f"only {_elements(count)}.",
            )

    return run


def _elements(n: int) -> str:
    if n == INFINITE_CARDINALITY:
        return "an infinite number of elements"
    return f"{n} element" + ("" if n == 1 else "s")


def _choose(inputs, parents, params, function):
    choice, *datasets = parents
    stop_on_empty = params["stop_on_empty_dataset"]

    def run():
        iterators = [d() for d in datasets]
        active = [True] * len(iterators)
        for (index,) in choice():
            index = int(index)
            if not 0 <= index < len(iterators):
                raise InvalidArgumentError(
                    None, None, f"Selector index out of range: {index} >= {len(iterators)}"
                )
            if not active[index]:
                continue
            try:
                yield next(iterators[index])
            except StopIteration:
                if stop_on_empty:
                    return
                active[index] = False
                if not any(active):
                    return

    return run


def _sample(inputs, parents, params, function):
    datasets = parents[: params["count"]]
    weights_source = parents[params["count"]] if len(parents) > params["count"] else None
    stop_on_empty = params["stop_on_empty_dataset"]
    rng = np.random.default_rng(params["seed"])

    def weights_of(values):
        w = np.asarray(values, np.float64).ravel()
        if w.shape != (len(datasets),):
            raise InvalidArgumentError(
                None,
                None,
                f"sample_from_datasets needs {len(datasets)} weights, got shape {list(w.shape)}",
            )
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InvalidArgumentError(None, None, f"Weights must be finite and >= 0, got {w}")
        return w

    def run():
        iterators = [d() for d in datasets]
        active = np.ones(len(iterators), bool)
        fixed = None if weights_source is not None else weights_of(inputs[0])
        sources = weights_source() if weights_source is not None else None
        while active.any():
            if sources is not None:
                try:
                    (values,) = next(sources)
                except StopIteration:
                    return
                weights = weights_of(values)
            else:
                weights = fixed
            chances = np.where(active, weights, 0.0)
            if chances.sum() <= 0:
                return
            index = int(rng.choice(len(iterators), p=chances / chances.sum()))
            try:
                yield next(iterators[index])
            except StopIteration:
                if stop_on_empty:
                    return
                active[index] = False

    return run


def _random(inputs, parents, params, function):
    seed = None if params["seed"] is None else [params["seed"], params["seed2"]]
    rng = np.random.default_rng(seed)

    def run():
        generator = rng if params["rerandomize"] or seed is None else np.random.default_rng(seed)
        while True:
            yield (np.int64(generator.integers(0, 1 << 32)),)

    return run


def _group_by_window(inputs, parents, params, function):
    (parent,) = parents
    key_func, reduce_func = function[:2]
    size_func = function[2] if len(function) > 2 else None

    def window_size(key: int) -> int:
        size = int(size_func((np.int64(key),))[0]) if size_func else int(inputs[0])
        if size <= 0:
            raise InvalidArgumentError(
                None, None, f"Window size must be greater than zero, but got {size}."
            )
        return size

    def key_of(element) -> int:
        (key,) = key_func(element)
        if np.shape(key) != () or np.asarray(key).dtype != np.int64:
            raise InvalidArgumentError(
                None, None, "`key_func` must return a single tf.int64 scalar tensor."
            )
        return int(key)

    def run():
        groups: dict = {}
        sizes: dict = {}
        for element in parent():
            key = key_of(element)
            if key not in groups:
                sizes[key] = window_size(key)
                groups[key] = []
            groups[key].append(element)
            if len(groups[key]) == sizes[key]:
                yield from reduce_func((np.int64(key),), feed=groups.pop(key))
        for key in sorted(groups):
            yield from reduce_func((np.int64(key),), feed=groups.pop(key))

    return run


def _group_by_reducer(inputs, parents, params, function):
    (parent,) = parents
    key_func, init_func, reduce_func, finalize_func = function
    state_count = params["state_count"]

    def run():
        states: dict = {}
        for element in parent():
            (key,) = key_func(element)
            key = int(key)
            if key not in states:
                states[key] = init_func((np.int64(key),))
            states[key] = reduce_func((*states[key], *element))[:state_count]
        for key in sorted(states):
            yield tuple(finalize_func(tuple(states[key])))

    return run


def _padded_batch(inputs, parents, params, function):
    size = int(inputs[0])
    if size <= 0:
        raise InvalidArgumentError(None, None, f"Batch size must be greater than zero, got {size}")
    count = (len(inputs) - 1) // 2
    padding = inputs[1 : 1 + count]
    padded_shapes = [[int(d) for d in np.ravel(s)] for s in inputs[1 + count :]]
    (parent,) = parents
    drop_remainder = params["drop_remainder"]

    def stack(elements):
        components = []
        for i, (target, pad) in enumerate(zip(padded_shapes, padding)):
            parts = [np.asarray(e[i]) for e in elements]
            for p in parts:
                if p.ndim != len(target):
                    raise InvalidArgumentError(
                        None,
                        None,
                        "All elements in a batch must have the same rank as the padded shape "
                        f"for component{i}: expected rank {len(target)} but got element with "
                        f"rank {p.ndim}",
                    )
            largest = [max(p.shape[d] for p in parts) for d in range(len(target))]
            shape = []
            for most, want in zip(largest, target):
                if want < 0:
                    shape.append(most)
                elif most > want:
                    raise InvalidArgumentError(
                        None,
                        None,
                        "Attempted to pad to a smaller size than the input element.",
                    )
                else:
                    shape.append(want)
            out = np.full((len(parts), *shape), np.asarray(pad).item(), dtype=parts[0].dtype)
            for k, p in enumerate(parts):
                out[(k, *(slice(0, n) for n in p.shape))] = p
            components.append(out)
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


def _interleave(inputs, parents, params, function):
    (parent,) = parents
    cycle_length = int(inputs[0])
    block_length = int(inputs[1])
    if cycle_length == AUTOTUNE:
        cycle_length = os.cpu_count() or 1
    if cycle_length <= 0 or block_length <= 0:
        raise InvalidArgumentError(
            None, None, "cycle_length and block_length must be greater than zero."
        )

    def run():
        source = parent()
        slots: list = [None] * cycle_length
        open_count, index, block, source_done = 0, 0, 0, False
        while not source_done or open_count:
            if slots[index] is not None:
                try:
                    element = next(slots[index])
                except StopIteration:
                    slots[index] = None
                    open_count -= 1
                    index, block = (index + 1) % cycle_length, 0
                    continue
                block += 1
                if block == block_length:
                    index, block = (index + 1) % cycle_length, 0
                yield element
            elif not source_done:
                try:
                    element = next(source)
                except StopIteration:
                    source_done = True
                    continue
                slots[index] = function(element)
                open_count += 1
            else:
                index, block = (index + 1) % cycle_length, 0

    return run


def _shard(inputs, parents, params, function):
    (parent,) = parents
    count, index = int(inputs[0]), int(inputs[1])
    if count <= 0:
        raise InvalidArgumentError(None, None, "Number of shards must be greater than zero")
    if not 0 <= index < count:
        raise InvalidArgumentError(None, None, "Index must be between 0 and num_shards - 1")

    def run():
        for i, element in enumerate(parent()):
            if i % count == index:
                yield element

    return run


def _dense_to_sparse_batch(inputs, parents, params, function):
    size = int(inputs[0])
    if size <= 0:
        raise InvalidArgumentError(None, None, f"Batch size must be greater than zero, got {size}")
    row_shape = [int(d) for d in np.ravel(inputs[1])]
    (parent,) = parents

    def sparse(elements):
        indices, values = [], []
        largest = [0] * len(row_shape)
        for k, (value,) in enumerate(elements):
            value = np.asarray(value)
            if value.ndim != len(row_shape):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Input element had rank {value.ndim} but the row shape "
                    f"({row_shape}) has rank {len(row_shape)}.",
                )
            for d, (have, want) in enumerate(zip(value.shape, row_shape)):
                if want >= 0 and have > want:
                    raise DataLossError(
                        None,
                        None,
                        f"Input element had shape ({list(value.shape)}) that is larger than the "
                        f"row shape ({row_shape}).",
                    )
                largest[d] = max(largest[d], have)
            positions = np.indices(value.shape).reshape(value.ndim, -1).T
            indices.append(
                np.concatenate([np.full((len(positions), 1), k, np.int64), positions], axis=1)
            )
            values.append(value.reshape(-1))
        shape = [want if want >= 0 else most for want, most in zip(row_shape, largest)]
        return (
            np.concatenate(indices).astype(np.int64).reshape(-1, len(row_shape) + 1),
            np.concatenate(values),
            np.array([len(elements), *shape], np.int64),
        )

    def run():
        pending = []
        for element in parent():
            pending.append(element)
            if len(pending) == size:
                yield sparse(pending)
                pending = []
        if pending:
            yield sparse(pending)

    return run


def _list_files(inputs, parents, params, function):
    import glob

    patterns = [p.decode() if isinstance(p, bytes) else str(p) for p in np.ravel(inputs[0])]
    seed = None if params["seed"] is None else [params["seed"], params["seed2"]]
    rng = np.random.default_rng(seed)

    def run():
        names = sorted({name for p in patterns for name in glob.glob(p)})
        if not names:
            raise InvalidArgumentError(
                None,
                None,
                f"Expected 'tf.Tensor({patterns!r})' to be non-empty. No files matched pattern",
            )
        if params["shuffle"]:
            generator = rng if seed is None else np.random.default_rng(seed)
            names = [names[i] for i in generator.permutation(len(names))]
        for name in names:
            yield (name.encode(),)

    return run


def _list(inputs, parents, params, function):
    width = params["width"]
    return lambda: (tuple(inputs[i : i + width]) for i in range(0, len(inputs), width))


def _flat_map(inputs, parents, params, function):
    (parent,) = parents
    return lambda: (e for element in parent() for e in function(element))


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
    "scan": _scan,
    "unique": _unique,
    "ignore_errors": _ignore_errors,
    "assert_cardinality": _assert_cardinality,
    "choose": _choose,
    "sample": _sample,
    "random": _random,
    "group_by_window": _group_by_window,
    "group_by_reducer": _group_by_reducer,
    "padded_batch": _padded_batch,
    "interleave": _interleave,
    "flat_map": _flat_map,
    "shard": _shard,
    "list": _list,
    "list_files": _list_files,
    "copy_to_device": _prefetch,
    "dense_to_sparse_batch": _dense_to_sparse_batch,
    "dataset_argument": _dataset_argument,
}


_register_pipeline_stage_kinds(STAGE_KINDS)  # graph files may hold pipelines of these


_slots = iter(range(1 << 62))


_slots_lock = threading.Lock()


def _next_slot() -> int:
    with _slots_lock:
        return next(_slots)


# -- TF1's file datasets and constants ---------------------------------------------------------
AUTOTUNE = -1  # a buffer size (``prefetch``) that the runtime may choose


INFINITE_CARDINALITY = -1


UNKNOWN_CARDINALITY = -2

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

"""The core of `dataflow.data` (whose docstring describes the input pipeline): `Dataset`,
its transformations and sources, `Iterator`, the stages a pipeline is recorded as, and how a
Session runs them.  The modules beside this one build on it; the package re-exports it."""

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
from ..framework.graph import Graph, Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.random_seed import get_seed
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tfrecord import read_records
from ..io.dfg import _register_pipeline_stage_kinds
from . import options as _options
from .options import Options, ThreadingOptions

_log = logging.getLogger("dataflow.data")

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "FixedLengthRecordDataset",
    "Iterator",
    "Options",
    "ThreadingOptions",
    "TFRecordDataset",
    "TextLineDataset",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "make_initializable_iterator",
    "make_one_shot_iterator",
]


# What `structures`, which builds on this module, registers: the spec of a dataset
# ("DatasetSpec") and how an iterator's next element is taken as an Optional
# ("get_next_as_optional").
_structures: dict = {}


def _register_structures(**entries) -> None:
    _structures.update(entries)


# -- element structures ----------------------------------------------------------------------------
def _is_structure(value) -> bool:
    """Tuples, namedtuples and dicts nest; a list is one tensor (as ``tf.data`` treats it)."""
    return isinstance(value, (tuple, dict))


def _composite_spec(value):
    """The spec of a sparse or ragged leaf (a tensor, its value or its spec), else None."""
    from ..framework.ragged_tensor import RaggedTensor, RaggedTensorSpec, RaggedTensorValue
    from ..framework.sparse_tensor import SparseTensor, SparseTensorSpec, SparseTensorValue

    if isinstance(value, (SparseTensorSpec, RaggedTensorSpec)):
        return value
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value.shape, value.dtype)
    if isinstance(value, SparseTensorValue):
        return SparseTensorSpec(
            [int(d) for d in np.asarray(value.dense_shape)], np.asarray(value.values).dtype
        )
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec.from_value(value)
    if isinstance(value, RaggedTensorValue):
        rank = value.ragged_rank
        inner = list(np.shape(value.flat_values)[1:])
        return RaggedTensorSpec(
            [len(value.row_splits) - 1] + [None] * rank + inner,
            value.flat_values.dtype,
            rank,
            np.asarray(value.row_splits).dtype,
        )
    return None


def _flatten(value) -> list:
    """The leaves of an element; a sparse leaf is its indices, values and dense shape, a
    ragged one its flat values and row splits."""
    spec = _composite_spec(value)
    if spec is not None and not isinstance(value, type(spec)):
        if hasattr(value, "indices"):
            return [value.indices, value.values, value.dense_shape]
        return [value.flat_values, *value.nested_row_splits]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in _flatten(value[key])]
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _flatten(item)]
    return [value]


def _structure_of(value):
    """``value``'s nesting, each sparse or ragged leaf replaced by its spec."""
    spec = _composite_spec(value)
    if spec is not None:
        return spec
    if isinstance(value, dict):
        return {key: _structure_of(value[key]) for key in value}
    if isinstance(value, tuple):
        items = [_structure_of(item) for item in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    return value


def _width(spec) -> int:
    """How many flat components a leaf of a structure stands for."""
    spec = _composite_spec(spec)
    if spec is None:
        return 1
    return 1 + spec.ragged_rank if hasattr(spec, "ragged_rank") else 3


def _parts(spec) -> list:
    """The (dtype, shape) of each flat component of a leaf spec (sparse or ragged)."""
    shape = spec.shape
    if not hasattr(spec, "ragged_rank"):
        rank = shape.ndims
        return [
            (_dtypes.int64, TensorShape([None, rank])),
            (spec.dtype, TensorShape([None])),
            (_dtypes.int64, TensorShape([rank])),
        ]
    inner = TensorShape(None) if shape.ndims is None else shape[spec.ragged_rank + 1 :]
    return [(spec.dtype, TensorShape([None]).concatenate(inner))] + [
        (spec.row_splits_dtype, TensorShape([None]))
    ] * spec.ragged_rank


def _composite(spec, parts: list):
    """The sparse or ragged tensor (or value) ``spec`` describes, from its flat ``parts``."""
    from ..framework.ragged_tensor import RaggedTensor, RaggedTensorValue
    from ..framework.sparse_tensor import SparseTensor, SparseTensorValue

    tensors = all(isinstance(p, Tensor) for p in parts)
    if not hasattr(spec, "ragged_rank"):
        return SparseTensor(*parts) if tensors else SparseTensorValue(*parts)
    if tensors:
        return RaggedTensor.from_nested_row_splits(parts[0], parts[1:], validate=False)
    value = parts[0]
    for splits in reversed(parts[1:]):
        value = RaggedTensorValue(value, splits)
    return value


def _pack(structure, flat: list, meta: Optional[str] = None):
    """``flat`` in the nesting of ``structure`` (whose dense leaves are ignored): a sparse or
    ragged leaf takes its components, made into that tensor, or with ``meta`` into what
    ``output_types`` ("types"), ``output_shapes`` ("shapes"), ``output_classes`` ("classes")
    or ``element_spec`` ("specs") give for it."""
    position = 0

    def rebuild(s):
        nonlocal position
        spec = _composite_spec(s)
        if spec is not None:
            width = _width(spec)
            parts = flat[position : position + width]
            position += width
            if meta is None:
                return _composite(spec, parts)
            return {
                "types": spec.dtype,
                "shapes": spec.shape,
                "classes": _composite_class(spec),
                "specs": spec,
            }[meta]
        if isinstance(s, dict):
            return {key: rebuild(s[key]) for key in sorted(s)}
        if isinstance(s, tuple):
            items = [rebuild(item) for item in s]
            return type(s)(*items) if hasattr(type(s), "_fields") else tuple(items)
        position += 1
        return flat[position - 1]

    return rebuild(structure)


def _replace_leaves(structure, leaves: list):
    """``structure`` with its leaves (a sparse or ragged spec being one) replaced in turn."""
    remaining = iter(leaves)

    def rebuild(s):
        if _composite_spec(s) is None and isinstance(s, dict):
            return {key: rebuild(s[key]) for key in sorted(s)}
        if _composite_spec(s) is None and isinstance(s, tuple):
            items = [rebuild(item) for item in s]
            return type(s)(*items) if hasattr(type(s), "_fields") else tuple(items)
        return next(remaining)

    return rebuild(structure)


def _composite_class(spec):
    from ..framework.ragged_tensor import RaggedTensor
    from ..framework.sparse_tensor import SparseTensor

    return RaggedTensor if hasattr(spec, "ragged_rank") else SparseTensor


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
    """A function of a pipeline (``map``, ``filter``, ...) traced into its own graph, run by its
    own Session.  ``extra`` are Python arguments passed after the element (a window dataset).
    A function that returns a `Dataset` gives, when run, an iterator over that dataset's
    elements."""

    def __init__(self, func, element_structure, types, shapes, what: str, extra=()):
        from ..client.session import Session  # a front end over the runtime, as a user's program is

        self._session_type = Session
        self.graph = Graph()
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
                result = func(*element, *extra)
            else:
                result = func(element, *extra)
            self.structure = result if isinstance(result, Dataset) else _structure_of(result)
            if isinstance(result, Dataset):
                self.dataset = result
                self.records, self.outputs = _describe_pipeline(result._stage)
            else:
                self.outputs = [
                    r if isinstance(r, Tensor) else convert_to_tensor(r) for r in _flatten(result)
                ]
        self.inputs = [None if i in self.nested else a for i, a in enumerate(args)]
        self.graph.finalize()

    def __repr__(self) -> str:
        return f"<the function given to Dataset.{self.what}>"

    def __call__(self, values: tuple, sessions: dict, feed=None):
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
        if function is None:
            run = None
        elif isinstance(function, tuple):
            run = tuple(functools.partial(f, sessions=sessions) for f in function)
        else:
            run = functools.partial(function, sessions=sessions)
        made = [factories[p] for p in parents]
        if kind in _WITH_SESSIONS:
            factories.append(_STAGE_FACTORIES[kind](inputs, made, params, run, sessions))
        else:
            factories.append(_STAGE_FACTORIES[kind](inputs, made, params, run))
    return factories[-1]()


_WITH_SESSIONS: set = set()  # stage kinds whose factories also take the pipeline's sessions


def _nested_dataset_positions(structure) -> dict:
    """The flat positions of the leaves of ``structure`` that are datasets (`DatasetSpec`)."""
    found, position = {}, 0
    for leaf in _flatten(structure):
        if isinstance(leaf, _structures["DatasetSpec"]):
            found[position] = leaf
        position += _width(leaf)
    return found


def _fed_dataset(spec, slot: int) -> Dataset:
    """The dataset of ``spec`` that an element holds, seen by a function of the pipeline."""
    specs = _flatten(spec.element_spec)
    return Dataset(
        _Stage("fed_dataset", params={"slot": slot}),
        spec.element_spec,
        [s.dtype for s in specs],
        [s.shape for s in specs],
    )


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
}
_register_pipeline_stage_kinds(STAGE_KINDS)  # graph files may hold pipelines of these


# -- iterators at run time -------------------------------------------------------------------------
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
                raise OutOfRangeError(None, None, "End of sequence") from None
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


# -- whole-dataset ops -----------------------------------------------------------------------------
_INF, _UNKNOWN = -1, -2


def _cardinality(records: list, arrays: list) -> int:
    """The number of elements of the pipeline ``records`` describe, as TensorFlow counts them
    without reading any (-1: without end, -2: not known)."""
    counts: list = []
    position = 0
    for kind, count, parents, params, _ in records:
        inputs = arrays[position : position + count]
        position += count
        ns = [counts[p] for p in parents]
        counts.append(_stage_cardinality(kind, inputs, ns, params))
    return counts[-1]


def _stage_cardinality(kind, inputs, ns, params) -> int:
    n = ns[0] if ns else None
    if kind == "slices":
        return int(np.shape(inputs[0])[0])
    if kind == "tensors":
        return 1
    if kind == "range":
        start, stop, step = (int(x) for x in inputs)
        return len(range(start, stop, step)) if step else _UNKNOWN
    if kind in ("batch", "padded_batch", "dense_to_sparse_batch"):
        size = int(inputs[0])
        if params.get("ragged_batch"):
            return _UNKNOWN  # TensorFlow maps the elements to ragged ones first
        if n < 0 or size <= 0:
            return n
        return n // size if params.get("drop_remainder") else -(-n // size)
    if kind == "list":
        return len(inputs) // params["width"]
    if kind == "list_files":
        import glob

        patterns = [p.decode() if isinstance(p, bytes) else str(p) for p in np.ravel(inputs[0])]
        return len({name for p in patterns for name in glob.glob(p)})
    if kind in ("shuffle", "prefetch", "scan"):
        return n
    if kind == "repeat":
        times = int(inputs[0])
        if times < 0:
            return 0 if n == 0 else _INF
        if times == 0:
            return 0
        return n if n < 0 else times * n
    if kind == "take":
        times = int(inputs[0])
        if n == _UNKNOWN:
            return _UNKNOWN
        if n == _INF:
            return _INF if times < 0 else times
        return n if times < 0 else min(n, times)
    if kind == "skip":
        times = int(inputs[0])
        if n < 0:
            return n
        return 0 if times < 0 else max(0, n - times)
    if kind == "shard":
        shards, index = int(inputs[0]), int(inputs[1])
        if n < 0:
            return n
        return n // shards + (1 if index < n % shards else 0)
    if kind == "zip":
        result = _INF
        for m in ns:
            if m == _UNKNOWN:
                return _UNKNOWN
            if m != _INF and (result == _INF or m < result):
                result = m
        return result
    if kind == "concatenate":
        if _INF in ns:
            return _INF
        return _UNKNOWN if _UNKNOWN in ns else sum(ns)
    if kind == "assert_cardinality":
        return int(inputs[0])
    if kind == "random":
        return _INF
    return _UNKNOWN  # map (TF1 does not keep the count through it), filter, files, ...


def _infer_cardinality(op):
    return [(_dtypes.int64, ())]


def _cardinality_kernel(attrs):
    records = attrs["pipeline"]
    return lambda *arrays: np.int64(_cardinality(records, list(arrays)))


define_op("DatasetCardinality", _infer_cardinality, _cardinality_kernel)


def _single_element_kernel(attrs):
    records = attrs["pipeline"]

    def single_element(*arrays):
        sessions: dict = {("threading",): attrs.get("threading")}
        try:
            elements = _run_pipeline(records, list(arrays), sessions)
            first = next(elements, None)
            if first is None:
                raise InvalidArgumentError(None, None, "Dataset was empty.")
            if next(elements, None) is not None:
                raise InvalidArgumentError(None, None, "Dataset had more than one element.")
        finally:
            for key, session in sessions.items():
                if not isinstance(key, tuple):
                    session.close()
        return _check_element(first, attrs)

    return single_element


define_op("DatasetToSingleElement", _infer_get_next, _single_element_kernel, stateful=True)


def _check_alike(datasets: list, what: str) -> None:
    if not datasets or not all(isinstance(d, Dataset) for d in datasets):
        raise TypeError(f"{what} takes a non-empty list of Datasets")
    first = datasets[0]
    for d in datasets[1:]:
        if d._types != first._types or _flatten(d.output_types) != _flatten(first.output_types):
            raise TypeError(
                f"All datasets must have the same type; got {first.output_types} and "
                f"{d.output_types}"
            )


def _common_shapes(datasets: list) -> list:
    shapes = list(datasets[0]._shapes)
    for d in datasets[1:]:
        shapes = [a.most_specific_compatible_shape(b) for a, b in zip(shapes, d._shapes)]
    return shapes


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
        self._options_set = None  # an `Options`, given by with_options or by the inputs

    # -- structure --------------------------------------------------------------------------------
    @property
    def output_types(self):
        return _pack(self._structure, self._types, "types")

    @property
    def output_shapes(self):
        return _pack(self._structure, self._shapes, "shapes")

    @property
    def output_classes(self):
        return _pack(self._structure, [Tensor] * len(self._types), "classes")

    def _reject_composites(self, what: str) -> None:
        if _is_composite_structure(self._structure):
            raise TypeError(
                f"Dataset.{what} takes elements of dense tensors; this dataset's elements hold "
                f"sparse or ragged tensors ({self.output_classes})"
            )

    @property
    def element_spec(self):
        """The `TensorSpec` of each component of an element, in its structure."""
        return _element_spec(self._structure, self._types, self._shapes)

    def _derived(self, kind, tensors=(), params=None, function=None, structure=None,
                 types=None, shapes=None) -> Dataset:  # fmt: skip
        stage = _Stage(kind, tensors, params, [self._stage], function)
        return Dataset(
            stage,
            self._structure if structure is None else structure,
            self._types if types is None else types,
            self._shapes if shapes is None else shapes,
        )._with_options_of(self)

    def _with_options_of(self, *datasets) -> Dataset:
        """This dataset, carrying the options of ``datasets`` merged."""
        given = [d._options_set for d in datasets if d._options_set is not None]
        if given:
            self._options_set = given[0] if len(given) == 1 else _options.merge_options(*given)
        return self

    # -- options ----------------------------------------------------------------------------------
    def with_options(self, options, name: Optional[str] = None) -> Dataset:
        """The same elements, with ``options`` (a `df.data.Options`) merged into the options
        this dataset has (``options``' settings win)."""
        if not isinstance(options, _options.Options):
            raise TypeError(f"with_options takes a tf.data.Options, got {type(options).__name__}")
        result = self._derived("prefetch")
        merged = options if result._options_set is None else result._options_set.merge(options)
        result._options_set = _options.merge_options(merged)  # a copy the caller cannot change
        return result

    def options(self):
        """The options of this dataset (a `df.data.Options` that cannot be changed)."""
        result = _options.merge_options(self._options_set or _options.Options())
        result._set_mutable(False)
        return result

    # -- sources ----------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors) -> Dataset:
        """The rows (slices along dimension 0) of ``tensors``, one element per row."""
        if _is_composite_structure(_structure_of(tensors)):
            raise TypeError(
                "from_tensor_slices takes dense tensors; batch sparse or ragged tensors with "
                "from_tensors(...).unbatch() of dense ones, or dense_to_sparse_batch"
            )
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
        return Dataset(_Stage("tensors", flat), _structure_of(tensors), [t.dtype for t in flat],
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
    def list_files(file_pattern, shuffle=None, seed=None, name: Optional[str] = None) -> Dataset:
        """The names of the files matching ``file_pattern`` (a glob, or a vector of them), found
        when the iterator starts (`InvalidArgumentError` when none match): sorted, or in a
        random order unless ``shuffle`` is False."""
        with name_scope("ListFilesDataset"):
            patterns = convert_to_tensor(file_pattern, dtype=_dtypes.string, name="file_pattern")
        global_seed, op_seed = get_seed(seed)
        params = {
            "shuffle": True if shuffle is None else bool(shuffle),
            "seed": global_seed,
            "seed2": op_seed,
        }
        return Dataset(
            _Stage("list_files", [patterns], params), 0, [_dtypes.string], [TensorShape([])]
        )

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
        return Dataset(stage, structure, types, shapes)._with_options_of(*members)

    # -- transformations --------------------------------------------------------------------------
    def batch(self, batch_size, drop_remainder: bool = False) -> Dataset:
        """Elements of ``batch_size`` consecutive elements stacked (the last one smaller unless
        ``drop_remainder``)."""
        return self._batch(batch_size, drop_remainder)

    def _batch(self, batch_size, drop_remainder, to_ragged=None) -> Dataset:
        """``batch``; a sparse or ragged leaf is batched as TensorFlow does (one more
        dimension, ragged for a ragged one); ``to_ragged(spec)`` may give the number of
        ragged dimensions to batch a dense leaf with (``dense_to_ragged_batch``)."""
        from ..framework.ragged_tensor import RaggedTensorSpec
        from ..framework.sparse_tensor import SparseTensorSpec

        size = _int64(batch_size, "batch_size")
        known = int(size.op.attrs["value"]) if size.op.type == "Const" else None
        outer = known if drop_remainder and known is not None else None
        params = {"drop_remainder": bool(drop_remainder)}
        if to_ragged is not None:
            params["ragged_batch"] = True
        if not _is_composite_structure(self._structure) and to_ragged is None:
            shapes = [TensorShape([outer]).concatenate(s) for s in self._shapes]
            return self._derived("batch", [size], params, shapes=shapes)
        layout, leaves, types, shapes = [], [], [], []
        position = 0
        for leaf in _flatten(self._structure):
            spec = _composite_spec(leaf)
            if spec is None:
                t, shape = self._types[position], self._shapes[position]
                rank = None if to_ragged is None else to_ragged(shape)
                if rank is None:
                    layout.append(("dense", 0))
                    leaves.append(leaf)
                    types.append(t)
                    shapes.append(TensorShape([outer]).concatenate(shape))
                    position += 1
                    continue
                layout.append(("to_ragged", rank))
                spec = RaggedTensorSpec(TensorShape([outer]).concatenate(shape), t, rank + 1)
                position += 1
            elif isinstance(spec, SparseTensorSpec):
                layout.append(("sparse", 0))
                position += 3
                spec = SparseTensorSpec(TensorShape([outer]).concatenate(spec.shape), spec.dtype)
            else:
                layout.append(("ragged", spec.ragged_rank))
                position += 1 + spec.ragged_rank
                spec = RaggedTensorSpec(
                    TensorShape([outer]).concatenate(spec.shape),
                    spec.dtype,
                    spec.ragged_rank + 1,
                    spec.row_splits_dtype,
                )
            leaves.append(spec)
            for t, shape in _parts(spec):
                types.append(t)
                shapes.append(shape)
        params["layout"] = layout
        structure = _replace_leaves(self._structure, leaves)
        return self._derived("batch", [size], params, structure=structure, types=types,
                             shapes=shapes)  # fmt: skip

    def sparse_batch(self, batch_size, row_shape, name: Optional[str] = None) -> Dataset:
        """``batch_size`` consecutive elements (dense tensors of the rank of ``row_shape``)
        as one `SparseTensor` holding each element's values as a row of dense shape
        ``row_shape`` (a None or -1 dimension: the longest of the batch)."""
        from ..framework.sparse_tensor import SparseTensorSpec

        if len(self._types) != 1 or _is_composite_structure(self._structure):
            raise TypeError("dense_to_sparse_batch takes a dataset of single dense tensors")
        dims = [-1 if d is None else int(d) for d in TensorShape(row_shape).as_list()]
        with name_scope("DenseToSparseBatchDataset"):
            tensors = [_int64(batch_size, "batch_size"), _int64(dims, "row_shape")]
        shape = TensorShape([None]).concatenate([None if d < 0 else d for d in dims])
        spec = SparseTensorSpec(shape, self._types[0])
        parts = _parts(spec)
        return self._derived(
            "dense_to_sparse_batch",
            tensors,
            structure=spec,
            types=[t for t, _ in parts],
            shapes=[s for _, s in parts],
        )

    def ragged_batch(self, batch_size, drop_remainder: bool = False, row_splits_dtype=None,
                     name: Optional[str] = None) -> Dataset:  # fmt: skip
        """Like ``batch``, with each component whose shape is not fully known batched as a
        `RaggedTensor` (ragged up to its last unknown dimension), so elements of different
        shapes batch together."""
        row_splits = (
            _dtypes.int64 if row_splits_dtype is None else _dtypes.as_dtype(row_splits_dtype)
        )
        if row_splits != _dtypes.int64:
            raise ValueError("dense_to_ragged_batch: dataflow's ragged row splits are int64")

        def ragged_dims(shape):
            if shape.ndims is None or shape.ndims == 0 or shape.is_fully_defined():
                return None
            return max(i for i, d in enumerate(shape.as_list()) if d is None)

        return self._batch(batch_size, drop_remainder, ragged_dims)

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
        return Dataset(stage, self._structure, self._types, shapes)._with_options_of(self, dataset)

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
        self._reject_composites("unbatch")
        if any(s.ndims == 0 for s in self._shapes):
            raise ValueError("Cannot unbatch an input with scalar components.")
        shapes = [TensorShape(None) if s.ndims is None else s[1:] for s in self._shapes]
        return self._derived("unbatch", shapes=shapes)

    # -- more transformations ---------------------------------------------------------------------
    def scan(self, initial_state, scan_func, name: Optional[str] = None) -> Dataset:
        """A running state over the elements: ``scan_func(state, element)`` gives
        ``(new_state, output)``; the outputs are the elements."""
        with name_scope("ScanDataset"):
            state = [
                convert_to_tensor(t, name=f"initial_state_{i}")
                for i, t in enumerate(_flatten(initial_state))
            ]
        function, out = _trace_with_state(
            scan_func,
            initial_state,
            [t.dtype for t in state],
            [t.shape for t in state],
            self,
            "scan",
            split=True,
        )
        structure, types, shapes = out
        return self._derived(
            "scan", state, {"state_count": len(state)}, function, structure, types, shapes
        )

    def unique(self, name: Optional[str] = None) -> Dataset:
        """The elements without repeats (the first of equal ones, in order); an element is one
        int32, int64 or string tensor."""
        if len(self._types) != 1 or _is_structure(self._structure):
            raise TypeError("`tf.data.Dataset.unique` only supports datasets with a single tensor")
        if self._types[0] not in (_dtypes.int32, _dtypes.int64, _dtypes.string):
            raise TypeError(
                f"`tf.data.Dataset.unique` does not support type {self._types[0]!r} -- only "
                "`tf.int32`, `tf.int64`, and `tf.string` are supported."
            )
        return self._derived("unique")

    def ignore_errors(self, log_warning: bool = False, name: Optional[str] = None) -> Dataset:
        """The elements, leaving out those whose making failed (``log_warning``: log each
        failure)."""
        return self._derived("ignore_errors", params={"log_warning": bool(log_warning)})

    def shard(self, num_shards, index, name: Optional[str] = None) -> Dataset:
        """Every ``num_shards``-th element, from the ``index``-th."""
        return self._derived("shard", [_int64(num_shards, "num_shards"), _int64(index, "index")])

    def enumerate(self, start=0, name: Optional[str] = None) -> Dataset:
        """``(index, element)`` pairs, the int64 index counting from ``start``."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    def padded_batch(
        self,
        batch_size,
        padded_shapes=None,
        padding_values=None,
        drop_remainder: bool = False,
        name: Optional[str] = None,
    ) -> Dataset:
        """Like ``batch``, each component padded with ``padding_values`` (0, or b"" for strings)
        to ``padded_shapes`` (a None or -1 dimension: the longest of the batch; by default all
        dimensions).  A padded shape may be a tensor (an int64 vector)."""
        self._reject_composites("padded_batch")
        if padded_shapes is None:
            targets = [[-1] * s.ndims if s.ndims is not None else None for s in self._shapes]
        else:
            targets = _flatten_shapes(padded_shapes, self._structure)
        if padding_values is None:
            values = [b"" if t == _dtypes.string else 0 for t in self._types]
        else:
            values = _flatten_shapes(padding_values, self._structure)
        with name_scope("PaddedBatchDataset"):
            size = _int64(batch_size, "batch_size")
            pads = [
                convert_to_tensor(v, dtype=t, name=f"padding_value_{i}")
                for i, (v, t) in enumerate(zip(values, self._types))
            ]
            shape_tensors = []
            for i, target in enumerate(targets):
                if target is None:
                    raise ValueError(
                        "padded_batch needs padded_shapes for components of unknown rank"
                    )
                if isinstance(target, TensorShape):
                    target = [-1 if d is None else d for d in target.as_list()]
                elif not isinstance(target, Tensor):
                    target = [-1 if d is None else int(d) for d in target]
                shape_tensors.append(_int64(target, f"padded_shape_{i}"))
        for pad in pads:
            if pad.shape.ndims not in (None, 0):
                raise ValueError(f"Padding values must be scalars, got shape {pad.shape}")
        known = int(size.op.attrs["value"]) if size.op.type == "Const" else None
        outer = known if drop_remainder and known is not None else None
        shapes = []
        for target, shape in zip(shape_tensors, self._shapes):
            rank = target.shape.as_list()[0] if target.shape.ndims == 1 else None
            if rank is None:
                raise ValueError(f"A padded shape must be a vector, got shape {target.shape}")
            if shape.ndims is not None and shape.ndims != rank:
                raise ValueError(
                    f"The padded shape of rank {rank} is not compatible with the shape {shape} "
                    "of the corresponding input component."
                )
            dims = [None] * rank
            if target.op.type == "Const":
                value = np.asarray(target.op.attrs["value"]).tolist()
                for d, (want, have) in enumerate(zip(value, shape.as_list() or [None] * rank)):
                    if want >= 0 and have is not None and have > want:
                        raise ValueError(
                            f"The padded shape {value} is not compatible with the shape {shape} "
                            "of the corresponding input component."
                        )
                    dims[d] = want if want >= 0 else None
            shapes.append(TensorShape([outer]).concatenate(dims))
        params = {"drop_remainder": bool(drop_remainder)}
        return self._derived("padded_batch", [size, *pads, *shape_tensors], params, shapes=shapes)

    def flat_map(self, map_func, name: Optional[str] = None) -> Dataset:
        """The elements of the datasets ``map_func`` makes of each element, one after another."""
        function = self._dataset_function(map_func, "flat_map")
        d = function.dataset
        return self._derived(
            "flat_map", function=function, structure=d._structure, types=d._types, shapes=d._shapes
        )

    def interleave(
        self,
        map_func,
        cycle_length=None,
        block_length=None,
        num_parallel_calls=None,
        deterministic=None,
        name: Optional[str] = None,
    ) -> Dataset:
        """The elements of the datasets ``map_func`` makes of each element, ``block_length``
        at a time from each of ``cycle_length`` of them in turn (None: as many as the machine
        has cores), as TensorFlow orders them.  The elements come in that order whatever
        ``num_parallel_calls`` and ``deterministic`` say (a deterministic order is one of those
        a non-deterministic interleave may give)."""
        function = self._dataset_function(map_func, "interleave")
        d = function.dataset
        with name_scope("InterleaveDataset"):
            tensors = [
                _int64(AUTOTUNE if cycle_length is None else cycle_length, "cycle_length"),
                _int64(1 if block_length is None else block_length, "block_length"),
            ]
        return self._derived(
            "interleave",
            tensors,
            function=function,
            structure=d._structure,
            types=d._types,
            shapes=d._shapes,
        )

    def _dataset_function(self, func, what: str, extra=()) -> _DatasetFunction:
        function = _DatasetFunction(func, self._structure, self._types, self._shapes, what, extra)
        if function.dataset is None:
            raise TypeError(f"The function given to {what} must return a Dataset")
        return function

    def group_by_window(
        self,
        key_func,
        reduce_func,
        window_size=None,
        window_size_func=None,
        name: Optional[str] = None,
    ) -> Dataset:
        """Elements grouped by ``key_func`` (an int64 scalar) into windows of ``window_size``
        (or ``window_size_func(key)``) elements; ``reduce_func(key, window)`` makes a dataset of
        each full window, and at the end of each incomplete one (by key)."""
        if (window_size is None) == (window_size_func is None):
            raise ValueError(
                "Either the `window_size` argument or the `window_size_func` argument "
                "must be specified."
            )
        key = _DatasetFunction(key_func, self._structure, self._types, self._shapes, "key_func")
        _check_int64_scalar(key, "key_func")
        window = Dataset(
            _Stage("feed", params={"slot": _next_slot()}),
            self._structure,
            self._types,
            self._shapes,
        )
        reduce = _DatasetFunction(
            reduce_func, 0, [_dtypes.int64], [TensorShape([])], "reduce_func", extra=(window,)
        )
        if reduce.dataset is None:
            raise TypeError("`reduce_func` must return a Dataset")
        reduce.feed_slot = window._stage.params["slot"]
        functions = (key, reduce)
        tensors = []
        if window_size_func is not None:
            size = _DatasetFunction(
                window_size_func, 0, [_dtypes.int64], [TensorShape([])], "window_size_func"
            )
            _check_int64_scalar(size, "window_size_func")
            functions += (size,)
        else:
            tensors = [_int64(window_size, "window_size")]
        d = reduce.dataset
        return self._derived(
            "group_by_window",
            tensors,
            function=functions,
            structure=d._structure,
            types=d._types,
            shapes=d._shapes,
        )

    def bucket_by_sequence_length(
        self,
        element_length_func,
        bucket_boundaries,
        bucket_batch_sizes,
        padded_shapes=None,
        padding_values=None,
        pad_to_bucket_boundary: bool = False,
        no_padding: bool = False,
        drop_remainder: bool = False,
        name: Optional[str] = None,
    ) -> Dataset:
        """Elements batched with others of about their length (``element_length_func``, an int32
        or int64 scalar): bucket i holds lengths in ``[bucket_boundaries[i-1],
        bucket_boundaries[i])`` and batches ``bucket_batch_sizes[i]`` of them, padded as
        ``padded_batch`` does (to the bucket's boundary less one with
        ``pad_to_bucket_boundary``; not at all with ``no_padding``)."""
        from ..ops import array_ops, math_ops
        from ..ops.constant_op import constant

        boundaries = [int(b) for b in bucket_boundaries]
        sizes = [int(b) for b in bucket_batch_sizes]
        if len(sizes) != len(boundaries) + 1:
            raise ValueError(
                "len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1 but "
                f"len(bucket_batch_sizes)={len(sizes)} and "
                f"len(bucket_boundaries)={len(boundaries)}"
            )
        if boundaries != sorted(boundaries):
            raise ValueError("bucket_boundaries must be sorted")
        if pad_to_bucket_boundary and no_padding:
            raise ValueError("pad_to_bucket_boundary and no_padding cannot both be True")

        def bucket_of(*args):
            length = math_ops.cast(element_length_func(*args), _dtypes.int64)
            lower = constant([np.iinfo(np.int32).min] + boundaries, _dtypes.int64)
            upper = constant(boundaries + [np.iinfo(np.int32).max], _dtypes.int64)
            inside = math_ops.logical_and(
                math_ops.less_equal(lower, length), math_ops.less(length, upper)
            )
            return math_ops.reduce_min(math_ops.where(inside))

        def window_size(bucket):
            return array_ops.gather(constant(sizes, _dtypes.int64), bucket)

        def batch(bucket, window):
            size = window_size(bucket)
            if no_padding:
                return window.batch(size, drop_remainder=drop_remainder)
            shapes = padded_shapes if padded_shapes is not None else window.output_shapes
            flat = [TensorShape(s) for s in _flatten_shapes(shapes, window._structure)]
            if pad_to_bucket_boundary:
                from ..ops import check_ops

                check = check_ops.assert_less(
                    bucket,
                    np.int64(len(sizes) - 1),
                    message="When pad_to_bucket_boundary=True, elements must have length < "
                    "max(bucket_boundaries).",
                )
                from ..framework.graph import control_dependencies

                with control_dependencies([check]):
                    filler = array_ops.gather(constant(boundaries, _dtypes.int64), bucket) - 1
                flat = [
                    array_ops.stack([filler if d is None else np.int64(d) for d in s.as_list()])
                    if s.ndims
                    else []
                    for s in flat
                ]
            shapes = _pack(window._structure, flat)
            return window.padded_batch(size, shapes, padding_values, drop_remainder=drop_remainder)

        return self.group_by_window(bucket_of, batch, window_size_func=window_size)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True) -> Dataset:
        """For each element ``i`` of ``choice_dataset`` (int64 scalars), the next element of
        ``datasets[i]``; an empty ``datasets[i]`` ends it with ``stop_on_empty_dataset``, and
        is passed over otherwise."""
        datasets = list(datasets)
        _check_alike(datasets, "choose_from_datasets")
        if (
            not isinstance(choice_dataset, Dataset)
            or choice_dataset._types != [_dtypes.int64]
            or (not choice_dataset._shapes[0].is_compatible_with([]))
        ):
            raise TypeError("`choice_dataset` must be a dataset of scalar `tf.int64` tensors.")
        stage = _Stage(
            "choose",
            params={"stop_on_empty_dataset": bool(stop_on_empty_dataset)},
            parents=[choice_dataset._stage, *(d._stage for d in datasets)],
        )
        first = datasets[0]
        return Dataset(stage, first._structure, first._types, _common_shapes(datasets))

    @staticmethod
    def sample_from_datasets(
        datasets,
        weights=None,
        seed=None,
        stop_on_empty_dataset=False,
        rerandomize_each_iteration=None,
    ) -> Dataset:
        """Elements of ``datasets`` drawn at random, ``datasets[i]`` with probability
        ``weights[i]`` (a list, a tensor, or a dataset of weight vectors; None: the same for
        each).  An empty dataset ends it with ``stop_on_empty_dataset``; otherwise the others
        are drawn from."""
        datasets = list(datasets)
        _check_alike(datasets, "sample_from_datasets")
        global_seed, op_seed = get_seed(seed)
        params = {
            "count": len(datasets),
            "stop_on_empty_dataset": bool(stop_on_empty_dataset),
            "seed": None if global_seed is None else [global_seed, op_seed],
        }
        parents = [d._stage for d in datasets]
        tensors = []
        if isinstance(weights, Dataset):
            if weights._types[0] not in (_dtypes.float32, _dtypes.float64):
                raise TypeError("`weights` must be a dataset of float vectors")
            parents.append(weights._stage)
        else:
            if weights is None:
                weights = [1.0 / len(datasets)] * len(datasets)
            with name_scope("DirectedInterleaveDataset"):
                w = convert_to_tensor(weights, name="weights")
            if w.dtype not in (_dtypes.float32, _dtypes.float64):
                raise TypeError(f"`weights` must be floats, got {w.dtype.name}")
            if w.shape.ndims is not None and (
                w.shape.ndims != 1 or w.shape.dims[0] not in (None, len(datasets))
            ):
                raise ValueError(
                    f"`weights` must be a vector of {len(datasets)} weights, got shape {w.shape}"
                )
            tensors.append(w)
        stage = _Stage("sample", tensors, params, parents)
        first = datasets[0]
        return Dataset(stage, first._structure, first._types, _common_shapes(datasets))

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name: Optional[str] = None) -> Dataset:
        """Random int64 scalars in ``[0, 2**32)``, without end; with a ``seed``, each pass
        gives the same ones unless ``rerandomize_each_iteration``."""
        global_seed, op_seed = get_seed(seed)
        params = {"seed": global_seed, "seed2": op_seed,
                  "rerandomize": bool(rerandomize_each_iteration)}  # fmt: skip
        return Dataset(_Stage("random", params=params), 0, [_dtypes.int64], [TensorShape([])])

    def get_single_element(self, name: Optional[str] = None):
        """The one element of this dataset, as tensors (`InvalidArgumentError` when it has
        none or more)."""
        records, tensors = _describe_pipeline(self._stage)
        attrs = _get_next_attrs(self._types, self._shapes)
        attrs["pipeline"] = records
        attrs["threading"] = _threading_of(self)
        op = apply_op(
            "DatasetToSingleElement", tensors, attrs, name=name or "DatasetToSingleElement"
        )
        return _pack(self._structure, list(op.outputs))

    def cardinality(self) -> Tensor:
        """The number of elements (an int64 scalar): ``INFINITE_CARDINALITY`` (-1) without
        end, ``UNKNOWN_CARDINALITY`` (-2) when it cannot be known without reading them."""
        records, tensors = _describe_pipeline(self._stage)
        return apply_op(
            "DatasetCardinality", tensors, {"pipeline": records}, name="DatasetCardinality"
        ).outputs[0]

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
            self.output_types, self.output_shapes, shared_name, self.output_classes
        )
        iterator._initializer = iterator.make_initializer(self)
        return iterator


def _check_int64_scalar(function: _DatasetFunction, what: str) -> None:
    outputs = function.outputs
    if (
        function.dataset is not None
        or len(outputs) != 1
        or outputs[0].dtype != _dtypes.int64
        or (not outputs[0].shape.is_compatible_with([]))
    ):
        raise ValueError(f"`{what}` must return a single tf.int64 scalar tensor.")


def _check_int64_or_int32_scalar(function: _DatasetFunction, what: str) -> None:
    outputs = function.outputs
    if (
        function.dataset is not None
        or len(outputs) != 1
        or outputs[0].dtype not in (_dtypes.int32, _dtypes.int64)
        or not outputs[0].shape.is_compatible_with([])
    ):
        raise TypeError(
            f"Invalid `{what}`. `{what}` must return `tf.int64` scalar tensor but its return "
            f"type is {[(t.dtype.name, t.shape) for t in outputs]}."
        )


_slots = iter(range(1 << 62))
_slots_lock = threading.Lock()


def _next_slot() -> int:
    with _slots_lock:
        return next(_slots)


def _trace_with_state(func, state_structure, state_types, state_shapes, dataset, what, split: bool):
    """``func(state, element)`` traced until the state it gives fits the state it is given
    (each time with the state's shapes relaxed to fit both, as TensorFlow retraces); with
    ``split`` it gives ``(new_state, output)``, else only the new state.  Returns the function
    and, with ``split``, the output's (structure, types, shapes)."""
    shapes = list(state_shapes)
    count = len(state_types)
    structure = (state_structure, dataset._structure)
    while True:
        function = _DatasetFunction(
            func, structure, [*state_types, *dataset._types], [*shapes, *dataset._shapes], what
        )
        result = function.structure
        if function.dataset is not None:
            raise TypeError(f"The function given to {what} must return tensors, not a Dataset")
        if split:
            if not isinstance(result, tuple) or len(result) != 2:
                raise TypeError(
                    f"The `{what}_func` must return a (new_state, output_element) tuple"
                )
            new_state, output = result
        else:
            new_state, output = result, None
        new = function.outputs[: len(_flatten(new_state))]
        if len(new) != count:
            raise TypeError(
                f"The element structure for the new state must match the initial state; "
                f"{what} gave {len(new)} state components, expected {count}."
            )
        got = [t.dtype for t in new]
        if got != list(state_types):
            raise TypeError(
                "The element types for the new state must match the initial state. Expected "
                f"{_pack(state_structure, list(state_types))}; got {_pack(state_structure, got)}."
            )
        relaxed = [a.most_specific_compatible_shape(b.shape) for a, b in zip(shapes, new)]
        if all(r == s or (r.dims is None and s.dims is None) for r, s in zip(relaxed, shapes)):
            break
        shapes = relaxed
    function.state_shapes = shapes
    if not split:
        return function, None
    outs = function.outputs[count:]
    return function, (output, [t.dtype for t in outs], [t.shape for t in outs])


# -- Iterator --------------------------------------------------------------------------------------
def _get_next_attrs(types, shapes) -> dict:
    return {"output_types": tuple(types), "output_shapes": list(shapes)}


class Iterator:
    """Reads a dataset's elements in a Session (see the module docstring)."""

    def __init__(self, iterator_resource, initializer, output_types, output_shapes, output_classes):
        """An iterator over the resource ``iterator_resource`` (the handle an ``IteratorV2`` op
        gives; ``Iterator.from_structure`` makes one), started by the op ``initializer`` (or
        None), whose elements have the structure, dtypes and shapes of ``output_types`` and
        ``output_shapes`` (``output_classes``: `Tensor` for each component)."""
        structure, types, shapes = _structure_from_meta(output_types, output_shapes, output_classes)
        if iterator_resource is not None and (
            not isinstance(iterator_resource, Tensor) or iterator_resource.dtype != _dtypes.resource
        ):
            raise TypeError(
                f"iterator_resource must be a resource tensor, got {iterator_resource!r}"
            )
        self._handle = iterator_resource
        self._structure = structure
        self._types = types
        self._shapes = shapes
        self._initializer = initializer
        self._one_shot_dataset = None

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An iterator for any dataset of this structure, started by `make_initializer`."""
        _structure_from_meta(output_types, output_shapes, output_classes)  # checks them
        with name_scope("Iterator") as scope:
            op_name = scope[:-1]
            handle = apply_op(
                "IteratorV2", (), {"shared_name": shared_name or op_name}, name=op_name + "/"
            ).outputs[0]
        if output_shapes is None:
            output_shapes = _pack(output_types, [None] * len(_flatten(output_types)))
        if output_classes is None:
            output_classes = _pack(output_types, [Tensor] * len(_flatten(output_types)))
        return Iterator(handle, None, output_types, output_shapes, output_classes)

    @staticmethod
    def _one_shot(dataset: Dataset) -> Iterator:
        iterator = Iterator(
            None, None, dataset.output_types, dataset.output_shapes, dataset.output_classes
        )
        iterator._one_shot_dataset = dataset
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
        return _pack(self._structure, self._types, "types")

    @property
    def output_shapes(self):
        return _pack(self._structure, self._shapes, "shapes")

    @property
    def output_classes(self):
        return _classes_of(self._structure)

    @property
    def element_spec(self):
        """The `TensorSpec` of each component of an element, in its structure."""
        return _element_spec(self._structure, self._types, self._shapes)

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
            {"pipeline": records, "threading": _threading_of(dataset)},
            name=name or "MakeIterator",
        )

    def get_next_as_optional(self):
        """The next element as a `df.data.experimental.Optional`, without a value past the
        end."""
        return _structures["get_next_as_optional"](self)

    def get_next(self, name: Optional[str] = None):
        """The next element, a structure of tensors (``OutOfRangeError`` past the end)."""
        attrs = _get_next_attrs(self._types, self._shapes)
        if self._one_shot_dataset is not None:
            records, tensors = _describe_pipeline(self._one_shot_dataset._stage)
            attrs.update(
                pipeline=records,
                shared_name=self._one_shot_key,
                threading=_threading_of(self._one_shot_dataset),
            )
            op = apply_op("OneShotIteratorGetNext", tensors, attrs, name=name or "IteratorGetNext")
        else:
            op = apply_op("IteratorGetNext", [self._handle], attrs, name=name or "IteratorGetNext")
        return _pack(self._structure, list(op.outputs))


def _element_spec(structure, types, shapes):
    from ..framework.tensor_spec import TensorSpec

    return _pack(structure, [TensorSpec(s, t) for t, s in zip(types, shapes)], "specs")


def _classes_of(structure):
    return _pack(structure, [Tensor] * _flat_width(structure), "classes")


def _flat_width(structure) -> int:
    return sum(_width(leaf) for leaf in _flatten(structure))


def _is_composite_structure(structure) -> bool:
    return any(_composite_spec(leaf) is not None for leaf in _flatten(structure))


def _structure_from_meta(output_types, output_shapes, output_classes):
    """(structure, flat types, flat shapes) of elements whose leaves have the dtypes, shapes
    and classes (`Tensor`, `SparseTensor` or `RaggedTensor`) given in the same nesting."""
    from ..framework.ragged_tensor import RaggedTensor, RaggedTensorSpec
    from ..framework.sparse_tensor import SparseTensor, SparseTensorSpec

    leaf_types = [_dtypes.as_dtype(t) for t in _flatten(output_types)]
    if output_shapes is None:
        leaf_shapes = [TensorShape(None)] * len(leaf_types)
    else:
        leaf_shapes = [TensorShape(s) for s in _flatten_shapes(output_shapes, output_types)]
    if output_classes is None:
        leaf_classes = [Tensor] * len(leaf_types)
    else:
        leaf_classes = _flatten_shapes(output_classes, output_types)
    if len(leaf_shapes) != len(leaf_types) or len(leaf_classes) != len(leaf_types):
        raise ValueError(
            "output_types, output_shapes and output_classes must have the same structure"
        )
    leaves, types, shapes = [], [], []
    for dtype, shape, cls in zip(leaf_types, leaf_shapes, leaf_classes):
        if isinstance(cls, (SparseTensorSpec, RaggedTensorSpec)):
            cls = _composite_class(cls)
        if cls is Tensor:
            leaves.append(dtype)
            types.append(dtype)
            shapes.append(shape)
            continue
        if cls is SparseTensor:
            spec = SparseTensorSpec(shape, dtype)
        elif cls is RaggedTensor:
            spec = RaggedTensorSpec(shape, dtype)
        else:
            raise TypeError(
                f"An iterator's components are Tensors, SparseTensors or RaggedTensors, got the "
                f"class {cls}"
            )
        leaves.append(spec)
        for t, s in _parts(spec):
            types.append(t)
            shapes.append(s)
    return _pack(output_types, leaves), types, shapes


def _flatten_shapes(shapes, types) -> list:
    """Shapes given in the nesting of ``types`` (a shape itself may be a list)."""
    if isinstance(types, dict):
        return [s for key in sorted(types) for s in _flatten_shapes(shapes[key], types[key])]
    if isinstance(types, tuple):
        if not isinstance(shapes, (tuple, list)) or len(shapes) != len(types):
            raise ValueError(
                f"The structure of {shapes!r} does not match the structure of {types!r}: "
                "they must have the same structure"
            )
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
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (
    "IteratorV2",
    "MakeIterator",
    "IteratorGetNext",
    "OneShotIteratorGetNext",
    "DatasetCardinality",
    "DatasetToSingleElement",
):
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

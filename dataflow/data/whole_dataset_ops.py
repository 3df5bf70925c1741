"""Ops on a whole dataset: its cardinality (``DatasetCardinality``, computed from the
pipeline's stages without running them where it can be) and its single element
(``DatasetToSingleElement``); and the checks that datasets joined together are alike."""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import (
    InvalidArgumentError,
)
from ..framework.op_registry import define_op
from .elements import (
    _flatten,
)
from .iterator_ops import (
    _check_element,
    _infer_get_next,
)
from .pipeline import (
    _dataset_class,
    _run_pipeline,
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
    if kind == "map":  # TF2's map keeps the count; TF1's does not
        return n if params.get("preserve_cardinality") else _UNKNOWN
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
    if kind == "dataset_argument":  # a dataset given to a df.function: its own count
        value = np.asarray(inputs[0], dtype=object)[()]
        return _cardinality(value.records, value.arrays)
    return _UNKNOWN  # filter, files, ...


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


def _reduce_kernel(attrs):
    records = attrs["pipeline"]
    reduce_function = attrs["reduce"]
    count = len(attrs["output_types"])

    captures = len(reduce_function.captured_tensors)

    def reduce(*arrays):
        state = list(arrays[:count])
        captured = arrays[len(arrays) - captures :] if captures else ()
        arrays = list(arrays[count : len(arrays) - captures])
        sessions: dict = {("threading",): attrs.get("threading")}
        try:
            for element in _run_pipeline(records, arrays, sessions):
                state = list(reduce_function((*state, *element), sessions, captured=captured))
                state = state[:count]
        finally:
            for key, session in sessions.items():
                if not isinstance(key, tuple):
                    session.close()
        return _check_element(tuple(state), attrs)

    return reduce


# ``dataset.reduce(initial_state, reduce_func)``: the initial state's tensors, the pipeline's,
# then those the function captures; the final state.  Attrs: ``pipeline``, ``reduce`` (the
# traced function of (state, element)), ``threading``, and the state's ``output_types`` and
# ``output_shapes``.
define_op("ReduceDataset", _infer_get_next, _reduce_kernel, stateful=True)


def _check_alike(datasets: list, what: str) -> None:
    if not datasets or not all(isinstance(d, _dataset_class()) for d in datasets):
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

"""``df.data.experimental.snapshot``: a dataset's elements written to disk the first time it is
read to its end, and read back from there afterwards (by any iterator, Session or program).

The snapshot of a pipeline lives in ``<path>/<fingerprint>/``, the fingerprint standing for
the pipeline's stages and input values (not the content of the files it reads, as in
TensorFlow): a changed pipeline writes a snapshot of its own.  Each element goes to the shard
``shard_func(element)`` gives (by default the element's index modulo the number of cores); a
shard is a TFRecord file of serialized elements, compressed as ``compression`` says
(``"AUTO"``: GZIP here, TensorFlow's private snapshot format having no reader elsewhere;
``"GZIP"``; None or ``""``: none).  A snapshot is complete, and read, once the input has been
read to its end; a read that stops early leaves no snapshot.  ``reader_func`` receives the
dataset of the shards' datasets (in shard order) and returns the dataset of elements: by
default it interleaves the shards one element at a time, which gives back the input's order.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tfrecord import TFRecordOptions, TFRecordWriter, read_records
from ..ops.tensor_proto_ops import _parse, _serialize
from .dataset_ops import (
    _STAGE_FACTORIES,
    _WITH_SESSIONS,
    Dataset,
    _check_int64_or_int32_scalar,
    _DatasetFunction,
    _describe_pipeline,
    _next_slot,
    _run_pipeline,
    _Stage,
)
from .pipeline import _PipelineValue

__all__ = ["snapshot"]

_METADATA = "snapshot.metadata"


def _compression(value) -> str:
    if value in (None, ""):
        return ""
    if value in ("AUTO", "GZIP"):
        return "GZIP"
    if value == "SNAPPY":
        raise ValueError(
            "snapshot: SNAPPY compression has no codec here; use compression='GZIP', 'AUTO' or None"
        )
    raise ValueError(f"snapshot: compression must be 'AUTO', 'GZIP' or None, got {value!r}")


def _fingerprint(records: list, arrays: list) -> str:
    """A name for the pipeline ``records`` describe, run on ``arrays``."""
    digest = hashlib.sha256()

    def describe_function(function):
        if function is None:
            return None
        functions = function if isinstance(function, tuple) else (function,)
        return [
            [(op.type, sorted((k, repr(v)) for k, v in op.attrs.items()))
             for op in f.graph.get_operations()]
            if hasattr(f, "graph")
            else _python_name(getattr(f, "generator", f))  # a generator: by its name
            for f in functions
        ]  # fmt: skip

    for kind, count, parents, params, function in records:
        # Left out: what names a run's state (the passes over an eager shuffle, slots).
        plain = {k: v for k, v in params.items() if k not in ("reader", "slot", "passes")}
        digest.update(repr((kind, count, parents, sorted(plain.items()))).encode())
        digest.update(repr(describe_function(function)).encode())
    for array in arrays:
        array = np.asarray(array)
        digest.update(repr((array.dtype.str, array.shape)).encode())
        if array.dtype == object:
            for value in array.ravel():
                if isinstance(value, _PipelineValue):  # a df.function's dataset argument
                    digest.update(_fingerprint(value.records, value.arrays).encode())
                    continue
                digest.update(len(bytes(value)).to_bytes(8, "little") + bytes(value))
        else:
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:32]


def _python_name(function) -> str:
    """A name of a Python callable that stays the same from one process to the next."""
    return f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', '')}"


def _encode(element: tuple, types: list) -> bytes:
    parts = [
        _serialize(np.asarray(v, dtype=_dtypes.numpy_dtype(t)), t) for v, t in zip(element, types)
    ]
    return b"".join(len(p).to_bytes(8, "little") + p for p in parts)


def _decode(record: bytes, types: list) -> tuple:
    values, position = [], 0
    for dtype in types:
        size = int.from_bytes(record[position : position + 8], "little")
        position += 8
        values.append(_parse(record[position : position + size], dtype))
        position += size
    return tuple(values)


def _snapshot_file(inputs, parents, params, function):
    path, compression, types = params["path"], params["compression"], params["types"]
    return lambda: (_decode(r, types) for r in read_records(path, compression))


def _snapshot_shards(inputs, parents, params, function, sessions):
    """The datasets of the shards of the snapshot being read, in shard order."""

    def run():
        directory, shards, compression, types = sessions[("snapshot", params["slot"])]
        for shard in shards:
            record = [
                "snapshot_file",
                0,
                [],
                {"path": os.path.join(directory, shard), "compression": compression,
                 "types": types},
                None,
            ]  # fmt: skip
            yield (([record], []),)

    return run


def _snapshot_stage(inputs, parents, params, function, sessions):
    (parent,) = parents
    path = np.asarray(inputs[0]).item()
    path = path.decode() if isinstance(path, bytes) else str(path)
    reader_count = params["reader_count"]
    reader_arrays = list(inputs[1 : 1 + reader_count])
    input_arrays = list(inputs[1 + reader_count :])
    compression, types = params["compression"], params["types"]
    directory = os.path.join(path, _fingerprint(params["input"], input_arrays))

    def complete() -> list | None:
        try:
            with open(os.path.join(directory, _METADATA)) as f:
                metadata = json.load(f)
        except (FileNotFoundError, ValueError):
            return None
        return metadata.get("shards") if metadata.get("complete") else None

    def read(shards):
        sessions[("snapshot", params["slot"])] = (directory, shards, compression, types)
        yield from _run_pipeline(params["reader"], reader_arrays, sessions)

    def write():
        pending = os.path.join(directory, f"tmp-{uuid.uuid4().hex}")
        os.makedirs(pending)
        writers: dict = {}
        finished = False
        try:
            for element in parent():
                (shard,) = function(element)
                shard = int(shard)
                if shard < 0:
                    raise InvalidArgumentError(
                        None, None, f"snapshot: shard_func gave a negative shard {shard}"
                    )
                if shard not in writers:
                    writers[shard] = TFRecordWriter(
                        os.path.join(pending, f"{shard:08d}.shard"), TFRecordOptions(compression)
                    )
                writers[shard].write(_encode(element, types))
                yield element
            finished = True
        finally:
            for writer in writers.values():
                writer.close()
            if finished and complete() is None:
                names = []
                for shard in sorted(writers):
                    name = f"{shard:08d}.shard"
                    os.replace(os.path.join(pending, name), os.path.join(directory, name))
                    names.append(name)
                metadata = os.path.join(directory, f"{_METADATA}.{uuid.uuid4().hex}")
                with open(metadata, "w") as f:
                    json.dump({"complete": True, "shards": names}, f)
                os.replace(metadata, os.path.join(directory, _METADATA))
            shutil.rmtree(pending, ignore_errors=True)

    def run():
        shards = complete()
        return read(shards) if shards is not None else write()

    return run


_STAGE_FACTORIES["snapshot"] = _snapshot_stage
_STAGE_FACTORIES["snapshot_shards"] = _snapshot_shards
_STAGE_FACTORIES["snapshot_file"] = _snapshot_file
_WITH_SESSIONS.update({"snapshot", "snapshot_shards"})


def _snapshot(dataset: Dataset, path, compression, reader_func, shard_func) -> Dataset:
    from .structures import DatasetSpec

    compression = _compression(compression)
    project = None
    if shard_func is None:
        cores = os.cpu_count() or 1
        dataset = dataset.enumerate()
        shard_func = lambda index, _: index % cores  # noqa: E731
        project = lambda _, element: element  # noqa: E731
    if reader_func is None:
        cores = os.cpu_count() or 1
        reader_func = lambda datasets: datasets.interleave(  # noqa: E731
            lambda x: x, cycle_length=cores
        )
    shard = _DatasetFunction(shard_func, dataset._structure, dataset._types, dataset._shapes,
                             "shard_func")  # fmt: skip
    _check_int64_or_int32_scalar(shard, "shard_func")
    slot = _next_slot()
    shards = Dataset(
        _Stage("snapshot_shards", params={"slot": slot}),
        DatasetSpec(dataset.element_spec),
        [getattr(_dtypes, "variant", _dtypes.resource)],
        [TensorShape([])],
    )
    reader = reader_func(shards)
    if not isinstance(reader, Dataset):
        raise TypeError("snapshot: `reader_func` must return a Dataset")
    if reader._types != dataset._types:
        raise TypeError(
            f"snapshot: `reader_func` must give elements of the input's types "
            f"{dataset.output_types}, got {reader.output_types}"
        )
    reader_records, reader_tensors = _describe_pipeline(reader._stage)
    input_records, input_tensors = _describe_pipeline(dataset._stage)
    with name_scope("SnapshotDataset"):
        path = convert_to_tensor(path, dtype=_dtypes.string, name="path")
    params = {
        "compression": compression,
        "types": list(dataset._types),
        "reader": reader_records,
        "reader_count": len(reader_tensors),
        "input": input_records,
        "slot": slot,
    }
    snapshotted = dataset._derived(
        "snapshot", [path, *reader_tensors, *input_tensors], params, function=shard
    )
    return snapshotted if project is None else snapshotted.map(project)


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    """The dataset's elements, written to ``path`` the first time it is read to its end and
    read from there afterwards (see the module docstring)."""
    return lambda dataset: _snapshot(dataset, path, compression, reader_func, shard_func)

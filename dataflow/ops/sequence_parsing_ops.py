"""Parsing ``tf.train.SequenceExample`` records: context and feature lists
(``ParseSequenceExample``, ``parse_sequence_example``, ``parse_single_sequence_example``)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.gradient_registry import NotDifferentiable  # noqa: E402
from ..framework.graph import name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.sparse_tensor import SparseTensor
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .example_format import (
    _TYPE_NAMES,
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    _default_array,
    _feature_values,
    _fields,
    _parse_example_proto,
    _typed,
)


# -- ParseSequenceExample --------------------------------------------------------------------------
def _parse_sequence_example_proto(data: bytes) -> tuple[dict, dict]:
    """The context features and feature lists of a serialized ``tf.train.SequenceExample``:
    ``{key: (dtype, values)}`` and ``{key: [(dtype, values) per step]}``."""
    context = _parse_example_proto(data)
    lists: dict = {}
    for number, wire, body in _fields(data):
        if number != 2 or wire != 2:
            continue
        for entry_number, entry_wire, entry in _fields(body):
            if entry_number != 1 or entry_wire != 2:
                continue
            key, steps = b"", []
            for n, _w, v in _fields(entry):
                if n == 1:
                    key = bytes(v)
                elif n == 2:
                    steps = [_feature_values(bytes(f)) for k, _, f in _fields(v) if k == 1]
            lists[key.decode("utf-8", "replace")] = steps
    return context, lists


def _check_kind(key: str, kind, dtype, where: str) -> None:
    if kind is not None and kind != dtype:
        raise InvalidArgumentError(
            None,
            None,
            f"{where}: Data types don't match for feature {key!r}: the feature holds "
            f"{_TYPE_NAMES[kind]}, but {_TYPE_NAMES[dtype]} is expected",
        )


def _sparse_of(rows: list, dtype, batch: Optional[int]) -> tuple:
    """(indices, values, dense_shape) of a SparseTensor holding ``rows``: for one example the
    lists of values of each step; for a batch (``batch`` examples) those of each example."""
    indices, values = [], []
    if batch is None:
        longest = 0
        for step, items in enumerate(rows):
            indices += [(step, j) for j in range(len(items))]
            values += items
            longest = max(longest, len(items))
        shape = [len(rows), longest]
    else:
        steps = longest = 0
        for example, example_rows in enumerate(rows):
            for step, items in enumerate(example_rows):
                indices += [(example, step, j) for j in range(len(items))]
                values += items
                longest = max(longest, len(items))
            steps = max(steps, len(example_rows))
        shape = [batch, steps, longest]
    rank = len(shape)
    return (
        np.asarray(indices, np.int64).reshape(-1, rank),
        _typed(values, dtype),
        np.asarray(shape, np.int64),
    )


def _infer_parse_sequence_example(op):
    a = op.attrs
    batched = a["batched"]
    batch = [None] if batched else []
    outputs = []
    for rank, sparse in ((len(batch) + 1, a["context_sparse_types"]),):
        outputs += [(_dtypes.int64, TensorShape([None, rank])) for _ in sparse]
        outputs += [(dtype, TensorShape([None])) for dtype in sparse]
        outputs += [(_dtypes.int64, TensorShape([rank])) for _ in sparse]
    for dtype, shape in zip(a["context_dense_types"], a["context_dense_shapes"]):
        outputs.append((dtype, TensorShape(batch + list(shape))))
    rank = len(batch) + 2
    sparse = a["feature_list_sparse_types"]
    outputs += [(_dtypes.int64, TensorShape([None, rank])) for _ in sparse]
    outputs += [(dtype, TensorShape([None])) for dtype in sparse]
    outputs += [(_dtypes.int64, TensorShape([rank])) for _ in sparse]
    for dtype, shape in zip(a["feature_list_dense_types"], a["feature_list_dense_shapes"]):
        outputs.append((dtype, TensorShape(batch + [None] + list(shape))))
    outputs += [(_dtypes.int64, TensorShape(batch)) for _ in a["feature_list_dense_types"]]
    return outputs


def _parse_sequence_example_kernel(attrs):
    a = attrs
    batched = a["batched"]

    def parse_sequence_example(serialized):
        records = [bytes(v) for v in serialized.reshape(-1)]
        parsed = []
        for index, data in enumerate(records):
            try:
                parsed.append(_parse_sequence_example_proto(data))
            except ValueError as e:
                raise InvalidArgumentError(
                    None, None, f"Could not parse example input, value {index}: {e}"
                ) from None
        where = "ParseSequenceExample" if batched else "ParseSingleSequenceExample"
        outputs: list = []
        # context: sparse, then dense
        sparse_parts = []
        for key, dtype in zip(a["context_sparse_keys"], a["context_sparse_types"]):
            rows = []
            for context, _lists in parsed:
                kind, values = context.get(key, (None, []))
                _check_kind(key, kind, dtype, where)
                rows.append(values)
            if batched:
                sparse_parts.append(_sparse_of([[r] for r in rows], dtype, len(rows)))
                indices, values, shape = sparse_parts[-1]
                sparse_parts[-1] = (indices[:, [0, 2]], values, shape[[0, 2]])
            else:
                indices, values, shape = _sparse_of(rows, dtype, None)
                sparse_parts.append((indices[:, 1:], values, shape[1:]))
        for part in range(3):
            outputs += [p[part] for p in sparse_parts]
        dense = zip(
            a["context_dense_keys"],
            a["context_dense_types"],
            a["context_dense_shapes"],
            a["context_dense_defaults"],
        )
        for key, dtype, shape, default in dense:
            size = int(np.prod(shape, dtype=np.int64))
            items = []
            for context, _lists in parsed:
                kind, values = context.get(key, (None, None))
                if values is None or (kind is None and not values):
                    if default is None:
                        raise InvalidArgumentError(
                            None,
                            None,
                            f"{where}: Feature: {key} (data type: {_TYPE_NAMES[dtype]}) is "
                            "required but could not be found.",
                        )
                    items.append(default)
                    continue
                _check_kind(key, kind, dtype, where)
                if len(values) != size:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"{where}: Key: {key}.  Number of {_TYPE_NAMES[dtype]} values != "
                        f"expected.  Values size: {len(values)} but output shape: {list(shape)}",
                    )
                items.append(_typed(values, dtype).reshape(shape))
            stacked = np.stack(items) if items else np.zeros([0, *shape], _typed([], dtype).dtype)
            outputs.append(stacked if batched else stacked[0])
        # feature lists: sparse, then dense, then the dense lengths
        sparse_parts = []
        for key, dtype in zip(a["feature_list_sparse_keys"], a["feature_list_sparse_types"]):
            examples = []
            for _context, lists in parsed:
                steps = []
                for kind, values in lists.get(key, []):
                    _check_kind(key, kind, dtype, where)
                    steps.append(values)
                examples.append(steps)
            sparse_parts.append(
                _sparse_of(examples, dtype, len(examples))
                if batched
                else _sparse_of(examples[0], dtype, None)
            )
        for part in range(3):
            outputs += [p[part] for p in sparse_parts]
        lengths = []
        dense = zip(
            a["feature_list_dense_keys"],
            a["feature_list_dense_types"],
            a["feature_list_dense_shapes"],
            a["feature_list_dense_missing"],
        )
        for key, dtype, shape, allow_missing in dense:
            size = int(np.prod(shape, dtype=np.int64))
            examples = []
            for _context, lists in parsed:
                if key not in lists and not allow_missing:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"{where}: Feature list '{key}' is required but could not be found.  "
                        "Did you mean to include it in feature_list_dense_missing_assumed_empty "
                        "or feature_list_dense_defaults?",
                    )
                steps = []
                for step, (kind, values) in enumerate(lists.get(key, [])):
                    _check_kind(key, kind, dtype, where)
                    if len(values) != size:
                        raise InvalidArgumentError(
                            None,
                            None,
                            f"{where}: Key: {key}, Index: {step}.  Number of "
                            f"{_TYPE_NAMES[dtype]} values != expected.  values size: "
                            f"{len(values)} but output shape: {list(shape)}",
                        )
                    steps.append(values)
                examples.append(steps)
            longest = max((len(steps) for steps in examples), default=0)
            empty = _typed([], dtype)
            out = np.zeros([len(examples), longest, *shape], empty.dtype)
            if dtype == _dtypes.string:
                out[...] = b""
            for i, steps in enumerate(examples):
                if steps:
                    out[i, : len(steps)] = _typed(sum(steps, []), dtype).reshape(-1, *shape)
            outputs.append(out if batched else out[0])
            lengths.append(np.array([len(steps) for steps in examples], np.int64))
        outputs += lengths if batched else [v[0] for v in lengths]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    return parse_sequence_example


define_op("ParseSequenceExample", _infer_parse_sequence_example, _parse_sequence_example_kernel)


NotDifferentiable("ParseSequenceExample")


def _sequence_attrs(context_features, sequence_features) -> dict:
    a = {
        "context_sparse_keys": [],
        "context_sparse_types": [],
        "context_dense_keys": [],
        "context_dense_types": [],
        "context_dense_shapes": [],
        "context_dense_defaults": [],
        "feature_list_sparse_keys": [],
        "feature_list_sparse_types": [],
        "feature_list_dense_keys": [],
        "feature_list_dense_types": [],
        "feature_list_dense_shapes": [],
        "feature_list_dense_missing": [],
    }
    for key in sorted(context_features or {}):
        feature = context_features[key]
        dtype = _feature_dtype(key, feature)
        if isinstance(feature, VarLenFeature):
            a["context_sparse_keys"].append(key)
            a["context_sparse_types"].append(dtype)
        elif isinstance(feature, FixedLenFeature):
            shape = _fixed_shape(key, feature.shape)
            a["context_dense_keys"].append(key)
            a["context_dense_types"].append(dtype)
            a["context_dense_shapes"].append(tuple(shape))
            a["context_dense_defaults"].append(_default_array(feature, key, dtype, shape))
        else:
            raise ValueError(
                f"Context feature {key!r}: a context feature is a FixedLenFeature or a "
                f"VarLenFeature, got {type(feature).__name__}"
            )
    for key in sorted(sequence_features or {}):
        feature = sequence_features[key]
        dtype = _feature_dtype(key, feature)
        if isinstance(feature, VarLenFeature):
            a["feature_list_sparse_keys"].append(key)
            a["feature_list_sparse_types"].append(dtype)
        elif isinstance(feature, FixedLenSequenceFeature):
            if feature.default_value is not None:
                raise ValueError(f"Value feature_list.dense_defaults[{key}] must be None")
            a["feature_list_dense_keys"].append(key)
            a["feature_list_dense_types"].append(dtype)
            a["feature_list_dense_shapes"].append(tuple(_fixed_shape(key, feature.shape)))
            a["feature_list_dense_missing"].append(bool(feature.allow_missing))
        else:
            raise ValueError(
                f"Sequence feature {key!r}: a sequence feature is a FixedLenSequenceFeature "
                f"or a VarLenFeature, got {type(feature).__name__}"
            )
    return {k: tuple(v) for k, v in a.items()}


def _feature_dtype(key: str, feature):
    dtype = _dtypes.as_dtype(feature.dtype)
    if dtype not in _TYPE_NAMES:
        raise ValueError(
            f"Feature {key!r}: dtype must be float32, int64 or string, got {dtype.name}"
        )
    return dtype


def _fixed_shape(key: str, shape) -> list:
    shape = TensorShape(shape)
    if not shape.is_fully_defined():
        raise ValueError(f"Feature {key!r}: the shape must be fully defined, got {shape}")
    return [int(d) for d in shape.as_list()]


def _parse_sequence(serialized, context_features, sequence_features, name, batched: bool):
    if not context_features and not sequence_features:
        raise ValueError("Missing features.")
    attrs = _sequence_attrs(context_features, sequence_features)
    attrs["batched"] = batched
    default_name = "ParseSequenceExample" if batched else "ParseSingleSequenceExample"
    with name_scope(name or default_name):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        want = 1 if batched else 0
        if serialized.shape.ndims not in (None, want):
            raise ValueError(
                f"serialized must be a {'vector' if batched else 'scalar'} of strings, "
                f"got shape {serialized.shape}"
            )
        outputs = list(
            apply_op("ParseSequenceExample", (serialized,), attrs, "ParseSequenceExample").outputs
        )

    def take(count: int) -> list:
        taken = outputs[:count]
        del outputs[:count]
        return taken

    def sparse(keys) -> dict:
        n = len(keys)
        indices, values, shapes = take(n), take(n), take(n)
        return {k: SparseTensor(i, v, s) for k, i, v, s in zip(keys, indices, values, shapes)}

    context = sparse(attrs["context_sparse_keys"])
    context.update(zip(attrs["context_dense_keys"], take(len(attrs["context_dense_keys"]))))
    lists = sparse(attrs["feature_list_sparse_keys"])
    dense_keys = attrs["feature_list_dense_keys"]
    lists.update(zip(dense_keys, take(len(dense_keys))))
    lengths = dict(zip(dense_keys, take(len(dense_keys))))
    return context, lists, lengths


def parse_single_sequence_example(
    serialized, context_features=None, sequence_features=None, example_name=None, name=None
):
    """The context and sequence features of one serialized ``tf.train.SequenceExample`` (a
    string scalar): ``(context, sequences)``, two dicts.  Context features are
    `FixedLenFeature` (a dense tensor of its shape) or `VarLenFeature` (a SparseTensor);
    sequence features are `FixedLenSequenceFeature` (``[steps] + shape``) or `VarLenFeature`
    (a SparseTensor ``[steps, longest]``).  ``example_name`` only names the example in
    TensorFlow's messages."""
    context, lists, _ = _parse_sequence(
        serialized, context_features, sequence_features, name, batched=False
    )
    return context, lists


def parse_sequence_example(
    serialized, context_features=None, sequence_features=None, example_names=None, name=None
):
    """`parse_single_sequence_example` of a vector of serialized SequenceExamples:
    ``(context, sequences, lengths)``, each feature with a leading batch dimension, the
    sequences padded to the longest (with 0 or ``b""``), and ``lengths`` the number of steps
    of each example for each `FixedLenSequenceFeature`."""
    return _parse_sequence(serialized, context_features, sequence_features, name, batched=True)

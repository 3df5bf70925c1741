"""``df.data.experimental``: TF1's ``tf.data.experimental`` constants and the transformations
that are compositions of `Dataset` methods (each returns a function of a dataset, for
``dataset.apply``)."""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.tensor_shape import TensorShape
from ..framework.type_spec import TypeSpec
from ..ops import gather_ops
from ..ops.tensor_array_ops import TensorArraySpec
from .dataset_ops import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from .lookup import DatasetInitializer, index_table_from_dataset, table_from_dataset
from .options import (
    AutoShardPolicy,
    AutotuneAlgorithm,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    ServiceOptions,
    ThreadingOptions,
)
from .readers import CsvDataset, SqlDataset, TFRecordWriter, make_csv_dataset
from .saveable import make_saveable_from_iterator
from .snapshot import snapshot
from .structures import (
    DatasetStructure,
    Optional,
    OptionalStructure,
    RaggedTensorStructure,
    SparseTensorStructure,
    TensorStructure,
    get_next_as_optional,
)

# TensorFlow 2.0's names of the type specs
Structure = TypeSpec


def TensorArrayStructure(dtype, element_shape, dynamic_size, infer_shape):  # noqa: N802
    """TensorFlow 2.0's name of `TensorArraySpec`, taking the dtype first."""
    return TensorArraySpec(element_shape, dtype, dynamic_size, infer_shape)


# ``shard(SHARD_HINT, ...)`` in a pipeline: a distribution strategy with the HINT policy puts
# the number of workers there.
SHARD_HINT = -1

_INT64_MAX = np.iinfo(np.int64).max

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "SHARD_HINT",
    "UNKNOWN_CARDINALITY",
    "AutoShardPolicy",
    "AutotuneAlgorithm",
    "AutotuneOptions",
    "Counter",
    "CsvDataset",
    "DatasetInitializer",
    "DatasetStructure",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "Optional",
    "OptionalStructure",
    "RaggedTensorStructure",
    "RandomDataset",
    "Reducer",
    "ServiceOptions",
    "SparseTensorStructure",
    "SqlDataset",
    "Structure",
    "TFRecordWriter",
    "TensorArrayStructure",
    "TensorStructure",
    "ThreadingOptions",
    "assert_cardinality",
    "bucket_by_sequence_length",
    "cardinality",
    "choose_from_datasets",
    "copy_to_device",
    "dense_to_ragged_batch",
    "dense_to_sparse_batch",
    "enable_debug_mode",
    "enumerate_dataset",
    "from_list",
    "get_next_as_optional",
    "get_single_element",
    "get_structure",
    "index_table_from_dataset",
    "group_by_reducer",
    "group_by_window",
    "ignore_errors",
    "map_and_batch",
    "make_batched_features_dataset",
    "make_csv_dataset",
    "make_saveable_from_iterator",
    "map_and_batch_with_legacy_function",
    "pad_to_cardinality",
    "parallel_interleave",
    "parse_example_dataset",
    "prefetch_to_device",
    "rejection_resample",
    "sample_from_datasets",
    "scan",
    "shuffle_and_repeat",
    "snapshot",
    "table_from_dataset",
    "take_while",
    "unbatch",
    "unique",
]


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``dataset.shuffle(buffer_size, seed).repeat(count)``: each pass over the dataset in a
    new order, ``count`` passes (forever when None)."""

    def apply(dataset):
        return dataset.shuffle(buffer_size, seed).repeat(count)

    return apply


def map_and_batch(
    map_func,
    batch_size,
    num_parallel_batches=None,
    drop_remainder=False,
    num_parallel_calls=None,
):
    """``dataset.map(map_func).batch(batch_size, drop_remainder)``; the parallelism arguments
    tune TensorFlow's fused kernel and change no element."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("`num_parallel_batches` and `num_parallel_calls` are mutually exclusive")

    def apply(dataset):
        return dataset.map(map_func).batch(batch_size, drop_remainder=drop_remainder)

    return apply


map_and_batch_with_legacy_function = map_and_batch


def Counter(start=0, step=1, dtype=_dtypes.int64):  # noqa: N802 - TensorFlow's name
    """The numbers ``start``, ``start + step``, ... without end (until int64 overflows), of
    ``dtype``."""
    from ..ops.math_ops import cast

    stop = _INT64_MAX if step > 0 else -_INT64_MAX - 1
    counted = Dataset.range(start, stop, step)
    dtype = _dtypes.as_dtype(dtype)
    return counted if dtype == _dtypes.int64 else counted.map(lambda x: cast(x, dtype))


def enumerate_dataset(start=0):
    """Each element ``e`` of a dataset as ``(index, e)``, the int64 index counting from
    ``start``."""

    def apply(dataset):
        return Dataset.zip((Dataset.range(start, _INT64_MAX), dataset))

    return apply


def unbatch():
    """``dataset.unbatch()``: each element split along its first dimension."""
    return lambda dataset: dataset.unbatch()


def take_while(predicate):
    """``dataset.take_while(predicate)``: the elements before the first that fails
    ``predicate``."""
    return lambda dataset: dataset.take_while(predicate)


# -- TensorFlow's Dataset transformations, for ``dataset.apply`` -----------------------------------
def scan(initial_state, scan_func):
    """``dataset.scan(initial_state, scan_func)``: a running state; ``scan_func(state,
    element)`` gives ``(new_state, output)``."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def unique():
    """``dataset.unique()``: the elements without repeats, in order of first appearance."""
    return lambda dataset: dataset.unique()


def ignore_errors(log_warning=False):
    """``dataset.ignore_errors(log_warning)``: the elements, leaving out those whose making
    failed."""
    return lambda dataset: dataset.ignore_errors(log_warning)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """``dataset.group_by_window(...)``: windows of the elements of each key, each made a
    dataset by ``reduce_func(key, window)``."""

    def apply(dataset):
        return dataset.group_by_window(key_func, reduce_func, window_size, window_size_func)

    return apply


def bucket_by_sequence_length(
    element_length_func,
    bucket_boundaries,
    bucket_batch_sizes,
    padded_shapes=None,
    padding_values=None,
    pad_to_bucket_boundary=False,
    no_padding=False,
    drop_remainder=False,
):
    """``dataset.bucket_by_sequence_length(...)``: elements batched (and padded) with others
    of about their length."""

    def apply(dataset):
        return dataset.bucket_by_sequence_length(
            element_length_func,
            bucket_boundaries,
            bucket_batch_sizes,
            padded_shapes,
            padding_values,
            pad_to_bucket_boundary,
            no_padding,
            drop_remainder,
        )

    return apply


def parallel_interleave(
    map_func,
    cycle_length,
    block_length=1,
    sloppy=False,
    buffer_output_elements=None,
    prefetch_input_elements=None,
):
    """``dataset.interleave(map_func, cycle_length, block_length)``: the elements of the
    datasets ``map_func`` makes, in TensorFlow's deterministic order (``sloppy`` allows any
    order, so that one too); the buffer sizes tune TensorFlow's threads and change no
    element."""
    for value, what in ((buffer_output_elements, "buffer_output_elements"),
                        (prefetch_input_elements, "prefetch_input_elements")):  # fmt: skip
        if value is not None and not isinstance(value, Tensor) and int(value) < 0:
            raise ValueError(f"`{what}` must be at least 0, got {value}")

    def apply(dataset):
        return dataset.interleave(map_func, cycle_length, block_length)

    return apply


class Reducer:
    """How ``group_by_reducer`` reduces the elements of a key: ``init_func(key)`` gives the
    first state, ``reduce_func(state, element)`` the next one, ``finalize_func(state)`` the
    output."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self._init_func = init_func
        self._reduce_func = reduce_func
        self._finalize_func = finalize_func

    @property
    def init_func(self):
        return self._init_func

    @property
    def reduce_func(self):
        return self._reduce_func

    @property
    def finalize_func(self):
        return self._finalize_func


def group_by_reducer(key_func, reducer):
    """One element per key (``key_func``, an int64 scalar), in increasing order of key, once
    the input ends: the `Reducer`'s finalized state of that key's elements."""
    from .dataset_ops import (
        _check_int64_scalar,
        _DatasetFunction,
        _Stage,
        _trace_with_state,
    )

    def apply(dataset):
        key = _DatasetFunction(
            key_func, dataset._structure, dataset._types, dataset._shapes, "key_func"
        )
        _check_int64_scalar(key, "key_func")
        init = _DatasetFunction(reducer.init_func, 0, [_dtypes.int64], [TensorShape([])],
                                "init_func")  # fmt: skip
        if init.dataset is not None:
            raise TypeError("`init_func` must return tensors")
        state_types = [t.dtype for t in init.outputs]
        reduce, _ = _trace_with_state(
            reducer.reduce_func,
            init.structure,
            state_types,
            [t.shape for t in init.outputs],
            dataset,
            "reduce_func",
            split=False,
        )
        finalize = _DatasetFunction(
            reducer.finalize_func, init.structure, state_types, reduce.state_shapes,
            "finalize_func",
        )  # fmt: skip
        if finalize.dataset is not None:
            raise TypeError("`finalize_func` must return tensors")
        stage = _Stage(
            "group_by_reducer",
            params={"state_count": len(state_types)},
            parents=[dataset._stage],
            function=(key, init, reduce, finalize),
        )
        return Dataset(
            stage,
            finalize.structure,
            [t.dtype for t in finalize.outputs],
            [t.shape for t in finalize.outputs],
        )._with_options_of(dataset)

    return apply


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
    """For each element ``i`` of ``choice_dataset``, the next element of ``datasets[i]``
    (``Dataset.choose_from_datasets``, whose ``stop_on_empty_dataset`` is True by default)."""
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    """Elements of ``datasets`` drawn at random with ``weights``
    (``Dataset.sample_from_datasets``)."""
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


class RandomDataset(Dataset):
    """Random int64 scalars in ``[0, 2**32)`` without end (``Dataset.random``)."""

    def __init__(self, seed=None, rerandomize_each_iteration=None, name=None):
        made = Dataset.random(seed, rerandomize_each_iteration, name)
        super().__init__(made._stage, made._structure, made._types, made._shapes)


def get_single_element(dataset):
    """``dataset.get_single_element()``: the one element of ``dataset`` as tensors."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"`dataset` must be a `tf.data.Dataset` object, got {type(dataset)}")
    return dataset.get_single_element()


def cardinality(dataset):
    """``dataset.cardinality()``: the number of elements, ``INFINITE_CARDINALITY`` or
    ``UNKNOWN_CARDINALITY``, as an int64 scalar tensor."""
    return dataset.cardinality()


def assert_cardinality(expected_cardinality):
    """The elements, failing with `FailedPreconditionError` when there are not exactly
    ``expected_cardinality`` of them (which ``cardinality`` then gives)."""
    from .dataset_ops import _int64

    def apply(dataset):
        return dataset._derived(
            "assert_cardinality", [_int64(expected_cardinality, "expected_cardinality")]
        )

    return apply


def from_list(elements, name=None):
    """A dataset of the elements of the list ``elements`` (each a structure of tensors, all
    of the same structure and dtypes), one after another."""
    from .dataset_ops import _flatten, _Stage, convert_to_tensor, name_scope

    if not isinstance(elements, list) or not elements:
        raise ValueError("`elements` must be a non-empty list")
    with name_scope(name or "ListDataset"):
        flat = [[convert_to_tensor(t) for t in _flatten(e)] for e in elements]
    first = flat[0]
    for e in flat[1:]:
        if [t.dtype for t in e] != [t.dtype for t in first]:
            raise TypeError(
                "All elements of from_list must have the same structure and dtypes, got "
                f"{[t.dtype.name for t in first]} and {[t.dtype.name for t in e]}"
            )
    shapes = [t.shape for t in first]
    for e in flat[1:]:
        shapes = [a.most_specific_compatible_shape(t.shape) for a, t in zip(shapes, e)]
    stage = _Stage("list", [t for e in flat for t in e], {"width": len(first)})
    return Dataset(stage, elements[0], [t.dtype for t in first], shapes)


def pad_to_cardinality(cardinality, mask_key="valid"):
    """The elements (dicts) with ``mask_key`` True, then filler elements (zeros, with
    ``mask_key`` False) up to ``cardinality`` elements in all."""
    from ..ops.array_ops import zeros
    from ..ops.constant_op import constant

    def apply(dataset):
        if not isinstance(dataset._structure, dict):
            raise ValueError("`pad_to_cardinality` requires its input dataset to be a dictionary.")
        padding = cardinality - dataset.cardinality()
        filler = {
            key: zeros(shape, dtype)
            for key, dtype, shape in zip(
                sorted(dataset._structure), dataset._types, dataset._shapes
            )
        }
        filler[mask_key] = constant(False)

        def valid(element):
            element = dict(element)
            element[mask_key] = True
            return element

        return dataset.map(valid).concatenate(Dataset.from_tensors(filler).repeat(padding))

    return apply


def _cpu_device(device, what: str) -> None:
    from ..framework.device import DeviceSpec

    spec = DeviceSpec.from_string(device)
    if spec.device_type is not None and spec.device_type.upper() != "CPU":
        raise ValueError(f"{what}: dataflow runs on the CPU only; got the device {device!r}")


def copy_to_device(target_device, source_device="/cpu:0"):
    """The elements, copied from ``source_device`` to ``target_device`` (CPU devices: the
    same elements)."""
    _cpu_device(target_device, "copy_to_device")
    _cpu_device(source_device, "copy_to_device")
    return lambda dataset: dataset._derived("copy_to_device")


def prefetch_to_device(device, buffer_size=None):
    """The elements, read ahead (``buffer_size`` of them) onto ``device`` (a CPU device: the
    same elements)."""
    _cpu_device(device, "prefetch_to_device")
    return lambda dataset: dataset._derived("copy_to_device")


def get_structure(dataset_or_iterator):
    """The `TensorSpec` of each component of an element, in its structure."""
    from .dataset_ops import Iterator

    if not isinstance(dataset_or_iterator, (Dataset, Iterator)):
        raise TypeError(
            "`dataset_or_iterator` must be a `tf.data.Dataset` or tf.data.Iterator object, "
            f"but got {type(dataset_or_iterator)}."
        )
    return dataset_or_iterator.element_spec


def enable_debug_mode():
    """TensorFlow's debug mode runs a pipeline's functions eagerly and in order; it is only
    for eager execution there, and is refused in graph mode as TensorFlow does."""
    from ..eager.context import executing_eagerly

    if not executing_eagerly():
        raise ValueError("`enable_debug_mode() is only supported in eager mode.")
    global _DEBUG_MODE
    _DEBUG_MODE = True


_DEBUG_MODE = False


def dense_to_sparse_batch(batch_size, row_shape):
    """``batch_size`` consecutive dense elements as one `SparseTensor` whose rows have the
    dense shape ``row_shape`` (``Dataset.sparse_batch``)."""
    return lambda dataset: dataset.sparse_batch(batch_size, row_shape)


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=_dtypes.int64):
    """Like ``batch``, components of not fully known shape batched as `RaggedTensor`s
    (``Dataset.ragged_batch``)."""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """Each element (a vector of serialized ``tf.train.Example``) parsed into the dict of
    ``features`` that ``df.io.parse_example`` gives; the elements stay in order whatever
    ``num_parallel_calls`` and ``deterministic`` say."""
    from ..ops.parsing_ops import parse_example

    if features is None:
        raise ValueError("Argument `features` is required, but not specified.")

    def apply(dataset):
        types, shapes = dataset._types, dataset._shapes
        if types != [_dtypes.string] or not shapes[0].is_compatible_with([None]):
            raise TypeError(
                "Input dataset should be a dataset of vectors of strings. Instead it is "
                f"`{dataset.element_spec}`."
            )
        return dataset.map(lambda serialized: parse_example(serialized, features))

    return apply


def make_batched_features_dataset(
    file_pattern,
    batch_size,
    features,
    reader=None,
    label_key=None,
    reader_args=None,
    num_epochs=None,
    shuffle=True,
    shuffle_buffer_size=10000,
    shuffle_seed=None,
    prefetch_buffer_size=None,
    reader_num_threads=None,
    parser_num_threads=None,
    sloppy_ordering=False,
    drop_final_batch=False,
):
    """Batches of ``batch_size`` ``tf.train.Example`` records of the files ``file_pattern``
    (read by ``reader``, ``TFRecordDataset`` by default, with ``reader_args``), parsed into the
    dict of ``features`` (with ``label_key``: a ``(features, label)`` pair), as TensorFlow
    makes them: files and records shuffled unless ``shuffle`` is False, read ``num_epochs``
    times (None: without end, batches then all full)."""
    from .file_datasets import TFRecordDataset

    if reader is None:
        reader = TFRecordDataset
    if reader_num_threads is None:
        reader_num_threads = 1
    reader_args = list(reader_args or [])
    if label_key is not None and label_key not in features:
        raise ValueError(
            f"The `label_key` provided ({label_key}) must be one of the `features` keys."
        )
    dataset = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    dataset = dataset.interleave(
        lambda filename: reader(filename, *reader_args),
        cycle_length=reader_num_threads,
        block_length=1,
    )
    if dataset._types == [_dtypes.string, _dtypes.string]:  # (key, value) records
        dataset = dataset.map(lambda _, value: value)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch or num_epochs is None)
    dataset = dataset.apply(parse_example_dataset(features, parser_num_threads or 2))
    if label_key is not None:
        dataset = dataset.map(lambda x: (x, x.pop(label_key)))
    return dataset.prefetch(prefetch_buffer_size)


# -- rejection_resample ----------------------------------------------------------------------------
def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    """``(class, element)`` pairs of a dataset resampled so that the classes
    (``class_func(element)``, an int32 or int64 scalar) follow ``target_dist``, as TensorFlow
    does it: elements of an over-represented class are dropped at random, mixed with the
    original elements as far as ``initial_dist`` allows (estimated from the classes seen so far
    when None).  Like TensorFlow's, the mixing reads the input twice."""
    from ..ops import array_ops, math_ops, random_ops

    def acceptance(initial, target):
        tiny = np.finfo(np.float32).tiny
        ratio = target / (initial + tiny)
        top, least = math_ops.reduce_max(ratio), math_ops.reduce_min(ratio)
        return (ratio - least) / (top - least), least

    def apply(dataset):
        target_value = _constant_floats(target_dist, "target_dist")
        original_share = None
        if initial_dist is not None:
            initial_value = _constant_floats(initial_dist, "initial_dist")
            ratio = target_value / (initial_value + np.finfo(np.float32).tiny)
            original_share = float(ratio.min())
            with np.errstate(invalid="ignore", divide="ignore"):
                accept = (ratio - ratio.min()) / (ratio.max() - ratio.min())
            accept_ds = Dataset.from_tensors(accept.astype(np.float32)).repeat()
            share_ds = Dataset.from_tensors(np.float32(original_share)).repeat()
        else:
            num_classes = len(target_value)

            def estimate(seen, classes):
                seen = seen + math_ops.reduce_sum(
                    array_ops.one_hot(classes, num_classes, dtype=_dtypes.int64), 0
                )
                dist = math_ops.cast(
                    math_ops.truediv(seen, math_ops.reduce_sum(seen)), _dtypes.float32
                )
                return seen, gather_ops.tile(array_ops.expand_dims(dist, 0), [32, 1])

            initial_ds = (
                dataset.map(class_func)
                .batch(32)
                .scan(np.full([num_classes], 10, np.int64), estimate)
                .unbatch()
            )
            pairs = initial_ds.map(lambda dist: acceptance(dist, target_value))
            accept_ds = pairs.map(lambda a, share: a)
            share_ds = pairs.map(lambda a, share: share)

        def with_class(*element):
            value = element[0] if len(element) == 1 else element
            return class_func(*element), value

        def gather(accept, *element):
            value = element[0] if len(element) == 1 else element
            label = class_func(*element)
            return label, gather_ops.gather(accept, label), value

        def keep(label, chance, value):
            return random_ops.random_uniform([], seed=seed, dtype=_dtypes.float32) < chance

        kept = (
            Dataset.zip((accept_ds, dataset))
            .map(lambda accept, element: gather(accept, *_unpacked(element)))
            .filter(keep)
            .map(lambda label, chance, value: (label, value))
        )
        if original_share == 1:
            return dataset.map(with_class)
        if original_share == 0:
            return kept
        return Dataset.sample_from_datasets(
            [dataset.map(with_class), kept],
            weights=share_ds.map(lambda share: [share, 1.0 - share]),
            seed=seed,
            stop_on_empty_dataset=True,
        )

    return apply


def _constant_floats(value, what: str) -> np.ndarray:
    """A distribution given as a list, an array or a constant tensor, as float32 values (the
    pipeline's functions cannot read other tensors of the graph)."""
    if isinstance(value, Tensor):
        if value.op.type != "Const":
            raise ValueError(
                f"rejection_resample: `{what}` must be a constant, got {value.name} made by a "
                f"{value.op.type} op"
            )
        value = value.op.attrs["value"]
    values = np.asarray(value, np.float32)
    if values.ndim != 1:
        raise ValueError(f"rejection_resample: `{what}` must be a vector, got shape {values.shape}")
    return values


def _unpacked(element) -> tuple:
    return element if isinstance(element, tuple) and not hasattr(element, "_fields") else (element,)

"""The core of `dataflow.data` (whose docstring describes the input pipeline): `Dataset`,
its transformations and sources, `Iterator`, the stages a pipeline is recorded as, and how a
Session runs them.  The modules beside this one build on it; the package re-exports it."""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..eager.context import executing_eagerly
from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, get_default_graph, name_scope
from ..framework.op_registry import apply_op
from ..framework.random_seed import get_seed
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..ops import gather_ops
from . import options as _options
from .elements import (  # noqa: F401 - defined there, reached here too
    _composite_class,
    _composite_spec,
    _flatten,
    _is_structure,
    _pack,
    _parts,
    _replace_leaves,
    _structure_of,
    _width,
)
from .generator_source import _GeneratorSource
from .iterator_ops import (  # noqa: F401 - defined there, reached here too
    _check_element,
    _infer_get_next,
    _infer_handle,
    _IteratorState,
    _state,
)
from .options import Options, ThreadingOptions
from .pipeline import (  # noqa: F401 - defined there, reached here too
    _STAGE_FACTORIES,
    _WITH_SESSIONS,
    AUTOTUNE,
    INFINITE_CARDINALITY,
    STAGE_KINDS,
    UNKNOWN_CARDINALITY,
    _choose,
    _DatasetFunction,
    _describe_pipeline,
    _elements,
    _fixed_length_records,
    _list,
    _log,
    _next_slot,
    _range,
    _register_structures,
    _Resumable,
    _run_pipeline,
    _sample,
    _ShufflePasses,
    _slices,
    _slots,
    _Stage,
    _structures,
    _take,
    _tensors,
    _text_lines,
    _tf2_semantics,
    _tf_records,
    _threading_of,
    _unbatch,
    _unique,
    register_dataset_class,
)
from .whole_dataset_ops import (  # noqa: F401 - defined there, reached here too
    _check_alike,
    _common_shapes,
)

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "Iterator",
    "Options",
    "ThreadingOptions",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "make_initializable_iterator",
    "make_one_shot_iterator",
]


# -- Dataset ---------------------------------------------------------------------------------------
# How ``iter(dataset)`` reads a dataset in Python (TF2): "iterator", the class of the iterator,
# which `owned_iterator` (built on this module) registers.
_python_iteration: dict = {}


def register_python_iteration(**entries) -> None:
    _python_iteration.update(entries)


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
    def from_generator(
        generator,
        output_types=None,
        output_shapes=None,
        args=None,
        output_signature=None,
        name: Optional[str] = None,
    ) -> Dataset:
        """The elements ``generator(*args)`` yields (a new call for each pass), of the structure
        ``output_signature`` gives (a nest of `TensorSpec`), or ``output_types`` and
        ``output_shapes`` (unknown shapes when not given).  ``args`` are tensors (or values
        made tensors), passed to the generator as numpy values.  An element that does not fit
        fails the read with `InvalidArgumentError` (see `dataflow.data.generator_source`)."""
        from ..framework.tensor_spec import TensorSpec
        from ..framework.type_spec import TypeSpec

        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        if output_signature is not None:
            if output_types is not None:
                raise TypeError(
                    "The `output_types` argument can not be used together with the "
                    "`output_signature` argument."
                )
            if output_shapes is not None:
                raise TypeError(
                    "The `output_shapes` argument can not be used together with the "
                    "`output_signature` argument."
                )
            specs = _flatten(output_signature)
            for spec in specs:
                if not isinstance(spec, TypeSpec):
                    raise TypeError(
                        "`output_signature` must contain objects that are subclass of "
                        f"`tf.TypeSpec` but found {type(spec)} which is not."
                    )
                if not isinstance(spec, TensorSpec):
                    raise TypeError(
                        f"from_generator takes TensorSpecs in `output_signature`, got {spec!r}: "
                        "yield the parts of a sparse or ragged tensor and build it in a map"
                    )
            structure = output_signature
            types = [spec.dtype for spec in specs]
            shapes = [spec.shape for spec in specs]
        else:
            if output_types is None:
                raise TypeError(
                    "To specify the output signature you need to provide either the "
                    "`output_signature` argument or the `output_types` argument."
                )
            types = [_dtypes.as_dtype(t) for t in _flatten(output_types)]
            structure = _pack(output_types, types)
            if output_shapes is None:
                shapes = [TensorShape(None)] * len(types)
            else:
                shapes = [TensorShape(s) for s in _flatten_shapes(output_shapes, output_types)]
        # TensorFlow checks an element by its spec only when it is one component of unknown
        # rank, and by its types and shapes otherwise (`generator_source`).
        by_spec = not _is_structure(structure) and shapes[0].ndims is None
        with name_scope(name or "GeneratorDataset"):
            arguments = [convert_to_tensor(a, name="args") for a in (args or ())]
        structure = _pack(structure, types)  # the nesting, with dtypes as leaves
        source = _GeneratorSource(generator, structure, types, shapes, by_spec)
        return Dataset(_Stage("generator", arguments, function=source), structure, types, shapes)

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
        if executing_eagerly():
            params["passes"] = _ShufflePasses()
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
            params={"preserve_cardinality": True} if _tf2_semantics() else None,
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
            return gather_ops.gather(constant(sizes, _dtypes.int64), bucket)

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
                    filler = gather_ops.gather(constant(boundaries, _dtypes.int64), bucket) - 1
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

    def reduce(self, initial_state, reduce_func, name: Optional[str] = None):
        """``reduce_func(state, element)`` applied to every element in turn from
        ``initial_state`` (a structure of tensors); the last state, as tensors of the initial
        state's structure and dtypes (its shapes relaxed where an element changes them, as
        TensorFlow retraces)."""
        if not callable(reduce_func):
            raise ValueError(
                f"Argument `func` must be a callable. Received func={reduce_func} (of type "
                f"{type(reduce_func)})"
            )
        with name_scope(name or "ReduceDataset") as scope:
            state = [
                convert_to_tensor(t, name=f"initial_state_{i}")
                for i, t in enumerate(_flatten(initial_state))
            ]
            function, _ = _trace_with_state(
                reduce_func,
                initial_state,
                [t.dtype for t in state],
                [t.shape for t in state],
                self,
                "reduce",
                split=False,
            )
            records, tensors = _describe_pipeline(self._stage)
            attrs = _get_next_attrs([t.dtype for t in state], function.state_shapes)
            attrs.update(pipeline=records, reduce=function, threading=_threading_of(self))
            inputs = [*state, *tensors, *function.captured_tensors]
            op = apply_op("ReduceDataset", inputs, attrs, name=scope)  # the scope's own name
        return _pack(initial_state, list(op.outputs))

    # -- Python iteration (TF2) -------------------------------------------------------------------
    def __iter__(self):
        """An iterator over the elements, from the first (``for x in dataset``, ``iter``): in
        eager mode they come as eager tensors; inside a ``df.function`` (or a converted
        function built in a graph) the iterator's ops are built into the graph.  Elsewhere,
        TF1 graph mode, a RuntimeError as TensorFlow's."""
        if not (executing_eagerly() or get_default_graph().building_function):
            raise RuntimeError(
                "`tf.data.Dataset` only supports Python-style iteration in eager mode or within "
                "tf.function."
            )
        return _python_iteration["iterator"](self)

    def as_numpy_iterator(self):
        """The elements as numpy values (`NumpyIterator`), in eager mode only."""
        if not executing_eagerly():
            raise RuntimeError(
                "`tf.data.Dataset.as_numpy_iterator()` is only supported in eager mode."
            )
        return _structures["NumpyIterator"](self)

    def __len__(self) -> int:
        """The number of elements, in eager mode, where it is known without reading them
        (`cardinality`); a TypeError otherwise, as TensorFlow's."""
        if not executing_eagerly():
            raise TypeError(
                "`tf.data.Dataset` only supports `len` in eager mode. Use "
                "`tf.data.Dataset.cardinality()` instead."
            )
        length = int(self.cardinality())
        if length == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if length == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return length

    def __bool__(self) -> bool:
        return True  # a dataset is true even when it is empty (``__len__`` must not decide)

    def __repr__(self) -> str:
        return f"<Dataset element_spec={self.element_spec!r}>"

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
        if len(new) != count and what == "reduce":  # TensorFlow's ReduceDataset op says so
            raise InvalidArgumentError(
                None,
                None,
                "The number of components of the initial state and the reduce function output "
                f"does not match. (initial_state={count}, output={len(new)}).",
            )
        if len(new) != count:
            raise TypeError(
                f"The element structure for the new state must match the initial state; "
                f"{what} gave {len(new)} state components, expected {count}."
            )
        got = [t.dtype for t in new]
        if got != list(state_types):
            joint = " but got " if what == "reduce" else ", got "  # as TensorFlow words each
            raise TypeError(
                "The element types for the new state must match the initial state. Expected "
                f"{_pack(state_structure, list(state_types))}{joint}"
                f"{_pack(state_structure, got)}."
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


register_dataset_class(Dataset)


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
    "AnonymousIterator",
    "MakeIterator",
    "IteratorGetNext",
    "OneShotIteratorGetNext",
    "DatasetCardinality",
    "DatasetToSingleElement",
    "ReduceDataset",
):
    NotDifferentiable(_type)

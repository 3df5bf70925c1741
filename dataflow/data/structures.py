"""Types of datasets and their values, as TensorFlow's ``tf.data`` names them: `DatasetSpec`
(``DatasetStructure``), the ``*Structure`` constructors of ``data.experimental`` (the older
names of the specs), `Optional` and its spec, and `NumpyIterator`.

An `Optional` is an element that may be missing: ``has_value()`` is a bool tensor and
``get_value()`` gives the element, failing with `InvalidArgumentError` when there is none.
``get_next_as_optional(iterator)`` reads an iterator's next element as one, so a program can
test for the end of the data in the graph instead of catching `OutOfRangeError`.
"""

from __future__ import annotations

from typing import Optional as _Maybe

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.ragged_tensor import RaggedTensorSpec
from ..framework.sparse_tensor import SparseTensorSpec
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape, as_shape
from ..framework.tensor_spec import TensorSpec
from ..framework.trace_type import TraceType
from . import dataset_arguments
from .dataset_ops import (
    Dataset,
    Iterator,
    _describe_pipeline,
    _flatten,
    _get_next_attrs,
    _pack,
    _register_structures,
    _state,
    _threading_of,
)

__all__ = [
    "DatasetSpec",
    "DatasetStructure",
    "NumpyIterator",
    "Optional",
    "OptionalSpec",
    "OptionalStructure",
    "RaggedTensorStructure",
    "SparseTensorStructure",
    "TensorStructure",
    "get_next_as_optional",
]


def _specs_of(element_spec) -> list:
    specs = _flatten(element_spec)
    for spec in specs:
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"An element spec here is a structure of TensorSpecs, got {spec!r}")
    return specs


def _spec_key(structure) -> tuple:
    """What makes two element specs equal: the nesting and each spec."""
    if isinstance(structure, dict):
        return ("dict", tuple((k, _spec_key(structure[k])) for k in sorted(structure)))
    if isinstance(structure, tuple):
        return (type(structure).__name__, tuple(_spec_key(s) for s in structure))
    return ("leaf", structure)


def _nesting_matches(a, b) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and sorted(a) == sorted(b)
            and all(_nesting_matches(a[k], b[k]) for k in a)
        )
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (
            isinstance(a, tuple)
            and isinstance(b, tuple)
            and len(a) == len(b)
            and all(_nesting_matches(x, y) for x, y in zip(a, b))
        )
    return True


# -- DatasetSpec -----------------------------------------------------------------------------------
class DatasetSpec(TraceType):
    """The type of a dataset: ``element_spec`` (a structure of `TensorSpec`) and
    ``dataset_shape`` (``()`` for one dataset).

    It is also a dataset argument's trace type (what ``Dataset.__tf_tracing_type__`` gives), as
    in TensorFlow: datasets of equal specs share a ``df.function``'s trace, which gets a
    dataset reading a ``variant`` placeholder (`in_functions`)."""

    __slots__ = ("_element_spec", "_dataset_shape")

    def __init__(self, element_spec, dataset_shape=()):
        _specs_of(element_spec)
        self._element_spec = element_spec
        self._dataset_shape = as_shape(dataset_shape)

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def value_type(self):
        return Dataset

    @property
    def shape(self) -> TensorShape:
        return self._dataset_shape

    @staticmethod
    def from_value(value) -> DatasetSpec:
        """The spec of the dataset ``value``."""
        if not isinstance(value, Dataset):
            raise TypeError(f"DatasetSpec.from_value takes a Dataset, got {type(value).__name__}")
        return DatasetSpec(value.element_spec)

    def is_compatible_with(self, spec_or_value) -> bool:
        """Whether a dataset (or the datasets of a spec) of ``spec_or_value`` fits this spec:
        the same nesting, each component compatible."""
        other = spec_or_value
        if isinstance(other, Dataset):
            other = DatasetSpec.from_value(other)
        if not isinstance(other, DatasetSpec):
            return False
        if not self._dataset_shape.is_compatible_with(other._dataset_shape):
            return False
        if not _nesting_matches(self._element_spec, other._element_spec):
            return False
        return all(
            a.is_compatible_with(b)
            for a, b in zip(_specs_of(self._element_spec), _specs_of(other._element_spec))
        )

    def __eq__(self, other) -> bool:
        return (
            type(other) is DatasetSpec
            and _spec_key(self._element_spec) == _spec_key(other._element_spec)
            and self._dataset_shape == other._dataset_shape
        )

    def __hash__(self) -> int:
        return hash((_spec_key(self._element_spec), repr(self._dataset_shape)))

    def __repr__(self) -> str:
        return f"DatasetSpec({self._element_spec!r}, {self._dataset_shape!r})"

    # -- as a trace type (see the class docstring) ----------------------------------------------
    def __tf_tracing_type__(self, context) -> DatasetSpec:
        return self  # a spec given where a dataset would be (``get_concrete_function``)

    def is_subtype_of(self, other) -> bool:
        return self == other

    def most_specific_common_supertype(self, others):
        return self if all(other == self for other in others) else None

    def placeholder_value(self, placeholder_context):
        name = getattr(placeholder_context, "name", None)
        return dataset_arguments.dataset_reading_a_placeholder(self, name)

    def to_tensors(self, value) -> list:
        return dataset_arguments.fed_tensors_of(value)

    def flatten(self) -> list:
        return [TensorSpec([], _dtypes.variant)]


DatasetStructure = DatasetSpec

# A dataset passed to a df.function is traced by its spec.  Set here, where `DatasetSpec` is
# defined: `dataset_ops` cannot import this module, which imports it.
Dataset.__tf_tracing_type__ = lambda self, context: DatasetSpec(self.element_spec)


def TensorStructure(dtype, shape):  # noqa: N802 - TensorFlow's name
    """``TensorSpec(shape, dtype)``: the older name."""
    return TensorSpec(shape, dtype)


def SparseTensorStructure(dtype, shape):  # noqa: N802 - TensorFlow's name
    """``SparseTensorSpec(shape, dtype)``: the older name."""
    return SparseTensorSpec(shape, dtype)


def RaggedTensorStructure(dtype, shape, ragged_rank):  # noqa: N802 - TensorFlow's name
    """``RaggedTensorSpec(shape, dtype, ragged_rank)``: the older name."""
    return RaggedTensorSpec(shape, dtype, ragged_rank)


# -- Optional --------------------------------------------------------------------------------------
class OptionalSpec:
    """The type of an `Optional`: the spec of its element (``OptionalStructure``)."""

    def __init__(self, element_spec):
        _specs_of(element_spec)
        self._element_spec = element_spec

    @property
    def element_spec(self):
        return self._element_spec

    @property
    def value_type(self):
        return Optional

    @staticmethod
    def from_value(value) -> OptionalSpec:
        if not isinstance(value, Optional):
            raise TypeError(
                f"OptionalSpec.from_value takes an Optional, got {type(value).__name__}"
            )
        return OptionalSpec(value.element_spec)

    def is_compatible_with(self, spec_or_value) -> bool:
        other = spec_or_value
        if isinstance(other, Optional):
            other = OptionalSpec.from_value(other)
        if not isinstance(other, OptionalSpec):
            return False
        if not _nesting_matches(self._element_spec, other._element_spec):
            return False
        return all(
            a.is_compatible_with(b)
            for a, b in zip(_specs_of(self._element_spec), _specs_of(other._element_spec))
        )

    def __eq__(self, other) -> bool:
        return type(other) is OptionalSpec and _spec_key(self._element_spec) == _spec_key(
            other._element_spec
        )

    def __hash__(self) -> int:
        return hash(_spec_key(self._element_spec))

    def __repr__(self) -> str:
        return f"OptionalSpec({self._element_spec!r},)"


OptionalStructure = OptionalSpec


class Optional:
    """An element that may be missing (see the module docstring).  Made by `from_value`,
    `empty` or ``get_next_as_optional``."""

    def __init__(self, has_value: Tensor, values: list, element_spec):
        self._has_value = has_value
        self._values = list(values)
        self._element_spec = element_spec

    @staticmethod
    def from_value(value) -> Optional:
        """An optional holding ``value`` (a structure of tensors)."""
        with name_scope("OptionalFromValue"):
            flat = [convert_to_tensor(v, name=f"component_{i}") for i, v in enumerate(
                _flatten(value))]  # fmt: skip
            has_value = convert_to_tensor(True, name="has_value")
        spec = _pack(value, [TensorSpec(t.shape, t.dtype) for t in flat])
        return Optional(has_value, flat, spec)

    @staticmethod
    def empty(element_spec) -> Optional:
        """An optional of ``element_spec`` holding nothing."""
        specs = _specs_of(element_spec)
        with name_scope("OptionalNone"):
            fillers = [_filler(s.dtype, s.shape) for s in specs]
            has_value = convert_to_tensor(False, name="has_value")
        return Optional(has_value, fillers, element_spec)

    @property
    def element_spec(self):
        return self._element_spec

    def has_value(self, name: _Maybe[str] = None) -> Tensor:
        """A bool scalar: whether there is an element."""
        return apply_op("Identity", [self._has_value], {}, name=name or "OptionalHasValue").outputs[
            0
        ]

    def get_value(self, name: _Maybe[str] = None):
        """The element, as tensors; running them fails with `InvalidArgumentError` when there
        is none."""
        specs = _specs_of(self._element_spec)
        op = apply_op(
            "OptionalGetValue",
            [self._has_value, *self._values],
            {
                "output_types": tuple(s.dtype for s in specs),
                "output_shapes": [s.shape for s in specs],
            },
            name=name or "OptionalGetValue",
        )
        return _pack(self._element_spec, list(op.outputs))


def _filler(dtype, shape: TensorShape) -> Tensor:
    dims = [] if shape.ndims is None else [0 if d is None else d for d in shape.as_list()]
    value = np.zeros(dims, dtype=_dtypes.numpy_dtype(dtype))
    if dtype == _dtypes.string:
        value = np.full(dims, b"", dtype=object)
    return convert_to_tensor(value, dtype=dtype)


def _infer_get_value(op):
    return list(zip(op.attrs["output_types"], op.attrs["output_shapes"]))


def _get_value_kernel(attrs):
    def get_value(has_value, *values):
        if not bool(has_value):
            raise InvalidArgumentError(None, None, "The given optional does not have a value.")
        return values[0] if len(values) == 1 else tuple(values)

    return get_value


define_op("OptionalGetValue", _infer_get_value, _get_value_kernel)
NotDifferentiable("OptionalGetValue")


def _infer_next_as_optional(op):
    return [(_dtypes.bool, ())] + list(zip(op.attrs["output_types"], op.attrs["output_shapes"]))


def _missing(attrs) -> list:
    out = []
    for dtype, shape in zip(attrs["output_types"], attrs["output_shapes"]):
        dims = [] if shape.ndims is None else [0 if d is None else d for d in shape.as_list()]
        if dtype == _dtypes.string:
            out.append(np.full(dims, b"", dtype=object))
        else:
            out.append(np.zeros(dims, dtype=_dtypes.numpy_dtype(dtype)))
    return out


def _next_as_optional_kernel(attrs):
    from ..framework.errors import OutOfRangeError
    from .iterator_ops import _check_element

    one_shot = attrs.get("pipeline")

    def next_as_optional(context, *inputs):
        if one_shot is not None:
            state = _state(context, attrs["shared_name"])
            state.start(one_shot, inputs, only_once=True, threading=attrs.get("threading"))
        else:
            state = _state(context, inputs[0])
        try:
            element = _check_element(state.next(), attrs)
        except OutOfRangeError:
            return (np.bool_(False), *_missing(attrs))
        values = element if len(attrs["output_types"]) > 1 else (element,)
        return (np.bool_(True), *values)

    return next_as_optional


define_op(
    "IteratorGetNextAsOptional",
    _infer_next_as_optional,
    _next_as_optional_kernel,
    stateful=True,
    inline=True,
    wants_context=True,
)
NotDifferentiable("IteratorGetNextAsOptional")


def get_next_as_optional(iterator) -> Optional:
    """The iterator's next element as an `Optional`: without a value past the end (where
    ``get_next`` fails with `OutOfRangeError`)."""
    if not isinstance(iterator, Iterator):
        raise TypeError(f"get_next_as_optional takes an Iterator, got {type(iterator).__name__}")
    attrs = _get_next_attrs(iterator._types, iterator._shapes)
    if iterator._one_shot_dataset is not None:
        records, tensors = _describe_pipeline(iterator._one_shot_dataset._stage)
        attrs.update(
            pipeline=records,
            shared_name=iterator._one_shot_key,
            threading=_threading_of(iterator._one_shot_dataset),
        )
        inputs = tensors
    else:
        inputs = [iterator._handle]
    op = apply_op("IteratorGetNextAsOptional", inputs, attrs, name="IteratorGetNextAsOptional")
    has_value, *values = op.outputs
    return Optional(has_value, values, iterator.element_spec)


# -- NumpyIterator ---------------------------------------------------------------------------------
class NumpyIterator:
    """The elements of ``dataset`` as numpy values, in eager mode (``for x in
    NumpyIterator(dataset)``, what ``dataset.as_numpy_iterator()`` gives): a scalar component
    is a numpy scalar, a string one ``bytes``.  Graph mode reads datasets through a Session
    instead, and refuses it as TensorFlow does."""

    def __init__(self, dataset):
        from ..eager.context import executing_eagerly
        from .iterator_ops import _EagerElements

        if not executing_eagerly():
            raise RuntimeError(
                "`tf.data.Dataset` only supports Python-style iteration in eager mode or within "
                "tf.function."
            )
        if not isinstance(dataset, Dataset):
            raise TypeError(f"NumpyIterator takes a Dataset, got {type(dataset).__name__}")
        self._structure = dataset._structure
        self._elements = _EagerElements(dataset, "Iterating a dataset as numpy values")

    def __iter__(self):
        return self

    def __next__(self):
        flat = [v[()] if v.ndim == 0 else v for v in next(self._elements)]  # as TensorFlow
        return _pack(self._structure, flat)

    def next(self):
        return self.__next__()

    def __del__(self):
        elements = getattr(self, "_elements", None)
        if elements is not None:
            elements.close()


_register_structures(
    DatasetSpec=DatasetSpec,
    get_next_as_optional=get_next_as_optional,
    NumpyIterator=NumpyIterator,
)

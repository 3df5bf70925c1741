"""``df.data``: input pipelines as ``tf.data`` builds them, read by iterators in a graph (TF1)
or in Python and ``df.function`` (TF2).

A `Dataset` is a description, made in Python, of a sequence of elements: where they come from
(``from_tensor_slices``, ``from_tensors``, ``range``, ``from_generator``) and what is done to
them (``map``,
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
attribute.  A ``map``/``filter`` function is converted by AutoGraph and traced once into a
graph of its own (placeholders for the element, its ops) and run by a Session of its own within
the iterator; the tensors of the outer graph it reads become inputs of its stage, and the eager
tensors it reads constants.  A graph whose pipeline has a function cannot be saved with
``df.io`` (the function is Python), like one with ``py_func``.

TF2 programs read datasets in Python instead (`owned_iterator`): in eager mode ``for x in
dataset`` (``iter``, ``next``, ``as_numpy_iterator``, ``len``, ``reduce``) runs the pipeline at
once and gives eager tensors, each loop from the first element.  In a ``df.function`` the same
loop is staged by AutoGraph as a while loop over an iterator of the graph, and a dataset passed
as an argument is keyed by its element spec (`in_functions`).  A dataset made eagerly or in a
function is TF2's in what differs from TF1's: ``map`` keeps its number of elements known, and
(made eagerly) each pass over a ``shuffle`` with a seed gives a new order, deterministic given
the seed; the orders are not TensorFlow's (its generator is not numpy's).  Outside them (TF1
graph mode) Python iteration raises TensorFlow's RuntimeError.

A leaf of an element may also be a `SparseTensor` or `RaggedTensor` (``map`` functions
returning one, ``dense_to_sparse_batch``, ``parse_example_dataset``): the pipeline carries its
parts, functions and iterators see the tensor, and ``batch`` joins them as TensorFlow does.
The stages run one element at a time in the reading thread, in order, so a pipeline's output
is always deterministic; ``with_options`` attaches `Options` (`df.data.options`).  TensorFlow's
other transformations and sources are in `df.data.experimental` (and `readers`, `structures`,
`snapshot`, `saveable`).

Layer: data, above io (a dataset can read the files io knows) and below distribute, nn
and training; it may import those below it and nothing above.
"""

# The input pipeline is built by `dataset_ops` (datasets, iterators, the pipeline's stages and
# how a Session runs them); the modules beside it add sources (`readers`), element structures
# (`structures`), lookups, snapshots and checkpointing, and TensorFlow's experimental names.
from ..framework.errors import (
    DataLossError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
    OutOfRangeError,
)
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import Graph, Tensor, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.random_seed import get_seed
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tfrecord import read_records
from . import (
    dataset_ops,
    experimental,  # noqa: E402, I001 - after the datasets it builds on
    in_functions,  # registers datasets with df.function and AutoGraph
    lookup,
    options,
    owned_iterator,
    readers,
    saveable,
    snapshot,
    structures,
)
from .dataset_ops import (
    AUTOTUNE,
    INFINITE_CARDINALITY,
    STAGE_KINDS,
    UNKNOWN_CARDINALITY,
    Dataset,
    Iterator,
    Options,
    ThreadingOptions,
    get_output_classes,
    get_output_shapes,
    get_output_types,
    make_initializable_iterator,
    make_one_shot_iterator,
)
from .file_datasets import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset
from .structures import DatasetSpec, NumpyIterator

__all__ = [
    "AUTOTUNE",
    "INFINITE_CARDINALITY",
    "UNKNOWN_CARDINALITY",
    "Dataset",
    "DatasetSpec",
    "FixedLengthRecordDataset",
    "Iterator",
    "NumpyIterator",
    "Options",
    "ThreadingOptions",
    "TFRecordDataset",
    "TextLineDataset",
    "experimental",
    "get_output_classes",
    "get_output_shapes",
    "get_output_types",
    "make_initializable_iterator",
    "make_one_shot_iterator",
]

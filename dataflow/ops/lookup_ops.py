"""Lookup tables (``tf.lookup``): maps from keys to values that live in the Session.

A table is a handle op (``HashTableV2``, ``MutableHashTableV2``, ``MutableDenseHashTableV2``)
whose value is the table itself, made in the Session the first time a run needs it and kept
until the Session closes (as a queue is, `dataflow.ops.queue_ops`).  The ops that take the handle
act on it at once: ``LookupTableFindV2`` (keys to values, ``default_value`` for a missing
key), ``LookupTableInsertV2``, ``LookupTableRemoveV2``, ``LookupTableSizeV2``,
``LookupTableExportV2`` and ``LookupTableImportV2`` (replace the contents), and
``InitializeTableFromTextFileV2`` (fill a table from the lines of a file).

A `StaticHashTable` is filled once by its initializer (a `KeyValueTensorInitializer` or a
`TextFileInitializer`), whose op joins ``GraphKeys.TABLE_INITIALIZERS`` so that
``tables_initializer()`` runs it; until then a lookup is a ``FailedPreconditionError``, as in
TensorFlow.  `MutableHashTable` and `DenseHashTable` start empty and take inserts and removals.
"""

from __future__ import annotations

import threading

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from ..framework.graph import Tensor, add_to_collection, name_scope
from ..framework.graph_keys import GraphKeys
from ..framework.op_registry import apply_op, define_op
from ..framework.resource_containers import current_container, resource_key
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape

__all__ = [
    "DenseHashTable",
    "KeyValueTensorInitializer",
    "MutableHashTable",
    "StaticHashTable",
    "StaticVocabularyTable",
    "TextFileIndex",
    "TextFileInitializer",
]


def _key(value):
    """A dict key for one element of a key array (bytes, or a Python number)."""
    return value if isinstance(value, bytes) else value.item()


class _Table:
    """The run-time table behind a handle: a dict from keys to value arrays."""

    def __init__(self, attrs: dict, name: str):
        self.name = name
        self.kind = attrs["table_kind"]
        self.key_dtype = _dtypes.numpy_dtype(attrs["key_dtype"])
        self.value_dtype = _dtypes.numpy_dtype(attrs["value_dtype"])
        self.value_shape = tuple(attrs.get("value_shape", ()))
        self.entries: dict = {}
        self.initialized = self.kind != "HashTable"
        self.lock = threading.Lock()
        self.empty_key = self.deleted_key = None

    def cancel(self) -> None:
        """Nothing waits on a table."""

    def _check_keys(self, keys: np.ndarray) -> None:
        if self.kind != "DenseHashTable":
            return
        for special, what in ((self.empty_key, "empty_key"), (self.deleted_key, "deleted_key")):
            if special is not None and np.any(keys == special):
                raise InvalidArgumentError(
                    None, None, f"Using the {what} as a table key is not allowed"
                )

    def _check_ready(self) -> None:
        if not self.initialized:
            raise FailedPreconditionError(None, None, "Table not initialized.")

    def find(self, keys: np.ndarray, default) -> np.ndarray:
        with self.lock:
            self._check_ready()
            self._check_keys(keys)
            default = np.asarray(default, self.value_dtype)
            out = np.empty(keys.shape + self.value_shape, dtype=self.value_dtype)
            flat = out.reshape((-1,) + self.value_shape)
            if default.shape == out.shape and out.shape != self.value_shape:
                defaults = default.reshape(flat.shape)  # one default per key
            elif default.shape == self.value_shape or default.ndim == 0:
                defaults = None
                if default.ndim == 0:
                    default = default[()]  # a scalar (an object array's element is not one)
            else:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Expected shape {list(self.value_shape)} or {list(out.shape)} for "
                    f"default_value, got {list(default.shape)}",
                )
            for i, k in enumerate(keys.reshape(-1)):
                found = self.entries.get(_key(k))
                if found is not None:
                    flat[i] = found
                else:
                    flat[i] = default if defaults is None else defaults[i]
            return out

    def _pairs(self, keys: np.ndarray, values: np.ndarray):
        expected = keys.shape + self.value_shape
        if values.shape != expected:
            raise InvalidArgumentError(
                None,
                None,
                f"Expected shape {list(expected)} for value, got {list(values.shape)}",
            )
        values = values.reshape((-1,) + self.value_shape)
        if self.value_shape:
            return [(_key(k), values[i].copy()) for i, k in enumerate(keys.reshape(-1))]
        return [(_key(k), values[i]) for i, k in enumerate(keys.reshape(-1))]

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        pairs = self._pairs(keys, values)
        with self.lock:
            self._check_keys(keys)
            for k, v in pairs:
                self.entries[k] = v

    def import_(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Replaces the contents; a static table refuses one key with two values."""
        pairs = self._pairs(keys, values)
        entries: dict = {}
        if self.kind == "HashTable":
            for k, v in pairs:
                if k in entries and not np.array_equal(entries[k], v):
                    raise FailedPreconditionError(
                        None,
                        None,
                        "HashTable has different value for same key. Key "
                        f"{_text(k)} has {_text(entries[k])} and trying to add value {_text(v)}",
                    )
                entries[k] = v
        else:
            entries = dict(pairs)
        with self.lock:
            self._check_keys(keys)
            self.entries = entries
            self.initialized = True

    def remove(self, keys: np.ndarray) -> None:
        with self.lock:
            self._check_keys(keys)
            for k in keys.reshape(-1):
                self.entries.pop(_key(k), None)

    def size(self) -> np.int64:
        with self.lock:
            return np.int64(len(self.entries))

    def export(self):
        with self.lock:
            keys = list(self.entries)
            values = [self.entries[k] for k in keys]
        key_array = np.array(keys, dtype=self.key_dtype).reshape(len(keys))
        value_array = np.zeros((len(keys),) + self.value_shape, dtype=self.value_dtype)
        for i, v in enumerate(values):
            value_array[i] = v
        return key_array, value_array


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return _text(value) if isinstance(value, bytes) else str(value)


# -- ops -------------------------------------------------------------------------------------------
_HANDLE_TYPES = ("HashTableV2", "MutableHashTableV2", "MutableDenseHashTableV2")


def _infer_handle(op):
    return [(_dtypes.resource, TensorShape([]))]


def _handle_kernel(attrs):
    key = resource_key(attrs)

    def handle(context, *special):
        table = context.resource(key, lambda: _Table(attrs, attrs["shared_name"]))
        if special:  # a DenseHashTable's empty and deleted keys
            table.empty_key, table.deleted_key = (np.asarray(s) for s in special)
        return table

    return handle


for _type in _HANDLE_TYPES:
    define_op(_type, _infer_handle, _handle_kernel, stateful=True, inline=True, wants_context=True)


def _check_handle(op) -> None:
    if not op.inputs or op.inputs[0].dtype != _dtypes.resource:
        raise TypeError(f"{op.type}: input 0 must be a table handle")


def _infer_find(op):
    _check_handle(op)
    keys = op.inputs[1]
    shape = keys.shape.concatenate(TensorShape(op.attrs["value_shape"]))
    return [(op.attrs["value_dtype"], shape)]


define_op(
    "LookupTableFindV2",
    _infer_find,
    lambda attrs: lambda table, keys, default: table.find(np.asarray(keys), default),
    stateful=True,
)


def _insert_kernel(attrs):
    def insert(table, keys, values):
        table.insert(np.asarray(keys), np.asarray(values, dtype=table.value_dtype))
        return ()

    return insert


def _import_kernel(attrs):
    def import_(table, keys, values):
        table.import_(np.asarray(keys), np.asarray(values, dtype=table.value_dtype))
        return ()

    return import_


def _remove_kernel(attrs):
    def remove(table, keys):
        table.remove(np.asarray(keys))
        return ()

    return remove


def _infer_nothing(op):
    _check_handle(op)
    return []


define_op("LookupTableInsertV2", _infer_nothing, _insert_kernel, stateful=True)
define_op("LookupTableImportV2", _infer_nothing, _import_kernel, stateful=True)
define_op("LookupTableRemoveV2", _infer_nothing, _remove_kernel, stateful=True)
define_op(
    "LookupTableSizeV2",
    lambda op: _check_handle(op) or [(_dtypes.int64, TensorShape([]))],
    lambda attrs: lambda table: table.size(),
    stateful=True,
    inline=True,
)
define_op(
    "LookupTableExportV2",
    lambda op: (
        _check_handle(op)
        or [
            (op.attrs["key_dtype"], TensorShape([None])),
            (op.attrs["value_dtype"], TensorShape([None, *op.attrs["value_shape"]])),
        ]
    ),
    lambda attrs: lambda table: table.export(),
    stateful=True,
)


def _infer_oov_bucket(op):
    (keys,) = op.inputs
    if not (keys.dtype == _dtypes.string or keys.dtype.is_integer):
        raise TypeError(f"out-of-vocabulary buckets of {keys.dtype.name} keys")
    return [(_dtypes.int64, keys.shape)]


def _oov_bucket_kernel(attrs):
    from .string_hash import fingerprint64

    buckets = attrs["num_buckets"]

    def bucket(keys):
        keys = np.asarray(keys)
        flat = [
            fingerprint64(k if isinstance(k, bytes) else str(int(k)).encode()) % buckets
            for k in keys.reshape(-1)
        ]
        return np.array(flat, dtype=np.int64).reshape(keys.shape)

    return bucket


# The bucket of an out-of-vocabulary key, as TensorFlow's StringToHashBucketFast of the key
# (an integer key written in decimal): FarmHash's Fingerprint64 modulo the number of buckets.
define_op("VocabularyOovBucket", _infer_oov_bucket, _oov_bucket_kernel)


# -- text files ------------------------------------------------------------------------------------
class TextFileIndex:
    """The special column numbers of a `TextFileInitializer`: the whole line, or its number."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


def _parse_field(text: str, dtype: np.dtype, filename: str, line_number: int):
    if dtype.kind == "O":
        return text.encode("utf-8")
    try:
        return dtype.type(int(text, 10) if dtype.kind in "iu" else float(text))
    except ValueError:
        raise InvalidArgumentError(
            None,
            None,
            f"Field {text} in line {line_number} is not a valid {np.dtype(dtype).name} "
            f"(file {filename})",
        ) from None


def _text_file_kernel(attrs):
    key_index, value_index = attrs["key_index"], attrs["value_index"]
    vocab_size, delimiter, offset = attrs["vocab_size"], attrs["delimiter"], attrs["offset"]

    def initialize(table, filename):
        filename = _text(np.asarray(filename).item())
        try:
            with open(filename, "rb") as f:
                lines = f.read().decode("utf-8").split("\n")
        except FileNotFoundError:
            raise NotFoundError(None, None, f"{filename}; No such file or directory") from None
        if lines and lines[-1] == "":
            lines.pop()
        if vocab_size >= 0:
            if len(lines) < vocab_size:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Invalid vocab_size in {filename}: expected {vocab_size} but got {len(lines)}",
                )
            lines = lines[:vocab_size]
        keys, values = [], []
        for n, line in enumerate(lines):
            line = line.rstrip("\r")
            columns = line.split(delimiter) if delimiter else line.split()
            fields = []
            for index, dtype in (
                (key_index, table.key_dtype),
                (value_index, table.value_dtype),
            ):
                if index == TextFileIndex.WHOLE_LINE:
                    fields.append(line.encode("utf-8"))
                elif index == TextFileIndex.LINE_NUMBER:
                    number = n + (offset if index == value_index else 0)
                    fields.append(dtype.type(number))
                else:
                    if index >= len(columns):
                        raise InvalidArgumentError(
                            None,
                            None,
                            f"Invalid number of columns in {filename} line {n} ({line}) : "
                            f"expected {max(key_index, value_index) + 1} got {len(columns)}",
                        )
                    fields.append(_parse_field(columns[index], dtype, filename, n))
            keys.append(fields[0])
            values.append(fields[1])
        table.import_(
            np.array(keys, dtype=table.key_dtype).reshape(len(keys)),
            np.array(values, dtype=table.value_dtype).reshape(len(values)),
        )
        return ()

    return initialize


define_op("InitializeTableFromTextFileV2", _infer_nothing, _text_file_kernel, stateful=True)


# -- initializers ----------------------------------------------------------------------------------
class TableInitializerBase:
    """What fills a static table: its key and value dtypes and the op that fills a handle."""

    def __init__(self, key_dtype, value_dtype):
        self._key_dtype = _dtypes.as_dtype(key_dtype)
        self._value_dtype = _dtypes.as_dtype(value_dtype)

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    def _check_table_dtypes(self, key_dtype, value_dtype) -> None:
        if key_dtype != self._key_dtype:
            raise TypeError(f"Invalid key dtype, expected {self._key_dtype} but got {key_dtype}.")
        if value_dtype != self._value_dtype:
            raise TypeError(
                f"Invalid value dtype, expected {self._value_dtype} but got {value_dtype}."
            )


class KeyValueTensorInitializer(TableInitializerBase):
    """Fills a table with ``keys[i] -> values[i]`` (two vectors of equal length)."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        with name_scope(name, "key_value_init") as scope:
            self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
            self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
            self._name = scope
        super().__init__(self._keys.dtype, self._values.dtype)

    def initialize(self, table):
        """The op that fills ``table`` (a table made with this initializer)."""
        self._check_table_dtypes(table.key_dtype, table.value_dtype)
        with name_scope(self._name):
            op = apply_op(
                "LookupTableImportV2",
                [table.resource_handle, self._keys, self._values],
                {},
                name="LookupTableImportV2",
            )
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


class TextFileInitializer(TableInitializerBase):
    """Fills a table from a text file: one entry a line, the key and value taken from the
    columns ``key_index`` and ``value_index`` (split at ``delimiter``), or the whole line
    (`TextFileIndex.WHOLE_LINE`, a string) or the line's number (`TextFileIndex.LINE_NUMBER`,
    an int64 counted from 0, plus ``value_index_offset`` for values).  With ``vocab_size``
    only that many first lines are read, and the file must have them."""

    def __init__(
        self,
        filename,
        key_dtype,
        key_index,
        value_dtype,
        value_index,
        vocab_size=None,
        delimiter="\t",
        name=None,
        value_index_offset=0,
    ):
        key_dtype, value_dtype = _dtypes.as_dtype(key_dtype), _dtypes.as_dtype(value_dtype)
        if key_index < -2:
            raise ValueError(f"`key_index` should be >= -2, received {key_index}.")
        if key_index == TextFileIndex.LINE_NUMBER and key_dtype != _dtypes.int64:
            raise ValueError(
                f"`key_dtype` must be int64 if `key_index` is {TextFileIndex.LINE_NUMBER}, "
                f"received {key_dtype}"
            )
        if key_index == TextFileIndex.WHOLE_LINE and key_dtype != _dtypes.string:
            raise ValueError(
                f"`key_dtype` must be string if `key_index` is {TextFileIndex.WHOLE_LINE}, "
                f"received {key_dtype}"
            )
        if value_index < -2:
            raise ValueError(f"`value_index` should be >= -2, received {value_index}.")
        if value_index == TextFileIndex.LINE_NUMBER and value_dtype != _dtypes.int64:
            raise ValueError(
                "`value_dtype` must be int64 for `value_index` "
                f"{TextFileIndex.LINE_NUMBER}, received {value_dtype}"
            )
        if value_index == TextFileIndex.WHOLE_LINE and value_dtype != _dtypes.string:
            raise ValueError(
                f"`value_dtype` must be string for `value_index` {TextFileIndex.WHOLE_LINE}, "
                f"received {value_dtype}"
            )
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received {vocab_size}")
        self._filename = filename
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter
        self._name = name
        self._offset = value_index_offset
        super().__init__(key_dtype, value_dtype)

    def initialize(self, table):
        """The op that fills ``table`` from the file."""
        self._check_table_dtypes(table.key_dtype, table.value_dtype)
        with name_scope(self._name, "text_file_init"):
            filename = convert_to_tensor(self._filename, _dtypes.string, name="asset_filepath")
            attrs = {
                "key_index": int(self._key_index),
                "value_index": int(self._value_index),
                "vocab_size": -1 if self._vocab_size is None else int(self._vocab_size),
                "delimiter": self._delimiter,
                "offset": int(self._offset),
            }
            op = apply_op(
                "InitializeTableFromTextFileV2",
                [table.resource_handle, filename],
                attrs,
                name="InitializeTableFromTextFileV2",
            )
        add_to_collection(GraphKeys.TABLE_INITIALIZERS, op)
        return op


# -- tables ----------------------------------------------------------------------------------------
def _no_anonymous(cls: str, experimental_is_anonymous: bool) -> None:
    if experimental_is_anonymous:
        raise ValueError(
            f"{cls}(experimental_is_anonymous=True): an anonymous table is a new table at each "
            "run of its handle op in a graph; use a named table (the default)"
        )


class _TableBase:
    """What the tables share: the handle, dtypes, and the ops on it."""

    _value_shape: tuple = ()

    def _make_handle(self, op_type: str, kind: str, name: str, inputs=(), extra=None):
        with name_scope(name) as scope:
            op_name = scope[:-1]
            attrs = {
                "table_kind": kind,
                "key_dtype": self._key_dtype,
                "value_dtype": self._value_dtype,
                "value_shape": tuple(self._value_shape),
                "shared_name": op_name,
                "container": current_container(),
                **(extra or {}),
            }
            self._resource_handle = apply_op(op_type, inputs, attrs, name=op_name + "/").outputs[0]
        self._name = self._resource_handle.op.name

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return self._value_dtype

    @property
    def name(self) -> str:
        return self._name

    @property
    def resource_handle(self) -> Tensor:
        return self._resource_handle

    def _op(self, op_type: str, inputs, scope: str, attrs=None):
        with name_scope(scope):
            return apply_op(op_type, [self._resource_handle, *inputs], attrs or {}, name=op_type)

    def _convert_keys(self, keys):
        from ..framework.ragged_tensor import RaggedTensor
        from ..framework.sparse_tensor import SparseTensor

        if isinstance(keys, (SparseTensor, RaggedTensor, Tensor)):
            return keys
        return convert_to_tensor(keys, dtype=self._key_dtype, name="keys")

    def _lookup(self, keys, default, scope: str):
        from ..framework.ragged_tensor import RaggedTensor
        from ..framework.sparse_tensor import SparseTensor

        keys = self._convert_keys(keys)
        if keys.dtype != self._key_dtype:
            raise TypeError(
                f"Dtype of argument `keys` must be {self._key_dtype}, received: {keys.dtype}"
            )
        flat = keys.values if isinstance(keys, (SparseTensor, RaggedTensor)) else keys
        if isinstance(keys, RaggedTensor):
            flat = keys.flat_values
        attrs = {"value_dtype": self._value_dtype, "value_shape": tuple(self._value_shape)}
        values = self._op("LookupTableFindV2", [flat, default], scope, attrs).outputs[0]
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, values, keys.dense_shape)
        if isinstance(keys, RaggedTensor):
            return keys.with_flat_values(values)
        return values

    def size(self, name=None) -> Tensor:
        """The number of entries (an int64 scalar)."""
        return self._op("LookupTableSizeV2", [], name or f"{self._name}_Size").outputs[0]

    def export(self, name=None):
        """``(keys, values)``: every entry of the table (in the order they came in)."""
        attrs = {
            "key_dtype": self._key_dtype,
            "value_dtype": self._value_dtype,
            "value_shape": tuple(self._value_shape),
        }
        op = self._op("LookupTableExportV2", [], name or f"{self._name}_Export", attrs)
        return op.outputs[0], op.outputs[1]

    def __getitem__(self, keys):
        return self.lookup(keys)


class StaticHashTable(_TableBase):
    """A table filled once by ``initializer``; a missing key looks up ``default_value``.
    The initializer's op is ``initializer`` and joins ``GraphKeys.TABLE_INITIALIZERS``."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        _no_anonymous("StaticHashTable", experimental_is_anonymous)
        if not isinstance(initializer, TableInitializerBase):
            raise TypeError(f"initializer must be a table initializer, got {initializer!r}")
        self._key_dtype, self._value_dtype = initializer.key_dtype, initializer.value_dtype
        self._initializer = initializer
        self._make_handle("HashTableV2", "HashTable", name or "hash_table")
        self._default_value = convert_to_tensor(
            default_value, dtype=self._value_dtype, name="Const"
        )
        if self._default_value.shape.ndims not in (None, 0):
            raise ValueError(
                f"default_value must be a scalar, got shape {self._default_value.shape}"
            )
        self._init_op = initializer.initialize(self)

    @property
    def initializer(self):
        return self._init_op

    @property
    def default_value(self) -> Tensor:
        return self._default_value

    def lookup(self, keys, name=None):
        """The values of ``keys`` (a Tensor, SparseTensor or RaggedTensor of the key dtype);
        ``FailedPreconditionError`` when the run finds the table not initialized."""
        return self._lookup(keys, self._default_value, name or f"{self._name}_Lookup")


class MutableHashTable(_TableBase):
    """A table that starts empty and takes `insert` and `remove`; a missing key looks up
    ``default_value``, whose shape is the shape of every value."""

    def __init__(
        self,
        key_dtype,
        value_dtype,
        default_value,
        name="MutableHashTable",
        checkpoint=True,
        experimental_is_anonymous=False,
    ):
        _no_anonymous("MutableHashTable", experimental_is_anonymous)
        self._key_dtype, self._value_dtype = (
            _dtypes.as_dtype(key_dtype),
            _dtypes.as_dtype(value_dtype),
        )
        self._default_value = convert_to_tensor(
            default_value, dtype=self._value_dtype, name="default_value"
        )
        if not self._default_value.shape.is_fully_defined():
            raise ValueError("default_value must have a fully defined shape")
        self._value_shape = tuple(self._default_value.shape.as_list())
        self._checkpoint = checkpoint
        self._make_handle(*self._handle_args(name))
        if checkpoint:
            add_to_collection(GraphKeys.SAVEABLE_OBJECTS, self)

    def _handle_args(self, name):
        return "MutableHashTableV2", "MutableHashTable", name

    @property
    def default_value(self) -> Tensor:
        return self._default_value

    def lookup(self, keys, dynamic_default_values=None, name=None):
        """The values of ``keys``; a missing key gives ``default_value``, or with
        ``dynamic_default_values`` (of shape ``keys.shape + value_shape``) the element at its
        place."""
        scope = name or f"{self._name}_lookup_table_find"
        default = self._default_value
        if dynamic_default_values is not None:
            default = convert_to_tensor(
                dynamic_default_values, dtype=self._value_dtype, name="dynamic_default_values"
            )
        return self._lookup(keys, default, scope)

    def insert(self, keys, values, name=None):
        """The op that sets ``keys[i] -> values[i]`` (replacing what a key had)."""
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
        return self._op(
            "LookupTableInsertV2", [keys, values], name or f"{self._name}_lookup_table_insert"
        )

    def remove(self, keys, name=None):
        """The op that removes ``keys`` (a key not in the table is skipped)."""
        if isinstance(keys, Tensor) and keys.dtype != self._key_dtype:
            raise TypeError(
                f"Dtype of argument `keys` must be {self._key_dtype}, received: {keys.dtype}"
            )
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        scope = name or f"{self._name}_lookup_table_remove"
        return self._op("LookupTableRemoveV2", [keys], scope)

    def import_(self, keys, values, name=None):
        """The op that replaces the contents with ``keys[i] -> values[i]``."""
        keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        values = convert_to_tensor(values, dtype=self._value_dtype, name="values")
        return self._op(
            "LookupTableImportV2", [keys, values], name or f"{self._name}_lookup_table_import"
        )


class DenseHashTable(MutableHashTable):
    """A `MutableHashTable` that TensorFlow keeps in open addressing, which reserves two keys:
    ``empty_key`` and ``deleted_key`` may not be inserted or looked up."""

    def __init__(
        self,
        key_dtype,
        value_dtype,
        default_value,
        empty_key,
        deleted_key,
        initial_num_buckets=None,
        name="MutableDenseHashTable",
        checkpoint=True,
        experimental_is_anonymous=False,
    ):
        _no_anonymous("DenseHashTable", experimental_is_anonymous)
        key_dtype = _dtypes.as_dtype(key_dtype)
        self._empty_key = convert_to_tensor(empty_key, dtype=key_dtype, name="empty_key")
        self._deleted_key = convert_to_tensor(deleted_key, dtype=key_dtype, name="deleted_key")
        for special in (self._empty_key, self._deleted_key):
            if special.shape.ndims != 0:
                raise ValueError(
                    "DenseHashTable: only scalar keys are supported (empty_key and deleted_key "
                    f"must be scalars), got shape {special.shape}"
                )
        if initial_num_buckets is not None and (
            initial_num_buckets < 1 or initial_num_buckets & (initial_num_buckets - 1)
        ):
            raise ValueError(f"initial_num_buckets must be a power of 2, got {initial_num_buckets}")
        self._initial_num_buckets = initial_num_buckets
        super().__init__(key_dtype, value_dtype, default_value, name, checkpoint)

    def _handle_args(self, name):
        return (
            "MutableDenseHashTableV2",
            "DenseHashTable",
            name,
            (self._empty_key, self._deleted_key),
        )

    def erase(self, keys, name=None):
        """The op that removes ``keys`` (`remove`)."""
        return self.remove(keys, name or f"{self._name}_lookup_table_remove")


class StaticVocabularyTable:
    """A vocabulary: keys of ``initializer`` (int64 values, its ids) look up their id; any
    other key one of ``num_oov_buckets`` buckets after them, chosen by its FarmHash
    fingerprint as TensorFlow chooses it.  Without an initializer every key is hashed.
    ``lookup_key_dtype`` is the dtype of the keys looked up (an integer key is looked up as
    int64 in an int64 vocabulary)."""

    def __init__(
        self,
        initializer,
        num_oov_buckets,
        lookup_key_dtype=None,
        name=None,
        experimental_is_anonymous=False,
    ):
        _no_anonymous("StaticVocabularyTable", experimental_is_anonymous)
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if name:
            name = name.rstrip("/")
        if initializer:
            if lookup_key_dtype is None:
                lookup_key_dtype = initializer.key_dtype
            lookup_key_dtype = _dtypes.as_dtype(lookup_key_dtype)
            if initializer.key_dtype not in (_dtypes.int64, _dtypes.string):
                raise TypeError(
                    "Invalid `key_dtype`, expected one of (tf.int64, tf.string), but got "
                    f"{initializer.key_dtype}."
                )
            if initializer.key_dtype.is_integer != lookup_key_dtype.is_integer:
                raise TypeError(
                    "Invalid `key_dtype`, expected "
                    f"{'integer' if lookup_key_dtype.is_integer else 'non-integer'} but got "
                    f"{initializer.key_dtype}."
                )
            if initializer.value_dtype != _dtypes.int64:
                raise TypeError(
                    f"Invalid `value_dtype`, expected {_dtypes.int64} but got "
                    f"{initializer.value_dtype}."
                )
            self._table = StaticHashTable(initializer, default_value=-1)
            name = name or self._table.name
        else:
            lookup_key_dtype = _dtypes.string
            self._table = None
            name = name or "hash_bucket"
        if not lookup_key_dtype.is_integer and lookup_key_dtype != _dtypes.string:
            raise TypeError(
                f"Invalid `key_dtype`, expected integer or string, got {lookup_key_dtype}"
            )
        self._num_oov_buckets = int(num_oov_buckets)
        self._key_dtype = lookup_key_dtype
        self._table_name = name.split("/")[-1]
        self._init_op = None

    @property
    def name(self) -> str:
        return self._table_name

    @property
    def key_dtype(self):
        return self._key_dtype

    @property
    def value_dtype(self):
        return _dtypes.int64

    @property
    def resource_handle(self):
        return self._table.resource_handle if self._table is not None else None

    @property
    def initializer(self):
        if self._table is not None:
            return self._table.initializer
        if self._init_op is None:
            from .misc_ops import no_op

            with name_scope("init"):
                self._init_op = no_op()
        return self._init_op

    def size(self, name=None) -> Tensor:
        """The vocabulary's size plus the number of buckets (an int64 scalar)."""
        with name_scope(name or f"{self.name}_Size"):
            if self._table is not None:
                size = self._table.size()
            else:
                size = convert_to_tensor(0, _dtypes.int64)
            return size + self._num_oov_buckets

    def lookup(self, keys, name=None):
        """The ids of ``keys`` (a Tensor, SparseTensor or RaggedTensor of the lookup dtype):
        a vocabulary key's value, any other key's bucket."""
        from ..framework.ragged_tensor import RaggedTensor
        from ..framework.sparse_tensor import SparseTensor
        from .math_ops import add, cast, not_equal
        from .math_ops import where_v2 as where

        if not isinstance(keys, (SparseTensor, RaggedTensor, Tensor)):
            keys = convert_to_tensor(keys, dtype=self._key_dtype, name="keys")
        if keys.dtype.base_dtype != self._key_dtype:
            raise TypeError(
                f"Dtype of argument `keys` must be {self._key_dtype}, received: {keys.dtype}"
            )
        values = keys
        if isinstance(keys, SparseTensor):
            values = keys.values
        elif isinstance(keys, RaggedTensor):
            values = keys.flat_values
        if self._table is not None and self._table.key_dtype == _dtypes.int64:
            values = cast(values, _dtypes.int64)
        with name_scope(name or f"{self.name}_Lookup"):
            attrs = {"num_buckets": self._num_oov_buckets}
            buckets = apply_op("VocabularyOovBucket", [values], attrs, "hash_bucket").outputs[0]
            if self._table is not None:
                ids = self._table.lookup(values)
                buckets = add(buckets, self._table.size())
                ids = where(not_equal(ids, self._table.default_value), ids, buckets)
            else:
                ids = buckets
        if isinstance(keys, SparseTensor):
            return SparseTensor(keys.indices, ids, keys.dense_shape)
        if isinstance(keys, RaggedTensor):
            return keys.with_flat_values(ids)
        return ids

    def __getitem__(self, keys):
        return self.lookup(keys)


from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

for _type in (
    *_HANDLE_TYPES,
    "LookupTableFindV2",
    "LookupTableInsertV2",
    "LookupTableImportV2",
    "LookupTableRemoveV2",
    "LookupTableSizeV2",
    "LookupTableExportV2",
    "InitializeTableFromTextFileV2",
    "VocabularyOovBucket",
):
    NotDifferentiable(_type)

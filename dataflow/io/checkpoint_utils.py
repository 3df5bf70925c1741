"""Reading checkpoints without a graph: ``df.train.load_checkpoint``, ``list_variables``,
``load_variable`` and ``NewCheckpointReader`` (TensorFlow's ``checkpoint_utils``).

A checkpoint is the ``.npz`` file `dataflow.io.saver` writes; a directory stands for its newest
checkpoint (its ``checkpoint`` index file).  Shapes and dtypes are read from the arrays'
headers, so listing a checkpoint does not load its values.
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import NotFoundError
from .saver import _checkpoint_file, latest_checkpoint

__all__ = [
    "CheckpointReader",
    "NewCheckpointReader",
    "init_from_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]


class CheckpointReader:
    """The tensors of one checkpoint, by name (TensorFlow's ``CheckpointReader``)."""

    def __init__(self, save_path):
        self._save_path = os.fspath(save_path)
        self._file = _checkpoint_file(self._save_path)
        if not os.path.exists(self._file):
            raise NotFoundError(
                None,
                None,
                f"Unsuccessful TensorSliceReader constructor: Failed to find any "
                f"matching files for {self._save_path}",
            )
        self._headers = {}
        with zipfile.ZipFile(self._file) as archive:
            for member in archive.namelist():
                if not member.endswith(".npy"):
                    continue
                with archive.open(member) as f:
                    version = np.lib.format.read_magic(f)
                    read_header = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, dtype = read_header(f)
                self._headers[member[: -len(".npy")]] = (list(shape), dtype)

    def has_tensor(self, tensor_str: str) -> bool:
        return tensor_str in self._headers

    def get_tensor(self, tensor_str: str) -> np.ndarray:
        if tensor_str not in self._headers:
            raise NotFoundError(
                None, None, f"Key {tensor_str} not found in checkpoint {self._save_path}"
            )
        with np.load(self._file, allow_pickle=False) as archive:
            return archive[tensor_str]

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: list(shape) for name, (shape, _) in self._headers.items()}

    def get_variable_to_dtype_map(self) -> dict:
        return {name: _dtypes.as_dtype(dtype) for name, (_, dtype) in self._headers.items()}


def NewCheckpointReader(filepattern) -> CheckpointReader:  # noqa: N802 - TensorFlow's name
    """A `CheckpointReader` of the checkpoint ``filepattern`` (a path prefix)."""
    return CheckpointReader(filepattern)


def load_checkpoint(ckpt_dir_or_file) -> CheckpointReader:
    """A `CheckpointReader` of ``ckpt_dir_or_file``: a checkpoint, or a directory's newest."""
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        newest = latest_checkpoint(path)
        if newest is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}"
            )
        path = newest
    return CheckpointReader(path)


def list_variables(ckpt_dir_or_file) -> list[tuple[str, list[int]]]:
    """``(name, shape)`` of every variable of the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name: str) -> np.ndarray:
    """The value of variable ``name`` (``"dense/kernel"``; a ``:0`` suffix is ignored)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


# -- initializing variables from a checkpoint ------------------------------------------------------
def _infer_restore(op):
    from ..framework.tensor_shape import TensorShape

    for index, what in ((0, "prefix"), (1, "tensor_names"), (2, "shape_and_slices")):
        if op.inputs[index].dtype.base_dtype != _dtypes.string:
            raise TypeError(f"RestoreV2's {what} must be a string tensor")
    return [(dtype, TensorShape(None)) for dtype in op.attrs["dtypes"]]


def _restore_kernel(attrs):
    from ..framework.errors import InvalidArgumentError

    dtypes = attrs["dtypes"]

    def text(value) -> str:
        value = value.item() if isinstance(value, np.ndarray) else value
        return value.decode() if isinstance(value, bytes) else str(value)

    def restore(prefix, tensor_names, shape_and_slices):
        reader = CheckpointReader(text(prefix))
        names = [text(n) for n in np.ravel(tensor_names)]
        slices = [text(s) for s in np.ravel(shape_and_slices)]
        if len(names) != len(dtypes) or len(slices) != len(dtypes):
            raise InvalidArgumentError(
                None, None, f"RestoreV2 restores {len(dtypes)} tensors, got {len(names)} names"
            )
        values = []
        for name, slice_spec, dtype in zip(names, slices, dtypes):
            if slice_spec:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"RestoreV2 of '{name}': a slice ({slice_spec!r}) of a partitioned "
                    "variable cannot be read from this checkpoint format (one array per "
                    "variable); restore the whole tensor",
                )
            value = reader.get_tensor(name)
            if value.dtype != _dtypes.numpy_dtype(dtype):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"RestoreV2: tensor '{name}' of the checkpoint is {value.dtype}, "
                    f"expected {dtype.name}",
                )
            values.append(value)
        return values if len(values) != 1 else values[0]

    return restore


def _define_restore_op() -> None:
    from ..framework.gradient_registry import NotDifferentiable
    from ..framework.op_registry import define_op

    define_op("RestoreV2", _infer_restore, _restore_kernel, stateful=True)
    NotDifferentiable("RestoreV2")


_define_restore_op()


def _is_variable(value) -> bool:
    from ..ops.variables import Variable

    return isinstance(value, Variable) or (
        hasattr(value, "initializer") and hasattr(value, "_initializer_op")
    )


def _set_checkpoint_initializer(variable, ckpt_file: str, tensor_name: str) -> None:
    """Makes ``variable``'s initializer assign it the value ``tensor_name`` of the checkpoint
    ``ckpt_file``, read when the initializer runs (TF1's ``RestoreV2`` initializer)."""
    from ..framework.graph import control_dependencies
    from ..framework.op_registry import apply_op

    graph = variable.graph
    with graph.as_default(), control_dependencies(None), graph.name_scope(None):
        with graph.name_scope(variable.op.name + "/"):
            prefix = _constant(ckpt_file, "prefix")
            names = _constant([tensor_name], "tensor_names")
            slices = _constant([""], "shape_and_slices")
            restored = apply_op(
                "RestoreV2",
                (prefix, names, slices),
                {"dtypes": [variable.dtype.base_dtype]},
                "checkpoint_initializer",
            ).outputs[0]
            restored.set_shape(variable.shape)
            init_op = variable.assign(restored, read_value=False)
    variable._initializer_op = init_op if not hasattr(init_op, "op") else init_op.op
    variable._initial_value = restored


def _constant(value, name: str):
    from ..framework.tensor_conversion import convert_to_tensor

    return convert_to_tensor(value, _dtypes.string, name=name)


def init_from_checkpoint(ckpt_dir_or_file, assignment_map) -> None:
    """Makes the initializers of the variables ``assignment_map`` names load their values from
    the checkpoint ``ckpt_dir_or_file`` (a directory stands for its newest checkpoint), as TF1's
    ``tf.train.init_from_checkpoint``; the values are read when the initializers run.

    ``assignment_map`` maps names in the checkpoint to current variables: ``'a/b':
    'new/b'`` (a variable of the variable store, from ``get_variable``), ``'a/b': variable``
    (a `Variable` object), ``'a/': 'new/'`` (every store variable under scope ``new/`` from
    the same name under ``a/``), ``'/': 'new/'`` (the checkpoint's root).  A name missing from
    the checkpoint, or of another shape, is a ``ValueError``."""
    from ..framework import logging as _logging
    from ..ops.variable_scope import _get_default_variable_store

    path = os.fspath(ckpt_dir_or_file)
    ckpt_file = latest_checkpoint(path) if os.path.isdir(path) else path
    reader = load_checkpoint(ckpt_dir_or_file)
    variable_map = reader.get_variable_to_shape_map()
    items = assignment_map.items() if isinstance(assignment_map, dict) else assignment_map
    store_vars = _get_default_variable_store()._vars
    for tensor_name_in_ckpt, current in sorted(items, key=lambda pair: pair[0]):
        if _is_variable(current) or (
            isinstance(current, list) and current and all(_is_variable(v) for v in current)
        ):
            var = current
        else:
            var = store_vars.get(current)
        if var is not None:
            if tensor_name_in_ckpt not in variable_map:
                raise ValueError(
                    f"Tensor {tensor_name_in_ckpt} is not found in {ckpt_dir_or_file} "
                    f"checkpoint {variable_map}"
                )
            for v in var if isinstance(var, list) else [var]:
                if not v.shape.is_compatible_with(variable_map[tensor_name_in_ckpt]):
                    raise ValueError(
                        f"Shape of variable {v.name} ({v.shape}) doesn't match with shape of "
                        f"tensor {tensor_name_in_ckpt} "
                        f"({variable_map[tensor_name_in_ckpt]}) from checkpoint reader."
                    )
                _set_checkpoint_initializer(v, ckpt_file, tensor_name_in_ckpt)
            _logging.debug(
                "Initialize variable %s from checkpoint %s with %s",
                current if isinstance(current, str) else "variables",
                ckpt_dir_or_file,
                tensor_name_in_ckpt,
            )
            continue
        scopes = current[: current.rindex("/")] if "/" in current else ""
        if not tensor_name_in_ckpt.endswith("/"):
            raise ValueError(
                f"Assignment map with scope only name {scopes} should map to scope only "
                f"{tensor_name_in_ckpt}. Should be 'scope/': 'other_scope/'."
            )
        scope_variables = sorted(
            name for name in store_vars if not scopes or name.startswith(scopes + "/")
        )
        for var_name in scope_variables:
            full_tensor_name = var_name[len(scopes) :]
            if current != "/":
                full_tensor_name = full_tensor_name[1:]
            if tensor_name_in_ckpt != "/":
                full_tensor_name = tensor_name_in_ckpt + full_tensor_name
            if full_tensor_name.endswith("/"):
                full_tensor_name = full_tensor_name[:-1]
            if full_tensor_name not in variable_map:
                raise ValueError(
                    f"Tensor {full_tensor_name} ({var_name[len(scopes) + 1 :]} in "
                    f"{tensor_name_in_ckpt}) is not found in {ckpt_dir_or_file} checkpoint"
                )
            _set_checkpoint_initializer(store_vars[var_name], ckpt_file, full_tensor_name)
            _logging.debug(
                "Initialize variable %s from checkpoint %s with %s",
                var_name,
                ckpt_dir_or_file,
                full_tensor_name,
            )

"""Reading checkpoints without a graph: ``df.train.load_checkpoint``, ``list_variables``,
``load_variable`` and ``NewCheckpointReader`` (TensorFlow's ``checkpoint_utils``).

A checkpoint is the ``.npz`` file `dataflow.saver` writes; a directory stands for its newest
checkpoint (its ``checkpoint`` index file).  Shapes and dtypes are read from the arrays'
headers, so listing a checkpoint does not load its values.
"""

from __future__ import annotations

import os
import zipfile

import numpy as np

from . import dtypes as _dtypes
from .errors import NotFoundError
from .saver import _checkpoint_file, latest_checkpoint

__all__ = [
    "CheckpointReader",
    "NewCheckpointReader",
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

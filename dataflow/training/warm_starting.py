"""Warm-starting a model from a checkpoint (TF1's ``tf.train.warm_start`` and
``tf.train.VocabInfo``).

`warm_start` makes the initializers of chosen variables load their values from a checkpoint
(`dataflow.io.checkpoint_utils.init_from_checkpoint`), by the variables' names, or the names
``var_name_to_prev_var_name`` gives them in the checkpoint.  A variable whose rows (``axis=0``)
or columns (``axis=1``) follow a vocabulary is remapped: its row for each entry of the new
vocabulary file is the checkpoint's row for the same entry in the old vocabulary file; rows of
entries the old vocabulary lacks, and ``num_oov_buckets`` rows after them, come from the
``backup_initializer`` (zeros by default), as TensorFlow's ``GenerateVocabRemapping`` and
``LoadAndRemapMatrix`` ops do; those two ops are defined here and read the files when the
initializer runs.
"""

from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import logging as _logging
from ..framework.errors import InvalidArgumentError, NotFoundError
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import control_dependencies, get_default_graph
from ..framework.graph_keys import GraphKeys
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from ..io.checkpoint_utils import CheckpointReader, _is_variable, init_from_checkpoint

__all__ = ["VocabInfo", "warm_start"]


class VocabInfo(
    collections.namedtuple(
        "VocabInfo",
        [
            "new_vocab",
            "new_vocab_size",
            "num_oov_buckets",
            "old_vocab",
            "old_vocab_size",
            "backup_initializer",
            "axis",
        ],
    )
):
    """How a variable follows a vocabulary, for `warm_start`: ``new_vocab`` and ``old_vocab``
    (files, one entry a line), ``new_vocab_size`` (entries of the new file used),
    ``num_oov_buckets`` (extra rows or columns after them), ``old_vocab_size`` (entries of the
    old file used, -1: all), ``backup_initializer`` (for what the checkpoint lacks; zeros when
    None) and ``axis`` (0: rows follow the vocabulary, 1: columns)."""

    def __new__(
        cls,
        new_vocab,
        new_vocab_size,
        num_oov_buckets,
        old_vocab,
        old_vocab_size=-1,
        backup_initializer=None,
        axis=0,
    ):
        if axis not in (0, 1):
            raise ValueError(
                f"The only supported values for the axis argument are 0 and 1.  Provided axis: "
                f"{axis}"
            )
        return super().__new__(
            cls,
            new_vocab,
            new_vocab_size,
            num_oov_buckets,
            old_vocab,
            old_vocab_size,
            backup_initializer,
            axis,
        )


# -- the ops ---------------------------------------------------------------------------------------
def _text(value) -> str:
    value = value.item() if isinstance(value, np.ndarray) else value
    return value.decode() if isinstance(value, bytes) else str(value)


def _vocab_lines(path: str, op: str) -> list:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{op}: vocabulary file {path} not found") from None


def _infer_generate_vocab_remapping(op):
    return [
        (_dtypes.int64, TensorShape([op.attrs["num_new_vocab"]])),
        (_dtypes.int32, TensorShape([])),
    ]


def _generate_vocab_remapping_kernel(attrs):
    offset, count, old_size = (
        attrs["new_vocab_offset"],
        attrs["num_new_vocab"],
        attrs["old_vocab_size"],
    )

    def generate(new_vocab_file, old_vocab_file):
        new = _vocab_lines(_text(new_vocab_file), "GenerateVocabRemapping")
        old = _vocab_lines(_text(old_vocab_file), "GenerateVocabRemapping")
        if old_size != -1:
            if old_size > len(old):
                raise InvalidArgumentError(
                    None,
                    None,
                    f"GenerateVocabRemapping: old_vocab_size {old_size} is more than the "
                    f"{len(old)} entries of the old vocabulary",
                )
            old = old[:old_size]
        if offset + count > len(new):
            raise InvalidArgumentError(
                None,
                None,
                f"GenerateVocabRemapping: new vocabulary entries {offset}..{offset + count} "
                f"asked for, the file has {len(new)}",
            )
        position = {}
        for index, entry in enumerate(old):
            position.setdefault(entry, index)
        remapping = np.array(
            [position.get(entry, -1) for entry in new[offset : offset + count]], np.int64
        )
        return remapping, np.int32(np.count_nonzero(remapping >= 0))

    return generate


define_op(
    "GenerateVocabRemapping",
    _infer_generate_vocab_remapping,
    _generate_vocab_remapping_kernel,
    stateful=True,
)
NotDifferentiable("GenerateVocabRemapping")


def _infer_load_and_remap(op):
    return [(_dtypes.float32, TensorShape([op.attrs["num_rows"], op.attrs["num_cols"]]))]


def _load_and_remap_kernel(attrs):
    num_rows, num_cols = attrs["num_rows"], attrs["num_cols"]

    def load(ckpt_path, old_tensor_name, row_remapping, col_remapping, initializing_values):
        old = CheckpointReader(_text(ckpt_path)).get_tensor(_text(old_tensor_name))
        if old.ndim != 2:
            raise InvalidArgumentError(
                None, None, f"LoadAndRemapMatrix: the checkpoint's tensor is {old.ndim}-D, not 2-D"
            )
        rows = np.asarray(row_remapping, np.int64).ravel()
        cols = np.asarray(col_remapping, np.int64).ravel()
        if cols.size == 0:
            cols = np.arange(num_cols, dtype=np.int64)
        if rows.size != num_rows or cols.size != num_cols:
            raise InvalidArgumentError(
                None,
                None,
                f"LoadAndRemapMatrix: {rows.size} row and {cols.size} column remappings for a "
                f"[{num_rows}, {num_cols}] matrix",
            )
        if rows.max(initial=-1) >= old.shape[0] or cols.max(initial=-1) >= old.shape[1]:
            raise InvalidArgumentError(
                None,
                None,
                f"LoadAndRemapMatrix: a remapping points past the checkpoint's tensor of shape "
                f"{list(old.shape)}",
            )
        present = (rows >= 0)[:, None] & (cols >= 0)[None, :]
        values = np.asarray(initializing_values, np.float32).ravel()
        missing = int(present.size - np.count_nonzero(present))
        if values.size != missing:
            raise InvalidArgumentError(
                None,
                None,
                f"LoadAndRemapMatrix: {values.size} initializing values for {missing} missing "
                "cells",
            )
        out = np.empty((num_rows, num_cols), np.float32)
        out[present] = old[np.ix_(np.maximum(rows, 0), np.maximum(cols, 0))][present]
        out[~present] = values  # row-major order of the missing cells
        return out

    return load


define_op("LoadAndRemapMatrix", _infer_load_and_remap, _load_and_remap_kernel, stateful=True)
NotDifferentiable("LoadAndRemapMatrix")


# -- the initializer of a remapped variable --------------------------------------------------------
def _string(value, name: str):
    return convert_to_tensor(value, _dtypes.string, name=name)


def _load_and_remap_matrix(
    ckpt_path: str,
    old_tensor_name: str,
    num_rows: int,
    num_cols: int,
    initializer,
    old_row_vocab_size: int = -1,
    old_row_vocab_file: Optional[str] = None,
    new_row_vocab_file: Optional[str] = None,
    old_col_vocab_file: Optional[str] = None,
    new_col_vocab_file: Optional[str] = None,
    num_row_oov_buckets: int = 0,
    num_col_oov_buckets: int = 0,
):
    """The remapped matrix, OOV rows and columns appended (TF1's ``_load_and_remap_matrix``)."""
    from ..ops.array_ops import concat, reshape
    from ..ops.array_ops import range as _range
    from ..ops.math_ops import cast

    if num_row_oov_buckets < 0:
        raise ValueError(f"num_row_oov_buckets must be >= 0, but received {num_row_oov_buckets}")
    if num_col_oov_buckets < 0:
        raise ValueError(f"num_col_oov_buckets must be >= 0, but received {num_col_oov_buckets}")
    remap_rows = bool(new_row_vocab_file and old_row_vocab_file)
    remap_cols = bool(new_col_vocab_file and old_col_vocab_file)
    if remap_rows:
        row_remapping, rows_present = apply_op(
            "GenerateVocabRemapping",
            (_string(new_row_vocab_file, "new_vocab_file"),
             _string(old_row_vocab_file, "old_vocab_file")),
            {"new_vocab_offset": 0, "num_new_vocab": num_rows,
             "old_vocab_size": old_row_vocab_size},
            "GenerateVocabRemapping",
        ).outputs  # fmt: skip
    else:
        row_remapping = _range(0, num_rows, dtype=_dtypes.int64)
        rows_present = convert_to_tensor(np.int32(num_rows))
    if remap_cols:
        col_remapping, cols_present = apply_op(
            "GenerateVocabRemapping",
            (_string(new_col_vocab_file, "new_vocab_file"),
             _string(old_col_vocab_file, "old_vocab_file")),
            {"new_vocab_offset": 0, "num_new_vocab": num_cols, "old_vocab_size": -1},
            "GenerateVocabRemapping",
        ).outputs  # fmt: skip
    else:
        col_remapping = convert_to_tensor(np.zeros([0], np.int64))
        cols_present = convert_to_tensor(np.int32(num_cols))
    missing = num_rows * num_cols - rows_present * cols_present
    init_values = convert_to_tensor(initializer(reshape(cast(missing, _dtypes.int64), [1])))
    matrix = apply_op(
        "LoadAndRemapMatrix",
        (_string(ckpt_path, "ckpt_path"), _string(old_tensor_name, "old_tensor_name"),
         row_remapping, col_remapping, cast(init_values, _dtypes.float32)),
        {"num_rows": num_rows, "num_cols": num_cols},
        "LoadAndRemapMatrix",
    ).outputs[0]  # fmt: skip
    if num_row_oov_buckets > 0:
        oov = convert_to_tensor(initializer([num_row_oov_buckets, num_cols]))
        matrix = concat([matrix, cast(oov, _dtypes.float32)], 0)
    if num_col_oov_buckets > 0:
        oov = convert_to_tensor(initializer([num_rows + num_row_oov_buckets, num_col_oov_buckets]))
        matrix = concat([matrix, cast(oov, _dtypes.float32)], 1)
    return matrix


def _warm_start_var_with_vocab(
    var,
    current_vocab_path,
    current_vocab_size,
    prev_ckpt,
    prev_vocab_path,
    previous_vocab_size=-1,
    current_oov_buckets=0,
    prev_tensor_name=None,
    initializer=None,
    axis=0,
) -> None:
    import os

    from ..io.saver import latest_checkpoint
    from ..ops.init_ops import zeros_initializer

    if not (current_vocab_path and current_vocab_size and prev_ckpt and prev_vocab_path):
        raise ValueError(
            "Invalid args: Must provide all of [current_vocab_path, current_vocab_size, "
            "prev_ckpt, prev_vocab_path}."
        )
    variables = [var] if _is_variable(var) else list(var)
    if not variables or not all(_is_variable(v) for v in variables):
        raise TypeError(
            "var MUST be one of the following: a Variable, list of Variable or "
            f"PartitionedVariable, but is {type(var)}"
        )
    if len(variables) != 1:
        raise ValueError("warm_start with a vocabulary: partitioned variables are not supported")
    (v,) = variables
    if prev_tensor_name is None:
        prev_tensor_name = v.op.name
    if initializer is None:
        initializer = zeros_initializer()
    if not callable(initializer):
        raise TypeError(
            f"initializer must be callable, instead of being {initializer} of type "
            f"{type(initializer)}."
        )
    shape = v.shape.as_list()
    if len(shape) != 2:
        raise ValueError(f"Expected shape to be 2-D, but received shape: {shape}")
    if v.dtype.base_dtype != _dtypes.float32:
        raise TypeError(f"Currently, only float32 is supported. Received dtype: {v.dtype}")
    if axis == 0:
        expected_rows = current_vocab_size + current_oov_buckets
        if shape[0] != expected_rows:
            raise ValueError(
                f"Expected 1st dim of shape to be new_row_vocab_size ({current_vocab_size}) + "
                f"num_row_oov_buckets ({current_oov_buckets}) = {expected_rows}, but received "
                f"shape: {shape}"
            )
        arguments = dict(
            num_rows=current_vocab_size,
            num_cols=shape[1],
            old_row_vocab_size=previous_vocab_size,
            old_row_vocab_file=prev_vocab_path,
            new_row_vocab_file=current_vocab_path,
            num_row_oov_buckets=current_oov_buckets,
        )
    else:
        expected_cols = current_vocab_size + current_oov_buckets
        if shape[1] != expected_cols:
            raise ValueError(
                f"Expected 2nd dim of shape to be new_col_vocab_size ({current_vocab_size}) + "
                f"num_col_oov_buckets ({current_oov_buckets}) = {expected_cols}, but received "
                f"shape: {shape}"
            )
        arguments = dict(
            num_rows=shape[0],
            num_cols=current_vocab_size,
            old_col_vocab_file=prev_vocab_path,
            new_col_vocab_file=current_vocab_path,
            num_col_oov_buckets=current_oov_buckets,
        )
    path = os.fspath(prev_ckpt)
    ckpt_file = latest_checkpoint(path) if os.path.isdir(path) else path
    graph = v.graph
    with graph.as_default(), control_dependencies(None), graph.name_scope(None):
        with graph.name_scope(v.op.name + "/warm_start/"):
            value = _load_and_remap_matrix(ckpt_file, prev_tensor_name, initializer=initializer,
                                           **arguments)  # fmt: skip
            init_op = v.assign(value, read_value=False)
    v._initializer_op = init_op if not hasattr(init_op, "op") else init_op.op
    v._initial_value = value


# -- warm_start ------------------------------------------------------------------------------------
def _get_grouped_variables(vars_to_warm_start) -> dict:
    graph = get_default_graph()
    if isinstance(vars_to_warm_start, str) or vars_to_warm_start is None:
        _logging.info("Warm-starting variables only in TRAINABLE_VARIABLES.")
        found = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES, vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            found = []
            for v in vars_to_warm_start:
                found += graph.get_collection(GraphKeys.GLOBAL_VARIABLES, v)
        elif all(_is_variable(v) for v in vars_to_warm_start):
            found = vars_to_warm_start
        else:
            raise ValueError(
                "If `vars_to_warm_start` is a list, it must be all `Variable` or all `str`.  "
                f"Given types are {[type(v) for v in vars_to_warm_start]}"
            )
    else:
        raise ValueError(
            "`vars_to_warm_start must be a `list` or `str`.  Given type is "
            f"{type(vars_to_warm_start)}"
        )
    grouped: dict = {}
    for v in found:
        grouped.setdefault(v.op.name, []).append(v)
    return grouped


def warm_start(
    ckpt_to_initialize_from,
    vars_to_warm_start=".*",
    var_name_to_vocab_info=None,
    var_name_to_prev_var_name=None,
) -> None:
    """Makes the initializers of ``vars_to_warm_start`` load their values from the checkpoint
    ``ckpt_to_initialize_from`` (TF1's ``tf.train.warm_start``).

    ``vars_to_warm_start``: a regular expression over the trainable variables' names, a list
    of such expressions over all global variables, a list of variables, or None (only those
    of ``var_name_to_vocab_info``).  ``var_name_to_prev_var_name`` maps a variable's name to
    its name in the checkpoint; ``var_name_to_vocab_info`` maps a variable's name to the
    `VocabInfo` that remaps it.  A name given in either map that no chosen variable has is a
    ``ValueError``."""
    _logging.info("Warm-starting from: %s", ckpt_to_initialize_from)
    grouped = _get_grouped_variables(vars_to_warm_start)
    var_name_to_vocab_info = var_name_to_vocab_info or {}
    var_name_to_prev_var_name = var_name_to_prev_var_name or {}
    count = 0
    prev_used, vocab_used = set(), set()
    vocabless: dict = {}
    for var_name, variable in grouped.items():
        prev_var_name = var_name_to_prev_var_name.get(var_name)
        if prev_var_name:
            prev_used.add(var_name)
        vocab_info = var_name_to_vocab_info.get(var_name)
        if vocab_info:
            vocab_used.add(var_name)
            count += 1
            _warm_start_var_with_vocab(
                variable,
                current_vocab_path=vocab_info.new_vocab,
                current_vocab_size=vocab_info.new_vocab_size,
                prev_ckpt=ckpt_to_initialize_from,
                prev_vocab_path=vocab_info.old_vocab,
                previous_vocab_size=vocab_info.old_vocab_size,
                current_oov_buckets=vocab_info.num_oov_buckets,
                prev_tensor_name=prev_var_name,
                initializer=vocab_info.backup_initializer,
                axis=vocab_info.axis,
            )
        elif vars_to_warm_start:
            count += 1
            var = variable[0] if len(variable) == 1 else variable
            prev_tensor_name = prev_var_name or var_name
            if prev_tensor_name in vocabless:
                init_from_checkpoint(ckpt_to_initialize_from, vocabless)
                vocabless.clear()
            vocabless[prev_tensor_name] = var
    if vocabless:
        init_from_checkpoint(ckpt_to_initialize_from, vocabless)
    prev_not_used = set(var_name_to_prev_var_name) - prev_used
    vocab_not_used = set(var_name_to_vocab_info) - vocab_used
    _logging.info("Warm-started %d variables.", count)
    if prev_not_used:
        raise ValueError(
            "You provided the following variables in var_name_to_prev_var_name that were not "
            f"used: {prev_not_used}.  Perhaps you misspelled them?  Here is the list of viable "
            f"variable names: {list(grouped)}"
        )
    if vocab_not_used:
        raise ValueError(
            "You provided the following variables in var_name_to_vocab_info that were not "
            f"used: {vocab_not_used}.  Perhaps you misspelled them?  Here is the list of viable "
            f"variable names: {list(grouped)}"
        )

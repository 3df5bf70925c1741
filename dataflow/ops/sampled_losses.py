"""Losses over a sample of the classes: ``nn.nce_loss`` and ``nn.sampled_softmax_loss``.

With tens of thousands of classes (the words of a vocabulary), a full softmax costs a matrix
product with every class's weights per example.  These losses score the true classes and
``num_sampled`` classes drawn by a candidate sampler (log-uniform by default: frequent, low ids
more often), correcting each logit by the log of how often its class is expected to be drawn
(``subtract_log_q``).  Only the weight rows of the true and sampled classes are read
(``embedding_lookup``), so their gradients are IndexedSlices.  Built as TensorFlow 1.x builds
them (``_compute_sampled_logits``), with the same names and the same numbers given the same
sampled classes (pass ``sampled_values`` to fix them).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .array_ops import (
    concat,
    expand_dims,
    ones,
    ones_like,
    reshape,
    shape,
    stack,
    stop_gradient,
    zeros_like,
)
from .candidate_sampling_ops import log_uniform_candidate_sampler
from .embedding_ops import embedding_lookup
from .math_ops import cast, log, matmul, multiply
from .slice_ops import slice as _slice
from .slice_ops import strided_slice

__all__ = ["compute_accidental_hits", "nce_loss", "sampled_softmax_loss"]


# -- accidental hits -------------------------------------------------------------------------------
def _infer_accidental_hits(op):
    return [
        (_dtypes.int32, TensorShape([None])),
        (_dtypes.int64, TensorShape([None])),
        (_dtypes.float32, TensorShape([None])),
    ]


def _accidental_hits_kernel(attrs):
    def compute_accidental_hits(true_classes, sampled):
        # One entry per (row, true column, sampled position) whose ids agree, in that order.
        rows, _, positions = np.nonzero(
            np.asarray(true_classes)[:, :, None] == np.asarray(sampled)[None, None, :]
        )
        weights = np.full(len(rows), -np.finfo(np.float32).max, np.float32)
        return rows.astype(np.int32), positions.astype(np.int64), weights

    return compute_accidental_hits


define_op("ComputeAccidentalHits", _infer_accidental_hits, _accidental_hits_kernel)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(row, sampled position, -FLT_MAX) for every sampled class that is one of its row's true
    classes, to push those logits out of a sampled softmax."""
    true_classes = convert_to_tensor(true_classes, dtype=_dtypes.int64)
    sampled = convert_to_tensor(sampled_candidates, dtype=_dtypes.int64)
    outputs = apply_op(
        "ComputeAccidentalHits",
        (true_classes, sampled),
        {"num_true": int(num_true)},
        name or "ComputeAccidentalHits",
    ).outputs
    return tuple(outputs)


# -- the shared part -------------------------------------------------------------------------------
def _sum_rows(x):
    """Row sums as a matrix product with ones, as TensorFlow does (its gradient is cheaper)."""
    cols = shape(x)[1]
    return reshape(matmul(x, ones(stack([cols, 1]), x.dtype)), [-1])


def _compute_sampled_logits(
    weights,
    biases,
    labels,
    inputs,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values=None,
    subtract_log_q: bool = True,
    remove_accidental_hits: bool = False,
    partition_strategy: str = "mod",
    name: Optional[str] = None,
    seed: Optional[int] = None,
):
    weights = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    with name_scope(name or "compute_sampled_logits"):
        labels = cast(convert_to_tensor(labels), _dtypes.int64)
        inputs = convert_to_tensor(inputs)
        labels_flat = reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels,
                num_true=num_true,
                num_sampled=num_sampled,
                unique=True,
                range_max=num_classes,
                seed=seed,
            )
        sampled, true_expected, sampled_expected = (stop_gradient(s) for s in sampled_values)
        sampled = cast(sampled, _dtypes.int64)
        all_ids = concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype is not inputs.dtype:
            all_w = cast(all_w, inputs.dtype)
        n_true = shape(labels_flat)[0]
        true_w = _slice(all_w, [0, 0], stack([n_true, -1]))
        sampled_w = _slice(all_w, stack([n_true, 0]), [-1, -1])
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype is not inputs.dtype:
            all_b = cast(all_b, inputs.dtype)
        true_b = _slice(all_b, [0], shape(labels_flat))
        sampled_b = _slice(all_b, shape(labels_flat), [-1])
        dim = strided_slice(shape(true_w), [1], [2])
        row_wise_dots = multiply(
            expand_dims(inputs, 1), reshape(true_w, concat([[-1, num_true], dim], 0))
        )
        dots_as_matrix = reshape(row_wise_dots, concat([[-1], dim], 0))
        true_logits = reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_logits += reshape(true_b, [-1, num_true])
        sampled_logits += sampled_b
        if remove_accidental_hits:
            rows, ids, hit_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
            sparse_indices = concat(
                [reshape(rows, [-1, 1]), reshape(cast(ids, _dtypes.int32), [-1, 1])],
                1,
                name="sparse_indices",
            )
            logits_shape = concat([shape(labels)[:1], expand_dims(num_sampled, 0)], 0)
            from .sparse_ops import sparse_to_dense

            sampled_logits += sparse_to_dense(
                sparse_indices,
                logits_shape,
                cast(hit_weights, sampled_logits.dtype),
                default_value=0.0,
                validate_indices=False,
            )
        if subtract_log_q:
            true_logits -= log(cast(true_expected, true_logits.dtype))
            sampled_logits -= log(cast(sampled_expected, sampled_logits.dtype))
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([ones_like(true_logits) / num_true, zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=False,
    partition_strategy="mod",
    name="nce_loss",
):
    """Noise-contrastive estimation: a logistic loss per example, telling its true classes from
    ``num_sampled`` sampled ones; a vector with one loss per example."""
    from .nn_impl import sigmoid_cross_entropy_with_logits

    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true,
        sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name,
    )  # fmt: skip
    losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return _sum_rows(losses)


def sampled_softmax_loss(
    weights,
    biases,
    labels,
    inputs,
    num_sampled,
    num_classes,
    num_true=1,
    sampled_values=None,
    remove_accidental_hits=True,
    partition_strategy="mod",
    name="sampled_softmax_loss",
    seed=None,
):
    """A softmax over the true classes and ``num_sampled`` sampled ones; one loss per example."""
    from .nn_ops import softmax_cross_entropy_with_logits_v2

    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true,
        sampled_values=sampled_values, subtract_log_q=True,
        remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name, seed=seed,
    )  # fmt: skip
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


from ..framework.gradient_registry import NotDifferentiable  # noqa: E402

NotDifferentiable("ComputeAccidentalHits")

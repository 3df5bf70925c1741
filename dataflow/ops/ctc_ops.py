"""Connectionist temporal classification: ``ctc_loss`` (and ``ctc_loss_v2``), the greedy and
beam-search decoders, ``ctc_unique_labels`` and ``collapse_repeated``, plus ``edit_distance``.

``CTCLoss`` is one op, as in TensorFlow: the forward-backward recursions over the label
sequence with a blank between labels, in log space, per batch element (numpy over the
extended labels at each time step).  Its second output is the gradient with respect to the
logits, ``softmax(logits) - occupancy / p(labels)``; the op's gradient multiplies it by the
loss's gradient.  The blank is the last class (``num_classes - 1``) unless a ``blank_index``
says otherwise (``ctc_loss_v2``, the greedy decoder), which moves that class to the end first.
"""

from __future__ import annotations

import heapq
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location, name_scope
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from . import array_ops as _a
from . import extra_array_ops as _xa
from . import math_ops as _m
from .nd_index_ops import gather_nd

__all__ = [
    "collapse_repeated",
    "ctc_beam_search_decoder",
    "ctc_beam_search_decoder_v2",
    "ctc_greedy_decoder",
    "ctc_loss",
    "ctc_loss_v2",
    "ctc_unique_labels",
]

_NEG_INF = -np.inf


def _logsumexp(a, b):
    top = np.maximum(a, b)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            np.isneginf(top), _NEG_INF, safe + np.log(np.exp(a - safe) + np.exp(b - safe))
        )


def _log_softmax(x):
    top = x.max(axis=-1, keepdims=True)
    shifted = x - top
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _labels_by_row(indices, values, batch: int) -> list:
    rows = [[] for _ in range(batch)]
    order = np.lexsort(indices.T[::-1]) if len(indices) else []
    for i in order:
        b = int(indices[i, 0])
        if not 0 <= b < batch:
            raise InvalidArgumentError(
                None, None, f"labels' batch index {b} is outside the batch of {batch}"
            )
        rows[b].append(int(values[i]))
    return rows


def _ctc_one(log_y, labels, blank, merge_repeated):
    """The log probability of ``labels`` under the per-frame log probabilities ``log_y``
    (``[T, C]``) and the gradient of ``-log p`` with respect to the logits."""
    t_max = log_y.shape[0]
    lp = np.full(2 * len(labels) + 1, blank, dtype=np.int64)
    lp[1::2] = labels
    u_max = len(lp)
    # Which states may stay on themselves and which may skip one back (from u - 2).
    stay = np.full(u_max, True) if merge_repeated else lp == blank
    skip = np.zeros(u_max, dtype=bool)
    skip[2:] = (lp[2:] != blank) & ~(merge_repeated & (lp[2:] == lp[:-2]))
    emit = log_y[:, lp]  # [T, U]
    alpha = np.full((t_max, u_max), _NEG_INF)
    alpha[0, 0] = emit[0, 0]
    if u_max > 1:
        alpha[0, 1] = emit[0, 1]
    for t in range(1, t_max):
        prev = alpha[t - 1]
        total = np.where(stay, prev, _NEG_INF)
        total[1:] = _logsumexp(total[1:], prev[:-1])
        total[2:] = np.where(skip[2:], _logsumexp(total[2:], prev[:-2]), total[2:])
        alpha[t] = emit[t] + total
    beta = np.full((t_max, u_max), _NEG_INF)
    beta[t_max - 1, u_max - 1] = 0.0
    if u_max > 1:
        beta[t_max - 1, u_max - 2] = 0.0
    skip_back = np.zeros(u_max, dtype=bool)
    skip_back[:-2] = skip[2:]
    for t in range(t_max - 2, -1, -1):
        nxt = beta[t + 1] + emit[t + 1]
        total = np.where(stay, nxt, _NEG_INF)
        total[:-1] = _logsumexp(total[:-1], nxt[1:])
        total[:-2] = np.where(skip_back[:-2], _logsumexp(total[:-2], nxt[2:]), total[:-2])
        beta[t] = total
    both = alpha + beta
    top = both[0].max()
    log_p = _NEG_INF if np.isneginf(top) else top + np.log(np.exp(both[0] - top).sum())
    grad = np.exp(log_y)
    if np.isfinite(log_p):
        occupancy = np.zeros_like(grad)
        with np.errstate(under="ignore"):
            np.add.at(occupancy.T, lp, np.exp(both - log_p).T)
        grad = grad - occupancy
    return log_p, grad


def _ctc_loss_kernel(attrs):
    collapse = attrs["preprocess_collapse_repeated"]
    merge = attrs["ctc_merge_repeated"]
    ignore_longer = attrs["ignore_longer_outputs_than_inputs"]

    def kernel(inputs, indices, values, sequence_length):
        if inputs.ndim != 3:
            raise InvalidArgumentError(None, None, f"inputs must be 3-D, got {inputs.shape}")
        t_max, batch, classes = inputs.shape
        if np.shape(sequence_length) != (batch,):
            raise InvalidArgumentError(
                None,
                None,
                f"len(sequence_length) != batch_size: {np.size(sequence_length)} vs {batch}",
            )
        blank = classes - 1
        loss = np.zeros(batch, dtype=inputs.dtype)
        grad = np.zeros_like(inputs)
        for b, labels in enumerate(_labels_by_row(indices, values, batch)):
            length = int(sequence_length[b])
            if length > t_max or length < 0:
                raise InvalidArgumentError(
                    None, None, f"sequence_length({b}) = {length} is outside [0, {t_max}]"
                )
            if collapse:
                labels = [v for i, v in enumerate(labels) if i == 0 or v != labels[i - 1]]
            for v in labels:
                if not 0 <= v < blank:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"Saw a non-null label (index >= num_classes - 1) following a null "
                        f"label, batch: {b} num_classes: {classes} labels: "
                        f"{','.join(map(str, labels))}",
                    )
            repeats = sum(labels[i] == labels[i - 1] for i in range(1, len(labels)))
            required = len(labels) + (repeats if merge else 0)
            if ignore_longer and len(labels) > length:
                continue  # loss and gradient 0, as TensorFlow
            if required > length and not ignore_longer:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"Not enough time for target transition sequence (required: {required}, "
                    f"available: {length})",
                )
            if length == 0:
                continue
            log_y = _log_softmax(inputs[:length, b].astype(np.float64))
            log_p, g = _ctc_one(log_y, labels, blank, merge)
            loss[b] = -log_p
            grad[:length, b] = g
        return loss, grad

    return kernel


def _infer_ctc_loss(op):
    inputs, indices, values, sequence_length = op.inputs
    if inputs.dtype not in (_dtypes.float32, _dtypes.float64):
        raise TypeError(f"inputs must be float32 or float64, got {inputs.dtype.name}")
    if inputs.shape.ndims not in (None, 3):
        raise ValueError(f"inputs must be 3-D [max_time, batch, num_classes], got {inputs.shape}")
    if indices.shape.ndims not in (None, 2) or values.shape.ndims not in (None, 1):
        raise ValueError("labels must be a 2-D SparseTensor")
    if sequence_length.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector, got {sequence_length.shape}")
    batch = inputs.shape.as_list()[1] if inputs.shape.ndims == 3 else None
    return [(inputs.dtype, TensorShape([batch])), (inputs.dtype, inputs.shape)]


define_op("CTCLoss", _infer_ctc_loss, _ctc_loss_kernel)


def _sparse_labels(labels, function: str):
    from ..framework.sparse_tensor import SparseTensor, SparseTensorValue

    if isinstance(labels, SparseTensorValue):
        labels = SparseTensor(labels.indices, labels.values, labels.dense_shape)
    if not isinstance(labels, SparseTensor):
        raise TypeError(
            f"{function} at {_user_location()}: expected argument `labels` to be a "
            f"SparseTensor. Received labels={labels!r} of type: {type(labels).__name__}"
        )
    return labels


def ctc_loss(
    labels,
    inputs=None,
    sequence_length=None,
    preprocess_collapse_repeated: bool = False,
    ctc_merge_repeated: bool = True,
    ignore_longer_outputs_than_inputs: bool = False,
    time_major: bool = True,
    logits=None,
):
    """The CTC loss, ``-log p(labels | inputs)`` per batch element: ``inputs`` are the
    unnormalized logits ``[max_time, batch, num_classes]`` (``[batch, max_time, ...]`` unless
    ``time_major``), whose last class is the blank; ``labels`` an int32 SparseTensor of the
    target sequences (row ``b`` for batch element ``b``, values in ``[0, num_classes - 1)``);
    ``sequence_length`` the frames of each element.  ``preprocess_collapse_repeated`` merges
    repeated labels first; ``ctc_merge_repeated=False`` makes each frame of a repeated class a
    label of its own.  A sequence too long for its frames is an error, or gets a loss (and
    gradient) of 0 with ``ignore_longer_outputs_than_inputs`` (as in TensorFlow, only when it
    has more labels than frames: one short only of the frames its repeats need gets an
    infinite loss)."""
    labels = _sparse_labels(labels, "ctc_loss")
    if logits is not None:
        if inputs is not None:
            raise ValueError("Cannot specify both 'logits' and 'inputs'")
        inputs = logits
    if inputs is None or sequence_length is None:
        raise ValueError(f"ctc_loss at {_user_location()}: inputs and sequence_length are needed")
    graph = labels.values.graph
    with graph.as_default():
        inputs = convert_to_tensor(inputs, name="logits")
        if not time_major:
            inputs = _a.transpose(inputs, [1, 0, 2])
        original = inputs.dtype
        if original is _dtypes.float16:
            inputs = _m.cast(inputs, _dtypes.float32)
        sequence_length = convert_to_tensor(sequence_length, _dtypes.int32, "sequence_length")
        attrs = {
            "preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
            "ctc_merge_repeated": bool(ctc_merge_repeated),
            "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs),
        }
        indices = _m.cast(labels.indices, _dtypes.int64)
        values = _m.cast(labels.values, _dtypes.int32)
        loss = apply_op("CTCLoss", (inputs, indices, values, sequence_length), attrs, "CTCLoss")
        loss = loss.outputs[0]
        if original is _dtypes.float16:
            loss = _m.cast(loss, original)
        return loss


def _move_blank_last(logits, blank_index: int, num_classes: int):
    """``logits`` with class ``blank_index`` moved to the end."""
    if blank_index == num_classes - 1:
        return logits
    return _a.concat(
        [
            logits[:, :, :blank_index],
            logits[:, :, blank_index + 1 :],
            logits[:, :, blank_index : blank_index + 1],
        ],
        axis=2,
    )


def _num_classes(logits: Tensor, function: str) -> int:
    n = logits.shape.as_list()[2] if logits.shape.ndims == 3 else None
    if n is None:
        raise ValueError(f"{function} at {_user_location()}: the number of classes must be known")
    return n


def ctc_loss_v2(
    labels,
    logits,
    label_length,
    logit_length,
    logits_time_major: bool = True,
    unique=None,
    blank_index=None,
    name: Optional[str] = None,
):
    """The CTC loss of TensorFlow 2: ``labels`` are dense ``[batch, max_label_length]`` with
    ``label_length`` (or a SparseTensor, which needs ``blank_index``), ``logits`` are
    ``[frames, batch, num_classes]`` (``logits_time_major``) with ``logit_length``, and the
    blank is class ``blank_index`` (0 by default for dense labels; negative counts from the
    end).  ``unique`` (`ctc_unique_labels` of the labels) only saves work in TensorFlow and
    changes nothing here."""
    from ..framework.sparse_tensor import SparseTensor, SparseTensorValue

    with name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        logits = convert_to_tensor(logits, name="logits")
        num_classes = _num_classes(
            logits if logits_time_major else _a.transpose(logits, [1, 0, 2]), "ctc_loss_v2"
        )
        sparse = isinstance(labels, (SparseTensor, SparseTensorValue))
        if blank_index is None:
            if sparse:
                raise ValueError(
                    "Argument `blank_index` must be provided when labels is a SparseTensor."
                )
            blank_index = 0
        if blank_index < 0:
            blank_index += num_classes
        if not 0 <= blank_index < num_classes:
            raise ValueError(f"blank_index {blank_index} is outside [0, {num_classes})")
        if not logits_time_major:
            logits = _a.transpose(logits, [1, 0, 2])
        if sparse:
            labels = _sparse_labels(labels, "ctc_loss_v2")
        else:
            labels = convert_to_tensor(labels, name="labels")
            label_length = convert_to_tensor(label_length, name="label_length")
            mask = _xa.sequence_mask(label_length, maxlen=_a.shape(labels)[1])
            indices = _m.where(mask)
            values = gather_nd(labels, indices)
            dense_shape = _m.cast(_a.shape(labels), _dtypes.int64)
            labels = SparseTensor(indices, values, dense_shape)
        logits = _move_blank_last(logits, blank_index, num_classes)
        if blank_index != num_classes - 1:
            values = _m.cast(labels.values, _dtypes.int32)
            values = _m.where_v2(values < blank_index, values, values - 1)
            labels = SparseTensor(labels.indices, values, labels.dense_shape)
        return ctc_loss(labels, logits, logit_length, time_major=True)


# -- decoders --------------------------------------------------------------------------------
def _check_decoder_inputs(inputs, sequence_length):
    if inputs.ndim != 3:
        raise InvalidArgumentError(None, None, f"inputs must be 3-D, got {inputs.shape}")
    t_max, batch, _ = inputs.shape
    if np.shape(sequence_length) != (batch,):
        raise InvalidArgumentError(
            None, None, f"len(sequence_length) != batch_size: {np.size(sequence_length)} vs {batch}"
        )
    for b, length in enumerate(np.asarray(sequence_length).tolist()):
        if not 0 <= length <= t_max:
            raise InvalidArgumentError(
                None, None, f"sequence_length({b}) = {length} is outside [0, {t_max}]"
            )


def _to_sparse(sequences: list):
    """The SparseTensor parts of ``sequences`` (one list of class ids per batch element)."""
    indices = [[b, i] for b, seq in enumerate(sequences) for i in range(len(seq))]
    values = [v for seq in sequences for v in seq]
    width = max((len(s) for s in sequences), default=0)
    return (
        np.array(indices, dtype=np.int64).reshape(-1, 2),
        np.array(values, dtype=np.int64),
        np.array([len(sequences), width], dtype=np.int64),
    )


def _greedy_kernel(attrs):
    merge = attrs["merge_repeated"]

    def kernel(inputs, sequence_length):
        _check_decoder_inputs(inputs, sequence_length)
        _, batch, classes = inputs.shape
        blank = attrs["blank_index"]
        blank = classes - 1 if blank < 0 else blank
        sequences, log_probabilities = [], np.zeros((batch, 1), dtype=inputs.dtype)
        for b in range(batch):
            frames = inputs[: int(sequence_length[b]), b]
            best = frames.argmax(axis=-1) if len(frames) else np.zeros(0, np.int64)
            log_probabilities[b, 0] = -frames.max(axis=-1).sum() if len(frames) else 0
            seq, previous = [], -1
            for c in best.tolist():
                if c != blank and not (merge and c == previous):
                    seq.append(c)
                previous = c
            sequences.append(seq)
        return (*_to_sparse(sequences), log_probabilities)

    return kernel


def _infer_decoder(op):
    inputs, sequence_length = op.inputs
    if inputs.dtype not in (_dtypes.float32, _dtypes.float64):
        raise TypeError(f"inputs must be float32 or float64, got {inputs.dtype.name}")
    if inputs.shape.ndims not in (None, 3):
        raise ValueError(f"inputs must be 3-D [max_time, batch, num_classes], got {inputs.shape}")
    batch = inputs.shape.as_list()[1] if inputs.shape.ndims == 3 else None
    return [
        (_dtypes.int64, TensorShape([None, 2])),
        (_dtypes.int64, TensorShape([None])),
        (_dtypes.int64, TensorShape([2])),
        (inputs.dtype, TensorShape([batch, 1])),
    ]


define_op("CTCGreedyDecoder", _infer_decoder, _greedy_kernel)


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated: bool = True, blank_index=None):
    """The most likely class of each frame (of ``inputs``, ``[max_time, batch, num_classes]``
    logits), repeats merged (``merge_repeated``) and blanks dropped: ``([decoded],
    neg_sum_logits)`` with ``decoded`` an int64 SparseTensor ``[batch, longest]`` and
    ``neg_sum_logits`` ``[batch, 1]``, minus the sum of each frame's largest logit.  The blank
    is class ``blank_index`` (the last class by default; negative counts from the end)."""
    graph = _m.graph_of((inputs, sequence_length))
    with graph.as_default():
        inputs = convert_to_tensor(inputs, name="inputs")
        sequence_length = convert_to_tensor(sequence_length, _dtypes.int32, "sequence_length")
        if blank_index is not None and blank_index < 0:
            blank_index += _num_classes(inputs, "ctc_greedy_decoder")
        attrs = {
            "merge_repeated": bool(merge_repeated),
            "blank_index": -1 if blank_index is None else int(blank_index),
        }
        outputs = apply_op("CTCGreedyDecoder", (inputs, sequence_length), attrs).outputs
    from ..framework.sparse_tensor import SparseTensor

    return [SparseTensor(*outputs[:3])], outputs[3]


def _beam_search_kernel(attrs):
    beam_width, top_paths, merge = attrs["beam_width"], attrs["top_paths"], attrs["merge_repeated"]

    def kernel(inputs, sequence_length):
        _check_decoder_inputs(inputs, sequence_length)
        _, batch, classes = inputs.shape
        blank = classes - 1
        paths = [[] for _ in range(top_paths)]
        log_probabilities = np.zeros((batch, top_paths), dtype=inputs.dtype)
        for b in range(batch):
            log_y = _log_softmax(inputs[: int(sequence_length[b]), b].astype(np.float64))
            best = _prefix_beam_search(log_y, blank, beam_width, merge)
            if len(best) < top_paths:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"top_paths {top_paths} is more than the {len(best)} paths the beam found",
                )
            for i, (score, labels) in enumerate(best[:top_paths]):
                paths[i].append(list(labels))
                log_probabilities[b, i] = score
        outputs = [_to_sparse(p) for p in paths]
        return (
            *[o[0] for o in outputs],
            *[o[1] for o in outputs],
            *[o[2] for o in outputs],
            log_probabilities,
        )

    return kernel


def _prefix_beam_search(log_y, blank: int, beam_width: int, merge: bool) -> list:
    """TensorFlow's CTC beam search: beams are label prefixes scored by the probability of
    ending in a blank and in their last label; each step extends the ``beam_width`` best by
    every class.  Returns ``(log probability, labels)`` pairs, best first.  With ``merge``,
    repeated labels in a beam are emitted once."""
    beams = {(): (0.0, _NEG_INF)}  # prefix -> (log p ending in blank, log p ending in label)
    for frame in log_y:
        new: dict = {}

        def add(prefix, p_blank, p_label, new=new):
            old_blank, old_label = new.get(prefix, (_NEG_INF, _NEG_INF))
            new[prefix] = (np.logaddexp(old_blank, p_blank), np.logaddexp(old_label, p_label))

        for prefix, (p_blank, p_label) in beams.items():
            total = np.logaddexp(p_blank, p_label)
            add(prefix, total + frame[blank], _NEG_INF)
            if prefix:
                add(prefix, _NEG_INF, p_label + frame[prefix[-1]])
            for c in range(len(frame)):
                if c == blank:
                    continue
                if prefix and c == prefix[-1]:
                    add(prefix + (c,), _NEG_INF, p_blank + frame[c])
                else:
                    add(prefix + (c,), _NEG_INF, total + frame[c])
        ranked = heapq.nlargest(beam_width, new.items(), key=lambda item: np.logaddexp(*item[1]))
        beams = dict(ranked)
    scored = sorted(
        ((float(np.logaddexp(*p)), prefix) for prefix, p in beams.items()),
        key=lambda item: -item[0],
    )
    if merge:
        scored = [
            (s, tuple(v for i, v in enumerate(p) if i == 0 or v != p[i - 1])) for s, p in scored
        ]
    return scored


def _infer_beam_search(op):
    inputs, sequence_length = op.inputs
    if inputs.dtype not in (_dtypes.float32, _dtypes.float64):
        raise TypeError(f"inputs must be float32 or float64, got {inputs.dtype.name}")
    if inputs.shape.ndims not in (None, 3):
        raise ValueError(f"inputs must be 3-D [max_time, batch, num_classes], got {inputs.shape}")
    batch = inputs.shape.as_list()[1] if inputs.shape.ndims == 3 else None
    paths = op.attrs["top_paths"]
    return (
        [(_dtypes.int64, TensorShape([None, 2]))] * paths
        + [(_dtypes.int64, TensorShape([None]))] * paths
        + [(_dtypes.int64, TensorShape([2]))] * paths
        + [(inputs.dtype, TensorShape([batch, paths]))]
    )


define_op("CTCBeamSearchDecoder", _infer_beam_search, _beam_search_kernel)


def ctc_beam_search_decoder(
    inputs,
    sequence_length,
    beam_width: int = 100,
    top_paths: int = 1,
    merge_repeated: bool = True,
):
    """The ``top_paths`` most likely label sequences of the logits ``inputs``
    (``[max_time, batch, num_classes]``, blank last) by a beam search over label prefixes
    keeping ``beam_width`` of them: ``(decoded, log_probabilities)``, a list of ``top_paths``
    int64 SparseTensors and ``[batch, top_paths]`` log probabilities.  With
    ``merge_repeated`` a repeated label in a path is emitted once, as TensorFlow's v1 op
    does."""
    if top_paths < 1 or beam_width < 1 or top_paths > beam_width:
        raise ValueError(
            f"ctc_beam_search_decoder at {_user_location()}: need 0 < top_paths <= beam_width, "
            f"got top_paths={top_paths}, beam_width={beam_width}"
        )
    graph = _m.graph_of((inputs, sequence_length))
    with graph.as_default():
        inputs = convert_to_tensor(inputs, name="inputs")
        sequence_length = convert_to_tensor(sequence_length, _dtypes.int32, "sequence_length")
        attrs = {
            "beam_width": int(beam_width),
            "top_paths": int(top_paths),
            "merge_repeated": bool(merge_repeated),
        }
        outputs = apply_op("CTCBeamSearchDecoder", (inputs, sequence_length), attrs).outputs
    from ..framework.sparse_tensor import SparseTensor

    n = int(top_paths)
    decoded = [SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i]) for i in range(n)]
    return decoded, outputs[3 * n]


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width: int = 100, top_paths: int = 1):
    """`ctc_beam_search_decoder` without merging repeated labels (TensorFlow 2's)."""
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width, top_paths, False)


# -- label helpers ---------------------------------------------------------------------------
def ctc_unique_labels(labels, name: Optional[str] = None):
    """For each row of the dense ``labels`` ``[batch, max_length]``: its distinct values in
    order of first appearance, padded with 0 to ``max_length`` (int64), and for each element
    the position of its value among them (int32), as TensorFlow's ``unique`` per row."""
    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")
        return list(_a_unique_rows(labels))


def _unique_rows_kernel(attrs):
    def kernel(labels):
        if labels.ndim != 2:
            raise InvalidArgumentError(None, None, f"labels must be 2-D, got {labels.shape}")
        values = np.zeros(labels.shape, dtype=np.int64)
        positions = np.zeros(labels.shape, dtype=np.int32)
        for b, row in enumerate(labels):
            seen: dict = {}
            for i, v in enumerate(row.tolist()):
                positions[b, i] = seen.setdefault(v, len(seen))
            values[b, : len(seen)] = list(seen)
        return values, positions

    return kernel


define_op(
    "CTCUniqueLabels",
    lambda op: [(_dtypes.int64, op.inputs[0].shape), (_dtypes.int32, op.inputs[0].shape)],
    _unique_rows_kernel,
)


def _a_unique_rows(labels: Tensor):
    if labels.shape.ndims not in (None, 2):
        raise ValueError(f"labels must be [batch, max_length], got shape {labels.shape}")
    return apply_op("CTCUniqueLabels", (labels,), {}, "unique").outputs


def collapse_repeated(labels, seq_length, name: Optional[str] = None):
    """Each row of ``labels`` (``[batch, max_length]``, the first ``seq_length`` entries valid)
    with runs of a repeated value merged into one, left-aligned and padded with 0 to the
    longest collapsed row: ``(collapsed, new_seq_length)``."""
    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        maxlen = _a.shape(labels)[1]
        label_mask = _a.concat(
            [
                _a.ones_like(labels[:, :1], dtype=_dtypes.bool),
                _m.not_equal(labels[:, 1:], labels[:, :-1]),
            ],
            axis=1,
        )
        seq_mask = _xa.sequence_mask(seq_length, maxlen=maxlen)
        label_mask = _m.logical_and(label_mask, seq_mask)
        new_seq_len = _m.reduce_sum(_m.cast(label_mask, _dtypes.int32), axis=1)
        new_maxlen = _m.reduce_max(new_seq_len)
        idx_mask = _xa.sequence_mask(new_seq_len, maxlen=new_maxlen)
        flat_labels = _a.reshape(labels, [-1])
        flat_label_mask = _a.reshape(label_mask, [-1])
        flat_idx_mask = _a.reshape(idx_mask, [-1])
        idx = _a.range(_a.shape(flat_idx_mask)[0])
        from .nd_index_ops import scatter_nd

        flat = scatter_nd(
            _a.expand_dims(_xa.boolean_mask(idx, flat_idx_mask), axis=1),
            _xa.boolean_mask(flat_labels, flat_label_mask),
            _a.shape(flat_idx_mask),
        )
        new_shape = _a.stack([_a.shape(labels)[0], new_maxlen])
        return _a.reshape(flat, new_shape), _m.cast(new_seq_len, seq_length.dtype)


# -- gradients -------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402


@RegisterGradient("CTCLoss")
def _ctc_loss_grad(op, grad_loss, _):
    gradient = _a.stop_gradient(op.outputs[1])
    return _m.multiply(_a.expand_dims(grad_loss, -1), gradient), None, None, None


for _type in ("CTCGreedyDecoder", "CTCBeamSearchDecoder", "CTCUniqueLabels"):
    NotDifferentiable(_type)


# -- edit distance ---------------------------------------------------------------------------
def _levenshtein(a: list, b: list) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _sequences(indices, values, shape) -> dict:
    """The sequences of a SparseTensor: its values grouped by all but the last index, in the
    order of the last."""
    groups: dict = {}
    order = np.lexsort(indices.T[::-1]) if len(indices) else []
    for i in order:
        groups.setdefault(tuple(int(v) for v in indices[i, :-1]), []).append(values[i])
    return groups


def _edit_distance_kernel(attrs):
    normalize = attrs["normalize"]

    def kernel(h_indices, h_values, h_shape, t_indices, t_values, t_shape):
        if len(h_shape) != len(t_shape) or len(h_shape) < 1:
            raise InvalidArgumentError(
                None,
                None,
                f"hypothesis and truth must have one rank, got {len(h_shape)} and {len(t_shape)}",
            )
        out_shape = np.maximum(h_shape[:-1], t_shape[:-1]).astype(np.int64)
        out = np.zeros(out_shape, dtype=np.float32)
        hypotheses = _sequences(h_indices, h_values, h_shape)
        truths = _sequences(t_indices, t_values, t_shape)
        for key in set(hypotheses) | set(truths):
            h, t = hypotheses.get(key, []), truths.get(key, [])
            distance = float(_levenshtein(h, t))
            if normalize:
                distance = distance / len(t) if t else (np.inf if h else 0.0)
            out[key] = distance
        return out

    return kernel


def _infer_edit_distance(op):
    h_values, t_values = op.inputs[1], op.inputs[4]
    if h_values.dtype is not t_values.dtype:
        raise TypeError(
            f"hypothesis and truth must have one dtype, got {h_values.dtype.name} and "
            f"{t_values.dtype.name}"
        )
    rank = op.inputs[2].shape.as_list()[0] if op.inputs[2].shape.ndims == 1 else None
    return [(_dtypes.float32, TensorShape(None if rank is None else [None] * (rank - 1)))]


define_op("EditDistance", _infer_edit_distance, _edit_distance_kernel)
NotDifferentiable("EditDistance")


def edit_distance(hypothesis, truth, normalize: bool = True, name: str = "edit_distance"):
    """The Levenshtein distance between the sequences of the SparseTensors ``hypothesis`` and
    ``truth`` (the values along their last dimension, for each index of the others): a
    float32 tensor of the larger of their leading shapes; with ``normalize`` divided by the
    truth's length (inf for an empty truth against a non-empty hypothesis, 0 for two empty
    sequences)."""
    from ..framework.sparse_tensor import SparseTensor, SparseTensorValue

    for what, value in (("Hypothesis", hypothesis), ("Truth", truth)):
        if not isinstance(value, (SparseTensor, SparseTensorValue)):
            raise TypeError(f"{what} must be a SparseTensor (at {_user_location()}).")
    graph = _m.graph_of((hypothesis.values, truth.values))
    with graph.as_default():
        inputs = []
        for sp in (hypothesis, truth):
            inputs += [
                convert_to_tensor(sp.indices, _dtypes.int64),
                convert_to_tensor(sp.values),
                convert_to_tensor(sp.dense_shape, _dtypes.int64),
            ]
        return apply_op("EditDistance", inputs, {"normalize": bool(normalize)}, name).outputs[0]

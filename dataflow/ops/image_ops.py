"""The box ops of ``tf.image``: non-max suppression (plain, soft, with overlaps, padded and
batched, combined over classes).

Each is an op with a numpy kernel following TensorFlow's kernel: candidates are taken by
descending score (ties by lower index), a candidate is dropped when its overlap with a box
already selected is above the threshold, and the IoU of boxes given by any two opposite
corners is computed in float32.  Their outputs are indices and selections, so no gradient
flows through them (as in TensorFlow).
"""

from __future__ import annotations

import heapq
from typing import Optional

import numpy as np

from .. import dtypes as _dtypes
from ..errors import InvalidArgumentError
from ..gradients import NotDifferentiable
from ..graph import Tensor, _user_location, convert_to_tensor, numpy_value_or_none
from ..op_registry import apply_op, define_op
from .math_ops import check_dtype, graph_of

_BOX_TYPES = frozenset({_dtypes.float16, _dtypes.float32})


def _fail(function: str, message: str, error=ValueError):
    raise error(f"{function} at {_user_location()}: {message}")


def _run_error(op_type: str, message: str) -> InvalidArgumentError:
    return InvalidArgumentError(None, None, f"{op_type}: {message}")


def _scalar_value(t: Tensor) -> Optional[int]:
    value = numpy_value_or_none(t)
    return None if value is None or value.ndim else int(value)


def _check_rank(op, t: Tensor, rank: int, what: str) -> None:
    if t.shape.ndims is not None and t.shape.ndims != rank:
        raise ValueError(f"{what} must be {rank}-D, got shape {t.shape}")


# -- IoU -------------------------------------------------------------------------------------------
def _corners(boxes: np.ndarray) -> tuple:
    """(ymin, xmin, ymax, xmax) of boxes given by any two opposite corners, in float32."""
    boxes = boxes.astype(np.float32)
    y1, x1, y2, x2 = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
    return np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)


def _iou_with(corners: tuple, i: int, others: np.ndarray) -> np.ndarray:
    """TensorFlow's IoU of box ``i`` with each box of ``others`` (indices): 0 where either box
    has no area."""
    ymin, xmin, ymax, xmax = corners
    area_i = (ymax[i] - ymin[i]) * (xmax[i] - xmin[i])
    area = (ymax[others] - ymin[others]) * (xmax[others] - xmin[others])
    height = np.maximum(np.minimum(ymax[i], ymax[others]) - np.maximum(ymin[i], ymin[others]), 0)
    width = np.maximum(np.minimum(xmax[i], xmax[others]) - np.maximum(xmin[i], xmin[others]), 0)
    inter = (height * width).astype(np.float32)
    with np.errstate(all="ignore"):
        iou = inter / (area_i + area - inter)
    return np.where((area_i <= 0) | (area <= 0), np.float32(0), iou).astype(np.float32)


# -- greedy (and soft) suppression -----------------------------------------------------------------
def _suppress(scores, similarity, max_output, threshold, score_threshold, sigma, dtype):
    """TensorFlow's ``DoNonMaxSuppressionOp``: the selected indices and their (soft-suppressed)
    scores.  ``similarity(i, selected)`` gives box ``i``'s overlaps with the boxes selected."""
    t = np.dtype(dtype).type
    scores = scores.astype(dtype)
    threshold, score_threshold, sigma = t(threshold), t(score_threshold), t(sigma)
    soft = sigma > 0
    scale = t(-0.5) / sigma if soft else t(0)
    # a heap of (-score, index, the number of selections already compared against)
    heap = [(-s, i, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(heap)
    selected: list = []
    selected_scores: list = []
    while len(selected) < max_output and heap:
        negative, index, begin = heapq.heappop(heap)
        original = score = t(-negative)
        hard = False
        if len(selected) > begin:
            overlaps = similarity(index, np.asarray(selected[begin:][::-1]))
            for overlap in overlaps:
                overlap = t(overlap)
                with np.errstate(all="ignore"):
                    weight = t(np.exp(scale * overlap * overlap))
                score = t(score * (weight if soft or overlap <= threshold else t(0)))
                if not soft and overlap > threshold:
                    hard = True
                    break
                if score <= score_threshold:
                    break
        if hard:
            continue
        if score == original:
            selected.append(index)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, index, len(selected)))
    return (
        np.asarray(selected, np.int32),
        np.asarray(selected_scores, dtype).reshape(-1),
    )


def _check_max_output(op_type: str, max_output) -> int:
    if np.ndim(max_output) != 0:
        raise _run_error(op_type, f"max_output_size must be 0-D, got shape {np.shape(max_output)}")
    if max_output < 0:
        raise _run_error(op_type, "output size must be non-negative")
    return int(max_output)


def _infer_nms(op):
    boxes, scores, max_output, iou, score_threshold, sigma = op.inputs
    check_dtype(boxes.dtype, _BOX_TYPES, "Input 'boxes' of 'NonMaxSuppressionV5'")
    if scores.dtype is not boxes.dtype:
        raise TypeError(f"scores ({scores.dtype.name}) must have the dtype of boxes")
    _check_rank(op, boxes, 2, "boxes")
    _check_rank(op, scores, 1, "scores")
    if boxes.shape.ndims == 2 and boxes.shape.as_list()[1] not in (4, None):
        raise ValueError(f"boxes must have 4 columns, got shape {boxes.shape}")
    for t, what in ((max_output, "max_output_size"), (iou, "iou_threshold")):
        _check_rank(op, t, 0, what)
    size = _scalar_value(max_output) if op.attrs["pad_to_max_output_size"] else None
    return [
        (_dtypes.int32, [size]),
        (boxes.dtype, [size]),
        (_dtypes.int32, []),
    ]


def _nms_kernel(attrs):
    pad = attrs["pad_to_max_output_size"]

    def nms(boxes, scores, max_output, iou_threshold, score_threshold, sigma):
        op_type = "NonMaxSuppressionV5"
        max_output = _check_max_output(op_type, max_output)
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise _run_error(op_type, f"boxes must be [num_boxes, 4], got shape {boxes.shape}")
        if scores.shape != (boxes.shape[0],):
            raise _run_error(
                op_type, f"scores has incompatible shape {scores.shape} for {len(boxes)} boxes"
            )
        if not 0 <= iou_threshold <= 1:
            raise _run_error(op_type, "iou_threshold must be in [0, 1]")
        if sigma < 0:
            raise _run_error(op_type, "soft_nms_sigma must be non-negative")
        corners = _corners(boxes)
        indices, kept = _suppress(
            scores,
            lambda i, others: _iou_with(corners, i, others),
            max_output,
            iou_threshold,
            score_threshold,
            sigma,
            boxes.dtype,
        )
        valid = np.int32(len(indices))
        if pad:
            indices = np.pad(indices, (0, max_output - len(indices)))
            kept = np.pad(kept, (0, max_output - len(kept)))
        return indices, kept, valid

    return nms


define_op("NonMaxSuppressionV5", _infer_nms, _nms_kernel)
NotDifferentiable("NonMaxSuppressionV5")


def _infer_nms_overlaps(op):
    overlaps, scores, max_output, threshold, score_threshold = op.inputs
    check_dtype(
        overlaps.dtype, {_dtypes.float32}, "Input 'overlaps' of 'NonMaxSuppressionWithOverlaps'"
    )
    _check_rank(op, overlaps, 2, "overlaps")
    _check_rank(op, scores, 1, "scores")
    return [(_dtypes.int32, [None])]


def _nms_overlaps_kernel(attrs):
    def nms_overlaps(overlaps, scores, max_output, threshold, score_threshold):
        op_type = "NonMaxSuppressionWithOverlaps"
        max_output = _check_max_output(op_type, max_output)
        if overlaps.ndim != 2 or overlaps.shape[0] != overlaps.shape[1]:
            raise _run_error(op_type, f"overlaps must be square, got shape {overlaps.shape}")
        if scores.shape != (overlaps.shape[0],):
            raise _run_error(op_type, f"scores has incompatible shape {scores.shape}")
        indices, _ = _suppress(
            scores,
            lambda i, others: overlaps[i, others],
            max_output,
            threshold,
            score_threshold,
            0.0,
            np.float32,
        )
        return indices

    return nms_overlaps


define_op("NonMaxSuppressionWithOverlaps", _infer_nms_overlaps, _nms_overlaps_kernel)
NotDifferentiable("NonMaxSuppressionWithOverlaps")


def _nms_inputs(function, boxes, scores, max_output_size, thresholds: dict):
    graph = graph_of([boxes, scores, max_output_size])
    boxes = convert_to_tensor(boxes, name="boxes")
    scores = convert_to_tensor(scores, name="scores")
    max_output_size = convert_to_tensor(
        max_output_size, dtype=_dtypes.int32, name="max_output_size"
    )
    converted = {}
    for key, value in thresholds.items():
        dtype = boxes.dtype if boxes.dtype in _BOX_TYPES else _dtypes.float32
        converted[key] = convert_to_tensor(value, dtype=dtype, name=key)
    return graph, boxes, scores, max_output_size, converted


def non_max_suppression(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    name: Optional[str] = None,
) -> Tensor:
    """The indices (int32) of at most ``max_output_size`` of ``boxes`` (``[n, 4]``, any two
    opposite corners), greedily by descending ``scores``, dropping each box whose IoU with one
    already selected is above ``iou_threshold``, and boxes scoring ``score_threshold`` or less."""
    indices, _ = non_max_suppression_with_scores(
        boxes, scores, max_output_size, iou_threshold, score_threshold, 0.0, name
    )
    return indices


def non_max_suppression_with_scores(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    soft_nms_sigma=0.0,
    name: Optional[str] = None,
) -> tuple:
    """`non_max_suppression` returning ``(indices, scores)``; with ``soft_nms_sigma > 0`` it is
    Soft-NMS (Bodla et al.): an overlapping box is not dropped but its score is multiplied by
    ``exp(-iou^2 / (2 sigma))``, and it is dropped once at or below ``score_threshold``."""
    graph, boxes, scores, max_output, thresholds = _nms_inputs(
        "non_max_suppression_with_scores",
        boxes,
        scores,
        max_output_size,
        {
            "iou_threshold": iou_threshold,
            "score_threshold": score_threshold,
            "soft_nms_sigma": soft_nms_sigma,
        },
    )
    with graph.as_default(), graph.name_scope(name or "non_max_suppression"):
        op = apply_op(
            "NonMaxSuppressionV5",
            (boxes, scores, max_output, *thresholds.values()),
            {"pad_to_max_output_size": False},
        )
        return op.outputs[0], op.outputs[1]


def non_max_suppression_with_overlaps(
    overlaps,
    scores,
    max_output_size,
    overlap_threshold=0.5,
    score_threshold=float("-inf"),
    name: Optional[str] = None,
) -> Tensor:
    """`non_max_suppression` with the pairwise overlaps given (``[n, n]``, float32) instead of
    boxes: a box is dropped when its overlap with one selected is above ``overlap_threshold``."""
    graph = graph_of([overlaps, scores, max_output_size])
    with graph.as_default(), graph.name_scope(name or "non_max_suppression_overlaps"):
        inputs = (
            convert_to_tensor(overlaps, name="overlaps"),
            convert_to_tensor(scores, name="scores"),
            convert_to_tensor(max_output_size, dtype=_dtypes.int32, name="max_output_size"),
            convert_to_tensor(overlap_threshold, dtype=_dtypes.float32, name="overlap_threshold"),
            convert_to_tensor(score_threshold, dtype=_dtypes.float32, name="score_threshold"),
        )
        return apply_op("NonMaxSuppressionWithOverlaps", inputs).outputs[0]


# -- padded, batched suppression (TensorFlow's tiled algorithm, greedily) -------------------------
def _infer_nms_padded(op):
    boxes, scores, max_output, iou, score_threshold = op.inputs
    check_dtype(
        boxes.dtype, _BOX_TYPES | {_dtypes.float64}, "Input 'boxes' of 'NonMaxSuppressionPadded'"
    )
    _check_rank(op, boxes, 3, "boxes")
    _check_rank(op, scores, 2, "scores")
    batch = boxes.shape.as_list()[0] if boxes.shape.ndims else None
    return [(_dtypes.int32, [batch, _scalar_value(max_output)]), (_dtypes.int32, [batch])]


def _nms_padded_kernel(attrs):
    sorted_input = attrs["sorted_input"]
    canonical = attrs["canonicalized_coordinates"]

    def nms_padded(boxes, scores, max_output, iou_threshold, score_threshold):
        op_type = "NonMaxSuppressionPadded"
        max_output = _check_max_output(op_type, max_output)
        batch, count = scores.shape
        boxes = boxes.astype(np.float32)
        scores = scores.astype(np.float32)
        threshold = np.float32(iou_threshold)
        if np.float32(score_threshold) != -np.inf:
            keep = scores > np.float32(score_threshold)
            scores = scores * keep
            boxes = boxes * keep[..., None]
        if not canonical and batch and count:
            # As TensorFlow: the first box tells which corner comes first, for all boxes.
            if not boxes[0, 0, 0] <= boxes[0, 0, 2]:
                boxes = boxes[..., [2, 1, 0, 3]]
            if not boxes[0, 0, 1] <= boxes[0, 0, 3]:
                boxes = boxes[..., [0, 3, 2, 1]]
        out = np.zeros((batch, max_output), np.int32)
        valid = np.zeros(batch, np.int32)
        for b in range(batch):
            order = np.arange(count) if sorted_input else np.argsort(-scores[b], kind="stable")
            ymin, xmin, ymax, xmax = (boxes[b, order, k] for k in range(4))
            area = (ymax - ymin) * (xmax - xmin)
            alive = np.ones(count, bool)
            chosen = []
            for k in range(count):
                if not alive[k]:
                    continue
                # a box suppresses the later ones with IoU >= the threshold (the union padded
                # by 1e-8, as TensorFlow's tiles); a box with no positive corner is not output
                if (boxes[b, order[k]] > 0).any():
                    chosen.append(order[k])
                    if len(chosen) == max_output:
                        break
                later = np.arange(k + 1, count)
                height = np.maximum(
                    np.minimum(ymax[k], ymax[later]) - np.maximum(ymin[k], ymin[later]), 0
                )
                width = np.maximum(
                    np.minimum(xmax[k], xmax[later]) - np.maximum(xmin[k], xmin[later]), 0
                )
                inter = height * width
                iou = inter / (area[k] + area[later] - inter + np.float32(1e-8))
                alive[later[iou >= threshold]] = False
            valid[b] = len(chosen)
            out[b, : len(chosen)] = chosen
        return out, valid

    return nms_padded


define_op("NonMaxSuppressionPadded", _infer_nms_padded, _nms_padded_kernel)
NotDifferentiable("NonMaxSuppressionPadded")


def non_max_suppression_padded(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    pad_to_max_output_size: bool = False,
    name: Optional[str] = None,
    sorted_input: bool = False,
    canonicalized_coordinates: bool = False,
    tile_size=512,
) -> tuple:
    """Non-max suppression of boxes ``[..., n, 4]`` with scores ``[..., n]``, as TensorFlow's
    padded (tiled) algorithm: ``(indices, num_valid)``.  A box is suppressed by an earlier one
    with IoU at or above ``iou_threshold``; boxes without a positive coordinate are not output.
    With ``pad_to_max_output_size`` the indices are ``[..., max_output_size]`` padded with 0 (a
    batch needs it); else the valid indices of the one set of boxes.  ``sorted_input`` says the
    scores are sorted already; ``canonicalized_coordinates`` that boxes are ``[ymin, xmin,
    ymax, xmax]`` (else the first box tells the order of all).  ``tile_size`` is the tiling of
    TensorFlow's algorithm, which does not change the result."""
    if int(tile_size) <= 0:
        _fail("non_max_suppression_padded", f"tile_size must be positive, got {tile_size}")
    graph = graph_of([boxes, scores, max_output_size])
    with graph.as_default(), graph.name_scope(name or "non_max_suppression_padded"):
        boxes = convert_to_tensor(boxes, name="boxes")
        scores = convert_to_tensor(scores, name="scores")
        rank = boxes.shape.ndims
        if rank is None or rank < 2:
            _fail(
                "non_max_suppression_padded",
                f"boxes must be [..., num_boxes, 4], got {boxes.shape}",
            )
        if not pad_to_max_output_size and rank > 2:
            _fail(
                "non_max_suppression_padded",
                f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for "
                "batched input",
            )
        from . import array_ops as _a

        max_output = convert_to_tensor(max_output_size, dtype=_dtypes.int32, name="max_output_size")
        batch_dims = _a.shape(boxes)[:-2]
        flat_boxes = _a.reshape(boxes, [-1, _a.shape(boxes)[-2], 4])
        flat_scores = _a.reshape(scores, _a.stack([-1, _a.shape(scores)[-1]]))
        op = apply_op(
            "NonMaxSuppressionPadded",
            (
                flat_boxes,
                flat_scores,
                max_output,
                convert_to_tensor(iou_threshold, dtype=_dtypes.float32, name="iou_threshold"),
                convert_to_tensor(score_threshold, dtype=_dtypes.float32, name="score_threshold"),
            ),
            {
                "sorted_input": bool(sorted_input),
                "canonicalized_coordinates": bool(canonicalized_coordinates),
            },
        )
        indices, valid = op.outputs
        num_valid = _a.reshape(valid, batch_dims)
        if not pad_to_max_output_size:
            return _a.slice(_a.reshape(indices, [-1]), [0], _a.reshape(valid, [1])), num_valid
        shape = _a.concat([batch_dims, _a.reshape(max_output, [1])], 0)
        indices = _a.reshape(indices, shape)
        known = _scalar_value(max_output)
        indices.set_shape(boxes.shape[:-2].concatenate([known]))
        return indices, num_valid


# -- combined (per class, batched) suppression -----------------------------------------------------
def _infer_combined(op):
    boxes, scores, per_class, total, iou, score_threshold = op.inputs
    check_dtype(boxes.dtype, {_dtypes.float32}, "Input 'boxes' of 'CombinedNonMaxSuppression'")
    check_dtype(scores.dtype, {_dtypes.float32}, "Input 'scores' of 'CombinedNonMaxSuppression'")
    _check_rank(op, boxes, 4, "boxes")
    _check_rank(op, scores, 3, "scores")
    batch = boxes.shape.as_list()[0] if boxes.shape.ndims else None
    size = _scalar_value(total)
    if op.attrs["pad_per_class"]:
        per = _scalar_value(per_class)
        classes = scores.shape.as_list()[2] if scores.shape.ndims else None
        size = None if None in (size, per, classes) else min(size, per * classes)
    return [
        (_dtypes.float32, [batch, size, 4]),
        (_dtypes.float32, [batch, size]),
        (_dtypes.float32, [batch, size]),
        (_dtypes.int32, [batch]),
    ]


def _combined_kernel(attrs):
    pad_per_class, clip = attrs["pad_per_class"], attrs["clip_boxes"]

    def combined(boxes, scores, per_class, total, iou_threshold, score_threshold):
        op_type = "CombinedNonMaxSuppression"
        per_class, total = int(per_class), int(total)
        if per_class <= 0 or total <= 0:
            raise _run_error(op_type, "max_output_size_per_class and max_total_size must be > 0")
        batch, count, q, _ = boxes.shape
        classes = scores.shape[2]
        if q not in (1, classes):
            raise _run_error(op_type, f"boxes' third dimension must be 1 or {classes}, got {q}")
        size_per_class = min(per_class, count)
        size = total
        if pad_per_class:
            size = min(total, per_class * classes)
        iou_threshold, score_threshold = np.float32(iou_threshold), np.float32(score_threshold)
        out_boxes = np.zeros((batch, size, 4), np.float32)
        out_scores = np.zeros((batch, size), np.float32)
        out_classes = np.zeros((batch, size), np.float32)
        valid = np.zeros(batch, np.int32)
        for b in range(batch):
            found = []  # (score, class, box)
            for c in range(classes):
                class_boxes = boxes[b, :, c if q > 1 else 0]
                corners = _corners(class_boxes)
                indices, kept = _suppress(
                    scores[b, :, c],
                    lambda i, others, corners=corners: _iou_with(corners, i, others),
                    size_per_class,
                    iou_threshold,
                    score_threshold,
                    0.0,
                    np.float32,
                )
                found += [(s, c, class_boxes[i]) for i, s in zip(indices, kept)]
            found.sort(key=lambda entry: -entry[0])
            found = found[: min(len(found), size)]
            valid[b] = len(found)
            for k, (s, c, box) in enumerate(found):
                out_boxes[b, k] = np.clip(box, 0, 1) if clip else box
                out_scores[b, k] = s
                out_classes[b, k] = c
        return out_boxes, out_scores, out_classes, valid

    return combined


define_op("CombinedNonMaxSuppression", _infer_combined, _combined_kernel)
NotDifferentiable("CombinedNonMaxSuppression")


def combined_non_max_suppression(
    boxes,
    scores,
    max_output_size_per_class,
    max_total_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    pad_per_class: bool = False,
    clip_boxes: bool = True,
    name: Optional[str] = None,
) -> tuple:
    """Greedy non-max suppression per class and batch: ``boxes`` ``[batch, n, q, 4]`` (q 1, or
    one box per class), ``scores`` ``[batch, n, classes]``.  Each class keeps at most
    ``max_output_size_per_class`` boxes; the best ``max_total_size`` of all classes are
    returned as ``(nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections)``, padded with
    zeros (to ``max_total_size``, or with ``pad_per_class`` to at most ``per_class * classes``);
    ``clip_boxes`` clips the boxes to [0, 1]."""
    graph = graph_of([boxes, scores, max_output_size_per_class, max_total_size])
    with graph.as_default(), graph.name_scope(name or "combined_non_max_suppression"):
        inputs = (
            convert_to_tensor(boxes, name="boxes"),
            convert_to_tensor(scores, name="scores"),
            convert_to_tensor(
                max_output_size_per_class, dtype=_dtypes.int32, name="max_output_size_per_class"
            ),
            convert_to_tensor(max_total_size, dtype=_dtypes.int32, name="max_total_size"),
            convert_to_tensor(iou_threshold, dtype=_dtypes.float32, name="iou_threshold"),
            convert_to_tensor(score_threshold, dtype=_dtypes.float32, name="score_threshold"),
        )
        attrs = {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)}
        return tuple(apply_op("CombinedNonMaxSuppression", inputs, attrs).outputs)

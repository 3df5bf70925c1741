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

from ..framework import dtypes as _dtypes
from ..framework.determinism import is_op_determinism_enabled
from ..framework.errors import InvalidArgumentError
from ..framework.gradient_registry import NotDifferentiable
from ..framework.graph import Tensor, _user_location, graph_to_build_in
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from . import array_ops as _a
from . import math_ops as _m
from . import slice_ops as _slices
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
        from . import math_ops as _m

        batch_dims = _a.shape(boxes)[:-2]
        count = _a.shape(boxes)[-2]
        batch = _m.reduce_prod(batch_dims)  # 1 for a single set of boxes
        flat_boxes = _a.reshape(boxes, _a.stack([batch, count, 4]))
        flat_scores = _a.reshape(scores, _a.stack([batch, count]))
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
            return _slices.slice(_a.reshape(indices, [-1]), [0], _a.reshape(valid, [1])), num_valid
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


# -- drawing boxes ---------------------------------------------------------------------------------
_DEFAULT_COLOURS = np.float32(
    [
        [1, 1, 0, 1],
        [0, 0, 1, 1],
        [1, 0, 0, 1],
        [0, 1, 0, 1],
        [0.5, 0, 0.5, 1],
        [0.5, 0.5, 0, 1],
        [0.5, 0, 0, 1],
        [0, 0, 0.5, 1],
        [0, 1, 1, 1],
        [1, 0, 1, 1],
    ]
)


def _infer_draw(op):
    images, boxes, colours = op.inputs
    check_dtype(images.dtype, _BOX_TYPES, "Input 'images' of 'DrawBoundingBoxesV2'")
    _check_rank(op, images, 4, "images")
    _check_rank(op, boxes, 3, "boxes")
    _check_rank(op, colours, 2, "colors")
    depth = images.shape.as_list()[3] if images.shape.ndims else None
    if depth not in (1, 3, 4, None):
        raise ValueError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    return [(images.dtype, images.shape)]


def _draw_kernel(attrs):
    def draw(images, boxes, colours):
        op_type = "DrawBoundingBoxesV2"
        batch, height, width, depth = images.shape
        if depth not in (1, 3, 4):
            raise _run_error(
                op_type, "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)"
            )
        if boxes.shape[0] != batch:
            raise _run_error(op_type, "The batch sizes should be the same")
        if boxes.shape[2] != 4:
            raise _run_error(op_type, "The size of the third dimension of the box must be 4")
        if colours.shape[1] < depth and colours.size:
            raise _run_error(op_type, "colors must have equal or more channels than the image")
        table = colours[:, :depth] if colours.size else _DEFAULT_COLOURS[:, :depth].copy()
        if not colours.size and depth == 1:
            table[:, 0] = 1
        canvas = images.copy()
        for b in range(batch):
            for k, box in enumerate(boxes[b].astype(np.float32)):
                colour = table[k % len(table)].astype(images.dtype)
                # float coordinates truncated toward zero, as TensorFlow's int64 conversion
                top = int(np.trunc(box[0] * np.float32(height - 1)))
                bottom = int(np.trunc(box[2] * np.float32(height - 1)))
                left = int(np.trunc(box[1] * np.float32(width - 1)))
                right = int(np.trunc(box[3] * np.float32(width - 1)))
                if top > bottom or left > right:
                    continue  # inverted: not drawn
                if top >= height or bottom < 0 or left >= width or right < 0:
                    continue  # outside the image
                rows = slice(max(top, 0), min(bottom, height - 1) + 1)
                cols = slice(max(left, 0), min(right, width - 1) + 1)
                if top >= 0:
                    canvas[b, top, cols] = colour
                if bottom < height:
                    canvas[b, bottom, cols] = colour
                if left >= 0:
                    canvas[b, rows, left] = colour
                if right < width:
                    canvas[b, rows, right] = colour
        return canvas

    return draw


define_op("DrawBoundingBoxesV2", _infer_draw, _draw_kernel)
NotDifferentiable("DrawBoundingBoxesV2")


def draw_bounding_boxes(images, boxes, name: Optional[str] = None, colors=None) -> Tensor:
    """``images`` (``[batch, h, w, depth]``, float32 or float16; depth 1, 3 or 4) with the
    outlines of ``boxes`` (``[batch, n, 4]``, normalized ``[y_min, x_min, y_max, x_max]``) drawn
    one pixel wide, in ``colors`` (``[k, >= depth]``, cycled) or TensorFlow's ten default
    colours.  Inverted boxes and boxes wholly outside the image are not drawn."""
    graph = graph_of([images, boxes, colors])
    with graph.as_default(), graph.name_scope(name or "DrawBoundingBoxes"):
        images = convert_to_tensor(images, name="images")
        boxes = convert_to_tensor(boxes, dtype=_dtypes.float32, name="boxes")
        if colors is None:
            colors = np.zeros((0, 4), np.float32)
        colors = convert_to_tensor(colors, dtype=_dtypes.float32, name="colors")
        return apply_op("DrawBoundingBoxesV2", (images, boxes, colors)).outputs[0]


# -- sample_distorted_bounding_box -----------------------------------------------------------------
def _random_crop_box(rng, width, height, min_area, max_area, aspect):
    """TensorFlow's ``GenerateRandomCrop``: (x, y, w, h) or None."""
    height_ = int(np.rint(np.float32(np.sqrt(np.float32(min_area) / aspect))))
    max_height = int(np.rint(np.float32(np.sqrt(np.float32(max_area) / aspect))))
    if np.rint(np.float32(max_height * aspect)) > width:
        max_height = int((width + 0.5 - 1e-7) / aspect)
        if np.rint(np.float32(max_height * aspect)) > width:
            max_height -= 1
    max_height = min(max_height, height)
    height_ = min(height_, max_height)
    if height_ < max_height:
        height_ += int(rng.integers(0, max_height - height_ + 1))
    width_ = int(np.rint(np.float32(height_ * aspect)))
    area = np.float32(width_ * height_)
    if area < min_area:
        height_ += 1
        width_ = int(np.rint(np.float32(height_ * aspect)))
        area = np.float32(width_ * height_)
    if area > max_area:
        height_ -= 1
        width_ = int(np.rint(np.float32(height_ * aspect)))
        area = np.float32(width_ * height_)
    if area < min_area or area > max_area or width_ > width or height_ > height:
        return None
    if width_ <= 0 or height_ <= 0:
        return None
    y = int(rng.integers(0, height - height_)) if height_ < height else 0
    x = int(rng.integers(0, width - width_)) if width_ < width else 0
    return x, y, width_, height_


def _covers_an_object(crop, boxes, min_covered) -> bool:
    x, y, w, h = crop
    for x0, y0, x1, y1 in boxes:
        area = (x1 - x0) * (y1 - y0)
        if area <= 0:
            continue
        inter_w = min(x + w, x1) - max(x, x0)
        inter_h = min(y + h, y1) - max(y, y0)
        inter = inter_w * inter_h if inter_w > 0 and inter_h > 0 else 0
        if np.float32(inter) / np.float32(area) >= min_covered:
            return True
    return False


def _infer_distort(op):
    image_size, boxes, min_covered = op.inputs
    check_dtype(
        image_size.dtype, _INT_SIZE_TYPES, "Input 'image_size' of 'SampleDistortedBoundingBoxV2'"
    )
    _check_rank(op, image_size, 1, "image_size")
    _check_rank(op, boxes, 3, "bounding_boxes")
    return [
        (image_size.dtype, [3]),
        (image_size.dtype, [3]),
        (_dtypes.float32, [1, 1, 4]),
    ]


_INT_SIZE_TYPES = frozenset(
    {_dtypes.uint8, _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64}
)


def _distort_kernel(attrs):
    aspect_low, aspect_high = attrs["aspect_ratio_range"]
    area_low, area_high = attrs["area_range"]
    attempts, whole_image = attrs["max_attempts"], attrs["use_image_if_no_bounding_boxes"]

    def sample(context, image_size, boxes, min_covered):
        op_type = "SampleDistortedBoundingBoxV2"
        if image_size.shape != (3,):
            raise _run_error(op_type, f"image_size must be 1-D with 3 elements, got {image_size}")
        height, width = int(image_size[0]), int(image_size[1])
        if height <= 0 or width <= 0:
            raise _run_error(op_type, f"image height and width must be positive, got {image_size}")
        boxes = boxes.reshape(-1, 4).astype(np.float32)
        if ((boxes < 0) | (boxes > 1)).any():
            raise _run_error(op_type, "All bounding box coordinates must be in [0.0, 1.0]")
        if (boxes[:, 0] > boxes[:, 2]).any() or (boxes[:, 1] > boxes[:, 3]).any():
            raise _run_error(op_type, "Bounding boxes must have min <= max")
        rects = [
            (int(x0 * np.float32(width)), int(y0 * np.float32(height)))
            + (int(x1 * np.float32(width)), int(y1 * np.float32(height)))
            for y0, x0, y1, x1 in boxes
        ]
        if not rects:
            if not whole_image:
                raise _run_error(
                    op_type,
                    "No bounding boxes provided as input. One must enable "
                    "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.",
                )
            rects = [(0, 0, width, height)]
        rng = context.random_generator(attrs["stream"], attrs["seed"], attrs["seed2"])
        min_area = np.float32(area_low) * np.float32(height) * np.float32(width)
        max_area = np.float32(area_high) * np.float32(height) * np.float32(width)
        crop = None
        for _ in range(attempts):
            aspect = np.float32(rng.random() * (aspect_high - aspect_low) + aspect_low)
            candidate = _random_crop_box(rng, width, height, min_area, max_area, aspect)
            if candidate is not None and _covers_an_object(candidate, rects, float(min_covered)):
                crop = candidate
                break
        x, y, w, h = crop if crop is not None else (0, 0, width, height)
        dtype = image_size.dtype
        box = np.float32([y / height, x / width, (y + h) / height, (x + w) / width])
        return (
            np.array([y, x, 0], dtype),
            np.array([h, w, -1], dtype),
            box.reshape(1, 1, 4),
        )

    return sample


define_op(
    "SampleDistortedBoundingBoxV2",
    _infer_distort,
    _distort_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)
NotDifferentiable("SampleDistortedBoundingBoxV2")


def sample_distorted_bounding_box(
    image_size,
    bounding_boxes,
    seed=None,
    seed2=None,
    min_object_covered=0.1,
    aspect_ratio_range=None,
    area_range=None,
    max_attempts=None,
    use_image_if_no_bounding_boxes=None,
    name: Optional[str] = None,
) -> tuple:
    """A random crop of an image of ``image_size`` (``[height, width, channels]``) for data
    augmentation, as TensorFlow's: ``(begin, size, bboxes)`` for `tf.slice` and for drawing.
    Up to ``max_attempts`` (100) crops of an aspect ratio in ``aspect_ratio_range``
    ([0.75, 1.33]) and an area fraction in ``area_range`` ([0.05, 1]) are drawn; the first
    covering at least ``min_object_covered`` of one of ``bounding_boxes`` (``[batch, n, 4]``,
    normalized) is taken, else the whole image.  ``seed`` and ``seed2`` are the op's seeds (both
    0: different draws in every Session), as TensorFlow's attributes."""
    aspect = [0.75, 1.33] if aspect_ratio_range is None else [float(v) for v in aspect_ratio_range]
    area = [0.05, 1.0] if area_range is None else [float(v) for v in area_range]
    attempts = 100 if max_attempts is None else int(max_attempts)
    function = "sample_distorted_bounding_box"
    if len(aspect) != 2 or not 0 < aspect[0] <= aspect[1]:
        _fail(function, f"aspect_ratio_range must be 2 positive increasing floats, got {aspect}")
    if len(area) != 2 or not 0 < area[0] <= area[1] <= 1:
        _fail(function, f"area_range must be 2 increasing floats in (0, 1], got {area}")
    if attempts <= 0:
        _fail(function, f"max_attempts must be positive, got {attempts}")
    if not seed and not seed2 and is_op_determinism_enabled():
        _fail(
            function,
            '"seed" or "seed2" must be non-zero when determinism is enabled. Please pass in a '
            f'non-zero seed, e.g. by passing "seed=1". Got seed={seed} and seed2={seed2}',
        )
    graph = graph_of([image_size, bounding_boxes, min_object_covered])
    with graph.as_default(), graph.name_scope(name or "sample_distorted_bounding_box"):
        image_size = convert_to_tensor(image_size, name="image_size")
        boxes = convert_to_tensor(bounding_boxes, dtype=_dtypes.float32, name="bounding_boxes")
        covered = convert_to_tensor(
            min_object_covered, dtype=_dtypes.float32, name="min_object_covered"
        )
        # As TensorFlow: the op's own seed attributes, not combined with the graph's seed.
        attrs = {
            "seed": int(seed or 0),
            "seed2": int(seed2 or 0),
            "aspect_ratio_range": aspect,
            "area_range": area,
            "max_attempts": attempts,
            "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes),
        }
        op = apply_op("SampleDistortedBoundingBoxV2", (image_size, boxes, covered), attrs)
        return tuple(op.outputs)


# -- extract_glimpse -------------------------------------------------------------------------------
def _infer_glimpse(op):
    images, size, offsets = op.inputs
    check_dtype(images.dtype, {_dtypes.float32}, "Input 'input' of 'ExtractGlimpse'")
    _check_rank(op, images, 4, "input")
    _check_rank(op, offsets, 2, "offsets")
    value = numpy_value_or_none(size)
    height, width = (None, None) if value is None else (int(value[0]), int(value[1]))
    dims = images.shape.as_list() if images.shape.ndims else [None] * 4
    return [(_dtypes.float32, [dims[0], height, width, dims[3]])]


def _glimpse_kernel(attrs):
    centered, normalized = attrs["centered"], attrs["normalized"]
    noise = attrs["noise"]

    def glimpse(context, images, size, offsets):
        op_type = "ExtractGlimpse"
        batch, in_height, in_width, depth = images.shape
        if size.shape != (2,):
            raise _run_error(op_type, f"size must be a vector of 2 elements, got {size.tolist()}")
        height, width = int(size[0]), int(size[1])
        if offsets.shape != (batch, 2):
            raise _run_error(op_type, f"offsets must be [{batch}, 2], got shape {offsets.shape}")
        rng = None
        out = np.zeros((batch, height, width, depth), np.float32)
        for i in range(batch):
            y, x = np.float32(offsets[i, 0]), np.float32(offsets[i, 1])
            if normalized:
                x, y = x * np.float32(in_width), y * np.float32(in_height)
            if centered:
                x = x / np.float32(2) + np.float32(in_width / 2.0)
                y = y / np.float32(2) + np.float32(in_height / 2.0)
            x -= np.float32(width / 2.0)
            y -= np.float32(height / 2.0)
            left, top = int(x), int(y)  # truncated toward zero, as TensorFlow
            image = images[i]
            if left < 0 or top < 0 or left + width >= in_width or top + height >= in_height:
                # a glimpse reaching out of the image starts as noise
                if noise == "uniform":
                    if rng is None:
                        rng = context.random_generator(attrs["stream"], 0, 0)
                    low, high = image.min(), image.max()
                    out[i] = rng.random((height, width, depth), np.float32) * (high - low) + low
                elif noise == "gaussian":
                    if rng is None:
                        rng = context.random_generator(attrs["stream"], 0, 0)
                    mean = image.mean(axis=(0, 1))
                    std = image.std(axis=(0, 1))
                    out[i] = rng.standard_normal((height, width, depth)) * std + mean
            rows = np.arange(height) + top
            cols = np.arange(width) + left
            row_in = (rows >= 0) & (rows < in_height)
            col_in = (cols >= 0) & (cols < in_width)
            out[i][np.ix_(row_in, col_in)] = image[np.ix_(rows[row_in], cols[col_in])]
        return out

    return glimpse


define_op(
    "ExtractGlimpse",
    _infer_glimpse,
    _glimpse_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)
NotDifferentiable("ExtractGlimpse")


def extract_glimpse(
    input,  # noqa: A002 - TensorFlow's name
    size,
    offsets,
    centered: bool = True,
    normalized: bool = True,
    uniform_noise: bool = True,
    name: Optional[str] = None,
) -> Tensor:
    """A ``size = [height, width]`` window of each image of ``input`` (``[batch, h, w, c]``,
    float32) at ``offsets`` (``[batch, 2]``, ``(y, x)`` of the window's centre: normalized to
    [-1, 1] when ``centered``, to [0, 1] when only ``normalized``, else pixels from the top left),
    as TF1's ``ExtractGlimpse``.  A window reaching out of the image is filled outside with
    uniform noise between the image's minimum and maximum (``uniform_noise``), else with
    Gaussian noise of each channel's mean and deviation."""
    graph = graph_of([input, size, offsets])
    with graph.as_default(), graph.name_scope(name or "ExtractGlimpse"):
        inputs = (
            convert_to_tensor(input, dtype=_dtypes.float32, name="input"),
            convert_to_tensor(size, dtype=_dtypes.int32, name="size"),
            convert_to_tensor(offsets, dtype=_dtypes.float32, name="offsets"),
        )
        attrs = {
            "centered": bool(centered),
            "normalized": bool(normalized),
            "noise": "uniform" if uniform_noise else "gaussian",
        }
        return apply_op("ExtractGlimpse", inputs, attrs).outputs[0]


# -- converting between the dtypes of images -------------------------------------------------------
def convert_image_dtype(image, dtype, saturate: bool = False, name: Optional[str] = None) -> Tensor:
    """``image`` in ``dtype``, rescaled between the ranges the dtypes stand for: floats in
    [0, 1], integers in [0, max].  Floats to integers scale by ``max + 0.5`` and truncate, as
    TensorFlow; ``saturate`` clips first."""
    image = convert_to_tensor(image, name="image")
    dtype = _dtypes.as_dtype(dtype)
    source = image.dtype
    if dtype not in _m.NUMERIC_TYPES or source not in _m.NUMERIC_TYPES:
        raise TypeError(
            f"convert_image_dtype at {_user_location()}: cannot convert {source.name} to "
            f"{dtype.name}"
        )
    if source is dtype:
        return _a.identity(image, name=name)
    graph = graph_to_build_in(image.graph)
    with graph.as_default(), graph.name_scope(name or "convert_image"):
        source_int = source in _m.INT_TYPES
        target_int = dtype in _m.INT_TYPES
        if source_int and target_int:
            source_max = np.iinfo(source.as_numpy_dtype).max
            target_max = np.iinfo(dtype.as_numpy_dtype).max
            if source_max > target_max:
                scale = (source_max + 1) // (target_max + 1)
                return _m.cast(_m.floordiv(image, scale), dtype)
            scale = (target_max + 1) // (source_max + 1)
            return _m.multiply(_m.cast(image, dtype), scale)
        if not source_int and not target_int:
            return _m.cast(image, dtype)
        if source_int:
            scale = 1.0 / np.iinfo(source.as_numpy_dtype).max
            return _m.multiply(_m.cast(image, dtype), scale)
        scale = np.iinfo(dtype.as_numpy_dtype).max + 0.5
        if saturate:
            image = _m.clip_by_value(image, 0.0, 1.0)
        return _m.cast(_m.multiply(image, scale), dtype)

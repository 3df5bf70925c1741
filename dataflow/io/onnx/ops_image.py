"""ONNX's image ops: the resampling ops ``Resize`` (and the older ``Upsample``) and
``GridSample``, built from gathers, and ``NonMaxSuppression``, built from dataflow's per-class
non-max suppression.

Role: the converters of the image family (see `converters` for the contract).  ONNX defines
resizing as separable: each resized axis is interpolated on its own, output place ``y`` reading
the input around the source coordinate the coordinate transformation mode gives it.  Each axis
here is one gather per tap (1 for nearest, 2 for linear, 4 for cubic) weighted and summed, with
the indices clamped to the input (ONNX's edge padding); sizes and scales may be known at import
or only at run time.

``GridSample`` reads each output place at the coordinates its grid gives (normalized to
[-1, 1], the last spatial dim first), with nearest, linear or cubic taps on every spatial dim
and the zeros, border or reflection padding of ONNX's definition: one ``gather_nd`` per
combination of taps.

Invariants: Resize's coordinates and weights are computed in float64 and GridSample's in
float32, as ONNX's reference does; antialiasing is refused with an error naming the node.
"""

from __future__ import annotations

import itertools

from ...framework import dtypes
from ...ops import (
    array_ops,
    extra_array_ops,
    extra_math_ops,
    gather_ops,
    image_ops,
    math_ops,
    nd_index_ops,
    reduction_ops,
    selection_ops,
)
from ...ops.constant_op import constant
from .converters import NodeContext, converts, normalize_axis, rank_of

_F64 = dtypes.float64


def _f64(value):
    return constant(value, dtype=_F64)


def _source_coordinates(ctx, mode: str, out_places, scale, in_len, out_len, roi_start, roi_end):
    """The source coordinate of each output place (float64), for ONNX's
    ``coordinate_transformation_mode``; and, for tf_crop_and_resize, where it is outside."""
    half = _f64(0.5)
    scaled_len = math_ops.multiply(scale, in_len)  # ONNX's float "output_width"
    one_place = math_ops.equal(scaled_len, _f64(1.0))
    outside = None
    if mode == "half_pixel":
        x = math_ops.subtract(math_ops.truediv(math_ops.add(out_places, half), scale), half)
    elif mode == "half_pixel_symmetric":
        adjustment = math_ops.truediv(out_len, scaled_len)
        offset = math_ops.multiply(
            math_ops.truediv(in_len, _f64(2.0)), math_ops.subtract(_f64(1.0), adjustment)
        )
        x = math_ops.add(
            offset,
            math_ops.subtract(math_ops.truediv(math_ops.add(out_places, half), scale), half),
        )
    elif mode == "pytorch_half_pixel":
        x = math_ops.subtract(math_ops.truediv(math_ops.add(out_places, half), scale), half)
        x = selection_ops.where_v2(one_place, array_ops.fill(array_ops.shape(x), _f64(-0.5)), x)
    elif mode == "align_corners":
        stretch = math_ops.truediv(
            math_ops.subtract(in_len, _f64(1.0)), math_ops.subtract(scaled_len, _f64(1.0))
        )
        x = selection_ops.where_v2(
            one_place, array_ops.zeros_like(out_places), math_ops.multiply(out_places, stretch)
        )
    elif mode == "asymmetric":
        x = math_ops.truediv(out_places, scale)
    elif mode == "tf_crop_and_resize":
        last = math_ops.subtract(in_len, _f64(1.0))
        width = math_ops.multiply(math_ops.subtract(roi_end, roi_start), last)
        spread = math_ops.multiply(
            out_places, math_ops.truediv(width, math_ops.subtract(scaled_len, _f64(1.0)))
        )
        middle = array_ops.fill(array_ops.shape(out_places), math_ops.truediv(width, _f64(2.0)))
        x = selection_ops.where_v2(one_place, middle, spread)
        x = math_ops.add(x, math_ops.multiply(roi_start, last))
        outside = math_ops.logical_or(math_ops.less(x, _f64(0.0)), math_ops.greater(x, last))
    else:
        raise ctx.error(f"coordinate_transformation_mode {mode!r} is not supported")
    return x, outside


def _cubic_weights(ratio, a: float):
    """The four cubic-convolution weights of ONNX's Resize for the fraction ``ratio``."""
    a_ = _f64(a)

    def far(t):  # |t| in [1, 2)
        return math_ops.subtract(
            math_ops.multiply(
                math_ops.add(
                    math_ops.multiply(math_ops.subtract(math_ops.multiply(a_, t), _f64(5 * a)), t),
                    _f64(8 * a),
                ),
                t,
            ),
            _f64(4 * a),
        )

    def near(t):  # |t| in [0, 1)
        return math_ops.add(
            math_ops.multiply(
                math_ops.multiply(
                    math_ops.subtract(math_ops.multiply(_f64(a + 2), t), _f64(a + 3)), t
                ),
                t,
            ),
            _f64(1.0),
        )

    rest = math_ops.subtract(_f64(1.0), ratio)
    return [
        far(math_ops.add(ratio, _f64(1.0))),
        near(ratio),
        near(rest),
        far(math_ops.add(rest, _f64(1.0))),
    ]


def _resize_axis(ctx, x, axis: int, rank: int, scale, out_len, options: dict, roi):
    """``x`` resized along ``axis`` to ``out_len`` places (int64) with scale ``scale``."""
    in_len_int = array_ops.shape(x, out_type=dtypes.int64)[axis]
    in_len = selection_ops.cast(in_len_int, _F64)
    out_places = selection_ops.cast(array_ops.range(out_len, dtype=dtypes.int64), _F64)
    roi_start, roi_end = roi if roi is not None else (None, None)
    source, outside = _source_coordinates(
        ctx,
        options["coordinate_transformation_mode"],
        out_places,
        scale,
        in_len,
        selection_ops.cast(out_len, _F64),
        roi_start,
        roi_end,
    )
    last = math_ops.subtract(in_len_int, constant(1, dtype=dtypes.int64))
    zero = constant(0, dtype=dtypes.int64)

    def clamp(index):
        return math_ops.minimum(math_ops.maximum(index, zero), last)

    def along_axis(vector):
        return array_ops.reshape(vector, [-1] + [1] * (rank - 1 - axis))

    mode = options["mode"]
    if mode == "nearest":
        rounding = options["nearest_mode"]
        if rounding == "round_prefer_floor":
            chosen = math_ops.ceil(math_ops.subtract(source, _f64(0.5)))
        elif rounding == "round_prefer_ceil":
            chosen = math_ops.floor(math_ops.add(source, _f64(0.5)))
        elif rounding == "floor":
            chosen = math_ops.floor(source)
        elif rounding == "ceil":
            chosen = math_ops.ceil(source)
        else:
            raise ctx.error(f"nearest_mode {rounding!r} is not supported")
        result = gather_ops.gather(x, clamp(selection_ops.cast(chosen, dtypes.int64)), axis=axis)
    else:
        # The taps left of the source coordinate: base is the last place strictly before it
        # (so that the fraction is in (0, 1], as ONNX's reference takes it).
        base = math_ops.subtract(math_ops.ceil(source), _f64(1.0))
        ratio = math_ops.subtract(source, base)
        base = selection_ops.cast(base, dtypes.int64)
        if mode == "linear":
            offsets, weights = [0, 1], [math_ops.subtract(_f64(1.0), ratio), ratio]
        elif mode == "cubic":
            offsets, weights = [-1, 0, 1, 2], _cubic_weights(ratio, options["cubic_coeff_a"])
        else:
            raise ctx.error(f"mode {mode!r} is not one of nearest, linear, cubic")
        indices = [math_ops.add(base, constant(o, dtype=dtypes.int64)) for o in offsets]
        if options["exclude_outside"]:
            inside = [
                selection_ops.cast(
                    math_ops.logical_and(
                        math_ops.greater_equal(i, zero), math_ops.less_equal(i, last)
                    ),
                    _F64,
                )
                for i in indices
            ]
            weights = [math_ops.multiply(w, m) for w, m in zip(weights, inside)]
            total = weights[0]
            for w in weights[1:]:
                total = math_ops.add(total, w)
            weights = [math_ops.truediv(w, total) for w in weights]
        compute = x.dtype if x.dtype.is_floating else _F64
        result = None
        for index, weight in zip(indices, weights):
            taken = selection_ops.cast(gather_ops.gather(x, clamp(index), axis=axis), compute)
            term = math_ops.multiply(taken, along_axis(selection_ops.cast(weight, compute)))
            result = term if result is None else math_ops.add(result, term)
        if compute != x.dtype:
            result = selection_ops.cast(extra_math_ops.round(result), x.dtype)
    if outside is not None:
        fill = constant(options["extrapolation_value"], dtype=x.dtype)
        result = selection_ops.where_v2(along_axis(outside), fill, result)
    return result


def _resize(ctx: NodeContext, x, scales, sizes, roi, options: dict):
    """``x`` resized on each axis whose scale (float64 vector) or size (int64 vector) is given."""
    rank = rank_of(ctx, x)
    axes = [normalize_axis(ctx, a, rank) for a in options.get("axes") or range(rank)]
    in_dims = selection_ops.cast(array_ops.shape(x, out_type=dtypes.int64), _F64)
    in_on_axes = gather_ops.gather(in_dims, constant(axes, dtype=dtypes.int64))
    if sizes is not None:
        wanted = selection_ops.cast(sizes, _F64)
        scales = math_ops.truediv(wanted, in_on_axes)
        policy = options["keep_aspect_ratio_policy"]
        if policy in ("not_larger", "not_smaller"):
            pick = reduction_ops.reduce_min if policy == "not_larger" else reduction_ops.reduce_max
            common = pick(scales)
            scales = array_ops.fill(array_ops.shape(scales), common)
            # round half away from zero is what ONNX's reference does with sizes here
            sizes = selection_ops.cast(
                math_ops.floor(math_ops.add(math_ops.multiply(in_on_axes, common), _f64(0.5))),
                dtypes.int64,
            )
        elif policy != "stretch":
            raise ctx.error(f"keep_aspect_ratio_policy {policy!r} is not supported")
        out_lens = selection_ops.cast(sizes, dtypes.int64)
    else:
        scales = selection_ops.cast(scales, _F64)
        spans = in_on_axes
        if roi is not None and options["coordinate_transformation_mode"] == "tf_crop_and_resize":
            count = len(axes)
            spans = math_ops.multiply(spans, math_ops.subtract(roi[count:], roi[:count]))
        out_lens = selection_ops.cast(
            math_ops.floor(math_ops.multiply(spans, scales)), dtypes.int64
        )
    count = len(axes)
    for position, axis in enumerate(axes):
        axis_roi = None
        if roi is not None:
            axis_roi = (roi[position], roi[position + count])
        x = _resize_axis(
            ctx, x, axis, rank, scales[position], out_lens[position], options, axis_roi
        )
    return x


def _options(ctx: NodeContext, **defaults) -> dict:
    names = (
        "mode",
        "coordinate_transformation_mode",
        "nearest_mode",
        "cubic_coeff_a",
        "exclude_outside",
        "extrapolation_value",
        "keep_aspect_ratio_policy",
        "axes",
    )
    base = {
        "mode": "nearest",
        "coordinate_transformation_mode": "half_pixel",
        "nearest_mode": "round_prefer_floor",
        "cubic_coeff_a": -0.75,
        "exclude_outside": 0,
        "extrapolation_value": 0.0,
        "keep_aspect_ratio_policy": "stretch",
        "axes": None,
    }
    base.update(defaults)
    return {name: ctx.attr(name, base[name]) for name in names}


@converts("Resize")
def _resize_op(ctx: NodeContext):
    if ctx.attr("antialias", 0):
        raise ctx.error("antialias is not supported")
    x = ctx.required_input(0)
    if ctx.opset < 11:  # Resize-10: (X, scales), asymmetric coordinates
        options = _options(ctx, coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        options["coordinate_transformation_mode"] = "asymmetric"
        return _resize(ctx, x, ctx.required_input(1), None, None, options)
    roi, scales, sizes = ctx.input(1), ctx.input(2), ctx.input(3)
    if scales is not None and scales.shape.num_elements() == 0:
        scales = None
    if sizes is not None and sizes.shape.num_elements() == 0:
        sizes = None
    if scales is None and sizes is None:
        raise ctx.error("one of scales and sizes is required")
    options = _options(ctx)
    if roi is not None and roi.shape.num_elements() != 0:
        roi = selection_ops.cast(roi, _F64)
    else:
        roi = None
    return _resize(ctx, x, scales, sizes if scales is None else None, roi, options)


@converts("Upsample")
def _upsample(ctx: NodeContext):
    x = ctx.required_input(0)
    options = _options(ctx, coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    options["coordinate_transformation_mode"] = "asymmetric"
    if ctx.input(1) is not None:
        scales = ctx.input(1)
    else:
        scales = constant(ctx.attr("scales"), dtype=dtypes.float32)
    return _resize(ctx, x, scales, None, None, options)


# -- GridSample ---------------------------------------------------------------------------------


def _reflect(x, low: float, high: float):
    """``x`` reflected into ``[low, high]`` by the borders, as many times as it takes."""
    span = _f32(high - low)
    low_t, high_t = _f32(low), _f32(high)
    below = math_ops.subtract(low_t, x)
    above = math_ops.subtract(x, high_t)
    distance = math_ops.maximum(below, above)
    folds = math_ops.floor(math_ops.truediv(distance, span))
    rest = math_ops.subtract(distance, math_ops.multiply(folds, span))
    even = math_ops.equal(extra_math_ops.floormod(folds, _f32(2.0)), _f32(0.0))
    from_below = selection_ops.where_v2(
        even, math_ops.add(low_t, rest), math_ops.subtract(high_t, rest)
    )
    from_above = selection_ops.where_v2(
        even, math_ops.subtract(high_t, rest), math_ops.add(low_t, rest)
    )
    reflected = selection_ops.where_v2(math_ops.less(x, low_t), from_below, from_above)
    inside = math_ops.logical_and(math_ops.greater_equal(x, low_t), math_ops.less_equal(x, high_t))
    return selection_ops.where_v2(inside, x, reflected)


def _f32(value):
    return constant(value, dtype=dtypes.float32)


def _grid_taps(ctx, coordinate, length: int, options: dict):
    """The taps of one spatial dim: ``(index, weight, valid)`` tensors per tap, for the
    source coordinates ``coordinate`` (float32, already denormalized)."""
    padding, mode, aligned = options["padding_mode"], options["mode"], options["align_corners"]
    low, high = (0.0, length - 1.0) if aligned else (-0.5, length - 0.5)
    if mode == "nearest":
        coordinate = extra_math_ops.rint(coordinate)
    outside = math_ops.logical_or(
        math_ops.less(coordinate, _f32(low)), math_ops.greater(coordinate, _f32(high))
    )
    if padding == "border":
        clamped = math_ops.minimum(math_ops.maximum(coordinate, _f32(0.0)), _f32(length - 1.0))
        coordinate = selection_ops.where_v2(outside, clamped, coordinate)
    elif padding == "reflection":
        coordinate = _reflect(coordinate, low, high)
    elif padding != "zeros":
        raise ctx.error(f"padding_mode {padding!r} is not zeros, border or reflection")

    def tap(index_float):
        """A tap at an integer position: its index into the input, and whether it counts."""
        if padding == "reflection":
            index_float = _reflect(index_float, low, high)
        index = selection_ops.cast(index_float, dtypes.int64)  # toward zero, as C's int()
        inside = math_ops.logical_and(
            math_ops.greater_equal(index, constant(0, dtype=dtypes.int64)),
            math_ops.less(index, constant(length, dtype=dtypes.int64)),
        )
        clamped = math_ops.minimum(
            math_ops.maximum(index, constant(0, dtype=dtypes.int64)),
            constant(length - 1, dtype=dtypes.int64),
        )
        valid = inside if padding == "zeros" else None
        return clamped, valid

    if mode == "nearest":
        index, valid = tap(coordinate)
        return [(index, None, valid)]
    base = math_ops.floor(coordinate)
    fraction = math_ops.subtract(coordinate, base)
    if mode == "linear":
        offsets = [0.0, 1.0]
        weights = [math_ops.subtract(_f32(1.0), fraction), fraction]
    elif mode == "cubic":
        offsets = [-1.0, 0.0, 1.0, 2.0]
        weights = [
            selection_ops.cast(w, dtypes.float32)
            for w in _cubic_weights(selection_ops.cast(fraction, _F64), -0.75)
        ]
    else:
        raise ctx.error(f"mode {mode!r} is not nearest, linear or cubic")
    taps = []
    for offset, weight in zip(offsets, weights):
        index, valid = tap(math_ops.add(base, _f32(offset)))
        taps.append((index, weight, valid))
    return taps


@converts("GridSample")
def _grid_sample(ctx: NodeContext):
    x, grid = ctx.required_input(0), ctx.required_input(1)
    rank = rank_of(ctx, x)
    spatial = rank - 2
    dims = x.shape.as_list()[2:]
    if any(d is None for d in dims):
        raise ctx.error("the input's spatial shape must be known at import")
    mode = ctx.attr("mode", "linear")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    options = {
        "mode": mode,
        "padding_mode": ctx.attr("padding_mode", "zeros"),
        "align_corners": bool(ctx.attr("align_corners", 0)),
    }
    grid = selection_ops.cast(grid, dtypes.float32)
    per_dim = []
    for i, length in enumerate(dims):
        normalized = grid[..., spatial - 1 - i]  # the grid lists the last dim first
        one = _f32(1.0)
        if options["align_corners"]:
            coordinate = math_ops.multiply(
                math_ops.truediv(math_ops.add(normalized, one), _f32(2.0)), _f32(length - 1.0)
            )
        else:
            coordinate = math_ops.truediv(
                math_ops.subtract(
                    math_ops.multiply(math_ops.add(normalized, one), _f32(length)), one
                ),
                _f32(2.0),
            )
        per_dim.append(_grid_taps(ctx, coordinate, length, options))
    channels_last = array_ops.transpose(x, [0] + list(range(2, rank)) + [1])
    out_shape = array_ops.shape(grid, out_type=dtypes.int64)[:-1]
    batch = array_ops.range(array_ops.shape(x, out_type=dtypes.int64)[0], dtype=dtypes.int64)
    batch = extra_array_ops.broadcast_to(array_ops.reshape(batch, [-1] + [1] * spatial), out_shape)
    result = None
    for combination in itertools.product(*per_dim):
        indices = array_ops.stack([batch] + [index for index, _, _ in combination], axis=-1)
        value = nd_index_ops.gather_nd(channels_last, indices)
        factor = None
        for _, weight, valid in combination:
            parts = []
            if weight is not None:
                parts.append(weight)
            if valid is not None:
                parts.append(selection_ops.cast(valid, dtypes.float32))
            for part in parts:
                factor = part if factor is None else math_ops.multiply(factor, part)
        if factor is not None:
            value = math_ops.multiply(
                value, array_ops.expand_dims(selection_ops.cast(factor, x.dtype), -1)
            )
        result = value if result is None else math_ops.add(result, value)
    return array_ops.transpose(result, [0, spatial + 1] + list(range(1, spatial + 1)))


# -- NonMaxSuppression -----------------------------------------------------------------------------


@converts("NonMaxSuppression")
def _non_max_suppression(ctx: NodeContext):
    # Per batch and class, dataflow's non_max_suppression (greedy by score, a box dropped when
    # its IoU with a kept one exceeds the threshold); the kept boxes listed as
    # (batch, class, box) rows, batch by batch and class by class as ONNX orders them.
    boxes, scores = ctx.required_input(0), ctx.required_input(1)
    batches, classes = scores.shape.as_list()[:2]
    if batches is None or classes is None:
        raise ctx.error("the numbers of batches and classes must be known at import")
    limit = ctx.input(2)
    limit = (
        constant(0, dtype=dtypes.int32)
        if limit is None
        else selection_ops.cast(array_ops.reshape(limit, []), dtypes.int32)
    )
    iou = ctx.input(3)
    iou = _f32(0.0) if iou is None else array_ops.reshape(iou, [])
    threshold = ctx.input(4)
    if ctx.attr("center_point_box", 0):
        # [x_center, y_center, width, height] to the corners [y1, x1, y2, x2].
        center_x, center_y, width, height = array_ops.unstack(boxes, axis=-1)
        half_w, half_h = math_ops.truediv(width, _f32(2.0)), math_ops.truediv(height, _f32(2.0))
        boxes = array_ops.stack(
            [
                math_ops.subtract(center_y, half_h),
                math_ops.subtract(center_x, half_w),
                math_ops.add(center_y, half_h),
                math_ops.add(center_x, half_w),
            ],
            axis=-1,
        )
    rows = []
    for batch in range(batches):
        for klass in range(classes):
            class_scores = scores[batch, klass]
            options = {}
            if threshold is not None:
                options["score_threshold"] = array_ops.reshape(threshold, [])
            kept = image_ops.non_max_suppression(
                boxes[batch], class_scores, limit, iou_threshold=iou, **options
            )
            kept = selection_ops.cast(kept, dtypes.int64)
            labels = array_ops.fill(array_ops.shape(kept), constant(0, dtype=dtypes.int64))
            rows.append(
                array_ops.stack(
                    [
                        math_ops.add(labels, constant(batch, dtype=dtypes.int64)),
                        math_ops.add(labels, constant(klass, dtype=dtypes.int64)),
                        kept,
                    ],
                    axis=1,
                )
            )
    return array_ops.concat(rows, axis=0)

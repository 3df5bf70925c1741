"""Normalization ops with kernels of their own: ``fused_batch_norm`` and
``local_response_normalization`` (``lrn``), with their gradients.  The user-facing names live
in ``df.nn``; ``batch_normalization`` and ``moments``, built from other ops as in TensorFlow,
are in ``nn_ops.py``.

``FusedBatchNormV3`` has three outputs here, ``y``, ``batch_mean`` and ``batch_variance``
(TensorFlow's op adds three reserve spaces for its gradient kernel, which recomputes the batch
statistics here instead).  In training the statistics are over every axis but the channels;
``y`` uses the biased variance and the ``batch_variance`` output is the unbiased one, blended
with the ``variance`` input by ``exponential_avg_factor`` as TensorFlow does (``mean`` too).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import intra_op
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from .conv_ops import TO_NHWC, _from_nhwc, _layout, argument_errors
from .math_ops import FLOAT_TYPES, check_dtype, graph_of

__all__ = ["fused_batch_norm", "local_response_normalization", "lrn"]

# TensorFlow raises a smaller epsilon to this one (cuDNN's minimum).
MIN_EPSILON = 1.001e-5


# -- fused batch normalization ---------------------------------------------------------------------
def _channel_axis(attrs) -> int:
    return 1 if attrs.get("data_format") == "NCHW" else 3


def _infer_fused_batch_norm(op):
    x, scale, offset, mean, variance = op.inputs
    check_dtype(x.dtype, FLOAT_TYPES, "Input 'x' of 'FusedBatchNormV3'")
    for t, arg in ((scale, "scale"), (offset, "offset"), (mean, "mean"), (variance, "variance")):
        check_dtype(t.dtype, FLOAT_TYPES, f"Input '{arg}' of 'FusedBatchNormV3'")
        if t.shape.ndims not in (None, 1):
            raise ValueError(f"{arg} must be 1-D, got shape {t.shape}")
    if x.shape.ndims not in (None, 4):
        raise ValueError(f"x must be 4-D, got shape {x.shape}")
    channels = None if x.shape.ndims is None else x.shape[_channel_axis(op.attrs)]
    vector = TensorShape([channels])
    for t, arg in ((scale, "scale"), (offset, "offset")):
        if not t.shape.is_compatible_with(vector):
            raise ValueError(f"{arg} of shape {t.shape} does not match the {channels} channels")
    if not op.attrs["is_training"]:
        for t, arg in ((mean, "mean"), (variance, "variance")):
            if not t.shape.is_compatible_with(vector):
                raise ValueError(f"{arg} of shape {t.shape} does not match the {channels} channels")
    return [(x.dtype, x.shape), (scale.dtype, vector), (scale.dtype, vector)]


def _nhwc(x, nchw: bool):
    """``x`` in NHWC, contiguous: the reductions then add in the same order in both layouts,
    so an NCHW op gives the NHWC op's values transposed, bit for bit."""
    return np.ascontiguousarray(x.transpose(TO_NHWC)) if nchw else x


# Bytes of one block of rows (an ``[n*h*w, c]`` view of the NHWC input): a block stays in a
# core's L2 cache through the few passes each kernel makes over it.
BLOCK_BYTES = 256 * 1024

# Elements from which the blocks are shared among threads: a block's few cheap passes take
# tens of microseconds, and below this size handing blocks to a second thread cost more than it
# saved (measured on 2 cores: 4 MB of float32 ran 2.6 ms on two threads, 1.4 ms on one).
MIN_PARALLEL_ELEMENTS = 1 << 22

# Elements in a row of the wide view (see `_Rows`): numpy's loops pay per row, and a row of a
# few channels would cost more in loop overhead than in arithmetic.
WIDE_ROW_ELEMENTS = 512


class _Rows:
    """NHWC arrays seen as ``[n*h*w, c]`` rows of channels, cut into blocks of about
    `BLOCK_BYTES` that `intra_op.run_blocks` shares among threads.

    Rows are handled ``tile`` at a time: each array is viewed as ``[n*h*w / tile, tile*c]``
    (``tile`` the largest power of two up to ``WIDE_ROW_ELEMENTS / c`` that divides the rows),
    so a per-channel vector repeated ``tile`` times (`wide`) broadcasts over long rows.  `sums`
    adds a block's per-column sums, then the blocks' sums in block order, then the ``tile``
    columns of each channel, so a result does not depend on the threads; `fill` computes an
    output of the arrays' size block by block.
    """

    def __init__(self, *arrays: np.ndarray, threads=None) -> None:
        self.channels = c = arrays[0].shape[3]
        self.count = arrays[0].size // max(1, c)
        tile = 1
        while tile * 2 * c <= WIDE_ROW_ELEMENTS and self.count % (tile * 2) == 0:
            tile *= 2
        self.tile = tile
        self.matrices = [a.reshape(-1, tile * c) for a in arrays]
        wide_rows = self.matrices[0].shape[0]
        step = max(1, BLOCK_BYTES // max(1, tile * c * arrays[0].dtype.itemsize))
        self.blocks = [slice(i, min(wide_rows, i + step)) for i in range(0, wide_rows, step)]
        self.threads = threads if arrays[0].size >= MIN_PARALLEL_ELEMENTS else 1

    def wide(self, vector, dtype) -> np.ndarray:
        """A per-channel ``vector`` repeated along a wide row, in ``dtype``."""
        return np.tile(np.asarray(vector, dtype), self.tile)

    def sums(self, block_sums) -> list:
        """``block_sums(*blocks)`` gives a tuple of per-column sums of one block of each array
        (`column_sums`); the per-channel totals over all blocks."""
        parts: list = [None] * len(self.blocks)

        def run(number: int) -> None:
            rows = self.blocks[number]
            parts[number] = block_sums(*(m[rows] for m in self.matrices))

        intra_op.run_blocks(len(self.blocks), run, self.threads)
        totals = [np.array(p, copy=True) for p in parts[0]]
        for part in parts[1:]:
            for total, value in zip(totals, part):
                total += value
        return [total.reshape(self.tile, self.channels).sum(axis=0) for total in totals]

    def fill(self, dtype, block_value) -> np.ndarray:
        """The array of the arrays' size (flat) whose every block is ``block_value(out_block,
        *blocks)`` (which writes into ``out_block``)."""
        out = np.empty(self.matrices[0].shape, dtype)

        def run(number: int) -> None:
            rows = self.blocks[number]
            block_value(out[rows], *(m[rows] for m in self.matrices))

        intra_op.run_blocks(len(self.blocks), run, self.threads)
        return out


def column_sums(matrix: np.ndarray) -> np.ndarray:
    """The sums of a block's columns, as a product with a vector of ones: BLAS reads the
    block once, where ``sum(axis=0)`` loops over its rows."""
    if matrix.dtype.kind != "f":
        return matrix.sum(axis=0)
    return np.ones(matrix.shape[0], matrix.dtype) @ matrix


def _batch_statistics(rows: _Rows, dtype):
    """The per-channel mean and (biased) variance of ``rows``' first array, in two passes (the
    squares of the deviations from the mean, as numpy's ``var``)."""
    (total,) = rows.sums(lambda x, *_: (column_sums(x),))
    mean = total / rows.count
    wide_mean = rows.wide(mean, dtype)
    (squares,) = rows.sums(lambda x, *_: (column_sums(np.square(x - wide_mean)),))
    return mean, squares / rows.count


def _check_vectors(x, named) -> None:
    channels = x.shape[3]
    for value, arg in named:
        if np.shape(value) != (channels,):
            raise InvalidArgumentError(
                None, None, f"{arg} must have shape [{channels}], got {list(np.shape(value))}"
            )


def _fused_batch_norm_kernel(attrs):
    nchw, epsilon = attrs.get("data_format") == "NCHW", attrs["epsilon"]
    training, factor = attrs["is_training"], attrs["exponential_avg_factor"]

    def fused_batch_norm(x, scale, offset, mean, variance):
        if x.ndim != 4:
            raise InvalidArgumentError(None, None, f"x must be 4-D, got shape {list(x.shape)}")
        x = _nhwc(x, nchw)
        dtype = x.dtype
        compute = np.float32 if dtype == np.float16 else dtype
        _check_vectors(x, ((scale, "scale"), (offset, "offset")))
        x = x.astype(compute, copy=False)
        rows = _Rows(x, threads=attrs.get("intra_op_threads"))
        if training:
            batch_mean, batch_var = _batch_statistics(rows, compute)
            count = rows.count
            used_mean, used_var = batch_mean, batch_var
            unbiased = batch_var * (count / max(count - 1, 1))
            if factor != 1:
                _check_vectors(x, ((mean, "mean"), (variance, "variance")))
                batch_mean = (1 - factor) * mean + factor * batch_mean
                unbiased = (1 - factor) * variance + factor * unbiased
            out_mean, out_var = batch_mean, unbiased
        else:
            _check_vectors(x, ((mean, "mean"), (variance, "variance")))
            used_mean, used_var = mean, variance
            out_mean, out_var = mean, variance
        inv = scale / np.sqrt(used_var + epsilon)
        shift = rows.wide(offset - used_mean * inv, compute)
        inv = rows.wide(inv, compute)

        def normalize(out, x):
            np.multiply(x, inv, out=out)
            out += shift

        y = rows.fill(compute, normalize).reshape(x.shape)
        return (
            _from_nhwc(y.astype(dtype, copy=False), nchw),
            np.asarray(out_mean, scale.dtype),
            np.asarray(out_var, scale.dtype),
        )

    return fused_batch_norm


define_op(
    "FusedBatchNormV3",
    _infer_fused_batch_norm,
    _fused_batch_norm_kernel,
    extra={**_layout((0,), (0,)), "intra_op_threads": True},
)


def _fused_batch_norm_grad_kernel(attrs):
    nchw, epsilon, training = (
        attrs.get("data_format") == "NCHW",
        attrs["epsilon"],
        attrs["is_training"],
    )

    def fused_batch_norm_grad(dy, x, scale, mean, variance):
        dy_dtype = dy.dtype
        compute = np.float32 if x.dtype == np.float16 else x.dtype
        x = _nhwc(x, nchw).astype(compute, copy=False)
        dy = _nhwc(dy, nchw).astype(compute, copy=False)
        rows = _Rows(x, dy, threads=attrs.get("intra_op_threads"))
        count = rows.count
        if training:
            mean, variance = _batch_statistics(rows, compute)
        wide_mean = rows.wide(mean, compute)
        (grad_offset, dy_times_deviation) = rows.sums(
            lambda x, dy: (column_sums(dy), column_sums(dy * (x - wide_mean)))
        )
        inv = 1 / np.sqrt(variance + epsilon)
        grad_scale = dy_times_deviation * inv
        scaled = rows.wide(scale * inv, compute)
        if training:
            # d/dx of scale * (x - mean(x)) / sqrt(var(x) + eps): the batch statistics depend
            # on x, which takes each element's share of the offset and scale gradients out:
            # dx = scale * inv * (dy - grad_offset / count - (x - mean) * inv * grad_scale / count)
            along = scale * inv * inv * grad_scale / count
            constant = rows.wide(scale * inv * grad_offset / count - mean * along, compute)
            along = rows.wide(along, compute)

            def gradient(out, x, dy):
                np.multiply(x, along, out=out)
                out += constant
                np.subtract(dy * scaled, out, out=out)

        else:

            def gradient(out, x, dy):
                np.multiply(dy, scaled, out=out)

        dx = rows.fill(compute, gradient).reshape(x.shape)
        return (
            _from_nhwc(dx.astype(dy_dtype, copy=False), nchw),
            grad_scale.astype(scale.dtype),
            grad_offset.astype(scale.dtype),
        )

    return fused_batch_norm_grad


def _infer_fused_batch_norm_grad(op):
    dy, x, scale = op.inputs[:3]
    return [(dy.dtype, x.shape), (scale.dtype, scale.shape), (scale.dtype, scale.shape)]


define_op(
    "FusedBatchNormGradV3",
    _infer_fused_batch_norm_grad,
    _fused_batch_norm_grad_kernel,
    extra={**_layout((0, 1), (0,)), "intra_op_threads": True},
)


def fused_batch_norm(
    x,
    scale,
    offset,
    mean=None,
    variance=None,
    epsilon: float = 0.001,
    data_format: str = "NHWC",
    is_training: bool = True,
    name: Optional[str] = None,
    exponential_avg_factor: float = 1.0,
):
    """Batch normalization of the 4-D ``x`` over every axis but the channels (the last for
    NHWC, the second for NCHW): returns ``(y, batch_mean, batch_variance)``.  In training
    (``is_training``) the statistics are the batch's, and ``mean``/``variance`` are needed only
    with an ``exponential_avg_factor`` below 1 (the running values the outputs blend in); in
    inference they normalize ``x`` and come back unchanged.  ``epsilon`` is raised to
    TensorFlow's minimum, 1.001e-5."""
    with argument_errors("FusedBatchNormV3", name or "FusedBatchNormV3"):
        if data_format not in ("NHWC", "NCHW"):
            raise ValueError(f"data_format must be NHWC or NCHW, got {data_format!r}")
        if not is_training and (mean is None or variance is None):
            raise ValueError("both 'mean' and 'variance' must be given when is_training is False")
    graph = graph_of((x, scale, offset, mean, variance))
    with graph.as_default(), graph.name_scope(name or "FusedBatchNormV3") as scope:
        x = convert_to_tensor(x, name="x")
        scale = convert_to_tensor(scale, name="scale")
        offset = convert_to_tensor(offset, dtype=scale.dtype, name="offset")
        empty = np.zeros([0], scale.dtype.as_numpy_dtype)
        mean = convert_to_tensor(empty if mean is None else mean, dtype=scale.dtype, name="mean")
        variance = convert_to_tensor(
            empty if variance is None else variance, dtype=scale.dtype, name="variance"
        )
        attrs = {
            "epsilon": float(max(epsilon, MIN_EPSILON)),
            "data_format": data_format,
            "is_training": bool(is_training),
            "exponential_avg_factor": float(exponential_avg_factor),
        }
        op = apply_op("FusedBatchNormV3", (x, scale, offset, mean, variance), attrs, scope)
        return tuple(op.outputs)


# -- local response normalization ------------------------------------------------------------------
def _infer_lrn(op):
    (x,) = op.inputs
    check_dtype(x.dtype, FLOAT_TYPES, "Input 'input' of 'LRN'")
    if x.shape.ndims not in (None, 4):
        raise ValueError(f"input must be 4-D, got shape {x.shape}")
    return [(x.dtype, x.shape)]


def _window_sums(values, radius: int):
    """Sums of ``values`` over the channels ``d - radius .. d + radius`` (the last axis)."""
    depth = values.shape[-1]
    padded = np.zeros(values.shape[:-1] + (depth + 1,), dtype=values.dtype)
    np.cumsum(values, axis=-1, out=padded[..., 1:])
    upper = np.minimum(np.arange(depth) + radius + 1, depth)
    lower = np.maximum(np.arange(depth) - radius, 0)
    return padded[..., upper] - padded[..., lower]


def _lrn_denominator(x, attrs):
    return attrs["bias"] + attrs["alpha"] * _window_sums(np.square(x), attrs["depth_radius"])


def _lrn_kernel(attrs):
    def lrn(x):
        if x.ndim != 4:
            raise InvalidArgumentError(None, None, f"input must be 4-D, got {list(x.shape)}")
        return (x * _lrn_denominator(x, attrs) ** -attrs["beta"]).astype(x.dtype, copy=False)

    return lrn


def _lrn_grad_kernel(attrs):
    beta, alpha = attrs["beta"], attrs["alpha"]

    def lrn_grad(dy, x, y):
        denominator = _lrn_denominator(x, attrs)
        # y_d = x_d * s_d^-beta, s_d = bias + alpha * sum of x^2 over d's window: x_j meets
        # every s_d whose window holds j, which are the d in j's own window.
        inner = _window_sums(dy * y / denominator, attrs["depth_radius"])
        dx = dy * denominator**-beta - 2 * alpha * beta * x * inner
        return dx.astype(x.dtype, copy=False)

    return lrn_grad


define_op("LRN", _infer_lrn, _lrn_kernel)
define_op("LRNGrad", lambda op: [(op.inputs[0].dtype, op.inputs[1].shape)], _lrn_grad_kernel)


def local_response_normalization(
    input,  # noqa: A002 - TensorFlow's argument name
    depth_radius: int = 5,
    bias: float = 1,
    alpha: float = 1,
    beta: float = 0.5,
    name: Optional[str] = None,
) -> Tensor:
    """``input / (bias + alpha * sqr_sum) ** beta`` where ``sqr_sum`` sums the squares of the
    4-D ``input`` over the channels within ``depth_radius`` of each channel (the last axis)."""
    with argument_errors("LRN", name or "LRN"):
        if int(depth_radius) != depth_radius or depth_radius < 0:
            raise ValueError(f"depth_radius must be a non-negative int, got {depth_radius!r}")
    attrs = {
        "depth_radius": int(depth_radius),
        "bias": float(bias),
        "alpha": float(alpha),
        "beta": float(beta),
    }
    return apply_op("LRN", (input,), attrs, name or "LRN").outputs[0]


lrn = local_response_normalization


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402


@RegisterGradient("FusedBatchNormV3")
def _fused_batch_norm_grad(op, grad_y, _grad_mean, _grad_variance):
    # As TensorFlow: the batch statistics outputs feed moving averages, not the loss, and pass
    # no gradient back; in inference mean and variance get none either.
    if grad_y is None:
        return None, None, None, None, None
    x, scale, _, mean, variance = op.inputs
    attrs = {k: op.attrs[k] for k in ("epsilon", "data_format", "is_training")}
    dx, dscale, doffset = apply_op(
        "FusedBatchNormGradV3", (grad_y, x, scale, mean, variance), attrs, "FusedBatchNormGradV3"
    ).outputs
    return dx, dscale, doffset, None, None


@RegisterGradient("LRN")
def _lrn_grad(op, grad):
    attrs = {k: op.attrs[k] for k in ("depth_radius", "bias", "alpha", "beta")}
    return apply_op("LRNGrad", (grad, op.inputs[0], op.outputs[0]), attrs, "LRNGrad").outputs[0]


def _no_second_order(op, *grads):
    raise LookupError(
        f"No gradient of '{op.name}' (op type: {op.type}), created at {op.location}: the "
        "second derivative of this normalization is not implemented"
    )


RegisterGradient("FusedBatchNormGradV3")(_no_second_order)
RegisterGradient("LRNGrad")(_no_second_order)

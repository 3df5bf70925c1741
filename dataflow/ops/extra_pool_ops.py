"""Pooling and patches beyond the plain ops: volume patches, max pooling that returns the places
of its maxima, morphological dilation and erosion, fractional pooling, and an op run on a
space-to-batch rearranged input (TensorFlow's ``nn_ops`` has them all)."""

from __future__ import annotations

import zlib
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.determinism import is_op_determinism_enabled
from ..framework.errors import InvalidArgumentError
from ..framework.gradient_registry import RegisterGradient  # noqa: E402
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape
from . import array_ops as _a
from .conv_geometry import (
    _check_rank,
    _copy,
    _crop,
    _dims_last,
    _Geometry,
    _infer_like_sizes,
    _kernel,
    _no_gradient,
    _op,
    _padding,
    _spatial_list,
    _static_out,
    _windows,
)
from .conv_ops import (
    _lowest,
    _one_of,
    argument_errors,
)
from .math_ops import FLOAT_TYPES, NUMERIC_TYPES, check_dtype, check_same_dtype, convert_all
from .math_ops import graph_of as _graph_of


# -- volume patches ----------------------------------------------------------------------------
def _extract_volume_patches_last(x, attrs):
    g = _Geometry(x.shape[1:-1], attrs["ksize"], attrs)
    n, c = x.shape[0], x.shape[-1]
    k = int(np.prod(g.ksize))
    if min(n, *g.out, c) == 0:
        return np.zeros((n, *g.out, k * c), dtype=x.dtype)
    return np.ascontiguousarray(_windows(x, g)).reshape(n, *g.out, k * c)


def _infer_volume_patches(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_TYPES, "input")
    _check_rank(x, 5, "input", op)
    n, *sizes, c = _dims_last(x.shape, 5, False)
    out = _static_out(sizes, op.attrs["ksize"], op.attrs, op.type)
    depth = None if c is None else c * int(np.prod(op.attrs["ksize"]))
    return [(x.dtype, TensorShape([n, *out, depth]))]


define_op("ExtractVolumePatches", _infer_volume_patches, _kernel(_extract_volume_patches_last))


def extract_volume_patches(input, ksizes, strides, padding, name: Optional[str] = None):  # noqa: A002
    """The ``ksizes = [1, planes, rows, cols, 1]`` patches of the 5-d ``input`` (``[batch,
    depth, height, width, channels]``) taken every ``strides``, each flattened into the last
    dimension in (plane, row, column, channel) order: ``[batch, out_planes, out_rows,
    out_cols, planes * rows * cols * channels]``.  ``padding`` "SAME" pads with zeros as a
    convolution would."""
    with argument_errors("ExtractVolumePatches", name):
        attrs = {
            "ksize": _spatial_list(ksizes, "ksizes", 3, False),
            "strides": _spatial_list(strides, "strides", 3, False),
            "padding": _padding(padding),
        }
        for what, values in (("ksizes", ksizes), ("strides", strides)):
            if isinstance(values, (int, np.integer)) or len(values) != 5:
                raise ValueError(f"{what} must be 5 ints [1, planes, rows, cols, 1], got {values}")
    graph = _graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        return apply_op(
            "ExtractVolumePatches", (x,), attrs, name or "ExtractVolumePatches"
        ).outputs[0]


@RegisterGradient("ExtractVolumePatches")
def _extract_volume_patches_grad(op, grad):
    """The patches are a convolution with a one-hot filter (one output channel per patch
    position and channel); their gradient is that convolution's input gradient."""
    x = op.inputs[0]
    c = x.shape.as_list()[-1] if x.shape.ndims == 5 else None
    if c is None:
        raise ValueError("the gradient of extract_volume_patches needs a known channel count")
    ksize = op.attrs["ksize"]
    k = int(np.prod(ksize))
    one_hot = np.eye(k * c, dtype=x.dtype.as_numpy_dtype).reshape(*ksize, c, k * c)
    attrs = {"strides": op.attrs["strides"], "padding": op.attrs["padding"]}
    f = convert_to_tensor(one_hot)
    return _op("Conv3DBackpropInputV2", (_a.shape(x), f, grad), attrs)


# -- max pooling with the places of the maxima ------------------------------------------------
def _max_pool_with_argmax_kernel(attrs):
    include_batch = attrs["include_batch_in_index"]
    index_dtype = attrs["Targmax"].as_numpy_dtype

    def kernel(x):
        if x.ndim != 4:
            raise InvalidArgumentError(None, None, f"input must be 4-D, got {x.shape}")
        n, h, w, c = x.shape
        g = _Geometry((h, w), attrs["ksize"], attrs)
        (oh, ow), (kh, kw) = g.out, g.ksize
        if min(n, oh, ow, c) == 0:
            return np.zeros((n, oh, ow, c), x.dtype), np.zeros((n, oh, ow, c), index_dtype)
        fill = -np.inf if x.dtype.kind == "f" else _lowest(x.dtype)
        windows = _windows(x, g, fill=fill).reshape(n, oh, ow, kh * kw, c)
        best = np.argmax(windows, axis=3)  # the first maximum in row-major window order
        values = np.take_along_axis(windows, best[:, :, :, None], axis=3)[:, :, :, 0]
        rows = np.arange(oh)[None, :, None, None] * g.strides[0] - g.pads[0][0] + best // kw
        cols = np.arange(ow)[None, None, :, None] * g.strides[1] - g.pads[1][0] + best % kw
        index = (rows * w + cols) * c + np.arange(c)
        if include_batch:
            index = index + np.arange(n)[:, None, None, None] * (h * w * c)
        return values, index.astype(index_dtype)

    return kernel


def _infer_max_pool_with_argmax(op):
    (x,) = op.inputs
    check_dtype(x.dtype, NUMERIC_TYPES, "input")
    _check_rank(x, 4, "input", op)
    n, h, w, c = _dims_last(x.shape, 4, False)
    oh, ow = _static_out((h, w), op.attrs["ksize"], op.attrs, op.type)
    shape = TensorShape([n, oh, ow, c])
    return [(x.dtype, shape), (op.attrs["Targmax"], shape)]


define_op("MaxPoolWithArgmax", _infer_max_pool_with_argmax, _max_pool_with_argmax_kernel)


def max_pool_with_argmax(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format: str = "NHWC",
    Targmax=None,  # noqa: N803 - TensorFlow's name
    name: Optional[str] = None,
    output_dtype=None,
    include_batch_in_index: bool = False,
):
    """`max_pool` of the NHWC ``input`` and, for each output, where its maximum is in the
    flattened input: ``(y * width + x) * channels + c``, plus ``b * height * width *
    channels`` with ``include_batch_in_index``.  ``output_dtype`` (TF1's ``Targmax``) is the
    indices' dtype, int64 by default; the first maximum of a window wins, as in TensorFlow's
    CPU kernel."""
    with argument_errors("MaxPoolWithArgmax", name):
        if data_format != "NHWC":
            raise ValueError(
                f"Data formats other than 'NHWC' are not yet supported, got {data_format!r}"
            )
        if Targmax is not None and output_dtype is not None and Targmax != output_dtype:
            raise ValueError("Cannot specify both 'Targmax' and 'output_dtype'")
        dtype = _dtypes.as_dtype(output_dtype or Targmax or _dtypes.int64)
        if dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"output_dtype must be int32 or int64, got {dtype.name}")
        attrs = {
            "ksize": _spatial_list(ksize, "ksize", 2, False),
            "strides": _spatial_list(strides, "strides", 2, False),
            "padding": _padding(padding),
            "Targmax": dtype,
            "include_batch_in_index": bool(include_batch_in_index),
        }
    graph = _graph_of((input,))
    with graph.as_default():
        x = convert_to_tensor(input, name="input")
        op = apply_op("MaxPoolWithArgmax", (x,), attrs, name or "MaxPoolWithArgmax")
        return op.outputs[0], op.outputs[1]


@RegisterGradient("MaxPoolWithArgmax")
def _max_pool_with_argmax_grad(op, grad, _):
    """Each output's gradient added at the input position its index names."""
    from . import math_ops as _m
    from .segment_ops import unsorted_segment_sum

    x, index = op.inputs[0], _m.cast(op.outputs[1], _dtypes.int64)
    size = _m.cast(_a.size(x), _dtypes.int64)
    if not op.attrs["include_batch_in_index"]:
        per_example = size // _m.cast(_a.shape(x)[0], _dtypes.int64)
        batch = _m.cast(_a.range(_a.shape(index)[0]), _dtypes.int64)
        index = index + _a.reshape(batch * per_example, [-1, 1, 1, 1])
    flat = unsorted_segment_sum(_a.reshape(grad, [-1]), _a.reshape(index, [-1]), size)
    return _a.reshape(flat, _a.shape(x))


# -- morphological dilation and erosion ----------------------------------------------------------
def _dilation_windows(x, f, attrs):
    """The windows of ``x`` plus the filter, ``(N, OH, OW, KH*KW, C)``, their geometry, and the
    first maximum of each."""
    n, h, w, c = x.shape
    kh, kw, fc = f.shape
    if fc != c:
        raise InvalidArgumentError(
            None, None, f"input has {c} channels but the filter {list(f.shape)} has {fc}"
        )
    g = _Geometry((h, w), (kh, kw), attrs)
    fill = -np.inf if x.dtype.kind == "f" else _lowest(x.dtype)
    sums = _windows(x, g, fill=fill) + f[None, None, None]
    sums = sums.reshape(n, *g.out, kh * kw, c)
    best = np.argmax(sums, axis=3) if sums.size else np.zeros((n, *g.out, c), np.int64)
    return sums, g, best


def _dilation2d_kernel(attrs):
    def kernel(x, f):
        sums, g, best = _dilation_windows(x, f, attrs)
        if sums.size == 0:
            return np.zeros((x.shape[0], *g.out, x.shape[3]), dtype=x.dtype)
        return np.take_along_axis(sums, best[:, :, :, None], axis=3)[:, :, :, 0]

    return kernel


def _dilation2d_backprop_input_kernel(attrs):
    def kernel(x, f, dy):
        sums, g, best = _dilation_windows(x, f, attrs)
        n, h, w, c = x.shape
        kw = f.shape[1]
        grad = np.zeros((n, h + sum(g.pads[0]), w + sum(g.pads[1]), c), dtype=dy.dtype)
        if sums.size == 0:
            return _crop(grad, x.shape, g)
        (sh, sw), (rh, rw) = g.strides, g.dilations
        rows = np.arange(g.out[0])[None, :, None, None] * sh + (best // kw) * rh
        cols = np.arange(g.out[1])[None, None, :, None] * sw + (best % kw) * rw
        batch = np.arange(n)[:, None, None, None]
        channel = np.arange(c)[None, None, None, :]
        np.add.at(grad, (batch, rows, cols, channel), dy)
        return _crop(grad, x.shape, g)

    return kernel


def _dilation2d_backprop_filter_kernel(attrs):
    def kernel(x, f, dy):
        sums, g, best = _dilation_windows(x, f, attrs)
        kh, kw, c = f.shape
        grad = np.zeros((kh * kw, c), dtype=dy.dtype)
        if sums.size:
            np.add.at(grad, (best, np.broadcast_to(np.arange(c), best.shape)), dy)
        return grad.reshape(f.shape)

    return kernel


def _infer_dilation2d(op):
    x, f = op.inputs[:2]
    check_same_dtype((x, f), ("input", "filter"), op.type)
    check_dtype(x.dtype, NUMERIC_TYPES, "input")
    _check_rank(x, 4, "input", op)
    _check_rank(f, 3, "filter", op)
    n, h, w, c = _dims_last(x.shape, 4, False)
    kh, kw, fc = f.shape.as_list() if f.shape.ndims == 3 else [None] * 3
    if c is not None and fc is not None and c != fc:
        raise ValueError(f"input has {c} channels but the filter {f.shape} has {fc}")
    oh, ow = _static_out((h, w), (kh, kw), op.attrs, op.type)
    return [(x.dtype, TensorShape([n, oh, ow, c if c is not None else fc]))]


define_op("Dilation2D", _infer_dilation2d, _dilation2d_kernel)


define_op(
    "Dilation2DBackpropInput",
    lambda op: [(op.inputs[2].dtype, op.inputs[0].shape)],
    _dilation2d_backprop_input_kernel,
)


define_op(
    "Dilation2DBackpropFilter",
    lambda op: [(op.inputs[2].dtype, op.inputs[1].shape)],
    _dilation2d_backprop_filter_kernel,
)


def _dilation_attrs(strides, rates, padding) -> dict:
    for what, values in (("strides", strides), ("rates", rates)):
        if values is None or isinstance(values, (int, np.integer)) or len(values) != 4:
            raise ValueError(f"{what} must be 4 ints [1, h, w, 1], got {values!r}")
    return {
        "strides": _spatial_list(strides, "strides", 2, False),
        "dilations": _spatial_list(rates, "rates", 2, False),
        "padding": _padding(padding),
    }


def dilation2d(
    input,  # noqa: A002
    filter=None,  # noqa: A002
    strides=None,
    rates=None,
    padding=None,
    name: Optional[str] = None,
    filters=None,
    dilations=None,
) -> Tensor:
    """The grayscale morphological dilation of the NHWC ``input`` by the ``[height, width,
    channels]`` ``filter``: each output is the largest ``input + filter`` over its window
    (``strides`` and ``rates`` are ``[1, h, w, 1]``; positions in the padding take no
    part)."""
    with argument_errors("Dilation2D", name):
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        if dilations is not None:
            rates = _one_of(rates, dilations, "rates", "dilations")
        attrs = _dilation_attrs(strides, rates, padding)
    graph = _graph_of((input, filter))
    with graph.as_default():
        x, f = convert_all((input, filter), ("input", "filter"))
        return apply_op("Dilation2D", (x, f), attrs, name or "Dilation2D").outputs[0]


def erosion2d(value, kernel, strides, rates, padding, name: Optional[str] = None) -> Tensor:
    """The grayscale morphological erosion of the NHWC ``value`` by ``kernel``: each output is
    the smallest ``value - kernel`` over its window (with the kernel reflected), computed as
    TensorFlow does, as ``-dilation2d(-value, reverse(kernel))``."""
    from . import math_ops as _m

    with argument_errors("Dilation2D", name or "erosion2d"):
        attrs = _dilation_attrs(strides, rates, padding)
    graph = _graph_of((value, kernel))
    with graph.as_default(), graph.name_scope(name or "erosion2d") as scope:
        value, kernel = convert_all((value, kernel), ("value", "kernel"))
        from .reverse_ops import reverse

        reflected = reverse(kernel, [0, 1])
        dilated = apply_op("Dilation2D", (_m.negative(value), reflected), attrs, scope)
        return _m.negative(dilated.outputs[0])


@RegisterGradient("Dilation2D")
def _dilation2d_grad(op, grad):
    x, f = op.inputs
    attrs = _copy(op, ("strides", "dilations", "padding"))
    return (
        _op("Dilation2DBackpropInput", (x, f, grad), attrs),
        _op("Dilation2DBackpropFilter", (x, f, grad), attrs),
    )


# -- fractional pooling ------------------------------------------------------------------------
def _pooling_sequence(size: int, out: int, generator, pseudo_random: bool) -> np.ndarray:
    """The ``out + 1`` boundaries of the pooling regions along a dimension of ``size``
    (TensorFlow's ``GeneratePoolingSequence``): random region sizes of ``size // out`` or one
    more, or with ``pseudo_random`` ``ceil(alpha * (i + u)) - ceil(alpha * u)`` for a random
    ``u``, where ``alpha = size / out``."""
    if pseudo_random:
        alpha = size / out
        k = size // out
        max_u = min((k + 2) / alpha - 1, (size + 1 - k) / alpha - (out - 1))
        u = generator.uniform(0.0, max_u)
        seq = [0] + [int(np.ceil(alpha * (i + u))) - int(np.ceil(alpha * u)) for i in range(1, out)]
        return np.array(seq + [size], dtype=np.int64)
    k, extra = divmod(size, out)
    diff = np.full(out, k, dtype=np.int64)
    diff[:extra] += 1
    generator.shuffle(diff)
    return np.concatenate([[0], np.cumsum(diff)]).astype(np.int64)


def _region(seq, i: int, size: int, overlapping: bool) -> slice:
    end = seq[i + 1] + 1 if overlapping else seq[i + 1]
    return slice(int(seq[i]), int(min(end, size)))


def _fractional_pool_kernel(attrs):
    ratio = attrs["pooling_ratio"]
    pseudo, overlapping = attrs["pseudo_random"], attrs["overlapping"]
    stream = (attrs["stream"], attrs["seed"], attrs["seed2"])
    is_max = attrs["pooling"] == "max"
    if not attrs["deterministic"] and (attrs["seed"] or attrs["seed2"]):
        raise InvalidArgumentError(
            None, None, "Both seed and seed2 should be 0 if deterministic is false."
        )

    def kernel(context, x):
        if x.ndim != 4:
            raise InvalidArgumentError(None, None, f"value must be 4-D, got {x.shape}")
        n, h, w, c = x.shape
        oh, ow = int(h / ratio[0]), int(w / ratio[1])
        if oh <= 0 or ow <= 0:
            raise InvalidArgumentError(
                None, None, f"pooling_ratio {list(ratio)} is too large for the input {x.shape}"
            )

        def draw():
            generator = context.random_generator(*stream)
            return (
                _pooling_sequence(h, oh, generator, pseudo),
                _pooling_sequence(w, ow, generator, pseudo),
            )

        if attrs["deterministic"]:
            # The same regions at every run: a generator of its own, keyed by the op's name
            # and seeds (TensorFlow fixes them when it makes the kernel).
            key = [zlib.crc32(attrs["stream"].encode()), attrs["seed"], attrs["seed2"]]
            generator = np.random.default_rng(key)
            rows = _pooling_sequence(h, oh, generator, pseudo)
            cols = _pooling_sequence(w, ow, generator, pseudo)
        else:
            rows, cols = draw()
        out = np.empty((n, oh, ow, c), dtype=x.dtype)
        for i in range(oh):
            r = _region(rows, i, h, overlapping)
            for j in range(ow):
                region = x[:, r, _region(cols, j, w, overlapping)]
                out[:, i, j] = region.max(axis=(1, 2)) if is_max else region.mean(axis=(1, 2))
        return out, rows, cols

    return kernel


def _infer_fractional_pool(op):
    (x,) = op.inputs
    allowed = NUMERIC_TYPES if op.attrs["pooling"] == "max" else FLOAT_TYPES
    check_dtype(x.dtype, allowed, "value")
    _check_rank(x, 4, "value", op)
    n, h, w, c = _dims_last(x.shape, 4, False)
    ratio = op.attrs["pooling_ratio"]
    oh = None if h is None else int(h / ratio[0])
    ow = None if w is None else int(w / ratio[1])
    return [
        (x.dtype, TensorShape([n, oh, ow, c])),
        (_dtypes.int64, TensorShape([None if oh is None else oh + 1])),
        (_dtypes.int64, TensorShape([None if ow is None else ow + 1])),
    ]


def _fractional_max_pool_grad_kernel(attrs):
    overlapping = attrs["overlapping"]

    def kernel(x, y, dy, rows, cols):
        n, h, w, c = x.shape
        grad = np.zeros(x.shape, dtype=dy.dtype)
        batch, channel = np.arange(n)[:, None], np.arange(c)[None, :]
        for i in range(len(rows) - 1):
            r = _region(rows, i, h, overlapping)
            for j in range(len(cols) - 1):
                q = _region(cols, j, w, overlapping)
                region = x[:, r, q].reshape(n, -1, c)
                first = np.argmax(region == y[:, i, j][:, None, :], axis=1)  # [n, c]
                width = q.stop - q.start
                grad[batch, r.start + first // width, q.start + first % width, channel] += dy[
                    :, i, j
                ]
        return grad

    return kernel


def _fractional_avg_pool_grad_kernel(attrs):
    overlapping = attrs["overlapping"]

    def kernel(x_shape, dy, rows, cols):
        x_shape = tuple(int(v) for v in np.asarray(x_shape))
        _, h, w, _ = x_shape
        grad = np.zeros(x_shape, dtype=dy.dtype)
        for i in range(len(rows) - 1):
            r = _region(rows, i, h, overlapping)
            for j in range(len(cols) - 1):
                q = _region(cols, j, w, overlapping)
                count = (r.stop - r.start) * (q.stop - q.start)
                grad[:, r, q] += (dy[:, i, j] / count)[:, None, None, :]
        return grad

    return kernel


for _kind in ("Max", "Avg"):
    define_op(
        f"Fractional{_kind}Pool",
        _infer_fractional_pool,
        _fractional_pool_kernel,
        stateful=True,
        wants_context=True,
        extra={"random_stream": True},
    )


define_op(
    "FractionalMaxPoolGrad",
    lambda op: [(op.inputs[2].dtype, op.inputs[0].shape)],
    _fractional_max_pool_grad_kernel,
)


define_op(
    "FractionalAvgPoolGrad",
    _infer_like_sizes(0, 1),
    _fractional_avg_pool_grad_kernel,
)


def _fractional_pool(kind, value, pooling_ratio, pseudo_random, overlapping, deterministic,
                     seed, seed2, name):  # fmt: skip
    op_type = f"Fractional{kind.capitalize()}Pool"
    with argument_errors(op_type, name):
        ratio = [float(r) for r in pooling_ratio]
        if len(ratio) != 4 or ratio[0] != 1.0 or ratio[3] != 1.0:
            raise ValueError(
                f"pooling_ratio must be [1.0, rows, cols, 1.0] (no pooling over the batch or "
                f"channels), got {pooling_ratio}"
            )
        if min(ratio) < 1.0:
            raise ValueError(f"pooling_ratio must be at least 1, got {pooling_ratio}")
        if is_op_determinism_enabled() and not (seed and seed2 and deterministic):
            raise ValueError(
                '"seed" and "seed2" must be non-zero and "deterministic" true when op '
                'determinism is enabled: pass such values, e.g. "seed=1, seed2=1, '
                f'deterministic=True". Got seed={seed}, seed2={seed2}, '
                f"deterministic={deterministic}"
            )
        attrs = {
            "pooling": kind,
            "pooling_ratio": (ratio[1], ratio[2]),
            "pseudo_random": bool(pseudo_random),
            "overlapping": bool(overlapping),
            "deterministic": bool(deterministic),
            "seed": int(seed),
            "seed2": int(seed2),
        }
    graph = _graph_of((value,))
    with graph.as_default():
        x = convert_to_tensor(value, name="value")
        return tuple(apply_op(op_type, (x,), attrs, name or op_type).outputs)


def fractional_max_pool(
    value,
    pooling_ratio,
    pseudo_random: bool = False,
    overlapping: bool = False,
    deterministic: bool = False,
    seed: int = 0,
    seed2: int = 0,
    name: Optional[str] = None,
):
    """Max pooling of the NHWC ``value`` over regions of random, non-integer average size
    ``pooling_ratio = [1.0, rows, cols, 1.0]`` (Graham's fractional max pooling): the output
    has ``floor(size / ratio)`` rows and columns, and the region boundaries are drawn each run
    (random sizes of ``size // out`` or one more, or with ``pseudo_random`` TensorFlow's
    pseudo-random sequence), or fixed by the op's name and seeds with ``deterministic``;
    ``overlapping`` regions share their boundary.  Returns ``(output, row_pooling_sequence,
    col_pooling_sequence)``; the draws are not TensorFlow's, the rules are."""
    return _fractional_pool(
        "max", value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name
    )


def fractional_avg_pool(
    value,
    pooling_ratio,
    pseudo_random: bool = False,
    overlapping: bool = False,
    deterministic: bool = False,
    seed: int = 0,
    seed2: int = 0,
    name: Optional[str] = None,
):
    """`fractional_max_pool` with the mean of each region instead of its maximum."""
    return _fractional_pool(
        "avg", value, pooling_ratio, pseudo_random, overlapping, deterministic, seed, seed2, name
    )


@RegisterGradient("FractionalMaxPool")
def _fractional_max_pool_grad(op, grad, _rows, _cols):
    x, y = op.inputs[0], op.outputs[0]
    return _op(
        "FractionalMaxPoolGrad",
        (x, y, grad, op.outputs[1], op.outputs[2]),
        {"overlapping": op.attrs["overlapping"]},
    )


@RegisterGradient("FractionalAvgPool")
def _fractional_avg_pool_grad(op, grad, _rows, _cols):
    return _op(
        "FractionalAvgPoolGrad",
        (_a.shape(op.inputs[0]), grad, op.outputs[1], op.outputs[2]),
        {"overlapping": op.attrs["overlapping"]},
    )


for _type in (
    "Conv",
    "Dilation2DBackpropInput",
    "Dilation2DBackpropFilter",
    "FractionalMaxPoolGrad",
    "FractionalAvgPoolGrad",
):
    RegisterGradient(_type)(_no_gradient)


# -- an op run on a space-to-batch rearranged input ------------------------------------------------
def _adjust_to_dims(values, fill, spatial_dims: list):
    """``values`` (one row per spatial dimension, an array or a tensor of pairs) with rows of
    ``fill`` for the dimensions between ``1`` and the last of ``spatial_dims`` that are not
    among them."""
    if not isinstance(values, Tensor):
        values = np.asarray(values)
        given = dict(zip(spatial_dims, values))
        filler = np.full(values.shape[1:], fill, values.dtype)
        return np.stack([given.get(d, filler) for d in range(1, spatial_dims[-1] + 1)])
    index = {d: i for i, d in enumerate(spatial_dims)}
    filler = np.full([1, 2], fill, values.dtype.as_numpy_dtype)
    rows = [
        values[index[d] : index[d] + 1] if d in index else filler
        for d in range(1, spatial_dims[-1] + 1)
    ]
    return _a.concat(rows, 0)


def with_space_to_batch(
    input,  # noqa: A002
    dilation_rate,
    padding,
    op,
    filter_shape=None,
    spatial_dims=None,
    data_format=None,
):
    """``op(input, num_spatial_dims, padding)`` computed with holes of ``dilation_rate``
    between the taps of its window, as TensorFlow does: the input is rearranged with
    ``space_to_batch_nd`` (padded as ``padding`` says, SAME needing ``filter_shape``), ``op``
    runs on it with VALID padding, and ``batch_to_space_nd`` undoes the rearrangement.  With
    a rate of 1 everywhere it is ``op(input, num_spatial_dims, padding)`` itself.
    ``spatial_dims`` (increasing, from 1) are the dimensions ``dilation_rate`` applies to: by
    default those after the batch (and the channels, for a ``data_format`` starting
    ``"NC"``).  ``dilation_rate`` and ``filter_shape`` must be known when the graph is built.
    The rearranging ops come from ``ops/space_batch_ops.py``."""
    with argument_errors("with_space_to_batch", None):
        x = convert_to_tensor(input, name="input")
        rate = np.asarray(dilation_rate, dtype=np.int64).reshape(-1)
        n = len(rate)
        first = data_format is not None and data_format.startswith("NC")
        start = 2 if first else 1
        dims = list(range(start, n + start)) if spatial_dims is None else list(spatial_dims)
        if sorted({int(d) for d in dims}) != dims or any(d < 1 for d in dims):
            raise ValueError(
                "`spatial_dims` must be a monotonically increasing sequence of positive "
                f"integers. Received: spatial_dims={dims}"
            )
        if len(dims) != n:
            raise ValueError(f"spatial_dims {dims} do not match dilation_rate {list(rate)}")
        expected_rank = dims[-1] if first else dims[-1] + 1
        if x.shape.ndims is not None and x.shape.ndims < expected_rank:
            raise ValueError(
                f"`input.shape.rank` must be at least {expected_rank}. Received: "
                f"input.shape={x.shape} with rank {x.shape.ndims}"
            )
        if (rate < 1).any():
            raise ValueError(f"`dilation_rate` must be positive. Received: dilation_rate={rate}")
        if (rate == 1).all():
            return op(x, n, padding)
        if padding == "SAME":
            if filter_shape is None:
                raise ValueError(
                    "`filter_shape` must be specified for `padding='SAME'`. Received: "
                    f"filter_shape={filter_shape} and padding={padding}"
                )
            spatial = np.asarray(filter_shape, dtype=np.int64).reshape(-1)[:n]
            extra = (spatial - 1) * rate
            base_paddings = np.stack([extra // 2, extra - extra // 2], axis=1)
        elif padding == "VALID":
            base_paddings = np.zeros([n, 2], np.int64)
        else:
            raise ValueError(f"`padding` must be one of 'SAME' or 'VALID'. Received: {padding}")
    from .space_batch_ops import (
        batch_to_space_nd,
        required_space_to_batch_paddings,
        space_to_batch_nd,
    )

    known = x.shape.as_list() if x.shape.ndims is not None else None
    if known is not None and None not in [known[d] for d in dims]:
        input_spatial_shape = np.array([known[d] for d in dims], dtype=np.int64)
    else:
        shape = _a.shape(x, out_type=_dtypes.int64)
        input_spatial_shape = _a.stack([shape[d] for d in dims])
    paddings, crops = required_space_to_batch_paddings(
        input_spatial_shape, rate, base_paddings=base_paddings
    )
    from ..framework.tensor_conversion import numpy_value_or_none

    known_paddings, known_crops = numpy_value_or_none(paddings), numpy_value_or_none(crops)
    block = _adjust_to_dims(rate.reshape(-1, 1), 1, dims).reshape(-1)
    paddings = _adjust_to_dims(paddings if known_paddings is None else known_paddings, 0, dims)
    crops = _adjust_to_dims(crops if known_crops is None else known_crops, 0, dims)
    converted = space_to_batch_nd(x, block, paddings)
    result = op(converted, n, "VALID")
    return batch_to_space_nd(result, block, crops)


__all__ = [
    "dilation2d",
    "erosion2d",
    "fractional_avg_pool",
    "fractional_max_pool",
    "max_pool_with_argmax",
    "with_space_to_batch",
]

"""The rest of TF1's everyday ``tf.nn``: more activations, ``top_k``/``in_top_k``, moments from
sufficient statistics, ``space_to_depth``, the Poisson loss and sparse embedding lookups.

``TopKV2`` and ``InTopKV2`` are ops here, as in TensorFlow (a sort in numpy, not a chain of
ops); ``LeakyRelu`` is one too, since TensorFlow's gradient for it is not the one a composition
of ``maximum`` gives at 0.  The rest compose existing ops as TensorFlow's Python does, and get
their gradients from them.
"""

from __future__ import annotations

import collections
from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from . import array_ops as _a
from . import gather_ops as _g
from . import math_grad as _mg
from . import math_ops as _m
from .conv_ops import avg_pool, max_pool
from .extra_math_ops import div_no_nan, expm1, reciprocal
from .math_ops import FLOAT_TYPES, INDEX_TYPES, NUMERIC_TYPES, check_dtype, graph_of, static_axis
from .nn_ops import bias_add, relu, sigmoid

__all__ = [
    "avg_pool1d",
    "avg_pool_v2",
    "batch_norm_with_global_normalization",
    "compute_average_loss",
    "max_pool1d",
    "max_pool_v2",
    "scale_regularization_loss",
    "avg_pool2d",
    "crelu",
    "depth_to_space",
    "in_top_k",
    "leaky_relu",
    "log_poisson_loss",
    "max_pool2d",
    "normalize_moments",
    "relu_layer",
    "selu",
    "silu",
    "softsign",
    "space_to_depth",
    "sufficient_statistics",
    "swish",
    "top_k",
    "weighted_moments",
    "xw_plus_b",
    "zero_fraction",
]


def _fail(function: str, message: str, error=ValueError):
    raise error(f"{function} at {_user_location()}: {message}")


# -- activations -----------------------------------------------------------------------------------
def _infer_leaky_relu(op):
    (x,) = op.inputs
    check_dtype(x.dtype, FLOAT_TYPES, "Input 'features' of 'LeakyRelu'")
    return [(x.dtype, x.shape)]


def _leaky_relu_kernel(attrs):
    alpha = attrs["alpha"]

    def leaky_relu(x):
        return np.where(x > 0, x, x * x.dtype.type(alpha))

    return leaky_relu


define_op("LeakyRelu", _infer_leaky_relu, _leaky_relu_kernel)


def leaky_relu(features, alpha=0.2, name: Optional[str] = None) -> Tensor:
    """``features`` where positive, ``alpha * features`` elsewhere.  Integer features are cast
    to float32 first, as TensorFlow does."""
    features = convert_to_tensor(features, name="features")
    if features.dtype in NUMERIC_TYPES - FLOAT_TYPES:
        features = _m.cast(features, _dtypes.float32)
    return apply_op("LeakyRelu", (features,), {"alpha": float(alpha)}, name or "LeakyRelu").outputs[
        0
    ]


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(features, name: Optional[str] = None) -> Tensor:
    """The scaled ELU: ``scale * x`` where ``x > 0``, ``scale * alpha * (exp(x) - 1)`` elsewhere
    (Klambauer et al.'s constants)."""
    graph = graph_of((features,))
    with graph.as_default(), graph.name_scope(name or "Selu"):
        x = convert_to_tensor(features, name="features")
        negative_part = _m.multiply(expm1(_m.minimum(x, _mg._zeros(x))), _SELU_ALPHA)
        return _m.multiply(_m.where_v2(x > 0, x, negative_part), _SELU_SCALE)


def softsign(features, name: Optional[str] = None) -> Tensor:
    """``features / (1 + |features|)``."""
    graph = graph_of((features,))
    with graph.as_default(), graph.name_scope(name or "Softsign"):
        x = convert_to_tensor(features, name="features")
        return _m.realdiv(x, _m.add(_m.abs(x), 1))


def swish(features, beta=1.0, name: Optional[str] = None) -> Tensor:
    """``features * sigmoid(beta * features)`` (``silu`` for ``beta == 1``)."""
    graph = graph_of((features,))
    with graph.as_default(), graph.name_scope(name or "swish"):
        x = convert_to_tensor(features, name="features")
        scaled = x if isinstance(beta, (int, float)) and beta == 1.0 else _m.multiply(beta, x)
        return _m.multiply(x, sigmoid(scaled))


silu = swish


def crelu(features, name: Optional[str] = None, axis=-1) -> Tensor:
    """``relu`` of ``features`` and of ``-features``, concatenated along ``axis`` (so twice as
    deep)."""
    graph = graph_of((features,))
    with graph.as_default(), graph.name_scope(name or "CRelu"):
        x = convert_to_tensor(features, name="features")
        both = _a.concat([x, _m.negative(x)], axis)
        return relu(both)


def xw_plus_b(x, weights, biases, name: Optional[str] = None) -> Tensor:
    """``matmul(x, weights) + biases`` (a 2-D ``x``, a 1-D ``biases``)."""
    graph = graph_of((x, weights, biases))
    with graph.as_default(), graph.name_scope(name or "xw_plus_b") as scope:
        product = _m.matmul(convert_to_tensor(x, name="x"), weights)
        return bias_add(product, biases, name=scope)


def relu_layer(x, weights, biases, name: Optional[str] = None) -> Tensor:
    """``relu(matmul(x, weights) + biases)``."""
    graph = graph_of((x, weights, biases))
    with graph.as_default(), graph.name_scope(name or "relu_layer") as scope:
        product = _m.matmul(convert_to_tensor(x, name="x"), weights)
        return relu(bias_add(product, biases), name=scope)


def zero_fraction(value, name: Optional[str] = None) -> Tensor:
    """The fraction of the elements of ``value`` that are zero, as a float32 scalar."""
    graph = graph_of((value,))
    with graph.as_default(), graph.name_scope(name or "zero_fraction"):
        value = convert_to_tensor(value, name="value")
        zero = convert_to_tensor(np.zeros((), value.dtype.as_numpy_dtype))
        return _m.reduce_mean(_m.cast(_m.equal(value, zero), _dtypes.float32))


# -- top k -----------------------------------------------------------------------------------------
def _static_k(k: Tensor) -> Optional[int]:
    value = numpy_value_or_none(k)
    return None if value is None else int(value)


_TOP_K_INDEX_TYPES = frozenset({_dtypes.int16, _dtypes.int32, _dtypes.int64})


def _infer_top_k(op):
    x, k = op.inputs
    check_dtype(x.dtype, NUMERIC_TYPES, "Input 'input' of 'TopKV2'")
    check_dtype(k.dtype, {_dtypes.int32}, "Input 'k' of 'TopKV2'")
    if k.shape.ndims not in (None, 0):
        raise ValueError(f"k must be a scalar, got shape {k.shape}")
    k_value = _static_k(k)
    if k_value is not None and k_value < 0:
        raise ValueError(f"Need k >= 0, got {k_value}")
    index_type = op.attrs.get("index_type", _dtypes.int32)
    check_dtype(index_type, _TOP_K_INDEX_TYPES, "Attr 'index_type' of 'TopKV2'")
    if x.shape.ndims is None:
        return [(x.dtype, TensorShape(None)), (index_type, TensorShape(None))]
    if x.shape.ndims == 0:
        raise ValueError("input must be at least 1-D, got a scalar")
    last = x.shape.as_list()[-1]
    if k_value is not None and last is not None and last < k_value:
        raise ValueError(f"input must have at least k={k_value} columns, got {last}")
    shape = TensorShape(x.shape.as_list()[:-1] + [k_value])
    return [(x.dtype, shape), (index_type, shape)]


def _top_k_kernel(attrs):
    index_dtype = _dtypes.numpy_dtype(attrs.get("index_type", _dtypes.int32))

    def top_k(x, k):
        k = int(k)
        if x.shape[-1] < k:
            from ..framework.errors import InvalidArgumentError

            raise InvalidArgumentError(
                None, None, f"input must have at least k={k} columns, got {x.shape[-1]}"
            )
        # A stable sort of the negated values: ties keep the lower index first, as TensorFlow.
        keys = -x.astype(np.float64) if x.dtype.kind in "iub" else -x
        order = np.argsort(keys, axis=-1, kind="stable")[..., :k].astype(index_dtype)
        return np.take_along_axis(x, order, axis=-1), order

    return top_k


define_op("TopKV2", _infer_top_k, _top_k_kernel)


def top_k(
    input,  # noqa: A002
    k=1,
    sorted: bool = True,  # noqa: A002
    index_type=_dtypes.int32,
    name: Optional[str] = None,
) -> tuple:
    """The ``k`` largest entries of the last axis of ``input`` and their indices (of
    ``index_type``: int16, int32 or int64), largest first (equal values: lower index first)."""
    graph = graph_of((input, k))
    index_type = _dtypes.as_dtype(index_type)
    attrs = {"sorted": bool(sorted)}
    if index_type is not _dtypes.int32:  # graphs saved before index_type existed: int32
        attrs["index_type"] = index_type
    with graph.as_default():
        k = convert_to_tensor(k, dtype=_dtypes.int32, name="k")
        op = apply_op("TopKV2", (input, k), attrs, name or "TopKV2")
    return _TopKResult(op.outputs[0], op.outputs[1])


# ``(values, indices)``, also reachable by name, as TensorFlow's namedtuple: a Session fetches
# it as one and gives back the same structure of arrays.
_TopKResult = collections.namedtuple("TopKV2", ["values", "indices"])


def _infer_in_top_k(op):
    predictions, targets, k = op.inputs
    check_dtype(predictions.dtype, {_dtypes.float32}, "Input 'predictions' of 'InTopKV2'")
    check_dtype(targets.dtype, INDEX_TYPES, "Input 'targets' of 'InTopKV2'")
    if predictions.shape.ndims not in (None, 2):
        raise ValueError(f"predictions must be 2-dimensional, got shape {predictions.shape}")
    if targets.shape.ndims not in (None, 1):
        raise ValueError(f"targets must be 1-dimensional, got shape {targets.shape}")
    batch = predictions.shape.as_list()[0] if predictions.shape.ndims == 2 else None
    if batch is None and targets.shape.ndims == 1:
        batch = targets.shape.as_list()[0]
    return [(_dtypes.bool, TensorShape([batch]))]


def _in_top_k_kernel(attrs):
    def in_top_k(predictions, targets, k):
        if predictions.shape[0] != targets.shape[0]:
            from ..framework.errors import InvalidArgumentError

            raise InvalidArgumentError(
                None,
                None,
                f"First dimension of predictions {predictions.shape[0]} must match length of "
                f"targets {targets.shape[0]}",
            )
        classes = predictions.shape[1]
        valid = (targets >= 0) & (targets < classes)
        rows = np.arange(predictions.shape[0])
        target_value = predictions[rows, np.where(valid, targets, 0)]
        larger = np.sum(predictions > target_value[:, None], axis=1)
        return valid & np.isfinite(target_value) & (larger < k)

    return in_top_k


define_op("InTopKV2", _infer_in_top_k, _in_top_k_kernel)


def in_top_k(predictions, targets, k, name: Optional[str] = None) -> Tensor:
    """Whether each row's ``targets`` class is among its ``k`` largest ``predictions``: fewer
    than ``k`` classes score strictly higher.  A target out of range or with a non-finite
    prediction is False."""
    graph = graph_of((predictions, targets))
    with graph.as_default():
        targets = convert_to_tensor(targets, name="targets")
        k = convert_to_tensor(k, dtype=targets.dtype, name="k")
        return apply_op("InTopKV2", (predictions, targets, k), None, name or "InTopKV2").outputs[0]


# -- moments ---------------------------------------------------------------------------------------
def _keepdims_of(keep_dims, keepdims, default=False) -> bool:
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        keepdims = keep_dims
    return default if keepdims is None else bool(keepdims)


def _axes_list(axes, function: str) -> list:
    axes = static_axis(axes, "axes")
    if axes is None:
        _fail(function, "needs axes")
    return [axes] if isinstance(axes, int) else list(axes)


def sufficient_statistics(
    x, axes, shift=None, keep_dims=None, name: Optional[str] = None, keepdims=None
) -> tuple:
    """``(count, sum of x - shift, sum of squares of x - shift, shift)`` over ``axes``: what
    `normalize_moments` turns into a mean and variance.  The count is a constant when the
    reduced dimensions are known."""
    keepdims = _keepdims_of(keep_dims, keepdims)
    axes = _axes_list(axes, "sufficient_statistics")
    graph = graph_of((x, shift))
    with graph.as_default(), graph.name_scope(name or "sufficient_statistics"):
        x = convert_to_tensor(x, name="x")
        dims = x.shape.as_list() if x.shape.ndims is not None else None
        if dims is not None and all(dims[a] is not None for a in axes):
            count = convert_to_tensor(
                np.prod([dims[a] for a in axes]).astype(x.dtype.as_numpy_dtype), name="count"
            )
        else:
            sizes = _g.gather(_m.cast(_a.shape(x), x.dtype), axes)
            count = _m.reduce_prod(sizes, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, dtype=x.dtype, name="shift")
            centered = _m.subtract(x, shift)
            mean_ss = _m.reduce_sum(centered, axes, keepdims=keepdims, name="mean_ss")
            var_ss = _m.reduce_sum(_m.square(centered), axes, keepdims=keepdims, name="var_ss")
        else:
            mean_ss = _m.reduce_sum(x, axes, keepdims=keepdims, name="mean_ss")
            var_ss = _m.reduce_sum(_m.square(x), axes, keepdims=keepdims, name="var_ss")
    return count, mean_ss, var_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name: Optional[str] = None) -> tuple:
    """The ``(mean, variance)`` of `sufficient_statistics`' results."""
    graph = graph_of((counts, mean_ss, variance_ss, shift))
    with graph.as_default(), graph.name_scope(name or "normalize"):
        divisor = reciprocal(convert_to_tensor(counts, name="counts"), name="divisor")
        shifted_mean = _m.multiply(mean_ss, divisor, name="shifted_mean")
        mean = shifted_mean if shift is None else _m.add(shifted_mean, shift, name="mean")
        variance = _m.subtract(
            _m.multiply(variance_ss, divisor), _m.square(shifted_mean), name="variance"
        )
    return mean, variance


def weighted_moments(
    x, axes, frequency_weights, name: Optional[str] = None, keep_dims=None, keepdims=None
) -> tuple:
    """The mean and variance of ``x`` over ``axes``, each element counted
    ``frequency_weights`` times (weights broadcast against ``x``)."""
    keepdims = _keepdims_of(keep_dims, keepdims)
    axes = _axes_list(axes, "weighted_moments")
    graph = graph_of((x, frequency_weights))
    with graph.as_default(), graph.name_scope(name or "weighted_moments"):
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(frequency_weights, dtype=x.dtype, name="frequency_weights")
        weighted_sum = _m.reduce_sum(_m.multiply(weights, x), axes, keepdims=True)
        broadcast_weights = _m.add(weights, _a.zeros_like(x))
        divisor = reciprocal(_m.reduce_sum(broadcast_weights, axes, keepdims=True))
        mean = _m.multiply(weighted_sum, divisor)
        variance = _m.multiply(
            _m.reduce_sum(
                _m.multiply(weights, _m.squared_difference(x, mean)), axes, keepdims=True
            ),
            divisor,
        )
        if not keepdims:
            mean = _a.squeeze(mean, axes)
            variance = _a.squeeze(variance, axes)
    return mean, variance


# -- pooling aliases, block rearrangements ---------------------------------------------------------
def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None) -> Tensor:  # noqa: A002
    """`max_pool` under TF2's name (``input`` first)."""
    return max_pool(input, ksize, strides, padding, data_format=data_format, name=name)


# ``tf.compat.v1.nn.avg_pool2d`` is TF1's `avg_pool` itself (``value`` first, ``input`` last).
avg_pool2d = avg_pool


def _pool_v2(function, one_d, two_d, input, ksize, strides, padding, data_format, name):  # noqa: A002
    x = convert_to_tensor(input, name="input")
    rank = x.shape.ndims
    if rank == 3:
        return one_d(x, ksize, strides, padding, data_format or "NWC", name)
    if rank == 4:
        return two_d(x, ksize, strides, padding, data_format or "NHWC", name)
    _fail(function, f"pools inputs of rank 3 (NWC) or 4 (NHWC) here, got shape {x.shape}")


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None) -> Tensor:  # noqa: A002
    """`max_pool1d` or `max_pool2d`, by the rank of ``input``."""
    return _pool_v2("max_pool_v2", max_pool1d, max_pool2d, input, ksize, strides, padding,
                    data_format, name)  # fmt: skip


def avg_pool_v2(input, ksize, strides, padding, data_format=None, name=None) -> Tensor:  # noqa: A002
    """`avg_pool1d` or `avg_pool2d`, by the rank of ``input``."""
    return _pool_v2("avg_pool_v2", avg_pool1d, avg_pool2d, input, ksize, strides, padding,
                    data_format, name)  # fmt: skip


def batch_norm_with_global_normalization(
    t=None,
    m=None,
    v=None,
    beta=None,
    gamma=None,
    variance_epsilon=None,
    scale_after_normalization=None,
    name=None,
    input=None,  # noqa: A002
    mean=None,
    variance=None,
):
    """`batch_normalization` with TensorFlow 0.x's argument names: ``gamma`` scales only
    when ``scale_after_normalization``; ``input``/``mean``/``variance`` are the newer names
    of ``t``/``m``/``v``."""
    from .nn_ops import batch_normalization

    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    if t is None or m is None or v is None or variance_epsilon is None:
        raise ValueError("batch_norm_with_global_normalization needs t, m, v and variance_epsilon")
    t = convert_to_tensor(t, name="t")
    m, v = (convert_to_tensor(x, dtype=t.dtype) for x in (m, v))
    beta = None if beta is None else convert_to_tensor(beta, dtype=t.dtype, name="beta")
    scale = convert_to_tensor(gamma, dtype=t.dtype) if scale_after_normalization else None
    return batch_normalization(t, m, v, beta, scale, variance_epsilon, name=name)


def _block_args(function: str, input, block_size, data_format) -> Tensor:  # noqa: A002
    if data_format != "NHWC":
        _fail(function, f"supports data_format 'NHWC' only, got {data_format!r}")
    if not isinstance(block_size, (int, np.integer)) or block_size < 2:
        _fail(function, f"block_size must be an integer of at least 2, got {block_size!r}")
    x = convert_to_tensor(input, name="input")
    if x.shape.ndims not in (None, 4):
        _fail(function, f"input must be 4-D (NHWC), got shape {x.shape}")
    return x


def _dims(x: Tensor) -> list:
    """The four dimensions of ``x``: Python ints where the static shape knows them (so the
    result's static shape is known too), else scalar tensors of its run-time shape."""
    known = x.shape.as_list() if x.shape.ndims == 4 else [None] * 4
    run_time = _a.unstack(_a.shape(x), num=4) if None in known else [None] * 4
    return [k if k is not None else t for k, t in zip(known, run_time)]


def _shape_of(dims: list):
    """A shape argument: a list of ints when every dim is known, else a stacked tensor."""
    if all(isinstance(d, int) for d in dims):
        return dims
    return _a.stack([d if isinstance(d, Tensor) else convert_to_tensor(d) for d in dims])


def space_to_depth(input, block_size, name=None, data_format="NHWC") -> Tensor:  # noqa: A002
    """Moves each ``block_size`` x ``block_size`` block of the height and width into the depth:
    ``[b, h, w, c]`` becomes ``[b, h / bs, w / bs, bs * bs * c]``."""
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or "SpaceToDepth"):
        x = _block_args("space_to_depth", input, block_size, data_format)
        bs = int(block_size)
        if x.shape.ndims == 4:
            for axis, what in ((1, "height"), (2, "width")):
                size = x.shape.as_list()[axis]
                if size is not None and size % bs:
                    _fail("space_to_depth", f"the {what} {size} is not a multiple of {bs}")
        b, h, w, c = _dims(x)
        blocks = _a.reshape(x, _shape_of([b, h // bs, bs, w // bs, bs, c]))
        moved = _a.transpose(blocks, [0, 1, 3, 2, 4, 5])
        return _a.reshape(moved, _shape_of([b, h // bs, w // bs, c * (bs * bs)]))


def depth_to_space(input, block_size, name=None, data_format="NHWC") -> Tensor:  # noqa: A002
    """The inverse of `space_to_depth`: ``[b, h, w, bs * bs * c]`` becomes
    ``[b, h * bs, w * bs, c]``."""
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or "DepthToSpace"):
        x = _block_args("depth_to_space", input, block_size, data_format)
        bs = int(block_size)
        depth = x.shape.as_list()[3] if x.shape.ndims == 4 else None
        if depth is not None and depth % (bs * bs):
            _fail("depth_to_space", f"the depth {depth} is not a multiple of {bs * bs}")
        b, h, w, c = _dims(x)
        blocks = _a.reshape(x, _shape_of([b, h, w, bs, bs, c // (bs * bs)]))
        moved = _a.transpose(blocks, [0, 1, 3, 2, 4, 5])
        return _a.reshape(moved, _shape_of([b, h * bs, w * bs, c // (bs * bs)]))


# -- losses and sparse lookups ---------------------------------------------------------------------
def log_poisson_loss(
    targets, log_input, compute_full_loss: bool = False, name: Optional[str] = None
) -> Tensor:
    """The negative log-likelihood of ``targets`` under a Poisson of log-rate ``log_input``,
    without the constant ``log(targets!)`` unless ``compute_full_loss`` (then by Stirling's
    formula, for targets above 1)."""
    graph = graph_of((targets, log_input))
    with graph.as_default(), graph.name_scope(name or "log_poisson_loss"):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, dtype=log_input.dtype, name="targets")
        if not targets.shape.is_compatible_with(log_input.shape):
            _fail(
                "log_poisson_loss",
                f"log_input and targets must have the same shape ({log_input.shape} vs "
                f"{targets.shape})",
            )
        result = _m.subtract(_m.exp(log_input), _m.multiply(log_input, targets))
        if compute_full_loss:
            safe = _m.maximum(targets, _a.ones_like(targets))
            stirling = _m.add(
                _m.subtract(_m.multiply(safe, _m.log(safe)), safe),
                _m.multiply(_m.log(_m.multiply(safe, 2 * np.pi)), 0.5),
            )
            stirling = _m.where_v2(targets > 1, stirling, _a.zeros_like(targets))
            result = _m.add(result, stirling)
        return result


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import NotDifferentiable, RegisterGradient  # noqa: E402

NotDifferentiable("InTopKV2")


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    x = op.inputs[0]
    return _m.where_v2(x > 0, grad, _m.multiply(grad, op.attrs["alpha"]))


@RegisterGradient("TopKV2")
def _top_k_grad(op, grad_values, grad_indices):
    """Scatters the values' gradient back to the positions the indices name, row by row."""
    from .segment_ops import unsorted_segment_sum

    x = op.inputs[0]
    indices = _m.cast(op.outputs[1], _dtypes.int32)
    if grad_values is None:
        return _a.zeros_like(x), None
    x_shape = _a.shape(x)
    depth = x_shape[-1]
    k = _a.shape(indices)[-1]
    rows = _a.reshape(indices, _a.stack([-1, k]))
    offsets = _a.reshape(_m.multiply(_a.range(_a.shape(rows)[0]), depth), [-1, 1])
    flat = _a.reshape(_m.add(rows, offsets), [-1])
    scattered = unsorted_segment_sum(_a.reshape(grad_values, [-1]), flat, _a.size(x))
    return _a.reshape(scattered, x_shape), None


# -- 1-D pooling and the per-replica loss scalings -------------------------------------------------
def _width(values, what: str, data_format: str) -> int:
    """The window width from an int, 1 int, or TensorFlow's 3-list in ``data_format`` order."""
    values = [int(values)] if isinstance(values, (int, np.integer)) else [int(v) for v in values]
    if len(values) == 3:
        values = [values[2] if data_format == "NCW" else values[1]]
    if len(values) != 1:
        _fail(f"pool1d's {what}", f"must be an int, 1 int or 3 ints, got {values}")
    return values[0]


def _pool1d(pool, input, ksize, strides, padding, data_format, name, scope):  # noqa: A002
    if data_format not in ("NWC", "NCW"):
        _fail(scope, f"data_format must be 'NWC' or 'NCW', got {data_format!r}")
    k, s = _width(ksize, "ksize", data_format), _width(strides, "strides", data_format)
    graph = graph_of((input,))
    with graph.as_default(), graph.name_scope(name or scope):
        x = convert_to_tensor(input, name="input")
        axis = 2 if data_format == "NCW" else 1
        fmt = "NCHW" if data_format == "NCW" else "NHWC"
        pooled = pool(_a.expand_dims(x, axis), [1, k], [1, s], padding, data_format=fmt)
        return _a.squeeze(pooled, [axis])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The maximum over each ``ksize`` window along the width of a 3-D ``input`` (NWC or NCW)."""
    return _pool1d(max_pool, input, ksize, strides, padding, data_format, name, "MaxPool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):  # noqa: A002
    """The mean over each ``ksize`` window along the width of a 3-D ``input`` (NWC or NCW)."""
    return _pool1d(avg_pool, input, ksize, strides, padding, data_format, name, "AvgPool1d")


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None) -> Tensor:
    """The sum of ``per_example_loss`` (times ``sample_weight``) over ``global_batch_size``, by
    default the batch's size (dataflow runs one replica); 0 when the batch size is 0."""
    loss = convert_to_tensor(per_example_loss, name="per_example_loss")
    dtype = loss.dtype
    if sample_weight is not None:
        loss = _m.cast(_m.multiply(loss, _m.cast(sample_weight, dtype)), dtype)
    if global_batch_size is None:
        global_batch_size = _a.shape(loss)[0]
    size = convert_to_tensor(global_batch_size, name="global_batch_size")
    if size.dtype not in INDEX_TYPES:
        _fail(
            "compute_average_loss", f"global_batch_size must be an integer, got {size.dtype.name}"
        )
    return div_no_nan(_m.reduce_sum(loss), _m.cast(size, dtype))


def scale_regularization_loss(regularization_loss) -> Tensor:
    """The sum of ``regularization_loss`` (a tensor, or a list added up first) divided by the
    number of replicas, which is 1 in dataflow."""
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = _m.add_n(regularization_loss)
    return _m.reduce_sum(regularization_loss)

"""Neural-network ops: activations, softmax and cross entropies, normalization and dropout.
The user-facing names live in ``df.nn``; convolution and pooling are in ``conv_ops.py``.

``batch_normalization`` and ``moments`` are built from other ops, as in TensorFlow.

Deliberate differences from TensorFlow 1.x: softmax along another axis than the last, the
cross entropies and dropout are one op each, where TensorFlow builds them from several
(transposes, reshapes, random ops), so their output tensors have other names
(``softmax_cross_entropy_with_logits:0`` rather than ``..._sg/Reshape_2:0``).  The cross
entropies take ``labels`` and ``logits`` by position too, as ``tf.compat.v1`` does since
TensorFlow 2 dropped TF 1.x's ``_sentinel`` (which refused them).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, _user_location, graph_to_build_in
from ..framework.op_registry import apply_op, apply_op_output, define_op
from ..framework.random_seed import op_seed_attrs
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from .array_ops import squeeze, stop_gradient
from .math_ops import (
    FLOAT_TYPES,
    INDEX_TYPES,
    NUMERIC_TYPES,
    add,
    broadcast_shape,
    cast,
    check_dtype,
    check_same_dtype,
    convert_all,
    graph_of,
    multiply,
    negative,
    normalize_axis,
    reduce_mean,
    rsqrt,
    sigmoid,
    squared_difference,
    static_axis,
    subtract,
    tanh,
)

__all__ = [
    "batch_normalization",
    "bias_add",
    "dropout",
    "elu",
    "log_softmax",
    "moments",
    "relu",
    "relu6",
    "sigmoid",
    "softmax",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "softplus",
    "sparse_softmax_cross_entropy_with_logits",
    "tanh",
]


# -- activations -----------------------------------------------------------------------------------
def _infer_activation(allowed: frozenset):
    def infer(op):
        (x,) = op.inputs
        check_dtype(x.dtype, allowed, f"Input 'features' of '{op.type}'")
        return [(x.dtype, x.shape)]

    return infer


def _relu(x):
    return np.maximum(x, 0)


def _relu6(x):
    return np.minimum(np.maximum(x, 0), 6)


def _elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def _softplus(x):
    return np.logaddexp(0, x)


for _type, _allowed, _fn in (
    ("Relu", NUMERIC_TYPES, _relu),
    ("Relu6", NUMERIC_TYPES, _relu6),
    ("Elu", FLOAT_TYPES, _elu),
    ("Softplus", FLOAT_TYPES, _softplus),
):
    define_op(
        _type,
        _infer_activation(_allowed),
        (lambda fn: lambda attrs: fn)(_fn),
        extra={"layout": "elementwise"},  # for the layout pass, `dataflow.passes.layout`
    )


def _infer_relu_grad(op):
    gradients, features = op.inputs
    check_same_dtype((gradients, features), ("gradients", "features"), op.type)
    check_dtype(gradients.dtype, NUMERIC_TYPES, f"Input 'gradients' of '{op.type}'")
    try:
        shape = gradients.shape.merge_with(features.shape)
    except ValueError:
        raise ValueError(
            f"gradients {gradients.shape} and features {features.shape} must have one shape"
        ) from None
    return [(gradients.dtype, shape)]


def _relu_grad_kernel(gradients, features):
    if gradients.shape != features.shape:
        raise InvalidArgumentError(
            None,
            None,
            f"gradients {list(gradients.shape)} and features {list(features.shape)} must have "
            "one shape",
        )
    # A product, not a select, as TensorFlow's kernel: a NaN or infinite gradient where the
    # unit is off gives NaN.
    return np.multiply(gradients, features > 0, dtype=gradients.dtype)


# ``ReluGrad(gradients, features)``: the gradient of Relu, ``gradients`` where ``features`` (the
# Relu's output) is positive, else 0; one pass instead of Greater, ZerosLike and Select.
define_op(
    "ReluGrad",
    _infer_relu_grad,
    lambda attrs: _relu_grad_kernel,
    extra={"layout": "elementwise"},
)


def relu(features, name: Optional[str] = None) -> Tensor:
    """``max(features, 0)``."""
    return apply_op_output("Relu", (features,), None, name or "Relu")


def relu6(features, name: Optional[str] = None) -> Tensor:
    """``min(max(features, 0), 6)``."""
    return apply_op_output("Relu6", (features,), None, name or "Relu6")


def elu(features, name: Optional[str] = None) -> Tensor:
    """``features`` where positive, else ``exp(features) - 1``."""
    return apply_op_output("Elu", (features,), None, name or "Elu")


def softplus(features, name: Optional[str] = None) -> Tensor:
    """``log(exp(features) + 1)``, computed without overflow."""
    return apply_op_output("Softplus", (features,), None, name or "Softplus")


# -- softmax and cross entropy ---------------------------------------------------------------------
def _infer_softmax(op):
    (x,) = op.inputs
    check_dtype(x.dtype, FLOAT_TYPES, f"Input 'logits' of '{op.type}'")
    if x.shape.ndims == 0:
        raise ValueError("softmax needs logits of rank at least 1, got a scalar")
    normalize_axis(op.attrs["axis"], x.shape.ndims)
    return [(x.dtype, x.shape)]


def _check_logits_rank(x) -> None:
    if x.ndim == 0:
        raise InvalidArgumentError(None, None, "logits must have >= 1 dimension, got shape ()")


def _log_softmax(x, axis):
    shifted = x - np.maximum.reduce(x, axis=axis, keepdims=True)
    with np.errstate(divide="ignore"):
        return shifted - np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))


def _softmax_kernel(attrs):
    axis = attrs["axis"]

    def softmax(x):
        _check_logits_rank(x)
        e = np.exp(x - np.maximum.reduce(x, axis=axis, keepdims=True))
        return e / np.add.reduce(e, axis=axis, keepdims=True)

    return softmax


def _log_softmax_kernel(attrs):
    axis = attrs["axis"]

    def log_softmax(x):
        _check_logits_rank(x)
        return _log_softmax(x, axis)

    return log_softmax


define_op("Softmax", _infer_softmax, _softmax_kernel)
define_op("LogSoftmax", _infer_softmax, _log_softmax_kernel)


def _softmax_axis(axis, dim):
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    axis = static_axis(-1 if axis is None else axis)
    if not isinstance(axis, int):
        raise TypeError(f"softmax takes a single axis, got {axis!r}")
    return axis


def softmax(logits, axis=None, name: Optional[str] = None, dim=None) -> Tensor:
    """``exp(logits) / sum(exp(logits))`` along ``axis`` (default last)."""
    attrs = {"axis": _softmax_axis(axis, dim)}
    return apply_op_output("Softmax", (logits,), attrs, name or "Softmax")


def log_softmax(logits, axis=None, name: Optional[str] = None, dim=None) -> Tensor:
    """``logits - log(sum(exp(logits)))`` along ``axis`` (default last)."""
    attrs = {"axis": _softmax_axis(axis, dim)}
    return apply_op_output("LogSoftmax", (logits,), attrs, name or "LogSoftmax")


def _infer_sparse_xent(op):
    logits, labels = op.inputs
    check_dtype(logits.dtype, FLOAT_TYPES, "logits")
    check_dtype(labels.dtype, INDEX_TYPES, "labels")
    if logits.shape.ndims == 0:
        raise ValueError("logits must have rank at least 1, got a scalar")
    loss_shape = labels.shape
    if logits.shape.ndims is not None:
        batch = TensorShape(logits.shape.as_list()[:-1])
        if not batch.is_compatible_with(labels.shape):
            raise ValueError(
                f"labels of shape {labels.shape} do not match logits of shape {logits.shape} "
                "(labels must have the shape of logits without its last dimension)"
            )
        loss_shape = batch.merge_with(labels.shape)
    backprop_shape = logits.shape
    if loss_shape.ndims is not None and logits.shape.ndims is None:
        backprop_shape = TensorShape(loss_shape.as_list() + [None])
    return [(logits.dtype, loss_shape), (logits.dtype, backprop_shape)]


def _sparse_xent(logits, labels):
    classes = logits.shape[-1]
    if labels.shape != logits.shape[:-1]:
        raise InvalidArgumentError(
            None,
            None,
            f"labels of shape {labels.shape} do not match logits of shape {logits.shape}",
        )
    labels = np.asarray(labels)
    if labels.size and (labels.min() < 0 or labels.max() >= classes):
        bad = labels[(labels < 0) | (labels >= classes)].flat[0]
        raise InvalidArgumentError(
            None,
            None,
            f"Received a label value of {bad} which is outside the valid range of "
            f"[0, {classes}).  Label values: {labels.reshape(-1)[:10].tolist()}",
        )
    log_probs = _log_softmax(logits, -1)
    index = np.expand_dims(labels, -1)
    picked = np.take_along_axis(log_probs, index, axis=-1)
    backprop = np.exp(log_probs)
    np.put_along_axis(backprop, index, np.take_along_axis(backprop, index, axis=-1) - 1, axis=-1)
    return -picked[..., 0], backprop


define_op("SparseSoftmaxCrossEntropyWithLogits", _infer_sparse_xent, lambda attrs: _sparse_xent)


def _infer_xent(op):
    logits, labels = op.inputs
    check_same_dtype((logits, labels), ("logits", "labels"), op.type)
    check_dtype(logits.dtype, FLOAT_TYPES, "logits")
    try:
        shape = logits.shape.merge_with(broadcast_shape(logits.shape, labels.shape))
    except ValueError:
        raise ValueError(
            f"labels of shape {labels.shape} do not broadcast to logits of shape {logits.shape}"
        ) from None
    if shape.ndims is None:
        return [(logits.dtype, TensorShape(None)), (logits.dtype, shape)]
    if shape.ndims == 0:
        raise ValueError("logits must have rank at least 1, got a scalar")
    axis = normalize_axis(op.attrs["axis"], shape.ndims)
    dims = shape.as_list()
    return [(logits.dtype, TensorShape(dims[:axis] + dims[axis + 1 :])), (logits.dtype, shape)]


def _xent_kernel(attrs):
    axis = attrs["axis"]

    def xent(logits, labels):
        _check_logits_rank(logits)
        if np.shape(labels) != np.shape(logits):
            try:
                labels = np.broadcast_to(labels, np.shape(logits))
            except ValueError:
                raise InvalidArgumentError(
                    None,
                    None,
                    f"labels of shape {np.shape(labels)} do not broadcast to logits of shape "
                    f"{np.shape(logits)}",
                ) from None
        log_probs = _log_softmax(logits, axis)
        loss = -np.add.reduce(labels * log_probs, axis=axis)
        return loss, np.exp(log_probs) - labels

    return xent


define_op("SoftmaxCrossEntropyWithLogits", _infer_xent, _xent_kernel)


def sparse_softmax_cross_entropy_with_logits(
    labels=None, logits=None, name: Optional[str] = None
) -> Tensor:
    """The cross entropy between ``softmax(logits)`` and the class indices ``labels``, one loss
    per row: ``labels`` has the shape of ``logits`` without its last (class) dimension.  A label
    outside ``[0, num_classes)`` is a run-time error."""
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given")
    graph = graph_of((logits, labels))
    with (
        graph.as_default(),
        graph.name_scope(name or "SparseSoftmaxCrossEntropyWithLogits") as scope,
    ):
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        op = apply_op("SparseSoftmaxCrossEntropyWithLogits", (logits, labels), None, scope)
        return op.outputs[0]


def softmax_cross_entropy_with_logits(
    labels=None,
    logits=None,
    dim=-1,
    name: Optional[str] = None,
    axis=None,
) -> Tensor:
    """The cross entropy between ``softmax(logits)`` and the distributions ``labels`` along
    ``axis`` (default last).  ``labels`` is cast to the dtype of ``logits`` and broadcast to its
    shape; as in TF1, no gradient flows into ``labels``."""
    return _softmax_cross_entropy(labels, logits, dim if axis is None else axis, name, True)


def softmax_cross_entropy_with_logits_v2(
    labels, logits, axis=None, name: Optional[str] = None, dim=None
) -> Tensor:
    """`softmax_cross_entropy_with_logits`, except that the gradient flows into ``labels`` too
    (``d loss / d labels = -log_softmax(logits)``), as in TF1's ``_v2``."""
    if axis is None:
        axis = -1 if dim is None else dim
    return _softmax_cross_entropy(labels, logits, axis, name, False)


def _softmax_cross_entropy(labels, logits, axis, name, stop_labels: bool) -> Tensor:
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given")
    axis = static_axis(axis)
    if not isinstance(axis, int):
        raise TypeError(f"softmax_cross_entropy_with_logits takes a single axis, got {axis!r}")
    graph = graph_of((logits, labels))
    with graph.as_default(), graph.name_scope(name or "softmax_cross_entropy_with_logits") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = cast(convert_to_tensor(labels, name="labels"), logits.dtype)
        if stop_labels:
            labels = stop_gradient(labels, name="labels_stop_gradient")
        op = apply_op("SoftmaxCrossEntropyWithLogits", (logits, labels), {"axis": axis}, scope)
        return op.outputs[0]


def _infer_bias_add(op):
    value, bias = op.inputs
    check_same_dtype((value, bias), ("value", "bias"), op.type)
    check_dtype(value.dtype, NUMERIC_TYPES, "value")
    if bias.shape.ndims not in (None, 1):
        raise ValueError(f"bias must be 1-D, got shape {bias.shape}")
    if value.shape.ndims is None:
        return [(value.dtype, value.shape)]
    if value.shape.ndims < 2:
        raise ValueError(f"value must have rank at least 2, got shape {value.shape}")
    channel_axis = -1 if op.attrs["data_format"] == "NHWC" else 1
    dims = value.shape.as_list()
    channel = dims[channel_axis]
    size = bias.shape[0] if bias.shape.ndims == 1 else None
    if channel is not None and size is not None and channel != size:
        raise ValueError(
            f"bias of size {size} does not match the {channel} channels of value "
            f"{value.shape} ({op.attrs['data_format']})"
        )
    dims[channel_axis] = channel if channel is not None else size
    return [(value.dtype, TensorShape(dims))]


def _bias_add_kernel(attrs):
    nhwc = attrs["data_format"] == "NHWC"

    def bias_add(value, bias):
        if value.ndim < 2:
            raise InvalidArgumentError(
                None, None, f"Input tensor must be at least 2D: {list(value.shape)}"
            )
        if bias.ndim != 1:
            raise InvalidArgumentError(None, None, f"Biases must be 1D: {list(bias.shape)}")
        channels = value.shape[-1 if nhwc else 1]
        if bias.shape[0] != channels:
            raise InvalidArgumentError(
                None,
                None,
                f"Must provide as many biases as the channel dimension of the input tensor: "
                f"{list(bias.shape)} vs. {list(value.shape)}",
            )
        if nhwc:
            return np.add(value, bias)
        return value + bias.reshape((-1,) + (1,) * (value.ndim - 2))

    return bias_add


define_op(
    "BiasAdd",
    _infer_bias_add,
    _bias_add_kernel,
    extra={"layout": {"images": (0,), "image_outputs": (0,), "sizes": ()}},
)


def bias_add(value, bias, data_format: Optional[str] = None, name: Optional[str] = None):
    """``value + bias`` with the 1-D ``bias`` added along the channel dimension (the last one
    for NHWC, the default; dimension 1 for NCHW)."""
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format must be NHWC or NCHW, got {data_format!r}")
    graph = graph_of((value, bias))
    with graph.as_default(), graph.name_scope(name or "BiasAdd") as scope:
        value, bias = convert_all((value, bias), ("value", "bias"))
        return apply_op_output("BiasAdd", (value, bias), {"data_format": data_format}, scope)


# -- normalization ---------------------------------------------------------------------------------
def batch_normalization(
    x, mean, variance, offset, scale, variance_epsilon, name: Optional[str] = None
) -> Tensor:
    """``scale * (x - mean) / sqrt(variance + variance_epsilon) + offset``, with ``offset``
    and ``scale`` optional (``None``); all broadcast against ``x``."""
    graph = graph_of((x, mean, variance, offset, scale))
    with graph.as_default(), graph.name_scope(name or "batchnorm"):
        x = convert_to_tensor(x, name="x")
        # TensorFlow's expression, operator for operator, so the ops get its names
        # (batchnorm/add, batchnorm/Rsqrt, batchnorm/mul, ..., batchnorm/add_1).
        inv = rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv *= scale
        shift = -mean * inv if offset is None else offset - mean * inv
        return x * cast(inv, x.dtype) + cast(shift, x.dtype)


def moments(
    x,
    axes,
    shift=None,
    name: Optional[str] = None,
    keep_dims=None,
    keepdims=None,
) -> tuple:
    """The mean and variance of ``x`` over ``axes``.  float16 inputs are reduced in float32, as
    in TensorFlow.  ``shift`` is accepted and ignored (TensorFlow ignores it too)."""
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        keepdims = keep_dims
    axes = static_axis(axes, "axes")
    if isinstance(axes, int):
        axes = [axes]
    if axes is None:
        raise ValueError("moments needs axes")
    graph = graph_of((x,))
    with graph.as_default(), graph.name_scope(name or "moments"):
        x = convert_to_tensor(x, name="x")
        y = cast(x, _dtypes.float32) if x.dtype is _dtypes.float16 else x
        mean = reduce_mean(y, axes, keepdims=True, name="mean")
        variance = reduce_mean(
            squared_difference(y, stop_gradient(mean)), axes, keepdims=True, name="variance"
        )
        if not keepdims:
            mean = squeeze(mean, axes)
            variance = squeeze(variance, axes)
        if x.dtype is _dtypes.float16:
            return cast(mean, _dtypes.float16), cast(variance, _dtypes.float16)
        return mean, variance


# -- dropout ---------------------------------------------------------------------------------------
def _infer_dropout(op):
    x, rate = op.inputs
    check_same_dtype((x, rate), ("x", "rate"), op.type)
    check_dtype(x.dtype, FLOAT_TYPES, "x")
    if rate.shape.ndims not in (None, 0):
        raise ValueError(f"rate must be a scalar, got shape {rate.shape}")
    noise_shape = op.attrs["noise_shape"]
    if noise_shape is not None and x.shape.ndims is not None:
        if len(noise_shape) != x.shape.ndims:
            raise ValueError(f"noise_shape {list(noise_shape)} does not fit x of shape {x.shape}")
        for n, d in zip(noise_shape, x.shape.as_list()):
            if n != 1 and d is not None and n != d:
                raise ValueError(
                    f"noise_shape {list(noise_shape)} does not broadcast to x of shape {x.shape}"
                )
    mask_shape = x.shape if noise_shape is None else TensorShape(list(noise_shape))
    return [(x.dtype, x.shape), (x.dtype, mask_shape)]


def _dropout_kernel(attrs):
    noise_shape = attrs["noise_shape"]
    # A graph saved before dropout had a graph seed holds ``seed=None`` and no ``seed2``.
    stream = (attrs["stream"], attrs["seed"] or 0, attrs.get("seed2", 0))

    def dropout(context, x, rate):
        if not 0 <= rate < 1:
            raise InvalidArgumentError(None, None, f"dropout rate must be in [0, 1), got {rate}")
        rng = context.random_generator(*stream)
        keep = rng.random(np.shape(x) if noise_shape is None else noise_shape) >= rate
        scale = x.dtype.type(1 / (1 - rate))
        zero = x.dtype.type(0)
        return np.where(keep, x * scale, zero), np.where(keep, scale, zero)

    return dropout


define_op(
    "Dropout",
    _infer_dropout,
    _dropout_kernel,
    stateful=True,
    wants_context=True,
    extra={"random_stream": True},
)


def dropout(
    x,
    keep_prob=None,
    noise_shape=None,
    seed: Optional[int] = None,
    name: Optional[str] = None,
    rate=None,
) -> Tensor:
    """``x`` with each element zeroed with probability ``rate`` (``= 1 - keep_prob``) and the
    others scaled by ``1 / (1 - rate)``.  A fresh mask is drawn every run; ``seed`` is the op
    seed, combined with the graph seed as every random op's (`dataflow.framework.random_seed`), and
    with either the sequence of masks is the same for every Session.  ``noise_shape`` (broadcast
    against ``x``) shares one draw along the dimensions where it is 1.  A rate known to be 0
    returns ``x``.

    The mask comes from the op's stream in the Session (`dataflow.client.random_streams`), so its
    values are not TensorFlow's, whose dropout is several ops around a ``RandomUniform``."""
    if (keep_prob is None) == (rate is None):
        raise ValueError(f"dropout at {_user_location()}: needs exactly one of keep_prob and rate")
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError(
            f"dropout at {_user_location()}: x must be a floating point tensor to be scaled, "
            f"got {x.dtype.name}"
        )
    if noise_shape is not None:
        noise_shape = static_axis(noise_shape, "noise_shape")
        noise_shape = (noise_shape,) if isinstance(noise_shape, int) else noise_shape
    graph = graph_to_build_in(x.graph)
    with graph.as_default(), graph.name_scope(name or "dropout") as scope:
        if keep_prob is not None:
            known = _known_scalar(keep_prob)
            if known is not None and not 0 < known <= 1:
                raise ValueError(
                    f"dropout at {_user_location()}: keep_prob must be in (0, 1], got {known}"
                )
            if known is not None:
                rate = 1 - known
            else:
                rate = subtract(convert_to_tensor(1, dtype=x.dtype), keep_prob, name="rate")
        known = _known_scalar(rate)
        if known is not None and not 0 <= known < 1:
            raise ValueError(f"dropout at {_user_location()}: rate must be in [0, 1), got {known}")
        if known == 0:
            return x  # as TensorFlow: nothing to drop, no op
        rate = convert_to_tensor(rate, dtype=x.dtype, name="rate")
        attrs = {"noise_shape": noise_shape, **op_seed_attrs(seed, graph)}
        return apply_op_output("Dropout", (x, rate), attrs, scope)


def _known_scalar(value) -> Optional[float]:
    """The value of a rate or keep_prob known at build time, if it is a scalar; a tensor one
    or a non-scalar is left to the Dropout op, whose inference names it."""
    known = numpy_value_or_none(value) if isinstance(value, Tensor) else value
    if known is None or np.ndim(known) != 0:
        return None
    return float(known)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402
from .array_ops import expand_dims, reshape, shape  # noqa: E402
from .math_ops import (  # noqa: E402
    exp,
    greater,
    less,
    logical_and,
    reduce_sum,
    where,
)


def _zeros(t: Tensor) -> Tensor:
    from ..framework.gradient_registry import zeros_like_output

    return zeros_like_output(t)


@RegisterGradient("Relu")
def _relu_grad(op, grad):
    return apply_op_output("ReluGrad", (grad, op.outputs[0]), None, "ReluGrad")


@RegisterGradient("ReluGrad")
def _relu_grad_grad(op, grad):
    features = op.inputs[1]
    return apply_op_output("ReluGrad", (grad, features), None, "ReluGrad"), _zeros(features)


@RegisterGradient("Relu6")
def _relu6_grad(op, grad):
    x = op.inputs[0]
    inside = logical_and(greater(x, 0), less(x, 6))
    return where(inside, grad, _zeros(grad))


@RegisterGradient("Elu")
def _elu_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    return where(greater(x, 0), grad, multiply(grad, add(y, 1)))


@RegisterGradient("Softplus")
def _softplus_grad(op, grad):
    return multiply(grad, sigmoid(op.inputs[0]))


@RegisterGradient("Softmax")
def _softmax_grad(op, grad):
    y, axis = op.outputs[0], op.attrs["axis"]
    inner = reduce_sum(multiply(grad, y), axis, keepdims=True)
    return multiply(subtract(grad, inner), y)


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    y, axis = op.outputs[0], op.attrs["axis"]
    return subtract(grad, multiply(reduce_sum(grad, axis, keepdims=True), exp(y)))


def _softmax_jacobian_product(logits: Tensor, grad: Tensor, axis: int) -> Tensor:
    probabilities = softmax(logits, axis=axis)
    inner = reduce_sum(multiply(grad, probabilities), axis, keepdims=True)
    return multiply(subtract(grad, inner), probabilities)


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _xent_grad(op, grad_loss, grad_backprop):
    logits, labels = op.inputs
    axis = op.attrs["axis"]
    grad_logits = grad_labels = None
    if grad_loss is not None:
        expanded = expand_dims(grad_loss, axis)
        grad_logits = multiply(expanded, op.outputs[1])
        grad_labels = multiply(expanded, negative(log_softmax(logits, axis=axis)))
    if grad_backprop is not None:
        # backprop = softmax(logits) - labels
        extra = _softmax_jacobian_product(logits, grad_backprop, axis)
        grad_logits = extra if grad_logits is None else add(grad_logits, extra)
        minus = negative(grad_backprop)
        grad_labels = minus if grad_labels is None else add(grad_labels, minus)
    return grad_logits, grad_labels


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op, grad_loss, grad_backprop):
    logits = op.inputs[0]
    grad_logits = None
    if grad_loss is not None:
        grad_logits = multiply(expand_dims(grad_loss, -1), op.outputs[1])
    if grad_backprop is not None:
        extra = _softmax_jacobian_product(logits, grad_backprop, -1)
        grad_logits = extra if grad_logits is None else add(grad_logits, extra)
    return grad_logits, None


@RegisterGradient("BiasAdd")
def _bias_add_grad(op, grad):
    value, bias = op.inputs
    if op.attrs["data_format"] == "NHWC":
        channels = shape(bias)
        from .array_ops import concat

        flat = reshape(grad, concat([[-1], channels], 0))
        return grad, reduce_sum(flat, 0)
    rank = value.shape.ndims
    if rank is None:
        raise ValueError(f"The gradient of '{op.name}' (NCHW) needs the rank of its input")
    return grad, reduce_sum(grad, [0] + list(range(2, rank)))


@RegisterGradient("Dropout")
def _dropout_grad(op, grad, _grad_of_mask):
    # The kernel's second output is the mask it drew, already scaled: 1/(1-rate) where an
    # element was kept, 0 where it was dropped (noise-shaped, so it broadcasts against x).
    if grad is None:
        return None, None
    return multiply(grad, op.outputs[1]), None


def constant_one(like: Tensor) -> Tensor:
    return convert_to_tensor(1, dtype=like.dtype)

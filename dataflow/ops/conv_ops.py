"""Convolution and pooling ops: ``conv2d`` and its transpose, 1-d, atrous, depthwise and
separable forms, ``max_pool`` and ``avg_pool``, with their gradients.  The user-facing names
live in ``df.nn``.

Layouts.  Every kernel computes in NHWC (batch, height, width, channels), the layout whose
im2col is one strided copy and whose channels are the contiguous axis of one matrix product.
An op in NCHW (``data_format="NCHW"``, TensorFlow's GPU layout) transposes its image inputs to
NHWC, runs the same kernel and transposes its image output back: two copies per op, which the
``layout`` graph pass (`dataflow.passes.layout`) removes along a chain of such ops.  Filters
are HWIO (``[height, width, in_channels, out_channels]``) in both layouts, as in TensorFlow.

im2col.  ``conv2d`` takes a strided window view of the padded input
(``sliding_window_view``), copies it once into an ``(N*OH*OW, KH*KW*C)`` matrix and multiplies
it with the filter reshaped to ``(KH*KW*C, O)``: one BLAS call does all the arithmetic.  The
input gradient is the same product transposed (the filter times the output gradient), giving
each output position's window of input gradients, which col2im adds back into place: one add
per window offset, ``KH*KW`` in all, each over the whole batch.  The filter gradient is the
im2col matrix of the input times the output gradient.  Pooling loops over the ``KH*KW`` window
offsets too, each step a max or sum over the whole output.

Attributes.  ``strides`` and ``dilations`` are spatial pairs ``(h, w)`` (TensorFlow's 4-lists
with 1 for batch and channels are accepted by the functions); ``padding`` is ``"SAME"``,
``"VALID"`` or ``"EXPLICIT"``, the last with ``explicit_paddings = [top, bottom, left,
right]``; ``data_format`` is ``"NHWC"`` (the default, also when absent) or ``"NCHW"``.

Differences from TensorFlow 1.x: ``atrous_conv2d`` and ``depthwise_conv2d`` with a ``rate``
are one dilated op here, where TensorFlow wraps an undilated one in ``SpaceToBatchND`` /
``BatchToSpaceND`` (same values, other op names); pooling across channels or the batch is not
supported; explicit paddings are accepted by the convolutions, not by pooling (as
``tf.compat.v1``'s pooling).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import intra_op
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op, define_op
from ..framework.tensor_conversion import convert_to_tensor
from . import conv_depthwise, conv_gemm
from .array_ops import _shape_from_vector, constant_vector, expand_dims, squeeze
from .conv2d_geometry import (  # noqa: F401 - defined there, reached here too
    TO_NCHW,
    TO_NHWC,
    _check_data_format,
    _check_rank4,
    _check_window_fits,
    _col2im,
    _conv_attrs,
    _explicit_pairs,
    _from_nhwc,
    _Geometry,
    _im2col_view,
    _image_shape,
    _layout,
    _layout_kernel,
    _output_size,
    _pad_spatial,
    _padding_attrs,
    _sizes,
    _spatial,
    _spatial_dims,
    _static_out,
    _static_output_hw,
    _to_nhwc,
    argument_errors,
)
from .math_ops import (
    FLOAT_TYPES,
    NUMERIC_TYPES,
    _product,
    check_dtype,
    check_same_dtype,
    convert_all,
)
from .math_ops import graph_of as _graph_of

__all__ = [
    "atrous_conv2d",
    "avg_pool",
    "conv1d",
    "conv2d",
    "conv2d_backprop_filter",
    "conv2d_backprop_input",
    "conv2d_transpose",
    "depthwise_conv2d",
    "depthwise_conv2d_native",
    "max_pool",
    "separable_conv2d",
]


def _threaded(extra: dict) -> dict:
    """An op's ``extra`` with ``intra_op_threads``: the Session gives the kernel its budget of
    intra-op threads (``ConfigProto.intra_op_parallelism_threads``) in its attrs."""
    return {**extra, "intra_op_threads": True}


# -- Conv2D ----------------------------------------------------------------------------------------
CONV_TYPES = FLOAT_TYPES | {_dtypes.int32}


def _infer_conv2d(op):
    x, f = op.inputs
    check_same_dtype((x, f), ("input", "filter"), op.type)
    check_dtype(x.dtype, CONV_TYPES, "input")
    _check_rank4(op, (x, "input"), (f, "filter"))
    data_format = op.attrs.get("data_format", "NHWC")
    n, h, w, c = _spatial_dims(x.shape, data_format)
    kh, kw, fc, o = f.shape.as_list() if f.shape.ndims else [None] * 4
    if c is not None and fc is not None and c != fc:
        raise ValueError(
            f"input has {c} channels but the filter expects {fc} (input {x.shape}, filter "
            f"{f.shape}, {data_format})"
        )
    oh, ow = _static_output_hw(h, w, kh, kw, op.attrs, "conv2d")
    return [(x.dtype, _image_shape([n, oh, ow, o], data_format))]


def _conv2d_nhwc(x, f, attrs):
    n, h, w, c = x.shape
    kh, kw, fc, o = f.shape
    if fc != c:
        raise InvalidArgumentError(
            None, None, f"input has {c} channels but the filter {f.shape} expects {fc}"
        )
    g = _Geometry(h, w, kh, kw, attrs)
    _check_window_fits(g, x.shape, "conv2d filter")
    if g.oh == 0 or g.ow == 0:  # a window exactly one larger than the input: TF's kernel too
        return np.zeros((n, g.oh, g.ow, o), dtype=x.dtype)
    if kh == kw == 1 and g.strides == (1, 1) and g.pads == ((0, 0), (0, 0)):
        # a 1x1 convolution is one product with no patches to make
        product = _product(x.reshape(-1, c), f.reshape(c, o), attrs.get("intra_op_threads"))
        return product.reshape(n, h, w, o)
    return conv_gemm.conv2d(x, f, g, attrs.get("intra_op_threads"))


# "layout": which inputs and outputs are images in the op's data_format, and which inputs are
# 4-vectors of sizes in that order (for the layout pass, `dataflow.passes.layout`).
define_op(
    "Conv2D", _infer_conv2d, _layout_kernel(_conv2d_nhwc), extra=_threaded(_layout((0,), (0,)))
)


def _conv2d_backprop_input_nhwc(x_shape, f, dy, attrs):
    n, h, w, c = x_shape
    kh, kw, fc, o = f.shape
    g = _Geometry(h, w, kh, kw, attrs)
    if fc != c or dy.shape != (n, g.oh, g.ow, o):
        raise InvalidArgumentError(
            None,
            None,
            f"the output gradient of shape {list(dy.shape)} does not match the convolution of "
            f"an input of shape {list(x_shape)} with a filter of shape {list(f.shape)}, "
            f"which has shape {[n, g.oh, g.ow, o]}",
        )
    if dy.size == 0 or f.size == 0:
        return np.zeros(x_shape, dtype=dy.dtype)
    return conv_gemm.conv2d_input_gradient(x_shape, f, dy, g, attrs.get("intra_op_threads"))


def _conv2d_backprop_filter_nhwc(x, f_shape, dy, attrs):
    n, h, w, c = x.shape
    kh, kw, fc, o = f_shape
    g = _Geometry(h, w, kh, kw, attrs)
    if fc != c or dy.shape != (n, g.oh, g.ow, o):
        raise InvalidArgumentError(
            None,
            None,
            f"the output gradient of shape {list(dy.shape)} does not match the convolution of "
            f"an input of shape {list(x.shape)} with a filter of shape {list(f_shape)}, "
            f"which has shape {[n, g.oh, g.ow, o]}",
        )
    if dy.size == 0:
        return np.zeros(f_shape, dtype=dy.dtype)
    return conv_gemm.conv2d_filter_gradient(x, dy, g, f_shape, attrs.get("intra_op_threads"))


def _infer_conv2d_backprop_input(op):
    sizes, f, dy = op.inputs
    check_same_dtype((f, dy), ("filter", "out_backprop"), op.type)
    check_dtype(dy.dtype, CONV_TYPES, "out_backprop")
    _check_rank4(op, (f, "filter"), (dy, "out_backprop"))
    shape = _shape_from_vector(sizes, f"{op.type}'s input_sizes")
    if shape.ndims not in (None, 4):
        raise ValueError(f"input_sizes of {op.type} must have 4 elements, got {shape}")
    data_format = op.attrs.get("data_format", "NHWC")
    n, h, w, c = _spatial_dims(shape, data_format)
    kh, kw, fc, o = f.shape.as_list() if f.shape.ndims else [None] * 4
    dn, dh, dw, do = _spatial_dims(dy.shape, data_format)
    for got, want, what in ((c, fc, "input channels"), (do, o, "output channels")):
        if got is not None and want is not None and got != want:
            raise ValueError(
                f"{what} do not match: {got} (sizes {shape}, out_backprop {dy.shape}) vs the "
                f"filter's {want} (filter {f.shape})"
            )
    oh, ow = _static_output_hw(h, w, kh, kw, op.attrs, op.type)
    for got, want in ((dh, oh), (dw, ow), (dn, n)):
        if got is not None and want is not None and got != want:
            raise ValueError(
                f"out_backprop of shape {dy.shape} does not match the convolution of an input of "
                f"shape {shape} with a filter of shape {f.shape} "
                f"(which has shape {_image_shape([n, oh, ow, o], data_format)})"
            )
    return [(dy.dtype, shape)]


def _infer_conv2d_backprop_filter(op):
    x, sizes, dy = op.inputs
    check_same_dtype((x, dy), ("input", "out_backprop"), op.type)
    _check_rank4(op, (x, "input"), (dy, "out_backprop"))
    shape = _shape_from_vector(sizes, f"{op.type}'s filter_sizes")
    if shape.ndims not in (None, 4):
        raise ValueError(f"filter_sizes of {op.type} must have 4 elements, got {shape}")
    return [(x.dtype, shape)]


define_op(
    "Conv2DBackpropInput",
    _infer_conv2d_backprop_input,
    _layout_kernel(_conv2d_backprop_input_nhwc, images=(2,), sizes=(0, "input_sizes")),
    extra=_threaded(_layout((2,), (0,), sizes=(0,))),
)
define_op(
    "Conv2DBackpropFilter",
    _infer_conv2d_backprop_filter,
    _layout_kernel(
        _conv2d_backprop_filter_nhwc,
        images=(0, 2),
        filter_sizes=(1, "filter_sizes"),
        image_output=False,
    ),
    extra=_threaded(_layout((0, 2), ())),
)


def conv2d(
    input,  # noqa: A002 - TensorFlow's argument name
    filter=None,  # noqa: A002
    strides=None,
    padding=None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
    filters=None,
) -> Tensor:
    """The 2-D convolution (cross-correlation) of ``input`` (NHWC or NCHW) with the
    ``[height, width, in_channels, out_channels]`` ``filter``.  ``strides`` and ``dilations``
    are an int, ``[h, w]`` or TensorFlow's 4-list in ``data_format`` order; ``padding`` is
    ``"SAME"``, ``"VALID"`` or 4 explicit ``[before, after]`` pairs in ``data_format`` order.
    """
    with argument_errors("Conv2D", name):
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    graph = _graph_of((input, filter))
    with graph.as_default(), graph.name_scope(name or "Conv2D") as scope:
        x, f = convert_all((input, filter), ("input", "filter"))
        return apply_op("Conv2D", (x, f), attrs, scope).outputs[0]


def _one_of(value, alias, name: str, alias_name: str):
    if alias is not None:
        if value is not None:
            raise ValueError(f"Cannot specify both '{name}' and '{alias_name}'")
        value = alias
    if value is None:
        raise ValueError(f"'{name}' must be given")
    return value


def _backprop_input(op_type, input_sizes, filter, out_backprop, attrs, name):  # noqa: A002
    """The ``op_type`` node (Conv2DBackpropInput or its depthwise twin) for checked ``attrs``."""
    graph = _graph_of((filter, out_backprop, input_sizes))
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        sizes = convert_to_tensor(input_sizes, dtype=_dtypes.int32, name="input_sizes")
        f, dy = convert_all((filter, out_backprop), ("filter", "out_backprop"))
        return apply_op(op_type, (sizes, f, dy), attrs, scope).outputs[0]


def _backprop_filter(op_type, input, filter_sizes, out_backprop, attrs, name):  # noqa: A002
    """The ``op_type`` node (Conv2DBackpropFilter or its depthwise twin) for checked ``attrs``."""
    graph = _graph_of((input, out_backprop, filter_sizes))
    with graph.as_default(), graph.name_scope(name or op_type) as scope:
        sizes = convert_to_tensor(filter_sizes, dtype=_dtypes.int32, name="filter_sizes")
        x, dy = convert_all((input, out_backprop), ("input", "out_backprop"))
        return apply_op(op_type, (x, sizes, dy), attrs, scope).outputs[0]


def conv2d_backprop_input(
    input_sizes,
    filter=None,  # noqa: A002
    out_backprop=None,
    strides=None,
    padding=None,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
    filters=None,
) -> Tensor:
    """The gradient of `conv2d` with respect to its input of shape ``input_sizes``."""
    with argument_errors("Conv2DBackpropInput", name):
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    return _backprop_input("Conv2DBackpropInput", input_sizes, filter, out_backprop, attrs, name)


def conv2d_backprop_filter(
    input,  # noqa: A002
    filter_sizes,
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu: bool = True,
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `conv2d` with respect to its filter of shape ``filter_sizes``."""
    with argument_errors("Conv2DBackpropFilter", name):
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    return _backprop_filter("Conv2DBackpropFilter", input, filter_sizes, out_backprop, attrs, name)


def conv2d_transpose(
    value=None,
    filter=None,  # noqa: A002
    output_shape=None,
    strides=None,
    padding: str = "SAME",
    data_format: str = "NHWC",
    name: Optional[str] = None,
    input=None,  # noqa: A002
    filters=None,
    dilations=None,
) -> Tensor:
    """The transpose of `conv2d` (the gradient of a convolution with respect to its input),
    sometimes called deconvolution: ``value`` of shape ``[batch, height, width, in_channels]``
    becomes ``output_shape``; the filter is ``[height, width, output_channels,
    in_channels]``.  One op of type ``Conv2DBackpropInput`` named ``conv2d_transpose``."""
    with argument_errors("Conv2DBackpropInput", name or "conv2d_transpose"):
        value = _one_of(value, input, "value", "input")
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        if output_shape is None:
            raise ValueError("conv2d_transpose needs an output_shape")
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    graph = _graph_of((value, filter, output_shape))
    with graph.as_default(), graph.name_scope(name or "conv2d_transpose") as scope:
        value, f = convert_all((value, filter), ("value", "filter"))
        sizes = convert_to_tensor(output_shape, dtype=_dtypes.int32, name="output_shape")
        with argument_errors("Conv2DBackpropInput", scope[:-1]):
            _check_transpose_channels(value, f, sizes, attrs["data_format"])
        return apply_op("Conv2DBackpropInput", (sizes, f, value), attrs, scope).outputs[0]


def _check_transpose_channels(value, f, sizes, data_format) -> None:
    channel = 1 if data_format == "NCHW" else 3
    dims = f.shape.as_list() if f.shape.ndims == 4 else [None] * 4
    value_dims = value.shape.as_list() if value.shape.ndims == 4 else [None] * 4
    if None not in (value_dims[channel], dims[3]) and value_dims[channel] != dims[3]:
        raise ValueError(
            f"input channels do not match filter's input channels, {value_dims[channel]} != "
            f"{dims[3]}"
        )
    known = constant_vector(sizes)
    if known is not None and len(known) == 4:
        if None not in (known[channel], dims[2]) and known[channel] != dims[2]:
            raise ValueError(
                f"output_shape does not match filter's output channels, {known[channel]} != "
                f"{dims[2]}"
            )


def atrous_conv2d(value, filters, rate, padding, name: Optional[str] = None) -> Tensor:
    """`conv2d` of the NHWC ``value`` with ``filters`` dilated by ``rate`` (holes between the
    filter's taps), stride 1.  One dilated ``Conv2D`` named ``convolution``, where TensorFlow
    wraps an undilated one in space-to-batch ops; the values are the same."""
    with argument_errors("Conv2D", name or "convolution"):
        if int(rate) < 1:
            raise ValueError(f"rate {rate} cannot be less than one")
    return conv2d(value, filters, 1, padding, dilations=int(rate), name=name or "convolution")


def conv1d(
    value=None,
    filters=None,
    stride=None,
    padding=None,
    use_cudnn_on_gpu=None,
    data_format=None,
    name: Optional[str] = None,
    input=None,  # noqa: A002
    dilations=None,
) -> Tensor:
    """The 1-D convolution of ``value`` (``[batch, width, channels]``, NWC, or NCW) with the
    ``[width, in_channels, out_channels]`` ``filters``: a `conv2d` over a height of 1 between
    ``ExpandDims`` and ``Squeeze``, under the name scope ``conv1d`` as in TensorFlow."""
    with argument_errors("Conv2D", name or "conv1d"):
        value = _one_of(value, input, "value", "input")
        data_format = _check_data_format(data_format, ("NWC", "NCW"))
        stride = _one_dimension(stride, "stride", data_format)
        dilation = _one_dimension(dilations, "dilations", data_format, default=1)
        if not isinstance(padding, str):
            raise ValueError(f"conv1d's padding must be 'SAME' or 'VALID', got {padding!r}")
    graph = _graph_of((value, filters))
    with graph.as_default(), graph.name_scope(name or "conv1d") as scope:
        value, filters = convert_all((value, filters), ("value", "filters"))
        spatial = 2 if data_format == "NCW" else 1
        x = expand_dims(value, spatial, name="ExpandDims")
        f = expand_dims(filters, 0, name="ExpandDims_1")
        y = conv2d(
            x,
            f,
            (1, stride),
            padding,
            data_format="NCHW" if data_format == "NCW" else "NHWC",
            dilations=(1, dilation),
            name=scope,
        )
        return squeeze(y, [spatial], name="Squeeze")


def _one_dimension(value, what: str, data_format: str, default=None) -> int:
    if value is None:
        if default is None:
            raise ValueError(f"{what} must be given")
        value = default
    values = [int(value)] if isinstance(value, (int, np.integer)) else [int(v) for v in value]
    if len(values) == 3:
        values = [values[2] if data_format == "NCW" else values[1]]
    if len(values) != 1 or values[0] < 1:
        raise ValueError(f"{what} must be a positive int or a list of 1 or 3, got {value!r}")
    return values[0]


# -- depthwise and separable convolution -----------------------------------------------------------
def _infer_depthwise(op):
    x, f = op.inputs
    check_same_dtype((x, f), ("input", "filter"), op.type)
    check_dtype(x.dtype, FLOAT_TYPES, "input")
    _check_rank4(op, (x, "input"), (f, "filter"))
    data_format = op.attrs.get("data_format", "NHWC")
    n, h, w, c = _spatial_dims(x.shape, data_format)
    kh, kw, fc, multiplier = f.shape.as_list() if f.shape.ndims else [None] * 4
    if c is not None and fc is not None and c != fc:
        raise ValueError(
            f"input has {c} channels but the depthwise filter expects {fc} (input {x.shape}, "
            f"filter {f.shape})"
        )
    c = c if c is not None else fc
    oh, ow = _static_output_hw(h, w, kh, kw, op.attrs, "depthwise_conv2d")
    out_c = None if c is None or multiplier is None else c * multiplier
    return [(x.dtype, _image_shape([n, oh, ow, out_c], data_format))]


def _check_depthwise(x_shape, f_shape):
    if x_shape[3] != f_shape[2]:
        raise InvalidArgumentError(
            None,
            None,
            f"input has {x_shape[3]} channels but the filter {f_shape} expects {f_shape[2]}",
        )


def _depthwise_nhwc(x, f, attrs):
    _check_depthwise(x.shape, f.shape)
    n, h, w, c = x.shape
    kh, kw, _, multiplier = f.shape
    g = _Geometry(h, w, kh, kw, attrs)
    _check_window_fits(g, x.shape, "depthwise_conv2d filter")
    if min(g.oh, g.ow, n, c) == 0:
        return np.zeros((n, g.oh, g.ow, c * multiplier), dtype=x.dtype)
    return conv_depthwise.depthwise_conv2d(x, f, g, attrs.get("intra_op_threads"))


def _depthwise_backprop_input_nhwc(x_shape, f, dy, attrs):
    _check_depthwise(x_shape, f.shape)
    n, h, w, c = x_shape
    kh, kw, _, multiplier = f.shape
    g = _Geometry(h, w, kh, kw, attrs)
    if min(n, c, h, w) == 0 or dy.size == 0:
        return np.zeros(x_shape, dtype=np.result_type(f, dy))
    return conv_depthwise.depthwise_input_gradient(x_shape, f, dy, g, attrs.get("intra_op_threads"))


def _depthwise_backprop_filter_nhwc(x, f_shape, dy, attrs):
    _check_depthwise(x.shape, f_shape)
    n, h, w, c = x.shape
    kh, kw, _, multiplier = f_shape
    g = _Geometry(h, w, kh, kw, attrs)
    if dy.size == 0 or x.size == 0:
        return np.zeros(f_shape, dtype=np.result_type(x, dy))
    return conv_depthwise.depthwise_filter_gradient(
        x, dy, g, f_shape, attrs.get("intra_op_threads")
    )


def _infer_like_sizes(sizes_index: int, like_index: int):
    def infer(op):
        sizes, like = op.inputs[sizes_index], op.inputs[like_index]
        return [(like.dtype, _shape_from_vector(sizes, f"{op.type}'s sizes"))]

    return infer


define_op(
    "DepthwiseConv2dNative",
    _infer_depthwise,
    _layout_kernel(_depthwise_nhwc),
    extra=_threaded(_layout((0,), (0,))),
)
define_op(
    "DepthwiseConv2dNativeBackpropInput",
    _infer_like_sizes(0, 2),
    _layout_kernel(_depthwise_backprop_input_nhwc, images=(2,), sizes=(0, "input_sizes")),
    extra=_threaded(_layout((2,), (0,), sizes=(0,))),
)
define_op(
    "DepthwiseConv2dNativeBackpropFilter",
    _infer_like_sizes(1, 2),
    _layout_kernel(
        _depthwise_backprop_filter_nhwc,
        images=(0, 2),
        filter_sizes=(1, "filter_sizes"),
        image_output=False,
    ),
    extra=_threaded(_layout((0, 2), ())),
)


def depthwise_conv2d_native(
    input,  # noqa: A002
    filter,  # noqa: A002
    strides,
    padding,
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """Each input channel convolved with its own ``channel_multiplier`` filters: ``filter`` is
    ``[height, width, in_channels, channel_multiplier]`` and output channel
    ``c * channel_multiplier + q`` is channel ``c`` convolved with ``filter[:, :, c, q]``."""
    with argument_errors("DepthwiseConv2dNative", name):
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    graph = _graph_of((input, filter))
    with graph.as_default(), graph.name_scope(name or "DepthwiseConv2dNative") as scope:
        x, f = convert_all((input, filter), ("input", "filter"))
        return apply_op("DepthwiseConv2dNative", (x, f), attrs, scope).outputs[0]


def depthwise_conv2d(
    input,  # noqa: A002
    filter,  # noqa: A002
    strides,
    padding,
    rate=None,
    name: Optional[str] = None,
    data_format=None,
    dilations=None,
) -> Tensor:
    """`depthwise_conv2d_native` named ``depthwise``, with ``rate`` (an int or ``[h, w]``) as
    the dilation; ``strides`` must be 1 where ``rate`` is above 1, as in TensorFlow."""
    with argument_errors("DepthwiseConv2dNative", name or "depthwise"):
        if dilations is not None:
            rate = _one_of(rate, dilations, "rate", "dilations")
        rate = _spatial(rate, "rate", default=1)
        data_format = _check_data_format(data_format)
        stride_pair = _spatial(strides, "strides", data_format)
        if max(rate) > 1 and max(stride_pair) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    return depthwise_conv2d_native(
        input, filter, strides, padding, data_format, rate, name=name or "depthwise"
    )


def separable_conv2d(
    input,  # noqa: A002
    depthwise_filter,
    pointwise_filter,
    strides,
    padding,
    rate=None,
    name: Optional[str] = None,
    data_format=None,
    dilations=None,
) -> Tensor:
    """A `depthwise_conv2d` followed by a 1x1 `conv2d` with ``pointwise_filter``
    (``[1, 1, in_channels * channel_multiplier, out_channels]``), under the name scope
    ``separable_conv2d`` (ops ``depthwise`` and then the pointwise ``Conv2D`` named after the
    scope, as in TensorFlow)."""
    graph = _graph_of((input, depthwise_filter, pointwise_filter))
    with graph.as_default(), graph.name_scope(name or "separable_conv2d") as scope:
        pointwise_filter = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        dims = pointwise_filter.shape.as_list() if pointwise_filter.shape.ndims else None
        with argument_errors("Conv2D", scope[:-1]):
            if dims is not None and (len(dims) != 4 or dims[0] != 1 or dims[1] != 1):
                raise ValueError(f"pointwise_filter must be [1, 1, in, out], got {dims}")
        depthwise = depthwise_conv2d(
            input, depthwise_filter, strides, padding, rate, "depthwise", data_format, dilations
        )
        return conv2d(
            depthwise, pointwise_filter, 1, "VALID", data_format=data_format or "NHWC", name=scope
        )


# -- pooling ---------------------------------------------------------------------------------------
def _infer_pool(op):
    (x,) = op.inputs
    allowed = FLOAT_TYPES if op.type == "AvgPool" else NUMERIC_TYPES
    check_dtype(x.dtype, allowed, "value")
    data_format = op.attrs.get("data_format", "NHWC")
    if x.shape.ndims not in (None, 4):
        raise ValueError(f"value must be 4-D ({data_format}), got shape {x.shape}")
    n, h, w, c = _spatial_dims(x.shape, data_format)
    kh, kw = op.attrs["ksize"]
    oh, ow = _static_output_hw(h, w, kh, kw, op.attrs, op.type)
    return [(x.dtype, _image_shape([n, oh, ow, c], data_format))]


def _pool_geometry(x, attrs) -> _Geometry:
    kh, kw = attrs["ksize"]
    g = _Geometry(x.shape[1], x.shape[2], kh, kw, attrs)
    _check_window_fits(g, x.shape, "pooling")
    return g


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


# Input elements from which a pooling kernel shares its images among the intra-op threads (a
# LeNet's first pooling layer at batch 64 has 1.6 million): each image is pooled alone, so the
# blocks' values are the whole batch's.
POOL_PARALLEL_ELEMENTS = 1 << 20


def _by_images(x, attrs, run) -> None:
    """``run(images)`` for slices of ``x``'s images that cover them in order: one slice for a
    small ``x``, else blocks of images shared among the op's intra-op threads."""
    images = x.shape[0]
    threads = attrs.get("intra_op_threads")
    if x.size < POOL_PARALLEL_ELEMENTS or images < 2 or threads == 1:
        run(slice(0, images))
        return
    count = min(images, 8)
    edges = [images * k // count for k in range(count + 1)]
    intra_op.run_blocks(count, lambda k: run(slice(edges[k], edges[k + 1])), threads)


def _max_pool_nhwc(x, attrs):
    g = _pool_geometry(x, attrs)
    # TensorFlow's max starts from the lowest finite value and a NaN never wins: fmax from that
    # start gives the same (a window of NaNs and -infs gives the lowest value).
    lowest = _lowest(x.dtype)
    out = np.full((x.shape[0], g.oh, g.ow, x.shape[3]), lowest, dtype=x.dtype)
    if g.oh == 0 or g.ow == 0:
        return out

    def run(images: slice) -> None:
        padded = _pad_spatial(x[images], g.pads, lowest)
        pooled = out[images]
        for i in range(g.kh):
            for j in range(g.kw):
                rows, cols = g.offset_slices(i, j)
                np.fmax(pooled, padded[:, rows, cols], out=pooled)

    _by_images(x, attrs, run)
    return out


def _valid_counts(size, window, stride, out, before):
    """How many of each output window's positions fall inside the unpadded input."""
    starts = np.arange(out) * stride - before
    return np.minimum(starts + window, size) - np.maximum(starts, 0)


def _window_counts(x_shape, g: _Geometry, dtype):
    rows = _valid_counts(x_shape[1], g.kh, g.strides[0], g.oh, g.pads[0][0])
    cols = _valid_counts(x_shape[2], g.kw, g.strides[1], g.ow, g.pads[1][0])
    return np.multiply.outer(rows, cols).astype(dtype)[:, :, None]


def _avg_pool_nhwc(x, attrs):
    g = _pool_geometry(x, attrs)
    if g.oh == 0 or g.ow == 0:
        return np.zeros((x.shape[0], g.oh, g.ow, x.shape[3]), dtype=x.dtype)
    padded = _pad_spatial(x, g.pads, 0)
    out = None
    for i in range(g.kh):
        for j in range(g.kw):
            rows, cols = g.offset_slices(i, j)
            part = padded[:, rows, cols]
            out = part.copy() if out is None else np.add(out, part, out=out)
    return out / _window_counts(x.shape, g, x.dtype)


# "intra_op_threads": the Session gives the kernels their budget of intra-op threads.
define_op(
    "MaxPool",
    _infer_pool,
    _layout_kernel(_max_pool_nhwc),
    extra={**_layout((0,), (0,)), "intra_op_threads": True},
)
define_op("AvgPool", _infer_pool, _layout_kernel(_avg_pool_nhwc), extra=_layout((0,), (0,)))


def _pool_attrs(ksize, strides, padding, data_format) -> dict:
    data_format = _check_data_format(data_format)
    return {
        "ksize": _spatial(ksize, "ksize", data_format),
        "strides": _spatial(strides, "strides", data_format),
        "data_format": data_format,
        **_padding_attrs(padding, data_format, explicit_allowed=False),
    }


def _pool(op_type, value, ksize, strides, padding, data_format, name, input):  # noqa: A002
    with argument_errors(op_type, name):
        value = _one_of(value, input, "value", "input")
        attrs = _pool_attrs(ksize, strides, padding, data_format)
    return apply_op(op_type, (value,), attrs, name or op_type).outputs[0]


def max_pool(
    value,
    ksize,
    strides,
    padding,
    data_format: str = "NHWC",
    name: Optional[str] = None,
    input=None,  # noqa: A002
) -> Tensor:
    """The maximum over each ``ksize`` window of ``value`` (NHWC or NCHW; SAME padding never
    wins, and a NaN never wins over a number)."""
    return _pool("MaxPool", value, ksize, strides, padding, data_format, name, input)


def avg_pool(
    value,
    ksize,
    strides,
    padding,
    data_format: str = "NHWC",
    name: Optional[str] = None,
    input=None,  # noqa: A002
) -> Tensor:
    """The mean over each ``ksize`` window of ``value`` (NHWC or NCHW); with SAME padding a
    window at the border averages only the elements inside the input, as in TensorFlow."""
    return _pool("AvgPool", value, ksize, strides, padding, data_format, name, input)


# -- backward ops of pooling -----------------------------------------------------------------------
def _first_maxima(x, y, g: _Geometry):
    """Where each max-pooling window of ``x`` (whose pooled output is ``y``) has its first
    maximum in row-major window order: the element TensorFlow routes the window's gradient to.

    Yields, for each offset ``(i, j)`` within a window, the slices ``(rows, cols)`` of the
    padded input that offset covers in every window and the mask, shaped like ``y``, of the
    windows whose first maximum is at that offset.
    """
    padded = _pad_spatial(x, g.pads, -np.inf if x.dtype.kind == "f" else _lowest(x.dtype))
    taken = np.zeros(y.shape, dtype=bool)
    for i in range(g.kh):
        for j in range(g.kw):
            rows, cols = g.offset_slices(i, j)
            first = padded[:, rows, cols] == y
            first &= ~taken
            taken |= first
            yield rows, cols, first


def _padded_zeros(x_shape, g: _Geometry, dtype):
    n, h, w, c = x_shape
    (top, bottom), (left, right) = g.pads
    return np.zeros((n, h + top + bottom, w + left + right, c), dtype=dtype)


def _crop(padded, x_shape, g: _Geometry):
    (top, _), (left, _) = g.pads
    return padded[:, top : top + x_shape[1], left : left + x_shape[2]]


def _max_pool_grad_nhwc(x, y, dy, attrs):
    g = _pool_geometry(x, attrs)
    if g.strides == (g.kh, g.kw) and y.size:
        grad = _padded_zeros(x.shape, g, dy.dtype)
        _by_images(
            x,
            attrs,
            lambda images: _tiled_max_pool_grad(x[images], y[images], dy[images], g, grad[images]),
        )
        return _crop(grad, x.shape, g)
    grad = _padded_zeros(x.shape, g, dy.dtype)
    if g.strides[0] >= g.kh and g.strides[1] >= g.kw:
        # Windows do not overlap: each offset writes its own elements, no accumulation.
        for rows, cols, first in _first_maxima(x, y, g):
            np.copyto(grad[:, rows, cols], dy, where=first)
    else:
        for rows, cols, first in _first_maxima(x, y, g):
            grad[:, rows, cols] += np.where(first, dy, 0)
    return _crop(grad, x.shape, g)


def _tiled_max_pool_grad(x, y, dy, g: _Geometry, grad) -> None:
    """MaxPoolGrad where the windows tile the padded input (strides equal to the window, the
    common 2x2 pool), into ``grad`` (zeros of the padded input's shape): the padded input seen
    as ``[n, oh, kh, ow, kw, c]`` without a copy, and each window offset's gradient written
    once into the same view of ``grad``, from a mask of the windows whose first maximum is at
    that offset."""
    n, oh, ow, c = y.shape
    lowest = -np.inf if x.dtype.kind == "f" else _lowest(x.dtype)
    padded = _pad_spatial(x, g.pads, lowest)[:, : oh * g.kh, : ow * g.kw]
    windows = padded.reshape(n, oh, g.kh, ow, g.kw, c)
    grad_windows = grad[:, : oh * g.kh, : ow * g.kw].reshape(n, oh, g.kh, ow, g.kw, c)
    taken = None  # the windows whose first maximum is at an offset already visited
    for i in range(g.kh):
        for j in range(g.kw):
            first = windows[:, :, i, :, j, :] == y
            if taken is None:
                taken = first.copy()
            else:
                first &= ~taken
                taken |= first
            np.multiply(dy, first, out=grad_windows[:, :, i, :, j, :])


def _max_pool_grad_grad_nhwc(x, y, grad, attrs):
    # Each window reads the gradient at its first maximum (where MaxPoolGrad wrote).
    g = _pool_geometry(x, attrs)
    padded_grad = _pad_spatial(grad, g.pads, 0)
    out = np.zeros(y.shape, dtype=grad.dtype)
    for rows, cols, first in _first_maxima(x, y, g):
        out += np.where(first, padded_grad[:, rows, cols], 0)
    return out


def _avg_pool_grad_nhwc(x_shape, dy, attrs):
    kh, kw = attrs["ksize"]
    g = _Geometry(x_shape[1], x_shape[2], kh, kw, attrs)
    share = dy / _window_counts(x_shape, g, dy.dtype)
    grad = _padded_zeros(x_shape, g, dy.dtype)
    for i in range(kh):
        for j in range(kw):
            rows, cols = g.offset_slices(i, j)
            grad[:, rows, cols] += share
    return _crop(grad, x_shape, g)


define_op(
    "MaxPoolGrad",
    lambda op: [(op.inputs[2].dtype, op.inputs[0].shape)],
    _layout_kernel(_max_pool_grad_nhwc, images=(0, 1, 2)),
    extra={**_layout((0, 1, 2), (0,)), "intra_op_threads": True},
)
# ``MaxPoolGradGrad(x, y, grad)``: the transpose of MaxPoolGrad in its last input: each output
# window takes ``grad`` at the position of the window's maximum in ``x`` (TensorFlow's op).
define_op(
    "MaxPoolGradGrad",
    lambda op: [(op.inputs[2].dtype, op.inputs[1].shape)],
    _layout_kernel(_max_pool_grad_grad_nhwc, images=(0, 1, 2)),
    extra=_layout((0, 1, 2), (0,)),
)
define_op(
    "AvgPoolGrad",
    _infer_like_sizes(0, 1),
    _layout_kernel(_avg_pool_grad_nhwc, images=(1,), sizes=(0, "orig_input_shape")),
    extra=_layout((1,), (0,), sizes=(0,)),
)


# -- gradients -------------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402
from .array_ops import shape  # noqa: E402

_CONV_ATTRS = ("strides", "padding", "dilations", "data_format", "explicit_paddings")
_POOL_ATTRS = ("ksize", "strides", "padding", "data_format")


def _copy_attrs(op, names) -> dict:
    return {k: op.attrs[k] for k in names if k in op.attrs}


def _conv_pair(input_type: str, filter_type: str):
    """Registers the gradients of a convolution op and of its two backward ops, each of which
    is linear in two of its inputs: the gradient of one is a convolution op of the three
    kinds, with the same attributes."""

    def conv(op_type, inputs, attrs):
        return apply_op(op_type, inputs, attrs, op_type).outputs[0]

    forward = {"Conv2DBackpropInput": "Conv2D"}.get(input_type, "DepthwiseConv2dNative")

    @RegisterGradient(forward)
    def _forward_grad(op, grad):
        x, f = op.inputs
        attrs = _copy_attrs(op, _CONV_ATTRS)
        return (
            conv(input_type, (shape(x), f, grad), attrs),
            conv(filter_type, (x, shape(f), grad), attrs),
        )

    @RegisterGradient(input_type)
    def _input_grad(op, grad):
        _, f, dy = op.inputs
        attrs = _copy_attrs(op, _CONV_ATTRS)
        return None, conv(filter_type, (grad, shape(f), dy), attrs), conv(forward, (grad, f), attrs)

    @RegisterGradient(filter_type)
    def _filter_grad(op, grad):
        x, _, dy = op.inputs
        attrs = _copy_attrs(op, _CONV_ATTRS)
        return conv(input_type, (shape(x), grad, dy), attrs), None, conv(forward, (x, grad), attrs)


_conv_pair("Conv2DBackpropInput", "Conv2DBackpropFilter")
_conv_pair("DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter")


@RegisterGradient("MaxPool")
def _max_pool_grad(op, grad):
    inputs = (op.inputs[0], op.outputs[0], grad)
    return apply_op("MaxPoolGrad", inputs, _copy_attrs(op, _POOL_ATTRS), "MaxPoolGrad").outputs[0]


# MaxPoolGrad and MaxPoolGradGrad are linear in their last input and piecewise constant in the
# others (the argmax does not move under a small change), whose gradient is zero: None.
@RegisterGradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    x, y, _ = op.inputs
    attrs = _copy_attrs(op, _POOL_ATTRS)
    return None, None, apply_op("MaxPoolGradGrad", (x, y, grad), attrs).outputs[0]


@RegisterGradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    attrs = _copy_attrs(op, _POOL_ATTRS)
    return None, None, apply_op("MaxPoolGrad", (x, y, grad), attrs).outputs[0]


@RegisterGradient("AvgPool")
def _avg_pool_grad(op, grad):
    inputs = (shape(op.inputs[0]), grad)
    return apply_op("AvgPoolGrad", inputs, _copy_attrs(op, _POOL_ATTRS), "AvgPoolGrad").outputs[0]


@RegisterGradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return None, apply_op("AvgPool", (grad,), _copy_attrs(op, _POOL_ATTRS), "AvgPool").outputs[0]

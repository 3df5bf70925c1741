"""Convolution and pooling over any number of spatial dimensions: ``conv3d`` and its backward
ops and transpose, ``max_pool3d``/``avg_pool3d`` with their gradients, TensorFlow's generic
``conv`` op (grouped, several batch dimensions), and the functions that pick an op by rank
(``convolution``, ``conv_transpose``, ``pool``), plus the 1-d and atrous transposes and the
other names of the 2-d backward ops.  The user-facing names live in ``df.nn``.

The kernels compute channels-last (``[batch, *spatial, channels]``); an op in a channels-first
layout (``NCDHW``) transposes in and out.  A convolution is one strided window view of the
padded input (``sliding_window_view``) copied into an im2col matrix and one matrix product with
the filter reshaped to ``(window * in_channels, out_channels)``; the input gradient is the
product transposed, added back window offset by window offset (col2im); the filter gradient is
the im2col matrix times the output gradient.  Geometry follows `conv_ops` (TensorFlow's SAME
padding puts the odd element after).
"""

from __future__ import annotations

from typing import Optional

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..framework.op_registry import apply_op
from ..framework.tensor_conversion import convert_to_tensor
from . import array_ops as _a
from .conv_geometry import (  # noqa: F401 - defined there, reached here too
    _CONV_ATTRS,
    _POOL_ATTRS,
    _apply,
    _attrs3d,
    _check_rank,
    _col2im,
    _copy,
    _crop,
    _dims_last,
    _explicit_pairs,
    _first_maxima,
    _Geometry,
    _infer_like_sizes,
    _infer_pool,
    _kernel,
    _no_gradient,
    _op,
    _padding,
    _spatial_list,
    _static_out,
    _valid_counts,
    _window_counts,
    _windows,
    get_op_def,
)
from .conv_ops import (
    _backprop_filter,
    _backprop_input,
    _check_data_format,
    _conv_attrs,
    _one_of,
    argument_errors,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
)
from .extra_pool_ops import (  # noqa: F401 - defined there, reached here too
    dilation2d,
    erosion2d,
    extract_volume_patches,
    fractional_avg_pool,
    fractional_max_pool,
    max_pool_with_argmax,
    with_space_to_batch,
)
from .math_ops import convert_all
from .math_ops import graph_of as _graph_of

__all__ = [
    "atrous_conv2d_transpose",
    "avg_pool3d",
    "conv1d_transpose",
    "conv3d",
    "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2",
    "conv3d_transpose",
    "conv_transpose",
    "convolution",
    "depthwise_conv2d_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_native_backprop_input",
    "dilation2d",
    "erosion2d",
    "fractional_avg_pool",
    "fractional_max_pool",
    "max_pool3d",
    "max_pool_with_argmax",
    "pool",
    "with_space_to_batch",
]


# -- 3-d convolution ---------------------------------------------------------------------------
_DILATIONS_5 = [1, 1, 1, 1, 1]


def conv3d(
    input,  # noqa: A002
    filter=None,  # noqa: A002
    strides=None,
    padding=None,
    data_format: str = "NDHWC",
    dilations=_DILATIONS_5,
    name: Optional[str] = None,
    filters=None,
) -> Tensor:
    """The 3-d convolution of ``input`` (NDHWC or NCDHW) with the ``[depth, height, width,
    in_channels, out_channels]`` ``filter``; ``strides`` and ``dilations`` are 5-lists in
    ``data_format`` order (or 3 spatial values)."""
    with argument_errors("Conv3D", name):
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        attrs = _attrs3d(strides, padding, dilations, data_format)
    graph = _graph_of((input, filter))
    with graph.as_default(), graph.name_scope(name or "Conv3D") as scope:
        x, f = convert_all((input, filter), ("input", "filter"))
        return apply_op("Conv3D", (x, f), attrs, scope).outputs[0]


def conv3d_backprop_filter_v2(
    input,  # noqa: A002
    filter_sizes,
    out_backprop,
    strides,
    padding,
    data_format: str = "NDHWC",
    dilations=_DILATIONS_5,
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `conv3d` with respect to its filter of shape ``filter_sizes``."""
    with argument_errors("Conv3DBackpropFilterV2", name):
        attrs = _attrs3d(strides, padding, dilations, data_format)
    graph = _graph_of((input, out_backprop, filter_sizes))
    with graph.as_default(), graph.name_scope(name or "Conv3DBackpropFilterV2") as scope:
        sizes = convert_to_tensor(filter_sizes, dtype=_dtypes.int32, name="filter_sizes")
        x, dy = convert_all((input, out_backprop), ("input", "out_backprop"))
        return apply_op("Conv3DBackpropFilterV2", (x, sizes, dy), attrs, scope).outputs[0]


conv3d_backprop_filter = conv3d_backprop_filter_v2


def conv3d_transpose(
    value,
    filter=None,  # noqa: A002
    output_shape=None,
    strides=None,
    padding: str = "SAME",
    data_format: str = "NDHWC",
    name: Optional[str] = None,
    input=None,  # noqa: A002
    filters=None,
    dilations=None,
) -> Tensor:
    """The transpose of `conv3d` (its gradient with respect to the input): ``value`` of shape
    ``[batch, depth, height, width, in_channels]`` becomes ``output_shape``; the filter is
    ``[depth, height, width, output_channels, in_channels]``."""
    with argument_errors("Conv3DBackpropInputV2", name or "conv3d_transpose"):
        value = _one_of(value, input, "value", "input")
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        if output_shape is None:
            raise ValueError("conv3d_transpose needs an output_shape")
        attrs = _attrs3d(strides, padding, dilations, data_format)
    return _backprop_input(
        "Conv3DBackpropInputV2", output_shape, filter, value, attrs, name or "conv3d_transpose"
    )


# -- other names of the 2-d backward ops ---------------------------------------------------------
def depthwise_conv2d_native_backprop_input(
    input_sizes,
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `depthwise_conv2d_native` with respect to its input of shape
    ``input_sizes``."""
    op_type = "DepthwiseConv2dNativeBackpropInput"
    with argument_errors(op_type, name):
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    return _backprop_input(op_type, input_sizes, filter, out_backprop, attrs, name)


def depthwise_conv2d_native_backprop_filter(
    input,  # noqa: A002
    filter_sizes,
    out_backprop,
    strides,
    padding,
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `depthwise_conv2d_native` with respect to its filter of shape
    ``filter_sizes``."""
    op_type = "DepthwiseConv2dNativeBackpropFilter"
    with argument_errors(op_type, name):
        attrs = _conv_attrs(strides, padding, dilations, data_format)
    return _backprop_filter(op_type, input, filter_sizes, out_backprop, attrs, name)


depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter


def _explicit(padding, explicit_paddings):
    """``padding`` for the 2-d functions, with TensorFlow's flat ``explicit_paddings`` (8 ints)
    turned into the 4 pairs those take."""
    if padding == "EXPLICIT":
        flat = [int(v) for v in explicit_paddings or ()]
        if len(flat) != 8:
            raise ValueError(f"explicit_paddings must be 8 ints, got {explicit_paddings!r}")
        return [flat[i : i + 2] for i in range(0, 8, 2)]
    if explicit_paddings:
        raise ValueError(
            f"explicit_paddings must be empty unless padding is 'EXPLICIT', got padding {padding!r}"
        )
    return padding


def conv2d_backprop_input_v2(
    input,  # noqa: A002
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu: bool = True,
    explicit_paddings=[],  # noqa: B006 - TensorFlow's default, never mutated
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `conv2d` with respect to its input, whose shape is that of the tensor
    ``input`` (whose values are not read)."""
    with argument_errors("Conv2DBackpropInput", name):
        padding = _explicit(padding, explicit_paddings)
    graph = _graph_of((input, filter, out_backprop))
    with graph.as_default():
        sizes = _a.shape(convert_to_tensor(input, name="input"))
        return conv2d_backprop_input(
            sizes, filter, out_backprop, strides, padding, use_cudnn_on_gpu, data_format,
            dilations, name=name,
        )  # fmt: skip


def conv2d_backprop_filter_v2(
    input,  # noqa: A002
    filter,  # noqa: A002
    out_backprop,
    strides,
    padding,
    use_cudnn_on_gpu: bool = True,
    explicit_paddings=[],  # noqa: B006 - TensorFlow's default, never mutated
    data_format: str = "NHWC",
    dilations=[1, 1, 1, 1],  # noqa: B006 - TensorFlow's default, never mutated
    name: Optional[str] = None,
) -> Tensor:
    """The gradient of `conv2d` with respect to its filter, whose shape is that of the tensor
    ``filter`` (whose values are not read)."""
    with argument_errors("Conv2DBackpropFilter", name):
        padding = _explicit(padding, explicit_paddings)
    graph = _graph_of((input, filter, out_backprop))
    with graph.as_default():
        sizes = _a.shape(convert_to_tensor(filter, name="filter"))
        return conv2d_backprop_filter(
            input, sizes, out_backprop, strides, padding, use_cudnn_on_gpu, data_format,
            dilations, name=name,
        )  # fmt: skip


# -- pooling in 3-d ----------------------------------------------------------------------------
def _pool3d(op_type, input, ksize, strides, padding, data_format, name):  # noqa: A002
    with argument_errors(op_type, name):
        data_format = _check_data_format(data_format, ("NDHWC", "NCDHW"))
        first = data_format == "NCDHW"
        attrs = {
            "ksize": _spatial_list(ksize, "ksize", 3, first),
            "strides": _spatial_list(strides, "strides", 3, first),
            "padding": _padding(padding),
            "data_format": data_format,
        }
    return apply_op(op_type, (input,), attrs, name or op_type).outputs[0]


def max_pool3d(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format: str = "NDHWC",
    name: Optional[str] = None,
) -> Tensor:
    """The maximum over each ``ksize`` window of the 5-d ``input`` (NDHWC or NCDHW)."""
    return _pool3d("MaxPool3D", input, ksize, strides, padding, data_format, name)


def avg_pool3d(
    input,  # noqa: A002
    ksize,
    strides,
    padding,
    data_format: str = "NDHWC",
    name: Optional[str] = None,
) -> Tensor:
    """The mean over each ``ksize`` window of the 5-d ``input``; with SAME padding a window at
    the border averages only the elements inside the input, as in TensorFlow."""
    return _pool3d("AvgPool3D", input, ksize, strides, padding, data_format, name)


# -- by rank -----------------------------------------------------------------------------------
_FIRST_FORMATS = ("NCW", "NCHW", "NCDHW")


def _rank_of(x: Tensor, what: str) -> int:
    rank = x.shape.ndims
    if rank not in (3, 4, 5):
        raise ValueError(f"{what} needs an input of known rank 3, 4 or 5, got shape {x.shape}")
    return rank - 2


def convolution(
    input,  # noqa: A002
    filter=None,  # noqa: A002
    padding=None,
    strides=None,
    dilation_rate=None,
    name: Optional[str] = None,
    data_format=None,
    filters=None,
    dilations=None,
) -> Tensor:
    """The convolution of ``input`` with ``filter`` over 1, 2 or 3 spatial dimensions (by the
    rank of ``input``): `conv1d`, `conv2d` or `conv3d` with ``strides`` and ``dilation_rate``
    of one value per spatial dimension (strides above 1 with a dilation above 1 is an error, as
    in TensorFlow).  The op is named ``convolution``."""
    from .conv_ops import conv1d, conv2d

    name = name or "convolution"
    with argument_errors("Conv", name):
        filter = _one_of(filter, filters, "filter", "filters")  # noqa: A001
        if dilations is not None:
            dilation_rate = _one_of(dilation_rate, dilations, "dilation_rate", "dilations")
        x = convert_to_tensor(input, name="input")
        n = _rank_of(x, "convolution")
        strides = _spatial_list(strides, "strides", n, False, default=1, ends_must_be_one=False)
        rate = _spatial_list(dilation_rate, "dilation_rate", n, False, default=1,
                             ends_must_be_one=False)  # fmt: skip
        if max(rate) > 1 and max(strides) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        if data_format is not None and data_format.startswith("NC"):
            if data_format not in _FIRST_FORMATS[n - 1 : n]:
                raise ValueError(f"data_format {data_format!r} does not fit a rank {n + 2} input")
        elif data_format is not None and data_format not in ("NWC", "NHWC", "NDHWC"):
            raise ValueError(f"unknown data_format {data_format!r}")
        _padding(padding)
    if n == 1:
        return conv1d(x, filter, strides[0], padding, data_format=data_format or "NWC",
                      dilations=rate[0], name=name)  # fmt: skip
    if n == 2:
        return conv2d(x, filter, list(strides), padding, data_format=data_format or "NHWC",
                      dilations=list(rate), name=name)  # fmt: skip
    return conv3d(x, filter, list(strides), padding, data_format=data_format or "NDHWC",
                  dilations=list(rate), name=name)  # fmt: skip


def conv1d_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding: str = "SAME",
    data_format: str = "NWC",
    dilations=None,
    name: Optional[str] = None,
) -> Tensor:
    """The transpose of `conv1d`: ``input`` of shape ``[batch, width, in_channels]`` becomes
    ``output_shape``; ``filters`` is ``[width, output_channels, in_channels]``.  A
    `conv2d_transpose` over a height of 1."""
    with argument_errors("Conv2DBackpropInput", name or "conv1d_transpose"):
        data_format = _check_data_format(data_format, ("NWC", "NCW"))
        first = data_format == "NCW"
        stride = _spatial_list(strides, "strides", 1, first)[0]
        dilation = _spatial_list(dilations, "dilations", 1, first, default=1)[0]
    graph = _graph_of((input, filters, output_shape))
    with graph.as_default(), graph.name_scope(name or "conv1d_transpose") as scope:
        spatial = 2 if first else 1
        x = _a.expand_dims(convert_to_tensor(input, name="input"), spatial)
        f = _a.expand_dims(convert_to_tensor(filters, name="filters"), 0)
        shape = convert_to_tensor(output_shape, dtype=_dtypes.int32, name="output_shape")
        shape = _a.concat([shape[:spatial], [1], shape[spatial:]], 0)
        y = conv2d_transpose(
            x, f, shape, [1, 1, stride, 1] if not first else [1, 1, 1, stride], padding,
            "NCHW" if first else "NHWC", name=scope,
            dilations=[1, 1, dilation, 1] if not first else [1, 1, 1, dilation],
        )  # fmt: skip
        return _a.squeeze(y, [spatial], name="Squeeze")


def atrous_conv2d_transpose(
    value, filters, output_shape, rate, padding, name: Optional[str] = None
) -> Tensor:
    """The transpose of `atrous_conv2d`: the gradient of a convolution dilated by ``rate``
    (stride 1) with respect to its NHWC input, of shape ``output_shape``."""
    with argument_errors("Conv2DBackpropInput", name or "atrous_conv2d_transpose"):
        if int(rate) < 1:
            raise ValueError(f"rate {rate} cannot be less than one")
        _padding(padding)
    return conv2d_transpose(
        value, filters, output_shape, [1, 1, 1, 1], padding, "NHWC",
        name=name or "atrous_conv2d_transpose", dilations=[1, int(rate), int(rate), 1],
    )  # fmt: skip


def conv_transpose(
    input,  # noqa: A002
    filters,
    output_shape,
    strides,
    padding: str = "SAME",
    data_format=None,
    dilations=None,
    name: Optional[str] = None,
) -> Tensor:
    """`conv1d_transpose`, `conv2d_transpose` or `conv3d_transpose`, by the length of
    ``output_shape`` (or the rank of ``input``)."""
    with argument_errors("conv_transpose", name):
        x = convert_to_tensor(input, name="input")
        shape = (
            output_shape.shape.as_list()[0]
            if isinstance(output_shape, Tensor)
            else (len(output_shape) if output_shape is not None else None)
        )
        n = shape - 2 if shape is not None else _rank_of(x, "conv_transpose")
        if n not in (1, 2, 3):
            raise ValueError(f"output_shape must have 3, 4 or 5 elements, got {output_shape}")
    if n == 1:
        return conv1d_transpose(
            x, filters, output_shape, strides, padding, data_format or "NWC", dilations,
            name or "conv1d_transpose",
        )  # fmt: skip
    first = data_format is not None and data_format.startswith("NC")
    strides = list(_spatial_list(strides, "strides", n, first, ends_must_be_one=False))
    strides = [1, 1, *strides] if first else [1, *strides, 1]
    if dilations is not None:
        dilations = list(_spatial_list(dilations, "dilations", n, first, ends_must_be_one=False))
        dilations = [1, 1, *dilations] if first else [1, *dilations, 1]
    if n == 2:
        return conv2d_transpose(x, filters, output_shape, strides, padding, data_format or "NHWC",
                                name or "conv2d_transpose", dilations=dilations)  # fmt: skip
    return conv3d_transpose(x, filters, output_shape, strides, padding, data_format or "NDHWC",
                            name or "conv3d_transpose", dilations=dilations)  # fmt: skip


_POOLING_TYPES = ("MAX", "AVG")


def pool(
    input,  # noqa: A002
    window_shape,
    pooling_type,
    padding,
    dilation_rate=None,
    strides=None,
    name: Optional[str] = None,
    data_format=None,
    dilations=None,
) -> Tensor:
    """Max (``pooling_type="MAX"``) or average (``"AVG"``) pooling over the 1, 2 or 3 spatial
    dimensions of ``input`` (by its rank), with one ``window_shape``, ``strides`` and
    ``dilation_rate`` value per spatial dimension.  A dilation above 1 needs strides of 1 and
    VALID padding, as in TensorFlow."""
    from .conv_ops import avg_pool, max_pool
    from .extra_nn_ops import avg_pool1d, max_pool1d

    with argument_errors("pool", name):
        if dilations is not None:
            dilation_rate = _one_of(dilation_rate, dilations, "dilation_rate", "dilations")
        if pooling_type not in _POOLING_TYPES:
            raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
        x = convert_to_tensor(input, name="input")
        n = _rank_of(x, "pool")
        first = data_format is not None and data_format.startswith("NC")
        window = _spatial_list(window_shape, "window_shape", n, False, ends_must_be_one=False)
        strides = _spatial_list(strides, "strides", n, False, default=1, ends_must_be_one=False)
        rate = _spatial_list(dilation_rate, "dilation_rate", n, False, default=1,
                             ends_must_be_one=False)  # fmt: skip
        if max(rate) > 1 and max(strides) > 1:
            raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
        if max(rate) > 1 and padding == "SAME":
            raise ValueError(
                "pooling with 'SAME' padding is not implemented for `dilation_rate` > 1"
            )
        _padding(padding)
    if max(rate) == 1:
        default_format = ("NWC", "NHWC", "NDHWC")[n - 1]
        fmt = data_format or default_format
        if n == 1:
            one_d = max_pool1d if pooling_type == "MAX" else avg_pool1d
            return one_d(x, window[0], strides[0], padding, fmt, name=name)
        full = lambda v: [1, 1, *v] if first else [1, *v, 1]  # noqa: E731
        if n == 2:
            two_d = max_pool if pooling_type == "MAX" else avg_pool
            return two_d(x, full(window), full(strides), padding, fmt, name=name)
        three_d = max_pool3d if pooling_type == "MAX" else avg_pool3d
        return three_d(x, full(window), full(strides), padding, fmt, name=name)
    graph = _graph_of((x,))
    with graph.as_default(), graph.name_scope(name or pooling_type.lower() + "_pool") as scope:
        attrs = {
            "ksize": window,
            "strides": (1,) * n,
            "dilations": rate,
            "padding": "VALID",
            "data_format": "CHANNELS_FIRST" if first else "CHANNELS_LAST",
        }
        op_type = "DilatedMaxPool" if pooling_type == "MAX" else "DilatedAvgPool"
        return apply_op(op_type, (x,), attrs, scope).outputs[0]


def conv(
    input,  # noqa: A002
    filter,  # noqa: A002
    strides,
    padding,
    explicit_paddings=[],  # noqa: B006 - TensorFlow's default, never mutated
    data_format: str = "CHANNELS_LAST",
    dilations=[],  # noqa: B006 - TensorFlow's default, never mutated
    batch_dims: int = 1,
    groups: int = 1,
    name: Optional[str] = None,
) -> Tensor:
    """TensorFlow's generic ``Conv`` op: the N-d convolution (N = 1, 2 or 3, from the
    ``(N + 2)``-d ``filter``) of ``input`` of shape ``batch_shape + spatial + [channels]``
    (``CHANNELS_LAST``) or ``batch_shape + [channels] + spatial`` (``CHANNELS_FIRST``) with
    ``batch_dims`` batch dimensions.  ``strides`` and ``dilations`` have ``N + 2`` entries;
    ``groups`` splits the channels into groups convolved separately (the filter's input depth
    is ``channels / groups``); ``padding="EXPLICIT"`` takes ``explicit_paddings``, a
    ``(before, after)`` pair per dimension of ``N + 2``."""
    with argument_errors("Conv", name):
        if data_format not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
            raise ValueError(
                f"data_format must be 'CHANNELS_LAST' or 'CHANNELS_FIRST', got {data_format!r}"
            )
        first = data_format == "CHANNELS_FIRST"
        if int(batch_dims) < 1 or int(groups) < 1:
            raise ValueError(f"batch_dims and groups must be positive, got {batch_dims}, {groups}")
        f = convert_to_tensor(filter, name="filter")
        if f.shape.ndims not in (3, 4, 5):
            raise ValueError(f"filter must be 3-, 4- or 5-D, got shape {f.shape}")
        n = f.shape.ndims - 2
        if len(strides) != n + 2:
            raise ValueError(f"strides must have {n + 2} entries, got {strides}")
        attrs = {
            "strides": _spatial_list(strides, "strides", n, first),
            "dilations": _spatial_list(dilations, "dilations", n, first, default=1),
            "data_format": data_format,
            "batch_dims": int(batch_dims),
            "groups": int(groups),
        }
        if padding == "EXPLICIT":
            flat = [int(v) for v in explicit_paddings]
            if len(flat) != 2 * (n + 2) or min(flat, default=0) < 0:
                raise ValueError(
                    f"explicit_paddings must be {2 * (n + 2)} non-negative ints, got "
                    f"{explicit_paddings}"
                )
            spatial = flat[4:] if first else flat[2:-2]
            attrs.update(padding="EXPLICIT", explicit_paddings=tuple(spatial))
        else:
            attrs["padding"] = _padding(padding)
            if len(explicit_paddings):
                raise ValueError("explicit_paddings must be empty unless padding is 'EXPLICIT'")
    graph = _graph_of((input, f))
    with graph.as_default(), graph.name_scope(name or "Conv") as scope:
        x, f = convert_all((input, f), ("input", "filter"))
        return apply_op("Conv", (x, f), attrs, scope).outputs[0]


# -- gradients ---------------------------------------------------------------------------------
from ..framework.gradient_registry import RegisterGradient  # noqa: E402


@RegisterGradient("Conv3D")
def _conv3d_grad(op, grad):
    x, f = op.inputs
    attrs = _copy(op, _CONV_ATTRS)
    return (
        _op("Conv3DBackpropInputV2", (_a.shape(x), f, grad), attrs),
        _op("Conv3DBackpropFilterV2", (x, _a.shape(f), grad), attrs),
    )


@RegisterGradient("Conv3DBackpropInputV2")
def _conv3d_backprop_input_grad(op, grad):
    _, f, dy = op.inputs
    attrs = _copy(op, _CONV_ATTRS)
    return (
        None,
        _op("Conv3DBackpropFilterV2", (grad, _a.shape(f), dy), attrs),
        _op("Conv3D", (grad, f), attrs),
    )


@RegisterGradient("Conv3DBackpropFilterV2")
def _conv3d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _copy(op, _CONV_ATTRS)
    return (
        _op("Conv3DBackpropInputV2", (_a.shape(x), grad, dy), attrs),
        None,
        _op("Conv3D", (x, grad), attrs),
    )


def _max_pool_grads(forward, grad_type, grad_grad_type):
    @RegisterGradient(forward)
    def _forward_grad(op, grad):
        return _op(grad_type, (op.inputs[0], op.outputs[0], grad), _copy(op, _POOL_ATTRS))

    @RegisterGradient(grad_type)
    def _grad_grad(op, grad):
        x, y, _ = op.inputs
        return None, None, _op(grad_grad_type, (x, y, grad), _copy(op, _POOL_ATTRS))


def _avg_pool_grads(forward, grad_type):
    @RegisterGradient(forward)
    def _forward_grad(op, grad):
        return _op(grad_type, (_a.shape(op.inputs[0]), grad), _copy(op, _POOL_ATTRS))

    @RegisterGradient(grad_type)
    def _grad_grad(op, grad):
        return None, _op(forward, (grad,), _copy(op, _POOL_ATTRS))


_max_pool_grads("MaxPool3D", "MaxPool3DGrad", "MaxPool3DGradGrad")
_avg_pool_grads("AvgPool3D", "AvgPool3DGrad")
_avg_pool_grads("DilatedAvgPool", "DilatedAvgPoolGrad")


@RegisterGradient("MaxPool3DGradGrad")
def _max_pool3d_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return None, None, _op("MaxPool3DGrad", (x, y, grad), _copy(op, _POOL_ATTRS))


_max_pool_grads("DilatedMaxPool", "DilatedMaxPoolGrad", "DilatedMaxPoolGradGrad")


@RegisterGradient("DilatedMaxPoolGradGrad")
def _dilated_max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return None, None, _op("DilatedMaxPoolGrad", (x, y, grad), _copy(op, _POOL_ATTRS))

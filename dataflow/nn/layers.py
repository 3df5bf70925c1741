"""``df.layers``: TF1's layers (``tf.compat.v1.layers``), as functions and as classes.

A layer is an object that, on its first call, opens a variable scope named after it (``dense``,
made unique among its siblings as ``dense_1``, or the ``name`` given), makes its variables there
with `get_variable` (``dense/kernel``, ``dense/bias``) and builds its ops in the name scope of
that variable scope; later calls reuse the variables and build in the same name scope.  The
functional forms (``df.layers.dense(x, 4)``) make a layer, call it once and return its output,
so that ``name`` with ``reuse=True`` shares the variables of an earlier call, as in TF1.

As in TF1's graph mode, a layer adds its regularization losses (``kernel_regularizer``,
``activity_regularizer``) to ``GraphKeys.REGULARIZATION_LOSSES`` and its updates (the moving
statistics of batch normalization) to ``GraphKeys.UPDATE_OPS``.  A ``training`` argument is a
Python bool or a boolean tensor: a bool (or a constant tensor) builds only the branch it picks,
a tensor builds a `cond` between both.

Differences from TF1: ``renorm``, ``virtual_batch_size`` and ``adjustment`` of batch
normalization are not supported (they raise), and ``dilation_rate`` is given to the
convolution op itself (TF1 rewrites a dilated convolution as ``SpaceToBatchND``, convolution,
``BatchToSpaceND``; the values are the same).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any, Optional, Union

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import (
    Tensor,
    name_scope,
)
from ..framework.tensor_shape import TensorShape, dimension_value
from ..ops import array_ops, math_ops, nn_ops
from ..ops import conv_ops as _conv_ops
from ..ops import slice_ops as _slices
from ..ops.constant_op import constant
from .base_layer import (  # noqa: F401 - defined there, reached here too
    _ZEROS,
    Layer,
    VariableOwner,
    _channels_first,
    _layer_error,
    _padding,
    _smart_cond,
    _snake_case,
    _tuple,
)
from .normalization_layers import (  # noqa: F401 - defined there, reached here too
    BatchNormalization,
    batch_normalization,
)

__all__ = [
    "AveragePooling1D",
    "AveragePooling2D",
    "BatchNormalization",
    "Conv1D",
    "Conv2D",
    "Conv2DTranspose",
    "Dense",
    "Dropout",
    "Flatten",
    "Layer",
    "MaxPooling1D",
    "MaxPooling2D",
    "average_pooling1d",
    "average_pooling2d",
    "batch_normalization",
    "conv1d",
    "conv2d",
    "conv2d_transpose",
    "dense",
    "dropout",
    "flatten",
    "max_pooling1d",
    "max_pooling2d",
]


# -- dense -----------------------------------------------------------------------------------------
class Dense(Layer):
    """``activation(inputs @ kernel + bias)`` over the last axis of ``inputs``
    (``tf.compat.v1.layers.Dense``).  ``kernel_initializer=None`` takes the variable scope's
    initializer, else Glorot uniform, as `get_variable` does."""

    def __init__(
        self,
        units: int,
        activation: Optional[Callable] = None,
        use_bias: bool = True,
        kernel_initializer=None,
        bias_initializer=_ZEROS,
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        trainable: bool = True,
        name: Optional[str] = None,
        **kwargs: Any,
    ):
        super().__init__(
            trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs
        )
        if not isinstance(units, (int, np.integer)) or units <= 0:
            raise _layer_error(self, f"units must be a positive integer, got {units!r}")
        self.units = int(units)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def build(self, input_shape: TensorShape) -> None:
        input_shape = TensorShape(input_shape)
        depth = None if input_shape.ndims is None else dimension_value(input_shape[-1])
        if depth is None:
            raise _layer_error(
                self, f"the last dimension of the inputs must be defined, got shape {input_shape}"
            )
        self.kernel = self.add_weight(
            "kernel",
            shape=[depth, self.units],
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=[self.units],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.built = True

    def call(self, inputs: Tensor) -> Tensor:
        rank = inputs.shape.ndims
        if rank is not None and rank <= 2:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            outputs = self._tensordot(inputs)
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def _tensordot(self, inputs: Tensor) -> Tensor:
        """``inputs`` of any rank times the kernel over the last axis, in a ``Tensordot`` name
        scope: flatten to a matrix, multiply, and give back the leading dimensions."""
        depth = dimension_value(self.kernel.shape[0])
        with name_scope("Tensordot") as scope:
            flat = array_ops.reshape(inputs, [-1, depth])
            product = math_ops.matmul(flat, self.kernel, name="MatMul")
            leading = _slices.strided_slice(array_ops.shape(inputs), [0], [-1])
            outputs = array_ops.reshape(
                product, array_ops.concat([leading, [self.units]], 0, name="concat_1"), name=scope
            )
        if inputs.shape.ndims is not None:
            outputs.set_shape(inputs.shape[:-1].concatenate([self.units]))
        return outputs


def dense(
    inputs,
    units: int,
    activation: Optional[Callable] = None,
    use_bias: bool = True,
    kernel_initializer=None,
    bias_initializer=_ZEROS,
    kernel_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    kernel_constraint=None,
    bias_constraint=None,
    trainable: bool = True,
    name: Optional[str] = None,
    reuse=None,
) -> Tensor:
    """A densely connected layer on ``inputs`` (``tf.compat.v1.layers.dense``); see `Dense`."""
    layer = Dense(
        units,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer,
        kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint,
        trainable=trainable,
        name=name,
        _reuse=reuse,
    )
    return layer(inputs)


# -- convolutions ----------------------------------------------------------------------------------
class _Conv(Layer):
    """The convolution layers of one spatial rank (1 or 2): a kernel of shape
    ``kernel_size + [in_channels, filters]``, the convolution, the bias, the activation."""

    rank = 2

    def __init__(
        self,
        filters: int,
        kernel_size,
        strides=1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate=1,
        activation: Optional[Callable] = None,
        use_bias: bool = True,
        kernel_initializer=None,
        bias_initializer=_ZEROS,
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        trainable: bool = True,
        name: Optional[str] = None,
        **kwargs: Any,
    ):
        super().__init__(
            trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs
        )
        if not isinstance(filters, (int, np.integer)) or filters <= 0:
            raise _layer_error(self, f"filters must be a positive integer, got {filters!r}")
        self.filters = int(filters)
        self.kernel_size = _tuple(kernel_size, self.rank, "kernel_size", self)
        self.strides = _tuple(strides, self.rank, "strides", self)
        self.dilation_rate = _tuple(dilation_rate, self.rank, "dilation_rate", self)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise _layer_error(self, "strides > 1 are not supported with dilation_rate > 1")
        self.padding = _padding(padding, self)
        self.data_format = data_format
        self._channels_first = _channels_first(data_format, self)
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    @property
    def _op_data_format(self) -> str:
        spatial = "W" if self.rank == 1 else "HW"
        return f"NC{spatial}" if self._channels_first else f"N{spatial}C"

    def _input_channels(self, input_shape: TensorShape) -> int:
        input_shape = TensorShape(input_shape)
        if input_shape.ndims is not None and input_shape.ndims != self.rank + 2:
            raise _layer_error(
                self, f"expects inputs of rank {self.rank + 2}, got shape {input_shape}"
            )
        channels = None
        if input_shape.ndims is not None:
            channels = dimension_value(input_shape[1 if self._channels_first else -1])
        if channels is None:
            raise _layer_error(
                self, f"the channel dimension of the inputs must be defined, got {input_shape}"
            )
        return channels

    def _kernel_shape(self, channels: int) -> list:
        return list(self.kernel_size) + [channels, self.filters]

    def build(self, input_shape: TensorShape) -> None:
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight(
            "kernel",
            shape=self._kernel_shape(channels),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                shape=[self.filters],
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )
        self.built = True

    def _convolve(self, inputs: Tensor) -> Tensor:
        if self.rank == 1:
            return _conv_ops.conv1d(
                inputs,
                self.kernel,
                stride=self.strides[0],
                padding=self.padding,
                data_format=self._op_data_format,
                dilations=self.dilation_rate[0],
                name="Conv1D",
            )
        return _conv_ops.conv2d(
            inputs,
            self.kernel,
            strides=[1, *self.strides, 1] if not self._channels_first else [1, 1, *self.strides],
            padding=self.padding,
            data_format=self._op_data_format,
            dilations=[1, *self.dilation_rate, 1]
            if not self._channels_first
            else [1, 1, *self.dilation_rate],
            name="Conv2D",
        )

    def call(self, inputs: Tensor) -> Tensor:
        outputs = self._convolve(inputs)
        if self.use_bias:
            data_format = "NCHW" if self._channels_first and self.rank == 2 else None
            if self._channels_first and self.rank == 1:
                bias = array_ops.reshape(self.bias, [1, self.filters, 1])
                outputs = math_ops.add(outputs, bias)
            else:
                outputs = nn_ops.bias_add(outputs, self.bias, data_format=data_format)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs


class Conv2D(_Conv):
    """A 2-D convolution layer (``tf.compat.v1.layers.Conv2D``): kernel
    ``[kernel_h, kernel_w, in_channels, filters]``; ``data_format`` ``'channels_last'`` (NHWC)
    or ``'channels_first'`` (NCHW)."""

    rank = 2


class Conv1D(_Conv):
    """A 1-D convolution layer (``tf.compat.v1.layers.Conv1D``): kernel
    ``[width, in_channels, filters]`` over inputs ``[batch, width, channels]``."""

    rank = 1


class Conv2DTranspose(Conv2D):
    """The transpose of a 2-D convolution (``tf.compat.v1.layers.Conv2DTranspose``): kernel
    ``[kernel_h, kernel_w, filters, in_channels]``; each spatial size becomes ``size * stride``
    (``'same'``) or ``size * stride + max(kernel - stride, 0)`` (``'valid'``)."""

    def __init__(self, filters: int, kernel_size, strides=(1, 1), padding="valid", **kwargs):
        if kwargs.get("dilation_rate", 1) not in (1, (1, 1), [1, 1]):
            raise TypeError("Conv2DTranspose: dilation_rate is not supported")
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **kwargs)

    def _kernel_shape(self, channels: int) -> list:
        return list(self.kernel_size) + [self.filters, channels]

    def _output_size(self, size, axis: int):
        """The output's spatial size along ``axis`` for an input size (an int or a tensor)."""
        kernel, stride = self.kernel_size[axis], self.strides[axis]
        if self.padding == "SAME":
            return size * stride
        return size * stride + max(kernel - stride, 0)

    def _convolve(self, inputs: Tensor) -> Tensor:
        dynamic = array_ops.shape(inputs)
        static = inputs.shape.as_list() if inputs.shape.ndims is not None else [None] * 4
        spatial_axes = (2, 3) if self._channels_first else (1, 2)
        sizes = [static[a] if static[a] is not None else dynamic[a] for a in spatial_axes]
        height, width = (self._output_size(size, i) for i, size in enumerate(sizes))
        batch = dynamic[0]
        if self._channels_first:
            output_shape = array_ops.stack([batch, self.filters, height, width])
            strides = [1, 1, *self.strides]
        else:
            output_shape = array_ops.stack([batch, height, width, self.filters])
            strides = [1, *self.strides, 1]
        outputs = _conv_ops.conv2d_transpose(
            inputs,
            self.kernel,
            output_shape,
            strides=strides,
            padding=self.padding,
            data_format=self._op_data_format,
            name="conv2d_transpose",
        )
        out_static = [static[0], None, None, None]
        out_static[1 if self._channels_first else 3] = self.filters
        for i, axis in enumerate(spatial_axes):
            if static[axis] is not None:
                out_static[axis] = self._output_size(static[axis], i)
        outputs.set_shape(out_static)
        return outputs


def _conv_function(layer_class):
    """The functional form of a convolution layer class (``conv2d`` for `Conv2D`)."""

    def convolution(
        inputs,
        filters: int,
        kernel_size,
        strides=1,
        padding: str = "valid",
        data_format: str = "channels_last",
        dilation_rate=1,
        activation: Optional[Callable] = None,
        use_bias: bool = True,
        kernel_initializer=None,
        bias_initializer=_ZEROS,
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        trainable: bool = True,
        name: Optional[str] = None,
        reuse=None,
    ) -> Tensor:
        extra = {} if layer_class is Conv2DTranspose else {"dilation_rate": dilation_rate}
        layer = layer_class(
            filters,
            kernel_size,
            strides=strides,
            padding=padding,
            data_format=data_format,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            activity_regularizer=activity_regularizer,
            kernel_constraint=kernel_constraint,
            bias_constraint=bias_constraint,
            trainable=trainable,
            name=name,
            _reuse=reuse,
            **extra,
        )
        return layer(inputs)

    return convolution


conv1d = _conv_function(Conv1D)
conv1d.__name__ = conv1d.__qualname__ = "conv1d"
conv1d.__doc__ = "A 1-D convolution layer on ``inputs`` (``tf.compat.v1.layers.conv1d``)."
conv2d = _conv_function(Conv2D)
conv2d.__name__ = conv2d.__qualname__ = "conv2d"
conv2d.__doc__ = "A 2-D convolution layer on ``inputs`` (``tf.compat.v1.layers.conv2d``)."


def conv2d_transpose(
    inputs,
    filters: int,
    kernel_size,
    strides=(1, 1),
    padding: str = "valid",
    data_format: str = "channels_last",
    activation: Optional[Callable] = None,
    use_bias: bool = True,
    kernel_initializer=None,
    bias_initializer=_ZEROS,
    kernel_regularizer=None,
    bias_regularizer=None,
    activity_regularizer=None,
    kernel_constraint=None,
    bias_constraint=None,
    trainable: bool = True,
    name: Optional[str] = None,
    reuse=None,
) -> Tensor:
    """A transposed 2-D convolution layer on ``inputs``
    (``tf.compat.v1.layers.conv2d_transpose``); see `Conv2DTranspose`."""
    return _conv_function(Conv2DTranspose)(
        inputs,
        filters,
        kernel_size,
        strides=strides,
        padding=padding,
        data_format=data_format,
        activation=activation,
        use_bias=use_bias,
        kernel_initializer=kernel_initializer,
        bias_initializer=bias_initializer,
        kernel_regularizer=kernel_regularizer,
        bias_regularizer=bias_regularizer,
        activity_regularizer=activity_regularizer,
        kernel_constraint=kernel_constraint,
        bias_constraint=bias_constraint,
        trainable=trainable,
        name=name,
        reuse=reuse,
    )


# -- pooling ---------------------------------------------------------------------------------------
class _Pooling(Layer):
    """Max or average pooling of one spatial rank; no variables.  One-dimensional pooling
    pools a ``[batch, width, channels]`` input as an image of height 1 (``ExpandDims``, the
    pool, ``Squeeze``), as TF1 does."""

    rank = 2
    op_type = "MaxPool"

    def __init__(
        self,
        pool_size,
        strides,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: Optional[str] = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, **kwargs)
        self.pool_size = _tuple(pool_size, self.rank, "pool_size", self)
        self.strides = _tuple(strides, self.rank, "strides", self)
        self.padding = _padding(padding, self)
        self.data_format = data_format
        self._channels_first = _channels_first(data_format, self)

    def call(self, inputs: Tensor) -> Tensor:
        if inputs.shape.ndims is not None and inputs.shape.ndims != self.rank + 2:
            raise _layer_error(
                self, f"expects inputs of rank {self.rank + 2}, got shape {inputs.shape}"
            )
        pool = _conv_ops.max_pool if self.op_type == "MaxPool" else _conv_ops.avg_pool
        pool_size, strides = self.pool_size, self.strides
        if self.rank == 1:
            # One dimension becomes an image of height 1: [batch, 1, width, channels].
            spatial_axis = 2 if self._channels_first else 1
            inputs = array_ops.expand_dims(inputs, spatial_axis, name="ExpandDims")
            pool_size, strides = (1, *pool_size), (1, *strides)
        if self._channels_first:
            ksize, stride_vector, data_format = [1, 1, *pool_size], [1, 1, *strides], "NCHW"
        else:
            ksize, stride_vector, data_format = [1, *pool_size, 1], [1, *strides, 1], "NHWC"
        outputs = pool(
            inputs, ksize, stride_vector, self.padding, data_format=data_format, name=self.op_type
        )
        if self.rank == 1:
            outputs = array_ops.squeeze(outputs, [spatial_axis], name="Squeeze")
        return outputs


class MaxPooling2D(_Pooling):
    """2-D max pooling (``tf.compat.v1.layers.MaxPooling2D``)."""


class AveragePooling2D(_Pooling):
    """2-D average pooling (``tf.compat.v1.layers.AveragePooling2D``); ``'same'`` padding
    averages over the window's cells inside the input."""

    op_type = "AvgPool"


class MaxPooling1D(_Pooling):
    """1-D max pooling (``tf.compat.v1.layers.MaxPooling1D``)."""

    rank = 1


class AveragePooling1D(_Pooling):
    """1-D average pooling (``tf.compat.v1.layers.AveragePooling1D``)."""

    rank = 1
    op_type = "AvgPool"


def _pooling_function(layer_class, function_name: str):
    def pooling(
        inputs,
        pool_size,
        strides,
        padding: str = "valid",
        data_format: str = "channels_last",
        name: Optional[str] = None,
    ) -> Tensor:
        layer = layer_class(pool_size, strides, padding=padding, data_format=data_format, name=name)
        return layer(inputs)

    pooling.__name__ = pooling.__qualname__ = function_name
    pooling.__doc__ = (
        f"`{layer_class.__name__}` on ``inputs`` (``tf.compat.v1.layers.{function_name}``)."
    )
    return pooling


max_pooling1d = _pooling_function(MaxPooling1D, "max_pooling1d")
max_pooling2d = _pooling_function(MaxPooling2D, "max_pooling2d")
average_pooling1d = _pooling_function(AveragePooling1D, "average_pooling1d")
average_pooling2d = _pooling_function(AveragePooling2D, "average_pooling2d")


# -- dropout and flatten ---------------------------------------------------------------------------
class Dropout(Layer):
    """Zeroes each input with probability ``rate`` and scales the rest by ``1 / (1 - rate)``
    when ``training`` (``tf.compat.v1.layers.Dropout``); the identity otherwise.  Note
    ``rate``, the fraction dropped, where ``nn.dropout`` in TF1 took ``keep_prob``."""

    def __init__(
        self,
        rate: float = 0.5,
        noise_shape=None,
        seed: Optional[int] = None,
        name: Optional[str] = None,
        **kwargs: Any,
    ):
        super().__init__(name=name, **kwargs)
        if not isinstance(rate, Tensor) and not 0 <= rate < 1:
            raise _layer_error(self, f"rate must be in [0, 1), got {rate!r}")
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs: Tensor, training: Union[bool, Tensor] = False) -> Tensor:
        def dropped():
            return nn_ops.dropout(
                inputs, noise_shape=self.noise_shape, seed=self.seed, rate=self.rate
            )

        return _smart_cond(training, dropped, lambda: array_ops.identity(inputs))


def dropout(
    inputs,
    rate: float = 0.5,
    noise_shape=None,
    seed: Optional[int] = None,
    training: Union[bool, Tensor] = False,
    name: Optional[str] = None,
) -> Tensor:
    """`Dropout` on ``inputs`` (``tf.compat.v1.layers.dropout``): only while ``training``
    (False by default)."""
    return Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)(inputs, training=training)


class Flatten(Layer):
    """``[batch, ...]`` to ``[batch, n]`` (``tf.compat.v1.layers.Flatten``); with
    ``'channels_first'`` the channels move last first, so that both layouts flatten in the
    same order."""

    def __init__(self, data_format: str = "channels_last", name: Optional[str] = None, **kw):
        super().__init__(name=name, **kw)
        self.data_format = data_format
        self._channels_first = _channels_first(data_format, self)

    def call(self, inputs: Tensor) -> Tensor:
        shape = inputs.shape
        if shape.ndims is None:
            raise _layer_error(self, "the rank of the inputs must be known")
        if self._channels_first and shape.ndims > 2:
            inputs = array_ops.transpose(inputs, [0, *range(2, shape.ndims), 1])
            shape = inputs.shape
        if shape.ndims == 1:
            return array_ops.expand_dims(inputs, 1)
        batch = dimension_value(shape[0])
        rest = shape[1:]
        if rest.is_fully_defined():
            size = functools.reduce(operator.mul, rest.as_list(), 1)
            new_shape = constant([-1, size], _dtypes.int32, name="Const")
        elif batch is not None:
            new_shape = constant([batch, -1], _dtypes.int32, name="Const")
        else:
            new_shape = array_ops.stack([array_ops.shape(inputs)[0], -1])
        return array_ops.reshape(inputs, new_shape)


def flatten(inputs, name: Optional[str] = None, data_format: str = "channels_last") -> Tensor:
    """`Flatten` on ``inputs`` (``tf.compat.v1.layers.flatten``)."""
    return Flatten(data_format=data_format, name=name)(inputs)

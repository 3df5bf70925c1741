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
import re
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Optional, Union

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import (
    GraphKeys,
    Operation,
    Tensor,
    _user_location,
    convert_to_tensor,
    get_default_graph,
    name_scope,
    numpy_value_or_none,
)
from ..framework.tensor_shape import TensorShape, dimension_value
from ..ops import array_ops, math_ops, nn_ops
from ..ops import conv_ops as _conv_ops
from ..ops import norm_ops as _norm_ops
from ..ops.constant_op import constant
from ..ops.init_ops import ones_initializer, zeros_initializer
from ..ops.variable_scope import get_variable, variable_scope

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


# The default initializers of biases, betas and moving statistics (TF1's defaults are these
# initializers, not None).
_ZEROS = zeros_initializer()
_ONES = ones_initializer()


def _snake_case(name: str) -> str:
    """TF1's layer names: ``BatchNormalization`` -> ``batch_normalization``, ``Conv2D`` ->
    ``conv2d``."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


# Per graph, how many layers of each base name were made: ``layer.name`` is ``dense_1`` for
# the second unnamed Dense in a graph, wherever its variable scope is (as TF1's Keras names).
_layer_name_counts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_layer_name_lock = threading.Lock()


def _unique_layer_name(base_name: str) -> str:
    with _layer_name_lock:
        counts = _layer_name_counts.setdefault(get_default_graph(), {})
        index = counts.get(base_name, 0)
        counts[base_name] = index + 1
    return base_name if index == 0 else f"{base_name}_{index}"


def _layer_error(layer: Layer, message: str, error=ValueError):
    """An error about the arguments or input of ``layer``, naming it and the user's line."""
    return error(f"{type(layer).__name__} layer '{layer.name}' at {_user_location()}: {message}")


def _static_truth(value) -> Optional[bool]:
    """``value`` (a Python bool or a boolean tensor) as a bool when it is known while building,
    else None."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Tensor):
        constant = numpy_value_or_none(value)
        return None if constant is None else bool(constant)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    raise TypeError(f"training must be a bool or a boolean tensor, got {value!r}")


def _smart_cond(pred, true_fn: Callable, false_fn: Callable, name: Optional[str] = None):
    """``true_fn()`` or ``false_fn()`` when ``pred`` is known while building; else a `cond`
    between them (TF1's ``smart_cond``)."""
    known = _static_truth(pred)
    if known is not None:
        return true_fn() if known else false_fn()
    from primitives.control_flow_ops import cond

    return cond(pred, true_fn, false_fn, name=name)


def _tuple(value, rank: int, what: str, layer: Layer) -> tuple:
    """``value`` (an int or ``rank`` ints) as a tuple of ``rank`` positive ints."""
    values = (value,) * rank if isinstance(value, (int, np.integer)) else tuple(value)
    if len(values) != rank or not all(isinstance(v, (int, np.integer)) and v > 0 for v in values):
        raise _layer_error(layer, f"{what} must be {rank} positive integers, got {value!r}")
    return tuple(int(v) for v in values)


def _padding(value: str, layer: Layer) -> str:
    """``'valid'`` or ``'same'`` in either case, as the ops spell it (``VALID``, ``SAME``)."""
    if not isinstance(value, str) or value.lower() not in ("valid", "same"):
        raise _layer_error(layer, f"padding must be 'valid' or 'same', got {value!r}")
    return value.upper()


def _channels_first(data_format: str, layer: Layer) -> bool:
    if data_format not in ("channels_last", "channels_first"):
        raise _layer_error(
            layer,
            f"data_format must be 'channels_last' or 'channels_first', got {data_format!r}",
        )
    return data_format == "channels_first"


# -- the base layer --------------------------------------------------------------------------------
class VariableOwner:
    """What TF1's layers and RNN cells (both ``base_layer.Layer`` there) report about
    themselves: ``name``, ``dtype``, ``scope_name`` and the variables they made, split by
    ``trainable``.  The owner sets ``_name``, ``_dtype``, ``_scope``, ``_variables`` and
    ``trainable``."""

    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self) -> Optional[str]:
        return self._scope.name if self._scope is not None else None

    @property
    def variables(self) -> list:
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self) -> list:
        return [v for v in self._variables if v.trainable] if self.trainable else []

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self) -> list:
        if not self.trainable:
            return list(self._variables)
        return [v for v in self._variables if not v.trainable]

    non_trainable_weights = non_trainable_variables


class Layer(VariableOwner):
    """A TF1 layer (``tf.compat.v1.layers.Layer``): subclasses define ``build(input_shape)``,
    which makes variables with `add_weight`, and ``call(inputs, **kwargs)``.  See the module
    docstring for the scopes a call opens."""

    def __init__(
        self, trainable: bool = True, name: Optional[str] = None, dtype=None, **kwargs: Any
    ):
        self._reuse = kwargs.pop("_reuse", None)
        self._activity_regularizer = kwargs.pop("activity_regularizer", None)
        kwargs.pop("_scope", None)
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected arguments {sorted(kwargs)}")
        self.trainable = trainable
        self._base_name = name or _snake_case(type(self).__name__)
        self._name = name or _unique_layer_name(self._base_name)
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self._scope = None
        self._variables: list = []
        self._losses: list = []
        self._updates: list = []
        self.built = False

    # -- what subclasses define --------------------------------------------------------------------
    def build(self, input_shape: TensorShape) -> None:
        self.built = True

    def call(self, inputs, **kwargs):
        return inputs

    # -- state -------------------------------------------------------------------------------------
    @property
    def activity_regularizer(self):
        return self._activity_regularizer

    @property
    def losses(self) -> list:
        return list(self._losses)

    @property
    def updates(self) -> list:
        return list(self._updates)

    def add_loss(self, losses, inputs=None) -> None:
        """Records ``losses`` on the layer and in ``GraphKeys.REGULARIZATION_LOSSES``."""
        graph = get_default_graph()
        for loss in losses if isinstance(losses, (list, tuple)) else [losses]:
            if loss is not None:
                self._losses.append(loss)
                graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def add_update(self, updates, inputs=None) -> None:
        """Records the ops of ``updates`` on the layer and in ``GraphKeys.UPDATE_OPS``: an op
        stays itself, and anything else with an ``.op`` (a tensor, the variable an ``assign*``
        returns) is recorded as that op, as TF1's layers record them."""
        graph = get_default_graph()
        for update in updates if isinstance(updates, (list, tuple)) else [updates]:
            update = update if isinstance(update, Operation) else update.op
            self._updates.append(update)
            graph.add_to_collection(GraphKeys.UPDATE_OPS, update)

    def add_weight(
        self,
        name: str,
        shape,
        dtype=None,
        initializer=None,
        regularizer=None,
        trainable: Optional[bool] = None,
        constraint=None,
        **kwargs: Any,
    ):
        """Makes (or, in a reused scope, finds) the variable ``name`` in the layer's scope.  A
        ``regularizer`` adds its loss (``<variable>/Regularizer/...``) only when the variable is
        new, as TF1's layers do; the variable scope's own regularizer applies as in
        `get_variable`."""
        trainable = True if trainable is None else trainable
        graph = get_default_graph()
        existing = {id(v) for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)}
        variable = get_variable(
            name,
            shape=shape,
            dtype=dtype or self._dtype or _dtypes.float32,
            initializer=initializer,
            trainable=trainable and self.trainable,
            constraint=constraint,
            **kwargs,
        )
        if regularizer is not None and id(variable) not in existing:
            with name_scope(variable.op.name + "/Regularizer/"):
                self.add_loss(regularizer(variable))
        if variable not in self._variables:
            self._variables.append(variable)
        return variable

    add_variable = add_weight

    # -- calling -----------------------------------------------------------------------------------
    def _set_scope(self, scope) -> None:
        if self._scope is not None:
            return
        if self._reuse:
            opening = variable_scope(scope if scope is not None else self._base_name)
        else:
            opening = variable_scope(scope, default_name=self._base_name)
        with opening as captured:
            self._scope = captured

    def __call__(self, inputs, *args: Any, **kwargs: Any):
        """Builds the layer's ops on ``inputs`` (making its variables on the first call)."""
        __tracebackhide__ = True
        self._set_scope(kwargs.pop("scope", None))
        with variable_scope(
            self._scope, reuse=True if self.built else self._reuse, auxiliary_name_scope=False
        ):
            with name_scope(self._scope.original_name_scope):
                inputs = convert_to_tensor(inputs, name="inputs")
                if not self.built:
                    if self._dtype is None:
                        self._dtype = inputs.dtype
                    self.build(inputs.shape)
                    self.built = True
                outputs = self.call(inputs, *args, **kwargs)
                if self._activity_regularizer is not None:
                    self._regularize_activity(outputs)
        return outputs

    apply = __call__

    def _regularize_activity(self, outputs: Tensor) -> None:
        """The activity regularizer's loss on ``outputs``, divided by the batch size."""
        with name_scope("ActivityRegularizer"):
            loss = self._activity_regularizer(outputs)
            batch_size = math_ops.cast(array_ops.shape(outputs)[0], loss.dtype)
            self.add_loss(math_ops.truediv(loss, batch_size))

    def __repr__(self) -> str:
        return f"<df.layers.{type(self).__name__} '{self._name}'>"


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
            leading = array_ops.strided_slice(array_ops.shape(inputs), [0], [-1])
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


# -- batch normalization ---------------------------------------------------------------------------
class BatchNormalization(Layer):
    """Batch normalization (``tf.compat.v1.layers.BatchNormalization``) over every axis but
    ``axis``: in training, by the batch's mean and variance, while the moving statistics move
    towards them (``moving -= (moving - batch) * (1 - momentum)``, in ops added to
    ``GraphKeys.UPDATE_OPS`` that the training step must run); otherwise by the moving ones.

    As in TF1, a 4-D input normalized over its channels (``axis`` 1 or 3) uses the fused kernel
    unless ``fused=False``; the fused kernel's batch variance, which feeds the moving variance,
    is the unbiased one, the other path's the biased one.  With a ``training`` tensor the fused
    path builds the updates outside the `cond`, with a momentum of 1 when not training; the
    other path builds each update in a `cond`.
    """

    def __init__(
        self,
        axis: Union[int, Sequence[int]] = -1,
        momentum: float = 0.99,
        epsilon: float = 1e-3,
        center: bool = True,
        scale: bool = True,
        beta_initializer=_ZEROS,
        gamma_initializer=_ONES,
        moving_mean_initializer=_ZEROS,
        moving_variance_initializer=_ONES,
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        renorm: bool = False,
        renorm_clipping=None,
        renorm_momentum: float = 0.99,
        fused: Optional[bool] = None,
        trainable: bool = True,
        virtual_batch_size=None,
        adjustment=None,
        name: Optional[str] = None,
        **kwargs: Any,
    ):
        super().__init__(trainable=trainable, name=name, **kwargs)
        for flag, value in (
            ("renorm", renorm),
            ("virtual_batch_size", virtual_batch_size),
            ("adjustment", adjustment),
        ):
            if value:
                raise _layer_error(self, f"{flag} is not supported", NotImplementedError)
        self.axis = axis
        self.momentum = momentum
        self.epsilon = epsilon
        self.center = center
        self.scale = scale
        self.beta_initializer = beta_initializer
        self.gamma_initializer = gamma_initializer
        self.moving_mean_initializer = moving_mean_initializer
        self.moving_variance_initializer = moving_variance_initializer
        self.beta_regularizer = beta_regularizer
        self.gamma_regularizer = gamma_regularizer
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        self.fused = fused

    def build(self, input_shape: TensorShape) -> None:
        input_shape = TensorShape(input_shape)
        ndims = input_shape.ndims
        if ndims is None:
            raise _layer_error(self, "the rank of the inputs must be known")
        axes = [self.axis] if isinstance(self.axis, (int, np.integer)) else list(self.axis)
        if not axes or any(not -ndims <= a < ndims for a in axes):
            raise _layer_error(self, f"axis {self.axis!r} is out of range for shape {input_shape}")
        self._axes = sorted({int(a) % ndims for a in axes})
        if self.fused is None:
            self.fused = ndims == 4 and self._axes in ([1], [3])
        elif self.fused and not (ndims == 4 and self._axes in ([1], [3])):
            raise _layer_error(
                self, "fused=True needs 4-D inputs normalized over axis 1 or 3 (the channels)"
            )
        param_shape = []
        for a in self._axes:
            size = dimension_value(input_shape[a])
            if size is None:
                raise _layer_error(self, f"axis {a} of the inputs must be defined: {input_shape}")
            param_shape.append(size)
        dtype = self._dtype or _dtypes.float32
        self.gamma = self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                "gamma",
                param_shape,
                dtype=dtype,
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
            )
        if self.center:
            self.beta = self.add_weight(
                "beta",
                param_shape,
                dtype=dtype,
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
            )
        self.moving_mean = self.add_weight(
            "moving_mean",
            param_shape,
            dtype=dtype,
            initializer=self.moving_mean_initializer,
            trainable=False,
        )
        self.moving_variance = self.add_weight(
            "moving_variance",
            param_shape,
            dtype=dtype,
            initializer=self.moving_variance_initializer,
            trainable=False,
        )
        self.built = True

    def _assign_moving_average(self, variable, value: Tensor, momentum) -> Tensor:
        with name_scope("AssignMovingAvg") as scope:
            decay = convert_to_tensor(1.0 - momentum, name="decay")
            if decay.dtype is not variable.dtype:
                decay = math_ops.cast(decay, variable.dtype)
            delta = (variable - math_ops.cast(value, variable.dtype)) * decay
            return variable.assign_sub(delta, name=scope)

    def call(self, inputs: Tensor, training: Union[bool, Tensor] = False) -> Tensor:
        _static_truth(training)  # a clear error for anything but a bool or a bool tensor
        if self.fused:
            return self._fused(inputs, training)
        return self._unfused(inputs, training)

    def _scale_and_offset(self, param_shape, dtype):
        gamma = self.gamma if self.scale else array_ops.ones(param_shape, dtype)
        beta = self.beta if self.center else array_ops.zeros(param_shape, dtype)
        return gamma, beta

    def _fused(self, inputs: Tensor, training) -> Tensor:
        data_format = "NCHW" if self._axes == [1] else "NHWC"
        channels = dimension_value(inputs.shape[self._axes[0]])
        gamma, beta = self._scale_and_offset([channels], self.moving_mean.dtype)
        epsilon = max(self.epsilon, _norm_ops.MIN_EPSILON)

        def normalize(is_training: bool):
            def branch():
                return _norm_ops.fused_batch_norm(
                    inputs,
                    gamma,
                    beta,
                    mean=self.moving_mean,
                    variance=self.moving_variance,
                    epsilon=epsilon,
                    data_format=data_format,
                    is_training=is_training,
                )

            return branch

        outputs, mean, variance = _smart_cond(training, normalize(True), normalize(False))
        if _static_truth(training) is False:
            return outputs
        if _static_truth(training) is None:
            momentum = _smart_cond(
                training,
                lambda: convert_to_tensor(self.momentum, _dtypes.float32),
                lambda: convert_to_tensor(1.0, _dtypes.float32),
            )
        else:
            momentum = convert_to_tensor(self.momentum)
        self.add_update(self._assign_moving_average(self.moving_mean, mean, momentum))
        self.add_update(self._assign_moving_average(self.moving_variance, variance, momentum))
        return outputs

    def _unfused(self, inputs: Tensor, training) -> Tensor:
        ndims = inputs.shape.ndims
        reduction_axes = [a for a in range(ndims) if a not in self._axes]
        broadcast_shape = [1] * ndims
        for a in self._axes:
            broadcast_shape[a] = dimension_value(inputs.shape[a])
        needs_broadcast = reduction_axes != list(range(ndims - 1))

        def broadcast(value):
            if value is None or not needs_broadcast:
                return value
            return array_ops.reshape(value, broadcast_shape)

        known = _static_truth(training)
        if known is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            batch_mean, batch_variance = nn_ops.moments(
                inputs, reduction_axes, keep_dims=len(self._axes) > 1
            )
            if len(self._axes) > 1:
                batch_mean = array_ops.reshape(batch_mean, self.moving_mean.shape)
                batch_variance = array_ops.reshape(batch_variance, self.moving_variance.shape)
            mean = _smart_cond(
                training, lambda: batch_mean, lambda: convert_to_tensor(self.moving_mean)
            )
            variance = _smart_cond(
                training,
                lambda: batch_variance,
                lambda: convert_to_tensor(self.moving_variance),
            )
            for variable, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
                update = _smart_cond(
                    training,
                    functools.partial(self._assign_moving_average, variable, value, self.momentum),
                    functools.partial(convert_to_tensor, variable),
                )
                self.add_update(update)
        gamma = self.gamma if self.scale else None
        beta = self.beta if self.center else None
        return nn_ops.batch_normalization(
            inputs,
            broadcast(mean),
            broadcast(variance),
            broadcast(beta),
            broadcast(gamma),
            self.epsilon,
        )


def batch_normalization(
    inputs,
    axis: Union[int, Sequence[int]] = -1,
    momentum: float = 0.99,
    epsilon: float = 1e-3,
    center: bool = True,
    scale: bool = True,
    beta_initializer=_ZEROS,
    gamma_initializer=_ONES,
    moving_mean_initializer=_ZEROS,
    moving_variance_initializer=_ONES,
    beta_regularizer=None,
    gamma_regularizer=None,
    beta_constraint=None,
    gamma_constraint=None,
    training: Union[bool, Tensor] = False,
    trainable: bool = True,
    name: Optional[str] = None,
    reuse=None,
    renorm: bool = False,
    renorm_clipping=None,
    renorm_momentum: float = 0.99,
    fused: Optional[bool] = None,
    virtual_batch_size=None,
    adjustment=None,
) -> Tensor:
    """`BatchNormalization` on ``inputs`` (``tf.compat.v1.layers.batch_normalization``).  Run
    the ops in ``GraphKeys.UPDATE_OPS`` with the training step (``with
    df.control_dependencies(df.get_collection(df.GraphKeys.UPDATE_OPS)):``), as in TF1."""
    layer = BatchNormalization(
        axis=axis,
        momentum=momentum,
        epsilon=epsilon,
        center=center,
        scale=scale,
        beta_initializer=beta_initializer,
        gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer,
        gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint,
        gamma_constraint=gamma_constraint,
        renorm=renorm,
        renorm_clipping=renorm_clipping,
        renorm_momentum=renorm_momentum,
        fused=fused,
        trainable=trainable,
        virtual_batch_size=virtual_batch_size,
        adjustment=adjustment,
        name=name,
        _reuse=reuse,
    )
    return layer(inputs, training=training)

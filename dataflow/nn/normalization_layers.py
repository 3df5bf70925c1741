"""Batch normalization as a layer (``BatchNormalization``, ``batch_normalization``): moving
statistics updated through ``UPDATE_OPS``, renormalization, virtual batches and the fused
kernel, as TF1's ``tf.layers`` has it."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Optional, Union

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_conversion import convert_to_tensor
from ..framework.tensor_shape import TensorShape, dimension_value
from ..ops import array_ops, math_ops, nn_ops
from ..ops import norm_ops as _norm_ops
from .base_layer import (
    _ONES,
    _ZEROS,
    Layer,
    _layer_error,
    _smart_cond,
    _static_truth,
)

# The default initializers of biases, betas and moving statistics (TF1's defaults are these
# initializers, not None).


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


__all__ = ["BatchNormalization", "batch_normalization"]

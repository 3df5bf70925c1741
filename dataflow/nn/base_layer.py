"""``Layer``, the base of TF1's layers (``tf.layers.Layer``): a callable object that owns
variables, builds them on its first call in its own variable scope, and names itself uniquely;
and the checks of arguments the layers share."""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable
from typing import Any, Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Operation, Tensor, _user_location, get_default_graph, name_scope
from ..framework.graph_keys import GraphKeys
from ..framework.tensor_conversion import convert_to_tensor, numpy_value_or_none
from ..framework.tensor_shape import TensorShape
from ..ops import array_ops, math_ops
from ..ops.init_ops import ones_initializer, zeros_initializer
from ..ops.variable_scope import get_variable, variable_scope

# The default initializers of biases, offsets and scales.
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
        if not any(known is variable for known in self._variables):  # by identity: see Variable
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


__all__ = ["Layer"]

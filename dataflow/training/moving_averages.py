"""Exponential moving averages of variables and tensors (``tf.compat.v1.train.
ExponentialMovingAverage``), and the update they are made of, `assign_moving_average`.

``ema.apply(var_list)`` makes one shadow variable per item, named ``<item>/<ema name>``
(``model/w/ExponentialMovingAverage``), and returns the op that moves each shadow towards its
item's current value: ``shadow -= (shadow - value) * (1 - decay)``.  Evaluation code reads the
shadows (`ExponentialMovingAverage.average`) or restores them into the model's variables
(`ExponentialMovingAverage.variables_to_restore` maps their checkpoint names to the variables).

As in TensorFlow:

- the shadow of a variable starts at the variable's initial value; the shadow of a tensor starts
  at zero, and with ``zero_debias=True`` its bias towards zero is divided out (Kingma and Ba's
  correction), with two more variables, ``<shadow>/biased`` and ``<shadow>/local_step``;
- ``num_updates`` (a step count) makes early averages move faster: the decay used is
  ``min(decay, (1 + num_updates) / (10 + num_updates))``, computed in float32;
- averaged variables (not tensors) are added to ``MOVING_AVERAGE_VARIABLES``; shadows are
  non-trainable members of ``GLOBAL_VARIABLES``, made at the top level of control flow and
  outside ``control_dependencies`` blocks, so ``apply`` may be called under
  ``control_dependencies([train_op])`` (the usual way: average the values after the step).

One difference: TensorFlow starts a variable's shadow at the variable's current value when the
variable is already initialized when the shadow's initializer runs; here it always starts at
the variable's initial value (the same thing when ``global_variables_initializer`` initializes
both).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor, _user_location, get_default_graph, name_scope
from ..framework.graph_keys import GraphKeys
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.array_ops import shape as _shape
from ..ops.array_ops import zeros as _zeros
from ..ops.math_ops import cast, minimum
from ..ops.math_ops import pow as _pow
from ..ops.misc_ops import group
from ..ops.variables import Variable

__all__ = ["ExponentialMovingAverage"]

_FLOAT_TYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _lifted(graph):
    """Builds at the top level of control flow, outside ``control_dependencies`` blocks and
    name scopes: where shadow variables are made."""
    from primitives.contexts import building_in

    return building_in(graph, None)


def _top_level_variable(graph, initial_value, name: str, dtype, validate_shape=True) -> Variable:
    with graph.as_default(), _lifted(graph), graph.name_scope(None):
        return Variable(
            initial_value,
            trainable=False,
            name=name,
            dtype=dtype,
            validate_shape=validate_shape,
        )


def _zeros_like_shape(primary, name: str) -> Variable:
    """A non-trainable variable ``name`` of zeros shaped like ``primary`` (a Variable or a
    Tensor), made at the top level."""
    if primary.shape.is_fully_defined():
        zeros = np.zeros(primary.shape.as_list(), _dtypes.numpy_dtype(primary.dtype))
        return _top_level_variable(primary.graph, zeros, name, primary.dtype)
    return _top_level_variable(
        primary.graph,
        lambda: _zeros(_shape(primary), dtype=primary.dtype),
        name,
        primary.dtype,
        validate_shape=False,
    )


def assign_moving_average(
    variable: Variable, value, decay, zero_debias: bool = True, name: Optional[str] = None
):
    """The op that moves ``variable`` towards ``value``: ``variable -= (variable - value) *
    (1 - decay)``, returning the new value.  With ``zero_debias`` (for a variable that starts at
    zero) the average is kept in ``<variable>/biased`` and ``variable`` gets it divided by
    ``1 - decay ** t`` after ``t`` updates (``t`` counted in ``<variable>/local_step``)."""
    with name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        complement = convert_to_tensor(1.0 - decay, name="decay")
        if complement.dtype is not variable.dtype:
            complement = cast(complement, variable.dtype)
        if not zero_debias:
            return variable.assign_sub((variable - value) * complement, name=scope)
        base = variable.op.name
        biased = _zeros_like_shape(variable, f"{base}/biased")
        local_step = _top_level_variable(
            variable.graph,
            np.zeros((), _dtypes.numpy_dtype(variable.dtype)),
            f"{base}/local_step",
            variable.dtype,
        )
        update_biased = biased.assign_sub((biased - value) * complement)
        update_local_step = local_step.assign_add(1)
        bias_factor = 1 - _pow(1.0 - complement, update_local_step)
        return variable.assign(update_biased / bias_factor, name=scope)


class ExponentialMovingAverage:
    """Shadow variables that follow variables or tensors with exponential decay (see the
    module docstring).  ``decay`` near 1 (0.999, 0.9999) averages over many steps."""

    def __init__(
        self,
        decay,
        num_updates=None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        # ``item.ref()`` (a Variable or a Tensor) -> its shadow variable; keyed through ``ref()``,
        # since a variable or tensor made eagerly is unhashable, as in TensorFlow 2.
        self._averages: dict = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list=None):
        """The op that updates the shadows of ``var_list`` (default: the trainable variables),
        making the shadows that do not exist yet.  ``TypeError`` for an item that is not
        float16, float32 or float64."""
        if var_list is None:
            var_list = get_default_graph().get_collection(GraphKeys.TRAINABLE_VARIABLES)
        var_list = list(var_list)
        zero_debiased = set()  # the ids of the shadows of tensors, which are zero-debiased
        for var in var_list:
            if not isinstance(var, (Variable, Tensor)):
                raise TypeError(
                    f"ExponentialMovingAverage.apply takes Variables and Tensors, got {var!r} "
                    f"(at {_user_location()})"
                )
            if var.dtype not in _FLOAT_TYPES:
                raise TypeError(
                    f"The variables must be half, float, or double: {var.name} "
                    f"(at {_user_location()})"
                )
            if var.ref() in self._averages:
                continue
            if isinstance(var, Variable):
                average = _top_level_variable(
                    var.graph, var.initial_value, f"{var.op.name}/{self._name}", var.dtype
                )
                var.graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            else:
                average = _zeros_like_shape(var, f"{var.op.name}/{self._name}")
                if self._zero_debias:
                    zero_debiased.add(id(average))
            self._averages[var.ref()] = average
        with name_scope(self._name) as scope:
            if isinstance(self._decay, (Tensor, Variable)):
                decay = cast(self._decay, _dtypes.float32)
            else:
                decay = convert_to_tensor(self._decay, dtype=_dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = cast(self._num_updates, _dtypes.float32, name="num_updates")
                decay = minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = []
            for var in var_list:
                average = self._averages[var.ref()]
                updates.append(
                    assign_moving_average(average, var, decay, id(average) in zero_debiased)
                )
            return group(*updates, name=scope)

    def average(self, var) -> Optional[Variable]:
        """The shadow variable of ``var``, or None when ``apply`` was not given it."""
        return self._averages.get(var.ref())

    def average_name(self, var) -> str:
        """The name (without ``:0``) the shadow of ``var`` has, or would have if ``apply``
        made it now: what a Saver restoring averages looks it up by."""
        if var.ref() in self._averages:
            return self._averages[var.ref()].op.name
        return get_default_graph().unique_name(f"{var.op.name}/{self._name}", mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """``{checkpoint name: variable}`` for a ``Saver`` that loads the shadows' values into
        the variables they average: each of ``moving_avg_variables`` (default: the trainable
        and the moving-average variables) under its `average_name`, and every other global
        variable under its own name."""
        graph = get_default_graph()
        if moving_avg_variables is None:
            moving_avg_variables = graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
            moving_avg_variables += graph.get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES)
        averaged = [ref.deref() for ref in dict.fromkeys(v.ref() for v in moving_avg_variables)]
        name_map = {self.average_name(v): v for v in averaged}
        averaged_names = {v.name for v in averaged}
        global_variables = graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
        for v in [ref.deref() for ref in dict.fromkeys(v.ref() for v in global_variables)]:
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map

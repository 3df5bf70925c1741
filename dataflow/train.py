"""Training: optimizers that turn gradients into variable updates, and the global step.

An `Optimizer` mirrors ``tf.compat.v1.train.Optimizer``: ``compute_gradients`` calls
`dataflow.gradients`, ``apply_gradients`` adds one update op per variable and groups them
(then increments ``global_step`` when given), ``minimize`` does both.  Everything is graph ops:
running the returned op once performs one training step.

Slot variables (momentum accumulators, Adam's moments and beta powers) are ordinary
non-trainable `Variable` s in ``GLOBAL_VARIABLES``, created under the optimizer's name scope
(``Momentum/w/momentum``), so ``df.global_variables_initializer()`` created after ``minimize``
initializes them.  One optimizer keeps one scope and one slot per variable across calls.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import dtypes as _dtypes
from .gradients import gradients
from .graph import GraphKeys, Tensor, control_dependencies, convert_to_tensor, get_default_graph
from .ops.math_ops import multiply, realdiv, sqrt, square
from .ops.misc_ops import group
from .variables import Variable

__all__ = [
    "AdamOptimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "Optimizer",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
]


class Optimizer:
    """Base class: subclasses define ``_create_slots(var_list)`` and
    ``_apply_dense(grad, var)`` (and may define ``_finish(update_ops, scope)``)."""

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._scope: Optional[str] = None
        self._slots: dict[str, dict[Variable, Variable]] = {}

    def get_name(self) -> str:
        return self._name

    # -- public API -----------------------------------------------------------------------------
    def compute_gradients(
        self,
        loss: Tensor,
        var_list=None,
        gate_gradients=None,
        aggregation_method=None,
        colocate_gradients_with_ops: bool = False,
        grad_loss=None,
    ) -> list[tuple[Optional[Tensor], Variable]]:
        """``[(gradient, variable), ...]`` of ``loss`` for ``var_list`` (default: the trainable
        variables of the loss's graph); the gradient is None for a variable ``loss`` does not
        depend on."""
        if not isinstance(loss, Tensor):
            raise TypeError(f"loss must be a Tensor, got {loss!r}")
        if var_list is None:
            var_list = loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError(f"var_list must hold Variables, got {v!r}")
        grads = gradients(loss, var_list, grad_ys=None if grad_loss is None else [grad_loss])
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step: Optional[Variable] = None, name=None):
        """An op that applies each gradient to its variable (None gradients are skipped) and
        then, when ``global_step`` is given, increments it."""
        pairs = [(g, v) for g, v in grads_and_vars]
        if not pairs:
            raise ValueError("No variables provided.")
        with_grads = [(g, v) for g, v in pairs if g is not None]
        if not with_grads:
            names = ", ".join(v.name for _, v in pairs)
            raise ValueError(
                f"No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables [{names}] and the loss."
            )
        graph = with_grads[0][1].graph
        with graph.as_default():
            with control_dependencies(None), self._name_scope(graph):
                self._create_slots([v for _, v in with_grads])
            with graph.name_scope(name or self._name) as scope:
                updates = []
                for grad, var in with_grads:
                    with graph.name_scope("update_" + var.op.name):
                        grad = convert_to_tensor(grad)
                        updates.append(self._apply_dense(grad, var))
                finish = self._finish(updates, scope)
                if global_step is None:
                    return group(finish, name=scope[:-1] + "/")
                with control_dependencies([finish]):
                    return group(global_step.assign_add(1), name=scope[:-1] + "/")

    def minimize(
        self,
        loss: Tensor,
        global_step: Optional[Variable] = None,
        var_list=None,
        gate_gradients=None,
        aggregation_method=None,
        colocate_gradients_with_ops: bool = False,
        name: Optional[str] = None,
        grad_loss=None,
    ):
        """``apply_gradients(compute_gradients(loss, var_list), global_step)``."""
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot_names(self) -> list[str]:
        return sorted(self._slots)

    def get_slot(self, var: Variable, name: str) -> Optional[Variable]:
        return self._slots.get(name, {}).get(var)

    def variables(self) -> list[Variable]:
        """The optimizer's own variables (slots and extra state)."""
        found = [s for slots in self._slots.values() for s in slots.values()]
        return found + self._non_slot_variables()

    # -- for subclasses -------------------------------------------------------------------------
    def _create_slots(self, var_list: list) -> None:
        pass

    def _apply_dense(self, grad: Tensor, var: Variable):
        raise NotImplementedError

    def _finish(self, update_ops: list, scope: str):
        return group(*update_ops)

    def _non_slot_variables(self) -> list[Variable]:
        return []

    def _name_scope(self, graph):
        """The optimizer's own scope: made unique the first time, re-entered afterwards."""
        if self._scope is None:
            with graph.name_scope(self._name) as scope:
                self._scope = scope
        return graph.name_scope(self._scope)

    def _zeros_slot(self, var: Variable, slot_name: str) -> Variable:
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            zeros = np.zeros(var.shape.as_list(), dtype=_dtypes.numpy_dtype(var.dtype))
            slots[var] = Variable(
                zeros,
                trainable=False,
                name=f"{var.op.name}/{slot_name}",
                dtype=var.dtype,
            )
        return slots[var]

    def _hyper(self, value, var: Variable) -> Tensor:
        if isinstance(value, Tensor):
            return value
        return convert_to_tensor(value, dtype=var.dtype)


class GradientDescentOptimizer(Optimizer):
    """``var -= learning_rate * grad``."""

    def __init__(self, learning_rate, use_locking: bool = False, name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        return var.assign_sub(multiply(self._hyper(self._learning_rate, var), grad))


class MomentumOptimizer(Optimizer):
    """``accum = momentum * accum + grad; var -= learning_rate * accum`` (with Nesterov:
    ``var -= learning_rate * (grad + momentum * accum)``), as in TensorFlow."""

    def __init__(
        self,
        learning_rate,
        momentum,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum")

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "momentum")
        lr, momentum = self._hyper(self._learning_rate, var), self._hyper(self._momentum, var)
        new_accum = accum.assign(accum.read_value() * momentum + grad)
        if self._use_nesterov:
            step = multiply(lr, grad + multiply(momentum, new_accum))
        else:
            step = multiply(lr, new_accum)
        return var.assign_sub(step)


class AdamOptimizer(Optimizer):
    """Adam (Kingma and Ba), in TensorFlow's form: with ``t`` the step number,
    ``lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t)``,
    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g^2``,
    ``var -= lr_t * m / (sqrt(v) + epsilon)``.  ``beta1^t`` and ``beta2^t`` are variables
    (``beta1_power``, ``beta2_power``) multiplied by the betas after each step."""

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-08,
        use_locking: bool = False,
        name: str = "Adam",
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._beta1, self._beta2, self._epsilon = beta1, beta2, epsilon
        self._beta1_power: Optional[Variable] = None
        self._beta2_power: Optional[Variable] = None

    def _create_slots(self, var_list):
        if self._beta1_power is None:
            dtype = min((v.dtype for v in var_list), key=lambda d: d.name)
            self._beta1_power = Variable(
                self._beta1, name="beta1_power", trainable=False, dtype=dtype
            )
            self._beta2_power = Variable(
                self._beta2, name="beta2_power", trainable=False, dtype=dtype
            )
        for v in var_list:
            self._zeros_slot(v, "m")
            self._zeros_slot(v, "v")

    def _non_slot_variables(self):
        return [p for p in (self._beta1_power, self._beta2_power) if p is not None]

    def _power(self, power: Variable, var: Variable) -> Tensor:
        from .ops.math_ops import cast

        return cast(power.read_value(), var.dtype)

    def _apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        lr = self._hyper(self._learning_rate, var)
        beta1, beta2 = self._hyper(self._beta1, var), self._hyper(self._beta2, var)
        epsilon = self._hyper(self._epsilon, var)
        beta1_power = self._power(self._beta1_power, var)
        beta2_power = self._power(self._beta2_power, var)
        lr_t = realdiv(multiply(lr, sqrt(1 - beta2_power)), 1 - beta1_power)
        new_m = m.assign(m.read_value() * beta1 + multiply(1 - beta1, grad))
        new_v = v.assign(v.read_value() * beta2 + multiply(1 - beta2, square(grad)))
        return var.assign_sub(multiply(lr_t, realdiv(new_m, sqrt(new_v) + epsilon)))

    def _finish(self, update_ops, scope):
        with control_dependencies(update_ops):
            b1 = self._beta1_power
            b2 = self._beta2_power
            update_b1 = b1.assign(b1.read_value() * self._hyper(self._beta1, b1))
            update_b2 = b2.assign(b2.read_value() * self._hyper(self._beta2, b2))
        return group(*update_ops, update_b1, update_b2)


# -- the global step -------------------------------------------------------------------------------
def get_global_step(graph=None) -> Optional[Variable]:
    """The global step variable of ``graph`` (default graph), or None."""
    graph = graph or get_default_graph()
    steps = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        raise TypeError("There are multiple items in the global_step collection")
    return steps[0] if steps else None


def create_global_step(graph=None) -> Variable:
    """Creates the int64 scalar variable ``global_step`` (initial value 0); ``ValueError`` if
    ``graph`` already has one."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), control_dependencies(None), graph.name_scope(None):
        return Variable(
            np.int64(0),
            trainable=False,
            name="global_step",
            dtype=_dtypes.int64,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph=None) -> Variable:
    """The global step of ``graph``, created if it has none."""
    graph = graph or get_default_graph()
    return get_global_step(graph) or create_global_step(graph)


# checkpoints
from .saver import Saver, latest_checkpoint  # noqa: E402, F401

"""Training: optimizers that turn gradients into variable updates, and the global step.

An `Optimizer` mirrors ``tf.compat.v1.train.Optimizer``:

- ``compute_gradients(loss, var_list)`` calls `dataflow.gradients` and pairs each variable with
  its gradient (None where ``loss`` does not depend on it);
- ``apply_gradients(grads_and_vars, global_step)`` creates the slot variables, adds one update
  per variable that has a gradient (under ``<name>/update_<variable>``), groups them with the
  optimizer's own bookkeeping (``_finish``: Adam's beta powers) and, when ``global_step`` is
  given, increments it after all of that.  The returned op is named like the optimizer
  (``GradientDescent``) and is added to the ``train_op`` collection;
- ``minimize`` does both.

Everything is graph ops: running the returned op once performs one training step.

Numbers follow TensorFlow's fused kernels (``ApplyGradientDescent``, ``ApplyMomentum``,
``ApplyAdam``) step for step, including where they convert: a hyperparameter given as a Python
number becomes a float32 tensor once per ``apply_gradients`` (``_prepare``) and is cast to each
variable's dtype, so a float64 model trained with ``learning_rate=0.1`` uses float32(0.1), as
TensorFlow does.

State, named as TensorFlow names it (so checkpoints line up):

- slot variables, one per trained variable and slot: ``<variable>/<optimizer name>`` (Momentum's
  accumulator, Adam's first moment ``m``) and ``<variable>/<optimizer name>_1`` (Adam's second
  moment ``v``), created at the top level of the name scopes;
- non-slot variables (Adam's ``beta1_power`` and ``beta2_power``), one per graph, created in the
  name scope ``minimize`` is called in.

All are non-trainable members of ``GLOBAL_VARIABLES``, created outside any cond, loop and
``control_dependencies`` block, so ``df.global_variables_initializer()`` created after
``minimize`` initializes them.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import dtypes as _dtypes
from . import nest
from .gradients import gradients
from .graph import (
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    control_dependencies,
    convert_to_tensor,
    get_default_graph,
)
from .ops.array_ops import shape as _shape
from .ops.array_ops import zeros as _zeros
from .ops.math_ops import cast, multiply, realdiv, sqrt, square
from .ops.misc_ops import group
from .ops.misc_ops import tuple as _tuple
from .variables import Variable

__all__ = [
    "AdamOptimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "Optimizer",
    "assert_global_step",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
]

_VALID_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _lifted(graph: Graph):
    """Builds at the top level of control flow, outside any ``control_dependencies`` block, in
    the current name scope (TensorFlow's ``init_scope``): where optimizer state is created."""
    from primitives.contexts import building_in

    return building_in(graph, None)


class Optimizer:
    """Base class of the optimizers (``tf.compat.v1.train.Optimizer``).

    A subclass defines ``_prepare()`` (turn hyperparameters into tensors, once per
    ``apply_gradients``), ``_create_slots(var_list)`` and ``_apply_dense(grad, var)``, and may
    define ``_finish(update_ops, name_scope)``.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # slot name -> {variable: slot variable}
        self._slots: dict[str, dict[Variable, Variable]] = {}
        # (name, graph) -> variable: state shared by all variables, one per graph.
        self._non_slot_dict: dict[tuple[str, Graph], Variable] = {}

    def get_name(self) -> str:
        return self._name

    # -- public API -----------------------------------------------------------------------------
    def minimize(
        self,
        loss: Tensor,
        global_step: Optional[Variable] = None,
        var_list=None,
        gate_gradients: int = GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops: bool = False,
        name: Optional[str] = None,
        grad_loss=None,
    ) -> Operation:
        """``apply_gradients(compute_gradients(loss, var_list), global_step, name)``: the op
        that performs one training step.  ``ValueError`` when no variable gets a gradient."""
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            grad_loss=grad_loss,
        )
        if all(g is None for g, _ in grads_and_vars):
            names = [str(v) for _, v in grads_and_vars]
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {names} and loss {loss}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(
        self,
        loss: Tensor,
        var_list=None,
        gate_gradients: int = GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops: bool = False,
        grad_loss=None,
    ) -> list[tuple[Optional[Tensor], Any]]:
        """``[(gradient, variable), ...]`` of ``loss`` for each of ``var_list``.

        ``var_list`` (a list, possibly nested, of Variables or Tensors) defaults to the
        trainable variables of the loss's graph (TensorFlow takes the default graph's; the two
        are the same whenever TensorFlow's choice would work).  The gradient is None for a
        variable ``loss`` does not depend on.  ``GATE_GRAPH`` makes every gradient wait for all
        of them (an identity per gradient); ``GATE_OP`` and ``GATE_NONE`` add nothing, as
        gradients here read forward values, never a variable an update may already have
        changed.  ``loss`` is a Tensor (or a Variable); a callable loss is an eager-mode feature
        and is refused.
        """
        if isinstance(loss, Variable):
            loss = loss.read_value()
        if not isinstance(loss, Tensor):
            raise TypeError(
                f"loss must be a Tensor, got {loss!r} (a callable loss is for eager execution)"
            )
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(
                "gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                f"Optimizer.GATE_GRAPH.  Not {gate_gradients}"
            )
        _assert_valid_dtypes([loss])
        if grad_loss is not None:
            grad_loss = convert_to_tensor(grad_loss)
            _assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        else:
            var_list = nest.flatten(var_list)
        for v in var_list:
            if not isinstance(v, (Variable, Tensor)):
                raise TypeError(f"Trying to optimize unsupported type {v!r}: pass Variables")
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients(
            loss,
            var_list,
            grad_ys=None if grad_loss is None else [grad_loss],
            aggregation_method=aggregation_method,
        )
        if gate_gradients == Optimizer.GATE_GRAPH and any(g is not None for g in grads):
            grads = _tuple(grads)
        grads_and_vars = list(zip(grads, var_list))
        _assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(
        self, grads_and_vars, global_step: Optional[Variable] = None, name: Optional[str] = None
    ) -> Operation:
        """The op that applies each gradient to its variable (pairs whose gradient is None are
        skipped) and then, when ``global_step`` is given, increments ``global_step`` by one.

        ``name`` (default: the optimizer's name) names the scope of the update ops and the
        returned op.
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                try:
                    g = convert_to_tensor(g)
                except (TypeError, ValueError):
                    raise TypeError(
                        f"Gradient must be convertible to a Tensor or None: {g!r}"
                    ) from None
            if isinstance(v, Tensor):
                raise NotImplementedError(f"Trying to update a Tensor {v}: pass Variables")
            if not isinstance(v, Variable):
                raise TypeError(f"Trying to optimize unsupported type {v!r}: pass Variables")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            names = [str(v) for _, v in converted]
            raise ValueError(f"No gradients provided for any variable: {names}.")
        if global_step is not None and not isinstance(global_step, Variable):
            raise TypeError(f"global_step must be a Variable, got {global_step!r}")
        graph = var_list[0].graph
        with graph.as_default():
            with _lifted(graph):
                self._create_slots(var_list)
            with graph.name_scope(name or self._name) as scope:
                self._prepare()
                update_ops = []
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph.name_scope("update_" + var.op.name):
                        update_ops.append(self._apply_dense(grad, var))
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    with control_dependencies([self._finish(update_ops, "update")]):
                        apply_updates = global_step.assign_add(1, name=scope).op
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
        return apply_updates

    def get_slot(self, var: Variable, name: str) -> Optional[Variable]:
        """The slot variable ``name`` (see `get_slot_names`) made for ``var``, or None."""
        return self._slots.get(name, {}).get(var)

    def get_slot_names(self) -> list[str]:
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The optimizer's variables in the default graph (slots and non-slot state), sorted
        by name."""
        graph = get_default_graph()
        found = [v for v in self._non_slot_dict.values() if v.graph is graph]
        found += [s for slots in self._slots.values() for s in slots.values() if s.graph is graph]
        return sorted(found, key=lambda v: v.name)

    # -- for subclasses -------------------------------------------------------------------------
    def _prepare(self) -> None:
        pass

    def _create_slots(self, var_list: list) -> None:
        pass

    def _apply_dense(self, grad: Tensor, var: Variable):
        raise NotImplementedError

    def _finish(self, update_ops: list, name_scope: str) -> Operation:
        return group(*update_ops, name=name_scope)

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        """The slot ``slot_name`` of ``var``, made on first use: zeros like ``var``, named
        ``<var>/<op_name>`` at the top level of the name scopes."""
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            graph = var.graph
            with graph.as_default(), _lifted(graph), graph.name_scope(None):
                if var.shape.is_fully_defined():
                    zeros = np.zeros(var.shape.as_list(), dtype=_dtypes.numpy_dtype(var.dtype))
                    slots[var] = Variable(
                        zeros, trainable=False, name=f"{var.op.name}/{op_name}", dtype=var.dtype
                    )
                else:
                    slots[var] = Variable(
                        lambda: _zeros(_shape(var.initial_value), dtype=var.dtype),
                        trainable=False,
                        name=f"{var.op.name}/{op_name}",
                        validate_shape=False,
                    )
        return slots[var]

    def _create_non_slot_variable(self, initial_value, name: str, colocate_with: Variable):
        """The variable ``name`` shared by all of the optimizer's variables in the graph of
        ``colocate_with``, made on first use in the current name scope."""
        key = (name, colocate_with.graph)
        if key not in self._non_slot_dict:
            self._non_slot_dict[key] = Variable(initial_value, name=name, trainable=False)
        return self._non_slot_dict[key]

    def _get_non_slot_variable(self, name: str, graph: Optional[Graph] = None):
        return self._non_slot_dict.get((name, graph or get_default_graph()))

    def _non_slot_variables(self) -> list[Variable]:
        return list(self._non_slot_dict.values())

    @staticmethod
    def _call_if_callable(param):
        return param() if callable(param) else param


def _assert_valid_dtypes(tensors) -> None:
    for t in tensors:
        if t.dtype not in _VALID_DTYPES:
            expected = [d.name for d in _VALID_DTYPES]
            raise ValueError(f"Invalid type {t.dtype.name} for {t.name}, expected: {expected}.")


def _hyperparameter(value, name: str) -> Tensor:
    """A hyperparameter as a tensor: a Python float becomes float32, as in TensorFlow."""
    return convert_to_tensor(Optimizer._call_if_callable(value), name=name)


class GradientDescentOptimizer(Optimizer):
    """``var -= grad * learning_rate``."""

    def __init__(self, learning_rate, use_locking: bool = False, name: str = "GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor: Optional[Tensor] = None

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        return var.assign_sub(multiply(grad, cast(self._learning_rate_tensor, var.dtype)))


class MomentumOptimizer(Optimizer):
    """``accum = accum * momentum + grad; var -= accum * learning_rate``; with Nesterov
    ``var -= grad * learning_rate + accum * momentum * learning_rate``.  The accumulator is
    the slot ``"momentum"`` (variable ``<var>/Momentum``)."""

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
        self._learning_rate_tensor: Optional[Tensor] = None
        self._momentum_tensor: Optional[Tensor] = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        self._momentum_tensor = _hyperparameter(self._momentum, "momentum")

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "momentum")
        lr = cast(self._learning_rate_tensor, var.dtype)
        momentum = cast(self._momentum_tensor, var.dtype)
        new_accum = accum.assign(accum.read_value() * momentum + grad)
        if self._use_nesterov:
            step = grad * lr + new_accum * momentum * lr
        else:
            step = new_accum * lr
        return var.assign_sub(step)


class AdamOptimizer(Optimizer):
    """Adam (Kingma and Ba, 2015) in TensorFlow's form, with ``t`` the step number:

    ``lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t)``,
    ``m += (g - m) * (1 - beta1)``, ``v += (g^2 - v) * (1 - beta2)``,
    ``var -= m * lr_t / (sqrt(v) + epsilon)``.

    The bias correction is folded into the step size, so ``epsilon`` is added to ``sqrt(v)``
    before correction (the paper's "epsilon hat").  ``beta1^t`` and ``beta2^t`` are the
    non-slot variables ``beta1_power`` and ``beta2_power`` (float32 for Python-number betas,
    cast to each variable's dtype), multiplied by the betas after every step.  The moments are
    the slots ``"m"`` and ``"v"`` (variables ``<var>/Adam`` and ``<var>/Adam_1``).
    """

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
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon
        self._lr_t = self._beta1_t = self._beta2_t = self._epsilon_t = None

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first_var)
        self._create_non_slot_variable(self._beta2, "beta2_power", first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name + "_1")

    def _get_beta_accumulators(self) -> tuple[Variable, Variable]:
        graph = get_default_graph()
        return (
            self._get_non_slot_variable("beta1_power", graph),
            self._get_non_slot_variable("beta2_power", graph),
        )

    def _prepare(self):
        self._lr_t = _hyperparameter(self._lr, "learning_rate")
        self._beta1_t = _hyperparameter(self._beta1, "beta1")
        self._beta2_t = _hyperparameter(self._beta2, "beta2")
        self._epsilon_t = _hyperparameter(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        dtype = var.dtype
        beta1_power, beta2_power = (
            cast(p.read_value(), dtype) for p in self._get_beta_accumulators()
        )
        lr, epsilon = cast(self._lr_t, dtype), cast(self._epsilon_t, dtype)
        beta1, beta2 = cast(self._beta1_t, dtype), cast(self._beta2_t, dtype)
        alpha = realdiv(multiply(lr, sqrt(1 - beta2_power)), 1 - beta1_power)
        m_read, v_read = m.read_value(), v.read_value()
        new_m = m.assign(m_read + (grad - m_read) * (1 - beta1))
        new_v = v.assign(v_read + (square(grad) - v_read) * (1 - beta2))
        return var.assign_sub(realdiv(multiply(new_m, alpha), sqrt(new_v) + epsilon))

    def _finish(self, update_ops, name_scope):
        with control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            update_beta1 = beta1_power.assign(beta1_power.read_value() * self._beta1_t)
            update_beta2 = beta2_power.assign(beta2_power.read_value() * self._beta2_t)
        return group(*update_ops, update_beta1, update_beta2, name=name_scope)


# -- the global step -------------------------------------------------------------------------------
def global_step(sess, global_step_tensor) -> int:
    """The value of the global step in ``sess``, as a Python int."""
    return int(sess.run(global_step_tensor))


def assert_global_step(global_step_tensor) -> None:
    """``TypeError`` unless ``global_step_tensor`` is an integer scalar Variable or Tensor."""
    if not isinstance(global_step_tensor, (Variable, Tensor)):
        raise TypeError(
            f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.'
        )
    if not global_step_tensor.dtype.is_integer:
        raise TypeError(
            f'Existing "global_step" does not have integer type: {global_step_tensor.dtype.name}'
        )
    shape = global_step_tensor.shape
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def get_global_step(graph: Optional[Graph] = None):
    """The global step of ``graph`` (default graph): the one member of the ``global_step``
    collection, else the variable or tensor named ``global_step:0``, else None.  None too when
    the collection holds several (TensorFlow logs an error then)."""
    graph = graph or get_default_graph()
    steps = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(steps) > 1:
        return None
    if steps:
        step = steps[0]
    else:
        named = [
            v for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES) if v.name == "global_step:0"
        ]
        if named:
            step = named[0]
        else:
            try:
                step = graph.get_tensor_by_name("global_step:0")
            except KeyError:
                return None
    assert_global_step(step)
    return step


def create_global_step(graph: Optional[Graph] = None) -> Variable:
    """Creates the int64 scalar variable ``global_step`` (initial value 0, not trainable, in
    the ``global_step`` collection) at the top level of ``graph``; ``ValueError`` if ``graph``
    already has a global step."""
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), _lifted(graph), graph.name_scope(None):
        return Variable(
            np.int64(0),
            trainable=False,
            name="global_step",
            dtype=_dtypes.int64,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph: Optional[Graph] = None):
    """The global step of ``graph``, created if it has none."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


# checkpoints
from .saver import Saver, latest_checkpoint  # noqa: E402, F401

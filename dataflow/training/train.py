"""Training: optimizers that turn gradients into variable updates, the global step, and (from
their own modules) learning-rate schedules, moving averages and checkpoints.

An `Optimizer` mirrors ``tf.compat.v1.train.Optimizer``:

- ``compute_gradients(loss, var_list)`` calls `dataflow.autodiff.gradients` and pairs each
  variable with its gradient (None where ``loss`` does not depend on it);
- ``apply_gradients(grads_and_vars, global_step)`` creates the slot variables, adds one update
  per variable that has a gradient (under ``<name>/update_<variable>``), groups them with the
  optimizer's own bookkeeping (``_finish``: Adam's beta powers) and, when ``global_step`` is
  given, increments it after all of that.  The returned op is named like the optimizer
  (``GradientDescent``) and is added to the ``train_op`` collection;
- ``minimize`` does both.

Everything is graph ops: running the returned op once performs one training step.  In eager
mode the same ops run as they are made, so ``apply_gradients`` performs the step at once (and
returns None, as TensorFlow's does), and ``minimize`` takes the loss as a function of no
arguments, which it runs under a `GradientTape` for the gradients.  The
optimizers are GradientDescent, Momentum, Adam, RMSProp, Adagrad, Adadelta, Ftrl,
ProximalGradientDescent and ProximalAdagrad as in ``tf.compat.v1.train``, and AdamW and
MomentumW (decoupled weight decay, from TensorFlow 1.x's ``tf.contrib.opt``).

Numbers follow TensorFlow's fused kernels (``ApplyGradientDescent``, ``ApplyMomentum``,
``ApplyAdam``, ``ApplyRMSProp``, ``ApplyFtrlV2``, ...) step for step, including where they
convert: a hyperparameter given as a Python number becomes a float32 tensor once per
``apply_gradients`` (``_prepare``) and is cast to each variable's dtype, so a float64 model
trained with ``learning_rate=0.1`` uses float32(0.1), as TensorFlow does.  Each kernel is
written as the composition of graph ops it computes (reads, arithmetic, assigns), so that a
picture of the step shows the update rule.

State, named as TensorFlow names it (so checkpoints line up):

- slot variables, one per trained variable and slot: ``<variable>/<optimizer name>`` for the
  first slot made (Momentum's accumulator, Adam's first moment ``m``, RMSProp's ``rms``) and
  ``<variable>/<optimizer name>_1``, ``_2`` for the next ones, created at the top level of the
  name scopes;
- non-slot variables (Adam's ``beta1_power`` and ``beta2_power``), one per graph, created in the
  name scope ``minimize`` is called in.

All are non-trainable members of ``GLOBAL_VARIABLES``, created outside any cond, loop and
``control_dependencies`` block, so ``df.global_variables_initializer()`` created after
``minimize`` initializes them.

Sparse gradients.  A gradient given as ``IndexedSlices`` (from ``gather`` or
``nn.embedding_lookup``) has its duplicate rows summed and goes to ``_apply_sparse``, which by
default does what TensorFlow's ``SparseApply*`` kernels do: the optimizer's dense update applied
to the gradient's rows only, the other rows of the variable and of its slots left as they are.
It runs ``_apply_dense`` on `_Rows` views of the variable and its slots, which read the rows
with ``gather`` and write them with ``scatter_*``, so every optimizer's sparse rule is its dense
one and nothing else.  Adam's sparse update in TensorFlow decays every row's moments, which is
its dense update of the dense gradient, so Adam makes the gradient dense instead.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..framework.graph import Operation, Tensor, control_dependencies, get_default_graph
from ..framework.tensor_conversion import convert_to_tensor
from ..ops.array_ops import identity as _identity
from ..ops.array_ops import zeros_like as _zeros_like
from ..ops.math_ops import abs as _abs
from ..ops.math_ops import (
    cast,
    greater,
    maximum,
    multiply,
    negative,
    realdiv,
    rsqrt,
    sign,
    sqrt,
    square,
    where,
)
from ..ops.math_ops import pow as _pow
from ..ops.misc_ops import group, no_op
from ..ops.variables import Variable
from .optimizer import (  # noqa: F401 - defined there, reached here too
    Optimizer,
    _hyperparameter,
    _Rows,
)
from .training_util import (  # noqa: F401 - defined there, reached here too
    _lifted,
    assert_global_step,
    create_global_step,
    get_global_step,
    get_or_create_global_step,
    global_step,
)

__all__ = [
    "AdadeltaOptimizer",
    "AdagradOptimizer",
    "AdamOptimizer",
    "AdamWOptimizer",
    "DecoupledWeightDecayExtension",
    "FtrlOptimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "MomentumWOptimizer",
    "Optimizer",
    "ProximalAdagradOptimizer",
    "ProximalGradientDescentOptimizer",
    "RMSPropOptimizer",
    "assert_global_step",
    "create_global_step",
    "extend_with_decoupled_weight_decay",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
]


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
    the slot ``"momentum"`` (variable ``<var>/Momentum``).  TensorFlow's sparse update
    (``SparseApplyMomentum``) changes the gradient's rows only, where the dense one decays every
    row's accumulator."""

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
    the slots ``"m"`` and ``"v"`` (variables ``<var>/Adam`` and ``<var>/Adam_1``).  TensorFlow's
    sparse update decays every row's moments too and adds the gradient's rows; only contrib's
    ``LazyAdamOptimizer`` leaves the other rows alone.
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-08,
        use_locking: bool = False,
        name: str = "Adam",
        use_own_namescope_for_non_slot_vars: bool = False,
    ):
        super().__init__(use_locking, name, use_own_namescope_for_non_slot_vars)
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
        # The new moments are used as computed, not read back from their variables: the
        # values are the same, and the whole update is then one elementwise computation from
        # (grad, m, v) to (m, v, step), which the native tier runs as one loop (the
        # compiler's `native_arrays`), ``ApplyAdam``'s one kernel in TensorFlow.
        next_m = m_read + (grad - m_read) * (1 - beta1)
        next_v = v_read + (square(grad) - v_read) * (1 - beta2)
        assign_m, assign_v = m.assign(next_m), v.assign(next_v)
        step = realdiv(multiply(next_m, alpha), sqrt(next_v) + epsilon)
        with control_dependencies([assign_m, assign_v]):
            return var.assign_sub(step)

    def _apply_sparse(self, grad, var):
        return self._apply_dense(convert_to_tensor(grad), var)  # see the class docstring

    def _finish(self, update_ops, name_scope):
        with control_dependencies(update_ops):
            beta1_power, beta2_power = self._get_beta_accumulators()
            update_beta1 = beta1_power.assign(beta1_power.read_value() * self._beta1_t)
            update_beta2 = beta2_power.assign(beta2_power.read_value() * self._beta2_t)
        return group(*update_ops, update_beta1, update_beta2, name=name_scope)


class RMSPropOptimizer(Optimizer):
    """RMSProp (Hinton's lecture 6e) in TensorFlow's form, with ``rho = decay``:

    ``ms += (grad^2 - ms) * (1 - rho)``,
    ``mom = mom * momentum + grad * learning_rate / sqrt(ms + epsilon)``, ``var -= mom``.

    With ``centered=True`` the mean gradient ``mg += (grad - mg) * (1 - rho)`` is tracked too
    and ``ms + epsilon`` becomes ``ms - mg^2 + epsilon`` (an estimate of the variance).  Slots,
    made in this order as TensorFlow does: ``"rms"`` (starts at ones, ``<var>/RMSProp``),
    ``"mg"`` when centered, and ``"momentum"`` (the next ``<var>/RMSProp_<n>``).  As in
    TensorFlow's dense kernel, every element is updated on every step, even where its gradient
    is zero; its sparse kernel updates the gradient's rows only.
    """

    def __init__(
        self,
        learning_rate,
        decay=0.9,
        momentum=0.0,
        epsilon=1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ):
        super().__init__(use_locking, name)
        self._learning_rate, self._decay = learning_rate, decay
        self._momentum, self._epsilon = momentum, epsilon
        self._centered = centered
        self._learning_rate_tensor = self._decay_tensor = None
        self._momentum_tensor = self._epsilon_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, "rms", self._name, 1)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        self._decay_tensor = _hyperparameter(self._decay, "decay")
        self._momentum_tensor = _hyperparameter(self._momentum, "momentum")
        self._epsilon_tensor = _hyperparameter(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, rho = cast(self._learning_rate_tensor, dtype), cast(self._decay_tensor, dtype)
        momentum, epsilon = cast(self._momentum_tensor, dtype), cast(self._epsilon_tensor, dtype)
        rms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        rms_read = rms.read_value()
        new_rms = rms.assign(rms_read + (square(grad) - rms_read) * (1 - rho))
        if self._centered:
            mg = self.get_slot(var, "mg")
            mg_read = mg.read_value()
            new_mg = mg.assign(mg_read + (grad - mg_read) * (1 - rho))
            denominator = new_rms - square(new_mg) + epsilon
        else:
            denominator = new_rms + epsilon
        new_mom = mom.assign(mom.read_value() * momentum + grad * lr / sqrt(denominator))
        return var.assign_sub(new_mom)


class AdagradOptimizer(Optimizer):
    """Adagrad (Duchi et al., 2011): ``accum += grad^2; var -= grad * learning_rate /
    sqrt(accum)``.  The accumulator is the slot ``"accumulator"`` (``<var>/Adagrad``), which
    starts at ``initial_accumulator_value`` (positive, so the first step divides by no zero).
    """

    def __init__(
        self,
        learning_rate,
        initial_accumulator_value=0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._learning_rate_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, "accumulator", self._name, self._initial_accumulator_value)

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad, var):
        accum = self.get_slot(var, "accumulator")
        new_accum = accum.assign_add(square(grad))
        lr = cast(self._learning_rate_tensor, var.dtype)
        return var.assign_sub(grad * lr * rsqrt(new_accum))


class AdagradDAOptimizer(Optimizer):
    """Adagrad Dual Averaging (Duchi et al., 2011), for sparse linear models: the variable is
    recomputed from the sums of the gradients and of their squares at every step ``t``
    (``global_step + 1``):

    ``g_acc += grad``, ``gg_acc += grad^2``,
    ``var = -lr * g_acc / (l2 * t * lr + sqrt(gg_acc))``, or with ``l1 > 0``
    ``var = sign(-g_acc) * max(|g_acc| - l1 * t, 0) * lr / (l2 * t * lr + sqrt(gg_acc))``.

    Slots ``"gradient_accumulator"`` (``<var>/AdagradDA``, starting at zero) and
    ``"gradient_squared_accumulator"`` (``<var>/AdagradDA_1``, starting at
    ``initial_gradient_squared_accumulator_value``, which must be positive).  ``global_step``
    is the step variable ``minimize`` increments (it must be given).
    """

    def __init__(
        self,
        learning_rate,
        global_step,
        initial_gradient_squared_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking: bool = False,
        name: str = "AdagradDA",
    ):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(
                "initial_gradient_squared_accumulator_value must be positive: "
                f"{initial_gradient_squared_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = (
            initial_gradient_squared_accumulator_value
        )
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step
        self._learning_rate_tensor = None
        self._global_step_on_worker = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "gradient_accumulator", self._name)
            self._filled_slot(
                v,
                "gradient_squared_accumulator",
                self._name + "_1",
                self._initial_gradient_squared_accumulator_value,
            )

    def _prepare(self):
        if self._global_step is None:
            raise ValueError("AdagradDAOptimizer needs its global_step (got None)")
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        step = self._global_step
        step = step.value() if isinstance(step, Variable) else convert_to_tensor(step)
        self._global_step_on_worker = _identity(step) + 1

    def _apply_dense(self, grad, var):
        g_acc = self.get_slot(var, "gradient_accumulator")
        gg_acc = self.get_slot(var, "gradient_squared_accumulator")
        dtype = var.dtype.base_dtype
        new_g_acc = g_acc.assign_add(grad)
        new_gg_acc = gg_acc.assign_add(square(grad))
        lr = cast(self._learning_rate_tensor, dtype)
        step = cast(self._global_step_on_worker, dtype)
        l1 = cast(self._l1_regularization_strength, dtype)
        l2 = cast(self._l2_regularization_strength, dtype)
        denominator = l2 * step * lr + sqrt(new_gg_acc)
        shrunk = where(
            greater(l1, 0),
            sign(negative(new_g_acc)) * maximum(_abs(new_g_acc) - l1 * step, 0),
            negative(new_g_acc),
        )
        return var.assign(shrunk * lr / denominator)


class AdadeltaOptimizer(Optimizer):
    """Adadelta (Zeiler, 2012), whose step size is the ratio of two running root mean squares:

    ``accum = accum * rho + grad^2 * (1 - rho)``,
    ``update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad``,
    ``var -= update * learning_rate``,
    ``accum_update = accum_update * rho + update^2 * (1 - rho)``.

    ``learning_rate=1.0`` is the paper's form.  Slots ``"accum"`` (``<var>/Adadelta``) and
    ``"accum_update"`` (``<var>/Adadelta_1``), both starting at zero.
    """

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.95,
        epsilon=1e-8,
        use_locking: bool = False,
        name: str = "Adadelta",
    ):
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon
        self._lr_t = self._rho_t = self._epsilon_t = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = _hyperparameter(self._lr, "lr")
        self._rho_t = _hyperparameter(self._rho, "rho")
        self._epsilon_t = _hyperparameter(self._epsilon, "epsilon")

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, rho = cast(self._lr_t, dtype), cast(self._rho_t, dtype)
        epsilon = cast(self._epsilon_t, dtype)
        accum, accum_update = self.get_slot(var, "accum"), self.get_slot(var, "accum_update")
        new_accum = accum.assign(accum.read_value() * rho + square(grad) * (1 - rho))
        accum_update_read = accum_update.read_value()
        update = sqrt(accum_update_read + epsilon) * rsqrt(new_accum + epsilon) * grad
        new_var = var.assign_sub(update * lr)
        new_accum_update = accum_update.assign(accum_update_read * rho + square(update) * (1 - rho))
        return group(new_var, new_accum_update)


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013), as TensorFlow's ``ApplyFtrl``/``ApplyFtrlV2``:

    ``g = grad + 2 * l2_shrinkage * var``; ``new_accum = accum + grad^2``;
    ``linear += g - (new_accum^p - accum^p) / learning_rate * var`` with
    ``p = -learning_rate_power``;
    ``var = (l1 * sign(linear) - linear) / (new_accum^p / learning_rate + 2 * l2)`` where
    ``|linear| > l1``, else 0; ``accum = new_accum``.

    ``l2`` is ``l2_regularization_strength + beta / (2 * learning_rate)``, computed once per
    ``apply_gradients`` in the learning rate's dtype, as TensorFlow does.  The power is taken
    with ``sqrt`` for the default ``learning_rate_power=-0.5``, so the numbers match
    TensorFlow's special case.  Slots ``"accum"`` (starts at ``initial_accumulator_value``,
    named ``<var>/<accum_name or name>``) and ``"linear"`` (zeros, ``<var>/<linear_name or
    name>``, made unique: ``Ftrl_1``).

    TensorFlow's sparse update applies the shrinkage to the gradient's rows only; with dense
    gradients every element shrinks on every step.
    """

    def __init__(
        self,
        learning_rate,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking: bool = False,
        name: str = "Ftrl",
        accum_name=None,
        linear_name=None,
        l2_shrinkage_regularization_strength=0.0,
        beta=None,
    ):
        super().__init__(use_locking, name)
        for what, value in (
            ("initial_accumulator_value", initial_accumulator_value),
            ("l1_regularization_strength", l1_regularization_strength),
            ("l2_regularization_strength", l2_regularization_strength),
            ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength),
        ):
            if value < 0.0:
                raise ValueError(f"{what} {value:f} needs to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(
                f"learning_rate_power {learning_rate_power:f} needs to be negative or zero"
            )
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1 = l1_regularization_strength
        self._l2 = l2_regularization_strength
        self._l2_shrinkage = l2_shrinkage_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._accum_name, self._linear_name = accum_name, linear_name
        self._learning_rate_tensor = self._l1_tensor = self._adjusted_l2_tensor = None
        self._l2_shrinkage_tensor = self._learning_rate_power_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(
                v, "accum", self._accum_name or self._name, self._initial_accumulator_value
            )
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        learning_rate = self._call_if_callable(self._learning_rate)
        self._learning_rate_tensor = _hyperparameter(learning_rate, "learning_rate")
        self._l1_tensor = _hyperparameter(self._l1, "l1_regularization_strength")
        floor = maximum(learning_rate, 1e-36)
        self._adjusted_l2_tensor = convert_to_tensor(
            self._l2 + self._beta / (2.0 * floor), name="adjusted_l2_regularization_strength"
        )
        self._l2_shrinkage_tensor = _hyperparameter(
            self._l2_shrinkage, "l2_shrinkage_regularization_strength"
        )
        self._learning_rate_power_tensor = _hyperparameter(
            self._learning_rate_power, "learning_rate_power"
        )

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, l1 = cast(self._learning_rate_tensor, dtype), cast(self._l1_tensor, dtype)
        l2 = cast(self._adjusted_l2_tensor, dtype)
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        var_read, accum_read = var.read_value(), accum.read_value()
        if self._l2_shrinkage > 0.0:
            shrinkage = cast(self._l2_shrinkage_tensor, dtype)
            grad_with_shrinkage = grad + 2 * shrinkage * var_read
        else:
            grad_with_shrinkage = grad
        new_accum = accum_read + square(grad)
        if self._learning_rate_power == -0.5:
            new_root, old_root = sqrt(new_accum), sqrt(accum_read)
        else:
            power = negative(cast(self._learning_rate_power_tensor, dtype))
            new_root, old_root = _pow(new_accum, power), _pow(accum_read, power)
        new_linear = linear.assign_add(grad_with_shrinkage - (new_root - old_root) / lr * var_read)
        numerator = l1 * sign(new_linear) - new_linear
        denominator = new_root / lr + 2 * l2
        shrunk_to_zero = greater(_abs(new_linear), l1)
        new_var = var.assign(where(shrunk_to_zero, numerator / denominator, _zeros_like(var_read)))
        with control_dependencies([new_var]):
            return accum.assign(new_accum)


def _shrink(prox_var: Tensor, threshold: Tensor, l1: Tensor, l2_step: Tensor) -> Tensor:
    """FOBOS's proximal step (TensorFlow's ``ApplyProximal*`` kernels): ``prox_var`` moved
    ``threshold`` towards zero (stopping at zero) when ``l1 > 0``, then divided by
    ``1 + l2_step``."""
    shrunk = sign(prox_var) * maximum(_abs(prox_var) - threshold, cast(0, prox_var.dtype))
    return where(greater(l1, 0), shrunk, prox_var) / (1 + l2_step)


class ProximalGradientDescentOptimizer(Optimizer):
    """Gradient descent followed by the proximal step of l1 and l2 regularization (FOBOS,
    Duchi and Singer, 2009): ``v = var - grad * learning_rate``, then
    ``var = sign(v) * max(|v| - learning_rate * l1, 0) / (1 + learning_rate * l2)``.  No slots.
    """

    def __init__(
        self,
        learning_rate,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking: bool = False,
        name: str = "ProximalGradientDescent",
    ):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._learning_rate_tensor = self._l1_tensor = self._l2_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        self._l1_tensor = _hyperparameter(self._l1, "l1_regularization_strength")
        self._l2_tensor = _hyperparameter(self._l2, "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, l1 = cast(self._learning_rate_tensor, dtype), cast(self._l1_tensor, dtype)
        l2 = cast(self._l2_tensor, dtype)
        prox_var = var.read_value() - grad * lr
        return var.assign(_shrink(prox_var, lr * l1, l1, l2 * lr))


class ProximalAdagradOptimizer(Optimizer):
    """Adagrad's step followed by the proximal step of l1 and l2 regularization, with the
    per-element rate ``lr = learning_rate / sqrt(accum)``: ``accum += grad^2``,
    ``v = var - grad * lr``, ``var = sign(v) * max(|v| - lr * l1, 0) / (1 + l2 * lr)``.  The
    accumulator is the slot ``"accumulator"`` (``<var>/ProximalAdagrad``), starting at
    ``initial_accumulator_value``.  The dense update shrinks every element on every step;
    TensorFlow's sparse one shrinks the gradient's rows only (so does ProximalGradientDescent's).
    """

    def __init__(
        self,
        learning_rate,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        use_locking: bool = False,
        name: str = "ProximalAdagrad",
    ):
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1, self._l2 = l1_regularization_strength, l2_regularization_strength
        self._learning_rate_tensor = self._l1_tensor = self._l2_tensor = None

    def _create_slots(self, var_list):
        for v in var_list:
            self._filled_slot(v, "accumulator", self._name, self._initial_accumulator_value)

    def _prepare(self):
        self._learning_rate_tensor = _hyperparameter(self._learning_rate, "learning_rate")
        self._l1_tensor = _hyperparameter(self._l1, "l1_regularization_strength")
        self._l2_tensor = _hyperparameter(self._l2, "l2_regularization_strength")

    def _apply_dense(self, grad, var):
        dtype = var.dtype
        lr, l1 = cast(self._learning_rate_tensor, dtype), cast(self._l1_tensor, dtype)
        l2 = cast(self._l2_tensor, dtype)
        new_accum = self.get_slot(var, "accumulator").assign_add(square(grad))
        element_rate = lr * rsqrt(new_accum)
        prox_var = var.read_value() - grad * element_rate
        return var.assign(_shrink(prox_var, element_rate * l1, l1, l2 * element_rate))


class DecoupledWeightDecayExtension:
    """Adds decoupled weight decay to an optimizer: each step first decays each variable,
    ``var -= weight_decay * var``, then applies the optimizer's own update (Loshchilov and
    Hutter, "Decoupled Weight Decay Regularization", 2019).  Unlike an l2 term in the loss, the
    decay does not pass through the optimizer's scaling (Adam's ``1 / sqrt(v)``).

    TensorFlow 1.x had this in ``tf.contrib.opt`` (``DecoupledWeightDecayExtension``,
    ``extend_with_decoupled_weight_decay``, ``AdamWOptimizer``, ``MomentumWOptimizer``); it is
    here with the same arguments and numbers: ``weight_decay`` first in the constructor, and
    ``minimize``/``apply_gradients`` take ``decay_var_list`` (None: decay every variable
    updated).  A Python-number ``weight_decay`` multiplies each variable in the variable's own
    dtype (contrib wrote ``weight_decay * var``); a tensor or a callable's result is cast to it.
    The decay is a little better defined than contrib's: it waits for the variable's gradient,
    so the gradient is always taken at the undecayed value, and ``minimize`` honours its
    ``decay_var_list`` (contrib's was reset by the ``apply_gradients`` it called).

    Like contrib, the decay is applied before the update, so it is "decoupled" exactly only for
    optimizers whose update does not read the variable (not Ftrl or the proximal ones).
    """

    def __init__(self, weight_decay, *args, **kwargs):
        self._weight_decay = weight_decay
        self._weight_decay_tensor: Optional[Tensor] = None
        # ``ref()`` of each variable to decay (None: all of them).
        self._decay_var_list: Optional[set] = None
        self._minimize_decay_var_list = None
        self._decayed_rows_already = False  # set while _apply_sparse has decayed the rows
        super().__init__(*args, **kwargs)

    def minimize(
        self,
        loss: Tensor,
        global_step: Optional[Variable] = None,
        var_list=None,
        gate_gradients: int = Optimizer.GATE_OP,
        aggregation_method=None,
        colocate_gradients_with_ops: bool = False,
        name: Optional[str] = None,
        grad_loss=None,
        decay_var_list=None,
    ) -> Operation:
        """`Optimizer.minimize` that decays only ``decay_var_list`` when given."""
        self._minimize_decay_var_list = decay_var_list
        try:
            return super().minimize(
                loss,
                global_step=global_step,
                var_list=var_list,
                gate_gradients=gate_gradients,
                aggregation_method=aggregation_method,
                colocate_gradients_with_ops=colocate_gradients_with_ops,
                name=name,
                grad_loss=grad_loss,
            )
        finally:
            self._minimize_decay_var_list = None

    def apply_gradients(
        self,
        grads_and_vars,
        global_step: Optional[Variable] = None,
        name: Optional[str] = None,
        decay_var_list=None,
    ) -> Operation:
        """`Optimizer.apply_gradients` that decays only ``decay_var_list`` when given."""
        if decay_var_list is None:
            decay_var_list = self._minimize_decay_var_list
        self._decay_var_list = {v.ref() for v in decay_var_list} if decay_var_list else None
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _prepare(self):
        weight_decay = self._call_if_callable(self._weight_decay)
        if isinstance(weight_decay, (int, float, np.number)):
            self._weight_decay_tensor = None
        else:
            self._weight_decay_tensor = convert_to_tensor(weight_decay, name="weight_decay")
        super()._prepare()

    def _decay_weights_op(self, var: Variable, grad: Tensor):
        decayed = var.variable if isinstance(var, _Rows) else var
        if self._decay_var_list is not None and decayed.ref() not in self._decay_var_list:
            return no_op()
        if self._weight_decay_tensor is None:
            rate = convert_to_tensor(self._call_if_callable(self._weight_decay), dtype=var.dtype)
        else:
            rate = cast(self._weight_decay_tensor, var.dtype)
        with control_dependencies([grad]):
            return var.assign_sub(rate * var.read_value())

    def _apply_dense(self, grad, var):
        if self._decayed_rows_already:
            return super()._apply_dense(grad, var)
        with control_dependencies([self._decay_weights_op(var, grad)]):
            return super()._apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        # As contrib: a sparse gradient decays only its rows of the variable, then the
        # optimizer's own sparse update runs (Adam's touches every row).
        with control_dependencies([self._decay_weights_op(_Rows(var, grad.indices), grad.values)]):
            self._decayed_rows_already = True
            try:
                return super()._apply_sparse(grad, var)
            finally:
                self._decayed_rows_already = False


def extend_with_decoupled_weight_decay(base_optimizer: type) -> type:
    """A subclass of the optimizer class ``base_optimizer`` with decoupled weight decay (see
    `DecoupledWeightDecayExtension`), whose constructor takes ``weight_decay`` first:
    ``extend_with_decoupled_weight_decay(AdamOptimizer)(0.01, learning_rate=0.001)``."""

    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecayExtension, base_optimizer):
        pass

    OptimizerWithDecoupledWeightDecay.__name__ = base_optimizer.__name__ + "WithWeightDecay"
    return OptimizerWithDecoupledWeightDecay


class AdamWOptimizer(DecoupledWeightDecayExtension, AdamOptimizer):
    """Adam with decoupled weight decay (``tf.contrib.opt.AdamWOptimizer``): each step
    ``var -= weight_decay * var``, then `AdamOptimizer`'s update.  Slots ``<var>/AdamW`` and
    ``<var>/AdamW_1``."""

    def __init__(
        self,
        weight_decay,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        use_locking: bool = False,
        name: str = "AdamW",
    ):
        super().__init__(
            weight_decay,
            learning_rate=learning_rate,
            beta1=beta1,
            beta2=beta2,
            epsilon=epsilon,
            use_locking=use_locking,
            name=name,
        )


class MomentumWOptimizer(DecoupledWeightDecayExtension, MomentumOptimizer):
    """Momentum with decoupled weight decay (``tf.contrib.opt.MomentumWOptimizer``, the SGDW
    of Loshchilov and Hutter): each step ``var -= weight_decay * var``, then
    `MomentumOptimizer`'s update."""

    def __init__(
        self,
        weight_decay,
        learning_rate,
        momentum,
        use_locking: bool = False,
        name: str = "MomentumW",
        use_nesterov: bool = False,
    ):
        super().__init__(
            weight_decay,
            learning_rate=learning_rate,
            momentum=momentum,
            use_locking=use_locking,
            name=name,
            use_nesterov=use_nesterov,
        )


# checkpoints
# learning-rate schedules
from ..io.checkpoint_management import (  # noqa: E402, F401
    checkpoints_iterator,
    generate_checkpoint_state_proto,
    get_checkpoint_mtimes,
    remove_checkpoint,
    update_checkpoint_state,
)
from ..io.checkpoint_utils import (  # noqa: E402, F401
    NewCheckpointReader,
    init_from_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)
from ..io.graph_def import write_graph  # noqa: E402, F401
from ..io.saver import (  # noqa: E402, F401  # noqa: E402, F401
    CheckpointState,
    Saver,
    checkpoint_exists,
    export_meta_graph,
    get_checkpoint_state,
    import_meta_graph,
    latest_checkpoint,
)
from ..io.summary import summary_iterator  # noqa: E402, F401
from ..ops.io_ops import match_filenames_once  # noqa: E402, F401
from .learning_rate_decay import (  # noqa: E402, F401
    cosine_decay,
    cosine_decay_restarts,
    exponential_decay,
    inverse_time_decay,
    linear_cosine_decay,
    natural_exp_decay,
    noisy_linear_cosine_decay,
    piecewise_constant,
    piecewise_constant_decay,
    polynomial_decay,
)

# moving averages
from .moving_averages import ExponentialMovingAverage  # noqa: E402, F401

# isort: split
# clusters and parameter servers (dataflow.distribute)
from ..distribute.cluster import ClusterSpec  # noqa: E402, F401
from ..distribute.device_setter import replica_device_setter  # noqa: E402, F401


# TensorFlow's protocol buffer messages of tf.train (tf.train.Example, SaverDef, ClusterDef,
# ...), from protobuf (the tensorboard extra), built the first time one is asked for.
def __getattr__(name: str):
    from ..framework import train_protos

    if name in train_protos.TRAIN_NAMES:
        return getattr(train_protos.messages(), name)
    raise AttributeError(f"module 'dataflow.train' has no attribute '{name}'")


def sdca_shrink_l1(weights, l1, l2, name=None):
    """The L1 shrinkage step of SDCA (``tf.train.sdca_shrink_l1``): one op that sets every
    variable of ``weights`` to ``sign(w) * max(|w| - l1 / l2, 0)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        shrinkage = np.float32(l1) / np.float32(l2)
    weights = list(weights)
    graph = weights[0].graph if weights else get_default_graph()
    with graph.as_default(), graph.name_scope(name or "SdcaShrinkL1") as scope:
        updates = []
        for w in weights:
            value = w.value() if isinstance(w, Variable) else w
            shrunk = sign(value) * maximum(_abs(value) - shrinkage, 0)
            updates.append(w.assign(shrunk, read_value=False))
        return group(*updates, name=scope)


# isort: split
# Names ``df.train`` has offered since this module also held the optimizers' base and its
# imports; kept so that code reaching them here still works.
from ..autodiff.gradients import gradients  # noqa: E402, F401
from ..framework.graph import Graph  # noqa: E402, F401
from ..framework.graph_keys import GraphKeys  # noqa: E402, F401
from ..framework.indexed_slices import IndexedSlices  # noqa: E402, F401
from ..framework.tensor_conversion import register_tensor_conversion_function  # noqa: E402, F401
from ..framework.tensor_shape import TensorShape  # noqa: E402, F401
from ..ops.segment_ops import unique, unsorted_segment_sum  # noqa: E402, F401
from ..ops.state_ops import scatter_add, scatter_sub, scatter_update  # noqa: E402, F401
